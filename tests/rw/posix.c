/*
 * posix: a POSIX-semantics suite for a mounted filesystem (in the spirit of
 * pjdfstest): every syscall a read-write filesystem serves, its success and
 * its error cases with the errno Linux gives, as TAP lines.
 *
 *   posix [OPTION]... DIR
 *
 * Works in a fresh folder DIR/posix.PID (removed when every assertion
 * passed), one sub-folder per group. Prints "ok N - GROUP: WHAT" or
 * "not ok N - GROUP: WHAT: got ..., want ... (line L)" per assertion, then
 * "# N assertions: N passed, N failed"; exit 0 when none failed, 1 when one
 * did, 2 on a usage error. Run as root (chown, mknod, trusted.*, and the
 * permission checks switch the effective uid to an unprivileged one).
 *
 * Which results are FUSE-inherent and which are fuse2fs' own: tests/rw/README.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>

/* ---- options: features a filesystem may lack, default all on ---- */

static struct {
	bool acl, zero_range, seek_hole, perm, atime, shared_mmap, odirect;
	uid_t uid;
	gid_t gid;
	unsigned many;
	const char *only, *skip;
	bool keep;
} opt = {
	.acl = true, .zero_range = true, .seek_hole = true, .perm = true,
	.atime = true, .shared_mmap = true, .odirect = true,
	.uid = 65534, .gid = 65534, .many = 3000,
};

static unsigned n_total, n_fail;
static const char *group;

static const char *ename(int e)
{
	const char *s = e ? strerrorname_np(e) : "0";

	return s ? s : "E?";
}

/* One assertion: COND true = ok. */
__attribute__((format(printf, 3, 4)))
static bool check(bool cond, int line, const char *fmt, ...)
{
	va_list ap;

	n_total++;
	if (!cond)
		n_fail++;
	printf("%s %u - %s: ", cond ? "ok" : "not ok", n_total, group);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (!cond)
		printf(" (line %d)", line);
	putchar('\n');
	return cond;
}

#define T(cond, ...) check(!!(cond), __LINE__, __VA_ARGS__)

static long check_sys(long r, int e, int want, int line, const char *what)
{
	if (want == 0) {
		if (r == -1)
			check(false, line, "%s: got -1 %s, want success", what, ename(e));
		else
			check(true, line, "%s", what);
	} else {
		if (r == -1 && e == want)
			check(true, line, "%s -> %s", what, ename(want));
		else if (r == -1)
			check(false, line, "%s: got %s, want %s", what, ename(e), ename(want));
		else
			check(false, line, "%s: got %ld (success), want %s", what, r, ename(want));
	}
	errno = e;
	return r;
}

/* OK(call): the call succeeds (returns other than -1); its value.
 * ERR(E, call): the call fails with errno E. */
