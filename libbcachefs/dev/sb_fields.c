// SPDX-License-Identifier: GPL-2.0
/*
 * Superblock fields and names: the names of the superblock's enums (field
 * types, data types, member states, options), and the accessors of its
 * fields (members, journal buckets, crypt, replicas, disk groups) that the
 * rest of the tree uses. Every accessor stays inside the superblock; reading,
 * validating and writing one are in super.c.
 */
#include <errno.h>
#include <string.h>

#include "dev/sb_fields.h"
#include "util/util.h"

/* ---- names -------------------------------------------------------------- */

static const char * const sb_field_names[] = {
#define x(n, v) [v] = #n,
	BCH_SB_FIELDS(x)
#undef x
};

const char *bch_sb_field_name(unsigned type)
{
	return type < ARRAY_SIZE(sb_field_names) ? sb_field_names[type] : NULL;
}

int bch_sb_field_type_parse(const char *name)
{
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(sb_field_names); i++)
		if (!strcmp(name, sb_field_names[i]))
			return i;
	return -1;
}

static const char * const data_type_names[] = {
#define x(n, v, s) [v] = s,
	BCH_DATA_TYPES(x)
#undef x
};

const char *bch_data_type_name(unsigned type)
{
	return type < ARRAY_SIZE(data_type_names) ? data_type_names[type] : NULL;
}

static const char *name_or_unknown(const char * const *names, size_t nr, unsigned v)
{
	return v < nr && names[v] ? names[v] : "unknown";
}

const char *bch_member_state_name(unsigned state)
{
	static const char * const names[] = {
#define x(n, v, s) [v] = s,
		BCH_MEMBER_STATES(x)
#undef x
	};

	return name_or_unknown(names, ARRAY_SIZE(names), state);
}

const char *bch_replacement_name(unsigned r)
{
	static const char * const names[] = { "lru", "fifo", "random" };

	return name_or_unknown(names, ARRAY_SIZE(names), r);
}

const char *bch_error_action_name(unsigned a)
{
	static const char * const names[] = { "continue", "remount-ro", "panic" };

	return name_or_unknown(names, ARRAY_SIZE(names), a);
}

const char *bch_csum_opt_name(unsigned o)
{
	static const char * const names[] = { "none", "crc32c", "crc64" };

	return name_or_unknown(names, ARRAY_SIZE(names), o);
}

const char *bch_compression_opt_name(unsigned o)
{
	static const char * const names[] = {
#define x(n, v) [v] = #n,
		BCH_COMPRESSION_OPTS(x)
#undef x
	};

	return name_or_unknown(names, ARRAY_SIZE(names), o);
}

const char *bch_str_hash_name(unsigned h)
{
	static const char * const names[] = { "crc32c", "crc64", "siphash" };

	return name_or_unknown(names, ARRAY_SIZE(names), h);
}

/* ---- field helpers ------------------------------------------------------ */

/* See super.h. */
const struct bch_sb_field *bch_sb_field_next_safe(const struct bch_sb *sb,
						     const struct bch_sb_field *f)
{
	const uint8_t *end = bch_sb_area_end(sb);
	const uint8_t *p = f
		? (const uint8_t *)f + bch_sb_field_bytes(f)
		: (const uint8_t *)sb->_data;
	const struct bch_sb_field *n = (const void *)p;

	if ((size_t)(end - p) < sizeof(struct bch_sb_field))
		return NULL;
	if (!le32_to_cpu(n->u64s) || bch_sb_field_bytes(n) > (size_t)(end - p))
		return NULL;
	return n;
}

bool bch_sb_fields_ok(const struct bch_sb *sb)
{
	const uint8_t *end = bch_sb_area_end(sb);
	const uint8_t *p = (const uint8_t *)sb->_data;

	while (p < end) {
		const struct bch_sb_field *f = (const void *)p;

		if ((size_t)(end - p) < sizeof(*f) || !le32_to_cpu(f->u64s) ||
		    bch_sb_field_bytes(f) > (size_t)(end - p))
			return false;
		p += bch_sb_field_bytes(f);
	}
	return true;
}

const struct bch_sb_field *bch_sb_field_find(const struct bch_sb *sb, unsigned type)
{
	const struct bch_sb_field *f;

	for_each_sb_field_safe(f, sb)
		if (le32_to_cpu(f->type) == type)
			return f;
	return NULL;
}

const struct bch_sb_field_members *bch_sb_members(const struct bch_sb *sb)
{
	return (const void *)bch_sb_field_find(sb, BCH_SB_FIELD_members);
}

const struct bch_member *bch_sb_member(const struct bch_sb *sb, unsigned idx)
{
	const struct bch_sb_field_members *m = bch_sb_members(sb);

	if (!m || idx >= sb->nr_devices || idx >= bch_sb_members_nr(m))
		return NULL;
	return &m->members[idx];
}

bool bch_sb_member_exists(const struct bch_sb *sb, unsigned idx)
{
	const struct bch_member *m = bch_sb_member(sb, idx);

	return m && bch_member_exists(m);
}

