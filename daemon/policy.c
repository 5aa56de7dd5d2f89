/* daemon/policy.c - policy file parser, embedded defaults and compiler into a struct
 * sandtrace_policy_table. */
#include "policy_file.h"

#include <bsd/stdlib.h>
#include <bsd/string.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sandtrace/common.h>

const char *st__action_name(unsigned action)
{
	switch (action) {
	case SANDTRACE_ALLOW:
		return "allow";
	case SANDTRACE_DENY:
		return "deny";
	case SANDTRACE_ASK:
		return "ask";
	}
	return "?";
}

const char *st__class_name(unsigned cls)
{
	switch (cls) {
	case SANDTRACE_CLASS_READ:
		return "read";
	case SANDTRACE_CLASS_WRITE:
		return "write";
	case SANDTRACE_CLASS_EXEC:
		return "exec";
	case SANDTRACE_CLASS_ANY:
		return "any";
	}
	return "?";
}

bool st__policy_has_ask(const struct st__policy *p)
{
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i].action == SANDTRACE_ASK)
			return true;
	return false;
}

bool st__policy_hides(const struct st__policy *p)
{
	if (p->default_action != SANDTRACE_ALLOW)
		return true;
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i].action != SANDTRACE_ALLOW)
			return true;
	return false;
}

void st__policy_free(struct st__policy *p)
{
	for (size_t i = 0; i < p->nrules; i++) {
		free(p->rules[i].prefix);
		free(p->rules[i].origin);
	}
	free(p->rules);
	free(p->name);
	memset(p, 0, sizeof(*p));
}

char *st__prefix_fold(const char *path)
{
	size_t n = strlen(path);
	char *out = malloc(n + 2);
	size_t o = 0;

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < n;) {
		while (i < n && path[i] == '/')
			i++;
		size_t s = i;
		while (i < n && path[i] != '/')
			i++;
		size_t clen = i - s;
		if (clen == 0 || (clen == 1 && path[s] == '.'))
			continue;
		if (clen == 2 && path[s] == '.' && path[s + 1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--; /* the '/' before the dropped component */
			continue;
		}
		out[o++] = '/';
		memcpy(out + o, path + s, clen);
		o += clen;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

static bool under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Join base (canonical, absolute) and rest (may be empty), then fold. */
static char *join_fold(const char *base, const char *rest)
{
	char *joined;
	if (asprintf(&joined, "%s/%s", base, rest) < 0)
		return NULL;
	char *r = st__prefix_fold(joined);
	free(joined);
	return r;
}

int st__prefix_canonicalize(const char *path, char **out)
{
	if (path[0] != '/')
		return -EINVAL;
	char *folded = st__prefix_fold(path);
	if (folded == NULL)
		return -ENOMEM;
	if (under(folded, "/proc")) {
		*out = folded;
		return 0;
	}

	/*
	 * realpath() the longest existing ancestor.  The ancestor is cut from
	 * the spelling as written (not the folded one): "a/link/.." must be
	 * resolved by the kernel's rules, not lexically.
	 */
	char *work = strdup(path);
	if (work == NULL) {
		free(folded);
		return -ENOMEM;
	}
	size_t cut = strlen(work); /* work[0..cut) is tried; work+cut+1 is the rest */
	char *result = NULL;
	for (;;) {
		char saved = work[cut];
		work[cut] = '\0';
		char *real = realpath(cut == 0 ? "/" : work, NULL);
		work[cut] = saved;
		if (real != NULL) {
			result = join_fold(real, work + cut);
			free(real);
			break;
		}
		if (errno == ENOMEM)
			break;
		while (cut > 0 && work[cut - 1] == '/')
			cut--;
		while (cut > 0 && work[cut - 1] != '/')
			cut--;
		while (cut > 0 && work[cut - 1] == '/')
			cut--;
	}
	free(work);
	if (result == NULL) {
		free(folded);
		return -ENOMEM;
	}
	/* A spelling that resolves into /proc (/dev/fd -> /proc/self/fd) names the daemon's own. */
	if (under(result, "/proc")) {
		free(result);
		*out = folded;
		return 0;
	}
	free(folded);
	*out = result;
	return 0;
}

static int push_rule(struct st__policy *p, unsigned action, unsigned classes, char *prefix,
		     const char *origin)
{
	if (p->nrules == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 16;
		struct st__rule *r = reallocarray(p->rules, ncap, sizeof(*r));
		if (r == NULL)
			return -ENOMEM;
		p->rules = r;
		p->cap = ncap;
	}
	char *o = strdup(origin);
	if (o == NULL)
		return -ENOMEM;
	p->rules[p->nrules++] = (struct st__rule){.action = (uint8_t)action,
						  .classes = (uint8_t)classes,
						  .len = strlen(prefix),
						  .prefix = prefix,
						  .origin = o};
	return 0;
}

int st__policy_add(struct st__policy *p, unsigned action, unsigned classes, const char *prefix,
		   const char *origin)
{
	if (action > SANDTRACE_ASK || classes == 0 || (classes & ~SANDTRACE_CLASS_ANY) != 0)
		return -EINVAL;
	if (prefix[0] != '/')
		return -EINVAL;
	char *canon, *spelled;
	int rc = st__prefix_canonicalize(prefix, &canon);
	if (rc < 0)
		return rc;
	spelled = st__prefix_fold(prefix);
	if (spelled == NULL) {
		free(canon);
		return -ENOMEM;
	}
	rc = push_rule(p, action, classes, canon, origin);
	if (rc < 0) {
		free(canon);
		free(spelled);
		return rc;
	}
	if (strcmp(canon, spelled) == 0) {
		free(spelled);
		return 0;
	}
	rc = push_rule(p, action, classes, spelled, origin);
	if (rc < 0)
		free(spelled);
	return rc;
}

static void seterr(char *err, size_t errlen, const char *name, unsigned line, const char *fmt, ...)
{
	char msg[ST_POLICY_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err == NULL || errlen == 0)
		return;
	if (line > 0)
		snprintf(err, errlen, "%s:%u: %s", name, line, msg);
	else
		snprintf(err, errlen, "%s: %s", name, msg);
}

static int parse_action(const char *w, size_t n)
{
	if (n == 5 && memcmp(w, "allow", 5) == 0)
		return SANDTRACE_ALLOW;
	if (n == 4 && memcmp(w, "deny", 4) == 0)
		return SANDTRACE_DENY;
	if (n == 3 && memcmp(w, "ask", 3) == 0)
		return SANDTRACE_ASK;
	return -1;
}

/* "read", "write", "exec" or "any" (one word: lists are not in the grammar); -1 otherwise. */
static int parse_class(const char *w, size_t n)
{
	static const struct {
		const char *name;
		int mask;
	} names[] = {{"read", SANDTRACE_CLASS_READ},
		     {"write", SANDTRACE_CLASS_WRITE},
		     {"exec", SANDTRACE_CLASS_EXEC},
		     {"any", SANDTRACE_CLASS_ANY}};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i].name) == n && memcmp(names[i].name, w, n) == 0)
			return names[i].mask;
	return -1;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/*
 * Expand ${NAME} in s[0..n) into a malloc'd string.  Returns 0, -ENOMEM, or
 * -EINVAL with the message in msg.
 */
