#!/bin/sh
# Per-file options through the mount (spec 10 §7.2): the
# "bcachefs.*" xattrs set, get, list and remove the inode's option fields;
# bad values and unknown names are EINVAL; new files and directories take
# their directory's options; the write path follows them (zstd, crc64 and
# the hdd group for a directory's files, two copies for data_replicas=2);
# they survive a remount, `list -b inodes` shows the stored fields (value
# + 1) and fsck is clean.
. "$TESTDIR/../lib.sh"
fuse_mount_setup
command -v setfattr > /dev/null && command -v getfattr > /dev/null ||
	{ echo "setfattr/getfattr needed (attr)"; exit 77; }
B=$BCACHEFS
s=$WORK/ssd.img h=$WORK/hdd.img
truncate -s 64M "$s" "$h"
"$B" format -q --group=ssd "$s" --group=hdd "$h" > "$WORK/format.log" 2>&1 ||
	{ cat "$WORK/format.log"; fail "format"; }

# attrs FILE: the bcachefs.* lines of getfattr -d, sorted
attrs() {
	getfattr --absolute-names -d -m - "$1" 2> /dev/null | grep '^bcachefs\.' | sort
}
# text FILE: 2 MiB of compressible text in 1 MiB writes
text() {
	python3 -c '
import sys
with open(sys.argv[1], "w") as f:
    for i in range(60000):
        f.write("the same line, number %06d, again\n" % i)' "$WORK/text"
	dd if="$WORK/text" of="$1" bs=1M status=none || fail "write $1"
}

mount_fg o "$s:$h"
m=$mnt
touch "$m/f"
for kv in data_checksum=crc64 compression=lz4 background_compression=gzip data_replicas=2 \
	  promote_target=ssd foreground_target=hdd background_target=$h; do
	setfattr -n "bcachefs.${kv%%=*}" -v "${kv#*=}" "$m/f" || fail "setfattr $kv"
done
cat > "$WORK/want" <<EOF
bcachefs.background_compression="gzip"
bcachefs.background_target="$(readlink -f "$h")"
bcachefs.compression="lz4"
bcachefs.data_checksum="crc64"
bcachefs.data_replicas="2"
bcachefs.foreground_target="hdd"
bcachefs.promote_target="ssd"
EOF
attrs "$m/f" > "$WORK/got"
diff "$WORK/want" "$WORK/got" || fail "getfattr -d of every option"
[ "$(getfattr --absolute-names --only-values -n bcachefs.compression "$m/f")" = lz4 ] || fail "getfattr -n"

# bad values, unknown names: EINVAL, the option unchanged
for kv in compression=bzip2 data_checksum=crc128 data_replicas=0 data_replicas=4 \
	  data_replicas=two foreground_target=nvme background_target=/nonexistent nosuch=1; do
	setfattr -n "bcachefs.${kv%%=*}" -v "${kv#*=}" "$m/f" 2> "$WORK/e" && fail "setfattr $kv taken"
	grep -q "Invalid argument" "$WORK/e" || { cat "$WORK/e"; fail "setfattr $kv: not EINVAL"; }
done
attrs "$m/f" > "$WORK/got"
diff "$WORK/want" "$WORK/got" || fail "a refused value changed an option"
getfattr --absolute-names -n bcachefs.nosuch "$m/f" 2>&1 | grep -q "Invalid argument" || fail "getfattr of an unknown option"

# remove; "none" is a value of its own (stored, overriding the filesystem)
setfattr -x bcachefs.background_target "$m/f" || fail "setfattr -x"
getfattr --absolute-names -n bcachefs.background_target "$m/f" 2>&1 | grep -q "No such attribute" || fail "removed option still there"
setfattr -x bcachefs.background_target "$m/f" 2> /dev/null && fail "second remove: not ENODATA"
setfattr -n bcachefs.promote_target -v none "$m/f" || fail "target none"
[ "$(getfattr --absolute-names --only-values -n bcachefs.promote_target "$m/f")" = none ] || fail "target none: get"
# create / replace flags
python3 -c '
import os, sys
try:
    os.setxattr(sys.argv[1], "bcachefs.compression", b"zstd", os.XATTR_CREATE)
    sys.exit("XATTR_CREATE of a set option taken")
except OSError as e:
    assert e.errno == 17, e
try:
    os.setxattr(sys.argv[1], "bcachefs.background_target", b"hdd", os.XATTR_REPLACE)
    sys.exit("XATTR_REPLACE of an unset option taken")
except OSError as e:
    assert e.errno == 61, e' "$m/f" || fail "XATTR_CREATE / XATTR_REPLACE"

# a directory's options go to what is created in it, files and directories
mkdir "$m/d"
setfattr -n bcachefs.compression -v zstd "$m/d" || fail "set on a directory"
setfattr -n bcachefs.data_checksum -v crc64 "$m/d" || fail "set on a directory"
setfattr -n bcachefs.foreground_target -v hdd "$m/d" || fail "set on a directory"
mkdir "$m/d/sub"
text "$m/d/sub/t"
text "$m/plain"
attrs "$m/d" > "$WORK/want"
[ "$(wc -l < "$WORK/want")" = 3 ] || { cat "$WORK/want"; fail "directory options"; }
for x in d/sub d/sub/t; do
	attrs "$m/$x" > "$WORK/got"
	diff "$WORK/want" "$WORK/got" || fail "$x did not inherit its directory's options"
