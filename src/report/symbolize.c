/* symbolize.c - see symbolize.h. libdwfl is given each object of the
 * capture's module map at the address it had in the traced process
 * (dwfl_report_elf with the recorded load bias), so a recorded return
 * address is looked up as it is, with no translation. */
#include "symbolize.h"

#include <stdlib.h>
#include <string.h>

#ifdef MEMPROF_HAVE_LIBDW
#include <elfutils/libdwfl.h>
#endif

struct mp_symbolizer {
	const mp_capture_t *cap;
#ifdef MEMPROF_HAVE_LIBDW
	Dwfl *dwfl;
	Dwfl_Module **mods; /* per capture module: its dwfl module, NULL when unusable */
	unsigned char *stale;
#endif
};

const char *mp_symbolizer_backend(void)
{
#ifdef MEMPROF_HAVE_LIBDW
	return "libdw";
#else
	return "none";
#endif
}

#ifdef MEMPROF_HAVE_LIBDW
static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* Whether a later module of the map covers part of module i's range (an
 * object loaded where an unloaded one was): only the latest is given to
 * libdwfl, which does not allow overlaps. */
static int superseded(const mp_capture_t *cap, size_t i)
{
	const mp_capture_module_t *m = mp_capture_module(cap, i);
	size_t j;

	for (j = i + 1; j < mp_capture_module_count(cap); j++) {
		const mp_capture_module_t *o = mp_capture_module(cap, j);
		if (o->start < m->end && m->start < o->end)
			return 1;
	}
	return 0;
}
#endif

mp_symbolizer_t *mp_symbolizer_new(const mp_capture_t *cap)
{
	mp_symbolizer_t *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cap = cap;
#ifdef MEMPROF_HAVE_LIBDW
	{
		size_t n = mp_capture_module_count(cap), i;

		s->mods = calloc(n ? n : 1, sizeof(*s->mods));
		s->stale = calloc(n ? n : 1, 1);
		if (!s->mods || !s->stale) {
			mp_symbolizer_free(s);
			return NULL;
		}
		s->dwfl = dwfl_begin(&callbacks);
		if (!s->dwfl)
			return s; /* every frame stays object+offset */
		dwfl_report_begin(s->dwfl);
		for (i = 0; i < n; i++) {
			const mp_capture_module_t *m = mp_capture_module(cap, i);
			const unsigned char *bits;
			GElf_Addr vaddr;
			int len;

			if (m->path[0] != '/' || superseded(cap, i))
				continue; /* the vDSO has no file */
			s->mods[i] = dwfl_report_elf(s->dwfl, m->path, m->path, -1, m->bias, false);
			if (!s->mods[i])
				continue;
			len = dwfl_module_build_id(s->mods[i], &bits, &vaddr);
			if (m->build_id_len &&
			    (len != (int)m->build_id_len || memcmp(bits, m->build_id, m->build_id_len) != 0))
				s->stale[i] = 1; /* rebuilt or upgraded since the capture */
		}
		dwfl_report_end(s->dwfl, NULL, NULL);
	}
#endif
	return s;
}

void mp_symbolizer_free(mp_symbolizer_t *s)
{
	if (!s)
		return;
#ifdef MEMPROF_HAVE_LIBDW
	if (s->dwfl)
		dwfl_end(s->dwfl);
	free(s->mods);
	free(s->stale);
#endif
	free(s);
}

void mp_symbolize(mp_symbolizer_t *s, uint64_t pc, mp_symbol_t *out)
{
	const mp_capture_module_t *m = mp_capture_module_at(s->cap, pc);

	memset(out, 0, sizeof(*out));
	if (!m)
		return;
	out->object = m->path;
	out->offset = pc - m->bias;
#ifdef MEMPROF_HAVE_LIBDW
	{
		size_t i = (size_t)(m - mp_capture_module(s->cap, 0));
		if (s->mods[i] && !s->stale[i])
			out->function = dwfl_module_addrname(s->mods[i], pc > 0 ? pc - 1 : pc);
		out->stale = s->stale[i];
	}
#endif
}
