// SPDX-License-Identifier: GPL-2.0
/*
 * Xattr values (doc/format.md §5.7).
 */
#include "format/format.h"
#include "bkey/xattr.h"

#include <string.h>

#include "util/errcode.h"
#include "util/util.h"

const char *bch_xattr_prefix(unsigned x_type)
{
	switch (x_type) {
	case BCH_XATTR_INDEX_USER:	return "user.";
	case BCH_XATTR_INDEX_TRUSTED:	return "trusted.";
	case BCH_XATTR_INDEX_SECURITY:	return "security.";
	default:			return NULL;
	}
}

int bch_xattr_decode(const struct bkey_ref *k, struct bch_xattr_h *x)
{
	const uint8_t *v = k->v;
	size_t need;

	memset(x, 0, sizeof(*x));
	if (!v || k->v_bytes < sizeof(struct bch_xattr))
		return -BCH_ERR_key_invalid;
	x->x_type   = v[0];
	x->name_len = v[1];
	x->val_len  = get_le16_unaligned(v + 2);
	need = offsetof(struct bch_xattr, x_name) + (size_t)x->name_len + x->val_len;
	if (need > k->v_bytes)
		return -BCH_ERR_key_invalid;
	x->name = v + offsetof(struct bch_xattr, x_name);
	x->val	= x->name + x->name_len;
	return 0;
}

size_t bch_xattr_encode(unsigned x_type, const void *name, size_t name_len,
			const void *val, size_t val_len, void *out, size_t out_size)
{
	size_t bytes = (size_t)bch_xattr_val_u64s(name_len, val_len) * 8;
	uint8_t *o = out;

	if (name_len > 255 || val_len > UINT16_MAX || bytes > out_size)
		return 0;
	memset(o, 0, bytes);
	o[0] = (uint8_t)x_type;
	o[1] = (uint8_t)name_len;
	o[2] = (uint8_t)val_len;
	o[3] = (uint8_t)(val_len >> 8);
	memcpy(o + 4, name, name_len);
	if (val_len)
		memcpy(o + 4 + name_len, val, val_len);
	return bytes;
}

const char *bch_xattr_invalid(const struct bkey_ref *k)
{
	const uint8_t *v = k->v;
	unsigned want;

	switch (k->k.type) {
	case BCH_XATTR:
		if (!v || k->v_bytes < sizeof(struct bch_xattr))
			return "value too small";
		want = bch_xattr_val_u64s(v[1], get_le16_unaligned(v + 2));
		if (k->v_bytes / 8 < want)
			return "value too small";
		if (k->v_bytes / 8 > want)
			return "value too big";
		if (v[0] >= BCH_XATTR_INDEX_NR)
			return "invalid type";
		if (memchr(v + 4, '\0', v[1]))
			return "xattr name has invalid characters";
		return NULL;
	case BCH_XATTR_WHITEOUT:
		return k->v_bytes ? "value size should be zero" : NULL;
	default:
		return "invalid type";
	}
}

void bch_xattr_to_text(struct printbuf *out, const struct bkey_ref *k)
{
	struct bch_xattr_h x;
	const char *prefix;

	switch (k->k.type) {
	case BCH_XATTR:
		if (bch_xattr_decode(k, &x))
			return;
		prefix = bch_xattr_prefix(x.x_type);
		if (prefix)
			pr_str(out, prefix);
		else if (x.x_type < BCH_XATTR_INDEX_NR)
			pr_buf(out, "(type %u)", x.x_type);
		else
			pr_buf(out, "(unknown type %u)", x.x_type);
		pr_bytes(out, x.name, x.name_len);
		pr_char(out, ':');
		pr_bytes(out, x.val, x.val_len);
		break;
	case BCH_XATTR_WHITEOUT:
		pr_str(out, "whiteout");
		break;
	}
}

void bch_xattr_to_json(struct json *j, const struct bkey_ref *k)
{
	struct bch_xattr_h x;
	const char *prefix;

	if (k->k.type != BCH_XATTR || bch_xattr_decode(k, &x))
		return;
	prefix = bch_xattr_prefix(x.x_type);
	json_u64(j, "x_type", x.x_type);
	if (prefix)
		json_str(j, "prefix", prefix);
	json_strn(j, "name", (const char *)x.name, x.name_len);
	json_strn(j, "value", (const char *)x.val, x.val_len);
}
