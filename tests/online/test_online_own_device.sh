#!/bin/sh
# device add of what the filesystem itself is made of: refused before
# anything is written, even with -f, and the
# images stay byte for byte what they were. (A member of another filesystem
# is refused without -f, naming it; -f formats it.)
#   - unmounted: `device add -f u.img u.img` (its own member; formatting it
#     wiped the filesystem), and on a 2-device filesystem the second member;
#   - mounted: `device add MNT MNT/inside.img` (a file inside the same
#     mount: the mount read it through itself and hung for ever); then the
#     same requests sent straight to the control socket (DISK_ADD with the
#     file's descriptor, with its path only, DISK_ONLINE): EINVAL with the
#     reason, and the mount still serves and unmounts cleanly; a loop
#     device over that file (as root) the same.
# Every command runs under a timeout (a hang is a failure, not a stuck run).
. "$TESTDIR/../lib.sh"
. "$TESTDIR/lib_online.sh"
online_setup
T="timeout 60"
loop=""
# a loop device left over a file of the mount would keep it busy: detached first
trap '[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null; fuse_mount_cleanup' EXIT

# refused NAME CMD...: exit 1 with "refusing to add it (even with --force)"
refused() {
	_n=$1
	shift
	$T "$@" > "$WORK/$_n.out" 2>&1
	_rc=$?
	[ $_rc = 124 ] && fail "$_n: '$*' hung"
	[ $_rc = 1 ] || { cat "$WORK/$_n.out"; fail "$_n: '$*' exited $_rc, not 1"; }
	grep -q "^bcachefs device add: .*; refusing to add it (even with --force); nothing was written$" \
		"$WORK/$_n.out" || { cat "$WORK/$_n.out"; fail "$_n: not the refusal expected"; }
	[ "$(wc -l < "$WORK/$_n.out")" = 1 ] || { cat "$WORK/$_n.out"; fail "$_n: more than one line"; }
}

# one device, unmounted
mkimg u.img 64M
run_ok fmt-u "$BCACHEFS" format -q "$WORK/u.img"
sha256sum "$WORK/u.img" > "$WORK/u.sum"
refused own-f "$BCACHEFS" device add -f "$WORK/u.img" "$WORK/u.img"
grep -q "is already member 0 of this filesystem" "$WORK/own-f.out" || fail "own-f: member not named"
refused own "$BCACHEFS" device add "$WORK/u.img" "$WORK/u.img"
sha256sum -c --quiet "$WORK/u.sum" || fail "u.img changed by a refused device add"
fsck_clean u "$WORK/u.img"

# two devices, unmounted: the second member, and the first
mkimg v.img 64M
mkimg w.img 64M
run_ok fmt-vw "$BCACHEFS" format -q "$WORK/v.img" "$WORK/w.img"
sha256sum "$WORK/v.img" "$WORK/w.img" > "$WORK/vw.sum"
refused second "$BCACHEFS" device add -f "$WORK/v.img:$WORK/w.img" "$WORK/w.img"
grep -q "is already member 1 of this filesystem" "$WORK/second.out" || fail "second: member not named"
refused first "$BCACHEFS" device add -f "$WORK/v.img:$WORK/w.img" "$WORK/v.img"
sha256sum -c --quiet "$WORK/vw.sum" || fail "v.img/w.img changed by a refused device add"
fsck_clean vw "$WORK/v.img" "$WORK/w.img"

# another filesystem's member: refused without -f (saying whose), -f formats it
mkimg x.img 128M
run_ok fmt-x "$BCACHEFS" format -q "$WORK/x.img"
xuuid=$("$BCACHEFS" show-super "$WORK/x.img" | awk '/^External UUID:/ { print $3 }')
sha256sum "$WORK/x.img" > "$WORK/x.sum"
run_fails foreign 1 "contains member 0 of the bcachefs filesystem $xuuid; refusing to add it (use --force" \
	"$BCACHEFS" device add "$WORK/u.img" "$WORK/x.img" < /dev/null
