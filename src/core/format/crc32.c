/* crc32.c - the zlib CRC-32 of block payloads, folded with carry-less
 * multiplication (PCLMULQDQ) on x86-64 CPUs that have it.
 *
 * Reading a capture checks every payload's CRC; zlib's table-driven crc32
 * costs about a tenth of the reader's time, the folded one a few percent.
 * Same result as zlib's crc32() for any input (tests/format/test_crc32.c
 * compares them). The method: the reflected CRC-32 polynomial's remainder
 * is carried through 64-byte (then 16-byte) blocks by multiplying by x^k mod
 * P constants, then reduced to 32 bits with a Barrett step (Gopal et al.,
 * "Fast CRC computation for generic polynomials using PCLMULQDQ", Intel,
 * 2009). Inputs shorter than 64 bytes, and the ragged ends, go to zlib.
 */
#include <memprof/format/crc32.h>

#include <zlib.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define CRC_TARGET __attribute__((target("pclmul,sse4.1")))

/* Fold constants for the reflected polynomial 0xEDB88320: x^(4*128+32),
 * x^(4*128-32) mod P (64-byte folds), x^(128+32), x^(128-32) mod P
 * (16-byte folds), x^64 mod P, and the Barrett pair (mu, P). */
#define K1 0x0000000154442bd4ull
#define K2 0x00000001c6e41596ull
#define K3 0x00000001751997d0ull
#define K4 0x00000000ccaa009eull
#define K5 0x0000000163cd6124ull
#define P_X 0x00000001DB710641ull
#define MU 0x00000001F7011641ull

/* The raw (not inverted) CRC state over len bytes, len a multiple of 16 and
 * at least 64. */
CRC_TARGET static uint32_t fold(uint32_t crc, const uint8_t *p, size_t len)
{
	__m128i x1 = _mm_loadu_si128((const __m128i *)p), x2 = _mm_loadu_si128((const __m128i *)(p + 16)),
		x3 = _mm_loadu_si128((const __m128i *)(p + 32)), x4 = _mm_loadu_si128((const __m128i *)(p + 48));
	__m128i k = _mm_set_epi64x((long long)K2, (long long)K1), t;
	const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);

	x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
	p += 64;
	len -= 64;
	while (len >= 64) {
		__m128i y1 = _mm_clmulepi64_si128(x1, k, 0x00), y2 = _mm_clmulepi64_si128(x2, k, 0x00),
			y3 = _mm_clmulepi64_si128(x3, k, 0x00), y4 = _mm_clmulepi64_si128(x4, k, 0x00);
		x1 = _mm_xor_si128(_mm_xor_si128(y1, _mm_clmulepi64_si128(x1, k, 0x11)), _mm_loadu_si128((const __m128i *)p));
		x2 = _mm_xor_si128(_mm_xor_si128(y2, _mm_clmulepi64_si128(x2, k, 0x11)),
				   _mm_loadu_si128((const __m128i *)(p + 16)));
		x3 = _mm_xor_si128(_mm_xor_si128(y3, _mm_clmulepi64_si128(x3, k, 0x11)),
				   _mm_loadu_si128((const __m128i *)(p + 32)));
		x4 = _mm_xor_si128(_mm_xor_si128(y4, _mm_clmulepi64_si128(x4, k, 0x11)),
				   _mm_loadu_si128((const __m128i *)(p + 48)));
		p += 64;
		len -= 64;
	}
	/* four lanes into one */
	k = _mm_set_epi64x((long long)K4, (long long)K3);
	t = _mm_clmulepi64_si128(x1, k, 0x00);
	x1 = _mm_xor_si128(_mm_xor_si128(t, _mm_clmulepi64_si128(x1, k, 0x11)), x2);
	t = _mm_clmulepi64_si128(x1, k, 0x00);
	x1 = _mm_xor_si128(_mm_xor_si128(t, _mm_clmulepi64_si128(x1, k, 0x11)), x3);
	t = _mm_clmulepi64_si128(x1, k, 0x00);
	x1 = _mm_xor_si128(_mm_xor_si128(t, _mm_clmulepi64_si128(x1, k, 0x11)), x4);
	while (len >= 16) {
		t = _mm_clmulepi64_si128(x1, k, 0x00);
		x1 = _mm_xor_si128(_mm_xor_si128(t, _mm_clmulepi64_si128(x1, k, 0x11)),
				   _mm_loadu_si128((const __m128i *)p));
		p += 16;
		len -= 16;
	}
	/* 128 -> 64 bits (appending 32 zero bits), then 64 -> 32 */
	t = _mm_clmulepi64_si128(k, x1, 0x01);
	x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), t);
	t = _mm_srli_si128(x1, 4);
	x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), _mm_set_epi64x(0, (long long)K5), 0x00);
	x1 = _mm_xor_si128(x1, t);
	/* Barrett reduction */
	k = _mm_set_epi64x((long long)MU, (long long)P_X);
	t = x1;
	x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k, 0x10);
	x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k, 0x00);
	x1 = _mm_xor_si128(x1, t);
	return (uint32_t)_mm_extract_epi32(x1, 1);
}

static int have_pclmul(void)
{
	return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

uint32_t mp__crc32(uint32_t crc, const uint8_t *p, size_t len)
{
	size_t body;

	if (len < 128 || !have_pclmul())
		return (uint32_t)crc32(crc, p, (uInt)len);
	body = len & ~(size_t)15;
	/* zlib's crc32 pre- and post-inverts; fold() works on the raw state */
	crc = ~fold(~crc, p, body);
	return body == len ? crc : (uint32_t)crc32(crc, p + body, (uInt)(len - body));
}

#else

uint32_t mp__crc32(uint32_t crc, const uint8_t *p, size_t len)
{
	return (uint32_t)crc32(crc, p, (uInt)len);
}

#endif
