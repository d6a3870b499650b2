// SPDX-License-Identifier: GPL-2.0
/*
 * fsck's quick check: proves, with one read of each btree in key order,
 * that the passes of fsck.c (nodes, keys), fsck_gc.c (mark and sweep) and
 * fsck_fs.c (inodes, extents, dirents, xattrs, directory structure, link
 * counts) would find nothing. It reports nothing and changes nothing: the
 * first doubt ends it, and the passes then run as before and say what they
 * find, so a filesystem with a problem gets exactly the messages, repairs
 * and exit code it always got. A clean filesystem costs one read of each
 * node instead of one per pass, and the memory of its counters instead of
 * a table of every inode and a cache of every node.
 *
 * What is checked, and against which pass:
 *   - nodes: every node of every btree is read (the cache keeps only the
 *     path from the root to the leaves being read); any message of the
 *     reader, any read error, an interior node whose last key does not end
 *     at its own max key, a root whose key is not POS_MAX (key ranges in
 *     no node) give up;
 *   - keys: the leaf keys with the journal laid over them, as the
 *     iterators return them: strictly increasing, each valid in this
 *     filesystem (bch_bkey_validate_fs(), as the key pass);
 *   - allocation: the pointers of every btree pointer and extent go
 *     through fsck_gc.c's own checks (bch_fsck_gc_key()), with a private
 *     fsck_state that counts and says nothing: one count gives up;
 *   - filesystem: the inodes btree is read once, with the extents and
 *     xattrs of each inode read beside it (a merge by inode number):
 *     extents of a missing or non-file inode, past i_size, i_sectors, the
 *     hash positions and duplicates of xattrs, I_SIZE_DIRTY and
 *     I_SECTORS_DIRTY; then the dirents btree: its directory, hash
 *     positions, duplicates, names, targets, d_type, and the link counts:
 *     each inode's expected number of dirents (stored nlink + 1, one for a
 *     directory, none for the root) is counted down, each directory's
 *     subdirectories likewise, and every directory must lead up to the
 *     root; lost+found must be a directory in the root.
 *
 * Memory: half a byte per inode (its kind and the dirents still expected;
 * other types and more than two dirents in a side table), one record per
 * directory, the bucket bytes of mark and sweep, and the nodes on the
 * paths being read.
 */
#include "fsck/fsck_quick.h"

#include "bkey/bkey_types.h"
#include "bkey/dirent.h"
#include "bkey/inode.h"
#include "bkey/xattr.h"
#include "btree/btree.h"
#include "btree/node.h"
#include "core/bch_fs.h"
#include "format/format.h"
#include "fsck/fsck_gc.h"
#include "fsck/problems.h"
#include "util/util.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Nodes the cache keeps during the quick check beyond those it holds (the
 * paths of the btrees read side by side): each node is read once.
 */
#define QUICK_CACHE_NODES	1

/*
 * One nibble per inode: its kind (regular file, directory, symlink, or
 * another: its type is then in the side table) and the dirents still
 * expected (0-2; 3: the count is in the side table).
 */
#define CELL_CHUNK_BITS		17	/* inodes per chunk (half as many bytes) */
#define CELL_CHUNK		(1UL << CELL_CHUNK_BITS)
#define CELL_KIND_REG		0
#define CELL_KIND_DIR		1
#define CELL_KIND_LNK		2
#define CELL_KIND_OTHER		3	/* type in the side table */
#define CELL_LEFT_MAX		2
#define CELL_LEFT_BIG		3	/* count in the side table */

/* Inode numbers in use, in runs, each with the rank of its first inode. */
struct qrange {
	uint64_t	start;
	uint64_t	len;
	uint64_t	rank;
};

/* An inode whose type or count does not fit its nibble. */
struct qbig {
	uint64_t	inum_1;		/* inode number + 1; 0: free slot */
	uint64_t	left;		/* dirents still expected */
	uint8_t		dt;		/* its type (mode >> 12) */
};

struct qdir {
	uint64_t	inum;
	uint64_t	parent;		/* the directory of its dirent (0: none seen) */
	uint64_t	hash_seed;
	uint32_t	flags;
	uint32_t	subdirs_left;	/* bi_nlink: subdirectory dirents still expected */
	uint8_t		state;		/* walk up to the root: 1 on the way, 2 reached */
};

struct qslot {
	uint64_t	hash;
	uint32_t	gen;
	uint32_t	name_off;
	uint32_t	name_len;
	uint8_t		type;
};

/* The probe run being read (doc/format.md §5.6.3): consecutive offsets of one inode. */
struct qrun {
	uint64_t	inum, start, last;
	bool		active;
	uint32_t	gen;
	struct qslot	*slots;
	size_t		nr_slots, used;
	uint8_t		*names;
	size_t		names_len, names_size;
};

struct quick {
	struct bch_fs		*c;
	struct bkey_fs_ctx	ctx;
	struct fsck_state	silent;		/* mark and sweep's findings: counted, never said */
	struct fsck_gc		*gc;
	struct printbuf		err;		/* node reader messages: any is a problem */
	struct printbuf		*why;
	bool			bad;

	struct qrange		*ranges;
	size_t			nr_ranges, size_ranges;
	uint8_t			**cells;	/* chunks of CELL_CHUNK nibbles: kind << 2 | dirents left */
	size_t			nr_chunks;
	size_t			last_chunk_bytes;	/* allocated of the last chunk */
	uint64_t		nr_inodes;
	struct qbig		*big;
	size_t			nr_big, size_big;

	struct qdir		*dirs;
	size_t			nr_dirs, size_dirs;

	/* the alloc btree's own pointers: judged once its gens are read */
	bool			gens_read;
	struct qptr { unsigned level; struct bkey_ref k; } *ptrs;
	size_t			nr_ptrs, size_ptrs;

