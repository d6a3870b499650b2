#!/bin/sh
# list_journal on the golden images: the replay range, every jset (-a)
# against the dumps of the 2018 corpus, encryption, two devices, a corrupt
# last entry, and single-byte corruption of journal entries (no crash, no
# sanitizer report, always a clean exit status); damaged entries the replay
# does not use (a bad seq before valid entries of its bucket, a bad last_seq
# before the replay window) are not reported as problems.
set -e
. "$TESTDIR/../lib.sh"

fail() { echo "FAIL: $*"; exit 1; }
img() { unzst "$GOLDEN/$1" "$WORK/$2"; }
# Every run must end with a status below 128 and no sanitizer report.
run() {
	set +e
	"$BCACHEFS" list_journal "$@" > "$WORK/out" 2> "$WORK/err"
	rc=$?
	set -e
	[ $rc -lt 128 ] || fail "list_journal $* died (status $rc): $(tail -n 5 "$WORK/err")"
	if grep -q -e 'AddressSanitizer' -e 'runtime error' "$WORK/err"; then
		fail "list_journal $*: sanitizer report: $(head -n 20 "$WORK/err")"
	fi
}
expect_rc() { [ "$rc" = "$1" ] || fail "$2: status $rc, expected $1; stderr: $(head -n 5 "$WORK/err")"; }
expect_out() { grep -q -e "$1" "$WORK/out" || fail "$2: no line '$1' in stdout: $(head -n 5 "$WORK/out")"; }

# ---- a_default_1G: newest entry only by default ----
img a_default_1G/dev0.img.zst a.img
run "$WORK/a.img"
expect_rc 0 "a_default_1G"
expect_out '^journal read done, 0 keys in 1 entries, seq 8$' "a_default_1G"
[ "$(grep -c '^dev ' "$WORK/out")" = 1 ] || fail "a_default_1G: one entry expected"
expect_out '^dev 0 bucket 4 sector 1056: jset .* seq 8 version 2 .* last_seq 8 ' "a_default_1G"
[ "$(grep -c '^      u64s 6 type 128 POS_MAX snap 0 len 0 ver 0: ptr: 0:' "$WORK/out")" = 3 ] ||
	fail "a_default_1G: three root pointers expected"
[ ! -s "$WORK/err" ] || fail "a_default_1G: unexpected messages: $(cat "$WORK/err")"

# ---- -a: every jset, headers and records as in the 2018 dump ----
for state in final init; do
	case $state in final) f=a.img;; init) img a_default_1G/dev0.init.img.zst ai.img; f=ai.img;; esac
	run -a "$WORK/$f"
	expect_rc 0 "-a a_default_1G $state"
	grep -v '^      ' "$WORK/out" > "$WORK/got.txt"
	sed -e 's/ data .*//' -e 's/^bucket/dev 0 bucket/' \
		"$GOLDEN/a_default_1G/out/journal-dump.$state.txt" > "$WORK/want.txt"
	diff "$WORK/want.txt" "$WORK/got.txt" || fail "-a a_default_1G $state differs from journal-dump.$state.txt"
done

# ---- JSON is valid and says the same ----
run --json "$WORK/a.img"
expect_rc 0 "--json"
if command -v python3 > /dev/null; then
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
assert d["seq"] == 8 and d["last_seq"] == 8 and d["nr_keys"] == 0, d
e = d["entries"]
assert len(e) == 1 and e[0]["sector"] == 1056 and len(e[0]["records"]) == 3, e
assert e[0]["records"][0]["type_name"] == "btree_root"' "$WORK/out" || fail "--json content"
fi

# ---- g2_dirty_journal: 896 keys only in the journal ----
img g2_dirty_journal/dev0.img.zst g2.img
run "$WORK/g2.img"
expect_rc 0 "g2_dirty_journal"
expect_out '^journal read done, 896 keys in 2 entries, seq 15$' "g2_dirty_journal"
[ "$(grep -c '^dev ' "$WORK/out")" = 2 ] || fail "g2: entries 14 and 15 expected"
# 896 keys + 4 root pointers in each of the 2 entries
[ "$(grep -c '^      u64s' "$WORK/out")" = 904 ] || fail "g2: 904 key lines expected"
# every jset, keys counted per btree and type, as the corpus' jsum.txt
run -a "$WORK/g2.img"
expect_rc 0 "-a g2"
awk -f "$TESTDIR/jsum.awk" "$WORK/out" > "$WORK/jsum.txt"
diff "$GOLDEN/g2_dirty_journal/out/jsum.txt" "$WORK/jsum.txt" || fail "-a g2 differs from jsum.txt"

