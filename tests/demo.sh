#!/bin/sh
# The main job on a demo image: show-super, list and fsck a filesystem made
# by the 2018 tools; then the running filesystem: mount it read-write
# (FUSE), copy files in, fs usage, unmount, fsck again.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/bcachefs
img=${DEMO_IMG:-$top/demo.img}
rm -f "$img"
zstd -qd --sparse "$top/tests/golden/a_default_1G/dev0.img.zst" -o "$img"
echo "== bcachefs show-super $img"
"$bin" show-super "$img"
echo "== bcachefs list -b inodes $img"
"$bin" list -b inodes "$img"
echo "== bcachefs fsck -f -n $img"
"$bin" fsck -f -n "$img"
echo "demo: fsck exit $?"

if [ ! -c /dev/fuse ] || ! command -v fusermount3 > /dev/null; then
	echo "demo: no FUSE here: the mount part is skipped"
	exit 0
fi
mnt=$(mktemp -d /tmp/bcachefs-demo.XXXXXX)
echo "== bcachefs mount $img $mnt"
"$bin" mount "$img" "$mnt"
trap 'fusermount3 -u "$mnt" 2>/dev/null; rmdir "$mnt"' EXIT
echo "== cp -a $top/libbcachefs $mnt/src"
cp -a "$top/libbcachefs" "$mnt/src"
ls "$mnt"
echo "== bcachefs fs usage -h $mnt"
"$bin" fs usage -h "$mnt"
echo "== umount $mnt"
# the mount process writes everything and marks the filesystem clean
# (fsck waits for it: umount returns before it is done)
umount "$mnt"
trap - EXIT
rmdir "$mnt"
echo "== bcachefs fsck -f -n $img"
"$bin" fsck -f -n "$img"
echo "demo: fsck exit $?"
