/* B40: mount and umount (as root, in a private mount namespace): the target
 * and a bind's source are names like any other; a bind mount changes what
 * every name under the target resolves to. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *en(long r) { return r == 0 ? "ok" : strerrorname_np(errno); }

int main(void)
{
	struct stat st;
	/* before: tgt/x is not there (a miss the shim may cache) */
	printf("stat tgt/x before: %s\n", en(stat("tgt/x", &st)));
	printf("mount bind src tgt: %s\n", en(mount("src", "tgt", NULL, MS_BIND, NULL)));
	/* src/x is a link to ../secret: under the mount, tgt/x leads there */
	printf("stat tgt/x after: %s\n", en(stat("tgt/x", &st)));
	int fd = open("tgt/x", O_RDONLY);
	printf("open tgt/x: %s\n", fd >= 0 ? "ok" : strerrorname_np(errno));
	printf("umount tgt: %s\n", en(umount2("tgt", 0)));
	printf("mount bind secretdir tgt: %s\n",
	       en(mount("secretdir", "tgt", NULL, MS_BIND, NULL)));
	printf("mount bind src secretdir: %s\n",
	       en(syscall(SYS_mount, "src", "secretdir", NULL, MS_BIND, NULL)));
	printf("umount secretdir: %s\n", en(syscall(SYS_umount2, "secretdir", 0)));
	return 0;
}
