/* SPDX-License-Identifier: MIT */
/*
 * objects.c - the loaded objects, as the dynamic linker lists them: which
 * object maps an address, its file and segments, and symbol lookups in an
 * object's dynamic symbol table (through its GNU hash table, not dlsym()).
 *
 * Everything here calls dl_iterate_phdr() or dladdr(), which take the
 * dynamic linker's lock: never with the patch lock held (the lock order,
 * lock_order.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"
#include "sy_elf.h"

struct exe_lookup {
	const char *name;
	uintptr_t addr;		/* result, 0: not defined by the executable */
};

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

/*
 * Look name up in the dynamic symbol table of one loaded object, through
 * its DT_GNU_HASH. Returns the run-time address of its definition, or 0.
 * Not dlsym(): dlsym(RTLD_DEFAULT) makes the calling object depend on
 * wherever the symbol is found, which would keep every dlopen'ed library
 * that exports a key loaded forever.
 */
static uintptr_t gnu_lookup(const struct dl_phdr_info *info, const char *name)
{
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const uint32_t *gh = NULL;

	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr +
						  info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		/* glibc relocates these in place on x86-64; allow for both */
		uintptr_t p = dyn->d_un.d_ptr;

		if (p < info->dlpi_addr)
			p += info->dlpi_addr;
		if (dyn->d_tag == DT_SYMTAB)
			symtab = (const ElfW(Sym) *)p;
		else if (dyn->d_tag == DT_STRTAB)
			strtab = (const char *)p;
		else if (dyn->d_tag == DT_GNU_HASH)
			gh = (const uint32_t *)p;
	}
	if (!symtab || !strtab || !gh || !gh[0])
		return 0;

	uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2];
	const uint32_t *buckets =
		(const uint32_t *)((const ElfW(Addr) *)(gh + 4) + bloom_size);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t h = gnu_hash(name);

	for (uint32_t i = buckets[h % nbuckets]; i && i >= symoffset; i++) {
		uint32_t h2 = chain[i - symoffset];
		const ElfW(Sym) *sym = &symtab[i];

		if ((h | 1) == (h2 | 1) && !strcmp(name, strtab + sym->st_name))
			return sym->st_shndx == SHN_UNDEF ? 0 :
			       info->dlpi_addr + sym->st_value;
		if (h2 & 1)
			break;
	}
	return 0;
}

/* dl_iterate_phdr callback: the main program is the first object. */
static int exe_lookup_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct exe_lookup *q = arg;

	(void)size;
	q->addr = gnu_lookup(info, q->name);
	return 1;
}

/* dl_iterate_phdr callback: the first shared object (not the main
 * program) that defines q->name. */
struct lib_lookup {
	const char *name;
	char *path;	/* strdup'ed while the linker's lock is held */
	int seen;
};

static int lib_lookup_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct lib_lookup *q = arg;

	(void)size;
	if (q->seen++ == 0)
		return 0;	/* the main program */
	if (!gnu_lookup(info, q->name))
		return 0;
	q->path = info->dlpi_name && info->dlpi_name[0] ?
		  strdup(info->dlpi_name) : NULL;
	return 1;
}

char *sy_definer_of(const char *name)
{
	struct lib_lookup q = { name, NULL, 0 };

	dl_iterate_phdr(lib_lookup_cb, &q);
	return q.path;
}

/* dl_iterate_phdr callback: the object that maps q->addr. */
struct obj_query {
	uintptr_t addr;
	struct sy_obj *o;
};

static int obj_query_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct obj_query *q = arg;
	struct sy_obj *o = q->o;
	bool found = false;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && q->addr >= lo &&
		    q->addr < lo + ph->p_memsz)
			found = true;
	}
	if (!found)
		return 0;
	o->found = true;
	snprintf(o->name, sizeof(o->name), "%s",
		 info->dlpi_name ? info->dlpi_name : "");
	o->bias = info->dlpi_addr;
	o->nseg = 0;
	for (int i = 0; i < info->dlpi_phnum && o->nseg < SY_OBJ_MAX_SEGS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		o->lo[o->nseg] = info->dlpi_addr + ph->p_vaddr;
		o->hi[o->nseg] = o->lo[o->nseg] + ph->p_memsz;
		o->off[o->nseg] = ph->p_offset;
		o->filesz[o->nseg] = ph->p_filesz;
		o->nseg++;
	}
	o->phdr = info->dlpi_phdr;
	o->phnum = info->dlpi_phnum;
	return 1;
}

void sy_obj_lookup(uintptr_t addr, struct sy_obj *o)
{
	struct obj_query q = { addr, o };

	o->found = false;
	o->name[0] = 0;
	o->bias = 0;
	o->nseg = 0;
	o->phdr = NULL;
	o->phnum = 0;
	dl_iterate_phdr(obj_query_cb, &q);
}

