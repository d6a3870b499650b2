#!/bin/sh
# Benchmarks: `make bench`, or from the repo root:
#
#   sh bench/run.sh [SECTION...]        run all sections, or only those named
#   sh bench/run.sh --list              list the sections
#   sh bench/run.sh --compile OUT SRC...  build a benchmark program with the
#                                       tree's CFLAGS/LDLIBS, linked with
#                                       $BUILD/libbcachefs.a (for parts)
#
# Sections, in this order:
#   codecs      bench/codecs.c: checksums, ChaCha20/Poly1305, lz4/gzip/zstd
#   NN-name     every bench/[0-9][0-9]-*.sh part, sorted (section "name")
#
# A part is a shell script run with `sh` from the repo root. It gets:
#   BENCH_TOP     the repo root           BENCH_BUILD  the build folder
#   BCACHEFS      the bcachefs binary     BENCH_WORK   a scratch folder (removed)
#   BENCH_MB      MiB per measurement (default 64)
#   BENCH_RUN     "sh $BENCH_TOP/bench/run.sh" (for --compile)
# and prints its own table. Exit 0 = done, 77 = skipped (last line of its
# output says why), anything else = failed.
#
# Environment: BUILD (default build), BENCH_MB, CC.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
BUILD=${BUILD:-build}
BENCH_MB=${BENCH_MB:-64}
MAKE=${MAKE:-make}

# The compiler flags and libraries of the Makefile, so that benchmark
# programs are built exactly like the tree (plus its -O2).
make_var() {
	printf 'print-bench-var:\n\t@echo $(%s)\n' "$1" |
		$MAKE --no-print-directory -s -f Makefile -f - BUILD="$BUILD" print-bench-var
}

compile() {
	out=$1; shift
	cc=$(make_var CC)
	cflags=$(make_var CFLAGS)
	ldlibs=$(make_var LDLIBS)
	mkdir -p "$(dirname "$out")"
	# shellcheck disable=SC2086 # word splitting of the flag lists is wanted
	$cc $cflags -o "$out" "$@" "$BUILD/libbcachefs.a" $ldlibs
}

sections() {
	echo codecs
	for p in bench/[0-9][0-9]-*.sh; do
		[ -f "$p" ] || continue
		n=${p#bench/[0-9][0-9]-}
		echo "${n%.sh}"
	done
}

part_file() {
	for p in bench/[0-9][0-9]-*.sh; do
		[ -f "$p" ] || continue
		n=${p#bench/[0-9][0-9]-}
		[ "${n%.sh}" = "$1" ] && { echo "$p"; return 0; }
	done
	return 1
}

case "${1:-}" in
--compile)
	shift
	[ $# -ge 2 ] || { echo "usage: run.sh --compile OUT SRC..." >&2; exit 2; }
	compile "$@"
	exit $?
	;;
--list)
	sections
	exit 0
	;;
-h|--help)
	sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
	;;
esac

want=${*:-$(sections)}

# The library the programs link with (`make bench` has built it already).
if ! $MAKE --no-print-directory -s BUILD="$BUILD" "$BUILD/libbcachefs.a"; then
	echo "bench: cannot build $BUILD/libbcachefs.a" >&2
	exit 1
fi

BENCH_TOP=$top
BENCH_BUILD=$top/$BUILD
BENCH_RUN="sh $top/bench/run.sh"
BCACHEFS=${BCACHEFS:-$top/bcachefs}
export BENCH_TOP BENCH_BUILD BENCH_RUN BENCH_MB BCACHEFS BUILD

echo "bcachefs benchmarks: $(uname -m), $(nproc 2>/dev/null || echo ?) CPUs," \
	"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)"

done_list="" skipped="" failed=""
for s in $want; do
	echo
	echo "== $s =="
	start=$(date +%s)
	if [ "$s" = codecs ]; then
		if compile "$BUILD/bench/codecs" bench/codecs.c; then
			"$BUILD/bench/codecs" -m "$BENCH_MB"
			rc=$?
		else
			rc=1
		fi
	elif p=$(part_file "$s"); then
		BENCH_WORK=$(mktemp -d /tmp/bcachefs-bench.XXXXXX)
		export BENCH_WORK
		sh "$p"
		rc=$?
		rm -rf "$BENCH_WORK"
	else
		echo "no such section (see: sh bench/run.sh --list)"
		rc=2
	fi
	case $rc in
	0)  done_list="$done_list $s" ;;
	77) skipped="$skipped $s" ;;
	*)  failed="$failed $s"; echo "section $s failed (exit $rc)" ;;
	esac
	echo "($s: $(( $(date +%s) - start ))s)"
done

echo
echo "done:${done_list:- none}${skipped:+; skipped:$skipped}${failed:+; FAILED:$failed}"
[ -z "$failed" ]
