/* daemon/audit.c - the dependency audit: group a run's accesses by owning package, write the records. */
#include "registry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sandtrace/common.h>

struct st__audit_item {
	char *path;
	size_t len;
	int32_t pid, err;
	uint8_t kind;
	bool denied;
};

/* Per-package use (hung on st__pkg.audit while emitting). */
struct use {
	uint64_t files, hidden;
	size_t sample; /* item index of the first path */
	int32_t first_pid;
	json_t *paths; /* undeclared packages: every path */
};

/* A set of paths (dedupe across kinds). */
struct pathset {
	UT_hash_handle hh;
	const char *path;
	size_t len;
	bool written;
};

int st__audit_note(struct st__audit *a, unsigned kind, const char *path, size_t len, int32_t pid,
		   int32_t err, bool denied)
{
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 1024;
		struct st__audit_item *ni = reallocarray(a->items, nc, sizeof(*ni));
		if (ni == NULL)
			return -ENOMEM;
		a->items = ni;
		a->cap = nc;
	}
	struct st__audit_item *it = &a->items[a->n];
	it->path = malloc(len + 1);
	if (it->path == NULL)
		return -ENOMEM;
	memcpy(it->path, path, len);
	it->path[len] = '\0';
	it->len = len;
	it->pid = pid;
	it->err = err;
	it->kind = (uint8_t)kind;
	it->denied = denied;
	a->n++;
	return 0;
}

void st__audit_free(struct st__audit *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->items[i].path);
	free(a->items);
	memset(a, 0, sizeof(*a));
}

static bool under(const char *p, size_t n, const char *prefix)
{
	size_t k = prefix ? strlen(prefix) : 0;
	while (k > 1 && prefix[k - 1] == '/')
		k--;
	/* "/" is no tree to leave out: a run started at the root (a service's
	 * working directory) or a TMPDIR of "/" reported no unowned file at all */
	if (k == 0 || (k == 1 && prefix[0] == '/'))
		return false;
	return n >= k && memcmp(p, prefix, k) == 0 && (n == k || p[k] == '/');
}

static bool is_use(const struct st__audit_item *it)
{
	if (it->denied)
		return true;
	if (it->err != 0)
		return false;
	return it->kind == SANDTRACE_KIND_READ || it->kind == SANDTRACE_KIND_EXEC ||
	       it->kind == SANDTRACE_KIND_QUERY || it->kind == SANDTRACE_KIND_DIR;
}

static const char *decl_name(unsigned d)
{
	switch (d) {
	case ST_DECL_DIRECT:
		return "direct";
	case ST_DECL_CLOSURE:
		return "closure";
	case ST_DECL_IMPLICIT:
		return "implicit";
	}
	return NULL;
}

static int cmp_pkg(const void *x, const void *y)
{
	const struct st__pkg *a = *(struct st__pkg *const *)x, *b = *(struct st__pkg *const *)y;
	return strcmp(a->name, b->name);
}

static void put(json_t *o, const char *k, json_t *v, bool *ok)
{
	if (v == NULL || json_object_set_new(o, k, v) < 0)
		*ok = false;
}

