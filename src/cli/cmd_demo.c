/* cmd_demo.c - `memprof demo [-o FILE]`: record the bundled example (a
 * training loop over a BFC-style pool, src/demo/) and show what memprof
 * makes of it: `memprof report --peak --oom` on the capture. The capture is
 * kept at FILE when given. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MEMPROF_DEMO_PATH
#define MEMPROF_DEMO_PATH "memprof_demo_victim"
#endif

static void usage(FILE *out)
{
	fprintf(out, "usage: memprof demo [-o FILE]\n"
		     "\n"
		     "Record the bundled example program (a few training steps over a BFC-style\n"
		     "device pool, with a fragmented step and a failed allocation) and print the\n"
		     "report on it.\n"
		     "\n"
		     "  -o, --output FILE   keep the capture at FILE (overwritten if it exists)\n");
}

/* Run the example with MEMPROF_OUTPUT=path; returns 0 or an exit code. */
static int record_example(const char *path)
{
	const char *prog = getenv("MEMPROF_DEMO_PROGRAM");
	int status;
	pid_t pid;

	if (!prog || !*prog)
		prog = MEMPROF_DEMO_PATH;
	if (access(prog, X_OK) != 0) {
		mp_cli_error("cannot run the example program '%s': %s", prog, strerror(errno));
		return MP_EXIT_IO;
	}
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

int cmd_demo(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char tmp[] = "/tmp/memprof-demo-XXXXXX";
	char report_name[] = "report", peak[] = "--peak", oom[] = "--oom";
	char *path = NULL;
	int c, rc, fd;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			path = optarg;
			break;
		case 'h':
			usage(stdout);
			return MP_EXIT_OK;
		default:
			usage(stderr);
			return MP_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return MP_EXIT_USAGE;
	}
	if (!path) {
		fd = mkstemp(tmp);
		if (fd < 0) {
			mp_cli_error("cannot create a temporary file: %s", strerror(errno));
			return MP_EXIT_IO;
		}
		close(fd);
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
	if (path == tmp)
		unlink(tmp);
	return rc;
}
