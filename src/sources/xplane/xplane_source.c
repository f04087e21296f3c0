/* xplane_source.c - xplane.pb files as an mp_source_t (see memprof/xplane.h). */
#include "xplane_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOT_BUF (64u << 10)
#define SLOT_MAX (16u << 20)

static const mp_source_ops_t xp_ops;

/* Index order: time, then stored order (file, offset; not the line bits). */
#define ENT_ORDER(e) ((e)->loc & ~(0xffffULL << XP_OFF_BITS))

static inline int ent_less(const xp_entry *x, const xp_entry *y)
{
	return x->t < y->t || (x->t == y->t && ENT_ORDER(x) < ENT_ORDER(y));
}

static void ent_swap(xp_entry *x, xp_entry *y)
{
	xp_entry t = *x;

	*x = *y;
	*y = t;
}

static void sift_down(xp_entry *a, size_t i, size_t n)
{
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			return;
		if (c + 1 < n && ent_less(&a[c], &a[c + 1]))
			c++;
		if (!ent_less(&a[i], &a[c]))
			return;
		ent_swap(&a[i], &a[c]);
		i = c;
	}
}

/* In-place introsort: glibc's qsort would allocate a copy of the index
 * (160 MB for 10 million events). Keys are unique (offsets differ). */
static void sort_entries(xp_entry *a, size_t n, int depth)
{
	while (n > 16) {
		xp_entry *lo = a, *hi = a + n - 1, *mid = a + n / 2, pivot;
		size_t i, j;

		if (depth-- == 0) {
			for (i = n / 2; i-- > 0;)
				sift_down(a, i, n);
			for (i = n - 1; i > 0; i--) {
				ent_swap(&a[0], &a[i]);
				sift_down(a, 0, i);
			}
			return;
		}
		/* median of three into a[0] */
		if (ent_less(mid, lo))
			ent_swap(mid, lo);
		if (ent_less(hi, lo))
			ent_swap(hi, lo);
		if (ent_less(hi, mid))
			ent_swap(hi, mid);
		ent_swap(lo, mid);
		pivot = a[0];
		i = 0;
		j = n;
		for (;;) {
			do
				i++;
			while (i < n && ent_less(&a[i], &pivot));
			do
				j--;
			while (ent_less(&pivot, &a[j]));
			if (i >= j)
				break;
			ent_swap(&a[i], &a[j]);
		}
		ent_swap(&a[0], &a[j]);
		/* recurse into the smaller side, loop on the larger */
		if (j < n - j - 1) {
			sort_entries(a, j, depth);
			a += j + 1;
			n -= j + 1;
		} else {
			sort_entries(a + j + 1, n - j - 1, depth);
			n = j;
		}
	}
	for (size_t i = 1; i < n; i++) {
		xp_entry x = a[i];
		size_t k = i;

		while (k > 0 && ent_less(&x, &a[k - 1])) {
			a[k] = a[k - 1];
			k--;
		}
		a[k] = x;
	}
}

static int sorted_already(const xp_entry *a, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (ent_less(&a[i], &a[i - 1]))
			return 0;
	return 1;
}

static int mem_kind(const char *name)
{
	if (!strncmp(name, "GPU_", 4) || !strncmp(name, "gpu_", 4) || !strncmp(name, "xla_gpu", 7))
		return strstr(name, "host") ? MP_MEMORY_PINNED_HOST : MP_MEMORY_DEVICE;
	if (strstr(name, "cpu") || strstr(name, "CPU"))
		return MP_MEMORY_HOST;
	if (!strncmp(name, "TPU", 3) || !strncmp(name, "tpu", 3))
		return MP_MEMORY_DEVICE;
	return MP_MEMORY_OTHER;
}

static char *host_from_path(const char *path)
{
	static const char *const suffixes[] = {".xplane.pb.gz", ".xplane.pb", ".xpb", ".pb.gz", ".pb"};
	const char *base = strrchr(path, '/');
	size_t n, i, k;
	char *h;

	base = base ? base + 1 : path;
	n = strlen(base);
	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		k = strlen(suffixes[i]);
		if (n > k && !strcmp(base + n - k, suffixes[i])) {
			n -= k;
			break;
		}
	}
	h = malloc(n + 1);
	if (h) {
		memcpy(h, base, n);
		h[n] = '\0';
	}
	return h;
}

