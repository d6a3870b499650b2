/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The problem table: every inconsistency fsck (and every read of a
 * filesystem) can find, declared once. Each has a stable numeric id that
 * never changes (scripts and --json output rely on it), a message, and
 * flags: PREEN = safe to fix under -p/-a; FIXABLE = a repair exists.
 *
 * Every check calls fsck_fix(c, PROBLEM, fmt, ...) and nothing else
 * decides whether to fix, ask or only report.
 */
#ifndef BCH_PROBLEMS_H
#define BCH_PROBLEMS_H

#include <stdbool.h>
#include <stdint.h>

struct bch_fs;
struct fsck_scan;

#define PROB_FIXABLE	(1U << 0)	/* a repair exists */
#define PROB_PREEN	(1U << 1)	/* safe to fix without asking (-p) */
/*
 * Left by -p, the btree it is in cannot be written safely: -p fixes
 * nothing more after it (a later repair could need to write there), so
 * the image stays as it was and fsck -y does the whole repair.
 */
#define PROB_HALTS_PREEN (1U << 2)

/*	name				id	flags				summary */
#define BCH_PROBLEMS()							\
	/* superblock and members: 1xx */				\
	x(sb_primary_bad,		101,	PROB_FIXABLE|PROB_PREEN,	"primary superblock is bad; a backup was used") \
	x(sb_backup_bad,		102,	PROB_FIXABLE|PROB_PREEN,	"a backup superblock is bad or differs") \
	x(sb_field_invalid,		103,	0,				"superblock field is invalid") \
	x(sb_member_missing,		104,	0,				"member device is missing") \
	x(sb_not_initialized,		105,	PROB_FIXABLE|PROB_PREEN,	"filesystem was never initialized") \
	x(open_warning,			106,	0,				"problem found while opening the filesystem") \
	/* journal: 2xx */						\
	x(journal_entry_bad_csum,	201,	PROB_FIXABLE|PROB_PREEN,	"journal entry has a bad checksum") \
	x(journal_entry_invalid,	202,	PROB_FIXABLE|PROB_PREEN,	"journal entry is invalid") \
	x(journal_entries_missing,	203,	PROB_FIXABLE,			"journal entries are missing") \
	x(journal_empty,		204,	PROB_FIXABLE,			"no valid journal entry") \
	x(journal_key_invalid,		205,	PROB_FIXABLE|PROB_PREEN,	"journal key is invalid") \
	/* btree nodes and topology: 3xx */				\
	x(btree_node_unreadable,	301,	PROB_FIXABLE|PROB_HALTS_PREEN, "btree node cannot be read from any copy") \
	x(btree_node_bad_magic,		302,	PROB_FIXABLE|PROB_HALTS_PREEN, "btree node has a bad magic number") \
	x(btree_node_bad_csum,		303,	PROB_FIXABLE|PROB_PREEN,	"btree node bset has a bad checksum") \
	x(btree_node_bad_header,	304,	PROB_FIXABLE|PROB_HALTS_PREEN, "btree node header does not match its pointer") \
	x(btree_node_bad_format,	305,	PROB_FIXABLE|PROB_HALTS_PREEN, "btree node has an invalid key format") \
	x(btree_node_bset_invalid,	306,	PROB_FIXABLE|PROB_PREEN,	"btree node bset is invalid") \
	x(btree_key_invalid,		307,	PROB_FIXABLE|PROB_PREEN,	"btree key is invalid") \
	x(btree_keys_out_of_order,	308,	PROB_FIXABLE|PROB_HALTS_PREEN, "btree keys are out of order") \
	x(btree_key_outside_node,	309,	PROB_FIXABLE|PROB_PREEN,	"btree key outside its node's range") \
	x(btree_topology,		310,	PROB_FIXABLE|PROB_HALTS_PREEN, "btree node ranges do not match their parent") \
	x(btree_root_unreadable,	311,	PROB_FIXABLE|PROB_HALTS_PREEN, "btree root cannot be read") \
	x(btree_copy_bad,		312,	PROB_FIXABLE|PROB_PREEN,	"one copy of a btree node is bad; another copy was used") \
	x(btree_root_missing,		313,	PROB_FIXABLE,			"btree root missing from the journal") \
	/* allocation and replicas: 4xx */				\
	x(ptr_gen_stale,		401,	PROB_FIXABLE|PROB_PREEN,	"pointer is stale (bucket gen is newer)") \
	x(ptr_gen_newer,		402,	PROB_FIXABLE|PROB_PREEN,	"pointer gen is newer than its bucket's") \
	x(ptr_dev_missing,		403,	PROB_FIXABLE,			"pointer to a missing device") \
	x(ptr_past_end,			404,	PROB_FIXABLE,			"pointer past the end of its device") \
	x(bucket_data_type_mismatch,	405,	PROB_FIXABLE,			"bucket holds two kinds of data") \
	x(replicas_entry_missing,	406,	PROB_FIXABLE|PROB_PREEN,	"replicas entry missing from the superblock") \
	x(alloc_key_wrong,		407,	PROB_FIXABLE|PROB_PREEN,	"alloc key does not match the bucket's use") \
	x(ptr_gen_missing,		408,	PROB_FIXABLE|PROB_PREEN,	"pointer into a bucket with no alloc key") \
	x(bucket_metadata_overlap,	409,	0,				"bucket holds two kinds of metadata") \
	/* filesystem objects: 5xx */					\
	x(extent_missing_inode,		501,	PROB_FIXABLE,			"extent for a missing inode") \
	x(extent_non_regular,		502,	PROB_FIXABLE,			"extent for an inode that is not a regular file or symlink") \
	x(extent_past_isize,		503,	PROB_FIXABLE|PROB_PREEN,	"extent past the end of its inode") \
	x(inode_i_sectors_wrong,	504,	PROB_FIXABLE|PROB_PREEN,	"inode i_sectors is wrong") \
	x(inode_i_size_dirty,		505,	PROB_FIXABLE|PROB_PREEN,	"inode has I_SIZE_DIRTY set") \
	x(inode_i_sectors_dirty,	506,	PROB_FIXABLE|PROB_PREEN,	"inode has I_SECTORS_DIRTY set") \
	x(dirent_missing_dir,		507,	PROB_FIXABLE,			"dirent in a missing directory") \
	x(dirent_in_non_dir,		508,	PROB_FIXABLE,			"dirent in an inode that is not a directory") \
	x(dirent_empty_name,		509,	PROB_FIXABLE,			"dirent with an empty name") \
	x(dirent_dot,			510,	PROB_FIXABLE|PROB_PREEN,	"dirent named . or ..") \
	x(dirent_self,			511,	PROB_FIXABLE,			"dirent points to its own directory") \
	x(dirent_missing_inode,		512,	PROB_FIXABLE,			"dirent points to a missing inode") \
	x(dirent_bad_d_type,		513,	PROB_FIXABLE|PROB_PREEN,	"dirent d_type does not match the inode") \
	x(hash_wrong_offset,		514,	PROB_FIXABLE|PROB_PREEN,	"hashed key at the wrong offset") \
	x(hash_duplicate,		515,	PROB_FIXABLE,			"duplicate hashed keys") \
	x(xattr_missing_inode,		516,	PROB_FIXABLE,			"xattr for a missing inode") \
	x(root_missing,			517,	PROB_FIXABLE|PROB_PREEN,	"root directory missing") \
	x(root_not_dir,			518,	PROB_FIXABLE,			"root inode is not a directory") \
	x(lostfound_missing,		519,	PROB_FIXABLE|PROB_PREEN,	"lost+found missing") \
	x(lostfound_not_dir,		520,	PROB_FIXABLE,			"lost+found is not a directory") \
	x(dir_multiple_links,		521,	PROB_FIXABLE,			"directory has more than one link") \
	x(dir_unreachable,		522,	PROB_FIXABLE,			"directory is unreachable") \
	x(inode_unreachable,		523,	PROB_FIXABLE,			"inode is unreachable") \
	x(inode_nlink_wrong,		524,	PROB_FIXABLE|PROB_PREEN,	"inode link count is wrong") \
	x(dirents_for_non_dir,		525,	PROB_FIXABLE,			"dirents found for an inode that is not a directory") \
	x(inode_invalid,		526,	PROB_FIXABLE,			"inode is invalid") \
	x(quota_wrong,			527,	0,				"quota usage is wrong")	/* 2018: usage is not on disk (doc/format.md §5.9): nothing to check */ \
	x(inode_lost,			528,	PROB_FIXABLE,			"inode lost with a node of the inodes btree, its keys kept")

