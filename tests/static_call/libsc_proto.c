/* SPDX-License-Identifier: MIT */
/*
 * libsc_proto.c - modules for test_sc_protocol.c, opened after start-up so
 * that their registration runs under the test's trace.
 *
 * Built twice. PROTO_SC: static call sites of the module's own call
 * (near targets) and the module's far target for the program's call (a
 * program calling a library's function: beyond rel32 reach, through a
 * stub). PROTO_CPU: an alternative that applies on every x86-64 CPU (SSE2)
 * and a site of the program's run-time constant, initialised before the
 * open; no static call site. PROTO_KEYS: a site of the program's key
 * proto_batch_a, which is off when the module opens (its site, compiled
 * as a jump, must be written).
 */
#include <stdint.h>

#include <switchyard.h>

#define API __attribute__((visibility("default")))

#ifdef PROTO_SC
API long proto_lib_far(long x);
API long proto_lib_a(long x);
API long proto_lib_b(long x);

__attribute__((noinline)) long proto_lib_far(long x) { return x + 1000; }
__attribute__((noinline)) long proto_lib_a(long x) { return x + 200; }
__attribute__((noinline)) long proto_lib_b(long x) { return x + 300; }

DEFINE_STATIC_CALL(proto_lib_call, proto_lib_a);

API long proto_lib_run(long x);
API int proto_lib_update(int which);
API struct static_call_key *proto_lib_key(void);

__attribute__((noinline)) long proto_lib_run(long x)
{
	return static_call(proto_lib_call)(x) +
	       static_call(proto_lib_call)(x + 1);
}

API int proto_lib_update(int which)
{
	return which ? static_call_update(proto_lib_call, proto_lib_b)
		     : static_call_update(proto_lib_call, proto_lib_a);
}

/* any target, e.g. the program's function: beyond reach from here */
API int proto_lib_set(long (*f)(long));

API int proto_lib_set(long (*f)(long))
{
	return static_call_update(proto_lib_call, f);
}

API struct static_call_key *proto_lib_key(void)
{
	return &STATIC_CALL_KEY(proto_lib_call);
}

#ifdef SY__ARCH_HAVE_STATIC_CALL
extern char __start_sy_static_call_sites[]
	__attribute__((visibility("hidden")));
extern char __stop_sy_static_call_sites[]
	__attribute__((visibility("hidden")));
API const void *proto_lib_sc_start = __start_sy_static_call_sites;
API const void *proto_lib_sc_stop = __stop_sy_static_call_sites;
#endif
#endif /* PROTO_SC */

#ifdef PROTO_CPU
extern unsigned int proto_limit;	/* the program's */

API long proto_cpu_run(void);

__attribute__((noinline)) long proto_cpu_run(void)
{
	int x;

	__asm__ volatile(ALTERNATIVE("mov $1, %k0", "mov $2, %k0",
				     X86_FEATURE_XMM2)
			 : "=r"(x));
	return x * 1000 + (long)runtime_const_u32(proto_limit);
}
#endif /* PROTO_CPU */

#ifdef PROTO_KEYS
extern struct static_key_false proto_batch_a;	/* the program's */

API int proto_keys_site(void);

__attribute__((noinline)) int proto_keys_site(void)
{
	return static_branch_unlikely(&proto_batch_a);
}

#ifdef SY__ARCH_HAVE_JUMP_LABEL
extern char __start_sy_jump_entries[] __attribute__((visibility("hidden")));
extern char __stop_sy_jump_entries[] __attribute__((visibility("hidden")));
API const void *proto_keys_start = __start_sy_jump_entries;
API const void *proto_keys_stop = __stop_sy_jump_entries;
#endif
#endif /* PROTO_KEYS */