static xp_source *g_sort_src; /* for the name sort below (single-threaded open) */

static int mem_cmp(const void *a, const void *b)
{
	const xp_mem *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	(void)g_sort_src;
	if (c)
		return c;
	return x->host < y->host ? -1 : x->host > y->host;
}

/* Name, kind and capacity of every memory; sort them by name (xprof lists
 * memory ids sorted as strings) and rebuild the (file, key) -> id map. */
static int finish_memories(xp_source *s)
{
	uint32_t i;

	for (i = 0; i < s->nmems; i++) {
		xp_mem *m = &s->mems[i];
		const char *key = mp_strtab_get(&s->strs, m->name_id);
		const char *host = s->files[m->host].host;
		size_t n;

		if (!*key)
			key = "unnamed_allocator";
		n = strlen(key) + strlen(host) + 2;
		m->name = malloc(n);
		if (!m->name)
			return MP_ENOMEM;
		if (s->prefix)
			snprintf(m->name, n, "%s/%s", host, key);
		else
			snprintf(m->name, n, "%s", key);
		m->info.kind = mem_kind(key);
		m->info.capacity_bytes = m->capacity;
		m->info.in_use_name = NULL; /* memprof's own words */
	}
	g_sort_src = s;
	if (s->nmems > 1)
		qsort(s->mems, s->nmems, sizeof(*s->mems), mem_cmp);
	mp_i64map_free(&s->mem_of);
	for (i = 0; i < s->nmems; i++) {
		s->mems[i].info.name = s->mems[i].name;
		if (mp_i64map_put(&s->mem_of, ((int64_t)s->mems[i].host << 32) | s->mems[i].name_id, i) < 0)
			return MP_ENOMEM;
	}
	s->last_step = malloc((s->nmems ? s->nmems : 1) * sizeof(*s->last_step));
	if (!s->last_step)
		return MP_ENOMEM;
	for (i = 0; i < s->nmems; i++)
		s->last_step[i] = -1;
	return 0;
}

static void xp_close(mp_source_t *src)
{
	xp_source *s = (xp_source *)src;
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nfiles; i++)
		xp_file_close(&s->files[i]);
	free(s->files);
	for (i = 0; i < XP_NSLOTS; i++)
		mp_pw_window_free(&s->slots[i]);
	for (i = 0; i < s->nmems; i++)
		free(s->mems[i].name);
	free(s->mems);
	mp_i64map_free(&s->mem_of);
	mp_strtab_free(&s->strs);
	free(s->idx);
	free(s->last_step);
	free(s->path_label);
	free(s);
}

