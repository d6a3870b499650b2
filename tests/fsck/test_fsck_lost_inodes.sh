#!/bin/sh
# Inodes lost with their btree node:
# the inodes btree of a filesystem of a few hundred files is one leaf, its
# root, and that node is zeroed: the node scan finds no copy of it (only
# the leaf of the first mount, older), so the inodes are gone while their
# dirents, extents and xattrs survive. fsck -y used to delete every one of
# those keys as keys of missing inodes: the whole tree and its data. Now:
#   - fsck -f -n reports each lost inode (inode_lost, id 528) and no key as
#     to be deleted, and writes nothing;
#   - fsck -y recreates the inodes from their keys; a second fsck -f -n is
#     clean;
#   - every path is there again, under its own name (nothing in
#     lost+found), every file holds its bytes (the size is rounded up to
#     the sector: the exact size was in the lost inode), symlinks their
#     targets;
#   - no dirent, extent or xattr key was deleted.
. "$TESTDIR/../lib.sh"
python3 "$TESTDIR/../format/gen_tree.py" "$WORK/src" 300 3 > /dev/null || fail "gen_tree"
img=$WORK/img
truncate -s 256M "$img"
"$BCACHEFS" format -q --source="$WORK/src" "$img" > "$WORK/format.out" 2>&1 || { cat "$WORK/format.out"; fail "format --source"; }
for b in dirents extents xattrs; do
	"$BCACHEFS" list -b $b "$img" 2>/dev/null | grep -c "^u64s" > "$WORK/$b.0"
done

# the inodes root: one leaf holding every inode (a deeper tree would not test the same)
"$BCACHEFS" list -b inodes -m nodes "$img" > "$WORK/nodes" 2>&1 || { cat "$WORK/nodes"; fail "list nodes"; }
[ "$(grep -c '^l ' "$WORK/nodes")" = 1 ] || { cat "$WORK/nodes"; fail "the inodes btree is not one node"; }
sector=$(awk '/^    bsets .*dev 0 sector/ { print $NF; exit }' "$WORK/nodes")
[ -n "$sector" ] || fail "no inodes root found"
nodesz=$("$BCACHEFS" show-super "$img" | awk '/^Btree node size:/ { print $4 }')
dd if=/dev/zero of="$img" bs=512 seek="$sector" count=256 conv=notrunc status=none
cp --sparse=always "$img" "$WORK/damaged"

"$BCACHEFS" fsck -f -n "$img" > "$WORK/n.out" 2>&1; rc=$?
crashed $rc && fail "fsck -f -n crashed"
[ $rc = 4 ] || { cat "$WORK/n.out"; fail "fsck -f -n exit $rc, want 4"; }
cmp -s "$img" "$WORK/damaged" || fail "fsck -f -n changed the image"
grep -q "(inode_lost, id 528)" "$WORK/n.out" || { cat "$WORK/n.out"; fail "fsck -f -n: no lost inode reported"; }
grep -q "missing inode\|nonexisting directory\|missing directory" "$WORK/n.out" &&
	{ cat "$WORK/n.out"; fail "fsck -f -n would delete keys of the lost inodes"; }

"$BCACHEFS" fsck -y "$img" > "$WORK/y.out" 2>&1; rc=$?
crashed $rc && fail "fsck -y crashed"
[ $rc = 1 ] || { cat "$WORK/y.out"; fail "fsck -y exit $rc, want 1"; }
grep -q "missing inode\|nonexisting directory\|missing directory" "$WORK/y.out" &&
	{ cat "$WORK/y.out"; fail "fsck -y deleted keys of the lost inodes"; }
"$BCACHEFS" fsck -f -n "$img" > "$WORK/n2.out" 2>&1 || { cat "$WORK/y.out" "$WORK/n2.out"; fail "not clean after fsck -y"; }

for b in dirents extents xattrs; do
	"$BCACHEFS" list -b $b "$img" 2>/dev/null | grep -c "^u64s" > "$WORK/$b.1"
	cmp -s "$WORK/$b.0" "$WORK/$b.1" || fail "$b: $(cat "$WORK/$b.0") keys before, $(cat "$WORK/$b.1") after"
done

"$BCACHEFS" extract "$img" / "$WORK/out" > "$WORK/extract.out" 2>&1 || { cat "$WORK/extract.out"; fail "extract"; }
[ -z "$(ls -A "$WORK/out/lost+found" 2>/dev/null)" ] || fail "lost+found is not empty: $(ls "$WORK/out/lost+found" | head)"
python3 - "$WORK/src" "$WORK/out" <<'PY' || fail "the tree differs"
import os, stat, sys
src, out = sys.argv[1], sys.argv[2]
bad = 0
for root, dirs, files in os.walk(src):
    for n in dirs + files:
        a = os.path.join(root, n)
        b = os.path.join(out, os.path.relpath(a, src))
        sa = os.lstat(a)
        try:
            sb = os.lstat(b)
        except FileNotFoundError:
            print("missing:", b); bad += 1; continue
        if stat.S_IFMT(sa.st_mode) != stat.S_IFMT(sb.st_mode):
            print("type differs:", b); bad += 1; continue
        if stat.S_ISLNK(sa.st_mode):
            if os.readlink(a) != os.readlink(b).rstrip("\0"):
                print("symlink target differs:", b); bad += 1
        elif stat.S_ISREG(sa.st_mode):
            da, db = open(a, "rb").read(), open(b, "rb").read()
            # the size is rounded up to the sector: the rest must be zeros
            if db[:len(da)] != da.ljust(min(len(db), len(da)), b"\0")[:len(db)] or db[len(da):].strip(b"\0"):
                print("data differs:", b, len(da), len(db)); bad += 1
sys.exit(1 if bad else 0)
PY
exit 0
