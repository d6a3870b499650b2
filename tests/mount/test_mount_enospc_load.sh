#!/bin/sh
# A seeded multi-process random workload at 100% full: creates
# (half of them empty: the btree grows), writes, truncates and unlinks on
# a filesystem that a filler file keeps full. Every call that returned an
# error returned ENOSPC and left no trace: after a remount the tree is
# the shadow that applied only the calls that succeeded
# (enospc_load.py). The filesystem never goes read-only; after deleting
# the filler, 8 MiB write at once; fsck -f -n is clean.
#
# CI: 2 processes for 20 s on 64 MiB (TEST_QUICK: 8 s). ENOSPC_LONG=1: 4 processes for 5
# minutes on 512 MiB (ENOSPC_SEED, ENOSPC_PROCS, ENOSPC_SECONDS and
# ENOSPC_SIZE override).
. "$TESTDIR/../lib.sh"
fuse_mount_setup
load=$TESTDIR/enospc_load.py

if [ -n "${ENOSPC_LONG:-}" ]; then
	procs=4 seconds=300 size=512M
elif [ -n "${TEST_QUICK:-}" ]; then
	procs=2 seconds=8 size=64M	# the ASan run
else
	procs=2 seconds=20 size=64M
fi
procs=${ENOSPC_PROCS:-$procs}
seconds=${ENOSPC_SECONDS:-$seconds}
size=${ENOSPC_SIZE:-$size}
seed=${ENOSPC_SEED:-25}

img=$WORK/load.img
truncate -s "$size" "$img"
"$BCACHEFS" format -q --fs_size="$size" "$img" > /dev/null 2>&1 || fail "format"
mount_fg load "$img"
# full but for 2 MiB: the workload takes the rest at once
dd if=/dev/zero of="$mnt/filler" bs=1M status=none 2> "$WORK/filler.err" && fail "filler: it all fit"
grep -q "No space left" "$WORK/filler.err" || { cat "$WORK/filler.err"; fail "filler: not ENOSPC"; }
truncate -s -2M "$mnt/filler" || fail "filler: truncate"
python3 "$load" run "$mnt" "$seed" "$procs" "$seconds" "$WORK/shadow.json" > "$WORK/run.out" 2>&1
rc=$?
cat "$WORK/run.out"
[ $rc = 0 ] || fail "workload: a call failed with something else than ENOSPC"
grep -q ", 0 ENOSPC" "$WORK/run.out" && fail "workload: the filesystem was never full"
if grep -Ei "read-only|checkpoint failed|not writable|Input/output" "$WORK/load.log"; then
	fail "the filesystem went read-only"
fi
unmount_fg load > "$WORK/unmount.out"
"$BCACHEFS" fsck -f -n "$img" > "$WORK/fsck1" 2>&1 || { cat "$WORK/fsck1"; fail "fsck -f -n after the workload"; }

mount_fg load2 "$img"
python3 "$load" check "$mnt" "$WORK/shadow.json" || fail "the tree after a remount is not the shadow"
rm "$mnt/filler" || fail "rm of the filler"
dd if=/dev/zero of="$mnt/after" bs=1M count=8 status=none || fail "8 MiB do not fit after deleting the filler"
unmount_fg load2 > /dev/null
"$BCACHEFS" fsck -f -n "$img" > "$WORK/fsck2" 2>&1 || { cat "$WORK/fsck2"; fail "fsck -f -n at the end"; }
true
