#!/bin/sh
# A flipped byte inside a checksummed data extent, read through the FUSE
# mount: reading that file fails with EIO (never returns the bad data), the
# mount's log names the inode, offset and the checksum error, the other
# files still read correctly and the mount keeps working. An inode with no
# valid file type, or a root that is not a directory: EIO, and the log says
# which inode and why.
. "$TESTDIR/../lib.sh"
fuse_mount_setup

img=$WORK/damaged.img
cp --sparse=always "$(golden_images g4_compressed_encrypted_data lz4)" "$img"
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

mount_fg damage "$img" -o ro

cat "$mnt/d/small" > "$WORK/small" 2> "$WORK/cat.err" && fail "damaged file read without error"
cat "$WORK/cat.err"
grep -q "Input/output error" "$WORK/cat.err" || fail "damaged file: not EIO"
[ -z "$(tr -d '\0' < "$WORK/small")" ] || fail "damaged data was returned"
# the rest reads as written
grep -v "d/small" "$GOLDEN/g4_compressed_encrypted_data/out/lz4-tree-manifest.txt" > "$WORK/manifest"
python3 "$TESTDIR/../extract/tree_compare.py" --content-only --allow-extra lost+found --allow-extra d \
	"$WORK/manifest" "$mnt" || fail "undamaged files differ"
[ "$(stat -c %s "$mnt/d/small")" = 4096 ] || fail "stat of the damaged file"

unmount_fg damage
grep -q "inode $inum at offset 0" "$WORK/damage.log" || fail "log does not name the inode and offset"
grep -qi "checksum" "$WORK/damage.log" || fail "log does not say checksum"

# An inode with no valid file type (mode 0), and a root that is not a
# directory: the kernel turns such replies into a silent EIO, so the mount
# returns EIO itself and its log names the inode and says why.
test_tool plant
img2=$WORK/badmode.img
cp --sparse=always "$(golden_images a_default_20M)" "$img2"
"$TOOL" "$img2" inode 4097 mode=0 || fail "plant lost+found mode"
mount_fg badmode "$img2" -o ro
stat "$mnt/lost+found" > /dev/null 2>&1 && fail "lost+found with mode 0: stat worked"
ls "$mnt" > /dev/null || fail "root not listable"
unmount_fg badmode
grep -q "inode 4097 has mode 0, no valid file type; returned EIO" "$WORK/badmode.log" ||
	fail "log does not name the inode with no file type"

"$TOOL" "$img2" inode 4096 mode=0 || fail "plant root mode"
mount_fg badroot "$img2" -o ro
stat "$mnt" > /dev/null 2>&1 && fail "root with mode 0: stat worked"
unmount_fg badroot
grep -q "inode 4096 has mode 0, the root is not a directory; returned EIO" "$WORK/badroot.log" ||
	fail "log does not say the root is not a directory"
exit 0
