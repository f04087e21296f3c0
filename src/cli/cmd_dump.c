/* cmd_dump.c - placeholder while the capture core lands. */
#include "cli.h"

int cmd_dump(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return mp_cli_error("not implemented yet");
}
