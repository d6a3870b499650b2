#!/usr/bin/env python3
"""Compare the keys of two migrations of the same source (golden d1: the
2018 migrate, and ours), by path rather than by inode number.

    d1_keys.py THEIRS_DIR OURS_DIR

Each directory holds the output of `list -b B` for B in inodes, dirents,
xattrs, extents (list-B.txt). Equal must be:
  - the set of paths, and for each path its dirent, inode fields (mode,
    owner, size, sectors, link count, device number, options) and xattrs;
  - the extents of every file whose data is linked in place: offset,
    length and device sector, key for key;
  - for data that is copied (symlink targets, data in the first MiB):
    offset and length (where it was written is allocation order);
  - old_migrated_filesystem, on each side: it holds exactly the sectors of
    the device that neither linked data nor the reserved file (the
    filefrag -v output bcachefs-file.filefrag.txt in each directory) use,
    from sector 0 (2018) or from the first bucket (ours: the member's
    first_bucket leaves that bucket out of the filesystem, so the
    superblock at sector 8 never meets data after migrate-superblock).
    Where the reserved file lies is up to ext4 (its block allocator takes
    the process id into account), so the two sets differ by that.
Not compared, because they cannot be equal:
  - inode numbers (the 2018 tool numbered in readdir order, ours in name
    order) and dirent/xattr offsets (hashes of a random per-inode seed);
  - times (the stored values count from each filesystem's time base, and
    the creation times are those of each run);
  - checksums of copied data, and the alloc btree (the buckets the
    allocator took for nodes, journal and copied data, and their gens).
Prints the differences; exit 1 if there is one."""
import re
import sys

TIME_FIELDS = {"bi_atime", "bi_ctime", "bi_mtime", "bi_otime"}


def keys(path):
    out = []
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.startswith("u64s "):
                continue
            head, _, val = line.partition(" ver ")
            val = val.split(": ", 1)[1] if ": " in val else ""
            w = head.split()
            inode, offset = w[4].split(":")
            out.append((int(inode), int(offset), int(w[8]), val))
    return out


def load(d):
    fs = {"inodes": {}, "dirents": [], "xattrs": {}, "extents": {}}
    for inum, _, _, val in keys(d + "/list-inodes.txt"):
        w = val.split()
        fs["inodes"][inum] = {w[i].rstrip(":"): w[i + 1] for i in range(0, len(w) - 1, 2)}
    for inum, _, _, val in keys(d + "/list-dirents.txt"):
        name, _, target = val.rpartition(" -> ")
        fs["dirents"].append((inum, name, int(target)))
    for inum, _, _, val in keys(d + "/list-xattrs.txt"):
        fs["xattrs"].setdefault(inum, []).append(val)
    for inum, end, size, val in keys(d + "/list-extents.txt"):
        fs["extents"].setdefault(inum, []).append((end - size, size, val))
    # paths: the first name found for each inode, walking from the root
    fs["path"] = {4096: "/"}
    children = {}
    for parent, name, target in sorted(fs["dirents"], key=lambda x: x[1]):
        children.setdefault(parent, []).append((name, target))
    todo = [4096]
    while todo:
        p = todo.pop()
        for name, t in children.get(p, []):
            if t in fs["path"]:
                continue
            fs["path"][t] = fs["path"][p].rstrip("/") + "/" + name
            todo.append(t)
    fs["byp"] = {v: k for k, v in fs["path"].items()}
    return fs


def ptr(val):
    """(device sector, copied?) of an extent value"""
    sector = int(val.split("ptr: ")[1].split()[0].split(":")[1])
    return sector, "crc:" in val


