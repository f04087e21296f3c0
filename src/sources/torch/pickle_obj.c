/* pickle_obj.c - the pickle reader's values: containers (reference
 * counted, because the memo and several parents may share one), the stack
 * with its MARKs, and the memo.
 *
 * Every container is also on a list of live objects, so that whatever a
 * hostile pickle builds -- a list that contains itself through the memo --
 * is freed when the read ends, while the counts free the ordinary ones as
 * soon as nothing refers to them (which is what keeps memory bounded: a
 * streamed trace entry is gone once the handler has seen it). */
#include "pickle_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pk_fail(pk_t *p, int code, const char *fmt, ...)
{
	char text[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return mp_diag_set(p->diag, code, (int64_t)p->op_off, -1, "pickle offset %llu: %s",
			   (unsigned long long)p->op_off, text);
}

void pk_note_offset(pk_t *p)
{
	size_t len;

	if (!p->diag || p->diag->offset >= 0)
		return;
	p->diag->offset = (int64_t)p->op_off;
	len = strlen(p->diag->text);
	snprintf(p->diag->text + len, sizeof(p->diag->text) - len, " (pickle offset %llu)",
		 (unsigned long long)p->op_off);
}

mp_pk_obj_t *pk_obj_new(pk_t *p, uint8_t kind)
{
	mp_pk_obj_t *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->kind = kind;
	o->memo = UINT32_MAX;
	o->next = p->live;
	if (p->live)
		p->live->prev = o;
	p->live = o;
	return o;
}

static void obj_unlink_free(pk_t *p, mp_pk_obj_t *o)
{
	if (o->prev)
		o->prev->next = o->next;
	else
		p->live = o->next;
	if (o->next)
		o->next->prev = o->prev;
	free(o->items);
	free(o);
}

void pk_ref(const mp_pk_value_t *v)
{
	if (pk_is_obj(v))
		v->u.obj->refs++;
}

/* Iterative, so that a deeply nested list does not overflow the C stack. */
void pk_unref(pk_t *p, const mp_pk_value_t *v)
{
	if (!pk_is_obj(v) || --v->u.obj->refs > 0)
		return;
	p->nwork = 0;
	if (mp_vec_reserve((void **)&p->work, &p->workcap, 1, sizeof(*p->work)) < 0) {
		p->oom = 1; /* freed at the end by pk_free_all */
		return;
	}
	p->work[p->nwork++] = v->u.obj;
	while (p->nwork) {
		mp_pk_obj_t *o = p->work[--p->nwork];
		for (size_t i = 0; i < o->n; i++) {
			mp_pk_value_t *c = &o->items[i];
			if (!pk_is_obj(c) || --c->u.obj->refs > 0)
				continue;
			if (mp_vec_reserve((void **)&p->work, &p->workcap, p->nwork + 1, sizeof(*p->work)) < 0) {
				p->oom = 1;
				continue;
			}
			p->work[p->nwork++] = c->u.obj;
		}
		obj_unlink_free(p, o);
	}
}

int pk_obj_add(pk_t *p, mp_pk_obj_t *obj, const mp_pk_value_t *v)
{
	if (obj->n == obj->cap && mp_vec_reserve((void **)&obj->items, &obj->cap, obj->n + 1, sizeof(*obj->items)) < 0)
		return pk_fail(p, MP_ENOMEM, "out of memory");
	obj->items[obj->n++] = *v;
	return 0;
}

void pk_free_all(pk_t *p)
{
	while (p->live)
		obj_unlink_free(p, p->live);
	free(p->st);
	free(p->marks);
	free(p->memo);
	free(p->work);
	free(p->twork);
	free(p->big);
	free(p->buf);
}

int pk_push(pk_t *p, const mp_pk_value_t *v)
{
	if (p->sp >= PK_MAX_STACK)
		return pk_fail(p, MP_ELIMIT, "more than %u values on the stack", PK_MAX_STACK);
	if (p->sp == p->stcap && mp_vec_reserve((void **)&p->st, &p->stcap, p->sp + 1, sizeof(*p->st)) < 0)
		return pk_fail(p, MP_ENOMEM, "out of memory");
	p->st[p->sp++] = *v;
	return 0;
}

int pk_push_mark(pk_t *p)
{
	mp_pk_value_t m = {.kind = MP_PK_MARK};

	if (p->nmarks == p->mcap && mp_vec_reserve((void **)&p->marks, &p->mcap, p->nmarks + 1, sizeof(*p->marks)) < 0)
		return pk_fail(p, MP_ENOMEM, "out of memory");
	p->marks[p->nmarks++] = p->sp;
	return pk_push(p, &m);
}

int pk_find_mark(pk_t *p, size_t *first)
{
	if (!p->nmarks)
		return pk_fail(p, MP_EFORMAT, "no MARK on the stack for this opcode");
	*first = p->marks[p->nmarks - 1] + 1;
	return 0;
}

/* The values above the mark have been moved elsewhere or released. */
void pk_drop_mark(pk_t *p, size_t first)
{
	p->sp = first - 1;
	p->nmarks--;
}

int pk_memo_put(pk_t *p, uint64_t idx)
{
	mp_pk_value_t *top;

	if (!p->sp)
		return pk_fail(p, MP_EFORMAT, "memo store with an empty stack");
	top = &p->st[p->sp - 1];
	if (top->kind == MP_PK_MARK)
		return pk_fail(p, MP_EFORMAT, "memo store of a MARK");
	if (idx >= PK_MAX_MEMO || idx > p->nmemo + PK_MAX_MEMO_GAP)
		return pk_fail(p, MP_ELIMIT, "memo index %llu out of the supported range (%zu slots so far)",
			       (unsigned long long)idx, p->nmemo);
	if (idx >= p->nmemo) {
		if (mp_vec_reserve((void **)&p->memo, &p->memocap, idx + 1, sizeof(*p->memo)) < 0)
			return pk_fail(p, MP_ENOMEM, "out of memory");
		for (size_t i = p->nmemo; i <= idx; i++)
			p->memo[i].kind = MP_PK_MARK;
		p->nmemo = idx + 1;
	}
	pk_unref(p, &p->memo[idx]);
	p->memo[idx] = *top;
	pk_ref(top);
	if (pk_is_obj(top) && top->u.obj->memo == UINT32_MAX)
		top->u.obj->memo = (uint32_t)idx;
	return 0;
}

int pk_memo_get(pk_t *p, uint64_t idx)
{
	mp_pk_value_t *v;

	if (idx >= p->nmemo || p->memo[idx].kind == MP_PK_MARK)
		return pk_fail(p, MP_EFORMAT, "memo index %llu was never stored", (unsigned long long)idx);
	v = &p->memo[idx];
	if (v->kind == MP_PK_GONE)
		return pk_fail(p, MP_EFORMAT,
			       "memo index %llu refers to an entry already read and released (memprof streams the "
			       "lists of segments and trace entries, and does not keep their items)",
			       (unsigned long long)idx);
	pk_ref(v);
	return pk_push(p, v);
}

void pk_memo_release(pk_t *p, mp_pk_obj_t *obj)
{
	mp_pk_value_t gone = {.kind = MP_PK_GONE};
	uint32_t idx = obj->memo;

	if (idx == UINT32_MAX || idx >= p->nmemo || p->memo[idx].kind != obj->kind || p->memo[idx].u.obj != obj)
		return;
	p->memo[idx] = gone;
	obj->memo = UINT32_MAX;
	obj->refs--; /* the caller still holds one: it frees the object */
}

int pk_memo_tokenize(pk_t *p, const mp_pk_value_t *value)
{
	if (!pk_is_obj(value))
		return 0;
	p->ntwork = 0;
	if (mp_vec_reserve((void **)&p->twork, &p->tworkcap, 1, sizeof(*p->twork)) < 0)
		return pk_fail(p, MP_ENOMEM, "out of memory");
	if (++p->walk == 0)
		p->walk = 1;
	value->u.obj->visit = p->walk;
	p->twork[p->ntwork++] = value->u.obj;
	while (p->ntwork) {
		mp_pk_obj_t *o = p->twork[--p->ntwork];
		for (size_t i = 0; i < o->n; i++) {
			mp_pk_obj_t *c = pk_is_obj(&o->items[i]) ? o->items[i].u.obj : NULL;
			if (!c || c->refs == 0 || c->visit == p->walk)
				continue;
			c->visit = p->walk;
			if (c->memo != UINT32_MAX && c->user && c->memo < p->nmemo &&
			    p->memo[c->memo].kind == c->kind && p->memo[c->memo].u.obj == c) {
				p->memo[c->memo].kind = MP_PK_TOKEN;
				p->memo[c->memo].u.i = c->user;
				c->memo = UINT32_MAX;
				c->refs--; /* the memo's; o still holds one */
			}
			if (mp_vec_reserve((void **)&p->twork, &p->tworkcap, p->ntwork + 1, sizeof(*p->twork)) < 0)
				return pk_fail(p, MP_ENOMEM, "out of memory");
			p->twork[p->ntwork++] = c;
		}
	}
	return 0;
}

/* Python's pickler writes a list of n >= 2 items as MARK items APPENDS
 * (in batches of 1000), a list of one as item APPEND; dicts likewise with
 * SETITEMS / SETITEM. So a container created now belongs to:
 * - the container below the topmost MARK, when the MARK is on top;
 * - the list on top (its single item), or -- when that list sits right
 *   above a MARK whose container is a list -- that outer list (a sibling):
 *   both are offered (parent, alt);
 * - the dict below the MARK when an odd number of values sits above it
 *   (the top one is the key);
 * - the dict below a key on top, when no MARK says otherwise. */
void pk_guess_parent(const pk_t *p, mp_pk_obj_t **parent, const mp_pk_value_t **key, mp_pk_obj_t **alt)
{
	size_t n = p->sp, m = p->nmarks ? p->marks[p->nmarks - 1] : SIZE_MAX;
	const mp_pk_value_t *top, *below;

	*parent = NULL;
	*key = NULL;
	*alt = NULL;
	if (!n)
		return;
	top = &p->st[n - 1];
	if (top->kind == MP_PK_MARK) {
		if (n >= 2 && (p->st[n - 2].kind == MP_PK_LIST || p->st[n - 2].kind == MP_PK_DICT))
			*parent = p->st[n - 2].u.obj;
		if (*parent && (*parent)->kind == MP_PK_DICT)
			*parent = NULL; /* a key: never a container */
		return;
	}
	if (top->kind == MP_PK_LIST) {
		*parent = top->u.obj;
		if (m != SIZE_MAX && m + 2 == n && m >= 1 && p->st[m - 1].kind == MP_PK_LIST)
			*alt = p->st[m - 1].u.obj;
		return;
	}
	if (m != SIZE_MAX && m >= 1 && m + 1 < n) {
		below = &p->st[m - 1];
		if (below->kind == MP_PK_DICT && (n - 1 - m) % 2 == 1 && !pk_is_obj(top)) {
			*parent = below->u.obj;
			*key = top;
		} else if (below->kind == MP_PK_LIST) {
			*parent = below->u.obj;
		}
		if (*parent)
			return;
	}
	if (n >= 2 && p->st[n - 2].kind == MP_PK_DICT && !pk_is_obj(top)) {
		*parent = p->st[n - 2].u.obj;
		*key = top;
	}
}

const mp_pk_value_t *mp_pickle_dict_get(const mp_pk_obj_t *dict, uint32_t key)
{
	if (!dict || dict->kind != MP_PK_DICT || !key)
		return NULL;
	for (size_t i = 0; i + 1 < dict->n; i += 2)
		if (dict->items[i].kind == MP_PK_STR && dict->items[i].u.str == key)
			return &dict->items[i + 1];
	return NULL;
}
