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
#   FUZZDIR=... sh tests/fuzz/run.sh save
#       keep what the campaigns found: for every target, the inputs of
#       build-fuzz/corpus/<target>/ and of the saved set that add coverage
#       to the committed seeds (libFuzzer -merge=1) go to
#       tests/fuzz/campaign.tar.zst (commit it). A campaign may still
#       be running (its corpus is copied first).
#
# smoke and campaign also start from the saved set (unpacked to
# build-fuzz/campaign-seeds/), so every input a campaign kept runs again.
# Prints one line per target ("ok fuzz/node: 123456 runs, cov 740 ft 2508")
# and ends with "N passed, N failed" like tests/run.sh; exits 1 on failure.
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${FUZZDIR:=$top/build-fuzz/tests/fuzz}"
mode=${1:-smoke}
[ $# -gt 0 ] && shift
all_targets="super node journal extent strhash image ctl mount"
targets=${*:-$all_targets}
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
smoke|campaign|save) ;;
*) echo "usage: run.sh smoke|campaign|save [TARGET...]" >&2; exit 16;;
esac

# the saved set of earlier campaigns, unpacked once per change of the file
saved=$top/tests/fuzz/campaign.tar.zst
seeds=$work/campaign-seeds
if [ -f "$saved" ] && { [ ! -f "$seeds/.stamp" ] || [ "$saved" -nt "$seeds/.stamp" ]; }; then
	rm -rf "$seeds"
	mkdir -p "$seeds"
	zstd -qdc "$saved" | tar -xf - -C "$seeds" ||
		{ echo "FAIL fuzz: cannot unpack $saved (zstd, tar)"; exit 1; }
	touch "$seeds/.stamp"
fi
# the saved inputs of target $1, if any
saved_dir() {
	[ -d "$seeds/$1" ] && echo "$seeds/$1"
}

if [ "$mode" = save ]; then
	out=$(mktemp -d /tmp/bcachefs-fuzz-save.XXXXXX)
	for t in $all_targets; do
		bin=$FUZZDIR/fuzz_$t
		[ -x "$bin" ] || { echo "FAIL fuzz/$t: $bin not built (make fuzz-build)"; rm -rf "$out"; exit 1; }
		# the committed seeds count as had: only what adds to them is kept
		mkdir -p "$out/$t"
		for f in "$top/tests/fuzz/corpus/$t"/*; do cp "$f" "$out/$t/committed-${f##*/}"; done
		# a copy of the grown corpus: a campaign still running replaces
		# the inputs it shortens, and a merge stops at a missing file
		mkdir -p "$out/.grown-$t"
		if [ -d "$work/corpus/$t" ]; then
			for f in "$work/corpus/$t"/*; do cp "$f" "$out/.grown-$t/" 2>/dev/null; done
		fi
		set --
		for d in $(saved_dir $t) "$out/.grown-$t"; do [ -d "$d" ] && set -- "$@" "$d"; done
		mkdir -p "$work/logs"
		if [ $# -gt 0 ] && ! "$bin" -merge=1 $opts "$out/$t" "$@" > "$work/logs/$t.save.log" 2>&1; then
			echo "FAIL fuzz/$t: merge (log: $work/logs/$t.save.log)"
			rm -rf "$out"
			exit 1
		fi
		rm -rf "$out/$t"/committed-* "$out/.grown-$t"
		echo "fuzz/$t: $(ls "$out/$t" | wc -l) inputs kept"
	done
	(cd "$out" && tar --sort=name --owner=0 --group=0 --mtime=@0 -cf - *) | zstd -q -19 -T0 -f -o "$saved.new" &&
		mv "$saved.new" "$saved"
	rm -rf "$out"
	echo "saved: $saved ($(wc -c < "$saved") bytes)"
	exit 0
fi

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
			"$scratch" "$top/tests/fuzz/corpus/$t" $(saved_dir $t) > "$log" 2>&1 || ok=0
		rm -rf "$scratch"
	else
		corpus=$work/corpus/$t
		mkdir -p "$corpus"
		nice -n 19 "$bin" $opts -max_total_time="${FUZZ_TIME:-60}" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} \
			-artifact_prefix="$work/crashes/$t/" \
			"$corpus" "$top/tests/fuzz/corpus/$t" $(saved_dir $t) > "$log" 2>&1 || ok=0
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
