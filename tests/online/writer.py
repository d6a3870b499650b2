#!/usr/bin/env python3
"""Background writer for the online tests.

writer.py DIR STOPFILE: until STOPFILE exists, write files DIR/w-N (N from
0, each a size and pattern that follow from N), overwrite the middle of
every third one, fsync every tenth; then print the number written.
writer.py --check DIR N: every file written is intact; exit 1 otherwise."""
import os, sys, time


def content(n):
    size = 1000 + (n * 7919) % 300000
    block = bytes((n * 31 + i) % 251 for i in range(4096))
    data = bytearray((block * (size // 4096 + 1))[:size])
    if n % 3 == 0 and size > 3000:
        data[1000:2000] = bytes([n % 256]) * 1000
    return bytes(data)


if sys.argv[1] == "--check":
    d, count = sys.argv[2], int(sys.argv[3])
    bad = 0
    for n in range(count):
        with open(os.path.join(d, "w-%d" % n), "rb") as f:
            if f.read() != content(n):
                print("w-%d differs" % n)
                bad += 1
    print("%d files checked, %d bad" % (count, bad))
    sys.exit(1 if bad or count == 0 else 0)

d, stop = sys.argv[1], sys.argv[2]
os.makedirs(d, exist_ok=True)
n = 0
while not os.path.exists(stop) or n < 5:
    data = content(n)
    p = os.path.join(d, "w-%d" % n)
    with open(p, "wb") as f:
        if n % 3 == 0 and len(data) > 3000:
            f.write(data[:1000] + b"x" * 1000 + data[2000:])
            f.flush()
            f.seek(1000)
            f.write(data[1000:2000])
        else:
            f.write(data)
        if n % 10 == 0:
            f.flush()
            os.fsync(f.fileno())
    n += 1
    time.sleep(0.01)
print(n)
