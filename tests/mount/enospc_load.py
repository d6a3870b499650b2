#!/usr/bin/env python3
"""A seeded random workload on a full filesystem, and its shadow.

    enospc_load.py run ROOT SEED PROCS SECONDS SHADOW.json
        PROCS processes, each in its own directory ROOT/pN, make random
        creates, writes (new, overwrite, append, extend), truncates and
        unlinks for SECONDS. A call that succeeds is applied to the
        process's shadow (a short write: the bytes it says it wrote); a
        call that fails with ENOSPC must leave no trace, so the shadow
        does not change; any other error fails the run. The shadows go
        to SHADOW.json (per file: size and sha256), with counts.
    enospc_load.py check ROOT SHADOW.json
        The tree under ROOT/p* must be the shadow exactly (names, sizes,
        contents); prints the first differences, exits 1 on any.

Contents are made from (seed, file, generation) so that the shadow keeps
only what is needed to recompute them: the bytes themselves, per file, in
memory (files are small, the filesystem is small).
"""
import errno
import hashlib
import json
import multiprocessing
import os
import random
import sys
import time

MAX_FILE = 256 * 1024


def worker(root, seed, idx, seconds, q):
    rnd = random.Random(seed * 1000 + idx)
    d = os.path.join(root, 'p%d' % idx)
    os.makedirs(d, exist_ok=True)
    shadow = {}			# name -> bytearray
    counts = {'ok': 0, 'enospc': 0, 'short': 0}
    end = time.monotonic() + seconds
    serial = 0
    err = None

    def data(n):
        nonlocal serial
        serial += 1
        r = random.Random(seed * 7919 + idx * 104729 + serial)
        return r.randbytes(n)

    try:
        while time.monotonic() < end:
            op = rnd.random()
            names = sorted(shadow)
            try:
                if op < 0.40 or not names:
                    # create, then a write of a few blocks
                    name = 'f%06d' % rnd.randrange(1000000)
                    if name in shadow:
                        continue
                    p = os.path.join(d, name)
                    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                    shadow[name] = bytearray()
                    try:
                        # half of them empty: metadata alone, the btree grows
                        if rnd.random() < 0.5:
                            counts['ok'] += 1
                            continue
                        buf = data(rnd.choice((1, 512, 4096, 5000, 16384, 65536)))
                        n = os.write(fd, buf)
                        shadow[name][0:0] = buf[:n]
                        if n < len(buf):
                            counts['short'] += 1
                    finally:
                        os.close(fd)
                elif op < 0.65:
                    # write: overwrite, append or past the end (a hole)
                    name = rnd.choice(names)
                    cur = shadow[name]
                    off = rnd.choice((0, len(cur), rnd.randrange(len(cur) + 1),
                                      len(cur) + rnd.randrange(20000)))
                    n = rnd.choice((100, 4096, 10000, 32768))
                    if off + n > MAX_FILE:
                        continue
                    buf = data(n)
                    fd = os.open(os.path.join(d, name), os.O_WRONLY)
                    try:
                        w = os.pwrite(fd, buf, off)
                    finally:
                        os.close(fd)
                    if w:
                        if off > len(cur):
                            cur.extend(bytes(off - len(cur)))
                        cur[off:off + w] = buf[:w]
                    if w < n:
                        counts['short'] += 1
                elif op < 0.80:
                    name = rnd.choice(names)
                    size = rnd.choice((0, rnd.randrange(len(shadow[name]) + 1),
                                       rnd.randrange(MAX_FILE)))
                    os.truncate(os.path.join(d, name), size)
                    cur = shadow[name]
                    if size < len(cur):
                        del cur[size:]
                    else:
                        cur.extend(bytes(size - len(cur)))
                else:
                    name = rnd.choice(names)
                    os.unlink(os.path.join(d, name))
                    del shadow[name]
                counts['ok'] += 1
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                counts['enospc'] += 1
    except Exception as e:		# reported by the parent
        err = '%s: %r' % (d, e)
    q.put((idx, err, counts,
           {n: [len(b), hashlib.sha256(b).hexdigest()] for n, b in shadow.items()}))


def run(root, seed, procs, seconds, out):
    q = multiprocessing.Queue()
    ps = [multiprocessing.Process(target=worker, args=(root, seed, i, seconds, q))
          for i in range(procs)]
    for p in ps:
        p.start()
    res = [q.get() for _ in ps]
    for p in ps:
        p.join()
    total = {'ok': 0, 'enospc': 0, 'short': 0}
    shadow = {}
    bad = False
    for idx, err, counts, files in sorted(res):
        if err:
            print('worker', idx, 'failed:', err)
            bad = True
        for k in total:
            total[k] += counts[k]
        shadow['p%d' % idx] = files
    json.dump({'counts': total, 'shadow': shadow}, open(out, 'w'))
    print('calls: %(ok)d ok, %(enospc)d ENOSPC, %(short)d short writes' % total)
    return 1 if bad else 0


def check(root, shadow_file):
    want = json.load(open(shadow_file))['shadow']
    diffs = []
    for pd, files in sorted(want.items()):
        d = os.path.join(root, pd)
        have = set(os.listdir(d)) if os.path.isdir(d) else set()
        for name in sorted(have - set(files)):
            diffs.append('%s/%s: exists, the shadow has no such file' % (pd, name))
        for name, (size, digest) in sorted(files.items()):
            p = os.path.join(d, name)
            if name not in have:
                diffs.append('%s/%s: missing' % (pd, name))
                continue
            b = open(p, 'rb').read()
            if len(b) != size:
                diffs.append('%s/%s: size %d, shadow %d' % (pd, name, len(b), size))
            elif hashlib.sha256(b).hexdigest() != digest:
                diffs.append('%s/%s: contents differ' % (pd, name))
    for x in diffs[:20]:
        print(x)
    if diffs:
        print('%d differences' % len(diffs))
        return 1
    print('tree = shadow (%d files)' % sum(len(f) for f in want.values()))
    return 0


if __name__ == '__main__':
    if sys.argv[1] == 'run':
        sys.exit(run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]),
                     sys.argv[6]))
    sys.exit(check(sys.argv[2], sys.argv[3]))
