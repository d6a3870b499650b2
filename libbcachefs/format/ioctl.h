/*
 * ioctl.h - the bcachefs control ioctl ABI (doc/ioctl.md §3), x86-64 layouts.
 *
 * ioctl arguments are in host byte order (plain uintNN_t), except the
 * embedded struct bpos, which reuses the on-disk type (identical on
 * little-endian hosts, the only ones this ABI is defined for).
 *
 * BCH_IOCTL_DATA exists in two sizes:
 *   - struct bch_ioctl_data (56 bytes, BCH_IOCTL_DATA = 0x4038bc0a): the
 *     layout of the header posted for review; the project uses it for
 *     requests it serves;
 *   - struct bch_ioctl_data_v2 (112 bytes, BCH_IOCTL_DATA_V2 =
 *     0x4070bc0a): the 2018 tools' layout (64-byte padded union).
 * Both share the first 56 bytes; a server should accept both numbers.
 * The progress fd always returns 128-byte struct bch_ioctl_data_event
 * records.
 */
#ifndef BCH_IOCTL_H
#define BCH_IOCTL_H

#include <stdint.h>
#include <sys/ioctl.h>

#include "format/format.h"

#define BCH_IOCTL_TYPE		0xbc

/* Flags shared by several ioctls (u32 flags fields) */
#define BCH_FORCE_IF_DATA_LOST		(1U << 0)
#define BCH_FORCE_IF_METADATA_LOST	(1U << 1)
#define BCH_FORCE_IF_DATA_DEGRADED	(1U << 2)
#define BCH_FORCE_IF_METADATA_DEGRADED	(1U << 3)
#define BCH_FORCE_IF_DEGRADED		\
	(BCH_FORCE_IF_DATA_DEGRADED | BCH_FORCE_IF_METADATA_DEGRADED)
#define BCH_FORCE_IF_ALL		\
	(BCH_FORCE_IF_DATA_LOST | BCH_FORCE_IF_METADATA_LOST | \
	 BCH_FORCE_IF_DEGRADED)

/* `dev` is a member index instead of a pointer to a path string */
#define BCH_BY_INDEX			(1U << 4)
/* READ_SUPER: read that member's superblock, not the filesystem's */
#define BCH_READ_DEV			(1U << 5)

/* ---------------------------------------------------------------------- */
/* Argument structures                                                    */

/* QUERY_UUID: the external (user) uuid */
struct bch_ioctl_query_uuid {
	struct bch_uuid	uuid;			/* 0 */
};
_Static_assert(sizeof(struct bch_ioctl_query_uuid) == 16, "query_uuid");

/* START (compiled out in 2018) */
struct bch_ioctl_start {
	uint32_t	flags;
	uint32_t	pad;
};
_Static_assert(sizeof(struct bch_ioctl_start) == 8, "start");

/* DISK_ADD / DISK_REMOVE / DISK_ONLINE / DISK_OFFLINE */
struct bch_ioctl_disk {
	uint32_t	flags;			/* 0 */
	uint32_t	pad;			/* 4: must be 0 */
	uint64_t	dev;			/* 8: index or user path pointer */
};
_Static_assert(sizeof(struct bch_ioctl_disk) == 16, "disk");

/* DISK_SET_STATE */
struct bch_ioctl_disk_set_state {
	uint32_t	flags;			/* 0 */
	uint8_t		new_state;		/* 4: enum bch_member_state */
	uint8_t		pad[3];			/* 5: must be 0 */
	uint64_t	dev;			/* 8 */
};
_Static_assert(sizeof(struct bch_ioctl_disk_set_state) == 16, "set_state");
_Static_assert(offsetof(struct bch_ioctl_disk_set_state, dev) == 8, "set_state");

/* DATA jobs */
enum bch_data_op {
	BCH_DATA_OP_SCRUB	= 0,
	BCH_DATA_OP_REREPLICATE	= 1,
	BCH_DATA_OP_MIGRATE	= 2,
	BCH_DATA_OP_NR		= 3,
};

/* DATA, layout of the posted header: 56 bytes */
struct bch_ioctl_data {
	uint32_t	op;			/*  0: enum bch_data_op */
	uint32_t	flags;			/*  4: must be 0 */
	struct bpos	start;			/*  8 */
	struct bpos	end;			/* 28 */
	union {
		struct {
			uint32_t dev;		/* 48 */
			uint32_t pad;		/* 52 */
		} migrate;
	};
} __attribute__((aligned(8)));
_Static_assert(sizeof(struct bch_ioctl_data) == 56, "data");
_Static_assert(offsetof(struct bch_ioctl_data, start) == 8, "data");
_Static_assert(offsetof(struct bch_ioctl_data, end) == 28, "data");
_Static_assert(offsetof(struct bch_ioctl_data, migrate.dev) == 48, "data");

