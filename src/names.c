/* SPDX-License-Identifier: MIT */
/*
 * names.c - the C++ demangler that the library and the tool share, and the
 * escaping of texts (descriptions, names, paths) for JSON and terminals.
 *
 * Why our own demangler: a name a user copies from one listing must work in
 * every command. The tool could call libstdc++'s __cxa_demangle(), but a
 * process can call it only when the C++ runtime happens to be loaded (g++
 * links it --as-needed: a C++ program that uses nothing of it does not
 * load it), so the same key would be "(anonymous namespace)::k" in one
 * process and "_GLOBAL__N_1::k" in another. One deterministic demangler,
 * compiled into both, gives every command the same spelling. It reads the
 * part of the Itanium C++ ABI mangling that names of variables and of
 * ordinary functions use (nested, local and anonymous-namespace names,
 * builtin, class, pointer, reference and cv-qualified types, template
 * arguments that are types or integer literals, substitutions, template
 * parameters, clone suffixes) and writes it as libstdc++ does
 * (tests/readers/test_demangle.c compares the two); anything else (operators,
 * function types, lambdas, ABI tags...) is left mangled, everywhere alike.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sy_names.h"

/* ---- the demangler ------------------------------------------------------- */

#define DM_SUBS 64	/* candidates for substitution (S_, S0_, ...) */
#define DM_TARGS 16	/* template arguments (T_, T0_, ...) */
#define DM_MAX 1024	/* longest name: a key's name, not a program */

struct dm {
	const char *p;
	char *subs[DM_SUBS];
	int nsubs;
	char *targs[DM_TARGS];
	int ntargs;
	int depth;
	bool ctor;	/* the name ends with a constructor or destructor */
	bool fail;
};

static char *cat(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *r;

	if (la + lb + lc >= DM_MAX)
		return NULL;
	r = malloc(la + lb + lc + 1);
	if (r) {
		memcpy(r, a, la);
		memcpy(r + la, b, lb);
		memcpy(r + la + lb, c, lc + 1);
	}
	return r;
}

static void add_sub(struct dm *d, const char *s)
{
	char *c;

	if (d->nsubs == DM_SUBS || !(c = strdup(s))) {
		d->fail = true;
		return;
	}
	d->subs[d->nsubs++] = c;
}

static char *fail(struct dm *d, char *a, char *b)
{
	free(a);
	free(b);
	d->fail = true;
	return NULL;
}

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

/* <source-name> ::= <length> <identifier>; "_GLOBAL__N..." is an
 * anonymous namespace */
static char *source_name(struct dm *d)
{
	size_t len = 0;

	if (!digit(*d->p) || *d->p == '0')
		return fail(d, NULL, NULL);
	while (digit(*d->p) && len < DM_MAX)
		len = len * 10 + (size_t)(*d->p++ - '0');
	if (len >= DM_MAX || strnlen(d->p, len) < len)
		return fail(d, NULL, NULL);
	const char *id = d->p;

	d->p += len;
	if (len >= 10 && !strncmp(id, "_GLOBAL__N", 10))
		return strdup("(anonymous namespace)");
	return strndup(id, len);
}

/* S_ S0_ ... S<base 36>_ : a candidate seen before; or a std:: shorthand */
static char *substitution(struct dm *d, bool *is_std_prefix)
{
	static const char *const abbr[][2] = {
		{ "a", "std::allocator" }, { "b", "std::basic_string" },
		{ "s", "std::string" }, { "i", "std::istream" },
		{ "o", "std::ostream" }, { "d", "std::iostream" },
	};
	size_t id = 0;

	*is_std_prefix = false;
	d->p++;	/* 'S' */
	if (*d->p == 't') {
		d->p++;
		*is_std_prefix = true;
		return strdup("std");
	}
	for (size_t i = 0; i < sizeof(abbr) / sizeof(abbr[0]); i++)
		if (*d->p == abbr[i][0][0]) {
			d->p++;
			return strdup(abbr[i][1]);
		}
	if (*d->p != '_') {
		for (; *d->p != '_'; d->p++) {
			if (digit(*d->p))
				id = id * 36 + (size_t)(*d->p - '0');
			else if (*d->p >= 'A' && *d->p <= 'Z')
				id = id * 36 + (size_t)(*d->p - 'A' + 10);
			else
				return fail(d, NULL, NULL);
			if (id >= DM_SUBS)
				return fail(d, NULL, NULL);
		}
		id++;
	}
	d->p++;	/* '_' */
	if ((int)id >= d->nsubs)
		return fail(d, NULL, NULL);
	return strdup(d->subs[id]);
}

