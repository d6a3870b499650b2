#!/bin/sh
# bcachefs mount -o ro (FUSE, read-only) of golden images: the migrated ext4 tree
# (d1) compared file by file with its manifest (content, size, mode, owner,
# times, link targets, device numbers, xattrs, hard links), a device node
# and a symlink by stat, readdir over several buffers; g4 lz4 and g2 (dirty
# journal) contents; c1 with its passphrase; e1 as DEV:DEV (source, size,
# a member found mounted); a wrong passphrase, a bad -o max_read=
# and a second mount refused with nothing mounted; unmount by fusermount3
# -u (exit 0), by SIGTERM (exit 0) and of a daemonized mount.
. "$TESTDIR/../lib.sh"
fuse_mount_setup

cmp_tree() {	# NAME MANIFEST [tree_compare options]
	_n=$1 _m=$2
	shift 2
	python3 "$TESTDIR/../extract/tree_compare.py" "$@" "$_m" "$mnt" > "$WORK/$_n.cmp" 2>&1 ||
		{ cat "$WORK/$_n.cmp"; fail "$_n: tree differs"; }
}

# ---- d1: the migrated ext4 tree ----
d1=$(golden_images d1_migrate_ext4_1G)
manifest=$GOLDEN/d1_migrate_ext4_1G/out/tree-manifest.ext4.txt
if [ -n "$TEST_QUICK" ]; then
	# reading the 1 GiB hole through FUSE is slow under the sanitizers
	grep -v '^sparse_1G_hole	' "$manifest" > "$WORK/d1.manifest"
	manifest=$WORK/d1.manifest
	quick_opts="--allow-extra sparse_1G_hole"
fi
mount_fg d1 "$d1" -o ro
# the source is the device's real path (the mounted-device check finds it)
src=$(awk -v m="$mnt" '$2 == m { print $1 }' /proc/mounts)
[ "$src" = "$(realpath "$d1")" ] || fail "d1: mount source is '$src'"
grep -q " $mnt fuse.bcachefs ro," /proc/mounts || fail "d1: not mounted read-only"
cmp_tree d1 "$manifest" --allow-extra old_migrated_filesystem --ignore-mtime . $quick_opts
[ "$(stat -c %i "$mnt/hl_src")" = "$(stat -c %i "$mnt/dir_a/hl_2")" ] || fail "d1: hard links are not one inode"
[ "$(stat -c '%F %Hr,%Lr %a %u:%g' "$mnt/blockdev_7_200")" = "block special file 7,200 600 0:0" ] ||
	fail "d1: stat of blockdev_7_200: $(stat -c '%F %Hr,%Lr %a %u:%g' "$mnt/blockdev_7_200")"
[ "$(stat -c '%F %s %a' "$mnt/link_long")" = "symbolic link 209 777" ] ||
	fail "d1: stat of link_long: $(stat -c '%F %s %a' "$mnt/link_long")"
[ "$(readlink "$mnt/link_rel")" = one_byte ] || fail "d1: link_rel target"
# "many" needs several readdir calls: every name once, "." and ".." first
ls -f "$mnt/many" > "$WORK/many.ls"
[ "$(head -n 2 "$WORK/many.ls" | tr '\n' ' ')" = ". .. " ] || fail "d1: readdir does not start with . and .."
want=$(grep -c '^many/[^/]*	' "$GOLDEN/d1_migrate_ext4_1G/out/tree-manifest.ext4.txt")
[ "$(sed 1,2d "$WORK/many.ls" | sort -u | wc -l)" = "$want" ] || fail "d1: readdir of many: not $want distinct names"
[ "$(wc -l < "$WORK/many.ls")" = $((want + 2)) ] || fail "d1: readdir of many repeats names"
# errors of a read-only filesystem
touch "$mnt/newfile" 2> /dev/null && fail "d1: created a file"
[ -e "$mnt/no such file" ] && fail "d1: a missing name exists"
df -P "$mnt" > /dev/null || fail "d1: statfs failed"
# a second mount of the same device is refused
mkdir -p "$WORK/mnt-twice"
timeout 60 "$BCACHEFS" mount -f -o ro "$d1" "$WORK/mnt-twice" > "$WORK/twice.log" 2>&1 < /dev/null
rc=$?
cat "$WORK/twice.log"
[ $rc = 1 ] || fail "second mount: exit $rc"
grep -q "already mounted" "$WORK/twice.log" || fail "second mount: no clear message"
unmount_fg d1

# ---- refused before mounting: wrong passphrase ----
mkdir -p "$WORK/mnt-refused"
c1=$(golden_images c1_encrypted)
printf 'wrong-pass\n' > "$WORK/badpass"
# a key left in the keyring by someone else's `unlock` wins over the passphrase
uuid=$("$BCACHEFS" show-super "$c1" | awk '/^External UUID:/ { print $3 }')
if command -v keyctl > /dev/null && { keyctl search @s user "bcachefs:$uuid" || keyctl search @u user "bcachefs:$uuid"; } > /dev/null 2>&1; then
	echo "note: the key of c1 is in the keyring: wrong-passphrase check not run"
