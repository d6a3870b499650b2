# fsck --no-scan-nodes: the node scan runs by default when a
# root or interior node is lost; --no-scan-nodes skips it, and then fsck
# must not delete what the scan would have found. On the image of
# test_fsck_scan.sh (scan-orig.img.zst), with one node's magic zeroed
# (an inodes interior node, the dirents root, an inodes leaf):
#   - fsck -y --no-scan-nodes and fsck -f -n --no-scan-nodes: exit 4,
#     the node reported as left, "run fsck without --no-scan-nodes",
#     the later passes not run, the image byte-identical;
#   - then fsck -y (the default: the scan runs): exit 1, and every key of
#     the inodes, dirents, xattrs and extents btrees is what it was.
# A journal with no usable entry (no btree has a root): the same, exit 4
# and nothing written. Also: --no-scan-nodes changes nothing on a clean
# filesystem, and --scan-nodes with --no-scan-nodes is a usage error.
set -e
. "$(dirname "$0")/../lib.sh"

zstd -qd --sparse "$TESTDIR/scan-orig.img.zst" -o "$WORK/orig.img"
for b in inodes dirents xattrs extents; do
	"$BCACHEFS" list -b $b "$WORK/orig.img" > "$WORK/orig.$b"
done

set +e
"$BCACHEFS" fsck -f -n --no-scan-nodes "$WORK/orig.img" > "$WORK/clean.out" 2>&1; rc=$?
set -e
[ $rc = 0 ] || { cat "$WORK/clean.out"; fail "clean image with --no-scan-nodes: exit $rc, want 0"; }
set +e
"$BCACHEFS" fsck -n --scan-nodes --no-scan-nodes "$WORK/orig.img" > "$WORK/both.out" 2>&1; rc=$?
set -e
[ $rc = 16 ] || { cat "$WORK/both.out"; fail "--scan-nodes --no-scan-nodes: exit $rc, want 16"; }
grep -q "exclude each other" "$WORK/both.out" || { cat "$WORK/both.out"; fail "--scan-nodes --no-scan-nodes: no reason given"; }

# node BTREE root|LEVEL: byte offset of that node (as test_fsck_scan.sh)
node() {
	"$BCACHEFS" list -b "$1" -m nodes "$WORK/orig.img" 2>/dev/null | awk -v want="$2" '
		/^l [0-9]+ / { lv = $2 }
		/^    bsets .*dev 0 sector/ { n[lv] = n[lv] " " $NF * 512; if (lv > top) top = lv }
		END {
			l = want == "root" ? top : want
			k = split(n[l], v, " ")
			print want == "root" ? v[1] : v[int((k + 1) / 2)]
		}'
}

for c in "inodes 1" "dirents root" "inodes 0"; do
	set -- $c
	name=$1-$2
	off=$(node "$1" "$2")
	[ -n "$off" ] && [ "$off" -gt 0 ] || fail "$name: no $1 node at $2"
	img=$WORK/$name.img
	cp --sparse=always "$WORK/orig.img" "$img"
	printf '\000\000\000\000\000\000\000\000' | dd of="$img" bs=1 seek=$((off + 16)) conv=notrunc status=none
	cp --sparse=always "$img" "$WORK/$name.damaged"
	for m in "-y" "-f -n"; do
		set +e
		# shellcheck disable=SC2086
		"$BCACHEFS" fsck $m --no-scan-nodes "$img" > "$WORK/$name.out" 2>&1; rc=$?
		set -e
		crashed $rc && fail "$name: fsck $m --no-scan-nodes crashed ($rc)"
		[ $rc = 4 ] || { cat "$WORK/$name.out"; fail "$name: fsck $m --no-scan-nodes: exit $rc, want 4"; }
		grep -q "bad magic.*not fixing" "$WORK/$name.out" ||
			{ cat "$WORK/$name.out"; fail "$name: fsck $m --no-scan-nodes does not report the node as left"; }
		grep -q "run fsck without --no-scan-nodes" "$WORK/$name.out" ||
			{ cat "$WORK/$name.out"; fail "$name: fsck $m --no-scan-nodes does not say how to recover"; }
		# the later passes would report (or delete) the keys of the lost node's range
		grep -q "inode_lost\|missing inode\|unreachable\|lost+found" "$WORK/$name.out" &&
			{ cat "$WORK/$name.out"; fail "$name: fsck $m --no-scan-nodes ran the later passes"; }
		cmp -s "$img" "$WORK/$name.damaged" || fail "$name: fsck $m --no-scan-nodes changed the image"
	done
	set +e
	"$BCACHEFS" fsck -y "$img" > "$WORK/$name.y" 2>&1; rc=$?
	set -e
	[ $rc = 1 ] || { cat "$WORK/$name.y"; fail "$name: fsck -y after: exit $rc, want 1"; }
	# a root or interior node: by the scan, which ran without being asked for
	if [ "$2" != 0 ]; then
		grep -q "recovered from the node scan" "$WORK/$name.y" ||
			{ cat "$WORK/$name.y"; fail "$name: fsck -y did not use the node scan"; }
	fi
	for b in inodes dirents xattrs extents; do
		"$BCACHEFS" list -b $b "$img" > "$WORK/$name.$b" 2>&1 || true
		cmp -s "$WORK/orig.$b" "$WORK/$name.$b" || {
			diff "$WORK/orig.$b" "$WORK/$name.$b" | head -n 6
			fail "$name: the $b keys differ after fsck -y"
		}
	done
	rm -f "$img" "$WORK/$name.damaged"
done

# no usable journal entry: every journal bucket zeroed
j=$WORK/journal.img
truncate -s 32M "$j"
"$BCACHEFS" format -q --bucket=32k "$j" > /dev/null || fail "format journal.img"
buckets=$("$BCACHEFS" show-super -f journal "$j" | sed -n 's/^  Buckets:[[:space:]]*//p')
[ -n "$buckets" ] || fail "no journal buckets in show-super"
for b in $buckets; do
	dd if=/dev/zero of="$j" bs=32k seek="$b" count=1 conv=notrunc status=none
done
cp "$j" "$WORK/journal.damaged"
set +e
"$BCACHEFS" fsck -y --no-scan-nodes "$j" > "$WORK/journal.out" 2>&1; rc=$?
set -e
[ $rc = 4 ] || { cat "$WORK/journal.out"; fail "no journal: fsck -y --no-scan-nodes: exit $rc, want 4"; }
grep -q "run fsck without --no-scan-nodes" "$WORK/journal.out" ||
	{ cat "$WORK/journal.out"; fail "no journal: fsck -y --no-scan-nodes does not say how to recover"; }
cmp -s "$j" "$WORK/journal.damaged" || fail "no journal: fsck -y --no-scan-nodes changed the image"
set +e
"$BCACHEFS" fsck -y "$j" > "$WORK/journal.y" 2>&1; rc=$?
set -e
[ $rc = 1 ] || { cat "$WORK/journal.y"; fail "no journal: fsck -y: exit $rc, want 1"; }
grep -q "rebuilt from the node scan" "$WORK/journal.y" || { cat "$WORK/journal.y"; fail "no journal: fsck -y did not scan"; }
exit 0
