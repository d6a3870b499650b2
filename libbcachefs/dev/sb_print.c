// SPDX-License-Identifier: GPL-2.0
/*
 * Printing a superblock (sb_print.h): the text of the 2018 show-super
 * (doc/tools.md §3) and the same information as JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dev/super.h"
#include "util/util.h"
#include "dev/sb_print.h"

/* ---- printing ----------------------------------------------------------- */

static void pr_flag_list(struct printbuf *out, unsigned mask)
{
	unsigned i;
	bool first = true;

	if (!mask) {
		pr_str(out, "(none)");
		return;
	}
	for (i = 0; i < BCH_DATA_NR; i++)
		if (mask & (1U << i)) {
			if (!first)
				pr_char(out, ',');
			pr_str(out, bch_data_type_name(i));
			first = false;
		}
}

/* bucket_size * nbuckets sectors, human-readable, without overflow. */
static void pr_member_size(struct printbuf *out, const struct bch_member *m)
{
	unsigned __int128 s = (unsigned __int128)le16_to_cpu(m->bucket_size) *
		le64_to_cpu(m->nbuckets);

	pr_human_sectors(out, s > INT64_MAX ? INT64_MAX : (int64_t)s);
}

static void pr_last_mount(struct printbuf *out, uint64_t t)
{
	char buf[64];
	time_t tt = (time_t)t;

	if (!t) {
		pr_str(out, "(never)\n");
		return;
	}
	/* ctime()'s text ends in a newline: the 2018 output has an empty line */
	if (t <= INT32_MAX * 1024ULL && ctime_r(&tt, buf))
		pr_buf(out, "%s\n", buf);
	else
		pr_buf(out, "(invalid time %" PRIu64 ")\n", t);
}

static void pr_member_group(struct printbuf *out, const struct bch_sb *sb,
			    const struct bch_member *m)
{
	uint64_t g = BCH_MEMBER_GROUP(m);
	char label[33];

	if (!g)
		return;
	if (bch_sb_disk_group_label(sb, (unsigned)g - 1, label))
		pr_str(out, "(bad disk groups section");
	else
		pr_str(out, label);
}

static void member_to_text(struct printbuf *out, const struct bch_sb *sb,
			   unsigned i, const struct bch_member *m)
{
	pr_buf(out, "  Device %u:\n", i);
	pr_str(out, "    UUID:\t\t\t");
	pr_uuid(out, m->uuid.b);
	pr_str(out, "\n    Size:\t\t\t");
	pr_member_size(out, m);
	pr_str(out, "\n    Bucket size:\t\t");
	pr_human_sectors(out, le16_to_cpu(m->bucket_size));
	pr_buf(out, "\n    First bucket:\t\t%u\n", le16_to_cpu(m->first_bucket));
	pr_buf(out, "    Buckets:\t\t\t%" PRIu64 "\n", le64_to_cpu(m->nbuckets));
	pr_str(out, "    Last mount:\t\t\t");
	pr_last_mount(out, le64_to_cpu(m->last_mount));
	pr_buf(out, "    State:\t\t\t%s\n", bch_member_state_name((unsigned)BCH_MEMBER_STATE(m)));
	pr_str(out, "    Group:\t\t\t");
	pr_member_group(out, sb, m);
	pr_str(out, "\n    Data allowed:\t\t");
	pr_flag_list(out, (unsigned)BCH_MEMBER_DATA_ALLOWED(m));
	pr_str(out, "\n    Has data:\t\t\t");
	pr_flag_list(out, bch_sb_dev_has_data(sb, i));
	pr_buf(out, "\n    Replacement policy:\t\t%s\n",
	       bch_replacement_name((unsigned)BCH_MEMBER_REPLACEMENT(m)));
	pr_buf(out, "    Discard:\t\t\t%u\n", (unsigned)BCH_MEMBER_DISCARD(m));
}

