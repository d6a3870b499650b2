#!/bin/sh
# format --source DIR: a generated tree (every file type, a sparse file,
# many small files, a 20 MiB file, long and unicode names, xattrs, hard
# links) is copied in at format time (plain, checksummed, compressed,
# encrypted); fsck -f -n finds nothing, and extract
# gives the same tree back (contents, sizes, modes, owners, mtimes, link
# targets, device numbers, xattrs, link counts, holes). Several option
# sets, 2 devices with --replicas=2. TEST_QUICK: 200 small files, not 2000.
set -u
: "${BCACHEFS:?}" "${WORK:=$(mktemp -d)}"
cd "$WORK" || exit 1
command -v python3 > /dev/null || { echo "python3 needed"; exit 77; }
fail=0
nsmall=2000
[ -n "${TEST_QUICK:-}" ] && nsmall=200

printf 'source-pass\n' > pass

# ---- the source tree ----
rm -rf src
python3 - "$nsmall" <<'PY' || { echo "cannot build the source tree"; exit 1; }
import os, socket, stat, sys
n = int(sys.argv[1])
os.makedirs("src/dir/sub/subsub")
os.makedirs("src/empty_dir")
os.makedirs("src/small")
def w(p, data):
    with open(p, "wb") as f:
        f.write(data)
w("src/hello.txt", b"hello, world\n")
w("src/empty", b"")
w("src/odd_size", os.urandom(12345))
w("src/big", os.urandom(20 << 20))
w("src/compressible", b"".join(b"line %d of a very compressible file\n" % i for i in range(60000)))
# sparse: data, hole, data, hole at the end
with open("src/sparse", "wb") as f:
    f.write(os.urandom(70000))
    f.seek(8 << 20); f.write(os.urandom(5000))
    f.truncate(16 << 20)
with open("src/all_hole", "wb") as f:
    f.truncate(1 << 20)
for i in range(n):
    w("src/small/f%05d" % i, ("file %d\n" % i).encode() * (i % 7 + 1))
w("src/" + "L" * 255, b"long name\n")
w("src/dir/" + "ü" * 127, b"unicode name\n")   # 254 bytes
w("src/dir/日本語のファイル名", b"nihongo\n")
os.symlink("hello.txt", "src/link")
os.symlink("dir/sub/../../" + "x" * 300, "src/long_link")
os.symlink("/nonexistent/target", "src/dir/dangling")
os.link("src/hello.txt", "src/dir/hard1")
os.link("src/hello.txt", "src/dir/sub/hard2")
os.link("src/odd_size", "src/dir/odd_hard")
os.mkfifo("src/fifo")
s = socket.socket(socket.AF_UNIX); s.bind("src/dir/sock"); s.close()
if os.geteuid() == 0:
    os.mknod("src/dir/chr", 0o620 | stat.S_IFCHR, os.makedev(4, 65))
    os.mknod("src/dir/blk", 0o660 | stat.S_IFBLK, os.makedev(259, 1 << 12 | 3))
    os.chown("src/dir/sub", 1234, 5678)
    os.lchown("src/link", 42, 43)
os.chmod("src/dir/sub/subsub", 0o1750)
os.chmod("src/odd_size", 0o4711)
try:
    os.setxattr("src/hello.txt", "user.greeting", b"hi there")
    os.setxattr("src/hello.txt", "user.empty", b"")
    os.setxattr("src/dir", "user.big", os.urandom(1500))
    for i in range(20):
        os.setxattr("src/small/f00001", "user.x%d" % i, b"v%d" % i)
    if os.geteuid() == 0:
        os.setxattr("src/odd_size", "trusted.t", b"trusted value")
except OSError as e:
    print("note: xattrs not supported here:", e)
os.utime("src/hello.txt", ns=(1500000000123456789, 1500000000987654321))
PY

