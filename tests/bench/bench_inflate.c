/* bench_inflate.c - the reader's deflate decoder (inflate.c) against zlib's
 * inflate and libdeflate's on the block payloads of a capture, as written
 * (Huffman-only column blocks), and on the same raw bytes recompressed by
 * zlib at level 6 and by libdeflate at levels 1 and 6 (matches). Prints
 * decompressed MB/s per CPU second (the machine is shared: CPU time is the
 * fairer clock) and checks that all give the same bytes.
 *
 * usage: bench_inflate FILE.memprof [SECONDS per figure, default 1]
 *                      [BLOCKS: the first ones only, default 64; 0: all] */
#include <memprof/format.h>
#include <memprof/format/inflate.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>
#include <time.h>
#include <zlib.h>

enum { DEC_ZLIB, DEC_MP, DEC_LIBDEFLATE, NDEC };
static const char *const dec_name[NDEC] = {"zlib", "mp__inflate", "libdeflate"};
static struct libdeflate_decompressor *ld;

typedef struct {
	uint8_t *c; /* compressed payload */
	size_t clen, rlen;
} blk_t;

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int zlib_inflate(const blk_t *b, uint8_t *out)
{
	z_stream z;
	int rc;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, -15) != Z_OK)
		return -1;
	z.next_in = b->c;
	z.avail_in = (uInt)b->clen;
	z.next_out = out;
	z.avail_out = (uInt)b->rlen;
	rc = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	return rc == Z_STREAM_END && z.avail_out == 0 ? 0 : -1;
}

/* libdeflate with the exact output size, and (as the reader needs) the
 * whole input consumed. */
static int ld_inflate(const blk_t *b, uint8_t *out)
{
	size_t in_used;

	return libdeflate_deflate_decompress_ex(ld, b->c, b->clen, out, b->rlen, &in_used, NULL) ==
			       LIBDEFLATE_SUCCESS && in_used == b->clen
		       ? 0
		       : -1;
}

static int decode(int dec, const blk_t *b, uint8_t *out)
{
	if (dec == DEC_ZLIB)
		return zlib_inflate(b, out);
	if (dec == DEC_MP)
		return mp__inflate(b->c, b->clen, out, b->rlen, NULL);
	return ld_inflate(b, out);
}

/* Decode every block again and again for about secs CPU seconds; MB/s. */
static double run(const blk_t *b, size_t nb, uint8_t *out, int dec, double secs)
{
	double t0 = cpu_now(), t;
	size_t bytes = 0, i;

	do {
		for (i = 0; i < nb; i++) {
			int rc = decode(dec, &b[i], out);
			if (rc) {
				fprintf(stderr, "bench_inflate: block %zu does not decode\n", i);
				exit(1);
			}
			bytes += b[i].rlen;
		}
		t = cpu_now() - t0;
	} while (t < secs);
	return (double)bytes / t / 1e6;
}

static void compare(const char *what, const blk_t *b, size_t nb, uint8_t *o1, uint8_t *o2, double secs)
{
	size_t i, c = 0, r = 0;
	double mbs[NDEC];
	int d;

	for (i = 0; i < nb; i++) {
		if (zlib_inflate(&b[i], o1))
			goto disagree;
		for (d = DEC_MP; d < NDEC; d++)
			if (decode(d, &b[i], o2) || memcmp(o1, o2, b[i].rlen))
				goto disagree;
		c += b[i].clen;
		r += b[i].rlen;
	}
	for (d = 0; d < NDEC; d++)
		mbs[d] = run(b, nb, d == DEC_ZLIB ? o1 : o2, d, secs);
	printf("%s: %zu blocks, %.1f MB -> %.1f MB;", what, nb, (double)c / 1e6, (double)r / 1e6);
	for (d = 0; d < NDEC; d++)
		printf(" %s %.0f MB/s%s", dec_name[d], mbs[d], d + 1 < NDEC ? "," : "");
	printf(" (libdeflate/mp__inflate x%.2f)\n", mbs[DEC_LIBDEFLATE] / mbs[DEC_MP]);
	return;
disagree:
	fprintf(stderr, "bench_inflate: block %zu: the decoders disagree\n", i);
	exit(1);
}

