/* SPDX-License-Identifier: MIT */
/*
 * test_sc_protocol.c - every kind of code update, traced step by step from
 * outside the library and checked against the specification table of
 * doc/DESIGN.md ("Protocol traces"), then every record read back.
 *
 * The trace: a seccomp filter turns each pwrite(2) and membarrier(2) of the
 * threads made after it into a user notification. A supervisor thread
 * (made before the filter, so not under it) sees each one while its caller
 * waits: for a write through /proc/self/mem it compares the bytes to be
 * written with memory (same address space: nothing is written yet) and
 * keeps each byte that changes; for a membarrier, its command. Then it
 * lets the call run (SECCOMP_USER_NOTIF_FLAG_CONTINUE), or fails it when
 * the test injects a fault. After each update the test names every
 * changed byte by what it belongs to, from the records (a static call
 * site's arm op, its imm32/disp32, its guard going to JMP or to TEST, its
 * payload; a key's site; other code of a loaded object; anonymous code: a
 * stub), and writes the update as a string of tokens:
 *
 *   J  static call guards TEST -> JMP      T  guards JMP -> TEST
 *   P  static call payloads                A  arms (test -> store)
 *   I  arms' imm32 and disp32              K  key sites
 *   C  other code of a loaded object       X  code outside every object
 *   S  membarrier(PRIVATE_EXPEDITED_SYNC_CORE)
 *   R  membarrier(PRIVATE_EXPEDITED_RSEQ)  R! the same, failed on purpose
 *   K! (any kind!) a write failed on purpose (EPERM)
 *   V! the mprotect() that closes a write window failed on purpose
 *
 * Consecutive writes of one kind are one token (a batch may take several
 * writes); a write that mixes kinds is one token naming both ("J+P"),
 * which no row allows. Each token of site bytes must cover exactly the
 * sites the row expects. The key's target is read at every event: the
 * protocol stores it before anything else (step 1), so every event of an
 * update must see the new one.
 *
 * Read back after each update: every site of the call (the program's and
 * the module's) against its kind: arm (store, imm32 = its descriptor,
 * disp32 = __rseq_offset + 8), guard (TEST when the payload serves, JMP
 * when the detour does), payload (a call that reaches the target, or a
 * stub that jumps to it, NOPs, RET0, the native), its descriptor (start,
 * length, abort address = the detour, signature before it), the record's
 * own flags. After dlclose: the module's descriptors emptied, their abort
 * address moved out of it, after a signature.
 *
 * Negative controls: built against libraries whose static_call.c and
 * sc_update.c are broken on purpose (SY__SC_BROKEN=N, one protocol step
 * dropped, moved or added): each must fail exactly the checks listed for
 * it below and no other.
 *
 * SKIP where sites are not patched (rseq, membarrier's RSEQ command,
 * seccomp user notification with CONTINUE).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/membarrier.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "sy_sc_sites.h"
#include "sy_ctl.h"
#include "sy_notify.h"
#include "sy_test.h"

#if !defined(SY__ARCH_HAVE_STATIC_CALL) || !SY_TEST_HAVE_SITES ||             \
	!defined(__x86_64__) || !defined(SECCOMP_USER_NOTIF_FLAG_CONTINUE) || \
	!defined(SECCOMP_FILTER_FLAG_NEW_LISTENER)
int main(void)
{
	SKIP("needs patched x86-64 static call sites and seccomp user "
	     "notification with SECCOMP_USER_NOTIF_FLAG_CONTINUE");
}
#else

#define API __attribute__((visibility("default")))
#define NOINLINE __attribute__((noinline))

/* ---- the program's sites -------------------------------------------------- */

long p_add1(long x);
long p_add2(long x);
long p_neg(long x);
long p_cs(long x);
long p_cs_plain(long x);
long p_cs2(long x);
long p_add3(long x);
NOINLINE long p_add1(long x) { return x + 1; }
NOINLINE long p_add2(long x) { return x + 2; }
NOINLINE long p_neg(long x) { return -x; }
NOINLINE long p_cs(long x) { return x + 5; }
NOINLINE long p_cs_plain(long x) { return x + 6; }
NOINLINE long p_cs2(long x) { return x + 8; }
NOINLINE long p_add3(long x) { return x + 3; }
SWITCHYARD_STATIC_CALL_NATIVE(p_neg, "mov %rdi, %rax\n\tneg %rax");
SWITCHYARD_CALLEE_SAVE_THUNK(p_cs);
SWITCHYARD_CALLEE_SAVE_THUNK(p_cs2);

static const uint8_t native_neg[6] = { 0x48, 0x89, 0xf8, 0x48, 0xf7, 0xd8 };

/* pc: many sites (a batch of 64), room 8 (natives fit); pc_cs:
 * callee-save; pc_late: calls p_add2, whose native is registered late. */
DEFINE_STATIC_CALL_NATIVE(pc, p_add1, 8);
DEFINE_STATIC_CALL_CALLEE_SAVE(pc_cs, SWITCHYARD_CALLEE_SAVE(p_cs));
DEFINE_STATIC_CALL(pc_late, p_add2);

#define X4(s) s s s s
#define X16(s) X4(X4(s))
#define PC_SITES 64

NOINLINE static long run_pc(long x)
{
	long acc = 0;

	X4(X16(acc += static_call(pc)(x);))
	return acc;
}

NOINLINE static long run_cs(long x) { return static_call(pc_cs)(x); }
NOINLINE static long run_late(long x) { return static_call(pc_late)(x); }

/* keys: one with several sites, three for a batch */
DEFINE_STATIC_KEY_FALSE(pk);
DEFINE_STATIC_KEY_FALSE(proto_batch_a);
DEFINE_STATIC_KEY_FALSE(proto_batch_b);
DEFINE_STATIC_KEY_TRUE(proto_keep_c);
NOINLINE static int run_keys(void)
{
	return static_branch_unlikely(&pk) + 2 * static_branch_likely(&pk) +
	       4 * static_branch_unlikely(&proto_batch_a) +
	       8 * static_branch_unlikely(&proto_batch_b) +
	       16 * static_branch_likely(&proto_keep_c);
}

/* a key with one site, under a "debugger's breakpoint" (int3 planted by
 * the test: key sites need no tracer for that) */
DEFINE_STATIC_KEY_TRUE(pk_bp);
NOINLINE static int run_bp(void) { return static_branch_unlikely(&pk_bp); }

/* The first site of key in this program, or 0. */
static uintptr_t key_site(const struct static_key *key)
{
	for (struct sy_test_entry *e = __start_sy_jump_entries;
	     e < __stop_sy_jump_entries; e++)
		if ((e->key & ~3ul) == (uintptr_t)key)
			return (uintptr_t)sy_test_code(e);
	return 0;
}

/* Plant b over key's site's opcode in this program (through
 * /proc/self/mem, as a debugger does); its address, or 0. */
static uintptr_t plant(const struct static_key *key, uint8_t b)
{
	uintptr_t at = key_site(key);

	if (at) {
		int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		bool ok;

		if (fd < 0)
			return 0;
		ok = pwrite(fd, &b, 1, (off_t)at) == 1;
		close(fd);
		if (!ok)
			at = 0;
	}
	return at;
}

