/* calltree_out.c - the call trees as text, JSON and CSV
 * (memprof/calltree.h; docs/report.md "Call trees"). */
#include "calltree_impl.h"

#include "report_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The most characters of a frame the text shows (as the by-function table). */
#define FRAME_TEXT_MAX 120
/* Indentation stops growing there; deeper lines say their depth. */
#define INDENT_MAX 32

static int wanted(const mp_tree_t *tr, int kind, int device_set, uint32_t device)
{
	return tr->kind == kind && (!device_set || tr->memory == device);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* "name (file:line)"; a native frame's file by its base name. */
static void frame_text(const mp_tree_node_t *n, char *buf, size_t size)
{
	const char *file = n->kind == MP_FRAME_PYTHON ? n->file : base_name(n->file);

	if (n->line > 0 && file[0])
		snprintf(buf, size, "%s (%s:%" PRId64 ")", n->name, file, n->line);
	else if (file[0])
		snprintf(buf, size, "%s (%s%s)", n->name, file, n->kind == MP_FRAME_PYTHON ? ":?" : "");
	else
		snprintf(buf, size, "%s", n->name);
	if (strlen(buf) > FRAME_TEXT_MAX)
		memcpy(buf + FRAME_TEXT_MAX - 3, "...", 4);
}

/* A node in the middle of a chain that says nothing new: the only child
 * of a frame (not the root) with the same bytes and count, itself with
 * one child with them too; never a Python frame (the user's code, where
 * a snapshot's stacks are mostly the interpreter's C frames). */
static int chained(const mp_tree_t *tr, int32_t i)
{
	const mp_tree_node_t *n = tr->nodes, *c;
	int32_t p = n[i].parent;

	if (p <= 0 || n[p].first_child != i || n[i].next_sibling >= 0 || n[i].first_child < 0 ||
	    n[i].kind == MP_FRAME_PYTHON)
		return 0;
	c = &n[n[i].first_child];
	return c->next_sibling < 0 && n[i].total_bytes == n[p].total_bytes && n[i].total_count == n[p].total_count &&
	       c->total_bytes == n[i].total_bytes && c->total_count == n[i].total_count;
}

/* Recursion: node i and the nodes after it that are each the only child
 * of the one before, the same frame (function, file, line), with the same
 * bytes and count -- a function calling itself from one line, which text
 * would otherwise print as a staircase of one line per call. How many
 * (1: none). In pre-order each such child is the next node. */
static uint32_t recursion(const mp_tree_t *tr, int32_t i)
{
	const mp_tree_node_t *n = tr->nodes;
	uint32_t run = 1;

	if (i <= 0)
		return 1;
	for (int32_t j = i, c; (c = n[j].first_child) == j + 1 && n[c].next_sibling < 0; j = c, run++)
		if (n[c].kind != n[i].kind || n[c].line != n[i].line || strcmp(n[c].name, n[i].name) ||
		    strcmp(n[c].file, n[i].file) || n[c].total_bytes != n[j].total_bytes ||
		    n[c].total_count != n[j].total_count)
			break;
	return run;
}

static const char *const titles[] = {"live at the peak", "live at the end", "allocated over the run"};

static void print_tree(FILE *out, const mp_calltree_t *t, const mp_tree_t *tr, const char *memory)
{
	const mp_tree_node_t *n = tr->nodes;
	uint32_t *disp = calloc(tr->count ? tr->count : 1, sizeof(*disp));
	char total[40], self[40], frame[FRAME_TEXT_MAX + 40], all[64];
	int cw = 5;

	for (size_t i = 0; i < tr->count; i++) {
		int w = snprintf(total, sizeof(total), "%" PRIu64, n[i].total_count);
		cw = w > cw ? w : cw;
	}
	fprintf(out, "\nCall tree of the bytes %s, memory '%s': %s in %" PRIu64 " %s, %u stack%s (symbols: %s)\n",
		titles[tr->kind], memory, mp_bytes_exact(all, sizeof(all), n[0].total_bytes), n[0].total_count,
		tr->kind == MP_TREE_ALLOCATED ? "allocations" : "blocks", tr->stacks, tr->stacks == 1 ? "" : "s",
		mp_calltree_symbolizer(t));
	if (tr->folded_nodes)
		fprintf(out, "  frames under %g%% of it folded into (other): %" PRIu64 " frame%s, %s\n", t->min_percent,
			tr->folded_nodes, tr->folded_nodes == 1 ? "" : "s", mp_bytes_exact(all, sizeof(all), tr->folded_bytes));
	fprintf(out, "  %10s  %6s  %*s  %10s  frame\n", "total", "%", cw, "count", "self");
	for (size_t i = 0; i < tr->count; i++) {
		int32_t p = n[i].parent;
		uint32_t d, run = 0, calls = disp ? recursion(tr, (int32_t)i) : 1;
		uint64_t self_bytes = n[i].self_bytes;
		double pct = n[0].total_bytes ? 100.0 * (double)n[i].total_bytes / (double)n[0].total_bytes : 0;
		if (!disp) /* out of memory: no depth of display, no chains */
			d = n[i].depth;
		else if (i && chained(tr, (int32_t)i)) {
			for (int32_t j = (int32_t)i; chained(tr, j); j = n[j].first_child)
				run++;
			if (run > 1) { /* i .. i + run - 1, one line; the frame after at its level */
				d = disp[p] + 1;
				fprintf(out, "  %10s  %6s  %*s  %10s  %*s... %u frames ...\n", "", "", cw, "", "",
					2 * (int)(d < INDENT_MAX ? d : INDENT_MAX), "", run);
				for (uint32_t k = 0; k < run; k++)
					disp[i + k] = disp[p];
				i += run - 1;
				continue;
			}
			d = disp[i] = disp[p] + 1;
		} else {
			d = disp[i] = i ? disp[p] + 1 : 0;
		}
		frame_text(&n[i], frame, sizeof(frame));
		if (calls > 2) { /* one line, its calls counted; what they called at its level + 1 */
			for (uint32_t k = 1; k < calls; k++) {
				disp[i + k] = d;
				self_bytes += n[i + k].self_bytes; /* (the last one's: the others' are 0) */
			}
			snprintf(frame + strlen(frame), sizeof(frame) - strlen(frame), " x%u (recursion)", calls);
		}
		fprintf(out, "  %10s  %5.1f%%  %*" PRIu64 "  %10s  %*s", mp_bytes_human(total, sizeof(total), n[i].total_bytes),
			pct, cw, n[i].total_count, mp_bytes_human(self, sizeof(self), self_bytes),
			2 * (int)(d < INDENT_MAX ? d : INDENT_MAX), "");
		if (d > INDENT_MAX) /* as deep as the indentation goes: the depth says the rest */
			fprintf(out, "[%" PRIu32 "] ", d);
		fprintf(out, "%s\n", frame);
		if (calls > 2)
			i += calls - 1;
	}
	free(disp);
}

static int cmp_peak(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b; /* {peak bytes, tree index} */

	if (x[0] != y[0])
		return x[0] > y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

int mp_calltree_text(FILE *out, const mp_calltree_t *t, const mp_source_t *src, const mp_solver_t *solver, int kind,
		     int device_set, uint32_t device)
{
	uint64_t (*order)[2] = calloc(t->ntrees ? t->ntrees : 1, sizeof(*order));
	size_t n = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < t->ntrees; i++) { /* the memory ids with the highest peak first */
		const mp_solver_device_t *d;
		if (!wanted(&t->trees[i], kind, device_set, device))
			continue;
		d = mp_solver_find(solver, t->trees[i].memory);
		order[n][0] = d ? d->peak_bytes : 0;
		order[n++][1] = i;
	}
	qsort(order, n, sizeof(*order), cmp_peak);
	for (size_t i = 0; i < n; i++) {
		const mp_tree_t *tr = &t->trees[order[i][1]];
		const mp_memory_info_t *m = mp_source_memory(src, tr->memory);
		print_tree(out, t, tr, m && m->name ? m->name : "?");
	}
	free(order);
	return ferror(out) ? -EIO : 0;
}

static int put(json_t *o, const char *k, json_t *v)
{
	return v ? json_object_set_new(o, k, v) : -1;
}

static json_t *node_json(const mp_tree_node_t *n)
{
	json_t *o = json_object();

	if (!o || put(o, "name", json_string(n->name)) || put(o, "file", json_string(n->file)) ||
	    put(o, "line", n->line > 0 ? json_integer(n->line) : json_null()) ||
	    put(o, "kind", json_string(mp_frame_kind_name(n->kind))) ||
	    put(o, "total_bytes", json_integer((json_int_t)n->total_bytes)) ||
	    put(o, "self_bytes", json_integer((json_int_t)n->self_bytes)) ||
	    put(o, "total_count", json_integer((json_int_t)n->total_count)) ||
	    put(o, "self_count", json_integer((json_int_t)n->self_count)) || put(o, "parent", json_integer(n->parent)) ||
	    put(o, "first_child", json_integer(n->first_child)) ||
	    put(o, "next_sibling", json_integer(n->next_sibling)) || put(o, "depth", json_integer(n->depth)) ||
	    put(o, "folded", json_integer((json_int_t)n->folded))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *tree_json(const mp_tree_t *tr, const mp_source_t *src)
{
	const mp_memory_info_t *m = mp_source_memory(src, tr->memory);
	json_t *o = json_object(), *nodes = json_array();

	if (!o || !nodes || put(o, "memory", json_string(m && m->name ? m->name : "")) ||
	    put(o, "memory_id", json_integer(tr->memory)) || put(o, "stacks", json_integer(tr->stacks)) ||
	    put(o, "folded_nodes", json_integer((json_int_t)tr->folded_nodes)) ||
	    put(o, "folded_bytes", json_integer((json_int_t)tr->folded_bytes)))
		goto fail;
	for (size_t i = 0; i < tr->count; i++)
		if (json_array_append_new(nodes, node_json(&tr->nodes[i])))
			goto fail;
	if (json_object_set_new(o, "nodes", nodes) == 0)
		return o;
	nodes = NULL;
fail:
	json_decref(nodes);
	json_decref(o);
	return NULL;
}

json_t *mp_calltree_json(const mp_calltree_t *t, const mp_source_t *src, int kind, int device_set, uint32_t device)
{
	json_t *o = json_object(), *trees = json_array();

	if (!o || !trees || put(o, "kind", json_string(mp_tree_kind_name(kind))) ||
	    put(o, "min_percent", json_real(t->min_percent)) || put(o, "symbolizer", json_string(mp_calltree_symbolizer(t))) ||
	    put(o, "distinct_stacks", json_integer(t->distinct_stacks)))
		goto fail;
	for (size_t i = 0; i < t->ntrees; i++) /* by memory id */
		if (wanted(&t->trees[i], kind, device_set, device) && json_array_append_new(trees, tree_json(&t->trees[i], src)))
			goto fail;
	if (json_object_set_new(o, "trees", trees) == 0)
		return o;
	trees = NULL;
fail:
	json_decref(trees);
	json_decref(o);
	return NULL;
}

const char *const mp_calltree_csv_header =
	"section,file,device,tree,node,parent,first_child,next_sibling,depth,name,source_file,line,kind,"
	"total_bytes,self_bytes,total_count,self_count,folded";

int mp_calltree_csv(FILE *out, const mp_calltree_t *t, const mp_source_t *src, const char *file, int kind,
		    int device_set, uint32_t device)
{
	for (size_t i = 0; i < t->ntrees; i++) {
		const mp_tree_t *tr = &t->trees[i];
		const mp_memory_info_t *m = mp_source_memory(src, tr->memory);
		if (!wanted(tr, kind, device_set, device))
			continue;
		for (size_t k = 0; k < tr->count; k++) {
			const mp_tree_node_t *n = &tr->nodes[k];
			fputs("call_tree,", out);
			mp_csv_field(out, file);
			fputc(',', out);
			mp_csv_field(out, m && m->name ? m->name : "");
			fprintf(out, ",%s,%zu,%" PRId32 ",%" PRId32 ",%" PRId32 ",%" PRIu32 ",", mp_tree_kind_name(kind), k,
				n->parent, n->first_child, n->next_sibling, n->depth);
			mp_csv_field(out, n->name);
			fputc(',', out);
			mp_csv_field(out, n->file);
			if (n->line > 0)
				fprintf(out, ",%" PRId64, n->line);
			else
				fputc(',', out);
			fprintf(out, ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
				mp_frame_kind_name(n->kind), n->total_bytes, n->self_bytes, n->total_count, n->self_count,
				n->folded);
		}
	}
	return ferror(out) ? -EIO : 0;
}
