/* SPDX-License-Identifier: MIT */
/*
 * cmd_prepatch.c - `switchyard prepatch FILE [-o OUT] [--json]`: write
 * every static key site's initial form into the file, as the kernel's
 * objtool does at build time, so that the program writes no code at
 * start-up. Exit status: 0 done (or nothing to do), 1 nothing written (a
 * message on stderr says why), 2 usage.
 *
 * A site is assembled as a jump to its out-of-line code; the library
 * turns it into its straight-line form at registration wherever the key's
 * state asks for the straight-line path (src/registry.c). Written here
 * instead, the file's text pages need no write at start-up: they stay
 * shared with every other process that maps the file, start-up does no
 * patching work, and a debugger's breakpoint planted before `run` sits on
 * the final bytes. A prepatched file still works whatever its keys do
 * later (the library takes either form at registration), and prepatching
 * it again changes nothing.
 *
 * What is written, per site (the rule the library applies, jump when the
 * key's state differs from the site's likely bit):
 *
 *   key defined in the file   initial   likely   site becomes
 *   yes                       off       no       straight-line form
 *   yes                       on        no       jump (as assembled)
 *   yes                       off       yes      jump
 *   yes                       on        yes      straight-line form
 *   no (another object)       unknown            left as assembled
 *
 * The forms, by the file's machine (insn.h):
 *
 *   machine   jump (as assembled)     straight-line form
 *   x86-64    JMP  (eb / e9 + rel)    TEST (a8 / a9 + the same rel): one
 *                                     byte differs
 *   AArch64   B to the out-of-line    NOP (d503201f): the whole word
 *             code                    (include/switchyard/arch/aarch64.h)
 *
 * An x86-64 tool prepatches AArch64 files and the other way round: the
 * file says what it is.
 *
 * Left as assembled, because their final form is only known at run time:
 * sites of keys defined elsewhere, static call sites (on x86-64 they hold
 * the address of a per-process rseq descriptor and the thread pointer
 * offset of the rseq area; on AArch64 the BL to the site's veneer, which
 * reaches any target, becomes a BL to the target only once the library
 * knows where the target was loaded), alternatives (the CPU's features)
 * and run-time constants (a value computed at start-up).
 *
 * Every site must hold one of its two forms to its own target; any other
 * byte and nothing is written (the file was changed by something else).
 * The output is written to a temporary file beside it, then renamed over
 * it: a reader of the file (a running program maps it) never sees a half
 * write, and a failure leaves the old file. The temporary's name is short
 * and fixed in form (".sy-prepatch.<12 hex digits>"), so that a file named
 * with NAME_MAX bytes can be prepatched too.
 *
 * The file replaced keeps what it was besides its bytes: owner, group,
 * mode (set-user-ID and set-group-ID bits included), extended attributes
 * (file capabilities, ACLs, security labels). Without that, root
 * prepatching a set-user-ID program of another user would make it a
 * set-user-ID root program. What cannot be kept (a caller who may not
 * give the file its owner) makes prepatch refuse and write nothing. With
 * -o OUT a new file is made: it gets what the caller may give, never
 * more, and a set-ID bit whose owner or group it could not keep is
 * dropped, as cp -p does (keep_attrs()).
 *
 * A symbolic link is followed: the file it finally names is replaced and
 * the link stays (libfoo.so -> libfoo.so.1.0).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "../src/sy_elf.h"
#include "cmds.h"
#include "insn.h"
#include "records.h"
#include "util.h"

/* The file at path, read whole: *fd stays open (its extended attributes
 * are copied from it), *st describes it. Opened O_NONBLOCK: a FIFO there
 * must not block the open (it is refused as not a regular file). */
static int read_all(const char *path, uint8_t **buf, size_t *size, int *fdp,
		    struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	size_t got = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_size <= 0) {
		close(fd);
		return -ENOEXEC;
	}
	*size = (size_t)st->st_size;
	/* 8-byte aligned, as the ELF readers want */
	*buf = aligned_alloc(8, (*size + 7) & ~(size_t)7);
	if (!*buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < *size) {
		ssize_t n = read(fd, *buf + got, *size - got);

		if (n <= 0) {
			int r = n < 0 ? -errno : -EIO;

			free(*buf);
			close(fd);
			return r;
		}
		got += (size_t)n;
	}
	*fdp = fd;
	return 0;
}

/*
 * Where the output goes: a directory (opened) and a name in it. A symbolic
 * link is followed to the file it finally names and that file is replaced,
 * the link kept (libfoo.so -> libfoo.so.1.0: the library is patched, as a
 * write through the link would). A name that does not exist yet (-o OUT)
 * is created.
 */
