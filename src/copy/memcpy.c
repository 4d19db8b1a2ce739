/* SPDX-License-Identifier: MIT */
/*
 * memcpy.c - the thresholds of switchyard_memcpy() (<switchyard/memcpy.h>):
 * the default for this CPU, the calibration file, the environment, in that
 * order, chosen once by a constructor of the library and handed to the
 * arch code (src/arch/<arch>/memcpy_arch.c), which writes them into the
 * dispatcher as run-time constants.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memcpy_impl.h"

/*
 * Defaults per CPU and flavour (the loop's vector width): measured rows
 * only, each against the C library's memcpy on that CPU (E4 of the
 * benchmark suite, and switchyard_calibrate()); doc/BENCHMARKS.md and
 * doc/BENCHMARKS-HISTORY.md have the runs. The first entry that matches
 * wins. libc_min 0: the C library's memcpy for every size, where our own
 * code was measured to lose to it somewhere (the goal: never slower than
 * the C library at any size, before any calibration). A CPU that matches
 * no row gets the same: nobody measured who wins there, and the C
 * library's memcpy cannot lose to itself. `switchyard calibrate --save`
 * measures it (doc/GUIDE.md).
 */
static const struct mc_default {
	const char *vendor;
	unsigned family, model;			/* model 0: any */
	enum switchyard_memcpy_strategy loop;	/* the flavour it is for */
	uint32_t short_max, rep_min, libc_min;
} defaults[] = {
	/*
	 * Intel Xeon, family 6 model 207 (Emerald Rapids; ERMS, FSRM, AVX2,
	 * AVX-512), a 2-vCPU KVM guest, 2026-11-23 (doc/BENCHMARKS-HISTORY.md
	 * "[7/10] The copy routine"): with its best thresholds (AVX-512:
	 * short_max 128, rep_min 12288; AVX2: 256, 2560) our code was up to
	 * 14% faster than glibc 2.36 from 2 KiB and 2-3x at random sizes
	 * below 64, but significantly slower at 45 of 704 points (AVX2: 59),
	 * by up to 17% (one cycle at 2-3 bytes, fixed sizes). Never slower
	 * comes first: the C library's, until a calibration on the machine
	 * finds a choice that loses nowhere.
	 */
	{ "GenuineIntel", 6, 207, SWITCHYARD_MEMCPY_STRATEGIES, 128, 12288, 0 },
	/*
	 * AMD EPYC, family 26 (0x1a, Zen 5) model 2 (ERMS, FSRM, AVX2,
	 * AVX-512), a 2-vCPU KVM guest, 2026-11-27, gcc 12 build, against
	 * glibc 2.36 (__memmove_avx512_unaligned_erms, rep movsb from 2,112):
	 *  - AVX-512 flavour (cpu_probe.c sets AVX512_COPY on this family),
	 *    with its best thresholds (rep_min 24576: the 64-byte loop beats
	 *    rep movsb up to 24 KiB, at 8 KiB 32 ns against 55, and loses from
	 *    28 KiB, where source and destination leave the 48 KiB L1D):
	 *    E4, 201 rounds, faster than glibc at 468 of 704 points (up to
	 *    1.9x from 2 KiB) but slower at 44 (p < 0.05 and over 2%): 2 and
	 *    3 bytes fixed by 14% (a cycle: one masked move against glibc's
	 *    byte moves), random sizes straddling 64 (52..64: 3-9%), 128 and
	 *    256 (2-10%). Never slower comes first: the C library's.
	 *  - AVX2 flavour (SWITCHYARD_CPU_MASK=avx512f): slower than glibc's
	 *    64-byte code from 64 bytes to 2 KiB (up to 2.6x).
	 * SWITCHYARD_MEMCPY=libc_min=4294967295 (or short_max/rep_min) asks
	 * for our code anyway: rep_min is then 24576 (AVX-512).
	 */
	{ "AuthenticAMD", 0x1a, 2, SWITCHYARD_MEMCPY_AVX512, 256, 24576, 0 },
	{ "AuthenticAMD", 0x1a, 2, SWITCHYARD_MEMCPY_AVX2, 256, 2112, 0 },
};

