/*
 * fsx: random file operations on a filesystem under test, checked against a
 * shadow copy of the same tree kept on another filesystem (tmpfs).
 *
 *   fsx [OPTION]... TARGET SHADOW
 *   fsx --compare TREE1 TREE2
 *
 * From a seed, N operations (write, read, mmap read, truncate, fallocate,
 * punch hole, zero range, create, rename, link, unlink, xattr set/remove,
 * fsync, mkdir, rmdir, folder rename) on F file names in the top folder
 * and in up to 2*D subfolders. Each operation is applied to both trees; the
 * results (return value and errno) must agree, then the paths it touched
 * are compared (type, size, link count, contents, user.* xattrs), every
 * --check-all operations and at the end the whole trees (names, hard-link
 * groups too). The shadow copy is the model: operations a shadow
 * filesystem lacks (ZERO_RANGE on tmpfs) are emulated there.
 *
 * On a mismatch: the seed, the operation number, what differs and the last
 * operations, exit 1. Exit 0 when all agreed, 2 on a usage or set-up error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>

enum op {
	OP_WRITE, OP_READ, OP_MMAPREAD, OP_TRUNCATE, OP_FALLOC, OP_PUNCH, OP_ZERO, OP_CREATE, OP_RENAME,
	OP_LINK, OP_UNLINK, OP_SETXATTR, OP_RMXATTR, OP_FSYNC, OP_MKDIR, OP_RMDIR, OP_RENDIR, NR_OPS
};

static const struct { const char *name; unsigned weight; } ops[NR_OPS] = {
	[OP_WRITE] = { "write", 20 },      [OP_READ] = { "read", 8 },       [OP_MMAPREAD] = { "mmapread", 4 },
	[OP_TRUNCATE] = { "truncate", 7 }, [OP_FALLOC] = { "falloc", 5 },   [OP_PUNCH] = { "punch", 5 },
	[OP_ZERO] = { "zero", 5 },         [OP_CREATE] = { "create", 4 },   [OP_RENAME] = { "rename", 5 },
	[OP_LINK] = { "link", 4 },         [OP_UNLINK] = { "unlink", 4 },   [OP_SETXATTR] = { "setxattr", 5 },
	[OP_RMXATTR] = { "rmxattr", 3 },   [OP_FSYNC] = { "fsync", 2 },     [OP_MKDIR] = { "mkdir", 1 },
	[OP_RMDIR] = { "rmdir", 1 },       [OP_RENDIR] = { "rendir", 1 },
};

static struct {
	uint64_t seed, nops;
	unsigned files, dirs, max_size, check_every, log_len;
	bool enabled[NR_OPS], final, verbose;
	uint64_t plant;
	int misapply;
} o = {
	.nops = 10000, .files = 24, .dirs = 4, .max_size = 256 << 10, .check_every = 1000, .log_len = 30,
	.final = true, .misapply = -1,
};

static const char *target, *shadow;
static uint64_t opno;
static char **oplog;
static uint64_t rng;

/* ---- random numbers: xorshift64*, seeded through splitmix64 ---- */

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }

static void seed_rng(uint64_t s)
{
	s += 0x9e3779b97f4a7c15ULL;
	s = (s ^ (s >> 30)) * 0xbf58476d1ce4e5b9ULL;
	s = (s ^ (s >> 27)) * 0x94d049bb133111ebULL;
	rng = (s ^ (s >> 31)) | 1;
}

/* ---- the log of the last operations, and failing ---- */

__attribute__((format(printf, 1, 2)))
static void logop(const char *fmt, ...)
{
	char *s = oplog[opno % o.log_len];
	va_list ap;
	int n = snprintf(s, 256, "%" PRIu64 ": ", opno);

	va_start(ap, fmt);
	vsnprintf(s + n, 256 - n, fmt, ap);
	va_end(ap);
	if (o.verbose)
		printf("%s\n", s);
}

__attribute__((format(printf, 1, 2), noreturn))
static void mismatch(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "fsx: MISMATCH at operation %" PRIu64 " (seed %" PRIu64 "): ", opno, o.seed);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nfsx: the last operations:\n");
	uint64_t first = opno + 1 > o.log_len ? opno + 1 - o.log_len : 0;
	for (uint64_t i = first; i <= opno; i++)
		if (oplog[i % o.log_len][0])
			fprintf(stderr, "  %s\n", oplog[i % o.log_len]);
	fprintf(stderr, "fsx: to replay: fsx -S %" PRIu64 " -N %" PRIu64 " -f %u -d %u -l %u ...\n", o.seed,
		opno + 1, o.files, o.dirs, o.max_size);
	exit(1);
}

__attribute__((noreturn))
static void setup_fail(const char *what, const char *p)
{
	fprintf(stderr, "fsx: %s %s: %s\n", what, p, strerror(errno));
	exit(2);
}

/* ---- the namespace: file slots in the top folder (dir 0) and folders 1..2D ---- */

