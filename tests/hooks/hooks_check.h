/* hooks_check.h - replay a capture written under `memprof record` and count
 * what the host heap did (independent of the solver/report: a second
 * implementation to check the hooks against). */
#ifndef MP_HOOKS_CHECK_H
#define MP_HOOKS_CHECK_H

#include <stdint.h>

#define HK_WATCH 16
#define HK_REALLOCS 16

typedef struct {
	uint64_t size, align; /* set by the test: requested size to watch, alignment to check (0: none) */
	uint64_t allocs, frees, misaligned;
	uint64_t allocated;   /* allocated bytes of the last alloc of this size */
	uint32_t op;          /* string id of the op of the last alloc of this size */
	char op_name[64];
} hk_watch_t;

typedef struct {
	uint64_t old_addr, new_addr, requested;
} hk_realloc_t;

typedef struct {
	/* input */
	const char *memory;       /* memory name to count ("host" when NULL) */
	int skip_first_thread;    /* ignore events of thread index 0 (the main thread) */
	int nwatch;
	hk_watch_t watch[HK_WATCH];
	/* output */
	uint64_t events, allocs, frees, reallocs, failed, unknown_frees, double_allocs;
	uint64_t regions_added, regions_removed, dropped;
	/* allocations not inside a region of the memory declared at the time
	 * (counted once any region was declared; all threads) */
	uint64_t outside_regions;
	uint64_t peak, live_blocks, live_bytes;
	uint64_t failed_req[8];
	int nfailed;
	hk_realloc_t realloc_list[HK_REALLOCS];
	int nrealloc;
	uint32_t memories, threads;
	int abrupt;
} hk_stats_t;

/* Replay path into st (its input fields set by the caller). Returns 0, or
 * -1 with a message on stderr. */
int hk_replay(const char *path, hk_stats_t *st);

#endif
