/* xplane_input.c - how `memprof report` turns FILE arguments into xplane
 * sources: log directories (run selection), and consecutive xplane files
 * (one per host) read together. */
#include <memprof/xplane.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A file named like an xplane capture, or one whose first byte is the
 * XSpace.planes tag and that is not a memprof capture. */
static int is_xplane_file(const char *path)
{
	unsigned char head[8] = {0};
	struct stat st;
	ssize_t n;
	int fd;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	if (mp_xplane_path_is_candidate(path))
		return 1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, head, sizeof(head));
	close(fd);
	return n >= 2 && head[0] == 0x0a && memcmp(head, "MEMPROF", 7) != 0;
}

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int mp_xplane_open_args(mp_source_t **out, const char *const *args, size_t nargs,
			const mp_xplane_input_options_t *opts, char *note, size_t note_size, mp_diag_t *diag)
{
	mp_xplane_options_t xo = {-1, NULL, opts ? opts->xprof_clock : 0};
	size_t n = 0;
	int rc;

	*out = NULL;
	if (note && note_size)
		note[0] = '\0';
	if (nargs == 0)
		return 0;
	if (is_dir(args[0])) {
		mp_xplane_runs_t runs;
		const mp_xplane_run_t *r;
		int sel;

		rc = mp_xplane_find_runs(args[0], &runs, diag);
		if (rc < 0)
			return rc;
		sel = mp_xplane_select_run(&runs, opts ? opts->run : NULL, diag);
		if (sel < 0) {
			mp_diag_set_file(diag, args[0]);
			mp_xplane_runs_free(&runs);
			return sel;
		}
		r = &runs.runs[sel];
		if (note && note_size && runs.n > 1 && !(opts && opts->run)) {
			/* say which run was taken and which others exist */
			size_t used = 0, k;
			int w = snprintf(note, note_size, "'%s': reading run '%s' (%zu host%s), the newest of %zu; "
				     "choose another with --run NAME:", args[0], r->name, r->nhosts,
				     r->nhosts == 1 ? "" : "s", runs.n);

			used = w > 0 ? (size_t)w : 0;
			for (k = 0; k + 1 < runs.n && used + 1 < note_size; k++) {
				w = snprintf(note + used, note_size - used, " '%s'", runs.runs[k].name);
				if (w < 0)
					break;
				used += (size_t)w;
			}
		}
		rc = mp_xplane_open_source(out, (const char *const *)r->paths, r->nhosts, &xo, diag);
		mp_xplane_runs_free(&runs);
		return rc < 0 ? rc : 1;
	}
	if (!is_xplane_file(args[0]))
		return 0;
	while (n < nargs && n < 255 && !is_dir(args[n]) && is_xplane_file(args[n]))
		n++;
	rc = mp_xplane_open_source(out, args, n, &xo, diag);
	return rc < 0 ? rc : (int)n;
}
