// SPDX-License-Identifier: GPL-2.0
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

static void oom(void)
{
	fputs("bcachefs: out of memory\n", stderr);
	exit(8);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t nmemb, size_t n)
{
	void *p = calloc(nmemb ? nmemb : 1, n ? n : 1);

	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		oom();
	return p;
}

/* ---- printbuf ---- */

static void printbuf_reserve(struct printbuf *out, size_t extra)
{
	size_t need = out->pos + extra + 1;

	if (need <= out->size)
		return;
	size_t n = out->size ? out->size : 64;
	while (n < need)
		n *= 2;
	out->buf = xrealloc(out->buf, n);
	out->size = n;
}

void pr_vbuf(struct printbuf *out, const char *fmt, va_list args)
{
	va_list a2;
	int len;

	/* print into the room there is; only when it did not fit, grow and print again */
	printbuf_reserve(out, 64);
	va_copy(a2, args);
	len = vsnprintf(out->buf + out->pos, out->size - out->pos, fmt, a2);
	va_end(a2);
	if (len < 0) {
		out->buf[out->pos] = 0;
		return;
	}
	if ((size_t)len >= out->size - out->pos) {
		printbuf_reserve(out, len);
		vsnprintf(out->buf + out->pos, out->size - out->pos, fmt, args);
	}
	out->pos += len;
}

void pr_buf(struct printbuf *out, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	pr_vbuf(out, fmt, args);
	va_end(args);
}

void pr_bytes(struct printbuf *out, const void *p, size_t len)
{
	printbuf_reserve(out, len);
	memcpy(out->buf + out->pos, p, len);
	out->pos += len;
	out->buf[out->pos] = 0;
}

void pr_str(struct printbuf *out, const char *s)
{
	pr_bytes(out, s, strlen(s));
}

void pr_char(struct printbuf *out, char c)
{
	pr_bytes(out, &c, 1);
}

void pr_u64(struct printbuf *out, uint64_t v)
{
	char tmp[20], *p = tmp + sizeof(tmp);

	do {
		*--p = '0' + v % 10;
		v /= 10;
	} while (v);
	pr_bytes(out, p, tmp + sizeof(tmp) - p);
}

void pr_uuid(struct printbuf *out, const uint8_t u[16])
{
	pr_buf(out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
	       u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
	       u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

void pr_human_sectors(struct printbuf *out, int64_t sectors)
{
	static const char units[] = "KMGTPE";
	uint64_t b;
	unsigned e = 0;

	if (sectors < 0) {
		pr_char(out, '-');
		b = (uint64_t)-(sectors + 1) + 1;
	} else {
		b = sectors;
	}
	/* sectors may be up to 2^63: bytes would overflow u64, so work in sectors */
	if (b < 2) {
		pr_buf(out, "%llu", (unsigned long long)b * 512);
		return;
	}
	/* largest e with 1024^e <= b*512 */
	long double bytes = (long double)b * 512;
	long double div = 1;
	while (e < 6 && bytes >= div * 1024) {
		div *= 1024;
		e++;
	}
	if (!e)
		pr_buf(out, "%llu", (unsigned long long)(b * 512));
	else
		pr_buf(out, "%.1f%c", (double)(bytes / div), units[e - 1]);
}

const char *printbuf_str(struct printbuf *out)
{
	return out->buf ? out->buf : "";
}

void printbuf_reset(struct printbuf *out)
{
	out->pos = 0;
	if (out->buf)
		out->buf[0] = 0;
}

void printbuf_exit(struct printbuf *out)
{
	free(out->buf);
	*out = PRINTBUF;
}

/* ---- JSON ---- */

void json_init(struct json *j, struct printbuf *out, bool pretty)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
	j->pretty = pretty;
}

void pr_json_string(struct printbuf *out, const char *s, size_t len)
{
	pr_char(out, '"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];

		switch (c) {
		case '"':  pr_str(out, "\\\""); break;
		case '\\': pr_str(out, "\\\\"); break;
		case '\n': pr_str(out, "\\n"); break;
		case '\t': pr_str(out, "\\t"); break;
		case '\r': pr_str(out, "\\r"); break;
		default:
			if (c < 0x20 || c >= 0x7f)
				pr_buf(out, "\\u%04x", c);
			else
				pr_char(out, c);
		}
	}
	pr_char(out, '"');
}

static void json_indent(struct json *j)
{
	if (!j->pretty)
		return;
	pr_char(j->out, '\n');
	for (unsigned i = 0; i < j->depth; i++)
		pr_str(j->out, "  ");
}

static void json_key(struct json *j, const char *key)
{
	if (j->depth < ARRAY_SIZE(j->need_comma)) {
		if (j->need_comma[j->depth])
			pr_char(j->out, ',');
		j->need_comma[j->depth] = true;
	}
	if (j->depth)
		json_indent(j);
	if (key) {
		pr_json_string(j->out, key, strlen(key));
		pr_str(j->out, j->pretty ? ": " : ":");
	}
}

static void json_open(struct json *j, const char *key, char c)
{
	json_key(j, key);
	pr_char(j->out, c);
	j->depth++;
	if (j->depth < ARRAY_SIZE(j->need_comma))
		j->need_comma[j->depth] = false;
}

static void json_close(struct json *j, char c)
{
	bool had = j->depth < ARRAY_SIZE(j->need_comma) && j->need_comma[j->depth];

	j->depth--;
	if (had)
		json_indent(j);
	pr_char(j->out, c);
	if (!j->depth && j->pretty)
		pr_char(j->out, '\n');
}

void json_obj_begin(struct json *j, const char *key) { json_open(j, key, '{'); }
void json_obj_end(struct json *j) { json_close(j, '}'); }
void json_arr_begin(struct json *j, const char *key) { json_open(j, key, '['); }
void json_arr_end(struct json *j) { json_close(j, ']'); }

void json_strn(struct json *j, const char *key, const char *val, size_t len)
{
	json_key(j, key);
	pr_json_string(j->out, val, len);
}

void json_str(struct json *j, const char *key, const char *val)
{
	json_strn(j, key, val, strlen(val));
}

void json_u64(struct json *j, const char *key, uint64_t val)
{
	json_key(j, key);
	pr_buf(j->out, "%llu", (unsigned long long)val);
}

void json_bool(struct json *j, const char *key, bool val)
{
	json_key(j, key);
	pr_str(j->out, val ? "true" : "false");
}

void json_uuid(struct json *j, const char *key, const uint8_t uuid[16])
{
	json_key(j, key);
	pr_char(j->out, '"');
	pr_uuid(j->out, uuid);
	pr_char(j->out, '"');
}

/* ---- sizes ---- */

int parse_u64(const char *s, uint64_t *v)
{
	uint64_t r = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		unsigned d = *s - '0';
		if (r > (UINT64_MAX - d) / 10)
			return -ERANGE;
		r = r * 10 + d;
	}
	*v = r;
	return 0;
}

