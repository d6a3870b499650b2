#!/bin/sh
# Done-means 3 of the read-write mount: stress-ng's file-system stressors
# with --verify (tests/rw/stress.sh: hdd, dir, dentry, link, symlink,
# rename, xattr, fallocate, seek, sync-file, chmod, utime, filename) on a
# fresh filesystem mounted read-write, STRESS_SECONDS (5) each: no failure;
# then after the unmount `fsck -f -n` exits 0. $RW_MOUNT_OPTS: more mount
# options. Exit 77 while `bcachefs mount` refuses read-write.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/rwlib.sh"
fuse_mount_setup
rw_setup
command -v stress-ng > /dev/null || { echo "stress-ng is not installed (sh tests/deps.sh)"; exit 77; }
secs=${STRESS_SECONDS:-5}
[ -n "${TEST_QUICK:-}" ] && secs=1
img=$WORK/stress.img
rw_image "$img" 2G
rw_mount "$img"
mkdir "$mnt/stress" || { unmount_fg rw; fail "mkdir in the mount"; }
sh "$TESTDIR/stress.sh" -t "$secs" "$mnt/stress" > "$WORK/stress.out" 2>&1
rc=$?
unmount_fg rw
cat "$WORK/stress.out"
[ $rc = 0 ] || fail "stress-ng on the mount"
rw_fsck "$img"
