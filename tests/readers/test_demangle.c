/* SPDX-License-Identifier: MIT */
/*
 * test_demangle.c - the demangler and the text escaping that the library
 * and the tool share (src/names.c).
 *  - the names keys, calls and their targets have, demangled as written
 *    here (what `switchyard list FILE` and a live process both show);
 *  - every function and object symbol of the C++ runtime loaded here
 *    (thousands: nested, template, std::, local names...): where ours
 *    gives a name, it is libstdc++'s __cxa_demangle()'s, character for
 *    character; where it gives NULL, the symbol is shown as it is;
 *  - UTF-8: valid sequences pass, overlong forms, surrogates, truncated
 *    and stray bytes do not; JSON and terminal escaping.
 */
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/sy_elf.h"
#include "../../src/sy_names.h"
#include "sy_check.h"

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static const char *const cases[][2] = {
	{ "_ZN2ns2k1E", "ns::k1" },
	{ "_ZN2ns5inner2k2E", "ns::inner::k2" },
	{ "_ZN6holder6memberE", "holder::member" },
	{ "_ZN12_GLOBAL__N_16hiddenE", "(anonymous namespace)::hidden" },
	{ "_ZZ25test_misuse_reported_oncevE4lone",
	  "test_misuse_reported_once()::lone" },
	{ "_ZZL9local_keyicE2lk", "local_key(int, char)::lk" },
	{ "_ZZ1fvE1k_0", "f()::k" },
	{ "_ZN1S1fEi", "S::f(int)" },
	{ "_ZNK1S1gEv", "S::g() const" },
	{ "_ZN2ns1fEPKcRKNS_1AE", "ns::f(char const*, ns::A const&)" },
	{ "_Z1fIiEvT_", "void f<int>(int)" },
	{ "_ZN1AILi3EE1kE", "A<3>::k" },
	{ "_Z4implv.cold", "impl() [clone .cold]" },
	{ "_Z4impli.constprop.0", "impl(int) [clone .constprop.0]" },
	{ "_ZNSt6vectorIiSaIiEE9push_backERKi",
	  "std::vector<int, std::allocator<int> >::push_back(int const&)" },
	{ "_ZN1SC2Ev", "S::S()" },
	{ "_ZN1SD1Ev", "S::~S()" },
};

static int compared, same, unread;

static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct sy_syms syms;

	(void)size;
	(void)arg;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libstdc++"))
		return 0;
	if (sy_syms_load(info->dlpi_name, 0, &syms))
		return 0;
	for (size_t i = 0; i < syms.n; i++) {
		const char *s = syms.v[i].name;
		char *mine, *ref;
		int st = -1;

		if (strncmp(s, "_Z", 2))
			continue;
		mine = sy_demangle(s);
		ref = __cxa_demangle(s, NULL, NULL, &st);
		compared++;
		if (!mine) {
			unread++;
		} else if (st == 0 && ref && !strcmp(mine, ref)) {
			same++;
		} else {
			CHECK(!"a name that is not libstdc++'s");
			fprintf(stderr, "%s\n  ours:      %s\n  libstdc++: %s\n",
				s, mine, ref ? ref : "(none)");
		}
		free(mine);
		free(ref);
	}
	sy_syms_free(&syms);
	return 0;
}

static char *json(const char *s)
{
	static char buf[256];

	CHECK(sy_json_escape(s, buf, sizeof(buf)) <= sizeof(buf));
	return buf;
}

int main(void)
{
	char small[8];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = sy_demangle(cases[i][0]);
		char *ref;
		int st = -1;

		if (!d || strcmp(d, cases[i][1]))
			fprintf(stderr, "%s: '%s', want '%s'\n", cases[i][0],
				d ? d : "(null)", cases[i][1]);
		CHECK(d && !strcmp(d, cases[i][1]));
		ref = __cxa_demangle(cases[i][0], NULL, NULL, &st);
		CHECK(st == 0 && ref && !strcmp(ref, cases[i][1]));
		free(ref);
		free(d);
	}
	/* not mangled, or not read: NULL (shown as they are) */
	CHECK(!sy_demangle("net_trace"));
	CHECK(!sy_demangle("_Z"));
	CHECK(!sy_demangle("_ZN2ns"));
	CHECK(!sy_demangle("_ZN1AplERKS_"));	/* an operator */
	CHECK(!sy_demangle("_Z1fPFviE"));	/* a function type */
	CHECK(!sy_demangle("_ZN2ns2k1Ejunk"));

	/* this process loads libstdc++ (its __cxa_demangle): its symbols */
	dl_iterate_phdr(each_object, NULL);
	printf("libstdc++: %d symbols, %d read alike, %d left mangled\n",
	       compared, same, unread);
	CHECK(compared > 1000 && same > compared / 2);

	/* UTF-8 */
	CHECK_EQ(sy_utf8_len("a"), 1);
	CHECK_EQ(sy_utf8_len("\xc3\xa9"), 2);
	CHECK_EQ(sy_utf8_len("\xe2\x80\x94"), 3);
	CHECK_EQ(sy_utf8_len("\xf0\x9f\x98\x80"), 4);
	CHECK_EQ(sy_utf8_len("\xc0\xaf"), 0);		/* overlong */
	CHECK_EQ(sy_utf8_len("\xe0\x80\xaf"), 0);	/* overlong */
	CHECK_EQ(sy_utf8_len("\xed\xa0\x80"), 0);	/* a surrogate */
	CHECK_EQ(sy_utf8_len("\xf4\x90\x80\x80"), 0);	/* past U+10FFFF */
	CHECK_EQ(sy_utf8_len("\xe2\x80"), 0);		/* cut short */
	CHECK_EQ(sy_utf8_len("\x80"), 0);		/* stray */
	CHECK_EQ(sy_utf8_len("\xff"), 0);
	CHECK(!strcmp(json("caf\xc3\xa9 \xe2\x80\x94"), "caf\xc3\xa9 \xe2\x80\x94"));
	CHECK(!strcmp(json("a\"b\\c"), "a\\\"b\\\\c"));
	CHECK(!strcmp(json("t\tn\n\x7f"), "t\\u0009n\\u000a\\u007f"));
	CHECK(!strcmp(json("bad \xff \xe2\x80!"), "bad \\u00ff \\u00e2\\u0080!"));
	/* C1 controls (U+0080..U+009F: U+009B is a CSI to some terminals)
	 * escaped by their code point, in JSON and in text; U+00A0 not */
	CHECK(!strcmp(json("x\xc2\x9b[2Jy \xc2\xa0"), "x\\u009b[2Jy \xc2\xa0"));
	CHECK(!strcmp(json("\xc2\x80\xc2\x9f"), "\\u0080\\u009f"));
	{
		char text[64] = "";
		FILE *f = fmemopen(text, sizeof(text) - 1, "w");

		CHECK(f != NULL);
		if (f) {
			sy_text_put(f, "x\xc2\x9b[2Jy\x1b \xc2\xa0");
			fclose(f);
		}
		CHECK(!strcmp(text, "x\\u009b[2Jy\\x1b \xc2\xa0"));
		if (strcmp(text, "x\\u009b[2Jy\\x1b \xc2\xa0"))
			fprintf(stderr, "text: '%s'\n", text);
	}
	/* too small: terminated, and says what the whole needs */
	CHECK_EQ(sy_json_escape("\xff\xff", small, sizeof(small)), 13);
	CHECK_EQ(strlen(small), 7);
	return sy_test_done("demangle");
}
