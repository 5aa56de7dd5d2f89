/* daemon/registry.h - the package registry (which package owns a path), declared build
 * dependencies, and the dependency audit built on both. */
#ifndef ST_REGISTRY_H
#define ST_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uthash.h>

#include "report.h"

/*
 * A registry answers "which package owns this path?" in O(1) (one hash
 * lookup) and knows the packages' dependency fields.  Two sources of files:
 *
 *   dpkg        ADMINDIR/info/<pkg>[:<arch>].list (one path a line), with
 *               ADMINDIR/diversions (triples FROM, TO, BY-PACKAGE or ":" for
 *               a local diversion) applied: the file that package P (P != BY)
 *               lists as FROM is owned by P at TO; FROM itself is BY's.
 *   owner map   a file of lines "PATH<TAB>PACKAGE" (so other package managers
 *               can export one); '#' comments and blank lines are allowed.
 *
 * Package records (names, Essential, Provides, Depends, Pre-Depends, the
 * installed state) come from ADMINDIR/status in both cases, when it exists.
 *
 * Paths are stored canonical for a merged-/usr system: /bin, /sbin, /lib,
 * /lib32, /lib64 and /libx32 are rewritten to /usr/... when the alias is
 * active (ST_REG_USRMERGE, or detected on this machine with
 * ST_REG_DETECT_USRMERGE: the directory is a symlink into /usr), both when
 * loading and when looking up.
 *
 * A path listed by dpkg as the parent of another listed path is a
 * directory: directories are shared by many packages and are never "owned"
 * (a lookup says so with ST_OWN_DIR).  A file listed by two packages or
 * more (counted in `shared`; an owner map's path given twice alike) is
 * owned by each: a lookup gives the one declared most strongly (direct,
 * closure, implicit), the first listed when none is declared.
 *
 * Memory: path keys point into the .list buffers, which the registry keeps
 * in its pool; ~90 bytes of entry per file (~25 MiB for 150k files).  A registry is built by one thread and then
 * only read: lookups from any number of threads are safe once loading has
 * finished (the daemon joins its loader thread before the first lookup).
 */

/* How a package came to be declared. */
enum st__declared {
	ST_DECL_NO = 0,
	ST_DECL_DIRECT = 1,  /* named by --deps or debian/control (after alternatives, Provides) */
	ST_DECL_CLOSURE = 2, /* in the Depends/Pre-Depends closure of a direct one */
	ST_DECL_IMPLICIT = 3 /* Essential: yes, or build-essential and its closure */
};

/* One package.  Owned by the registry. */
struct st__pkg {
	UT_hash_handle hh; /* by name */
	char *name;
	bool installed;	    /* Status "... installed" (or unpacked/half-*), or named by the owner map */
	bool essential;	    /* Essential: yes */
	bool in_status;	    /* has a stanza in ADMINDIR/status */
	char *depends;	    /* raw field or NULL */
	char *predepends;   /* raw field or NULL */
	uint32_t nfiles;    /* files (not directories) the registry maps to it */
	uint8_t declared;   /* enum st__declared (the strongest reason: DIRECT < CLOSURE < IMPLICIT
			       in the order they are applied; DIRECT wins) */
	bool want_missing;  /* declared directly but not installed */
	void *audit;	    /* the audit's per-package state (audit.c) */
};

/* Lookup result flags. */
#define ST_OWN_DIR 1u	 /* a directory listed by packages: not owned */
#define ST_OWN_SHARED 2u /* listed by more than one package (each an owner) */

/* Registry options (st__registry_init). */
#define ST_REG_USRMERGE 1u	  /* always apply the /bin -> /usr/bin... aliases */
#define ST_REG_DETECT_USRMERGE 2u /* apply each alias whose directory is a symlink into /usr */

struct st__reg_file;
struct st__reg_provider;
struct st__reg_pool;
struct st__reg_more;

