/* messages.c - error/warning printing for commands (byte counts:
 * memprof/output/units.h). */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int mp_cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("memprof: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

void mp_cli_warning(const char *fmt, ...)
{
	va_list ap;

	fputs("memprof: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int mp_cli_exit_code(int err)
{
	switch (err) {
	case 0:
		return MP_EXIT_OK;
	case MP_EUSAGE:
	case MP_ENOTFOUND:
		return MP_EXIT_USAGE;
	case MP_EFORMAT:
	case MP_EVERSION:
	case MP_ETRUNCATED:
	case MP_ECHECKSUM:
	case MP_ECORRUPT:
	case MP_ELIMIT:
	case MP_EHLO:
	case MP_ECOMPRESS:
		return MP_EXIT_FORMAT;
	default:
		if (err < 0 && err > -4000)
			return MP_EXIT_IO;
		return MP_EXIT_FAILURE;
	}
}

int mp_cli_diag(const mp_diag_t *diag)
{
	const char *text = diag->text[0] ? diag->text : mp_strerror(diag->code);

	fputs("memprof: error: ", stderr);
	if (diag->file[0])
		fprintf(stderr, "%s: ", diag->file);
	if (diag->offset >= 0 && !strstr(text, "offset")) /* not when the text says it already */
		fprintf(stderr, "offset %" PRId64 ": ", diag->offset);
	fprintf(stderr, "%s\n", text);
	return mp_cli_exit_code(diag->code);
}
