#!/bin/sh
# Run the libFuzzer targets built by `make fuzz-build` (tests/fuzz/README.md).
#
#   FUZZDIR=build-fuzz/tests/fuzz sh tests/fuzz/run.sh smoke [TARGET...]
#       every regression input of tests/fuzz/regress/<target>/ once, then
#       FUZZ_SMOKE_TIME seconds (default 5) of fuzzing from the committed
#       corpus with a fixed seed; new inputs go to a scratch folder.
#   FUZZ_TIME=600 FUZZDIR=... sh tests/fuzz/run.sh campaign [TARGET...]
#       FUZZ_TIME seconds per target (default 60; FUZZ_RUNS=N also stops a
#       target after N executions) under nice -n 19; the
#       corpus grows in build-fuzz/corpus/<target>/ (seeded from the
#       committed one), crashes land in build-fuzz/crashes/<target>/.
#
# Prints one line per target ("ok fuzz/node: 123456 runs, cov 740 ft 2508")
# and ends with "N passed, N failed" like tests/run.sh; exits 1 on failure.
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${FUZZDIR:=$top/build-fuzz/tests/fuzz}"
mode=${1:-smoke}
[ $# -gt 0 ] && shift
targets=${*:-"super node journal extent strhash image ctl"}
dict=$top/tests/fuzz/bcachefs.dict
work=$top/build-fuzz
# libFuzzer's own limits: a hang is an input that takes FUZZ_HANG seconds
# of wall time (default 60: long enough that a loaded machine and nice 19 do
# not make slow inputs look hung; inputs take milliseconds); a leak or more
# than 2 GiB of memory is a failure too
opts="-dict=$dict -timeout=${FUZZ_HANG:-60} -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1"
# a quarantine of 32 MiB (default 256) still holds every block one run
# frees, and takes a third to half off a run of the targets that allocate
# much (fresh pages for every allocation were most of their time)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:quarantine_size_mb=32}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
pass=0 fail=0

case $mode in
smoke|campaign) ;;
*) echo "usage: run.sh smoke|campaign [TARGET...]" >&2; exit 16;;
esac

# stats LOG: "N runs, cov C ft F" from libFuzzer's final lines
stats() {
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$1" | tail -n 1)
	cov=$(grep -E '^#[0-9]+' "$1" | tail -n 1 | sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\).*/cov \1 ft \2/p')
	echo "${runs:-0} runs, ${cov:-no coverage line}"
}

for t in $targets; do
	bin=$FUZZDIR/fuzz_$t
	if [ ! -x "$bin" ]; then
		echo "FAIL fuzz/$t: $bin not built (make fuzz-build)"
		fail=$((fail + 1))
		continue
	fi
	log=$work/logs/$t.$mode.log
	mkdir -p "$work/logs" "$work/crashes/$t"
	ok=1

	# every regression input, once
	reg=$top/tests/fuzz/regress/$t
	if [ "$mode" = smoke ] && [ -d "$reg" ] && [ -n "$(ls "$reg")" ]; then
		if ! "$bin" $opts -runs=1 "$reg"/* > "$log" 2>&1; then
			echo "FAIL fuzz/$t: a regression input fails again (log: $log)"
			grep -E 'ERROR|SUMMARY|Running:' "$log" | tail -n 6 | sed 's/^/    /'
			fail=$((fail + 1))
			continue
		fi
		nreg=$(ls "$reg" | wc -l)
	else
		nreg=0
	fi

	if [ "$mode" = smoke ]; then
		scratch=$(mktemp -d /tmp/bcachefs-fuzz.XXXXXX)
		"$bin" $opts -seed=1 -max_total_time="${FUZZ_SMOKE_TIME:-5}" \
			-artifact_prefix="$work/crashes/$t/" \
			"$scratch" "$top/tests/fuzz/corpus/$t" > "$log" 2>&1 || ok=0
		rm -rf "$scratch"
	else
		corpus=$work/corpus/$t
		mkdir -p "$corpus"
		nice -n 19 "$bin" $opts -max_total_time="${FUZZ_TIME:-60}" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} \
			-artifact_prefix="$work/crashes/$t/" \
			"$corpus" "$top/tests/fuzz/corpus/$t" > "$log" 2>&1 || ok=0
	fi
	if [ $ok = 1 ]; then
		pass=$((pass + 1))
		reg_note=""
		[ "$nreg" -gt 0 ] && reg_note=", $nreg regression inputs passed"
		echo "ok   fuzz/$t: $(stats "$log")$reg_note"
	else
		fail=$((fail + 1))
		echo "FAIL fuzz/$t: $(stats "$log") (log: $log, inputs in $work/crashes/$t/)"
		grep -E 'ERROR|SUMMARY|Test unit written' "$log" | tail -n 6 | sed 's/^/    /'
	fi
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
