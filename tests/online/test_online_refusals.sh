#!/bin/sh
# The ioctl ABI and every refusal of doc/ioctl.md §9,
# spoken byte for byte to a mount's control socket (ctl_client.py):
# unknown and compiled-out numbers (ENOTTY), malformed requests (EPROTO,
# the mount keeps serving), every flag and padding check (EINVAL), lookups
# (EINVAL by index, ENOENT by path), USAGE too small (ERANGE), READ_SUPER,
# GET_IDX, SET_STATE (range, readonly with too few read-write devices,
# failed that would degrade data; each allowed with its force flag),
# OFFLINE/ONLINE, RESIZE (shrink, larger than the device), DISK_ADD (not
# bcachefs, wrong block size, already a member), DATA (bad op or flags, the
# 2018 tools' 112-byte request answered with a job descriptor, its
# progress records and result), and EPERM for an unprivileged caller.
# Then the command-line force flags: remove of the only copy refused, -f
# loses it (reads fail with EIO), --force-metadata refused.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/lib_online.sh"
online_setup
a=$WORK/a.img b=$WORK/b.img c=$WORK/c.img
for i in a b c; do mkimg $i.img 128M; done
mkimg x.img 128M
mkimg small.img 16M
run_ok format "$BCACHEFS" format -q --replicas=2 "$a" "$b" "$c"
run_ok format-x "$BCACHEFS" format -q "$WORK/x.img"
run_ok format-bs "$BCACHEFS" format -q --block_size=512 "$WORK/small.img"
uuid=$("$BCACHEFS" show-super "$a" | awk '/^External UUID:/ { print $3 }')
mount_fg r "$a:$b:$c"
python3 "$GEN_TREE" "$mnt/tree" 100 4 > /dev/null || fail "gen_tree"
sync

python3 - "$TESTDIR" "$uuid" "$a" "$b" "$c" "$WORK" <<'PY' || fail "ABI checks"
import errno, os, struct, sys, time
sys.path.insert(0, sys.argv[1])
from ctl_client import *
uuid, a, b, c, work = sys.argv[2:7]
ctl = Ctl(uuid)

def expect(what, want, nr, arg, path=None, fd=None):
    ret, out, msg, jfd = ctl.call(nr, arg, path, fd)
    if jfd is not None:
        os.close(jfd)
    if ret != want:
        print("%s: %d, expected %d (%s)" % (what, ret, want, msg))
        sys.exit(1)
    if ret < 0 and ret not in (-errno.ENOTTY,) and not msg:
        print("%s: refused without a reason" % what)
        sys.exit(1)
    return out, msg

E = lambda e: -e
# numbers: unknown, compiled out, the two nr 13 told apart by size
expect("unknown", E(errno.ENOTTY), ioc(W, 0x63, 16), b"\0" * 16)
expect("START", E(errno.ENOTTY), START, b"\0" * 8)
expect("GET_IDX", E(errno.ENOENT), DISK_GET_IDX, struct.pack("<Q", (8 << 8) | 99))
# malformed requests: an error reply, and the socket still serves
for bad in (b"", b"\0" * 8, struct.pack("<IIII", 0x12345678, QUERY_UUID, 16, 0) + b"\0" * 16,
            struct.pack("<IIII", REQ_MAGIC, QUERY_UUID, 16, 5) + b"\0" * 16,
            struct.pack("<IIII", REQ_MAGIC, QUERY_UUID, 0xffffffff, 0xffffffff)):
    try:
        ret, _, msg, _ = ctl.raw(bad)
    except EOFError:
        ctl = Ctl(uuid)	# dropped: a new connection works
        continue
    assert ret in (E(errno.EPROTO), E(errno.EINVAL)), (bad, ret, msg)
expect("wrong size", E(errno.EINVAL), DISK_SET_STATE, b"\0" * 8)
out, _ = expect("QUERY_UUID", 0, QUERY_UUID, b"\0" * 16)
assert out.hex() == uuid.replace("-", ""), out.hex()

# USAGE: too few slots, then enough
expect("USAGE 1 slot", E(errno.ERANGE), USAGE, usage(1))
out, _ = expect("USAGE", 0, USAGE, usage(3))
assert out[256 + 1] == 1 and out[256 + 120 + 1] == 1 and out[256 + 240 + 1] == 1

