#!/bin/sh
# show-super against what the 2018 tools printed for every golden image.
# The first line ("$ cmd"), the last ("[rc=N]") and the 2018 library's
# stderr lines ("bcachefs: ...") are dropped; "Last mount" is compared
# loosely (ctime in the local time zone of whoever made the image).
set -e
. "$TESTDIR/../lib.sh"
: "${BCACHEFS:?}" "${GOLDEN:?}" "${WORK:?}"

fail=0 n=0

# normalise: drop noise, Last mount value -> <time>, drop the empty line ctime adds
norm() {
	sed -e '1{/^\$ /d}' -e '${/^\[rc=/d}' -e '/^bcachefs: /d' "$1" |
	awk '/^    Last mount:\t/ { if ($0 !~ /\(never\)/) { print "    Last mount:\t\t\t<time>"; skip=1; next } }
	     skip && $0 == "" { skip=0; next } { skip=0; print }'
}

check() {	# check <image.zst> <golden output>
	img=$1 ref=$2
	[ -f "$img" ] || { echo "missing image $img"; fail=1; return; }
	args=$(sed -n '1s/^\$ bcachefs-2018 show-super //p' "$ref" | sed 's/ [^ ]*$//')
	unzst "$img" "$WORK/ss.img"
	rc=0
	"$BCACHEFS" show-super $args "$WORK/ss.img" > "$WORK/ss.got" 2> "$WORK/ss.err" || rc=$?
	norm "$ref" > "$WORK/ss.want"
	norm "$WORK/ss.got" > "$WORK/ss.got2"
	n=$((n + 1))
	if [ $rc -ne 0 ] || ! cmp -s "$WORK/ss.want" "$WORK/ss.got2"; then
		echo "FAIL: show-super $args $(basename "$img") vs $ref (rc $rc)"
		diff "$WORK/ss.want" "$WORK/ss.got2" | head -20
		cat "$WORK/ss.err"
		fail=1
	fi
}

for ref in "$GOLDEN"/*/out/show-super.final.dev*.txt "$GOLDEN"/*/out/show-super.fmt.dev*.txt; do
	[ -f "$ref" ] || continue
	case=$(dirname "$(dirname "$ref")")
	case $case in *a_default_256G) continue;; esac
	b=$(basename "$ref" .txt)
	case $b in
	show-super.final.dev*) img=$case/${b#show-super.final.}.img.zst ;;
	show-super.fmt.dev*) img=$case/${b#show-super.fmt.}.fmt.img.zst ;;
	esac
	check "$img" "$ref"
done
for c in g1_overwrites g2_dirty_journal g3_merges_and_stale; do
	check "$GOLDEN/$c/dev0.img.zst" "$GOLDEN/$c/out/show-super.txt"
done
for p in lz4 zstd; do
	check "$GOLDEN/g4_compressed_encrypted_data/$p.img.zst" \
	      "$GOLDEN/g4_compressed_encrypted_data/out/$p-show-super.txt"
done
# d1: the migrated filesystem, found through the layout at sector 7
check "$GOLDEN/d1_migrate_ext4_1G/migrated-layout7.img.zst" \
      "$GOLDEN/d1_migrate_ext4_1G/out/show-super.layout7.txt"

echo "show-super golden: $n images compared"
[ $n -ge 70 ] || { echo "FAIL: only $n images compared"; fail=1; }
rm -f "$WORK/ss.img"
exit $fail
