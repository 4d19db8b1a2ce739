/* SPDX-License-Identifier: MIT */
/*
 * test_memcpy_config.c - where switchyard_memcpy()'s thresholds come from
 * (<switchyard/memcpy.h>): the default, the calibration file, the
 * SWITCHYARD_MEMCPY variable, in that order. The thresholds are chosen
 * once, when the library loads, so each case runs this program again as a
 * child with its environment and files, and reads what the child reports
 * (its thresholds on stdout, the library's messages on stderr):
 *   - good variable, good file, both (the variable wins key by key);
 *   - malformed variables and files: rejected as a whole, with a message
 *     that names the problem; the defaults stay;
 *   - a quick calibration saved, then read back by the next process.
 * With --kinds, what may stand at the file's path (test_memcpy_config_file):
 * a FIFO must not hang the child before main() (it has 10 s), and it, a
 * directory, a device, a symbolic link, a file writable by others or owned
 * by another user (as root) are ignored with a message; the defaults stay.
 *
 *   test_memcpy_config [--kinds] DIR     DIR: a scratch directory (emptied)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sy_exec.h"
#include "sy_test.h"

struct result {
	unsigned long short_max, rep_min;
	int source, status;
	char err[2048];
};

static char dir[1024];
static char self[4096];		/* this program, to run again */

static void child_report(int calibrate)
{
	struct switchyard_memcpy_thresholds t;

	if (calibrate) {
		struct switchyard_memcpy_calibration c;
		int r = switchyard_calibrate(SWITCHYARD_CALIBRATE_QUICK |
					     SWITCHYARD_CALIBRATE_SAVE, &c);

		printf("calibrated %d %u %u %.2f\n", r, c.short_max, c.rep_min,
		       c.seconds);
		for (int i = 0; i < SWITCHYARD_MEMCPY_CONDITIONS; i++) {
			struct switchyard_memcpy_breakeven *a = &c.short_loop[i],
							   *b = &c.loop_rep[i];

			if (a->lo > a->size || a->size > a->hi ||
			    b->lo > b->size || b->size > b->hi)
				printf("bad interval\n");
		}
		exit(r ? 1 : 0);
	}
	switchyard_memcpy_get_thresholds(&t);
	printf("%u %u %d\n", t.short_max, t.rep_min, (int)t.source);
	exit(0);
}

static int read_all(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t r;

	while (len + 1 < size && (r = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)r;
	buf[len] = 0;
	return (int)len;
}

/*
 * Nothing said about a good configuration, but for one thing: a rep_min
 * asked for (rep, ~0ul: none) on a CPU without ERMS (AArch64, an x86-64
 * without it) is not used, and the library says so, once.
 */
static void check_quiet(const char *err, unsigned long rep, bool erms)
{
	char want[64];
	const char *nl;

	if (erms || rep == ~0ul || rep == UINT32_MAX) {
		CHECK_EQ(err[0], 0);
		if (err[0])
			fprintf(stderr, "  said: %s\n", err);
		return;
	}
	snprintf(want, sizeof(want), "rep_min=%lu not used", rep);
	nl = strchr(err, '\n');
	CHECK(strstr(err, want) != NULL);
	CHECK(nl && !nl[1]);	/* that line alone */
	if (!strstr(err, want) || !nl || nl[1])
		fprintf(stderr, "  wanted '%s' alone, said: %s\n", want, err);
}

/* Run the child with SWITCHYARD_MEMCPY=env (NULL: unset). */
/* the child runs without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH */
static bool no_dac;

static struct result run(const char *env, int calibrate)
{
	struct result res;
	char out[256];
	int po[2], pe[2], st;
	pid_t pid;

	memset(&res, 0, sizeof(res));
	if (pipe(po) || pipe(pe))
		SKIP("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		SKIP("fork: %s", strerror(errno));
	if (!pid) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		alarm(10);	/* a child that hangs at start-up fails */
		/* root without its overriding of file permissions (as
		 * setpriv --bounding-set does): a mode-0 directory is then
		 * closed to it as to anyone */
		if (no_dac && (prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0) ||
			       prctl(PR_CAPBSET_DROP, CAP_DAC_READ_SEARCH, 0, 0, 0)))
			fputs("SY_NO_DAC_FAILED\n", stderr);
		setenv("XDG_CACHE_HOME", dir, 1);
		unsetenv("SWITCHYARD_CPU_MASK");
		if (env)
			setenv("SWITCHYARD_MEMCPY", env, 1);
		else
			unsetenv("SWITCHYARD_MEMCPY");
		char *const av[] = { (char *)"test_memcpy_config",
				     (char *)"--child",
				     (char *)(calibrate ? "calibrate" : "report"),
				     NULL };

		sy_test_execv(self, av);
		_exit(126);
	}
	close(po[1]);
	close(pe[1]);
	read_all(po[0], out, sizeof(out));
	read_all(pe[0], res.err, sizeof(res.err));
	close(po[0]);
	close(pe[0]);
	waitpid(pid, &st, 0);
	res.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	/* under an emulator that SY_TEST_EMULATOR does not name (no
	 * binfmt_misc either), a guest cannot exec a guest */
	if (res.status == 126)
		SKIP("cannot run %s again (an emulator without binfmt_misc, "
		     "and SY_TEST_EMULATOR unset?)", self);
	if (!calibrate && sscanf(out, "%lu %lu %d", &res.short_max,
				 &res.rep_min, &res.source) != 3)
		res.status = 99;
	if (calibrate)
		snprintf(res.err + strlen(res.err),
			 sizeof(res.err) - strlen(res.err), "%s", out);
	return res;
}