static void members_to_text(struct printbuf *out, const struct bch_sb *sb,
			    const struct bch_sb_field *f)
{
	const struct bch_sb_field_members *m = (const void *)f;
	size_t i, nr = min_t(size_t, bch_sb_members_nr(m), sb->nr_devices);

	for (i = 0; i < nr; i++)
		if (bch_member_exists(&m->members[i]))
			member_to_text(out, sb, i, &m->members[i]);
}

static void journal_to_text(struct printbuf *out, const struct bch_sb_field *f)
{
	const struct bch_sb_field_journal *j = (const void *)f;
	size_t i, nr = bch_sb_journal_nr(j);

	pr_str(out, "  Buckets:\t\t\t");
	for (i = 0; i < nr; i++)
		pr_buf(out, "%s%" PRIu64, i ? " " : "", le64_to_cpu(j->buckets[i]));
	pr_char(out, '\n');
}

static void crypt_to_text(struct printbuf *out, const struct bch_sb_field *f)
{
	const struct bch_sb_field_crypt *c = (const void *)f;

	if (bch_sb_field_bytes(f) < offsetof(struct bch_sb_field_crypt, key))
		return;
	pr_buf(out, "  KFD:\t\t\t%" PRIu64 "\n", BCH_CRYPT_KDF_TYPE(c));
	pr_buf(out, "  scrypt n:\t\t%" PRIu64 "\n", BCH_KDF_SCRYPT_N(c));
	pr_buf(out, "  scrypt r:\t\t%" PRIu64 "\n", BCH_KDF_SCRYPT_R(c));
	pr_buf(out, "  scrypt p:\t\t%" PRIu64 "\n", BCH_KDF_SCRYPT_P(c));
}

static void pr_data_type(struct printbuf *out, unsigned t)
{
	const char *n = bch_data_type_name(t);

	if (n)
		pr_str(out, n);
	else
		pr_buf(out, "(unknown data type %u)", t);
}

static void replicas_to_text(struct printbuf *out, const struct bch_sb_field *f)
{
	struct bch_replicas_iter it;
	const struct bch_replicas_entry *e;
	unsigned i;

	bch_sb_replicas_iter_field(&it, f);
	while ((e = bch_sb_replicas_next(&it))) {
		size_t line = out->pos;

		pr_str(out, "  ");
		pr_data_type(out, e->data_type);
		pr_char(out, ':');
		while (out->pos - line < 32)
			pr_char(out, ' ');
		pr_char(out, '[');
		for (i = 0; i < e->nr; i++)
			pr_buf(out, "%s%u", i ? " " : "", e->devs[i]);
		pr_str(out, "]\n");
	}
}

static void field_to_text(struct printbuf *out, const struct bch_sb *sb,
			  const struct bch_sb_field *f)
{
	unsigned type = le32_to_cpu(f->type);
	const char *name = bch_sb_field_name(type);

	pr_char(out, '\n');
	if (name)
		pr_buf(out, "%c%s", name[0] - 'a' + 'A', name + 1);
	else
		pr_buf(out, "(unknown field %u)", type);
	pr_buf(out, " (size %zu):\n", bch_sb_field_bytes(f));

	switch (type) {
	case BCH_SB_FIELD_journal:	journal_to_text(out, f);	break;
	case BCH_SB_FIELD_members:	members_to_text(out, sb, f);	break;
	case BCH_SB_FIELD_crypt:	crypt_to_text(out, f);		break;
	case BCH_SB_FIELD_replicas:	replicas_to_text(out, f);	break;
	default:			break;
	}
}

static bool field_selected(unsigned flags, unsigned type)
{
	if ((flags & BCH_SB_PRINT_ALL_FIELDS) == BCH_SB_PRINT_ALL_FIELDS)
		return true;
	return type < 31 && (flags & (1U << type));
}

static void pr_sections(struct printbuf *out, const struct bch_sb *sb)
{
	const struct bch_sb_field *f;
	unsigned present = 0, i;
	bool first = true;

	for_each_sb_field_safe(f, sb)
		if (le32_to_cpu(f->type) < BCH_SB_FIELD_NR)
			present |= 1U << le32_to_cpu(f->type);
	for (i = 0; i < BCH_SB_FIELD_NR; i++)
		if (present & (1U << i)) {
			pr_buf(out, "%s%s", first ? "" : ",", bch_sb_field_name(i));
			first = false;
		}
}

