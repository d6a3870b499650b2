#!/bin/sh
# Quotas (doc/format.md §5.9): a filesystem formatted with
# --usrquota --grpquota counts, per uid and gid, the sectors and inodes of
# its files as the mount changes them (create, write, truncate, chown,
# unlink); `bcachefs quota report` of the mount equals a walk of the tree
# (stat), also after a random workload (fsx), random chowns and stress-ng
# workers, and of the
# unmounted filesystem the same (also for 2000 ids, more than one page of
# the mount's report); `quota set` writes the
# 2018 quota key (`list -b quotas`), and a write, create or chown over a
# hard limit is EDQUOT; a damaged quota key is found and deleted by fsck; an inode whose i_sectors is wrong is counted wrong
# until fsck repairs it, then right. Project quotas: the id set by chattr -p,
# inherited, counted and limited.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/../rw/rwlib.sh"
fuse_mount_setup
rw_setup	# root; a tmpfs for fsx's shadow tree
B=$BCACHEFS
# the users below reach the mount point through $WORK
chmod o+x "$WORK"
img=$WORK/q.img
truncate -s 128M "$img"
"$B" format -q --usrquota --grpquota "$img" > "$WORK/format.log" 2>&1 ||
	{ cat "$WORK/format.log"; fail "format"; }

# walk DIR: "user ID SECTORS INODES" and "group ..." lines from stat of every
# inode under DIR (each inode once), sorted
walk() {
	python3 - "$1" <<'EOF'
import os, sys
seen, use = set(), {}
def add(st):
    if st.st_ino in seen:
        return
    seen.add(st.st_ino)
    for t, i in (("user", st.st_uid), ("group", st.st_gid)):
        s, n = use.get((t, i), (0, 0))
        use[(t, i)] = (s + st.st_blocks, n + 1)
top = sys.argv[1]
add(os.lstat(top))
for d, dirs, files in os.walk(top):
    for n in dirs + files:
        add(os.lstat(os.path.join(d, n)))
for (t, i), (s, n) in sorted(use.items()):
    print(t, i, s, n)
EOF
}
# report ARG: the same four fields of `quota report`, sorted
report() {
	"$B" quota report "$1" > "$WORK/report.txt" 2> "$WORK/report.err" ||
		{ cat "$WORK/report.err"; fail "quota report $1"; }
	awk '{ gsub(/\*/, ""); if ($4 != 0 || $8 != 0) print $1, $2, $4, $8 }' "$WORK/report.txt" | sort
}
same() {	# same WHAT ARG
	walk "$mnt" > "$WORK/walk.txt"
	report "$2" > "$WORK/rep.txt"
	diff "$WORK/walk.txt" "$WORK/rep.txt" > "$WORK/diff.txt" ||
		{ cat "$WORK/diff.txt" "$WORK/report.txt"; fail "$1: quota report is not what stat says"; }
}

mount_fg q "$img"
m=$mnt
mkdir "$m/pub" && chmod 1777 "$m/pub"
head -c 300000 /dev/urandom > "$m/root-file"
for u in 1001 1002 1003; do
	setpriv --reuid=$u --regid=$((u + 100)) --clear-groups sh -c "
		mkdir $m/pub/d$u && head -c $((u * 40)) /dev/urandom > $m/pub/d$u/a &&
		head -c 70000 /dev/urandom > $m/pub/d$u/b && ln -s a $m/pub/d$u/l && touch $m/pub/d$u/e" ||
		fail "files of uid $u"
done
same "create and write" "$m"
truncate -s 1000 "$m/pub/d1001/b"
rm "$m/pub/d1002/a"
chown 1003:1103 "$m/root-file"
ln "$m/pub/d1003/b" "$m/pub/d1003/hardlink"
truncate -s 5M "$m/pub/d1002/b"		# a hole: no sectors
same "truncate, unlink, chown, link" "$m"

# limits: the 2018 key, EDQUOT at the hard limit, the report shows them
"$B" quota set "$m" user 1002 --space-hard=300k --inodes-hard=6 --space-soft=100k ||
	fail "quota set"
"$B" quota report "$m" | grep -q "^user 1002 space [0-9]* 200 600 inodes [0-9]* 0 6$" ||
	{ "$B" quota report "$m"; fail "the limits in the report"; }
setpriv --reuid=1002 --regid=1102 --clear-groups sh -c "
	head -c 150000 /dev/urandom > $m/pub/d1002/c" || fail "a write under the limit"
setpriv --reuid=1002 --regid=1102 --clear-groups sh -c "
	head -c 100000 /dev/urandom > $m/pub/d1002/big" 2> "$WORK/edquot.err" &&
	fail "a write over the space hard limit was taken"
