#!/usr/bin/env python3
"""Check the inodes btree of a format --source image against the source:

    check_inodes.py SRC INODES.json DIRENTS.json EXTENTS.json

(the output of `bcachefs list --json -b inodes|dirents|extents`). Walking
the dirents from the root 4096: every source path has a dirent of the
right type; paths that are hard links of one source inode share one inode
number, and every other source inode has its own; each inode has the
source's mode, owner, size (regular files, symlinks), link count (stored
minus 1, directories minus 2) and bi_sectors equal to its extents; the
btree holds exactly one inode per source inode plus lost+found."""
import json, os, stat, sys
from collections import defaultdict

src = sys.argv[1]
inodes = {k["inode"]: k["value"] for k in json.load(open(sys.argv[2]))["keys"] if k["type"] == 128}
dirents = defaultdict(dict)
for k in json.load(open(sys.argv[3]))["keys"]:
    if k["type"] == 128:
        v = k["value"]
        # list --json writes each byte of a name above 0x7f as \u00XX
        v["name"] = v["name"].encode("latin-1").decode("utf-8", "surrogateescape")
        if v["name"] in dirents[k["inode"]]:
            print("duplicate dirent", k["inode"], v["name"])
            sys.exit(1)
        dirents[k["inode"]][v["name"]] = (v["d_inum"], v["d_type"])
sectors = defaultdict(int)
for k in json.load(open(sys.argv[4]))["keys"]:
    if k["type"] == 128:
        sectors[k["inode"]] += k["size"]

bad = []
seen = {}       # (st_dev, st_ino) -> inum
used = {}       # inum -> source path


def check(path, inum, st):
    key = (st.st_dev, st.st_ino)
    if key in seen:
        if seen[key] != inum:
            bad.append("%s: hard link to inode %d, not %d" % (path, seen[key], inum))
        return
    if inum in used:
        bad.append("%s: inode %d is also %s" % (path, inum, used[inum]))
        return
    seen[key], used[inum] = inum, path
    u = inodes.get(inum)
    if u is None:
        bad.append("%s: inode %d missing" % (path, inum))
        return
    want = {"bi_mode": st.st_mode, "bi_uid": st.st_uid, "bi_gid": st.st_gid}
    if stat.S_ISDIR(st.st_mode):
        nsub = sum(1 for n in os.listdir(path) if os.path.isdir(os.path.join(path, n))
                   and not os.path.islink(os.path.join(path, n)))
        if inum == 4096 and not os.path.exists(os.path.join(path, "lost+found")):
            nsub += 1
        want["bi_nlink"] = nsub      # 2 + subdirectories, stored minus 2
    else:
        want["bi_nlink"] = st.st_nlink - 1
    if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
        want["bi_size"] = st.st_size
        want["bi_sectors"] = sectors[inum]
        if stat.S_ISREG(st.st_mode) and sectors[inum] * 512 > st.st_blocks * 512 + 4096 * 8:
            bad.append("%s: %d sectors of extents, %d allocated in the source (holes lost?)"
                       % (path, sectors[inum], st.st_blocks))
    for f, v in want.items():
        if u.get(f) != v:
            bad.append("%s (inode %d): %s %r, want %r" % (path, inum, f, u.get(f), v))


def walk(path, inum):
    st = os.lstat(path)
    check(path, inum, st)
    if not stat.S_ISDIR(st.st_mode):
        return
    names = set(os.listdir(path))
    ents = dirents.get(inum, {})
    for n in sorted(names | set(ents)):
        if inum == 4096 and n == "lost+found" and n not in names:
            lf = ents[n][0]
            used[lf] = "lost+found"
            if lf not in inodes or not stat.S_ISDIR(inodes[lf]["bi_mode"]):
                bad.append("lost+found: not a directory inode")
            continue
        if n not in ents:
            bad.append("%s/%s: no dirent" % (path, n))
            continue
        if n not in names:
            bad.append("%s/%s: dirent without a source file" % (path, n))
            continue
        child, dt = ents[n]
        cst = os.lstat(os.path.join(path, n))
        if dt != stat.S_IFMT(cst.st_mode) >> 12:
            bad.append("%s/%s: d_type %d" % (path, n, dt))
        walk(os.path.join(path, n), child)


walk(src, 4096)
extra = set(inodes) - set(used)
if extra:
    bad.append("%d inodes not reachable from the source tree: %s" % (len(extra), sorted(extra)[:10]))
for b in bad[:20]:
    print(b)
print("%d inodes for %d source inodes (+ lost+found), %d problems"
      % (len(inodes), len(seen), len(bad)))
sys.exit(1 if bad else 0)
