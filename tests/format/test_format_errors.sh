#!/bin/sh
# Bad input to format: every invalid option value, devices that are too
# small, missing or unwritable, existing filesystems without --force. Each
# must fail with a clear error on the first line of stderr (naming the
# option or device), the right exit status (16 usage error, 1 failure), and
# leave the device exactly as it was.
set -u
: "${BCACHEFS:?}" "${WORK:=$(mktemp -d)}"
cd "$WORK" || exit 1

fail=0 n=0

# A 64 MiB image with known non-zero content in its first 512 KiB (where a
# superblock would go), so any write shows.
mkimg() {	# name size
	rm -f "$1"
	truncate -s "$2" "$1"
	yes 'the quick brown fox jumps over the lazy dog' | head -c 524288 |
		dd of="$1" conv=notrunc status=none
}
# Any write changes the times; the first MiB (where superblocks go) is also
# hashed. (Hashing all 64 MiB twice per case dominated the test's time.)
sum() { echo "$(stat -c '%y %z %s' "$1") $(head -c 1048576 "$1" | sha256sum)"; }

# expect RC PATTERN DEV [ARGS...]: format ARGS (DEV is the image whose
# content must not change), check status and the first line of stderr.
expect() {
	want_rc=$1 pat=$2 dev=$3
	shift 3
	n=$((n + 1))
	before=$(sum "$dev")
	"$BCACHEFS" format "$@" < /dev/null > out 2> err
	rc=$?
	first=$(head -n 1 err)
	if [ "$rc" != "$want_rc" ]; then
		echo "FAIL format $*: exit $rc, want $want_rc"; sed 's/^/    /' err; fail=1
	elif ! printf '%s\n' "$first" | grep -qF -- "$pat"; then
		echo "FAIL format $*: first stderr line '$first' lacks '$pat'"; fail=1
	elif [ "$(sum "$dev")" != "$before" ]; then
		echo "FAIL format $*: $dev was changed"; fail=1
	elif [ -s out ]; then
		echo "FAIL format $*: printed on stdout:"; sed 's/^/    /' out; fail=1
	else
		echo "ok   [$rc] format $*: $first"
	fi
}

mkimg d.img 64M

# ---- option values: usage errors (16), naming the option ----
for a in 0 3k 1000 8k 32M abc 4kb 1.5k ''; do
	expect 16 "--block_size" d.img -f "--block_size=$a" d.img
done
expect 16 "-b" d.img -f -b 2k3 d.img
for a in 96k 100 2M 0 x; do
	expect 16 "--btree_node_size" d.img -f "--btree_node_size=$a" d.img
done
for a in 0 64M 1000 bad; do
	expect 16 "--bucket_size" d.img -f "--bucket_size=$a" d.img
done
expect 16 "--bucket_size" d.img -f --block_size=4k --bucket_size=6k d.img
expect 16 "--bucket_size" d.img -f --bucket_size=64k --btree_node_size=128k d.img
expect 16 "--btree_node_size" d.img -f --block_size=4k --btree_node_size=2k d.img
expect 16 "--fs_size" d.img -f --fs_size=abc d.img
expect 16 "--fs_size" d.img -f --fs_size=1G d.img
expect 16 "--metadata_checksum_type" d.img -f --metadata_checksum_type=xxhash d.img
expect 16 "--data_checksum_type" d.img -f --data_checksum_type= d.img
expect 16 "--compression_type" d.img -f --compression_type=lzo d.img
expect 16 "--background_compression_type" d.img -f --background_compression_type=LZ4 d.img
expect 16 "--str_hash" d.img -f --str_hash=md5 d.img
for a in 0 4 5 x -1 ''; do
	expect 16 "--replicas" d.img -f "--replicas=$a" d.img
done
expect 16 "--data_replicas" d.img -f --data_replicas=4 d.img
expect 16 "--metadata_replicas" d.img -f --metadata_replicas=0 d.img
expect 16 "--metadata_replicas_required" d.img -f --metadata_replicas_required=9 d.img
expect 16 "required replicas" d.img -f --data_replicas_required=2 d.img
for a in 3 4 5 -1 x; do
	expect 16 "--durability" d.img -f "--durability=$a" d.img
done
expect 16 "--error_action" d.img -f --error_action=ignore d.img
expect 16 "-e" d.img -f -e foo d.img
expect 16 "-U" d.img -f -U not-a-uuid d.img
expect 16 "--uuid: the nil uuid" d.img -f --uuid=00000000-0000-0000-0000-000000000000 d.img
expect 16 "-U: the nil uuid" d.img -f -U 00000000-0000-0000-0000-000000000000 d.img
expect 16 "--uuid" d.img -f --uuid=01234567-89ab-cdef-0123-456789abcdeg d.img
for a in foo '' journal, cached ,btree; do
	expect 16 "--data_allowed" d.img -f "--data_allowed=$a" d.img
done
for a in '' a..b .a abcdefghijklmnopqrstuvwxyz0123456789; do
	expect 16 "--group" d.img -f "--group=$a" d.img
