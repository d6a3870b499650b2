#!/bin/sh
# Repair on read: replicas=2, one copy of a dirents leaf and one
# copy of a file's data damaged (the copy read first). Read-only mount:
# everything reads right from the other copies and nothing is written
# (fsck -n still reports the bad node copy). Read-write mount: everything
# reads right, the log says each bad copy was rewritten, `fs usage` counts
# them, and after the unmount fsck -n finds every node copy good and an
# offline scrub finds no bad data copy.
. "$TESTDIR/../lib.sh"
fuse_mount_setup
py="python3 $TESTDIR/integrity.py"

$py tree "$WORK/src" 2>/dev/null || { echo "no user xattrs on $WORK"; exit 77; }
$py manifest "$WORK/src" "$WORK/manifest.json"
a=$WORK/a.img b=$WORK/b.img
truncate -s 64M "$a" "$b"
"$BCACHEFS" format -q --btree_node_size=2k --block_size=512 --replicas=2 \
	--source="$WORK/src" "$a" "$b" > /dev/null 2>&1 || fail "format --source"

# the second leaf of the dirents btree: its pointers, the first one's copy damaged
ptrs=$("$BCACHEFS" list -b dirents -m nodes "$a" "$b" | awk '/^l 0 /{n++} n == 2 && /ptrs:/ {print; exit}')
set -- $(echo "$ptrs" | sed 's/.*ptrs: ptr: \([0-9]*\):\([0-9]*\) gen [0-9]* ptr: \([0-9]*\):\([0-9]*\) gen.*/\1 \2 \3 \4/')
[ $# = 4 ] || fail "two pointers of a dirents leaf: $ptrs"
ndev=$1 nsector=$2
# the data of f50: the first pointer's copy damaged
inum=$("$BCACHEFS" list -b dirents "$a" "$b" | sed -n 's/.*: f50 -> \([0-9]*\)$/\1/p')
ext=$("$BCACHEFS" list -b extents -i "$inum" "$a" "$b" | head -n 1)
set -- $(echo "$ext" | sed 's/.* ptr: \([0-9]*\):\([0-9]*\) gen [0-9]* ptr: \([0-9]*\):\([0-9]*\) gen.*/\1 \2 \3 \4/')
[ $# = 4 ] || fail "two pointers of f50's extent: $ext"
ddev=$1 dsector=$2
img_of() { [ "$1" = 0 ] && echo "$a" || echo "$b"; }
python3 - "$(img_of $ndev)" $((nsector * 512 + 300)) "$(img_of $ddev)" $((dsector * 512 + 100)) <<'PY'
import sys
for img, off in ((sys.argv[1], int(sys.argv[2])), (sys.argv[3], int(sys.argv[4]))):
    with open(img, "r+b") as f:
        f.seek(off); b = f.read(8); f.seek(off); f.write(bytes(x ^ 0x5a for x in b))
PY
"$BCACHEFS" fsck -n -f "$a" "$b" > "$WORK/n0.out" 2>&1
grep -q "copy.*unusable\|one copy of a btree node is bad" "$WORK/n0.out" || { cat "$WORK/n0.out"; fail "fsck -n does not see the bad node copy"; }

# read-only: served from the good copies, nothing written
mount_fg ro "$a:$b" -o ro
$py check "$mnt" "$WORK/manifest.json" > "$WORK/check-ro.out" 2>&1 || { cat "$WORK/check-ro.out"; fail "ro: a read was wrong"; }
grep -q " eio 0$" "$WORK/check-ro.out" || { cat "$WORK/check-ro.out"; fail "ro: reads failed though another copy is good"; }
unmount_fg ro
grep -q "copy on dev $ndev sector $nsector fails to verify.*read from dev .* instead (a read-only mount writes nothing)" "$WORK/ro.log" ||
	fail "ro: no log line for the bad node copy"
"$BCACHEFS" fsck -n -f "$a" "$b" > "$WORK/n1.out" 2>&1
grep -q "copy.*unusable\|one copy of a btree node is bad" "$WORK/n1.out" || { cat "$WORK/n1.out"; fail "the read-only mount wrote"; }

# read-write: repaired on read
mount_fg rw "$a:$b"
$py check "$mnt" "$WORK/manifest.json" > "$WORK/check-rw.out" 2>&1 || { cat "$WORK/check-rw.out"; fail "rw: a read was wrong"; }
grep -q " eio 0$" "$WORK/check-rw.out" || { cat "$WORK/check-rw.out"; fail "rw: reads failed though another copy is good"; }
"$BCACHEFS" fs usage --json "$mnt" > "$WORK/usage.json" || fail "fs usage"
python3 - "$WORK/usage.json" <<'PY' || fail "fs usage does not count the repairs"
import json, sys
i = json.load(open(sys.argv[1]))["integrity"]
print(i)
assert i["node_copies_repaired"] >= 1 and i["data_copies_repaired"] >= 1, i
assert i["nodes_bad"] == 0 and i["data_bad"] == 0 and not i["read_only"], i
PY
"$BCACHEFS" fs usage "$mnt" | grep -q "data copies repaired on read: *[1-9]" || fail "fs usage text"
unmount_fg rw
grep -q "copy on dev $ndev sector $nsector fails to verify.*rewritten from dev" "$WORK/rw.log" ||
	fail "rw: no log line for the node copy rewritten"
grep -q "repair on read: inode $inum at byte 0: repaired from device" "$WORK/rw.log" ||
	fail "rw: no log line for the data copy rewritten"

"$BCACHEFS" fsck -n -f "$a" "$b" > "$WORK/n2.out" 2>&1 || { cat "$WORK/n2.out"; fail "fsck -n not clean after repair on read"; }
"$BCACHEFS" data scrub "$a:$b" > "$WORK/scrub.out" 2>&1 || { cat "$WORK/scrub.out"; fail "offline scrub"; }
cat "$WORK/scrub.out"
grep -qi "bad\|checksum error\|repaired" "$WORK/scrub.out" && fail "scrub still finds a bad copy"
mount_fg again "$a:$b" -o ro
$py check "$mnt" "$WORK/manifest.json" > "$WORK/check-again.out" 2>&1 || fail "after the repair: a read was wrong"
unmount_fg again
grep -q "fails to verify" "$WORK/again.log" && fail "a bad copy is left after the repair"
exit 0
