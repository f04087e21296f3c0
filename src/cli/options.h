/* options.h - the one command-line option loop every command runs: the
 * command's own options, the input options it takes from the shared table
 * (inputs.h: --device, --steps, --run, --pid, --process, --all-frames,
 * --user-code), and --help and unknown options, said the same way
 * everywhere. A command's switch then holds only its own options. */
#ifndef MEMPROF_CLI_OPTIONS_H
#define MEMPROF_CLI_OPTIONS_H

#include "inputs.h"

#include <getopt.h>
#include <stdio.h>

/* cli_parse_options: go on to the operands (else: return the exit code). */
#define CLI_OPT_CONTINUE (-1)

#define CLI_OPT_MAX 48 /* long options of one command, the shared ones included */

typedef struct cli_parser {
	const char *command;            /* "report": named in the unknown-option message */
	void (*usage)(FILE *out);       /* the command's --help text */
	const char *shortopts;          /* getopt's string ('h' among them; '+' to stop at CMD) */
	/* The command's long options, NULL-terminated, vals < CLI_IN_OPT_BASE;
	 * a switch is a row with a flag (getopt sets *flag = val). */
	const struct option *own;
	/* One option of the command's own that is not a flag (its val, its
	 * argument or NULL): MP_EXIT_OK, or an exit code after saying what is
	 * wrong. NULL where every option is a flag. */
	int (*option)(void *ctx, int val, const char *arg);
	void *ctx;
	unsigned inputs;                /* CLI_IN_*: the shared input options it takes */
	int unknown_prints_usage;       /* 1: an unknown option prints getopt's line and the usage; 0: one line */
	cli_input_args_t *in;           /* where the input options go (NULL when inputs is 0) */
	struct option longopts[CLI_OPT_MAX + 1];
} cli_parser_t;

/* Parse argv's options: the command's own through p->option, the input
 * options into p->in, --help (the usage on stdout) and unknown options
 * said the same way for every command. Returns CLI_OPT_CONTINUE with the
 * operands from optind, or the exit code the command returns (MP_EXIT_OK
 * after --help). */
int cli_parse_options(cli_parser_t *p, int argc, char **argv);

#endif
