#!/bin/sh
# Jobs interrupted and killed: Ctrl-C of `data
# scrub` stops the job cleanly (exit 130, a scrub run again completes);
# the mount is killed with SIGKILL in
# the middle of `device evacuate` and of `data rereplicate`. After the next
# mount (journal replay) every file is intact and fsck finds nothing; the
# command run again finishes the job (nothing left on the evacuated device;
# every extent back to two usable copies). TEST_LONG=1: more data, and a
# kill at several points of each job.
. "$TESTDIR/../lib.sh"
. "$TESTDIR/lib_online.sh"
online_setup
# the mounts' jobs go slowly enough to be caught in the middle (data_job.c)
BCH_JOB_THROTTLE_US=1000
export BCH_JOB_THROTTLE_US
a=$WORK/a.img b=$WORK/b.img c=$WORK/c.img
size=256M files=300 big=24
[ -n "$TEST_LONG" ] && { size=1G; files=2000; big=200; }
mkimg a.img $size
mkimg b.img $size
mkimg c.img $size
run_ok format "$BCACHEFS" format -q --replicas=2 "$a" "$b" "$c"
python3 "$GEN_TREE" "$WORK/src" $files $big > /dev/null || fail "gen_tree"
mount_fg c0 "$a:$b:$c"
cp -a "$WORK/src" "$mnt/tree" || fail "cp -a"
cp -a "$WORK/src" "$mnt/tree2" || fail "cp -a"
manifest "$mnt" "$WORK/manifest.0"
unmount_fg c0

check_all() {	# NAME: every file as it was, fsck clean
	manifest "$mnt" "$WORK/manifest.$1"
	cmp -s "$WORK/manifest.0" "$WORK/manifest.$1" || { diff "$WORK/manifest.0" "$WORK/manifest.$1" | head; fail "$1: files changed"; }
}

# kill_during NAME DELAY CMD...: start CMD, kill -9 the mount DELAY seconds
# after its output shows the data phase, then clean the mountpoint up
kill_during() {
	_kn=$1 _kd=$2 _kp="data extents"
	shift 2
	"$@" > "$WORK/$_kn.out" 2>&1 &
	_cpid=$!
	_i=0
	while ! grep -q "$_kp" "$WORK/$_kn.out"; do
		kill -0 $_cpid 2>/dev/null || { cat "$WORK/$_kn.out"; fail "$_kn: ended before the kill"; }
		_i=$((_i + 1))
		[ $_i -lt 600 ] || fail "$_kn: no progress after 30 s"
		sleep 0.05
	done
	sleep "$_kd"
	kill -9 $pid
	wait $pid 2>/dev/null
	wait $_cpid
	_rc=$?
	fusermount3 -u -z "$mnt" 2>/dev/null
	[ $_rc != 0 ] || { cat "$WORK/$_kn.out"; fail "$_kn: the command did not notice the mount died"; }
	grep -q "lost the job" "$WORK/$_kn.out" || { cat "$WORK/$_kn.out"; fail "$_kn: no 'lost the job'"; }
}

# ---- Ctrl-C: the command closes the job, which stops; running it again works ----
mount_fg i "$a:$b:$c"
"$BCACHEFS" data scrub "$mnt" > "$WORK/int.out" 2>&1 &
cpid=$!
i=0
while ! grep -q "data extents" "$WORK/int.out"; do
	kill -0 $cpid 2>/dev/null || { cat "$WORK/int.out"; fail "scrub ended before the interrupt"; }
	i=$((i + 1))
	[ $i -lt 600 ] || fail "scrub: no progress after 30 s"
	sleep 0.05
done
kill -INT $cpid
wait $cpid
rc=$?
[ $rc = 130 ] || { cat "$WORK/int.out"; fail "interrupted scrub exited $rc, not 130"; }
grep -q "scrub: stopped at data extents:.*; run it again to go on from there" "$WORK/int.out" ||
	{ cat "$WORK/int.out"; fail "interrupted scrub: no 'stopped at' line"; }
run_ok scrub-again "$BCACHEFS" data scrub "$mnt"
grep -q "scrub: done" "$WORK/scrub-again.out" || { cat "$WORK/scrub-again.out"; fail "scrub after the interrupt"; }
check_all interrupted
unmount_fg i

points="0"
[ -n "$TEST_LONG" ] && points="0 0.5 1 2 4"

# ---- evacuate ----
for p in $points; do
	mount_fg e "$a:$b:$c"
	kill_during "evac-$p" "$p" "$BCACHEFS" device evacuate -f "$a"
	mount_fg e2 "$a:$b:$c"
	check_all "evac-$p"
	unmount_fg e2
	fsck_clean "evac-$p" "$a" "$b" "$c"
done
mount_fg e3 "$a:$b:$c"
run_ok evac-again "$BCACHEFS" device evacuate -f "$a"
run_ok evac-usage "$BCACHEFS" fs usage --json "$mnt"
python3 - "$WORK/evac-usage.out" <<'PY' || { cat "$WORK/evac-usage.out"; fail "data left on device 0"; }
import json, sys
u = json.load(open(sys.argv[1]))
d0 = [d for d in u["devices"] if d["index"] == 0][0]
assert d0["state"] == "readonly", d0["state"]
for t in ("data", "btree", "cached"):
    assert d0["data"][t]["bytes"] == 0, (t, d0["data"][t])
for r in u["replicas"]:
    assert 0 not in r["devices"], r
PY
check_all evac-done
run_ok remove "$BCACHEFS" device remove "$a"
unmount_fg e3
fsck_clean evac-done "$b" "$c"

# ---- rereplicate: device 1 failed, copies come back on the others ----
mkimg d.img $size
d=$WORK/d.img
mount_fg r0 "$b:$c"
run_ok add "$BCACHEFS" device add "$mnt" "$d"
run_ok fail1 "$BCACHEFS" device set-state -f "$b" failed
unmount_fg r0
for p in $points; do
	mount_fg r "$b:$c:$d"
	kill_during "rerep-$p" "$p" "$BCACHEFS" data rereplicate "$mnt"
	mount_fg r2 "$b:$c:$d"
	check_all "rerep-$p"
	unmount_fg r2
	fsck_clean "rerep-$p" "$b" "$c" "$d"
done
mount_fg r3 "$b:$c:$d"
run_ok rerep-again "$BCACHEFS" data rereplicate "$mnt"
run_ok rerep-usage "$BCACHEFS" fs usage --json "$mnt"
python3 - "$WORK/rerep-usage.out" <<'PY' || { cat "$WORK/rerep-usage.out"; fail "not two good copies"; }
import json, sys
u = json.load(open(sys.argv[1]))
failed = {d["index"] for d in u["devices"] if d["state"] == "failed"}
assert failed, u["devices"]
for r in u["replicas"]:
    if r["data_type"] in ("data", "btree"):
        assert len(set(r["devices"]) - failed) >= 2, r
PY
check_all rerep-done
unmount_fg r3
fsck_clean rerep-done "$b" "$c" "$d"
