/* cmd_hlo.c - `memprof hlo FILE`: the HLO buffer viewer (docs/hlo.md). */
#include "cli.h"
#include "options.h"
#include "plot_out.h"

#include <memprof/hlo.h>
#include <memprof/plot.h>
#include <memprof/render.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: memprof hlo [options] FILE\n"
		"\n"
		"Report the working space of an XLA module from its buffer assignment:\n"
		"the peak heap, where it is reached and the buffers live at it.\n"
		"FILE is an HloProto dump (*after_optimizations.hlo.pb, .hlo.pb.gz,\n"
		"*.hlo_proto.pb) or an .xplane.pb profile that embeds HloProtos.\n"
		"\n"
		"options:\n"
		"  --module NAME|ID         module to analyse when the file holds several\n"
		"  --list                   list the modules (name, program id, size) and exit\n"
		"  --color N                memory colour (memory space), default 0\n"
		"  --small-buffer-size N    buffers under N bytes are summed into one entry (16384)\n"
		"  --top N                  buffers shown in the text report (20; 0 = all)\n"
		"  --order size|program     order of the buffers in the text report (size)\n"
		"  --json                   JSON document (schema in docs/hlo.md)\n"
		"  --csv                    CSV of the buffers at the peak (xprof's columns)\n"
		"  --compat=xprof           reproduce xprof's Memory Viewer exactly\n"
		"  -h, --help               this help\n"
		"\n"
		"charts (the Memory Viewer as one picture, for a bug report):\n"
		"  -o, --output OUT.svg|OUT.png  write the charts instead of the text report\n"
		"                           (with --json or --csv, the document is printed too;\n"
		"                           OUT.html: one page with every buffer's details on\n"
		"                           hover, zoom and pan)\n"
		"  --chart NAME             working-space, by-order, by-size or all (default);\n"
		"                           the header and the table of the largest buffers\n"
		"                           are always drawn\n"
		"  --width W                picture width in px (1200; at least 480)\n"
		"  --height H               picture height in px (default: from the content)\n");
}

static int parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || !*s || *end)
		return -1;
	*out = v;
	return 0;
}

/* The charts of r into path. Says "memprof: wrote PATH (...)" on stderr,
 * as `memprof plot` does, so that stdout stays the document asked for.
 * Returns an exit code; the message of a failure is printed. */
static int write_picture(const mp_hlo_result_t *r, const mp_plot_hlo_options_t *po, const char *path,
			 const char *input)
{
	mp_scene_t *scene = NULL;
	mp_diag_t diag;
	int rc;

	mp_diag_clear(&diag);
	cli_picture_font_check(path);
	rc = mp_plot_hlo(&scene, r, po, mp_render_measure(), &diag);
	if (rc < 0 && rc != MP_EUSAGE)
		mp_diag_set_file(&diag, input); /* the module is what lacks something */
	if (rc == 0)
		rc = cli_picture_write(scene, path, &diag);
	mp_scene_free(scene);
	mp_render_shutdown(); /* the font caches: leak checkers see a clean exit */
	if (rc < 0) {
		int code = mp_cli_diag(&diag);
		return rc == MP_ENODATA ? MP_EXIT_FAILURE : code;
	}
	return MP_EXIT_OK;
}

static void list_modules(const mp_hlo_file_t *f)
{
	size_t n = mp_hlo_file_module_count(f);

	printf("%-50s %22s %12s\n", "module", "program id", "bytes");
	for (size_t i = 0; i < n; i++) {
		const mp_hlo_module_info_t *m = mp_hlo_file_module(f, i);

		printf("%-50s %22" PRIu64 " %12zu\n", m->name, m->program_id, m->size);
	}
}

/* What the command line asks for. */
typedef struct hlo_args {
	mp_hlo_options_t opt;
	mp_plot_hlo_options_t po;
	const char *module_sel, *path, *picture;
	int plot_opts;    /* --chart, --width or --height given */
	int64_t top;
	int list, json, csv, program_order;
} hlo_args_t;

enum { OPT_MODULE = 256, OPT_COLOR, OPT_SMALL, OPT_TOP, OPT_COMPAT, OPT_ORDER, OPT_CHART, OPT_WIDTH, OPT_HEIGHT };

