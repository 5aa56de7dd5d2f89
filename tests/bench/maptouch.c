/*
 * tests/bench/maptouch.c - the floor under a traced process's start (scripts/bench-spawn):
 * what mapping the run's arena and touching a few of its pages costs a process that runs
 * no sandtrace code at all.
 *
 * usage: maptouch NAME PAGES   (PAGES 0..64; an empty NAME: exit at once)
 *
 * Opens the arena NAME (/dev/shm/NAME for a POSIX shared-memory name, NAME itself for a path,
 * as --arena-dir names it), maps it whole, shared, read-write, at a 2 MiB boundary (as the
 * daemon does, and the shim when the page above the loader is not free), reads PAGES pages
 * 20 KiB apart inside its first span (the header, tables and the first segments a process
 * reads) and exits.  Inline system calls only:
 * no libc function is paged in for it.  x86-64 Linux.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "../../shim/rawsys.h"

#if ST_HAVE_RAW_SYSCALL
int main(int argc, char **argv)
{
	if (argc != 3 || !argv[1][0])
		return 0;
	char path[512] = "/dev/shm";
	size_t n = 8;
	for (const char *s = argv[1] + 1; *s; s++)
		if (*s == '/')
			n = 0; /* a path: taken as it is */
	for (const char *s = argv[1]; *s && n < sizeof(path) - 1; s++)
		path[n++] = *s;
	path[n] = 0;
	int pages = 0;
	for (const char *s = argv[2]; *s >= '0' && *s <= '9' && pages < 64; s++)
		pages = pages * 10 + (*s - '0');
	long fd = st__sys6(SYS_openat, -100, (long)path, 02 | 02000000 /* O_RDWR|O_CLOEXEC */, 0, 0, 0);
	if (fd < 0)
		return 1;
	struct stat st;
	if (st__sys6(SYS_fstat, fd, (long)&st, 0, 0, 0, 0) != 0)
		return 1;
	const long span = 2L << 20, len = (st.st_size + 4095) & ~4095L;
	long r = st__sys6(SYS_mmap, 0, len + span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			  -1, 0);
	if (r == -1)
		return 1;
	long p = (r + span - 1) & ~(span - 1);
	if (st__sys6(SYS_mmap, p, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != p)
		return 1;
	if (p > r)
		st__sys6(SYS_munmap, r, p - r, 0, 0, 0, 0);
	st__sys6(SYS_munmap, p + len, r + len + span - (p + len), 0, 0, 0, 0);
	st__sys6(SYS_close, fd, 0, 0, 0, 0, 0);
	volatile char sum = 0;
	for (int i = 0; i < pages && (long)i * 20480 < st.st_size; i++)
		sum += ((volatile char *)p)[(long)i * 20480];
	return sum & 0;
}
#else
int main(void)
{
	return 2;
}
#endif
