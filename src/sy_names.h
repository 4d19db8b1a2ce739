/* SPDX-License-Identifier: MIT */
/*
 * sy_names.h - how names and texts are shown (src/names.c): the C++
 * demangler that the library and the tool share, and the escaping of text
 * for JSON and for a terminal, the copy routine's strategies by name.
 * Internal; compiled into the tool too, so
 * that `list FILE`, `list PID`, SWITCHYARD_KEYS and the socket's patterns
 * spell every name the same way.
 */
#ifndef SY_NAMES_H
#define SY_NAMES_H

#include <stddef.h>
#include <stdio.h>

/* A copy strategy's name (enum switchyard_memcpy_strategy, <switchyard/
 * memcpy.h>'s order), as the calibration report and `switchyard cpu` print
 * it ("?" for none of them). Thread-safe, async-signal-safe. */
static inline const char *sy_strategy_name(int s)
{
	static const char *const names[] = {
		"short", "loop", "sse2", "avx2", "avx512", "rep_movsb",
		"libc",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/*
 * The readable form of a C++ symbol (_Z...), malloc'ed, or NULL when sym is
 * not mangled or uses what this demangler does not read (then the symbol is
 * shown as it is, by every command alike). Its output is libstdc++'s
 * (c++filt's) for what it reads: "ns::k", "(anonymous namespace)::k",
 * "f(int)::k", "S::f(int) const", "g<int>(char const*)". Deliberately not
 * __cxa_demangle(): a process without the C++ runtime would then name its
 * keys otherwise than one with it, and than the tool. A Rust symbol
 * (legacy "_ZN...17h<hash>E" or v0 "_R...") reads as rustc-demangle's
 * alternate form prints it, without hashes: "app::net::TRACE",
 * "<app::Conn as app::Poll>::poll".
 * Thread-safe; not async-signal-safe (malloc).
 */
__attribute__((visibility("hidden")))
char *sy_demangle(const char *sym);

/* The length of the valid UTF-8 sequence at s (1 for ASCII; 2 to 4; no
 * overlong forms, surrogates or code points past U+10FFFF), 0 if the bytes
 * at s are not one. Thread-safe, async-signal-safe. */
__attribute__((visibility("hidden")))
size_t sy_utf8_len(const char *s);

/*
 * s as the body of a JSON string (no quotes), into buf (size bytes, always
 * terminated; *need: the bytes the whole needs, with the terminator).
 * Valid UTF-8 passes through; '"' and '\\' are escaped; a control character
 * (below 0x20, 0x7f, and the C1 controls U+0080..U+009F, which some
 * terminals obey) and a byte that is not part of valid UTF-8 become
 * \u00XX: U+0080 to U+00FF, which valid UTF-8 would spell with two bytes,
 * so a reader of this JSON (the tool) knows it stood for the byte XX.
 * Thread-safe, async-signal-safe.
 */
__attribute__((visibility("hidden")))
size_t sy_json_escape(const char *s, char *buf, size_t size);

/* s for a terminal: valid UTF-8 passes through, control characters and
 * invalid bytes are written as \xNN, C1 controls as \u00NN. Thread-safe. */
__attribute__((visibility("hidden")))
void sy_text_put(FILE *f, const char *s);

#endif /* SY_NAMES_H */