struct st__registry {
	struct st__pkg *pkgs;		   /* by name */
	struct st__reg_file *files;	   /* by path */
	struct st__reg_provider *provides; /* virtual name -> providers */
	struct st__reg_pool *pool;	   /* entries, rewritten paths, file buffers */
	struct st__reg_more *more;	   /* a shared file's other owners (by its entry) */
	unsigned aliases;   /* bit i: alias i of the merged-/usr table is active */
	char source[4200];  /* "dpkg ADMINDIR" or "owners FILE" (for the report) */
	/* statistics */
	uint64_t nfiles, ndirs, nshared, ndiverted, npackages, nlists;
	double load_ms;	    /* wall-clock time spent in st__registry_load_* (ms) */
	double load_cpu_ms; /* CPU time of the loading thread in them (ms; < load_ms when the
			       build competes for the CPUs) */
	bool oom;
};

/*
 * st__registry_init - an empty registry with the options above (ST_REG_*).
 * Cannot fail.  Not thread-safe (reads the file system for detection).
 */
void st__registry_init(struct st__registry *r, unsigned options);

/*
 * st__registry_load_dpkg - load ADMINDIR's status, diversions and
 * info/\*.list into r.  A missing diversions file is no error; a missing
 * status or info directory is.  Returns 0, -errno with "PATH: message" in
 * err, -EINVAL with "PATH:LINE: message" for a malformed diversions file, or
 * -ENOMEM.  Records the time taken in r->load_ms.  Not thread-safe with
 * other users of r.
 */
int st__registry_load_dpkg(struct st__registry *r, const char *admindir, char *err,
			   size_t errlen);

/*
 * st__registry_load_status - load only ADMINDIR/status (package records).
 * missing_ok: a missing file is no error (returns 0, nothing loaded).
 * Returns as st__registry_load_dpkg.
 */
int st__registry_load_status(struct st__registry *r, const char *admindir, bool missing_ok,
			     char *err, size_t errlen);

/*
 * st__registry_load_owners - load an owner map (format above).  A line
 * without a TAB, holding a NUL byte, with an empty, relative or unfolded
 * path ("//", "." or ".." components; "/." alone is skipped, as in dpkg's
 * lists), or with an empty package name or one holding blanks is -EINVAL
 * with "FILE:LINE: message" in err.
 * Packages it names that status does not know are added as installed.
 * Returns 0, -EINVAL, -errno ("FILE: message") or -ENOMEM.
 */
int st__registry_load_owners(struct st__registry *r, const char *file, char *err,
			     size_t errlen);

/*
 * st__registry_owner - the package owning path[0..len) (absolute, folded),
 * or NULL when no package owns it or it is a directory.  Of a file several
 * packages list, the one declared most strongly (after st__registry_declare),
 * else the first listed.  *flags (may be
 * NULL) gets ST_OWN_* bits.  O(1): one hash of the path (a second after a
 * merged-/usr rewrite).  Thread-safe on a loaded registry.
 */
struct st__pkg *st__registry_owner(const struct st__registry *r, const char *path, size_t len,
				   unsigned *flags);

/* st__registry_pkg - the package called name (NUL-terminated), or NULL.  Thread-safe (read). */
struct st__pkg *st__registry_pkg(const struct st__registry *r, const char *name);

/* st__registry_free - release everything; r becomes empty (st__registry_init again to reuse). */
void st__registry_free(struct st__registry *r);

/* ---- dependency lists (debian/control syntax) ---- */

/* One group of alternatives "a | b | c", after arch and profile evaluation. */
struct st__dep_group {
	char **alts; /* package names, qualifiers (:any, :native) and versions stripped */
	size_t nalts;
};

/* A parsed dependency field: groups in order.  Owned; st__deplist_free. */
struct st__deplist {
	struct st__dep_group *groups;
	size_t ngroups, cap;
};