# ---- e1_2dev: device 1's journal buckets are empty, that is normal ----
img e1_2dev/dev0.img.zst e0.img
img e1_2dev/dev1.img.zst e1.img
run "$WORK/e0.img" "$WORK/e1.img"
expect_rc 0 "e1_2dev"
expect_out '^journal read done, 0 keys in 1 entries, seq 9$' "e1_2dev"
[ ! -s "$WORK/err" ] || fail "e1_2dev: unexpected messages: $(cat "$WORK/err")"

# ---- b19_replicas2: every entry on both devices, kept once ----
img b19_replicas2/dev0.img.zst r0.img
img b19_replicas2/dev1.img.zst r1.img
run "$WORK/r0.img" "$WORK/r1.img"
expect_rc 0 "b19_replicas2"
expect_out '^journal read done, 0 keys in 1 entries, seq 8$' "b19_replicas2"
expect_out '^   copies on devs 0 1$' "b19_replicas2"
rm -f "$WORK/r0.img" "$WORK/r1.img" "$WORK/e0.img" "$WORK/e1.img"

# ---- c1_encrypted ----
img c1_encrypted/dev0.img.zst c.img
printf 'golden-pass\n' > "$WORK/pass"
run --passphrase-file "$WORK/pass" "$WORK/c.img"
expect_rc 0 "c1_encrypted"
expect_out '^journal read done, 0 keys in 1 entries, seq 8$' "c1_encrypted"
expect_out 'flags 0x4 (csum_type 4)' "c1_encrypted"
[ "$(grep -c 'POS_MAX snap 0 len 0 ver 0: ptr: 0:' "$WORK/out")" = 3 ] || fail "c1: roots not decrypted"
printf 'wrong-pass\n' > "$WORK/bad"
run --passphrase-file "$WORK/bad" "$WORK/c.img"
[ $rc != 0 ] || fail "c1_encrypted: a wrong passphrase was accepted"

# ---- the last entry corrupt: the previous one is used ----
img z_errors/corrupt-last-journal-entry.img.zst z.img
run "$WORK/z.img"
expect_rc 0 "corrupt last entry"
expect_out '^journal read done, 0 keys in 1 entries, seq 7$' "corrupt last entry"
grep -q 'sector 1056: entry seq 8: checksum bad.*skipped' "$WORK/err" ||
	fail "corrupt last entry: no message: $(cat "$WORK/err")"
run -a "$WORK/z.img"
expect_rc 0 "-a corrupt last entry"
expect_out 'sector 1056: .* seq 8 .* BAD (skipped)$' "-a corrupt last entry"

# ---- a filesystem never opened has an empty journal ----
img a_default_1G/dev0.fmt.img.zst f.img
run "$WORK/f.img"
expect_rc 0 "never initialized"
expect_out 'journal empty' "never initialized"

# ---- single-byte corruption, 200 times, seeded ----
# b07 has no metadata checksums, so flipped bytes reach the record and key
# checks; a_default_1G (crc32c) exercises the fallback to older entries.
img b07_csum_none/dev0.img.zst n.img
flip() {	# file offset value
	printf "\\$(printf %o "$3")" | dd of="$1" bs=1 seek="$2" conv=notrunc 2> /dev/null
}
byte_at() { dd if="$1" bs=1 skip="$2" count=1 2> /dev/null | od -An -tu1 | tr -d ' '; }
awk 'BEGIN { srand(20180517); for (i = 0; i < 200; i++) {
	r = int(rand() * 3)
	if (r == 0) { s = 1056; n = 224 } else if (r == 1) { s = 1032; n = 5128 } else { s = 1048; n = 224 }
	printf "%d %d %d %d\n", i % 2, s * 512 + 16 + int(rand() * (n - 16)), int(rand() * 256), i % 3 } }' \
	> "$WORK/flips"
