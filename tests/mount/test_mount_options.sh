#!/bin/sh
# The mount options of the 2018 kernel a user may type: the
# line migrate prints (-o sb=N) mounts the migrated filesystem; nochanges
# and norecovery mount read-only; compression=, data_checksum= and
# data_replicas= change what new data gets; fsck, fix_errors, errors= with an unknown action,
# norecovery without ro, the filesystem's other options and bad values are
# refused with the option's name and exit 16, mounting nothing.
. "$TESTDIR/../lib.sh"
fuse_mount_setup
B=$BCACHEFS
img=$WORK/o.img
truncate -s 128M "$img"
"$B" format -q "$img" > "$WORK/format.log" 2>&1 || { cat "$WORK/format.log"; fail "format"; }

refused() {	# refused NAME OPTIONS PATTERN
	mkdir -p "$WORK/mnt-$1"
	"$B" mount -f -o "$2" "$img" "$WORK/mnt-$1" > "$WORK/$1.out" 2>&1 < /dev/null
	_rc=$?
	[ $_rc = 16 ] || { cat "$WORK/$1.out"; is_mounted "$WORK/mnt-$1" && fusermount3 -u "$WORK/mnt-$1"; fail "$1: -o $2 exited $_rc, not 16"; }
	grep -q -e "$3" "$WORK/$1.out" || { cat "$WORK/$1.out"; fail "$1: no '$3' in the message"; }
	[ "$(wc -l < "$WORK/$1.out")" -le 2 ] || { cat "$WORK/$1.out"; fail "$1: more than the message and the hint"; }
	is_mounted "$WORK/mnt-$1" && fail "$1: mounted"
	true
}
refused fsck fsck "-o fsck:.*bcachefs fsck"
refused fix fix_errors "-o fix_errors:.*fsck -y"
refused errx errors=sometimes "-o errors=sometimes: not one of continue, remount-ro, panic"
refused norec norecovery "-o norecovery:.*-o ro"
refused bgc background_compression=lz4 "-o background_compression=lz4:.*format --background_compression"
refused target foreground_target=ssd "-o foreground_target=ssd"
refused compr compression=bzip2 "-o compression=bzip2: not one of none, lz4, gzip, zstd"
refused repl data_replicas=9 "-o data_replicas=9"
refused sbx sb=eight "-o sb=eight: not a sector number"
refused sbn sb=999 "-o sb=999:.*no superblock at that sector"

# compression= and data_checksum= for new data
mount_fg c "$img" -o compression=gzip,data_checksum=crc64,errors=remount-ro
python3 -c '
import sys
with open(sys.argv[1], "w") as f:
    for i in range(100000):
        f.write("the same line, number %06d, again\n" % i)' "$mnt/text" || fail "write"
unmount_fg c
"$B" list -b extents "$img" > "$WORK/extents.txt" 2>&1 || fail "list"
grep -q " compress 2 " "$WORK/extents.txt" || { head -5 "$WORK/extents.txt"; fail "compression=gzip: no gzip extent (type 2)"; }
grep -q " csum 6 " "$WORK/extents.txt" || { head -5 "$WORK/extents.txt"; fail "data_checksum=crc64: no crc64 extent (type 6)"; }

# nochanges, norecovery with ro: read-only mounts that read the files
mount_fg nc "$img" -o nochanges
[ "$(wc -c < "$mnt/text")" -gt 1000000 ] || fail "nochanges: the file"
touch "$mnt/new" 2> /dev/null && fail "nochanges took a write"
unmount_fg nc
mount_fg nr "$img" -o ro,norecovery,verbose,degraded
[ -f "$mnt/text" ] || fail "norecovery: the file"
unmount_fg nr

# the line migrate prints mounts the migrated filesystem
if [ "$(id -u)" = 0 ] && command -v mkfs.ext4 > /dev/null && [ -e /dev/loop-control ]; then
	. "$TESTDIR/../migrate/migrate_lib.sh"
	migrate_setup mkfs.ext4
	make_fs ext4 256M mig
	printf 'migrated file\n' > "$mnt/hello"
	sync
	"$B" migrate -f "$mnt" > "$WORK/migrate.out" 2>&1 || { cat "$WORK/migrate.out"; fail "migrate"; }
	line=$(sed -n 's/^ *mount -t bcachefs -o \(sb=[0-9]*\) \([^ ]*\) dir$/\1 \2/p' "$WORK/migrate.out")
	[ -n "$line" ] || { cat "$WORK/migrate.out"; fail "no mount line in migrate's output"; }
	umount "$mnt"
	set -- $line
	mount_fg migrated "$2" -o "$1,ro"
	[ "$(cat "$mnt/hello")" = "migrated file" ] || fail "the migrate-printed line: the file"
	unmount_fg migrated
fi
true
