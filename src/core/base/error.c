/* error.c - error names and messages from MP_ERRNO_MAP, and mp_diag helpers. */
#include <memprof/error.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *mp_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
#define MP__ERR_MSG(name, val, msg) \
	case val:                   \
		return msg;
		MP_ERRNO_MAP(MP__ERR_MSG)
#undef MP__ERR_MSG
	default:
		break;
	}
	if (err < 0 && err > -4000)
		return strerror(-err);
	return "unknown error";
}

const char *mp_err_name(int err)
{
	switch (err) {
	case 0:
		return "OK";
#define MP__ERR_NAME(name, val, msg) \
	case val:                    \
		return #name;
		MP_ERRNO_MAP(MP__ERR_NAME)
#undef MP__ERR_NAME
	default:
		break;
	}
	if (err < 0 && err > -4000) {
		const char *n = strerrorname_np(-err);
		return n ? n : "EUNKNOWN";
	}
	return "EUNKNOWN";
}

void mp_diag_clear(mp_diag_t *diag)
{
	if (!diag)
		return;
	diag->code = 0;
	diag->offset = -1;
	diag->index = -1;
	diag->file[0] = '\0';
	diag->text[0] = '\0';
}

int mp_diag_set(mp_diag_t *diag, int code, int64_t offset, int64_t index,
		const char *fmt, ...)
{
	if (diag) {
		va_list ap;
		diag->code = code;
		diag->offset = offset;
		diag->index = index;
		va_start(ap, fmt);
		vsnprintf(diag->text, sizeof(diag->text), fmt, ap);
		va_end(ap);
	}
	return code;
}

void mp_diag_set_file(mp_diag_t *diag, const char *path)
{
	if (!diag || !path)
		return;
	snprintf(diag->file, sizeof(diag->file), "%s", path);
}