done
expect 16 "-L" d.img -f -L abcdefghijklmnopqrstuvwxyz0123456789ABCD d.img
expect 16 "--gc_reserve_percent" d.img -f --gc_reserve_percent=4 d.img
expect 16 "--root_reserve_percent" d.img -f --root_reserve_percent=100 d.img
expect 16 "--foreground_target" d.img -f --foreground_target=nope d.img
expect 16 "--promote_target" d.img -f --group=ssd d.img --promote_target=hdd
expect 16 "--bogus" d.img -f --bogus d.img
expect 16 "--data" d.img -f --data=2 d.img
expect 16 "-x" d.img -f -x d.img
expect 16 "--label" d.img -f d.img --label
expect 16 "--discard" d.img -f d.img --discard
expect 16 "given twice" d.img -f d.img d.img
# the same device under other names: refused by identity before any write
ln -f d.img hard.img
ln -sf d.img soft.img
expect 16 "d.img and ./d.img are the same device" d.img -f d.img ./d.img
expect 16 "same device" d.img -f d.img "$WORK/d.img"
expect 16 "same device" d.img -f d.img hard.img
expect 16 "same device" d.img -f soft.img d.img
expect 16 "same device" d.img -f --fs_size=32M d.img --fs_size=32M "$PWD/soft.img"
rm -f hard.img soft.img
expect 16 "--no_passphrase" d.img -f --no_passphrase d.img
# configurations that cannot hold what they must (refused before writing)
expect 16 "no device can hold the journal: d.img has --durability=0" d.img -f --durability=0 d.img
expect 16 "no device can hold btree nodes: d.img has --data_allowed without btree" d.img -f --data_allowed=journal d.img
expect 16 "no device can hold file data" d.img -f --data_allowed=journal,btree d.img
expect 16 "2 metadata replicas wanted" d.img -f --replicas=2 d.img
expect 16 "2 data replicas wanted" d.img -f --data_replicas=2 d.img
expect 16 "3 metadata replicas wanted" d.img -f --metadata_replicas=3 --durability=2 d.img
expect 16 "device" d.img -f
expect 16 "device" d.img -f -- 

# ---- devices: failures (1), naming the device ----
mkimg small.img 2M
expect 1 "small.img" small.img -f small.img
expect 1 "small.img" small.img -f --block_size=512 --bucket_size=4k small.img
expect 1 "d.img" d.img -f --fs_size=1M d.img
expect 1 "d.img" d.img -f --bucket_size=1M --fs_size=32M d.img
expect 1 "d.img" d.img -f --bucket_size=128k d.img
expect 1 "d.img" d.img -f --btree_node_size=1M --fs_size=20M d.img
expect 1 "missing.img" d.img -f missing.img
expect 1 "missing.img" d.img -f d.img missing.img
mkdir -p dir.img
expect 1 "dir.img" d.img -f dir.img
expect 1 "/dev/null" d.img -f /dev/null

# unwritable: as root a read-only file is still writable; use fault
# injection to make the very first write fail instead
if [ "$(id -u)" != 0 ]; then
	mkimg ro.img 64M; chmod 444 ro.img
	expect 1 "ro.img" ro.img -f ro.img
fi
BCH_FAULT_WRITES=0 expect 1 "d.img" d.img -f d.img

# passphrases
n=$((n + 1))
before=$(sum d.img)
printf '\n' | "$BCACHEFS" format -f --encrypted d.img > out 2> err
rc=$?
if [ $rc != 1 ] || ! grep -q passphrase err || [ "$(sum d.img)" != "$before" ]; then
	echo "FAIL empty passphrase: exit $rc"; cat err; fail=1
else
	echo "ok   [1] empty passphrase: $(head -n 1 err)"
fi
expect 1 "passphrase" d.img -f --encrypted d.img
expect 1 "nonexistent" d.img -f --encrypted --passphrase_file=/nonexistent/pass d.img

# ---- existing content without --force, stdin not a terminal: refused ----
"$BCACHEFS" format -q d.img > /dev/null 2>&1 ||
	{ echo "FAIL: formatting d.img failed"; fail=1; }
expect 1 "bcachefs filesystem" d.img d.img
expect 1 "bcachefs filesystem" d.img -q d.img
if command -v mkfs.ext4 > /dev/null; then
	mkimg e.img 64M
	mkfs.ext4 -q -F -L extlabel e.img > /dev/null 2>&1
	expect 1 "an ext4 filesystem labelled 'extlabel'" e.img e.img
	# with --force it is formatted, and the ext4 signature is gone
	if "$BCACHEFS" format -q -f e.img > out 2> err && command -v blkid > /dev/null; then
		if blkid -p e.img 2>/dev/null | grep -q ext4; then
			echo "FAIL: ext4 signature left after format --force"; fail=1
		else
			echo "ok   format --force over ext4 removes its signature"
		fi
	fi
fi
# a DOS partition table alone (one partition, boot signature)
rm -f p.img; truncate -s 64M p.img
printf '\000\040\041\000\203\245\003\000\000\010\000\000\000\370\001\000' |
	dd of=p.img bs=1 seek=446 conv=notrunc status=none
printf '\125\252' | dd of=p.img bs=1 seek=510 conv=notrunc status=none
expect 1 "dos partition table" p.img p.img

# a successful format after all that: status 0
"$BCACHEFS" format -q -f d.img > out 2> err ||
	{ echo "FAIL: format -f d.img"; cat err; fail=1; }

echo "$n error cases"
exit $fail
