#!/bin/sh
# sqlite, the fsync-heavy application: BENCH_SQLITE_N (5000)
# one-row transactions (each one commit, so fsyncs), in rollback-journal
# (DELETE) and WAL mode, through our mount, fuse2fs on an ext4 image, and
# kernel ext4 over a loop device: seconds, lower is better, best of
# BENCH_RUNS (3). The images lie in $BENCH_WORK (a disk, not a tmpfs:
# there a flush costs nothing and the comparison would hide what fsync
# costs). Needs root, FUSE, fuse2fs, sqlite3 (tests/deps.sh --bench).
set -u
top=${BENCH_TOP:-$(pwd)}
bin=${BCACHEFS:-$top/bcachefs}
work=${BENCH_WORK:-$(mktemp -d)}
n=${BENCH_SQLITE_N:-5000}
runs=${BENCH_RUNS:-3}

command -v sqlite3 > /dev/null || { echo "sqlite3 not installed (sh tests/deps.sh --bench)"; exit 77; }
[ -e /dev/fuse ] && command -v fusermount3 > /dev/null || { echo "no FUSE here"; exit 77; }
command -v fuse2fs > /dev/null && command -v mkfs.ext4 > /dev/null ||
	{ echo "fuse2fs or mkfs.ext4 not installed (sh tests/deps.sh)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "needs root (loop device, mount)"; exit 77; }

mnt=$work/mnt
mkdir -p "$mnt"
mpid="" loop=""
cleanup() {
	grep -q " $mnt " /proc/mounts && { fusermount3 -u -z "$mnt" 2>/dev/null || umount -l "$mnt"; }
	[ -n "$mpid" ] && wait "$mpid" 2>/dev/null
	[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
	rm -f "$work/sq.img"
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM

# setup ours|fuse2fs|ext4: a fresh 512 MiB filesystem mounted on $mnt
setup() {
	rm -f "$work/sq.img"
	truncate -s 512M "$work/sq.img"
	case $1 in
	ours)	"$bin" format -q -f "$work/sq.img" > /dev/null 2>&1 || return 1
		"$bin" mount -f "$work/sq.img" "$mnt" > "$work/mount.log" 2>&1 < /dev/null &
		mpid=$!;;
	fuse2fs) mkfs.ext4 -q -F "$work/sq.img" || return 1
		fuse2fs -f "$work/sq.img" "$mnt" > "$work/mount.log" 2>&1 < /dev/null &
		mpid=$!;;
	ext4)	mkfs.ext4 -q -F "$work/sq.img" || return 1
		loop=$(losetup -f --show "$work/sq.img") || return 1
		mount "$loop" "$mnt" || return 1;;
	esac
	_i=0
	until grep -q " $mnt " /proc/mounts; do
		[ -z "$mpid" ] || kill -0 "$mpid" 2>/dev/null || return 1
		_i=$((_i + 1)); [ $_i -lt 400 ] || return 1
		sleep 0.05
	done
}

teardown() {
	if [ -n "$mpid" ]; then
		fusermount3 -u "$mnt"
		wait "$mpid"
		mpid=""
	else
		umount "$mnt"
		losetup -d "$loop"
		loop=""
	fi
}

# run MODE: seconds for $n one-row commits
run() {
	rm -f "$mnt/t.db" "$mnt/t.db-wal" "$mnt/t.db-shm" "$mnt/t.db-journal"
	{
		echo "PRAGMA journal_mode=$1;"
		echo "PRAGMA synchronous=FULL;"
		echo "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);"
		_i=0
		while [ $_i -lt "$n" ]; do
			echo "INSERT INTO t (v) VALUES ('row $_i of the benchmark');"
			_i=$((_i + 1))
		done
	} > "$work/sql"
	_t0=$(date +%s%N)
	sqlite3 "$mnt/t.db" < "$work/sql" > /dev/null || return 1
	_t1=$(date +%s%N)
	[ "$(sqlite3 "$mnt/t.db" 'SELECT count(*) FROM t;')" = "$n" ] || return 1
	awk -v ns=$((_t1 - _t0)) 'BEGIN { printf "%.1f", ns / 1e9 }'
}

printf '%-34s %10s %10s %10s\n' "sqlite, $n one-row commits (s)" ours fuse2fs ext4
for mode in DELETE WAL; do
	line=$(printf '  %-32s' "journal_mode=$mode")
	for fs in ours fuse2fs ext4; do
		best=""
		r=0
		while [ $r -lt "$runs" ]; do
			if setup $fs; then
				t=$(run $mode) || t=""
				teardown
			else
				t=""
				cleanup
			fi
			[ -n "$t" ] && { [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; } && best=$t
			r=$((r + 1))
		done
		line="$line $(printf '%10s' "${best:-n/a}")"
	done
	echo "$line"
done
