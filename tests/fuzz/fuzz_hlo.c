/* fuzz_hlo.c - libFuzzer target for the HLO reader: container detection
 * (gzip, XSpace, HloProto), protobuf-c decoding, index building, the replay
 * and the three writers. Any crash, leak or sanitizer report is a bug. */
#include <memprof/hlo.h>

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	mp_hlo_file_t *f = NULL;
	mp_diag_t diag;
	size_t n;

	if (!sink)
		sink = fopen("/dev/null", "w");
	/* The first byte picks the name hint, so both detection paths are fuzzed. */
	if (size < 1)
		return 0;
	if (mp_hlo_file_open_mem(data + 1, size - 1, (data[0] & 1) ? "f.xplane.pb" : NULL, &f, &diag) < 0)
		return 0;
	n = mp_hlo_file_module_count(f);
	for (size_t i = 0; i < n && i < 4; i++) {
		mp_hlo_module_t *m = NULL;
		size_t nc;
		const int64_t *colors;
		size_t idx;

		(void)mp_hlo_file_find(f, mp_hlo_file_module(f, i)->display, &idx, &diag);
		if (mp_hlo_module_load(f, i, &m, &diag) < 0)
			continue;
		colors = mp_hlo_module_colors(m, &nc);
		for (size_t c = 0; c < nc && c < 3; c++) {
			for (int compat = 0; compat < 2; compat++) {
				mp_hlo_options_t opt;
				mp_hlo_result_t *r = NULL;

				mp_hlo_options_init(&opt);
				opt.color = colors[c];
				opt.compat = compat;
				opt.small_buffer_size = (data[0] & 2) ? 0 : 16384;
				if (mp_hlo_analyze(m, &opt, &r, &diag) < 0)
					continue;
				if (sink) {
					mp_hlo_write_text(sink, r, 5, compat);
					mp_hlo_write_csv(sink, r);
					if (compat)
						mp_hlo_write_json(sink, r);
				}
				mp_hlo_result_free(r);
			}
		}
		mp_hlo_module_free(m);
	}
	mp_hlo_file_close(f);
	return 0;
}
