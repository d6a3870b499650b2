// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs mount: serve a filesystem through FUSE (libfuse3), read-write
 * (the engine: fsops.h, batched journal commits, a timer writing the
 * journal at least every second) or read-only (-o ro).
 * Opens the filesystem through the one engine path first, so that every
 * error (missing device, wrong passphrase, damaged superblock) reaches the
 * terminal and the exit code; only then mounts and, without -f, goes to
 * the background. The FUSE loop is single-threaded (the btree node cache
 * is not thread-safe; one more thread only verifies checksums over a
 * mapping of the devices, see fuse.c). umount / fusermount3 -u, SIGTERM, SIGINT and SIGHUP
 * unmount and end the process with exit code 0.
 */
#define FUSE_USE_VERSION 34

#include <errno.h>
#include <fuse_lowlevel.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_opts.h"
#include "cmds.h"
#include "libbcachefs/admin/admin.h"
#include "libbcachefs/btree/btree.h"
#include "libbcachefs/btree/btree_update.h"
#include "libbcachefs/core/integrity.h"
#include "libbcachefs/util/errcode.h"
#include "libbcachefs/fs/copygc.h"
#include "libbcachefs/fs/fs.h"
#include "libbcachefs/fs/quota.h"
#include "libbcachefs/fs/rebalance.h"
#include "libbcachefs/fs/promote.h"
#include "libbcachefs/mount/ctl.h"
#include "libbcachefs/mount/fuse.h"
#include "libbcachefs/dev/mounted.h"
#include "libbcachefs/util/util.h"


static bool log_to_syslog;

static void mount_log(void *arg, const char *msg)
{
	if (log_to_syslog)
		syslog(LOG_ERR, "%s: %s", (const char *)arg, msg);
	else
		fprintf(stderr, "bcachefs mount: %s: %s\n", (const char *)arg, msg);
}

/* What --verbose reports while mounted (the copygc passes): informational. */
static void mount_info(void *arg, const char *msg)
{
	if (log_to_syslog)
		syslog(LOG_INFO, "%s: %s", (const char *)arg, msg);
	else
		fprintf(stderr, "bcachefs mount: %s: %s\n", (const char *)arg, msg);
}

/* Append @s to @out escaped for a libfuse -o value (',' and '\' quoted). */
static void pr_opt_escaped(struct printbuf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == ',' || *s == '\\')
			pr_char(out, '\\');
		pr_char(out, *s);
	}
}

static void add_arg(struct fuse_args *args, const char *s)
{
	if (fuse_opt_add_arg(args, s))
		die("out of memory");
}

/* What -o gave: ours, the filesystem's, and the rest for FUSE. */
struct mount_opts {
	struct bch_fs_opts	*fo;
	struct bch_fuse_opts	*bo;
	struct printbuf		*fuse_opts;
	bool			sb_given;
	uint64_t		sb;		/* -o sb=N: the sector of the superblock */
	bool			norecovery;
	bool			allow_other_set; /* allow_other or noallow_other given */
	bool			allow_other;
};

static bool opt_is(const char *t, const char *name, const char **val)
{
	size_t n = strlen(name);

	if (strncmp(t, name, n) || t[n] != '=')
		return false;
	*val = t + n + 1;
	return true;
}

/* The value of an -o NAME=VAL among @names (NULL-terminated): its index. */
static unsigned opt_choice(const char *t, const char *val, const char *const *names)
{
	struct printbuf list = PRINTBUF;

	for (unsigned i = 0; names[i]; i++)
		if (!strcmp(val, names[i]))
			return i;
	for (unsigned i = 0; names[i]; i++)
		pr_buf(&list, "%s%s", i ? ", " : "", names[i]);
	cmd_usage_error(NULL, "-o %s: not one of %s", t, printbuf_str(&list));
}

/*
 * The options of the 2018 kernel's mount a user may type (spec 50's
 * mount options): the ones this mount can honour are taken, the others
 * refused with the option's name and what to do instead (exit 16).
 */
