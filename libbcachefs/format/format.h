/*
 * format.h - on-disk layout of bcachefs, superblock version 9 (May 2018).
 *
 * Everything in this file describes bytes on a device.  All multi-byte
 * integers on disk are little-endian; the le16/le32/le64 typedefs mark such
 * fields, and the leNN_to_cpu()/cpu_to_leNN() helpers convert them (they are
 * no-ops on little-endian hosts).
 *
 * Bit-fields inside LE words are never C bit-fields: each one gets a pair of
 * generated accessors, NAME(p) and SET_NAME(p, v), from LE16/32/64_BITMASK().
 * Bit ranges are written as [lo, hi) - bit lo included, bit hi excluded -
 * and numbered from the least significant bit of the decoded integer.
 *
 Parts, in this folder:
 *   base.h    1. byte order, bit-field accessor generator; 2. constants,
 *             magic numbers, enums; 8. variable-size structure helpers
 *   sb.h      3. superblock: layout, fixed part, variable fields, flags
 *   keys.h    4. keys: bpos, bversion, bkey, packed keys, bkey_format
 *   values.h  5. values: extents (entries, decoders), inodes, dirents,
 *             xattrs, alloc, quota, cookie
 *   node.h    6. btree nodes and bsets
 *   jset.h    7. journal
 *
 * Spec references: chapters 10 (superblock), 20 (keys, nodes),
 * 30 (journal, alloc, replicas), 40 (values), 60 (clarifications).
 */
#ifndef BCH_FORMAT_H
#define BCH_FORMAT_H

#include "format/base.h"
#include "format/keys.h"
#include "format/sb.h"
#include "format/values.h"
#include "format/node.h"
#include "format/jset.h"

#endif /* BCH_FORMAT_H */
