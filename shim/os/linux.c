/* shim/os/linux.c - the shim's hooks into Linux: the path of an open descriptor through /proc. */
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../shim.h"

/*
 * One of the short list of platform hooks declared in shim.h (st__fd_path).
 * Linux names a descriptor's file through /proc/self/fd/N; a Darwin port
 * would use fcntl(F_GETPATH) in shim/os/darwin.c, chosen by meson.
 */
ssize_t st__fd_path(int fd, char *buf, size_t cap)
{
	char p[40];
	int saved = errno;
	/* "/proc/self/fd/N" without snprintf (no locale, no malloc) */
	char num[16];
	int k = 0;
	unsigned u = (unsigned)fd;
	do
		num[k++] = (char)('0' + u % 10);
	while ((u /= 10) && k < 15);
	memcpy(p, "/proc/self/fd/", 14);
	for (int i = 0; i < k; i++)
		p[14 + i] = num[k - 1 - i];
	p[14 + k] = 0;
	ssize_t n = syscall(SYS_readlinkat, AT_FDCWD, p, buf, cap - 1);
	int err = errno;
	errno = saved;
	if (n < 0)
		return -err; /* EBADF; ENAMETOOLONG: a directory too deep to be named */
	if (n == 0 || buf[0] != '/')
		return -ENOENT; /* pipe:[N], socket:[N]: not a file */
	if (n > 10 && !memcmp(buf + n - 10, " (deleted)", 10))
		n -= 10;
	buf[n] = 0;
	return n;
}
