#!/bin/sh
# fuse2fs posing as `bcachefs`, for a dry run of the read-write mount tests
# before the engine exists (they skip until then):
#
#   BCACHEFS=$PWD/tests/rw/fuse2fs-as-bcachefs.sh sh tests/run.sh 'rw/*mount'
#
# format = mkfs.ext4, mount = fuse2fs (FUSE like ours, type fuse.bcachefs,
# default_permissions), fsck -f -n = e2fsck -fn, extract IMG / OUT = cp -a
# through a read-only fuse2fs mount. What fails there and why:
# tests/rw/README.md.
cmd=$1
shift
last() { for _a; do :; done; echo "$_a"; }
case $cmd in
format)
	mkfs.ext4 -q -F "$(last "$@")"
	;;
mount)
	fg="" opts=default_permissions,subtype=bcachefs
	while [ $# -gt 2 ]; do
		case $1 in
		-f) fg=-f; shift;;
		-o) for o in $(echo "$2" | tr , ' '); do
			case $o in rw) ;; *) opts="$opts,$o";; esac
		    done
		    shift 2;;
		*) shift;;
		esac
	done
	exec fuse2fs "$1" "$2" -o "$opts" $fg
	;;
fsck)
	e2fsck -fn "$(last "$@")"
	;;
extract)	# extract IMG / OUT
	m=$(mktemp -d)
	fuse2fs "$1" "$m" -o ro || exit 1
	mkdir -p "$3"
	cp -a "$m/." "$3/"
	rc=$?
	rm -rf "$3/lost+found"
	fusermount -u "$m"
	rmdir "$m"
	exit $rc
	;;
*)
	echo "fuse2fs-as-bcachefs: $cmd: not imitated" >&2
	exit 1
	;;
esac
