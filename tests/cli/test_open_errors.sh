# Every open failure is said once, accurately, the same for every command:
# an empty file, a file of zeros (no superblock), a
# directory, a missing path, and an encrypted filesystem whose passphrase
# is asked on standard input that is empty. For each command that opens a
# filesystem: a non-zero exit, nothing on stdout, exactly one line on
# stderr, "bcachefs CMD: " first, naming the path (the passphrase file
# for the last) and what is wrong.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1
: > empty.img
truncate -s 1M zero.img
mkdir dir.img
mkdir -p mnt

# one CMD PATH PATTERN: CMD on PATH fails with one line matching PATTERN
one() {
	_c=$1 _p=$2 _pat=$3
	set -- "$_p"
	case $_c in
	extract*) set -- "$_p" / out.d;;
	mount*) set -- "$_p" "$WORK/mnt";;
	esac
	_rc=0
	timeout 30 "$BCACHEFS" $_c "$@" < /dev/null > out 2> err || _rc=$?
	crashed $_rc && { cat err; fail "$_c $_p: crashed ($_rc)"; }
	[ $_rc != 0 ] || fail "$_c $_p: exit 0"
	[ -s out ] && { cat out; fail "$_c $_p: printed on stdout"; }
	[ "$(wc -l < err)" = 1 ] || { cat err; fail "$_c $_p: want one line on stderr"; }
	_cmd=${_c%% *}
	grep -q "^bcachefs $_cmd: " err || { cat err; fail "$_c $_p: line does not start with 'bcachefs $_cmd: '"; }
	case $_c in *passphrase-file*) ;; *)
		grep -qF -- "$_p" err || { cat err; fail "$_c $_p: the path is not named"; };;
	esac
	grep -q -- "$_pat" err || { cat err; fail "$_c $_p: '$_pat' not said"; }
	echo "ok   [$_rc] $_c $_p: $(cat err)"
}

for c in show-super "fsck -f -n" list list_journal extract unlock set-passphrase \
	 remove-passphrase mount; do
	one "$c" empty.img "empty (0 bytes): not a bcachefs filesystem"
	one "$c" zero.img "no bcachefs superblock"
	one "$c" dir.img "Is a directory"
	one "$c" missing.img "No such file or directory"
done

# the passphrase asked on an empty standard input
enc=$(golden_images c1_encrypted)
for c in "fsck -f -n" list list_journal extract mount; do
	one "$c --passphrase-file -" "$enc" "no passphrase"
done
