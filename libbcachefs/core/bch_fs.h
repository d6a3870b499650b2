/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The open filesystem: its member devices, the chosen superblock, the
 * encryption key, the journal read, the overlay of newer keys and the
 * btree roots. Every engine module works on this object; it is made by
 * bch_fs_open() and freed by bch_fs_close() (fs/fs.h). Also here: what
 * every layer may ask of it (read a member, key checking context, write
 * every member's superblock).
 */
#ifndef BCH_CORE_BCH_FS_H
#define BCH_CORE_BCH_FS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "bkey/bkey.h"
#include "codec/crypto.h"
#include "core/journal_types.h"
#include "bkey/overlay.h"
#include "util/util.h"

struct bch_devio;
struct bch_sb;
struct printbuf;
struct fsck_state;
struct bch_write_point;

#define BCH_FS_MAX_DEVS		64
#define BCH_NR_BTREES		6	/* extents inodes dirents xattrs alloc quotas */
#define BKEY_MAX_U64S		256

struct bch_member_dev {
	unsigned		idx;		/* member index */
	struct bch_devio	*io;		/* NULL when the device is missing */
	struct bch_sb		*sb;		/* this device's superblock (malloc'd) */
	size_t			sb_bytes;
	uint64_t		sb_offset;	/* sector the superblock was read from */
	uint16_t		bucket_size;	/* sectors */
	uint16_t		first_bucket;
	uint64_t		nbuckets;
	uint8_t			*bucket_gens;	/* per bucket, from the alloc btree (NULL = unknown) */
};

struct btree_root_h {
	bool			present;
	unsigned		level;		/* level of the root node */
	struct bkey_ref		key;		/* btree_ptr key; .v points into buf */
	uint64_t		buf[BKEY_MAX_U64S];
};

struct bch_fs_opts {
	bool			read_only;	/* open devices O_RDONLY, never write */
	bool			degraded;	/* allow missing members where replicas allow */
	bool			no_journal;	/* don't read the journal (list -m formats...) */
	bool			no_excl;	/* read-write, but not O_EXCL (migrate: the device
						 * is the mounted filesystem being migrated) */
	const char		*passphrase_file; /* "-" = stdin */
	bool			ask_passphrase;	/* prompt on the tty when no key is found */
	const char		*passphrase_prompt; /* NULL: "Enter passphrase: " */
	int			verbose;
	/*
	 * The running filesystem's rules for damage (core/integrity.h):
	 * every btree node is verified before any key of it is
	 * used, a node with no copy that verifies is an error (never read
	 * as empty or as it is), bad copies are rewritten from good ones.
	 * Off: the readers of fsck, list, extract take what they can.
	 */
	bool			verify;
	/* what a damaged node does (errors=): 0 the superblock's, else BCH_ON_ERROR_* + 1 */
	unsigned		errors;
	struct fsck_state	*fsck;		/* where problems found while reading go (NULL: counted only) */
	/*
	 * Mount options over the filesystem's defaults for new data (an
	 * inode's own options still win; io_write.c): option + 1, 0 = the
	 * superblock's.
	 */
	unsigned		data_checksum;	/* enum bch_csum_opt + 1 */
	unsigned		compression;	/* enum bch_compression_opt + 1 */
	unsigned		data_replicas;	/* copies + 1 */
	/*
	 * Write the superblocks as the current version. Without it they keep
	 * the version they had on disk (a version-8 filesystem stays one for
	 * the tools of its time), although in memory it reads as current.
	 */
	bool			version_upgrade;
	/*
	 * Quota types counted by this mount besides the superblock's
	 * USRQUOTA/GRPQUOTA/PRJQUOTA (-o usrquota,grpquota,prjquota):
	 * bit 0 user, 1 group, 2 project.
	 */
	unsigned		quota_types;
};

/* A key range of a btree whose node has no copy that verifies. */
struct bch_bad_range {
	unsigned		btree_id;
	struct bpos_h		min, max;
};

/* A file range read from another copy: its bad copies are to be rewritten. */
struct bch_repair_req {
	uint64_t		inode;
	uint64_t		start, end;	/* sectors */
};

/* Damage found by the running filesystem, and what it does about it. */
struct bch_fs_integrity {
	unsigned		action;		/* BCH_ON_ERROR_* in force */
	bool			writes_stopped;	/* errors=remount-ro tripped (or unsafe to write) */
	bool			panic;		/* errors=panic tripped: the mount ends now */
	/* where the one line per problem goes (the mount's log); NULL: nowhere */
	void			(*log)(void *arg, const char *msg);
	void			*log_arg;

	struct bch_bad_range	*bad;
	size_t			nr_bad;
	struct bch_repair_req	*repairs;	/* taken by the mount (admin/data_job.c) */
	size_t			nr_repairs;

	/* counted since the open (fs usage) */
	uint64_t		nodes_bad;	/* nodes with no good copy */
	uint64_t		node_copies_repaired;
	uint64_t		data_bad;	/* extents read with no good copy */
	uint64_t		data_copies_repaired;
};

/* What the copying GC did since the open (fs/copygc.c; fs usage, the mount's log). */
struct bch_copygc_stats {
	uint64_t		passes;		/* walks over the extents */
	uint64_t		buckets;	/* buckets it emptied */
	uint64_t		sectors;	/* sectors of data it wrote */
	uint64_t		extents;	/* extents it moved */
	uint64_t		raced;		/* changed under it: left alone */
	uint64_t		errors;		/* could not be moved (no good copy, ...) */
	bool			thread;		/* the mount's copygc thread runs */
};

/* What rebalance did since the open (fs/rebalance.c; fs usage). */
struct bch_rebalance_stats {
	uint64_t		passes;
	uint64_t		extents;	/* extents rewritten (moved or compressed) */
	uint64_t		recompressed;	/* of which compressed (background_compression) */
	uint64_t		sectors;	/* sectors written */
	uint64_t		errors;
	bool			thread;		/* the mount's rebalance thread runs */
};

struct bch_fs;

/*
 * Reads of file data and the cached copies they asked for (fs/promote.c;
 * fs usage). read_sectors counts the sectors of file data read from each
 * device since the open (atomically: the read-ahead path adds too).
 */
struct bch_promote_stats {
	uint64_t		queued;		/* extents asked for by reads */
	uint64_t		extents;	/* cached copies written and referenced */
	uint64_t		sectors;	/* sectors written for them */
	uint64_t		raced;		/* the extent changed first: left alone */
	uint64_t		full;		/* no room on the promote target */
	uint64_t		errors;		/* no good copy, no room in the key, ... */
	uint64_t		sweeps;		/* walks dropping stale cached pointers */
	uint64_t		swept;		/* extents that lost stale cached pointers */
	uint64_t		read_sectors[BCH_FS_MAX_DEVS];
	bool			thread;		/* the mount's promote thread runs */
	struct bch_promote_thread *t;	/* its queue */
	/*
	 * Told by the file reads (fs/fsread.c) of each piece of extent @k
	 * read from @dev, for a file whose promote target is @target, under
	 * the engine lock: fs/promote.c while its thread runs, else NULL.
	 */
	void			(*read_hook)(struct bch_fs *c, unsigned target,
					     const struct bkey_ref *k, unsigned dev,
					     uint64_t sectors);
};

struct bch_fs {
	struct bch_fs_opts	opts;
	/*
	 * The engine lock: the engine is single-threaded; a running
	 * filesystem (the mount's FUSE handlers, its journal timer, the
	 * control endpoint) takes it around every call (bch_fs_lock).
	 */
	pthread_mutex_t		lock;

	struct bch_sb		*sb;		/* newest superblock among members (points into a member's) */
	size_t			sb_bytes;
	uint64_t		sb_version_disk;/* its version on disk (before the in-memory upgrade) */
	uint8_t			user_uuid[16];
	uint8_t			internal_uuid[16];
	unsigned		nr_devices;	/* sb nr_devices */
	struct bch_member_dev	*devs[BCH_FS_MAX_DEVS];

	unsigned		block_size;	/* sectors */
	unsigned		btree_node_size;/* sectors */
	unsigned		meta_csum_type;
	unsigned		data_csum_type;
	unsigned		str_hash_type;

	bool			encrypted;
	bool			have_key;
	struct bch_key		key;		/* master key, zeroed on close */

	struct journal_state	journal;
	/* keys newer than the btree nodes: journal keys to replay, commits */
	struct bch_overlay	overlay;
	struct btree_root_h	roots[BCH_NR_BTREES];
	struct btree_cache	*btree_cache;	/* btree.c */
	/*
	 * Each node is read once and dropped soon after (fsck's quick
	 * check): a node at least half full keeps its read buffer, not a
	 * copy of its bsets (btree/node.c, node_shrink()).
	 */
	bool			nodes_read_once;
	struct bch_fs_rw	*rw;		/* btree_update.c: NULL = read-only */
	bool			rw_on_demand;	/* the engine starts at the first write */
	struct printbuf		rw_start_err;	/* why a start on demand failed */

	/*
	 * The data write point (fs/io_write.c; made at the first write).
	 * Its buckets are closed before the engine stops (bch_fs_rw_stop())
	 * and at the next write after the members changed (member_changes
	 * moves: bch_fs_rw_member_update()).
	 */
	struct bch_write_point	*wp;
	unsigned long		member_changes;

	uint64_t		inode_hint;	/* where inode allocation looks next (fsops_dir.c) */
	/*
	 * Inode numbers freed since the open (their slot holds a generation
	 * key), a min-heap: inode allocation takes them first, smallest
	 * first (fsops_dir.c).
	 */
	uint64_t		*inum_free;
	size_t			nr_inum_free, inum_free_size;
	/*
	 * Inodes in use (statfs, df -i): counted once at the first statfs,
	 * then kept by the operations that create and delete inodes
	 * (fsops*.c); inodes_removing counts the deletions of the transaction
	 * being built.
	 */
	uint64_t		nr_inodes;
	bool			nr_inodes_known;
	unsigned		inodes_removing;

	/*
	 * Called for each inode key of a transaction (fs/quota.c, while the
	 * mount counts quotas): first with @apply false while the transaction
	 * is checked, nothing applied yet (an error refuses it, e.g.
	 * -EDQUOT), then with @apply true just before the key goes into the
	 * overlay (the key it replaces still readable). NULL: none.
	 */
	int			(*inode_hook)(struct bch_fs *c, void *arg,
					      const struct bkey_ref *k, bool apply);
	void			*inode_hook_arg;

	unsigned long		nr_errors;	/* problems found while reading */
	unsigned long		nr_fixed;

	struct bch_fs_integrity	integ;		/* core/integrity.h */
	struct bch_copygc_stats	copygc;
	struct bch_rebalance_stats rebalance;
	struct bch_promote_stats promote;
};

/* Is member @i here (its device open)? */
static inline bool bch_dev_present(const struct bch_fs *c, unsigned i)
{
	return i < BCH_FS_MAX_DEVS && c->devs[i] && c->devs[i]->io;
}

static inline void bch_fs_lock(struct bch_fs *c)
{
	pthread_mutex_lock(&c->lock);
}

static inline void bch_fs_unlock(struct bch_fs *c)
{
	pthread_mutex_unlock(&c->lock);
}

/*
 * Write @sbs[i] (BCH_FS_MAX_DEVS entries, malloc'd, NULL = leave device i
 * alone) as the superblock of member i: every image is validated first
 * (nothing is written if one is invalid), every device flushed before
 * (what the superblocks refer to is durable) and after its write. On
 * success they replace the in-memory superblocks. @sbs is emptied (the
 * images are taken or freed) either way.
 */
int bch_fs_sb_write_all(struct bch_fs *c, struct bch_sb **sbs, struct printbuf *err);

struct bkey_fs_ctx;
/*
 * What key checks and printing may know about @c: member geometry and
 * bucket gens (from c->devs[]), whether the key is loaded, node size.
 */
void bch_fs_key_ctx(struct bch_fs *c, struct bkey_fs_ctx *ctx);

/* Read @sectors at @sector of member @dev (bounds-checked). */
int bch_dev_read(struct bch_fs *c, unsigned dev, void *buf, size_t bytes, uint64_t sector);

#endif
