/* cmd_plot.c - `memprof plot FILE... -o OUT.svg|OUT.png`: the charts of
 * captures as a picture for a bug report (docs/charts.md). */
#include "cli.h"
#include "diff_cli.h"
#include "inputs.h"
#include "options.h"
#include "plot_out.h"
#include "plot_rounds.h"
#include "report_seek.h"
#include "runs.h"

#include <memprof/plot.h>
#include <memprof/xplane.h>

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: memprof plot FILE... -o OUT.svg|OUT.png|OUT.html [--chart timeline|breakdown|map|all|flame]\n"
		"                    [--device ID] [--steps A:B] [--width W] [--height H]\n"
		"                    [--top N] [--oom-maps N] [--run NAME] [--pid N | --process all]\n"
		"                    [--all-frames] [--user-code LIST] [--rounds|--replay]\n"
		"                    [--tree peak|leaks|allocated] [--min-percent P] [--from-event N]\n"
		"       memprof plot --diff A B -o OUT.svg|OUT.png [--width W] [--top N] [--device ID]\n"
		"\n"
		"Draw the charts of captures into one picture (SVG or PNG, from the\n"
		"extension; .html: one self-contained page of that picture, with the\n"
		"details of every bar and block on hover, zoom and pan, and the breakdown\n"
		"as a sortable table): per memory id, highest peak first,\n"
		"  timeline   in use over time (stack, heap, free), fragmentation, the peak,\n"
		"             failed allocations and step starts (the default)\n"
		"  breakdown  what was live at the peak, largest groups first\n"
		"  map        the memory map at the peak and at each failed allocation: every\n"
		"             region as an address strip, the largest free chunk, the request\n"
		"  all        all of them, stacked\n"
		"  --diff A B what changed (see 'memprof diff'): per memory id in both, the two\n"
		"             timelines on one axis with their peaks, and the largest changes\n"
		"             at the peak as bars (growth right, shrinkage left)\n"
		"  flame      the call tree of what was live at the peak (or --tree leaks,\n"
		"             allocated) as an icicle: captures recorded with --stacks, and\n"
		"             PyTorch snapshots (their frames)\n"
		"\n"
		"  -o, --output OUT  the picture to write (.svg, .png or .html)\n"
		"  --device ID   only this memory id (a number, or a name such as GPU_0_bfc)\n"
		"  --steps A:B   only steps A to B (A:, :B and A also accepted)\n"
		"  --width W     picture width in px (default 1200, at least 480)\n"
		"  --height H    picture height in px (default: 700 for one chart, else what\n"
		"                the charts need)\n"
		"  --replay      the timeline from every event, not from the capture's rounds\n"
		"                (captures since format 2.5 keep, per round of about 90 ms,\n"
		"                what the timeline draws: one of 2 million events or more is\n"
		"                drawn from those in a moment, whatever its length; --replay\n"
		"                draws fragmentation, phases and the peak's largest group too);\n"
		"                the breakdown and the maps from every event, not from the\n"
		"                capture's checkpoint before the peak (--full-replay: the same)\n"
		"  --rounds      the timeline from the rounds also for a shorter capture\n"
		"  --from-event N  the window of a capture after its first N events, as\n"
		"                'report --from-event' (a kept run's window is drawn from its\n"
		"                first checkpoint: the same picture as the full capture's\n"
		"                window from that checkpoint's events)\n"
		"  --top N       bars of the breakdown (default 12; the rest in one bar)\n"
		"  --oom-maps N  maps of failed allocations per memory id (default 4)\n"
		"  --run NAME    the run of a TensorBoard log directory (default: the newest)\n"
		"  --pid N       in a 'memprof record' run, that process (default: the main\n"
		"                process, the one with the largest peak)\n"
		"  --process all in a 'memprof record' run, every process that did work\n");
	/* (two strings: one would pass the 4095 characters C99 promises) */
	fprintf(out,
		"  --tree KIND   with --chart flame: peak (default), leaks or allocated\n"
		"  --min-percent P  with --chart flame: frames under P%% of the root folded\n"
		"                into (other) (default 1)\n"
		"  --all-frames  PyTorch snapshots: ops from the innermost frame (docs/torch.md);\n"
		"                captures: the breakdown's functions too, and the flame graph\n"
		"                keeps the interpreter's frames outside a Python's outermost one\n"
		"  --user-code LIST  Python files that count as your code (snapshots, captures\n"
		"                with Python frames): 'packages', package names or path\n"
		"                prefixes (docs/torch.md)\n"
		"\n"
		"FILE: a 'memprof record' run or .memprof capture, *.xplane.pb files (one per\n"
		"host, read together), a TensorBoard log directory or a PyTorch memory\n"
		"snapshot (*.pickle[.gz])\n"
		"\n"
		"exit codes: 0 ok, 1 nothing to draw, 2 usage, 3 file not readable or not\n"
		"            writable, 4 not a capture or corrupted\n");
}

