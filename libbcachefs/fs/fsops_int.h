/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the filesystem operations (fsops.c, fsops_dir.c, fsops_data.c,
 * fsops_attr.c) share; private to them. The comments on each are at its
 * definition.
 */
#ifndef BCH_FSOPS_INT_H
#define BCH_FSOPS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bkey/bkey.h"
#include "bkey/dirent.h"
#include "bkey/inode.h"

struct bch_fs;
struct btree_trans;
struct printbuf;

#define SLOT_VAL_MAX	(8 * BKEY_MAX_U64S)

/* One slot of a hash table as the transaction would leave it. */
struct slot {
	unsigned	type;		/* 0: empty */
	struct bkey_h	k;
	uint8_t		v[SLOT_VAL_MAX];
	unsigned	v_bytes;
};

struct hash_desc {
	unsigned		btree;
	uint64_t		inum;
	struct bch_hash_info	info;
};

#define ACL_VFS_MAX	(4 + 8 * 64)

/* inodes (fsops.c) */
bool is_dir(const struct bch_inode_unpacked *u);
int inode_read(struct bch_fs *c, uint64_t inum, struct bch_inode_unpacked *u,
	       struct printbuf *err);
void trans_inode(struct btree_trans *t, const struct bch_inode_unpacked *u);
int commit_counted(struct bch_fs *c, struct btree_trans *t, unsigned created,
		   struct printbuf *err);

/* the hashed btrees: dirents and xattrs (fsops.c) */
uint64_t dirent_hash(const struct bch_hash_info *h, const void *name, size_t len);
int hash_find(struct bch_fs *c, struct btree_trans *t, const struct hash_desc *h,
	      uint64_t hash, unsigned x_type, const void *name, size_t len,
	      uint64_t *off, struct slot *s);
int hash_free_slot(struct bch_fs *c, struct btree_trans *t, const struct hash_desc *h,
		   uint64_t hash, uint64_t *off);
int hash_delete(struct bch_fs *c, struct btree_trans *t, const struct hash_desc *h,
		uint64_t off);
int hash_desc_init(struct hash_desc *h, unsigned btree, const struct bch_inode_unpacked *u,
		   struct printbuf *err);

/* extents (fsops.c) */
bool extent_counts(const struct bkey_h *k);
int extents_sectors(struct bch_fs *c, uint64_t inum, uint64_t start, uint64_t end,
		    uint64_t *sectors, uint64_t *last);
int extents_end(struct bch_fs *c, uint64_t inum, uint64_t *end);
int extents_delete(struct bch_fs *c, struct btree_trans *t, uint64_t inum,
		   uint64_t start, uint64_t end, uint64_t *removed);

/* xattrs in a transaction (fsops.c) */
int xattr_put(struct bch_fs *c, struct btree_trans *t, const struct bch_inode_unpacked *u,
	      unsigned type, const char *name, size_t len, const void *val, size_t size,
	      bool *found, struct printbuf *err);
int xattr_del(struct bch_fs *c, struct btree_trans *t, const struct bch_inode_unpacked *u,
	      unsigned type, const char *name, size_t len, bool *found, struct printbuf *err);

/* POSIX ACLs in the VFS form (fsops.c) */
ssize_t acl_get(struct bch_fs *c, const struct bch_inode_unpacked *u, unsigned type,
		uint8_t *buf, size_t size);
int acl_put(struct bch_fs *c, struct btree_trans *t, const struct bch_inode_unpacked *u,
	    unsigned type, const uint8_t *vfs, size_t len, struct printbuf *err);
void acl_create_masq(uint8_t *acl, size_t len, unsigned *mode);
void acl_chmod(uint8_t *acl, size_t len, unsigned mode);

/* truncate (fsops_data.c) */
int truncate_updates(struct bch_fs *c, struct btree_trans *t,
		     struct bch_inode_unpacked *u, uint64_t size, struct printbuf *err);

#endif
