/* cmd_convert.c - `memprof convert`: a capture -> an XSpace (*.xplane.pb)
 * that TensorBoard's Memory Profile tool opens (docs/xplane.md). */
#include "cli.h"
#include "options.h"
#include "runs.h"

#include <memprof/capture.h>
#include <memprof/xplane.h>
#include <memprof/xplane_export.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: memprof convert [--host NAME] [--pid N] INPUT -o OUTPUT.xplane.pb[.gz]\n"
		"       memprof convert [--host NAME] [--pid N] INPUT --logdir DIR\n"
		"\n"
		"  INPUT is a .memprof capture, a 'memprof record' run (its main process, the\n"
		"  largest peak, or --pid N's) or an xplane capture / log directory.\n"
		"  OUTPUT gets an XSpace with a /host:CPU plane of MemoryAllocation and\n"
		"  MemoryDeallocation events: TensorBoard's Memory Profile tool shows it\n"
		"  when placed at LOGDIR/plugins/profile/<run>/<host>.xplane.pb.\n"
		"  --logdir DIR writes DIR/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.xplane.pb\n"
		"               (then: tensorboard --logdir DIR, Profile tab, memory_profile tool)\n"
		"  --host NAME  the host name written in the XSpace (default: the capture's)\n"
		"  A name ending in .gz is written gzip-compressed (memprof reads it;\n"
		"  TensorBoard does not).\n");
}

/* DIR/plugins/profile/<now>/ created (parents too); the run directory's
 * path in buf. Returns 0 or -errno. */
