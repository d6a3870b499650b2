#!/usr/bin/env python3
"""Generate a source tree for format --source tests.

    gen_tree.py DIR NSMALL BIG_MIB [--no-acl] [--xfs]

Every file type (regular, empty, sparse with holes, all-hole, directories,
symlinks short/long/dangling, hard links, char and block devices, fifo,
socket), NSMALL small files spread over several directories, a BIG_MIB MiB
file of random data, a compressible file, 255-byte ASCII and UTF-8 names,
xattrs (user.*, trusted.*) and POSIX ACLs (access and default), owners,
odd modes and nanosecond times. Device nodes, owners and trusted.* only as
root. --xfs: device numbers xfs can store (minor below 2^18)."""
import os, socket, stat, struct, sys

root, nsmall, big_mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
acl = "--no-acl" not in sys.argv
big_minor = 1 << 17 if "--xfs" in sys.argv else 1 << 18
rand = os.urandom
os.makedirs(root + "/dir/sub/subsub")
os.makedirs(root + "/empty_dir")


def w(p, data):
    with open(os.path.join(root, p), "wb") as f:
        f.write(data)


w("hello.txt", b"hello, world\n")
w("empty", b"")
w("odd_size", rand(12345))
w("one_block", rand(4096))
w("compressible", b"".join(b"line %d of a very compressible file\n" % i
                           for i in range(30000)))
# big: random, written in 1 MiB pieces
with open(root + "/big", "wb") as f:
    for _ in range(big_mib):
        f.write(rand(1 << 20))
# sparse: data at the start, a hole, data in the middle (unaligned), a hole at the end
with open(root + "/sparse", "wb") as f:
    f.write(rand(70000))
    f.seek(8 << 20)
    f.write(rand(5000))
    f.seek((12 << 20) + 1234)
    f.write(b"x" * 3000)
    f.truncate(16 << 20)
with open(root + "/all_hole", "wb") as f:
    f.truncate(1 << 20)
with open(root + "/hole_first", "wb") as f:
    f.seek(3 << 20)
    f.write(rand(100))
# many small files: up to 1000 per directory
for i in range(nsmall):
    d = "small/d%02d" % (i // 1000)
    if i % 1000 == 0:
        os.makedirs(os.path.join(root, d))
    w("%s/f%05d" % (d, i), (b"file %d\n" % i) * (i % 9 + 1))
# names: 255 bytes ASCII, 255 bytes UTF-8, assorted scripts
w("L" * 255, b"long name\n")
w("dir/" + "é" * 127 + "x", b"unicode 255 bytes\n")
w("dir/日本語のファイル名", b"nihongo\n")
w("dir/emoji-\U0001F600-\u00fc", b"emoji\n")
w("dir/ spaces and\ttab ", b"white space\n")
os.makedirs(os.path.join(root, "Ω" * 100))
w("Ω" * 100 + "/inner", b"inside a unicode directory\n")
# symlinks
os.symlink("hello.txt", root + "/link")
os.symlink("dir/sub/../../" + "x" * 1000, root + "/long_link")
os.symlink("/nonexistent/target", root + "/dir/dangling")
os.symlink("日本語", root + "/dir/unicode_link")
os.symlink("subsub", root + "/dir/sub/dirlink")
# hard links: 3 names for hello.txt, 2 for odd_size, 2 for a symlink... (not
# possible for symlinks portably: skip)
os.link(root + "/hello.txt", root + "/dir/hard1")
os.link(root + "/hello.txt", root + "/dir/sub/hard2")
os.link(root + "/odd_size", root + "/dir/odd_hard")
os.link(root + "/sparse", root + "/dir/sub/subsub/sparse_hard")
# special files
os.mkfifo(root + "/fifo")
os.mkfifo(root + "/dir/fifo2", 0o600)
s = socket.socket(socket.AF_UNIX)
s.bind(root + "/dir/sock")
s.close()
if os.geteuid() == 0:
    os.mknod(root + "/dir/chr", 0o620 | stat.S_IFCHR, os.makedev(4, 65))
    os.mknod(root + "/dir/chr_big", 0o600 | stat.S_IFCHR, os.makedev(511, big_minor))
    os.mknod(root + "/dir/blk", 0o660 | stat.S_IFBLK, os.makedev(259, 1 << 12 | 3))
    os.link(root + "/dir/chr", root + "/chr_hard")
    os.chown(root + "/dir/sub", 1234, 5678)
    os.lchown(root + "/link", 42, 43)
    os.chown(root + "/odd_size", 65534, 100000)
os.chmod(root + "/dir/sub/subsub", 0o1750)
os.chmod(root + "/odd_size", 0o4711)
os.chmod(root + "/one_block", 0o2640)
os.chmod(root + "/empty_dir", 0o700)
# xattrs
os.setxattr(root + "/hello.txt", "user.greeting", b"hi there")
os.setxattr(root + "/hello.txt", "user.empty", b"")
os.setxattr(root + "/dir", "user.big", rand(1500))

os.setxattr(root + "/small/d00/f00001", "user.binary", bytes(range(256)))
for i in range(30):
    os.setxattr(root + "/small/d00/f00002", "user.x%d" % i, b"v%d" % i)
if os.geteuid() == 0:
    os.setxattr(root + "/odd_size", "trusted.t", b"trusted value")
    os.setxattr(root, "trusted.on_root", b"root dir")
    os.setxattr(root + "/fifo", "trusted.on_fifo", b"fifo xattr")


def acl_xattr(entries):
    """Linux system.posix_acl_* value: version 2, (tag, perm, id) entries."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, i) for t, p, i in entries)


if acl:
    N = 0xffffffff
    full = acl_xattr([(1, 6, N), (2, 4, 1000), (2, 6, 1001), (4, 4, N), (8, 5, 2000),
                      (0x10, 6, N), (0x20, 0, N)])
    minimal_mask = acl_xattr([(1, 7, N), (4, 5, N), (0x10, 5, N), (0x20, 5, N)])
    os.setxattr(root + "/dir/sub", "system.posix_acl_access", full)
    os.setxattr(root + "/dir/sub", "system.posix_acl_default", full)
    os.setxattr(root + "/empty_dir", "system.posix_acl_default", minimal_mask)
    os.setxattr(root + "/hello.txt", "system.posix_acl_access", full)
# times (after everything else in the directories was created)
os.utime(root + "/hello.txt", ns=(1500000000123456789, 1500000000987654321))
os.utime(root + "/link", ns=(1, 1234567890123456789), follow_symlinks=False)
os.utime(root + "/empty", ns=(0, 0))
os.utime(root + "/dir/sub/subsub", ns=(2000000000000000001, 2000000000000000001))
