#!/bin/sh
# stress-ng's file-system stressors with --verify (tests/rw/stress.sh) on a
# tmpfs, STRESS_SECONDS (2) each: all must pass. And stress.sh must fail
# on a read-only tmpfs. The run on the mount: test_stress_mount.sh.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/rwlib.sh"
rw_setup
command -v stress-ng > /dev/null || { echo "stress-ng is not installed (sh tests/deps.sh)"; exit 77; }
rw_tmpfs tmpfs 1g
secs=${STRESS_SECONDS:-2}
[ -n "${TEST_QUICK:-}" ] && secs=1
sh "$TESTDIR/stress.sh" -t "$secs" "$tmpfs" > "$WORK/stress.out" 2>&1 ||
	{ cat "$WORK/stress.out"; fail "stress-ng on tmpfs"; }
cat "$WORK/stress.out"
rw_tmpfs ro 16m
mount -o remount,ro "$tmpfs" || fail "cannot remount the tmpfs read-only"
sh "$TESTDIR/stress.sh" -t 1 -s dir,hdd "$tmpfs" > "$WORK/ro.out" 2>&1 &&
	{ cat "$WORK/ro.out"; fail "stress.sh passed on a read-only tmpfs"; }
tail -n 1 "$WORK/ro.out"