def merge(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [tuple(x) for x in out]


def subtract(iv, minus):
    """intervals iv minus intervals minus (both merged)"""
    out, j = [], 0
    for s, e in iv:
        while j < len(minus) and minus[j][1] <= s:
            j += 1
        k = j
        while s < e:
            if k < len(minus) and minus[k][0] < e:
                if minus[k][0] > s:
                    out.append((s, minus[k][0]))
                s = max(s, minus[k][1])
                k += 1
            else:
                out.append((s, e))
                break
    return out


def reserved(d):
    """device sector intervals of the reserved file (filefrag -v)"""
    iv, bs = [], 4096
    with open(d + "/bcachefs-file.filefrag.txt") as f:
        for line in f:
            m = re.search(r"blocks of (\d+) bytes", line)
            if m:
                bs = int(m.group(1))
            m = re.match(r"\s*\d+:\s+\d+\.\.\s*\d+:\s+(\d+)\.\.\s*(\d+):", line)
            if m:
                iv.append((int(m.group(1)) * bs // 512, (int(m.group(2)) + 1) * bs // 512))
    return merge(iv)


def old_fs_check(fs, d, who, diffs):
    """old_migrated_filesystem = [first, device end) - linked data - reserved file"""
    old = fs["byp"].get("/old_migrated_filesystem")
    ext = fs["extents"].get(old, [])
    if not ext:
        diffs.append("%s: old_migrated_filesystem has no extent" % who)
        return None
    have = merge((ptr(v)[0], ptr(v)[0] + z) for _, z, v in ext)
    linked = merge((ptr(v)[0], ptr(v)[0] + z) for i, l in fs["extents"].items() if i != old
                   for _, z, v in l if not ptr(v)[1])
    first, end = have[0][0], int(fs["inodes"][old]["bi_size"]) // 512
    want = subtract(subtract([(first, end)], linked), reserved(d))
    if have != want:
        diffs.append("%s: old_migrated_filesystem holds %d sector ranges, the device less "
                     "linked data and the reserved file is %d" % (who, len(have), len(want)))
    if linked and subtract(linked, have) != linked:
        diffs.append("%s: old_migrated_filesystem overlaps linked data" % who)
    return first


def main():
    a, b = load(sys.argv[1]), load(sys.argv[2])
    diffs = []
    pa, pb = set(a["byp"]), set(b["byp"])
    for p in sorted(pa - pb):
        diffs.append("only in the 2018 migration: %s" % p)
    for p in sorted(pb - pa):
        diffs.append("only in ours: %s" % p)
    da = {(a["path"].get(x), n, a["path"].get(t)) for x, n, t in a["dirents"]}
    db = {(b["path"].get(x), n, b["path"].get(t)) for x, n, t in b["dirents"]}
    for d in sorted(da ^ db, key=str):
        diffs.append("dirent %s only in %s" % (d, "2018" if d in da else "ours"))
    first_2018 = old_fs_check(a, sys.argv[1], "2018", diffs)
    first_bucket = old_fs_check(b, sys.argv[2], "ours", diffs)
    if first_2018 != 0 or not first_bucket or first_bucket > 2048:
        diffs.append("old_migrated_filesystem starts at sector %s (2018), %s (ours)" %
                     (first_2018, first_bucket))
    nr_linked = nr_copied = 0
    for p in sorted(pa & pb):
        ia, ib = a["byp"][p], b["byp"][p]
        fa, fb = a["inodes"].get(ia), b["inodes"].get(ib)
        if fa is None or fb is None:
            diffs.append("%s: no inode key" % p)
            continue
        old = p == "/old_migrated_filesystem"
        for k in sorted(set(fa) | set(fb)):
            if k in TIME_FIELDS or (old and k == "bi_sectors"):
                continue
            if fa.get(k) != fb.get(k):
                diffs.append("%s: %s %s (2018) vs %s (ours)" % (p, k, fa.get(k), fb.get(k)))
        if sorted(a["xattrs"].get(ia, [])) != sorted(b["xattrs"].get(ib, [])):
            diffs.append("%s: xattrs differ" % p)
        ea, eb = a["extents"].get(ia, []), b["extents"].get(ib, [])
        if old:
            continue	# old_fs_check()
        if len(ea) != len(eb):
            diffs.append("%s: %d extents (2018) vs %d (ours)" % (p, len(ea), len(eb)))
            continue
        for (sa, za, va), (sb_, zb, vb) in zip(ea, eb):
            (ptra, ca), (ptrb, cb) = ptr(va), ptr(vb)
            if (sa, za, ca) != (sb_, zb, cb) or (not ca and ptra != ptrb):
                diffs.append("%s: extent %d+%d %s (2018) vs %d+%d %s (ours)" %
                             (p, sa, za, va, sb_, zb, vb))
            nr_copied += ca
            nr_linked += not ca
    for d in diffs[:40]:
        print(d)
    print("%d paths, %d linked and %d copied extents compared; old_migrated_filesystem "
          "checked from sector %s (2018) and %s (ours); %d differences" %
          (len(pa & pb), nr_linked, nr_copied, first_2018, first_bucket, len(diffs)))
    sys.exit(1 if diffs else 0)


main()
