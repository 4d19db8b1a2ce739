/* SPDX-License-Identifier: MIT */
/*
 * check_headers.c - every public macro of <switchyard.h>, and a call of every
 * public function, in one translation unit. check_headers.sh compiles it as
 * C11/C17 (ISO and GNU) and C++14/17/20, with gcc and clang, -O0 and -O2,
 * patching and fallback mode, under -Wall -Wextra -Wpedantic -Werror: a user
 * whose build has those flags must be able to include the header and use
 * all of it. Compiled only (-c), never run: what is checked is the
 * diagnostics, not the behaviour (the unit tests check that).
 *
 * Every use sits in the user's own code as a user would write it: file-scope
 * definitions with and without `static`, a function-scope static key,
 * branches in if conditions and in expressions.
 */
#include <switchyard.h>

/* A build-time switch, as DEFINE_STATIC_KEY_MAYBE() wants it: 1, or absent. */
#define HC_CONFIG_ON 1

DEFINE_STATIC_KEY_TRUE(hc_true);
DEFINE_STATIC_KEY_FALSE(hc_false);
SWITCHYARD_KEY_DESCRIPTION(hc_false, "compiles in every mode");
DEFINE_STATIC_KEY_TRUE_RO(hc_true_ro);
DEFINE_STATIC_KEY_FALSE_RO(hc_false_ro);
static DEFINE_STATIC_KEY_TRUE(hc_static_true);
static DEFINE_STATIC_KEY_FALSE(hc_static_false);
DECLARE_STATIC_KEY_TRUE(hc_extern_true);
DECLARE_STATIC_KEY_FALSE(hc_extern_false);
DEFINE_STATIC_KEY_ARRAY_FALSE(hc_array_false, 4);
static DEFINE_STATIC_KEY_ARRAY_FALSE(hc_static_array_false, 2);
/*
 * The one construct -Wpedantic cannot be silenced for (static_key.h, "What
 * -Wpedantic cannot be silenced for"): arrays of TRUE keys in C. By default
 * they are wrapped as the header tells users to; check_headers.sh also
 * builds them bare (HC_BARE_ARRAY_TRUE) and expects exactly one diagnostic
 * each, the documented one.
 */
#if !defined(__cplusplus) && !defined(HC_BARE_ARRAY_TRUE)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#endif
DEFINE_STATIC_KEY_ARRAY_TRUE(hc_array_true, 4);
static DEFINE_STATIC_KEY_ARRAY_TRUE(hc_static_array_true, 2);
#if !defined(__cplusplus) && !defined(HC_BARE_ARRAY_TRUE)
#pragma GCC diagnostic pop
#endif
DECLARE_STATIC_KEY_MAYBE(HC_CONFIG_ON, hc_maybe_on);
DEFINE_STATIC_KEY_MAYBE(HC_CONFIG_ON, hc_maybe_on);
DECLARE_STATIC_KEY_MAYBE(HC_CONFIG_OFF, hc_maybe_off);
DEFINE_STATIC_KEY_MAYBE(HC_CONFIG_OFF, hc_maybe_off);
DEFINE_STATIC_KEY_DEFERRED_TRUE(hc_deferred_true, 100);
DEFINE_STATIC_KEY_DEFERRED_FALSE(hc_deferred_false, 100);
static DEFINE_STATIC_KEY_DEFERRED_FALSE(hc_static_deferred, 10);
struct static_key_deferred hc_deferred_plain;

/* The deprecated API: plain keys. */
struct static_key hc_plain = STATIC_KEY_INIT;
struct static_key hc_plain_true = STATIC_KEY_INIT_TRUE;
struct static_key hc_plain_false = STATIC_KEY_INIT_FALSE;
struct static_key_true hc_typed_true = STATIC_KEY_TRUE_INIT;
struct static_key_false hc_typed_false = STATIC_KEY_FALSE_INIT;

/* static_call.h */
static int hc_sc_int(int x) { return x; }
static void hc_sc_void(int x) { (void)x; }
DECLARE_STATIC_CALL(hc_sc, hc_sc_int);
DEFINE_STATIC_CALL(hc_sc, hc_sc_int);
DEFINE_STATIC_CALL_NULL(hc_sc_null, hc_sc_void);
DEFINE_STATIC_CALL_RET0(hc_sc_ret0, hc_sc_int);
EXPORT_STATIC_CALL(hc_sc);
EXPORT_STATIC_CALL_GPL(hc_sc);
/* the kinds beyond the kernel's API (a thunk's function: external, C) */
#ifdef __cplusplus
extern "C" {
#endif
long hc_cs_fn(long x);
long hc_cs_fn(long x) { return x; }
#ifdef __cplusplus
}
#endif
SWITCHYARD_CALLEE_SAVE_THUNK(hc_cs_fn);
DECLARE_STATIC_CALL_CALLEE_SAVE(hc_cs, hc_cs_fn);
DEFINE_STATIC_CALL_CALLEE_SAVE(hc_cs, SWITCHYARD_CALLEE_SAVE(hc_cs_fn));
DECLARE_STATIC_CALL_NATIVE(hc_nat, hc_sc_int, 8);
DEFINE_STATIC_CALL_NATIVE(hc_nat, hc_sc_int, 8);
#ifdef __x86_64__
SWITCHYARD_STATIC_CALL_NATIVE(hc_sc_int, "mov %edi, %eax");
#endif