/* a run-time constant read here and by the CPU module */
API unsigned int proto_limit;
NOINLINE static long run_rc(void) { return (long)runtime_const_u32(proto_limit); }

/* ---- checks, by kind ----------------------------------------------------- */

/* What a negative control must fail, and nothing else (see the end). */
enum fail {
	F_TRACE,	/* a trace differs from its row */
	F_COUNT,	/* a token covers other sites than the row's */
	F_FUNC,		/* an event saw the old target in the key */
	F_BYTES,	/* a site's bytes do not match its kind */
	F_DESC,		/* a live descriptor is wrong */
	F_TOMB,		/* an unloaded module's descriptor is not emptied */
	F_RESULT,	/* a call returned the wrong value */
	F_SPEC,		/* the specification table is missing or malformed */
	F_N
};
static const char *const fail_name[F_N] = {
	"trace", "count", "func", "bytes", "desc", "tomb", "result", "spec"
};
static unsigned fails[F_N];

/*
 * Whether the last row's trace matched. A row whose protocol differs
 * leaves a state that its read-back and results cannot judge: they count
 * only after a matching trace, so that a broken build shows its own fault
 * and nothing else.
 */
static bool row_ok = true;
static const char *cur_row = "start";

/* Each failing line is printed 3 times at most (a wrong descriptor fails
 * for every site of every row). */
#define FAILS(kind, cond)                                                     \
	do {                                                                  \
		static unsigned said_;                                        \
		if (!(cond) && (row_ok || (kind) == F_TRACE ||               \
				(kind) == F_SPEC)) {                          \
			fails[kind]++;                                        \
			if (++said_ <= 3)                                     \
				fprintf(stderr, "%s:%d: [%s] after row `%s`: " \
					"%s%s\n", __FILE__, __LINE__,         \
					fail_name[kind], cur_row, #cond,      \
					said_ == 3 ? " (and again: not "      \
					"said any more)" : "");               \
		}                                                             \
	} while (0)

/* ---- the supervisor ------------------------------------------------------ */

struct diff {
	uintptr_t addr;
	uint8_t old, new_;
};

struct event {
	char type;		/* 'W' write, 'M' membarrier */
	int cmd;		/* membarrier: its command */
	bool injected;		/* failed on purpose */
	bool func_ok;		/* the watched key held the new target */
	size_t d0, d1;		/* W: its changed bytes, diffs[d0..d1) */
	struct timespec t;
};

#define MAX_EVENTS 256
#define MAX_DIFFS 65536
static struct event events[MAX_EVENTS];
static struct diff diffs[MAX_DIFFS];
static size_t nevents, ndiffs;
static bool overflow;
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;

static atomic_bool fail_next_rseq;
/* fail the next write (EPERM): '*' any, or one whose first changed byte
 * is of that kind ('J', 'P', ...); 0 none */
static _Atomic char fail_write;
/* fail the next mprotect() that restores a window's protection (r-x) */
static atomic_bool fail_restore;

static char byte_class(const struct diff *d, const void **site);
static atomic_ulong n_register;
/* the key being updated and its new target */
static struct static_call_key *_Atomic watch_key;
static void *_Atomic watch_func;

static bool is_mem_fd(pid_t pid, int fd)
{
	char p[64], t[64], want[64];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	n = readlink(p, t, sizeof(t) - 1);
	if (n <= 0)
		return false;
	t[n] = 0;
	snprintf(want, sizeof(want), "/proc/%d/mem", (int)getpid());
	(void)pid;
	return !strcmp(t, want);
}

/* The supervisor's callback (sy_notify.h): 0, or the error to fail the
 * call with. */
static int record(const struct seccomp_data *d, pid_t pid, void *arg)
{
	struct event *ev;
	struct static_call_key *k = atomic_load(&watch_key);
	bool injected = false;

	(void)arg;
	pthread_mutex_lock(&ev_lock);
	if (nevents == MAX_EVENTS) {
		overflow = true;
		pthread_mutex_unlock(&ev_lock);
		return 0;
	}
	ev = &events[nevents];
	memset(ev, 0, sizeof(*ev));
	clock_gettime(CLOCK_MONOTONIC, &ev->t);
	ev->func_ok = !k || (void *)__atomic_load_n(&k->func, __ATOMIC_ACQUIRE) ==
				    atomic_load(&watch_func);
	if (d->nr == __NR_mprotect) {
		/* only the one the test fails is an event */
		if (d->args[2] == (PROT_READ | PROT_EXEC) &&
		    atomic_exchange(&fail_restore, false)) {
			ev->type = 'V';
			ev->injected = injected = true;
			nevents++;
		}
	} else if (d->nr == __NR_membarrier) {
		int cmd = (int)d->args[0];

		if (cmd == MEMBARRIER_CMD_QUERY) {
			pthread_mutex_unlock(&ev_lock);
			return 0;
		}
		if (cmd == MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE ||
		    cmd == MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ) {
			atomic_fetch_add(&n_register, 1);
			pthread_mutex_unlock(&ev_lock);
			return 0;
		}
		ev->type = 'M';
		ev->cmd = cmd;
		if (cmd == MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ &&
		    atomic_exchange(&fail_next_rseq, false))
			ev->injected = injected = true;
		nevents++;
	} else if (d->nr == __NR_pwrite64 && is_mem_fd(pid, (int)d->args[0])) {
		/* The caller waits: its buffer and the code are stable, and
		 * nothing is written yet. Both read through the kernel
		 * (process_vm_readv), as a debugger would: the caller's
		 * stores happen before its system call, an order a race
		 * detector cannot see through a plain load. */
		static uint8_t buf[1 << 17], at[1 << 17];
		uintptr_t addr = (uintptr_t)d->args[3];
		size_t len = (size_t)d->args[2];
		struct iovec lb = { buf, 0 }, la = { at, 0 };
		struct iovec rb = { (void *)(uintptr_t)d->args[1], 0 };
		struct iovec ra = { (void *)addr, 0 };

		if (len > sizeof(buf)) {
			overflow = true;
			len = sizeof(buf);
		}
		lb.iov_len = la.iov_len = rb.iov_len = ra.iov_len = len;
		if (process_vm_readv(pid, &lb, 1, &rb, 1, 0) != (ssize_t)len ||
		    process_vm_readv(pid, &la, 1, &ra, 1, 0) != (ssize_t)len) {
			overflow = true;	/* fails the row */
			len = 0;
		}

		char fw = atomic_load(&fail_write);
		const void *site;

		ev->type = 'W';
		ev->d0 = ndiffs;
		for (size_t i = 0; i < len; i++) {
			if (buf[i] == at[i])
				continue;
			if (ndiffs == MAX_DIFFS) {
				overflow = true;
				break;
			}
			diffs[ndiffs++] = (struct diff){ addr + i, at[i],
							 buf[i] };
		}
		ev->d1 = ndiffs;
		if (fw && (fw == '*' || (ev->d1 > ev->d0 &&
					 byte_class(&diffs[ev->d0], &site) == fw))) {
			atomic_store(&fail_write, 0);
			ev->injected = injected = true;
		}
		nevents++;
	}
	pthread_mutex_unlock(&ev_lock);
	return !injected ? 0 : d->nr == __NR_membarrier ? -ENOMEM : -EPERM;
}