int mp_xplane_open_source(mp_source_t **out, const char *const *paths, size_t npaths,
			  const mp_xplane_options_t *opts, mp_diag_t *diag)
{
	xp_source *s;
	size_t i, len = 0;
	int64_t base = 0;
	int have_base = 0, rc = 0;

	*out = NULL;
	if (!paths || npaths == 0 || npaths > 255)
		return mp_diag_set(diag, MP_EUSAGE, -1, -1, "between 1 and 255 xplane files can be read together");
	s = calloc(1, sizeof(*s));
	if (!s)
		return MP_ENOMEM;
	s->base.ops = &xp_ops;
	s->files = calloc(npaths, sizeof(*s->files));
	if (!s->files) {
		free(s);
		return MP_ENOMEM;
	}
	mp_strtab_init(&s->strs);
	s->null_id = mp_strtab_intern(&s->strs, "(null)", 6);
	if (s->null_id == UINT32_MAX) {
		free(s->files);
		free(s);
		return MP_ENOMEM;
	}
	for (i = 0; i < npaths; i++)
		s->files[i].fd = -1;
	s->nfiles = npaths;
	s->prefix = opts && opts->prefix_hosts >= 0 ? opts->prefix_hosts : npaths > 1;
	s->xprof_clock = opts ? opts->xprof_clock : 0;
	for (i = 0; i < npaths; i++)
		len += strlen(paths[i]) + 2;
	s->path_label = malloc(len + 1);
	if (!s->path_label) {
		rc = MP_ENOMEM;
		goto fail;
	}
	s->path_label[0] = '\0';
	for (i = 0; i < npaths; i++) {
		if (i)
			strcat(s->path_label, ", ");
		strcat(s->path_label, paths[i]);
	}
	s->base.path = s->path_label;
	for (i = 0; i < npaths && rc == 0; i++) {
		xp_file *f = &s->files[i];

		mp_diag_clear(diag);
		mp_diag_set_file(diag, paths[i]);
		f->path = strdup(paths[i]);
		f->host = opts && opts->hosts && opts->hosts[i] ? strdup(opts->hosts[i]) : host_from_path(paths[i]);
		if (!f->path || !f->host) {
			rc = MP_ENOMEM;
			break;
		}
		rc = xp_file_open(f, paths[i], diag);
		if (rc == 0)
			rc = xp_scan_metadata(f, diag);
		if (rc == 0)
			rc = xp_index_file(s, (uint32_t)i, diag);
		if (rc == 0 && f->has_base && (!have_base || f->base_ns < base)) {
			base = f->base_ns;
			have_base = 1;
		}
	}
	if (rc < 0)
		goto fail;
	/* times relative to the earliest line start (the profile start) */
	for (i = 0; i < s->nidx; i++) {
		int64_t t;

		if (__builtin_sub_overflow(s->idx[i].t, base, &t))
			t = s->idx[i].t > 0 ? INT64_MAX : INT64_MIN;
		s->idx[i].t = t;
	}
	if (s->nidx > 1 && !sorted_already(s->idx, s->nidx)) {
		int depth = 0;

		for (i = s->nidx; i; i >>= 1)
			depth += 2;
		sort_entries(s->idx, s->nidx, depth);
	}
	/* give back the unused tail of the index */
	if (s->capidx > s->nidx && s->nidx > 0) {
		xp_entry *shrunk = realloc(s->idx, s->nidx * sizeof(*s->idx));

		if (shrunk) {
			s->idx = shrunk;
			s->capidx = s->nidx;
		}
	}
	rc = finish_memories(s);
	if (rc < 0)
		goto fail;
	mp_diag_clear(diag);
	*out = &s->base;
	return 0;
fail:
	if (diag && diag->code == 0)
		mp_diag_set(diag, rc, -1, -1, "%s", mp_strerror(rc));
	xp_close(&s->base);
	return rc;
}

static mp_pw_window_t *slot_for(xp_source *s, uint32_t fi, uint32_t line)
{
	uint32_t k = (fi * 31u + line) % XP_NSLOTS;
	mp_pw_window_t *r = &s->slots[k];

	if (!r->buf) {
		if (mp_pw_window_init(r, s->files[fi].fd, s->files[fi].size, SLOT_BUF, SLOT_MAX) < 0)
			return NULL;
		s->slot_key[k] = (int)fi;
	} else if (s->slot_key[k] != (int)fi) {
		mp_pw_window_retarget(r, s->files[fi].fd, s->files[fi].size);
		s->slot_key[k] = (int)fi;
	}
	return r;
}

static int64_t str_or_null(xp_source *s, xp_file *f, mp_pw_window_t *rd, const xp_stat *st)
{
	int64_t id = xp_stat_string(s, f, rd, st);

	/* JAX passes a null const char* for op and region: "(null)" */
	if (id > 0 && (uint32_t)id == s->null_id)
		return 0;
	return id;
}