#define OK(call) ({ errno = 0; long _r = (long)(call); int _e = errno; \
	check_sys(_r, _e, 0, __LINE__, #call); })
#define ERR(E, call) ({ errno = 0; long _r = (long)(call); int _e = errno; \
	check_sys(_r, _e, (E), __LINE__, #call); })

static void die(const char *what)
{
	fprintf(stderr, "posix: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* ---- helpers (failures here are reported by the assertions after them) ---- */

static struct stat st_of(const char *p)
{
	struct stat s;

	if (lstat(p, &s))
		memset(&s, 0, sizeof(s));
	return s;
}

static ino_t ino(const char *p) { return st_of(p).st_ino; }
static nlink_t nlink(const char *p) { return st_of(p).st_nlink; }
static mode_t mode(const char *p) { return st_of(p).st_mode & 07777; }
static off_t size(const char *p) { return st_of(p).st_size; }
static bool exists(const char *p) { struct stat s; return !lstat(p, &s); }

static int mkfile(const char *p, const void *data, size_t len)
{
	int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);

	if (fd < 0)
		return -1;
	if (len && write(fd, data, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static int mkstr(const char *p, const char *s) { return mkfile(p, s, strlen(s)); }

/* the whole of file P into BUF (at most MAX); its length or -1 */
static ssize_t slurp(const char *p, void *buf, size_t max)
{
	int fd = open(p, O_RDONLY);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	while (got < max && (n = read(fd, (char *)buf + got, max - got)) > 0)
		got += n;
	close(fd);
	return got;
}

static bool content_is(const char *p, const void *want, size_t len)
{
	char *buf = malloc(len + 16);
	bool r = slurp(p, buf, len + 16) == (ssize_t)len && !memcmp(buf, want, len);

	free(buf);
	return r;
}

static bool all_zero(const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill_random(void *buf, size_t n)
{
	unsigned char *b = buf;

	for (size_t i = 0; i < n; i++)
		b[i] = rnd() >> 32;
}

static bool ts_gt(struct timespec a, struct timespec b)
{
	return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
}

static bool ts_eq(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* remove a tree (best effort; as root, modes do not matter) */
static void rm_rf(const char *p)
{
	struct stat s;

	if (lstat(p, &s))
		return;
	if (S_ISDIR(s.st_mode)) {
		DIR *d = opendir(p);
		struct dirent *e;

		chmod(p, 0700);
		while (d && (e = readdir(d))) {
			char *c;

			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if (asprintf(&c, "%s/%s", p, e->d_name) < 0)
				continue;
			rm_rf(c);
			free(c);
		}
		if (d)
			closedir(d);
		rmdir(p);
	} else {
		unlink(p);
	}
}

/* names in folder P (without . and ..), sorted; count in *N */
static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **list_dir(const char *p, unsigned *n)
{
	DIR *d = opendir(p);
	struct dirent *e;
	char **v = calloc(1, sizeof(*v));
	unsigned cap = 1;

	*n = 0;
	if (!d) {
		free(v);
		return NULL;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (*n == cap) {
			cap *= 2;
			v = realloc(v, cap * sizeof(*v));
		}
		v[(*n)++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(v, *n, sizeof(*v), cmpstr);
	return v;
}

static void free_list(char **v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* ---- switching to the unprivileged user (effective ids only) ---- */

static gid_t saved_groups[256];
static int nr_saved_groups;

static bool become_user(void)
{
	nr_saved_groups = getgroups(256, saved_groups);
	if (nr_saved_groups < 0)
		nr_saved_groups = 0;
	if (setgroups(0, NULL) || setresgid(-1, opt.gid, -1) || setresuid(-1, opt.uid, -1)) {
		fprintf(stderr, "posix: cannot switch to uid %u gid %u: %s\n",
			(unsigned)opt.uid, (unsigned)opt.gid, strerror(errno));
		return false;
	}
	return true;
}

static void become_root(void)
{
	if (setresuid(-1, 0, -1) || setresgid(-1, 0, -1) ||
	    setgroups(nr_saved_groups, saved_groups))
		die("switching back to root");
}

/* ---- POSIX ACL blobs (system.posix_acl_*: version 2, then {tag, perm, id}) ---- */

enum { A_USER_OBJ = 1, A_USER = 2, A_GROUP_OBJ = 4, A_GROUP = 8, A_MASK = 0x10, A_OTHER = 0x20 };
#define NOID 0xffffffffu

struct acl_e { uint16_t tag, perm; uint32_t id; };

static void put16(unsigned char *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static void put32(unsigned char *p, uint32_t v) { put16(p, v); put16(p + 2, v >> 16); }

static size_t acl_blob(unsigned char *b, const struct acl_e *e, unsigned n)
{
	put32(b, 2);
	for (unsigned i = 0; i < n; i++) {
		put16(b + 4 + 8 * i, e[i].tag);
		put16(b + 6 + 8 * i, e[i].perm);
		put32(b + 8 + 8 * i, e[i].id);
	}
	return 4 + 8 * n;
}

/* getxattr P NAME equals BLOB */
static bool xattr_is(const char *p, const char *name, const void *blob, size_t len)
{
	unsigned char buf[65536];
	ssize_t n = lgetxattr(p, name, buf, sizeof(buf));

	return n == (ssize_t)len && !memcmp(buf, blob, len);
}

/* ================================================================ groups */

static void g_stat(void)
{
	struct stat s, s2;
	int fd;

	OK(mkstr("f", "hello"));
	s = st_of("f");
	T(S_ISREG(s.st_mode) && s.st_size == 5 && s.st_nlink == 1,
	  "new file: regular, size 5, nlink 1 (mode %o size %lld nlink %lu)",
	  s.st_mode, (long long)s.st_size, (unsigned long)s.st_nlink);
	T((s.st_mode & 07777) == 0644, "new file: mode 0666 & ~umask 022 = 0644 (got %o)", s.st_mode & 07777);
	T(s.st_uid == geteuid() && s.st_gid == getegid(), "new file: owner = creator (%u:%u)",
	  (unsigned)s.st_uid, (unsigned)s.st_gid);
	T(s.st_blksize > 0, "st_blksize > 0 (%ld)", (long)s.st_blksize);
	T(s.st_ino != 0, "st_ino != 0");
	fd = OK(open("f", O_RDONLY));
	OK(fstat(fd, &s2));
	T(s2.st_ino == s.st_ino && s2.st_dev == s.st_dev && s2.st_size == 5, "fstat = lstat");
	close(fd);
	OK(fstatat(AT_FDCWD, "f", &s2, AT_SYMLINK_NOFOLLOW));
	s = st_of(".");
	T(S_ISDIR(s.st_mode) && s.st_nlink == 2, "empty new folder: nlink 2 (got %lu)", (unsigned long)s.st_nlink);
	T(ino("..") == ino("../."), "\"..\" resolves");
	OK(mkstr("g", ""));
	T(ino("f") != ino("g"), "two files, two inode numbers");
	T(size("g") == 0, "empty file: size 0");
	ERR(ENOENT, stat("nothing", &s));
	ERR(ENOENT, stat("", &s));
	ERR(ENOTDIR, stat("f/x", &s));
	ERR(ENOTDIR, stat("f/", &s));
	ERR(ENOENT, stat("nothing/x", &s));
	OK(symlink("f", "l"));
	OK(stat("l", &s));
	T(S_ISREG(s.st_mode) && s.st_ino == ino("f"), "stat follows a symlink");
	OK(lstat("l", &s));
	T(S_ISLNK(s.st_mode) && s.st_size == 1, "lstat: the symlink itself, size = target length");
	OK(symlink("nowhere", "dangling"));
	ERR(ENOENT, stat("dangling", &s));
	OK(lstat("dangling", &s));
	OK(symlink("loop2", "loop1"));
	OK(symlink("loop1", "loop2"));
	ERR(ELOOP, stat("loop1", &s));
	OK(access("f", F_OK));
	ERR(ENOENT, access("nothing", F_OK));
	OK(mkdir("d", 0755));
	OK(stat("d/", &s));
	OK(stat("d/.", &s));
	T(ino("d/..") == ino("."), "d/.. is the parent");
	struct statx sx;
	OK(statx(AT_FDCWD, "f", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx));
	T(sx.stx_ino == ino("f") && sx.stx_size == 5 && (sx.stx_mask & STATX_BASIC_STATS) == STATX_BASIC_STATS,
	  "statx: basic stats");
}

static void g_chmod(void)
{
	struct stat s;
	int fd;

	OK(mkstr("f", "x"));
	OK(chmod("f", 0600));
	T(mode("f") == 0600, "chmod 0600 (got %o)", mode("f"));
	OK(chmod("f", 07777));
	T(mode("f") == 07777, "chmod 07777 as root keeps every bit (got %o)", mode("f"));
	OK(chmod("f", 0));
	T(mode("f") == 0, "chmod 0 (got %o)", mode("f"));
	T(S_ISREG(st_of("f").st_mode), "chmod keeps the file type");
	fd = OK(open("f", O_RDONLY));
	OK(fchmod(fd, 0640));
	T(mode("f") == 0640, "fchmod 0640 (got %o)", mode("f"));
	close(fd);
	OK(mkdir("d", 0755));
	OK(chmod("d", 01777));
	T(mode("d") == 01777 && S_ISDIR(st_of("d").st_mode), "chmod of a folder, sticky bit (got %o)", mode("d"));
	OK(symlink("f", "l"));
	OK(chmod("l", 0604));
	T(mode("f") == 0604, "chmod through a symlink changes the target (got %o)", mode("f"));
	T((st_of("l").st_mode & 0777) == 0777, "the symlink itself stays 0777");
	ERR(EOPNOTSUPP, fchmodat(AT_FDCWD, "l", 0600, AT_SYMLINK_NOFOLLOW));
	ERR(ENOENT, chmod("nothing", 0644));
	ERR(ENOTDIR, chmod("f/x", 0644));
	fd = OK(open("f", O_PATH));
	ERR(EBADF, fchmod(fd, 0644));
	close(fd);
	(void)s;
}

static void g_chown(void)
{
	OK(mkstr("f", "x"));
	OK(chown("f", 1234, 5678));
	T(st_of("f").st_uid == 1234 && st_of("f").st_gid == 5678, "chown 1234:5678");
	OK(chown("f", -1, -1));
	T(st_of("f").st_uid == 1234 && st_of("f").st_gid == 5678, "chown -1:-1 changes nothing");
	OK(chown("f", -1, 42));
	T(st_of("f").st_uid == 1234 && st_of("f").st_gid == 42, "chown -1:42: group only");
	OK(chown("f", 0, 0));
	OK(chmod("f", 06755));
	OK(chown("f", 1234, -1));
	T(mode("f") == 0755, "chown clears setuid and setgid (of a group-executable file) (got %o)", mode("f"));
	OK(chown("f", 0, 0));
	OK(chmod("f", 02745));
	OK(chown("f", 1234, -1));
	T(mode("f") == 02745, "chown keeps setgid of a file that is not group-executable (got %o)", mode("f"));
	OK(mkdir("d", 0755));
	OK(chmod("d", 02755));
	OK(chown("d", 1234, 1234));
	T(mode("d") == 02755, "chown keeps setgid of a folder (got %o)", mode("d"));
	OK(symlink("f", "l"));
	OK(lchown("l", 77, 88));
	T(st_of("l").st_uid == 77 && st_of("f").st_uid == 1234, "lchown changes the symlink, not its target");
	OK(chown("l", 99, 99));
	T(st_of("f").st_uid == 99 && st_of("l").st_uid == 77, "chown follows the symlink");
	int fd = OK(open("f", O_RDONLY));
	OK(fchown(fd, 5, 6));
	T(st_of("f").st_uid == 5 && st_of("f").st_gid == 6, "fchown 5:6");
	close(fd);
	ERR(ENOENT, chown("nothing", 1, 1));
	ERR(ENOTDIR, chown("f/x", 1, 1));
}

static void g_utimens(void)
{
	struct timespec ts[2], now;
	struct stat s, s0;
	int fd;

	OK(mkstr("f", "x"));
	ts[0] = (struct timespec){ 1000000000, 123456789 };
	ts[1] = (struct timespec){ 1100000000, 987654321 };
	OK(utimensat(AT_FDCWD, "f", ts, 0));
	s = st_of("f");
	T(ts_eq(s.st_atim, ts[0]) && ts_eq(s.st_mtim, ts[1]), "utimensat sets atime and mtime to the nanosecond"
	  " (got %lld.%09ld %lld.%09ld)", (long long)s.st_atim.tv_sec, s.st_atim.tv_nsec,
	  (long long)s.st_mtim.tv_sec, s.st_mtim.tv_nsec);
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1] = (struct timespec){ 1200000000, 5 };
	OK(utimensat(AT_FDCWD, "f", ts, 0));
	s = st_of("f");
	T(s.st_atim.tv_sec == 1000000000 && s.st_atim.tv_nsec == 123456789 && s.st_mtim.tv_sec == 1200000000 &&
	  s.st_mtim.tv_nsec == 5, "UTIME_OMIT keeps atime, mtime set");
	ts[0] = (struct timespec){ 0, UTIME_NOW };
	ts[1] = (struct timespec){ 0, UTIME_OMIT };
	OK(utimensat(AT_FDCWD, "f", ts, 0));
	clock_gettime(CLOCK_REALTIME, &now);
	s = st_of("f");
	T(llabs((long long)(s.st_atim.tv_sec - now.tv_sec)) <= 5 && s.st_mtim.tv_sec == 1200000000,
	  "UTIME_NOW sets atime to now, UTIME_OMIT keeps mtime");
	s0 = st_of("f");
	ts[0].tv_nsec = ts[1].tv_nsec = UTIME_OMIT;
	OK(utimensat(AT_FDCWD, "f", ts, 0));
	s = st_of("f");
	T(ts_eq(s.st_atim, s0.st_atim) && ts_eq(s.st_mtim, s0.st_mtim) && ts_eq(s.st_ctim, s0.st_ctim),
	  "both UTIME_OMIT: nothing changes, ctime neither");
	OK(utimensat(AT_FDCWD, "f", NULL, 0));
	clock_gettime(CLOCK_REALTIME, &now);
	s = st_of("f");
	T(llabs((long long)(s.st_mtim.tv_sec - now.tv_sec)) <= 5 &&
	  llabs((long long)(s.st_atim.tv_sec - now.tv_sec)) <= 5, "times NULL: both now");
	ts[0] = (struct timespec){ -1000, 0 };
	ts[1] = (struct timespec){ -86400 * 365, 500 };
	OK(utimensat(AT_FDCWD, "f", ts, 0));
	s = st_of("f");
	T(s.st_atim.tv_sec == -1000 && s.st_mtim.tv_sec == -86400 * 365 && s.st_mtim.tv_nsec == 500,
	  "times before 1970 kept (got %lld %lld)", (long long)s.st_atim.tv_sec, (long long)s.st_mtim.tv_sec);
	ts[0] = ts[1] = (struct timespec){ 8589934591LL, 999999999 };  /* 2242 */
	OK(utimensat(AT_FDCWD, "f", ts, 0));
	s = st_of("f");
	T(s.st_mtim.tv_sec == 8589934591LL && s.st_mtim.tv_nsec == 999999999, "time 2^33 - 1 (year 2242) kept");
	OK(symlink("f", "l"));
	ts[0] = ts[1] = (struct timespec){ 500000000, 0 };
	OK(utimensat(AT_FDCWD, "l", ts, AT_SYMLINK_NOFOLLOW));
	T(st_of("l").st_mtim.tv_sec == 500000000 && st_of("f").st_mtim.tv_sec == 8589934591LL,
	  "AT_SYMLINK_NOFOLLOW: the symlink's times, not the target's");
	ts[0] = ts[1] = (struct timespec){ 600000000, 0 };
	OK(utimensat(AT_FDCWD, "l", ts, 0));
	T(st_of("f").st_mtim.tv_sec == 600000000, "utimensat follows a symlink");
	fd = OK(open("f", O_RDONLY));
	ts[0] = ts[1] = (struct timespec){ 700000000, 7 };
	OK(futimens(fd, ts));
	T(st_of("f").st_mtim.tv_sec == 700000000 && st_of("f").st_mtim.tv_nsec == 7, "futimens");
	close(fd);
	OK(mkdir("d", 0755));
	OK(utimensat(AT_FDCWD, "d", ts, 0));
	T(st_of("d").st_mtim.tv_sec == 700000000, "utimensat of a folder");
	ts[1].tv_nsec = 1000000000;
	ERR(EINVAL, utimensat(AT_FDCWD, "f", ts, 0));
	ERR(ENOENT, utimensat(AT_FDCWD, "nothing", NULL, 0));
}

static void g_truncate(void)
{
	unsigned char buf[65536], rd[65536];
	int fd;

	fill_random(buf, 10000);
	OK(mkfile("f", buf, 10000));
	OK(truncate("f", 5000));
	T(size("f") == 5000 && content_is("f", buf, 5000), "truncate down: size 5000, first 5000 bytes kept");
	OK(truncate("f", 20000));
	T(size("f") == 20000, "truncate up: size 20000");
	T(slurp("f", rd, sizeof(rd)) == 20000 && !memcmp(rd, buf, 5000) && all_zero(rd + 5000, 15000),
	  "truncate up: the new part reads as zeros");
	memset(buf, 'x', 8192);
	OK(mkfile("p", buf, 8192));
	OK(truncate("p", 1000));
	OK(truncate("p", 8192));
	T(slurp("p", rd, sizeof(rd)) == 8192 && !memcmp(rd, buf, 1000) && all_zero(rd + 1000, 7192),
	  "truncate to mid-block and back up: the rest of the block reads as zeros");
	fd = OK(open("p", O_RDWR));
	OK(ftruncate(fd, 100));
	OK(pwrite(fd, "y", 1, 6000));
	T(slurp("p", rd, sizeof(rd)) == 6001 && !memcmp(rd, buf, 100) && all_zero(rd + 100, 5900) && rd[6000] == 'y',
	  "ftruncate down then write past the end: the gap reads as zeros");
	OK(ftruncate(fd, 0));
	T(size("p") == 0, "ftruncate 0");
	OK(ftruncate(fd, 0));
	close(fd);
	OK(truncate("f", 1LL << 30));
	T(size("f") == 1LL << 30 && st_of("f").st_blocks < 4096, "truncate up to 1 GiB: sparse (%lld blocks)",
	  (long long)st_of("f").st_blocks);
	fd = OK(open("f", O_RDONLY));
	T(pread(fd, rd, 4096, (1LL << 30) - 4096) == 4096 && all_zero(rd, 4096), "read at the end of the 1 GiB: zeros");
	close(fd);
	OK(truncate("f", 1LL << 40));
	T(size("f") == 1LL << 40, "truncate to 1 TiB");
	OK(truncate("f", 0));
	T(size("f") == 0, "and back to 0");
	ERR(EINVAL, truncate("f", -1));
	OK(mkdir("d", 0755));
	ERR(EISDIR, truncate("d", 0));
	ERR(ENOENT, truncate("nothing", 0));
	ERR(ENOTDIR, truncate("f/x", 0));
	fd = OK(open("f", O_RDONLY));
	ERR(EINVAL, ftruncate(fd, 0));
	close(fd);
}

static void g_open(void)
{
	char buf[64];
	struct stat s;
	int fd, fd2;

	umask(027);
	fd = OK(open("u", O_CREAT | O_WRONLY, 0777));
	close(fd);
	T(mode("u") == 0750, "O_CREAT mode 0777 & ~umask 027 = 0750 (got %o)", mode("u"));
	umask(022);
	fd = OK(open("f", O_CREAT | O_EXCL | O_WRONLY, 0644));
	OK(write(fd, "0123456789", 10));
	close(fd);
	ERR(EEXIST, open("f", O_CREAT | O_EXCL | O_WRONLY, 0644));
	fd = OK(open("f", O_CREAT | O_WRONLY, 0600));
	close(fd);
	T(size("f") == 10 && mode("f") == 0644, "O_CREAT of an existing file: neither truncated nor chmod'ed");
	OK(symlink("target-of-dl", "dl"));
	ERR(EEXIST, open("dl", O_CREAT | O_EXCL | O_WRONLY, 0644));
	T(!exists("target-of-dl"), "O_CREAT|O_EXCL on a dangling symlink creates nothing");
	fd = OK(open("dl", O_CREAT | O_WRONLY, 0644));
	close(fd);
	T(S_ISREG(st_of("target-of-dl").st_mode), "O_CREAT through a dangling symlink creates its target");
	fd = OK(open("f", O_WRONLY | O_TRUNC));
	close(fd);
	T(size("f") == 0, "O_TRUNC empties the file");
	fd = OK(open("f", O_WRONLY | O_APPEND));
	OK(write(fd, "abc", 3));
	OK(lseek(fd, 0, SEEK_SET));
	OK(write(fd, "def", 3));
	fd2 = OK(open("f", O_WRONLY | O_APPEND));
	OK(write(fd2, "ghi", 3));
	OK(write(fd, "jkl", 3));
	close(fd2);
	T(lseek(fd, 0, SEEK_CUR) == 12, "O_APPEND: the offset is the end after a write");
	close(fd);
	T(content_is("f", "abcdefghijkl", 12), "O_APPEND: every write at the end, through two descriptors");
	if (opt.odirect) {
		void *al;

		if (posix_memalign(&al, 4096, 8192))
			die("posix_memalign");
		fill_random(al, 8192);
		fd = OK(open("direct", O_CREAT | O_RDWR | O_DIRECT, 0644));
		T(pwrite(fd, al, 8192, 0) == 8192, "O_DIRECT: aligned pwrite of 8 KiB");
		memcpy(buf, (char *)al + 4096, 64);
		memset(al, 0, 8192);
		T(pread(fd, al, 4096, 4096) == 4096 && !memcmp(al, buf, 64), "O_DIRECT: aligned pread reads it back");
		close(fd);
		free(al);
		T(size("direct") == 8192, "O_DIRECT: size 8192");
	}
	OK(symlink("f", "l"));
	ERR(ELOOP, open("l", O_RDONLY | O_NOFOLLOW));
	fd = OK(open("f", O_RDONLY | O_NOFOLLOW));
	close(fd);
	fd = OK(open("l", O_PATH | O_NOFOLLOW));
	OK(fstat(fd, &s));
	T(S_ISLNK(s.st_mode), "O_PATH|O_NOFOLLOW opens the symlink itself");
	ERR(EBADF, read(fd, buf, 1));
	close(fd);
	OK(mkdir("d", 0755));
	ERR(ENOTDIR, open("f", O_RDONLY | O_DIRECTORY));
	fd = OK(open("d", O_RDONLY | O_DIRECTORY));
	ERR(EISDIR, read(fd, buf, 1));
	close(fd);
	ERR(EISDIR, open("d", O_WRONLY));
	ERR(EISDIR, open("d", O_RDWR));
	ERR(EISDIR, open("d", O_CREAT | O_WRONLY, 0644));
	ERR(EISDIR, open("new/", O_CREAT | O_WRONLY, 0644));
	ERR(ENOENT, open("nothing", O_RDONLY));
	ERR(ENOENT, open("nodir/x", O_CREAT | O_WRONLY, 0644));
	ERR(ENOTDIR, open("f/x", O_CREAT | O_WRONLY, 0644));
	fd = OK(open("f", O_RDONLY));
	ERR(EBADF, write(fd, "x", 1));
	close(fd);
	fd = OK(open("f", O_WRONLY));
	ERR(EBADF, read(fd, buf, 1));
	close(fd);
	OK(mkfifo("fifo", 0644));
	ERR(ENXIO, open("fifo", O_WRONLY | O_NONBLOCK));
	fd = OK(open("fifo", O_RDONLY | O_NONBLOCK));
	close(fd);
	fd = OK(open("sync", O_CREAT | O_WRONLY | O_SYNC, 0644));
	T(write(fd, "sync", 4) == 4, "O_SYNC write");
	close(fd);
	fd = OK(open("dsync", O_CREAT | O_WRONLY | O_DSYNC, 0644));
	T(write(fd, "dsync", 5) == 5, "O_DSYNC write");
	close(fd);
	fd = OK(open("f", O_RDWR | O_CLOEXEC));
	T(fcntl(fd, F_GETFD) == FD_CLOEXEC, "O_CLOEXEC");
	fd2 = OK(open("f", O_RDONLY));
	OK(pwrite(fd, "XY", 2, 1));
	T(pread(fd2, buf, 4, 0) == 4 && !memcmp(buf, "aXYd", 4), "a write is seen at once through another descriptor");
	close(fd);
	close(fd2);
	int dfd = OK(open(".", O_RDONLY | O_DIRECTORY));
	fd = OK(openat(dfd, "at", O_CREAT | O_WRONLY, 0644));
	close(fd);
	close(dfd);
	T(exists("at"), "openat relative to a folder descriptor");
}

static void g_mknod(void)
{
	struct stat s;
	char buf[4];
	int r, w;

	OK(mkfifo("fifo", 0644));
	s = st_of("fifo");
	T(S_ISFIFO(s.st_mode) && (s.st_mode & 0777) == 0644 && s.st_nlink == 1 && s.st_size == 0, "mkfifo: a fifo, 0644");
	r = OK(open("fifo", O_RDONLY | O_NONBLOCK));
	w = OK(open("fifo", O_WRONLY | O_NONBLOCK));
	OK(write(w, "ab", 2));
	T(read(r, buf, 4) == 2 && !memcmp(buf, "ab", 2), "the fifo carries data");
	close(r);
	close(w);
	OK(mknod("fifo2", S_IFIFO | 0600, 0));
	T(S_ISFIFO(st_of("fifo2").st_mode), "mknod S_IFIFO");
	OK(mknod("sock", S_IFSOCK | 0600, 0));
	T(S_ISSOCK(st_of("sock").st_mode), "mknod S_IFSOCK");
	OK(mknod("chr", S_IFCHR | 0600, makedev(1, 3)));
	s = st_of("chr");
	T(S_ISCHR(s.st_mode) && major(s.st_rdev) == 1 && minor(s.st_rdev) == 3, "mknod S_IFCHR 1:3 (got %u:%u)",
	  major(s.st_rdev), minor(s.st_rdev));
	OK(mknod("blk", S_IFBLK | 0600, makedev(259, 70000)));
	s = st_of("blk");
	T(S_ISBLK(s.st_mode) && major(s.st_rdev) == 259 && minor(s.st_rdev) == 70000,
	  "mknod S_IFBLK 259:70000 (a minor above 255) (got %u:%u)", major(s.st_rdev), minor(s.st_rdev));
	OK(mknod("chr2", S_IFCHR | 0644, makedev(4095, 1048575)));
	s = st_of("chr2");
	T(major(s.st_rdev) == 4095 && minor(s.st_rdev) == 1048575, "mknod S_IFCHR 4095:1048575 (got %u:%u)",
	  major(s.st_rdev), minor(s.st_rdev));
	OK(mknod("reg", S_IFREG | 0640, 0));
	T(S_ISREG(st_of("reg").st_mode) && mode("reg") == 0640, "mknod S_IFREG: a regular file");
	OK(mknod("reg0", 0640, 0));
	T(S_ISREG(st_of("reg0").st_mode), "mknod without a type: a regular file");
	ERR(EEXIST, mknod("fifo", S_IFIFO | 0644, 0));
	ERR(EPERM, mknod("dir", S_IFDIR | 0755, 0));
	ERR(EINVAL, mknod("lnk", S_IFLNK | 0777, 0));
	ERR(ENOENT, mknod("nodir/x", S_IFIFO | 0644, 0));
	ERR(ENOTDIR, mknod("reg/x", S_IFIFO | 0644, 0));

	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = "bound" };
	int sfd = socket(AF_UNIX, SOCK_STREAM, 0), cfd = socket(AF_UNIX, SOCK_STREAM, 0);
	OK(bind(sfd, (struct sockaddr *)&sa, sizeof(sa)));
	T(S_ISSOCK(st_of("bound").st_mode), "bind() makes a socket node");
	OK(listen(sfd, 1));
	OK(connect(cfd, (struct sockaddr *)&sa, sizeof(sa)));
	close(sfd);
	close(cfd);
	ERR(EADDRINUSE, ({ int t = socket(AF_UNIX, SOCK_STREAM, 0); int rr = bind(t, (struct sockaddr *)&sa,
	    sizeof(sa)); int ee = errno; close(t); errno = ee; rr; }));
}

static void g_mkdir(void)
{
	struct stat s;
	unsigned n;
	char **v;
	nlink_t before = nlink(".");

	OK(mkdir("d", 0755));
	s = st_of("d");
	T(S_ISDIR(s.st_mode) && (s.st_mode & 07777) == 0755 && s.st_nlink == 2, "mkdir: a folder, 0755, nlink 2");
	T(nlink(".") == before + 1, "mkdir: the parent's nlink + 1 (%lu -> %lu)", (unsigned long)before,
	  (unsigned long)nlink("."));
	v = list_dir("d", &n);
	T(v && n == 0, "a new folder lists nothing but . and ..");
	free_list(v, n);
	T(ino("d/..") == ino("."), "its .. is the parent");
	umask(077);
	OK(mkdir("m", 0777));
	umask(022);
	T(mode("m") == 0700, "mkdir 0777 & ~umask 077 = 0700 (got %o)", mode("m"));
	OK(mkdir("sticky", 01777));
	T(mode("sticky") == 01755, "mkdir keeps the sticky bit (01777 & ~022 = 01755, got %o)", mode("sticky"));
	OK(mkdir("slash/", 0755));
	T(S_ISDIR(st_of("slash").st_mode), "mkdir with a trailing slash");
	ERR(EEXIST, mkdir("d", 0755));
	OK(mkstr("f", ""));
	ERR(EEXIST, mkdir("f", 0755));
	OK(symlink("nowhere", "dl"));
	ERR(EEXIST, mkdir("dl", 0755));
	ERR(ENOENT, mkdir("nodir/x", 0755));
	ERR(ENOTDIR, mkdir("f/x", 0755));
	ERR(ENOENT, mkdir("", 0755));
	/* setgid folders: new entries take the folder's group; folders keep setgid */
	OK(mkdir("sg", 0755));
	OK(chown("sg", 0, 1234));
	OK(chmod("sg", 02775));
	OK(mkdir("sg/sub", 0755));
	s = st_of("sg/sub");
	T(s.st_gid == 1234 && (s.st_mode & S_ISGID), "a folder made in a setgid folder: its group, setgid (gid %u mode %o)",
	  (unsigned)s.st_gid, s.st_mode & 07777);
	OK(mkstr("sg/file", ""));
	s = st_of("sg/file");
	T(s.st_gid == 1234 && !(s.st_mode & S_ISGID), "a file made in a setgid folder: its group, not setgid");
	OK(mkdir("a", 0755));
	OK(mkdir("a/b", 0755));
	OK(mkdir("a/b/c", 0755));
	T(nlink("a") == 3 && nlink("a/b") == 3 && nlink("a/b/c") == 2, "nested folders: nlink 3, 3, 2");
}

static void g_unlink(void)
{
	char buf[8];
	struct stat s;
	nlink_t dn;
	int fd;

	OK(mkstr("f", "data"));
	OK(unlink("f"));
	T(!exists("f"), "unlink: the name is gone");
	ERR(ENOENT, unlink("f"));
	OK(mkstr("a", "xy"));
	OK(link("a", "b"));
	OK(unlink("a"));
	T(nlink("b") == 1 && content_is("b", "xy", 2), "unlink one of two links: the other stays, nlink 1");
	fd = OK(open("b", O_RDWR));
	OK(unlink("b"));
	OK(fstat(fd, &s));
	T(s.st_nlink == 0, "an open unlinked file: nlink 0");
	T(pread(fd, buf, 2, 0) == 2 && !memcmp(buf, "xy", 2), "an open unlinked file still reads");
	T(pwrite(fd, "zz", 2, 2) == 2 && pread(fd, buf, 4, 0) == 4 && !memcmp(buf, "xyzz", 4),
	  "and still writes");
	close(fd);
	OK(mkdir("d", 0755));
	dn = nlink(".");
	ERR(EISDIR, unlink("d"));
	T(nlink(".") == dn && exists("d"), "unlink of a folder changes nothing");
	ERR(EISDIR, unlink("."));
	ERR(ENOENT, unlink("nothing"));
	OK(mkstr("g", ""));
	ERR(ENOTDIR, unlink("g/x"));
	OK(symlink("g", "l"));
	OK(unlink("l"));
	T(!exists("l") && exists("g"), "unlink of a symlink: the symlink goes, its target stays");
	OK(mkfifo("fifo", 0644));
	OK(unlink("fifo"));
	OK(mknod("sock", S_IFSOCK | 0644, 0));
	OK(unlink("sock"));
	T(!exists("fifo") && !exists("sock"), "unlink of a fifo and a socket");
	OK(mkstr("d/inner", ""));
	OK(unlink("d/inner"));
	OK(rmdir("d"));
}

static void g_rmdir(void)
{
	nlink_t n0 = nlink(".");
	struct stat s;
	char buf[4096];
	int fd;

	OK(mkdir("d", 0755));
	OK(rmdir("d"));
	T(!exists("d") && nlink(".") == n0, "rmdir: gone, parent's nlink back to %lu", (unsigned long)n0);
	OK(mkdir("d", 0755));
	OK(mkstr("d/f", ""));
	ERR(ENOTEMPTY, rmdir("d"));
	OK(unlink("d/f"));
	OK(mkdir("d/sub", 0755));
	ERR(ENOTEMPTY, rmdir("d"));
	ERR(EINVAL, rmdir("d/sub/."));
	ERR(EINVAL, rmdir("."));
	ERR(ENOTEMPTY, rmdir("d/sub/.."));
	OK(rmdir("d/sub"));
	T(nlink("d") == 2, "rmdir of a subfolder: nlink 2 again");
	OK(mkstr("f", ""));
	ERR(ENOTDIR, rmdir("f"));
	ERR(ENOENT, rmdir("nothing"));
	OK(symlink("d", "ld"));
	ERR(ENOTDIR, rmdir("ld"));
	fd = OK(open("d", O_RDONLY | O_DIRECTORY));
	OK(rmdir("d"));
	OK(fstat(fd, &s));
	T(s.st_nlink == 0, "an open removed folder: nlink 0");
	ERR(ENOENT, syscall(SYS_getdents64, fd, buf, sizeof(buf)));
	ERR(ENOENT, openat(fd, "new", O_CREAT | O_WRONLY, 0644));
	close(fd);
}

static void g_rename(void)
{
	struct stat s;
	ino_t i1, i2;
	nlink_t p1, p2;
	int fd;

	OK(mkstr("a", "aaa"));
	i1 = ino("a");
	OK(rename("a", "b"));
	T(!exists("a") && ino("b") == i1 && content_is("b", "aaa", 3), "rename to a new name: same inode, same data");
	OK(mkstr("c", "ccc"));
	i2 = ino("c");
	fd = OK(open("c", O_RDONLY));
	OK(rename("b", "c"));
	T(!exists("b") && ino("c") == i1 && content_is("c", "aaa", 3), "rename over a file replaces it");
	OK(fstat(fd, &s));
	T(s.st_ino == i2 && s.st_nlink == 0, "the replaced file, still open: nlink 0");
	close(fd);
	OK(link("c", "c2"));
	OK(rename("c", "c2"));
	T(exists("c") && exists("c2") && nlink("c") == 2, "rename between two links of one inode: a no-op");
	OK(rename("c", "c"));
	T(exists("c"), "rename to itself: a no-op");

	OK(mkdir("p1", 0755));
	OK(mkdir("p2", 0755));
	OK(mkdir("p1/d", 0755));
	OK(mkstr("p1/d/inside", "in"));
	p1 = nlink("p1");
	p2 = nlink("p2");
	i1 = ino("p1/d");
	OK(rename("p1/d", "p2/d"));
	T(ino("p2/d") == i1 && content_is("p2/d/inside", "in", 2), "rename a folder across parents");
	T(ino("p2/d/..") == ino("p2"), "the moved folder's .. is the new parent");
	T(nlink("p1") == p1 - 1 && nlink("p2") == p2 + 1, "parents' nlink: old - 1, new + 1 (%lu %lu)",
	  (unsigned long)nlink("p1"), (unsigned long)nlink("p2"));
	T(nlink("p2/d") == 2, "the moved folder keeps nlink 2");
	OK(mkstr("p2/d/../via-dotdot", ""));
	T(exists("p2/via-dotdot"), "a path through the moved folder's .. reaches the new parent");
	OK(mkdir("p1/empty", 0755));
	p1 = nlink("p1");
	p2 = nlink("p2");
	OK(rename("p2/d", "p1/empty"));
	T(ino("p1/empty") == i1 && !exists("p2/d"), "rename a folder over an empty folder replaces it");
	T(nlink("p1") == p1 && nlink("p2") == p2 - 1, "parents' nlink after replacing a folder (%lu %lu)",
	  (unsigned long)nlink("p1"), (unsigned long)nlink("p2"));
	T(ino("p1/empty/..") == ino("p1"), "its .. is the new parent");
	OK(mkdir("full", 0755));
	OK(mkstr("full/x", ""));
	OK(mkdir("d2", 0755));
	ERR(ENOTEMPTY, rename("d2", "full"));
	T(exists("d2") && exists("full/x"), "nothing moved");
	OK(mkstr("file", "f"));
	ERR(EISDIR, rename("file", "d2"));
	ERR(ENOTDIR, rename("d2", "file"));
	OK(mkdir("d2/sub", 0755));
	ERR(EINVAL, rename("d2", "d2/sub/x"));
	ERR(EINVAL, rename("d2", "d2/x"));
	ERR(EBUSY, rename("d2/.", "x"));
	ERR(EBUSY, rename("file", "d2/."));
	ERR(ENOENT, rename("nothing", "x"));
	ERR(ENOENT, rename("file", "nodir/x"));
	ERR(ENOTDIR, rename("file/x", "y"));
	OK(symlink("file", "sl"));
	OK(rename("sl", "sl2"));
	T(S_ISLNK(st_of("sl2").st_mode) && ino("file") == st_of("file").st_ino &&
	  ({ char t[16] = ""; readlink("sl2", t, 15) == 4 && !strcmp(t, "file"); }), "rename of a symlink keeps its target");
	OK(mkstr("over", "o"));
	OK(rename("over", "sl2"));
	T(S_ISREG(st_of("sl2").st_mode), "rename of a file over a symlink replaces the symlink");

	/* renameat2 */
	OK(mkstr("n1", "1"));
	OK(mkstr("n2", "2"));
	ERR(EEXIST, renameat2(AT_FDCWD, "n1", AT_FDCWD, "n2", RENAME_NOREPLACE));
	T(content_is("n1", "1", 1) && content_is("n2", "2", 1), "RENAME_NOREPLACE: both unchanged");
	OK(renameat2(AT_FDCWD, "n1", AT_FDCWD, "n3", RENAME_NOREPLACE));
	T(!exists("n1") && content_is("n3", "1", 1), "RENAME_NOREPLACE to a new name");
	ERR(EEXIST, renameat2(AT_FDCWD, "n3", AT_FDCWD, "d2", RENAME_NOREPLACE));
	i1 = ino("n2");
	i2 = ino("n3");
	OK(renameat2(AT_FDCWD, "n2", AT_FDCWD, "n3", RENAME_EXCHANGE));
	T(ino("n2") == i2 && ino("n3") == i1 && content_is("n2", "1", 1) && content_is("n3", "2", 1),
	  "RENAME_EXCHANGE of two files");
	OK(mkdir("x1", 0755));
	OK(mkdir("x2", 0755));
	OK(mkstr("x1/f", "file"));
	OK(mkdir("x2/d", 0755));
	OK(mkstr("x2/d/in", "in"));
	p1 = nlink("x1");
	p2 = nlink("x2");
	i1 = ino("x1/f");
	i2 = ino("x2/d");
	OK(renameat2(AT_FDCWD, "x1/f", AT_FDCWD, "x2/d", RENAME_EXCHANGE));
	T(ino("x1/f") == i2 && S_ISDIR(st_of("x1/f").st_mode) && ino("x2/d") == i1 && S_ISREG(st_of("x2/d").st_mode),
	  "RENAME_EXCHANGE of a file and a folder across parents");
	T(ino("x1/f/..") == ino("x1"), "the exchanged folder's .. is its new parent");
	T(nlink("x1") == p1 + 1 && nlink("x2") == p2 - 1, "parents' nlink: + 1 and - 1 (%lu %lu)",
	  (unsigned long)nlink("x1"), (unsigned long)nlink("x2"));
	T(content_is("x1/f/in", "in", 2) && content_is("x2/d", "file", 4), "contents follow the exchange");
	OK(mkdir("x1/f/deep", 0755));
	ERR(EINVAL, renameat2(AT_FDCWD, "x1/f", AT_FDCWD, "x1/f/deep", RENAME_EXCHANGE));
	ERR(ENOENT, renameat2(AT_FDCWD, "n2", AT_FDCWD, "missing", RENAME_EXCHANGE));
	ERR(EINVAL, renameat2(AT_FDCWD, "n2", AT_FDCWD, "n3", RENAME_EXCHANGE | RENAME_NOREPLACE));
	OK(mkdir("y1", 0755));
	OK(mkdir("y2", 0755));
	OK(mkdir("y1/a", 0755));
	OK(mkdir("y2/b", 0755));
	p1 = nlink("y1");
	p2 = nlink("y2");
	OK(renameat2(AT_FDCWD, "y1/a", AT_FDCWD, "y2/b", RENAME_EXCHANGE));
	T(nlink("y1") == p1 && nlink("y2") == p2 && ino("y1/a/..") == ino("y1") && ino("y2/b/..") == ino("y2"),
	  "RENAME_EXCHANGE of two folders across parents: nlinks kept, both .. right");
	fd = OK(open("n2", O_RDONLY));
	OK(rename("n2", "x2/moved-open"));
	T(read(fd, (char[4]){ 0 }, 1) == 1, "a file renamed while open still reads");
	close(fd);
}

static void g_link(void)
{
	char buf[16];
	int fd;

	OK(mkstr("f", "abc"));
	OK(link("f", "g"));
	T(ino("f") == ino("g") && nlink("f") == 2 && nlink("g") == 2, "link: one inode, nlink 2");
	fd = OK(open("g", O_WRONLY));
	OK(pwrite(fd, "X", 1, 0));
	close(fd);
	T(content_is("f", "Xbc", 3), "a write through one link is seen through the other");
	ERR(EEXIST, link("f", "g"));
	OK(mkstr("h", ""));
	ERR(EEXIST, link("f", "h"));
	OK(mkdir("d", 0755));
	ERR(EPERM, link("d", "d2"));
	ERR(ENOENT, link("nothing", "x"));
	ERR(ENOENT, link("f", "nodir/x"));
	ERR(ENOTDIR, link("h/x", "y"));
	OK(link("f", "d/in-d"));
	T(nlink("f") == 3 && ino("d/in-d") == ino("f"), "link into another folder: nlink 3");
	OK(unlink("g"));
	T(nlink("f") == 2, "unlink one link: nlink 2");
	OK(symlink("f", "s"));
	OK(linkat(AT_FDCWD, "s", AT_FDCWD, "s-link", 0));
	T(S_ISLNK(st_of("s-link").st_mode) && nlink("s") == 2, "linkat without AT_SYMLINK_FOLLOW links the symlink");
	OK(linkat(AT_FDCWD, "s", AT_FDCWD, "s-follow", AT_SYMLINK_FOLLOW));
	T(ino("s-follow") == ino("f") && nlink("f") == 3, "linkat AT_SYMLINK_FOLLOW links the target");
	unsigned ok = 0;
	for (int i = 0; i < 100; i++) {
		snprintf(buf, sizeof(buf), "m%d", i);
		ok += !link("f", buf);
	}
	T(ok == 100 && nlink("f") == 103, "100 more links: nlink 103 (got %lu)", (unsigned long)nlink("f"));
	for (int i = 0; i < 100; i++) {
		snprintf(buf, sizeof(buf), "m%d", i);
		unlink(buf);
	}
	T(nlink("f") == 3, "and removed: nlink 3 (got %lu)", (unsigned long)nlink("f"));
	OK(mkfifo("fifo", 0644));
	OK(link("fifo", "fifo2"));
	T(nlink("fifo") == 2 && S_ISFIFO(st_of("fifo2").st_mode), "link of a fifo");
	fd = OK(open("gone", O_CREAT | O_RDWR, 0644));
	OK(unlink("gone"));
	snprintf(buf, sizeof(buf), "/proc/self/fd/%d", fd);
	ERR(ENOENT, linkat(AT_FDCWD, buf, AT_FDCWD, "revived", AT_SYMLINK_FOLLOW));
	close(fd);
}

static void g_symlink(void)
{
	static const unsigned lens[] = { 1, 59, 60, 61, 500, 1000, 2048, 4000, 4095 };
	char t[5000], buf[5000];
	bool all = true;
	int fd;

	OK(symlink("target", "l"));
	T(S_ISLNK(st_of("l").st_mode) && size("l") == 6 && (st_of("l").st_mode & 0777) == 0777,
	  "symlink: S_IFLNK, size 6, mode 0777");
	T(readlink("l", buf, sizeof(buf)) == 6 && !memcmp(buf, "target", 6), "readlink");
	T(readlink("l", buf, 3) == 3 && !memcmp(buf, "tar", 3), "readlink into a short buffer: truncated");
	for (unsigned i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		char name[16];

		for (unsigned j = 0; j < lens[i]; j++)
			t[j] = "abcdefghij/"[(i + j) % 11];
		t[lens[i]] = 0;
		snprintf(name, sizeof(name), "long%u", lens[i]);
		if (symlink(t, name) || readlink(name, buf, sizeof(buf)) != (ssize_t)lens[i] ||
		    memcmp(buf, t, lens[i]) || size(name) != (off_t)lens[i]) {
			all = false;
			T(false, "symlink target of %u bytes read back", lens[i]);
		}
	}
	T(all, "symlink targets of 1 to 4095 bytes read back exactly");
	memset(t, 'a', 4096);
	t[4096] = 0;
	ERR(ENAMETOOLONG, symlink(t, "toolong"));
	ERR(ENOENT, symlink("", "empty"));
	ERR(EEXIST, symlink("x", "l"));
	OK(mkstr("f", ""));
	ERR(EINVAL, readlink("f", buf, sizeof(buf)));
	ERR(ENOENT, readlink("nothing", buf, sizeof(buf)));
	ERR(ENOENT, symlink("x", "nodir/l"));
	static const char odd[] = "\xff\n odd bytes \x01";
	OK(symlink(odd, "odd"));
	T(readlink("odd", buf, sizeof(buf)) == sizeof(odd) - 1 && !memcmp(buf, odd, sizeof(odd) - 1),
	  "a target of odd bytes");
	OK(mkdir("d", 0755));
	OK(mkstr("d/in", "inside"));
	OK(symlink("d", "ld"));
	T(content_is("ld/in", "inside", 6), "a path through a symlink to a folder");
	OK(symlink("../d/in", "d/up"));
	T(content_is("d/up", "inside", 6), "a relative target with ..");
	char abs[PATH_MAX];
	if (getcwd(abs, sizeof(abs) - 8)) {
		strcat(abs, "/d/in");
		OK(symlink(abs, "absl"));
		T(content_is("absl", "inside", 6), "an absolute target");
	}
	fd = OK(open("l", O_CREAT | O_WRONLY, 0644));
	close(fd);
	T(S_ISREG(st_of("target").st_mode), "open O_CREAT through a symlink creates its target");
}

static void g_rw(void)
{
	enum { BIG = 1 << 20 };
	unsigned char *a = malloc(BIG), *b = malloc(BIG);
	size_t off;
	int fd;

	fill_random(a, BIG);
	fd = OK(open("f", O_CREAT | O_RDWR, 0644));
	bool ok = true;
	for (off = 0; off < BIG;) {
		size_t n = 1 + rnd() % 70000;

		if (n > BIG - off)
			n = BIG - off;
		ok &= write(fd, a + off, n) == (ssize_t)n;
		off += n;
	}
	T(ok && size("f") == BIG, "1 MiB written in pieces of random sizes");
	ok = true;
	OK(lseek(fd, 0, SEEK_SET));
	for (off = 0; off < BIG;) {
		size_t n = 1 + rnd() % 100000;
		ssize_t r = read(fd, b + off, n);

		if (r <= 0) {
			ok = false;
			break;
		}
		off += r;
	}
	T(ok && !memcmp(a, b, BIG), "read back in pieces of other sizes: equal");
	ok = true;
	for (int i = 0; i < 200; i++) {
		size_t o = rnd() % BIG, n = 1 + rnd() % 20000;

		if (o + n > BIG)
			n = BIG - o;
		fill_random(a + o, n);
		ok &= pwrite(fd, a + o, n, o) == (ssize_t)n;
	}
	T(ok, "200 pwrites at random offsets");
	ok = true;
	for (int i = 0; i < 200; i++) {
		size_t o = rnd() % BIG, n = 1 + rnd() % 20000;

		if (o + n > BIG)
			n = BIG - o;
		ok &= pread(fd, b, n, o) == (ssize_t)n && !memcmp(b, a + o, n);
	}
	T(ok, "200 preads at random offsets read what was written");
	T(pread(fd, b, 100, BIG) == 0, "pread at the end: 0");
	T(pread(fd, b, 100, BIG - 10) == 10, "pread across the end: short");
	T(write(fd, a, 0) == 0 && size("f") == BIG, "a write of 0 bytes changes nothing");
	OK(pwrite(fd, "Z", 1, 4095));
	OK(pwrite(fd, "Y", 1, 4096));
	T(pread(fd, b, 2, 4095) == 2 && b[0] == 'Z' && b[1] == 'Y', "single bytes on both sides of a 4 KiB boundary");
	close(fd);

	fd = OK(open("hole", O_CREAT | O_RDWR, 0644));
	OK(pwrite(fd, "end", 3, 100 << 20));
	T(size("hole") == (100 << 20) + 3, "pwrite at 100 MiB: size 100 MiB + 3");
	T(pread(fd, b, 65536, 50 << 20) == 65536 && all_zero(b, 65536), "the hole before it reads as zeros");
	T(st_of("hole").st_blocks * 512 < (1 << 20), "and takes no space (%lld blocks)", (long long)st_of("hole").st_blocks);
	OK(lseek(fd, 10, SEEK_END));
	OK(write(fd, "x", 1));
	T(size("hole") == (100 << 20) + 14, "lseek past the end then write: size grows");
	ERR(EINVAL, lseek(fd, -1, SEEK_SET));
	T(lseek(fd, -3, SEEK_END) == (100 << 20) + 11, "lseek SEEK_END - 3");
	T(lseek(fd, 1, SEEK_CUR) == (100 << 20) + 12, "lseek SEEK_CUR + 1");
	close(fd);

	/* 8 MiB in one write */
	unsigned char *c = malloc(8 << 20), *d = malloc(8 << 20);
	fill_random(c, 8 << 20);
	fd = OK(open("big", O_CREAT | O_RDWR | O_TRUNC, 0644));
	T(write(fd, c, 8 << 20) == 8 << 20, "one write of 8 MiB");
	T(pread(fd, d, 8 << 20, 0) == 8 << 20 && !memcmp(c, d, 8 << 20), "one read of 8 MiB: equal");
	close(fd);
	free(c);
	free(d);

	/* mmap */
	fd = OK(open("f", O_RDONLY));
	void *m = mmap(NULL, BIG, PROT_READ, MAP_PRIVATE, fd, 0);
	T(m != MAP_FAILED && pread(fd, b, BIG, 0) == BIG && !memcmp(m, b, BIG), "mmap MAP_PRIVATE reads the file");
	if (m != MAP_FAILED)
		munmap(m, BIG);
	close(fd);
	if (opt.shared_mmap) {
		fd = OK(open("f", O_RDWR));
		m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (T(m != MAP_FAILED, "mmap MAP_SHARED read-write: %s", m == MAP_FAILED ? strerror(errno) : "ok")) {
			memcpy((char *)m + 100, "mapped", 6);
			OK(msync(m, 8192, MS_SYNC));
			munmap(m, 8192);
			T(pread(fd, b, 6, 100) == 6 && !memcmp(b, "mapped", 6), "a write through MAP_SHARED is read by pread");
		}
		close(fd);
	}
	OK(mkfifo("fifo", 0644));
	fd = OK(open("fifo", O_RDWR));
	ERR(ESPIPE, pwrite(fd, "x", 1, 0));
	ERR(ESPIPE, lseek(fd, 0, SEEK_SET));
	close(fd);
	free(a);
	free(b);
}

static void g_falloc(void)
{
	enum { M = 1 << 20 };
	unsigned char *a = malloc(M), *b = malloc(M);
	struct stat s;
	int fd;

	fd = OK(open("f", O_CREAT | O_RDWR, 0644));
	OK(fallocate(fd, 0, 0, M));
	s = st_of("f");
	T(s.st_size == M && s.st_blocks * 512 >= M, "fallocate 1 MiB: size 1 MiB, space allocated (%lld blocks)",
	  (long long)s.st_blocks);
	T(pread(fd, b, M, 0) == M && all_zero(b, M), "it reads as zeros");
	fill_random(a, M);
	OK(pwrite(fd, a, M, 0));
	OK(fallocate(fd, 0, 4096, 8192));
	T(pread(fd, b, M, 0) == M && !memcmp(a, b, M), "fallocate over data keeps the data");
	OK(fallocate(fd, FALLOC_FL_KEEP_SIZE, M, M));
	s = st_of("f");
	T(s.st_size == M && s.st_blocks * 512 >= 2 * M, "FALLOC_FL_KEEP_SIZE past the end: size kept, space allocated"
	  " (%lld blocks)", (long long)s.st_blocks);
	OK(pwrite(fd, "tail", 4, M + 100));
	T(size("f") == M + 104 && pread(fd, b, 100, M) == 100 && all_zero(b, 100),
	  "a write into the kept-size allocation: size grows, the gap is zeros");
	OK(ftruncate(fd, M));
	blkcnt_t before = st_of("f").st_blocks;
	OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 65536, 65536));
	memset(a + 65536, 0, 65536);
	s = st_of("f");
	T(s.st_size == M && pread(fd, b, M, 0) == M && !memcmp(a, b, M),
	  "PUNCH_HOLE|KEEP_SIZE of 64 KiB: zeros there, the rest kept, size kept");
	T(s.st_blocks <= before - 100, "the punched space is freed (%lld -> %lld blocks)", (long long)before,
	  (long long)s.st_blocks);
	OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1000, 5000));
	memset(a + 1000, 0, 5000);
	T(pread(fd, b, M, 0) == M && !memcmp(a, b, M), "an unaligned punch (1000, 5000): exactly those bytes zeroed");
	OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, M - 100, 10000));
	memset(a + M - 100, 0, 100);
	T(size("f") == M && pread(fd, b, M, 0) == M && !memcmp(a, b, M), "a punch across the end: size kept");
	ERR(EOPNOTSUPP, fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 4096));
	if (opt.zero_range) {
		OK(fallocate(fd, FALLOC_FL_ZERO_RANGE, 200000, 300000));
		memset(a + 200000, 0, 300000);
		T(size("f") == M && pread(fd, b, M, 0) == M && !memcmp(a, b, M), "ZERO_RANGE (200000, 300000): zeroed");
		OK(fallocate(fd, FALLOC_FL_ZERO_RANGE, 3, 5));
		memset(a + 3, 0, 5);
		T(pread(fd, b, M, 0) == M && !memcmp(a, b, M), "ZERO_RANGE of 5 bytes inside a block");
		OK(fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, M - 10, 1000));
		memset(a + M - 10, 0, 10);
		T(size("f") == M && pread(fd, b, M, 0) == M && !memcmp(a, b, M), "ZERO_RANGE|KEEP_SIZE across the end: size kept");
		OK(fallocate(fd, FALLOC_FL_ZERO_RANGE, M - 10, 1000));
		T(size("f") == M + 990 && pread(fd, b, 1000, M - 10) == 1000 && all_zero(b, 1000),
		  "ZERO_RANGE across the end: size grows, zeros");
	}
	ERR(EINVAL, fallocate(fd, 0, 0, 0));
	ERR(EINVAL, fallocate(fd, 0, -1, 4096));
	ERR(EOPNOTSUPP, fallocate(fd, 0x8000, 0, 4096));
	close(fd);
	fd = OK(open("f", O_RDONLY));
	ERR(EBADF, fallocate(fd, 0, 0, 4096));
	close(fd);
	OK(mkfifo("fifo", 0644));
	fd = OK(open("fifo", O_RDWR));
	ERR(ESPIPE, fallocate(fd, 0, 0, 4096));
	close(fd);
	free(a);
	free(b);
}

static void g_seek(void)
{
	enum { K = 1024, M = 1 << 20 };
	static unsigned char data[64 * K];
	int fd;

	memset(data, 'd', sizeof(data));
	fd = OK(open("f", O_CREAT | O_RDWR, 0644));
	OK(pwrite(fd, data, 64 * K, 0));
	OK(pwrite(fd, data, 64 * K, M));
	off_t end = M + 64 * K;
	T(lseek(fd, 0, SEEK_DATA) == 0, "SEEK_DATA 0 in data: 0");
	T(lseek(fd, 1000, SEEK_DATA) == 1000, "SEEK_DATA 1000 in data: 1000");
	T(lseek(fd, M + 5, SEEK_HOLE) == end, "SEEK_HOLE in the last data: the end");
	T(lseek(fd, end - 1, SEEK_DATA) == end - 1, "SEEK_DATA at the last byte: itself");
	ERR(ENXIO, lseek(fd, end, SEEK_DATA));
	ERR(ENXIO, lseek(fd, end, SEEK_HOLE));
	ERR(ENXIO, lseek(fd, end + 100, SEEK_DATA));
	ERR(ENXIO, lseek(fd, end + 100, SEEK_HOLE));
	if (opt.seek_hole) {
		T(lseek(fd, 0, SEEK_HOLE) == 64 * K, "SEEK_HOLE 0: the hole at 64 KiB (got %lld)",
		  (long long)lseek(fd, 0, SEEK_HOLE));
		T(lseek(fd, 64 * K, SEEK_DATA) == M, "SEEK_DATA at the hole: the data at 1 MiB (got %lld)",
		  (long long)lseek(fd, 64 * K, SEEK_DATA));
		T(lseek(fd, 300 * K, SEEK_DATA) == M, "SEEK_DATA inside the hole: 1 MiB");
		T(lseek(fd, 300 * K, SEEK_HOLE) == 300 * K, "SEEK_HOLE inside the hole: itself");
		OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 64 * K));
		T(lseek(fd, 0, SEEK_DATA) == M, "after punching the first 64 KiB: SEEK_DATA 0 = 1 MiB (got %lld)",
		  (long long)lseek(fd, 0, SEEK_DATA));
	} else {
		off_t h = lseek(fd, 0, SEEK_HOLE);
		T(h >= 64 * K && h <= end, "SEEK_HOLE 0 between the first hole and the end (got %lld)", (long long)h);
	}
	close(fd);
	fd = OK(open("sparse", O_CREAT | O_RDWR, 0644));
	OK(ftruncate(fd, M));
	if (opt.seek_hole) {
		ERR(ENXIO, lseek(fd, 0, SEEK_DATA));
	}
	T(lseek(fd, 0, SEEK_HOLE) == (opt.seek_hole ? 0 : M) ||
	  lseek(fd, 0, SEEK_HOLE) == 0, "SEEK_HOLE in a file that is all hole: 0 (got %lld)",
	  (long long)lseek(fd, 0, SEEK_HOLE));
	OK(pwrite(fd, data, 4096, 0));
	if (opt.seek_hole) {
		T(lseek(fd, 0, SEEK_HOLE) == 4096, "data then a trailing hole: SEEK_HOLE 0 = 4096 (got %lld)",
		  (long long)lseek(fd, 0, SEEK_HOLE));
		ERR(ENXIO, lseek(fd, 8192, SEEK_DATA));
	}
	close(fd);
	fd = OK(open("empty", O_CREAT | O_RDWR, 0644));
	ERR(ENXIO, lseek(fd, 0, SEEK_DATA));
	ERR(ENXIO, lseek(fd, 0, SEEK_HOLE));
	close(fd);
}

