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
 * It reads Rust's symbols too, legacy and v0 (the section "Rust symbols"
 * below; tests/readers/test_demangle_rust.c).
 */
#include <stdbool.h>
#include <stdint.h>
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

/* ---- Rust symbols --------------------------------------------------------- */

/*
 * Rust's two manglings, read so that a Rust program's keys and functions
 * are named as its source spells them (bindings/rust/): "app::TRACE",
 * "app::net::Conn::poll", as rustc-demangle's alternate form ({:#}) prints
 * them, without the crate disambiguators and hashes.
 *
 * Legacy (rustc's default for a crate's own symbols): an Itanium nested
 * name whose last element is the hash, "_ZN3app5TRACE17h0123456789abcdefE";
 * its elements escape what an identifier cannot hold ("$LT$" for '<',
 * ".." for "::", "$u7b$" for '{'...). Told from a C++ name by that last
 * element ('h' and 16 hexadecimal digits), which is dropped.
 *
 * v0 ("_R", -C symbol-mangling-version=v0, and the standard library's
 * symbols): paths (crate roots, nested names, closures and shims, inherent
 * and trait impls, generic arguments, back-references) and the types and
 * constants that generic arguments and impls name. A function pointer or
 * dyn type, or a Punycode identifier, is left mangled.
 */
struct sb {
	char *b;
	size_t n;
	int quiet;	/* > 0: parse without printing (disambiguating paths) */
	bool fail;
};

static void sb_put(struct sb *o, const char *s, size_t n)
{
	if (o->fail || o->quiet)
		return;
	if (o->n + n >= DM_MAX) {
		o->fail = true;
		return;
	}
	memcpy(o->b + o->n, s, n);
	o->n += n;
	o->b[o->n] = 0;
}

static void sb_str(struct sb *o, const char *s)
{
	sb_put(o, s, strlen(s));
}

static bool hex_digit(char c)
{
	return digit(c) || (c >= 'a' && c <= 'f');
}

/* ".llvm.<hash>": a suffix LLVM adds to a local symbol it promoted;
 * dropped as rustc-demangle does. Any other suffix is printed as is. */
static void rust_suffix(struct sb *o, const char *s)
{
	if (!strncmp(s, ".llvm.", 6))
		return;
	sb_str(o, s);
}

/* One element of a legacy name, its escapes undone (rustc-demangle's
 * rules); an escape it does not know ends the decoding, the rest is
 * printed as it is. */
static void legacy_element(struct sb *o, const char *s, size_t len)
{
	static const char *const esc[][2] = {
		{ "SP", "@" }, { "BP", "*" }, { "RF", "&" }, { "LT", "<" },
		{ "GT", ">" }, { "LP", "(" }, { "RP", ")" }, { "C", "," },
	};
	const char *end = s + len;

	if (len >= 2 && s[0] == '_' && s[1] == '$')
		s++;
	while (s < end) {
		if (*s == '.') {
			bool two = s + 1 < end && s[1] == '.';

			sb_str(o, two ? "::" : ".");
			s += two ? 2 : 1;
		} else if (*s == '$') {
			const char *e = memchr(s + 1, '$', (size_t)(end - s - 1));
			size_t n = e ? (size_t)(e - s - 1) : 0;
			bool done = false;

			for (size_t i = 0; e && i < sizeof(esc) / sizeof(esc[0]); i++)
				if (strlen(esc[i][0]) == n &&
				    !strncmp(s + 1, esc[i][0], n)) {
					sb_str(o, esc[i][1]);
					done = true;
				}
			if (!done && e && n >= 2 && n <= 3 && s[1] == 'u') {
				unsigned c = 0;
				bool ok = true;

				for (size_t i = 2; i <= n; i++) {
					ok = ok && hex_digit(s[i]);
					c = c * 16 + (unsigned)(digit(s[i]) ?
						s[i] - '0' : s[i] - 'a' + 10);
				}
				/* printable ASCII only: a name is not to carry
				 * control characters onto a terminal */
				if (ok && c >= 0x20 && c < 0x7f) {
					char ch = (char)c;

					sb_put(o, &ch, 1);
					done = true;
				}
			}
			if (!done)
				break;
			s = e + 1;
		} else {
			const char *q = s;

			while (q < end && *q != '$' && *q != '.')
				q++;
			sb_put(o, s, (size_t)(q - s));
			s = q;
		}
	}
	sb_put(o, s, (size_t)(end - s));
}

