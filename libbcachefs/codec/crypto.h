/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Encryption primitives and key handling (doc/format.md §9, §2.8, doc/tools.md §1.3,
 * doc/tools.md §7): ChaCha20, Poly1305, the scrypt KDF, wrapping of the master key, the
 * kernel keyring and passphrase input.
 *
 * ChaCha20 is the original 20-round cipher with the 16-byte IV of
 * struct bch_nonce loaded into state words 12..15 (checksum.h): d[0] is the
 * block counter. Implemented with libsodium's original-variant
 * crypto_stream_chacha20_xor_ic (64-bit counter = d[0] | d[1] << 32,
 * 8-byte nonce = IV bytes 8..15), as the reference userspace did. That is
 * byte-identical to IETF ChaCha20 (counter d[0], nonce IV bytes 4..15)
 * unless d[0] wraps past 2^32, which no bcachefs nonce does.
 *
 * Errors are 0 / negative errno.
 */
#ifndef BCH_CRYPTO_H
#define BCH_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/nonce.h"
#include "format/format.h"	/* struct bch_key, BCH_KEY_MAGIC, BCH_KDF_SCRYPT */

#define BCH_KEY_BYTES		32
#define BCH_POLY1305_KEY_BYTES	32
#define BCH_POLY1305_TAG_BYTES	16

/*
 * Keys (the master key, or a passphrase-derived wrapping key) are format.h's
 * struct bch_key: 32 bytes, used here as the byte string they are on disk
 * (ChaCha20 state words 4..11 = key bytes 0..31 as le32). bch_key_bytes()
 * gives them as bytes.
 */
static inline uint8_t *bch_key_bytes(struct bch_key *key)
{
	return (uint8_t *) key->key;
}

static inline const uint8_t *bch_key_cbytes(const struct bch_key *key)
{
	return (const uint8_t *) key->key;
}

_Static_assert(sizeof(struct bch_key) == BCH_KEY_BYTES, "bch_key size");

/* Initialise libsodium (idempotent, thread-safe). 0 or -EIO. */
int bch_crypto_init(void);

/* Wipe a key (sodium_memzero). */
void bch_key_wipe(struct bch_key *key);

/* ---- ChaCha20 / Poly1305 ----------------------------------------------- */

/*
 * XOR @len bytes at @buf in place with the ChaCha20 keystream of @key
 * starting at block counter @nonce.d[0] (use bch_nonce_add() to start
 * further in). Encryption and decryption are the same operation.
 */
void bch_chacha20(const struct bch_key *key, struct bch_nonce nonce,
		  void *buf, size_t len);

/*
 * Encrypt/decrypt like the reference's bch2_encrypt(): XOR with ChaCha20
 * when @csum_type is an encryption type (3, 4), do nothing otherwise.
 * Returns 0, -EINVAL for an invalid type, -ENOKEY for an encryption type
 * without key.
 */
int bch_encrypt(unsigned csum_type, const struct bch_key *key,
		struct bch_nonce nonce, void *buf, size_t len);

/* Poly1305 one-time key for @nonce: the first 32 keystream bytes of @key
 * under bch_nonce_poly(@nonce), block counter @nonce.d[0]. */
void bch_poly1305_key(const struct bch_key *key, struct bch_nonce nonce,
		      uint8_t otk[BCH_POLY1305_KEY_BYTES]);

/* Poly1305 tag of @len bytes at @data under one-time key @otk. */
void bch_poly1305(const uint8_t otk[BCH_POLY1305_KEY_BYTES],
		  const void *data, size_t len,
		  uint8_t tag[BCH_POLY1305_TAG_BYTES]);

/* ---- key derivation (scrypt) ------------------------------------------ */

/* Parameters that format writes: log2 N = 14, log2 r = 3, log2 p = 4. */
#define BCH_KDF_SCRYPT_LOG2_N	14
#define BCH_KDF_SCRYPT_LOG2_R	3
#define BCH_KDF_SCRYPT_LOG2_P	4

/* kdf_flags: bits 0-15 log2 N, 16-31 log2 r, 32-47 log2 p (doc/format.md §2.8). */
uint64_t bch_kdf_flags_encode(unsigned log2_n, unsigned log2_r, unsigned log2_p);
/* Decode kdf_flags into N = 2^a, r = 2^b, p = 2^c. -EINVAL if a >= 64 or
 * b, c >= 32 (not representable). Zero flags decode to N = r = p = 1. */
