// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs migrate / migrate-superblock (doc/tools.md §6, libbcachefs/migrate.h):
 * turn a mounted ext2/3/4 or xfs filesystem into bcachefs in place, file
 * data linked where it lies; then put the superblock at its default place.
 *
 * Exit status: 0 done (migrate: and fsck -n of the result found nothing),
 * 1 failure, 16 usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd_opts.h"
#include "cmds.h"
#include "libbcachefs/codec/crypto.h"
#include "libbcachefs/util/errcode.h"
#include "libbcachefs/tools/migrate.h"
#include "libbcachefs/util/util.h"

struct migrate_args {
	struct bch_migrate	*m;
	bool			no_passphrase;
	const char		*pass_file;
};

static int o_fs(void *p, const char *arg, struct printbuf *why)
{
	((struct migrate_args *)p)->m->fs_root = arg;
	return 0;
}

static int o_encrypted(void *p, const char *arg, struct printbuf *why)
{
	((struct migrate_args *)p)->m->encrypted = true;
	return 0;
}

static int o_force(void *p, const char *arg, struct printbuf *why)
{
	((struct migrate_args *)p)->m->force = true;
	return 0;
}

static int o_dry_run(void *p, const char *arg, struct printbuf *why)
{
	((struct migrate_args *)p)->m->dry_run = true;
	return 0;
}

