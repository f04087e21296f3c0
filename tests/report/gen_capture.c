/* gen_capture.c - writes synthetic .memprof captures with the capture writer:
 * allocations of random sizes and ops inside declared regions, with a
 * steady live set, steps, and optional failed allocations. Used by the
 * report tests and scripts/bench_report.sh.
 *
 *   memprof_gen_capture OUT [--events N] [--live L] [--regions R]
 *                           [--steps S] [--oom K] [--seed X] [--stacks K]
 *                           [--round-every E] [--grow 1] [--untagged 1]
 *
 * The first L allocations build the live set; then each free of a random
 * live block is followed by an allocation, until N events are written.
 * Blocks occupy 1 KiB slots (sizes 16 B .. 1 KiB) in R regions sized so the
 * pool is half full at L live blocks. With --stacks K, every allocation
 * carries one of K call stacks of 24 made-up return addresses (no module
 * map: the report names them by address), which share their outer frames
 * as the stacks of a program do: the frame at depth d (0 outermost) is one
 * of 1 + d * d (scripts/bench_tree.sh). With --round-every E, a flush
 * round is ended by hand every E events (mp_writer_flush), so that a
 * capture written in seconds has the rounds of a long recording: 40,000
 * rounds, an hour's at the writer's 90 ms (scripts/bench_timeline.sh).
 * With --grow 1 the live set grows from L/2 to L over the run, so that
 * the peak comes near the end (an OOM run's shape: scripts/bench_seek.sh);
 * with --untagged 1 the allocations carry no op, region type, dtype or
 * shape (a C program's capture).
 */
#include <memprof/capture.h>

#include "test_rand.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOT 1024u

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t rnd(uint64_t n)
{
	return mp_test_xorshift(&rng) % n;
}

static int arg_u64(const char *s, uint64_t *v)
{
	char *end;

	*v = strtoull(s, &end, 10);
	return *s && !*end ? 0 : -1;
}

