#!/bin/sh
# Done-means 2 of the read-write mount: the random-operation tester
# (build/tests/fsx) on a fresh filesystem mounted read-write, against a
# shadow tree on tmpfs: FSX_OPS (100000) operations for each of FSX_SEEDS
# (1 2 3), each seed in its own folder; then unmount, `fsck -f -n` exits 0 and
# `extract IMG / OUT` gives back exactly the shadow trees (fsx --compare:
# names, types, modes, sizes, link counts, hard links, contents, user
# xattrs). FSX_LONG=1: one million operations (seed 1) instead.
# TEST_QUICK=1 (the sanitizer runs): 5000 operations, seed 1.
# $FSX_EXCLUDE: operations to leave out (e.g. mmapread); $RW_MOUNT_OPTS:
# more mount options. Exit 77 while `bcachefs mount` refuses read-write.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/rwlib.sh"
fuse_mount_setup
rw_setup
test_tool fsx
ops=${FSX_OPS:-100000} seeds=${FSX_SEEDS:-1 2 3}
[ -n "${TEST_QUICK:-}" ] && { ops=${FSX_OPS:-5000}; seeds=${FSX_SEEDS:-1}; }
[ -n "${FSX_LONG:-}" ] && { ops=1000000; seeds=${FSX_SEEDS:-1}; }
img=$WORK/fsx.img
rw_image "$img" 2G
rw_tmpfs shadow 1g
shadow=$tmpfs
rw_mount "$img"
for seed in $seeds; do
	mkdir "$mnt/s$seed" "$shadow/s$seed" || fail "mkdir s$seed"
	"$TOOL" -S "$seed" -N "$ops" ${FSX_EXCLUDE:+-x "$FSX_EXCLUDE"} "$mnt/s$seed" "$shadow/s$seed" \
		> "$WORK/fsx-$seed.out" 2>&1
	rc=$?
	tail -n 1 "$WORK/fsx-$seed.out"
	[ $rc = 0 ] || { unmount_fg rw; cat "$WORK/fsx-$seed.out"; fail "fsx seed $seed on the mount"; }
done
unmount_fg rw
rw_fsck "$img"
"$BCACHEFS" extract "$img" / "$WORK/out" > "$WORK/extract.out" 2>&1 ||
	{ cat "$WORK/extract.out"; fail "extract after the workload"; }
for seed in $seeds; do
	"$TOOL" --compare "$WORK/out/s$seed" "$shadow/s$seed" ||
		fail "seed $seed: the extracted tree differs from the shadow tree"
done
