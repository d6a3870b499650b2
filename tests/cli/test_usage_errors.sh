# One style of usage error for every command: an
# unknown option (long or short), an option without its value and a
# missing device give exit 16 and exactly two lines on stderr:
#   bcachefs CMD: <what is wrong, naming the option>
#   Try 'bcachefs CMD --help' for more information.
# and nothing on stdout. Also under the names mkfs.bcachefs and
# fsck.bcachefs, and for unknown commands.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1
ln -s "$BCACHEFS" mkfs.bcachefs
ln -s "$BCACHEFS" fsck.bcachefs

# check NAME PATTERN CMD...: CMD is a usage error in the style, for NAME
check() {
	_name=$1 _pat=$2
	shift 2
	_rc=0
	"$@" < /dev/null > out 2> err || _rc=$?
	[ $_rc = 16 ] || { cat out err; fail "$*: exit $_rc, want 16"; }
	[ -s out ] && { cat out; fail "$*: printed on stdout"; }
	[ "$(wc -l < err)" = 2 ] || { cat err; fail "$*: want 2 lines on stderr"; }
	_l1=$(sed -n 1p err) _l2=$(sed -n 2p err)
	case $_l1 in "$_name: "*) ;; *) fail "$*: first line '$_l1' does not start with '$_name: '";; esac
	printf '%s\n' "$_l1" | grep -qF -- "$_pat" || fail "$*: '$_l1' lacks '$_pat'"
	[ "$_l2" = "Try '$_name --help' for more information." ] || fail "$*: second line '$_l2'"
	echo "ok   $*: $_l1"
}

for c in format show-super fsck list list_journal extract mount unlock \
	 set-passphrase remove-passphrase version; do
	check "bcachefs $c" "'--bogus'" "$BCACHEFS" $c --bogus x.img
	check "bcachefs $c" "'-Z'" "$BCACHEFS" $c -Z x.img
done
# dump, migrate and the commands of two words
for c in dump migrate migrate-superblock "fs usage" "device add" "device remove" "device online" "device offline" \
	 "device evacuate" "device set-state" "device resize" "data rereplicate" \
	 "data migrate" "data scrub"; do
	# shellcheck disable=SC2086 # the two words of the command
	check "bcachefs $c" "'--bogus'" "$BCACHEFS" $c --bogus x.img
	# shellcheck disable=SC2086
	check "bcachefs $c" "'-Z'" "$BCACHEFS" $c -Z x.img
done
check "bcachefs device remove" "'--fs' needs a value" "$BCACHEFS" device remove --fs
for c in format show-super fsck list list_journal unlock set-passphrase remove-passphrase; do
	check "bcachefs $c" "no device given" "$BCACHEFS" $c
done
check "bcachefs fsck" "'--passphrase-file' needs a value" "$BCACHEFS" fsck --passphrase-file
check "bcachefs fsck" "'--json' takes no value" "$BCACHEFS" fsck --json=1 x.img
check "bcachefs list" "'-b' needs a value" "$BCACHEFS" list -b
check "bcachefs list" "'-n'" "$BCACHEFS" list -nb x x.img
check "bcachefs format" "'-L' needs a value" "$BCACHEFS" format -L
check "bcachefs unlock" "'-k' needs a value" "$BCACHEFS" unlock -k
check "bcachefs mount" "max_read=x" "$BCACHEFS" mount -o max_read=x a.img mnt
check "bcachefs extract" "need DEVICE" "$BCACHEFS" extract x.img
check "bcachefs version" "unexpected argument" "$BCACHEFS" version extra
check "mkfs.bcachefs" "'--bogus'" ./mkfs.bcachefs --bogus x.img
check "fsck.bcachefs" "'-Q'" ./fsck.bcachefs -Q x.img
check "bcachefs" "unknown command 'nosuch'" "$BCACHEFS" nosuch
check "bcachefs" "unknown command 'device foo'" "$BCACHEFS" device foo
