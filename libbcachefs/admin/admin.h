/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Administering a running filesystem (doc/ioctl.md §3): one engine function per
 * control ioctl, each taking the seed's ioctl structure. The same
 * functions serve the mount's control socket (mount/ctl.c) and commands
 * that open an unmounted filesystem in-process (handle.c), through one
 * dispatcher:
 *
 *   struct bch_admin *a = bch_admin_new(c, mounted);
 *   struct bch_admin_call call = { .nr = BCH_IOCTL_USAGE, .arg = buf, ... };
 *   struct bch_admin_out out = BCH_ADMIN_OUT_INIT;
 *   ret = bch_admin_ioctl(a, &call, &out);  // takes bch_fs_lock itself
 *   ...out.data/out.bytes: what the ioctl writes back; out.msg: why it
 *   failed (what the kernel would log); out.job_fd: BCH_IOCTL_DATA's job
 *   bch_admin_out_exit(&out);
 *   bch_admin_free(a);                      // stops the jobs first
 *
 * Errors are -errno with the kernel's values (doc/ioctl.md §9); the message
 * in out.msg says what, where and what to do.
 *
 * Member changes (add, remove, online, offline, set-state, resize) go
 * through the engine hook of btree_update.h (bch_fs_rw_member_update()):
 * the allocator and the journal writer follow the superblock's members.
 */
#ifndef BCH_ADMIN_H
#define BCH_ADMIN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admin/call.h"
#include "format/ioctl.h"
#include "util/util.h"

struct bch_fs;
struct bch_devio;
struct bch_job;

struct bch_admin *bch_admin_new(struct bch_fs *c, bool mounted);
/* Stop and wait for every job, close the retired devices, free. */
void bch_admin_free(struct bch_admin *a);
/* Stop every job (unmount): each ends after the extent it is on. */
void bch_admin_stop_jobs(struct bch_admin *a);

/*
 * Run one request. Returns >= 0 (DISK_GET_IDX: the index; DATA: 0 and the
 * job in out->job_fd) or -errno: -ENOTTY unknown number, -EPERM not
 * privileged, -EINVAL/-ENOENT/... as doc/ioctl.md §9 says.
 */
int bch_admin_ioctl(struct bch_admin *a, const struct bch_admin_call *call,
		    struct bch_admin_out *out);

/* ---- the engine functions (called by bch_admin_ioctl, engine lock held) ---- */

int bch_fs_query_uuid(struct bch_fs *c, struct bch_ioctl_query_uuid *u);

/*
 * Usage of @c (doc/ioctl.md §9.2, §9 USAGE; doc/engine.md §8.2-§8.6, doc/ioctl.md §9.2), counted from
 * the btrees as a mark of every pointer would count it: @u has room for
 * u->nr_devices device slots. -ERANGE when a member index does not fit.
 */
int bch_fs_usage(struct bch_fs *c, struct bch_ioctl_usage *u, struct printbuf *msg);

/*
 * Sectors per replicas entry, one line each: "TYPE DEVS_HEX DISK
 * UNCOMPRESSED" (one copy: on disk, and before compression; the
 * superblock's entries first; " -" after a journal entry: not counted;
 * " unmarked" after an entry the superblock lacks, which fsck reports).
 */
int bch_fs_usage_replicas(struct bch_fs *c, struct printbuf *out);

/*
 * The space accounting (alloc/space.h) and the data sectors, as lines
 * (BCH_CTL_SPACE), sectors:
 *   "capacity N", "used N", "free N", "reserved N", "reserve_btree N",
 *   "reserve_nodata N", "reserve_promised N", "available N",
 *   "data TYPE COPIES DISK UNCOMPRESSED" (every copy, each data type and
 *   number of copies that has any),
 *   "dev IDX CAPACITY USED FREE RESERVED AVAILABLE" (each present member).
 */
int bch_fs_usage_space(struct bch_fs *c, struct printbuf *out);

/* The space accounting of @c (a walk of the btrees when the engine is not running). */
struct bch_space;
int bch_fs_space_walk(struct bch_fs *c, struct bch_space *s, struct printbuf *msg);

/*
 * Damage found and repaired since the open (core/integrity.h), one
 * "NAME VALUE" line each: error_action, read_only (0/1: the writes
 * stopped), nodes_bad, node_copies_repaired, data_bad,
 * data_copies_repaired (BCH_CTL_INTEGRITY).
 */
void bch_fs_integrity_text(struct bch_fs *c, struct printbuf *out);


#endif
