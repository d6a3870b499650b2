# The write log (BCH_WRITE_LOG, libbcachefs/dev/dev.c) and its replayer
# (build/tests/replay): the log holds every write of a workload, so the
# last prefix state is byte-identical to the devices the workload left,
# state 0 to the bases; several processes append to one log (format, plant,
# marks); two devices are two slots; a failed write (BCH_FAULT_WRITES) is
# not logged; a damaged log is refused, a cut-off last record ignored;
# reordered states are reproducible from their id and differ from the
# prefix; `replay run` (images built in place, then undone) gives every
# state the same bytes as `replay apply` (built from scratch).
set -u
. "$(dirname "$0")/../lib.sh"
replay_tool
R=$REPLAY
test_tool plant
PLANT=$TOOL

# a small tree
mkdir -p src/d/e
echo hello > src/a
seq 1 20000 > src/d/b
printf 'x%.0s' $(seq 1 300) > src/d/e/c
ln -s a src/l

# ---- one process: format --source ----
truncate -s 16M base.img
cp base.img img
BCH_WRITE_LOG=$WORK/w.wlog "$BCACHEFS" format --source src img > fmt.out 2>&1 || { cat fmt.out; fail "format --source"; }
"$R" info w.wlog > info || fail "replay info"
cat info
grep -q '^slot 0 size 16777216 .*/img$' info || fail "slot 0 is not the image"
[ "$(grep -c '^slot' info)" = 1 ] || fail "more than one slot"
nrec=$(sed -n 's/^records \([0-9]*\) .*/\1/p' info)
nw=$(sed -n 's/.* writes \([0-9]*\) .*/\1/p' info)
[ "$nw" -gt 5 ] || fail "only $nw writes logged"
grep -q ' flushes [1-9]' info || fail "no flush logged"
"$R" apply w.wlog "$nrec" -b base.img -o last.img || fail "apply the last state"
cmp last.img img || fail "the last prefix state differs from the formatted image"
"$R" apply w.wlog 0 -b base.img -o first.img || fail "apply state 0"
cmp first.img base.img || fail "state 0 differs from the base"

# ---- several processes and marks in one log: plant (journal only), mark, plant ----
cp img base2.img
BCH_WRITE_LOG=$WORK/w2.wlog "$PLANT" -j img xattr /a k1 v1 || fail "plant 1"
"$R" mark w2.wlog "k1 done" || fail "replay mark"
BCH_WRITE_LOG=$WORK/w2.wlog "$PLANT" img xattr /d/b k2 v2 || fail "plant 2"
"$R" mark w2.wlog "k2 done" || fail "replay mark"
"$R" info w2.wlog > info2
grep -q ' marks 2 ' info2 || { cat info2; fail "marks not counted"; }
[ "$("$R" dump w2.wlog | awk '{ print $4 }' | sort -u | wc -l)" -ge 3 ] || fail "not three processes in the log"
n2=$(sed -n 's/^records \([0-9]*\) .*/\1/p' info2)
"$R" apply w2.wlog "$n2" -b base2.img -o last2.img || fail "apply log2"
cmp last2.img img || fail "the last state of the two-process log differs from the image"
"$R" dump w2.wlog | grep -q ' mark .* k1 done$' || fail "mark label not dumped"

# ---- two devices ----
truncate -s 16M b0.img b1.img
cp b0.img d0.img; cp b1.img d1.img
BCH_WRITE_LOG=$WORK/w3.wlog "$BCACHEFS" format --source src d0.img d1.img > fmt3.out 2>&1 || { cat fmt3.out; fail "format two devices"; }
"$R" info w3.wlog > info3
[ "$(grep -c '^slot' info3)" = 2 ] || { cat info3; fail "two devices are not two slots"; }
n3=$(sed -n 's/^records \([0-9]*\) .*/\1/p' info3)
"$R" apply w3.wlog "$n3" -b b0.img:b1.img -o o0.img:o1.img || fail "apply two devices"
cmp o0.img d0.img && cmp o1.img d1.img || fail "two devices: last state differs"
"$R" apply w3.wlog "$n3" -b b0.img -o o0.img 2> err && fail "one base for two devices accepted"
grep -q '2 devices, 1 base image' err || { cat err; fail "no clear message for a missing base"; }

