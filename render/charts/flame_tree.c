/* flame_tree.c - the flame chart's tree laid out before anything is drawn:
 * each node's children in drawing order, its bytes from the root's left
 * edge, its row, and whether it is a frame, too narrow or too deep. Nodes
 * are visited in index order (a parent before its children), so every
 * pass is one loop. */
#include "flame_impl.h"

#include <memprof/error.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A child with what it is sorted by. */
typedef struct entry {
	uint32_t parent, idx;
	uint64_t total;
	const char *name;
} entry_t;

static int cmp_int(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* Largest first, then by name, then as given: the same order every run. */
static int by_bytes(const void *pa, const void *pb)
{
	const entry_t *a = pa, *b = pb;
	int c = cmp_int(a->parent, b->parent);

	if (!c)
		c = cmp_int(b->total, a->total);
	if (!c)
		c = strcmp(a->name, b->name);
	return c ? c : cmp_int(a->idx, b->idx);
}

static int by_name(const void *pa, const void *pb)
{
	const entry_t *a = pa, *b = pb;
	int c = cmp_int(a->parent, b->parent);

	if (!c)
		c = strcmp(a->name, b->name);
	if (!c)
		c = cmp_int(b->total, a->total);
	return c ? c : cmp_int(a->idx, b->idx);
}

int fl_tree_check(const mp_flame_node_t *nodes, size_t n)
{
	if (!n || n > UINT32_MAX || nodes[0].parent != UINT32_MAX)
		return MP_EUSAGE;
	for (size_t i = 1; i < n; i++)
		if (nodes[i].parent >= i)
			return MP_EUSAGE;
	return 0;
}

double fl_px(const fl_tree_t *t, uint64_t bytes)
{
	return round(t->width * ((double)bytes / (double)t->nodes[0].total_bytes));
}

void fl_tree_free(fl_tree_t *t)
{
	free(t->order);
	free(t->first);
	free(t->depth);
	free(t->start);
	free(t->span);
	free(t->state);
	memset(t, 0, sizeof(*t));
}

/* order[] and first[]: the children of every node, sorted, one block each. */
static int sort_children(fl_tree_t *t, int sort)
{
	size_t n = t->n;
	entry_t *e = malloc((n > 1 ? n - 1 : 1) * sizeof(*e));

	if (!e)
		return MP_ENOMEM;
	for (size_t i = 1; i < n; i++)
		e[i - 1] = (entry_t){t->nodes[i].parent, (uint32_t)i, t->nodes[i].total_bytes, fl_name(&t->nodes[i])};
	qsort(e, n - 1, sizeof(*e), sort == MP_FLAME_SORT_NAME ? by_name : by_bytes);
	t->order[0] = 0;
	for (size_t i = 1; i < n; i++)
		t->order[i] = e[i - 1].idx;
	/* node p's block starts after the blocks of the nodes before it */
	memset(t->first, 0, (n + 1) * sizeof(*t->first));
	for (size_t i = 1; i < n; i++)
		t->first[t->nodes[i].parent + 1]++;
	t->first[0] = 1;
	for (size_t i = 1; i <= n; i++)
		t->first[i] += t->first[i - 1];
	free(e);
	return 0;
}

/* The runs of narrow siblings among p's children that are drawn (1 px or
 * wider once merged): each makes its row one that has something. */
static void narrow_runs(fl_tree_t *t, uint32_t p)
{
	uint32_t end = t->first[p + 1];

	for (uint32_t k = t->first[p]; k < end; k++) {
		uint32_t c = t->order[k];
		uint64_t lo = t->start[c], hi;
		if (t->state[c] != FL_NARROW)
			continue;
		while (k + 1 < end && t->state[t->order[k + 1]] == FL_NARROW)
			k++;
		hi = t->start[t->order[k]] + t->span[t->order[k]];
		if (fl_px(t, hi) - fl_px(t, lo) >= 1) {
			t->merged = 1;
			if (t->depth[c] + 1 > t->rows)
				t->rows = t->depth[c] + 1;
		}
	}
}

/* Each child of p: where it starts, its bytes as drawn, what becomes of it. */
static void place_children(fl_tree_t *t, uint32_t p)
{
	uint64_t cursor = t->start[p], end = t->start[p] + t->span[p];
	double root = (double)t->nodes[0].total_bytes;

	for (uint32_t k = t->first[p]; k < t->first[p + 1]; k++) {
		uint32_t c = t->order[k];
		uint64_t total = t->nodes[c].total_bytes, room = end - cursor;
		t->depth[c] = t->depth[p] + 1;
		t->start[c] = cursor;
		t->span[c] = total < room ? total : room;
		cursor += t->span[c];
		if (t->state[p] != FL_DRAWN) {
			t->state[c] = FL_UNDER;
		} else if (t->depth[c] >= t->cap) {
			t->state[c] = FL_DEEP;
			t->deep_frames++;
			t->deep_bytes += t->span[c];
		} else if (t->width * (double)t->span[c] < root) { /* under 1 px, exactly */
			t->state[c] = FL_NARROW;
			t->narrow_frames++;
			t->narrow_bytes += t->span[c];
		} else {
			t->state[c] = FL_DRAWN;
			t->kinds |= 1u << fl_kind(&t->nodes[c]);
			if (t->depth[c] + 1 > t->rows)
				t->rows = t->depth[c] + 1;
		}
	}
	if (t->state[p] == FL_DRAWN)
		narrow_runs(t, p);
}

int fl_tree_build(fl_tree_t *t, const mp_flame_node_t *nodes, size_t n, double width, uint32_t cap, int sort)
{
	int rc = fl_tree_check(nodes, n);

	memset(t, 0, sizeof(*t));
	if (rc < 0)
		return rc;
	t->nodes = nodes;
	t->n = n;
	t->width = width;
	t->cap = cap ? cap : 1;
	t->order = malloc(n * sizeof(*t->order));
	t->first = malloc((n + 1) * sizeof(*t->first));
	t->depth = malloc(n * sizeof(*t->depth));
	t->start = malloc(n * sizeof(*t->start));
	t->span = malloc(n * sizeof(*t->span));
	t->state = malloc(n);
	if (!t->order || !t->first || !t->depth || !t->start || !t->span || !t->state || sort_children(t, sort) < 0)
		return MP_ENOMEM;
	t->depth[0] = 0;
	t->start[0] = 0;
	t->span[0] = nodes[0].total_bytes;
	t->state[0] = FL_DRAWN;
	t->rows = 1;
	for (uint32_t p = 0; p < n; p++)
		place_children(t, p);
	return 0;
}
