#!/usr/bin/env python3
"""Compare two trees: tree_diff.py SRC COPY [--no-owner] [--no-times] [--cache FILE]

Every entry (except lost+found at the top of COPY) must exist in both with
the same type, mode, owner, size, mtime (ns), link count, content
(sha256), holes (a sparse source stays sparse), symlink target, device
number and xattrs (user.*, trusted.*, security.*, and the POSIX ACLs
system.posix_acl_access/default: every namespace format --source copies).
Exit 1 and the first differences otherwise. --cache FILE keeps the description of SRC (made once, then
read back: for comparing one source with several copies)."""
import hashlib, os, pickle, stat, sys

XATTR_PREFIXES = ("user.", "trusted.", "security.",
                  "system.posix_acl_access", "system.posix_acl_default")
owner = "--no-owner" not in sys.argv
times = "--no-times" not in sys.argv
a_root, b_root = sys.argv[1], sys.argv[2]


def walk(root):
    out = {".": root}
    for d, dirs, files in os.walk(root):
        for name in dirs + files:
            p = os.path.join(d, name)
            out[os.path.relpath(p, root)] = p
    return out


def desc(p):
    st = os.lstat(p)
    r = {"mode": oct(st.st_mode)}
    if owner:
        r["uid"], r["gid"] = st.st_uid, st.st_gid
    if not stat.S_ISDIR(st.st_mode):
        r["size"] = st.st_size
    r["nlink"] = st.st_nlink
    if times and not stat.S_ISDIR(st.st_mode):
        r["mtime"] = st.st_mtime_ns
    if stat.S_ISREG(st.st_mode):
        h = hashlib.sha256()
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        r["sha256"] = h.hexdigest()
        r["sparse"] = st.st_blocks * 512 < st.st_size - 65536
    if stat.S_ISLNK(st.st_mode):
        r["target"] = os.readlink(p)
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        r["rdev"] = (os.major(st.st_rdev), os.minor(st.st_rdev))
    try:
        r["xattrs"] = sorted((n, os.getxattr(p, n, follow_symlinks=False))
                             for n in os.listxattr(p, follow_symlinks=False)
                             if n.startswith(XATTR_PREFIXES))
    except OSError:
        pass
    return r


a, b = walk(a_root), walk(b_root)
cache, desc_a = None, {}
if "--cache" in sys.argv:
    cache = sys.argv[sys.argv.index("--cache") + 1]
    if os.path.exists(cache):
        with open(cache, "rb") as f:
            desc_a = pickle.load(f)
    else:
        desc_a = {k: desc(p) for k, p in a.items()}
        with open(cache, "wb") as f:
            pickle.dump(desc_a, f)
bad = 0
for k in sorted(set(a) | set(b)):
    if k == "lost+found" and k not in a:
        continue
    if k not in b or k not in a:
        bad += 1
        if bad <= 10:
            print("missing in the copy:" if k not in b else "extra in the copy:", k)
        continue
    da, db = dict(desc_a[k]) if k in desc_a else desc(a[k]), desc(b[k])
    if k == ".":    # the copy's root has lost+found too
        da.pop("nlink"), db.pop("nlink")
    if da != db:
        bad += 1
        if bad <= 10:
            print("differs:", k)
            for f in sorted(set(da) | set(db)):
                if da.get(f) != db.get(f):
                    print("   ", f, repr(da.get(f))[:100], "->", repr(db.get(f))[:100])
print(len(a), "entries compared,", bad, "differences")
sys.exit(1 if bad else 0)
