// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs device add|remove|online|offline|evacuate|set-state|resize
 * (doc/ioctl.md §9.5-§9.9): each finds the filesystem (a mount, or the devices
 * of an unmounted one, opened here) and sends the seed's ioctl through
 * bch_ioctl(); the work is the engine's (libbcachefs/admin_dev.c).
 *
 * Differences from the 2018 tool, on purpose (doc/tools.md §8):
 *   - device remove moves the data off first (an evacuate job), then
 *     removes; -f allows losing what could not be moved;
 *   - device evacuate sets the device read-only first;
 *   - a member whose device is gone is named by index (--by-index IDX FS);
 *   - unmounted filesystems work too (set-state, resize, add, remove,
 *     evacuate): give every member device with --fs DEV:DEV... (or FS).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_online.h"
#include "cmd_opts.h"
#include "cmds.h"
#include "libbcachefs/format/format.h"
#include "libbcachefs/format/ioctl.h"
#include "libbcachefs/fs/mkfs.h"
#include "libbcachefs/dev/super.h"
#include "libbcachefs/util/errcode.h"
#include "libbcachefs/util/util.h"

#define FS_HELP \
"The filesystem is found from DEVICE's superblock: its mount, or, when it is\n" \
"not mounted, its devices are opened here (a filesystem of several devices:\n" \
"give all of them with --fs DEV:DEV...)."

/* What the options of the device commands set: one struct, each table uses its part. */
struct dev_args {
	const char		*fs_devs;	/* --fs */
	bool			by_index;
	bool			force;		/* -f: what it allows is the command's */
	bool			force_metadata;
	bool			force_data_lost;
	bool			no_evacuate;
	struct mkfs_dev_opts	dev_opts;	/* device add */
};

/* The options several device commands share, once. */
#define OPT_BY_INDEX							\
	CMD_OPT_BOOL(0, "by-index", "the device is the member index IDX of FILESYSTEM\n" \
		     "(for a member whose device is gone)", struct dev_args, by_index)
#define OPT_FS								\
	CMD_OPT_STR(0, "fs", "DEV[:DEV...]", "the devices of an unmounted filesystem", \
		    struct dev_args, fs_devs)
#define OPT_FORCE(_help)	CMD_OPT_BOOL('f', "force", _help, struct dev_args, force)
#define OPT_FORCE_DEGRADED						\
	OPT_FORCE("even if data is left with fewer copies than wanted")

/* A device command's shape: @_args after [OPTION]..., at least one of them. */
#define DEV_DEF(_name, _args, _about, _opts, _max, _no_args_msg)	\
	{ .name = _name, .args = _args, .about = _about, .opts = _opts,	\
	  .min_args = 1, .max_args = _max, .no_args_msg = _no_args_msg,	\
	  .needs = CMD_NEEDS_MOUNTED, .help_col = 27 }

/* The member a command works on: from DEVICE, or --by-index IDX FS. */
struct target {
	struct bch_handle	*h;
	unsigned		idx;
	const char		*name;		/* for messages */
};

static void target_open(struct target *t, bool by_index, const char *dev, const char *fs,
			const char *fs_devs, unsigned flags)
{
	if (by_index) {
		uint64_t v;

		if (parse_u64(dev, &v) || v >= 64)
			cmd_usage_error(NULL, "bad member index '%s' (0-63)", dev);
		if (!fs)
			cmd_usage_error(NULL, "--by-index IDX needs the filesystem after it");
		t->h = online_open(fs, flags);
		t->idx = (unsigned)v;
	} else {
		t->h = online_open_dev(dev, fs_devs, flags, &t->idx);
	}
	t->name = dev;
}

/*
 * The one DEVICE (or IDX FILESYSTEM with --by-index) argument from
 * argv[@first...], opened (cmd_parse() checked there are one or two).
 */
static void target_args(struct target *t, int argc, char *argv[], int first,
			const struct dev_args *a, unsigned flags)
{
	if (argc - first > (a->by_index ? 2 : 1))
		cmd_usage_error(NULL, "too many arguments");
	target_open(t, a->by_index, argv[first], argv[first + 1], a->fs_devs, flags);
}

static long do_ioctl(struct bch_handle *h, unsigned long nr, void *arg, const char *name)
{
	long ret = bch_ioctl(h, nr, arg);

	if (ret < 0) {
		online_ioctl_err(h, name, ret);
		exit(EXIT_FAIL);
	}
	return ret;
}

