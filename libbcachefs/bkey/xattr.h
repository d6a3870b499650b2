/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Xattr values (doc/format.md §5.7): type byte, name length, value length,
 * name, value. The hash is in dirent.h (bch_xattr_hash).
 */
#ifndef BCH_XATTR_H
#define BCH_XATTR_H

#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"

struct json;
struct printbuf;

struct bch_xattr_h {
	uint8_t		x_type;
	const uint8_t	*name;
	unsigned	name_len;
	const uint8_t	*val;
	unsigned	val_len;
};

/* Decode a type-128 xattr; name and value bounds-checked against the value. */
int bch_xattr_decode(const struct bkey_ref *k, struct bch_xattr_h *x);

/* Encode into @out (zero-filled); returns bytes (multiple of 8) or 0 if it does not fit. */
size_t bch_xattr_encode(unsigned x_type, const void *name, size_t name_len,
			const void *val, size_t val_len, void *out, size_t out_size);

/* "user.", "trusted.", "security.", or NULL (ACLs and unknown types). */
const char *bch_xattr_prefix(unsigned x_type);

/* Key checks of doc/format.md §5.7. Reason or NULL. */
const char *bch_xattr_invalid(const struct bkey_ref *k);

/* `list` text: "<prefix><name>:<value>" ("(type N)" / "(unknown type N)"), "whiteout". */
void bch_xattr_to_text(struct printbuf *out, const struct bkey_ref *k);
void bch_xattr_to_json(struct json *j, const struct bkey_ref *k);

#endif