sha256sum -c --quiet "$WORK/x.sum" "$WORK/u.sum" || fail "a refused device add of a foreign member changed something"
run_ok foreign-f "$BCACHEFS" device add -f "$WORK/u.img" "$WORK/x.img"
fsck_clean foreign-f "$WORK/u.img" "$WORK/x.img"

# mounted: a file inside the mount
mkimg m.img 256M
run_ok fmt-m "$BCACHEFS" format -q "$WORK/m.img"
uuid=$("$BCACHEFS" show-super "$WORK/m.img" | awk '/^External UUID:/ { print $3 }')
mount_fg m "$WORK/m.img"
truncate -s 64M "$mnt/inside.img" || fail "truncate inside the mount"
run_ok fmt-inside "$BCACHEFS" format -q "$mnt/inside.img"
sha256sum "$mnt/inside.img" > "$WORK/inside.sum"
refused inside "$BCACHEFS" device add "$mnt" "$mnt/inside.img"
grep -q "is a file inside this filesystem's own mount" "$WORK/inside.out" || fail "inside: reason not given"
refused inside-f "$BCACHEFS" device add -f "$mnt" "$mnt/inside.img"
sha256sum -c --quiet "$WORK/inside.sum" || fail "inside.img changed by a refused device add"

# the mount itself refuses, whoever asks (descriptor, path only, online)
$T python3 - "$TESTDIR" "$uuid" "$mnt/inside.img" <<'PY' || fail "control socket refusals"
import errno, os, sys
sys.path.insert(0, sys.argv[1])
from ctl_client import *
uuid, inside = sys.argv[2:4]
ctl = Ctl(uuid)
for what, nr, with_fd in (("ADD fd", DISK_ADD, True), ("ADD path", DISK_ADD, False),
                          ("ONLINE fd", DISK_ONLINE, True)):
    fd = os.open(inside, os.O_RDWR) if with_fd else None
    ret, _, msg, _ = ctl.call(nr, disk(0, 0), path=inside, fd=fd)
    if fd is not None:
        os.close(fd)
    if ret != -errno.EINVAL or "inside this filesystem's own mount" not in msg:
        print("%s: %d (%s)" % (what, ret, msg))
        sys.exit(1)
PY
sha256sum -c --quiet "$WORK/inside.sum" || fail "inside.img changed by a refused request"

# a loop device over the file inside the mount (root only): the same, both ways
if [ "$(id -u)" = 0 ] && loop=$(losetup -f --show "$mnt/inside.img" 2>/dev/null); then
	refused loop "$BCACHEFS" device add -f "$mnt" "$loop"
	grep -q "or built on one" "$WORK/loop.out" || fail "loop: reason not given"
	$T python3 - "$TESTDIR" "$uuid" "$loop" <<'PY' || fail "control socket: loop device not refused"
import errno, os, sys
sys.path.insert(0, sys.argv[1])
from ctl_client import *
ctl = Ctl(sys.argv[2])
fd = os.open(sys.argv[3], os.O_RDWR)
ret, _, msg, _ = ctl.call(DISK_ADD, disk(0, 0), path=sys.argv[3], fd=fd)
os.close(fd)
if ret != -errno.EINVAL or "inside this filesystem's own mount" not in msg:
    print("loop: %d (%s)" % (ret, msg))
    sys.exit(1)
PY
	losetup -d "$loop"
	loop=""
	sha256sum -c --quiet "$WORK/inside.sum" || fail "inside.img changed through its loop device"
fi
$T ls "$mnt" > /dev/null || fail "the mount no longer answers"
run_ok usage "$BCACHEFS" fs usage "$mnt"
grep -c "^.*(device [0-9]*):" "$WORK/usage.out" | grep -qx 1 || { cat "$WORK/usage.out"; fail "a device was added"; }
rm -f "$mnt/inside.img"
unmount_fg m
fsck_clean m "$WORK/m.img"
exit 0