static char *type(struct dm *d);

/* L <type> <value> E, for the integer types and bool */
static char *literal(struct dm *d)
{
	static const char *const suffix[][2] = {
		{ "i", "" }, { "j", "u" }, { "l", "l" }, { "m", "ul" },
		{ "x", "ll" }, { "y", "ull" },
	};
	const char *sfx = NULL;
	char t = *++d->p, num[32];
	size_t n = 0;

	d->p++;
	if (t == 'b' && (*d->p == '0' || *d->p == '1') && d->p[1] == 'E') {
		d->p += 2;
		return strdup(d->p[-2] == '1' ? "true" : "false");
	}
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++)
		if (t == suffix[i][0][0])
			sfx = suffix[i][1];
	if (!sfx)
		return fail(d, NULL, NULL);
	if (*d->p == 'n') {
		num[n++] = '-';
		d->p++;
	}
	if (!digit(*d->p))
		return fail(d, NULL, NULL);
	while (digit(*d->p) && n < 20)
		num[n++] = *d->p++;
	num[n] = 0;
	if (*d->p++ != 'E')
		return fail(d, NULL, NULL);
	return cat(num, sfx, "");
}

/* I <arg>+ E -> "<a, b>"; keep records them for T_ (a function's own) */
static char *template_args(struct dm *d, bool keep)
{
	char *r = strdup("<");

	if (keep) {
		for (int i = 0; i < d->ntargs; i++)
			free(d->targs[i]);
		d->ntargs = 0;
	}
	d->p++;	/* 'I' */
	while (r && *d->p != 'E') {
		char *a = *d->p == 'L' ? literal(d) : type(d), *q;

		if (!a || !*d->p)
			return fail(d, r, a);
		if (keep) {
			if (d->ntargs == DM_TARGS)
				return fail(d, r, a);
			d->targs[d->ntargs++] = strdup(a);
		}
		q = cat(r, r[1] ? ", " : "", a);
		free(r);
		free(a);
		r = q;
	}
	if (!r)
		return fail(d, NULL, NULL);
	d->p++;	/* 'E' */
	char *q = cat(r, r[strlen(r) - 1] == '>' ? " >" : ">", "");

	free(r);
	return q;
}

/* An unqualified name within a nested name: a source name (maybe of
 * internal linkage), a constructor or destructor of last (the class) */
static char *unqualified(struct dm *d, const char *last)
{
	if (*d->p == 'L')
		d->p++;
	d->ctor = false;
	if (digit(*d->p))
		return source_name(d);
	if (last && (*d->p == 'C' || *d->p == 'D') && d->p[1] >= '0' &&
	    d->p[1] <= '5' && d->p[1] != '3') {
		const char *cls = strrchr(last, ':');

		cls = cls ? cls + 1 : last;
		if (strchr(cls, '<'))	/* a template's: its name only */
			return fail(d, NULL, NULL);
		bool dtor = *d->p == 'D';

		d->p += 2;
		d->ctor = true;	/* no return type, even as a template */
		return cat(dtor ? "~" : "", cls, "");
	}
	return fail(d, NULL, NULL);
}

/*
 * <nested-name> ::= N [<CV-qualifiers>] <prefix> <unqualified-name> E; every
 * prefix followed by more is a candidate. *cv: " const" of a const member
 * function; *tmpl: it ends with template arguments.
 */
