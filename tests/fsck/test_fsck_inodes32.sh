# New inode numbers and the superblock flag "32 bit inodes" (format
# --inodes_32bit): the inode fsck creates (lost+found) must be numbered
# below 2^32 even when a larger number is in use. Damage planted in a
# small image made by `format --source`:
#   64:    no flag, an inode numbered 2^32 + 5, lost+found's dirent removed:
#          the new lost+found goes above every number in use (2^32 + 6)
#   32:    the same with the flag: the new lost+found is below 2^32 (4101,
#          above every number in use below 2^32)
#   32gap: with the flag, 2^32 - 1 in use too (nothing above is free), a
#          dirent to the missing inode 4101 (left by -p, which does not fix
#          it) and an xattr on 4100: the first free number, 4102
# Each time fsck -y (-p for 32gap) must exit 1 and the image check clean
# afterwards (32gap: but for what -p leaves).
set -e
. "$(dirname "$0")/../lib.sh"

test_tool plant
PLANT=${PLANT:-$TOOL}

src=$WORK/src
mkdir -p "$src/d"
echo hi > "$src/f"
echo x > "$src/d/g"

IMG=$WORK/img
# new CASE [FORMAT OPTION...]: a fresh image, its inodes 4096..4100
new() {
	CASE=$1; shift
	rm -f "$IMG"
	truncate -s 16M "$IMG"
	"$BCACHEFS" format -q -f "$@" --source="$src" "$IMG" > /dev/null
	"$BCACHEFS" list -b inodes "$IMG" | grep -q ' 4100:0 ' || fail "$CASE: base image: no inode 4100"
	"$BCACHEFS" list -b inodes "$IMG" | grep -q ' 4101:0 ' && fail "$CASE: base image: inode 4101 in use"
	return 0
}
P() { "$PLANT" "$IMG" "$@" > "$WORK/plant.out" 2>&1 || { cat "$WORK/plant.out"; fail "$CASE: plant $*"; }; }
# fsck OPTION WANT-EXIT
fsck() {
	set +e
	"$BCACHEFS" fsck "$1" "$IMG" > "$WORK/$CASE$1.out" 2>&1; _rc=$?
	set -e
	crashed $_rc && { cat "$WORK/$CASE$1.out"; fail "$CASE: fsck $1 crashed ($_rc)"; }
	[ $_rc = "$2" ] || { cat "$WORK/$CASE$1.out"; fail "$CASE: fsck $1: exit $_rc, want $2"; }
	return 0
}
# the inode number of the root's lost+found dirent
lf_inum() {
	"$BCACHEFS" list -b dirents "$IMG" | sed -n 's/^.* 4096:[0-9]* .*: lost+found -> \([0-9]*\)$/\1/p'
}
# want_lf INUM: lost+found is INUM, which has an inode key (that it is a
# directory is what a clean fsck -f -n says)
want_lf() {
	_lf=$(lf_inum)
	[ "$_lf" = "$1" ] || { cat "$WORK/$CASE"-*.out; fail "$CASE: lost+found is inode '$_lf', want $1"; }
	"$BCACHEFS" list -b inodes "$IMG" | grep -q "^u64s [0-9]* type 128 $1:0 " ||
		fail "$CASE: no inode $1"
	echo "ok $CASE: lost+found -> $1"
}

# big CASE FLAG WANT [FORMAT OPTION]: on an image whose show-super says
# "32 bit inodes: FLAG", with an inode numbered 2^32 + 5 and lost+found's
# dirent removed, fsck -y makes inode WANT the new lost+found
big() {
	new "$1" ${4:-}
	"$BCACHEFS" show-super "$IMG" | grep -q "^[[:space:]]*32 bit inodes:[[:space:]]*$2\$" ||
		fail "$1: show-super does not say '32 bit inodes: $2'"
	P new-inode 4294967301 + rm-dirent / lost+found
	fsck -y 1
	fsck -fn 0
	want_lf "$3"
}
big 64 0 4294967302
big 32 1 4101 --inodes_32bit

new 32gap --inodes_32bit
P new-inode 4294967295 + new-inode 4294967301 + dirent / ghost 4101 reg + \
	xattr 4100 user.a b + rm-dirent / lost+found
fsck -fp 5
grep -q 'ghost -> 4101' "$WORK/32gap-fp.out" || { cat "$WORK/32gap-fp.out"; fail "32gap: ghost not reported"; }
"$BCACHEFS" list -b dirents "$IMG" | grep -q ': ghost -> 4101$' || fail "32gap: -p removed ghost"
want_lf 4102
fsck -y 1
fsck -fn 0
want_lf 4102
