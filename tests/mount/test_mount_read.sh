#!/bin/sh
# File data through the FUSE mount, on the read-ahead path (uncompressed
# extents, read and verified ahead by the worker thread and answered from
# its buffers): reads at odd offsets and sizes across extents and holes
# equal the source, with direct I/O (the default; with crc32c, with no
# data checksum, where the worker reads the extents in pieces, and with
# compressed and encrypted data, which the worker decodes),
# -o kernel_cache (shared mmap works there) and -o noread_ahead (no
# worker); -v shows that the worker served the reads. A flipped byte in
# such an extent gives EIO (never the bad data) in each mode while the
# rest of the file still reads.
. "$TESTDIR/../lib.sh"
fuse_mount_setup
src=$WORK/src
img=$WORK/read.img
mkdir -p "$src"

head -c 3000000 /dev/urandom > "$src/big"
head -c 100000 /dev/urandom > "$src/holey"
dd if=/dev/urandom of="$src/holey" bs=4096 seek=300 count=20 conv=notrunc status=none
truncate -s 2000000 "$src/holey"
printf 'tiny' > "$src/tiny"
# striped: 4 KiB of data every 8 KiB, so that a 1 MiB read has more
# pieces than one reply takes (they are copied into one buffer then)
python3 -c 'import os, sys
with open(sys.argv[1], "wb") as f:
    for i in range(512):
        f.seek(i * 8192); f.write(os.urandom(4096))
    f.truncate(512 * 8192)' "$src/striped"
# compressible: stored compressed where the filesystem compresses
python3 -c 'import sys
for i in range(60000): sys.stdout.write("line %d of a compressible file\n" % (i * 7919 % 100003))' > "$src/text"
truncate -s 64M "$img"
"$BCACHEFS" format -q -f --source="$src" "$img" > "$WORK/format.log" 2>&1 ||
	{ cat "$WORK/format.log"; fail "format --source failed"; }

compare() {
	python3 - "$src" "$mnt" <<'PY' || fail "read through the mount differs from the source ($1)"
import os, random, sys
src, mnt = sys.argv[1:3]
r = random.Random(4)
for name in ("big", "holey", "tiny", "text", "striped"):
    a = open(os.path.join(src, name), "rb").read()
    with open(os.path.join(mnt, name), "rb") as f:
        if f.read() != a:
            sys.exit("%s: whole file differs" % name)
        for _ in range(200):
            off = r.randrange(0, len(a) + 10)
            n = r.choice([1, 511, 513, 4096, 65535, 70001, 600000, 1 << 20])
            f.seek(off)
            if f.read(n) != a[off:off + n]:
                sys.exit("%s: %d bytes at %d differ" % (name, n, off))
PY
}

# paced_read FILE: read FILE front to back, 64 KiB at a time with a pause
# between reads, as a reader that processes what it reads: the worker then
# has the time to read ahead, also on a loaded machine (a reader that
# comes first takes the region over; a plain `cat` on a machine busy with
# other tests did that for every region: "0 reads served, 30 taken over")
paced_read() {
	python3 - "$1" <<'PY'
import sys, time
with open(sys.argv[1], "rb") as f:
    while f.read(65536):
        time.sleep(0.05)
PY
}

# "read ahead: N regions read, M reads served from them, K taken over"
served() {
	sed -n 's/^read ahead: [0-9]* regions read, \([0-9]*\) reads served.*/\1/p' "$WORK/read.log"
}

mount_fg read "$img" -o ro -v
paced_read "$mnt/big" || fail "reading big failed"
compare "direct (default)"
unmount_fg read
n=$(served)
[ -n "$n" ] && [ "$n" -gt 10 ] || fail "the worker served ${n:-no} reads: $(cat "$WORK/read.log")"

mount_fg read "$img" -o ro -v -o noread_ahead
compare "noread_ahead"
unmount_fg read
[ "$(served)" = 0 ] || fail "noread_ahead: $(cat "$WORK/read.log")"

