/*
 * tests/bench/askpair.c - an ask miss against a bare unix-socket round trip, paired round by
 * round in one process (issue 3's "miss path" target).
 *
 *   askpair DIR ROUNDS PER
 *
 * Run under `sandtrace run --policy P --` where P says "ask read DIR".  Creates ROUNDS * PER
 * files under DIR (untimed), forks an echo process on a socketpair, then for each round r:
 *
 *   raw    PER stats of round r's files by an inline system call (no wrapper sees them):
 *          the untraced cost of the call the shim then makes
 *   ask    PER stats of the same files through libc: each a first touch under the ask rule,
 *          so each one a request to the daemon and its answer
 *   rtt    PER round trips to the echo process (an 80-byte request, a 24-byte reply: the
 *          sizes of an ACCESS request and its VERDICT), by inline system calls
 *
 * in an order that rotates with r (so that neither side always runs right after the other),
 * and prints one line per round: "r RAW_NS ASK_NS RTT_NS", nanoseconds per call in wall time
 * (CLOCK_MONOTONIC).  The miss is ASK - RAW; the driver (scripts/bench-ask) sets each round's
 * miss against that round's round trip and prints the median and spread of the ratios.
 * x86-64 Linux only (shim/rawsys.h).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../shim/rawsys.h"
#include "echo.h"

#if !ST_HAVE_RAW_SYSCALL
#error "askpair needs an inline system call (x86-64 Linux)"
#endif

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* n bytes through fd by inline system calls; false on EOF or error */
static int raw_io(int fd, void *buf, size_t n, int rd)
{
	size_t done = 0;
	while (done < n) {
		long r = st__sys6(rd ? SYS_read : SYS_write, fd, (long)((char *)buf + done),
				  (long)(n - done), 0, 0, 0);
		if (r <= 0)
			return 0;
		done += (size_t)r;
	}
	return 1;
}

static void name(char *buf, size_t cap, const char *dir, long i)
{
	snprintf(buf, cap, "%s/d%03ld/f%06ld.h", dir, i % 64, i);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s DIR ROUNDS PER\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	long rounds = atol(argv[2]), per = atol(argv[3]);
	if (rounds < 1 || per < 1)
		die("ROUNDS and PER must be positive");
	char p[PATH_MAX];
	for (int d = 0; d < 64; d++) {
		snprintf(p, sizeof(p), "%s/d%03d", dir, d);
		if (mkdir(p, 0755) != 0)
			die("mkdir");
	}
	for (long i = 0; i < rounds * per; i++) {
		name(p, sizeof(p), dir, i);
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 || close(fd) != 0)
			die("create");
	}
	int efd;
	pid_t pid = echo_start(&efd);
	if (pid < 0)
		die("echo process");
	/* untimed: the daemon's first answer may load the package registry */
	snprintf(p, sizeof(p), "%s/warm-up.h", dir);
	struct stat st;
	stat(p, &st);

	char req[ECHO_REQUEST] = {0}, rep[ECHO_REPLY];
	for (long r = 0; r < rounds; r++) {
		double t[3] = {0, 0, 0};
		for (int k = 0; k < 3; k++) {
			int which = (int)((k + r) % 3);
			double t0 = now_ns();
			for (long i = r * per; i < (r + 1) * per; i++) {
				if (which == 0) {
					name(p, sizeof(p), dir, i);
					if (st__sys6(SYS_newfstatat, AT_FDCWD, (long)p, (long)&st, 0, 0, 0) != 0)
						die("raw stat");
				} else if (which == 1) {
					name(p, sizeof(p), dir, i);
					if (stat(p, &st) != 0)
						die("stat");
				} else if (!raw_io(efd, req, sizeof(req), 0) ||
					   !raw_io(efd, rep, sizeof(rep), 1)) {
					die("echo");
				}
			}
			t[which] = (now_ns() - t0) / (double)per;
		}
		printf("%ld %.1f %.1f %.1f\n", r, t[0], t[1], t[2]);
	}
	close(efd);
	waitpid(pid, NULL, 0);
	return 0;
}