/* What the command line asks for besides the input options. */
typedef struct plot_args {
	mp_plot_options_t po;
	double min_percent;
	const char *out;    /* -o */
	int diff, chart_set, flame, tree, tree_set, min_percent_set, replay, rounds, from_set;
	uint64_t from_event; /* --from-event */
} plot_args_t;

enum { O_CHART = 256, O_WIDTH, O_HEIGHT, O_TOP, O_OOM_MAPS, O_TREE, O_MIN_PERCENT, O_FROM_EVENT };

/* One option of plot's own that is not a flag. */
static int plot_option(void *ctx, int c, const char *arg)
{
	plot_args_t *a = ctx;
	uint32_t v;

	switch (c) {
	case 'o':
		a->out = arg;
		break;
	case O_CHART:
		a->chart_set = 1;
		if ((a->flame = !strcmp(arg, "flame")))
			break;
		if (!(a->po.charts = mp_plot_chart_parse(arg))) {
			mp_cli_error("unknown --chart '%s' (expected timeline, breakdown, map, all or flame)", arg);
			return MP_EXIT_USAGE;
		}
		break;
	case O_TREE:
		if ((a->tree = mp_tree_kind_parse(arg)) < 0) {
			mp_cli_error("invalid --tree '%s' (expected peak, leaks or allocated)", arg);
			return MP_EXIT_USAGE;
		}
		a->tree_set = 1;
		break;
	case O_MIN_PERCENT:
		a->min_percent_set = 1;
		return cli_parse_min_percent(arg, &a->min_percent);
	case O_FROM_EVENT:
		a->from_set = 1;
		return cli_parse_from_event(arg, &a->from_event);
	case O_WIDTH:
		return cli_parse_px(arg, "--width", (uint32_t)MP_PLOT_MIN_WIDTH, &a->po.width) < 0 ? MP_EXIT_USAGE
												   : MP_EXIT_OK;
	case O_HEIGHT:
		return cli_parse_px(arg, "--height", 1, &a->po.height) < 0 ? MP_EXIT_USAGE : MP_EXIT_OK;
	default: /* O_TOP, O_OOM_MAPS */
		if (cli_parse_u32(arg, &v) < 0 || v == 0 || v > 1000) {
			mp_cli_error("invalid %s '%s' (expected 1 to 1000)", c == O_TOP ? "--top" : "--oom-maps", arg);
			return MP_EXIT_USAGE;
		}
		if (c == O_TOP)
			a->po.top = v;
		else
			a->po.max_oom_maps = v;
		break;
	}
	return MP_EXIT_OK;
}

/* What the charts asked for need of the solver and of the inputs. */
static void plan(const plot_args_t *a, mp_solver_options_t *sopt, cli_inputs_options_t *io)
{
	const mp_plot_options_t *po = &a->po;

	if (po->top)
		sopt->top = (uint32_t)po->top;
	/* the timeline's exact fragmentation at every point is most of the
	 * analysis' cost (as for report --timeline): only when it is drawn */
	sopt->timeline = (po->charts & MP_PLOT_TIMELINE) != 0;
	sopt->breakdown = (po->charts & (MP_PLOT_BREAKDOWN | MP_PLOT_TIMELINE)) != 0; /* the peak label names its top op */
	sopt->max_oom_records = po->max_oom_maps > 16 ? (uint32_t)po->max_oom_maps : 1000;
	io->solver = sopt;
	/* the breakdown by function where the capture has one (a PyTorch
	 * snapshot always: its ops are frames); the timeline's peak label
	 * names its first bar, as the breakdown under it shows */
	io->functions = (po->charts & (MP_PLOT_BREAKDOWN | MP_PLOT_TIMELINE)) ? 2 : 0;
	if (a->flame) { /* the call tree alone: no timeline, breakdown or functions */
		sopt->timeline = 0;
		sopt->breakdown = 0;
		io->functions = 0;
		io->tree = a->tree + 1;
	}
}

