#!/bin/sh
# Read-write workloads through a FUSE mount: ours (`bcachefs mount`) against
# fuse2fs on an ext4 image of the same size, in the same run, both images
# on a tmpfs (in the page cache: the comparison measures the filesystems,
# not the disk):
#
#   sequential write of BENCH_RW_MB (1024) MiB with a final fsync (MB/s;
#     also dd of the same data to the raw image file: the ceiling)
#   sequential read of it after a fresh mount (MB/s)
#   random 4 KiB writes with an fsync every 32 (fio, IOPS)
#   BENCH_RW_FILES (100000) small files in 1000 folders (files/s), then
#     rm -rf of them (files/s)
#   untar of a tar of /usr/include (MB/s of the tar)
#   peak RSS of the mount process while writing BENCH_RW_RSS_GB (10) GiB
#     (VmHWM; that image on disk, sparse)
#
# Best of BENCH_RUNS (3) runs, alternating, each on a freshly formatted
# image; the small files and the RSS line: one run. BENCH_RW_QUICK=1: small
# sizes (64 MiB, 5000 files, 1 GiB for the RSS) and one run, a quick check.
# The mount command for ours: BENCH_RW_MOUNT (default "$BCACHEFS mount"),
# run as `$BENCH_RW_MOUNT -f [-o rw,$BENCH_RW_OPTS] IMAGE DIR` in the
# background; the format: BENCH_RW_FORMAT (default "$BCACHEFS format -q -f").
# While our mount refuses read-write, ours prints "n/a (mount is
# read-only)" and the fuse2fs column still runs. Needs root, FUSE, fuse2fs.
set -u
top=${BENCH_TOP:-$(pwd)}
bin=${BCACHEFS:-$top/bcachefs}
work=${BENCH_WORK:-$(mktemp -d)}
ours_mount=${BENCH_RW_MOUNT:-$bin mount}
ours_format=${BENCH_RW_FORMAT:-$bin format -q -f}
runs=${BENCH_RUNS:-3}
mb=${BENCH_RW_MB:-1024} files=${BENCH_RW_FILES:-100000} rss_gb=${BENCH_RW_RSS_GB:-10}
randmb=64
if [ -n "${BENCH_RW_QUICK:-}" ]; then
	mb=${BENCH_RW_MB:-64} files=${BENCH_RW_FILES:-5000} rss_gb=${BENCH_RW_RSS_GB:-1} runs=1 randmb=8
fi

