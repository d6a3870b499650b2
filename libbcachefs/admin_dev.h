/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Member devices of a running filesystem (spec 50 §8.4): add, remove,
 * online, offline, set-state, resize. Each request is one engine function;
 * bch_admin_dev_ioctl() picks it (engine lock held).
 */
#ifndef BCH_ADMIN_DEV_H
#define BCH_ADMIN_DEV_H

#include <stdbool.h>
#include <stdint.h>

#include "ioctl.h"

struct bch_admin;
struct bch_admin_call;
struct bch_admin_out;
struct bch_fs;
struct printbuf;

int bch_admin_dev_ioctl(struct bch_admin *a, const struct bch_admin_call *call,
			struct bch_admin_out *out);

#endif
