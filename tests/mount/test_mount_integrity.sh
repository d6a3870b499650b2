#!/bin/sh
# A damaged node is an error, never silent wrong data. For each
# btree (extents, inodes, dirents, xattrs, alloc), a leaf, an interior node
# and the root of a filesystem of 400 files (2 KiB nodes: three levels) are
# damaged three ways: 8 bytes flipped in the keys (the checksum no longer
# matches), the node zeroed, a valid node of another btree copied over it.
# Then, with the superblock's error action continue:
#   - a damaged leaf: the read-write mount starts (read-only for the alloc
#     btree: nothing can be written past unknown bucket state); a damaged
#     root or interior node: the read-write mount refuses ("run bcachefs
#     fsck", nothing mounted) and -o ro mounts, serving what verifies;
#   - every name, stat, file and xattr read through the mount is right or
#     fails with EIO (integrity.py check), and some do fail;
#   - the log has one line for the node (btree, level, range, device);
#   - after a write and the unmount, fsck -n still reports the damage (it
#     was not laundered into a valid node; a read-write mount left the
#     filesystem marked not clean, so no -f is needed), fsck -y repairs it
#     (fsck -n -f clean after), and no file whose keys lie outside the
#     damaged node's range is lost or changed (build/tests/damage check).
# INTEGRITY_BTREES / INTEGRITY_KINDS / INTEGRITY_HOWS narrow the matrix.
. "$TESTDIR/../lib.sh"
fuse_mount_setup
test_tool damage
py="python3 $TESTDIR/integrity.py"

python3 "$TESTDIR/integrity.py" tree "$WORK/src" 2>/dev/null || { echo "no user xattrs on $WORK"; exit 77; }
$py manifest "$WORK/src" "$WORK/manifest.json"
base=$WORK/base.img
truncate -s 64M "$base"
"$BCACHEFS" format -q --btree_node_size=2k --block_size=512 --error_action=continue \
	--source="$WORK/src" "$base" > /dev/null 2>&1 || fail "format --source"
"$BCACHEFS" fsck -n -f "$base" > /dev/null || fail "the new image is not clean"
for b in extents inodes dirents xattrs alloc; do
	"$BCACHEFS" list -b $b -m nodes --json "$base" > "$WORK/nodes-$b.json" || fail "list $b"
done
# a valid node of another btree to copy over
dsrc=$($py pick "$WORK/nodes-dirents.json" leaf | cut -d' ' -f2)
isrc=$($py pick "$WORK/nodes-inodes.json" leaf | cut -d' ' -f2)

pos() {
	[ "$1" = POS_MAX ] && echo 18446744073709551615:18446744073709551615 || echo "$1"
}

cases=0
for b in ${INTEGRITY_BTREES:-extents inodes dirents xattrs alloc}; do
for kind in ${INTEGRITY_KINDS:-leaf interior root}; do
	node=$($py pick "$WORK/nodes-$b.json" $kind)
	[ -n "$node" ] || { echo "$b: no $kind node (the btree is not that deep)"; continue; }
	set -- $node
	dev=$1 sector=$2 level=$3 min=$4 max=$5 u64s=$6
	src=$dsrc
	[ $b = dirents ] && src=$isrc
for how in ${INTEGRITY_HOWS:-flip zero copy}; do
	c="$b $kind (level $level, $min - $max) $how"
	echo "== $c"
	img=$WORK/case.img
	cp --sparse=always "$base" "$img"
	$py damage "$img" $sector $how 2048 $u64s $src

	if [ $kind = leaf ]; then
		mount_fg case "$img"
	else
		mkdir -p "$WORK/mnt-case"
		"$BCACHEFS" mount -f "$img" "$WORK/mnt-case" > "$WORK/refused.log" 2>&1 &&
			{ fusermount3 -u "$WORK/mnt-case"; fail "$c: a damaged $kind node was mounted read-write"; }
		cat "$WORK/refused.log"
		grep -q "run bcachefs fsck.*nothing mounted" "$WORK/refused.log" || fail "$c: the refusal does not say to run fsck"
		grep -q "btree $b level $level range .*no copy verifies" "$WORK/refused.log" ||
			fail "$c: the refusal does not name the node"
		mount_fg case "$img" -o ro
	fi
	$py check "$mnt" "$WORK/manifest.json" > "$WORK/check.out" 2>&1
	rc=$?
	cat "$WORK/check.out"
	[ $rc = 0 ] || fail "$c: a read through the mount was wrong"
	if [ $b != alloc ]; then
		grep -q "eio 0$" "$WORK/check.out" && fail "$c: no read failed"
	fi
	# a write where the mount is writable; the damage must survive it
	echo new > "$mnt/new-after-damage" 2>/dev/null || true
	unmount_fg case
	grep -q "btree $b level $level range .*no copy verifies (dev $dev sector $sector" "$WORK/case.log" ||
		fail "$c: the log has no line for the node"
	if [ $kind = leaf ] && [ $b = alloc ]; then
		grep -q "mounted read-only" "$WORK/case.log" || fail "$c: the mount did not go read-only"
	fi

	# a read-write mount marked it not clean; a read-only one writes nothing
	force=
	[ $kind = leaf ] || force=-f
	"$BCACHEFS" fsck -n $force "$img" > "$WORK/n.out" 2>&1
	rc=$?
	[ $rc = 4 ] || { cat "$WORK/n.out"; fail "$c: fsck -n after the mount exits $rc, not 4: the damage is gone"; }
	grep -q "sector $sector" "$WORK/n.out" || { cat "$WORK/n.out"; fail "$c: fsck -n does not report the node"; }
	"$BCACHEFS" fsck -y "$img" > "$WORK/y.out" 2>&1
	rc=$?
	crashed $rc && { cat "$WORK/y.out"; fail "$c: fsck -y crashed"; }
	"$BCACHEFS" fsck -n -f "$img" > "$WORK/n2.out" 2>&1 ||
		{ cat "$WORK/y.out" "$WORK/n2.out"; fail "$c: fsck -n not clean after fsck -y"; }
	"$TOOL" check "$base" "$img" $b "$(pos $min)" "$(pos $max)" > "$WORK/lost.out" 2>&1 ||
		{ cat "$WORK/y.out" "$WORK/lost.out"; fail "$c: fsck -y lost files outside the damaged range"; }
	tail -n 1 "$WORK/lost.out"
	cases=$((cases + 1))
done
done
done
echo "$cases cases"
[ $cases -gt 0 ] || fail "no case ran"
exit 0
