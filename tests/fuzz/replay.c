// SPDX-License-Identifier: GPL-2.0
/*
 * A main() for a fuzz target without libFuzzer: runs the target once on
 * every file named, so the normal
 * and the ASan builds run the corpus and the regression inputs too
 * (build/tests/fuzz/replay_<target>, tests/fuzz/test_fuzz_replay.sh).
 * Prints "N inputs"; a crash or sanitizer report ends the run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long nr_inputs;

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, size = 0, n;

	if (!f) {
		perror(path);
		return 1;
	}
	do {
		if (len == size) {
			size = size ? 2 * size : 65536;
			buf = xrealloc(buf, size);
		}
		n = fread(buf + len, 1, size - len, f);
		len += n;
	} while (n);
	fclose(f);
	if (getenv("REPLAY_VERBOSE"))
		fprintf(stderr, "%s\n", path);
	/* an exact-size copy, so that reads past the input are ASan reports */
	{
		uint8_t *exact = xmalloc(len ? len : 1);

		memcpy(exact, buf, len);
		free(buf);
		LLVMFuzzerTestOneInput(exact, len);
		free(exact);
	}
	nr_inputs++;
	return 0;
}

int main(int argc, char **argv)
{
	int ret = 0;

	for (int i = 1; i < argc && !ret; i++)
		ret = run_file(argv[i]);
	printf("%lu inputs\n", nr_inputs);
	return ret;
}
