/*
 * Unit tests for the control interface:
 *   - every ioctl structure byte for byte against the layouts of doc/ioctl.md
 *     §4 (the seed's header; the 2018 tools' 112-byte DATA too);
 *   - the request decoder of the mount's control socket (ctl_proto.c)
 *     with well-formed requests, every kind of malformed one, and a
 *     random mutation run (it must never crash and only accept requests
 *     that re-check as well-formed).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/ctl_proto.h"
#include "format/format.h"
#include "format/ioctl.h"
#include "util/util.h"

/* ---- layouts (doc/ioctl.md §4) ---------------------------------------------- */

#define OFF(type, field, off) _Static_assert(offsetof(type, field) == (off), #type "." #field)

OFF(struct bpos, snapshot, 0);
OFF(struct bpos, offset, 4);
OFF(struct bpos, inode, 12);
_Static_assert(sizeof(struct bpos) == 20, "bpos");
OFF(struct bch_ioctl_disk, flags, 0);
OFF(struct bch_ioctl_disk, pad, 4);
OFF(struct bch_ioctl_disk, dev, 8);
OFF(struct bch_ioctl_disk_set_state, flags, 0);
OFF(struct bch_ioctl_disk_set_state, new_state, 4);
OFF(struct bch_ioctl_disk_set_state, pad, 5);
OFF(struct bch_ioctl_disk_set_state, dev, 8);
OFF(struct bch_ioctl_data, op, 0);
OFF(struct bch_ioctl_data, flags, 4);
OFF(struct bch_ioctl_data, start, 8);
OFF(struct bch_ioctl_data, end, 28);
OFF(struct bch_ioctl_data, migrate.dev, 48);
OFF(struct bch_ioctl_data, migrate.pad, 52);
OFF(struct bch_ioctl_data_v2, start, 8);
OFF(struct bch_ioctl_data_v2, end, 28);
OFF(struct bch_ioctl_data_v2, migrate.pad, 52);
OFF(struct bch_ioctl_data_v2, pad, 48);
OFF(struct bch_ioctl_data_progress, data_type, 0);
OFF(struct bch_ioctl_data_progress, btree_id, 1);
OFF(struct bch_ioctl_data_progress, pad, 2);
OFF(struct bch_ioctl_data_progress, pos, 4);
OFF(struct bch_ioctl_data_progress, sectors_done, 24);
OFF(struct bch_ioctl_data_progress, sectors_total, 32);
OFF(struct bch_ioctl_data_event, type, 0);
OFF(struct bch_ioctl_data_event, pad, 1);
OFF(struct bch_ioctl_data_event, p, 8);
OFF(struct bch_ioctl_dev_usage, state, 0);
OFF(struct bch_ioctl_dev_usage, alive, 1);
OFF(struct bch_ioctl_dev_usage, pad, 2);
OFF(struct bch_ioctl_dev_usage, dev, 8);
OFF(struct bch_ioctl_dev_usage, bucket_size, 12);
OFF(struct bch_ioctl_dev_usage, nr_buckets, 16);
OFF(struct bch_ioctl_dev_usage, buckets, 24);
OFF(struct bch_ioctl_dev_usage, sectors, 72);
OFF(struct bch_ioctl_fs_usage, capacity, 0);
OFF(struct bch_ioctl_fs_usage, used, 8);
OFF(struct bch_ioctl_fs_usage, online_reserved, 16);
OFF(struct bch_ioctl_fs_usage, persistent_reserved, 24);
OFF(struct bch_ioctl_fs_usage, sectors, 56);
OFF(struct bch_ioctl_usage, nr_devices, 0);
OFF(struct bch_ioctl_usage, pad, 2);
OFF(struct bch_ioctl_usage, fs, 8);
OFF(struct bch_ioctl_usage, devs, 256);
OFF(struct bch_ioctl_read_super, flags, 0);
OFF(struct bch_ioctl_read_super, pad, 4);
OFF(struct bch_ioctl_read_super, dev, 8);
OFF(struct bch_ioctl_read_super, size, 16);
OFF(struct bch_ioctl_read_super, sb, 24);
OFF(struct bch_ioctl_disk_get_idx, dev, 0);
OFF(struct bch_ioctl_disk_resize, flags, 0);
OFF(struct bch_ioctl_disk_resize, pad, 4);
OFF(struct bch_ioctl_disk_resize, dev, 8);
OFF(struct bch_ioctl_disk_resize, nbuckets, 16);
_Static_assert(_Alignof(struct bch_ioctl_data) == 8, "data alignment");
_Static_assert(_Alignof(struct bch_ioctl_data_progress) == 8, "progress alignment");