#ifdef __cplusplus
extern "C" {
#endif
int hc_branches(void);
int hc_changes(void);
int hc_library(void);
int hc_static_calls(void);
int hc_io(volatile unsigned int *regs, unsigned char *buf, size_t n);
int hc_memcpy(void);
#ifdef __cplusplus
}
#endif

static void hc_log(enum switchyard_log_level level, const char *msg, void *arg)
{
	(void)level;
	(void)msg;
	(void)arg;
}

static int hc_key(const struct switchyard_key_info *key, void *arg)
{
	(void)arg;
	return key->enabled + key->count + (int)key->sites +
	       (key->name != NULL) + (key->object != NULL);
}

static int hc_site(const struct switchyard_site_info *site, void *arg)
{
	(void)arg;
	return site->length + site->jumps + site->likely + (int)site->line;
}

/* Every way to test a key. */
int hc_branches(void)
{
	static DEFINE_STATIC_KEY_FALSE(hc_local);
	int r = 0;

	if (static_branch_likely(&hc_true))
		r++;
	if (static_branch_unlikely(&hc_false))
		r++;
	if (static_branch_likely(&hc_false_ro) || static_branch_unlikely(&hc_true_ro))
		r++;
	r += static_branch_unlikely(&hc_static_false) + static_branch_likely(&hc_static_true);
	r += static_branch_likely(&hc_extern_true) + static_branch_unlikely(&hc_extern_false);
	r += static_branch_unlikely(&hc_array_false[3]) + static_branch_likely(&hc_array_true[0]);
	r += static_branch_unlikely(&hc_static_array_false[1]) +
	     static_branch_likely(&hc_static_array_true[1]);
	r += static_branch_unlikely(&hc_local);
	r += static_branch_maybe(HC_CONFIG_ON, &hc_maybe_on);
	r += static_branch_maybe(HC_CONFIG_OFF, &hc_maybe_off);
	r += static_branch_unlikely(&hc_deferred_false.key) +
	     static_branch_likely(&hc_deferred_true.key) +
	     static_branch_unlikely(&hc_static_deferred.key);
	r += static_branch_likely(&hc_typed_true) + static_branch_unlikely(&hc_typed_false);
	if (static_key_true(&hc_plain_true))
		r++;
	if (static_key_false(&hc_plain_false) || static_key_false(&hc_plain))
		r++;
	r += static_key_true(&hc_deferred_plain.key);
	r += static_key_enabled(&hc_true) + static_key_enabled(&hc_false) +
	     static_key_enabled(&hc_plain) + static_key_enabled(&hc_array_true[2]);
	r += static_key_count(&hc_plain) + static_key_count(&hc_true.key);
	r += static_key_initialized;
	return r;
}

/* Every way to change a key. */
int hc_changes(void)
{
	int r = 0;

	r += static_branch_enable(&hc_false) + static_branch_disable(&hc_true);
	r += static_branch_inc(&hc_array_false[1]) + static_branch_dec(&hc_array_false[1]);
	r += static_key_slow_inc(&hc_plain) + static_key_slow_dec(&hc_plain);
	r += static_key_enable(&hc_plain) + static_key_disable(&hc_plain);
	r += static_key_fast_inc_not_disabled(&hc_plain);
	if (switchyard_patch_lock() == 0) {
		r += static_branch_enable_cpuslocked(&hc_false) +
		     static_branch_disable_cpuslocked(&hc_false) +
		     static_branch_inc_cpuslocked(&hc_true) +
		     static_branch_dec_cpuslocked(&hc_true);
		r += static_key_enable_cpuslocked(&hc_plain) +
		     static_key_disable_cpuslocked(&hc_plain) +
		     static_key_slow_inc_cpuslocked(&hc_plain) +
		     static_key_slow_dec_cpuslocked(&hc_plain);
		r += switchyard_patch_unlock();
	}
	jump_label_rate_limit(&hc_deferred_false, 50);
	jump_label_rate_limit(&hc_deferred_true, 50UL);
	jump_label_rate_limit(&hc_deferred_plain, 5);
	(jump_label_rate_limit)(&hc_deferred_plain, 5);
	r += static_branch_deferred_inc(&hc_deferred_false);
	r += static_branch_slow_dec_deferred(&hc_deferred_false);
	r += static_branch_slow_dec_deferred(&hc_deferred_true);
	r += static_key_slow_inc(&hc_deferred_plain.key);
	r += static_key_slow_dec_deferred(&hc_deferred_plain);
	r += static_key_deferred_flush(&hc_deferred_false) +
	     static_key_deferred_flush(&hc_deferred_true) +
	     static_key_deferred_flush(&hc_deferred_plain);
	r += __static_key_slow_dec_deferred(&hc_deferred_plain.key,
					    &hc_deferred_plain.work, 10);
	r += __static_key_deferred_flush(&hc_deferred_plain, &hc_deferred_plain.work);
	jump_label_init();
	return r;
}

