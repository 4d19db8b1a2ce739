/* SPDX-License-Identifier: MIT */
/*
 * replay.c - a main() for the fuzz targets without libFuzzer (any
 * compiler; the default test suite): every file of the corpus directories
 * given, then `mutations` inputs made from them by a fixed-seed mutator
 * (bit flips, byte sets, truncations, splices of interesting values), each
 * through LLVMFuzzerTestOneInput(). A crash or abort() fails the test;
 * the program prints what it ran.
 *
 *   replay <mutations> <corpus dir>...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

struct input {
	unsigned char *p;
	size_t n;
};

static struct input *inputs;
static size_t ninputs;

static int load_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];

	if (!d) {
		perror(dir);
		return -1;
	}
	while ((e = readdir(d))) {
		FILE *f;
		long n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "rb");
		if (!f)
			continue;
		if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
		    fseek(f, 0, SEEK_SET)) {
			fclose(f);
			continue;
		}
		inputs = realloc(inputs, (ninputs + 1) * sizeof(*inputs));
		if (!inputs)
			abort();
		inputs[ninputs].p = malloc((size_t)n + 1);
		if (!inputs[ninputs].p ||
		    fread(inputs[ninputs].p, 1, (size_t)n, f) != (size_t)n) {
			fclose(f);
			free(inputs[ninputs].p);
			continue;
		}
		inputs[ninputs++].n = (size_t)n;
		fclose(f);
	}
	closedir(d);
	return 0;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	static const uint64_t interesting[] = {
		0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0xffff, 0x7fffffff,
		0xffffffff, 0x8000000000000000ull, ~0ull,
	};
	unsigned long mutations;
	unsigned char *buf;

	if (argc < 3) {
		fprintf(stderr, "usage: %s <mutations> <corpus dir>...\n",
			argv[0]);
		return 2;
	}
	mutations = strtoul(argv[1], NULL, 10);
	for (int i = 2; i < argc; i++)
		if (load_dir(argv[i]))
			return 2;
	if (!ninputs) {
		fprintf(stderr, "no corpus files\n");
		return 2;
	}
	for (size_t i = 0; i < ninputs; i++)
		LLVMFuzzerTestOneInput(inputs[i].p, inputs[i].n);
	for (unsigned long m = 0; m < mutations; m++) {
		const struct input *in = &inputs[next() % ninputs];
		size_t n = in->n, edits = 1 + next() % 8;

		buf = malloc(n ? n : 1);
		if (!buf)
			abort();
		memcpy(buf, in->p, n);
		for (size_t k = 0; k < edits && n; k++) {
			size_t at = next() % n;
			uint64_t v;

			switch (next() % 4) {
			case 0:
				buf[at] ^= (unsigned char)(1u << next() % 8);
				break;
			case 1:
				buf[at] = (unsigned char)next();
				break;
			case 2:
				n = at;	/* truncate */
				break;
			default:
				v = interesting[next() % (sizeof(interesting) /
							   sizeof(interesting[0]))];
				for (size_t b = 0; b < 8 && at + b < n; b++)
					buf[at + b] = (unsigned char)(v >> 8 * b);
				break;
			}
		}
		LLVMFuzzerTestOneInput(buf, n);
		free(buf);
	}
	printf("%s: %zu corpus inputs, %lu mutations: no crash\n", argv[0],
	       ninputs, mutations);
	return 0;
}
