# Helpers for test scripts (sourced). Needs $GOLDEN and $WORK.

# golden_images CASE [NAME]: decompress the final images of a golden case into
# $WORK/CASE/ (once) and print their paths, space-separated.
golden_images() {
	_case=$1 _name=${2:-}
	_dir=$WORK/$_case
	mkdir -p "$_dir"
	if [ -n "$_name" ]; then
		_imgs=$GOLDEN/$_case/$_name.img.zst
	else
		_imgs=$(ls "$GOLDEN/$_case"/dev[0-9].img.zst 2>/dev/null || true)
		[ -n "$_imgs" ] || _imgs=$(ls "$GOLDEN/$_case"/migrated-layout7.img.zst 2>/dev/null || true)
	fi
	_out=""
	for _i in $_imgs; do
		_o=$_dir/$(basename "${_i%.zst}")
		[ -f "$_o" ] || zstd -qd --sparse "$_i" -o "$_o"
		_out="$_out $_o"
	done
	echo $_out
}

# The golden cases whose final images our read side must read.
golden_read_cases() {
	for _d in "$GOLDEN"/a_* "$GOLDEN"/b* "$GOLDEN"/c1_* "$GOLDEN"/c2_* "$GOLDEN"/d1_* \
		  "$GOLDEN"/e1_* "$GOLDEN"/g1_* "$GOLDEN"/g2_* "$GOLDEN"/g3_*; do
		[ -d "$_d" ] && basename "$_d"
	done
}

# Passphrase options for the encrypted golden cases.
golden_pass_opts() {
	case $1 in
	c1_*|g4_*) printf 'golden-pass\n' > "$WORK/pass"; echo "--passphrase-file $WORK/pass";;
	esac
}

# crashed EXIT-CODE: true when a command died of a signal or a sanitizer.
crashed() {
	[ "$1" -ge 128 ]
}

fail() {
	echo "FAIL: $*"
	exit 1
}