bool sy_obj_contains(const struct sy_obj *o, uintptr_t addr)
{
	for (int i = 0; i < o->nseg; i++)
		if (addr >= o->lo[i] && addr < o->hi[i])
			return true;
	return false;
}

int sy_obj_file_read(const struct sy_obj *o, uintptr_t addr, void *buf,
		     size_t len)
{
	const char *path = o->name[0] ? o->name : "/proc/self/exe";

	for (int i = 0; i < o->nseg; i++) {
		ssize_t n;
		int fd, r;

		if (addr < o->lo[i] || addr - o->lo[i] > o->filesz[i] ||
		    o->filesz[i] - (addr - o->lo[i]) < len)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			return -errno;
		n = pread(fd, buf, len, (off_t)(o->off[i] + (addr - o->lo[i])));
		r = n < 0 ? -errno : (size_t)n == len ? 0 : -EIO;
		close(fd);
		return r;
	}
	return -ENOENT;
}

/*
 * The file and load bias of the object that maps addr. *path is malloc'ed
 * ("/proc/self/exe" resolved for the main program), or NULL.
 */
int sy_object_of(uintptr_t addr, char **path, uintptr_t *bias)
{
	struct sy_obj o;

	*path = NULL;
	*bias = 0;
	sy_obj_lookup(addr, &o);
	if (!o.found)
		return -ENOENT;
	*bias = o.bias;
	*path = o.name[0] ? strdup(o.name) : sy_exe_path();
	return *path ? 0 : -ENOMEM;
}

char *sy_exe_path(void)
{
	/* a path of any length (the kernel gives up to a page, then
	 * ENAMETOOLONG: then the link's own name) */
	for (size_t size = 256; size <= (1u << 20); size *= 2) {
		char *buf = malloc(size);
		ssize_t n;

		if (!buf)
			return NULL;
		n = readlink("/proc/self/exe", buf, size);
		if (n > 0 && (size_t)n < size) {
			buf[n] = 0;
			return buf;
		}
		free(buf);
		if (n < 0)
			break;
	}
	return strdup("/proc/self/exe");
}


/*
 * A key (a static key, or a static call's key: call) exported by a shared
 * object can exist twice: the executable holds
 * a copy (a copy relocation: what gcc and clang emit for an extern variable
 * in PIE and non-PIE code alike), which is the program's instance, while a
 * library linked with -Bsymbolic, or whose key is protected, keeps using its
 * own. Flipping one then does not reach the sites that use the other: the
 * same split any exported variable suffers there. It cannot be repaired
 * from here, so it is reported at registration, with the fix: have the
 * executable reach such keys through the GOT.
 */
void sy_check_split_key(const void *key, bool call)
{
	struct exe_lookup q;
	Dl_info info;

	if (!dladdr(key, &info) || !info.dli_sname ||
	    info.dli_saddr != (void *)key)
		return;
	q.name = info.dli_sname;
	q.addr = 0;
	dl_iterate_phdr(exe_lookup_cb, &q);
	if (!q.addr || q.addr == (uintptr_t)key)
		return;
	sy_log(SWITCHYARD_LOG_ERROR,
	       "%s '%s': the sites of %s use the instance at %p, "
	       "the program's is at %p (a copy in the executable, and "
	       "a -Bsymbolic or protected definition in %s): changing "
	       "one does not reach the sites of the other. Build the "
	       "executable with %s, or define the %s in the executable",
	       call ? "static call" : "static key",
	       call && !strncmp(info.dli_sname, "__SCK__", 7) ?
	       info.dli_sname + 7 : info.dli_sname, info.dli_fname,
	       (void *)key,
	       (void *)q.addr, info.dli_fname,
#if defined(__aarch64__)
	       "-fPIE or -fPIC (its code then reaches the variable through "
	       "the GOT)",
#else
	       "-mno-direct-extern-access (gcc) or "
	       "-fno-direct-access-external-data (clang)",
#endif
	       call ? "call" : "key");
}

struct sy_rec_table *sy_rec_table_add(struct sy_rec_table **list, void *start,
				      void *stop, bool *fresh)
{
	struct sy_rec_table *t;

	*fresh = false;
	for (t = *list; t; t = t->next)
		if (t->start == start)
			return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->start = start;
	t->stop = stop;
	t->next = *list;
	*list = t;
	*fresh = true;
	return t;
}

int sy_rec_table_del(struct sy_rec_table **list, const void *start)
{
	for (struct sy_rec_table **pt = list; *pt; pt = &(*pt)->next) {
		struct sy_rec_table *t = *pt;

		if (t->start != start)
			continue;
		*pt = t->next;
		free(t);
		return 0;
	}
	return -ENOENT;
}

