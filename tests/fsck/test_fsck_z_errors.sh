# The golden corrupted images: fsck -n reports each problem with the
# fsck(8) exit code, names where it is, and leaves the image untouched.
set -e
. "$(dirname "$0")/../lib.sh"
check() {	# check IMAGE WANT_RC PATTERN
	img=$(golden_images z_errors "$1")
	# any write changes the times (hashing each 1 GiB image took a minute)
	before=$(stat -c '%y %z %s' "$img")
	set +e
	"$BCACHEFS" fsck -n "$img" > "$WORK/out" 2>&1
	rc=$?
	set -e
	cat "$WORK/out"
	[ "$before" = "$(stat -c '%y %z %s' "$img")" ] || fail "$1: image changed"
	[ $rc = "$2" ] || fail "$1: exit $rc, want $2"
	grep -q -- "$3" "$WORK/out" || fail "$1: no message matching '$3'"
	rm -f "$img"
}
check corrupt-both-sb 8 "no valid superblock"
check corrupt-primary-sb 4 "using the backup at sector"
check corrupt-last-journal-entry 4 "entry seq 8: checksum bad"
check corrupt-inode-btree-node 4 "sector 41984.*invalid checksum"

# the compressed-data images of g4 are clean
for n in lz4 zstd; do
	img=$(golden_images g4_compressed_encrypted_data "$n")
	"$BCACHEFS" fsck -n "$img" > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "g4 $n: fsck -n exited $?"; }
	rm -f "$img"
done