/* core.h and introspect.h. */
int hc_library(void)
{
	struct switchyard_stats st;
	int r = 0;

	r += switchyard_version()[0];
	switchyard_set_log(hc_log, NULL);
	switchyard_set_log(NULL, NULL);
	r += switchyard_set_policy(SWITCHYARD_POLICY_STRICT) +
	     switchyard_set_policy(SWITCHYARD_POLICY_DEFAULT);
	r += switchyard_get_stats(&st) + (int)st.sites;
	r += switchyard_for_each_key(hc_key, NULL);
	r += switchyard_for_each_site(&hc_true.key, hc_site, NULL);
	r += SWITCHYARD_VERSION_MAJOR + SWITCHYARD_VERSION_MINOR +
	     SWITCHYARD_VERSION_PATCH + SWITCHYARD_LOG_ERROR + SWITCHYARD_LOG_WARN +
	     SWITCHYARD_LOG_INFO;
	return r;
}

int hc_static_calls(void)
{
	int r = static_call(hc_sc)(1) + static_call(hc_sc_ret0)(2);

	static_call_cond(hc_sc_null)(3);
	r += static_call_update(hc_sc, hc_sc_int);
	r += static_call_update(hc_sc_null, hc_sc_void);
	r += static_call_update(hc_sc_null, NULL);
	r += static_call_query(hc_sc) == hc_sc_int;
	r += (int)static_call(hc_cs)(4) + static_call(hc_nat)(5);
	r += static_call_update(hc_cs, SWITCHYARD_CALLEE_SAVE(hc_cs_fn));
	r += (int)__static_call_return0();
	r += __static_call_update(&STATIC_CALL_KEY(hc_sc),
				  (void (*)(void))hc_sc_int);
	return r;
}

/* io.h: a register file as drivers declare it, and a byte buffer. */
int hc_io(volatile unsigned int *regs, unsigned char *buf, size_t n)
{
	switchyard_memcpy_toio(regs, buf, n);
	switchyard_memcpy_fromio(buf, regs, n);
	return switchyard_memcpy_toio_width(regs, buf, n, 4) +
	       switchyard_memcpy_fromio_width(buf, regs, n, 4);
}

/* memcpy.h */
int hc_memcpy(void)
{
	struct switchyard_memcpy_thresholds t;
	struct switchyard_memcpy_calibration c;
	switchyard_memcpy_fn f =
		switchyard_memcpy_get_strategy(SWITCHYARD_MEMCPY_LOOP);
	char a[SWITCHYARD_MEMCPY_SHORT_LIMIT] = { 1 }, b[sizeof(a)];
	char path[64];
	int r = 0;

	r += switchyard_memcpy(b, a, sizeof(a)) == b;
	r += f ? f(b, a, 1) == b : 0;
	r += switchyard_memcpy_get_thresholds(&t) + (int)t.short_max +
	     (int)t.loop + (int)t.source + t.patched;
	r += switchyard_memcpy_config_path(path, sizeof(path));
	r += switchyard_calibrate(SWITCHYARD_CALIBRATE_QUICK |
				  SWITCHYARD_CALIBRATE_SAVE, &c);
	r += (int)c.short_loop[SWITCHYARD_MEMCPY_ALIGNED_FIXED].size +
	     (int)c.loop_rep[SWITCHYARD_MEMCPY_CONDITIONS - 1].hi;
	r += SWITCHYARD_MEMCPY_FROM_DEFAULT + SWITCHYARD_MEMCPY_FROM_FILE +
	     SWITCHYARD_MEMCPY_FROM_ENV + SWITCHYARD_MEMCPY_SHORT +
	     SWITCHYARD_MEMCPY_SSE2 + SWITCHYARD_MEMCPY_AVX2 +
	     SWITCHYARD_MEMCPY_AVX512 + SWITCHYARD_MEMCPY_REP_MOVSB +
	     SWITCHYARD_MEMCPY_STRATEGIES + SWITCHYARD_MEMCPY_MISALIGNED_FIXED +
	     SWITCHYARD_MEMCPY_ALIGNED_RANDOM +
	     SWITCHYARD_MEMCPY_MISALIGNED_RANDOM;
	return r;
}

/* control.h (the synthetic feature of cpufeature.h, too) */
int hc_control(void)
{
	char path[108];

	return switchyard_control_start() + switchyard_control_stop() +
	       switchyard_control_path(0, path, sizeof(path)) +
	       (int)boot_cpu_has(X86_FEATURE_AVX512_COPY);
}
