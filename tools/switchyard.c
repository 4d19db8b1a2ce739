/* SPDX-License-Identifier: MIT */
/*
 * switchyard.c - the command line tool ([8/10]).
 *
 *   switchyard list FILE [--json]   the static keys recorded in an ELF
 *                                   executable or shared object: name,
 *                                   initial state, sites; per site its
 *                                   address, function+offset, file:line
 *                                   (with debug information), bytes and
 *                                   disassembly (capstone)
 *   switchyard cpu [--json]         the CPU features the library sees and
 *                                   the copy routine's thresholds
 *
 * Exit status: 0 done, 1 the file could not be read or is malformed (a
 * message on stderr names it and says why), 2 usage. Not yet: static calls,
 * alternatives and run-time constants in `list`, live processes, `set`,
 * `prepatch` (issue [8/10]).
 */
#include <capstone/capstone.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
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
#include "records.h"
#include "tool.h"

/* libstdc++'s demangler (C linkage), for C++ key and function names */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

const char *demangle(const char *name, char **owned)
{
	int st = -1;

	*owned = NULL;
	if (strncmp(name, "_Z", 2))
		return name;
	*owned = __cxa_demangle(name, NULL, NULL, &st);
	return st == 0 && *owned ? *owned : name;
}

void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static int usage(FILE *f, int rc)
{
	fprintf(f, "usage: switchyard list FILE|PID [--json]\n"
		   "       switchyard set PID GLOB on|off|inc|dec [--json]\n"
		   "       switchyard call PID GLOB TARGET [--json]\n"
		   "       switchyard ps [--json]\n"
		   "       switchyard prepatch FILE [-o OUT] [--json]\n"
		   "       switchyard cpu [--json]\n"
		   "       switchyard bench [--quick] [--json FILE] [--md FILE] "
		   "[--no-plots] [EXPERIMENT...]\n"
		   "       switchyard --help\n");
	return rc;
}

/* ---- live processes (<switchyard/control.h>) ----------------------------- */

/* Send one request line to process pid's control socket and read the
 * one-line reply into *reply (malloc'ed). 0, or 1 with a message. */
static int request(int pid, const char *line, char **reply)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	int fd, r = switchyard_control_path(pid, sa.sun_path,
					    sizeof(sa.sun_path));

	*reply = NULL;
	if (!buf)
		return 1;
	if (r) {
		fprintf(stderr, "switchyard: %d: %s\n", pid, strerror(-r));
		free(buf);
		return 1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "switchyard: process %d: no control socket "
			"(%s: %s); start it with SWITCHYARD_CONTROL=1 or "
			"switchyard_control_start()\n", pid, sa.sun_path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		free(buf);
		return 1;
	}
	if (send(fd, line, strlen(line), MSG_NOSIGNAL) != (ssize_t)strlen(line)) {
		fprintf(stderr, "switchyard: process %d: %s\n", pid,
			strerror(errno));
		close(fd);
		free(buf);
		return 1;
	}
	for (;;) {
		struct pollfd pf = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&pf, 1, 5000) <= 0) {
			fprintf(stderr, "switchyard: process %d: no reply in "
				"5 s\n", pid);
			break;
		}
		if (len + 1 >= cap) {
			char *b = realloc(buf, cap * 2);

			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - 1 - len, 0);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (memchr(buf, '\n', len)) {
			buf[len] = 0;
			close(fd);
			*reply = buf;
			return 0;
		}
	}
	fprintf(stderr, "switchyard: process %d: the reply was cut short\n",
		pid);
	close(fd);
	free(buf);
	return 1;
}

