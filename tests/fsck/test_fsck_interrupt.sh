# Interrupted repair: an fsck -y cut off at any
# write leaves an image that the next fsck -y repairs to the same state as
# an uninterrupted repair.
#
# Images: the golden semantic corruptions (z2_semantic/*/dev0.img) and a
# few images damaged by build/tests/damage (tests/fsck/damage.c) that one
# fsck -y repairs: the first damage seeds (1..300) that hit the inodes,
# dirents or xattrs btree of tests/fsck/interrupt-orig.img.zst, a fixed
# image (16 MiB, 4k btree nodes, `format --source` of the tree of
# tests/fsck/damage_tree.py interrupt; regenerate with
# tests/fsck/make-damage-images.sh), so every run picks the same seeds and
# the same damaged images. For each image:
#   1. the reference: fsck -y on a copy, under strace to count its device
#      writes W (every write goes through dev_pwrite(): one pwrite64 each);
#      it must leave fsck -f -n clean;
#   2. for N sampled in 0..W-1 (all of them when W <= 16):
#      BCH_FAULT_WRITES=N fsck -y (the writes after the N-th fail with EIO,
#      as if the machine had stopped there; libbcachefs/dev/dev.c), then fsck -y
#      without faults, then fsck -f -n must exit 0, and `bcachefs list -b B`
#      of inodes, dirents, xattrs and extents must equal the reference's
#      after normalising: inode timestamps and sizes (u64s) of inode keys,
#      inode numbers not in the damaged image (a lost+found made by the
#      repair) numbered in order, and the hash offsets of the dirents in
#      such new directories (their hash seed is random).
# A faulted run must not crash or hang, and must say that writing failed
# (exit code with bit 8) when a write did fail.
#
# Knobs: INTERRUPT_POINTS (max points per image, default 16; TEST_QUICK: 6),
# INTERRUPT_DAMAGED (damaged images, default 4; TEST_QUICK: 2),
# INTERRUPT_NEW_IMAGE=1 to damage a freshly formatted image of the same tree
# instead of the fixture (random UUID, hash seeds and times: other seeds
# and damage; exploratory runs only; the image is kept in $WORK/failures/
# base.img.zst when the test fails). A failing damaged image is kept in
# $WORK/failures/NAME.img.zst with NAME.log (the runner keeps $WORK on
# failure); with the fixture, damage-seed-N is also
#   zstd -d tests/fsck/interrupt-orig.img.zst -o t.img; build/tests/damage t.img N
set -u
. "$(dirname "$0")/../lib.sh"

command -v strace > /dev/null || { echo "strace missing: skipped"; exit 77; }
test_tool damage
DAMAGE=${DAMAGE:-$TOOL}
if [ -n "${TEST_QUICK:-}" ]; then
	maxpts=${INTERRUPT_POINTS:-6}; ndamaged=${INTERRUPT_DAMAGED:-2}
else
	maxpts=${INTERRUPT_POINTS:-16}; ndamaged=${INTERRUPT_DAMAGED:-4}
fi
tmo=20

