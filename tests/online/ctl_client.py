#!/usr/bin/env python3
"""A raw client of the mount's control socket (libbcachefs/admin/ctl_proto.h), for
tests that speak the ioctl ABI byte for byte: the seed's structs, the 2018
tools' 112-byte BCH_IOCTL_DATA, malformed requests.

    from ctl_client import Ctl, ioc
    c = Ctl(uuid)                     # $BCACHEFS_RUN_DIR/UUID/ctl
    ret, out, msg, fd = c.call(nr, arg_bytes, path=None, fd=None)
"""
import array, os, socket, struct

REQ_MAGIC = 0x4c544342
REPLY_MAGIC = 0x52544342
JOB_MAGIC = 0x424a4342


def ioc(direction, nr, size):
    return (direction << 30) | (size << 16) | (0xbc << 8) | nr


W, R, RW = 1, 2, 3
QUERY_UUID = ioc(R, 1, 16)
DISK_ADD = ioc(W, 4, 16)
DISK_REMOVE = ioc(W, 5, 16)
DISK_ONLINE = ioc(W, 6, 16)
DISK_OFFLINE = ioc(W, 7, 16)
DISK_SET_STATE = ioc(W, 8, 16)
DATA = ioc(W, 10, 56)
DATA_V2 = ioc(W, 10, 112)
USAGE = ioc(RW, 11, 256)
READ_SUPER = ioc(W, 12, 32)
DISK_GET_IDX = ioc(W, 13, 8)
DISK_RESIZE = ioc(W, 13, 24)
START = ioc(W, 2, 8)

FORCE_IF_DATA_LOST = 1
FORCE_IF_METADATA_LOST = 2
FORCE_IF_DATA_DEGRADED = 4
FORCE_IF_METADATA_DEGRADED = 8
FORCE_IF_DEGRADED = 12
BY_INDEX = 0x10
READ_DEV = 0x20

POS_MIN = struct.pack("<IQQ", 0, 0, 0)
POS_MAX = struct.pack("<IQQ", 0, 2**64 - 1, 2**64 - 1)


def disk(flags, dev, pad=0):
    return struct.pack("<IIQ", flags, pad, dev)


def set_state(flags, state, dev, pad=b"\0\0\0"):
    return struct.pack("<IB3sQ", flags, state, pad, dev)


def data(op, flags=0, dev=0, v2=False):
    a = struct.pack("<II", op, flags) + POS_MIN + POS_MAX + struct.pack("<II", dev, 0)
    return a + b"\0" * 56 if v2 else a


def resize(flags, dev, nbuckets, pad=0):
    return struct.pack("<IIQQ", flags, pad, dev, nbuckets)


def read_super(flags, dev, size, pad=0):
    return struct.pack("<IIQQQ", flags, pad, dev, size, 0)


def usage(nr_devices):
    return struct.pack("<H6x", nr_devices) + b"\0" * (248 + 120 * nr_devices)


class Ctl:
    def __init__(self, uuid):
        run = os.environ.get("BCACHEFS_RUN_DIR", "/run/bcachefs")
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.connect(os.path.join(run, uuid, "ctl"))

    def raw(self, payload, fds=()):
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
        self.s.sendmsg([payload], anc)
        return self.reply()

    def reply(self):
        msg, anc, flags, _ = self.s.recvmsg(1 << 20, socket.CMSG_SPACE(4))
        if not msg:
            raise EOFError("the mount closed the socket")
        magic, ret, out_bytes, msg_bytes = struct.unpack("<IiII", msg[:16])
        assert magic == REPLY_MAGIC and 16 + out_bytes + msg_bytes == len(msg), msg[:16]
        fd = None
        for level, kind, d in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fd = array.array("i", d[:4])[0]
        out = msg[16:16 + out_bytes]
        text = msg[16 + out_bytes:].decode(errors="replace")
        return ret, out, text, fd

    def call(self, nr, arg, path=None, fd=None):
        p = path.encode() if path else b""
        hdr = struct.pack("<IIII", REQ_MAGIC, nr, len(arg), len(p))
        return self.raw(hdr + arg + p, [fd] if fd is not None else ())


def job_progress(fd):
    """One 128-byte progress event: (data_type, btree_id, sectors_done, sectors_total)."""
    s = socket.socket(fileno=os.dup(fd))
    s.send(struct.pack("<II", JOB_MAGIC, 0))
    ev = s.recv(4096)
    s.detach()
    assert len(ev) == 128, len(ev)
    t, dt, bt = ev[0], ev[8], ev[9]
    done, total = struct.unpack("<QQ", ev[32:48])
    return dt, bt, done, total


def job_result(fd):
    """(done, ret, errors, report)"""
    s = socket.socket(fileno=os.dup(fd))
    s.send(struct.pack("<II", JOB_MAGIC, 1))
    r = s.recv(1 << 20)
    s.detach()
    magic, done, ret, msg_bytes, moved, extents, errors, repaired = struct.unpack("<IIiIQQQQ", r[:48])
    assert magic == JOB_MAGIC
    return done, ret, errors, r[48:48 + msg_bytes].decode(errors="replace")
