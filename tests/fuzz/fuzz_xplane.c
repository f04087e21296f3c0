/* fuzz_xplane.c - libFuzzer target for the XSpace reader: the bytes are a
 * *.xplane.pb (raw, or gzip when they start with 1f 8b). Opens them as a
 * source, reads every event twice (rewind), runs the xprof-compatible
 * computation and exports the events again (to /dev/null). Any crash, leak
 * or sanitizer report is a bug. */
#include <memprof/xplane.h>
#include <memprof/xplane_export.h>
#include <memprof/xprof_compat.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	const char *paths[1] = {path};
	mp_source_t *src = NULL;
	mp_xprof_profile_t *prof = NULL;
	mp_event_t ev;
	mp_diag_t diag;
	int fd = memfd_create("fuzz-xplane", 0), pass;

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (mp_xplane_open_source(&src, paths, 1, NULL, &diag) == 0) {
		for (pass = 0; pass < 2; pass++) {
			while (mp_source_next(src, &ev, &diag) > 0)
				(void)mp_source_string(src, ev.op);
			mp_source_rewind(src, &diag);
		}
		if (mp_xprof_compute(src, NULL, &prof, &diag) == 0)
			mp_xprof_free(prof);
		(void)mp_xplane_export(src, "/dev/null", NULL, NULL, &diag);
		mp_source_close(src);
	}
	close(fd);
	return 0;
}