/* The replies are this library's JSON: find "key": and read its value. */
static const char *field(const char *obj, const char *key, char *val,
			 size_t size)
{
	char pat[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(obj, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	if (*p == '"') {
		for (p++; *p && *p != '"' && n + 1 < size; p++) {
			if (*p == '\\' && p[1])
				p++;
			val[n++] = *p;
		}
	} else if (*p == '[') {	/* an array of strings, as it is */
		for (bool str = false; *p && n + 1 < size; p++) {
			val[n++] = *p;
			if (str && *p == '\\' && p[1])
				val[n++] = *++p;
			else if (*p == '"')
				str = !str;
			else if (!str && *p == ']')
				break;
		}
	} else {
		while (*p && *p != ',' && *p != '}' && n + 1 < size)
			val[n++] = *p++;
	}
	val[n] = 0;
	return val;
}

/* The end of the JSON object at p: its '}', strings skipped (a description
 * may hold one); NULL if it does not end. */
static const char *obj_end(const char *p)
{
	int depth = 0;

	for (bool str = false; *p; p++) {
		if (str && *p == '\\' && p[1])
			p++;
		else if (*p == '"')
			str = !str;
		else if (!str && *p == '{')
			depth++;
		else if (!str && *p == '}' && --depth <= 0)
			return p;
	}
	return NULL;
}

/* The sites of a key object of `list PID` ("site_list"), as `list FILE`
 * prints them: address, function+offset, file:line, bytes, disassembly. */
static void print_sites(const char *obj)
{
	static csh cs;
	static bool cs_tried;
	const char *p = strstr(obj, "\"site_list\": [");
	char v[512];

	if (!p)
		return;
	if (!cs_tried) {
		cs_tried = true;
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
			cs = 0;
	}
	while ((p = strstr(p, "{\"address\": "))) {
		const char *end = obj_end(p);
		char *site = strndup(p, end ? (size_t)(end - p) + 1 : strlen(p));
		char fn[1100] = "?", where[1100] = "", bytes[40] = "", dis[200];
		unsigned long long addr = 0;
		uint8_t b[8];
		size_t nb = 0;
		cs_insn *insn;

		if (!site)
			return;
		if (field(site, "address", v, sizeof(v)))
			addr = strtoull(v, NULL, 16);
		if (field(site, "function", v, sizeof(v)) && strcmp(v, "null"))
			snprintf(fn, sizeof(fn), "%s+%#llx", v,
				 field(site, "offset", where, sizeof(where)) ?
				 strtoull(where, NULL, 10) : 0ull);
		where[0] = 0;
		if (field(site, "file", v, sizeof(v)) && strcmp(v, "null"))
			snprintf(where, sizeof(where), "%s:%s", v,
				 field(site, "line", dis, sizeof(dis)) ? dis : "?");
		if (field(site, "bytes", bytes, sizeof(bytes)))
			for (char *q = bytes; nb < sizeof(b) && *q; ) {
				char *e;
				unsigned long x = strtoul(q, &e, 16);

				if (e == q)
					break;
				b[nb++] = (uint8_t)x;
				q = e;
			}
		snprintf(dis, sizeof(dis), "(not mapped)");
		if (cs && nb && cs_disasm(cs, b, nb, addr, 1, &insn) == 1) {
			snprintf(dis, sizeof(dis), "%.31s %.159s",
				 insn[0].mnemonic, insn[0].op_str);
			cs_free(insn, 1);
		}
		printf("    %#llx  %-24s %s  %-14s %-24s %s\n", addr, fn, where,
		       bytes, dis,
		       field(site, "likely", v, sizeof(v)) && !strcmp(v, "true") ?
		       "likely" : "unlikely");
		free(site);
		p = end ? end : p + strlen(p);
	}
}

/* Print a reply's objects (one per "{\"name\"") as a table, or its error;
 * a description or an error, when there is one, after the columns. */
static int print_reply(const char *reply, const char *const *cols, int ncols)
{
	char v[512];
	const char *p = reply;

	if (field(reply, "error", v, sizeof(v)) && !strstr(reply, "\"name\"")) {
		fprintf(stderr, "switchyard: %s\n", v);
		return 1;
	}
	while ((p = strstr(p, "{\"name\": "))) {
		const char *end = obj_end(p);
		size_t n = end ? (size_t)(end - p) + 1 : strlen(p);
		char *obj = strndup(p, n);

		if (!obj)
			return 1;
		for (int c = 0; c < ncols; c++) {
			if (!field(obj, cols[c], v, sizeof(v)))
				snprintf(v, sizeof(v), "-");
			if (c)
				printf("  %s=%s", cols[c], v);
			else
				printf("%s", v);
		}
		if (field(obj, "description", v, sizeof(v)) ||
		    field(obj, "error", v, sizeof(v)))
			printf("  -- %s", v);
		printf("\n");
		print_sites(obj);
		free(obj);
		p += n;
	}
	return 0;
}

static bool is_pid(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

static int cmd_list_pid(int pid, bool json)
{
	static const char *const cols[] = { "name", "enabled", "count",
					    "sites", "object" };
	static const char *const ccols[] = { "name", "target", "sites",
					     "targets" };
	char *reply, *calls;
	int r = request(pid, "list\n", &reply);

	if (r)
		return r;
	if (json) {
		fputs(reply, stdout);
	} else {
		/* keys, then the static calls (objects of the same shape) */
		calls = strstr(reply, "], \"calls\": [");
		if (calls)
			*calls++ = 0;
		r = print_reply(reply, cols, 5);
		if (!r && calls && strstr(calls, "{\"name\": ")) {
			printf("static calls:\n");
			r = print_reply(calls, ccols, 4);
		}
	}
	free(reply);
	return r;
}

static int cmd_call(int pid, const char *glob, const char *target, bool json)
{
	static const char *const cols[] = { "name", "result", "target" };
	char line[2100], *reply, v[256];
	int r;

	if (strlen(glob) > 1000 || strpbrk(glob, " \t\r\n") ||
	    strlen(target) > 1000 || strpbrk(target, " \t\r\n")) {
		fprintf(stderr, "switchyard: a call pattern and a target are "
			"one word of at most 1000 bytes each\n");
		return 2;
	}
	snprintf(line, sizeof(line), "call %s %s\n", glob, target);
	r = request(pid, line, &reply);
	if (r)
		return r;
	if (json)
		fputs(reply, stdout);
	else
		r = print_reply(reply, cols, 3);
	/* any call left alone, or an error for the whole request: 1 */
	if (field(reply, "error", v, sizeof(v)) ||
	    strstr(reply, "\"result\": -"))
		r = 1;
	free(reply);
	return r;
}

static int cmd_set(int pid, const char *glob, const char *action, bool json)
{
	static const char *const cols[] = { "name", "enabled", "count",
					    "result" };
	char line[1100], *reply, v[256];
	int r;

	if (strlen(glob) > 1000 || strpbrk(glob, " \t\r\n")) {
		fprintf(stderr, "switchyard: a key pattern is one word of at "
			"most 1000 bytes\n");
		return 2;
	}
	snprintf(line, sizeof(line), "set %s %s\n", glob, action);
	r = request(pid, line, &reply);
	if (r)
		return r;
	if (json) {
		fputs(reply, stdout);
		r = field(reply, "error", v, sizeof(v)) ? 1 : 0;
	} else {
		r = print_reply(reply, cols, 4);
	}
	free(reply);
	return r;
}

static int cmd_ps(bool json)
{
	char path[200], dir[4096];
	struct dirent *e;
	DIR *d;
	int n = 0;

	if (switchyard_control_path(1, path, sizeof(path)))
		return 1;
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = 0;
	d = opendir(dir);
	if (json)
		printf("[");
	while (d && (e = readdir(d))) {
		char comm[64] = "?", proc[64];
		int pid;
		FILE *f;

		if (sscanf(e->d_name, "%d.sock", &pid) != 1 || pid <= 0)
			continue;
		snprintf(proc, sizeof(proc), "/proc/%d/comm", pid);
		f = fopen(proc, "r");
		if (!f)
			continue;	/* a socket left by a dead process */
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
		if (json) {
			printf("%s{\"pid\": %d, \"command\": ", n ? ", " : "",
			       pid);
			json_str(stdout, comm);
			printf("}");
		} else {
			printf("%d\t%s\n", pid, comm);
		}
		n++;
	}
	if (d)
		closedir(d);
	if (json)
		printf("]\n");
	return 0;
}

struct file {
	uint8_t *img;
	size_t size;
};

static int map_file(const char *path, struct file *f)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
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

static void site_text(csh cs, const struct sy_rec_site *s, char *buf,
		      size_t size)
{
	cs_insn *insn;
	size_t n = 0;

	buf[0] = 0;
	if (cs && s->nbytes)
		n = cs_disasm(cs, s->bytes, s->len ? s->len : s->nbytes,
			      s->addr, 1, &insn);
	if (n) {
		/* capstone's fields are 32 and 160 bytes: the sum fits */
		snprintf(buf, size, "%.31s %.159s", insn[0].mnemonic,
			 insn[0].op_str);
		cs_free(insn, n);
	} else {
		snprintf(buf, size, "(not decoded)");
	}
}

/* "func+0x12 file:line" of addr, for the other record kinds */
static void where(const struct sy_syms *syms, const struct sy_lines *lines,
		  uint64_t addr, char *buf, size_t size, const char **fname,
		  char **owned, unsigned long long *off, const char **file,
		  unsigned *line)
{
	const struct sy_sym *fn = sy_syms_find(syms, addr, true);
	const struct sy_line_row *ln = sy_lines_find(lines, addr);

	*fname = fn ? demangle(fn->name, owned) : NULL;
	if (!fn)
		*owned = NULL;
	*off = fn ? addr - fn->addr : 0;
	*file = ln && ln->line && ln->file < lines->nfiles ?
		lines->files[ln->file] : NULL;
	*line = *file ? ln->line : 0;
	snprintf(buf, size, "%s+0x%llx %s%s%u", *fname ? *fname : "?", *off,
		 *file ? *file : "-", *file ? ":" : "", *line);
	if (!*file)
		buf[strlen(buf) - 1] = 0;	/* the line's 0 */
}

static void json_where(const char *fname, unsigned long long off,
		       const char *file, unsigned line)
{
	printf("\"function\": ");
	if (fname)
		json_str(stdout, fname);
	else
		printf("null");
	printf(", \"offset\": %llu, \"file\": ", off);
	if (file)
		json_str(stdout, file);
	else
		printf("null");
	printf(", \"line\": %u", line);
}

static void list_others(const struct sy_records *rec,
			const struct sy_syms *syms,
			const struct sy_lines *lines, bool json)
{
	char buf[1024], *owned;
	const char *fname, *file;
	unsigned long long off;
	unsigned line;

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

		where(syms, lines, c->addr, buf, sizeof(buf), &fname, &owned,
		      &off, &file, &line);
		if (json) {
			printf("%s\n  {\"name\": ", i ? "," : "");
			json_str(stdout, c->name);
			printf(", \"address\": \"0x%llx\", \"initial_target\": ",
			       (unsigned long long)c->addr);
			if (tn)
				json_str(stdout, tn);
			else
				printf("null");
			printf(", \"callee_save\": %s, ",
			       c->callee_save ? "true" : "false");
			json_where(fname, off, file, line);
			printf("}");
		} else {
			printf("  %-20s 0x%-8llx %-40s -> %s%s\n", c->name,
			       (unsigned long long)c->addr, buf,
			       tn ? tn : "(target in another object)",
			       c->callee_save ? "  callee-save" : "");
		}
		free(owned);
		free(tn_owned);
	}
	if (json)
		printf("%s], \"alternatives\": [", rec->ncalls ? "\n" : "");
	else if (rec->nalts)
		printf("\n%zu alternative record%s\n", rec->nalts,
		       rec->nalts == 1 ? "" : "s");
	for (size_t i = 0; i < rec->nalts; i++) {
		const struct sy_rec_alt *a = &rec->alts[i];
		const char *fn = switchyard_cpu_feature_name(a->feature);
		char feat[48];

		snprintf(feat, sizeof(feat), "%s%s", a->absent ? "!" : "",
			 fn ? fn : "?");
		if (!fn)
			snprintf(feat, sizeof(feat), "%sfeature %u",
				 a->absent ? "!" : "", a->feature);
		where(syms, lines, a->addr, buf, sizeof(buf), &fname, &owned,
		      &off, &file, &line);
		if (json) {
			printf("%s\n  {\"address\": \"0x%llx\", \"feature\": ",
			       i ? "," : "", (unsigned long long)a->addr);
			json_str(stdout, feat);
			printf(", \"length\": %u, \"replacement_length\": %u, ",
			       a->len, a->repl_len);
			json_where(fname, off, file, line);
			printf("}");
		} else {
			printf("  0x%-8llx %-40s %2u bytes  if %s: %u bytes\n",
			       (unsigned long long)a->addr, buf, a->len, feat,
			       a->repl_len);
		}
		free(owned);
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

		where(syms, lines, c->addr, buf, sizeof(buf), &fname, &owned,
		      &off, &file, &line);
		if (json) {
			printf("%s\n  {\"name\": ", i ? "," : "");
			json_str(stdout, vn);
			printf(", \"address\": \"0x%llx\", \"size\": %u, ",
			       (unsigned long long)c->addr, c->size);
			json_where(fname, off, file, line);
			printf("}");
		} else {
			printf("  %-20s 0x%-8llx %-40s %u-byte immediate\n", vn,
			       (unsigned long long)c->addr, buf, c->size);
		}
		free(owned);
		free(vn_owned);
	}
	if (json)
		printf("%s]", rec->nrcs ? "\n" : "");
}

static int cmd_list(const char *path, bool json)
{
	struct sy_records rec;
	struct sy_syms syms = { 0 };
	struct sy_lines lines = { 0 };
	struct file f = { NULL, 0 };
	csh cs = 0;
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
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		cs = 0;

	if (json)
		printf("{\"file\": "), json_str(stdout, path),
			printf(", \"keys\": [");
	else
		printf("%s: %zu static key%s with %zu site%s, %zu static call "
		       "site%s, %zu alternative%s, %zu run-time constant "
		       "site%s\n", path, rec.nkeys, rec.nkeys == 1 ? "" : "s",
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

		if (json) {
			printf("%s\n  {\"name\": ", i ? "," : "");
			json_str(stdout, name);
			printf(", \"address\": \"0x%llx\", \"defined\": %s, "
			       "\"initial\": \"%s\", \"description\": ",
			       (unsigned long long)k->addr,
			       k->addr ? "true" : "false", state);
			if (k->description)
				json_str(stdout, k->description);
			else
				printf("null");
			printf(", \"sites\": [");
		} else {
			printf("\nkey %s%s  initial %s, %zu site%s\n", name,
			       k->addr ? "" : " (defined in another object)",
			       state, k->nsites, k->nsites == 1 ? "" : "s");
			if (k->description)
				printf("  -- %s\n", k->description);
		}
		free(owned);
		for (size_t j = 0; j < k->nsites; j++) {
			const struct sy_rec_site *s = &k->sites[j];
			const struct sy_sym *fn = sy_syms_find(&syms, s->addr,
							       true);
			const struct sy_line_row *ln =
				sy_lines_find(&lines, s->addr);
			const char *file = ln && ln->line &&
					   ln->file < lines.nfiles ?
					   lines.files[ln->file] : NULL;
			char dis[256], bytes[40] = "", *fowned = NULL;
			const char *fname = fn ? demangle(fn->name, &fowned)
					       : NULL;
			unsigned nb = s->len ? s->len : 0;

			for (unsigned b = 0; b < nb; b++)
				snprintf(bytes + strlen(bytes),
					 sizeof(bytes) - strlen(bytes),
					 "%s%02x", b ? " " : "", s->bytes[b]);
			site_text(cs, s, dis, sizeof(dis));
			if (json) {
				printf("%s\n    {\"address\": \"0x%llx\", "
				       "\"function\": ", j ? "," : "",
				       (unsigned long long)s->addr);
				if (fname)
					json_str(stdout, fname);
				else
					printf("null");
				printf(", \"offset\": %llu, \"file\": ",
				       fn ? (unsigned long long)(s->addr -
								 fn->addr) : 0ull);
				if (file)
					json_str(stdout, file);
				else
					printf("null");
				printf(", \"line\": %u, \"length\": %u, "
				       "\"bytes\": \"%s\", \"disasm\": ",
				       file ? ln->line : 0, s->len, bytes);
				json_str(stdout, dis);
				printf(", \"likely\": %s}",
				       s->likely ? "true" : "false");
			} else {
				char where[512], loc[512];

				if (fname)
					snprintf(where, sizeof(where),
						 "%s+0x%llx", fname,
						 (unsigned long long)(s->addr -
								      fn->addr));
				else
					snprintf(where, sizeof(where), "?");
				if (file)
					snprintf(loc, sizeof(loc), "%s:%u",
						 file, ln->line);
				else
					snprintf(loc, sizeof(loc), "-");
				printf("  0x%-8llx %-24s %-24s %-14s %-24s %s\n",
				       (unsigned long long)s->addr, where, loc,
				       bytes, dis,
				       s->likely ? "likely" : "unlikely");
			}
			free(fowned);
		}
		if (json)
			printf("]}");
	}
	if (json)
		printf("\n]");
	list_others(&rec, &syms, &lines, json);
	if (json)
		printf("}\n");
	if (cs)
		cs_close(&cs);
	sy_lines_free(&lines);
	sy_syms_free(&syms);
	sy_records_free(&rec);
	munmap(f.img, f.size);
	return 0;
}

static int cmd_cpu(bool json)
{
	const struct switchyard_cpu *cpu = switchyard_cpu();
	struct switchyard_memcpy_thresholds t;
	bool first = true;

	switchyard_memcpy_get_thresholds(&t);
	if (json) {
		printf("{\"vendor\": ");
		json_str(stdout, cpu->vendor);
		printf(", \"family\": %u, \"model\": %u, \"stepping\": %u, "
		       "\"features\": [", cpu->family, cpu->model,
		       cpu->stepping);
	} else {
		printf("cpu: %s family %u model %u stepping %u\nfeatures:",
		       cpu->vendor, cpu->family, cpu->model, cpu->stepping);
	}
	for (unsigned f = 0; f < SWITCHYARD_CPU_WORDS * 32; f++) {
		const char *name = switchyard_cpu_feature_name(f);

		if (!name || !boot_cpu_has(f))
			continue;
		if (json) {
			printf("%s", first ? "" : ", ");
			json_str(stdout, name);
		} else {
			printf(" %s", name);
		}
		first = false;
	}
	if (json)
		printf("], \"memcpy\": {\"short_max\": %u, \"rep_min\": %u, "
		       "\"loop\": %d, \"source\": %d, \"patched\": %d}}\n",
		       t.short_max, t.rep_min, (int)t.loop, (int)t.source,
		       t.patched);
	else
		printf("\nmemcpy: short_max %u, rep_min %u, loop %d, "
		       "source %d, written into the code: %s\n", t.short_max,
		       t.rep_min, (int)t.loop, (int)t.source,
		       t.patched ? "yes" : "no");
	return 0;
}

/*
 * `switchyard bench [--quick] [--json FILE] [--md FILE] [--no-plots]
 * [EXPERIMENT...]`:
 * the suite's harness (sybench.py, python3) with its benchmark programs:
 * those installed with this tool (<libexecdir>/switchyard/bench, found
 * relative to the tool: SY_BENCH_FROM_BIN), else those of the build tree
 * the tool belongs to (<build>/bench beside <build>/tools).
 */
#ifndef SY_BENCH_FROM_BIN
#define SY_BENCH_FROM_BIN "../libexec/switchyard/bench"
#endif
static int cmd_bench(int argc, char **argv)
{
	static const char *const where[] = { SY_BENCH_FROM_BIN, "../bench" };
	char self[PATH_MAX], dir[2][PATH_MAX + sizeof(SY_BENCH_FROM_BIN) + 16];
	char script[sizeof(dir[0]) + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self));
	char **args;
	int found = -1;

	if (n <= 0 || n >= (ssize_t)sizeof(self)) {
		fprintf(stderr, "switchyard bench: cannot find the tool's own "
			"location (/proc/self/exe: %s)\n",
			n < 0 ? strerror(errno) : "path too long");
		return 1;
	}
	self[n] = 0;
	*strrchr(self, '/') = 0;
	for (int i = 0; i < 2 && found < 0; i++) {
		/* (a truncated path names nothing: not found) */
		if (snprintf(dir[i], sizeof(dir[i]), "%s/%s", self, where[i]) <
			    (int)sizeof(dir[i]) &&
		    snprintf(script, sizeof(script), "%s/sybench.py", dir[i]) <
			    (int)sizeof(script) &&
		    !access(script, R_OK))
			found = i;
	}
	if (found < 0) {
		fprintf(stderr, "switchyard bench: the benchmark suite is not "
			"installed (no sybench.py in %s, nor in a build tree's "
			"%s): install a build configured with "
			"-DSWITCHYARD_INSTALL_BENCH=ON (the default on x86-64), "
			"or run build/tools/switchyard bench in a build tree\n",
			dir[0], dir[1]);
		return 1;
	}
	args = calloc((size_t)argc + 5, sizeof(*args));
	if (!args)
		return 1;
	args[0] = "python3";
	args[1] = script;
	args[2] = "--bindir";
	args[3] = dir[found];
	for (int i = 2; i < argc; i++)
		args[i + 2] = argv[i];
	execvp("python3", args);
	fprintf(stderr, "switchyard bench: python3: %s\n", strerror(errno));
	free(args);
	return 1;
}

int main(int argc, char **argv)
{
	bool json = false;
	const char *args[4] = { NULL, NULL, NULL, NULL }, *out = NULL;
	int nargs = 0;

	if (argc > 1 && !strcmp(argv[1], "bench"))
		return cmd_bench(argc, argv);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "-o") && i + 1 < argc && !out)
			out = argv[++i];
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return usage(stdout, 0);
		else if (argv[i][0] == '-' && argv[i][1])
			return usage(stderr, 2);
		else if (nargs < 4)
			args[nargs++] = argv[i];
		else
			return usage(stderr, 2);
	}
	if (nargs == 2 && !strcmp(args[0], "prepatch"))
		return cmd_prepatch(args[1], out, json);
	if (out)
		return usage(stderr, 2);
	if (nargs == 2 && !strcmp(args[0], "list"))
		return is_pid(args[1]) ? cmd_list_pid(atoi(args[1]), json)
				       : cmd_list(args[1], json);
	if (nargs == 4 && !strcmp(args[0], "set") && is_pid(args[1]) &&
	    (!strcmp(args[3], "on") || !strcmp(args[3], "off") ||
	     !strcmp(args[3], "inc") || !strcmp(args[3], "dec")))
		return cmd_set(atoi(args[1]), args[2], args[3], json);
	if (nargs == 4 && !strcmp(args[0], "call") && is_pid(args[1]))
		return cmd_call(atoi(args[1]), args[2], args[3], json);
	if (nargs == 1 && !strcmp(args[0], "ps"))
		return cmd_ps(json);
	if (nargs == 1 && !strcmp(args[0], "cpu"))
		return cmd_cpu(json);
	return usage(stderr, 2);
}
