#!/bin/sh
# list on broken input: a node with a bad checksum is reported (exit 1) and
# its keys are still listed, as in 2018 (z_errors 56); missing members,
# a zeroed device and bad options fail cleanly.
set -e
. "$TESTDIR/../lib.sh"
: "${BCACHEFS:?}" "${GOLDEN:?}" "${WORK:?}"
command -v zstd >/dev/null || { echo "zstd not installed"; exit 77; }
cd "$WORK"

unzst "$GOLDEN/z_errors/corrupt-inode-btree-node.img.zst" c.img
rc=0
"$BCACHEFS" list -b inodes c.img > out 2> err || rc=$?
cat err
[ $rc = 1 ]
grep -q 'checksum' err
grep -q 'sector 41984' err
grep '^u64s ' out | sort > got
grep '^u64s ' "$GOLDEN/z_errors/out/56-list-inodes-corrupt-inode-node.txt" | sort > want
cmp want got
# the other btrees of that image are fine
"$BCACHEFS" list -b dirents c.img > /dev/null

# one member of two missing: no listing, exit 1, no crash
unzst "$GOLDEN/e1_2dev/dev0.img.zst" d0.img
rc=0
"$BCACHEFS" list -b inodes d0.img > out 2> err || rc=$?
[ $rc = 1 ]
[ -s err ]

# not a filesystem
truncate -s 16M z.img
rc=0
"$BCACHEFS" list z.img > out 2> err || rc=$?
[ $rc = 1 ]
[ ! -s out ]

# bad options are usage errors
unzst "$GOLDEN/a_default_20M/dev0.img.zst" a.img
for args in "-b nosuch" "-m nosuch" "-s 1:2:3" "-s x" "-i y"; do
	rc=0
	# shellcheck disable=SC2086
	"$BCACHEFS" list $args a.img > out 2> err || rc=$?
	[ $rc = 16 ] || { echo "list $args: exit $rc"; exit 1; }
done

# ranges: -i N lists N and (N+1):0 (inclusive end, as in 2018)
"$BCACHEFS" list -b inodes -i 4096 a.img | grep -c '^u64s ' | grep -qx 2
"$BCACHEFS" list -b inodes -s 4097 a.img | grep -c '^u64s ' | grep -qx 1
"$BCACHEFS" list -b inodes -e 4096 a.img | grep -c '^u64s ' | grep -qx 1
"$BCACHEFS" list -b inodes -s 4098 a.img | grep -c '^u64s ' | grep -qx 0
# nodes mode: the node block, then its keys with a tab in front
"$BCACHEFS" list -b inodes -m nodes a.img > out
grep -q '^l 0 0:0 - 18446744073709551615:18446744073709551615:$' out
[ "$(grep -c "$(printf '^\tu64s ')" out)" = 2 ]
# json
"$BCACHEFS" list -b inodes --json a.img > out
grep -q '"btree"' out

# metadata replicas 2: a bad copy on dev 0 is skipped for the good one on
# dev 1 (exit 0, a note); with both copies bad the first is used (exit 1)
unzst "$GOLDEN/b21_meta_replicas2/dev0.img.zst" m0.img
unzst "$GOLDEN/b21_meta_replicas2/dev1.img.zst" m1.img
"$BCACHEFS" list -b inodes m0.img m1.img > want
ptrs=$("$BCACHEFS" list -b inodes -m formats m0.img m1.img | sed -n 's/^ *ptrs: //p')
s0=$(echo "$ptrs" | sed -n 's/.*ptr: 0:\([0-9]*\) .*/\1/p')
s1=$(echo "$ptrs" | sed -n 's/.*ptr: 1:\([0-9]*\) .*/\1/p')
[ -n "$s0" ] && [ -n "$s1" ]
printf '\377' | dd of=m0.img bs=1 seek=$((s0 * 512 + 4096 + 100)) conv=notrunc 2>/dev/null
"$BCACHEFS" list -b inodes m0.img m1.img > got 2> err
cmp want got
grep -q "unusable, read from dev 1" err
printf '\377' | dd of=m1.img bs=1 seek=$((s1 * 512 + 4096 + 100)) conv=notrunc 2>/dev/null
rc=0
"$BCACHEFS" list -b inodes m0.img m1.img > got 2> err || rc=$?
[ $rc = 1 ]
grep -q 'invalid checksum' err

# The inodes root pointer (kept in the journal) has a damaged position that
# ends before POS_MAX (an image from the read-path fuzzer): list and fsck -f -n
# report the node and finish, instead of loading the same leaf forever.
zstd -qd --sparse "$TESTDIR/root-ptr-pos.img.zst" -o rp.img
rc=0
timeout 60 "$BCACHEFS" list -b inodes rp.img > /dev/null 2> err || rc=$?
[ $rc = 1 ] || { echo "list on a damaged root pointer: exit $rc"; exit 1; }
grep -q 'incorrect max key' err
rc=0
timeout 60 "$BCACHEFS" fsck -f -n rp.img > out 2>&1 || rc=$?
[ $rc = 4 ] || { echo "fsck -f -n on a damaged root pointer: exit $rc"; exit 1; }

# The same for the extents btree, whose iterator searches after the
# position: a root pointer damaged to a key below POS_MAX whose node cannot
# be read (device 60) ended at that key only with the fix (found by
# fuzz_image; tests/fuzz/regress/image/extents-root-max-key-hang).
zstd -qd --sparse "$TESTDIR/extents-root-pos.img.zst" -o ep.img
rc=0
timeout 60 "$BCACHEFS" list -b extents ep.img > /dev/null 2> err || rc=$?
[ $rc = 1 ] || { echo "list on a damaged extents root pointer: exit $rc"; exit 1; }
grep -q 'device missing' err
rc=0
timeout 60 "$BCACHEFS" fsck -f -n ep.img > out 2>&1 || rc=$?
[ $rc = 4 ] || { echo "fsck -f -n on a damaged extents root pointer: exit $rc"; exit 1; }
