/*
 * tests/bench/pagetouch.c - what a process pays for the pages of a shared mapping it first
 * touches (scripts/bench-pages): the cost model under the per-process figures.
 *
 *   pagetouch FILE MODE
 *
 * Maps FILE (a tmpfs file, every page already in memory) shared, read-write, at a 2 MiB
 * boundary, in a fresh process, and times with CLOCK_MONOTONIC, in nanoseconds:
 *
 *   MODE 0  the first read of page 0 (a page fault, a page-table page, and the kernel's
 *           fault-around: the other 15 pages of its 64 KiB window mapped in the same fault),
 *           then reads of pages 1..15 of that window, then of page 16 (the next window:
 *           a fault without a new page-table page)
 *   MODE 1  the same first read, then writes to pages 1..15
 *
 * and prints "FIRST WINDOW_REST NEXT_WINDOW MINFLT": the first read, the 15 other pages
 * together, the next window's first page, and the minor faults counted for all of it.  On
 * a machine whose hypervisor fills its own page tables lazily, pages the kernel mapped by
 * fault-around still cost each their first touch, though no fault is counted for them.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s FILE MODE\n", argv[0]);
		return 2;
	}
	int mode = atoi(argv[2]);
	int fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	const size_t span = 2u << 20, len = 4u << 20;
	char *r = mmap(NULL, len + span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return 1;
	char *p = (char *)(((uintptr_t)r + span - 1) & ~(uintptr_t)(span - 1));
	if (mmap(p, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != p)
		return 1;
	volatile char sink = 0;
	struct rusage r0, r1;
	now_ns(); /* the vDSO's pages, before timing */
	getrusage(RUSAGE_SELF, &r0);
	long t0 = now_ns();
	sink += p[0];
	long t1 = now_ns();
	for (int i = 1; i < 16; i++) {
		if (mode == 1)
			((volatile char *)p)[(size_t)i * 4096] = 1;
		else
			sink += p[(size_t)i * 4096];
	}
	long t2 = now_ns();
	sink += p[16 * 4096];
	long t3 = now_ns();
	getrusage(RUSAGE_SELF, &r1);
	printf("%ld %ld %ld %ld\n", t1 - t0, t2 - t1, t3 - t2, r1.ru_minflt - r0.ru_minflt);
	return 0;
}
