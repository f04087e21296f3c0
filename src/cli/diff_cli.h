/* diff_cli.h - what `memprof diff` and `plot --diff` share: the two sides
 * opened and compared (diff_pair.c), and HLO modules (diff_hlo.c). */
#ifndef MEMPROF_CLI_DIFF_H
#define MEMPROF_CLI_DIFF_H

#include "cli.h"
#include "inputs.h"
#include "runs.h"

#include <memprof/diff.h>

#include <stddef.h>
#include <stdint.h>

typedef struct cli_diff_hlo_options {
	const char *module;           /* --module NAME|ID, or NULL */
	int json;
	uint32_t top;                 /* 0: text 20, JSON all */
	const mp_diff_gate_t *gates;
	size_t ngates;
} cli_diff_hlo_options_t;

/* 1 when path names an HloProto (*.hlo.pb[.gz], *.hlo_proto.pb). */
int cli_diff_looks_hlo(const char *path);

/* Diff two HLO modules, print it, check the gates; returns the exit code. */
int cli_diff_hlo(const char *a, const char *b, const cli_diff_hlo_options_t *o);

typedef struct cli_diff_pair {
	cli_inputs_t ca, cb; /* A's and B's input */
	cli_runs_t ra, rb;
	mp_diff_t *diff;     /* owned */
} cli_diff_pair_t;

/* Open a and b with io (each alone: a run's main process, or the process
 * sel[0] / sel[1] picks; sel NULL: main processes), check that they are of
 * the same kind and diff them. Prints what goes wrong (inputs
 * of different kinds, no memory id in common with both lists of names) and
 * returns an exit code. Free with cli_diff_pair_close() in every case. */
int cli_diff_pair_open(cli_diff_pair_t *p, char *a, char *b, const cli_run_select_t sel[2],
		       const cli_inputs_options_t *io, const mp_diff_options_t *dopt);
void cli_diff_pair_close(cli_diff_pair_t *p);

/* plot --diff A B -o out (plot_diff.c): the picture of the diff. Returns
 * an exit code. */
struct mp_plot_options;
int cli_plot_diff(char *a, char *b, const char *out, const struct mp_plot_options *po, const cli_inputs_options_t *io);

#endif
