#!/bin/sh
# device remove (issue 22): the removed device no longer looks like a member.
# Before, it kept a complete superblock ("Devices: 2 live", not clean), so
# show-super, mount and fsck took it for one. Now the magic of every
# superblock copy and of the layout is zeroed, once the other members say
# it is gone: show-super and mount say it is not bcachefs, it can be added
# again without -f; the filesystem left is clean. Unmounted and mounted.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/lib_online.sh"
online_setup

# gone NAME IMG: IMG holds no bcachefs superblock any more
gone() {
	"$BCACHEFS" show-super "$2" > "$WORK/$1.ss" 2>&1 && { cat "$WORK/$1.ss"; fail "$1: show-super still reads a superblock"; }
	grep -q "not a bcachefs filesystem" "$WORK/$1.ss" || { cat "$WORK/$1.ss"; fail "$1: show-super does not say why"; }
	# every copy: none of the 16 magic bytes left anywhere in the first MiB and at the backup
	python3 - "$2" <<'PY' || fail "$1: a superblock magic is left"
import sys
magic = bytes.fromhex("c68573f64e1a45ca8265f57f48ba6d81")
with open(sys.argv[1], "rb") as f:
    data = f.read()
n = data.count(magic)
if n:
    print("%d copies of the magic left" % n)
    sys.exit(1)
PY
}

# unmounted: --fs DEV:DEV
mkimg v.img 128M
mkimg w.img 128M
run_ok fmt "$BCACHEFS" format -q "$WORK/v.img" "$WORK/w.img"
"$BCACHEFS" show-super "$WORK/w.img" | grep -q "^Devices:.*2" || fail "w.img: not a member of 2 before"
run_ok rm-off "$BCACHEFS" device remove --fs "$WORK/v.img:$WORK/w.img" "$WORK/w.img"
gone off "$WORK/w.img"
fsck_clean off "$WORK/v.img"
run_ok readd "$BCACHEFS" device add "$WORK/v.img" "$WORK/w.img"
fsck_clean readd "$WORK/v.img" "$WORK/w.img"

# mounted
mkimg a.img 128M
mkimg b.img 128M
run_ok fmt2 "$BCACHEFS" format -q "$WORK/a.img" "$WORK/b.img"
mount_fg r "$WORK/a.img:$WORK/b.img"
python3 "$GEN_TREE" "$mnt/tree" 60 3 > /dev/null || fail "gen_tree"
manifest "$mnt/tree" "$WORK/m.0"
run_ok rm-on "$BCACHEFS" device remove "$WORK/b.img"
gone on "$WORK/b.img"
manifest "$mnt/tree" "$WORK/m.1"
cmp -s "$WORK/m.0" "$WORK/m.1" || fail "files changed by the remove"
unmount_fg r
gone on-after "$WORK/b.img"
mkdir -p "$WORK/mnt-x"
"$BCACHEFS" mount -f "$WORK/b.img" "$WORK/mnt-x" > "$WORK/mount-b.out" 2>&1 && fail "the removed device mounts"
fsck_clean on "$WORK/a.img"
exit 0
