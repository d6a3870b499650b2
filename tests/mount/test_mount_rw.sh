#!/bin/sh
# The read-write mount (the default): a scripted workload of every kind of
# change (create, write and overwrite at odd offsets, truncate down and up,
# rename over files and directories and across them, hard links, symlinks,
# device nodes and fifos, xattrs, fallocate and punch hole, rmdir, unlink)
# made through the mount and in a shadow directory; the trees must agree
# through the mount, after a remount, and in `extract` after unmount;
# `fsck -f -n` exits 0 after each clean unmount. Then a crash: files
# fsync'd before a SIGKILL of the mount are byte-exact after the next
# mount replays the journal, and fsck is clean. Inode numbers freed are
# taken by the next creates, with the next generation. A replica that fails its
# checksum: the read is served from the other and logged. Then ENOSPC on
# a small filesystem: clean failure, space back after deleting.
. "$TESTDIR/../lib.sh"
fuse_mount_setup
diff=$TESTDIR/../format/tree_diff.py
img=$WORK/rw.img
shadow=$WORK/shadow
mkdir -p "$shadow"
truncate -s 256M "$img"
"$BCACHEFS" format -q "$img" > "$WORK/format.log" 2>&1 || { cat "$WORK/format.log"; fail "format"; }

check_fsck() {	# NAME
	"$BCACHEFS" fsck -f -n "$img" > "$WORK/$1.fsck" 2>&1
	rc=$?
	cat "$WORK/$1.fsck"
	[ $rc = 0 ] || fail "$1: fsck -f -n exit $rc"
}

cmp_trees() {	# NAME A B [options]
	_n=$1 _a=$2 _b=$3
	shift 3
	python3 "$diff" "$_a" "$_b" "$@" > "$WORK/$_n.diff" 2>&1 ||
		{ cat "$WORK/$_n.diff"; fail "$_n: trees differ"; }
}

# ---- the workload, applied to the mount and to the shadow ----
workload() {	# ROOT
	python3 - "$1" <<'PY' || exit 1
import os, sys, stat
root = sys.argv[1]
j = lambda *a: os.path.join(root, *a)
def write(p, off, data, flags=os.O_WRONLY | os.O_CREAT):
    fd = os.open(j(p), flags, 0o644)
    os.pwrite(fd, data, off)
    os.close(fd)
os.makedirs(j("a/b/c"))
os.makedirs(j("x"))
pat = bytes((i * 7 + 3) % 251 for i in range(300000))
write("a/big", 0, pat)
write("a/big", 4095, b"Z" * 9000)            # across block edges
write("a/big", 1000000, b"tail")             # a hole in between
write("a/small", 0, b"hello world\n")
write("a/small", 3, b"XY")                   # inside one block
write("a/b/trunc", 0, pat[:100000])
os.truncate(j("a/b/trunc"), 5000)            # partial block zeroed
os.truncate(j("a/b/trunc"), 70000)           # then a hole
write("x/app", 0, b"one\n")
write("x/app", 0, b"two\n", os.O_WRONLY | os.O_APPEND)
os.link(j("a/small"), j("x/small-link"))
os.symlink("../a/big", j("x/sym"))
os.symlink("t" * 3000, j("x/longsym"))
os.mkfifo(j("x/fifo"))
os.mknod(j("x/null"), 0o600 | stat.S_IFCHR, os.makedev(1, 3))
os.setxattr(j("a/small"), "user.one", b"1")
os.setxattr(j("a/small"), "user.two", b"v" * 1500)
os.setxattr(j("a/b"), "trusted.t", b"dir xattr")
os.setxattr(j("a/small"), "user.one", b"replaced")
os.removexattr(j("a/small"), "user.two")
os.chmod(j("a/big"), 0o600)
os.chown(j("a/big"), 1234, 5678)
os.utime(j("a/small"), ns=(1000000000, 2000000000))
os.rename(j("a/b/c"), j("x/c"))              # a directory across parents
write("x/c/inner", 0, b"inner")
os.rename(j("x/app"), j("a/small2"))
write("a/victim", 0, b"to be replaced")
os.rename(j("a/small2"), j("a/victim"))       # replaces a file
os.makedirs(j("d1"))
os.makedirs(j("d2"))
os.rename(j("d1"), j("d2"))                   # replaces an empty directory
for i in range(300):
    write("x/many-%03d" % i, 0, b"%d" % i)
for i in range(0, 300, 3):
    os.unlink(j("x/many-%03d" % i))
write("a/holes", 0, pat[:200000])
fd = os.open(j("a/holes"), os.O_WRONLY)
os.posix_fallocate(fd, 300000, 50000)
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
assert libc.fallocate(fd, 3, ctypes.c_long(10000), ctypes.c_long(60000)) == 0  # punch
os.close(fd)
os.makedirs(j("gone/deeper"))
os.rmdir(j("gone/deeper"))
os.rmdir(j("gone"))
PY
}

mount_fg rw "$img"
grep -q " $mnt fuse.bcachefs rw," /proc/mounts || fail "not mounted read-write"
workload "$mnt" || fail "workload failed on the mount"
workload "$shadow" || fail "workload failed on the shadow"
cmp_trees live "$shadow" "$mnt" --no-times
[ "$(stat -c %Y "$mnt/a/small")" = 2 ] || fail "utimensat: mtime of a/small is $(stat -c %Y "$mnt/a/small")"
df -P "$mnt" > "$WORK/df" || fail "statfs"
unmount_fg rw
check_fsck clean1
"$BCACHEFS" show-super "$img" | grep -q "^Clean:.*1" || fail "not clean after unmount"

