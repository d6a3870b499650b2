#!/bin/sh
# Degraded: a member of a --replicas=2 filesystem
# goes missing (its image file removed). A normal mount is refused; `mount
# -o degraded` works and every file reads back; writes go on (one copy).
# `device add` a new device and `data rereplicate` restore two copies of
# everything, `device remove --by-index` drops the lost member (refused
# before the rereplicate: data would be left with one copy); then the
# filesystem mounts without the lost member and without -o degraded, and
# fsck finds nothing.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/lib_online.sh"
online_setup
a=$WORK/a.img b=$WORK/b.img c=$WORK/c.img
mkimg a.img 256M
mkimg b.img 256M
mkimg c.img 256M
run_ok format "$BCACHEFS" format -q --replicas=2 "$a" "$b"
python3 "$GEN_TREE" "$WORK/src" 150 6 > /dev/null || fail "gen_tree"

mount_fg d0 "$a:$b"
cp -a "$WORK/src" "$mnt/tree" || fail "cp -a"
manifest "$mnt/tree" "$WORK/manifest.0"
unmount_fg d0
rm -f "$b"

# a normal mount refuses; a degraded one reads everything
mkdir -p "$WORK/mnt-x"
run_fails nodeg 1 "insufficient devices" "$BCACHEFS" mount -f "$a" "$WORK/mnt-x"
mount_fg d1 "$a" -o degraded
manifest "$mnt/tree" "$WORK/manifest.1"
cmp -s "$WORK/manifest.0" "$WORK/manifest.1" || fail "files differ on the degraded mount"
head -c 3000000 /dev/urandom > "$WORK/new"
cp "$WORK/new" "$mnt/new" || fail "write while degraded"
run_ok u1 "$BCACHEFS" fs usage "$mnt"
grep -q "^none (device 1): *(offline) *readwrite$" "$WORK/u1.out" || { cat "$WORK/u1.out"; fail "the missing member is not shown offline"; }

# removing the lost member now would leave one copy
run_fails early 1 "degrading data\|lose a copy\|metadata would have 1 copy" "$BCACHEFS" device remove --no-evacuate --by-index 1 "$mnt"

run_ok add "$BCACHEFS" device add "$mnt" "$c"
run_ok rerep "$BCACHEFS" data rereplicate "$mnt"
run_ok remove "$BCACHEFS" device remove --by-index 1 "$mnt"
run_ok u2 "$BCACHEFS" fs usage --json "$mnt"
python3 - "$WORK/u2.out" <<'PY' || { cat "$WORK/u2.out"; fail "after the rereplicate"; }
import json, sys
u = json.load(open(sys.argv[1]))
assert sorted(d["index"] for d in u["devices"]) == [0, 2], u["devices"]
for r in u["replicas"]:
    if r["data_type"] in ("data", "btree", "journal"):
        assert r["devices"] == [0, 2], r
PY
cmp -s "$WORK/new" "$mnt/new" || fail "the file written degraded changed"
unmount_fg d1

# without the lost member and without -o degraded
mount_fg d2 "$a:$c"
manifest "$mnt/tree" "$WORK/manifest.2"
cmp -s "$WORK/manifest.0" "$WORK/manifest.2" || fail "files differ after the repair"
cmp -s "$WORK/new" "$mnt/new" || fail "the file written degraded differs"
unmount_fg d2
fsck_clean final "$a" "$c"
# and each copy alone is complete: either device is enough to read everything
for one in "$a" "$c"; do
	mount_fg one "$one" -o ro,degraded
	manifest "$mnt/tree" "$WORK/manifest.x"
	cmp -s "$WORK/manifest.0" "$WORK/manifest.x" || fail "$one alone does not hold every file"
	cmp -s "$WORK/new" "$mnt/new" || fail "$one alone does not hold the file written degraded"
	unmount_fg one
done
