#!/bin/sh
# Damage inside data extents written by format --source (the extent's
# sectors found with `list -b extents` pointer offsets, then bytes flipped
# in the image):
#   - 2 replicas (--replicas=2 on 2 devices), one copy damaged: extract
#     and the FUSE mount still return the right data, extract says on
#     stderr which copy was bad and that the data came from another one;
#     both copies damaged: EIO naming the file and the offset;
#   - 1 replica: extract fails with EIO naming the file, inode and offset,
#     reading through the mount fails with EIO;
#   - encrypted (plain and lz4-compressed extents): a ciphertext byte
#     flipped makes the MAC wrong: never any plaintext of the damaged
#     extent (extract fails, --ignore-errors writes zeroes, the mount
#     gives EIO); with 2 replicas the other copy is used.
. "$TESTDIR/../lib.sh"
command -v python3 > /dev/null || { echo "python3 needed"; exit 77; }
cd "$WORK" || exit 1
printf 'damage-pass\n' > pass
mnt=$WORK/mnt
mkdir -p "$mnt"
can_mount=1
{ [ -c /dev/fuse ] && command -v fusermount3 > /dev/null; } || can_mount=""
trap 'fusermount3 -u -z "$mnt" 2>/dev/null' EXIT
trap 'fusermount3 -u -z "$mnt" 2>/dev/null; exit 1' INT TERM

mkdir -p src/d
head -c 65536 /dev/urandom > src/d/victim
python3 -c "
import sys
sys.stdout.buffer.write(b''.join(b'%06d compressible line of text\n' % i for i in range(2000)))" > src/d/text
head -c 20000 /dev/urandom > src/other
echo "untouched" > src/d/small

# new NAME NDEV [FORMAT OPTIONS]: fresh images $NAME.N.img, sets $imgs
new() {
	name=$1 ndev=$2
	shift 2
	imgs="" i=0
	while [ $i -lt "$ndev" ]; do
		rm -f "$name.$i.img"; truncate -s 64M "$name.$i.img"
		imgs="$imgs $name.$i.img"; i=$((i + 1))
	done
	"$BCACHEFS" format -q --source=src "$@" $imgs > out 2>&1 < /dev/null || { cat out; fail "$name: format"; }
}

# ino FILE: $inum = the inode number of d/FILE
ino() {
	inum=$("$BCACHEFS" list -b dirents $popt $imgs | sed -n "s/.*: $1 -> \([0-9]*\)\$/\1/p")
	[ -n "$inum" ] || fail "$name: $1 not found"
}

# sector DEV: the sector on device DEV of the first extent of inode $inum
sector() {
	"$BCACHEFS" list -b extents -i $inum $popt $imgs | head -n 1 |
		sed -n "s/.* ptr: $1:\([0-9]*\) gen.*/\1/p"
}

# flip IMG SECTOR: invert 2 bytes 300 bytes into SECTOR
flip() {
	python3 - "$1" $(($2 * 512 + 300)) <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(2)
    f.seek(int(sys.argv[2])); f.write(bytes(x ^ 0xff for x in b))
PY
}

# mount_cat FILE OUT: read d/FILE through the mount into OUT; exit status of cat
mount_cat() {
	"$BCACHEFS" mount -f -o ro $popt "$(echo $imgs | tr ' ' :)" "$mnt" > mount.log 2>&1 < /dev/null &
	pid=$!
	i=0
	until awk -v m="$mnt" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; do
		kill -0 $pid 2>/dev/null || { cat mount.log; fail "$name: mount exited"; }
		i=$((i + 1)); [ $i -lt 200 ] || fail "$name: not mounted after 10 s"
		sleep 0.05
	done
	cat "$mnt/d/$1" > "$2" 2> cat.err
	crc=$?
	cmp -s "$mnt/d/small" src/d/small || fail "$name: an undamaged file reads wrong through the mount"
	fusermount3 -u "$mnt" || fail "$name: fusermount3 -u"
	wait $pid
	rc=$?
	crashed $rc && { cat mount.log; fail "$name: mount crashed"; }
	return $crc
}

# no_plaintext FILE OUT: no 16-byte piece of OUT equals the source file's
# at the same offset, in the part the damaged extent (the first, $len
# sectors) holds
no_plaintext() {
	python3 - "src/d/$1" "$2" $((len * 512)) <<'PY'
import sys
src, out = open(sys.argv[1], "rb").read()[:int(sys.argv[3])], open(sys.argv[2], "rb").read()
for i in range(0, len(src) - 16, 16):
    piece = src[i:i + 16]
    if piece.strip(b"\0") and out[i:i + 16] == piece:
        print("plaintext of offset", i, "returned"); sys.exit(1)
PY
}

