# The smallest filesystems: every size from the minimum
# the error message advertises (1024 blocks: 4 MiB with 4k blocks) up
# formats, initialises and checks clean, with --fs_size too, and takes a
# small tree with --source; the block size is lowered when the buckets
# are too small for btree nodes of two blocks. When the block size or the
# node size is given and that cannot be, format refuses before writing
# anything (exit 1, the image unchanged).
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1

mkdir -p src/d
for i in 1 2 3; do head -c 3000 /dev/urandom > src/f$i; done
echo hello > src/d/x

for sz in 4M 5M 6M 7M 7680K 8M; do
	rm -f m.img; truncate -s $sz m.img
	"$BCACHEFS" format -q m.img > out 2>&1 || { cat out; fail "format of $sz failed"; }
	"$BCACHEFS" fsck -f -n m.img > out 2>&1 || { cat out; fail "fsck -f -n after format of $sz"; }
	"$BCACHEFS" format -q -f --source=src m.img > out 2>&1 || { cat out; fail "format --source of $sz"; }
	"$BCACHEFS" fsck -f -n m.img > out 2>&1 || { cat out; fail "fsck -f -n after format --source of $sz"; }
	rm -rf x; "$BCACHEFS" extract m.img / x > /dev/null 2>&1 || fail "extract of $sz"
	rmdir x/lost+found; diff -r src x || fail "$sz: extracted tree differs"
	echo "ok   $sz: formatted, clean, --source copied"
done
rm -f m.img; truncate -s 64M m.img
"$BCACHEFS" format -q --fs_size=4M m.img > out 2>&1 || { cat out; fail "--fs_size=4M"; }
"$BCACHEFS" fsck -f -n m.img > out 2>&1 || { cat out; fail "fsck -f -n after --fs_size=4M"; }
echo "ok   --fs_size=4M"

# asked for, but impossible: refused before writing
refused() {
	rm -f r.img; truncate -s "$1" r.img
	printf 'untouched' | dd of=r.img bs=1 seek=4096 conv=notrunc status=none
	shift
	_before=$(sha256sum < r.img)
	_rc=0
	"$BCACHEFS" format -q "$@" r.img > out 2> err || _rc=$?
	[ $_rc = 1 ] || { cat out err; fail "format $* r.img: exit $_rc, want 1"; }
	[ "$(sha256sum < r.img)" = "$_before" ] || fail "format $* r.img: written though refused"
	grep -q "btree nodes" err || { cat err; fail "format $*: no clear message"; }
	echo "ok   refused before writing: $*: $(head -n 1 err)"
}
refused 4M --block_size=4k
refused 64M --block_size=4k --fs_size=6M
refused 64M --block_size=4k --btree_node_size=4k
refused 64M --block_size=2k --bucket_size=2k
