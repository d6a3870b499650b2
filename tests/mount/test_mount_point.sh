# The mount point must be a directory: a regular file,
# a missing path or a device node as the mount point is refused before
# the filesystem is opened (exit 1, a message naming it), nothing is
# mounted; a directory still works.
set -u
. "$(dirname "$0")/../lib.sh"
fuse_mount_setup
cd "$WORK" || exit 1
truncate -s 64M a.img
"$BCACHEFS" format -q a.img || fail "format"
echo content > file
for mp in file missing /dev/null; do
	rc=0
	timeout 20 "$BCACHEFS" mount -f a.img "$mp" < /dev/null > out 2> err || rc=$?
	[ $rc = 1 ] || { cat out err; fail "mount on $mp: exit $rc, want 1"; }
	grep -q "mount point $mp: .*nothing mounted" err || { cat err; fail "mount on $mp: no clear message"; }
	grep -q "fuse.bcachefs" /proc/mounts && awk '$3 == "fuse.bcachefs"' /proc/mounts | grep -q "$WORK" &&
		fail "mount on $mp: something was mounted"
	echo "ok   refused: $(head -n 1 err)"
done
[ "$(cat file)" = content ] || fail "the file used as mount point changed"
mount_fg dir "$WORK/a.img"
ls "$mnt" > /dev/null || fail "ls of the mount"
unmount_fg dir
