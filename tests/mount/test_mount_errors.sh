#!/bin/sh
# The error action when the mount finds a node with no good copy
# (core/integrity.h): the superblock's (format --error_action) unless -o errors= says
# otherwise. A dirents leaf damaged (its checksum no longer matches):
#   remount-ro (the default): mounted, read-only at once: writes fail with
#     EROFS, reads are right or EIO, `fs usage` says read-only;
#   continue: mounted read-write, writes outside the damaged range work;
#   panic: the read-write mount refuses; a read-only mount ends when a read
#     meets the node (exit 1, unmounted);
# and the damage is still there for fsck after each. -o errors=bogus is a
# usage error.
. "$TESTDIR/../lib.sh"
fuse_mount_setup
py="python3 $TESTDIR/integrity.py"

$py tree "$WORK/src" 2>/dev/null || { echo "no user xattrs on $WORK"; exit 77; }
$py manifest "$WORK/src" "$WORK/manifest.json"
img=$WORK/e.img
truncate -s 64M "$img"
"$BCACHEFS" format -q --btree_node_size=2k --block_size=512 --source="$WORK/src" "$img" \
	> /dev/null 2>&1 || fail "format --source"
"$BCACHEFS" list -b dirents -m nodes --json "$img" > "$WORK/nodes.json" || fail "list"
set -- $($py pick "$WORK/nodes.json" leaf)
sector=$2 u64s=$6
$py damage "$img" $sector flip 2048 $u64s

# still_damaged NAME [-f]: fsck -n reports the node (a read-write mount
# left the filesystem marked not clean: no -f needed after one)
still_damaged() {
	"$BCACHEFS" fsck -n $2 "$img" > "$WORK/n.out" 2>&1
	[ $? = 4 ] && grep -q "sector $sector" "$WORK/n.out" || { cat "$WORK/n.out"; fail "$1: the damage is gone"; }
}

# remount-ro, the superblock's default
mount_fg ro "$img"
# (a name whose hash falls in the damaged leaf's range fails its lookup
# first, with EIO: the directory's hash seed is random, so several names)
erofs=0
for n in new1 new2 new3 new4 new5 new6; do
	( echo x > "$mnt/$n" ) 2> "$WORK/w.err" && fail "remount-ro: a write worked"
	grep -q "Read-only file system" "$WORK/w.err" && erofs=1
	grep -q -e "Read-only file system" -e "Input/output error" "$WORK/w.err" ||
		{ cat "$WORK/w.err"; fail "remount-ro: neither EROFS nor EIO"; }
done
[ $erofs = 1 ] || { cat "$WORK/w.err"; fail "remount-ro: not EROFS"; }
$py check "$mnt" "$WORK/manifest.json" || fail "remount-ro: a read was wrong"
"$BCACHEFS" fs usage --json "$mnt" | python3 -c '
import json, sys
i = json.load(sys.stdin)["integrity"]
assert i["error_action"] == "remount-ro" and i["read_only"] and i["nodes_bad"] >= 1, i' ||
	fail "remount-ro: fs usage"
unmount_fg ro
grep -q "no copy verifies.*the filesystem is read-only from now on (errors=remount-ro)" "$WORK/ro.log" ||
	fail "remount-ro: the log line"
grep -q "mounted read-only (errors=remount-ro)" "$WORK/ro.log" || fail "remount-ro: not said"
still_damaged remount-ro

# continue (mount option over the superblock)
mount_fg cont "$img" -o errors=continue
made=0
for n in 1 2 3 4 5 6 7 8 9 10; do
	( echo x > "$mnt/new$n" ) 2>/dev/null && made=$((made + 1))
done
[ $made -gt 0 ] || fail "continue: no write worked"
$py check "$mnt" "$WORK/manifest.json" || fail "continue: a read was wrong"
unmount_fg cont
grep -q "no copy verifies.*reads of that range fail with EIO, nothing is written over it (errors=continue)" \
	"$WORK/cont.log" || fail "continue: the log line"
still_damaged continue

# panic: no read-write mount; a read-only one ends at the first read of the node
mkdir -p "$WORK/mnt-p"
"$BCACHEFS" mount -f -o errors=panic "$img" "$WORK/mnt-p" > "$WORK/p.log" 2>&1 &&
	{ fusermount3 -u "$WORK/mnt-p"; fail "panic: mounted read-write"; }
grep -q "errors=panic: run bcachefs fsck; nothing mounted" "$WORK/p.log" || { cat "$WORK/p.log"; fail "panic: the refusal"; }
mount_fg pro "$img" -o ro,errors=panic
ls "$mnt" > /dev/null 2>&1 && fail "panic: the damaged directory listed"
i=0
while kill -0 $pid 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "panic: the mount did not end"
	sleep 0.1
done
wait $pid
rc=$?
cat "$WORK/pro.log"
[ $rc = 1 ] || fail "panic: the mount exited with $rc"
is_mounted "$mnt" && fail "panic: still mounted"
grep -q "the mount stops now, the journal kept .*(errors=panic)" "$WORK/pro.log" || fail "panic: the log line"
still_damaged panic -f

# the superblock's panic
cp --sparse=always "$img" "$WORK/p.img"
truncate -s 64M "$WORK/p2.img"
"$BCACHEFS" format -q --btree_node_size=2k --block_size=512 --error_action=panic \
	--source="$WORK/src" "$WORK/p2.img" > /dev/null 2>&1 || fail "format --error_action=panic"
set -- $("$BCACHEFS" list -b dirents -m nodes --json "$WORK/p2.img" > "$WORK/n2.json" && $py pick "$WORK/n2.json" leaf)
$py damage "$WORK/p2.img" $2 flip 2048 $6
"$BCACHEFS" mount -f "$WORK/p2.img" "$WORK/mnt-p" > "$WORK/p2.log" 2>&1 &&
	{ fusermount3 -u "$WORK/mnt-p"; fail "superblock panic: mounted"; }
grep -q "(errors=panic)" "$WORK/p2.log" || { cat "$WORK/p2.log"; fail "superblock panic: not followed"; }

"$BCACHEFS" mount -o errors=bogus "$img" "$WORK/mnt-p" > "$WORK/u.log" 2>&1
[ $? = 16 ] || { cat "$WORK/u.log"; fail "-o errors=bogus: not a usage error"; }
exit 0