static char *nested(struct dm *d, char **cv, bool *tmpl)
{
	char *cur = NULL, *q, *cls = NULL;	/* cls: the last name, for C1 */
	const char *c = "", *v = "";
	bool ctor = false;	/* d->ctor of the last name (types reset it) */

	d->p++;	/* 'N' */
	if (*d->p == 'r')
		return fail(d, NULL, cls);
	if (*d->p == 'V') {
		v = " volatile";
		d->p++;
	}
	if (*d->p == 'K') {
		c = " const";
		d->p++;
	}
	if (*d->p == 'R' || *d->p == 'O')
		return fail(d, NULL, cls);
	if (cv)
		*cv = cat(c, v, "");
	else if (*c || *v)
		return fail(d, NULL, cls);
	*tmpl = false;
	while (*d->p != 'E') {
		if (!*d->p)
			return fail(d, cur, cls);
		*tmpl = false;
		if (*d->p == 'S' && !cur) {
			bool is_std;

			cur = substitution(d, &is_std);
			if (!cur)
				return fail(d, NULL, cls);
			/* libstdc++ spells Ss... in full as a prefix */
			if (!is_std && d->p[-1] != '_')
				return fail(d, cur, cls);
			if (is_std) {	/* St <name>: std::name, a candidate */
				char *u = unqualified(d, NULL);

				if (!u)
					return fail(d, cur, cls);
				q = cat(cur, "::", u);
				free(cls);
				cls = u;
				free(cur);
				cur = q;
				if (!cur)
					return fail(d, NULL, cls);
				if (*d->p != 'E')
					add_sub(d, cur);
			}
			continue;	/* a substitution is not added again */
		}
		if (*d->p == 'I') {
			char *a;

			if (!cur)
				return fail(d, NULL, cls);
			a = template_args(d, d->depth == 0);
			if (!a)
				return fail(d, cur, cls);
			q = cat(cur, a, "");
			free(a);
			free(cur);
			cur = q;
			*tmpl = true;
		} else {
			char *u = unqualified(d, cur ? (cls ? cls : "") : NULL);

			if (!u)
				return fail(d, cur, cls);
			q = cur ? cat(cur, "::", u) : strdup(u);
			ctor = d->ctor;
			free(cls);
			cls = u;
			free(cur);
			cur = q;
		}
		if (!cur)
			return fail(d, NULL, cls);
		if (*d->p != 'E')
			add_sub(d, cur);
	}
	d->p++;
	free(cls);
	d->ctor = ctor;
	if (!cur)
		return fail(d, NULL, NULL);
	return cur;
}

static char *encoding(struct dm *d, bool local);

/* <name>: nested, local (Z <encoding> E <entity> [<discriminator>]),
 * std::name, a substitution or a plain name, with template arguments */
static char *name(struct dm *d, char **cv, bool *tmpl)
{
	char *n, *q;

	*tmpl = false;
	if (*d->p == 'N')
		return nested(d, cv, tmpl);
	if (*d->p == 'Z') {
		char *enc, *ent;

		d->p++;
		enc = encoding(d, true);
		if (!enc || *d->p != 'E')
			return fail(d, enc, NULL);
		d->p++;
		if (*d->p == 's') {
			d->p++;
			ent = strdup("string literal");
		} else {
			bool t;

			ent = name(d, NULL, &t);
		}
		if (!ent)
			return fail(d, enc, NULL);
		if (*d->p == '_') {	/* discriminator: _n or __nn_ */
			d->p++;
			if (*d->p == '_') {
				for (d->p++; digit(*d->p); d->p++)
					;
				if (*d->p++ != '_')
					return fail(d, enc, ent);
			} else if (digit(*d->p)) {
				d->p++;
			} else {
				return fail(d, enc, ent);
			}
		}
		q = cat(enc, "::", ent);
		free(enc);
		free(ent);
		return q ? q : fail(d, NULL, NULL);
	}
	if (*d->p == 'S') {
		bool is_std;

		n = substitution(d, &is_std);
		if (n && is_std) {
			char *u = unqualified(d, NULL);

			q = u ? cat(n, "::", u) : NULL;
			free(u);
			free(n);
			n = q;
			if (n && *d->p == 'I')
				add_sub(d, n);
		}
		if (n && *d->p != 'I')
			return n;	/* a substitution alone is not a name */
	} else {
		n = unqualified(d, NULL);
		if (n && *d->p == 'I')
			add_sub(d, n);
	}
	if (!n)
		return fail(d, NULL, NULL);
	if (*d->p == 'I') {
		char *a = template_args(d, d->depth == 0);

		if (!a)
			return fail(d, n, NULL);
		q = cat(n, a, "");
		free(n);
		free(a);
		*tmpl = true;
		return q ? q : fail(d, NULL, NULL);
	}
	return n;
}

