#!/bin/sh
# A read-write mount keeps the superblock version: a version-8
# filesystem (a fresh image with the version field of every superblock copy
# set to 8, checksums recomputed: nothing else differs for an unencrypted
# filesystem) is written through a read-write mount, and every superblock
# copy still says 8 afterwards (before, it silently became 9, which the
# tools of the version-8 era cannot open); so does fsck -y's. Only
# -o version_upgrade writes version 9, with a log line saying so.
. "$TESTDIR/../lib.sh"
fuse_mount_setup
img=$WORK/v8.img
truncate -s 128M "$img"
"$BCACHEFS" format -q "$img" > /dev/null || fail "format"

# v8 IMG set|get: the version of every superblock copy (set: to 8)
cat > "$WORK/v8.py" <<'EOF'
import struct, sys
T = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    T.append(c)
def crc32c(b):
    crc = 0xffffffff
    for x in b:
        crc = T[(crc ^ x) & 0xff] ^ (crc >> 8)
    return crc ^ 0xffffffff
f = open(sys.argv[1], 'r+b')
f.seek(7 * 512)
l = f.read(512)
seen = []
for i in range(l[18]):
    off = struct.unpack_from('<Q', l, 24 + 8 * i)[0]
    f.seek(off * 512)
    sb = bytearray(f.read(65536))
    sb = sb[:752 + 8 * struct.unpack_from('<I', sb, 124)[0]]
    if sys.argv[2] == 'set':
        struct.pack_into('<H', sb, 16, 8)
        struct.pack_into('<QQ', sb, 0, crc32c(sb[16:]), 0)
        f.seek(off * 512)
        f.write(sb)
    seen.append(str(struct.unpack_from('<H', sb, 16)[0]))
print(" ".join(seen))
EOF
versions() { python3 "$WORK/v8.py" "$1" get; }
python3 "$WORK/v8.py" "$img" set > /dev/null || fail "patching the version"
"$BCACHEFS" show-super "$img" | grep -q "^Version:[[:space:]]*8$" || fail "the patched image does not read as version 8"
"$BCACHEFS" fsck -f -n "$img" > "$WORK/fsck0.out" 2>&1 || { cat "$WORK/fsck0.out"; fail "the version-8 image is not clean"; }

mount_fg rw "$img"
python3 "$TESTDIR/../format/gen_tree.py" "$mnt/tree" 30 2 > /dev/null || fail "gen_tree"
unmount_fg rw
v=$(versions "$img")
case " $v " in *" 9 "*) fail "a read-write mount wrote version 9 (copies: $v)";; esac
"$BCACHEFS" show-super "$img" | grep -q "^Version:[[:space:]]*8$" || fail "show-super: not version 8 after the mount"
grep -q "upgrad" "$WORK/rw.log" && fail "the mount says it upgrades without -o version_upgrade"
"$BCACHEFS" fsck -f -y "$img" > "$WORK/fsck1.out" 2>&1 || { cat "$WORK/fsck1.out"; fail "fsck after the mount"; }
v=$(versions "$img")
case " $v " in *" 9 "*) fail "fsck -y wrote version 9 (copies: $v)";; esac

mount_fg up "$img" -o version_upgrade
grep -q "upgraded the superblocks from version 8 to 9 (-o version_upgrade)" "$WORK/up.log" ||
	{ cat "$WORK/up.log"; fail "no log line for the upgrade"; }
unmount_fg up
v=$(versions "$img")
case " $v " in *" 8 "*) fail "-o version_upgrade left version 8 (copies: $v)";; esac
"$BCACHEFS" show-super "$img" | grep -q "^Version:[[:space:]]*9$" || fail "show-super: not version 9 after the upgrade"
"$BCACHEFS" fsck -f -n "$img" > "$WORK/fsck2.out" 2>&1 || { cat "$WORK/fsck2.out"; fail "fsck after the upgrade"; }
exit 0
