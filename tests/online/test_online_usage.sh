#!/bin/sh
# Finding a running filesystem (doc/ioctl.md §1-2) and `fs usage`:
# BCH_IOCTL_QUERY_UUID answered by ioctl(2) on a directory and a
# file of the mount; `fs usage` reached through the mountpoint, a path inside,
# a file, the UUID and a member device gives the same figures; JSON for
# scripts; anyone may read usage; clear errors for a path that is not
# bcachefs and for a filesystem that is not mounted; after unmount the same
# command on the devices (in-process) agrees with an independent count from
# `list` (data and btree bytes per replicas count and per replicas entry,
# user-data buckets and sectors per device); a read-only mount answers
# usage and refuses changes; a socket left by a killed mount is replaced by
# the next mount.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/lib_online.sh"
online_setup
a=$WORK/a.img b=$WORK/b.img
mkimg a.img 256M
mkimg b.img 256M
run_ok format "$BCACHEFS" format -q --replicas=2 "$a" "$b"
uuid=$("$BCACHEFS" show-super "$a" | awk '/^External UUID:/ { print $3 }')

mount_fg m "$a:$b"
python3 "$GEN_TREE" "$mnt/tree" 50 3 > /dev/null || fail "gen_tree"

# QUERY_UUID by ioctl(2) on a directory and on a file of the mount
for p in "$mnt" "$mnt/tree/dir" "$mnt/tree/hello.txt"; do
	got=$(python3 -c '
import fcntl, os, sys, uuid
fd = os.open(sys.argv[1], os.O_RDONLY)
b = bytearray(16)
fcntl.ioctl(fd, 0x8010bc01, b)
print(uuid.UUID(bytes=bytes(b)))' "$p") || fail "QUERY_UUID on $p"
	[ "$got" = "$uuid" ] || fail "QUERY_UUID on $p: $got, not $uuid"
done

# every way of naming it gives the same figures
run_ok u1 "$BCACHEFS" fs usage "$mnt"
grep -q "^Filesystem $uuid:" "$WORK/u1.out" || { cat "$WORK/u1.out"; fail "no Filesystem line"; }
grep -q "^none (device 0): *$a *readwrite$" "$WORK/u1.out" || { cat "$WORK/u1.out"; fail "device 0 line"; }
for arg in "$mnt/tree/dir" "$mnt/tree/hello.txt" "$uuid" "$a"; do
	run_ok u2 "$BCACHEFS" fs usage "$arg"
	cmp -s "$WORK/u1.out" "$WORK/u2.out" || { diff "$WORK/u1.out" "$WORK/u2.out"; fail "fs usage $arg differs"; }
done
(cd "$mnt/tree" && "$BCACHEFS" fs usage) > "$WORK/u3.out" 2>&1 || fail "fs usage with no argument"
cmp -s "$WORK/u1.out" "$WORK/u3.out" || fail "fs usage of . differs"
run_ok uh "$BCACHEFS" fs usage -h "$mnt"
grep -q '^Size: *[0-9.]*M$' "$WORK/uh.out" || { cat "$WORK/uh.out"; fail "-h: no human size"; }
run_ok uj "$BCACHEFS" fs usage --json "$mnt"
python3 - "$WORK/uj.out" "$uuid" <<'PY' || fail "fs usage --json"
import json, sys
u = json.load(open(sys.argv[1]))
assert u["uuid"] == sys.argv[2], u["uuid"]
assert u["capacity"] > 400 << 20 and u["used"] > 0
by = {(r["data_type"], r["nr_replicas"]): r["bytes"] for r in u["by_replicas"]}
assert by.get(("data", 2), 0) > 3 << 20 and ("data", 1) not in by, by
assert [d["index"] for d in u["devices"]] == [0, 1]
for d in u["devices"]:
    assert d["state"] == "readwrite" and d["data"]["data"]["bytes"] == by[("data", 2)]
    assert d["available"] < d["capacity"]
kinds = {(r["data_type"], tuple(r["devices"])) for r in u["replicas"]}
assert {("btree", (0, 1)), ("data", (0, 1)), ("journal", (0, 1))} <= kinds, kinds
PY

# usage is open to everyone (the mount itself is not: FUSE without
# allow_other, so by UUID); the superblock (labels) is not
if command -v setpriv > /dev/null; then
	chmod 755 "$WORK"
	run_ok nobody setpriv --reuid=65534 --regid=65534 --clear-groups "$BCACHEFS" fs usage "$uuid"
	grep -q "^none (device 1):" "$WORK/nobody.out" || { cat "$WORK/nobody.out"; fail "usage as nobody"; }
fi

# errors
run_fails notbch 1 "not a bcachefs filesystem" "$BCACHEFS" fs usage "$WORK"
run_fails nouuid 1 "is not mounted" "$BCACHEFS" fs usage 01234567-89ab-cdef-0123-456789abcdef
run_fails noent 1 "No such file" "$BCACHEFS" fs usage "$WORK/nothing"
run_fails badopt 16 "Try" "$BCACHEFS" fs usage --bogus "$mnt"

cp "$WORK/uj.out" "$WORK/mounted.json"
unmount_fg m
[ ! -e "$BCACHEFS_RUN_DIR/$uuid/ctl" ] || fail "control socket left after unmount"

# unmounted: in-process, and against list
usage_vs_list off "$a:$b" "$a" "$b"
python3 - "$WORK/mounted.json" "$WORK/off-usage.out" <<'PY' || fail "mounted and unmounted data figures differ"
import json, sys
m, o = (json.load(open(p)) for p in sys.argv[1:3])
f = lambda u: sorted((r["data_type"], r["nr_replicas"], r["bytes"]) for r in u["by_replicas"] if r["data_type"] == "data")
assert f(m) == f(o), (f(m), f(o))
PY
run_fails onedev 1 "insufficient devices" "$BCACHEFS" fs usage "$a"

# a read-only mount answers usage; changes are refused with the reason
mount_fg ro "$a:$b" -o ro
run_ok u-ro "$BCACHEFS" fs usage "$mnt"
run_fails ro-state 1 "mounted read-only" "$BCACHEFS" device set-state "$a" ro
run_fails ro-job 1 "mounted read-only" "$BCACHEFS" data rereplicate "$mnt"
unmount_fg ro

# a mount killed leaves its socket behind: the next mount replaces it
mount_fg k "$a:$b"
# (the socket may come a moment after the mount point: wait for it)
i=0
while [ ! -S "$BCACHEFS_RUN_DIR/$uuid/ctl" ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -9 $pid
wait $pid 2>/dev/null
fusermount3 -u -z "$mnt" 2>/dev/null
[ -S "$BCACHEFS_RUN_DIR/$uuid/ctl" ] || fail "no stale socket after kill -9 (test premise)"
run_fails stale 1 "" "$BCACHEFS" fs usage "$uuid"
mount_fg k2 "$a:$b"
run_ok u4 "$BCACHEFS" fs usage "$mnt"
unmount_fg k2
fsck_clean final "$a" "$b"
