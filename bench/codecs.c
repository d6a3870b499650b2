// SPDX-License-Identifier: GPL-2.0
/*
 * Throughput of the data-path primitives, one thread (so the figures are
 * "per core"): checksums (crc32c and crc64, hardware and portable paths),
 * ChaCha20,
 * Poly1305, and the LZ4 / gzip / zstd framing of compress.c on text-like
 * data, in 64 KiB pieces (the default encoded_extent_max).
 *
 *   codecs [-m MIB] [-r RUNS] [-f SUBSTRING] [-w]
 *
 * Every measurement processes MIB (default 64, or $BENCH_MB) MiB and the best
 * of RUNS (default 3) runs is printed, in MB/s = 10^6 bytes per second of
 * input (compress) or output (decompress), i.e. of file data, per second of
 * CPU time of the thread (-w: of wall-clock time).
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lz4.h>

#include "codec/checksum.h"
#include "codec/compress.h"
#include "codec/crypto.h"
#include "util/errcode.h"
#include "util/util.h"

#define CHUNK		65536	/* encoded_extent_max = 128 sectors */
#define BLOCK		4096	/* default block size */

static size_t	total_bytes = 64 << 20;
static unsigned	runs = 3;
static const char *filter;

static uint8_t	*text;		/* total_bytes of text-like data */
static uint8_t	*work;		/* total_bytes scratch */
static uint8_t	*stored;	/* compressed extents, CHUNK apart */
static size_t	*stored_len;	/* per chunk: bytes stored (block multiple) */
static uint32_t	sink;		/* keeps results alive */

/*
 * CPU time of this thread: the figures are per core and do not drop when
 * other work shares the machine. (-w: wall clock instead.)
 */
static clockid_t bench_clock = CLOCK_THREAD_CPUTIME_ID;

