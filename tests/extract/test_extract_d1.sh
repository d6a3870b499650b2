#!/bin/sh
# extract the whole migrated ext4 filesystem (d1) and compare every file with
# the ext4 tree manifest: content (sha256), size, mode, owner, mtime, link
# targets, device numbers, xattrs, hard links and holes.
. "$TESTDIR/../lib.sh"
command -v python3 >/dev/null || { echo "python3 needed"; exit 77; }
img=$(golden_images d1_migrate_ext4_1G)
out=$WORK/out
"$BCACHEFS" extract $img / "$out" > "$WORK/extract.log" 2>&1
rc=$?
cat "$WORK/extract.log"
crashed $rc && fail "extract crashed (rc=$rc)"
[ $rc = 0 ] || fail "extract failed (rc=$rc)"
# migrate adds old_migrated_filesystem to the root (and so changes its mtime)
python3 "$TESTDIR/tree_compare.py" --allow-extra old_migrated_filesystem --ignore-mtime . \
	"$GOLDEN/d1_migrate_ext4_1G/out/tree-manifest.ext4.txt" "$out" || fail "tree differs"
# hard links are links, not copies
[ "$(stat -c %i "$out/hl_src")" = "$(stat -c %i "$out/dir_a/hl_2")" ] || fail "hl_src and dir_a/hl_2 are not one inode"
# the 1 GiB sparse file takes almost no space
[ "$(stat -c %b "$out/sparse_1G_hole")" -lt 1024 ] || fail "sparse_1G_hole is not sparse"
exit 0