done
[ -z "$(attrs "$m/plain")" ] || fail "a file outside the directory has options"
# data_replicas=2 on a data_replicas=1 filesystem: two copies
touch "$m/two"
setfattr -n bcachefs.data_replicas -v 2 "$m/two" || fail "data_replicas=2"
head -c 300000 /dev/urandom > "$WORK/rand"
cp "$WORK/rand" "$m/two" || fail "write two"
cmp "$WORK/text" "$m/d/sub/t" || fail "read back t"
# bcachefs setattr: a tree at once, "-" removes, a bad value fails (exit 1)
mkdir -p "$m/tree/a/b" && touch "$m/tree/a/b/f" "$m/tree/g"
"$B" setattr --data_replicas=2 --background_compression=lz4 "$m/tree" || fail "setattr"
for x in tree tree/a tree/a/b tree/a/b/f tree/g; do
	[ "$(getfattr --absolute-names --only-values -n bcachefs.data_replicas "$m/$x")" = 2 ] ||
		fail "setattr: $x"
done
"$B" setattr -d --background_compression=- "$m/tree" || fail "setattr -"
getfattr --absolute-names -n bcachefs.background_compression "$m/tree" > /dev/null 2>&1 &&
	fail "setattr -: still set"
[ "$(getfattr --absolute-names --only-values -n bcachefs.background_compression "$m/tree/g")" = lz4 ] ||
	fail "setattr -d went into the tree"
"$B" setattr --compression=bzip2 "$m/tree/g" 2> "$WORK/setattr.err"
[ $? = 1 ] || fail "setattr of a bad value: not exit 1"
grep -q "compression=bzip2: bad value" "$WORK/setattr.err" || { cat "$WORK/setattr.err"; fail "setattr: the message"; }
unmount_fg o > /dev/null

# compression options set at run time set the superblock's feature bits
# (features[0] at byte 208: lz4 bit 0, gzip bit 1, zstd bit 2), as the 2018
# kernel did: lz4, gzip (background) and zstd were set above
feat=$(od -An -tu1 -j $((4096 + 208)) -N1 "$s" | tr -d ' ')
[ "$feat" = 7 ] || fail "superblock features[0] = $feat after lz4, gzip and zstd were set (want 7)"

# the write path: zstd (crc type 4) and crc64 (csum 6) on the hdd (device 1)
list() { "$B" list -b "$1" "$s" "$h" > "$WORK/$1.txt" 2>&1 || { cat "$WORK/$1.txt"; fail "list $1"; }; }
list dirents
list extents
inum() { sed -n "s/.*: $1 -> \([0-9]*\).*/\1/p" "$WORK/dirents.txt"; }
t=$(inum t) p=$(inum plain) two=$(inum two)
grep " $t:" "$WORK/extents.txt" > "$WORK/t.ext"
[ -s "$WORK/t.ext" ] || fail "no extents of t"
grep -v " csum 6 compress 4 ptr: 1:[0-9]* gen [0-9]*$" "$WORK/t.ext" | head -3 | grep . &&
	fail "t: an extent not zstd + crc64 on the hdd alone"
c=$(awk '{ for (i = 1; i < NF; i++) if ($i == "c_size") s += $(i + 1) } END { print s }' "$WORK/t.ext")
[ "$c" -lt 1000 ] || fail "t: $c sectors stored for 2 MiB of text: not compressed"
grep " $p:" "$WORK/extents.txt" | grep -q "compress [1-9]" && fail "plain was compressed"
grep " $two:" "$WORK/extents.txt" | grep -v "ptr: 0:.* ptr: 1:" | head -3 | grep . &&
	fail "two: an extent without a copy on each device"
list inodes
grep -q "^u64s [0-9]* type 128 $t:0 .* bi_data_checksum: 3 bi_compression: 4 .* bi_foreground_target: 259 " \
	"$WORK/inodes.txt" || { grep " $t:0 " "$WORK/inodes.txt"; fail "t's stored fields"; }

# remount: everything still there
mount_fg o2 "$s:$h"
attrs "$mnt/d/sub/t" > "$WORK/got"
diff "$WORK/want" "$WORK/got" || fail "options after a remount"
[ "$(getfattr --absolute-names --only-values -n bcachefs.promote_target "$mnt/f")" = none ] || fail "f after a remount"
cmp "$WORK/text" "$mnt/d/sub/t" || fail "t after a remount"
cmp "$WORK/rand" "$mnt/two" || fail "two after a remount"
unmount_fg o2 > /dev/null
"$B" fsck -n -f "$s" "$h" > "$WORK/fsck.out" 2>&1 || { cat "$WORK/fsck.out"; fail "fsck not clean"; }
true