static bool *file_exists, *dir_exists;
static unsigned nr_dirs;	/* slots, 1 + 2 * dirs */

static void slot_path(char *buf, size_t n, unsigned d, unsigned f)
{
	if (d)
		snprintf(buf, n, "d%u/f%u", d - 1, f);
	else
		snprintf(buf, n, "f%u", f);
}

static void dir_path(char *buf, size_t n, unsigned d)
{
	snprintf(buf, n, "d%u", d - 1);
}

static char *in(const char *root, const char *rel)
{
	static char bufs[4][PATH_MAX];
	static int k;
	char *b = bufs[k++ & 3];

	snprintf(b, PATH_MAX, "%s/%s", root, rel);
	return b;
}

/* a random slot for which want(slot) holds, or -1 */
static long pick_file(bool existing)
{
	unsigned n = nr_dirs * o.files, start = below(n);

	for (unsigned i = 0; i < n; i++) {
		unsigned s = (start + i) % n;

		if (dir_exists[s / o.files] && file_exists[s] == existing)
			return s;
	}
	return -1;
}

static long pick_dir(bool existing)
{
	unsigned start = below(nr_dirs - 1);

	for (unsigned i = 0; i < nr_dirs - 1; i++) {
		unsigned d = 1 + (start + i) % (nr_dirs - 1);

		if (dir_exists[d] == existing)
			return d;
	}
	return -1;
}

static unsigned count_files(void)
{
	unsigned n = 0;

	for (unsigned s = 0; s < nr_dirs * o.files; s++)
		n += dir_exists[s / o.files] && file_exists[s];
	return n;
}

/* ---- comparing ---- */

static unsigned char *buf_a, *buf_b;
static size_t buf_len;

static ssize_t read_whole(const char *p, unsigned char **buf, size_t *cap)
{
	int fd = open(p, O_RDONLY);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	for (;;) {
		if (got == *cap) {
			*cap = *cap ? *cap * 2 : 1 << 20;
			*buf = realloc(*buf, *cap);
		}
		n = read(fd, *buf + got, *cap - got);
		if (n < 0) {
			int e = errno;

			close(fd);
			errno = e;
			return -1;
		}
		if (!n)
			break;
		got += n;
	}
	close(fd);
	return got;
}

static size_t cap_a, cap_b;

struct xa { char name[256]; size_t len; unsigned char val[65536]; };

/* the user.* xattrs of P, sorted by name; count or -1 */
static int cmp_xa(const void *a, const void *b) { return strcmp(((struct xa *)a)->name, ((struct xa *)b)->name); }

static int read_xattrs(const char *p, struct xa *v, int max)
{
	char names[65536];
	ssize_t n = llistxattr(p, names, sizeof(names));
	int k = 0;

	if (n < 0)
		return -1;
	for (ssize_t i = 0; i < n; i += strlen(names + i) + 1) {
		if (strncmp(names + i, "user.", 5))
			continue;
		if (k == max)
			return -1;
		size_t nl = strlen(names + i);

		if (nl >= sizeof(v[k].name))	/* longer than XATTR_NAME_MAX */
			return -1;
		memcpy(v[k].name, names + i, nl + 1);
		ssize_t l = lgetxattr(p, names + i, v[k].val, sizeof(v[k].val));
		if (l < 0)
			return -1;
		v[k++].len = l;
	}
	qsort(v, k, sizeof(*v), cmp_xa);
	return k;
}

static struct xa *xa_a, *xa_b;
#define MAX_XATTRS 64

/* compare the entry REL of both trees (roots A, B); a description of the
 * first difference in WHY, false; or true */
