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
#include <stdarg.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <fcntl.h>
#include <stdarg.h>
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
#include "records.h"
#include "tool.h"

/* C++ names as the library spells them in a live process (src/names.c):
 * one demangler for every command, not libstdc++'s */
const char *demangle(const char *name, char **owned)
{
	*owned = sy_demangle(name);
	return *owned ? *owned : name;
}

void json_str(FILE *f, const char *s)
{
	char small[256], *big = NULL;
	size_t need = sy_json_escape(s, small, sizeof(small));

	if (need > sizeof(small) && (big = malloc(need)))
		sy_json_escape(s, big, need);
	fprintf(f, "\"%s\"", big ? big : small);
	free(big);
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
		   "       switchyard --help | --version\n");
	return rc;
}

/* ---- live processes (<switchyard/control.h>) ----------------------------- */

/*
 * Send one request line to process pid's control socket and read the
 * one-line reply into *reply (malloc'ed). 0, or 1 with a message. A
 * request that changes something (changes: set, call) is in the process
 * once sent: when the reply does not come, or not whole, the change may
 * have been made, or be made later (a stopped or busy process reads it
 * when it runs again), and the message says so.
 */
static int request(int pid, const char *line, char **reply, bool changes)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	int fd;

	*reply = NULL;
	if (!buf)
		return 1;
	if (ctl_connect(pid, &fd)) {
		free(buf);
		return 1;
	}
	if (send(fd, line, strlen(line), MSG_NOSIGNAL) != (ssize_t)strlen(line)) {
		ctl_error("process %d: %s", pid, strerror(errno));
		close(fd);
		free(buf);
		return 1;
	}
	for (;;) {
		struct pollfd pf = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&pf, 1, 5000) <= 0) {
			if (changes)
				ctl_error("process %d: no reply in 5 s; the "
					  "process may still make the change "
					  "later (see switchyard list %d)", pid,
					  pid);
			else
				ctl_error("process %d: no reply in 5 s", pid);
			close(fd);
			free(buf);
			return 1;
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
	if (changes)
		ctl_error("process %d: the reply was cut short; the change may "
			  "have been made (see switchyard list %d)", pid, pid);
	else
		ctl_error("process %d: the reply was cut short", pid);
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
			if (*p == '\\' && p[1] == 'u' && isxdigit((unsigned char)p[2]) &&
			    isxdigit((unsigned char)p[3]) && isxdigit((unsigned char)p[4]) &&
			    isxdigit((unsigned char)p[5])) {
				char hex[5] = { p[2], p[3], p[4], p[5], 0 };
				unsigned u = (unsigned)strtoul(hex, NULL, 16);

				/* the library escapes a control character or a
				 * byte that is not UTF-8 as \u00XX: that byte
				 * (sy_json_escape()); anything else as UTF-8 */
				if (u < 0x100) {
					val[n++] = (char)u;
				} else if (u < 0x800 && n + 2 < size) {
					val[n++] = (char)(0xc0 | u >> 6);
					val[n++] = (char)(0x80 | (u & 0x3f));
				} else if (u >= 0x800 && n + 3 < size) {
					val[n++] = (char)(0xe0 | u >> 12);
					val[n++] = (char)(0x80 | ((u >> 6) & 0x3f));
					val[n++] = (char)(0x80 | (u & 0x3f));
				}
				p += 5;
				continue;
			}
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
				printf("  %s=", cols[c]);
			sy_text_put(stdout, v);
		}
		if (field(obj, "description", v, sizeof(v)) ||
		    field(obj, "error", v, sizeof(v))) {
			printf("  -- ");
			sy_text_put(stdout, v);
		}
		printf("\n");
		print_sites(obj);
		free(obj);
		p += n;
	}
	return 0;
}