static int fill_event(xp_source *s, const xp_entry *e, mp_event_t *ev, mp_diag_t *diag)
{
	uint32_t fi = (uint32_t)(e->loc >> 56), line = (uint32_t)((e->loc >> XP_OFF_BITS) & 0xffff);
	uint64_t off = e->loc & XP_OFF_MASK;
	xp_file *f = &s->files[fi];
	mp_pw_window_t *rd = slot_for(s, fi, line);
	mp_pw_fcursor_t c;
	mp_pw_field_t fl;
	xp_mev mev;
	int64_t key, op, shape, region, dtype_id = 0, step;
	uint32_t mem;
	int rc;

	if (!rd)
		return MP_ENOMEM;
	rd->diag = diag; /* the caller names the file on error */
	mp_pw_fcursor_init(&c, rd, off, f->plane_end, "XLine");
	rc = mp_pw_fnext(&c, &fl);
	if (rc <= 0 || fl.wt != MP_PW_LEN)
		return rc < 0 ? rc : mp_diag_set(diag, MP_ECORRUPT, (int64_t)off, -1, "the file changed while being read");
	rc = xp_decode_event(f, rd, fl.start, fl.start + fl.len, &mev);
	if (rc <= 0)
		return rc < 0 ? rc : mp_diag_set(diag, MP_ECORRUPT, (int64_t)off, -1, "the file changed while being read");
	key = xp_memkey(s, f, rd, &mev);
	if (key < 0)
		return (int)key;
	if (!mp_i64map_get(&s->mem_of, ((int64_t)fi << 32) | key, &mem))
		return mp_diag_set(diag, MP_ECORRUPT, (int64_t)off, -1, "the file changed while being read");
	op = str_or_null(s, f, rd, &mev.st[XS_TF_OP]);
	shape = str_or_null(s, f, rd, &mev.st[XS_SHAPE]);
	region = str_or_null(s, f, rd, &mev.st[XS_REGION_TYPE]);
	if (op < 0 || shape < 0 || region < 0)
		return (int)(op < 0 ? op : shape < 0 ? shape : region);
	if (mev.st[XS_DATA_TYPE].slot == XV_STR || mev.st[XS_DATA_TYPE].slot == XV_REF) {
		/* a dtype name (memprof exports names TF has no enum for) */
		dtype_id = xp_stat_string(s, f, rd, &mev.st[XS_DATA_TYPE]);
		if (dtype_id < 0)
			return (int)dtype_id;
	} else if (mev.st[XS_DATA_TYPE].slot != XV_NONE) {
		char buf[48];
		const char *dn = mp_tf_dtype_name(xp_stat_int(&mev.st[XS_DATA_TYPE]), buf, sizeof(buf));
		uint32_t id = mp_strtab_intern(&s->strs, dn, strlen(dn));

		if (id == UINT32_MAX)
			return MP_ENOMEM;
		dtype_id = id;
	}
	/* Steps: group_id when present; otherwise xprof's UpdateStepId rule,
	 * per allocator in time order: the last known step + 1 (0 at first). */
	step = mev.st[XS_GROUP_ID].slot != XV_NONE ? xp_stat_int(&mev.st[XS_GROUP_ID]) : -1;
	if (step >= 0)
		s->last_step[mem] = step;
	else
		step = s->last_step[mem] + 1;

	memset(ev, 0, sizeof(*ev));
	ev->time_ns = e->t < 0 ? 0 : (uint64_t)e->t;
	ev->kind = mev.kind == 1 ? MP_EV_ALLOC : MP_EV_FREE;
	ev->address = (uint64_t)xp_stat_int(&mev.st[XS_ADDR]);
	ev->requested_bytes = (uint64_t)xp_stat_int(&mev.st[XS_REQUESTED_BYTES]);
	ev->allocated_bytes = (uint64_t)xp_stat_int(&mev.st[XS_ALLOCATION_BYTES]);
	ev->step = step;
	ev->memory = mem;
	ev->thread = line;
	ev->op = (uint32_t)op;
	ev->shape = (uint32_t)shape;
	ev->dtype = (uint32_t)dtype_id;
	if (region > 0) {
		int r = mp_region_type_parse(mp_strtab_get(&s->strs, (uint32_t)region));

		ev->region = (uint8_t)(r < 0 ? MP_REGION_UNKNOWN : r);
	}
	ev->flags = MP_EVENT_F_STATS;
	ev->stats.stack_bytes = (uint64_t)xp_stat_int(&mev.st[XS_BYTES_RESERVED]);
	ev->stats.heap_bytes = (uint64_t)xp_stat_int(&mev.st[XS_BYTES_ALLOCATED]);
	ev->stats.free_bytes = (uint64_t)xp_stat_int(&mev.st[XS_BYTES_AVAILABLE]);
	ev->stats.peak_bytes = (uint64_t)xp_stat_int(&mev.st[XS_PEAK_BYTES_IN_USE]);
	ev->stats.fragmentation = xp_stat_double(&mev.st[XS_FRAGMENTATION]);
	s->last_order = ((uint64_t)fi << 56) | off;
	s->have_last = 1;
	return 1;
}