int bch_sb_member_find(const struct bch_sb *sb, const uint8_t uuid[16])
{
	unsigned i;

	if (uuid_is_zero(uuid))
		return -1;
	for (i = 0; i < sb->nr_devices; i++) {
		const struct bch_member *m = bch_sb_member(sb, i);

		if (m && !memcmp(m->uuid.b, uuid, 16))
			return i;
	}
	return -1;
}

unsigned bch_sb_nr_live_members(const struct bch_sb *sb)
{
	unsigned i, nr = 0;

	for (i = 0; i < sb->nr_devices; i++)
		nr += bch_sb_member_exists(sb, i);
	return nr;
}

size_t bch_sb_journal_nr_buckets(const struct bch_sb *sb)
{
	const void *f = bch_sb_field_find(sb, BCH_SB_FIELD_journal);

	return f ? bch_sb_journal_nr(f) : 0;
}

uint64_t bch_sb_journal_bucket(const struct bch_sb *sb, size_t i)
{
	const struct bch_sb_field_journal *j =
		(const void *)bch_sb_field_find(sb, BCH_SB_FIELD_journal);

	if (!j || i >= bch_sb_journal_nr(j))
		return 0;
	return le64_to_cpu(j->buckets[i]);
}

const struct bch_sb_field_crypt *bch_sb_crypt(const struct bch_sb *sb)
{
	const struct bch_sb_field *f = bch_sb_field_find(sb, BCH_SB_FIELD_crypt);

	if (!f || bch_sb_field_bytes(f) < sizeof(struct bch_sb_field_crypt))
		return NULL;
	return (const void *)f;
}

void bch_sb_replicas_iter_field(struct bch_replicas_iter *it,
				const struct bch_sb_field *f)
{
	it->p = it->end = NULL;
	if (!f)
		return;
	it->p = (const uint8_t *)f + sizeof(*f);
	it->end = (const uint8_t *)f + bch_sb_field_bytes(f);
}

void bch_sb_replicas_iter_init(struct bch_replicas_iter *it, const struct bch_sb *sb)
{
	bch_sb_replicas_iter_field(it, bch_sb_field_find(sb, BCH_SB_FIELD_replicas));
}

const struct bch_replicas_entry *bch_sb_replicas_next(struct bch_replicas_iter *it)
{
	const struct bch_replicas_entry *e = (const void *)it->p;

	if (!it->p || it->end - it->p < 2 || !e->data_type ||
	    (size_t)(it->end - it->p) < bch_replicas_entry_bytes(e)) {
		it->p = it->end = NULL;
		return NULL;
	}
	it->p += bch_replicas_entry_bytes(e);
	return e;
}

unsigned bch_sb_dev_has_data(const struct bch_sb *sb, unsigned dev)
{
	struct bch_replicas_iter it;
	const struct bch_replicas_entry *e;
	unsigned i, mask = 0;

	bch_sb_replicas_iter_init(&it, sb);
	while ((e = bch_sb_replicas_next(&it)))
		for (i = 0; i < e->nr; i++)
			if (e->devs[i] == dev && e->data_type < 32)
				mask |= 1U << e->data_type;
	return mask;
}

static const struct bch_sb_field_disk_groups *sb_disk_groups(const struct bch_sb *sb)
{
	return (const void *)bch_sb_field_find(sb, BCH_SB_FIELD_disk_groups);
}

int bch_sb_disk_group_label(const struct bch_sb *sb, unsigned idx, char out[33])
{
	const struct bch_sb_field_disk_groups *g = sb_disk_groups(sb);

	out[0] = '\0';
	if (!g || idx >= bch_sb_disk_groups_nr(g))
		return -ENOENT;
	memcpy(out, g->entries[idx].label, BCH_SB_LABEL_SIZE);
	out[BCH_SB_LABEL_SIZE] = '\0';
	return 0;
}

unsigned bch_sb_disk_group_parent(const struct bch_sb *sb, unsigned idx)
{
	const struct bch_sb_field_disk_groups *g = sb_disk_groups(sb);

	if (!g || idx >= bch_sb_disk_groups_nr(g) || BCH_GROUP_DELETED(&g->entries[idx]))
		return 0;
	return (unsigned)BCH_GROUP_PARENT(&g->entries[idx]);
}

void bch_sb_disk_group_path(struct printbuf *out, const struct bch_sb *sb, unsigned idx)
{
	const struct bch_sb_field_disk_groups *g = sb_disk_groups(sb);
	size_t nr = g ? bch_sb_disk_groups_nr(g) : 0;
	unsigned path[32], depth = 0, v = idx;
	char label[33];

	while (1) {
		if (v >= nr || depth >= ARRAY_SIZE(path) ||
		    BCH_GROUP_DELETED(&g->entries[v])) {
			pr_buf(out, "invalid group %u", idx);
			return;
		}
		path[depth++] = v;
		if (!BCH_GROUP_PARENT(&g->entries[v]))
			break;
		v = (unsigned)BCH_GROUP_PARENT(&g->entries[v]) - 1;
	}
	while (depth--) {
		bch_sb_disk_group_label(sb, path[depth], label);
		pr_str(out, label);
		if (depth)
			pr_char(out, '.');
	}
}