static void expect_bytes(const void *p, size_t len, const char *hex)
{
	uint8_t want[512];
	size_t n = hex2bin(hex, want, sizeof(want));

	assert_int_equal(n, len);
	if (memcmp(p, want, len)) {
		for (size_t i = 0; i < len; i++)
			fprintf(stderr, "%02x%s", ((const uint8_t *)p)[i], i % 16 == 15 ? "\n" : " ");
		fprintf(stderr, "\n");
		fail_msg("bytes differ");
	}
}

static void test_layout_disk(void **state)
{
	struct bch_ioctl_disk d = { .flags = 0x1d, .dev = 0x0102030405060708ULL };
	struct bch_ioctl_disk_set_state s = {
		.flags = 0x14, .new_state = BCH_MEMBER_STATE_FAILED, .dev = 3,
	};
	struct bch_ioctl_disk_resize r = { .flags = 0x10, .dev = 2, .nbuckets = 0x4000 };
	struct bch_ioctl_disk_get_idx g = { .dev = bch_huge_encode_dev(8, 17) };
	struct bch_ioctl_read_super rs = { .flags = 0x30, .dev = 1, .size = 4096, .sb = 0xabcdef };
	(void)state;

	expect_bytes(&d, sizeof(d), "1d000000 00000000 0807060504030201");
	expect_bytes(&s, sizeof(s), "14000000 02 000000 0300000000000000");
	expect_bytes(&r, sizeof(r), "10000000 00000000 0200000000000000 0040000000000000");
	expect_bytes(&g, sizeof(g), "1108000000000000");
	expect_bytes(&rs, sizeof(rs), "30000000 00000000 0100000000000000 0010000000000000"
				      "efcdab0000000000");
}

static void test_layout_data(void **state)
{
	struct bch_ioctl_data d;
	struct bch_ioctl_data_v2 d2;
	struct bch_ioctl_data_event ev;
	(void)state;

	memset(&d, 0, sizeof(d));
	d.op = BCH_DATA_OP_MIGRATE;
	d.start = (struct bpos) { .snapshot = cpu_to_le32(1), .offset = cpu_to_le64(2),
				  .inode = cpu_to_le64(3) };
	d.end = POS_MAX;
	d.migrate.dev = 5;
	expect_bytes(&d, sizeof(d),
		     "02000000 00000000"
		     "01000000 0200000000000000 0300000000000000"
		     "00000000 ffffffffffffffff ffffffffffffffff"
		     "05000000 00000000");
	/* the 2018 tools' layout: the same 56 bytes, then 56 of padding */
	memset(&d2, 0, sizeof(d2));
	memcpy(&d2, &d, sizeof(d));
	assert_int_equal(sizeof(d2), 112);
	assert_memory_equal(&d2, &d, sizeof(d));
	assert_int_equal(BCH_IOCTL_DATA, 0x4038bc0a);
	assert_int_equal(BCH_IOCTL_DATA_V2, 0x4070bc0a);

	memset(&ev, 0, sizeof(ev));
	ev.type = BCH_DATA_EVENT_PROGRESS;
	ev.p.data_type = BCH_DATA_USER;
	ev.p.btree_id = BTREE_ID_EXTENTS;
	ev.p.pos = (struct bpos) { .offset = cpu_to_le64(128), .inode = cpu_to_le64(4096) };
	ev.p.sectors_done = 10;
	ev.p.sectors_total = 20;
	expect_bytes(&ev, 48,
		     "00 00000000000000"
		     "04 00 0000 00000000 8000000000000000 0010000000000000"
		     "0a00000000000000 1400000000000000");
}

