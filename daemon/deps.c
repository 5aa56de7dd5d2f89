/* daemon/deps.c - Debian dependency fields: parse, evaluate [arch] and <profile> restrictions, read debian/control. */
#include "registry.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void st__deplist_free(struct st__deplist *l)
{
	for (size_t g = 0; g < l->ngroups; g++) {
		for (size_t a = 0; a < l->groups[g].nalts; a++)
			free(l->groups[g].alts[a]);
		free(l->groups[g].alts);
	}
	free(l->groups);
	memset(l, 0, sizeof(*l));
}

/* Line of text[at] given that text[0] is on line `line`. */
static unsigned line_at(const char *text, size_t at, unsigned line)
{
	for (size_t i = 0; i < at; i++)
		if (text[i] == '\n')
			line++;
	return line;
}

static int perr(char *err, size_t errlen, const char *where, const char *text, size_t at,
		unsigned line, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static int perr(char *err, size_t errlen, const char *where, const char *text, size_t at,
		unsigned line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(err, errlen, "%s:%u: %s", where, line_at(text, at, line), msg);
	else
		snprintf(err, errlen, "%s: %s", where, msg);
	return -EINVAL;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * Does an architecture term match this machine (linux-<arch>)?  Terms:
 * "ARCH", "any", "OS-CPU" with OS in {linux, any} and CPU in {arch, any}.
 */
static bool arch_term_matches(const char *t, size_t n, const char *arch)
{
	size_t an = strlen(arch);
	if ((n == an && memcmp(t, arch, n) == 0) || (n == 3 && memcmp(t, "any", 3) == 0))
		return true;
	const char *dash = memchr(t, '-', n);
	if (dash == NULL)
		return false;
	size_t on = (size_t)(dash - t), cn = n - on - 1;
	const char *cpu = dash + 1;
	bool os_ok = (on == 5 && memcmp(t, "linux", 5) == 0) || (on == 3 && memcmp(t, "any", 3) == 0);
	bool cpu_ok = (cn == an && memcmp(cpu, arch, an) == 0) || (cn == 3 && memcmp(cpu, "any", 3) == 0);
	return os_ok && cpu_ok;
}

/* Evaluate "[a b]" / "[!a !b]" contents.  Mixed lists are an error (-1). */
static int arch_list_keeps(const char *s, size_t n, const char *arch)
{
	int neg = -1;
	bool any = false;
	for (size_t i = 0; i < n;) {
		while (i < n && blank(s[i]))
			i++;
		if (i >= n)
			break;
		bool not = s[i] == '!';
		if (not)
			i++;
		size_t b = i;
		while (i < n && !blank(s[i]))
			i++;
		if (i == b)
			return -1;
		if (neg >= 0 && neg != (int)not)
			return -1;
		neg = not;
		if (arch_term_matches(s + b, i - b, arch))
			any = true;
	}
	if (neg < 0)
		return -1;
	return neg ? !any : any;
}

/* Evaluate one "<a !b>" list with no profile active: all terms must hold. */
static int profile_list_holds(const char *s, size_t n)
{
	bool holds = true, some = false;
	for (size_t i = 0; i < n;) {
		while (i < n && blank(s[i]))
			i++;
		if (i >= n)
			break;
		bool not = s[i] == '!';
		if (not)
			i++;
		size_t b = i;
		while (i < n && !blank(s[i]))
			i++;
		if (i == b)
			return -1;
		some = true;
		if (!not)
			holds = false; /* a profile that is not active */
	}
	return some ? holds : -1;
}

static int group_push(struct st__deplist *out, struct st__dep_group *g)
{
	if (out->ngroups == out->cap) {
		size_t nc = out->cap ? out->cap * 2 : 16;
		struct st__dep_group *ng = reallocarray(out->groups, nc, sizeof(*ng));
		if (ng == NULL)
			return -ENOMEM;
		out->groups = ng;
		out->cap = nc;
	}
	out->groups[out->ngroups++] = *g;
	return 0;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '-' || c == '.' || c == '_';
}

int st__deps_parse(const char *text, size_t len, const char *arch, const char *where,
		   unsigned line, struct st__deplist *out, char *err, size_t errlen)
{
	size_t i = 0;
	struct st__dep_group g = {0};
	size_t gcap = 0;
	bool group_start = true;
	int rc = 0;

	for (;;) {
		/* one alternative; at the start of a group an empty group ", ," is tolerated */
		while (i < len && blank(text[i]))
			i++;
		if (group_start && i >= len)
			break;
		if (group_start && text[i] == ',') {
			i++;
			continue;
		}
		group_start = false;
		size_t nb = i;
		while (i < len && name_char(text[i]))
			i++;
		if (i == nb) {
			rc = perr(err, errlen, where, text, i, line, "expected a package name%s%.*s",
				  i < len ? " at " : " at the end", i < len ? 8 : 0, text + i);
			goto fail;
		}
		size_t ne = i;
		if (i < len && text[i] == ':') { /* :any, :native, :amd64 */
			i++;
			while (i < len && name_char(text[i]))
				i++;
		}
		bool keep = true;
		int profiles = -1; /* -1: no <...> list seen; else or of the lists */
		for (;;) {
			while (i < len && blank(text[i]))
				i++;
			if (i >= len)
				break;
			char open = text[i], close;
			if (open == '(')
				close = ')';
			else if (open == '[')
				close = ']';
			else if (open == '<')
				close = '>';
			else
				break;
			const char *e = memchr(text + i + 1, close, len - i - 1);
			if (e == NULL) {
				rc = perr(err, errlen, where, text, i, line, "unterminated '%c'", open);
				goto fail;
			}
			size_t b = i + 1, n = (size_t)(e - (text + b));
			if (open == '[') {
				int k = arch_list_keeps(text + b, n, arch);
				if (k < 0) {
					rc = perr(err, errlen, where, text, i, line,
						  "bad architecture list [%.*s]", (int)n, text + b);
					goto fail;
				}
				keep = keep && k;
			} else if (open == '<') {
				int h = profile_list_holds(text + b, n);
				if (h < 0) {
					rc = perr(err, errlen, where, text, i, line,
						  "bad build profile list <%.*s>", (int)n, text + b);
					goto fail;
				}
				profiles = profiles < 0 ? h : (profiles || h);
			}
			i = (size_t)(e - text) + 1;
		}
		if (profiles == 0)
			keep = false;
		if (keep) {
			if (g.nalts == gcap) {
				size_t nc = gcap ? gcap * 2 : 2;
				char **na = reallocarray(g.alts, nc, sizeof(*na));
				if (na == NULL) {
					rc = -ENOMEM;
					goto fail;
				}
				g.alts = na;
				gcap = nc;
			}
			if ((g.alts[g.nalts] = strndup(text + nb, ne - nb)) == NULL) {
				rc = -ENOMEM;
				goto fail;
			}
			g.nalts++;
		}
		while (i < len && blank(text[i]))
			i++;
		if (i < len && text[i] == '|') {
			i++;
			while (i < len && blank(text[i]))
				i++;
			if (i >= len || text[i] == ',') {
				rc = perr(err, errlen, where, text, i, line,
					  "an alternative is missing after '|'");
				goto fail;
			}
			continue;
		}
		if (i < len && text[i] != ',') {
			rc = perr(err, errlen, where, text, i, line, "unexpected '%c'", text[i]);
			goto fail;
		}
		/* end of the group */
		if (g.nalts > 0 && (rc = group_push(out, &g)) < 0)
			goto fail;
		if (g.nalts == 0)
			free(g.alts);
		memset(&g, 0, sizeof(g));
		gcap = 0;
		group_start = true;
		if (i >= len)
			break;
		i++; /* ',' */
	}
	return 0;
fail:
	for (size_t a = 0; a < g.nalts; a++)
		free(g.alts[a]);
	free(g.alts);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", where);
	return rc;
}

int st__control_build_deps(const char *dir, const char *arch, struct st__deplist *out, char *err,
			   size_t errlen)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/debian/control", dir) >= sizeof(path)) {
		snprintf(err, errlen, "%s/debian/control: path too long", dir);
		return -ENAMETOOLONG;
	}
	FILE *f = fopen(path, "re");
	if (f == NULL) {
		int e = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return e;
	}
	char *line = NULL, *val = NULL;
	size_t cap = 0, vlen = 0, vcap = 0;
	ssize_t n;
	unsigned lineno = 0, vline = 0;
	bool collecting = false, in_stanza = false;
	int rc = 0;
	static const char *const wanted[] = {"Build-Depends", "Build-Depends-Arch",
					     "Build-Depends-Indep"};
	for (;;) {
		n = getline(&line, &cap, f);
		if (n >= 0)
			lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		bool cont = n > 0 && (line[0] == ' ' || line[0] == '\t');
		if (n > 0 && line[0] == '#')
			continue; /* a comment line, also inside a field */
		if (cont && collecting) {
			size_t need = vlen + (size_t)n + 2;
			if (need > vcap) {
				char *nv = realloc(val, need * 2);
				if (nv == NULL) {
					rc = -ENOMEM;
					break;
				}
				val = nv;
				vcap = need * 2;
			}
			val[vlen++] = '\n';
			memcpy(val + vlen, line, (size_t)n);
			vlen += (size_t)n;
			continue;
		}
		if (collecting) { /* the field ended: parse it */
			rc = st__deps_parse(val, vlen, arch, path, vline, out, err, errlen);
			collecting = false;
			if (rc < 0)
				break;
		}
		if (n < 0 || (n == 0 && in_stanza))
			break; /* only the first (source) stanza holds build dependencies */
		if (n == 0 || cont)
			continue;
		in_stanza = true;
		char *colon = strchr(line, ':');
		if (colon == NULL) {
			snprintf(err, errlen, "%s:%u: expected \"Field: value\"", path, lineno);
			rc = -EINVAL;
			break;
		}
		size_t fn = (size_t)(colon - line);
		for (size_t w = 0; w < sizeof(wanted) / sizeof(wanted[0]); w++) {
			if (fn == strlen(wanted[w]) && strncasecmp(line, wanted[w], fn) == 0) {
				const char *v = colon + 1;
				size_t l = strlen(v);
				if (l + 1 > vcap) {
					char *nv = realloc(val, l * 2 + 16);
					if (nv == NULL) {
						rc = -ENOMEM;
						break;
					}
					val = nv;
					vcap = l * 2 + 16;
				}
				memcpy(val, v, l);
				vlen = l;
				vline = lineno;
				collecting = true;
			}
		}
		if (rc < 0)
			break;
	}
	if (rc == 0 && ferror(f)) {
		/* getline's error ends the loop as its end of file did: a control
		 * that is a directory (EISDIR) was taken for one declaring nothing */
		rc = -(errno != 0 ? errno : EIO);
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
	}
	free(line);
	free(val);
	fclose(f);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	return rc;
}