static struct sy_notify sup = SY_NOTIFY_INIT(record, NULL);

/* ---- naming the bytes ------------------------------------------------------ */

/* The modules' records, once they are open (libsc_proto.c). */
static const struct sy_sc_rec *mod_start, *mod_stop;
static const struct sy_test_entry *kmod_start, *kmod_stop;

static char byte_class(const struct diff *d, const void **site)
{
	const struct sy_sc_rec *sets[2][2] = {
		{ __start_sy_static_call_sites, __stop_sy_static_call_sites },
		{ mod_start, mod_stop },
	};
	Dl_info info;

	for (int s = 0; s < 2; s++) {
		for (const struct sy_sc_rec *r = sets[s][0];
		     r && r < sets[s][1]; r++) {
			uintptr_t c = (uintptr_t)sy_sc_code(r);
			unsigned room = r->meta->kind & 15;
			uintptr_t off = d->addr - c;

			if (d->addr < c || off >= SY_SC_PAYLOAD + room)
				continue;
			*site = r;
			if (off == SY_SC_ARM_OP)
				return 'A';
			if (off >= 5 && off < 13)
				return 'I';
			if (off == SY_SC_GUARD)
				return d->new_ == 0xe9 ? 'J' :
				       d->new_ == 0xa9 ? 'T' : '?';
			if (off >= SY_SC_PAYLOAD)
				return 'P';
			return '?';
		}
	}
	const struct sy_test_entry *kset[2][2] = {
		{ __start_sy_jump_entries, __stop_sy_jump_entries },
		{ kmod_start, kmod_stop },
	};
	for (int s = 0; s < 2; s++) {
		for (const struct sy_test_entry *e = kset[s][0];
		     e && e < kset[s][1]; e++) {
			uintptr_t c = (uintptr_t)sy_test_code(e);
			/* 2 or 5 bytes (the key's bit 1, set at
			 * registration): 2-byte sites may lie closer */
			unsigned len = e->key & 2 ? 5 : 2;

			if (d->addr >= c && d->addr < c + len) {
				*site = e;
				return 'K';
			}
		}
	}
	*site = NULL;
	return dladdr((void *)d->addr, &info) && info.dli_fname ? 'C' : 'X';
}

#define TOKEN_SITES 128
struct token {
	char name[8];
	unsigned sites;		/* distinct sites its bytes belong to */
	const void *site[TOKEN_SITES];
	bool func_ok;		/* its events saw the new target */
};

static void token_add_site(struct token *t, const void *site)
{
	for (unsigned k = 0; k < t->sites && k < TOKEN_SITES; k++)
		if (t->site[k] == site)
			return;
	if (t->sites < TOKEN_SITES)
		t->site[t->sites] = site;
	t->sites++;
}

/*
 * The events since the last reset, as tokens. *func_ok: every event but a
 * stub's write (made before step 1: payload_for() looks for stubs) saw the
 * new target.
 */
static size_t tokens_of(struct token *tok, size_t cap, bool *func_ok)
{
	static struct token t;
	size_t n = 0;

	*func_ok = true;
	for (size_t i = 0; i < nevents; i++) {
		const struct event *ev = &events[i];

		memset(&t, 0, sizeof(t));
		t.func_ok = ev->func_ok;
		if (ev->type == 'V') {
			strcpy(t.name, "V!");
		} else if (ev->type == 'M') {
			snprintf(t.name, sizeof(t.name), "%s%s",
				 ev->cmd == MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE
					 ? "S"
				 : ev->cmd == MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ
					 ? "R" : "M?",
				 ev->injected ? "!" : "");
		} else {
			char cls[8] = "";

			for (size_t j = ev->d0; j < ev->d1; j++) {
				const void *site;
				char c = byte_class(&diffs[j], &site);

				if (!strchr(cls, c) && strlen(cls) < 3) {
					size_t l = strlen(cls);

					cls[l] = c;
					cls[l + 1] = 0;
				}
				if (site)
					token_add_site(&t, site);
			}
			if (!cls[0])
				strcpy(cls, "=");	/* wrote what was there */
			/* "J+P": a write that mixes kinds; "K!": failed */
			for (size_t l = 0, o = 0; cls[l] && o < 6; l++) {
				if (l)
					t.name[o++] = '+';
				t.name[o++] = cls[l];
				if (!cls[l + 1] && ev->injected)
					t.name[o++] = '!';
			}
			if (n && !strcmp(tok[n - 1].name, t.name) &&
			    strchr("JTPAIK", t.name[0]) && !t.name[1]) {
				for (unsigned k = 0; k < t.sites &&
						     k < TOKEN_SITES; k++)
					token_add_site(&tok[n - 1], t.site[k]);
				tok[n - 1].func_ok &= t.func_ok;
				continue;
			}
		}
		if (n < cap)
			tok[n++] = t;
	}
	for (size_t i = 0; i < n; i++)
		if (!tok[i].func_ok && strcmp(tok[i].name, "X"))
			*func_ok = false;
	return n;
}

static void trace_reset(struct static_call_key *key, void *func)
{
	pthread_mutex_lock(&ev_lock);
	nevents = ndiffs = 0;
	overflow = false;
	atomic_store(&watch_key, key);
	atomic_store(&watch_func, func);
	pthread_mutex_unlock(&ev_lock);
}

/* ---- the specification ---------------------------------------------------- */

/* doc/DESIGN.md, section "Protocol traces": rows "| `name` | `trace` |". */
struct row {
	char name[32];
	char trace[64];
	bool used;		/* some update was checked against it */
};
static struct row spec[64];
static size_t nspec;

/* false (said) when the file cannot be read or holds no such table */
static bool read_spec(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	bool in = false, bad = false;

	if (!f) {
		fprintf(stderr, "cannot read %s: %s\n", path, strerror(errno));
		return false;
	}
	while (fgets(line, sizeof(line), f)) {
		char name[32], trace[64];

		if (!strncmp(line, "#", 1)) {
			in = strstr(line, "Protocol traces") != NULL;
			continue;
		}
		if (!in || sscanf(line, "| `%31[^`]` | `%63[^`]` |", name,
				  trace) != 2)
			continue;
		for (size_t i = 0; i < nspec; i++)
			if (!strcmp(spec[i].name, name)) {
				fprintf(stderr, "%s: row `%s` twice in the "
					"table \"Protocol traces\"\n", path,
					name);
				bad = true;
			}
		if (nspec == 64) {
			fprintf(stderr, "%s: more than 64 rows\n", path);
			bad = true;
			break;
		}
		snprintf(spec[nspec].name, sizeof(spec[nspec].name), "%s", name);
		/* `-`: nothing at all */
		snprintf(spec[nspec].trace, sizeof(spec[nspec].trace), "%s",
			 strcmp(trace, "-") ? trace : "");
		nspec++;
	}
	if (ferror(f)) {
		fprintf(stderr, "cannot read %s: %s\n", path, strerror(errno));
		bad = true;
	} else if (nspec < 16) {
		fprintf(stderr, "%s: no table \"Protocol traces\" (%zu rows)\n",
			path, nspec);
		bad = true;
	}
	fclose(f);
	return !bad;
}

