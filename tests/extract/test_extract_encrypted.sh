#!/bin/sh
# extract from the encrypted golden images: c1 with the passphrase, c2 with
# the key stored in clear; a wrong passphrase is refused.
. "$TESTDIR/../lib.sh"
for c in c1_encrypted c2_encrypted_nopass; do
	img=$(golden_images $c)
	"$BCACHEFS" extract $(golden_pass_opts $c) $img / "$WORK/out-$c" > "$WORK/$c.log" 2>&1
	rc=$?
	cat "$WORK/$c.log"
	crashed $rc && fail "$c: crashed"
	[ $rc = 0 ] || fail "$c: extract failed (rc=$rc)"
	[ -d "$WORK/out-$c/lost+found" ] || fail "$c: lost+found missing"
	[ "$(ls -A "$WORK/out-$c")" = "lost+found" ] || fail "$c: unexpected files: $(ls -A "$WORK/out-$c")"
done
printf 'wrong-pass\n' > "$WORK/badpass"
"$BCACHEFS" extract --passphrase-file "$WORK/badpass" $(golden_images c1_encrypted) / "$WORK/bad" \
	> "$WORK/bad.log" 2>&1 < /dev/null
rc=$?
cat "$WORK/bad.log"
crashed $rc && fail "wrong passphrase: crashed"
[ $rc != 0 ] || fail "wrong passphrase accepted"
exit 0