void sy_rec_tables_free(struct sy_rec_table **list)
{
	while (*list) {
		struct sy_rec_table *t = *list;

		*list = t->next;
		free(t);
	}
}

/* ---- the file an object was mapped from ---------------------------------- */

/*
 * The mapping of /proc/self/maps that holds addr: its range, device and
 * inode. Lines may be longer than the buffer (a long path): only their
 * beginnings are parsed.
 */
static int maps_entry(uintptr_t addr, uintptr_t *lo, uintptr_t *hi,
		      unsigned *maj, unsigned *min, unsigned long *ino)
{
	char line[256];
	bool start = true;
	int r = -ENOENT;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		bool at_start = start;
		unsigned long a, b, off;

		start = strchr(line, '\n') != NULL;
		if (!at_start)
			continue;
		if (sscanf(line, "%lx-%lx %*s %lx %x:%x %lu", &a, &b, &off, maj,
			   min, ino) == 6 && addr >= a && addr < b) {
			*lo = a;
			*hi = b;
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

ssize_t sy_self_read(const void *addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	int fd;

	if (n >= 0 || errno != ENOSYS)
		return n;
	fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = pread(fd, buf, len, (off_t)(uintptr_t)addr);
	close(fd);
	return n;
}

/* The GNU build ID of a loaded object (its PT_NOTE segments, read in its
 * memory through process_vm_readv(): the object may be unloaded meanwhile)
 * or of a file (fd); its length, 0 if none. */
struct note_src {
	const struct sy_obj *o;	/* memory, else */
	int fd;			/* file */
};

static bool note_read(const struct note_src *s, uint64_t where, void *buf,
		      size_t len)
{
	if (s->o)
		return sy_self_read((const void *)(uintptr_t)(s->o->bias +
							     where),
				    buf, len) == (ssize_t)len;
	return pread(s->fd, buf, len, (off_t)where) == (ssize_t)len;
}

static size_t build_id(const struct note_src *s, uint8_t *id, size_t size)
{
	ElfW(Phdr) ph[64];
	int n;

	if (s->o) {
		n = s->o->phnum;
		if (n <= 0 || n > 64)
			return 0;
		size_t len = (size_t)n * sizeof(ph[0]);

		if (sy_self_read(s->o->phdr, ph, len) != (ssize_t)len)
			return 0;
	} else {
		ElfW(Ehdr) eh;

		if (pread(s->fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
		    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
		    eh.e_phentsize != sizeof(ph[0]) || eh.e_phnum > 64)
			return 0;
		n = eh.e_phnum;
		if (pread(s->fd, ph, (size_t)n * sizeof(ph[0]), (off_t)eh.e_phoff) !=
		    (ssize_t)((size_t)n * sizeof(ph[0])))
			return 0;
	}
	for (int i = 0; i < n; i++) {
		uint8_t note[512];
		size_t len = ph[i].p_filesz < sizeof(note) ? ph[i].p_filesz
							    : sizeof(note);

		if (ph[i].p_type != PT_NOTE ||
		    !note_read(s, s->o ? ph[i].p_vaddr : ph[i].p_offset, note, len))
			continue;
		for (size_t at = 0; at + 12 <= len;) {
			uint32_t nsz, dsz, type;

			memcpy(&nsz, note + at, 4);
			memcpy(&dsz, note + at + 4, 4);
			memcpy(&type, note + at + 8, 4);
			size_t name_end = at + 12 + ((nsz + 3) & ~3u);

			if (nsz > len || dsz > len || name_end + dsz > len)
				break;
			if (type == NT_GNU_BUILD_ID && nsz == 4 &&
			    !memcmp(note + at + 12, "GNU", 4) && dsz <= size) {
				memcpy(id, note + name_end, dsz);
				return dsz;
			}
			at = name_end + ((dsz + 3) & ~3u);
		}
	}
	return 0;
}

int sy_obj_open(const struct sy_obj *o)
{
	static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;
	static char warned[SY_OBJ_NAME];	/* the last object warned about */
	unsigned maj, min;
	unsigned long ino;
	uintptr_t lo = 0, hi = 0;
	char mf[64];
	struct stat st;
	int fd, r;

	if (!o->found || !o->nseg)
		return -ENOENT;
	/* the kernel's link to the program's file: the mapped one, even
	 * replaced or deleted, whatever the length of its path */
	if (!o->name[0]) {
		fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	/* without /proc/self/maps (a chroot without /proc) only the build
	 * ID can tell */
	r = maps_entry(o->lo[0], &lo, &hi, &maj, &min, &ino);
	if (!r && !ino)
		return -ENOENT;	/* not from a file: the vDSO */
	/* O_NONBLOCK: a FIFO planted at the path must not hang the open (its
	 * inode then differs from the mapping's, and it is refused) */
	fd = open(o->name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	/*
	 * The same inode: the mapped file (it cannot have been freed and its
	 * number reused while it is mapped). The device alone may differ on a
	 * file that did not change: btrfs subvolumes and overlayfs report
	 * another st_dev to stat() than the mapping's in /proc/self/maps.
	 */
	if (fd >= 0 && !r && !fstat(fd, &st) && st.st_ino == ino)
		return fd;
	/* the same link (an overlayfs with xino, a copy): the same build ID */
	if (fd >= 0) {
		uint8_t a[64], b[64];
		size_t na = build_id(&(struct note_src){ o, -1 }, a, sizeof(a));
		size_t nb = build_id(&(struct note_src){ NULL, fd }, b, sizeof(b));

		if (na && na == nb && !memcmp(a, b, na))
			return fd;
		close(fd);
	}
	if (r) {
		snprintf(mf, sizeof(mf), "/proc/self/maps");
		errno = -r;
	} else {
		snprintf(mf, sizeof(mf), "/proc/self/map_files/%lx-%lx",
			 (unsigned long)lo, (unsigned long)hi);
		fd = open(mf, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
	}
	pthread_mutex_lock(&warn_lock);
	if (strcmp(warned, o->name)) {
		memcpy(warned, o->name, sizeof(warned));
		sy_log(SWITCHYARD_LOG_WARN, "%s: the file at this path is not "
		       "known to be the one the process mapped (replaced since "
		       "it was loaded?), and %s cannot be opened (%s): the "
		       "names of its keys and calls are not read from it; "
		       "restart the process to name them", o->name, mf,
		       strerror(errno));
	}
	pthread_mutex_unlock(&warn_lock);
	return -ESTALE;
}

/* The object's file for messages: its path, or the program's name. */
const char *sy_obj_name(const struct sy_obj *o)
{
	extern char *program_invocation_name;

	if (o->found && o->name[0])
		return o->name;
	return program_invocation_name ? program_invocation_name : "the program";
}

/* ---- the records of every loaded object, in memory ----------------------- */

/* bytes readable at a in info's object (0: not in a loaded segment) */
static size_t readable_at(const struct dl_phdr_info *info, uintptr_t a)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && a >= lo &&
		    a - lo < ph->p_memsz)
			return ph->p_memsz - (a - lo);
	}
	return 0;
}

struct sy_rec_obj {
	const struct dl_phdr_info *info;
};

char *sy_rec_strdup(const struct sy_rec_obj *o, const char *p, size_t max)
{
	size_t room = readable_at(o->info, (uintptr_t)p), len;

	if (!room)
		return NULL;
	len = strnlen(p, room < max ? room : max);
	return len < room ? strndup(p, len) : NULL;	/* else unterminated */
}

struct walk {
	const char *section;
	size_t rsize;
	sy_rec_fn fn;
	void *arg;
	bool main_seen;
};

/* The section's place in info's object, from the section headers of the
 * file it was mapped from (sy_obj_open()): the file now at its path may be
 * another build, whose section is elsewhere. */
static int section_of(const struct dl_phdr_info *info, const char *name,
		      uint64_t *addr, uint64_t *sz)
{
	struct sy_obj *o = calloc(1, sizeof(*o));
	char fdpath[40];
	int fd, r;

	if (!o)
		return -ENOMEM;
	o->found = true;
	snprintf(o->name, sizeof(o->name), "%s",
		 info->dlpi_name ? info->dlpi_name : "");
	o->bias = info->dlpi_addr;
	o->phdr = info->dlpi_phdr;
	o->phnum = info->dlpi_phnum;
	for (int i = 0; i < info->dlpi_phnum && !o->nseg; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			o->lo[0] = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			o->hi[0] = o->lo[0] + info->dlpi_phdr[i].p_memsz;
			o->nseg = 1;
		}
	fd = sy_obj_open(o);
	free(o);
	if (fd < 0)
		return fd;
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	r = sy_elf_section_load(fdpath, name, addr, sz);
	close(fd);
	return r;
}

static int walk_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *w = arg;
	struct sy_rec_obj o = { info };
	uint64_t addr, sz;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0]) {
		if (w->main_seen)
			return 0;
		w->main_seen = true;
	}
	if (section_of(info, w->section, &addr, &sz) || !sz ||
	    sz % w->rsize || readable_at(info, info->dlpi_addr + addr) < sz)
		return 0;
	for (uint64_t off = 0; off < sz; off += w->rsize)
		w->fn(&o, (const void *)(info->dlpi_addr + addr + off), w->arg);
	return 0;
}

void sy_records_walk(const char *section, size_t rsize, sy_rec_fn fn,
		     void *arg)
{
	struct walk w = { section, rsize, fn, arg, false };

	dl_iterate_phdr(walk_cb, &w);
}