struct dest {
	int dirfd;		/* O_PATH of the directory */
	char *path;		/* the final file's path (a link resolved) */
	const char *base;	/* its last component, in path */
	bool followed;		/* path is the target of a symbolic link */
};

static void dest_free(struct dest *d)
{
	if (d->dirfd >= 0)
		close(d->dirfd);
	free(d->path);
}

/* dest_open(): the name is that of a device, a FIFO or a socket */
#define EFTYPE_NOT_REG 4095

static int dest_open(const char *path, struct dest *d)
{
	struct stat st;
	char *slash;

	d->dirfd = -1;
	d->followed = false;
	d->path = NULL;
	if (!lstat(path, &st) && S_ISLNK(st.st_mode)) {
		d->path = realpath(path, NULL);	/* NULL: a dangling link */
		d->followed = true;
	} else {
		d->path = strdup(path);
	}
	if (!d->path)
		return -errno;
	/* "dir/name", "/name", "name" (trailing slashes: not a file) */
	slash = strrchr(d->path, '/');
	if (slash && !slash[1])
		return -EISDIR;
	if (!slash) {
		d->base = d->path;
		d->dirfd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else if (slash == d->path) {
		d->base = slash + 1;
		d->dirfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else {
		*slash = 0;
		d->dirfd = open(d->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		*slash = '/';
		d->base = slash + 1;
	}
	if (d->dirfd < 0)
		return -errno;
	/*
	 * realpath() reads the links itself, past the kernel's guard against
	 * following another user's link in a sticky directory
	 * (fs.protected_symlinks: /tmp/out -> /etc/passwd planted for root).
	 * Have the kernel follow the link too, and insist on the same file.
	 */
	if (d->followed) {
		struct stat via, at;
		int fd = open(path, O_PATH | O_CLOEXEC);

		if (fd < 0)
			return -errno;
		if (fstat(fd, &via)) {
			close(fd);
			return -errno;
		}
		close(fd);
		if (fstatat(d->dirfd, d->base, &at, AT_SYMLINK_NOFOLLOW))
			return -errno;
		if (via.st_dev != at.st_dev || via.st_ino != at.st_ino)
			return -ESTALE;
	}
	/*
	 * Only a regular file is replaced: renaming a new file over a device,
	 * a FIFO or a socket (-o /dev/null as root) would destroy it, and
	 * writing into one is not what prepatch is for.
	 */
	if (!fstatat(d->dirfd, d->base, &st, AT_SYMLINK_NOFOLLOW) &&
	    !S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -EFTYPE_NOT_REG;
	return 0;
}

/*
 * A new file in d's directory, under a short name of its own whatever the
 * length of the name it replaces (a file name of NAME_MAX bytes leaves no
 * room for a suffix). Its name goes to tmp.
 */
static int make_temp(const struct dest *d, char tmp[32])
{
	for (int tries = 0; tries < 100; tries++) {
		uint64_t rnd;
		int fd;

		if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) !=
		    sizeof(rnd))
			rnd = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL) ^
			      (uint64_t)tries * 0x9e3779b97f4a7c15ull;
		snprintf(tmp, 32, ".sy-prepatch.%012llx",
			 (unsigned long long)(rnd & 0xffffffffffffull));
		fd = openat(d->dirfd, tmp, O_RDWR | O_CREAT | O_EXCL |
			    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd < 0 ? -errno : fd;
	}
	return -EEXIST;
}

/* what a failure to keep an attribute of the file is about, for messages */
struct why {
	char text[512];
};

static bool xattr_equal(int fd, const char *name, const char *val, ssize_t len)
{
	char buf[256];
	ssize_t n = fgetxattr(fd, name, buf, sizeof(buf));

	return n == len && !memcmp(buf, val, (size_t)len);
}

/*
 * Copy the extended attributes of from to to: file capabilities
 * (security.capability), POSIX ACLs (system.posix_acl_access), security
 * labels, user attributes. An ACL the new file inherited from its
 * directory's default ACL and the original lacks is removed: the file must
 * gain nothing either. strict: the first that cannot be set fails
 * (-errno, *why names it); else each is said on stderr and skipped.
 */
static int copy_xattrs(int from, int to, bool strict, const char *shown,
		       struct why *why)
{
	ssize_t len = flistxattr(from, NULL, 0), vlen;
	char *names = NULL, *val = NULL;
	bool acl = false;
	int r = 0;

	if (len < 0)
		return errno == ENOTSUP ? 0 : -errno;
	names = malloc((size_t)len + 1);
	if (!names)
		return -ENOMEM;
	len = flistxattr(from, names, (size_t)len);
	if (len < 0) {
		r = -errno;
		goto out;
	}
	for (char *n = names; !r && n < names + len; n += strlen(n) + 1) {
		if (!strcmp(n, "system.posix_acl_access"))
			acl = true;
		vlen = fgetxattr(from, n, NULL, 0);
		if (vlen < 0) {
			r = -errno;
			break;
		}
		free(val);
		val = malloc((size_t)vlen + 1);
		if (!val) {
			r = -ENOMEM;
			break;
		}
		vlen = fgetxattr(from, n, val, (size_t)vlen);
		if (vlen < 0) {
			r = -errno;
			break;
		}
		if (xattr_equal(to, n, val, vlen) ||
		    !fsetxattr(to, n, val, (size_t)vlen, 0))
			continue;
		if (strict) {
			r = -errno;
			snprintf(why->text, sizeof(why->text),
				 "cannot keep its extended attribute %s%s", n,
				 !strcmp(n, "security.capability") ?
				 " (its file capabilities)" : "");
		} else {
			fprintf(stderr, "switchyard: %s: extended attribute "
				"%s%s not copied: %s\n", shown, n,
				!strcmp(n, "security.capability") ?
				" (file capabilities)" : "", strerror(errno));
		}
	}
	if (!r && !acl && fremovexattr(to, "system.posix_acl_access") &&
	    errno != ENODATA && errno != ENOTSUP) {
		r = -errno;
		snprintf(why->text, sizeof(why->text), "cannot remove the "
			 "ACL its directory's default ACL gave the new file");
	}
out:
	free(val);
	free(names);
	return r;
}

/*
 * Give the new file tfd what the original (src, open as sfd) has: owner
 * and group, extended attributes, then the mode. In that order: chown
 * clears the set-user-ID and set-group-ID bits and the file capabilities,
 * and the mode comes last, so that no moment has a set-ID bit on a file
 * with the wrong owner.
 *
 * inplace (the original is replaced): everything is kept, or -errno with
 * *why. Written elsewhere (-o OUT): what the caller may not give is not
 * given, and said: owned by the caller, OUT loses a set-user-ID bit (and
 * set-group-ID for a group the caller cannot give), as cp -p does. Never
 * a privilege the original did not have.
 */
static int keep_attrs(int sfd, const struct stat *src, int tfd, bool inplace,
		      const char *shown, struct why *why)
{
	mode_t mode = src->st_mode & 07777;
	struct stat st;
	int r;

	if (fstat(tfd, &st))
		return -errno;
	if ((st.st_uid != src->st_uid || st.st_gid != src->st_gid) &&
	    fchown(tfd, src->st_uid, src->st_gid)) {
		r = -errno;
		if (inplace) {
			snprintf(why->text, sizeof(why->text), "cannot keep "
				 "its owner and group (uid %u, gid %u)",
				 (unsigned)src->st_uid, (unsigned)src->st_gid);
			return r;
		}
		/* the group alone, if it is one of the caller's */
		if (st.st_gid != src->st_gid)
			(void)fchown(tfd, (uid_t)-1, src->st_gid);
		if (fstat(tfd, &st))
			return -errno;
		if (st.st_uid != src->st_uid && (mode & S_ISUID)) {
			mode &= ~(mode_t)S_ISUID;
			fprintf(stderr, "switchyard: %s: owned by uid %u, not "
				"uid %u as the original: written without its "
				"set-user-ID bit\n", shown, (unsigned)st.st_uid,
				(unsigned)src->st_uid);
		}
		if (st.st_gid != src->st_gid && (mode & S_ISGID)) {
			mode &= ~(mode_t)S_ISGID;
			fprintf(stderr, "switchyard: %s: group gid %u, not "
				"gid %u as the original: written without its "
				"set-group-ID bit\n", shown,
				(unsigned)st.st_gid, (unsigned)src->st_gid);
		}
	}
	r = copy_xattrs(sfd, tfd, inplace, shown, why);
	if (r)
		return r;
	if (fchmod(tfd, mode) || fstat(tfd, &st))
		return -errno;
	if ((st.st_mode & 07777) != mode) {
		snprintf(why->text, sizeof(why->text), "cannot keep its mode "
			 "%04o (got %04o)", (unsigned)mode,
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/*
 * Write buf as the file d names, through a new file beside it renamed over
 * it: a reader of the file (a running program maps it) never sees a half
 * write, and a failure leaves the old file. src/sfd: the file read, whose
 * owner, group, extended attributes and mode the new one gets
 * (keep_attrs()). inplace: d is that file; it must still be (same device
 * and inode) when it is replaced.
 */
static int write_all(const struct dest *d, const uint8_t *buf, size_t size,
		     int sfd, const struct stat *src, bool inplace,
		     const char *shown, struct why *why)
{
	char tmp[32];
	size_t done = 0;
	struct stat now;
	int fd = make_temp(d, tmp), r = 0;

	if (fd < 0)
		return fd;
	while (!r && done < size) {
		ssize_t n = write(fd, buf + done, size - done);

		if (n <= 0)
			r = n < 0 ? -errno : -EIO;
		else
			done += (size_t)n;
	}
	if (!r)
		r = keep_attrs(sfd, src, fd, inplace, shown, why);
	if (!r && fsync(fd))
		r = -errno;
	if (close(fd) && !r)
		r = -errno;
	if (!r && inplace &&
	    (fstatat(d->dirfd, d->base, &now, AT_SYMLINK_NOFOLLOW) ||
	     now.st_dev != src->st_dev || now.st_ino != src->st_ino)) {
		snprintf(why->text, sizeof(why->text), "replaced by another "
			 "file while it was being prepatched");
		r = -ESTALE;
	}
	if (!r && renameat(d->dirfd, tmp, d->dirfd, d->base))
		r = -errno;
	if (r)
		unlinkat(d->dirfd, tmp, 0);
	return r;
}

struct counts {
	size_t sites, written, already, elsewhere;
};

/* "func+0x12 (0x401136)" of addr, or "0x401136" */
static void site_name(const struct sy_syms *syms, uint64_t addr, char *buf,
		      size_t size)
{
	struct place p;
	size_t n;

	place_find(&p, syms, NULL, addr);
	func_off(&p, NULL, buf, size);
	n = strlen(buf);
	if (p.func)
		snprintf(buf + n, size - n, " (0x%llx)",
			 (unsigned long long)addr);
	place_free(&p);
}

/*
 * Site s (len bytes at s->off in img, one of its two forms: records.c
 * checked) in the form that jumps (jump) or falls through: 1 when it
 * was written, 0 when it held that form already.
 */
static int site_write(unsigned machine, uint8_t *img,
		      const struct sy_rec_site *s, bool jump)
{
	uint8_t *p = img + s->off;

	if (machine == EM_AARCH64) {
		/* a whole word: B to the site's target, or NOP */
		uint32_t want = jump ? a64_branch(A64_B, s->addr, s->target)
				     : A64_NOP;

		if (a64_word(p) == want)
			return 0;
		a64_put(p, want);
		return 1;
	}
	/* the opcode byte only: the rel after it is the same in both */
	uint8_t want = jump ? (s->len == 2 ? X86_JMP8 : X86_JMP32)
			    : (s->len == 2 ? X86_TEST8 : X86_TEST32);

	if (*p == want)
		return 0;
	*p = want;
	return 1;
}

/* Bring every site of rec to its initial form in img; 0, or 1 with a
 * message (then img may be half-changed: the caller writes nothing). */
static int prepatch(const char *path, uint8_t *img, size_t size,
		    const struct sy_records *rec, const struct sy_syms *syms,
		    struct counts *c)
{
	for (size_t i = 0; i < rec->nkeys; i++) {
		const struct sy_rec_key *k = &rec->keys[i];

		for (size_t j = 0; j < k->nsites; j++) {
			const struct sy_rec_site *s = &k->sites[j];
			char where[512];

			c->sites++;
			if (!s->len || s->off + s->len > size) {
				char *owned;

				site_name(syms, s->addr, where, sizeof(where));
				fprintf(stderr, "switchyard: %s: site %s of key "
					"%s holds neither the %s the "
					"compiler emitted nor its %s form: "
					"nothing written\n", path, where,
					demangle(k->name, &owned),
					rec->machine == EM_AARCH64 ? "B" :
					"jump",
					rec->machine == EM_AARCH64 ? "NOP" :
					"TEST");
				free(owned);
				return 1;
			}
			if (k->initial < 0) {
				c->elsewhere++;
				continue;
			}
			if (site_write(rec->machine, img, s,
				       (k->initial != 0) != (s->likely != 0)))
				c->written++;
			else
				c->already++;
		}
	}
	return 0;
}

/* Write img as out (or in, replaced); 0, or 1 with a message. */
static int write_out(const char *in, const char *out, const uint8_t *img,
		     size_t size, int sfd, const struct stat *src,
		     const char **shown_target, struct dest *d)
{
	const char *shown = out ? out : in;
	struct why why = { "" };
	struct stat ost;
	bool inplace;
	int w = dest_open(shown, d);

	if (w) {
		fprintf(stderr, "switchyard: %s: %s%s: nothing written\n",
			shown, w == -ENOENT && d->followed ?
			"a symbolic link to nothing: " : "",
			w == -ESTALE ? "its symbolic link changed while it "
				       "was being followed" :
			w == -EFTYPE_NOT_REG ? "not a regular file (a device, "
					       "FIFO or socket is never "
					       "replaced)" : strerror(-w));
		return 1;
	}
	/* -o naming the input itself replaces it: as strict as without -o */
	inplace = !out || (!fstatat(d->dirfd, d->base, &ost, 0) &&
			   ost.st_dev == src->st_dev &&
			   ost.st_ino == src->st_ino);
	if (d->followed)
		*shown_target = d->path;
	w = write_all(d, img, size, sfd, src, inplace, d->path, &why);
	if (w) {
		fprintf(stderr, "switchyard: %s: %s%s%s: nothing written%s\n",
			d->path, why.text, why.text[0] ? ": " : "",
			strerror(-w), why.text[0] && inplace && !out ?
			" (prepatch a copy with -o OUT, or run as the file's "
			"owner or as root)" : "");
		return 1;
	}
	if (inplace && src->st_nlink > 1)
		fprintf(stderr, "switchyard: %s: its %lu other hard link%s "
			"still name%s the file as it was\n", d->path,
			(unsigned long)src->st_nlink - 1,
			src->st_nlink == 2 ? "" : "s",
			src->st_nlink == 2 ? "s" : "");
	return 0;
}

/* switchyard prepatch FILE (out_path: -o OUT) */
int cmd_prepatch(int argc, char **argv)
{
	const char *in = argv[1], *out = out_path;
	struct sy_records rec;
	struct sy_syms syms = { 0 };
	struct counts c = { 0, 0, 0, 0 };
	struct dest d = { -1, NULL, NULL, false };
	struct stat st;
	const char *target = NULL;
	uint8_t *img = NULL;
	size_t size = 0;
	int sfd = -1;
	int r;

	(void)argc;
	r = read_all(in, &img, &size, &sfd, &st);

	if (r) {
		fprintf(stderr, "switchyard: %s: %s\n", in,
			r == -ENOEXEC ? "not a regular, non-empty file"
				      : strerror(-r));
		return 1;
	}
	r = sy_records_read(img, size, &rec);
	if (r) {
		fprintf(stderr, "switchyard: %s: %s\n", in,
			r == -ENOEXEC ? rec.why : strerror(-r));
		free(img);
		close(sfd);
		return 1;
	}
	(void)sy_syms_parse(img, size, 0, &syms);	/* names: a bonus */
	r = prepatch(in, img, size, &rec, &syms, &c);
	if (!r && (c.written || out))
		r = write_out(in, out, img, size, sfd, &st, &target, &d);
	if (!r && json_output) {
		printf("{\"file\": ");
		json_str(stdout, in);
		printf(", \"output\": ");
		json_str(stdout, out ? out : in);
		printf(", \"written_to\": ");
		json_str(stdout, target ? target : out ? out : in);
		printf(", \"sites\": %zu, \"written\": %zu, \"already\": %zu, "
		       "\"elsewhere\": %zu, \"static_calls\": %zu, "
		       "\"alternatives\": %zu, \"runtime_consts\": %zu}\n",
		       c.sites, c.written, c.already, c.elsewhere, rec.ncalls,
		       rec.nalts, rec.nrcs);
	} else if (!r) {
		printf("%s%s%s: %zu static key site%s: %zu prepatched, %zu "
		       "already in their initial form, %zu of keys defined in "
		       "other objects left as compiled\n", out ? out : in,
		       target ? " -> " : "", target ? target : "", c.sites,
		       c.sites == 1 ? "" : "s", c.written, c.already,
		       c.elsewhere);
		if (rec.ncalls || rec.nalts || rec.nrcs)
			printf("left as compiled, chosen at run time: %zu "
			       "static call site%s, %zu alternative%s, %zu "
			       "run-time constant site%s\n", rec.ncalls,
			       rec.ncalls == 1 ? "" : "s", rec.nalts,
			       rec.nalts == 1 ? "" : "s", rec.nrcs,
			       rec.nrcs == 1 ? "" : "s");
	}
	dest_free(&d);
	close(sfd);
	sy_syms_free(&syms);
	sy_records_free(&rec);
	free(img);
	return r;
}
