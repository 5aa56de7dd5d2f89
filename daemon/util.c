/* daemon/util.c - run flags, the daemon's log, shell quoting and size parsing. */
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sandtrace/common.h>

unsigned st__run_flags(bool fence, bool fail_open, bool record_all, bool no_cache)
{
	return (fence ? SANDTRACE_F_FENCED : 0u) | (fail_open ? SANDTRACE_F_FAIL_OPEN : 0u) |
	       (record_all ? SANDTRACE_F_RECORD_ALL : 0u) | (no_cache ? SANDTRACE_F_NO_CACHE : 0u);
}

static FILE *log_file;

void st__log_set(FILE *f)
{
	log_file = f;
}

bool st__log_is_stderr(void)
{
	return log_file == NULL;
}

void st__log(const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	FILE *f = log_file ? log_file : stderr;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(f, "sandtraced[%ld]: %s\n", (long)getpid(), msg);
	fflush(f);
}

char *st__shell_quote(const char *s)
{
	static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				    "0123456789_@%+=:,./-";
	size_t n = strlen(s);
	if (n > 0 && strspn(s, plain) == n)
		return strdup(s);
	char *out = malloc(n * 4 + 3), *o = out;
	if (out == NULL)
		return NULL;
	*o++ = '\'';
	for (; *s; s++) {
		if (*s == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = *s;
		}
	}
	*o++ = '\'';
	*o = '\0';
	return out;
}

int st__parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	if (s[0] < '0' || s[0] > '9')
		return -EINVAL;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0)
		return -EINVAL;
	unsigned shift = 0;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	}
	if (*end != '\0' || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}
