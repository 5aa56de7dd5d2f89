/* daemon/policy_file.h - the sandbox policy: file parser, embedded defaults, compiler to policy.h
 * tables. */
#ifndef ST_POLICY_FILE_H
#define ST_POLICY_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sandtrace/policy.h>

/*
 * Policy file syntax (one rule a line, first match wins):
 *
 *     # a comment (a line whose first non-blank character is '#')
 *     ACTION CLASS PREFIX
 *     default ACTION
 *
 * ACTION is allow, deny or ask (`default` takes allow or deny only).
 * CLASS is read, write, exec or any (one word; write two rules for two
 * classes).  PREFIX is the rest of the line after the blanks that follow
 * CLASS, trailing blanks trimmed; it may contain spaces and '#'.
 * "${NAME}" in PREFIX is replaced by the environment variable NAME (unset:
 * an error).  After expansion PREFIX must be absolute and non-empty.
 *
 * Each prefix is canonicalised when loaded (realpath of the longest existing
 * ancestor plus the rest folded lexically: /bin -> /usr/bin on merged-/usr);
 * when the spelling as written (folded lexically) differs, it is kept as a
 * second rule right after the canonical one, so either spelling matches.
 * Prefixes under /proc are only folded lexically (realpath of /proc/self
 * would name the daemon).
 *
 * Default action: trace-only (no file, no fence) allows everything; `--fence`
 * alone loads the embedded fenced defaults (st__policy_load) and denies the
 * rest; a file without --fence uses its `default` line, else allow; a file
 * with --fence denies the rest and a `default allow` line is an error.
 */

/* One rule as loaded (before compilation). */
struct st__rule {
	uint8_t action;	 /* enum sandtrace_action */
	uint8_t classes; /* SANDTRACE_CLASS_* mask */
	size_t len;	 /* bytes of prefix */
	char *prefix;	 /* malloc'd, NUL-terminated, absolute, no trailing '/' except "/" */
	char *origin;	 /* malloc'd: "FILE:LINE" or "fenced-default"; for reports and logs */
};

/* A loaded policy: rules in match order.  Owned; free with st__policy_free. */
struct st__policy {
	struct st__rule *rules;
	size_t nrules, cap;
	uint8_t default_action; /* ALLOW or DENY */
	unsigned default_line;	/* line of the file's `default` (0 = none) */
	bool fenced;		/* loaded with --fence */
	char *name;		/* "trace-only", "fenced" or the file's path (report "policy") */
};

/* Size of an error message buffer that always holds a whole message. */
#define ST_POLICY_ERR_MAX 4352

/*
 * st__policy_load - load the policy of a run.  file may be NULL (embedded
 * defaults, see above); cwd is the run's working directory and tmpdir its
 * $TMPDIR (may be NULL), both used by the fenced defaults only.  Returns 0,
 * or -EINVAL with a "FILE:LINE: message" (or "FILE: message" for I/O
 * errors, then -errno) in err; -ENOMEM.  On error *p is left empty (freed).
 * Not thread-safe (reads the environment; realpath).
 */
int st__policy_load(struct st__policy *p, const char *file, bool fence, const char *cwd,
		    const char *tmpdir, char *err, size_t errlen);

/*
 * st__policy_parse - parse policy text (len bytes, need not be NUL-terminated)
 * and append its rules to *p; name is used in messages ("NAME:LINE: ...").
 * *p must be zeroed or hold earlier rules.  Returns 0, -EINVAL (message in
 * err; rules of earlier lines stay appended) or -ENOMEM.
 */
int st__policy_parse(struct st__policy *p, const char *name, const char *text, size_t len,
		     char *err, size_t errlen);

/*
 * st__policy_add - canonicalise prefix (NUL-terminated, absolute) and append
 * the rule (plus the as-written alias when it differs).  origin is copied.
 * Returns 0, -EINVAL (empty or relative prefix, bad action/classes) or -ENOMEM.
 */
int st__policy_add(struct st__policy *p, unsigned action, unsigned classes, const char *prefix,
		   const char *origin);

/* st__policy_free - release the rules; *p becomes empty.  Safe on an empty policy. */
/* st__policy_has_ask - does a rule of p ask the daemon (and so need the
 * package registry)?  The default is never ask. */
bool st__policy_has_ask(const struct st__policy *p);

/* st__policy_hides - can p hide a name (a deny or ask rule, or a default
 * that is not allow)?  A --no-cache run then filters directory listings
 * (SANDTRACE_F_HIDES). */
bool st__policy_hides(const struct st__policy *p);

void st__policy_free(struct st__policy *p);

/*
 * st__prefix_fold - lexical normalisation of an absolute path: "//" -> "/",
 * "." dropped, ".." removes the previous component (never above "/"), no
 * trailing '/' except for "/".  Returns a malloc'd string or NULL (ENOMEM).
 */
char *st__prefix_fold(const char *path);

/*
 * st__prefix_canonicalize - the canonical spelling of an absolute path as used for
 * prefixes (see above).  Returns 0 with *out malloc'd, -EINVAL for a
 * relative path, -ENOMEM.  Not async-signal-safe (realpath).
 */
int st__prefix_canonicalize(const char *path, char **out);

/* st__policy_table_size - bytes st__policy_compile needs. */
size_t st__policy_table_size(const struct st__policy *p);

/*
 * st__policy_compile - write the table (header, rules, then the prefixes,
 * each NUL-terminated) into dst, which holds cap bytes and lies at offset
 * dst_off from the base later passed to sandtrace_policy_match (0 for a
 * private buffer; the arena offset for an arena).  Returns 0 or -ENOSPC.
 */
int st__policy_compile(const struct st__policy *p, void *dst, uint64_t dst_off, size_t cap);

/*
 * st__policy_decide - the daemon's decision for (cls, path) with a compiled
 * table: returns the action (ALLOW, DENY or ASK) and, for DENY, the errno
 * to fail the call with in *err: EACCES when cls is write and the same path
 * is visible (its read class is not denied), else ENOENT; 0 otherwise.
 * *rule gets the matching rule's index or -1 (default).  Pure.
 */
unsigned st__policy_decide(const void *base, const struct sandtrace_policy_table *t, unsigned cls,
			   const char *path, size_t len, int *err, int *rule);

/* Names: "allow"/"deny"/"ask", "read"/"write"/"exec" (one class bit). "?" when unknown. */
const char *st__action_name(unsigned action);
const char *st__class_name(unsigned cls);

#endif
