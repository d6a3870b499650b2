/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Member devices of a running filesystem (doc/ioctl.md §9): add, remove,
 * online, offline, set-state, resize. Each request is one engine function;
 * bch_admin_dev_ioctl() picks it (engine lock held).
 */
#ifndef BCH_ADMIN_DEV_H
#define BCH_ADMIN_DEV_H

#include <stdbool.h>
#include <stdint.h>

#include "format/ioctl.h"

struct bch_admin;
struct bch_admin_call;
struct bch_admin_out;
struct bch_fs;
struct printbuf;

int bch_admin_dev_ioctl(struct bch_admin *a, const struct bch_admin_call *call,
			struct bch_admin_out *out);

/*
 * Have every btree node with a copy on @dev rewritten elsewhere at the
 * next checkpoint (*@nr: how many). -EINVAL when some node has no other
 * copy to read and @dev is missing.
 */
int bch_fs_rewrite_nodes_on(struct bch_fs *c, unsigned dev, uint64_t *nr, struct printbuf *msg);

/* Member @idx from (@flags, @dev, @path) as doc/ioctl.md §8 says. */
int bch_fs_member_lookup(struct bch_fs *c, uint32_t flags, uint64_t dev, const char *path,
			 unsigned *idx, struct printbuf *msg);

#endif
