# fsck's quick check with read-ahead (libbcachefs/fsck/fsck_quick.c):
# btrees of many leaves (4 KiB nodes), whose leaves are read ahead on a
# second thread where there is one (BCH_FSCK_READ_AHEAD=wait: every leaf
# but the first of each parent comes from it). The clean image passes; a
# leaf in the middle of the dirents btree whose stored checksum is
# overwritten (its keys intact: nothing but the checksum says so) makes
# the quick check give up, and fsck says where. Also run under TSan
# (make check-tsan).
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1
quick_ok="quick check: nothing to report"
mkdir tree
for d in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	mkdir tree/d$d
	f=1
	while [ $f -le 150 ]; do
		echo "file $d $f" > tree/d$d/f$f
		f=$((f + 1))
	done
done
truncate -s 64M many.img
"$BCACHEFS" format -q --btree_node_size=4k --source tree many.img > out 2>&1 || { cat out; fail "format --source"; }
"$BCACHEFS" list -b dirents -m nodes many.img > nodes 2>&1 || { cat nodes; fail "list -m nodes"; }
[ "$(grep -c '^l 1' nodes)" -ge 1 ] && [ "$(grep -c '^l 0' nodes)" -ge 20 ] ||
	{ cat nodes | grep '^l'; fail "the dirents btree has no interior node and 20 leaves"; }
rc=0; BCH_FSCK_READ_AHEAD=wait "$BCACHEFS" fsck -n -f -v many.img > out 2>&1 || rc=$?
[ $rc = 0 ] && grep -q "$quick_ok" out || { cat out; fail "clean image of many leaves: exit $rc or the quick check gave up"; }
sector=$(grep -E '^    bsets .* dev 0 sector [0-9]+$' nodes | sed -n 12p | sed 's/.* sector //')
[ -n "$sector" ] || fail "no 12th leaf in the dirents btree"
printf XXXX | dd of=many.img bs=1 seek=$((sector * 512)) conv=notrunc 2> /dev/null
rc=0; BCH_FSCK_READ_AHEAD=wait "$BCACHEFS" fsck -n -f -v many.img > out 2>&1 || rc=$?
crashed $rc && { cat out; fail "damaged leaf: fsck -n -f crashed ($rc)"; }
grep -q "$quick_ok" out && { cat out; fail "the quick check passed a damaged leaf"; }
[ $rc = 4 ] && grep -q "sector $sector" out || { cat out; fail "damaged leaf at sector $sector: exit $rc, or not named"; }
echo "ok   many leaves: the clean image passes, a damaged leaf is found"
