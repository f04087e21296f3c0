/* fragidx.c - B+ tree over address-ordered items with max-gap augmentation
 * (see fragidx.h for what a gap is).
 *
 * Leaves hold up to LEAF_CAP items in parallel arrays and are linked both
 * ways, so the predecessor of a leaf's first item is one pointer away. Inner
 * nodes hold, per child, a separator (a lower bound of the child's items) and
 * the largest gap in the child's subtree. Items are ordered by one 64-bit
 * key, address << 2 | kind, so searches are branch-free counts over small
 * contiguous arrays.
 *
 * Maxima are kept incrementally: a gap that grows raises the maxima on its
 * path only while it exceeds them; a gap that shrinks costs a rescan only
 * when it was its leaf's maximum. Deletions merge or rebalance nodes that
 * fall below a quarter full, so memory stays proportional to the items.
 *
 * This file: the nodes' pool, searches, insertion and removal, in one
 * file because insertion and removal are the solver's hot path and the
 * helpers they share, the pool's included, are compiled into them. The
 * bulk build is fragidx_build.c; creating and destroying an index
 * fragidx_life.c.
 */
#include "fragidx_impl.h"

#include <memprof/error.h>
#include <memprof/vec.h>

#include <stdlib.h>
#include <string.h>

/* Leaves come from chunks that live until fx_destroy(), so a leaf pointer
 * kept as a hint (fx_insert's `where`) can always be read safely: a released
 * leaf has h.leaf == LEAF_DEAD, a reused one is checked for the key. */
#define CHUNK_LEAVES 64

fx_leaf_t *fx_leaf_new(fx_index_t *fx)
{
	fx_leaf_t *l = fx->free_leaves;

	if (!l) {
		fx_leaf_t *chunk;
		if (MP_VEC_RESERVE(fx->chunks, fx->chunk_cap, fx->nchunks + 1) < 0)
			return NULL;
		chunk = calloc(CHUNK_LEAVES, sizeof(*chunk));
		if (!chunk)
			return NULL;
		fx->chunks[fx->nchunks++] = chunk;
		for (size_t i = 0; i < CHUNK_LEAVES; i++) {
			chunk[i].h.leaf = LEAF_DEAD;
			chunk[i].next = i + 1 < CHUNK_LEAVES ? &chunk[i + 1] : NULL;
		}
		l = chunk;
	}
	fx->free_leaves = l->next;
	memset(&l->h, 0, sizeof(l->h));
	l->h.leaf = LEAF_LIVE;
	l->prev = l->next = NULL;
	fx->nodes++;
	return l;
}

void fx_leaf_release(fx_index_t *fx, fx_leaf_t *l)
{
	l->h.leaf = LEAF_DEAD;
	l->h.n = 0;
	l->h.parent = NULL;
	l->prev = NULL;
	l->next = fx->free_leaves;
	fx->free_leaves = l;
	fx->nodes--;
}

fx_inner_t *fx_inner_new(fx_index_t *fx)
{
	fx_inner_t *in = calloc(1, sizeof(*in));

	if (in)
		fx->nodes++;
	return in;
}

/* Recompute node's maximum and carry it up. Without full, stop as soon as an
 * ancestor's stored value is unchanged (valid when nothing else on the path
 * changed). */
static void refresh(fx_node_t *node, int full)
{
	uint64_t m = node_max(node);

	node->maxgap = m;
	while (node->parent) {
		fx_inner_t *p = node->parent;

		if (!full && p->cmax[node->pidx] == m)
			return;
		p->cmax[node->pidx] = m;
		m = node_max(&p->h);
		if (!full && p->h.maxgap == m)
			return;
		p->h.maxgap = m;
		node = &p->h;
	}
}

/* A gap in leaf l grew to g. */
static void gap_up(fx_leaf_t *l, uint64_t g)
{
	fx_node_t *n = &l->h;

	if (g <= n->maxgap)
		return;
	n->maxgap = g;
	while (n->parent) {
		fx_inner_t *p = n->parent;
		p->cmax[n->pidx] = g;
		if (g <= p->h.maxgap)
			return;
		p->h.maxgap = g;
		n = &p->h;
	}
}

