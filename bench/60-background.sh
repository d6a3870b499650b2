#!/bin/sh
# The mount's background jobs (doc/engine.md §8.10, §17), through FUSE:
#
# copygc: a filesystem of 4*BENCH_MB MiB filled with 16 KiB files, a random
#   half deleted with copygc off (BCH_COPYGC=0: its buckets stay half full);
#   then a mount with copygc on, and a file written until ENOSPC (copygc
#   empties the fragmented buckets as the write takes the free ones): MB of
#   live data copygc moved (bytes_moved of `fs usage --json`) per second of
#   its passes (the --verbose log), against `cp` of BENCH_MB/2 MiB of those
#   files to a new directory in the same mount (MB/s, after the fill file is
#   deleted).
# rebalance: --foreground_target=ssd on two image files (ssd, hdd): BENCH_MB
#   MiB written in 4 files with fsync, seconds, without a background target
#   and with --background_target=hdd (rebalance moving the earlier files
#   while the later ones are written): the cost of rebalance on foreground
#   writes, as a ratio. Best of BENCH_RUNS (3).
# Needs root and FUSE.
set -u
top=${BENCH_TOP:-$(pwd)}
bin=${BCACHEFS:-$top/bcachefs}
work=${BENCH_WORK:-$(mktemp -d)}
mb=${BENCH_MB:-64}
runs=${BENCH_RUNS:-3}

[ -e /dev/fuse ] && command -v fusermount3 > /dev/null || { echo "no FUSE here"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "needs root (FUSE mount)"; exit 77; }

mnt=$work/mnt
mkdir -p "$mnt"
mpid=""
cleanup() {
	grep -q " $mnt " /proc/mounts && { fusermount3 -u -z "$mnt" 2>/dev/null || umount -l "$mnt"; }
	[ -n "$mpid" ] && wait "$mpid" 2>/dev/null
	rm -f "$work"/*.img
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM

now() { date +%s%N; }

# mount IMAGES [ENV=VALUE...]: a foreground mount on $mnt (--verbose: the
# copygc passes are logged), waited for
mount_it() {
	_d=$1
	shift
	env "$@" "$bin" mount -f -v "$_d" "$mnt" > "$work/mount.log" 2>&1 < /dev/null &
	mpid=$!
	_i=0
	until grep -q " $mnt " /proc/mounts; do
		kill -0 "$mpid" 2>/dev/null || { cat "$work/mount.log"; return 1; }
		_i=$((_i + 1)); [ $_i -lt 400 ] || return 1
		sleep 0.05
	done
}

unmount_it() {
	fusermount3 -u "$mnt"
	wait "$mpid"
	mpid=""
}

# mbps BYTES NS
mbps() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.1f", (ns > 0 ? b / 1e6 / (ns / 1e9) : 0) }'; }

# copy_mbps: MB/s of cp of files holding about $mb/2 MiB, to a new directory
copy_mbps() {
	rm -rf "$mnt/copy"
	mkdir "$mnt/copy"
	_want=$((mb * 1048576 / 2)) _sum=0
	ls "$mnt" | grep -v -e '^copy$' -e '^lost+found$' > "$work/names"
	: > "$work/pick"
	while read -r _f; do
		[ $_sum -lt $_want ] || break
		echo "$mnt/$_f" >> "$work/pick"
		_sum=$((_sum + 16384))
	done < "$work/names"
	_t0=$(now)
	xargs cp -t "$mnt/copy" < "$work/pick" || return 1
	sync -f "$mnt/copy"
	_t1=$(now)
	mbps $_sum $((_t1 - _t0))
	rm -rf "$mnt/copy"
}

# gc_bytes: bytes_moved of copygc in fs usage
gc_bytes() {
	"$bin" fs usage --json "$mnt" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["copygc"]["bytes_moved"])'
}

copygc_run() {
	rm -f "$work/gc.img"
	truncate -s $((mb * 4))M "$work/gc.img"
	"$bin" format -q -f "$work/gc.img" > /dev/null 2>&1 || return 1
	mount_it "$work/gc.img" BCH_COPYGC=0 || return 1
	python3 "$top/tests/mount/refill.py" "$mnt" --cycles 0 --delete-half --size 16384 \
		--seed 7 > "$work/refill.out" 2>&1 || { cat "$work/refill.out"; return 1; }
	unmount_it
	mount_it "$work/gc.img" || return 1
	# space wanted: copygc empties the fragmented buckets as the fill takes them
	dd if=/dev/zero of="$mnt/fill" bs=1M status=none 2> /dev/null
	_last=0 _still=0
	while [ $_still -lt 20 ]; do
		sleep 0.1
		_b=$(gc_bytes) || return 1
		if [ "$_b" != "$_last" ]; then
			_last=$_b _still=0
		else
			_still=$((_still + 1))
		fi
	done
	rm "$mnt/fill"
	cp_after=$(copy_mbps) || return 1
	unmount_it
	# the time copygc worked: its passes, from the --verbose log
	_ms=$(sed -n 's/^.*copygc: .* \([0-9][0-9]*\) ms (engine lock.*/\1/p' "$work/mount.log" |
		awk '{ s += $1 } END { print s + 0 }')
	gc=$(mbps "$_last" $((_ms * 1000000)))
	gcmb=$(awk -v b="$_last" 'BEGIN { printf "%.1f", b / 1e6 }')
	echo "$gcmb $gc $cp_after $_ms"
}