static const char *spec_of(const char *name)
{
	for (size_t i = 0; i < nspec; i++)
		if (!strcmp(spec[i].name, name)) {
			spec[i].used = true;
			return spec[i].trace;
		}
	fprintf(stderr, "row `%s` missing from the specification table\n",
		name);
	fails[F_SPEC]++;
	return NULL;
}

static unsigned rows_checked;

/*
 * The events since trace_reset() against row `name`; every token of site
 * bytes must cover `sites` sites (0: not checked).
 */
static void check_trace(const char *name, unsigned sites)
{
	const char *want = spec_of(name);
	static struct token tok[64];
	char got[256] = "";
	bool func_ok;
	size_t n, o = 0;

	pthread_mutex_lock(&ev_lock);
	n = tokens_of(tok, 64, &func_ok);
	FAILS(F_TRACE, !overflow);
	pthread_mutex_unlock(&ev_lock);
	for (size_t i = 0; i < n && o < sizeof(got) - 16; i++)
		o += (size_t)snprintf(got + o, sizeof(got) - o, "%s%s",
				      i ? " " : "", tok[i].name);
	rows_checked++;
	row_ok = false;
	cur_row = name;
	if (want && strcmp(got, want)) {
		fails[F_TRACE]++;
		fprintf(stderr, "row `%s`: trace `%s`, the specification says "
			"`%s`\n", name, got, want);
		return;
	}
	if (!func_ok) {
		fails[F_FUNC]++;
		fprintf(stderr, "row `%s`: an event of the update saw the old "
			"target in the key (step 1 stores it first)\n", name);
	}
	for (size_t i = 0; i < n && sites; i++) {
		if (!strchr("JTPAIK", tok[i].name[0]) || tok[i].sites == sites)
			continue;
		fails[F_COUNT]++;
		fprintf(stderr, "row `%s`: token %s covers %u sites, not %u\n",
			name, tok[i].name, tok[i].sites, sites);
	}
	if (getenv("SY_PROTO_VERBOSE"))
		printf("  %-18s %s\n", name, got);
	row_ok = func_ok;
	for (size_t i = 0; i < n && sites; i++)
		if (strchr("JTPAIK", tok[i].name[0]) && tok[i].sites != sites)
			row_ok = false;
}

/* ---- reading the records back ---------------------------------------------- */

extern const ptrdiff_t __rseq_offset __attribute__((weak));

struct rseq_cs_view {
	uint32_t version, flags;
	uint64_t start_ip, post_commit_offset, abort_ip;
};

#define SC_DESC_BITS 0x0ffffffcu
#define SC_PASS_BIT 0x80000000u
#define SIG 0x53053053u

static const struct rseq_cs_view *desc_of(const struct sy_sc_rec *r)
{
	return (const struct rseq_cs_view *)(uintptr_t)(
		(uintptr_t)((r->flags & SC_DESC_BITS) >> 2) << 5);
}

static uintptr_t detour_of(const uint8_t *c)
{
	int32_t rel;

	memcpy(&rel, c + SY_SC_GUARD + 1, 4);
	return (uintptr_t)(c + SY_SC_PAYLOAD) + (uintptr_t)(intptr_t)rel;
}

/* NOP forms the engine pads with (the SDM's recommended multi-byte NOPs) */
static bool nops(const uint8_t *p, unsigned n)
{
	static const uint8_t *const form[] = {
		(const uint8_t *)"\x90",
		(const uint8_t *)"\x66\x90",
		(const uint8_t *)"\x0f\x1f\x00",
		(const uint8_t *)"\x0f\x1f\x40\x00",
		(const uint8_t *)"\x0f\x1f\x44\x00\x00",
		(const uint8_t *)"\x66\x0f\x1f\x44\x00\x00",
		(const uint8_t *)"\x0f\x1f\x80\x00\x00\x00\x00",
		(const uint8_t *)"\x0f\x1f\x84\x00\x00\x00\x00\x00",
	};

	while (n) {
		unsigned l = n > 8 ? 8 : n;

		if (memcmp(p, form[l - 1], l))
			return false;
		p += l;
		n -= l;
	}
	return true;
}

/* Whether page of addr is mapped r-x, private, anonymous (a stub page). */
static bool stub_page(uintptr_t addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	bool ok = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		const char *rest;
		char perm[8];
		int n = 0;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s%n", &lo, &hi, perm,
			   &off, &n) < 4 || addr < lo || addr >= hi)
			continue;
		/* no path after the inode: anonymous */
		rest = line + n + strspn(line + n, " ");
		ok = !strcmp(perm, "r-xp") && (*rest == '\n' || !*rest);
		break;
	}
	fclose(f);
	return ok;
}

enum kind { K_CALL, K_NULL, K_RET0, K_NATIVE, K_DETOUR };

