#!/bin/sh
# Damaged superblocks: show-super must use the backup when the primary is
# bad, fail cleanly (exit 1, one clear message) when nothing is readable,
# and never crash or trip a sanitizer, whatever byte of the primary is hit.
set -e
. "$TESTDIR/../lib.sh"
: "${BCACHEFS:?}" "${GOLDEN:?}" "${WORK:?}"
fail=0

bad() { echo "FAIL: $*"; fail=1; }

# run show-super; sets rc, leaves out/err in $WORK/o, $WORK/e
run() {
	rc=0
	"$BCACHEFS" show-super "$@" > "$WORK/o" 2> "$WORK/e" || rc=$?
	if [ $rc -ge 2 ] || grep -q 'runtime error\|AddressSanitizer\|LeakSanitizer' "$WORK/e"; then
		bad "show-super $*: exit $rc"; sed 's/^/    /' "$WORK/e" | head -20
	fi
}

# --- the golden damaged images ---
unzst "$GOLDEN/z_errors/corrupt-primary-sb.img.zst" "$WORK/p.img"
run "$WORK/p.img"
[ $rc = 0 ] || bad "corrupt-primary-sb: exit $rc"
grep -q 'superblock at sector 8: bad checksum.*using the backup at sector 136' "$WORK/e" ||
	bad "corrupt-primary-sb: no backup message: $(cat "$WORK/e")"
sed -e '1d' -e '$d' -e '/^bcachefs: /d' "$GOLDEN/z_errors/out/52-show-super-corrupt-primary-sb.txt" |
	grep -v '^    Last mount:' > "$WORK/want"
grep -v '^    Last mount:' "$WORK/o" > "$WORK/got"
# the empty line after a ctime() value is in both
cmp -s "$WORK/want" "$WORK/got" || { bad "corrupt-primary-sb: output differs"; diff "$WORK/want" "$WORK/got" | head; }

unzst "$GOLDEN/z_errors/corrupt-both-sb.img.zst" "$WORK/b.img"
run "$WORK/b.img"
[ $rc = 1 ] || bad "corrupt-both-sb: exit $rc, want 1"
[ -s "$WORK/o" ] && bad "corrupt-both-sb: printed something on stdout"
grep -q 'superblock at sector 8: bad checksum.*backup at sector 136: bad checksum.*no valid superblock' "$WORK/e" ||
	bad "corrupt-both-sb: message: $(cat "$WORK/e")"
rm -f "$WORK/p.img" "$WORK/b.img"

# --- files that are not filesystems ---
: > "$WORK/empty.img"
run "$WORK/empty.img"; [ $rc = 1 ] || bad "empty file: exit $rc"
grep -q 'empty.img' "$WORK/e" || bad "empty file: message does not name the file"
truncate -s 1M "$WORK/zero.img"
run "$WORK/zero.img"; [ $rc = 1 ] || bad "zeroed file: exit $rc"
grep -q 'no bcachefs superblock.*not a bcachefs filesystem' "$WORK/e" || bad "zeroed file: $(cat "$WORK/e")"
mkdir -p "$WORK/dir"
run "$WORK/dir"; [ $rc = 1 ] || bad "directory: exit $rc"
run "$WORK/does-not-exist"; [ $rc = 1 ] || bad "missing path: exit $rc"
grep -q 'does-not-exist' "$WORK/e" || bad "missing path: message does not name it"
rc=0; "$BCACHEFS" show-super > /dev/null 2>&1 || rc=$?
[ $rc = 16 ] || bad "no device: exit $rc, want 16"
rc=0; "$BCACHEFS" show-super -f nope "$WORK/zero.img" > /dev/null 2>&1 || rc=$?
[ $rc = 16 ] || bad "bad field name: exit $rc, want 16"