static int expand(const char *s, size_t n, char **out, char *msg, size_t msglen)
{
	size_t cap = n + 1, o = 0;
	char *buf = malloc(cap);
	if (buf == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n;) {
		const char *val = NULL;
		size_t vlen = 1;
		if (s[i] == '$' && i + 1 < n && s[i + 1] == '{') {
			size_t j = i + 2;
			while (j < n && s[j] != '}')
				j++;
			if (j == n) {
				snprintf(msg, msglen, "unterminated \"${\" in prefix");
				free(buf);
				return -EINVAL;
			}
			char name[256];
			size_t nl = j - i - 2;
			bool ok = nl > 0 && nl < sizeof(name);
			for (size_t k = 0; ok && k < nl; k++) {
				char c = s[i + 2 + k];
				ok = c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
				     (k > 0 && c >= '0' && c <= '9');
			}
			if (!ok) {
				snprintf(msg, msglen, "bad variable name \"${%.*s}\"", (int)nl,
					 s + i + 2);
				free(buf);
				return -EINVAL;
			}
			memcpy(name, s + i + 2, nl);
			name[nl] = '\0';
			val = getenv(name);
			if (val == NULL) {
				snprintf(msg, msglen, "environment variable %s is not set", name);
				free(buf);
				return -EINVAL;
			}
			vlen = strlen(val);
			i = j + 1;
		} else {
			val = s + i;
			i++;
		}
		if (o + vlen + 1 > cap) {
			cap = (o + vlen + 1) * 2;
			char *nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		memcpy(buf + o, val, vlen);
		o += vlen;
	}
	buf[o] = '\0';
	*out = buf;
	return 0;
}

/* Parse one line (without its '\n'). */
static int parse_line(struct st__policy *p, const char *name, unsigned lineno, const char *l,
		      size_t n, char *err, size_t errlen)
{
	size_t i = 0;
	while (i < n && blank(l[i]))
		i++;
	while (n > i && blank(l[n - 1]))
		n--;
	if (i == n || l[i] == '#')
		return 0;

	const char *w1 = l + i;
	while (i < n && !blank(l[i]))
		i++;
	size_t w1n = (size_t)(l + i - w1);
	while (i < n && blank(l[i]))
		i++;

	if (w1n == 7 && memcmp(w1, "default", 7) == 0) {
		int a = parse_action(l + i, n - i);
		if (a != SANDTRACE_ALLOW && a != SANDTRACE_DENY) {
			seterr(err, errlen, name, lineno,
			       "\"default\" takes allow or deny, not \"%.*s\"", (int)(n - i),
			       l + i);
			return -EINVAL;
		}
		if (p->default_line != 0) {
			seterr(err, errlen, name, lineno,
			       "second \"default\" line (first on line %u)", p->default_line);
			return -EINVAL;
		}
		if (p->fenced && a == SANDTRACE_ALLOW) {
			seterr(err, errlen, name, lineno, "\"default allow\" contradicts --fence");
			return -EINVAL;
		}
		p->default_action = (uint8_t)a;
		p->default_line = lineno;
		return 0;
	}

	int action = parse_action(w1, w1n);
	if (action < 0) {
		seterr(err, errlen, name, lineno,
		       "unknown action \"%.*s\" (expected allow, deny, ask or default)", (int)w1n,
		       w1);
		return -EINVAL;
	}
	if (i == n) {
		seterr(err, errlen, name, lineno, "missing class after \"%.*s\"", (int)w1n, w1);
		return -EINVAL;
	}
	const char *w2 = l + i;
	while (i < n && !blank(l[i]))
		i++;
	size_t w2n = (size_t)(l + i - w2);
	while (i < n && blank(l[i]))
		i++;
	int classes = parse_class(w2, w2n);
	if (classes <= 0) {
		seterr(err, errlen, name, lineno,
		       "unknown class \"%.*s\" (expected read, write, exec or any)", (int)w2n, w2);
		return -EINVAL;
	}
	if (i == n) {
		seterr(err, errlen, name, lineno,
		       "empty prefix (a rule needs ACTION CLASS PREFIX)");
		return -EINVAL;
	}

	/* "PREFIX  # why": a comment after a rule would silently become part of
	 * the prefix and the rule would never match; refuse it instead */
	for (size_t k = i + 1; k < n; k++)
		if (l[k] == '#' && blank(l[k - 1]) && (k + 1 == n || blank(l[k + 1]))) {
			seterr(err, errlen, name, lineno,
			       "\"#\" after the prefix: comments go on lines of their own "
			       "(the prefix is the rest of the line)");
			return -EINVAL;
		}

	char msg[1024];
	char *prefix;
	int rc = expand(l + i, n - i, &prefix, msg, sizeof(msg));
	if (rc == -EINVAL)
		seterr(err, errlen, name, lineno, "%s", msg);
	if (rc < 0)
		return rc;
	rc = -EINVAL;
	if (prefix[0] == '\0')
		seterr(err, errlen, name, lineno,
		       "empty prefix after expanding \"%.*s\" (it would match every path)",
		       (int)(n - i), l + i);
	else if (prefix[0] != '/')
		seterr(err, errlen, name, lineno, "prefix \"%s\" is not absolute", prefix);
	else
		rc = 0;
	if (rc == 0) {
		char origin[PATH_MAX + 32];
		snprintf(origin, sizeof(origin), "%s:%u", name, lineno);
		rc = st__policy_add(p, (unsigned)action, (unsigned)classes, prefix, origin);
		if (rc == -EINVAL)
			seterr(err, errlen, name, lineno, "bad rule");
	}
	free(prefix);
	return rc;
}

int st__policy_parse(struct st__policy *p, const char *name, const char *text, size_t len,
		     char *err, size_t errlen)
{
	unsigned lineno = 0;
	/* a UTF-8 byte-order mark, as some editors write one, is not part of line 1 */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) {
		text += 3;
		len -= 3;
	}
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;
		lineno++;
		if (memchr(text + i, '\0', end - i) != NULL) {
			seterr(err, errlen, name, lineno, "NUL byte in policy line");
			return -EINVAL;
		}
		int rc = parse_line(p, name, lineno, text + i, end - i, err, errlen);
		if (rc < 0) {
			if (rc == -ENOMEM)
				seterr(err, errlen, name, lineno, "out of memory");
			return rc;
		}
		i = end + 1;
	}
	return 0;
}

