/* calltree_build.c - the trees of memprof/calltree.h from the figures of
 * each (memory id, stack): a trie of frames from the outermost in (one
 * node per distinct path), then the nodes in depth-first order with
 * children by inclusive bytes and the small ones folded into "(other)",
 * iteratively (a stack may be thousands of frames deep). */
#include "calltree_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct bnode {
	uint32_t frame;         /* frame id, or CT_ROOT, CT_NO_STACK */
	int32_t first_child, next_sibling;
	uint32_t parent;
	uint64_t total_b, self_b, total_c, self_c;
	uint64_t size;          /* nodes in its subtree, itself included */
} bnode_t;

typedef struct builder {
	bnode_t *n;
	size_t count, cap;
	mp_i64map_t child;      /* parent << 32 | frame -> node */
} builder_t;

/* The child of parent for frame, made when new; -1 out of memory. */
static long child_of(builder_t *b, uint32_t parent, uint32_t frame)
{
	uint64_t key = (uint64_t)parent << 32 | frame;
	uint32_t i;

	if (mp_i64map_get(&b->child, key, &i))
		return (long)i;
	if (b->count >= INT32_MAX)
		return -1;
	if (MP_VEC_RESERVE(b->n, b->cap, b->count + 1) < 0 || mp_i64map_put(&b->child, key, (uint32_t)b->count) < 0)
		return -1;
	b->n[b->count] = (bnode_t){frame, -1, b->n[parent].first_child, parent, 0, 0, 0, 0, 1};
	b->n[parent].first_child = (int32_t)b->count;
	return (long)b->count++;
}

/* What the work list holds: a node to write (b >= 0) or an "(other)". */
typedef struct item {
	uint64_t total_b, total_c, folded;
	const char *name, *file;
	int64_t line;
	int32_t b;              /* builder node, -1: "(other)" */
	int32_t parent;         /* its parent in the output */
	uint32_t depth;
} item_t;

/* The smallest first: the work list is popped from its end. */
static int cmp_items(const void *pa, const void *pb)
{
	const item_t *x = pa, *y = pb;
	int c;

	if (x->total_b != y->total_b)
		return x->total_b < y->total_b ? -1 : 1;
	if ((c = strcmp(x->name, y->name)) != 0)
		return -c;
	if ((c = strcmp(x->file, y->file)) != 0)
		return -c;
	return x->line > y->line ? -1 : x->line < y->line;
}

static void names_of(const mp_calltree_t *t, uint32_t frame, item_t *it)
{
	it->file = "";
	it->line = 0;
	if (frame == CT_NO_STACK) {
		it->name = "(no stack)";
	} else if (frame == CT_ROOT) {
		it->name = "";
	} else {
		it->name = t->frames[frame].name;
		it->file = t->frames[frame].file;
		it->line = t->frames[frame].line;
	}
}

static int push(item_t **work, size_t *n, size_t *cap, const item_t *it)
{
	if (MP_VEC_RESERVE(*work, *cap, *n + 1) < 0)
		return -1;
	(*work)[(*n)++] = *it;
	return 0;
}

/* Write the builder's nodes into tree->nodes, depth first. */
static int emit(const mp_calltree_t *t, const builder_t *b, const char *root_name, mp_tree_t *tree)
{
	const bnode_t *n = b->n;
	double limit = n[0].total_b * (t->min_percent / 100.0); /* fold what is under it */
	item_t *work = NULL, it = {0};
	size_t nwork = 0, cap_work = 0, cap_out = 0, cap_last = 0, count = 0;
	mp_tree_node_t *out = NULL;
	int32_t *last = NULL; /* per output node: its last child so far */
	int rc = 0;

	it.b = 0;
	it.parent = -1;
	if (push(&work, &nwork, &cap_work, &it) < 0)
		return -1;
	while (nwork && rc == 0) {
		item_t cur = work[--nwork];
		mp_tree_node_t *o;
		size_t mark;
		if (count >= INT32_MAX || MP_VEC_RESERVE(out, cap_out, count + 1) < 0 ||
		    MP_VEC_RESERVE(last, cap_last, count + 1) < 0) {
			rc = -1;
			break;
		}
		o = &out[count];
		memset(o, 0, sizeof(*o));
		o->parent = cur.parent;
		o->first_child = o->next_sibling = -1;
		o->depth = cur.depth;
		o->kind = MP_FRAME_UNKNOWN;
		last[count] = -1;
		if (cur.parent >= 0) {
			if (last[cur.parent] < 0)
				out[cur.parent].first_child = (int32_t)count;
			else
				out[last[cur.parent]].next_sibling = (int32_t)count;
			last[cur.parent] = (int32_t)count;
		}
		if (cur.b < 0) { /* "(other)": a leaf */
			o->name = "(other)";
			o->file = "";
			o->total_bytes = o->self_bytes = cur.total_b;
			o->total_count = o->self_count = cur.total_c;
			o->folded = cur.folded;
			count++;
			continue;
		}
		names_of(t, n[cur.b].frame, &it);
		o->name = cur.b == 0 ? root_name : it.name;
		o->file = it.file;
		o->line = it.line;
		if (n[cur.b].frame < CT_SPECIAL)
			o->kind = t->frames[n[cur.b].frame].kind;
		o->total_bytes = n[cur.b].total_b;
		o->self_bytes = n[cur.b].self_b;
		o->total_count = n[cur.b].total_c;
		o->self_count = n[cur.b].self_c;
		/* its children on the work list, the smallest first, the small
		 * ones as one "(other)" */
		mark = nwork;
		memset(&it, 0, sizeof(it));
		it.b = -1;
		it.name = "(other)";
		it.file = "";
		for (int32_t c = n[cur.b].first_child; c >= 0 && rc == 0; c = n[c].next_sibling) {
			if ((double)n[c].total_b < limit) {
				it.total_b += n[c].total_b;
				it.total_c += n[c].total_c;
				it.folded += n[c].size;
				continue;
			}
			item_t ch = {n[c].total_b, n[c].total_c, 0, NULL, NULL, 0, c, (int32_t)count, cur.depth + 1};
			names_of(t, n[c].frame, &ch);
			rc = push(&work, &nwork, &cap_work, &ch);
		}
		if (it.folded && rc == 0) {
			it.parent = (int32_t)count;
			it.depth = cur.depth + 1;
			tree->folded_nodes += it.folded;
			tree->folded_bytes += it.total_b;
			rc = push(&work, &nwork, &cap_work, &it);
		}
		if (nwork - mark > 1)
			qsort(work + mark, nwork - mark, sizeof(*work), cmp_items);
		count++;
	}
	free(work);
	free(last);
	if (rc < 0) {
		free(out);
		return -1;
	}
	tree->nodes = out;
	tree->count = count;
	return 0;
}