int parse_size(const char *s, uint64_t *bytes)
{
	static const char units[] = "kmgtpezy";
	uint64_t r = 0;
	const char *p = s;
	bool digits = false;

	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = *p - '0';
		if (r > (UINT64_MAX - d) / 10)
			return -ERANGE;
		r = r * 10 + d;
		digits = true;
	}
	if (*p && *p != '\n') {
		const char *u = strchr(units, tolower((unsigned char)*p));
		if (!u || !digits)
			return -EINVAL;
		unsigned steps = u - units + 1;
		if (steps > 7)
			steps = 7;
		while (steps--) {
			if (r >= (1ULL << 54))
				return -ERANGE;
			r <<= 10;
		}
		p++;
	}
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*bytes = r;
	return 0;
}

bool uuid_is_zero(const uint8_t uuid[16])
{
	for (unsigned i = 0; i < 16; i++)
		if (uuid[i])
			return false;
	return true;
}

void bch_heap_tune(void)
{
	const uintptr_t huge = 2U << 20;
	void *volatile p;	/* (a malloc freed unused would be left out) */
	uintptr_t lo, hi;

	/* buffers and key arrays on the heap, reused once freed, not one
	 * mapping each (32 MiB: the most glibc takes) */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
	/* grow the heap by 256 MiB now (address space: memory only as it is
	 * touched), and let the kernel back that with huge pages */
	mallopt(M_TOP_PAD, 256 << 20);
	lo = (uintptr_t)sbrk(0);
	p = malloc(1 << 20);
	free(p);
	hi = (uintptr_t)sbrk(0);
	mallopt(M_TOP_PAD, 128 << 10);		/* glibc's default again */
	if (lo == (uintptr_t)-1 || hi == (uintptr_t)-1)
		return;				/* no brk heap: nothing to advise */
	lo = (lo + huge - 1) & ~(huge - 1);
	hi &= ~(huge - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

/*
 * The mapping's length is kept in its first page, before the array (in
 * the last 8 bytes before it; 0 there: an array on the heap).
 */
#define BIG_HDR		4096U
/*
 * Up to this size on the heap: a mapping and its unmapping cost more
 * than the few pages they would save (fsck of a 1 GiB filesystem: two
 * 8 KiB bucket arrays, a page of header each).
 */
#define BIG_HEAP_MAX	(256U << 10)
#define BIG_HEAP_HDR	16U

void *bch_big_zalloc_try(size_t bytes)
{
	static const size_t heap = 0;
	size_t len;
	uint8_t *p;

	if (bytes <= BIG_HEAP_MAX) {
		p = calloc(1, bytes + BIG_HEAP_HDR);
		if (!p)
			return NULL;
		memcpy(p + BIG_HEAP_HDR - sizeof(heap), &heap, sizeof(heap));
		return p + BIG_HEAP_HDR;
	}
	if (bytes > SIZE_MAX - 2 * BIG_HDR)
		return NULL;
	len = (bytes + 2 * BIG_HDR - 1) & ~(size_t)(BIG_HDR - 1);
	/*
	 * MAP_NORESERVE: only what is written takes memory, so a machine
	 * with little of it (an initramfs) is not refused an array that is
	 * mostly never touched
	 */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	memcpy(p + BIG_HDR - sizeof(len), &len, sizeof(len));
	return p + BIG_HDR;
}

void *bch_big_zalloc(size_t bytes)
{
	void *p = bch_big_zalloc_try(bytes);

	if (!p)
		oom();
	return p;
}

void bch_big_free(void *p)
{
	size_t len;

	if (!p)
		return;
	memcpy(&len, (uint8_t *)p - sizeof(len), sizeof(len));
	if (!len)
		free((uint8_t *)p - BIG_HEAP_HDR);
	else
		munmap((uint8_t *)p - BIG_HDR, len);
}

uint64_t bch_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
