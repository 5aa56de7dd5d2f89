/* daemon/report.h - the JSON Lines report: record builders, a streaming writer and a reader. */
#ifndef ST_REPORT_H
#define ST_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Record shapes are those of docs/INTERNALS.md ("Report").  Every byte
 * string (path, exe, argv, cwd) goes through st__escape (escape.h) and is
 * stored as the escaped text.  Builders return a new json_t object (one
 * reference, owned by the caller) or NULL when out of memory.
 */

/* A JSON string holding the escaped form of s[0..len); NULL on ENOMEM. */
json_t *st__json_bytes(const char *s, size_t len);

/* A JSON array of escaped strings from NUL-separated argv bytes (len bytes; a last
 * argument without its NUL is kept).  NULL on ENOMEM. */
json_t *st__json_argv_bytes(const char *argv, size_t len);

/* The same from a NULL-terminated argv vector (may be NULL: empty array). */
json_t *st__json_argv(char *const *argv);

/* An access record (type "access"). */
struct st__access_rec {
	uint64_t seq;
	unsigned kind;	  /* enum sandtrace_kind */
	const char *path; /* bytes, not NUL-terminated */
	size_t path_len;
	int32_t pid;
	unsigned verdict;   /* enum sandtrace_action applied by the shim */
	int32_t err;	    /* errno of the real call, 0 on success */
	const char *asked;  /* an ask rule decided: "unknown" (no registry, or no owner),
			       "declared", "undeclared"; NULL = no ask rule */
	const char *package; /* the owning package of an asked path, or NULL */
	bool fail_open;	    /* allowed only because the daemon was lost */
	bool unresolved;    /* the path is a spelling the shim could not resolve */
	unsigned untraced;  /* enum sandtrace_untraced, 0 = traced */
};
json_t *st__rec_access(const struct st__access_rec *r);

/* A violation record (type "violation"). */
struct st__violation_rec {
	uint64_t seq;
	unsigned kind;
	const char *path;
	size_t path_len;
	int32_t pid;
	unsigned cls;	  /* SANDTRACE_CLASS_* bit governing the access */
	const char *rule; /* "default" or the rule's origin ("FILE:LINE") */
	const char *package; /* ask rules: the undeclared package owning path, else NULL */
	bool hidden;	     /* the shim refused the call (false: an ask reported, not enforced) */
	bool io_uring;	     /* an io_uring refused: path is the call's name, err its errno;
				kind, cls and rule are not written */
	int32_t err;
};
json_t *st__rec_violation(const struct st__violation_rec *r);

/* A process record (type "process"): one per process image. */
struct st__process_rec {
	int32_t pid, ppid;
	int64_t uid;	 /* -1 = unknown */
	const char *exe; /* bytes (exe_len) */
	size_t exe_len;
	const char *argv; /* NUL-separated bytes (argv_len) */
	size_t argv_len;
	bool exited; /* exit holds the status passed to exit() */
	int32_t exit;
	bool traced;
	unsigned why;	     /* enum sandtrace_untraced when !traced */
	bool argv_truncated; /* HELLO had SANDTRACE_HF_ARGV_TRUNC */
	bool no_cache;	     /* the process ran without the arena */
	bool execed;	     /* replaced by a later image (exec) of the same pid */
	bool io_uring;	     /* set up an io_uring the shim let through: accesses unseen */
};
json_t *st__rec_process(const struct st__process_rec *r);

/* The run record (type "run"); argv may be NULL. */
struct st__run_rec {
	char *const *argv;
	const char *cwd;
	const char *policy; /* "trace-only", "fenced" or the policy file */
	bool fenced, cache, record_all, fail_open;
	const char *arena; /* NULL = no arena (JSON null) */
	int64_t daemon_pid;
};
json_t *st__rec_run(const struct st__run_rec *r);

/* Name of an untraced reason: "static", "setid", "other" ("other" for unknown values). */
const char *st__untraced_name(unsigned why);

/*
 * The summary (type "summary").  reasons (why the trace is incomplete) and
 * notes (what the run says of itself that loses nothing: the arena filled
 * up) are JSON arrays of strings owned by the struct (NULL = empty);
 * st__summary_free releases them.
 */
