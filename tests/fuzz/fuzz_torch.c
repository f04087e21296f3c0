/* fuzz_torch.c - libFuzzer target for the PyTorch snapshot source: the
 * bytes are a snapshot pickle (raw, or gzip when they start with 1f 8b).
 * Opens them as a source, reads every event twice (rewind) and runs the
 * solver over them. Any crash, leak or sanitizer report is a bug. */
#include <memprof/solver.h>
#include <memprof/torch.h>

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	mp_source_t *src = NULL;
	mp_event_t ev;
	mp_diag_t diag;
	int fd = memfd_create("fuzz-torch", 0);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (mp_torch_open_source(&src, path, NULL, &diag) == 0) {
		mp_solver_t *s = mp_solver_new(NULL);
		while (mp_source_next(src, &ev, &diag) > 0)
			(void)mp_source_string(src, ev.op);
		mp_source_rewind(src, &diag);
		if (s)
			(void)mp_solver_run(s, src, &diag);
		mp_solver_free(s);
		mp_source_close(src);
	}
	close(fd);
	return 0;
}
