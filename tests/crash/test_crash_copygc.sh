#!/bin/sh
# Crash states of the copying GC (tests/crash/README.md): a
# 16 MiB filesystem is filled with 4 KiB files and a random half deleted
# with copygc off (BCH_COPYGC=0), so its buckets are left half full; then
# a mount with BCH_WRITE_LOG set runs nothing but copygc (it empties
# buckets, moving their extents) until it stops, and is unmounted. In a
# sample of the prefixes of that mount's write log and of reorderings
# between flushes, the recovery of a mount must succeed, fsck -f -n must
# be clean, and every file must be what it was before (sha256): a crash
# at any point leaves the old copy or the new one. The harness must fail:
# the same run with BCH_TEST_SKIP_FLUSH=1 (copies not durable before the
# journal entries that point to them) must give states where a file is
# lost or different.
#
# A 10 MiB file and 4 KiB files in the rest keep each state's check short.
# Knobs: CRASH_PREFIX (default 8; TEST_QUICK 4), CRASH_REORDER (default
# 6; TEST_QUICK 3), CRASH_SEED (default 1).
set -u
. "$(dirname "$0")/../lib.sh"
fuse_mount_setup
JOB=copygc
JOB_BUSY='g["passes"], g["extents_moved"]'
JOB_READY='g["passes"]'
JOB_DONE='g["extents_moved"]'
. "$TESTDIR/bgjob.sh"
if [ -n "${TEST_QUICK:-}" ]; then
	np=${CRASH_PREFIX:-4} nr=${CRASH_REORDER:-3}
else
	np=${CRASH_PREFIX:-8} nr=${CRASH_REORDER:-6}
fi
seed=${CRASH_SEED:-1}
REFILL=$TESTDIR/../mount/refill.py

# the filesystem with fragmented buckets, and what it holds
truncate -s 16M prep.img
"$BCACHEFS" format -q prep.img > fmt.out 2>&1 || { cat fmt.out; fail "format"; }
BCH_COPYGC=0 mount_fg p prep.img
python3 "$REFILL" "$mnt" --cycles 0 --delete-half --seed 5 --ballast 10485760 > prep.out 2>&1 || { cat prep.out; fail "prepare"; }
manifest "$mnt" want.sha
unmount_fg p > /dev/null
[ "$(wc -l < want.sha)" -gt 100 ] || fail "only $(wc -l < want.sha) files"

bgjob_run $np $nr $seed
exit 0