static char *rust_legacy(const char *sym)
{
	const char *el[64], *p = sym + 3;	/* after "_ZN" */
	size_t len[64], n = 0;
	struct sb o = { 0 };

	while (*p != 'E') {
		size_t l = 0;

		if (!digit(*p) || *p == '0' || n == 64)
			return NULL;
		while (digit(*p) && l < DM_MAX)
			l = l * 10 + (size_t)(*p++ - '0');
		if (l >= DM_MAX || strnlen(p, l) < l)
			return NULL;
		for (size_t i = 0; i < l; i++)
			if (!(p[i] == '_' || p[i] == '$' || p[i] == '.' ||
			      digit(p[i]) || (p[i] >= 'a' && p[i] <= 'z') ||
			      (p[i] >= 'A' && p[i] <= 'Z')))
				return NULL;
		el[n] = p;
		len[n++] = l;
		p += l;
	}
	p++;	/* 'E' */
	/* the hash: h and 16 hexadecimal digits, the last element */
	if (n < 2 || len[n - 1] != 17 || el[n - 1][0] != 'h' ||
	    (*p && *p != '.'))
		return NULL;
	for (size_t i = 1; i < 17; i++)
		if (!hex_digit(el[n - 1][i]))
			return NULL;
	if (!(o.b = malloc(DM_MAX)))
		return NULL;
	o.b[0] = 0;
	for (size_t i = 0; i + 1 < n; i++) {
		if (i)
			sb_str(&o, "::");
		legacy_element(&o, el[i], len[i]);
	}
	rust_suffix(&o, p);
	if (o.fail) {
		free(o.b);
		return NULL;
	}
	return o.b;
}

struct v0 {
	const char *s;	/* after "_R" */
	size_t len, pos;
	int depth;
	struct sb *o;
};

static bool v0_fail(struct v0 *v)
{
	v->o->fail = true;
	return false;
}

static bool v0_eat(struct v0 *v, char c)
{
	if (v->pos < v->len && v->s[v->pos] == c) {
		v->pos++;
		return true;
	}
	return false;
}

static char v0_peek(const struct v0 *v)
{
	return v->pos < v->len ? v->s[v->pos] : 0;
}

/* <base-62-number> ::= {0-9a-zA-Z} "_"; "_" is 0, "0_" 1, ... */
static bool v0_base62(struct v0 *v, uint64_t *out)
{
	uint64_t x = 0;

	if (v0_eat(v, '_')) {
		*out = 0;
		return true;
	}
	for (;;) {
		char c = v0_peek(v);
		unsigned d;

		if (c == '_')
			break;
		if (digit(c))
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'z')
			d = (unsigned)(c - 'a') + 10;
		else if (c >= 'A' && c <= 'Z')
			d = (unsigned)(c - 'A') + 36;
		else
			return v0_fail(v);
		if (x > (UINT64_MAX - d) / 62)
			return v0_fail(v);
		x = x * 62 + d;
		v->pos++;
	}
	v->pos++;	/* '_' */
	*out = x + 1;
	return true;
}

/* [<disambiguator>] ::= "s" <base-62-number>: 0 when absent */
static bool v0_disambiguator(struct v0 *v, uint64_t *out)
{
	*out = 0;
	if (!v0_eat(v, 's'))
		return true;
	if (!v0_base62(v, out))
		return false;
	(*out)++;
	return true;
}

/* <identifier> ::= [<disambiguator>] <decimal> ["_"] <bytes>; Punycode
 * ("u" prefix) is not read */
static bool v0_ident(struct v0 *v, uint64_t *dis, const char **id,
		     size_t *idlen)
{
	size_t n = 0;

	if (!v0_disambiguator(v, dis))
		return false;
	if (v0_peek(v) == 'u' || !digit(v0_peek(v)))
		return v0_fail(v);
	if (v0_peek(v) == '0') {
		v->pos++;
	} else {
		while (digit(v0_peek(v))) {
			n = n * 10 + (size_t)(v->s[v->pos++] - '0');
			if (n >= DM_MAX)
				return v0_fail(v);
		}
	}
	v0_eat(v, '_');
	if (v->len - v->pos < n)
		return v0_fail(v);
	*id = v->s + v->pos;
	*idlen = n;
	v->pos += n;
	return true;
}

static bool v0_path(struct v0 *v, bool in_value);
static bool v0_type(struct v0 *v);

/* "B" <base-62-number>: parse again what starts at that offset, before
 * this one (so that a loop cannot form) */
static bool v0_backref(struct v0 *v, bool (*fn)(struct v0 *, bool), bool arg)
{
	size_t at = v->pos - 1, save;
	uint64_t to;
	bool r;

	if (!v0_base62(v, &to))
		return false;
	if (to >= at || v->depth > 64)
		return v0_fail(v);
	save = v->pos;
	v->pos = (size_t)to;
	v->depth++;
	r = fn(v, arg);
	v->depth--;
	v->pos = save;
	return r;
}

