# fsck.bcachefs and mkfs.bcachefs (as fsck(8), mkfs(8) and the initramfs
# hook call them) dispatch to fsck and format; the hook is valid sh; the
# top-level usage, unknown commands and --help of every command.
set -e
. "$(dirname "$0")/../lib.sh"
ln -s "$BCACHEFS" "$WORK/fsck.bcachefs"
ln -s "$BCACHEFS" "$WORK/mkfs.bcachefs"
truncate -s 64M "$WORK/a.img"
"$WORK/mkfs.bcachefs" -q "$WORK/a.img" || fail "mkfs.bcachefs failed"
"$WORK/fsck.bcachefs" -n "$WORK/a.img" > "$WORK/out" || fail "fsck.bcachefs -f -n exited $?"
grep -q clean "$WORK/out" || fail "fsck.bcachefs -f -n: not clean"
# -p at boot: a clean filesystem gives 0
"$WORK/fsck.bcachefs" -p "$WORK/a.img" > /dev/null || fail "fsck.bcachefs -f -p exited $?"
sh -n "$TESTDIR/../../initramfs/hook" || fail "initramfs hook is not valid sh"

rc=0; "$BCACHEFS" > /dev/null 2>&1 || rc=$?
[ $rc = 16 ] || fail "no command: exit $rc, want 16"
rc=0; "$BCACHEFS" no-such-command > /dev/null 2>&1 || rc=$?
[ $rc = 16 ] || fail "unknown command: exit $rc, want 16"
for c in format show-super fsck list list_journal extract mount unlock; do
	"$BCACHEFS" $c --help > "$WORK/help" 2>&1 || fail "$c --help exited $?"
	grep -q "^Usage: bcachefs" "$WORK/help" || fail "$c --help: no usage line"
done
rc=0; "$BCACHEFS" fsck > /dev/null 2>&1 || rc=$?
[ $rc = 16 ] || fail "fsck without a device: exit $rc, want 16"
