# Helpers for the migrate tests (sourced after tests/lib.sh): filesystem
# images on loop devices, mounted under $WORK, always cleaned up.

# migrate_setup TOOL...: skip (77) unless root with loop devices and the
# tools; then unmount and detach everything made here on exit.
migrate_setup() {
	[ "$(id -u)" = 0 ] || { echo "migrate tests need root (loop devices, mount)"; exit 77; }
	for _t in losetup mount umount python3 "$@"; do
		command -v "$_t" > /dev/null || { echo "$_t needed (tests/deps.sh installs it)"; exit 77; }
	done
	[ -e /dev/loop-control ] || [ -e /dev/loop0 ] || { echo "no loop devices"; exit 77; }
	: > "$WORK/loops"
	trap migrate_cleanup EXIT
	trap 'migrate_cleanup; exit 1' INT TERM
}

migrate_cleanup() {
	for _m in "$WORK"/mnt-*; do
		[ -d "$_m" ] && mountpoint -q "$_m" && umount "$_m"
	done
	while read -r _l; do
		losetup -d "$_l" 2> /dev/null
	done < "$WORK/loops"
}

# make_fs TYPE SIZE NAME: an image $WORK/NAME.img with a TYPE (ext4, xfs)
# filesystem on a loop device, mounted on $WORK/mnt-NAME; sets $img,
# $loop, $mnt.
make_fs() {
	img=$WORK/$3.img
	truncate -s "$2" "$img"
	case $1 in
	ext4) mkfs.ext4 -q -F -b 4096 "$img" || fail "mkfs.ext4";;
	xfs) mkfs.xfs -q -f "$img" || fail "mkfs.xfs";;
	*) fail "make_fs: $1?";;
	esac
	attach "$img"
	mnt=$WORK/mnt-$3
	mkdir -p "$mnt"
	mount "$loop" "$mnt" || fail "mount $loop"
}

# attach IMG: a loop device for IMG in $loop
attach() {
	loop=$(losetup -f --show "$1") || { echo "cannot set up a loop device"; exit 77; }
	echo "$loop" >> "$WORK/loops"
}

# remount DEV MNT [OPTS]
remount() {
	mount ${3:+-o $3} "$1" "$2" || fail "mount $1 on $2"
}

# sector7 IMG: the 512 bytes at sector 7, in hex
sector7() {
	dd if="$1" bs=512 skip=7 count=1 2>/dev/null | od -An -v -tx1 | tr -d ' \n'
}
