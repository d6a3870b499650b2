#!/bin/sh
# Every seed of the fuzz corpus, every input the campaigns kept
# (campaign.tar.zst) and every regression input, through the
# fuzz targets built without libFuzzer (build/tests/fuzz/replay_<target>,
# made by `make unit`): with the normal build, and with gcc's ASan/UBSan in
# `make check-asan` (the build folder of $BCACHEFS). Checksums are checked (no bypass outside fuzz builds),
# so this is what the release build does with those inputs: no crash, no
# sanitizer report, no hang (60 s per target), no leak.
case $BCACHEFS in
*/build-*/bcachefs) bins=$(dirname "$BCACHEFS")/tests/fuzz;;
*) bins=$(cd "$TESTDIR/../.." && pwd)/build/tests/fuzz;;
esac
src=$TESTDIR
[ -x "$bins/replay_super" ] || { echo "replay binaries not built (make unit)"; exit 77; }
# and what the campaigns kept (tests/fuzz/run.sh save)
if [ -f "$src/campaign.tar.zst" ]; then
	mkdir -p "$WORK/saved"
	zstd -qdc "$src/campaign.tar.zst" | tar -xf - -C "$WORK/saved" ||
		{ echo "cannot unpack $src/campaign.tar.zst"; exit 1; }
fi
fail=0
for t in super node journal extent strhash image ctl mount; do
	set --
	for d in "$src/corpus/$t" "$src/regress/$t" "$WORK/saved/$t"; do
		[ -d "$d" ] && for f in "$d"/*; do [ -f "$f" ] && set -- "$@" "$f"; done
	done
	[ $# -gt 0 ] || continue
	rc=0
	out=$(timeout 60 "$bins/replay_$t" "$@" 2>&1) || rc=$?
	if [ $rc != 0 ]; then
		echo "replay_$t: exit $rc"
		echo "$out" | tail -n 30
		fail=1
	else
		echo "replay_$t: $out"
	fi
done
exit $fail
