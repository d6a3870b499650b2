// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: a whole filesystem, opened read-only and checked as
 * `fsck -f -n` checks it. Input: the image encoding of fuzz.h (devices,
 * their sizes, runs of bytes; everything else zero). The devices are
 * in-memory files (memfd), opened by the library through /proc/self/fd
 * as it opens any image file.
 *
 * bch_fs_open() reads the superblocks (sector 8, else the layout at sector
 * 7 and the backups), the key of an encrypted filesystem (only a key
 * stored in clear can be had here: no keyring entry, no passphrase), the
 * journal and the roots; then every fsck pass runs in FSCK_NO mode, and
 * the filesystem is closed. With flag IMAGE_DEGRADED only the first device
 * is given (the others are missing members).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

#include "format/format.h"
#include "fs/fs.h"
#include "fsck/fsck.h"
#include "fsck/problems.h"
#include "util/util.h"

#define IMAGE_DEGRADED	(1U << 1)

static int fds[FUZZ_IMAGE_MAX_DEVS] = { -1, -1 };
static char paths[FUZZ_IMAGE_MAX_DEVS][32];

static void report(void *priv, enum bch_problem p, const char *msg)
{
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "%s\n", msg);
}

static enum fsck_answer ask(void *priv, enum bch_problem p, const char *msg)
{
	return FSCK_ANSWER_NO;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct bch_fs_opts opts = { .read_only = true, .degraded = true };
	struct printbuf err = PRINTBUF;
	struct fsck_state s;
	struct bch_fs *c = NULL;
	char *devs[FUZZ_IMAGE_MAX_DEVS];
	uint64_t dev_bytes[FUZZ_IMAGE_MAX_DEVS];
	unsigned flags, nr, i;

	flags = fz_u8(&in);
	fuzz_csum_any(flags & FUZZ_CSUM_ANY);
	nr = 1 + (fz_u8(&in) & 1);
	for (i = 0; i < nr; i++) {
		uint32_t sectors = fz_u32(&in);

		if (sectors < FUZZ_IMAGE_MIN_SECTORS)
			sectors = FUZZ_IMAGE_MIN_SECTORS;
		if (sectors > FUZZ_IMAGE_MAX_SECTORS)
			sectors = FUZZ_IMAGE_MAX_SECTORS;
		dev_bytes[i] = (uint64_t)sectors << 9;
		if (fds[i] < 0) {
			fds[i] = memfd_create("fuzz-image", 0);
			if (fds[i] < 0)
				abort();
			snprintf(paths[i], sizeof(paths[i]), "/proc/self/fd/%d", fds[i]);
		}
		/* a fresh, all-zero device */
		if (ftruncate(fds[i], 0) || ftruncate(fds[i], (off_t)dev_bytes[i]))
			abort();
		devs[i] = paths[i];
	}
	while (in.n >= FUZZ_IMAGE_REC_HDR) {
		unsigned dev = fz_u8(&in) & 1;
		uint64_t off = (uint64_t)fz_u32(&in) << 9;
		size_t want = fz_u16(&in), len;
		const uint8_t *p = fz_bytes(&in, want, &len);

		if (dev >= nr || off >= dev_bytes[dev])
			continue;
		if (len > dev_bytes[dev] - off)
			len = (size_t)(dev_bytes[dev] - off);
		if (pwrite(fds[dev], p, len, (off_t)off) != (ssize_t)len)
			abort();
	}

	fsck_state_init(&s, FSCK_NO, &(struct fsck_ops) { report, ask, NULL });
	opts.fsck = &s;
	if (!bch_fs_open(devs, flags & IMAGE_DEGRADED ? 1 : nr, &opts, &c, &err)) {
		bch_fsck_report_open(&s, &err);
		if (BCH_SB_INITIALIZED(c->sb)) {
			s.read_only = true;
			bch_fsck_run(c, &s, NULL, NULL);
		}
		bch_fs_close(c);
	}
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "%s", printbuf_str(&err));
	printbuf_exit(&err);
	return 0;
}
