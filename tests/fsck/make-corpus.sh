#!/bin/bash
# Build the fsck corruption corpus tests/fsck/NNN-name/ (e2fsprogs style).
#
#   tests/fsck/make-corpus.sh            rebuild every image and expect file
#   tests/fsck/make-corpus.sh --update   only regenerate expect.1/expect.2 (and
#                                        the xfail notes) from the current binary
#   tests/fsck/make-corpus.sh [--update] NNN...   only those cases
#
# Each case: image.zst (zstd -19 of a 16 MiB sparse image made by our own
# `format --source`, then damaged by build/tests/plant through the update
# engine, or by byte patches with checksums recomputed), name (one line:
# what was done), expect.1 / expect.2 (output of `bcachefs fsck -y image`,
# then a line "exit N"), and xfail when the case documents a bug (second run
# not clean, or fsck -f -n not exiting 4): one line, the reason.
#
# Needs ./bcachefs and build/tests/plant (make -j2 bcachefs build/tests/plant).
set -e
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$top/tests/fsck
BCACHEFS=${BCACHEFS:-$top/bcachefs}
PLANT=${PLANT:-$top/build/tests/plant}
UUID=6c1ad6a4-5d52-4a7e-9f3c-0b6a1f2e3d4c

update=0
[ "${1:-}" = --update ] && { update=1; shift; }
only=" $* "

T=$(mktemp -d /tmp/bcachefs-corpus.XXXXXX)
trap 'rm -rf "$T"' EXIT

want() {	# want NNN: is this case selected?
	[ "$only" = "  " ] && return 0
	case "$only" in *" $1 "*) return 0;; esac
	return 1
}

# ---- the expect files of one case ----
expect() {	# expect CASEDIR
	local d=$1 w rc n k
	rm -f "$d/xfail" "$d/filter"
	# two independent runs: output that differs between them (random hash
	# seeds of recreated directories...) gets a filter (long numbers -> N)
	for k in a b; do
		w=$T/run.$k
		rm -rf "$w"; mkdir -p "$w"
		zstd -qd --sparse "$d/image.zst" -o "$w/image"
		if [ $k = a ]; then
			set +e
			( cd "$w" && "$BCACHEFS" fsck -f -n image > n.out 2>&1 ); rc=$?
			set -e
			[ $rc = 4 ] || echo "fsck -f -n exits $rc, want 4" >> "$d/xfail"
		fi
		for n in 1 2; do
			set +e
			( cd "$w" && "$BCACHEFS" fsck -y image > out 2>&1 ); rc=$?
			set -e
			{ cat "$w/out"; echo "exit $rc"; } > "$w/expect.$n"
		done
	done
	if ! cmp -s "$T/run.a/expect.1" "$T/run.b/expect.1" || ! cmp -s "$T/run.a/expect.2" "$T/run.b/expect.2"; then
		echo 's/[0-9]\{10,\}/N/g' > "$d/filter"
		for k in a b; do for n in 1 2; do
			sed -f "$d/filter" "$T/run.$k/expect.$n" > "$T/run.$k/f.$n"
		done; done
		cmp -s "$T/run.a/f.1" "$T/run.b/f.1" && cmp -s "$T/run.a/f.2" "$T/run.b/f.2" ||
			echo "fsck -y output not deterministic" >> "$d/xfail"
	fi
	for n in 1 2; do
		if [ -f "$d/filter" ]; then sed -f "$d/filter" "$T/run.a/expect.$n"; else cat "$T/run.a/expect.$n"; fi > "$d/expect.$n"
	done
	rc=$(tail -n 1 "$d/expect.1")
	[ "$rc" != "exit 0" ] || echo "first fsck -y: exit 0 and no problem reported, but fsck -f -n found one" >> "$d/xfail"
	rc=$(tail -n 1 "$d/expect.2")
	[ "$rc" = "exit 0" ] || echo "second fsck -y: $rc, want exit 0 (repair incomplete)" >> "$d/xfail"
	[ -f "$d/xfail" ] && echo "  $(basename "$d"): xfail: $(tr '\n' ';' < "$d/xfail")" || true
}


