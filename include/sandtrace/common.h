/* sandtrace/common.h - access kinds, sandbox classes and actions shared by shim, daemon and CLI. */
#ifndef SANDTRACE_COMMON_H
#define SANDTRACE_COMMON_H

#include <stdint.h>

/*
 * Access kinds, as recorded in the report.  The letter is the one printed by
 * `sandtrace report --list` (KIND<TAB>PATH).
 *   READ    a file opened for reading (or loaded: dlopen, LD_AUDIT)
 *   WRITE   create, modify (data or metadata), delete, rename (both names)
 *   QUERY   stat/access/readlink and other metadata lookups
 *   EXEC    a program (or #! interpreter) executed
 *   DIR     a directory listed (opendir, scandir, nftw)
 *   MISSING a lookup that failed with ENOENT (or was hidden by the sandbox)
 */
enum sandtrace_kind {
	SANDTRACE_KIND_READ = 0,
	SANDTRACE_KIND_WRITE = 1,
	SANDTRACE_KIND_QUERY = 2,
	SANDTRACE_KIND_EXEC = 3,
	SANDTRACE_KIND_DIR = 4,
	SANDTRACE_KIND_MISSING = 5,
	SANDTRACE_KIND_MAX = 6
};

/* Letters of the kinds, indexed by enum sandtrace_kind. */
#define SANDTRACE_KIND_LETTERS "RWQXDN"

/*
 * Sandbox classes: what a policy rule governs.  `read` governs reads,
 * queries, directory listings and failed lookups; `write` governs writes;
 * `exec` governs execs.  A rule's class set is a bit mask of these.
 */
enum sandtrace_class {
	SANDTRACE_CLASS_READ = 1u << 0,
	SANDTRACE_CLASS_WRITE = 1u << 1,
	SANDTRACE_CLASS_EXEC = 1u << 2,
	SANDTRACE_CLASS_ANY = 7u
};

/* The sandbox class that governs an access kind (a SANDTRACE_CLASS_* bit). */
static inline unsigned sandtrace_kind_class(unsigned kind)
{
	return kind == SANDTRACE_KIND_WRITE  ? SANDTRACE_CLASS_WRITE
	       : kind == SANDTRACE_KIND_EXEC ? SANDTRACE_CLASS_EXEC
					     : SANDTRACE_CLASS_READ;
}

/* Actions of policy rules, and verdicts. */
enum sandtrace_action {
	SANDTRACE_ALLOW = 0,
	SANDTRACE_DENY = 1,
	SANDTRACE_ASK = 2
};

/*
 * Run-wide flags, passed to every traced process in SANDTRACE_FLAGS (decimal)
 * and stored in the arena header.
 */
enum sandtrace_run_flags {
	SANDTRACE_F_FENCED = 1u << 0,     /* a deny/ask is never turned into an allow */
	SANDTRACE_F_FAIL_OPEN = 1u << 1,  /* explicit: a lost daemon allows asks */
	SANDTRACE_F_RECORD_ALL = 1u << 2, /* send every access, not first sightings */
	SANDTRACE_F_NO_CACHE = 1u << 3,   /* no arena: every access asks the daemon */
	SANDTRACE_F_MANIFEST = 1u << 4,   /* --manifest: the daemon writes an input manifest */
	SANDTRACE_F_LAUNCHER = 1u << 5,   /* only in the CLI's child before it execs CMD: the
					     shim records the exec, not the launcher itself;
					     never passed on */
	SANDTRACE_F_IDENTITY = 1u << 6,   /* --manifest/--verify: one fstat per first read of a
					     file version; records carry struct
					     sandtrace_identity and are keyed by it */
	SANDTRACE_F_VERIFY = 1u << 7,     /* --verify: reads of files the manifest lists are
					     checked against its digests (first use of each
					     version; SANDTRACE_KEY_LISTED in the Ctrie) */
	SANDTRACE_F_HIDES = 1u << 8       /* with NO_CACHE: the policy can hide a name (a deny
					     or ask rule, or default deny), so directory
					     listings ask the daemon about each name, as
					     under a fence (with the arena the shim reads
					     the compiled policy itself) */
};

/* Environment variables read by the shim (set by `sandtrace run` / `sandtrace env`). */
#define SANDTRACE_ENV_SOCKET "SANDTRACE_SOCKET" /* absolute path of the daemon's unix socket */
#define SANDTRACE_ENV_ARENA "SANDTRACE_ARENA"   /* the arena's name, a POSIX shm name or a
						   path (arena.h; "" = none) */
#define SANDTRACE_ENV_LIB "SANDTRACE_LIB"       /* absolute path of libsandtrace.so */
#define SANDTRACE_ENV_FLAGS "SANDTRACE_FLAGS"   /* decimal enum sandtrace_run_flags */
#define SANDTRACE_ENV_AUDIT "SANDTRACE_AUDIT"   /* absolute path of the LD_AUDIT library, optional */
/* Set by the shim's exec wrappers for the program they exec:
 * "<decimal length of S>:<S><R>", where S is the absolute path handed to
 * execve and R the program the new image will run, resolved as the kernel's
 * /proc/<pid>/exe names it (a #! script's interpreter).  The new image takes R
 * as its executable only when its AT_EXECFN is S byte for byte; otherwise (a
 * program that exec'd by other means, with the variable inherited) it asks
 * the kernel.  Optional. */
#define SANDTRACE_ENV_EXE "SANDTRACE_EXE"
/* For tests only: how long (ms, 1..10000) a traced process waits for the
 * daemon's answer to a request before it takes the daemon for lost
 * (default 10000), so that a test of a daemon that stops answering need not
 * wait ten seconds.  Optional; anything else is ignored. */
#define SANDTRACE_ENV_REPLY_TIMEOUT "SANDTRACE_TEST_REPLY_TIMEOUT_MS"

/* Exit code of `sandtrace run --strict` when the trace found problems. */
#define SANDTRACE_EXIT_STRICT 121
/* Exit code of `sandtrace run` for its own errors (bad usage, daemon failed to start). */
#define SANDTRACE_EXIT_ERROR 125
/* Exit code of sandtraced when a write of the report failed (a full disk, a file size
 * limit): the report is cut short, and `sandtrace run` says so. */
#define SANDTRACE_DAEMON_EXIT_REPORT 3

#endif
