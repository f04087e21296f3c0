/* cmd_demo.c - placeholder while the capture core lands. */
#include "cli.h"

int cmd_demo(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return mp_cli_error("not implemented yet");
}
