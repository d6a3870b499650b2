# fsck -f -n on every golden image our read side covers: exit 0 (clean), and
# the images untouched afterwards (a truly read-only open): modification
# and change times unchanged for every image, and the full sha256 for the
# small ones (hashing every 1 GiB image would dominate the test's time).
set -e
. "$(dirname "$0")/../lib.sh"
for c in $(golden_read_cases); do
	imgs=$(golden_images "$c")
	stamp_before=$(stat -c '%y %z %s' $imgs)
	hash_before=$(find $imgs -size -100M -exec sha256sum {} +)
	set +e
	"$BCACHEFS" fsck -f -n $(golden_pass_opts "$c") $imgs > "$WORK/$c.out" 2>&1
	rc=$?
	set -e
	[ "$stamp_before" = "$(stat -c '%y %z %s' $imgs)" ] || fail "$c: fsck -f -n modified the image"
	[ "$hash_before" = "$(find $imgs -size -100M -exec sha256sum {} +)" ] || fail "$c: fsck -f -n changed the image"
	[ $rc = 0 ] || { cat "$WORK/$c.out"; fail "$c: fsck -f -n exited $rc"; }
	grep -q "clean" "$WORK/$c.out" || fail "$c: no 'clean' line"
	echo "ok $c"
	rm -rf "$WORK/$c"
done
