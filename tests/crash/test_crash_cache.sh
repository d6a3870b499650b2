#!/bin/sh
# Crash states of cache reuse (tests/crash/README.md): an ssd
# and an hdd with --promote_target=ssd --data_checksum=none; files written
# and moved to the hdd by rebalance leave cached copies that fill the ssd.
# Then a mount with BCH_WRITE_LOG set and rebalance off writes a new file
# on the ssd: its buckets are ones holding those cached copies, reused
# (new gens, which must be durable before the new data goes in: without
# checksums, a cached pointer that still looks current would read the new
# data as the old file's). In a sample of the prefixes of that mount's
# write log and of reorderings between flushes, the recovery of a mount
# must succeed, fsck -f -n must be clean, and every old file must read
# back as it was (sha256; the reads prefer the cached copies). The harness
# must fail: the same run with BCH_TEST_SKIP_FLUSH=1 must give failing
# states. (On this small, full ssd the journal is flushed before almost
# every bucket anyway, by the room making of the data writes: a run
# without the cache's own flush was tried and passed too, so this test
# guards the crash states of cache reuse in general, not that flush.)
#
# Knobs: CRASH_PREFIX (default 16; TEST_QUICK 6), CRASH_REORDER (default
# 12; TEST_QUICK 4), CRASH_SEED (default 1).
set -u
. "$(dirname "$0")/../lib.sh"
replay_tool
export BCACHEFS
fuse_mount_setup
command -v sha256sum > /dev/null || { echo "sha256sum missing"; exit 77; }
if [ -n "${TEST_QUICK:-}" ]; then
	np=${CRASH_PREFIX:-6} nr=${CRASH_REORDER:-4}
else
	np=${CRASH_PREFIX:-16} nr=${CRASH_REORDER:-12}
fi
seed=${CRASH_SEED:-1}
CC="sh $TESTDIR/crashcheck.sh"

gen() {	# FILE KIB SEED: seeded random data
	python3 -c 'import random, sys; sys.stdout.buffer.write(random.Random(int(sys.argv[2])).randbytes(int(sys.argv[1]) << 10))' \
		"$2" "$3" > "$1"
}

usage() {	# NAME: "ssd_data hdd_data ssd_cached"
	"$BCACHEFS" fs usage --json "$mnt" > "$1.json" 2>&1 || { cat "$1.json"; fail "$1: fs usage"; }
	python3 -c 'import json, sys; d = {x["index"]: x["data"] for x in json.load(open(sys.argv[1]))["devices"]}; print(d[0]["data"]["bytes"], d[1]["data"]["bytes"], d[0]["cached"]["bytes"])' "$1.json"
}

# the old files on the hdd, their cached copies filling the ssd
truncate -s 16M s.img
truncate -s 64M h.img
"$BCACHEFS" format -q --data_checksum=none --group=ssd s.img --group=hdd h.img \
	--foreground_target=ssd --background_target=hdd --promote_target=ssd > fmt.out 2>&1 ||
	{ cat fmt.out; fail "format"; }
mount_fg p s.img:h.img
for i in 1 2 3 4 5; do
	gen "a$i" 2048 "$i"
	cp "a$i" "$mnt/a$i" || fail "write a$i"
done
sync "$mnt/a1"
i=0
while :; do
	set -- $(usage p$i)
	[ "$1" = 0 ] && [ "$2" -ge 10485760 ] && break
	i=$((i + 1))
	[ $i -lt 60 ] || fail "rebalance: ssd $1 hdd $2 after 30 s"
	sleep 0.5
done
echo "prepared: hdd $2 bytes of data, ssd $3 bytes cached"
[ "$3" -ge 8388608 ] || fail "only $3 bytes cached on the ssd"
unmount_fg p > /dev/null
(for i in 1 2 3 4 5; do sha256sum "a$i" | sed "s| a$i| ./a$i|"; done) > want.sha

# a state holds every old file as it was (the new one: anything)
cat > check.sh <<EOF
x=\$(mktemp -d "\${TMPDIR:-/tmp}/crashcache.XXXXXX")
trap 'rm -rf "\$x"' EXIT
"\$BCACHEFS" extract \$CRASH_IMAGES / "\$x/t" > "\$x/e" 2>&1 || { tail -5 "\$x/e"; exit 1; }
(cd "\$x/t" && for f in a1 a2 a3 a4 a5; do sha256sum "./\$f"; done) > "\$x/got" 2>&1
cmp -s "$WORK/want.sha" "\$x/got" || { echo "old files lost or changed:"; diff "$WORK/want.sha" "\$x/got" | head -5; exit 1; }
EOF

# record NAME [ENV=VALUE...]: a mount with the log that writes a new file over the cache
record() {
	_n=$1
	shift
	cp s.img "$_n-s.img"
	cp h.img "$_n-h.img"
	cp s.img "$_n-s.base"
	cp h.img "$_n-h.base"
	export BCH_WRITE_LOG="$WORK/$_n.wlog"
	[ $# = 0 ] || export "$@"
	BCH_REBALANCE=0 BCH_PROMOTE=0 mount_fg "$_n" "$WORK/$_n-s.img:$WORK/$_n-h.img"
	unset BCH_WRITE_LOG BCH_TEST_SKIP_FLUSH
	gen "b$_n" 10240 9
	cp "b$_n" "$mnt/b" || fail "$_n: write b"
	sync "$mnt/b"
	set -- $(usage "$_n")
	echo "$_n: ssd $1 bytes of data, $3 cached"
	[ "$1" -ge 8388608 ] || fail "$_n: the new file did not go to the ssd"
	unmount_fg "$_n" > "$_n.unmount"
	"$BCACHEFS" fsck -f -n "$_n-s.img" "$_n-h.img" > "$_n.n" 2>&1 || { cat "$_n.n"; fail "$_n: fsck -f -n"; }
	"$REPLAY" info "$_n.wlog" | head -n 1 | sed "s/^/$_n: /"
}

record g
ok=$($CC --check "sh $WORK/check.sh" --prefix $np --reorder $nr --seed $seed \
	--keep "$WORK/fail-g" g.wlog g-s.base:g-h.base > cc1.out 2>&1; echo $?)
cat cc1.out
[ "$ok" = 0 ] || fail "crash states of cache reuse failed (ids in fail-g/failed)"
grep -q " [1-9][0-9]* ok," cc1.out || fail "no state checked"

# ---- the harness sees lost durability: a run that never flushes fails ----
record s BCH_TEST_SKIP_FLUSH=1
"$REPLAY" info s.wlog | grep -q ' flushes 0 ' || fail "BCH_TEST_SKIP_FLUSH=1: the mount logged flushes"
$CC --check "sh $WORK/check.sh" --prefix 0 --reorder 8 --seed $seed s.wlog s-s.base:s-h.base > cc2.out 2>&1
rc=$?
tail -1 cc2.out
[ $rc = 1 ] || fail "cache reuse that never flushes: crashcheck exit $rc, want 1"
exit 0