static void layout_to_text(struct printbuf *out, const struct bch_sb_layout *l)
{
	unsigned i, nr = min_t(unsigned, l->nr_superblocks, BCH_SB_LAYOUT_MAX_SB);

	pr_str(out, "\nLayout:\n");
	pr_buf(out, "  type:\t\t\t\t%u\n", l->layout_type);
	pr_str(out, "  superblock max size:\t\t");
	if (l->sb_max_size_bits < 63)
		pr_human_sectors(out, (int64_t)1 << l->sb_max_size_bits);
	else
		pr_buf(out, "2^%u sectors", l->sb_max_size_bits);
	pr_buf(out, "\n  nr superblocks:\t\t%u\n", l->nr_superblocks);
	pr_str(out, "  Offsets:\t\t\t");
	for (i = 0; i < nr; i++)
		pr_buf(out, "%s%" PRIu64, i ? ", " : "", le64_to_cpu(l->sb_offset[i]));
	pr_char(out, '\n');
}

static void pr_label(struct printbuf *out, const struct bch_sb *sb)
{
	pr_bytes(out, sb->label, strnlen((const char *)sb->label, BCH_SB_LABEL_SIZE));
}

static void sb_main_to_text(struct printbuf *out, const struct bch_sb *sb)
{
	unsigned v;

	pr_str(out, "External UUID:\t\t\t");
	pr_uuid(out, sb->user_uuid.b);
	pr_str(out, "\nInternal UUID:\t\t\t");
	pr_uuid(out, sb->uuid.b);
	pr_str(out, "\nLabel:\t\t\t\t");
	pr_label(out, sb);
	pr_buf(out, "\nVersion:\t\t\t%" PRIu64 "\n", le64_to_cpu(sb->version));
	pr_str(out, "Block_size:\t\t\t");
	pr_human_sectors(out, le16_to_cpu(sb->block_size));
	pr_str(out, "\nBtree node size:\t\t");
	pr_human_sectors(out, BCH_SB_BTREE_NODE_SIZE(sb));
	pr_buf(out, "\nError action:\t\t\t%s\n",
	       bch_error_action_name((unsigned)BCH_SB_ERROR_ACTION(sb)));
	pr_buf(out, "Clean:\t\t\t\t%u\n", (unsigned)BCH_SB_CLEAN(sb));
	pr_buf(out, "Metadata replicas:\t\t%u\n", (unsigned)BCH_SB_META_REPLICAS_WANT(sb));
	pr_buf(out, "Data replicas:\t\t\t%u\n", (unsigned)BCH_SB_DATA_REPLICAS_WANT(sb));
	v = (unsigned)BCH_SB_META_CSUM_TYPE(sb);
	pr_buf(out, "Metadata checksum type:\t\t%s (%u)\n", bch_csum_opt_name(v), v);
	v = (unsigned)BCH_SB_DATA_CSUM_TYPE(sb);
	pr_buf(out, "Data checksum type:\t\t%s (%u)\n", bch_csum_opt_name(v), v);
	v = (unsigned)BCH_SB_COMPRESSION_TYPE(sb);
	pr_buf(out, "Compression type:\t\t%s (%u)\n", bch_compression_opt_name(v), v);
	pr_buf(out, "Foreground write target:\t%u\n", (unsigned)BCH_SB_FOREGROUND_TARGET(sb));
	pr_buf(out, "Background write target:\t%u\n", (unsigned)BCH_SB_BACKGROUND_TARGET(sb));
	pr_buf(out, "Promote target:\t\t\t%u\n", (unsigned)BCH_SB_PROMOTE_TARGET(sb));
	v = (unsigned)BCH_SB_STR_HASH_TYPE(sb);
	pr_buf(out, "String hash type:\t\t%s (%u)\n", bch_str_hash_name(v), v);
	pr_buf(out, "32 bit inodes:\t\t\t%u\n", (unsigned)BCH_SB_INODE_32BIT(sb));
	pr_buf(out, "GC reserve percentage:\t\t%u%%\n", (unsigned)BCH_SB_GC_RESERVE(sb));
	pr_buf(out, "Root reserve percentage:\t%u%%\n", (unsigned)BCH_SB_ROOT_RESERVE(sb));
	pr_buf(out, "Devices:\t\t\t%u live, %u total\n", bch_sb_nr_live_members(sb),
	       sb->nr_devices);
	pr_str(out, "Sections:\t\t\t");
	pr_sections(out, sb);
	pr_buf(out, "\nSuperblock size:\t\t%zu\n", bch_sb_bytes(sb));
}