# the list of known failing cases in README.md, between the markers
readme_xfail() {
	local r=$dir/README.md tmp=$T/readme
	[ -f "$r" ] || return 0
	{
		sed '/^<!-- xfail begin -->$/q' "$r"
		for d in "$dir"/[0-9]*/; do
			d=${d%/}
			[ -f "$d/xfail" ] && echo "- \`$(basename "$d")\` ($(cat "$d/name")): $(tr '\n' ' ' < "$d/xfail" | sed 's/; *$//; s/ *$//')"
		done
		sed -n '/^<!-- xfail end -->$/,$p' "$r"
	} > "$tmp"
	cp "$tmp" "$r"
}

if [ $update = 1 ]; then
	for d in "$dir"/[0-9]*/; do
		d=${d%/}
		want "$(basename "$d" | cut -d- -f1)" || continue
		expect "$d"
	done
	readme_xfail
	exit 0
fi

# ---- the base image ----
src=$T/src
mkdir -p "$src/d1/d2/d3" "$src/d4" "$src/d5/sub" "$src/empty"
echo hello > "$src/f1"
python3 - "$src" <<'EOF'
import os, random, sys
s = sys.argv[1]
r = random.Random(5)
# compressible data (small image.zst), several extents
open(s + "/d1/data", "wb").write(b"".join(b"data line %06d\n" % i for i in range(1250)))
open(s + "/d5/big", "wb").write(b"".join(b"big file line %08d\n" % i for i in range(3200)))
open(s + "/d1/d2/small", "w").write("x\n")
for i in range(6):
    open("%s/d5/file%d" % (s, i), "w").write("file %d\n" % i * (i + 1))
open(s + "/d5/sub/leaf", "w").write("leaf\n")
os.setxattr(s + "/f1", "user.foo", b"bar")
os.setxattr(s + "/d1", "user.dirattr", b"value")
os.setxattr(s + "/d5/big", "user.big", b"1")
EOF
ln "$src/f1" "$src/d4/hardlink"
ln "$src/d5/file1" "$src/d5/sub/file1link"
ln -s ../f1 "$src/d4/sym"
ln -s /nowhere "$src/d5/dangling"
find "$src" -exec touch -h -d '2018-05-01 12:00:00' {} +
base=$T/base.img
truncate -s 16M "$base"
"$BCACHEFS" format -q --force -U $UUID --source="$src" "$base" > /dev/null
"$BCACHEFS" fsck -f -n "$base" > /dev/null || { echo "base image not clean"; exit 1; }

# ---- helpers for the cases ----
IMG=$T/img
CASE=
new() {	# new NNN-name "what was done"
	CASE=$1
	DESC=$2
	want "${CASE%%-*}" || { CASE=; return 1; }
	cp --sparse=always "$base" "$IMG"
	return 0
}
P() { "$PLANT" "$IMG" "$@"; }		# plant through the engine, checkpointed
PJ() { "$PLANT" -j "$IMG" "$@"; }	# plant, left in the journal only
off_of() {	# off_of STRING [N]: byte offset of the N-th (default 1st) occurrence
	grep -obUa -- "$1" "$IMG" | sed -n "${2:-1}p" | cut -d: -f1
}
poke() {	# poke OFFSET HEXBYTES
	printf "$(echo "$2" | sed 's/../\\x&/g')" | dd of="$IMG" bs=1 seek="$1" conv=notrunc status=none
}
resum() { "$PLANT" "$IMG" resum-node "$1"; }
done_case() {
	[ -n "$CASE" ] || return 0
	local d=$dir/$CASE
	rm -rf "$d"; mkdir -p "$d"
	echo "$DESC" > "$d/name"
	zstd -q -19 "$IMG" -o "$d/image.zst"
	expect "$d"
	echo "$CASE"
}
C() {	# C NNN-name "desc" COMMANDS...: one case whose damage is the commands
	local n=$1 dsc=$2; shift 2
	new "$n" "$dsc" || return 0
	"$@"
	done_case
}

# byte-level helpers (python): key boundaries inside a live leaf node
cat > "$T/kb.py" <<'EOF'
import sys
img, cmd = sys.argv[1], sys.argv[2]
f = open(img, "r+b")
def rd(off, n):
    f.seek(off); return f.read(n)