# READ_SUPER
expect("READ_SUPER flags", E(errno.EINVAL), READ_SUPER, read_super(0x40, 0, 65536))
expect("READ_SUPER pad", E(errno.EINVAL), READ_SUPER, read_super(0, 0, 65536, pad=1))
expect("READ_SUPER small", E(errno.ERANGE), READ_SUPER, read_super(0, 0, 16))
out, _ = expect("READ_SUPER", 0, READ_SUPER, read_super(0, 0, 65536))
assert out[24:32] == b"\xc6\x85\x73\xf6\x4e\x1a\x45\xca", out[24:32].hex()  # bcachefs magic
expect("READ_SUPER dev 9", E(errno.EINVAL), READ_SUPER, read_super(BY_INDEX | READ_DEV, 9, 65536))
out, _ = expect("READ_SUPER dev 1", 0, READ_SUPER, read_super(BY_INDEX | READ_DEV, 1, 65536))

# SET_STATE
expect("SET_STATE flags", E(errno.EINVAL), DISK_SET_STATE, set_state(0x40 | BY_INDEX, 1, 0))
expect("SET_STATE pad", E(errno.EINVAL), DISK_SET_STATE, set_state(BY_INDEX, 1, 0, pad=b"\0\1\0"))
expect("SET_STATE state 7", E(errno.EINVAL), DISK_SET_STATE, set_state(BY_INDEX, 7, 0))
expect("SET_STATE dev 9", E(errno.EINVAL), DISK_SET_STATE, set_state(BY_INDEX, 1, 9))
expect("SET_STATE not a member", E(errno.ENOENT), DISK_SET_STATE, set_state(0, 1, 0), path=work + "/x.img")
expect("SET_STATE same", 0, DISK_SET_STATE, set_state(BY_INDEX, 0, 0))
expect("SET_STATE by path", 0, DISK_SET_STATE, set_state(0, 1, 0), path=a)
expect("SET_STATE 2nd ro", E(errno.EINVAL), DISK_SET_STATE, set_state(BY_INDEX, 1, 1))
expect("SET_STATE 2nd ro -f", 0, DISK_SET_STATE, set_state(BY_INDEX | FORCE_IF_DEGRADED, 1, 1))
expect("SET_STATE rw", 0, DISK_SET_STATE, set_state(BY_INDEX, 0, 1))
expect("SET_STATE rw", 0, DISK_SET_STATE, set_state(BY_INDEX, 0, 0))
expect("SET_STATE failed", E(errno.EINVAL), DISK_SET_STATE, set_state(BY_INDEX, 2, 0))
expect("SET_STATE failed -f", 0, DISK_SET_STATE, set_state(BY_INDEX | FORCE_IF_DEGRADED, 2, 0))
expect("SET_STATE spare", 0, DISK_SET_STATE, set_state(BY_INDEX, 3, 0))
expect("SET_STATE back", 0, DISK_SET_STATE, set_state(BY_INDEX, 0, 0))

# OFFLINE / ONLINE
expect("OFFLINE flags", E(errno.EINVAL), DISK_OFFLINE, disk(0x40 | BY_INDEX, 2))
expect("OFFLINE pad", E(errno.EINVAL), DISK_OFFLINE, disk(BY_INDEX, 2, pad=1))
expect("OFFLINE", E(errno.EINVAL), DISK_OFFLINE, disk(BY_INDEX, 2))
expect("OFFLINE -f", 0, DISK_OFFLINE, disk(BY_INDEX | FORCE_IF_DEGRADED, 2))
expect("OFFLINE again", 0, DISK_OFFLINE, disk(BY_INDEX | FORCE_IF_DEGRADED, 2))
fd = os.open(c, os.O_RDWR)
expect("ONLINE flags", E(errno.EINVAL), DISK_ONLINE, disk(1, 0), path=c, fd=os.dup(fd))
x = os.open(work + "/x.img", os.O_RDWR)
expect("ONLINE not a member", E(errno.EINVAL), DISK_ONLINE, disk(0, 0), path=work + "/x.img", fd=x)
expect("ONLINE", 0, DISK_ONLINE, disk(0, 0), path=c, fd=os.dup(fd))
expect("ONLINE again", E(errno.EINVAL), DISK_ONLINE, disk(0, 0), path=c, fd=os.dup(fd))
os.close(fd)

# RESIZE
expect("RESIZE flags", E(errno.EINVAL), DISK_RESIZE, resize(0x20 | BY_INDEX, 2, 2000))
expect("RESIZE pad", E(errno.EINVAL), DISK_RESIZE, resize(BY_INDEX, 2, 2000, pad=1))
expect("RESIZE shrink", E(errno.EINVAL), DISK_RESIZE, resize(BY_INDEX, 2, 10))
expect("RESIZE too big", E(errno.EINVAL), DISK_RESIZE, resize(BY_INDEX, 2, 1 << 30))

