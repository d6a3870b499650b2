#!/bin/sh
# migrate --encrypted of a mounted ext4 filesystem: the new filesystem
# opens only with its key; after `unlock` fsck -f -n is clean and extract
# gives back the tree (the linked data stays as it is on disk, the
# metadata is encrypted); e2fsck -fn of the source still clean; the same
# after migrate-superblock. The keys go to a private session keyring.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/migrate_lib.sh"

if [ -z "${KEY_TEST_SESSION:-}" ]; then
	if command -v keyctl > /dev/null && keyctl session - true > /dev/null 2>&1; then
		KEY_TEST_SESSION=1 exec keyctl session - sh "$0" "$@"
	fi
	echo "keyctl and a session keyring needed"
	exit 77
fi
exec 2>&1
migrate_setup mkfs.ext4 e2fsck keyctl
B=$BCACHEFS
printf 'migrate-pass\n' > "$WORK/pass"

make_fs ext4 512M enc
python3 "$TESTDIR/../format/gen_tree.py" "$mnt/tree" 300 2 > /dev/null || fail "gen_tree"
printf 'MIGRATE-SECRET-NAME\n' > "$mnt/tree/plain"
sync
"$B" migrate --encrypted --passphrase-file "$WORK/pass" -f "$mnt" > "$WORK/migrate.out" 2>&1
rc=$?
cat "$WORK/migrate.out"
[ $rc = 0 ] || fail "migrate --encrypted: rc=$rc"
off=$(sed -n 's/.*migrate-superblock -d .* -o \([0-9]*\)$/\1/p' "$WORK/migrate.out")
umount "$mnt"
e2fsck -fn "$img" > "$WORK/e2fsck.out" 2>&1 || { cat "$WORK/e2fsck.out"; fail "e2fsck -fn of the source after migrate"; }
"$B" show-super -f crypt "$img" | grep -q "^Crypt (size" || fail "the new filesystem has no crypt field"

# the key migrate put in the keyring goes; without it nothing opens
uuid=$("$B" show-super --json "$img" | sed -n 's/.*"external_uuid": "\(.*\)".*/\1/p')
for k in $(keyctl search @u user "bcachefs:$uuid" 2>/dev/null) $(keyctl search @u logon "bcachefs:$uuid" 2>/dev/null); do
	keyctl unlink "$k" @u > /dev/null 2>&1
done
"$B" fsck -f -n "$img" > "$WORK/nokey.out" 2>&1 < /dev/null && fail "fsck -f -n opened the encrypted filesystem without its key"
"$B" unlock -k session -f "$WORK/pass" "$img" || fail "unlock"
"$B" fsck -f -n "$img" > "$WORK/fsck1.out" 2>&1 || { cat "$WORK/fsck1.out"; fail "fsck -f -n after unlock"; }
"$B" extract "$img" / "$WORK/out" > "$WORK/extract1.out" 2>&1 || { cat "$WORK/extract1.out"; fail "extract after unlock"; }
remount "$loop" "$mnt" ro
python3 "$TESTDIR/../format/tree_diff.py" "$mnt/tree" "$WORK/out/tree" || fail "the migrated tree differs"
umount "$mnt"
# the metadata is encrypted: no file name in a dump of it (the one of
# test_migrate_ext4 has them), and the linked data is not in it either
"$B" dump -o "$WORK/enc.qcow2" "$img" > /dev/null 2>&1 || fail "dump"
grep -qa "hello.txt" "$WORK/enc.qcow2" && fail "a file name in clear in the encrypted metadata"
grep -qa "MIGRATE-SECRET-NAME" "$WORK/enc.qcow2" && fail "file data in the dump"

"$B" migrate-superblock -d "$loop" -o "$off" || fail "migrate-superblock"
"$B" fsck -f -n "$img" > "$WORK/fsck2.out" 2>&1 || { cat "$WORK/fsck2.out"; fail "fsck -f -n after migrate-superblock"; }
"$B" extract "$img" /tree/plain "$WORK/plain2" > /dev/null 2>&1 || fail "extract after migrate-superblock"
cmp "$WORK/out/tree/plain" "$WORK/plain2" || fail "tree/plain differs after migrate-superblock"
for k in $(keyctl search @u user "bcachefs:$uuid" 2>/dev/null) $(keyctl search @u logon "bcachefs:$uuid" 2>/dev/null); do
	keyctl unlink "$k" @u > /dev/null 2>&1
done
exit 0
