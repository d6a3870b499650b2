// SPDX-License-Identifier: GPL-2.0
/*
 * The encryption commands (doc/tools.md §7, doc/format.md §9):
 *
 *   unlock             passphrase -> wrapping key -> kernel keyring, so the
 *                      kernel (logon key) and our own opens (user key) find it;
 *   set-passphrase     rewrap the master key with a new passphrase on every
 *                      member device;
 *   remove-passphrase  store the master key in clear on every member device.
 *
 * Better than 2018 (doc/tools.md §8): set/remove-passphrase ask for the
 * current passphrase when the key is not in the keyring, set-passphrase
 * works on a filesystem whose key is stored in clear (it sets the scrypt
 * parameters format uses), refuses an empty new passphrase and mounted
 * devices, and both drop the keyring keys that no longer fit.
 */
#include "cmd_opts.h"
#include "cmds.h"
#include "libbcachefs/codec/crypto.h"
#include "libbcachefs/dev/dev.h"
#include "libbcachefs/util/errcode.h"
#include "libbcachefs/fs/fs.h"
#include "libbcachefs/dev/mounted.h"
#include "libbcachefs/dev/super.h"
#include "libbcachefs/util/util.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { EXIT_UNLOCKED = 2 };

/* ---- unlock --------------------------------------------------------------- */

static int parse_keyring(const char *s, enum bch_keyring *ring)
{
	if (!strcmp(s, "user"))
		*ring = BCH_KEYRING_USER;
	else if (!strcmp(s, "session"))
		*ring = BCH_KEYRING_SESSION;
	else if (!strcmp(s, "user_session"))
		*ring = BCH_KEYRING_USER_SESSION;
	else
		return -EINVAL;
	return 0;
}

static const char *keyring_name(enum bch_keyring ring)
{
	switch (ring) {
	case BCH_KEYRING_USER:		return "user";
	case BCH_KEYRING_SESSION:	return "session";
	case BCH_KEYRING_USER_SESSION:	return "user_session";
	}
	return "?";
}

/* Read and check the superblock of @path; *@h owns it. Exits on failure. */
static void unlock_read_sb(const char *path, struct bch_sb_handle *h)
{
	struct printbuf err = PRINTBUF, why = PRINTBUF;
	struct bch_devio *io;
	int ret;

	ret = dev_open(path, 0, &io);
	if (ret) {
		cmd_open_failed(path, ret, NULL, NULL);
		exit(EXIT_FAIL);
	}
	ret = bch_sb_read(io, h, &err);
	dev_close(io);
	if (ret) {
		cmd_open_failed(path, ret, &err, NULL);
		exit(EXIT_FAIL);
	}
	ret = bch_sb_validate(h->sb, &why);
	if (ret)
		die("unlock: %s: superblock at sector %llu is invalid: %s", path,
		    (unsigned long long) h->offset, printbuf_str(&why));
	printbuf_exit(&err);
	printbuf_exit(&why);
}

/* Is a key that unwraps @cf's master key already in a keyring we can reach? */
static bool unlock_have_key(const char *uuid, const struct bch_sb_field_crypt *cf,
			    const uint8_t internal_uuid[16])
{
	struct bch_key wk, master;
	bool ok;

	if (bch_keyring_lookup(uuid, &wk))
		return false;
	ok = !bch_unwrap_master_key((const uint8_t *) &cf->key, &wk, internal_uuid,
				    &master);
	bch_key_wipe(&wk);
	bch_key_wipe(&master);
	return ok;
}

struct unlock_args {
	bool			check;
	enum bch_keyring	ring;
	const char		*pass_file;
};

static int opt_keyring(void *opts, const char *arg, struct printbuf *why)
{
	if (!parse_keyring(arg, &((struct unlock_args *)opts)->ring))
		return 0;
	pr_buf(why, "unknown keyring '%s' (user, session or user_session)", arg);
	return -1;
}

