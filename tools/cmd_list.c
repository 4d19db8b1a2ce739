/* SPDX-License-Identifier: MIT */
/*
 * cmd_list.c - `switchyard list FILE|PID [--json]`.
 *
 * Of an ELF executable or shared object, x86-64 or AArch64 whatever the
 * tool's own machine (records.c reads it): the static keys, with name,
 * initial state, description and sites, per site its address,
 * function+offset, file:line (with debug information), bytes and
 * disassembly (insn.c); then the static call sites, the alternatives and
 * the run-time constant sites, each with its function+offset and
 * file:line, and in an AArch64 file their instructions too.
 *
 * Of a live process (an operand of digits only; a file named so is
 * ./123): what its library says over the control socket (client.c), the
 * keys and their sites in the same table as a file's, then the static
 * calls.
 *
 * Exit status: 0 done, 1 the file could not be read or is malformed, or
 * the process could not be reached (a message on stderr says why), 2
 * usage.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <switchyard.h>

#include "../src/sy_dwarf.h"
#include "../src/sy_elf.h"
#include "../src/sy_names.h"
#include "client.h"
#include "cmds.h"
#include "insn.h"
#include "records.h"
#include "util.h"

/* ---- a file ------------------------------------------------------------ */

struct file {
	uint8_t *img;
	size_t size;
};

/* O_NONBLOCK: a FIFO (or a device) at path must not block the open; it
 * is then refused as not a regular file. */
static int map_file(const char *path, struct file *f)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	void *p;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return -ENOEXEC;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	f->img = p;
	f->size = (size_t)st.st_size;
	return 0;
}

/* The instruction at site s as text, or "(not decoded)" */
static void site_text(struct insn_dis *d, const struct sy_rec_site *s,
		      char *buf, size_t size)
{
	insn_text(d, s->bytes, s->len ? s->len : s->nbytes, s->addr, buf,
		  size);
}

/* n bytes as "xx xx ..." in buf (cut at size) */
static void hex_bytes(const uint8_t *b, size_t n, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = 0;
	for (size_t i = 0; i < n && used + 4 <= size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%02x",
					 i ? " " : "", b[i]);
}

/*
 * An AArch64 static call site's instruction (its BL, as compiled to its
 * veneer; or whatever the file holds): text "  bl #0x7f0 (veneer)", or
 * the JSON fields "bytes", "disasm", "veneer".
 */
static void call_insn(struct insn_dis *d, const struct sy_rec_call *c,
		      bool json)
{
	char dis[256] = "(not in the file)", bytes[16] = "";
	bool to_veneer = false;

	if (c->insn) {
		uint32_t w = a64_word(c->insn);

		insn_text(d, c->insn, 4, c->addr, dis, sizeof(dis));
		hex_bytes(c->insn, 4, bytes, sizeof(bytes));
		to_veneer = c->veneer && (w & A64_BRANCH_MASK) == A64_BL &&
			    a64_branch_target(w, c->addr) == c->veneer;
	}
	if (json) {
		printf(", \"bytes\": \"%s\", \"disasm\": ", bytes);
		json_str(stdout, dis);
		if (c->veneer)
			printf(", \"veneer\": \"0x%llx\"",
			       (unsigned long long)c->veneer);
		else
			printf(", \"veneer\": null");
	} else {
		printf("  %s%s", dis, to_veneer ? " (veneer)" : "");
	}
}

/* n bytes of code at addr (NULL: not in the file) as text in buf */
static void code_text(struct insn_dis *d, const uint8_t *b, size_t n,
		      uint64_t addr, char *buf, size_t size)
{
	if (!b)
		snprintf(buf, size, "(not in the file)");
	else if (!n)
		snprintf(buf, size, "(none)");
	else
		insn_text_all(d, b, n, addr, buf, size);
}

/*
 * After the keys: the static call sites, the alternatives and the
 * run-time constant sites of rec, as tables or as the JSON's other
 * arrays. In an AArch64 file each also shows its instructions (a static
 * call site's BL, an alternative's site and replacement, a run-time
 * constant's instructions up to the one with the immediate); an x86-64
 * file's listing is the one it always was.
 */
