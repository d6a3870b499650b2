#!/bin/sh
# format options that work: the printed superblock (doc/tools.md §3),
# per-device options carrying over to later devices (doc/tools.md §2.1), -q,
# mkfs.bcachefs, passphrase files, --force over an existing filesystem.
# Member fields are read straight from the image (doc/format.md §2.7).
set -u
: "${BCACHEFS:?}" "${GOLDEN:?}" "${WORK:=$(mktemp -d)}"
cd "$WORK" || exit 1
fail=0

u16() { od -An -t u2 -j "$2" -N 2 "$1" | tr -d ' '; }
u64() { od -An -t u8 -j "$2" -N 8 "$1" | tr -d ' '; }
x64() { od -An -t x8 -j "$2" -N 8 "$1" | tr -d ' '; }
m() { echo $((4096 + 760 + 56 * $1 + $2)); }	# member $1, byte $2, primary copy

check() {	# what got want
	if [ "$2" = "$3" ]; then echo "ok   $1 = $2"; else echo "FAIL $1 = $2, want $3"; fail=1; fi
}

# 1. the output of format --no_initialize (what the 2018 tool did) is the
#    2018 one, uuids aside; a default format prints the superblock as the
#    initialisation left it: clean, the journal and btree on the device
truncate -s 1G a.img
"$BCACHEFS" format --no_initialize a.img > out 2> err || { echo "FAIL format a.img"; cat err; fail=1; }
uu='s/[0-9a-f]\{8\}-[0-9a-f]\{4\}-[0-9a-f]\{4\}-[0-9a-f]\{4\}-[0-9a-f]\{12\}/UUID/'
sed '1d;$d' "$GOLDEN/a_default_1G/out/format.txt" | sed "$uu" > want
sed "$uu" out > got
if cmp -s want got; then echo "ok   output matches a_default_1G/out/format.txt"
else echo "FAIL output differs from the 2018 output:"; diff want got; fail=1; fi
[ -s err ] && { echo "FAIL stderr not empty:"; cat err; fail=1; }
"$BCACHEFS" format -f a.img > out 2> err || { echo "FAIL format a.img"; cat err; fail=1; }
"$BCACHEFS" show-super a.img > now
if cmp -s out now && grep -q "^Clean:[[:space:]]*1$" out && grep -q "Has data:[[:space:]]*journal,btree$" out; then
	echo "ok   format prints the superblock as initialised (clean, has data)"
else echo "FAIL format's output is not the superblock it left:"; diff out now; grep "Clean\|Has data" out; fail=1; fi

# 2. device options carry over, --fs_size does not; -g; prefixes; mkfs.bcachefs
for i in 1 2 3; do rm -f m$i.img; truncate -s 1G m$i.img; done
mkfs=$(dirname "$BCACHEFS")/mkfs.bcachefs
[ -x "$mkfs" ] || mkfs=$BCACHEFS
[ "$mkfs" = "$BCACHEFS" ] && set -- "$BCACHEFS" format || set -- "$mkfs"
"$@" -q -g ssd --discard m1.img --group=hdd.a --bucket=256k --fs_size=512M m2.img \
	--data_allowed=journal,btree --durability=2 m3.img \
	--foreground_target=ssd --background_target=hdd --promote_target=m1.img > out 2>&1 ||
	{ echo "FAIL multi-device format"; cat out; fail=1; }
[ -s out ] && { echo "FAIL -q printed:"; cat out; fail=1; }
check "m3 dev_idx" "$(od -An -t u1 -j $((4096 + 122)) -N 1 m3.img | tr -d ' ')" 2
check "nr_devices" "$(od -An -t u1 -j $((4096 + 123)) -N 1 m1.img | tr -d ' ')" 3
check "m1 bucket" "$(u16 m1.img "$(m 0 26)")" 256
check "m2 bucket" "$(u16 m2.img "$(m 1 26)")" 512
check "m3 bucket (carried over)" "$(u16 m1.img "$(m 2 26)")" 512
check "m2 nbuckets (--fs_size)" "$(u64 m1.img "$(m 1 16)")" 2048
check "m3 nbuckets (--fs_size reset)" "$(u64 m1.img "$(m 2 16)")" 4096
# flags: discard bit 14, data_allowed 15-19, group 20-27, durability 28-29
check "m1 flags (discard, group ssd)" "$(x64 m1.img "$(m 0 40)")" 00000000201e4000
check "m2 flags (discard carried, group hdd.a)" "$(x64 m1.img "$(m 1 40)")" 00000000203e4000
check "m3 flags (journal,btree, durability 2)" "$(x64 m1.img "$(m 2 40)")" 0000000030364000
# flags[1]: promote 28-39 = 1 (m1), foreground 40-51 = 257, background 52-63 = 258
check "targets" "$(x64 m1.img $((4096 + 152)))" 102101001111c002
check "btree node size" "$(( ($(u64 m1.img $((4096 + 144))) >> 12) & 65535 ))" 256

# 3. encryption: passphrase file, --no_passphrase; the crypt field is there
rm -f e.img; truncate -s 1G e.img
printf 'secret\n' > pass
"$BCACHEFS" format -q --encrypted --passphrase_file=pass e.img > out 2>&1 ||
	{ echo "FAIL --passphrase_file"; cat out; fail=1; }
check "crypt field type" "$(od -An -t u4 -j $((4096 + 752 + 64 + 4)) -N 4 e.img | tr -d ' ')" 2
check "kdf flags" "$(x64 e.img $((4096 + 752 + 64 + 16)))" 000000040003000e
"$BCACHEFS" format -q -f --encrypted --no_passphrase e.img < /dev/null > out 2>&1 ||
	{ echo "FAIL --no_passphrase"; cat out; fail=1; }
check "clear key magic" "$(od -An -c -j $((4096 + 752 + 64 + 24)) -N 8 e.img | tr -d ' ')" 'bch**key'
printf 'secret\n' | "$BCACHEFS" format -q -f --encrypted e.img > out 2>&1 ||
	{ echo "FAIL passphrase on stdin"; cat out; fail=1; }

# 4. --force over an existing filesystem, --no_initialize, devices after --
"$BCACHEFS" format -q a.img < /dev/null > /dev/null 2>&1 &&
	{ echo "FAIL reformat without --force was not refused"; fail=1; }
"$BCACHEFS" format -q --force --no_initialize -- a.img < /dev/null > out 2>&1 &&
	echo "ok   --force --no_initialize -- a.img" ||
	{ echo "FAIL --force"; cat out; fail=1; }

# 5. replicas from durability: one device of durability 2 holds 2 replicas
"$BCACHEFS" format -q -f --replicas=2 --durability=2 a.img > out 2> err ||
	{ echo "FAIL --replicas=2 on one device of durability 2"; cat err; fail=1; }

exit $fail
