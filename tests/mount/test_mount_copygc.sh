#!/bin/sh
# The copying GC: on a 16 MiB image (1024 buckets of 16 KiB,
# the proportions of a 64 MiB or 1 GiB one at a fraction of the time),
# 4 KiB files written until ENOSPC, a random half deleted (seeded), the
# space refilled, three times (refill.py): each refill must take at least
# 85% of the space the deletes freed (without copygc the first takes about
# nothing), every file left reads back as written, `fs usage` (text and
# --json) shows what copygc did, the --verbose log has its passes,
# fsck -f -n is clean after the unmount, and the freed inode numbers were
# taken again (few generation keys left). Then a SIGKILL of the mount while
# copygc moves data (slowed down with BCH_COPYGC_THROTTLE_US, the
# filesystem prepared with BCH_COPYGC=0) loses nothing: every file is
# byte-exact against the manifest taken before, and fsck is clean.
#
# Knobs: COPYGC_SIZE (image size, default 16M), COPYGC_CYCLES (default 3;
# 1 with TEST_QUICK, the sanitizer runs), COPYGC_MIN (percent each refill
# must take, default 85).
. "$TESTDIR/../lib.sh"
fuse_mount_setup
size=${COPYGC_SIZE:-16M}
if [ -n "${TEST_QUICK:-}" ]; then
	cycles=${COPYGC_CYCLES:-1}
else
	cycles=${COPYGC_CYCLES:-3}
fi
min=${COPYGC_MIN:-85}
REFILL=$TESTDIR/refill.py

manifest() {	# DIR OUT
	(cd "$1" && find . -type f ! -path './lost+found/*' -print0 | sort -z | xargs -0 -r sha256sum) > "$2"
}

# ---- fill, delete half, refill ----
truncate -s "$size" a.img
"$BCACHEFS" format -q a.img > fmt.out 2>&1 || { cat fmt.out; fail "format"; }
mount_fg a a.img -v
python3 "$REFILL" "$mnt" --cycles "$cycles" --seed 21 --min "$min" --json refill.json > refill.out 2>&1
rc=$?
cat refill.out
[ $rc = 0 ] || fail "the refills took too little of the freed space, or a file is wrong"
"$BCACHEFS" fs usage "$mnt" > usage.txt 2>&1 || { cat usage.txt; fail "fs usage"; }
"$BCACHEFS" fs usage --json "$mnt" > usage.json 2>&1 || { cat usage.json; fail "fs usage --json"; }
grep -A5 "Copying GC since mounted" usage.txt || fail "fs usage: no copygc section"
python3 - usage.json <<'PY' || fail "fs usage --json: copygc did nothing"
import json, sys
g = json.load(open(sys.argv[1]))["copygc"]
print(g)
assert g["buckets_emptied"] > 0 and g["bytes_moved"] > 0 and g["extents_moved"] > 0, g
assert g["extents_not_moved"] == 0, g
PY
unmount_fg a > unmount.out
grep -q "copygc: .* buckets chosen" a.log || { cat a.log; fail "the --verbose log has no copygc pass"; }
grep -q "^copygc: [1-9][0-9]* passes" a.log || { cat a.log; fail "the --verbose log has no copygc summary"; }
"$BCACHEFS" fsck -f -n a.img > fsck1.out 2>&1 || { cat fsck1.out; fail "fsck -f -n after the refills"; }
# the refills took the inode numbers the deletes freed: generation keys
# (type 130) do not pile up (one per file deleted, half the fill a cycle)
filled=$(sed -n 's/^fill: \([0-9]*\) files.*/\1/p' refill.out)
gens=$("$BCACHEFS" list -b inodes a.img | grep -c " type 130 ")
echo "fill: $filled files; generation keys left: $gens"
[ "$gens" -le $((filled / 8)) ] || fail "$gens generation keys after the refills of $filled files"

# ---- SIGKILL while copygc moves data ----
# (gc_reserve_percent 20: the half-emptied filesystem is well below the
# threshold whatever the reserve of the moment, so copygc starts at mount)
truncate -s 0 b.img
truncate -s "$size" b.img
"$BCACHEFS" format -q --gc_reserve_percent=20 b.img > fmt.out 2>&1 || { cat fmt.out; fail "format"; }
BCH_COPYGC=0 mount_fg b b.img
python3 "$REFILL" "$mnt" --cycles 0 --delete-half --seed 7 > prep.out 2>&1 || { cat prep.out; fail "prepare"; }
manifest "$mnt" want.sha
[ "$(wc -l < want.sha)" -gt 500 ] || fail "only $(wc -l < want.sha) files"
unmount_fg b > /dev/null
BCH_COPYGC_THROTTLE_US=20000 mount_fg k b.img -v
i=0
until "$BCACHEFS" fs usage --json "$mnt" > k-usage.json 2>/dev/null &&
	python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["copygc"]["extents_moved"] < 1)' k-usage.json; do
	i=$((i + 1))
	[ $i -lt 200 ] || { cat "$WORK/k.log"; fail "copygc did not start moving data in 20 s"; }
	sleep 0.1
done
kill -9 $pid
wait $pid 2>/dev/null
fusermount3 -u -z "$mnt" 2>/dev/null
# the passes that ended log a line: one more started before the kill
ended=$(grep -c "copygc: .* buckets chosen" "$WORK/k.log")
echo "$ended copygc passes ended before the kill"
python3 -c 'import json, sys; print("at the kill:", json.load(open(sys.argv[1]))["copygc"])' k-usage.json
"$BCACHEFS" fsck -f -n b.img > fsck2.out 2>&1 || { cat fsck2.out; fail "fsck -f -n after the kill"; }
mount_fg r b.img -o ro
manifest "$mnt" got.sha
unmount_fg r > /dev/null
cmp want.sha got.sha > /dev/null || { diff want.sha got.sha | head; fail "files changed or lost by the kill during copygc"; }
# and a mount after the kill finishes the job
mount_fg f b.img -v
sleep 3
manifest "$mnt" got2.sha
unmount_fg f > /dev/null
cmp want.sha got2.sha > /dev/null || { diff want.sha got2.sha | head; fail "files changed after the copygc that followed"; }
"$BCACHEFS" fsck -f -n b.img > fsck3.out 2>&1 || { cat fsck3.out; fail "fsck -f -n at the end"; }
exit 0
