#!/bin/sh
# set-passphrase on a two-device encrypted filesystem made by our format:
# every member's superblock gets the new wrapped key (checked per device
# with unlock, which reads only that device's superblock), and giving only
# one of the devices is refused before anything is asked or written.
# Five scrypt derivations: not run in quick mode.
. "$TESTDIR/../lib.sh"

[ -n "$TEST_QUICK" ] && { echo "quick mode: multi-device passphrase test not run"; exit 77; }
if [ -z "$KEY_TEST_SESSION" ]; then
	command -v keyctl > /dev/null && keyctl session - true > /dev/null 2>&1 ||
		{ echo "no private session keyring (keyctl missing or not allowed)"; exit 77; }
	KEY_TEST_SESSION=1 exec keyctl session - sh "$0" "$@"
fi

B=$BCACHEFS
m0=$WORK/m0.img m1=$WORK/m1.img
truncate -s 64M "$m0" "$m1"
printf 'first\n' > "$WORK/p1"
printf 'second\n' > "$WORK/p2"
"$B" format -q --encrypted --passphrase_file="$WORK/p1" "$m0" "$m1" > "$WORK/fmt" 2>&1 ||
	{ cat "$WORK/fmt"; fail "format of two encrypted devices"; }

seq_of() {
	"$B" show-super --json "$1" | sed -n 's/.*"seq": \([0-9]*\),.*/\1/p'
}
s0=$(seq_of "$m0") s1=$(seq_of "$m1")

# one device of two: refused, nothing read or written
printf 'first\nsecond\n' | "$B" set-passphrase "$m1" > "$WORK/out" 2> "$WORK/err"
rc=$?
crashed $rc && fail "crashed"
[ $rc = 1 ] || { cat "$WORK/err"; fail "one device of two: exit $rc"; }
grep -q 'missing' "$WORK/err" || { cat "$WORK/err"; fail "one device of two: message"; }
[ "$(seq_of "$m1")" = "$s1" ] || fail "one device of two: written"

printf 'first\nsecond\n' | "$B" set-passphrase "$m0" "$m1" > "$WORK/out" 2> "$WORK/err"
rc=$?
crashed $rc && fail "crashed"
[ $rc = 0 ] || { cat "$WORK/err"; fail "set-passphrase of two devices: exit $rc"; }
[ "$(seq_of "$m0")" = $((s0 + 1)) ] && [ "$(seq_of "$m1")" = $((s1 + 1)) ] ||
	fail "seq not bumped on both devices"
for d in "$m0" "$m1"; do
	"$B" unlock -k session -f "$WORK/p2" "$d" > "$WORK/out" 2> "$WORK/err" ||
		{ cat "$WORK/err"; fail "$d: the new passphrase does not unlock it"; }
done
keyctl clear @s
exit 0
