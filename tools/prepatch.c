/* SPDX-License-Identifier: MIT */
/*
 * prepatch.c - `switchyard prepatch FILE [-o OUT]`: write every static key
 * site's initial form into the file, as the kernel's objtool does at
 * build time, so that the program writes no code at start-up.
 *
 * A site is assembled as a jump to its out-of-line code; the library
 * turns it into its TEST form at registration wherever the key's state
 * asks for the straight-line path (src/registry.c). Written here instead,
 * the file's text pages need no write at start-up: they stay shared with
 * every other process that maps the file, start-up does no patching work,
 * and a debugger's breakpoint planted before `run` sits on the final
 * bytes. A prepatched file still works whatever its keys do later (the
 * library takes either form at registration), and prepatching it again
 * changes nothing.
 *
 * What is written, per site (the rule the library applies, jump when the
 * key's state differs from the site's likely bit):
 *
 *   key defined in the file   initial   likely   site becomes
 *   yes                       off       no       TEST  (a8 / a9 + rel)
 *   yes                       on        no       JMP   (as assembled)
 *   yes                       off       yes      JMP
 *   yes                       on        yes      TEST
 *   no (another object)       unknown            left as assembled
 *
 * Left as assembled, because their final form is only known at run time:
 * sites of keys defined elsewhere, static call sites (they hold the
 * address of a per-process rseq descriptor and the thread pointer offset
 * of the rseq area), alternatives (the CPU's features) and run-time
 * constants (a value computed at start-up).
 *
 * Every site must hold one of its two forms to its own target; any other
 * byte and nothing is written (the file was changed by something else).
 * The output is written to a temporary file beside it, then renamed over
 * it: a reader of the file (a running program maps it) never sees a half
 * write, and a failure leaves the old file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/sy_elf.h"
#include "records.h"
#include "tool.h"

#define OP_JMP8 0xeb
#define OP_JMP32 0xe9
#define OP_TEST8 0xa8
#define OP_TEST32 0xa9

static int read_all(const char *path, uint8_t **buf, size_t *size,
		    mode_t *mode)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return -ENOEXEC;
	}
	*mode = st.st_mode & 07777;
	*size = (size_t)st.st_size;
	/* 8-byte aligned, as the ELF readers want */
	*buf = aligned_alloc(8, (*size + 7) & ~(size_t)7);
	if (!*buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < *size) {
		ssize_t n = read(fd, *buf + got, *size - got);

		if (n <= 0) {
			int r = n < 0 ? -errno : -EIO;

			free(*buf);
			close(fd);
			return r;
		}
		got += (size_t)n;
	}
	close(fd);
	return 0;
}

/* Write buf to path through a temporary file beside it and rename(). */
static int write_all(const char *path, const uint8_t *buf, size_t size,
		     mode_t mode)
{
	size_t len = strlen(path) + 16, done = 0;
	char *tmp = malloc(len);
	int fd, r = 0;

	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, len, "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		r = -errno;
		free(tmp);
		return r;
	}
	while (!r && done < size) {
		ssize_t n = write(fd, buf + done, size - done);

		if (n <= 0)
			r = n < 0 ? -errno : -EIO;
		else
			done += (size_t)n;
	}
	if (!r && (fchmod(fd, mode) || fsync(fd)))
		r = -errno;
	if (close(fd) && !r)
		r = -errno;
	if (!r && rename(tmp, path))
		r = -errno;
	if (r)
		unlink(tmp);
	free(tmp);
	return r;
}

struct counts {
	size_t sites, written, already, elsewhere;
};

/* "func+0x12" of addr, or "0x..." */
static void site_name(const struct sy_syms *syms, uint64_t addr, char *buf,
		      size_t size)
{
	const struct sy_sym *fn = sy_syms_find(syms, addr, true);
	char *owned;

	if (!fn) {
		snprintf(buf, size, "0x%llx", (unsigned long long)addr);
		return;
	}
	snprintf(buf, size, "%s+0x%llx (0x%llx)", demangle(fn->name, &owned),
		 (unsigned long long)(addr - fn->addr),
		 (unsigned long long)addr);
	free(owned);
}

