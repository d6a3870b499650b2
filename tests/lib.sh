# Helpers for test scripts (sourced). Needs $GOLDEN and $WORK.

# unzst FILE.zst OUT: OUT = FILE decompressed (sparse). With $TEST_CACHE
# (tests/run.sh sets it) a file is decompressed once per run (or once
# for all the runs of `make check`) into that folder, and OUT is a sparse
# copy of it: most golden images are 1 GiB, a third of a second of zstd
# each, and many tests read the same ones. OUT is the test's own file.
unzst() {
	if [ -z "${TEST_CACHE:-}" ]; then
		zstd -qdf --sparse "$1" -o "$2"
		return
	fi
	_src=$(readlink -f "$1")
	_key=$TEST_CACHE/$(echo "$_src" | tr / _)
	if [ ! -f "$_key" ] || [ "$_src" -nt "$_key" ]; then
		mkdir -p "$TEST_CACHE"
		# (two tests may decompress one file at once: each its own
		# temporary file, renamed into place whole)
		zstd -qdf --sparse "$_src" -o "$_key.$$.tmp" && mv -f "$_key.$$.tmp" "$_key" ||
			{ rm -f "$_key.$$.tmp"; return 1; }
	fi
	rm -f "$2"
	cp --sparse=always "$_key" "$2"
}

# golden_images CASE [NAME]: decompress the final images of a golden case into
# $WORK/CASE/ (once) and print their paths, space-separated.
golden_images() {
	_case=$1 _name=${2:-}
	_dir=$WORK/$_case
	mkdir -p "$_dir"
	if [ -n "$_name" ]; then
		_imgs=$GOLDEN/$_case/$_name.img.zst
	else
		_imgs=$(ls "$GOLDEN/$_case"/dev[0-9].img.zst 2>/dev/null || true)
		[ -n "$_imgs" ] || _imgs=$(ls "$GOLDEN/$_case"/migrated-layout7.img.zst 2>/dev/null || true)
	fi
	_out=""
	for _i in $_imgs; do
		_o=$_dir/$(basename "${_i%.zst}")
		[ -f "$_o" ] || unzst "$_i" "$_o"
		_out="$_out $_o"
	done
	echo $_out
}

# The golden cases whose final images our read side must read.
golden_read_cases() {
	for _d in "$GOLDEN"/a_* "$GOLDEN"/b* "$GOLDEN"/c1_* "$GOLDEN"/c2_* "$GOLDEN"/d1_* \
		  "$GOLDEN"/e1_* "$GOLDEN"/g1_* "$GOLDEN"/g2_* "$GOLDEN"/g3_*; do
		[ -d "$_d" ] && basename "$_d"
	done
}

# Passphrase options for the encrypted golden cases.
golden_pass_opts() {
	case $1 in
	c1_*|g4_*) printf 'golden-pass\n' > "$WORK/pass"; echo "--passphrase-file $WORK/pass";;
	esac
}

# crashed EXIT-CODE: true when a command died of a signal or a sanitizer.
crashed() {
	[ "$1" -ge 128 ]
}

fail() {
	echo "FAIL: $*"
	exit 1
}

