// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs format (and mkfs.bcachefs): spec 50 §2, 10 §5.
 *
 * Options are read left to right; device options apply to every device that
 * follows until changed, except --fs_size, which applies to the next device
 * only (spec 50 §2.2). Everything is checked and the superblock is built in
 * memory before anything is written: a refused format leaves the devices as
 * they were.
 */
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
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_format_usage[] =
"Usage: bcachefs format [OPTION]... [DEVICE OPTION]... DEVICE...\n"
"Create a new bcachefs filesystem on one or more devices or image files.\n"
"\n"
"Filesystem options:\n"
"  -b, --block_size=SIZE          Block size: 512, 1k, 2k or 4k (default: the\n"
"                                 devices' block size, at most 4k)\n"
"      --btree_node_size=SIZE     Btree node size: a power of two, 512 to 1M\n"
"                                 (default: 256k, at most the smallest bucket)\n"
"      --metadata_checksum_type=(none|crc32c|crc64)   default crc32c\n"
"      --data_checksum_type=(none|crc32c|crc64)       default crc32c\n"
"      --compression_type=(none|lz4|gzip|zstd)        default none\n"
"      --background_compression_type=(none|lz4|gzip|zstd)\n"
"      --str_hash=(crc32c|crc64|siphash)              default siphash\n"
"      --replicas=N               Data and metadata replicas (1-3)\n"
"      --data_replicas=N          Data replicas (1-3, default 1)\n"
"      --metadata_replicas=N      Metadata replicas (1-3, default 1)\n"
"      --data_replicas_required=N, --metadata_replicas_required=N\n"
"                                 Replicas a write needs to succeed (1-3, default 1)\n"
"      --foreground_target=TARGET Device (as given here) or disk group to write to\n"
"      --background_target=TARGET Device or disk group to move data to\n"
"      --promote_target=TARGET    Device or disk group to cache reads on\n"
"      --encrypted                Encrypt the filesystem (ChaCha20/Poly1305); asks\n"
"                                 for a passphrase\n"
"      --passphrase-file=FILE     Read the passphrase from the first line of FILE\n"
"      --no_passphrase            Store the encryption key unencrypted\n"
"  -e, --error_action=(continue|remount-ro|panic)   default remount-ro\n"
"      --gc_reserve_percent=N     5-20, default 8\n"
"      --root_reserve_percent=N   0-99, default 0\n"
"      --inodes_32bit             Keep inode numbers below 2^32\n"
"      --wide_macs                Store 128-bit MACs instead of 80-bit\n"
"      --noacl                    Disable POSIX ACLs\n"
"      --usrquota, --grpquota, --prjquota   Enable quotas\n"
"  -L, --label=LABEL              Filesystem label (at most 32 bytes)\n"
"  -U, --uuid=UUID                Filesystem (external) UUID (default: random)\n"
"  -f, --force                    Format even if a device holds a filesystem\n"
"                                 or a partition table\n"
"      --no_initialize            Only write the superblocks, as the 2018 tool did\n"
"                                 (the filesystem is initialised by fsck -y/-p);\n"
"                                 by default format also initialises it: journal,\n"
"                                 root directory, lost+found\n"
"      --source=DIR               Copy the tree under DIR into the new filesystem\n"
"                                 (DIR becomes its root directory)\n"
"  -q, --quiet                    Print only errors\n"
"  -V, --version                  Print the version and exit\n"
"  -h, --help                     Print this help and exit\n"
"\n"
"Device options (they apply to every device that follows, until changed):\n"
"      --fs_size=SIZE             Size of the filesystem on the next device only\n"
"      --bucket_size=SIZE         Bucket size (default: from the device size)\n"
"  -g, --group=LABEL              Disk group, e.g. ssd or hdd.fast\n"
"      --discard                  Issue discards\n"
"      --data_allowed=LIST        Comma-separated: journal,btree,data (default all three)\n"
"      --durability=N             0-2, default 1 (0: cache, 2: RAID device)\n"
"\n"
"SIZE is a number of bytes with an optional k, m, g, t, p or e suffix (powers\n"
"of 1024). Example:\n"
"  bcachefs format --group=ssd /dev/sdb --group=hdd /dev/sdc /dev/sdd \\\n"
"                  --foreground_target=ssd --background_target=hdd\n"
"\n"
"Exit status: 0 formatted, 1 failed (nothing or only earlier devices written;\n"
"or the superblocks were written but initialising the filesystem failed, which\n"
"leaves a valid uninitialised filesystem), 2 formatted, but some xattrs of\n"
"--source were too large to copy (each is named on standard error),\n"
"16 usage error.\n";