/* DATA, layout of the 2018 tools: 112 bytes (union padded to 64) */
struct bch_ioctl_data_v2 {
	uint32_t	op;			/*  0 */
	uint32_t	flags;			/*  4 */
	struct bpos	start;			/*  8 */
	struct bpos	end;			/* 28 */
	union {
		struct {
			uint32_t dev;		/* 48 */
			uint32_t pad;		/* 52 */
		} migrate;
		uint64_t pad[8];		/* 48..111 */
	};
} __attribute__((aligned(8)));
_Static_assert(sizeof(struct bch_ioctl_data_v2) == 112, "data_v2");
_Static_assert(offsetof(struct bch_ioctl_data_v2, migrate.dev) == 48, "data_v2");

/* Progress record of a data job */
#define BCH_DATA_PROGRESS_DONE	0xff	/* data_type once the job ended */

struct bch_ioctl_data_progress {
	uint8_t		data_type;		/*  0: 2 journal, 3 btree, 4 data, 255 done */
	uint8_t		btree_id;		/*  1 */
	uint8_t		pad[2];			/*  2 */
	struct bpos	pos;			/*  4 */
	uint64_t	sectors_done;		/* 24 */
	uint64_t	sectors_total;		/* 32 */
} __attribute__((aligned(8)));
_Static_assert(sizeof(struct bch_ioctl_data_progress) == 40, "progress");
_Static_assert(offsetof(struct bch_ioctl_data_progress, pos) == 4, "progress");
_Static_assert(offsetof(struct bch_ioctl_data_progress, sectors_done) == 24,
	       "progress");

/* What read() on the job fd returns: exactly 128 bytes */
enum bch_data_event_type {
	BCH_DATA_EVENT_PROGRESS	= 0,
};

struct bch_ioctl_data_event {
	uint8_t		type;			/* 0: enum bch_data_event_type */
	uint8_t		pad[7];			/* 1 */
	union {
		struct bch_ioctl_data_progress p;	/* 8 */
		uint64_t	pad2[15];	/* 8..127 */
	};
} __attribute__((aligned(8)));
_Static_assert(sizeof(struct bch_ioctl_data_event) == 128, "data_event");
_Static_assert(offsetof(struct bch_ioctl_data_event, p) == 8, "data_event");

/* USAGE */
struct bch_ioctl_dev_usage {
	uint8_t		state;			/*  0 */
	uint8_t		alive;			/*  1 */
	uint8_t		pad[6];			/*  2 */
	uint32_t	dev;			/*  8: huge dev_t, 0 if offline */
	uint32_t	bucket_size;		/* 12: sectors */
	uint64_t	nr_buckets;		/* 16 */
	uint64_t	buckets[BCH_DATA_NR];	/* 24 */
	uint64_t	sectors[BCH_DATA_NR];	/* 72 */
};
_Static_assert(sizeof(struct bch_ioctl_dev_usage) == 120, "dev_usage");
_Static_assert(offsetof(struct bch_ioctl_dev_usage, sectors) == 72, "dev_usage");

struct bch_ioctl_fs_usage {
	uint64_t	capacity;			/*  0: sectors */
	uint64_t	used;				/*  8 */
	uint64_t	online_reserved;		/* 16 */
	uint64_t	persistent_reserved[BCH_REPLICAS_MAX]; /* 24: [replicas-1] */
	uint64_t	sectors[BCH_DATA_NR][BCH_REPLICAS_MAX]; /* 56 */
};
_Static_assert(sizeof(struct bch_ioctl_fs_usage) == 248, "fs_usage");
_Static_assert(offsetof(struct bch_ioctl_fs_usage, sectors) == 56, "fs_usage");

struct bch_ioctl_usage {
	uint16_t	nr_devices;		/*   0: slots provided */
	uint16_t	pad[3];			/*   2 */
	struct bch_ioctl_fs_usage fs;		/*   8 */
	struct bch_ioctl_dev_usage devs[];	/* 256 */
};
_Static_assert(sizeof(struct bch_ioctl_usage) == 256, "usage");
_Static_assert(offsetof(struct bch_ioctl_usage, devs) == 256, "usage");

/* READ_SUPER */
struct bch_ioctl_read_super {
	uint32_t	flags;			/*  0 */
	uint32_t	pad;			/*  4 */
	uint64_t	dev;			/*  8 */
	uint64_t	size;			/* 16: buffer bytes */
	uint64_t	sb;			/* 24: user pointer */
};
_Static_assert(sizeof(struct bch_ioctl_read_super) == 32, "read_super");

/* DISK_GET_IDX: dev = huge-encoded dev_t */
struct bch_ioctl_disk_get_idx {
	uint64_t	dev;
};
_Static_assert(sizeof(struct bch_ioctl_disk_get_idx) == 8, "get_idx");

/* DISK_RESIZE */
struct bch_ioctl_disk_resize {
	uint32_t	flags;			/*  0 */
	uint32_t	pad;			/*  4 */
	uint64_t	dev;			/*  8 */
	uint64_t	nbuckets;		/* 16 */
};
_Static_assert(sizeof(struct bch_ioctl_disk_resize) == 24, "resize");

/* Global control device (compiled out in 2018: ENOTTY) */
struct bch_ioctl_assemble {
	uint32_t	flags;
	uint32_t	nr_devs;
	uint64_t	pad;
	uint64_t	devs[];			/* path pointers */
};
_Static_assert(sizeof(struct bch_ioctl_assemble) == 16, "assemble");

