#!/bin/sh
# Data written through the read-write mount with every data checksum
# (none, crc32c, crc64) x compression (none, lz4, gzip, zstd) x encryption
# (off, on) x replicas (1 device; 2 devices with --replicas=2): a tree is
# copied in, then overwritten in places (inside blocks, across extents,
# past the end) and truncated. It must read back exactly through the
# mount, through `extract` after unmount, and after `fsck -y` (which must
# find nothing to fix: exit 0); the extents must carry the checksum,
# compression (or MAC) asked for, with one pointer per device.
# TEST_QUICK: 7 of the 48 combinations (every seventh).
# The encrypted filesystems share one uuid and the key is put once in a
# private session keyring (`unlock -k session`), so that the mount, fsck,
# list and extract of each one do not run scrypt again (7 derivations of
# about a second each per combination were two thirds of the test's time);
# format --encrypted still derives it from the passphrase file each time,
# and without keyctl every command is given the passphrase file.
. "$TESTDIR/../lib.sh"
if [ -z "${KEY_TEST_SESSION:-}" ] && command -v keyctl > /dev/null &&
   keyctl session - true > /dev/null 2>&1; then
	KEY_TEST_SESSION=1 exec keyctl session - sh "$0" "$@"
fi
fuse_mount_setup
cd "$WORK" || exit 1
diff=$TESTDIR/../format/tree_diff.py
printf 'matrix-pass\n' > pass
uuid=$(cat /proc/sys/kernel/random/uuid)
unlocked=""

python3 - <<'PY' || fail "cannot build the source tree"
import os
os.makedirs("src/sub")
def w(p, data):
    with open("src/" + p, "wb") as f:
        f.write(data)
w("compressible", b"".join(b"%08d the quick brown fox jumps over the lazy dog\n" % i for i in range(12000)))
w("random", os.urandom(300 * 1024 + 17))
w("mixed", b"".join(os.urandom(40000) if i % 2 else b"\0" * 65536 + b"z" * 3000 for i in range(8)))
w("tiny", b"x")
with open("src/sparse", "wb") as f:
    f.write(b"start" * 1000)
    f.seek((1 << 20) + 123); f.write(os.urandom(9000))
    f.truncate(3 << 20)
for i in range(20):
    w("sub/s%02d" % i, b"small %d\n" % i * (i * 37 + 1))
PY

# the changes made after the copy, to the mount and to the shadow
change() {	# ROOT
	python3 - "$1" <<'PY'
import os, sys
root = sys.argv[1]
def pw(p, off, data):
    fd = os.open(os.path.join(root, p), os.O_WRONLY)
    os.pwrite(fd, data, off)
    os.close(fd)
pw("compressible", 1000, b"OVERWRITTEN" * 500)
pw("compressible", 200000, b"a" * 70000)
pw("random", 4097, b"\1" * 3)
pw("random", 299000, b"\2" * 10000)
pw("tiny", 0, b"y" * 9000)
pw("sparse", 2 << 20, b"middle" * 3000)
os.truncate(os.path.join(root, "mixed"), 150001)
os.truncate(os.path.join(root, "sub/s05"), 10)
PY
}

