/* labels.c - greedy label placement: the most important label first, each
 * at the first of its candidate positions that is on the canvas and clear
 * of everything placed before; the ones left without a place are dropped
 * rather than drawn over another. */
#include <memprof/error.h>
#include <memprof/layout.h>

#include <stdlib.h>

typedef struct order {
	size_t i;
	double priority;
} order_t;

static int by_priority(const void *a, const void *b)
{
	const order_t *x = a, *y = b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i; /* stable */
}

/* Move a box sticking out of bounds back in, if it is small enough. */
static void slide_inside(mp_box_t *b, const mp_box_t *bounds)
{
	if (b->x + b->w > bounds->x + bounds->w)
		b->x = bounds->x + bounds->w - b->w;
	if (b->x < bounds->x)
		b->x = bounds->x;
	if (b->y + b->h > bounds->y + bounds->h)
		b->y = bounds->y + bounds->h - b->h;
	if (b->y < bounds->y)
		b->y = bounds->y;
}

static int clear_of(const mp_box_t *b, const mp_box_t *others, size_t n, double gap)
{
	for (size_t i = 0; i < n; i++)
		if (mp_box_overlap(b, &others[i], gap))
			return 0;
	return 1;
}

long mp_labels_place(mp_label_t *labels, size_t n, const mp_box_t *bounds, const mp_box_t *obstacles,
		     size_t nobstacles, double gap)
{
	order_t *ord = malloc((n ? n : 1) * sizeof(*ord));
	mp_box_t *placed = malloc((n ? n : 1) * sizeof(*placed));
	size_t np = 0;

	if (!ord || !placed) {
		free(ord);
		free(placed);
		return MP_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		ord[i].i = i;
		ord[i].priority = labels[i].priority;
		labels[i].placed = 0;
	}
	qsort(ord, n, sizeof(*ord), by_priority);
	for (size_t k = 0; k < n; k++) {
		mp_label_t *l = &labels[ord[k].i];

		for (size_t c = 0; c < l->ncand && c < MP_LABEL_CANDIDATES; c++) {
			mp_box_t b = l->cand[c];
			b.w = l->w;
			b.h = l->h;
			if (l->slide)
				slide_inside(&b, bounds);
			if (!mp_box_inside(&b, bounds) || !clear_of(&b, obstacles, nobstacles, gap) ||
			    !clear_of(&b, placed, np, gap))
				continue;
			l->placed = 1;
			l->box = b;
			placed[np++] = b;
			break;
		}
	}
	free(ord);
	free(placed);
	return (long)np;
}
