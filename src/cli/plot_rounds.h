/* plot_rounds.h - `memprof plot --chart timeline` from captures' ROUND
 * sections (format 2.5), without replaying their events (plot_rounds.c). */
#ifndef MEMPROF_CLI_PLOT_ROUNDS_H
#define MEMPROF_CLI_PLOT_ROUNDS_H

#include <memprof/plot.h>

/* Not drawn from rounds: an input has none (written before 2.5: said in
 * one line on stderr), is not a capture, or is short (below
 * CLI_ROUNDS_MIN_EVENTS, unless forced): the caller replays. */
#define CLI_ROUNDS_NONE 100
/* Fewer events than this are replayed (about 0.2 s): a round holds 90 ms,
 * a replay every event, and a short capture's rounds are too few to draw
 * its shape (one round: a band from 0 to its peak). */
#define CLI_ROUNDS_MIN_EVENTS 2000000u

/* The timelines of the captures files[0..n) (titles: labels[i] where not
 * NULL) from their rounds into out, only memory id `device` (a number or
 * a name; NULL: all); force: also short captures (plot --rounds). Returns
 * an exit code (failures said), or CLI_ROUNDS_NONE with nothing written. */
int cli_plot_rounds(char *const *files, const char *const *labels, int n, const mp_plot_options_t *o,
		    const char *device, int force, const char *out);

#endif
