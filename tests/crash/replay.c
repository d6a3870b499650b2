// SPDX-License-Identifier: GPL-2.0
/*
 * replay: the crash states of a recorded workload (tests/crash/README.md).
 *
 * A workload run with BCH_WRITE_LOG=LOG appends every open, write and
 * flush of its devices to LOG (format: libbcachefs/dev.h). Given copies of
 * the devices taken before the workload (the bases), this tool rebuilds the
 * devices as a crash would have left them:
 *
 *   prefix state "C"     the first C records of the log happened, nothing
 *                        after: every write among them reached the disk
 *                        (a crash of the process, or of a disk that writes
 *                        in order)
 *   reordered "C@S"      a power cut after the first C records on a disk
 *                        that reorders: every write followed (before the
 *                        cut) by a flush of its device is on the disk; each
 *                        later one ("in flight") was kept whole, dropped or
 *                        torn (cut at a 512-byte boundary: only its first
 *                        sectors written), chosen from the seed S
 *   enumerated "C#K"     the same, the choice being combination K of all
 *                        the outcomes of the in-flight writes (--exhaustive)
 *
 * Prefix cuts are taken after each WRITE record (C = its index + 1), plus
 * C = 0 (nothing written) and the end of the log (every flush and mark
 * too). Reordered states are drawn half at the ends of epochs (C = the
 * index of a FLUSH record: everything before it happened but the flush
 * did not complete; or the end of the log), half at any cut after a write
 * with two writes or more in flight. A MARK record (dev_log_mark(), or
 * `replay mark`) at index m is reached by the states with C > m: the
 * checker of a state knows which of the workload's fsyncs had returned.
 *
 *   replay dump LOG                      one line per record
 *   replay info LOG                      devices (slots), counts, when the
 *                                        first and last writes were logged
 *   replay mark LOG LABEL                append a MARK record
 *   replay states [SEL] LOG              the selected states, one a line:
 *                                        ID CUT WRITES KIND DESCRIPTION
 *   replay apply LOG ID -b BASES -o OUTS  write the images of state ID
 *   replay run [SEL] LOG -b BASES -w DIR [-c] -- CMD [ARG]...
 *                                        for each selected state: build
 *                                        it in DIR and run CMD; print
 *                                        "ok ID" or "FAIL ID (exit N)";
 *                                        exit 1 when a state failed
 *   replay recover DEV[:DEV]...          what a mount and an unmount do
 *                                        with nothing written in between:
 *                                        read-write open, engine start,
 *                                        superblocks marked not clean, a
 *                                        checkpoint (the journal replayed
 *                                        into the btrees), superblocks
 *                                        marked clean (exit 0 ok, 1 the
 *                                        engine failed, 8 cannot open)
 *
 * BASES, OUTS: image paths separated by ':', one per device slot, in the
 * order of the slots (`replay info`: the order the devices were first
 * opened for writing in the log).
 *
 * SEL: --prefix N|all  N prefix states spread evenly over the cuts (the
 *                      first and the last always among them; default all)
 *      --reorder N     N reordered states drawn (default 0); a state that
 *                      would give the same images and marks as one before
 *                      it (a repeated draw, or the same as a prefix) is
 *                      left out
 *      --seed S        seed of the reordered states (default 1)
 *      --exhaustive N  every outcome (each in-flight write dropped, torn at
 *                      each 512-byte boundary, or whole) at the end of each
 *                      epoch that has at most N outcomes: states "C#K", K
 *                      the combination number (default 0: none)
 *      --state ID      only this state (repeatable)
 *
 * run: CMD runs with CRASH_STATE (ID), CRASH_CUT, CRASH_WRITES (writes
 * applied), CRASH_IMAGES (the state's images, space-separated), CRASH_DEVS
 * (the same, ':'-separated), CRASH_MARKS (file: the labels of the reached
 * marks, one per line), CRASH_LAST_MARK (the last of them, or empty),
 * CRASH_DESC (what the state is, for messages) in its environment. The images are built in place and undone after CMD,
 * so CMD must not write them; with -c CMD gets fresh copies (reflinks
 * where the filesystem has them) it may change. Cost per state: the
 * in-flight writes (apply and undo), plus the copy with -c.
 *
 * Every byte of LOG is checked (header and payload checksums, sizes,
 * device numbers). A last record cut short (a writer killed while
 * appending) is ignored with a warning; any other damage is an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "btree/btree_update.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "fs/fs.h"
#include "util/util.h"

#define SECTOR		512U
#define TORN_PCT	25	/* a kept in-flight write is torn 1 time in 4 */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "replay: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

/* ---- the log ---- */

struct rec {
	struct dev_log_hdr	h;
	const uint8_t		*payload;
	uint64_t		pos;		/* byte offset of the header in the log */
	unsigned		slot;		/* device slot (OPEN, WRITE, FLUSH, CLOSE) */
};

struct slot {
	char		*path;		/* as recorded (realpath of the writer) */
	uint64_t	size;		/* at the first open */
};

/* (pid, dev) of a process -> slot */
struct pdev {
	uint32_t	pid, dev;
	unsigned	slot;
};

struct wlog {
	const char	*path;
	const uint8_t	*map;
	size_t		map_len;
	struct rec	*r;
	size_t		nr;
	struct slot	*slots;
	unsigned	nr_slots;
	struct pdev	*pdevs;
	size_t		nr_pdevs;
	size_t		nr_writes, nr_flushes, nr_marks;
	bool		tail_cut;
};

static unsigned slot_of(struct wlog *l, uint32_t pid, uint32_t dev, bool *found)
{
	/* the latest OPEN of (pid, dev) wins: pids may be reused */
	for (size_t i = l->nr_pdevs; i--; )
		if (l->pdevs[i].pid == pid && l->pdevs[i].dev == dev) {
			*found = true;
			return l->pdevs[i].slot;
		}
	*found = false;
	return 0;
}

