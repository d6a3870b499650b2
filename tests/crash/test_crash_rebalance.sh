#!/bin/sh
# Crash states of rebalance (tests/crash/README.md): a
# filesystem with --background_compression=zstd gets text files written
# with rebalance off (BCH_REBALANCE=0), so they are stored uncompressed;
# then a mount with BCH_WRITE_LOG set runs nothing but rebalance (it
# compresses them: new encodings written, keys replaced) until it stops,
# and is unmounted. In a sample of the prefixes of that mount's write log
# and of reorderings between flushes, the recovery of a mount must
# succeed, fsck -f -n must be clean, and every file must be what it was
# before (sha256): a crash leaves the old encoding or the new one. The
# harness must fail: the same run with BCH_TEST_SKIP_FLUSH=1 must give
# states where a file is lost or different.
#
# Knobs: CRASH_PREFIX (default 20; TEST_QUICK 6), CRASH_REORDER (default
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
	np=${CRASH_PREFIX:-20} nr=${CRASH_REORDER:-12}
fi
seed=${CRASH_SEED:-1}
CC="sh $TESTDIR/crashcheck.sh"

manifest() {	# DIR OUT
	(cd "$1" && find . -type f ! -path './lost+found/*' -print0 | sort -z | xargs -0 -r sha256sum) > "$2"
}

# the filesystem with uncompressed data, and what it holds
truncate -s 32M prep.img
"$BCACHEFS" format -q --background_compression=zstd prep.img > fmt.out 2>&1 || { cat fmt.out; fail "format"; }
BCH_REBALANCE=0 mount_fg p prep.img
for i in 1 2 3 4 5 6; do
	# written whole (cp): extents of up to 64 KiB, which compress
	for f in "$TESTDIR"/../../doc/*.md; do cat "$f"; done | head -c $((i * 150000)) > "t$i"
	cp "t$i" "$mnt/t$i" || fail "write t$i"
done
sync "$mnt/t1"
manifest "$mnt" want.sha
unmount_fg p > /dev/null
[ "$(wc -l < want.sha)" = 6 ] || fail "$(wc -l < want.sha) files"

# record NAME [ENV=VALUE...]: a mount with the log that runs rebalance until it stops
record() {
	_n=$1
	shift
	cp prep.img "$_n.img"
	cp prep.img "$_n.base"
	export BCH_WRITE_LOG="$WORK/$_n.wlog"
	[ $# = 0 ] || export "$@"
	mount_fg "$_n" "$WORK/$_n.img" -v
	unset BCH_WRITE_LOG BCH_TEST_SKIP_FLUSH
	# until a pass ended and the counters stand still for a second
	_i=0 _last=
	while :; do
		"$BCACHEFS" fs usage --json "$mnt" > "$_n-usage.json" || fail "$_n: fs usage"
		_now=$(python3 -c 'import json, sys; g = json.load(open(sys.argv[1]))["rebalance"]; print(g["extents_compressed"], g["passes"])' "$_n-usage.json")
		[ "${_now%% *}" -gt 0 ] && [ "$_now" = "$_last" ] && break
		_last=$_now _i=$((_i + 1))
		[ $_i -lt 60 ] || fail "$_n: rebalance still busy after 60 s"
		sleep 1
	done
	unmount_fg "$_n" > "$_n.unmount"
	grep "rebalance:" "$WORK/$_n.log" | tail -3
	"$BCACHEFS" fsck -f -n "$_n.img" > "$_n.n" 2>&1 || { cat "$_n.n"; fail "$_n: fsck -f -n after rebalance"; }
	"$REPLAY" info "$_n.wlog" | head -n 1 | sed "s/^/$_n: /"
}

# a state holds every file as it was
cat > check.sh <<EOF
x=\$(mktemp -d "\${TMPDIR:-/tmp}/crashrb.XXXXXX")
trap 'rm -rf "\$x"' EXIT
"\$BCACHEFS" extract \$CRASH_IMAGES / "\$x/t" > "\$x/e" 2>&1 || { tail -5 "\$x/e"; exit 1; }
(cd "\$x/t" && find . -type f ! -path './lost+found/*' -print0 | sort -z | xargs -0 -r sha256sum) > "\$x/got"
cmp -s "$WORK/want.sha" "\$x/got" || { echo "files lost or changed:"; diff "$WORK/want.sha" "\$x/got" | head -5; exit 1; }
EOF

record g
python3 -c 'import json, sys; g = json.load(open(sys.argv[1]))["rebalance"]; print(g); sys.exit(not g["extents_compressed"])' \
	g-usage.json || fail "rebalance compressed nothing"
extract_ok=$($CC --check "sh $WORK/check.sh" --prefix $np --reorder $nr --seed $seed \
	--keep "$WORK/fail-g" g.wlog g.base > cc1.out 2>&1; echo $?)
cat cc1.out
[ "$extract_ok" = 0 ] || fail "crash states of rebalance failed (ids in fail-g/failed)"
grep -q " [1-9][0-9]* ok," cc1.out || fail "no state checked"

# ---- new encodings that are not durable before the journal entries that point to them ----
record s BCH_TEST_SKIP_FLUSH=1
"$REPLAY" info s.wlog | grep -q ' flushes 0 ' || fail "BCH_TEST_SKIP_FLUSH=1: the mount logged flushes"
$CC --check "sh $WORK/check.sh" --prefix 0 --reorder 4 --seed $seed s.wlog s.base > cc2.out 2>&1
rc=$?
tail -3 cc2.out
[ $rc = 1 ] || fail "rebalance that never flushes: crashcheck exit $rc, want 1"
exit 0
