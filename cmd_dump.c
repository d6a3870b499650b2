// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs dump: the metadata of a filesystem as one qcow2 image per
 * member device (doc/tools.md §5, libbcachefs/dump.h), readable by qemu-img.
 *
 * Unlike the 2018 tool the outputs are checked (only a regular file is
 * replaced, and only with -f) and their temporary files created before
 * any work is done; each is renamed to its name once complete, and a
 * failed dump removes only its temporary files.
 * Exit status: 0 when every image was written (problems met on the way,
 * such as unreadable nodes, are warnings on stderr); 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_opts.h"
#include "cmds.h"
#include "libbcachefs/dev/dev.h"
#include "libbcachefs/tools/dump.h"
#include "libbcachefs/util/errcode.h"
#include "libbcachefs/fs/fs.h"
#include "libbcachefs/admin/ctl_proto.h"
#include "libbcachefs/admin/handle.h"
#include "libbcachefs/dev/mounted.h"
#include "libbcachefs/util/util.h"

struct dump_args {
	struct bch_fs_opts	fo;
	const char		*output;
	bool			force;
	bool			verbose;
};

static const struct cmd_opt dump_opts[] = {
	CMD_OPT_STR('o', "output", "OUTPUT", "Output file name (required)",
		    struct dump_args, output),
	CMD_OPT_BOOL('f', "force", "Overwrite existing output files (regular files only)",
		     struct dump_args, force),
	CMD_OPT_PASSPHRASE_FILE(struct dump_args, fo),
	CMD_OPT_BOOL('v', "verbose", "Say what each image holds", struct dump_args, verbose),
	CMD_OPT_HELP,
	CMD_OPT_END
};

/* the arguments are checked by cmd_dump(): -o first, then the devices */
static const struct cmd_def dump_def = {
	.name = "dump", .args = "-o OUTPUT DEVICE...",
	.about =
	"Write the metadata of a filesystem (superblocks, journal, btree nodes; never\n"
	"file data) to qcow2 images, one per member device: OUTPUT when one device is\n"
	"given, else OUTPUT.N for member N.",
	.opts = dump_opts,
	.footer =
	"An encrypted filesystem's metadata is copied as it is on disk (encrypted);\n"
	"its key is needed to find the btree nodes. A damaged filesystem is dumped as\n"
	"far as it can be read (warnings on stderr). Convert an image back with\n"
	"`qemu-img convert -O raw OUTPUT dev.img`.\n"
	"\n"
	"Exit status: 0 when every image was written, 1 otherwise.\n",
	.needs = CMD_NEEDS_ANY, .help_col = 28,
};

/*
 * An output is written to a temporary file beside it (in the same
 * directory) and renamed over the name asked for only once complete: a
 * failed dump removes only its own temporary file and never touches what
 * was there. Only a regular file is ever replaced (with -f).
 */
struct out_file {
	char	*path;		/* the name asked for (a symlink resolved) */
	char	*tmp;		/* what we write */
	int	fd;
};

static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISFIFO(m) ? "a FIFO" :
	       S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* Check @o->path may be written, create the temporary file; 0 or -errno. */