void bch_sb_to_text(struct printbuf *out, const struct bch_sb *sb, unsigned flags)
{
	const struct bch_sb_field *f;

	sb_main_to_text(out, sb);
	if (flags & BCH_SB_PRINT_LAYOUT)
		layout_to_text(out, &sb->layout);
	for_each_sb_field_safe(f, sb)
		if (field_selected(flags, le32_to_cpu(f->type)))
			field_to_text(out, sb, f);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_flag_list(struct json *j, const char *key, unsigned mask)
{
	unsigned i;

	json_arr_begin(j, key);
	for (i = 0; i < BCH_DATA_NR; i++)
		if (mask & (1U << i))
			json_str(j, NULL, bch_data_type_name(i));
	json_arr_end(j);
}

static void member_to_json(struct json *j, const struct bch_sb *sb, unsigned i,
			   const struct bch_member *m)
{
	char label[33] = "";
	uint64_t g = BCH_MEMBER_GROUP(m);

	json_obj_begin(j, NULL);
	json_u64(j, "index", i);
	json_uuid(j, "uuid", m->uuid.b);
	json_u64(j, "bucket_size", le16_to_cpu(m->bucket_size));
	json_u64(j, "first_bucket", le16_to_cpu(m->first_bucket));
	json_u64(j, "nbuckets", le64_to_cpu(m->nbuckets));
	json_u64(j, "last_mount", le64_to_cpu(m->last_mount));
	json_str(j, "state", bch_member_state_name((unsigned)BCH_MEMBER_STATE(m)));
	json_u64(j, "size", (uint64_t)le16_to_cpu(m->bucket_size) * le64_to_cpu(m->nbuckets) * 512);
	json_u64(j, "group", g);
	if (g && !bch_sb_disk_group_label(sb, (unsigned)g - 1, label)) {
		struct printbuf path = PRINTBUF;

		json_str(j, "group_label", label);
		bch_sb_disk_group_path(&path, sb, (unsigned)g - 1);
		json_str(j, "group_path", printbuf_str(&path));
		printbuf_exit(&path);
	}
	json_flag_list(j, "data_allowed", (unsigned)BCH_MEMBER_DATA_ALLOWED(m));
	json_flag_list(j, "has_data", bch_sb_dev_has_data(sb, i));
	json_str(j, "replacement", bch_replacement_name((unsigned)BCH_MEMBER_REPLACEMENT(m)));
	json_bool(j, "discard", BCH_MEMBER_DISCARD(m));
	json_u64(j, "durability", bch_member_durability(m));
	json_obj_end(j);
}

static void field_to_json(struct json *j, const struct bch_sb *sb,
			  const struct bch_sb_field *f)
{
	unsigned type = le32_to_cpu(f->type), i;
	const char *name = bch_sb_field_name(type);
	struct bch_replicas_iter it;
	const struct bch_replicas_entry *e;

	json_obj_begin(j, NULL);
	json_str(j, "type", name ? name : "unknown");
	json_u64(j, "type_nr", type);
	json_u64(j, "size", bch_sb_field_bytes(f));
	switch (type) {
	case BCH_SB_FIELD_journal: {
		const struct bch_sb_field_journal *jf = (const void *)f;

		json_arr_begin(j, "buckets");
		for (i = 0; i < bch_sb_journal_nr(jf); i++)
			json_u64(j, NULL, le64_to_cpu(jf->buckets[i]));
		json_arr_end(j);
		break;
	}
	case BCH_SB_FIELD_members: {
		const struct bch_sb_field_members *m = (const void *)f;

		json_arr_begin(j, "devices");
		for (i = 0; i < sb->nr_devices && i < bch_sb_members_nr(m); i++)
			if (bch_member_exists(&m->members[i]))
				member_to_json(j, sb, i, &m->members[i]);
		json_arr_end(j);
		break;
	}
	case BCH_SB_FIELD_crypt: {
		const struct bch_sb_field_crypt *c = (const void *)f;

		if (bch_sb_field_bytes(f) < sizeof(*c))
			break;
		json_u64(j, "kdf_type", BCH_CRYPT_KDF_TYPE(c));
		json_u64(j, "scrypt_n", BCH_KDF_SCRYPT_N(c));
		json_u64(j, "scrypt_r", BCH_KDF_SCRYPT_R(c));
		json_u64(j, "scrypt_p", BCH_KDF_SCRYPT_P(c));
		json_bool(j, "key_encrypted", bch_key_is_encrypted(&c->key));
		break;
	}
	case BCH_SB_FIELD_disk_groups: {
		const struct bch_sb_field_disk_groups *g = (const void *)f;

		json_arr_begin(j, "groups");
		for (i = 0; i < bch_sb_disk_groups_nr(g); i++) {
			const struct bch_disk_group *dg = &g->entries[i];
			uint64_t parent = BCH_GROUP_PARENT(dg);

			json_obj_begin(j, NULL);
			json_u64(j, "index", i);
			json_strn(j, "label", (const char *)dg->label,
				  strnlen((const char *)dg->label, BCH_SB_LABEL_SIZE));
			json_bool(j, "deleted", BCH_GROUP_DELETED(dg));
			/* the parent's index, or absent: a top-level group */
			if (parent)
				json_u64(j, "parent", parent - 1);
			if (!BCH_GROUP_DELETED(dg)) {
				struct printbuf path = PRINTBUF;

				bch_sb_disk_group_path(&path, sb, i);
				json_str(j, "path", printbuf_str(&path));
				printbuf_exit(&path);
			}
			json_flag_list(j, "data_allowed", (unsigned)BCH_GROUP_DATA_ALLOWED(dg));
			json_obj_end(j);
		}
		json_arr_end(j);
		break;
	}
	case BCH_SB_FIELD_replicas:
		json_arr_begin(j, "entries");
		bch_sb_replicas_iter_field(&it, f);
		while ((e = bch_sb_replicas_next(&it))) {
			json_obj_begin(j, NULL);
			name = bch_data_type_name(e->data_type);
			json_str(j, "data_type", name ? name : "unknown");
			json_arr_begin(j, "devs");
			for (i = 0; i < e->nr; i++)
				json_u64(j, NULL, e->devs[i]);
			json_arr_end(j);
			json_obj_end(j);
		}
		json_arr_end(j);
		break;
	default:
		break;
	}
	json_obj_end(j);
}

static void layout_to_json(struct json *j, const struct bch_sb_layout *l)
{
	unsigned i, nr = min_t(unsigned, l->nr_superblocks, BCH_SB_LAYOUT_MAX_SB);

	json_obj_begin(j, "layout");
	json_u64(j, "type", l->layout_type);
	json_u64(j, "sb_max_size_bits", l->sb_max_size_bits);
	json_u64(j, "nr_superblocks", l->nr_superblocks);
	json_arr_begin(j, "offsets");
	for (i = 0; i < nr; i++)
		json_u64(j, NULL, le64_to_cpu(l->sb_offset[i]));
	json_arr_end(j);
	json_obj_end(j);
}

static void sb_main_to_json(struct json *j, const struct bch_sb *sb)
{
	json_uuid(j, "external_uuid", sb->user_uuid.b);
	json_uuid(j, "internal_uuid", sb->uuid.b);
	json_strn(j, "label", (const char *)sb->label,
		  strnlen((const char *)sb->label, BCH_SB_LABEL_SIZE));
	json_u64(j, "version", le64_to_cpu(sb->version));
	json_u64(j, "seq", le64_to_cpu(sb->seq));
	json_u64(j, "offset", le64_to_cpu(sb->offset));
	json_u64(j, "block_size", le16_to_cpu(sb->block_size) * 512ULL);
	json_u64(j, "btree_node_size", BCH_SB_BTREE_NODE_SIZE(sb) * 512);
	json_str(j, "error_action", bch_error_action_name((unsigned)BCH_SB_ERROR_ACTION(sb)));
	json_bool(j, "initialized", BCH_SB_INITIALIZED(sb));
	json_bool(j, "clean", BCH_SB_CLEAN(sb));
	json_u64(j, "metadata_replicas", BCH_SB_META_REPLICAS_WANT(sb));
	json_u64(j, "data_replicas", BCH_SB_DATA_REPLICAS_WANT(sb));
	json_u64(j, "metadata_replicas_required", BCH_SB_META_REPLICAS_REQ(sb));
	json_u64(j, "data_replicas_required", BCH_SB_DATA_REPLICAS_REQ(sb));
	json_str(j, "metadata_checksum_type", bch_csum_opt_name((unsigned)BCH_SB_META_CSUM_TYPE(sb)));
	json_str(j, "data_checksum_type", bch_csum_opt_name((unsigned)BCH_SB_DATA_CSUM_TYPE(sb)));
	json_str(j, "compression_type", bch_compression_opt_name((unsigned)BCH_SB_COMPRESSION_TYPE(sb)));
	json_str(j, "background_compression_type",
		 bch_compression_opt_name((unsigned)BCH_SB_BACKGROUND_COMPRESSION_TYPE(sb)));
	json_u64(j, "foreground_target", BCH_SB_FOREGROUND_TARGET(sb));
	json_u64(j, "background_target", BCH_SB_BACKGROUND_TARGET(sb));
	json_u64(j, "promote_target", BCH_SB_PROMOTE_TARGET(sb));
	json_str(j, "str_hash_type", bch_str_hash_name((unsigned)BCH_SB_STR_HASH_TYPE(sb)));
	json_bool(j, "inodes_32bit", BCH_SB_INODE_32BIT(sb));
	json_u64(j, "gc_reserve_percent", BCH_SB_GC_RESERVE(sb));
	json_u64(j, "root_reserve_percent", BCH_SB_ROOT_RESERVE(sb));
	json_u64(j, "encryption_type", BCH_SB_ENCRYPTION_TYPE(sb));
	json_u64(j, "superblock_checksum_type", BCH_SB_CSUM_TYPE(sb));
	json_u64(j, "devices_live", bch_sb_nr_live_members(sb));
	{
		const struct bch_sb_field *f;

		json_arr_begin(j, "sections");
		for (unsigned t = 0; t < BCH_SB_FIELD_NR; t++)
			for_each_sb_field_safe(f, sb)
				if (le32_to_cpu(f->type) == t) {
					json_str(j, NULL, bch_sb_field_name(t));
					break;
				}
		json_arr_end(j);
	}
	json_u64(j, "devices_total", sb->nr_devices);
	json_u64(j, "dev_idx", sb->dev_idx);
	json_u64(j, "superblock_size", bch_sb_bytes(sb));
}

void bch_sb_to_json(struct printbuf *out, const struct bch_sb *sb, unsigned flags,
		    bool pretty)
{
	const struct bch_sb_field *f;
	struct json j;

	json_init(&j, out, pretty);
	json_obj_begin(&j, NULL);
	sb_main_to_json(&j, sb);
	if (flags & BCH_SB_PRINT_LAYOUT)
		layout_to_json(&j, &sb->layout);
	json_arr_begin(&j, "fields");
	for_each_sb_field_safe(f, sb)
		if (field_selected(flags, le32_to_cpu(f->type)))
			field_to_json(&j, sb, f);
	json_arr_end(&j);
	json_obj_end(&j);
}
