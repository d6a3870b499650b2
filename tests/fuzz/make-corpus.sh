#!/bin/sh
# Rebuild the seed corpora tests/fuzz/corpus/<target>/ (run by hand; the
# result is committed):
#
#   tests/fuzz/make-corpus.sh
#
# Seeds come from golden images of the 2018 tools (tests/golden), from
# damaged images of the fsck corpus (tests/fsck/NNN-*/image.zst) and from
# small images our own `format --source` makes with each option that
# changes the encoding (checksums, compression, encryption, string hash,
# block size, replicas). build/tests/mkseeds (make build/tests/mkseeds)
# writes the inputs of every target; whole-image seeds larger than
# IMAGE_MAX bytes are dropped, and when the fuzz targets are built (make
# fuzz-build) only the seeds that add coverage are kept (libFuzzer
# -merge=1), so the committed corpus stays small (about 2.5 MB).
set -e
top=$(cd "$(dirname "$0")/../.." && pwd)
BCACHEFS=${BCACHEFS:-$top/bcachefs}
MKSEEDS=${MKSEEDS:-$top/build/tests/mkseeds}
IMAGE_MAX=${IMAGE_MAX:-131072}
FUZZDIR=${FUZZDIR:-$top/build-fuzz/tests/fuzz}
out=$top/tests/fuzz/corpus
T=$(mktemp -d /tmp/bcachefs-fuzz-corpus.XXXXXX)
trap 'rm -rf "$T"' EXIT

rm -rf "$out"
mkdir -p "$out"

seeds() {	# seeds NAME IMAGE...
	"$MKSEEDS" "$out" "$@"
}