else
	timeout 60 "$BCACHEFS" mount -f -o ro --passphrase-file "$WORK/badpass" "$c1" "$WORK/mnt-refused" > "$WORK/bad.log" 2>&1 < /dev/null
	rc=$?
	cat "$WORK/bad.log"
	crashed $rc && fail "wrong passphrase: crashed or hung (rc=$rc)"
	[ $rc = 1 ] || fail "wrong passphrase: exit $rc"
	grep -qi "passphrase" "$WORK/bad.log" || fail "wrong passphrase: no clear message"
	is_mounted "$WORK/mnt-refused" && fail "wrong passphrase: mounted anyway"
fi
"$BCACHEFS" mount > /dev/null 2>&1
[ $? = 16 ] || fail "usage error exit code"
for bad in max_read=0 max_read=12x max_read=99999999999; do
	timeout 60 "$BCACHEFS" mount -f -o $bad "$d1" "$WORK/mnt-refused" > "$WORK/opt.log" 2>&1 < /dev/null
	rc=$?
	[ $rc = 16 ] || fail "-o $bad: exit $rc, want 16"
	grep -q "^bcachefs mount: -o $bad: not a size in bytes" "$WORK/opt.log" || fail "-o $bad: $(cat "$WORK/opt.log")"
	is_mounted "$WORK/mnt-refused" && fail "-o $bad: mounted anyway"
done

# ---- c1: encrypted, with the passphrase ----
mount_fg c1 "$c1" -o ro $(golden_pass_opts c1_encrypted)
[ "$(ls -A "$mnt")" = "lost+found" ] || fail "c1: unexpected contents: $(ls -A "$mnt")"
[ "$(stat -c %F "$mnt/lost+found")" = directory ] || fail "c1: lost+found is not a directory"
unmount_fg c1

# ---- e1: two devices, DEV:DEV; the source names both ----
set -- $(golden_images e1_2dev)
mount_fg e1 "$1:$2" -o ro
src=$(awk -v m="$mnt" '$2 == m { print $1 }' /proc/mounts)
[ "$src" = "$(realpath "$1"):$(realpath "$2")" ] || fail "e1: mount source is '$src'"
[ "$(ls -A "$mnt")" = "lost+found" ] || fail "e1: unexpected contents: $(ls -A "$mnt")"
# both members count: about 2 GiB
size_k=$(df -P -k "$mnt" | awk 'NR == 2 { print $2 }')
[ "$size_k" -gt 1900000 ] && [ "$size_k" -le 2097152 ] || fail "e1: statfs size ${size_k}K"
# the second member alone is found mounted (the source is split on ':')
timeout 60 "$BCACHEFS" mount -f -o ro "$2" "$WORK/mnt-twice" > "$WORK/twice2.log" 2>&1 < /dev/null
[ $? = 1 ] && grep -q "already mounted" "$WORK/twice2.log" || fail "e1: second member mounted again"
unmount_fg e1

# ---- g4 lz4 (compressed extents) and g2 (keys still in the journal) ----
mount_fg lz4 "$(golden_images g4_compressed_encrypted_data lz4)" -o ro
cmp_tree lz4 "$GOLDEN/g4_compressed_encrypted_data/out/lz4-tree-manifest.txt" --content-only --allow-extra lost+found
# SIGTERM unmounts and the process ends with 0
kill -TERM $pid
wait $pid
rc=$?
cat "$WORK/lz4.log"
[ $rc = 0 ] || fail "SIGTERM: exit $rc"
is_mounted "$mnt" && fail "SIGTERM: still mounted"

if [ -z "$TEST_QUICK" ]; then
	mount_fg g2 "$(golden_images g2_dirty_journal)" -o ro
	cmp_tree g2 "$GOLDEN/g2_dirty_journal/out/tree-manifest.txt" --content-only --allow-extra lost+found
	unmount_fg g2
fi

# ---- daemonized: returns once mounted, unmounts with fusermount3 -u ----
mnt=$WORK/mnt-daemon
mkdir -p "$mnt"
timeout 60 "$BCACHEFS" mount -o ro "$(golden_images g4_compressed_encrypted_data lz4)" "$mnt" > "$WORK/daemon.log" 2>&1 < /dev/null
rc=$?
cat "$WORK/daemon.log"
[ $rc = 0 ] || fail "daemon: exit $rc"
is_mounted "$mnt" || fail "daemon: not mounted when the command returned"
[ "$(stat -c %s "$mnt/d/mixed")" = 2457600 ] || fail "daemon: d/mixed size"
fusermount3 -u "$mnt" || fail "daemon: fusermount3 -u failed"
is_mounted "$mnt" && fail "daemon: still mounted"
exit 0
