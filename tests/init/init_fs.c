// SPDX-License-Identifier: GPL-2.0
/*
 * Test driver for bch_fs_initialize(): open the devices read-write, as
 * `format`/`fsck -y` will once the lead wires it in, and initialise.
 *   init_fs [--passphrase-file F] [--no-lost-found] DEV...
 * Exit 0 on success; the library's message on stderr otherwise.
 */
#include <stdio.h>
#include <string.h>

#include "util/errcode.h"
#include "fs/fs.h"
#include "fs/init.h"
#include "util/util.h"

int main(int argc, char **argv)
{
	struct bch_fs_opts opts = { 0 };
	struct bch_init_opts iopts = { 0 };
	struct printbuf err = PRINTBUF;
	struct bch_fs *c;
	int i = 1, ret;

	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--passphrase-file") && i + 1 < argc)
			opts.passphrase_file = argv[++i];
		else if (!strcmp(argv[i], "--no-lost-found"))
			iopts.no_lost_found = true;
		else {
			fprintf(stderr, "unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "usage: init_fs [--passphrase-file F] [--no-lost-found] DEV...\n");
		return 2;
	}
	ret = bch_fs_open(argv + i, (unsigned)(argc - i), &opts, &c, &err);
	if (!ret) {
		ret = bch_fs_initialize_opts(c, &iopts, &err);
		bch_fs_close(c);
	}
	if (printbuf_str(&err)[0])
		fputs(printbuf_str(&err), stderr);
	if (ret)
		fprintf(stderr, "init_fs: %s\n", bch_err_str(ret));
	printbuf_exit(&err);
	return ret ? 1 : 0;
}
