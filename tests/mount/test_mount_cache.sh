#!/bin/sh
# Caching (doc/engine.md §10, §17): an ssd and an hdd with --foreground_target=ssd
# --background_target=hdd --promote_target=ssd. Data written lands on the
# ssd and rebalance moves it to the hdd, leaving the ssd copies as cached
# copies (not for a file whose promote_target option is none), which
# serve the reads (the per-device read counters of fs usage --json); for
# a file given the ssd as promote target afterwards, a read served from
# the hdd leaves cached copies on the ssd (fs usage: promote, cached data
# on the ssd) and the next read is served from them; writing three times
# the ssd's size (each file read back, so the cache fills and its buckets
# are reused) never fails; every file reads back byte-exact, also after a
# remount; fsck -f -n is clean. Then the same with a cache device of
# durability 0 as foreground and promote target.
. "$TESTDIR/../lib.sh"
fuse_mount_setup

usage() {	# NAME: "ssd_data hdd_data ssd_cached ssd_read hdd_read promoted" (bytes)
	"$BCACHEFS" fs usage --json "$mnt" > "$1.json" 2>&1 || { cat "$1.json"; fail "$1: fs usage"; }
	python3 - "$1.json" <<'PY'
import json, sys
u = json.load(open(sys.argv[1]))
d = {x["index"]: x for x in u["devices"]}
print(d[0]["data"]["data"]["bytes"], d[1]["data"]["data"]["bytes"],
      d[0]["data"]["cached"]["bytes"], d[0]["read_bytes"], d[1]["read_bytes"],
      u["promote"]["extents_promoted"])
PY
}

gen() {	# FILE MIB SEED: seeded random data
	python3 -c 'import random, sys; sys.stdout.buffer.write(random.Random(int(sys.argv[2])).randbytes(int(sys.argv[1]) << 20))' \
		"$2" "$3" > "$1"
}

truncate -s 64M s.img
truncate -s 256M h.img
"$BCACHEFS" format -q --group=ssd s.img --group=hdd h.img --foreground_target=ssd \
	--background_target=hdd --promote_target=ssd > fmt.out 2>&1 || { cat fmt.out; fail "format"; }
gen f1 12 1
gen k1 12 2
setopt() {	# PATH VALUE: the file's promote_target option
	python3 -c 'import os, sys; os.setxattr(sys.argv[1], "bcachefs.promote_target", sys.argv[2].encode())' \
		"$1" "$2" || fail "setting promote_target=$2 on $1"
}

mount_fg c s.img:h.img -v
# nc/f1: no promote target (the directory's option, inherited)
mkdir "$mnt/nc" || fail "mkdir"
setopt "$mnt/nc" none
cp f1 "$mnt/nc/f1" && cp k1 "$mnt/k1" || fail "write"
sync "$mnt/nc/f1" "$mnt/k1"
# rebalance moves them to the hdd
i=0
while :; do
	set -- $(usage m$i)
	[ "$1" = 0 ] && [ "$2" -ge 25165824 ] && break
	i=$((i + 1))
	[ $i -lt 60 ] || { cat "$WORK/c.log"; fail "after 30 s: ssd $1 hdd $2 bytes of data"; }
	sleep 0.5
done
echo "moved to the hdd: ssd $1 hdd $2; cached on the ssd: $3"
# k1's copies moved off the ssd (its promote target) stayed there, cached; f1's did not
[ "$3" -ge 12582912 ] && [ "$3" -lt 25165824 ] || fail "rebalance left $3 bytes cached on the ssd, not k1's 12 MiB"
ssd0=$4 hdd0=$5
cmp k1 "$mnt/k1" || fail "k1 reads back wrong"
set -- $(usage k)
echo "k1 read: $(( $4 - ssd0 )) bytes from the ssd, $(( $5 - hdd0 )) from the hdd"
[ $(( $4 - ssd0 )) -ge 12582912 ] && [ $(( $5 - hdd0 )) = 0 ] ||
	fail "k1 was not read from the copies rebalance left on the ssd"

# f1 gets the ssd as its promote target now
setopt "$mnt/nc/f1" ssd
cached0=$3 ssd0=$4 hdd0=$5
# first read: from the hdd, and it asks for cached copies on the ssd
cmp f1 "$mnt/nc/f1" || fail "f1 reads back wrong"
i=0
while :; do
	set -- $(usage p$i)
	[ "$3" -ge $((cached0 + 12582912)) ] && break
	i=$((i + 1))
	[ $i -lt 60 ] || { cat "$WORK/c.log"; fail "after 30 s: $3 bytes cached on the ssd, $6 extents promoted"; }
	sleep 0.5
