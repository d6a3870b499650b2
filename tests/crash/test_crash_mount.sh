# Crash states of the read-write mount
# (tests/crash/README.md): a scripted workload with fsyncs (mkdir, new files
# of several sizes, rename, rename over a file, unlink, truncate, overwrite,
# append, a directory of small files) runs on `bcachefs mount` with
# BCH_WRITE_LOG set for the mount process. Before each operation the
# workload appends a "want" mark (what the paths it touches will hold),
# and once the fsync that follows it returned a "sync" mark. In every
# prefix of the mount's write log (sampled) and a sample of reorderings
# between flushes: the recovery of a mount (`replay recover`) must succeed,
# fsck -f -n must then be clean, and every path whose last reached mark is a
# "sync" must hold exactly that (file content by sha256, a directory, or
# absent); a path with an operation in flight (a "want" after its last
# "sync") may hold anything. A few states are recovered by the mount itself
# (mount, unmount) instead. The harness must fail: the same workload with
# BCH_TEST_SKIP_FLUSH=1 (fsync returns before anything is durable) must
# give states where a synced file is missing or different.
#
# Knobs: CRASH_PREFIX (default 40; TEST_QUICK 10), CRASH_REORDER (default
# 30; TEST_QUICK 8), CRASH_SEED (default 1), CRASH_EXHAUSTIVE (every
# outcome of the epochs with at most this many; default 0, none).
set -u
. "$(dirname "$0")/../lib.sh"
replay_tool
export BCACHEFS
fuse_mount_setup
command -v sha256sum > /dev/null || { echo "sha256sum missing"; exit 77; }
if [ -n "${TEST_QUICK:-}" ]; then
	np=${CRASH_PREFIX:-10} nr=${CRASH_REORDER:-8}
else
	np=${CRASH_PREFIX:-40} nr=${CRASH_REORDER:-30}
fi
seed=${CRASH_SEED:-1} nx=${CRASH_EXHAUSTIVE:-0}
CC="sh $TESTDIR/crashcheck.sh"

# ---- the workload ----
# mark KIND PATH VALUE: KIND want|sync, VALUE a sha256, dir or gone
mark() { "$REPLAY" mark "$log" "$1 $2 $3"; }
h() { sha256sum < "$shadow$1" | cut -c1-64; }
fsync() { sync "$mnt$1" || fail "fsync $1"; }

# the operations: the shadow tree ($shadow) gets the same changes
op_mkdir() {
	mark want "$1" dir
	mkdir "$mnt$1" "$shadow$1" || fail "mkdir $1"
	fsync "$1"; mark sync "$1" dir
}
op_new() {	# PATH BYTES
	head -c "$2" /dev/urandom > "$shadow$1"
	mark want "$1" "$(h "$1")"
	cp "$shadow$1" "$mnt$1" || fail "write $1"
	fsync "$1"; mark sync "$1" "$(h "$1")"
}
op_rename() {	# FROM TO (TO may exist: replaced)
	mark want "$1" gone; mark want "$2" "$(h "$1")"
	mv "$mnt$1" "$mnt$2" && mv "$shadow$1" "$shadow$2" || fail "rename $1 $2"
	fsync "${2%/*}"; fsync "${1%/*}"
	mark sync "$1" gone; mark sync "$2" "$(h "$2")"
}
op_unlink() {
	mark want "$1" gone
	rm "$mnt$1" "$shadow$1" || fail "unlink $1"
	fsync "${1%/*}"; mark sync "$1" gone
}
op_truncate() {	# PATH BYTES
	truncate -s "$2" "$shadow$1"
	mark want "$1" "$(h "$1")"
	truncate -s "$2" "$mnt$1" || fail "truncate $1"
	fsync "$1"; mark sync "$1" "$(h "$1")"
}
op_overwrite() {	# PATH OFFSET BYTES
	head -c "$3" /dev/urandom > "$WORK/chunk"
	dd if="$WORK/chunk" of="$shadow$1" bs=1 seek="$2" conv=notrunc 2> /dev/null
	mark want "$1" "$(h "$1")"
	dd if="$WORK/chunk" of="$mnt$1" bs=64k oflag=seek_bytes seek="$2" conv=notrunc 2> /dev/null ||
		fail "overwrite $1"
	fsync "$1"; mark sync "$1" "$(h "$1")"
}
op_append() {	# PATH BYTES
	head -c "$2" /dev/urandom > "$WORK/chunk"
	cat "$WORK/chunk" >> "$shadow$1"
	mark want "$1" "$(h "$1")"
	cat "$WORK/chunk" >> "$mnt$1" || fail "append $1"
	fsync "$1"; mark sync "$1" "$(h "$1")"
}
op_smallfiles() {	# DIR N: N files, one fsync of the directory
	_i=0
	while [ $_i -lt "$2" ]; do
		head -c $((_i * 211 + 1)) /dev/urandom > "$shadow$1/s$_i"
		mark want "$1/s$_i" "$(h "$1/s$_i")"
		cp "$shadow$1/s$_i" "$mnt$1/s$_i" || fail "write $1/s$_i"
		_i=$((_i + 1))
	done
	fsync "$1"
	for f in "$shadow$1"/s*; do
		sync "$mnt$1/${f##*/}"
		mark sync "$1/${f##*/}" "$(sha256sum < "$f" | cut -c1-64)"
	done
}
workload() {
	op_mkdir /d1; op_mkdir /d2; op_mkdir /d3
	op_new /d1/a 100000
	op_new /d1/b 5000
	op_new /d2/c 1200000
	op_rename /d1/b /d2/b2
	op_unlink /d1/a
	op_truncate /d2/c 300000
	op_overwrite /d2/c 100000 50000
	op_append /d2/b2 7000
	op_smallfiles /d3 8
	op_rename /d2/c /d2/b2
	op_truncate /d3/s7 0
}

