/* cmd_convert.c - `memprof convert`: a capture -> an XSpace (*.xplane.pb)
 * that TensorBoard's Memory Profile tool opens (docs/xplane.md). */
#include "cli.h"
#include "runs.h"

#include <memprof/capture.h>
#include <memprof/xplane.h>
#include <memprof/xplane_export.h>

#include <errno.h>
#include <getopt.h>
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

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"host", required_argument, NULL, 'H'},
		{"logdir", required_argument, NULL, 'L'},
		{"pid", required_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	mp_xplane_export_options_t xo = {NULL, 0, 0, 0};
	mp_xplane_export_stats_t st;
	const char *out = NULL, *in, *logdir = NULL;
	char outbuf[4096], inbuf[4096];
	cli_run_select_t sel = {0, 0, 0};
	mp_capture_t *cap = NULL;
	mp_source_t *src = NULL, *owned = NULL;
	mp_diag_t diag;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'H':
			xo.hostname = optarg;
			break;
		case 'L':
			logdir = optarg;
			break;
		case 'P':
			if (cli_run_parse_pid(optarg, &sel))
				return MP_EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			return MP_EXIT_OK;
		default:
			mp_cli_error("unknown or incomplete option '%s' (see 'memprof convert --help')", argv[optind - 1]);
			return MP_EXIT_USAGE;
		}
	}
	if (argc - optind != 1 || !out == !logdir) {
		mp_cli_error("expected one INPUT and either -o OUTPUT or --logdir DIR (see 'memprof convert --help')");
		return MP_EXIT_USAGE;
	}
	in = argv[optind];
	{
		/* a run: the capture of its main process (or --pid's) */
		cli_runs_t runs;
		rc = cli_runs_expand(&runs, argv + optind, 1, &sel);
		if (rc == MP_EXIT_OK && runs.nruns) {
			snprintf(inbuf, sizeof(inbuf), "%s", runs.files[0]);
			fprintf(stderr, "memprof: '%s' is a run: converting '%s'\n", in, inbuf);
			in = inbuf;
		}
		cli_runs_free(&runs);
		if (rc != MP_EXIT_OK)
			return rc;
	}
	if (out && !ends_with(out, ".pb") && !ends_with(out, ".pb.gz") && !ends_with(out, ".xpb")) {
		mp_cli_error("'%s': only XSpace output is supported (name it *.xplane.pb)", out);
		return MP_EXIT_USAGE;
	}
	xo.gzip = out && ends_with(out, ".gz");
	mp_diag_clear(&diag);
	rc = mp_xplane_open_args(&owned, &in, 1, NULL, NULL, 0, &diag);
	if (rc < 0)
		return mp_cli_diag(&diag);
	if (rc > 0) {
		src = owned;
	} else {
		rc = mp_capture_open(&cap, in, &diag);
		if (rc < 0) {
			if (!diag.file[0])
				mp_diag_set_file(&diag, in);
			if (!diag.code)
				diag.code = rc;
			return mp_cli_diag(&diag);
		}
		src = mp_capture_source(cap);
		xo.start_ns = (int64_t)mp_capture_header(cap)->start_wall_ns;
		if (!xo.hostname && mp_capture_header(cap)->hostname && *mp_capture_header(cap)->hostname)
			xo.hostname = mp_capture_header(cap)->hostname;
	}
	if (logdir) {
		char run[4000];
		const char *host = xo.hostname ? xo.hostname : "memprof";

		rc = make_run_dir(logdir, run, sizeof(run));
		if (rc < 0 || strchr(host, '/') ||
		    (size_t)snprintf(outbuf, sizeof(outbuf), "%s/%s.xplane.pb", run, host) >= sizeof(outbuf)) {
			mp_cli_error("'%s': cannot create the run directory: %s", logdir,
				     rc < 0 ? mp_strerror(rc) : "bad host name");
			mp_source_close(owned);
			mp_capture_close(cap);
			return MP_EXIT_IO;
		}
		out = outbuf;
	}
	xo.source_has_stats = mp_xplane_is_source(src); /* its stats are the allocator's */
	rc = mp_xplane_export(src, out, &xo, &st, &diag);
	if (rc < 0) {
		if (!diag.file[0])
			mp_diag_set_file(&diag, in);
		if (!diag.code)
			diag.code = rc;
		rc = mp_cli_diag(&diag);
	} else {
		fprintf(stderr, "memprof: wrote '%s': %" PRIu64 " memory events", out, st.events);
		if (st.skipped)
			fprintf(stderr, " (%" PRIu64 " events xprof cannot show were left out: regions, "
					"failed allocations, marks, steps)", st.skipped);
		fputc('\n', stderr);
		rc = MP_EXIT_OK;
	}
	mp_source_close(owned);
	mp_capture_close(cap);
	return rc;
}