# data without checksum (extents of any length, read ahead in pieces),
# compressed, and encrypted and compressed (decoded by the worker)
img_csum=$img
img=$WORK/read-other.img
printf 'golden-pass\n' > "$WORK/pass"
for fopts in "--data_checksum=none" "--compression_type=zstd" \
	"--compression_type=lz4 --encrypted --passphrase_file=$WORK/pass"; do
	rm -f "$img"
	truncate -s 64M "$img"
	# shellcheck disable=SC2086
	"$BCACHEFS" format -q -f $fopts --source="$src" "$img" > "$WORK/format.log" 2>&1 ||
		{ cat "$WORK/format.log"; fail "format --source $fopts failed"; }
	popt=""
	case $fopts in *--encrypted*) popt="--passphrase-file $WORK/pass";; esac
	# the compressible file alone: the worker serves it
	# shellcheck disable=SC2086
	mount_fg read "$img" -o ro -v $popt
	paced_read "$mnt/text" || fail "$fopts: reading text failed"
	unmount_fg read
	n=$(served)
	[ -n "$n" ] && [ "$n" -gt 5 ] || fail "$fopts: the worker served ${n:-no} reads of text: $(cat "$WORK/read.log")"
	# shellcheck disable=SC2086
	mount_fg read "$img" -o ro $popt
	compare "$fopts"
	unmount_fg read
done
img=$img_csum

mount_fg read "$img" -o ro -o kernel_cache
compare "kernel_cache"
python3 - "$src/big" "$mnt/big" <<'PY' || fail "shared mmap with kernel_cache"
import mmap, sys
a = open(sys.argv[1], "rb").read()
with open(sys.argv[2], "rb") as f:
    m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    if m[:] != a:
        sys.exit("mapped data differs")
PY
kill -TERM $pid
wait $pid || fail "SIGTERM: exit $?"

# flip a byte in the tenth extent of big (verified ahead by the worker
# when read sequentially)
inum=$("$BCACHEFS" list -b dirents "$img" | sed -n 's/.*: big -> \([0-9]*\)$/\1/p')
[ -n "$inum" ] || fail "big not found"
line=$("$BCACHEFS" list -b extents -s $inum:0 -e $((inum + 1)):0 "$img" | sed -n 10p)
sector=$(echo "$line" | sed -n 's/.* ptr: 0:\([0-9]*\) gen.*/\1/p')
end=$(echo "$line" | sed -n "s/.* $inum:\([0-9]*\) snap.*/\1/p")
len=$(echo "$line" | sed -n 's/.* len \([0-9]*\) .*/\1/p')
case "$line" in *"compress 0"*) ;; *) fail "expected an uncompressed extent: $line";; esac
[ -n "$sector" ] && [ -n "$end" ] && [ -n "$len" ] || fail "extent of big not parsed: $line"
python3 - "$img" $((sector * 512 + 777)) <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x01]))
PY
for opts in "" "-o kernel_cache" "-o noread_ahead"; do
	# shellcheck disable=SC2086
	mount_fg read "$img" -o ro $opts
	cat "$mnt/big" > /dev/null 2> "$WORK/cat.err" && fail "damaged file read without error"
	grep -q "Input/output error" "$WORK/cat.err" || fail "not EIO: $(cat "$WORK/cat.err")"
	bad=$(( (end - len) * 512 ))
	python3 - "$src/big" "$mnt/big" $bad $((len * 512)) <<'PY' || fail "data around the damaged extent"
import os, sys
a = open(sys.argv[1], "rb").read()
bad, n = int(sys.argv[3]), int(sys.argv[4])
fd = os.open(sys.argv[2], os.O_RDONLY)
if os.pread(fd, bad, 0) != a[:bad]:
    sys.exit("data before the damaged extent differs")
if os.pread(fd, 4096, bad + n) != a[bad + n:bad + n + 4096]:
    sys.exit("data after the damaged extent differs")
try:
    os.pread(fd, 4096, bad)
    sys.exit("damaged extent read without error")
except OSError as e:
    if e.errno != 5:
        sys.exit("damaged extent: %s" % e)
PY
	grep -q "checksum" "$WORK/read.log" || fail "no checksum error in the log: $(cat "$WORK/read.log")"
	unmount_fg read
done
exit 0
