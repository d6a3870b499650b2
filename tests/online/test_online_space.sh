#!/bin/sh
# One accounting: after writing compressed and replicated data,
# `fs usage --json`, statfs (df) and a walk of the tree agree: capacity,
# used and available are the same numbers in fs usage and df; used +
# reserved + available = capacity; the per-device buckets add up to used;
# the uncompressed user data is what the files hold (st_blocks, every
# copy) and the on-disk size is smaller for compressible data; df -i
# counts the inodes (kept as they come and go, not walked), read-write
# and read-only. (No cached data here: no promote target, no
# durability-0 member.)
. "$TESTDIR/../lib.sh"
. "$TESTDIR/lib_online.sh"
online_setup
a=$WORK/a.img b=$WORK/b.img
mkimg a.img 256M
mkimg b.img 256M
run_ok format "$BCACHEFS" format -q --replicas=2 --compression=lz4 "$a" "$b"

check() {	# check NAME: fs usage, statfs and the walk agree
	python3 - "$BCACHEFS" "$WORK/$1-usage.out" "$mnt" <<'PY' || fail "$1: the accounting does not agree"
import json, os, subprocess, sys
bcachefs, out, mnt = sys.argv[1:4]
# one state: statfs the same just before and just after fs usage (the
# journal timer frees emptied buckets at any moment)
for attempt in range(20):
    st0 = os.statvfs(mnt)
    js = subprocess.run([bcachefs, "fs", "usage", "--json", mnt], check=True,
                        capture_output=True, text=True).stdout
    st = os.statvfs(mnt)
    if (st0.f_bfree, st0.f_bavail) == (st.f_bfree, st.f_bavail):
        break
open(out, "w").write(js)
u = json.loads(js)
bucket = max(d["bucket_size"] for d in u["devices"])
slack = bucket * len(u["devices"])    # one bucket per device
bad = []
def near(name, a, b):
    if abs(a - b) > slack:
        bad.append("%s: fs usage %d, other %d" % (name, a, b))
# fs usage and df: the same numbers
near("capacity/df", u["capacity"], st.f_blocks * st.f_frsize)
near("used/df", u["used"], (st.f_blocks - st.f_bfree) * st.f_frsize)
near("available/df", u["available"], st.f_bavail * st.f_frsize)
# it adds up
if u["used"] + u["reserved"] + u["available"] != u["capacity"]:
    bad.append("used %d + reserved %d + available %d != capacity %d" %
               (u["used"], u["reserved"], u["available"], u["capacity"]))
if u["reserved"] != sum(u["reserve"].values()):
    bad.append("reserve parts %s do not add up to %d" % (u["reserve"], u["reserved"]))
if sum(d["capacity"] for d in u["devices"]) != u["capacity"]:
    bad.append("device capacities do not add up")
inuse = sum(d["data"][t]["buckets"] * d["bucket_size"] for d in u["devices"]
            for t in ("sb", "journal", "btree", "data", "cached"))
if inuse != u["used"]:
    bad.append("buckets in use %d != used %d" % (inuse, u["used"]))
disk = sum(v["bytes"] for v in u["data"].values())
if disk > u["used"]:
    bad.append("data on disk %d > used %d" % (disk, u["used"]))
# the walk: what the files hold, every copy, is the uncompressed user data
blocks = 0
for root, dirs, files in os.walk(mnt):
    for n in dirs + files:
        blocks += os.lstat(os.path.join(root, n)).st_blocks * 512
data = u["data"]["data"]
near("uncompressed/walk", data["uncompressed_bytes"], 2 * blocks)
by = {(r["data_type"], r["nr_replicas"]): r for r in u["by_replicas"]}
if by[("data", 2)]["uncompressed_bytes"] * 2 != data["uncompressed_bytes"]:
    bad.append("by_replicas 2x %s vs data %s" % (by[("data", 2)], data))
if not data["bytes"] < data["uncompressed_bytes"] - (2 << 20):
    bad.append("compressible data: %d on disk, %d uncompressed" % (data["bytes"], data["uncompressed_bytes"]))
# df -i: the inodes in use
n = sum(1 + len(f) + len(d) for r, d, f in os.walk(mnt)) - sum(1 for r, d, f in os.walk(mnt)) + 1
iused = st.f_files - st.f_ffree
if abs(iused - n) > 1:
    bad.append("df -i: %d inodes used, the tree has %d" % (iused, n))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}

mount_fg m "$a:$b"
python3 - "$mnt" <<'PY' || fail "writing the tree"
import os, sys
m = sys.argv[1]
os.mkdir(m + "/text")
for i in range(300):
    with open("%s/text/f%03d" % (m, i), "w") as f:
        f.write(("line %d of a compressible file\n" % i) * (50 * (i % 7 + 1)))
with open(m + "/big.txt", "w") as f:
    for i in range(200000):
        f.write("record %08d: the same words again and again\n" % i)
with open(m + "/random", "wb") as f:
    f.write(os.urandom(3 << 20))
os.symlink("big.txt", m + "/link")
os.mkdir(m + "/empty")
PY
check rw1
# the statfs inode count follows deletes and renames over files
rm -f "$mnt"/text/f1*
mv "$mnt/text/f200" "$mnt/text/f201"
rmdir "$mnt/empty"
check rw2
unmount_fg m

mount_fg ro "$a:$b" -o ro
check ro
unmount_fg ro
fsck_clean final "$a" "$b"