# ---- golden images (2018 tools) ----
golden() {	# golden NAME FILE... (relative to tests/golden)
	name=$1; shift
	set --
	for f in $golden_files; do
		zstd -qd --sparse -f "$top/tests/golden/$f" -o "$T/$(basename "$f" .zst)"
		set -- "$@" "$T/$(basename "$f" .zst)"
	done
	seeds "golden-$name" "$@"
	rm -f "$@"
}
for g in a_default_20M a_default_64M b02_bs512 b03_btree64k b04_bucket256k_btree256k \
	 b06_csum_crc64 b07_csum_none b09_lz4 b10_gzip b11_zstd b17_durability2 \
	 c2_encrypted_nopass g2_dirty_journal g3_merges_and_stale; do
	golden_files=$(cd "$top/tests/golden" && ls $g/dev0.img.zst 2>/dev/null || ls $g/*.img.zst | head -1)
	golden "$g"
done
for g in b19_replicas2 e1_2dev; do
	golden_files="$g/dev0.img.zst $g/dev1.img.zst"
	golden "$g"
done
golden_files=a_default_20M/dev0.fmt.img.zst golden a_default_20M-fmt
golden_files=g4_compressed_encrypted_data/zstd.img.zst golden g4_zstd
golden_files=g4_compressed_encrypted_data/lz4.img.zst golden g4_lz4
for z in corrupt-both-sb corrupt-inode-btree-node corrupt-last-journal-entry corrupt-primary-sb; do
	golden_files=z_errors/$z.img.zst golden "$z"
done

# ---- damaged images of the fsck corpus ----
for c in 008-hash-before-slot 100-node-bad-csum 203-journal-gap 309-sb-member-missing \
	 400-ptr-gen-stale 503-interior-bad-csum; do
	zstd -qd --sparse -f "$top/tests/fsck/$c/image.zst" -o "$T/image"
	seeds "fsck-$c" "$T/image"
	rm -f "$T/image"
done

# ---- our own format, one image per encoding option ----
src=$T/src
mkdir -p "$src/dir/sub"
awk 'BEGIN { for (i = 0; i < 800; i++) print "hello bcachefs fuzz", i }' > "$src/text"
head -c 12288 /dev/urandom > "$src/rand"
printf x > "$src/small"
ln -s text "$src/link"
ln "$src/text" "$src/dir/hardlink"
echo long > "$src/dir/sub/$(printf '%0200d' 0)"
setfattr -n user.comment -v "a comment" "$src/text" 2>/dev/null ||
	python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.comment", b"a comment")' "$src/text" || true

own() {	# own NAME NR_DEVS FORMAT-OPTION... (--source=$src unless --no_initialize)
	name=$1 nr=$2; shift 2
	source=--source=$src
	case " $* " in *" --no_initialize "*) source=;; esac
	imgs=""
	for i in $(seq 1 "$nr"); do
		rm -f "$T/own$i.img"
		truncate -s 4M "$T/own$i.img"
		imgs="$imgs $T/own$i.img"
	done
	# shellcheck disable=SC2086
	"$BCACHEFS" format -q -f --bucket_size=4k --btree_node_size=4k $source "$@" $imgs
	# shellcheck disable=SC2086
	seeds "own-$name" $imgs
	# shellcheck disable=SC2086
	rm -f $imgs
}
own default 1
own bs512 1 -b 512
own crc64 1 --metadata_checksum_type=crc64 --data_checksum_type=crc64
own csum-none 1 --metadata_checksum_type=none --data_checksum_type=none
own lz4 1 --compression_type=lz4
own gzip 1 --compression_type=gzip
own zstd 1 --compression_type=zstd
own hash-crc32c 1 --str_hash=crc32c
own hash-crc64 1 --str_hash=crc64
own encrypted 1 --encrypted --no_passphrase
own encrypted-zstd-wide 1 --encrypted --no_passphrase --wide_macs --compression_type=zstd
own replicas2 2 --replicas=2
own quota 1 --usrquota --grpquota --prjquota
own groups 2 --group=ssd.fast --foreground_target=ssd --promote_target=ssd.fast --durability=2
own uninit 1 --no_initialize

# the mount's read path (fuzz_mount.c): a replicas=2 image whose first
# copy of one dirents leaf and of one file's data are damaged (repair on
# read); then every image seed read-only as it is, and read-write (flag
# bit 2: the engine, writes, the repairs, the stop)
rm -f "$T/r1.img" "$T/r2.img"
truncate -s 4M "$T/r1.img" "$T/r2.img"
"$BCACHEFS" format -q -f --bucket_size=4k --btree_node_size=4k --replicas=2 --source="$src" "$T/r1.img" "$T/r2.img"
n=$("$BCACHEFS" list -b dirents -m nodes "$T/r1.img" "$T/r2.img" | sed -n 's/.*ptrs: ptr: 0:\([0-9]*\) .*/\1/p' | head -n 1)
d=$("$BCACHEFS" list -b extents "$T/r1.img" "$T/r2.img" | sed -n 's/.* ptr: 0:\([0-9]*\) gen.*/\1/p' | head -n 1)
python3 - "$T/r1.img" $((n * 512 + 200)) $((d * 512 + 100)) <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    for off in map(int, sys.argv[2:]):
        f.seek(off); b = f.read(8); f.seek(off); f.write(bytes(x ^ 0x5a for x in b))
PY
seeds own-replicas2-bad-copies "$T/r1.img" "$T/r2.img"

# a device taken out by device remove: magic zeroed, checksum over the
# zeroed magic (the reader says "removed from filesystem UUID")
rm -f "$T/m1.img" "$T/m2.img"
truncate -s 4M "$T/m1.img" "$T/m2.img"
"$BCACHEFS" format -q -f --bucket_size=4k --btree_node_size=4k "$T/m1.img" "$T/m2.img"
"$BCACHEFS" device remove --fs "$T/m1.img:$T/m2.img" "$T/m2.img" > /dev/null
seeds own-removed-device "$T/m2.img"

# whole images over IMAGE_MAX bytes: dropped
find "$out/image" -type f -size +"$IMAGE_MAX"c -print -delete | sed 's|.*/|dropped (too big): |'
mkdir -p "$out/mount"
for f in "$out/image"/*; do
	cp "$f" "$out/mount/${f##*/}"
	python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read() or b"\0"); b[0] |= 4; open(sys.argv[2], "wb").write(b)' \
		"$f" "$out/mount/${f##*/}-rw"
done

# keep the seeds that add coverage (the merge names its output by content:
# map back to the seeds' own names through their SHA-1)
for t in "$out"/*/; do
	t=$(basename "$t")
	[ -x "$FUZZDIR/fuzz_$t" ] || { echo "$t: fuzz_$t not built, every seed kept"; continue; }
	rm -rf "$T/merged"; mkdir "$T/merged"
	"$FUZZDIR/fuzz_$t" -merge=1 "$T/merged" "$out/$t" > "$T/merge.log" 2>&1 ||
		{ tail -n 20 "$T/merge.log"; exit 1; }
	for f in "$out/$t"/*; do
		[ -e "$T/merged/$(sha1sum < "$f" | cut -d' ' -f1)" ] || rm -f "$f"
	done
done
for t in "$out"/*/; do
	echo "$(basename "$t"): $(ls "$t" | wc -l) seeds, $(cat "$t"* | wc -c) bytes"
done
echo "total: $(cat "$out"/*/* | wc -c) bytes"
