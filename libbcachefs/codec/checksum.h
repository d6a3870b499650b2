/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checksums and nonces (doc/format.md §7, §4.4, §6.4, §9).
 *
 * Pure functions over bytes and integers: nothing here knows the on-disk
 * structs. Every value is in host order; the callers convert to and from the
 * little-endian on-disk fields.
 *
 * CRC conventions (doc/format.md §7.2):
 *   crc32c(): reflected CRC-32C (poly 0x82F63B78), raw update, no pre- or
 *             post-inversion. Standard CRC-32C = ~crc32c(~0, p, len).
 *   crc64():  ECMA-182 (poly 0x42F0E1EBA9EA3693), MSB-first (not reflected),
 *             raw update, no inversion. CRC-64/WE = ~crc64(~0, p, len).
 *
 * Checksum types (doc/format.md §7.1):
 *   0 none                   0 bytes  value 0
 *   1 crc32c_nonzero         4 bytes  init ~0, final xor ~0 (standard CRC-32C)
 *   2 crc64_nonzero          8 bytes  init ~0, final xor ~0 (CRC-64/WE)
 *   3 chacha20_poly1305_80  10 bytes  Poly1305 tag, first 10 bytes
 *   4 chacha20_poly1305_128 16 bytes  Poly1305 tag
 *   5 crc32c                 4 bytes  init 0, no final xor
 *   6 crc64                  8 bytes  init 0, no final xor
 *   >= 7 invalid
 * Result (struct bch_csum_val): CRCs in lo (zero-extended), hi = 0; a
 * Poly1305 tag t[0..15] as lo = le64(t[0..7]), hi = le64(t[8..15]), with
 * bytes 10..15 zero for the 80-bit type. Stored on disk as lo, hi (LE).
 */
#ifndef BCH_CHECKSUM_H
#define BCH_CHECKSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/nonce.h"

struct bch_key;			/* format.h: the 32 key bytes (4 x le64) */

/* ---- raw CRCs ---------------------------------------------------------- */

/*
 * Each CRC has a hardware path chosen at run time (x86-64: SSE4.2 crc32 for
 * CRC-32C, with VPCLMULQDQ folding of runs of 1 KiB and more where the CPU
 * has it and AVX-512; PCLMULQDQ folding for CRC-64) and a portable
 * table-driven one.
 */

/* Raw CRC-32C update (no inversion); dispatches to the hardware path when
 * available. */
uint32_t crc32c(uint32_t crc, const void *p, size_t len);
/* The portable slicing-by-8 implementation, always. */
uint32_t crc32c_sw(uint32_t crc, const void *p, size_t len);
/* The hardware path (SSE4.2, folding where available); falls back to
 * crc32c_sw() when not available. */
uint32_t crc32c_hw(uint32_t crc, const void *p, size_t len);
/* Does this CPU (and build) have the SSE4.2 path? */
bool crc32c_hw_available(void);
/* Does it also fold long runs with VPCLMULQDQ? */
bool crc32c_fold_available(void);
/* Make crc32c() and crc64() use the portable paths (true) or the best
 * ones (false). For tests and benchmarks. */
void crc_force_sw(bool force);
/* crc32c(crc, <len zero bytes>), in O(log len). */
uint32_t crc32c_zeros(uint32_t crc, uint64_t len);
/* Raw CRC of A‖B from the raw CRC of A (any init) and the raw CRC of B
 * computed with init 0. */
uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b0, uint64_t len_b);

/* Raw CRC-64 (ECMA-182, MSB-first) update; dispatches to PCLMULQDQ. */
uint64_t crc64(uint64_t crc, const void *p, size_t len);
/* The portable slicing-by-8 implementation (three interleaved chains). */
uint64_t crc64_sw(uint64_t crc, const void *p, size_t len);
/* The PCLMULQDQ implementation; falls back to crc64_sw(). */
uint64_t crc64_hw(uint64_t crc, const void *p, size_t len);
bool crc64_hw_available(void);
/* Bytewise reference implementation (tests). */
uint64_t crc64_bytewise(uint64_t crc, const void *p, size_t len);
uint64_t crc64_zeros(uint64_t crc, uint64_t len);
uint64_t crc64_combine(uint64_t crc_a, uint64_t crc_b0, uint64_t len_b);

