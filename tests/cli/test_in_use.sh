# A filesystem in use is never written by a second command, however it is
# reached:
#   - another process holding the image (flock, shared as a reader): format
#     and fsck -y refused, fsck -f -n still reads it;
#   - the image mounted, then format / fsck -y of a loop device of it;
#   - a loop device mounted, then format / fsck -y of the image;
#   - the mount holds a lock on the image (also when reached through the
#     loop device), so that a mount in another mount namespace, which our
#     mount table does not show, still stops format and fsck -y;
#   - but a mount process that was just unmounted and is still writing
#     everything out is waited for (fsck -y of its loop device).
# Refused means: the right exit status (format 1, fsck 8) and the image
# byte for byte as it was. The same device twice under two names (a loop
# device of the image) is refused as a usage error (16), also before any
# write (item 3; the path spellings are in format/test_format_errors.sh).
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1

command -v flock > /dev/null || { echo "no flock(1)"; exit 77; }
truncate -s 64M s.img
"$BCACHEFS" format -q s.img || fail "format s.img"
sum() { sha256sum < s.img; }

# refused WANT-RC CMD...: the command exits WANT-RC and s.img is unchanged
refused() {
	_want=$1
	shift
	_before=$(sum)
	_rc=0
	"$BCACHEFS" "$@" < /dev/null > out 2> err || _rc=$?
	crashed $_rc && { cat err; fail "$*: crashed ($_rc)"; }
	[ $_rc = "$_want" ] || { cat out err; fail "$*: exit $_rc, want $_want (refused)"; }
	[ "$(sum)" = "$_before" ] || fail "$*: s.img was changed"
	echo "ok   refused [$_rc] $*: $(head -n 1 err)"
}

# reads: fsck -f -n exit 0 (a warning at most)
reads() {
	"$BCACHEFS" fsck -f -n "$1" < /dev/null > out 2> err || { cat out err; fail "fsck -f -n $1: exit $?"; }
	echo "ok   fsck -f -n $1 reads it"
}

# ---- a reader holding the image: no writer may start ----
# (-o: the lock stays with flock(1) itself, not with its child)
flock -o -s s.img sleep 60 &
holder=$!
i=0
until grep -q "FLOCK  ADVISORY  READ $holder " /proc/locks; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "flock(1) took no lock"
	sleep 0.05
done
refused 1 format -q -f s.img
refused 8 fsck -y s.img
reads s.img
kill $(pgrep -P $holder) $holder; wait $holder 2> /dev/null

# ---- loop devices and mounts: root, losetup, FUSE ----
[ "$(id -u)" = 0 ] || { echo "not root: no loop devices"; exit 77; }
command -v losetup > /dev/null || { echo "no losetup"; exit 77; }
fuse_mount_setup
loop=
cleanup() {
	fuse_mount_cleanup
	[ -n "$loop" ] && losetup -d "$loop"
	[ -n "${nspid:-}" ] && kill "$nspid" 2> /dev/null
	true
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM
loop=$(losetup -f --show "$WORK/s.img") || { echo "no free loop device"; loop=; exit 77; }

# the same device twice: the image and a loop device of it
refused 16 format -q -f s.img "$loop"
refused 16 format -q -f "$loop" s.img

# the image mounted: its loop device is in use too
mount_fg img "$WORK/s.img"
refused 1 format -q -f "$loop"
refused 8 fsck -y "$loop"
refused 1 format -q -f s.img
reads "$loop"
flock -n -x s.img true && fail "the mount of s.img holds no lock on it"
unmount_fg img

# the loop device mounted: the image is in use
mount_fg loop "$loop"
refused 1 format -q -f s.img
refused 8 fsck -y s.img
refused 8 fsck -y "$loop"
reads s.img
flock -n -x s.img true && fail "the mount of $loop holds no lock on its backing file"
unmount_fg loop

# right after umount the mount process still holds the loop device
# (O_EXCL) while it writes everything out: fsck -y waits for it
mkdir -p "$WORK/mnt-bg"
"$BCACHEFS" mount "$loop" "$WORK/mnt-bg" || fail "mount $loop in the background"
dd if=/dev/urandom of="$WORK/mnt-bg/big" bs=1M count=24 status=none || fail "write 24 MiB"
umount "$WORK/mnt-bg" || fail "umount $WORK/mnt-bg"
rc=0
"$BCACHEFS" fsck -y "$loop" < /dev/null > out 2>&1 || rc=$?
[ $rc = 0 ] || { cat out; fail "fsck -y $loop right after umount: exit $rc"; }
echo "ok   fsck -y $loop right after umount"

# a mount our mount table cannot show (another mount namespace): the lock
if command -v unshare > /dev/null && unshare -m true 2> /dev/null; then
	mkdir -p "$WORK/mnt-ns"
	unshare -m --propagation private "$BCACHEFS" mount -f "$WORK/s.img" "$WORK/mnt-ns" \
		> ns.log 2>&1 < /dev/null &
	nspid=$!
	i=0
	until grep -q " $WORK/mnt-ns fuse.bcachefs " /proc/$nspid/mounts 2> /dev/null; do
		kill -0 $nspid 2> /dev/null || { cat ns.log; fail "mount in a namespace exited"; }
		i=$((i + 1)); [ $i -lt 200 ] || fail "mount in a namespace: not mounted after 10 s"
		sleep 0.05
	done
	grep -q " $WORK/mnt-ns " /proc/self/mounts && fail "the namespace's mount is visible here"
	refused 1 format -q -f s.img
	refused 8 fsck -y s.img
	refused 1 format -q -f "$loop"
	kill -TERM $nspid
	wait $nspid || fail "mount in a namespace: exit $?"
	nspid=
else
	echo "skip: unshare -m not possible here"
fi

# nothing holds it any more: writers work again
"$BCACHEFS" fsck -y s.img > out 2>&1 || { cat out; fail "fsck -y after all failed"; }
"$BCACHEFS" format -q -f "$loop" || fail "format of the loop device after all"
"$BCACHEFS" fsck -f -n s.img > out 2>&1 || { cat out; fail "fsck -f -n s.img after formatting the loop device"; }
echo "all refused while in use, and allowed after"
