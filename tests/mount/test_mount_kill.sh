#!/bin/sh
# SIGKILL of the read-write mount in the middle of a workload, again and
# again on one image. The workload churns (writes at random offsets,
# overwrites, truncates, renames, unlinks, mkdirs) on some files, and now
# and then writes a new file, fsyncs it and, once fsync returned, records
# its sha256 in a manifest outside the mount; such a file is never touched
# again. After each kill: `fsck -f -n` exits 0 (it replays the journal as the
# next mount does), the next mount replays it, every file of the round's
# manifest is byte-exact (then removed, for the space), and the
# filesystem works on (ENOSPC is part of the workload when it comes).
# Rounds: KILL_ROUNDS (default 50; TEST_QUICK 10).
. "$TESTDIR/../lib.sh"
fuse_mount_setup
img=$WORK/kill.img
truncate -s 128M "$img"
"$BCACHEFS" format -q "$img" > /dev/null 2>&1 || fail "format"
rounds=${KILL_ROUNDS:-50}
[ -n "${TEST_QUICK:-}" ] && rounds=${KILL_ROUNDS:-10}

cat > "$WORK/workload.py" <<'PY'
import hashlib, os, random, sys
mnt, manifest, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = random.Random(seed)
d = os.path.join(mnt, "churn")
os.makedirs(d, exist_ok=True)
m = open(manifest, "a")
for step in range(1000000):
    name = os.path.join(d, "f%d" % r.randrange(40))
    op = r.random()
    try:
        if op < 0.05:
            # a new file, fsync'd, then recorded and left alone
            p = "synced-%d-%d" % (seed, step)
            data = os.urandom(r.randrange(1, 300000))
            fd = os.open(os.path.join(mnt, p), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            done = 0
            while done < len(data):
                done += os.write(fd, data[done:])	# short on ENOSPC, then ENOSPC
            os.fsync(fd)
            os.close(fd)
            m.write("%s %s\n" % (p, hashlib.sha256(data).hexdigest()))
            m.flush()
            os.fsync(m.fileno())
        elif op < 0.5:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644)
            os.pwrite(fd, os.urandom(r.randrange(1, 100000)), r.randrange(0, 200000))
            os.close(fd)
        elif op < 0.65:
            os.truncate(name, r.randrange(0, 300000))
        elif op < 0.75:
            os.rename(name, os.path.join(d, "f%d" % r.randrange(40)))
        elif op < 0.85:
            os.unlink(name)
        elif op < 0.9:
            os.makedirs(os.path.join(d, "sub%d" % r.randrange(5)), exist_ok=True)
        else:
            os.setxattr(name, "user.k%d" % r.randrange(3), os.urandom(r.randrange(1, 200)))
    except (FileNotFoundError, OSError) as e:
        if getattr(e, "errno", None) not in (2, 28):	# ENOENT, ENOSPC
            raise
PY

cat > "$WORK/check.py" <<'PY'
import glob, hashlib, os, sys
mnt, work = sys.argv[1:3]
n = 0
for manifest in glob.glob(os.path.join(work, "manifest.*")):
    # (the files of earlier rounds were checked and removed)
    for line in open(manifest):
        if not line.endswith("\n"):
            continue	# cut by the kill: not known to be complete
        p, h = line.split()
        try:
            got = hashlib.sha256(open(os.path.join(mnt, p), "rb").read()).hexdigest()
        except OSError as e:
            sys.exit("%s: %s" % (p, e))
        if got != h:
            sys.exit("%s: content differs from what was fsync'd" % p)
        n += 1
print("%d fsync'd files checked" % n)
PY

i=0
while [ $i -lt "$rounds" ]; do
	i=$((i + 1))
	mount_fg k "$img"
	python3 "$WORK/workload.py" "$mnt" "$WORK/manifest.$i" "$i" > "$WORK/wl.$i" 2>&1 &
	wl=$!
	sleep "$(python3 -c "import random; random.seed($i); print('%.2f' % random.uniform(0.2, 1.5))")"
	kill -9 $pid
	wait $pid 2> /dev/null
	kill -9 $wl 2> /dev/null
	wait $wl 2> /dev/null
	fusermount3 -u -z "$mnt"
	"$BCACHEFS" fsck -f -n "$img" > "$WORK/fsck.$i" 2>&1 ||
		{ cat "$WORK/fsck.$i"; fail "round $i: fsck -f -n exit $? after the kill"; }
	mount_fg k "$img"
	python3 "$WORK/check.py" "$mnt" "$WORK" > "$WORK/check.$i" 2>&1 ||
		{ cat "$WORK/check.$i"; fail "round $i: after the replay"; }
	# checked: their space back for the next rounds
	[ -f "$WORK/manifest.$i" ] && awk '{ print $1 }' "$WORK/manifest.$i" | sed "s|^|$mnt/|" | xargs rm -f
	[ -f "$WORK/manifest.$i" ] && mv "$WORK/manifest.$i" "$WORK/checked.$i"
	unmount_fg k > /dev/null
	"$BCACHEFS" fsck -f -n "$img" > "$WORK/fsck2.$i" 2>&1 ||
		{ cat "$WORK/fsck2.$i"; fail "round $i: fsck -f -n exit $? after the unmount"; }
done
cat "$WORK/check.$rounds"
echo "$rounds kills"