/*
 * Any other CPU, and the rows above with libc_min 0: the C library's
 * memcpy for every size. The other thresholds are what a calibration or
 * SWITCHYARD_MEMCPY starts from if it routes sizes to our own code without
 * naming them: glibc 2.36's rule (rep movsb from 2048 bytes per 16 bytes
 * of vector, 2112 with FSRM), short moves to 64.
 */
static void generic_default(struct sy_mc_config *c)
{
	c->short_max = 64;
	c->libc_min = 0;
	if (boot_cpu_has(X86_FEATURE_FSRM))
		c->rep_min = 2112;
	else if (c->loop == SWITCHYARD_MEMCPY_AVX2)
		c->rep_min = 4096;
	else
		c->rep_min = 2048;
}

/* 1: a measured row matched */
static int choose_default(struct sy_mc_config *c)
{
	const struct switchyard_cpu *cpu = switchyard_cpu();

	c->loop = sy_arch_mc_loop();
	generic_default(c);
	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		const struct mc_default *d = &defaults[i];

		if (strcmp(d->vendor, cpu->vendor) ||
		    d->family != cpu->family ||
		    (d->model && d->model != cpu->model) ||
		    (d->loop != SWITCHYARD_MEMCPY_STRATEGIES &&
		     d->loop != c->loop))
			continue;
		c->short_max = d->short_max;
		c->rep_min = d->rep_min;
		c->libc_min = d->libc_min;
		return 1;
	}
	return 0;
}

/* ---- parsing --------------------------------------------------------- */

#define MC_SET_SHORT 1u
#define MC_SET_REP 2u
#define MC_SET_LIBC 4u
/* libc_min: 0 or above the short classes (the dispatcher's compare is on
 * its paths above 128 bytes only) */
#define MC_LIBC_MIN_LOW 129

