#!/bin/sh
# Test runner: every cmocka unit binary and every test script, J at a time.
#   BCACHEFS=path/to/bcachefs UNITDIR=build/tests/unit sh tests/run.sh [-j J] [GLOB...]
# A test script is tests/*/NNN-name.sh or tests/*/test_*.sh; it gets $BCACHEFS,
# $TESTDIR (its own folder), $WORK (a scratch folder, its working directory,
# kept on failure), $GOLDEN (tests/golden) and $BCACHEFS_RUN_DIR ($WORK/run:
# the control sockets of its mounts, so that two tests mounting filesystems
# of one uuid, such as copies of a golden image, never meet). Exit 0 = pass,
# 77 = skipped, anything else = fail.
#
# Tests run J at once (-j J, else $TEST_JOBS, else 2), the longest first
# (seconds per test from $TEST_DURATIONS, default tests/durations.txt;
# a test not in it counts as 30 s) so that the slots end together. A script
# with a line "# serial" runs alone, before the others: only for a test
# that measures time or needs the whole machine (none does today).
# One line per test as it ends ("ok   name (Ns)", "skip name: why",
# "FAIL name ..." and the tail of its log); then the line
# "N passed, N failed, N skipped" and the wall time.
# A GLOB matches names such as fsck/test_fsck_scan or unit/test_bkey, or
# their last part; !GLOB leaves out what it matches; no GLOB (or only !GLOBs):
# every test.
# TEST_DURATIONS_OUT=FILE writes "name seconds cpu-seconds" of every test
# run to FILE (a full run's: the new tests/durations.txt).
# $TEST_CACHE: where unzst (tests/lib.sh) keeps decompressed images for
# all the tests (default: a folder of this run, removed at its end).
# TEST_GCOV_DIR=DIR: the gcov data of each test in DIR/NAME (GCOV_PREFIX;
# tests/asan-coverage.sh).
top=$(cd "$(dirname "$0")/.." && pwd)
: "${BCACHEFS:=$top/bcachefs}"
: "${UNITDIR:=$top/build/tests/unit}"
GOLDEN=$top/tests/golden
export BCACHEFS GOLDEN
jobs=${TEST_JOBS:-2}
while getopts j: opt; do
	case $opt in
	j) jobs=$OPTARG;;
	*) echo "usage: run.sh [-j JOBS] [GLOB]" >&2; exit 16;;
	esac
done
shift $((OPTIND - 1))
case $jobs in ''|*[!0-9]*|0) echo "run.sh: -j wants a number, not '$jobs'" >&2; exit 16;; esac
[ $# -gt 0 ] || set -- '*'
# match GLOB...: true when $name is selected
match() {
	_in=0 _any=0
	for _g in "$@"; do
		case $_g in
		!*)	case "$name" in ${_g#!}|*/${_g#!}) return 1;; esac;;
		*)	_any=1
			case "$name" in $_g|*/$_g) _in=1;; esac;;
		esac
	done
	[ $_in = 1 ] || [ $_any = 0 ]
}
durations=${TEST_DURATIONS:-$top/tests/durations.txt}
pass=0 fail=0 skip=0 failed=""
artefacts=${TEST_ARTEFACTS:-/tmp/bcachefs-test-failures}
mkdir -p "$artefacts"
state=$(mktemp -d /tmp/bcachefs-run.XXXXXX)
: "${TEST_CACHE:=$state/cache}"
export TEST_CACHE
t_start=$(date +%s)

# ---- the tests: "estimate serial kind name path", longest first ----
# (estimate: seconds from the table; serial: 1 for "# serial" scripts)
est() {
	_e=$(awk -v n="$1" '$1 == n { print $2; exit }' "$durations" 2>/dev/null)
	echo "${_e:-30}"
}
for t in "$UNITDIR"/test_*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	case $t in *.d|*.o) continue;; esac
	name=unit/$(basename "$t")
	match "$@" || continue
	echo "$(est "$name") 0 unit $name $t"
