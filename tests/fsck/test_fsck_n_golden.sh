# fsck -n on every golden image our read side covers: exit 0 (clean),
# and the images are byte-identical afterwards (a truly read-only open).
set -e
. "$(dirname "$0")/../lib.sh"
for c in $(golden_read_cases); do
	imgs=$(golden_images "$c")
	before=$(cat $imgs | sha256sum)
	set +e
	"$BCACHEFS" fsck -n $(golden_pass_opts "$c") $imgs > "$WORK/$c.out" 2>&1
	rc=$?
	set -e
	after=$(cat $imgs | sha256sum)
	[ "$before" = "$after" ] || fail "$c: fsck -n changed the image"
	[ $rc = 0 ] || { cat "$WORK/$c.out"; fail "$c: fsck -n exited $rc"; }
	grep -q "clean" "$WORK/$c.out" || fail "$c: no 'clean' line"
	echo "ok $c"
	rm -rf "$WORK/$c"
done
