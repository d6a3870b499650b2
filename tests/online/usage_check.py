#!/usr/bin/env python3
"""Check `fs usage --json` against an independent count from `bcachefs list`.

usage_check.py USAGE.json EXTENTS.txt NODES.txt NODE_SECTORS

EXTENTS.txt is `list -b extents` output, NODES.txt the concatenated
`list -m nodes -b B` output of every btree. Checks: data and btree bytes
per number of replicas, the bytes of every user/btree replicas entry, and
per device the user-data buckets and sectors. Prints what differs.
"""
import json, re, sys
from collections import defaultdict

usage = json.load(open(sys.argv[1]))
node = int(sys.argv[4])
bucket = {d['index']: d['bucket_size'] // 512 for d in usage['devices']}
bad = []

data = defaultdict(int)          # nr replicas -> sectors
entry = defaultdict(int)         # ("data"|"btree", devs) -> sectors
dev_buckets = defaultdict(set)   # dev -> buckets with user data
dev_sectors = defaultdict(int)
for line in open(sys.argv[2], encoding='latin-1'):
    m = re.search(r' type (128|129) \S+ snap \d+ len (\d+) ', line)
    if not m:
        continue
    size = int(m.group(2))
    ptrs = re.findall(r'ptr: (\d+):(\d+) gen \d+( cached)?', line)
    dirty = [(int(d), int(o)) for d, o, c in ptrs if not c and m.group(1) == '128']
    if dirty:
        data[len(dirty)] += size
        entry[('data', tuple(sorted(d for d, _ in dirty)))] += size
    for d, o in dirty:
        dev_buckets[d].add(o // bucket.get(d, 1))
        dev_sectors[d] += size

btree = defaultdict(int)
for line in open(sys.argv[3], encoding='latin-1'):
    if not line.startswith('    ptrs:'):
        continue
    devs = tuple(sorted(int(d) for d in re.findall(r'ptr: (\d+):\d+', line)))
    btree[len(devs)] += node
    entry[('btree', devs)] += node

got = defaultdict(dict)
for r in usage['by_replicas']:
    got[r['data_type']][r['nr_replicas']] = r['bytes'] // 512
for t, want in (('data', data), ('btree', btree)):
    if dict(want) != got.get(t, {}):
        bad.append('%s by replicas: usage %s, list %s' % (t, got.get(t, {}), dict(want)))

for r in usage['replicas']:
    if r['data_type'] in ('data', 'btree'):
        k = (r['data_type'], tuple(r['devices']))
        if r.get('bytes', 0) // 512 != entry.get(k, 0):
            bad.append('entry %s: usage %s sectors, list %s' % (k, r.get('bytes', 0) // 512, entry.get(k, 0)))
        entry.pop(k, None)
for k, v in entry.items():
    bad.append('entry %s (%d sectors) missing from usage' % (k, v))

for d in usage['devices']:
    i = d['index']
    u = d['data']['data']
    if u['buckets'] != len(dev_buckets[i]) or u['bytes'] // 512 != dev_sectors[i]:
        bad.append('device %d data: usage %d buckets %d sectors, list %d buckets %d sectors' %
                   (i, u['buckets'], u['bytes'] // 512, len(dev_buckets[i]), dev_sectors[i]))

for b in bad:
    print(b)
sys.exit(1 if bad else 0)