static const char *const builtin[][2] = {
	{ "v", "void" }, { "w", "wchar_t" }, { "b", "bool" }, { "c", "char" },
	{ "a", "signed char" }, { "h", "unsigned char" }, { "s", "short" },
	{ "t", "unsigned short" }, { "i", "int" }, { "j", "unsigned int" },
	{ "l", "long" }, { "m", "unsigned long" }, { "x", "long long" },
	{ "y", "unsigned long long" }, { "n", "__int128" },
	{ "o", "unsigned __int128" }, { "f", "float" }, { "d", "double" },
	{ "e", "long double" }, { "g", "__float128" }, { "z", "..." },
	{ "Dn", "decltype(nullptr)" }, { "Ds", "char16_t" },
	{ "Di", "char32_t" }, { "Du", "char8_t" },
};

static char *type(struct dm *d)
{
	char *t, *q;
	const char *post;

	if (++d->depth > 64)
		return fail(d, NULL, NULL);
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++) {
		size_t l = strlen(builtin[i][0]);

		if (!strncmp(d->p, builtin[i][0], l)) {
			d->p += l;
			d->depth--;
			return strdup(builtin[i][1]);
		}
	}
	switch (*d->p) {
	case 'P': post = "*"; break;
	case 'R': post = "&"; break;
	case 'O': post = "&&"; break;
	case 'K': post = " const"; break;
	case 'V': post = " volatile"; break;
	default: post = NULL; break;
	}
	if (post) {
		d->p++;
		if (*d->p == 'F' || *d->p == 'A' || *d->p == 'M')
			return fail(d, NULL, NULL);	/* "void (*)(int)" */
		t = type(d);
		if (t && ((post[0] == '&' && t[strlen(t) - 1] == '&') ||
			  (post[0] == ' ' && strstr(t, post))))
			return fail(d, t, NULL);	/* collapsing, const const */
		q = t ? cat(t, post, "") : NULL;
		free(t);
	} else if (*d->p == 'T') {	/* T_ T0_ ...: a template argument */
		size_t id = 0;
		bool num = digit(*++d->p);

		for (; digit(*d->p) && id < DM_TARGS; d->p++)
			id = id * 10 + (size_t)(*d->p - '0');
		id += num;
		if (*d->p != '_' || (int)id >= d->ntargs)
			return fail(d, NULL, NULL);
		d->p++;
		q = strdup(d->targs[id]);
	} else if (*d->p == 'N' || digit(*d->p) || *d->p == 'S') {
		bool tmpl, sub = *d->p == 'S' && d->p[1] != 't';

		q = name(d, NULL, &tmpl);
		if (q && sub && !tmpl) {	/* S_, Sa: not a new candidate */
			d->depth--;
			return q;
		}
	} else {
		return fail(d, NULL, NULL);
	}
	if (!q)
		return fail(d, NULL, NULL);
	add_sub(d, q);
	d->depth--;
	return q;
}

/* <encoding> ::= <name> [<bare-function-type>]; a function's parameter
 * types run to the end (or to the 'E' of a local name) */
static char *encoding(struct dm *d, bool local)
{
	char *cv = NULL, *n, *ret = NULL, *params = NULL, *r;
	bool tmpl;

	n = name(d, &cv, &tmpl);
	if (!n)
		return fail(d, cv, NULL);
	if (!*d->p || *d->p == '.' || (local && *d->p == 'E')) {
		bool has_cv = cv && *cv;

		free(cv);
		return has_cv ? fail(d, n, NULL) : n;	/* a variable */
	}
	if (tmpl && !d->ctor && !(ret = type(d)))
		return fail(d, n, cv);
	params = strdup("");
	while (params && *d->p && *d->p != '.' && !(local && *d->p == 'E')) {
		char *t = type(d), *q;

		if (!t)
			break;
		if (!strcmp(t, "void") && !params[0] &&
		    (!*d->p || *d->p == '.' || (local && *d->p == 'E'))) {
			free(t);
			break;	/* f(void) is f() */
		}
		q = cat(params, params[0] ? ", " : "", t);
		free(t);
		free(params);
		params = q;
	}
	if (d->fail || !params) {
		free(ret);
		free(params);
		return fail(d, n, cv);
	}
	char *f = cat(n, "(", params);

	/* a local name's function is printed without its return type */
	if (local && ret)
		ret[0] = 0;
	r = f ? cat(ret ? ret : "", ret && ret[0] ? " " : "", f) : NULL;
	free(f);
	f = r ? cat(r, ")", cv ? cv : "") : NULL;
	free(r);
	free(n);
	free(ret);
	free(params);
	free(cv);
	return f ? f : fail(d, NULL, NULL);
}

