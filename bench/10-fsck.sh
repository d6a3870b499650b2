#!/bin/sh
# fsck -n -f (the full check) and list of the d1 image (a migrated ext4
# filesystem, which is still a valid ext4 image) against e2fsck -fn on the
# same image, with peak RSS; fsck -n of the same image (marked clean: the
# fast path, target under 5 ms); and fsck -n -f of an empty filesystem on a
# 15 TiB sparse image (the cost must follow the metadata, not the device
# size). Best of N runs, wall clock (fork to wait, bench/spawn_time.c);
# peak RSS (GNU time's %M) of one run.
set -u
top=${BENCH_TOP:-$(pwd)}
bin=${BCACHEFS:-$top/bcachefs}
work=${BENCH_WORK:-$(mktemp -d)}
runs=${BENCH_RUNS:-5}

# bench/spawn_time.c: fork, exec and wait timed in C. Timing these few
# milliseconds from the shell with date(1) added about 0.8 ms to every run
# of both sides (the shell's fork, date's own start), pulling the ratios
# towards 1; the shell loop below stays as the fallback.
spawn=${BENCH_BUILD:-$top/build}/bench/spawn_time
${BENCH_RUN:-sh $top/bench/run.sh} --compile "$spawn" "$top/bench/spawn_time.c" > /dev/null 2>&1 ||
	spawn=""

ms_best() {	# ms_best CMD...: best wall time in ms over $runs runs
	if [ -n "$spawn" ] && r=$("$spawn" "$runs" "$@"); then
		b=${r%% *}
		printf '%d.%03d' $((b / 1000)) $((b % 1000))
		return
	fi
	best=""
	i=0
	while [ $i -lt "$runs" ]; do
		t0=$(date +%s%N)
		"$@" > /dev/null 2>&1
		t1=$(date +%s%N)
		t=$(( (t1 - t0) / 1000 ))
		[ -z "$best" ] || [ "$t" -lt "$best" ] && best=$t
		i=$((i + 1))
	done
	printf '%d.%03d' $((best / 1000)) $((best % 1000))
}

rss_kib() {	# rss_kib CMD...: peak resident set of one run in KiB ("n/a" without GNU time)
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%M' -o "$work/rss" "$@" > /dev/null 2>&1
		tail -n 1 "$work/rss"
	else
		echo n/a
	fi
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "n/a" || b == "n/a" || b <= 0) print "-"; else printf "%.2f", a / b }'; }

img=$work/d1.img
zstd -qd --sparse "$top/tests/golden/d1_migrate_ext4_1G/migrated-layout7.img.zst" -o "$img" || exit 1

e2=$(command -v e2fsck || echo /sbin/e2fsck)
printf '%-44s %12s %10s %12s %10s\n' "d1 (1 GiB, 232 inodes, 6734 extents)" "ms (best)" "vs e2fsck" "peak RSS KiB" "vs e2fsck"
base=$(ms_best "$e2" -fn "$img")
base_rss=$(rss_kib "$e2" -fn "$img")
printf '%-44s %12s %10s %12s %10s\n' "e2fsck -fn (baseline)" "$base" "1.00" "$base_rss" "1.00"
t=$(ms_best "$bin" fsck -n -f "$img")
r=$(rss_kib "$bin" fsck -n -f "$img")
printf '%-44s %12s %10s %12s %10s\n' "bcachefs fsck -n -f (full check)" "$t" "$(ratio "$t" "$base")" "$r" "$(ratio "$r" "$base_rss")"
t=$(ms_best "$bin" fsck -n "$img")
r=$(rss_kib "$bin" fsck -n "$img")
printf '%-44s %12s %10s %12s %10s\n' "bcachefs fsck -n (clean: not checked)" "$t" "(< 5 ms)" "$r" "$(ratio "$r" "$base_rss")"
for b in extents inodes dirents; do
	t=$(ms_best "$bin" list -b $b "$img")
	printf '%-44s %12s %10s\n' "bcachefs list -b $b" "$t" "$(ratio "$t" "$base")"
done

big=$work/big.img
rm -f "$big"
truncate -s 15T "$big"
if "$bin" format -q -f "$big" > "$work/format.log" 2>&1; then
	# initialise it if this format left it uninitialised
	"$bin" show-super "$big" 2>/dev/null | grep -q 'Clean:.*1' || "$bin" fsck -y "$big" > /dev/null 2>&1
	t=$(ms_best "$bin" fsck -n -f "$big")
	printf '%-44s %12s %10s\n' "bcachefs fsck -n -f, empty fs on 15 TiB sparse" "$t" "(target < 50)"
else
	echo "15 TiB: format failed: $(head -n 1 "$work/format.log")"
fi
rm -f "$big" "$img"
