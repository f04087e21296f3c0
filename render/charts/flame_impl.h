/* flame_impl.h - the flame chart's parts (memprof/flame.h): the tree laid
 * out in bytes and pixels (flame_tree.c), colours and labels
 * (flame_style.c), the drawing (flame.c). Internal to memprof_layout. */
#ifndef MEMPROF_FLAME_IMPL_H
#define MEMPROF_FLAME_IMPL_H

#include <memprof/flame.h>

/* What becomes of a node. */
enum {
	FL_DRAWN = 1, /* a frame of its own */
	FL_NARROW,    /* under 1 px: merged with its narrow neighbours */
	FL_DEEP,      /* its row is past the depth drawn */
	FL_UNDER,     /* inside a narrow or deep frame: not drawn, not counted */
};

typedef struct fl_tree {
	const mp_flame_node_t *nodes;
	size_t n;
	uint32_t *order;  /* order[0] = the root, then each node's children, in drawing order */
	uint32_t *first;  /* node i's children are order[first[i] .. first[i + 1]) */
	uint32_t *depth;
	uint64_t *start;  /* bytes before the node, from the root's left edge */
	uint64_t *span;   /* its bytes as drawn: its total, cut at its parent's right edge */
	uint8_t *state;   /* FL_* */
	double width;     /* the plot's width, whole px */
	uint32_t cap;     /* rows drawn at most */
	uint32_t rows;    /* rows with something drawn */
	uint64_t narrow_frames, narrow_bytes; /* frames under 1 px, outermost ones */
	uint64_t deep_frames, deep_bytes;     /* frames in the first row past the cap */
	int merged;       /* 1 when a run of narrow frames is drawn */
	unsigned kinds;   /* bit k: a frame of kind k is drawn */
} fl_tree_t;

/* A node's kind, unknown values read as MP_FLAME_UNKNOWN. */
static inline int fl_kind(const mp_flame_node_t *node)
{
	return node->kind >= 0 && node->kind < MP_FLAME_KINDS ? node->kind : MP_FLAME_UNKNOWN;
}

static inline const char *fl_name(const mp_flame_node_t *node)
{
	return node->name ? node->name : "?";
}

/* The pixel edge, from the plot's left, of a byte offset: whole pixels. */
double fl_px(const fl_tree_t *t, uint64_t bytes);

/* Lay the tree out for a plot `width` px wide, at most `cap` rows (>= 1).
 * The root must have bytes (n >= 1, nodes[0].total_bytes > 0). Returns 0,
 * MP_EUSAGE or MP_ENOMEM; free with fl_tree_free() in every case. */
int fl_tree_build(fl_tree_t *t, const mp_flame_node_t *nodes, size_t n, double width, uint32_t cap, int sort);
void fl_tree_free(fl_tree_t *t);

/* 0 when nodes[] is a tree as memprof/flame.h says (each parent before its
 * child, one root first), else MP_EUSAGE. */
int fl_tree_check(const mp_flame_node_t *nodes, size_t n);

/* The fill of a frame of this kind at shade 0..FL_SHADES-1. */
#define FL_SHADES 8
uint32_t fl_color(int kind, unsigned shade);
/* The shade a name hashes to. */
unsigned fl_shade(const char *name);
#define FL_MERGED_COLOR 0xB4B4B4 /* runs of frames under 1 px */
#define FL_ROOT_COLOR 0xD4D4D4   /* the root: everything, of no kind */

/* name shortened to fit max_w px at size px, in the middle, keeping a
 * "(file:line)" tail whole while at least 3 characters of what comes
 * before it fit; into out (outsize > strlen(name) + 4). Returns 1 when a
 * label is worth drawing: the name whole, or 3 characters of it at
 * least. */
int fl_label(const mp_text_measure_t *m, const char *name, double size, double max_w, char *out, size_t outsize);

#endif
