#!/bin/sh
# A full filesystem: every error is true, space reserved is
# space held, and the filesystem never bricks itself.
#
# 1. Fill, truncate back 8 MiB, many small creates (64 MiB): every failure is
#    ENOSPC, a create that failed left no name (also after a remount);
#    rm, mv, rmdir, chmod, utimes, symlink and truncate still work;
#    the mount never goes read-only, unmounts cleanly, the next mount is
#    writable; after deleting the fill file 16 MiB write at once; fsck
#    -f -n clean.
# 2. fallocate: more than the free space fails with ENOSPC and reserves
#    nothing; what fits is reserved (df and fs usage count it, the same
#    numbers), and writes filling it all succeed.
# 3. Full of 4 KiB files: create, mkdir, symlink, rename and unlink (and a
#    create and write after the unlink) give what they give on ext4 at
#    ENOSPC (an ext4 loop image of the same size when we may mount one;
#    else every one of them must succeed, as ext4 does), and a failed call
#    leaves nothing.
. "$TESTDIR/../lib.sh"
fuse_mount_setup
ops=$TESTDIR/enospc_ops.py

no_readonly() {	# NAME: the mount log says nothing went read-only
	if grep -Ei "read-only|checkpoint failed|not writable|Input/output" "$WORK/$1.log"; then
		fail "$1: the filesystem went read-only"
	fi
}

fsck_clean() {	# IMG NAME
	"$BCACHEFS" fsck -f -n "$1" > "$WORK/$2.fsck" 2>&1 || { cat "$WORK/$2.fsck"; fail "$2: fsck -f -n"; }
}

# ---- 1. fill, truncate back, small creates ----
img=$WORK/fill.img
truncate -s 64M "$img"
"$BCACHEFS" format -q --fs_size=64M "$img" > /dev/null 2>&1 || fail "format"
mount_fg fill "$img"
mkdir "$mnt/emptydir" || fail "mkdir"
dd if=/dev/zero of="$mnt/fill" bs=1M status=none 2> "$WORK/dd.err" && fail "fill: 64 MiB file fit"
grep -q "No space left" "$WORK/dd.err" || { cat "$WORK/dd.err"; fail "fill: not ENOSPC"; }
truncate -s -8M "$mnt/fill" || fail "truncate on a full filesystem"
sync "$mnt/fill"
python3 "$ops" small "$mnt" "$WORK/refused" > "$WORK/small.out" 2>&1 ||
	{ cat "$WORK/small.out"; fail "small creates"; }
cat "$WORK/small.out"
[ -s "$WORK/refused" ] || fail "small creates: no create was refused, the filesystem never filled"
no_readonly fill
# what a user needs to get out of it still works (the recovery reserve)
rm -f "$mnt/small/s000002" || fail "rm on a full filesystem"
mv "$mnt/small/s000003" "$mnt/small/moved" || fail "mv on a full filesystem"
rmdir "$mnt/emptydir" || fail "rmdir on a full filesystem"
chmod 600 "$mnt/small/s000004" || fail "chmod on a full filesystem"
touch -d 2020-01-01 "$mnt/small/s000004" || fail "utimes on a full filesystem"
ln -s /some/target "$mnt/small/link" || fail "symlink on a full filesystem"
truncate -s 0 "$mnt/small/s000005" || fail "truncate on a full filesystem"
unmount_fg fill > "$WORK/fill.out"
no_readonly fill
mount_fg fill2 "$img"
python3 "$ops" absent "$mnt" "$WORK/refused" || fail "refused creates exist after a remount"
[ -f "$mnt/small/moved" ] && [ ! -e "$mnt/small/s000002" ] || fail "rm/mv lost at the remount"
rm "$mnt/fill" || fail "remount: rm of the fill file"
dd if=/dev/zero of="$mnt/after" bs=1M count=16 status=none ||
	fail "16 MiB do not fit right after deleting the fill file"
unmount_fg fill2 > /dev/null
no_readonly fill2
fsck_clean "$img" fill

