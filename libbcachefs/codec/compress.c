// SPDX-License-Identifier: GPL-2.0
/*
 * Compression of file data (doc/format.md §8): the on-disk framing of LZ4,
 * GZIP (raw deflate) and ZSTD (le32 length + frame) extents, and the
 * reference writer's "how much to compress" loop. The codecs are liblz4,
 * zlib and libzstd; this file only frames, bounds-checks and sizes.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "codec/compress.h"
#include "util/errcode.h"
#include "util/util.h"

_Static_assert(BCH_COMPRESSION_NONE == 0 && BCH_COMPRESSION_LZ4_OLD == 1 &&
	       BCH_COMPRESSION_GZIP == 2 && BCH_COMPRESSION_LZ4 == 3 &&
	       BCH_COMPRESSION_ZSTD == 4 && BCH_COMPRESSION_NR == 5,
	       "on-disk compression type numbers (spec 40 §40.3.1)");

#define SECTOR_BYTES		512
#define ZSTD_LEN_BYTES		4	/* le32 frame length before the frame */
#define GZIP_WINDOW_BITS	(-15)	/* raw deflate, 32 KiB window */
#define GZIP_MEM_LEVEL		8
#define GZIP_DEFAULT_LEVEL	6	/* Z_DEFAULT_COMPRESSION */

static const char * const compression_names[BCH_COMPRESSION_NR] = {
	[BCH_COMPRESSION_NONE]		= "none",
	[BCH_COMPRESSION_LZ4_OLD]	= "lz4_old",
	[BCH_COMPRESSION_GZIP]		= "gzip",
	[BCH_COMPRESSION_LZ4]		= "lz4",
	[BCH_COMPRESSION_ZSTD]		= "zstd",
};

const char *bch_compression_type_name(unsigned type)
{
	return type < BCH_COMPRESSION_NR ? compression_names[type] : NULL;
}

bool bch_compression_type_valid(unsigned type)
{
	return type < BCH_COMPRESSION_NR;
}

bool bch_compression_type_writable(unsigned type)
{
	return type == BCH_COMPRESSION_GZIP ||
	       type == BCH_COMPRESSION_LZ4 ||
	       type == BCH_COMPRESSION_ZSTD;
}

/* ---- per-thread work areas --------------------------------------------- */

struct compress_ws {
	ZSTD_CCtx	*zstd_c;
	ZSTD_DCtx	*zstd_d;
	z_stream	deflate;
	int		deflate_level;	/* 0: not initialised */
	z_stream	inflate;
	bool		inflate_ready;
};

static pthread_key_t	ws_key;
static pthread_once_t	ws_once = PTHREAD_ONCE_INIT;
static __thread struct compress_ws *ws_cur;

static void ws_free(struct compress_ws *ws)
{
	if (!ws)
		return;
	ZSTD_freeCCtx(ws->zstd_c);
	ZSTD_freeDCtx(ws->zstd_d);
	if (ws->deflate_level)
		deflateEnd(&ws->deflate);
	if (ws->inflate_ready)
		inflateEnd(&ws->inflate);
	free(ws);
}

static void ws_destructor(void *p)
{
	ws_free(p);
}

static void ws_key_init(void)
{
	if (pthread_key_create(&ws_key, ws_destructor))
		abort();
}

static struct compress_ws *ws_get(void)
{
	struct compress_ws *ws = ws_cur;

	if (ws)
		return ws;
	pthread_once(&ws_once, ws_key_init);
	ws = calloc(1, sizeof(*ws));
	if (!ws)
		return NULL;
	if (pthread_setspecific(ws_key, ws)) {
		free(ws);
		return NULL;
	}
	ws_cur = ws;
	return ws;
}

void bch_compress_thread_exit(void)
{
	struct compress_ws *ws = ws_cur;

	if (!ws)
		return;
	ws_cur = NULL;
	pthread_setspecific(ws_key, NULL);
	ws_free(ws);
}

