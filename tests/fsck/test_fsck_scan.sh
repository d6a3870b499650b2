# The node scan: a lost root or interior node costs nothing
# when the leaves under it are intact.
#
# The image: tests/fsck/scan-orig.img.zst (make-damage-images.sh scan):
# 10k files in 100 directories, btree nodes of 2 KiB so that the inodes,
# dirents, extents and xattrs btrees are 4 levels deep and alloc 3, and a
# history of changes (three checkpoints: uids, xattrs, 100 files deleted)
# that left older copies of many leaves in free buckets.
#
# Each case tests/fsck/scan/NNN-name/ says in its file `damage` "BTREE
# root" or "BTREE LEVEL" (the middle node of that level): that node's
# magic is zeroed, so it cannot be read and the scan does not find it.
# Then:
#   - fsck -f -n reports it, exits 4 and changes nothing (first case only:
#     it is the same path for all);
#   - fsck -y prints expect.1 (exit 1), a second fsck -y prints expect.2
#     (clean, exit 0);
#   - every key of the inodes, dirents, xattrs and extents btrees is what
#     it was (`list`): every file under its own name and path, nothing in
#     lost+found, and nothing older back (a deleted file or an old uid
#     would be: the scan finds the older copies too);
#   - every byte of every file reads as before (`damage check`: nothing
#     was allocated over the data).
# Then an encrypted filesystem and one of two devices (below).
# TEST_QUICK=1 (the ASan run): the first case, and every 4th.
# SCAN_UPDATE=1 writes expect.1/expect.2 from the current binary instead
# of comparing (review the diff).
set -e
. "$(dirname "$0")/../lib.sh"
test_tool damage
DAMAGE=${DAMAGE:-$TOOL}

zstd -qd --sparse "$TESTDIR/scan-orig.img.zst" -o "$WORK/orig.img"
"$BCACHEFS" fsck -f -n "$WORK/orig.img" > "$WORK/orig.fsck" 2>&1 ||
	{ cat "$WORK/orig.fsck"; fail "the original image is not clean"; }
for b in inodes dirents xattrs extents; do
	"$BCACHEFS" list -b $b "$WORK/orig.img" > "$WORK/orig.$b"
done

# node BTREE root|LEVEL: byte offset of that node of the original image
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

n=0 nfail=0 i=0
for d in "$TESTDIR"/scan/[0-9]*/; do
	d=${d%/}
	c=$(basename "$d")
	i=$((i + 1))
	[ "${TEST_QUICK:-}" = 1 ] && [ $i != 1 ] && [ $((i % 4)) != 1 ] && continue
	read -r btree level < "$d/damage"
	off=$(node "$btree" "$level")
	[ -n "$off" ] && [ "$off" -gt 0 ] || fail "$c: no $btree node at $level"
	w=$WORK/$c
	mkdir -p "$w"
	img=$w/image
	cp --sparse=always "$WORK/orig.img" "$img"
	printf '\000\000\000\000\000\000\000\000' | dd of="$img" bs=1 seek=$((off + 16)) conv=notrunc status=none
	why=""
	if [ $i = 1 ]; then
		cp --sparse=always "$img" "$w/damaged"
		set +e
		"$BCACHEFS" fsck -f -n "$img" > "$w/n.out" 2>&1; rc=$?
		set -e
		[ $rc = 4 ] || why="$why fsck -f -n exit $rc, want 4;"
		cmp -s "$img" "$w/damaged" || why="$why fsck -f -n changed the image;"
	fi
	for r in 1 2; do
		set +e
		( cd "$w" && "$BCACHEFS" fsck -y image > out.$r 2>&1 ); rc=$?
		set -e
		crashed $rc && why="$why fsck -y run $r crashed ($rc);"
		echo "exit $rc" >> "$w/out.$r"
		if [ "${SCAN_UPDATE:-}" = 1 ]; then
			cp "$w/out.$r" "$d/expect.$r"
		elif ! cmp -s "$w/out.$r" "$d/expect.$r"; then
			why="$why run $r differs from expect.$r;"
			diff "$d/expect.$r" "$w/out.$r" | head -n 20 | sed "s/^/    $c: /"
		fi
	done
	[ "$(tail -n 1 "$w/out.1")" = "exit 1" ] || why="$why first fsck -y: $(tail -n 1 "$w/out.1"), want exit 1;"
	[ "$(tail -n 1 "$w/out.2")" = "exit 0" ] || why="$why second fsck -y: $(tail -n 1 "$w/out.2"), want exit 0;"
	for b in inodes dirents xattrs extents; do
		"$BCACHEFS" list -b $b "$img" > "$w/$b" 2>&1 || true
		cmp -s "$WORK/orig.$b" "$w/$b" || {
			why="$why the $b keys differ;"
			diff "$WORK/orig.$b" "$w/$b" | head -n 6 | sed "s/^/    $c: $b: /"
		}
	done
	# the data: every byte of every file (nothing was written over it)
	"$DAMAGE" check "$WORK/orig.img" "$img" inodes 0:0 0:0 > "$w/check.out" 2>&1 ||
		{ why="$why files lost or changed;"; grep -v '^checked' "$w/check.out" | head -n 6 | sed "s/^/    $c: /"; }
	n=$((n + 1))
	if [ -n "$why" ]; then
		nfail=$((nfail + 1))
		echo "FAIL $c ($btree $level at byte $off):$why"
	else
		echo "ok $c ($btree $level at byte $off)"
		rm -rf "$w"
	fi
