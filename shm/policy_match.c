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
	/*
	 * No rule matched and the default denies: a directory on the way to an
	 * allowed prefix ("/", "/var", "/var/tmp" for "allow any /var/tmp/b")
	 * stays readable (stat, listing), or a fenced build could not stat "/"
	 * (autoconf's shell search does) nor walk to its own tree; its listing
	 * still hides every name the sandbox denies.  Never for write or exec,
	 * and never against a rule that names the directory itself.
	 */
	if (t->default_action == SANDTRACE_DENY && cls == SANDTRACE_CLASS_READ) {
		for (i = 0; i < t->nrules; i++) {
			const struct sandtrace_policy_rule *r = &t->rules[i];
			const char *pre = (const char *)base + r->prefix_off;
			size_t plen = r->prefix_len;

			while (plen > 1 && pre[plen - 1] == '/')
				plen--;
			if (r->action == SANDTRACE_ALLOW && plen > len &&
			    sandtrace_prefix_covers(path, len, pre, plen))
				return SANDTRACE_ALLOW;
		}
	}
	return t->default_action;
}

size_t sandtrace_ask_key(void *buf, size_t cap, uint32_t pgen, const char *path, size_t len)
{
	if (len > cap || cap - len < sizeof(pgen))
		return 0;
	memcpy(buf, &pgen, sizeof(pgen));
	memcpy((char *)buf + sizeof(pgen), path, len);
	return sizeof(pgen) + len;
}
