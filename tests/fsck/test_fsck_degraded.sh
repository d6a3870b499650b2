# One member of a 2-device filesystem. fsck -f -n, list,
# list_journal and extract of a member alone refuse, naming the missing
# member (index and uuid) and --degraded, instead of saying "clean" (the
# first member) or reporting the copies on the missing device as damage
# (the second). With --degraded they read what the present member holds
# (--replicas=2: everything), name the missing member once, and report no
# problem: exit 0, fsck says "clean (degraded: 1 member missing, not
# checked)", extract copies the tree.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1
mkdir -p src/d
echo one > src/f
head -c 100000 /dev/urandom > src/d/big
truncate -s 64M a.img b.img
"$BCACHEFS" format -q --replicas=2 --source=src a.img b.img > out 2>&1 || { cat out; fail "format"; }

"$BCACHEFS" show-super a.img > sa
ua=$(sed -n '/Device 0:/,/UUID/s/.*UUID:[[:space:]]*//p' sa | head -n 1)
ub=$(sed -n '/Device 1:/,/UUID/s/.*UUID:[[:space:]]*//p' sa | head -n 1)
[ -n "$ua" ] && [ -n "$ub" ] || fail "member uuids"

for present in a.img b.img; do
	if [ $present = a.img ]; then missing="1 (uuid $ub)"; else missing="0 (uuid $ua)"; fi
	for c in "fsck -f -n" "list -b dirents" list_journal extract; do
		set -- "$present"
		[ "$c" = extract ] && { rm -rf x; set -- "$present" / x; }
		rc=0; "$BCACHEFS" $c "$@" < /dev/null > out 2> err || rc=$?
		[ $rc != 0 ] || { cat out err; fail "$c $present: exit 0 with a member missing"; }
		[ "$(wc -l < err)" = 1 ] || { cat err; fail "$c $present: want one line"; }
		grep -q "missing: $missing" err || { cat err; fail "$c $present: the missing member is not named"; }
		grep -q -- "--degraded" err || { cat err; fail "$c $present: --degraded not suggested"; }
		grep -q "clean" out && fail "$c $present: says clean"

		[ "$c" = extract ] && rm -rf x
		rc=0; "$BCACHEFS" $c --degraded "$@" < /dev/null > out 2> err || rc=$?
		[ $rc = 0 ] || { cat out err; fail "$c --degraded $present: exit $rc"; }
		grep -q "member ${missing%% *} (uuid ${missing#*uuid }" err ||
			{ cat err; fail "$c --degraded $present: the missing member is not named"; }
		grep -q "unusable\|problem" err out && { cat err out; fail "$c --degraded $present: the missing device reported as damage"; }
		echo "ok   $c $present: refused, --degraded reads it: $(head -n 1 err)"
	done
	"$BCACHEFS" fsck -f -n --degraded "$present" 2> /dev/null | grep -q "^$present: clean (degraded: 1 member missing, not checked)$" ||
		fail "fsck -f -n --degraded $present: summary"
	rmdir x/lost+found; diff -r src x || fail "extract --degraded $present: tree differs"
done

# both members: nothing said about missing members
"$BCACHEFS" fsck -f -n a.img b.img > out 2> err || { cat out err; fail "fsck -f -n of both"; }
[ -s err ] && { cat err; fail "fsck -f -n of both: stderr"; }
grep -q "^a.img: clean$" out || { cat out; fail "fsck -f -n of both: not clean"; }
