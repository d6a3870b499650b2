#!/bin/sh
# mount(8) and fstab: `make install` puts mount.bcachefs beside mkfs and
# fsck; with it where mount(8) looks for helpers (/sbin/mount.bcachefs,
# linked to this build for the test and removed after), `mount -t bcachefs
# IMG DIR` mounts read-write in the background, `umount DIR` unmounts
# cleanly (the superblock says clean, fsck -f -n exits 0), and a line of an
# fstab (mount -T FILE, with fstab words such as defaults and nofail)
# mounts by the mount point alone; -o ro gives a read-only mount; -o sb=N
# of a superblock copy mounts, of another sector is refused by name.
. "$TESTDIR/../lib.sh"
fuse_mount_setup
command -v mount > /dev/null || { echo "no mount(8)"; exit 77; }
top=$(cd "$TESTDIR/../.." && pwd)

# make install: the helper name is installed
make -s -C "$top" install DESTDIR="$WORK/inst" PREFIX=/usr > "$WORK/install.log" 2>&1 ||
	{ cat "$WORK/install.log"; fail "make install"; }
[ "$(readlink "$WORK/inst/usr/sbin/mount.bcachefs")" = bcachefs ] || fail "make install: no mount.bcachefs link"

helper=/sbin/mount.bcachefs
if [ -e "$helper" ] || [ -L "$helper" ]; then
	case "$(readlink -f "$helper")" in
	*/bcachefs) ;;
	*) echo "$helper exists and is not ours"; exit 77;;
	esac
	placed=""
else
	ln -s "$BCACHEFS" "$helper" || { echo "cannot write $helper"; exit 77; }
	placed=1
fi
mnt=$WORK/mnt-helper
mkdir -p "$mnt"
cleanup_helper() {
	umount "$mnt" 2>/dev/null
	fusermount3 -u -z "$mnt" 2>/dev/null
	[ -n "$placed" ] && rm -f "$helper"
	fuse_mount_cleanup
}
trap cleanup_helper EXIT
trap 'cleanup_helper; exit 1' INT TERM

img=$WORK/h.img
truncate -s 64M "$img"
"$BCACHEFS" format -q "$img" > /dev/null 2>&1 || fail "format"

wait_mounted() {	# MODE
	_i=0
	until awk -v m="$mnt" '$2 == m && $3 == "fuse.bcachefs" { f = 1 } END { exit !f }' /proc/mounts; do
		_i=$((_i + 1)); [ $_i -lt 200 ] || fail "not mounted after 10 s"; sleep 0.05
	done
	grep -q " $mnt fuse.bcachefs $1," /proc/mounts || fail "not mounted $1: $(grep " $mnt " /proc/mounts)"
}

# unmounted by umount(8): the daemon must be gone and have written everything
unmount_wait() {
	umount "$mnt" || fail "umount"
	_i=0
	while pgrep -f "mount.bcachefs $img" > /dev/null || pgrep -f "bcachefs.*$img $mnt" > /dev/null; do
		_i=$((_i + 1)); [ $_i -lt 200 ] || fail "the mount process did not end"; sleep 0.05
	done
}

mount -t bcachefs "$img" "$mnt" || fail "mount -t bcachefs"
wait_mounted rw
echo data > "$mnt/file" || fail "write through mount -t bcachefs"
unmount_wait
"$BCACHEFS" show-super "$img" | grep -q "^Clean:.*1" || fail "not clean after umount"
"$BCACHEFS" fsck -f -n "$img" > "$WORK/fsck.out" 2>&1 || { cat "$WORK/fsck.out"; fail "fsck -f -n after umount"; }

printf '%s %s bcachefs defaults,nofail 0 0\n' "$img" "$mnt" > "$WORK/fstab"
mount -T "$WORK/fstab" "$mnt" || fail "mount from an fstab line"
wait_mounted rw
[ "$(cat "$mnt/file")" = data ] || fail "fstab mount: the file"
unmount_wait

# the options of the 2018 mount: sb= of a copy the layout has (the line
# migrate prints), refused by name for one it lacks
off=$("$BCACHEFS" show-super -l "$img" | sed -n 's/^ *Offsets:[[:space:]]*[0-9]*, *\([0-9]*\).*/\1/p')
[ -n "$off" ] || fail "no second superblock offset in show-super -l"
mount -t bcachefs -o "sb=$off,errors=remount-ro" "$img" "$mnt" || fail "mount -t bcachefs -o sb=$off"
wait_mounted rw
[ "$(cat "$mnt/file")" = data ] || fail "sb= mount: the file"
unmount_wait
mount -t bcachefs -o sb=12345 "$img" "$mnt" > "$WORK/sbbad.out" 2>&1 && fail "sb=12345 mounted"
grep -q "sb=12345" "$WORK/sbbad.out" || { cat "$WORK/sbbad.out"; fail "sb=12345: the option is not named"; }

mount -t bcachefs -o ro "$img" "$mnt" || fail "mount -o ro"
wait_mounted ro
touch "$mnt/new" 2> /dev/null && fail "a read-only mount took a write"
unmount_wait

# umount returns before the mount process has written everything and let
# go of the device: a mount right after it waits for that, it is not
# refused as "in use"; a device that is mounted is refused at once
mount -t bcachefs "$img" "$mnt" || fail "mount for the remount"
wait_mounted rw
dd if=/dev/urandom of="$mnt/big" bs=1M count=24 status=none || fail "write 24 MiB"
umount "$mnt" || fail "umount before the remount"
mount -t bcachefs "$img" "$mnt" > "$WORK/remount.out" 2>&1 || { cat "$WORK/remount.out"; fail "mount right after umount"; }
wait_mounted rw
mkdir -p "$WORK/mnt2"
"$BCACHEFS" mount "$img" "$WORK/mnt2" > "$WORK/second.out" 2>&1 && fail "a second mount of a mounted device"
grep -q "already mounted or in use" "$WORK/second.out" || { cat "$WORK/second.out"; fail "second mount: message"; }

# the same for fsck -y and format right after umount: they wait for the
# mount process to finish, they do not refuse a device that is unmounted
dd if=/dev/urandom of="$mnt/big2" bs=1M count=24 status=none || fail "write 24 MiB more"
umount "$mnt" || fail "umount before fsck"
rc=0
"$BCACHEFS" fsck -y "$img" > "$WORK/fsck-after.out" 2>&1 || rc=$?
[ $rc = 0 ] || { cat "$WORK/fsck-after.out"; fail "fsck -y right after umount: exit $rc"; }
grep -q "in use" "$WORK/fsck-after.out" && { cat "$WORK/fsck-after.out"; fail "fsck -y right after umount: in use"; }
mount -t bcachefs "$img" "$mnt" || fail "mount before format"
wait_mounted rw
[ "$(wc -c < "$mnt/big2")" = 25165824 ] || fail "big2 after fsck"
rm "$mnt/big" "$mnt/big2" || fail "rm before format"
dd if=/dev/urandom of="$mnt/big3" bs=1M count=24 status=none || fail "write 24 MiB before format"
umount "$mnt" || fail "umount before format"
"$BCACHEFS" format -q -f "$img" > "$WORK/format-after.out" 2>&1 || { cat "$WORK/format-after.out"; fail "format right after umount"; }
"$BCACHEFS" fsck -f -n "$img" > "$WORK/fsck.out" 2>&1 || { cat "$WORK/fsck.out"; fail "fsck -f -n of the new filesystem"; }
true
