/* main.c - memprof's entry point: global options and the command table. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#ifndef MEMPROF_VERSION
#define MEMPROF_VERSION "unknown"
#endif

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
#define X(name, summary) {#name, cmd_##name, summary},
#include "commands.def"
#undef X
};

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: memprof <command> [options] [args]\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'memprof <command> --help' describes a command; "
		     "exit codes are in docs/cli.md.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return MP_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return MP_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("memprof %s\n", MEMPROF_VERSION);
		return MP_EXIT_OK;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	mp_cli_error("unknown command '%s' (see 'memprof --help')", argv[1]);
	return MP_EXIT_USAGE;
}