/* A gap of leaf l that was `old` shrank or went away. */
static void gap_down(fx_leaf_t *l, uint64_t old)
{
	if (old >= l->h.maxgap)
		refresh(&l->h, 0);
}

/* Number of keys[from..n) <= k plus from: the index of the first key > k.
 * Branch-free binary search (the comparison becomes a conditional move),
 * so a search of 32 keys is 5 predictable steps. */
static inline uint32_t count_le(const uint64_t *keys, uint32_t from, uint32_t n, uint64_t k)
{
	const uint64_t *base = keys + from;
	uint32_t len = n - from;

	if (!len)
		return from;
	while (len > 1) {
		uint32_t half = len / 2;
		base = base[half] <= k ? base + half : base;
		len -= half;
	}
	return (uint32_t)(base - keys) + (*base <= k);
}

/* The leaf whose range holds key k. */
static fx_leaf_t *descend(const fx_index_t *fx, uint64_t k)
{
	fx_node_t *n = fx->root;

	while (!n->leaf) {
		const fx_inner_t *in = (const fx_inner_t *)n;
		n = in->child[count_le(in->key, 1, in->h.n, k) - 1];
	}
	return (fx_leaf_t *)n;
}

/* Recompute item i's gap; returns the old one. */
static uint64_t set_gap(fx_index_t *fx, fx_leaf_t *l, uint32_t i)
{
	uint64_t g = calc_gap(l, i), old = l->gap[i];

	fx->total = fx->total - old + g;
	l->gap[i] = g;
	return old;
}

/* Record a gap change of leaf l in the maxima. */
static void gap_changed(fx_leaf_t *l, uint64_t old, uint64_t g)
{
	if (g > old)
		gap_up(l, g);
	else if (g < old)
		gap_down(l, old);
}

static void inner_insert_at(fx_inner_t *p, uint32_t i, fx_node_t *c, uint64_t sk)
{
	uint32_t m = p->h.n - i;

	memmove(&p->child[i + 1], &p->child[i], m * sizeof(p->child[0]));
	memmove(&p->key[i + 1], &p->key[i], m * sizeof(p->key[0]));
	memmove(&p->cmax[i + 1], &p->cmax[i], m * sizeof(p->cmax[0]));
	p->child[i] = c;
	p->key[i] = sk;
	p->cmax[i] = c->maxgap;
	p->h.n++;
	fx_fix_pidx(p, i);
}

/* Put right just after left under left's parent (splitting upwards as
 * needed). Both have correct maxgap; sets their entries in the parent. */
static int insert_child(fx_index_t *fx, fx_node_t *left, fx_node_t *right, uint64_t sk)
{
	fx_inner_t *p = left->parent, *target;
	uint32_t i;

	if (!p) {
		p = fx_inner_new(fx);
		if (!p)
			return MP_ENOMEM;
		p->h.n = 2;
		p->child[0] = left;
		p->child[1] = right;
		p->key[1] = sk;
		p->cmax[0] = left->maxgap;
		p->cmax[1] = right->maxgap;
		p->h.maxgap = node_max(&p->h);
		fx_fix_pidx(p, 0);
		fx->root = &p->h;
		return 0;
	}
	i = left->pidx;
	p->cmax[i] = left->maxgap;
	i++;
	if (p->h.n == FAN) {
		fx_inner_t *q = fx_inner_new(fx);
		uint32_t half = FAN / 2;

		if (!q)
			return MP_ENOMEM;
		memcpy(q->child, &p->child[half], (FAN - half) * sizeof(q->child[0]));
		memcpy(q->key, &p->key[half], (FAN - half) * sizeof(q->key[0]));
		memcpy(q->cmax, &p->cmax[half], (FAN - half) * sizeof(q->cmax[0]));
		q->h.n = FAN - half;
		p->h.n = (uint16_t)half;
		fx_fix_pidx(q, 0);
		target = p;
		if (i > half) {
			target = q;
			i -= half;
		}
		inner_insert_at(target, i, right, sk);
		p->h.maxgap = node_max(&p->h);
		q->h.maxgap = node_max(&q->h);
		return insert_child(fx, &p->h, &q->h, q->key[0]);
	}
	inner_insert_at(p, i, right, sk);
	return 0;
}

