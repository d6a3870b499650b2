// SPDX-License-Identifier: GPL-2.0
/*
 * ChaCha20, Poly1305, scrypt, master key wrapping, keyring and passphrase
 * input. See crypto.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <keyutils.h>
#include <libscrypt.h>
#include <sodium.h>

#include "codec/crypto.h"
#include "util/errcode.h"

/* ---- init ---------------------------------------------------------------- */

static pthread_once_t sodium_once = PTHREAD_ONCE_INIT;
static int sodium_ret;

static void sodium_once_init(void)
{
	sodium_ret = sodium_init() < 0 ? -EIO : 0;
}

int bch_crypto_init(void)
{
	pthread_once(&sodium_once, sodium_once_init);
	return sodium_ret;
}

void bch_key_wipe(struct bch_key *key)
{
	sodium_memzero(key, sizeof(*key));
}

static inline uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	for (unsigned i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

/* ---- ChaCha20 / Poly1305 ------------------------------------------------- */

void bch_chacha20(const struct bch_key *key, struct bch_nonce nonce,
		  void *buf, size_t len)
{
	uint8_t iv[16];
	uint64_t counter = nonce.d[0] | (uint64_t) nonce.d[1] << 32;

	if (!len)
		return;
	bch_crypto_init();
	bch_nonce_to_bytes(nonce, iv);
	/* state words 12-13 = counter (d0, d1), 14-15 = IV bytes 8..15 */
	crypto_stream_chacha20_xor_ic(buf, buf, len, iv + 8, counter,
				      bch_key_cbytes(key));
}

int bch_encrypt(unsigned csum_type, const struct bch_key *key,
		struct bch_nonce nonce, void *buf, size_t len)
{
	if (csum_type >= BCH_CSUM_NR)
		return -EINVAL;
	if (!bch_csum_type_is_encryption(csum_type))
		return 0;
	if (!key)
		return -ENOKEY;
	bch_chacha20(key, nonce, buf, len);
	return 0;
}

void bch_poly1305_key(const struct bch_key *key, struct bch_nonce nonce,
		      uint8_t otk[BCH_POLY1305_KEY_BYTES])
{
	memset(otk, 0, BCH_POLY1305_KEY_BYTES);
	bch_chacha20(key, bch_nonce_poly(nonce), otk, BCH_POLY1305_KEY_BYTES);
}

void bch_poly1305(const uint8_t otk[BCH_POLY1305_KEY_BYTES],
		  const void *data, size_t len,
		  uint8_t tag[BCH_POLY1305_TAG_BYTES])
{
	bch_crypto_init();
	crypto_onetimeauth_poly1305(tag, data, len, otk);
}

/* ---- scrypt -------------------------------------------------------------- */

static const uint8_t bch_kdf_salt[7] = { 'b', 'c', 'a', 'c', 'h', 'e', 0 };

uint64_t bch_kdf_flags_encode(unsigned log2_n, unsigned log2_r, unsigned log2_p)
{
	return (uint64_t) (log2_n & 0xffff) |
	       (uint64_t) (log2_r & 0xffff) << 16 |
	       (uint64_t) (log2_p & 0xffff) << 32;
}

int bch_kdf_flags_decode(uint64_t kdf_flags, uint64_t *n, uint32_t *r,
			 uint32_t *p)
{
	unsigned ln = kdf_flags & 0xffff;
	unsigned lr = (kdf_flags >> 16) & 0xffff;
	unsigned lp = (kdf_flags >> 32) & 0xffff;

	if (ln >= 64 || lr >= 32 || lp >= 32)
		return -EINVAL;
	*n = (uint64_t) 1 << ln;
	*r = (uint32_t) 1 << lr;
	*p = (uint32_t) 1 << lp;
	return 0;
}

int bch_scrypt(const void *pass, size_t pass_len, uint64_t n, uint32_t r,
	       uint32_t p, struct bch_key *out)
{
	static const uint8_t empty[1];
	int ret;

	/* libscrypt's own rules, checked here for a stable error code. */
	if (n < 2 || (n & (n - 1)) || !r || !p ||
	    (uint64_t) r * (uint64_t) p >= (1U << 30)) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}

	errno = 0;
	ret = libscrypt_scrypt(pass_len ? pass : empty, pass_len,
			       bch_kdf_salt, sizeof(bch_kdf_salt),
			       n, r, p, bch_key_bytes(out), BCH_KEY_BYTES);
	if (ret) {
		int err = errno == ENOMEM ? -ENOMEM : -EINVAL;

		sodium_memzero(out, sizeof(*out));
		return err;
	}
	return 0;
}

