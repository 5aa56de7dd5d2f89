/*
 * tests/bench/stub_target.c - the stub target of scripts/bench-hit: stat, open and access
 * that return at once, with no system call.  Preloaded after the shim (LD_PRELOAD=
 * "libsandtrace.so stub_target.so"), it is what the shim's dlsym(RTLD_NEXT) finds, so a
 * call's time is the wrappers' own: issue 3's hit-path target without the kernel's noise.
 * stat reports a regular file; open returns descriptor 0 (never used by the benchmark).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

int stat(const char *p, struct stat *b)
{
	(void)p;
	b->st_mode = S_IFREG | 0644;
	return 0;
}

int open(const char *p, int flags, ...)
{
	(void)p;
	(void)flags;
	return 0;
}

int access(const char *p, int m)
{
	(void)p;
	(void)m;
	return 0;
}
