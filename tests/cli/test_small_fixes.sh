# Smaller polish:
#  a. extract names the destination it cannot write (not the path in the
#     filesystem);
#  b. fsck -y of a read-only device refuses before saying "fixing"
#     (exit 8, suggesting -n), as e2fsck does; -n still checks it;
#  c. fsck -f -n says what a repair would do with an invalid key ("key
#     skipped (a repair deletes it), not fixing", not "key dropped, not
#     fixing");
#  d. format prints the superblock as the initialisation left it (Clean: 1,
#     Has data: journal,btree), not as it was before.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1
truncate -s 64M a.img
"$BCACHEFS" format a.img > fmt.out 2>&1 || { cat fmt.out; fail "format"; }

# d
grep -q "^Clean:[[:space:]]*1$" fmt.out || { cat fmt.out; fail "format printed Clean: 0"; }
grep -q "Has data:[[:space:]]*journal,btree$" fmt.out || { cat fmt.out; fail "format printed Has data: (none)"; }
echo "ok   d: format prints the initialised superblock"

# a
rc=0; "$BCACHEFS" extract a.img / /proc/nonexistent > out 2> err || rc=$?
[ $rc = 1 ] || { cat err; fail "extract to /proc/nonexistent: exit $rc"; }
grep -q "^bcachefs extract: /proc/nonexistent: mkdir: " err || { cat err; fail "extract: destination not named"; }
rc=0; "$BCACHEFS" extract a.img / /proc/nonexistent/sub > out 2> err || rc=$?
[ $rc = 1 ] || { cat err; fail "extract to /proc/nonexistent/sub: exit $rc"; }
grep -q "^bcachefs extract: /proc/nonexistent/sub: " err || { cat err; fail "extract: destination not named"; }
echo "ok   a: extract names the destination: $(head -n 1 err)"

# c
zstd -qd --sparse "$TESTDIR/../fsck/111-inode-invalid/image.zst" -o inv.img
rc=0; "$BCACHEFS" fsck -f -n inv.img > out 2>&1 || rc=$?
[ $rc = 4 ] || { cat out; fail "fsck -f -n: exit $rc"; }
grep -q "key dropped" out && { cat out; fail "fsck -f -n says 'key dropped'"; }
grep -q "key skipped (a repair deletes it), not fixing" out || { cat out; fail "fsck -f -n: what a repair would do"; }
echo "ok   c: $(grep -o 'key skipped.*' out | head -n 1)"

# b
if [ "$(id -u)" = 0 ] && command -v losetup > /dev/null; then
	zstd -qd --sparse "$TESTDIR/../fsck/002-nlink-too-high/image.zst" -o ro.img
	cp ro.img ro.orig
	loop=$(losetup -r -f --show ro.img) || { echo "no loop device"; exit 77; }
	trap 'losetup -d "$loop"' EXIT
	rc=0; "$BCACHEFS" fsck -y "$loop" > out 2> err || rc=$?
	[ $rc = 8 ] || { cat out err; fail "fsck -y of a read-only device: exit $rc, want 8"; }
	grep -q "fixing" out err && { cat out err; fail "fsck -y of a read-only device said fixing"; }
	grep -q "read-only.*fsck -n" err || { cat err; fail "no hint to use -n"; }
	rc=0; "$BCACHEFS" fsck -f -n "$loop" > out 2>&1 || rc=$?
	[ $rc = 4 ] || { cat out; fail "fsck -f -n of a read-only device: exit $rc, want 4"; }
	cmp -s ro.img ro.orig || fail "the read-only device changed"
	echo "ok   b: $(cat err)"
else
	echo "skip b: needs root and losetup"
fi
