#!/bin/sh
# The node scan (fsck --scan-nodes, libbcachefs/fsck/node_scan.c) of a 1 TiB
# sparse image holding BENCH_FILES (100000) small files, against reading
# the image's allocated bytes once (bench/read_data.c: SEEK_DATA/SEEK_HOLE,
# 8 MiB reads), both from the page cache after a warm-up, best of
# BENCH_RUNS (5). The scan's time is what fsck -v reports for it ("node
# scan: read N MiB ... in T s"): every bucket that holds data is read and
# every node slot checked (magic, checksum of every bset, header). Target:
# within 2x of the read.
#
# Environment: BENCH_FILES, BENCH_RUNS, BENCH_SCAN_SIZE (default 1T),
# BENCH_WORK (scratch, ideally not on tmpfs: the image is sparse), BCACHEFS.
set -u
top=${BENCH_TOP:-$(pwd)}
bin=${BCACHEFS:-$top/bcachefs}
work=${BENCH_WORK:-$(mktemp -d)}
files=${BENCH_FILES:-100000}
runs=${BENCH_RUNS:-5}
size=${BENCH_SCAN_SIZE:-1T}
run=${BENCH_RUN:-sh $top/bench/run.sh}

reader=$work/read_data
$run --compile "$reader" "$top/bench/read_data.c" || { echo "cannot build read_data"; exit 1; }

# The tree: 100 folders x 10 sub-folders x N files of 0-4 KiB (as 30-fsck-100k).
tree=$work/tree
per=$(( (files + 999) / 1000 ))
s=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
s=$s$s$s$s$s$s$s$s
i=0
while [ $i -lt 100 ]; do
	j=0
	while [ $j -lt 10 ]; do
		d=$tree/d$i/s$j
		mkdir -p "$d"
		k=0
		while [ $k -lt $per ]; do
			case $(( (i * 7 + j * 3 + k) % 4 )) in
			0) : ;; 1) printf '%s' "$i $j $k" ;; 2) printf '%s' "$s" ;; *) printf '%s' "$s$s$s$s$s$s" ;;
			esac > "$d/f$k"
			k=$((k + 1))
		done
		j=$((j + 1))
	done
	i=$((i + 1))
done
nfiles=$(find "$tree" -type f | wc -l)

img=$work/scan.img
rm -f "$img"
truncate -s "$size" "$img" || { echo "skipped: cannot make a $size sparse file in $work"; exit 77; }
if ! "$bin" format -q --source "$tree" "$img" > "$work/format.log" 2>&1; then
	echo "format --source failed: $(head -n 3 "$work/format.log")"
	exit 1
fi
rm -rf "$tree"
alloc=$(du -k "$img" | cut -f1)

# best of $runs: the read (ns), the scan (ns, from fsck -v)
best_read="" best_scan="" best_fsck=""
i=0
"$reader" "$img" > /dev/null		# warm-up
"$bin" fsck -n -v --scan-nodes "$img" > /dev/null 2>&1
while [ $i -lt "$runs" ]; do
	set -- $("$reader" "$img")
	bytes=$1 t=$2
	[ -z "$best_read" ] || [ "$t" -lt "$best_read" ] && best_read=$t
	t0=$(date +%s%N)
	"$bin" fsck -n -v --scan-nodes "$img" > "$work/fsck.out" 2>&1
	t1=$(date +%s%N)
	line=$(grep '^node scan: read ' "$work/fsck.out")
	[ -n "$line" ] || { cat "$work/fsck.out"; echo "fsck -v printed no scan line"; exit 1; }
	t=$(echo "$line" | sed 's/.* in \([0-9]*\)\.\([0-9]*\) s:.*/\1\2/' | sed 's/^0*//')
	t=$(( ${t:-0} * 1000000 ))
	[ -z "$best_scan" ] || [ "$t" -lt "$best_scan" ] && best_scan=$t
	t=$(( t1 - t0 ))
	[ -z "$best_fsck" ] || [ "$t" -lt "$best_fsck" ] && best_fsck=$t
	i=$((i + 1))
done
ms() { awk -v n="$1" 'BEGIN { printf "%.1f", n / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

echo "$size sparse image, $nfiles files: $((alloc / 1024)) MiB allocated; $(echo "$line" | sed 's/^node scan: //; s/ in [0-9.]* s//')"
printf '%-48s %10s %8s\n' "best of $runs, page cache warm" "ms" "vs read"
printf '%-48s %10s %8s\n' "read the allocated bytes once ($((bytes >> 20)) MiB)" "$(ms "$best_read")" "1.00"
printf '%-48s %10s %8s\n' "node scan (fsck --scan-nodes, its part)" "$(ms "$best_scan")" "$(ratio "$best_scan" "$best_read")"
printf '%-48s %10s %8s\n' "fsck -n --scan-nodes (the whole run)" "$(ms "$best_fsck")" "$(ratio "$best_fsck" "$best_read")"
rm -f "$img"
