#!/usr/bin/env python3
"""Helpers of test_mount_enospc.sh: a full filesystem, call by call.

    enospc_ops.py small ROOT OUT
        Files of 4 KiB (and, every 8th, an empty one) in ROOT/small/ until
        200 calls in a row fail; every failure must be ENOSPC. The names
        whose create failed are written to OUT (one a line): none of them
        may exist. Prints the counts.
    enospc_ops.py absent ROOT LIST
        None of the names in LIST exists under ROOT/small (readdir and
        lstat); exits 1 when one does.
    enospc_ops.py fill4k ROOT
        Files of 4 KiB in ROOT/d/ until a create or a write fails with
        ENOSPC (a file whose write failed is removed).
    enospc_ops.py ops ROOT
        On a filesystem full of 4 KiB files: create, mkdir, symlink,
        rename, unlink, then a create and a 4 KiB write after the unlink;
        one line per call, "NAME ok" or "NAME ERRNONAME". A call that
        failed must have left nothing (checked, "NAME trace" otherwise).
"""
import errno
import os
import sys


def err_name(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def small(root, out):
    d = os.path.join(root, 'small')
    os.makedirs(d, exist_ok=True)
    failed, ok, fails, i = [], 0, 0, 0
    while fails < 200:
        i += 1
        name = 's%06d' % i
        p = os.path.join(d, name)
        try:
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
            failed.append(name)
            fails += 1
            continue
        try:
            if i % 8:
                os.write(fd, b'x' * 4096)
            ok += 1
            fails = 0
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
            fails += 1
        finally:
            os.close(fd)
    open(out, 'w').write(''.join(n + '\n' for n in failed))
    print('small files: %d created, %d creates refused (ENOSPC)' % (ok, len(failed)))
    return absent(root, out)


def absent(root, lst):
    d = os.path.join(root, 'small')
    names = set(os.listdir(d))
    bad = 0
    for n in open(lst).read().split():
        if n in names or os.path.lexists(os.path.join(d, n)):
            print('%s: its create returned ENOSPC, but it exists' % n)
            bad += 1
    return 1 if bad else 0


def fill4k(root):
    d = os.path.join(root, 'd')
    os.makedirs(d, exist_ok=True)
    n = 0
    while True:
        p = os.path.join(d, '%06d' % n)
        try:
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
            break
        try:
            os.write(fd, b'y' * 4096)
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
            os.close(fd)
            os.unlink(p)
            break
        os.close(fd)
        n += 1
    print('%d files of 4 KiB' % n)
    return 0


def ops(root):
    d = os.path.join(root, 'd')
    j = lambda n: os.path.join(root, n)
    first, second = sorted(os.listdir(d))[:2]

    def call(name, fn, gone):
        try:
            fn()
            print(name, 'ok')
        except OSError as e:
            # a failed call leaves nothing
            print(name, 'trace' if gone and os.path.lexists(gone) else err_name(e))

    call('create', lambda: os.close(os.open(j('new-file'), os.O_CREAT | os.O_EXCL | os.O_WRONLY)),
         j('new-file'))
    call('mkdir', lambda: os.mkdir(j('new-dir')), j('new-dir'))
    call('symlink', lambda: os.symlink('d/' + first, j('new-link')), j('new-link'))
    call('rename', lambda: os.rename(os.path.join(d, first), j('renamed')), j('renamed'))
    call('unlink', lambda: os.unlink(os.path.join(d, second)), None)

    def create_write():
        fd = os.open(j('after-unlink'), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        try:
            os.write(fd, b'z' * 4096)
        finally:
            os.close(fd)
    call('create+write-after-unlink', create_write, None)
    return 0


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'small':
        sys.exit(small(sys.argv[2], sys.argv[3]))
    if cmd == 'absent':
        sys.exit(absent(sys.argv[2], sys.argv[3]))
    if cmd == 'fill4k':
        sys.exit(fill4k(sys.argv[2]))
    sys.exit(ops(sys.argv[2]))