mount_fg rw "$img"
cmp_trees remount "$shadow" "$mnt" --no-times
unmount_fg rw
"$BCACHEFS" extract "$img" / "$WORK/out" > "$WORK/extract.log" 2>&1 || { cat "$WORK/extract.log"; fail "extract"; }
rm -rf "$WORK/out/lost+found"
cmp_trees extract "$shadow" "$WORK/out" --no-times

# ---- crash: what was fsync'd is there after the replay ----
mount_fg crash "$img"
head -c 700000 /dev/urandom > "$WORK/synced"
cp "$WORK/synced" "$mnt/synced"
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' "$mnt/synced"
echo "not synced" > "$mnt/later"
kill -9 $pid
wait $pid 2> /dev/null
fusermount3 -u -z "$mnt"
check_fsck crash
mount_fg crash "$img"
cmp "$WORK/synced" "$mnt/synced" || fail "crash: fsync'd file differs after the replay"
cmp_trees crash-old "$shadow/a" "$mnt/a" --no-times
unmount_fg crash
check_fsck crash2

# ---- inode numbers freed are taken again, with the next generation ----
mount_fg reuse "$img"
for f in r1 r2 r3 r4; do echo "$f" > "$mnt/$f"; done
n2=$(stat -c %i "$mnt/r2") n3=$(stat -c %i "$mnt/r3")
rm "$mnt/r3" "$mnt/r2"
echo new1 > "$mnt/n1"
echo new2 > "$mnt/n2"
[ "$(stat -c %i "$mnt/n1")" = "$n2" ] && [ "$(stat -c %i "$mnt/n2")" = "$n3" ] ||
	fail "reuse: new inodes $(stat -c %i "$mnt/n1") $(stat -c %i "$mnt/n2"), freed $n2 $n3"
[ "$(cat "$mnt/n1")" = new1 ] || fail "reuse: n1 reads '$(cat "$mnt/n1")'"
unmount_fg reuse
# (the first of the four may itself have taken a generation key's slot)
"$BCACHEFS" list -b inodes -i "$n2" "$img" | grep -q "bi_generation: [1-9]" ||
	fail "reuse: inode $n2 has generation 0: $("$BCACHEFS" list -b inodes -i "$n2" "$img")"
check_fsck reuse

# ---- two replicas: a copy that fails its checksum, the other serves ----
r0=$WORK/r0.img r1=$WORK/r1.img
truncate -s 64M "$r0" "$r1"
"$BCACHEFS" format -q --replicas=2 "$r0" "$r1" > /dev/null 2>&1 || fail "format replicas"
mount_fg rep "$r0:$r1"
head -c 200000 /dev/urandom > "$WORK/repdata"
cp "$WORK/repdata" "$mnt/f"
unmount_fg rep > /dev/null
inum=$("$BCACHEFS" list -b dirents "$r0" "$r1" | sed -n 's/.*: f -> \([0-9]*\).*/\1/p')
sector=$("$BCACHEFS" list -b extents "$r0" "$r1" | grep " $inum:" | head -n 1 | sed -n 's/.*ptr: 0:\([0-9]*\) .*/\1/p')
[ -n "$sector" ] || fail "replicas: no pointer to device 0"
printf 'garbage!' | dd of="$r0" bs=1 seek=$((sector * 512 + 100)) conv=notrunc status=none
mount_fg rep "$r0:$r1"
cmp "$WORK/repdata" "$mnt/f" || fail "replicas: the good copy did not serve the read"
unmount_fg rep > "$WORK/rep.out"
grep -q "served from another copy" "$WORK/rep.out" || { cat "$WORK/rep.out"; fail "replicas: the bad copy was not logged"; }

# ---- ENOSPC on a small filesystem, then space back ----
small=$WORK/small.img
truncate -s 24M "$small"
"$BCACHEFS" format -q "$small" > /dev/null 2>&1 || fail "format small"
mount_fg small "$small"
i=0
while dd if=/dev/zero of="$mnt/fill$i" bs=1M count=4 status=none 2> "$WORK/dd.err"; do
	i=$((i + 1))
	[ $i -lt 20 ] || fail "ENOSPC: 80 MiB fit in 24 MiB"
done
grep -q "No space left" "$WORK/dd.err" || { cat "$WORK/dd.err"; fail "ENOSPC: not reported as such"; }
[ $i -ge 2 ] || fail "ENOSPC: only $i files of 4 MiB fit in 24 MiB"
mkdir "$mnt/still-works" || fail "ENOSPC: a mkdir failed (the metadata reserve)"
rm -f "$mnt"/fill*
sync
sleep 1.5
dd if=/dev/zero of="$mnt/again" bs=1M count=4 status=none || fail "ENOSPC: no space back after deleting"
unmount_fg small
"$BCACHEFS" fsck -f -n "$small" > "$WORK/small.fsck" 2>&1 || { cat "$WORK/small.fsck"; fail "ENOSPC: fsck -f -n"; }
true
