/* fuzz_cupti.c - the CUPTI side's parsers of outside input: a dump file
 * (memprof/cupti_dump.h) and every buffer in it walked by memprof's
 * iterator and translated (memprof/cupti_translate.h), the events through
 * the time-order queue. Nothing may crash or read out of bounds. */
#include <memprof/cupti_dump.h>
#include <memprof/cupti_translate.h>
#include <memprof/gpu_queue.h>

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
	mp_cupti_translator_t tr;
	mp_gpu_queue_t q;
} fuzz_state_t;

static int on_buffer(void *arg, const uint8_t *buf, size_t valid)
{
	fuzz_state_t *s = arg;

	(void)mp_gpu_queue_buffer(&s->q, &s->tr, buf, valid); /* (out of memory: counted, not a finding) */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static fuzz_state_t s;
	mp_cupti_dump_header_t h;
	mp_gpu_event_t e;
	mp_diag_t diag;

	mp_cupti_translator_init(&s.tr);
	mp_gpu_queue_init(&s.q);
	mp_cupti_dump_parse(data, size, "fuzz", &h, on_buffer, &s, &diag);
	while (mp_gpu_queue_pop_before(&s.q, UINT64_MAX, &e))
		;
	mp_gpu_queue_free(&s.q);
	return 0;
}
