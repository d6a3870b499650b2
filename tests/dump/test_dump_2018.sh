#!/bin/sh
# dump against the 2018 tool (golden f_dump): for the three filesystems it
# dumped (a_default_1G, the two devices of e1_2dev, the migrated d1), every
# cluster the 2018 image holds (same guest offset) is in ours, with the same
# cluster size and virtual size. Ours may hold more: the journal buckets
# with entries older than the replay range, which the 2018 tool left out.
. "$TESTDIR/../lib.sh"
command -v python3 > /dev/null || { echo "python3 needed"; exit 77; }
map=$TESTDIR/qcow2_map.py
F=$GOLDEN/f_dump

# same NAME OURS THEIRS.zst
same() {
	zstd -qd "$3" -o "$WORK/$1.2018"
	python3 "$map" --header "$WORK/$1.2018" | grep -E '^(cluster_bits|size) ' > "$WORK/$1.h2018"
	python3 "$map" --header "$2" | grep -E '^(cluster_bits|size) ' > "$WORK/$1.hours"
	diff "$WORK/$1.h2018" "$WORK/$1.hours" || fail "$1: cluster size or size differ"
	cs=$((1 << $(sed -n 's/^cluster_bits //p' "$WORK/$1.hours")))
	python3 "$map" "$WORK/$1.2018" | awk -v cs=$cs '{ for (c = $1; c < $1 + $2; c += cs) print c / cs }' | sort > "$WORK/$1.c2018"
	python3 "$map" "$2" | awk -v cs=$cs '{ for (c = $1; c < $1 + $2; c += cs) print c / cs }' | sort > "$WORK/$1.cours"
	[ -s "$WORK/$1.c2018" ] || fail "$1: no cluster read from the 2018 image"
	missing=$(comm -23 "$WORK/$1.c2018" "$WORK/$1.cours" | tr '\n' ' ')
	[ -z "$missing" ] || fail "$1: clusters of the 2018 dump missing from ours: $missing"
	echo "$1: the $(wc -l < "$WORK/$1.c2018") clusters of the 2018 dump are in ours" \
	     "($(comm -13 "$WORK/$1.c2018" "$WORK/$1.cours" | wc -l) more)"
}

"$BCACHEFS" dump -o "$WORK/a.qcow2" $(golden_images a_default_1G) || fail "dump a"
same a "$WORK/a.qcow2" "$F/a.qcow2.zst"
"$BCACHEFS" dump -o "$WORK/e.qcow2" $(golden_images e1_2dev) || fail "dump e"
same e0 "$WORK/e.qcow2.0" "$F/e.qcow2.0.zst"
same e1 "$WORK/e.qcow2.1" "$F/e.qcow2.1.zst"
"$BCACHEFS" dump -o "$WORK/m.qcow2" $(golden_images d1_migrate_ext4_1G) || fail "dump m"
same m "$WORK/m.qcow2" "$F/m.qcow2.zst"
exit 0
