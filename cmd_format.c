// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs format (and mkfs.bcachefs): doc/tools.md §2.
 *
 * Options are read left to right; device options apply to every device that
 * follows until changed, except --fs_size, which applies to the next device
 * only (doc/tools.md §2.1). Everything is checked and the superblock is built in
 * memory before anything is written: a refused format leaves the devices as
 * they were.
 */
#include "cmd_opts.h"
#include "cmds.h"

#include "libbcachefs/codec/crypto.h"
#include "libbcachefs/dev/devstack.h"
#include "libbcachefs/util/errcode.h"
#include "libbcachefs/format/format.h"
#include "libbcachefs/fs/fs.h"
#include "libbcachefs/fs/init.h"
#include "libbcachefs/fs/mkfs.h"
#include "libbcachefs/tools/source.h"
#include "libbcachefs/dev/super.h"
#include "libbcachefs/dev/sb_print.h"
#include "libbcachefs/util/util.h"

#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { EXIT_PARTIAL = 2 };

/* What the command line says. */
struct format_args {
	struct mkfs_opts	opts;
	struct mkfs_dev_opts	dev_opts;	/* for the devices that follow */
	struct mkfs_dev		*devs;
	unsigned		nr;
	bool			force, quiet, no_passphrase, no_initialize;
	const char		*passphrase_file, *source;
	const char		*dev_opt_after_last;	/* a device option no device follows */
};

#define A(p)	((struct format_args *)(p))

/* A device: it takes the device options given so far. */
static int arg_device(void *p, const char *path, struct printbuf *why)
{
	struct format_args *a = p;

	a->devs = xrealloc(a->devs, (a->nr + 1) * sizeof(*a->devs));
	memset(&a->devs[a->nr], 0, sizeof(a->devs[a->nr]));
	a->devs[a->nr].path = path;
	a->devs[a->nr].opts = a->dev_opts;
	a->nr++;
	a->dev_opts.fs_size = 0;	/* the only option that does not carry over */
	a->dev_opt_after_last = NULL;
	return 0;
}

static int o_replicas(void *p, const char *arg, struct printbuf *why)
{
	unsigned v;
	int ret = mkfs_parse_replicas(cmd_opt_typed(), arg, &v, why);

	A(p)->opts.meta_replicas = A(p)->opts.data_replicas = v;
	return ret;
}

static int o_gc_reserve(void *p, const char *arg, struct printbuf *why)
{
	return mkfs_parse_uint(cmd_opt_typed(), arg, 5, 20, &A(p)->opts.gc_reserve, why);
}

static int o_root_reserve(void *p, const char *arg, struct printbuf *why)
{
	return mkfs_parse_uint(cmd_opt_typed(), arg, 0, 99, &A(p)->opts.root_reserve, why);
}

static int o_noacl(void *p, const char *arg, struct printbuf *why)
{
	A(p)->opts.acl = false;
	return 0;
}

static int o_label(void *p, const char *arg, struct printbuf *why)
{
	A(p)->opts.label = arg;
	return mkfs_check_label(cmd_opt_typed(), arg, why);
}

static int o_uuid(void *p, const char *arg, struct printbuf *why)
{
	return mkfs_parse_uuid(cmd_opt_typed(), arg, A(p)->opts.user_uuid, why);
}

static int o_tier(void *p, const char *arg, struct printbuf *why)
{
	/* the removed tier option of the 2018 tool: accepted, ignored */
	fprintf(stderr, "bcachefs format: -t is obsolete and ignored\n");
	return 0;
}

/* Device options: each must have a device after it. */
static int dev_opt(void *p, int ret)
{
	A(p)->dev_opt_after_last = cmd_opt_typed();
	return ret;
}

static int o_fs_size(void *p, const char *arg, struct printbuf *why)
{
	return dev_opt(p, mkfs_parse_fs_size(cmd_opt_typed(), arg, &A(p)->dev_opts.fs_size, why));
}

static int o_bucket_size(void *p, const char *arg, struct printbuf *why)
{
	return dev_opt(p, mkfs_parse_bucket_size(cmd_opt_typed(), arg,
						 &A(p)->dev_opts.bucket_size, why));
}

