/* plot_reads.h - mp_plot_capture as `memprof plot` calls it (src/cli/plot_out.c):
 * the layout says what it needs read from each input, the analysis side
 * reads it (mp_replay_read), the layout draws it. */
#ifndef MEMPROF_TEST_PLOT_READS_H
#define MEMPROF_TEST_PLOT_READS_H

#include <memprof/plot.h>
#include <memprof/replay.h>

#include <stdlib.h>

static inline int tr_plot_capture(mp_scene_t **out, const mp_plot_input_t *in, size_t n, const mp_plot_options_t *o,
				  const mp_text_measure_t *m, mp_diag_t *diag)
{
	mp_plot_input_t *c = calloc(n ? n : 1, sizeof(*c));
	mp_replay_t *r = calloc(n ? n : 1, sizeof(*r));
	int rc = c && r ? 0 : MP_ENOMEM;

	*out = NULL;
	for (size_t i = 0; i < n && rc == 0; i++) {
		mp_snapshot_target_t *t = NULL;
		size_t nt = 0;
		int marks = 0;
		c[i] = in[i];
		if ((rc = mp_plot_capture_reads(&c[i], o, &t, &nt, &marks)) == 0)
			rc = mp_replay_read(c[i].source, c[i].name, t, nt, marks, &r[i], diag);
		free(t);
		c[i].replay = &r[i];
	}
	if (rc == 0)
		rc = mp_plot_capture(out, c, n, o, m, diag);
	for (size_t i = 0; r && i < n; i++)
		mp_replay_free(&r[i]);
	free(c);
	free(r);
	return rc;
}

#endif
