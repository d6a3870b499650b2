# Shared by the crash tests of the mount's background jobs
# (test_crash_copygc.sh, test_crash_rebalance.sh), sourced after lib.sh and
# fuse_mount_setup, in $WORK: the job's mount is recorded with a write log
# until the job stops, then crash states of that log are checked against
# the files the filesystem held before (want.sha).
#
# The caller sets JOB (the `fs usage --json` object: copygc, rebalance)
# and three python expressions over that object g: JOB_BUSY (changes while
# the job works, e.g. 'g["passes"], g["extents_moved"]'), JOB_READY (true
# once it ran) and JOB_DONE (true if it did something), then calls
# bgjob_run with the prepared image prep.img.
replay_tool
export BCACHEFS
command -v sha256sum > /dev/null || { echo "sha256sum missing"; exit 77; }
CC="sh $TESTDIR/crashcheck.sh"

# manifest DIR OUT: sha256 of every file under DIR
manifest() {
	(cd "$1" && find . -type f ! -path './lost+found/*' -print0 | sort -z | xargs -0 -r sha256sum) > "$2"
}

# bgjob_record NAME [ENV=VALUE...]: a mount with the write log that runs
# until the job ran and its counters stand still for a second
bgjob_record() {
	_n=$1
	shift
	cp prep.img "$_n.img"
	cp prep.img "$_n.base"
	export BCH_WRITE_LOG="$WORK/$_n.wlog"
	[ $# = 0 ] || export "$@"
	mount_fg "$_n" "$WORK/$_n.img" -v
	unset BCH_WRITE_LOG BCH_TEST_SKIP_FLUSH
	_i=0 _last=
	while :; do
		"$BCACHEFS" fs usage --json "$mnt" > "$_n-usage.json" || fail "$_n: fs usage"
		_now=$(python3 -c "import json, sys; g = json.load(open(sys.argv[1]))['$JOB']; print($JOB_BUSY, int(bool($JOB_READY)))" "$_n-usage.json")
		[ "${_now##* }" = 1 ] && [ "$_now" = "$_last" ] && break
		_last=$_now _i=$((_i + 1))
		[ $_i -lt 60 ] || fail "$_n: $JOB still busy after 60 s"
		sleep 1
	done
	unmount_fg "$_n" > "$_n.unmount"
	grep "$JOB:" "$WORK/$_n.log" | tail -3
	"$BCACHEFS" fsck -f -n "$_n.img" > "$_n.n" 2>&1 || { cat "$_n.n"; fail "$_n: fsck -f -n after $JOB"; }
	"$REPLAY" info "$_n.wlog" | head -n 1 | sed "s/^/$_n: /"
}

# bgjob_run NP NR SEED: record the job, check NP prefixes and NR
# reorderings of its log (every file as it was: the old copy or the new
# one survives a crash anywhere); then the harness must fail on the same
# job run with BCH_TEST_SKIP_FLUSH=1 (copies not durable before the
# journal entries that point to them)
bgjob_run() {
	cat > check.sh <<CHECK
x=\$(mktemp -d "\${TMPDIR:-/tmp}/crash-$JOB.XXXXXX")
trap 'rm -rf "\$x"' EXIT
"\$BCACHEFS" extract \$CRASH_IMAGES / "\$x/t" > "\$x/e" 2>&1 || { tail -5 "\$x/e"; exit 1; }
(cd "\$x/t" && find . -type f ! -path './lost+found/*' -print0 | sort -z | xargs -0 -r sha256sum) > "\$x/got"
cmp -s "$WORK/want.sha" "\$x/got" || { echo "files lost or changed:"; diff "$WORK/want.sha" "\$x/got" | head -5; exit 1; }
CHECK
	bgjob_record g
	python3 -c "import json, sys; g = json.load(open(sys.argv[1]))['$JOB']; print(g); sys.exit(not ($JOB_DONE))" \
		g-usage.json || fail "$JOB did nothing"
	_rc=$($CC --check "sh $WORK/check.sh" --prefix "$1" --reorder "$2" --seed "$3" \
		--keep "$WORK/fail-g" g.wlog g.base > cc1.out 2>&1; echo $?)
	cat cc1.out
	[ "$_rc" = 0 ] || fail "crash states of $JOB failed (ids in fail-g/failed)"
	grep -q " [1-9][0-9]* ok," cc1.out || fail "no state checked"

	bgjob_record s BCH_TEST_SKIP_FLUSH=1
	"$REPLAY" info s.wlog | grep -q ' flushes 0 ' || fail "BCH_TEST_SKIP_FLUSH=1: the mount logged flushes"
	$CC --check "sh $WORK/check.sh" --prefix 0 --reorder 4 --seed "$3" s.wlog s.base > cc2.out 2>&1
	_rc=$?
	tail -3 cc2.out
	[ $_rc = 1 ] || fail "$JOB that never flushes: crashcheck exit $_rc, want 1"
}
