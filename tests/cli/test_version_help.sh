# -V/--version on mkfs.bcachefs, fsck.bcachefs and bcachefs (as mkfs.ext4
# and e2fsck have), and 'bcachefs help CMD' showing that command's help.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1
ln -s "$BCACHEFS" mkfs.bcachefs
ln -s "$BCACHEFS" fsck.bcachefs

"$BCACHEFS" version > want 2>&1 || fail "bcachefs version"
grep -q "^bcachefs-tools .*superblock version 9" want || { cat want; fail "version line"; }
for v in "./mkfs.bcachefs -V" "./mkfs.bcachefs --version" "./fsck.bcachefs -V" \
	 "./fsck.bcachefs --version" "$BCACHEFS -V" "$BCACHEFS --version" \
	 "$BCACHEFS format -V" "$BCACHEFS fsck --version"; do
	rc=0; $v < /dev/null > got 2>&1 || rc=$?
	[ $rc = 0 ] || { cat got; fail "$v: exit $rc"; }
	cmp -s want got || { cat got; fail "$v: not the version line"; }
	echo "ok   $v"
done

for c in format show-super fsck list list_journal extract mount unlock \
	 set-passphrase remove-passphrase version "device add"; do
	"$BCACHEFS" help $c > help1 2>&1 || fail "help $c: exit $?"
	"$BCACHEFS" $c --help > help2 2>&1
	grep -q "^Usage: bcachefs $c" help1 || { cat help1; fail "help $c: not its usage"; }
	cmp -s help1 help2 || [ "$c" = "device add" ] || fail "help $c differs from $c --help"
	echo "ok   help $c"
done
rc=0; "$BCACHEFS" help nosuch > out 2>&1 || rc=$?
[ $rc = 16 ] || { cat out; fail "help nosuch: exit $rc, want 16"; }
"$BCACHEFS" help > out || fail "help alone"
grep -q "^Commands:" out || fail "help alone: no command list"