static bool v0_type_fn(struct v0 *v, bool unused)
{
	(void)unused;
	return v0_type(v);
}

static bool v0_lifetime(struct v0 *v)
{
	uint64_t n;

	/* erased ('_) or bound; printed as "'_": a key's name never has
	 * one, a function's generic arguments rarely */
	if (!v0_base62(v, &n))
		return false;
	sb_str(v->o, "'_");
	return true;
}

static bool v0_const(struct v0 *v, bool unused);

static bool v0_generic_args(struct v0 *v, bool in_value)
{
	bool first = true;

	sb_str(v->o, in_value ? "::<" : "<");
	while (!v0_eat(v, 'E')) {
		if (v->pos >= v->len || v->o->fail)
			return v0_fail(v);
		if (!first)
			sb_str(v->o, ", ");
		first = false;
		if (v0_eat(v, 'L')) {
			if (!v0_lifetime(v))
				return false;
		} else if (v0_eat(v, 'K')) {
			if (!v0_const(v, false))
				return false;
		} else if (!v0_type(v)) {
			return false;
		}
	}
	sb_str(v->o, ">");
	return true;
}

static bool v0_path(struct v0 *v, bool in_value)
{
	uint64_t dis;
	const char *id;
	size_t idlen;
	char c, ns;

	if (++v->depth > 64 || v->o->fail) {
		v->depth--;
		return v0_fail(v);
	}
	c = v0_peek(v);
	v->pos++;
	switch (c) {
	case 'C':	/* crate root */
		if (!v0_ident(v, &dis, &id, &idlen))
			break;
		sb_put(v->o, id, idlen);
		v->depth--;
		return true;
	case 'M':	/* <T> */
	case 'X':	/* <T as Trait> */
	case 'Y':	/* <T as Trait>, the trait's own item */
		if (c != 'Y') {
			/* the impl's own path only disambiguates */
			if (!v0_disambiguator(v, &dis))
				break;
			v->o->quiet++;
			bool ok = v0_path(v, false);

			v->o->quiet--;
			if (!ok)
				break;
		}
		sb_str(v->o, "<");
		if (!v0_type(v))
			break;
		if (c != 'M') {
			sb_str(v->o, " as ");
			if (!v0_path(v, false))
				break;
		}
		sb_str(v->o, ">");
		v->depth--;
		return true;
	case 'N':	/* parent::name */
		ns = v0_peek(v);
		if (!((ns >= 'a' && ns <= 'z') || (ns >= 'A' && ns <= 'Z')))
			break;
		v->pos++;
		if (!v0_path(v, in_value) || !v0_ident(v, &dis, &id, &idlen))
			break;
		if (ns >= 'a' && ns <= 'z') {
			if (idlen) {
				sb_str(v->o, "::");
				sb_put(v->o, id, idlen);
			}
		} else {
			char num[24];

			sb_str(v->o, "::{");
			sb_str(v->o, ns == 'C' ? "closure" : ns == 'S' ? "shim" :
				     (char[]){ ns, 0 });
			if (idlen) {
				sb_str(v->o, ":");
				sb_put(v->o, id, idlen);
			}
			snprintf(num, sizeof(num), "#%llu}",
				 (unsigned long long)dis);
			sb_str(v->o, num);
		}
		v->depth--;
		return true;
	case 'I':	/* path<args> */
		if (!v0_path(v, in_value) || !v0_generic_args(v, in_value))
			break;
		v->depth--;
		return true;
	case 'B':
		if (!v0_backref(v, v0_path, in_value))
			break;
		v->depth--;
		return true;
	default:
		v0_fail(v);
		break;
	}
	v->depth--;
	return false;
}

