// SPDX-License-Identifier: GPL-2.0
/*
 * Member devices of a running filesystem: see admin_dev.h.
 */
#include <errno.h>
#include <unistd.h>

#include "admin.h"
#include "admin_dev.h"
#include "fs.h"

int bch_admin_dev_ioctl(struct bch_admin *a, const struct bch_admin_call *call,
			struct bch_admin_out *out)
{
	if (call->fd >= 0)
		close(call->fd);
	pr_str(&out->msg, "not implemented yet");
	return -EOPNOTSUPP;
}
