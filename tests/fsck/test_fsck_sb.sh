#!/bin/sh
# fsck and the superblock copies (doc/format.md §2.12, §2.14), on a fresh
# two-device filesystem:
#   - a backup copy with a bad checksum, or valid but different from the
#     copy in use (any field but offset and csum), on either device:
#     sb_backup_bad with the device and the sector; -n exits 4 and writes
#     nothing, -y rewrites every copy (exit 1), then fsck is clean and the
#     copies of each device differ only in offset and csum;
#   - a primary that reads but fails validation (time_precision 0,
#     checksum right): the open falls back to the backup (sb_primary_bad,
#     "using the backup"), -y rewrites the primary;
#   - every copy invalid: refused (exit 8) saying that no copy is usable.
set -u
. "$(dirname "$0")/../lib.sh"
: "${BCACHEFS:?}" "${WORK:=$(mktemp -d)}"
command -v python3 > /dev/null || { echo "python3 missing"; exit 77; }
fail=0
A=$WORK/a.img B=$WORK/b.img

# sbpatch IMG COPY OFFSET HEX [nosum]: write HEX at byte OFFSET of superblock
# copy COPY (0 = primary, 1 = backup, from the layout at sector 7), then
# recompute its checksum (crc32c_nonzero, the default) unless "nosum".
# sbsame IMG: exit 0 when the copies differ only in offset and csum.
cat > "$WORK/sb.py" <<'EOF'
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
def offsets(f):
    f.seek(7 * 512)
    l = f.read(512)
    return [struct.unpack_from('<Q', l, 24 + 8 * i)[0] for i in range(l[18])]
def read(f, off):
    f.seek(off * 512)
    sb = bytearray(f.read(65536))
    return sb[:752 + 8 * struct.unpack_from('<I', sb, 124)[0]]
f = open(sys.argv[2], 'r+b')
if sys.argv[1] == 'patch':
    off = offsets(f)[int(sys.argv[3])]
    sb = read(f, off)
    p = int(sys.argv[4])
    sb[p:p + len(bytes.fromhex(sys.argv[5]))] = bytes.fromhex(sys.argv[5])
    if len(sys.argv) < 7:
        struct.pack_into('<QQ', sb, 0, crc32c(sb[16:]), 0)
    f.seek(off * 512)
    f.write(sb)
else:
    c = [read(f, o) for o in offsets(f)]
    for s in c:
        s[0:16] = bytes(16)
        s[104:112] = bytes(8)
    sys.exit(0 if all(s == c[0] for s in c) else 1)
EOF
sbpatch() { python3 "$WORK/sb.py" patch "$@"; }
sbsame() { python3 "$WORK/sb.py" same "$1"; }
backup_sector() { python3 -c "import struct,sys; f=open(sys.argv[1],'rb'); f.seek(7*512+32); print(struct.unpack('<Q', f.read(8))[0])" "$1"; }

fresh() {
	rm -f "$A" "$B"
	truncate -s 16M "$A" "$B"
	"$BCACHEFS" format -q --force "$A" "$B" > /dev/null || { echo "FAIL: format"; exit 1; }
}

# check NAME WANT-REGEX: fsck -f -n reports it (exit 4, nothing written), -y
# fixes it (exit 1), then fsck -f -n is clean and every device's copies agree
check() {
	name=$1 want=$2
	cat "$A" "$B" | cksum > "$WORK/before"
	"$BCACHEFS" fsck -f -n "$A" "$B" > "$WORK/n.out" 2>&1
	rc=$?
	crashed $rc && { echo "FAIL $name: fsck -f -n crashed"; fail=1; }
	[ $rc = 4 ] || { echo "FAIL $name: fsck -f -n exit $rc, want 4"; cat "$WORK/n.out"; fail=1; }
	grep -q -- "$want" "$WORK/n.out" ||
		{ echo "FAIL $name: fsck -f -n does not say: $want"; cat "$WORK/n.out"; fail=1; }
	cat "$A" "$B" | cksum | cmp -s - "$WORK/before" || { echo "FAIL $name: fsck -f -n wrote"; fail=1; }
	"$BCACHEFS" fsck -y "$A" "$B" > "$WORK/y.out" 2>&1
	rc=$?
	[ $rc = 1 ] || { echo "FAIL $name: fsck -y exit $rc, want 1"; cat "$WORK/y.out"; fail=1; }
	"$BCACHEFS" fsck -f -n "$A" "$B" > "$WORK/n2.out" 2>&1
	rc=$?
	[ $rc = 0 ] || { echo "FAIL $name: fsck -f -n after -y exit $rc"; cat "$WORK/n2.out"; fail=1; }
	for i in "$A" "$B"; do
		sbsame "$i" || { echo "FAIL $name: the copies of $i still differ"; fail=1; }
	done
	[ $fail = 0 ] && echo "ok   $name"
}

fresh
"$BCACHEFS" fsck -f -n "$A" "$B" > "$WORK/clean.out" 2>&1 ||
	{ echo "FAIL: fresh filesystem not clean"; cat "$WORK/clean.out"; fail=1; }
sbsame "$A" && sbsame "$B" || { echo "FAIL: fresh copies differ"; fail=1; }
bs=$(backup_sector "$B")

# a label byte of b's backup, checksum not updated
sbpatch "$B" 1 72 41 nosum
check "backup bad checksum" "b.img: backup superblock at sector $bs: bad checksum"

# a's backup with another label, checksum right
fresh
sbpatch "$A" 1 72 4f746865724c6162656c
check "backup differs" "a.img: backup superblock at sector $bs differs from the superblock in use (sector 8): label"

# b's backup with another seq and time_precision 0 (valid checksum, invalid)
fresh
sbpatch "$B" 1 140 00000000
check "backup invalid" "b.img: backup superblock at sector $bs: invalid superblock: time precision 0"

# a's primary invalid (time_precision 0), checksum right: the backup is used
fresh
sbpatch "$A" 0 140 00000000
"$BCACHEFS" list -b inodes "$A" "$B" > "$WORK/list.out" 2>&1 ||
	{ echo "FAIL primary invalid: list does not fall back to the backup"; cat "$WORK/list.out"; fail=1; }
check "primary invalid" "a.img: superblock at sector 8: invalid superblock: time precision 0 ns .*; using the backup at sector $bs"
prec=$(python3 -c "import struct,sys; f=open(sys.argv[1],'rb'); f.seek(8*512+140); print(struct.unpack('<I', f.read(4))[0])" "$A")
[ "$prec" != 0 ] || { echo "FAIL primary invalid: primary not rewritten (time_precision 0)"; fail=1; }

# every copy of a invalid: refused, saying so
fresh
sbpatch "$A" 0 140 00000000
sbpatch "$A" 1 140 00000000
"$BCACHEFS" fsck -y "$A" "$B" > "$WORK/both.out" 2>&1
rc=$?
[ $rc = 8 ] || { echo "FAIL both invalid: fsck -y exit $rc, want 8"; fail=1; }
grep -q "every superblock copy is damaged or invalid" "$WORK/both.out" ||
	{ echo "FAIL both invalid: message"; cat "$WORK/both.out"; fail=1; }
[ $rc = 8 ] && echo "ok   both copies invalid: refused"

exit $fail
