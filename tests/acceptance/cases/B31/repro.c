/* B31: libc moves the working directory with its own internal calls:
 * nftw with FTW_CHDIR (into each directory before the callback), fts_close
 * (back to where fts_open was called).  A relative name used after such a
 * move must be judged and recorded where it really is. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int seen;

/* FTW_CHDIR: the cwd is the entry's directory, so its base name opens it */
static int cb(const char *p, const struct stat *s, int type, struct FTW *f)
{
	(void)s;
	if (type != FTW_F)
		return 0;
	int fd = open(p + f->base, O_RDONLY);
	char c = 0;
	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '?';
		close(fd);
	}
	printf("nftw %s %c\n", p, fd >= 0 ? c : '-');
	seen++;
	return 0;
}

/* a callback that puts descriptors of its own on high numbers (as a shell's
 * N>file would): they are the program's, and stay open after the walk */
static int took;
static int cb_dup(const char *p, const struct stat *s, int type, struct FTW *f)
{
	(void)p, (void)s, (void)type, (void)f;
	if (!took++) {
		int fd = open("/dev/null", O_RDONLY);
		for (int i = 100; i < 110; i++)
			dup2(fd, i);
		close(fd);
	}
	return 0;
}

int main(void)
{
	if (nftw("tree", cb, 8, FTW_CHDIR | FTW_PHYS) != 0)
		printf("nftw failed: %s\n", strerrorname_np(errno));
	/* back where it started: a relative name is the top's */
	int fd = open("top", O_RDONLY);
	printf("after nftw: top %s\n", fd >= 0 ? "ok" : strerrorname_np(errno));
	if (fd >= 0)
		close(fd);

	char *roots[] = {"tree", NULL};
	FTS *fts = fts_open(roots, FTS_PHYSICAL, NULL);
	FTSENT *e;
	while ((e = fts_read(fts)) != NULL)
		if (e->fts_info == FTS_F)
			break; /* stop inside the tree: fts is in tree/sub now */
	printf("fts stopped at %s\n", e ? e->fts_path : "(end)");
	fts_close(fts);
	fd = open("top", O_RDONLY);
	printf("after fts_close: top %s\n", fd >= 0 ? "ok" : strerrorname_np(errno));
	if (fd >= 0)
		close(fd);
	nftw("tree", cb_dup, 8, FTW_CHDIR | FTW_PHYS);
	int lost = 0;
	for (int i = 100; i < 110; i++)
		lost += fcntl(i, F_GETFD) < 0;
	printf("program's descriptors closed: %d\n", lost);
	return seen == 1 ? 0 : 1;
}