/* The tree of one memory id and kind. */
static int build_one(mp_calltree_t *t, uint32_t memory, int kind, ct_path_fn path_of, mp_tree_t *tree)
{
	int vb = kind == MP_TREE_PEAK ? CT_PEAK_B : kind == MP_TREE_LEAKS ? CT_LIVE_B : CT_ALLOC_B;
	const mp_memory_info_t *m = mp_source_memory(t->src, memory);
	const char *root_name = ct_intern(t, m && m->name ? m->name : "");
	builder_t b = {0};
	int rc = 0;

	memset(tree, 0, sizeof(*tree));
	tree->memory = memory;
	tree->kind = kind;
	if (!root_name || !(b.n = calloc(256, sizeof(*b.n))))
		return -1;
	b.cap = 256;
	b.count = 1;
	b.n[0] = (bnode_t){CT_ROOT, -1, -1, 0, 0, 0, 0, 0, 1};
	for (size_t a = 0; a < t->naggs && rc == 0; a++) {
		const ct_agg_t *g = &t->aggs[a];
		uint64_t bytes = g->v[vb], cnt = g->v[vb + 1];
		static const uint32_t no_stack = CT_NO_STACK;
		const uint32_t *path;
		uint32_t np, cur = 0;
		if (g->memory != memory || (!bytes && !cnt))
			continue;
		if ((rc = path_of(t, g->stack, &path, &np)) < 0)
			break;
		if (!np) {
			path = &no_stack;
			np = 1;
		}
		tree->stacks += g->stack != 0;
		b.n[0].total_b += bytes;
		b.n[0].total_c += cnt;
		for (uint32_t i = 0; i < np; i++) {
			long c = child_of(&b, cur, path[i]);
			if (c < 0) {
				rc = -1;
				break;
			}
			cur = (uint32_t)c;
			b.n[cur].total_b += bytes;
			b.n[cur].total_c += cnt;
		}
		b.n[cur].self_b += bytes;
		b.n[cur].self_c += cnt;
	}
	for (size_t i = b.count; rc == 0 && i-- > 1;) /* a child is made after its parent */
		b.n[b.n[i].parent].size += b.n[i].size;
	if (rc == 0)
		rc = emit(t, &b, root_name, tree);
	free(b.n);
	mp_i64map_free(&b.child);
	return rc;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int ct_build_all(mp_calltree_t *t, ct_path_fn path_of)
{
	uint32_t *mems = NULL;
	size_t nmems = 0, nkinds = 0;
	int rc = 0;

	/* the memory ids with some allocation with a stack, in order */
	if (!(mems = malloc((t->naggs ? t->naggs : 1) * sizeof(*mems))))
		return -1;
	for (size_t a = 0; a < t->naggs; a++)
		if (t->aggs[a].stack)
			mems[nmems++] = t->aggs[a].memory;
	qsort(mems, nmems, sizeof(*mems), cmp_u32);
	{
		size_t k = 0;
		for (size_t i = 0; i < nmems; i++)
			if (!k || mems[k - 1] != mems[i])
				mems[k++] = mems[i];
		nmems = k;
	}
	for (int k = 0; k <= MP_TREE_KIND_MAX; k++)
		nkinds += (t->kinds >> k) & 1;
	if (nmems && !(t->trees = calloc(nmems * nkinds, sizeof(*t->trees)))) {
		free(mems);
		return -1;
	}
	for (size_t i = 0; i < nmems && rc == 0; i++)
		for (int k = 0; k <= MP_TREE_KIND_MAX && rc == 0; k++)
			if ((t->kinds >> k) & 1 && (rc = build_one(t, mems[i], k, path_of, &t->trees[t->ntrees])) == 0)
				t->ntrees++;
	free(mems);
	return rc;
}
