// SPDX-License-Identifier: GPL-2.0
/*
 * CRC-32C, CRC-64, checksum types and nonces. See checksum.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <string.h>

#include <sodium.h>

#include "codec/checksum.h"
#include "codec/crypto.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define CRC_HAVE_X86 1
#else
#define CRC_HAVE_X86 0
#endif
#if CRC_HAVE_X86 && defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>	/* glibc >= 2.33: its own CPU feature detection */
#define CRC_GLIBC_CPU 1
#endif
#endif
#ifndef CRC_GLIBC_CPU
#define CRC_GLIBC_CPU 0
#endif

#define CRC32C_POLY	0x82F63B78U		/* reflected 0x1EDC6F41 */
#define CRC64_POLY	0x42F0E1EBA9EA3693ULL	/* ECMA-182, MSB-first */

/* Block sizes of the 3-way interleaved hardware CRC-32C. */
#define CRC32C_LONG	8192
#define CRC32C_SHORT	256
/* Shortest run folded with VPCLMULQDQ (shorter: the crc32 instruction). */
#define CRC32C_FOLD_MIN	1024
/* Block sizes of the 3-way interleaved CRC-64. */
#define CRC64_LONG	1024
#define CRC64_SHORT	256

static uint32_t crc32c_table[8][256];		/* slicing-by-8 */
static uint32_t crc32c_long_shift[4][256];	/* multiply by x^(8*LONG) */
static uint32_t crc32c_short_shift[4][256];	/* multiply by x^(8*SHORT) */
static uint64_t crc64_table[8][256];
static uint64_t crc64_long_shift[8][256];	/* multiply by x^(8*LONG) */
static uint64_t crc64_short_shift[8][256];	/* multiply by x^(8*SHORT) */

static pthread_once_t tables_once = PTHREAD_ONCE_INIT;
static bool have_hw;		/* SSE4.2 crc32 */
static bool have_clmul;		/* PCLMULQDQ + SSSE3 */
static bool have_vclmul;	/* VPCLMULQDQ + AVX-512F (and SSE4.2) */
static bool force_sw;
static uint64_t crc64_fold_k[8];	/* x^(64 * (i + 2)) mod P, i = 0..7 */
/*
 * CRC-32C folding constants (see crc32c_fold_bulk()), for distances D of
 * 256, 192, 128, 64, 48, 32 and 16 bytes: x^(8D+63) and x^(8D-1) mod P,
 * reflected (crc32c_pow(1U << 30, n)), shifted up by 32: for the 8 bytes
 * that come first in a 16-byte lane (the high powers) and for the 8 after
 * them, one power less as the carry-less product of two reflected
 * operands is one bit short. Computed at every start-up, they and the
 * tables were half a percent of fsck of a small filesystem.
 * unit/test_checksum checks the folding against the portable CRC.
 */
static const uint64_t crc32c_fold_k[7][2] = {
	{ 0xe9a5d8be00000000ULL, 0x1426a81500000000ULL },
	{ 0x7ccbbbf200000000ULL, 0x31c9460800000000ULL },
	{ 0x6577b24500000000ULL, 0x7417153f00000000ULL },
	{ 0x1c19243b00000000ULL, 0x75bba45b00000000ULL },
	{ 0xa46ef4aa00000000ULL, 0x6051243f00000000ULL },
	{ 0x33ccbbbc00000000ULL, 0xa2158b3400000000ULL },
	{ 0x3743f7bd00000000ULL, 0x3171d43000000000ULL },
};

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
bool bch_fuzz_csum_any;
#endif

/* ---- little helpers ---------------------------------------------------- */

