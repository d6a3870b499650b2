#!/bin/sh
# Crash states of rebalance (tests/crash/README.md): a
# filesystem with --background_compression=zstd gets text files written
# with rebalance off (BCH_REBALANCE=0), so they are stored uncompressed;
# then a mount with BCH_WRITE_LOG set runs nothing but rebalance (it
# compresses them: new encodings written, keys replaced) until it stops,
# and is unmounted. In a sample of the prefixes of that mount's write log
# and of reorderings between flushes, the recovery of a mount must
# succeed, fsck -f -n must be clean, and every file must be what it was
# before (sha256): a crash leaves the old encoding or the new one. The
# harness must fail: the same run with BCH_TEST_SKIP_FLUSH=1 must give
# states where a file is lost or different.
#
# Knobs: CRASH_PREFIX (default 20; TEST_QUICK 6), CRASH_REORDER (default
# 12; TEST_QUICK 4), CRASH_SEED (default 1).
set -u
. "$(dirname "$0")/../lib.sh"
fuse_mount_setup
JOB=rebalance
JOB_BUSY='g["extents_compressed"], g["passes"]'
JOB_READY='g["extents_compressed"]'
JOB_DONE='g["extents_compressed"]'
. "$TESTDIR/bgjob.sh"
if [ -n "${TEST_QUICK:-}" ]; then
	np=${CRASH_PREFIX:-6} nr=${CRASH_REORDER:-4}
else
	np=${CRASH_PREFIX:-20} nr=${CRASH_REORDER:-12}
fi
seed=${CRASH_SEED:-1}

# the filesystem with uncompressed data, and what it holds
truncate -s 32M prep.img
"$BCACHEFS" format -q --background_compression=zstd prep.img > fmt.out 2>&1 || { cat fmt.out; fail "format"; }
BCH_REBALANCE=0 mount_fg p prep.img
for i in 1 2 3 4 5 6; do
	# written whole (cp): extents of up to 64 KiB, which compress
	for f in "$TESTDIR"/../../doc/*.md; do cat "$f"; done | head -c $((i * 150000)) > "t$i"
	cp "t$i" "$mnt/t$i" || fail "write t$i"
done
sync "$mnt/t1"
manifest "$mnt" want.sha
unmount_fg p > /dev/null
[ "$(wc -l < want.sha)" = 6 ] || fail "$(wc -l < want.sha) files"

bgjob_run $np $nr $seed
exit 0