/* Every site of key in rs..re against kind (target f for K_CALL). */
static unsigned check_sites(const struct sy_sc_rec *rs,
			    const struct sy_sc_rec *re,
			    const struct static_call_key *key, enum kind kind,
			    const void *f)
{
	unsigned n = 0;

	for (const struct sy_sc_rec *r = rs; r && r < re; r++) {
		const uint8_t *c = sy_sc_code(r);
		unsigned room = r->meta->kind & 15;
		const uint8_t *pl = c + SY_SC_PAYLOAD;
		const struct rseq_cs_view *cs = desc_of(r);
		uint32_t disp, imm, sig;
		uintptr_t detour = detour_of(c);

		if (r->meta->key != key)
			continue;
		n++;
		/* arm: movq $desc, %fs:(__rseq_offset + 8) */
		FAILS(F_BYTES, !memcmp(c, "\x64\x48\xc7\x04\x25", 5));
		memcpy(&disp, c + 5, 4);
		memcpy(&imm, c + 9, 4);
		FAILS(F_BYTES, disp == (uint32_t)(__rseq_offset + 8));
		FAILS(F_DESC, (uintptr_t)imm == (uintptr_t)cs);
		FAILS(F_DESC, (r->flags & 3u) == 2u);	/* owned, alive */
		/* descriptor: the section is [arm, end of payload) */
		FAILS(F_DESC, cs->version == 0 && cs->flags == 0);
		FAILS(F_DESC, cs->start_ip == (uintptr_t)c);
		FAILS(F_DESC, cs->post_commit_offset == SY_SC_PAYLOAD + room);
		FAILS(F_DESC, cs->abort_ip == detour);
		memcpy(&sig, (const void *)(detour - 4), 4);
		FAILS(F_DESC, sig == SIG);
		if (kind == K_DETOUR) {
			FAILS(F_BYTES, c[SY_SC_GUARD] == 0xe9);
			FAILS(F_BYTES, !(r->flags & SC_PASS_BIT));
			continue;
		}
		FAILS(F_BYTES, c[SY_SC_GUARD] == 0xa9);
		FAILS(F_BYTES, r->flags & SC_PASS_BIT);
		switch (kind) {
		case K_NULL:
			FAILS(F_BYTES, nops(pl, room));
			break;
		case K_RET0:
			FAILS(F_BYTES, nops(pl, room - 2) &&
					       !memcmp(pl + room - 2, "\x31\xc0", 2));
			break;
		case K_NATIVE:
			FAILS(F_BYTES, room >= 6 && nops(pl, room - 6) &&
					       !memcmp(pl + room - 6, native_neg, 6));
			break;
		case K_CALL: {
			int32_t rel;
			uintptr_t to;

			FAILS(F_BYTES, nops(pl, room - 5) && pl[room - 5] == 0xe8);
			memcpy(&rel, pl + room - 4, 4);
			to = (uintptr_t)(pl + room) + (uintptr_t)(intptr_t)rel;
			if (to != (uintptr_t)f) {
				/* a stub within reach: jmp *0(%rip); .quad f */
				uint64_t tgt;

				FAILS(F_BYTES, stub_page(to));
				if (!stub_page(to))
					break;	/* nothing to read there */
				FAILS(F_BYTES, !memcmp((const void *)to,
						       "\xff\x25\0\0\0\0", 6));
				memcpy(&tgt, (const void *)(to + 6), 8);
				FAILS(F_BYTES, tgt == (uintptr_t)f);
				/* 16-byte slots in an r-x anonymous page filled
				 * with int3, within 1.5 GiB of the site */
				FAILS(F_BYTES, to % 16 == 0 &&
					       !memcmp((const void *)(to + 14),
						       "\xcc\xcc", 2));
				FAILS(F_BYTES, (to > (uintptr_t)c ? to - (uintptr_t)c
						 : (uintptr_t)c - to) < (3ul << 29));
			}
			break;
		}
		default:
			break;
		}
	}
	return n;
}

static unsigned check_pc(enum kind kind, const void *f)
{
	return check_sites(__start_sy_static_call_sites,
			   __stop_sy_static_call_sites, &STATIC_CALL_KEY(pc),
			   kind, f);
}

/* ---- the control socket (a batch of keys) ----------------------------------- */

static int ctl_set(const char *req)
{
	char buf[4096];
	int s = sy_ctl_connect(), r;

	if (s < 0)
		return -1;
	r = sy_ctl_ask(s, req, buf, sizeof(buf));
	close(s);
	return r;
}

/* ---- what a broken build must fail --------------------------------------- */

#define F_BIT(f) (1u << (f))
#if !defined(SY__SC_BROKEN)
#define BROKEN_WHAT ""
#define BROKEN_MUST 0u
#elif SY__SC_BROKEN == 1
#define BROKEN_WHAT "no SYNC_CORE after the guards go to JMP"
#define BROKEN_MUST F_BIT(F_TRACE)
#elif SY__SC_BROKEN == 2
#define BROKEN_WHAT "no RSEQ barrier"
#define BROKEN_MUST F_BIT(F_TRACE)
#elif SY__SC_BROKEN == 3
#define BROKEN_WHAT "no SYNC_CORE after the payloads"
#define BROKEN_MUST F_BIT(F_TRACE)
#elif SY__SC_BROKEN == 4
#define BROKEN_WHAT "the RSEQ barrier before the guards go to JMP"
#define BROKEN_MUST F_BIT(F_TRACE)
#elif SY__SC_BROKEN == 5
#define BROKEN_WHAT "a SYNC_CORE added after the guards go back to TEST"
#define BROKEN_MUST F_BIT(F_TRACE)
#elif SY__SC_BROKEN == 6
#define BROKEN_WHAT "the payloads written before the guards go to JMP"
#define BROKEN_MUST F_BIT(F_TRACE)
#elif SY__SC_BROKEN == 7
#define BROKEN_WHAT "the key's target stored after the sites are patched"
#define BROKEN_MUST F_BIT(F_FUNC)
#elif SY__SC_BROKEN == 8
#define BROKEN_WHAT "descriptors one byte short of the payload's end"
#define BROKEN_MUST F_BIT(F_DESC)
#elif SY__SC_BROKEN == 9
#define BROKEN_WHAT "a failed RSEQ barrier not owed to the next update"
#define BROKEN_MUST F_BIT(F_TRACE)
#elif SY__SC_BROKEN == 10
#define BROKEN_WHAT "registration: no SYNC_CORE between imm32 and the arms"
#define BROKEN_MUST F_BIT(F_TRACE)
#elif SY__SC_BROKEN == 11
#define BROKEN_WHAT "registration: guards to TEST before the arms"
#define BROKEN_MUST F_BIT(F_TRACE)
#elif SY__SC_BROKEN == 12
#define BROKEN_WHAT "unload: abort address left in the unloaded module"
#define BROKEN_MUST F_BIT(F_TOMB)
#elif SY__SC_BROKEN == 13
#define BROKEN_WHAT "the guards go back to TEST with a SYNC_CORE, "     \
	"before the payloads' SYNC_CORE"
#define BROKEN_MUST F_BIT(F_TRACE)
#endif

/* A symbol of a module: the test cannot go on without it. */
static void *need(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "%s: not in the module given (argument order: "
			"DESIGN.md MODULE_SC MODULE_CPU MODULE_KEYS)\n", name);
		exit(1);
	}
	return p;
}

/* Whether this process may write its code through /proc/self/mem (a
 * process that is not dumpable, for one, may not): one byte of main()
 * written with its own value. errno says why not. */
static bool procmem_writable(void)
{
	int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	uint8_t b;
	bool ok;

	if (fd < 0)
		return false;
	memcpy(&b, (const void *)(uintptr_t)procmem_writable, 1);
	ok = pwrite(fd, &b, 1, (off_t)(uintptr_t)procmem_writable) == 1;
	close(fd);
	return ok;
}

/* The library's messages: the faults this test injects make it say
 * things (denied writes, a failed barrier) that are expected. Kept, and
 * printed only when something failed or SY_PROTO_VERBOSE is set. */
static char logbuf[16384];
static size_t loglen;

static void keep_log(enum switchyard_log_level level, const char *msg,
		     void *arg)
{
	int n;

	(void)level;
	(void)arg;
	if (loglen >= sizeof(logbuf) - 1)
		return;
	n = snprintf(logbuf + loglen, sizeof(logbuf) - loglen,
		     "switchyard: %s\n", msg);
	if (n > 0)
		loglen += (size_t)n < sizeof(logbuf) - loglen
				  ? (size_t)n : sizeof(logbuf) - loglen - 1;
}

/* ---- the rows -------------------------------------------------------------- */

static void *sc_thread_body(void *arg)
{
	(void)arg;
	return NULL;
}

