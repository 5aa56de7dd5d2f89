/* tests/drivers/swaprace.c - a name swapped for a link to a denied file while a thread of the same process checks it. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * usage: swaprace ALLOWED DENIED N
 *   N attempts: a new thread stats the allowed file ALLOWED 400 times (its
 *   memo's trial begins at its 128th call), and at a random one of its calls
 *   between 140 and 380 the main thread makes ALLOWED a symlink to DENIED
 *   (symlink next to it, rename over it); once the swap is done the thread
 *   stats ALLOWED 20 more times, each of which must fail (the name now leads
 *   to a denied file).  ALLOWED is made a plain file again between attempts.
 *   Prints "N of M attempts leaked" (the attempts in which any of the 20
 *   stats succeeded); exits 1 when any leaked.  A decision made while the
 *   swap lands must never be cached as valid after it (shim/check.c,
 *   take_gens and st__fast_pre's epoch).
 */
static const char *allowed, *denied;
static int calls, swapped, leaks;

static void *checker(void *unused)
{
	struct stat st;
	(void)unused;
	for (int i = 0; i < 400; i++) {
		stat(allowed, &st);
		__atomic_store_n(&calls, i, __ATOMIC_RELEASE);
	}
	while (!__atomic_load_n(&swapped, __ATOMIC_ACQUIRE))
		;
	for (int i = 0; i < 20; i++)
		if (stat(allowed, &st) == 0)
			leaks++;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: swaprace ALLOWED DENIED N\n");
		return 2;
	}
	allowed = argv[1];
	denied = argv[2];
	int n = atoi(argv[3]), bad = 0;
	char tmp[4096], fresh[4096];
	snprintf(tmp, sizeof(tmp), "%s.swap", allowed);
	snprintf(fresh, sizeof(fresh), "%s.fresh", allowed);
	srand(1);
	for (int a = 0; a < n; a++) {
		pthread_t t;
		calls = swapped = leaks = 0;
		if (pthread_create(&t, NULL, checker, NULL) != 0) {
			perror("swaprace: pthread_create");
			return 2;
		}
		int at = 140 + rand() % 240;
		while (__atomic_load_n(&calls, __ATOMIC_ACQUIRE) < at)
			;
		if (symlink(denied, tmp) != 0 || rename(tmp, allowed) != 0) {
			perror("swaprace: swap");
			return 2;
		}
		__atomic_store_n(&swapped, 1, __ATOMIC_RELEASE);
		pthread_join(t, NULL);
		bad += leaks != 0;
		int fd = open(fresh, O_CREAT | O_WRONLY | O_TRUNC, 0644);
		if (fd < 0 || close(fd) != 0 || rename(fresh, allowed) != 0) {
			perror("swaprace: restore");
			return 2;
		}
	}
	printf("%d of %d attempts leaked\n", bad, n);
	return bad != 0;
}