# ---- 2. fallocate ----
img=$WORK/falloc.img
truncate -s 128M "$img"
"$BCACHEFS" format -q --fs_size=128M "$img" > /dev/null 2>&1 || fail "format"
mount_fg falloc "$img"
usage_avail() {	# available bytes as fs usage says
	"$BCACHEFS" fs usage --json "$mnt" | python3 -c 'import json,sys; print(json.load(sys.stdin)["available"])'
}
df_avail() {
	stat -f -c '%a %S' "$mnt" | awk '{ print $1 * $2 }'
}
a0=$(df_avail)
[ "$a0" = "$(usage_avail)" ] || fail "fallocate: df $a0, fs usage $(usage_avail) before"
fallocate -l 1G "$mnt/big" 2> "$WORK/falloc.err" && fail "fallocate of 1 GiB on 128 MiB returned 0"
grep -q "No space left" "$WORK/falloc.err" || { cat "$WORK/falloc.err"; fail "fallocate: not ENOSPC"; }
[ "$(df_avail)" = "$a0" ] || fail "a refused fallocate changed the space available"
want=$(( (a0 - 4194304) / 1048576 * 1048576 ))
fallocate -l "$want" "$mnt/f" || fail "fallocate of $want of $a0 bytes available"
a1=$(df_avail)
[ "$a1" = "$(usage_avail)" ] || fail "fallocate: df $a1, fs usage $(usage_avail) after"
[ $((a0 - a1)) -ge "$want" ] || fail "fallocate: $want reserved, available only went from $a0 to $a1"
dd if=/dev/urandom of="$WORK/data" bs=1M count=$((want / 1048576)) status=none
dd if="$WORK/data" of="$mnt/f" bs=1M conv=notrunc status=none 2> "$WORK/dd.err" ||
	{ cat "$WORK/dd.err"; fail "writes into the fallocated range failed"; }
cmp "$WORK/data" "$mnt/f" || fail "fallocated file: data differs"
a2=$(df_avail)
[ "$a2" = "$(usage_avail)" ] || fail "fallocate: df $a2, fs usage $(usage_avail) after the writes"
no_readonly falloc
unmount_fg falloc > /dev/null
fsck_clean "$img" falloc

# ---- 3. full of 4 KiB files, against ext4 ----
img=$WORK/k4.img
truncate -s 64M "$img"
"$BCACHEFS" format -q --fs_size=64M "$img" > /dev/null 2>&1 || fail "format"
mount_fg k4 "$img"
python3 "$ops" fill4k "$mnt" || fail "fill with 4 KiB files"
python3 "$ops" ops "$mnt" > "$WORK/ops.bch" || fail "ops"
no_readonly k4
unmount_fg k4 > /dev/null
fsck_clean "$img" k4
ext4=$WORK/ext4.img
emnt=$WORK/ext4-mnt
mkdir -p "$emnt"
truncate -s 64M "$ext4"
if command -v mkfs.ext4 > /dev/null && mkfs.ext4 -q -F "$ext4" 2> /dev/null &&
   mount -o loop "$ext4" "$emnt" 2> /dev/null; then
	python3 "$ops" fill4k "$emnt" > /dev/null && python3 "$ops" ops "$emnt" > "$WORK/ops.ext4"
	umount "$emnt"
else
	echo "(no ext4 loop mount here: the calls must all succeed, as on ext4)"
	printf '%s ok\n' create mkdir symlink rename unlink create+write-after-unlink > "$WORK/ops.ext4"
fi
paste "$WORK/ops.ext4" "$WORK/ops.bch" | awk '{ printf "%-28s ext4 %-8s bcachefs %s\n", $1, $2, $4 }'
paste "$WORK/ops.ext4" "$WORK/ops.bch" | while read -r op e _ b; do
	case $b in
	ok|ENOSPC) ;;
	*) fail "$op: $b";;
	esac
	[ "$e" = ok ] && [ "$b" != ok ] && fail "$op: ext4 succeeds, we say $b"
	true
done || exit 1
true