def key_of(leaf, name, nbytes=16384):
    # the key (start, length) of the dirent named @name in the node at @leaf
    node = rd(leaf, nbytes)
    i = node.find(name.encode() + b"\0")
    while i >= 0:
        v = i - 9			# value start: d_inum(8) d_type(1) name
        for hdr in (node[80] * 8, 40):
            k = v - hdr
            if k >= 0 and node[k] * 8 == hdr + ((16 + len(name) + 7) // 8) * 8:
                return leaf + k, node[k] * 8
        i = node.find(name.encode() + b"\0", i + 1)
    sys.exit("no key for " + name)
if cmd == "key":		# key LEAF NAME -> "start len"
    print(*key_of(int(sys.argv[3]), sys.argv[4]))
elif cmd == "swap":		# swap LEAF NAME1 NAME2: exchange two keys of equal size
    a, la = key_of(int(sys.argv[3]), sys.argv[4])
    b, lb = key_of(int(sys.argv[3]), sys.argv[5])
    assert la == lb
    x, y = rd(a, la), rd(b, lb)
    f.seek(a); f.write(y); f.seek(b); f.write(x)
elif cmd == "find":		# find START LEN HEX: first offset of the bytes in [START, START+LEN)
    s, n = int(sys.argv[3]), int(sys.argv[4])
    i = rd(s, n).find(bytes.fromhex(sys.argv[5]))
    if i < 0: sys.exit("not found")
    print(s + i)
elif cmd == "rfind":		# rfind START LEN HEX: last offset
    s, n = int(sys.argv[3]), int(sys.argv[4])
    i = rd(s, n).rfind(bytes.fromhex(sys.argv[5]))
    if i < 0: sys.exit("not found")
    print(s + i)
elif cmd == "ptr":		# ptr OFF FIELD VALUE: change a field of the extent pointer word at OFF
    o = int(sys.argv[3]); w = int.from_bytes(rd(o, 8), "little")
    sh, bits = {"dev": (48, 8), "offset": (4, 44), "gen": (56, 8)}[sys.argv[4]]
    m = ((1 << bits) - 1) << sh
    w = (w & ~m) | ((int(sys.argv[5], 0) << sh) & m)
    f.seek(o); f.write(w.to_bytes(8, "little"))
EOF
kb() { python3 "$T/kb.py" "$IMG" "$@"; }
leaf() { "$PLANT" "$IMG" leaf-of "$@"; }	# leaf BTREE INUM OFFSET: byte offset of the live leaf
NODE=16384
hex() { printf '%016x' "$1" | sed 's/\(..\)\(..\)\(..\)\(..\)\(..\)\(..\)\(..\)\(..\)/\8\7\6\5\4\3\2\1/'; }	# le64

# ======================================================================
# the cases
# ======================================================================

# ---- dirents, inodes, link counts, reachability (5xx), through the engine
C 001-dirent-missing-inode "dirent /ghost points to inode 99999, which does not exist" \
	P dirent / ghost 99999 reg
C 002-nlink-too-high "regular file /f1 (2 links) has i_nlink 6" P inode /f1 nlink=5
C 003-nlink-too-low "/d5/file1 has 2 links, i_nlink says 1" P inode /d5/file1 nlink=0
C 004-dir-nlink-wrong "directory /d1 has i_nlink 9, should be 3" P inode /d1 nlink=7
C 005-unreachable-dir "the dirent of /d1/d2 removed: d2 (with d3 and a file) is unreachable" \
	P rm-dirent /d1 d2
C 006-unreachable-file "the only dirent of /d1/data removed" P rm-dirent /d1 data
C 007-isectors-wrong "/d1/data i_sectors 7, its extents hold 40" P inode /d1/data sectors=7
C 008-hash-before-slot "dirent /d5/file3 moved one slot before its hash (linear probing misses it)" \
	P mv-dirent /d5 file3 -1
C 009-hash-far-off "dirent /d4/sym moved to offset 5" P mv-dirent /d4 sym 5
C 010-root-not-dir "the root inode is a regular file" P inode 4096 mode=0100644
C 011-root-missing "the root inode deleted" P rm-inode 4096
C 012-lostfound-dirent-missing "the dirent of /lost+found removed" P rm-dirent / lost+found
C 013-lostfound-inode-missing "the inode of /lost+found deleted (its dirent stays)" P rm-inode /lost+found
C 014-lostfound-not-dir "/lost+found is a regular file" P inode /lost+found mode=0100644
C 015-dirent-dot "a dirent named . in the root, to /d1" P dirent / . /d1 dir
C 016-dirent-dotdot "a dirent named .. in /d1, to the root" P dirent /d1 .. 4096 dir
C 017-dirent-self "a dirent in /d1 pointing to /d1 itself" P dirent /d1 self /d1 dir
C 018-isize-dirty "/f1 has I_SIZE_DIRTY" P inode /f1 +size_dirty
C 019-isectors-dirty "/f1 has I_SECTORS_DIRTY" P inode /f1 +sectors_dirty
C 020-str-hash-changed "the str_hash type of /d5 changed: every entry at the wrong offset" \
	P inode /d5 str_hash=1
C 021-extent-missing-inode "an extent for inode 99999 (pointing at /f1's data)" P extent 99999 0 /f1
C 022-extent-past-isize "an extent of /f1 at sector 64, past i_size 6" P extent /f1 64 /f1
C 023-extent-dir "an extent in directory /d1" P extent /d1 0 /f1
C 024-dirent-in-file "a dirent inside regular file /f1" P dirent /f1 child /d1/d2/small reg
C 025-dirent-missing-dir "a dirent in directory 99998, which does not exist" P dirent 99998 orphan /f1 reg
C 026-xattr-missing-inode "an xattr of inode 99997, which does not exist" P xattr 99997 lost value
C 027-dir-two-links "a second dirent /d1again to directory /d1" P dirent / d1again /d1 dir
C 028-dtype-wrong "dirent /f1 says directory" P dirent-set / f1 dtype=dir
C 029-hash-duplicate "a second dirent named f1 in the root, one slot after the first" \
	P dirent / f1 /d4/sym lnk +1
C 030-dir-loop "/d1 unlinked from the root and linked from /d1/d2/d3: a loop cut off from the root" \
	P dirent /d1/d2/d3 loop /d1 dir + rm-dirent / d1
C 031-journal-nlink "/f1 i_nlink 6, only in the journal (not checkpointed)" PJ inode /f1 nlink=5
C 032-journal-dirent-missing-inode "dirent /jghost to a missing inode, only in the journal" \
	PJ dirent / jghost 99999 reg
C 033-symlink-past-size "symlink /d4/sym with i_size 0: its extent lies past the end" P inode /d4/sym size=0
C 034-isize-dirty-wrong-size "/d1/data has I_SIZE_DIRTY and i_size 100 (its data is 20000 bytes)" \
	P inode /d1/data +size_dirty size=100
C 035-dir-became-file "directory /d5/sub (2 entries) turned into a regular file" \
	P inode /d5/sub mode=0100644
C 036-unreachable-no-lostfound "lost+found removed (dirent and inode) and /d5/file2 unlinked" \
	P rm-inode /lost+found + rm-dirent / lost+found + rm-dirent /d5 file2
C 037-hardlink-unlinked "/d4/hardlink removed: /f1 keeps i_nlink 2" P rm-dirent /d4 hardlink
C 038-symlink-unreachable "symlink /d4/sym unlinked" P rm-dirent /d4 sym
C 039-dirent-to-dir-as-file "dirent /d1 says regular file" P dirent-set / d1 dtype=reg
C 040-dirent-retargeted "dirent /d5/file0 retargeted to /d5/file4 (file0 unreachable, file4 two links)" \
	P dirent-set /d5 file0 inum=/d5/file4
C 041-xattr-wrong-offset "xattr user.foo of /f1 at a wrong hash offset" P xattr /f1 moved val 3
C 042-many-nlinks-wrong "every inode of /d5 with i_nlink 4" \
	P inode /d5/file0 nlink=3 + inode /d5/file2 nlink=3 + inode /d5/file3 nlink=3 + inode /d5/big nlink=3
C 043-isectors-zero "/d5/big i_sectors 0" P inode /d5/big sectors=0
C 044-extents-removed "the extents of /d5/big deleted (i_sectors still counts them)" P rm-extents /d5/big
C 045-lostfound-unreachable-file "lost+found turned into a file and /d1/data unlinked" \
	P inode /lost+found mode=0100644 + rm-dirent /d1 data
C 046-root-file-and-dir-unlinked "root turned into a file and /d5 unlinked" \
	P inode 4096 mode=0100644 + rm-dirent / d5
C 047-journal-rm-dirent "the dirent of /d1/d2 removed in the journal only" PJ rm-dirent /d1 d2
C 048-journal-isectors "/d1/data i_sectors 1 in the journal only" PJ inode /d1/data sectors=1
C 049-dirent-to-deleted-inode "inode /d1/d2/small deleted, its dirent stays" P rm-inode /d1/d2/small

# ---- btree nodes (3xx), byte patches in the live leaves of the base image
jmagic=$("$BCACHEFS" list_journal "$base" | sed -n 's/.*jset magic 0x\([0-9a-f]*\).*/\1/p' | head -n 1)
flip() {	# flip OFFSET: invert one byte
	local b
	b=$(od -An -tu1 -j "$1" -N 1 "$IMG" | tr -d ' ')
	poke "$1" "$(printf '%02x' $((b ^ 0xff)))"
}
dkey() {	# dkey NAME: "start len" of the dirent key NAME in the live leaf of its btree
	kb key "$(leaf dirents "${2:-4096}" 0)" "$1"
}
c100() { L=$(leaf dirents / 0); set -- $(dkey dangling 4106); flip $(($1 + $2 - 3)); }
C 100-node-bad-csum "one byte of the dirents leaf changed, checksum not updated" c100
c101() { L=$(leaf xattrs 0 0); flip $((L + 16)); }
C 101-node-bad-magic "the magic of the xattrs root (a leaf) changed" c101
c102() { L=$(leaf xattrs 0 0); poke $((L + 24)) 02; resum $L; }
C 102-node-header-btree-id "the xattrs leaf says it belongs to the dirents btree (checksum fixed)" c102
c103() { L=$(leaf dirents 0 0); poke $((L + 64)) 01100000; resum $L; }
C 103-node-header-max-key "the dirents root's max_key inode has its low 32 bits set to 4097 (0xffffffff00001001; checksum fixed)" c103
c117() { L=$(leaf dirents 0 0); poke $((L + 64)) 0110000000000000; resum $L; }
C 117-node-header-max-key-4097 "the dirents root's max_key says 4097:U64_MAX (checksum fixed)" c117
c104() { L=$(leaf xattrs 0 0); poke $((L + 81)) 09; resum $L; }
C 104-node-bad-format "the xattrs leaf's key format has 9 fields (checksum fixed)" c104
c105() { L=$(leaf xattrs 0 0); poke $((L + 156)) 0000; resum $L; }
C 105-bset-bad-version "the bset of the xattrs leaf has version 0 (checksum fixed)" c105
c106() { L=$(leaf xattrs 0 0); poke $((L + 158)) ff7f; resum $L; }
C 106-bset-too-big "the bset of the xattrs leaf claims 32767 u64s (checksum fixed)" c106
c107() { set -- $(dkey dangling 4106); poke $(($1 + 2)) c8; resum $1; }
C 107-key-unknown-type "dirent /d5/dangling has key type 200 (checksum fixed)" c107
c108() { set -- $(dkey dangling 4106); poke $(($1 + $2 - 8)) 0000000000000000; resum $1; }
C 108-dirent-empty-name "the name of dirent /d5/dangling zeroed: an empty name (checksum fixed)" c108
c109() { L=$(leaf dirents 4106 0); kb swap $L file1 file2; resum $L; }
C 109-keys-out-of-order "dirents /d5/file1 and /d5/file2 swapped in their bset (checksum fixed)" c109
c110() { set -- $(dkey d1 4096); poke $(($1 + 0)) 00; resum $1; }
C 110-key-zero-u64s "dirent /d1's key has u64s 0 (checksum fixed)" c110
c111() {
	P new-inode 5000 hash_seed=0x4141414141414141 size=5 uid=7 + dirent / marker 5000 reg
	L=$(leaf inodes 5000 0)
	o=$(kb find $L $NODE 4141414141414141)
	poke $((o + 14)) 00; resum $L
}
C 111-inode-invalid "inode 5000 (/marker) has a varint field with a zero first byte (checksum fixed)" c111
c112() {
	L=$(leaf xattrs 0 0)
	o=$(kb find $L $NODE "$(printf foobar | od -An -tx1 | tr -d ' \n')")
	poke $((o - 3)) ff; resum $L
}
C 112-xattr-invalid "xattr user.foo of /f1 says its name is 255 bytes (checksum fixed)" c112
c113() {
	L=$(leaf extents 0 0)
	w=$(( 1 | (928 << 4) | (1 << 56) ))
	o=$(kb find $L $NODE "$(hex $w)")
	poke $o 0000000000000000; resum $L
}
C 113-extent-invalid "the pointer of /d1/d2/small's extent zeroed (checksum fixed)" c113
c114() { L=$(leaf inodes 0 0); poke $((L + 16)) 0000000000000000; }
C 114-root-unreadable "the magic of the inodes root zeroed: the inodes btree cannot be read" c114
c115() { set -- $(dkey dangling 4106); poke $(($1 + $2 - 8)) 2f2f2f2f2f2f2f2f; resum $1; }
C 115-dirent-slash-name "dirent /d5/dangling renamed to a name with slashes (checksum fixed)" c115
c116() { L=$(leaf alloc 0 0); flip $((L + 200)); }
C 116-alloc-node-bad-csum "a byte of the alloc btree's leaf changed, checksum not updated" c116
c118() { c111; c100; }
C 118-inode-invalid-dirents-bad-csum "inode 5000 invalid (as 111) and a byte of the dirents leaf changed (as 100): the inode repair's commit reads the dirents leaf first; its bad checksum is still reported and fixed in the same run" c118

# ---- journal (2xx): damage in entries left by a commit that was not checkpointed
cat >> "$T/kb.py" <<'EOF'
if cmd == "jset":		# jset BYTE MAGIC: start of the journal entry holding image byte BYTE
    o, m = int(sys.argv[3]) // 512 * 512, bytes.fromhex(sys.argv[4])[::-1]
    while o >= 0 and rd(o + 16, 8) != m:
        o -= 512
    if o < 0: sys.exit("no jset")
    print(o)
elif cmd == "jsets":		# jsets MAGIC: every journal entry start
    m = bytes.fromhex(sys.argv[3])[::-1]
    f.seek(0, 2); size = f.tell()
    for o in range(0, size, 512):
        if rd(o + 16, 8) == m: print(o)
EOF
jset_of() { kb jset "$1" "$jmagic"; }
resumj() { "$PLANT" "$IMG" resum-jset "$1"; }
c200() { PJ dirent / jmarker 99999 reg; o=$(off_of jmarker); flip $((o + 1)); }
C 200-journal-bad-csum "the last journal entry (dirent /jmarker, not checkpointed) has a bad checksum" c200
c201() { PJ dirent / jmarker 99999 reg; j=$(jset_of $(off_of jmarker)); poke $((j + 32)) 63000000; resumj $j; }
C 201-journal-bad-version "the last journal entry has version 99 (checksum fixed)" c201
c202() {
	PJ dirent / jmarker 99999 reg; o=$(off_of jmarker); j=$(jset_of $o)
	poke $((o - 9 - 40 + 2)) c8; resumj $j
}
C 202-journal-key-bad-type "the journalled dirent /jmarker has key type 200 (checksum fixed)" c202
c203() {
	PJ dirent / jm1 99999 reg + dirent / jm2 99998 reg + dirent / jm3 99997 reg
	j=$(jset_of $(off_of jm2)); poke $((j + 16)) 0000000000000000
}
C 203-journal-gap "the middle of three journal entries has its magic zeroed: entries missing" c203
c204() {
	PJ dirent / jmarker 99999 reg; o=$(off_of jmarker); j=$(jset_of $o)
	poke $((j + 40)) ffff0000; resumj $j
}
C 204-journal-u64s-too-big "the last journal entry claims 65535 u64s (checksum fixed)" c204
c205() { for j in $(kb jsets "$jmagic"); do poke $((j + 16)) 0000000000000000; done; }
C 205-journal-empty "every journal entry's magic zeroed (filesystem marked clean)" c205
c206() { PJ dirent / jmarker 99999 reg; for j in $(kb jsets "$jmagic"); do poke $((j + 16)) 0000000000000000; done; }
C 206-journal-empty-unclean "every journal entry's magic zeroed in an unclean filesystem" c206
c207() {
	PJ dirent / jmarker 99999 reg; o=$(off_of jmarker); j=$(jset_of $o)
	poke $((o - 9 - 40)) 00; resumj $j
}
C 207-journal-key-zero-u64s "the journalled dirent /jmarker has u64s 0 (checksum fixed)" c207

# ---- superblock (1xx)
sbmagic=c68573f64e1a45ca8265f57f48ba6d81
c300() { flip $((4096 + 72)); }
C 300-sb-primary-bad-csum "a label byte of the primary superblock changed, checksum not updated" c300
c301() { o=$(kb find 8192 $((4 << 20)) $sbmagic); o=$((o - 24)); flip $((o + 72)); }
C 301-sb-backup-bad-csum "a label byte of the backup superblock changed, checksum not updated" c301
c302() { poke $((4096 + 24)) 00; }
C 302-sb-primary-bad-magic "the primary superblock's magic changed" c302
c303() { o=$(kb find 8192 $((4 << 20)) $sbmagic); o=$((o - 24)); poke $((o + 72)) 6f746865726c6162656c; "$PLANT" "$IMG" resum-sb $o; }
C 303-sb-backup-differs "the backup superblock has another label (checksum fixed)" c303
c304() { poke $((4096 + 72)) 6f746865726c6162656c; "$PLANT" "$IMG" resum-sb 4096; }
C 304-sb-primary-differs "the primary superblock has another label than the backup (checksum fixed)" c304
c305() {
	rm -f "$IMG"; truncate -s 16M "$IMG"
	"$BCACHEFS" format -q --force -U $UUID --no_initialize "$IMG" > /dev/null
}
C 305-sb-not-initialized "format --no_initialize: superblocks only" c305

# ---- allocation (4xx): extents with changed pointers, through the engine
ax() {	# ax PTR-CHANGES...: new file /ax (8 sectors) whose extent is /f1's with its pointer changed
	P new-inode 5100 size=4096 sectors=8 + dirent / ax 5100 reg + extent 5100 0 /f1 "$@"
}
C 400-ptr-gen-stale "extent of /ax with a pointer gen one older than its bucket's" ax gen=-1
C 401-ptr-gen-newer "extent of /ax with a pointer gen one newer than its bucket's" ax gen=+1
axb() {	# axb FIELD VALUE: /ax by the engine, then its pointer patched in the leaf (the engine refuses such keys)
	ax
	local L w o
	L=$(leaf extents 5100 0)
	w=$("$BCACHEFS" list -b extents "$IMG" | sed -n 's/^.* 5100:8 .*ptr: 0:\([0-9]*\) gen \([0-9]*\).*/\1 \2/p')
	set -- "$1" "$2" $w
	[ "$2" = dirents-leaf ] && set -- "$1" $(( $(leaf dirents 0 0) / 512 )) "$3" "$4"
	o=$(kb rfind $L $NODE "$(hex $(( 1 | ($3 << 4) | ($4 << 56) )))")
	kb ptr $o "$1" "$2"; resum $L
}
C 402-ptr-dev-missing "extent of /ax pointing at device 3 (byte patch, checksum fixed)" axb dev 3
C 403-ptr-past-end "extent of /ax pointing past the end of the device (byte patch, checksum fixed)" axb offset 40000
c404() { axb offset dirents-leaf; }
C 404-ptr-into-btree-bucket "extent of /ax pointing into a btree node's bucket" c404
c405() { PJ rm-key alloc 0 $(( $("$BCACHEFS" list -b extents "$IMG" | sed -n 's/.*ptr: 0:\([0-9]*\) .*/\1/p' | head -n 1) / 32 )); }
C 405-alloc-key-missing "the alloc key of a data bucket deleted (in the journal)" c405
c406() { PJ rm-extents /d5/big; }
C 406-journal-extents-freed "the extents of /d5/big deleted in the journal only (alloc keys still count them)" c406

# ---- a dirents btree of several leaves under an interior root
base2=$T/base2.img
mkbase2() {
	[ -f "$base2" ] && return 0
	mkdir -p "$T/src2/many"
	for i in $(seq 1 700); do : > "$T/src2/many/entry-$i"; done
	echo x > "$T/src2/top"
	find "$T/src2" -exec touch -h -d '2018-05-01 12:00:00' {} +
	truncate -s 16M "$base2"
	"$BCACHEFS" format -q --force -U $UUID --source="$T/src2" "$base2" > /dev/null
}
new2() { mkbase2; cp --sparse=always "$base2" "$IMG"; }
nodes() {	# nodes LEVEL: byte offsets of the dirents nodes of that level, in key order
	"$BCACHEFS" list -b dirents -m nodes "$IMG" 2>/dev/null |
		awk -v l="$1" '/^l [0-9]+ / { lv = $2 } /^    bsets .*dev 0 sector/ { if (lv == l) print $NF * 512 }'
}
leaves() { nodes 0; }
c500() { new2; set -- $(leaves); flip $(($2 + 16)); }
C 500-leaf-bad-magic "the magic of the second dirents leaf (under an interior root) changed" c500
c501() { new2; set -- $(leaves); poke $(($2 + 32 + 4)) 0100000000000000; resum $2; }
C 501-leaf-min-key-wrong "the second dirents leaf's min_key offset changed (checksum fixed): ranges do not match" c501
c502() { new2; set -- $(leaves); poke $(($2 + 52 + 4)) 0100000000000000; resum $2; }
C 502-leaf-max-key-wrong "the second dirents leaf's max_key offset changed (checksum fixed)" c502
c503() { new2; set -- $(nodes 1); flip $(($1 + 300)); }
C 503-interior-bad-csum "a byte of the dirents btree's interior root changed, checksum not updated" c503
c504() { new2; set -- $(nodes 1); poke $(($1 + 16)) 0000000000000000; }
C 504-interior-bad-magic "the magic of the dirents btree's interior root zeroed" c504

# ---- more superblock and allocation cases
sbs() { echo 4096; echo $(( $(kb find 8192 $((4 << 20)) $sbmagic) - 24 )); }	# both copies
c306() { poke $((4096 + 140)) 00000000; "$PLANT" "$IMG" resum-sb 4096; }
C 306-sb-primary-time-precision "the primary superblock's time_precision is 0 (checksum fixed)" c306
c307() { for o in $(sbs); do poke $((o + 140)) 00000000; "$PLANT" "$IMG" resum-sb $o; done; }
C 307-sb-time-precision-both "both superblocks have time_precision 0 (checksums fixed)" c307
c308() { for o in $(sbs); do poke $((o + 123)) 02; "$PLANT" "$IMG" resum-sb $o; done; }
C 308-sb-nr-devices "both superblocks say 2 devices (one member entry; checksums fixed)" c308
c309() {
	rm -f "$IMG" "$T/dev1"; truncate -s 16M "$IMG" "$T/dev1"
	"$BCACHEFS" format -q --force -U $UUID --source="$src" "$IMG" "$T/dev1" > /dev/null
	rm -f "$T/dev1"
}
C 309-sb-member-missing "the first device of a two-device filesystem alone (the second is missing)" c309
c310() {	# the user-data replicas entry turned into a cached one, in both copies
	for o in $(sbs); do
		python3 - "$IMG" $o <<'EOF'
import sys, struct
f = open(sys.argv[1], "r+b"); o = int(sys.argv[2])
f.seek(o); sb = bytearray(f.read(65536))
u64s = struct.unpack_from("<I", sb, 124)[0]
p, end = 752, 752 + u64s * 8
while p < end:
    fu64s, ftype = struct.unpack_from("<II", sb, p)
    if ftype == 3:
        q, fend = p + 8, p + fu64s * 8
        while q < fend and sb[q]:
            if sb[q] == 4:		# user data
                sb[q] = 5; break
            q += 2 + sb[q + 1]
        break
    p += fu64s * 8
f.seek(o); f.write(sb)
EOF
		"$PLANT" "$IMG" resum-sb $o
	done
}
C 310-replicas-entry-missing "the user-data replicas entry of the superblock says cached (checksums fixed)" c310
c312() { P inode /d5 mode=0100644 + dirent-set / d5 dtype=reg; }
C 312-dirents-for-file "/d5 (with entries) turned into a regular file, d_type updated to match" c312
c313() { P inode /d4/sym size=0 sectors=0 +size_dirty; }
C 313-symlink-size-dirty "symlink /d4/sym: i_size 0, i_sectors 0, I_SIZE_DIRTY" c313

readme_xfail
