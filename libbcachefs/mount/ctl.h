/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control endpoint of a mount: a unix socket, /run/bcachefs/UUID/ctl
 * (BCACHEFS_RUN_DIR overrides /run/bcachefs), served by one thread of the
 * mount process. Each request (ctl_proto.h) is decoded, checked against
 * the peer's credentials (root or CAP_SYS_ADMIN, as the kernel checks;
 * QUERY_UUID and USAGE are open to everyone) and run by bch_admin_ioctl()
 * (which takes the engine lock). A malformed request gets an error reply,
 * never more than that.
 *
 *   struct bch_ctl *ctl;
 *   bch_ctl_start(admin, &ctl, &err);   // after any fork (daemonizing)
 *   ...the FUSE loop...
 *   bch_ctl_stop(ctl);                  // before the engine stops
 */
#ifndef BCH_MOUNT_CTL_H
#define BCH_MOUNT_CTL_H

struct bch_admin;
struct bch_ctl;
struct printbuf;

int bch_ctl_start(struct bch_admin *a, struct bch_ctl **ret, struct printbuf *err);
/* Stop serving: the socket is removed, the thread joined, the jobs stopped. */
void bch_ctl_stop(struct bch_ctl *ctl);

#endif