static void test_layout_usage(void **state)
{
	struct {
		struct bch_ioctl_usage u;
		struct bch_ioctl_dev_usage d[1];
	} b;
	uint8_t *p = (uint8_t *)&b;
	(void)state;

	memset(&b, 0, sizeof(b));
	b.u.nr_devices = 1;
	b.u.fs.capacity = 0x11;
	b.u.fs.used = 0x22;
	b.u.fs.online_reserved = 0x33;
	b.u.fs.persistent_reserved[3] = 0x44;
	b.u.fs.sectors[BCH_DATA_USER][1] = 0x55;	/* data, 2 replicas */
	b.d[0].state = 2;
	b.d[0].alive = 1;
	b.d[0].dev = 0x801;
	b.d[0].bucket_size = 256;
	b.d[0].nr_buckets = 0x66;
	b.d[0].buckets[BCH_DATA_JOURNAL] = 0x77;
	b.d[0].sectors[BCH_DATA_CACHED] = 0x88;
	assert_int_equal(p[0], 1);
	assert_int_equal(p[8], 0x11);
	assert_int_equal(p[16], 0x22);
	assert_int_equal(p[24], 0x33);
	assert_int_equal(p[8 + 24 + 3 * 8], 0x44);
	/* sectors[4][1]: 8 + 56 + (4 * 4 + 1) * 8 */
	assert_int_equal(p[8 + 56 + 17 * 8], 0x55);
	assert_int_equal(p[256], 2);
	assert_int_equal(p[257], 1);
	assert_int_equal(p[256 + 8], 0x01);
	assert_int_equal(p[256 + 9], 0x08);
	assert_int_equal(p[256 + 13], 0x01);	/* 256 = 0x100 */
	assert_int_equal(p[256 + 16], 0x66);
	assert_int_equal(p[256 + 24 + 2 * 8], 0x77);
	assert_int_equal(p[256 + 72 + 5 * 8], 0x88);
	assert_int_equal(sizeof(b), 376);
}

static void test_numbers(void **state)
{
	(void)state;
	assert_int_equal(BCH_IOCTL_QUERY_UUID, 0x8010bc01);
	assert_int_equal(BCH_IOCTL_DISK_ADD, 0x4010bc04);
	assert_int_equal(BCH_IOCTL_DISK_REMOVE, 0x4010bc05);
	assert_int_equal(BCH_IOCTL_DISK_ONLINE, 0x4010bc06);
	assert_int_equal(BCH_IOCTL_DISK_OFFLINE, 0x4010bc07);
	assert_int_equal(BCH_IOCTL_DISK_SET_STATE, 0x4010bc08);
	assert_int_equal(BCH_IOCTL_USAGE, 0xc100bc0b);
	assert_int_equal(BCH_IOCTL_READ_SUPER, 0x4020bc0c);
	assert_int_equal(BCH_IOCTL_DISK_GET_IDX, 0x4008bc0d);
	assert_int_equal(BCH_IOCTL_DISK_RESIZE, 0x4018bc0d);
	/* the same (type, nr): only the size bits tell them apart */
	assert_int_equal(bch_ctl_arg_size(BCH_IOCTL_DISK_GET_IDX), 8);
	assert_int_equal(bch_ctl_arg_size(BCH_IOCTL_DISK_RESIZE), 24);
	assert_int_equal(bch_ctl_arg_size(BCH_IOCTL_DATA), 56);
	assert_int_equal(bch_ctl_arg_size(BCH_IOCTL_DATA_V2), 112);
	/* compiled out in 2018: not served */
	assert_int_equal(bch_ctl_arg_size(BCH_IOCTL_START), 0);
	assert_int_equal(bch_ctl_arg_size(BCH_IOCTL_STOP), 0);
	assert_int_equal(bch_ctl_arg_size(BCH_IOCTL_ASSEMBLE), 0);
	assert_int_equal(bch_ctl_arg_size(BCH_IOCTL_INCREMENTAL), 0);
}

/* ---- the request decoder -------------------------------------------------- */

