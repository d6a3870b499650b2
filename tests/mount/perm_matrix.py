#!/usr/bin/env python3
"""perm_matrix.py DIR: the same permission matrix on any filesystem.

Run as root: sets up DIR/pm (files and folders of root and of uid 65534
with several modes), then runs each operation in a child as uid/gid 65534
and prints one line per operation: "NAME ok" or "NAME ERRNO_NAME". Two
filesystems that check permissions alike print the same lines.
"""
import errno, os, sys

U = G = 65534
top = os.path.join(sys.argv[1], "pm")
os.mkdir(top, 0o755)
def mk(path, mode, uid=0, data=b"data\n"):
    p = os.path.join(top, path)
    with open(p, "wb") as f:
        f.write(data)
    os.chmod(p, mode)
    os.chown(p, uid, uid)
def md(path, mode, uid=0):
    p = os.path.join(top, path)
    os.mkdir(p)
    os.chmod(p, mode)
    os.chown(p, uid, uid)
md("open", 0o777)
md("closed", 0o755)
md("private", 0o700)
md("sticky", 0o1777)
md("mine", 0o755, U)
mk("r644", 0o644)
mk("r600", 0o600)
mk("r666", 0o666)
mk("x755", 0o755, data=b"#!/bin/sh\nexit 0\n")
mk("private/f", 0o644)
mk("sticky/roots", 0o666)
mk("sticky/theirs", 0o644, U)
mk("mine/f", 0o600, U)
mk("closed/f", 0o666)

def P(n):
    return os.path.join(top, n)

ops = [
    ("read r644", lambda: open(P("r644"), "rb").read()),
    ("read r600", lambda: open(P("r600"), "rb").read()),
    ("write r644", lambda: open(P("r644"), "ab").write(b"x")),
    ("write r666", lambda: open(P("r666"), "ab").write(b"x")),
    ("truncate r644", lambda: os.truncate(P("r644"), 0)),
    ("create in open", lambda: os.close(os.open(P("open/new"), os.O_CREAT | os.O_WRONLY, 0o644))),
    ("create in closed", lambda: os.close(os.open(P("closed/new"), os.O_CREAT | os.O_WRONLY, 0o644))),
    ("mkdir in closed", lambda: os.mkdir(P("closed/d"))),
    ("mkdir in open", lambda: os.mkdir(P("open/d"))),
    ("stat in private", lambda: os.stat(P("private/f"))),
    ("list private", lambda: os.listdir(P("private"))),
    ("list closed", lambda: os.listdir(P("closed"))),
    ("unlink in closed", lambda: os.unlink(P("closed/f"))),
    ("unlink root's in sticky", lambda: os.unlink(P("sticky/roots"))),
    ("unlink own in sticky", lambda: os.unlink(P("sticky/theirs"))),
    ("rename in closed", lambda: os.rename(P("closed/f"), P("closed/g"))),
    ("chmod r644", lambda: os.chmod(P("r644"), 0o777)),
    ("chmod own", lambda: os.chmod(P("mine/f"), 0o644)),
    ("chown own to root", lambda: os.chown(P("mine/f"), 0, 0)),
    ("utime now r666", lambda: os.utime(P("r666"))),
    ("utime set r666", lambda: os.utime(P("r666"), (1, 1))),
    ("utime now r644", lambda: os.utime(P("r644"))),
    ("exec x755", lambda: os.access(P("x755"), os.X_OK) or (_ for _ in ()).throw(OSError(errno.EACCES, "no"))),
    ("access w r644", lambda: os.access(P("r644"), os.W_OK) or (_ for _ in ()).throw(OSError(errno.EACCES, "no"))),
    ("symlink in closed", lambda: os.symlink("x", P("closed/l"))),
    ("link into open", lambda: os.link(P("mine/f"), P("open/hl"))),
    ("setxattr r644", lambda: os.setxattr(P("r644"), "user.t", b"v")),
    ("setxattr own", lambda: os.setxattr(P("mine/f"), "user.t", b"v")),
    ("read own 600", lambda: open(P("mine/f"), "rb").read()),
    ("mknod fifo in open", lambda: os.mkfifo(P("open/fifo"))),
    ("rmdir root's in sticky", lambda: (os.rmdir(P("sticky/none")))),
]
for name, fn in ops:
    pid = os.fork()
    if pid == 0:
        os.setgroups([])
        os.setgid(G)
        os.setuid(U)
        try:
            fn()
            print(name, "ok", flush=True)
        except OSError as e:
            print(name, errno.errorcode.get(e.errno, str(e.errno)), flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