static void log_load(struct wlog *l, const char *path)
{
	struct stat st;
	size_t size_r = 0, size_p = 0;
	uint64_t pos = 0;
	int fd;

	memset(l, 0, sizeof(*l));
	l->path = path;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		die("cannot open the log %s: %s", path, strerror(errno));
	l->map_len = st.st_size;
	if (l->map_len) {
		l->map = mmap(NULL, l->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (l->map == MAP_FAILED)
			die("cannot map the log %s: %s", path, strerror(errno));
	}
	close(fd);

	while (pos < l->map_len) {
		struct rec r = { .pos = pos };
		char why[80];
		bool found;

		if (l->map_len - pos < DEV_LOG_HDR_BYTES) {
			l->tail_cut = true;
			break;
		}
		if (dev_log_hdr_decode(l->map + pos, &r.h, why))
			die("%s: record %zu at byte %" PRIu64 ": %s (the log is damaged)",
			    path, l->nr, pos, why);
		if (r.h.len > l->map_len - pos - DEV_LOG_HDR_BYTES) {
			l->tail_cut = true;
			break;
		}
		r.payload = l->map + pos + DEV_LOG_HDR_BYTES;
		if (dev_log_csum(r.payload, r.h.len) != r.h.data_csum)
			die("%s: record %zu at byte %" PRIu64 ": bad payload checksum (the log is damaged)",
			    path, l->nr, pos);

		switch (r.h.type) {
		case DEV_LOG_OPEN: {
			char *p = strndup((const char *)r.payload, r.h.len);
			unsigned s;

			if (!p || strlen(p) != r.h.len || !r.h.len)
				die("%s: record %zu at byte %" PRIu64 ": bad device path", path, l->nr, pos);
			for (s = 0; s < l->nr_slots; s++)
				if (!strcmp(l->slots[s].path, p))
					break;
			if (s == l->nr_slots) {
				l->slots = xrealloc(l->slots, (l->nr_slots + 1) * sizeof(*l->slots));
				l->slots[s] = (struct slot) { p, r.h.offset };
				l->nr_slots++;
			} else {
				free(p);
			}
			if (l->nr_pdevs == size_p) {
				size_p = size_p ? size_p * 2 : 16;
				l->pdevs = xrealloc(l->pdevs, size_p * sizeof(*l->pdevs));
			}
			l->pdevs[l->nr_pdevs++] = (struct pdev) { r.h.pid, r.h.dev, s };
			r.slot = s;
			break;
		}
		case DEV_LOG_WRITE:
		case DEV_LOG_FLUSH:
		case DEV_LOG_CLOSE:
			r.slot = slot_of(l, r.h.pid, r.h.dev, &found);
			if (!found)
				die("%s: record %zu at byte %" PRIu64 ": device %u of process %u was never opened",
				    path, l->nr, pos, r.h.dev, r.h.pid);
			if (r.h.type == DEV_LOG_WRITE) {
				if (!r.h.len || r.h.offset > UINT64_MAX - r.h.len ||
				    r.h.offset + r.h.len > (1ULL << 62))
					die("%s: record %zu at byte %" PRIu64 ": bad write (%" PRIu64 " bytes at %" PRIu64 ")",
					    path, l->nr, pos, r.h.len, r.h.offset);
				l->nr_writes++;
			} else if (r.h.type == DEV_LOG_FLUSH) {
				l->nr_flushes++;
			}
			break;
		case DEV_LOG_MARK:
			l->nr_marks++;
			break;
		}
		if (l->nr == size_r) {
			size_r = size_r ? size_r * 2 : 256;
			l->r = xrealloc(l->r, size_r * sizeof(*l->r));
		}
		l->r[l->nr++] = r;
		pos += DEV_LOG_HDR_BYTES + r.h.len;
	}
	if (l->tail_cut)
		fprintf(stderr, "replay: warning: %s ends in a record cut short at byte %" PRIu64
			" (a writer was killed while appending): ignored\n", path, pos);
}

static void log_free(struct wlog *l)
{
	for (unsigned i = 0; i < l->nr_slots; i++)
		free(l->slots[i].path);
	free(l->slots);
	free(l->pdevs);
	free(l->r);
	if (l->map_len)
		munmap((void *)l->map, l->map_len);
}

static void free_paths(char **p, unsigned nr)
{
	for (unsigned i = 0; i < nr; i++)
		free(p[i]);
	free(p);
}

static const char *type_name(unsigned t)
{
	static const char * const n[] = { "?", "open", "write", "flush", "mark", "close" };

	return t < ARRAY_SIZE(n) ? n[t] : "?";
}

/* ---- states ---- */

struct state {
	size_t		cut;		/* records [0, cut) happened */
	bool		reorder;	/* the in-flight writes chosen: */
	bool		exhaustive;	/* by the combination number @seed, else from the seed */
	uint64_t	seed;
};

static void state_id(const struct state *s, char *buf, size_t n)
{
	if (s->exhaustive)
		snprintf(buf, n, "%zu#%" PRIu64, s->cut, s->seed);
	else if (s->reorder)
		snprintf(buf, n, "%zu@%" PRIu64, s->cut, s->seed);
	else
		snprintf(buf, n, "%zu", s->cut);
}

static bool state_parse(const struct wlog *l, const char *id, struct state *s)
{
	char *end;

	memset(s, 0, sizeof(*s));
	errno = 0;
	s->cut = strtoull(id, &end, 10);
	if (errno || end == id)
		return false;
	if (*end == '@' || *end == '#') {
		const char *p = end + 1;

		s->reorder = true;
		s->exhaustive = *end == '#';
		s->seed = strtoull(p, &end, 10);
		if (errno || end == p)
			return false;
	}
	return !*end && s->cut <= l->nr;
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * What happens to each write record below s->cut: how many of its bytes
 * reach the disk (0: dropped, r.h.len: whole, else torn). The last flush
 * of each slot before the cut decides which writes are durable.
 */
struct plan {
	uint64_t	*keep;		/* per record; only WRITE entries are meaningful */
	size_t		nr_applied, nr_inflight, nr_dropped, nr_torn;
};

static uint64_t torn_len(const struct rec *r, uint64_t pick)
{
	/* the 512-byte boundaries strictly inside the write */
	uint64_t first = (r->h.offset / SECTOR + 1) * SECTOR;
	uint64_t end = r->h.offset + r->h.len, nb;

	if (first >= end)
		return r->h.len;	/* no boundary inside: cannot tear */
	nb = (end - 1 - first) / SECTOR + 1;
	return first + (pick % nb) * SECTOR - r->h.offset;
}

/*
 * The outcomes of an in-flight write in a combination: 0 dropped, 1..nb
 * torn at its nb inner 512-byte boundaries, nb + 1 whole.
 */
static uint64_t write_radix(const struct rec *r)
{
	uint64_t first = (r->h.offset / SECTOR + 1) * SECTOR;
	uint64_t end = r->h.offset + r->h.len;

	return (first >= end ? 0 : (end - 1 - first) / SECTOR + 1) + 2;
}

static uint64_t write_outcome(const struct rec *r, uint64_t d)
{
	uint64_t first = (r->h.offset / SECTOR + 1) * SECTOR;

	if (!d)
		return 0;
	if (d == write_radix(r) - 1)
		return r->h.len;
	return first + (d - 1) * SECTOR - r->h.offset;
}

static void plan_make(const struct wlog *l, const struct state *s, struct plan *p)
{
	size_t *last_flush = xcalloc(l->nr_slots ? l->nr_slots : 1, sizeof(*last_flush));
	size_t nr_inflight = 0, *inflight;
	uint64_t rng = s->seed;

	memset(p, 0, sizeof(*p));
	p->keep = xcalloc(s->cut ? s->cut : 1, sizeof(*p->keep));
	/* last_flush[slot] = 1 + index of the slot's last flush before the cut */
	for (size_t i = 0; i < s->cut; i++)
		if (l->r[i].h.type == DEV_LOG_FLUSH)
			last_flush[l->r[i].slot] = i + 1;

	inflight = xcalloc(s->cut ? s->cut : 1, sizeof(*inflight));
	for (size_t i = 0; i < s->cut; i++) {
		const struct rec *r = &l->r[i];

		if (r->h.type != DEV_LOG_WRITE)
			continue;
		p->keep[i] = r->h.len;
		if (s->reorder && i + 1 > last_flush[r->slot])
			inflight[nr_inflight++] = i;
	}
	p->nr_inflight = nr_inflight;

	if (s->exhaustive) {
		uint64_t k = s->seed;

		for (size_t j = 0; j < nr_inflight; j++) {
			const struct rec *r = &l->r[inflight[j]];
			uint64_t rad = write_radix(r);

			p->keep[inflight[j]] = write_outcome(r, k % rad);
			k /= rad;
		}
	} else if (s->reorder && nr_inflight) {
		bool changed = false;

		for (size_t k = 0; k < nr_inflight; k++) {
			const struct rec *r = &l->r[inflight[k]];
			uint64_t v = splitmix64(&rng);

			if (v & 1) {
				p->keep[inflight[k]] = 0;
				changed = true;
			} else if ((v >> 1) % 100 < TORN_PCT) {
				p->keep[inflight[k]] = torn_len(r, splitmix64(&rng));
				changed |= p->keep[inflight[k]] != r->h.len;
			}
		}
		if (!changed) {
			/* the same as the prefix state: drop one write at least */
			size_t k = splitmix64(&rng) % nr_inflight;

			p->keep[inflight[k]] = 0;
		}
	}
	for (size_t i = 0; i < s->cut; i++) {
		const struct rec *r = &l->r[i];

		if (r->h.type != DEV_LOG_WRITE)
			continue;
		if (!p->keep[i])
			p->nr_dropped++;
		else {
			p->nr_applied++;
			if (p->keep[i] != r->h.len)
				p->nr_torn++;
		}
	}
	free(inflight);
	free(last_flush);
}

static void plan_exit(struct plan *p)
{
	free(p->keep);
}

static size_t writes_before(const struct wlog *l, size_t cut)
{
	size_t n = 0;

	for (size_t i = 0; i < cut; i++)
		n += l->r[i].h.type == DEV_LOG_WRITE;
	return n;
}

/* The selected states, sorted by cut (prefix states first at equal cuts). */
struct sel {
	long		nr_prefix;	/* -1: all */
	long		nr_reorder;
	long		max_exhaustive;	/* enumerate epochs with at most this many outcomes */
	uint64_t	seed;
	char		**ids;
	size_t		nr_ids;
};

static int state_cmp(const void *a, const void *b)
{
	const struct state *x = a, *y = b;

	if (x->cut != y->cut)
		return x->cut < y->cut ? -1 : 1;
	if (x->reorder != y->reorder)
		return x->reorder ? 1 : -1;
	return x->seed < y->seed ? -1 : x->seed > y->seed;
}

/*
 * What a state looks like to a checker: the writes applied (record, bytes
 * kept) and the marks reached. Two states with the same are the same.
 */
static uint64_t state_hash(const struct wlog *l, const struct state *s)
{
	struct plan p;
	uint64_t h = 0xcbf29ce484222325ULL;

	plan_make(l, s, &p);
	for (size_t i = 0; i < s->cut; i++) {
		uint64_t v;

		if (l->r[i].h.type == DEV_LOG_WRITE && p.keep[i])
			v = i * 0x9e3779b97f4a7c15ULL ^ p.keep[i];
		else if (l->r[i].h.type == DEV_LOG_MARK)
			v = ~(uint64_t)i;
		else
			continue;
		h = (h ^ v) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	plan_exit(&p);
	return h;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Drop the states that are the same as an earlier one (sampling repeats). */
static size_t dedup_states(const struct wlog *l, struct state *s, size_t n)
{
	uint64_t *seen = xcalloc(n ? n : 1, sizeof(*seen));
	size_t nr_seen = 0, out = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t h = state_hash(l, &s[i]);

		if (nr_seen && bsearch(&h, seen, nr_seen, sizeof(h), u64_cmp))
			continue;
		seen[nr_seen++] = h;
		qsort(seen, nr_seen, sizeof(h), u64_cmp);
		s[out++] = s[i];
	}
	free(seen);
	return out;
}

static struct state *select_states(const struct wlog *l, const struct sel *sel, size_t *nr)
{
	size_t *cuts = xcalloc(l->nr + 2, sizeof(*cuts)), nr_cuts = 0;
	size_t *rcuts = xcalloc(l->nr + 1, sizeof(*rcuts)), nr_rcuts = 0;
	struct state *s;
	size_t n = 0, max;
	uint64_t rng = sel->seed;

#define PUSH(...) do {							\
		if (n == max)						\
			s = xrealloc(s, (max *= 2) * sizeof(*s));	\
		s[n++] = (struct state) { __VA_ARGS__ };		\
	} while (0)

	/* the cuts: 0, after each write, the end */
	cuts[nr_cuts++] = 0;
	for (size_t i = 0; i < l->nr; i++)
		if (l->r[i].h.type == DEV_LOG_WRITE)
			cuts[nr_cuts++] = i + 1;
	if (cuts[nr_cuts - 1] != l->nr)
		cuts[nr_cuts++] = l->nr;

	max = sel->nr_ids + nr_cuts + (sel->nr_reorder > 0 ? sel->nr_reorder : 0) + 16;
	s = xcalloc(max, sizeof(*s));

	if (sel->nr_ids) {
		for (size_t i = 0; i < sel->nr_ids; i++)
			if (!state_parse(l, sel->ids[i], &s[n++]))
				die("bad state '%s' (CUT, CUT@SEED or CUT#N, CUT at most %zu)",
				    sel->ids[i], l->nr);
		goto out;
	}

	if (sel->nr_prefix < 0 || (size_t)sel->nr_prefix >= nr_cuts) {
		for (size_t i = 0; i < nr_cuts; i++)
			PUSH(.cut = cuts[i]);
	} else if (sel->nr_prefix == 1) {
		PUSH(.cut = cuts[nr_cuts - 1]);
	} else if (sel->nr_prefix > 1) {
		size_t k = sel->nr_prefix, prev = SIZE_MAX;

		for (size_t i = 0; i < k; i++) {
			size_t j = i * (nr_cuts - 1) / (k - 1);

			if (j != prev)
				PUSH(.cut = cuts[j]);
			prev = j;
		}
	}

	/*
	 * reordered: half at the ends of epochs (a crash just before a flush
	 * completed, or at the end of the log: every write since the last
	 * flush in flight, CrashMonkey's persistence points), half at any cut
	 * with 2+ writes in flight (else any write cut)
	 */
	if (sel->nr_reorder > 0) {
		size_t *inflight = xcalloc(l->nr_slots ? l->nr_slots : 1, sizeof(*inflight));
		size_t *ecuts = xcalloc(l->nr + 1, sizeof(*ecuts)), nr_ecuts = 0, total = 0;

		for (size_t i = 0; i < l->nr; i++) {
			const struct rec *r = &l->r[i];

			if (r->h.type == DEV_LOG_FLUSH) {
				if (inflight[r->slot])
					ecuts[nr_ecuts++] = i;
				total -= inflight[r->slot];
				inflight[r->slot] = 0;
			}
			if (r->h.type != DEV_LOG_WRITE)
				continue;
			inflight[r->slot]++;
			total++;
			if (total >= 2)
				rcuts[nr_rcuts++] = i + 1;
		}
		if (total)
			ecuts[nr_ecuts++] = l->nr;
		if (!nr_rcuts)
			for (size_t i = 0; i < l->nr; i++)
				if (l->r[i].h.type == DEV_LOG_WRITE)
					rcuts[nr_rcuts++] = i + 1;
		for (long i = 0; (nr_rcuts || nr_ecuts) && i < sel->nr_reorder; i++) {
			bool epoch = nr_ecuts && (!(i & 1) || !nr_rcuts);
			size_t c = epoch ? ecuts[splitmix64(&rng) % nr_ecuts]
					 : rcuts[splitmix64(&rng) % nr_rcuts];

			PUSH(.cut = c, .reorder = true, .seed = splitmix64(&rng) % 1000000000ULL);
		}
		free(ecuts);
		free(inflight);
	}
	/* every outcome of the epochs that have few (CrashMonkey's small epochs) */
	if (sel->max_exhaustive > 0) {
		size_t *last_flush = xcalloc(l->nr_slots ? l->nr_slots : 1, sizeof(*last_flush));

		for (size_t i = 0; i <= l->nr; i++) {
			uint64_t combos = 1, all_whole = 0, mul = 1;
			bool any = false;

			/* epoch ends: a flush, or the end of the log */
			if (i < l->nr && l->r[i].h.type != DEV_LOG_FLUSH)
				continue;
			for (size_t j = 0; j < i; j++) {
				const struct rec *r = &l->r[j];
				uint64_t rad;

				if (r->h.type != DEV_LOG_WRITE || j + 1 <= last_flush[r->slot])
					continue;
				rad = write_radix(r);
				any = true;
				if (combos > (uint64_t)sel->max_exhaustive / rad) {
					combos = UINT64_MAX;
					break;
				}
				all_whole += (rad - 1) * mul;
				mul *= rad;
				combos *= rad;
			}
			if (i < l->nr)
				last_flush[l->r[i].slot] = i + 1;
			if (!any || combos == UINT64_MAX)
				continue;
			for (uint64_t k = 0; k < combos; k++)
				if (k != all_whole)
					PUSH(.cut = i, .reorder = true, .exhaustive = true, .seed = k);
		}
		free(last_flush);
	}
#undef PUSH
	qsort(s, n, sizeof(*s), state_cmp);
	n = dedup_states(l, s, n);
	goto done;
out:
	qsort(s, n, sizeof(*s), state_cmp);
done:
	free(cuts);
	free(rcuts);
	*nr = n;
	return s;
}

/* ---- images ---- */

static void split_paths(const char *arg, char ***out, unsigned *nr)
{
	char *copy = xstrdup(arg), *save = NULL, *t;

	*out = NULL;
	*nr = 0;
	for (t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
		*out = xrealloc(*out, (*nr + 1) * sizeof(**out));
		(*out)[(*nr)++] = xstrdup(t);
	}
	free(copy);
}

static void write_all(int fd, const void *buf, size_t len, uint64_t off, const char *what)
{
	const char *p = buf;

	while (len) {
		ssize_t r = pwrite(fd, p, len, off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("writing %s at byte %" PRIu64 ": %s", what, off, r < 0 ? strerror(errno) : "short write");
		p += r;
		len -= r;
		off += r;
	}
}

static size_t read_upto(int fd, void *buf, size_t len, uint64_t off, const char *what)
{
	char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, p + done, len - done, off + done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("reading %s at byte %" PRIu64 ": %s", what, off + done, strerror(errno));
		if (!r)
			break;
		done += r;
	}
	return done;
}

/* Copy @src to @dst: a reflink where possible, else a sparse copy. */
static void copy_image(const char *src, const char *dst)
{
	static char buf[1 << 20];
	int in = open(src, O_RDONLY | O_CLOEXEC), out;
	struct stat st;
	off_t pos = 0;

	if (in < 0 || fstat(in, &st))
		die("cannot open %s: %s", src, strerror(errno));
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		die("cannot create %s: %s", dst, strerror(errno));
	if (ioctl(out, FICLONE, in) == 0)
		goto done;
	if (ftruncate(out, st.st_size))
		die("cannot size %s: %s", dst, strerror(errno));
	while (pos < st.st_size) {
		off_t data = lseek(in, pos, SEEK_DATA), hole;

		if (data < 0)
			break;		/* ENXIO: only a hole is left */
		hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0)
			hole = st.st_size;
		for (pos = data; pos < hole; ) {
			size_t n = hole - pos < (off_t)sizeof(buf) ? (size_t)(hole - pos) : sizeof(buf);
			size_t got = read_upto(in, buf, n, pos, src);
			size_t z = 0;

			if (!got)
				die("%s: short read at byte %jd", src, (intmax_t)pos);
			/* leave zero blocks holes (sparse images stay sparse) */
			while (z < got && !buf[z])
				z++;
			if (z < got)
				write_all(out, buf, got, pos, dst);
			pos += got;
		}
	}
done:
	close(in);
	close(out);
}

/* The write payload as applied: @keep bytes of record @r into @fd. */
static void apply_write(int fd, const struct rec *r, uint64_t keep, const char *what)
{
	write_all(fd, r->payload, keep, r->h.offset, what);
}

static int *open_images(char **paths, unsigned nr)
{
	int *fds = xcalloc(nr, sizeof(*fds));

	for (unsigned i = 0; i < nr; i++) {
		fds[i] = open(paths[i], O_RDWR | O_CLOEXEC);
		if (fds[i] < 0)
			die("cannot open %s: %s", paths[i], strerror(errno));
	}
	return fds;
}

static void check_bases(const struct wlog *l, char **bases, unsigned nr)
{
	if (nr != l->nr_slots)
		die("the log has %u device%s, %u base image%s given (replay info %s)",
		    l->nr_slots, l->nr_slots == 1 ? "" : "s", nr, nr == 1 ? "" : "s", l->path);
	for (unsigned i = 0; i < nr; i++) {
		struct stat st;

		if (stat(bases[i], &st))
			die("cannot stat the base %s: %s", bases[i], strerror(errno));
		if (S_ISREG(st.st_mode) && (uint64_t)st.st_size != l->slots[i].size)
			die("the base %s has %jd bytes, but device %u (%s) had %" PRIu64
			    " when the workload opened it: not its copy?",
			    bases[i], (intmax_t)st.st_size, i, l->slots[i].path, l->slots[i].size);
	}
}

/* ---- commands ---- */

static int cmd_dump(int argc, char **argv)
{
	struct wlog l;

	if (argc != 2)
		die("usage: replay dump LOG");
	log_load(&l, argv[1]);
	for (size_t i = 0; i < l.nr; i++) {
		const struct rec *r = &l.r[i];

		printf("%zu %s pid %u", i, type_name(r->h.type), r->h.pid);
		switch (r->h.type) {
		case DEV_LOG_OPEN:
			printf(" dev %u slot %u size %" PRIu64 " %.*s", r->h.dev, r->slot,
			       r->h.offset, (int)r->h.len, (const char *)r->payload);
			break;
		case DEV_LOG_WRITE:
			printf(" slot %u offset %" PRIu64 " len %" PRIu64, r->slot, r->h.offset, r->h.len);
			break;
		case DEV_LOG_FLUSH:
		case DEV_LOG_CLOSE:
			printf(" slot %u", r->slot);
			break;
		case DEV_LOG_MARK:
			printf(" %.*s", (int)r->h.len, (const char *)r->payload);
			break;
		}
		printf("\n");
	}
	log_free(&l);
	return 0;
}

static int cmd_info(int argc, char **argv)
{
	struct wlog l;
	uint64_t bytes = 0;

	if (argc != 2)
		die("usage: replay info LOG");
	log_load(&l, argv[1]);
	uint64_t t_first = 0, t_last = 0;

	for (size_t i = 0; i < l.nr; i++)
		if (l.r[i].h.type == DEV_LOG_WRITE) {
			bytes += l.r[i].h.len;
			if (!t_first)
				t_first = l.r[i].h.time_ns;
			t_last = l.r[i].h.time_ns;
		}
	printf("records %zu writes %zu flushes %zu marks %zu bytes %" PRIu64 "%s\n",
	       l.nr, l.nr_writes, l.nr_flushes, l.nr_marks, bytes,
	       l.tail_cut ? " (last record cut short)" : "");
	for (unsigned s = 0; s < l.nr_slots; s++)
		printf("slot %u size %" PRIu64 " %s\n", s, l.slots[s].size, l.slots[s].path);
	if (l.nr_writes)
		printf("writes from %" PRIu64 " to %" PRIu64 " ns\n", t_first, t_last);
	log_free(&l);
	return 0;
}

static int cmd_mark(int argc, char **argv)
{
	int fd, ret;

	if (argc != 3)
		die("usage: replay mark LOG LABEL");
	fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		die("cannot open %s: %s", argv[1], strerror(errno));
	ret = dev_log_append(fd, DEV_LOG_MARK, (uint32_t)getpid(), DEV_LOG_NO_DEV, 0,
			     argv[2], strlen(argv[2]));
	if (ret)
		die("cannot append to %s: %s", argv[1], strerror(-ret));
	close(fd);
	return 0;
}

static const struct option sel_opts[] = {
	{ "prefix",	required_argument,	NULL, 'P' },
	{ "reorder",	required_argument,	NULL, 'R' },
	{ "seed",	required_argument,	NULL, 'S' },
	{ "exhaustive",	required_argument,	NULL, 'E' },
	{ "state",	required_argument,	NULL, 'I' },
	{ "base",	required_argument,	NULL, 'b' },
	{ "out",	required_argument,	NULL, 'o' },
	{ "work",	required_argument,	NULL, 'w' },
	{ "copy",	no_argument,		NULL, 'c' },
	{ NULL }
};

struct args {
	struct sel	sel;
	const char	*bases, *outs, *work;
	bool		copy;
};

static long num_arg(const char *s, const char *what)
{
	char *end;
	long v;

	if (!strcmp(s, "all"))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < 0)
		die("bad %s '%s'", what, s);
	return v;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	int opt;

	memset(a, 0, sizeof(*a));
	a->sel.nr_prefix = -1;
	a->sel.seed = 1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "b:o:w:c", sel_opts, NULL)) != -1)
		switch (opt) {
		case 'P': a->sel.nr_prefix = num_arg(optarg, "--prefix"); break;
		case 'R': a->sel.nr_reorder = num_arg(optarg, "--reorder"); break;
		case 'S': a->sel.seed = (uint64_t)num_arg(optarg, "--seed"); break;
		case 'E': a->sel.max_exhaustive = num_arg(optarg, "--exhaustive"); break;
		case 'I':
			a->sel.ids = xrealloc(a->sel.ids, (a->sel.nr_ids + 1) * sizeof(char *));
			a->sel.ids[a->sel.nr_ids++] = optarg;
			break;
		case 'b': a->bases = optarg; break;
		case 'o': a->outs = optarg; break;
		case 'w': a->work = optarg; break;
		case 'c': a->copy = true; break;
		default: exit(2);
		}
	return optind;
}

