#!/bin/sh
# device remove: the removed device no longer looks like a member.
# Before, it kept a complete superblock ("Devices: 2 live", not clean), so
# show-super, mount and fsck took it for one. Now the magic of every
# superblock copy and of the layout is zeroed (so blkid and the 2018 tools
# see no bcachefs), with each copy's checksum computed again over the
# zeroed magic, once the other members say it is gone: show-super, mount
# and fsck say "removed from filesystem UUID", it can be added again
# without -f; the filesystem left is clean. Unmounted and mounted. A copy
# whose magic was zeroed by anything else (its checksum no longer matches)
# is still "not a bcachefs filesystem".
. "$TESTDIR/../lib.sh"
. "$TESTDIR/lib_online.sh"
online_setup

# gone NAME IMG UUID [nomount]: IMG holds no bcachefs superblock any more,
# and our tools say it was removed from filesystem UUID (mount not tried
# while the filesystem is mounted: the mount may still hold the file open)
gone() {
	want="removed from filesystem $3: not a member any more (format it to reuse it)"
	"$BCACHEFS" show-super "$2" > "$WORK/$1.ss" 2>&1 && { cat "$WORK/$1.ss"; fail "$1: show-super still reads a superblock"; }
	grep -qF "$2: $want" "$WORK/$1.ss" || { cat "$WORK/$1.ss"; fail "$1: show-super does not say it was removed"; }
	"$BCACHEFS" fsck -n "$2" > "$WORK/$1.fsck" 2>&1 && { cat "$WORK/$1.fsck"; fail "$1: fsck checks it"; }
	grep -qF "$want" "$WORK/$1.fsck" || { cat "$WORK/$1.fsck"; fail "$1: fsck does not say it was removed"; }
	if [ "$4" != nomount ]; then
		mkdir -p "$WORK/mnt-x"
		"$BCACHEFS" mount -f "$2" "$WORK/mnt-x" > "$WORK/$1.mount" 2>&1 && fail "$1: the removed device mounts"
		grep -qF "$want" "$WORK/$1.mount" || { cat "$WORK/$1.mount"; fail "$1: mount does not say it was removed"; }
	fi
	if command -v blkid > /dev/null; then
		blkid -p "$2" > "$WORK/$1.blkid" 2>&1 && { cat "$WORK/$1.blkid"; fail "$1: blkid still finds a filesystem"; }
	fi
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
uuid=$("$BCACHEFS" show-super "$WORK/v.img" | sed -n 's/^External UUID:[[:space:]]*//p')
[ -n "$uuid" ] || fail "no external uuid in show-super"
"$BCACHEFS" show-super "$WORK/w.img" | grep -q "^Devices:.*2" || fail "w.img: not a member of 2 before"
run_ok rm-off "$BCACHEFS" device remove --fs "$WORK/v.img:$WORK/w.img" "$WORK/w.img"
gone off "$WORK/w.img" "$uuid"
# a command that opens a filesystem through one of its devices says the same
"$BCACHEFS" fs usage "$WORK/w.img" > "$WORK/usage.out" 2>&1 && fail "fs usage opens the removed device"
grep -qF "removed from filesystem $uuid: not a member any more" "$WORK/usage.out" ||
	{ cat "$WORK/usage.out"; fail "fs usage does not say it was removed"; }
# a copy whose magic was zeroed by anything else is not taken for removed:
# its checksum was computed over the magic
cp "$WORK/v.img" "$WORK/x.img"
python3 - "$WORK/x.img" <<'PY' || fail "zeroing x.img's magic"
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(8 * 512 + 24)
    f.write(bytes(16))
    f.seek(7 * 512)
    f.write(bytes(16))
PY
"$BCACHEFS" show-super "$WORK/x.img" > "$WORK/x.ss" 2>&1 && fail "x.img: show-super reads a copy without magic"
grep -q "not a bcachefs filesystem" "$WORK/x.ss" || { cat "$WORK/x.ss"; fail "x.img: not 'not a bcachefs filesystem'"; }
grep -q "removed from" "$WORK/x.ss" && { cat "$WORK/x.ss"; fail "x.img: taken for a removed device"; }
rm -f "$WORK/x.img"
fsck_clean off "$WORK/v.img"
run_ok readd "$BCACHEFS" device add "$WORK/v.img" "$WORK/w.img"
fsck_clean readd "$WORK/v.img" "$WORK/w.img"

# mounted
mkimg a.img 128M
mkimg b.img 128M
run_ok fmt2 "$BCACHEFS" format -q "$WORK/a.img" "$WORK/b.img"
uuid=$("$BCACHEFS" show-super "$WORK/a.img" | sed -n 's/^External UUID:[[:space:]]*//p')
mount_fg r "$WORK/a.img:$WORK/b.img"
python3 "$GEN_TREE" "$mnt/tree" 60 3 > /dev/null || fail "gen_tree"
manifest "$mnt/tree" "$WORK/m.0"
run_ok rm-on "$BCACHEFS" device remove "$WORK/b.img"
gone on "$WORK/b.img" "$uuid" nomount
manifest "$mnt/tree" "$WORK/m.1"
cmp -s "$WORK/m.0" "$WORK/m.1" || fail "files changed by the remove"
unmount_fg r
gone on-after "$WORK/b.img" "$uuid"
fsck_clean on "$WORK/a.img"
exit 0
