/* cmd_demo.c - `memprof demo [-o FILE]`: record the bundled example (a
 * training loop over a BFC-style pool, src/demo/) and show what memprof
 * makes of it: `memprof report --peak --oom` on the capture, and two
 * charts beside it, the timeline and the memory map at the failed
 * allocation. The capture is kept at FILE when given, else in a new
 * directory under /tmp, whose name is printed. */
#include "cli.h"
#include "inputs.h"
#include "options.h"
#include "plot_out.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(FILE *out)
{
	fprintf(out, "usage: memprof demo [-o FILE]\n"
		     "\n"
		     "Record the bundled example program (a few training steps over a BFC-style\n"
		     "device pool, with a fragmented step and a failed allocation), print the\n"
		     "report on it and draw its timeline and the memory map at the failed\n"
		     "allocation beside the capture (NAME.timeline.png, NAME.oom-map.png).\n"
		     "\n"
		     "  -o, --output FILE   the capture (overwritten if it exists); default: a new\n"
		     "                      directory /tmp/memprof-demo-XXXXXX\n");
}

/* Run the example with MEMPROF_OUTPUT=path; returns 0 or an exit code. */
static int record_example(const char *path)
{
	char prog[PATH_MAX];
	int status;
	pid_t pid;

	if (mp_cli_find_demo(prog, sizeof(prog)))
		return MP_EXIT_IO; /* beside_exe.c said which files it looked for */
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		mp_cli_error("cannot fork: %s", strerror(errno));
		return MP_EXIT_IO;
	}
	if (pid == 0) {
		setenv("MEMPROF_OUTPUT", path, 1);
		setenv("MEMPROF_OVERWRITE", "1", 1);
		execl(prog, prog, (char *)NULL);
		fprintf(stderr, "memprof: error: cannot run '%s': %s\n", prog, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			mp_cli_error("waitpid: %s", strerror(errno));
			return MP_EXIT_IO;
		}
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		mp_cli_error("the example program failed (status %d)", status);
		return MP_EXIT_FAILURE;
	}
	return 0;
}

/* FILE.timeline.png and FILE.oom-map.png beside the capture FILE.memprof. */
static int draw_charts(char *capture)
{
	char *argv1[] = {capture, NULL}, timeline[4096], map[4096];
	size_t len = strlen(capture);
	mp_solver_options_t so;
	mp_xplane_input_options_t xin = {NULL, 0};
	cli_inputs_options_t io = {.solver = &so, .xplane = &xin};
	mp_plot_options_t tl = {.charts = MP_PLOT_TIMELINE};
	mp_plot_options_t oom = {.charts = MP_PLOT_MAP, .max_oom_maps = 1, .failures_only = 1};
	cli_inputs_t ci;
	int rc;

	if (len > 8 && !strcmp(capture + len - 8, ".memprof"))
		len -= 8;
	if (len + 16 > sizeof(timeline)) {
		mp_cli_error("'%s': the name is too long to name its charts after", capture);
		return MP_EXIT_USAGE;
	}
	snprintf(timeline, sizeof(timeline), "%.*s.timeline.png", (int)len, capture);
	snprintf(map, sizeof(map), "%.*s.oom-map.png", (int)len, capture);
	mp_solver_options_init(&so);
	so.timeline_points = 2000;
	rc = cli_inputs_open(&ci, argv1, 1, &io);
	if (rc == MP_EXIT_OK)
		rc = cli_plot_write(&ci, &tl, timeline);
	if (rc == MP_EXIT_OK)
		rc = cli_plot_write(&ci, &oom, map);
	cli_inputs_close(&ci);
	if (rc == MP_EXIT_OK)
		printf("\nmemprof: charts of the example: %s (the timeline) and %s (the pool when the 6 MiB "
		       "request failed)\n", timeline, map);
	return rc;
}

/* -o RUN: where the example's capture goes. */
static int output_option(void *ctx, int c, const char *arg)
{
	(void)c;
	(void)arg;
	*(char **)ctx = optarg; /* arg, as argv's: report's argv takes it */
	return MP_EXIT_OK;
}

int cmd_demo(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{NULL, 0, NULL, 0},
	};
	char dir[] = "/tmp/memprof-demo-XXXXXX", tmp[sizeof(dir) + 16];
	char report_name[] = "report", peak[] = "--peak", oom[] = "--oom";
	char *path = NULL;
	cli_parser_t p = {.command = "demo", .usage = usage, .shortopts = "o:h", .own = opts, .option = output_option,
			  .ctx = &path, .unknown_prints_usage = 1};
	int rc;

	if ((rc = cli_parse_options(&p, argc, argv)) != CLI_OPT_CONTINUE)
		return rc;
	if (optind != argc) {
		usage(stderr);
		return MP_EXIT_USAGE;
	}
	if (!path) { /* a directory of its own, kept: the charts are to be looked at */
		if (!mkdtemp(dir)) {
			mp_cli_error("cannot create a directory under /tmp: %s", strerror(errno));
			return MP_EXIT_IO;
		}
		snprintf(tmp, sizeof(tmp), "%s/demo.memprof", dir);
		path = tmp;
	}
	rc = record_example(path);
	if (rc == 0) {
		char *report_argv[] = {report_name, peak, oom, path, NULL};
		printf("memprof: recorded the example into '%s'\n"
		       "memprof: report --peak --oom:\n\n", path);
		fflush(stdout);
		rc = cmd_report(4, report_argv);
	}
	if (rc == 0) {
		fflush(stdout);
		rc = draw_charts(path);
	}
	return rc;
}