static bool mount_opt_2018(char *t, struct mount_opts *mo)
{
	static const char *const csum[] = { "none", "crc32c", "crc64", NULL };
	static const char *const compr[] = { "none", "lz4", "gzip", "zstd", NULL };
	static const char *const refused_inode_opts[] = {
		"background_compression", "promote_target", "foreground_target",
		"background_target", "str_hash", "metadata_checksum", "metadata_replicas",
		"erasure_code", NULL,
	};
	const char *v;
	char *e;

	if (opt_is(t, "sb", &v)) {
		errno = 0;
		mo->sb = strtoull(v, &e, 0);
		if (errno || e == v || *e)
			cmd_usage_error(NULL, "-o %s: not a sector number", t);
		mo->sb_given = true;
		return true;
	}
	if (!strcmp(t, "nochanges")) {
		/* nothing is written: read-only */
		mo->fo->read_only = true;
		return true;
	}
	if (!strcmp(t, "norecovery")) {
		mo->norecovery = true;
		return true;
	}
	if (!strcmp(t, "fsck") || !strcmp(t, "fix_errors"))
		cmd_usage_error(NULL, "-o %s: this mount does not check the filesystem; "
				"run 'bcachefs fsck%s DEVICE' before mounting", t,
				t[0] == 'f' && t[1] == 'i' ? " -y" : "");
	if (opt_is(t, "errors", &v)) {
		/* in the order of BCH_ON_ERROR_* (core/integrity.h) */
		static const char *const modes[] = { "continue", "remount-ro", "panic", NULL };

		mo->fo->errors = (!strcmp(v, "ro") ? BCH_ON_ERROR_RO : opt_choice(t, v, modes)) + 1;
		return true;
	}
	if (opt_is(t, "data_checksum", &v)) {
		mo->fo->data_checksum = opt_choice(t, v, csum) + 1;
		return true;
	}
	if (opt_is(t, "compression", &v)) {
		mo->fo->compression = opt_choice(t, v, compr) + 1;
		return true;
	}
	/* quota accounting for this mount, besides what the superblock says */
	if (!strcmp(t, "usrquota") || !strcmp(t, "quota")) {
		mo->fo->quota_types |= 1;
		return true;
	}
	if (!strcmp(t, "grpquota")) {
		mo->fo->quota_types |= 2;
		return true;
	}
	if (!strcmp(t, "prjquota")) {
		mo->fo->quota_types |= 4;
		return true;
	}
	if (opt_is(t, "data_replicas", &v)) {
		unsigned long n = strtoul(v, &e, 10);

		if (e == v || *e || n < 1 || n > BCH_REPLICAS_MAX)
			cmd_usage_error(NULL, "-o %s: copies of new data, 1 to %u", t,
					BCH_REPLICAS_MAX);
		mo->fo->data_replicas = (unsigned)n + 1;
		return true;
	}
	for (unsigned i = 0; refused_inode_opts[i]; i++)
		if (opt_is(t, refused_inode_opts[i], &v) || !strcmp(t, refused_inode_opts[i]))
			cmd_usage_error(NULL, "-o %s: not a mount option here; it is the "
					"filesystem's (bcachefs format --%s)", t, refused_inode_opts[i]);
	return false;
}

static void mount_opts(const char *arg, struct mount_opts *mo)
{
	char *o = xstrdup(arg), *s2 = NULL;

	for (char *t = strtok_r(o, ",", &s2); t; t = strtok_r(NULL, ",", &s2)) {
		if (!strcmp(t, "ro") || !strcmp(t, "rw")) {
			mo->fo->read_only = t[1] == 'o';
			continue;
		}
		if (!strcmp(t, "degraded")) {
			mo->fo->degraded = true;
			continue;
		}
		if (!strcmp(t, "version_upgrade")) {
			mo->fo->version_upgrade = true;
			continue;
		}
		if (!strcmp(t, "kernel_cache") || !strcmp(t, "direct_io")) {
			mo->bo->kernel_cache = t[0] == 'k';
			mo->bo->cache_auto = false;
			continue;
		}
		if (!strncmp(t, "max_read=", 9)) {
			char *e;
			unsigned long v = strtoul(t + 9, &e, 10);

			if (*e || !v || v > UINT_MAX)
				cmd_usage_error(NULL, "-o %s: not a size in bytes", t);
			mo->bo->max_read = (unsigned)v;
			continue;
		}
		/* (verify_ahead: its name until 2026-12) */
		if (!strcmp(t, "read_ahead") || !strcmp(t, "noread_ahead") ||
		    !strcmp(t, "verify_ahead") || !strcmp(t, "noverify_ahead")) {
			mo->bo->no_read_ahead = t[0] == 'n';
			continue;
		}
		if (!strcmp(t, "noatime"))
			mo->bo->noatime = true;	/* and the kernel's flag too */
		if (!strcmp(t, "verbose")) {
			mo->fo->verbose++;
			continue;
		}
		if (!strcmp(t, "allow_other") || !strcmp(t, "noallow_other")) {
			mo->allow_other_set = true;
			mo->allow_other = t[0] == 'a';
			continue;
		}
		if (mount_opt_2018(t, mo))
			continue;
		/* fstab words that are mount(8)'s, not the filesystem's */
		if (!strcmp(t, "defaults") || !strcmp(t, "auto") ||
		    !strcmp(t, "noauto") || !strcmp(t, "nofail") ||
		    !strcmp(t, "_netdev") || !strcmp(t, "user") ||
		    !strcmp(t, "nouser") || !strcmp(t, "users") ||
		    !strncmp(t, "x-", 2) || !strncmp(t, "comment=", 8))
			continue;
		if (!strncmp(t, "fsname=", 7) || !strncmp(t, "subtype=", 8))
			cmd_usage_error(NULL, "-o %s: the source and type of the mount are set by bcachefs", t);
		if (mo->fuse_opts->pos)
			pr_char(mo->fuse_opts, ',');
		pr_str(mo->fuse_opts, t);
	}
	free(o);
}