enum bch_problem {
#define x(name, id, flags, summary) PROB_##name,
	BCH_PROBLEMS()
#undef x
	PROB_NR
};

struct bch_problem_info {
	const char	*name;
	unsigned	id;		/* stable */
	unsigned	flags;
	const char	*summary;
};

extern const struct bch_problem_info bch_problems[PROB_NR];

enum fsck_mode {
	FSCK_REPORT,	/* plain open (list, dump...): report, fix nothing */
	FSCK_NO,	/* -n: answer no */
	FSCK_PREEN,	/* -p/-a: fix what is marked PREEN, report the rest */
	FSCK_YES,	/* -y: fix everything fixable */
	FSCK_ASK,	/* ask per problem (interactive) */
};

enum fsck_answer {
	FSCK_ANSWER_NO,
	FSCK_ANSWER_YES,
	FSCK_ANSWER_ALL,	/* yes to all of this kind */
	FSCK_ANSWER_QUIT,
};

/*
 * How a check's outcome reaches the user: the command supplies these (the
 * library itself never prints). report() gets one finished line per
 * problem; ask() is called in FSCK_ASK mode.
 */
struct fsck_ops {
	void			(*report)(void *priv, enum bch_problem p, const char *msg);
	enum fsck_answer	(*ask)(void *priv, enum bch_problem p, const char *msg);
	void			*priv;
};