/* -o, --chart, --width, --height: the picture's options. */
static int picture_option(hlo_args_t *a, int c, const char *arg)
{
	switch (c) {
	case 'o':
		a->picture = arg;
		if (mp_render_format_of(arg) == MP_RENDER_NONE) {
			mp_cli_error("-o '%s': unknown picture format (the name must end in .svg, .png or .html)", arg);
			return MP_EXIT_USAGE;
		}
		return MP_EXIT_OK;
	case OPT_CHART:
		if (!(a->po.charts = mp_plot_hlo_chart_parse(arg))) {
			mp_cli_error("--chart accepts working-space, by-order, by-size or all, got '%s'", arg);
			return MP_EXIT_USAGE;
		}
		break;
	case OPT_WIDTH:
		if (cli_parse_px(arg, "--width", (uint32_t)MP_PLOT_MIN_WIDTH, &a->po.width) < 0)
			return MP_EXIT_USAGE;
		break;
	default: /* OPT_HEIGHT */
		if (cli_parse_px(arg, "--height", 1, &a->po.height) < 0)
			return MP_EXIT_USAGE;
		break;
	}
	a->plot_opts = 1;
	return MP_EXIT_OK;
}

/* One option of hlo's that is not a flag. */
static int hlo_option(void *ctx, int c, const char *arg)
{
	hlo_args_t *a = ctx;

	switch (c) {
	case OPT_MODULE:
		a->module_sel = arg;
		break;
	case OPT_COLOR:
		if (parse_i64(arg, &a->opt.color) < 0) {
			mp_cli_error("--color expects an integer, got '%s'", arg);
			return MP_EXIT_USAGE;
		}
		break;
	case OPT_SMALL:
		if (parse_i64(arg, &a->opt.small_buffer_size) < 0 || a->opt.small_buffer_size < 0) {
			mp_cli_error("--small-buffer-size expects a byte count, got '%s'", arg);
			return MP_EXIT_USAGE;
		}
		break;
	case OPT_TOP:
		if (parse_i64(arg, &a->top) < 0 || a->top < 0) {
			mp_cli_error("--top expects a count, got '%s'", arg);
			return MP_EXIT_USAGE;
		}
		break;
	case OPT_ORDER:
		if (!strcmp(arg, "program")) {
			a->program_order = 1;
		} else if (strcmp(arg, "size") != 0) {
			mp_cli_error("--order accepts 'size' or 'program', got '%s'", arg);
			return MP_EXIT_USAGE;
		}
		break;
	case OPT_COMPAT:
		if (strcmp(arg, "xprof") != 0) {
			mp_cli_error("--compat accepts only 'xprof', got '%s'", arg);
			return MP_EXIT_USAGE;
		}
		a->opt.compat = 1;
		break;
	default:
		return picture_option(a, c, arg);
	}
	return MP_EXIT_OK;
}

/* The command line into a: CLI_OPT_CONTINUE, or the exit code to return. */
static int parse_args(hlo_args_t *a, int argc, char **argv)
{
	const struct option opts[] = {
		{"module", required_argument, NULL, OPT_MODULE},
		{"list", no_argument, &a->list, 1},
		{"color", required_argument, NULL, OPT_COLOR},
		{"small-buffer-size", required_argument, NULL, OPT_SMALL},
		{"top", required_argument, NULL, OPT_TOP},
		{"order", required_argument, NULL, OPT_ORDER},
		{"json", no_argument, &a->json, 1},
		{"csv", no_argument, &a->csv, 1},
		{"compat", required_argument, NULL, OPT_COMPAT},
		{"output", required_argument, NULL, 'o'},
		{"chart", required_argument, NULL, OPT_CHART},
		{"width", required_argument, NULL, OPT_WIDTH},
		{"height", required_argument, NULL, OPT_HEIGHT},
		{NULL, 0, NULL, 0},
	};
	cli_parser_t p = {.command = "hlo", .usage = usage, .shortopts = "ho:", .own = opts, .option = hlo_option,
			  .ctx = a, .unknown_prints_usage = 1};
	int rc;

	if ((rc = cli_parse_options(&p, argc, argv)) != CLI_OPT_CONTINUE)
		return rc;
	if (optind + 1 != argc) {
		mp_cli_error(optind >= argc ? "missing FILE" : "too many arguments");
		usage(stderr);
		return MP_EXIT_USAGE;
	}
	if (a->json && a->csv) {
		mp_cli_error("--json and --csv are exclusive");
		return MP_EXIT_USAGE;
	}
	if (a->plot_opts && !a->picture) {
		mp_cli_error("--chart, --width and --height need -o OUT.svg|OUT.png");
		return MP_EXIT_USAGE;
	}
	a->path = argv[optind];
	return CLI_OPT_CONTINUE;
}

