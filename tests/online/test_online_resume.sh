#!/bin/sh
# Data jobs go on where they stopped: a scrub interrupted at
# about half way (Ctrl-C: exit 130, "run it again to go on from there")
# resumes from its position when run again: its progress starts there and
# its summary counts only the rest, in the job's units (extents and bytes
# verified); a scrub after a finished one starts from the beginning again.
# The exit codes are the man page's.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/lib_online.sh"
online_setup
a=$WORK/a.img
mkimg a.img 256M
run_ok format "$BCACHEFS" format -q "$a"
mount_fg w "$a"
python3 - "$mnt" <<'PY' || fail "writing files"
import os, sys
for i in range(1500):
    with open("%s/f%04d" % (sys.argv[1], i), "wb") as f:
        f.write(os.urandom(4096))
PY
unmount_fg w

# slow enough to stop half way: 3 ms per extent
BCH_JOB_THROTTLE_US=3000
export BCH_JOB_THROTTLE_US
mount_fg s "$a"
run_ok full0 "$BCACHEFS" data scrub "$mnt"
total=$(sed -n 's/.*: \([0-9]*\) extents (.*) verified.*/\1/p' "$WORK/full0.out")
[ "${total:-0}" -ge 1500 ] || { cat "$WORK/full0.out"; fail "a full scrub verified ${total:-no} extents"; }
grep -q " 0 extents\| sectors) written" "$WORK/full0.out" && { cat "$WORK/full0.out"; fail "scrub's summary in the wrong units"; }

"$BCACHEFS" data scrub "$mnt" > "$WORK/int.out" 2>&1 &
cpid=$!
i=0
until grep -q "data extents.* [4-9][0-9]%" "$WORK/int.out"; do
	kill -0 $cpid 2>/dev/null || { cat "$WORK/int.out"; fail "scrub ended before the interrupt"; }
	i=$((i + 1)); [ $i -lt 600 ] || { cat "$WORK/int.out"; fail "scrub: not at 40% after 30 s"; }
	sleep 0.05
done
kill -INT $cpid
wait $cpid
rc=$?
[ $rc = 130 ] || { cat "$WORK/int.out"; fail "interrupted scrub exited $rc, not 130"; }
stop=$(sed -n 's/.*stopped at data extents.* (\([0-9]*\)%); run it again to go on from there$/\1/p' "$WORK/int.out")
[ -n "$stop" ] || { cat "$WORK/int.out"; fail "no 'stopped at' line"; }

run_ok rest "$BCACHEFS" data scrub "$mnt"
cat "$WORK/rest.out"
grep -q "went on from a stopped run" "$WORK/rest.out" || fail "the second run did not go on from the first"
first=$(sed -n 's/.*data extents.* \([0-9]*\)%$/\1/p' "$WORK/rest.out" | head -n 1)
[ -z "$first" ] || [ "$first" -ge $((stop - 10)) ] || fail "the second run's progress starts at $first%, the first stopped at $stop%"
rest=$(sed -n 's/.*: \([0-9]*\) extents (.*) verified.*/\1/p' "$WORK/rest.out")
python3 - "$total" "$stop" "$rest" <<'PY' || fail "the second run did not verify only the rest"
import sys
total, stop, rest = map(int, sys.argv[1:4])
want = total * (100 - stop) / 100
assert 0 < rest < total, (total, stop, rest)
assert abs(rest - want) <= total * 0.12 + 20, ("rest", rest, "want about", want, "total", total)
PY

# finished: the next one starts from the beginning
run_ok full1 "$BCACHEFS" data scrub "$mnt"
grep -q "went on from" "$WORK/full1.out" && fail "a scrub after a finished one resumed"
again=$(sed -n 's/.*: \([0-9]*\) extents (.*) verified.*/\1/p' "$WORK/full1.out")
[ "$again" = "$total" ] || { cat "$WORK/full1.out"; fail "full scrub: $again extents, before $total"; }
unmount_fg s
grep -q "^130" "$TESTDIR/../../man/bcachefs.8" || grep -q "130" "$TESTDIR/../../man/bcachefs.8" || fail "exit 130 not in the man page"
fsck_clean final "$a"
