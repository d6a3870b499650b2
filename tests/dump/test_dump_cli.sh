#!/bin/sh
# dump's command line: usage errors (16), an existing output is refused
# before anything is read and left untouched (-f overwrites it), the names
# of the images of a multi-device filesystem.
. "$TESTDIR/../lib.sh"
img=$(golden_images a_default_1G)
B=$BCACHEFS

"$B" dump --help | grep -q "^Usage: bcachefs dump" || fail "--help"
"$B" dump "$img" > /dev/null 2>&1; rc=$?
[ $rc = 16 ] || fail "no -o: rc=$rc, not 16"
"$B" dump -o "$WORK/x" > /dev/null 2>&1; rc=$?
[ $rc = 16 ] || fail "no device: rc=$rc, not 16"
"$B" dump --bogus -o "$WORK/x" "$img" > /dev/null 2>&1; rc=$?
[ $rc = 16 ] || fail "unknown option: rc=$rc, not 16"
[ ! -e "$WORK/x" ] || fail "a usage error created the output"

echo keep > "$WORK/out.qcow2"
"$B" dump -o "$WORK/out.qcow2" "$img" > "$WORK/exists.log" 2>&1; rc=$?
[ $rc = 1 ] || fail "existing output: rc=$rc, not 1"
grep -q "File exists" "$WORK/exists.log" || { cat "$WORK/exists.log"; fail "existing output: no 'File exists'"; }
[ "$(cat "$WORK/out.qcow2")" = keep ] || fail "existing output was changed"
"$B" dump -f -o "$WORK/out.qcow2" "$img" || fail "-f"
head -c 4 "$WORK/out.qcow2" | od -An -c | grep -q 'Q   F   I' || fail "-f: not a qcow2 image"

# two devices: OUTPUT.<member index>; one of them already there: nothing written
"$B" dump -o "$WORK/e.qcow2" $(golden_images e1_2dev) || fail "dump e1"
[ -f "$WORK/e.qcow2.0" ] && [ -f "$WORK/e.qcow2.1" ] && [ ! -e "$WORK/e.qcow2" ] ||
	fail "e1: not e.qcow2.0 and e.qcow2.1: $(ls "$WORK")"
rm "$WORK/e.qcow2.0"
"$B" dump -o "$WORK/e.qcow2" $(golden_images e1_2dev) > /dev/null 2>&1 && fail "e1: existing e.qcow2.1 not refused"
[ ! -e "$WORK/e.qcow2.0" ] || fail "e1: a refused dump left e.qcow2.0 behind"
"$B" dump -v -f -o "$WORK/e.qcow2" $(golden_images e1_2dev) > "$WORK/v.log" || fail "dump -v -f e1"
grep -q "btree node copies" "$WORK/v.log" || fail "-v says nothing"
exit 0
