/* gen_module.c - write a large synthetic HloProto for scripts/bench_hlo.sh.
 *
 * usage: hlo_gen_module N OUT.hlo.pb [B]
 * N instructions; the first B (default N) define one buffer each: 16
 * parameters, then temporaries (1-64 KiB x 1..256) in one allocation with a
 * sliding live window of 64 buffers, every 8th re-using the one freed just
 * before it (FREE + SHARE_WITH, as XLA emits for in-place ops). About 2 B
 * heap-simulator events; the other instructions only add decoding work. */
#include "hlo_fixture.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc >= 3 ? strtol(argv[1], NULL, 10) : 0;
	long nb = argc >= 4 ? strtol(argv[3], NULL, 10) : n;
	fx_t *fx;
	Xla__BufferAllocationProto *temp, *par;
	Xla__HeapSimulatorTrace *t;
	uint8_t *buf;
	size_t len;
	FILE *fp;
	char name[64];
	const int window = 64;

	if (n < 20 || nb < 20 || nb > n) {
		fprintf(stderr, "usage: hlo_gen_module N(>=20) OUT.hlo.pb [B(20..N)]\n");
		return 2;
	}
	fx = fx_new("generated", 1);
	temp = fx_alloc(fx, 16, 0, 0, 0);
	for (long i = 1; i <= n; i++) {
		int64_t dims[2] = {(i * 37) % 256 + 1, 256 * ((i % 64) + 1)};
		int64_t size = dims[0] * dims[1] * 4;

		snprintf(name, sizeof(name), "fusion.%ld", i);
		fx_instr(fx, i + 1000, name, i <= 16 ? "parameter" : "fusion", fx_array(fx, 11, 2, dims),
			 "jit(train_step)/jit(main)/generated/op");
		if (i > nb)
			continue;
		fx_lb(fx, i, size, i + 1000, 0, NULL, 0);
		if (i <= 16) {
			par = fx_alloc(fx, i - 1, size, 0, 1);
			fx_assign(fx, par, i, 0, size);
		} else {
			fx_assign(fx, temp, i, 0, size);
			temp->size += size;
		}
	}
	t = fx_trace(fx);
	for (long i = 17; i <= nb; i++) {
		snprintf(name, sizeof(name), "fusion.%ld", i);
		if (i % 8 == 0 && i - window > 16) {
			fx_event(fx, t, 1, i - window, 0, name);      /* FREE the dying operand */
			fx_event(fx, t, 2, i, i - window, name);      /* re-use its memory */
		} else {
			fx_event(fx, t, 0, i, 0, name);
			if (i - window > 16) /* a sharer's FREE releases its root's memory */
				fx_event(fx, t, 1, i - window, 0, name);
		}
	}
	for (long i = nb - window + 1; i <= nb; i++)
		if (i > 16)
			fx_event(fx, t, 1, i, 0, "end");
	buf = fx_pack(fx, &len);
	fp = fopen(argv[2], "wb");
	if (!fp || fwrite(buf, 1, len, fp) != len || fclose(fp) != 0) {
		perror(argv[2]);
		return 1;
	}
	printf("%s: %zu bytes, %ld instructions, %zu events\n", argv[2], len, n, t->n_events);
	free(buf);
	fx_free(fx);
	return 0;
}