static int make_run_dir(const char *logdir, char *buf, size_t size)
{
	static const char *const parts[] = {"", "/plugins", "/plugins/profile", NULL};
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	int i;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y_%m_%d_%H_%M_%S", &tm);
	for (i = 0; parts[i]; i++) {
		snprintf(buf, size, "%s%s", logdir, parts[i]);
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
	}
	if ((size_t)snprintf(buf, size, "%s/plugins/profile/%s", logdir, stamp) >= size)
		return -ENAMETOOLONG;
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

typedef struct convert_args {
	const char *out, *host, *logdir; /* -o, --host, --logdir */
	cli_input_args_t in;             /* --pid */
} convert_args_t;

static int convert_option(void *ctx, int c, const char *arg)
{
	convert_args_t *a = ctx;

	*(c == 'o' ? &a->out : c == 'H' ? &a->host : &a->logdir) = arg;
	return MP_EXIT_OK;
}

/* A run among the arguments: the capture of its main process (or --pid's)
 * into buf, *in pointed at it. An exit code. */
static int resolve_run(char **arg, const cli_run_select_t *sel, char *buf, size_t size, const char **in)
{
	cli_runs_t runs;
	int rc = cli_runs_expand(&runs, arg, 1, sel);

	if (rc == MP_EXIT_OK && runs.nruns) {
		snprintf(buf, size, "%s", runs.files[0]);
		fprintf(stderr, "memprof: '%s' is a run: converting '%s'\n", *in, buf);
		*in = buf;
	}
	cli_runs_free(&runs);
	return rc;
}

/* in as an xplane input (*owned) or a capture (*cap, whose start and host
 * go into xo): its events in *src. An exit code. */
static int open_input(const char *in, mp_source_t **owned, mp_capture_t **cap, mp_source_t **src,
		      mp_xplane_export_options_t *xo)
{
	const mp_capture_header_t *h;
	mp_diag_t diag;
	int rc;

	mp_diag_clear(&diag);
	rc = mp_xplane_open_args(owned, &in, 1, NULL, NULL, 0, &diag);
	if (rc < 0)
		return mp_cli_diag(&diag);
	if (rc > 0) {
		*src = *owned;
		return MP_EXIT_OK;
	}
	if ((rc = mp_capture_open(cap, in, &diag)) < 0)
		return cli_input_fail(&diag, in, rc);
	*src = mp_capture_source(*cap);
	h = mp_capture_header(*cap);
	xo->start_ns = (int64_t)h->start_wall_ns;
	if (!xo->hostname && h->hostname && *h->hostname)
		xo->hostname = h->hostname;
	return MP_EXIT_OK;
}

/* --logdir: DIR/plugins/profile/<now>/<host>.xplane.pb into buf. An exit
 * code. */
static int logdir_output(const char *logdir, const char *hostname, char *buf, size_t size)
{
	char run[4000];
	const char *host = hostname ? hostname : "memprof";
	int rc = make_run_dir(logdir, run, sizeof(run));

	if (rc < 0 || strchr(host, '/') || (size_t)snprintf(buf, size, "%s/%s.xplane.pb", run, host) >= size) {
		mp_cli_error("'%s': cannot create the run directory: %s", logdir, rc < 0 ? mp_strerror(rc) : "bad host name");
		return MP_EXIT_IO;
	}
	return MP_EXIT_OK;
}

/* src as an XSpace into out, said on stderr. An exit code. */
static int export_source(mp_source_t *src, const char *in, const char *out, const mp_xplane_export_options_t *xo)
{
	mp_xplane_export_stats_t st;
	mp_diag_t diag;
	int rc;

	mp_diag_clear(&diag);
	if ((rc = mp_xplane_export(src, out, xo, &st, &diag)) < 0)
		return cli_input_fail(&diag, in, rc);
	fprintf(stderr, "memprof: wrote '%s': %" PRIu64 " memory events", out, st.events);
	if (st.skipped)
		fprintf(stderr, " (%" PRIu64 " events xprof cannot show were left out: regions, "
				"failed allocations, marks, steps)", st.skipped);
	fputc('\n', stderr);
	return MP_EXIT_OK;
}

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"host", required_argument, NULL, 'H'},
		{"logdir", required_argument, NULL, 'L'},
		{NULL, 0, NULL, 0},
	};
	convert_args_t a = {0};
	cli_parser_t p = {.command = "convert", .usage = usage, .shortopts = "o:h", .own = longopts,
			  .option = convert_option, .ctx = &a, .inputs = CLI_IN_PID, .in = &a.in};
	mp_xplane_export_options_t xo = {NULL, 0, 0, 0};
	char outbuf[4096], inbuf[4096];
	const char *out, *in;
	mp_capture_t *cap = NULL;
	mp_source_t *src = NULL, *owned = NULL;
	int rc;

	if ((rc = cli_parse_options(&p, argc, argv)) != CLI_OPT_CONTINUE)
		return rc;
	if (argc - optind != 1 || !a.out == !a.logdir) {
		mp_cli_error("expected one INPUT and either -o OUTPUT or --logdir DIR (see 'memprof convert --help')");
		return MP_EXIT_USAGE;
	}
	in = argv[optind];
	if ((rc = resolve_run(argv + optind, &a.in.sel, inbuf, sizeof(inbuf), &in)) != MP_EXIT_OK)
		return rc;
	out = a.out;
	if (out && !ends_with(out, ".pb") && !ends_with(out, ".pb.gz") && !ends_with(out, ".xpb")) {
		mp_cli_error("'%s': only XSpace output is supported (name it *.xplane.pb)", out);
		return MP_EXIT_USAGE;
	}
	xo.hostname = a.host;
	xo.gzip = out && ends_with(out, ".gz");
	rc = open_input(in, &owned, &cap, &src, &xo);
	if (rc == MP_EXIT_OK && a.logdir && (rc = logdir_output(a.logdir, xo.hostname, outbuf, sizeof(outbuf))) == MP_EXIT_OK)
		out = outbuf;
	if (rc == MP_EXIT_OK) {
		xo.source_has_stats = mp_xplane_is_source(src); /* its stats are the allocator's */
		rc = export_source(src, in, out, &xo);
	}
	mp_source_close(owned);
	mp_capture_close(cap);
	return rc;
}