int main(int argc, char **argv)
{
	uint64_t events = 1000000, live = 10000, regions = 4, steps = 10, ooms = 0, written = 0, nstacks = 0;
	uint64_t round_every = 0;
	uint64_t grow = 0, untagged = 0;
	uint32_t *stack_ids = NULL;
	static const char *const opnames[] = {"matmul", "conv2d", "relu", "softmax", "embedding", "layernorm", "add", "gather"};
	static const char *const dtypes[] = {"float", "half", "int32"};
	static const char *const shapes[] = {"[1024,1024]", "[64,3,224,224]", "[4096]", "[8,128,768]"};
	uint32_t op[8], dt[3], sh[4];
	mp_writer_options_t wo;
	mp_writer_t *w;
	mp_diag_t diag;
	uint32_t *freeslot, *liveslot;
	uint64_t nslots, per_region, nfree, nlive = 0, step_every, next_oom, oom_every;
	int mem, rc;

	if (argc < 2) {
		fprintf(stderr, "usage: %s OUT [--events N] [--live L] [--regions R] [--steps S] [--oom K] [--seed X] "
			"[--stacks K] [--round-every E]\n", argv[0]);
		return 2;
	}
	for (int i = 2; i + 1 < argc; i += 2) {
		uint64_t v;
		if (arg_u64(argv[i + 1], &v) < 0)
			return fprintf(stderr, "bad value '%s'\n", argv[i + 1]), 2;
		if (!strcmp(argv[i], "--events"))
			events = v;
		else if (!strcmp(argv[i], "--live"))
			live = v;
		else if (!strcmp(argv[i], "--regions"))
			regions = v ? v : 1;
		else if (!strcmp(argv[i], "--steps"))
			steps = v ? v : 1;
		else if (!strcmp(argv[i], "--oom"))
			ooms = v;
		else if (!strcmp(argv[i], "--seed"))
			rng = v ? v : 1;
		else if (!strcmp(argv[i], "--stacks"))
			nstacks = v;
		else if (!strcmp(argv[i], "--round-every"))
			round_every = v;
		else if (!strcmp(argv[i], "--grow"))
			grow = v;
		else if (!strcmp(argv[i], "--untagged"))
			untagged = v;
		else
			return fprintf(stderr, "unknown option '%s'\n", argv[i]), 2;
	}
	per_region = (2 * live + regions - 1) / regions + 1;
	nslots = per_region * regions;
	freeslot = malloc(nslots * sizeof(*freeslot));
	liveslot = malloc((live + 1) * sizeof(*liveslot));
	if (!freeslot || !liveslot)
		return fprintf(stderr, "out of memory\n"), 1;
	for (uint64_t i = 0; i < nslots; i++)
		freeslot[i] = (uint32_t)(nslots - 1 - i);
	nfree = nslots;

	memset(&wo, 0, sizeof(wo));
	wo.full_policy = MP_WRITER_WAIT;
	wo.command_line = "memprof_gen_capture";
	mp_diag_clear(&diag);
	if ((rc = mp_writer_open(&w, argv[1], 1, &wo, &diag)) < 0)
		return fprintf(stderr, "%s: %s\n", argv[1], diag.text[0] ? diag.text : mp_strerror(rc)), 3;
	mem = mp_writer_memory(w, "pool", MP_MEMORY_DEVICE, nslots * SLOT);
	if (mem < 0)
		return fprintf(stderr, "memory: %s\n", mp_strerror(mem)), 1;
	for (int i = 0; i < 8; i++)
		op[i] = mp_writer_intern(w, opnames[i]);
	for (int i = 0; i < 3; i++)
		dt[i] = mp_writer_intern(w, dtypes[i]);
	for (int i = 0; i < 4; i++)
		sh[i] = mp_writer_intern(w, shapes[i]);
	if (nstacks && !(stack_ids = malloc(nstacks * sizeof(*stack_ids))))
		return fprintf(stderr, "out of memory\n"), 1;
	for (uint64_t k = 0; k < nstacks; k++) {
		uint64_t pcs[24];
		for (uint64_t d = 0; d < 24; d++) /* innermost first: pcs[23] is the outermost */
			pcs[23 - d] = 0x400000 + d * 0x10000 + (k % (1 + d * d)) * 0x10;
		if ((rc = mp_writer_stack(w, pcs, 24, &stack_ids[k])) < 0)
			return fprintf(stderr, "stack: %s\n", mp_strerror(rc)), 1;
	}
	for (uint64_t r = 0; r < regions; r++, written++)
		mp_writer_region_add(w, (uint32_t)mem, (r + 1) << 40, per_region * SLOT);
	step_every = events / steps ? events / steps : 1;
	oom_every = ooms ? events / (ooms + 1) : UINT64_MAX;
	next_oom = oom_every;
	mp_writer_step(w, 0);
	written++;
	while (written < events) {
		if (written % step_every == 0) {
			mp_writer_step(w, (int64_t)(written / step_every));
			written++;
			continue;
		}
		if (written >= next_oom) {
			if (!untagged)
				mp_writer_set_context(w, op[rnd(8)], MP_REGION_TEMP, dt[0], sh[0]);
			if (nstacks)
				mp_writer_next_stack(w, stack_ids[rnd(nstacks)]);
			/* 64 KiB: fits in the free bytes, not in any free chunk */
			mp_writer_alloc_failed(w, (uint32_t)mem, 64 * 1024);
			next_oom += oom_every;
			written++;
			continue;
		}
		if (nlive >= (grow ? live / 2 + (uint64_t)((double)(live / 2) * (double)written / (double)events) : live) ||
		    (nlive > 0 && nfree == 0)) {
			uint64_t k = rnd(nlive);
			uint32_t slot = liveslot[k];
			liveslot[k] = liveslot[--nlive];
			freeslot[nfree++] = slot;
			mp_writer_free(w, (uint32_t)mem, (((uint64_t)slot / per_region) + 1) << 40 | (slot % per_region) * SLOT);
		} else {
			uint64_t k = rnd(nfree), req = 16 * (1 + rnd(SLOT / 16)), alloc = (req + 255) & ~255ull;
			uint32_t slot = freeslot[k];
			int o = (int)rnd(8);
			freeslot[k] = freeslot[--nfree];
			liveslot[nlive++] = slot;
			if (alloc > SLOT)
				alloc = SLOT;
			if (!untagged)
				mp_writer_set_context(w, op[o], 1 + o % 4, dt[o % 3], sh[o % 4]);
			if (nstacks)
				mp_writer_next_stack(w, stack_ids[rnd(nstacks)]);
			mp_writer_alloc(w, (uint32_t)mem, (((uint64_t)slot / per_region) + 1) << 40 | (slot % per_region) * SLOT, req,
					alloc);
		}
		written++;
		if (round_every && written % round_every == 0)
			mp_writer_flush(w);
	}
	rc = mp_writer_close(w);
	free(freeslot);
	free(liveslot);
	free(stack_ids);
	if (rc < 0)
		return fprintf(stderr, "%s: %s\n", argv[1], mp_strerror(rc)), 3;
	return 0;
}
