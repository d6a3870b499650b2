#!/bin/sh
# set-passphrase and remove-passphrase (doc/tools.md §7) on copies of
# the encrypted golden images: the old passphrase comes from standard input
# (or the keyring), the new one is what opens the filesystem afterwards, the
# old one no longer does, every superblock copy is rewritten (the backup is
# checked by damaging the primary), remove-passphrase leaves a filesystem
# that opens without passphrase, and a filesystem whose key was stored in
# clear gets a passphrase. Each scrypt derivation costs about a second:
# this test does eight.
. "$TESTDIR/../lib.sh"

if [ -z "$KEY_TEST_SESSION" ]; then
	if command -v keyctl > /dev/null && keyctl session - true > /dev/null 2>&1; then
		KEY_TEST_SESSION=1 exec keyctl session - sh "$0" "$@"
	fi
	KEY_TEST_SESSION=none
fi

B=$BCACHEFS
c1=$(golden_images c1_encrypted)
c2=$(golden_images c2_encrypted_nopass)
x=$WORK/x.img y=$WORK/y.img
cp --sparse=always "$c1" "$x"
cp --sparse=always "$c2" "$y"
printf 'golden-pass\n' > "$WORK/old"
printf 'new-pass\n' > "$WORK/new"
printf 'c2-pass\n' > "$WORK/c2pass"

run() {
	_want=$1; shift
	"$@" > "$WORK/out" 2> "$WORK/err" < "${STDIN:-/dev/null}"
	rc=$?
	crashed $rc && { cat "$WORK/err"; fail "crashed ($rc): $*"; }
	grep -q 'runtime error\|AddressSanitizer\|LeakSanitizer' "$WORK/err" &&
		{ cat "$WORK/err"; fail "sanitizer: $*"; }
	[ "$rc" = "$_want" ] || { cat "$WORK/out" "$WORK/err"; fail "exit $rc, wanted $_want: $*"; }
	return 0
}
err_has() {
	grep -q "$1" "$WORK/err" || { cat "$WORK/err"; fail "stderr lacks '$1'"; }
}
stdin() {
	printf "$1" > "$WORK/stdin"
	STDIN=$WORK/stdin
}
# sb_json IMG KEY: a value of show-super --json -f crypt
sb_json() {
	"$B" show-super --json -f crypt "$1" 2>/dev/null |
		sed -n "s/.*\"$2\": \"*\([^\",]*\)\"*,*\$/\1/p" | head -n 1
}
damage_primary() {
	printf 'XXXXXXXX' | dd of="$1" bs=1 seek=$((8 * 512 + 24)) conv=notrunc 2>/dev/null
}
opens_with() {	# IMG PASSFILE|- EXPECTED-RC
	if [ "$2" = - ]; then
		run "$3" "$B" list -b inodes "$1"
	else
		run "$3" "$B" list -b inodes --passphrase-file "$2" "$1"
	fi
	[ "$3" != 0 ] || grep -q '^u64s .* 4096:0 ' "$WORK/out" || fail "list $1: no root inode"
}

# ---- set-passphrase: old passphrase then new one on stdin ----
seq0=$(sb_json "$x" seq)
stdin 'golden-pass\nnew-pass\n'
run 0 "$B" set-passphrase "$x"
[ -s "$WORK/out" ] && fail "set-passphrase printed on stdout"
[ "$(sb_json "$x" seq)" = $((seq0 + 1)) ] || fail "seq not bumped"
[ "$(sb_json "$x" key_encrypted)" = true ] || fail "key not encrypted after set-passphrase"
[ "$(sb_json "$x" scrypt_n)" = 14 ] || fail "scrypt parameters changed"
opens_with "$x" - 1

