/* daemon/registry.c - path -> package registry from the dpkg database or an owner map (uthash). */
#include <bsd/string.h>
#include <ctype.h>
#include <stdbool.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * uthash would exit() on allocation failure; the daemon must not (it owns
 * the report).  Non-fatal mode leaves the element out and lets us note it.
 */
static _Thread_local bool reg_oom;
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(e) (reg_oom = true)

/*
 * uthash's own allocations (the table header and the bucket arrays): a
 * bucket array of a MiB or more gets its own mapping advised for huge
 * pages (a 2 MiB array is then one page fault, not 512).
 */
#define BIG_ALLOC ((size_t)1 << 20)
static void *reg_malloc(size_t sz)
{
	if (sz < BIG_ALLOC)
		return malloc(sz);
	void *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	madvise(m, sz, MADV_HUGEPAGE);
	return m;
}
static void reg_free(void *p, size_t sz)
{
	if (sz < BIG_ALLOC)
		free(p);
	else if (p != NULL)
		munmap(p, sz);
}
#define uthash_malloc(sz) reg_malloc(sz)
#define uthash_free(ptr, sz) reg_free((ptr), (sz))
#define uthash_bzero(a, n) ((n) >= BIG_ALLOC ? (void)0 : (void)memset((a), 0, (n)))

/*
 * A Bloom filter in front of each table (uthash's own, 2^21 bits = 256 KiB a
 * table): most paths an ask rule judges are a build's own files, owned by no
 * package, and a miss in the file table otherwise walks a whole bucket chain
 * of entries scattered over the pool (one cache miss each).  With the
 * filter, ≈ 94% of such misses read one bit (135,000 files, one bit each).
 * The tables are added to and looked up only in this file (audit.c only
 * iterates them), so every HASH_ADD sets the filter's bit.
 */
#define HASH_BLOOM 21
/* After the uthash configuration above: registry.h includes uthash.h. */
#include "registry.h"


/*
 * A file entry: 72 bytes.  The path is hh.key (hh.keylen bytes, pointing
 * into a pool buffer, not NUL-terminated).
 */
struct st__reg_file {
	UT_hash_handle hh;
	struct st__pkg *pkg;
	uint8_t flags; /* ST_OWN_* */
};

/*
 * Another owner of a file that more than one package lists (ST_OWN_SHARED):
 * keyed by the file's entry, a list of the owners after the first (f->pkg),
 * in the order they were listed.  Entries live in the pool; only the hash's
 * tables are malloc'ed (HASH_CLEAR).
 */
struct st__reg_more {
	UT_hash_handle hh;
	const struct st__reg_file *file; /* the key */
	struct st__pkg *pkg;
	struct st__reg_more *next; /* the file's next owner after this one */
};

/* A virtual package and its providers. */
struct st__reg_provider {
	UT_hash_handle hh;
	char *name;
	struct st__pkg **pkgs;
	size_t n, cap;
};

/*
 * Bump allocator for entries, rewritten paths and the file buffers the keys
 * point into.  Page faults, not hashing, dominate a cold load on these VMs
 * (≈ 6k faults for 150k files at several µs each): chunks are large
 * anonymous mappings advised for transparent huge pages, so a load takes a
 * few dozen faults.
 */
struct st__reg_pool {
	struct st__reg_pool *next;
	size_t used, cap; /* cap: usable bytes after the header */
	size_t maplen;
	_Alignas(16) unsigned char mem[];
};

#define POOL_CHUNK ((size_t)32 << 20)

