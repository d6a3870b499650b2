/* SPDX-License-Identifier: GPL-2.0 */
/* Printing a superblock: the 2018 show-super text and JSON (sb_print.c). */
#ifndef BCH_SB_PRINT_H
#define BCH_SB_PRINT_H

#include <stdbool.h>

struct bch_sb;
struct printbuf;

/* ---- printing (show-super, format) -------------------------------------- */

/* Flags for bch_sb_to_text() / bch_sb_to_json(). */
#define BCH_SB_PRINT_LAYOUT	(1U << 31)
/* Field selection: bit t = field type t; BCH_SB_PRINT_ALL_FIELDS = every type. */
#define BCH_SB_PRINT_ALL_FIELDS	0x7fffffffU

/* The 2018 show-super text (doc/tools.md §3). */
void bch_sb_to_text(struct printbuf *out, const struct bch_sb *sb, unsigned flags);
/* The same information as one JSON object (pretty-printed when @pretty). */
void bch_sb_to_json(struct printbuf *out, const struct bch_sb *sb, unsigned flags,
		    bool pretty);

#endif