# the backup copy (sector 136) was rewritten too: from seq (offset 112) to
# the end it is the primary, and the new passphrase opens it
dd if="$x" bs=1 skip=$((8 * 512 + 112)) count=1056 of="$WORK/sb0" 2>/dev/null
dd if="$x" bs=1 skip=$((136 * 512 + 112)) count=1056 of="$WORK/sb1" 2>/dev/null
cmp -s "$WORK/sb0" "$WORK/sb1" || fail "backup superblock differs from the primary"
damage_primary "$x"
"$B" show-super "$x" 2>&1 >/dev/null | grep -q 'using the backup' || fail "primary not damaged"
[ "$(sb_json "$x" seq)" = $((seq0 + 1)) ] || fail "backup: seq not bumped"
opens_with "$x" "$WORK/new" 0

# the old passphrase no longer works: refused, nothing written
stdin 'golden-pass\nother\n'
run 1 "$B" set-passphrase "$x"
err_has 'wrong passphrase'
[ "$(sb_json "$x" seq)" = $((seq0 + 1)) ] || fail "written after a wrong passphrase"

# ---- remove-passphrase (reads the backup, rewrites every copy) ----
stdin 'new-pass\n'
run 0 "$B" remove-passphrase "$x"
[ -s "$WORK/out" ] && fail "remove-passphrase printed on stdout"
"$B" show-super "$x" 2>&1 >/dev/null | grep -q 'using the backup' && fail "primary not rewritten"
[ "$(sb_json "$x" key_encrypted)" = false ] || fail "key still encrypted"
[ "$(sb_json "$x" seq)" = $((seq0 + 2)) ] || fail "seq not bumped by remove-passphrase"
opens_with "$x" - 0
run 1 "$B" unlock -c "$x"
err_has 'stored without a passphrase'
damage_primary "$x"
[ "$(sb_json "$x" key_encrypted)" = false ] || fail "backup: key still encrypted"
opens_with "$x" - 0
run 0 "$B" remove-passphrase "$x"
err_has 'nothing changed'

# ---- set-passphrase where the key was stored in clear (c2) ----
stdin '\n'
run 1 "$B" set-passphrase "$y"
err_has 'empty passphrase refused'
stdin 'c2-pass\n'
run 0 "$B" set-passphrase "$y"
[ "$(sb_json "$y" key_encrypted)" = true ] || fail "c2: key not encrypted"
[ "$(sb_json "$y" scrypt_n)" = 14 ] && [ "$(sb_json "$y" scrypt_r)" = 3 ] &&
	[ "$(sb_json "$y" scrypt_p)" = 4 ] || fail "c2: scrypt parameters not set"
opens_with "$y" - 1
grep -q 'key is not in the keyring' "$WORK/err" || fail "c2: $(cat "$WORK/err")"

# ---- the key from the (default, user) keyring replaces the old passphrase ----
if [ "$KEY_TEST_SESSION" != 1 ]; then
	echo "SKIP: no private session keyring (keyctl missing or not allowed): the keyring parts are not run"
	exit 0
fi
u2=$("$B" show-super --json "$y" | sed -n 's/.*"external_uuid": "\(.*\)".*/\1/p')
# c2's uuid: a key for it in the user keyring changes nothing for other
# tests (the golden c2 stores its key in clear); removed on exit anyway
cleanup() {
	for t in user logon; do
		id=$(keyctl search @u $t "bcachefs:$u2" 2>/dev/null) && keyctl unlink "$id" @u > /dev/null
	done
}
trap cleanup EXIT
# as in a login session, the user keyring is reachable from the session one
# (keys found only by searching @u are not "possessed", hence not readable)
keyctl link @u @s || fail "cannot link @u into the session keyring"
run 0 "$B" unlock -f "$WORK/c2pass" "$y"
keyctl search @u user "bcachefs:$u2" > /dev/null || fail "unlock: no user key in @u"
keyctl search @u logon "bcachefs:$u2" > /dev/null || fail "unlock: no logon key in @u"
opens_with "$y" - 0
stdin 'c2-new\n'			# only the new passphrase is read
run 0 "$B" set-passphrase "$y"
keyctl search @u user "bcachefs:$u2" > /dev/null 2>&1 && fail "old user key left in the keyring"
keyctl search @u logon "bcachefs:$u2" > /dev/null 2>&1 && fail "old logon key left in the keyring"
run 0 "$B" unlock -c "$y"		# locked
exit 0
