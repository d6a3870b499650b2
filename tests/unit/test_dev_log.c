// SPDX-License-Identifier: GPL-2.0
/*
 * The write log of the device layer (dev.c, BCH_WRITE_LOG; format in
 * dev.h): record encoding and the checks of a reader, and the order
 * guarantee under threads: four threads write and flush two devices; every
 * record is intact, each thread's writes appear in its program order, a
 * flush a thread made after a write is logged after that write and before
 * the thread's next write, and replaying the log's writes onto zeroed
 * copies gives the devices' final bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dev/dev.h"
#include "format/format.h"
#include "util/util.h"

static char tmpdir[64], logpath[128];

#define NR_THREADS	4
#define NR_WRITES	150
#define FLUSH_EVERY	7
#define DEV_BYTES	(NR_THREADS * NR_WRITES * 512)

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	uint8_t *buf;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = xmalloc(st.st_size + 1);
	assert_int_equal(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	*len = st.st_size;
	return buf;
}

/* ---- the record format ---- */

static void test_record_roundtrip_and_checks(void **state)
{
	char path[160], why[80];
	struct dev_log_hdr h;
	uint8_t *buf, bad[DEV_LOG_HDR_BYTES];
	size_t len;
	int fd;

	snprintf(path, sizeof(path), "%s/records", tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	assert_true(fd >= 0);
	assert_int_equal(dev_log_append(fd, DEV_LOG_WRITE, 42, 3, 4096, "abcdef", 6), 0);
	assert_int_equal(dev_log_append(fd, DEV_LOG_MARK, 42, DEV_LOG_NO_DEV, 0, "fsync /x", 8), 0);
	close(fd);

	buf = slurp(path, &len);
	assert_int_equal(len, 2 * DEV_LOG_HDR_BYTES + 6 + 8);
	assert_int_equal(dev_log_hdr_decode(buf, &h, why), 0);
	assert_int_equal(h.type, DEV_LOG_WRITE);
	assert_int_equal(h.pid, 42);
	assert_int_equal(h.dev, 3);
	assert_int_equal(h.offset, 4096);
	assert_int_equal(h.len, 6);
	assert_int_equal(h.data_csum, dev_log_csum("abcdef", 6));
	assert_memory_equal(buf + DEV_LOG_HDR_BYTES, "abcdef", 6);
	assert_int_equal(dev_log_hdr_decode(buf + DEV_LOG_HDR_BYTES + 6, &h, why), 0);
	assert_int_equal(h.type, DEV_LOG_MARK);
	assert_int_equal(h.dev, DEV_LOG_NO_DEV);
	assert_memory_equal(buf + 2 * DEV_LOG_HDR_BYTES + 6, "fsync /x", 8);

	/* the standard CRC-32C */
	assert_int_equal(dev_log_csum("123456789", 9), 0xe3069283);

	/* a flipped bit anywhere in the header is caught */
	for (unsigned i = 0; i < DEV_LOG_HDR_BYTES; i++) {
		memcpy(bad, buf, sizeof(bad));
		bad[i] ^= 0x10;
		assert_int_equal(dev_log_hdr_decode(bad, &h, why), -EINVAL);
		assert_true(strlen(why) > 0);
	}
	/* a valid checksum over a bad type or length is caught too */
	memcpy(bad, buf, sizeof(bad));
	put_le64_unaligned(bad + 24, DEV_LOG_MAX_PAYLOAD);
	{
		le32 c = cpu_to_le32(dev_log_csum(bad, 44));

		memcpy(bad + 44, &c, 4);
	}
	assert_int_equal(dev_log_hdr_decode(bad, &h, why), -EINVAL);
	assert_non_null(strstr(why, "too big"));
	memcpy(bad, buf, sizeof(bad));
	bad[4] = 9;
	{
		le32 c = cpu_to_le32(dev_log_csum(bad, 44));

		memcpy(bad + 44, &c, 4);
	}
	assert_int_equal(dev_log_hdr_decode(bad, &h, why), -EINVAL);
	assert_non_null(strstr(why, "type"));
	free(buf);
}

/* ---- threads ---- */

static struct bch_devio *devs[2];

struct thr {
	unsigned	id;
	pthread_t	t;
};

/* write i of thread t: 512 bytes at its own offset, tagged */
static void fill(uint8_t *b, unsigned t, unsigned i)
{
	memset(b, 0, 512);
	snprintf((char *)b, 512, "thread %u write %u", t, i);
	for (unsigned k = 32; k < 512; k++)
		b[k] = (uint8_t)(t * 31 + i * 7 + k);
}

static void *worker(void *arg)
{
	struct thr *th = arg;
	uint8_t b[512];

	for (unsigned i = 0; i < NR_WRITES; i++) {
		struct bch_devio *d = devs[(th->id + i) & 1];

		fill(b, th->id, i);
		assert_int_equal(dev_pwrite(d, b, 512, (uint64_t)(th->id * NR_WRITES + i) * 512), 0);
		if (i % FLUSH_EVERY == FLUSH_EVERY - 1)
			assert_int_equal(dev_flush(d), 0);
	}
	return NULL;
}

static void test_threads(void **state)
{
	char paths[2][160];
	struct thr th[NR_THREADS];
	uint8_t *log, *img[2], *replayed[2];
	size_t len, pos = 0, nr_writes = 0, nr_flushes[2] = { 0 };
	/* per thread: log index of each write, and which slot it went to */
	size_t widx[NR_THREADS][NR_WRITES];
	size_t *flush_idx[2];
	size_t nr_flush_idx[2] = { 0 }, rec = 0;
	uint32_t open_dev[2];
	unsigned nr_open = 0;

	for (unsigned k = 0; k < 2; k++) {
		int fd;

		snprintf(paths[k], sizeof(paths[k]), "%s/dev%u", tmpdir, k);
		fd = open(paths[k], O_RDWR | O_CREAT | O_TRUNC, 0644);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, DEV_BYTES), 0);
		close(fd);
		assert_int_equal(dev_open(paths[k], DEV_RW, &devs[k]), 0);
		flush_idx[k] = xcalloc(NR_THREADS * NR_WRITES, sizeof(size_t));
	}
	assert_true(dev_log_enabled());
	for (unsigned t = 0; t < NR_THREADS; t++) {
		th[t].id = t;
		assert_int_equal(pthread_create(&th[t].t, NULL, worker, &th[t]), 0);
	}
	for (unsigned t = 0; t < NR_THREADS; t++)
		pthread_join(th[t].t, NULL);
	assert_int_equal(dev_log_mark("all done"), 0);
	for (unsigned k = 0; k < 2; k++)
		dev_close(devs[k]);

	memset(widx, 0xff, sizeof(widx));
	for (unsigned k = 0; k < 2; k++)
		replayed[k] = xcalloc(1, DEV_BYTES);
	log = slurp(logpath, &len);
	while (pos < len) {
		struct dev_log_hdr h;
		char why[80];
		const uint8_t *p;
		unsigned slot = 2;

		assert_true(len - pos >= DEV_LOG_HDR_BYTES);
		assert_int_equal(dev_log_hdr_decode(log + pos, &h, why), 0);
		assert_true(h.len <= len - pos - DEV_LOG_HDR_BYTES);
		p = log + pos + DEV_LOG_HDR_BYTES;
		assert_int_equal(dev_log_csum(p, h.len), h.data_csum);
		assert_int_equal(h.pid, (uint32_t)getpid());
		for (unsigned k = 0; k < nr_open; k++)
			if (open_dev[k] == h.dev)
				slot = k;

		switch (h.type) {
		case DEV_LOG_OPEN:
			assert_true(nr_open < 2);
			open_dev[nr_open] = h.dev;
			assert_int_equal(h.offset, DEV_BYTES);
			assert_int_equal(h.len, strlen(paths[nr_open]));
			nr_open++;
			break;
		case DEV_LOG_WRITE: {
			unsigned t, i;

			assert_true(slot < 2);
			assert_int_equal(h.len, 512);
			assert_int_equal(sscanf((const char *)p, "thread %u write %u", &t, &i), 2);
			assert_true(t < NR_THREADS && i < NR_WRITES);
			assert_int_equal(slot, (t + i) & 1);
			assert_int_equal(h.offset, (uint64_t)(t * NR_WRITES + i) * 512);
			assert_int_equal(widx[t][i], (size_t)-1);
			/* program order of the thread */
			if (i)
				assert_true(widx[t][i - 1] < rec);
			widx[t][i] = rec;
			memcpy(replayed[slot] + h.offset, p, 512);
			nr_writes++;
			break;
		}
		case DEV_LOG_FLUSH:
			assert_true(slot < 2);
			nr_flushes[slot]++;
			flush_idx[slot][nr_flush_idx[slot]++] = rec;
			break;
		case DEV_LOG_MARK:
			assert_int_equal(h.len, 8);
			assert_memory_equal(p, "all done", 8);
			break;
		case DEV_LOG_CLOSE:
			break;
		}
		pos += DEV_LOG_HDR_BYTES + h.len;
		rec++;
	}
	assert_int_equal(pos, len);
	assert_int_equal(nr_writes, NR_THREADS * NR_WRITES);
	assert_int_equal(nr_flushes[0] + nr_flushes[1], NR_THREADS * (NR_WRITES / FLUSH_EVERY));

	/* each flush of a thread: logged after its write, before its next write */
	for (unsigned t = 0; t < NR_THREADS; t++)
		for (unsigned i = FLUSH_EVERY - 1; i + 1 < NR_WRITES; i += FLUSH_EVERY) {
			unsigned slot = (t + i) & 1;
			bool found = false;

			for (size_t f = 0; f < nr_flush_idx[slot] && !found; f++)
				found = flush_idx[slot][f] > widx[t][i] && flush_idx[slot][f] < widx[t][i + 1];
			assert_true(found);
		}

	/* the log's writes are the devices' bytes */
	for (unsigned k = 0; k < 2; k++) {
		size_t n;

		img[k] = slurp(paths[k], &n);
		assert_int_equal(n, DEV_BYTES);
		assert_memory_equal(img[k], replayed[k], DEV_BYTES);
		free(img[k]);
		free(replayed[k]);
		free(flush_idx[k]);
	}
	free(log);
}

/* A failed write (fault injection) is not logged. */
static void test_fault_not_logged(void **state)
{
	char path[160];
	struct bch_devio *d;
	uint8_t b[512] = { 1 }, *log;
	size_t before, after;
	int fd;

	snprintf(path, sizeof(path), "%s/fault", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	close(fd);
	assert_int_equal(dev_open(path, DEV_RW, &d), 0);
	free(slurp(logpath, &before));
	dev_fault_after(1);
	assert_int_equal(dev_pwrite(d, b, 512, 0), 0);
	assert_int_equal(dev_pwrite(d, b, 512, 512), -EIO);
	dev_fault_after(-1);
	log = slurp(logpath, &after);
	assert_int_equal(after - before, DEV_LOG_HDR_BYTES + 512);
	free(log);
	dev_close(d);
}

static int setup(void **state)
{
	strcpy(tmpdir, "/tmp/test_dev_log.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(logpath, sizeof(logpath), "%s/w.log", tmpdir);
	/* read once, at the first dev_open() of the process */
	setenv("BCH_WRITE_LOG", logpath, 1);
	unsetenv("BCH_TEST_SKIP_FLUSH");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_roundtrip_and_checks),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_fault_not_logged),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