	struct qrun		run;
	bool			lf_dirent;
	uint64_t		lf_inum;

	struct qahead		*ahead;		/* the read-ahead thread, NULL: none */
	bool			ahead_later;	/* not started yet: at the first parent of many leaves */
};

__attribute__((format(printf, 2, 3)))
static bool give_up(struct quick *q, const char *fmt, ...)
{
	va_list args;

	if (!q->bad && q->why) {
		va_start(args, fmt);
		pr_vbuf(q->why, fmt, args);
		va_end(args);
	}
	q->bad = true;
	return false;
}

/* Btree pointer @k (at @level) of btree @id to mark and sweep: after the gens. */
static bool q_gc_ptr(struct quick *q, unsigned id, unsigned level, const struct bkey_ref *k)
{
	if (!q->gens_read) {
		struct qptr *p;
		void *v = xmalloc(k->v_bytes + 1);

		if (q->nr_ptrs == q->size_ptrs) {
			q->size_ptrs = q->size_ptrs ? q->size_ptrs * 2 : 16;
			q->ptrs = xrealloc(q->ptrs, q->size_ptrs * sizeof(*q->ptrs));
		}
		p = &q->ptrs[q->nr_ptrs++];
		memcpy(v, k->v, k->v_bytes);
		p->level = level;
		p->k = *k;
		p->k.v = v;
		return true;
	}
	bch_fsck_gc_key(q->gc, id, level, k);
	return !q->silent.nr_seen;
}

/* ---- read-ahead: the next leaves read and parsed on a second thread ----------- */

/*
 * Reading and unpacking a node is about half of a clean check; the other
 * half is the checks themselves. Where the machine has a second CPU, a
 * thread reads the next leaves of each btree being walked (QAHEAD ahead
 * of each cursor) while this one checks the current leaf. A leaf read
 * ahead is used only when it read and parsed with nothing to say
 * (btree_node_read_clean()); anything else, or a leaf the thread has not
 * started yet, is read here the usual way, with the usual messages.
 *
 * BCH_FSCK_READ_AHEAD=wait in the environment (tests): a leaf not started
 * yet is waited for instead, so that every leaf but the first of each
 * parent comes from the thread, whatever the machine's load.
 */
#define QAHEAD	1

/*
 * The thread starts at the first parent of at least this many leaves: a
 * filesystem whose btrees are a few leaves each (d1: two at most) gains
 * less than the thread costs to start and to wait for, and a leaf in
 * flight is memory.
 */
#define QAHEAD_MIN_LEAVES	4

enum { QJOB_QUEUED, QJOB_RUNNING, QJOB_DONE };

struct qjob {
	struct qjob			*next;		/* in the queue */
	struct bkey_ref			ptr;		/* value: @v */
	struct btree_node_expect	exp;
	const struct btree_node_h	*parent;	/* whose child @idx it is */
	size_t				idx;
	struct btree_node_h		*n;		/* QJOB_DONE: the node, or NULL */
	int				state;
	bool				cancelled;	/* QUEUED and unwanted: the thread frees it */
	uint64_t			v[];
};

struct qahead {
	struct bch_fs		*c;
	struct btree_node_ctx	ctx;
	pthread_t		thread;
	pthread_mutex_t		lock;
	pthread_cond_t		work, done;
	struct qjob		*head, *tail;
	bool			stop;
	bool			always_wait;	/* BCH_FSCK_READ_AHEAD=wait */
};

static void qjob_free(struct qjob *j)
{
	if (j) {
		btree_node_free(j->n);
		free(j);
	}
}

