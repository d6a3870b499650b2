#!/bin/sh
# What migrate and migrate-superblock refuse, clearly and before writing
# anything: usage errors (16); a path that is not a mount root; a mount
# inside the filesystem; a filesystem that is not ext2/3/4 or xfs (tmpfs:
# no FIEMAP, no device); ext4 with 1 KiB blocks (sector 7 is its); too
# little free space; an existing reserved file (without -F) or
# old_migrated_filesystem. After all that the source is untouched (e2fsck
# clean, sector 7 zero). migrate-superblock: a mounted device, an offset
# without a superblock, a layout that already has sector 8.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/migrate_lib.sh"
migrate_setup mkfs.ext4 e2fsck
B=$BCACHEFS

# refused EXPECTED-TEXT CMD...: exit 1 (16 for usage errors: EXPECTED-TEXT "usage")
refused() {
	_want=$1; shift
	"$@" > "$WORK/out" 2>&1 < /dev/null
	_rc=$?
	crashed $_rc && { cat "$WORK/out"; fail "crashed: $*"; }
	if [ "$_want" = usage ]; then
		[ $_rc = 16 ] || { cat "$WORK/out"; fail "rc=$_rc, not 16: $*"; }
		return 0
	fi
	[ $_rc = 1 ] || { cat "$WORK/out"; fail "rc=$_rc, not 1: $*"; }
	grep -q "$_want" "$WORK/out" || { cat "$WORK/out"; fail "no '$_want': $*"; }
}

refused usage "$B" migrate
refused usage "$B" migrate -f /tmp extra
refused usage "$B" migrate --no_passphrase -f /tmp
refused usage "$B" migrate --bogus -f /tmp
refused usage "$B" migrate-superblock -o 100
refused usage "$B" migrate-superblock -d /dev/null
refused usage "$B" migrate-superblock -d /dev/null -o 0
refused usage "$B" migrate-superblock -d /dev/null -o 12x
"$B" migrate --help | grep -q "^Usage: bcachefs migrate" || fail "migrate --help"
"$B" migrate-superblock --help | grep -q "^Usage: bcachefs migrate-superblock" || fail "migrate-superblock --help"

make_fs ext4 256M r
rimg=$img rloop=$loop
mkdir "$mnt/sub"
echo data > "$mnt/sub/file"
sync
refused "not the root of a mounted filesystem" "$B" migrate -f "$mnt/sub"
mount -t tmpfs none "$mnt/sub" || fail "mount tmpfs"
refused "is mounted inside" "$B" migrate -f "$mnt"
refused "is mounted inside" "$B" migrate -n -f "$mnt"
umount "$mnt/sub"
mkdir -p "$WORK/mnt-tmp"
mount -t tmpfs none "$WORK/mnt-tmp" || fail "mount tmpfs"
refused "only ext2/3/4 and xfs" "$B" migrate -f "$WORK/mnt-tmp"
umount "$WORK/mnt-tmp"

touch "$mnt/old_migrated_filesystem"
refused "old_migrated_filesystem exists" "$B" migrate -f "$mnt"
rm "$mnt/old_migrated_filesystem"
echo x > "$mnt/bcachefs"
refused "it exists (-F uses it)" "$B" migrate -f "$mnt"
rm "$mnt/bcachefs"
fallocate -l 200M "$mnt/filler" || fail "fallocate"
refused "too little free space" "$B" migrate -f "$mnt"
refused "too little free space" "$B" migrate -n -f "$mnt"
[ ! -e "$mnt/bcachefs" ] || fail "a refused migrate left the reserved file"
rm "$mnt/filler"
umount "$mnt"
e2fsck -fn "$rimg" > "$WORK/e2fsck.out" 2>&1 || { cat "$WORK/e2fsck.out"; fail "e2fsck -fn after the refusals"; }
[ "$(sector7 "$rimg" | tr -d 0)" = "" ] || fail "a refused migrate wrote sector 7"

# 1 KiB blocks: sector 7 belongs to ext4
truncate -s 128M "$WORK/k1.img"
mkfs.ext4 -q -F -b 1024 "$WORK/k1.img" || fail "mkfs.ext4 -b 1024"
attach "$WORK/k1.img"
mkdir -p "$WORK/mnt-k1"
remount "$loop" "$WORK/mnt-k1"
refused "uses sector 7" "$B" migrate -f "$WORK/mnt-k1"
umount "$WORK/mnt-k1"
e2fsck -fn "$WORK/k1.img" > "$WORK/e2fsck.out" 2>&1 || { cat "$WORK/e2fsck.out"; fail "e2fsck -fn of the 1 KiB filesystem"; }

# migrate-superblock
remount "$rloop" "$mnt"
"$B" migrate -f "$mnt" > "$WORK/migrate.out" 2>&1 || { cat "$WORK/migrate.out"; fail "migrate"; }
off=$(sed -n 's/.*migrate-superblock -d .* -o \([0-9]*\)$/\1/p' "$WORK/migrate.out")
refused "is mounted" "$B" migrate-superblock -d "$rloop" -o "$off"
umount "$mnt"
refused "not a bcachefs superblock" "$B" migrate-superblock -d "$rloop" -o 12345
"$B" migrate-superblock -d "$rloop" -o "$off" || fail "migrate-superblock"
refused "already has default superblock" "$B" migrate-superblock -d "$rloop" -o "$off"
"$B" fsck -f -n "$rimg" > "$WORK/fsck.out" 2>&1 || { cat "$WORK/fsck.out"; fail "fsck -f -n"; }
exit 0
