#!/bin/sh
# The main job on a demo image: show-super, list and fsck a filesystem.
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
echo "== bcachefs fsck -n $img"
"$bin" fsck -n "$img"
echo "demo: fsck exit $?"