# ---- a failed write is not logged ----
cp base.img f.img
BCH_FAULT_WRITES=3 BCH_WRITE_LOG=$WORK/w4.wlog "$BCACHEFS" format --source src f.img > /dev/null 2>&1 && fail "format with a write fault succeeded"
"$R" info w4.wlog | grep -q ' writes 3 ' || { "$R" info w4.wlog; fail "BCH_FAULT_WRITES=3: not 3 writes logged"; }

# ---- damaged and cut-off logs ----
size=$(stat -c %s w.wlog)
cp w.wlog bad.log
printf '\377' | dd of=bad.log bs=1 seek=$((size / 2)) conv=notrunc 2> /dev/null
"$R" info bad.log > bad.out 2>&1
rc=$?
[ $rc = 2 ] || { cat bad.out; fail "a damaged log: exit $rc, want 2"; }
grep -q 'the log is damaged' bad.out || { cat bad.out; fail "a damaged log: no message"; }
head -c $((size - 10)) w.wlog > cut.log
"$R" info cut.log > cut.out 2>&1 || fail "a cut-off log refused"
grep -q 'cut short' cut.out || fail "a cut-off log: no warning"
grep -q "^records $((nrec - 1)) " cut.out || { cat cut.out; fail "a cut-off log: not one record less"; }

# ---- reordered states ----
"$R" states --prefix 0 --reorder 8 --seed 7 w.wlog > r1 || fail "replay states"
"$R" states --prefix 0 --reorder 8 --seed 7 w.wlog > r2
cmp -s r1 r2 || fail "the same seed gave other states"
n=$(wc -l < r1)
[ $n -ge 5 ] && [ $n -le 8 ] || fail "$n reordered states of 8 drawn"
id=$(awk '{ print $1 }' r1 | tail -n 1)
cut=${id%@*}
"$R" apply w.wlog "$id" -b base.img -o s1.img
"$R" apply w.wlog "$id" -b base.img -o s2.img
cmp -s s1.img s2.img || fail "state $id is not reproducible"
"$R" apply w.wlog "$cut" -b base.img -o p.img
cmp -s s1.img p.img && fail "reordered state $id equals its prefix state"
grep -q 'torn' r1 || fail "no torn state"

# ---- run (in place, undone) == apply (from scratch), for every state ----
if [ -n "${TEST_QUICK:-}" ]; then p=8 n1=5 n3=3; else p=all n1=12 n3=6; fi
mkdir -p w
"$R" run --prefix $p --reorder $n1 --seed 3 w.wlog -b base.img -w w -- sh -c 'echo "$CRASH_STATE $(cksum < $CRASH_IMAGES)" >> sums.run' > run.out ||
	{ cat run.out; fail "replay run"; }
"$R" run --prefix $p --reorder $n3 --seed 3 w3.wlog -b b0.img:b1.img -w w -c -- sh -c 'echo "3:$CRASH_STATE $(cat $CRASH_IMAGES | cksum)" >> sums.run' > run3.out ||
	{ cat run3.out; fail "replay run (two devices, copies)"; }
n=0
while read -r st sum; do
	case $st in
	3:*) "$R" apply w3.wlog "${st#3:}" -b b0.img:b1.img -o a0.img:a1.img; s=$(cat a0.img a1.img | cksum);;
	*) "$R" apply w.wlog "$st" -b base.img -o a.img; s=$(cksum < a.img);;
	esac
	[ "$s" = "$sum" ] || fail "state $st: replay run and replay apply differ"
	n=$((n + 1))
done < sums.run
echo "$n states: run == apply"
[ $n -ge 15 ] || fail "only $n states compared"