static void g_fsync(void)
{
	int fd;

	fd = OK(open("f", O_CREAT | O_RDWR, 0644));
	OK(write(fd, "data", 4));
	OK(fsync(fd));
	OK(write(fd, "more", 4));
	OK(fdatasync(fd));
	OK(sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER));
	OK(syncfs(fd));
	close(fd);
	ERR(EBADF, fsync(fd));
	fd = OK(open("f", O_RDONLY));
	OK(fsync(fd));
	OK(fdatasync(fd));
	close(fd);
	OK(mkdir("d", 0755));
	OK(mkstr("d/new", "x"));
	fd = OK(open("d", O_RDONLY | O_DIRECTORY));
	OK(fsync(fd));
	OK(fdatasync(fd));
	close(fd);
	fd = OK(open(".", O_RDONLY | O_DIRECTORY));
	OK(fsync(fd));
	close(fd);
	fd = OK(open("f", O_PATH));
	ERR(EBADF, fsync(fd));
	close(fd);
	T(content_is("f", "datamore", 8), "the data after the syncs");
}

static void g_xattr(void)
{
	char buf[65536 + 16], name[300];
	unsigned char big[65537];
	ssize_t n;
	int fd;

	OK(mkstr("f", ""));
	ERR(ENODATA, getxattr("f", "user.none", buf, sizeof(buf)));
	OK(setxattr("f", "user.a", "value-a", 7, 0));
	T(getxattr("f", "user.a", buf, sizeof(buf)) == 7 && !memcmp(buf, "value-a", 7), "set and get user.a");
	T(getxattr("f", "user.a", NULL, 0) == 7, "getxattr with size 0: the value's size");
	ERR(ERANGE, getxattr("f", "user.a", buf, 3));
	ERR(EEXIST, setxattr("f", "user.a", "x", 1, XATTR_CREATE));
	ERR(ENODATA, setxattr("f", "user.b", "x", 1, XATTR_REPLACE));
	T(getxattr("f", "user.b", buf, sizeof(buf)) == -1, "XATTR_REPLACE of a missing name creates nothing");
	OK(setxattr("f", "user.a", "new", 3, XATTR_REPLACE));
	T(getxattr("f", "user.a", buf, sizeof(buf)) == 3 && !memcmp(buf, "new", 3), "XATTR_REPLACE replaces");
	OK(setxattr("f", "user.b", "bb", 2, XATTR_CREATE));
	OK(setxattr("f", "user.empty", "", 0, 0));
	T(getxattr("f", "user.empty", buf, sizeof(buf)) == 0, "an empty value");
	OK(setxattr("f", "user.bin", "a\0b\0\xff", 5, 0));
	T(getxattr("f", "user.bin", buf, sizeof(buf)) == 5 && !memcmp(buf, "a\0b\0\xff", 5), "a binary value with NULs");
	OK(setxattr("f", "trusted.t", "tt", 2, 0));
	T(getxattr("f", "trusted.t", buf, sizeof(buf)) == 2, "trusted.* as root");
	OK(setxattr("f", "security.s", "ss", 2, 0));
	T(getxattr("f", "security.s", buf, sizeof(buf)) == 2, "security.*");
	n = listxattr("f", NULL, 0);
	T(n > 0, "listxattr size");
	ERR(ERANGE, listxattr("f", buf, 3));
	n = listxattr("f", buf, sizeof(buf));
	{
		const char *want[] = { "user.a", "user.b", "user.empty", "user.bin", "trusted.t", "security.s" };
		unsigned found = 0, extra = 0;

		for (ssize_t i = 0; i < n; i += strlen(buf + i) + 1) {
			bool k = false;

			for (unsigned j = 0; j < 6; j++)
				if (!strcmp(buf + i, want[j])) {
					found |= 1u << j;
					k = true;
				}
			extra += !k && strncmp(buf + i, "security.", 9) && strncmp(buf + i, "system.", 7);
		}
		T(found == 63 && !extra, "listxattr: the 6 names, nothing else (found %x, %u extra)", found, extra);
	}
	OK(removexattr("f", "user.b"));
	ERR(ENODATA, getxattr("f", "user.b", buf, sizeof(buf)));
	ERR(ENODATA, removexattr("f", "user.b"));
	ERR(ENODATA, removexattr("f", "user.never"));
	ERR(EOPNOTSUPP, setxattr("f", "nonamespace", "x", 1, 0));
	ERR(EOPNOTSUPP, setxattr("f", "bogus.x", "x", 1, 0));
	ERR(ERANGE, setxattr("f", "", "x", 1, 0));
	ERR(EINVAL, setxattr("f", "user.flags", "x", 1, 4));
	memset(name, 'n', sizeof(name));
	memcpy(name, "user.", 5);
	name[255] = 0;
	OK(setxattr("f", name, "long", 4, 0));
	T(getxattr("f", name, buf, sizeof(buf)) == 4, "a name of 255 bytes");
	OK(removexattr("f", name));
	name[255] = 'n';
	name[256] = 0;
	ERR(ERANGE, setxattr("f", name, "x", 1, 0));
	ERR(ERANGE, getxattr("f", name, buf, sizeof(buf)));
	fill_random(big, sizeof(big));
	ERR(E2BIG, setxattr("f", "user.toobig", big, 65537, 0));
	OK(setxattr("f", "user.mid", big, 1000, 0));
	T(getxattr("f", "user.mid", buf, sizeof(buf)) == 1000 && !memcmp(buf, big, 1000), "a value of 1000 bytes");
	errno = 0;
	int r = setxattr("f", "user.max", big, 65536, 0);
	int e = errno;
	if (r == 0)
		T(getxattr("f", "user.max", buf, sizeof(buf)) == 65536 && !memcmp(buf, big, 65536),
		  "a value of 65536 bytes: stored, read back exactly");
	else
		T(e == E2BIG || e == ERANGE || e == ENOSPC,
		  "a value of 65536 bytes: refused with E2BIG, ERANGE or ENOSPC (got %s)", ename(e));
	removexattr("f", "user.max");
	ERR(ENOENT, getxattr("nothing", "user.a", buf, sizeof(buf)));
	ERR(ENOENT, setxattr("nothing", "user.a", "x", 1, 0));

	/* many names on one inode */
	OK(mkstr("many", ""));
	unsigned ok = 0;
	for (int i = 0; i < 200; i++) {
		char v[300];

		snprintf(name, sizeof(name), "user.name-%d-%.*s", i, i % 40, "abcdefghijklmnopqrstuvwxyzabcdefghijklmn");
		memset(v, 'a' + i % 26, sizeof(v));
		ok += !setxattr("many", name, v, i % 200, 0);
	}
	T(ok == 200, "200 names on one file (%u set)", ok);
	for (int i = 0; i < 200; i += 2) {
		snprintf(name, sizeof(name), "user.name-%d-%.*s", i, i % 40, "abcdefghijklmnopqrstuvwxyzabcdefghijklmn");
		removexattr("many", name);
	}
	n = listxattr("many", buf, sizeof(buf));
	ok = 0;
	unsigned bad = 0;
	for (ssize_t i = 0; n > 0 && i < n; i += strlen(buf + i) + 1) {
		int k;
		char v[300];

		if (strncmp(buf + i, "user.", 5))
			continue;
		if (sscanf(buf + i, "user.name-%d-", &k) == 1 && k % 2 && getxattr("many", buf + i, v, sizeof(v)) == k % 200)
			ok++;
		else
			bad++;
	}
	T(ok == 100 && !bad, "half removed: the other 100 listed once each with their values (%u ok, %u wrong)", ok, bad);

	OK(mkdir("d", 0755));
	OK(setxattr("d", "user.dir", "d", 1, 0));
	T(getxattr("d", "user.dir", buf, sizeof(buf)) == 1, "user.* on a folder");
	OK(symlink("f", "l"));
	ERR(EPERM, lsetxattr("l", "user.x", "x", 1, 0));
	OK(lsetxattr("l", "trusted.x", "x", 1, 0));
	T(lgetxattr("l", "trusted.x", buf, sizeof(buf)) == 1 && getxattr("f", "trusted.x", buf, sizeof(buf)) == -1,
	  "trusted.* on the symlink itself");
	T(getxattr("l", "user.a", buf, sizeof(buf)) == 3, "getxattr follows a symlink");
	OK(mkfifo("fifo", 0644));
	ERR(EPERM, setxattr("fifo", "user.x", "x", 1, 0));
	OK(link("f", "f2"));
	T(getxattr("f2", "user.a", buf, sizeof(buf)) == 3, "xattrs belong to the inode: seen through a hard link");
	OK(rename("f2", "f3"));
	T(getxattr("f3", "user.a", buf, sizeof(buf)) == 3, "and kept by rename");
	fd = OK(open("f", O_RDWR));
	OK(fsetxattr(fd, "user.fd", "via fd", 6, 0));
	T(fgetxattr(fd, "user.fd", buf, sizeof(buf)) == 6 && flistxattr(fd, buf, sizeof(buf)) > 0, "fsetxattr, fgetxattr, flistxattr");
	OK(fremovexattr(fd, "user.fd"));
	close(fd);
}

