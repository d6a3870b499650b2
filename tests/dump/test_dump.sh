#!/bin/sh
# dump: for every golden image (encrypted, multi-device and migrated ones
# included) and for damaged ones, the qcow2 images pass `qemu-img check`,
# and once converted back to raw they give exactly the output of
# show-super, list (the keys of every btree, the nodes of extents and
# alloc) and list_journal -a
# that the original gives. A damaged filesystem still dumps; one whose
# journal is unreadable dumps its superblocks and journal.
# TEST_QUICK: a subset of the golden images.
. "$TESTDIR/../lib.sh"
command -v qemu-img > /dev/null || { echo "qemu-img needed (tests/deps.sh installs qemu-utils)"; exit 77; }

# outputs NAME DIR PASSOPTS DEV...: what the read commands print in DIR
# (run there with relative names, so the text does not differ by path)
outputs() {
	_n=$1 _d=$2 _p=$3
	shift 3
	(
		cd "$_d" || exit 1
		for _i in "$@"; do
			echo "== show-super $_i"
			"$BCACHEFS" show-super -f all -l "$_i" 2>&1; echo "rc=$?"
		done
		for _b in extents inodes dirents xattrs alloc quotas; do
			echo "== list $_b"
			"$BCACHEFS" list $_p -b $_b "$@" 2>&1; echo "rc=$?"
		done
		# the nodes of the two largest btrees (bytes used, formats...)
		for _b in extents alloc; do
			echo "== list $_b nodes"
			"$BCACHEFS" list $_p -b $_b -m nodes "$@" 2>&1; echo "rc=$?"
		done
		# every entry (the default listing is a part of it)
		echo "== list_journal -a"
		"$BCACHEFS" list_journal $_p -a "$@" 2>&1; echo "rc=$?"
	) > "$WORK/$_n.$(basename "$_d").out"
}

# roundtrip NAME PASSOPTS IMG...: dump IMGs (as given, in member order),
# check the images, convert them back and compare the outputs. With
# $skipped_node set: a node without the btree magic is not in the dump (it
# may not be a node at all), so the image reads "bad magic 0" there.
roundtrip() {
	_n=$1 _p=$2
	shift 2
	_o=$WORK/$_n/orig _r=$WORK/$_n/raw
	mkdir -p "$_o" "$_r"
	_names=""
	for _i in "$@"; do
		ln -sf "$_i" "$_o/$(basename "$_i")"
		_names="$_names $(basename "$_i")"
	done
	( cd "$_o" && "$BCACHEFS" dump $_p -o "$WORK/$_n/dump.qcow2" $_names ) > "$WORK/$_n/dump.log" 2>&1
	_rc=$?
	crashed $_rc && { cat "$WORK/$_n/dump.log"; fail "$_n: dump crashed (rc=$_rc)"; }
	[ $_rc = 0 ] || { cat "$WORK/$_n/dump.log"; fail "$_n: dump failed (rc=$_rc)"; }
	_k=0
	for _x in $_names; do
		_q=$WORK/$_n/dump.qcow2
		[ $# -gt 1 ] && _q=$_q.$_k
		[ -f "$_q" ] || fail "$_n: no image $_q"
		[ "$(stat -c %a "$_q")" = 600 ] || fail "$_n: $_q is not mode 0600"
		qemu-img check "$_q" > "$WORK/$_n/check.$_k" 2>&1 ||
			{ cat "$WORK/$_n/check.$_k"; fail "$_n: qemu-img check $_q"; }
		grep -q "No errors were found" "$WORK/$_n/check.$_k" ||
			{ cat "$WORK/$_n/check.$_k"; fail "$_n: qemu-img check $_q not clean"; }
		qemu-img convert -O raw "$_q" "$_r/$_x" || fail "$_n: qemu-img convert $_q"
		_k=$((_k + 1))
	done
	outputs "$_n" "$_o" "$_p" $_names
	outputs "$_n" "$_r" "$_p" $_names
	if [ -n "${skipped_node:-}" ]; then
		sed -i 's/bad magic [0-9a-f]* (not a btree node/bad magic X (not a btree node/' \
			"$WORK/$_n.orig.out" "$WORK/$_n.raw.out"
	fi
	diff "$WORK/$_n.orig.out" "$WORK/$_n.raw.out" > "$WORK/$_n.diff" ||
		{ head -40 "$WORK/$_n.diff"; fail "$_n: the dump does not read like the original"; }
	nr_roundtrips=$((nr_roundtrips + 1))
}

nr_roundtrips=0

# ---- every golden image ----
for c in $(golden_read_cases) g4_compressed_encrypted_data; do
	case $c in
	a_default_1G|b02*|b19*|c1_*|d1_*|e1_*|g4*) ;;
	*) [ -n "${TEST_QUICK:-}" ] && continue;;
	esac
	case $c in
	g4_*) imgs=$(golden_images $c lz4);;
	*) imgs=$(golden_images $c);;
	esac
	roundtrip "$c" "$(golden_pass_opts $c)" $imgs
done

# ---- damaged images ----
for z in corrupt-primary-sb corrupt-inode-btree-node corrupt-last-journal-entry; do
	roundtrip "z-$z" "" $(golden_images z_errors $z)
done
grep -q "invalid checksum" "$WORK/z-corrupt-inode-btree-node/dump.log" ||
	{ cat "$WORK/z-corrupt-inode-btree-node/dump.log"; fail "no warning about the damaged inode node"; }
for f in 100-node-bad-csum 101-node-bad-magic 102-node-header-btree-id; do
	zstd -qd "$TESTDIR/../fsck/$f/image.zst" -o "$WORK/$f.img"
	skipped_node=
	[ $f = 101-node-bad-magic ] && skipped_node=1
	roundtrip "fsck-$f" "" "$WORK/$f.img"
done
skipped_node=
grep -q "has no btree node magic: not in the image" "$WORK/fsck-101-node-bad-magic/dump.log" ||
	{ cat "$WORK/fsck-101-node-bad-magic/dump.log"; fail "no warning about the node left out"; }

# every journal entry corrupt: no roots, the superblocks and journal still dumped
img=$WORK/nojournal.img
unzst "$GOLDEN/a_default_1G/dev0.img.zst" "$img"
for s in $("$BCACHEFS" list_journal -a "$img" | sed -n 's/^dev 0 bucket [0-9]* sector \([0-9]*\): .*/\1/p'); do
	printf 'XXXX' | dd of="$img" bs=1 seek=$((s * 512 + 8)) conv=notrunc 2>/dev/null
done
"$BCACHEFS" list -b inodes "$img" > /dev/null 2>&1 && fail "nojournal: the damaged image still opens"
roundtrip nojournal "" "$img"
grep -q "only the superblocks and the journal" "$WORK/nojournal/dump.log" ||
	{ cat "$WORK/nojournal/dump.log"; fail "nojournal: no warning about the missing roots"; }
grep -q "jset magic" "$WORK/nojournal.raw.out" || fail "nojournal: the journal entries are not in the dump"

# every superblock corrupt: nothing to dump, a clear error, no file left
rm -f "$WORK/both.qcow2"
"$BCACHEFS" dump -o "$WORK/both.qcow2" $(golden_images z_errors corrupt-both-sb) > "$WORK/both.log" 2>&1
rc=$?
[ $rc = 1 ] || { cat "$WORK/both.log"; fail "dump of an image without a superblock: rc=$rc, not 1"; }
[ ! -e "$WORK/both.qcow2" ] || fail "dump that failed left its output behind"

echo "$nr_roundtrips images dumped and read back alike"
exit 0
