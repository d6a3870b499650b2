#!/bin/sh
# The POSIX-semantics suite (build/tests/posix) on a tmpfs: it must pass
# whole there (tmpfs lacks only FALLOC_FL_ZERO_RANGE: --no-zero-range), so
# that its expectations are Linux's. Then the same suite with ZERO_RANGE
# tested must fail on tmpfs and name the failing assertions (the suite can
# fail). The suite on the mount: test_posix_mount.sh.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/rwlib.sh"
rw_setup
test_tool posix
rw_tmpfs tmpfs 512m
"$TOOL" --no-zero-range --many "${POSIX_MANY:-3000}" "$tmpfs" > "$WORK/posix.out" 2>&1
rc=$?
tail -n 1 "$WORK/posix.out"
[ $rc = 0 ] || { grep -v '^ok' "$WORK/posix.out"; fail "the POSIX suite fails on tmpfs (exit $rc)"; }
n=$(sed -n 's/^# \([0-9]*\) assertions: .*/\1/p' "$WORK/posix.out")
[ "${n:-0}" -ge 300 ] || fail "only ${n:-0} assertions ran"
[ "$(grep -c '^ok ' "$WORK/posix.out")" = "$n" ] || fail "the ok lines do not add up to $n"
[ -z "$(ls "$tmpfs")" ] || fail "the suite left $(ls "$tmpfs") behind after passing"

"$TOOL" --only falloc "$tmpfs" > "$WORK/zr.out" 2>&1
rc=$?
[ $rc = 1 ] || { cat "$WORK/zr.out"; fail "ZERO_RANGE on tmpfs: exit $rc, want 1"; }
grep -q '^not ok .*FALLOC_FL_ZERO_RANGE.*EOPNOTSUPP' "$WORK/zr.out" ||
	{ cat "$WORK/zr.out"; fail "the ZERO_RANGE failure is not reported"; }
tail -n 1 "$WORK/zr.out"