[ -e /dev/fuse ] && command -v fusermount3 > /dev/null || { echo "no FUSE here"; exit 77; }
command -v fuse2fs > /dev/null && command -v mkfs.ext4 > /dev/null ||
	{ echo "fuse2fs or mkfs.ext4 not installed (sh tests/deps.sh)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "needs root (a tmpfs for the images)"; exit 77; }

mkdir -p "$work/t" "$work/mnt"
img_mb=$((mb * 2 + 1024))
[ $img_mb -lt 2048 ] && img_mb=2048
mount -t tmpfs -o size=$((img_mb + mb + 512))m tmpfs "$work/t" || { echo "cannot mount a tmpfs"; exit 77; }
mpid=""
cleanup() {
	grep -q " $work/mnt fuse" /proc/mounts && fusermount3 -u -z "$work/mnt" 2>/dev/null
	[ -n "$mpid" ] && wait "$mpid" 2>/dev/null
	umount -l "$work/t" 2>/dev/null
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM

small_bin=${BENCH_BUILD:-$top/build}/bench/smallfiles
# the floor of a FUSE write path: bench/fuse_floor.c in its rw mode (each
# 1 MiB request one pwrite into the image, fsync one fdatasync)
floor_bin=${BENCH_BUILD:-$top/build}/bench/fuse_floor
${BENCH_RUN:-sh $top/bench/run.sh} --compile "$floor_bin" "$top/bench/fuse_floor.c" 2>/dev/null ||
	floor_bin=""
${BENCH_RUN:-sh $top/bench/run.sh} --compile "$small_bin" "$top/bench/smallfiles.c" || exit 1
head -c $((mb * 1048576)) /dev/urandom > "$work/t/src" || exit 1
tar cf "$work/include.tar" -C /usr include 2> /dev/null
tar_mb=$(( $(stat -c %s "$work/include.tar") / 1048576 ))

now() { date +%s%N; }
mbps() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.0f", b / (ns / 1e9) / 1e6 }'; }
per_s() { awk -v n="$1" -v ns="$2" 'BEGIN { printf "%.0f", n / (ns / 1e9) }'; }
best() { if [ "$1" = 0 ] || [ "$2" -lt "$1" ]; then echo "$2"; else echo "$1"; fi; }
bestmax() { awk -v a="$1" -v b="$2" 'BEGIN { print (b > a ? b : a) }'; }
# keep VAR NS: VAR = the smaller time of VAR and NS (0 = none yet)
keep() { eval "_old=\$$1"; eval "$1=$(best "$_old" "$2")"; }

# mount_fs ours|fuse2fs IMAGE: mounted on $work/mnt, the server's pid in $mpid
mount_fs() {
	if [ "$1" = ours ]; then
		$ours_mount -f -o "rw${BENCH_RW_OPTS:+,$BENCH_RW_OPTS}" "$2" "$work/mnt" > "$work/mount.log" 2>&1 < /dev/null &
	else
		fuse2fs -f "$2" "$work/mnt" > "$work/mount.log" 2>&1 < /dev/null &
	fi
	mpid=$!
	_i=0
	until grep -q " $work/mnt fuse" /proc/mounts; do
		kill -0 $mpid 2>/dev/null || { wait $mpid; mpid=""; return 1; }
		_i=$((_i + 1))
		[ $_i -lt 400 ] || { echo "$1: not mounted after 20 s"; exit 1; }
		sleep 0.05
	done
}

umount_fs() {
	fusermount3 -u "$work/mnt" || { echo "cannot unmount"; exit 1; }
	wait $mpid
	mpid=""
}

format_fs() {	# ours|fuse2fs IMAGE SIZE-MB
	rm -f "$2"
	truncate -s "$3"M "$2"
	if [ "$1" = ours ]; then
		$ours_format "$2" > "$work/format.log" 2>&1
	else
		mkfs.ext4 -q -F "$2" > "$work/format.log" 2>&1
	fi || { cat "$work/format.log"; echo "format ($1) failed"; exit 1; }
}

# Does our mount write? (It refuses -o rw before the read-write engine.)
ours_rw=yes
format_fs ours "$work/t/probe.img" 256
if mount_fs ours "$work/t/probe.img"; then
	: > "$work/mnt/probe" 2>/dev/null || ours_rw=no
	umount_fs
else
	ours_rw=no
fi
rm -f "$work/t/probe.img"
[ $ours_rw = yes ] || echo "ours: n/a (mount is read-only): $(head -n 1 "$work/mount.log")"

fses="fuse2fs"
[ $ours_rw = yes ] && fses="fuse2fs ours"
raw=0 floor=0
for fs in fuse2fs ours; do
	eval "w_$fs=0 r_$fs=0 rnd_$fs=0 cr_$fs=0 rm_$fs=0 tar_$fs=0"
done

# one round of the page-cache workloads on FS
round() {
	_fs=$1 _img=$work/t/$1.img
	format_fs "$_fs" "$_img" "$img_mb"
	mount_fs "$_fs" "$_img" || { cat "$work/mount.log"; echo "$_fs: mount failed"; exit 1; }
	_t0=$(now)
	dd if="$work/t/src" of="$work/mnt/big" bs=1M conv=fsync status=none || { echo "$_fs: write failed"; exit 1; }
	keep "w_$_fs" $(( $(now) - _t0 ))
	umount_fs
	mount_fs "$_fs" "$_img" || exit 1
	_t0=$(now)
	dd if="$work/mnt/big" of=/dev/null bs=1M status=none || { echo "$_fs: read failed"; exit 1; }
	keep "r_$_fs" $(( $(now) - _t0 ))
	rm -f "$work/mnt/big"
	if command -v fio > /dev/null; then
		fio --name=rand --filename="$work/mnt/rand" --rw=randwrite --bs=4k --size=256m \
			--io_size=${randmb}m --fsync=32 --ioengine=psync --randrepeat=1 \
			--output-format=json > "$work/fio.json" 2> "$work/fio.err" ||
			{ cat "$work/fio.err"; echo "$_fs: fio failed"; exit 1; }
		_iops=$(python3 -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["jobs"][0]["write"]["iops"]))' \
			"$work/fio.json")
		eval "_old=\$rnd_$_fs"
		eval "rnd_$_fs=$(bestmax "$_old" "$_iops")"
		rm -f "$work/mnt/rand"
	fi
	mkdir "$work/mnt/u"
	_t0=$(now)
	tar xf "$work/include.tar" -C "$work/mnt/u" || { echo "$_fs: untar failed"; exit 1; }
	keep "tar_$_fs" $(( $(now) - _t0 ))
	umount_fs
	rm -f "$_img"
}

# the small files: one run each (100k files through fuse2fs take minutes)
files_round() {
	_fs=$1 _img=$work/t/$1.img
	format_fs "$_fs" "$_img" "$img_mb"
	mount_fs "$_fs" "$_img" || exit 1
	mkdir "$work/mnt/f"
	_t0=$(now)
	"$small_bin" "$work/mnt/f" 1000 "$files" || { echo "$_fs: small files failed"; exit 1; }
	eval "cr_$_fs=\$(( \$(now) - _t0 ))"
	_t0=$(now)
	rm -rf "$work/mnt/f" || { echo "$_fs: rm -rf failed"; exit 1; }
	eval "rm_$_fs=\$(( \$(now) - _t0 ))"
	umount_fs
	rm -f "$_img"
}

for r in $(seq "$runs"); do
	truncate -s "$img_mb"M "$work/t/raw.img"
	_t0=$(now)
	dd if="$work/t/src" of="$work/t/raw.img" bs=1M conv=fsync,notrunc status=none
	raw=$(best $raw $(( $(now) - _t0 )))
	rm -f "$work/t/raw.img"
	if [ -n "$floor_bin" ]; then
		truncate -s "$img_mb"M "$work/t/raw.img"
		if "$floor_bin" "$work/t/raw.img" 0 0 "$work/mnt" rw; then
			_t0=$(now)
			dd if="$work/t/src" of="$work/mnt/big" bs=1M conv=fsync status=none
			floor=$(best $floor $(( $(now) - _t0 )))
			fusermount3 -u "$work/mnt"
		fi
		rm -f "$work/t/raw.img"
	fi
	for fs in $fses; do
		round "$fs"
	done
done
for fs in $fses; do
	files_round "$fs"
done

# peak RSS of the mount process while writing rss_gb GiB (image on disk)
rss() {
	_fs=$1 _img=$work/rss.img
	format_fs "$_fs" "$_img" $((rss_gb * 1024 + 2048))
	mount_fs "$_fs" "$_img" || exit 1
	for _i in $(seq $((rss_gb * 1024 / mb))); do
		dd if="$work/t/src" of="$work/mnt/huge" bs=1M oflag=append conv=notrunc status=none ||
			{ echo "$_fs: write failed"; exit 1; }
	done
	sync -f "$work/mnt/huge" 2>/dev/null
	_hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$mpid/status)
	umount_fs
	rm -f "$_img"
	echo "$_hwm"
}
rss_fuse2fs=$(rss fuse2fs)
rss_ours=""
[ $ours_rw = yes ] && rss_ours=$(rss ours)