done > "$state/list"
for t in "$top"/tests/*/[0-9]*.sh "$top"/tests/*/test_*.sh; do
	[ -f "$t" ] || continue
	rel=${t#"$top"/tests/}
	name=${rel%.sh}
	match "$@" || continue
	ser=0
	grep -q '^# serial$' "$t" && ser=1
	echo "$(est "$name") $ser sh $name $t"
done >> "$state/list"
# serial ones first (they run alone), then the longest first; stable
sort -s -k2,2nr -k1,1nr "$state/list" > "$state/order"

# ---- one test, in the background: its results in $state/IDX.* ----
# (a FIFO on fd 3 says which one ended: "IDX" per line)
mkfifo "$state/done"
exec 3<> "$state/done"
running=0 pids=""
cleanup() {
	for _p in $pids; do kill "$_p" 2>/dev/null; done
	exec 3>&-
	rm -rf "$state"
}
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

start() {	# IDX KIND NAME PATH
	_w=$(mktemp -d /tmp/bcachefs-test.XXXXXX)
	echo "$_w" > "$state/$1.work"
	(
		WORK=$_w
		TESTDIR=$(dirname "$4")
		BCACHEFS_RUN_DIR=$_w/run
		export WORK TESTDIR BCACHEFS_RUN_DIR
		if [ -n "${TEST_GCOV_DIR:-}" ]; then
			GCOV_PREFIX=$TEST_GCOV_DIR/$(echo "$3" | tr / _)
			export GCOV_PREFIX
		fi
		_t0=$(date +%s)
		cd "$_w" || exit 1
		if [ "$2" = unit ]; then
			"$4" > "$_w/log" 2>&1 3>&-
		else
			sh "$4" > "$_w/log" 2>&1 3>&-
		fi
		_rc=$?
		# the CPU seconds of the test and everything it waited for
		# (times of this shell: not in a command substitution, a subshell)
		times > "$state/$1.times"
		_cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } } END { printf "%.1f", s }' "$state/$1.times")
		echo "$_rc $(( $(date +%s) - _t0 )) $_cpu" > "$state/$1.rc"
		echo "$1" >&3
	) > /dev/null 2>&1 < /dev/null &
	eval "pid_$1=$!"
	pids="$pids $!"
	running=$((running + 1))
}

# collect: wait for one test to end, print its line
collect() {
	read -r _i <&3 || { echo "run.sh: lost track of the running tests" >&2; exit 1; }
	eval "_p=\$pid_$_i _name=\$name_$_i"
	wait "$_p" 2>/dev/null
	pids=$(echo "$pids" | tr ' ' '\n' | grep -vx "$_p" | tr '\n' ' ')
	running=$((running - 1))
	read -r _rc _secs _cpu < "$state/$_i.rc"
	_w=$(cat "$state/$_i.work")
	[ -n "${TEST_DURATIONS_OUT:-}" ] && echo "$_name $_secs $_cpu" >> "$state/durations"
	if [ "$_rc" = 0 ]; then
		pass=$((pass + 1)); echo "ok   $_name (${_secs}s)"; rm -rf "$_w"
	elif [ "$_rc" = 77 ] && [ "${_name%%/*}" != unit ]; then
		skip=$((skip + 1)); echo "skip $_name: $(tail -n 1 "$_w/log")"; rm -rf "$_w"
	else
		fail=$((fail + 1)); failed="$failed $_name"
		_dest="$artefacts/$(echo "$_name" | tr / _)"
		rm -rf "$_dest"; mv "$_w" "$_dest"
		echo "FAIL $_name (exit $_rc; artefacts in $_dest)"
		case $_name in unit/*) _n=20;; *) _n=25;; esac
		tail -n $_n "$_dest/log" | sed 's/^/    /'
	fi
}

i=0
while read -r _est ser kind name path; do
	i=$((i + 1))
	eval "name_$i=\$name"
	if [ "$ser" = 1 ]; then
		# alone: after everything started before it, before anything after
		while [ $running -gt 0 ]; do collect; done
		start $i "$kind" "$name" "$path"
		collect
		continue
	fi
	while [ $running -ge "$jobs" ]; do collect; done
	start $i "$kind" "$name" "$path"
done < "$state/order"
while [ $running -gt 0 ]; do collect; done

[ -n "${TEST_DURATIONS_OUT:-}" ] && [ -f "$state/durations" ] &&
	sort "$state/durations" > "$TEST_DURATIONS_OUT"
exec 3>&-
rm -rf "$state"
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
echo "wall time $(( $(date +%s) - t_start ))s ($jobs at once)"
[ $fail = 0 ]
