/* event.c - names of event kinds, region types, memory kinds and frame kinds. */
#include <memprof/event.h>
#include <memprof/source.h>

#include <string.h>

const char *mp_event_kind_name(int kind)
{
	switch (kind) {
#define MP__EV_NAME(name, val, str) \
	case val:                   \
		return str;
		MP_EVENT_KIND_MAP(MP__EV_NAME)
#undef MP__EV_NAME
	default:
		return "?";
	}
}

const char *mp_region_type_name(int region)
{
	switch (region) {
#define MP__RT_NAME(name, val, str) \
	case val:                   \
		return str;
		MP_REGION_TYPE_MAP(MP__RT_NAME)
#undef MP__RT_NAME
	default:
		return "?";
	}
}

const char *mp_dtype_shown(const char *dtype)
{
	if (!dtype || !strcmp(dtype, "INVALID"))
		return "";
	return dtype;
}

const char *mp_memory_kind_name(int kind)
{
	switch (kind) {
#define MP__MK_NAME(name, val, str) \
	case val:                   \
		return str;
		MP_MEMORY_KIND_MAP(MP__MK_NAME)
#undef MP__MK_NAME
	default:
		return "?";
	}
}

const char *mp_frame_kind_name(int kind)
{
	switch (kind) {
#define MP__FK_NAME(name, val, str) \
	case val:                   \
		return str;
		MP_FRAME_KIND_MAP(MP__FK_NAME)
#undef MP__FK_NAME
	default:
		return "?";
	}
}

int mp_region_type_parse(const char *name)
{
#define MP__RT_PARSE(n, val, str) \
	if (strcmp(name, str) == 0) \
		return val;
	MP_REGION_TYPE_MAP(MP__RT_PARSE)
#undef MP__RT_PARSE
	return -1;
}
