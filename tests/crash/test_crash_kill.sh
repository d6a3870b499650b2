# SIGKILL during writes (tests/crash/killtest.sh): `format --source` of a
# tree of 600 files and `fsck -y` of a damaged image (the convergence
# fixture with damage seed 11, ~340 writes) are killed at seeded random
# moments; what each kill leaves must pass the checks of a crash state:
# format: not a filesystem, uninitialised (fsck -y initialises it) or
# complete and clean after the recovery of a mount; fsck -y: a second
# fsck -y repairs everything and fsck -f -n is then clean. At least one run
# of each must really be killed in the middle of its writes (else again
# with the next seed, three tries; then, the machine's load having made
# every timed kill too early or too late, once with kills at seeded
# write numbers: killtest.sh --self-kill).
#
# Knobs: KILL_RUNS (per workload, default 6; TEST_QUICK 3), KILL_SEED
# (default 1).
set -u
. "$(dirname "$0")/../lib.sh"
replay_tool
export BCACHEFS
test_tool damage
DAMAGE=$TOOL
command -v setsid > /dev/null || { echo "setsid missing"; exit 77; }
command -v zstd > /dev/null || { echo "zstd missing"; exit 77; }
if [ -n "${TEST_QUICK:-}" ]; then runs=${KILL_RUNS:-3}; else runs=${KILL_RUNS:-6}; fi
seed=${KILL_SEED:-1}
KT="sh $TESTDIR/killtest.sh"

# mid WRITES-LINES: some run was killed after a write and before the last
mid() {
	sed -n 's/.*killed .*, \([0-9]*\) of \([0-9]*\) writes.*/\1 \2/p' "$1" |
		awk '$1 > 0 && $1 < $2 { n++ } END { exit !n }'
}

# kt NAME KILLTEST-ARGS...: the kills; when none landed in the middle of
# the writes (the delays come from a timed run: a machine whose load
# changes can make them all too late), again with the next seeds, 3 tries
kt() {
	_n=$1
	shift
	for _s in $seed $((seed + 1)) $((seed + 2)); do
		$KT --runs $runs --seed $_s --keep "$WORK/fail-$_n" "$@" > "$_n.out" 2>&1
		_rc=$?
		cat "$_n.out"
		[ $_rc = 0 ] || fail "$_n: a killed run left a bad state"
		mid "$_n.out" && return 0
		echo "$_n: no kill in the middle of the writes with seed $_s"
	done
	$KT --self-kill --runs $runs --seed $seed --keep "$WORK/fail-$_n" "$@" > "$_n.out" 2>&1
	_rc=$?
	cat "$_n.out"
	[ $_rc = 0 ] || fail "$_n: a killed run left a bad state"
	mid "$_n.out" || fail "$_n: no run was killed in the middle of its writes, even at write numbers"
}

# ---- format --source ----
awk 'BEGIN {
	for (d = 0; d < 20; d++) {
		system("mkdir -p src/d" d)
		for (f = 0; f < 30; f++) {
			p = "src/d" d "/f" f
			n = (d * 31 + f * 17) % 400
			for (i = 0; i < n; i++) print d, f, i > p
			close(p)
		}
	}
}'
truncate -s 64M fbase.img
kt format --allow-nofs --allow-uninit fbase.img -- \
	sh -c 'exec "$BCACHEFS" format --source "$0" $KILL_IMAGES' "$WORK/src"

# ---- fsck -y ----
zstd -qdf --sparse "$TESTDIR/../fsck/converge-orig.img.zst" -o ybase.img || fail "cannot decompress converge-orig"
"$DAMAGE" ybase.img 11 32 > damage.out 2>&1 || { cat damage.out; fail "damage"; }
kt fsck --mode repair ybase.img -- sh -c 'exec "$BCACHEFS" fsck -y $KILL_IMAGES'
exit 0