/* A decimal number, digits only, at most max; 0 or -1. */
static int parse_u32(const char *s, size_t len, uint32_t max, uint32_t *out)
{
	uint64_t v = 0;

	if (!len || len > 10)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/*
 * Parse "key=value" items separated by sep (',' in the environment, '\n'
 * in the file, where empty lines and lines starting with '#' are
 * comments). On error: -1 and a message in err; *c untouched.
 */
static int parse_config(const char *text, size_t len, char sep,
			struct sy_mc_config *c, unsigned *set, char *err,
			size_t errsize)
{
	struct sy_mc_config v = *c;
	unsigned got = 0;
	size_t i = 0;
	int line = 0;

	while (i < len) {
		size_t n = 0, eq;
		const char *item = text + i;
		uint32_t x;

		while (i + n < len && text[i + n] != sep)
			n++;
		i += n + 1;
		line++;
		if (sep == '\n' && (!n || item[0] == '#'))
			continue;
		if (!n)		/* an empty item: skipped (ENVIRONMENT) */
			continue;
		/* A file saved with CRLF line ends: say so, rather than echo
		 * the item with its CR, which sends a terminal's cursor back
		 * over the start of the message. */
		if (sep == '\n' && item[n - 1] == '\r') {
			snprintf(err, errsize, "item %d: the line ends with a "
				 "carriage return (CRLF line ends?)", line);
			return -1;
		}
		for (eq = 0; eq < n && item[eq] != '='; eq++)
			;
		if (eq == n) {
			snprintf(err, errsize, "item %d '%.*s': not key=value",
				 line, (int)(n > 40 ? 40 : n), item);
			return -1;
		}
		if (eq == 9 && !memcmp(item, "short_max", 9)) {
			if (got & MC_SET_SHORT)
				goto twice;
			if (parse_u32(item + 10, n - 10,
				      SWITCHYARD_MEMCPY_SHORT_LIMIT, &x))
				goto bad_number;
			v.short_max = x;
			got |= MC_SET_SHORT;
		} else if (eq == 7 && !memcmp(item, "rep_min", 7)) {
			if (got & MC_SET_REP)
				goto twice;
			if (parse_u32(item + 8, n - 8, UINT32_MAX, &x))
				goto bad_number;
			v.rep_min = x;
			got |= MC_SET_REP;
		} else if (eq == 8 && !memcmp(item, "libc_min", 8)) {
			if (got & MC_SET_LIBC)
				goto twice;
			if (parse_u32(item + 9, n - 9, UINT32_MAX, &x))
				goto bad_number;
			if (x && x < MC_LIBC_MIN_LOW) {
				snprintf(err, errsize, "item %d: libc_min=%u: "
					 "0 (every size) or at least %u",
					 line, x, MC_LIBC_MIN_LOW);
				return -1;
			}
			v.libc_min = x;
			got |= MC_SET_LIBC;
		} else {
			snprintf(err, errsize, "item %d: unknown key '%.*s' "
				 "(short_max, rep_min, libc_min)", line,
				 (int)(eq > 40 ? 40 : eq), item);
			return -1;
		}
		continue;
twice:
		snprintf(err, errsize, "item %d: '%.*s' given twice", line,
			 (int)eq, item);
		return -1;
bad_number:
		snprintf(err, errsize, "item %d: '%.*s' is not a number in "
			 "0..%u", line, (int)(n > 40 ? 40 : n), item,
			 item[0] == 's' ? SWITCHYARD_MEMCPY_SHORT_LIMIT
					: UINT32_MAX);
		return -1;
	}
	if (!got) {
		snprintf(err, errsize, "no threshold given");
		return -1;
	}
	*c = v;
	*set = got;
	return 0;
}

/* ---- the file ---------------------------------------------------------- */

int switchyard_memcpy_config_path(char *buf, size_t size)
{
	const struct switchyard_cpu *cpu = switchyard_cpu();
	const char *base = sy_getenv("XDG_CACHE_HOME"), *sub = "";
	char vendor[sizeof(cpu->vendor)];
	int n;

	if (!buf)
		return -EINVAL;
	/* XDG: a relative XDG_CACHE_HOME is invalid and ignored */
	if (!base || base[0] != '/') {
		base = sy_getenv("HOME");
		sub = "/.cache";
		if (!base || base[0] != '/')
			return -ENOENT;
	}
	/* the vendor is the CPU's string: keep it a safe file name */
	for (size_t i = 0; i < sizeof(vendor); i++) {
		char ch = cpu->vendor[i];

		vendor[i] = !ch ? 0 : ((ch >= 'a' && ch <= 'z') ||
				       (ch >= 'A' && ch <= 'Z') ||
				       (ch >= '0' && ch <= '9')) ? ch : '_';
		if (!ch)
			break;
	}
	vendor[sizeof(vendor) - 1] = 0;
	n = snprintf(buf, size, "%s%s/switchyard/memcpy-%s-%u-%u", base, sub,
		     vendor, cpu->family, cpu->model);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

#define MC_FILE_MAX 4096

/*
 * What the file must be, checked on the open descriptor (no race with a
 * rename): a regular file (a FIFO would block every program that links the
 * library before main(), a device or a directory is no configuration) of at
 * most MC_FILE_MAX bytes, owned by the user (or root) and writable by
 * nobody else: whoever can write it chooses the copy routine's thresholds
 * of every program the user runs, so a file another user made or may change
 * is not trusted. NULL if it is fine, else why not.
 */
static const char *file_refused(int fd, char *why, size_t size)
{
	struct stat st;

	if (fstat(fd, &st))
		return "cannot be examined (fstat failed)";
	if (!S_ISREG(st.st_mode))
		return S_ISFIFO(st.st_mode) ? "is a FIFO, not a regular file" :
		       S_ISDIR(st.st_mode) ? "is a directory" :
		       S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ?
				"is a device, not a regular file" :
				"is not a regular file";
	if (st.st_size > MC_FILE_MAX)
		return "longer than 4096 bytes";
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(why, size, "is owned by uid %u, not by this user "
			 "(uid %u)", (unsigned)st.st_uid, (unsigned)geteuid());
		return why;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, size, "is writable by %s (mode %04o; "
			 "chmod go-w to use it)",
			 st.st_mode & S_IWOTH ? "every user" : "its group",
			 (unsigned)(st.st_mode & 07777));
		return why;
	}
	return NULL;
}

