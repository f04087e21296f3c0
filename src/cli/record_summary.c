/* record_summary.c - the line `memprof record` ends with (see record.h).
 *
 * The figures are the ones the capture's writer kept while it recorded
 * (memprof/capsummary.h): reading them costs one read of the file's end
 * and one small block's inflate, where reading the capture back cost
 * about as long as the program ran (alloc_bench -t 2: 2 s for 41 M
 * events). A capture without them (written before format 2.1, or by a
 * writer whose tally ran out of memory) is read back and replayed by the
 * same rules
 * (mp_capture_summary_replay). They are counted as `memprof report` counts
 * them -- a realloc is a free and an allocation, bytes are what the
 * allocator reserved -- so that the two agree to the byte; the peak of
 * requested bytes is given beside.
 */
#include "record.h"

#include <memprof/capsummary.h>
#include <memprof/output/units.h>

#include "cli.h"
#include "runs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mp_cli_record_summary(const char *path)
{
	const mp_summary_memory_t *host, *mapped, *py;
	char b1[64], b2[64], b3[64], b4[64], b5[64], maps[128], pys[160], stack_text[64], why[160], end[176];
	mp_capture_summary_t s;
	mp_diag_t diag;
	mp_summary_memory_t none;

	if (mp_capture_summary_read(path, &s, &diag) < 0 || !s.available) {
		mp_capture_summary_free(&s);
		if (mp_capture_summary_replay(path, &s, &diag) < 0) {
			mp_cli_diag(&diag);
			mp_capture_summary_free(&s);
			return;
		}
	}
	memset(&none, 0, sizeof(none));
	host = mp_capture_summary_find(&s, "host");
	mapped = mp_capture_summary_find(&s, "host_mmap");
	py = mp_capture_summary_find(&s, "pymalloc");
	if (!host)
		host = &none;
	maps[0] = pys[0] = stack_text[0] = '\0';
	/* CPython's small objects, inside pymalloc's arenas (docs/hooks.md,
	 * "Python's allocator"): the objects' peak, not the arenas' */
	if (py && py->allocations + py->reallocs)
		snprintf(pys, sizeof(pys), "; Python objects (pymalloc): peak %s in use, %" PRIu64 " live at the end",
			 mp_bytes_exact(b5, sizeof(b5), py->peak_bytes), py->live_blocks);
	if (mapped && mapped->allocations + mapped->reallocs)
		snprintf(maps, sizeof(maps), "; mapped by the program (host_mmap): peak %s",
			 mp_bytes_exact(b3, sizeof(b3), mapped->peak_bytes));
	end[0] = '\0';
	if (s.write_errno) /* its writer stopped and said why */
		snprintf(end, sizeof(end), " (%s)",
			 cli_write_failed_text(s.write_errno, s.write_offset, s.complete_ns, why, sizeof(why)));
	else if (!s.ended_cleanly)
		snprintf(end, sizeof(end), " (the capture ended abruptly)");
	if (s.stacks)
		snprintf(stack_text, sizeof(stack_text), "; %" PRIu64 " distinct call stacks", s.stacks);
	fprintf(stderr,
		"memprof: %" PRIu64 " events; host heap: %" PRIu64 " allocations, %" PRIu64 " frees, %" PRIu64
		" failed, peak %s in use, %s requested; live at the end: %" PRIu64 " blocks, %s%s%s%s%s\n",
		s.events, host->allocations + host->reallocs, host->frees + host->reallocs, host->failed,
		mp_bytes_exact(b1, sizeof(b1), host->peak_bytes), mp_bytes_exact(b4, sizeof(b4), host->peak_requested),
		host->live_blocks, mp_bytes_exact(b2, sizeof(b2), host->live_bytes), pys, maps, stack_text,
		end);
	if (host->dropped)
		mp_cli_warning("%" PRIu64 " host heap events were not recorded (dropped), so the figures above "
			       "are incomplete; docs/hooks.md says when this happens",
			       host->dropped);
	mp_capture_summary_free(&s);
}