static int o_group(void *p, const char *arg, struct printbuf *why)
{
	A(p)->dev_opts.group = arg;
	return dev_opt(p, mkfs_check_group_path(cmd_opt_typed(), arg, why));
}

static int o_discard(void *p, const char *arg, struct printbuf *why)
{
	A(p)->dev_opts.discard = true;
	return dev_opt(p, 0);
}

static int o_data_allowed(void *p, const char *arg, struct printbuf *why)
{
	return dev_opt(p, mkfs_parse_data_allowed(cmd_opt_typed(), arg,
						  &A(p)->dev_opts.data_allowed, why));
}

static int o_durability(void *p, const char *arg, struct printbuf *why)
{
	return dev_opt(p, mkfs_parse_durability(cmd_opt_typed(), arg,
						&A(p)->dev_opts.durability, why));
}

#define FA	struct format_args

static const struct cmd_opt format_opts[] = {
	CMD_OPT_SECTION("Filesystem options:"),
	CMD_OPT_PARSE('b', "block_size", "SIZE", "Block size: 512, 1k, 2k or 4k (default: the\n"
		      "devices' block size, at most 4k)", mkfs_parse_block_size, FA, opts.block_size),
	CMD_OPT_PARSE(0, "btree_node_size", "SIZE", "Btree node size: a power of two, 512 to 1M\n"
		      "(default: 256k, at most the smallest bucket)",
		      mkfs_parse_btree_node_size, FA, opts.btree_node_size),
	CMD_OPT_PARSE(0, "metadata_checksum_type", "(none|crc32c|crc64)", "default crc32c",
		      mkfs_parse_csum, FA, opts.meta_csum),
	CMD_OPT_PARSE(0, "data_checksum_type", "(none|crc32c|crc64)", "default crc32c",
		      mkfs_parse_csum, FA, opts.data_csum),
	CMD_OPT_PARSE(0, "compression_type", "(none|lz4|gzip|zstd)", "default none",
		      mkfs_parse_compression, FA, opts.compression),
	CMD_OPT_PARSE(0, "background_compression_type", "(none|lz4|gzip|zstd)", "default none",
		      mkfs_parse_compression, FA, opts.background_compression),
	CMD_OPT_PARSE(0, "str_hash", "(crc32c|crc64|siphash)", "default siphash",
		      mkfs_parse_str_hash, FA, opts.str_hash),
	CMD_OPT_FN(0, "replicas", "N", "Data and metadata replicas (1-3)", o_replicas),
	CMD_OPT_PARSE(0, "data_replicas", "N", "Data replicas (1-3, default 1)",
		      mkfs_parse_replicas, FA, opts.data_replicas),
	CMD_OPT_PARSE(0, "metadata_replicas", "N", "Metadata replicas (1-3, default 1)",
		      mkfs_parse_replicas, FA, opts.meta_replicas),
	CMD_OPT_PARSE(0, "data_replicas_required", "N",
		      "Data replicas a write needs to succeed (1-3, default 1)",
		      mkfs_parse_replicas, FA, opts.data_replicas_req),
	CMD_OPT_PARSE(0, "metadata_replicas_required", "N",
		      "Metadata replicas a write needs to succeed (1-3, default 1)",
		      mkfs_parse_replicas, FA, opts.meta_replicas_req),
	CMD_OPT_STR(0, "foreground_target", "TARGET",
		    "Device (as given here) or disk group to write to", FA, opts.foreground_target),
	CMD_OPT_STR(0, "background_target", "TARGET", "Device or disk group to move data to",
		    FA, opts.background_target),
	CMD_OPT_STR(0, "promote_target", "TARGET", "Device or disk group to cache reads on",
		    FA, opts.promote_target),
	CMD_OPT_BOOL(0, "encrypted", "Encrypt the filesystem (ChaCha20/Poly1305); asks\n"
		     "for a passphrase", FA, opts.encrypted),
	CMD_OPT_STR(0, "passphrase-file", "FILE", "Read the passphrase from the first line of FILE",
		    FA, passphrase_file),
	{ .name = "passphrase_file", .arg = "FILE", .type = OPT_STR,
	  .off = offsetof(FA, passphrase_file), .hidden = true },
	CMD_OPT_BOOL(0, "no_passphrase", "Store the encryption key unencrypted", FA, no_passphrase),
	CMD_OPT_PARSE('e', "error_action", "(continue|remount-ro|panic)", "default remount-ro",
		      mkfs_parse_error_action, FA, opts.error_action),
	CMD_OPT_FN(0, "gc_reserve_percent", "N", "5-20, default 8", o_gc_reserve),
	CMD_OPT_FN(0, "root_reserve_percent", "N", "0-99, default 0", o_root_reserve),
	CMD_OPT_BOOL(0, "inodes_32bit", "Keep inode numbers below 2^32", FA, opts.inodes_32bit),
	CMD_OPT_BOOL(0, "wide_macs", "Store 128-bit MACs instead of 80-bit", FA, opts.wide_macs),
	CMD_OPT_FN(0, "noacl", NULL, "Disable POSIX ACLs", o_noacl),
	CMD_OPT_BOOL(0, "usrquota", "Enable user quotas", FA, opts.usrquota),
	CMD_OPT_BOOL(0, "grpquota", "Enable group quotas", FA, opts.grpquota),
	CMD_OPT_BOOL(0, "prjquota", "Enable project quotas", FA, opts.prjquota),
	CMD_OPT_FN('L', "label", "LABEL", "Filesystem label (at most 32 bytes)", o_label),
	CMD_OPT_FN('U', "uuid", "UUID", "Filesystem (external) UUID (default: random)", o_uuid),
	CMD_OPT_BOOL('f', "force", "Format even if a device holds a filesystem\n"
		     "or a partition table", FA, force),
	CMD_OPT_BOOL(0, "no_initialize", "Only write the superblocks, as the 2018 tool did\n"
		     "(the filesystem is initialised by fsck -y/-p);\n"
		     "by default format also initialises it: journal,\n"
		     "root directory, lost+found", FA, no_initialize),
	CMD_OPT_STR(0, "source", "DIR", "Copy the tree under DIR into the new filesystem\n"
		    "(DIR becomes its root directory)", FA, source),
	{ .short_name = 't', .arg = "TIER", .type = OPT_FN, .fn = o_tier, .hidden = true },
	CMD_OPT_BOOL('q', "quiet", "Print only errors", FA, quiet),
	CMD_OPT_VERSION,
	CMD_OPT_HELP,
	CMD_OPT_SECTION("Device options (they apply to every device that follows, until changed):"),
	CMD_OPT_FN(0, "fs_size", "SIZE", "Size of the filesystem on the next device only",
		   o_fs_size),
	CMD_OPT_FN(0, "bucket_size", "SIZE", "Bucket size (default: from the device size)",
		   o_bucket_size),
	CMD_OPT_FN('g', "group", "LABEL", "Disk group, e.g. ssd or hdd.fast", o_group),
	CMD_OPT_FN(0, "discard", NULL, "Issue discards", o_discard),
	CMD_OPT_FN(0, "data_allowed", "LIST",
		   "Comma-separated: journal,btree,data (default all three)", o_data_allowed),
	CMD_OPT_FN(0, "durability", "N", "0-2, default 1 (0: cache, 2: RAID device)",
		   o_durability),
	CMD_OPT_END
};