static inline uint32_t get_le32(const unsigned char *p)
{
	return (uint32_t) p[0] | (uint32_t) p[1] << 8 |
		(uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static inline uint64_t get_le64(const unsigned char *p)
{
	return (uint64_t) get_le32(p) | (uint64_t) get_le32(p + 4) << 32;
}

static inline uint64_t get_be64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be64toh(v);
}

static inline void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static inline void put_le64(unsigned char *p, uint64_t v)
{
	put_le32(p, v);
	put_le32(p + 4, v >> 32);
}

/* ---- GF(2) arithmetic for shifting CRCs by runs of zero bytes ---------- */

/*
 * Reflected CRC-32C: bit 31 is x^0. Returns a * b mod P.
 */
static uint32_t crc32c_mulmod(uint32_t a, uint32_t b)
{
	uint32_t p = 0;

	for (unsigned i = 0; i < 32; i++) {
		if (a & (1U << (31 - i)))
			p ^= b;
		b = b & 1 ? (b >> 1) ^ CRC32C_POLY : b >> 1;
	}
	return p;
}

/* base^n mod P, reflected. */
static uint32_t crc32c_pow(uint32_t base, uint64_t n)
{
	uint32_t r = 1U << 31;

	for (; n; n >>= 1) {
		if (n & 1)
			r = crc32c_mulmod(r, base);
		base = crc32c_mulmod(base, base);
	}
	return r;
}

/* x^(8n) mod P, reflected. */
static uint32_t crc32c_x8n(uint64_t n)
{
	return crc32c_pow(1U << (31 - 8), n);
}

/* MSB-first CRC-64: bit i is x^i. Returns a * b mod P. */
static uint64_t crc64_mulmod(uint64_t a, uint64_t b)
{
	uint64_t p = 0;

	for (int i = 63; i >= 0; i--) {
		p = (p << 1) ^ ((p >> 63) ? CRC64_POLY : 0);
		if ((a >> i) & 1)
			p ^= b;
	}
	return p;
}

static uint64_t crc64_x8n(uint64_t n)
{
	uint64_t r = 1, sq = 1U << 8;

	for (; n; n >>= 1) {
		if (n & 1)
			r = crc64_mulmod(r, sq);
		sq = crc64_mulmod(sq, sq);
	}
	return r;
}

/* ---- tables -------------------------------------------------------------- */

static void shift_table_init(uint32_t t[4][256], uint64_t bytes)
{
	uint32_t op = crc32c_x8n(bytes);

	/* linear over GF(2): t[k][i] = t[k][i without its low bit] ^ t[k][low bit] */
	for (unsigned k = 0; k < 4; k++) {
		t[k][0] = 0;
		for (unsigned b = 1; b < 256; b <<= 1)
			t[k][b] = crc32c_mulmod(op, (uint32_t) b << (8 * k));
		for (unsigned i = 1; i < 256; i++)
			t[k][i] = t[k][i & (i - 1)] ^ t[k][i & -i];
	}
}

static void crc64_shift_table_init(uint64_t t[8][256], uint64_t bytes)
{
	uint64_t op = crc64_x8n(bytes);

	/* linear over GF(2), as above */
	for (unsigned k = 0; k < 8; k++) {
		t[k][0] = 0;
		for (unsigned b = 1; b < 256; b <<= 1)
			t[k][b] = crc64_mulmod(op, (uint64_t) b << (8 * k));
		for (unsigned i = 1; i < 256; i++)
			t[k][i] = t[k][i & (i - 1)] ^ t[k][i & -i];
	}
}

/*
 * The slicing-by-8 tables of the portable paths (24 KiB): built when one
 * of them first runs, not at the first checksum of every command (where
 * the crc32 instruction does the work, they were six fresh pages and
 * their computing for nothing).
 */
static pthread_once_t slicing_once = PTHREAD_ONCE_INIT;

static void slicing_tables_init(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint32_t c = i;

		for (unsigned j = 0; j < 8; j++)
			c = c & 1 ? (c >> 1) ^ CRC32C_POLY : c >> 1;
		crc32c_table[0][i] = c;

		uint64_t d = (uint64_t) i << 56;

		for (unsigned j = 0; j < 8; j++)
			d = (d << 1) ^ ((d >> 63) ? CRC64_POLY : 0);
		crc64_table[0][i] = d;
	}
	for (unsigned k = 1; k < 8; k++)
		for (unsigned i = 0; i < 256; i++) {
			uint32_t c = crc32c_table[k - 1][i];
			uint64_t d = crc64_table[k - 1][i];

			crc32c_table[k][i] = (c >> 8) ^ crc32c_table[0][c & 0xff];
			crc64_table[k][i] = (d << 8) ^ crc64_table[0][d >> 56];
		}
	for (unsigned i = 0; i < 8; i++)
		crc64_fold_k[i] = crc64_x8n(8 * (i + 2));
}

static inline void slicing_get(void)
{
	pthread_once(&slicing_once, slicing_tables_init);
}

/* The 3-way operators of crc32c_hw_impl(): when a run long enough for them first comes. */
static pthread_once_t crc32c_shift_once = PTHREAD_ONCE_INIT;