static size_t mkreq(uint8_t *buf, uint32_t nr, const void *arg, uint32_t arg_bytes,
		    const char *path)
{
	struct bch_ctl_req_hdr h = {
		.magic = BCH_CTL_REQ_MAGIC, .nr = nr, .arg_bytes = arg_bytes,
		.str_bytes = path ? (uint32_t)strlen(path) : 0,
	};

	memcpy(buf, &h, sizeof(h));
	if (arg_bytes)
		memcpy(buf + sizeof(h), arg, arg_bytes);
	if (path)
		memcpy(buf + sizeof(h) + arg_bytes, path, h.str_bytes);
	return sizeof(h) + arg_bytes + h.str_bytes;
}

static int decode(const void *buf, size_t len, struct bch_ctl_req *req)
{
	struct printbuf why = PRINTBUF;
	int ret = bch_ctl_req_decode(buf, len, req, &why);

	/* every refusal says why */
	if (ret)
		assert_true(why.pos > 0);
	printbuf_exit(&why);
	return ret;
}

static void test_decode_ok(void **state)
{
	static uint8_t buf[8192];
	struct bch_ctl_req *req = malloc(sizeof(*req));
	struct bch_ioctl_disk d = { .flags = 0 };
	struct bch_ioctl_data_v2 d2 = { .op = 1 };
	struct {
		struct bch_ioctl_usage u;
		struct bch_ioctl_dev_usage devs[3];
	} u = { .u.nr_devices = 3 };
	size_t n;
	(void)state;

	n = mkreq(buf, BCH_IOCTL_DISK_ADD, &d, sizeof(d), "/dev/sdz");
	assert_int_equal(decode(buf, n, req), 0);
	assert_int_equal(req->nr, BCH_IOCTL_DISK_ADD);
	assert_int_equal(req->arg_bytes, 16);
	assert_true(req->has_path);
	assert_string_equal(req->path, "/dev/sdz");

	n = mkreq(buf, BCH_IOCTL_DATA_V2, &d2, sizeof(d2), NULL);
	assert_int_equal(decode(buf, n, req), 0);
	assert_false(req->has_path);
	assert_string_equal(req->path, "");

	n = mkreq(buf, BCH_IOCTL_USAGE, &u, sizeof(u), NULL);
	assert_int_equal(decode(buf, n, req), 0);
	assert_int_equal(req->arg_bytes, 256 + 3 * 120);

	n = mkreq(buf, BCH_CTL_DEV_NAMES, NULL, 0, NULL);
	assert_int_equal(decode(buf, n, req), 0);
	free(req);
}

static void test_decode_malformed(void **state)
{
	static uint8_t buf[BCH_CTL_MSG_MAX + 64];
	struct bch_ctl_req *req = malloc(sizeof(*req));
	struct bch_ctl_req_hdr h;
	struct bch_ioctl_disk d = { 0 };
	struct bch_ioctl_usage u = { .nr_devices = 2 };
	char longpath[BCH_CTL_PATH_MAX + 2];
	size_t n;
	(void)state;

	/* shorter than a header, empty */
	assert_int_equal(decode(buf, 0, req), -EPROTO);
	n = mkreq(buf, BCH_IOCTL_DISK_ADD, &d, sizeof(d), NULL);
	assert_int_equal(decode(buf, 15, req), -EPROTO);
	/* bad magic */
	buf[0] ^= 1;
	assert_int_equal(decode(buf, n, req), -EPROTO);
	buf[0] ^= 1;
	/* lengths that do not add up, either way, and ones that overflow */
	assert_int_equal(decode(buf, n - 1, req), -EPROTO);
	assert_int_equal(decode(buf, n + 1, req), -EPROTO);
	memcpy(&h, buf, sizeof(h));
	h.arg_bytes = UINT32_MAX;
	h.str_bytes = (uint32_t)(n - sizeof(h) + 1);	/* wraps to n in 32 bits */
	memcpy(buf, &h, sizeof(h));
	assert_int_equal(decode(buf, n, req), -EPROTO);
	/* unknown numbers, and the compiled-out ones */
	n = mkreq(buf, 0x4010bc63, &d, sizeof(d), NULL);
	assert_int_equal(decode(buf, n, req), -ENOTTY);
	n = mkreq(buf, BCH_IOCTL_START, &d, 8, NULL);
	assert_int_equal(decode(buf, n, req), -ENOTTY);
	n = mkreq(buf, BCH_IOCTL_ASSEMBLE, &d, sizeof(d), NULL);
	assert_int_equal(decode(buf, n, req), -ENOTTY);
	/* an argument of the wrong size */
	n = mkreq(buf, BCH_IOCTL_DISK_ADD, &d, 8, NULL);
	assert_int_equal(decode(buf, n, req), -EINVAL);
	n = mkreq(buf, BCH_IOCTL_DATA, &d, 16, NULL);
	assert_int_equal(decode(buf, n, req), -EINVAL);
	/* USAGE: slots that the argument does not carry; too many slots */
	n = mkreq(buf, BCH_IOCTL_USAGE, &u, sizeof(u), NULL);
	assert_int_equal(decode(buf, n, req), -EINVAL);
	u.nr_devices = 0xffff;
	n = mkreq(buf, BCH_IOCTL_USAGE, &u, sizeof(u), NULL);
	assert_int_equal(decode(buf, n, req), -EINVAL);
	/* USAGE shorter than its header */
	n = mkreq(buf, BCH_IOCTL_USAGE, &u, 100, NULL);
	assert_int_equal(decode(buf, n, req), -EINVAL);
	/* a path with a NUL in it, one too long */
	n = mkreq(buf, BCH_IOCTL_DISK_ADD, &d, sizeof(d), "/dev/sdaXb");
	buf[n - 2] = 0;
	assert_int_equal(decode(buf, n, req), -EPROTO);
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = 0;
	n = mkreq(buf, BCH_IOCTL_DISK_ADD, &d, sizeof(d), longpath);
	assert_int_equal(decode(buf, n, req), -ENAMETOOLONG);
	free(req);
}

