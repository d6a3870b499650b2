# Interactive fsck on a terminal, on corpus case 042
# (four wrong link counts): each question shows its default (<y>) and
# takes one key without Enter; Enter is the default; an invalid key is
# asked again; Ctrl-C cancels with fsck(8)'s 32 (not 130) and changes
# nothing; Ctrl-D ends the question with a newline and quits (32 | 4).
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1
command -v python3 > /dev/null || { echo "python3 needed"; exit 77; }
zstd -qd --sparse "$TESTDIR/042-many-nlinks-wrong/image.zst" -o orig

# ask KEYS WANT-RC: fsck of a fresh copy on a terminal, typing KEYS
ask() {
	cp orig img
	python3 "$TESTDIR/pty_keys.py" "$1" "$BCACHEFS" fsck img > out
	rc=$(sed -n 's/^exit //p' out | tail -n 1)
	[ "$rc" = "$2" ] || { cat out; fail "keys $1: exit $rc, want $2"; }
	grep -q "fix? .*<y> " out || { cat out; fail "keys $1: the default is not shown"; }
}

ask y,y,y,y 1
[ "$(grep -c '<y> yes$' out)" = 4 ] || { cat out; fail "one key each: four answers"; }
grep -q "4 problems found, 4 fixed, 0 left" out || { cat out; fail "y: not all fixed"; }
"$BCACHEFS" fsck -f -n img > /dev/null || fail "y: not clean after"
echo "ok   one key per answer, no Enter"

ask ENTER,ENTER,ENTER,ENTER 1
grep -q "4 fixed" out || { cat out; fail "Enter is not yes"; }
echo "ok   Enter takes the default (yes)"

ask x,n,n,n,n 4
[ "$(grep -c 'please answer y, n, a or q' out)" = 1 ] || { cat out; fail "x: not asked again"; }
[ "$(grep -c 'fix? ' out)" = 5 ] || { cat out; fail "x: want five questions (one again)"; }
cmp -s img orig || fail "n: image changed"
echo "ok   an invalid key is asked again"

ask CTRL-C 32
grep -q "cancelled" out || { cat out; fail "Ctrl-C: not said"; }
cmp -s img orig || fail "Ctrl-C: image changed"
echo "ok   Ctrl-C: exit 32, nothing changed"

ask CTRL-D 36
grep -q "<y> end of input: quit$" out || { cat out; fail "Ctrl-D: no newline after the question"; }
cmp -s img orig || fail "Ctrl-D: image changed"
echo "ok   Ctrl-D: quits with a newline, exit 36"