int cmd_plot(int argc, char **argv)
{
	plot_args_t a = {.po = {.charts = MP_PLOT_TIMELINE}, .min_percent = MP_CALLTREE_MIN_PERCENT_DEFAULT,
			 .tree = MP_TREE_PEAK};
	const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},  {"chart", required_argument, NULL, O_CHART},
		{"width", required_argument, NULL, O_WIDTH}, {"height", required_argument, NULL, O_HEIGHT},
		{"top", required_argument, NULL, O_TOP},   {"oom-maps", required_argument, NULL, O_OOM_MAPS},
		{"tree", required_argument, NULL, O_TREE}, {"min-percent", required_argument, NULL, O_MIN_PERCENT},
		{"diff", no_argument, &a.diff, 1},         {"replay", no_argument, &a.replay, 1},
		{"rounds", no_argument, &a.rounds, 1},     {"full-replay", no_argument, &a.replay, 1},
		{"from-event", required_argument, NULL, O_FROM_EVENT},
		{NULL, 0, NULL, 0},
	};
	mp_solver_options_t sopt;
	cli_input_args_t in = {0};
	cli_inputs_options_t io = {0};
	cli_parser_t p = {.command = "plot", .usage = usage, .shortopts = "ho:", .own = longopts, .option = plot_option,
			  .ctx = &a, .inputs = CLI_IN_ALL, .in = &in};
	int rc;
	cli_inputs_t ci;
	cli_runs_t runs = {0};

	mp_solver_options_init(&sopt);
	sopt.timeline_points = 2000; /* about two points a pixel column at the default width */
	if ((rc = cli_parse_options(&p, argc, argv)) != CLI_OPT_CONTINUE)
		return rc;
	io.tree_min_percent = a.min_percent;
	if (optind >= argc) {
		mp_cli_error("no input file (see 'memprof plot --help')");
		return MP_EXIT_USAGE;
	}
	if (!a.out) {
		mp_cli_error("no output picture: give -o OUT.svg, -o OUT.png or -o OUT.html");
		return MP_EXIT_USAGE;
	}
	if ((rc = cli_plot_check_path(a.out, "-o")) != MP_EXIT_OK)
		return rc;
	if ((a.tree_set || a.min_percent_set) && !a.flame) {
		mp_cli_error("%s applies to --chart flame", a.tree_set ? "--tree" : "--min-percent");
		return MP_EXIT_USAGE;
	}
	if (a.from_set && (a.diff || a.flame || a.rounds || in.steps_set)) {
		mp_cli_error("--from-event cannot be combined with %s",
			     a.diff ? "--diff" : a.flame ? "--chart flame" : a.rounds ? "--rounds" : "--steps");
		return MP_EXIT_USAGE;
	}
	if (a.rounds && (a.replay || a.po.charts != MP_PLOT_TIMELINE || a.flame || in.steps_set)) {
		mp_cli_error("--rounds draws the timeline alone, without --replay or --steps");
		return MP_EXIT_USAGE;
	}
	cli_input_args_wire(&in, &io, &sopt);
	if (a.diff) { /* two inputs' timelines and their changes at the peak */
		if (argc - optind != 2 || a.chart_set || a.tree_set || a.min_percent_set || in.sel.all || in.sel.pid_set) {
			mp_cli_error("--diff draws two inputs, A B, and takes no --chart, --tree, --min-percent, --pid "
				     "or --process");
			return MP_EXIT_USAGE;
		}
		io.solver = &sopt;
		sopt.timeline = 1;
		sopt.breakdown = 1;
		return cli_plot_diff(argv[optind], argv[optind + 1], a.out, &a.po, &io);
	}
	plan(&a, &sopt, &io);
	memset(&ci, 0, sizeof(ci));
	rc = cli_runs_expand(&runs, argv + optind, argc - optind, &in.sel);
	/* the timeline alone, of captures that keep their rounds: from
	 * those, not from every event (plot_rounds.c) */
	if (rc == MP_EXIT_OK && a.po.charts == MP_PLOT_TIMELINE && !a.flame && !a.replay && !in.steps_set && !a.from_set &&
	    (rc = cli_plot_rounds(runs.files, (const char *const *)runs.labels, runs.nfiles, &a.po, in.device,
				  a.rounds, a.out)) != CLI_ROUNDS_NONE) {
		cli_runs_free(&runs);
		return rc;
	}
	if (rc == CLI_ROUNDS_NONE)
		rc = MP_EXIT_OK;
	/* the breakdown and the maps of a long capture from its checkpoint
	 * before the peak (and the first failure, for the OOM maps), as
	 * report's (report_seek.c, plot_seek.c); --replay: every event */
	if (a.po.charts && !(a.po.charts & ~(unsigned)(MP_PLOT_BREAKDOWN | MP_PLOT_MAP)) && !a.flame && !a.replay && !in.steps_set)
		io.seek = CLI_SEEK | ((a.po.charts & MP_PLOT_MAP) ? CLI_SEEK_OOM : 0);
	/* a window (report_window.h): a kept run's from its first
	 * checkpoint, --from-event's; its maps from the state at its start
	 * (plot_seek.c: cli_plot_window_reads) */
	io.window = !a.flame && !in.steps_set;
	io.from_set = a.from_set;
	io.from_event = a.from_event;
	io.window_replay = a.replay;
	if (rc == MP_EXIT_OK)
		rc = cli_inputs_open(&ci, runs.files, runs.nfiles, &io);
	if (rc == MP_EXIT_OK && ci.n == 0) {
		mp_cli_error("no memory events to draw: '%s' not written", a.out);
		rc = MP_EXIT_FAILURE;
	} else if (rc == MP_EXIT_OK) {
		cli_runs_title_inputs(&runs, &ci);
		rc = a.flame ? cli_plot_flame(&ci, a.tree, &a.po, a.out) : cli_plot_write(&ci, &a.po, a.out);
	}
	cli_inputs_close(&ci);
	cli_runs_free(&runs);
	return rc;
}
