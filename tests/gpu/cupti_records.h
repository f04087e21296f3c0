/* cupti_records.h - CUPTI activity records synthesized for the tests, at the
 * offsets of cupti_layout.h (which the build checks against <cupti.h>
 * where the toolkit is installed), into 8-byte aligned buffers. */
#ifndef MP_TEST_CUPTI_RECORDS_H
#define MP_TEST_CUPTI_RECORDS_H

#include "cupti_layout.h"

#include <stdint.h>
#include <string.h>

typedef struct {
	_Alignas(8) uint8_t data[4096];
	size_t len;
} recbuf_t;

static inline void put32(uint8_t *r, unsigned off, uint32_t v)
{
	memcpy(r + off, &v, 4);
}

static inline void put64(uint8_t *r, unsigned off, uint64_t v)
{
	memcpy(r + off, &v, 8);
}

static inline uint8_t *rec_new(recbuf_t *b, uint32_t kind, size_t size)
{
	uint8_t *r = b->data + b->len;

	memset(r, 0, size);
	put32(r, MP_CUPTI_OFF_KIND, kind);
	b->len += size;
	return r;
}

/* CUpti_ActivityMemory4 */
static inline uint8_t *rec_mem4(recbuf_t *b, uint32_t op, uint32_t mkind, uint32_t device, uint32_t context,
				uint64_t address, uint64_t bytes, uint64_t time)
{
	uint8_t *r = rec_new(b, MP_CUPTI_KIND_MEMORY2, MP_CUPTI_MEM4_SIZE);

	put32(r, MP_CUPTI_MEM4_OPERATION, op);
	put32(r, MP_CUPTI_MEM4_MEMORY_KIND, mkind);
	put32(r, MP_CUPTI_MEM4_CORRELATION, 77);
	put32(r, MP_CUPTI_MEM4_DEVICE, device);
	put32(r, MP_CUPTI_MEM4_CONTEXT, context);
	put64(r, MP_CUPTI_MEM4_ADDRESS, address);
	put64(r, MP_CUPTI_MEM4_BYTES, bytes);
	put64(r, MP_CUPTI_MEM4_TIMESTAMP, time);
	return r;
}

/* ... an asynchronous one, from a pool of pool_size bytes at pool */
static inline void rec_mem4_async(recbuf_t *b, uint32_t op, uint32_t device, uint64_t address, uint64_t bytes,
				  uint64_t time, uint64_t pool, uint64_t pool_size, uint64_t utilized)
{
	uint8_t *r = rec_mem4(b, op, MP_CUPTI_MEM_DEVICE, device, 1, address, bytes, time);

	put32(r, MP_CUPTI_MEM4_IS_ASYNC, 1);
	put64(r, MP_CUPTI_MEM4_POOL_ADDRESS, pool);
	put64(r, MP_CUPTI_MEM4_POOL_SIZE, pool_size);
	put64(r, MP_CUPTI_MEM4_POOL_UTILIZED, utilized);
}

/* CUpti_ActivityMemoryPool3 */
static inline void rec_pool3(recbuf_t *b, uint32_t op, uint32_t device, uint64_t address, uint64_t size,
			     uint64_t time)
{
	uint8_t *r = rec_new(b, MP_CUPTI_KIND_MEMORY_POOL, MP_CUPTI_POOL3_SIZE);

	put32(r, MP_CUPTI_POOL3_OPERATION, op);
	put32(r, MP_CUPTI_POOL3_DEVICE, device);
	put64(r, MP_CUPTI_POOL3_ADDRESS, address);
	put64(r, MP_CUPTI_POOL3_BYTES, size);
	put64(r, MP_CUPTI_POOL3_TIMESTAMP, time);
}

/* CUpti_ActivityMemory (legacy) */
static inline void rec_mem1(recbuf_t *b, uint32_t mkind, uint32_t device, uint64_t address, uint64_t bytes,
			    uint64_t start, uint64_t end)
{
	uint8_t *r = rec_new(b, MP_CUPTI_KIND_MEMORY, MP_CUPTI_MEM1_SIZE);

	put32(r, MP_CUPTI_MEM1_MEMORY_KIND, mkind);
	put32(r, MP_CUPTI_MEM1_DEVICE, device);
	put32(r, MP_CUPTI_MEM1_CONTEXT, 1);
	put64(r, MP_CUPTI_MEM1_ADDRESS, address);
	put64(r, MP_CUPTI_MEM1_BYTES, bytes);
	put64(r, MP_CUPTI_MEM1_START, start);
	put64(r, MP_CUPTI_MEM1_END, end);
}

/* CUpti_ActivityAPI (a runtime call): a kind memprof skips */
static inline void rec_api(recbuf_t *b)
{
	rec_new(b, MP_CUPTI_KIND_RUNTIME, MP_CUPTI_API_SIZE);
}

#endif
