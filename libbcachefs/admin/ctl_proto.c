// SPDX-License-Identifier: GPL-2.0
/*
 * The control socket's wire format: see ctl_proto.h.
 */
#include <errno.h>
#include <string.h>

#include "admin/ctl_proto.h"
#include "util/util.h"

size_t bch_ctl_arg_size(uint32_t nr)
{
	switch (nr) {
	case BCH_IOCTL_QUERY_UUID:
		return sizeof(struct bch_ioctl_query_uuid);
	case BCH_IOCTL_DISK_ADD:
	case BCH_IOCTL_DISK_REMOVE:
	case BCH_IOCTL_DISK_ONLINE:
	case BCH_IOCTL_DISK_OFFLINE:
		return sizeof(struct bch_ioctl_disk);
	case BCH_IOCTL_DISK_SET_STATE:
		return sizeof(struct bch_ioctl_disk_set_state);
	case BCH_IOCTL_DATA:
		return sizeof(struct bch_ioctl_data);
	case BCH_IOCTL_DATA_V2:
		return sizeof(struct bch_ioctl_data_v2);
	case BCH_IOCTL_USAGE:
		return sizeof(struct bch_ioctl_usage);
	case BCH_IOCTL_READ_SUPER:
		return sizeof(struct bch_ioctl_read_super);
	case BCH_IOCTL_DISK_GET_IDX:
		return sizeof(struct bch_ioctl_disk_get_idx);
	case BCH_IOCTL_DISK_RESIZE:
		return sizeof(struct bch_ioctl_disk_resize);
	default:
		return 0;
	}
}

bool bch_ctl_known(uint32_t nr)
{
	return nr == BCH_CTL_DEV_NAMES || nr == BCH_CTL_REPLICAS_USAGE ||
	       nr == BCH_CTL_JOURNAL_FLUSH || nr == BCH_CTL_SPACE || nr == BCH_CTL_INTEGRITY ||
	       bch_ctl_arg_size(nr);
}

int bch_ctl_req_decode(const void *buf, size_t len, struct bch_ctl_req *req,
		       struct printbuf *why)
{
	struct bch_ctl_req_hdr h;
	const uint8_t *p = buf;
	size_t want;

	memset(req, 0, sizeof(*req));
	if (len < sizeof(h)) {
		pr_buf(why, "request of %zu bytes is shorter than its header", len);
		return -EPROTO;
	}
	memcpy(&h, p, sizeof(h));
	if (h.magic != BCH_CTL_REQ_MAGIC) {
		pr_buf(why, "request has a bad magic number %#x", h.magic);
		return -EPROTO;
	}
	if (h.arg_bytes > BCH_CTL_MSG_MAX || h.str_bytes > BCH_CTL_MSG_MAX ||
	    sizeof(h) + (size_t)h.arg_bytes + h.str_bytes != len) {
		pr_buf(why, "request lengths (%u + %u) do not add up to its %zu bytes",
		       h.arg_bytes, h.str_bytes, len);
		return -EPROTO;
	}
	if (h.str_bytes > BCH_CTL_PATH_MAX) {
		pr_buf(why, "path of %u bytes is too long", h.str_bytes);
		return -ENAMETOOLONG;
	}
	if (h.str_bytes && memchr(p + sizeof(h) + h.arg_bytes, 0, h.str_bytes)) {
		pr_str(why, "path contains a NUL byte");
		return -EPROTO;
	}
	req->nr = h.nr;
	if (!bch_ctl_known(h.nr)) {
		pr_buf(why, "unknown request %#x", h.nr);
		return -ENOTTY;
	}
	want = bch_ctl_arg_size(h.nr);
	if (h.nr == BCH_IOCTL_USAGE && h.arg_bytes >= sizeof(struct bch_ioctl_usage)) {
		struct bch_ioctl_usage u;

		memcpy(&u, p + sizeof(h), sizeof(u));
		if (u.nr_devices > BCH_CTL_USAGE_DEVS_MAX) {
			pr_buf(why, "usage request for %u devices (at most %u)",
			       u.nr_devices, BCH_CTL_USAGE_DEVS_MAX);
			return -EINVAL;
		}
		want += (size_t)u.nr_devices * sizeof(struct bch_ioctl_dev_usage);
	}
	if (h.arg_bytes != want) {
		pr_buf(why, "request %#x carries %u bytes, needs %zu", h.nr, h.arg_bytes, want);
		return -EINVAL;
	}
	req->arg = p + sizeof(h);
	req->arg_bytes = h.arg_bytes;
	memcpy(req->path, p + sizeof(h) + h.arg_bytes, h.str_bytes);
	req->path[h.str_bytes] = 0;
	req->has_path = h.str_bytes != 0;
	return 0;
}