static void g_acl(void)
{
	unsigned char blob[256], want[256], buf[256];
	size_t n, wn;

	OK(mkstr("f", ""));
	OK(chmod("f", 0640));
	ERR(ENODATA, getxattr("f", "system.posix_acl_access", buf, sizeof(buf)));
	struct acl_e full[] = {
		{ A_USER_OBJ, 6, NOID }, { A_USER, 5, 1234 }, { A_GROUP_OBJ, 4, NOID },
		{ A_GROUP, 2, 4321 }, { A_MASK, 5, NOID }, { A_OTHER, 0, NOID },
	};
	n = acl_blob(blob, full, 6);
	OK(setxattr("f", "system.posix_acl_access", blob, n, 0));
	T(xattr_is("f", "system.posix_acl_access", blob, n), "an access ACL reads back byte for byte");
	T(mode("f") == 0650, "the mode follows the ACL: group bits = the mask (0650, got %o)", mode("f"));
	OK(chmod("f", 0600));
	full[4].perm = 0;
	wn = acl_blob(want, full, 6);
	T(xattr_is("f", "system.posix_acl_access", want, wn), "chmod 0600 sets the ACL mask to ---, named entries kept");
	OK(chmod("f", 0664));
	full[4].perm = 6;
	full[5].perm = 4;
	wn = acl_blob(want, full, 6);
	T(xattr_is("f", "system.posix_acl_access", want, wn), "chmod 0664: mask rw-, other r--");
	struct acl_e minimal[] = { { A_USER_OBJ, 7, NOID }, { A_GROUP_OBJ, 5, NOID }, { A_OTHER, 4, NOID } };
	n = acl_blob(blob, minimal, 3);
	OK(setxattr("f", "system.posix_acl_access", blob, n, 0));
	T(mode("f") == 0754, "a minimal ACL sets the mode (0754, got %o)", mode("f"));
	ERR(ENODATA, getxattr("f", "system.posix_acl_access", buf, sizeof(buf)));
	n = acl_blob(blob, full, 6);
	OK(setxattr("f", "system.posix_acl_access", blob, n, 0));
	OK(removexattr("f", "system.posix_acl_access"));
	ERR(ENODATA, getxattr("f", "system.posix_acl_access", buf, sizeof(buf)));
	n = acl_blob(blob, full, 6);
	put32(blob, 1);
	ERR(EOPNOTSUPP, setxattr("f", "system.posix_acl_access", blob, n, 0));
	struct acl_e nomask[] = { { A_USER_OBJ, 6, NOID }, { A_USER, 5, 1234 }, { A_GROUP_OBJ, 4, NOID },
				  { A_OTHER, 0, NOID } };
	n = acl_blob(blob, nomask, 4);
	ERR(EINVAL, setxattr("f", "system.posix_acl_access", blob, n, 0));
	struct acl_e twice[] = { { A_USER_OBJ, 6, NOID }, { A_USER_OBJ, 6, NOID }, { A_GROUP_OBJ, 4, NOID },
				 { A_OTHER, 0, NOID } };
	n = acl_blob(blob, twice, 4);
	ERR(EINVAL, setxattr("f", "system.posix_acl_access", blob, n, 0));
	ERR(EINVAL, setxattr("f", "system.posix_acl_access", "\2\0\0\0\1\0", 6, 0));
	n = acl_blob(blob, full, 6);
	ERR(EACCES, setxattr("f", "system.posix_acl_default", blob, n, 0));

	/* default ACLs are inherited */
	OK(mkdir("d", 0755));
	struct acl_e def[] = {
		{ A_USER_OBJ, 7, NOID }, { A_USER, 7, 1234 }, { A_GROUP_OBJ, 5, NOID },
		{ A_MASK, 7, NOID }, { A_OTHER, 5, NOID },
	};
	n = acl_blob(blob, def, 5);
	OK(setxattr("d", "system.posix_acl_default", blob, n, 0));
	T(xattr_is("d", "system.posix_acl_default", blob, n), "a default ACL on a folder reads back");
	T(mode("d") == 0755, "a default ACL does not change the folder's mode");
	int fd = OK(open("d/file", O_CREAT | O_WRONLY, 0666));
	close(fd);
	struct acl_e inh[] = {
		{ A_USER_OBJ, 6, NOID }, { A_USER, 7, 1234 }, { A_GROUP_OBJ, 5, NOID },
		{ A_MASK, 6, NOID }, { A_OTHER, 4, NOID },
	};
	wn = acl_blob(want, inh, 5);
	T(xattr_is("d/file", "system.posix_acl_access", want, wn),
	  "a file made in it inherits the default ACL masked by its create mode");
	T(mode("d/file") == 0664, "its mode: 0666 masked by the default ACL, no umask (0664, got %o)", mode("d/file"));
	ERR(ENODATA, getxattr("d/file", "system.posix_acl_default", buf, sizeof(buf)));
	OK(mkdir("d/sub", 0777));
	T(xattr_is("d/sub", "system.posix_acl_default", blob, n), "a folder made in it inherits the default ACL");
	T(xattr_is("d/sub", "system.posix_acl_access", blob, n), "and gets it as its access ACL (mode 0777)");
	OK(removexattr("d", "system.posix_acl_default"));
	fd = OK(open("d/after", O_CREAT | O_WRONLY, 0666));
	close(fd);
	T(mode("d/after") == 0644, "without the default ACL the umask applies again (got %o)", mode("d/after"));

	/* the kernel enforces it */
	if (opt.perm) {
		OK(mkstr("secret", "s"));
		OK(chmod("secret", 0600));
		struct acl_e rd[] = { { A_USER_OBJ, 6, NOID }, { A_USER, 4, opt.uid }, { A_GROUP_OBJ, 0, NOID },
				      { A_MASK, 4, NOID }, { A_OTHER, 0, NOID } };
		n = acl_blob(blob, rd, 5);
		OK(setxattr("secret", "system.posix_acl_access", blob, n, 0));
		OK(mkstr("secret2", "s"));
		OK(chmod("secret2", 0600));
		if (become_user()) {
			fd = OK(open("secret", O_RDONLY));
			if (fd >= 0)
				close(fd);
			ERR(EACCES, open("secret", O_WRONLY));
			ERR(EACCES, open("secret2", O_RDONLY));
			ERR(EPERM, setxattr("secret", "system.posix_acl_access", blob, n, 0));
			become_root();
		}
	}
}

