# Repairs of the allocation pass (fsck_gc.c) and of the key and node
# passes (fsck.c) through the update engine: each case is damage planted
# in a copy of a small image made by `format --source`; then
#   fsck -f -n: reports it, exit 4, image untouched;
#   fsck -y: repairs it (exit 1) saying what it does;
#   fsck -f -n: clean (exit 0);
# and the files the damage did not touch read back unchanged (extract).
#
#   stale dirty pointer, bucket reused     the pointer is dropped (extent deleted)
#   stale dirty pointer, bucket empty      the alloc gen was wrong: the bucket takes the gen back
#   pointer gen newer, bucket shared       the pointer takes the bucket's gen (no data lost)
#   pointer gen newer, bucket alone        the bucket takes the pointer's gen
#   bucket with no alloc key               the bucket takes the pointer's gen
#   dirents leaf with a bad checksum       the node is rewritten
set -e
. "$(dirname "$0")/../lib.sh"

test_tool plant
PLANT=${PLANT:-$TOOL}

# ---- base images ----
src=$WORK/src
mkdir -p "$src/d1"
for i in 1 2 3 4 5 6; do
	head -c $((i * 4096 + 100)) /dev/urandom > "$src/f$i"
done
head -c 20000 /dev/urandom > "$src/d1/g1"
echo hello > "$src/d1/small"
ln -s f1 "$src/lnk"

base=$WORK/base.img
truncate -s 32M "$base"
"$BCACHEFS" format -q -f --source="$src" "$base" > /dev/null
"$BCACHEFS" fsck -f -n "$base" > "$WORK/base.out" 2>&1 || { cat "$WORK/base.out"; fail "base image not clean"; }

# ---- helpers ----
IMG=$WORK/img
IMGS=$IMG
P() { "$PLANT" "$IMG" "$@" > "$WORK/plant.out" 2>&1 || { cat "$WORK/plant.out"; fail "$CASE: plant $*"; }; }
PJ() { "$PLANT" -j "$IMG" "$@" > "$WORK/plant.out" 2>&1 || { cat "$WORK/plant.out"; fail "$CASE: plant -j $*"; }; }
new() {	# new NAME [BASE]
	CASE=$1
	cp --sparse=always "${2:-$base}" "$IMG"
	IMGS=$IMG
}
# first data sector of the first extent of a file, from list
ext_sector() {	# ext_sector INUM [DEV]
	"$BCACHEFS" list -b extents $IMGS | grep " $1:" | sed -n "s/.*ptr: ${2:-0}:\([0-9]*\) .*/\1/p" | head -n 1
}
inum_of() {	# inum_of NAME: inode number of /NAME
	"$BCACHEFS" list -b dirents $IMGS | sed -n "s/.*: $1 -> \([0-9]*\).*/\1/p" | head -n 1
}
bucket_sectors() {	# bucket size in sectors, from show-super ("32.0K")
	_bs=$("$BCACHEFS" show-super "$IMG" | sed -n 's/^[[:space:]]*Bucket size:[[:space:]]*\([0-9]*\)\(\.0\)\{0,1\}K.*/\1/p' | head -n 1)
	[ -n "$_bs" ] || fail "$CASE: bucket size not found"
	echo $((_bs * 2))
}
# $OPS: plant ops removing every file with data in the bucket of /NAME's
# first extent; $REMOVED: their names
empty_bucket_of() {	# empty_bucket_of NAME
	_bs=$(bucket_sectors)
	_b=$(( $(ext_sector "$(inum_of "$1")") / _bs ))
	OPS="" REMOVED=""
	for _ino in $("$BCACHEFS" list -b extents $IMGS | awk -v lo=$((_b * _bs)) -v hi=$((_b * _bs + _bs)) '
		{ for (i = 1; i <= NF; i++) if ($i == "ptr:") { split($(i + 1), a, ":");
		  split($5, p, ":"); if (a[2] + 0 >= lo && a[2] + 0 < hi) print p[1] } }' | sort -u); do
		_line=$("$BCACHEFS" list -b dirents $IMGS | grep " -> $_ino\( \|$\)" | head -n 1)
		_dir=$(echo "$_line" | awk '{ split($5, p, ":"); print p[1] }')
		_name=$(echo "$_line" | sed -n 's/.*: \(.*\) -> [0-9]*.*/\1/p')
		[ -n "$_name" ] || continue
		OPS="$OPS + rm-dirent $_dir $_name + rm-extents $_ino + rm-inode $_ino"
		case $_dir in 4096) REMOVED="$REMOVED $_name";; *) REMOVED="$REMOVED d1/$_name";; esac
	done
}

