#!/bin/sh
# Done-means 1 of the read-write mount: the POSIX-semantics suite
# (build/tests/posix, the suite test_posix_tmpfs.sh proves on tmpfs) on a
# fresh filesystem mounted read-write by root with default options (the
# permission checks run as uid 65534: no allow_other needed); every
# assertion must pass, then after the unmount `fsck -f -n` must exit 0.
# $POSIX_FLAGS: features declared missing
# (e.g. --no-shared-mmap); $RW_MOUNT_OPTS: more mount options. Exit 77
# while `bcachefs mount` refuses read-write.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/rwlib.sh"
fuse_mount_setup
rw_setup
test_tool posix
img=$WORK/posix.img
rw_image "$img" 1G
rw_mount "$img"
# shellcheck disable=SC2086 # the flags are words
"$TOOL" ${POSIX_FLAGS:-} "$mnt" > "$WORK/posix.out" 2>&1
rc=$?
unmount_fg rw
tail -n 1 "$WORK/posix.out"
[ $rc = 0 ] || { grep -v '^ok' "$WORK/posix.out"; fail "the POSIX suite fails on the mount (exit $rc)"; }
n=$(sed -n 's/^# \([0-9]*\) assertions: .*/\1/p' "$WORK/posix.out")
[ "${n:-0}" -ge 300 ] || fail "only ${n:-0} assertions ran"
rw_fsck "$img"