na="n/a (mount is read-only)"
bytes=$((mb * 1048576))
# row NAME FUSE2FS OURS RATIO
row() { printf '%-50s %10s %10s  %s\n' "$1" "$2" "$3" "$4"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b }'; }
# line NAME UNIT KIND(time|rate) FUSE2FS OURS [AMOUNT]
line() {
	if [ "$3" = time ]; then
		f=$(per_s "$6" "$4")
		[ "$2" = MB/s ] && f=$(mbps "$6" "$4")
		if [ $ours_rw = yes ]; then
			o=$(per_s "$6" "$5")
			[ "$2" = MB/s ] && o=$(mbps "$6" "$5")
			row "$1 ($2)" "$f" "$o" "$(ratio "$4" "$5")"
		else
			row "$1 ($2)" "$f" "$na" ""
		fi
	else
		if [ $ours_rw = yes ]; then
			row "$1 ($2)" "$4" "$5" "$(ratio "$5" "$4")"
		else
			row "$1 ($2)" "$4" "$na" ""
		fi
	fi
}
row "through FUSE, images on tmpfs (best of $runs)" "fuse2fs" "ours" "ours/fuse2fs"
line "seq write ${mb} MiB + fsync" MB/s time "$w_fuse2fs" "$w_ours" $bytes
r=$(mbps $bytes $raw)
printf '%-50s %10s' "  dd to the raw image file (MB/s)" "$r"
if [ $ours_rw = yes ]; then
	printf '  ours at %s%% of dd (target >= 50%%)\n' \
		"$(awk -v a="$raw" -v b="$w_ours" 'BEGIN { printf "%.0f", 100 * a / b }')"
else
	printf '  fuse2fs at %s%% of dd\n' "$(awk -v a="$raw" -v b="$w_fuse2fs" 'BEGIN { printf "%.0f", 100 * a / b }')"
fi
if [ "$floor" != 0 ]; then
	printf '%-50s %10s  ours at %s%% of it (FUSE alone: no btree, no checksum)\n' \
		"  dd through a FUSE server that only pwrites" "$(mbps $bytes $floor)" \
		"$(awk -v a="$floor" -v b="$w_ours" 'BEGIN { printf "%.0f", 100 * a / b }')"
fi
line "seq read ${mb} MiB, fresh mount" MB/s time "$r_fuse2fs" "$r_ours" $bytes
[ "$rnd_fuse2fs" != 0 ] && line "random 4 KiB writes, fsync every 32" IOPS rate "$rnd_fuse2fs" "$rnd_ours"
[ "$rnd_fuse2fs" = 0 ] && echo "random 4 KiB writes: fio not installed (sh tests/deps.sh)"
line "$files small files in 1000 folders, 1 run" files/s time "$cr_fuse2fs" "$cr_ours" "$files"
line "  rm -rf of them" files/s time "$rm_fuse2fs" "$rm_ours" "$files"
line "untar /usr/include, ${tar_mb} MiB" MB/s time "$tar_fuse2fs" "$tar_ours" $((tar_mb * 1048576))
if [ $ours_rw = yes ]; then
	row "peak RSS writing ${rss_gb} GiB (MiB, 1 run)" $((rss_fuse2fs / 1024)) $((rss_ours / 1024)) \
		"$(ratio "$rss_ours" "$rss_fuse2fs")"
else
	row "peak RSS writing ${rss_gb} GiB (MiB, 1 run)" $((rss_fuse2fs / 1024)) "$na" ""
fi
