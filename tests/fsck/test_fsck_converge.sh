# Convergence of fsck -y on randomly damaged images.
#
# The image: tests/fsck/converge-orig.img.zst, a fixed 16 MiB image made by
# `format --source` (8k btree nodes, so each btree has several nodes) of a
# generated tree (dirs, a few hundred files with data, symlinks, hardlinks,
# xattrs; tests/fsck/damage_tree.py converge, a fixed-seed generator); how
# to regenerate it: tests/fsck/make-damage-images.sh. For each seed,
# build/tests/damage (tests/fsck/damage.c) overwrites a few random bytes in
# the key area of one bset of one random btree node of a copy and
# recomputes the bset checksum, so the damage reaches the key checks. Then:
#   fsck -y, fsck -f -n; if -n is not clean, fsck -y and fsck -f -n again.
# A seed fails when
#   - fsck -f -n is still not clean after 2 repair runs (not converged),
#   - a run crashes (exit >= 128, sanitizers included) or hangs (timeout),
#   - fsck -y exits with the operational-error bit (8) without clearly
#     refusing (a message saying it refuses / cannot repair),
#   - `damage check` finds a regular file of the original image, outside
#     the damaged node's key range, missing or changed in the repaired image.
# A summary is printed: seeds, converged in 1 run, in 2 runs, not converged
# (seed and first message of each), crashes, hangs, lost files.
#
# The image is fixed, so seed N is the same damage on every run and every
# machine: a failing seed (here 17) reproduces with
#   zstd -d tests/fsck/converge-orig.img.zst -o orig.img; cp orig.img t.img
#   build/tests/damage t.img 17        # last line: RANGE BTREE MIN MAX
#   bcachefs fsck -y t.img; bcachefs fsck -f -n t.img
#   build/tests/damage check orig.img t.img BTREE MIN MAX
# (fsck itself still picks random hash seeds for a directory it recreates,
# and times). The original image and every failing damaged image (before
# repair) are also kept, zstd-compressed, in $WORK/failures/ (the runner
# keeps $WORK on failure): orig.img.zst, seed-N.img.zst, seed-N.log; and
# $WORK/outcomes.txt has one line per seed (a checksum of the damage, the
# exit codes of the fsck runs, the outcome): two runs of the same binary
# give the same file (diff them to check).
#
# Knobs: CONVERGE_SEEDS (default 500, TEST_QUICK: 50), CONVERGE_FIRST
# (first seed, default 1), CONVERGE_TIMEOUT (seconds per run, default 20),
# CONVERGE_XFAIL=0 to make the expected failures (below) fail too,
# CONVERGE_NEW_IMAGE=1 to damage a freshly formatted image of the same tree
# instead of the fixture (random UUID, hash seeds and times: other bytes
# damaged for the same seeds; exploratory runs only, keep orig.img.zst of a
# failure to reproduce it).
set -u
. "$(dirname "$0")/../lib.sh"

test_tool damage
DAMAGE=${DAMAGE:-$TOOL}

if [ -n "${TEST_QUICK:-}" ]; then nseeds=${CONVERGE_SEEDS:-50}; else nseeds=${CONVERGE_SEEDS:-500}; fi
first=${CONVERGE_FIRST:-1}
tmo=${CONVERGE_TIMEOUT:-20}

# Expected failures, while the repairs are being written: one
# line "KIND~REGEX~REASON" each. KIND is notconv (REGEX is matched against
# "[BTREE MIN MAX] first message of the last fsck -f -n") or opfail (against
# the first line of the fsck -y output), crash (against the sanitizer
# message) or lost (against "[BTREE MIN MAX] lost: ..."); a hang never is.
# Remove a line when its repair lands; CONVERGE_XFAIL=0 shows everything as
# a failure.
XFAIL=''

