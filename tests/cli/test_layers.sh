# The layer rule of libbcachefs/ (libbcachefs/LAYERS, tests/cli/layers.py):
# no include or call up a layer, no two modules depending on each other.
# Checked on the tree and on the objects of the build under test; then the
# checker itself must catch a planted include up a layer and a planted loop.
. "$TESTDIR/../lib.sh"
top=$(cd "$TESTDIR/../.." && pwd)
build=$(cd "${UNITDIR:-$top/build/tests/unit}/../.." 2>/dev/null && pwd) || build=$top/build
command -v python3 > /dev/null || { echo "python3 needed"; exit 77; }

python3 "$TESTDIR/layers.py" "$top" "$build" > "$WORK/layers.out" 2>&1 ||
	{ cat "$WORK/layers.out"; fail "the tree breaks the layer rule"; }

# a planted include up a layer, and a planted loop, are caught
mkdir -p "$WORK/t/libbcachefs/util" "$WORK/t/libbcachefs/format"
cp "$top/libbcachefs/LAYERS" "$WORK/t/libbcachefs/"
printf '#include "format/a.h"\n' > "$WORK/t/libbcachefs/util/u.c"
printf '#include "format/b.h"\n' > "$WORK/t/libbcachefs/format/a.c"
printf '#include "format/a.h"\n' > "$WORK/t/libbcachefs/format/b.c"
touch "$WORK/t/libbcachefs/format/a.h" "$WORK/t/libbcachefs/format/b.h"
if python3 "$TESTDIR/layers.py" "$WORK/t" > "$WORK/planted.out" 2>&1; then
	fail "planted violations not reported"
fi
grep -q 'util/u.c: includes format/a.h, a layer above its own' "$WORK/planted.out" ||
	{ cat "$WORK/planted.out"; fail "include up a layer not reported"; }
grep -q 'cycle: libbcachefs/format/a <-> libbcachefs/format/b' "$WORK/planted.out" ||
	{ cat "$WORK/planted.out"; fail "loop not reported"; }
echo "layers: clean; planted violations caught"