static void *pool_alloc(struct st__registry *r, size_t n)
{
	n = (n + 7u) & ~(size_t)7u;
	struct st__reg_pool *p = r->pool;
	if (p == NULL || p->cap - p->used < n) {
		size_t maplen = n + sizeof(*p) > POOL_CHUNK ? n + sizeof(*p) : POOL_CHUNK;
		void *m = mmap(NULL, maplen, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		madvise(m, maplen, MADV_HUGEPAGE); /* advice only: an error changes nothing */
		p = m;
		p->next = r->pool;
		p->used = 0;
		p->cap = maplen - sizeof(*p);
		p->maplen = maplen;
		r->pool = p;
	}
	void *m = p->mem + p->used;
	p->used += n;
	return m;
}

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- merged /usr ---- */

static const char *const alias_dirs[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
#define NALIASES (sizeof(alias_dirs) / sizeof(alias_dirs[0]))

void st__registry_init(struct st__registry *r, unsigned options)
{
	memset(r, 0, sizeof(*r));
	if (options & ST_REG_USRMERGE) {
		r->aliases = (1u << NALIASES) - 1;
	} else if (options & ST_REG_DETECT_USRMERGE) {
		for (size_t i = 0; i < NALIASES; i++) {
			char want[32], got[PATH_MAX];
			snprintf(want, sizeof(want), "/usr%s", alias_dirs[i]);
			struct stat st;
			if (lstat(alias_dirs[i], &st) == 0 && S_ISLNK(st.st_mode) &&
			    realpath(alias_dirs[i], got) != NULL && strcmp(got, want) == 0)
				r->aliases |= 1u << i;
		}
	}
}

/* Index of the active alias covering path (component-bounded), or -1. */
static int alias_of(const struct st__registry *r, const char *path, size_t len)
{
	if (r->aliases == 0 || len < 4 || path[0] != '/' || (path[1] != 'b' && path[1] != 's' &&
							       path[1] != 'l'))
		return -1;
	for (size_t i = 0; i < NALIASES; i++) {
		size_t n = strlen(alias_dirs[i]);
		if ((r->aliases & (1u << i)) && len >= n && memcmp(path, alias_dirs[i], n) == 0 &&
		    (len == n || path[n] == '/'))
			return (int)i;
	}
	return -1;
}

/* ---- tables ---- */

static struct st__pkg *pkg_get(struct st__registry *r, const char *name, size_t len, bool create)
{
	struct st__pkg *p;
	HASH_FIND(hh, r->pkgs, name, len, p);
	if (p != NULL || !create)
		return p;
	p = calloc(1, sizeof(*p));
	if (p == NULL || (p->name = strndup(name, len)) == NULL) {
		free(p);
		r->oom = true;
		return NULL;
	}
	reg_oom = false;
	HASH_ADD_KEYPTR(hh, r->pkgs, p->name, len, p);
	if (reg_oom) {
		free(p->name);
		free(p);
		r->oom = true;
		return NULL;
	}
	r->npackages++;
	return p;
}

struct st__pkg *st__registry_pkg(const struct st__registry *r, const char *name)
{
	struct st__pkg *p;
	HASH_FIND(hh, r->pkgs, name, strlen(name), p);
	return p;
}

static int add_provider(struct st__registry *r, const char *name, size_t len, struct st__pkg *p)
{
	struct st__reg_provider *v;
	HASH_FIND(hh, r->provides, name, len, v);
	if (v == NULL) {
		v = calloc(1, sizeof(*v));
		if (v == NULL || (v->name = strndup(name, len)) == NULL) {
			free(v);
			return -ENOMEM;
		}
		reg_oom = false;
		HASH_ADD_KEYPTR(hh, r->provides, v->name, len, v);
		if (reg_oom) {
			free(v->name);
			free(v);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < v->n; i++)
		if (v->pkgs[i] == p)
			return 0;
	if (v->n == v->cap) {
		size_t nc = v->cap ? v->cap * 2 : 2;
		struct st__pkg **np = reallocarray(v->pkgs, nc, sizeof(*np));
		if (np == NULL)
			return -ENOMEM;
		v->pkgs = np;
		v->cap = nc;
	}
	v->pkgs[v->n++] = p;
	return 0;
}

/* The providers of a virtual name (array, count in *n), or NULL. */
static struct st__pkg **providers(const struct st__registry *r, const char *name, size_t *n)
{
	struct st__reg_provider *v;
	HASH_FIND(hh, r->provides, name, strlen(name), v);
	*n = v ? v->n : 0;
	return v ? v->pkgs : NULL;
}

/*
 * Add one path for pkg (NULL: none).  The path bytes must stay valid (a kept
 * buffer or the pool).  Returns 0 or -ENOMEM.
 */
static int add_file(struct st__registry *r, const char *path, size_t len, struct st__pkg *pkg,
		    bool dir)
{
	unsigned hv;
	struct st__reg_file *f;
	HASH_VALUE(path, len, hv);
	HASH_FIND_BYHASHVALUE(hh, r->files, path, len, hv, f);
	if (f != NULL) {
		if (dir && !(f->flags & ST_OWN_DIR)) {
			f->flags |= ST_OWN_DIR;
			if (f->pkg)
				f->pkg->nfiles--;
			r->ndirs++;
			r->nfiles--;
		} else if (!dir && !(f->flags & ST_OWN_DIR) && f->pkg != pkg && pkg != NULL) {
			/* another owner: kept (a declared one must answer for the file) */
			struct st__reg_more *m, *head;
			HASH_FIND(hh, r->more, &f, sizeof(f), head);
			for (m = head; m != NULL; m = m->next)
				if (m->pkg == pkg)
					return 0;
			if ((m = pool_alloc(r, sizeof(*m))) == NULL)
				return -ENOMEM;
			memset(m, 0, sizeof(*m));
			m->file = f;
			m->pkg = pkg;
			if (head != NULL) { /* appended: the order listed */
				while (head->next != NULL)
					head = head->next;
				head->next = m;
			} else {
				reg_oom = false;
				HASH_ADD(hh, r->more, file, sizeof(m->file), m);
				if (reg_oom)
					return -ENOMEM;
			}
			if (!(f->flags & ST_OWN_SHARED)) {
				f->flags |= ST_OWN_SHARED;
				r->nshared++;
			}
		}
		return 0;
	}
	f = pool_alloc(r, sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	memset(f, 0, sizeof(*f));
	f->pkg = pkg;
	f->flags = dir ? ST_OWN_DIR : 0;
	reg_oom = false;
	HASH_ADD_KEYPTR_BYHASHVALUE(hh, r->files, path, len, hv, f);
	if (reg_oom)
		return -ENOMEM;
	if (dir) {
		r->ndirs++;
	} else {
		r->nfiles++;
		if (pkg)
			pkg->nfiles++;
	}
	return 0;
}

/*
 * uthash starts with 32 buckets and doubles (rehashing every entry) as
 * chains grow: for ~150k files that is 12 rounds over a table that no
 * longer fits in cache.  Start the files table at 2^17 buckets instead
 * (2 MiB, one huge page: see uthash_malloc).  The table is made by adding a sentinel entry, which stays: its
 * key starts with a NUL byte, so no absolute path can match it (deleting
 * the last entry would free the table again).
 */
#define FILES_BUCKETS_LOG2 17
static void presize_files(struct st__registry *r)
{
	static const char sentinel[] = "\0sentinel";
	if (r->files != NULL)
		return;
	struct st__reg_file *f = pool_alloc(r, sizeof(*f));
	if (f == NULL)
		return;
	memset(f, 0, sizeof(*f));
	reg_oom = false;
	HASH_ADD_KEYPTR(hh, r->files, sentinel, sizeof(sentinel) - 1, f);
	if (reg_oom || r->files == NULL)
		return;
	int oomed = 0;
	while (r->files->hh.tbl->log2_num_buckets < FILES_BUCKETS_LOG2) {
		HASH_EXPAND_BUCKETS(&r->files->hh, r->files->hh.tbl, oomed);
		if (oomed)
			break;
	}
}

struct st__pkg *st__registry_owner(const struct st__registry *r, const char *path, size_t len,
				   unsigned *flags)
{
	struct st__reg_file *f;
	char buf[PATH_MAX + 8];
	int al = alias_of(r, path, len);
	if (al >= 0 && len + 4 < sizeof(buf)) {
		memcpy(buf, "/usr", 4);
		memcpy(buf + 4, path, len);
		path = buf;
		len += 4;
	}
	HASH_FIND(hh, r->files, path, len, f);
	if (flags)
		*flags = f ? f->flags : 0;
	if (f == NULL || (f->flags & ST_OWN_DIR))
		return NULL;
	if (!(f->flags & ST_OWN_SHARED))
		return f->pkg;
	/* several owners: the one declared most strongly (DIRECT < CLOSURE < IMPLICIT) */
	struct st__pkg *best = f->pkg;
	struct st__reg_more *m;
	HASH_FIND(hh, r->more, &f, sizeof(f), m);
	for (; m != NULL; m = m->next) {
		unsigned bd = best ? best->declared : ST_DECL_NO, md = m->pkg->declared;
		if (md != ST_DECL_NO && (bd == ST_DECL_NO || md < bd))
			best = m->pkg;
	}
	return best;
}

/* ---- reading files ---- */

/*
 * Read a whole file into the pool (NUL-terminated; keys may point into it).
 * A file that grows while being read is cut at the size fstat gave.
 * Returns 0 or -errno.
 */
static int slurp_keep(struct st__registry *r, int dirfd, const char *name, char **out,
		      size_t *outlen)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	size_t cap = (size_t)st.st_size, len = 0;
	char *buf = pool_alloc(r, cap + 1);
	if (buf == NULL) {
		close(fd);
		return -ENOMEM;
	}
	while (len < cap) {
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = -errno;
			close(fd);
			return e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
}

/* ---- status ---- */

static bool state_present(const char *v, size_t n)
{
	/* "want flag state": the third word */
	const char *sp = memrchr(v, ' ', n);
	const char *w = sp ? sp + 1 : v;
	size_t wl = (size_t)(v + n - w);
	static const char *const ok[] = {"installed",	     "unpacked",	"half-configured",
					 "half-installed",   "triggers-awaited", "triggers-pending"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (wl == strlen(ok[i]) && memcmp(w, ok[i], wl) == 0)
			return true;
	return false;
}

static bool field_is(const char *line, size_t n, const char *name)
{
	size_t k = strlen(name);
	return n > k && line[k] == ':' && strncasecmp(line, name, k) == 0;
}

/* The value of a "Name: value" line (leading/trailing blanks trimmed). */
static void field_value(const char *line, size_t n, const char **v, size_t *vn)
{
	const char *c = memchr(line, ':', n);
	const char *s = c + 1, *e = line + n;
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	*v = s;
	*vn = (size_t)(e - s);
}

/* One stanza's fields of interest. */
struct stanza {
	const char *name, *status, *essential, *depends, *predepends, *provides;
	size_t name_n, status_n, essential_n, depends_n, predepends_n, provides_n;
};

static int add_provides(struct st__registry *r, struct st__pkg *p, const char *v, size_t n)
{
	/* "a, b (= 1.0), c:any" */
	size_t i = 0;
	while (i < n) {
		while (i < n && (v[i] == ' ' || v[i] == ',' || v[i] == '\t'))
			i++;
		size_t s = i;
		while (i < n && v[i] != ' ' && v[i] != ',' && v[i] != '(' && v[i] != ':' &&
		       v[i] != '\t')
			i++;
		if (i > s && add_provider(r, v + s, i - s, p) < 0)
			return -ENOMEM;
		while (i < n && v[i] != ',')
			i++;
	}
	return 0;
}

static int commit_stanza(struct st__registry *r, const struct stanza *s)
{
	if (s->name == NULL)
		return 0;
	bool present = s->status && state_present(s->status, s->status_n);
	struct st__pkg *p = pkg_get(r, s->name, s->name_n, true);
	if (p == NULL)
		return -ENOMEM;
	/* Several stanzas per name (one per architecture): the installed one decides. */
	if (p->in_status && p->installed && !present)
		return 0;
	p->in_status = true;
	p->installed = present;
	p->essential = s->essential && s->essential_n == 3 && strncasecmp(s->essential, "yes", 3) == 0;
	free(p->depends);
	free(p->predepends);
	p->depends = s->depends ? strndup(s->depends, s->depends_n) : NULL;
	p->predepends = s->predepends ? strndup(s->predepends, s->predepends_n) : NULL;
	if ((s->depends && !p->depends) || (s->predepends && !p->predepends))
		return -ENOMEM;
	if (present && s->provides && add_provides(r, p, s->provides, s->provides_n) < 0)
		return -ENOMEM;
	return 0;
}

int st__registry_load_status(struct st__registry *r, const char *admindir, bool missing_ok,
			     char *err, size_t errlen)
{
	double t0 = now_ms(), c0 = cpu_ms();
	int dfd = open(admindir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		int e = -errno;
		if (missing_ok && e == -ENOENT)
			return 0;
		seterr(err, errlen, "%s: %s", admindir, strerror(-e));
		return e;
	}
	char *buf;
	size_t len;
	int rc = slurp_keep(r, dfd, "status", &buf, &len);
	close(dfd);
	if (rc < 0) {
		if (missing_ok && rc == -ENOENT)
			return 0;
		seterr(err, errlen, "%s/status: %s", admindir, strerror(-rc));
		return rc;
	}
	struct stanza s = {0};
	for (size_t i = 0; i <= len;) {
		const char *line = buf + i;
		const char *nl = memchr(line, '\n', len - i);
		size_t n = nl ? (size_t)(nl - line) : len - i;
		i += n + 1;
		if (n > 0 && line[n - 1] == '\r')
			n--;
		if (n == 0) {
			if ((rc = commit_stanza(r, &s)) < 0)
				goto oom;
			memset(&s, 0, sizeof(s));
			if (nl == NULL)
				break;
			continue;
		}
		if (line[0] == ' ' || line[0] == '\t' || line[0] == '#')
			continue; /* continuation (Description, Conffiles) or comment */
#define TAKE(fname, member)                                                                        \
	if (field_is(line, n, fname)) {                                                            \
		field_value(line, n, &s.member, &s.member##_n);                                    \
		continue;                                                                          \
	}
		TAKE("Package", name)
		TAKE("Status", status)
		TAKE("Essential", essential)
		TAKE("Depends", depends)
		TAKE("Pre-Depends", predepends)
		TAKE("Provides", provides)
#undef TAKE
		if (nl == NULL)
			break;
	}
	if ((rc = commit_stanza(r, &s)) < 0)
		goto oom;
	r->load_ms += now_ms() - t0;
	r->load_cpu_ms += cpu_ms() - c0;
	return 0;
oom:
	seterr(err, errlen, "%s/status: out of memory", admindir);
	return -ENOMEM;
}

/* ---- diversions ---- */

struct diversion {
	UT_hash_handle hh;
	char *from, *by; /* by: package name, or NULL for a local diversion (":") */
	char *to;	  /* in the registry's pool: file entries point at it */
	size_t to_len;
};

static void diversions_free(struct diversion **h)
{
	struct diversion *d, *tmp;
	HASH_ITER(hh, *h, d, tmp)
	{
		HASH_DEL(*h, d);
		free(d->from);
		free(d->by);
		free(d);
	}
}

/* Rewrite an aliased path into the pool ("/bin/x" -> "/usr/bin/x"); NULL on ENOMEM. */
static const char *canon_path(struct st__registry *r, const char *p, size_t n, size_t *outn)
{
	if (alias_of(r, p, n) < 0) {
		*outn = n;
		return p;
	}
	char *c = pool_alloc(r, n + 5);
	if (c == NULL)
		return NULL;
	memcpy(c, "/usr", 4);
	memcpy(c + 4, p, n);
	c[n + 4] = '\0';
	*outn = n + 4;
	return c;
}

static int load_diversions(struct st__registry *r, int dfd, const char *admindir,
			   struct diversion **h, char *err, size_t errlen)
{
	int fd = openat(dfd, "diversions", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		seterr(err, errlen, "%s/diversions: %s", admindir, strerror(errno));
		return -errno;
	}
	FILE *f = fdopen(fd, "re");
	if (f == NULL) {
		close(fd);
		return -ENOMEM;
	}
	char *lines[3] = {NULL, NULL, NULL};
	size_t caps[3] = {0, 0, 0};
	unsigned long lineno = 0;
	int rc = 0;
	for (;;) {
		ssize_t n[3];
		int got = 0;
		for (; got < 3; got++) {
			n[got] = getline(&lines[got], &caps[got], f);
			if (n[got] < 0)
				break;
			lineno++;
			while (n[got] > 0 && (lines[got][n[got] - 1] == '\n' ||
					      lines[got][n[got] - 1] == '\r'))
				lines[got][--n[got]] = '\0';
		}
		if (got == 0)
			break;
		if (got < 3) {
			seterr(err, errlen, "%s/diversions:%lu: a diversion needs 3 lines (from, to, package)",
			       admindir, lineno);
			rc = -EINVAL;
			break;
		}
		if (lines[0][0] != '/' || lines[1][0] != '/' || lines[2][0] == '\0') {
			seterr(err, errlen, "%s/diversions:%lu: malformed diversion", admindir,
			       lineno - 2);
			rc = -EINVAL;
			break;
		}
		struct diversion *d = calloc(1, sizeof(*d));
		size_t fn, tn;
		const char *from = canon_path(r, lines[0], (size_t)n[0], &fn);
		const char *to = canon_path(r, lines[1], (size_t)n[1], &tn);
		if (d == NULL || from == NULL || to == NULL) {
			free(d);
			rc = -ENOMEM;
			break;
		}
		d->from = strndup(from, fn);
		d->to = pool_alloc(r, tn + 1);
		if (d->to != NULL) {
			memcpy(d->to, to, tn);
			d->to[tn] = '\0';
			d->to_len = tn;
		}
		d->by = strcmp(lines[2], ":") == 0 ? NULL : strdup(lines[2]);
		if (d->from == NULL || d->to == NULL || (strcmp(lines[2], ":") != 0 && !d->by)) {
			free(d->from);
			free(d->by);
			free(d);
			rc = -ENOMEM;
			break;
		}
		struct diversion *old;
		HASH_FIND(hh, *h, d->from, fn, old);
		if (old != NULL) {
			HASH_DEL(*h, old);
			free(old->from);
			free(old->by);
			free(old);
		}
		HASH_ADD_KEYPTR(hh, *h, d->from, fn, d);
	}
	if (rc == 0 && ferror(f)) {
		/* getline's error ended the loop as its end of file does: a
		 * diversions that is a directory was a file of none */
		rc = -(errno != 0 ? errno : EIO);
		seterr(err, errlen, "%s/diversions: %s", admindir, strerror(-rc));
	}
	for (int i = 0; i < 3; i++)
		free(lines[i]);
	fclose(f);
	if (rc == -ENOMEM)
		seterr(err, errlen, "%s/diversions: out of memory", admindir);
	return rc;
}

/* ---- info/\*.list ---- */

/* Load one .list buffer for pkg. */
static int load_list(struct st__registry *r, struct st__pkg *pkg, char *buf, size_t len,
		     struct diversion *div)
{
	size_t i = 0;
	while (i < len) {
		char *line = buf + i;
		char *nl = memchr(line, '\n', len - i);
		size_t n = nl ? (size_t)(nl - line) : len - i;
		size_t next = i + n + 1;
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		if (nl)
			*nl = '\0';
		/* A directory is followed by its contents: the next line starts with "line/". */
		const char *nx = buf + next;
		bool dir = next < len && len - next > n && memcmp(nx, line, n) == 0 && nx[n] == '/';
		i = next;
		if (n == 0 || line[0] != '/' || (n == 2 && line[1] == '.'))
			continue;
		size_t cn;
		const char *p = canon_path(r, line, n, &cn);
		if (p == NULL)
			return -ENOMEM;
		if (div != NULL && !dir) {
			struct diversion *d;
			HASH_FIND(hh, div, p, cn, d);
			if (d != NULL && (d->by == NULL || strcmp(d->by, pkg->name) != 0)) {
				/* Another package's file lives under the diverted name. */
				p = d->to;
				cn = d->to_len;
				r->ndiverted++;
			}
		}
		if (add_file(r, p, cn, pkg, dir) < 0)
			return -ENOMEM;
	}
	return 0;
}

int st__registry_load_dpkg(struct st__registry *r, const char *admindir, char *err,
			   size_t errlen)
{
	double t0 = now_ms(), c0 = cpu_ms();
	double before = r->load_ms, cbefore = r->load_cpu_ms;
	int rc = st__registry_load_status(r, admindir, false, err, errlen);
	if (rc < 0)
		return rc;
	int dfd = open(admindir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		rc = -errno;
		seterr(err, errlen, "%s: %s", admindir, strerror(errno));
		return rc;
	}
	struct diversion *div = NULL;
	rc = load_diversions(r, dfd, admindir, &div, err, errlen);
	if (rc < 0) {
		close(dfd);
		diversions_free(&div);
		return rc;
	}
	int ifd = openat(dfd, "info", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(dfd);
	DIR *dp = ifd >= 0 ? fdopendir(ifd) : NULL;
	if (dp == NULL) {
		rc = -errno;
		seterr(err, errlen, "%s/info: %s", admindir, strerror(errno));
		if (ifd >= 0)
			close(ifd);
		diversions_free(&div);
		return rc;
	}
	presize_files(r);
	struct dirent *e;
	while ((e = readdir(dp)) != NULL) {
		size_t n = strlen(e->d_name);
		if (n <= 5 || strcmp(e->d_name + n - 5, ".list") != 0)
			continue;
		/* "name:arch.list" or "name.list" */
		size_t namelen = n - 5;
		const char *colon = memchr(e->d_name, ':', namelen);
		if (colon)
			namelen = (size_t)(colon - e->d_name);
		struct st__pkg *pkg = pkg_get(r, e->d_name, namelen, true);
		char *buf;
		size_t len;
		if (pkg == NULL) {
			rc = -ENOMEM;
		} else if ((rc = slurp_keep(r, dirfd(dp), e->d_name, &buf, &len)) < 0) {
			seterr(err, errlen, "%s/info/%s: %s", admindir, e->d_name, strerror(-rc));
			break;
		} else {
			if (!pkg->in_status)
				pkg->installed = true; /* files on disk: present */
			rc = load_list(r, pkg, buf, len, div);
			r->nlists++;
		}
		if (rc == -ENOMEM) {
			seterr(err, errlen, "%s/info/%s: out of memory", admindir, e->d_name);
			break;
		}
	}
	closedir(dp);
	/* FROM itself belongs to the diverting package (when it ships it, it is listed already). */
	diversions_free(&div);
	if (rc == 0 && r->oom) {
		seterr(err, errlen, "%s: out of memory", admindir);
		rc = -ENOMEM;
	}
	snprintf(r->source, sizeof(r->source), "dpkg %s", admindir);
	r->load_ms = before + (now_ms() - t0);
	r->load_cpu_ms = cbefore + (cpu_ms() - c0);
	return rc;
}

/* ---- owner map ---- */

/* Whether path[0..n) (absolute) has no empty, "." or ".." component and no trailing '/'. */
static bool folded(const char *path, size_t n)
{
	if (n > 1 && path[n - 1] == '/')
		return false;
	for (size_t i = 1, start = 1; i <= n; i++) {
		if (i < n && path[i] != '/')
			continue;
		size_t cl = i - start;
		if (n > 1 && (cl == 0 || (cl == 1 && path[start] == '.') ||
			      (cl == 2 && path[start] == '.' && path[start + 1] == '.')))
			return false;
		start = i + 1;
	}
	return true;
}

int st__registry_load_owners(struct st__registry *r, const char *file, char *err, size_t errlen)
{
	double t0 = now_ms(), c0 = cpu_ms();
	char *buf;
	size_t len;
	int rc = slurp_keep(r, AT_FDCWD, file, &buf, &len);
	if (rc < 0) {
		seterr(err, errlen, "%s: %s", file, strerror(-rc));
		return rc;
	}
	unsigned long lineno = 0;
	for (size_t i = 0; i < len;) {
		char *line = buf + i;
		char *nl = memchr(line, '\n', len - i);
		size_t n = nl ? (size_t)(nl - line) : len - i;
		i += n + 1;
		lineno++;
		if (nl)
			*nl = '\0';
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		size_t b = 0;
		while (b < n && (line[b] == ' ' || line[b] == '\t'))
			b++;
		if (b == n || line[b] == '#')
			continue;
		if (memchr(line, '\0', n) != NULL) {
			/* the path (or the name) would end there: a key no lookup meets */
			seterr(err, errlen, "%s:%lu: NUL byte in the line", file, lineno);
			return -EINVAL;
		}
		char *tab = memchr(line, '\t', n);
		if (tab == NULL) {
			seterr(err, errlen, "%s:%lu: expected PATH<TAB>PACKAGE", file, lineno);
			return -EINVAL;
		}
		size_t pn = (size_t)(tab - line);
		const char *pkgname = tab + 1;
		size_t kn = n - pn - 1;
		if (pn == 0 || line[0] != '/') {
			seterr(err, errlen, "%s:%lu: the path must be absolute", file, lineno);
			return -EINVAL;
		}
		if (kn == 0) {
			seterr(err, errlen, "%s:%lu: empty package name", file, lineno);
			return -EINVAL;
		}
		for (size_t k = 0; k < kn; k++) {
			if (isspace((unsigned char)pkgname[k])) {
				seterr(err, errlen,
				       "%s:%lu: the package name holds a blank (one PATH<TAB>PACKAGE a line)",
				       file, lineno);
				return -EINVAL;
			}
		}
		/* A trailing '/' marks a directory (never owned). */
		bool dir = pn > 1 && line[pn - 1] == '/';
		if (dir)
			pn--;
		if (pn == 2 && line[1] == '.')
			continue; /* "/.", the root as dpkg's lists spell it: a directory */
		if (!folded(line, pn)) {
			/* looked up by the report's paths, which are folded: it would never match */
			seterr(err, errlen,
			       "%s:%lu: the path is not folded (\"//\", \".\" or \"..\" in it): "
			       "write it as the report would",
			       file, lineno);
			return -EINVAL;
		}
		struct st__pkg *pkg = pkg_get(r, pkgname, kn, true);
		size_t cn;
		const char *p = pkg ? canon_path(r, line, pn, &cn) : NULL;
		if (p == NULL || add_file(r, p, cn, pkg, dir) < 0) {
			seterr(err, errlen, "%s:%lu: out of memory", file, lineno);
			return -ENOMEM;
		}
		if (!pkg->in_status)
			pkg->installed = true;
	}
	snprintf(r->source, sizeof(r->source), "owners %s", file);
	r->load_ms += now_ms() - t0;
	r->load_cpu_ms += cpu_ms() - c0;
	return 0;
}

void st__registry_free(struct st__registry *r)
{
	HASH_CLEAR(hh, r->files);
	HASH_CLEAR(hh, r->more); /* its entries are the pool's */
	struct st__pkg *p, *ptmp;
	HASH_ITER(hh, r->pkgs, p, ptmp)
	{
		HASH_DEL(r->pkgs, p);
		free(p->name);
		free(p->depends);
		free(p->predepends);
		free(p);
	}
	struct st__reg_provider *v, *vtmp;
	HASH_ITER(hh, r->provides, v, vtmp)
	{
		HASH_DEL(r->provides, v);
		free(v->name);
		free(v->pkgs);
		free(v);
	}
	while (r->pool) {
		struct st__reg_pool *n = r->pool->next;
		munmap(r->pool, r->pool->maplen);
		r->pool = n;
	}
	memset(r, 0, sizeof(*r));
}

/* ---- declared dependencies ---- */

/* The machine's architecture for dependency evaluation (dpkg's name). */
#define ST_ARCH "amd64"

/* Worklist of packages whose Depends are still to be expanded. */
struct worklist {
	struct st__pkg **v;
	size_t n, cap;
};

static int declare_one(struct worklist *w, struct st__pkg *p, uint8_t how)
{
	if (p->declared != ST_DECL_NO)
		return 0;
	p->declared = how;
	if (!p->installed)
		return 0;
	if (w->n == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 64;
		struct st__pkg **nv = reallocarray(w->v, nc, sizeof(*nv));
		if (nv == NULL)
			return -ENOMEM;
		w->v = nv;
		w->cap = nc;
	}
	w->v[w->n++] = p;
	return 0;
}

/*
 * Resolve one group: the first alternative that is installed, as a real
 * package or through Provides (all installed providers of that name).
 * Returns 1 when one was declared, 0 when none is installed, -ENOMEM.
 */
static int declare_group(struct st__registry *r, struct worklist *w,
			 const struct st__dep_group *g, uint8_t how)
{
	for (size_t a = 0; a < g->nalts; a++) {
		struct st__pkg *p = st__registry_pkg(r, g->alts[a]);
		if (p != NULL && p->installed)
			return declare_one(w, p, how) < 0 ? -ENOMEM : 1;
		size_t n;
		struct st__pkg **pv = providers(r, g->alts[a], &n);
		int found = 0;
		for (size_t i = 0; i < n; i++) {
			if (!pv[i]->installed)
				continue;
			if (declare_one(w, pv[i], how) < 0)
				return -ENOMEM;
			found = 1;
		}
		if (found)
			return 1;
	}
	return 0;
}

/* Expand the worklist's Depends/Pre-Depends closure with reason how. */
static int expand(struct st__registry *r, struct worklist *w, uint8_t how)
{
	while (w->n > 0) {
		struct st__pkg *p = w->v[--w->n];
		const char *fields[2] = {p->predepends, p->depends};
		for (int f = 0; f < 2; f++) {
			if (fields[f] == NULL)
				continue;
			struct st__deplist l = {0};
			char err[256];
			/* status fields are well-formed; a bad one is skipped, not fatal */
			int rc = st__deps_parse(fields[f], strlen(fields[f]), ST_ARCH, p->name, 0, &l,
						err, sizeof(err));
			if (rc == -ENOMEM) {
				st__deplist_free(&l);
				return rc;
			}
			for (size_t g = 0; g < l.ngroups; g++) {
				if (declare_group(r, w, &l.groups[g], how) < 0) {
					st__deplist_free(&l);
					return -ENOMEM;
				}
			}
			st__deplist_free(&l);
		}
	}
	return 0;
}

int st__registry_declare(struct st__registry *r, const struct st__deplist *deps, bool implicit,
			 size_t *ndirect, size_t *ntotal)
{
	struct worklist w = {0};
	int rc = 0;
	size_t direct = 0;
	for (size_t g = 0; deps != NULL && g < deps->ngroups && rc == 0; g++) {
		rc = declare_group(r, &w, &deps->groups[g], ST_DECL_DIRECT);
		if (rc == 0 && deps->groups[g].nalts > 0) {
			/* nothing installed satisfies it: declare the first name anyway */
			struct st__pkg *p = pkg_get(r, deps->groups[g].alts[0],
						    strlen(deps->groups[g].alts[0]), true);
			if (p == NULL) {
				rc = -ENOMEM;
				break;
			}
			p->want_missing = !p->installed;
			rc = declare_one(&w, p, ST_DECL_DIRECT);
		}
		rc = rc < 0 ? rc : 0;
	}
	struct st__pkg *p, *tmp;
	HASH_ITER(hh, r->pkgs, p, tmp)
	if (p->declared == ST_DECL_DIRECT)
		direct++;
	if (rc == 0)
		rc = expand(r, &w, ST_DECL_CLOSURE);
	if (rc == 0 && implicit) {
		struct st__pkg *be = st__registry_pkg(r, "build-essential");
		struct st__deplist l = {0};
		char err[256];
		const char *fallback = "libc6-dev | libc-dev, gcc, g++, make, dpkg-dev";
		if (be != NULL && be->installed) {
			rc = declare_one(&w, be, ST_DECL_IMPLICIT);
		} else {
			rc = st__deps_parse(fallback, strlen(fallback), ST_ARCH, "build-essential", 0,
					    &l, err, sizeof(err));
			for (size_t g = 0; rc == 0 && g < l.ngroups; g++)
				rc = declare_group(r, &w, &l.groups[g], ST_DECL_IMPLICIT) < 0 ? -ENOMEM
												: 0;
			st__deplist_free(&l);
		}
		HASH_ITER(hh, r->pkgs, p, tmp)
		{
			if (rc == 0 && p->essential && p->installed)
				rc = declare_one(&w, p, ST_DECL_IMPLICIT);
		}
		if (rc == 0)
			rc = expand(r, &w, ST_DECL_IMPLICIT);
	}
	free(w.v);
	if (ndirect)
		*ndirect = direct;
	if (ntotal) {
		size_t t = 0;
		HASH_ITER(hh, r->pkgs, p, tmp)
		if (p->declared != ST_DECL_NO)
			t++;
		*ntotal = t;
	}
	return rc;
}