static bool compare_entry(const char *ra, const char *rb, const char *rel, char *why, size_t wn)
{
	char pa[PATH_MAX], pb[PATH_MAX];
	struct stat sa, sb;
	int ea, eb;

	snprintf(pa, sizeof(pa), "%s/%s", ra, rel);
	snprintf(pb, sizeof(pb), "%s/%s", rb, rel);
	ea = lstat(pa, &sa) ? errno : 0;
	eb = lstat(pb, &sb) ? errno : 0;
	if (ea || eb) {
		if (ea == eb)
			return true;
		snprintf(why, wn, "%s: lstat %s in %s, %s in %s", rel, ea ? strerror(ea) : "exists", ra,
			 eb ? strerror(eb) : "exists", rb);
		return false;
	}
	if ((sa.st_mode & S_IFMT) != (sb.st_mode & S_IFMT)) {
		snprintf(why, wn, "%s: type %o in %s, %o in %s", rel, sa.st_mode & S_IFMT, ra, sb.st_mode & S_IFMT, rb);
		return false;
	}
	if ((sa.st_mode & 07777) != (sb.st_mode & 07777)) {
		snprintf(why, wn, "%s: mode %o in %s, %o in %s", rel, sa.st_mode & 07777, ra, sb.st_mode & 07777, rb);
		return false;
	}
	if (!S_ISDIR(sa.st_mode) && sa.st_nlink != sb.st_nlink) {
		snprintf(why, wn, "%s: nlink %lu in %s, %lu in %s", rel, (unsigned long)sa.st_nlink, ra,
			 (unsigned long)sb.st_nlink, rb);
		return false;
	}
	if (S_ISDIR(sa.st_mode) && sa.st_nlink != sb.st_nlink && sa.st_nlink != 1 && sb.st_nlink != 1) {
		snprintf(why, wn, "%s: folder nlink %lu in %s, %lu in %s", rel, (unsigned long)sa.st_nlink, ra,
			 (unsigned long)sb.st_nlink, rb);
		return false;
	}
	if (S_ISREG(sa.st_mode)) {
		if (sa.st_size != sb.st_size) {
			snprintf(why, wn, "%s: size %lld in %s, %lld in %s", rel, (long long)sa.st_size, ra,
				 (long long)sb.st_size, rb);
			return false;
		}
		ssize_t na = read_whole(pa, &buf_a, &cap_a), nb = read_whole(pb, &buf_b, &cap_b);
		if (na != nb || na != sa.st_size) {
			snprintf(why, wn, "%s: read %zd bytes from %s, %zd from %s (size %lld)", rel, na, ra, nb, rb,
				 (long long)sa.st_size);
			return false;
		}
		if (memcmp(buf_a, buf_b, na)) {
			ssize_t i = 0, j;

			while (buf_a[i] == buf_b[i])
				i++;
			for (j = na; j > i && buf_a[j - 1] == buf_b[j - 1]; j--)
				;
			snprintf(why, wn, "%s: contents differ in [%zd, %zd) (size %zd): byte %zd is %02x in %s, %02x in %s",
				 rel, i, j, na, i, buf_a[i], ra, buf_b[i], rb);
			return false;
		}
	}
	if (S_ISLNK(sa.st_mode)) {
		char ta[PATH_MAX], tb[PATH_MAX];
		ssize_t la = readlink(pa, ta, sizeof(ta)), lb = readlink(pb, tb, sizeof(tb));

		if (la != lb || la < 0 || memcmp(ta, tb, la)) {
			snprintf(why, wn, "%s: symlink targets differ", rel);
			return false;
		}
	}
	if (S_ISREG(sa.st_mode) || S_ISDIR(sa.st_mode)) {
		int xa = read_xattrs(pa, xa_a, MAX_XATTRS), xb = read_xattrs(pb, xa_b, MAX_XATTRS);

		if (xa != xb) {
			snprintf(why, wn, "%s: %d user xattrs in %s, %d in %s", rel, xa, ra, xb, rb);
			return false;
		}
		for (int i = 0; i < xa; i++)
			if (strcmp(xa_a[i].name, xa_b[i].name) || xa_a[i].len != xa_b[i].len ||
			    memcmp(xa_a[i].val, xa_b[i].val, xa_a[i].len)) {
				snprintf(why, wn, "%s: xattr %s (%zu bytes) in %s, %s (%zu bytes) in %s", rel, xa_a[i].name,
					 xa_a[i].len, ra, xa_b[i].name, xa_b[i].len, rb);
				return false;
			}
	}
	return true;
}

static void check_path(const char *rel)
{
	char why[1024];

	if (!compare_entry(target, shadow, rel, why, sizeof(why)))
		mismatch("%s", why);
}

/* ---- whole trees ---- */

struct ent { char *rel; ino_t ino; dev_t dev; };
struct tree { struct ent *v; size_t n, cap; };

static void walk(const char *root, const char *rel, struct tree *t)
{
	char p[PATH_MAX];
	DIR *d;
	struct dirent *e;

	snprintf(p, sizeof(p), "%s%s%s", root, *rel ? "/" : "", rel);
	d = opendir(p);
	if (!d)
		return;
	while ((e = readdir(d))) {
		char r[PATH_MAX], full[2 * PATH_MAX];
		struct stat s;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!*rel && !strcmp(e->d_name, "lost+found"))
			continue;
		snprintf(r, sizeof(r), "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		snprintf(full, sizeof(full), "%s/%s", root, r);
		if (lstat(full, &s))
			continue;
		if (t->n == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 256;
			t->v = realloc(t->v, t->cap * sizeof(*t->v));
		}
		t->v[t->n++] = (struct ent){ strdup(r), s.st_ino, s.st_dev };
		if (S_ISDIR(s.st_mode))
			walk(root, r, t);
	}
	closedir(d);
}

static int cmp_ent(const void *a, const void *b) { return strcmp(((struct ent *)a)->rel, ((struct ent *)b)->rel); }

static void free_tree(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].rel);
	free(t->v);
}

