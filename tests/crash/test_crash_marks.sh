# A workload with "fsync returned" marks and its own invariants
# (tests/crash/README.md): three processes commit xattrs through the update
# engine (build/tests/plant: one transaction each, flushed journal entry;
# -j leaves them in the journal only, an unclean filesystem), and after
# each returns `replay mark` appends a mark naming what it committed. In
# every crash state (all prefixes, a sample of reorderings between
# flushes), after the recovery of a mount (`replay recover`), fsck -f -n must
# be clean and every xattr whose mark the state has reached must be there
# (the checker reads CRASH_MARKS), the analogue of "every file fsync'd
# before the cut is byte-exact".
# The harness must fail:
#   - the same workload with BCH_TEST_SKIP_FLUSH=1 (commits that return
#     before their journal entry is durable, like an fsync that lies): some
#     reordered state has a mark without its xattr;
#   - a wrong checker (it wants the last xattr in every state) fails on the
#     early states.
#
# Knobs: CRASH_REORDER (default 30; TEST_QUICK 6), CRASH_PREFIX (default
# all; TEST_QUICK 6), CRASH_SEED (default 1). The runs that must fail take
# 12 reordered states whatever the knobs.
set -u
. "$(dirname "$0")/../lib.sh"
replay_tool
export BCACHEFS
test_tool plant
PLANT=$TOOL
if [ -n "${TEST_QUICK:-}" ]; then
	nr=${CRASH_REORDER:-6} np=${CRASH_PREFIX:-6}
else
	nr=${CRASH_REORDER:-30} np=${CRASH_PREFIX:-all}
fi
seed=${CRASH_SEED:-1}
CC="sh $TESTDIR/crashcheck.sh"

mkdir -p src/d1/d2
echo hello > src/a
seq 1 5000 > src/d1/b
echo c > src/d1/d2/c
truncate -s 16M img
"$BCACHEFS" format --source src img > fmt.out 2>&1 || { cat fmt.out; fail "format"; }
cp img base.img

# workload LOG: three processes, a mark after each one returned
workload() {
	BCH_WRITE_LOG=$WORK/$1 "$PLANT" -j img xattr /a k1 v1 || fail "plant 1"
	"$REPLAY" mark "$1" "k1:v1"
	BCH_WRITE_LOG=$WORK/$1 "$PLANT" -j img xattr /d1/b k2 v2 + xattr /d1/d2/c k3 v3 || fail "plant 2"
	"$REPLAY" mark "$1" "k2:v2"
	"$REPLAY" mark "$1" "k3:v3"
	BCH_WRITE_LOG=$WORK/$1 "$PLANT" img xattr /d1 k4 v4 || fail "plant 3"
	"$REPLAY" mark "$1" "k4:v4"
}

cat > check.sh <<'EOF'
# every xattr named by a reached mark is there
"$BCACHEFS" list -b xattrs $CRASH_IMAGES > "$CRASH_MARKS.x" || exit 1
while read -r m; do
	grep -q ")$m\$" "$CRASH_MARKS.x" || { echo "mark $m reached, but the xattr is missing"; exit 1; }
done < "$CRASH_MARKS"
EOF

workload m.wlog
"$REPLAY" info m.wlog
"$BCACHEFS" fsck -f -n img > n.out 2>&1 || { cat n.out; fail "the workload left an unclean fsck"; }
$CC --check "sh $WORK/check.sh" --prefix $np --reorder $nr --seed $seed --keep "$WORK/fail1" m.wlog base.img > cc1.out 2>&1
rc=$?
cat cc1.out
[ $rc = 0 ] || fail "crash states of the workload failed (ids in fail1/failed)"

# ---- commits that return before they are durable ----
cp base.img img
BCH_TEST_SKIP_FLUSH=1 workload s.wlog
$CC --check "sh $WORK/check.sh" --prefix 0 --reorder 12 --seed $seed s.wlog base.img > cc2.out 2>&1
rc=$?
cat cc2.out
[ $rc = 1 ] || fail "commits without flushes: crashcheck exit $rc, want 1"
grep -q 'reached, but the xattr is missing' cc2.out || fail "commits without flushes: no state lost a marked xattr"

# ---- a wrong checker ----
$CC --check '"$BCACHEFS" list -b xattrs $CRASH_IMAGES | grep -q ")k4:v4$"' --prefix 4 --reorder 0 m.wlog base.img > cc3.out 2>&1
rc=$?
cat cc3.out
[ $rc = 1 ] || fail "a checker that wants k4 everywhere: crashcheck exit $rc, want 1"
grep -q "the workload's check: exit 1" cc3.out || fail "the failing checker is not reported"
exit 0
