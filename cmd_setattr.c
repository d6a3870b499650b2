// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs setattr: per-file options on files and trees of a mounted
 * filesystem, through the "bcachefs.NAME" extended attributes the mount
 * answers (libbcachefs/fs/inode_opts.h), as today's tools do it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cmd_opts.h"
#include "cmds.h"
#include "libbcachefs/fs/inode_opts.h"
#include "libbcachefs/util/util.h"

struct setattr_opts {
	const char	*val[BCH_INODE_OPT_NR];	/* NULL: leave; "-": remove */
	bool		no_recurse;
	unsigned long	nr_files, nr_failed;
};

#define SETATTR_OPT(id, arg, help)						\
	CMD_OPT_STR(0, #id, arg, help, struct setattr_opts, val[BCH_INODE_OPT_##id])

static const struct cmd_opt setattr_opts[] = {
	SETATTR_OPT(data_checksum, "TYPE", "none, crc32c, crc64"),
	SETATTR_OPT(compression, "TYPE", "none, lz4, gzip, zstd"),
	SETATTR_OPT(background_compression, "TYPE", "none, lz4, gzip, zstd"),
	SETATTR_OPT(data_replicas, "N", "copies of the data, 1 to 3"),
	SETATTR_OPT(promote_target, "TARGET", "none, a member device or a disk group"),
	SETATTR_OPT(foreground_target, "TARGET", "none, a member device or a disk group"),
	SETATTR_OPT(background_target, "TARGET", "none, a member device or a disk group"),
	CMD_OPT_BOOL('d', "directory", "a directory itself only, not what is in it",
		     struct setattr_opts, no_recurse),
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def setattr_def = {
	.name		= "setattr",
	.args		= "FILE...",
	.about		= "Set per-file options on files of a mounted filesystem, and on everything\n"
			  "under the directories given (what is created there later takes the\n"
			  "directory's options). A value of - removes the file's own option (the\n"
			  "filesystem's applies again). The same as setfattr -n bcachefs.NAME.\n"
			  "The data written from now on follows them.",
	.opts		= setattr_opts,
	.min_args	= 1,
	.no_args_msg	= "no file given",
	.needs		= CMD_NEEDS_MOUNTED,
	.help_col	= 40,
};

static void set_one(struct setattr_opts *o, const char *path)
{
	char name[64];

	o->nr_files++;
	for (unsigned i = 0; i < BCH_INODE_OPT_NR; i++) {
		const char *v = o->val[i];
		int r;

		if (!v)
			continue;
		snprintf(name, sizeof(name), BCH_INODE_OPT_XATTR_PREFIX "%s", bch_inode_opt_name(i));
		r = strcmp(v, "-") ? lsetxattr(path, name, v, strlen(v), 0) : lremovexattr(path, name);
		if (r && !(errno == ENODATA && !strcmp(v, "-"))) {
			fprintf(stderr, "bcachefs setattr: %s: %s=%s: %s\n", path, bch_inode_opt_name(i),
				v, errno == EINVAL ? "bad value (or not a bcachefs mount)"
				   : errno == EOPNOTSUPP ? "not a bcachefs mount" : strerror(errno));
			o->nr_failed++;
			return;
		}
	}
}

static void set_tree(struct setattr_opts *o, const char *path, bool top)
{
	struct stat st;
	DIR *d;
	struct dirent *e;

	if (lstat(path, &st)) {
		fprintf(stderr, "bcachefs setattr: %s: %s\n", path, strerror(errno));
		o->nr_failed++;
		return;
	}
	/* symlinks are not followed, and have no data of their own to place */
	if (S_ISLNK(st.st_mode))
		return;
	set_one(o, path);
	if (!S_ISDIR(st.st_mode) || (top && o->no_recurse) || !(d = opendir(path)))
		return;
	while ((e = readdir(d))) {
		struct printbuf sub = PRINTBUF;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		pr_buf(&sub, "%s/%s", path, e->d_name);
		set_tree(o, printbuf_str(&sub), false);
		printbuf_exit(&sub);
	}
	closedir(d);
}

int cmd_setattr(int argc, char *argv[])
{
	struct setattr_opts o = { 0 };
	bool any = false;
	int i = cmd_parse(&setattr_def, &o, argc, argv);

	for (unsigned j = 0; j < BCH_INODE_OPT_NR; j++)
		any |= o.val[j] != NULL;
	if (!any)
		cmd_usage_error(setattr_def.name, "no option given");
	for (; i < argc; i++)
		set_tree(&o, argv[i], true);
	return o.nr_failed ? EXIT_FAIL : EXIT_OK;
}
