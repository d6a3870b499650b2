# fsck's modes exclude each other: -n, -p (-a) and -y,
# given together in any order or bundled, are a usage error (exit 16) and
# the image is not touched, though it has a problem any repair would fix
# (corpus case 002: a wrong link count). The same mode twice, and -p with
# -a (its fsck(8) spelling), are fine.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1
zstd -qd --sparse "$TESTDIR/002-nlink-too-high/image.zst" -o img
cp img orig

for o in "-n -y" "-y -n" "-n -p" "-p -n" "-p -y" "-y -p" "-a -y" "-n -a" "-ny" "-yp" "-pn"; do
	rc=0
	"$BCACHEFS" fsck $o img < /dev/null > out 2> err || rc=$?
	[ $rc = 16 ] || { cat out err; fail "fsck $o: exit $rc, want 16"; }
	cmp -s img orig || fail "fsck $o changed the image"
	head -n 1 err | grep -q "exclude each other" || { cat err; fail "fsck $o: no clear message"; }
	echo "ok   fsck $o: $(head -n 1 err)"
done

# one mode, given twice or as -p -a: accepted
rc=0; "$BCACHEFS" fsck -f -n -n img > out 2>&1 || rc=$?
[ $rc = 4 ] || { cat out; fail "fsck -f -n -n: exit $rc, want 4"; }
cmp -s img orig || fail "fsck -f -n -n changed the image"
rc=0; "$BCACHEFS" fsck -f -p -a img > out 2>&1 || rc=$?
[ $rc = 1 ] || { cat out; fail "fsck -f -p -a: exit $rc, want 1 (fixed)"; }
echo "ok   -n -n and -p -a accepted"
