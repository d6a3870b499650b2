# Hash-table repairs that the corpus does not reach (doc/format.md §5.6.3):
# removing an entry from the middle of a probe run leaves a whiteout when
# a later entry of the run probed past it, so that entry stays reachable,
# and a name already taken in lost+found gets a suffix. The image
# (tests/fsck/repair/whiteout.img.zst, see the README there):
#   /d:   ghost -> 99999 sits at keep's hash, keep one slot further
#   /:    mover (a second link to /d/keep) sits at d's hash (not its own),
#         d one slot further
#   top's dirent removed, lost+found already holds a "4101" (-> d/bad)
# And the keys of a missing root directory are not hash-checked by fsck -f -n
# (its hash seed is unknown): with the root inode removed from a tree whose
# root has xattrs, -n reports the missing root only; -y recreates it and
# moves its dirents and xattrs to the new seed's slots.
set -e
. "$(dirname "$0")/../lib.sh"

img=$WORK/img
zstd -qd --sparse "$TESTDIR/repair/whiteout.img.zst" -o "$img"
cp --sparse=always "$img" "$WORK/orig"

set +e
"$BCACHEFS" fsck -f -n "$img" > "$WORK/n1" 2>&1; rc=$?
set -e
[ $rc = 4 ] || { cat "$WORK/n1"; fail "fsck -f -n: exit $rc, want 4"; }
cmp -s "$img" "$WORK/orig" || fail "fsck -f -n changed the image"

set +e
"$BCACHEFS" fsck -y "$img" > "$WORK/y" 2>&1; rc=$?
set -e
crashed $rc && { cat "$WORK/y"; fail "fsck -y crashed ($rc)"; }
[ $rc = 1 ] || { cat "$WORK/y"; fail "fsck -y: exit $rc, want 1"; }
grep -q "6 problems found, 6 fixed, 0 left" "$WORK/y" || { cat "$WORK/y"; fail "fsck -y: not 6 fixed"; }
"$BCACHEFS" fsck -f -n "$img" > "$WORK/n2" 2>&1 || { cat "$WORK/y" "$WORK/n2"; fail "fsck -f -n after fsck -y: exit $?"; }

"$BCACHEFS" list -b dirents "$img" > "$WORK/dirents"
# the two removed slots are whiteouts (a plain deletion would cut the run)
n=$(grep -c ': whiteout$' "$WORK/dirents" || true)
[ "$n" = 2 ] || { cat "$WORK/dirents"; fail "$n whiteouts, want 2"; }
grep -q "4096:1014608504085085764 .*: whiteout$" "$WORK/dirents" || fail "no whiteout where mover was"
grep -q "4098:1633127989696075410 .*: whiteout$" "$WORK/dirents" || fail "no whiteout where ghost was"
grep -q "ghost" "$WORK/dirents" && fail "ghost still there"
grep -q "4096:7920493123664030559 .*: mover -> 4100$" "$WORK/dirents" || fail "mover not at its hash"

# everything reachable by name; top reattached as 4101.1 (4101 was taken)
"$BCACHEFS" extract "$img" / "$WORK/out" > "$WORK/extract" 2>&1 || { cat "$WORK/extract"; fail "extract"; }
[ "$(cat "$WORK/out/d/keep")" = hello ] || fail "d/keep"
[ "$(cat "$WORK/out/mover")" = hello ] || fail "mover"
[ "$(cat "$WORK/out/d/bad")" = other ] || fail "d/bad"
[ "$(cat "$WORK/out/lost+found/4101")" = other ] || fail "lost+found/4101 changed"
[ "$(cat "$WORK/out/lost+found/4101.1")" = x ] || fail "top not reattached as lost+found/4101.1"
echo "ok: whiteouts kept the runs, names kept"

# ---- the root's xattrs when the root inode is missing ----
test_tool plant
mkdir -p "$WORK/rsrc"
echo hi > "$WORK/rsrc/f"
python3 -c 'import os, sys
for i in range(4): os.setxattr(sys.argv[1], "user.r%d" % i, b"v%d" % i)' "$WORK/rsrc" ||
	{ echo "no user xattrs here: root xattr case skipped"; exit 0; }
img=$WORK/root.img
truncate -s 16M "$img"
"$BCACHEFS" format -q -f --source="$WORK/rsrc" "$img" > /dev/null
[ "$("$BCACHEFS" list -b xattrs "$img" | grep -c '^u64s .* 4096:')" = 4 ] || fail "root: no xattrs on the root"
"$TOOL" "$img" rm-inode 4096 > "$WORK/plant.out" 2>&1 || { cat "$WORK/plant.out"; fail "plant rm-inode"; }
set +e
"$BCACHEFS" fsck -f -n "$img" > "$WORK/rn" 2>&1; rc=$?
set -e
[ $rc = 4 ] || { cat "$WORK/rn"; fail "root: fsck -f -n: exit $rc, want 4"; }
grep -q "1 problem found" "$WORK/rn" || { cat "$WORK/rn"; fail "root: fsck -f -n reported more than the missing root"; }
set +e
"$BCACHEFS" fsck -y "$img" > "$WORK/ry" 2>&1; rc=$?
set -e
[ $rc = 1 ] || { cat "$WORK/ry"; fail "root: fsck -y: exit $rc, want 1"; }
"$BCACHEFS" fsck -f -n "$img" > "$WORK/rn2" 2>&1 || { cat "$WORK/ry" "$WORK/rn2"; fail "root: fsck -f -n after -y: exit $?"; }
[ "$("$BCACHEFS" list -b xattrs "$img" | grep -c '^u64s .* 4096:')" = 4 ] || fail "root: xattrs lost"
echo "ok: a missing root's keys left to the repair"
