#!/bin/sh
# extract the overwrite / dirty-journal / compressed golden trees and compare
# their contents with the shadow-tree manifests (sha256 and size of every
# file): trimmed and split extents, punched holes, journal-only keys, lz4 and
# zstd extents with crc offsets, merged extents and stale cached pointers.
. "$TESTDIR/../lib.sh"
command -v python3 >/dev/null || { echo "python3 needed"; exit 77; }
check() {	# NAME IMAGE MANIFEST
	out=$WORK/out-$1
	"$BCACHEFS" extract "$2" / "$out" > "$WORK/$1.log" 2>&1
	rc=$?
	cat "$WORK/$1.log"
	crashed $rc && fail "$1: extract crashed (rc=$rc)"
	[ $rc = 0 ] || fail "$1: extract failed (rc=$rc)"
	python3 "$TESTDIR/tree_compare.py" --content-only --allow-extra lost+found "$3" "$out" ||
		fail "$1: tree differs"
	rm -rf "$out"
}
g=$GOLDEN/g4_compressed_encrypted_data
check lz4 "$(golden_images g4_compressed_encrypted_data lz4)" "$g/out/lz4-tree-manifest.txt"
check zstd "$(golden_images g4_compressed_encrypted_data zstd)" "$g/out/zstd-tree-manifest.txt"
check g2 "$(golden_images g2_dirty_journal)" "$GOLDEN/g2_dirty_journal/out/tree-manifest.txt"
# g3: c/x00, x02, ... x14 are cached-only data whose buckets were invalidated
# (every pointer stale): they read as holes; the rest (merged extents) as written
grep -v -E '^c/x(00|02|04|06|08|10|12|14)[[:space:]]' "$GOLDEN/g3_merges_and_stale/out/tree-manifest.txt" > "$WORK/g3.manifest"
out=$WORK/out-g3
"$BCACHEFS" extract "$(golden_images g3_merges_and_stale)" / "$out" || fail "g3: extract failed"
for n in 00 02 04 06 08 10 12 14; do
	f=$out/c/x$n
	[ "$(stat -c %s "$f")" = 1048576 ] || fail "g3: c/x$n has the wrong size"
	[ -z "$(tr -d '\0' < "$f" | head -c 1)" ] || fail "g3: stale cached data of c/x$n was returned"
	[ "$(stat -c %b "$f")" -lt 64 ] || fail "g3: c/x$n is not a hole"
	rm "$f"
done
python3 "$TESTDIR/tree_compare.py" --content-only --allow-extra lost+found "$WORK/g3.manifest" "$out" ||
	fail "g3: tree differs"

if [ -z "$TEST_QUICK" ]; then
	check g1 "$(golden_images g1_overwrites)" "$GOLDEN/g1_overwrites/out/tree-manifest.txt.zst"
fi
exit 0