popt=""
# ---- 2 replicas: one copy bad, then both ----
new rep2 2 --replicas=2
ino victim
s0=$(sector 0) s1=$(sector 1)
[ -n "$s0" ] && [ -n "$s1" ] || fail "rep2: no pointer on each device"
flip rep2.0.img "$s0"
rm -f v; "$BCACHEFS" extract $imgs /d/victim v 2> err
rc=$?; cat err
crashed $rc && fail "rep2: extract crashed"
[ $rc = 0 ] || fail "rep2: extract with one good copy: exit $rc"
cmp -s v src/d/victim || fail "rep2: wrong data with one good copy"
grep -qi "checksum error on device 0 sector $s0" err || fail "rep2: the bad copy is not reported"
grep -q "another replica" err || fail "rep2: does not say the data came from another copy"
echo "ok   rep2: one copy damaged: right data, reported"
if [ -n "$can_mount" ]; then
	mount_cat victim mv || { cat cat.err; fail "rep2: read through the mount failed"; }
	cmp -s mv src/d/victim || fail "rep2: wrong data through the mount"
	grep -qi "checksum" mount.log && echo "ok   rep2: mount: right data, the bad copy logged" ||
		echo "note rep2: mount: right data, but the bad copy is not logged"
fi
flip rep2.1.img "$s1"
rm -f v; "$BCACHEFS" extract $imgs /d/victim v 2> err
rc=$?; cat err
crashed $rc && fail "rep2 both: extract crashed"
[ $rc != 0 ] || fail "rep2: both copies damaged, extract exit 0"
grep -q "d/victim" err && grep -q "inode $inum offset 0" err || fail "rep2 both: file/offset not named"
[ -z "$(tr -d '\0' < v 2>/dev/null)" ] || fail "rep2 both: damaged data returned"
echo "ok   rep2: both copies damaged: EIO, file and offset named"

# ---- 1 replica ----
new rep1 1
ino victim
s0=$(sector 0)
flip rep1.0.img "$s0"
rm -f v; "$BCACHEFS" extract $imgs /d/victim v 2> err
rc=$?; cat err
crashed $rc && fail "rep1: extract crashed"
[ $rc != 0 ] || fail "rep1: extract of a damaged file: exit 0"
grep -q "d/victim" err || fail "rep1: file not named"
grep -q "inode $inum offset 0" err || fail "rep1: inode and offset not named"
grep -q "Input/output error\|checksum" err || fail "rep1: not an I/O / checksum error"
rm -rf all; "$BCACHEFS" extract --ignore-errors $imgs / all 2> err
[ $? != 0 ] || fail "rep1: --ignore-errors exit 0"
cmp -s all/d/small src/d/small && cmp -s all/other src/other && cmp -s all/d/text src/d/text ||
	fail "rep1: undamaged files differ"
echo "ok   rep1: EIO naming the file and offset; the rest extracts"
if [ -n "$can_mount" ]; then
	mount_cat victim mv && fail "rep1: damaged file read through the mount without error"
	grep -q "Input/output error" cat.err || { cat cat.err; fail "rep1: mount: not EIO"; }
	echo "ok   rep1: mount: EIO"
fi

# ---- encrypted: a wrong MAC never returns plaintext ----
for comp in none lz4; do
	name=enc_$comp
	popt="--passphrase-file pass"
	new $name 1 --encrypted --passphrase_file=pass --compression_type=$comp
	f=victim; [ $comp = lz4 ] && f=text
	ino $f
	"$BCACHEFS" list -b extents -i $inum $popt $imgs | head -n 1 | grep -q " csum [34] " ||
		fail "$name: $f has no MAC"
	s0=$(sector 0)
	len=$("$BCACHEFS" list -b extents -i $inum $popt $imgs | head -n 1 | sed -n 's/.* len \([0-9]*\) .*/\1/p')
	[ -n "$len" ] || fail "$name: extent length"
	flip $name.0.img "$s0"
	rm -f v; "$BCACHEFS" extract $popt $imgs /d/$f v 2> err
	rc=$?; cat err
	crashed $rc && fail "$name: extract crashed"
	[ $rc != 0 ] || fail "$name: extract with a wrong MAC: exit 0"
	grep -q "d/$f" err && grep -q "inode $inum offset 0" err || fail "$name: file/offset not named"
	[ -f v ] && { no_plaintext $f v || fail "$name: plaintext returned by extract"; }
	rm -rf all; "$BCACHEFS" extract --ignore-errors $popt $imgs / all 2> err
	no_plaintext $f all/d/$f || fail "$name: plaintext returned by extract --ignore-errors"
	cmp -s all/d/small src/d/small || fail "$name: undamaged file differs"
	if [ -n "$can_mount" ]; then
		mount_cat $f mv && fail "$name: read through the mount without error"
		no_plaintext $f mv || fail "$name: plaintext returned through the mount"
	fi
	echo "ok   $name: wrong MAC: EIO, no plaintext"
done

# encrypted with 2 replicas: the good copy is used
name=enc_rep2
new $name 2 --replicas=2 --encrypted --passphrase_file=pass
ino victim
s0=$(sector 0)
flip $name.0.img "$s0"
rm -f v; "$BCACHEFS" extract $popt $imgs /d/victim v 2> err || { cat err; fail "$name: extract failed"; }
cmp -s v src/d/victim || fail "$name: wrong data"
grep -q "another replica" err || fail "$name: not reported"
echo "ok   $name: one copy with a wrong MAC: right data from the other"
exit 0