# run NAME NDEVS SIZE [FORMAT OPTIONS...]
run() {
	name=$1 ndev=$2 size=$3
	shift 3
	imgs="" i=0
	while [ "$i" -lt "$ndev" ]; do
		rm -f "s$i.img"; truncate -s "$size" "s$i.img"
		imgs="$imgs s$i.img"; i=$((i + 1))
	done
	popt=""
	case " $* " in *" --encrypted "*) popt="--passphrase-file pass";; esac
	if ! "$BCACHEFS" format -q --source=src "$@" $imgs > out 2> err; then
		echo "FAIL $name: format --source failed:"; sed 's/^/    /' err; fail=1; return
	fi
	[ -s err ] && { echo "FAIL $name: stderr not empty (no tty: no progress):"; cat err; fail=1; }
	"$BCACHEFS" fsck -f -n $popt $imgs > fsck.out 2>&1
	rc=$?
	[ $rc = 0 ] || { echo "FAIL $name: fsck -f -n exit $rc"; head -n 20 fsck.out; fail=1; }
	rm -rf copy
	if ! "$BCACHEFS" extract $popt $imgs / copy > ext.out 2>&1; then
		echo "FAIL $name: extract failed"; head -n 20 ext.out; fail=1; return
	fi
	[ -d copy/lost+found ] || { echo "FAIL $name: no lost+found"; fail=1; }
	case " $* " in *" --compression_type="*)
		"$BCACHEFS" list -b extents $popt $imgs 2>/dev/null | grep -aq ' compress [1-9] ' ||
			{ echo "FAIL $name: no compressed extent"; fail=1; };;
	esac
	case " $* " in *" --encrypted "*)
		"$BCACHEFS" list -b extents $popt $imgs 2>/dev/null | grep -a '^u64s' | grep -avq ' csum [34] ' &&
			{ echo "FAIL $name: an extent without a MAC"; fail=1; };;
	esac
	if python3 "$TESTDIR/tree_diff.py" src copy > cmp.out 2>&1; then
		echo "ok   $name: $(tail -n 1 cmp.out)"
	else
		echo "FAIL $name: the copy differs:"; sed 's/^/    /' cmp.out; fail=1
	fi
}

run default 1 256M
run bs512_crc64 1 256M --block_size=512 --data_checksum_type=crc64 --btree_node_size=64k
run csum_none_bucket1M 1 1G --data_checksum_type=none --bucket_size=1M
run node4k 1 256M --btree_node_size=4k --block_size=512
# small nodes: every btree is several levels deep
for b in extents inodes dirents alloc; do
	"$BCACHEFS" list -m nodes -b $b s0.img 2>/dev/null | grep -aq '^l 1 ' ||
		{ echo "FAIL node4k: btree $b has no interior node"; fail=1; }
done
run lz4 1 256M --compression_type=lz4
run encrypted_zstd 1 256M --encrypted --passphrase_file=pass --compression_type=zstd
run encrypted_gzip_wide 1 256M --encrypted --passphrase_file=pass --compression_type=gzip --wide_macs
run replicas2 2 256M --replicas=2

# both devices hold every extent: one pointer on each
"$BCACHEFS" list -b extents s0.img s1.img 2>/dev/null | grep -c 'ptr: 0:.*ptr: 1:' > n2
"$BCACHEFS" list -b extents s0.img s1.img 2>/dev/null | grep -c '^u64s' > n1
[ "$(cat n1)" -gt 0 ] && [ "$(cat n1)" = "$(cat n2)" ] &&
	echo "ok   replicas2: $(cat n1) extents, each on devices 0 and 1" ||
	{ echo "FAIL replicas2: $(cat n2) of $(cat n1) extents on both devices"; fail=1; }
"$BCACHEFS" show-super -f replicas s0.img | grep -q 'data: *\[0 1\]' ||
	{ echo "FAIL replicas2: no replicas entry data [0 1]"; fail=1; }

# the image being formatted lies inside the source: it is not copied into itself
rm -rf self; mkdir -p self/d; echo x > self/d/x; truncate -s 64M self/img
if "$BCACHEFS" format -q --source=self self/img > out 2>&1 &&
   "$BCACHEFS" fsck -f -n self/img > /dev/null 2>&1 &&
   ! "$BCACHEFS" list -b dirents self/img 2>/dev/null | grep -aq ' img -> '; then
	echo "ok   the device inside the source is skipped"
else
	echo "FAIL device inside the source"; cat out; fail=1
fi

# refused: a source that is not a directory
rm -f r.img; truncate -s 64M r.img
"$BCACHEFS" format -q --source=nonexistent r.img > out 2>&1
[ $? = 1 ] && echo "ok   --source=nonexistent refused" ||
	{ echo "FAIL --source=nonexistent"; cat out; fail=1; }
# too small a device: initialisation fails, the error is clear, exit 1
rm -f tiny.img; truncate -s 16M tiny.img
"$BCACHEFS" format -q --source=src tiny.img > out 2>&1
rc=$?
[ $rc = 1 ] && grep -q "initialising the filesystem failed" out &&
	echo "ok   device too small for the source: $(head -n 1 out)" ||
	{ echo "FAIL tiny device: exit $rc"; cat out; fail=1; }
"$BCACHEFS" fsck -f -n tiny.img > out 2>&1
[ $? = 4 ] && echo "ok   tiny device left uninitialised (fsck -f -n exit 4)" ||
	{ echo "FAIL tiny device after failed init"; cat out; fail=1; }

exit $fail