static void list_others(const struct sy_records *rec,
			const struct sy_syms *syms,
			const struct sy_lines *lines, struct insn_dis *d,
			bool json)
{
	bool a64 = rec->machine == EM_AARCH64;
	struct place pl;
	char buf[1024], code[1024];

	if (json)
		printf(", \"static_calls\": [");
	else if (rec->ncalls)
		printf("\n%zu static call site%s\n", rec->ncalls,
		       rec->ncalls == 1 ? "" : "s");
	for (size_t i = 0; i < rec->ncalls; i++) {
		const struct sy_rec_call *c = &rec->calls[i];
		char *tn_owned = NULL;
		const char *tn = c->target ? demangle(c->target, &tn_owned)
					   : NULL;

		place_find(&pl, syms, lines, c->addr);
		place_text(&pl, buf, sizeof(buf));
		if (json) {
			printf("%s\n  {\"name\": ", i ? "," : "");
			json_str(stdout, c->name);
			printf(", \"address\": \"0x%llx\", \"initial_target\": ",
			       (unsigned long long)c->addr);
			json_str_null(stdout, tn);
			printf(", \"callee_save\": %s, ",
			       c->callee_save ? "true" : "false");
			json_place(&pl);
			if (a64)
				call_insn(d, c, true);
			printf("}");
		} else {
			printf("  %-20s 0x%-8llx %-40s -> %s%s", c->name,
			       (unsigned long long)c->addr, buf,
			       tn ? tn : "(target in another object)",
			       c->callee_save ? "  callee-save" : "");
			if (a64)
				call_insn(d, c, false);
			printf("\n");
		}
		place_free(&pl);
		free(tn_owned);
	}
	if (json)
		printf("%s], \"alternatives\": [", rec->ncalls ? "\n" : "");
	else if (rec->nalts)
		printf("\n%zu alternative record%s\n", rec->nalts,
		       rec->nalts == 1 ? "" : "s");
	for (size_t i = 0; i < rec->nalts; i++) {
		const struct sy_rec_alt *a = &rec->alts[i];
		/* the library's names are its own machine's numbering */
		const char *fn = rec->machine == INSN_HOST_MACHINE ?
				 switchyard_cpu_feature_name(a->feature) : NULL;
		char feat[48];

		snprintf(feat, sizeof(feat), "%s%s", a->absent ? "!" : "",
			 fn ? fn : "?");
		if (!fn)
			snprintf(feat, sizeof(feat), "%sfeature %u",
				 a->absent ? "!" : "", a->feature);
		place_find(&pl, syms, lines, a->addr);
		place_text(&pl, buf, sizeof(buf));
		if (json) {
			printf("%s\n  {\"address\": \"0x%llx\", \"feature\": ",
			       i ? "," : "", (unsigned long long)a->addr);
			json_str(stdout, feat);
			printf(", \"length\": %u, \"replacement_length\": %u, ",
			       a->len, a->repl_len);
			json_place(&pl);
			if (a64) {
				code_text(d, a->bytes, a->len, a->addr, code,
					  sizeof(code));
				printf(", \"disasm\": ");
				json_str(stdout, code);
				code_text(d, a->repl_bytes, a->repl_len,
					  a->repl, code, sizeof(code));
				printf(", \"replacement_disasm\": ");
				json_str(stdout, code);
			}
			printf("}");
		} else {
			printf("  0x%-8llx %-40s %2u bytes  if %s: %u bytes\n",
			       (unsigned long long)a->addr, buf, a->len, feat,
			       a->repl_len);
			if (a64) {
				code_text(d, a->bytes, a->len, a->addr, code,
					  sizeof(code));
				printf("      site:  %s\n", code);
				code_text(d, a->repl_bytes, a->repl_len,
					  a->repl, code, sizeof(code));
				printf("      if %s: %s\n", feat, code);
			}
		}
		place_free(&pl);
	}
	if (json)
		printf("%s], \"runtime_consts\": [", rec->nalts ? "\n" : "");
	else if (rec->nrcs)
		printf("\n%zu run-time constant site%s\n", rec->nrcs,
		       rec->nrcs == 1 ? "" : "s");
	for (size_t i = 0; i < rec->nrcs; i++) {
		const struct sy_rec_rc *c = &rec->rcs[i];
		char *vn_owned;
		const char *vn = demangle(c->name, &vn_owned);

		place_find(&pl, syms, lines, c->addr);
		place_text(&pl, buf, sizeof(buf));
		if (a64)
			code_text(d, c->bytes, c->end, c->addr, code,
				  sizeof(code));
		if (json) {
			printf("%s\n  {\"name\": ", i ? "," : "");
			json_str(stdout, vn);
			printf(", \"address\": \"0x%llx\", \"size\": %u, ",
			       (unsigned long long)c->addr, c->size);
			json_place(&pl);
			if (a64) {
				printf(", \"disasm\": ");
				json_str(stdout, code);
			}
			printf("}");
		} else {
			printf("  %-20s 0x%-8llx %-40s %u-byte immediate\n", vn,
			       (unsigned long long)c->addr, buf, c->size);
			if (a64)
				printf("      %s\n", code);
		}
		place_free(&pl);
		free(vn_owned);
	}
	if (json)
		printf("%s]", rec->nrcs ? "\n" : "");
}

