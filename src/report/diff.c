/* diff.c - matching two inputs' memory ids by name and what was live at
 * their peaks row by row (memprof/diff.h). */
#include "diff_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *mp_diff_kind_name(mp_diff_kind_t k)
{
	static const char *const names[] = {"same", "grown", "shrunk", "new", "gone"};

	return (unsigned)k < 5 ? names[k] : "same";
}

/* One side's row before matching. */
typedef struct entry {
	const char *k[6]; /* op, region, dtype, shape, metadata ("" none), function */
	int side;         /* 0: A, 1: B */
	uint64_t bytes, count;
} entry_t;

static int key_cmp(const entry_t *x, const entry_t *y)
{
	for (int i = 0; i < 6; i++) {
		int c = strcmp(x->k[i], y->k[i]);
		if (c)
			return c;
	}
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const entry_t *x = a, *y = b;
	int c = key_cmp(x, y);

	return c ? c : x->side - y->side;
}

static uint64_t mag(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

static int row_cmp(const void *a, const void *b)
{
	const mp_diff_row_t *x = a, *y = b;
	uint64_t mx = mag(x->change_bytes), my = mag(y->change_bytes);
	const char *kx[2] = {x->function ? x->function : x->op, x->shape ? x->shape : ""};
	const char *ky[2] = {y->function ? y->function : y->op, y->shape ? y->shape : ""};
	int c;

	if (mx != my)
		return mx > my ? -1 : 1;
	if ((c = strcmp(kx[0], ky[0])))
		return c;
	return strcmp(kx[1], ky[1]);
}

/* The rows of side `side` of memory `id` into v (grown as needed). */
static int collect(entry_t **v, size_t *n, size_t *cap, const mp_report_input_t *in, const mp_solver_device_t *d,
		   mp_functions_t *f, int side, int *has)
{
	size_t count = f ? mp_functions_count(f) : d->has_breakdown ? d->breakdown_count : 0;

	if (f || d->has_breakdown)
		*has = 1;
	for (size_t i = 0; i < count; i++) {
		entry_t e;
		memset(&e, 0, sizeof(e));
		for (int k = 0; k < 6; k++)
			e.k[k] = "";
		e.side = side;
		if (f) {
			const mp_func_row_t *r = mp_functions_row(f, i);
			if (r->memory != d->id || !r->peak_count)
				continue;
			e.k[5] = r->function ? r->function : "";
			e.bytes = r->peak_bytes;
			e.count = r->peak_count;
		} else {
			const mp_solver_row_t *r = &d->breakdown[i];
			e.k[0] = rp_row_op(in, r);
			e.k[1] = mp_region_type_name(r->region);
			e.k[2] = rp_str(in, r->dtype);
			e.k[3] = rp_str(in, r->shape);
			e.k[4] = rp_str(in, r->metadata);
			e.bytes = r->total_bytes;
			e.count = r->occurrences;
		}
		if (MP_VEC_RESERVE(*v, *cap, *n + 1) < 0)
			return MP_ENOMEM;
		(*v)[(*n)++] = e;
	}
	return 0;
}

/* Rows of one memory: both sides' groups merged by key (a key may hold
 * several breakdown rows of different sizes: summed). */
static int match_rows(mp_diff_memory_t *m, const mp_report_input_t *a, const mp_report_input_t *b, mp_functions_t *fa,
		      mp_functions_t *fb, int by_function)
{
	entry_t *v = NULL;
	size_t n = 0, cap = 0, out = 0;
	int rc;

	if ((rc = collect(&v, &n, &cap, a, m->a.dev, by_function ? fa : NULL, 0, &m->has_rows)) < 0 ||
	    (rc = collect(&v, &n, &cap, b, m->b.dev, by_function ? fb : NULL, 1, &m->has_rows)) < 0) {
		free(v);
		return rc;
	}
	if (n)
		qsort(v, n, sizeof(*v), entry_cmp);
	m->rows = calloc(n ? n : 1, sizeof(*m->rows));
	if (!m->rows) {
		free(v);
		return MP_ENOMEM;
	}
	for (size_t i = 0; i < n;) {
		mp_diff_row_t r;
		size_t j = i;
		memset(&r, 0, sizeof(r));
		for (; j < n && !key_cmp(&v[i], &v[j]); j++) {
			if (v[j].side) {
				r.b_bytes += v[j].bytes;
				r.b_count += v[j].count;
			} else {
				r.a_bytes += v[j].bytes;
				r.a_count += v[j].count;
			}
		}
		if (by_function) {
			r.function = v[i].k[5];
		} else {
			r.op = v[i].k[0];
			r.region = v[i].k[1];
			r.dtype = v[i].k[2];
			r.shape = v[i].k[3];
			r.metadata = v[i].k[4][0] ? v[i].k[4] : NULL;
		}
		r.change_bytes = (int64_t)(r.b_bytes - r.a_bytes);
		r.kind = !r.a_count ? MP_DIFF_NEW : !r.b_count ? MP_DIFF_GONE
			 : r.b_bytes > r.a_bytes ? MP_DIFF_GROWN : r.b_bytes < r.a_bytes ? MP_DIFF_SHRUNK : MP_DIFF_SAME;
		if (r.kind == MP_DIFF_SAME) {
			m->unchanged_rows++;
			m->unchanged_bytes += r.a_bytes;
		} else {
			m->grown += r.kind == MP_DIFF_GROWN;
			m->shrunk += r.kind == MP_DIFF_SHRUNK;
			m->added += r.kind == MP_DIFF_NEW;
			m->gone += r.kind == MP_DIFF_GONE;
			m->rows[out++] = r;
		}
		i = j;
	}
	free(v);
	m->row_count = out;
	if (out)
		qsort(m->rows, out, sizeof(*m->rows), row_cmp);
	return 0;
}

static void side_init(mp_diff_side_t *s, const mp_report_input_t *in, const mp_solver_device_t *d)
{
	s->dev = d;
	s->name = rp_memory_name(in, d->id);
	s->phase = d->has_peak && d->peak_phase ? rp_str(in, d->peak_phase) : NULL;
	if (d->has_peak)
		rp_time(in, s->time, sizeof(s->time), d->peak.time_ns);
	else
		s->time[0] = '\0';
}

/* The device of `in` named name, or NULL. */
static const mp_solver_device_t *by_name(const mp_report_input_t *in, const char *name)
{
	const mp_solver_t *s = in->solver;

	for (size_t i = 0; i < mp_solver_device_count(s); i++) {
		const mp_solver_device_t *d = mp_solver_device(s, i);
		if (!strcmp(rp_memory_name(in, d->id), name))
			return d;
	}
	return NULL;
}

/* The name B's memory that A's `name` pairs with: a --map entry, else the
 * same name. */
static const char *mapped(const mp_diff_options_t *o, const char *name)
{
	for (size_t i = 0; o && i < o->map_count; i++) {
		const char *eq = strchr(o->map[i], '=');
		if (eq && strlen(name) == (size_t)(eq - o->map[i]) && !strncmp(o->map[i], name, (size_t)(eq - o->map[i])))
			return eq + 1;
	}
	return name;
}

static int check_map(const mp_report_input_t *a, const mp_report_input_t *b, const mp_diff_options_t *o, char *why,
		     size_t whysize)
{
	for (size_t i = 0; o && i < o->map_count; i++) {
		const char *s = o->map[i], *eq = strchr(s, '=');
		char name[256];
		if (!eq || eq == s || !eq[1] || (size_t)(eq - s) >= sizeof(name)) {
			snprintf(why, whysize, "invalid --map '%s' (expected A_NAME=B_NAME)", s);
			return MP_EUSAGE;
		}
		memcpy(name, s, (size_t)(eq - s));
		name[eq - s] = '\0';
		if (!by_name(a, name)) {
			snprintf(why, whysize, "--map '%s': A ('%s') has no memory id named '%s'", s, a->path, name);
			return MP_EUSAGE;
		}
		if (!by_name(b, eq + 1)) {
			snprintf(why, whysize, "--map '%s': B ('%s') has no memory id named '%s'", s, b->path, eq + 1);
			return MP_EUSAGE;
		}
	}
	return 0;
}

static int push_name(const char ***v, size_t *n, const char *name)
{
	const char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return MP_ENOMEM;
	nv[(*n)++] = name;
	*v = nv;
	return 0;
}

/* The devices an input reports: all, or the --device one. */
static int shown(const mp_report_input_t *in, const mp_solver_device_t *d)
{
	return !in->device_set || d->id == in->device;
}

int mp_diff_compute(mp_diff_t **out, const mp_report_input_t *a, const mp_report_input_t *b, mp_functions_t *fa,
		    mp_functions_t *fb, const char *kind, const mp_diff_options_t *o, char *why, size_t whysize)
{
	size_t na = mp_solver_device_count(a->solver), nb = mp_solver_device_count(b->solver);
	mp_diff_t *d;
	char *used;
	int rc;

	*out = NULL;
	why[0] = '\0';
	if ((rc = check_map(a, b, o, why, whysize)) < 0)
		return rc;
	d = calloc(1, sizeof(*d));
	used = calloc(nb ? nb : 1, 1);
	if (!d || !used || !(d->mem = calloc(na ? na : 1, sizeof(*d->mem)))) {
		free(used);
		mp_diff_free(d);
		return MP_ENOMEM;
	}
	d->a = *a;
	d->b = *b;
	d->kind = kind;
	d->by_function = o && o->by_function;
	for (size_t i = 0; i < na; i++) {
		const mp_solver_device_t *da = mp_solver_device(a->solver, i), *db = NULL;
		const char *name = rp_memory_name(a, da->id), *want = mapped(o, name);
		if (!shown(a, da))
			continue;
		for (size_t k = 0; k < nb && !db; k++) {
			const mp_solver_device_t *x = mp_solver_device(b->solver, k);
			if (!used[k] && shown(b, x) && !strcmp(rp_memory_name(b, x->id), want)) {
				db = x;
				used[k] = 1;
			}
		}
		if (!db) {
			if (push_name(&d->only_a, &d->n_only_a, name) < 0)
				goto nomem;
			continue;
		}
		mp_diff_memory_t *m = &d->mem[d->n++];
		side_init(&m->a, a, da);
		side_init(&m->b, b, db);
		m->change_bytes = (int64_t)(db->peak_bytes - da->peak_bytes);
		m->change_percent = da->peak_bytes ? 100.0 * (double)m->change_bytes / (double)da->peak_bytes : NAN;
		if (m->change_bytes == 0)
			m->change_percent = 0;
		if (match_rows(m, a, b, fa, fb, d->by_function) < 0)
			goto nomem;
	}
	for (size_t k = 0; k < nb; k++) {
		const mp_solver_device_t *x = mp_solver_device(b->solver, k);
		if (!used[k] && shown(b, x) && push_name(&d->only_b, &d->n_only_b, rp_memory_name(b, x->id)) < 0)
			goto nomem;
	}
	free(used);
	*out = d;
	return 0;
nomem:
	free(used);
	mp_diff_free(d);
	return MP_ENOMEM;
}

void mp_diff_free(mp_diff_t *d)
{
	if (!d)
		return;
	for (size_t i = 0; d->mem && i < d->n; i++)
		free(d->mem[i].rows);
	free(d->mem);
	free(d->only_a);
	free(d->only_b);
	free(d);
}

size_t mp_diff_count(const mp_diff_t *d)
{
	return d->n;
}

const mp_diff_memory_t *mp_diff_memory(const mp_diff_t *d, size_t i)
{
	return i < d->n ? &d->mem[i] : NULL;
}

size_t mp_diff_only_a(const mp_diff_t *d, const char *const **names)
{
	*names = d->only_a;
	return d->n_only_a;
}

size_t mp_diff_only_b(const mp_diff_t *d, const char *const **names)
{
	*names = d->only_b;
	return d->n_only_b;
}