/* "prefix ..." or "reorder ...": what the state is */
static void describe(const struct wlog *l, const struct state *s, const struct plan *p,
		     char *buf, size_t n)
{
	size_t w = writes_before(l, s->cut);

	if (!s->reorder)
		snprintf(buf, n, "prefix %zu of %zu writes", w, l->nr_writes);
	else
		snprintf(buf, n, "reorder %zu writes, %zu in flight: %zu dropped, %zu torn",
			 w, p->nr_inflight, p->nr_dropped, p->nr_torn);
}

static int cmd_states(int argc, char **argv)
{
	struct args a;
	struct wlog l;
	struct state *s;
	size_t nr;
	int i = parse_args(argc, argv, &a);

	if (argc - i != 1)
		die("usage: replay states [--prefix N|all] [--reorder N] [--seed S] LOG");
	log_load(&l, argv[i]);
	s = select_states(&l, &a.sel, &nr);
	for (size_t k = 0; k < nr; k++) {
		char id[64], d[256];
		struct plan p;

		plan_make(&l, &s[k], &p);
		state_id(&s[k], id, sizeof(id));
		describe(&l, &s[k], &p, d, sizeof(d));
		printf("%s %zu %zu %s\n", id, s[k].cut, p.nr_applied, d);
		plan_exit(&p);
	}
	free(s);
	free(a.sel.ids);
	log_free(&l);
	return 0;
}

