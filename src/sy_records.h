/* SPDX-License-Identifier: MIT */
/*
 * sy_records.h - the records that the public headers' macros emit into
 * sections of the object that uses them, one layout each.
 *
 * Two readers share these layouts: the library, which reads them in memory
 * from the objects it registers (internal.h includes this header), and
 * tools/records.c, which reads them from a 64-bit ELF file on disk
 * (`switchyard list FILE`, `prepatch`). Neither repeats an offset or a size
 * of its own: each uses the structs below, offsetof() and the SY_REC_*
 * sizes. The sizes are the x86-64 ones, which the headers' asm writes with
 * literal .long/.quad directives: the assertions at the end keep the C
 * layout and the asm in step on every 64-bit target. On a 32-bit target
 * (the plain fallback) only the records written by C initialisers exist
 * (key descriptions, names), in that target's own layout.
 *
 *   section                 record               size  emitted by
 *   sy_jump_entries         struct sy_jump_entry   16  static_branch_*()
 *                                                      (arch/x86_64.h)
 *   sy_static_call_sites    struct sy_sc_entry     16  static_call() sites
 *                                                      (static_call.h)
 *   sy_altinstr             struct sy_alt_entry    16  alternative()
 *                                                      (arch/x86_64_alternative.h)
 *   sy_runtime_const        struct sy_rc_entry     16  runtime_const_*()
 *                                                      (arch/x86_64_runtime_const.h)
 *   sy_key_desc             struct sy__key_desc    16  SWITCHYARD_KEY_DESCRIPTION()
 *                                                      (static_key.h)
 *   sy_names                struct sy__name        24  SY__NAME_RECORD() (core.h)
 *   sy_sc_targets           struct sy__sc_target   24  SWITCHYARD_STATIC_CALL_TARGET()
 *                                                      (static_call.h)
 *
 * Self-relative fields (code, target, site, repl, copy) hold the distance
 * from the field itself to what they name: the same bytes on disk and in
 * memory, whatever the load address. Absolute ones (key, meta, sym, obj,
 * name, text) are pointers, filled by the dynamic linker in a PIE or a
 * shared object (tools/elf_image.c applies the relocations itself).
 */
#ifndef SY_RECORDS_H
#define SY_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include <switchyard.h>	/* struct sy__key_desc, sy__name, sy__sc_meta,
				   sy__sc_target */

#define SY_SEC_JUMP "sy_jump_entries"
#define SY_SEC_CALL "sy_static_call_sites"
#define SY_SEC_ALT "sy_altinstr"
#define SY_SEC_RC "sy_runtime_const"
#define SY_SEC_DESC "sy_key_desc"
#define SY_SEC_NAMES "sy_names"
#define SY_SEC_TARGETS "sy_sc_targets"

/*
 * One jump label site: the jump (or, once `switchyard prepatch` wrote the
 * key's initial state into the file, the TEST of the same rel) at code,
 * its destination at target, its key's address in key. The registry
 * indexes a table by (key, code) beside it; the records do not move.
 */
struct sy_jump_entry {
	int32_t code;
	int32_t target;
	uintptr_t key;
};

/*
 * The key field's low bits (keys are at least 8-byte aligned):
 *
 *   bit  name               written by      meaning
 *   0    SY_ENTRY_BRANCH    the asm (disk)  the likely form: the jump is
 *                                           the branch taken when disabled
 *   1    SY_ENTRY_LONG      the registry    a 5-byte site (else 2)
 *   2    SY_ENTRY_DEAD      the registry    the key's object went away:
 *                                           never written again
 */
#define SY_ENTRY_BRANCH 1u
#define SY_ENTRY_LONG 2u
#define SY_ENTRY_DEAD 4u
#define SY_ENTRY_FLAGS 7u

/*
 * One static call site (writable: the library keeps its state in flags).
 * meta points at the site's struct sy__sc_meta (static_call.h): its key
 * and its kind, SY_SC_KIND_CALLEE_SAVE and up for a callee-save site.
 */