static bool v0_type(struct v0 *v)
{
	static const char basic[] = "abcdefhijlmnostuvxyzp";
	static const char *const basic_name[] = {
		"i8", "bool", "char", "f64", "str", "f32", "u8", "isize",
		"usize", "i32", "u32", "i128", "u128", "i16", "u16", "()",
		"...", "i64", "u64", "!", "_",
	};
	char c = v0_peek(v);
	const char *b = c ? strchr(basic, c) : NULL;
	bool ok;

	if (++v->depth > 64)
		return v0_fail(v);
	if (b) {
		v->pos++;
		sb_str(v->o, basic_name[b - basic]);
		v->depth--;
		return true;
	}
	v->pos++;
	switch (c) {
	case 'A':	/* [T; N] */
	case 'S':	/* [T] */
		sb_str(v->o, "[");
		ok = v0_type(v);
		if (ok && c == 'A') {
			sb_str(v->o, "; ");
			ok = v0_const(v, false);
		}
		sb_str(v->o, "]");
		break;
	case 'R':	/* &T, &mut T */
	case 'Q':
		sb_str(v->o, c == 'R' ? "&" : "&mut ");
		if (v0_eat(v, 'L')) {
			uint64_t n;

			/* the erased lifetime is not printed */
			ok = v0_base62(v, &n) && v0_type(v);
		} else {
			ok = v0_type(v);
		}
		break;
	case 'P':	/* *const T, *mut T */
	case 'O':
		sb_str(v->o, c == 'P' ? "*const " : "*mut ");
		ok = v0_type(v);
		break;
	case 'T': {	/* (A, B) */
		int n = 0;

		sb_str(v->o, "(");
		ok = true;
		while (ok && !v0_eat(v, 'E')) {
			if (v->pos >= v->len)
				ok = v0_fail(v);
			else {
				if (n++)
					sb_str(v->o, ", ");
				ok = v0_type(v);
			}
		}
		sb_str(v->o, n == 1 ? ",)" : ")");
		break;
	}
	case 'B':
		ok = v0_backref(v, v0_type_fn, false);
		break;
	case 'C': case 'M': case 'X': case 'Y': case 'N': case 'I':
		v->pos--;
		ok = v0_path(v, false);
		break;
	default:	/* F (fn pointers), D (dyn): not read */
		ok = v0_fail(v);
		break;
	}
	v->depth--;
	return ok;
}

/* <const> ::= <type> <const-data> | "p" | <backref>: integers, bool and
 * char values; others are not read */
static bool v0_const(struct v0 *v, bool unused)
{
	char c = v0_peek(v), num[48];
	bool neg = false;
	uint64_t x = 0;
	int digits = 0;

	(void)unused;
	if (v0_eat(v, 'p')) {
		sb_str(v->o, "_");
		return true;
	}
	if (v0_eat(v, 'B'))
		return v0_backref(v, v0_const, false);
	if (!c || !strchr("abchijlmnostxy", c))
		return v0_fail(v);
	v->pos++;
	if (strchr("alnsx", c) && v0_eat(v, 'n'))
		neg = true;
	while (v0_peek(v) != '_') {
		char h = v0_peek(v);

		if (!hex_digit(h) || ++digits > 16)
			return v0_fail(v);
		x = x * 16 + (uint64_t)(digit(h) ? h - '0' : h - 'a' + 10);
		v->pos++;
	}
	v->pos++;	/* '_' */
	if (c == 'b') {
		if (x > 1)
			return v0_fail(v);
		sb_str(v->o, x ? "true" : "false");
	} else if (c == 'c') {
		if (x < 0x20 || x >= 0x7f || x == '\'' || x == '\\')
			return v0_fail(v);	/* printable ASCII only */
		snprintf(num, sizeof(num), "'%c'", (char)x);
		sb_str(v->o, num);
	} else {
		snprintf(num, sizeof(num), "%s%llu", neg ? "-" : "",
			 (unsigned long long)x);
		sb_str(v->o, num);
	}
	return true;
}

static char *rust_v0(const char *sym)
{
	struct sb o = { 0 };
	struct v0 v = { .s = sym + 2, .o = &o };
	const char *dot;

	/* the mangled part: ASCII letters, digits and '_'; a suffix from
	 * the first '.' */
	dot = strchr(v.s, '.');
	v.len = dot ? (size_t)(dot - v.s) : strlen(v.s);
	for (size_t i = 0; i < v.len; i++)
		if (!(v.s[i] == '_' || digit(v.s[i]) ||
		      (v.s[i] >= 'a' && v.s[i] <= 'z') ||
		      (v.s[i] >= 'A' && v.s[i] <= 'Z')))
			return NULL;
	if (digit(v0_peek(&v)))	/* an encoding version: 0 only */
		return NULL;
	if (!(o.b = malloc(DM_MAX)))
		return NULL;
	o.b[0] = 0;
	if (v0_path(&v, true) && v.pos < v.len) {
		/* the instantiating crate: not part of the name */
		o.quiet++;
		v0_path(&v, false);
		o.quiet--;
	}
	if (!o.fail && v.pos != v.len)
		o.fail = true;
	if (!o.fail && dot)
		rust_suffix(&o, dot);
	if (o.fail) {
		free(o.b);
		return NULL;
	}
	return o.b;
}

char *sy_demangle(const char *sym)
{
	struct dm d = { .p = sym ? sym + 2 : NULL };
	char *r;

	if (sym && !strncmp(sym, "_R", 2) && strlen(sym) < DM_MAX)
		return rust_v0(sym);
	if (sym && !strncmp(sym, "_ZN", 3) && strlen(sym) < DM_MAX &&
	    (r = rust_legacy(sym)))
		return r;

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
