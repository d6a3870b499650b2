# The clean fast path (e2fsck's "clean" check): fsck -n and
# fsck -p of a filesystem that was unmounted cleanly (superblock marked
# clean, one journal entry with nothing to replay, every member present)
# stop there, exit 0, say so, and read no btree node; -f, -y and
# --scan-nodes always check. A filesystem that is marked clean but
# damaged in its nodes (corpus case 002, made by a clean close) is what
# the fast path trusts, as e2fsck does: -f finds the damage. A journal
# with keys to replay (case 031: damage left only in the journal) or a
# missing member is always checked.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1

skipped() { grep -q "^$1: clean (unmounted cleanly: not checked, -f forces a check)\$" out; }

truncate -s 64M fresh.img
"$BCACHEFS" format -q fresh.img > /dev/null || fail "format"
for o in -n -p -a; do
	rc=0; "$BCACHEFS" fsck $o fresh.img > out 2>&1 || rc=$?
	[ $rc = 0 ] || { cat out; fail "fsck $o of a fresh filesystem: exit $rc"; }
	skipped fresh.img || { cat out; fail "fsck $o: the fast path did not say so"; }
done
echo "ok   -n, -p, -a: clean filesystem not walked"

# the fast path reads no node: a node whose checksum fails is not seen
zstd -qd --sparse "$TESTDIR/100-node-bad-csum/image.zst" -o csum.img
"$BCACHEFS" show-super csum.img | grep -q "Clean:[[:space:]]*1" || fail "case 100 is not marked clean"
rc=0; "$BCACHEFS" fsck -n csum.img > out 2>&1 || rc=$?
[ $rc = 0 ] && skipped csum.img || { cat out; fail "fsck -n of case 100: exit $rc, want the fast path"; }
rc=0; "$BCACHEFS" fsck -n -f csum.img > out 2>&1 || rc=$?
[ $rc = 4 ] || { cat out; fail "fsck -n -f of case 100: exit $rc, want 4"; }
grep -q "checksum" out || { cat out; fail "fsck -n -f of case 100: the bad checksum not reported"; }
echo "ok   -f forces the full check (bad node checksum found)"

zstd -qd --sparse "$TESTDIR/002-nlink-too-high/image.zst" -o img
cp img orig
for o in "-n -f" "-fn" "-f -p" "-n --scan-nodes"; do
	cp orig img
	rc=0; "$BCACHEFS" fsck $o img > out 2>&1 || rc=$?
	skipped img && { cat out; fail "fsck $o took the fast path"; }
	case $o in *p*) want=1;; *) want=4;; esac
	[ $rc = $want ] || { cat out; fail "fsck $o: exit $rc, want $want"; }
done
cp orig img
rc=0; "$BCACHEFS" fsck -y img > out 2>&1 || rc=$?
[ $rc = 1 ] && ! skipped img || { cat out; fail "fsck -y: exit $rc, want 1 (always checks)"; }
echo "ok   -f, -y and --scan-nodes check"

cp orig img
rc=0; "$BCACHEFS" fsck -n --json img > out 2>&1 || rc=$?
[ $rc = 0 ] || { cat out; fail "fsck -n --json: exit $rc"; }
grep -q '"checked": false' out && grep -q '"found": 0' out || { cat out; fail "fsck -n --json: no \"checked\": false"; }
echo "ok   --json says the check was skipped"

# keys to replay in the journal: checked without -f
zstd -qd --sparse "$TESTDIR/031-journal-nlink/image.zst" -o j.img
rc=0; "$BCACHEFS" fsck -n j.img > out 2>&1 || rc=$?
[ $rc = 4 ] && ! skipped j.img || { cat out; fail "fsck -n with a journal to replay: exit $rc, want 4"; }
grep -q "wrong i_nlink" out || { cat out; fail "fsck -n with a journal to replay: problem not found"; }
echo "ok   a journal with keys to replay is checked"

# a member missing: checked (degraded), never skipped
truncate -s 64M a.img b.img
"$BCACHEFS" format -q --replicas=2 a.img b.img > out 2>&1 || { cat out; fail "format of 2 devices"; }
rc=0; "$BCACHEFS" fsck -n --degraded a.img > out 2>&1 || rc=$?
[ $rc = 0 ] || { cat out; fail "fsck -n --degraded: exit $rc"; }
skipped a.img && { cat out; fail "fsck -n --degraded with a member missing took the fast path"; }
grep -q "clean (degraded: 1 member missing" out || { cat out; fail "fsck -n --degraded: not checked degraded"; }
rc=0; "$BCACHEFS" fsck -n a.img b.img > out 2>&1 || rc=$?
[ $rc = 0 ] && skipped a.img || { cat out; fail "fsck -n of both members: exit $rc, want the fast path"; }
echo "ok   a missing member is checked"
