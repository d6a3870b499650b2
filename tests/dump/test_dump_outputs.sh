#!/bin/sh
# dump's outputs (a command that destroys must not destroy what it was not
# asked to; one style of message): only a regular file is ever replaced.
# A character device (a mknod copy of
# /dev/full and of /dev/null), a directory, /dev/full itself, a FIFO: each
# refused with -f too, with one line saying what the output is (never "File
# exists"), nothing created, the node still there. A dump that fails while
# writing leaves what was there as it was and no temporary file; -f over a
# regular file and through a symlink to one replaces the file (the link
# stays a link); no temporary file is left anywhere.
. "$TESTDIR/../lib.sh"
img=$(golden_images a_default_1G)
B=$BCACHEFS

# refused NAME OUTPUT KIND [-f]
refused() {
	_n=$1 _o=$2 _k=$3
	shift 3
	timeout 120 "$B" dump "$@" -o "$_o" "$img" > "$WORK/$_n.log" 2>&1; _rc=$?
	[ $_rc = 1 ] || { cat "$WORK/$_n.log"; fail "$_n: exit $_rc, not 1"; }
	grep -qx "bcachefs dump: $_o is $_k, not a regular file: give the name of a file for the image; nothing was written" \
		"$WORK/$_n.log" || { cat "$WORK/$_n.log"; fail "$_n: not the refusal expected"; }
	[ "$(wc -l < "$WORK/$_n.log")" = 1 ] || { cat "$WORK/$_n.log"; fail "$_n: more than one line"; }
}

if [ "$(id -u)" = 0 ]; then
	mknod "$WORK/full" c 1 7 || fail "mknod full"
	mknod "$WORK/null" c 1 3 || fail "mknod null"
	refused full-f "$WORK/full" "a character device" -f
	refused full "$WORK/full" "a character device"
	refused null-f "$WORK/null" "a character device" -f
	[ -c "$WORK/full" ] && [ -c "$WORK/null" ] || fail "a device node was removed or replaced"
fi
refused devfull /dev/full "a character device" -f
[ -c /dev/full ] || fail "/dev/full is gone"
mkdir "$WORK/adir"
refused adir "$WORK/adir" "a directory"
refused adir-f "$WORK/adir" "a directory" -f
[ -d "$WORK/adir" ] && [ -z "$(ls -A "$WORK/adir")" ] || fail "adir changed"
ln -s nowhere "$WORK/dangling"
"$B" dump -f -o "$WORK/dangling" "$img" > "$WORK/dangling.log" 2>&1 && fail "a dangling symlink was replaced"
grep -q "is a symlink to a missing file" "$WORK/dangling.log" || { cat "$WORK/dangling.log"; fail "dangling: not the refusal expected"; }
[ -L "$WORK/dangling" ] || fail "the dangling symlink was replaced"
mkfifo "$WORK/fifo"
refused fifo "$WORK/fifo" "a FIFO" -f
[ -p "$WORK/fifo" ] || fail "the FIFO was replaced"

# a dump that fails (the directory cannot take the temporary file): the
# old image is kept as it was
mkdir "$WORK/ro"
echo keep > "$WORK/ro/out"
chmod 555 "$WORK/ro"
if [ "$(id -u)" != 0 ]; then
	"$B" dump -f -o "$WORK/ro/out" "$img" > "$WORK/ro.log" 2>&1 && fail "ro: dump into a read-only directory succeeded"
	[ "$(cat "$WORK/ro/out")" = keep ] || fail "ro: the old output was changed"
fi
chmod 755 "$WORK/ro"

# -f over a regular file, and through a symlink to one
echo old > "$WORK/reg"
ln -s reg "$WORK/link"
"$B" dump -f -o "$WORK/reg" "$img" || fail "-f over a regular file"
head -c 4 "$WORK/reg" | od -An -c | grep -q 'Q   F   I' || fail "-f: not a qcow2 image"
echo old > "$WORK/reg"
"$B" dump -f -o "$WORK/link" "$img" || fail "-f through a symlink"
[ -L "$WORK/link" ] || fail "the symlink was replaced"
head -c 4 "$WORK/reg" | od -An -c | grep -q 'Q   F   I' || fail "symlink: the file it names is not a qcow2 image"
"$B" dump -o "$WORK/new" "$img" || fail "dump to a new name"
head -c 4 "$WORK/new" | od -An -c | grep -q 'Q   F   I' || fail "new: not a qcow2 image"

# no temporary file left anywhere
left=$(find "$WORK" -name '.*.dump-*')
[ -z "$left" ] || fail "temporary files left: $left"
exit 0