/*
 * st__deps_parse - parse a dependency field (len bytes, may span lines) and
 * append its groups to *out.  Each alternative is "NAME[:QUAL] [(OP VER)]
 * [[ARCH...]] [<PROFILE...>...]": versions are ignored for membership;
 * an [arch] list keeps the alternative when it names arch (or a wildcard
 * matching linux-<arch>: any, linux-any, any-<arch>), or when it is a
 * negated list ("!i386 !armel") that does not; <...> profile lists are
 * evaluated with no build profile active (a term "X" is false, "!X" true;
 * terms of one <...> are and-ed, the <...> lists or-ed).  Alternatives
 * dropped this way vanish; a group left empty is dropped.
 * where/line name the text in messages ("FILE:LINE: ..."; line is that of
 * text[0], newlines inside text are counted).  Returns 0, -EINVAL (message
 * in err; groups parsed so far stay appended) or -ENOMEM.  Thread-safe.
 */
int st__deps_parse(const char *text, size_t len, const char *arch, const char *where,
		   unsigned line, struct st__deplist *out, char *err, size_t errlen);

/*
 * st__control_build_deps - read DIR/debian/control and parse the source
 * stanza's Build-Depends, Build-Depends-Arch and Build-Depends-Indep
 * (continuation lines, '#' comments) into *out.  Returns 0, -errno
 * ("FILE: message"), -EINVAL ("FILE:LINE: message": a field without ':', a
 * bad dependency) or -ENOMEM.
 */
int st__control_build_deps(const char *dir, const char *arch, struct st__deplist *out, char *err,
			   size_t errlen);

/* st__deplist_free - release; *l becomes empty. */
void st__deplist_free(struct st__deplist *l);

/*
 * st__registry_declare - mark the declared packages: for each group the
 * first alternative that is installed (a real package, or a virtual one
 * through Provides: all its installed providers), else the first
 * alternative (then want_missing, and added as a not-installed package);
 * then the transitive Depends/Pre-Depends closure of the installed ones
 * (first installed alternative of each group); then, with implicit,
 * build-essential's closure (its Depends from status, or the Debian list
 * "libc6-dev | libc-dev, gcc, g++, make, dpkg-dev" when it is not
 * installed) and every Essential: yes package.  Counts go to the out
 * parameters (may be NULL).  Returns 0 or -ENOMEM.  Not thread-safe.
 */
int st__registry_declare(struct st__registry *r, const struct st__deplist *deps, bool implicit,
			 size_t *ndirect, size_t *ntotal);

/* ---- the audit: which packages did a run use? ---- */

/*
 * An audit collects the accesses of a run (st__audit_note, in record
 * order) and, at the end, groups them by owning package (st__audit_emit).
 * One thread; the registry must be loaded before st__audit_emit only.
 */
struct st__audit_item;
struct st__audit {
	struct st__audit_item *items; /* in order of first record */
	size_t n, cap;
};

/*
 * st__audit_note - remember one first-seen access: kind (enum
 * sandtrace_kind), path bytes (copied), the recording pid, the errno of the
 * real call, and denied (the shim hid it).  Returns 0 or -ENOMEM.
 */
int st__audit_note(struct st__audit *a, unsigned kind, const char *path, size_t len, int32_t pid,
		   int32_t err, bool denied);

/*
 * st__audit_emit - write the audit records to rep (docs/INTERNALS.md):
 * one "registry" record; a "package" record per used package (files,
 * sample, first_pid; undeclared ones with all their paths); one per
 * declared package never used; one "unowned" record per file used that no
 * package owns, leaving out cwd's tree, /proc, /sys, /dev, /run, /tmp and
 * tmpdir (may be NULL) and what the run wrote.  A use is a read, exec,
 * query or listing that succeeded, or an access the sandbox hid.
 * have_deps: declarations were given (else "declared" fields are null).
 * Returns 0 or the report's -errno.
 */
int st__audit_emit(struct st__audit *a, struct st__registry *r, bool have_deps, const char *cwd,
		   const char *tmpdir, struct st__report *rep);

/* st__audit_free - release; *a becomes empty. */
void st__audit_free(struct st__audit *a);

#endif
