/* diff_pair.c - the two sides of `memprof diff` and `plot --diff`: each
 * opened and solved on its own (xplane files of A are never read together
 * with B's), their kinds compared, and the diff computed. */
#include "diff_cli.h"

#include <memprof/capture.h>
#include <memprof/torch.h>
#include <memprof/xplane.h>

#include <string.h>

/* The kind of an opened input, as the diff names it. */
static const char *kind_of(const mp_source_t *src)
{
	if (mp_torch_is_source(src))
		return "snapshot";
	if (mp_xplane_is_source(src))
		return "xplane";
	return "capture";
}

static const char *kind_words(const char *kind)
{
	return !strcmp(kind, "snapshot") ? "a PyTorch snapshot" : !strcmp(kind, "xplane") ? "an xplane profile"
											: "a memprof capture";
}

/* Open one side: its run expanded, one input (never read together with
 * the other side's xplane files). */
static int open_side(cli_inputs_t *ci, cli_runs_t *runs, char *path, const cli_run_select_t *sel,
		     const cli_inputs_options_t *io)
{
	int rc = cli_runs_expand(runs, &path, 1, sel);

	if (rc != MP_EXIT_OK)
		return rc;
	if (runs->nfiles != 1) {
		mp_cli_error("'%s': one capture per side (a run gives its main process, or --pid A_PID:B_PID)", path);
		return MP_EXIT_USAGE;
	}
	rc = cli_inputs_open(ci, runs->files, 1, io);
	if (rc == MP_EXIT_OK && ci->n == 0) {
		mp_cli_error("'%s': no memory events to compare", path);
		return MP_EXIT_FAILURE;
	}
	return rc;
}

static void say_names(char *buf, size_t n, const char *const *v, size_t count)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < count && used < n; i++) {
		int w = snprintf(buf + used, n - used, "%s'%s'", i ? ", " : "", v[i]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
	if (!count)
		snprintf(buf, n, "none");
}

/* No common memory id: one line naming both lists. */
static int no_common(const mp_diff_t *d, const char *pa, const char *pb)
{
	const char *const *va, *const *vb;
	size_t na = mp_diff_only_a(d, &va), nb = mp_diff_only_b(d, &vb);
	char la[1024], lb[1024];

	say_names(la, sizeof(la), va, na);
	say_names(lb, sizeof(lb), vb, nb);
	mp_cli_error("no memory id in common: '%s' has %s; '%s' has %s (pair them with --map A_NAME=B_NAME)", pa, la,
		     pb, lb);
	return MP_EXIT_USAGE;
}

int cli_diff_pair_open(cli_diff_pair_t *p, char *a, char *b, const cli_run_select_t sel[2],
		       const cli_inputs_options_t *io, const mp_diff_options_t *dopt)
{
	static const cli_run_select_t main_only[2] = {{0, 0, 0}, {0, 0, 0}};
	const char *ka, *kb;
	char why[512];
	int rc, err;

	memset(p, 0, sizeof(*p));
	if (!sel)
		sel = main_only;
	if ((rc = open_side(&p->ca, &p->ra, a, &sel[0], io)) != MP_EXIT_OK ||
	    (rc = open_side(&p->cb, &p->rb, b, &sel[1], io)) != MP_EXIT_OK)
		return rc;
	ka = kind_of(p->ca.sources[0]);
	kb = kind_of(p->cb.sources[0]);
	if (strcmp(ka, kb)) {
		mp_cli_error("'%s' is %s and '%s' %s: diff compares two inputs of the same kind", p->ca.paths[0],
			     kind_words(ka), p->cb.paths[0], kind_words(kb));
		return MP_EXIT_USAGE;
	}
	err = mp_diff_compute(&p->diff, &p->ca.in[0], &p->cb.in[0], p->ca.functions[0], p->cb.functions[0], ka, dopt, why,
			      sizeof(why));
	if (err == MP_EUSAGE) {
		mp_cli_error("%s", why);
		return MP_EXIT_USAGE;
	}
	if (err < 0) {
		mp_cli_error("out of memory");
		return MP_EXIT_FAILURE;
	}
	if (mp_diff_count(p->diff) == 0)
		return no_common(p->diff, p->ca.paths[0], p->cb.paths[0]);
	return MP_EXIT_OK;
}

void cli_diff_pair_close(cli_diff_pair_t *p)
{
	mp_diff_free(p->diff);
	cli_inputs_close(&p->ca);
	cli_inputs_close(&p->cb);
	cli_runs_free(&p->ra);
	cli_runs_free(&p->rb);
	memset(p, 0, sizeof(*p));
}
