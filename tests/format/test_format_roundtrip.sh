#!/bin/sh
# format initialises the filesystem (doc/engine.md §13) for a range of option
# sets: after it, fsck -f -n finds nothing, the root directory (4096) and
# lost+found (4097) are there, the superblock says Clean, and opening it
# again changes nothing (two more opens give the same list output).
set -u
: "${BCACHEFS:?}" "${WORK:=$(mktemp -d)}"
cd "$WORK" || exit 1
fail=0
printf 'roundtrip-pass\n' > pass

# run NAME NDEVS [FORMAT OPTIONS...]
run() {
	name=$1 ndev=$2
	shift 2
	size=128M
	case " $* " in *" --bucket_size=256k "*) size=256M;; esac
	imgs="" i=0
	while [ "$i" -lt "$ndev" ]; do
		rm -f "rt$i.img"; truncate -s $size "rt$i.img"
		imgs="$imgs rt$i.img"; i=$((i + 1))
	done
	popt=""
	case " $* " in *" --encrypted "*) popt="--passphrase-file pass";; esac

	if ! "$BCACHEFS" format -q "$@" $imgs < /dev/null > out 2> err; then
		echo "FAIL $name: format failed:"; sed 's/^/    /' err; fail=1; return
	fi
	[ -s err ] && ! grep -q warning err &&
		{ echo "FAIL $name: format printed on stderr:"; sed 's/^/    /' err; fail=1; }
	"$BCACHEFS" fsck -f -n $popt $imgs > fsck.out 2>&1
	rc=$?
	[ $rc = 0 ] || { echo "FAIL $name: fsck -f -n exit $rc"; sed 's/^/    /' fsck.out; fail=1; }
	for b in inodes dirents alloc; do
		"$BCACHEFS" list -b $b $popt $imgs > "list1.$b" 2>&1 ||
			{ echo "FAIL $name: list -b $b"; sed 's/^/    /' "list1.$b"; fail=1; }
	done
	grep -q '^u64s .* 4096:0 ' list1.inodes && grep -q '^u64s .* 4097:0 ' list1.inodes ||
		{ echo "FAIL $name: inodes 4096 and 4097 not both listed"; cat list1.inodes; fail=1; }
	grep -q 'lost+found -> 4097' list1.dirents ||
		{ echo "FAIL $name: no lost+found dirent"; fail=1; }
	for img in $imgs; do
		"$BCACHEFS" show-super "$img" | grep -q '^Clean:[[:space:]]*1$' ||
			{ echo "FAIL $name: $img: show-super does not say Clean 1"; fail=1; }
	done
	# (encrypted: every open runs scrypt; keep their number down)
	reopen="inodes dirents alloc"
	[ -n "$popt" ] && reopen=inodes
	for n in 2 3; do
		for b in $reopen; do
			"$BCACHEFS" list -b $b $popt $imgs > "list$n.$b" 2>&1
			cmp -s list1.$b list$n.$b ||
				{ echo "FAIL $name: list -b $b differs on open $n"; fail=1; }
		done
	done
	echo "ok   $name"
}

run default 1
run bs512 1 --block_size=512
run bucket256k 1 --bucket_size=256k --btree_node_size=256k
run meta_crc64_data_none 1 --metadata_checksum_type=crc64 --data_checksum_type=none
run encrypted 1 --encrypted --passphrase_file=pass
run 2dev 2
run replicas2 2 --replicas=2

# the replicas=2 filesystem: the btree and the journal are on both devices
for t in btree journal; do
	"$BCACHEFS" show-super -f replicas rt0.img | grep -q "^ *$t: *\[0 1\]" ||
		{ echo "FAIL replicas2: no $t replicas entry [0 1]"; fail=1; }
done

exit $fail