# test_tool NAME: the test tool build/tests/NAME (from tests/*/NAME.c:
# fsck/plant, fsck/damage, rw/posix, rw/fsx, crash/replay) in $TOOL, built
# first when missing or older than its source.
test_tool() {
	_top=$(cd "$TESTDIR/../.." && pwd)
	TOOL=$_top/build/tests/$1
	_src=$(ls "$_top"/tests/*/"$1".c 2>/dev/null | head -n 1)
	if [ ! -x "$TOOL" ] || [ "$_src" -nt "$TOOL" ]; then
		make -s -C "$_top" "build/tests/$1" > "$WORK/make-$1.log" 2>&1 ||
			{ cat "$WORK/make-$1.log"; fail "cannot build build/tests/$1"; }
	fi
}

# replay_tool: the crash-state replayer (tests/crash/replay.c) in $REPLAY,
# exported: the one of the build $BCACHEFS comes from when it has one (the
# ASan build: make check-asan builds build-asan/tests/replay), else
# build/tests/replay.
replay_tool() {
	_r=$(dirname "$BCACHEFS")/tests/replay
	if [ -x "$_r" ] && [ "$_r" -nt "$TESTDIR/../crash/replay.c" ]; then
		REPLAY=$_r
	else
		test_tool replay
		REPLAY=$TOOL
	fi
	export REPLAY
}

# ---- fsck repairs: nothing undamaged lost ----

# repair_snapshot DIR IMG: what a repair of IMG must keep: its inode key
# lines (DIR/inodes.before) and the files extract can read (DIR/before).
repair_snapshot() {
	repair_inodes "$2" "$1/inodes.before"
	"$BCACHEFS" extract --ignore-errors "$2" / "$1/before" > /dev/null 2>&1 || true
	[ -d "$1/before" ] || { rm -f "$1/before"; mkdir "$1/before"; }
}

# repair_inodes IMG OUT: "inum value" of every inode key, sorted.
repair_inodes() {
	"$BCACHEFS" list -b inodes "$1" | sed -n 's/^u64s [0-9]* type [0-9]* \([0-9]*\):0 \(.*[^ ]\) *$/\1 \2/p' | sort > "$2"
}

# repair_kept CASE DIR IMG [PATH...]: after fsck -y (output in DIR/y.out,
# repaired tree extracted to DIR/after): no inode of the snapshot lost, an
# inode key changed only when the repair names it (or it is lost+found),
# and every file of the snapshot still there, the same (except PATHs).
repair_kept() {
	_c=$1 _r=$2 _img=$3
	shift 3
	repair_inodes "$_img" "$_r/inodes.after"
	_lf=$("$BCACHEFS" list -b dirents "$_img" | sed -n 's/^.* 4096:[0-9]* .*: lost+found -> \([0-9]*\)$/\1/p')
	_named=" $(grep -o '[0-9][0-9][0-9][0-9]*' "$_r/y.out" | tr '\n' ' ') $_lf "
	while read -r _ino _rest; do
		_now=$(grep "^$_ino " "$_r/inodes.after" || true)
		[ -n "$_now" ] || fail "$_c: inode $_ino lost by the repair"
		[ "$_now" = "$_ino $_rest" ] && continue
		case $_named in
		*" $_ino "*) ;;
		*) cat "$_r/y.out"; fail "$_c: inode $_ino changed, but the repair does not name it: $_now";;
		esac
	done < "$_r/inodes.before"

	diff -rq --no-dereference "$_r/before" "$_r/after" > "$_r/diff" 2>&1 || true
	grep -v "^Only in $_r/after" "$_r/diff" > "$_r/diff.bad" || true
	for _p in "$@"; do
		grep -v "$_r/before/$_p[: ]" "$_r/diff.bad" > "$_r/diff.tmp" || true
		mv "$_r/diff.tmp" "$_r/diff.bad"
	done
	[ ! -s "$_r/diff.bad" ] || { cat "$_r/y.out" "$_r/diff.bad"; fail "$_c: the repair changed or lost files"; }
}

# ---- FUSE mounts (tests/mount) ----

# fuse_mount_setup: skip (77) without FUSE, fusermount3, python3 or the
# right to mount; then never leave a mount on $WORK/mnt-* behind, whatever
# happens (an EXIT/INT/TERM trap).
fuse_mount_setup() {
	[ -c /dev/fuse ] || { echo "no /dev/fuse"; exit 77; }
	command -v fusermount3 >/dev/null || { echo "no fusermount3"; exit 77; }
	command -v python3 >/dev/null || { echo "python3 needed"; exit 77; }
	if [ "$(id -u)" != 0 ] && [ ! -u "$(command -v fusermount3)" ]; then
		echo "fusermount3 is not setuid and we are not root"; exit 77
	fi
	trap fuse_mount_cleanup EXIT
	trap 'fuse_mount_cleanup; exit 1' INT TERM
}

fuse_mount_cleanup() {
	for _m in "$WORK"/mnt-*; do
		[ -d "$_m" ] && fusermount3 -u -z "$_m" 2>/dev/null
	done
}

is_mounted() {	# MOUNTPOINT
	awk -v m="$1" '$2 == m && $3 == "fuse.bcachefs" { f = 1 } END { exit !f }' /proc/mounts
}

# mount_fg NAME IMAGE [OPTION]...: mount in the foreground as a background
# job on $WORK/mnt-NAME; sets $pid, $mnt; log in $WORK/NAME.log
mount_fg() {
	_n=$1 _img=$2
	shift 2
	mnt=$WORK/mnt-$_n
	mkdir -p "$mnt"
	"$BCACHEFS" mount -f "$@" "$_img" "$mnt" > "$WORK/$_n.log" 2>&1 < /dev/null &
	pid=$!
	_i=0
	while ! is_mounted "$mnt"; do
		if ! kill -0 $pid 2>/dev/null; then
			wait $pid; _rc=$?
			cat "$WORK/$_n.log"
			fail "$_n: mount exited with $_rc before mounting"
		fi
		_i=$((_i + 1))
		[ $_i -lt 200 ] || fail "$_n: not mounted after 10 s"
		sleep 0.05
	done
}

# unmount_fg NAME: fusermount3 -u, then the process must exit 0
unmount_fg() {
	fusermount3 -u "$mnt" || fail "$1: fusermount3 -u failed"
	wait $pid
	_rc=$?
	cat "$WORK/$1.log"
	crashed $_rc && fail "$1: mount process crashed (rc=$_rc)"
	[ $_rc = 0 ] || fail "$1: mount process exited with $_rc after unmount"
	is_mounted "$mnt" && fail "$1: still mounted"
	true
}