static const struct bch_member *sb_member(const struct bch_sb *sb, unsigned idx)
{
	const struct bch_member *m = bch_sb_member(sb, idx);

	if (!m || !bch_member_exists(m))
		online_die("the filesystem has no member device %u", idx);
	return m;
}

/*
 * DEVICE cannot hold a member of this filesystem: say so in one line, with
 * the smallest size that works, found by laying out members of growing size
 * with the filesystem's block and btree node sizes (and --bucket if given).
 */
static noreturn void too_small(const struct mkfs_opts *fs_opts, const struct mkfs_dev *d)
{
	unsigned node = fs_opts->btree_node_size, bucket = d->opts.bucket_size;
	unsigned b = max_t(unsigned, bucket ?: node, fs_opts->block_size);
	uint64_t size = (uint64_t)BCH_MIN_NR_NBUCKETS * b, have = d->opts.fs_size ?: d->dev_size;
	struct printbuf msg = PRINTBUF, scratch = PRINTBUF;

	for (unsigned i = 0; i < 4096; i++, size += b) {
		struct mkfs_opts o = *fs_opts;
		struct mkfs_dev t = { .path = d->path, .opts = d->opts, .dev_size = size,
				      .dev_block_size = d->dev_block_size,
				      .dev_min_block_size = d->dev_min_block_size };
		struct bch_sb *sb = NULL;
		bool ok;

		t.opts.fs_size = 0;
		printbuf_reset(&scratch);
		ok = !mkfs_geometry(&o, &t, 1, &scratch) && !mkfs_build_sb(&o, &t, 1, &sb, &scratch) &&
		     !mkfs_check(sb, 1, &scratch);
		free(sb);
		if (ok)
			break;
	}
	pr_buf(&msg, "%s is too small (", d->path);
	pr_human_sectors(&msg, (int64_t)have);
	pr_str(&msg, "): a member of this filesystem needs at least ");
	pr_human_sectors(&msg, (int64_t)size);
	pr_buf(&msg, " (%u buckets of ", BCH_MIN_NR_NBUCKETS);
	pr_human_sectors(&msg, b);
	pr_str(&msg, bucket ? ", --bucket" : ", the btree node size");
	pr_str(&msg, "); nothing was written");
	online_die("%s", printbuf_str(&msg));
}

/* ---- device add ------------------------------------------------------------- */

static int o_fs_size(void *p, const char *arg, struct printbuf *why)
{
	return mkfs_parse_fs_size(cmd_opt_typed(), arg, &((struct dev_args *)p)->dev_opts.fs_size, why);
}

static int o_bucket(void *p, const char *arg, struct printbuf *why)
{
	return mkfs_parse_bucket_size(cmd_opt_typed(), arg,
				      &((struct dev_args *)p)->dev_opts.bucket_size, why);
}

static int o_discard(void *p, const char *arg, struct printbuf *why)
{
	((struct dev_args *)p)->dev_opts.discard = true;
	return 0;
}

/* -t, --group and --label: the messages name --group, however it was spelt */
static int o_group(void *p, const char *arg, struct printbuf *why)
{
	if (mkfs_check_group_path("--group", arg, why))
		return -1;
	((struct dev_args *)p)->dev_opts.group = arg;
	return 0;
}

static int o_durability(void *p, const char *arg, struct printbuf *why)
{
	return mkfs_parse_durability(cmd_opt_typed(), arg,
				     &((struct dev_args *)p)->dev_opts.durability, why);
}