# DISK_ADD
z = os.open(work + "/zero.img", os.O_RDWR | os.O_CREAT)
os.truncate(z, 64 << 20)
expect("ADD flags", E(errno.EINVAL), DISK_ADD, disk(1, 0), path=work + "/zero.img", fd=os.dup(z))
expect("ADD not bcachefs", E(errno.EINVAL), DISK_ADD, disk(0, 0), path=work + "/zero.img", fd=z)
s = os.open(work + "/small.img", os.O_RDWR)
expect("ADD block size", E(errno.EINVAL), DISK_ADD, disk(0, 0), path=work + "/small.img", fd=s)
m = os.open(b, os.O_RDWR)
_, msg = expect("ADD a member", E(errno.EBUSY), DISK_ADD, disk(0, 0), path=b, fd=m)

# DISK_REMOVE (no data moved first: the 2018 ioctl)
expect("REMOVE flags", E(errno.EINVAL), DISK_REMOVE, disk(0x40 | BY_INDEX, 0))
expect("REMOVE pad", E(errno.EINVAL), DISK_REMOVE, disk(BY_INDEX, 0, pad=1))
expect("REMOVE dev 9", E(errno.EINVAL), DISK_REMOVE, disk(BY_INDEX, 9))
expect("REMOVE metadata lost", E(errno.EINVAL), DISK_REMOVE, disk(BY_INDEX | FORCE_IF_METADATA_LOST, 0))
expect("REMOVE degraded", E(errno.EINVAL), DISK_REMOVE, disk(BY_INDEX, 0))

# DATA: bad op, flags, device; the 2018 tools' 112-byte request
expect("DATA op 3", E(errno.EINVAL), DATA, data(3))
expect("DATA flags", E(errno.EINVAL), DATA, data(1, flags=1))
expect("DATA dev 9", E(errno.EINVAL), DATA, data(2, dev=9))
for nr, arg in ((DATA_V2, data(1, v2=True)), (DATA, data(0))):
    ret, _, msg, jfd = ctl.call(nr, arg)
    assert ret == 0 and jfd is not None, (ret, msg)
    seen = set()
    for _ in range(600):
        dt, bt, done, total = job_progress(jfd)
        seen.add(dt)
        if dt == 255:
            break
        time.sleep(0.05)
    assert dt == 255, "the job did not end"
    d, r, errors, report = job_result(jfd)
    assert d == 1 and r == 0 and errors == 0, (d, r, errors, report)
    os.close(jfd)
print("ABI checks passed")
PY

# not root: usage yes, anything else EPERM
# (the client is copied into $WORK: the checkout may sit where nobody can read)
chmod 755 "$WORK"
mkdir -p "$WORK/py" && cp "$TESTDIR/ctl_client.py" "$WORK/py/" && chmod -R a+rX "$WORK/py"
# (a python that nobody may run: not a shim under /root)
if command -v setpriv > /dev/null && [ -x /usr/bin/python3 ]; then
	setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 - "$WORK/py" "$uuid" <<'PY' || fail "unprivileged caller"
import errno, sys
sys.path.insert(0, sys.argv[1])
from ctl_client import *
c = Ctl(sys.argv[2])
assert c.call(USAGE, usage(3))[0] == 0
assert c.call(QUERY_UUID, b"\0" * 16)[0] == 0
for nr, arg in ((DISK_SET_STATE, set_state(BY_INDEX, 1, 0)), (READ_SUPER, read_super(0, 0, 65536)),
                (DATA, data(1)), (DISK_RESIZE, resize(BY_INDEX, 0, 5000))):
    ret, _, msg, _ = c.call(nr, arg)
    assert ret == -errno.EPERM, (hex(nr), ret, msg)
PY
fi
unmount_fg r
fsck_clean abi "$a" "$b" "$c"

# ---- the command-line force flags on data with one copy ----
p=$WORK/p.img q=$WORK/q.img
mkimg p.img 128M
mkimg q.img 128M
run_ok format1 "$BCACHEFS" format -q "$p" "$q"
mount_fg one "$p:$q"
for i in $(seq 1 30); do head -c 100000 /dev/urandom > "$mnt/f$i"; done
run_fails lost 1 "Cannot remove without losing data" "$BCACHEFS" device remove --no-evacuate "$q"
run_fails lost-meta 1 "not supported" "$BCACHEFS" device remove --no-evacuate --force-metadata "$q"
run_fails offline-lost 1 "no copy left" "$BCACHEFS" device offline -f "$q"
run_fails failed-lost 1 "no copy left" "$BCACHEFS" device set-state -f "$q" failed
run_ok lost-f "$BCACHEFS" device remove --no-evacuate -f "$q"
# the files that had data on it now read as errors (the data is lost)
nerr=0
for i in $(seq 1 30); do cat "$mnt/f$i" > /dev/null 2>&1 || nerr=$((nerr + 1)); done
[ $nerr -gt 0 ] || fail "no file lost its data with device remove -f"
unmount_fg one
fsck_clean lost "$p"
