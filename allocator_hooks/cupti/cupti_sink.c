/* cupti_sink.c - where the GPU backend's events go (cupti_sink.h). */
#include "cupti_sink.h"

#include "../annotate/backend.h"

#include <memprof/writer.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const memprof_api_table_t *table; /* the preload's, or */
static void *table_lane;
static mp_writer_t *own;                 /* our own writer on MEMPROF_OUTPUT */
static mp_writer_lane_t *own_lane;

int mp__sink_open(const char **why)
{
	const memprof_api_table_t *t = dlsym(RTLD_DEFAULT, MEMPROF_API_TABLE_SYMBOL);
	const char *path = getenv("MEMPROF_OUTPUT"), *pid_env = getenv("MEMPROF_OUTPUT_PID");
	mp_diag_t diag;

	if (t && t->version >= 2 && t->lane_open) {
		if (!(table_lane = t->lane_open())) {
			*why = "the process is not being recorded (memprof record's capture is off)";
			return -1;
		}
		table = t;
		return 0;
	}
	if (t) {
		*why = "the preload library in this process is older than the GPU backend";
		return -1;
	}
	if (!path || !*path) {
		*why = "no capture to write into (run it under `memprof record --gpu`, or set MEMPROF_OUTPUT)";
		return -1;
	}
	/* memprof record names MEMPROF_OUTPUT for CMD's process only: an
	 * untraced child (--no-children) must not take that name */
	if (pid_env && *pid_env && strtol(pid_env, NULL, 10) != (long)getpid()) {
		*why = "this process is not being recorded (a child of CMD that memprof record does not trace)";
		return -1;
	}
	if (mp_writer_open(&own, path, getenv("MEMPROF_OVERWRITE") != NULL, NULL, &diag) ||
	    mp_writer_lane_open(own, &own_lane)) {
		mp_writer_close(own);
		own = NULL;
		*why = "the capture named by MEMPROF_OUTPUT could not be created";
		return -1;
	}
	return 0;
}

int mp__sink_memory(const char *name, int kind, uint64_t capacity)
{
	if (table)
		return table->memory_declare(name, (memprof_memory_kind_t)kind, capacity);
	return own ? mp_writer_memory(own, name, kind, capacity) : -1;
}

uint64_t mp__sink_origin_ns(void)
{
	if (table)
		return table->origin_ns();
	return own ? mp_writer_origin_ns(own) : 0;
}

int mp__sink_event(int kind, int memory, uint64_t time_ns, uint64_t address, uint64_t bytes)
{
	if (memory < 0)
		return -1;
	if (table)
		return table->lane_event(table_lane, kind, memory, time_ns, address, bytes);
	return own ? mp_writer_lane_event(own_lane, kind, (uint32_t)memory, time_ns, address, bytes) : -1;
}

void mp__sink_hold(uint64_t time_ns)
{
	if (table)
		table->lane_hold(table_lane, time_ns);
	else if (own)
		mp_writer_lane_hold(own_lane, time_ns);
}

void mp__sink_dropped(int memory, uint64_t n)
{
	if (memory < 0)
		return;
	if (table)
		table->lane_dropped(table_lane, memory, n);
	else if (own)
		mp_writer_lane_dropped(own_lane, (uint32_t)memory, n);
}

void mp__sink_close(void)
{
	if (own) {
		int rc = mp_writer_close(own);
		if (rc)
			fprintf(stderr, "memprof: error: the capture could not be completed: %s\n", mp_strerror(rc));
		own = NULL;
	}
	table = NULL;
}
