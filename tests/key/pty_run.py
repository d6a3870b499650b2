#!/usr/bin/env python3
"""pty_run.py CMD... : run CMD on a pseudo-terminal and type the lines given
in the environment variable PTY_INPUT (separated by '|'), each one after
a prompt ending in ': ' was printed and echo was turned off. Prints what
the terminal showed, exits with the command's exit status."""
import os, pty, select, sys, termios, time

def main():
    inputs = [l.encode() + b'\n' for l in os.environ.get('PTY_INPUT', '').split('|') if l != '']
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(sys.argv[1], sys.argv[1:])
    out = b''

    def read_some(timeout):
        nonlocal out
        r, _, _ = select.select([fd], [], [], timeout)
        if not r:
            return False
        try:
            d = os.read(fd, 4096)
        except OSError:
            d = b''
        out += d
        return bool(d)

    for line in inputs:
        deadline = time.time() + 30
        seen = len(out)
        while time.time() < deadline:
            if out[seen:].rstrip(b'\r\n').endswith(b': '):
                break
            if not read_some(0.1) and not out[seen:]:
                pass
        while time.time() < deadline and termios.tcgetattr(fd)[3] & termios.ECHO:
            time.sleep(0.01)
        os.write(fd, line)
    while read_some(30):
        pass
    _, st = os.waitpid(pid, 0)
    sys.stdout.write(out.decode(errors='replace').replace('\r', ''))
    sys.exit(os.waitstatus_to_exitcode(st))

main()