static const struct cmd_def format_def = {
	.name		= "format",
	.args		= "[DEVICE OPTION]... DEVICE...",
	.about		= "Create a new bcachefs filesystem on one or more devices or image files.",
	.opts		= format_opts,
	.arg_fn		= arg_device,
	.help_col	= 33,
	.footer		=
"SIZE is a number of bytes with an optional k, m, g, t, p or e suffix (powers\n"
"of 1024). Example:\n"
"  bcachefs format --group=ssd /dev/sdb --group=hdd /dev/sdc /dev/sdd \\\n"
"                  --foreground_target=ssd --background_target=hdd\n"
"\n"
"Exit status: 0 formatted, 1 failed (nothing or only earlier devices written;\n"
"or the superblocks were written but initialising the filesystem failed, which\n"
"leaves a valid uninitialised filesystem), 2 formatted, but some xattrs of\n"
"--source were too large to copy (each is named on standard error),\n"
"16 usage error.\n",
};

/* Ask "Proceed anyway?" on a terminal; refuse otherwise (doc/tools.md §1.4). */
static void confirm_overwrite(const char *path, const char *what)
{
	char *line = NULL;
	size_t n = 0;

	if (!isatty(STDIN_FILENO))
		die("%s contains %s; refusing to format it (use --force to format it anyway)",
		    path, what);

	printf("%s contains %s\n", path, what);
	printf("Proceed anyway? (y,n) ");
	fflush(stdout);
	if (getline(&line, &n, stdin) < 0)
		die("error reading from standard input; nothing was written");
	if (line[0] != 'y' && line[0] != 'Y') {
		free(line);
		die("not formatting %s; nothing was written", path);
	}
	free(line);
}