/* 1 read and applied, 0 no file, -1 rejected (reported). Called once per
 * process, while the library loads: nothing here may block (O_NONBLOCK: a
 * FIFO's open would wait for a writer) or follow a link another user may
 * have planted (O_NOFOLLOW). */
static int read_file(struct sy_mc_config *c, unsigned *set)
{
	char path[4096], text[MC_FILE_MAX + 1], err[160];
	const char *no;
	ssize_t len = 0, r;
	int fd;

	if (switchyard_memcpy_config_path(path, sizeof(path)))
		return 0;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY |
			O_CLOEXEC);
	if (fd < 0) {
		/* EACCES: a directory on the way that this user cannot search
		 * (HOME left at another user's by su or setpriv) holds no
		 * calibration of theirs: no message for every program run */
		if (errno == ENOENT || errno == ENOTDIR || errno == EACCES)
			return 0;
		sy_log(SWITCHYARD_LOG_ERROR, "memcpy: %s: %s; thresholds "
		       "from the defaults", path, errno == ELOOP ?
		       "is a symbolic link, not followed" : strerror(errno));
		return -1;
	}
	no = file_refused(fd, err, sizeof(err));
	if (no) {
		close(fd);
		sy_log(SWITCHYARD_LOG_ERROR, "memcpy: %s %s: ignored, "
		       "thresholds from the defaults", path, no);
		return -1;
	}
	while ((r = read(fd, text + len, sizeof(text) - (size_t)len)) > 0)
		len += r;
	close(fd);
	if (r < 0 || len > MC_FILE_MAX || memchr(text, 0, (size_t)len)) {
		sy_log(SWITCHYARD_LOG_ERROR, "memcpy: %s: %s; thresholds from "
		       "the defaults", path, r < 0 ? strerror(errno) :
		       len > MC_FILE_MAX ? "longer than 4096 bytes" :
		       "holds a NUL byte");
		return -1;
	}
	if (parse_config(text, (size_t)len, '\n', c, set, err, sizeof(err))) {
		sy_log(SWITCHYARD_LOG_ERROR, "memcpy: %s: %s; thresholds from "
		       "the defaults", path, err);
		return -1;
	}
	return 1;
}

/* ---- start-up ------------------------------------------------------------ */

/*
 * Two steps, each once:
 *   decide   the configuration: the table, the file, the environment. Run
 *            by whichever comes first: the IFUNC resolver of
 *            switchyard_memcpy (the dynamic linker, while it relocates an
 *            object that refers to it, before any constructor), a getter,
 *            or the constructor.
 *   write    the thresholds into the dispatcher (run-time constants):
 *            the constructor, or a getter called before it.
 * config_ready, with release stores after each step and acquire loads:
 *   0  nothing yet
 *   1  decided: config and config_source hold their final values
 *   2  written: config_patched too
 */
static struct sy_mc_config config;
static enum switchyard_memcpy_source config_source;
static int config_patched;
static int config_ready;
static pthread_once_t decide_once = PTHREAD_ONCE_INIT;
static pthread_once_t write_once = PTHREAD_ONCE_INIT;

