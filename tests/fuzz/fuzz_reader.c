/* fuzz_reader.c - libFuzzer target for the .memprof reader: any bytes must
 * give events or a clean error, never a crash, a leak or undefined
 * behaviour. Reads every event, touching the strings and memory ids a
 * consumer would. */
#include <memprof/capture.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mp_capture_t *cap;
	mp_source_t *src;
	mp_diag_t diag;
	mp_event_t ev;
	size_t sink = 0;
	int rc, pass;

	if (mp_capture_open_memory(&cap, data, size, "fuzz.memprof", &diag))
		return 0;
	src = mp_capture_source(cap);
	sink += strlen(mp_capture_header(cap)->command_line);
	/* Two passes: the second exercises rewind with the tables kept. */
	for (pass = 0; pass < 2; pass++) {
		while ((rc = mp_source_next(src, &ev, &diag)) == 1) {
			const mp_memory_info_t *m = mp_source_memory(src, ev.memory);
			sink += strlen(mp_source_string(src, ev.op)) + strlen(mp_source_string(src, ev.shape));
			if (m)
				sink += strlen(m->name);
			if (ev.stack) {
				/* every stack id an event carries is defined */
				const uint64_t *pcs;
				uint32_t n, i;
				if (mp_capture_stack(cap, ev.stack, &pcs, &n))
					__builtin_trap();
				for (i = 0; i < n; i++) {
					const mp_capture_module_t *mod = mp_capture_module_at(cap, pcs[i]);
					sink += pcs[i] + (mod ? strlen(mod->path) + mod->build_id_len : 0);
				}
			}
		}
		if (mp_source_rewind(src, &diag))
			break;
	}
	mp_capture_close(cap);
	return sink == (size_t)-1;
}
