#!/bin/sh
# The round trip an administrator lives: a
# filesystem of 2 devices with --replicas=2, mounted, a real tree copied in
# and a writer busy in the background the whole time; `device add` a
# third; `device set-state failed` on the first (refused without -f, it
# would degrade data); `data rereplicate`; `device remove` the first;
# `device resize` the third after its file grew. `fs usage` (text and
# JSON) at every step, its figures checked. The tree's sha256 manifest
# never changes, the writer's files are intact, and after unmount
# `fsck -f -n` of the remaining members exits 0, `fs usage` agrees with
# `list`, and `extract` gives the tree back exactly.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/lib_online.sh"
online_setup
a=$WORK/a.img b=$WORK/b.img c=$WORK/c.img
mkimg a.img 256M
mkimg b.img 256M
mkimg c.img 200M
run_ok format "$BCACHEFS" format -q --replicas=2 "$a" "$b"
python3 "$GEN_TREE" "$WORK/src" 200 8 > /dev/null || fail "gen_tree"

mount_fg rt "$a:$b"
cp -a "$WORK/src" "$mnt/tree" || fail "cp -a into the mount"
manifest "$mnt/tree" "$WORK/manifest.0"
python3 "$TESTDIR/writer.py" "$mnt/writer" "$WORK/stop" > "$WORK/writer.out" 2>&1 &
wpid=$!

# usage STEP PYTHON-CHECK: fs usage (text and JSON) must work and the JSON
# pass the check (u = the JSON; dev(i), entries(t) helpers)
usage() {
	run_ok "$1-text" "$BCACHEFS" fs usage "$mnt"
	run_ok "$1-json" "$BCACHEFS" fs usage --json "$mnt"
	python3 - "$WORK/$1-json.out" "$2" <<'PY' || { cat "$WORK/$1-text.out"; fail "$1: fs usage figures"; }
import json, sys
u = json.load(open(sys.argv[1]))
devs = {d["index"]: d for d in u["devices"]}
def dev(i): return devs[i]
def entries(t): return [tuple(r["devices"]) for r in u["replicas"] if r["data_type"] == t]
by = {(r["data_type"], r["nr_replicas"]): r["bytes"] for r in u["by_replicas"]}
# always: capacity and use add up, the per-device data is what the replicas say
assert u["capacity"] > 0 and 0 < u["used"] <= u["capacity"], (u["capacity"], u["used"])
data = sum(b * r for (t, r), b in by.items() if t == "data")
ondev = sum(d["data"]["data"]["bytes"] for d in u["devices"])
assert data == ondev, ("data x replicas", data, "on the devices", ondev)
for d in u["devices"]:
    assert d["available"] <= d["capacity"], d
exec(sys.argv[2])
PY
}

usage step0 'assert sorted(devs) == [0, 1] and set(entries("data")) == {(0, 1)}, (devs.keys(), entries("data"))'

run_ok add "$BCACHEFS" device add "$mnt" "$c"
usage step1 'assert sorted(devs) == [0, 1, 2] and dev(2)["state"] == "readwrite" and dev(2)["capacity"] == 200 << 20'

run_fails failed-refused 1 "would lose a copy" "$BCACHEFS" device set-state "$a" failed
run_ok failed "$BCACHEFS" device set-state -f "$a" failed
usage step2 'assert dev(0)["state"] == "failed"'

run_ok rereplicate "$BCACHEFS" data rereplicate "$mnt"
grep -q "rereplicate: done" "$WORK/rereplicate.out" || { cat "$WORK/rereplicate.out"; fail "rereplicate: no done line"; }
# every data and btree entry keeps 2 copies off the failed device
usage step3 'assert all(len(set(e) - {0}) >= 2 for t in ("data", "btree") for e in entries(t)), u["replicas"]'

run_ok remove "$BCACHEFS" device remove "$a"
usage step4 'assert sorted(devs) == [1, 2] and all(0 not in e for r in u["replicas"] for e in [r["devices"]]), u["replicas"]'
run_fails remove-again 1 "" "$BCACHEFS" device remove "$a"

truncate -s 300M "$c"
run_ok resize "$BCACHEFS" device resize "$c"
! grep -q "^Doing\|ioctl" "$WORK/resize.out" || { cat "$WORK/resize.out"; fail "resize: an action or ioctl line"; }
grep -q "^resized $c to 2400 buckets" "$WORK/resize.out" || { cat "$WORK/resize.out"; fail "resize: buckets"; }
usage step5 'assert dev(2)["capacity"] == 300 << 20, dev(2)["capacity"]'
run_fails shrink 1 "shrinking is not supported" "$BCACHEFS" device resize "$c" 100M

touch "$WORK/stop"
wait $wpid || { cat "$WORK/writer.out"; fail "writer failed"; }
nw=$(tail -n 1 "$WORK/writer.out")
run_ok writer-check python3 "$TESTDIR/writer.py" --check "$mnt/writer" "$nw"
manifest "$mnt/tree" "$WORK/manifest.1"
cmp -s "$WORK/manifest.0" "$WORK/manifest.1" || { diff "$WORK/manifest.0" "$WORK/manifest.1" | head; fail "the tree changed"; }
unmount_fg rt

fsck_clean after "$b" "$c"
usage_vs_list final "$b:$c" "$b" "$c"
"$BCACHEFS" extract "$b" "$c" / "$WORK/out" > "$WORK/extract.log" 2>&1 || { cat "$WORK/extract.log"; fail "extract"; }
python3 "$TREE_DIFF" "$WORK/src" "$WORK/out/tree" > "$WORK/tree.diff" 2>&1 || { cat "$WORK/tree.diff"; fail "extract differs from the tree"; }
run_ok writer-extract python3 "$TESTDIR/writer.py" --check "$WORK/out/writer" "$nw"