static void decide(void)
{
	struct sy_mc_config c;
	enum switchyard_memcpy_source src = SWITCHYARD_MEMCPY_FROM_DEFAULT;
	const char *env = sy_getenv("SWITCHYARD_MEMCPY");
	unsigned set = 0;
	char err[160];

	choose_default(&c);
	if (read_file(&c, &set) > 0)
		src = SWITCHYARD_MEMCPY_FROM_FILE;
	/* empty, or empty items only: as if unset (switchyard(3): an empty
	 * value is the default) */
	if (env && !env[strspn(env, ",")])
		env = NULL;
	if (env) {
		if (parse_config(env, strlen(env), ',', &c, &set, err,
				 sizeof(err)))
			sy_log(SWITCHYARD_LOG_ERROR,
			       "SWITCHYARD_MEMCPY=\"%.80s\" ignored: %s", env,
			       err);
		else
			src = SWITCHYARD_MEMCPY_FROM_ENV;
	}
	/* thresholds of our own code asked for, where the default hands
	 * every size to the C library: they would choose nothing, so our
	 * code it is, the C library's for no size */
	if ((set & (MC_SET_SHORT | MC_SET_REP)) && !(set & MC_SET_LIBC) &&
	    !c.libc_min)
		c.libc_min = UINT32_MAX;
	/* rep movsb is slow without ERMS (microcoded byte moves) */
	if (!boot_cpu_has(X86_FEATURE_ERMS) && c.rep_min != UINT32_MAX) {
		if (src != SWITCHYARD_MEMCPY_FROM_DEFAULT && (set & MC_SET_REP))
			sy_log(SWITCHYARD_LOG_INFO,
			       "memcpy: rep_min=%u not used: %s", c.rep_min,
#if defined(__x86_64__)
			       "this CPU has no ERMS (or it is masked)"
#else
			       "no rep movsb on this architecture (the C "
			       "library's memcpy copies)"
#endif
			       );
		c.rep_min = UINT32_MAX;
	}
	config = c;
	config_source = src;
	__atomic_store_n(&config_ready, 1, __ATOMIC_RELEASE);
}

const struct sy_mc_config *sy_mc_decided(void)
{
	if (__atomic_load_n(&config_ready, __ATOMIC_ACQUIRE) < 1)
		pthread_once(&decide_once, decide);
	return &config;
}

static void write_code(void)
{
	int r;

	/* libc_min 0 where the name is not the C library's function (the
	 * static library: memcpy_entry.c): handing sizes to it through a
	 * jump cost a cycle, up to 1.4x at 2-256 bytes (measured, AMD EPYC
	 * family 26), more than our own code loses anywhere; so our code
	 * at every size there */
	if (!sy_mc_decided()->libc_min && !sy_mc_entry_is_libc())
		__atomic_store_n(&config.libc_min, UINT32_MAX,
				 __ATOMIC_RELAXED);
	r = sy_arch_mc_init(&config);

	if (r < 0)
		sy_log(SWITCHYARD_LOG_ERROR, "memcpy: thresholds not written "
		       "into the code (%s); they are read from memory",
		       strerror(-r));
	config_patched = r > 0;
	__atomic_store_n(&config_ready, 2, __ATOMIC_RELEASE);
}

static void mc_init(void)
{
	if (__atomic_load_n(&config_ready, __ATOMIC_ACQUIRE) != 2)
		pthread_once(&write_once, write_code);
}

/* after cpu.c's constructor would be nice but is not needed: its state is
 * computed by whoever asks first */
__attribute__((constructor)) static void mc_ctor(void)
{
	mc_init();
}

const struct sy_mc_config *sy_mc_config(void)
{
	mc_init();
	return &config;
}

switchyard_memcpy_fn
switchyard_memcpy_get_strategy(enum switchyard_memcpy_strategy which)
{
	if (which == SWITCHYARD_MEMCPY_LIBC)
		return memcpy;
	return sy_arch_mc_fn(which, sy_mc_config()->loop);
}

int switchyard_memcpy_get_thresholds(struct switchyard_memcpy_thresholds *t)
{
	if (!t)
		return -EINVAL;
	mc_init();
	t->short_max = config.short_max;
	t->rep_min = config.rep_min;
	/* the flavour that runs: the entry's alternative may have been
	 * refused (a debugger's breakpoint on it at start-up) or not
	 * written (code that cannot be written): then the compiled jump to
	 * the SSE2 dispatcher */
	t->loop = sy_mc_entry_is_libc() ? SWITCHYARD_MEMCPY_LIBC :
					  sy_arch_mc_running(config.loop);
	t->source = config_source;
	t->patched = config_patched;
	return 0;
}

uint32_t switchyard_memcpy_get_libc_min(void)
{
	mc_init();
	return __atomic_load_n(&config.libc_min, __ATOMIC_RELAXED);
}
