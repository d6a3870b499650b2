// SPDX-License-Identifier: GPL-2.0
/* FS_IOC_FIEMAP: see fiemap.h. */
#include <errno.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "tools/fiemap.h"
#include "util/util.h"

#define FIEMAP_BATCH	256

int bch_fiemap(int fd, bool sync, struct fiemap_ext **ret, size_t *nr)
{
	size_t bytes = sizeof(struct fiemap) + FIEMAP_BATCH * sizeof(struct fiemap_extent);
	struct fiemap *fm = xcalloc(1, bytes);
	struct fiemap_ext *v = NULL;
	size_t n = 0, size = 0;
	uint64_t start = 0;
	bool last = false;

	*ret = NULL;
	*nr = 0;
	while (!last) {
		memset(fm, 0, bytes);
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_flags = sync ? FIEMAP_FLAG_SYNC : 0;
		fm->fm_extent_count = FIEMAP_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
			int err = errno == ENOTTY || errno == EINVAL ? -EOPNOTSUPP : -errno;

			free(fm);
			free(v);
			return err;
		}
		if (!fm->fm_mapped_extents)
			break;
		for (unsigned i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];

			if (n == size) {
				size = size ? 2 * size : 16;
				v = xrealloc(v, size * sizeof(*v));
			}
			v[n++] = (struct fiemap_ext) {
				.logical = e->fe_logical, .physical = e->fe_physical,
				.length = e->fe_length, .flags = e->fe_flags,
			};
			if (e->fe_flags & FIEMAP_EXTENT_LAST)
				last = true;
			if (e->fe_logical + e->fe_length > start)
				start = e->fe_logical + e->fe_length;
		}
		/* a batch that ends early without LAST: the kernel has no more */
		if (fm->fm_mapped_extents < FIEMAP_BATCH)
			break;
	}
	free(fm);
	*ret = v;
	*nr = n;
	return 0;
}

enum fiemap_use bch_fiemap_use(const struct fiemap_ext *e, uint64_t copy_below)
{
	const uint32_t copy = FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
		FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_ENCRYPTED |
		FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_DATA_INLINE |
		FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_SHARED;

	if (e->flags & copy)
		return FIEMAP_USE_COPY;
	if (e->flags & FIEMAP_EXTENT_UNWRITTEN)
		return FIEMAP_USE_HOLE;
	if (e->physical < copy_below)
		return FIEMAP_USE_COPY;
	return FIEMAP_USE_LINK;
}