char *sy_demangle(const char *sym)
{
	struct dm d = { .p = sym ? sym + 2 : NULL };
	char *r;

	if (!sym || strncmp(sym, "_Z", 2) || strlen(sym) >= DM_MAX)
		return NULL;
	r = encoding(&d, false);
	/* clones: f.cold, f.constprop.0 -> "f() [clone .cold]" ... */
	while (r && !d.fail && *d.p == '.') {
		const char *s = d.p++;

		if (!((*d.p >= 'a' && *d.p <= 'z') || *d.p == '_')) {
			d.fail = true;
			break;
		}
		while ((*d.p >= 'a' && *d.p <= 'z') || *d.p == '_')
			d.p++;
		while (*d.p == '.' && digit(d.p[1]))
			for (d.p++; digit(*d.p); d.p++)
				;
		char *c = strndup(s, (size_t)(d.p - s)), *q;

		q = c ? cat(r, " [clone ", c) : NULL;
		free(c);
		free(r);
		r = q ? cat(q, "]", "") : NULL;
		free(q);
	}
	if (r && (d.fail || *d.p)) {
		free(r);
		r = NULL;
	}
	for (int i = 0; i < d.nsubs; i++)
		free(d.subs[i]);
	for (int i = 0; i < d.ntargs; i++)
		free(d.targs[i]);
	return r;
}

/* ---- text ---------------------------------------------------------------- */

size_t sy_utf8_len(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned c = s[0];
	size_t n;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;	/* a continuation byte, or never valid */
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;	/* the terminator included */
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;	/* overlong, a surrogate, past Unicode */
	return n;
}

/* A C1 control (U+0080..U+009F: 0xc2 0x80..0x9f in UTF-8), valid text
 * that some terminals take as a control sequence (U+009B is CSI): its
 * code point, else 0 */
static unsigned c1_control(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	return s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f ? s[1] : 0;
}

size_t sy_json_escape(const char *s, char *buf, size_t size)
{
	size_t o = 0;

#define SY_PUT(ch) do { if (o + 1 < size) buf[o] = (ch); o++; } while (0)
	while (*s) {
		unsigned char c = (unsigned char)*s;
		size_t n = sy_utf8_len(s);

		if (c == '"' || c == '\\') {
			SY_PUT('\\');
			SY_PUT((char)c);
			s++;
		} else if (c < 0x20 || c == 0x7f || !n || c1_control(s)) {
			static const char hex[] = "0123456789abcdef";
			unsigned cp = c1_control(s);

			SY_PUT('\\');
			SY_PUT('u');
			SY_PUT('0');
			SY_PUT('0');
			if (cp) {	/* the code point, its two bytes used */
				c = (unsigned char)cp;
				s++;
			}
			SY_PUT(hex[c >> 4]);
			SY_PUT(hex[c & 15]);
			s++;
		} else {
			for (size_t i = 0; i < n; i++)
				SY_PUT(s[i]);
			s += n;
		}
	}
#undef SY_PUT
	if (size)
		buf[o < size ? o : size - 1] = 0;
	return o + 1;
}

void sy_text_put(FILE *f, const char *s)
{
	while (*s) {
		unsigned char c = (unsigned char)*s;
		size_t n = sy_utf8_len(s);

		if (c1_control(s)) {
			fprintf(f, "\\u%04x", c1_control(s));
			s += 2;
		} else if (c < 0x20 || c == 0x7f || !n) {
			fprintf(f, "\\x%02x", c);
			s++;
		} else {
			fwrite(s, 1, n, f);
			s += n;
		}
	}
}