struct bch_ioctl_incremental {
	uint32_t	flags;
	uint64_t	pad;
	uint64_t	dev;
};
_Static_assert(sizeof(struct bch_ioctl_incremental) == 24, "incremental");

/* Linux "huge" dev_t encoding used by USAGE and DISK_GET_IDX */
static inline uint64_t bch_huge_encode_dev(unsigned major, unsigned minor)
{
	return (uint64_t)((minor & 0xffU) | (major << 8) |
			  ((minor & ~0xffU) << 12));
}

/* ---------------------------------------------------------------------- */
/* Numbers                                                                */

#define BCH_IOCTL_QUERY_UUID	_IOR(BCH_IOCTL_TYPE,  1, struct bch_ioctl_query_uuid)
#define BCH_IOCTL_START		_IOW(BCH_IOCTL_TYPE,  2, struct bch_ioctl_start)
#define BCH_IOCTL_STOP		_IO(BCH_IOCTL_TYPE,   3)
#define BCH_IOCTL_DISK_ADD	_IOW(BCH_IOCTL_TYPE,  4, struct bch_ioctl_disk)
#define BCH_IOCTL_DISK_REMOVE	_IOW(BCH_IOCTL_TYPE,  5, struct bch_ioctl_disk)
#define BCH_IOCTL_DISK_ONLINE	_IOW(BCH_IOCTL_TYPE,  6, struct bch_ioctl_disk)
#define BCH_IOCTL_DISK_OFFLINE	_IOW(BCH_IOCTL_TYPE,  7, struct bch_ioctl_disk)
#define BCH_IOCTL_DISK_SET_STATE _IOW(BCH_IOCTL_TYPE, 8, struct bch_ioctl_disk_set_state)
#define BCH_IOCTL_DATA		_IOW(BCH_IOCTL_TYPE, 10, struct bch_ioctl_data)
#define BCH_IOCTL_DATA_V2	_IOW(BCH_IOCTL_TYPE, 10, struct bch_ioctl_data_v2)
#define BCH_IOCTL_USAGE		_IOWR(BCH_IOCTL_TYPE, 11, struct bch_ioctl_usage)
#define BCH_IOCTL_READ_SUPER	_IOW(BCH_IOCTL_TYPE, 12, struct bch_ioctl_read_super)
/* GET_IDX and RESIZE share nr 13; only the size bits tell them apart */
#define BCH_IOCTL_DISK_GET_IDX	_IOW(BCH_IOCTL_TYPE, 13, struct bch_ioctl_disk_get_idx)
#define BCH_IOCTL_DISK_RESIZE	_IOW(BCH_IOCTL_TYPE, 13, struct bch_ioctl_disk_resize)

/* global control node, compiled out */
#define BCH_IOCTL_ASSEMBLE	_IOW(BCH_IOCTL_TYPE, 1, struct bch_ioctl_assemble)
#define BCH_IOCTL_INCREMENTAL	_IOW(BCH_IOCTL_TYPE, 2, struct bch_ioctl_incremental)

/* The full numbers, as the chapter lists them (x86-64, asm-generic) */
_Static_assert(BCH_IOCTL_QUERY_UUID	== 0x8010bc01U, "QUERY_UUID");
_Static_assert(BCH_IOCTL_START		== 0x4008bc02U, "START");
_Static_assert(BCH_IOCTL_STOP		== 0x0000bc03U, "STOP");
_Static_assert(BCH_IOCTL_DISK_ADD	== 0x4010bc04U, "DISK_ADD");
_Static_assert(BCH_IOCTL_DISK_REMOVE	== 0x4010bc05U, "DISK_REMOVE");
_Static_assert(BCH_IOCTL_DISK_ONLINE	== 0x4010bc06U, "DISK_ONLINE");
_Static_assert(BCH_IOCTL_DISK_OFFLINE	== 0x4010bc07U, "DISK_OFFLINE");
_Static_assert(BCH_IOCTL_DISK_SET_STATE	== 0x4010bc08U, "DISK_SET_STATE");
_Static_assert(BCH_IOCTL_DATA		== 0x4038bc0aU, "DATA");
_Static_assert(BCH_IOCTL_DATA_V2	== 0x4070bc0aU, "DATA_V2");
_Static_assert(BCH_IOCTL_USAGE		== 0xc100bc0bU, "USAGE");
_Static_assert(BCH_IOCTL_READ_SUPER	== 0x4020bc0cU, "READ_SUPER");
_Static_assert(BCH_IOCTL_DISK_GET_IDX	== 0x4008bc0dU, "DISK_GET_IDX");
_Static_assert(BCH_IOCTL_DISK_RESIZE	== 0x4018bc0dU, "DISK_RESIZE");
_Static_assert(BCH_IOCTL_ASSEMBLE	== 0x4010bc01U, "ASSEMBLE");
_Static_assert(BCH_IOCTL_INCREMENTAL	== 0x4018bc02U, "INCREMENTAL");

#endif /* BCH_IOCTL_H */