static const struct cmd_opt migrate_opts[] = {
	CMD_OPT_FN('f', "fs", "FS_ROOT", "Mount point of the filesystem to migrate (required)", o_fs),
	CMD_OPT_FN(0, "encrypted", NULL, "Encrypt the new filesystem's metadata and new data\n"
		   "(the data linked in place stays as it is)", o_encrypted),
	CMD_OPT_BOOL(0, "no_passphrase", "With --encrypted: store the key unencrypted",
		     struct migrate_args, no_passphrase),
	{ .name = "no-passphrase", .type = OPT_BOOL,
	  .off = offsetof(struct migrate_args, no_passphrase), .hidden = true },
	CMD_OPT_STR(0, "passphrase-file", "F", "Read the passphrase from file F (\"-\" = stdin)",
		    struct migrate_args, pass_file),
	{ .name = "passphrase_file", .arg = "F", .type = OPT_STR,
	  .off = offsetof(struct migrate_args, pass_file), .hidden = true },
	CMD_OPT_FN('F', "force", NULL, "Reuse an existing FS_ROOT/bcachefs", o_force),
	CMD_OPT_FN('n', "dry-run", NULL, "Check, and say what would be linked, copied and\n"
		   "reserved; write nothing", o_dry_run),
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def migrate_def = {
	.name		= "migrate",
	.args		= "-f FS_ROOT",
	.about		= "Turn the mounted ext2/3/4 or xfs filesystem at FS_ROOT into bcachefs, in place:\n"
			  "file data stays where it is (the new filesystem points at it), the new metadata\n"
			  "goes into a file FS_ROOT/bcachefs of a fifth of the device, and the old\n"
			  "filesystem stays valid (and mounted) until migrate-superblock.",
	.opts		= migrate_opts,
	.footer		= "Do not write to the old filesystem afterwards: both share the data blocks.\n"
			  "Exit status: 0 when the new filesystem was made and fsck found it clean,\n"
			  "1 otherwise, 16 for a usage error.\n",
	.no_args	= true,
	.too_many_msg	= " (the filesystem is given with -f)",
	.help_col	= 28,
};

struct migrate_sb_args {
	const char	*dev;
	uint64_t	offset;
};

static int o_offset(void *p, const char *arg, struct printbuf *why)
{
	uint64_t *offset = &((struct migrate_sb_args *)p)->offset;

	if (!parse_u64(arg, offset) && *offset)
		return 0;
	pr_buf(why, "invalid offset '%s' (a sector number, not 0)", arg);
	return -1;
}

static const struct cmd_opt migrate_sb_opts[] = {
	CMD_OPT_STR('d', "dev", "DEVICE", "The device (required)", struct migrate_sb_args, dev),
	CMD_OPT_FN('o', "offset", "OFFSET", "Sector of the existing superblock (required)", o_offset),
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def migrate_sb_def = {
	.name		= "migrate-superblock",
	.args		= "-d DEVICE -o OFFSET",
	.about		= "Add a superblock at the default place (sector 8) to a filesystem made by\n"
			  "migrate, whose superblock is at sector OFFSET of DEVICE (unmounted). This ends\n"
			  "the old filesystem: it is overwritten. Sectors 0-6 are cleared.",
	.opts		= migrate_sb_opts,
	.no_args	= true,
	.needs		= CMD_NEEDS_UNMOUNTED,
	.help_col	= 28,
};

static void progress(void *priv, uint64_t files, uint64_t bytes, int done)
{
	fprintf(stderr, "\rmigrating: %" PRIu64 " inodes, %" PRIu64 " MiB copied%s", files,
		bytes >> 20, done ? "\n" : "");
}

static void dry_run_report(const struct bch_migrate *m)
{
	const struct bch_migrate_counts *c = &m->counts;

	printf("Dry run: nothing was written.\n"
	       "device:                 %s (%s at %s)\n"
	       "block size:             %u\n"
	       "bucket size:            %u KiB, %" PRIu64 " buckets (from bucket %u)\n"
	       "reserved for metadata:  %" PRIu64 " MiB in %s\n"
	       "files:                  %" PRIu64 " regular, %" PRIu64 " directories, %" PRIu64
	       " symlinks, %" PRIu64 " special, %" PRIu64 " more hard links\n"
	       "linked in place:        %" PRIu64 " extents, %" PRIu64 " MiB\n"
	       "copied:                 %" PRIu64 " extents, %" PRIu64 " KiB\n"
	       "unwritten (holes):      %" PRIu64 " KiB\n",
	       m->dev_path, m->fs_type, m->root, m->block_sectors * 512,
	       m->bucket_sectors / 2, m->nbuckets, m->first_bucket,
	       m->reserve_bytes >> 20, m->reserved_path,
	       c->nr_files, c->nr_dirs, c->nr_symlinks, c->nr_special, c->nr_hardlinks,
	       c->nr_linked_extents, c->linked_bytes >> 20,
	       c->nr_copied_extents, c->copied_bytes >> 10, c->hole_bytes >> 10);
	if (c->nr_unplaced)
		printf("not placed yet:         %" PRIu64 " extents, %" PRIu64 " KiB (written out "
		       "first, then linked or copied)\n", c->nr_unplaced, c->unplaced_bytes >> 10);
	if (c->nr_unaligned)
		printf("unaligned:              %" PRIu64 " extents: migrate would stop\n",
		       c->nr_unaligned);
}

/* fsck -n -f of the new filesystem (a full check: it was just marked clean), by this same program */
static int run_fsck(const char *dev, const char *passphrase, size_t len)
{
	char fdpath[64];
	int memfd = -1, status;
	pid_t pid;

	if (passphrase) {
		memfd = memfd_create("bcachefs-passphrase", 0);
		if (memfd < 0 || write(memfd, passphrase, len) != (ssize_t)len ||
		    write(memfd, "\n", 1) != 1)
			return -errno;
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", memfd);
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		if (memfd >= 0)
			execl("/proc/self/exe", "bcachefs", "fsck", "-n", "-f", "--passphrase-file", fdpath,
			      dev, (char *)NULL);
		else
			execl("/proc/self/exe", "bcachefs", "fsck", "-n", "-f", dev, (char *)NULL);
		_exit(8);
	}
	if (memfd >= 0)
		close(memfd);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 8;
}

int cmd_migrate(int argc, char *argv[])
{
	struct bch_migrate m = { 0 };
	struct printbuf err = PRINTBUF, warn = PRINTBUF;
	struct migrate_args a = { .m = &m };
	const char *pass_file;
	bool no_passphrase;
	char *pass = NULL;
	size_t pass_len = 0;
	int ret;

	cmd_parse(&migrate_def, &a, argc, argv);
	pass_file = a.pass_file;
	no_passphrase = a.no_passphrase;
	if (!m.fs_root)
		cmd_usage_error(NULL, "no filesystem given (-f FS_ROOT)");
	if ((no_passphrase || pass_file) && !m.encrypted)
		cmd_usage_error(NULL, "--no_passphrase and --passphrase-file go with --encrypted");
	if (no_passphrase && pass_file)
		cmd_usage_error(NULL, "--no_passphrase and --passphrase-file exclude each other");

	if (m.encrypted && !no_passphrase && !m.dry_run) {
		ret = pass_file ? bch_read_passphrase_file(pass_file, &pass, &pass_len)
				: bch_read_passphrase(STDIN_FILENO, "Enter passphrase: ", true,
						      &pass, &pass_len);
		if (ret == -EINVAL && !pass_file)
			die("passphrases do not match");
		if (ret)
			die("error reading passphrase%s%s: %s", pass_file ? " from " : "",
			    pass_file ?: "", ret == -ENODATA ? "end of file" : bch_err_str(ret));
		if (!pass_len)
			die("empty passphrase (use --no_passphrase to store the key unencrypted)");
		m.passphrase = pass;
		m.passphrase_len = pass_len;
	}

	ret = bch_migrate_prepare(&m, &err);
	if (m.dry_run) {
		if (m.dev_path && m.reserved_path)
			dry_run_report(&m);
		fputs(printbuf_str(&err), stderr);
		bch_migrate_exit(&m);
		printbuf_exit(&err);
		return ret ? EXIT_FAIL : EXIT_OK;
	}
	if (ret)
		goto fail;

	printf("Creating new filesystem on %s in space reserved at %s\n", m.dev_path,
	       m.reserved_path);
	fflush(stdout);
	m.warnings = &warn;
	if (isatty(STDERR_FILENO))
		m.progress = progress;
	ret = bch_migrate_run(&m, &err);
	fputs(printbuf_str(&warn), stderr);
	if (ret)
		goto fail;
	printf("%" PRIu64 " inodes; %" PRIu64 " extents (%" PRIu64 " MiB) linked in place, %"
	       PRIu64 " (%" PRIu64 " KiB) copied; %s keeps %" PRIu64 " MiB\n",
	       m.nr_inodes, m.link.nr_linked_extents, m.link.linked_sectors >> 11,
	       m.link.nr_copied_extents, m.link.copied_sectors >> 1,
	       BCH_MIGRATE_OLD_FS_NAME, m.link.old_fs_sectors >> 11);

	printf("Migrate complete, running fsck:\n");
	ret = run_fsck(m.dev_path, pass, pass_len);
	if (ret) {
		fprintf(stderr, "bcachefs migrate: fsck -n of the new filesystem exited %d: do not "
			"use it; the old filesystem is intact (delete %s)\n", ret, m.reserved_path);
		ret = EXIT_FAIL;
		goto out;
	}
	printf("fsck complete\n"
	       "To mount the new filesystem, run\n"
	       "  mount -t bcachefs -o sb=%" PRIu64 " %s dir\n"
	       "(the tools of this package find it without sb=: its layout is at sector 7)\n"
	       "\n"
	       "Do not write to the old filesystem any more: both share the data blocks.\n"
	       "\n"
	       "After verifying that the new filesystem is correct, to create a\n"
	       "superblock at the default offset and finish the migration, unmount\n"
	       "both filesystems and run\n"
	       "  bcachefs migrate-superblock -d %s -o %" PRIu64 "\n"
	       "\n"
	       "The new filesystem has a file /%s referencing all disk space\n"
	       "that the old filesystem may use. Delete it once the old filesystem is no\n"
	       "longer needed (after migrate-superblock it is gone anyway).\n",
	       m.sb_offset, m.dev_path, m.dev_path, m.sb_offset, BCH_MIGRATE_OLD_FS_NAME);
	ret = EXIT_OK;
out:
	if (pass)
		bch_passphrase_free(pass, pass_len);
	bch_migrate_exit(&m);
	printbuf_exit(&err);
	printbuf_exit(&warn);
	return ret;
fail:
	fputs(printbuf_str(&err), stderr);
	fprintf(stderr, "bcachefs migrate: %s: %s\n", m.fs_root, bch_err_str(ret));
	ret = EXIT_FAIL;
	goto out;
}

int cmd_migrate_superblock(int argc, char *argv[])
{
	struct migrate_sb_args a = { 0 };
	struct printbuf err = PRINTBUF;
	const char *dev;
	uint64_t offset;
	int ret;

	cmd_parse(&migrate_sb_def, &a, argc, argv);
	dev = a.dev;
	offset = a.offset;
	if (!dev)
		cmd_usage_error(NULL, "no device given (-d DEVICE)");
	if (!offset)
		cmd_usage_error(NULL, "no offset given (-o OFFSET, the sector of the existing superblock)");

	ret = bch_migrate_superblock(dev, offset, &err);
	if (ret) {
		fputs(printbuf_str(&err), stderr);
		fprintf(stderr, "bcachefs migrate-superblock: %s: %s\n", dev, bch_err_str(ret));
	}
	printbuf_exit(&err);
	return ret ? EXIT_FAIL : EXIT_OK;
}