int bch_derive_key(const void *pass, size_t pass_len, uint64_t kdf_flags,
		   struct bch_key *out)
{
	uint64_t n;
	uint32_t r, p;
	int ret = bch_kdf_flags_decode(kdf_flags, &n, &r, &p);

	if (ret) {
		memset(out, 0, sizeof(*out));
		return ret;
	}
	return bch_scrypt(pass, pass_len, n, r, p, out);
}

/* ---- master key ---------------------------------------------------------- */

bool bch_key_blob_is_encrypted(const uint8_t blob[BCH_ENCRYPTED_KEY_BYTES])
{
	return get_le64(blob) != BCH_KEY_MAGIC;
}

int bch_unwrap_master_key(const uint8_t blob[BCH_ENCRYPTED_KEY_BYTES],
			  const struct bch_key *wrapping_key,
			  const uint8_t internal_uuid[16],
			  struct bch_key *master)
{
	uint8_t buf[BCH_ENCRYPTED_KEY_BYTES];
	int ret = 0;

	memcpy(buf, blob, sizeof(buf));
	bch_chacha20(wrapping_key, bch_nonce_sb_key(internal_uuid),
		     buf, sizeof(buf));
	if (get_le64(buf) == BCH_KEY_MAGIC)
		memcpy(bch_key_bytes(master), buf + 8, BCH_KEY_BYTES);
	else {
		memset(master, 0, sizeof(*master));
		ret = -EKEYREJECTED;
	}
	sodium_memzero(buf, sizeof(buf));
	return ret;
}

void bch_store_master_key_clear(const struct bch_key *master,
				uint8_t blob[BCH_ENCRYPTED_KEY_BYTES])
{
	put_le64(blob, BCH_KEY_MAGIC);
	memcpy(blob + 8, bch_key_cbytes(master), BCH_KEY_BYTES);
}

void bch_wrap_master_key(const struct bch_key *master,
			 const struct bch_key *wrapping_key,
			 const uint8_t internal_uuid[16],
			 uint8_t blob[BCH_ENCRYPTED_KEY_BYTES])
{
	bch_store_master_key_clear(master, blob);
	bch_chacha20(wrapping_key, bch_nonce_sb_key(internal_uuid),
		     blob, BCH_ENCRYPTED_KEY_BYTES);
}

int bch_master_key_from_clear(const uint8_t blob[BCH_ENCRYPTED_KEY_BYTES],
			      struct bch_key *master)
{
	if (bch_key_blob_is_encrypted(blob)) {
		memset(master, 0, sizeof(*master));
		return -EINVAL;
	}
	memcpy(bch_key_bytes(master), blob + 8, BCH_KEY_BYTES);
	return 0;
}

/* ---- the crypt field ------------------------------------------------------ */

int bch_crypt_unlock(const struct bch_sb_field_crypt *cf,
		     const uint8_t internal_uuid[16],
		     const void *pass, size_t pass_len,
		     struct bch_key *wrapping, struct bch_key *master)
{
	struct bch_key wk;
	int ret;

	memset(master, 0, sizeof(*master));
	ret = bch_derive_key(pass, pass_len, le64_to_cpu(cf->kdf_flags), &wk);
	if (!ret)
		ret = bch_unwrap_master_key((const uint8_t *) &cf->key, &wk,
					    internal_uuid, master);
	if (wrapping) {
		if (ret)
			memset(wrapping, 0, sizeof(*wrapping));
		else
			*wrapping = wk;
	}
	bch_key_wipe(&wk);
	return ret;
}

int bch_crypt_set_passphrase(struct bch_sb_field_crypt *cf,
			     const uint8_t internal_uuid[16],
			     const struct bch_key *master,
			     const void *pass, size_t pass_len)
{
	uint8_t blob[BCH_ENCRYPTED_KEY_BYTES];
	uint64_t kdf_flags = le64_to_cpu(cf->kdf_flags);
	struct bch_key wk;
	int ret;

	if (!kdf_flags)
		kdf_flags = bch_kdf_flags_encode(BCH_KDF_SCRYPT_LOG2_N,
						 BCH_KDF_SCRYPT_LOG2_R,
						 BCH_KDF_SCRYPT_LOG2_P);
	ret = bch_derive_key(pass, pass_len, kdf_flags, &wk);
	if (ret)
		return ret;
	bch_wrap_master_key(master, &wk, internal_uuid, blob);
	bch_key_wipe(&wk);

	SET_BCH_CRYPT_KDF_TYPE(cf, BCH_KDF_SCRYPT);
	cf->kdf_flags = cpu_to_le64(kdf_flags);
	memcpy(&cf->key, blob, sizeof(blob));
	sodium_memzero(blob, sizeof(blob));
	return 0;
}

