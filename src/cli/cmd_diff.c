/* cmd_diff.c - `memprof diff A B`: what changed between two inputs of the
 * same kind -- each memory id's peak, when it happened, reserved bytes,
 * fragmentation and failed allocations, and what was live at the peak,
 * grown, shrunk, new and gone -- with a regression gate for CI
 * (--fail-above). docs/diff.md. */
#include "cli.h"
#include "diff_cli.h"
#include "inputs.h"
#include "options.h"
#include "runs.h"

#include <memprof/output/json.h>
#include <memprof/diff.h>
#include <memprof/report_doc.h>
#include <memprof/xplane.h>

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GATES 16
#define MAX_MAPS 64

static void usage(FILE *out)
{
	fprintf(out,
		"usage: memprof diff [--fail-above [NAME:|total:]LIMIT]... [--map A_NAME=B_NAME]...\n"
		"                    [--by-function] [--device ID] [--steps A:B] [--top N] [--json]\n"
		"                    [--run NAME] [--all-frames] [--user-code LIST] [--module NAME|ID]\n"
		"                    [--pid A_PID:B_PID] A B\n"
		"\n"
		"Compare two inputs of the same kind: two captures or 'memprof record' runs,\n"
		"two PyTorch snapshots, two xplane captures or TensorBoard log directories,\n"
		"two HLO modules (*.hlo.pb: the peak working space and the buffers at it).\n"
		"Per memory id (matched by name): the peak in A and in B and its change, when\n"
		"each peak happened, reserved bytes and fragmentation at it, failed\n"
		"allocations; then what was live at the peak, grown, shrunk, new and gone.\n"
		"\n"
		"  --fail-above LIMIT  exit 1 when B's peak exceeds A's by more than LIMIT, in\n"
		"                percent (5%%) or bytes (67108864, 64MiB, 1.5GiB), for every memory\n"
		"                id; NAME:LIMIT for one (cuda:0:5%%), total:LIMIT for the sum of\n"
		"                the peaks; may be repeated (each gate is checked)\n"
		"  --map A_NAME=B_NAME  pair memory ids whose names differ (repeatable)\n"
		"  --by-function rows by allocating function (captures with stacks, snapshots)\n"
		"                instead of by op, region, dtype and shape\n"
		"  --device ID   only this memory id (a number, or a name) in both inputs\n"
		"  --steps A:B   only steps A to B in both inputs\n"
		"  --top N       rows per memory id (text default 20, JSON all)\n"
		"  --json        JSON (fields: docs/diff.md)\n"
		"  --run NAME    the run of TensorBoard log directories (default: the newest)\n"
		"  --all-frames, --user-code LIST  PyTorch snapshots' ops, as in 'memprof report'\n"
		"  --module NAME|ID  the module of HLO files holding several\n"
		"  --pid A_PID:B_PID  the processes of two runs to compare (default: each run's\n"
		"                main process, the one with the largest peak); A_PID: or :B_PID\n"
		"                picks one side only\n"
		"\n"
		"exit codes: 0 no regression, 1 a --fail-above gate failed (one line per\n"
		"            memory id on stderr) or the analysis failed, 2 usage (bad option,\n"
		"            inputs of different kinds, no memory id in common), 3 file not\n"
		"            readable, 4 not a capture or corrupted\n");
}

/* --pid A_PID:B_PID (either may be empty: that side's main process). 0,
 * or -1 (said). */
static int parse_pids(const char *arg, cli_run_select_t sel[2])
{
	const char *colon = strchr(arg, ':');
	char a[32];
	size_t n = colon ? (size_t)(colon - arg) : 0;

	if (!colon || n >= sizeof(a) || (n == 0 && !colon[1]))
		return mp_cli_error("--pid expects A_PID:B_PID (a process of each run; A_PID: or :B_PID for one "
				    "side), got '%s'",
				    arg);
	memcpy(a, arg, n);
	a[n] = '\0';
	if (n && cli_run_parse_pid(a, &sel[0]) < 0)
		return -1;
	if (colon[1] && cli_run_parse_pid(colon + 1, &sel[1]) < 0)
		return -1;
	return 0;
}

/* What the command line asks for besides the input options. */
typedef struct diff_args {
	mp_diff_gate_t gates[MAX_GATES];
	const char *maps[MAX_MAPS], *module;
	size_t ngates, nmaps;
	cli_run_select_t sel[2]; /* --pid A_PID:B_PID (diff's own) */
	uint32_t top;
	int json, by_function;
} diff_args_t;

enum { O_FAIL = 256, O_MAP, O_TOP, O_MODULE, O_PID };

/* One option of diff's own that is not a flag. */
static int diff_option(void *ctx, int c, const char *arg)
{
	diff_args_t *a = ctx;
	char why[512];

	switch (c) {
	case O_FAIL:
		if (a->ngates == MAX_GATES) {
			mp_cli_error("at most %d --fail-above gates", MAX_GATES);
			return MP_EXIT_USAGE;
		}
		if (mp_diff_gate_parse(arg, &a->gates[a->ngates], why, sizeof(why)) < 0) {
			mp_cli_error("%s", why);
			return MP_EXIT_USAGE;
		}
		a->ngates++;
		break;
	case O_MAP:
		if (a->nmaps == MAX_MAPS) {
			mp_cli_error("at most %d --map pairs", MAX_MAPS);
			return MP_EXIT_USAGE;
		}
		a->maps[a->nmaps++] = arg;
		break;
	case O_MODULE:
		a->module = arg;
		break;
	case O_PID:
		return parse_pids(arg, a->sel) < 0 ? MP_EXIT_USAGE : MP_EXIT_OK;
	default: /* O_TOP */
		return cli_top_option(arg, &a->top);
	}
	return MP_EXIT_OK;
}

