#!/bin/sh
# extract of single files and subtrees, into new names and existing
# directories; missing paths and usage errors.
. "$TESTDIR/../lib.sh"
img=$(golden_images g4_compressed_encrypted_data lz4)
want_small=1f005b10f8b1d7ef4d4b744987af6785e505eb5b7afa648e181b4480535c541f

"$BCACHEFS" extract "$img" /d/small "$WORK/small.copy" || fail "single file"
[ "$(sha256sum < "$WORK/small.copy" | cut -d' ' -f1)" = $want_small ] || fail "single file content"
mkdir "$WORK/into"
"$BCACHEFS" extract "$img" d/small "$WORK/into" || fail "file into a directory"
[ "$(sha256sum < "$WORK/into/small" | cut -d' ' -f1)" = $want_small ] || fail "file into dir content"
"$BCACHEFS" extract -v "$img" //d/ "$WORK/sub" > "$WORK/v.log" || fail "subtree"
grep -q small "$WORK/v.log" || fail "-v lists no paths"
[ -f "$WORK/sub/small" ] && [ -f "$WORK/sub/mixed" ] || fail "subtree content"
[ "$(stat -c %s "$WORK/sub/mixed")" = 2457600 ] || fail "mixed size"

"$BCACHEFS" extract "$img" /nonexistent "$WORK/x" 2> "$WORK/err"
rc=$?
crashed $rc && fail "missing path: crashed"
[ $rc != 0 ] || fail "missing path: exit 0"
grep -q nonexistent "$WORK/err" || fail "missing path not named"
"$BCACHEFS" extract "$img" /d/small/x "$WORK/x" 2> /dev/null && fail "file used as directory"
"$BCACHEFS" extract "$img" 2> /dev/null
[ $? = 16 ] || fail "usage error exit code"
"$BCACHEFS" extract --help | grep -q ignore-errors || fail "--help"
exit 0
