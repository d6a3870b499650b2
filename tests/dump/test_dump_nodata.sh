#!/bin/sh
# dump never copies file data: every file of a source tree (small, large,
# sparse, symlink targets) carries a marker string; the formatted image
# holds it (so the check can fail), the dump and its raw conversion never.
# Also with 512-byte blocks and buckets of the node size (clusters next to
# data buckets), and with compression off and on.
. "$TESTDIR/../lib.sh"
command -v qemu-img > /dev/null || { echo "qemu-img needed (tests/deps.sh installs qemu-utils)"; exit 77; }
command -v python3 > /dev/null || { echo "python3 needed"; exit 77; }
src=$WORK/src
python3 - "$src" <<'PY'
import os, sys
root = sys.argv[1]
m = b"DUMP-MARKER-7f3a9c "
os.makedirs(root + "/d/e")
for i in range(300):
    with open("%s/%s/f%03d" % (root, "d" if i % 2 else "d/e", i), "wb") as f:
        f.write(m * (1 + (i * 37) % 700))
with open(root + "/big", "wb") as f:
    f.write(m * 200000)
with open(root + "/sparse", "wb") as f:
    f.write(m)
    f.seek(5 << 20)
    f.write(m * 10)
for i in range(20):
    os.symlink(m.decode().strip() + "-link-%d" % i, root + "/l%02d" % i)
PY
n=0
for opts in "" "--block_size=512 --bucket=128k --btree_node=128k" "--compression=lz4"; do
	n=$((n + 1))
	img=$WORK/fs$n.img
	truncate -s 128M "$img"
	"$BCACHEFS" format -q $opts --source="$src" "$img" > "$WORK/format$n.log" 2>&1 ||
		{ cat "$WORK/format$n.log"; fail "format $opts"; }
	if [ -z "$opts" ] || [ $n = 2 ]; then
		grep -qa DUMP-MARKER-7f3a9c "$img" || fail "format $opts: the marker is not in the image"
	fi
	"$BCACHEFS" dump -o "$WORK/fs$n.qcow2" "$img" > "$WORK/dump$n.log" 2>&1 ||
		{ cat "$WORK/dump$n.log"; fail "dump $opts"; }
	qemu-img convert -O raw "$WORK/fs$n.qcow2" "$WORK/fs$n.raw" || fail "convert $opts"
	! grep -qa DUMP-MARKER-7f3a9c "$WORK/fs$n.qcow2" "$WORK/fs$n.raw" ||
		fail "dump $opts: file data in the image"
	# and it is a dump of this filesystem: the tree's names are there
	"$BCACHEFS" list -b dirents "$WORK/fs$n.raw" | grep -q ": f299 -> " ||
		fail "dump $opts: the dirents do not read back"
	"$BCACHEFS" fsck -f -n "$WORK/fs$n.raw" > "$WORK/fsck$n.log" 2>&1
	rc=$?
	# the data is not there: only checksums of data could complain, and fsck -f -n reads none
	[ $rc = 0 ] || { cat "$WORK/fsck$n.log"; fail "fsck -f -n of the dump of $opts: rc=$rc"; }
done
exit 0
