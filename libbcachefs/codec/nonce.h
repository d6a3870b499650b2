/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Nonces of encrypted and MACed objects: which 16 bytes start the
 * ChaCha20 stream of a btree node, a journal entry, an extent or the
 * superblock key. Pure functions over integers, used by the checksums
 * (Poly1305 keys) and the ciphers (crypto.h).
 *
 * Nonces (doc/format.md §7.5, §7.4): struct bch_nonce is the 16-byte
 * ChaCha20 IV as four words, d[i] = le32(IV bytes 4i..4i+3). They are
 * ChaCha20 state words 12..15: d[0] is the 64-byte block counter, d[1..3]
 * the rest of the nonce. In RFC 8439 terms: counter = d[0], 96-bit nonce =
 * IV bytes 4..15. (While a stream runs, the counter carries into d[1] as in
 * the reference userspace's libsodium cipher; no bcachefs nonce gets there.)
 */
#ifndef BCH_NONCE_H
#define BCH_NONCE_H

#include <stdint.h>

/* ---- nonces ------------------------------------------------------------ */

struct bch_nonce {
	uint32_t	d[4];
};

/* Nonce domains in d[3] (doc/format.md §7.5). */
#define BCH_NONCE_DOMAIN_EXTENT		0x10000000U
#define BCH_NONCE_DOMAIN_BTREE		0x20000000U
#define BCH_NONCE_DOMAIN_JOURNAL	0x30000000U
#define BCH_NONCE_DOMAIN_PRIO		0x40000000U	/* reserved, unused */
#define BCH_NONCE_DOMAIN_POLY		0x80000000U	/* Poly1305 key derivation */

#define BCH_CHACHA_BLOCK_BYTES		64

static inline struct bch_nonce bch_nonce_make(uint32_t d0, uint32_t d1,
					      uint32_t d2, uint32_t d3)
{
	struct bch_nonce n = { { d0, d1, d2, d3 } };
	return n;
}

/* The 16-byte IV (four LE words) <-> struct bch_nonce. */
struct bch_nonce bch_nonce_from_bytes(const void *iv16);
void bch_nonce_to_bytes(struct bch_nonce n, void *iv16);

/*
 * Advance the keystream by @bytes (a multiple of 64; the remainder is
 * ignored): adds bytes / 64 to the block counter d[0], modulo 2^32 (no
 * carry, like the reference's nonce_add()).
 */
struct bch_nonce bch_nonce_add(struct bch_nonce n, uint64_t bytes);

/* Nonce of the Poly1305 one-time key: d[3] ^= 0x80000000. */
static inline struct bch_nonce bch_nonce_poly(struct bch_nonce n)
{
	n.d[3] ^= BCH_NONCE_DOMAIN_POLY;
	return n;
}

/*
 * Btree node bset at node byte offset @offset (0 for the first bset; the
 * byte offset is used directly as the block counter) with bset @seq and
 * @journal_seq (doc/format.md §7.5):
 *   [offset, seq lo32, seq hi32, journal_seq lo32 ^ 0x20000000].
 * First bset: header bytes 24..135 from this nonce, keys from
 * bch_nonce_add(n, 128) (counter + 2); later bsets: keys from this nonce.
 */
struct bch_nonce bch_nonce_btree(uint32_t offset, uint64_t seq,
				 uint64_t journal_seq);

/* Journal entry with sequence @seq (doc/format.md §6.4):
 *   [0, seq lo32, seq hi32, 0x30000000]. Encrypts bytes 44..end at counter 0. */
struct bch_nonce bch_nonce_journal(uint64_t seq);

/*
 * Data extent, superblock version >= 9 (doc/format.md §7.5). @version_lo and
 * @version_hi are the key's 96-bit version; the rest come from the extent's
 * crc descriptor (@uncompressed_size in sectors, @crc_nonce in sectors):
 *   d0 = (compression_type ? uncompressed_size : 0) << 22, + crc_nonce * 8
 *   d1 = version_lo lo32, d2 = version_lo hi32,
 *   d3 = (version_hi | compression_type << 24) ^ 0x10000000.
 * To read from sector @s of the stored (uncompressed) data, advance by
 * s * 512 bytes with bch_nonce_add().
 */
struct bch_nonce bch_nonce_extent(uint64_t version_lo, uint32_t version_hi,
				  unsigned compression_type,
				  unsigned uncompressed_size,
				  unsigned crc_nonce);

/*
 * Nonce that (un)wraps the master key in the superblock crypt field
 * (doc/format.md §9.2, §7.5): IV = 8 zero bytes ‖ internal uuid bytes 0..7,
 * i.e. [0, 0, le32(uuid[0..3]), le32(uuid[4..7])].
 */
struct bch_nonce bch_nonce_sb_key(const uint8_t internal_uuid[16]);

#endif