static const struct cmd_opt add_opts[] = {
	CMD_OPT_FN(0, "fs_size", "SIZE", "size of the device to use (default: all of it)",
		   o_fs_size),
	CMD_OPT_FN(0, "bucket", "SIZE", "bucket size", o_bucket),
	CMD_OPT_FN(0, "discard", NULL, "issue discards", o_discard),
	CMD_OPT_FN('t', "group", "LABEL", "disk group label of the device", o_group),
	{ .name = "label", .arg = "LABEL", .type = OPT_FN, .fn = o_group, .hidden = true },
	CMD_OPT_FN(0, "durability", "N", "0 (cache), 1 (default) or 2", o_durability),
	OPT_FORCE("format even if DEVICE holds a filesystem"),
	CMD_OPT_ONLINE_VERBOSE,
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def add_def = {
	.name = "device add", .args = "FILESYSTEM DEVICE",
	.about =
"Format DEVICE and add it to FILESYSTEM (its mountpoint, a path inside it, its\n"
"UUID, or the devices DEV[:DEV...] of an unmounted filesystem). New data may\n"
"go to it at once.",
	.opts = add_opts, .max_args = 2, .needs = CMD_NEEDS_MOUNTED, .help_col = 27,
};

/* Ask "Proceed anyway?" on a terminal; refuse otherwise (doc/tools.md §1.4). */
static void confirm_overwrite(const char *path, const char *what)
{
	char *line = NULL;
	size_t n = 0;

	if (!isatty(STDIN_FILENO))
		online_die("%s contains %s; refusing to add it (use --force to format it anyway)", path, what);
	printf("%s contains %s\nProceed anyway? (y,n) ", path, what);
	fflush(stdout);
	if (getline(&line, &n, stdin) < 0)
		online_die("error reading from standard input; nothing was written");
	if (line[0] != 'y' && line[0] != 'Y') {
		free(line);
		online_die("not adding %s; nothing was written", path);
	}
	free(line);
}

/*
 * Before anything is written: DEVICE must not be a member of the
 * filesystem it would join (formatting it would wipe the filesystem;
 * --force does not change that, it only overwrites foreign filesystems),
 * nor a file inside one of its mounts (the mount would read it through
 * itself and wait for ever).
 */
static void refuse_own_device(struct bch_handle *h, struct bch_sb *fs_sb, const char *path)
{
	char why[512];
	int idx;

	if (bch_handle_dev_is_member(h, path, &idx)) {
		if (idx >= 0)
			snprintf(why, sizeof(why), "%s is already member %d of this filesystem", path, idx);
		else
			snprintf(why, sizeof(why), "%s is already a member of this filesystem", path);
	} else if (bch_path_in_fs(h->uuid, path)) {
		snprintf(why, sizeof(why), "%s is a file inside this filesystem's own mount, or built "
			 "on one; a member must live outside the filesystem", path);
	} else {
		return;
	}
	bch_handle_close(h, NULL);
	free(fs_sb);
	online_die("%s; refusing to add it (even with --force); nothing was written", why);
}

int cmd_device_add(int argc, char *argv[])
{
	struct printbuf err = PRINTBUF, what = PRINTBUF;
	struct dev_args a = { 0 };
	struct mkfs_opts opts;
	struct mkfs_dev dev = { 0 };
	struct bch_ioctl_disk arg = { 0 };
	struct bch_handle *h;
	struct bch_sb *fs_sb, *sb = NULL;
	int first, ret;

	mkfs_opts_init(&opts);
	mkfs_dev_opts_init(&a.dev_opts);
	first = cmd_parse(&add_def, &a, argc, argv);
	if (argc - first < 1)
		cmd_usage_error(NULL, "Please supply a filesystem");
	if (argc - first < 2)
		cmd_usage_error(NULL, "Please supply a device");
	dev.opts = a.dev_opts;

	h = online_open(argv[first], BCH_OPEN_OFFLINE_RW);
	fs_sb = online_read_super(h);

	/* a one-device filesystem with the block and btree node sizes of ours */
	dev.path = argv[first + 1];
	refuse_own_device(h, fs_sb, dev.path);
	opts.block_size = le16_to_cpu(fs_sb->block_size);
	opts.btree_node_size = (unsigned)BCH_SB_BTREE_NODE_SIZE(fs_sb);
	opts.meta_replicas = opts.data_replicas = 1;
	opts.meta_replicas_req = opts.data_replicas_req = 1;
	if ((ret = mkfs_dev_open(&dev, &err)))
		goto fail;
	if ((ret = mkfs_geometry(&opts, &dev, 1, &err)) == -BCH_ERR_format_too_small) {
		mkfs_dev_close(&dev);
		bch_handle_close(h, NULL);
		free(fs_sb);
		too_small(&opts, &dev);
	}
	if (ret ||
	    (ret = mkfs_build_sb(&opts, &dev, 1, &sb, &err)) ||
	    (ret = mkfs_check(sb, 1, &err)))
		goto fail;
	if (!a.force) {
		uint8_t uuid[16];
		unsigned idx;

		if ((ret = mkfs_dev_probe(&dev, &what, &err)))
			goto fail;
		/* another filesystem's member: which one */
		if (what.pos && !bch_member_sb_read(dev.path, uuid, &idx, &err)) {
			printbuf_reset(&what);
			pr_buf(&what, "member %u of the bcachefs filesystem ", idx);
			pr_uuid(&what, uuid);
		}
		printbuf_reset(&err);
		if (what.pos)
			confirm_overwrite(dev.path, printbuf_str(&what));
	}
	if ((ret = mkfs_write(sb, &dev, 1, &err)))
		goto fail;
	mkfs_dev_close(&dev);

	arg.dev = (uint64_t)(uintptr_t)dev.path;
	do_ioctl(h, BCH_IOCTL_DISK_ADD, &arg, "BCH_IOCTL_DISK_ADD");
	online_close(h);
	free(fs_sb);
	free(sb);
	printbuf_exit(&what);
	printbuf_exit(&err);
	return EXIT_OK;
fail:
	mkfs_dev_close(&dev);
	bch_handle_close(h, NULL);
	free(fs_sb);
	free(sb);
	if (ret == -EINVAL)
		cmd_usage_error(NULL, "%s", printbuf_str(&err));
	online_die("%s", printbuf_str(&err));
}

/* ---- device remove ------------------------------------------------------------- */

static const struct cmd_opt remove_opts[] = {
	OPT_FORCE("remove even if data is lost or left with fewer\n"
		  "copies than wanted (what could not be moved)"),
	/* the 2018 tool's; refused (losing metadata is not supported) */
	{ .name = "force-metadata", .type = OPT_BOOL,
	  .off = offsetof(struct dev_args, force_metadata), .hidden = true },
	OPT_BY_INDEX,
	CMD_OPT_BOOL(0, "no-evacuate", "do not move data first: only drop the device's\n"
		     "copies (what the 2018 tool did)", struct dev_args, no_evacuate),
	OPT_FS,
	CMD_OPT_ONLINE_VERBOSE,
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def remove_def = DEV_DEF("device remove", "DEVICE",
"   or: bcachefs device remove [OPTION]... --by-index IDX FILESYSTEM\n"
"Move the data off a member device (as device evacuate does), then remove it\n"
"from the filesystem: from the members and from every replicas entry.\n"
"Refused when data would lose its last copy or a copy it should have.\n"
"\n"
FS_HELP, remove_opts, 2, "Please supply a device");

/* Evacuate member @t->idx (read-only first, then a migrate job); the exit code. */
static int evacuate(struct target *t, uint32_t force_flags, const char *what)
{
	struct bch_sb *sb = online_read_super(t->h);
	const struct bch_member *m = sb_member(sb, t->idx);
	struct bch_ioctl_data d = { .op = BCH_DATA_OP_MIGRATE, .start = POS_MIN, .end = POS_MAX };
	long fd;

	if (BCH_MEMBER_STATE(m) == BCH_MEMBER_STATE_RW) {
		struct bch_ioctl_disk_set_state s = {
			.flags = BCH_BY_INDEX | (force_flags & BCH_FORCE_IF_DEGRADED),
			.new_state = BCH_MEMBER_STATE_RO, .dev = t->idx,
		};

		do_ioctl(t->h, BCH_IOCTL_DISK_SET_STATE, &s, "BCH_IOCTL_DISK_SET_STATE");
		printf("%s is read-only now\n", t->name);
	}
	free(sb);
	d.migrate.dev = t->idx;
	fd = do_ioctl(t->h, BCH_IOCTL_DATA, &d, "BCH_IOCTL_DATA");
	return online_job_run(t->h, (int)fd, what);
}

int cmd_device_remove(int argc, char *argv[])
{
	struct bch_ioctl_disk arg = { .flags = BCH_BY_INDEX };
	struct dev_args a = { 0 };
	struct target t;
	int first = cmd_parse(&remove_def, &a, argc, argv), code;

	if (a.force)
		arg.flags |= BCH_FORCE_IF_DATA_LOST | BCH_FORCE_IF_DEGRADED;
	if (a.force_metadata)
		arg.flags |= BCH_FORCE_IF_METADATA_LOST;
	target_args(&t, argc, argv, first, &a, BCH_OPEN_OFFLINE_RW);
	if (!a.no_evacuate) {
		code = evacuate(&t, arg.flags, "evacuate");
		if (code == 130)
			exit(code);
		if (code && !(arg.flags & BCH_FORCE_IF_DATA_LOST))
			online_die("device %u not removed: its data could not all be moved (see above; -f removes it anyway)",
			    t.idx);
	}
	arg.dev = t.idx;
	do_ioctl(t.h, BCH_IOCTL_DISK_REMOVE, &arg, "BCH_IOCTL_DISK_REMOVE");
	online_close(t.h);
	return EXIT_OK;
}

/* ---- device online / offline ---------------------------------------------------- */

static const struct cmd_opt verbose_opts[] = {
	CMD_OPT_ONLINE_VERBOSE,
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def online_def = DEV_DEF("device online", "DEVICE",
"Attach DEVICE, a member of a mounted filesystem that is offline, again.",
	verbose_opts, 1, "Please supply a device");

int cmd_device_online(int argc, char *argv[])
{
	struct bch_ioctl_disk arg = { 0 };
	struct bch_handle *h;
	unsigned idx;
	int first = cmd_parse(&online_def, NULL, argc, argv);

	h = online_open_dev(argv[first], NULL, 0, &idx);
	arg.dev = (uint64_t)(uintptr_t)argv[first];
	do_ioctl(h, BCH_IOCTL_DISK_ONLINE, &arg, "BCH_IOCTL_DISK_ONLINE");
	online_close(h);
	return EXIT_OK;
}

static const struct cmd_opt offline_opts[] = {
	OPT_FORCE_DEGRADED,
	OPT_BY_INDEX,
	CMD_OPT_ONLINE_VERBOSE,
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def offline_def = DEV_DEF("device offline", "DEVICE",
"   or: bcachefs device offline [OPTION]... --by-index IDX FILESYSTEM\n"
"Detach a member device of a mounted filesystem without removing it (its\n"
"state and data stay). Refused when data would be unavailable or degraded.",
	offline_opts, 2, "Please supply a device");

int cmd_device_offline(int argc, char *argv[])
{
	struct bch_ioctl_disk arg = { .flags = BCH_BY_INDEX };
	struct dev_args a = { 0 };
	struct target t;
	int first = cmd_parse(&offline_def, &a, argc, argv);

	if (a.force)
		arg.flags |= BCH_FORCE_IF_DEGRADED;
	/* a mounted filesystem only: no --fs */
	target_args(&t, argc, argv, first, &a, 0);
	arg.dev = t.idx;
	do_ioctl(t.h, BCH_IOCTL_DISK_OFFLINE, &arg, "BCH_IOCTL_DISK_OFFLINE");
	if (t.h->msg.pos)	/* "already offline" */
		printf("%s", printbuf_str(&t.h->msg));
	online_close(t.h);
	return EXIT_OK;
}

/* ---- device evacuate ---------------------------------------------------------- */

static const struct cmd_opt evacuate_opts[] = {
	OPT_FORCE("set it read-only even when that leaves fewer\n"
		  "read-write devices than the replicas wanted"),
	OPT_BY_INDEX,
	OPT_FS,
	CMD_OPT_ONLINE_VERBOSE,
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def evacuate_def = DEV_DEF("device evacuate", "DEVICE",
"   or: bcachefs device evacuate [OPTION]... --by-index IDX FILESYSTEM\n"
"Set a member device read-only and move all its data (extents, btree nodes,\n"
"journal) to the other devices, showing the progress. Ctrl-C stops it after\n"
"the extent it is on; running it again finishes the work.\n"
"\n"
FS_HELP, evacuate_opts, 2, "Please supply a device");

int cmd_device_evacuate(int argc, char *argv[])
{
	struct dev_args a = { 0 };
	struct target t;
	int first = cmd_parse(&evacuate_def, &a, argc, argv), code;

	target_args(&t, argc, argv, first, &a, BCH_OPEN_OFFLINE_RW);
	code = evacuate(&t, a.force ? BCH_FORCE_IF_DEGRADED : 0, "evacuate");
	if (code == 130)
		exit(code);
	online_close(t.h);
	return code;
}

/* ---- device set-state ------------------------------------------------------------ */

static const struct cmd_opt set_state_opts[] = {
	OPT_FORCE_DEGRADED,
	CMD_OPT_BOOL(0, "force-if-data-lost", "even if data is left with no copy at all",
		     struct dev_args, force_data_lost),
	OPT_BY_INDEX,
	OPT_FS,
	CMD_OPT_ONLINE_VERBOSE,
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def set_state_def = DEV_DEF("device set-state", "DEVICE STATE",
"   or: bcachefs device set-state [OPTION]... --by-index IDX FILESYSTEM STATE\n"
"Set the state of a member device: rw (readwrite), ro (readonly), failed or\n"
"spare. Refused when it would leave data with fewer copies than wanted\n"
"(failed, spare) or too few read-write devices for the replicas (ro).\n"
"\n"
FS_HELP, set_state_opts, 3, "Please supply a device");

static int parse_state(const char *s)
{
	static const char * const names[][2] = {
		{ "readwrite", "rw" }, { "readonly", "ro" }, { "failed", "failed" }, { "spare", "spare" },
	};

	for (unsigned i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i][0]) || !strcmp(s, names[i][1]))
			return (int)i;
	return -1;
}

int cmd_device_set_state(int argc, char *argv[])
{
	struct bch_ioctl_disk_set_state arg = { .flags = BCH_BY_INDEX };
	const char *dev, *fs = NULL, *state;
	struct dev_args a = { 0 };
	struct target t;
	int first = cmd_parse(&set_state_def, &a, argc, argv), s;
	int nr = argc - first, want = a.by_index ? 3 : 2;

	if (a.force)
		arg.flags |= BCH_FORCE_IF_DEGRADED;
	if (a.force_data_lost)
		arg.flags |= BCH_FORCE_IF_DATA_LOST | BCH_FORCE_IF_DEGRADED;
	if (nr < want)
		cmd_usage_error(NULL, "Please supply a device state");
	if (nr > want)
		cmd_usage_error(NULL, "too many arguments");
	dev = argv[first];
	if (a.by_index)
		fs = argv[first + 1];
	state = argv[first + want - 1];
	/* the later tools' order (STATE DEVICE) too */
	if (!a.by_index && parse_state(state) < 0 && parse_state(dev) >= 0) {
		const char *x = dev;

		dev = state;
		state = x;
	}
	s = parse_state(state);
	if (s < 0)
		cmd_usage_error(NULL, "Bad device state %s (rw, ro, failed, spare)", state);
	target_open(&t, a.by_index, dev, fs, a.fs_devs, BCH_OPEN_OFFLINE_RW);
	arg.new_state = (uint8_t)s;
	arg.dev = t.idx;
	do_ioctl(t.h, BCH_IOCTL_DISK_SET_STATE, &arg, "BCH_IOCTL_DISK_SET_STATE");
	online_close(t.h);
	return EXIT_OK;
}

/* ---- device resize ------------------------------------------------------------------ */

static const struct cmd_opt resize_opts[] = {
	OPT_FS,
	CMD_OPT_ONLINE_VERBOSE,
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def resize_def = {
	.name = "device resize", .args = "DEVICE [SIZE]",
	.about =
"Grow a member device to SIZE (default: the size of DEVICE now). Shrinking\n"
"is refused.\n"
"\n"
FS_HELP,
	.opts = resize_opts, .min_args = 1, .max_args = 2,
	.no_args_msg = "Please supply a device to resize", .too_many_msg = "Too many arguments",
	.needs = CMD_NEEDS_MOUNTED, .help_col = 27,
};

int cmd_device_resize(int argc, char *argv[])
{
	struct bch_ioctl_disk_resize arg = { .flags = BCH_BY_INDEX };
	const struct bch_member *m;
	struct dev_args a = { 0 };
	struct bch_sb *sb;
	struct target t;
	uint64_t size;
	int first = cmd_parse(&resize_def, &a, argc, argv);
	const char *dev = argv[first];

	if (argc - first == 2) {
		if (parse_size(argv[first + 1], &size))
			cmd_usage_error(NULL, "invalid size %s", argv[first + 1]);
	} else {
		struct stat st;
		int fd = open(dev, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || fstat(fd, &st))
			online_die("Error opening %s: %s", dev, strerror(errno));
		if (S_ISBLK(st.st_mode)) {
			if (ioctl(fd, BLKGETSIZE64, &size))
				online_die("%s: cannot read its size: %s", dev, strerror(errno));
		} else {
			size = (uint64_t)st.st_size;
		}
		close(fd);
	}
	target_open(&t, false, dev, NULL, a.fs_devs, BCH_OPEN_OFFLINE_RW);
	sb = online_read_super(t.h);
	m = sb_member(sb, t.idx);
	arg.dev = t.idx;
	arg.nbuckets = (size >> 9) / le16_to_cpu(m->bucket_size);
	do_ioctl(t.h, BCH_IOCTL_DISK_RESIZE, &arg, "BCH_IOCTL_DISK_RESIZE");
	printf("resized %s to %" PRIu64 " buckets\n", dev, (uint64_t)arg.nbuckets);
	free(sb);
	online_close(t.h);
	return EXIT_OK;
}