/*
 * -o version_upgrade on an older filesystem: its superblocks written now as
 * the current version (otherwise every write keeps the version on disk).
 */
static void version_upgrade(struct bch_fs *c, const char *name)
{
	struct printbuf err = PRINTBUF;
	char msg[256];
	uint64_t from = c->sb_version_disk;

	if (!c->opts.version_upgrade || !from || from >= BCH_SB_VERSION_CURRENT)
		return;
	if (bch_fs_rw_write_sb(c, &err))
		snprintf(msg, sizeof(msg), "upgrading the superblocks from version %" PRIu64
			 " to %u failed: %s", from, BCH_SB_VERSION_CURRENT, printbuf_str(&err));
	else
		snprintf(msg, sizeof(msg), "upgraded the superblocks from version %" PRIu64
			 " to %u (-o version_upgrade)", from, BCH_SB_VERSION_CURRENT);
	mount_log((void *)name, msg);
	printbuf_exit(&err);
}

/*
 * -o sb=N (the line migrate prints): every member must have a superblock
 * copy at sector N. The superblock itself is found as always (sector 8,
 * else the layout at sector 7); N only has to be one of its copies.
 */
static bool sb_offset_ok(const struct bch_fs *c, uint64_t sb, const char *src)
{
	for (unsigned i = 0; i < BCH_FS_MAX_DEVS; i++) {
		const struct bch_member_dev *ca = c->devs[i];
		const struct bch_sb_layout *l;
		struct printbuf have = PRINTBUF;
		bool found = false;

		if (!ca || !ca->sb)
			continue;
		l = &ca->sb->layout;
		for (unsigned k = 0; k < l->nr_superblocks && k < BCH_SB_LAYOUT_MAX_SB; k++) {
			found |= le64_to_cpu(l->sb_offset[k]) == sb;
			pr_buf(&have, "%s%" PRIu64, k ? ", " : "", le64_to_cpu(l->sb_offset[k]));
		}
		if (!found) {
			fprintf(stderr, "bcachefs mount: -o sb=%" PRIu64 ": member %u of %s has no "
				"superblock at that sector (its copies: %s); leave sb= out; nothing mounted\n",
				sb, i, src, printbuf_str(&have));
			printbuf_exit(&have);
			return false;
		}
		printbuf_exit(&have);
	}
	return true;
}

/* What the command line says (besides the -o options in @mo). */
struct mount_cli {
	struct mount_opts	mo;
	struct bch_fs_opts	fo;
	bool			foreground;
};

static int opt_o(void *opts, const char *arg, struct printbuf *why)
{
	(void)why;
	mount_opts(arg, &((struct mount_cli *)opts)->mo);
	return 0;
}

static int opt_verbose(void *opts, const char *arg, struct printbuf *why)
{
	(void)arg; (void)why;
	((struct mount_cli *)opts)->fo.verbose++;
	return 0;
}

/* mount(8) calls mount.bcachefs with -n (no mtab), -s (sloppy), -t TYPE: ignored */
static int opt_ignored(void *opts, const char *arg, struct printbuf *why)
{
	(void)opts; (void)arg; (void)why;
	return 0;
}

