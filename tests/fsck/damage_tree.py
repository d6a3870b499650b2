#!/usr/bin/env python3
"""The source trees of the images that build/tests/damage damages.

    damage_tree.py PROFILE DIR

PROFILE is one of:
  converge   test_fsck_converge.sh: 40 directories, 300 files (20% empty,
             40% up to 600 bytes, 30% up to 5000, 10% up to 70000), xattrs
             on 15% of them and on 9 directories, 40 symlinks (half to a
             file of the tree, half dangling with targets up to 100 bytes
             long), 30 hard links. PRNG seed 12345.
  interrupt  test_fsck_interrupt.sh: 12 directories, 120 files (empty, up
             to 600 or up to 9000 bytes), xattrs on 20% of them, 10
             symlinks to files of the tree, 10 hard links. PRNG seed 4242.
  scan       test_fsck_scan.sh: 100 directories dir000..dir099 of 101 files
             each, fNNN-x.. (NNN 000-100, then NNN % 7 x's): 10100 files of
             0-6000 bytes (lines of text naming the file: the image
             compresses well), an xattr user.n on every file whose NNN % 10
             is not 0, 20 symlinks, 10 hard links. PRNG seed 1414.

The trees only depend on the profile (a fixed-seed random.Random; file data
is a random 256-byte pattern repeated): every entry, DIR included, gets the
times 1500000000 (2017-07-14), so a tree made twice is the same. The images
themselves are made by make-damage-images.sh, which also says how to
regenerate the committed fixtures."""
import os
import random
import sys

TIME = 1500000000


def write_file(r, path, n):
    with open(path, "wb") as fh:
        fh.write(bytes(r.getrandbits(8) for _ in range(min(n, 256))) * (n // 256 + 1))
        fh.truncate(n)


def set_xattr(path, name, value):
    try:
        os.setxattr(path, name, value)
    except OSError:
        pass


def converge(root):
    r = random.Random(12345)
    dirs = [root]
    for i in range(40):
        d = os.path.join(r.choice(dirs), "d%02d" % i)
        os.mkdir(d)
        dirs.append(d)
    files = []
    for i in range(300):
        f = os.path.join(r.choice(dirs), "f%03d" % i)
        k = r.random()
        n = 0 if k < 0.2 else r.randint(1, 600) if k < 0.6 else \
            r.randint(600, 5000) if k < 0.9 else r.randint(5000, 70000)
        write_file(r, f, n)
        files.append(f)
        if r.random() < 0.15:
            set_xattr(f, "user.t%d" % i, b"v" * r.randint(1, 60))
    for i in range(40):
        t = os.path.relpath(r.choice(files), root) if i % 2 else "/x/" + "y" * r.randint(1, 100)
        os.symlink(t, os.path.join(r.choice(dirs), "l%02d" % i))
    for i in range(30):
        os.link(r.choice(files), os.path.join(r.choice(dirs), "h%02d" % i))
    for d in dirs[1:10]:
        set_xattr(d, "user.dir", b"x" * 20)


def interrupt(root):
    r = random.Random(4242)
    dirs = [root]
    for i in range(12):
        d = os.path.join(r.choice(dirs), "d%02d" % i)
        os.mkdir(d)
        dirs.append(d)
    files = []
    for i in range(120):
        f = os.path.join(r.choice(dirs), "f%03d" % i)
        n = r.choice([0, r.randint(1, 600), r.randint(600, 9000)])
        write_file(r, f, n)
        files.append(f)
        if r.random() < 0.2:
            set_xattr(f, "user.t%d" % i, b"v" * r.randint(1, 60))
    for i in range(10):
        os.symlink(os.path.relpath(r.choice(files), root), os.path.join(r.choice(dirs), "l%02d" % i))
    for i in range(10):
        os.link(r.choice(files), os.path.join(r.choice(dirs), "h%02d" % i))


def scan(root):
    r = random.Random(1414)
    files = []
    n = 0
    for d in range(100):
        dp = os.path.join(root, "dir%03d" % d)
        os.mkdir(dp)
        for f in range(101):
            p = os.path.join(dp, "f%03d-%s" % (f, "x" * (f % 7)))
            size = r.choice([0, 40, 300, 700, 1500, 2600, 4000, 6000])
            line = ("%s %d\n" % (os.path.relpath(p, root), n)).encode()
            with open(p, "wb") as fh:
                fh.write((line * (size // len(line) + 1))[:size])
            if f % 10:
                set_xattr(p, "user.n", str(n).encode())
            if f >= 50:		# never one of the files make-damage-images.sh deletes
                files.append(p)
            n += 1
    for i in range(20):
        os.symlink(os.path.relpath(r.choice(files), root), os.path.join(root, "dir%03d" % (i * 5), "l%02d" % i))
    for i in range(10):
        os.link(r.choice(files), os.path.join(root, "dir%03d" % (i * 10 + 1), "h%02d" % i))


PROFILES = {"converge": converge, "interrupt": interrupt, "scan": scan}

if len(sys.argv) != 3 or sys.argv[1] not in PROFILES:
    sys.exit("usage: damage_tree.py {%s} DIR" % "|".join(PROFILES))
root = sys.argv[2]
os.makedirs(root, exist_ok=True)
PROFILES[sys.argv[1]](root)
for dp, dn, fn in os.walk(root, topdown=False):
    for n in fn + dn:
        os.utime(os.path.join(dp, n), (TIME, TIME), follow_symlinks=False)
os.utime(root, (TIME, TIME))
