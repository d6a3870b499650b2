#!/usr/bin/env python3
"""Fill / delete a random half / refill: the copying GC test.

refill.py MOUNTPOINT [--cycles N] [--seed S] [--size BYTES] [--min PCT]
          [--json FILE] [--delete-half] [--ballast BYTES] [--mixed]

Writes files of --size bytes (default 4096) until ENOSPC, deletes a random
half of every file there (seeded), writes again until ENOSPC, --cycles
times. Each refill must take at least --min percent (default 0: only
reported) of the space the deletions freed. The content of a file follows
from its name, so every file left is checked at the end. One line per
cycle; exit 1 when a cycle took less than --min or a file is wrong.
--delete-half: after the cycles, delete a random half once more (the
buckets are then left fragmented). --ballast: a file of that size is
written first and kept (fewer small files fill the rest). Everything is
fsynced at the end. --mixed: each file's size is drawn from 4 KiB to
1 MiB (log-uniform, from its name) instead of --size.
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


SIZE = 4096
MIXED = False


def size_of(name):
    """The size of file @name: --size, or with --mixed 4 KiB to 1 MiB by its name."""
    if not MIXED:
        return SIZE
    r = int.from_bytes(hashlib.sha256(b"size" + name.encode()).digest()[:4], "little")
    # half of them powers of two (4 KiB .. 1 MiB), half any multiple of 4 KiB
    return 4096 << (r % 9) if r & 0x10000 else 4096 * (1 + r % 256)


def write_until_full(mnt, prefix, files):
    """Write files until ENOSPC: how many were written whole, and their bytes."""
    n = total = 0
    while True:
        name = "%s%07d" % (prefix, n)
        size = size_of(name)
        path = os.path.join(mnt, name)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError as e:
            if e.errno == errno.ENOSPC:
                return n, total
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
            return n, total
        files.append(name)
        n += 1
        total += size


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
    ap.add_argument("--mixed", action="store_true")
    a = ap.parse_args()
    global SIZE, MIXED
    SIZE, MIXED = a.size, a.mixed
    rnd = random.Random(a.seed)
    files = []
    if a.ballast:
        with open(os.path.join(a.mnt, "ballast"), "wb") as f:
            f.write(content("ballast", a.ballast))
    t = time.time()
    n, took = write_until_full(a.mnt, "f0-", files)
    print("fill: %d files, %.1f MiB (%.1f s)" % (n, took / 2**20, time.time() - t),
          flush=True)
    rows = []
    ok = True
    for cycle in range(1, a.cycles + 1):
        gone = rnd.sample(range(len(files)), len(files) // 2)
        gone_set = set(gone)
        for i in gone:
            os.unlink(os.path.join(a.mnt, files[i]))
        freed = sum(size_of(files[i]) for i in gone)
        files = [f for i, f in enumerate(files) if i not in gone_set]
        t = time.time()
        n, took = write_until_full(a.mnt, "f%d-" % cycle, files)
        pct = 100.0 * took / freed if freed else 0.0
        st = os.statvfs(a.mnt)
        live = sum(size_of(f) for f in files) + a.ballast
        cap = st.f_blocks * st.f_frsize
        rows.append({"cycle": cycle, "freed": freed, "accepted": took, "percent": pct,
                     "live": live, "capacity": cap})
        print("cycle %d: freed %.1f MiB, refill took %.1f MiB = %.1f%% (%.1f s); "
              "live %.1f MiB = %.1f%% of the capacity"
              % (cycle, freed / 2**20, took / 2**20, pct, time.time() - t,
                 live / 2**20, 100.0 * live / cap), flush=True)
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
            if f.read() != content(name, a.ballast if name == "ballast" else size_of(name)):
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