static int cmd_list_pid(int pid, bool json)
{
	static const char *const cols[] = { "name", "enabled", "count",
					    "sites", "object" };
	static const char *const ccols[] = { "name", "target", "sites",
					     "targets" };
	char *reply, *calls;
	int r = request(pid, "list\n", &reply, false);

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

/*
 * A word of a request (control.c's word()): a space in a name ("(anonymous
 * namespace)::k", as the listings spell it) goes escaped, "\ "; in a
 * pattern a backslash is fnmatch()'s and goes as it is, in a target it is
 * escaped too. False when it does not fit in one line of 1000 bytes.
 */
static bool req_word(const char *in, char *out, size_t size, bool glob)
{
	size_t n = 0;

	if (!*in || strlen(in) > 1000 || strpbrk(in, "\t\r\n"))
		return false;
	for (; *in; in++) {
		if (n + 3 > size)
			return false;
		if (*in == ' ' || (!glob && *in == '\\'))
			out[n++] = '\\';
		out[n++] = *in;
	}
	out[n] = 0;
	return true;
}

/*
 * The objects of a `set` or `call` reply whose result is an error: each
 * said on stderr with why, and 1 (the change did not happen, in whole or
 * in part: a script must be able to tell). 0 when every one was done.
 */
static int refused(int pid, const char *reply, const char *action)
{
	const char *p = reply;
	char name[512], v[512];
	int bad = 0;

	while ((p = strstr(p, "{\"name\": "))) {
		const char *end = obj_end(p);
		size_t n = end ? (size_t)(end - p) + 1 : strlen(p);
		char *obj = strndup(p, n);
		int res = 0, count = 0;

		p += n;
		if (!obj)
			return 1;
		if (field(obj, "result", v, sizeof(v)))
			res = atoi(v);
		if (field(obj, "count", v, sizeof(v)))
			count = atoi(v);
		if (res < 0 && field(obj, "name", name, sizeof(name))) {
			const char *why = strerror(-res);

			if (field(obj, "error", v, sizeof(v)))
				why = v;
			else if (res == -EBUSY)
				why = "its count is above 1 (it was inc'ed "
				      "more than once): off would undo the "
				      "others' inc; use dec";
			else if (res == -EINVAL && !strcmp(action, "dec"))
				why = "its count is already 0";
			else if (res == -EOVERFLOW)
				why = "its count is at its maximum";
			if (!strcmp(action, "call"))
				fprintf(stderr, "switchyard: process %d: %s: not "
					"retargeted (%s): %s\n", pid, name,
					strerror(-res), why);
			else
				fprintf(stderr, "switchyard: process %d: %s: %s "
					"refused (%s, count %d): %s\n", pid,
					name, action, strerror(-res), count,
					why);
			bad = 1;
		}
		free(obj);
	}
	return bad;
}

/* A reply's note (several keys or calls named as the pattern: all were
 * changed), on stderr: the change happened, the user should know how. */
static void note(int pid, const char *reply)
{
	char v[600];

	if (field(reply, "note", v, sizeof(v))) {
		fprintf(stderr, "switchyard: process %d: note: ", pid);
		sy_text_put(stderr, v);
		fputc('\n', stderr);
	}
}

static int cmd_call(int pid, const char *glob, const char *target, bool json)
{
	static const char *const cols[] = { "name", "result", "target" };
	char line[2300], *reply, v[256], eg[1100], et[1100];
	int r;

	if (!req_word(glob, eg, sizeof(eg), true) ||
	    !req_word(target, et, sizeof(et), false)) {
		fprintf(stderr, "switchyard: %s\n", !*glob ?
			"the call pattern is empty: it would match no call" :
			!*target ? "the target is empty: give the name of a "
			"registered target" : "a call pattern and a target are "
			"at most 1000 bytes each, on one line");
		return 2;
	}
	snprintf(line, sizeof(line), "call %s %s\n", eg, et);
	r = request(pid, line, &reply, true);
	if (r)
		return r;
	if (json)
		fputs(reply, stdout);
	else
		r = print_reply(reply, cols, 3);
	/* any call left alone (each said), or an error for the whole
	 * request: 1 */
	if (field(reply, "error", v, sizeof(v)) && !strstr(reply, "\"name\"")) {
		if (json)
			fprintf(stderr, "switchyard: %s\n", v);
		r = 1;
	}
	note(pid, reply);
	if (refused(pid, reply, "call"))
		r = 1;
	free(reply);
	return r;
}

static int cmd_set(int pid, const char *glob, const char *action, bool json)
{
	static const char *const cols[] = { "name", "enabled", "count",
					    "result" };
	char line[1200], *reply, v[256], eg[1100];
	int r;

	if (!req_word(glob, eg, sizeof(eg), true)) {
		fprintf(stderr, "switchyard: %s\n", !*glob ?
			"the key pattern is empty: it would match no key" :
			"a key pattern is at most 1000 bytes, on one line");
		return 2;
	}
	snprintf(line, sizeof(line), "set %s %s\n", eg, action);
	r = request(pid, line, &reply, true);
	if (r)
		return r;
	if (json) {
		fputs(reply, stdout);
		r = field(reply, "error", v, sizeof(v)) &&
		    !strstr(reply, "\"name\"") ? 1 : 0;
		if (r)
			fprintf(stderr, "switchyard: %s\n", v);
	} else {
		r = print_reply(reply, cols, 4);
	}
	note(pid, reply);
	/* any key left as it was: 1, each said */
	if (refused(pid, reply, action))
		r = 1;
	free(reply);
	return r;
}

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
			if (definer)
				json_str(stdout, definer);
			else
				printf("null");
			printf(", \"initial\": \"%s\", \"description\": ",
			       state);
			if (k->description)
				json_str(stdout, k->description);
			else
				printf("null");
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

/* Where the copy routine's thresholds came from: short, the JSON token;
 * else the phrase of the text listing. */
static const char *source_name(enum switchyard_memcpy_source src, bool short_)
{
	switch (src) {
	case SWITCHYARD_MEMCPY_FROM_DEFAULT:
		return short_ ? "default" : "the table for this CPU";
	case SWITCHYARD_MEMCPY_FROM_FILE:
		return short_ ? "file" : "the calibration file";
	case SWITCHYARD_MEMCPY_FROM_ENV:
		return short_ ? "env" : "SWITCHYARD_MEMCPY";
	default:
		return "unknown";
	}
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
	if (json) {
		printf("], \"memcpy\": {\"short_max\": %u, \"rep_min\": %u, "
		       "\"loop\": %d, \"source\": %d, \"patched\": %d, "
		       "\"loop_name\": \"%s\", \"source_name\": \"%s\"}}\n",
		       t.short_max, t.rep_min, (int)t.loop, (int)t.source,
		       t.patched, sy_strategy_name(t.loop), source_name(t.source, true));
		return 0;
	}
	printf("\nmemcpy: short moves up to %u bytes, ", t.short_max);
	if (t.rep_min == UINT32_MAX)
		printf("rep movsb never, ");
	else
		printf("rep movsb from %u bytes, ", t.rep_min);
	printf("%s loop between; thresholds from %s; written into the code: "
	       "%s\n", sy_strategy_name(t.loop), source_name(t.source, false),
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
			"-DSWITCHYARD_BUILD_BENCH=ON and "
			"-DSWITCHYARD_INSTALL_BENCH=ON (both the default on "
			"x86-64), or run build/tools/switchyard bench in a "
			"build tree\n",
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

/* A usage error: what is wrong, then the usage, exit 2. */
__attribute__((format(printf, 1, 2))) static int bad_usage(const char *fmt,
							  ...)
{
	va_list ap;

	fputs("switchyard: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n", stderr);
	return usage(stderr, 2);
}

/* The commands, the number of operands each takes and how they read. */
static const struct {
	const char *name;
	int nargs;
	const char *operands;
} commands[] = {
	{ "list", 1, "FILE|PID" },
	{ "set", 3, "PID GLOB on|off|inc|dec" },
	{ "call", 3, "PID GLOB TARGET" },
	{ "ps", 0, "" },
	{ "prepatch", 1, "FILE [-o OUT]" },
	{ "cpu", 0, "" },
};

int main(int argc, char **argv)
{
	bool json = false;
	const char *args[4] = { NULL, NULL, NULL, NULL }, *out = NULL;
	int nargs = 0, pid;
	bool ended = false;
	size_t c;

	if (argc > 1 && !strcmp(argv[1], "bench"))
		return cmd_bench(argc, argv);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--") && !ended) {
			ended = true;	/* operands only from here */
			continue;
		}
		if (ended || argv[i][0] != '-' || !argv[i][1]) {
			if (nargs == 4)
				return bad_usage("too many operands ('%.100s' "
						 "and after)", argv[i]);
			args[nargs++] = argv[i];
		} else if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "-o") && i + 1 < argc && !out)
			out = argv[++i];
		else if (!strcmp(argv[i], "-o"))
			return bad_usage(out ? "-o given twice" :
					 "-o needs a file name");
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return usage(stdout, 0);
		else if (!strcmp(argv[i], "--version")) {
			printf("switchyard %s\n", switchyard_version());
			return 0;
		}
		else
			return bad_usage("unknown option '%.100s'", argv[i]);
	}
	ctl_json = json;
	if (out && !*out)
		return bad_usage("-o needs a file name, not an empty one");
	if (!nargs)
		return bad_usage("no command given");
	for (c = 0; c < sizeof(commands) / sizeof(commands[0]); c++)
		if (!strcmp(args[0], commands[c].name))
			break;
	if (c == sizeof(commands) / sizeof(commands[0]))
		return bad_usage("unknown command '%.100s'", args[0]);
	if (nargs - 1 != commands[c].nargs)
		return bad_usage("%s takes %s%s", args[0],
				 commands[c].nargs ? "" : "no operands",
				 commands[c].operands);
	if (out && strcmp(args[0], "prepatch"))
		return bad_usage("-o is an option of prepatch only");
	if (!strcmp(args[0], "prepatch"))
		return cmd_prepatch(args[1], out, json);
	if (!strcmp(args[0], "list")) {
		/* digits are a PID (a file named so: ./123) */
		if (!looks_like_pid(args[1]))
			return cmd_list(args[1], json);
		return parse_pid(args[1], &pid) ? 2 : cmd_list_pid(pid, json);
	}
	if (!strcmp(args[0], "set")) {
		if (strcmp(args[3], "on") && strcmp(args[3], "off") &&
		    strcmp(args[3], "inc") && strcmp(args[3], "dec"))
			return bad_usage("set: '%.100s' is not on, off, inc or "
					 "dec", args[3]);
		return parse_pid(args[1], &pid) ? 2 :
		       cmd_set(pid, args[2], args[3], json);
	}
	if (!strcmp(args[0], "call"))
		return parse_pid(args[1], &pid) ? 2 :
		       cmd_call(pid, args[2], args[3], json);
	if (!strcmp(args[0], "ps"))
		return cmd_ps(json);
	return cmd_cpu(json);
}
