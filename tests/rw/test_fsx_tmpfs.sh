#!/bin/sh
# The random-operation tester (build/tests/fsx) with both trees on tmpfs:
# FSX_OPS (20000) operations for each of FSX_SEEDS (1 2 3) must agree
# (ZERO_RANGE excluded: tmpfs lacks it), then the checker must catch faults:
# a byte flipped by --plant, every punch applied one byte off
# (--misapply), a byte flipped from outside while it runs, and --compare
# of two trees that differ in one byte. The run on the mount: test_fsx_mount.sh.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/rwlib.sh"
rw_setup
test_tool fsx
rw_tmpfs target 512m
t=$tmpfs
rw_tmpfs shadow 512m
s=$tmpfs
ops=${FSX_OPS:-20000}
[ -n "${TEST_QUICK:-}" ] && ops=${FSX_OPS:-5000}

for seed in ${FSX_SEEDS:-1 2 3}; do
	rm -rf "${t:?}"/* "${s:?}"/*
	"$TOOL" -S "$seed" -N "$ops" -x zero "$t" "$s" > "$WORK/fsx.out" 2>&1 ||
		{ cat "$WORK/fsx.out"; fail "fsx seed $seed on tmpfs"; }
	tail -n 1 "$WORK/fsx.out"
done
"$TOOL" --compare "$t" "$s" > "$WORK/cmp.out" 2>&1 || { cat "$WORK/cmp.out"; fail "--compare of equal trees"; }

# planted faults must be caught, with the seed and the last operations
rm -rf "${t:?}"/* "${s:?}"/*
"$TOOL" -S 7 -N 20000 -x zero --plant 300 "$t" "$s" > "$WORK/plant.out" 2>&1
rc=$?
[ $rc = 1 ] || { cat "$WORK/plant.out"; fail "--plant 300: exit $rc, want 1"; }
grep -q "MISMATCH at operation [0-9]* (seed 7)" "$WORK/plant.out" && grep -q "^  [0-9]*: " "$WORK/plant.out" ||
	{ cat "$WORK/plant.out"; fail "--plant: no mismatch report"; }
grep MISMATCH "$WORK/plant.out"
for op in write truncate punch falloc; do
	rm -rf "${t:?}"/* "${s:?}"/*
	"$TOOL" -S 8 -N 20000 -x zero --misapply $op "$t" "$s" > "$WORK/mis.out" 2>&1
	rc=$?
	[ $rc = 1 ] || { tail -n 5 "$WORK/mis.out"; fail "--misapply $op: exit $rc, want 1"; }
done

# a byte of the target changed from outside while fsx runs
rm -rf "${t:?}"/* "${s:?}"/*
"$TOOL" -S 9 -N 100000000 -x zero -c 200 "$t" "$s" > "$WORK/ext.out" 2>&1 &
fpid=$!
sleep 1
python3 - "$t" <<'PY'
import os, sys
for d, _, files in os.walk(sys.argv[1]):
    for f in files:
        p = os.path.join(d, f)
        if os.path.getsize(p) > 0:
            with open(p, "r+b") as fh:
                b = fh.read(1)
                fh.seek(0)
                fh.write(bytes([b[0] ^ 0xff]))
PY
i=0
while kill -0 $fpid 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
kill $fpid 2>/dev/null
wait $fpid
rc=$?
[ $rc = 1 ] || { tail -n 5 "$WORK/ext.out"; fail "a byte changed from outside: fsx exit $rc, want 1 (within 60 s)"; }
grep MISMATCH "$WORK/ext.out"

rm -rf "${t:?}"/* "${s:?}"/*
mkdir "$t/a" "$s/a"
printf 'same' > "$t/a/f"; printf 'same' > "$s/a/f"
"$TOOL" --compare "$t" "$s" > /dev/null || fail "--compare: equal trees differ"
printf 'sane' > "$s/a/f"
"$TOOL" --compare "$t" "$s" > "$WORK/cmp.out" 2>&1 && fail "--compare: a changed byte not seen"
printf 'same' > "$s/a/f"; ln "$s/a/f" "$s/a/g"; cp "$t/a/f" "$t/a/g"
"$TOOL" --compare "$t" "$s" > "$WORK/cmp.out" 2>&1 && fail "--compare: a hard link against a copy not seen"
true