/* The raw bytes of blocks b[0..nb), recompressed by libdeflate at level. */
static blk_t *libdeflate_blocks(const blk_t *b, size_t nb, uint8_t *tmp, int level)
{
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
	blk_t *out = calloc(nb ? nb : 1, sizeof(*out));
	size_t i;

	if (!c || !out)
		exit(1);
	for (i = 0; i < nb; i++) {
		size_t n = libdeflate_deflate_compress_bound(c, b[i].rlen);
		if (zlib_inflate(&b[i], tmp) || !(out[i].c = malloc(n)))
			exit(1);
		out[i].clen = libdeflate_deflate_compress(c, tmp, b[i].rlen, out[i].c, n);
		out[i].rlen = b[i].rlen;
		if (!out[i].clen)
			exit(1);
	}
	libdeflate_free_compressor(c);
	return out;
}

int main(int argc, char **argv)
{
	FILE *f;
	uint8_t pre[MP_FILE_PREFIX_LEN], hdr[MP_BLOCK_HEADER_LEN], *o1, *o2;
	blk_t *b = NULL, *z6, *l1, *l6;
	size_t nb = 0, cap = 0, maxr = 1, i;
	double secs = argc > 2 ? atof(argv[2]) : 1.0;
	size_t maxb = argc > 3 ? (size_t)atol(argv[3]) : 64;

	if (argc < 2 || !(f = fopen(argv[1], "rb"))) {
		fprintf(stderr, "usage: bench_inflate FILE.memprof [SECONDS] [BLOCKS]\n");
		return 2;
	}
	if (fread(pre, 1, sizeof(pre), f) != sizeof(pre) || fseek(f, (long)le32(pre + 12) + 4, SEEK_CUR))
		return 1;
	while ((maxb == 0 || nb < maxb) && fread(hdr, 1, sizeof(hdr), f) == sizeof(hdr) && le32(hdr) == MP_BLOCK_MAGIC) {
		if (nb == cap && !(b = realloc(b, (cap = cap ? 2 * cap : 256) * sizeof(*b))))
			return 1;
		b[nb].clen = le32(hdr + 8);
		b[nb].rlen = le32(hdr + 12);
		if (b[nb].clen > MP_BLOCK_PAYLOAD_MAX || b[nb].rlen > MP_BLOCK_RAW_MAX ||
		    !(b[nb].c = malloc(b[nb].clen)) || fread(b[nb].c, 1, b[nb].clen, f) != b[nb].clen)
			break;
		if (b[nb].rlen > maxr)
			maxr = b[nb].rlen;
		nb++;
	}
	fclose(f);
	if (!(ld = libdeflate_alloc_decompressor()))
		return 1;
	o1 = malloc(maxr);
	o2 = malloc(maxr);
	z6 = calloc(nb ? nb : 1, sizeof(*z6));
	if (!nb || !o1 || !o2 || !z6) {
		fprintf(stderr, "bench_inflate: no blocks in '%s'\n", argv[1]);
		return 1;
	}
	compare("capture blocks (Huffman-only columns)", b, nb, o1, o2, secs);
	/* The same raw bytes through zlib's deflate at level 6. */
	for (i = 0; i < nb; i++) {
		uLongf n = compressBound((uLong)b[i].rlen);
		z_stream z;

		if (zlib_inflate(&b[i], o1))
			return 1;
		memset(&z, 0, sizeof(z));
		z6[i].c = malloc(n);
		if (!z6[i].c || deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			return 1;
		z.next_in = o1;
		z.avail_in = (uInt)b[i].rlen;
		z.next_out = z6[i].c;
		z.avail_out = (uInt)n;
		if (deflate(&z, Z_FINISH) != Z_STREAM_END)
			return 1;
		z6[i].clen = z.total_out;
		z6[i].rlen = b[i].rlen;
		deflateEnd(&z);
	}
	compare("same bytes, zlib level 6", z6, nb, o1, o2, secs);
	l1 = libdeflate_blocks(b, nb, o1, 1);
	compare("same bytes, libdeflate level 1", l1, nb, o1, o2, secs);
	l6 = libdeflate_blocks(b, nb, o1, 6);
	compare("same bytes, libdeflate level 6", l6, nb, o1, o2, secs);
	for (i = 0; i < nb; i++) {
		free(b[i].c);
		free(z6[i].c);
		free(l1[i].c);
		free(l6[i].c);
	}
	free(b);
	free(z6);
	free(l1);
	free(l6);
	libdeflate_free_decompressor(ld);
	free(o1);
	free(o2);
	return 0;
}