static int list_file(const char *path, bool json)
{
	struct sy_records rec;
	struct sy_syms syms = { 0 };
	struct sy_lines lines = { 0 };
	struct file f = { NULL, 0 };
	struct insn_dis dis;
	int r = map_file(path, &f);

	if (r) {
		fprintf(stderr, "switchyard: %s: %s\n", path,
			r == -ENOEXEC ? "not a regular, non-empty file"
				      : strerror(-r));
		return 1;
	}
	r = sy_records_read(f.img, f.size, &rec);
	if (r) {
		fprintf(stderr, "switchyard: %s: %s\n", path,
			r == -ENOEXEC ? rec.why : strerror(-r));
		munmap(f.img, f.size);
		return 1;
	}
	/* names and lines are a bonus: a file without them still lists */
	(void)sy_syms_parse(f.img, f.size, 0, &syms);
	(void)sy_lines_parse(f.img, f.size, 0, &lines);
	insn_dis_open(&dis, rec.machine);

	/* an x86-64 file's header is the one it always was */
	if (json)
		printf("{\"file\": "), json_str(stdout, path),
			printf(", \"machine\": \"%s\", \"keys\": [",
			       insn_machine_name(rec.machine));
	else
		printf("%s%s: %zu static key%s with %zu site%s, %zu static "
		       "call site%s, %zu alternative%s, %zu run-time constant "
		       "site%s\n", path,
		       rec.machine == EM_AARCH64 ? " (AArch64)" : "",
		       rec.nkeys, rec.nkeys == 1 ? "" : "s",
		       rec.nsites, rec.nsites == 1 ? "" : "s", rec.ncalls,
		       rec.ncalls == 1 ? "" : "s", rec.nalts,
		       rec.nalts == 1 ? "" : "s", rec.nrcs,
		       rec.nrcs == 1 ? "" : "s");
	for (size_t i = 0; i < rec.nkeys; i++) {
		const struct sy_rec_key *k = &rec.keys[i];
		const char *state = k->initial < 0 ? "unknown" :
				    k->initial ? "on" : "off";
		char *owned;
		const char *name = demangle(k->name, &owned);
		/* the library a copied key comes from, if it can be found */
		char *definer = k->copied ? sy_needed_definer(path, f.img,
							      f.size, k->copied)
					  : NULL;

		if (json) {
			printf("%s\n  {\"name\": ", i ? "," : "");
			json_str(stdout, name);
			printf(", \"address\": \"0x%llx\", \"defined\": %s, "
			       "\"copy_relocation\": %s, \"defined_in\": ",
			       (unsigned long long)k->addr,
			       k->addr && !k->copied ? "true" : "false",
			       k->copied ? "true" : "false");
			json_str_null(stdout, definer);
			printf(", \"initial\": \"%s\", \"description\": ",
			       state);
			json_str_null(stdout, k->description);
			printf(", \"sites\": [");
		} else {
			printf("\nkey ");
			sy_text_put(stdout, name);
			if (k->copied)
				printf(" (defined in %s, copied into this file "
				       "by a copy relocation)",
				       definer ? definer : "another object");
			else if (!k->addr)
				printf(" (defined in another object)");
			printf("  initial %s, %zu site%s\n", state, k->nsites,
			       k->nsites == 1 ? "" : "s");
			if (k->description) {
				printf("  -- ");
				sy_text_put(stdout, k->description);
				printf("\n");
			}
		}
		free(owned);
		free(definer);
		for (size_t j = 0; j < k->nsites; j++) {
			const struct sy_rec_site *s = &k->sites[j];
			char text[256], bytes[40] = "";
			struct place pl;

			place_find(&pl, &syms, &lines, s->addr);
			/* the bytes of the site as recognised (none: not a
			 * site's form) */
			for (unsigned b = 0; b < s->len; b++)
				snprintf(bytes + strlen(bytes),
					 sizeof(bytes) - strlen(bytes),
					 "%s%02x", b ? " " : "", s->bytes[b]);
			site_text(&dis, s, text, sizeof(text));
			if (json) {
				printf("%s\n    {\"address\": \"0x%llx\", ",
				       j ? "," : "",
				       (unsigned long long)s->addr);
				json_place(&pl);
				printf(", \"length\": %u, \"bytes\": \"%s\", "
				       "\"disasm\": ", s->len, bytes);
				json_str(stdout, text);
				printf(", \"likely\": %s}",
				       s->likely ? "true" : "false");
			} else {
				char where[512], loc[512];

				func_off(&pl, "?", where, sizeof(where));
				if (pl.file)
					snprintf(loc, sizeof(loc), "%s:%u",
						 pl.file, pl.line);
				else
					snprintf(loc, sizeof(loc), "-");
				printf("  0x%-8llx %-24s %-24s %-14s %-24s %s\n",
				       (unsigned long long)s->addr, where, loc,
				       bytes, text,
				       s->likely ? "likely" : "unlikely");
			}
			place_free(&pl);
		}
		if (json)
			printf("]}");
	}
	if (json)
		printf("\n]");
	list_others(&rec, &syms, &lines, &dis, json);
	if (json)
		printf("}\n");
	insn_dis_close(&dis);
	sy_lines_free(&lines);
	sy_syms_free(&syms);
	sy_records_free(&rec);
	munmap(f.img, f.size);
	return 0;
}

