/* timeline_hover.c - what a reader pointing into the timeline's plot is
 * told (the HTML report's hover): one hit area for every TL_HOVER_PX
 * pixel columns, noted with the time it spans and what the columns show
 * there (in use, reserved, fragmentation, each as the lowest and highest
 * value in the span), so there are at most plot width / TL_HOVER_PX of
 * them whatever the capture's length. They are rects with neither fill nor
 * stroke: the PNG and the SVG do not change. */
#include "timeline_impl.h"

#include <stdio.h>

#define TL_HOVER_PX 4

/* lo..hi over columns [c0, c1) of one series; 0 when none has a value. */
static int range(const mp_column_range_t *col, size_t c0, size_t c1, double *lo, double *hi)
{
	int have = 0;

	for (size_t c = c0; c < c1; c++) {
		if (!col[c].has)
			continue;
		*lo = have && *lo < col[c].lo ? *lo : col[c].lo;
		*hi = have && *hi > col[c].hi ? *hi : col[c].hi;
		have = 1;
	}
	return have;
}

void tl_hover(tl_t *t, const mp_chart_memory_t *mem)
{
	static const mp_style_t hit = {MP_NONE, MP_NONE, 0, 0};
	double span = (double)(t->t1 - t->t0) / (double)(t->ncol ? t->ncol : 1);

	for (size_t c0 = 0; c0 < t->ncol; c0 += TL_HOVER_PX) {
		size_t c1 = c0 + TL_HOVER_PX < t->ncol ? c0 + TL_HOVER_PX : t->ncol;
		double lo = 0, hi = 0, rlo = 0, rhi = 0, flo = 0, fhi = 0;
		char note[512], a[64], b[64], l[64], h[64], r[64];
		int k;
		long it;
		if (!range(t->use, c0, c1, &lo, &hi))
			continue;
		/* both ends exact, with their unit ("1.00 KiB to 1024 B (1.00
		 * KiB)" read as two values); one when the span held one */
		mp_bytes_exact(l, sizeof(l), (uint64_t)lo);
		mp_bytes_exact(h, sizeof(h), (uint64_t)hi);
		k = snprintf(note, sizeof(note), "%s to %s\nin use: %s%s%s",
			     cx_fmt_at(mem->source, a, sizeof(a), tl_rel(t, t->t0 + (uint64_t)(span * (double)c0))),
			     cx_fmt_at(mem->source, b, sizeof(b), tl_rel(t, t->t0 + (uint64_t)(span * (double)c1))), l,
			     (uint64_t)lo == (uint64_t)hi ? "" : " to ", (uint64_t)lo == (uint64_t)hi ? "" : h);
		if (t->has_resv && range(t->resv, c0, c1, &rlo, &rhi) && k > 0 && (size_t)k < sizeof(note))
			k += snprintf(note + k, sizeof(note) - (size_t)k, "\nreserved: up to %s",
				      mp_bytes_exact(r, sizeof(r), (uint64_t)rhi));
		if (t->has_frag && range(t->frag, c0, c1, &flo, &fhi) && k > 0 && (size_t)k < sizeof(note))
			snprintf(note + k, sizeof(note) - (size_t)k, "\nfragmentation: %.1f %% to %.1f %%", 100 * flo,
				 100 * fhi);
		it = mp_scene_rect(t->a->scene, floor(t->plot.x) + (double)c0, t->plot.y, (double)(c1 - c0), t->plot.h, &hit);
		mp_scene_tag(t->a->scene, it, "timeline-column");
		mp_scene_note(t->a->scene, it, note, (uint32_t)c0);
	}
}
