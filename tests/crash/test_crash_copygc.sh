#!/bin/sh
# Crash states of the copying GC (tests/crash/README.md): a
# 16 MiB filesystem is filled with 4 KiB files and a random half deleted
# with copygc off (BCH_COPYGC=0), so its buckets are left half full; then
# a mount with BCH_WRITE_LOG set runs nothing but copygc (it empties
# buckets, moving their extents) until it stops, and is unmounted. In a
# sample of the prefixes of that mount's write log and of reorderings
# between flushes, the recovery of a mount must succeed, fsck -f -n must
# be clean, and every file must be what it was before (sha256): a crash
# at any point leaves the old copy or the new one. The harness must fail:
# the same run with BCH_TEST_SKIP_FLUSH=1 (copies not durable before the
# journal entries that point to them) must give states where a file is
# lost or different.
#
# A 10 MiB file and 4 KiB files in the rest keep each state's check short.
# Knobs: CRASH_PREFIX (default 8; TEST_QUICK 4), CRASH_REORDER (default
# 6; TEST_QUICK 3), CRASH_SEED (default 1).
set -u
. "$(dirname "$0")/../lib.sh"
replay_tool
export BCACHEFS
fuse_mount_setup
command -v sha256sum > /dev/null || { echo "sha256sum missing"; exit 77; }
if [ -n "${TEST_QUICK:-}" ]; then
	np=${CRASH_PREFIX:-4} nr=${CRASH_REORDER:-3}
else
	np=${CRASH_PREFIX:-8} nr=${CRASH_REORDER:-6}
fi
seed=${CRASH_SEED:-1}
CC="sh $TESTDIR/crashcheck.sh"
REFILL=$TESTDIR/../mount/refill.py

manifest() {	# DIR OUT
	(cd "$1" && find . -type f ! -path './lost+found/*' -print0 | sort -z | xargs -0 -r sha256sum) > "$2"
}

# the filesystem with fragmented buckets, and what it holds
truncate -s 16M prep.img
"$BCACHEFS" format -q prep.img > fmt.out 2>&1 || { cat fmt.out; fail "format"; }
BCH_COPYGC=0 mount_fg p prep.img
python3 "$REFILL" "$mnt" --cycles 0 --delete-half --seed 5 --ballast 10485760 > prep.out 2>&1 || { cat prep.out; fail "prepare"; }
manifest "$mnt" want.sha
unmount_fg p > /dev/null
[ "$(wc -l < want.sha)" -gt 100 ] || fail "only $(wc -l < want.sha) files"

# record NAME [ENV=VALUE...]: a mount with the log that runs copygc until it stops
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
		_now=$(python3 -c 'import json, sys; g = json.load(open(sys.argv[1]))["copygc"]; print(g["passes"], g["extents_moved"])' "$_n-usage.json")
		[ "${_now%% *}" -gt 0 ] && [ "$_now" = "$_last" ] && break
		_last=$_now _i=$((_i + 1))
		[ $_i -lt 60 ] || fail "$_n: copygc still busy after 60 s"
		sleep 1
	done
	unmount_fg "$_n" > "$_n.unmount"
	grep "copygc:" "$WORK/$_n.log" | tail -3
	"$BCACHEFS" fsck -f -n "$_n.img" > "$_n.n" 2>&1 || { cat "$_n.n"; fail "$_n: fsck -f -n after copygc"; }
	"$REPLAY" info "$_n.wlog" | head -n 1 | sed "s/^/$_n: /"
}

# a state holds every file as it was
cat > check.sh <<EOF
x=\$(mktemp -d "\${TMPDIR:-/tmp}/crashgc.XXXXXX")
trap 'rm -rf "\$x"' EXIT
"\$BCACHEFS" extract \$CRASH_IMAGES / "\$x/t" > "\$x/e" 2>&1 || { tail -5 "\$x/e"; exit 1; }
(cd "\$x/t" && find . -type f ! -path './lost+found/*' -print0 | sort -z | xargs -0 -r sha256sum) > "\$x/got"
cmp -s "$WORK/want.sha" "\$x/got" || { echo "files lost or changed:"; diff "$WORK/want.sha" "\$x/got" | head -5; exit 1; }
EOF

record g
python3 -c 'import json, sys; g = json.load(open(sys.argv[1]))["copygc"]; print(g); sys.exit(not g["extents_moved"])' \
	g-usage.json || fail "copygc moved nothing"
extract_ok=$($CC --check "sh $WORK/check.sh" --prefix $np --reorder $nr --seed $seed \
	--keep "$WORK/fail-g" g.wlog g.base > cc1.out 2>&1; echo $?)
cat cc1.out
[ "$extract_ok" = 0 ] || fail "crash states of copygc failed (ids in fail-g/failed)"
grep -q " [1-9][0-9]* ok," cc1.out || fail "no state checked"

# ---- copies that are not durable before the journal entries that point to them ----
record s BCH_TEST_SKIP_FLUSH=1
"$REPLAY" info s.wlog | grep -q ' flushes 0 ' || fail "BCH_TEST_SKIP_FLUSH=1: the mount logged flushes"
$CC --check "sh $WORK/check.sh" --prefix 0 --reorder 4 --seed $seed s.wlog s.base > cc2.out 2>&1
rc=$?
tail -3 cc2.out
[ $rc = 1 ] || fail "copygc that never flushes: crashcheck exit $rc, want 1"
exit 0