/* 0 = equal; else 1 and the first difference printed (or in mismatch()) */
static int compare_trees(const char *ra, const char *rb, bool fatal)
{
	struct tree a = { 0 }, b = { 0 };
	char why[1024] = "";
	int bad = 0;

	walk(ra, "", &a);
	walk(rb, "", &b);
	qsort(a.v, a.n, sizeof(*a.v), cmp_ent);
	qsort(b.v, b.n, sizeof(*b.v), cmp_ent);
	for (size_t i = 0, j = 0; !bad && (i < a.n || j < b.n);) {
		int c = i == a.n ? 1 : j == b.n ? -1 : strcmp(a.v[i].rel, b.v[j].rel);

		if (c) {
			snprintf(why, sizeof(why), "%s only in %s", c < 0 ? a.v[i].rel : b.v[j].rel, c < 0 ? ra : rb);
			bad = 1;
			break;
		}
		if (!compare_entry(ra, rb, a.v[i].rel, why, sizeof(why))) {
			bad = 1;
			break;
		}
		/* hard links: the first name with the same inode must be the same in both */
		size_t fa = i, fb = j;
		for (size_t k = 0; k < i; k++)
			if (a.v[k].ino == a.v[i].ino && a.v[k].dev == a.v[i].dev) {
				fa = k;
				break;
			}
		for (size_t k = 0; k < j; k++)
			if (b.v[k].ino == b.v[j].ino && b.v[k].dev == b.v[j].dev) {
				fb = k;
				break;
			}
		if (fa != fb) {
			snprintf(why, sizeof(why), "%s: a hard link of %s in %s, of %s in %s", a.v[i].rel, a.v[fa].rel, ra,
				 b.v[fb].rel, rb);
			bad = 1;
			break;
		}
		i++;
		j++;
	}
	size_t n = a.n;
	free_tree(&a);
	free_tree(&b);
	if (bad && fatal)
		mismatch("whole-tree compare: %s", why);
	if (bad)
		fprintf(stderr, "fsx: the trees differ: %s\n", why);
	else if (!fatal)
		printf("fsx: %s and %s: %zu entries, equal\n", ra, rb, n);
	return bad;
}

/* ---- applying an operation to both trees ---- */

struct res { long r; int e; };

static void agree(const char *what, struct res t, struct res s)
{
	if (t.r != s.r || (t.r < 0 && t.e != s.e))
		mismatch("%s: %ld (%s) on the target, %ld (%s) on the shadow", what, t.r,
			 t.r < 0 ? strerrorname_np(t.e) : "ok", s.r, s.r < 0 ? strerrorname_np(s.e) : "ok");
}

#define DO(call) ({ errno = 0; long _r = (long)(call); (struct res){ _r, errno }; })

static unsigned char *data;

static int open2(const char *rel, int flags, int *fs)
{
	int ft = open(in(target, rel), flags);

	if (ft < 0)
		mismatch("open %s on the target: %s", rel, strerror(errno));
	*fs = open(in(shadow, rel), flags);
	if (*fs < 0)
		mismatch("open %s on the shadow: %s", rel, strerror(errno));
	return ft;
}

static off_t fsize(int fd)
{
	struct stat s;

	return fstat(fd, &s) ? -1 : s.st_size;
}

/* offset and length in [0, max_size), lengths mostly small */
static void range(off_t *off, size_t *len)
{
	unsigned m = o.max_size;

	*off = below(m);
	switch (below(4)) {
	case 0: *len = 1 + below(512); break;
	case 1: *len = 1 + below(8192); break;
	case 2: *len = 1 + below(65536); break;
	default: *len = 1 + below(m); break;
	}
	if (below(3) == 0)	/* block-aligned now and then */
		*off &= ~(off_t)4095;
	if (*off + *len > m)
		*len = m - *off;
	if (!*len)
		*len = 1;
}

static bool misapply(enum op op)
{
	return o.misapply == (int)op;
}