grep -q "Disk quota exceeded" "$WORK/edquot.err" || { cat "$WORK/edquot.err"; fail "not EDQUOT"; }
"$B" quota report "$m" | grep -q "^user 1002 space [0-9]*\* 200 600 " ||
	{ "$B" quota report "$m"; fail "over the soft limit: no '*'"; }
rm -f "$m/pub/d1002/big" "$m/pub/d1002/c"
for i in 1 2 3 4 5 6; do
	setpriv --reuid=1002 --regid=1102 --clear-groups touch "$m/pub/d1002/n$i" 2> "$WORK/inodes.err" || break
done
grep -q "Disk quota exceeded" "$WORK/inodes.err" || { cat "$WORK/inodes.err"; fail "inode hard limit: not EDQUOT"; }
[ "$(ls "$m/pub/d1002" | grep -c '^n')" -lt 6 ] || fail "inode hard limit not enforced"
chown 1002 "$m/pub/d1001/b" 2> /dev/null && fail "chown over the limit was taken"
setpriv --reuid=1001 --regid=1101 --clear-groups "$B" quota set "$m" user 1001 --space-hard=1M \
	2> /dev/null && fail "quota set by a user was taken"
same "after refused operations" "$m"
# more ids than one xattr value holds: the report comes in pages
mkdir "$m/many"
python3 -c '
import os, sys
for i in range(1000):
    p = os.path.join(sys.argv[1], "f%d" % i)
    open(p, "w").close()
    os.chown(p, 20000 + i, 30000 + i)' "$m/many" || fail "files of many owners"
same "many ids" "$m"
# a random workload (fsx: writes, truncates, holes, links, renames, unlinks),
# then owners changed at random: still what stat says
test_tool fsx
rw_tmpfs shadow 256m
mkdir "$m/fsx" "$tmpfs/fsx"
"$TOOL" -S 5 -N 3000 "$m/fsx" "$tmpfs/fsx" > "$WORK/fsx.out" 2>&1 || { tail -5 "$WORK/fsx.out"; fail "fsx"; }
python3 -c '
import os, random, sys
random.seed(5)
for d, dirs, files in os.walk(sys.argv[1]):
    for n in dirs + files:
        os.lchown(os.path.join(d, n), random.randint(1005, 1008), random.randint(1105, 1108))' "$m/fsx" ||
	fail "chowns"
same "fsx and chowns" "$m"
# stress-ng as a user: files written, grown, renamed and deleted by
# parallel workers (what they leave and what they removed counted right)
command -v stress-ng > /dev/null || fail "stress-ng missing (tests/deps.sh)"
mkdir "$m/stress" && chown 1007:1107 "$m/stress"
setpriv --reuid=1007 --regid=1107 --clear-groups stress-ng --temp-path "$m/stress" \
	--hdd 2 --hdd-ops 3000 --hdd-bytes 4M --dir 1 --dir-ops 300 --rename 1 --rename-ops 1000 \
	--fallocate 1 --fallocate-ops 40 --fallocate-bytes 4M --timeout 20s \
	> "$WORK/stress.out" 2>&1 || { tail -5 "$WORK/stress.out"; fail "stress-ng"; }
same "stress-ng" "$m"
[ "$("$B" quota report "$m" | wc -l)" -gt 2000 ] || fail "many ids: not every line"
walk "$m" > "$WORK/walk-mounted.txt"
unmount_fg q > /dev/null

# unmounted: the same count from the inodes; the key as the 2018 tools list it
report "$img" > "$WORK/rep-offline.txt"
diff "$WORK/walk-mounted.txt" "$WORK/rep-offline.txt" || fail "quota report of the unmounted filesystem"
"$B" list -b quotas "$img" > "$WORK/list.txt" 2>&1 || { cat "$WORK/list.txt"; fail "list -b quotas"; }
grep -q "^u64s 9 type 128 0:1002 .*: space hardlimit 600 softlimit 200inodes hardlimit 6 softlimit 0" \
	"$WORK/list.txt" || { cat "$WORK/list.txt"; fail "list -b quotas: the key"; }
"$B" fsck -n -f "$img" > "$WORK/fsck.out" 2>&1 || { cat "$WORK/fsck.out"; fail "fsck after the mount"; }