int st__audit_emit(struct st__audit *a, struct st__registry *r, bool have_deps, const char *cwd,
		   const char *tmpdir, struct st__report *rep)
{
	struct pathset *seen = NULL, *e, *tmp;
	int rc = 0;
	uint64_t nused = 0, nundeclared = 0, nunused = 0, nunowned = 0;
	struct st__pkg **used = NULL;
	size_t nusedp = 0;
	bool ok = true;

	/* What the run wrote is its own output, never an unowned input. */
	for (size_t i = 0; i < a->n; i++) {
		struct st__audit_item *it = &a->items[i];
		HASH_FIND(hh, seen, it->path, it->len, e);
		if (e == NULL) {
			if ((e = calloc(1, sizeof(*e))) == NULL) {
				rc = -ENOMEM;
				goto out;
			}
			e->path = it->path;
			e->len = it->len;
			HASH_ADD_KEYPTR(hh, seen, e->path, e->len, e);
		}
		if (it->kind == SANDTRACE_KIND_WRITE)
			e->written = true;
	}
	used = calloc(r->npackages + 1, sizeof(*used));
	if (used == NULL) {
		rc = -ENOMEM;
		goto out;
	}

	/* Group uses by package, each path once (the first use decides sample and pid). */
	struct pathset *counted = NULL;
	for (size_t i = 0; i < a->n; i++) {
		struct st__audit_item *it = &a->items[i];
		if (!is_use(it))
			continue;
		struct pathset *c;
		HASH_FIND(hh, counted, it->path, it->len, c);
		if (c != NULL)
			continue;
		if ((c = calloc(1, sizeof(*c))) == NULL) {
			rc = -ENOMEM;
			break;
		}
		c->path = it->path;
		c->len = it->len;
		HASH_ADD_KEYPTR(hh, counted, c->path, c->len, c);

		unsigned flags;
		struct st__pkg *p = st__registry_owner(r, it->path, it->len, &flags);
		struct stat st;
		/* a directory is never a package's file (dpkg lists them too: registry.h) */
		if (p != NULL && (it->kind == SANDTRACE_KIND_DIR ||
				  (stat(it->path, &st) == 0 && S_ISDIR(st.st_mode))))
			continue;
		if (p == NULL) {
			HASH_FIND(hh, seen, it->path, it->len, e);
			if ((flags & ST_OWN_DIR) || it->kind == SANDTRACE_KIND_DIR ||
			    (e && e->written) || under(it->path, it->len, cwd) ||
			    under(it->path, it->len, "/proc") || under(it->path, it->len, "/sys") ||
			    under(it->path, it->len, "/dev") || under(it->path, it->len, "/run") ||
			    under(it->path, it->len, "/tmp") || under(it->path, it->len, tmpdir) ||
			    (stat(it->path, &st) == 0 && S_ISDIR(st.st_mode)))
				continue;
			json_t *o = json_object();
			bool k = o != NULL;
			char kl[2] = {it->kind < SANDTRACE_KIND_MAX ? SANDTRACE_KIND_LETTERS[it->kind] : '?', 0};
			if (k) {
				put(o, "type", json_string("unowned"), &k);
				put(o, "path", st__json_bytes(it->path, it->len), &k);
				put(o, "kind", json_string(kl), &k);
				put(o, "pid", json_integer(it->pid), &k);
			}
			if ((rc = st__report_emit(rep, k ? o : (json_decref(o), NULL))) < 0)
				break;
			nunowned++;
			continue;
		}
		struct use *u = p->audit;
		if (u == NULL) {
			if ((u = calloc(1, sizeof(*u))) == NULL) {
				rc = -ENOMEM;
				break;
			}
			p->audit = u;
			u->sample = i;
			u->first_pid = it->pid;
			used[nusedp++] = p;
			if (have_deps && p->declared == ST_DECL_NO && (u->paths = json_array()) == NULL)
				ok = false;
		}
		u->files++;
		if (it->denied)
			u->hidden++;
		if (u->paths && json_array_append_new(u->paths, st__json_bytes(it->path, it->len)) < 0)
			ok = false;
	}
	HASH_ITER(hh, counted, e, tmp)
	{
		HASH_DEL(counted, e);
		free(e);
	}
	if (rc < 0)
		goto out;

	qsort(used, nusedp, sizeof(*used), cmp_pkg);
	for (size_t k = 0; k < nusedp && rc == 0; k++) {
		struct st__pkg *p = used[k];
		struct use *u = p->audit;
		const struct st__audit_item *s = &a->items[u->sample];
		json_t *o = json_object();
		bool k2 = o != NULL;
		if (k2) {
			put(o, "type", json_string("package"), &k2);
			put(o, "package", json_string(p->name), &k2);
			put(o, "used", json_true(), &k2);
			put(o, "files", json_integer((json_int_t)u->files), &k2);
			put(o, "sample", st__json_bytes(s->path, s->len), &k2);
			put(o, "first_pid", json_integer(u->first_pid), &k2);
			put(o, "declared",
			    !have_deps ? json_null()
			    : p->declared ? json_string(decl_name(p->declared))
					  : json_false(),
			    &k2);
			if (u->hidden)
				put(o, "hidden", json_integer((json_int_t)u->hidden), &k2);
			if (u->paths) {
				put(o, "paths", u->paths, &k2);
				u->paths = NULL;
			}
		}
		rc = st__report_emit(rep, k2 ? o : (json_decref(o), NULL));
		nused++;
		if (have_deps && p->declared == ST_DECL_NO)
			nundeclared++;
	}
	if (rc == 0 && have_deps) {
		/* declared, never used: sorted by name too */
		size_t nd = 0;
		struct st__pkg *p, *ptmp;
		struct st__pkg **unused = calloc(r->npackages + 1, sizeof(*unused));
		if (unused == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		HASH_ITER(hh, r->pkgs, p, ptmp)
		if (p->declared != ST_DECL_NO && p->audit == NULL)
			unused[nd++] = p;
		qsort(unused, nd, sizeof(*unused), cmp_pkg);
		for (size_t k = 0; k < nd && rc == 0; k++) {
			p = unused[k];
			json_t *o = json_object();
			bool k2 = o != NULL;
			if (k2) {
				put(o, "type", json_string("package"), &k2);
				put(o, "package", json_string(p->name), &k2);
				put(o, "used", json_false(), &k2);
				put(o, "files", json_integer(0), &k2);
				put(o, "declared", json_string(decl_name(p->declared)), &k2);
				put(o, "installed", json_boolean(p->installed), &k2);
			}
			rc = st__report_emit(rep, k2 ? o : (json_decref(o), NULL));
			nunused++;
		}
		free(unused);
	}
	if (rc == 0) {
		json_t *o = json_object();
		bool k2 = o != NULL;
		if (k2) {
			put(o, "type", json_string("audit"), &k2);
			put(o, "registry", json_string(r->source), &k2);
			put(o, "registry_packages", json_integer((json_int_t)r->npackages), &k2);
			put(o, "registry_files", json_integer((json_int_t)r->nfiles), &k2);
			put(o, "registry_directories", json_integer((json_int_t)r->ndirs), &k2);
			put(o, "load_ms", json_real(r->load_ms), &k2);
			put(o, "load_cpu_ms", json_real(r->load_cpu_ms), &k2);
			put(o, "declarations", json_boolean(have_deps), &k2);
			put(o, "used", json_integer((json_int_t)nused), &k2);
			put(o, "undeclared", have_deps ? json_integer((json_int_t)nundeclared) : json_null(), &k2);
			put(o, "unused", have_deps ? json_integer((json_int_t)nunused) : json_null(), &k2);
			put(o, "unowned", json_integer((json_int_t)nunowned), &k2);
		}
		rc = st__report_emit(rep, k2 ? o : (json_decref(o), NULL));
	}
out:
	for (size_t k = 0; used != NULL && k < nusedp; k++) {
		struct use *u = used[k]->audit;
		if (u != NULL)
			json_decref(u->paths);
		free(u);
		used[k]->audit = NULL;
	}
	free(used);
	HASH_ITER(hh, seen, e, tmp)
	{
		HASH_DEL(seen, e);
		free(e);
	}
	if (rc == 0 && !ok)
		rc = -ENOMEM;
	return rc;
}