static int xp_next(mp_source_t *src, mp_event_t *ev, mp_diag_t *diag)
{
	xp_source *s = (xp_source *)src;
	int rc;

	if (s->err) {
		if (diag)
			*diag = s->err_diag;
		return s->err;
	}
	if (s->pos < s->nmems) {
		/* declare every memory first, at the time of the first event */
		memset(ev, 0, sizeof(*ev));
		ev->kind = MP_EV_MEMORY;
		ev->memory = (uint32_t)s->pos;
		ev->step = -1;
		ev->time_ns = s->nidx && s->idx[0].t > 0 ? (uint64_t)s->idx[0].t : 0;
		ev->index = s->emitted++;
		s->pos++;
		s->have_last = 0;
		return 1;
	}
	if (s->pos - s->nmems >= s->nidx)
		return 0;
	mp_diag_clear(&s->err_diag);
	rc = fill_event(s, &s->idx[s->pos - s->nmems], ev, &s->err_diag);
	if (rc < 0) {
		mp_diag_set_file(&s->err_diag, s->files[s->idx[s->pos - s->nmems].loc >> 56].path);
		if (s->err_diag.code == 0)
			mp_diag_set(&s->err_diag, rc, -1, -1, "%s", mp_strerror(rc));
		s->err = rc;
		if (diag)
			*diag = s->err_diag;
		return rc;
	}
	ev->index = s->emitted++;
	s->pos++;
	return 1;
}

static int xp_rewind(mp_source_t *src, mp_diag_t *diag)
{
	xp_source *s = (xp_source *)src;
	uint32_t i;

	(void)diag;
	s->pos = 0;
	s->emitted = 0;
	s->have_last = 0;
	s->err = 0;
	for (i = 0; i < s->nmems; i++)
		s->last_step[i] = -1;
	return 0;
}

static const char *xp_string(const mp_source_t *src, uint32_t id)
{
	return mp_strtab_get(&((const xp_source *)src)->strs, id);
}

static const mp_memory_info_t *xp_memory(const mp_source_t *src, uint32_t id)
{
	const xp_source *s = (const xp_source *)src;

	return id < s->nmems ? &s->mems[id].info : NULL;
}

static uint32_t xp_memory_count(const mp_source_t *src)
{
	return ((const xp_source *)src)->nmems;
}

static mp_end_status_t xp_end_status(const mp_source_t *src)
{
	(void)src;
	return MP_END_CLEAN;
}

static const mp_source_ops_t xp_ops = {
	xp_next, xp_rewind, xp_string, xp_memory, xp_memory_count, xp_end_status, xp_close, NULL, NULL, NULL, NULL, NULL,
	mp_xplane_last_order, NULL,
};

int mp_xplane_is_source(const mp_source_t *src)
{
	return src && src->ops == &xp_ops;
}

uint64_t mp_xplane_memory_event_count(const mp_source_t *src)
{
	return mp_xplane_is_source(src) ? ((const xp_source *)src)->nidx : 0;
}

int mp_xplane_last_order(const mp_source_t *src, uint64_t *key)
{
	const xp_source *s = (const xp_source *)src;

	if (!mp_xplane_is_source(src) || !s->have_last)
		return MP_EUSAGE;
	*key = s->last_order;
	return 0;
}
