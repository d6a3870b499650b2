# Crash safety of bch_fs_initialize(): make the N-th device write fail
# (BCH_FAULT_WRITES=N) for every N until initialisation succeeds. After
# each failure the filesystem must be either still uninitialised (a valid
# superblock, Clean 0, no journal section) - and then initialise cleanly on
# a second try - or completely initialised (fsck -f -n clean).
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

check_case() {
	c=$1
	mkdir -p "$WORK/$c"
	src=""
	for f in "$GOLDEN/$c"/dev*.fmt.img.zst; do
		o=$WORK/$c/$(basename "${f%.zst}")
		unzst "$f" "$o"
		src="$src $o"
	done
	n=0
	while :; do
		imgs=""
		for s in $src; do
			cp --sparse=always "$s" "${s%.fmt.img}.img"
			imgs="$imgs ${s%.fmt.img}.img"
		done
		if BCH_FAULT_WRITES=$n "$drv" $imgs > "$WORK/$c/out" 2>&1; then
			"$BCACHEFS" fsck -f -n $imgs > "$WORK/$c/fsck" 2>&1 ||
				{ cat "$WORK/$c/fsck"; fail "$c: fsck -f -n after a successful init"; }
			echo "ok $c: initialisation needs $n writes"
			return 0
		fi
		grep -q "Input/output error" "$WORK/$c/out" ||
			{ cat "$WORK/$c/out"; fail "$c: write $n: unexpected failure"; }
		first=${imgs# }; first=${first%% *}
		if "$BCACHEFS" show-super "$first" 2>&1 | grep -q "^Clean:.*1"; then
			"$BCACHEFS" fsck -f -n $imgs > "$WORK/$c/fsck" 2>&1 ||
				{ cat "$WORK/$c/fsck"; fail "$c: write $n: half-initialised filesystem"; }
			grep -q clean "$WORK/$c/fsck" || fail "$c: write $n: not clean"
		else
			for i in $imgs; do
				"$BCACHEFS" show-super "$i" > "$WORK/$c/ss" 2>&1 ||
					{ cat "$WORK/$c/ss"; fail "$c: write $n: superblock unreadable"; }
				grep -q "^Sections:.*journal" "$WORK/$c/ss" &&
					fail "$c: write $n: journal field but not clean"
			done
			"$drv" $imgs > "$WORK/$c/out2" 2>&1 ||
				{ cat "$WORK/$c/out2"; fail "$c: write $n: second initialisation failed"; }
			"$BCACHEFS" fsck -f -n $imgs > "$WORK/$c/fsck" 2>&1 ||
				{ cat "$WORK/$c/fsck"; fail "$c: write $n: fsck -f -n after re-init"; }
		fi
		n=$((n + 1))
		[ $n -lt 100 ] || fail "$c: initialisation never succeeds"
	done
}

for c in a_default_20M c2_encrypted_nopass e1_2dev; do
	[ -d "$GOLDEN/$c" ] && check_case $c
	rm -rf "$WORK/$c"
done
