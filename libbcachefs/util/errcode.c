// SPDX-License-Identifier: GPL-2.0
#include "util/errcode.h"

#include <stdlib.h>
#include <string.h>

static const struct {
	int		class;
	const char	*msg;
} bch_errs[] = {
#define x(name, class, msg) [BCH_ERR_##name - BCH_ERR_START] = { class, msg },
	BCH_ERRCODES()
#undef x
};

static int err_index(int err)
{
	err = abs(err);
	return err >= BCH_ERR_START && err < BCH_ERR_MAX ? err - BCH_ERR_START : -1;
}

const char *bch_err_str(int err)
{
	int i = err_index(err);

	return i >= 0 ? bch_errs[i].msg : strerror(abs(err));
}

int bch_err_errno(int err)
{
	int i = err_index(err);

	return i >= 0 ? bch_errs[i].class : abs(err);
}

bool bch_err_matches(int err, int class)
{
	return err && bch_err_errno(err) == abs(class);
}
