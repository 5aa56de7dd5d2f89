/* tests/unit/test_pathnorm.c - the shim's path arithmetic: join, clean, fold, and resolution against a real tree. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

static char *clean(const char *in)
{
	static char buf[ST_PATH_BUF];
	strcpy(buf, in);
	ssize_t n = st__path_clean(buf, strlen(buf));
	return n < 0 ? NULL : buf;
}

static char *fold(const char *in)
{
	static char buf[ST_PATH_BUF];
	strcpy(buf, in);
	ssize_t n = st__path_fold(buf, strlen(buf));
	return n < 0 ? NULL : buf;
}

/* A pointer the kernel would refuse with EFAULT is told without reading it
 * (shim.h st__unreadable): NULL, the first pages, the kernel half, past the
 * user half; a good one is not, nor (by the odd test alone) one in the usual
 * range; the slow half asks the kernel, and tells an unmapped or PROT_NONE
 * page too when asked. */
START_TEST(test_unreadable)
{
	static const char data[] = "/a";
	char stack[] = "/b";
	ck_assert(st__unreadable(NULL));
	ck_assert(st__unreadable((char *)1));
	ck_assert(st__unreadable((char *)4095));
	ck_assert(st__unreadable((char *)65535));
	ck_assert(st__unreadable((char *)-1));
	ck_assert(st__unreadable((char *)0xffff800000000000ul));
#if defined(__x86_64__)
	ck_assert(st__odd_ptr((char *)0x0000800000000000ul));
	ck_assert(st__unreadable((char *)0x0000800000000000ul));
	ck_assert(!st__odd_ptr((char *)0x00007fffffffefffu));
#endif
	ck_assert(!st__odd_ptr(data) && !st__unreadable(data));
	ck_assert(!st__odd_ptr(stack) && !st__unreadable(stack));
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(m != MAP_FAILED);
	ck_assert(!st__unreadable_slow(m));
	ck_assert_int_eq(mprotect(m, pg, PROT_NONE), 0);
	ck_assert(st__unreadable_slow(m));
	ck_assert(!st__odd_ptr(m)); /* the known limit: the hit path does not ask */
	ck_assert(!st__unreadable_slow(m + pg));
	munmap(m, 2 * pg);
	ck_assert(st__unreadable_slow(m + pg));
	errno = 1234;
	(void)st__unreadable_slow(m);
	ck_assert_int_eq(errno, 1234);
}
END_TEST

/* The shim's inline system calls keep libc's syscall() contract: the result,
 * or -1 with errno set; six arguments in the right registers. */
START_TEST(test_st_syscall)
{
	ck_assert_int_eq(ST_SYSCALL(SYS_getpid), getpid());
	errno = 0;
	ck_assert_int_eq(ST_SYSCALL(SYS_close, -1), -1);
	ck_assert_int_eq(errno, EBADF);
	char buf[64];
	errno = 0;
	ck_assert_int_eq(ST_SYSCALL(SYS_readlinkat, AT_FDCWD, "/nonexistent-st/x", buf, sizeof(buf)),
			 -1);
	ck_assert_int_eq(errno, ENOENT);
	/* six arguments: mmap's sixth is the offset */
	int fd = open("/proc/self/exe", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	long p = ST_SYSCALL(SYS_mmap, NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 4096);
	ck_assert_int_ne(p, -1);
	char *direct = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 4096);
	ck_assert(direct != MAP_FAILED);
	ck_assert_int_eq(memcmp((void *)p, direct, 4096), 0);
	munmap((void *)p, 4096);
	munmap(direct, 4096);
	close(fd);
}
END_TEST

START_TEST(test_join)
{
	char out[64];
	ck_assert_int_eq(st__path_join("/a/b", 4, "c", strlen("c"), out, sizeof(out)), 6);
	ck_assert_str_eq(out, "/a/b/c");
	ck_assert_int_eq(st__path_join("/", 1, "c", strlen("c"), out, sizeof(out)), 2);
	ck_assert_str_eq(out, "/c");
	ck_assert_int_eq(st__path_join("/a", 2, "/abs", strlen("/abs"), out, sizeof(out)), 4);
	ck_assert_str_eq(out, "/abs");
	/* too long for the buffer: refused, not cut */
	ck_assert_int_eq(st__path_join("/aaaaaaaa", 9, "bbbbbbbbbb", strlen("bbbbbbbbbb"), out, 12), -1);
	/* in place: out is base (make_abs puts the cwd where abs goes) */
	strcpy(out, "/a/b");
	ck_assert_int_eq(st__path_join(out, 4, "c/d", strlen("c/d"), out, sizeof(out)), 8);
	ck_assert_str_eq(out, "/a/b/c/d");
	strcpy(out, "/");
	ck_assert_int_eq(st__path_join(out, 1, "c", strlen("c"), out, sizeof(out)), 2);
	ck_assert_str_eq(out, "/c");
	strcpy(out, "/a/");
	ck_assert_int_eq(st__path_join(out, 3, "c", strlen("c"), out, sizeof(out)), 4);
	ck_assert_str_eq(out, "/a/c");
}
END_TEST