# a damaged quota key (its type byte patched to 129 in the leaf, checksums
# redone): fsck -n finds it, fsck -y deletes it, the other keys stay
test_tool plant
cp "$img" "$WORK/bad.img"
leaf=$("$TOOL" "$WORK/bad.img" leaf-of quotas 0 1002) || fail "leaf-of quotas"
off=$(python3 - "$WORK/bad.img" "$leaf" <<'PY'
import struct, sys
with open(sys.argv[1], 'rb') as f:
    f.seek(int(sys.argv[2]))
    node = f.read(1 << 20)
i = node.find(struct.pack('<QQQQ', 600, 200, 6, 0))
# the packed key before its value: first byte its u64s (key + 4), third its type
for k in range(1, 6):
    h = i - 8 * k
    if i > 0 and h >= 0 and node[h] == k + 4 and node[h + 2] == 128:
        print(int(sys.argv[2]) + h + 2)
        break
PY
)
[ -n "$off" ] || fail "the quota key in its leaf"
printf '\201' | dd of="$WORK/bad.img" bs=1 seek="$off" conv=notrunc status=none
"$TOOL" "$WORK/bad.img" resum-node "$leaf" > /dev/null || fail "resum-node"
"$B" fsck -n -f "$WORK/bad.img" > "$WORK/bad-n.out" 2>&1 && fail "fsck -n: the bad quota key not found"
grep -q "invalid key 0:1002 type 129" "$WORK/bad-n.out" || { cat "$WORK/bad-n.out"; fail "fsck -n: the message"; }
"$B" fsck -y "$WORK/bad.img" > "$WORK/bad-y.out" 2>&1
[ $? = 1 ] || { cat "$WORK/bad-y.out"; fail "fsck -y: not exit 1 (fixed)"; }
"$B" fsck -n -f "$WORK/bad.img" > "$WORK/bad-n2.out" 2>&1 || { cat "$WORK/bad-n2.out"; fail "fsck after the repair"; }
"$B" list -b quotas "$WORK/bad.img" 2>&1 | grep -q . && fail "the bad quota key is still listed"

# usage comes from the inodes' i_sectors: a wrong one is counted wrong until fsck repairs it
ino=$("$B" list -b dirents "$img" | sed -n 's/.*: root-file -> \([0-9]*\).*/\1/p')
[ -n "$ino" ] || fail "root-file's inode"
old=$("$B" list -b inodes "$img" | sed -n "s/.* $ino:0 .* bi_sectors: \([0-9]*\) .*/\1/p")
total=$(awk '$1 == "user" && $2 == 1003 { print $3 }' "$WORK/walk-mounted.txt")
[ -n "$old" ] && [ -n "$total" ] || fail "root-file's sectors"
"$TOOL" "$img" inode "$ino" sectors=7 > "$WORK/plant.out" 2>&1 || { cat "$WORK/plant.out"; fail "plant"; }
"$B" quota report "$img" | grep -q "^user 1003 space $((total - old + 7)) " ||
	{ "$B" quota report "$img"; fail "the planted i_sectors is not what the count says"; }
"$B" fsck -y "$img" > "$WORK/fsck-y.out" 2>&1
grep -q "i_sectors wrong" "$WORK/fsck-y.out" || { cat "$WORK/fsck-y.out"; fail "fsck: i_sectors"; }
report "$img" > "$WORK/rep-fixed.txt"
diff "$WORK/walk-mounted.txt" "$WORK/rep-fixed.txt" || fail "quota usage after fsck -y"

# project quotas: the project id set as the 2018 kernel took it (chattr -p:
# FS_IOC_FSSETXATTR), inherited by what is created under it, counted, limited
if command -v chattr > /dev/null && command -v lsattr > /dev/null; then
	pimg=$WORK/p.img
	truncate -s 64M "$pimg"
	"$B" format -q --prjquota "$pimg" > /dev/null 2>&1 || fail "format --prjquota"
	mount_fg p "$pimg"
	mkdir "$mnt/proj"
	chattr -p 42 "$mnt/proj" || fail "chattr -p"
	mkdir "$mnt/proj/sub"
	head -c 100000 /dev/urandom > "$mnt/proj/sub/f" || fail "write under the project"
	[ "$(lsattr -p -d "$mnt/proj/sub/f" | awk '{ print $1 }')" = 42 ] || fail "project not inherited"
	want=$(stat -c %b "$mnt/proj" "$mnt/proj/sub" "$mnt/proj/sub/f" | awk '{ s += $1 } END { print s }')
	"$B" quota report "$mnt" | grep -q "^project 42 space $want 0 0 inodes 3 0 0$" ||
		{ "$B" quota report "$mnt"; fail "project 42: not $want sectors, 3 inodes"; }
	"$B" quota set "$mnt" project 42 --inodes-hard=4 || fail "quota set project"
	touch "$mnt/proj/sub/g" || fail "the fourth inode of the project"
	touch "$mnt/proj/sub/h" 2> "$WORK/p.err" && fail "project inode hard limit not enforced"
	grep -q "Disk quota exceeded" "$WORK/p.err" || { cat "$WORK/p.err"; fail "project: not EDQUOT"; }
	touch "$mnt/outside" || fail "a file outside the project"
	chattr +i "$mnt/outside" 2> /dev/null && fail "chattr +i taken (not enforced here)"
	unmount_fg p > /dev/null
	"$B" fsck -n -f "$pimg" > "$WORK/pfsck.out" 2>&1 || { cat "$WORK/pfsck.out"; fail "fsck (projects)"; }
fi
true
