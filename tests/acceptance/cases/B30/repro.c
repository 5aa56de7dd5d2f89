/* B30: the execvp family as glibc runs it: the ENOEXEC fallback to /bin/sh
 * (a script without "#!"), also for a name with a slash and for an empty
 * argv, and an empty PATH entry (the cwd) spelled as the bare name. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void run(const char *label, int how)
{
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		char *av[] = {"argzero", "one", NULL};
		char *none[] = {NULL};
		switch (how) {
		case 0: execvp("./plain", av); break;                   /* slash: ENOEXEC -> sh */
		case 1: setenv("PATH", "/nonexistent:.", 1); execvp("plain", av); break;
		case 2: execlp("./plain", "argzero", "one", (char *)NULL); break;
		case 3: execvpe("./plain", av, environ); break;
		case 4: execvp("./plain", none); break;                 /* argc 0 */
		case 5: setenv("PATH", ":/nonexistent", 1); execvp("hashbang", av); break;
		case 6: setenv("PATH", "", 1); execvp("hashbang", av); break;
		case 7: setenv("PATH", "/nonexistent::/usr/bin", 1); execvp("plain", av); break;
		}
		printf("%s: exec failed: %s\n", label, strerrorname_np(errno));
		fflush(stdout);
		_exit(99);
	}
	int st;
	waitpid(p, &st, 0);
	printf("%s: status %d\n", label, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

int main(void)
{
	run("slash", 0);
	run("path", 1);
	run("execlp", 2);
	run("execvpe", 3);
	run("argc0", 4);
	run("empty-first", 5);
	run("empty-path", 6);
	run("empty-mid", 7);
	return 0;
}