static int cmd_apply(int argc, char **argv)
{
	struct args a;
	struct wlog l;
	struct state s;
	struct plan p;
	char **bases, **outs;
	unsigned nb, no;
	int *fds, i = parse_args(argc, argv, &a);

	if (argc - i != 2 || !a.bases || !a.outs)
		die("usage: replay apply LOG STATE -b BASE[:BASE...] -o OUT[:OUT...]");
	log_load(&l, argv[i]);
	if (!state_parse(&l, argv[i + 1], &s))
		die("bad state '%s' (CUT or CUT@SEED, CUT at most %zu)", argv[i + 1], l.nr);
	split_paths(a.bases, &bases, &nb);
	split_paths(a.outs, &outs, &no);
	check_bases(&l, bases, nb);
	if (no != nb)
		die("%u base images but %u outputs", nb, no);
	for (unsigned k = 0; k < nb; k++)
		copy_image(bases[k], outs[k]);
	fds = open_images(outs, no);
	plan_make(&l, &s, &p);
	for (size_t k = 0; k < s.cut; k++)
		if (l.r[k].h.type == DEV_LOG_WRITE && p.keep[k])
			apply_write(fds[l.r[k].slot], &l.r[k], p.keep[k], outs[l.r[k].slot]);
	for (unsigned k = 0; k < no; k++)
		if (fsync(fds[k]) || close(fds[k]))
			die("writing %s: %s", outs[k], strerror(errno));
	plan_exit(&p);
	free(fds);
	free_paths(bases, nb);
	free_paths(outs, no);
	free(a.sel.ids);
	log_free(&l);
	return 0;
}