int bch_kdf_flags_decode(uint64_t kdf_flags, uint64_t *n, uint32_t *r,
			 uint32_t *p);

/*
 * scrypt(@pass, salt = the 7 bytes "bcache\0", N, r, p) -> 32-byte key
 * (libscrypt). Returns 0, or -EINVAL (bad parameters: N must be a power of
 * two > 1, as libscrypt requires; the reference printed "scrypt error: -1")
 * or -ENOMEM.
 */
int bch_scrypt(const void *pass, size_t pass_len, uint64_t n, uint32_t r,
	       uint32_t p, struct bch_key *out);

/* bch_kdf_flags_decode() + bch_scrypt(). */
int bch_derive_key(const void *pass, size_t pass_len, uint64_t kdf_flags,
		   struct bch_key *out);

/* ---- the master key in the crypt field --------------------------------- */

/* The crypt field's key blob: magic (BCH_KEY_MAGIC, "bch**key" as an LE
 * u64, when in clear) ‖ 32-byte key; struct bch_encrypted_key in format.h. */
#define BCH_ENCRYPTED_KEY_BYTES	40

/* Is the 40-byte key blob wrapped (its magic is not "bch**key")? */
bool bch_key_blob_is_encrypted(const uint8_t blob[BCH_ENCRYPTED_KEY_BYTES]);

/*
 * Unwrap: ChaCha20 (key @wrapping_key, nonce bch_nonce_sb_key(@uuid),
 * counter 0) over the 40-byte @blob; if the magic comes out right, copy the
 * master key to *@master. @internal_uuid is the superblock's internal uuid
 * (offset 40), not the user uuid. Returns 0 or -EKEYREJECTED (wrong
 * passphrase/key; *@master is zeroed).
 */
int bch_unwrap_master_key(const uint8_t blob[BCH_ENCRYPTED_KEY_BYTES],
			  const struct bch_key *wrapping_key,
			  const uint8_t internal_uuid[16],
			  struct bch_key *master);

/* The inverse: blob = ChaCha20(magic ‖ master). */
void bch_wrap_master_key(const struct bch_key *master,
			 const struct bch_key *wrapping_key,
			 const uint8_t internal_uuid[16],
			 uint8_t blob[BCH_ENCRYPTED_KEY_BYTES]);

/* Blob with the key in clear (--no_passphrase, remove-passphrase). */
void bch_store_master_key_clear(const struct bch_key *master,
				uint8_t blob[BCH_ENCRYPTED_KEY_BYTES]);

/* Master key from a clear blob; -EINVAL if the blob is wrapped. */
int bch_master_key_from_clear(const uint8_t blob[BCH_ENCRYPTED_KEY_BYTES],
			      struct bch_key *master);

/* ---- the superblock crypt field (doc/format.md §9, doc/tools.md §7) ---------- */

/*
 * Derive the wrapping key of passphrase @pass with @cf's KDF parameters and
 * unwrap @cf's master key into *@master (and the wrapping key into
 * *@wrapping, unless NULL). @internal_uuid is the superblock's uuid.
 * Returns 0; -EKEYREJECTED for a wrong passphrase; or bch_derive_key()'s
 * error (-EINVAL: unusable KDF parameters, -ENOMEM). Keys are zeroed on error.
 */
int bch_crypt_unlock(const struct bch_sb_field_crypt *cf,
		     const uint8_t internal_uuid[16],
		     const void *pass, size_t pass_len,
		     struct bch_key *wrapping, struct bch_key *master);

/*
 * Store @master in @cf wrapped with the key derived from @pass. The KDF
 * parameters are kept (as the 2018 set-passphrase did); a field without
 * any (kdf_flags 0, --no_passphrase) gets the format defaults (scrypt,
 * log2 N/r/p 14/3/4). Returns 0 or bch_derive_key()'s error (@cf unchanged).
 */
int bch_crypt_set_passphrase(struct bch_sb_field_crypt *cf,
			     const uint8_t internal_uuid[16],
			     const struct bch_key *master,
			     const void *pass, size_t pass_len);

/* Store @master in @cf in clear (remove-passphrase); KDF fields unchanged. */
void bch_crypt_clear_passphrase(struct bch_sb_field_crypt *cf,
				const struct bch_key *master);

