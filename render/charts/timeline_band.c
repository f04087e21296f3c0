/* timeline_band.c - in use from a capture's rounds (memprof/rounds.h):
 * what a round held lies between its least and its most, somewhere in
 * its span (its first to its last moment). Each pixel column takes the
 * least and the most of the rounds that meet it, and of the line's own
 * values held into it (a level carried across rounds without moments);
 * the chart draws the least solid and a band up to the most. Drawing the
 * rounds' points as held values instead showed a round's least until
 * its most's moment and its most until its end: a one-round capture
 * looked empty up to its peak. */
#include "timeline_impl.h"

#include <stdlib.h>

const tl_rounds_words_t *tl_rounds_words(int rounds)
{
	static const tl_rounds_words_t words[2] = {
		{"least in use in a round", "most in use in a round", " · from the capture's rounds",
		 " (each round's first marked)"},
		/* a kept run's whole-run file: a block every few rounds, each
		 * ROUND the span since the block before (docs/format.md) */
		{"least in use in a span of rounds", "most in use in a span of rounds", " · from the run's spans of rounds",
		 " (each span's first marked)"},
	};

	return &words[rounds == 2];
}

int tl_band(tl_t *t, const mp_chart_memory_t *mem)
{
	mp_column_range_t *b;

	if (!mem->bands || !t->ncol)
		return 0;
	if (!(b = malloc(t->ncol * sizeof(*b))))
		return MP_ENOMEM;
	for (size_t c = 0; c < t->ncol; c++)
		b[c] = t->use[c];
	for (size_t i = 0; i < mem->nbands; i++) {
		const mp_chart_band_t *r = &mem->bands[i];
		size_t c0, c1;
		if (r->t1_ns < t->t0 || r->t0_ns > t->t1)
			continue;
		c0 = mp_series_column((double)r->t0_ns, (double)t->t0, (double)t->t1, t->ncol);
		c1 = mp_series_column((double)r->t1_ns, (double)t->t0, (double)t->t1, t->ncol);
		for (size_t c = c0; c <= c1 && c < t->ncol; c++) {
			if (!b[c].has || (double)r->lo < b[c].lo)
				b[c].lo = (double)r->lo;
			if (!b[c].has || (double)r->hi > b[c].hi)
				b[c].hi = (double)r->hi;
			b[c].has = 1;
		}
	}
	t->band = b;
	return 0;
}
