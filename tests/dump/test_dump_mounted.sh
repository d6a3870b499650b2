#!/bin/sh
# dump of a mounted filesystem: the mount is asked to flush its journal
# first (BCH_CTL_JOURNAL_FLUSH on its control socket), so the images hold
# every change made through the mount. The mount's journal timer is held
# off (BCH_TEST_JOURNAL_DELAY_MS) and a read of the device before the dump
# must not see the new files yet: only the flush can have written them.
# Then the mount goes on working and unmounts clean.
. "$TESTDIR/../lib.sh"
command -v qemu-img > /dev/null || { echo "qemu-img needed (tests/deps.sh installs qemu-utils)"; exit 77; }
fuse_mount_setup
img=$WORK/m.img
truncate -s 64M "$img"
"$BCACHEFS" format -q "$img" > "$WORK/format.log" 2>&1 || { cat "$WORK/format.log"; fail "format"; }

BCH_TEST_JOURNAL_DELAY_MS=600000 mount_fg m "$img"
mkdir "$mnt/d" || fail "mkdir"
for i in 1 2 3 4 5 6 7 8; do
	echo "content $i" > "$mnt/d/file-$i" || fail "write file-$i"
done

# what is on the device now: not the new files (the journal is not written)
"$BCACHEFS" list -b dirents "$img" > "$WORK/before.list" 2>&1
grep -q 'file-7' "$WORK/before.list" &&
	{ echo "the journal was written before the dump asked for it: the test proves nothing"; fail "premise"; }

"$BCACHEFS" dump -o "$WORK/m.qcow2" "$img" > "$WORK/dump.log" 2>&1 || { cat "$WORK/dump.log"; fail "dump of the mounted filesystem"; }
cat "$WORK/dump.log"
grep -q 'could not be flushed' "$WORK/dump.log" && fail "dump did not flush the mount's journal"
qemu-img check "$WORK/m.qcow2" > "$WORK/check.log" 2>&1 || { cat "$WORK/check.log"; fail "qemu-img check"; }
qemu-img convert -O raw "$WORK/m.qcow2" "$WORK/m.raw" || fail "qemu-img convert"
"$BCACHEFS" list -b dirents "$WORK/m.raw" > "$WORK/after.list" 2>&1 || { cat "$WORK/after.list"; fail "list of the dump"; }
for i in 1 2 3 4 5 6 7 8; do
	grep -q "file-$i " "$WORK/after.list" || { cat "$WORK/after.list"; fail "file-$i is not in the dump"; }
done

# the mount is unharmed
echo more > "$mnt/d/after" || fail "write after the dump"
[ "$(cat "$mnt/d/file-3")" = "content 3" ] || fail "file-3 reads back wrong"
unmount_fg m
"$BCACHEFS" fsck -f -n "$img" > "$WORK/fsck.log" 2>&1 || { cat "$WORK/fsck.log"; fail "fsck -f -n after unmount"; }
exit 0