static int output_open(struct out_file *o, bool force)
{
	struct stat st;
	char *real, *slash;

	if (!stat(o->path, &st)) {
		if (!S_ISREG(st.st_mode)) {
			fprintf(stderr, "bcachefs dump: %s is %s, not a regular file: give the name "
				"of a file for the image; nothing was written\n", o->path,
				file_kind(st.st_mode));
			return -EINVAL;
		}
		if (!force) {
			fprintf(stderr, "bcachefs dump: cannot create %s: %s (-f overwrites it)\n",
				o->path, strerror(EEXIST));
			return -EEXIST;
		}
		/* a symlink to a file: the file it names is replaced, not the link */
		real = realpath(o->path, NULL);
		if (real) {
			free(o->path);
			o->path = real;
		}
	} else if (errno != ENOENT) {
		fprintf(stderr, "bcachefs dump: cannot create %s: %s\n", o->path, strerror(errno));
		return -errno;
	} else if (!lstat(o->path, &st)) {
		/* a symlink to nothing: the image would replace the link itself */
		fprintf(stderr, "bcachefs dump: %s is a symlink to a missing file: give the name of "
			"a file for the image; nothing was written\n", o->path);
		return -EINVAL;
	}
	o->tmp = xmalloc(strlen(o->path) + 32);
	slash = strrchr(o->path, '/');
	sprintf(o->tmp, "%.*s.%s.dump-XXXXXX", slash ? (int)(slash - o->path + 1) : 0, o->path,
		slash ? slash + 1 : o->path);
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		int ret = -errno;

		fprintf(stderr, "bcachefs dump: cannot create %s (beside %s): %s\n", o->tmp,
			o->path, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		return ret;
	}
	return 0;
}

/* The complete image to its name; without -f never over a file made meanwhile. */
static int output_finish(struct out_file *o, bool force)
{
	int ret = force ? rename(o->tmp, o->path)
			: renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE);

	/* a filesystem without RENAME_NOREPLACE: a link fails the same way on an existing name */
	if (ret && !force && (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)) {
		ret = link(o->tmp, o->path);
		if (!ret)
			unlink(o->tmp);
	}
	if (ret) {
		fprintf(stderr, "bcachefs dump: cannot rename %s to %s: %s%s\n", o->tmp, o->path,
			strerror(errno), errno == EEXIST ? " (-f overwrites it)" : "");
		return -errno;
	}
	free(o->tmp);
	o->tmp = NULL;
	return 0;
}

static void remove_outputs(struct out_file *o, unsigned nr)
{
	for (unsigned i = 0; i < nr; i++) {
		if (o[i].fd >= 0)
			close(o[i].fd);
		if (o[i].tmp)
			unlink(o[i].tmp);
		o[i].fd = -1;
	}
}

/*
 * @dev is mounted: ask its mount (our control socket) to write and flush
 * its journal, so that what is on disk is a consistent point holding every
 * commit made so far. Without a mount that answers, say what the images
 * may miss.
 */
static void flush_mounted(const char *dev)
{
	struct printbuf err = PRINTBUF;
	struct bch_handle *h = NULL;
	unsigned idx;
	long ret = bch_handle_open_dev(dev, NULL, 0, &h, &idx, &err);
	const char *why;

	if (!ret)
		ret = bch_ioctl(h, BCH_CTL_JOURNAL_FLUSH, NULL);
	if (ret < 0) {
		why = h && h->msg.pos ? printbuf_str(&h->msg) : printbuf_str(&err);
		fprintf(stderr, "bcachefs dump: warning: %s is mounted and its journal could not "
			"be flushed (%s): dumping what is on disk now (the running filesystem may "
			"be ahead of it)\n", dev, *why ? why : strerror((int)-ret));
	}
	bch_handle_close(h, &err);
	printbuf_exit(&err);
}

