# Helpers of the read-write tests (tests/rw/test_*.sh; sourced after
# tests/lib.sh). The tools: build/tests/posix (posix.c), build/tests/fsx
# (fsx.c), tests/rw/stress.sh.

# rw_setup: skip (77) unless root (tmpfs mounts, chown, mknod and the
# permission checks need it); then never leave a tmpfs (rw_tmpfs) or a FUSE
# mount on $WORK/mnt-* behind, whatever happens.
rw_setup() {
	[ "$(id -u)" = 0 ] || { echo "needs root (tmpfs mounts, chown, mknod, uid switching)"; exit 77; }
	RW_TMPFS=""
	trap rw_cleanup EXIT
	trap 'rw_cleanup; exit 1' INT TERM
}

rw_cleanup() {
	for _m in "$WORK"/mnt-*; do
		[ -d "$_m" ] && fusermount3 -u -z "$_m" 2>/dev/null
	done
	for _m in $RW_TMPFS; do
		umount -l "$_m" 2>/dev/null
	done
	true
}

# rw_tmpfs NAME [SIZE]: a private tmpfs on $WORK/NAME, its path in $tmpfs
rw_tmpfs() {
	tmpfs=$WORK/$1
	mkdir -p "$tmpfs"
	mount -t tmpfs -o "size=${2:-512m},mode=0755" tmpfs "$tmpfs" ||
		{ echo "cannot mount a tmpfs on $tmpfs"; exit 77; }
	RW_TMPFS="$RW_TMPFS $tmpfs"
}

# rw_mount IMAGE: `bcachefs mount -f -o rw` IMAGE on
# $WORK/mnt-rw as a background job ($pid, $mnt; log $WORK/rw.log; unmount
# with `unmount_fg rw`). No allow_other: mounted by root, every user may
# use the mount by default, and the permission checks of the
# POSIX suite run as another uid. $RW_MOUNT_OPTS: more -o options. Exits 77
# while the mount refuses read-write (before the read-write engine), and
# when it mounts but a file cannot be created.
rw_mount() {
	mnt=$WORK/mnt-rw
	mkdir -p "$mnt"
	"$BCACHEFS" mount -f -o "rw${RW_MOUNT_OPTS:+,$RW_MOUNT_OPTS}" "$1" "$mnt" \
		> "$WORK/rw.log" 2>&1 < /dev/null &
	pid=$!
	_i=0
	while ! rw_is_mounted "$mnt"; do
		if ! kill -0 $pid 2>/dev/null; then
			wait $pid; _rc=$?
			if grep -qiE "read-write|read-only|not available" "$WORK/rw.log"; then
				echo "bcachefs mount refuses read-write: $(head -n 1 "$WORK/rw.log")"
				exit 77
			fi
			cat "$WORK/rw.log"
			fail "bcachefs mount -o rw exited with $_rc before mounting"
		fi
		_i=$((_i + 1))
		[ $_i -lt 200 ] || fail "not mounted after 10 s"
		sleep 0.05
	done
	if ! : > "$mnt/.rw-probe" 2>/dev/null; then
		fusermount3 -u "$mnt"; wait $pid
		echo "bcachefs mount -o rw mounted, but a file cannot be created in it (not read-write yet)"
		exit 77
	fi
	rm -f "$mnt/.rw-probe"
}

# a FUSE mount on MOUNTPOINT (fuse.bcachefs, or fuse.ext4 when
# tests/rw/fuse2fs-as-bcachefs.sh stands in for bcachefs)
rw_is_mounted() {
	awk -v m="$1" '$2 == m && $3 ~ /^fuse/ { f = 1 } END { exit !f }' /proc/mounts
}

# rw_image IMAGE SIZE [FORMAT-OPTION]...: a new formatted image
rw_image() {
	_img=$1 _size=$2
	shift 2
	rm -f "$_img"
	truncate -s "$_size" "$_img"
	"$BCACHEFS" format -q -f "$@" "$_img" > "$WORK/format.log" 2>&1 ||
		{ cat "$WORK/format.log"; fail "format $*"; }
}

# rw_fsck IMAGE: fsck -f -n must exit 0 (output in $WORK/fsck.out)
rw_fsck() {
	"$BCACHEFS" fsck -f -n "$1" > "$WORK/fsck.out" 2>&1 ||
		{ _rc=$?; cat "$WORK/fsck.out"; fail "fsck -f -n after the workload exited with $_rc"; }
}
