#!/bin/sh
# Flip 200 random bytes (seeded), one at a time, inside the inodes and
# dirents btree nodes of a copy of a golden image; `list` must exit 0 or 1
# each time (never crash, hang or trip a sanitizer), and reading the
# original image again must give the original listing.
set -e
. "$TESTDIR/../lib.sh"
: "${BCACHEFS:?}" "${GOLDEN:?}" "${WORK:?}"
command -v zstd >/dev/null || { echo "zstd not installed"; exit 77; }
img=$WORK/x.img
unzst "$GOLDEN/a_default_20M/dev0.img.zst" "$img"

"$BCACHEFS" list -b inodes "$img" > "$WORK/inodes.orig"
"$BCACHEFS" list -b dirents "$img" > "$WORK/dirents.orig"
grep -q '^u64s 13 type 128 4096:0 ' "$WORK/inodes.orig"

# sector of the root node of a btree, from "ptrs: ptr: DEV:SECTOR gen G"
node_sector() {
	"$BCACHEFS" list -b "$1" -m formats "$img" |
		sed -n 's/^ *ptrs: ptr: 0:\([0-9]*\) gen.*/\1/p' | head -n 1
}
ino=$(node_sector inodes)
dir=$(node_sector dirents)
[ -n "$ino" ] && [ -n "$dir" ] || { echo "cannot find the btree nodes"; exit 1; }
echo "inodes node at sector $ino, dirents node at sector $dir"

# 200 (btree, byte offset, xor value) triples: 80% inside the bsets
# (headers and keys: the first 240 bytes of each written block; the inodes
# node has bsets in blocks 0-2, the dirents node in blocks 0-1), the rest
# anywhere in the 16 KiB node (padding, unwritten blocks)
awk 'BEGIN { srand(4242); for (i = 0; i < 200; i++) {
	ino = i % 2 == 0
	if (rand() < 0.8)
		off = int(rand() * (ino ? 3 : 2)) * 4096 + int(rand() * (ino ? 240 : 112))
	else
		off = int(rand() * 16384)
	printf "%s %d %d\n", ino ? "inodes" : "dirents", off, 1 + int(rand() * 255) } }' > "$WORK/plan"

n=0 bad=0 errs=0
while read -r btree off val; do
	if [ "$btree" = inodes ]; then sec=$ino; else sec=$dir; fi
	pos=$((sec * 512 + off))
	orig=$(od -An -tu1 -j "$pos" -N1 "$img" | tr -d ' ')
	new=$((orig ^ val))
	printf "$(printf '\\%03o' "$new")" | dd of="$img" bs=1 seek="$pos" conv=notrunc 2>/dev/null
	rc=0
	timeout 20 "$BCACHEFS" list -b "$btree" "$img" > "$WORK/out" 2> "$WORK/err" || rc=$?
	if [ $rc -gt 1 ] || grep -q -e 'Sanitizer' -e 'runtime error' "$WORK/err"; then
		bad=$((bad + 1))
		echo "FAIL: $btree node byte $off ^ $val: exit $rc"
		head -n 20 "$WORK/err"
	fi
	[ $rc = 1 ] && errs=$((errs + 1))
	printf "$(printf '\\%03o' "$orig")" | dd of="$img" bs=1 seek="$pos" conv=notrunc 2>/dev/null
	n=$((n + 1))
done < "$WORK/plan"

echo "$n mutations, $errs reported as errors, $bad failures"
"$BCACHEFS" list -b inodes "$img" | cmp - "$WORK/inodes.orig"
"$BCACHEFS" list -b dirents "$img" | cmp - "$WORK/dirents.orig"
[ $n = 200 ] && [ $bad = 0 ] && [ $errs -gt 50 ]