static void crc32c_shift_tables_init(void)
{
	shift_table_init(crc32c_long_shift, CRC32C_LONG);
	shift_table_init(crc32c_short_shift, CRC32C_SHORT);
}

static void tables_init(void)
{

#if CRC_HAVE_X86 && CRC_GLIBC_CPU
	/*
	 * What glibc found at start-up: no CPUID of our own (in a virtual
	 * machine each one traps to the hypervisor; libgcc's detection, run
	 * at start-up by every command, was 3% of `fsck` of a small
	 * filesystem).
	 */
	have_hw = CPU_FEATURE_ACTIVE(SSE4_2);
	have_clmul = CPU_FEATURE_ACTIVE(PCLMULQDQ) && CPU_FEATURE_ACTIVE(SSSE3);
	have_vclmul = have_hw && CPU_FEATURE_ACTIVE(AVX512F) && CPU_FEATURE_ACTIVE(VPCLMULQDQ);
#elif CRC_HAVE_X86
	__builtin_cpu_init();
	have_hw = __builtin_cpu_supports("sse4.2");
	have_clmul = __builtin_cpu_supports("pclmul") &&
		__builtin_cpu_supports("ssse3");
	have_vclmul = have_hw && __builtin_cpu_supports("avx512f") &&
		__builtin_cpu_supports("vpclmulqdq");
#endif
}

static inline void tables_get(void)
{
	pthread_once(&tables_once, tables_init);
}

/* ---- CRC-32C ------------------------------------------------------------- */

static uint32_t crc32c_sw_impl(uint32_t crc, const unsigned char *p, size_t len)
{
	slicing_get();
	while (len && ((uintptr_t) p & 7)) {
		crc = crc32c_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
		len--;
	}

	while (len >= 8) {
		uint32_t lo = crc ^ get_le32(p);
		uint32_t hi = get_le32(p + 4);

		crc = crc32c_table[7][lo & 0xff] ^
		      crc32c_table[6][(lo >> 8) & 0xff] ^
		      crc32c_table[5][(lo >> 16) & 0xff] ^
		      crc32c_table[4][lo >> 24] ^
		      crc32c_table[3][hi & 0xff] ^
		      crc32c_table[2][(hi >> 8) & 0xff] ^
		      crc32c_table[1][(hi >> 16) & 0xff] ^
		      crc32c_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}

	while (len--)
		crc = crc32c_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

static inline uint32_t crc32c_shift(const uint32_t t[4][256], uint32_t crc)
{
	return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^
	       t[2][(crc >> 16) & 0xff] ^ t[3][crc >> 24];
}

#if CRC_HAVE_X86
static inline uint64_t load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);	/* x86 is little-endian */
	return v;
}

/*
 * Three independent streams over three consecutive blocks hide the 3-cycle
 * latency of the crc32 instruction; the partial CRCs are then combined by
 * shifting with a precomputed x^(8*block) operator.
 */
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw_impl(uint32_t crc32, const unsigned char *p, size_t len)
{
	uint64_t crc = crc32;

	while (len && ((uintptr_t) p & 7)) {
		crc = _mm_crc32_u8(crc, *p++);
		len--;
	}
	if (len >= 3 * CRC32C_SHORT)
		pthread_once(&crc32c_shift_once, crc32c_shift_tables_init);

	while (len >= 3 * CRC32C_LONG) {
		uint64_t c1 = 0, c2 = 0;
		const unsigned char *end = p + CRC32C_LONG;

		do {
			crc = _mm_crc32_u64(crc, load64(p));
			c1 = _mm_crc32_u64(c1, load64(p + CRC32C_LONG));
			c2 = _mm_crc32_u64(c2, load64(p + 2 * CRC32C_LONG));
			p += 8;
		} while (p < end);
		crc = crc32c_shift(crc32c_long_shift, crc) ^ c1;
		crc = crc32c_shift(crc32c_long_shift, crc) ^ c2;
		p += 2 * CRC32C_LONG;
		len -= 3 * CRC32C_LONG;
	}

	while (len >= 3 * CRC32C_SHORT) {
		uint64_t c1 = 0, c2 = 0;
		const unsigned char *end = p + CRC32C_SHORT;

		do {
			crc = _mm_crc32_u64(crc, load64(p));
			c1 = _mm_crc32_u64(c1, load64(p + CRC32C_SHORT));
			c2 = _mm_crc32_u64(c2, load64(p + 2 * CRC32C_SHORT));
			p += 8;
		} while (p < end);
		crc = crc32c_shift(crc32c_short_shift, crc) ^ c1;
		crc = crc32c_shift(crc32c_short_shift, crc) ^ c2;
		p += 2 * CRC32C_SHORT;
		len -= 3 * CRC32C_SHORT;
	}

	while (len >= 8) {
		crc = _mm_crc32_u64(crc, load64(p));
		p += 8;
		len -= 8;
	}

	while (len--)
		crc = _mm_crc32_u8(crc, *p++);
	return crc;
}

