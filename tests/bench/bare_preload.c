/*
 * tests/bench/bare_preload.c - the baseline of scripts/bench-calls: a bare forwarding
 * LD_PRELOAD of the calls the benchmark makes (stat, open, access, readlink, execve), each a
 * dlsym(RTLD_NEXT) once and a call through the pointer.  "What any preload costs": the shim's
 * own cost is its time over this one's, per call and per spawned process.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#define FORWARD(ret, name, params, args)                                                           \
	ret name params                                                                            \
	{                                                                                          \
		static ret(*real) params;                                                          \
		if (!real)                                                                         \
			real = (ret(*) params)dlsym(RTLD_NEXT, #name);                             \
		return real args;                                                                  \
	}

FORWARD(int, stat, (const char *p, struct stat *b), (p, b))
FORWARD(int, access, (const char *p, int m), (p, m))
FORWARD(ssize_t, readlink, (const char *p, char *b, size_t n), (p, b, n))
FORWARD(int, execve, (const char *p, char *const a[], char *const e[]), (p, a, e))
FORWARD(int, close, (int fd), (fd))

int open(const char *p, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (!real)
		real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	return real(p, flags, mode);
}
