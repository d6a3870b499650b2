#!/bin/sh
# Crash safety of format and format --source: with BCH_FAULT_WRITES=N the
# I/O layer (libbcachefs/dev/dev.c) fails every write after the first N, as if
# the machine had stopped there. For N sampled over the whole range of
# writes a run does (every N for plain format), the result must be one of:
#   - format exit 0 (only when every write was done): fsck -f -n clean and
#     extract gives the source tree back (nothing reported done is lost);
#   - format exit 1 with an error on stderr, and then the devices are
#     refused clearly (fsck -f -n exit 8 with a message), or show the
#     valid-but-uninitialised filesystem of --no_initialize (fsck -f -n exit 4,
#     "never initialized"; fsck -y then initialises it and fsck -f -n is
#     clean), or open and pass fsck -f -n (and extract works);
#   - when format says the filesystem is "valid but uninitialised", fsck -f -n
#     must agree (and likewise for "marked initialised", "no filesystem").
# Tolerated, counted as "torn" (a crash between the writes of the
# superblock copies, which no write order avoids): fsck -f -n exit 4 reporting
# only that a backup superblock differs from the one in use, or (several
# devices, the new superblock on some of them) the journal replicas entry
# of the devices it was found on (what the 2018 kernel reports too); then
# fsck -y must repair it to clean.
# Scenarios: plain format (1 device; 2 devices --replicas=2), --source on 1
# device, --source --replicas=2 on 2 devices that hold an older bcachefs
# (--force), --source --encrypted.
. "$TESTDIR/../lib.sh"
command -v python3 > /dev/null || { echo "python3 needed"; exit 77; }
cd "$WORK" || exit 1
nsmall=300 samples=10 plain=100
[ -n "${TEST_QUICK:-}" ] && nsmall=100 samples=6 plain=8
python3 "$TESTDIR/gen_tree.py" src $nsmall 2 > /dev/null 2>&1 || fail "cannot generate the source tree"
mkdir -p old && echo "an older filesystem" > old/file && head -c 3M /dev/urandom > old/data
printf 'crash-pass\n' > pass
bad=0

# fresh IMAGES...: empty image files, or copies of the older filesystem
fresh() {
	for f in "$@"; do
		if [ -n "$base" ]; then
			cp --sparse=always "base.$f" "$f"
		else
			rm -f "$f"; truncate -s 128M "$f"
		fi
	done
}

# try N: format with writes cut off after N, then judge the result
try() {
	n=$1
	fresh $imgs
	BCH_FAULT_WRITES=$n "$BCACHEFS" format -q --force $opts $imgs > fmt.out 2> fmt.err < /dev/null
	rc=$?
	crashed $rc && { cat fmt.err; fail "$scen N=$n: format crashed (exit $rc)"; }
	"$BCACHEFS" fsck -f -n $popt $imgs > fsck.out 2>&1
	frc=$?
	crashed $frc && { cat fsck.out; fail "$scen N=$n: fsck crashed (exit $frc)"; }
	if [ $rc = 0 ]; then
		nok=$((nok + 1))
		[ $frc = 0 ] || { echo "FAIL $scen N=$n: format succeeded, fsck -f -n exit $frc"; head -n 5 fsck.out; bad=1; return; }
		if [ -n "$src" ]; then
			rm -rf copy
			"$BCACHEFS" extract $popt $imgs / copy > ext.out 2>&1 &&
				python3 "$TESTDIR/tree_diff.py" "$src" copy > cmp.out 2>&1 ||
				{ echo "FAIL $scen N=$n: format succeeded, the tree is not all there"; tail -n 5 ext.out cmp.out; bad=1; }
		fi
		return
	fi
	[ $rc = 1 ] || { echo "FAIL $scen N=$n: format exit $rc"; bad=1; }
	[ -s fmt.err ] || { echo "FAIL $scen N=$n: format failed without a message"; bad=1; }
	nfail=$((nfail + 1))
	if grep -q "valid but uninitialised" fmt.err && [ $frc != 4 ]; then
		echo "FAIL $scen N=$n: format says valid but uninitialised, fsck -f -n exit $frc"; head -n 5 fsck.out; bad=1
	fi
	if grep -q "marked initialised" fmt.err && [ $frc = 8 ]; then
		echo "FAIL $scen N=$n: format says initialised, fsck -f -n exit $frc"; head -n 5 fsck.out; bad=1
	fi
	if grep -q "no filesystem that opens" fmt.err && [ $frc != 8 ]; then
		echo "FAIL $scen N=$n: format says nothing opens, fsck -f -n exit $frc"; head -n 5 fsck.out; bad=1
	fi
	case $frc in
	0)	nclean=$((nclean + 1))
		rm -rf copy
		"$BCACHEFS" extract $popt $imgs / copy > ext.out 2>&1 ||
			{ echo "FAIL $scen N=$n: fsck -f -n clean but extract fails"; head -n 5 ext.out; bad=1; } ;;
	8)	nrefused=$((nrefused + 1))
		[ -s fsck.out ] || { echo "FAIL $scen N=$n: fsck -f -n exit 8 without a message"; bad=1; } ;;
	4)	if grep -q "backup superblock at sector [0-9]* differs\|not marked as containing replicas (type 2 journal" fsck.out &&
		   ! grep -v "backup superblock at sector [0-9]* differs from the superblock in use\|not marked as containing replicas (type 2 journal\|^journal entry seq [0-9]*, not fixing\|problems\{0,1\} found" fsck.out | grep -q .; then
			# torn: some superblock copies were updated, not all
			ntorn=$((ntorn + 1))
			"$BCACHEFS" fsck -y $popt $imgs > fsck.y 2>&1
			yrc=$?
			"$BCACHEFS" fsck -f -n $popt $imgs > fsck.out 2>&1 ||
				{ echo "FAIL $scen N=$n: fsck -y (exit $yrc) did not repair the torn superblocks"; head -n 8 fsck.y fsck.out; bad=1; }
			crashed $yrc && { echo "FAIL $scen N=$n: fsck -y crashed"; bad=1; }
			return
		fi
		nuninit=$((nuninit + 1))
		if ! grep -q "never initialized" fsck.out || [ "$(grep -c . fsck.out)" -gt 2 ]; then
			echo "FAIL $scen N=$n: fsck -f -n exit 4 and not (only) 'never initialized':"
			head -n 10 fsck.out; bad=1
		elif [ $((nuninit % 3)) = 1 ]; then
			"$BCACHEFS" fsck -y $popt $imgs > fsck.y 2>&1
			yrc=$?
			"$BCACHEFS" fsck -f -n $popt $imgs > fsck.out 2>&1 ||
				{ echo "FAIL $scen N=$n: fsck -y (exit $yrc) did not initialise it"; head -n 5 fsck.y fsck.out; bad=1; }
		fi ;;
	*)	echo "FAIL $scen N=$n: format failed, then fsck -f -n exit $frc:"; head -n 10 fsck.out; bad=1 ;;
	esac
}