/* ---- a live process ----------------------------------------------------- */

/*
 * The machine of the ELF file at path (a live process's object, by the
 * path its library gives), or the tool's own when it cannot be read: the
 * bytes of a site are disassembled as that machine's code (an x86-64 tool
 * may talk to an AArch64 process run under qemu-user, whose socket it
 * reaches like any other).
 */
static unsigned object_machine(const char *path)
{
	static char last[4096];
	static unsigned last_machine;
	unsigned machine = INSN_HOST_MACHINE;
	Elf64_Ehdr eh;
	int fd;

	if (last_machine && !strcmp(path, last))
		return last_machine;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		if (read(fd, &eh, sizeof(eh)) == (ssize_t)sizeof(eh) &&
		    !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
		    eh.e_ident[EI_CLASS] == ELFCLASS64 &&
		    insn_machine_known(eh.e_machine))
			machine = eh.e_machine;
		close(fd);
	}
	snprintf(last, sizeof(last), "%s", path);
	last_machine = machine;
	return machine;
}

/* The disassembler of machine's code, opened once for the listing */
static struct insn_dis *live_dis(unsigned machine)
{
	static struct insn_dis dis[2];
	static bool opened[2];
	unsigned i = machine == EM_AARCH64;

	if (!opened[i]) {
		insn_dis_open(&dis[i], machine);
		opened[i] = true;
	}
	return &dis[i];
}

