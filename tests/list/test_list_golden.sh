#!/bin/sh
# `list -b B` on every golden case: the key lines (lines starting "u64s ")
# for inodes, dirents, xattrs, extents and quotas must equal what the 2018
# tools printed (sorted compare, as tools/golden-compare does). c1 needs the
# passphrase; g4 has two images whose outputs are prefixed lz4-/zstd-.
set -e
. "$TESTDIR/../lib.sh"
: "${BCACHEFS:?}" "${GOLDEN:?}" "${WORK:?}"
[ -d "$GOLDEN" ] || { echo "no golden images"; exit 77; }
command -v zstd >/dev/null || { echo "zstd not installed"; exit 77; }

printf 'golden-pass\n' > "$WORK/pass"
fail=0 checked=0

# compare CASE PREFIX IMAGE...
compare() {
	name=$1 dir=$GOLDEN/$1 pre=$2
	shift 2
	devs=""
	for i in "$@"; do
		o=$WORK/$(basename "$dir")-$(basename "${i%.zst}")
		[ -f "$o" ] || unzst "$i" "$o"
		devs="$devs $o"
	done
	extra=""
	case "$dir" in *c1_encrypted*) extra="--passphrase-file $WORK/pass";; esac
	for b in inodes dirents xattrs extents quotas; do
		ref=$dir/out/${pre}list-$b.txt
		if [ -f "$ref" ]; then cat "$ref"
		elif [ -f "$ref.zst" ]; then zstd -dc "$ref.zst"
		else continue
		fi | grep -a '^u64s ' | LC_ALL=C sort > "$WORK/want" || true
		rc=0
		# shellcheck disable=SC2086
		"$BCACHEFS" list -b "$b" $extra $devs > "$WORK/out" 2> "$WORK/err" || rc=$?
		grep -a '^u64s ' "$WORK/out" | LC_ALL=C sort > "$WORK/got" || true
		checked=$((checked + 1))
		if [ $rc != 0 ] || ! cmp -s "$WORK/want" "$WORK/got"; then
			fail=$((fail + 1))
			echo "FAIL $name ${pre}list -b $b (exit $rc): $(LC_ALL=C comm -23 "$WORK/want" "$WORK/got" | wc -l) missing, $(LC_ALL=C comm -13 "$WORK/want" "$WORK/got" | wc -l) extra"
			LC_ALL=C comm -3 "$WORK/want" "$WORK/got" | head -n 4 | cut -c1-200
			head -n 5 "$WORK/err"
		else
			echo "ok   $name ${pre}list -b $b ($(wc -l < "$WORK/want") keys)"
		fi
	done
	# alloc: the 2018 tool listed its in-memory allocator state (spec 30),
	# which includes every bucket on disk: ours (what is on disk) must be a
	# subset of it, and not empty.
	ref=$dir/out/${pre}list-alloc.txt
	if [ -f "$ref" ]; then
		grep -a '^u64s ' "$ref" | LC_ALL=C sort -u > "$WORK/want" || true
		rc=0
		# shellcheck disable=SC2086
		"$BCACHEFS" list -b alloc $extra $devs > "$WORK/out" 2> "$WORK/err" || rc=$?
		grep -a '^u64s ' "$WORK/out" | LC_ALL=C sort -u > "$WORK/got" || true
		checked=$((checked + 1))
		n_extra=$(LC_ALL=C comm -13 "$WORK/want" "$WORK/got" | wc -l)
		if [ $rc != 0 ] || [ "$n_extra" != 0 ] || [ ! -s "$WORK/got" ]; then
			fail=$((fail + 1))
			echo "FAIL $name ${pre}list -b alloc (exit $rc): $n_extra keys not in the 2018 list, $(wc -l < "$WORK/got") listed"
			LC_ALL=C comm -13 "$WORK/want" "$WORK/got" | head -n 4 | cut -c1-200
		else
			echo "ok   $name ${pre}list -b alloc ($(wc -l < "$WORK/got") of $(wc -l < "$WORK/want") keys)"
		fi
	fi
	for o in $devs; do rm -f "$o"; done
}

for dir in "$GOLDEN"/a_* "$GOLDEN"/b* "$GOLDEN"/c1_* "$GOLDEN"/c2_* "$GOLDEN"/e1_* \
	   "$GOLDEN"/g1_* "$GOLDEN"/g2_* "$GOLDEN"/g3_*; do
	[ -d "$dir" ] || continue
	imgs=$(ls "$dir"/dev[0-9].img.zst 2>/dev/null | sort)
	[ -n "$imgs" ] || continue
	# shellcheck disable=SC2086
	compare "$(basename "$dir")" "" $imgs
done
compare d1_migrate_ext4_1G "" "$GOLDEN/d1_migrate_ext4_1G/migrated-layout7.img.zst"
compare g4_compressed_encrypted_data lz4- "$GOLDEN/g4_compressed_encrypted_data/lz4.img.zst"
compare g4_compressed_encrypted_data zstd- "$GOLDEN/g4_compressed_encrypted_data/zstd.img.zst"

echo "$checked listings compared, $fail failed"
[ $checked -gt 100 ] || { echo "too few listings compared"; exit 1; }
[ $fail = 0 ]
