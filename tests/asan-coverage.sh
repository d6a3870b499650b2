#!/bin/sh
# Which tests the ASan/UBSan pass of `make check` needs (the Makefile's
# ASAN_TESTS): the lines of the bcachefs code (libbcachefs/, cmd_*.c,
# bcachefs.c) each test runs under TEST_QUICK=1, measured with gcov.
#
#   sh tests/asan-coverage.sh [run|report]
#
# run: builds build-cov (gcc --coverage -O1, as the ASan build) and runs every test of
# tests/run.sh once with it, each test's gcov data in build-cov/gcov/NAME;
# report (also after run): for every test its lines and the lines no other
# test runs, then the tests ASAN_TESTS (the Makefile's, or $ASAN_TESTS)
# leave out and whether all the lines of the whole suite are still run.
# The sanitizers find a bug on a line only when a test runs it: a test
# whose every line other tests of the ASan pass run adds little there.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
cov=$top/build-cov
mode=${1:-report}

if [ "$mode" = run ]; then
	make -s -j2 BUILD=build-cov OPT="-O1 -g0" SAN="--coverage -Wno-maybe-uninitialized" build-cov/bcachefs unit \
		build-cov/tests/replay || exit 1
	rm -rf "$cov/gcov"
	TEST_QUICK=1 TEST_GCOV_DIR=$cov/gcov BCACHEFS=$cov/bcachefs UNITDIR=$cov/tests/unit \
		TEST_DURATIONS_OUT=$cov/durations.txt sh tests/run.sh
fi

[ -d "$cov/gcov" ] || { echo "no coverage data: sh tests/asan-coverage.sh run" >&2; exit 1; }
: "${ASAN_TESTS:=$(make -s -C "$top" --no-print-directory print-asan-tests 2>/dev/null)}"
export ASAN_TESTS
python3 - "$top" "$cov" <<'PY'
import fnmatch, glob, gzip, json, os, subprocess, sys
top, cov = sys.argv[1:3]
gdir = os.path.join(cov, "gcov")

def ours(path):
    rel = os.path.relpath(os.path.join(top, path) if not path.startswith("/") else path, top)
    return (rel.startswith("libbcachefs/") or rel.startswith("cmd_") or rel == "bcachefs.c") and rel

lines = {}	# test -> set of "file:line"
for tdir in sorted(os.listdir(gdir)):
    name = tdir.replace("_", "/", 1)
    got = set()
    # the .gcda of a test, beside links to the build's .gcno
    for gcda in glob.glob(os.path.join(gdir, tdir, "**", "*.gcda"), recursive=True):
        objdir = os.path.dirname(gcda)
        real = objdir[len(os.path.join(gdir, tdir)):]
        gcno = os.path.join(real, os.path.basename(gcda)[:-5] + ".gcno")
        link = gcda[:-5] + ".gcno"
        if os.path.exists(gcno) and not os.path.exists(link):
            os.symlink(gcno, link)
    for objdir in {os.path.dirname(p) for p in glob.glob(os.path.join(gdir, tdir, "**", "*.gcda"), recursive=True)}:
        files = sorted(glob.glob(os.path.join(objdir, "*.gcda")))
        out = subprocess.run(["gcov", "-t", "-j", "-o", objdir] + files, cwd=top,
                             capture_output=True, text=True).stdout
        for doc in out.splitlines():
            doc = doc.strip()
            if not doc.startswith("{"):
                continue
            for f in json.loads(doc)["files"]:
                rel = ours(f["file"])
                if not rel:
                    continue
                for l in f["lines"]:
                    if l["count"] > 0:
                        got.add("%s:%d" % (rel, l["line_number"]))
    lines[name] = got

durs = {}
p = os.path.join(cov, "durations.txt")
if os.path.exists(p):
    for l in open(p):
        w = l.split()
        if len(w) >= 2:
            durs[w[0]] = int(w[1])

allc = set().union(*lines.values()) if lines else set()
count = {}
for s in lines.values():
    for x in s:
        count[x] = count.get(x, 0) + 1
print("%d tests, %d lines run by the whole suite" % (len(lines), len(allc)))
print("%-45s %6s %6s %5s" % ("test", "lines", "unique", "secs"))
for t in sorted(lines, key=lambda t: -len(lines[t])):
    u = sum(1 for x in lines[t] if count[x] == 1)
    print("%-45s %6d %6d %5s" % (t, len(lines[t]), u, durs.get(t, "?")))

pats = os.environ.get("ASAN_TESTS", "").split()
if pats:
    def m(t, g):
        return fnmatch.fnmatch(t, g) or fnmatch.fnmatch(t.split("/", 1)[1], g)
    inc = [g for g in pats if not g.startswith("!")]
    exc = [g[1:] for g in pats if g.startswith("!")]
    sel = {t for t in lines if (not inc or any(m(t, g) for g in inc)) and not any(m(t, g) for g in exc)}
    have = set().union(*(lines[t] for t in sel)) if sel else set()
    missing = allc - have
    print("\nASAN_TESTS: %d tests (%d s here), %d of the %d lines; left out: %d tests (%d s)"
          % (len(sel), sum(durs.get(t, 0) for t in sel), len(have), len(allc),
             len(lines) - len(sel), sum(durs.get(t, 0) for t in lines if t not in sel)))
    for t in sorted(set(lines) - sel):
        only = lines[t] - have
        print("  left out %-40s %4d lines not run by ASAN_TESTS%s" % (t, len(only),
              (": " + " ".join(sorted(only)[:8])) if only else ""))
PY