while read -r which off val mode; do
	case $which in 0) f="$WORK/n.img";; *) f="$WORK/a.img";; esac
	old=$(byte_at "$f" "$off")
	flip "$f" "$off" "$val"
	case $mode in
	0) run "$f";;
	1) run -a "$f";;
	*) run --json -a "$f";;
	esac
	[ $rc = 0 ] || [ $rc = 1 ] || fail "offset $off value $val: status $rc"
	flip "$f" "$off" "$old"
done < "$WORK/flips"
# the images are intact again
run "$WORK/n.img"
expect_out '^journal read done, 0 keys in 1 entries, seq 8$' "b07 restored"

# A bad entry followed by valid ones in its bucket is older than them,
# whatever its damaged seq says: seq 5 (bucket 12, before 6 and 7) with a
# bit flipped high in its seq and a bad checksum is a superseded entry, not
# a torn tail past the newest (which fsck -y could never remove).
img a_default_20M/dev0.img.zst t.img
j5=$("$BCACHEFS" list_journal -a "$WORK/t.img" |
	sed -n 's/^dev 0 bucket [0-9]* sector \([0-9]*\): jset .* seq 5 .*/\1/p' | head -n 1)
[ -n "$j5" ] || fail "jset seq 5 not found"
printf '\100' | dd of="$WORK/t.img" bs=1 seek=$((j5 * 512 + 27)) conv=notrunc 2> /dev/null
run -a "$WORK/t.img"
expect_out 'seq 1073741829 .*BAD' "damaged seq 5 listed by -a"
set +e
"$BCACHEFS" fsck -f -n "$WORK/t.img" > "$WORK/fsck.out" 2>&1
rc=$?
set -e
[ $rc = 0 ] || fail "bad entry inside its bucket: fsck -f -n exit $rc, want 0: $(cat "$WORK/fsck.out")"

# A bogus last_seq (> seq, checksum fixed) in a superseded entry (seq 1,
# before the replay window) is not reported: no repair can make it go away
# (fsck -y said "fixing" and the next fsck -f -n found it again). In the
# entry the replay uses (the newest, seq 9) it is reported.
. "$TESTDIR/../lib.sh"
test_tool plant
img a_default_20M/dev0.img.zst j.img
jsector() {	# sector of the jset with seq $1
	"$BCACHEFS" list_journal -a "$WORK/j.img" |
		sed -n "s/^dev 0 bucket [0-9]* sector \([0-9]*\): jset .* seq $1 .*/\1/p" | head -n 1
}
j1=$(jsector 1) j9=$(jsector 9)
[ -n "$j1" ] && [ -n "$j9" ] || fail "jsets seq 1 and 9 not found"
printf '\000\000\000\005' | dd of="$WORK/j.img" bs=1 seek=$((j1 * 512 + 52)) conv=notrunc 2> /dev/null
"$TOOL" "$WORK/j.img" resum-jset $((j1 * 512)) || fail "resum-jset"
run "$WORK/j.img"
[ $rc = 0 ] || fail "superseded entry with a bad last_seq: status $rc"
grep -q 'last_seq' "$WORK/err" && fail "superseded entry reported: $(cat "$WORK/err")"
set +e
"$BCACHEFS" fsck -f -n "$WORK/j.img" > "$WORK/fsck.out" 2>&1
rc=$?
set -e
[ $rc = 0 ] || fail "fsck -f -n: exit $rc, want 0 (clean): $(cat "$WORK/fsck.out")"
printf '\000\000\000\005' | dd of="$WORK/j.img" bs=1 seek=$((j9 * 512 + 52)) conv=notrunc 2> /dev/null
"$TOOL" "$WORK/j.img" resum-jset $((j9 * 512)) || fail "resum-jset"
run "$WORK/j.img"
grep -q 'entry seq 9 has last_seq 360287970189639689 > seq, using last_seq = seq' "$WORK/err" ||
	fail "bad last_seq of the newest entry not reported: $(cat "$WORK/err")"

echo "list_journal: all checks passed"