/*
 * The same device given twice under two names (./a.img and a.img, a link,
 * a loop device of the image, a partition and its disk): refused by
 * identity before anything is opened for writing. Paths that cannot be
 * examined are reported when they are opened.
 */
static void check_distinct(const struct mkfs_dev *devs, unsigned nr)
{
	struct dev_stack *s = xcalloc(nr, sizeof(*s));

	for (unsigned i = 0; i < nr; i++) {
		if (dev_stack_get(devs[i].path, -1, &s[i]))
			s[i].nr = 0;
		for (unsigned j = 0; j < i; j++)
			if (dev_stacks_overlap(&s[i], &s[j])) {
				if (!strcmp(devs[i].path, devs[j].path))
					cmd_usage_error(NULL, "device %s given twice",
							devs[i].path);
				cmd_usage_error(NULL,
						"%s and %s are the same device (or one is built on the other)",
						devs[j].path, devs[i].path);
			}
	}
	for (unsigned i = 0; i < nr; i++)
		dev_stack_exit(&s[i]);
	free(s);
}

/*
 * The superblock as the filesystem now is: read back from the first
 * device after initialisation (clean, what each device holds), else the
 * one written (--no_initialize).
 */
static void print_result(struct mkfs_dev *dev, const struct bch_sb *written)
{
	struct printbuf out = PRINTBUF, err = PRINTBUF;
	struct bch_sb_handle h = { 0 };

	if (bch_sb_read(dev->io, &h, &err))
		h.sb = NULL;
	bch_sb_to_text(&out, h.sb ?: written, 1U << BCH_SB_FIELD_members);
	fputs(printbuf_str(&out), stdout);
	bch_sb_handle_free(&h);
	printbuf_exit(&out);
	printbuf_exit(&err);
}

/* Progress of --source, on a terminal. */
static void source_progress(void *priv, uint64_t files, uint64_t bytes, int done)
{
	fprintf(stderr, "\rcopying: %" PRIu64 " inodes, %" PRIu64 " MiB%s", files,
		bytes >> 20, done ? "\n" : "");
}

/*
 * Initialise the filesystem just written (doc/engine.md §13): open it read-write
 * with every device and run the first-mount initialisation. The passphrase
 * already read is handed to the open through an anonymous memory file, so
 * it is neither asked for again nor written anywhere.
 *
 * After initialisation failed, what the devices hold now, read back the way
 * every other command would (newest superblock among them): *@state = 0
 * formatted but uninitialised, 1 initialised (the error hit only the last
 * superblock writes), -1 no filesystem opens.
 */
static int format_initialize(struct mkfs_dev *devs, unsigned nr,
			     const char *passphrase, size_t passphrase_len,
			     struct bch_source_opts *so, bool quiet, int *state,
			     struct printbuf *err)
{
	struct bch_init_opts io = { 0 };
	char **paths = xcalloc(nr, sizeof(*paths));
	struct bch_fs_opts fo = { 0 };
	struct bch_fs *c = NULL;
	char pass_path[64];
	int memfd = -1, ret;

	*state = 0;

	for (unsigned i = 0; i < nr; i++)
		paths[i] = (char *)devs[i].path;

