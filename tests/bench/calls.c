/*
 * tests/bench/calls.c - per-call cost of the calls sandtrace intercepts (issue 6).
 *
 *   calls DIR [ITERS [SPAWNS]]
 *
 * Creates NPATHS files and as many symlinks under DIR (which must exist and be empty), then
 * for each operation measures the time per call:
 *
 *   first touch  stat of each file once, the first time it is seen (with sandtrace: a cache
 *                miss, one message to the daemon per path)
 *   stat, stat-missing, exec-missing, open+close, access, readlink
 *                ITERS calls round-robin over the same NPATHS paths, after an untimed warm-up
 *                pass over them: with sandtrace every access is a Ctrie hit (or, with
 *                --no-cache, a round trip); ROUNDS timed rounds, the median is printed
 *   stat-one     ITERS stats of one path (the shim's per-thread memo of warm accesses
 *                answers them; the round robin over NPATHS paths is too wide for it)
 *   exec         fork + execve("/bin/true") + waitpid, SPAWNS times, per spawn
 *   socket-rtt   a bare unix-socket round trip to a forked echo process (an 80-byte request,
 *                a 24-byte reply: the size of an ACCESS request and its VERDICT), the floor
 *                under any answer from the daemon; not intercepted
 *
 * Output: one line "OP WALL_NS CPU_NS" per operation: nanoseconds per call, median of the
 * rounds, in wall time (CLOCK_MONOTONIC) and in this thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID, user + sys: robust to a loaded machine; "-" for exec).
 * Nothing is compared against anything: the driver (scripts/bench-calls) runs this binary
 * untraced and under each sandtrace mode and prints the table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "echo.h"

#define NPATHS 256
#define ROUNDS 5

static char files[NPATHS][PATH_MAX];
static char links[NPATHS][PATH_MAX];
static char missing[NPATHS][PATH_MAX];
static volatile long sink;

static double clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* CPU time of this thread (user + sys): what the call costs the caller, without the time
 * spent descheduled on a loaded machine (nor, with --no-cache, waiting for the daemon). */
static double cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

enum op { OP_STAT, OP_STAT_ONE, OP_MISSING, OP_EXEC_MISSING, OP_OPEN, OP_ACCESS, OP_READLINK };