static int read_file(const char *file, char **text, size_t *len)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	if (buf == NULL) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (n == cap) {
			if (cap >= (64u << 20)) {
				free(buf);
				close(fd);
				return -EFBIG;
			}
			char *nb = realloc(buf, cap * 2);
			if (nb == NULL) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;
			free(buf);
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*text = buf;
	*len = n;
	return 0;
}

/* The embedded fenced defaults: the system read-only, the run's own places writable. */
static int add_fenced_defaults(struct st__policy *p, const char *cwd, const char *tmpdir)
{
	static const char *const any[] = {
	    "/tmp",	   "/var/tmp",	  "/dev/null", "/dev/zero",  "/dev/full",
	    "/dev/tty",	   "/dev/pts",	  "/dev/ptmx", "/dev/shm",   "/dev/stdin",
	    "/dev/stdout", "/dev/stderr", "/dev/fd",   "/proc/self", "/proc/thread-self"};
	static const char *const rx[] = {"/usr",    "/bin", "/sbin", "/lib",  "/lib32", "/lib64",
					 "/libx32", "/etc", "/dev",  "/proc", "/sys",	"/run"};
	const char *origin = "fenced-default";
	int rc;

	if (cwd != NULL && cwd[0] == '/' &&
	    (rc = st__policy_add(p, SANDTRACE_ALLOW, SANDTRACE_CLASS_ANY, cwd, origin)) < 0)
		return rc;
	if (tmpdir != NULL && tmpdir[0] == '/' &&
	    (rc = st__policy_add(p, SANDTRACE_ALLOW, SANDTRACE_CLASS_ANY, tmpdir, origin)) < 0)
		return rc;
	for (size_t i = 0; i < sizeof(any) / sizeof(any[0]); i++)
		if ((rc = st__policy_add(p, SANDTRACE_ALLOW, SANDTRACE_CLASS_ANY, any[i], origin)) <
		    0)
			return rc;
	for (size_t i = 0; i < sizeof(rx) / sizeof(rx[0]); i++)
		if ((rc = st__policy_add(p, SANDTRACE_ALLOW,
					 SANDTRACE_CLASS_READ | SANDTRACE_CLASS_EXEC, rx[i],
					 origin)) < 0)
			return rc;
	return 0;
}

