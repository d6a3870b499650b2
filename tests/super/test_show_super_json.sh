#!/bin/sh
# show-super --json: one valid JSON object with the same values as the text.
set -e
. "$TESTDIR/../lib.sh"
: "${BCACHEFS:?}" "${GOLDEN:?}" "${WORK:?}"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

unzst "$GOLDEN/e1_2dev/dev1.img.zst" "$WORK/d.img"
"$BCACHEFS" show-super --json -l -f all "$WORK/d.img" > "$WORK/j"
"$BCACHEFS" show-super -l -f all "$WORK/d.img" > "$WORK/t"

uuid=$(sed -n 's/^External UUID:\t*//p' "$WORK/t")
[ -n "$uuid" ] || bad "no External UUID in the text output"
grep -q "\"external_uuid\": *\"$uuid\"" "$WORK/j" || bad "external_uuid $uuid missing"
grep -q '"devices_total": *2' "$WORK/j" || bad "devices_total"
grep -q '"superblock_size": *1168' "$WORK/j" || bad "superblock_size"
grep -q '"type": *"replicas"' "$WORK/j" || bad "replicas field"
grep -q '"offsets": *\[' "$WORK/j" || bad "layout offsets"

if command -v python3 > /dev/null 2>&1; then
	python3 - "$WORK/j" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 9, d["version"]
assert d["layout"]["offsets"] == [8, 136], d["layout"]
f = {x["type"]: x for x in d["fields"]}
assert len(f["journal"]["buckets"]) == 32, f["journal"]
assert [m["index"] for m in f["members"]["devices"]] == [0, 1]
assert [e["data_type"] for e in f["replicas"]["entries"]] == ["btree", "journal", "btree"]
assert f["members"]["devices"][1]["has_data"] == ["btree"]
PY
fi
rm -f "$WORK/d.img"
exit $fail