	if (passphrase) {
		memfd = memfd_create("bcachefs-passphrase", MFD_CLOEXEC);
		if (memfd < 0 ||
		    write(memfd, passphrase, passphrase_len) != (ssize_t)passphrase_len ||
		    write(memfd, "\n", 1) != 1) {
			ret = -errno;
			pr_str(err, "cannot hand the passphrase to the filesystem open\n");
			goto out;
		}
		snprintf(pass_path, sizeof(pass_path), "/proc/self/fd/%d", memfd);
		fo.passphrase_file = pass_path;
	}

	if (so->dir) {
		io.populate = bch_source_populate;
		io.populate_priv = so;
		if (!quiet && isatty(STDERR_FILENO))
			so->progress = source_progress;
	}
	ret = bch_fs_open(paths, nr, &fo, &c, err);
	if (!ret) {
		io.no_reread = true;
		ret = bch_fs_initialize_opts(c, &io, err);
		bch_fs_close(c);
		c = NULL;
	}
	if (ret) {
		struct printbuf e = PRINTBUF;

		fo.read_only = fo.no_journal = true;
		*state = -1;
		if (!bch_fs_open(paths, nr, &fo, &c, &e)) {
			*state = BCH_SB_INITIALIZED(c->sb) ? 1 : 0;
			bch_fs_close(c);
		}
		printbuf_exit(&e);
	}
out:
	if (memfd >= 0)
		close(memfd);
	free(paths);
	return ret;
}

/* What cannot be judged option by option: refused before anything is opened. */
static void format_check_args(struct format_args *a)
{
	struct printbuf err = PRINTBUF;

	if (!a->nr)
		cmd_usage_error(NULL, "no device given");
	if (a->dev_opt_after_last)
		cmd_usage_error(NULL, "%s after the last device applies to no device "
				"(device options go before the devices they apply to)",
				a->dev_opt_after_last);
	if (a->nr > BCH_SB_MEMBERS_MAX)
		cmd_usage_error(NULL, "%u devices given (allowed: at most %u)",
				a->nr, BCH_SB_MEMBERS_MAX);
	check_distinct(a->devs, a->nr);
	if ((a->no_passphrase || a->passphrase_file) && !a->opts.encrypted)
		cmd_usage_error(NULL, "%s needs --encrypted",
				a->no_passphrase ? "--no_passphrase" : "--passphrase-file");
	if (a->no_passphrase && a->passphrase_file)
		cmd_usage_error(NULL, "--no_passphrase and --passphrase-file exclude each other");
	if (a->source && a->no_initialize)
		cmd_usage_error(NULL, "--source and --no_initialize exclude each other");
	if (a->source) {
		struct stat st;

		errno = 0;
		if (stat(a->source, &st) || !S_ISDIR(st.st_mode))
			die("--source %s: %s", a->source,
			    errno ? strerror(errno) : "not a directory");
	}
	if (mkfs_check_config(&a->opts, a->devs, a->nr, &err))
		cmd_usage_error(NULL, "%s", printbuf_str(&err));
	if (a->opts.meta_replicas_req > a->opts.meta_replicas ||
	    a->opts.data_replicas_req > a->opts.data_replicas)
		cmd_usage_error(NULL, "required replicas (%u metadata, %u data) exceed the wanted "
				"replicas (%u, %u)", a->opts.meta_replicas_req,
				a->opts.data_replicas_req, a->opts.meta_replicas,
				a->opts.data_replicas);
	printbuf_exit(&err);
}

/* The passphrase comes first, before any device is opened (doc/tools.md §2.1). */
static void format_passphrase(struct format_args *a)
{
	char *passphrase = NULL;
	size_t len = 0;
	int ret;

	if (!a->opts.encrypted || a->no_passphrase)
		return;
	ret = a->passphrase_file
		? bch_read_passphrase_file(a->passphrase_file, &passphrase, &len)
		: bch_read_passphrase(STDIN_FILENO, "Enter passphrase: ", true, &passphrase, &len);
	if (ret == -EINVAL && !a->passphrase_file)
		die("passphrases do not match");
	if (ret)
		die("error reading the passphrase from %s: %s",
		    a->passphrase_file && strcmp(a->passphrase_file, "-") ? a->passphrase_file
									   : "standard input",
		    bch_err_str(ret));
	if (!len)
		die("empty passphrase (use --no_passphrase to store the key unencrypted)");
	a->opts.passphrase = passphrase;
	a->opts.passphrase_len = len;
}