n=0 k=0 bad=0
one() {	# NAME NDEV [FORMAT OPTIONS...]
	name=$1 ndev=$2
	shift 2
	k=$((k + 1))
	[ -n "${TEST_QUICK:-}" ] && [ $((k % 7)) != 1 ] && return
	n=$((n + 1))
	imgs="" i=0
	while [ $i -lt "$ndev" ]; do
		rm -f "m$i.img"; truncate -s 64M "m$i.img"
		imgs="$imgs m$i.img"; i=$((i + 1))
	done
	rep=""; [ "$ndev" -gt 1 ] && rep="--replicas=2"
	popt="" uopt=""
	case " $* " in *" --encrypted "*) popt="--passphrase-file pass" uopt="--uuid=$uuid";; esac
	if ! "$BCACHEFS" format -q $rep $uopt "$@" $imgs > out 2>&1 < /dev/null; then
		echo "FAIL $name: format:"; head -n 5 out; bad=1; return
	fi
	if [ -n "$popt" ]; then
		if [ -z "$unlocked" ] && [ -n "${KEY_TEST_SESSION:-}" ] &&
		   "$BCACHEFS" unlock -k session --passphrase-file pass m0.img > out 2>&1 < /dev/null; then
			unlocked=1
		fi
		# the key in the keyring serves every later one (same uuid, same passphrase)
		[ -z "$unlocked" ] || popt=""
	fi
	rm -rf shadow; cp -a src shadow; change shadow
	mount_fg m "$(echo $imgs | tr ' ' :)" $popt
	cp -a src/. "$mnt/" && change "$mnt" || { echo "FAIL $name: writing"; bad=1; }
	python3 "$diff" shadow "$mnt" --no-times > cmp.out 2>&1 || { echo "FAIL $name: mount:"; tail -n 8 cmp.out; bad=1; }
	unmount_fg m > /dev/null
	"$BCACHEFS" fsck -f -n $popt $imgs > out 2>&1 || { echo "FAIL $name: fsck -f -n:"; head -n 5 out; bad=1; }
	"$BCACHEFS" list --json -b extents $popt $imgs > ext.json 2> out ||
		{ echo "FAIL $name: list"; head -n 5 out; bad=1; }
	python3 - ext.json "$ndev" "$@" <<'PY' > types.out 2>&1 || { echo "FAIL $name: extents: $(cat types.out)"; bad=1; }
import json, sys
keys = [k for k in json.load(open(sys.argv[1]))["keys"] if k["type"] == 128]
ndev, opts = int(sys.argv[2]), " ".join(sys.argv[3:])
csum = {"none": 0, "crc32c": 5, "crc64": 6}
comp = {"none": 0, "lz4": 3, "gzip": 2, "zstd": 4}
want_csum = {3, 4} if "--encrypted" in opts else \
    {csum[o.split("=")[1]] for o in opts.split() if o.startswith("--data_checksum_type=")}
want_comp = [comp[o.split("=")[1]] for o in opts.split() if o.startswith("--compression_type=")][0]
seen_csum, seen_comp, badp = set(), set(), 0
for k in keys:
    crcs = [e for e in k["value"]["entries"] if e["kind"].startswith("crc")]
    ptrs = [e for e in k["value"]["entries"] if e["kind"] == "ptr"]
    c = crcs[0] if crcs else {"csum_type": 0, "compression_type": 0}
    seen_csum.add(c["csum_type"]); seen_comp.add(c["compression_type"])
    if len({p["dev"] for p in ptrs}) != ndev:
        badp += 1
if badp or not seen_csum <= want_csum or seen_comp - {0, want_comp} or \
   (want_comp and want_comp not in seen_comp):
    print("%d keys with the wrong pointers; csum types %s (want %s); compression %s (want %d)"
          % (badp, sorted(seen_csum), sorted(want_csum), sorted(seen_comp), want_comp))
    sys.exit(1)
PY
	rm -rf copy
	"$BCACHEFS" extract $popt $imgs / copy > out 2>&1 && rm -rf copy/lost+found &&
		python3 "$diff" shadow copy --no-times > cmp.out 2>&1 ||
		{ echo "FAIL $name: extract:"; head -n 5 out; tail -n 8 cmp.out; bad=1; return; }
	"$BCACHEFS" fsck -y $popt $imgs > out 2>&1 || { echo "FAIL $name: fsck -y exit $?:"; head -n 5 out; bad=1; }
	rm -rf copy
	"$BCACHEFS" extract $popt $imgs / copy > out 2>&1 && rm -rf copy/lost+found &&
		python3 "$diff" shadow copy --no-times > cmp.out 2>&1 ||
		{ echo "FAIL $name: extract after fsck -y:"; tail -n 8 cmp.out; bad=1; return; }
	echo "ok   $name"
}

for ndev in 1 2; do
	for comp in none lz4 gzip zstd; do
		for csum in none crc32c crc64; do
			one "dev$ndev-$csum-$comp" $ndev --data_checksum_type=$csum --compression_type=$comp
			one "dev$ndev-$csum-$comp-encrypted" $ndev --encrypted --passphrase_file=pass \
				--data_checksum_type=$csum --compression_type=$comp
		done
	done
done
echo "$n combinations"
exit $bad