int main(int argc, char **argv)
{
	const struct rseq_cs_view *tomb_descs[8];
	uintptr_t mod_lo = 0, mod_hi = 0;
	void *mod, *cpu;
	long (*lib_far)(long), (*lib_run)(long);
	int (*lib_update)(int);
	struct static_call_key *lib_key;
	static const int nrs[] = { __NR_membarrier, __NR_pwrite64,
				   __NR_mprotect };
	pthread_t other;
	unsigned n, ntomb = 0, nlib;
	long q;
	int fd, r, bad = 0;
	char modpath[4096];

	if (argc != 5) {
		fprintf(stderr, "usage: %s DESIGN.md MODULE_SC MODULE_CPU "
			"MODULE_KEYS\n",
			argv[0]);
		return 2;
	}
	if (!sy_sc_patched_mode())
		SKIP("static call sites are not patched in this process: %s",
		     getenv("SWITCHYARD_STATIC_CALL") &&
				     !strcmp(getenv("SWITCHYARD_STATIC_CALL"),
					     "detour")
			     ? "SWITCHYARD_STATIC_CALL=detour"
			     : "no rseq registered by the C library (glibc "
			       "< 2.35, glibc.pthread.rseq=0, valgrind)");
	q = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (q < 0 || !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) ||
	    !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ))
		SKIP("membarrier lacks the SYNC_CORE or RSEQ command here");
	if (getenv("SWITCHYARD_PATCH_METHOD"))
		SKIP("SWITCHYARD_PATCH_METHOD is set: the trace sees the "
		     "writes through /proc/self/mem, and some rows need the "
		     "other path as a fallback");
	if (!procmem_writable())
		SKIP("/proc/self/mem refuses writes to this program's code "
		     "(%s): the writes the trace sees do not happen",
		     strerror(errno));
	if (!read_spec(argv[1]))
		return 1;
	switchyard_set_log(keep_log, NULL);

	/* Warm up before the filter: both membarrier commands registered,
	 * so that a row's trace holds its own commands only. A second
	 * thread exists (the supervisor): the library syncs. */
	sy_notify_start(&sup);
	CHECK_EQ(static_call_update(pc_late, p_add1), 0);
	CHECK_EQ(static_call_update(pc_late, p_add2), 0);
	CHECK_EQ(run_late(1), 3);
	fd = sy_notify_filter(&sup, nrs, 3);
	if (fd < 0) {
		sy_notify_stop(&sup);
		SKIP("cannot install a seccomp filter with a listener: %s",
		     strerror(-fd));
	}
	/* a thread under the filter too: nothing it does is traced */
	pthread_create(&other, NULL, sc_thread_body, NULL);
	pthread_join(other, NULL);
	trace_reset(NULL, NULL);
	CHECK_EQ(syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0), q);
	if (atomic_load(&sup.no_continue))
		SKIP("the kernel lacks SECCOMP_USER_NOTIF_FLAG_CONTINUE");

	n = check_pc(K_CALL, (const void *)p_add1);
	CHECK_EQ(n, PC_SITES);
	FAILS(F_RESULT, run_pc(1) == PC_SITES * 2);

	/* keys: one key's sites; a batch of three keys (control socket) */
	trace_reset(NULL, NULL);
	CHECK_EQ(static_branch_enable(&pk), 0);
	check_trace("key", (unsigned)sy_test_check_sites(&pk.key));
	FAILS(F_RESULT, run_keys() == 3 + 16);

	/*
	 * A write that happens and then fails: /proc/self/mem refuses
	 * (EPERM injected), the RWX window writes, then cannot restore the
	 * pages' protection (injected). Every change of the chunk was
	 * written, so every one must be undone (through /proc/self/mem
	 * again), and the key keeps its state.
	 */
	atomic_store(&fail_write, '*');
	atomic_store(&fail_restore, true);
	trace_reset(NULL, NULL);
	CHECK_EQ(static_branch_disable(&pk), -EPERM);
	check_trace("key-undone", (unsigned)sy_test_check_sites(&pk.key));
	FAILS(F_RESULT, static_key_enabled(&pk.key));
	FAILS(F_RESULT, run_keys() == 3 + 16);
	atomic_store(&fail_restore, false);

	/*
	 * A breakpoint over a key's site: the opcode under it is the
	 * debugger's (JMP, the key is on) and never written; disabling the
	 * key writes the rel only (0: the JMP gdb puts back falls through),
	 * a batch of fix-ups alone, which needs its sync as any other. Then
	 * the debugger puts its byte back; the next change first brings the
	 * site back to canonical form, a path-keeping step at a time.
	 */
	{
		uintptr_t at = key_site(&pk_bp.key);

		FAILS(F_RESULT, run_bp() == 1);
		CHECK(at != 0);
		if (at) {
			uint8_t jmp = *(const uint8_t *)at;

			CHECK(plant(&pk_bp.key, 0xcc) == at);
			trace_reset(NULL, NULL);
			CHECK_EQ(static_branch_disable(&pk_bp), 0);
			check_trace("key-under-bp", 1);
			CHECK(plant(&pk_bp.key, jmp) == at);	/* delete */
			FAILS(F_RESULT, run_bp() == 0);
			trace_reset(NULL, NULL);
			CHECK_EQ(static_branch_enable(&pk_bp), 0);
			check_trace("key-after-bp", 1);
			sy_test_check_sites(&pk_bp.key);
			FAILS(F_RESULT, run_bp() == 1);
		}
	}
	CHECK_EQ(switchyard_control_start(), 0);
	trace_reset(NULL, NULL);
	r = ctl_set("set proto_batch_? on\n");
	CHECK_EQ(r, 0);
	check_trace("key-batch",
		    (unsigned)(sy_test_check_sites(&proto_batch_a.key) +
			       sy_test_check_sites(&proto_batch_b.key)));
	FAILS(F_RESULT, run_keys() == 3 + 4 + 8 + 16);

	/*
	 * A stale table: a module whose registration write fails (injected
	 * EPERM, no RWX window under the strict policy) keeps what the file
	 * held. A batch of keys then goes one key at a time (each key's
	 * change also brings every stale table to its keys' state); the
	 * first that succeeds makes the table normal, and the next batch is
	 * one batch again.
	 */
	{
		void *km;
		int (*km_site)(void) = NULL;

		trace_reset(NULL, NULL);
		CHECK_EQ(ctl_set("set proto_batch_? off\n"), 0);
		check_trace("key-batch", 2);
		FAILS(F_RESULT, run_keys() == 3 + 16);
		CHECK_EQ(switchyard_set_policy(SWITCHYARD_POLICY_STRICT), 0);
		atomic_store(&fail_write, '*');
		trace_reset(NULL, NULL);
		km = dlopen(argv[4], RTLD_NOW | RTLD_LOCAL);
		CHECK(km != NULL);
		if (km) {
			km_site = (int (*)(void))need(km, "proto_keys_site");
			kmod_start = *(const struct sy_test_entry **)need(
				km, "proto_keys_start");
			kmod_stop = *(const struct sy_test_entry **)need(
				km, "proto_keys_stop");
		}
		check_trace("register-fails", 1);
		CHECK_EQ(switchyard_set_policy(SWITCHYARD_POLICY_DEFAULT), 0);
		CHECK(km_site != NULL);
		if (km_site) {
			/* stale: what the file held (a jump), key off */
			FAILS(F_RESULT, km_site() == 1);
			trace_reset(NULL, NULL);
			CHECK_EQ(ctl_set("set proto_batch_? on\n"), 0);
			check_trace("key-batch-stale", 1);
			sy_test_check_sites(&proto_batch_a.key);
			sy_test_check_sites(&proto_batch_b.key);
			FAILS(F_RESULT, run_keys() == 3 + 4 + 8 + 16);
			FAILS(F_RESULT, km_site() == 1);
			trace_reset(NULL, NULL);
			CHECK_EQ(ctl_set("set proto_batch_? off\n"), 0);
			check_trace("key-batch", 3);
			sy_test_check_sites(&proto_batch_a.key);
			FAILS(F_RESULT, run_keys() == 3 + 16);
			FAILS(F_RESULT, km_site() == 0);
		}
		kmod_start = kmod_stop = NULL;
		if (km)
			CHECK_EQ(dlclose(km), 0);
	}
	CHECK_EQ(switchyard_control_stop(), 0);

	/* static calls: a function, the same, NULL, RET0, a native, back */
