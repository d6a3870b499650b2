#!/bin/sh
# fsck of a 100k-file tree: the same tree (small files in nested folders)
# made into a bcachefs image with `format --source` and into an ext4 image
# with `mkfs.ext4 -d`; times bcachefs fsck -n -f (the full check), fsck -y
# (clean filesystem: checks too), fsck -n (marked clean: the fast path) and
# e2fsck -fn, one run each after a warm-up run (page cache warm), with the
# peak RSS of each (GNU time's %M).
#
# Environment: BENCH_FILES (default 100000; bench/35-fsck-1m.sh runs this
# with 1000000), BENCH_WORK (scratch folder, ideally on tmpfs), BCACHEFS.
set -u
top=${BENCH_TOP:-$(pwd)}
bin=${BCACHEFS:-$top/bcachefs}
work=${BENCH_WORK:-$(mktemp -d)}
files=${BENCH_FILES:-100000}

e2=$(command -v e2fsck || echo /sbin/e2fsck)
mke2=$(command -v mkfs.ext4 || echo /sbin/mkfs.ext4)
if [ ! -x "$e2" ] || [ ! -x "$mke2" ]; then
	echo "skipped: e2fsck or mkfs.ext4 not found"
	exit 77
fi

now_us() { echo $(( $(date +%s%N) / 1000 )); }
ms() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# time_once CMD...: wall time of one run in us (in $t), exit code in $rc
time_once() {
	t0=$(now_us)
	"$@" > "$work/last.log" 2>&1
	rc=$?
	t=$(( $(now_us) - t0 ))
}

# rss_kib CMD...: peak resident set of one run in KiB ("n/a" without GNU time)
rss_kib() {
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%M' -o "$work/rss" "$@" > /dev/null 2>&1
		tail -n 1 "$work/rss"
	else
		echo n/a
	fi
}
rratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "n/a" || b == "n/a" || b <= 0) print "-"; else printf "%.2f", a / b }'; }

# The tree: 100 top folders x 10 sub-folders x N files of 0-4 KiB (eight
# sizes; shell builtins only, a process per file would take minutes).
tree=$work/tree
per=$(( (files + 999) / 1000 ))
t0=$(now_us)
s=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef	# 64 bytes
s=$s$s$s$s$s$s$s$s	# 512
c0="" c1=hello c2=$s c3=$s$s c4=$s$s$s c5=$s$s$s$s c6=$s$s$s$s$s$s c7=$c5$c5
i=0
while [ $i -lt 100 ]; do
	j=0
	while [ $j -lt 10 ]; do
		d=$tree/d$i/s$j
		mkdir -p "$d"
		k=0
		while [ $k -lt $per ]; do
			case $(( (i * 7 + j * 3 + k) % 8 )) in
			0) printf '%s' "$c0" ;; 1) printf '%s' "$c1" ;;
			2) printf '%s' "$c2" ;; 3) printf '%s' "$c3" ;;
			4) printf '%s' "$c4" ;; 5) printf '%s' "$c5" ;;
			6) printf '%s' "$c6" ;; *) printf '%s' "$c7" ;;
			esac > "$d/f$k"
			k=$((k + 1))
		done
		j=$((j + 1))
	done
	i=$((i + 1))
done
nfiles=$(find "$tree" -type f | wc -l)
t_tree=$(( $(now_us) - t0 ))

img=$work/bch.img
ext=$work/ext4.img
rm -f "$img" "$ext"
gib=$(( files > 200000 ? 16 : 4 ))
truncate -s ${gib}G "$img"
truncate -s ${gib}G "$ext"

time_once "$bin" format -q --source "$tree" "$img"
t_format=$t
if [ $rc != 0 ]; then
	echo "format --source failed (exit $rc): $(head -n 3 "$work/last.log")"
	exit 1
fi
time_once "$mke2" -q -F -N $((nfiles * 2)) -d "$tree" "$ext"
t_mke2=$t
if [ $rc != 0 ]; then
	echo "mkfs.ext4 -d failed (exit $rc): $(head -n 3 "$work/last.log")"
	exit 1
fi
rm -rf "$tree"

printf '%-44s %12s\n' "tree: $nfiles files, $per per folder" "$(ms $t_tree) ms"
printf '%-44s %12s\n' "bcachefs format --source ($gib GiB sparse)" "$(ms $t_format) ms"
printf '%-44s %12s\n' "mkfs.ext4 -d ($gib GiB sparse)" "$(ms $t_mke2) ms"
echo

row() {	# row LABEL US RSS
	printf '%-44s %12s %10s %12s %10s\n' "$1" "$(ms $2)" "$(ratio $2 $base)" "$3" "$(rratio "$3" "$base_rss")"
}
printf '%-44s %12s %10s %12s %10s\n' "fsck, $nfiles files" "ms (1 run)" "vs e2fsck" "peak RSS KiB" "vs e2fsck"
"$e2" -fn "$ext" > /dev/null 2>&1		# warm-up
time_once "$e2" -fn "$ext"
base=$t
base_rss=$(rss_kib "$e2" -fn "$ext")
row "e2fsck -fn (baseline, exit $rc)" $base "$base_rss"

"$bin" fsck -n -f "$img" > /dev/null 2>&1		# warm-up
time_once "$bin" fsck -n -f "$img"
row "bcachefs fsck -n -f (exit $rc)" $t "$(rss_kib "$bin" fsck -n -f "$img")"
[ $rc = 0 ] || sed -n '1,5p' "$work/last.log"

time_once "$bin" fsck -y "$img"
row "bcachefs fsck -y, clean fs (exit $rc)" $t "$(rss_kib "$bin" fsck -y "$img")"
[ $rc = 0 ] || sed -n '1,5p' "$work/last.log"

time_once "$bin" fsck -n "$img"
row "bcachefs fsck -n, marked clean (exit $rc)" $t "$(rss_kib "$bin" fsck -n "$img")"
[ $rc = 0 ] || sed -n '1,5p' "$work/last.log"

rm -f "$img" "$ext" "$work/last.log" "$work/rss"