static int ws_inflate(struct compress_ws *ws, z_stream **ret)
{
	if (!ws->inflate_ready) {
		memset(&ws->inflate, 0, sizeof(ws->inflate));
		if (inflateInit2(&ws->inflate, GZIP_WINDOW_BITS) != Z_OK)
			return -ENOMEM;
		ws->inflate_ready = true;
	} else if (inflateReset(&ws->inflate) != Z_OK) {
		return -ENOMEM;
	}
	*ret = &ws->inflate;
	return 0;
}

static int ws_deflate(struct compress_ws *ws, int level, z_stream **ret)
{
	if (ws->deflate_level && ws->deflate_level != level) {
		deflateEnd(&ws->deflate);
		ws->deflate_level = 0;
	}
	if (!ws->deflate_level) {
		memset(&ws->deflate, 0, sizeof(ws->deflate));
		if (deflateInit2(&ws->deflate, level, Z_DEFLATED,
				 GZIP_WINDOW_BITS, GZIP_MEM_LEVEL,
				 Z_DEFAULT_STRATEGY) != Z_OK)
			return -ENOMEM;
		ws->deflate_level = level;
	} else if (deflateReset(&ws->deflate) != Z_OK) {
		return -ENOMEM;
	}
	*ret = &ws->deflate;
	return 0;
}

/* ---- decompression ----------------------------------------------------- */

/*
 * liblz4's decoder does not reject a match offset of 0 (the LZ4 block format
 * calls it invalid; no compressor emits it), which copies output bytes that
 * are not written yet. So zero padding read as sequences "decodes" (a zero
 * token, offset 0: 4 more bytes), and a truncated or too-long extent would
 * pass with whatever @dst held. This walks the sequence structure - lengths
 * and offsets only, no decoding - up to the point where the partial decoder
 * stops (@dst_len bytes produced) and rejects a zero offset or an offset
 * reaching before the start. Everything else is left to liblz4.
 */
static bool lz4_offsets_valid(const uint8_t *src, size_t src_len,
			      size_t dst_len)
{
	const uint8_t *ip = src, *end = src + src_len;
	size_t out = 0;

	while (1) {
		size_t lit, match;
		unsigned token, off;

		/*
		 * Fast path: literal and match lengths without extension
		 * bytes, far from the end of the input (a sequence reads at
		 * most 1 + 14 + 2 bytes) and of the output (it produces at
		 * most 14 + 18 bytes).
		 */
		while (likely(end - ip >= 20 && dst_len - out > 40)) {
			token = *ip;
			if ((token >> 4) == 15 || (token & 15) == 15)
				break;
			lit = token >> 4;
			ip  += 1 + lit;
			out += lit;
			off = ip[0] | ip[1] << 8;
			ip += 2;
			if (!off || off > out)
				return false;
			out += (token & 15) + 4;
		}

		if (ip >= end)
			return false;
		token = *ip++;

		lit = token >> 4;
		if (lit == 15) {
			unsigned b;

			do {
				if (ip >= end)
					return false;
				b = *ip++;
				lit += b;
			} while (b == 255);
		}
		if (lit >= dst_len - out)	/* the target is reached */
			return true;
		if (lit > (size_t) (end - ip))
			return false;
		ip  += lit;
		out += lit;

		if (end - ip < 2)
			return false;
		off = ip[0] | ip[1] << 8;
		ip += 2;
		if (!off || off > out)
			return false;

		match = token & 15;
		if (match == 15) {
			unsigned b;

			do {
				if (ip >= end)
					return false;
				b = *ip++;
				match += b;
			} while (b == 255);
		}
		match += 4;			/* minimum match length */
		if (match >= dst_len - out)
			return true;
		out += match;
	}
}

