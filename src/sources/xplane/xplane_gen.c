/* xplane_gen.c - memprof_xplane_gen: writes a synthetic TF-style XSpace
 * with BFC-like MemoryAllocation/MemoryDeallocation events on a /host:CPU
 * plane, streaming (for benchmarks: 10 million events make ~1 GB) and
 * deterministic (the seed fixes every byte). Not a test oracle: it only
 * produces inputs.
 *
 *   memprof_xplane_gen -o big.xplane.pb [--events N] [--allocators K]
 *       [--live N] [--seed S] [--str] [--noise N] [--ops N]
 *
 * Each allocator gets its own line (thread) and its own random stream, so
 * a line can be generated twice: once to measure its encoded size (lengths
 * precede contents in the wire format), once to write it.
 */
#include <memprof/protowire.h>
#include <memprof/xplane_export.h>

#include "xplane_internal.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ST_ALLOC_NAME = 1, ST_RESERVED, ST_ALLOCATED, ST_AVAILABLE, ST_FRAG, ST_PEAK, ST_REQ, ST_ALLOCB,
       ST_ADDR, ST_OP, ST_ID, ST_REGION, ST_DTYPE, ST_SHAPE, ST_GROUP, ST_COUNT };
static const char *const stat_names[ST_COUNT] = {
	"", "allocator_name", "bytes_reserved", "bytes_allocated", "bytes_available", "fragmentation",
	"peak_bytes_in_use", "requested_bytes", "allocation_bytes", "addr", "tf_op", "id", "region_type",
	"data_type", "shape", "group_id",
};
#define NOPS 512
#define NSHAPES 64
static const char *const regions[] = {"output", "temp", "persist", "dynamic"};

typedef struct gen {
	uint64_t events, live_target, seed, noise;
	uint32_t nops;     /* distinct op names (<= NOPS) */
	uint32_t allocators;
	int str;
	char ops[NOPS][48], shapes[NSHAPES][24], alloc_names[256][32];
	uint64_t op_bytes[NOPS]; /* requested bytes of each op's tensor */
	/* ref ids: stat metadata ids of the strings */
	uint32_t op_ref, shape_ref, region_ref, alloc_ref;
} gen_t;

typedef struct line_state {
	uint64_t rng;
	uint64_t heap, peak, limit, next_addr;
	uint64_t *live_addr, *live_size;
	uint64_t nlive;
} line_state_t;

