/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Compression of file data (doc/format.md §8), on top of liblz4, zlib and
 * libzstd.
 *
 * Types are the on-disk crc `compression_type` values of format.h's
 * enum bch_compression_type: 0 none, 1 lz4_old (read only), 2 gzip, 3 lz4,
 * 4 zstd; >= 5 invalid. (The superblock/inode *option* numbering is
 * different: bch_compression_opt_to_type() in format.h maps it.)
 *
 * On-disk framing of the compressed_size sectors of an extent (doc/format.md §8.2):
 *   LZ4     one raw LZ4 block (no frame, no length), then zero bytes;
 *   GZIP    one raw DEFLATE stream (window bits -15: no zlib or gzip header,
 *           no trailer), then zero bytes;
 *   ZSTD    le32 length L, one zstd frame of exactly L bytes, then zero bytes;
 *   LZ4_OLD never written by this format version; decoded as LZ4 (see
 *           compress.c: the legacy framing is UNVERIFIED in the spec).
 * The zero padding runs to the end of the region (a multiple of the block
 * size) and is stored, checksummed and encrypted like the rest.
 *
 * Every function is thread-safe: codec state lives in per-thread work areas,
 * created on first use and freed when the thread exits (or by
 * bch_compress_thread_exit()).
 *
 * Errors are 0 / negative errno / -BCH_ERR_xxx (errcode.h).
 */
#ifndef BCH_COMPRESS_H
#define BCH_COMPRESS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "format/format.h"	/* enum bch_compression_type */

/* "none", "lz4_old", "gzip", "lz4", "zstd"; NULL for an invalid type. */
const char *bch_compression_type_name(unsigned type);
/* type < BCH_COMPRESSION_NR */
bool bch_compression_type_valid(unsigned type);
/* Can bch_compress() produce this type? (gzip, lz4, zstd) */
bool bch_compression_type_writable(unsigned type);

/*
 * Decode one extent: @src/@src_len is the whole stored region
 * (compressed_size * 512 bytes, after decryption), @dst/@dst_len the
 * output (uncompressed_size * 512 bytes). Succeeds only if the data decodes
 * to exactly @dst_len bytes - except that an LZ4 block holding more than
 * @dst_len bytes is cut at @dst_len, as the reference's partial decoder
 * does (LZ4 has no end marker). Never writes outside @dst, never reads
 * outside @src, whatever @src holds.
 *
 * Returns 0; -BCH_ERR_decompress for corrupt input, a wrong decoded size,
 * empty sizes, sizes a codec cannot take (> INT_MAX for LZ4) or an invalid
 * type; -ENOMEM. Type NONE copies @src to @dst and requires @src_len ==
 * @dst_len. On error the content of @dst is undefined.
 */
int bch_decompress(unsigned type, const void *src, size_t src_len,
		   void *dst, size_t dst_len);

/*
 * Compress all @src_len bytes at @src into @dst in the on-disk framing.
 * *@dst_len is the capacity of @dst on entry and the framed length n (not
 * padded) on success; the bytes from n up to the next 512-byte boundary are
 * zeroed, so round_up(n, 512) bytes of @dst are a valid stored region for a
 * block size of 512.
 *
 * @level: 0 = what the reference writes (gzip level 6, zstd level 3, lz4
 * acceleration 1); otherwise the codec's level (gzip 1..9, zstd
 * 1..ZSTD_maxCLevel(); for lz4 the acceleration factor).
 *
 * Returns 0; -E2BIG if the result would not fit in the capacity (padded to
 * a sector) or would not be smaller than @src_len by at least one sector
 * (i.e. round_up(n, 512) >= @src_len): store the data uncompressed;
 * -EINVAL for a type that cannot be written (none, lz4_old, invalid) or a
 * bad level; -ENOMEM.
 */
int bch_compress(unsigned type, const void *src, size_t src_len,
		 void *dst, size_t *dst_len, unsigned level);

#define BCH_COMPRESS_NOT_SMALLER	(-E2BIG)

/*
 * The reference writer's algorithm (doc/format.md §8.3) for the next extent of
 * a write:
 *
 * @src/@src_len     the remaining data of the write (a multiple of
 *                   @block_bytes);
 * @dst_space        room for this extent: min(space left in the bucket,
 *                   @src_len) in bytes; @dst must be at least that big (and
 *                   at least min(@src_len, @max_bytes) bytes);
 * @block_bytes      the filesystem block size in bytes (block_size * 512);
 * @max_bytes        encoded_extent_max * 512;
 * @level            as for bch_compress().
 *
 * On success (0): the first *@src_used bytes of @src (a multiple of
 * @block_bytes: uncompressed_size = *@src_used / 512) were compressed into
 * *@dst_used bytes of @dst (a multiple of @block_bytes, zero padded:
 * compressed_size = *@dst_used / 512). The rest of the input goes into the
 * next extent.
 *
 * -E2BIG: "give up" - write this piece uncompressed (at most @max_bytes
 * when checksummed). -EINVAL: bad type/level, @block_bytes not a power of
 * two multiple of 512; -ENOMEM.
 */
int bch_compress_extent(unsigned type, unsigned level,
			const void *src, size_t src_len,
			void *dst, size_t dst_space,
			unsigned block_bytes, size_t max_bytes,
			size_t *src_used, size_t *dst_used);

/* Free the calling thread's codec work areas (they come back on demand). */
void bch_compress_thread_exit(void);

#endif /* BCH_COMPRESS_H */
