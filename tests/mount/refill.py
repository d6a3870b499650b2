#!/usr/bin/env python3
"""Fill / delete a random half / refill: the copying GC test.

refill.py MOUNTPOINT [--cycles N] [--seed S] [--size BYTES] [--min PCT]
          [--json FILE] [--delete-half] [--ballast BYTES]

Writes files of --size bytes (default 4096) until ENOSPC, deletes a random
half of every file there (seeded), writes again until ENOSPC, --cycles
times. Each refill must take at least --min percent (default 0: only
reported) of the space the deletions freed. The content of a file follows
from its name, so every file left is checked at the end. One line per
cycle; exit 1 when a cycle took less than --min or a file is wrong.
--delete-half: after the cycles, delete a random half once more (the
buckets are then left fragmented). --ballast: a file of that size is
written first and kept (fewer small files fill the rest). Everything is
fsynced at the end.
"""
import argparse
import errno
import hashlib
import json
import os
import random
import sys
import time


def content(name, size):
    out = bytearray()
    seed = name.encode()
    while len(out) < size:
        seed = hashlib.sha256(seed).digest()
        out += seed
    return bytes(out[:size])


def write_until_full(mnt, prefix, size, files):
    """Write files until ENOSPC: how many were written whole."""
    n = 0
    while True:
        name = "%s%07d" % (prefix, n)
        path = os.path.join(mnt, name)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError as e:
            if e.errno == errno.ENOSPC:
                return n
            raise
        try:
            data = content(name, size)
            done = 0
            while done < size:
                done += os.write(fd, data[done:])
            os.close(fd)
        except OSError as e:
            os.close(fd)
            if e.errno != errno.ENOSPC:
                raise
            os.unlink(path)
            return n
        files.append(name)
        n += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mnt")
    ap.add_argument("--cycles", type=int, default=3)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--min", type=float, default=0.0)
    ap.add_argument("--json")
    ap.add_argument("--delete-half", action="store_true")
    ap.add_argument("--ballast", type=int, default=0)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    files = []
    if a.ballast:
        with open(os.path.join(a.mnt, "ballast"), "wb") as f:
            f.write(content("ballast", a.ballast))
    t = time.time()
    n = write_until_full(a.mnt, "f0-", a.size, files)
    print("fill: %d files, %.1f MiB (%.1f s)" % (n, n * a.size / 2**20, time.time() - t),
          flush=True)
    rows = []
    ok = True
    for cycle in range(1, a.cycles + 1):
        gone = rnd.sample(range(len(files)), len(files) // 2)
        gone_set = set(gone)
        for i in gone:
            os.unlink(os.path.join(a.mnt, files[i]))
        files = [f for i, f in enumerate(files) if i not in gone_set]
        freed = len(gone) * a.size
        t = time.time()
        n = write_until_full(a.mnt, "f%d-" % cycle, a.size, files)
        took = n * a.size
        pct = 100.0 * took / freed if freed else 0.0
        st = os.statvfs(a.mnt)
        rows.append({"cycle": cycle, "freed": freed, "accepted": took, "percent": pct,
                     "live": len(files) * a.size,
                     "capacity": st.f_blocks * st.f_frsize})
        print("cycle %d: freed %.1f MiB, refill took %.1f MiB = %.1f%% (%.1f s); live %.1f MiB"
              % (cycle, freed / 2**20, took / 2**20, pct, time.time() - t,
                 len(files) * a.size / 2**20), flush=True)
        if pct < a.min:
            print("cycle %d: the refill took %.1f%% of the freed space, less than %.1f%%"
                  % (cycle, pct, a.min))
            ok = False
    if a.delete_half:
        gone = set(rnd.sample(range(len(files)), len(files) // 2))
        for i in sorted(gone):
            os.unlink(os.path.join(a.mnt, files[i]))
        files = [f for i, f in enumerate(files) if i not in gone]
        print("deleted %d files" % len(gone))
    # one fsync makes every change before it durable (the journal)
    fd = os.open(a.mnt, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    bad = 0
    if a.ballast:
        files.append("ballast")
    for name in files:
        with open(os.path.join(a.mnt, name), "rb") as f:
            if f.read() != content(name, a.ballast if name == "ballast" else a.size):
                bad += 1
                if bad <= 10:
                    print("%s: wrong content" % name)
    if bad:
        print("%d of %d files have wrong content" % (bad, len(files)))
        ok = False
    else:
        print("%d files verified" % len(files))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
