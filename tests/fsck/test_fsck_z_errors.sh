# The golden corrupted images: fsck -f -n reports each problem with the
# fsck(8) exit code, names where it is, and leaves the image untouched;
# fsck -y on a copy repairs it (exit 1) and fsck -f -n is then clean.
set -e
. "$(dirname "$0")/../lib.sh"
check() {	# check IMAGE WANT_RC PATTERN
	img=$(golden_images z_errors "$1")
	# any write changes the times (hashing each 1 GiB image took a minute)
	before=$(stat -c '%y %z %s' "$img")
	set +e
	"$BCACHEFS" fsck -f -n "$img" > "$WORK/out" 2>&1
	rc=$?
	set -e
	cat "$WORK/out"
	[ "$before" = "$(stat -c '%y %z %s' "$img")" ] || fail "$1: image changed"
	[ $rc = "$2" ] || fail "$1: exit $rc, want $2"
	grep -q -- "$3" "$WORK/out" || fail "$1: no message matching '$3'"
	[ -z "${4:-}" ] || repair "$1" "$img" "$4"
	rm -f "$img"
}
# repair NAME IMAGE WANT_N_RC: fsck -y on a copy fixes what it reports (exit
# 1), then fsck -f -n exits WANT_N_RC (0: clean)
repair() {
	cp --sparse=always "$2" "$WORK/copy.img"
	set +e
	"$BCACHEFS" fsck -y "$WORK/copy.img" > "$WORK/y.out" 2>&1
	rc=$?
	set -e
	cat "$WORK/y.out"
	crashed $rc && fail "$1: fsck -y crashed ($rc)"
	[ $rc = 1 ] || fail "$1: fsck -y exit $rc, want 1"
	grep -q "fixing" "$WORK/y.out" || fail "$1: fsck -y fixed nothing"
	set +e
	"$BCACHEFS" fsck -f -n "$WORK/copy.img" > "$WORK/n2.out" 2>&1
	rc=$?
	set -e
	cat "$WORK/n2.out"
	[ $rc = "$3" ] || fail "$1: fsck -f -n after fsck -y: exit $rc, want $3"
	rm -f "$WORK/copy.img"
}
check corrupt-both-sb 8 "no valid superblock"
check corrupt-primary-sb 4 "using the backup at sector" 0
# the torn last entry is superseded by the repair's checkpoint (a valid
# entry of its seq): its bytes stay in the bucket and are no problem then
check corrupt-last-journal-entry 4 "entry seq 8: checksum bad" 0
check corrupt-inode-btree-node 4 "sector 41984.*invalid checksum" 0

# the compressed-data images of g4 are clean
for n in lz4 zstd; do
	img=$(golden_images g4_compressed_encrypted_data "$n")
	"$BCACHEFS" fsck -f -n "$img" > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "g4 $n: fsck -f -n exited $?"; }
	rm -f "$img"
done