/*
 * Open the devices, build the superblock, ask before overwriting what a
 * device holds (unless --force), write the superblocks.
 */
static int format_write(struct format_args *a, struct bch_sb **sb, struct printbuf *err)
{
	int ret;

	for (unsigned i = 0; i < a->nr; i++)
		if ((ret = mkfs_dev_open(&a->devs[i], err)))
			return ret;

	if ((ret = mkfs_geometry(&a->opts, a->devs, a->nr, err)) ||
	    (ret = mkfs_build_sb(&a->opts, a->devs, a->nr, sb, err)) ||
	    (ret = mkfs_check(*sb, a->nr, err)))
		return ret;

	if (!a->force)
		for (unsigned i = 0; i < a->nr; i++) {
			struct printbuf what = PRINTBUF;

			ret = mkfs_dev_probe(&a->devs[i], &what, err);
			if (!ret && what.pos)
				confirm_overwrite(a->devs[i].path, printbuf_str(&what));
			printbuf_exit(&what);
			if (ret)
				return ret;
		}

	return mkfs_write(*sb, a->devs, a->nr, err);
}

static void format_args_exit(struct format_args *a)
{
	if (a->opts.passphrase)
		bch_passphrase_free((char *)a->opts.passphrase, a->opts.passphrase_len);
	a->opts.passphrase = NULL;
	for (unsigned i = 0; i < a->nr; i++)
		mkfs_dev_close(&a->devs[i]);
	free(a->devs);
	a->devs = NULL;
	a->nr = 0;
}

int cmd_format(int argc, char *argv[])
{
	struct format_args a = { 0 };
	struct printbuf err = PRINTBUF, warnings = PRINTBUF;
	struct bch_source_opts so = { 0 };
	struct bch_sb *sb = NULL;
	int state = -1, ret;

	mkfs_opts_init(&a.opts);
	mkfs_dev_opts_init(&a.dev_opts);
	cmd_parse(&format_def, &a, argc, argv);
	format_check_args(&a);
	format_passphrase(&a);

	ret = format_write(&a, &sb, &err);
	if (ret) {
		format_args_exit(&a);
		/* -EINVAL: an option value that does not fit (bad target, sizes) */
		if (ret == -EINVAL)
			cmd_usage_error(NULL, "%s", printbuf_str(&err));
		die("%s", printbuf_str(&err));
	}

	/*
	 * The devices stay open (and held: dev.h) until the filesystem is
	 * initialised, so no other process gets in between; the open below
	 * shares their holds.
	 */
	so.dir = a.source;
	so.warnings = &warnings;
	if (!a.no_initialize &&
	    (ret = format_initialize(a.devs, a.nr, a.opts.passphrase, a.opts.passphrase_len,
				     &so, a.quiet, &state, &err))) {
		format_args_exit(&a);
		die("initialising the filesystem failed: %s\n%s%s", bch_err_str(ret),
		    printbuf_str(&err),
		    state == 0 ? "the superblocks were written: the filesystem is valid but "
				 "uninitialised (fsck -y initialises it)" :
		    state > 0 ? "the error came after the filesystem was marked initialised: "
				"check it with fsck -n" :
				"the devices hold no filesystem that opens");
	}
	if (!a.quiet)
		print_result(&a.devs[0], sb);
	format_args_exit(&a);

	/* what --source could not copy, and a status that says so */
	fputs(printbuf_str(&warnings), stderr);
	if (so.nr_xattrs_too_big)
		fprintf(stderr, "bcachefs format: formatted, but %" PRIu64 " xattr%s of %s could not be copied\n",
			so.nr_xattrs_too_big, so.nr_xattrs_too_big == 1 ? "" : "s", a.source);
	printbuf_exit(&warnings);
	free(sb);
	printbuf_exit(&err);
	return so.nr_xattrs_too_big ? EXIT_PARTIAL : EXIT_OK;
}