/* ---- run ---- */

struct undo {
	unsigned	slot;
	uint64_t	offset;
	uint64_t	len;		/* bytes saved */
	uint64_t	old_size;	/* of the file before the write */
	uint8_t		*old;
};

struct runner {
	struct wlog	*l;
	unsigned	nr;		/* slots */
	char		**prefix_paths, **durable_paths, **copy_paths;
	int		*prefix_fds, *durable_fds;
	size_t		prefix_cut;	/* records applied to the prefix images */
	size_t		*durable_upto;	/* per slot: writes below this index are in durable */
	char		*marks_path;
	char		**cmd;
	bool		copy;
};

static uint64_t file_size(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		die("fstat: %s", strerror(errno));
	return st.st_size;
}

static void save_and_apply(int fd, const struct rec *r, uint64_t keep, struct undo *u, const char *what)
{
	u->slot = r->slot;
	u->offset = r->h.offset;
	u->old_size = file_size(fd);
	u->old = xmalloc(keep);
	u->len = read_upto(fd, u->old, keep, r->h.offset, what);
	apply_write(fd, r, keep, what);
}

static void undo(int fd, struct undo *u, const char *what)
{
	if (u->len)
		write_all(fd, u->old, u->len, u->offset, what);
	if (file_size(fd) != u->old_size && ftruncate(fd, u->old_size))
		die("truncating %s: %s", what, strerror(errno));
	free(u->old);
}