/* the constants for distance i of crc32c_fold_k, as one 128-bit lane */
__attribute__((target("sse4.2,avx512f,vpclmulqdq")))
static inline __m128i fold_k128(unsigned i)
{
	return _mm_set_epi64x((long long) crc32c_fold_k[i][1], (long long) crc32c_fold_k[i][0]);
}

/* each lane of @x moved forward by the distance of @k, xor @data */
__attribute__((target("sse4.2,avx512f,vpclmulqdq")))
static inline __m512i fold512(__m512i x, __m512i k, __m512i data)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
					 _mm512_clmulepi64_epi128(x, k, 0x11), data, 0x96);
}

/*
 * Folding with carry-less multiplies, 256 bytes a step: 16 lanes of 16
 * bytes (four 512-bit registers) each hold a polynomial congruent, mod P,
 * to the data read so far in that lane's column. A lane moves forward by
 * D bytes as lo * (x^(8D+64) mod P) + hi * (x^(8D) mod P), where lo is
 * its first 8 bytes (the higher powers, in reflected order): both
 * products fit in 128 bits. At the end the lanes fold into the last one,
 * whose 16 bytes have the CRC of everything before them; the crc32
 * instruction finishes it. The running CRC enters by xor into the first 4
 * bytes. Returns the CRC of the first (len / 256) * 256 bytes (len >= 256).
 */
__attribute__((target("sse4.2,avx512f,vpclmulqdq")))
static uint32_t crc32c_fold_bulk(uint32_t crc, const unsigned char *p, size_t len)
{
#define K512(i) _mm512_broadcast_i32x4(fold_k128(i))
	const __m512i k256 = K512(0);
	__m512i x0 = _mm512_xor_si512(_mm512_loadu_si512(p),
				      _mm512_castsi128_si512(_mm_cvtsi32_si128((int) crc)));
	__m512i x1 = _mm512_loadu_si512(p + 64);
	__m512i x2 = _mm512_loadu_si512(p + 128);
	__m512i x3 = _mm512_loadu_si512(p + 192);
	__m512i lanes;
	__m128i x;
	uint64_t c;

	for (p += 256, len -= 256; len >= 256; p += 256, len -= 256) {
		x0 = fold512(x0, k256, _mm512_loadu_si512(p));
		x1 = fold512(x1, k256, _mm512_loadu_si512(p + 64));
		x2 = fold512(x2, k256, _mm512_loadu_si512(p + 128));
		x3 = fold512(x3, k256, _mm512_loadu_si512(p + 192));
	}
	/* the four registers into the last one */
	x3 = fold512(x0, K512(1), x3);
	x3 = fold512(x1, K512(2), x3);
	x3 = fold512(x2, K512(3), x3);
	/* its four lanes into its last one (which moves by 0: constants 0) */
	lanes = _mm512_inserti32x4(_mm512_setzero_si512(), fold_k128(4), 0);
	lanes = _mm512_inserti32x4(lanes, fold_k128(5), 1);
	lanes = _mm512_inserti32x4(lanes, fold_k128(6), 2);
	lanes = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x3, lanes, 0x00),
					  _mm512_clmulepi64_epi128(x3, lanes, 0x11),
					  _mm512_maskz_mov_epi64(0xc0, x3), 0x96);
	x = _mm_xor_si128(_mm_xor_si128(_mm512_castsi512_si128(lanes),
					_mm512_extracti32x4_epi32(lanes, 1)),
			  _mm_xor_si128(_mm512_extracti32x4_epi32(lanes, 2),
					_mm512_extracti32x4_epi32(lanes, 3)));
	c = _mm_crc32_u64(0, (uint64_t) _mm_cvtsi128_si64(x));
	c = _mm_crc32_u64(c, (uint64_t) _mm_extract_epi64(x, 1));
	return (uint32_t) c;
