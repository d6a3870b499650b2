# Helpers for the online administration tests (sourced after ../lib.sh).

# online_setup: FUSE checks and cleanup trap; the control sockets go to
# $WORK/run (BCACHEFS_RUN_DIR), so tests never meet a real mount's.
online_setup() {
	fuse_mount_setup
	BCACHEFS_RUN_DIR=$WORK/run
	export BCACHEFS_RUN_DIR
	GEN_TREE=$TESTDIR/../format/gen_tree.py
	TREE_DIFF=$TESTDIR/../format/tree_diff.py
	USAGE_CHECK=$TESTDIR/usage_check.py
}

# mkimg NAME SIZE: a sparse image file $WORK/NAME
mkimg() {
	rm -f "$WORK/$1"
	truncate -s "$2" "$WORK/$1"
}

# run_ok NAME CMD...: run, output in $WORK/NAME.out; fail unless exit 0
run_ok() {
	_ro=$1
	shift
	"$@" > "$WORK/$_ro.out" 2>&1
	_rc=$?
	[ $_rc = 0 ] || { cat "$WORK/$_ro.out"; fail "$_ro: '$*' exited $_rc"; }
}

# run_fails NAME CODE PATTERN CMD...: must exit CODE with PATTERN in its output
run_fails() {
	_rf=$1 _code=$2 _pat=$3
	shift 3
	"$@" > "$WORK/$_rf.out" 2>&1
	_rc=$?
	[ $_rc = "$_code" ] || { cat "$WORK/$_rf.out"; fail "$_rf: '$*' exited $_rc, not $_code"; }
	grep -q -e "$_pat" "$WORK/$_rf.out" || { cat "$WORK/$_rf.out"; fail "$_rf: no '$_pat' in the output"; }
}

# manifest DIR OUT: sha256 of every regular file under DIR, sorted by path
manifest() {
	(cd "$1" && find . -type f ! -path './lost+found/*' -print0 | sort -z | xargs -0 -r sha256sum) > "$2"
}

# fsck_clean NAME DEV...: fsck -f -n must exit 0
fsck_clean() {
	_fc=$1
	shift
	"$BCACHEFS" fsck -f -n "$@" > "$WORK/$_fc.fsck" 2>&1
	_rc=$?
	[ $_rc = 0 ] || { cat "$WORK/$_fc.fsck"; fail "$_fc: fsck -f -n exited $_rc"; }
}

# usage_vs_list NAME DEVLIST(:-joined) DEV...: fs usage --json of the unmounted
# filesystem agrees with what `list` shows (usage_check.py)
usage_vs_list() {
	_uv=$1 _list=$2
	shift 2
	run_ok "$_uv-usage" "$BCACHEFS" fs usage --json "$_list"
	"$BCACHEFS" list -b extents "$@" > "$WORK/$_uv.extents" 2>&1 || { cat "$WORK/$_uv.extents"; fail "$_uv: list"; }
	: > "$WORK/$_uv.nodes"
	for _b in extents inodes dirents xattrs alloc quotas; do
		"$BCACHEFS" list -m nodes -b $_b "$@" >> "$WORK/$_uv.nodes" 2>&1
	done
	_ns=$("$BCACHEFS" show-super "$1" | awk '/^Btree node size:/ { print $4; exit }')
	python3 "$USAGE_CHECK" "$WORK/$_uv-usage.out" "$WORK/$_uv.extents" "$WORK/$_uv.nodes" \
		"$(size_sectors "$_ns")" > "$WORK/$_uv.check" 2>&1 ||
		{ cat "$WORK/$_uv.check"; fail "$_uv: fs usage disagrees with list"; }
}

# size_sectors 128.0K -> 256
size_sectors() {
	python3 -c '
import sys
s = sys.argv[1]
u = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
print(int(float(s[:-1]) * u[s[-1]]) // 512 if s[-1] in u else int(s) // 512)' "$1"
}
