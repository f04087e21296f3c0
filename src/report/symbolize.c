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

#ifdef MEMPROF_HAVE_LIBDW
/* A function symbol's runtime range. libdwfl's own address lookup scans
 * the whole symbol table each time (a python3 stack has ~10^4 symbols to
 * scan per frame); this sorted copy, made on a module's first lookup, makes
 * it a binary search. */
typedef struct symr {
	uint64_t lo, hi;
	const char *name; /* owned by libdwfl */
	int rank;         /* binding: global 2, weak 1, local 0 (see cmp_symr for aliases) */
} symr_t;

typedef struct symtab {
	symr_t *v;
	size_t n;
	int loaded;
} symtab_t;
#endif

struct mp_symbolizer {
	const mp_capture_t *cap;
#ifdef MEMPROF_HAVE_LIBDW
	Dwfl *dwfl;
	Dwfl_Module **mods; /* per capture module: its dwfl module, NULL when unusable */
	unsigned char *stale;
	symtab_t *tabs;     /* per capture module */
	size_t nmods;       /* the capture's modules when made: the arrays' length */
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
		s->tabs = calloc(n ? n : 1, sizeof(*s->tabs));
		if (!s->mods || !s->stale || !s->tabs) {
			mp_symbolizer_free(s);
			return NULL;
		}
		s->nmods = n;
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
	for (size_t i = 0; s->tabs && i < s->nmods; i++)
		free(s->tabs[i].v);
	free(s->tabs);
	free(s->mods);
	free(s->stale);
#endif
	free(s);
}

#ifdef MEMPROF_HAVE_LIBDW
static int cmp_symr(const void *a, const void *b)
{
	const symr_t *x = a, *y = b;

	size_t ux = strspn(x->name, "_"), uy = strspn(y->name, "_");

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	/* the preferred alias first: the public name (glibc's calloc is a weak
	 * alias of the global __libc_calloc), then global over weak over local,
	 * then the shorter, then by name (deterministic) */
	if (ux != uy)
		return ux < uy ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank;
	if (strlen(x->name) != strlen(y->name))
		return strlen(x->name) < strlen(y->name) ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The module's function symbols, sorted, aliases folded, sizes of 0 made
 * to reach the next symbol. Out of memory: an empty table. */
static void load_symtab(Dwfl_Module *mod, symtab_t *t)
{
	int n = dwfl_module_getsymtab(mod), i;
	size_t k = 0, j;

	t->loaded = 1;
	if (n <= 1 || !(t->v = calloc((size_t)n, sizeof(*t->v))))
		return;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);

		if (!name || !*name || sym.st_shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		t->v[k].lo = addr;
		t->v[k].hi = sym.st_size ? addr + sym.st_size : UINT64_MAX;
		t->v[k].name = name;
		t->v[k].rank = bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0;
		k++;
	}
	qsort(t->v, k, sizeof(*t->v), cmp_symr);
	/* fold aliases (same start: the first, preferred, stays) */
	for (i = 0, j = 0; (size_t)i < k; i++)
		if (!j || t->v[i].lo != t->v[j - 1].lo)
			t->v[j++] = t->v[i];
	for (i = 0; (size_t)i + 1 < j; i++)
		if (t->v[i].hi > t->v[i + 1].lo && t->v[i].hi == UINT64_MAX)
			t->v[i].hi = t->v[i + 1].lo;
	t->n = j;
}

static const char *lookup(symtab_t *t, uint64_t a)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) { /* the last symbol starting at or before a */
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || a >= t->v[lo - 1].hi)
		return NULL;
	return t->v[lo - 1].name;
}
#endif

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
		if (i >= s->nmods) /* described after this symbolizer was made */
			return;
		if (s->mods[i] && !s->stale[i]) {
			if (!s->tabs[i].loaded)
				load_symtab(s->mods[i], &s->tabs[i]);
			out->function = lookup(&s->tabs[i], pc > 0 ? pc - 1 : pc);
		}
		out->stale = s->stale[i];
	}
#endif
}
