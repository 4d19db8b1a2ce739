/* SPDX-License-Identifier: MIT */
/*
 * arch/generic/sy_arch.h - architectures without jump label support: the
 * header compiles every static_branch_*() to load + test + branch, so no
 * site is ever registered and these are never reached with one.
 */
#ifndef SY_ARCH_GENERIC_H
#define SY_ARCH_GENERIC_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#define SY_ARCH_MAX_INSN 16
/* A debugger's breakpoint instruction, for messages. */
#define SY_ARCH_TRAP_NAME "trap"

/* No site: any length. */
#define SY_ARCH_JUMP_LEN(long_) ((void)(long_), 0u)
#define SY_ARCH_JUMP_IS_LONG(len) ((void)(len), false)

/* No byte-sized breakpoint here (and no exact change with a bp_mask). */
static inline bool sy_arch_bp_byte(uint8_t b)
{
	(void)b;
	return false;
}

static inline int sy_arch_jump_decode(uintptr_t code, uintptr_t target,
				      unsigned *len)
{
	(void)code;
	(void)target;
	*len = 0;
	return -ENOSYS;
}

static inline int sy_arch_jump_shadow(const uint8_t *file, const uint8_t *mem,
				      unsigned len)
{
	(void)file;
	(void)mem;
	(void)len;
	return -1;
}

static inline void sy_arch_jump_encode(uintptr_t code, uintptr_t target,
				       unsigned len, bool jump, uint8_t *out)
{
	(void)code;
	(void)target;
	(void)len;
	(void)jump;
	(void)out;
}

static inline void sy_arch_jump_encode_pair(uintptr_t code, uintptr_t target,
					    unsigned len, bool old_jump,
					    bool new_jump, uint8_t *old,
					    uint8_t *new_)
{
	(void)old_jump;
	sy_arch_jump_encode(code, target, len, new_jump, new_);
	sy_arch_jump_encode(code, target, len, new_jump, old);
}

static inline enum sy_site_check sy_arch_site_check(const uint8_t *mem,
						    const uint8_t *new_,
						    unsigned len,
						    bool hidden_jump,
						    struct sy_arch_fix *fix)
{
	(void)mem;
	(void)new_;
	(void)len;
	(void)hidden_jump;
	(void)fix;
	return SY_SITE_FOREIGN;
}

static inline bool sy_arch_is_trap(const uint8_t *mem)
{
	(void)mem;
	return false;
}

static inline bool sy_arch_site_jumps(const uint8_t *mem, unsigned len,
				      bool hidden_jump)
{
	(void)mem;
	(void)len;
	return hidden_jump;
}


/* A spin-wait hint: none here. */
static inline void sy_arch_cpu_relax(void)
{
	__asm__ volatile("" ::: "memory");
}

#endif /* SY_ARCH_GENERIC_H */