struct sy__sc_meta;
struct sy_sc_entry {
	const struct sy__sc_meta *meta;
	int32_t code;	/* the call, relative to this field */
	uint32_t flags;	/* 0 on disk; static_call.c's state at run time */
};
#define SY_SC_KIND_CALLEE_SAVE 16

/* One alternative: the site's bytes are replaced by repl's when the
 * feature is present (absent, with bit 15). */
struct sy_alt_entry {
	int32_t site;	/* relative to this field */
	int32_t repl;	/* relative to this field */
	int32_t copy;	/* relative to this field */
	uint16_t feature;	/* bit 15: applies when absent; bit 14:
				   refused (alternative.c, at run time) */
	uint8_t len;		/* the site's, padding included */
	uint8_t repl_len;
};

/* One run-time constant: the immediate that ends at code's instruction
 * + end holds sym's value once runtime_const_init() ran. */
struct sy_rc_entry {
	const void *sym;
	int32_t code;	/* the guard, relative to this field */
	uint8_t end;	/* end of the instruction with the immediate */
	uint8_t size;	/* of the immediate: 8, 4 or 1 */
	uint16_t pad;
};

#ifdef __cplusplus	/* a C++ test includes internal.h */
#define SY_REC_ASSERT static_assert
#else
#define SY_REC_ASSERT _Static_assert
#endif

#define SY_REC_JUMP_SIZE 16
#define SY_REC_CALL_SIZE 16
#define SY_REC_ALT_SIZE 16
#define SY_REC_RC_SIZE 16
#define SY_REC_DESC_SIZE 16
#define SY_REC_NAMES_SIZE 24
#define SY_REC_TARGETS_SIZE 24
#define SY_REC_META_SIZE 16	/* struct sy__sc_meta */
#define SY_REC_KEY_SIZE 16	/* struct static_key, in a 64-bit file */

#if UINTPTR_MAX == UINT64_MAX
SY_REC_ASSERT(sizeof(struct sy_jump_entry) == SY_REC_JUMP_SIZE &&
	       offsetof(struct sy_jump_entry, key) == 8,
	       "sy_jump_entries: arch/x86_64.h writes .long, .long, .quad");
SY_REC_ASSERT(sizeof(struct sy_sc_entry) == SY_REC_CALL_SIZE &&
	       offsetof(struct sy_sc_entry, code) == 8,
	       "sy_static_call_sites: static_call.h writes .quad, .long, .long");
SY_REC_ASSERT(sizeof(struct sy_rc_entry) == SY_REC_RC_SIZE &&
	       offsetof(struct sy_rc_entry, code) == 8 &&
	       offsetof(struct sy_rc_entry, end) == 12,
	       "sy_runtime_const: .quad, .long, .byte, .byte, .short");
SY_REC_ASSERT(sizeof(struct sy__key_desc) == SY_REC_DESC_SIZE &&
	       offsetof(struct sy__key_desc, text) == 8,
	       "sy_key_desc: two pointers");
SY_REC_ASSERT(sizeof(struct sy__name) == SY_REC_NAMES_SIZE &&
	       offsetof(struct sy__name, name) == 8 &&
	       offsetof(struct sy__name, size) == 16,
	       "sy_names: two pointers and a size");
SY_REC_ASSERT(sizeof(struct sy__sc_target) == SY_REC_TARGETS_SIZE &&
	       offsetof(struct sy__sc_target, name) == 16,
	       "sy_sc_targets: three pointers");
SY_REC_ASSERT(sizeof(struct sy__sc_meta) == SY_REC_META_SIZE &&
	       offsetof(struct sy__sc_meta, kind) == 8,
	       "struct sy__sc_meta: the key, then the kind");
SY_REC_ASSERT(sizeof(struct static_key) == SY_REC_KEY_SIZE,
	       "struct static_key: an array of keys is named by index");
#endif
SY_REC_ASSERT(sizeof(struct sy_alt_entry) == SY_REC_ALT_SIZE &&
	       offsetof(struct sy_alt_entry, feature) == 12 &&
	       offsetof(struct sy_alt_entry, len) == 14,
	       "sy_altinstr: .long x3, .short, .byte, .byte");

#endif /* SY_RECORDS_H */