int fx_insert(fx_index_t *fx, uint64_t addr, uint64_t end, int kind, void **where)
{
	fx_leaf_t *l, *h = where ? *where : NULL;
	uint64_t k, g, old;
	uint32_t pos;

	if (addr >> 62)
		return MP_ELIMIT;
	k = PACK(addr, kind);
	if (!fx->root) {
		l = fx_leaf_new(fx);
		if (!l)
			return MP_ENOMEM;
		fx->root = &l->h;
	}
	/* A hint leaf whose keys surround k is where the descent would lead
	 * (its keys lie inside its separators): skip the descent. */
	if (h && h->h.leaf == LEAF_LIVE && h->h.n && h->key[0] < k && k < h->key[h->h.n - 1])
		l = h;
	else
		l = descend(fx, k);
	pos = count_le(l->key, 0, l->h.n, k);
	if (l->h.n == LEAF_CAP) {
		fx_leaf_t *r = fx_leaf_new(fx);
		uint32_t half = LEAF_CAP / 2, m = LEAF_CAP - half;
		int rc;

		if (!r)
			return MP_ENOMEM;
		memcpy(r->key, &l->key[half], m * sizeof(r->key[0]));
		memcpy(r->end, &l->end[half], m * sizeof(r->end[0]));
		memcpy(r->gap, &l->gap[half], m * sizeof(r->gap[0]));
		r->h.n = (uint16_t)m;
		l->h.n = (uint16_t)half;
		r->next = l->next;
		r->prev = l;
		if (l->next)
			l->next->prev = r;
		l->next = r;
		l->h.maxgap = node_max(&l->h);
		r->h.maxgap = node_max(&r->h);
		rc = insert_child(fx, &l->h, &r->h, r->key[0]);
		if (rc < 0)
			return rc; /* the tree is inconsistent: callers treat ENOMEM as fatal */
		refresh(&l->h, 1);
		refresh(&r->h, 1);
		if (pos > half) {
			l = r;
			pos -= half;
		}
	}
	memmove(&l->key[pos + 1], &l->key[pos], (l->h.n - pos) * sizeof(l->key[0]));
	memmove(&l->end[pos + 1], &l->end[pos], (l->h.n - pos) * sizeof(l->end[0]));
	memmove(&l->gap[pos + 1], &l->gap[pos], (l->h.n - pos) * sizeof(l->gap[0]));
	l->key[pos] = k;
	l->end[pos] = end;
	l->gap[pos] = 0;
	l->h.n++;
	fx->count++;
	if (where)
		*where = l;
	set_gap(fx, l, pos);
	gap_up(l, l->gap[pos]);
	if (pos + 1 < l->h.n) {
		old = set_gap(fx, l, pos + 1);
		gap_changed(l, old, l->gap[pos + 1]);
	} else if (l->next) {
		old = set_gap(fx, l->next, 0);
		g = l->next->gap[0];
		gap_changed(l->next, old, g);
	}
	return 0;
}

static void inner_remove_at(fx_inner_t *p, uint32_t i)
{
	uint32_t m = p->h.n - i - 1;

	memmove(&p->child[i], &p->child[i + 1], m * sizeof(p->child[0]));
	memmove(&p->key[i], &p->key[i + 1], m * sizeof(p->key[0]));
	memmove(&p->cmax[i], &p->cmax[i + 1], m * sizeof(p->cmax[0]));
	p->h.n--;
	fx_fix_pidx(p, i);
}

static void collapse_root(fx_index_t *fx)
{
	while (!fx->root->leaf && fx->root->n == 1) {
		fx_inner_t *old = (fx_inner_t *)fx->root;
		fx->root = old->child[0];
		fx->root->parent = NULL;
		fx->root->pidx = 0;
		free(old);
		fx->nodes--;
	}
}