/* ---- checksum types ---------------------------------------------------- */

/*
 * Values are the on-disk numbers, the same as format.h's enum bch_csum_type
 * (BCH_CSUM_*), which also has bch_csum_type_bytes() (0, 4, 8, 10, 16, 4, 8;
 * 0 if invalid) and bch_csum_type_is_encryption() (types 3, 4).
 */
enum bch_checksum_type {
	BCH_CHECKSUM_NONE			= 0,
	BCH_CHECKSUM_CRC32C_NONZERO		= 1,
	BCH_CHECKSUM_CRC64_NONZERO		= 2,
	BCH_CHECKSUM_CHACHA20_POLY1305_80	= 3,
	BCH_CHECKSUM_CHACHA20_POLY1305_128	= 4,
	BCH_CHECKSUM_CRC32C			= 5,
	BCH_CHECKSUM_CRC64			= 6,
	BCH_CHECKSUM_NR				= 7,
};

struct bch_csum_val {
	uint64_t	lo;
	uint64_t	hi;
};

bool bch_csum_type_valid(unsigned type);			/* type < 7 */
bool bch_csum_type_is_mergeable(unsigned type);		/* 0, 5, 6 */
/* "none", "crc32c_nonzero", ..., or NULL if invalid. */
const char *bch_csum_type_name(unsigned type);

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
/*
 * Fuzzing builds only (tests/fuzz, `make fuzz`): while set, every stored
 * checksum or MAC compares equal to the computed one, so that mutated
 * input reaches the parsers behind the checks. No other build has it.
 */
extern bool bch_fuzz_csum_any;
#endif

static inline bool bch_csum_eq(struct bch_csum_val a, struct bch_csum_val b)
{
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (bch_fuzz_csum_any)
		return true;
#endif
	return a.lo == b.lo && a.hi == b.hi;
}

/* Host-order value <-> the 16 on-disk bytes (lo LE, hi LE). */
struct bch_csum_val bch_csum_from_bytes(const void *p16);
void bch_csum_to_bytes(struct bch_csum_val v, void *p16);


/* ---- checksums --------------------------------------------------------- */

/*
 * Checksum @len bytes at @data with checksum @type into *@out. @nonce and
 * @key are used by the MAC types (3, 4) only: the Poly1305 one-time key is
 * the first 32 bytes of the ChaCha20 keystream of @key under
 * bch_nonce_poly(@nonce) (doc/format.md §7.4); @key may be NULL otherwise.
 * The nonce is ignored by the CRC types (doc/format.md §7.6).
 * Returns 0; -EINVAL for an invalid type; -ENOKEY for a MAC type with no
 * key. On error *out is set to {0, 0}.
 */
int bch_checksum(unsigned type, struct bch_nonce nonce,
		 const struct bch_key *key, const void *data, size_t len,
		 struct bch_csum_val *out);

/* Incremental form: init, any number of updates, final. */
struct bch_csum_state {
	unsigned	type;
	uint64_t	crc;
	_Alignas(64) unsigned char poly[256];	/* libsodium Poly1305 state */
};

int bch_csum_init(struct bch_csum_state *st, unsigned type,
		  struct bch_nonce nonce, const struct bch_key *key);
void bch_csum_update(struct bch_csum_state *st, const void *data, size_t len);
/* Result; the state is wiped and must be re-initialised before reuse. */
struct bch_csum_val bch_csum_final(struct bch_csum_state *st);

/*
 * Checksum of A‖B from checksum @a of A and checksum @b of B, for the
 * mergeable types 0, 5, 6 (doc/format.md §7.1):
 *   csum(A‖B) = crc_update(csum(A), len_b zero bytes) ^ csum(B).
 * Returns -EINVAL (and leaves *out alone) for other types.
 */
int bch_checksum_merge(unsigned type, struct bch_csum_val a,
		       struct bch_csum_val b, uint64_t len_b,
		       struct bch_csum_val *out);

#endif /* BCH_CHECKSUM_H */
