/* B45: libc's other public names of the functions that take a path or make
 * a process (glibc's aliases, each its own dynamic symbol at the same
 * address): _IO_fopen, _IO_popen, __statfs, __setmntent, __connect,
 * __newlocale, __fork, __vfork, __clone, __waitpid.  A program (or a
 * library built against an old libio) that calls one reaches no wrapper
 * of the other name. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

extern FILE *_IO_fopen(const char *, const char *);
extern FILE *_IO_popen(const char *, const char *);
extern int _IO_pclose(FILE *);
extern int __statfs(const char *, struct statfs *);
extern FILE *__setmntent(const char *, const char *);
extern int __connect(int, const struct sockaddr *, socklen_t);
extern locale_t __newlocale(int, const char *, locale_t);
extern pid_t __fork(void);
extern pid_t __vfork(void);
extern int __clone(int (*)(void *), void *, int, void *, ...);
extern pid_t __waitpid(pid_t, int *, int);

static const char *en(int ok) { return ok ? "ok" : strerrorname_np(errno); }

static int child(void *arg)
{
	return open((const char *)arg, O_RDONLY) >= 0 ? 0 : 1;
}

int main(void)
{
	FILE *f = _IO_fopen("a1", "r");
	printf("_IO_fopen: %s\n", en(f != NULL));
	struct statfs sf;
	printf("__statfs: %s\n", en(__statfs("a2", &sf) == 0));
	f = __setmntent("a3", "r");
	printf("__setmntent: %s\n", en(f != NULL));
	fflush(stdout);
	f = _IO_popen("cat a4 2>&1", "r");
	char line[128] = "";
	if (f && fgets(line, sizeof(line), f))
		line[strcspn(line, "\n")] = 0;
	printf("_IO_popen: %s\n", line);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strcpy(sa.sun_path, "sock");
	int ls = socket(AF_UNIX, SOCK_STREAM, 0); /* <W>/sock: a listening socket */
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		listen(ls, 4);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	printf("__connect: %s\n", en(__connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0));
	locale_t l = __newlocale(LC_CTYPE_MASK, "xx_YY.UTF-8", 0);
	printf("__newlocale: %s\n", en(l != 0));
	fflush(stdout);
	int st;
	pid_t p = __fork();
	if (p == 0)
		_exit(child("a5"));
	__waitpid(p, &st, 0);
	printf("__fork: child %d\n", WEXITSTATUS(st));
	fflush(stdout);
	p = __vfork();
	if (p == 0) {
		execl("/bin/cat", "cat", "a6", (char *)0);
		_exit(127);
	}
	__waitpid(p, &st, 0);
	printf("__vfork: child %d\n", WEXITSTATUS(st));
	static char stack[64 * 1024];
	p = __clone(child, stack + sizeof(stack), SIGCHLD, "a7");
	__waitpid(p, &st, 0);
	printf("__clone: child %d\n", WEXITSTATUS(st));
	return 0;
}