static void g_statfs(void)
{
	enum { MB16 = 16 << 20 };
	struct statvfs a, b, c;
	struct statfs sf;
	char *buf = malloc(MB16);
	int fd;

	OK(statvfs(".", &a));
	T(a.f_bsize > 0 && a.f_frsize > 0 && a.f_blocks > 0, "f_bsize, f_frsize, f_blocks > 0");
	T(a.f_bfree <= a.f_blocks && a.f_bavail <= a.f_bfree, "f_bavail <= f_bfree <= f_blocks");
	T(a.f_namemax == 255, "f_namemax 255 (got %lu)", a.f_namemax);
	OK(statfs(".", &sf));
	T((unsigned long)sf.f_blocks == a.f_blocks, "statfs and statvfs agree");
	ERR(ENOENT, statvfs("nothing", &b));
	double fr = a.f_frsize;
	if (a.f_bavail * fr < 64.0 * (1 << 20)) {
		T(false, "64 MiB free for the space checks (%.0f MiB)", a.f_bavail * fr / (1 << 20));
		free(buf);
		return;
	}
	fill_random(buf, MB16);
	fd = OK(open("f", O_CREAT | O_WRONLY, 0644));
	T(write(fd, buf, MB16) == MB16, "write 16 MiB");
	OK(fsync(fd));
	close(fd);
	OK(statvfs(".", &b));
	T((a.f_bfree - (double)b.f_bfree) * fr >= 12.0 * (1 << 20),
	  "writing 16 MiB takes >= 12 MiB of f_bfree (%.1f MiB)", (a.f_bfree - (double)b.f_bfree) * fr / (1 << 20));
	T((a.f_bavail - (double)b.f_bavail) * fr >= 12.0 * (1 << 20),
	  "and of f_bavail (%.1f MiB)", (a.f_bavail - (double)b.f_bavail) * fr / (1 << 20));
	OK(unlink("f"));
	fd = open(".", O_RDONLY | O_DIRECTORY);
	fsync(fd);
	syncfs(fd);
	close(fd);
	for (int i = 0; i < 100; i++) {
		statvfs(".", &c);
		if ((c.f_bfree - (double)b.f_bfree) * fr >= 12.0 * (1 << 20))
			break;
		usleep(50000);
	}
	T((c.f_bfree - (double)b.f_bfree) * fr >= 12.0 * (1 << 20),
	  "deleting it gives >= 12 MiB back within 5 s (%.1f MiB)", (c.f_bfree - (double)b.f_bfree) * fr / (1 << 20));
	free(buf);
}

