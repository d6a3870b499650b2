#!/bin/sh
# Sequential read of a large file through `bcachefs mount` against reading
# the same amount straight from the image file with dd, in the same run.
# (Target: mount read >= 50% of the raw read.) Needs root, /dev/fuse and
# `format --source`.
set -u
top=${BENCH_TOP:-$(pwd)}
bin=${BCACHEFS:-$top/bcachefs}
work=${BENCH_WORK:-$(mktemp -d)}
mb=${BENCH_READ_MB:-1024}

[ -e /dev/fuse ] && command -v fusermount3 >/dev/null || { echo "no FUSE here"; exit 77; }

mkdir -p "$work/src" "$work/mnt"
head -c $((mb * 1048576)) /dev/urandom > "$work/src/big" || exit 1
truncate -s $((mb * 2 + 512))M "$work/fs.img"
if ! "$bin" format -q -f --source="$work/src" "$work/fs.img" > "$work/format.log" 2>&1; then
	echo "format --source not available: $(head -n 1 "$work/format.log")"
	exit 77
fi
rm -f "$work/src/big"

mbps() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.0f", b / (ns / 1e9) / 1e6 }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", 100 * a / b }'; }
# dd_ns FILE [OPERAND...]: read FILE with dd bs=1M; prints the nanoseconds
dd_ns() {
	_f=$1
	shift
	_t0=$(date +%s%N)
	dd if="$_f" of=/dev/null bs=1M status=none "$@"
	echo $(( $(date +%s%N) - _t0 ))
}
# best OLD NEW: the smaller time, 0 being none yet
best() { if [ "$1" = 0 ] || [ "$2" -lt "$1" ]; then echo "$2"; else echo "$1"; fi; }

# Both reads come from the page cache (the image is read once first), so
# the comparison measures the cost of our read path, not the disk. Each
# mount read is from a fresh mount (nothing of the file in the kernel's
# cache; the mount does direct I/O by default, BENCH_MOUNT_OPTS="-o
# kernel_cache" measures the other mode). Best of $BENCH_RUNS (5) for
# each side, alternating, on a machine that is shared.
#
# A third line, the floor: bench/fuse_floor.c, a FUSE server that does
# nothing but pread the image and reply (no btree, no checksum), mounted
# the same way. What it loses against the raw read is FUSE's own cost on
# this machine (a server can hide part of it only by working in parallel,
# as the mount's read-ahead worker does).
floor_bin=${BENCH_BUILD:-$top/build}/bench/fuse_floor
${BENCH_RUN:-sh $top/bench/run.sh} --compile "$floor_bin" "$top/bench/fuse_floor.c" 2>/dev/null ||
	floor_bin=""
cat "$work/fs.img" > /dev/null
runs=${BENCH_RUNS:-5}
raw=0 fuse=0 floor=0
for r in $(seq "$runs"); do
	raw=$(best $raw "$(dd_ns "$work/fs.img" count="$mb")")

	if [ -n "$floor_bin" ] && "$floor_bin" "$work/fs.img" 0 $((mb * 1048576)) "$work/mnt"; then
		t=$(dd_ns "$work/mnt/big")
		fusermount3 -u "$work/mnt"
		floor=$(best $floor $t)
	fi

	"$bin" mount -o ro ${BENCH_MOUNT_OPTS:-} "$work/fs.img" "$work/mnt" || { echo "mount failed"; exit 1; }
	t=$(dd_ns "$work/mnt/big")
	fusermount3 -u "$work/mnt"
	fuse=$(best $fuse $t)
done

bytes=$((mb * 1048576))
r=$(mbps $bytes $raw) f=$(mbps $bytes $fuse)
printf '%-40s %10s\n' "read ${mb} MiB (best of $runs)" "MB/s"
printf '%-40s %10s\n' "dd from the image file, cached (baseline)" "$r"
printf '%-40s %10s  (%s%% of raw; target >= 50%%)\n' "dd through bcachefs mount" "$f" \
	"$(pct "$f" "$r")"
if [ $floor != 0 ]; then
	fl=$(mbps $bytes $floor)
	printf '%-40s %10s  (%s%% of raw: FUSE alone, no checks, one thread)\n' \
		"dd through a FUSE server that only preads" "$fl" "$(pct "$fl" "$r")"
fi
rm -f "$work/fs.img"

# A compressible text file stored zstd-compressed: through the mount with
# the worker reading and decoding ahead (the default), and without it
# (-o noread_ahead: each read decodes in the request's own thread).
tmb=${BENCH_TEXT_MB:-256}
python3 -c 'import sys
n = int(sys.argv[1]) << 20
with open(sys.argv[2], "w") as f:
    i = 0
    while f.tell() < n:
        f.write("line %d of a compressible file, word %d\n" % (i, i * 7919 % 100003)); i += 1
    f.truncate(n)' "$tmb" "$work/src/text" || exit 0
truncate -s $((tmb + 512))M "$work/fs.img"
"$bin" format -q -f --compression_type=zstd --source="$work/src" "$work/fs.img" > "$work/format.log" 2>&1 ||
	{ echo "format --source --compression_type=zstd failed: $(head -n 1 "$work/format.log")"; exit 1; }
rm -f "$work/src/text"
cat "$work/fs.img" > /dev/null
ahead=0 self=0
for r in $(seq "$runs"); do
	for o in "" noread_ahead; do
		"$bin" mount -o ro ${o:+-o $o} "$work/fs.img" "$work/mnt" || { echo "mount failed"; exit 1; }
		t=$(dd_ns "$work/mnt/text")
		fusermount3 -u "$work/mnt"
		if [ -n "$o" ]; then
			self=$(best $self $t)
		else
			ahead=$(best $ahead $t)
		fi
	done
done
bytes=$((tmb * 1048576))
printf '%-40s %10s
' "read ${tmb} MiB of zstd text (best of $runs)" "MB/s"
printf '%-40s %10s
' "mount -o noread_ahead (baseline)" "$(mbps $bytes $self)"
printf '%-40s %10s  (%sx)
' "mount, decoded ahead by the worker" "$(mbps $bytes $ahead)" \
	"$(awk -v a="$self" -v b="$ahead" 'BEGIN { printf "%.2f", a / b }')"
rm -f "$work/fs.img"