static void op_data(enum op op, unsigned slot)
{
	char rel[64], what[200];
	int ft, fs;
	off_t off;
	size_t len;
	struct res rt, rs;

	slot_path(rel, sizeof(rel), slot / o.files, slot % o.files);
	ft = open2(rel, op == OP_READ || op == OP_MMAPREAD ? O_RDONLY : O_RDWR, &fs);
	range(&off, &len);
	switch (op) {
	case OP_WRITE:
		for (size_t i = 0; i < len; i += 8) {
			uint64_t v = rnd();
			memcpy(data + i, &v, 8);
		}
		logop("write %s %lld+%zu", rel, (long long)off, len);
		rt = DO(pwrite(ft, data, len, off + misapply(op)));
		rs = DO(pwrite(fs, data, len, off));
		break;
	case OP_READ: {
		off_t sz = fsize(fs);

		if (sz > 0 && below(2))
			off = below(sz);
		logop("read %s %lld+%zu", rel, (long long)off, len);
		if (cap_a < len) {
			cap_a = len;
			buf_a = realloc(buf_a, cap_a);
		}
		if (cap_b < len) {
			cap_b = len;
			buf_b = realloc(buf_b, cap_b);
		}
		rt = DO(pread(ft, buf_a, len, off));
		rs = DO(pread(fs, buf_b, len, off));
		agree("pread", rt, rs);
		if (rt.r > 0 && memcmp(buf_a, buf_b, rt.r))
			mismatch("read %s %lld+%zu: the data differs", rel, (long long)off, len);
		break;
	}
	case OP_MMAPREAD: {
		off_t sz = fsize(fs);

		if (sz <= 0) {
			logop("mmapread %s: empty, skipped", rel);
			rt = rs = (struct res){ 0, 0 };
			break;
		}
		off = below(sz);
		if (off + (off_t)len > sz)
			len = sz - off;
		logop("mmapread %s %lld+%zu", rel, (long long)off, len);
		off_t start = off & ~(off_t)(sysconf(_SC_PAGESIZE) - 1);
		void *m = mmap(NULL, len + (off - start), PROT_READ, MAP_PRIVATE, ft, start);
		if (m == MAP_FAILED)
			mismatch("mmap %s: %s", rel, strerror(errno));
		if (cap_b < len) {
			cap_b = len;
			buf_b = realloc(buf_b, cap_b);
		}
		if (pread(fs, buf_b, len, off) != (ssize_t)len)
			mismatch("pread of the shadow %s", rel);
		if (memcmp((char *)m + (off - start), buf_b, len))
			mismatch("mmapread %s %lld+%zu: the mapped data differs", rel, (long long)off, len);
		munmap(m, len + (off - start));
		rt = rs = (struct res){ 0, 0 };
		break;
	}
	case OP_TRUNCATE:
		off = below(4) ? below(o.max_size) : below(o.max_size) & ~4095;
		logop("truncate %s %lld", rel, (long long)off);
		rt = DO(ftruncate(ft, off + misapply(op)));
		rs = DO(ftruncate(fs, off));
		break;
	case OP_FALLOC: {
		int mode = below(2) ? FALLOC_FL_KEEP_SIZE : 0;

		logop("falloc %s %lld+%zu%s", rel, (long long)off, len, mode ? " keep_size" : "");
		rt = DO(fallocate(ft, mode, off + misapply(op), len));
		rs = DO(fallocate(fs, mode, off, len));
		break;
	}
	case OP_PUNCH:
		logop("punch %s %lld+%zu", rel, (long long)off, len);
		rt = DO(fallocate(ft, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off + misapply(op), len));
		rs = DO(fallocate(fs, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len));
		break;
	case OP_ZERO: {
		int keep = below(2) ? FALLOC_FL_KEEP_SIZE : 0;

		logop("zero %s %lld+%zu%s", rel, (long long)off, len, keep ? " keep_size" : "");
		rt = DO(fallocate(ft, FALLOC_FL_ZERO_RANGE | keep, off + misapply(op), len));
		rs = DO(fallocate(fs, FALLOC_FL_ZERO_RANGE | keep, off, len));
		if (rs.r < 0 && rs.e == EOPNOTSUPP) {	/* tmpfs: punch, then allocate */
			rs = DO(fallocate(fs, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len));
			if (!rs.r)
				rs = DO(fallocate(fs, keep, off, len));
		}
		break;
	}
	case OP_FSYNC: {
		bool d = below(2);

		logop("%s %s", d ? "fdatasync" : "fsync", rel);
		rt = DO(d ? fdatasync(ft) : fsync(ft));
		rs = (struct res){ 0, 0 };
		break;
	}
	default:
		abort();
	}
	snprintf(what, sizeof(what), "%s %s", ops[op].name, rel);
	agree(what, rt, rs);
	close(ft);
	close(fs);
	check_path(rel);
}

static void op_xattr(enum op op, unsigned slot)
{
	char rel[64], name[32];
	struct res rt, rs;

	slot_path(rel, sizeof(rel), slot / o.files, slot % o.files);
	snprintf(name, sizeof(name), "user.x%u", (unsigned)below(8));
	if (op == OP_SETXATTR) {
		/* up to 1900 bytes: a bcachefs xattr is one key of at most 255
		 * u64s (2018 format), so about 1990 bytes of value at most */
		size_t len = below(4) ? below(64) : below(1900);
		int flags = (int[]){ 0, 0, XATTR_CREATE, XATTR_REPLACE }[below(4)];

		for (size_t i = 0; i < len; i++)
			data[i] = rnd();
		logop("setxattr %s %s %zu bytes flags %d", rel, name, len, flags);
		rt = DO(setxattr(in(target, rel), name, data, len, flags));
		rs = DO(setxattr(in(shadow, rel), name, data, len, flags));
	} else {
		logop("removexattr %s %s", rel, name);
		rt = DO(removexattr(in(target, rel), name));
		rs = DO(removexattr(in(shadow, rel), name));
	}
	agree(ops[op].name, rt, rs);
	check_path(rel);
}

static ino_t shadow_ino(const char *rel)
{
	struct stat s;

	return lstat(in(shadow, rel), &s) ? 0 : s.st_ino;
}

