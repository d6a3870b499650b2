# Crash states of `format --source` (tests/crash/README.md): every prefix of
# its write log and a seeded sample of reorderings between flushes (one
# device, then two) must be "not a filesystem" (no valid superblock yet),
# "never initialized" (which fsck -y then initialises: exit 1, then fsck -f -n
# 0), or a filesystem that the recovery of a mount (`replay recover`)
# leaves fsck-clean and that holds the whole source tree (`extract` equals
# it). Then the harness must be able to fail: the same format recorded with
# BCH_TEST_SKIP_FLUSH=1 (its flushes skipped, as a writer that never
# flushes) must give failing reordered states.
#
# Knobs: CRASH_REORDER (reordered states per log, default 30; TEST_QUICK 8),
# CRASH_PREFIX (prefix states, default all; TEST_QUICK 8), CRASH_SEED
# (default 1).
set -u
. "$(dirname "$0")/../lib.sh"
replay_tool
export BCACHEFS
if [ -n "${TEST_QUICK:-}" ]; then
	nr=${CRASH_REORDER:-8} np=${CRASH_PREFIX:-8} np2=5
else
	nr=${CRASH_REORDER:-30} np=${CRASH_PREFIX:-all} np2=12
fi
seed=${CRASH_SEED:-1}
CC="sh $TESTDIR/crashcheck.sh"

# the tree: directories, files of several sizes, a hard link, symlinks
mkdir -p src/d1/d2 src/empty
echo hello > src/a
seq 1 30000 > src/d1/big
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "%c", 65 + i % 26 }' > src/d1/d2/c
ln src/a src/d1/hard
ln -s ../a src/d1/sym
ln -s nowhere src/dangling
cat > check.sh <<EOF
# an initialised state holds the whole tree
x=\$(mktemp -d "$WORK/x.XXXXXX")
"\$BCACHEFS" extract \$CRASH_IMAGES / "\$x/t" > /dev/null || exit 1
rmdir "\$x/t/lost+found" || exit 1
diff -r --no-dereference "$WORK/src" "\$x/t" || exit 1
rm -rf "\$x"
EOF
chk="sh $WORK/check.sh"

# ---- one device ----
truncate -s 16M base.img
cp base.img img
BCH_WRITE_LOG=$WORK/f.wlog "$BCACHEFS" format --source src img > fmt.out 2>&1 || { cat fmt.out; fail "format --source"; }
"$REPLAY" info f.wlog
$CC --allow-nofs --allow-uninit --check "$chk" --prefix $np --reorder $nr --seed $seed --keep "$WORK/fail1" f.wlog base.img > cc1.out 2>&1
rc=$?
cat cc1.out
[ $rc = 0 ] || fail "format --source, one device: crash states failed (ids in fail1/failed)"
grep -q ' [1-9][0-9]* ok,' cc1.out || fail "no state was a complete filesystem"
grep -q ' [1-9][0-9]* uninitialised,' cc1.out || fail "no state was an uninitialised filesystem"

# ---- two devices ----
truncate -s 16M b0.img b1.img
cp b0.img d0.img; cp b1.img d1.img
BCH_WRITE_LOG=$WORK/f2.wlog "$BCACHEFS" format --source src --replicas 2 d0.img d1.img > fmt2.out 2>&1 ||
	{ cat fmt2.out; fail "format --source, two devices"; }
$CC --allow-nofs --allow-uninit --check "$chk" --prefix $np2 --reorder $nr --seed $seed --keep "$WORK/fail2" f2.wlog b0.img:b1.img > cc2.out 2>&1
rc=$?
cat cc2.out
[ $rc = 0 ] || fail "format --source, two devices: crash states failed (ids in fail2/failed)"

# ---- the harness fails on a writer that does not flush ----
cp base.img sk.img
BCH_TEST_SKIP_FLUSH=1 BCH_WRITE_LOG=$WORK/sk.wlog "$BCACHEFS" format --source src sk.img > fmt3.out 2>&1 || { cat fmt3.out; fail "format (skip flush)"; }
"$REPLAY" info sk.wlog | grep -q ' flushes 0 ' || fail "BCH_TEST_SKIP_FLUSH=1: flushes were logged"
$CC --allow-nofs --allow-uninit --check "$chk" --prefix 0 --reorder 12 --seed $seed sk.wlog base.img > cc3.out 2>&1
rc=$?
cat cc3.out
[ $rc = 1 ] || fail "a format that never flushes: crashcheck exit $rc, want 1 (failing states)"
grep -q '^FAIL ' cc3.out || fail "a format that never flushes: no failing state reported"
exit 0
