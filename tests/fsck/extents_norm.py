#!/usr/bin/env python3
# Normalise a `bcachefs list -b extents` listing for comparison: adjacent
# pieces of one extent (the second starting where the first ends, the same
# checksum entry with its offset moved on by the first's length, the same
# pointers) are joined into one key, as an extent that a repair cut at a
# node boundary reads the same sectors as the whole one. Every other line
# is kept as it is.
import re
import sys

KEY = re.compile(r'^u64s (\d+) type (\d+) (\d+):(\d+) snap 0 len (\d+) ver 0: '
                 r'crc: c_size (\d+) size (\d+) offset (\d+) (.*)$')

out, prev = [], None
for line in open(sys.argv[1]):
    line = line.rstrip('\n')
    m = KEY.match(line)
    if not m:
        if prev:
            out.append(prev)
            prev = None
        out.append(line)
        continue
    u64s, typ, ino, end, ln, cs, sz, off, rest = m.groups()
    cur = [u64s, typ, int(ino), int(end), int(ln), cs, sz, int(off), rest]
    if prev and prev[2] == cur[2] and prev[3] == cur[3] - cur[4] and \
       prev[0:2] == cur[0:2] and prev[5:7] == cur[5:7] and prev[8] == cur[8] and \
       prev[7] + prev[4] == cur[7]:
        prev[3], prev[4] = cur[3], prev[4] + cur[4]
        continue
    if prev:
        out.append(prev)
    prev = cur
if prev:
    out.append(prev)
for o in out:
    if isinstance(o, str):
        print(o)
    else:
        print('u64s %s type %s %d:%d snap 0 len %d ver 0: crc: c_size %s size %s offset %d %s'
              % tuple(o))