static const struct cmd_opt mount_cli_opts[] = {
	CMD_OPT_FN('o', NULL, "OPTIONS",
		   "comma-separated mount options:\n"
		   "  rw        read-write (the default)\n"
		   "  ro        read-only: nothing is written\n"
		   "  degraded  allow missing member devices when\n"
		   "            the replicas allow it\n"
		   "  direct_io no kernel cache of file data: every\n"
		   "            read comes here (data cached once,\n"
		   "            under the device; shared mmap of\n"
		   "            files fails). The default for\n"
		   "            files opened read-only: sequential\n"
		   "            reads are about twice as fast;\n"
		   "            files opened for writing use the\n"
		   "            kernel's cache (shared mmap works)\n"
		   "  kernel_cache  the kernel caches file data\n"
		   "            (shared mmap works, repeated reads\n"
		   "            come from memory)\n"
		   "  noread_ahead  no thread reading and\n"
		   "            verifying ahead of sequential reads\n"
		   "  max_read=BYTES  largest read request\n"
		   "            (default 1 MiB)\n"
		   "  allow_other  every user may use the mount\n"
		   "            (permissions checked as on a kernel\n"
		   "            filesystem): the default when root\n"
		   "            mounts; noallow_other: only the user\n"
		   "            who mounted it (the default of a\n"
		   "            user's own mount)\n"
		   "  version_upgrade  write the superblocks as\n"
		   "            version 9 (without it a filesystem\n"
		   "            of an older version keeps it)\n"
		   "  sb=N      the superblock copy at sector N (the\n"
		   "            line migrate prints; found anyway)\n"
		   "  nochanges the same as ro\n"
		   "  norecovery  with ro: the journal is read\n"
		   "            into memory only (as ro does)\n"
		   "  errors=continue|remount-ro|panic  what a\n"
		   "            damaged btree node does (default:\n"
		   "            the superblock's error action):\n"
		   "            EIO for what it covers; the mount\n"
		   "            read-only; the mount ends\n"
		   "  compression=none|lz4|gzip|zstd,\n"
		   "  data_checksum=none|crc32c|crc64,\n"
		   "  data_replicas=N  new data of files without\n"
		   "            their own option, instead of the\n"
		   "            filesystem's\n"
		   "  usrquota (quota), grpquota, prjquota\n"
		   "            count and enforce user, group,\n"
		   "            project quotas (as format\n"
		   "            --usrquota... does for every mount)\n"
		   "  fsck, fix_errors, and the other filesystem\n"
		   "  options are refused, naming what to do\n"
		   "  others (nosuid, nodev, noexec, debug, ...)\n"
		   "  are passed to FUSE", opt_o),
	CMD_OPT_BOOL('f', "foreground", "stay in the foreground (messages on stderr;\n"
		     "otherwise they go to syslog)", struct mount_cli, foreground),
	CMD_OPT_PASSPHRASE_FILE(struct mount_cli, fo),
	CMD_OPT_FN('v', "verbose", NULL, "print what opening the filesystem found", opt_verbose),
	{ .short_name = 'n', .type = OPT_FN, .fn = opt_ignored, .hidden = true },
	{ .short_name = 's', .type = OPT_FN, .fn = opt_ignored, .hidden = true },
	{ .short_name = 't', .arg = "TYPE", .type = OPT_FN, .fn = opt_ignored, .hidden = true },
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def cmd_mount_def = {
	.name		= "mount",
	.args		= "DEVICE[:DEVICE...] MOUNTPOINT",
	.about		= "Mount a filesystem through FUSE, read-write (or read-only with -o ro).",
	.opts		= mount_cli_opts,
	.footer		=
			  "Every btree node is verified (checksums, then the checks fsck makes) before\n"
			  "it is used: a bad copy is read from another copy and rewritten, data read\n"
			  "from another copy has its bad copy rewritten too; with no good copy the\n"
			  "read fails with EIO, one line is logged and the error action is taken. A\n"
			  "damaged root or interior node: nothing is mounted (run fsck), or with -o ro\n"
			  "or -o degraded it is mounted read-only, serving what verifies.\n"
			  "\n"
			  "Unmount with umount(8) or fusermount3 -u MOUNTPOINT, or send SIGTERM: everything\n"
			  "is written and the filesystem marked clean. Installed as mount.bcachefs, it is\n"
			  "what mount -t bcachefs DEV DIR and an /etc/fstab line run (fstab words such as\n"
			  "defaults, noauto, nofail are mount(8)'s and ignored here).\n",
	.min_args	= 2,
	.max_args	= 2,
	.no_args_msg	= "need DEVICE[:DEVICE...] and MOUNTPOINT",
	.too_many_msg	= "need DEVICE[:DEVICE...] and MOUNTPOINT",
	.help_col	= 30,
};

/*
 * The mount point, absolute (the daemon changes to "/" and unmounts by
 * this name); a mount point that is not a directory ends the command.
 */
static const char *mount_point(const char *arg, char real[PATH_MAX])
{
	const char *mountpoint = arg;
	struct stat st;

	if (realpath(arg, real))
		mountpoint = real;
	errno = 0;
	if (stat(mountpoint, &st) || !S_ISDIR(st.st_mode))
		die("mount point %s: %s; nothing mounted", arg,
		    errno ? strerror(errno) : "not a directory");
	return mountpoint;
}

/*
 * The devices of @devlist (split at ':' in place) into *@devs; the mount's
 * source names them by real path, joined by ':' (@fsname). False (said
 * why) when one is not found or already in use.
 */
static bool mount_devices(char *devlist, const char *arg, char ***devs, unsigned *nr_devs,
			  struct printbuf *fsname)
{
	char *save = NULL, *tok;

	for (tok = strtok_r(devlist, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		char real[PATH_MAX];

		if (*nr_devs >= BCH_FS_MAX_DEVS)
			cmd_usage_error(NULL, "more than %u devices", BCH_FS_MAX_DEVS);
		*devs = xrealloc(*devs, (*nr_devs + 1) * sizeof(**devs));
		(*devs)[(*nr_devs)++] = tok;
		if (!realpath(tok, real)) {
			cmd_open_failed(tok, -errno, NULL, "; nothing mounted");
			return false;
		}
		if (fsname->pos)
			pr_char(fsname, ':');
		pr_str(fsname, real);
		if (dev_mounted_check_wait(tok, DEV_UNMOUNT_WAIT_MS) == 1) {
			fprintf(stderr, "bcachefs: %s is already mounted or in use; not mounted again\n", tok);
			return false;
		}
	}
	if (!*nr_devs)
		cmd_usage_error(NULL, "no device given in \"%s\"", arg);
	return true;
}

/*
 * A btree root or interior node with no copy that verifies: never an
 * empty or wrong tree. Nothing mounted (false), or with -o ro or
 * -o degraded mounted read-only, serving what verifies.
 */
static bool mount_check_interior(struct bch_fs *c, struct bch_fs_opts *fo, const char *src)
{
	if (!bch_btree_verify_interior(c))
		return true;
	if (c->integ.panic || (!fo->read_only && !fo->degraded)) {
		fprintf(stderr, "bcachefs: %s: a btree root or interior node has no copy that verifies "
			"(said above): run bcachefs fsck -f, or mount with -o ro to read what verifies%s; "
			"nothing mounted\n", src,
			c->integ.panic ? " (with errors=continue: errors=panic ends the mount)" : "");
		return false;
	}
	if (!fo->read_only)
		fprintf(stderr, "bcachefs: %s: a btree root or interior node has no copy that verifies: "
			"mounted read-only, serving what verifies; run bcachefs fsck -f\n", src);
	fo->read_only = c->opts.read_only = true;
	return true;
}

/*
 * Read-write: the engine started (the journal replayed, every bucket in
 * use marked), and @bo set for the write operations; damage found while
 * starting makes the mount read-only (or, with errors=panic, nothing is
 * mounted: false).
 */
static bool mount_rw_start(struct bch_fs *c, struct bch_fs_opts *fo, struct bch_fuse_opts *bo,
			   const char *src, const char *fsname, struct printbuf *err)
{
	int ret;

	/*
	 * the nodes read so far are read again by the start (every node):
	 * a bad copy found before the engine could write is rewritten now
	 */
	bch_btree_cache_exit(c);
	/* the journal replayed, every bucket in use marked: writable */
	ret = bch_fs_rw_start(c, err);
	if (ret) {
		fputs(printbuf_str(err), stderr);
		fprintf(stderr, "bcachefs: cannot mount %s read-write: %s; nothing mounted "
			"(-o ro mounts it read-only)\n", src, bch_err_str(ret));
		return false;
	}
	if (c->integ.panic) {
		fprintf(stderr, "bcachefs: %s: damaged btree nodes (said above) and errors=panic: "
			"run bcachefs fsck; nothing mounted\n", src);
		bch_fs_rw_mark_damaged(c, err);	/* for the next fsck */
		bch_btree_rw_free(c);	/* nothing else was written: nothing to stop */
		return false;
	}
	if (bch_fs_writes_stopped(c)) {
		/* nothing written but "not clean": the engine goes, the mount is read-only */
		bch_fs_rw_mark_damaged(c, err);
		bch_btree_rw_free(c);
		fprintf(stderr, "bcachefs: %s: damaged btree nodes (said above): mounted read-only "
			"(errors=%s); run bcachefs fsck\n", src,
			bch_fs_error_action_str(c->integ.action));
		fo->read_only = c->opts.read_only = true;
	} else {
		bch_fs_rw_set_batch(c, true);
		bo->rw = true;
		version_upgrade(c, fsname);
	}
	return true;
}

/*
 * Quotas (format --usrquota..., -o usrquota...): usage counted from the
 * inodes now, then kept and enforced by every commit (fs/quota.h). False:
 * nothing mounted (said why).
 */
static bool mount_quota_start(struct bch_fs *c, unsigned types, const char *src,
			      struct printbuf *err)
{
	int ret = bch_quota_start(c, bch_quota_sb_types(c) | types, err);

	if (ret) {
		fputs(printbuf_str(err), stderr);
		fprintf(stderr, "bcachefs: %s: cannot count quotas: %s; nothing mounted "
			"(run bcachefs fsck)\n", src, bch_err_str(ret));
		return false;
	}
	return true;
}

/* "-o VALUE" into libfuse's arguments. */
static void add_opt(struct fuse_args *args, const char *value)
{
	add_arg(args, "-o");
	add_arg(args, value);
}

/* libfuse's arguments: read-only or not, max_read, fsname, allow_other, the rest of -o. */
static void mount_fuse_args(struct fuse_args *args, const struct mount_cli *cli,
			    struct bch_fuse_opts *bo, const char *fsname,
			    struct printbuf *fuse_opts)
{
	struct printbuf opt = PRINTBUF;

	add_arg(args, "bcachefs");
	add_opt(args, cli->fo.read_only ? "ro,default_permissions,subtype=bcachefs"
				       : "rw,default_permissions,subtype=bcachefs");
	/*
	 * Reads of up to 1 MiB by default (the most the kernel sends in one
	 * request when libfuse asks for 256 pages): each request is a round
	 * trip, so the fewer the better. libfuse wants the same in the mount
	 * option and from init (fuse.c).
	 */
	if (!bo->max_read)
		bo->max_read = 1 << 20;
	pr_buf(&opt, "max_read=%u", bo->max_read);
	add_opt(args, printbuf_str(&opt));
	printbuf_reset(&opt);
	pr_str(&opt, "fsname=");
	pr_opt_escaped(&opt, fsname);
	add_opt(args, printbuf_str(&opt));
	printbuf_exit(&opt);
	/*
	 * Mounted by root (fstab, mount -t bcachefs): every user may use it,
	 * with the kernel checking permissions (default_permissions), as for
	 * a kernel filesystem. A user's own mount (through fusermount3) keeps
	 * FUSE's default: only that user. -o noallow_other / allow_other
	 * choose.
	 */
	if (cli->mo.allow_other_set ? cli->mo.allow_other : geteuid() == 0)
		add_opt(args, "allow_other");
	if (fuse_opts->pos)
		add_opt(args, printbuf_str(fuse_opts));
}

/* What runs beside the FUSE loop: threads, so started after daemonizing. */
struct mount_services {
	struct bch_admin		*adm;
	struct bch_ctl			*ctl;
	struct bch_copygc_thread	*gc;
	struct bch_rebalance_thread	*rb;
	struct bch_promote_thread	*pt;
};

/*
 * The control endpoint (doc/ioctl.md §2: how the online commands reach
 * the mount; without it the mount still works, they do not), and with
 * read-write the copying GC (fs/copygc.h), rebalance and promote.
 */
static void mount_services_start(struct mount_services *s, struct bch_fs *c,
				 const char *mountpoint, bool rw, bool verbose,
				 const char *fsname)
{
	struct printbuf err = PRINTBUF;

	s->adm = bch_admin_new(c, true);
	if (!bch_fuse_mount_dev(mountpoint, &s->adm->mount_dev))
		s->adm->mount_dev = 0;
	if (bch_ctl_start(s->adm, &s->ctl, &err)) {
		char msg[512];

		snprintf(msg, sizeof(msg), "no control socket (online commands will not reach this mount): %s",
			 printbuf_str(&err));
		mount_log((void *)fsname, msg);
	}
	printbuf_exit(&err);
	if (rw) {
		s->gc = bch_copygc_start(c, verbose ? mount_info : NULL, (void *)fsname);
		s->rb = bch_rebalance_start(c, verbose ? mount_info : NULL, (void *)fsname);
		s->pt = bch_promote_start(c, verbose ? mount_info : NULL, (void *)fsname);
	}
}

/* No more requests; the data jobs stop after their current extent. */
static void mount_services_stop(struct mount_services *s)
{
	bch_ctl_stop(s->ctl);
	s->ctl = NULL;
	bch_copygc_stop(s->gc);
	s->gc = NULL;
	bch_rebalance_stop(s->rb);
	s->rb = NULL;
	bch_promote_stop(s->pt);
	s->pt = NULL;
}

/*
 * After the session: everything written and the filesystem marked clean,
 * or, after damage was found, nothing more written. False when the
 * unmount failed (logged) or errors=panic ended it.
 */
static bool mount_write_out(struct bch_fs *c, struct bch_fuse *bf, void *log_arg,
			    struct printbuf *err)
{
	int ret;

	if (bf && (c->integ.panic || (c->rw && bch_fs_writes_stopped(c)))) {
		/* the journal was written when the damage was found (fuse.c): nothing more */
		mount_log(log_arg,
			  c->integ.panic ? "stopped after damage was found (errors=panic): nothing more written; "
					   "the next fsck or mount replays the journal; run bcachefs fsck"
					 : "unmounted without writing the btrees (read-only since damage was found); "
					   "the next fsck or mount replays the journal; run bcachefs fsck");
		return !c->integ.panic;
	}
	if (!c->rw)
		return true;
	/* everything written, the filesystem marked clean */
	ret = bch_fs_rw_stop(c, err);
	if (ret) {
		char msg[256];

		snprintf(msg, sizeof(msg), "unmount: writing the filesystem out failed (%s): %s",
			 bch_err_str(ret), printbuf_str(err));
		mount_log(log_arg, msg);
		return false;
	}
	return true;
}

/* --verbose at the end: what the read-ahead worker and the copying GC did. */
static void mount_stats(struct bch_fuse *bf, struct bch_fs *c, bool rw)
{
	unsigned long nr_done, nr_taken, nr_served;

	bch_fuse_read_ahead_stats(bf, &nr_done, &nr_taken, &nr_served);
	fprintf(stderr, "read ahead: %lu regions read, %lu reads served from them, %lu taken over\n",
		nr_done, nr_served, nr_taken);
	if (c && rw)
		fprintf(stderr, "copygc: %" PRIu64 " passes, %" PRIu64 " buckets emptied, %" PRIu64
			" extents (%" PRIu64 " sectors) moved\n", c->copygc.passes,
			c->copygc.buckets, c->copygc.extents, c->copygc.sectors);
}

int cmd_mount(int argc, char *argv[])
{
	struct mount_cli cli = {
		.fo = { .read_only = false, .ask_passphrase = true, .verify = true },
	};
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct printbuf err = PRINTBUF, fsname = PRINTBUF, fuse_opts = PRINTBUF;
	/* direct I/O by default: bench/20-mount-read.sh, ~2x kernel_cache */
	struct bch_fuse_opts bo = { .kernel_cache = false, .cache_auto = true };
	struct bch_fuse *bf = NULL;
	struct mount_services sv = { 0 };
	struct fuse_session *se = NULL;
	struct bch_fs *c = NULL;
	char **devs = NULL, *devlist, mnt_real[PATH_MAX];
	const char *mountpoint;
	unsigned nr_devs = 0;
	int ret, code = EXIT_FAIL, optind;

	cli.mo = (struct mount_opts) { .fo = &cli.fo, .bo = &bo, .fuse_opts = &fuse_opts };
	optind = cmd_parse(&cmd_mount_def, &cli, argc, argv);
	/*
	 * norecovery: nothing of the journal written back. The journal holds
	 * the btree roots (spec 20), so it is still read, into memory only:
	 * what a read-only mount does anyway.
	 */
	if (cli.mo.norecovery && !cli.fo.read_only)
		cmd_usage_error(NULL, "-o norecovery: the journal is not written back, "
				"so the mount must be read-only: add -o ro");
	devlist = xstrdup(argv[optind]);
	mountpoint = mount_point(argv[optind + 1], mnt_real);
	if (!mount_devices(devlist, argv[optind], &devs, &nr_devs, &fsname))
		goto out;

	/* a daemon that allocates and frees leaf-sized arrays all the time */
	bch_heap_tune();
	ret = bch_fs_open(devs, nr_devs, &cli.fo, &c, &err);
	if (ret) {
		cmd_open_failed(argv[optind], ret, &err, "; nothing mounted");
		goto out;
	}
	if (cli.fo.verbose)
		fputs(printbuf_str(&err), stderr);
	printbuf_reset(&err);
	if (cli.mo.sb_given && !sb_offset_ok(c, cli.mo.sb, argv[optind])) {
		code = EXIT_USAGE;
		goto out;
	}
	/* damage found from now on: a line each (core/integrity.h) */
	c->integ.log = mount_log;
	c->integ.log_arg = (void *)printbuf_str(&fsname);
	if (!mount_check_interior(c, &cli.fo, argv[optind]))
		goto out;
	/* stale cached copies are judged by the alloc btree's bucket gens */
	ret = bch_btree_read_bucket_gens(c, &err);
	if (ret)
		fprintf(stderr, "bcachefs mount: cannot read bucket generations (%s); cached copies are trusted\n",
			bch_err_str(ret));
	printbuf_reset(&err);
	if (!cli.fo.read_only &&
	    !mount_rw_start(c, &cli.fo, &bo, argv[optind], printbuf_str(&fsname), &err))
		goto out;

	printbuf_reset(&err);
	if (!mount_quota_start(c, cli.fo.quota_types, argv[optind], &err))
		goto out;
	mount_fuse_args(&args, &cli, &bo, printbuf_str(&fsname), &fuse_opts);
	printbuf_reset(&err);
	if (bo.kernel_cache) {
		bo.mountpoint = mountpoint;
		bo.readahead_kb = max_t(unsigned, 1024, bo.max_read >> 9);
	}
	bo.log = mount_log;
	bo.log_arg = (void *)printbuf_str(&fsname);
	bf = bch_fuse_new(c, &bo);
	se = bch_fuse_session_new(bf, &args);
	if (!se) {
		fprintf(stderr, "bcachefs: cannot start a FUSE session (options: %s); nothing mounted\n",
			fuse_opts.pos ? printbuf_str(&fuse_opts) : "none");
		goto out;
	}
	if (fuse_set_signal_handlers(se)) {
		fprintf(stderr, "bcachefs: cannot set signal handlers; nothing mounted\n");
		goto out;
	}
	if (fuse_session_mount(se, mountpoint)) {
		/* libfuse said why */
		fprintf(stderr, "bcachefs: cannot mount %s on %s; nothing mounted\n",
			argv[optind], mountpoint);
		goto out_signals;
	}
	if (!cli.foreground) {
		if (fuse_daemonize(0)) {
			fprintf(stderr, "bcachefs: cannot go to the background; unmounted\n");
			goto out_unmount;
		}
		openlog("bcachefs", LOG_PID, LOG_DAEMON);
		log_to_syslog = true;
	}

	mount_services_start(&sv, c, mountpoint, bo.rw, cli.fo.verbose, printbuf_str(&fsname));
	ret = fuse_session_loop(se);
	mount_services_stop(&sv);
	/* > 0: ended by a signal (SIGTERM, SIGINT, SIGHUP): a normal unmount */
	if (ret < 0) {
		char msg[160];

		snprintf(msg, sizeof(msg), "reading FUSE requests failed (%s); unmounting",
			 ret == -1 ? "error" : strerror(-ret));
		mount_log(bo.log_arg, msg);
	} else
		code = EXIT_OK;
out_unmount:
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out:
	bch_copygc_stop(sv.gc);
	bch_rebalance_stop(sv.rb);
	bch_promote_stop(sv.pt);
	if (se)
		fuse_session_destroy(se);
	if (bf && bch_fuse_stop(bf, &err)) {
		mount_log(bo.log_arg ? bo.log_arg : (void *)"bcachefs", printbuf_str(&err));
		code = EXIT_FAIL;
	}
	printbuf_reset(&err);
	if (c && !mount_write_out(c, bf, bo.log_arg ? bo.log_arg : (void *)"bcachefs", &err))
		code = EXIT_FAIL;
	if (bf && cli.fo.verbose)
		mount_stats(bf, c, bo.rw);
	bch_fuse_free(bf);
	/* after the read-ahead worker: it may hold a device taken out (admin.h) */
	bch_admin_free(sv.adm);
	if (c) {
		bch_quota_stop(c);
		bch_fs_close(c);
	}
	fuse_opt_free_args(&args);
	printbuf_exit(&err);
	printbuf_exit(&fuse_opts);
	free(devs);
	free(devlist);
	if (log_to_syslog)
		closelog();
	printbuf_exit(&fsname);
	return code;
}
