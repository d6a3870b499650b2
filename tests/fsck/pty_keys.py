#!/usr/bin/env python3
"""pty_keys.py KEYS CMD... : run CMD on a pseudo-terminal; each time it
prints a question (text ending in '<y> '), type the next key of KEYS
(comma separated: a character, ENTER, CTRL-C or CTRL-D), without a
newline. Prints what the terminal showed, then 'exit N' (128 + signal
when killed); exits 0. Gives up after 30 s (exit 124)."""
import os, pty, select, sys, time

KEYS = {'ENTER': b'\r', 'CTRL-C': b'\x03', 'CTRL-D': b'\x04'}

def main():
    keys = [KEYS.get(k, k.encode()) for k in sys.argv[1].split(',') if k]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(sys.argv[2], sys.argv[2:])
    out, seen, deadline = b'', 0, time.time() + 30
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                d = os.read(fd, 4096)
            except OSError:
                d = b''
            if not d:
                break
            out += d
        if keys and out.count(b'<y> ') > seen:
            seen += 1
            time.sleep(0.05)
            os.write(fd, keys.pop(0))
    else:
        os.kill(pid, 9)
        sys.stdout.write(out.decode(errors='replace') + '\nexit 124\n')
        return
    _, st = os.waitpid(pid, 0)
    rc = os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st)
    sys.stdout.write(out.decode(errors='replace').replace('\r\n', '\n') + '\nexit %d\n' % rc)

main()
