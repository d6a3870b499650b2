#!/bin/sh
# killtest.sh: SIGKILL a writing command at random moments, then check what
# it left (tests/crash/README.md).
#
#   killtest.sh [OPTION]... BASE[:BASE...] -- CMD [ARG]...
#
# Each run copies the BASE images to fresh images, starts CMD (an
# executable, not a shell function; it runs in its own session and process
# group, so a `sh -c` wrapper is killed with everything it started;
# setsid(1) of util-linux is needed) with KILL_IMAGES
# (the images, space-separated) and KILL_DEVS (':'-separated) in its
# environment, sends SIGKILL to its process group after a delay, and
# checks the images like one state of crashcheck.sh (same options: --mode
# recover|repair|ro, --allow-nofs, --allow-uninit, --check CMD, --recover
# CMD, --timeout SECS).
#
# First two runs without a kill measure the command's duration T and when
# its writes happen, [W0, W1] (the shorter run; they must exit 0, or 0/1
# with --mode repair). The delays are drawn with the seed: 3 in 4
# uniformly from [W0, W1] (a command may read for long before it writes,
# and exit long after: the kills that matter land among the writes), the
# others from [0, T). The runs are recorded with BCH_WRITE_LOG, so each
# line says how many of the uninterrupted run's writes had completed when
# the kill came. A run that ended before its kill is checked too (counted
# as "finished").
#
#   --runs N       kills (default 10)
#   --seed S       seed of the delays (default 1)
#   --cleanup CMD  sh -c CMD after each kill, before the check (e.g. the
#                  `fusermount3 -u -z MNT` of a killed FUSE server)
#   --keep DIR     the images of the failing runs (zstd) and their reasons
#   --self-kill    no timed kill: each run kills itself at a write drawn
#                  with the seed from [1, W) (BCH_KILL_AT_WRITE, dev.c),
#                  W the writes of the uninterrupted run: always in the
#                  middle of the writes, whatever the machine's load
#
# Exit 0 when every run's images pass, 1 when one fails, 2 on a usage or
# set-up error. Last line: "N runs: N killed, N finished, N failed".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
check=$top/tests/crash/crashcheck.sh
: "${BCACHEFS:=$top/bcachefs}"
: "${REPLAY:=$top/build/tests/replay}"
export BCACHEFS REPLAY

usage() {
	sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 2
}
mode=recover nofs=0 uninit=0 ucheck="" recover="" keep="" tmo=60 runs=10 seed=1 cleanup="" selfkill=0
while [ $# -gt 0 ]; do
	case $1 in
	--mode) mode=$2; shift;;
	--allow-nofs) nofs=1;;
	--allow-uninit) uninit=1;;
	--check) ucheck=$2; shift;;
	--recover) recover=$2; shift;;
	--runs) runs=$2; shift;;
	--cleanup) cleanup=$2; shift;;
	--seed) seed=$2; shift;;
	--keep) keep=$2; shift;;
	--timeout) tmo=$2; shift;;
	--self-kill) selfkill=1;;
	-h|--help) usage;;
	--) shift; break;;
	-*) echo "killtest: unknown option $1" >&2; exit 2;;
	*) bases=$1;;
	esac
	shift
done
[ -n "${bases:-}" ] && [ $# -gt 0 ] || usage
case $mode in ro|recover|repair) ;; *) echo "killtest: bad --mode $mode" >&2; exit 2;; esac
[ -x "$REPLAY" ] || { echo "killtest: $REPLAY missing (make build/tests/replay)" >&2; exit 2; }
command -v setsid > /dev/null || { echo "killtest: setsid(1) missing (util-linux)" >&2; exit 2; }
[ -n "$recover" ] || recover="\"$REPLAY\" recover \"\$CRASH_DEVS\""

