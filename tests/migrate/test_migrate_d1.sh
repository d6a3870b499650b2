#!/bin/sh
# The golden d1 case: an ext4 filesystem the 2018 tool migrated. Its source
# is still inside the image (remove the reserved file `bcachefs`); our
# migrate of it gives the same tree (the ext4 manifest) and the same keys
# as the 2018 one, by path (d1_keys.py says what is compared and what
# cannot be equal, and why); e2fsck -fn of the source stays clean. The
# 2018 migrate-superblock left a filesystem its own fsck rejected
# (old_migrated_filesystem over the new superblock's bucket): ours refuses
# to do that to the 2018 result, and on our migration it gives a clean one.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/migrate_lib.sh"
migrate_setup e2fsck filefrag
B=$BCACHEFS
G=$GOLDEN/d1_migrate_ext4_1G
img=$WORK/d1.img
unzst "$G/migrated-layout7.img.zst" "$img" || fail "zstd"

# ours on the 2018 result: refused, nothing written
cp --sparse=always "$img" "$WORK/d1-2018.img"
attach "$WORK/d1-2018.img"
sum=$(head -c 1M "$WORK/d1-2018.img" | sha256sum)
"$B" migrate-superblock -d "$loop" -o 802816 > "$WORK/msb2018.out" 2>&1 && fail "migrate-superblock of the 2018 migration was not refused"
cat "$WORK/msb2018.out"
grep -q "in use" "$WORK/msb2018.out" || fail "the refusal does not say why"
[ "$(head -c 1M "$WORK/d1-2018.img" | sha256sum)" = "$sum" ] || fail "the refused migrate-superblock wrote"

# the source, migrated again by us
attach "$img"
mnt=$WORK/mnt-d1
mkdir -p "$mnt"
remount "$loop" "$mnt"
rm "$mnt/bcachefs"
sync
"$B" migrate -f "$mnt" > "$WORK/migrate.out" 2>&1
rc=$?
cat "$WORK/migrate.out"
[ $rc = 0 ] || fail "migrate: rc=$rc"
off=$(sed -n 's/.*migrate-superblock -d .* -o \([0-9]*\)$/\1/p' "$WORK/migrate.out")
[ -n "$off" ] || fail "no offset in the instructions"
mkdir "$WORK/ours"
filefrag -v "$mnt/bcachefs" > "$WORK/ours/bcachefs-file.filefrag.txt" || fail "filefrag"
umount "$mnt"
e2fsck -fn "$img" > "$WORK/e2fsck.out" 2>&1 || { cat "$WORK/e2fsck.out"; fail "e2fsck -fn of the source after migrate"; }

for b in inodes dirents xattrs extents; do
	"$B" list -b $b "$img" > "$WORK/ours/list-$b.txt" 2>&1 || fail "list -b $b"
done
python3 "$TESTDIR/d1_keys.py" "$G/out" "$WORK/ours" || fail "the keys differ from the 2018 migration"

"$B" extract "$img" / "$WORK/out" > "$WORK/extract.out" 2>&1 || { cat "$WORK/extract.out"; fail "extract"; }
# (the root's mtime is that of the removal and re-creation of `bcachefs`)
python3 "$TESTDIR/../extract/tree_compare.py" --allow-extra old_migrated_filesystem --ignore-mtime . \
	"$G/out/tree-manifest.ext4.txt" "$WORK/out" || fail "the tree differs from the ext4 manifest"

"$B" migrate-superblock -d "$loop" -o "$off" || fail "migrate-superblock"
"$B" fsck -f -n "$img" > "$WORK/fsck.out" 2>&1 || { cat "$WORK/fsck.out"; fail "fsck -f -n after migrate-superblock (the 2018 one failed here)"; }
"$B" list -b extents "$img" > "$WORK/extents.after" 2>&1
cmp "$WORK/ours/list-extents.txt" "$WORK/extents.after" || fail "migrate-superblock changed the extents"
exit 0