# --- truncated images ---
unzst "$GOLDEN/a_default_20M/dev0.img.zst" "$WORK/t.img"
for size in 0 3584 4096 4600 5000; do	# no sb / primary cut short, no backup
	cp "$WORK/t.img" "$WORK/tt.img"
	truncate -s $size "$WORK/tt.img"
	run "$WORK/tt.img"
	[ $rc = 1 ] || bad "truncated to $size bytes: exit $rc"
done
truncate -s 70000 "$WORK/tt.img"	# primary complete, backup cut short: fine
cp "$WORK/t.img" "$WORK/tt.img"; truncate -s 70000 "$WORK/tt.img"
run "$WORK/tt.img"
[ $rc = 0 ] || bad "truncated to 70000 bytes: exit $rc"
rm -f "$WORK/tt.img"

# --- a primary claiming a superblock of 1 GiB (u64s 0x07ffffa2), in a layout that reserves
# 1 GiB per copy (sb_max_size_bits 21), on an image big enough to hold it:
# refused at once as bigger than any superblock can be (4 MiB), and the
# backup used. It was allocated and read whole (1 GiB of memory, seconds;
# found by fuzz_image). u64s is at byte 124, sb_max_size_bits at 257.
unzst "$GOLDEN/a_default_20M/dev0.img.zst" "$WORK/big.img"
truncate -s 1100M "$WORK/big.img"
printf '\242\377\377\007' | dd of="$WORK/big.img" bs=1 seek=$((4096 + 124)) conv=notrunc 2>/dev/null
printf '\025' | dd of="$WORK/big.img" bs=1 seek=$((4096 + 257)) conv=notrunc 2>/dev/null
run "$WORK/big.img"
[ $rc = 0 ] || bad "1 GiB superblock: exit $rc"
grep -q 'superblock at sector 8: too big: 1073741824 bytes (u64s 134217634), more than any superblock can be.*using the backup at sector 136' "$WORK/e" ||
	bad "1 GiB superblock: message: $(cat "$WORK/e")"
rm -f "$WORK/big.img"

# --- bytes of the first 1024 of the primary ---
# Every 5th byte plus the sizes, layout and first field header, end to end
# (a run per byte; the unit test test_super flips all 1024 in-process, and
# fuzzes copies whose checksum was fixed up).
img=$WORK/t.img
size=$(sed -n 's/^Superblock size:\t*//p' "$GOLDEN/a_default_20M/out/show-super.final.dev0.txt")
[ "$size" = 1008 ] || bad "golden superblock size $size"
# the original bytes, read once; flipping and restoring is one dd each
vals=$(od -An -tu1 -v -j 4096 -N 1024 "$img")
put() {	# put byte value $2 at offset $1
	printf "\\$(printf %o "$2")" | dd of="$img" bs=1 seek="$1" conv=notrunc 2>/dev/null
}
n=0 backups=0 want=0
off=0
for v in $vals; do
	case $off in
	12[4-7]|24[0-9]|25[0-9]|26[0-3]|75[2-9]|1007|1008) ;;
	*) [ $((off % 5)) = 0 ] || { off=$((off + 1)); continue; } ;;
	esac
	[ $off -lt "$size" ] && want=$((want + 1))
	put $((4096 + off)) $((v ^ 255))
	run "$img"
	if [ $off -lt "$size" ]; then
		# covered by the checksum (or the checksum itself): the backup is used
		if [ $rc != 0 ] || ! grep -q 'using the backup at sector 136' "$WORK/e"; then
			bad "byte $off flipped: exit $rc, $(cat "$WORK/e")"
		else
			backups=$((backups + 1))
		fi
	elif [ $rc != 0 ] || [ -s "$WORK/e" ]; then
		bad "byte $off (past the superblock) flipped: exit $rc"
	fi
	put $((4096 + off)) "$v"
	n=$((n + 1))
	off=$((off + 1))
done
echo "flipped $n bytes, backup used $backups times"
[ $n -ge 200 ] && [ $backups = $want ] || bad "flipped $n, backups $backups, want $want"
exit $fail
