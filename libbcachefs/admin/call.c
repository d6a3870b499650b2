// SPDX-License-Identifier: GPL-2.0
/* The answer of a request (call.h). */
#include <stdlib.h>
#include <unistd.h>

#include "admin/call.h"

void bch_admin_out_exit(struct bch_admin_out *out)
{
	free(out->data);
	out->data = NULL;
	out->bytes = 0;
	printbuf_exit(&out->msg);
	if (out->job_fd >= 0)
		close(out->job_fd);
	out->job_fd = -1;
}
