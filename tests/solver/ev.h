/* ev.h - small event builders shared by the solver and report tests. */
#ifndef MEMPROF_TEST_EV_H
#define MEMPROF_TEST_EV_H

#include <memprof/event.h>

#include <string.h>

static inline mp_event_t ev_make(int kind, uint32_t mem, uint64_t t, int64_t step)
{
	mp_event_t e;

	memset(&e, 0, sizeof(e));
	e.kind = (uint8_t)kind;
	e.memory = mem;
	e.time_ns = t;
	e.step = step;
	return e;
}

static inline mp_event_t ev_alloc(uint32_t mem, uint64_t t, uint64_t addr, uint64_t req, uint64_t alloc)
{
	mp_event_t e = ev_make(MP_EV_ALLOC, mem, t, 0);

	e.address = addr;
	e.requested_bytes = req;
	e.allocated_bytes = alloc;
	return e;
}

static inline mp_event_t ev_free(uint32_t mem, uint64_t t, uint64_t addr)
{
	mp_event_t e = ev_make(MP_EV_FREE, mem, t, 0);

	e.address = addr;
	return e;
}

static inline mp_event_t ev_region(uint32_t mem, uint64_t t, uint64_t base, uint64_t size)
{
	mp_event_t e = ev_make(MP_EV_REGION_ADD, mem, t, 0);

	e.address = base;
	e.requested_bytes = size;
	return e;
}

static inline mp_event_t ev_region_rm(uint32_t mem, uint64_t t, uint64_t base)
{
	mp_event_t e = ev_make(MP_EV_REGION_REMOVE, mem, t, 0);

	e.address = base;
	return e;
}

static inline mp_event_t ev_failed(uint32_t mem, uint64_t t, uint64_t req, uint32_t op)
{
	mp_event_t e = ev_make(MP_EV_ALLOC_FAILED, mem, t, 0);

	e.requested_bytes = req;
	e.op = op;
	return e;
}

#endif