# run the three fsck runs; $1 = a pattern the -y output must show
repair() {	# repair PATTERN
	before=$(cat $IMGS | cksum)
	set +e
	"$BCACHEFS" fsck -f -n $IMGS > "$WORK/$CASE.n1" 2>&1; rc=$?
	set -e
	crashed $rc && fail "$CASE: fsck -f -n crashed ($rc)"
	[ $rc = 4 ] || { cat "$WORK/$CASE.n1"; fail "$CASE: fsck -f -n exit $rc, want 4"; }
	[ "$before" = "$(cat $IMGS | cksum)" ] || fail "$CASE: fsck -f -n changed the image"
	set +e
	"$BCACHEFS" fsck -y $IMGS > "$WORK/$CASE.y" 2>&1; rc=$?
	set -e
	cat "$WORK/$CASE.y"
	crashed $rc && fail "$CASE: fsck -y crashed ($rc)"
	[ $rc = 1 ] || fail "$CASE: fsck -y exit $rc, want 1"
	grep -q -- "$1" "$WORK/$CASE.y" || fail "$CASE: fsck -y did not say '$1'"
	set +e
	"$BCACHEFS" fsck -f -n $IMGS > "$WORK/$CASE.n2" 2>&1; rc=$?
	set -e
	[ $rc = 0 ] || { cat "$WORK/$CASE.n2"; fail "$CASE: fsck -f -n after the repair: exit $rc, want 0"; }
}

# the files of the source, except those named, read back unchanged
files_intact() {	# files_intact [EXCEPT...]
	rm -rf "$WORK/out"
	"$BCACHEFS" extract $IMGS / "$WORK/out" > "$WORK/extract.out" 2>&1 ||
		{ cat "$WORK/extract.out"; fail "$CASE: extract failed"; }
	for f in f1 f2 f3 f4 f5 f6 d1/g1 d1/small; do
		case " $* " in *" $f "*) continue;; esac
		cmp -s "$src/$f" "$WORK/out/$f" || fail "$CASE: /$f differs after the repair"
	done
	echo "ok $CASE"
}

# ---- stale dirty pointer into a bucket holding other live data ----
new stale-reused
P new-inode 5100 size=4096 sectors=8 + dirent / ax 5100 reg + extent 5100 0 /f1 gen=-1
repair "pointer is stale.*the bucket was reused"
grep -q "deleting the extent" "$WORK/$CASE.y" || fail "$CASE: extent not deleted"
files_intact

# ---- stale dirty pointer, nothing else in the bucket: the gen was wrong ----
# /ax's pointer is /f2's with gen - 1, then /f2 is removed: the bucket
# holds only /ax's data, and its gen is newer than the pointer.
new stale-alone
empty_bucket_of f2
P new-inode 5100 size=4096 sectors=8 + dirent / ax 5100 reg + extent 5100 0 /f2 gen=-1 $OPS
"$BCACHEFS" list -b extents $IMGS | grep " 5100:"
repair "nothing else is in the bucket: its gen is wrong"
grep -q "takes back gen" "$WORK/$CASE.y" || fail "$CASE: gen not restored"
"$BCACHEFS" list -b extents $IMGS | grep -q " 5100:" || fail "$CASE: the extent of /ax is gone"
files_intact $REMOVED

# ---- pointer gen newer than its bucket, other live data in the bucket ----
new newer-shared
P new-inode 5100 size=4096 sectors=8 + dirent / ax 5100 reg + extent 5100 0 /f1 gen=+1
repair "ptr gen in the future"
grep -q "the pointer takes its gen" "$WORK/$CASE.y" || fail "$CASE: pointer gen not lowered"
files_intact

# ---- pointer gen newer than its bucket, alone in the bucket ----
new newer-alone
empty_bucket_of f3
P new-inode 5100 size=4096 sectors=8 + dirent / ax 5100 reg + extent 5100 0 /f3 gen=+1 $OPS
repair "ptr gen in the future"
grep -q "the bucket takes gen" "$WORK/$CASE.y" || fail "$CASE: bucket gen not adopted"
files_intact $REMOVED

# ---- bucket with no alloc key ----
new alloc-key-missing
ino=$(inum_of f4)
s=$(ext_sector "$ino")
[ -n "$s" ] || fail "$CASE: no extent for /f4"
PJ rm-key alloc 0 $((s / $(bucket_sectors)))
repair "missing gen in alloc btree"
files_intact

# ---- the dirents leaf with a bad checksum: rewritten ----
new node-bad-csum
leaf=$("$PLANT" "$IMG" leaf-of dirents 4096 0)
[ -n "$leaf" ] || fail "$CASE: no dirents leaf"
# a byte in the first bset's keys, checksum left stale
o=$((leaf + 200))
b=$(od -An -tx1 -j "$o" -N1 "$IMG" | tr -d ' ')
printf "$(printf '\\%03o' $(( (0x$b ^ 0x01) )))" | dd of="$IMG" bs=1 seek="$o" conv=notrunc status=none
repair "rewritten with the keys that could be used"
echo "ok $CASE (contents: whatever the reader kept)"

echo "all repair cases done"
