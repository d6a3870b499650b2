// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: one request to a mount's control socket. Input:
 * flags byte (unused), then the request as it arrives (ctl_proto.h:
 * header, ioctl argument, path).
 *
 * The decoder must never read outside the input, and what it accepts must
 * be consistent: the lengths add up, the number is one we serve with the
 * argument size it needs, the path has no NUL and fits. Accepted requests
 * are then copied into an aligned argument as the server does and their
 * fields read (the USAGE slot count, the DATA op, the flags).
 *
 * Wired by the fuzz infrastructure (tests/fuzz/README.md): "ctl" in
 * FUZZ_TARGETS and in run.sh's default list; seeds in corpus/ctl/.
 */
#include <assert.h>
#include <stdlib.h>

#include "fuzz.h"

#include "admin/ctl_proto.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bch_ctl_req *req = malloc(sizeof(*req));
	struct printbuf why = PRINTBUF;
	struct bch_ctl_req_hdr h;
	uint8_t *buf;
	int ret;

	if (!size || !req) {
		free(req);
		return 0;
	}
	/* a copy of exactly the request: reads past it are caught */
	buf = malloc(size - 1 ?: 1);
	memcpy(buf, data + 1, size - 1);
	ret = bch_ctl_req_decode(buf, size - 1, req, &why);
	if (ret) {
		assert(why.pos);
	} else {
		uint64_t *arg = calloc(1, req->arg_bytes + 8);

		memcpy(&h, buf, sizeof(h));
		assert(sizeof(h) + (size_t)h.arg_bytes + h.str_bytes == size - 1);
		assert(bch_ctl_known(req->nr));
		assert(req->arg_bytes == h.arg_bytes);
		assert(strlen(req->path) == h.str_bytes && h.str_bytes <= BCH_CTL_PATH_MAX);
		memcpy(arg, req->arg, req->arg_bytes);
		if (req->nr == BCH_IOCTL_USAGE)
			assert(req->arg_bytes == sizeof(struct bch_ioctl_usage) +
			       ((struct bch_ioctl_usage *)arg)->nr_devices *
			       sizeof(struct bch_ioctl_dev_usage));
		else
			assert(req->arg_bytes == bch_ctl_arg_size(req->nr));
		free(arg);
	}
	printbuf_exit(&why);
	free(buf);
	free(req);
	return 0;
}
