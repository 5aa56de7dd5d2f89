/* B32: children made by libc's own fork: _Fork (no atfork handlers),
 * daemon (fork, setsid, chdir("/")), forkpty.  Each child's accesses are
 * its own (its pid), and daemon's child works in "/". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void touch_read(const char *p)
{
	int fd = open(p, O_RDONLY);
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	const char *w = argv[1];
	char p[4096];
	if (chdir(w) != 0)
		return 2;
	printf("parent %d\n", (int)getpid());
	fflush(stdout);
	pid_t c = _Fork();
	if (c == 0) {
		printf("_Fork-child %d\n", (int)getpid());
		fflush(stdout);
		touch_read("by_fork");
		_exit(0);
	}
	waitpid(c, NULL, 0);
	int m;
	c = forkpty(&m, NULL, NULL, NULL);
	if (c == 0) {
		touch_read("by_forkpty");
		_exit(0);
	}
	waitpid(c, NULL, 0);
	close(m);
	if (daemon(0, 1) != 0)
		return 3;
	printf("daemon-child %d\n", (int)getpid());
	fflush(stdout);
	/* daemon(0, ...) moved the cwd to "/": relative names are the root's */
	snprintf(p, sizeof(p), "%s/by_daemon", w + 1);
	touch_read(p);
	snprintf(p, sizeof(p), "%s/done", w);
	close(open(p, O_CREAT | O_WRONLY, 0644));
	return 0;
}
