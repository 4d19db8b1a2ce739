/* SPDX-License-Identifier: MIT */
/*
 * test_cpu_mask_deps.c - SWITCHYARD_CPU_MASK hides a feature with every
 * feature that needs it, as the kernel's clearcpuid= does: masking avx must
 * hide avx2, fma and avx512*, in boot_cpu_has(), in the copy routine's
 * strategies and loop, and in `switchyard cpu`.
 *
 * The program runs itself once without a mask and once per mask; each child
 * prints the features it sees and the copy strategies it may use. What a
 * masked child sees must be what the unmasked one saw minus the mask's
 * closure (the table below, the rule as documented), so the test holds on
 * any x86-64 CPU: a feature the CPU lacks is simply absent in both. On
 * AArch64 the same with the hwcaps (sve hides sve2 and the other SVE
 * hwcaps, fp hides everything built on it, ...; cpufeature.h).
 *
 *   test_cpu_mask_deps [SWITCHYARD_TOOL]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sy_test.h"
#include "exec_self.h"

#if !defined(__x86_64__) && !defined(__aarch64__)
int main(void)
{
	SKIP("no CPU features on this architecture");
}
#else

#define NFEAT (SWITCHYARD_CPU_WORDS * 32)

/* the child: "F name" per feature present, "S n" per strategy it may use,
 * "L n" for the loop switchyard_memcpy takes */
static int child(void)
{
	struct switchyard_memcpy_thresholds t;

	for (unsigned f = 0; f < NFEAT; f++)
		if (switchyard_cpu_feature_name(f) && boot_cpu_has(f))
			printf("F %s\n", switchyard_cpu_feature_name(f));
	for (int s = 0; s < SWITCHYARD_MEMCPY_STRATEGIES; s++)
		if (switchyard_memcpy_get_strategy(s))
			printf("S %d\n", s);
	switchyard_memcpy_get_thresholds(&t);
	printf("L %d\n", (int)t.loop);
	return 0;
}

static char self[4096];

