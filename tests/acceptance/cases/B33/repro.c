/* B33: pthread_atfork handlers that open files: the prepare and parent
 * handlers run in the parent, the child handler in the child, all inside
 * fork().  Their opens are the program's: checked and recorded as any. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int e_prep, e_par, e_chi;

static int try_open(const char *p)
{
	int fd = open(p, O_RDONLY);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}
static void prep(void) { e_prep = try_open("in-prepare"); }
static void par(void) { e_par = try_open("in-parent"); }
static void chi(void) { e_chi = try_open("in-child"); }
static const char *res(int e) { return e ? strerrorname_np(e) : "opened"; }

int main(void)
{
	pthread_atfork(prep, par, chi);
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		printf("child handler: %s\n", res(e_chi));
		fflush(stdout);
		_exit(0);
	}
	waitpid(p, NULL, 0);
	printf("prepare handler: %s\n", res(e_prep));
	printf("parent handler: %s\n", res(e_par));
	printf("outside: %s\n", res(try_open("in-prepare")));
	return 0;
}
