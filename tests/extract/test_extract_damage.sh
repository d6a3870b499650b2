#!/bin/sh
# A flipped byte inside a checksummed data extent (one replica): extract of
# that file fails with EIO naming the file and offset; --ignore-errors copies
# everything else, lists the damaged file and still exits non-zero.
. "$TESTDIR/../lib.sh"
command -v python3 >/dev/null || { echo "python3 needed"; exit 77; }
orig=$(golden_images g4_compressed_encrypted_data lz4)
img=$WORK/damaged.img
cp --sparse=always "$orig" "$img"

# d/small: one 4 KiB crc32c extent
inum=$("$BCACHEFS" list -b dirents "$img" | sed -n 's/.*: small -> \([0-9]*\)$/\1/p')
[ -n "$inum" ] || fail "d/small not found"
sector=$("$BCACHEFS" list -b extents -s $inum:0 -e $((inum + 1)):0 "$img" |
	sed -n 's/.* ptr: 0:\([0-9]*\) gen.*/\1/p' | head -n 1)
[ -n "$sector" ] || fail "extent of d/small not found"
python3 - "$img" $((sector * 512 + 100)) <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x20]))
PY

"$BCACHEFS" extract "$img" /d/small "$WORK/small" 2> "$WORK/err1"
rc=$?
cat "$WORK/err1"
crashed $rc && fail "crashed"
[ $rc != 0 ] || fail "damaged file extracted with exit 0"
grep -q "d/small" "$WORK/err1" || fail "file not named"
grep -q "inode $inum offset 0" "$WORK/err1" || fail "inode/offset not named"
grep -qi "checksum" "$WORK/err1" || fail "no checksum error"
grep -q "sector $sector" "$WORK/err1" || fail "device sector not named"

"$BCACHEFS" extract --ignore-errors "$img" / "$WORK/all" 2> "$WORK/err2"
rc=$?
cat "$WORK/err2"
crashed $rc && fail "--ignore-errors crashed"
[ $rc != 0 ] || fail "--ignore-errors exit 0 with a damaged file"
grep -q "d/small" "$WORK/err2" || fail "--ignore-errors: damaged file not listed"
# the damaged part reads as zeroes, never as unverified data
[ "$(stat -c %s "$WORK/all/d/small")" = 4096 ] || fail "damaged file has the wrong size"
cmp -s "$WORK/all/d/small" /dev/zero -n 4096 2>/dev/null ||
	[ -z "$(tr -d '\0' < "$WORK/all/d/small")" ] || fail "damaged data was returned"
# everything else is intact
grep -v "d/small" "$GOLDEN/g4_compressed_encrypted_data/out/lz4-tree-manifest.txt" > "$WORK/manifest"
rm "$WORK/all/d/small"
python3 "$TESTDIR/tree_compare.py" --content-only --allow-extra lost+found "$WORK/manifest" "$WORK/all" ||
	fail "undamaged files differ"
exit 0
