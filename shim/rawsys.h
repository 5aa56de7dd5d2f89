/* shim/rawsys.h - a system call made with an inline `syscall` instruction (x86-64 Linux). */
#ifndef SANDTRACE_SHIM_RAWSYS_H
#define SANDTRACE_SHIM_RAWSYS_H

#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>

/*
 * st__sys6(nr, a1..a6) - system call nr with six integer or pointer
 * arguments, libc's syscall() contract (returns -1 and sets errno on
 * failure), by an inline `syscall` instruction: no interposed function sees
 * it and no page of libc's is touched for it.  ST_HAVE_RAW_SYSCALL is 1
 * where it exists (x86-64 Linux), else 0 (the shim then uses libc's
 * syscall(), shim.h).  Async-signal-safe.  Used by the shim (ST_SYSCALL)
 * and by the benchmarks' helper programs (tests/bench), which must exec and
 * map without any wrapper seeing them.
 */
#if defined(__x86_64__) && defined(__linux__)
#define ST_HAVE_RAW_SYSCALL 1
static inline long st__sys6(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long r;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}
/*
 * st__mmap, st__munmap - mmap and munmap by inline system calls, with libc's
 * contract (MAP_FAILED or -1, and errno): the shim's own maps (the arena, a
 * thread's buffers), which leave libc's page of code for them untouched in a
 * process that never calls them (docs/BENCHMARKS.md, stop 22).  Elsewhere
 * libc's.  Async-signal-safe.
 */
static inline void *st__mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	long r = st__sys6(SYS_mmap, (long)addr, (long)len, prot, flags, fd, (long)off);
	return r == -1 ? MAP_FAILED : (void *)r;
}
static inline int st__munmap(void *addr, size_t len)
{
	return (int)st__sys6(SYS_munmap, (long)addr, (long)len, 0, 0, 0, 0);
}
#else
#define ST_HAVE_RAW_SYSCALL 0
#define st__mmap mmap
#define st__munmap munmap
#endif

#endif
