// SPDX-License-Identifier: GPL-2.0
/* Nonces (nonce.h). */
#include <string.h>

#include "codec/nonce.h"
#include "format/format.h"

/* ---- nonces -------------------------------------------------------------- */

struct bch_nonce bch_nonce_from_bytes(const void *iv16)
{
	const unsigned char *p = iv16;

	return bch_nonce_make(get_le32_unaligned(p), get_le32_unaligned(p + 4),
			      get_le32_unaligned(p + 8), get_le32_unaligned(p + 12));
}

void bch_nonce_to_bytes(struct bch_nonce n, void *iv16)
{
	unsigned char *p = iv16;

	for (unsigned i = 0; i < 4; i++) {
		le32 w = cpu_to_le32(n.d[i]);

		memcpy(p + 4 * i, &w, sizeof(w));
	}
}

struct bch_nonce bch_nonce_add(struct bch_nonce n, uint64_t bytes)
{
	n.d[0] += (uint32_t) (bytes / BCH_CHACHA_BLOCK_BYTES);
	return n;
}

struct bch_nonce bch_nonce_btree(uint32_t offset, uint64_t seq,
				 uint64_t journal_seq)
{
	return bch_nonce_make(offset, (uint32_t) seq, (uint32_t) (seq >> 32),
			      (uint32_t) journal_seq ^ BCH_NONCE_DOMAIN_BTREE);
}

struct bch_nonce bch_nonce_journal(uint64_t seq)
{
	return bch_nonce_make(0, (uint32_t) seq, (uint32_t) (seq >> 32),
			      BCH_NONCE_DOMAIN_JOURNAL);
}

struct bch_nonce bch_nonce_extent(uint64_t version_lo, uint32_t version_hi,
				  unsigned compression_type,
				  unsigned uncompressed_size,
				  unsigned crc_nonce)
{
	uint32_t size = compression_type ? uncompressed_size : 0;
	struct bch_nonce n = bch_nonce_make(size << 22,
			(uint32_t) version_lo, (uint32_t) (version_lo >> 32),
			(version_hi | (uint32_t) compression_type << 24) ^
			BCH_NONCE_DOMAIN_EXTENT);

	return bch_nonce_add(n, (uint64_t) crc_nonce << 9);
}

struct bch_nonce bch_nonce_sb_key(const uint8_t internal_uuid[16])
{
	return bch_nonce_make(0, 0, get_le32_unaligned(internal_uuid),
			      get_le32_unaligned(internal_uuid + 4));
}
