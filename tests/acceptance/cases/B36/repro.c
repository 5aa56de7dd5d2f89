/* B36: catopen with a path, fanotify_mark (libc and raw): path-taking
 * calls whose files libc or the kernel reach without an open wrapper. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <nl_types.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *en(int ok) { return ok ? "ok" : strerrorname_np(errno); }

int main(int argc, char **argv)
{
	nl_catd c = catopen("./cat.cat", 0);
	printf("catopen: %s\n", en(c != (nl_catd)-1));
	if (c != (nl_catd)-1)
		catclose(c);
	c = catopen("./nocat.cat", 0);
	printf("catopen missing: %s\n", en(c != (nl_catd)-1));
	int fa = fanotify_init(FAN_CLASS_NOTIF, O_RDONLY);
	if (fa < 0) { /* not root: nothing to watch with */
		printf("fanotify_mark: skipped\nfanotify_mark missing: skipped\nSYS_fanotify_mark: skipped\n");
		return 0;
	}
	printf("fanotify_mark: %s\n",
	       en(fanotify_mark(fa, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, "watched") == 0));
	printf("fanotify_mark missing: %s\n",
	       en(fanotify_mark(fa, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, "nowatch") == 0));
	printf("SYS_fanotify_mark: %s\n",
	       en(syscall(SYS_fanotify_mark, fa, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, "rawwatched") == 0));
	return 0;
}
