# Crash states of `fsck -y` repairs (tests/crash/README.md): the repairs are
# transactions of the update engine (journal commits, checkpoints, the
# superblock marked clean at the end). `fsck -y` of damaged images is
# recorded with BCH_WRITE_LOG; in every prefix of its write log and a
# seeded sample of reorderings between flushes, `fsck -f -n` must not crash,
# a second `fsck -y` must repair everything (exit 0 or 1) and `fsck -f -n`
# must then be clean (crashcheck.sh --mode repair).
#
# Images: corpus cases of tests/fsck (a directory loop, damage only in the
# journal, a node with a bad checksum, a missing alloc key, an interior
# node with a bad checksum) and the fixture of the convergence test
# (tests/fsck/converge-orig.img.zst) damaged by build/tests/damage with
# seed 8 (32 bytes of a dirents node: a repair of ~76 writes; since the
# node scan recovers lost leaves, seed 11 of an extents leaf takes 19). The
# repair of 310-replicas-entry-missing (a new replicas entry: the
# superblock changes beyond its first sector) gets every outcome of its
# small epochs (--exhaustive 18: each superblock and journal write
# dropped, torn at each sector, or whole).
#
# TEST_QUICK=1 (the ASan run): one corpus case, 310 and not the big repair.
# Knobs: CRASH_REORDER (reordered states per image, default 12; TEST_QUICK
# 4), CRASH_SEED (default 1), CRASH_PREFIX (prefix states of the big
# repair, default 25; TEST_QUICK 6; of the others: all, TEST_QUICK 8).
set -u
. "$(dirname "$0")/../lib.sh"
replay_tool
export BCACHEFS
test_tool damage
DAMAGE=$TOOL
command -v zstd > /dev/null || { echo "zstd missing"; exit 77; }
if [ -n "${TEST_QUICK:-}" ]; then
	nr=${CRASH_REORDER:-4} np=${CRASH_PREFIX:-6} npc=8
	cases="030-dir-loop"
else
	nr=${CRASH_REORDER:-12} np=${CRASH_PREFIX:-25} npc=all
	cases="030-dir-loop 047-journal-rm-dirent 100-node-bad-csum 405-alloc-key-missing 503-interior-bad-csum"
fi
seed=${CRASH_SEED:-1}
CC="sh $TESTDIR/crashcheck.sh"
corpus=$TESTDIR/../fsck
nfail=0

# record NAME BASE: fsck -y of a copy of BASE, logged in NAME.wlog
record() {
	cp --sparse=always "$2" "$1.img"
	BCH_WRITE_LOG=$WORK/$1.wlog "$BCACHEFS" fsck -y "$1.img" > "$1.y" 2>&1
	_r=$?
	[ $_r = 1 ] || { cat "$1.y"; fail "$1: fsck -y exit $_r, want 1"; }
	"$BCACHEFS" fsck -f -n "$1.img" > "$1.n" 2>&1 || { cat "$1.n"; fail "$1: not clean after fsck -y"; }
	"$REPLAY" info "$1.wlog" | head -n 1 | sed "s/^/$1: /"
}

for c in $cases; do
	zstd -qdf --sparse "$corpus/$c/image.zst" -o "$c.base" || fail "cannot decompress $c"
	record "$c" "$c.base"
	$CC --mode repair --prefix $npc --reorder $nr --seed $seed --keep "$WORK/fail-$c" "$c.wlog" "$c.base" > "$c.cc" 2>&1 ||
		nfail=$((nfail + 1))
	cat "$c.cc"
done

# every outcome of the small epochs (superblock and journal writes) of a
# repair that rewrites the superblock with a new replicas entry: a torn
# write of every superblock copy at once would leave no valid superblock
c=310-replicas-entry-missing
zstd -qdf --sparse "$corpus/$c/image.zst" -o "$c.base" || fail "cannot decompress $c"
record "$c" "$c.base"
$CC --mode repair --prefix 0 --reorder 0 --exhaustive 18 --keep "$WORK/fail-$c" "$c.wlog" "$c.base" > "$c.cc" 2>&1 ||
	nfail=$((nfail + 1))
cat "$c.cc"

[ $nfail = 0 ] || fail "$nfail recorded repairs have failing crash states (ids in fail-*/failed)"
[ -z "${TEST_QUICK:-}" ] || exit 0	# the big repair: not under ASan

zstd -qdf --sparse "$corpus/converge-orig.img.zst" -o big.base || fail "cannot decompress converge-orig"
"$DAMAGE" big.base 8 32 > damage.out 2>&1 || { cat damage.out; fail "damage"; }
grep RANGE damage.out
record big big.base
"$REPLAY" info big.wlog | grep -qE ' writes ([5-9][0-9]|[1-9][0-9][0-9]+)' || fail "the big repair has fewer than 50 writes"
$CC --mode repair --prefix $np --reorder $nr --seed $seed --keep "$WORK/fail-big" big.wlog big.base > big.cc 2>&1 ||
	nfail=$((nfail + 1))
cat big.cc

[ $nfail = 0 ] || fail "$nfail recorded repairs have failing crash states (ids in fail-*/failed)"
exit 0