/* Two HLO modules: their peak working spaces. An exit code. */
static int diff_hlo(const diff_args_t *a, const cli_input_args_t *in, char *pa, char *pb)
{
	cli_diff_hlo_options_t ho = {a->module, a->json, a->top, a->gates, a->ngates};

	if (!cli_diff_looks_hlo(pa) || !cli_diff_looks_hlo(pb)) {
		int a_is = cli_diff_looks_hlo(pa);
		mp_cli_error("'%s' is an HLO module and '%s' is not: diff compares two inputs of the same kind",
			     a_is ? pa : pb, a_is ? pb : pa);
		return MP_EXIT_USAGE;
	}
	if (a->nmaps || a->by_function || in->device || in->steps_set || a->sel[0].pid_set || a->sel[1].pid_set) {
		mp_cli_error("--map, --by-function, --device, --steps and --pid do not apply to HLO modules");
		return MP_EXIT_USAGE;
	}
	return cli_diff_hlo(pa, pb, &ho);
}

/* The diff on stdout, then the gates checked. An exit code. */
static int write_diff(const diff_args_t *a, const mp_diff_t *d)
{
	int err, failed;

	if (a->ngates && mp_diff_gate_check(d, a->gates, a->ngates, NULL) == MP_EUSAGE) {
		(void)mp_diff_gate_check(d, a->gates, a->ngates, stderr); /* names the gate */
		return MP_EXIT_USAGE;
	}
	if (a->json) {
		json_t *doc = mp_diff_json(d, a->top, a->gates, a->ngates);
		if (!doc) {
			mp_cli_error("out of memory");
			return MP_EXIT_FAILURE;
		}
		err = mp_json_write(stdout, doc, MP_JSON_LAYOUT); /* takes doc */
		if (!err && fflush(stdout) == EOF)
			err = errno ? -errno : -EIO;
	} else {
		err = mp_diff_text(stdout, d, a->top);
	}
	if (err < 0) {
		mp_cli_error("writing the diff: %s", mp_strerror(err));
		return MP_EXIT_IO;
	}
	if (!a->ngates)
		return MP_EXIT_OK;
	failed = mp_diff_gate_check(d, a->gates, a->ngates, stderr);
	return failed == MP_EUSAGE ? MP_EXIT_USAGE : failed ? MP_EXIT_FAILURE : MP_EXIT_OK;
}

int cmd_diff(int argc, char **argv)
{
	diff_args_t a = {.module = NULL};
	const struct option longopts[] = {
		{"fail-above", required_argument, NULL, O_FAIL}, {"map", required_argument, NULL, O_MAP},
		{"by-function", no_argument, &a.by_function, 1}, {"top", required_argument, NULL, O_TOP},
		{"json", no_argument, &a.json, 1},              {"module", required_argument, NULL, O_MODULE},
		{"pid", required_argument, NULL, O_PID},        {NULL, 0, NULL, 0},
	};
	mp_solver_options_t sopt;
	cli_input_args_t in = {0};
	cli_inputs_options_t io = {0};
	cli_parser_t p = {.command = "diff", .usage = usage, .shortopts = "h", .own = longopts, .option = diff_option,
			  .ctx = &a, .inputs = CLI_IN_DEVICE | CLI_IN_STEPS | CLI_IN_RUN | CLI_IN_FRAMES, .in = &in};
	mp_diff_options_t dopt = {0, a.maps, 0};
	cli_diff_pair_t pair;
	int rc;

	mp_solver_options_init(&sopt);
	sopt.timeline = 0;
	if ((rc = cli_parse_options(&p, argc, argv)) != CLI_OPT_CONTINUE)
		return rc;
	if (argc - optind != 2) {
		mp_cli_error("expected two inputs, A and B (see 'memprof diff --help'), got %d", argc - optind);
		return MP_EXIT_USAGE;
	}
	if (cli_diff_looks_hlo(argv[optind]) || cli_diff_looks_hlo(argv[optind + 1]))
		return diff_hlo(&a, &in, argv[optind], argv[optind + 1]);
	if (a.module) {
		mp_cli_error("--module applies to HLO modules");
		return MP_EXIT_USAGE;
	}
	cli_input_args_wire(&in, &io, &sopt);
	io.solver = &sopt;
	io.functions = a.by_function;
	dopt.by_function = a.by_function;
	dopt.map_count = a.nmaps;
	memset(&pair, 0, sizeof(pair));
	rc = cli_diff_pair_open(&pair, argv[optind], argv[optind + 1], a.sel, &io, &dopt);
	if (rc == MP_EXIT_OK)
		rc = write_diff(&a, pair.diff);
	cli_diff_pair_close(&pair);
	return rc;
}