int st__policy_load(struct st__policy *p, const char *file, bool fence, const char *cwd,
		    const char *tmpdir, char *err, size_t errlen)
{
	int rc;

	memset(p, 0, sizeof(*p));
	p->fenced = fence;
	p->default_action = fence ? SANDTRACE_DENY : SANDTRACE_ALLOW;
	p->name = strdup(file ? file : fence ? "fenced" : "trace-only");
	if (p->name == NULL)
		return -ENOMEM;
	if (file == NULL) {
		if (fence && (rc = add_fenced_defaults(p, cwd, tmpdir)) < 0) {
			seterr(err, errlen, "fenced-default", 0, "%s", strerror(-rc));
			st__policy_free(p);
			return rc;
		}
		return 0;
	}
	char *text = NULL;
	size_t len = 0;
	rc = read_file(file, &text, &len);
	if (rc < 0) {
		seterr(err, errlen, file, 0, "%s", strerror(-rc));
		st__policy_free(p);
		return rc;
	}
	rc = st__policy_parse(p, file, text, len, err, errlen);
	free(text);
	if (rc < 0)
		st__policy_free(p);
	return rc;
}

size_t st__policy_table_size(const struct st__policy *p)
{
	size_t n = sizeof(struct sandtrace_policy_table) +
		   p->nrules * sizeof(struct sandtrace_policy_rule);
	for (size_t i = 0; i < p->nrules; i++)
		n += p->rules[i].len + 1;
	return n;
}

int st__policy_compile(const struct st__policy *p, void *dst, uint64_t dst_off, size_t cap)
{
	if (cap < st__policy_table_size(p) || p->nrules > UINT32_MAX)
		return -ENOSPC;
	struct sandtrace_policy_table *t = dst;
	memset(t, 0, sizeof(*t));
	t->nrules = (uint32_t)p->nrules;
	t->default_action = p->default_action;
	size_t at = sizeof(*t) + p->nrules * sizeof(struct sandtrace_policy_rule);
	for (size_t i = 0; i < p->nrules; i++) {
		const struct st__rule *r = &p->rules[i];
		t->rules[i] = (struct sandtrace_policy_rule){.action = r->action,
							     .classes = r->classes,
							     .prefix_len = (uint32_t)r->len,
							     .prefix_off = dst_off + at};
		memcpy((char *)dst + at, r->prefix, r->len + 1);
		at += r->len + 1;
	}
	return 0;
}

unsigned st__policy_decide(const void *base, const struct sandtrace_policy_table *t, unsigned cls,
			   const char *path, size_t len, int *err, int *rule)
{
	int idx = -1;
	unsigned a = sandtrace_policy_match(base, t, cls, path, len, &idx);
	if (rule != NULL)
		*rule = idx;
	if (err != NULL) {
		*err = 0;
		if (a == SANDTRACE_DENY) {
			bool visible = cls == SANDTRACE_CLASS_WRITE &&
				       sandtrace_policy_match(base, t, SANDTRACE_CLASS_READ, path,
							      len, NULL) != SANDTRACE_DENY;
			*err = visible ? EACCES : ENOENT;
		}
	}
	return a;
}