struct st__summary {
	bool complete;
	json_t *reasons;
	json_t *notes;
	uint64_t processes, accesses, unique_paths, violations, untraced;
	uint64_t calls, hits, messages; /* sums over the EXIT messages of traced processes */
	uint64_t daemon_messages;	/* frames the daemon received */
	uint64_t clients, dropped_clients;
	uint64_t policy_reloads; /* policy records before it (written when not 0) */
	uint64_t io_uring;	 /* processes with an io_uring let through (written when not 0) */
};
json_t *st__rec_summary(const struct st__summary *s);
/* Append a reason (printf format) and mark the summary incomplete.  0 or -ENOMEM. */
int st__summary_reason(struct st__summary *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Append a note (printf format); the summary stays complete.  0 or -ENOMEM. */
int st__summary_note(struct st__summary *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void st__summary_free(struct st__summary *s);
/* The reason of a summary whose traced processes lost records or requests
 * (the arena header's lost, their EXITs): one %llu, the count.  The daemon
 * writes it, and the CLI when the daemon died. */
#define ST_LOST_REASON                                                                         \
	"%llu record(s) or request(s) lost: a traced process could not reach the daemon (its " \
	"connection broken, the daemon dead or not answering), or could not check or record "  \
	"a call of a signal handler that interrupted the shim (refused when the sandbox can "  \
	"refuse, passed unchecked in a trace-only run), or name a file reached from a "        \
	"working directory deeper than 2 x PATH_MAX; what they record is missing from the "   \
	"report, and what they asked was decided without the daemon"

/* A report being written.  One writer; not thread-safe. */
struct st__report {
	FILE *f;
	int error; /* first write error as -errno (0 = none); writes after it are skipped */
};

/* st__report_pseudo_fs - is fd a file of /proc or /sys (procfs, sysfs)?
 * Such a file takes no report or summary (/proc/version: the run went on
 * and its report was lost at the end): the CLI refuses one before it starts
 * a daemon, st__report_open when the daemon opens it.  False when fstatfs
 * fails (the open or write says why). */
bool st__report_pseudo_fs(int fd);

/*
 * st__report_open - open path for writing: truncate (append false) or append
 * (append true; used by the CLI when the daemon was lost).  Returns 0 or -errno.
 * Truncating takes an exclusive flock on the file first, held until
 * st__report_close: -EBUSY (nothing truncated) when another writer holds it.
 */
int st__report_open(struct st__report *r, const char *path, bool append);

/*
 * st__report_emit - write obj as one compact line and drop the caller's
 * reference.  Streams through stdio: call st__report_flush to push it out.
 * Returns 0 or -errno (also remembered in r->error); obj NULL is -ENOMEM.
 */
int st__report_emit(struct st__report *r, json_t *obj);

/* st__report_flush - fflush; 0 or -errno. */
int st__report_flush(struct st__report *r);

/* st__report_close - flush, fsync-free close; returns the first error seen or 0. */
int st__report_close(struct st__report *r);

/*
 * st__report_read - call fn(obj, lineno, ctx) for every record of the report
 * at path, in order (obj is borrowed for the call).  Blank lines are
 * skipped; a line that is not a JSON object (torn by a writer that was
 * killed) is skipped with a warning on stderr naming PATH:LINE.  fn returns
 * 0 to go on or a negative errno to stop (returned).  Returns 0, -errno
 * (open/read, or fn's), or -ENODATA when no line is a record (an object
 * with a "type": an empty file, or not a report); every error with its
 * message ("PATH: ..." or "PATH:LINE: ...") in err.  Not thread-safe only
 * in that the warnings share stderr.
 */
int st__report_read(const char *path, int (*fn)(json_t *obj, unsigned long lineno, void *ctx),
		    void *ctx, char *err, size_t errlen);

/*
 * Totals gathered from a report by st__report_scan: the last summary record
 * (have_summary) and counts of the records themselves, so that a report
 * without a summary (daemon lost) can still be summarised.
 */
struct st__report_scan {
	bool have_summary;
	struct st__summary summary; /* the last summary record, when have_summary */
	uint64_t processes, accesses, violations, untraced, unique_paths;
	json_t *run;		/* the run record (a reference) or NULL */
	json_t *arena;		/* the arena record (a reference) or NULL: cache statistics */
	json_t *last_policy;	/* the last policy record (a SIGHUP reload), or NULL */
	uint64_t policy_reloads; /* policy records */
	json_t *violation_list; /* array of violation records (references) */
	json_t *untraced_list;	/* array of untraced process records and untraced access records */
	void *paths;		/* internal: the set of distinct paths */
};

/* st__report_scan - read path into *s (zeroed first).  Returns as st__report_read. */
int st__report_scan(const char *path, struct st__report_scan *s, char *err, size_t errlen);
/*
 * st__report_scan_summary - the report's last line alone, when it is a
 * summary record: 1 and *s as st__report_scan leaves it for that record
 * (have_summary and summary; the counts and lists empty), reading at most the
 * file's last 64 KiB.  0 otherwise (a last line that is not a whole summary
 * record, a summary of a run whose policy was reloaded, whose policy
 * records only the whole report has, or a file that cannot be read), *s then freed: scan the whole
 * report for the counts and the error.  For the end of `sandtrace run`, whose
 * daemon writes its summary last: a build's report can be tens of megabytes,
 * read whole after the build (docs/BENCHMARKS.md, stop 23).
 */
int st__report_scan_summary(const char *path, struct st__report_scan *s);
void st__report_scan_free(struct st__report_scan *s);

#endif
