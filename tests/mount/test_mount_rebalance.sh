#!/bin/sh
# Rebalance (issue 21, part 2): with --group=ssd A --group=hdd B
# --foreground_target=ssd --background_target=hdd, data written lands on
# the ssd and moves to the hdd in the background within seconds; the
# files read back the same during and after, `fs usage --json` shows what
# rebalance did, fsck -f -n is clean, and after a remount the data is
# still on the hdd and right. A file written with rebalance off
# (BCH_REBALANCE=0) stays on the ssd: the move is rebalance's.
. "$TESTDIR/../lib.sh"
fuse_mount_setup

where() {	# NAME: "ssd_bytes hdd_bytes moved" from fs usage --json of $mnt
	"$BCACHEFS" fs usage --json "$mnt" > "$1.json" 2>&1 || { cat "$1.json"; fail "$1: fs usage"; }
	python3 - "$1.json" <<'PY'
import json, sys
u = json.load(open(sys.argv[1]))
by = {d["index"]: d["data"]["data"]["bytes"] for d in u["devices"]}
print(by.get(0, 0), by.get(1, 0), u.get("rebalance", {}).get("extents_moved", -1))
PY
}

truncate -s 96M s.img
truncate -s 128M h.img
"$BCACHEFS" format -q --group=ssd s.img --group=hdd h.img --foreground_target=ssd \
	--background_target=hdd > fmt.out 2>&1 || { cat fmt.out; fail "format"; }
head -c 12M /dev/urandom > data1
head -c 3M /dev/urandom > data2

# rebalance off: the data stays where the foreground target put it
BCH_REBALANCE=0 mount_fg o s.img:h.img
cp data1 "$mnt/f1" || fail "write f1"
sync "$mnt/f1"
sleep 2
set -- $(where off)
echo "rebalance off: ssd $1 hdd $2"
[ "$1" -ge 12582912 ] && [ "$2" = 0 ] || fail "rebalance off: the data is not (all) on the ssd"
unmount_fg o > /dev/null

# on: it moves to the hdd
mount_fg r s.img:h.img -v
cp data2 "$mnt/f2" || fail "write f2"
i=0
while :; do
	set -- $(where r$i)
	[ "$1" = 0 ] && [ "$2" -ge 15728640 ] && break
	i=$((i + 1))
	[ $i -lt 60 ] || { cat "$WORK/r.log"; fail "after 30 s: ssd $1 hdd $2 bytes of data"; }
	sleep 0.5
done
echo "rebalance on: ssd $1 hdd $2, $3 extents moved"
[ "$3" -gt 0 ] || fail "fs usage: rebalance moved nothing"
cmp data1 "$mnt/f1" && cmp data2 "$mnt/f2" || fail "the files changed"
unmount_fg r > /dev/null
grep -q "rebalance: moved" r.log || fail "the --verbose log has no rebalance pass"
"$BCACHEFS" fsck -f -n s.img h.img > fsck.out 2>&1 || { cat fsck.out; fail "fsck -f -n"; }

mount_fg a s.img:h.img
set -- $(where again)
[ "$1" = 0 ] && [ "$2" -ge 15728640 ] || fail "after a remount: ssd $1 hdd $2"
cmp data1 "$mnt/f1" && cmp data2 "$mnt/f2" || fail "the files changed after a remount"
unmount_fg a > /dev/null
exit 0