# scratch images on tmpfs when there is one
scratch=$(mktemp -d /dev/shm/bcachefs-converge.XXXXXX 2>/dev/null) || scratch=$(mktemp -d "$WORK/scratch.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
trap 'exit 1' HUP INT PIPE TERM
mkdir -p "$WORK/failures"

# ---- the image ----
orig=$scratch/orig.img
if [ "${CONVERGE_NEW_IMAGE:-0}" = 1 ]; then
	command -v python3 > /dev/null || { echo "python3 missing: skipped"; exit 77; }
	sh "$TESTDIR/make-damage-images.sh" --image converge "$orig" > "$WORK/format.out" 2>&1 ||
		{ cat "$WORK/format.out"; fail "cannot make a fresh image"; }
	what="a fresh image (CONVERGE_NEW_IMAGE=1)"
else
	zstd -qdf --sparse "$TESTDIR/converge-orig.img.zst" -o "$orig" || fail "cannot decompress converge-orig.img.zst"
	what="tests/fsck/converge-orig.img.zst"
fi
"$BCACHEFS" fsck -f -n "$orig" > "$WORK/orig.fsck" 2>&1 || { cat "$WORK/orig.fsck"; fail "the original image is not clean"; }
zstd -q -1 "$orig" -o "$WORK/failures/orig.img.zst"
echo "image: $what, $(sha256sum < "$orig" | cut -c1-16); $nseeds seeds from $first"

# ---- the seeds ----
n1=0 n2=0 nnot=0 ncrash=0 nhang=0 nop=0 nlost=0 nskip=0 nrefused=0 nxfail=0 nseen=0
failures=$WORK/failures.txt
: > "$failures"
# one line per seed (kept with $WORK): the damage (cksum of the damage
# tool's report), the exit codes of the runs, the outcome, damage check's
# exit code; to compare two runs of the test
outcomes=$WORK/outcomes.txt
: > "$outcomes"
img=$scratch/t.img
t0=$(date +%s)

# record KIND SEED MESSAGE: one failure (or expected failure)
record() {
	_kind=$1 _seed=$2 _msg=$3 _x=""
	if [ "${CONVERGE_XFAIL:-1}" != 0 ]; then
		_x=$(printf '%s\n' "$XFAIL" | while IFS='~' read -r _k _re _why; do
			[ "$_k" = "$_kind" ] || continue
			if printf '%s\n' "$_msg" | grep -Eq -- "$_re"; then echo "$_why"; break; fi
		done)
	fi
	if [ -n "$_x" ]; then
		nxfail=$((nxfail + 1))
		printf 'XFAIL %-8s seed %-5s %s\n' "$_kind" "$_seed" "$_msg" >> "$failures"
		printf '%s\n' "$_x" >> "$scratch/xfail-reasons"
	else
		printf 'FAIL  %-8s seed %-5s %s\n' "$_kind" "$_seed" "$_msg" >> "$failures"
		[ -f "$WORK/failures/seed-$_seed.img.zst" ] ||
			zstd -q -1 "$scratch/damaged.img" -o "$WORK/failures/seed-$_seed.img.zst"
		cp "$scratch/log" "$WORK/failures/seed-$_seed.log"
	fi
}

seed=$first
last=$((first + nseeds - 1))
while [ "$seed" -le "$last" ]; do
	cp --sparse=always "$orig" "$img"
	"$DAMAGE" "$img" "$seed" > "$scratch/damage.out" 2>&1
	rc=$?
	if [ $rc = 77 ]; then
		nskip=$((nskip + 1)); echo "seed $seed: skipped" >> "$outcomes"
		seed=$((seed + 1)); continue
	fi
	[ $rc = 0 ] || { cat "$scratch/damage.out"; fail "damage tool failed on seed $seed ($rc)"; }
	cp --sparse=always "$img" "$scratch/damaged.img"
	nseen=$((nseen + 1))
	cp "$scratch/damage.out" "$scratch/log"
	set -- $(grep '^RANGE ' "$scratch/damage.out")
	range="$2 $3 $4"

	conv=0 bad="" codes=""
	for run in 1 2; do
		timeout "$tmo" "$BCACHEFS" fsck -y "$img" > "$scratch/y.out" 2>&1
		rc=$?
		codes="$codes y$run=$rc"
		{ echo "--- fsck -y run $run: exit $rc"; cat "$scratch/y.out"; } >> "$scratch/log"
		if [ $rc = 124 ]; then bad=hang; msg="fsck -y run $run: no end after ${tmo}s"; break; fi
		if [ $rc -ge 128 ]; then bad=crash; msg="fsck -y run $run: exit $rc: $(grep -a -m1 -E 'ERROR|Sanitizer|runtime error|Assertion' "$scratch/y.out")"; break; fi
		if [ $((rc & 8)) != 0 ]; then
			if grep -aEqi 'refus|cannot (be )?repair|not repairable|will not repair' "$scratch/y.out"; then
				bad=refused; msg=$(grep -a -m1 -Ei 'refus|cannot (be )?repair|not repairable|will not repair' "$scratch/y.out")
			else
				bad=opfail; msg="fsck -y run $run: exit $rc: $(grep -a -v '^  ' "$scratch/y.out" | head -n 1)"
			fi
			break
		fi
		timeout "$tmo" "$BCACHEFS" fsck -f -n "$img" > "$scratch/n.out" 2>&1
		rc=$?
		codes="$codes n$run=$rc"
		{ echo "--- fsck -f -n after run $run: exit $rc"; cat "$scratch/n.out"; } >> "$scratch/log"
		if [ $rc = 124 ]; then bad=hang; msg="fsck -f -n after run $run: no end after ${tmo}s"; break; fi
		if [ $rc -ge 128 ]; then bad=crash; msg="fsck -f -n after run $run: exit $rc: $(grep -a -m1 -E 'ERROR|Sanitizer|runtime error|Assertion' "$scratch/n.out")"; break; fi
		if [ $rc = 0 ]; then conv=$run; break; fi
	done

	case $bad in
	hang)	nhang=$((nhang + 1)); record hang "$seed" "$msg";;
	crash)	ncrash=$((ncrash + 1)); record crash "$seed" "$msg";;
	opfail)	nop=$((nop + 1)); record opfail "$seed" "$msg";;
	refused) nrefused=$((nrefused + 1)); printf 'REFUSED          seed %-5s %s\n' "$seed" "$msg" >> "$failures";;
	*)
		case $conv in
		1) n1=$((n1 + 1));;
		2) n2=$((n2 + 1));;
		*) nnot=$((nnot + 1))
		   record notconv "$seed" "[$range] $(grep -a -v '^  ' "$scratch/n.out" | head -n 1)";;
		esac
	esac

	# files the damage did not touch must have survived, whatever happened
	check=-
	if [ "$bad" != hang ] && [ "$bad" != crash ]; then
		timeout "$tmo" "$DAMAGE" check "$orig" "$img" $range > "$scratch/check.out" 2>&1
		rc=$?
		check=$rc
		if [ $rc != 0 ]; then
			cat "$scratch/check.out" >> "$scratch/log"
			nlost=$((nlost + 1))
			record lost "$seed" "[$range] $(head -n 1 "$scratch/check.out")"
		fi
	fi
	echo "seed $seed: [$range] damage $(cksum < "$scratch/damage.out" | cut -d' ' -f1):$codes ${bad:-conv$conv} check=$check" >> "$outcomes"
	seed=$((seed + 1))
done
secs=$(( $(date +%s) - t0 ))

echo "seeds: $nseen damaged ($nskip skipped) in ${secs}s"
echo "converged in 1 run: $n1"
echo "converged in 2 runs: $n2"
echo "refused clearly: $nrefused"
echo "not converged: $nnot"
echo "crashes: $ncrash, hangs: $nhang, operational errors: $nop"
echo "seeds losing untouched files: $nlost"
echo "expected failures (XFAIL): $nxfail"
[ -f "$scratch/xfail-reasons" ] && sort "$scratch/xfail-reasons" | uniq -c | sed 's/^/  /'
cat "$failures"
nfail=$(grep -c '^FAIL' "$failures")
[ "$nfail" = 0 ] || fail "$nfail seeds failed (images and logs in $WORK/failures)"
rm -rf "$WORK/failures"
exit 0
