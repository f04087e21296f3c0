/* options.c - the option loop every command runs (options.h). */
#include "options.h"

#include "cli.h"

#include <string.h>

/* The command's own long options, then the input options it takes, then
 * --help. -1 when they do not fit (a command grown past CLI_OPT_MAX). */
static int build_longopts(cli_parser_t *p)
{
	size_t n = 0;

	for (const struct option *o = p->own; o && o->name; o++) {
		if (n + CLI_IN_COUNT == CLI_OPT_MAX - 1)
			return -1;
		p->longopts[n++] = *o;
	}
	n += cli_input_longopts(p->inputs, p->longopts + n, CLI_OPT_MAX - 1 - n);
	p->longopts[n++] = (struct option){"help", no_argument, NULL, 'h'};
	memset(&p->longopts[n], 0, sizeof(p->longopts[n]));
	return 0;
}

int cli_parse_options(cli_parser_t *p, int argc, char **argv)
{
	int c, rc;

	if (build_longopts(p) < 0) {
		mp_cli_error("internal: memprof %s has more than %d options", p->command, CLI_OPT_MAX);
		return MP_EXIT_FAILURE;
	}
	optind = 1;
	/* commands that print their usage on a bad option let getopt name it
	 * first; the others say it in one line of their own */
	opterr = p->unknown_prints_usage;
	while ((c = getopt_long(argc, argv, p->shortopts, p->longopts, NULL)) != -1) {
		if (c == 0) /* a flag: set */
			continue;
		if (c == 'h') {
			p->usage(stdout);
			return MP_EXIT_OK;
		}
		if (c == '?' || c == ':') {
			if (p->unknown_prints_usage)
				p->usage(stderr);
			else
				mp_cli_error("unknown or incomplete option '%s' (see 'memprof %s --help')", argv[optind - 1],
					     p->command);
			return MP_EXIT_USAGE;
		}
		rc = c >= CLI_IN_OPT_BASE ? cli_input_option(c, optarg, p->in) : p->option(p->ctx, c, optarg);
		if (rc != MP_EXIT_OK)
			return rc;
	}
	return CLI_OPT_CONTINUE;
}
