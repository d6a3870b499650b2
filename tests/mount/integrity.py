#!/usr/bin/env python3
"""Helpers of the mount's integrity tests (test_mount_integrity.sh and
test_mount_repair_read.sh).

  integrity.py tree DIR                 make the test tree (files with data and an xattr each)
  integrity.py manifest DIR OUT         what the tree holds: names, sha256, xattrs (JSON)
  integrity.py pick LISTJSON KIND       a node of `list -m nodes --json` output:
                                        leaf (the second leaf), interior (the first level-1
                                        node under a root of level >= 2), root;
                                        prints "DEV SECTOR LEVEL MIN MAX U64S" or nothing
  integrity.py damage IMG SECTOR HOW NODE_BYTES U64S [SRC_SECTOR]
                                        flip: 8 bytes in the middle of the first bset's keys
                                        XORed (the checksum is not recomputed); zero: the
                                        whole node zeroed; copy: the node at SRC_SECTOR (a
                                        valid node of another btree) copied over it
  integrity.py check MNT MANIFEST       read everything through the mount: every name, file,
                                        stat and xattr must be right or fail with EIO (never
                                        a wrong name, wrong bytes, or ENOENT for a file that
                                        exists); prints "ok N eio M"; exit 1 on a wrong answer
"""
import errno, hashlib, json, os, random, sys


def tree(d):
    os.makedirs(d, exist_ok=True)
    r = random.Random(22)
    for i in range(1, 401):
        p = os.path.join(d, "f%d" % i)
        with open(p, "wb") as f:
            f.write(bytes(r.randrange(256) for _ in range(i * 37)))
        os.setxattr(p, "user.x", b"val%d" % i)


def manifest(d, out):
    m = {}
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        with open(p, "rb") as f:
            data = f.read()
        m[name] = {"sha": hashlib.sha256(data).hexdigest(), "size": len(data),
                   "x": os.getxattr(p, "user.x").decode()}
    json.dump(m, open(out, "w"))


def pick(listjson, kind):
    nodes = json.load(open(listjson))["nodes"]
    if not nodes:
        return
    top = max(n["level"] for n in nodes)
    if kind == "root":
        sel = [n for n in nodes if n["level"] == top]
    elif kind == "interior":
        sel = [n for n in nodes if 0 < n["level"] < top]
    else:
        sel = [n for n in nodes if n["level"] == 0]
        sel = sel[1:2] or sel
    if not sel:
        return
    n = sel[0]
    print(n["dev"], n["sector"], n["level"], n["min_key"], n["max_key"], n["bsets"][0]["u64s"])


def damage(img, sector, how, node_bytes, u64s, src=None):
    off = int(sector) * 512
    node_bytes = int(node_bytes)
    with open(img, "r+b") as f:
        if how == "flip":
            at = off + 160 + (int(u64s) * 8 // 2 // 8) * 8
            f.seek(at)
            b = f.read(8)
            f.seek(at)
            f.write(bytes(x ^ 0x5a for x in b))
        elif how == "zero":
            f.seek(off)
            f.write(bytes(node_bytes))
        elif how == "copy":
            f.seek(int(src) * 512)
            b = f.read(node_bytes)
            f.seek(off)
            f.write(b)
        else:
            sys.exit("unknown damage " + how)


def check(mnt, mf):
    m = json.load(open(mf))
    ok = eio = 0
    bad = []

    def wrong(what):
        bad.append(what)

    try:
        names = set(os.listdir(mnt))
        extra = names - set(m) - {"lost+found", "new-after-damage"}
        missing = set(m) - names
        if extra:
            wrong("readdir: names that are not there: %s" % sorted(extra)[:5])
        if missing:
            wrong("readdir: exit 0 but names missing: %s" % sorted(missing)[:5])
        ok += 1
    except OSError as e:
        if e.errno != errno.EIO:
            wrong("readdir: %s" % e)
        eio += 1
    for name, want in m.items():
        p = os.path.join(mnt, name)
        for what in ("stat", "data", "xattr"):
            try:
                if what == "stat":
                    st = os.stat(p)
                    if st.st_size != want["size"]:
                        wrong("%s: size %d, want %d" % (name, st.st_size, want["size"]))
                elif what == "data":
                    with open(p, "rb") as f:
                        h = hashlib.sha256(f.read()).hexdigest()
                    if h != want["sha"]:
                        wrong("%s: wrong bytes" % name)
                else:
                    v = os.getxattr(p, "user.x").decode()
                    if v != want["x"]:
                        wrong("%s: xattr %r, want %r" % (name, v, want["x"]))
                ok += 1
            except OSError as e:
                if e.errno != errno.EIO:
                    wrong("%s: %s: %s" % (name, what, e))
                eio += 1
    print("ok %d eio %d" % (ok, eio))
    for b in bad[:20]:
        print("WRONG: " + b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    a = sys.argv[1:]
    {"tree": lambda: tree(a[1]), "manifest": lambda: manifest(a[1], a[2]),
     "pick": lambda: pick(a[1], a[2]), "damage": lambda: damage(*a[1:]),
     "check": lambda: check(a[1], a[2])}[a[0]]()
