#!/bin/sh
# stress-ng's file-system stressors, each with --verify, on a folder of the
# filesystem under test:
#
#   sh tests/rw/stress.sh [-t SECONDS] [-w WORKERS] [-s STRESSOR,...] DIR
#
# Runs every stressor of STRESSORS below (or those of -s) for SECONDS
# (default 5) with WORKERS instances (default 2) in DIR (stress-ng's
# --temp-path). A stressor passes when stress-ng exits 0, reports a
# successful run with bogo operations > 0, and its output names no failure,
# verification error or skipped stressor. Prints "ok NAME (N bogo ops)" or
# "FAIL NAME: ..." per stressor, the failing output, and a last line
# "N passed, N failed"; exit 0 when all passed, 1 otherwise, 77 without
# stress-ng (install: tests/deps.sh).
STRESSORS="hdd dir dentry link symlink rename xattr fallocate seek sync-file chmod utime filename"
secs=5 workers=2 only=""
while getopts t:w:s:h o; do
	case $o in
	t) secs=$OPTARG;;
	w) workers=$OPTARG;;
	s) only=$(echo "$OPTARG" | tr , ' ');;
	h) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
	*) exit 2;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] && [ -d "$1" ] || { echo "usage: stress.sh [-t SECONDS] [-w WORKERS] [-s STRESSOR,...] DIR" >&2; exit 2; }
dir=$1
command -v stress-ng > /dev/null || { echo "stress-ng is not installed (sh tests/deps.sh)"; exit 77; }
[ -n "$only" ] && STRESSORS=$only

# sizes that make each worker loop many times in a few seconds (the
# defaults of hdd, fallocate and sync-file are 1 GiB and more per loop)
extra() {
	case $1 in
	hdd) echo "--hdd-bytes 32m --hdd-write-size 64k";;
	fallocate) echo "--fallocate-bytes 8m";;
	sync-file) echo "--sync-file-bytes 8m";;
	seek) echo "--seek-size 64m";;
	esac
}

pass=0 failed=""
log=$(mktemp "${TMPDIR:-/tmp}/stress.XXXXXX")
for s in $STRESSORS; do
	t=$secs
	# one bogo op of xattr is about 27000 xattr calls (4096 names set,
	# replaced, read and removed): over FUSE that is 1-4 s, so a shorter run
	# counts none
	[ "$s" = xattr ] && [ "$t" -lt 8 ] && t=8
	# shellcheck disable=SC2046 # the extra options are words
	timeout $((t * 4 + 60)) stress-ng --"$s" "$workers" --timeout "${t}s" --verify \
		--temp-path "$dir" --metrics-brief $(extra "$s") > "$log" 2>&1
	rc=$?
	ops=$(awk -v s="$s" '$4 == s && $5 ~ /^[0-9]+$/ { print $5; exit }' "$log")
	# a clean run that finished no bogo op in its time (a slow machine:
	# the sanitizer builds on a busy one took more than 8 s for one xattr
	# op) goes on until it has done one, within 300 s; both runs must be
	# clean, and a stressor that does nothing still fails
	if [ $rc = 0 ] && [ "${ops:-0}" = 0 ] && grep -q "successful run completed" "$log"; then
		mv "$log" "$log.first"
		# shellcheck disable=SC2046 # the extra options are words
		timeout 360 stress-ng --"$s" "$workers" --"$s"-ops 1 --timeout 300s --verify \
			--temp-path "$dir" --metrics-brief $(extra "$s") > "$log" 2>&1
		rc=$?
		ops=$(awk -v s="$s" '$4 == s && $5 ~ /^[0-9]+$/ { print $5; exit }' "$log")
		cat "$log.first" "$log" > "$log.both"; mv "$log.both" "$log"; rm -f "$log.first"
		# (the first run's "successful run completed" must not hide the second's failure)
		[ "$(grep -c "successful run completed" "$log")" = 2 ] ||
			{ [ $rc != 0 ] || rc=1; echo "stress-ng: the run until one bogo op did not complete" >> "$log"; }
	fi
	why=""
	if [ $rc != 0 ]; then
		why="exit $rc"
	elif ! grep -q "successful run completed" "$log"; then
		why="no successful run reported"
	elif grep -qiE "fail|verif.*error|skipp|not supported|not implemented" "$log"; then
		why="$(grep -iE "fail|verif.*error|skipp|not supported|not implemented" "$log" | head -n 1)"
	elif [ -z "$ops" ] || [ "$ops" = 0 ]; then
		why="no bogo operations done"
	fi
	if [ -z "$why" ]; then
		pass=$((pass + 1))
		echo "ok $s ($ops bogo ops)"
	else
		failed="$failed $s"
		echo "FAIL $s: $why"
		sed 's/^/    /' "$log"
	fi
done
rm -f "$log"
left=$(find "$dir" -mindepth 1 -maxdepth 1 -name 'tmp-stress-ng-*' | head -n 1)
[ -z "$left" ] || echo "note: stress-ng left $left behind"
nfail=$(echo $failed | wc -w)
echo "$pass passed, $nfail failed${failed:+:$failed}"
[ "$nfail" = 0 ]