# record NAME [ENV=VALUE...]: format, mount with the log, the workload, unmount
record() {
	_n=$1
	shift
	log=$WORK/$_n.wlog shadow=$WORK/shadow-$_n
	rm -rf "$shadow"; mkdir -p "$shadow"
	truncate -s 64M "$_n.img"
	"$BCACHEFS" format -q "$_n.img" > /dev/null 2>&1 || fail "format"
	cp "$_n.img" "$_n.base"
	# the mount process gets the log (and the other variables)
	export BCH_WRITE_LOG="$log"
	[ $# = 0 ] || export "$@"
	mount_fg "$_n" "$WORK/$_n.img"
	unset BCH_WRITE_LOG BCH_TEST_SKIP_FLUSH
	workload
	unmount_fg "$_n" > /dev/null
	"$BCACHEFS" fsck -f -n "$_n.img" > "$_n.n" 2>&1 || { cat "$_n.n"; fail "$_n: fsck -f -n after the workload"; }
	"$REPLAY" info "$log" | head -n 1 | sed "s/^/$_n: /"
}

# the check of a state: extract it, then every path whose last reached mark
# is "sync" holds what the mark says
cat > check.sh <<'EOF'
x=$(mktemp -d "${TMPDIR:-/tmp}/crashmount.XXXXXX")
trap 'rm -rf "$x"' EXIT
"$BCACHEFS" extract $CRASH_IMAGES / "$x/t" > "$x/e" 2>&1 || { cat "$x/e"; exit 1; }
awk '{ if ($1 == "want") { pend[$2] = 1; seen[$2] = 1 } else { val[$2] = $3; delete pend[$2]; seen[$2] = 1 } }
     END { for (p in seen) if (!(p in pend) && (p in val)) print p, val[p] }' "$CRASH_MARKS" > "$x/expect"
bad=0
while read -r p v; do
	f=$x/t$p
	case $v in
	gone) [ ! -e "$f" ] && [ ! -L "$f" ] || { echo "$p: synced as removed, but it is there"; bad=1; };;
	dir) [ -d "$f" ] || { echo "$p: synced as a directory, but it is not one"; bad=1; };;
	*) if [ ! -f "$f" ]; then echo "$p: synced, but missing"; bad=1
	   elif [ "$(sha256sum < "$f" | cut -c1-64)" != "$v" ]; then echo "$p: content differs from what was synced"; bad=1; fi;;
	esac
done < "$x/expect"
exit $bad
EOF

# recovery by the mount itself: mount, unmount (exit 0), for --recover
cat > mount-recover.sh <<EOF
m=\$(mktemp -d "$WORK/mnt-r.XXXXXX")
"\$BCACHEFS" mount -f \$CRASH_IMAGES "\$m" > "\$m.log" 2>&1 &
p=\$!
i=0
until awk -v m="\$m" '\$2 == m { f = 1 } END { exit !f }' /proc/mounts; do
	kill -0 \$p 2> /dev/null || { wait \$p; echo "mount exited with \$?"; cat "\$m.log"; exit 1; }
	i=\$((i + 1)); [ \$i -lt 400 ] || { echo "not mounted after 20 s"; kill \$p; exit 1; }
	sleep 0.05
done
ls -R "\$m" > /dev/null || { echo "cannot list the mount"; r=1; }
fusermount3 -u "\$m" || { fusermount3 -u -z "\$m"; echo "unmount failed"; exit 1; }
wait \$p; r=\$?
cat "\$m.log"; rmdir "\$m"
exit \$r
EOF

record m
$CC --check "sh $WORK/check.sh" --prefix $np --reorder $nr --exhaustive $nx --seed $seed \
	--keep "$WORK/fail-m" m.wlog m.base > cc1.out 2>&1
rc=$?
cat cc1.out
[ $rc = 0 ] || fail "crash states of the mount's workload failed (ids in fail-m/failed)"
grep -q " [1-9][0-9]* ok," cc1.out || fail "no state checked"

# a few states recovered by the mount itself
$CC --recover "sh $WORK/mount-recover.sh" --check "sh $WORK/check.sh" --prefix 4 --reorder 3 --seed $seed \
	m.wlog m.base > cc2.out 2>&1
rc=$?
cat cc2.out
[ $rc = 0 ] || fail "crash states recovered by the mount failed"

# ---- an fsync that returns before anything is durable ----
record s BCH_TEST_SKIP_FLUSH=1
"$REPLAY" info s.wlog | grep -q ' flushes 0 ' || fail "BCH_TEST_SKIP_FLUSH=1: the mount logged flushes"
$CC --check "sh $WORK/check.sh" --prefix 0 --reorder 12 --seed $seed s.wlog s.base > cc3.out 2>&1
rc=$?
cat cc3.out
[ $rc = 1 ] || fail "a mount that never flushes: crashcheck exit $rc, want 1"
grep -Eq 'synced, but missing|differs from what was synced|synced as' cc3.out ||
	fail "a mount that never flushes: no synced path lost"
exit 0