/* Bring every site of rec to its initial form in img; 0, or 1 with a
 * message (then img may be half-changed: the caller writes nothing). */
static int prepatch(const char *path, uint8_t *img, size_t size,
		    const struct sy_records *rec, const struct sy_syms *syms,
		    struct counts *c)
{
	for (size_t i = 0; i < rec->nkeys; i++) {
		const struct sy_rec_key *k = &rec->keys[i];

		for (size_t j = 0; j < k->nsites; j++) {
			const struct sy_rec_site *s = &k->sites[j];
			char where[512];
			uint8_t want;

			c->sites++;
			if (!s->len || s->off + s->len > size) {
				char *owned;

				site_name(syms, s->addr, where, sizeof(where));
				fprintf(stderr, "switchyard: %s: site %s of key "
					"%s holds neither the jump the "
					"compiler emitted nor its TEST form: "
					"nothing written\n", path, where,
					demangle(k->name, &owned));
				free(owned);
				return 1;
			}
			if (k->initial < 0) {
				c->elsewhere++;
				continue;
			}
			if ((k->initial != 0) != (s->likely != 0))
				want = s->len == 2 ? OP_JMP8 : OP_JMP32;
			else
				want = s->len == 2 ? OP_TEST8 : OP_TEST32;
			if (img[s->off] == want) {
				c->already++;
				continue;
			}
			img[s->off] = want;
			c->written++;
		}
	}
	return 0;
}

int cmd_prepatch(const char *in, const char *out, bool json)
{
	struct sy_records rec;
	struct sy_syms syms = { 0 };
	struct counts c = { 0, 0, 0, 0 };
	uint8_t *img = NULL;
	size_t size = 0;
	mode_t mode = 0;
	int r = read_all(in, &img, &size, &mode);

	if (r) {
		fprintf(stderr, "switchyard: %s: %s\n", in,
			r == -ENOEXEC ? "not a regular, non-empty file"
				      : strerror(-r));
		return 1;
	}
	r = sy_records_read(img, size, &rec);
	if (r) {
		fprintf(stderr, "switchyard: %s: %s\n", in,
			r == -ENOEXEC ? rec.why : strerror(-r));
		free(img);
		return 1;
	}
	(void)sy_syms_parse(img, size, 0, &syms);	/* names: a bonus */
	r = prepatch(in, img, size, &rec, &syms, &c);
	if (!r && (c.written || out)) {
		int w = write_all(out ? out : in, img, size, mode);

		if (w) {
			fprintf(stderr, "switchyard: %s: %s: nothing written\n",
				out ? out : in, strerror(-w));
			r = 1;
		}
	}
	if (!r && json) {
		printf("{\"file\": ");
		json_str(stdout, in);
		printf(", \"output\": ");
		json_str(stdout, out ? out : in);
		printf(", \"sites\": %zu, \"written\": %zu, \"already\": %zu, "
		       "\"elsewhere\": %zu, \"static_calls\": %zu, "
		       "\"alternatives\": %zu, \"runtime_consts\": %zu}\n",
		       c.sites, c.written, c.already, c.elsewhere, rec.ncalls,
		       rec.nalts, rec.nrcs);
	} else if (!r) {
		printf("%s: %zu static key site%s: %zu prepatched, %zu already "
		       "in their initial form, %zu of keys defined in other "
		       "objects left as compiled\n", out ? out : in, c.sites,
		       c.sites == 1 ? "" : "s", c.written, c.already,
		       c.elsewhere);
		if (rec.ncalls || rec.nalts || rec.nrcs)
			printf("left as compiled, chosen at run time: %zu "
			       "static call site%s, %zu alternative%s, %zu "
			       "run-time constant site%s\n", rec.ncalls,
			       rec.ncalls == 1 ? "" : "s", rec.nalts,
			       rec.nalts == 1 ? "" : "s", rec.nrcs,
			       rec.nrcs == 1 ? "" : "s");
	}
	sy_syms_free(&syms);
	sy_records_free(&rec);
	free(img);
	return r;
}