enum { EXIT_PARTIAL = 2 };

enum {
	O_btree_node_size = 256,
	O_metadata_checksum_type,
	O_data_checksum_type,
	O_compression_type,
	O_background_compression_type,
	O_str_hash,
	O_replicas,
	O_data_replicas,
	O_metadata_replicas,
	O_data_replicas_required,
	O_metadata_replicas_required,
	O_foreground_target,
	O_background_target,
	O_promote_target,
	O_encrypted,
	O_passphrase_file,
	O_no_passphrase,
	O_gc_reserve_percent,
	O_root_reserve_percent,
	O_inodes_32bit,
	O_wide_macs,
	O_noacl,
	O_usrquota,
	O_grpquota,
	O_prjquota,
	O_no_initialize,
	O_source,
	O_fs_size,
	O_bucket_size,
	O_discard,
	O_data_allowed,
	O_durability,
};

static const struct option format_opts[] = {
	{ "block_size",			required_argument, NULL, 'b' },
	{ "btree_node_size",		required_argument, NULL, O_btree_node_size },
	{ "metadata_checksum_type",	required_argument, NULL, O_metadata_checksum_type },
	{ "data_checksum_type",		required_argument, NULL, O_data_checksum_type },
	{ "compression_type",		required_argument, NULL, O_compression_type },
	{ "background_compression_type", required_argument, NULL, O_background_compression_type },
	{ "str_hash",			required_argument, NULL, O_str_hash },
	{ "replicas",			required_argument, NULL, O_replicas },
	{ "data_replicas",		required_argument, NULL, O_data_replicas },
	{ "metadata_replicas",		required_argument, NULL, O_metadata_replicas },
	{ "data_replicas_required",	required_argument, NULL, O_data_replicas_required },
	{ "metadata_replicas_required",	required_argument, NULL, O_metadata_replicas_required },
	{ "foreground_target",		required_argument, NULL, O_foreground_target },
	{ "background_target",		required_argument, NULL, O_background_target },
	{ "promote_target",		required_argument, NULL, O_promote_target },
	{ "encrypted",			no_argument,	   NULL, O_encrypted },
	{ "passphrase-file",		required_argument, NULL, O_passphrase_file },
	{ "passphrase_file",		required_argument, NULL, O_passphrase_file },
	{ "no_passphrase",		no_argument,	   NULL, O_no_passphrase },
	{ "error_action",		required_argument, NULL, 'e' },
	{ "gc_reserve_percent",		required_argument, NULL, O_gc_reserve_percent },
	{ "root_reserve_percent",	required_argument, NULL, O_root_reserve_percent },
	{ "inodes_32bit",		no_argument,	   NULL, O_inodes_32bit },
	{ "wide_macs",			no_argument,	   NULL, O_wide_macs },
	{ "noacl",			no_argument,	   NULL, O_noacl },
	{ "usrquota",			no_argument,	   NULL, O_usrquota },
	{ "grpquota",			no_argument,	   NULL, O_grpquota },
	{ "prjquota",			no_argument,	   NULL, O_prjquota },
	{ "label",			required_argument, NULL, 'L' },
	{ "uuid",			required_argument, NULL, 'U' },
	{ "force",			no_argument,	   NULL, 'f' },
	{ "no_initialize",		no_argument,	   NULL, O_no_initialize },
	{ "source",			required_argument, NULL, O_source },
	{ "fs_size",			required_argument, NULL, O_fs_size },
	{ "bucket_size",		required_argument, NULL, O_bucket_size },
	{ "group",			required_argument, NULL, 'g' },
	{ "discard",			no_argument,	   NULL, O_discard },
	{ "data_allowed",		required_argument, NULL, O_data_allowed },
	{ "durability",			required_argument, NULL, O_durability },
	{ "quiet",			no_argument,	   NULL, 'q' },
	{ "version",			no_argument,	   NULL, 'V' },
	{ "help",			no_argument,	   NULL, 'h' },
	{ NULL }
};

/* The name the user typed for the current option, for messages. */
static const char *opt_name(int c, int longidx, char *buf, size_t len)
{
	if (longidx >= 0)
		snprintf(buf, len, "--%s", format_opts[longidx].name);
	else
		snprintf(buf, len, "-%c", c);
	return buf;
}