#undef K512
}

/* The best hardware path: folding for long runs, then the crc32 instruction. */
static uint32_t crc32c_hw_best(uint32_t crc, const unsigned char *p, size_t len)
{
	if (have_vclmul && len >= CRC32C_FOLD_MIN) {
		size_t bulk = len & ~(size_t) 255;

		crc = crc32c_fold_bulk(crc, p, bulk);
		p += bulk;
		len -= bulk;
	}
	return crc32c_hw_impl(crc, p, len);
}
#endif

uint32_t crc32c_sw(uint32_t crc, const void *p, size_t len)
{
	tables_get();
	return crc32c_sw_impl(crc, p, len);
}

uint32_t crc32c_hw(uint32_t crc, const void *p, size_t len)
{
	tables_get();
#if CRC_HAVE_X86
	if (have_hw)
		return crc32c_hw_best(crc, p, len);
#endif
	return crc32c_sw_impl(crc, p, len);
}

bool crc32c_hw_available(void)
{
	tables_get();
	return have_hw;
}

bool crc32c_fold_available(void)
{
	tables_get();
	return have_vclmul;
}

bool crc64_hw_available(void)
{
	tables_get();
	return have_clmul;
}

void crc_force_sw(bool force)
{
	__atomic_store_n(&force_sw, force, __ATOMIC_RELAXED);
}

uint32_t crc32c(uint32_t crc, const void *p, size_t len)
{
	tables_get();
#if CRC_HAVE_X86
	if (have_hw && !__atomic_load_n(&force_sw, __ATOMIC_RELAXED))
		return crc32c_hw_best(crc, p, len);
#endif
	return crc32c_sw_impl(crc, p, len);
}

uint32_t crc32c_zeros(uint32_t crc, uint64_t len)
{
	return crc32c_mulmod(crc32c_x8n(len), crc);
}

uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b0, uint64_t len_b)
{
	return crc32c_zeros(crc_a, len_b) ^ crc_b0;
}

/* ---- CRC-64 -------------------------------------------------------------- */

uint64_t crc64_bytewise(uint64_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;

	tables_get();
	slicing_get();
	while (len--)
		crc = crc64_table[0][((crc >> 56) ^ *p++) & 0xff] ^ (crc << 8);
	return crc;
}

static inline uint64_t crc64_step8(uint64_t crc, const unsigned char *p)
{
	uint64_t v = crc ^ get_be64(p);

	return crc64_table[7][v >> 56] ^
	       crc64_table[6][(v >> 48) & 0xff] ^
	       crc64_table[5][(v >> 40) & 0xff] ^
	       crc64_table[4][(v >> 32) & 0xff] ^
	       crc64_table[3][(v >> 24) & 0xff] ^
	       crc64_table[2][(v >> 16) & 0xff] ^
	       crc64_table[1][(v >> 8) & 0xff] ^
	       crc64_table[0][v & 0xff];
}

static inline uint64_t crc64_shift(const uint64_t t[8][256], uint64_t crc)
{
	uint64_t r = 0;

	for (unsigned k = 0; k < 8; k++)
		r ^= t[k][(crc >> (8 * k)) & 0xff];
	return r;
}

/* Three independent chains over three consecutive blocks of @block bytes. */
static inline const unsigned char *
crc64_3way(uint64_t *crcp, const unsigned char *p, size_t *lenp, size_t block,
	   const uint64_t shift[8][256])
{
	uint64_t crc = *crcp;

	while (*lenp >= 3 * block) {
		uint64_t c1 = 0, c2 = 0;
		const unsigned char *end = p + block;

		do {
			crc = crc64_step8(crc, p);
			c1 = crc64_step8(c1, p + block);
			c2 = crc64_step8(c2, p + 2 * block);
			p += 8;
		} while (p < end);
		crc = crc64_shift(shift, crc) ^ c1;
		crc = crc64_shift(shift, crc) ^ c2;
		p += 2 * block;
		*lenp -= 3 * block;
	}
	*crcp = crc;
	return p;
}

/*
 * Slicing-by-8 is bound by the latency of its dependency chain, so long
 * inputs run three independent chains and combine them with precomputed
 * x^(8*block) operators.
 */
