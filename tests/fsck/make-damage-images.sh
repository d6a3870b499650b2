#!/bin/sh
# The undamaged images that build/tests/damage (tests/fsck/damage.c)
# damages in test_fsck_converge.sh and test_fsck_interrupt.sh.
#
#   tests/fsck/make-damage-images.sh [PROFILE...]
#	regenerate the committed fixtures tests/fsck/PROFILE-orig.img.zst
#	(default: every profile); needs ./bcachefs (make -j2 bcachefs)
#   tests/fsck/make-damage-images.sh --image PROFILE OUT.img
#	only make a fresh image OUT.img, not compressed, with a random UUID
#	(what CONVERGE_NEW_IMAGE=1 / INTERRUPT_NEW_IMAGE=1 use)
#
# Profiles (the trees: tests/fsck/damage_tree.py, a fixed-seed generator):
#   converge   16 MiB, --btree_node_size=8k (each btree has several nodes)
#   interrupt  16 MiB, --btree_node_size=4k
#   scan       64 MiB, --block_size=512 --btree_node_size=2k --bucket_size=4k:
#              10k files, every btree but alloc 4 levels deep (alloc 3);
#              then three rounds of changes through the update engine
#              (build/tests/plant, each round one checkpoint: uids, xattrs,
#              100 files deleted), so that older copies of many leaves stay
#              in free buckets, as on a filesystem in use
# An image is `bcachefs format --source` of the profile's tree; fsck -f -n
# must find it clean. The tree is always the same, but format picks hash
# seeds, times and node sequence numbers at random, so a regenerated image
# differs from the committed one in its bytes: every damage seed then hits
# other bytes, and the tests' expected outcomes per seed (their XFAIL lists,
# the damage seeds the interrupt test picks) can change. Regenerate only
# when the image must change (a format change), in one commit with what
# the tests expect of it. The fixtures: zstd -19, UUID $UUID below.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
BCACHEFS=${BCACHEFS:-$top/bcachefs}
PLANT=${PLANT:-$top/build/tests/plant}
UUID=3f0c2a5e-8d1b-4c7a-9e6f-5b2d4a1c7e90
PROFILES="converge interrupt scan"

# history IMAGE: the scan profile's three rounds of changes
history() {
	for round in 1 2 3; do
		_ops=""
		for d in $(seq 0 99); do
			_d=$(printf 'dir%03d' $d)
			case $round in
			1) _ops="$_ops + inode /$_d/f001-x uid=1000";;
			2) _ops="$_ops + xattr /$_d/f002-xx user.r2 round2";;
			3) _ops="$_ops + inode /$_d/f003-xxx uid=2000 gid=2000";;
			esac
			# delete one file without xattrs of 30 directories a round
			if [ $((d / 30)) = $((round - 1)) ] || { [ $round = 3 ] && [ $d -ge 90 ]; }; then
				case $round in 1) _f=f000-;; 2) _f=f010-xxx;; 3) _f=f020-xxxxxx;; esac
				_ops="$_ops + rm-extents /$_d/$_f + rm-inode /$_d/$_f + rm-dirent /$_d $_f"
			fi
		done
		"$PLANT" "$1" ${_ops# + } > /dev/null || return 1
	done
}

# image PROFILE OUT [FORMAT-OPTIONS...]
image() {
	_p=$1 _out=$2
	shift 2
	_size=16M
	case $_p in
	converge)	_opts=--btree_node_size=8k;;
	interrupt)	_opts=--btree_node_size=4k;;
	scan)		_opts="--block_size=512 --btree_node_size=2k --bucket_size=4k"; _size=64M;;
	*)		echo "unknown profile $_p (one of: $PROFILES)" >&2; exit 2;;
	esac
	_t=$(mktemp -d "${TMPDIR:-/tmp}/bcachefs-damage-image.XXXXXX")
	python3 "$top/tests/fsck/damage_tree.py" "$_p" "$_t/src"
	rm -f "$_out"
	truncate -s $_size "$_out"
	if ! "$BCACHEFS" format -q -f $_opts "$@" --source="$_t/src" "$_out" > "$_t/format.out" 2>&1; then
		cat "$_t/format.out" >&2; rm -rf "$_t"
		echo "$_p: format --source failed" >&2; exit 1
	fi
	if [ $_p = scan ] && ! history "$_out"; then
		rm -rf "$_t"
		echo "$_p: the changes through build/tests/plant failed" >&2; exit 1
	fi
	if ! "$BCACHEFS" fsck -f -n "$_out" > "$_t/fsck.out" 2>&1; then
		cat "$_t/fsck.out" >&2; rm -rf "$_t"
		echo "$_p: the fresh image is not clean" >&2; exit 1
	fi
	rm -rf "$_t"
}

if [ "${1:-}" = --image ]; then
	[ $# = 3 ] || { echo "usage: $0 --image PROFILE OUT.img" >&2; exit 2; }
	image "$2" "$3"
	exit 0
fi

for p in ${*:-$PROFILES}; do
	img=$(mktemp "${TMPDIR:-/tmp}/bcachefs-damage-image.XXXXXX")
	image "$p" "$img" -U $UUID
	zstd -q -19 -f "$img" -o "$top/tests/fsck/$p-orig.img.zst"
	rm -f "$img"
	echo "tests/fsck/$p-orig.img.zst: $(wc -c < "$top/tests/fsck/$p-orig.img.zst") bytes"
done