/*
 * LZ4 (and LZ4_OLD): a raw block, decoded until exactly @dst_len bytes came
 * out; the input is the whole region, padding included (doc/format.md §8.2). The
 * partial decoder stops as soon as the target size is reached, so the zero
 * padding after the block is never parsed. As in the reference, a block
 * that holds more than @dst_len bytes is cut there without error (LZ4 has
 * no end marker; the extent checksum covers that case).
 */
static int lz4_decompress(const void *src, size_t src_len,
			  void *dst, size_t dst_len)
{
	int ret;

	if (src_len > INT_MAX || dst_len > INT_MAX)
		return -BCH_ERR_decompress;
	if (!lz4_offsets_valid(src, src_len, dst_len))
		return -BCH_ERR_decompress;
	ret = LZ4_decompress_safe_partial(src, dst, (int) src_len,
					  (int) dst_len, (int) dst_len);
	return ret >= 0 && (size_t) ret == dst_len ? 0 : -BCH_ERR_decompress;
}

/*
 * GZIP: raw inflate of the whole region; the stream must end, and must have
 * produced exactly @dst_len bytes. Whatever follows the end of the stream
 * (the padding) is ignored.
 */
static int gzip_decompress(const void *src, size_t src_len,
			   void *dst, size_t dst_len)
{
	struct compress_ws *ws = ws_get();
	z_stream *zs;
	int ret;

	if (!ws)
		return -ENOMEM;
	if (src_len > UINT_MAX || dst_len > UINT_MAX)
		return -BCH_ERR_decompress;
	ret = ws_inflate(ws, &zs);
	if (ret)
		return ret;

	zs->next_in	= (Bytef *) src;
	zs->avail_in	= (uInt) src_len;
	zs->next_out	= dst;
	zs->avail_out	= (uInt) dst_len;

	ret = inflate(zs, Z_FINISH);
	if (ret == Z_MEM_ERROR)
		return -ENOMEM;
	return ret == Z_STREAM_END && zs->total_out == dst_len
		? 0 : -BCH_ERR_decompress;
}

/* ZSTD: le32 L, then exactly L bytes of zstd data decoding to @dst_len. */
static int zstd_decompress(const void *src, size_t src_len,
			   void *dst, size_t dst_len)
{
	const uint8_t *p = src;
	struct compress_ws *ws;
	size_t frame_len, ret;

	if (src_len < ZSTD_LEN_BYTES)
		return -BCH_ERR_decompress;
	frame_len = (size_t) p[0] | (size_t) p[1] << 8 |
		    (size_t) p[2] << 16 | (size_t) p[3] << 24;
	if (frame_len > src_len - ZSTD_LEN_BYTES)
		return -BCH_ERR_decompress;

	ws = ws_get();
	if (!ws)
		return -ENOMEM;
	if (!ws->zstd_d) {
		ws->zstd_d = ZSTD_createDCtx();
		if (!ws->zstd_d)
			return -ENOMEM;
	}

	ret = ZSTD_decompressDCtx(ws->zstd_d, dst, dst_len,
				  p + ZSTD_LEN_BYTES, frame_len);
	if (ZSTD_isError(ret)) {
		/* The context may be mid-frame: start afresh next time. */
		ZSTD_DCtx_reset(ws->zstd_d, ZSTD_reset_session_only);
		if (ZSTD_getErrorCode(ret) == ZSTD_error_memory_allocation)
			return -ENOMEM;
		return -BCH_ERR_decompress;
	}
	return ret == dst_len ? 0 : -BCH_ERR_decompress;
}

