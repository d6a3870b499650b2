# format --source with xattrs too large for a key: the
# filesystem is still made, with everything else (the other xattrs of the
# same file included); each xattr left out is named on stderr, once, with
# the limit; no misleading error first; exit status 2. The limit is
# exact: name and value of 1992 bytes fit, 1993 do not.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1
command -v setfattr > /dev/null || { echo "no setfattr (attr)"; exit 77; }

mkdir -p src
echo data > src/f
echo more > src/g
rep() { head -c "$1" /dev/zero | tr '\0' "$2"; }
setfattr -n user.ok -v small src/f || { echo "no user xattrs here"; exit 77; }
setfattr -n user.big -v "$(rep 2000 a)" src/f
setfattr -n user.a -v "$(rep 1991 b)" src/g	# 1 + 1991 = 1992: fits
setfattr -n user.b -v "$(rep 1992 c)" src/g	# 1993: too large
setfattr -n user.huge -v "$(rep 3000 d)" src/g 2> /dev/null || true

truncate -s 64M x.img
rc=0
"$BCACHEFS" format -q --source=src x.img > out 2> err || rc=$?
cat err
[ $rc = 2 ] || fail "format --source with too large xattrs: exit $rc, want 2"
grep -q "Argument list too long\|initialising the filesystem failed" err && fail "misleading error"
grep -q "^src/f: xattr user.big (2000 bytes of value) does not fit" err || fail "user.big not named"
grep -q "^src/g: xattr user.b (1992 bytes of value) does not fit" err || fail "user.b not named"
grep -q "user.a\|user.ok" err && fail "an xattr that fits was named"
want=2; getfattr -n user.huge src/g > /dev/null 2>&1 && want=3
[ "$(grep -c 'does not fit' err)" = $want ] || fail "each xattr left out is named once"
"$BCACHEFS" fsck -f -n x.img > out 2>&1 || { cat out; fail "fsck -f -n: not clean"; }
"$BCACHEFS" extract x.img / x > /dev/null 2>&1 || fail "extract"
[ "$(getfattr --only-values -n user.ok x/f)" = small ] || fail "user.ok not copied"
[ "$(getfattr --only-values -n user.a x/g)" = "$(rep 1991 b)" ] || fail "user.a (1992 bytes) not copied"
getfattr -n user.big x/f > /dev/null 2>&1 && fail "user.big copied?"
[ "$(cat x/g)" = more ] || fail "file data"
echo "ok   too large xattrs left out and named, exit 2, the rest copied"