START_TEST(test_clean)
{
	ck_assert_str_eq(clean("/a//b/./c/"), "/a/b/c");
	ck_assert_str_eq(clean("/"), "/");
	ck_assert_str_eq(clean("//"), "/");
	ck_assert_str_eq(clean("/."), "/");
	ck_assert_str_eq(clean("/a/."), "/a");
	ck_assert_str_eq(clean("/a/../b"), "/a/../b"); /* .. is kept: a may be a symlink */
	ck_assert_str_eq(clean("/a/.hidden/..x"), "/a/.hidden/..x");
	ck_assert_ptr_null(clean("relative"));
}
END_TEST

/* The reference: component by component, "" and "." dropped, ".." kept. */
static size_t clean_ref(const char *in, size_t len, char *out)
{
	size_t w = 0, r = 0;
	while (r < len) {
		while (r < len && in[r] == '/')
			r++;
		size_t s = r;
		while (r < len && in[r] != '/')
			r++;
		if (r == s || (r - s == 1 && in[s] == '.'))
			continue;
		out[w++] = '/';
		memcpy(out + w, in + s, r - s);
		w += r - s;
	}
	if (w == 0)
		out[w++] = '/';
	out[w] = 0;
	return w;
}

/* The word-at-a-time clean-path check against the reference on every
 * shape: random paths over '/', '.', 'a' and a high byte, 1..60 bytes, so
 * that "//" and "/." fall at every offset of an 8- or 16-byte window and
 * across windows. */
START_TEST(test_clean_random)
{
	static const char alpha[] = {'/', '.', 'a', (char)0xe9, '/', 'b'};
	char in[80], buf[80], want[160];
	unsigned seed = 12345;
	for (int t = 0; t < 200000; t++) {
		size_t len = 1 + (seed = seed * 1103515245u + 12345u) % 60;
		in[0] = '/';
		for (size_t i = 1; i < len; i++)
			in[i] = alpha[((seed = seed * 1103515245u + 12345u) >> 16 & 0xffff) % 6];
		memcpy(buf, in, len);
		ssize_t n = st__path_clean(buf, len);
		size_t m = clean_ref(in, len, want);
		ck_assert_msg(n == (ssize_t)m && memcmp(buf, want, m + 1) == 0,
			      "clean(%.*s) = %s, want %s", (int)len, in, buf, want);
	}
}
END_TEST

/* The run's flags are parsed without strtoul, in the constructor and when a
 * nested run's SANDTRACE_FLAGS is passed on at exec. */
START_TEST(test_parse_uint)
{
	ck_assert_uint_eq(st__parse_uint("0"), 0);
	ck_assert_uint_eq(st__parse_uint("1234567"), 1234567);
	ck_assert_uint_eq(st__parse_uint("4294967295"), 4294967295u);
	ck_assert_uint_eq(st__parse_uint("42x7"), 42); /* stops at the first non-digit */
	ck_assert_uint_eq(st__parse_uint(""), 0);
	ck_assert_uint_eq(st__parse_uint("-5"), 0);
}
END_TEST

START_TEST(test_fold)
{
	ck_assert_str_eq(fold("/a/b/../c"), "/a/c");
	ck_assert_str_eq(fold("/../.."), "/");
	ck_assert_str_eq(fold("/a/../../b/./c//d/.."), "/b/c");
	ck_assert_str_eq(fold("/a/..."), "/a/...");
	ck_assert_str_eq(fold("/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/stdio.h"),
			 "/usr/include/stdio.h");
}
END_TEST

static char tree[PATH_MAX];

