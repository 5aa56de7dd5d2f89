/* B34: a directory deeper than PATH_MAX, reached with openat and fchdir
 * chains: relative accesses from there (a dirfd, the cwd) behave as
 * untraced, and are recorded by their full path. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LEVELS 24

static const char *en(int r) { return r < 0 ? strerrorname_np(errno) : "ok"; }

int main(void)
{
	char comp[201];
	int dfd = open(".", O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < LEVELS; i++) {
		memset(comp, 'a' + i, 200);
		comp[200] = 0;
		if (mkdirat(dfd, comp, 0755) != 0) {
			printf("mkdirat %d: %s\n", i, strerrorname_np(errno));
			return 1;
		}
		int n = openat(dfd, comp, O_RDONLY | O_DIRECTORY);
		close(dfd);
		dfd = n;
	}
	int fd = openat(dfd, "leaf", O_CREAT | O_WRONLY, 0644);
	printf("openat creat: %s\n", en(fd));
	if (fd >= 0)
		close(fd);
	struct stat st;
	printf("fstatat: %s\n", en(fstatat(dfd, "leaf", &st, 0)));
	printf("fstatat missing: %s\n", en(fstatat(dfd, "nope", &st, 0)));
	printf("fchdir: %s\n", en(fchdir(dfd)));
	fd = open("leaf", O_RDONLY);
	printf("open: %s\n", en(fd));
	if (fd >= 0)
		close(fd);
	printf("stat missing: %s\n", en(stat("nope", &st)));
	printf("mkdir: %s\n", en(mkdir("sub", 0755)));
	printf("rename: %s\n", en(rename("leaf", "leaf2")));
	DIR *d = opendir(".");
	int ents = 0;
	while (d && readdir(d))
		ents++;
	printf("opendir: %s %d\n", d ? "ok" : strerrorname_np(errno), ents);
	if (d)
		closedir(d);
	return 0;
}
