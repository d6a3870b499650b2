# Passphrase options, the same everywhere:
#  - list and list_journal of an encrypted filesystem ask for the
#    passphrase on a terminal (as fsck, extract and mount do);
#  - --passphrase-file and --passphrase_file are both accepted by every
#    command that reads a passphrase file; the help of each documents
#    --passphrase-file only.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1
command -v python3 > /dev/null || { echo "python3 needed"; exit 77; }
B=$BCACHEFS
printf 'item12-pass\n' > pw
truncate -s 64M enc.img
"$B" format -q --encrypted --passphrase-file=pw enc.img || fail "format --passphrase-file"

# on a terminal: asked, then listed
for c in "list -b inodes" "list_journal"; do
	PTY_INPUT=item12-pass python3 "$TESTDIR/pty_run.py" "$B" $c enc.img > out 2>&1 ||
		{ cat out; fail "$c on a terminal: exit $?"; }
	grep -q "Enter passphrase: " out || { cat out; fail "$c: no prompt"; }
	grep -q "4096:0\|jset magic" out || { cat out; fail "$c: nothing listed"; }
	echo "ok   $c asks on a terminal"
done

# both spellings are options (a missing file: each says it cannot read
# it, none is a usage error; no key derivation is needed for that)
for o in --passphrase-file --passphrase_file; do
	for c in "list -b inodes" "list_journal" "fsck -f -n" "extract" "unlock" "mount" "format --encrypted"; do
		set -- enc.img
		case $c in extract) set -- enc.img / x;; mount) set -- enc.img "$WORK";; esac
		rc=0; "$B" $c $o "$WORK/nopw" "$@" > out 2>&1 < /dev/null || rc=$?
		[ $rc = 16 ] && { cat out; fail "$c $o: a usage error"; }
		[ $rc = 0 ] && { cat out; fail "$c $o: no passphrase, yet exit 0"; }
		grep -q "nopw" out || { cat out; fail "$c $o: the missing file is not named"; }
	done
	echo "ok   $o accepted by list, list_journal, fsck, extract, unlock, mount, format"
done

for c in format fsck list list_journal extract mount unlock; do
	"$B" $c --help > help
	grep -q -- "--passphrase-file" help || fail "$c --help does not document --passphrase-file"
	grep -q -- "--passphrase_file" help && fail "$c --help documents --passphrase_file"
done
echo "ok   --passphrase-file documented everywhere"