static uint64_t rnd(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void put_stat_int(mp_pw_buf_t *b, mp_pw_buf_t *tmp, uint32_t id, int64_t v)
{
	tmp->len = 0;
	mp_pw_put_uint(tmp, 1, id);
	mp_pw_put_uint(tmp, 4, (uint64_t)v);
	mp_pw_put_msg(b, 4, tmp);
}

static void put_stat_str(const gen_t *g, mp_pw_buf_t *b, mp_pw_buf_t *tmp, uint32_t id, const char *s, uint32_t ref)
{
	tmp->len = 0;
	mp_pw_put_uint(tmp, 1, id);
	if (g->str)
		mp_pw_put_str(tmp, 5, s);
	else
		mp_pw_put_uint(tmp, 7, ref);
	mp_pw_put_msg(b, 4, tmp);
}

/* Encode the j-th event of line k into ev (an XLine.events field). */
static void gen_event(const gen_t *g, line_state_t *ls, uint32_t k, uint64_t j, mp_pw_buf_t *ev, mp_pw_buf_t *tmp,
		      mp_pw_buf_t *body)
{
	uint64_t r = rnd(&ls->rng), size, req, addr;
	int is_alloc = ls->nlive == 0 || (ls->nlive < 2 * g->live_target && (r & 1));
	/* like a training step: each op makes the same tensor every time, so
	 * (op, shape, region, dtype, size) repeat and groups stay few */
	uint32_t op = (uint32_t)((r >> 8) % g->nops), shape = op % NSHAPES;
	int region = (int)(op & 3);
	double frag;

	if (is_alloc) {
		req = g->op_bytes[op];
		size = (req + 255) & ~(uint64_t)255;
		addr = ls->next_addr;
		ls->next_addr += size;
		ls->live_addr[ls->nlive] = addr;
		ls->live_size[ls->nlive] = size;
		ls->nlive++;
		ls->heap += size;
		if (ls->heap > ls->peak)
			ls->peak = ls->heap;
	} else {
		uint64_t i = rnd(&ls->rng) % ls->nlive;

		addr = ls->live_addr[i];
		size = ls->live_size[i];
		req = size;
		ls->live_addr[i] = ls->live_addr[ls->nlive - 1];
		ls->live_size[i] = ls->live_size[ls->nlive - 1];
		ls->nlive--;
		ls->heap -= size;
	}
	frag = (double)(r % 1000) / 10000.0;
	body->len = 0;
	mp_pw_put_uint(body, 1, is_alloc ? 1 : 2);
	/* lines interleave: event j of line k at (j * K + k) * 100 ns */
	mp_pw_put_uint(body, 2, (j * g->allocators + k) * 100000);
	put_stat_str(g, body, tmp, ST_ALLOC_NAME, g->alloc_names[k], g->alloc_ref + k);
	put_stat_int(body, tmp, ST_RESERVED, 0);
	put_stat_int(body, tmp, ST_ALLOCATED, (int64_t)ls->heap);
	put_stat_int(body, tmp, ST_AVAILABLE, (int64_t)(ls->limit - ls->heap));
	tmp->len = 0;
	mp_pw_put_uint(tmp, 1, ST_FRAG);
	if (frag == 0.0)
		mp_pw_put_uint(tmp, 4, 0);
	else
		mp_pw_put_double(tmp, 2, frag);
	mp_pw_put_msg(body, 4, tmp);
	put_stat_int(body, tmp, ST_PEAK, (int64_t)ls->peak);
	put_stat_int(body, tmp, ST_REQ, (int64_t)req);
	put_stat_int(body, tmp, ST_ALLOCB, (int64_t)size);
	put_stat_int(body, tmp, ST_ADDR, (int64_t)addr);
	if (is_alloc) {
		put_stat_str(g, body, tmp, ST_OP, g->ops[op], g->op_ref + op);
		put_stat_int(body, tmp, ST_ID, (int64_t)(j / 1000));
		put_stat_str(g, body, tmp, ST_REGION, regions[region], g->region_ref + (uint32_t)region);
		put_stat_int(body, tmp, ST_DTYPE, 1 + (int64_t)(op % 10));
		put_stat_str(g, body, tmp, ST_SHAPE, g->shapes[shape], g->shape_ref + shape);
	}
	put_stat_int(body, tmp, ST_GROUP, (int64_t)(j / 5000));
	ev->len = 0;
	mp_pw_put_msg(ev, 4, body);
}

static void line_init(const gen_t *g, line_state_t *ls, uint32_t k)
{
	uint64_t cap = 2 * g->live_target + 2;

	ls->rng = g->seed * 1000003u + k;
	ls->heap = ls->peak = 0;
	ls->limit = k + 1 < g->allocators || g->allocators == 1 ? 16ULL << 30 : 64ULL << 30;
	ls->next_addr = 0x7f0000000000ULL + ((uint64_t)k << 36);
	ls->nlive = 0;
	if (!ls->live_addr) {
		ls->live_addr = malloc(cap * sizeof(uint64_t));
		ls->live_size = malloc(cap * sizeof(uint64_t));
		if (!ls->live_addr || !ls->live_size) {
			fprintf(stderr, "memprof_xplane_gen: out of memory\n");
			exit(1);
		}
	}
}

static uint64_t line_events(const gen_t *g, uint32_t k)
{
	return g->events / g->allocators + (k < g->events % g->allocators);
}

/* Non-memory events ("noise") between memory events: one metadata id. */
static void gen_noise(mp_pw_buf_t *ev, mp_pw_buf_t *body, uint64_t t)
{
	body->len = 0;
	mp_pw_put_uint(body, 1, 3);
	mp_pw_put_uint(body, 2, t);
	mp_pw_put_uint(body, 3, 50000);
	ev->len = 0;
	mp_pw_put_msg(ev, 4, body);
}

/* Size (pass 1) or write (pass 2, out != NULL) line k's payload. */
static uint64_t do_line(const gen_t *g, line_state_t *ls, uint32_t k, FILE *out)
{
	mp_pw_buf_t ev = {0}, tmp = {0}, body = {0}, hdr = {0};
	char name[32];
	uint64_t j, n = line_events(g, k), total, q;

	snprintf(name, sizeof(name), "tf_Compute/%u", k);
	mp_pw_put_uint(&hdr, 1, k + 1);
	mp_pw_put_str(&hdr, 2, name);
	mp_pw_put_uint(&hdr, 3, 1700000000000000000ULL);
	total = hdr.len;
	if (out)
		fwrite(hdr.data, 1, hdr.len, out);
	line_init(g, ls, k);
	for (j = 0; j < n; j++) {
		gen_event(g, ls, k, j, &ev, &tmp, &body);
		total += ev.len;
		if (out)
			fwrite(ev.data, 1, ev.len, out);
		for (q = 0; q < g->noise; q++) {
			gen_noise(&ev, &body, (j * g->allocators + k) * 100000 + 1 + q);
			total += ev.len;
			if (out)
				fwrite(ev.data, 1, ev.len, out);
		}
	}
	if (ev.oom || tmp.oom || body.oom || hdr.oom) {
		fprintf(stderr, "memprof_xplane_gen: out of memory\n");
		exit(1);
	}
	mp_pw_buf_free(&ev);
	mp_pw_buf_free(&tmp);
	mp_pw_buf_free(&body);
	mp_pw_buf_free(&hdr);
	return total;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"events", required_argument, NULL, 'n'}, {"allocators", required_argument, NULL, 'k'},
		{"live", required_argument, NULL, 'l'},   {"seed", required_argument, NULL, 's'},
		{"str", no_argument, NULL, 'S'},          {"noise", required_argument, NULL, 'z'},
		{"output", required_argument, NULL, 'o'}, {"ops", required_argument, NULL, 'p'},
		{NULL, 0, NULL, 0},
	};
	static gen_t g;
	line_state_t ls = {0};
	const char *path = NULL;
	uint64_t *sizes, plane_len;
	mp_pw_buf_t head = {0}, meta = {0};
	FILE *out;
	uint32_t k, i, id;
	int c;

	g.events = 10000000;
	g.allocators = 8;
	g.live_target = 1000;
	g.seed = 1;
	g.nops = NOPS;
	while ((c = getopt_long(argc, argv, "o:n:k:l:s:Sz:p:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': path = optarg; break;
		case 'n': g.events = strtoull(optarg, NULL, 10); break;
		case 'k': g.allocators = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'l': g.live_target = strtoull(optarg, NULL, 10); break;
		case 's': g.seed = strtoull(optarg, NULL, 10); break;
		case 'S': g.str = 1; break;
		case 'z': g.noise = strtoull(optarg, NULL, 10); break;
		case 'p': g.nops = (uint32_t)strtoul(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: memprof_xplane_gen -o FILE [--events N] [--allocators K] "
					"[--live N] [--seed S] [--str] [--noise N] [--ops N]\n");
			return 2;
		}
	}
	if (!path || g.allocators == 0 || g.allocators > 256 || g.live_target == 0 || g.nops == 0 || g.nops > NOPS) {
		fprintf(stderr, "memprof_xplane_gen: -o FILE is required; 1 <= allocators <= 256, live >= 1, "
				"1 <= ops <= %d\n", NOPS);
		return 2;
	}
	for (i = 0; i < NOPS; i++) {
		uint64_t st = g.seed * 7919 + i, s = rnd(&st);

		snprintf(g.ops[i], sizeof(g.ops[i]), "model/layer_%u/op_%u", i / 8, i % 8);
		/* mostly small tensors, one op in eight large (BFC rounds to 256 B) */
		g.op_bytes[i] = (s & 7) == 0 ? 1 + (s >> 40) % (64u << 20) : 1 + (s >> 40) % (256u << 10);
	}
	for (i = 0; i < NSHAPES; i++)
		snprintf(g.shapes[i], sizeof(g.shapes[i]), "[%u,%u,%u]", 1 + i % 8, 16 << (i % 4), 64 + i);
	for (k = 0; k < g.allocators; k++) {
		if (k + 1 == g.allocators && g.allocators > 1)
			snprintf(g.alloc_names[k], sizeof(g.alloc_names[k]), "gpu_host_bfc");
		else
			snprintf(g.alloc_names[k], sizeof(g.alloc_names[k]), "GPU_%u_bfc", k);
	}
	/* stat metadata: names 1..15, then the strings ref_value points to */
	id = ST_COUNT;
	g.op_ref = id;
	id += NOPS;
	g.shape_ref = id;
	id += NSHAPES;
	g.region_ref = id;
	id += 4;
	g.alloc_ref = id;
	id += g.allocators;
	mp_xplane_put_meta(&meta, 4, 1, "MemoryAllocation");
	mp_xplane_put_meta(&meta, 4, 2, "MemoryDeallocation");
	mp_xplane_put_meta(&meta, 4, 3, "ExecutorState::Process");
	for (i = 1; i < ST_COUNT; i++)
		mp_xplane_put_meta(&meta, 5, i, stat_names[i]);
	if (!g.str) {
		for (i = 0; i < g.nops; i++)
			mp_xplane_put_meta(&meta, 5, g.op_ref + i, g.ops[i]);
		for (i = 0; i < NSHAPES; i++)
			mp_xplane_put_meta(&meta, 5, g.shape_ref + i, g.shapes[i]);
		for (i = 0; i < 4; i++)
			mp_xplane_put_meta(&meta, 5, g.region_ref + i, regions[i]);
		for (k = 0; k < g.allocators; k++)
			mp_xplane_put_meta(&meta, 5, g.alloc_ref + k, g.alloc_names[k]);
	}
	/* pass 1: sizes */
	sizes = calloc(g.allocators, sizeof(*sizes));
	if (!sizes)
		return 1;
	mp_pw_put_uint(&head, 1, 1);
	mp_pw_put_str(&head, 2, "/host:CPU");
	plane_len = head.len + meta.len;
	for (k = 0; k < g.allocators; k++) {
		sizes[k] = do_line(&g, &ls, k, NULL);
		plane_len += 1 + mp_pw_varint_size(sizes[k]) + sizes[k];
	}
	/* pass 2: write */
	out = fopen(path, "wb");
	if (!out) {
		perror(path);
		return 3;
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	{
		mp_pw_buf_t t = {0};

		mp_pw_put_tag(&t, 1, MP_PW_LEN);
		mp_pw_put_varint(&t, plane_len);
		fwrite(t.data, 1, t.len, out);
		fwrite(head.data, 1, head.len, out);
		for (k = 0; k < g.allocators; k++) {
			t.len = 0;
			mp_pw_put_tag(&t, 3, MP_PW_LEN);
			mp_pw_put_varint(&t, sizes[k]);
			fwrite(t.data, 1, t.len, out);
			do_line(&g, &ls, k, out);
		}
		fwrite(meta.data, 1, meta.len, out);
		t.len = 0;
		mp_pw_put_str(&t, 4, "bench-host");
		fwrite(t.data, 1, t.len, out);
		mp_pw_buf_free(&t);
	}
	if (fclose(out) != 0) {
		perror(path);
		return 3;
	}
	printf("%s: %" PRIu64 " memory events on %u allocators, %.1f MB\n", path, g.events, g.allocators,
	       (double)(plane_len + 1 + mp_pw_varint_size(plane_len) + 12) / 1e6);
	free(sizes);
	free(ls.live_addr);
	free(ls.live_size);
	mp_pw_buf_free(&head);
	mp_pw_buf_free(&meta);
	return 0;
}
