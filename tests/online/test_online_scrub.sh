#!/bin/sh
# Scrub: on a --replicas=2 filesystem, data blocks
# of one replica of two files and one copy of a btree node are damaged on
# the image; `data scrub` reports each one, repairs it from the good copy
# and exits 0; a second scrub finds nothing; the damaged device alone then
# reads every file right. With one replica a damaged file has no good
# copy: scrub names it by path and exits 1.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/lib_online.sh"
online_setup
a=$WORK/a.img b=$WORK/b.img
mkimg a.img 128M
mkimg b.img 128M
run_ok format "$BCACHEFS" format -q --replicas=2 "$a" "$b"
mount_fg s0 "$a:$b"
mkdir -p "$mnt/d/e"
head -c 400000 /dev/urandom > "$WORK/f1"
head -c 70000 /dev/urandom > "$WORK/f2"
cp "$WORK/f1" "$mnt/d/e/f1"
cp "$WORK/f2" "$mnt/d/f2"
for i in $(seq 1 40); do echo "file $i" > "$mnt/d/small-$i"; done
i1=$(stat -c %i "$mnt/d/e/f1")
i2=$(stat -c %i "$mnt/d/f2")
unmount_fg s0

# corrupt IMG SECTOR: flip 16 bytes inside that sector
corrupt() {	# IMG SECTOR
	python3 - "$1" "$2" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]) * 512 + 100)
    b = bytearray(f.read(16))
    f.seek(int(sys.argv[2]) * 512 + 100)
    f.write(bytes(x ^ 0x5a for x in b))
PY
}
s1=$("$BCACHEFS" list -b extents -i "$i1" "$a" "$b" | grep -o 'ptr: 0:[0-9]*' | head -n 1 | cut -d: -f3)
s2=$("$BCACHEFS" list -b extents -i "$i2" "$a" "$b" | grep -o 'ptr: 0:[0-9]*' | head -n 1 | cut -d: -f3)
# the node copy read second (device 1): the mount verifies the copy it
# reads first and rewrites a bad one itself (test_mount_repair_read)
n1=$("$BCACHEFS" list -m nodes -b dirents "$a" "$b" | grep -o 'ptr: 1:[0-9]*' | head -n 1 | cut -d: -f3)
[ -n "$s1" ] && [ -n "$s2" ] && [ -n "$n1" ] || fail "no pointers found ($s1 $s2 $n1)"
corrupt "$a" "$s1"
corrupt "$a" "$s2"
corrupt "$b" "$n1"

mount_fg s1 "$a:$b"
run_ok scrub1 "$BCACHEFS" data scrub "$mnt"
cat "$WORK/scrub1.out"
grep -q "inode $i1 at byte 0: checksum error on device 0 sector $s1" "$WORK/scrub1.out" || fail "scrub did not report f1"
grep -q "inode $i2 at byte 0: checksum error on device 0 sector $s2" "$WORK/scrub1.out" || fail "scrub did not report f2"
grep -q "btree dirents level 0 .*copy on device 1 sector $n1 is bad" "$WORK/scrub1.out" || fail "scrub did not report the btree node"
grep -q "scrub: done.*3 repaired" "$WORK/scrub1.out" || fail "scrub: not 3 repaired"
run_ok scrub2 "$BCACHEFS" data scrub "$mnt"
grep -q "checksum\|bad\|repaired" "$WORK/scrub2.out" && { cat "$WORK/scrub2.out"; fail "the second scrub is not clean"; }
cmp -s "$WORK/f1" "$mnt/d/e/f1" && cmp -s "$WORK/f2" "$mnt/d/f2" || fail "files differ after scrub"
unmount_fg s1
fsck_clean repaired "$a" "$b"
# device 0 alone now holds good copies of everything
mount_fg s2 "$a" -o ro,degraded
cmp -s "$WORK/f1" "$mnt/d/e/f1" && cmp -s "$WORK/f2" "$mnt/d/f2" || fail "device 0 alone: files differ"
ls "$mnt/d" > /dev/null || fail "device 0 alone: the directory"
unmount_fg s2

# one replica: nothing to repair from
one=$WORK/one.img
mkimg one.img 64M
run_ok format1 "$BCACHEFS" format -q "$one"
mount_fg s3 "$one"
mkdir -p "$mnt/docs/2024"
cp "$WORK/f1" "$mnt/docs/2024/report.bin"
cp "$WORK/f2" "$mnt/docs/fine.bin"
i3=$(stat -c %i "$mnt/docs/2024/report.bin")
unmount_fg s3
s3=$("$BCACHEFS" list -b extents -i "$i3" "$one" | grep -o 'ptr: 0:[0-9]*' | head -n 1 | cut -d: -f3)
corrupt "$one" "$s3"
mount_fg s4 "$one"
run_fails scrub3 1 "not repaired: /docs/2024/report.bin (inode $i3) at byte 0" "$BCACHEFS" data scrub "$mnt"
grep -q "fine.bin" "$WORK/scrub3.out" && fail "scrub names a file that is fine"
unmount_fg s4
