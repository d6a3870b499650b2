#!/bin/sh
# crashcheck.sh: check the crash states of a recorded workload
# (tests/crash/README.md).
#
#   crashcheck.sh [OPTION]... LOG BASE[:BASE...]
#
# LOG was written by a workload run with BCH_WRITE_LOG=LOG; BASE are copies
# of its devices taken before it (in the order of `replay info LOG`). For
# each selected state (build/tests/replay: prefixes of the log, and writes
# since the last flush kept, dropped or torn), on a fresh copy:
#
#   1. fsck -f -n --json (the read-only open replays the journal in memory):
#      must not crash or hang; its exit code and problem names are noted
#      (a crash may leave what a read-only check reports, e.g. superblock
#      copies that differ, until the replay of a read-write open)
#   2. by --mode:
#      recover (default, a mount's view): a mount and unmount with nothing
#        done (`replay recover`, or --recover CMD) must exit 0 — it
#        replays the journal into the btrees, rewrites every superblock
#        copy and marks the filesystem clean — then fsck -f -n must exit 0
#      repair (a crash during fsck -y): fsck -y must exit 0 or 1, then
#        fsck -f -n must exit 0
#      ro: step 1 must have exited 0
#   3. --check CMD (sh -c CMD) must exit 0: the workload's own invariants,
#      on the images after step 2, with CRASH_IMAGES, CRASH_DEVS,
#      CRASH_STATE, CRASH_CUT, CRASH_MARKS (file of the reached marks' labels),
#      CRASH_LAST_MARK, CRASH_STEP1 (exit of step 1) in the environment
#
# Allowed instead of 2 and 3, when asked:
#   --allow-nofs    step 1 found no valid superblock (a crash during format
#                   before the superblock was written)
#   --allow-uninit  step 1 found sb_not_initialized (format stopped before
#                   initialising), and nothing else but superblock copies
#                   that differ (sb_primary_bad, sb_backup_bad: the crash
#                   came between the copies): fsck -y must then exit 1
#                   and fsck -f -n 0
#
# State selection (passed to `replay run`): --prefix N|all (default all),
# --reorder N (default 20), --seed S (default 1), --exhaustive N (every
# outcome of the epochs with at most N, default 0), --state ID (repeatable).
# Other options: --keep DIR (failing states: the log, the bases and
# DIR/failed with their ids and reasons, to rebuild one with `replay
# apply`), --timeout SECS per command (default 60), -v (print every state).
#
# Exit 0 when every state passes, 1 when one fails, 2 on a usage or set-up
# error. The last line: "N states: N ok, N not a filesystem, N uninitialised,
# N failed".
#
# Env: BCACHEFS (default ./bcachefs of the tree), REPLAY (build/tests/replay).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
self=$top/tests/crash/crashcheck.sh
: "${BCACHEFS:=$top/bcachefs}"
: "${REPLAY:=$top/build/tests/replay}"

# uninit_only PROBLEMS: sb_not_initialized, with at most superblock copies
# that differ (a crash between the copies of a superblock write)
uninit_only() {
	case " $1 " in *" sb_not_initialized "*) ;; *) return 1;; esac
	for _p in $1; do
		case $_p in sb_not_initialized|sb_primary_bad|sb_backup_bad) ;; *) return 1;; esac
	done
}