done
echo "first read: $(( $5 - hdd0 )) bytes from the hdd, $(( $4 - ssd0 )) from the ssd; $3 bytes cached on the ssd ($6 extents promoted)"
# (promote runs while the file is read: what follows a piece read from the
# hdd may already come from its new cached copy)
[ $(( $5 - hdd0 )) -gt 0 ] || fail "the first read was not served from the hdd"
[ "$1" = 0 ] && [ "$2" -ge 25165824 ] || fail "promote moved dirty data: ssd $1 hdd $2"
ssd1=$4 hdd1=$5

# second read: from the cached copies on the ssd
cmp f1 "$mnt/nc/f1" || fail "f1 reads back wrong from the cache"
set -- $(usage r2)
echo "second read: $(( $4 - ssd1 )) bytes from the ssd, $(( $5 - hdd1 )) from the hdd"
[ $(( $4 - ssd1 )) -ge 12582912 ] && [ $(( $5 - hdd1 )) = 0 ] ||
	fail "the second read was not served from the ssd's cached copies"

# three times the ssd's size, each file read back (cached, then evicted)
for n in 1 2 3 4; do
	gen big$n 48 $((n + 10))
	cp big$n "$mnt/big$n" || { cat "$WORK/c.log"; fail "writing big$n ($n x 48 MiB on a 64 MiB ssd)"; }
	cmp big$n "$mnt/big$n" || fail "big$n reads back wrong"
done
set -- $(usage w)
echo "after 192 MiB: ssd data $1 cached $3, hdd data $2, $6 extents promoted"
for n in 1 2 3 4; do
	cmp big$n "$mnt/big$n" || fail "big$n reads back wrong (again)"
done
# the cache's buckets went round: idle, the promote thread drops the
# stale cached pointers (before their buckets' 8-bit gens come round)
i=0
while :; do
	"$BCACHEFS" fs usage --json "$mnt" > sw.json || fail "fs usage"
	set -- $(python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["promote"]; print(p["stale_sweeps"], p["extents_swept"])' sw.json)
	[ "$1" -ge 1 ] && [ "$2" -gt 0 ] && break
	i=$((i + 1))
	[ $i -lt 40 ] || fail "no sweep of stale cached pointers after 20 s ($1 sweeps, $2 extents)"
	sleep 0.5
done
echo "stale cached pointers: $1 sweeps, $2 extents rewritten without them"
cmp f1 "$mnt/nc/f1" && cmp k1 "$mnt/k1" || fail "f1 or k1 reads back wrong after the cache was reused"
unmount_fg c > /dev/null
grep -q "checksum error" c.log && fail "a read met a checksum error (a cached copy overwritten?)"
"$BCACHEFS" fsck -f -n s.img h.img > fsck.out 2>&1 || { cat fsck.out; fail "fsck -f -n"; }

mount_fg a s.img:h.img
cmp f1 "$mnt/nc/f1" && cmp k1 "$mnt/k1" || fail "f1 or k1 reads back wrong after a remount"
for n in 1 2 3 4; do
	cmp big$n "$mnt/big$n" || fail "big$n reads back wrong after a remount"
done
unmount_fg a > /dev/null
"$BCACHEFS" fsck -f -n s.img h.img > fsck.out 2>&1 || { cat fsck.out; fail "fsck -f -n after the remount"; }

# ---- a cache device: durability 0, the foreground and promote target ----
# writes put a cached copy on it and the durable one on the store; reads
# come from it; three times its size written never fails
rm -f s.img h.img
truncate -s 32M c.img
truncate -s 128M d.img
"$BCACHEFS" format -q --durability=0 --group=cache c.img --durability=1 --group=store d.img \
	--foreground_target=cache --promote_target=cache > fmt.out 2>&1 || { cat fmt.out; fail "format (cache device)"; }
mount_fg z c.img:d.img
cp k1 "$mnt/k1" || fail "write k1 (cache device)"
set -- $(usage z0)
echo "cache device: data $1 cached $3; store: data $2"
[ "$1" = 0 ] && [ "$3" -ge 12582912 ] && [ "$2" -ge 12582912 ] ||
	fail "k1 is not durable on the store with a cached copy on the cache device"
cmp k1 "$mnt/k1" || fail "k1 reads back wrong (cache device)"
set -- $(usage z1)
[ "$4" -ge 12582912 ] && [ "$5" = 0 ] || fail "k1 was not read from the cache device: $4 from it, $5 from the store"
for n in 1 2; do
	cp big$n "$mnt/big$n" || { cat "$WORK/z.log"; fail "writing big$n on a 32 MiB cache device"; }
done
for n in 1 2; do
	cmp big$n "$mnt/big$n" || fail "big$n reads back wrong (cache device)"
done
cmp k1 "$mnt/k1" || fail "k1 reads back wrong after the cache device was reused"
unmount_fg z > /dev/null
grep -q "checksum error" z.log && fail "a read met a checksum error (cache device)"
"$BCACHEFS" fsck -f -n c.img d.img > fsck.out 2>&1 || { cat fsck.out; fail "fsck -f -n (cache device)"; }
exit 0