/* readdir of folder D: every entry exactly once, . and .. included */
static void g_readdir(void)
{
	enum { N = 600 };
	static bool seen[N];
	char name[64];
	struct dirent *e;
	DIR *d;
	bool dot = false, dotdot = false, ok = true, dtype_ok = true, ino_ok = true;
	unsigned other = 0;

	OK(mkdir("r", 0755));
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "r/entry-%d%s", i, i % 7 ? "" : "-with-a-longer-name");
		if (i % 50 == 1)
			ok &= !mkdir(name, 0755);
		else if (i % 50 == 2)
			ok &= !symlink("x", name);
		else if (i % 50 == 3)
			ok &= !mkfifo(name, 0644);
		else
			ok &= !mkstr(name, "");
	}
	T(ok, "%d entries made", N);
	d = opendir("r");
	memset(seen, 0, sizeof(seen));
	ok = true;
	while (d && (e = readdir(d))) {
		int i;
		char full[300];
		struct stat s;

		if (!strcmp(e->d_name, ".")) {
			ok &= !dot;
			dot = true;
			continue;
		}
		if (!strcmp(e->d_name, "..")) {
			ok &= !dotdot;
			dotdot = true;
			continue;
		}
		if (sscanf(e->d_name, "entry-%d", &i) != 1 || i < 0 || i >= N) {
			other++;
			continue;
		}
		ok &= !seen[i];
		seen[i] = true;
		snprintf(full, sizeof(full), "r/%s", e->d_name);
		s = st_of(full);
		ino_ok &= e->d_ino == s.st_ino;
		dtype_ok &= e->d_type == IFTODT(s.st_mode);
	}
	if (d)
		closedir(d);
	unsigned nseen = 0;
	for (int i = 0; i < N; i++)
		nseen += seen[i];
	T(ok && dot && dotdot && nseen == N && !other, "readdir: . and .. and every entry exactly once (%u of %d, %u unknown)",
	  nseen, N, other);
	T(dtype_ok, "d_type matches each entry's type");
	T(ino_ok, "d_ino matches each entry's st_ino");

	/* telldir/seekdir without changes: the same entries again */
	char a[20][256], b[20][256];
	long pos;
	d = opendir("r");
	for (int i = 0; i < 100 && d; i++)
		readdir(d);
	pos = telldir(d);
	for (int i = 0; i < 20 && d; i++) {
		e = readdir(d);
		snprintf(a[i], 256, "%s", e ? e->d_name : "");
	}
	seekdir(d, pos);
	for (int i = 0; i < 20 && d; i++) {
		e = readdir(d);
		snprintf(b[i], 256, "%s", e ? e->d_name : "");
	}
	bool same = true;
	for (int i = 0; i < 20; i++)
		same &= !strcmp(a[i], b[i]) && a[i][0];
	T(d && same, "seekdir to a telldir position: the same 20 entries again");
	if (d)
		closedir(d);

	/* changes during a walk: entries unchanged throughout are seen exactly once */
	static unsigned char cnt[N], state[N];	/* state: 0 kept, 1 removed during, 2 read-before-removal */
	memset(cnt, 0, sizeof(cnt));
	memset(state, 0, sizeof(state));
	d = opendir("r");
	unsigned reads = 0, added = 0, dup = 0, ghost = 0;
	ok = true;
	while (d && (e = readdir(d))) {
		int i;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!strncmp(e->d_name, "added-", 6))
			continue;
		if (sscanf(e->d_name, "entry-%d", &i) != 1 || i < 0 || i >= N) {
			ghost++;
			continue;
		}
		if (cnt[i]++)
			dup++;
		if (++reads % 10 == 0) {
			/* remove one entry already read, one not read yet; add two */
			for (int j = 0; j < N; j++)
				if (cnt[j] && !state[j] && j % 50 > 3) {
					snprintf(name, sizeof(name), "r/entry-%d%s", j, j % 7 ? "" : "-with-a-longer-name");
					ok &= !unlink(name);
					state[j] = 2;
					break;
				}
			for (int j = N - 1; j >= 0; j--)
				if (!cnt[j] && !state[j] && j % 50 > 3) {
					snprintf(name, sizeof(name), "r/entry-%d%s", j, j % 7 ? "" : "-with-a-longer-name");
					ok &= !unlink(name);
					state[j] = 1;
					break;
				}
			for (int k = 0; k < 2; k++) {
				snprintf(name, sizeof(name), "r/added-%u", added++);
				ok &= !mkstr(name, "");
			}
		}
	}
	if (d)
		closedir(d);
	unsigned missed = 0, kept = 0;
	for (int i = 0; i < N; i++)
		if (state[i] != 1) {
			kept++;
			missed += !cnt[i];
		} else {
			dup += cnt[i] > 1;
		}
	T(ok && !dup && !missed && !ghost, "removing and adding entries during a walk: each of the %u kept entries once"
	  " (%u missed, %u twice, %u unknown)", kept, missed, dup, ghost);

	/* telldir, then changes, then seekdir: the rest of the walk still exactly once */
	unsigned cnt2[N];
	memset(cnt2, 0, sizeof(cnt2));
	d = opendir("r");
	unsigned k = 0;
	while (d && k < 150 && (e = readdir(d))) {
		int i;

		if (sscanf(e->d_name, "entry-%d", &i) == 1 && i >= 0 && i < N)
			cnt2[i]++;
		k++;
	}
	pos = telldir(d);
	for (int j = 0; j < 20; j++) {
		snprintf(name, sizeof(name), "r/late-%d", j);
		mkstr(name, "");
	}
	unsigned removed = 0;
	for (int j = 0; j < N && removed < 20; j++)
		if (cnt2[j] && state[j] == 0 && j % 50 > 3) {	/* remove some already read */
			snprintf(name, sizeof(name), "r/entry-%d%s", j, j % 7 ? "" : "-with-a-longer-name");
			if (!unlink(name)) {
				state[j] = 2;
				removed++;
			}
		}
	if (d)
		seekdir(d, pos);
	while (d && (e = readdir(d))) {
		int i;

		if (sscanf(e->d_name, "entry-%d", &i) == 1 && i >= 0 && i < N)
			cnt2[i]++;
	}
	if (d)
		closedir(d);
	missed = dup = 0;
	for (int i = 0; i < N; i++) {
		if (state[i] == 0)
			missed += !cnt2[i];
		dup += cnt2[i] > 1;
	}
	T(!missed && !dup, "telldir, changes, seekdir: every entry still there seen exactly once (%u missed, %u twice)",
	  missed, dup);

	/* a second process changes the folder while this one walks it */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		for (unsigned i = 0;; i++) {
			snprintf(name, sizeof(name), "r/churn-%u", i % 64);
			if (i & 64)
				unlink(name);
			else
				mkstr(name, "");
		}
	}
	unsigned walks = 0, bad = 0;
	for (; walks < 30; walks++) {
		unsigned char c3[N];

		memset(c3, 0, sizeof(c3));
		d = opendir("r");
		while (d && (e = readdir(d))) {
			int i;

			if (sscanf(e->d_name, "entry-%d", &i) == 1 && i >= 0 && i < N)
				c3[i]++;
		}
		if (d)
			closedir(d);
		for (int i = 0; i < N; i++)
			if (state[i] == 0 && c3[i] != 1)
				bad++;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	T(!bad, "30 walks while another process adds and removes entries: the others seen exactly once each time"
	  " (%u wrong)", bad);
	OK(mkdir("empty", 0755));
	unsigned n;
	char **v = list_dir("empty", &n);
	T(v && n == 0, "an empty folder: only . and ..");
	free_list(v, n);
}

