# A repair loses no more than it must.
#  - Keys out of order inside a bset (corpus case 109: two dirents of /d5
#    swapped, checksum fixed) are still readable: fsck -f -n reports one
#    problem, fsck -y sorts them and keeps every name: the tree extracted
#    afterwards has all its paths, lost+found stays empty, nothing is
#    unreachable.
#  - fsck -f -p on damaged btree nodes it may not repair (109, 103, 114, 117,
#    504) stops repairing at that problem: exit 4 (an fsck(8) code, no
#    operational error), the image byte for byte as it was; fsck -y then
#    repairs it (exit 1, second run clean).
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1

zstd -qd --sparse "$TESTDIR/109-keys-out-of-order/image.zst" -o img
rc=0; "$BCACHEFS" fsck -f -n img > n.out 2>&1 || rc=$?
[ $rc = 4 ] || { cat n.out; fail "109 fsck -f -n: exit $rc, want 4"; }
grep -q "keys out of order.*keys sorted, none dropped" n.out || { cat n.out; fail "109: no clear report"; }
[ "$(grep -c . n.out)" = 2 ] || { cat n.out; fail "109 fsck -f -n: one problem and the summary expected"; }
rc=0; "$BCACHEFS" fsck -y img > y.out 2>&1 || rc=$?
[ $rc = 1 ] || { cat y.out; fail "109 fsck -y: exit $rc, want 1"; }
grep -q "unreachable\|orphaned\|lost+found" y.out && { cat y.out; fail "109: names lost"; }
"$BCACHEFS" fsck -f -n img > out 2>&1 || { cat out; fail "109: not clean after fsck -y"; }
"$BCACHEFS" extract img / x > out 2>&1 || { cat out; fail "109: extract after the repair"; }
(cd x && find . -mindepth 1 | sort) > paths
cat > want <<'LIST'
./d1
./d1/d2
./d1/d2/d3
./d1/d2/small
./d1/data
./d4
./d4/hardlink
./d4/sym
./d5
./d5/big
./d5/dangling
./d5/file0
./d5/file1
./d5/file2
./d5/file3
./d5/file4
./d5/file5
./d5/sub
./d5/sub/file1link
./d5/sub/leaf
./empty
./f1
./lost+found
LIST
diff want paths || fail "109: the repaired tree lacks paths"
[ -z "$(ls -A x/lost+found)" ] || fail "109: something went to lost+found"
echo "ok   109: fsck -y kept all $(grep -vc lost+found want) names"

for c in 109-keys-out-of-order 103-node-header-max-key 114-root-unreadable \
	 117-node-header-max-key-4097 504-interior-bad-magic; do
	zstd -qd --sparse -f "$TESTDIR/$c/image.zst" -o img 2> /dev/null
	cp img orig
	rc=0; "$BCACHEFS" fsck -f -p img > p.out 2>&1 || rc=$?
	crashed $rc && fail "$c fsck -f -p crashed"
	[ $rc = 4 ] || { cat p.out; fail "$c fsck -f -p: exit $rc, want 4 (left for fsck -y)"; }
	cmp -s img orig || { cat p.out; fail "$c fsck -f -p changed the image"; }
	grep -q "writing the repairs failed" p.out && fail "$c: a repair failed"
	rc=0; "$BCACHEFS" fsck -y img > y.out 2>&1 || rc=$?
	[ $rc = 1 ] || { cat y.out; fail "$c fsck -y: exit $rc, want 1"; }
	"$BCACHEFS" fsck -f -n img > n.out 2>&1 || { cat n.out; fail "$c: not clean after fsck -y"; }
	echo "ok   $c: fsck -f -p left it as it was (exit 4), fsck -y repaired it"
done
