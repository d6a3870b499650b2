# Mark and sweep (doc/fsck.md §10) as fsck -f -n runs it.
#
# g3_merges_and_stale has 128 stale pointers: cached pointers whose buckets
# the allocator invalidated (gen + 1). That is how cached data is given up
# (doc/engine.md §8.5: buckets holding only cached data are available, invalidating
# them discards it), so a stale *cached* pointer is not an error: GC only
# skips it (doc/fsck.md §10 step 4). The image must check clean.
#
# Missing replicas entries (doc/format.md §2.9) are planted by removing one entry from
# every superblock copy of a copy of g3 (checksums recomputed); fsck -f -n
# must report it and leave the image untouched; fsck -y adds it back
# (exit 1) and fsck -f -n is then clean.
set -e
. "$(dirname "$0")/../lib.sh"

# no problem of the allocation (4xx) or filesystem (5xx) checks
no_gc_problems() {	# NAME IMAGE...
	n=$1; shift
	set +e
	"$BCACHEFS" fsck -f -n --json "$@" > "$WORK/$n.json" 2> "$WORK/$n.err"
	rc=$?
	set -e
	crashed $rc && fail "$n: crashed ($rc)"
	if grep -q '"id": [45][0-9][0-9],' "$WORK/$n.json"; then
		cat "$WORK/$n.err"
		fail "$n: allocation/filesystem problems on a clean image"
	fi
	echo "ok $n"
}

g3=$(golden_images g3_merges_and_stale)
nstale=$("$BCACHEFS" list -b extents "$g3" | grep -c "cached stale" || true)
[ "$nstale" -ge 100 ] || fail "g3: expected stale cached pointers, list shows $nstale"
"$BCACHEFS" fsck -f -n "$g3" > "$WORK/g3.out" 2>&1 || { cat "$WORK/g3.out"; fail "g3: fsck -f -n exited $?"; }
no_gc_problems g3 "$g3"
# fsck -y leaves the stale cached pointers alone and writes nothing
cp --sparse=always "$g3" "$WORK/g3y.img"
before=$(cksum < "$WORK/g3y.img")
"$BCACHEFS" fsck -y "$WORK/g3y.img" > "$WORK/g3y.out" 2>&1 || { cat "$WORK/g3y.out"; fail "g3: fsck -y exited $?"; }
[ "$before" = "$(cksum < "$WORK/g3y.img")" ] || fail "g3: fsck -y changed a clean image"
rm -f "$WORK/g3y.img"

# drop_replicas IMAGE DATA_TYPE: remove the first replicas entry of that
# type from every superblock copy (crc32c superblocks only).
drop_replicas() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
tab = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    tab.append(c)
def crc32c(data):
    c = 0xffffffff
    for b in data:
        c = tab[(c ^ b) & 0xff] ^ (c >> 8)
    return c ^ 0xffffffff
path, drop = sys.argv[1], int(sys.argv[2])
f = open(path, 'r+b')
f.seek(8 * 512); sb = f.read(4096)
nr, offs = sb[240 + 18], struct.unpack_from('<61Q', sb, 240 + 24)
for o in sorted(set([8] + list(offs[:nr]))):
    f.seek(o * 512); sb = bytearray(f.read(65536))
    end = 752 + struct.unpack_from('<I', sb, 124)[0] * 8
    assert crc32c(bytes(sb[16:end])) == struct.unpack_from('<Q', sb, 0)[0], "not crc32c"
    p, done = 752, False
    while p < end:
        fu64s, ftype = struct.unpack_from('<II', sb, p)
        if ftype == 3:
            e, fend = p + 8, p + fu64s * 8
            while e + 2 <= fend and sb[e]:
                n = 2 + sb[e + 1]
                if sb[e] == drop:
                    sb[e:fend] = sb[e + n:fend] + bytes(n)
                    done = True
                    break
                e += n
        p += max(fu64s, 1) * 8
    assert done, "no such replicas entry"
    struct.pack_into('<QQ', sb, 0, crc32c(bytes(sb[16:end])), 0)
    f.seek(o * 512); f.write(sb[:end])
PY
}

if command -v python3 >/dev/null; then
	# type: 3 btree, 4 user data, 5 cached
	for t in 3 4 5; do
		cp "$g3" "$WORK/r$t.img"
		drop_replicas "$WORK/r$t.img" $t
		before=$(cksum < "$WORK/r$t.img")
		set +e
		"$BCACHEFS" fsck -f -n "$WORK/r$t.img" > "$WORK/r$t.out" 2>&1
		rc=$?
		set -e
		cat "$WORK/r$t.out"
		[ "$before" = "$(cksum < "$WORK/r$t.img")" ] || fail "replicas $t: image changed"
		[ $rc = 4 ] || fail "replicas $t: exit $rc, want 4"
		grep -q "not marked as containing replicas (type $t " "$WORK/r$t.out" ||
			fail "replicas $t: not reported"
		# one report per missing entry, not one per key
		[ "$(grep -c "not marked as containing replicas" "$WORK/r$t.out")" = 1 ] ||
			fail "replicas $t: reported more than once"
		# fsck -y adds the entry to every superblock; fsck -f -n is then clean
		set +e
		"$BCACHEFS" fsck -y "$WORK/r$t.img" > "$WORK/r$t.y" 2>&1
		rc=$?
		set -e
		cat "$WORK/r$t.y"
		[ $rc = 1 ] || fail "replicas $t: fsck -y exit $rc, want 1"
		"$BCACHEFS" fsck -f -n "$WORK/r$t.img" > "$WORK/r$t.n2" 2>&1 ||
			{ cat "$WORK/r$t.n2"; fail "replicas $t: fsck -f -n after fsck -y exited $?"; }
		rm -f "$WORK/r$t.img"
	done
else
	echo "python3 missing: replicas plant skipped"
fi
rm -f "$g3"

# clean images: one device, two devices, replicated metadata and data, a
# durability-0 cache device
for c in a_default_64M e1_2dev b19_replicas2 b20_data_replicas2 b24_durability0_cache b09_lz4; do
	[ -d "$GOLDEN/$c" ] || continue
	imgs=$(golden_images "$c")
	no_gc_problems "$c" $imgs
	rm -rf "$WORK/$c"
done