static pthread_once_t crc64_shift_once = PTHREAD_ONCE_INIT;

/* The 3-way tables cost ~1 ms to build: only when the portable path needs them. */
static void crc64_shift_tables_init(void)
{
	crc64_shift_table_init(crc64_long_shift, CRC64_LONG);
	crc64_shift_table_init(crc64_short_shift, CRC64_SHORT);
}

static uint64_t crc64_sw_impl(uint64_t crc, const unsigned char *p, size_t len)
{
	if (len >= 3 * CRC64_SHORT)
		pthread_once(&crc64_shift_once, crc64_shift_tables_init);
	p = crc64_3way(&crc, p, &len, CRC64_LONG, crc64_long_shift);
	p = crc64_3way(&crc, p, &len, CRC64_SHORT, crc64_short_shift);

	while (len >= 8) {
		crc = crc64_step8(crc, p);
		p += 8;
		len -= 8;
	}

	while (len--)
		crc = crc64_table[0][((crc >> 56) ^ *p++) & 0xff] ^ (crc << 8);
	return crc;
}

#if CRC_HAVE_X86
/*
 * Carry-less multiplication folding. A 16-byte block read big-endian is a
 * polynomial of degree < 128 (bit i = coefficient of x^i), and the raw
 * MSB-first CRC of a message M with initial value c is
 * (c * x^(8 len) + M * x^64) mod P. Fold accumulators A = hi * x^64 + lo
 * forward by d bits with A * x^d = hi * (x^(d+64) mod P) + lo * (x^d mod P),
 * which keeps them congruent mod P; the last one is reduced by running the
 * table CRC (init 0) over its 16 bytes, which computes A * x^64 mod P.
 */
__attribute__((target("pclmul,ssse3")))
static inline __m128i clmul_fold(__m128i a, __m128i k)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x11),
			     _mm_clmulepi64_si128(a, k, 0x00));
}

__attribute__((target("pclmul,ssse3")))
static uint64_t crc64_clmul(uint64_t crc, const unsigned char *p, size_t len)
{
	const __m128i bswap = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7,
					   8, 9, 10, 11, 12, 13, 14, 15);
	/* (hi, lo) pairs: fold by 512, 384, 256, 128 bits */
	const __m128i k512 = _mm_set_epi64x(crc64_fold_k[7], crc64_fold_k[6]);
	const __m128i k384 = _mm_set_epi64x(crc64_fold_k[5], crc64_fold_k[4]);
	const __m128i k256 = _mm_set_epi64x(crc64_fold_k[3], crc64_fold_k[2]);
	const __m128i k128 = _mm_set_epi64x(crc64_fold_k[1], crc64_fold_k[0]);
	__m128i a0, a1, a2, a3;
	unsigned char last[16];

#define LOAD(_p) _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *) (_p)), bswap)
	a0 = _mm_xor_si128(LOAD(p), _mm_set_epi64x(crc, 0));
	a1 = LOAD(p + 16);
	a2 = LOAD(p + 32);
	a3 = LOAD(p + 48);
	p += 64;
	len -= 64;

	while (len >= 64) {
		a0 = _mm_xor_si128(clmul_fold(a0, k512), LOAD(p));
		a1 = _mm_xor_si128(clmul_fold(a1, k512), LOAD(p + 16));
		a2 = _mm_xor_si128(clmul_fold(a2, k512), LOAD(p + 32));
		a3 = _mm_xor_si128(clmul_fold(a3, k512), LOAD(p + 48));
		p += 64;
		len -= 64;
	}

	a0 = _mm_xor_si128(_mm_xor_si128(clmul_fold(a0, k384),
					 clmul_fold(a1, k256)),
			   _mm_xor_si128(clmul_fold(a2, k128), a3));

	while (len >= 16) {
		a0 = _mm_xor_si128(clmul_fold(a0, k128), LOAD(p));
		p += 16;
		len -= 16;
	}
#undef LOAD

	_mm_storeu_si128((__m128i *) last, _mm_shuffle_epi8(a0, bswap));
	crc = crc64_step8(0, last);
	crc = crc64_step8(crc, last + 8);
	return crc64_sw_impl(crc, p, len);
}
#endif

uint64_t crc64_sw(uint64_t crc, const void *p, size_t len)
{
	tables_get();
	slicing_get();
	return crc64_sw_impl(crc, p, len);
}