/* The sites of a key object of `list PID` ("site_list"), as `list FILE`
 * prints them: address, function+offset, file:line, bytes, disassembly. */
static void print_sites(const char *obj)
{
	const char *p = strstr(obj, "\"site_list\": [");
	struct insn_dis *d;
	char v[512], path[4096];

	if (!p)
		return;
	d = live_dis(reply_field(obj, "object", path, sizeof(path)) &&
		     *path ? object_machine(path) : INSN_HOST_MACHINE);
	while ((p = strstr(p, "{\"address\": "))) {
		const char *end = reply_obj_end(p);
		char *site = strndup(p, end ? (size_t)(end - p) + 1 : strlen(p));
		char fn[1100] = "?", where[1100] = "", bytes[40] = "", dis[200];
		unsigned long long addr = 0;
		uint8_t b[8];
		size_t nb = 0;

		if (!site)
			break;
		if (reply_field(site, "address", v, sizeof(v)))
			addr = strtoull(v, NULL, 16);
		/* the process's own function+offset, as its library spells
		 * it (src/introspect.c) */
		if (reply_field(site, "function", v, sizeof(v)) &&
		    strcmp(v, "null"))
			snprintf(fn, sizeof(fn), "%s+%#llx", v,
				 reply_field(site, "offset", where,
					     sizeof(where)) ?
				 strtoull(where, NULL, 10) : 0ull);
		where[0] = 0;
		if (reply_field(site, "file", v, sizeof(v)) &&
		    strcmp(v, "null"))
			snprintf(where, sizeof(where), "%s:%s", v,
				 reply_field(site, "line", dis, sizeof(dis)) ?
				 dis : "?");
		if (reply_field(site, "bytes", bytes, sizeof(bytes)))
			for (char *q = bytes; nb < sizeof(b) && *q; ) {
				char *e;
				unsigned long x = strtoul(q, &e, 16);

				if (e == q)
					break;
				b[nb++] = (uint8_t)x;
				q = e;
			}
		if (nb)
			insn_text(d, b, nb, addr, dis, sizeof(dis));
		else
			snprintf(dis, sizeof(dis), "(not mapped)");
		printf("    %#llx  %-24s %s  %-14s %-24s %s\n", addr, fn, where,
		       bytes, dis,
		       reply_field(site, "likely", v, sizeof(v)) &&
		       !strcmp(v, "true") ? "likely" : "unlikely");
		free(site);
		p = end ? end : p + strlen(p);
	}
}

static int list_pid(int pid, bool json)
{
	static const char *const cols[] = { "name", "enabled", "count",
					    "sites", "object" };
	static const char *const ccols[] = { "name", "target", "sites",
					     "targets" };
	char *reply, *calls;
	int r = ctl_request(pid, "list\n", &reply, false);

	if (r)
		return r;
	if (json) {
		fputs(reply, stdout);
	} else {
		/* keys, then the static calls (objects of the same shape) */
		calls = strstr(reply, "], \"calls\": [");
		if (calls)
			*calls++ = 0;
		r = print_reply(reply, cols, 5, print_sites);
		if (!r && calls && strstr(calls, "{\"name\": ")) {
			printf("static calls:\n");
			r = print_reply(calls, ccols, 4, NULL);
		}
	}
	free(reply);
	return r;
}

/* switchyard list FILE|PID */
int cmd_list(int argc, char **argv)
{
	int pid;

	(void)argc;
	/* digits are a PID (a file named so: ./123) */
	if (!looks_like_pid(argv[1]))
		return list_file(argv[1], json_output);
	return parse_pid(argv[1], &pid) ? 2 : list_pid(pid, json_output);
}
