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
# An image is `bcachefs format --source` of the profile's tree; fsck -n
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
UUID=3f0c2a5e-8d1b-4c7a-9e6f-5b2d4a1c7e90
PROFILES="converge interrupt"

# image PROFILE OUT [FORMAT-OPTIONS...]
image() {
	_p=$1 _out=$2
	shift 2
	case $_p in
	converge)	_opts=--btree_node_size=8k;;
	interrupt)	_opts=--btree_node_size=4k;;
	*)		echo "unknown profile $_p (one of: $PROFILES)" >&2; exit 2;;
	esac
	_t=$(mktemp -d "${TMPDIR:-/tmp}/bcachefs-damage-image.XXXXXX")
	python3 "$top/tests/fsck/damage_tree.py" "$_p" "$_t/src"
	rm -f "$_out"
	truncate -s 16M "$_out"
	if ! "$BCACHEFS" format -q -f $_opts "$@" --source="$_t/src" "$_out" > "$_t/format.out" 2>&1; then
		cat "$_t/format.out" >&2; rm -rf "$_t"
		echo "$_p: format --source failed" >&2; exit 1
	fi
	if ! "$BCACHEFS" fsck -n "$_out" > "$_t/fsck.out" 2>&1; then
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