#define SC_ROW(row, key, f, kind, fobj, want)                                  \
	do {                                                                  \
		trace_reset(&STATIC_CALL_KEY(key), (void *)(f));              \
		CHECK_EQ(static_call_update(key, f), 0);                      \
		check_trace(row, PC_SITES);                                   \
		check_pc(kind, (const void *)(fobj));                         \
		FAILS(F_RESULT, run_pc(3) == (want));                         \
	} while (0)
	SC_ROW("call", pc, p_add2, K_CALL, p_add2, PC_SITES * 5);
	SC_ROW("call-same", pc, p_add2, K_CALL, p_add2, PC_SITES * 5);
	trace_reset(&STATIC_CALL_KEY(pc), NULL);
	CHECK_EQ(static_call_update(pc, NULL), 0);
	check_trace("null", PC_SITES);
	check_pc(K_NULL, NULL);
	trace_reset(&STATIC_CALL_KEY(pc), (void *)__static_call_return0);
	CHECK_EQ(static_call_update(pc, (void *)__static_call_return0), 0);
	check_trace("ret0", PC_SITES);
	check_pc(K_RET0, NULL);
	FAILS(F_RESULT, run_pc(3) == 0);
	SC_ROW("native", pc, p_neg, K_NATIVE, NULL, -PC_SITES * 3);
	SC_ROW("call", pc, p_add1, K_CALL, p_add1, PC_SITES * 4);

	/* A native registered for a function sites call already: they are
	 * rewritten by the same protocol (pc_late: one site, room 5; the
	 * native of p_add2 is 4 bytes). */
	{
		static const uint8_t lea[4] = { 0x48, 0x8d, 0x47, 0x02 };

		trace_reset(NULL, NULL);
		CHECK_EQ(switchyard_static_call_native((void (*)(void))p_add2,
						       lea, sizeof(lea)), 0);
		check_trace("native-late", 1);
		FAILS(F_RESULT, run_late(5) == 7);
		{
			const uint8_t *c = sy_sc_site_of(&STATIC_CALL_KEY(pc_late));

			FAILS(F_BYTES, c && c[SY_SC_GUARD] == 0xa9 &&
					       nops(c + SY_SC_PAYLOAD, 1) &&
					       !memcmp(c + SY_SC_PAYLOAD + 1, lea, 4));
		}
	}

	/* callee-save: an ordinary target parks the sites on their detour;
	 * to a thunk, from guards already on JMP: no barrier; back to a
	 * detour, and out of it to the payload it still holds */