static const struct cmd_opt unlock_opts[] = {
	CMD_OPT_BOOL('c', "check", "only check whether DEVICE is encrypted with a\n"
		     "passphrase and still locked (see exit status)", struct unlock_args, check),
	CMD_OPT_FN('k', "keyring", "KEYRING", "user (default), session or user_session",
		   opt_keyring),
	CMD_OPT_STR('f', "passphrase-file", "FILE", "read the passphrase from the first line of FILE\n"
		    "(- for standard input; -f is an older spelling)", struct unlock_args, pass_file),
	{ .name = "passphrase_file", .arg = "FILE", .type = OPT_STR,
	  .off = offsetof(struct unlock_args, pass_file), .hidden = true },
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def unlock_def = {
	.name		= "unlock",
	.args		= "DEVICE",
	.about		= "Put the key of an encrypted filesystem in the kernel keyring, so that it can\n"
			  "be mounted and opened by the other commands without the passphrase.",
	.opts		= unlock_opts,
	.footer		=
	"Without --passphrase-file the passphrase is read from standard input: with\n"
	"a prompt and without echo on a terminal, otherwise one line, no prompt. Two\n"
	"keys are added, both named bcachefs:<external uuid> and holding the key\n"
	"derived from the passphrase: a \"logon\" key for the kernel and a \"user\"\n"
	"key for the tools.\n"
	"\n"
	"Exit status: 0 unlocked (with -c: encrypted and locked, unlock needed);\n"
	"1 not encrypted, key stored without passphrase, wrong passphrase or any\n"
	"other failure; 2 with -c: already unlocked (a fitting key is in a keyring);\n"
	"16 usage error.\n",
	.min_args	= 1,
	.max_args	= 1,
	.no_args_msg	= "no device given",
	.too_many_msg	= "too many arguments: one device only",
};

int cmd_unlock(int argc, char *argv[])
{
	struct unlock_args a = { .ring = BCH_KEYRING_USER };
	const char *path = argv[cmd_parse(&unlock_def, &a, argc, argv)];
	enum bch_keyring ring;
	const char *pass_file;
	const struct bch_sb_field_crypt *cf;
	struct bch_sb_handle h = { 0 };
	struct bch_key wk, master;
	bool check;
	char uuid[37], *pass;
	size_t len;
	int ret;

	ring = a.ring;
	pass_file = a.pass_file;
	check = a.check;
	unlock_read_sb(path, &h);
	cf = bch_sb_crypt(h.sb);
	if (!cf) {
		if (BCH_SB_ENCRYPTION_TYPE(h.sb))
			die("unlock: %s: superblock marks the filesystem encrypted but has no crypt field",
			    path);
		die("unlock: %s: filesystem is not encrypted", path);
	}
	if (!bch_key_is_encrypted(&cf->key))
		die("unlock: %s: the encryption key is stored without a passphrase: nothing to unlock",
		    path);
	if (bch_crypto_init())
		die("unlock: cannot initialise libsodium");
	bch_uuid_to_str(h.sb->user_uuid.b, uuid);

	if (check) {
		ret = unlock_have_key(uuid, cf, h.sb->uuid.b) ? EXIT_UNLOCKED : EXIT_OK;
		bch_sb_handle_free(&h);
		return ret;
	}

	if (pass_file)
		ret = bch_read_passphrase_file(pass_file, &pass, &len);
	else
		ret = bch_read_passphrase(STDIN_FILENO, "Enter passphrase: ", false,
					  &pass, &len);
	if (ret)
		die("unlock: error reading passphrase from %s: %s",
		    pass_file && strcmp(pass_file, "-") ? pass_file : "standard input",
		    bch_err_str(ret));

	ret = bch_crypt_unlock(cf, h.sb->uuid.b, pass, len, &wk, &master);
	bch_passphrase_free(pass, len);
	bch_key_wipe(&master);
	if (ret == -EKEYREJECTED)
		die("unlock: %s: wrong passphrase", path);
	if (ret)
		die("unlock: %s: scrypt key derivation failed (kdf_flags %#llx): %s", path,
		    (unsigned long long) le64_to_cpu(cf->kdf_flags), bch_err_str(ret));

	ret = bch_keyring_add_to(uuid, &wk, ring);
	bch_key_wipe(&wk);
	if (ret)
		die("unlock: cannot add key bcachefs:%s to the %s keyring: %s", uuid,
		    keyring_name(ring), bch_err_str(ret));
	bch_sb_handle_free(&h);
	return EXIT_OK;
}

/* ---- set-passphrase / remove-passphrase --------------------------------------- */

static struct bch_sb_field_crypt *dev_crypt(struct bch_member_dev *ca)
{
	return (struct bch_sb_field_crypt *) bch_sb_crypt(ca->sb);
}

/* Wipe the key blobs held in memory (remove-passphrase leaves it in clear). */
static void wipe_sb_keys(struct bch_fs *c)
{
	for (unsigned i = 0; i < BCH_FS_MAX_DEVS; i++) {
		struct bch_member_dev *ca = c->devs[i];
		struct bch_sb_field_crypt *cf = ca && ca->sb ? dev_crypt(ca) : NULL;

		if (cf)
			explicit_bzero(&cf->key, sizeof(cf->key));
	}
}

static const struct cmd_opt passphrase_opts[] = {
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def set_passphrase_def = {
	.name		= "set-passphrase",
	.args		= "DEVICE...",
	.about		= "Change the passphrase of an unmounted encrypted filesystem (give all its\n"
			  "devices), or give one to a filesystem whose key is stored unencrypted.",
	.opts		= passphrase_opts,
	.footer		=
	"The current key is taken from the keyring (see 'bcachefs unlock'); otherwise\n"
	"the current passphrase is asked first. Then the new passphrase is asked twice\n"
	"on a terminal. When standard input is not a terminal, its lines are used\n"
	"without prompts: the current passphrase (only when it is needed), then the\n"
	"new one. Every superblock copy of every device is rewritten; keyring keys of\n"
	"the old passphrase are removed.\n",
	.min_args	= 1,
	.no_args_msg	= "no device given",
	.needs		= CMD_NEEDS_UNMOUNTED,
};

static const struct cmd_def remove_passphrase_def = {
	.name		= "remove-passphrase",
	.args		= "DEVICE...",
	.about		= "Store the master key of an unmounted encrypted filesystem unencrypted (give\n"
			  "all its devices): the data stays encrypted, but no passphrase is needed to\n"
			  "open it.",
	.opts		= passphrase_opts,
	.footer		=
	"The current key is taken from the keyring (see 'bcachefs unlock'); otherwise\n"
	"the current passphrase is read from standard input (with a prompt on a\n"
	"terminal). Every superblock copy of every device is rewritten; keyring keys\n"
	"of the old passphrase are removed.\n",
	.min_args	= 1,
	.no_args_msg	= "no device given",
	.needs		= CMD_NEEDS_UNMOUNTED,
};

static int change_passphrase(int argc, char *argv[], bool remove)
{
	const struct cmd_def *def = remove ? &remove_passphrase_def : &set_passphrase_def;
	const char *name = def->name;
	bool tty = isatty(STDIN_FILENO);
	struct bch_fs_opts fo = {
		.no_journal	  = true,
		.ask_passphrase	  = tty,
		.passphrase_file  = tty ? NULL : "-",
		.passphrase_prompt = "Enter current passphrase: ",
	};
	struct printbuf err = PRINTBUF;
	struct bch_sb_field_crypt newcf;
	struct bch_fs *c = NULL;
	unsigned i, nr_written = 0;
	char uuid[37], *pass = NULL;
	size_t len = 0;
	int ret, status = EXIT_FAIL;
	int first = cmd_parse(def, NULL, argc, argv);

	for (i = first; i < (unsigned) argc; i++)
		if (dev_mounted_check(argv[i]) > 0)
			die("%s: %s is mounted or in use: unmount the filesystem first",
			    name, argv[i]);

	ret = bch_fs_open(argv + first, argc - first, &fo, &c, &err);
	if (ret) {
		cmd_open_failed(argv[first], ret, &err, NULL);
		goto out;
	}
	if (!c->encrypted) {
		fprintf(stderr, "bcachefs: %s: %s: filesystem is not encrypted\n", name,
			argv[first]);
		goto out;
	}
	newcf = *bch_sb_crypt(c->sb);	/* open checked it exists */
	bch_uuid_to_str(c->user_uuid, uuid);

	if (remove) {
		if (!bch_key_is_encrypted(&newcf.key)) {
			fprintf(stderr, "bcachefs: %s: %s: the key is already stored without a passphrase: nothing changed\n",
				name, argv[first]);
			status = EXIT_OK;
			goto out;
		}
		bch_crypt_clear_passphrase(&newcf, &c->key);
	} else {
		ret = bch_read_passphrase(STDIN_FILENO, "Enter new passphrase: ", true,
					  &pass, &len);
		if (ret == -EINVAL) {
			fprintf(stderr, "bcachefs: %s: passphrases do not match\n", name);
			goto out;
		}
		if (ret) {
			fprintf(stderr, "bcachefs: %s: error reading the new passphrase: %s\n",
				name, bch_err_str(ret));
			goto out;
		}
		if (!len) {
			fprintf(stderr, "bcachefs: %s: empty passphrase refused "
				"(remove-passphrase stores the key without one)\n", name);
			goto out;
		}
		ret = bch_crypt_set_passphrase(&newcf, c->internal_uuid, &c->key, pass, len);
		if (ret) {
			fprintf(stderr, "bcachefs: %s: scrypt key derivation failed: %s\n",
				name, bch_err_str(ret));
			goto out;
		}
	}

	/* every present member must have the field before anything is written */
	for (i = 0; i < BCH_FS_MAX_DEVS; i++) {
		struct bch_member_dev *ca = c->devs[i];

		if (ca && ca->io && !dev_crypt(ca)) {
			fprintf(stderr, "bcachefs: %s: %s: superblock has no crypt field (device %u is stale?): nothing written\n",
				name, ca->io->path, i);
			goto out;
		}
	}

	for (i = 0; i < BCH_FS_MAX_DEVS; i++) {
		struct bch_member_dev *ca = c->devs[i];
		struct bch_sb_field_crypt *cf;

		if (!ca || !ca->io)
			continue;
		cf = dev_crypt(ca);
		cf->flags = newcf.flags;
		cf->kdf_flags = newcf.kdf_flags;
		cf->key = newcf.key;
		ca->sb->seq = cpu_to_le64(le64_to_cpu(ca->sb->seq) + 1);
		ret = bch_sb_write(ca->io, ca->sb, &err);
		if (ret) {
			fputs(printbuf_str(&err), stderr);
			fprintf(stderr, "bcachefs: %s: writing the superblocks of %s failed: %s "
				"(%u of the devices before it were written)\n",
				name, ca->io->path, bch_err_str(ret), nr_written);
			goto out;
		}
		nr_written++;
	}

	/* the old wrapping key no longer fits: don't leave it for mount */
	ret = bch_keyring_forget(uuid);
	if (ret)
		fprintf(stderr, "bcachefs: %s: warning: cannot remove the old key bcachefs:%s from the keyring: %s\n",
			name, uuid, bch_err_str(ret));
	status = EXIT_OK;
out:
	bch_passphrase_free(pass, len);
	explicit_bzero(&newcf, sizeof(newcf));
	if (c) {
		wipe_sb_keys(c);
		bch_fs_close(c);
	}
	printbuf_exit(&err);
	return status;
}

int cmd_set_passphrase(int argc, char *argv[])
{
	return change_passphrase(argc, argv, false);
}

int cmd_remove_passphrase(int argc, char *argv[])
{
	return change_passphrase(argc, argv, true);
}
