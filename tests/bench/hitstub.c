/*
 * tests/bench/hitstub.c - the hit path against a stub target (scripts/bench-hit).
 *
 *   hitstub DIR ITERS ROUNDS
 *
 * Run with tests/bench/stub_target.c preloaded (after the shim when traced): stat, open and
 * access return at once, so what a call costs is the wrappers' own.  Creates 256 files and a
 * symlink to each under DIR (the shim resolves them with real system calls on a miss), warms
 * every path untimed, then times ROUNDS rounds of ITERS calls of each operation and prints
 * "OP NS" lines, nanoseconds per call (median round, CLOCK_MONOTONIC):
 *
 *   stat-one     stat of one absolute path (the thread's memo: the wrappers' fast path)
 *   open-one     open(O_RDONLY) of one absolute path (the same)
 *   stat-256     stat round robin over the 256 files (too wide for the memo: Ctrie hits)
 *   stat-link    stat round robin over the 256 symlinks (a verdict that depends on
 *                resolution: the link's target is looked up too)
 *   access-256   access round robin over the 256 files
 *   kernel-stat  the real stat of one of the files by an inline system call (no wrapper, no
 *                stub): what the call the wrappers stand before costs on this machine, for
 *                the "at most 1.05x untraced" reading
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "../../shim/rawsys.h"

#define NPATHS 256
#define MAXROUNDS 64

static char files[NPATHS][PATH_MAX], links[NPATHS][PATH_MAX];
static volatile long sink;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

enum op { STAT_ONE, OPEN_ONE, STAT_256, STAT_LINK, ACCESS_256, KERNEL_STAT };

static void run(enum op op, long iters)
{
	struct stat st;
	for (long i = 0; i < iters; i++) {
		int k = (int)(i & (NPATHS - 1));
		switch (op) {
		case STAT_ONE: sink += stat(files[0], &st); break;
		case OPEN_ONE: sink += open(files[0], O_RDONLY); break;
		case STAT_256: sink += stat(files[k], &st); break;
		case STAT_LINK: sink += stat(links[k], &st); break;
		case ACCESS_256: sink += access(files[k], R_OK); break;
		case KERNEL_STAT:
			sink += st__sys6(SYS_newfstatat, AT_FDCWD, (long)files[0], (long)&st, 0, 0, 0);
			break;
		}
	}
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s DIR ITERS ROUNDS\n", argv[0]);
		return 2;
	}
	long iters = atol(argv[2]);
	int rounds = atoi(argv[3]);
	if (iters < NPATHS || rounds < 1 || rounds > MAXROUNDS) {
		fprintf(stderr, "hitstub: ITERS >= %d, ROUNDS 1..%d\n", NPATHS, MAXROUNDS);
		return 2;
	}
	for (int i = 0; i < NPATHS; i++) {
		snprintf(files[i], sizeof(files[i]), "%s/f%03d.c", argv[1], i);
		snprintf(links[i], sizeof(links[i]), "%s/l%03d.h", argv[1], i);
		/* made by system calls of their own: the stub's open would not */
		FILE *f = fopen(files[i], "w");
		if (!f || fclose(f) != 0 || symlink(files[i], links[i]) != 0) {
			perror("hitstub: setup");
			return 1;
		}
	}
	static const struct {
		const char *name;
		enum op op;
	} ops[] = {{"stat-one", STAT_ONE}, {"open-one", OPEN_ONE}, {"stat-256", STAT_256},
		   {"stat-link", STAT_LINK}, {"access-256", ACCESS_256}, {"kernel-stat", KERNEL_STAT}};
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		double r[MAXROUNDS];
		/* the kernel's stat is slow: a tenth of the calls */
		long n = ops[k].op == KERNEL_STAT ? iters / 10 : iters;
		run(ops[k].op, 2 * NPATHS + 2000); /* untimed: every path's first touch, the memo's trial */
		for (int j = 0; j < rounds; j++) {
			double t0 = now_ns();
			run(ops[k].op, n);
			r[j] = (now_ns() - t0) / (double)n;
		}
		qsort(r, (size_t)rounds, sizeof(r[0]), cmp);
		printf("%s %.2f\n", ops[k].name, r[rounds / 2]);
	}
	return 0;
}
