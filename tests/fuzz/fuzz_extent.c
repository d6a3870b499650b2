// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the extent decoder and the data read of one extent key.
 * Input (little-endian):
 *
 *   0  flags: FUZZ_CSUM_ANY, EXTENT_KEY (the test key is loaded: MACs
 *      verify and data decrypts with it), EXTENT_GENS (bucket gens known,
 *      so pointers can be stale)
 *   1  key type, 2 size (4), 6 inode (8), 14 offset (8),
 *  22  version lo (8), 30 version hi (4)
 *  34  first sector to read (4), sectors to read (2: at most 256)
 *  40  sectors cut off the front of a copy of the value (8)
 *  48  bucket size of devices 0 and 1 (2), 50 bucket gens (16)
 *  66  value u64s (1), the value
 *      then the contents of devices 0 and 1 (one in-memory file, seen by
 *      both; device 2 and up are missing)
 *
 * The value is checked and printed (crc entries, pointers), cut, merged
 * with itself; then the range is read as a file read does it: pick a
 * copy, read the stored region, verify, decrypt, decompress, copy the live
 * part; and the next range, through the same read cache.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

#include "bkey/bkey_types.h"
#include "dev/dev.h"
#include "bkey/extents.h"
#include "core/bch_fs.h"
#include "fs/io_read.h"
#include "util/util.h"

#define EXTENT_KEY	(1U << 1)
#define EXTENT_GENS	(1U << 2)
#define NR_BUCKETS	16
#define READ_MAX	256U

static struct bch_fs fs;
static struct bch_member_dev devs[2];
static struct bch_devio io;
static uint8_t gens[NR_BUCKETS];

static void setup(void)
{
	if (io.path)
		return;
	io.fd = memfd_create("fuzz-extent", 0);
	if (io.fd < 0)
		abort();
	io.path = "memfd";
	io.block_size = 512;
	for (unsigned i = 0; i < 2; i++) {
		devs[i].idx = i;
		devs[i].io = &io;
		devs[i].nbuckets = NR_BUCKETS;
		fs.devs[i] = &devs[i];
	}
	fs.nr_devices = 3;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/*
	 * The read buffer and the cache's buffers live across runs (large
	 * allocations are an mmap and a munmap each: most of a run's time);
	 * the cache is emptied before each run.
	 */
	static struct bch_read_cache rc;
	static uint8_t *buf;
	struct fuzz_in in = { data, size };
	struct printbuf err = PRINTBUF;
	struct bkey_fs_ctx fsctx;
	struct bkey_ref k = { 0 };
	unsigned flags, nr, val_u64s;
	uint64_t s, cut;
	uint8_t val[255 * 8];
	const uint8_t *p;
	size_t len;
	struct json j;

	setup();
	flags = fz_u8(&in);
	fuzz_csum_any(flags & FUZZ_CSUM_ANY);
	k.k.type	= fz_u8(&in);
	k.k.size	= fz_u32(&in);
	k.k.p.inode	= fz_u64(&in);
	k.k.p.offset	= fz_u64(&in);
	k.k.version_lo	= fz_u64(&in);
	k.k.version_hi	= fz_u32(&in);
	s		= fz_u32(&in);
	nr		= fz_u16(&in) % (READ_MAX + 1);
	cut		= fz_u64(&in);
	devs[0].bucket_size = devs[1].bucket_size = fz_u16(&in);
	p = fz_bytes(&in, NR_BUCKETS, &len);
	memset(gens, 0, sizeof(gens));
	memcpy(gens, p, len);
	devs[0].bucket_gens = devs[1].bucket_gens = flags & EXTENT_GENS ? gens : NULL;
	val_u64s = fz_u8(&in) % 251;
	p = fz_bytes(&in, val_u64s * 8, &len);
	memset(val, 0, sizeof(val));
	memcpy(val, p, len);
	k.k.u64s = (uint8_t)(BKEY_U64S_UNPACKED + val_u64s);
	k.v = val;
	k.v_bytes = val_u64s * 8;

	/* the rest is the device (reads are bounded by io.size, not the file's) */
	p = fz_bytes(&in, SIZE_MAX, &len);
	if (len && pwrite(io.fd, p, len, 0) != (ssize_t)len)
		abort();
	io.size = len;
	fs.have_key = flags & EXTENT_KEY;
	fuzz_test_key(&fs.key);

	/* the decoder: checks, printing, cutting, merging */
	bch_fs_key_ctx(&fs, &fsctx);
	bch_bkey_validate_fs(BTREE_ID_EXTENTS, 0, &k, &fsctx, &err);
	extent_invalid(&k, &fsctx);
	extent_entries_to_text(&err, &k, &fsctx);
	json_init(&j, &err, false);
	bch_bkey_to_json(&j, BTREE_ID_EXTENTS, 0, &k, &(struct bkey_print_ctx) { .fs = &fsctx });
	extent_nr_ptrs(&k);
	extent_can_merge(&k, &k, (uint16_t[]) { devs[0].bucket_size, devs[1].bucket_size }, 2);
	{
		uint8_t copy[sizeof(val)];

		memcpy(copy, val, k.v_bytes);
		extent_cut_front(copy, k.v_bytes, cut);
	}
	printbuf_reset(&err);

	/* the read, twice through one cache (the second range follows the first) */
	bch_extent_reads_as_hole(&fs, &k);
	if (!buf)
		buf = xmalloc((size_t)READ_MAX << 9);
	rc.valid = false;
	bch_read_extent(&fs, &k, s, nr, buf, &rc, &err);
	bch_read_extent(&fs, &k, s + nr, nr, buf, &rc, &err);
	printbuf_exit(&err);
	return 0;
}