/* Parse error in an option value: usage error (exit 16). */
static noreturn void bad_value(struct printbuf *err)
{
	cmd_usage_error(cmd_format_usage, "%s", printbuf_str(err));
}

/* Ask "Proceed anyway?" on a terminal; refuse otherwise (spec 50 §1.7). */
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
					cmd_usage_error(cmd_format_usage, "device %s given twice",
							devs[i].path);
				cmd_usage_error(cmd_format_usage,
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
 * Initialise the filesystem just written (spec 10 §5.10): open it read-write
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

int cmd_format(int argc, char *argv[])
{
	struct mkfs_opts opts;
	struct mkfs_dev_opts dev_opts;
	struct mkfs_dev *devs = NULL;
	unsigned nr = 0, v;
	bool force = false, quiet = false, no_passphrase = false, no_initialize = false;
	int state = -1;
	const char *passphrase_file = NULL, *dev_opt_after_last = NULL, *source = NULL;
	char *passphrase = NULL;
	size_t passphrase_len = 0;
	struct printbuf err = PRINTBUF, warnings = PRINTBUF;
	struct bch_source_opts so = { 0 };
	struct bch_sb *sb = NULL;
	char namebuf[64];
	int c, longidx, ret;

	mkfs_opts_init(&opts);
	mkfs_dev_opts_init(&dev_opts);

	opterr = 0;	/* we report unknown options ourselves, as usage errors */
	optind = 1;
	while (longidx = -1,
	       (c = getopt_long(argc, argv, "-:b:e:L:U:fg:t:qVh", format_opts, &longidx)) != -1) {
		const char *name = opt_name(c, longidx, namebuf, sizeof(namebuf));

		switch (c) {
		case 1:		/* a device: takes the current device options */
			devs = xrealloc(devs, (nr + 1) * sizeof(*devs));
			memset(&devs[nr], 0, sizeof(devs[nr]));
			devs[nr].path = optarg;
			devs[nr].opts = dev_opts;
			nr++;
			dev_opts.fs_size = 0;	/* the only option that does not carry over */
			dev_opt_after_last = NULL;
			break;
		case 'b':
			if (mkfs_parse_block_size(name, optarg, &opts.block_size, &err))
				bad_value(&err);
			break;
		case O_btree_node_size:
			if (mkfs_parse_btree_node_size(name, optarg, &opts.btree_node_size, &err))
				bad_value(&err);
			break;
		case O_metadata_checksum_type:
			if (mkfs_parse_csum(name, optarg, &opts.meta_csum, &err))
				bad_value(&err);
			break;
		case O_data_checksum_type:
			if (mkfs_parse_csum(name, optarg, &opts.data_csum, &err))
				bad_value(&err);
			break;
		case O_compression_type:
			if (mkfs_parse_compression(name, optarg, &opts.compression, &err))
				bad_value(&err);
			break;
		case O_background_compression_type:
			if (mkfs_parse_compression(name, optarg, &opts.background_compression, &err))
				bad_value(&err);
			break;
		case O_str_hash:
			if (mkfs_parse_str_hash(name, optarg, &opts.str_hash, &err))
				bad_value(&err);
			break;
		case O_replicas:
			if (mkfs_parse_replicas(name, optarg, &v, &err))
				bad_value(&err);
			opts.meta_replicas = opts.data_replicas = v;
			break;
		case O_data_replicas:
			if (mkfs_parse_replicas(name, optarg, &opts.data_replicas, &err))
				bad_value(&err);
			break;
		case O_metadata_replicas:
			if (mkfs_parse_replicas(name, optarg, &opts.meta_replicas, &err))
				bad_value(&err);
			break;
		case O_data_replicas_required:
			if (mkfs_parse_replicas(name, optarg, &opts.data_replicas_req, &err))
				bad_value(&err);
			break;
		case O_metadata_replicas_required:
			if (mkfs_parse_replicas(name, optarg, &opts.meta_replicas_req, &err))
				bad_value(&err);
			break;
		case O_foreground_target:
			opts.foreground_target = optarg;
			break;
		case O_background_target:
			opts.background_target = optarg;
			break;
		case O_promote_target:
			opts.promote_target = optarg;
			break;
		case O_encrypted:
			opts.encrypted = true;
			break;
		case O_passphrase_file:
			passphrase_file = optarg;
			break;
		case O_no_passphrase:
			no_passphrase = true;
			break;
		case 'e':
			if (mkfs_parse_error_action(name, optarg, &opts.error_action, &err))
				bad_value(&err);
			break;
		case O_gc_reserve_percent:
			if (mkfs_parse_uint(name, optarg, 5, 20, &opts.gc_reserve, &err))
				bad_value(&err);
			break;
		case O_root_reserve_percent:
			if (mkfs_parse_uint(name, optarg, 0, 99, &opts.root_reserve, &err))
				bad_value(&err);
			break;
		case O_inodes_32bit:
			opts.inodes_32bit = true;
			break;
		case O_wide_macs:
			opts.wide_macs = true;
			break;
		case O_noacl:
			opts.acl = false;
			break;
		case O_usrquota:
			opts.usrquota = true;
			break;
		case O_grpquota:
			opts.grpquota = true;
			break;
		case O_prjquota:
			opts.prjquota = true;
			break;
		case 'L':
			if (mkfs_check_label(name, optarg, &err))
				bad_value(&err);
			opts.label = optarg;
			break;
		case 'U':
			if (mkfs_parse_uuid(name, optarg, opts.user_uuid, &err))
				bad_value(&err);
			break;
		case 'f':
			force = true;
			break;
		case O_no_initialize:
			no_initialize = true;
			break;
		case O_source:
			source = optarg;
			break;
		case 't':
			/* the removed tier option of the 2018 tool: accepted, ignored */
			fprintf(stderr, "bcachefs format: -t is obsolete and ignored\n");
			break;
		case O_fs_size:
			if (mkfs_parse_fs_size(name, optarg, &dev_opts.fs_size, &err))
				bad_value(&err);
			dev_opt_after_last = "--fs_size";
			break;
		case O_bucket_size:
			if (mkfs_parse_bucket_size(name, optarg, &dev_opts.bucket_size, &err))
				bad_value(&err);
			dev_opt_after_last = "--bucket_size";
			break;
		case 'g':
			if (mkfs_check_group_path(name, optarg, &err))
				bad_value(&err);
			dev_opts.group = optarg;
			dev_opt_after_last = "--group";
			break;
		case O_discard:
			dev_opts.discard = true;
			dev_opt_after_last = "--discard";
			break;
		case O_data_allowed:
			if (mkfs_parse_data_allowed(name, optarg, &dev_opts.data_allowed, &err))
				bad_value(&err);
			dev_opt_after_last = "--data_allowed";
			break;
		case O_durability:
			if (mkfs_parse_durability(name, optarg, &dev_opts.durability, &err))
				bad_value(&err);
			dev_opt_after_last = "--durability";
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			cmd_help(cmd_format_usage);
		case 'V':
			cmd_print_version();
		default:
			cmd_bad_option(cmd_format_usage, c, argv);
		}
	}
	/* words after "--" are devices too */
	for (; optind < argc; optind++) {
		devs = xrealloc(devs, (nr + 1) * sizeof(*devs));
		memset(&devs[nr], 0, sizeof(devs[nr]));
		devs[nr].path = argv[optind];
		devs[nr].opts = dev_opts;
		nr++;
		dev_opts.fs_size = 0;
		dev_opt_after_last = NULL;
	}

	if (!nr)
		cmd_usage_error(cmd_format_usage, "no device given");
	if (dev_opt_after_last)
		cmd_usage_error(cmd_format_usage,
				"%s after the last device applies to no device "
				"(device options go before the devices they apply to)",
				dev_opt_after_last);
	if (nr > BCH_SB_MEMBERS_MAX)
		cmd_usage_error(cmd_format_usage, "%u devices given (allowed: at most %u)",
				nr, BCH_SB_MEMBERS_MAX);
	check_distinct(devs, nr);
	if ((no_passphrase || passphrase_file) && !opts.encrypted)
		cmd_usage_error(cmd_format_usage, "%s needs --encrypted",
				no_passphrase ? "--no_passphrase" : "--passphrase-file");
	if (no_passphrase && passphrase_file)
		cmd_usage_error(cmd_format_usage,
				"--no_passphrase and --passphrase-file exclude each other");
	if (source && no_initialize)
		cmd_usage_error(cmd_format_usage, "--source and --no_initialize exclude each other");
	if (source) {
		struct stat st;

		errno = 0;
		if (stat(source, &st) || !S_ISDIR(st.st_mode))
			die("--source %s: %s", source,
			    errno ? strerror(errno) : "not a directory");
	}
	if (mkfs_check_config(&opts, devs, nr, &err))
		bad_value(&err);
	if (opts.meta_replicas_req > opts.meta_replicas ||
	    opts.data_replicas_req > opts.data_replicas)
		cmd_usage_error(cmd_format_usage,
				"required replicas (%u metadata, %u data) exceed the wanted "
				"replicas (%u, %u)", opts.meta_replicas_req,
				opts.data_replicas_req, opts.meta_replicas, opts.data_replicas);

	/* The passphrase comes first, before any device is opened (spec 50 §2.6). */
	if (opts.encrypted && !no_passphrase) {
		ret = passphrase_file
			? bch_read_passphrase_file(passphrase_file, &passphrase, &passphrase_len)
			: bch_read_passphrase(STDIN_FILENO, "Enter passphrase: ", true,
					      &passphrase, &passphrase_len);
		if (ret == -EINVAL && !passphrase_file)
			die("passphrases do not match");
		if (ret)
			die("error reading the passphrase from %s: %s",
			    passphrase_file && strcmp(passphrase_file, "-") ? passphrase_file
									 : "standard input",
			    bch_err_str(ret));
		if (!passphrase_len)
			die("empty passphrase (use --no_passphrase to store the key unencrypted)");
		opts.passphrase = passphrase;
		opts.passphrase_len = passphrase_len;
	}

	for (unsigned i = 0; i < nr; i++)
		if ((ret = mkfs_dev_open(&devs[i], &err)))
			goto fail;

	if ((ret = mkfs_geometry(&opts, devs, nr, &err)) ||
	    (ret = mkfs_build_sb(&opts, devs, nr, &sb, &err)) ||
	    (ret = mkfs_check(sb, nr, &err)))
		goto fail;

	if (!force)
		for (unsigned i = 0; i < nr; i++) {
			struct printbuf what = PRINTBUF;

			if ((ret = mkfs_dev_probe(&devs[i], &what, &err))) {
				printbuf_exit(&what);
				goto fail;
			}
			if (what.pos)
				confirm_overwrite(devs[i].path, printbuf_str(&what));
			printbuf_exit(&what);
		}

	if ((ret = mkfs_write(sb, devs, nr, &err)))
		goto fail;


	/*
	 * The devices stay open (and held: dev.h) until the filesystem is
	 * initialised, so no other process gets in between; the open below
	 * shares their holds.
	 */
	so.dir = source;
	so.warnings = &warnings;
	if (!no_initialize &&
	    (ret = format_initialize(devs, nr, passphrase, passphrase_len, &so, quiet,
				     &state, &err))) {
		if (passphrase)
			bch_passphrase_free(passphrase, passphrase_len);
		die("initialising the filesystem failed: %s\n%s%s", bch_err_str(ret),
		    printbuf_str(&err),
		    state == 0 ? "the superblocks were written: the filesystem is valid but "
				 "uninitialised (fsck -y initialises it)" :
		    state > 0 ? "the error came after the filesystem was marked initialised: "
				"check it with fsck -n" :
				"the devices hold no filesystem that opens");
	}
	if (passphrase)
		bch_passphrase_free(passphrase, passphrase_len);
	if (!quiet)
		print_result(&devs[0], sb);
	for (unsigned i = 0; i < nr; i++)
		mkfs_dev_close(&devs[i]);

	/* what --source could not copy, and a status that says so */
	fputs(printbuf_str(&warnings), stderr);
	if (so.nr_xattrs_too_big)
		fprintf(stderr, "bcachefs format: formatted, but %" PRIu64 " xattr%s of %s could not be copied\n",
			so.nr_xattrs_too_big, so.nr_xattrs_too_big == 1 ? "" : "s", source);
	printbuf_exit(&warnings);
	free(devs);
	free(sb);
	printbuf_exit(&err);
	return so.nr_xattrs_too_big ? EXIT_PARTIAL : EXIT_OK;
fail:
	if (passphrase)
		bch_passphrase_free(passphrase, passphrase_len);
	for (unsigned i = 0; i < nr; i++)
		mkfs_dev_close(&devs[i]);
	/* -EINVAL: an option value that does not fit (bad target, sizes) */
	if (ret == -EINVAL)
		cmd_usage_error(cmd_format_usage, "%s", printbuf_str(&err));
	die("%s", printbuf_str(&err));
}
