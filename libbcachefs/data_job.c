// SPDX-License-Identifier: GPL-2.0
/*
 * Data jobs: see data_job.h.
 */
#include <errno.h>
#include <stdbool.h>

#include "admin.h"
#include "data_job.h"

int bch_fs_data(struct bch_admin *a, const struct bch_ioctl_data *arg, int *fd,
		struct printbuf *msg)
{
	pr_str(msg, "not implemented yet");
	return -EOPNOTSUPP;
}

void bch_jobs_stop_all(struct bch_admin *a)
{
}

void bch_jobs_reap(struct bch_admin *a, bool wait)
{
}