done

# Two more on small filesystems made here: an encrypted one (the scan
# checks MACs and decrypts the headers) and one of two devices with every
# node on both (the copies of a node count once; the root's two copies
# are both damaged). A root whose children are leaves is made unreadable.
mkdir -p "$WORK/small"
for d in 0 1 2 3 4; do
	mkdir -p "$WORK/small/d$d"
	for f in $(seq 0 99); do echo "file $d/$f" > "$WORK/small/d$d/f$f"; done
done
for kind in encrypted two-devices; do
	w=$WORK/$kind
	mkdir -p "$w"
	devs="$w/a.img"
	opts="--encrypted --no_passphrase"
	[ $kind = two-devices ] && { devs="$w/a.img $w/b.img"; opts=--replicas=2; }
	for f in $devs; do truncate -s 16M "$f"; done
	# shellcheck disable=SC2086
	"$BCACHEFS" format -q -f $opts --block_size=512 --btree_node_size=2k --source="$WORK/small" $devs > "$w/format.out" 2>&1 ||
		{ cat "$w/format.out"; fail "$kind: format failed"; }
	b=dirents
	[ $kind = two-devices ] && b=inodes
	# shellcheck disable=SC2086
	"$BCACHEFS" list -b $b $devs > "$w/before"
	# every copy (DEV:SECTOR) of the first level-1 node
	# shellcheck disable=SC2086
	copies=$("$BCACHEFS" list -b $b -m nodes $devs 2>/dev/null |
		awk '/^l 1 / { l1 = 1; next } l1 && /^    ptrs:/ { for (i = 1; i <= NF; i++) if ($i == "ptr:") print $(i + 1); exit }')
	[ -n "$copies" ] || fail "$kind: no level-1 node"
	for p in $copies; do
		f=$w/a.img
		[ "${p%%:*}" = 1 ] && f=$w/b.img
		printf '\000\000\000\000\000\000\000\000' | dd of="$f" bs=1 seek=$((${p#*:} * 512 + 16)) conv=notrunc status=none
	done
	why=""
	set +e
	# shellcheck disable=SC2086
	"$BCACHEFS" fsck -y $devs > "$w/y1.out" 2>&1; rc=$?
	[ $rc = 1 ] || why="$why first fsck -y: exit $rc;"
	grep -q "recovered from the node scan" "$w/y1.out" || why="$why not recovered from the scan;"
	# shellcheck disable=SC2086
	"$BCACHEFS" fsck -y $devs > "$w/y2.out" 2>&1; rc=$?
	[ $rc = 0 ] || why="$why second fsck -y: exit $rc;"
	# shellcheck disable=SC2086
	"$BCACHEFS" list -b $b $devs > "$w/after" 2>&1
	set -e
	cmp -s "$w/before" "$w/after" || why="$why the $b keys differ;"
	n=$((n + 1))
	if [ -n "$why" ]; then
		nfail=$((nfail + 1))
		echo "FAIL $kind ($b level 1 at $copies):$why"
		head -n 12 "$w/y1.out" | sed "s/^/    $kind: /"
	else
		echo "ok $kind ($b level 1 at" $copies")"
	fi
done

echo "$n cases, $nfail failed"
[ $n -gt 0 ] || fail "no cases"
[ $nfail = 0 ] || fail "$nfail cases failed"
