#!/bin/sh
# Issue 23: a filesystem mounted by root with default options is usable by
# other users, with the kernel's permission checks: the same permission
# matrix (perm_matrix.py, operations as uid 65534) gives the same results
# on the mount as on tmpfs. -o noallow_other keeps FUSE's default (only
# root), and the man page says so.
. "$TESTDIR/../lib.sh"
fuse_mount_setup
[ "$(id -u)" = 0 ] || { echo "needs root"; exit 77; }
chmod 755 "$WORK"
img=$WORK/p.img
truncate -s 128M "$img"
"$BCACHEFS" format -q "$img" > "$WORK/format.log" 2>&1 || { cat "$WORK/format.log"; fail "format"; }

tmp=$WORK/tmpfs
mkdir -p "$tmp"
mount -t tmpfs -o mode=755 none "$tmp" || { echo "cannot mount a tmpfs"; exit 77; }
python3 "$TESTDIR/perm_matrix.py" "$tmp" > "$WORK/tmpfs.txt" 2>&1
umount "$tmp"
[ "$(wc -l < "$WORK/tmpfs.txt")" -ge 30 ] || { cat "$WORK/tmpfs.txt"; fail "the matrix did not run on tmpfs"; }
grep -q " ok$" "$WORK/tmpfs.txt" && grep -q " EACCES$" "$WORK/tmpfs.txt" && grep -q " EPERM$" "$WORK/tmpfs.txt" ||
	{ cat "$WORK/tmpfs.txt"; fail "the matrix does not mix outcomes"; }

mount_fg m "$img"
chmod 755 "$mnt"
python3 "$TESTDIR/perm_matrix.py" "$mnt" > "$WORK/ours.txt" 2>&1
diff "$WORK/tmpfs.txt" "$WORK/ours.txt" > "$WORK/diff.txt" || { cat "$WORK/diff.txt"; fail "permissions differ from tmpfs (< tmpfs, > the mount)"; }
grep -q "allow_other" /proc/mounts || fail "no allow_other in /proc/mounts"
unmount_fg m

# noallow_other: only the user who mounted it
mount_fg n "$img" -o noallow_other
setpriv --reuid=65534 --regid=65534 --clear-groups stat "$mnt/pm" > "$WORK/n.out" 2>&1 &&
	{ cat "$WORK/n.out"; fail "noallow_other: another user reached the mount"; }
grep -q "Permission denied" "$WORK/n.out" || { cat "$WORK/n.out"; fail "noallow_other: not EACCES"; }
unmount_fg n
grep -q "allow_other" "$TESTDIR/../../man/bcachefs.8" || fail "the man page does not say"
"$BCACHEFS" fsck -f -n "$img" > "$WORK/fsck.log" 2>&1 || { cat "$WORK/fsck.log"; fail "fsck -f -n"; }
