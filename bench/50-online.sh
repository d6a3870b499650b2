#!/bin/sh
# Online data movement: `data rereplicate` and
# `device evacuate` of BENCH_ONLINE_MB (1024) MiB in many files, against a
# plain `cp -a` of the same tree within the same mount, in the same run.
# (Target: each within 1.5x of the cp -a.) Each moves the same bytes the
# cp -a does: the cp -a reads the tree from the mount and writes one copy
# of it (one device: one replica); rereplicate reads it and writes the
# second copy onto the member that was missing while the tree was written
# (-o degraded: one copy; format refuses replicas 2 on one device); evacuate reads it and writes a copy
# on a third device while dropping the one on the device evacuated.
# Needs root and /dev/fuse.
set -u
top=${BENCH_TOP:-$(pwd)}
bin=${BCACHEFS:-$top/bcachefs}
work=${BENCH_WORK:-$(mktemp -d)}
mb=${BENCH_ONLINE_MB:-1024}

[ -e /dev/fuse ] && command -v fusermount3 >/dev/null || { echo "no FUSE here"; exit 77; }
export BCACHEFS_RUN_DIR="$work/run"
mnt=$work/mnt
mkdir -p "$mnt"

# the tree: files of 4 KiB to 1 MiB (256 KiB on average), random data
python3 - "$work/src" "$mb" <<'PY' || exit 1
import os, random, sys
root, mb = sys.argv[1], int(sys.argv[2])
random.seed(7)
left, n = mb << 20, 0
while left > 0:
    d = os.path.join(root, "d%03d" % (n // 200))
    os.makedirs(d, exist_ok=True)
    size = min(left, random.choice([4096, 16384, 65536, 262144, 524288, 1048576]))
    with open(os.path.join(d, "f%05d" % n), "wb") as f:
        f.write(os.urandom(size))
    left -= size
    n += 1
print(n, "files", file=sys.stderr)
PY
nfiles=$(find "$work/src" -type f | wc -l)
for i in a b c; do truncate -s $((mb * 3 + 1024))M "$work/$i.img"; done
# two members, replicas 2; the tree is written with b missing (-o degraded:
# one copy), so that rereplicate writes the second copy onto b
"$bin" format -q --replicas=2 "$work/a.img" "$work/b.img" > "$work/format.log" 2>&1 ||
	{ cat "$work/format.log"; exit 1; }

ns() { date +%s%N; }
secs() { awk -v ns="$1" 'BEGIN { printf "%.2f", ns / 1e9 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
mbps() { awk -v ns="$1" -v mb="$mb" 'BEGIN { printf "%.0f", mb * 1048576 / (ns / 1e9) / 1e6 }'; }
cleanup() { fusermount3 -u "$mnt" 2>/dev/null; }
trap cleanup EXIT

# remount: every measurement starts from the tree written out (reading data
# that is still only in the journal is much slower: see bench/README.md)
remount() {
	fusermount3 -u "$mnt" 2>/dev/null
	# (the mount waits for the previous mount process, which holds the
	# devices until it has written everything and exited)
	"$bin" mount "$@" "$mnt" || { echo "mount failed"; exit 1; }
}
remount -o degraded "$work/a.img"
t0=$(ns)
cp -a "$work/src" "$mnt/tree" || exit 1
sync
t_in=$(( $(ns) - t0 ))
remount -o degraded "$work/a.img"

# the reference: cp -a of the tree within the mount (one device, one copy)
t0=$(ns)
cp -a "$mnt/tree" "$mnt/tree2" || exit 1
sync
t_cp=$(( $(ns) - t0 ))
rm -rf "$mnt/tree2"
remount "$work/a.img:$work/b.img"
t0=$(ns)
"$bin" data rereplicate "$mnt" > "$work/rerep.log" 2>&1 || { cat "$work/rerep.log"; exit 1; }
sync
t_rerep=$(( $(ns) - t0 ))

"$bin" device add -f "$mnt" "$work/c.img" > /dev/null || exit 1
remount "$work/a.img:$work/b.img:$work/c.img"
t0=$(ns)
"$bin" device evacuate "$work/a.img" > "$work/evac.log" 2>&1 || { cat "$work/evac.log"; exit 1; }
sync
t_evac=$(( $(ns) - t0 ))
fusermount3 -u "$mnt"

printf '%-44s %8s %8s %8s\n' "$mb MiB in $nfiles files, within one mount" "seconds" "MB/s" "x cp -a"
printf '%-44s %8s %8s %8s\n' "cp -a of the tree (baseline)" "$(secs $t_cp)" "$(mbps $t_cp)" "1.00"
printf '%-44s %8s %8s %8s  (for scale: from outside into the mount)\n' "cp -a into the mount" \
	"$(secs $t_in)" "$(mbps $t_in)" "$(ratio $t_in $t_cp)"
printf '%-44s %8s %8s %8s  (target <= 1.5)\n' "data rereplicate (a second copy)" "$(secs $t_rerep)" \
	"$(mbps $t_rerep)" "$(ratio $t_rerep $t_cp)"
printf '%-44s %8s %8s %8s  (target <= 1.5)\n' "device evacuate (a copy moved)" "$(secs $t_evac)" \
	"$(mbps $t_evac)" "$(ratio $t_evac $t_cp)"
rm -f "$work"/*.img
