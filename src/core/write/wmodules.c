/* wmodules.c - the module map: which objects are loaded where, so that the
 * return addresses of stacks can be symbolized offline, at report time, on
 * the machine that recorded them.
 *
 * Each object is described once (a MODULE section: path, load bias, GNU
 * build id, PT_LOAD segments), read from the loader's own list with
 * dl_iterate_phdr: no file is opened, nothing is allocated. The map is
 * read at start and again when a new stack has a frame outside every
 * described object and the loader has loaded something since (its
 * dlpi_adds counter), i.e. after a dlopen -- on the first sight of a
 * stack, never per event.
 *
 * Locks: dl_iterate_phdr holds the loader's dl_load_write_lock while it
 * calls us; we take defs_mu inside. That order is safe because nothing in
 * the writer waits for the loader while holding defs_mu (under it we only
 * copy bytes and map pages), and glibc never calls malloc while it holds
 * dl_load_write_lock (a recursive lock, so a thread that is inside the
 * loader when it allocates may take it again). modules_busy makes
 * concurrent refreshes collapse into one: a thread that finds another one
 * refreshing skips its own (the map is complete once that one finishes).
 */
#include <memprof/format.h>
#include <memprof/format/varint.h>

#include "writer_internal.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

int mp__modules_cover_locked(const mp_writer_t *w, const uint64_t *pcs, uint32_t n)
{
	uint32_t i, m;

	for (i = 0; i < n; i++) {
		if (pcs[i] & MP_STACK_FRAME_TAG)
			continue; /* an interpreter frame (wframe.c), not code */
		for (m = 0; m < w->module_count; m++)
			if (pcs[i] >= w->modules[m].lo && pcs[i] < w->modules[m].hi)
				break;
		if (m == w->module_count)
			return 0;
	}
	return 1;
}

static uint64_t name_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (uint8_t)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* The GNU build id from the object's PT_NOTE segments (in memory). */
static size_t build_id(const struct dl_phdr_info *info, const uint8_t **out)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;
		size_t align = ph->p_align == 8 ? 8 : 4;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(uintptr_t)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *nh = (const void *)p;
			size_t name = (nh->n_namesz + align - 1) & ~(align - 1);
			size_t desc = (nh->n_descsz + align - 1) & ~(align - 1);
			const uint8_t *d = p + sizeof(*nh) + name;
			if (name > (size_t)(end - p) || desc > (size_t)(end - d))
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(p + sizeof(*nh), "GNU", 4) &&
			    nh->n_descsz <= MP_MODULE_MAX_BUILD_ID) {
				*out = d;
				return nh->n_descsz;
			}
			p = d + desc;
		}
	}
	return 0;
}

typedef struct {
	mp_writer_t *w;
	int added;
	int first;
	int rc;
} refresh_t;

static int on_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	refresh_t *r = arg;
	mp_writer_t *w = r->w;
	char *exe = w->modules_exe; /* only the refresh that holds modules_busy is here */
	const char *path = info->dlpi_name;
	const uint8_t *bid = NULL;
	size_t plen, blen, need;
	uint64_t lo = UINT64_MAX, hi = 0, h;
	uint32_t m, nseg = 0;
	uint8_t *p;
	int i;

	if (r->first) {
		r->first = 0;
		/* Nothing loaded since the last refresh: stop here. */
		if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds)) {
			uint64_t adds = info->dlpi_adds;
			if (w->module_count && adds == atomic_load_explicit(&w->modules_adds, memory_order_relaxed))
				return 1;
			atomic_store_explicit(&w->modules_adds, adds, memory_order_relaxed);
		}
		if (!path || !*path) {
			/* The main program: the loader has no name for it. */
			ssize_t k = readlink("/proc/self/exe", exe, sizeof(w->modules_exe) - 1);
			exe[k > 0 ? k : 0] = '\0';
			path = exe;
		}
	}
	if (!path)
		path = "";
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		nseg++;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (!nseg || nseg > MP_MODULE_MAX_SEGMENTS)
		return 0;
	plen = strnlen(path, 4095);
	h = name_hash(path, plen);
	blen = build_id(info, &bid);

	pthread_mutex_lock(&w->defs_mu);
	if (!w->modules && !(w->modules = mp_arena_alloc(&w->arena, MP_WMODULES_MAX * sizeof(mp_wmodule_t)))) {
		r->rc = -ENOMEM;
		goto out;
	}
	for (m = 0; m < w->module_count; m++)
		if (w->modules[m].lo == lo && w->modules[m].hi == hi && w->modules[m].bias == info->dlpi_addr &&
		    w->modules[m].name_hash == h)
			goto out; /* described already */
	if (w->module_count == MP_WMODULES_MAX)
		goto out;
	/* MODULE: path, bias, build id, nseg x (vaddr, memsz, flags) */
	need = 1 + 3 * MP_VARINT_MAX + plen + blen + (1 + 3 * (size_t)nseg) * MP_VARINT_MAX;
	if (mp_mbuf_reserve(&w->defs, need)) {
		r->rc = -ENOMEM;
		goto out;
	}
	p = w->defs.data + w->defs.len;
	*p++ = MP_SEC_MODULE;
	p = mp_varint_put(p, plen);
	memcpy(p, path, plen);
	p += plen;
	p = mp_varint_put(p, info->dlpi_addr);
	p = mp_varint_put(p, blen);
	if (blen)
		memcpy(p, bid, blen);
	p += blen;
	p = mp_varint_put(p, nseg);
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		p = mp_varint_put(p, ph->p_vaddr);
		p = mp_varint_put(p, ph->p_memsz);
		p = mp_varint_put(p, ph->p_flags);
	}
	w->defs.len = (size_t)(p - w->defs.data);
	w->modules[w->module_count].lo = lo;
	w->modules[w->module_count].hi = hi;
	w->modules[w->module_count].bias = info->dlpi_addr;
	w->modules[w->module_count].name_hash = h;
	w->module_count++;
	r->added++;
out:
	pthread_mutex_unlock(&w->defs_mu);
	return r->rc ? 1 : 0;
}

int mp_writer_modules(mp_writer_t *w)
{
	refresh_t r = {w, 0, 1, 0};
	int expect = 0;

	if (!w)
		return -EINVAL;
	if (!atomic_compare_exchange_strong(&w->modules_busy, &expect, 1))
		return 0;
	dl_iterate_phdr(on_object, &r);
	atomic_store_explicit(&w->modules_busy, 0, memory_order_release);
	return r.rc ? r.rc : r.added;
}
