#!/bin/sh
# migrate and dump against their nearest alternatives, one run each:
#
#   migrate of a mounted ext4 filesystem holding BENCH_MIGRATE_FILES
#   (50000) small files, against `format --source` of the same tree into a
#   new image (what a copy-based migration would cost); migrate's time
#   includes its closing fsck -n, which is also shown on its own;
#
#   dump of a filesystem of BENCH_DUMP_FILES (100000) small files made by
#   `format --source`, against `e2image -Q` (ext4's metadata image, also
#   qcow2) of an ext4 image of the same tree (`mkfs.ext4 -d`).
#
# migrate needs root and loop devices (skipped otherwise); dump needs
# e2image. Environment: BENCH_MIGRATE_FILES, BENCH_DUMP_FILES, BENCH_WORK,
# BCACHEFS.
set -u
top=${BENCH_TOP:-$(pwd)}
bin=${BCACHEFS:-$top/bcachefs}
work=${BENCH_WORK:-$(mktemp -d)}
mfiles=${BENCH_MIGRATE_FILES:-50000}
dfiles=${BENCH_DUMP_FILES:-100000}
loop="" mnt=$work/mnt

cleanup() {
	mountpoint -q "$mnt" 2>/dev/null && umount "$mnt"
	[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
}
trap cleanup EXIT

now_us() { echo $(( $(date +%s%N) / 1000 )); }
ms() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
size_mib() { du -k --apparent-size "$1" | awk '{ printf "%.1f", $1 / 1024 }'; }

# time_once CMD...: wall time of one run in us (in $t), CPU time (user +
# system, children included) in ms in $cpu ("-" without GNU time), exit
# code in $rc
gnutime=$(command -v /usr/bin/time || true)
time_once() {
	t0=$(now_us)
	if [ -n "$gnutime" ]; then
		"$gnutime" -f '%U %S' -o "$work/cpu" "$@" > "$work/last.log" 2>&1
		rc=$?
		cpu=$(awk '{ c = $(NF - 1) + $NF } END { printf "%d", c * 1000 }' "$work/cpu")
	else
		"$@" > "$work/last.log" 2>&1
		rc=$?
		cpu=-
	fi
	t=$(( $(now_us) - t0 ))
}

# gen DIR N: N files of 0-4 KiB in 100 x 10 folders (python: a process per
# file would take minutes)
gen() {
	python3 - "$1" "$2" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
per = (n + 999) // 1000
blob = bytes(range(256)) * 16
sizes = [0, 5, 512, 1024, 1536, 2048, 3072, 4096]
k = 0
for i in range(100):
    for j in range(10):
        d = "%s/d%d/s%d" % (root, i, j)
        os.makedirs(d)
        for f in range(per):
            if k >= n:
                break
            with open("%s/f%d" % (d, f), "wb") as fh:
                fh.write(blob[:sizes[(i * 7 + j * 3 + f) % 8]])
            k += 1
PY
}

command -v python3 > /dev/null || { echo "skipped: python3 needed"; exit 77; }
ran=0

# ---- migrate ----
if [ "$(id -u)" != 0 ] || ! command -v mkfs.ext4 > /dev/null || ! command -v losetup > /dev/null; then
	echo "migrate: skipped (needs root, mkfs.ext4 and loop devices)"
else
	ext=$work/ext4.img
	truncate -s 2G "$ext"
	mkfs.ext4 -q -F -b 4096 -N $((mfiles * 2)) "$ext" && loop=$(losetup -f --show "$ext") &&
		mkdir -p "$mnt" && mount "$loop" "$mnt" || { echo "migrate: cannot set up ext4 on a loop device"; exit 1; }
	gen "$mnt/tree" "$mfiles"
	sync

	img=$work/bch.img
	truncate -s 2G "$img"
	time_once "$bin" format -q --source "$mnt/tree" "$img"
	base=$t base_cpu=$cpu
	[ $rc = 0 ] || { echo "format --source failed: $(head -n 3 "$work/last.log")"; exit 1; }
	rm -f "$img"

	time_once "$bin" migrate -f "$mnt"
	t_mig=$t cpu_mig=$cpu
	[ $rc = 0 ] || { echo "migrate failed (exit $rc): $(tail -n 5 "$work/last.log")"; exit 1; }
	summary=$(grep 'linked in place' "$work/last.log")
	umount "$mnt"
	time_once "$bin" fsck -n -f "$ext"
	t_fsck=$t

	printf '%-52s %12s %10s %8s\n' "migrate, $mfiles files (2 GiB ext4)" "ms (1 run)" "vs format" "CPU ms"
	printf '%-52s %12s %10s %8s\n' "format --source of the tree (baseline)" "$(ms $base)" "1.00" "$base_cpu"
	printf '%-52s %12s %10s %8s\n' "migrate -f (with its fsck -n)" "$(ms $t_mig)" "$(ratio $t_mig $base)" "$cpu_mig"
	printf '%-52s %12s %10s %8s\n' "  of which fsck -n of the result (alone: exit $rc)" "$(ms $t_fsck)" "$(ratio $t_fsck $base)" "$cpu"
	echo "  $summary"
	losetup -d "$loop"
	loop=""
	rm -f "$ext"
	ran=1
fi
echo

# ---- dump ----
if ! command -v e2image > /dev/null || ! command -v mkfs.ext4 > /dev/null; then
	echo "dump: skipped (needs e2image and mkfs.ext4)"
else
	tree=$work/tree
	gen "$tree" "$dfiles"
	img=$work/bch.img ext=$work/ext4.img
	rm -f "$img" "$ext"
	truncate -s 4G "$img" "$ext"
	"$bin" format -q --source "$tree" "$img" > "$work/last.log" 2>&1 ||
		{ echo "format --source failed: $(head -n 3 "$work/last.log")"; exit 1; }
	mkfs.ext4 -q -F -N $((dfiles * 2)) -d "$tree" "$ext" > "$work/last.log" 2>&1 ||
		{ echo "mkfs.ext4 -d failed: $(head -n 3 "$work/last.log")"; exit 1; }
	rm -rf "$tree"

	e2image -Q "$ext" "$work/warm.qcow2" > /dev/null 2>&1; rm -f "$work/warm.qcow2"	# warm-up
	time_once e2image -Q "$ext" "$work/ext4.qcow2"
	base=$t base_cpu=$cpu
	[ $rc = 0 ] || { echo "e2image -Q failed: $(head -n 3 "$work/last.log")"; exit 1; }
	"$bin" dump -o "$work/warm.qcow2" "$img" > /dev/null 2>&1; rm -f "$work/warm.qcow2"
	time_once "$bin" dump -o "$work/bch.qcow2" "$img"
	[ $rc = 0 ] || { echo "dump failed: $(head -n 3 "$work/last.log")"; exit 1; }

	printf '%-52s %12s %10s %8s %8s\n' "metadata image, $dfiles files (4 GiB sparse)" "ms (1 run)" "vs e2image" "CPU ms" "MiB"
	printf '%-52s %12s %10s %8s %8s\n' "e2image -Q of the ext4 image (baseline)" "$(ms $base)" "1.00" "$base_cpu" "$(size_mib "$work/ext4.qcow2")"
	printf '%-52s %12s %10s %8s %8s\n' "bcachefs dump" "$(ms $t)" "$(ratio $t $base)" "$cpu" "$(size_mib "$work/bch.qcow2")"
	rm -f "$img" "$ext" "$work"/*.qcow2
	ran=1
fi
[ $ran = 1 ] || exit 77
exit 0