static double now(void)
{
	struct timespec ts;

	clock_gettime(bench_clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- data -------------------------------------------------------------- */

static uint64_t rng_state = 0x853c49e6748fea9bULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

/*
 * English-like prose: words drawn with a skewed (roughly Zipf) distribution
 * from a vocabulary, capitalised sentences, punctuation, numbers, line
 * breaks at ~72 columns and a blank line between paragraphs. Compresses
 * about like source code or logs (lz4 ~2x, zstd ~3-4x).
 */
static void fill_text(uint8_t *buf, size_t len)
{
	static const char * const words[] = {
		"the", "of", "and", "to", "a", "in", "is", "that", "for", "it",
		"as", "was", "with", "be", "by", "on", "not", "he", "this", "are",
		"or", "his", "from", "at", "which", "but", "have", "an", "had",
		"they", "you", "were", "their", "one", "all", "we", "can", "her",
		"has", "there", "been", "if", "more", "when", "will", "would",
		"who", "so", "no", "data", "file", "system", "block", "device",
		"journal", "extent", "inode", "directory", "bucket", "btree",
		"node", "key", "value", "checksum", "compression", "encryption",
		"superblock", "allocation", "replica", "write", "read", "offset",
		"sector", "version", "format", "filesystem", "metadata", "cache",
		"error", "recovery", "transaction", "update", "index", "pointer",
		"generation", "snapshot", "mount", "option", "kernel", "memory",
		"buffer", "request", "queue", "thread", "lock", "time", "space",
		"number", "between", "through", "during", "without", "against",
		"however", "therefore", "because", "although", "important",
		"different", "following", "possible", "available", "necessary",
	};
	size_t nw = ARRAY_SIZE(words), i = 0, col = 0;
	unsigned in_sentence = 0, in_para = 0;

	while (i < len) {
		uint64_t r = rng();
		char tmp[48];
		const char *w;
		size_t n;

		/* skewed choice: min of two uniform draws favours the front */
		unsigned a = r % nw, b = (r >> 16) % nw;

		if ((r >> 32) % 23 == 0) {
			snprintf(tmp, sizeof(tmp), "%u", (unsigned) (r >> 40) % 65536);
			w = tmp;
		} else {
			w = words[a < b ? a : b];
		}
		if (!in_sentence) {
			snprintf(tmp, sizeof(tmp), "%c%s",
				 w[0] >= 'a' && w[0] <= 'z' ? w[0] - 32 : w[0], w + 1);
			w = tmp;
		}
		n = strlen(w);
		if (col + n > 72) {
			if (i < len)
				buf[i++] = '\n';
			col = 0;
		} else if (col) {
			if (i < len)
				buf[i++] = ' ';
			col++;
		}
		for (size_t j = 0; j < n && i < len; j++, col++)
			buf[i++] = w[j];

		in_sentence++;
		if (in_sentence > 6 && (r >> 48) % 9 == 0) {
			if (i < len)
				buf[i++] = (r >> 56) % 7 ? '.' : ',';
			col++;
			if (buf[i - 1] == '.') {
				in_sentence = 0;
				if (++in_para > 4 && (r >> 60) % 3 == 0) {
					in_para = 0;
					for (unsigned k = 0; k < 2 && i < len; k++)
						buf[i++] = '\n';
					col = 0;
				}
			}
		}
	}
}

/* ---- measurement ------------------------------------------------------- */

typedef int (*bench_fn)(void);

static bool selected(const char *name)
{
	return !filter || strstr(name, filter);
}

static void row(const char *name, double mbs, const char *note)
{
	printf("%-34s %10.1f  %s\n", name, mbs, note ? note : "");
	fflush(stdout);
}

/* Best of @runs; -1 if the function failed. */
static double measure(bench_fn fn)
{
	double best = 0;

	for (unsigned r = 0; r < runs; r++) {
		double t0 = now(), t;

		if (fn())
			return -1;
		t = now() - t0;
		if (t > 0 && total_bytes / t / 1e6 > best)
			best = total_bytes / t / 1e6;
	}
	return best;
}

static void run(const char *name, bench_fn fn, const char *note)
{
	double mbs;

	if (!selected(name))
		return;
	mbs = measure(fn);
	if (mbs < 0)
		printf("%-34s %10s  %s\n", name, "FAILED", note ? note : "");
	else
		row(name, mbs, note);
}

/* ---- checksums --------------------------------------------------------- */

static int b_crc32c_hw(void)
{
	uint32_t c = 0;

	for (size_t off = 0; off < total_bytes; off += CHUNK)
		c ^= crc32c_hw(0, text + off, CHUNK);
	sink ^= c;
	return 0;
}

static int b_crc32c_sw(void)
{
	uint32_t c = 0;

	for (size_t off = 0; off < total_bytes; off += CHUNK)
		c ^= crc32c_sw(0, text + off, CHUNK);
	sink ^= c;
	return 0;
}

static int b_crc64_hw(void)
{
	uint64_t c = 0;

	for (size_t off = 0; off < total_bytes; off += CHUNK)
		c ^= crc64_hw(0, text + off, CHUNK);
	sink ^= c;
	return 0;
}

static int b_crc64_sw(void)
{
	uint64_t c = 0;

	for (size_t off = 0; off < total_bytes; off += CHUNK)
		c ^= crc64_sw(0, text + off, CHUNK);
	sink ^= c;
	return 0;
}

/* ---- encryption -------------------------------------------------------- */

static struct bch_key bench_key;

static int b_chacha20(void)
{
	for (size_t off = 0; off < total_bytes; off += CHUNK) {
		struct bch_nonce n = bch_nonce_extent(off / CHUNK + 1, 0, 0,
						      CHUNK / 512, 0);

		bch_chacha20(&bench_key, n, work + off, CHUNK);
	}
	sink ^= work[total_bytes - 1];
	return 0;
}

static int b_poly1305(void)
{
	uint8_t otk[BCH_POLY1305_KEY_BYTES], tag[BCH_POLY1305_TAG_BYTES];

	memset(otk, 0x5a, sizeof(otk));
	for (size_t off = 0; off < total_bytes; off += CHUNK) {
		otk[0] = off >> 16;
		bch_poly1305(otk, work + off, CHUNK, tag);
		sink ^= tag[0];
	}
	return 0;
}

/* What a data write does per extent: encrypt, then the 80-bit MAC. */
static int b_encrypt_mac(void)
{
	for (size_t off = 0; off < total_bytes; off += CHUNK) {
		struct bch_nonce n = bch_nonce_extent(off / CHUNK + 1, 0, 0,
						      CHUNK / 512, 0);
		struct bch_csum_val v;
		int ret;

		ret = bch_encrypt(BCH_CHECKSUM_CHACHA20_POLY1305_80, &bench_key,
				  n, work + off, CHUNK);
		if (!ret)
			ret = bch_checksum(BCH_CHECKSUM_CHACHA20_POLY1305_80, n,
					   &bench_key, work + off, CHUNK, &v);
		if (ret)
			return ret;
		sink ^= v.lo;
	}
	return 0;
}

/* ---- compression ------------------------------------------------------- */

static unsigned cur_type;
static size_t compressed_total, uncompressed_chunks;

/* The writer path: one extent per 64 KiB piece. */
static int b_compress(void)
{
	compressed_total = 0;
	uncompressed_chunks = 0;
	for (size_t off = 0; off < total_bytes; off += CHUNK) {
		size_t i = off / CHUNK, su, du;
		int ret = bch_compress_extent(cur_type, 0, text + off, CHUNK,
					      stored + off, CHUNK, BLOCK, CHUNK,
					      &su, &du);

		if (ret == -E2BIG || (!ret && su != CHUNK)) {
			/* stored uncompressed (or only partly compressed) */
			stored_len[i] = 0;
			uncompressed_chunks++;
			compressed_total += CHUNK;
			continue;
		}
		if (ret)
			return ret;
		stored_len[i] = du;
		compressed_total += du;
	}
	return 0;
}

/* The read path: decode each stored region (padding included). */
static int b_decompress(void)
{
	for (size_t off = 0; off < total_bytes; off += CHUNK) {
		size_t i = off / CHUNK;
		int ret;

		if (!stored_len[i]) {
			memcpy(work + off, text + off, CHUNK);
			continue;
		}
		ret = bch_decompress(cur_type, stored + off, stored_len[i],
				     work + off, CHUNK);
		if (ret)
			return ret;
	}
	return 0;
}

/* liblz4 alone (no framing checks), to show what compress.c adds. */
static int b_lz4_raw(void)
{
	for (size_t off = 0; off < total_bytes; off += CHUNK) {
		size_t i = off / CHUNK;

		if (!stored_len[i])
			continue;
		if (LZ4_decompress_safe_partial((const char *) stored + off,
						(char *) work + off,
						(int) stored_len[i], CHUNK,
						CHUNK) != CHUNK)
			return -1;
	}
	return 0;
}

static void bench_codec(unsigned type)
{
	const char *name = bch_compression_type_name(type);
	char cname[64], dname[64], note[96];
	double mbs;

	snprintf(cname, sizeof(cname), "%s compress", name);
	snprintf(dname, sizeof(dname), "%s decompress", name);
	if (!selected(cname) && !selected(dname) &&
	    !(type == BCH_COMPRESSION_LZ4 && selected("lz4 decompress (liblz4 only)")))
		return;

	cur_type = type;
	/* The compress pass is always run: decompression needs its output. */
	mbs = measure(b_compress);
	snprintf(note, sizeof(note), "ratio %.2f (4K blocks)%s",
		 (double) total_bytes / compressed_total,
		 uncompressed_chunks ? ", some pieces stored raw" : "");
	if (selected(cname)) {
		if (mbs < 0)
			printf("%-34s %10s\n", cname, "FAILED");
		else
			row(cname, mbs, note);
	}

	run(dname, b_decompress, NULL);
	if (selected(dname) && memcmp(work, text, total_bytes))
		printf("%-34s %10s\n", dname, "MISMATCH");
	if (type == BCH_COMPRESSION_LZ4)
		run("lz4 decompress (liblz4 only)", b_lz4_raw,
		    "for comparison: no offset check");
}

static void usage(void)
{
	fprintf(stderr, "usage: codecs [-m MIB] [-r RUNS] [-f SUBSTRING] [-w]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *env = getenv("BENCH_MB");
	int c;

	if (env && atoi(env) > 0)
		total_bytes = (size_t) atoi(env) << 20;
	while ((c = getopt(argc, argv, "m:r:f:wh")) != -1) {
		switch (c) {
		case 'w':
			bench_clock = CLOCK_MONOTONIC;
			break;
		case 'm':
			if (atoi(optarg) <= 0)
				usage();
			total_bytes = (size_t) atoi(optarg) << 20;
			break;
		case 'r':
			if (atoi(optarg) <= 0)
				usage();
			runs = atoi(optarg);
			break;
		case 'f':
			filter = optarg;
			break;
		default:
			usage();
		}
	}

	if (bch_crypto_init()) {
		fprintf(stderr, "codecs: cannot initialise libsodium\n");
		return 1;
	}
	text = xmalloc(total_bytes);
	work = xmalloc(total_bytes);
	stored = xmalloc(total_bytes);
	stored_len = xcalloc(total_bytes / CHUNK, sizeof(*stored_len));
	fill_text(text, total_bytes);
	memcpy(work, text, total_bytes);
	for (unsigned i = 0; i < sizeof(bench_key); i++)
		((uint8_t *) &bench_key)[i] = i * 7 + 1;

	printf("codecs: one thread, %zu MiB per measurement, best of %u, "
	       "%d KiB pieces, text-like data, %s time\n",
	       total_bytes >> 20, runs, CHUNK / 1024,
	       bench_clock == CLOCK_MONOTONIC ? "wall-clock" : "CPU");
	printf("%-34s %10s  %s\n", "algorithm", "MB/s", "notes");
	printf("%-34s %10s  %s\n", "---------", "----", "-----");

	if (crc32c_hw_available())
		run("crc32c (sse4.2)", b_crc32c_hw,
		    crc32c_fold_available() ? "runs >= 1 KiB folded with vpclmulqdq" : NULL);
	else if (selected("crc32c (sse4.2)"))
		printf("%-34s %10s  %s\n", "crc32c (sse4.2)", "n/a",
		       "no SSE4.2 on this CPU/build");
	run("crc32c (portable)", b_crc32c_sw, "slicing-by-8");
	if (crc64_hw_available())
		run("crc64 (pclmulqdq)", b_crc64_hw, "ECMA-182");
	else if (selected("crc64 (pclmulqdq)"))
		printf("%-34s %10s  %s\n", "crc64 (pclmulqdq)", "n/a",
		       "no PCLMULQDQ on this CPU/build");
	run("crc64 (portable)", b_crc64_sw, "ECMA-182, slicing-by-8");
	run("chacha20", b_chacha20, "libsodium");
	run("poly1305", b_poly1305, "libsodium");
	run("chacha20 + poly1305 mac", b_encrypt_mac,
	    "bch_encrypt + bch_checksum type 3, per extent");

	bench_codec(BCH_COMPRESSION_LZ4);
	bench_codec(BCH_COMPRESSION_GZIP);
	bench_codec(BCH_COMPRESSION_ZSTD);

	bch_compress_thread_exit();
	free(text);
	free(work);
	free(stored);
	free(stored_len);
	return sink == 0x12345678 ? 3 : 0;	/* never; keeps sink used */
}