work=$(mktemp -d "${TMPDIR:-/tmp}/killtest.XXXXXX") || exit 2
pid=""
cleanup() {
	[ -n "$pid" ] && kill -9 -- "-$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 2' HUP INT TERM
[ -z "$keep" ] || mkdir -p "$keep" || exit 2

nb=0
for b in $(echo "$bases" | tr ':' ' '); do
	[ -f "$b" ] || { echo "killtest: no base image $b" >&2; exit 2; }
	nb=$((nb + 1))
done

# fresh copies of the bases: sets KILL_IMAGES, KILL_DEVS
fresh() {
	KILL_IMAGES="" KILL_DEVS="" _i=0
	for _b in $(echo "$bases" | tr ':' ' '); do
		_o=$work/img-$_i.img
		cp --sparse=always "$_b" "$_o" || exit 2
		KILL_IMAGES="$KILL_IMAGES${KILL_IMAGES:+ }$_o"
		KILL_DEVS="$KILL_DEVS${KILL_DEVS:+:}$_o"
		_i=$((_i + 1))
	done
	export KILL_IMAGES KILL_DEVS
	rm -f "$work/log"
}

now_ns() { date +%s%N; }

# the uninterrupted runs: the shorter of two (the first warms the caches)
dur="" w0=0 w1=0
for _k in 1 2; do
	fresh
	t0=$(now_ns)
	BCH_WRITE_LOG=$work/log "$@" > "$work/ref.out" 2>&1
	rc=$?
	d=$(( ($(now_ns) - t0) / 1000000 ))
	if [ $rc != 0 ] && ! { [ $mode = repair ] && [ $rc = 1 ]; }; then
		echo "killtest: the command without a kill exited $rc:"
		tail -n 20 "$work/ref.out"
		exit 2
	fi
	[ -n "$dur" ] && [ "$dur" -le $d ] && continue
	dur=$d
	# the writes, in ms after the start
	wt=$("$REPLAY" info "$work/log" | sed -n 's/^writes from \([0-9]*\) to \([0-9]*\) ns$/\1 \2/p')
	if [ -n "$wt" ]; then
		w0=$(( (${wt% *} - t0) / 1000000 )) w1=$(( (${wt#* } - t0) / 1000000 ))
	fi
done
total=$("$REPLAY" info "$work/log" | sed -n 's/.* writes \([0-9]*\) .*/\1/p')
[ $dur -gt 0 ] || dur=1
# (times that make no sense, e.g. another clock: the whole run)
[ $w0 -ge 0 ] && [ $w1 -ge $w0 ] && [ $w1 -le $dur ] || { w0=0 w1=$dur; }
echo "uninterrupted: ${dur} ms, ${total:-?} writes from ${w0} to ${w1} ms"

CC_MODE=$mode CC_NOFS=$nofs CC_UNINIT=$uninit CC_CHECK=$ucheck CC_RECOVER=$recover
CC_KEEP="" CC_TMO=$tmo CC_WORK=$work/check CC_RESULTS=$work/results
export CC_MODE CC_NOFS CC_UNINIT CC_CHECK CC_RECOVER CC_KEEP CC_TMO CC_WORK CC_RESULTS
mkdir -p "$CC_WORK/out"
: > "$CC_RESULTS"

killed=0 finished=0 failed=0 i=0
if [ $selfkill = 1 ]; then
	# write numbers (BCH_KILL_AT_WRITE counts from 0: k kills before write k)
	points=$(awk -v s="$seed" -v n="$runs" -v w="${total:-2}" \
		'BEGIN { srand(s); for (i = 0; i < n; i++) printf "%d\n", 1 + int(rand() * (w > 2 ? w - 1 : 1)) }')
else
	points=$(awk -v s="$seed" -v n="$runs" -v t="$dur" -v a="$w0" -v b="$w1" \
		'BEGIN { srand(s); for (i = 0; i < n; i++) {
			if (rand() < 0.75) d = a + rand() * (b - a); else d = rand() * t
			printf "%.3f\n", d / 1000 } }')
fi
for delay in $points; do
	i=$((i + 1))
	fresh
	if [ $selfkill = 1 ]; then
		BCH_WRITE_LOG=$work/log BCH_KILL_AT_WRITE=$delay "$@" > "$work/run.out" 2>&1
		r=$?
		when="at write $delay"
	else
		# its own session and process group (setsid execs in place: the pid
		# is the group), so the kill reaches every process of CMD
		BCH_WRITE_LOG=$work/log setsid "$@" > "$work/run.out" 2>&1 &
		pid=$!
		sleep "$delay"
		# (the group does not exist yet when setsid has not run: the pid alone)
		kill -9 -- "-$pid" 2>/dev/null || kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		r=$?
		pid=""
		when="after ${delay}s"
	fi
	if [ $r = 137 ]; then how=killed; else how=finished; fi
	[ -z "$cleanup" ] || sh -c "$cleanup" > "$work/cleanup.out" 2>&1
	w=$("$REPLAY" info "$work/log" 2>/dev/null | sed -n 's/.* writes \([0-9]*\) .*/\1/p')
	desc="run $i: $how $when, ${w:-0} of ${total:-?} writes (exit $r)"
	if [ $how = killed ]; then killed=$((killed + 1)); else finished=$((finished + 1)); fi

	CRASH_IMAGES=$KILL_IMAGES CRASH_DEVS=$KILL_DEVS CRASH_STATE=kill-$i CRASH_DESC=$desc \
	CRASH_CUT="" CRASH_MARKS=/dev/null CRASH_LAST_MARK="" \
		sh "$check" --one > "$work/one.out" 2>&1
	if [ $? = 0 ]; then
		echo "ok   $desc"
	else
		failed=$((failed + 1))
		echo "FAIL $desc"
		cat "$work/one.out"
		if [ -n "$keep" ]; then
			for f in $KILL_IMAGES; do
				zstd -q -1 "$f" -o "$keep/run-$i-$(basename "$f").zst"
			done
			{ echo "run $i ($desc):"; cat "$work/one.out"; } >> "$keep/failed"
		fi
	fi
done
echo "$i runs: $killed killed, $finished finished, $failed failed"
[ $failed = 0 ]