/*
 * Random requests and mutations of valid ones: the decoder never reads
 * outside the buffer (ASan), never crashes, and what it accepts is
 * consistent with the header.
 */
static void test_decode_fuzz(void **state)
{
	static uint8_t buf[4096], seed[4096];
	struct bch_ctl_req *req = malloc(sizeof(*req));
	struct bch_ioctl_disk_set_state s = { .new_state = 1 };
	struct {
		struct bch_ioctl_usage u;
		struct bch_ioctl_dev_usage devs[2];
	} u = { .u.nr_devices = 2 };
	unsigned accepted = 0, iters = getenv("TEST_LONG") ? 2000000 : 200000;
	size_t seeds[3];
	(void)state;

	srandom(12);
	seeds[0] = mkreq(seed, BCH_IOCTL_DISK_SET_STATE, &s, sizeof(s), "/dev/x");
	for (unsigned i = 0; i < iters; i++) {
		size_t n;

		if (i % 3 == 0) {
			n = (size_t)random() % 64;
			for (size_t j = 0; j < n; j++)
				buf[j] = (uint8_t)random();
			if (n >= 4 && random() % 2)
				memcpy(buf, &(uint32_t){ BCH_CTL_REQ_MAGIC }, 4);
		} else {
			unsigned which = (unsigned)random() % 2;

			n = which ? mkreq(buf, BCH_IOCTL_USAGE, &u, sizeof(u), NULL) : seeds[0];
			if (!which)
				memcpy(buf, seed, n);
			for (unsigned m = 0; m < 1 + (unsigned)random() % 4; m++)
				buf[(size_t)random() % n] ^= (uint8_t)(1U << (random() % 8));
			if (random() % 4 == 0)
				n = (size_t)random() % (n + 8);
		}
		if (!decode(buf, n, req)) {
			struct bch_ctl_req_hdr h;

			memcpy(&h, buf, sizeof(h));
			assert_int_equal(sizeof(h) + h.arg_bytes + h.str_bytes, n);
			assert_int_equal(req->arg_bytes, h.arg_bytes);
			assert_true(bch_ctl_known(req->nr));
			assert_int_equal(strlen(req->path), h.str_bytes);
			accepted++;
		}
	}
	(void)seeds;
	assert_true(accepted > 0);
	free(req);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_disk),
		cmocka_unit_test(test_layout_data),
		cmocka_unit_test(test_layout_usage),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_decode_ok),
		cmocka_unit_test(test_decode_malformed),
		cmocka_unit_test(test_decode_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