static void op_names(enum op op)
{
	char a[64], b[64], what[200];
	struct res rt, rs;
	long s, t;

	switch (op) {
	case OP_CREATE:
		if ((s = pick_file(false)) < 0)
			return;
		slot_path(a, sizeof(a), s / o.files, s % o.files);
		logop("create %s", a);
		rt = DO(open(in(target, a), O_CREAT | O_EXCL | O_WRONLY, 0644));
		rs = DO(open(in(shadow, a), O_CREAT | O_EXCL | O_WRONLY, 0644));
		agree("create", (struct res){ rt.r < 0 ? -1 : 0, rt.e }, (struct res){ rs.r < 0 ? -1 : 0, rs.e });
		if (rt.r >= 0)
			close(rt.r);
		if (rs.r >= 0)
			close(rs.r);
		file_exists[s] = true;
		check_path(a);
		break;
	case OP_RENAME:
		if ((s = pick_file(true)) < 0)
			return;
		t = pick_file(below(3) == 0);	/* now and then over an existing file */
		if (t < 0)
			return;
		slot_path(a, sizeof(a), s / o.files, s % o.files);
		slot_path(b, sizeof(b), t / o.files, t % o.files);
		bool same = file_exists[t] && shadow_ino(a) == shadow_ino(b);
		logop("rename %s %s%s", a, b, same ? " (links of one inode)" : "");
		rt = DO(rename(in(target, a), in(target, b)));
		rs = DO(rename(in(shadow, a), in(shadow, b)));
		agree("rename", rt, rs);
		if (!same && s != t) {
			file_exists[s] = false;
			file_exists[t] = true;
		}
		check_path(a);
		check_path(b);
		break;
	case OP_LINK:
		if ((s = pick_file(true)) < 0 || (t = pick_file(false)) < 0)
			return;
		slot_path(a, sizeof(a), s / o.files, s % o.files);
		slot_path(b, sizeof(b), t / o.files, t % o.files);
		logop("link %s %s", a, b);
		rt = DO(link(in(target, a), in(target, b)));
		rs = DO(link(in(shadow, a), in(shadow, b)));
		agree("link", rt, rs);
		file_exists[t] = true;
		check_path(a);
		check_path(b);
		break;
	case OP_UNLINK:
		if (count_files() < o.files / 4 || (s = pick_file(true)) < 0)
			return;
		slot_path(a, sizeof(a), s / o.files, s % o.files);
		/* another link of the same inode, to check its nlink afterwards */
		b[0] = 0;
		ino_t i = shadow_ino(a);
		for (unsigned k = 0; k < nr_dirs * o.files; k++)
			if ((long)k != s && dir_exists[k / o.files] && file_exists[k]) {
				char c[64];

				slot_path(c, sizeof(c), k / o.files, k % o.files);
				if (shadow_ino(c) == i) {
					strcpy(b, c);
					break;
				}
			}
		logop("unlink %s", a);
		rt = DO(unlink(in(target, a)));
		rs = DO(unlink(in(shadow, a)));
		agree("unlink", rt, rs);
		file_exists[s] = false;
		check_path(a);
		if (b[0])
			check_path(b);
		break;
	case OP_MKDIR:
		if ((s = pick_dir(false)) < 0)
			return;
		dir_path(a, sizeof(a), s);
		logop("mkdir %s", a);
		rt = DO(mkdir(in(target, a), 0755));
		rs = DO(mkdir(in(shadow, a), 0755));
		agree("mkdir", rt, rs);
		dir_exists[s] = true;
		for (unsigned k = 0; k < o.files; k++)
			file_exists[s * o.files + k] = false;
		check_path(a);
		break;
	case OP_RMDIR:
		if ((s = pick_dir(true)) < 0)
			return;
		dir_path(a, sizeof(a), s);
		logop("rmdir %s", a);
		rt = DO(rmdir(in(target, a)));
		rs = DO(rmdir(in(shadow, a)));
		agree("rmdir", rt, rs);
		if (!rt.r)
			dir_exists[s] = false;
		check_path(a);
		check_path(".");
		break;
	case OP_RENDIR:
		if ((s = pick_dir(true)) < 0)
			return;
		t = pick_dir(below(2));	/* over an (empty or not) folder, or to a new name */
		if (t < 0 || t == s)
			return;
		dir_path(a, sizeof(a), s);
		dir_path(b, sizeof(b), t);
		logop("rename %s %s (folders)", a, b);
		rt = DO(rename(in(target, a), in(target, b)));
		rs = DO(rename(in(shadow, a), in(shadow, b)));
		agree("rename of a folder", rt, rs);
		if (!rt.r) {
			for (unsigned k = 0; k < o.files; k++)
				file_exists[t * o.files + k] = file_exists[s * o.files + k];
			dir_exists[s] = false;
			dir_exists[t] = true;
		}
		check_path(a);
		check_path(b);
		check_path(".");
		break;
	default:
		abort();
	}
	(void)what;
}

