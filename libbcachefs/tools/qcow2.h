/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A sparse qcow2 image of a device holding only chosen byte ranges (dump,
 * doc/tools.md §5): version 2, with a refcount table (order 4, 16-bit
 * counts) so that qemu-img reads and checks it, which the 2018 images
 * without one do not allow.
 *
 * Every cluster touched by a range is allocated in the image (the clusters
 * are those of the 2018 tool: ranges rounded outward to cluster
 * boundaries); only the bytes of ranges marked @copy are read from the
 * device, the rest of an allocated cluster stays zero (so a superblock
 * copy never drags along the bytes around it, and a journal bucket
 * contributes only its entries).
 *
 * Image layout, in clusters: header, L1 table, refcount table, refcount
 * blocks, L2 tables (guest order), data (guest order). Everything is
 * computed before the first write, and the L2 tables and data are written
 * in one pass, a run of clusters at a time (memory does not follow the
 * device size). Every cluster of the file has refcount 1 and every table
 * entry has the COPIED flag (qemu-img check: no errors, no leaks).
 */
#ifndef BCH_QCOW2_H
#define BCH_QCOW2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct printbuf;

/* A byte range of the device: allocate its clusters, and copy it if @copy. */
struct qcow2_range {
	uint64_t	start;
	uint64_t	len;
	bool		copy;
};

struct qcow2_ranges {
	struct qcow2_range	*r;
	size_t			nr, size;
};

void qcow2_ranges_add(struct qcow2_ranges *l, uint64_t start, uint64_t len, bool copy);
void qcow2_ranges_exit(struct qcow2_ranges *l);

/* Reads @len bytes at byte @offset of the source device; 0 or -errno. */
typedef int (*qcow2_read_fn)(void *priv, void *buf, size_t len, uint64_t offset);

struct qcow2_stats {
	uint64_t	data_clusters;
	uint64_t	copied_bytes;	/* bytes read from the device */
	uint64_t	file_bytes;	/* size of the image file */
};

/*
 * Write the image of a @dev_bytes device with 2^@cluster_bits-byte
 * clusters (9..21) holding @ranges (any order, may overlap; clipped to
 * the device) to @fd (an empty file, written with pwrite from offset 0).
 * A range that cannot be read (a damaged device) stays zero in the image,
 * with a line in @err, and the image is still written (0 is returned:
 * print @err as warnings). Errors: -EINVAL (cluster size), -errno of a
 * write; the message is in @err.
 */
int qcow2_write(int fd, uint64_t dev_bytes, unsigned cluster_bits,
		const struct qcow2_ranges *ranges, qcow2_read_fn read_fn, void *priv,
		struct qcow2_stats *stats, struct printbuf *err);

#endif