uint64_t crc64_hw(uint64_t crc, const void *p, size_t len)
{
	tables_get();
	slicing_get();
#if CRC_HAVE_X86
	if (have_clmul && len >= 64)
		return crc64_clmul(crc, p, len);
#endif
	return crc64_sw_impl(crc, p, len);
}

uint64_t crc64(uint64_t crc, const void *p, size_t len)
{
	tables_get();
	slicing_get();
#if CRC_HAVE_X86
	if (have_clmul && len >= 64 &&
	    !__atomic_load_n(&force_sw, __ATOMIC_RELAXED))
		return crc64_clmul(crc, p, len);
#endif
	return crc64_sw_impl(crc, p, len);
}

uint64_t crc64_zeros(uint64_t crc, uint64_t len)
{
	return crc64_mulmod(crc64_x8n(len), crc);
}

uint64_t crc64_combine(uint64_t crc_a, uint64_t crc_b0, uint64_t len_b)
{
	return crc64_zeros(crc_a, len_b) ^ crc_b0;
}

/* ---- checksum types ------------------------------------------------------ */

static const char * const csum_type_names[BCH_CHECKSUM_NR] = {
	[BCH_CHECKSUM_NONE]			= "none",
	[BCH_CHECKSUM_CRC32C_NONZERO]		= "crc32c_nonzero",
	[BCH_CHECKSUM_CRC64_NONZERO]		= "crc64_nonzero",
	[BCH_CHECKSUM_CHACHA20_POLY1305_80]	= "chacha20_poly1305_80",
	[BCH_CHECKSUM_CHACHA20_POLY1305_128]	= "chacha20_poly1305_128",
	[BCH_CHECKSUM_CRC32C]			= "crc32c",
	[BCH_CHECKSUM_CRC64]			= "crc64",
};

bool bch_csum_type_valid(unsigned type)
{
	return type < BCH_CHECKSUM_NR;
}

bool bch_csum_type_is_mergeable(unsigned type)
{
	return type == BCH_CHECKSUM_NONE ||
	       type == BCH_CHECKSUM_CRC32C ||
	       type == BCH_CHECKSUM_CRC64;
}

const char *bch_csum_type_name(unsigned type)
{
	return type < BCH_CHECKSUM_NR ? csum_type_names[type] : NULL;
}

struct bch_csum_val bch_csum_from_bytes(const void *p16)
{
	const unsigned char *p = p16;
	struct bch_csum_val v = { get_le64(p), get_le64(p + 8) };

	return v;
}

void bch_csum_to_bytes(struct bch_csum_val v, void *p16)
{
	put_le64(p16, v.lo);
	put_le64((unsigned char *) p16 + 8, v.hi);
}

/* ---- checksums ----------------------------------------------------------- */

_Static_assert(sizeof(crypto_onetimeauth_poly1305_state) <=
	       sizeof(((struct bch_csum_state *) 0)->poly),
	       "poly1305 state does not fit");
_Static_assert(alignof(crypto_onetimeauth_poly1305_state) <= 64,
	       "poly1305 state alignment");

static inline crypto_onetimeauth_poly1305_state *
poly_state(struct bch_csum_state *st)
{
	return (crypto_onetimeauth_poly1305_state *) st->poly;
}

int bch_csum_init(struct bch_csum_state *st, unsigned type,
		  struct bch_nonce nonce, const struct bch_key *key)
{
	st->type = BCH_CHECKSUM_NR;
	st->crc = 0;

	switch (type) {
	case BCH_CHECKSUM_NONE:
	case BCH_CHECKSUM_CRC32C:
	case BCH_CHECKSUM_CRC64:
		st->crc = 0;
		break;
	case BCH_CHECKSUM_CRC32C_NONZERO:
		st->crc = UINT32_MAX;
		break;
	case BCH_CHECKSUM_CRC64_NONZERO:
		st->crc = UINT64_MAX;
		break;
	case BCH_CHECKSUM_CHACHA20_POLY1305_80:
	case BCH_CHECKSUM_CHACHA20_POLY1305_128: {
		uint8_t otk[BCH_POLY1305_KEY_BYTES];

		if (!key)
			return -ENOKEY;
		bch_poly1305_key(key, nonce, otk);
		crypto_onetimeauth_poly1305_init(poly_state(st), otk);
		sodium_memzero(otk, sizeof(otk));
		break;
	}
	default:
		return -EINVAL;
	}
	st->type = type;
	return 0;
}