/* flip one byte of a file of the target, from outside (--plant) */
static void plant(void)
{
	for (unsigned k = 0; k < nr_dirs * o.files; k++)
		if (dir_exists[k / o.files] && file_exists[k]) {
			char rel[64];
			unsigned char c;
			struct stat s;
			int fd;

			slot_path(rel, sizeof(rel), k / o.files, k % o.files);
			fd = open(in(target, rel), O_RDWR);
			if (fd < 0 || fstat(fd, &s) || !s.st_size) {
				if (fd >= 0)
					close(fd);
				continue;
			}
			off_t off = below(s.st_size);
			if (pread(fd, &c, 1, off) == 1) {
				c ^= 0x5a;
				if (pwrite(fd, &c, 1, off) == 1)
					printf("fsx: planted: flipped byte %lld of %s after operation %" PRIu64 "\n",
					       (long long)off, rel, opno);
			}
			close(fd);
			return;
		}
}

static void one_op(void)
{
	unsigned total = 0, r;
	enum op op;

	for (int i = 0; i < NR_OPS; i++)
		total += o.enabled[i] ? ops[i].weight : 0;
	r = below(total);
	for (op = 0; op < NR_OPS; op++) {
		if (!o.enabled[op])
			continue;
		if (r < ops[op].weight)
			break;
		r -= ops[op].weight;
	}
	/* keep about a third of the file names in use */
	if ((op == OP_CREATE || op == OP_LINK) && o.enabled[OP_UNLINK] && count_files() > nr_dirs * o.files / 3)
		op = OP_UNLINK;
	switch (op) {
	case OP_WRITE: case OP_READ: case OP_MMAPREAD: case OP_TRUNCATE: case OP_FALLOC: case OP_PUNCH:
	case OP_ZERO: case OP_FSYNC: case OP_SETXATTR: case OP_RMXATTR: {
		long s = pick_file(true);

		if (s < 0) {
			op_names(OP_CREATE);
			return;
		}
		if (op == OP_SETXATTR || op == OP_RMXATTR)
			op_xattr(op, s);
		else
			op_data(op, s);
		break;
	}
	default:
		op_names(op);
	}
}

static bool empty_dir(const char *p)
{
	DIR *d = opendir(p);
	struct dirent *e;
	bool empty = true;

	if (!d)
		setup_fail("cannot open", p);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "lost+found"))
			empty = false;
	closedir(d);
	return empty;
}

static int op_by_name(const char *n)
{
	for (int i = 0; i < NR_OPS; i++)
		if (!strcmp(ops[i].name, n))
			return i;
	fprintf(stderr, "fsx: no operation \"%s\" (operations:", n);
	for (int i = 0; i < NR_OPS; i++)
		fprintf(stderr, " %s", ops[i].name);
	fprintf(stderr, ")\n");
	exit(2);
}

static void set_ops(char *list, bool on)
{
	char *save = NULL;

	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
		o.enabled[op_by_name(t)] = on;
}

static void usage(int code)
{
	FILE *f = code ? stderr : stdout;

	fprintf(f,
"Usage: fsx [OPTION]... TARGET SHADOW\n"
"       fsx --compare TREE1 TREE2\n"
"Random file operations on the folder TARGET (on the filesystem under test),\n"
"checked after each against the same operations on SHADOW (tmpfs). Both\n"
"folders must be empty. Exit 0 = all agreed, 1 = a mismatch (seed, operation\n"
"number, the last operations on stderr), 2 = usage or set-up error.\n"
"\n"
"  -S, --seed N          the seed (default: from the clock; printed)\n"
"  -N, --ops N           operations (default 10000)\n"
"  -f, --files N         file names per folder (default 24)\n"
"  -d, --dirs N          subfolders (default 4; 2N folder names)\n"
"  -l, --max-size BYTES  largest file (default 262144)\n"
"  -x, --exclude OPS     operations not to do, comma-separated (e.g. mmapread\n"
"                        where shared mappings fail, zero without ZERO_RANGE)\n"
"  -o, --only OPS        only these operations\n"
"  -c, --check-all N     compare the whole trees every N operations\n"
"                        (default 1000; 0 = only at the end)\n"
"      --no-final        no whole-tree compare at the end\n"
"  -L, --log N           operations shown on a mismatch (default 30)\n"
"      --plant N         flip a byte of a target file after operation N (a\n"
"                        planted fault: fsx must then report a mismatch)\n"
"      --misapply OP     apply every OP (write, truncate, falloc, punch, zero)\n"
"                        to the target one byte off (a planted bug)\n"
"      --compare         compare TREE1 and TREE2 only (names, types, modes,\n"
"                        sizes, link counts, hard links, contents, user xattrs)\n"
"  -v, --verbose         print every operation\n"
"  -h, --help            this help\n"
"Operations:");
	for (int i = 0; i < NR_OPS; i++)
		fprintf(f, " %s", ops[i].name);
	fprintf(f, "\n");
	exit(code);
}

