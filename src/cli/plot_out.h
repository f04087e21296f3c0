/* plot_out.h - the charts of analysed inputs into a picture file: what
 * `plot`, `report --svg/--png` and `demo` share. */
#ifndef MEMPROF_CLI_PLOT_OUT_H
#define MEMPROF_CLI_PLOT_OUT_H

#include "inputs.h"

#include <memprof/plot.h>
#include <memprof/render.h>

/* Lay out o's charts of every input and write them to path (format from
 * its extension, already checked); says "memprof: wrote PATH (...)" on
 * stderr. Returns an exit code; the message of a failure is printed. */
int cli_plot_write(const cli_inputs_t *ci, const mp_plot_options_t *o, const char *path);

/* A usage error (printed) unless path ends in .svg or .png. */
int cli_plot_check_path(const char *path, const char *option);

#endif
