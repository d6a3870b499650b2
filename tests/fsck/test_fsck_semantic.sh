# Filesystem-level checks (doc/fsck.md §11) on the z2_semantic golden cases:
# each corruption planted through the original code (checksums valid) is
# reported by fsck -f -n under its problem name, fsck exits 4 (errors left),
# and the image is byte-identical afterwards. Then the repair: fsck -y
# exits 1, a second fsck -f -n exits 0, and nothing undamaged is lost (every
# inode is still there; inode keys change only for inodes the repair
# names, or lost+found; what extract got out of the damaged image is still
# there, the same). The clean golden images give no filesystem or
# allocation problem at all (false positives are bugs).
set -e
. "$(dirname "$0")/../lib.sh"

# check CASE PROBLEM... : every PROBLEM must be reported, nothing but them
# from the filesystem/allocation checks (4xx, 5xx).
check() {
	c=$1; shift
	img=$(golden_images "z2_semantic/$c")
	before=$(cksum < "$img")
	set +e
	"$BCACHEFS" fsck -f -n --json "$img" > "$WORK/$c.json" 2> "$WORK/$c.err"
	rc=$?
	set -e
	crashed $rc && { cat "$WORK/$c.err"; fail "$c: crashed ($rc)"; }
	[ "$before" = "$(cksum < "$img")" ] || fail "$c: fsck -f -n changed the image"
	[ $rc = 4 ] || { cat "$WORK/$c.err"; fail "$c: exit $rc, want 4"; }
	got=$(sed -n 's/^ *"name": "\(.*\)",$/\1/p' "$WORK/$c.json" | sort | tr '\n' ' ')
	want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	[ "$got" = "$want" ] || { cat "$WORK/$c.err"; fail "$c: problems '$got', want '$want'"; }
	echo "ok $c: $got"
	repair "$c" "$img"
	rm -f "$img"
}

# repair CASE IMG: on a copy of IMG, fsck -y, fsck -f -n, nothing lost. The
# paths in $changed (relative, space-separated) may differ after the repair.
repair() {
	c=$1 r=$WORK/$c.repair
	rm -rf "$r"; mkdir -p "$r"
	cp --sparse=always "$2" "$r/img"
	repair_snapshot "$r" "$r/img"
	set +e
	"$BCACHEFS" fsck -y "$r/img" > "$r/y.out" 2>&1
	rc=$?
	set -e
	crashed $rc && { cat "$r/y.out"; fail "$c: fsck -y crashed ($rc)"; }
	[ $rc = 1 ] || { cat "$r/y.out"; fail "$c: fsck -y exit $rc, want 1"; }
	set +e
	"$BCACHEFS" fsck -f -n "$r/img" > "$r/n.out" 2>&1
	rc=$?
	set -e
	[ $rc = 0 ] || { cat "$r/y.out" "$r/n.out"; fail "$c: fsck -f -n after fsck -y: exit $rc, want 0"; }
	"$BCACHEFS" extract "$r/img" / "$r/after" > "$r/extract.out" 2>&1 ||
		{ cat "$r/extract.out"; fail "$c: extract after the repair failed"; }

	repair_kept "$c" "$r" "$r/img" $changed
	echo "ok $c: repaired ($(tail -n 1 "$r/y.out" | sed 's/^.*: //'))"
	rm -rf "$r"
}
changed=""

check c01_dirent_missing_inode	dirent_missing_inode
check c04_nlink_too_high	inode_nlink_wrong
check c07_dir_nlink_wrong	inode_nlink_wrong
# d2's dirent removed: d2 is the top of what is cut off (its subdirectories
# come back with it), and the root's nlink still counts it.
check c10_unreachable_dir	dir_unreachable inode_nlink_wrong
check c13_isectors_wrong	inode_i_sectors_wrong
check c16_dirent_wrong_hash_after hash_wrong_offset
# the root keeps its dirents: only its mode is wrong (no cascade of
# "dirent in non directory" / unreachable directories)
check c19_root_not_dir		root_not_dir
check c22_lostfound_dirent_missing lostfound_missing dir_unreachable inode_nlink_wrong
check c25_dirent_dot		dirent_dot
check c30_dirent_own_dir	dirent_self
# I_SIZE_DIRTY with i_size cut to 8 KiB: the repair keeps the 64 KiB of data
changed="d1/a d2/a_link hl2"	# one inode, three links
check c33_isize_dirty_flag	inode_i_size_dirty
check c35_inode_flags_hash_bits	hash_wrong_offset inode_i_size_dirty
changed=""

# the message carries what the original printed
grep -q "ghost -> 99999" "$WORK/c01_dirent_missing_inode.err" || fail "c01: no key text"
grep -q "inode 4104 has wrong i_nlink (type 8 i_nlink 6, should be 1)" "$WORK/c04_nlink_too_high.err" ||
	fail "c04: message"
grep -q "unreachable directory found (inum 4100)" "$WORK/c10_unreachable_dir.err" || fail "c10: message"
grep -q "i_sectors wrong: got 7, should be 40" "$WORK/c13_isectors_wrong.err" || fail "c13: message"
grep -q "hashed to 4114661240412547802" "$WORK/c16_dirent_wrong_hash_after.err" || fail "c16: message"

# after the original fsck -y, c19 still has a dirent at a wrong offset
# (the original's final fsck -f -n saw it too); the others are clean
img=$(golden_images z2_semantic/c19_root_not_dir dev0.repaired2)
set +e
"$BCACHEFS" fsck -f -n "$img" > "$WORK/out" 2>&1
rc=$?
set -e
[ $rc = 4 ] && grep -q "hl2 -> 4105" "$WORK/out" || { cat "$WORK/out"; fail "c19 repaired2: exit $rc"; }
rm -f "$img"
for c in c01_dirent_missing_inode c10_unreachable_dir c22_lostfound_dirent_missing c25_dirent_dot; do
	img=$(golden_images "z2_semantic/$c" dev0.repaired)
	"$BCACHEFS" fsck -f -n "$img" > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "$c repaired: exit $?"; }
	rm -f "$img"
done

# no filesystem/allocation problem on the clean golden images
clean="a_default_1G e1_2dev g2_dirty_journal g3_merges_and_stale"
[ -n "$TEST_QUICK" ] || clean="$clean d1_migrate_ext4_1G g1_overwrites"
for c in $clean; do
	imgs=$(golden_images "$c")
	set +e
	"$BCACHEFS" fsck -f -n --json $imgs > "$WORK/$c.json" 2> "$WORK/$c.err"
	rc=$?
	set -e
	crashed $rc && fail "$c: crashed ($rc)"
	if grep -q '"id": [45][0-9][0-9],' "$WORK/$c.json"; then
		cat "$WORK/$c.err"
		fail "$c: filesystem/allocation problems on a clean image"
	fi
	echo "ok $c"
	rm -rf "$WORK/$c"
done
