#!/bin/sh
# migrate of a mounted ext4 filesystem holding a generated tree (every file
# type, hard links, sparse and preallocated files, xattrs and ACLs,
# 255-byte names, 20k small files): the dry run writes nothing and counts
# what the migration then links; our fsck -f -n is clean; extract gives back
# the tree exactly (contents, holes, modes, owners, times, xattrs, ACLs);
# e2fsck -fn of the source is still clean. Then migrate-superblock: still
# clean, and the same files.
# TEST_QUICK: 2000 small files.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/migrate_lib.sh"
migrate_setup mkfs.ext4 e2fsck
nsmall=20000
[ -n "${TEST_QUICK:-}" ] && nsmall=2000
B=$BCACHEFS

make_fs ext4 1G e
python3 "$TESTDIR/../format/gen_tree.py" "$mnt/tree" $nsmall 6 > /dev/null || fail "gen_tree"
# preallocated: unwritten extents become holes (they read as zeros), the
# written part data (outside tree/: tree_diff would see holes the source
# does not have)
fallocate -l 1M "$mnt/prealloc" && printf 'written part\n' | dd of="$mnt/prealloc" bs=1 seek=300000 conv=notrunc 2>/dev/null
fallocate -l 2M "$mnt/prealloc_only"
# many extents: every other 4 KiB block written
python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
for i in range(0, 2000, 2):
    os.pwrite(fd, os.urandom(4096), i * 4096)
os.close(fd)' "$mnt/tree/fragmented"
printf 'MIGRATE-DATA-MARKER\n' > "$mnt/tree/marker"
sync

# the dry run: counts, and nothing written (no reserved file, sector 7 still zero)
"$B" migrate -n -f "$mnt" > "$WORK/dry.out" 2>&1 || { cat "$WORK/dry.out"; fail "dry run"; }
cat "$WORK/dry.out"
[ ! -e "$mnt/bcachefs" ] || fail "the dry run created the reserved file"
[ "$(sector7 "$img" | tr -d 0)" = "" ] || fail "the dry run wrote sector 7"
dry_linked=$(sed -n 's/^linked in place: *\([0-9]*\) extents.*/\1/p' "$WORK/dry.out")
[ "${dry_linked:-0}" -gt 1000 ] || fail "the dry run links ${dry_linked:-no} extents"

"$B" migrate -f "$mnt" > "$WORK/migrate.out" 2>&1
rc=$?
cat "$WORK/migrate.out"
[ $rc = 0 ] || fail "migrate: rc=$rc"
grep -q "^fsck complete" "$WORK/migrate.out" || fail "migrate did not run its fsck"
linked=$(sed -n 's/.*; \([0-9]*\) extents (.*linked in place.*/\1/p' "$WORK/migrate.out")
[ "$linked" = "$dry_linked" ] || fail "the dry run said $dry_linked extents linked, migrate linked $linked"
off=$(sed -n 's/.*migrate-superblock -d .* -o \([0-9]*\)$/\1/p' "$WORK/migrate.out")
[ -n "$off" ] || fail "no offset in the instructions"
umount "$mnt"

e2fsck -fn "$img" > "$WORK/e2fsck.out" 2>&1 || { cat "$WORK/e2fsck.out"; fail "e2fsck -fn of the source after migrate"; }
"$B" fsck -f -n "$img" > "$WORK/fsck1.out" 2>&1 || { cat "$WORK/fsck1.out"; fail "fsck -f -n after migrate"; }
"$B" extract "$img" / "$WORK/out" > "$WORK/extract1.out" 2>&1 || { cat "$WORK/extract1.out"; fail "extract after migrate"; }
remount "$loop" "$mnt" ro
python3 "$TESTDIR/../format/tree_diff.py" "$mnt/tree" "$WORK/out/tree" || fail "the migrated tree differs"
ls -A "$mnt" | grep -v '^bcachefs$' > "$WORK/top.src"
ls -A "$WORK/out" | grep -v '^old_migrated_filesystem$' > "$WORK/top.out"
diff "$WORK/top.src" "$WORK/top.out" || fail "the top directory differs"
for f in prealloc prealloc_only; do
	cmp "$mnt/$f" "$WORK/out/$f" || fail "$f differs"
done
[ "$(stat -c %b "$WORK/out/prealloc_only")" = 0 ] || fail "prealloc_only: the unwritten extents are not holes"
[ "$(stat -c %a:%u:%s "$WORK/out/old_migrated_filesystem")" = "400:0:$(stat -c %s "$img")" ] ||
	fail "old_migrated_filesystem: $(stat -c %a:%u:%s "$WORK/out/old_migrated_filesystem")"
umount "$mnt"

# dump of the migrated filesystem: its metadata (file names), never file data
"$B" dump -o "$WORK/m.qcow2" "$img" > "$WORK/dump.out" 2>&1 || { cat "$WORK/dump.out"; fail "dump"; }
grep -qa "hello.txt" "$WORK/m.qcow2" || fail "no file name in the dump of the metadata"
grep -qa "MIGRATE-DATA-MARKER" "$img" || fail "the marker is not in the image"
grep -qa "MIGRATE-DATA-MARKER" "$WORK/m.qcow2" && fail "file data in the dump of a migrated filesystem"

# the default superblock: the same filesystem, readable from sector 8
"$B" migrate-superblock -d "$loop" -o "$off" || fail "migrate-superblock"
"$B" show-super -l "$img" | grep -q "Offsets:.*8, $off, " || fail "layout after migrate-superblock: $("$B" show-super -l "$img" | grep Offsets)"
"$B" fsck -f -n "$img" > "$WORK/fsck2.out" 2>&1 || { cat "$WORK/fsck2.out"; fail "fsck -f -n after migrate-superblock"; }
"$B" extract "$img" / "$WORK/out2" > "$WORK/extract2.out" 2>&1 || { cat "$WORK/extract2.out"; fail "extract after migrate-superblock"; }
python3 "$TESTDIR/../format/tree_diff.py" "$WORK/out/tree" "$WORK/out2/tree" ||
	fail "files differ after migrate-superblock"
exit 0
