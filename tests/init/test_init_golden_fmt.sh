# bch_fs_initialize() on the golden images straight after `format`
# (devN.fmt.img, superblocks only) for many option sets, through the small
# driver init_fs.c. The result must be what the 2018 tools' first two
# opens produced, as far as it does not depend on chance or the clock:
#   show-super equal to the golden final one (journal buckets, replicas,
#   sections, sizes, flags) except Last mount; the same inodes (times
#   aside) and the lost+found dirent; list_journal sane; fsck -f -n clean;
#   a second initialisation refused.
set -e
. "$(dirname "$0")/../lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

drv=$WORK/init_fs
cc -std=gnu11 -O1 -g -Wall -Wextra -Werror -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 \
	-I"$top/libbcachefs" -I"$top" -o "$drv" "$top/tests/init/init_fs.c" \
	"$top/build/libbcachefs.a" \
	$(pkg-config --libs blkid uuid libsodium liblz4 libzstd zlib fuse3 2>/dev/null) \
	-lblkid -luuid -lsodium -llz4 -lzstd -lz -lscrypt -lkeyutils -lpthread \
	|| { echo "cannot build the init driver (build/libbcachefs.a missing?)"; exit 77; }

cases="a_default_20M a_default_64M a_default_1G b01_label_bs4k b02_bs512 b03_btree64k
b04_bucket256k_btree256k b05_bucket1M b06_csum_crc64 b07_csum_none b08_meta_crc64_data_none
b16_discard b17_durability2 b18_fs_size512M b19_replicas2 b21_meta_replicas2
b24_durability0_cache b25_data_allowed c1_encrypted c2_encrypted_nopass e1_2dev"

# The text of `list -b inodes` without what depends on the clock.
strip_inodes() {
	grep '^u64s' | sed -e 's/^u64s [0-9]* //' \
		-e 's/bi_[amco]time: [0-9]*//g'
}

for c in $cases; do
	[ -d "$GOLDEN/$c" ] || continue
	fmts=$(ls "$GOLDEN/$c"/dev*.fmt.img.zst)
	imgs=""
	for f in $fmts; do
		o=$WORK/$c/$(basename "${f%.fmt.img.zst}").img
		mkdir -p "$WORK/$c"
		unzst "$f" "$o"
		imgs="$imgs $o"
	done
	pass=$(golden_pass_opts "$c")

	"$drv" $pass $imgs > "$WORK/$c/init.out" 2>&1 ||
		{ cat "$WORK/$c/init.out"; fail "$c: initialisation failed"; }

	n=0
	for i in $imgs; do
		"$BCACHEFS" show-super -l -f all "$i" | grep -v "Last mount" > "$WORK/$c/ss.$n"
		sed -e '1d' -e '$d' "$GOLDEN/$c/out/show-super.final.dev$n.txt" |
			grep -v "Last mount" > "$WORK/$c/ss.golden.$n"
		diff -u "$WORK/$c/ss.golden.$n" "$WORK/$c/ss.$n" ||
			fail "$c: show-super of device $n differs from the golden final image"
		n=$((n + 1))
	done

	"$BCACHEFS" list -b inodes $pass $imgs > "$WORK/$c/inodes" 2>&1 ||
		{ cat "$WORK/$c/inodes"; fail "$c: list -b inodes failed"; }
	strip_inodes < "$WORK/$c/inodes" > "$WORK/$c/inodes.s"
	strip_inodes < "$GOLDEN/$c/out/list-inodes.txt" > "$WORK/$c/inodes.golden"
	diff -u "$WORK/$c/inodes.golden" "$WORK/$c/inodes.s" || fail "$c: inodes differ"

	"$BCACHEFS" list -b dirents $pass $imgs > "$WORK/$c/dirents" 2>&1 ||
		fail "$c: list -b dirents failed"
	grep -q "^u64s 9 type 128 4096:[0-9]* snap 0 len 0 ver 0: lost+found -> 4097$" \
		"$WORK/$c/dirents" || { cat "$WORK/$c/dirents"; fail "$c: no lost+found dirent"; }
	[ "$(grep -c '^u64s' "$WORK/$c/dirents")" = 1 ] || fail "$c: extra dirents"

	"$BCACHEFS" list_journal $pass $imgs > "$WORK/$c/journal" 2>&1 ||
		{ cat "$WORK/$c/journal"; fail "$c: list_journal failed"; }
	grep -q "seq 2 version 2 .* last_seq 2 " "$WORK/$c/journal" ||
		{ cat "$WORK/$c/journal"; fail "$c: newest entry is not seq 2 with last_seq 2"; }
	grep -q "journal read done, 0 keys in 1 entries, seq 2" "$WORK/$c/journal" ||
		fail "$c: journal read summary"

	"$BCACHEFS" fsck -f -n $pass $imgs > "$WORK/$c/fsck" 2>&1 ||
		{ cat "$WORK/$c/fsck"; fail "$c: fsck -f -n exited non-zero"; }
	grep -q clean "$WORK/$c/fsck" || { cat "$WORK/$c/fsck"; fail "$c: fsck -f -n not clean"; }

	if "$drv" $pass $imgs > "$WORK/$c/init2.out" 2>&1; then
		fail "$c: a second initialisation was accepted"
	fi
	grep -q "already initialized" "$WORK/$c/init2.out" || fail "$c: second init message"

	echo "ok $c"
	rm -rf "$WORK/$c"
done
