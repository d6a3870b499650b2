#!/bin/sh
# migrate of a mounted xfs filesystem (generated tree: every file type,
# hard links, sparse files, xattrs and ACLs, long names): fsck -f -n clean,
# extract gives back the tree, xfs_repair -n of the source still clean;
# migrate-superblock, then still clean and the same files.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/migrate_lib.sh"
migrate_setup mkfs.xfs xfs_repair
B=$BCACHEFS

make_fs xfs 512M x
python3 "$TESTDIR/../format/gen_tree.py" "$mnt/tree" 1000 4 --xfs > /dev/null || fail "gen_tree"
sync
"$B" migrate -f "$mnt" > "$WORK/migrate.out" 2>&1
rc=$?
cat "$WORK/migrate.out"
[ $rc = 0 ] || fail "migrate: rc=$rc"
off=$(sed -n 's/.*migrate-superblock -d .* -o \([0-9]*\)$/\1/p' "$WORK/migrate.out")
umount "$mnt"

xfs_repair -n "$loop" > "$WORK/xfs_repair.out" 2>&1 || { cat "$WORK/xfs_repair.out"; fail "xfs_repair -n of the source after migrate"; }
"$B" fsck -f -n "$img" > "$WORK/fsck1.out" 2>&1 || { cat "$WORK/fsck1.out"; fail "fsck -f -n after migrate"; }
"$B" extract "$img" / "$WORK/out" > "$WORK/extract1.out" 2>&1 || { cat "$WORK/extract1.out"; fail "extract after migrate"; }
remount "$loop" "$mnt" ro
python3 "$TESTDIR/../format/tree_diff.py" "$mnt/tree" "$WORK/out/tree" || fail "the migrated tree differs"
umount "$mnt"

"$B" migrate-superblock -d "$loop" -o "$off" || fail "migrate-superblock"
"$B" fsck -f -n "$img" > "$WORK/fsck2.out" 2>&1 || { cat "$WORK/fsck2.out"; fail "fsck -f -n after migrate-superblock"; }
"$B" extract "$img" / "$WORK/out2" > "$WORK/extract2.out" 2>&1 || { cat "$WORK/extract2.out"; fail "extract after migrate-superblock"; }
python3 "$TESTDIR/../format/tree_diff.py" "$WORK/out/tree" "$WORK/out2/tree" ||
	fail "files differ after migrate-superblock"
exit 0
