#!/bin/sh
# format --source of a full generated tree (gen_tree.py: every file type,
# sparse files, 10000 small files, a 100 MiB file, 255-byte ASCII and UTF-8
# names, user/trusted xattrs and POSIX ACLs) on 1 device, 2 devices with
# --replicas=2 and 3 devices with --replicas=2. Each time: fsck -f -n clean;
# `list -b inodes` has one inode per source inode with the source's mode,
# owner, size, link count and sectors (check_inodes.py); extract gives the
# tree back (contents by sha256, holes, modes, owners, times, link targets,
# device numbers, xattrs, ACLs: tree_diff.py); with replicas every extent
# has one pointer on each of 2 distinct devices. The 1-device one is also
# compared through the FUSE mount.
# TEST_QUICK: 1000 small files and a 10 MiB file.
. "$TESTDIR/../lib.sh"
command -v python3 > /dev/null || { echo "python3 needed"; exit 77; }
cd "$WORK" || exit 1
trap 'fusermount3 -u -z "$WORK/mnt" 2>/dev/null' EXIT
nsmall=10000 big=100
[ -n "${TEST_QUICK:-}" ] && nsmall=1000 big=10
python3 "$TESTDIR/gen_tree.py" src $nsmall $big || fail "cannot generate the source tree"
nsrc=$(find src | wc -l)
echo "source: $nsrc entries, $(du -sm src | cut -f1) MiB"
bad=0

# run NAME NDEVS [FORMAT OPTIONS...]
run() {
	name=$1 ndev=$2
	shift 2
	imgs="" i=0
	while [ "$i" -lt "$ndev" ]; do
		rm -f "$name.$i.img"; truncate -s 1G "$name.$i.img"
		imgs="$imgs $name.$i.img"; i=$((i + 1))
	done
	t0=$(date +%s)
	"$BCACHEFS" format -q --source=src "$@" $imgs > out 2> err
	rc=$?
	crashed $rc && { cat err; fail "$name: format crashed"; }
	if [ $rc != 0 ]; then
		echo "FAIL $name: format --source exit $rc:"; sed 's/^/    /' err; bad=1; return
	fi
	[ -s err ] && { echo "FAIL $name: stderr not empty:"; cat err; bad=1; }
	"$BCACHEFS" fsck -f -n $imgs > fsck.out 2>&1
	rc=$?
	[ $rc = 0 ] || { echo "FAIL $name: fsck -f -n exit $rc"; head -n 20 fsck.out; bad=1; }
	for b in inodes dirents extents; do
		"$BCACHEFS" list --json -b $b $imgs > $b.json 2> list.err ||
			{ echo "FAIL $name: list -b $b"; cat list.err; bad=1; }
	done
	if python3 "$TESTDIR/check_inodes.py" src inodes.json dirents.json extents.json > ci.out 2>&1; then
		echo "ok   $name: inodes: $(tail -n 1 ci.out)"
	else
		echo "FAIL $name: inodes:"; sed 's/^/    /' ci.out; bad=1
	fi
	if [ "$ndev" -gt 1 ]; then
		python3 - extents.json $ndev <<'PY' > rep.out 2>&1 && echo "ok   $name: $(cat rep.out)" ||
import json, sys
keys = [k for k in json.load(open(sys.argv[1]))["keys"] if k["type"] == 128]
bad = [k for k in keys
       if len({e["dev"] for e in k["value"]["entries"] if e["kind"] == "ptr"}) != 2
       or sum(e["kind"] == "ptr" for e in k["value"]["entries"]) != 2]
devs = sorted({e["dev"] for k in keys for e in k["value"]["entries"] if e["kind"] == "ptr"})
print("%d extents, %d without exactly 2 pointers on distinct devices; devices used %s"
      % (len(keys), len(bad), devs))
sys.exit(1 if bad or not keys or len(devs) != int(sys.argv[2]) else 0)
PY
			{ echo "FAIL $name: replicas: $(cat rep.out)"; bad=1; }
	fi
	rm -rf copy
	if ! "$BCACHEFS" extract $imgs / copy > ext.out 2>&1; then
		echo "FAIL $name: extract failed"; head -n 20 ext.out; bad=1; return
	fi
	if python3 "$TESTDIR/tree_diff.py" src copy --cache src.desc > cmp.out 2>&1; then
		echo "ok   $name: extract: $(tail -n 1 cmp.out) ($(( $(date +%s) - t0 ))s)"
	else
		echo "FAIL $name: the copy differs:"; sed 's/^/    /' cmp.out; bad=1
	fi
	if [ -n "${mount:-}" ] && [ -c /dev/fuse ] && command -v fusermount3 > /dev/null; then
		mkdir -p mnt
		"$BCACHEFS" mount -f -o ro "$(echo $imgs | tr ' ' :)" mnt > mount.log 2>&1 < /dev/null &
		pid=$!
		i=0
		until awk -v m="$WORK/mnt" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; do
			kill -0 $pid 2>/dev/null || { cat mount.log; fail "$name: mount exited"; }
			i=$((i + 1)); [ $i -lt 200 ] || { kill $pid; fail "$name: not mounted after 10 s"; }
			sleep 0.05
		done
		if python3 "$TESTDIR/tree_diff.py" src mnt --cache src.desc > cmp.out 2>&1; then
			echo "ok   $name: mount: $(tail -n 1 cmp.out)"
		else
			echo "FAIL $name: the mounted tree differs:"; sed 's/^/    /' cmp.out; bad=1
		fi
		fusermount3 -u mnt || { fusermount3 -u -z mnt; fail "$name: fusermount3 -u"; }
		wait $pid
	fi
	rm -rf copy $imgs
}

mount=1 run one 1
mount=""
run two_replicas2 2 --replicas=2
run three_replicas2 3 --replicas=2

# data spread over every device: 3 x 40 MiB devices hold 60 MiB of data
# that no single one of them could
mkdir -p spread
for i in 1 2 3; do head -c 20M /dev/urandom > spread/f$i; done
truncate -s 40M sp0.img sp1.img sp2.img
"$BCACHEFS" format -q --source=spread sp0.img sp1.img sp2.img > out 2>&1 ||
	{ cat out; fail "spread: format --source on 3 devices failed"; }
"$BCACHEFS" fsck -f -n sp0.img sp1.img sp2.img > out 2>&1 || { cat out; fail "spread: fsck -f -n"; }
rm -rf copy
"$BCACHEFS" extract sp0.img sp1.img sp2.img / copy > out 2>&1 || { cat out; fail "spread: extract"; }
python3 "$TESTDIR/tree_diff.py" spread copy > cmp.out 2>&1 || { cat cmp.out; fail "spread: copy differs"; }
for d in 0 1 2; do
	"$BCACHEFS" list -b extents sp0.img sp1.img sp2.img 2>/dev/null | grep -q "ptr: $d:" ||
		fail "spread: no data on device $d"
done
echo "ok   spread: 60 MiB over 3 devices of 40 MiB"
exit $bad