static void *qahead_thread(void *arg)
{
	struct qahead *a = arg;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		struct qjob *j = a->head;

		if (!j) {
			if (a->stop)
				break;
			pthread_cond_wait(&a->work, &a->lock);
			continue;
		}
		a->head = j->next;
		if (!a->head)
			a->tail = NULL;
		if (j->cancelled) {
			qjob_free(j);
			continue;
		}
		j->state = QJOB_RUNNING;
		pthread_mutex_unlock(&a->lock);
		if (btree_node_read_clean(a->c, &a->ctx, &j->ptr, &j->exp, &j->n))
			j->n = NULL;
		pthread_mutex_lock(&a->lock);
		j->state = QJOB_DONE;
		pthread_cond_broadcast(&a->done);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

static struct qahead *qahead_start(struct bch_fs *c)
{
	struct qahead *a;
	const char *e;

	if (c->opts.verify || sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return NULL;
	a = xcalloc(1, sizeof(*a));
	a->c = c;
	a->always_wait = (e = getenv("BCH_FSCK_READ_AHEAD")) && !strcmp(e, "wait");
	btree_node_ctx_init(&a->ctx, c);
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->work, NULL);
	pthread_cond_init(&a->done, NULL);
	pthread_attr_t attr;
	int r;

	/* a small stack: the thread only parses nodes (and peak RSS is measured) */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	r = pthread_create(&a->thread, &attr, qahead_thread, a);
	pthread_attr_destroy(&attr);
	if (r) {
		pthread_cond_destroy(&a->work);
		pthread_cond_destroy(&a->done);
		pthread_mutex_destroy(&a->lock);
		free(a);
		return NULL;
	}
	return a;
}

/* Every cursor gave its jobs back (cancelled): the thread frees what is queued. */
static void qahead_stop(struct qahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_signal(&a->work);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	pthread_cond_destroy(&a->work);
	pthread_cond_destroy(&a->done);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

static struct qjob *qahead_queue(struct qahead *a, unsigned id, const struct btree_node_h *parent,
				 size_t idx)
{
	const struct bkey_ref *k = &parent->keys[idx];
	struct qjob *j = xcalloc(1, sizeof(*j) + round_up(k->v_bytes, 8));

	memcpy(j->v, k->v, k->v_bytes);
	j->ptr = *k;
	j->ptr.v = j->v;
	j->exp = (struct btree_node_expect) {
		.btree_id = id, .level = 0, .check_min = true,
		.min_key = idx ? bpos_successor(id, parent->keys[idx - 1].k.p) : parent->min_key,
		.max_key = k->k.p,
	};
	j->parent = parent;
	j->idx = idx;
	pthread_mutex_lock(&a->lock);
	if (a->tail)
		a->tail->next = j;
	else
		a->head = j;
	a->tail = j;
	pthread_cond_signal(&a->work);
	pthread_mutex_unlock(&a->lock);
	return j;
}

/*
 * Take @j back: its node when it read cleanly (the caller owns it), else
 * NULL. A job not started yet is cancelled (the caller reads the node
 * itself rather than wait; unless @want and always_wait); one being read
 * is waited for.
 */
static struct btree_node_h *qahead_take(struct qahead *a, struct qjob *j, bool want)
{
	struct btree_node_h *n;

	pthread_mutex_lock(&a->lock);
	if (j->state == QJOB_QUEUED && !(want && a->always_wait)) {
		j->cancelled = true;
		pthread_mutex_unlock(&a->lock);
		return NULL;
	}
	while (j->state != QJOB_DONE)
		pthread_cond_wait(&a->done, &a->lock);
	pthread_mutex_unlock(&a->lock);
	n = j->n;
	j->n = NULL;
	qjob_free(j);
	return n;
}

/* ---- reading a btree leaf by leaf ---------------------------------------------- */

struct qcur {
	struct quick		*q;
	unsigned		id;
	unsigned		root_level;
	struct btree_node_h	*node[BTREE_ITER_MAX_DEPTH];	/* the path, by level */
	size_t			idx[BTREE_ITER_MAX_DEPTH];	/* child followed at each interior level */
	struct bpos_h		leaf_min, leaf_max;
	const struct bkey_ref	*keys;		/* the leaf's keys, journal laid over */
	size_t			nr, i;
	struct bkey_ref		*ov;
	struct node_arena	*arena;
	struct bpos_h		prev;
	bool			have_prev, started, done;
	bool			leaf_owned;	/* node[0] came from the read-ahead: not cached */
	/* leaves of node[1] queued for read-ahead, by child index % QRING */
	struct qjob		*ahead[QAHEAD + 1];
};

#define QRING	(QAHEAD + 1)

static void qcur_init(struct qcur *cur, struct quick *q, unsigned id)
{
	memset(cur, 0, sizeof(*cur));
	cur->q = q;
	cur->id = id;
}

/* The leaves queued for read-ahead, no longer wanted. */
static void qahead_drop(struct qcur *cur)
{
	for (unsigned i = 0; i < QRING; i++)
		if (cur->ahead[i]) {
			btree_node_free(qahead_take(cur->q->ahead, cur->ahead[i], false));
			cur->ahead[i] = NULL;
		}
}

static void qnode_put(struct qcur *cur, unsigned level)
{
	if (!level && cur->leaf_owned)
		btree_node_free(cur->node[0]);
	else
		bch_btree_node_put(cur->q->c, cur->node[level]);
	if (!level)
		cur->leaf_owned = false;
	if (level == 1)
		qahead_drop(cur);	/* (before a new node[1] could take this one's address) */
	cur->node[level] = NULL;
}

static void qcur_exit(struct qcur *cur)
{
	for (unsigned l = 0; l < BTREE_ITER_MAX_DEPTH; l++)
		if (cur->node[l])
			qnode_put(cur, l);
	qahead_drop(cur);
	/* (the cache would keep the last node: the next btree's first read comes on top of it) */
	bch_btree_cache_trim(cur->q->c);
	free(cur->ov);
	node_arena_free(cur->arena);
	memset(cur->node, 0, sizeof(cur->node));
	cur->ov = NULL;
	cur->arena = NULL;
}

/* Read the node @ptr points to at @level over [@min, @max]; its pointers are marked. */
static bool qnode_get(struct qcur *cur, const struct bkey_ref *ptr, unsigned level,
		      struct bpos_h min, struct bpos_h max)
{
	struct quick *q = cur->q;
	struct btree_node_expect exp = {
		.btree_id = cur->id, .level = level, .min_key = min, .max_key = max,
		.check_min = true,
	};
	struct btree_node_h *n;
	unsigned long errs = q->c->nr_errors;
	int ret = bch_btree_node_get(q->c, ptr, &exp, &n, &q->err);

	if (!ret)
		cur->node[level] = n;
	if (ret || q->err.pos || q->c->nr_errors != errs)
		return give_up(q, "btree %s level %u: the node reader has something to say",
			       bch_btree_id_str(cur->id), level);
	if (!level) {
		cur->leaf_min = min;
		cur->leaf_max = max;
		return true;
	}
	/* an interior node's children must cover its range (else keys are in no node) */
	if (!n->nr_keys || !bpos_eq(n->keys[n->nr_keys - 1].k.p, n->max_key))
		return give_up(q, "btree %s level %u: an interior node's children do not reach its end",
			       bch_btree_id_str(cur->id), level);
	for (size_t i = 0; i < n->nr_keys && !q->silent.nr_seen; i++)
		q_gc_ptr(q, cur->id, level, &n->keys[i]);
	if (q->silent.nr_seen)
		return give_up(q, "btree %s: mark and sweep finds a btree pointer to judge",
			       bch_btree_id_str(cur->id));
	return true;
}

/* The checks of the key pass and of mark and sweep for every key of the leaf just read. */
static bool qleaf_keys(struct qcur *cur)
{
	struct quick *q = cur->q;
	struct bch_fs *c = q->c;
	struct btree_node_h *n = cur->node[0];

	free(cur->ov);
	cur->ov = NULL;
	if (bch_btree_journal_keys_in(c, cur->id, cur->leaf_min, cur->leaf_max)) {
		if (!cur->arena)
			cur->arena = node_arena_new();
		bch_btree_overlay(c, cur->id, cur->leaf_min, cur->leaf_max, n->keys, n->nr_keys,
				  cur->arena, &cur->ov, &cur->nr);
		cur->keys = cur->ov;
	} else {
		cur->keys = n->keys;
		cur->nr = n->nr_keys;
	}
	cur->i = 0;

	/*
	 * The node reader checked the keys it kept without the filesystem's
	 * context (doc/format.md §3.3): only extents and alloc keys are judged by it
	 * (devices, buckets), and keys from the journal are judged whole.
	 */
	bool recheck = cur->ov || cur->id == BTREE_ID_EXTENTS || cur->id == BTREE_ID_ALLOC;

	for (size_t i = 0; i < cur->nr; i++) {
		const struct bkey_ref *k = &cur->keys[i];

		if (cur->have_prev && bpos_cmp(k->k.p, cur->prev) <= 0)
			return give_up(q, "btree %s: keys out of order", bch_btree_id_str(cur->id));
		if (recheck && bch_bkey_validate_fs(cur->id, 0, k, &q->ctx, NULL))
			return give_up(q, "btree %s: an invalid key", bch_btree_id_str(cur->id));
		cur->prev = k->k.p;
		cur->have_prev = true;
		if (cur->id == BTREE_ID_EXTENTS) {
			bch_fsck_gc_key(q->gc, cur->id, 0, k);
			if (q->silent.nr_seen)
				return give_up(q, "mark and sweep finds an extent pointer to judge");
		} else if (cur->id == BTREE_ID_ALLOC) {
			bch_fsck_gc_alloc_key(q->gc, k);
		}
	}
	return true;
}

/*
 * Leaf @i of @parent (node[1]) if the read-ahead has it, read cleanly;
 * the QAHEAD leaves after it are queued.
 */
static struct btree_node_h *qahead_leaf(struct qcur *cur, const struct btree_node_h *parent,
					size_t i)
{
	struct qahead *a = cur->q->ahead;
	struct qjob *j = cur->ahead[i % QRING];

	cur->ahead[i % QRING] = NULL;
	for (size_t x = i + 1; x < parent->nr_keys && x <= i + QAHEAD; x++)
		if (!cur->ahead[x % QRING])
			cur->ahead[x % QRING] = qahead_queue(a, cur->id, parent, x);
	if (!j)
		return NULL;
	if (j->idx != i || j->parent != parent) {
		btree_node_free(qahead_take(a, j, false));
		return NULL;
	}
	return qahead_take(a, j, true);
}

/* From interior level @level (its node read, its child idx[level] chosen) down to a leaf. */
static bool qcur_descend(struct qcur *cur, unsigned level)
{
	while (level) {
		const struct btree_node_h *n = cur->node[level];
		size_t i = cur->idx[level];
		struct bpos_h min = i ? bpos_successor(cur->id, n->keys[i - 1].k.p) : n->min_key;
		struct btree_node_h *leaf;

		if (level == 1 && cur->q->ahead_later && n->nr_keys >= QAHEAD_MIN_LEAVES) {
			cur->q->ahead = qahead_start(cur->q->c);
			cur->q->ahead_later = false;	/* (started, or it cannot be) */
		}
		leaf = level == 1 && cur->q->ahead ? qahead_leaf(cur, n, i) : NULL;

		if (leaf) {
			cur->node[0] = leaf;
			cur->leaf_owned = true;
			cur->leaf_min = min;
			cur->leaf_max = n->keys[i].k.p;
		} else if (!qnode_get(cur, &n->keys[i], level - 1, min, n->keys[i].k.p)) {
			return false;
		}
		cur->idx[--level] = 0;
	}
	return qleaf_keys(cur);
}

static bool qcur_start(struct qcur *cur)
{
	struct quick *q = cur->q;
	const struct btree_root_h *root = &q->c->roots[cur->id];

	cur->started = true;
	if (!root->present) {
		cur->done = true;
		return true;
	}
	if (root->level >= BTREE_ITER_MAX_DEPTH || !bpos_eq(root->key.k.p, POS_H_MAX))
		return give_up(q, "btree %s: the root does not cover every key",
			       bch_btree_id_str(cur->id));
	cur->root_level = root->level;
	q_gc_ptr(q, cur->id, root->level + 1, &root->key);
	if (q->silent.nr_seen)
		return give_up(q, "btree %s: mark and sweep finds the root pointer to judge",
			       bch_btree_id_str(cur->id));
	if (!qnode_get(cur, &root->key, root->level, POS_H_MIN, root->key.k.p))
		return false;
	cur->idx[root->level] = 0;
	return qcur_descend(cur, root->level);
}

/* The next leaf; done at the end of the btree. */
static bool qcur_next_leaf(struct qcur *cur)
{

	for (unsigned l = 0; l <= cur->root_level; l++) {
		if (l && cur->idx[l] + 1 < cur->node[l]->nr_keys) {
			cur->idx[l]++;
			return qcur_descend(cur, l);
		}
		qnode_put(cur, l);
	}
	cur->done = true;
	cur->nr = cur->i = 0;
	return true;
}

/* The current key, NULL at the end (or when the check gave up). */
static const struct bkey_ref *qcur_peek(struct qcur *cur)
{
	if (cur->q->bad)
		return NULL;
	if (!cur->started && !qcur_start(cur))
		return NULL;
	while (!cur->done && cur->i == cur->nr)
		if (!qcur_next_leaf(cur))
			return NULL;
	return cur->done ? NULL : &cur->keys[cur->i];
}

static void qcur_next(struct qcur *cur)
{
	cur->i++;
}

/* A btree that only needs the node, key and pointer checks. */
static void q_btree_plain(struct quick *q, unsigned id)
{
	struct qcur cur;

	qcur_init(&cur, q, id);
	while (qcur_peek(&cur))
		qcur_next(&cur);
	qcur_exit(&cur);
}

/* ---- inodes: numbers in runs, one cell each ---------------------------------------- */

static unsigned cell_get(const struct quick *q, uint64_t rank)
{
	uint8_t b = q->cells[rank >> CELL_CHUNK_BITS][(rank & (CELL_CHUNK - 1)) / 2];

	return rank & 1 ? b >> 4 : b & 15;
}

static void cell_set(struct quick *q, uint64_t rank, unsigned v)
{
	uint8_t *b = &q->cells[rank >> CELL_CHUNK_BITS][(rank & (CELL_CHUNK - 1)) / 2];

	*b = rank & 1 ? (uint8_t)((*b & 15) | v << 4) : (uint8_t)((*b & 0xf0) | v);
}

static size_t big_slot(const struct quick *q, uint64_t inum)
{
	uint64_t h = (inum + 1) * 0x9e3779b97f4a7c15ULL;
	size_t i = (size_t)(h >> 20) & (q->size_big - 1);

	while (q->big[i].inum_1 && q->big[i].inum_1 != inum + 1)
		i = (i + 1) & (q->size_big - 1);
	return i;
}

static void big_set(struct quick *q, uint64_t inum, uint64_t left, unsigned dt)
{
	if ((q->nr_big + 1) * 2 > q->size_big) {
		struct qbig *old = q->big;
		size_t old_size = q->size_big;

		q->size_big = old_size ? old_size * 2 : 64;
		q->big = xcalloc(q->size_big, sizeof(*q->big));
		for (size_t i = 0; i < old_size; i++)
			if (old[i].inum_1)
				q->big[big_slot(q, old[i].inum_1 - 1)] = old[i];
		free(old);
	}
	size_t i = big_slot(q, inum);

	if (!q->big[i].inum_1)
		q->nr_big++;
	q->big[i] = (struct qbig) { inum + 1, left, (uint8_t)dt };
}

static struct qbig *big_get(struct quick *q, uint64_t inum)
{
	struct qbig *b = &q->big[big_slot(q, inum)];

	return b->inum_1 ? b : NULL;
}

/* Add inode @inum (numbers come in increasing order) of type @dt expecting @left dirents. */
static void inode_add(struct quick *q, uint64_t inum, unsigned dt, uint64_t left)
{
	struct qrange *r = q->nr_ranges ? &q->ranges[q->nr_ranges - 1] : NULL;
	uint64_t rank = q->nr_inodes++;
	unsigned kind = dt == BCH_DT_REG ? CELL_KIND_REG : dt == BCH_DT_DIR ? CELL_KIND_DIR :
			dt == BCH_DT_LNK ? CELL_KIND_LNK : CELL_KIND_OTHER;

	if (r && r->start + r->len == inum) {
		r->len++;
	} else {
		if (q->nr_ranges == q->size_ranges) {
			q->size_ranges = q->size_ranges ? q->size_ranges * 2 : 16;
			q->ranges = xrealloc(q->ranges, q->size_ranges * sizeof(*q->ranges));
		}
		q->ranges[q->nr_ranges++] = (struct qrange) { inum, 1, rank };
	}
	if ((rank >> CELL_CHUNK_BITS) == q->nr_chunks) {
		q->cells = xrealloc(q->cells, (q->nr_chunks + 1) * sizeof(*q->cells));
		q->cells[q->nr_chunks++] = NULL;
		q->last_chunk_bytes = 0;
	}
	/*
	 * The last chunk grows with the inodes (a filesystem of a few hundred
	 * inodes takes a few hundred bytes, not a chunk's 64 KiB to clear).
	 */
	if ((rank & (CELL_CHUNK - 1)) / 2 >= q->last_chunk_bytes) {
		size_t n = min_t(size_t, max_t(size_t, q->last_chunk_bytes * 2, 256), CELL_CHUNK / 2);
		uint8_t **c = &q->cells[q->nr_chunks - 1];

		*c = xrealloc(*c, n);
		memset(*c + q->last_chunk_bytes, 0, n - q->last_chunk_bytes);
		q->last_chunk_bytes = n;
	}
	if (kind == CELL_KIND_OTHER || left > CELL_LEFT_MAX) {
		big_set(q, inum, left, dt);
		left = CELL_LEFT_BIG;
	}
	cell_set(q, rank, kind << 2 | (unsigned)left);
}

/* The rank of inode @inum, false when it is not a filesystem inode. */
static bool inode_rank(const struct quick *q, uint64_t inum, uint64_t *rank)
{
	size_t l = 0, r = q->nr_ranges;

	while (l < r) {
		size_t m = l + (r - l) / 2;

		if (q->ranges[m].start <= inum)
			l = m + 1;
		else
			r = m;
	}
	if (!l || inum - q->ranges[l - 1].start >= q->ranges[l - 1].len)
		return false;
	*rank = q->ranges[l - 1].rank + (inum - q->ranges[l - 1].start);
	return true;
}

/* The type (mode >> 12) of the inode of rank @rank, number @inum. */
static unsigned inode_dt(struct quick *q, uint64_t rank, uint64_t inum)
{
	static const uint8_t kind_dt[] = { BCH_DT_REG, BCH_DT_DIR, BCH_DT_LNK };
	unsigned kind = cell_get(q, rank) >> 2;

	if (kind != CELL_KIND_OTHER)
		return kind_dt[kind];
	return big_get(q, inum)->dt;
}

/* One dirent to inode @inum (rank @rank): false when it has no more expected. */
static bool inode_count(struct quick *q, uint64_t rank, uint64_t inum)
{
	unsigned c = cell_get(q, rank), left = c & 3;

	if (left == CELL_LEFT_BIG) {
		struct qbig *b = big_get(q, inum);

		if (!b->left)
			return false;
		b->left--;
		return true;
	}
	if (!left)
		return false;
	cell_set(q, rank, c - 1);
	return true;
}

static struct qdir *dir_find(struct quick *q, uint64_t inum)
{
	size_t l = 0, r = q->nr_dirs;

	while (l < r) {
		size_t m = l + (r - l) / 2;

		if (q->dirs[m].inum < inum)
			l = m + 1;
		else
			r = m;
	}
	return l < q->nr_dirs && q->dirs[l].inum == inum ? &q->dirs[l] : NULL;
}

/* ---- hash runs ----------------------------------------------------------------------- */

static bool hash_info(uint32_t flags, uint64_t seed, struct bch_hash_info *h)
{
	return !bch_hash_info_init(h, (flags >> 20) & 0xf, seed);
}

static void run_step(struct qrun *r, uint64_t inum, uint64_t offset)
{
	if (r->active && r->inum == inum && r->last != UINT64_MAX && offset == r->last + 1) {
		r->last = offset;
		return;
	}
	r->inum = inum;
	r->start = r->last = offset;
	r->active = true;
	r->used = 0;
	r->names_len = 0;
	if (++r->gen == 0) {
		if (r->slots)
			memset(r->slots, 0, r->nr_slots * sizeof(*r->slots));
		r->gen = 1;
	}
}

static void run_grow(struct qrun *r)
{
	size_t n = r->nr_slots ? r->nr_slots * 2 : 16;
	struct qslot *s = xcalloc(n, sizeof(*s));

	for (size_t i = 0; i < r->nr_slots; i++) {
		size_t j;

		if (r->slots[i].gen != r->gen)
			continue;
		for (j = r->slots[i].hash & (n - 1); s[j].gen == r->gen; j = (j + 1) & (n - 1))
			;
		s[j] = r->slots[i];
	}
	free(r->slots);
	r->slots = s;
	r->nr_slots = n;
}

/* Is (@type, @name) already an entry of the run? If not, it is now. */
static bool run_dup(struct qrun *r, uint64_t hash, unsigned type, const uint8_t *name, unsigned len)
{
	size_t j;

	if ((r->used + 1) * 2 > r->nr_slots)
		run_grow(r);
	for (j = hash & (r->nr_slots - 1); r->slots[j].gen == r->gen; j = (j + 1) & (r->nr_slots - 1)) {
		const struct qslot *s = &r->slots[j];

		if (s->hash == hash && s->type == type && s->name_len == len &&
		    !memcmp(r->names + s->name_off, name, len))
			return true;
	}
	if (r->names_len + len > r->names_size) {
		r->names_size = (r->names_len + len) * 2 + 256;
		r->names = xrealloc(r->names, r->names_size);
	}
	memcpy(r->names + r->names_len, name, len);
	r->slots[j] = (struct qslot) {
		.hash = hash, .gen = r->gen, .name_off = (uint32_t)r->names_len,
		.name_len = len, .type = (uint8_t)type,
	};
	r->names_len += len;
	r->used++;
	return false;
}

/* A live entry at @k's offset hashed to @hash: inside its run, and no name twice. */
static bool hash_pos_ok(struct quick *q, const struct bkey_ref *k, uint64_t hash, unsigned type,
			const uint8_t *name, unsigned len)
{
	if (hash < q->run.start || hash > k->k.p.offset)
		return give_up(q, "a hashed key at the wrong offset");
	if (run_dup(&q->run, hash, type, name, len))
		return give_up(q, "a duplicate name in a hash run");
	return true;
}

/* ---- inodes, with their extents and xattrs ---------------------------------------- */

/* Extents of inode @inum (@u: its inode, NULL when missing) at the cursor. */
static void q_extents_of(struct quick *q, struct qcur *ext, uint64_t inum,
			 const struct bch_inode_unpacked *u)
{
	uint64_t round = q->c->block_size * 512 > 4096 ? q->c->block_size * 512 : 4096;
	uint64_t limit = 0, sectors = 0;
	const struct bkey_ref *k;
	unsigned dt = u ? (u->bi_mode >> 12) & 15 : 0;

	if (u)
		limit = u->bi_size > UINT64_MAX - round ? UINT64_MAX / 512
			: (u->bi_size + round - 1) / round * round / 512;
	while ((k = qcur_peek(ext)) && k->k.p.inode == inum) {
		unsigned type = k->k.type;

		if (inum >= BCACHEFS_ROOT_INO && type != KEY_TYPE_DISCARD) {
			if (!u)
				give_up(q, "an extent of a missing inode");
			else if (dt != BCH_DT_REG && dt != BCH_DT_LNK)
				give_up(q, "an extent of an inode that is not a file");
			else if (type != BCH_RESERVATION && k->k.p.offset > limit)
				give_up(q, "an extent past i_size");
			if (type == BCH_EXTENT || type == BCH_EXTENT_CACHED || type == BCH_RESERVATION)
				sectors += k->k.size;
		}
		qcur_next(ext);
	}
	if (u && u->bi_sectors != sectors)
		give_up(q, "inode %" PRIu64 ": i_sectors differs from its extents", inum);
}

/* Xattrs of inode @inum (@u: its inode, NULL when missing) at the cursor. */
static void q_xattrs_of(struct quick *q, struct qcur *x, uint64_t inum,
			const struct bch_inode_unpacked *u)
{
	struct bch_hash_info h;
	bool hash_ok = false, have_hash = false;
	const struct bkey_ref *k;

	q->run.active = false;
	while ((k = qcur_peek(x)) && k->k.p.inode == inum) {
		struct bch_xattr_h e;

		if (inum >= BCACHEFS_ROOT_INO) {
			if (!u) {
				give_up(q, "an xattr of a missing inode");
				break;
			}
			/* (the hash parameters cost a SHA-256 with siphash: only for inodes with xattrs) */
			if (!have_hash) {
				hash_ok = hash_info(u->bi_flags, u->bi_hash_seed, &h);
				have_hash = true;
			}
			run_step(&q->run, inum, k->k.p.offset);
			if (hash_ok && k->k.type == 128 && !bch_xattr_decode(k, &e))
				hash_pos_ok(q, k, bch_xattr_hash(&h, e.x_type, e.name, e.name_len),
					    e.x_type, e.name, e.name_len);
		}
		qcur_next(x);
	}
}

/* What the inode pass and the link count pass ask of inode @u. */
static void q_inode(struct quick *q, const struct bch_inode_unpacked *u)
{
	unsigned dt = (u->bi_mode >> 12) & 15;
	uint64_t inum = u->bi_inum;

	if (u->bi_flags & (BCH_INODE_I_SIZE_DIRTY | BCH_INODE_I_SECTORS_DIRTY)) {
		give_up(q, "inode %" PRIu64 ": i_size or i_sectors dirty", inum);
		return;
	}
	if (inum == BCACHEFS_ROOT_INO && dt != BCH_DT_DIR) {
		give_up(q, "the root is not a directory");
		return;
	}
	if (dt == BCH_DT_DIR) {
		if (q->nr_dirs == q->size_dirs) {
			q->size_dirs = q->size_dirs ? q->size_dirs * 2 : 64;
			q->dirs = xrealloc(q->dirs, q->size_dirs * sizeof(*q->dirs));
		}
		q->dirs[q->nr_dirs++] = (struct qdir) {
			.inum = inum, .hash_seed = u->bi_hash_seed, .flags = u->bi_flags,
			.subdirs_left = u->bi_nlink,
		};
		/* one dirent to a directory, none to the root */
		inode_add(q, inum, dt, inum != BCACHEFS_ROOT_INO);
	} else {
		inode_add(q, inum, dt, (uint64_t)u->bi_nlink + 1);
	}
}

/* The inodes btree, its extents and xattrs beside it, merged by inode number. */
static void q_inodes(struct quick *q)
{
	struct qcur ino, ext, xat;
	const struct bkey_ref *k;
	uint64_t last = 0;
	bool have_last = false;

	qcur_init(&ino, q, BTREE_ID_INODES);
	qcur_init(&ext, q, BTREE_ID_EXTENTS);
	qcur_init(&xat, q, BTREE_ID_XATTRS);
	while ((k = qcur_peek(&ino))) {
		const struct bkey_ref *e;
		struct bch_inode_unpacked u;
		uint64_t inum = k->k.p.inode;
		bool fs = k->k.type == BCH_INODE_FS;

		if (have_last && inum <= last) {
			give_up(q, "two inode keys for inode %" PRIu64, inum);
			break;
		}
		if (fs && bch_inode_unpack(k, &u)) {
			give_up(q, "inode %" PRIu64 " does not unpack", inum);
			break;
		}
		/* what comes before this inode has no inode */
		while ((e = qcur_peek(&ext)) && e->k.p.inode < inum)
			q_extents_of(q, &ext, e->k.p.inode, NULL);
		while ((e = qcur_peek(&xat)) && e->k.p.inode < inum)
			q_xattrs_of(q, &xat, e->k.p.inode, NULL);
		q_extents_of(q, &ext, inum, fs ? &u : NULL);
		q_xattrs_of(q, &xat, inum, fs ? &u : NULL);
		if (fs)
			q_inode(q, &u);
		last = inum;
		have_last = true;
		qcur_next(&ino);
	}
	while ((k = qcur_peek(&ext)))
		q_extents_of(q, &ext, k->k.p.inode, NULL);
	while ((k = qcur_peek(&xat)))
		q_xattrs_of(q, &xat, k->k.p.inode, NULL);
	qcur_exit(&ino);
	qcur_exit(&ext);
	qcur_exit(&xat);
}

/* ---- dirents ----------------------------------------------------------------------- */

static bool name_is(const struct bch_dirent_h *d, const char *s)
{
	size_t n = strlen(s);

	return d->name_len == n && !memcmp(d->name, s, n);
}

/* One live dirent @d at @k in directory @dir (hash parameters @h when @hash_ok). */
static void q_dirent(struct quick *q, struct qdir *dir, const struct bkey_ref *k,
		     const struct bch_dirent_h *d, const struct bch_hash_info *h, bool hash_ok)
{
	uint64_t rank;
	unsigned dt;

	if (hash_ok && !hash_pos_ok(q, k, bch_dirent_hash(h, d->name, d->name_len), 0,
				    d->name, d->name_len))
		return;
	if (dir->inum == BCACHEFS_ROOT_INO && name_is(d, "lost+found")) {
		q->lf_dirent = true;
		q->lf_inum = d->d_inum;
	}
	if (!d->name_len || name_is(d, ".") || name_is(d, "..") || d->d_inum == dir->inum) {
		give_up(q, "a dirent with a bad name or to its own directory");
		return;
	}
	if (!inode_rank(q, d->d_inum, &rank)) {
		give_up(q, "a dirent to a missing inode");
		return;
	}
	dt = inode_dt(q, rank, d->d_inum);
	if (d->d_type != dt) {
		give_up(q, "a dirent with the wrong d_type");
		return;
	}
	if (!inode_count(q, rank, d->d_inum)) {
		give_up(q, "inode %" PRIu64 ": more dirents than its link count says", d->d_inum);
		return;
	}
	if (dt == BCH_DT_DIR) {
		struct qdir *sub = dir_find(q, d->d_inum);

		if (!sub || sub->parent || !dir->subdirs_left) {
			give_up(q, "directory %" PRIu64 ": links do not add up", dir->inum);
			return;
		}
		sub->parent = dir->inum;
		dir->subdirs_left--;
	}
}

static void q_dirents(struct quick *q)
{
	struct qcur cur;
	const struct bkey_ref *k;
	struct qdir *dir = NULL;
	struct bch_hash_info h;
	bool hash_ok = false;
	uint64_t cur_inum = 0;

	qcur_init(&cur, q, BTREE_ID_DIRENTS);
	q->run.active = false;
	while ((k = qcur_peek(&cur))) {
		struct bch_dirent_h d;
		uint64_t inum = k->k.p.inode;

		if (inum < BCACHEFS_ROOT_INO)
			goto next;
		if (!dir || inum != cur_inum) {
			cur_inum = inum;
			dir = dir_find(q, inum);
			if (!dir) {
				give_up(q, "a dirent in a missing inode or not in a directory");
				break;
			}
			hash_ok = hash_info(dir->flags, dir->hash_seed, &h);
			q->run.active = false;
		}
		run_step(&q->run, inum, k->k.p.offset);
		if (k->k.type == 128 && !bch_dirent_decode(k, &d))
			q_dirent(q, dir, k, &d, &h, hash_ok);
next:
		qcur_next(&cur);
	}
	qcur_exit(&cur);
}

/* ---- what is left: link counts, the directory tree, lost+found ------------------------ */

static void q_links(struct quick *q)
{
	struct qdir *root = dir_find(q, BCACHEFS_ROOT_INO);

	if (!root) {
		give_up(q, "the root directory is missing");
		return;
	}
	if (!q->lf_dirent || !dir_find(q, q->lf_inum)) {
		give_up(q, "lost+found is missing or not a directory");
		return;
	}
	for (uint64_t i = 0; i < q->nr_inodes; i++)
		if ((cell_get(q, i) & 3) && (cell_get(q, i) & 3) != CELL_LEFT_BIG) {
			give_up(q, "an inode has fewer dirents than its link count says");
			return;
		}
	for (size_t i = 0; i < q->size_big; i++)
		if (q->big[i].inum_1 && q->big[i].left) {
			give_up(q, "inode %" PRIu64 ": fewer dirents than its link count says",
				q->big[i].inum_1 - 1);
			return;
		}
	root->state = 2;
	for (size_t i = 0; i < q->nr_dirs; i++) {
		struct qdir *d = &q->dirs[i], *p;

		if (d->subdirs_left) {
			give_up(q, "directory %" PRIu64 ": fewer subdirectories than its link count says",
				d->inum);
			return;
		}
		/* up to the root (or to a directory known to lead there) */
		for (p = d; p && !p->state; p = p->parent ? dir_find(q, p->parent) : NULL)
			p->state = 1;
		if (!p || p->state != 2) {
			give_up(q, "directory %" PRIu64 " is not reachable from the root", d->inum);
			return;
		}
		for (p = d; p->state == 1; p = dir_find(q, p->parent))
			p->state = 2;
	}
}

/* ---- the whole check ---------------------------------------------------------------- */

bool bch_fsck_quick(struct bch_fs *c, struct printbuf *why)
{
	struct quick *q = xcalloc(1, sizeof(*q));
	bool ok;

	q->c = c;
	q->why = why;
	q->err = PRINTBUF;
	bch_fs_key_ctx(c, &q->ctx);
	q->ctx.bucket_gen = NULL;	/* staleness is mark and sweep's business */
	fsck_state_init(&q->silent, FSCK_NO, NULL);
	q->silent.read_only = true;

	/* nodes read before (their messages went elsewhere) are read again */
	bch_btree_cache_exit(c);
	bch_btree_cache_set_max(c, QUICK_CACHE_NODES);
	c->nodes_read_once = true;
	q->ahead_later = true;
	q->gc = bch_fsck_gc_start(c, &q->silent, false);
	if (q->silent.nr_seen)
		give_up(q, "mark and sweep: the superblocks and the journal");

	/* the gens first, then the pointers of the alloc btree itself */
	q_btree_plain(q, BTREE_ID_ALLOC);
	bch_fsck_gc_gens_read(q->gc, !q->bad);
	q->gens_read = true;
	for (size_t i = 0; i < q->nr_ptrs && !q->bad; i++)
		if (!q_gc_ptr(q, BTREE_ID_ALLOC, q->ptrs[i].level, &q->ptrs[i].k))
			give_up(q, "btree alloc: mark and sweep finds a btree pointer to judge");
	q_btree_plain(q, BTREE_ID_QUOTAS);
	if (!q->bad)
		q_inodes(q);
	if (!q->bad)
		q_dirents(q);
	if (!q->bad)
		q_links(q);
	bch_fsck_gc_finish(q->gc, !q->bad);
	if (q->silent.nr_seen)
		give_up(q, "mark and sweep: stale pointers or journal replicas");
	ok = !q->bad && !q->err.pos;

	qahead_stop(q->ahead);
	bch_btree_cache_exit(c);
	c->nodes_read_once = false;
	printbuf_exit(&q->err);
	free(q->ranges);
	for (size_t i = 0; i < q->nr_chunks; i++)
		free(q->cells[i]);
	free(q->cells);
	free(q->big);
	free(q->dirs);
	for (size_t i = 0; i < q->nr_ptrs; i++)
		free((void *)q->ptrs[i].k.v);
	free(q->ptrs);
	free(q->run.slots);
	free(q->run.names);
	free(q);
	return ok;
}