int main(int argc, char **argv)
{
	enum { OPT_FINAL = 256, OPT_PLANT, OPT_MIS, OPT_CMP };
	static const struct option lo[] = {
		{ "seed", 1, NULL, 'S' }, { "ops", 1, NULL, 'N' }, { "files", 1, NULL, 'f' },
		{ "dirs", 1, NULL, 'd' }, { "max-size", 1, NULL, 'l' }, { "exclude", 1, NULL, 'x' },
		{ "only", 1, NULL, 'o' }, { "check-all", 1, NULL, 'c' }, { "no-final", 0, NULL, OPT_FINAL },
		{ "log", 1, NULL, 'L' }, { "plant", 1, NULL, OPT_PLANT }, { "misapply", 1, NULL, OPT_MIS },
		{ "compare", 0, NULL, OPT_CMP }, { "verbose", 0, NULL, 'v' }, { "help", 0, NULL, 'h' }, { 0, 0, 0, 0 }
	};
	bool seeded = false, compare_only = false, only = false;
	int c;

	for (int i = 0; i < NR_OPS; i++)
		o.enabled[i] = true;
	while ((c = getopt_long(argc, argv, "S:N:f:d:l:x:o:c:L:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'S': o.seed = strtoull(optarg, NULL, 0); seeded = true; break;
		case 'N': o.nops = strtoull(optarg, NULL, 0); break;
		case 'f': o.files = atoi(optarg); break;
		case 'd': o.dirs = atoi(optarg); break;
		case 'l': o.max_size = strtoul(optarg, NULL, 0); break;
		case 'x': set_ops(optarg, false); break;
		case 'o':
			if (!only)
				for (int i = 0; i < NR_OPS; i++)
					o.enabled[i] = false;
			only = true;
			set_ops(optarg, true);
			break;
		case 'c': o.check_every = atoi(optarg); break;
		case OPT_FINAL: o.final = false; break;
		case 'L': o.log_len = atoi(optarg); break;
		case OPT_PLANT: o.plant = strtoull(optarg, NULL, 0); break;
		case OPT_MIS:
			o.misapply = op_by_name(optarg);
			if (o.misapply != OP_WRITE && o.misapply != OP_TRUNCATE && o.misapply != OP_FALLOC &&
			    o.misapply != OP_PUNCH && o.misapply != OP_ZERO) {
				fprintf(stderr, "fsx: --misapply takes write, truncate, falloc, punch or zero\n");
				return 2;
			}
			break;
		case OPT_CMP: compare_only = true; break;
		case 'v': o.verbose = true; break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (optind + 2 != argc)
		usage(2);
	xa_a = malloc(MAX_XATTRS * sizeof(*xa_a));
	xa_b = malloc(MAX_XATTRS * sizeof(*xa_b));
	if (compare_only)
		return compare_trees(argv[optind], argv[optind + 1], false);
	if (!o.files || o.max_size < 4096 || !o.log_len) {
		fprintf(stderr, "fsx: --files and --log must be > 0, --max-size >= 4096\n");
		return 2;
	}
	target = argv[optind];
	shadow = argv[optind + 1];
	if (!empty_dir(target) || !empty_dir(shadow)) {
		fprintf(stderr, "fsx: %s and %s must be empty folders\n", target, shadow);
		return 2;
	}
	if (!seeded)
		o.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	seed_rng(o.seed);
	setvbuf(stdout, NULL, _IOLBF, 0);
	umask(022);
	printf("fsx: seed %" PRIu64 ", %" PRIu64 " operations, %u files x %u folders, max size %u, on %s (shadow %s)\n",
	       o.seed, o.nops, o.files, 1 + 2 * o.dirs, o.max_size, target, shadow);
	oplog = calloc(o.log_len, sizeof(*oplog));
	for (unsigned i = 0; i < o.log_len; i++)
		oplog[i] = calloc(1, 256);
	nr_dirs = 1 + 2 * o.dirs;
	file_exists = calloc(nr_dirs * o.files, sizeof(bool));
	dir_exists = calloc(nr_dirs, sizeof(bool));
	data = malloc(o.max_size + 8);
	buf_len = o.max_size;
	dir_exists[0] = true;
	for (unsigned d = 1; d <= o.dirs; d++) {
		char p[64];

		dir_path(p, sizeof(p), d);
		if (mkdir(in(target, p), 0755))
			setup_fail("mkdir", in(target, p));
		if (mkdir(in(shadow, p), 0755))
			setup_fail("mkdir", in(shadow, p));
		dir_exists[d] = true;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (opno = 0; opno < o.nops; opno++) {
		one_op();
		if (o.plant && opno == o.plant)
			plant();
		if (o.check_every && (opno + 1) % o.check_every == 0)
			compare_trees(target, shadow, true);
	}
	opno = o.nops;
	if (o.final) {
		logop("final compare");
		compare_trees(target, shadow, true);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("fsx: %" PRIu64 " operations agreed (%u files at the end), %.1f s, %.0f ops/s\n", o.nops,
	       count_files(), secs, o.nops / (secs > 0 ? secs : 1));
	return 0;
}
