#!/bin/sh
# bench/30-fsck-100k.sh with a tree of 1,000,000 files (BENCH_FILES):
# about 10 minutes and 4 GiB in BENCH_WORK (the tree, then a 16 GiB sparse
# image of each kind), so it runs only when asked: BENCH_1M=1.
set -u
top=${BENCH_TOP:-$(pwd)}
if [ "${BENCH_1M:-}" != 1 ]; then
	echo "skipped: 1M files take about 10 minutes (run with BENCH_1M=1)"
	exit 77
fi
BENCH_FILES=${BENCH_FILES_1M:-1000000} exec sh "$top/bench/30-fsck-100k.sh"
