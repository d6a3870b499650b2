#!/bin/sh
# format --source with every data checksum (none, crc32c, crc64) x
# compression (none, lz4, gzip, zstd) on 1 and on 2 devices (--replicas=2),
# and encrypted (passphrase from a file) with each compression on 1 and 2
# devices (an encrypted filesystem's data is always ChaCha20/Poly1305: the
# checksum option does not matter, so it rotates over the three there).
# Every time: fsck -f -n clean, the extents are of the checksum/compression/MAC
# type asked for, and extract gives back the source tree bit for bit
# (tree_diff.py: contents, holes, modes, owners, times, links, xattrs).
# The FUSE mount (-o ro) gives the same tree back too (read ahead and
# decoded by its worker thread).
# Encrypted images share one uuid so one `unlock` serves all extracts.
# TEST_QUICK: every third combination and five mounted ones.
. "$TESTDIR/../lib.sh"
command -v python3 > /dev/null || { echo "python3 needed"; exit 77; }
cd "$WORK" || exit 1
diff=$TESTDIR/../format/tree_diff.py
printf 'matrix-pass\n' > pass
uuid=$(cat /proc/sys/kernel/random/uuid)
mnt=$WORK/mnt
mkdir -p "$mnt"
can_mount=1
{ [ -c /dev/fuse ] && command -v fusermount3 > /dev/null; } || can_mount=""
cleanup() {
	fusermount3 -u -z "$mnt" 2>/dev/null
	command -v keyctl > /dev/null &&
		for id in $(keyctl show @u 2>/dev/null | awk -v n="bcachefs:$uuid" '$NF == n { print $1 }'); do
			keyctl unlink "$id" @u > /dev/null 2>&1
		done
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM

python3 - <<'PY' || fail "cannot build the source tree"
import os, random
r = random.Random(4)
os.makedirs("src/sub/deeper")
def w(p, data):
    with open("src/" + p, "wb") as f:
        f.write(data)
rnd = lambda n: bytes(r.getrandbits(8) for _ in range(n)) if n < 4096 else os.urandom(n)
w("compressible", b"".join(b"%08d the quick brown fox jumps over the lazy dog\n" % i for i in range(12000)))
w("random", os.urandom(300 * 1024 + 17))
w("mixed", b"".join(os.urandom(40000) if i % 2 else b"\0" * 65536 + b"z" * 3000
                    for i in range(12)))
w("tiny", b"x")
w("empty", b"")
w("odd", b"abc" * 1366)                   # 4098 bytes
with open("src/sparse", "wb") as f:
    f.write(b"start" * 1000)
    f.seek((1 << 20) + 123); f.write(os.urandom(9000))
    f.seek(3 << 20); f.write(b"A" * 70000)
    f.truncate(5 << 20)
for i in range(40):
    w("sub/s%02d" % i, b"small %d\n" % i * (i * 37 + 1))
w("sub/deeper/text", b"deeper " * 20000)
os.symlink("../compressible", "src/sub/link")
os.link("src/odd", "src/sub/odd_link")
os.setxattr("src/compressible", "user.k", b"value")
PY

n=0 bad=0 k=0
# one NAME NDEV MOUNT? [FORMAT OPTIONS...]
# (TEST_QUICK: every third combination, and those mounted)
one() {
	name=$1 ndev=$2 domount=$3
	shift 3
	k=$((k + 1))
	[ -n "${TEST_QUICK:-}" ] && [ -z "$domount" ] && [ $((k % 3)) != 1 ] && return
	n=$((n + 1))
	imgs="" i=0
	while [ $i -lt "$ndev" ]; do
		rm -f "m$i.img"; truncate -s 96M "m$i.img"
		imgs="$imgs m$i.img"; i=$((i + 1))
	done
	rep=""; [ "$ndev" -gt 1 ] && rep="--replicas=2"
	if ! "$BCACHEFS" format -q $rep --source=src "$@" $imgs > out 2>&1 < /dev/null; then
		echo "FAIL $name: format:"; head -n 5 out; bad=1; return
	fi
	popt=""
	case " $* " in *" --encrypted "*)
		if [ -z "${unlocked:-}" ] && command -v keyctl > /dev/null &&
		   "$BCACHEFS" unlock -f pass m0.img > out 2>&1; then
			unlocked=1
		fi
		[ -n "${unlocked:-}" ] || popt="--passphrase-file pass";;
	esac
	"$BCACHEFS" fsck -f -n $popt $imgs > out 2>&1 ||
		{ echo "FAIL $name: fsck -f -n:"; head -n 5 out; bad=1; }
	"$BCACHEFS" list --json -b extents $popt $imgs > ext.json 2> out ||
		{ echo "FAIL $name: list"; head -n 5 out; bad=1; }
	python3 - ext.json "$ndev" "$@" <<'PY' > types.out 2>&1 || { echo "FAIL $name: extents: $(cat types.out)"; bad=1; }
import json, sys
keys = [k for k in json.load(open(sys.argv[1]))["keys"] if k["type"] == 128]
ndev, opts = int(sys.argv[2]), " ".join(sys.argv[3:])
csum = {"none": 0, "crc32c": 5, "crc64": 6}     # on-disk types (doc/format.md §7.1, §8)
comp = {"none": 0, "lz4": 3, "gzip": 2, "zstd": 4}
want_csum = {3, 4} if "--encrypted" in opts else \
    {csum[o.split("=")[1]] for o in opts.split() if o.startswith("--data_checksum_type=")}
want_comp = [comp[o.split("=")[1]] for o in opts.split() if o.startswith("--compression_type=")]
want_comp = want_comp[0] if want_comp else 0
seen_csum, seen_comp, bad = set(), set(), 0
for k in keys:
    crcs = [e for e in k["value"]["entries"] if e["kind"].startswith("crc")]
    ptrs = [e for e in k["value"]["entries"] if e["kind"] == "ptr"]
    c = crcs[0] if crcs else {"csum_type": 0, "compression_type": 0}
    seen_csum.add(c["csum_type"]); seen_comp.add(c["compression_type"])
    if len({p["dev"] for p in ptrs}) != ndev:
        bad += 1
if bad or not seen_csum <= want_csum or seen_comp - {0, want_comp} or \
   (want_comp and want_comp not in seen_comp):
    print("%d keys with the wrong pointers; csum types %s (want %s); compression %s (want %d)"
          % (bad, sorted(seen_csum), sorted(want_csum), sorted(seen_comp), want_comp))
    sys.exit(1)
PY
	rm -rf copy
	if "$BCACHEFS" extract $popt $imgs / copy > out 2>&1 &&
	   python3 "$diff" src copy > cmp.out 2>&1; then
		res="extract ok"
	else
		echo "FAIL $name: extract:"; head -n 5 out; tail -n 12 cmp.out 2>/dev/null; bad=1; return
	fi
	if [ -n "$domount" ] && [ -n "$can_mount" ]; then
		"$BCACHEFS" mount -f -o ro $popt "$(echo $imgs | tr ' ' :)" "$mnt" > mount.log 2>&1 < /dev/null &
		pid=$!
		i=0
		until awk -v m="$mnt" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; do
			kill -0 $pid 2>/dev/null || { echo "FAIL $name: mount exited:"; cat mount.log; bad=1; return; }
			i=$((i + 1)); [ $i -lt 200 ] || { echo "FAIL $name: not mounted after 10 s"; bad=1; kill $pid; return; }
			sleep 0.05
		done
		if python3 "$diff" src "$mnt" > cmp.out 2>&1; then
			res="$res, mount ok"
		else
			echo "FAIL $name: mount:"; tail -n 12 cmp.out; bad=1
		fi
		fusermount3 -u "$mnt" || { echo "FAIL $name: fusermount3 -u"; bad=1; }
		wait $pid || { echo "FAIL $name: mount exit $?"; cat mount.log; bad=1; }
	fi
	echo "ok   $name: $res"
}

full=1
[ -n "${TEST_QUICK:-}" ] && full=""
for ndev in 1 2; do
	for comp in none lz4 gzip zstd; do
		for csum in none crc32c crc64; do
			m=${full:-}
			case $ndev/$comp/$csum in 1/none/none|2/zstd/crc64|1/gzip/crc32c) m=1;; esac
			one "dev$ndev-$csum-$comp" $ndev "$m" --data_checksum_type=$csum --compression_type=$comp
		done
	done
done
csums="none crc32c crc64"
for ndev in 1 2; do
	for comp in none lz4 gzip zstd; do
		csum=${csums%% *}; csums="${csums#* } $csum"
		m=${full:-}
		case $ndev/$comp in 1/lz4|2/gzip) m=1;; esac
		one "dev$ndev-encrypted-$csum-$comp" $ndev "$m" --uuid=$uuid --encrypted \
			--passphrase_file=pass --data_checksum_type=$csum --compression_type=$comp
	done
done
echo "$n combinations"
exit $bad