scratch=$(mktemp -d /dev/shm/bcachefs-interrupt.XXXXXX 2>/dev/null) || scratch=$(mktemp -d "$WORK/scratch.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
trap 'exit 1' HUP INT PIPE TERM
mkdir -p "$WORK/failures"
results=$WORK/results.txt
: > "$results"

# state IMAGE OUT: the keys compared, one file per btree in OUT.*
state() {
	for _b in inodes dirents xattrs extents; do
		"$BCACHEFS" list -b $_b "$1" > "$2.$_b" 2>&1 || echo "list -b $_b: exit $?" >> "$2.$_b"
	done
}

# normalise ORIG_INODES_LIST PREFIX: print the keys of PREFIX.{inodes,
# dirents,xattrs,extents} normalised (see above), each line tagged with its
# btree, sorted. awk, not python: this runs a few hundred times.
normalise() {
	awk '
	function keyino(l,   a) { if (l !~ /^u64s [0-9]+ type [0-9]+ [0-9]+:[0-9]+ /) return ""; split(l, a, " "); sub(/:.*/, "", a[5]); return a[5] }
	function nm(n) { return (n in ren) ? ren[n] : n }
	FNR == 1 { fi = FILENAME == ARGV[1] ? 1 : FILENAME ~ /\.inodes$/ ? 2 : FILENAME ~ /\.dirents$/ ? 3 : FILENAME ~ /\.xattrs$/ ? 4 : 5 }
	fi == 1 { i = keyino($0); if (i != "") old[i] = 1; next }
	fi == 2 { i = keyino($0); if (i != "" && !(i in old) && !(i in isnew)) { isnew[i] = 1; nn[++k] = i + 0 } }
	{ line[fi, FNR] = $0; nl[fi] = FNR }
	END {
		for (x = 2; x <= k; x++) { v = nn[x]; for (y = x - 1; y >= 1 && nn[y] > v; y--) nn[y + 1] = nn[y]; nn[y + 1] = v }
		for (x = 1; x <= k; x++) ren[nn[x] ""] = "NEW" x
		split("inodes dirents xattrs extents", bt, " ")
		for (f = 2; f <= 5; f++) for (j = 1; j <= nl[f]; j++) {
			l = line[f, j]; b = bt[f - 1]
			i = keyino(l)
			if (i == "") { print b ": " l; continue }
			split(l, w, " ")
			pos = w[5]; off = pos; sub(/^[0-9]+:/, "", off)
			rest = l; sub(/^u64s [0-9]+ type [0-9]+ [0-9]+:[0-9]+ /, "", rest)
			u = "u64s " w[2] " "
			if (b == "inodes") {
				u = ""
				gsub(/bi_atime: [0-9]+/, "bi_atime: T", rest); gsub(/bi_ctime: [0-9]+/, "bi_ctime: T", rest)
				gsub(/bi_mtime: [0-9]+/, "bi_mtime: T", rest); gsub(/bi_otime: [0-9]+/, "bi_otime: T", rest)
			} else if (b == "dirents" && match(rest, / -> [0-9]+$/)) {
				tgt = substr(rest, RSTART + 4); head = substr(rest, 1, RSTART - 1)
				# the name: after the last ": " of the key part
				p = 0; t = head; while ((q = index(t, ": ")) > 0) { p += q + 1; t = substr(t, q + 2) }
				name = t; pre = substr(head, 1, p)
				base = name; sfx = ""
				if (match(name, /\.[0-9]+$/)) { base = substr(name, 1, RSTART - 1); sfx = substr(name, RSTART) }
				if (base ~ /^[0-9]+$/ && (base in ren)) name = ren[base] sfx
				rest = pre name " -> " nm(tgt)
				if (i in ren) off = "*"
			}
			print b ": " u "type " w[4] " " nm(i) ":" off " " rest
		}
	}' "$1" "$2.inodes" "$2.dirents" "$2.xattrs" "$2.extents" | LC_ALL=C sort
}

nimg=0 npts=0 nfail=0
t0=$(date +%s)

# check_image NAME IMAGE: the whole protocol on one damaged image
check_image() {
	_n=$1 _img=$2
	cp --sparse=always "$_img" "$scratch/ref.img"
	# (LeakSanitizer does not run under ptrace: leaks are left to the faulted runs)
	ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" \
		strace -f -qq -e trace=pwrite64 -o "$scratch/strace" \
		timeout $tmo "$BCACHEFS" fsck -y "$scratch/ref.img" > "$scratch/ref.out" 2>&1
	_rc=$?
	if [ $_rc -ge 124 ]; then
		nfail=$((nfail + 1))
		echo "FAIL  $_n: uninterrupted fsck -y: exit $_rc (crash or hang): $(grep -m1 -E 'ERROR|runtime error|Assertion' "$scratch/ref.out")" >> "$results"
		return
	fi
	_w=$(grep -c 'pwrite64(' "$scratch/strace")
	timeout $tmo "$BCACHEFS" fsck -f -n "$scratch/ref.img" > "$scratch/ref.n" 2>&1
	_rcn=$?
	if [ $_rc -ge 8 ] || [ $_rcn != 0 ] || [ "$_w" = 0 ]; then
		echo "SKIP  $_n: the uninterrupted repair does not do it in one run (fsck -y $_rc, fsck -f -n $_rcn, $_w writes)" >> "$results"
		return
	fi
	nimg=$((nimg + 1))
	"$BCACHEFS" list -b inodes "$_img" > "$scratch/orig.inodes" 2>&1
	state "$scratch/ref.img" "$scratch/ref"
	normalise "$scratch/orig.inodes" "$scratch/ref" > "$scratch/ref.norm"

	# the points: every write when there are few, else spread over 0..W-1
	if [ "$_w" -le "$maxpts" ]; then
		_pts=$(seq 0 $((_w - 1)))
	else
		_pts=$(awk -v w="$_w" -v k="$maxpts" 'BEGIN { for (i = 0; i < k; i++) print int(i * (w - 1) / (k - 1)) }' | uniq)
	fi
	_bad=0 _list=""
	for _p in $_pts; do
		npts=$((npts + 1))
		_f=$scratch/f.img _why=""
		cp --sparse=always "$_img" "$_f"
		BCH_FAULT_WRITES=$_p timeout $tmo "$BCACHEFS" fsck -y "$_f" > "$scratch/f1.out" 2>&1
		_r1=$?
		if [ $_r1 = 124 ]; then _why="faulted fsck -y hangs"
		elif [ $_r1 -ge 128 ]; then _why="faulted fsck -y crashed (exit $_r1)"
		elif [ $((_r1 & 8)) = 0 ]; then _why="faulted fsck -y exit $_r1: write error not reported"
		else
			timeout $tmo "$BCACHEFS" fsck -y "$_f" > "$scratch/f2.out" 2>&1
			_r2=$?
			timeout $tmo "$BCACHEFS" fsck -f -n "$_f" > "$scratch/f3.out" 2>&1
			_r3=$?
			if [ $_r2 = 124 ] || [ $_r3 = 124 ]; then _why="fsck after the fault hangs"
			elif [ $_r2 -ge 8 ]; then _why="fsck -y after the fault: exit $_r2: $(head -n 1 "$scratch/f2.out")"
			elif [ $_r3 != 0 ]; then _why="fsck -f -n after the repair: exit $_r3: $(head -n 1 "$scratch/f3.out")"
			else
				state "$_f" "$scratch/f"
				normalise "$scratch/orig.inodes" "$scratch/f" > "$scratch/f.norm"
				if ! cmp -s "$scratch/ref.norm" "$scratch/f.norm"; then
					_why="keys differ from the uninterrupted repair: $(diff "$scratch/ref.norm" "$scratch/f.norm" | grep '^[<>]' | head -n 2 | cut -c1-200 | tr '\n' ' ')"
				fi
			fi
		fi
		if [ -n "$_why" ]; then
			_bad=$((_bad + 1)); nfail=$((nfail + 1))
			echo "FAIL  $_n: BCH_FAULT_WRITES=$_p: $_why" >> "$results"
			{ echo "=== $_n BCH_FAULT_WRITES=$_p: $_why"; echo "--- faulted fsck -y: exit $_r1"; cat "$scratch/f1.out"
			  [ -f "$scratch/f2.out" ] && { echo "--- fsck -y"; cat "$scratch/f2.out"; }
			  [ -f "$scratch/f3.out" ] && { echo "--- fsck -f -n"; cat "$scratch/f3.out"; }
			} >> "$WORK/failures/$_n.log"
			[ -f "$WORK/failures/$_n.img.zst" ] || zstd -q -1 "$_img" -o "$WORK/failures/$_n.img.zst"
		fi
		rm -f "$scratch/f2.out" "$scratch/f3.out"
		_list="$_list $_p"
	done
	echo "$( [ $_bad = 0 ] && echo 'ok   ' || echo 'bad  ')$_n: $_w writes (fsck -y exit $_rc), interrupted after$_list: $_bad failed" >> "$results"
}

# ---- the golden semantic corruptions ----
for d in "$GOLDEN"/z2_semantic/c*/; do
	[ -f "$d/dev0.img.zst" ] || continue
	c=$(basename "$d")
	zstd -qdf --sparse "$d/dev0.img.zst" -o "$scratch/$c.img" || fail "cannot decompress $c"
	check_image "$c" "$scratch/$c.img"
	rm -f "$scratch/$c.img"
done

# ---- images damaged by the damage tool ----
base=$scratch/base.img
if [ "${INTERRUPT_NEW_IMAGE:-0}" = 1 ]; then
	command -v python3 > /dev/null || { echo "python3 missing: skipped"; exit 77; }
	sh "$TESTDIR/make-damage-images.sh" --image interrupt "$base" > "$WORK/format.out" 2>&1 ||
		{ cat "$WORK/format.out"; fail "cannot make a fresh image"; }
	echo "damaged images from a fresh image (INTERRUPT_NEW_IMAGE=1)" >> "$results"
	zstd -q -1 "$base" -o "$WORK/failures/base.img.zst"
else
	zstd -qdf --sparse "$TESTDIR/interrupt-orig.img.zst" -o "$base" || fail "cannot decompress interrupt-orig.img.zst"
fi
# seeds whose damage one fsck -y repairs, preferring the filesystem btrees
found=0 seed=1
while [ $found -lt "$ndamaged" ] && [ $seed -le 300 ]; do
	cp --sparse=always "$base" "$scratch/dmg.img"
	if "$DAMAGE" "$scratch/dmg.img" $seed > "$scratch/dmg.out" 2>&1 &&
	   grep -Eq '^RANGE (inodes|dirents|xattrs)' "$scratch/dmg.out"; then
		cp --sparse=always "$scratch/dmg.img" "$scratch/try.img"
		timeout $tmo "$BCACHEFS" fsck -y "$scratch/try.img" > /dev/null 2>&1
		r=$?
		timeout $tmo "$BCACHEFS" fsck -f -n "$scratch/try.img" > /dev/null 2>&1
		if [ $r = 1 ] && [ $? = 0 ]; then
			found=$((found + 1))
			echo "damage seed $seed: $(grep '^RANGE' "$scratch/dmg.out")" >> "$results"
			check_image "damage-seed-$seed" "$scratch/dmg.img"
		fi
	fi
	seed=$((seed + 1))
done
[ $found -gt 0 ] || echo "SKIP  no damage seed in 1..300 is repaired by one fsck -y" >> "$results"

cat "$results"
echo "$nimg images, $npts interruption points, $nfail failed, in $(( $(date +%s) - t0 ))s"
[ $nimg -gt 0 ] || fail "no image to interrupt"
[ $nfail = 0 ] || fail "$nfail interrupted repairs did not end like the uninterrupted one (logs in $WORK/failures)"
rm -rf "$WORK/failures"
exit 0
