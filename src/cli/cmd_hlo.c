/* cmd_hlo.c - `memprof hlo FILE`: the HLO buffer viewer (docs/hlo.md). */
#include "cli.h"
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

int cmd_hlo(int argc, char **argv)
{
	enum {
		OPT_MODULE = 256, OPT_LIST, OPT_COLOR, OPT_SMALL, OPT_TOP, OPT_JSON, OPT_CSV, OPT_COMPAT, OPT_ORDER,
		OPT_CHART, OPT_WIDTH, OPT_HEIGHT
	};
	static const struct option opts[] = {
		{"module", required_argument, NULL, OPT_MODULE},
		{"list", no_argument, NULL, OPT_LIST},
		{"color", required_argument, NULL, OPT_COLOR},
		{"small-buffer-size", required_argument, NULL, OPT_SMALL},
		{"top", required_argument, NULL, OPT_TOP},
		{"order", required_argument, NULL, OPT_ORDER},
		{"json", no_argument, NULL, OPT_JSON},
		{"csv", no_argument, NULL, OPT_CSV},
		{"compat", required_argument, NULL, OPT_COMPAT},
		{"output", required_argument, NULL, 'o'},
		{"chart", required_argument, NULL, OPT_CHART},
		{"width", required_argument, NULL, OPT_WIDTH},
		{"height", required_argument, NULL, OPT_HEIGHT},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	mp_hlo_options_t opt;
	mp_plot_hlo_options_t po;
	const char *module_sel = NULL, *path, *picture = NULL;
	int plot_opts = 0;
	int64_t top = 20;
	int list = 0, json = 0, csv = 0, program_order = 0, c, rc, exit_code;
	mp_hlo_file_t *file = NULL;
	mp_hlo_module_t *mod = NULL;
	mp_hlo_result_t *res = NULL;
	mp_diag_t diag;
	size_t index = 0, ncolors;
	const int64_t *colors;
	int found = 0;

	mp_hlo_options_init(&opt);
	memset(&po, 0, sizeof(po));
	mp_diag_clear(&diag);
	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			picture = optarg;
			if (mp_render_format_of(picture) == MP_RENDER_NONE) {
				mp_cli_error("-o '%s': unknown picture format (the name must end in .svg, .png or .html)", picture);
				return MP_EXIT_USAGE;
			}
			break;
		case OPT_CHART:
			if (!(po.charts = mp_plot_hlo_chart_parse(optarg))) {
				mp_cli_error("--chart accepts working-space, by-order, by-size or all, got '%s'", optarg);
				return MP_EXIT_USAGE;
			}
			plot_opts = 1;
			break;
		case OPT_WIDTH:
			if (cli_parse_px(optarg, "--width", (uint32_t)MP_PLOT_MIN_WIDTH, &po.width) < 0)
				return MP_EXIT_USAGE;
			plot_opts = 1;
			break;
		case OPT_HEIGHT:
			if (cli_parse_px(optarg, "--height", 1, &po.height) < 0)
				return MP_EXIT_USAGE;
			plot_opts = 1;
			break;
		case OPT_MODULE:
			module_sel = optarg;
			break;
		case OPT_LIST:
			list = 1;
			break;
		case OPT_COLOR:
			if (parse_i64(optarg, &opt.color) < 0) {
				mp_cli_error("--color expects an integer, got '%s'", optarg);
				return MP_EXIT_USAGE;
			}
			break;
		case OPT_SMALL:
			if (parse_i64(optarg, &opt.small_buffer_size) < 0 || opt.small_buffer_size < 0) {
				mp_cli_error("--small-buffer-size expects a byte count, got '%s'", optarg);
				return MP_EXIT_USAGE;
			}
			break;
		case OPT_TOP:
			if (parse_i64(optarg, &top) < 0 || top < 0) {
				mp_cli_error("--top expects a count, got '%s'", optarg);
				return MP_EXIT_USAGE;
			}
			break;
		case OPT_ORDER:
			if (!strcmp(optarg, "program")) {
				program_order = 1;
			} else if (strcmp(optarg, "size") != 0) {
				mp_cli_error("--order accepts 'size' or 'program', got '%s'", optarg);
				return MP_EXIT_USAGE;
			}
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_CSV:
			csv = 1;
			break;
		case OPT_COMPAT:
			if (strcmp(optarg, "xprof") != 0) {
				mp_cli_error("--compat accepts only 'xprof', got '%s'", optarg);
				return MP_EXIT_USAGE;
			}
			opt.compat = 1;
			break;
		case 'h':
			usage(stdout);
			return MP_EXIT_OK;
		default:
			usage(stderr);
			return MP_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		mp_cli_error(optind >= argc ? "missing FILE" : "too many arguments");
		usage(stderr);
		return MP_EXIT_USAGE;
	}
	if (json && csv) {
		mp_cli_error("--json and --csv are exclusive");
		return MP_EXIT_USAGE;
	}
	if (plot_opts && !picture) {
		mp_cli_error("--chart, --width and --height need -o OUT.svg|OUT.png");
		return MP_EXIT_USAGE;
	}
	path = argv[optind];

	if ((rc = mp_hlo_file_open(path, &file, &diag)) < 0)
		return mp_cli_diag(&diag);
	if (list) {
		list_modules(file);
		mp_hlo_file_close(file);
		return MP_EXIT_OK;
	}
	if (module_sel) {
		if ((rc = mp_hlo_file_find(file, module_sel, &index, &diag)) < 0) {
			exit_code = mp_cli_diag(&diag);
			fprintf(stderr, "modules in '%s':\n", path);
			for (size_t i = 0; i < mp_hlo_file_module_count(file); i++)
				fprintf(stderr, "  %s\n", mp_hlo_file_module(file, i)->display);
			mp_hlo_file_close(file);
			return exit_code;
		}
	} else if (mp_hlo_file_module_count(file) > 1) {
		list_modules(file);
		mp_cli_error("'%s' holds %zu modules; choose one with --module NAME|ID", path,
			     mp_hlo_file_module_count(file));
		mp_hlo_file_close(file);
		return MP_EXIT_USAGE;
	}
	rc = mp_hlo_module_load(file, index, &mod, &diag);
	mp_hlo_file_close(file);
	if (rc < 0) {
		mp_diag_set_file(&diag, path);
		return mp_cli_diag(&diag);
	}
	for (size_t i = 0; i < mp_hlo_module_warning_count(mod); i++)
		mp_cli_warning("%s", mp_hlo_module_warning(mod, i));
	colors = mp_hlo_module_colors(mod, &ncolors);
	for (size_t i = 0; i < ncolors; i++)
		found |= colors[i] == opt.color;
	if (!found)
		mp_cli_warning("memory colour %" PRId64 " does not occur in the module", opt.color);
	if ((rc = mp_hlo_analyze(mod, &opt, &res, &diag)) < 0) {
		mp_diag_set_file(&diag, path);
		mp_hlo_module_free(mod);
		return mp_cli_diag(&diag);
	}
	for (size_t i = 0; i < res->n_warnings; i++)
		mp_cli_warning("%s", res->warnings[i]);
	/* the picture first: a module it cannot be drawn from fails before
	 * anything is printed */
	exit_code = picture ? write_picture(res, &po, picture, path) : MP_EXIT_OK;
	rc = 0;
	if (exit_code == MP_EXIT_OK) {
		if (json)
			rc = mp_hlo_write_json(stdout, res);
		else if (csv)
			rc = mp_hlo_write_csv(stdout, res);
		else if (!picture)
			rc = mp_hlo_write_text(stdout, res, (size_t)top, program_order);
	}
	mp_hlo_result_free(res);
	mp_hlo_module_free(mod);
	if (rc < 0) {
		mp_cli_error("cannot write the report: %s", mp_strerror(rc));
		return MP_EXIT_IO;
	}
	return exit_code;
}
