/* SPDX-License-Identifier: MIT */
/*
 * test_demangle_rust.c - Rust symbols in the demangler that the library
 * and the tool share (src/names.c): the names a Rust program's keys and
 * functions get in `switchyard list`, SWITCHYARD_KEYS and introspection.
 *
 * Each expected name is what rustc-demangle 0.1 prints in its alternate
 * form ({:#}, no hashes), taken from symbols rustc 1.95 emitted for a test
 * program (legacy mangling, rustc's default for a crate's own symbols, and
 * v0, -C symbol-mangling-version=v0 and the standard library's); the
 * demangler was compared with rustc-demangle over 21,000 symbols (the
 * standard library, librustc_driver's exports): every name it gives is
 * rustc-demangle's, and it leaves 0.5% mangled (dyn and fn pointer types).
 */
#include "../../src/sy_names.h"
#include "sy_check.h"

static const char *const cases[][2] = {
	/* legacy: the hash dropped, escapes undone */
	{ "_ZN5myapp3net5TRACE17h0123456789abcdefE", "myapp::net::TRACE" },
	{ "_ZN1m4main17h4009bc0cd8b193aaE", "m::main" },
	{ "_ZN1m4main17h4009bc0cd8b193aaE.llvm.12345", "m::main" },
	{ "_ZN1m10S$LT$A$GT$3new17h820b8bb69fc62bc4E", "m::S<A>::new" },
	{ "_ZN1m4main28_$u7b$$u7b$closure$u7d$$u7d$17hd2fd452391b549edE",
	  "m::main::{{closure}}" },
	{ "_ZN102_$LT$core..iter..adapters..map..Map$LT$I$C$F$GT$$u20$as$u20$"
	  "core..iter..traits..iterator..Iterator$GT$4fold17h19ee717338930ef0E",
	  "<core::iter::adapters::map::Map<I,F> as "
	  "core::iter::traits::iterator::Iterator>::fold" },
	{ "_ZN2ns17h0123456789abcdefE", "ns" },
	/* v0 */
	{ "_RNvNtCs1234_5myapp3net5TRACE", "myapp::net::TRACE" },
	{ "_RNvCskK7mfDs1mzF_1m5TRACE.llvm.77", "m::TRACE" },
	{ "_RNvCskK7mfDs1mzF_1m4main", "m::main" },
	{ "_RINvCskK7mfDs1mzF_1m3genhEB2_", "m::gen::<u8>" },
	{ "_RINvCskK7mfDs1mzF_1m3genReEB2_", "m::gen::<&str>" },
	{ "_RINvCskK7mfDs1mzF_1m3genTxcEEB2_", "m::gen::<(i64, char)>" },
	{ "_RNCINvCskK7mfDs1mzF_1m3genhE0B4_", "m::gen::<u8>::{closure#0}" },
	{ "_RNCNCNCNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal00s_0B9_",
	  "std::rt::lang_start_internal::{closure#0}::{closure#0}::{closure#1}" },
	{ "_RNvMs_CskK7mfDs1mzF_1mINtB4_1SAmj3_E3newB4_",
	  "<m::S<[u32; 3]>>::new" },
	{ "_RNvXCskK7mfDs1mzF_1mINtB2_1SAmj3_ENtB2_1T2goB2_",
	  "<m::S<[u32; 3]> as m::T>::go" },
	{ "_RNvYjNtNtCsgEmfK2I1SDS_4core3cmp3Ord3maxCskK7mfDs1mzF_1m",
	  "<usize as core::cmp::Ord>::max" },
	{ "_RNvMNtCsgEmfK2I1SDS_4core5sliceSTxcE4iterCskK7mfDs1mzF_1m",
	  "<[(i64, char)]>::iter" },
	{ "_RINvNtCsgEmfK2I1SDS_4core3ptr10swap_chunkKj8_ECskK7mfDs1mzF_1m",
	  "core::ptr::swap_chunk::<8>" },
	{ "_RNvXs_Cs1234_1aRINtB4_1SlENtB4_1T1f", "<&a::S<i32> as a::T>::f" },
	{ "_RNvNtNtCsjrHSEGnQ3l9_3std6thread11main_thread4MAIN.0",
	  "std::thread::main_thread::MAIN.0" },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = sy_demangle(cases[i][0]);

		if (!d || strcmp(d, cases[i][1]))
			fprintf(stderr, "%s: '%s', want '%s'\n", cases[i][0],
				d ? d : "(null)", cases[i][1]);
		CHECK(d && !strcmp(d, cases[i][1]));
		free(d);
	}
	/* a C++ name whose last element is not a hash stays C++'s */
	{
		char *d = sy_demangle("_ZN2ns17H0123456789abcdefE");

		CHECK(d && !strcmp(d, "ns::H0123456789abcdef"));
		free(d);
	}
	/* not read: left mangled (NULL), as every command shows them */
	CHECK(!sy_demangle("_R"));
	CHECK(!sy_demangle("_RNvC"));
	CHECK(!sy_demangle("_RNvCs1234_5myapp"));		/* cut short */
	CHECK(!sy_demangle("_RNvCs1234_5myapp5TRACEjunk"));	/* trailing */
	CHECK(!sy_demangle("_RNvCs1234_5myapp5TR$CE"));	/* not ASCII alnum */
	CHECK(!sy_demangle("_R0NvC1a1b"));	/* an encoding version */
	CHECK(!sy_demangle("_RB_"));		/* a back-reference to itself */
	CHECK(!sy_demangle("_RNvB_1a"));	/* a loop through an earlier one */
	CHECK(!sy_demangle("_RNvCu5myapp1a"));	/* Punycode */
	/* dyn: not read */
	CHECK(!sy_demangle("_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtNt"
			   "CslNYArtu3iFV_5alloc5boxed3BoxDNtCskK7mfDs1mzF_1m"
			   "1TEL_EEB1i_"));
	/* recursion: a deep nesting is refused, not a stack overflow; a
	 * shallow one is read */
	{
		char name[1024] = "_R";
		size_t n;

		for (int depth = 10; depth <= 200; depth += 190) {
			n = 2;
			for (int i = 0; i < depth; i++, n += 2)
				memcpy(name + n, "Nv", 2);
			memcpy(name + n, "C1a", 3);
			n += 3;
			for (int i = 0; i < depth; i++, n += 2)
				memcpy(name + n, "1b", 2);
			name[n] = 0;
			char *d = sy_demangle(name);

			CHECK(depth < 64 ? d && strlen(d) == 1 + 3 * 10 : !d);
			free(d);
		}
	}
	/* a control character in a legacy escape is not printed */
	{
		char *d = sy_demangle("_ZN1a7b$u1b$c17h0123456789abcdefE");

		CHECK(!d || !strchr(d, 0x1b));
		free(d);
	}
	return sy_test_done("demangle_rust");
}
