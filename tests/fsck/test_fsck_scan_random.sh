# Random damage of interior nodes and roots: whatever happens
# to them, the leaves are intact, so no file may be lost.
#
# The image: tests/fsck/scan-orig.img.zst (see test_fsck_scan.sh: 10k
# files, 4-level btrees, older copies of leaves in free buckets). For each
# seed, `build/tests/damage IMAGE SEED --interior` damages one random
# interior node or root of any btree: its magic zeroed (a quarter of the
# seeds), or 1-8 random bytes anywhere in its bsets, header included, with
# the checksums recomputed (half of the seeds) or not. Then fsck -y twice,
# and a seed fails when
#   - a run crashes or hangs, or the second fsck -y is not clean (exit 0);
#   - a key of the inodes, dirents, xattrs or extents btree differs from
#     the original's (a file lost, renamed, in lost+found, or an older copy
#     of something back); extents are compared after joining the pieces of
#     one extent (extents_norm.py: seed 108 cuts one at a damaged node
#     boundary, the same sectors in two keys);
#   - a byte of a file differs (`damage check`).
# A summary line: seeds, recovered, failed (seed and reason each).
#
# Seeds that failed once run every time, after the range (SCAN_EXTRA): 201,
# 248, 285 and 378 damage a pointer key so that it claims more than its
# leaf's own header says; the rewrite of the claimed range dropped the keys
# of the next leaf (fixed: the node scan fills the range too, under the
# salvaged keys).
#
# Knobs: SCAN_SEEDS (default 8; TEST_QUICK: 3), SCAN_FIRST (default 1),
# SCAN_EXTRA (default "201 248 285 378"; TEST_QUICK: "248"; "" for none),
# SCAN_TIMEOUT (seconds per run before it counts as a hang, default 300). The full run
# (200 seeds, by hand): SCAN_SEEDS=200 sh tests/run.sh fsck/test_fsck_scan_random
# A failing seed reproduces with
#   zstd -d tests/fsck/scan-orig.img.zst -o orig.img; cp orig.img t.img
#   build/tests/damage t.img SEED --interior; bcachefs fsck -y t.img
# (its damaged image is kept in $WORK/failures/).
set -u
. "$(dirname "$0")/../lib.sh"
test_tool damage
DAMAGE=${DAMAGE:-$TOOL}

if [ -n "${TEST_QUICK:-}" ]; then
	nseeds=${SCAN_SEEDS:-3} extra=${SCAN_EXTRA-248}
else
	nseeds=${SCAN_SEEDS:-8} extra=${SCAN_EXTRA-201 248 285 378}
fi
first=${SCAN_FIRST:-1}
tmo=${SCAN_TIMEOUT:-300}

orig=$WORK/orig.img
img=$WORK/t.img
zstd -qdf --sparse "$TESTDIR/scan-orig.img.zst" -o "$orig" || fail "cannot decompress scan-orig.img.zst"
for b in inodes dirents xattrs extents; do
	"$BCACHEFS" list -b $b "$orig" > "$WORK/orig.$b"
done
python3 "$TESTDIR/extents_norm.py" "$WORK/orig.extents" > "$WORK/orig.norm" &&
	mv "$WORK/orig.norm" "$WORK/orig.extents"
mkdir -p "$WORK/failures"

nok=0 nfail=0 nclean=0
failures=""
last=$((first + nseeds - 1))
t0=$(date +%s)
for seed in $(seq "$first" "$last") $extra; do
	cp --sparse=always "$orig" "$img"
	"$DAMAGE" "$img" "$seed" --interior > "$WORK/damage.out" 2>&1
	rc=$?
	[ $rc = 0 ] || { cat "$WORK/damage.out"; fail "damage tool failed on seed $seed ($rc)"; }
	what=$(head -n 1 "$WORK/damage.out" | sed 's/^damaged: //')
	cp --sparse=always "$img" "$WORK/damaged.img"
	why=""
	for run in 1 2; do
		timeout "$tmo" "$BCACHEFS" fsck -y "$img" > "$WORK/y$run.out" 2>&1
		rc=$?
		if [ $rc = 124 ]; then why="$why fsck -y run $run hangs;"; break; fi
		if crashed $rc; then why="$why fsck -y run $run crashed ($rc);"; break; fi
		[ $run = 1 ] && [ $rc = 0 ] && nclean=$((nclean + 1))
		[ $run = 2 ] && [ $rc != 0 ] && why="$why second fsck -y: exit $rc;"
	done
	if [ -z "$why" ]; then
		for b in inodes dirents xattrs extents; do
			"$BCACHEFS" list -b $b "$img" > "$WORK/t.$b" 2>&1
			# an extent the repair cut at a node boundary (two keys for
			# the same sectors) is the same extent: extents_norm.py joins them
			[ $b = extents ] && python3 "$TESTDIR/extents_norm.py" "$WORK/t.$b" > "$WORK/t.norm" &&
				mv "$WORK/t.norm" "$WORK/t.$b"
			cmp -s "$WORK/orig.$b" "$WORK/t.$b" || why="$why $b keys differ;"
		done
		timeout "$tmo" "$DAMAGE" check "$orig" "$img" inodes 0:0 0:0 > "$WORK/check.out" 2>&1 ||
			why="$why files lost or changed ($(grep -v '^checked' "$WORK/check.out" | head -n 1));"
	fi
	if [ -n "$why" ]; then
		nfail=$((nfail + 1))
		failures="$failures
  seed $seed ($what):$why"
		zstd -q -1 "$WORK/damaged.img" -o "$WORK/failures/seed-$seed.img.zst"
		cat "$WORK/damage.out" "$WORK/y1.out" > "$WORK/failures/seed-$seed.log" 2>/dev/null
	else
		nok=$((nok + 1))
	fi
done
echo "seeds $first-$last${extra:+ and $extra}: $nok recovered every file ($nclean of them with nothing to repair), $nfail failed, in $(( $(date +%s) - t0 ))s$failures"
[ $nfail = 0 ] || fail "$nfail seeds failed (images and logs in $WORK/failures)"
rm -rf "$WORK/failures"
exit 0
