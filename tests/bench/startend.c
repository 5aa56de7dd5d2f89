/*
 * tests/bench/startend.c - what the preloaded objects' constructors between
 * tests/bench/startmark.c's and main cost a new image (scripts/bench-start): the shim's
 * attach (arena open and map), its HELLO and its look-ups of the libraries the loader
 * mapped, or nothing but a forwarding preload's.
 *
 * usage: startend FILE   appends "NS MINFLT\n": nanoseconds since the mark and the minor
 *                        faults taken since (one line per process: O_APPEND)
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

extern struct timespec startmark_t0;
extern long startmark_minflt0;

int main(int argc, char **argv)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	if (argc != 2)
		return 2;
	long ns = (t1.tv_sec - startmark_t0.tv_sec) * 1000000000L +
		  (t1.tv_nsec - startmark_t0.tv_nsec);
	char b[64];
	int n = snprintf(b, sizeof(b), "%ld %ld\n", ns, u.ru_minflt - startmark_minflt0);
	int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, b, (size_t)n) != n)
		return 1;
	return close(fd) == 0 ? 0 : 1;
}