/* Run argv (NULL: this program as a child) with the mask; its stdout. */
static void run(const char *mask, const char *tool, char *out, size_t size)
{
	int p[2], st;
	size_t len = 1;
	ssize_t n;
	pid_t pid;

	out[0] = '\n';
	out[1] = 0;
	if (pipe(p))
		SKIP("pipe");
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		if (mask)
			setenv("SWITCHYARD_CPU_MASK", mask, 1);
		else
			unsetenv("SWITCHYARD_CPU_MASK");
		/* no calibration file of the user's */
		setenv("XDG_CACHE_HOME", "/nonexistent", 1);
		if (tool)
			sy_exec(tool, "switchyard", "cpu");
		else
			sy_exec(self, "test_cpu_mask_deps", "--child");
		_exit(126);
	}
	close(p[1]);
	while ((n = read(p[0], out + len, size - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static int has_line(const char *out, const char *kind, const char *what)
{
	char line[80];

	/* out starts with a newline (run()) */
	snprintf(line, sizeof(line), "\n%s %s\n", kind, what);
	return strstr(out, line) != NULL;
}

/* "word" is in the comma-separated list */
static int in_list(const char *list, const char *word)
{
	char l[512], w[64];

	snprintf(l, sizeof(l), ",%s,", list);
	snprintf(w, sizeof(w), ",%s,", word);
	return strstr(l, w) != NULL;
}

static const struct {
	const char *mask, *hides;	/* hides: the mask's closure */
} cases[] = {
#if defined(__aarch64__)
	{ "sve", "sve,sve2,sveaes,svepmull,svebitperm,svesha3,svesm4,svei8mm,"
		 "svef32mm,svef64mm,svebf16,sveebf16" },
	{ "sve2", "sve2,sveaes,svepmull,svebitperm,svesha3,svesm4" },
	{ "fp", "fp,asimd,fphp,asimdhp,asimdfhm,aes,pmull,sha1,sha2,sha512,"
		"sha3,sm3,sm4,asimdrdm,asimddp,i8mm,bf16,ebf16,sve,sve2,sveaes,"
		"svepmull,svebitperm,svesha3,svesm4,svei8mm,svef32mm,svef64mm,"
		"svebf16,sveebf16" },
	{ "aes", "aes,pmull" },
	{ "sha1", "sha1,sha2,sha512" },
	{ "lrcpc", "lrcpc,ilrcpc" },
	{ "mte", "mte,mte3" },
	{ "sme", "sme,smei16i64,smef64f64,smei8i32,smef16f32,smeb16f32,"
		 "smef32f32,smefa64" },
	/* a list, and features nothing needs */
	{ "atomics,bti", "atomics,bti" },
#else
	{ "avx", "avx,fma,avx2,avx512f,avx512dq,avx512cd,avx512bw,avx512vl,"
		 "avx512_copy" },
	{ "osxsave", "osxsave,avx,fma,avx2,avx512f,avx512dq,avx512cd,"
		     "avx512bw,avx512vl,avx512_copy" },
	{ "xsave", "xsave,osxsave,avx,fma,avx2,avx512f,avx512dq,avx512cd,"
		   "avx512bw,avx512vl,avx512_copy" },
	{ "avx2", "avx2,avx512f,avx512dq,avx512cd,avx512bw,avx512vl,"
		  "avx512_copy" },
	{ "avx512f", "avx512f,avx512dq,avx512cd,avx512bw,avx512vl,"
		     "avx512_copy" },
	{ "sse2", "sse2,pni,sse4_1,sse4_2,avx,fma,avx2,avx512f,avx512dq,"
		  "avx512cd,avx512bw,avx512vl,avx512_copy" },
	{ "erms", "erms,fsrm,fzrm,fsrs" },
	/* a list, and a feature nothing needs */
	{ "movbe,avx512bw", "movbe,avx512bw,avx512_copy" },
#endif
};

int main(int argc, char **argv)
{
	static char base[8192], out[8192];
	ssize_t len;

	if (argc > 1 && !strcmp(argv[1], "--child"))
		return child();
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		SKIP("readlink /proc/self/exe");
	self[len] = 0;

	run(NULL, NULL, base, sizeof(base));
#if defined(__aarch64__)
	CHECK(has_line(base, "F", "fp"));	/* AArch64 Linux has FP */
	CHECK(has_line(base, "F", "asimd"));
#else
	CHECK(has_line(base, "F", "sse2"));	/* x86-64 has SSE2 */
#endif
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		int failed = sy_test_failures;

		run(cases[c].mask, NULL, out, sizeof(out));
		for (unsigned f = 0; f < NFEAT; f++) {
			const char *name = switchyard_cpu_feature_name(f);

			if (!name || !strcmp(name, "rep_good"))
				continue;
			int want = has_line(base, "F", name) &&
				   !in_list(cases[c].hides, name);

			if (has_line(out, "F", name) != want)
				fprintf(stderr, "  %s: %s, wanted %s\n", name,
					want ? "hidden" : "shown",
					want ? "shown" : "hidden");
			CHECK_EQ(has_line(out, "F", name), want);
		}
#if defined(__x86_64__)
		if (in_list(cases[c].hides, "avx2")) {
			/* the copy routine follows the features */
			CHECK(!has_line(out, "S", "3"));  /* AVX2 */
			CHECK(!has_line(out, "S", "4"));  /* AVX512 */
			/* the SSE2 loop, or the C library's memcpy for
			 * every size (no measured row for this CPU so
			 * masked: src/copy/memcpy.c) */
			CHECK(has_line(out, "L", "2") || has_line(out, "L", "6"));
		}
		if (in_list(cases[c].hides, "erms"))
			CHECK(!has_line(out, "S", "5"));  /* rep movsb */
#endif
		if (sy_test_failures != failed)
			fprintf(stderr, "  with SWITCHYARD_CPU_MASK=%s:\n%s",
				cases[c].mask, out);
	}
	/* the tool says the same */
#if defined(__aarch64__)
	if (argc > 1) {
		run("sve", argv[1], out, sizeof(out));
		CHECK(strstr(out, "features:") != NULL);
		CHECK(strstr(out, " sve") == NULL);	/* sve, sve2, ... */
		CHECK(strstr(out, " fp") != NULL);
		if (sy_test_failures)
			fprintf(stderr, "switchyard cpu:\n%s", out);
	}
#else
	if (argc > 1) {
		run("avx", argv[1], out, sizeof(out));
		CHECK(strstr(out, "features:") != NULL);
		CHECK(strstr(out, " avx ") == NULL);
		CHECK(strstr(out, " avx2") == NULL);
		CHECK(strstr(out, " fma") == NULL);
		CHECK(strstr(out, "avx512") == NULL);
		/* the SSE2 flavour, or the C library's memcpy for every
		 * size (no measured row for this CPU so masked) */
		CHECK(strstr(out, ", sse2 loop between;") != NULL ||
		      strstr(out, "memcpy: the C library's memcpy, every size")
			      != NULL);
		if (sy_test_failures)
			fprintf(stderr, "switchyard cpu:\n%s", out);
	}
#endif
	return sy_test_done("cpu_mask_deps");
}
#endif
