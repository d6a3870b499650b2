/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Dirent values (doc/format.md §5.6.1) and the string hash shared by the
 * dirents and xattrs btrees (doc/format.md §5.6.2).
 */
#ifndef BCH_DIRENT_H
#define BCH_DIRENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"

struct json;
struct printbuf;

/* ---- string hash of one directory / file inode ---- */

struct bch_hash_info {
	unsigned	type;		/* 0 crc32c, 1 crc64, 2 siphash */
	uint8_t		seed[8];	/* bi_hash_seed bytes as stored */
	uint64_t	sip_k0, sip_k1;	/* siphash key: SHA-256(seed)[0..15] */
};

/* @seed_le64: bi_hash_seed as read (le64 of the 8 stored bytes). Returns 0 or -EINVAL (type). */
int bch_hash_info_init(struct bch_hash_info *h, unsigned type, uint64_t seed_le64);

/* Hash of a dirent name (at least 2). */
uint64_t bch_dirent_hash(const struct bch_hash_info *h, const void *name, size_t len);
/* Hash of (type byte, name) for xattrs, with the 2018 SipHash update quirk. */
uint64_t bch_xattr_hash(const struct bch_hash_info *h, unsigned x_type,
			const void *name, size_t len);

/* SipHash-2-4 in two update calls, reproducing the 2018 buffer quirk. */
uint64_t bch_siphash_2018(uint64_t k0, uint64_t k1, const void *a, size_t alen,
			  const void *b, size_t blen);

/* ---- dirent values ---- */

struct bch_dirent_h {
	uint64_t	d_inum;
	uint8_t		d_type;
	const uint8_t	*name;		/* points into the value */
	unsigned	name_len;	/* window [0, val - 16) minus trailing NULs */
};

/* Decode a type-128 dirent: 0 or -BCH_ERR_key_invalid (value < 16 bytes). */
int bch_dirent_decode(const struct bkey_ref *k, struct bch_dirent_h *d);

/*
 * Encode a dirent value into @out (bch_dirent_val_u64s(len) * 8 bytes,
 * zero-filled). Returns the value size in bytes, 0 if @out_size is too small.
 */
size_t bch_dirent_encode(uint64_t inum, unsigned d_type, const void *name,
			 size_t len, void *out, size_t out_size);

/* Key checks of doc/format.md §5.6.1. Reason or NULL. */
const char *bch_dirent_invalid(const struct bkey_ref *k);

/* `list` text: "<name> -> <inum>" or "whiteout". */
void bch_dirent_to_text(struct printbuf *out, const struct bkey_ref *k);
void bch_dirent_to_json(struct json *j, const struct bkey_ref *k);

#endif