#define CS_ROW(row, f, kind, want)                                             \
	do {                                                                  \
		trace_reset(&STATIC_CALL_KEY(pc_cs), (void *)(f));            \
		CHECK_EQ(static_call_update(pc_cs, f), 0);                    \
		check_trace(row, 1);                                          \
		check_sites(__start_sy_static_call_sites,                     \
			    __stop_sy_static_call_sites,                      \
			    &STATIC_CALL_KEY(pc_cs), kind,                    \
			    (const void *)(f));                               \
		FAILS(F_RESULT, run_cs(1) == (want));                         \
	} while (0)
	CS_ROW("cs-plain", p_cs_plain, K_DETOUR, 7);
	CS_ROW("cs-thunk", SWITCHYARD_CALLEE_SAVE(p_cs2), K_CALL, 9);
	CS_ROW("cs-plain", p_cs_plain, K_DETOUR, 7);
	CS_ROW("cs-held", SWITCHYARD_CALLEE_SAVE(p_cs2), K_CALL, 9);

	/* A failed RSEQ barrier (injected): the update takes effect
	 * through the detours; the next one owes the barrier although it
	 * flips no guard. */
	atomic_store(&fail_next_rseq, true);
	trace_reset(&STATIC_CALL_KEY(pc), (void *)p_add2);
	CHECK_EQ(static_call_update(pc, p_add2), 0);
	check_trace("rseq-fails", PC_SITES);
	check_pc(K_DETOUR, NULL);
	FAILS(F_RESULT, run_pc(3) == PC_SITES * 5);
	SC_ROW("rseq-owed", pc, p_add3, K_CALL, p_add3, PC_SITES * 6);

	/*
	 * Failed writes (EPERM injected, the strict policy: no RWX window).
	 * The guards' write: nothing changed, the key gets its old target
	 * back and the update returns the error. The payloads' write: the
	 * update has taken effect through the detours (0), the sites stay
	 * on them, and the next update brings them back.
	 */
	CHECK_EQ(switchyard_set_policy(SWITCHYARD_POLICY_STRICT), 0);
	atomic_store(&fail_write, 'J');
	trace_reset(NULL, NULL);
	CHECK_EQ(static_call_update(pc, p_add1), -EPERM);
	check_trace("guards-fail", PC_SITES);
	FAILS(F_RESULT, STATIC_CALL_KEY(pc).func == (void (*)(void))p_add3);
	check_pc(K_CALL, (const void *)p_add3);
	FAILS(F_RESULT, run_pc(3) == PC_SITES * 6);
	atomic_store(&fail_write, 'P');
	trace_reset(&STATIC_CALL_KEY(pc), (void *)p_add1);
	CHECK_EQ(static_call_update(pc, p_add1), 0);
	check_trace("payloads-fail", PC_SITES);
	check_pc(K_DETOUR, NULL);
	FAILS(F_RESULT, run_pc(3) == PC_SITES * 4);
	CHECK_EQ(switchyard_set_policy(SWITCHYARD_POLICY_DEFAULT), 0);
	atomic_store(&fail_write, 0);
	SC_ROW("from-detour", pc, p_add1, K_CALL, p_add1, PC_SITES * 4);

	/* A module: registration (its own call's sites), its updates, a
	 * far target for the program's sites (a stub), unload. */
	snprintf(modpath, sizeof(modpath), "%s", argv[2]);
	trace_reset(NULL, NULL);
	mod = dlopen(modpath, RTLD_NOW | RTLD_LOCAL);
	CHECK(mod != NULL);
	if (!mod) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return sy_test_done("sc_protocol");
	}
	mod_start = *(const struct sy_sc_rec **)need(mod, "proto_lib_sc_start");
	mod_stop = *(const struct sy_sc_rec **)need(mod, "proto_lib_sc_stop");
	lib_far = (long (*)(long))need(mod, "proto_lib_far");
	lib_run = (long (*)(long))need(mod, "proto_lib_run");
	lib_update = (int (*)(int))need(mod, "proto_lib_update");
	lib_key = ((struct static_call_key * (*)(void))need(mod, "proto_lib_key"))();
	nlib = (unsigned)(mod_stop - mod_start);
	CHECK_EQ(nlib, 2);
	check_trace("register", nlib);
	check_sites(mod_start, mod_stop, lib_key, K_CALL,
		    need(mod, "proto_lib_a"));
	FAILS(F_RESULT, lib_run(1) == 201 + 202);
	trace_reset(lib_key, need(mod, "proto_lib_b"));
	CHECK_EQ(lib_update(1), 0);
	check_trace("call", nlib);
	check_sites(mod_start, mod_stop, lib_key, K_CALL,
		    need(mod, "proto_lib_b"));
	FAILS(F_RESULT, lib_run(1) == 301 + 302);
	/* far: a stub written first, once */
	trace_reset(&STATIC_CALL_KEY(pc), (void *)lib_far);
	CHECK_EQ(static_call_update(pc, lib_far), 0);
	check_trace("far", PC_SITES);
	check_pc(K_CALL, (const void *)lib_far);
	FAILS(F_RESULT, run_pc(3) == PC_SITES * 1003);
	SC_ROW("call", pc, p_add1, K_CALL, p_add1, PC_SITES * 4);
	trace_reset(&STATIC_CALL_KEY(pc), (void *)lib_far);
	CHECK_EQ(static_call_update(pc, lib_far), 0);
	check_trace("far-again", PC_SITES);
	check_pc(K_CALL, (const void *)lib_far);
	SC_ROW("call", pc, p_add1, K_CALL, p_add1, PC_SITES * 4);
	/* The other way: the module's sites to the program's function, far
	 * from them: a stub of their own, within their reach (the one near
	 * the program's sites for lib_far would not do). */
	{
		int (*lib_set)(long (*)(long)) =
			(int (*)(long (*)(long)))need(mod, "proto_lib_set");

		trace_reset(lib_key, (void *)p_add1);
		CHECK_EQ(lib_set(p_add1), 0);
		check_trace("far", nlib);
		check_sites(mod_start, mod_stop, lib_key, K_CALL,
			    (const void *)p_add1);
		FAILS(F_RESULT, lib_run(1) == 2 + 3);
	}
	/* unload: no code written; descriptors emptied */
	{
		Dl_info info;

		if (dladdr((void *)lib_run, &info)) {
			mod_lo = (uintptr_t)info.dli_fbase;
			mod_hi = mod_lo + (64u << 20);	/* well past its end */
		}
	}
	for (const struct sy_sc_rec *rr = mod_start; rr < mod_stop && ntomb < 8; rr++)
		tomb_descs[ntomb++] = desc_of(rr);
	mod_start = mod_stop = NULL;
	/* This thread ran the module's sites last: its rseq_cs names one of
	 * their descriptors. Cleared (the kernel allows it: the field is the
	 * thread's), so that a broken unload shows as wrong descriptors
	 * below, not as this thread's death at its next preemption (which
	 * test_sc_dlclose checks). */
	__atomic_store_n((uint64_t *)((char *)__builtin_thread_pointer() +
				      __rseq_offset + 8), 0, __ATOMIC_RELAXED);
	trace_reset(NULL, NULL);
	CHECK_EQ(dlclose(mod), 0);
	check_trace("unregister", 0);
	for (unsigned i = 0; i < ntomb; i++) {
		const struct rseq_cs_view *cs = tomb_descs[i];
		uint32_t sig;

		FAILS(F_TOMB, cs->post_commit_offset == 0);
		FAILS(F_TOMB, cs->abort_ip < mod_lo || cs->abort_ip >= mod_hi);
		if (cs->abort_ip < mod_lo || cs->abort_ip >= mod_hi) {
			memcpy(&sig, (const void *)(uintptr_t)(cs->abort_ip - 4), 4);
			FAILS(F_TOMB, sig == SIG);
		}
	}

	/* run-time constant: immediates, then guards; then a module with
	 * an alternative and a site of the constant, opened after it */
	proto_limit = 77;
	trace_reset(NULL, NULL);
	CHECK_EQ(runtime_const_init(u32, proto_limit), 0);
	check_trace("rc-init", 0);
	proto_limit = 5;
	FAILS(F_RESULT, run_rc() == 77);
	trace_reset(NULL, NULL);
	cpu = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
	CHECK(cpu != NULL);
	if (cpu) {
		long (*cpu_run)(void) = (long (*)(void))need(cpu, "proto_cpu_run");

		check_trace("cpu-module", 0);
		FAILS(F_RESULT, cpu_run() == 2077);
		dlclose(cpu);
	}

	/* The supervisor serves until exit: the calls this thread makes
	 * from now on (a sanitizer's leak check calls mprotect) are under
	 * the filter too. */
	atomic_store(&watch_key, NULL);
	for (size_t i = 0; i < nspec; i++)
		if (!spec[i].used) {
			fprintf(stderr, "row `%s` of the specification was not "
				"exercised by any update here\n", spec[i].name);
			fails[F_SPEC]++;
		}
	{
		unsigned any = (unsigned)sy_test_failures;

		for (int f = 0; f < F_N; f++)
			any += fails[f];
		/* the library's messages, when they may explain something */
		if (loglen && (any || getenv("SY_PROTO_VERBOSE")))
			fprintf(stderr, "%s", logbuf);
	}

	printf("%u rows traced against %zu rows of the specification%s%s\n",
	       rows_checked, nspec, BROKEN_WHAT[0] ? "; broken build: " : "",
	       BROKEN_WHAT);
	for (int f = 0; f < F_N; f++) {
		bool must = BROKEN_MUST & F_BIT(f);

		if (fails[f])
			printf("  %-7s %u failure(s)%s\n", fail_name[f], fails[f],
			       must ? " (this build's fault: expected)" : "");
		if (must != (fails[f] != 0))
			bad++;
	}
#ifdef SY__SC_BROKEN
	printf("%s\n", bad ? "NOT CAUGHT as it should be (see above)"
			   : "caught, and nothing else failed");
	return bad ? 1 : sy_test_done("sc_protocol (broken)");
#else
	sy_test_failures += bad;
	return sy_test_done("sc_protocol");
#endif
}
#endif