# scenario NAME SAMPLES -- FORMAT OPTIONS: find the number of writes W a
# whole run does (the least N that succeeds), then try SAMPLES values of N
# spread over [0, W) (all of them when W is smaller), and W itself.
scenario() {
	scen=$1 want=$2
	nok=0 nfail=0 nclean=0 nrefused=0 nuninit=0 ntorn=0
	lo=0 hi=1
	# a hint (W of a similar run) narrows the search: lo must fail, hi succeed
	if [ -n "${hint:-}" ]; then
		lo=$((hint - 16)) hi=$((hint + 16))
		[ $lo -ge 0 ] || lo=0
		fresh $imgs
		BCH_FAULT_WRITES=$lo "$BCACHEFS" format -q --force $opts $imgs > /dev/null 2>&1 < /dev/null &&
			lo=0 hi=1
	fi
	while fresh $imgs; ! BCH_FAULT_WRITES=$hi "$BCACHEFS" format -q --force $opts $imgs \
			> /dev/null 2>&1 < /dev/null; do
		lo=$hi hi=$((hi * 2))
		[ $hi -lt 1000000 ] || fail "$scen: format never succeeds"
	done
	while [ $((hi - lo)) -gt 1 ]; do
		m=$(((lo + hi) / 2))
		fresh $imgs
		if BCH_FAULT_WRITES=$m "$BCACHEFS" format -q --force $opts $imgs > /dev/null 2>&1 < /dev/null
		then hi=$m; else lo=$m; fi
	done
	w=$hi
	ns=$(python3 -c "
w, k = $w, $want
s = set(range(w)) if w <= k else {0, w - 1} | {i * w // k for i in range(1, k)} | ({1, 2, 3, w - 2} if k >= 6 else set())
print(' '.join(map(str, sorted(s | {w}))))")
	for n in $ns; do
		try $n
	done
	echo "ok   $scen: $w writes; N tried: $(echo $ns | wc -w) ($nok succeeded, $nfail failed:" \
	     "$nrefused refused, $nuninit uninitialised, $nclean clean, $ntorn torn)"
	[ $nok -ge 1 ] || { echo "FAIL $scen: N=$w did not succeed"; bad=1; }
}

base="" src="" popt=""
imgs="a.img" opts="" scenario format_1dev $plain
imgs="a.img b.img" opts="--replicas=2" scenario format_2dev_replicas2 $plain
src=src
imgs="a.img" opts="--source=src" scenario source_1dev $samples
w1=$w

# over an older filesystem on both devices
rm -f a.img b.img; truncate -s 128M a.img b.img
"$BCACHEFS" format -q --source=old --replicas=2 a.img b.img > /dev/null 2>&1 || fail "cannot make the older filesystem"
mv a.img base.a.img; mv b.img base.b.img
base=1
imgs="a.img b.img" opts="--source=src --replicas=2" scenario source_2dev_replicas2_over_old $samples
base=""

popt="--passphrase-file pass"
# (every encrypted format and open runs scrypt, ~1 s here: few samples,
# none under TEST_QUICK)
[ -n "${TEST_QUICK:-}" ] && exit $bad
hint=$w1 imgs="a.img" opts="--source=src --encrypted --passphrase_file=pass --compression_type=lz4" \
	scenario source_encrypted_lz4 3
exit $bad
