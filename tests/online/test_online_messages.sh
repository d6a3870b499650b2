#!/bin/sh
# One style for online refusals: one line on stderr, the
# command's name, what is wrong and what would help; -f offered only where
# it changes the outcome; device add's minimum size is the real one (from
# the filesystem's bucket and btree node sizes); no action line before a
# refusal and no ioctl-name line unless -v.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/lib_online.sh"
online_setup
B=$BCACHEFS
a=$WORK/a.img
mkimg a.img 256M
run_ok format "$B" format -q "$a"
mount_fg m "$a"
# the control socket comes up just after the mount
i=0
until "$B" fs usage "$mnt" > /dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the control socket does not answer"; sleep 0.05
done

# refused: exit 1, exactly one line, the command's name first, PATTERN in
# it, none of the old noise
refused() {	# NAME PATTERN CMD...
	_n=$1 _p=$2
	shift 2
	"$@" > "$WORK/$_n.out" 2> "$WORK/$_n.err"
	_rc=$?
	[ $_rc = 1 ] || { cat "$WORK/$_n.out" "$WORK/$_n.err"; fail "$_n: exit $_rc, not 1"; }
	[ ! -s "$WORK/$_n.out" ] || { cat "$WORK/$_n.out"; fail "$_n: an action line on stdout before the refusal"; }
	[ "$(wc -l < "$WORK/$_n.err")" = 1 ] || { cat "$WORK/$_n.err"; fail "$_n: not one line"; }
	grep -q "^bcachefs $CMD: " "$WORK/$_n.err" || { cat "$WORK/$_n.err"; fail "$_n: no 'bcachefs $CMD:' first"; }
	grep -q -e "$_p" "$WORK/$_n.err" || { cat "$WORK/$_n.err"; fail "$_n: no '$_p'"; }
	! grep -q "ioctl error\|Error opening\|force with\|btree_node_size" "$WORK/$_n.err" ||
		{ cat "$WORK/$_n.err"; fail "$_n: an old message"; }
	true
}

CMD="device set-state"
refused ss "only read-write device; add another first (device add)" "$B" device set-state "$a" ro
refused ssf "only read-write device" "$B" device set-state -f "$a" ro
grep -q -- "-f" "$WORK/ssf.err" && fail "set-state -f on the only device offers -f"
# -v: the request's name and errno before the same line
"$B" device set-state -v "$a" ro > "$WORK/v.out" 2>&1 && fail "set-state -v succeeded"
grep -q "^BCH_IOCTL_DISK_SET_STATE ioctl error: Invalid argument$" "$WORK/v.out" || { cat "$WORK/v.out"; fail "-v: no ioctl line"; }

CMD="device remove"
refused rm "only read-write device" "$B" device remove "$a"
refused rmf "only read-write device" "$B" device remove -f "$a"
grep -q -- " -f" "$WORK/rmf.err" && fail "remove -f on the only device offers -f"
CMD="device evacuate"
refused ev "only read-write device" "$B" device evacuate "$a"

# device add: the minimum is 1024 buckets of the btree node size (128K) and
# the superblock area; 1M, 4M, 64M and 127M all say the same
CMD="device add"
for s in 1M 4M 64M 127M; do
	mkimg "s$s.img" $s
	refused add$s "s$s.img is too small (.*): a member of this filesystem needs at least 128\.[0-9]*M" \
		"$B" device add "$mnt" "$WORK/s$s.img"
done
min=$(sed -n 's/.*needs at least \([0-9.]*M\).*/\1/p' "$WORK/add1M.err")
mkimg big.img 129M
run_ok addok "$B" device add -f "$mnt" "$WORK/big.img"
mkdir -p "$WORK/adir"
refused adddir "adir" "$B" device add "$mnt" "$WORK/adir"

# resize to less: refused, nothing printed before
CMD="device resize"
refused rs "shrinking is not supported" "$B" device resize "$WORK/big.img" 1M

# fs usage and data jobs name their command too
CMD="fs usage"
refused fsu "not a bcachefs filesystem" "$B" fs usage "$WORK"
CMD="data scrub"
refused scrub "not a bcachefs filesystem" "$B" data scrub "$WORK"
unmount_fg m

# device remove --help: no internal document, no option that is always refused
"$B" device remove --help > "$WORK/rmhelp.out" 2>&1 || fail "device remove --help"
grep -q "spec\|force-metadata" "$WORK/rmhelp.out" && { cat "$WORK/rmhelp.out"; fail "device remove --help"; }
fsck_clean final "$a" "$WORK/big.img"
echo "minimum device size: $min"