static void g_times(void)
{
	struct timespec past[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	struct stat b[32], s;
	char buf[8];
	int fd;
	const char *paths[] = {
		"w", "t", "otrunc", "mv", "src", "dst", "ln", "ldir", "ul", "ul2", "udir", "chm", "cho", "xat",
		"ut", "mk", "rd", "rdd", "fa",
	};
	enum { W, TR, OTRUNC, MV, SRC, DST, LN, LDIR, UL, UL2, UDIR, CHM, CHO, XAT, UT, MK, RD, RDD, FA, NP };

	OK(mkstr("w", "data"));
	OK(mkstr("t", "data"));
	OK(mkstr("otrunc", "data"));
	OK(mkdir("src", 0755));
	OK(mkdir("dst", 0755));
	OK(mkstr("src/mv", "m"));
	OK(mkstr("ln", "l"));
	OK(mkdir("ldir", 0755));
	OK(mkdir("udir", 0755));
	OK(mkstr("udir/ul", "u"));
	OK(link("udir/ul", "udir/ul2"));
	OK(mkstr("chm", ""));
	OK(mkstr("cho", ""));
	OK(mkstr("xat", ""));
	OK(mkstr("ut", ""));
	OK(mkdir("mk", 0755));
	OK(mkstr("rd", "read me"));
	OK(mkdir("rdd", 0755));
	OK(mkdir("rdd/gone", 0755));
	OK(mkstr("fa", ""));
	const char *real[NP] = {
		"w", "t", "otrunc", "src/mv", "src", "dst", "ln", "ldir", "udir/ul", "udir/ul2", "udir", "chm", "cho",
		"xat", "ut", "mk", "rd", "rdd", "fa",
	};
	for (int i = 0; i < NP; i++) {
		utimensat(AT_FDCWD, real[i], past, AT_SYMLINK_NOFOLLOW);
		b[i] = st_of(real[i]);
	}
	(void)paths;
	usleep(1100000);	/* timestamps may have a 1 s granularity */
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME, &t0);
	t0.tv_sec -= 1;

	fd = open("w", O_WRONLY);
	OK(pwrite(fd, "x", 1, 1));
	close(fd);
	OK(truncate("t", 2));
	fd = OK(open("otrunc", O_WRONLY | O_TRUNC));
	close(fd);
	OK(rename("src/mv", "dst/mv"));
	OK(link("ln", "ldir/ln2"));
	OK(unlink("udir/ul2"));
	OK(chmod("chm", 0600));
	OK(chown("cho", 1, 1));
	OK(setxattr("xat", "user.t", "t", 1, 0));
	OK(utimensat(AT_FDCWD, "ut", past, 0));
	OK(mkstr("mk/new", ""));
	fd = OK(open("rd", O_RDONLY));
	OK(read(fd, buf, 4));
	close(fd);
	OK(rmdir("rdd/gone"));
	fd = OK(open("fa", O_WRONLY));
	OK(fallocate(fd, 0, 0, 8192));
	close(fd);

#define CH(p, i, what) ts_gt(st_of(p).st_##what##tim, b[i].st_##what##tim)
#define SAME(p, i, what) ts_eq(st_of(p).st_##what##tim, b[i].st_##what##tim)
	T(CH("w", W, m) && CH("w", W, c), "write: mtime and ctime");
	T(CH("t", TR, m) && CH("t", TR, c), "truncate: mtime and ctime");
	T(CH("otrunc", OTRUNC, m) && CH("otrunc", OTRUNC, c), "open O_TRUNC of a non-empty file: mtime and ctime");
	T(CH("dst/mv", MV, c) && SAME("dst/mv", MV, m), "rename: the file's ctime, not its mtime");
	T(CH("src", SRC, m) && CH("src", SRC, c) && CH("dst", DST, m) && CH("dst", DST, c),
	  "rename: both folders' mtime and ctime");
	T(CH("ln", LN, c) && SAME("ln", LN, m), "link: the file's ctime, not its mtime");
	T(CH("ldir", LDIR, m) && CH("ldir", LDIR, c), "link: the folder's mtime and ctime");
	T(CH("udir/ul", UL, c) && SAME("udir/ul", UL, m), "unlink: the remaining link's ctime");
	T(CH("udir", UDIR, m) && CH("udir", UDIR, c), "unlink: the folder's mtime and ctime");
	T(CH("chm", CHM, c) && SAME("chm", CHM, m), "chmod: ctime only");
	T(CH("cho", CHO, c) && SAME("cho", CHO, m), "chown: ctime only");
	T(CH("xat", XAT, c) && SAME("xat", XAT, m), "setxattr: ctime only");
	T(CH("ut", UT, c), "utimensat: ctime");
	T(CH("mk", MK, m) && CH("mk", MK, c), "create: the folder's mtime and ctime");
	s = st_of("mk/new");
	T(ts_gt(s.st_mtim, t0) && ts_eq(s.st_mtim, s.st_ctim) && ts_eq(s.st_atim, s.st_mtim),
	  "a new file: atime = mtime = ctime = now");
	T(SAME("rd", RD, m) && SAME("rd", RD, c), "read: neither mtime nor ctime");
	if (opt.atime)
		T(CH("rd", RD, a), "read: atime (relatime: atime was older than a day)");
	T(CH("rdd", RDD, m) && CH("rdd", RDD, c), "rmdir: the folder's mtime and ctime");
	T(CH("fa", FA, c) && CH("fa", FA, m), "fallocate that extends: mtime and ctime");
#undef CH
#undef SAME
}

static void g_names(void)
{
	char n255[256], n256[257], m255[256], path[6000], all[256];
	unsigned n;
	char **v;
	int fd;

	memset(n255, 'a', 255);
	n255[255] = 0;
	memset(n256, 'b', 256);
	n256[256] = 0;
	memset(m255, 'm', 255);
	m255[255] = 0;
	fd = OK(open(n255, O_CREAT | O_WRONLY, 0644));
	close(fd);
	T(S_ISREG(st_of(n255).st_mode), "a name of 255 bytes: created, found");
	v = list_dir(".", &n);
	T(n == 1 && !strcmp(v[0], n255), "readdir returns the 255-byte name whole");
	free_list(v, n);
	OK(rename(n255, m255));
	OK(link(m255, n255));
	OK(unlink(m255));
	OK(unlink(n255));
	OK(mkdir(n255, 0755));
	OK(rmdir(n255));
	OK(symlink(n255, m255));
	OK(unlink(m255));
	OK(mkstr("short", ""));
	ERR(ENAMETOOLONG, open(n256, O_CREAT | O_WRONLY, 0644));
	ERR(ENAMETOOLONG, mkdir(n256, 0755));
	ERR(ENAMETOOLONG, mknod(n256, S_IFIFO | 0644, 0));
	ERR(ENAMETOOLONG, symlink("x", n256));
	ERR(ENAMETOOLONG, link("short", n256));
	ERR(ENAMETOOLONG, rename("short", n256));
	ERR(ENAMETOOLONG, access(n256, F_OK));
	ERR(ENAMETOOLONG, unlink(n256));
	path[0] = 0;
	for (int i = 0; i < 2500; i++)
		strcat(path, "d/");
	ERR(ENAMETOOLONG, access(path, F_OK));
	int k = 0;
	for (int c = 1; c < 256; c++)
		if (c != '/')
			all[k++] = c;
	all[k] = 0;
	OK(mkstr(all, "every byte"));
	v = list_dir(".", &n);
	bool found = false;
	for (unsigned i = 0; i < n; i++)
		found |= !strcmp(v[i], all);
	free_list(v, n);
	T(found && content_is(all, "every byte", 10), "a name with every byte value but / and NUL (254 bytes)");
	OK(mkstr("Case", "1"));
	OK(mkstr("case", "2"));
	OK(mkstr("CASE", "3"));
	T(ino("Case") != ino("case") && ino("case") != ino("CASE") && content_is("case", "2", 1),
	  "names that differ only in case are different files");
	OK(mkstr("caf\xc3\xa9", "utf8"));
	OK(mkstr("cafe\xcc\x81", "decomposed"));
	T(ino("caf\xc3\xa9") != ino("cafe\xcc\x81"), "UTF-8 names are bytes (no normalisation)");
	OK(mkstr("...", ""));
	OK(mkstr(" ", ""));
	OK(mkstr("-", ""));
	OK(mkstr("a\nb", ""));
	T(exists("...") && exists(" ") && exists("-") && exists("a\nb"), "names ..., space, - and one with a newline");
}

