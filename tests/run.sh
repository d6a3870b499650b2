#!/bin/sh
# Test runner: every cmocka unit binary, then every test script.
#   BCACHEFS=path/to/bcachefs UNITDIR=build/tests/unit sh tests/run.sh [GLOB]
# A test script is tests/*/NNN-name.sh or tests/*/test_*.sh; it gets $BCACHEFS,
# $TESTDIR (its own folder), $WORK (a scratch folder, kept on failure) and
# $GOLDEN (tests/golden). Exit 0 = pass, 77 = skipped, anything else = fail.
# Ends with the line "N passed, N failed, N skipped".
top=$(cd "$(dirname "$0")/.." && pwd)
: "${BCACHEFS:=$top/bcachefs}"
: "${UNITDIR:=$top/build/tests/unit}"
GOLDEN=$top/tests/golden
export BCACHEFS GOLDEN
glob=${1:-*}
pass=0 fail=0 skip=0 failed=""
artefacts=${TEST_ARTEFACTS:-/tmp/bcachefs-test-failures}
mkdir -p "$artefacts"

for t in "$UNITDIR"/test_*; do
	[ -x "$t" ] || continue
	name=unit/$(basename "$t")
	case "$name" in $glob|*/$glob) ;; *) continue;; esac
	if "$t" > "$artefacts/$(basename "$t").log" 2>&1; then
		pass=$((pass + 1)); echo "ok   $name"
	else
		fail=$((fail + 1)); failed="$failed $name"
		echo "FAIL $name"; tail -n 20 "$artefacts/$(basename "$t").log" | sed 's/^/    /'
	fi
done

for t in "$top"/tests/*/[0-9]*.sh "$top"/tests/*/test_*.sh; do
	[ -f "$t" ] || continue
	rel=${t#"$top"/tests/}
	name=${rel%.sh}
	case "$name" in $glob|*/$glob) ;; *) continue;; esac
	WORK=$(mktemp -d /tmp/bcachefs-test.XXXXXX)
	TESTDIR=$(dirname "$t")
	export WORK TESTDIR
	t0=$(date +%s)
	( cd "$WORK" && sh "$t" ) > "$WORK/log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - t0 ))
	if [ $rc = 0 ]; then
		pass=$((pass + 1)); echo "ok   $name (${secs}s)"; rm -rf "$WORK"
	elif [ $rc = 77 ]; then
		skip=$((skip + 1)); echo "skip $name: $(tail -n 1 "$WORK/log")"; rm -rf "$WORK"
	else
		fail=$((fail + 1)); failed="$failed $name"
		dest="$artefacts/$(echo "$name" | tr / _)"
		rm -rf "$dest"; mv "$WORK" "$dest"
		echo "FAIL $name (exit $rc; artefacts in $dest)"
		tail -n 25 "$dest/log" | sed 's/^/    /'
	fi
done

[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