# ---- one state (run by `replay run`, options in CC_* variables) ----
one() {
	o=$CC_WORK/out
	rm -f "$o"/*
	t() { timeout "$CC_TMO" "$@"; }
	result=fail why=""
	bad() { why=$1; shift; for f in "$@"; do [ -f "$o/$f" ] && { echo "--- $f"; tail -n 15 "$o/$f"; }; done > "$o/why"; }

	t "$BCACHEFS" fsck -f -n --json $CRASH_IMAGES > "$o/n0.json" 2> "$o/n0.err"
	r0=$?
	# shellcheck disable=SC2046
	probs=$(echo $(sed -n 's/^ *"name": "\(.*\)",$/\1/p' "$o/n0.json"))
	export CRASH_STEP1=$r0
	if [ $r0 = 124 ] || [ $r0 -ge 16 ]; then
		bad "fsck -f -n of the state: exit $r0 (crash, hang or usage error)" n0.err
	elif [ $r0 = 8 ] && [ "$CC_NOFS" = 1 ] && grep -qE 'no valid superblock|not a bcachefs filesystem' "$o/n0.err"; then
		result=nofs
	elif [ $r0 = 4 ] && [ "$CC_UNINIT" = 1 ] && uninit_only "$probs"; then
		t "$BCACHEFS" fsck -y $CRASH_IMAGES > "$o/y.out" 2>&1; r=$?
		t "$BCACHEFS" fsck -f -n $CRASH_IMAGES > "$o/n.out" 2>&1; r2=$?
		if [ $r != 1 ] || [ $r2 != 0 ]; then
			bad "uninitialised state: fsck -y exit $r (want 1), then fsck -f -n exit $r2 (want 0)" y.out n.out
		else
			result=uninit
		fi
	elif [ $r0 -ge 8 ]; then
		bad "fsck -f -n of the state: exit $r0" n0.err
	else
		case $CC_MODE in
		ro)
			[ $r0 = 0 ] && result=ok || bad "fsck -f -n of the state: exit $r0: $probs" n0.err
			;;
		recover)
			t sh -c "$CC_RECOVER" > "$o/recover.out" 2>&1; r=$?
			if [ $r != 0 ]; then
				bad "recovery (read-write open and stop): exit $r" recover.out
			else
				t "$BCACHEFS" fsck -f -n $CRASH_IMAGES > "$o/n.out" 2>&1; r=$?
				[ $r = 0 ] && result=ok || bad "fsck -f -n after the recovery: exit $r" recover.out n.out
			fi
			;;
		repair)
			t "$BCACHEFS" fsck -y $CRASH_IMAGES > "$o/y.out" 2>&1; r=$?
			if [ $r -gt 1 ]; then
				bad "fsck -y of the state: exit $r (want 0 or 1)" y.out
			else
				t "$BCACHEFS" fsck -f -n $CRASH_IMAGES > "$o/n.out" 2>&1; r=$?
				[ $r = 0 ] && result=ok || bad "fsck -f -n after fsck -y: exit $r" y.out n.out
			fi
			;;
		esac
		if [ $result = ok ] && [ -n "$CC_CHECK" ]; then
			t sh -c "$CC_CHECK" > "$o/check.out" 2>&1; r=$?
			[ $r = 0 ] || { result=fail; bad "the workload's check: exit $r" check.out; }
		fi
	fi
	echo "$CRASH_STATE $result $r0 $probs" >> "$CC_RESULTS"
	if [ $result = fail ]; then
		echo "  state $CRASH_STATE ($CRASH_DESC): $why"
		sed 's/^/    /' "$o/why"
		if [ -n "$CC_KEEP" ]; then
			echo "$CRASH_STATE: $why" >> "$CC_KEEP/failed"
		fi
		return 1
	fi
	return 0
}

if [ "${1:-}" = --one ]; then
	one
	exit $?
fi

# ---- the driver ----
usage() {
	sed -n '2,/^set -u/p' "$self" | sed '$d; s/^# \{0,1\}//'
	exit 2
}
mode=recover nofs=0 uninit=0 check="" recover="" keep="" tmo=60 verbose=0
sel="" nreorder=20 seed=1 prefix=all exh=0
while [ $# -gt 0 ]; do
	case $1 in
	--mode) mode=$2; shift;;
	--allow-nofs) nofs=1;;
	--allow-uninit) uninit=1;;
	--check) check=$2; shift;;
	--recover) recover=$2; shift;;
	--prefix) prefix=$2; shift;;
	--reorder) nreorder=$2; shift;;
	--seed) seed=$2; shift;;
	--exhaustive) exh=$2; shift;;
	--state) sel="$sel --state $2"; shift;;
	--keep) keep=$2; shift;;
	--timeout) tmo=$2; shift;;
	-v) verbose=1;;
	-h|--help) usage;;
	-*) echo "crashcheck: unknown option $1" >&2; exit 2;;
	*) break;;
	esac
	shift
done
[ $# = 2 ] || usage
case $mode in ro|recover|repair) ;; *) echo "crashcheck: bad --mode $mode" >&2; exit 2;; esac
log=$1 bases=$2
[ -x "$REPLAY" ] || { echo "crashcheck: $REPLAY missing (make build/tests/replay)" >&2; exit 2; }
[ -n "$recover" ] || recover="\"$REPLAY\" recover \"\$CRASH_DEVS\""

work=$(mktemp -d "${TMPDIR:-/tmp}/crashcheck.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
trap 'exit 2' HUP INT TERM
if [ -n "$keep" ]; then
	mkdir -p "$keep" || exit 2
	: > "$keep/failed"
fi

CC_MODE=$mode CC_NOFS=$nofs CC_UNINIT=$uninit CC_CHECK=$check CC_RECOVER=$recover
CC_KEEP=$keep CC_TMO=$tmo CC_WORK=$work CC_RESULTS=$work/results
export CC_MODE CC_NOFS CC_UNINIT CC_CHECK CC_RECOVER CC_KEEP CC_TMO CC_WORK CC_RESULTS BCACHEFS REPLAY
: > "$CC_RESULTS"
[ -n "$sel" ] || sel="--prefix $prefix --reorder $nreorder --seed $seed --exhaustive $exh"
mkdir -p "$work/out"

t0=$(date +%s)
# shellcheck disable=SC2086
"$REPLAY" run $sel "$log" -b "$bases" -w "$work" -c -- sh "$self" --one > "$work/run.out" 2>&1
rc=$?
if [ $verbose = 1 ]; then
	cat "$work/run.out"
else
	grep -v '^ok ' "$work/run.out"
fi
if [ $rc -ge 2 ]; then
	echo "crashcheck: replay run failed (exit $rc)"
	exit 2
fi
if ! [ -s "$CC_RESULTS" ]; then
	echo "crashcheck: no state was selected (a log without writes, or --prefix 0 --reorder 0)"
	exit 2
fi
if [ -n "$keep" ] && [ -s "$keep/failed" ]; then
	cp "$log" "$keep/log"
	i=0
	for b in $(echo "$bases" | tr ':' ' '); do
		cp --sparse=always "$b" "$keep/base-$i.img"; i=$((i + 1))
	done
	echo "rebuild a state: $REPLAY apply $keep/log ID -b $keep/base-0.img[:...] -o state.img" >> "$keep/failed"
fi

# problems the read-only check reported before the replay (not failures)
awk 'NF > 3 { for (i = 4; i <= NF; i++) n[$i]++ }
     END { for (p in n) printf "  fsck -f -n before the replay reported %s in %d state%s\n", p, n[p], (n[p] > 1 ? "s" : "") }' "$CC_RESULTS"
awk -v secs=$(( $(date +%s) - t0 )) '
	{ n++; c[$2]++ }
	END { printf "%d states: %d ok, %d not a filesystem, %d uninitialised, %d failed (%ds)\n",
		n, c["ok"], c["nofs"], c["uninit"], c["fail"], secs }' "$CC_RESULTS"
[ $rc = 0 ]
