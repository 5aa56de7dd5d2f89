/*
 * tests/drivers/chain.c - exec chains whose last image is reaped (integration/lifecycle.sh).
 *
 *   chain drive N      fork N children, one at a time; each execs "chain 0", which stats
 *                      three names of its own and execs "chain 1", and so on to "chain 3",
 *                      which exits with its pid % 100; the driver reaps each child before
 *                      the next
 *   chain K            one stage (K = 0..3)
 *
 * Run by two drivers at once in a small arena (--arena-size 64K): the images' records then
 * come by their own connections while the drivers' reaps go by theirs or the log, and the
 * daemon must still give each pid's images in order, the exec'd ones marked, and the exit
 * status to the last image only.  Stat names: DIR/chain-K-PID-I (DIR from $CHAIN_DIR).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *dir = getenv("CHAIN_DIR");
	if (argc < 2 || !dir) {
		fprintf(stderr, "usage: CHAIN_DIR=DIR %s drive N | K\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "drive") && argc > 2) {
		int n = atoi(argv[2]);
		for (int i = 0; i < n; i++) {
			pid_t c = fork();
			if (c == 0) {
				execl("/proc/self/exe", argv[0], "0", (char *)NULL);
				_exit(127);
			}
			int st;
			if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) ||
			    WEXITSTATUS(st) != c % 100) {
				fprintf(stderr, "chain: child %d: status %d\n", (int)c, st);
				return 1;
			}
		}
		return 0;
	}
	int k = atoi(argv[1]);
	char p[4096];
	struct stat st;
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/chain-%d-%d-%d", dir, k, (int)getpid(), i);
		stat(p, &st);
	}
	if (k < 3) {
		char next[12];
		snprintf(next, sizeof(next), "%d", k + 1);
		execl("/proc/self/exe", argv[0], next, (char *)NULL);
		_exit(126);
	}
	return getpid() % 100;
}
