#!/bin/sh
# Rebalance: with --group=ssd A --group=hdd B
# --foreground_target=ssd --background_target=hdd, data written lands on
# the ssd and moves to the hdd in the background within seconds; the
# files read back the same during and after, `fs usage --json` shows what
# rebalance did, fsck -f -n is clean, and after a remount the data is
# still on the hdd and right. A file written with rebalance off
# (BCH_REBALANCE=0) stays on the ssd: the move is rebalance's.
# background_compression (zstd; lz4 on an encrypted filesystem): text
# written uncompressed is compressed in the background (its size on disk
# falls under three quarters of its size), random data is left as it is, the files
# read back the same (also extracted offline), fsck is clean.
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
grep -q "rebalance: rewrote .* moved to their background target" r.log || fail "the --verbose log has no rebalance pass"
"$BCACHEFS" fsck -f -n s.img h.img > fsck.out 2>&1 || { cat fsck.out; fail "fsck -f -n"; }

mount_fg a s.img:h.img
set -- $(where again)
[ "$1" = 0 ] && [ "$2" -ge 15728640 ] || fail "after a remount: ssd $1 hdd $2"
cmp data1 "$mnt/f1" && cmp data2 "$mnt/f2" || fail "the files changed after a remount"
unmount_fg a > /dev/null

# ---- background_compression ----
for i in $(seq 1 24); do cat "$TESTDIR"/../../doc/*.md; done | head -c 4M > text
[ "$(wc -c < text)" -ge 2000000 ] || fail "not enough text"
compressed() {	# NAME FORMAT-OPTION...
	_c=$1
	shift
	truncate -s 64M "$_c.img"
	"$BCACHEFS" format -q "$@" "$_c.img" > fmt.out 2>&1 || { cat fmt.out; fail "$_c: format"; }
	mount_fg "$_c" "$_c.img" -v
	cp text "$mnt/t" && cp data2 "$mnt/r" || fail "$_c: write"
	_i=0
	while :; do
		"$BCACHEFS" fs usage --json "$mnt" > "$_c.json" || fail "$_c: fs usage"
		set -- $(python3 -c 'import json, sys; u = json.load(open(sys.argv[1])); d = u["data"]["data"]; print(d["bytes"], d["uncompressed_bytes"], u["rebalance"]["extents_compressed"])' "$_c.json")
		# the text at most three quarters of its size, the random data as it is
		[ "$1" -le $(( $(wc -c < text) * 3 / 4 + 3145728 + 262144 )) ] && break
		_i=$((_i + 1))
		[ $_i -lt 60 ] || { cat "$WORK/$_c.log"; fail "$_c: after 30 s: $1 bytes on disk of $2, $3 extents compressed"; }
		sleep 0.5
	done
	echo "$_c: $1 bytes on disk for $2, $3 extents compressed"
	cmp text "$mnt/t" && cmp data2 "$mnt/r" || fail "$_c: the files changed"
	unmount_fg "$_c" > /dev/null
	"$BCACHEFS" fsck -f -n "$_c.img" > fsck.out 2>&1 || { cat fsck.out; fail "$_c: fsck -f -n"; }
	rm -rf "x-$_c"
	"$BCACHEFS" extract "$_c.img" / "x-$_c" > x.out 2>&1 || { cat x.out; fail "$_c: extract"; }
	cmp text "x-$_c/t" && cmp data2 "x-$_c/r" || fail "$_c: the files extracted offline differ"
}
compressed z --background_compression=zstd
compressed e --encrypted --no_passphrase --background_compression=lz4
exit 0
