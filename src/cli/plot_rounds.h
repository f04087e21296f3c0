/* plot_rounds.h - `memprof plot --chart timeline` from captures' ROUND
 * sections (format 2.5), without replaying their events (plot_rounds.c). */
#ifndef MEMPROF_CLI_PLOT_ROUNDS_H
#define MEMPROF_CLI_PLOT_ROUNDS_H

#include <memprof/plot.h>

/* Not drawn from rounds: an input has none (written before 2.5: said in
 * one line on stderr) or is not a capture; the caller replays. */
#define CLI_ROUNDS_NONE 100

/* The timelines of the captures files[0..n) (titles: labels[i] where not
 * NULL) from their rounds into out, only memory id `device` (a number or
 * a name; NULL: all). Returns an exit code (failures said), or
 * CLI_ROUNDS_NONE with nothing written. */
int cli_plot_rounds(char *const *files, const char *const *labels, int n, const mp_plot_options_t *o,
		    const char *device, const char *out);

#endif
