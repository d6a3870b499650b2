#!/usr/bin/env python3
"""Print the guest byte offsets of the allocated clusters of a qcow2 image.

    qcow2_map.py IMAGE            one line per run: "START LENGTH" (bytes, decimal)
    qcow2_map.py --header IMAGE   the header fields, one "name value" per line

Reads the L1/L2 tables itself (no refcount table needed), so it also reads
the images the 2018 tool wrote, which qemu-img refuses. Exit 1 on anything
that is not a qcow2 version 2 or 3 image with valid table offsets."""
import struct, sys


def main():
    args = sys.argv[1:]
    header = args and args[0] == "--header"
    if header:
        args = args[1:]
    with open(args[0], "rb") as f:
        data = f.read()
    if len(data) < 72 or data[:4] != b"QFI\xfb":
        sys.exit("%s: not a qcow2 image" % args[0])
    (version, _bfo, _bfs, cbits, size, crypt, l1_size, l1_off, rt_off, rt_clusters,
     nb_snap, _snap_off) = struct.unpack(">IQIIQIIQQIIQ", data[4:72])
    if version not in (2, 3) or not 9 <= cbits <= 21:
        sys.exit("%s: version %d cluster_bits %d not supported" % (args[0], version, cbits))
    if header:
        for k, v in (("version", version), ("cluster_bits", cbits), ("size", size),
                     ("crypt_method", crypt), ("l1_size", l1_size), ("l1_table_offset", l1_off),
                     ("refcount_table_offset", rt_off),
                     ("refcount_table_clusters", rt_clusters), ("nb_snapshots", nb_snap)):
            print(k, v)
        return
    cs = 1 << cbits
    per_l2 = cs // 8
    mask = (1 << 56) - 1 - (cs - 1)   # host offset bits 9..55, cluster aligned
    runs = []
    for i in range(l1_size):
        (e,) = struct.unpack_from(">Q", data, l1_off + 8 * i)
        l2 = e & mask
        if not l2:
            continue
        for j in range(per_l2):
            (d,) = struct.unpack_from(">Q", data, l2 + 8 * j)
            if not d & mask:
                continue
            g = (i * per_l2 + j) * cs
            if runs and runs[-1][0] + runs[-1][1] == g:
                runs[-1][1] += cs
            else:
                runs.append([g, cs])
    for s, n in runs:
        print(s, n)


main()
