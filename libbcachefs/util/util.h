/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small utilities shared by the core and the commands: one text builder
 * (printbuf) used for both human and JSON output, size parsing/printing,
 * and allocation helpers that never return NULL.
 */
#ifndef BCH_UTIL_H
#define BCH_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define min_t(t, a, b)		((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b)		((t)(a) > (t)(b) ? (t)(a) : (t)(b))
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define round_up(n, a)		(DIV_ROUND_UP(n, a) * (a))
#define is_power_of_2(n)	((n) != 0 && (((n) & ((n) - 1)) == 0))
#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#define __printf(a, b)		__attribute__((format(printf, a, b)))

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t n);
void *xrealloc(void *p, size_t n);
/*
 * For commands that hold large tables and node buffers (fsck, list): keep
 * them on the heap, and back the first 256 MiB of it with huge pages where
 * the system allows (madvise): a page fault per 2 MiB instead of per 4 KiB
 * (fsck -n of 100k files faulted 10k times, most of its time on a VM).
 */
void bch_heap_tune(void);
/*
 * Zeroed arrays of one entry per bucket (tens of MiB on a large device,
 * mostly never written): a mapping of their own, zero pages until written.
 * On the heap, calloc would write every byte (small ones are on the heap:
 * up to 256 KiB). bch_big_free(NULL) is a no-op.
 */
void *bch_big_zalloc(size_t bytes);
/* The same, NULL when it cannot be had (a size from disk: a claim, not a need). */
void *bch_big_zalloc_try(size_t bytes);
void bch_big_free(void *p);
char *xstrdup(const char *s);

/* ---- printbuf: a growable string ---- */
struct printbuf {
	char	*buf;
	size_t	size;		/* allocated */
	size_t	pos;		/* bytes used, excluding the NUL */
};

#define PRINTBUF ((struct printbuf) { NULL, 0, 0 })

__printf(2, 3) void pr_buf(struct printbuf *out, const char *fmt, ...);
void pr_vbuf(struct printbuf *out, const char *fmt, va_list args);
void pr_str(struct printbuf *out, const char *s);
void pr_bytes(struct printbuf *out, const void *p, size_t len);
void pr_char(struct printbuf *out, char c);
/* Decimal @v (a fast path for hot printers: no format parsing). */
void pr_u64(struct printbuf *out, uint64_t v);
void pr_uuid(struct printbuf *out, const uint8_t uuid[16]);
/* Human-readable size of @sectors 512-byte sectors ("64.0K", "1.0G", "512"). */
void pr_human_sectors(struct printbuf *out, int64_t sectors);
const char *printbuf_str(struct printbuf *out);	/* never NULL */
void printbuf_reset(struct printbuf *out);
void printbuf_exit(struct printbuf *out);

/* ---- JSON writer on top of a printbuf ---- */
struct json {
	struct printbuf	*out;
	unsigned	depth;
	bool		need_comma[64];
	bool		pretty;
};

void json_init(struct json *j, struct printbuf *out, bool pretty);
void json_obj_begin(struct json *j, const char *key);	/* key NULL in arrays / top */
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_str(struct json *j, const char *key, const char *val);
void json_strn(struct json *j, const char *key, const char *val, size_t len);
void json_u64(struct json *j, const char *key, uint64_t val);
void json_bool(struct json *j, const char *key, bool val);
void json_uuid(struct json *j, const char *key, const uint8_t uuid[16]);
/* JSON string escaping of arbitrary bytes (non-UTF-8 bytes become \u00XX). */
void pr_json_string(struct printbuf *out, const char *s, size_t len);

/* ---- sizes ---- */
/*
 * Parse "<digits>[kmgtpezy]" (powers of 1024, case-insensitive) into bytes.
 * Returns 0 or -EINVAL (syntax) / -ERANGE (overflow).
 */
int parse_size(const char *s, uint64_t *bytes);
int parse_u64(const char *s, uint64_t *v);	/* plain decimal, no sign */

bool uuid_is_zero(const uint8_t uuid[16]);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t bch_now_ns(void);

#endif
