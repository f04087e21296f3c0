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

/* plot --chart flame (plot_flame.c): the call trees of kind (mp_tree_kind_t)
 * of every input (ci->trees, opened with --tree) as icicles, one per memory
 * id with a peak, into path. Returns an exit code; failures are printed. */
int cli_plot_flame(const cli_inputs_t *ci, int kind, const mp_plot_options_t *o, const char *path);

/* What the picture reads besides the solver (memprof/replay.h) of the
 * capture at path whose solver s was sought from a checkpoint (inputs.h:
 * ci->sought): from a source of its own, read from the last checkpoint
 * with its blocks' tags before the earliest target (plot_seek.c), else
 * from the first event. *out: the caller's (mp_replay_free). Returns 0 or
 * an error, diag filled. */
int cli_plot_seek_reads(const char *path, const mp_solver_t *s, const mp_snapshot_target_t *t, size_t nt, int marks,
			mp_replay_t *out, mp_diag_t *diag);

/* What the picture reads besides the solver s of input path's window
 * (report_window.h; win: the window's source): the maps from the state at
 * the window's start -- a kept run's first checkpoint, or a full
 * capture's checkpoint before the earliest map (else its first event) --
 * so that they equal the full capture's; the phases and steps from win.
 * *out: the caller's (mp_replay_free). 0 or an error, diag filled. */
int cli_plot_window_reads(const char *path, mp_source_t *win, const mp_solver_t *s, const mp_snapshot_target_t *t,
			  size_t nt, int marks, mp_replay_t *out, mp_diag_t *diag);

/* Warn (once a run) when the charts' font is not installed: the picture
 * is drawn with another, and its bytes then depend on the machine. */
void cli_picture_font_check(const char *path);

/* Paint scene into path (format from its extension) and say so on stderr,
 * "memprof: wrote PATH (WxH px, SIZE)", so that stdout stays what was
 * asked for. Returns 0 or the painter's error with diag filled. */
int cli_picture_write(const mp_scene_t *scene, const char *path, mp_diag_t *diag);

/* A picture's side in px for option opt: least to MP_RENDER_MAX_SIDE, or a
 * usage error (printed) and -1. Widths start at MP_PLOT_MIN_WIDTH; a
 * height too small for the charts is judged by the layout, which says how
 * much they need. */
int cli_parse_px(const char *s, const char *opt, uint32_t least, double *out);

/* A usage error (printed) unless path ends in .svg, .png or .html (the
 * HTML report: the same picture with hover details, zoom and a table). */
int cli_plot_check_path(const char *path, const char *option);

#endif