static void g_many(void)
{
	unsigned N = opt.many, found = 0, listed = 0, dup = 0, gone = 0;
	unsigned char *cnt = calloc(N, 1);
	char name[128];
	struct dirent *e;
	ino_t *inos = calloc(N, sizeof(*inos));
	bool ok = true;

	OK(mkdir("m", 0755));
	for (unsigned i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "m/f%u.%.*s", i, (int)(i % 60), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
		ok &= !mkstr(name, "");
	}
	T(ok, "%u files made in one folder", N);
	for (unsigned i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "m/f%u.%.*s", i, (int)(i % 60), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
		inos[i] = ino(name);
		found += inos[i] != 0;
	}
	T(found == N, "each found by name (%u of %u)", found, N);
	DIR *d = opendir("m");
	while (d && (e = readdir(d))) {
		unsigned i;

		if (sscanf(e->d_name, "f%u.", &i) == 1 && i < N) {
			listed++;
			dup += cnt[i]++ > 0;
			ok &= e->d_ino == inos[i];
		}
	}
	if (d)
		closedir(d);
	T(listed == N && !dup, "readdir lists each once (%u listed, %u twice)", listed, dup);
	for (unsigned i = 0; i < N; i += 2) {
		snprintf(name, sizeof(name), "m/f%u.%.*s", i, (int)(i % 60), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
		unlink(name);
	}
	found = 0;
	for (unsigned i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "m/f%u.%.*s", i, (int)(i % 60), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
		if (i % 2)
			found += exists(name);
		else
			gone += !exists(name);
	}
	T(found == N / 2 && gone == (N + 1) / 2, "every other one removed: the rest found, the removed gone");
	unsigned n;
	char **v = list_dir("m", &n);
	T(n == N / 2, "readdir lists %u (got %u)", N / 2, n);
	free_list(v, n);
	ERR(ENOTEMPTY, rmdir("m"));
	for (unsigned i = 1; i < N; i += 2) {
		snprintf(name, sizeof(name), "m/f%u.%.*s", i, (int)(i % 60), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
		unlink(name);
	}
	OK(rmdir("m"));
	OK(mkdir("sub", 0755));
	ok = true;
	for (unsigned i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "sub/d%u", i);
		ok &= !mkdir(name, 0755);
	}
	T(ok && nlink("sub") == 502, "500 subfolders: nlink 502 (got %lu)", (unsigned long)nlink("sub"));
	free(cnt);
	free(inos);
}

/* as an unprivileged user (effective uid/gid opt.uid/opt.gid) */
static void g_perm(void)
{
	struct timespec ts[2] = { { 1, 0 }, { 1, 0 } };
	char buf[4];
	int fd;

	OK(chmod(".", 0755));
	OK(mkstr("root600", "r"));
	OK(chmod("root600", 0600));
	OK(mkstr("root644", "r"));
	OK(mkstr("root666", "r"));
	OK(chmod("root666", 0666));
	OK(mkdir("rootdir", 0755));
	OK(mkstr("rootdir/f", "r"));
	OK(mkdir("open", 0777));
	OK(chmod("open", 0777));
	OK(mkdir("noexec", 0766));
	OK(chmod("noexec", 0766));
	OK(mkstr("noexec/f", ""));
	OK(mkdir("sticky", 01777));
	OK(chmod("sticky", 01777));
	OK(mkstr("sticky/roots", ""));
	OK(chmod("sticky/roots", 0666));
	OK(mkdir("mine", 0755));
	OK(chown("mine", opt.uid, opt.gid));
	OK(mkstr("mine/f", ""));
	OK(chown("mine/f", opt.uid, opt.gid));
	OK(mkdir("mine/sub", 0755));
	OK(chown("mine/sub", opt.uid, opt.gid));
	OK(mkstr("mine/g", ""));
	OK(chown("mine/g", opt.uid, 1234));
	OK(mkdir("rootdir/moveme", 0777));
	OK(chmod("rootdir/moveme", 0777));
	OK(mkstr("suid", "#!/bin/sh\n"));
	OK(chmod("suid", 04777));
	OK(mkstr("exec", ""));
	OK(chmod("exec", 0755));
	OK(mkstr("noexecf", ""));
	OK(chmod("noexecf", 0644));

	if (!become_user())
		return;
	struct stat s;
	if (!T(stat(".", &s) == 0, "the test folder is reachable as uid %u (a FUSE mount needs -o allow_other): %s",
	       (unsigned)opt.uid, strerror(errno))) {
		become_root();
		return;
	}
	ERR(EACCES, open("root600", O_RDONLY));
	ERR(EACCES, open("root600", O_WRONLY));
	fd = OK(open("root644", O_RDONLY));
	close(fd);
	ERR(EACCES, open("root644", O_WRONLY));
	ERR(EACCES, open("root644", O_RDWR | O_TRUNC));
	ERR(EACCES, truncate("root644", 0));
	fd = OK(open("root666", O_RDWR));
	close(fd);
	ERR(EACCES, open("rootdir/new", O_CREAT | O_WRONLY, 0644));
	ERR(EACCES, mkdir("rootdir/newdir", 0755));
	ERR(EACCES, unlink("rootdir/f"));
	ERR(EACCES, rename("rootdir/f", "open/f"));
	ERR(EACCES, link("root666", "rootdir/l"));
	ERR(EACCES, symlink("x", "rootdir/s"));
	ERR(EACCES, mknod("rootdir/p", S_IFIFO | 0644, 0));
	fd = OK(open("open/new", O_CREAT | O_WRONLY, 0644));
	close(fd);
	s = st_of("open/new");
	T(s.st_uid == opt.uid && s.st_gid == opt.gid, "a file made by uid %u is owned by it (%u:%u)",
	  (unsigned)opt.uid, (unsigned)s.st_uid, (unsigned)s.st_gid);
	ERR(EACCES, stat("noexec/f", &s));
	ERR(EACCES, open("noexec/f", O_RDONLY));
	ERR(EACCES, chdir("noexec"));
	/* readdir of a folder without x works: the names, not the inodes */
	unsigned n;
	char **v = list_dir("noexec", &n);
	T(v && n == 1, "readdir of a folder with r but not x lists its names");
	free_list(v, n);
	ERR(EPERM, unlink("sticky/roots"));
	ERR(EPERM, rename("sticky/roots", "sticky/x"));
	OK(mkstr("sticky/mine", ""));
	OK(unlink("sticky/mine"));
	ERR(EPERM, chmod("root644", 0666));
	ERR(EPERM, chown("mine/f", 0, -1));
	ERR(EPERM, chown("mine/f", -1, 0));
	OK(chown("mine/f", -1, opt.gid));
	ERR(EPERM, chown("root644", opt.uid, -1));
	OK(chmod("mine/f", 02755));
	T(mode("mine/f") == 02755, "chmod g+s by an owner in the file's group (got %o)", mode("mine/f"));
	OK(chmod("mine/g", 02755));
	T(mode("mine/g") == 0755, "chmod g+s by an owner outside the file's group: setgid silently dropped (got %o)",
	  mode("mine/g"));
	ERR(EPERM, utimensat(AT_FDCWD, "root666", ts, 0));
	OK(utimensat(AT_FDCWD, "root666", NULL, 0));
	ERR(EACCES, utimensat(AT_FDCWD, "root644", NULL, 0));
	OK(utimensat(AT_FDCWD, "mine/f", ts, 0));
	ERR(EACCES, setxattr("root644", "user.x", "x", 1, 0));
	OK(setxattr("root666", "user.x", "x", 1, 0));
	ERR(EPERM, setxattr("mine/f", "trusted.x", "x", 1, 0));
	ERR(ENODATA, getxattr("mine/f", "trusted.x", buf, sizeof(buf)));
	ERR(EPERM, mknod("open/chr", S_IFCHR | 0644, makedev(1, 3)));
	OK(mkfifo("open/fifo", 0644));
	OK(faccessat(AT_FDCWD, "exec", X_OK, AT_EACCESS));
	ERR(EACCES, faccessat(AT_FDCWD, "noexecf", X_OK, AT_EACCESS));
	ERR(EACCES, faccessat(AT_FDCWD, "root644", W_OK, AT_EACCESS));
	OK(faccessat(AT_FDCWD, "root644", R_OK, AT_EACCESS));
	/* moving a folder to another parent rewrites its "..": needs write on it */
	ERR(EACCES, rename("rootdir/moveme", "open/moveme"));
	ERR(EACCES, rmdir("rootdir/moveme"));
	fd = OK(open("suid", O_WRONLY));
	OK(write(fd, "x", 1));
	close(fd);
	become_root();
	T(!(mode("suid") & S_ISUID), "a write by another user clears setuid (mode now %o)", mode("suid"));
	T(st_of("open/fifo").st_uid == opt.uid, "a fifo made by uid %u is owned by it", (unsigned)opt.uid);
}

/* ================================================================ main */

static const struct {
	const char *name;
	void (*fn)(void);
	bool *need;
} groups[] = {
	{ "stat", g_stat, NULL }, { "chmod", g_chmod, NULL }, { "chown", g_chown, NULL }, { "utimens", g_utimens, NULL },
	{ "truncate", g_truncate, NULL }, { "open", g_open, NULL }, { "mknod", g_mknod, NULL }, { "mkdir", g_mkdir, NULL },
	{ "unlink", g_unlink, NULL }, { "rmdir", g_rmdir, NULL }, { "rename", g_rename, NULL }, { "link", g_link, NULL },
	{ "symlink", g_symlink, NULL }, { "rw", g_rw, NULL }, { "falloc", g_falloc, NULL }, { "seek", g_seek, NULL },
	{ "fsync", g_fsync, NULL }, { "xattr", g_xattr, NULL }, { "acl", g_acl, &opt.acl }, { "statfs", g_statfs, NULL },
	{ "readdir", g_readdir, NULL }, { "times", g_times, NULL }, { "names", g_names, NULL }, { "many", g_many, NULL },
	{ "perm", g_perm, &opt.perm },
};

static bool in_list(const char *list, const char *name)
{
	size_t l = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);

		if (n == l && !strncmp(p, name, l))
			return true;
		p = c ? c + 1 : NULL;
	}
	return false;
}

static void usage(int code)
{
	FILE *f = code ? stderr : stdout;

	fprintf(f,
"Usage: posix [OPTION]... DIR\n"
"POSIX semantics of the filesystem holding DIR: every syscall's success and\n"
"error cases, as TAP lines. Works in DIR/posix.PID (removed when all passed).\n"
"Run as root. Exit 0 = all passed, 1 = a failure, 2 = usage or set-up error.\n"
"\n"
"Features a filesystem may lack (default: all tested):\n"
"  --no-acl            no POSIX ACLs (system.posix_acl_*)\n"
"  --no-zero-range     no FALLOC_FL_ZERO_RANGE (tmpfs)\n"
"  --no-seek-hole      SEEK_HOLE/SEEK_DATA may report the whole file as data\n"
"  --no-perm           no permission checks as an unprivileged user\n"
"  --no-atime          reads need not update atime\n"
"  --no-shared-mmap    no MAP_SHARED writable mappings (FUSE direct_io)\n"
"  --no-odirect        no O_DIRECT\n"
"Other options:\n"
"  --uid N, --gid N    the unprivileged user (default 65534:65534)\n"
"  --many N            files in the many-entries folder (default 3000)\n"
"  --only G,G...       run only these groups\n"
"  --skip G,G...       skip these groups\n"
"  --keep              keep DIR/posix.PID\n"
"  --list              list the groups\n"
"  -h, --help          this help\n");
	exit(code);
}

int main(int argc, char **argv)
{
	enum { OPT_NOACL = 256, OPT_NOZR, OPT_NOSH, OPT_NOPERM, OPT_NOATIME, OPT_NOSMMAP, OPT_NODIO, OPT_UID, OPT_GID, OPT_MANY,
	       OPT_ONLY, OPT_SKIP, OPT_KEEP, OPT_LIST };
	static const struct option lo[] = {
		{ "no-acl", 0, NULL, OPT_NOACL }, { "no-zero-range", 0, NULL, OPT_NOZR },
		{ "no-seek-hole", 0, NULL, OPT_NOSH }, { "no-perm", 0, NULL, OPT_NOPERM },
		{ "no-atime", 0, NULL, OPT_NOATIME }, { "no-shared-mmap", 0, NULL, OPT_NOSMMAP },
		{ "no-odirect", 0, NULL, OPT_NODIO }, { "uid", 1, NULL, OPT_UID }, { "gid", 1, NULL, OPT_GID },
		{ "many", 1, NULL, OPT_MANY }, { "only", 1, NULL, OPT_ONLY }, { "skip", 1, NULL, OPT_SKIP },
		{ "keep", 0, NULL, OPT_KEEP }, { "list", 0, NULL, OPT_LIST }, { "help", 0, NULL, 'h' }, { 0 }
	};
	char top[PATH_MAX];
	int c, topfd;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case OPT_NOACL: opt.acl = false; break;
		case OPT_NOZR: opt.zero_range = false; break;
		case OPT_NOSH: opt.seek_hole = false; break;
		case OPT_NOPERM: opt.perm = false; break;
		case OPT_NOATIME: opt.atime = false; break;
		case OPT_NOSMMAP: opt.shared_mmap = false; break;
		case OPT_NODIO: opt.odirect = false; break;
		case OPT_UID: opt.uid = atoi(optarg); break;
		case OPT_GID: opt.gid = atoi(optarg); break;
		case OPT_MANY: opt.many = atoi(optarg); break;
		case OPT_ONLY: opt.only = optarg; break;
		case OPT_SKIP: opt.skip = optarg; break;
		case OPT_KEEP: opt.keep = true; break;
		case OPT_LIST:
			for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
				puts(groups[i].name);
			return 0;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (optind + 1 != argc)
		usage(2);
	if (geteuid() != 0) {
		fprintf(stderr, "posix: run as root (chown, mknod and the permission checks need it)\n");
		return 2;
	}
	if (!opt.uid || !opt.many) {
		fprintf(stderr, "posix: --uid must not be 0, --many must be > 0\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	umask(022);
	snprintf(top, sizeof(top), "%s/posix.%d", argv[optind], (int)getpid());
	rm_rf(top);
	if (mkdir(top, 0755))
		die(top);
	if (chdir(top))
		die(top);
	topfd = open(".", O_RDONLY | O_DIRECTORY);
	if (topfd < 0)
		die(top);
	printf("# posix: %s\n", top);
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		const char *g = groups[i].name;

		if ((opt.only && !in_list(opt.only, g)) || in_list(opt.skip, g))
			continue;
		if (groups[i].need && !*groups[i].need) {
			printf("# %s: skipped (not a feature of this filesystem)\n", g);
			continue;
		}
		group = g;
		if (fchdir(topfd) || mkdir(g, 0755) || chdir(g)) {
			T(false, "cannot make the group's folder: %s", strerror(errno));
			continue;
		}
		groups[i].fn();
		umask(022);
	}
	if (fchdir(topfd) || chdir(".."))
		die("..");
	close(topfd);
	printf("# %u assertions: %u passed, %u failed\n", n_total, n_total - n_fail, n_fail);
	if (!n_fail && !opt.keep)
		rm_rf(top);
	return n_fail ? 1 : 0;
}
