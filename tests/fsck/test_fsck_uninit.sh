#!/bin/sh
# fsck on a filesystem that was never initialised (the golden devN.fmt.img:
# what the 2018 format wrote, superblocks only): -n reports
# sb_not_initialized and exits 4 without writing; -y and -p initialise it
# (exit 1: fixed), after which fsck -f -n is clean and the root directory and
# lost+found are there.
set -u
. "$(dirname "$0")/../lib.sh"
: "${BCACHEFS:?}" "${GOLDEN:?}" "${WORK:=$(mktemp -d)}"
command -v zstd > /dev/null || { echo "zstd not installed"; exit 77; }
fail=0
# stamps and, for the small images, contents (hashing 1 GiB images would
# dominate the test's time)
sum() { stat -c '%y %z %s' "$@"; find "$@" -size -100M -exec sha256sum {} +; }

for cm in a_default_20M:-y a_default_20M:-p e1_2dev:-y c1_encrypted:-p; do
	c=${cm%:*} mode=${cm#*:}
	[ -d "$GOLDEN/$c" ] || continue
	{
		d=$WORK/uninit/$c$mode
		mkdir -p "$d"
		imgs=""
		for f in "$GOLDEN/$c"/dev*.fmt.img.zst; do
			o=$d/$(basename "${f%.fmt.img.zst}").img
			unzst "$f" "$o"
			imgs="$imgs $o"
		done
		pass=$(golden_pass_opts "$c")

		before=$(sum $imgs)
		"$BCACHEFS" fsck -f -n $pass $imgs > "$d/n.out" 2>&1
		rc=$?
		[ $rc = 4 ] || { echo "FAIL $c: fsck -f -n exit $rc, want 4"; cat "$d/n.out"; fail=1; }
		grep -q 'never initialized' "$d/n.out" ||
			{ echo "FAIL $c: fsck -f -n does not report the problem"; cat "$d/n.out"; fail=1; }
		[ "$(sum $imgs)" = "$before" ] || { echo "FAIL $c: fsck -f -n wrote"; fail=1; }

		"$BCACHEFS" fsck $mode $pass $imgs > "$d/y.out" 2>&1
		rc=$?
		[ $rc = 1 ] || { echo "FAIL $c: fsck $mode exit $rc, want 1"; cat "$d/y.out"; fail=1; }
		"$BCACHEFS" fsck -f -n $pass $imgs > "$d/n2.out" 2>&1
		rc=$?
		[ $rc = 0 ] || { echo "FAIL $c: fsck -f -n after $mode exit $rc"; cat "$d/n2.out"; fail=1; }
		"$BCACHEFS" list -b inodes $pass $imgs > "$d/inodes" 2>&1
		grep -q ' 4096:0 ' "$d/inodes" && grep -q ' 4097:0 ' "$d/inodes" ||
			{ echo "FAIL $c: inodes after $mode"; cat "$d/inodes"; fail=1; }
		for i in $imgs; do
			"$BCACHEFS" show-super "$i" | grep -q '^Clean:[[:space:]]*1$' ||
				{ echo "FAIL $c: $i not clean after $mode"; fail=1; }
		done
		# a second -y has nothing to do
		"$BCACHEFS" fsck -y $pass $imgs > "$d/y2.out" 2>&1
		rc=$?
		[ $rc = 0 ] || { echo "FAIL $c: second fsck -y exit $rc"; cat "$d/y2.out"; fail=1; }
		echo "ok   $c fsck $mode"
		rm -rf "$d"
	}
done
exit $fail