void bch_crypt_clear_passphrase(struct bch_sb_field_crypt *cf,
				const struct bch_key *master)
{
	uint8_t blob[BCH_ENCRYPTED_KEY_BYTES];

	bch_store_master_key_clear(master, blob);
	memcpy(&cf->key, blob, sizeof(blob));
	sodium_memzero(blob, sizeof(blob));
}

/* ---- keyring ------------------------------------------------------------- */

void bch_uuid_to_str(const uint8_t uuid[16], char out[37])
{
	static const char hex[] = "0123456789abcdef";
	unsigned j = 0;

	for (unsigned i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[j++] = '-';
		out[j++] = hex[uuid[i] >> 4];
		out[j++] = hex[uuid[i] & 15];
	}
	out[j] = '\0';
}

int bch_keyring_desc(const char *uuid, char buf[BCH_KEYRING_DESC_MAX])
{
	size_t i;

	if (!uuid || strlen(uuid) != 36)
		return -EINVAL;

	memcpy(buf, "bcachefs:", 9);
	for (i = 0; i < 36; i++) {
		unsigned char c = uuid[i];

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (c != '-')
				return -EINVAL;
		} else if (!isxdigit(c)) {
			return -EINVAL;
		}
		buf[9 + i] = tolower(c);
	}
	buf[9 + 36] = '\0';
	return 0;
}

static int errno_or(int fallback)
{
	return errno > 0 ? -errno : fallback;
}

int bch_keyring_lookup(const char *uuid, struct bch_key *out)
{
	char desc[BCH_KEYRING_DESC_MAX];
	uint8_t buf[64];
	key_serial_t id;
	long len;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = bch_keyring_desc(uuid, desc);
	if (ret)
		return ret;

	/* no destination keyring: a found key must not be linked anywhere */
	id = request_key("user", desc, NULL, 0);
	if (id < 0) {
		ret = errno_or(-ENOKEY);
		/* The user keyring may not be reachable from the session. */
		id = keyctl_search(KEY_SPEC_USER_KEYRING, "user", desc, 0);
		if (id < 0)
			return ret;
	}

	len = keyctl_read(id, (char *) buf, sizeof(buf));
	if (len < 0)
		return errno_or(-ENOKEY);
	if (len != BCH_KEY_BYTES)
		ret = -EINVAL;
	else
		memcpy(bch_key_bytes(out), buf, BCH_KEY_BYTES);
	sodium_memzero(buf, sizeof(buf));
	return ret;
}

int bch_keyring_add(const char *uuid, const struct bch_key *key)
{
	return bch_keyring_add_to(uuid, key, BCH_KEYRING_USER);
}

int bch_keyring_add_to(const char *uuid, const struct bch_key *key,
		       enum bch_keyring ring)
{
	static const char * const types[] = { "logon", "user" };
	char desc[BCH_KEYRING_DESC_MAX];
	key_serial_t dest;
	int ret = bch_keyring_desc(uuid, desc);

	if (ret)
		return ret;

	switch (ring) {
	case BCH_KEYRING_USER:		dest = KEY_SPEC_USER_KEYRING; break;
	case BCH_KEYRING_SESSION:	dest = KEY_SPEC_SESSION_KEYRING; break;
	case BCH_KEYRING_USER_SESSION:	dest = KEY_SPEC_USER_SESSION_KEYRING; break;
	default:			return -EINVAL;
	}

	for (unsigned i = 0; i < 2; i++)
		if (add_key(types[i], desc, bch_key_cbytes(key), BCH_KEY_BYTES,
			    dest) < 0)
			return errno_or(-EINVAL);
	return 0;
}

int bch_keyring_forget(const char *uuid)
{
	static const char * const types[] = { "logon", "user" };
	char desc[BCH_KEYRING_DESC_MAX];
	int ret = bch_keyring_desc(uuid, desc);

	if (ret)
		return ret;

	/* keys reachable from the session (possessed): invalidate them */
	for (unsigned i = 0; i < 2; i++) {
		/* one key per keyring it was added to; a few at most */
		for (unsigned tries = 0; tries < 16; tries++) {
			key_serial_t id = request_key(types[i], desc, NULL, 0);

			if (id < 0)
				break;
			if (keyctl_invalidate(id) < 0) {
				if (!ret)
					ret = errno_or(-EINVAL);
				break;
			}
		}
	}
	/* the user keyring, when the session does not link it */
	return bch_keyring_remove(uuid) ?: ret;
}