static int run_one(struct runner *R, const struct state *s)
{
	struct wlog *l = R->l;
	struct plan p;
	struct undo *u;
	size_t nu = 0;
	char id[64], d[256], num[32];
	struct printbuf imgs = PRINTBUF, devs = PRINTBUF;
	char **paths;
	FILE *mf;
	pid_t pid;
	int status, ret;

	plan_make(l, s, &p);
	state_id(s, id, sizeof(id));
	describe(l, s, &p, d, sizeof(d));

	if (!s->reorder) {
		/* prefix images: forward only */
		if (s->cut < R->prefix_cut)
			die("internal: states not sorted");
		for (; R->prefix_cut < s->cut; R->prefix_cut++) {
			const struct rec *r = &l->r[R->prefix_cut];

			if (r->h.type == DEV_LOG_WRITE)
				apply_write(R->prefix_fds[r->slot], r, r->h.len, R->prefix_paths[r->slot]);
		}
		paths = R->prefix_paths;
		u = NULL;
	} else {
		/* durable images: forward to the durable writes, then the in-flight choice, undone after */
		size_t *last_flush = xcalloc(R->nr, sizeof(*last_flush));

		for (size_t i = 0; i < s->cut; i++)
			if (l->r[i].h.type == DEV_LOG_FLUSH)
				last_flush[l->r[i].slot] = i + 1;
		for (unsigned k = 0; k < R->nr; k++) {
			if (last_flush[k] < R->durable_upto[k])
				die("internal: states not sorted");
			for (size_t i = R->durable_upto[k]; i < last_flush[k]; i++)
				if (l->r[i].h.type == DEV_LOG_WRITE && l->r[i].slot == k)
					apply_write(R->durable_fds[k], &l->r[i], l->r[i].h.len, R->durable_paths[k]);
			R->durable_upto[k] = last_flush[k];
		}
		u = xcalloc(s->cut ? s->cut : 1, sizeof(*u));
		for (size_t i = 0; i < s->cut; i++) {
			const struct rec *r = &l->r[i];

			if (r->h.type != DEV_LOG_WRITE || i < last_flush[r->slot] || !p.keep[i])
				continue;
			save_and_apply(R->durable_fds[r->slot], r, p.keep[i], &u[nu++],
				       R->durable_paths[r->slot]);
		}
		paths = R->durable_paths;
		free(last_flush);
	}

	if (R->copy) {
		for (unsigned k = 0; k < R->nr; k++)
			copy_image(paths[k], R->copy_paths[k]);
		paths = R->copy_paths;
	}
	for (unsigned k = 0; k < R->nr; k++) {
		pr_buf(&imgs, "%s%s", k ? " " : "", paths[k]);
		pr_buf(&devs, "%s%s", k ? ":" : "", paths[k]);
	}
	mf = fopen(R->marks_path, "w");
	if (!mf)
		die("cannot write %s: %s", R->marks_path, strerror(errno));
	for (size_t i = 0; i < s->cut; i++)
		if (l->r[i].h.type == DEV_LOG_MARK)
			fprintf(mf, "%.*s\n", (int)l->r[i].h.len, (const char *)l->r[i].payload);
	if (fclose(mf))
		die("cannot write %s: %s", R->marks_path, strerror(errno));

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		char *lm = NULL;

		/* the last mark's label (payloads are not NUL-terminated) */
		for (size_t i = s->cut; i--; )
			if (l->r[i].h.type == DEV_LOG_MARK) {
				lm = strndup((const char *)l->r[i].payload, l->r[i].h.len);
				break;
			}
		setenv("CRASH_STATE", id, 1);
		snprintf(num, sizeof(num), "%zu", s->cut);
		setenv("CRASH_CUT", num, 1);
		snprintf(num, sizeof(num), "%zu", p.nr_applied);
		setenv("CRASH_WRITES", num, 1);
		setenv("CRASH_IMAGES", printbuf_str(&imgs), 1);
		setenv("CRASH_DEVS", printbuf_str(&devs), 1);
		setenv("CRASH_MARKS", R->marks_path, 1);
		setenv("CRASH_LAST_MARK", lm ? lm : "", 1);
		setenv("CRASH_DESC", d, 1);
		execvp(R->cmd[0], R->cmd);
		fprintf(stderr, "replay: cannot run %s: %s\n", R->cmd[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));

	while (nu--)
		undo(R->durable_fds[u[nu].slot], &u[nu], R->durable_paths[u[nu].slot]);
	free(u);

	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (ret)
		printf("FAIL %s (exit %d): %s\n", id, ret, d);
	else
		printf("ok   %s: %s\n", id, d);
	fflush(stdout);
	printbuf_exit(&imgs);
	printbuf_exit(&devs);
	plan_exit(&p);
	return ret;
}