int bch_decompress(unsigned type, const void *src, size_t src_len,
		   void *dst, size_t dst_len)
{
	/* An extent has at least one sector of each. */
	if (type != BCH_COMPRESSION_NONE && (!src_len || !dst_len))
		return -BCH_ERR_decompress;

	switch (type) {
	case BCH_COMPRESSION_NONE:
		if (src_len != dst_len)
			return -BCH_ERR_decompress;
		memmove(dst, src, dst_len);
		return 0;
	case BCH_COMPRESSION_LZ4_OLD:
		/*
		 * The legacy wrapper's framing is UNVERIFIED (doc/format.md
		 * §8.1); its decoder knew the output size and found the end
		 * of the input itself, which is what decoding a raw block to
		 * exactly @dst_len does. Never written by this version.
		 */
	case BCH_COMPRESSION_LZ4:
		return lz4_decompress(src, src_len, dst, dst_len);
	case BCH_COMPRESSION_GZIP:
		return gzip_decompress(src, src_len, dst, dst_len);
	case BCH_COMPRESSION_ZSTD:
		return zstd_decompress(src, src_len, dst, dst_len);
	default:
		return -BCH_ERR_decompress;
	}
}

/* ---- compression ------------------------------------------------------- */

#define LZ4_MAX_ACCELERATION	65537