void bch_csum_update(struct bch_csum_state *st, const void *data, size_t len)
{
	switch (st->type) {
	case BCH_CHECKSUM_CRC32C_NONZERO:
	case BCH_CHECKSUM_CRC32C:
		st->crc = crc32c((uint32_t) st->crc, data, len);
		break;
	case BCH_CHECKSUM_CRC64_NONZERO:
	case BCH_CHECKSUM_CRC64:
		st->crc = crc64(st->crc, data, len);
		break;
	case BCH_CHECKSUM_CHACHA20_POLY1305_80:
	case BCH_CHECKSUM_CHACHA20_POLY1305_128:
		crypto_onetimeauth_poly1305_update(poly_state(st), data, len);
		break;
	default:
		break;
	}
}

struct bch_csum_val bch_csum_final(struct bch_csum_state *st)
{
	struct bch_csum_val v = { 0, 0 };

	switch (st->type) {
	case BCH_CHECKSUM_CRC32C_NONZERO:
		v.lo = (uint32_t) st->crc ^ UINT32_MAX;
		break;
	case BCH_CHECKSUM_CRC32C:
		v.lo = (uint32_t) st->crc;
		break;
	case BCH_CHECKSUM_CRC64_NONZERO:
		v.lo = st->crc ^ UINT64_MAX;
		break;
	case BCH_CHECKSUM_CRC64:
		v.lo = st->crc;
		break;
	case BCH_CHECKSUM_CHACHA20_POLY1305_80:
	case BCH_CHECKSUM_CHACHA20_POLY1305_128: {
		uint8_t tag[BCH_POLY1305_TAG_BYTES];

		crypto_onetimeauth_poly1305_final(poly_state(st), tag);
		if (st->type == BCH_CHECKSUM_CHACHA20_POLY1305_80)
			memset(tag + 10, 0, sizeof(tag) - 10);
		v = bch_csum_from_bytes(tag);
		sodium_memzero(tag, sizeof(tag));
		break;
	}
	default:
		break;
	}
	sodium_memzero(st, sizeof(*st));
	st->type = BCH_CHECKSUM_NR;
	return v;
}

int bch_checksum(unsigned type, struct bch_nonce nonce,
		 const struct bch_key *key, const void *data, size_t len,
		 struct bch_csum_val *out)
{
	struct bch_csum_val zero = { 0, 0 };
	int ret;

	/* The CRC types don't need the (large) state. */
	switch (type) {
	case BCH_CHECKSUM_NONE:
		*out = zero;
		return 0;
	case BCH_CHECKSUM_CRC32C_NONZERO:
		out->lo = crc32c(UINT32_MAX, data, len) ^ UINT32_MAX;
		out->hi = 0;
		return 0;
	case BCH_CHECKSUM_CRC32C:
		out->lo = crc32c(0, data, len);
		out->hi = 0;
		return 0;
	case BCH_CHECKSUM_CRC64_NONZERO:
		out->lo = crc64(UINT64_MAX, data, len) ^ UINT64_MAX;
		out->hi = 0;
		return 0;
	case BCH_CHECKSUM_CRC64:
		out->lo = crc64(0, data, len);
		out->hi = 0;
		return 0;
	default:
		break;
	}

	struct bch_csum_state st;

	ret = bch_csum_init(&st, type, nonce, key);
	if (ret) {
		*out = zero;
		return ret;
	}
	bch_csum_update(&st, data, len);
	*out = bch_csum_final(&st);
	return 0;
}

int bch_checksum_merge(unsigned type, struct bch_csum_val a,
		       struct bch_csum_val b, uint64_t len_b,
		       struct bch_csum_val *out)
{
	switch (type) {
	case BCH_CHECKSUM_NONE:
		out->lo = out->hi = 0;
		return 0;
	case BCH_CHECKSUM_CRC32C:
		out->lo = crc32c_combine((uint32_t) a.lo, (uint32_t) b.lo, len_b);
		out->hi = 0;
		return 0;
	case BCH_CHECKSUM_CRC64:
		out->lo = crc64_combine(a.lo, b.lo, len_b);
		out->hi = 0;
		return 0;
	default:
		return -EINVAL;
	}
}
