#!/usr/bin/env python3
"""Compare an extracted tree with a golden tree manifest.

Manifest lines (tests/golden/*/out/tree-manifest*.txt), tab-separated:
  PATH  "mode=%o uid=N gid=N nlink=N size=N mtime=N ino=N"  TYPE  XATTRS
TYPE: "dir", "reg sha256=H blocks=N", "lnk -> TARGET", "blk MA,MI",
"chr MA,MI", "fifo", "sock". XATTRS: space-separated "name=first 16 hex
digits of sha256(value)". The first line is "." (the root).

  tree_compare.py [--content-only] [--allow-extra NAME]... [--ignore-mtime PATH]...
                  MANIFEST TREE

--content-only: compare type, size, sha256, link target and device numbers
only (for manifests of shadow trees whose modes/owners/times are not the
filesystem's). Prints every difference; exit 0 when there is none.
Directory sizes and link counts are the host filesystem's and are not
compared; holes are checked: a file the manifest shows as sparse (blocks <
size/512) must be sparse in the copy too.
"""
import hashlib
import os
import stat
import sys


def parse_manifest(path):
    opener = open
    if path.endswith(".zst"):
        import subprocess
        data = subprocess.run(["zstd", "-dc", path], check=True,
                              stdout=subprocess.PIPE).stdout
        lines = data.decode("utf-8", "surrogateescape").split("\n")
    else:
        with opener(path, "rb") as f:
            lines = f.read().decode("utf-8", "surrogateescape").split("\n")
    out = {}
    for line in lines:
        if not line or line.startswith("$ ") or line.startswith("[rc="):
            continue
        parts = line.split("\t")
        if len(parts) < 3:
            continue
        name, attrs, typ = parts[0], parts[1], parts[2]
        xattrs = parts[3] if len(parts) > 3 else ""
        a = {}
        for kv in attrs.split(" "):
            if "=" in kv:
                k, v = kv.split("=", 1)
                a[k] = v
        out[name] = (a, typ, xattrs.strip())
    return out


def sha256_file(p):
    h = hashlib.sha256()
    with open(p, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def describe(p, st):
    m = st.st_mode
    if stat.S_ISDIR(m):
        return "dir"
    if stat.S_ISREG(m):
        return "reg sha256=%s" % sha256_file(p)
    if stat.S_ISLNK(m):
        return "lnk -> " + os.fsdecode(os.readlink(p))
    if stat.S_ISBLK(m):
        return "blk %d,%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    if stat.S_ISCHR(m):
        return "chr %d,%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    if stat.S_ISFIFO(m):
        return "fifo"
    if stat.S_ISSOCK(m):
        return "sock"
    return "?"


def xattrs_of(p):
    try:
        names = os.listxattr(p, follow_symlinks=False)
    except OSError:
        return ""
    items = []
    for n in sorted(names):
        if n.startswith("security.selinux"):
            continue
        v = os.getxattr(p, n, follow_symlinks=False)
        items.append("%s=%s" % (n, hashlib.sha256(v).hexdigest()[:16]))
    return " ".join(items)


def main(argv):
    content_only = False
    allow = set()
    no_mtime = set()
    args = []
    i = 1
    while i < len(argv):
        if argv[i] == "--content-only":
            content_only = True
        elif argv[i] == "--ignore-mtime":
            i += 1
            no_mtime.add(argv[i])
        elif argv[i] == "--allow-extra":
            i += 1
            allow.add(argv[i])
        else:
            args.append(argv[i])
        i += 1
    manifest, tree = args
    want = parse_manifest(manifest)
    errors = []
    seen = set()

    for name, (a, typ, xattrs) in sorted(want.items()):
        p = tree if name == "." else os.path.join(tree, name)
        seen.add(name)
        try:
            st = os.lstat(p)
        except OSError as e:
            errors.append("%s: missing (%s)" % (name, e.strerror))
            continue
        wtype = typ.split(" blocks=")[0] if typ.startswith("reg") else typ
        got = describe(p, st)
        if got != wtype:
            errors.append("%s: %s, expected %s" % (name, got, wtype))
        isdir = stat.S_ISDIR(st.st_mode)
        if not isdir and "size" in a and int(a["size"]) != st.st_size:
            errors.append("%s: size %d, expected %s" % (name, st.st_size, a["size"]))
        if typ.startswith("reg") and " blocks=" in typ:
            mblocks = int(typ.split(" blocks=")[1])
            size = int(a.get("size", st.st_size))
            if mblocks < size // 512 and st.st_blocks >= (size + 511) // 512 and size >= 65536:
                errors.append("%s: not sparse (%d blocks, manifest %d)" %
                              (name, st.st_blocks, mblocks))
        if content_only:
            continue
        if "mode" in a and int(a["mode"], 8) != st.st_mode:
            errors.append("%s: mode %o, expected %s" % (name, st.st_mode, a["mode"]))
        for k, v in (("uid", st.st_uid), ("gid", st.st_gid)):
            if k in a and int(a[k]) != v:
                errors.append("%s: %s %d, expected %s" % (name, k, v, a[k]))
        if not isdir and "nlink" in a and int(a["nlink"]) != st.st_nlink:
            errors.append("%s: nlink %d, expected %s" % (name, st.st_nlink, a["nlink"]))
        if "mtime" in a and name not in no_mtime and int(a["mtime"]) != int(st.st_mtime):
            errors.append("%s: mtime %d, expected %s" % (name, int(st.st_mtime), a["mtime"]))
        gx = xattrs_of(p)
        if gx != xattrs:
            errors.append("%s: xattrs '%s', expected '%s'" % (name, gx, xattrs))

    for root, dirs, files in os.walk(tree):
        for n in dirs + files:
            rel = os.path.relpath(os.path.join(root, n), tree)
            if rel not in seen and rel.split("/")[0] not in allow:
                errors.append("%s: not in the manifest" % rel)

    for e in errors[:200]:
        print(e)
    if len(errors) > 200:
        print("... %d more" % (len(errors) - 200))
    print("%d entries compared, %d differences" % (len(want), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
