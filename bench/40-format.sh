#!/bin/sh
# format (with the first-mount initialisation) of fresh sparse images of
# 1 GiB, 1 TiB and 15 TiB against mkfs.xfs -q, mkfs.btrfs -q and
# mkfs.ext4 -q on the same sizes; then format --source of a 50k-file tree
# (200 MiB) against mkfs.ext4 -d of the same tree. Best of BENCH_RUNS
# (default 3) runs, wall clock, a fresh image each run (its creation not
# timed). Targets: format flat in the device size and <=
# mkfs.btrfs at every size; --source throughput >= mkfs.ext4 -d.
# mkfs.xfs/mkfs.btrfs come from `sh tests/deps.sh --bench` (skipped if absent).
set -u
top=${BENCH_TOP:-$(pwd)}
bin=${BCACHEFS:-$top/bcachefs}
work=${BENCH_WORK:-$(mktemp -d)}
runs=${BENCH_RUNS:-3}
nfiles=${BENCH_SOURCE_FILES:-50000}
PATH=$PATH:/usr/sbin:/sbin

sh "$top/tests/deps.sh" --bench > /dev/null 2>&1 || true
img=$work/fmt.img

# ms_best SIZE CMD...: best wall time in ms of CMD... IMG over $runs runs
# on a fresh sparse image of SIZE ("-" when CMD fails)
ms_best() {
	size=$1; shift
	best=""
	i=0
	while [ $i -lt "$runs" ]; do
		rm -f "$img"; truncate -s "$size" "$img"
		t0=$(date +%s%N)
		"$@" "$img" > /dev/null 2>&1 || { echo "-"; rm -f "$img"; return; }
		t1=$(date +%s%N)
		t=$(( (t1 - t0) / 1000 ))
		[ -z "$best" ] || [ "$t" -lt "$best" ] && best=$t
		i=$((i + 1))
	done
	rm -f "$img"
	printf '%d.%03d' $((best / 1000)) $((best % 1000))
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b <= 0) print "-"; else printf "%.2f", a / b }'; }

have() { command -v "$1" > /dev/null 2>&1; }

printf '%-8s %12s %12s %12s %12s %10s %10s\n' "size" "bcachefs" "mkfs.xfs" "mkfs.btrfs" "mkfs.ext4" "/btrfs" "/xfs"
printf '%-8s %12s %12s %12s %12s %10s %10s\n' "" "ms (best)" "ms" "ms" "ms" "ratio" "ratio"
for size in 1G 1T 15T; do
	b=$(ms_best $size "$bin" format -q --force)
	x=-; have mkfs.xfs && x=$(ms_best $size mkfs.xfs -q -f)
	r=-; have mkfs.btrfs && r=$(ms_best $size mkfs.btrfs -q -f)
	e=$(ms_best $size mkfs.ext4 -q -F)
	printf '%-8s %12s %12s %12s %12s %10s %10s\n' $size "$b" "$x" "$r" "$e" "$(ratio "$b" "$r")" "$(ratio "$b" "$x")"
done

# --source: $nfiles files of 1..4000 bytes in directories of 500
src=$work/src
python3 - "$src" "$nfiles" <<'PY' || { echo "python3 needed for the --source part"; exit 0; }
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = "%s/d%03d" % (root, i // 500)
    if i % 500 == 0:
        os.makedirs(d)
    with open("%s/f%05d" % (d, i), "wb") as f:
        f.write(bytes([65 + i % 26]) * (i % 4000 + 1))
PY
mb=$(du -sm --apparent-size "$src" | cut -f1)
echo
printf '%-40s %12s %10s %12s\n' "--source: $nfiles files, $mb MiB, 2 GiB image" "ms (best)" "files/s" "vs ext4 -d"
e=$(ms_best 2G mkfs.ext4 -q -F -d "$src")
b=$(ms_best 2G "$bin" format -q --force --source="$src")
fps() { awk -v t="$1" -v n="$nfiles" 'BEGIN { if (t == "-" || t <= 0) print "-"; else printf "%.0f", n * 1000 / t }'; }
printf '%-40s %12s %10s %12s\n' "mkfs.ext4 -d (baseline)" "$e" "$(fps "$e")" "1.00"
printf '%-40s %12s %10s %12s\n' "bcachefs format --source" "$b" "$(fps "$b")" "$(ratio "$b" "$e")"
echo "(ratios: time / baseline time; below 1 = faster)"
