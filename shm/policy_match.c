/* shm/policy_match.c - component-bounded prefix matching of the compiled sandbox (policy.h). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sandtrace/common.h"
#include "sandtrace/policy.h"

/*
 * Per component, not per byte: MacPorts' darwintrace let "/var/tmp" cover
 * "/var/tmpfoo", and an empty prefix matched everything and switched the
 * sandbox off.  Here an empty prefix covers nothing, "/" covers every
 * absolute path, and a (non-canonical) trailing '/' is ignored so that
 * "/var/tmp/" still means "/var/tmp" rather than "/var/tmp/" + anything.
 */
int sandtrace_prefix_covers(const char *prefix, size_t plen, const char *path, size_t len)
{
	if (prefix == NULL || path == NULL || plen == 0 || len == 0)
		return 0;
	while (plen > 1 && prefix[plen - 1] == '/')
		plen--;
	if (plen == 1 && prefix[0] == '/')
		return path[0] == '/';
	if (len < plen || memcmp(prefix, path, plen) != 0)
		return 0;
	return len == plen || path[plen] == '/';
}

unsigned sandtrace_policy_match(const void *base, const struct sandtrace_policy_table *t,
				unsigned cls, const char *path, size_t len, int *rule_index)
{
	uint32_t i;

	if (rule_index != NULL)
		*rule_index = -1;
	/* No table to read: fail closed (a deny is never turned into an allow). */
	if (t == NULL || base == NULL)
		return SANDTRACE_DENY;
	for (i = 0; i < t->nrules; i++) {
		const struct sandtrace_policy_rule *r = &t->rules[i];

		if ((r->classes & cls) == 0)
			continue;
		if (sandtrace_prefix_covers((const char *)base + r->prefix_off, r->prefix_len, path,
					    len)) {
			if (rule_index != NULL)
				*rule_index = (int)i;
			return r->action;
		}
	}
	return t->default_action;
}