#define FSCK_RATELIMIT	10

struct fsck_state {
	enum fsck_mode		mode;
	struct fsck_ops		ops;
	bool			yes_all[PROB_NR];
	bool			cancelled;	/* the user answered quit */
	unsigned long		seen[PROB_NR];
	unsigned long		fixed[PROB_NR];
	unsigned long		nr_seen;
	unsigned long		nr_fixed;
	/* the filesystem cannot be written: nothing is fixed, whatever the mode */
	bool			read_only;
	unsigned long		nr_repair_failed;
	/* fsck --scan-nodes: scan the devices for btree nodes whatever happens */
	bool			scan_nodes;
	/*
	 * fsck --no-scan-nodes: never scan. What only the scan could repair
	 * (a node that cannot be read, keys under lost pointers, a btree
	 * without a root) is reported and left, and from then on nothing is
	 * repaired: the passes after the node pass do not run
	 * (bch_fsck_run()), so nothing the scan would have found is deleted.
	 * @scan_declined counts those places.
	 */
	bool			no_scan_nodes;
	unsigned long		scan_declined;
	/* the node scan of this run (fsck_scan.c), NULL until it is needed */
	struct fsck_scan	*scan;
	/* -p met a PROB_HALTS_PREEN problem: nothing more is fixed */
	bool			preen_halted;
	/*
	 * Btrees that lost a node this run (bit per btree id: unreadable, or
	 * the pointers to it lost), whatever the node scan brought back: an
	 * inode missing while keys of it survive is then recreated from its
	 * keys, never a reason to delete them (fsck_lost.c).
	 */
	uint32_t		lost_btrees;
};

void fsck_state_init(struct fsck_state *s, enum fsck_mode mode, const struct fsck_ops *ops);

/*
 * A check found problem @p, described by @fmt. Decides per the mode and
 * the table whether to fix: returns true when the caller must repair.
 * The line reported says what was found and what was done
 * ("..., fixing" / "..., not fixing" / "... (fix with fsck -y)").
 */
bool fsck_fix(struct fsck_state *s, enum bch_problem p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The repair of a problem @p that fsck_fix() said to fix did not happen
 * (its commit failed): it counts as left, with @why reported.
 */
void fsck_fix_failed(struct fsck_state *s, enum bch_problem p, const char *why);

/* Problems found and not fixed. */
unsigned long fsck_nr_left(const struct fsck_state *s);

/* Lines "Saw N problems like: ..." for problems reported more than FSCK_RATELIMIT times. */
struct printbuf;
void fsck_summary_to_text(struct printbuf *out, const struct fsck_state *s);
struct json;
void fsck_summary_to_json(struct json *j, const struct fsck_state *s);

/* Progress lines ("checking btree nodes") go to @progress when not NULL. */
typedef void (*fsck_progress_fn)(void *priv, const char *msg);

struct btree_trans;
/*
 * Commit the repair of problem @p in @t (which is emptied). On failure the
 * problem counts as not fixed and the reason is reported; the engine is
 * then read-only, so every later fix is refused too. Returns the commit's
 * result.
 */
int fsck_commit(struct fsck_state *s, enum bch_problem p, struct btree_trans *t);

#endif