int bch_keyring_remove(const char *uuid)
{
	static const char * const types[] = { "logon", "user" };
	char desc[BCH_KEYRING_DESC_MAX];
	int ret = bch_keyring_desc(uuid, desc);

	if (ret)
		return ret;

	for (unsigned i = 0; i < 2; i++) {
		key_serial_t id = keyctl_search(KEY_SPEC_USER_KEYRING,
						types[i], desc, 0);

		if (id < 0) {
			if (errno == ENOKEY)
				continue;
			return ret ?: errno_or(-EINVAL);
		}
		if (keyctl_unlink(id, KEY_SPEC_USER_KEYRING) < 0 &&
		    errno != ENOENT && !ret)
			ret = errno_or(-EINVAL);
	}
	return ret;
}

/* ---- passphrases --------------------------------------------------------- */

void bch_passphrase_free(char *pass, size_t len)
{
	if (!pass)
		return;
	sodium_memzero(pass, len + 1);
	free(pass);
}

int bch_read_passphrase_fd(int fd, char **pass, size_t *len)
{
	size_t size = 128, n = 0;
	char *buf = malloc(size);
	bool any = false;

	*pass = NULL;
	*len = 0;
	if (!buf)
		return -ENOMEM;

	for (;;) {
		char c;
		ssize_t r = read(fd, &c, 1);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			int err = errno_or(-EIO);

			bch_passphrase_free(buf, size - 1);
			return err;
		}
		if (r == 0)
			break;
		any = true;
		if (c == '\n')
			break;

		if (n + 1 >= size) {
			char *nbuf = malloc(size * 2);

			if (!nbuf) {
				bch_passphrase_free(buf, size - 1);
				return -ENOMEM;
			}
			memcpy(nbuf, buf, n);
			sodium_memzero(buf, size);
			free(buf);
			buf = nbuf;
			size *= 2;
		}
		buf[n++] = c;
	}

	if (!any) {
		bch_passphrase_free(buf, size - 1);
		return -BCH_ERR_no_passphrase;
	}

	/* shrink the accounting to the string; wipe the slack now */
	sodium_memzero(buf + n, size - n);
	*pass = buf;
	*len = n;
	return 0;
}

int bch_read_passphrase_file(const char *path, char **pass, size_t *len)
{
	int fd, ret;

	if (!strcmp(path, "-"))
		return bch_read_passphrase_fd(STDIN_FILENO, pass, len);

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*pass = NULL;
		*len = 0;
		return errno_or(-EIO);
	}
	ret = bch_read_passphrase_fd(fd, pass, len);
	close(fd);
	return ret;
}

static int read_passphrase_tty(int fd, const char *prompt, char **pass,
			       size_t *len)
{
	struct termios old, noecho;
	int ret;

	fputs(prompt, stderr);
	fflush(stderr);

	if (tcgetattr(fd, &old) < 0)
		return errno_or(-EIO);
	noecho = old;
	noecho.c_lflag &= ~(tcflag_t) ECHO;
	if (tcsetattr(fd, TCSAFLUSH, &noecho) < 0)
		return errno_or(-EIO);

	ret = bch_read_passphrase_fd(fd, pass, len);

	tcsetattr(fd, TCSAFLUSH, &old);
	fputc('\n', stderr);
	fflush(stderr);
	return ret;
}

int bch_read_passphrase(int fd, const char *prompt, bool confirm,
			char **pass, size_t *len)
{
	char *again;
	size_t again_len;
	int ret;

	*pass = NULL;
	*len = 0;

	if (!isatty(fd))
		return bch_read_passphrase_fd(fd, pass, len);

	ret = read_passphrase_tty(fd, prompt, pass, len);
	if (ret || !confirm)
		return ret;

	ret = read_passphrase_tty(fd, BCH_PASSPHRASE_CONFIRM_PROMPT,
				  &again, &again_len);
	if (!ret && (again_len != *len || sodium_memcmp(again, *pass, *len)))
		ret = -EINVAL;
	bch_passphrase_free(again, again_len);
	if (ret) {
		bch_passphrase_free(*pass, *len);
		*pass = NULL;
		*len = 0;
	}
	return ret;
}
