/* cupti_sink.h - where the GPU backend's events go (internal).
 *
 * One capture, one clock: in a process that `memprof record` traces, the
 * events go to the preload library's writer, through the table it exports
 * (memprof_api_table_v1, version 2 and later: a lane on its writer). In a
 * process started by another launcher with only CUDA_INJECTION64_PATH set,
 * the backend opens its own writer on MEMPROF_OUTPUT, as libmemprof does.
 */
#ifndef MP_CUPTI_SINK_H
#define MP_CUPTI_SINK_H

#include <stdint.h>

/* Find or open the capture and a lane on it. 0, or -1 with why set to a
 * static sentence (no capture: nothing to record into). */
int mp__sink_open(const char **why);
/* The memory id of a name (declared on first use) or -1. */
int mp__sink_memory(const char *name, int kind, uint64_t capacity);
/* CLOCK_MONOTONIC of the capture's time 0. */
uint64_t mp__sink_origin_ns(void);
/* An event at time_ns (capture time), in time order; the hold; dropped counts. */
int mp__sink_event(int kind, int memory, uint64_t time_ns, uint64_t address, uint64_t bytes);
void mp__sink_hold(uint64_t time_ns);
void mp__sink_dropped(int memory, uint64_t n);
/* At exit, after the last event: close the capture if it is ours. */
void mp__sink_close(void);

#endif
