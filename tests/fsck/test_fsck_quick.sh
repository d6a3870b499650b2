# fsck's quick check (libbcachefs/fsck/fsck_quick.c): one read
# of each btree that proves the passes would find nothing. It must pass
# every clean golden image (else a clean filesystem pays for every pass:
# the figures of `make bench` depend on it), and it must give up on every
# damaged image of the corpus, whatever the damage (else a problem would
# be missed: the passes would not run). fsck -v says which it was.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1
quick_ok="quick check: nothing to report"

n=0
for c in $(golden_read_cases); do
	imgs=$(golden_images "$c")
	rc=0; "$BCACHEFS" fsck -n -f -v $(golden_pass_opts "$c") $imgs > out 2>&1 || rc=$?
	[ $rc = 0 ] || { cat out; fail "$c: fsck -n -f exit $rc"; }
	grep -q "$quick_ok" out || { cat out; fail "$c: the quick check gave up on a clean image"; }
	rm -rf "${WORK:?}/$c"
	n=$((n + 1))
done
echo "ok   the quick check passes $n clean golden images"

n=0
for d in "$TESTDIR"/[0-9]*/ "$TESTDIR"/scan/[0-9]*/; do
	[ -f "$d/image.zst" ] || continue
	c=$(basename "$d")
	zstd -qdf --sparse "$d/image.zst" -o img
	rc=0; "$BCACHEFS" fsck -n -f -v img > out 2>&1 || rc=$?
	crashed $rc && { cat out; fail "$c: fsck -n -f crashed ($rc)"; }
	grep -q "$quick_ok" out && { cat out; fail "$c: the quick check passed a damaged image"; }
	n=$((n + 1))
done
[ $n -gt 100 ] || fail "only $n corpus cases found"
echo "ok   the quick check gives up on all $n damaged corpus images"