# seq_write BACKGROUND: seconds to write $mb MiB in 4 files with fsync
seq_write() {
	rm -f "$work/s.img" "$work/h.img"
	truncate -s $((mb * 2))M "$work/s.img"
	truncate -s $((mb * 4))M "$work/h.img"
	"$bin" format -q -f --group=ssd "$work/s.img" --group=hdd "$work/h.img" \
		--foreground_target=ssd $1 > /dev/null 2>&1 || return 1
	mount_it "$work/s.img:$work/h.img" || return 1
	_t0=$(now)
	for _i in 1 2 3 4; do
		dd if=/dev/zero of="$mnt/f$_i" bs=1M count=$((mb / 4)) conv=fsync status=none || return 1
	done
	_t1=$(now)
	unmount_it
	awk -v ns=$((_t1 - _t0)) 'BEGIN { printf "%.2f", ns / 1e9 }'
}

# best_of CMD...: the lowest number of $runs runs (for times)
best_low() {
	_best=""
	_r=0
	while [ $_r -lt "$runs" ]; do
		_v=$("$@") || _v=""
		[ -n "$_v" ] && { [ -z "$_best" ] || awk -v a="$_v" -v b="$_best" 'BEGIN { exit !(a < b) }'; } && _best=$_v
		_r=$((_r + 1))
	done
	echo "${_best:-n/a}"
}

best_gc="0 0 0" best=-1
r=0
while [ $r -lt "$runs" ]; do
	out=$(copygc_run) || { echo "copygc run failed"; cleanup; exit 1; }
	set -- $out
	awk -v a="$2" -v b="$best" 'BEGIN { exit !(a > b) }' && { best=$2; best_gc=$out; }
	r=$((r + 1))
done
set -- $best_gc
printf '%-44s %12s\n' "copygc, 16 KiB files, $((mb * 4)) MiB image" "MB/s"
printf '  %-42s %12s\n' "copygc: $1 MB of live data moved" "$2"
printf '  %-42s %12s\n' "cp of $((mb / 2)) MiB within the mount" "$3"
printf '  %-42s %12s\n' "ratio copygc / cp" "$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"

plain=$(best_low seq_write "")
bg=$(best_low seq_write --background_target=hdd)
printf '%-44s %12s\n' "seq write, $mb MiB in 4 files + fsync" "s"
printf '  %-42s %12s\n' "foreground_target=ssd" "$plain"
printf '  %-42s %12s\n' "+ background_target=hdd (rebalance)" "$bg"
printf '  %-42s %12s\n' "ratio" "$(awk -v a="$bg" -v b="$plain" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