/* The module --module names (or the file's only one) into *mod, its
 * warnings said; with --list, the modules listed and *mod left NULL. An
 * exit code. */
static int open_module(const hlo_args_t *a, mp_hlo_module_t **mod)
{
	mp_hlo_file_t *file = NULL;
	mp_diag_t diag;
	size_t index = 0;
	int rc;

	mp_diag_clear(&diag);
	if (mp_hlo_file_open(a->path, &file, &diag) < 0)
		return mp_cli_diag(&diag);
	if (a->list) {
		list_modules(file);
		mp_hlo_file_close(file);
		return MP_EXIT_OK;
	}
	if (a->module_sel) {
		if (mp_hlo_file_find(file, a->module_sel, &index, &diag) < 0) {
			rc = mp_cli_diag(&diag);
			fprintf(stderr, "modules in '%s':\n", a->path);
			for (size_t i = 0; i < mp_hlo_file_module_count(file); i++)
				fprintf(stderr, "  %s\n", mp_hlo_file_module(file, i)->display);
			mp_hlo_file_close(file);
			return rc;
		}
	} else if (mp_hlo_file_module_count(file) > 1) {
		list_modules(file);
		mp_cli_error("'%s' holds %zu modules; choose one with --module NAME|ID", a->path,
			     mp_hlo_file_module_count(file));
		mp_hlo_file_close(file);
		return MP_EXIT_USAGE;
	}
	rc = mp_hlo_module_load(file, index, mod, &diag);
	mp_hlo_file_close(file);
	if (rc < 0) {
		mp_diag_set_file(&diag, a->path);
		return mp_cli_diag(&diag);
	}
	for (size_t i = 0; i < mp_hlo_module_warning_count(*mod); i++)
		mp_cli_warning("%s", mp_hlo_module_warning(*mod, i));
	return MP_EXIT_OK;
}

/* The buffer assignment of mod analysed into *res, its warnings said (and
 * a colour the module does not use). An exit code. */
static int analyse(const hlo_args_t *a, mp_hlo_module_t *mod, mp_hlo_result_t **res)
{
	size_t ncolors;
	const int64_t *colors = mp_hlo_module_colors(mod, &ncolors);
	mp_diag_t diag;
	int found = 0;

	for (size_t i = 0; i < ncolors; i++)
		found |= colors[i] == a->opt.color;
	if (!found)
		mp_cli_warning("memory colour %" PRId64 " does not occur in the module", a->opt.color);
	mp_diag_clear(&diag);
	if (mp_hlo_analyze(mod, &a->opt, res, &diag) < 0) {
		mp_diag_set_file(&diag, a->path);
		return mp_cli_diag(&diag);
	}
	for (size_t i = 0; i < (*res)->n_warnings; i++)
		mp_cli_warning("%s", (*res)->warnings[i]);
	return MP_EXIT_OK;
}

/* The picture, then the document asked for on stdout. An exit code. */
static int write_outputs(const hlo_args_t *a, const mp_hlo_result_t *res)
{
	/* the picture first: a module it cannot be drawn from fails before
	 * anything is printed */
	int exit_code = a->picture ? write_picture(res, &a->po, a->picture, a->path) : MP_EXIT_OK, rc = 0;

	if (exit_code != MP_EXIT_OK)
		return exit_code;
	if (a->json)
		rc = mp_hlo_write_json(stdout, res);
	else if (a->csv)
		rc = mp_hlo_write_csv(stdout, res);
	else if (!a->picture)
		rc = mp_hlo_write_text(stdout, res, (size_t)a->top, a->program_order);
	if (rc < 0) {
		mp_cli_error("cannot write the report: %s", mp_strerror(rc));
		return MP_EXIT_IO;
	}
	return MP_EXIT_OK;
}

int cmd_hlo(int argc, char **argv)
{
	hlo_args_t a = {.top = 20};
	mp_hlo_module_t *mod = NULL;
	mp_hlo_result_t *res = NULL;
	int rc;

	mp_hlo_options_init(&a.opt);
	if ((rc = parse_args(&a, argc, argv)) != CLI_OPT_CONTINUE)
		return rc;
	if ((rc = open_module(&a, &mod)) != MP_EXIT_OK || !mod)
		return rc; /* an error, or --list */
	if ((rc = analyse(&a, mod, &res)) == MP_EXIT_OK)
		rc = write_outputs(&a, res);
	mp_hlo_result_free(res);
	mp_hlo_module_free(mod);
	return rc;
}