static void rebalance_inner(fx_index_t *fx, fx_inner_t *node)
{
	fx_inner_t *p = node->h.parent, *left, *right;
	uint32_t i, ri, j;

	if (!p) {
		collapse_root(fx);
		return;
	}
	if (node->h.n >= FAN_MIN)
		return;
	i = node->h.pidx;
	if (i + 1 < p->h.n) {
		left = node;
		right = (fx_inner_t *)p->child[i + 1];
		ri = i + 1;
	} else {
		left = (fx_inner_t *)p->child[i - 1];
		right = node;
		ri = i;
	}
	if (left->h.n + right->h.n <= FAN) {
		uint32_t base = left->h.n;
		for (j = 0; j < right->h.n; j++) {
			left->child[base + j] = right->child[j];
			left->key[base + j] = j ? right->key[j] : p->key[ri];
			left->cmax[base + j] = right->cmax[j];
		}
		left->h.n = (uint16_t)(left->h.n + right->h.n);
		fx_fix_pidx(left, base);
		inner_remove_at(p, ri);
		free(right);
		fx->nodes--;
		refresh(&left->h, 1);
		rebalance_inner(fx, p);
		return;
	}
	while (left->h.n < FAN_MIN) { /* borrow right's first child */
		uint32_t n = left->h.n;
		left->child[n] = right->child[0];
		left->key[n] = p->key[ri];
		left->cmax[n] = right->cmax[0];
		left->h.n++;
		fx_fix_pidx(left, n);
		p->key[ri] = right->key[1];
		inner_remove_at(right, 0);
	}
	while (right->h.n < FAN_MIN) { /* borrow left's last child */
		uint32_t n = left->h.n - 1u;
		memmove(&right->child[1], &right->child[0], right->h.n * sizeof(right->child[0]));
		memmove(&right->key[1], &right->key[0], right->h.n * sizeof(right->key[0]));
		memmove(&right->cmax[1], &right->cmax[0], right->h.n * sizeof(right->cmax[0]));
		right->child[0] = left->child[n];
		right->cmax[0] = left->cmax[n];
		right->key[1] = p->key[ri];
		right->h.n++;
		fx_fix_pidx(right, 0);
		p->key[ri] = left->key[n];
		left->h.n--;
	}
	refresh(&left->h, 1);
	refresh(&right->h, 1);
}

static void rebalance_leaf(fx_index_t *fx, fx_leaf_t *l)
{
	fx_inner_t *p = l->h.parent;
	fx_leaf_t *left, *right;
	uint32_t i, ri, m;

	if (!p || l->h.n >= LEAF_MIN)
		return;
	i = l->h.pidx;
	if (i + 1 < p->h.n) {
		left = l;
		right = (fx_leaf_t *)p->child[i + 1];
		ri = i + 1;
	} else {
		left = (fx_leaf_t *)p->child[i - 1];
		right = l;
		ri = i;
	}
	if (left->h.n + right->h.n <= LEAF_CAP) {
		m = right->h.n;
		memcpy(&left->key[left->h.n], right->key, m * sizeof(left->key[0]));
		memcpy(&left->end[left->h.n], right->end, m * sizeof(left->end[0]));
		memcpy(&left->gap[left->h.n], right->gap, m * sizeof(left->gap[0]));
		left->h.n = (uint16_t)(left->h.n + m);
		left->next = right->next;
		if (right->next)
			right->next->prev = left;
		inner_remove_at(p, ri);
		fx_leaf_release(fx, right);
		refresh(&left->h, 1);
		rebalance_inner(fx, p);
		return;
	}
	/* Share the items evenly; order (hence every gap) is unchanged. */
	{
		uint32_t total = left->h.n + right->h.n, want = total / 2;
		if (left->h.n < want) {
			m = want - left->h.n;
			memcpy(&left->key[left->h.n], right->key, m * sizeof(left->key[0]));
			memcpy(&left->end[left->h.n], right->end, m * sizeof(left->end[0]));
			memcpy(&left->gap[left->h.n], right->gap, m * sizeof(left->gap[0]));
			left->h.n = (uint16_t)(left->h.n + m);
			right->h.n = (uint16_t)(right->h.n - m);
			memmove(right->key, &right->key[m], right->h.n * sizeof(right->key[0]));
			memmove(right->end, &right->end[m], right->h.n * sizeof(right->end[0]));
			memmove(right->gap, &right->gap[m], right->h.n * sizeof(right->gap[0]));
		} else {
			m = left->h.n - want;
			memmove(&right->key[m], right->key, right->h.n * sizeof(right->key[0]));
			memmove(&right->end[m], right->end, right->h.n * sizeof(right->end[0]));
			memmove(&right->gap[m], right->gap, right->h.n * sizeof(right->gap[0]));
			memcpy(right->key, &left->key[want], m * sizeof(left->key[0]));
			memcpy(right->end, &left->end[want], m * sizeof(left->end[0]));
			memcpy(right->gap, &left->gap[want], m * sizeof(left->gap[0]));
			right->h.n = (uint16_t)(right->h.n + m);
			left->h.n = (uint16_t)want;
		}
		p->key[ri] = right->key[0];
		refresh(&left->h, 1);
		refresh(&right->h, 1);
	}
}

