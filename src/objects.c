/* SPDX-License-Identifier: MIT */
/*
 * objects.c - the loaded objects, as the dynamic linker lists them: which
 * object maps an address, its file and segments, and symbol lookups in an
 * object's dynamic symbol table (through its GNU hash table, not dlsym()).
 *
 * Everything here calls dl_iterate_phdr() or dladdr(), which take the
 * dynamic linker's lock: never with the patch lock held (lock order in
 * internal.h).
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

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
	return 1;
}

void sy_obj_lookup(uintptr_t addr, struct sy_obj *o)
{
	struct obj_query q = { addr, o };

	o->found = false;
	o->name[0] = 0;
	o->bias = 0;
	o->nseg = 0;
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
		fd = open(path, O_RDONLY | O_CLOEXEC);
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
	if (o.name[0]) {
		*path = strdup(o.name);
	} else {
		char buf[4096];
		ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

		if (n > 0) {
			buf[n] = 0;
			*path = strdup(buf);
		}
	}
	return *path ? 0 : -ENOMEM;
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
	       "executable with -mno-direct-extern-access (gcc) or "
	       "-fno-direct-access-external-data (clang), or define the "
	       "%s in the executable",
	       call ? "static call" : "static key",
	       call && !strncmp(info.dli_sname, "__SCK__", 7) ?
	       info.dli_sname + 7 : info.dli_sname, info.dli_fname,
	       (void *)key,
	       (void *)q.addr, info.dli_fname, call ? "call" : "key");
}

struct sy_tablist *sy_tablist_add(struct sy_tablist **list, void *start,
				  void *stop, bool *fresh)
{
	struct sy_tablist *t;

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

int sy_tablist_del(struct sy_tablist **list, const void *start)
{
	for (struct sy_tablist **pt = list; *pt; pt = &(*pt)->next) {
		struct sy_tablist *t = *pt;

		if (t->start != start)
			continue;
		*pt = t->next;
		free(t);
		return 0;
	}
	return -ENOENT;
}

void sy_tablist_free_all(struct sy_tablist **list)
{
	while (*list) {
		struct sy_tablist *t = *list;

		*list = t->next;
		free(t);
	}
}
