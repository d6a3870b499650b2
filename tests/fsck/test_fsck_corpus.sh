# The fsck corruption corpus (tests/fsck/NNN-name/, made by make-corpus.sh):
# for each case, `fsck -f -n` reports a problem, exits 4 and leaves the image
# byte-identical; the first `fsck -y` prints expect.1, the second expect.2
# (clean, exit 0). Cases with an xfail file document a known bug: they are
# run and reported as XFAIL with the reason (and what differs now, crashes
# under the sanitizers included), without failing the test.
# A case's filter file (sed) normalises output that differs from run to
# run. TEST_QUICK=1 (the ASan run): every 4th case.
set -e
. "$(dirname "$0")/../lib.sh"
dir=$TESTDIR
n=0 nfail=0 nxfail=0 i=0
failed=""

for d in "$dir"/[0-9]*/; do
	d=${d%/}
	[ -f "$d/image.zst" ] || continue
	i=$((i + 1))
	[ "${TEST_QUICK:-}" = 1 ] && [ $((i % 4)) != 1 ] && continue
	c=$(basename "$d")
	w=$WORK/$c
	mkdir -p "$w"
	zstd -qd --sparse "$d/image.zst" -o "$w/image"
	cp --sparse=always "$w/image" "$w/orig"
	why=""
	set +e
	( cd "$w" && "$BCACHEFS" fsck -f -n image > n.out 2>&1 ); rc=$?
	set -e
	crashed $rc && why="$why fsck -f -n crashed ($rc);"
	[ $rc = 4 ] || why="$why fsck -f -n exit $rc, want 4;"
	grep -q . "$w/n.out" || why="$why fsck -f -n reported nothing;"
	cmp -s "$w/image" "$w/orig" || why="$why fsck -f -n changed the image;"
	for r in 1 2; do
		set +e
		( cd "$w" && "$BCACHEFS" fsck -y image > out.$r 2>&1 ); rc=$?
		set -e
		crashed $rc && why="$why fsck -y run $r crashed ($rc);"
		echo "exit $rc" >> "$w/out.$r"
		# output that is not the same from run to run (random seeds): long numbers -> N
		[ -f "$d/filter" ] && { sed -f "$d/filter" "$w/out.$r" > "$w/f" && mv "$w/f" "$w/out.$r"; }
		cmp -s "$w/out.$r" "$d/expect.$r" || {
			why="$why run $r differs from expect.$r;"
			diff "$d/expect.$r" "$w/out.$r" | head -n 20 | sed "s/^/    $c: /"
		}
	done
	n=$((n + 1))
	if [ -f "$d/xfail" ]; then
		nxfail=$((nxfail + 1))
		echo "XFAIL $c: $(tr '\n' ' ' < "$d/xfail")${why:+(now:$why)}"
	elif [ -n "$why" ]; then
		nfail=$((nfail + 1)); failed="$failed $c"
		echo "FAIL $c:$why"
	else
		echo "ok $c"
	fi
	rm -rf "$w"
done

echo "$n cases, $nfail failed, $nxfail xfail (known bugs)"
[ $n -gt 0 ] || fail "no cases"
[ $nfail = 0 ] || fail "failed:$failed"