static void make_tree(void)
{
	strcpy(tree, "/tmp/st-pathnorm-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tree));
	char p[PATH_MAX * 2], t[PATH_MAX * 2 + 16];
	snprintf(p, sizeof(p), "%s/real/sub", tree);
	ck_assert_int_eq(system((snprintf(t, sizeof(t), "mkdir -p %s", p), t)), 0);
	snprintf(p, sizeof(p), "%s/real/sub/file", tree);
	close(open(p, O_CREAT | O_WRONLY, 0644));
	snprintf(p, sizeof(p), "%s/link", tree); /* link -> real/sub */
	ck_assert_int_eq(symlink("real/sub", p), 0);
	snprintf(p, sizeof(p), "%s/abs", tree); /* abs -> <tree>/real */
	snprintf(t, sizeof(t), "%s/real", tree);
	ck_assert_int_eq(symlink(t, p), 0);
	snprintf(p, sizeof(p), "%s/loop1", tree);
	ck_assert_int_eq(symlink("loop2", p), 0);
	snprintf(p, sizeof(p), "%s/loop2", tree);
	ck_assert_int_eq(symlink("loop1", p), 0);
	snprintf(p, sizeof(p), "%s/dangling", tree);
	ck_assert_int_eq(symlink("real/newfile", p), 0);
	snprintf(p, sizeof(p), "%s/flink", tree); /* flink -> real/sub/file, a file */
	ck_assert_int_eq(symlink("real/sub/file", p), 0);
}

static void drop_tree(void)
{
	char t[PATH_MAX + 16];
	snprintf(t, sizeof(t), "rm -rf %s", tree);
	ck_assert_int_eq(system(t), 0);
}

static ssize_t res(const char *rel, bool follow, char *out, bool *magic)
{
	static char in[ST_PATH_BUF + PATH_MAX], scratch[ST_PATH_BUF];
	snprintf(in, sizeof(in), "%s/%s", tree, rel);
	return st__path_resolve(in, strlen(in), follow, out, ST_PATH_BUF, magic, scratch,
				sizeof(scratch), NULL);
}

START_TEST(test_resolve)
{
	char out[ST_PATH_BUF], want[ST_PATH_BUF];
	bool magic;
	make_tree();
	char *rt = realpath(tree, NULL); /* /tmp itself may be a link */
	ck_assert_int_gt(res("link/file", true, out, &magic), 0);
	snprintf(want, sizeof(want), "%s/real/sub/file", rt);
	ck_assert_str_eq(out, want);
	/* link/.. is physical: the parent of the link's target */
	ck_assert_int_gt(res("link/../sub/file", true, out, &magic), 0);
	ck_assert_str_eq(out, want);
	ck_assert_int_gt(res("abs/sub/file", true, out, &magic), 0);
	ck_assert_str_eq(out, want);
	/* nofollow: the link itself */
	ck_assert_int_gt(res("link", false, out, &magic), 0);
	snprintf(want, sizeof(want), "%s/link", rt);
	ck_assert_str_eq(out, want);
	/* a dangling link resolves to the name it would create */
	ck_assert_int_gt(res("dangling", true, out, &magic), 0);
	snprintf(want, sizeof(want), "%s/real/newfile", rt);
	ck_assert_str_eq(out, want);
	/* a loop gives up (the real call says ELOOP) and returns the spelling */
	ck_assert_int_gt(res("loop1", true, out, &magic), 0);
	snprintf(want, sizeof(want), "%s/loop1", tree);
	ck_assert_str_eq(out, want);
	/* missing components are appended lexically */
	ck_assert_int_gt(res("nope/a/b", true, out, &magic), 0);
	snprintf(want, sizeof(want), "%s/nope/a/b", rt);
	ck_assert_str_eq(out, want);
	/* but not past a "..": the kernel fails at the missing name, which
	 * is the one looked for in vain (nope/a/../b once gave nope/b, and
	 * nope/../real, a directory that is there, gave real) */
	ck_assert_int_gt(res("nope/a/../b", true, out, &magic), 0);
	snprintf(want, sizeof(want), "%s/nope", rt);
	ck_assert_str_eq(out, want);
	ck_assert_int_gt(res("nope/../real", true, out, &magic), 0);
	ck_assert_str_eq(out, want);
	/* a dangling link then "..": ENOENT at the link's target (was: x) */
	ck_assert_int_gt(res("dangling/../x", true, out, &magic), 0);
	snprintf(want, sizeof(want), "%s/real/newfile", rt);
	ck_assert_str_eq(out, want);
	ck_assert_int_gt(res("dangling/..", true, out, &magic), 0);
	ck_assert_str_eq(out, want);
	/* a file, by a link or not, then "..": ENOTDIR at the file (was: its
	 * directory's x) */
	snprintf(want, sizeof(want), "%s/real/sub/file", rt);
	ck_assert_int_gt(res("flink/../x", true, out, &magic), 0);
	ck_assert_str_eq(out, want);
	ck_assert_int_gt(res("real/sub/file/../x", true, out, &magic), 0);
	ck_assert_str_eq(out, want);
	ck_assert_int_gt(res("real/sub/file/y/../x", true, out, &magic), 0);
	ck_assert_str_eq(out, want);
	/* a directory then "..": its parent, as always */
	ck_assert_int_gt(res("real/sub/../sub/file", true, out, &magic), 0);
	ck_assert_str_eq(out, want);
	/* a directory that may not be searched, then "..": EACCES there (as
	 * root, every directory may be searched: its parent) */
	if (geteuid() != 0) {
		char p[PATH_MAX + 16];
		snprintf(p, sizeof(p), "%s/real/sub", tree);
		ck_assert_int_eq(chmod(p, 0), 0);
		ck_assert_int_gt(res("real/sub/../sub2", true, out, &magic), 0);
		snprintf(want, sizeof(want), "%s/real/sub", rt);
		ck_assert_str_eq(out, want);
		ck_assert_int_gt(res("real/sub/file/../x", true, out, &magic), 0);
		snprintf(want, sizeof(want), "%s/real/sub/file", rt);
		ck_assert_str_eq(out, want);
		ck_assert_int_eq(chmod(p, 0755), 0);
	}
	/* a symlink loop then "..": ELOOP at the loop, never at x (was: the
	 * rest folded lexically, <tree>/x; with x there, a file recorded as
	 * failing that the kernel never looked at) */
	ck_assert_int_gt(res("loop1/../real/sub/file", true, out, &magic), 0);
	ck_assert(strstr(out, "/loop1") || strstr(out, "/loop2"));
	ck_assert_ptr_null(strstr(out, "real"));
	/* without a "..", the loop's rest is kept as before */
	ck_assert_int_gt(res("loop1/x", true, out, &magic), 0);
	snprintf(want, sizeof(want), "%s/loop1/x", rt);
	ck_assert_str_eq(out, want);
	free(rt);
	drop_tree();
}
END_TEST

/* known and confirmed: the prefix a caller may skip (the shim's memo of
 * directories that resolve to themselves) and what the walk proved */
/* Sibling directories that differ only in their last bytes spread over the
 * slots (the hash once ignored a path's last two or three bytes, so a bump
 * in one directory invalidated its siblings' entries too) */
START_TEST(test_dir_slot)
{
	static unsigned char seen[4096];
	char p[64];
	unsigned distinct = 0;
	memset(seen, 0, sizeof(seen));
	for (int i = 0; i < 256; i++) {
		snprintf(p, sizeof(p), "/build/src/lib%02x/", i);
		unsigned s = st__dir_slot(p, strlen(p), 4096);
		ck_assert_uint_lt(s, 4096);
		distinct += !seen[s];
		seen[s] = 1;
	}
	/* 256 names in 4096 slots: about 8 collide by chance */
	ck_assert_uint_ge(distinct, 240);
	/* names that differ before their last component, at any length: 1000
	 * in 4096 slots fill about 887 at random */
	memset(seen, 0, sizeof(seen));
	distinct = 0;
	for (int i = 0; i < 1000; i++) {
		snprintf(p, sizeof(p), "/w/%.*spkg%03d/include/", i % 7, "xxxxxxx", i);
		unsigned s = st__dir_slot(p, strlen(p), 4096);
		distinct += !seen[s];
		seen[s] = 1;
	}
	ck_assert_uint_ge(distinct, 850);
	/* the directory part only: "/a/b/c" and "/a/b/" share a slot, and a
	 * name's last byte matters ("/m2/o/" and "/m2/w/" did not, once) */
	ck_assert_uint_eq(st__dir_slot("/a/b/c", 6, 4096), st__dir_slot("/a/b/", 5, 4096));
	ck_assert_uint_ne(st__dir_slot("/tmp/x/m2/o/", 12, 4096), st__dir_slot("/tmp/x/m2/w/", 12, 4096));
	ck_assert_uint_ne(st__dir_slot("/x/", 3, 4096), st__dir_slot("/y/", 3, 4096));
}
END_TEST

/* st__path_resolve of in into the static out, with known; *conf and *via get
 * what it confirmed and the links it followed */
static char walk_out[ST_PATH_BUF];
static ssize_t walk(const char *in, bool follow, size_t known, size_t *conf, unsigned *via)
{
	static char scratch[ST_PATH_BUF];
	bool magic;
	struct st_walk w = {.known = known, .confirmed = 99, .via_link = 99};
	ssize_t n = st__path_resolve(in, strlen(in), follow, walk_out, sizeof(walk_out), &magic,
				     scratch, sizeof(scratch), &w);
	*conf = w.confirmed;
	*via = w.via_link;
	return n;
}

START_TEST(test_resolve_confirmed)
{
	static char in[ST_PATH_BUF];
	size_t conf = 99, rtl;
	unsigned via = 99;
	make_tree();
	char *rt = realpath(tree, NULL);
	rtl = strlen(rt);
	/* no link on the way: all of it, or the directory part when the last
	 * component is not followed (it is not looked at) */
	snprintf(in, sizeof(in), "%s/real/sub/file", rt);
	ck_assert_int_eq(walk(in, true, 0, &conf, &via), (ssize_t)strlen(in));
	ck_assert_uint_eq(conf, strlen(in));
	ck_assert_uint_eq(via, 0);
	ck_assert_int_gt(walk(in, false, 0, &conf, &via), 0);
	ck_assert_uint_eq(conf, rtl + strlen("/real/sub"));
	/* a link stops it where the link is, and is reported followed */
	snprintf(in, sizeof(in), "%s/link/file", rt);
	ck_assert_int_gt(walk(in, true, 0, &conf, &via), 0);
	ck_assert_uint_eq(conf, rtl);
	ck_assert_uint_eq(via, ST_VIA_LINK);
	/* so does "..", and a missing component (appended lexically) */
	snprintf(in, sizeof(in), "%s/real/../real/sub/file", rt);
	ck_assert_int_gt(walk(in, true, 0, &conf, &via), 0);
	ck_assert_uint_eq(conf, rtl + strlen("/real"));
	ck_assert_uint_eq(via, 0);
	snprintf(in, sizeof(in), "%s/real/nope/file", rt);
	ck_assert_int_gt(walk(in, true, 0, &conf, &via), 0);
	ck_assert_uint_eq(conf, rtl + strlen("/real"));
	/* a loop: nothing is confirmed */
	snprintf(in, sizeof(in), "%s/loop1/x", rt);
	ck_assert_int_gt(walk(in, true, 0, &conf, &via), 0);
	ck_assert_uint_eq(conf, 0);
	/* known is taken on trust: vouching for "<tree>/link" (a link) keeps
	 * it as spelled, which shows that no readlink was made there */
	snprintf(in, sizeof(in), "%s/link/file", rt);
	ck_assert_int_gt(walk(in, true, rtl + strlen("/link"), &conf, &via), 0);
	ck_assert_str_eq(walk_out, in);
	ck_assert_uint_eq(conf, strlen(in));
	/* and an honest known gives what the whole walk gives */
	snprintf(in, sizeof(in), "%s/real/sub/file", rt);
	ck_assert_int_eq(walk(in, true, rtl + strlen("/real/sub"), &conf, &via), (ssize_t)strlen(in));
	ck_assert_str_eq(walk_out, in);
	/* a known that does not end before a '/' (or is all of in) is refused */
	ck_assert_int_eq(walk(in, true, rtl + 2, &conf, &via), -1);
	ck_assert_int_eq(walk(in, true, strlen(in), &conf, &via), -1);
	free(rt);
	drop_tree();
}
END_TEST

/* st_walk.through: the directories a ".." leaves, in order; the one named
 * in refuse (its last component) stops the walk */
static char left[8][ST_PATH_BUF];
static int nleft;
static const char *refuse;
static bool through(const char *dir, size_t len)
{
	ck_assert_uint_eq(strlen(dir), len);
	if (nleft < 8)
		snprintf(left[nleft++], ST_PATH_BUF, "%s", dir);
	const char *slash = strrchr(dir, '/');
	return !(refuse && slash && strcmp(slash + 1, refuse) == 0);
}

START_TEST(test_resolve_through)
{
	static char in[ST_PATH_BUF], out[ST_PATH_BUF], want[ST_PATH_BUF];
	char scratch[ST_PATH_BUF];
	bool magic;
	make_tree();
	char *rt = realpath(tree, NULL);
	/* each ".." asks about the directory it leaves, resolved (a link's
	 * target, not its name) */
	struct st_walk w = {.through = through};
	nleft = 0;
	refuse = NULL;
	snprintf(in, sizeof(in), "%s/real/sub/../../link/../sub/file", rt);
	ck_assert_int_gt(st__path_resolve(in, strlen(in), true, out, sizeof(out), &magic, scratch,
					  sizeof(scratch), &w),
			 0);
	snprintf(want, sizeof(want), "%s/real/sub/file", rt);
	ck_assert_str_eq(out, want);
	ck_assert_uint_eq(w.via_link & ST_VIA_HIDDEN, 0);
	ck_assert_int_eq(nleft, 3);
	snprintf(want, sizeof(want), "%s/real/sub", rt);
	ck_assert_str_eq(left[0], want);
	snprintf(want, sizeof(want), "%s/real", rt);
	ck_assert_str_eq(left[1], want);
	snprintf(want, sizeof(want), "%s/real/sub", rt);
	ck_assert_str_eq(left[2], want); /* link -> real/sub */
	/* a refused directory ends the walk: out names it (here reached
	 * through the link) */
	nleft = 0;
	refuse = "sub";
	snprintf(in, sizeof(in), "%s/link/../sub/file", rt);
	ssize_t n = st__path_resolve(in, strlen(in), true, out, sizeof(out), &magic, scratch,
				     sizeof(scratch), &w);
	snprintf(want, sizeof(want), "%s/real/sub", rt);
	ck_assert_int_eq(n, (ssize_t)strlen(want));
	ck_assert_str_eq(out, want);
	ck_assert_uint_eq(w.via_link & ST_VIA_HIDDEN, ST_VIA_HIDDEN);
	/* the directory the process holds (its cwd, say), and its
	 * ancestors, may be left whatever through says */
	nleft = 0;
	snprintf(in, sizeof(in), "%s/real/sub/../../real/sub/file", rt);
	w.held = strlen(rt) + strlen("/real/sub");
	ck_assert_int_gt(st__path_resolve(in, strlen(in), true, out, sizeof(out), &magic, scratch,
					  sizeof(scratch), &w),
			 0);
	ck_assert_int_eq(nleft, 0);
	ck_assert_uint_eq(w.via_link & ST_VIA_HIDDEN, 0);
	/* ... but not a directory below it */
	snprintf(in, sizeof(in), "%s/real/sub/../sub/../x", rt);
	w.held = strlen(rt) + strlen("/real");
	ck_assert_int_gt(st__path_resolve(in, strlen(in), true, out, sizeof(out), &magic, scratch,
					  sizeof(scratch), &w),
			 0);
	ck_assert_uint_eq(w.via_link & ST_VIA_HIDDEN, ST_VIA_HIDDEN);
	w.held = 0;
	/* an absolute link leaves its directory (abs -> <tree>/real, in the
	 * tree itself): asked; a relative one (link -> real/sub) is not */
	nleft = 0;
	refuse = strrchr(rt, '/') + 1;
	snprintf(in, sizeof(in), "%s/abs/sub/file", rt);
	ck_assert_int_eq(st__path_resolve(in, strlen(in), true, out, sizeof(out), &magic, scratch,
					  sizeof(scratch), &w),
			 (ssize_t)strlen(rt));
	ck_assert_str_eq(out, rt);
	ck_assert_uint_eq(w.via_link & ST_VIA_HIDDEN, ST_VIA_HIDDEN);
	nleft = 0;
	snprintf(in, sizeof(in), "%s/link/file", rt);
	ck_assert_int_gt(st__path_resolve(in, strlen(in), true, out, sizeof(out), &magic, scratch,
					  sizeof(scratch), &w),
			 0);
	ck_assert_int_eq(nleft, 0);
	refuse = "sub";
	/* no ".." in the path: never asked, even under the refused name */
	nleft = 0;
	snprintf(in, sizeof(in), "%s/real/sub/file", rt);
	ck_assert_int_gt(st__path_resolve(in, strlen(in), true, out, sizeof(out), &magic, scratch,
					  sizeof(scratch), &w),
			 0);
	ck_assert_int_eq(nleft, 0);
	ck_assert_uint_eq(w.via_link, 0);
	free(rt);
	drop_tree();
}
END_TEST

/* st__path_resolve of in (followed) into walk_out, below the root
 * in[0..root) */
static ssize_t walk_root(const char *in, size_t known, size_t root)
{
	static char scratch[ST_PATH_BUF];
	bool magic;
	struct st_walk w = {.known = known, .root = root};
	return st__path_resolve(in, strlen(in), true, walk_out, sizeof(walk_out), &magic, scratch,
				sizeof(scratch), &w);
}

/* st_walk.root (openat2's RESOLVE_IN_ROOT): ".." stops at the root, an
 * absolute link's target starts there */
START_TEST(test_resolve_in_root)
{
	static char in[ST_PATH_BUF], want[ST_PATH_BUF];
	make_tree();
	char *rt = realpath(tree, NULL);
	size_t rtl = strlen(rt);
	snprintf(in, sizeof(in), "%s/../../real/sub/../../../real/sub/file", rt);
	ck_assert_int_gt(walk_root(in, rtl, rtl), 0);
	snprintf(want, sizeof(want), "%s/real/sub/file", rt);
	ck_assert_str_eq(walk_out, want);
	/* abs -> <tree>/real: below the root, <tree>/<tree>/real, missing at
	 * its first component, where the kernel fails: the rest's ".."s are
	 * never walked (they once folded it to <tree>/x) */
	snprintf(in, sizeof(in), "%s/abs/sub/../../../../x", rt);
	ck_assert_int_gt(walk_root(in, rtl, rtl), 0);
	size_t first = strcspn(rt + 1, "/") + 1; /* "/tmp" of /tmp/st-pathnorm-... */
	snprintf(want, sizeof(want), "%s%.*s", rt, (int)first, rt);
	ck_assert_str_eq(walk_out, want);
	/* without a "..", the rest is appended below the root */
	snprintf(in, sizeof(in), "%s/abs/sub/x", rt);
	ck_assert_int_gt(walk_root(in, rtl, rtl), 0);
	snprintf(want, sizeof(want), "%s%s/real/sub/x", rt, rt);
	ck_assert_str_eq(walk_out, want);
	snprintf(in, sizeof(in), "%s/abs/sub/file", rt);
	ck_assert_int_gt(walk_root(in, rtl, rtl), 0);
	snprintf(want, sizeof(want), "%s%s/real/sub/file", rt, rt);
	ck_assert_str_eq(walk_out, want);
	/* a relative link is what it always is */
	snprintf(in, sizeof(in), "%s/link/file", rt);
	ck_assert_int_gt(walk_root(in, rtl, rtl), 0);
	snprintf(want, sizeof(want), "%s/real/sub/file", rt);
	ck_assert_str_eq(walk_out, want);
	/* a root longer than what the caller vouches for is refused */
	ck_assert_int_eq(walk_root(in, 0, rtl), -1);
	free(rt);
	drop_tree();
}
END_TEST

START_TEST(test_resolve_proc_fd)
{
	char out[ST_PATH_BUF], scratch[ST_PATH_BUF], in[64];
	bool magic = false;
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	snprintf(in, sizeof(in), "/dev/fd/%d", p[0]);
	/* a pipe by number is not a file */
	ck_assert_int_eq(st__path_resolve(in, strlen(in), true, out, sizeof(out), &magic, scratch,
					  sizeof(scratch), NULL),
			 -1);
	ck_assert(magic);
	int fd = open("/etc/hostname", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	snprintf(in, sizeof(in), "/proc/self/fd/%d", fd);
	magic = false;
	ck_assert_int_gt(st__path_resolve(in, strlen(in), true, out, sizeof(out), &magic, scratch,
					  sizeof(scratch), NULL),
			 0);
	ck_assert(magic);
	ck_assert_str_eq(out, "/etc/hostname");
	close(fd);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* A walk into an out too short for its result says so (st_walk.overflow),
 * and only then: the caller walks again into a longer one (check.c's rhead,
 * then rbuf).  A walk that follows no link leaves its scratch untouched (the
 * thread's buffers: a page less for most accesses). */
/* Names deeper than PATH_MAX, which the kernel refuses whole: st__at_deep
 * asks them below a directory it opens piecewise, with the kernel's answer
 * at every depth (components of every length from 1 to 255, so that the
 * pieces end at ever other places), closes what it opened, and the walk
 * follows a link there as it does above PATH_MAX (it took it for a plain
 * name: ENAMETOOLONG).  Each answer is checked against the same call
 * relative to a directory held by the test. */
static int count_fds(void)
{
	int n = 0;
	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

START_TEST(test_at_deep)
{
	static char p[3 * PATH_MAX], out[ST_PATH_BUF], scratch[ST_PATH_BUF], link[PATH_MAX];
	bool magic;
	make_tree();
	char *rt = realpath(tree, NULL);
	int fds = count_fds();
	snprintf(p, sizeof(p), "%s/real/sub/file", rt);
	/* a name the kernel takes is taken as it is */
	struct stat a, b;
	ck_assert_int_eq(st__at_abs(SYS_newfstatat, p, (long)&a, 0), 0);
	size_t len = (size_t)snprintf(p, sizeof(p), "%s/deep", rt);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	int held = open(p, O_PATH | O_DIRECTORY);
	ck_assert_int_ge(held, 0);
	char name[256];
	for (unsigned i = 0; len < 2 * PATH_MAX + 600; i++) {
		size_t nl = 1 + (i * 37) % 255;
		memset(name, 'a' + i % 26, nl);
		name[nl] = 0;
		ck_assert_int_eq(mkdirat(held, name, 0755), 0);
		ck_assert_int_eq(symlinkat("../", held, "up"), 0);
		ck_assert_int_eq(symlinkat(rt, held, "abs"), 0);
		int f = openat(held, "f", O_CREAT | O_WRONLY, 0644);
		ck_assert_int_ge(f, 0);
		close(f);
		int errs[] = {0, 0, 0, ENOENT};
		const char *names[] = {"f", "up", name, "missing"};
		for (int k = 0; k < 4; k++) {
			snprintf(p + len, sizeof(p) - len, "/%s", names[k]);
			errno = 0;
			long r = st__at_abs(SYS_newfstatat, p, (long)&a, AT_SYMLINK_NOFOLLOW);
			ck_assert_int_eq(r == 0 ? 0 : errno, errs[k]);
			if (r == 0) {
				ck_assert_int_eq(fstatat(held, names[k], &b, AT_SYMLINK_NOFOLLOW), 0);
				ck_assert(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
			}
			r = st__at_abs(SYS_readlinkat, p, (long)link, sizeof(link));
			ck_assert_int_eq(r < 0 ? errno : 0, k == 1 ? 0 : k == 3 ? ENOENT : EINVAL);
			ck_assert_int_eq(st__at_abs(SYS_faccessat, p, F_OK, 0) == 0, k < 3);
		}
		/* the walk: the link to the tree's root is followed at any depth,
		 * a plain name kept */
		snprintf(p + len, sizeof(p) - len, "/abs/real/sub/file");
		ssize_t n = st__path_resolve(p, strlen(p), true, out, sizeof(out), &magic, scratch,
					     sizeof(scratch), NULL);
		if (strlen(p) < sizeof(scratch)) {
			char want[PATH_MAX + 32];
			snprintf(want, sizeof(want), "%s/real/sub/file", rt);
			ck_assert_int_eq(n, (ssize_t)strlen(want));
			ck_assert_str_eq(out, want);
		}
		snprintf(p + len, sizeof(p) - len, "/f");
		n = st__path_resolve(p, strlen(p), true, out, sizeof(out), &magic, scratch,
				     sizeof(scratch), NULL);
		if (strlen(p) < sizeof(out)) {
			ck_assert_int_eq(n, (ssize_t)strlen(p));
			ck_assert_str_eq(out, p);
		}
		len += (size_t)snprintf(p + len, sizeof(p) - len, "/%s", name);
		int next = openat(held, name, O_PATH | O_DIRECTORY);
		ck_assert_int_ge(next, 0);
		close(held);
		held = next;
	}
	close(held);
	ck_assert_int_eq(count_fds(), fds);
	free(rt);
	drop_tree();
}
END_TEST

START_TEST(test_resolve_overflow)
{
	static char in[ST_PATH_BUF], out[ST_PATH_BUF], scratch[ST_PATH_BUF], want[ST_PATH_BUF];
	bool magic;
	make_tree();
	char *rt = realpath(tree, NULL);
	struct st_walk w = {0};
	/* no link on the way: scratch is not written */
	memset(scratch, 'x', sizeof(scratch));
	snprintf(in, sizeof(in), "%s/real/sub/file", rt);
	ssize_t n = st__path_resolve(in, strlen(in), true, out, sizeof(out), &magic, scratch,
				     sizeof(scratch), &w);
	ck_assert_int_eq(n, (ssize_t)strlen(in));
	ck_assert_str_eq(out, in);
	ck_assert(!w.overflow);
	for (size_t i = 0; i < sizeof(scratch); i++)
		ck_assert_int_eq(scratch[i], 'x');
	/* one short of room, at each place a walk can run out: a component,
	 * the lexical tail after a missing name, the known prefix */
	const char *tails[] = {"real/sub/file", "real/nothere/a/b/c", "link/file", "abs/sub/file"};
	for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
		snprintf(in, sizeof(in), "%s/%s", rt, tails[t]);
		w = (struct st_walk){0};
		n = st__path_resolve(in, strlen(in), true, want, sizeof(want), &magic, scratch,
				     sizeof(scratch), &w);
		ck_assert_int_gt(n, 0);
		ck_assert(!w.overflow);
		for (size_t cap = 2; cap <= (size_t)n; cap++) {
			w = (struct st_walk){.overflow = false};
			ck_assert_int_eq(st__path_resolve(in, strlen(in), true, out, cap, &magic,
							  scratch, sizeof(scratch), &w),
					 -1);
			ck_assert_msg(w.overflow, "%s into %zu bytes", in, cap);
		}
		w = (struct st_walk){0};
		ck_assert_int_eq(st__path_resolve(in, strlen(in), true, out, (size_t)n + 1, &magic,
						  scratch, sizeof(scratch), &w),
				 n);
		ck_assert_str_eq(out, want);
		ck_assert(!w.overflow);
	}
	/* a known prefix longer than out */
	snprintf(in, sizeof(in), "%s/real/sub/file", rt);
	w = (struct st_walk){.known = strlen(rt) + 9}; /* "<rt>/real/sub" */
	ck_assert_int_eq(st__path_resolve(in, strlen(in), true, out, 8, &magic, scratch,
					  sizeof(scratch), &w),
			 -1);
	ck_assert(w.overflow);
	/* -1 for another reason is no overflow: a pipe by number */
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	snprintf(in, sizeof(in), "/dev/fd/%d", p[0]);
	w = (struct st_walk){0};
	ck_assert_int_eq(st__path_resolve(in, strlen(in), true, out, sizeof(out), &magic, scratch,
					  sizeof(scratch), &w),
			 -1);
	ck_assert(!w.overflow);
	close(p[0]);
	close(p[1]);
	free(rt);
	drop_tree();
}
END_TEST

/* st__copy_short: every length up to a memo key's, from a source that ends
 * at a page with no access (a read past src[n - 1] faults) and before one (a
 * read before src[0] faults), into a destination whose neighbours must stay
 * untouched. */
START_TEST(test_copy_short)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)(3 * pg), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(mprotect(m, (size_t)pg, PROT_NONE), 0);
	ck_assert_int_eq(mprotect(m + 2 * pg, (size_t)pg, PROT_NONE), 0);
	char *page = m + pg;
	for (size_t i = 0; i < (size_t)pg; i++)
		page[i] = (char)(i * 7 + 3);
	for (size_t n = 0; n <= ST_MEMO_KEY; n++) {
		for (int at = 0; at < 2; at++) { /* src against the page's end, then its start */
			const char *src = at ? page : page + pg - n;
			char dst[ST_MEMO_KEY + 32];
			memset(dst, 0x5a, sizeof(dst));
			st__copy_short(dst + 16, src, n);
			ck_assert_msg(memcmp(dst + 16, src, n) == 0, "n %zu at %d: bytes differ", n, at);
			for (size_t i = 0; i < sizeof(dst); i++)
				if (i < 16 || i >= 16 + n)
					ck_assert_msg(dst[i] == 0x5a, "n %zu at %d: byte %zu written", n,
						      at, i);
		}
	}
	munmap(m, (size_t)(3 * pg));
}
END_TEST

Suite *suite_pathnorm(void)
{
	Suite *s = suite_create("pathnorm");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_st_syscall);
	tcase_add_test(tc, test_join);
	tcase_add_test(tc, test_clean);
	tcase_add_test(tc, test_clean_random);
	tcase_add_test(tc, test_fold);
	tcase_add_test(tc, test_parse_uint);
	tcase_add_test(tc, test_resolve);
	tcase_add_test(tc, test_dir_slot);
	tcase_add_test(tc, test_resolve_confirmed);
	tcase_add_test(tc, test_resolve_through);
	tcase_add_test(tc, test_resolve_in_root);
	tcase_add_test(tc, test_resolve_proc_fd);
	tcase_add_test(tc, test_resolve_overflow);
	tcase_add_test(tc, test_at_deep);
	tcase_add_test(tc, test_copy_short);
	tcase_add_test(tc, test_unreadable);
	suite_add_tcase(s, tc);
	return s;
}
