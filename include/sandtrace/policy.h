/* sandtrace/policy.h - the compiled sandbox: prefix rules matched per path component. */
#ifndef SANDTRACE_POLICY_H
#define SANDTRACE_POLICY_H

#include <stddef.h>
#include <stdint.h>

/*
 * The daemon parses the policy file (daemon/policy.c) and compiles it into
 * this table, stored in the arena (or in a private buffer with --no-cache)
 * so that every traced process decides allow/deny prefixes by itself.
 * All offsets are relative to a base pointer passed to the matcher.
 */
struct sandtrace_policy_rule {
	uint8_t action;      /* enum sandtrace_action */
	uint8_t classes;     /* SANDTRACE_CLASS_* mask */
	uint16_t reserved;
	uint32_t prefix_len; /* bytes; the prefix is absolute, canonical, no trailing '/' except "/" */
	uint64_t prefix_off; /* offset of the prefix bytes from base */
};
_Static_assert(sizeof(struct sandtrace_policy_rule) == 16, "rule is 16 bytes");

struct sandtrace_policy_table {
	uint32_t nrules;
	uint8_t default_action; /* when no rule matches: ALLOW (trace-only) or DENY (fenced) */
	uint8_t reserved[3];
	struct sandtrace_policy_rule rules[];
};

/*
 * sandtrace_prefix_covers - does prefix cover path at a component boundary?
 * "/var/tmp" covers "/var/tmp" and "/var/tmp/x", not "/var/tmpfoo"; "/"
 * covers every absolute path.  Pure, async-signal-safe.
 */
int sandtrace_prefix_covers(const char *prefix, size_t plen, const char *path, size_t len);

/*
 * sandtrace_policy_match - first rule (in order) whose class set holds cls
 * (one SANDTRACE_CLASS_* bit) and whose prefix covers path; returns its
 * action, or the table's default.  path is absolute and normalised.  When
 * no rule matches, the default is deny and cls is READ, a proper ancestor
 * of an allow rule's prefix (component-wise: "/" and "/var" for "/var/tmp")
 * is allowed: the directories on the way to what the sandbox allows stay
 * visible.
 * *rule_index gets the rule's index or -1 (may be NULL).  Pure, allocation-
 * free, async-signal-safe; O(rules × prefix length).
 */
unsigned sandtrace_policy_match(const void *base, const struct sandtrace_policy_table *t,
				unsigned cls, const char *path, size_t len, int *rule_index);

/*
 * sandtrace_ask_key - the Ctrie key (class SANDTRACE_KEY_ASK | the
 * access class) under which the daemon caches the answer to an ask rule and
 * the shim looks it up: the arena's policy generation (4 bytes, host order),
 * then the resolved path's len bytes, so a reload makes every answer of the
 * old policy miss.  Writes buf (cap bytes); returns the key's length, or 0
 * when it does not fit.  Pure, async-signal-safe.
 */
size_t sandtrace_ask_key(void *buf, size_t cap, uint32_t pgen, const char *path, size_t len);

#endif