static int cmd_run(int argc, char **argv)
{
	struct args a;
	struct wlog l;
	struct runner R = { .l = &l };
	struct state *s;
	char **bases;
	unsigned nb;
	size_t nr, nr_fail = 0, nr_prefix = 0;
	int i = parse_args(argc, argv, &a);

	if (argc - i < 2 || !a.bases || !a.work)
		die("usage: replay run [--prefix N|all] [--reorder N] [--seed S] [--state ID]... "
		    "LOG -b BASE[:BASE...] -w DIR [-c] -- CMD [ARG]...");
	log_load(&l, argv[i]);
	R.cmd = argv + i + 1;
	if (!strcmp(R.cmd[0], "--"))
		R.cmd++;
	if (!R.cmd[0])
		die("run: no command");
	split_paths(a.bases, &bases, &nb);
	check_bases(&l, bases, nb);
	R.nr = nb;
	R.copy = a.copy;
	R.prefix_paths = xcalloc(nb, sizeof(char *));
	R.durable_paths = xcalloc(nb, sizeof(char *));
	R.copy_paths = xcalloc(nb, sizeof(char *));
	R.durable_upto = xcalloc(nb, sizeof(size_t));
	for (unsigned k = 0; k < nb; k++) {
		struct printbuf b = PRINTBUF;

		pr_buf(&b, "%s/prefix-%u.img", a.work, k);
		R.prefix_paths[k] = xstrdup(printbuf_str(&b));
		printbuf_reset(&b);
		pr_buf(&b, "%s/durable-%u.img", a.work, k);
		R.durable_paths[k] = xstrdup(printbuf_str(&b));
		printbuf_reset(&b);
		pr_buf(&b, "%s/state-%u.img", a.work, k);
		R.copy_paths[k] = xstrdup(printbuf_str(&b));
		printbuf_exit(&b);
		copy_image(bases[k], R.prefix_paths[k]);
		copy_image(bases[k], R.durable_paths[k]);
	}
	{
		struct printbuf b = PRINTBUF;

		pr_buf(&b, "%s/marks", a.work);
		R.marks_path = xstrdup(printbuf_str(&b));
		printbuf_exit(&b);
	}
	R.prefix_fds = open_images(R.prefix_paths, nb);
	R.durable_fds = open_images(R.durable_paths, nb);

	s = select_states(&l, &a.sel, &nr);
	for (size_t k = 0; k < nr; k++) {
		nr_prefix += !s[k].reorder;
		if (run_one(&R, &s[k]))
			nr_fail++;
	}
	printf("%zu states (%zu prefix, %zu reordered) of %zu writes, %zu flushes, %zu marks: %zu failed\n",
	       nr, nr_prefix, nr - nr_prefix, l.nr_writes, l.nr_flushes, l.nr_marks, nr_fail);
	free(s);
	for (unsigned k = 0; k < nb; k++) {
		close(R.prefix_fds[k]);
		close(R.durable_fds[k]);
	}
	free(R.prefix_fds);
	free(R.durable_fds);
	free_paths(R.prefix_paths, nb);
	free_paths(R.durable_paths, nb);
	free_paths(R.copy_paths, nb);
	free(R.durable_upto);
	free(R.marks_path);
	free_paths(bases, nb);
	free(a.sel.ids);
	log_free(&l);
	return nr_fail ? 1 : 0;
}