int cmd_dump(int argc, char *argv[])
{
	struct dump_args a = {
		.fo = { .read_only = true, .degraded = true, .no_journal = true },
	};
	struct bch_fs_opts *fo = &a.fo;
	struct out_file out[BCH_FS_MAX_DEVS];
	struct printbuf err = PRINTBUF;
	struct bch_dump d;
	const char *output;
	bool force, verbose;
	unsigned nr_online = 0, nr_out = 0;
	struct bch_fs *c;
	int first, ret;

	bch_heap_tune();
	first = cmd_parse(&dump_def, &a, argc, argv);
	output = a.output;
	force = a.force;
	verbose = a.verbose;
	if (!output || !*output)
		cmd_usage_error(NULL, "no output file given (-o OUTPUT)");
	if (first >= argc)
		cmd_usage_error(NULL, "no device given");
	fo->ask_passphrase = !fo->passphrase_file;

	for (int i = first; i < argc; i++)
		if (dev_mounted_check(argv[i]) == 1) {
			flush_mounted(argv[i]);
			break;
		}

	ret = bch_fs_open(argv + first, (unsigned)(argc - first), fo, &c, &err);
	if (ret) {
		fputs(printbuf_str(&err), stderr);
		fprintf(stderr, "bcachefs dump: cannot open %s: %s\n", argv[first], bch_err_str(ret));
		printbuf_exit(&err);
		return EXIT_FAIL;
	}
	fputs(printbuf_str(&err), stderr);
	printbuf_reset(&err);

	/* the output files first: nothing is read before they exist */
	for (unsigned i = 0; i < BCH_FS_MAX_DEVS; i++)
		nr_online += c->devs[i] && c->devs[i]->io;
	for (unsigned i = 0; i < BCH_FS_MAX_DEVS; i++) {
		struct out_file *o = &out[nr_out];

		if (!c->devs[i] || !c->devs[i]->io)
			continue;
		if (nr_online == 1)
			o->path = xstrdup(output);
		else {
			o->path = xmalloc(strlen(output) + 16);
			sprintf(o->path, "%s.%u", output, i);
		}
		o->tmp = NULL;
		o->fd = -1;
		ret = output_open(o, force);
		if (ret) {
			free(o->path);
			goto err;
		}
		nr_out++;
	}

	bch_dump_collect(c, &d, &err);
	if (err.pos) {
		fputs(printbuf_str(&err), stderr);
		printbuf_reset(&err);
	}

	for (unsigned i = 0, n = 0; i < BCH_FS_MAX_DEVS && !ret; i++) {
		struct qcow2_stats st;

		if (!c->devs[i] || !c->devs[i]->io)
			continue;
		ret = bch_dump_write_dev(c, &d, i, out[n].fd, &st, &err);
		if (!ret && fsync(out[n].fd))
			ret = -errno;
		fputs(printbuf_str(&err), stderr);
		printbuf_reset(&err);
		if (ret) {
			fprintf(stderr, "bcachefs dump: writing %s: %s\n", out[n].path, bch_err_str(ret));
			break;
		}
		if (verbose)
			printf("%s: member %u (%s): %" PRIu64 " clusters of %u bytes, %" PRIu64
			       " bytes of metadata, image %" PRIu64 " bytes\n", out[n].path, i,
			       c->devs[i]->io->path, st.data_clusters, 1U << d.cluster_bits,
			       st.copied_bytes, st.file_bytes);
		n++;
	}
	if (verbose && !ret)
		printf("%" PRIu64 " superblock copies, %" PRIu64 " journal entries in %" PRIu64
		       " buckets, %" PRIu64 " btree node copies (%" PRIu64 " unreadable)\n",
		       d.nr_sb_copies, d.nr_jsets, d.nr_journal_buckets, d.nr_nodes,
		       d.nr_nodes_unreadable);
	bch_dump_exit(&d);
	if (ret)
		goto err;
	for (unsigned i = 0; i < nr_out && !ret; i++) {
		if (close(out[i].fd)) {
			fprintf(stderr, "bcachefs dump: writing %s: %s\n", out[i].tmp, strerror(errno));
			ret = -EIO;
		}
		out[i].fd = -1;
	}
	for (unsigned i = 0; i < nr_out && !ret; i++)
		ret = output_finish(&out[i], force);
	if (ret)
		goto err;
	for (unsigned i = 0; i < nr_out; i++)
		free(out[i].path);
	bch_fs_close(c);
	printbuf_exit(&err);
	return EXIT_OK;
err:
	remove_outputs(out, nr_out);
	for (unsigned i = 0; i < nr_out; i++) {
		free(out[i].path);
		free(out[i].tmp);
	}
	bch_fs_close(c);
	printbuf_exit(&err);
	return EXIT_FAIL;
}
