#!/bin/sh
# unlock (doc/tools.md §7) on copies of the encrypted golden images: -c, the
# passphrase from a file and from standard input, a wrong passphrase, what
# the key in the keyring then opens; the refusals on a filesystem that is
# not encrypted or whose key is stored without passphrase; usage errors.
# The keys go to a private session keyring (keyctl session), which
# disappears with the test: nothing is left in the user keyring.
. "$TESTDIR/../lib.sh"

if [ -z "$KEY_TEST_SESSION" ]; then
	if command -v keyctl > /dev/null && keyctl session - true > /dev/null 2>&1; then
		KEY_TEST_SESSION=1 exec keyctl session - sh "$0" "$@"
	fi
	KEY_TEST_SESSION=none
fi
[ "$KEY_TEST_SESSION" = 1 ] && exec 2>&1	# "Joined session keyring" noise aside

B=$BCACHEFS
c1=$(golden_images c1_encrypted)
c2=$(golden_images c2_encrypted_nopass)
plain=$(golden_images a_default_20M)
printf 'golden-pass\n' > "$WORK/pass"
printf 'wrong-pass\n' > "$WORK/bad"

# run EXPECTED-RC CMD...: output in $WORK/out (stdout) and $WORK/err
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
err_lines() {
	[ "$(wc -l < "$WORK/err")" = "$1" ] || { cat "$WORK/err"; fail "stderr: wanted $1 line(s)"; }
}

uuid_of() {
	"$B" show-super --json "$1" | sed -n 's/.*"external_uuid": "\(.*\)".*/\1/p'
}

# ---- help and usage errors ----
for cmd in unlock set-passphrase remove-passphrase; do
	run 0 "$B" $cmd --help
	grep -q "^Usage: bcachefs $cmd" "$WORK/out" || fail "$cmd --help"
	run 0 "$B" $cmd -h
	run 16 "$B" $cmd
	run 16 "$B" $cmd --bogus "$c1"
done
run 0 "$B" unlock --help
grep -q '2 with -c: already unlocked' "$WORK/out" || fail "unlock --help: exit status of -c"
run 16 "$B" unlock -k bogus "$c1"
err_has "unknown keyring 'bogus'"
run 16 "$B" unlock -f
run 16 "$B" unlock "$c1" "$c2"

# ---- refusals ----
for cmd in "unlock" "unlock -c" "set-passphrase" "remove-passphrase"; do
	run 1 "$B" $cmd "$plain"
	err_has "filesystem is not encrypted"
	err_lines 1
done
run 1 "$B" unlock -c "$c2"
err_has "stored without a passphrase: nothing to unlock"
run 1 "$B" unlock -f "$WORK/pass" "$c2"
err_has "stored without a passphrase"
run 1 "$B" unlock /nonexistent/dev
err_has "/nonexistent/dev: cannot open"

# ---- on a terminal the new passphrase is asked twice (c2: no old one) ----
if command -v python3 > /dev/null; then
	cp --sparse=always "$c2" "$WORK/y.img"
	PTY_INPUT='one|two' python3 "$TESTDIR/pty_run.py" "$B" set-passphrase "$WORK/y.img" \
		> "$WORK/tty" 2>&1
	rc=$?
	crashed $rc && fail "set-passphrase on a tty crashed"
	[ $rc = 1 ] || { cat "$WORK/tty"; fail "mismatched passphrases: exit $rc"; }
	grep -q '^Enter new passphrase: $' "$WORK/tty" &&
		grep -q '^Enter same passphrase again: $' "$WORK/tty" &&
		grep -q 'passphrases do not match' "$WORK/tty" || { cat "$WORK/tty"; fail "tty prompts"; }
	"$B" show-super --json -f crypt "$WORK/y.img" | grep -q '"key_encrypted": false' ||
		fail "written after mismatched passphrases"
else
	echo "SKIP: python3 missing: no terminal test"
fi

# ---- -c on a locked filesystem: exit 0, silent ----
if [ "$KEY_TEST_SESSION" != 1 ]; then
	echo "SKIP: no private session keyring (keyctl missing or not allowed): the unlock parts are not run"
	exit 0
fi
u1=$(uuid_of "$c1")
[ -n "$u1" ] || fail "no uuid for c1"
run 0 "$B" unlock -c "$c1"
[ -s "$WORK/out" ] || [ -s "$WORK/err" ] && fail "unlock -c printed something"

# ---- wrong passphrase: exit 1, one line, nothing added ----
run 1 "$B" unlock -k session -f "$WORK/bad" "$c1"
err_has "wrong passphrase"
err_lines 1
keyctl search @s user "bcachefs:$u1" > /dev/null 2>&1 && fail "key added after a wrong passphrase"

# ---- the right passphrase from a file ----
run 0 "$B" unlock -k session -f "$WORK/pass" "$c1"
[ -s "$WORK/out" ] && fail "unlock printed on stdout"
keyctl search @s user "bcachefs:$u1" > /dev/null || fail "no user key in the session keyring"
keyctl search @s logon "bcachefs:$u1" > /dev/null || fail "no logon key in the session keyring"
[ "$(keyctl print "$(keyctl search @s user "bcachefs:$u1")" | wc -c)" -gt 32 ] ||
	fail "user key payload"
run 2 "$B" unlock -c "$c1"		# already unlocked

# the other commands take the key from the keyring: no passphrase needed
run 0 "$B" list -b inodes "$c1"
grep -q '^u64s .* 4096:0 ' "$WORK/out" || fail "list with the keyring key: no root inode"

# lookups must not link the key anywhere else (the user keyring is shared)
keyctl search @u user "bcachefs:$u1" > /dev/null 2>&1 && {
	keyctl unlink "$(keyctl search @u user "bcachefs:$u1")" @u
	fail "the key leaked into the user keyring"
}

keyctl clear @s
run 0 "$B" unlock -c "$c1"		# locked again
run 1 "$B" list -b inodes "$c1"

# ---- the passphrase from standard input, no prompt on stdout ----
printf 'golden-pass\n' > "$WORK/stdin"
STDIN=$WORK/stdin run 0 "$B" unlock -k session "$c1"
[ -s "$WORK/out" ] && fail "unlock from stdin printed on stdout"
keyctl search @s user "bcachefs:$u1" > /dev/null || fail "no key after unlock from stdin"
run 2 "$B" unlock -c "$c1"
run 1 "$B" unlock -k session "$c1"	# empty stdin
err_has "error reading passphrase from standard input: no passphrase"
keyctl clear @s
exit 0