static char path[4096];

static void write_file(const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		SKIP("%s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

static struct result defaults;

/* a rejected variable or file: the defaults, and a message with want */
static void check_rejected(const char *env, const char *want)
{
	struct result r = run(env, 0);

	CHECK_EQ(r.status, 0);
	CHECK_EQ(r.short_max, defaults.short_max);
	CHECK_EQ(r.rep_min, defaults.rep_min);
	CHECK(strstr(r.err, want) != NULL);
	if (!strstr(r.err, want))
		fprintf(stderr, "  for %s: wanted '%s' in: %s\n",
			env ? env : "(file)", want, r.err);
}

/* What may stand at the calibration path, and what the library makes of
 * it: a good file is read (the control), anything else is ignored with a
 * message saying why, and nothing hangs. */
static int kinds(void)
{
	struct result r;
	char cmd[2200], good[4200];

	setenv("XDG_CACHE_HOME", dir, 1);
	CHECK_EQ(switchyard_memcpy_config_path(path, sizeof(path)), 0);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/switchyard'", dir);
	CHECK_EQ(system(cmd), 0);
	defaults = run(NULL, 0);
	CHECK_EQ(defaults.source, SWITCHYARD_MEMCPY_FROM_DEFAULT);

	/* the control: an ordinary file of the user's, 0644 and 0600 */
	write_file("short_max=24\n");
	CHECK_EQ(chmod(path, 0644), 0);
	r = run(NULL, 0);
	CHECK_EQ(r.source, SWITCHYARD_MEMCPY_FROM_FILE);
	CHECK_EQ(r.short_max, 24);
	CHECK_EQ(r.err[0], 0);
	CHECK_EQ(chmod(path, 0600), 0);
	CHECK_EQ(run(NULL, 0).source, SWITCHYARD_MEMCPY_FROM_FILE);

	/* writable by others: whoever can write it steers every program */
	CHECK_EQ(chmod(path, 0666), 0);
	check_rejected(NULL, "writable by every user");
	CHECK_EQ(chmod(path, 0664), 0);
	check_rejected(NULL, "writable by its group");
	CHECK_EQ(chmod(path, 0644), 0);
	/* another user's file (root may make one) */
	if (geteuid() == 0) {
		CHECK_EQ(chown(path, 65534, 65534), 0);
		check_rejected(NULL, "owned by uid 65534");
	} else {
		printf("(not root: another user's file not tried)\n");
	}
	/* a symbolic link, even to a good file */
	snprintf(good, sizeof(good), "%s.good", path);
	CHECK_EQ(rename(path, good), 0);
	CHECK_EQ(chown(good, geteuid(), getegid()), 0);
	CHECK_EQ(symlink(good, path), 0);
	check_rejected(NULL, "symbolic link");
	CHECK_EQ(unlink(path), 0);
	/* a device */
	CHECK_EQ(symlink("/dev/zero", path), 0);
	check_rejected(NULL, "symbolic link");
	CHECK_EQ(unlink(path), 0);
	/* a directory */
	CHECK_EQ(mkdir(path, 0755), 0);
	check_rejected(NULL, "is a directory");
	CHECK_EQ(rmdir(path), 0);
	/* a FIFO: a blocking open would wait for a writer forever */
	CHECK_EQ(mkfifo(path, 0644), 0);
	r = run(NULL, 0);
	CHECK_EQ(r.status, 0);	/* not killed by its alarm: no hang */
	CHECK_EQ(r.source, SWITCHYARD_MEMCPY_FROM_DEFAULT);
	CHECK(strstr(r.err, "is a FIFO") != NULL);
	/* said once, not once per use */
	CHECK(!strstr(r.err, "is a FIFO") ||
	      !strstr(strstr(r.err, "is a FIFO") + 1, "is a FIFO"));
	CHECK_EQ(unlink(path), 0);
	unlink(good);
	/* a directory on the way that the user cannot search (HOME left at
	 * another user's): the defaults, and nothing said (root runs the
	 * child without the capabilities that override permissions) */
	snprintf(cmd, sizeof(cmd), "%s/switchyard", dir);
	CHECK_EQ(chmod(cmd, 0), 0);
	no_dac = geteuid() == 0;
	r = run(NULL, 0);
	no_dac = false;
	CHECK_EQ(chmod(cmd, 0755), 0);
	if (strstr(r.err, "SY_NO_DAC_FAILED")) {
		printf("(root could not drop CAP_DAC_OVERRIDE: an unsearchable "
		       "directory not tried)\n");
	} else {
		CHECK_EQ(r.source, SWITCHYARD_MEMCPY_FROM_DEFAULT);
		CHECK_EQ(r.err[0], 0);
		if (r.err[0])
			fprintf(stderr, "  unsearchable directory: %s", r.err);
	}
	return sy_test_done("test_memcpy_config_file");
}

int main(int argc, char **argv)
{
	static const char *const bad_env[][2] = {
		{ "short_max=", "not a number" },
		{ "short_max=abc", "not a number" },
		{ "short_max=257", "not a number in 0..256" },
		{ "short_max=-1", "not a number" },
		{ "short_max=+1", "not a number" },
		{ "short_max= 1", "not a number" },
		{ "short_max=1x", "not a number" },
		{ "rep_min=4294967296", "not a number" },
		{ "rep_min=99999999999", "not a number" },
		{ "rep_min=0x100", "not a number" },
		{ "short_max=1,short_max=2", "given twice" },
		{ "short_max", "not key=value" },
		{ "foo=1", "unknown key 'foo'" },
		{ "Short_max=1", "unknown key" },
		{ "short_max=8;rep_min=9", "not a number" },
		/* near misses ([11/15]): each is one character or one
		 * habit away from a good value, and each is refused as a
		 * whole with the message that names its fault */
		{ "short_ma=1", "unknown key 'short_ma'" },	/* prefix */
		{ "short=1", "unknown key 'short'" },
		{ "rep_mi=1", "unknown key 'rep_mi'" },
		{ "short_maxx=1", "unknown key 'short_maxx'" },	/* suffix */
		{ "rep_min_=1", "unknown key 'rep_min_'" },
		{ "SHORT_MAX=1", "unknown key 'SHORT_MAX'" },	/* case */
		{ "short_MAX=1", "unknown key" },
		{ "Rep_min=1", "unknown key 'Rep_min'" },
		{ "short_max =64", "unknown key 'short_max '" },	/* blanks */
		{ " short_max=64", "unknown key ' short_max'" },
		{ "\tshort_max=64", "unknown key" },
		{ "short_max=64 ", "not a number" },
		{ "short_max=6 4", "not a number" },
		{ "short_max=\t64", "not a number" },
		{ "short_max=64x", "not a number" },		/* suffixes */
		{ "short_max=64k", "not a number" },
		{ "rep_min=4096\n", "not a number" },
		{ "short_max==64", "not a number" },		/* separators */
		{ "short_max=64=", "not a number" },
		{ "short_max=64;", "not a number" },
		{ "short_max:64", "not key=value" },
		{ "short_max=64 rep_min=4096", "not a number" },
		{ "short_max=64\nrep_min=4096", "not a number" },
		{ "=64", "unknown key ''" },			/* empty name */
		{ "short_max=64,=1", "unknown key ''" },
		{ "sh\xc3\xb6rt_max=64", "unknown key" },	/* non-ASCII */
		{ "short_max=\xef\xbc\x96\xef\xbc\x94", "not a number" },
		{ "#short_max=64", "unknown key '#short_max'" }, /* no comments */
		{ "short_max=rep_min", "not a number" },	/* other field */
		{ "short_max=", "not a number in 0..256" },
		{ "rep_min=short_max", "not a number in 0..4294967295" },
		{ "short_max=-0", "not a number" },		/* numbers */
		{ "short_max=+64", "not a number" },
		{ "short_max=0x10", "not a number" },
		{ "short_max=1e2", "not a number" },
		{ "short_max=64.0", "not a number" },
		{ "short_max=257", "not a number in 0..256" },
		{ "short_max=4294967297", "not a number in 0..256" },
		{ "short_max=18446744073709551680", "not a number" },
		{ "rep_min=4294967296", "not a number in 0..4294967295" },
		{ "rep_min=42949672950", "not a number" },
		{ "rep_min=4294967295,rep_min=4294967295", "given twice" },
		{ "short_max=1,rep_min=2,short_max=1", "item 3: 'short_max' "
		  "given twice" },
		/* one bad item spoils the good one before it */
		{ "short_max=40,rep_min=4096x", "item 2: 'rep_min=4096x' "
		  "is not a number" },
		{ "short_max=40,foo=1", "item 2: unknown key 'foo'" },
	};
	/* near misses that are good values: accepted, with this effect */
	static const struct {
		const char *env;
		unsigned long short_max, rep_min;	/* ~0ul: the default */
	} good_env[] = {
		{ "short_max=0", 0, ~0ul },
		{ "short_max=256", 256, ~0ul },			/* the limit */
		{ "short_max=064", 64, ~0ul },		/* decimal, not octal */
		{ "short_max=0000000064", 64, ~0ul },	/* ten digits */
		{ "rep_min=0", ~0ul, 0 },
		{ "rep_min=0004096", ~0ul, 4096 },
		{ "rep_min=4294967295", ~0ul, 4294967295ul },
		{ "rep_min=4096,short_max=32", 32, 4096 },	/* any order */
		{ ",,short_max=32,,", 32, ~0ul },
	};
	bool erms = boot_cpu_has(X86_FEATURE_ERMS);
	unsigned long rep_4096 = erms ? 4096 : UINT32_MAX;
	struct result r;
	char cmd[2200];

	bool kind_test = argc > 2 && !strcmp(argv[1], "--kinds");

	if (argc > 2 && !strcmp(argv[1], "--child"))
		child_report(!strcmp(argv[2], "calibrate"));
	if (kind_test) {
		argv++;
		argc--;
	}
	if (argc < 2)
		SKIP("usage: test_memcpy_config [--kinds] DIR");
	/* readlink, not exec of /proc/self/exe: under qemu-user that is
	 * the emulator (its readlink is the guest's program) */
	{
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (len <= 0)
			SKIP("readlink /proc/self/exe: %s", strerror(errno));
		self[len] = 0;
	}
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", dir, dir);
	if (system(cmd))
		SKIP("cannot make %s", dir);
	if (kind_test)
		return kinds();

	/* the defaults: no file, no variable; nothing said */
	defaults = run(NULL, 0);
	CHECK_EQ(defaults.status, 0);
	CHECK_EQ(defaults.source, SWITCHYARD_MEMCPY_FROM_DEFAULT);
	CHECK_EQ(defaults.err[0], 0);
	CHECK(defaults.short_max <= SWITCHYARD_MEMCPY_SHORT_LIMIT);
	if (!erms)
		CHECK_EQ(defaults.rep_min, UINT32_MAX);

	/* a good variable: in effect, nothing said */
	r = run("short_max=40,rep_min=4096", 0);
	CHECK_EQ(r.status, 0);
	CHECK_EQ(r.short_max, 40);
	CHECK_EQ(r.rep_min, rep_4096);
	CHECK_EQ(r.source, SWITCHYARD_MEMCPY_FROM_ENV);
	check_quiet(r.err, 4096, erms);
	r = run("rep_min=4294967295", 0);	/* one key: the other stays */
	CHECK_EQ(r.short_max, defaults.short_max);
	CHECK_EQ(r.rep_min, UINT32_MAX);
	CHECK_EQ(r.source, SWITCHYARD_MEMCPY_FROM_ENV);

	/* an empty value, or empty items only, is the default, quietly
	 * (switchyard(3) ENVIRONMENT) */
	static const char *const empty_env[] = { "", ",", ",,," };
	for (size_t i = 0; i < sizeof(empty_env) / sizeof(empty_env[0]); i++) {
		struct result r = run(empty_env[i], 0);

		CHECK_EQ(r.status, 0);
		CHECK_EQ(r.short_max, defaults.short_max);
		CHECK_EQ(r.rep_min, defaults.rep_min);
		CHECK(!strstr(r.err, "SWITCHYARD_MEMCPY"));
	}
	for (size_t i = 0; i < sizeof(bad_env) / sizeof(bad_env[0]); i++) {
		check_rejected(bad_env[i][0], bad_env[i][1]);
		check_rejected(bad_env[i][0], "SWITCHYARD_MEMCPY=");
	}
	for (size_t i = 0; i < sizeof(good_env) / sizeof(good_env[0]); i++) {
		unsigned long sm = good_env[i].short_max,
			      rm = good_env[i].rep_min;

		r = run(good_env[i].env, 0);
		sm = sm == ~0ul ? defaults.short_max : sm;
		rm = rm == ~0ul ? defaults.rep_min : erms ? rm : UINT32_MAX;
		CHECK_EQ(r.status, 0);
		CHECK_EQ(r.source, SWITCHYARD_MEMCPY_FROM_ENV);
		CHECK_EQ(r.short_max, sm);
		CHECK_EQ(r.rep_min, rm);
		check_quiet(r.err, good_env[i].rep_min, erms);
		if (r.short_max != sm || r.rep_min != rm)
			fprintf(stderr, "  for %s: %lu %lu, wanted %lu %lu: "
				"%s\n", good_env[i].env, r.short_max,
				r.rep_min, sm, rm, r.err);
	}

	/* the file: where switchyard_memcpy_config_path() says, under
	 * XDG_CACHE_HOME (set here as for the children) */
	setenv("XDG_CACHE_HOME", dir, 1);
	CHECK_EQ(switchyard_memcpy_config_path(path, sizeof(path)), 0);
	CHECK(!strncmp(path, dir, strlen(dir)));
	CHECK(strstr(path, "/switchyard/memcpy-") != NULL);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/switchyard'", dir);
	CHECK_EQ(system(cmd), 0);
	write_file("# a comment\n\nshort_max=24\nrep_min=4096\n");
	r = run(NULL, 0);
	CHECK_EQ(r.short_max, 24);
	CHECK_EQ(r.rep_min, rep_4096);
	CHECK_EQ(r.source, SWITCHYARD_MEMCPY_FROM_FILE);
	check_quiet(r.err, 4096, erms);
	/* the variable over the file, key by key */
	r = run("short_max=100", 0);
	CHECK_EQ(r.short_max, 100);
	CHECK_EQ(r.rep_min, rep_4096);
	CHECK_EQ(r.source, SWITCHYARD_MEMCPY_FROM_ENV);
	/* malformed files: the defaults, a message naming the file */
	write_file("short_max=24\nrep_min=4096\nbogus\n");
	check_rejected(NULL, "not key=value");
	check_rejected(NULL, path);
	write_file("short_max=24\nrep_min=4096 \n");
	check_rejected(NULL, "not a number");
	write_file("short_max=24\nshort_max=24\n");
	check_rejected(NULL, "given twice");
	write_file("# nothing\n");
	check_rejected(NULL, "no threshold given");
	{
		FILE *f = fopen(path, "w");	/* a NUL byte inside */

		CHECK(f != NULL);
		if (f) {
			fwrite("short_max=2\0\n", 1, 13, f);
			fclose(f);
		}
	}
	check_rejected(NULL, "NUL");
	{
		FILE *f = fopen(path, "w");	/* too long */

		CHECK(f != NULL);
		for (int i = 0; f && i < 1000; i++)
			fputs("# padding\n", f);
		if (f)
			fclose(f);
	}
	check_rejected(NULL, "longer than");
	/* near-miss files ([11/15]): refused as a whole, with the line */
	{
		static const char *const bad_file[][2] = {
			{ "short_max=24\r\n", "item 1: the line ends with a "
			  "carriage return (CRLF line ends?)" },	/* CRLF */
			{ "# calibrated\r\n\r\nshort_max=24\r\n", "item 2: "
			  "the line ends with a carriage return" },
			{ " short_max=24\n", "unknown key ' short_max'" },
			{ "short_max = 24\n", "unknown key 'short_max '" },
			{ "short_max=24 # tuned\n", "not a number" },
			{ " # a comment\nshort_max=24\n", "item 1 ' # a "
			  "comment': not key=value" },	/* '#' first only */
			{ "short_max=24\n \n", "item 2 ' ': not key=value" },
			{ "short_max=24\n\t\n", "not key=value" },
			{ "short_max=24,rep_min=4096\n", "not a number" },
			{ "Short_max=24\n", "unknown key 'Short_max'" },
			{ "short_max=24\n#\nrep_min=0x1000\n",
			  "item 3: 'rep_min=0x1000' is not a number" },
			{ "short_max=24\n\n\nshort_max=24\n",
			  "item 4: 'short_max' given twice" },
			{ "rep_min=\n", "not a number" },
			{ "short_max==24\n", "not a number" },
		};
		/* good files: the value, and nothing said */
		static const struct {
			const char *text;
			unsigned long short_max, rep_min;
		} good_file[] = {
			{ "short_max=24", 24, ~0ul },	/* no last newline */
			{ "short_max=24\n\n\n", 24, ~0ul },
			{ "#short_max=99\nshort_max=24\n", 24, ~0ul },
			{ "\n# x = y\nrep_min=8192\n#\n", ~0ul, 8192 },
			{ "rep_min=08192\nshort_max=256\n", 256, 8192 },
		};

		for (size_t i = 0;
		     i < sizeof(bad_file) / sizeof(bad_file[0]); i++) {
			write_file(bad_file[i][0]);
			check_rejected(NULL, bad_file[i][1]);
			check_rejected(NULL, path);
			/* no control character echoed into the message */
			CHECK(!strchr(run(NULL, 0).err, '\r'));
		}
		for (size_t i = 0;
		     i < sizeof(good_file) / sizeof(good_file[0]); i++) {
			unsigned long sm = good_file[i].short_max,
				      rm = good_file[i].rep_min;

			write_file(good_file[i].text);
			r = run(NULL, 0);
			sm = sm == ~0ul ? defaults.short_max : sm;
			rm = rm == ~0ul ? defaults.rep_min :
			     erms ? rm : UINT32_MAX;
			CHECK_EQ(r.source, SWITCHYARD_MEMCPY_FROM_FILE);
			CHECK_EQ(r.short_max, sm);
			CHECK_EQ(r.rep_min, rm);
			check_quiet(r.err, good_file[i].rep_min, erms);
			if (r.short_max != sm || r.rep_min != rm)
				fprintf(stderr, "  for file %s: %lu %lu, "
					"wanted %lu %lu: %s\n",
					good_file[i].text, r.short_max,
					r.rep_min, sm, rm, r.err);
		}
		/* a good file and a near-miss variable: the variable is
		 * ignored as a whole (its good first item too), the file
		 * stands */
		write_file("short_max=24\nrep_min=8192\n");
		r = run("short_max=40,rep_min=4096x", 0);
		CHECK_EQ(r.source, SWITCHYARD_MEMCPY_FROM_FILE);
		CHECK_EQ(r.short_max, 24);
		CHECK_EQ(r.rep_min, erms ? 8192 : UINT32_MAX);
		CHECK(strstr(r.err, "SWITCHYARD_MEMCPY=") != NULL);
	}
	write_file("short_max=24\nrep_min=4096 \n");
	/* a bad file and a good variable: the variable, over the defaults */
	r = run("short_max=33", 0);
	CHECK_EQ(r.short_max, 33);
	CHECK_EQ(r.rep_min, defaults.rep_min);
	CHECK(strstr(r.err, path) != NULL);
	unlink(path);

	/* a quick calibration, saved; the next process reads it */
	r = run(NULL, 1);
	CHECK_EQ(r.status, 0);
	CHECK(strstr(r.err, "bad interval") == NULL);
	{
		unsigned long sm = 0, rm = 0;
		int rc = -1;
		const char *p = strstr(r.err, "calibrated ");
		struct result again;

		CHECK(p && sscanf(p, "calibrated %d %lu %lu", &rc, &sm,
				  &rm) == 3);
		CHECK_EQ(rc, 0);
		printf("quick calibration: %s", p ? p : "(none)\n");
		again = run(NULL, 0);
		CHECK_EQ(again.source, SWITCHYARD_MEMCPY_FROM_FILE);
		CHECK_EQ(again.short_max, sm);
		CHECK_EQ(again.rep_min, erms ? rm : UINT32_MAX);
		CHECK_EQ(again.err[0], 0);
	}
	CHECK_EQ(switchyard_calibrate(0x100, NULL), -EINVAL);
	return sy_test_done("test_memcpy_config");
}