/* ---- kernel keyring ---------------------------------------------------- */

/*
 * The keyring entries hold the 32-byte passphrase-derived wrapping key
 * (not the master key), description "bcachefs:<user uuid>" with the uuid in
 * lower-case 8-4-4-4-12 form (doc/format.md §9.4, doc/tools.md §7). @uuid is that
 * text (any case; it is lower-cased and must be a valid uuid, else -EINVAL).
 */
#define BCH_KEYRING_DESC_MAX	(9 + 36 + 1)

/* Lower-case text form of a 16-byte uuid into @out (37 bytes). */
void bch_uuid_to_str(const uint8_t uuid[16], char out[37]);

/* "bcachefs:<uuid>" into @buf (BCH_KEYRING_DESC_MAX bytes). 0 or -EINVAL. */
int bch_keyring_desc(const char *uuid, char buf[BCH_KEYRING_DESC_MAX]);

/*
 * Find the "user" key for @uuid (request_key over the caller's keyrings,
 * then a search of the user keyring; the key is not linked anywhere) and
 * read its payload into *@out.
 * Returns 0; -ENOKEY if there is none (also -EKEYEXPIRED, -EKEYREVOKED,
 * -ENOSYS, ... as the kernel says); -EINVAL if its payload is not 32 bytes.
 */
int bch_keyring_lookup(const char *uuid, struct bch_key *out);

/*
 * Add the wrapping key for @uuid to the user keyring (@u) twice, as a
 * "logon" key (for the kernel) and a "user" key (for the tools), replacing
 * existing ones, as `unlock` does. Returns 0 or -errno of add_key().
 */
int bch_keyring_add(const char *uuid, const struct bch_key *key);

/* Keyrings `unlock -k` can add to. */
enum bch_keyring {
	BCH_KEYRING_USER,		/* @u, the default (2018) */
	BCH_KEYRING_SESSION,		/* @s */
	BCH_KEYRING_USER_SESSION,	/* @us */
};

/* bch_keyring_add() into keyring @ring. 0, -EINVAL or -errno of add_key(). */
int bch_keyring_add_to(const char *uuid, const struct bch_key *key,
		       enum bch_keyring ring);

/*
 * Drop every "logon" and "user" key of @uuid the caller can reach, e.g.
 * after the passphrase changed and they no longer unwrap the master key:
 * those found from the session keyring are invalidated, then
 * bch_keyring_remove() unlinks any left in the user keyring. Returns 0
 * (also when there were none) or the -errno of the first failure.
 */
int bch_keyring_forget(const char *uuid);

/* Unlink both keys of @uuid from the user keyring (ignores missing ones).
 * Returns 0, or -errno of the first failure other than "not found". */
int bch_keyring_remove(const char *uuid);

/* ---- passphrases ------------------------------------------------------- */

/*
 * Passphrases are returned as a malloc'd NUL-terminated buffer of *@len
 * bytes (the line without one trailing '\n'; an empty passphrase is
 * allowed). Free with bch_passphrase_free(), which wipes it.
 */
void bch_passphrase_free(char *pass, size_t len);

/*
 * Read one line from @fd (byte by byte, nothing after the newline is
 * consumed). Returns 0; -ENODATA on EOF before any byte; -errno on a read
 * error.
 */
int bch_read_passphrase_fd(int fd, char **pass, size_t *len);

/* The first line of file @path ("-" = stdin). */
int bch_read_passphrase_file(const char *path, char **pass, size_t *len);

/*
 * Passphrase input as the tools do it (doc/tools.md §1.3), from @fd (normally
 * STDIN_FILENO):
 *  - @fd a terminal: print @prompt on stderr, turn echo off (flushing pending
 *    input), read a line, restore the terminal, print "\n" on stderr; with
 *    @confirm, ask again with "Enter same passphrase again: " and return
 *    -EINVAL if the two differ ("Passphrases do not match");
 *  - otherwise: no prompt, one line, no confirmation.
 * Errors: -ENODATA (EOF: "error reading passphrase"), -errno.
 */
#define BCH_PASSPHRASE_CONFIRM_PROMPT	"Enter same passphrase again: "
int bch_read_passphrase(int fd, const char *prompt, bool confirm,
			char **pass, size_t *len);

#endif /* BCH_CRYPTO_H */