static void do_op(enum op op, int i)
{
	struct stat st;
	char buf[PATH_MAX];
	int fd;
	switch (op) {
	case OP_STAT:
		if (stat(files[i], &st) != 0)
			die("stat");
		sink += st.st_size;
		break;
	case OP_STAT_ONE: /* one warm path over and over (the thread's memo of warm accesses) */
		if (stat(files[0], &st) != 0)
			die("stat");
		sink += st.st_size;
		(void)i;
		break;
	case OP_MISSING:
		if (stat(missing[i], &st) == 0 || errno != ENOENT)
			die("stat of a missing path");
		break;
	case OP_EXEC_MISSING: { /* one candidate of a PATH search that is not there */
		char *const av[] = {(char *)"x", NULL};
		if (execv(missing[i], av) == 0 || errno != ENOENT)
			die("exec of a missing path");
		break;
	}
	case OP_OPEN:
		fd = open(files[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			die("open");
		close(fd);
		break;
	case OP_ACCESS:
		if (access(files[i], R_OK) != 0)
			die("access");
		break;
	case OP_READLINK:
		if (readlink(links[i], buf, sizeof(buf)) < 0)
			die("readlink");
		break;
	}
}

static double median(double *r)
{
	qsort(r, ROUNDS, sizeof(r[0]), cmp_double);
	return r[ROUNDS / 2];
}

static void bench(const char *name, enum op op, long iters)
{
	double r[ROUNDS], c[ROUNDS];
	for (int i = 0; i < NPATHS; i++) /* warm-up: every path seen once */
		do_op(op, i);
	for (int k = 0; k < ROUNDS; k++) {
		double t0 = now_ns(), c0 = cpu_ns();
		for (long n = 0; n < iters; n++)
			do_op(op, (int)(n % NPATHS));
		c[k] = (cpu_ns() - c0) / (double)iters;
		r[k] = (now_ns() - t0) / (double)iters;
	}
	printf("%s %.1f %.1f\n", name, median(r), median(c));
}

static double bench_exec(int spawns)
{
	char *const argv[] = {"true", NULL};
	extern char **environ;
	double r[ROUNDS];
	int per = spawns / ROUNDS > 0 ? spawns / ROUNDS : 1;
	for (int k = 0; k < ROUNDS; k++) {
		double t0 = now_ns();
		for (int n = 0; n < per; n++) {
			pid_t pid = fork();
			if (pid < 0)
				die("fork");
			if (pid == 0) {
				execve("/bin/true", argv, environ);
				_exit(127);
			}
			int status;
			if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
			    WEXITSTATUS(status) != 0)
				die("waitpid /bin/true");
		}
		r[k] = (now_ns() - t0) / per;
	}
	qsort(r, ROUNDS, sizeof(r[0]), cmp_double);
	return r[ROUNDS / 2];
}

static void bench_socket_rtt(long iters)
{
	int fd;
	pid_t pid = echo_start(&fd);
	if (pid < 0)
		die("echo process");
	char req[ECHO_REQUEST] = {0}, rep[ECHO_REPLY];
	double w[ROUNDS], c[ROUNDS];
	long per = iters / 10 > 100 ? iters / 10 : 100;
	for (int k = 0; k < ROUNDS; k++) {
		double t0 = now_ns(), c0 = cpu_ns();
		for (long n = 0; n < per; n++) {
			if (!echo_io(fd, req, sizeof(req), 0) || !echo_io(fd, rep, sizeof(rep), 1))
				die("socket round trip");
		}
		w[k] = (now_ns() - t0) / per;
		c[k] = (cpu_ns() - c0) / per;
	}
	close(fd);
	waitpid(pid, NULL, 0);
	qsort(w, ROUNDS, sizeof(w[0]), cmp_double);
	qsort(c, ROUNDS, sizeof(c[0]), cmp_double);
	printf("socket-rtt %.1f %.1f\n", w[ROUNDS / 2], c[ROUNDS / 2]);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR [ITERS [SPAWNS]]\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	long iters = argc > 2 ? atol(argv[2]) : 100000;
	int spawns = argc > 3 ? atoi(argv[3]) : 250;
	if (iters < NPATHS)
		iters = NPATHS;

	for (int i = 0; i < NPATHS; i++) {
		snprintf(files[i], sizeof(files[i]), "%s/src/module%03d/file%03d.c", dir, i % 16, i);
		snprintf(links[i], sizeof(links[i]), "%s/src/module%03d/link%03d.h", dir, i % 16, i);
		snprintf(missing[i], sizeof(missing[i]), "%s/src/module%03d/none%03d.h", dir, i % 16, i);
	}
	char d[PATH_MAX];
	snprintf(d, sizeof(d), "%s/src", dir);
	if (mkdir(d, 0755) != 0 && errno != EEXIST)
		die("mkdir");
	for (int i = 0; i < 16; i++) {
		snprintf(d, sizeof(d), "%s/src/module%03d", dir, i);
		if (mkdir(d, 0755) != 0 && errno != EEXIST)
			die("mkdir");
	}
	for (int i = 0; i < NPATHS; i++) {
		int fd = open(files[i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			die("create");
		if (write(fd, "int x;\n", 7) != 7)
			die("write");
		close(fd);
		char target[32];
		snprintf(target, sizeof(target), "file%03d.c", i);
		if (symlink(target, links[i]) != 0 && errno != EEXIST)
			die("symlink");
	}

	/* untimed: one first touch before the timed ones, so that a daemon that loads
	 * something on its first answer (the package registry, for ask rules) pays for it here */
	{
		struct stat st;
		snprintf(d, sizeof(d), "%s/src/warm-up.c", dir);
		stat(d, &st);
	}
	/* first touch: one stat per path never looked at before (creating them was a write) */
	double t0 = now_ns(), c0 = cpu_ns();
	for (int i = 0; i < NPATHS; i++) {
		struct stat st;
		if (stat(files[i], &st) != 0)
			die("stat");
	}
	printf("first-touch-stat %.1f %.1f\n", (now_ns() - t0) / NPATHS, (cpu_ns() - c0) / NPATHS);

	static const struct {
		const char *name;
		enum op op;
	} ops[] = {{"stat", OP_STAT},
		   {"stat-one", OP_STAT_ONE},
		   {"stat-missing", OP_MISSING},
		   {"exec-missing", OP_EXEC_MISSING},
		   {"open+close", OP_OPEN},
		   {"access", OP_ACCESS},
		   {"readlink", OP_READLINK}};
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		bench(ops[k].name, ops[k].op, iters);
	/* exec: wall only (the child's CPU is not this thread's) */
	printf("exec %.1f -\n", bench_exec(spawns));
	bench_socket_rtt(iters);
	(void)sink;
	return 0;
}
