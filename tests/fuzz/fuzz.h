/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the libFuzzer targets (tests/fuzz/fuzz_*.c) and the seed maker
 * (tests/fuzz/mkseeds.c): reading the fields of a fuzz input, the fixed
 * test key, in-memory devices, and the encoding of a whole image.
 *
 * Every target's input starts with a flags byte; bit 0 (FUZZ_CSUM_ANY)
 * makes every stored checksum and MAC compare equal (bch_fuzz_csum_any,
 * fuzz builds only), so mutated bytes reach the parsers behind the checks.
 * Inputs are read front to back; a field past the end of the input reads
 * as zeroes, so every input is valid.
 */
#ifndef BCH_FUZZ_H
#define BCH_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "codec/checksum.h"	/* bch_fuzz_csum_any */
#include "codec/crypto.h"
#include "format/format.h"

#define FUZZ_CSUM_ANY		(1U << 0)

/*
 * The targets are also built without libFuzzer, with the normal and the
 * ASan builds (tests/fuzz/replay.c, test_fuzz_replay.sh): there the
 * checksums are always checked.
 */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define fuzz_csum_any(on)	(bch_fuzz_csum_any = (on))
#else
#define fuzz_csum_any(on)	((void)(on))
#endif

struct fuzz_in {
	const uint8_t	*p;
	size_t		n;
};

static inline uint64_t fz_le(struct fuzz_in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		if (in->n) {
			v |= (uint64_t)in->p[0] << (8 * i);
			in->p++;
			in->n--;
		}
	return v;
}

static inline uint8_t fz_u8(struct fuzz_in *in)	{ return (uint8_t)fz_le(in, 1); }
static inline uint16_t fz_u16(struct fuzz_in *in)	{ return (uint16_t)fz_le(in, 2); }
static inline uint32_t fz_u32(struct fuzz_in *in)	{ return (uint32_t)fz_le(in, 4); }
static inline uint64_t fz_u64(struct fuzz_in *in)	{ return fz_le(in, 8); }

/* Up to @max bytes (fewer at the end of the input): their start, count in *@len. */
static inline const uint8_t *fz_bytes(struct fuzz_in *in, size_t max, size_t *len)
{
	const uint8_t *p = in->p;

	*len = max < in->n ? max : in->n;
	in->p += *len;
	in->n -= *len;
	return p;
}

/* Writers, for the seed maker. */
static inline uint8_t *fz_put(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

/* The key of encrypted inputs: bytes 0x01, 0x02, ..., 0x20. */
static inline void fuzz_test_key(struct bch_key *k)
{
	for (unsigned i = 0; i < BCH_KEY_BYTES; i++)
		bch_key_bytes(k)[i] = (uint8_t)(i + 1);
}

/*
 * A whole image (fuzz_image): flags byte (FUZZ_CSUM_ANY; bit 1: open with
 * the first device only), number of devices (byte: 1 + bit
 * 0), per device its size in sectors (le32, clamped to
 * [FUZZ_IMAGE_MIN_SECTORS, FUZZ_IMAGE_MAX_SECTORS]), then records until the
 * end of the input: device (byte, bit 0), first sector (le32), length in
 * bytes (le16), the bytes. Everything else of a device reads as zeroes.
 */
#define FUZZ_IMAGE_MAX_DEVS		2
#define FUZZ_IMAGE_MIN_SECTORS		64U
#define FUZZ_IMAGE_MAX_SECTORS		(1U << 21)	/* 1 GiB (sparse) */
#define FUZZ_IMAGE_REC_HDR		7

#endif