int fx_remove(fx_index_t *fx, uint64_t addr, int kind, void *hint)
{
	fx_leaf_t *l = hint;
	uint64_t k, removed, old;
	uint32_t pos;

	if (!fx->root || addr >> 62)
		return MP_ENOTFOUND;
	k = PACK(addr, kind);
	/* A hint is used only if the key really is in that leaf (keys are
	 * unique, so then it is the item); otherwise search from the root. */
	if (!l || l->h.leaf != LEAF_LIVE || !l->h.n || k < l->key[0] || k > l->key[l->h.n - 1])
		l = descend(fx, k);
	pos = count_le(l->key, 0, l->h.n, k);
	if (pos == 0 || l->key[pos - 1] != k) {
		if (l == hint) { /* a stale hint whose range still covers k */
			l = descend(fx, k);
			pos = count_le(l->key, 0, l->h.n, k);
		}
		if (pos == 0 || l->key[pos - 1] != k)
			return MP_ENOTFOUND;
	}
	pos--;
	removed = l->gap[pos];
	fx->total -= removed;
	memmove(&l->key[pos], &l->key[pos + 1], (l->h.n - pos - 1) * sizeof(l->key[0]));
	memmove(&l->end[pos], &l->end[pos + 1], (l->h.n - pos - 1) * sizeof(l->end[0]));
	memmove(&l->gap[pos], &l->gap[pos + 1], (l->h.n - pos - 1) * sizeof(l->gap[0]));
	l->h.n--;
	fx->count--;
	if (pos < l->h.n) {
		old = set_gap(fx, l, pos);
		gap_changed(l, old, l->gap[pos]);
	} else if (l->next) {
		old = set_gap(fx, l->next, 0);
		gap_changed(l->next, old, l->next->gap[0]);
	}
	gap_down(l, removed);
	rebalance_leaf(fx, l);
	return 0;
}

int fx_next(const fx_index_t *fx, uint64_t addr, int kind, uint64_t *okey, uint64_t *oend, int *okind)
{
	const fx_leaf_t *l;
	uint64_t k;
	uint32_t pos;

	if (!fx->root || addr >> 62)
		return 0;
	k = PACK(addr, kind);
	l = descend(fx, k);
	pos = count_le(l->key, 0, l->h.n, k);
	while (l && pos >= l->h.n) {
		l = l->next;
		pos = 0;
	}
	if (!l)
		return 0;
	*okey = ADDR(l->key[pos]);
	*oend = l->end[pos];
	*okind = KIND(l->key[pos]);
	return 1;
}

void fx_prefetch(const void *hint)
{
	const fx_leaf_t *l = hint;

	if (l) {
		__builtin_prefetch(&l->h);
		__builtin_prefetch(&l->key[LEAF_CAP / 2]);
	}
}

uint64_t fx_largest(const fx_index_t *fx)
{
	return fx->root ? fx->root->maxgap : 0;
}

size_t fx_memory_bytes(const fx_index_t *fx)
{
	/* leaf chunks, plus an upper bound for the inner nodes */
	return fx->nchunks * CHUNK_LEAVES * sizeof(fx_leaf_t) + fx->nodes * sizeof(fx_inner_t) / 8;
}