/* Type writable and level in range (see bch_compress()); -EINVAL if not. */
static int check_params(unsigned type, unsigned level, size_t src_len)
{
	switch (type) {
	case BCH_COMPRESSION_LZ4:
		return level <= LZ4_MAX_ACCELERATION && src_len <= INT_MAX
			? 0 : -EINVAL;
	case BCH_COMPRESSION_GZIP:
		return level <= 9 && src_len <= UINT_MAX ? 0 : -EINVAL;
	case BCH_COMPRESSION_ZSTD:
		return level <= (unsigned) ZSTD_maxCLevel() ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}

/*
 * Compress @src_len bytes into at most @dst_cap bytes of framed output.
 * Returns 0 with *@out = framed length; -E2BIG if it did not fit, with
 * *@fit = how much input did fit when the codec says so (LZ4), else 0;
 * -EINVAL, -ENOMEM.
 */
static int compress_raw(unsigned type, unsigned level,
			const void *src, size_t src_len,
			void *dst, size_t dst_cap,
			size_t *out, size_t *fit)
{
	struct compress_ws *ws;

	*out = 0;
	*fit = 0;

	switch (type) {
	case BCH_COMPRESSION_LZ4: {
		int in = (int) src_len;		/* checked by check_params() */
		int cap = dst_cap > INT_MAX ? INT_MAX : (int) dst_cap;
		int n;

		if (!cap)
			return -E2BIG;
		if (level > 1) {
			/* Accelerated: not what the reference writes. */
			n = LZ4_compress_fast(src, dst, in, cap, (int) level);
			if (n <= 0)
				return -E2BIG;
			*out = n;
			return 0;
		}
		/* "Compress into a destination of given size" (doc/format.md §8.2). */
		n = LZ4_compress_destSize(src, dst, &in, cap);
		if (n <= 0)
			return -E2BIG;
		if ((size_t) in < src_len) {
			*fit = in;
			return -E2BIG;
		}
		*out = n;
		return 0;
	}
	case BCH_COMPRESSION_GZIP: {
		z_stream *zs;
		int ret, zlevel = level ? (int) level : GZIP_DEFAULT_LEVEL;

		ws = ws_get();
		if (!ws)
			return -ENOMEM;
		ret = ws_deflate(ws, zlevel, &zs);
		if (ret)
			return ret;

		zs->next_in	= (Bytef *) src;
		zs->avail_in	= (uInt) src_len;
		zs->next_out	= dst;
		zs->avail_out	= dst_cap > UINT_MAX ? UINT_MAX : (uInt) dst_cap;

		ret = deflate(zs, Z_FINISH);
		if (ret == Z_STREAM_END) {
			*out = zs->total_out;
			return 0;
		}
		return ret == Z_OK || ret == Z_BUF_ERROR ? -E2BIG : -ENOMEM;
	}
	case BCH_COMPRESSION_ZSTD: {
		uint8_t *p = dst;
		size_t n;

		if (dst_cap <= ZSTD_LEN_BYTES)
			return -E2BIG;
		ws = ws_get();
		if (!ws)
			return -ENOMEM;
		if (!ws->zstd_c) {
			ws->zstd_c = ZSTD_createCCtx();
			if (!ws->zstd_c)
				return -ENOMEM;
		}
		/* Level 0 is libzstd's default level (3), as the reference. */
		n = ZSTD_compressCCtx(ws->zstd_c, p + ZSTD_LEN_BYTES,
				      dst_cap - ZSTD_LEN_BYTES,
				      src, src_len, (int) level);
		if (ZSTD_isError(n)) {
			ZSTD_CCtx_reset(ws->zstd_c, ZSTD_reset_session_only);
			if (ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation)
				return -ENOMEM;
			return -E2BIG;
		}
		if (n > UINT32_MAX)
			return -E2BIG;
		p[0] = n;
		p[1] = n >> 8;
		p[2] = n >> 16;
		p[3] = n >> 24;
		*out = n + ZSTD_LEN_BYTES;
		return 0;
	}
	default:
		return -EINVAL;
	}
}

int bch_compress(unsigned type, const void *src, size_t src_len,
		 void *dst, size_t *dst_len, unsigned level)
{
	size_t cap, n, fit, padded;
	int ret;

	ret = check_params(type, level, src_len);
	if (ret)
		return ret;

	/*
	 * Success needs round_up(n, 512) <= capacity and < src_len, i.e.
	 * n <= both limits rounded down to a sector.
	 */
	cap = *dst_len / SECTOR_BYTES * SECTOR_BYTES;
	if (src_len <= SECTOR_BYTES)
		return -E2BIG;
	cap = min_t(size_t, cap, (src_len - 1) / SECTOR_BYTES * SECTOR_BYTES);
	if (!cap)
		return -E2BIG;

	ret = compress_raw(type, level, src, src_len, dst, cap, &n, &fit);
	if (ret)
		return ret;

	padded = round_up(n, SECTOR_BYTES);
	memset((uint8_t *) dst + n, 0, padded - n);
	*dst_len = n;
	return 0;
}

int bch_compress_extent(unsigned type, unsigned level,
			const void *src, size_t src_len,
			void *dst, size_t dst_space,
			unsigned block_bytes, size_t max_bytes,
			size_t *src_used, size_t *dst_used)
{
	size_t len, dst_len, n = 0, fit, padded;
	int ret;

	*src_used = 0;
	*dst_used = 0;

	if (!block_bytes || block_bytes % SECTOR_BYTES ||
	    !is_power_of_2(block_bytes))
		return -EINVAL;
	ret = check_params(type, level, min_t(size_t, src_len, max_bytes));
	if (ret)
		return ret;

	/* 2. At most one block: stored as is. */
	if (src_len <= block_bytes)
		return -E2BIG;

	/* 3. (Whole blocks only, should the caller pass a ragged size.) */
	len = min_t(size_t, src_len, max_bytes) / block_bytes * block_bytes;
	dst_len = min_t(size_t, dst_space, len);
	/* Keep the padded output inside the space we were given. */
	dst_len = dst_len / block_bytes * block_bytes;

	/* 4. */
	while (1) {
		if (len <= block_bytes)			/* a */
			return -E2BIG;

		ret = compress_raw(type, level, src, len,
				   dst, dst_len, &n, &fit);	/* b */
		if (!ret && n)				/* c */
			break;
		if (ret && ret != -E2BIG)
			return ret;
		if (len <= dst_len)			/* d */
			return -E2BIG;

		if (type == BCH_COMPRESSION_LZ4)	/* e */
			len = fit;
		else
			len -= (len - dst_len) / 2;
		len = len / block_bytes * block_bytes;
	}

	/* 5. Compression must save at least one block. */
	padded = round_up(n, block_bytes);
	if (padded >= len)
		return -E2BIG;

	/* 6. */
	memset((uint8_t *) dst + n, 0, padded - n);
	*src_used = len;
	*dst_used = padded;
	return 0;
}