static int cmd_recover(int argc, char **argv)
{
	struct bch_fs_opts opts = { .read_only = false };
	struct printbuf err = PRINTBUF;
	struct bch_fs *c = NULL;
	char **devs;
	unsigned nr;
	int ret;

	if (argc != 2)
		die("usage: replay recover DEV[:DEV...]");
	split_paths(argv[1], &devs, &nr);
	ret = bch_fs_open(devs, nr, &opts, &c, &err);
	if (ret) {
		fprintf(stderr, "replay recover: cannot open %s: %s\n%s", argv[1], bch_err_str(ret),
			printbuf_str(&err));
		printbuf_exit(&err);
		free_paths(devs, nr);
		return 8;
	}
	if (c->nr_errors)
		fprintf(stderr, "replay recover: %s: %u error%s while opening:\n%s", argv[1],
			(unsigned)c->nr_errors, c->nr_errors == 1 ? "" : "s", printbuf_str(&err));
	printbuf_reset(&err);
	ret = bch_fs_rw_start(c, &err);
	if (!ret) {
		/*
		 * As a mount and unmount: the superblocks written (not clean,
		 * then clean: every copy, also one a crash tore) around a
		 * checkpoint that puts the replayed journal into the btrees.
		 */
		bch_fs_rw_want_checkpoint(c);
		ret = bch_fs_rw_stop(c, &err);
	}
	if (ret)
		fprintf(stderr, "replay recover: %s: the engine failed: %s\n%s", argv[1],
			bch_err_str(ret), printbuf_str(&err));
	bch_fs_close(c);
	printbuf_exit(&err);
	free_paths(devs, nr);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; int (*fn)(int, char **); } cmds[] = {
		{ "dump", cmd_dump }, { "info", cmd_info }, { "mark", cmd_mark },
		{ "states", cmd_states }, { "apply", cmd_apply }, { "run", cmd_run },
		{ "recover", cmd_recover },
	};

	if (argc >= 2)
		for (unsigned i = 0; i < ARRAY_SIZE(cmds); i++)
			if (!strcmp(argv[1], cmds[i].name))
				return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "usage: replay dump|info|mark|states|apply|run|recover ... (see tests/crash/replay.c)\n");
	return 2;
}
