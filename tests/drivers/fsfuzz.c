/* tests/drivers/fsfuzz.c - a random, seeded sequence of namespace changes and accesses over a small tree, each call's result printed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * usage: fsfuzz setup ROOT          make the starting tree under ROOT (an empty directory)
 *        fsfuzz run ROOT SEED N     N operations drawn from SEED, cwd ROOT
 *        fsfuzz ops ROOT SEED N I.. only the operations numbered I.. of that sequence (a
 *                                    forked child's or thread's steps run as one); for
 *                                    minimising: the others are drawn but not made
 *
 * The tree has two top directories, ROOT/a (a sandbox allows it) and ROOT/h (it hides it),
 * and every name below is one of a few letters, so that the operations meet each other's
 * names: directories, files, symlinks (relative and absolute targets, to directories, to
 * nothing, to themselves), hard links, FIFOs, names spelled with "." and "..", with a
 * trailing "/" or "/.", absolute or relative to the cwd (which the sequence changes too).
 * Some steps run in a forked child or in a new thread, waited for before the next step, so
 * the output is the same for a seed whatever the scheduling: one line a call, its result
 * and errno name, a file's type, link count and size, a link's target and a directory's
 * listing sorted.  ROOT is printed as "@" (in names and in link targets), so that runs in
 * different directories compare.  A "burst" steps stats one name 150 times (a thread's memo
 * of warm accesses starts trying after 128 calls) and prints whether all agreed.  Names
 * drawn lately are drawn again often, and a directory's descriptor is held across steps
 * ("hold"), names relative to it asked while its directory moves ("at-...").
 *
 * The oracle is outside (tests/integration/fsfuzz.sh): the same output with the cache and
 * with --no-cache, and untraced where the policy hides nothing.  Exits 0 (2: usage).
 */
static const char *root;
static size_t rootlen;
static int only[1024], nonly = -1; /* "ops": the steps to make; -1 = all */

/* a sequence's state: the generator and the names it drew last, of which it draws
 * again often (a name warmed in the cache, changed, then asked again) */
struct rng {
	uint64_t x;
	char hot[8][200];
	unsigned nhot;
};
static uint64_t rnd(struct rng *s) /* xorshift64* */
{
	s->x ^= s->x >> 12;
	s->x ^= s->x << 25;
	s->x ^= s->x >> 27;
	return s->x * 2685821657736338717ULL;
}
static unsigned pick(struct rng *s, unsigned n) { return (unsigned)(rnd(s) >> 33) % n; }
static int held = -1; /* a directory descriptor kept across steps ("hold") */

static void out(const char *fmt, ...)
{
	char b[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b, sizeof b - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof b - 2)
		n = sizeof b - 2;
	b[n++] = '\n';
	for (int o = 0; o < n;) {
		ssize_t w = write(1, b + o, (size_t)(n - o));
		if (w <= 0)
			return;
		o += (int)w;
	}
}

static const char *ename(int e) { const char *n = strerrorname_np(e); return n ? n : "E?"; }

/* "@" at the start of a generated name stands for ROOT */
static void expand(const char *g, char *p, size_t sz)
{
	if (g[0] == '@')
		snprintf(p, sz, "%s%s", root, g + 1);
	else
		snprintf(p, sz, "%s", g);
}
static void unexpand(const char *p, char *g, size_t sz)
{
	if (strncmp(p, root, rootlen) == 0 && (p[rootlen] == '/' || p[rootlen] == 0))
		snprintf(g, sz, "@%s", p + rootlen);
	else
		snprintf(g, sz, "%s", p);
}

static const char *const comps[] = {"d", "e", "f", "l", "m", "n"};

/* a name: absolute or relative, through ROOT/a (mostly) or ROOT/h, 1 to 3 more components
 * (mostly 1, which the starting tree has) */
static void gen_path(struct rng *s, char *g, size_t sz)
{
	size_t n = 0;
	if (s->nhot && pick(s, 10) < 4) {
		snprintf(g, sz, "%s", s->hot[pick(s, s->nhot)]);
		return;
	}
	unsigned k = pick(s, 10);
	if (k < 3)
		n += (size_t)snprintf(g + n, sz - n, "@/%s", pick(s, 5) ? "a" : "h");
	else if (k < 8)
		n += (size_t)snprintf(g + n, sz - n, "%s", pick(s, 5) ? "a" : "h");
	else
		n += (size_t)snprintf(g + n, sz - n, "%s", comps[pick(s, 6)]);
	unsigned dk = pick(s, 20), depth = dk < 10 ? 1 : dk < 17 ? 2 : 3;
	for (unsigned i = 0; i < depth && n < sz - 8; i++) {
		unsigned c = pick(s, 20);
		const char *cc = c == 0 ? ".." : c == 1 ? "." : comps[pick(s, 6)];
		n += (size_t)snprintf(g + n, sz - n, "/%s", cc);
	}
	unsigned t = pick(s, 20);
	if (t < 2 && n < sz - 3)
		snprintf(g + n, sz - n, "/");
	else if (t == 2 && n < sz - 3)
		snprintf(g + n, sz - n, "/.");
	snprintf(s->hot[s->nhot < 8 ? s->nhot++ : pick(s, 8)], sizeof s->hot[0], "%.199s", g);
}

/* a symlink's target: relative, absolute, to a directory or to nothing, or to itself */
static void gen_target(struct rng *s, const char *link, char *g, size_t sz)
{
	unsigned k = pick(s, 10);
	if (k < 4) {
		size_t n = 0;
		for (unsigned i = pick(s, 3); i > 0; i--)
			n += (size_t)snprintf(g + n, sz - n, "../");
		snprintf(g + n, sz - n, "%s", comps[pick(s, 6)]);
		if (pick(s, 4) == 0)
			snprintf(g + strlen(g), sz - strlen(g), "/%s%s", comps[pick(s, 6)],
				 pick(s, 4) ? "" : "/");
	} else if (k < 5) {
		snprintf(g, sz, "%s", pick(s, 3) ? "../h" : "../a");
	} else if (k < 9) {
		char p[200];
		gen_path(s, p, sizeof p);
		if (p[0] == '@')
			snprintf(g, sz, "%s", p);
		else
			snprintf(g, sz, "@/%s", p);
	} else {
		const char *b = strrchr(link, '/');
		snprintf(g, sz, "%s", b && b[1] ? b + 1 : "loop");
	}
}

static void show_stat(char *b, size_t sz, const struct stat *st)
{
	char ty = S_ISREG(st->st_mode) ? 'f' : S_ISDIR(st->st_mode) ? 'd' : S_ISLNK(st->st_mode) ? 'l'
		: S_ISFIFO(st->st_mode) ? 'p' : 'o';
	if (S_ISREG(st->st_mode))
		snprintf(b, sz, " %c n%lu s%lld", ty, (unsigned long)st->st_nlink, (long long)st->st_size);
	else
		snprintf(b, sz, " %c", ty);
}

static int cmpstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void list_dir(const char *tag, const char *g, const char *p)
{
	DIR *d = opendir(p);
	if (!d) {
		out("%s list %s = -1 %s", tag, g, ename(errno));
		return;
	}
	char names[64][256], *v[64], line[4096] = "";
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 64) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(names[n], sizeof names[n], "%s", e->d_name);
		v[n] = names[n];
		n++;
	}
	closedir(d);
	qsort(v, (size_t)n, sizeof *v, cmpstr);
	for (int i = 0; i < n; i++)
		snprintf(line + strlen(line), sizeof line - strlen(line), "%s%s", i ? "," : "", v[i]);
	out("%s list %s = [%s]", tag, g, line);
}

static void steps(const char *tag0, struct rng *s, int n, int nested, int base);

struct sub {
	char tag[96];
	struct rng s;
	int n, base;
};
static void *sub_thread(void *a)
{
	struct sub *u = a;
	steps(u->tag, &u->s, u->n, 1, u->base);
	return NULL;
}

static int chosen(int id)
{
	if (nonly < 0)
		return 1;
	for (int i = 0; i < nonly; i++)
		if (only[i] == id)
			return 1;
	return 0;
}

/* one step: draw it from *s and make it (when chosen); the draws never depend on results */
static void step(const char *tag0, struct rng *s, int id, int nested)
{
	char g1[256], g2[256], p1[512], p2[512], tag[64], r[600];
	struct stat st;
	int rc, e, fd;
	unsigned op = pick(s, nested ? 27 : 30);
	gen_path(s, g1, sizeof g1);
	gen_path(s, g2, sizeof g2);
	expand(g1, p1, sizeof p1);
	expand(g2, p2, sizeof p2);
	unsigned arg = pick(s, 8);
	char tg[256], tp[512];
	gen_target(s, g1, tg, sizeof tg);
	expand(tg, tp, sizeof tp);
	int doit = nested || chosen(id);
	snprintf(tag, sizeof tag, "%s%d", tag0, id);
	if (op >= 27) { /* fork or thread: a sub-sequence from its own seed */
		struct rng sub = {.x = rnd(s) | 1};
		int k = 1 + (int)pick(s, 6);
		if (!doit)
			return;
		if (op == 29) {
			struct sub u;
			snprintf(u.tag, sizeof u.tag, "%st", tag);
			u.s = sub;
			u.n = k;
			u.base = 0;
			pthread_t t;
			if (pthread_create(&t, NULL, sub_thread, &u) == 0)
				pthread_join(t, NULL);
			return;
		}
		char ct[96];
		snprintf(ct, sizeof ct, "%sc", tag);
		pid_t pid = fork();
		if (pid == 0) {
			steps(ct, &sub, k, 1, 0);
			_exit(0);
		}
		int ws;
		if (pid > 0)
			waitpid(pid, &ws, 0);
		return;
	}
	if (!doit)
		return;
	switch (op) {
	case 0: case 1:
		errno = 0; rc = mkdir(p1, 0755); e = errno;
		out("%s mkdir %s = %d %s", tag, g1, rc, rc ? ename(e) : "");
		break;
	case 2:
		errno = 0; rc = rmdir(p1); e = errno;
		out("%s rmdir %s = %d %s", tag, g1, rc, rc ? ename(e) : "");
		break;
	case 3:
		errno = 0; rc = unlink(p1); e = errno;
		out("%s unlink %s = %d %s", tag, g1, rc, rc ? ename(e) : "");
		break;
	case 4: { /* creat / O_CREAT|O_EXCL, with a content naming the step */
		int fl = O_WRONLY | O_CREAT | O_NONBLOCK | (arg & 1 ? O_EXCL : O_TRUNC);
		errno = 0; fd = open(p1, fl, 0644); e = errno;
		if (fd >= 0) {
			char c[64];
			int l = snprintf(c, sizeof c, "%s\n", tag);
			if (write(fd, c, (size_t)l) != l)
				e = errno;
			close(fd);
		}
		out("%s creat%s %s = %d %s", tag, arg & 1 ? "x" : "", g1, fd >= 0 ? 0 : -1, fd < 0 ? ename(e) : "");
		break;
	}
	case 5: case 6: { /* read (O_NOFOLLOW sometimes) */
		int fl = O_RDONLY | O_NONBLOCK | (arg == 0 ? O_NOFOLLOW : 0) | (arg == 1 ? O_DIRECTORY : 0);
		errno = 0; fd = open(p1, fl); e = errno;
		if (fd < 0) {
			out("%s open%s %s = -1 %s", tag, arg == 0 ? "-nofollow" : arg == 1 ? "-dir" : "", g1, ename(e));
			break;
		}
		char c[128] = "";
		ssize_t l = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, c, sizeof c - 1) : 0;
		if (l > 0) {
			c[l] = 0;
			for (char *q = c; *q; q++)
				if (*q == '\n')
					*q = '|';
		}
		close(fd);
		out("%s open%s %s = 0 [%s]", tag, arg == 0 ? "-nofollow" : arg == 1 ? "-dir" : "", g1, c);
		break;
	}
	case 7: case 8: case 9:
		errno = 0; rc = (op == 9 ? lstat : stat)(p1, &st); e = errno;
		if (rc)
			out("%s %s %s = -1 %s", tag, op == 9 ? "lstat" : "stat", g1, ename(e));
		else {
			show_stat(r, sizeof r, &st);
			out("%s %s %s = 0%s", tag, op == 9 ? "lstat" : "stat", g1, r);
		}
		break;
	case 10: {
		int m = arg < 4 ? F_OK : arg < 6 ? W_OK : R_OK;
		errno = 0; rc = access(p1, m); e = errno;
		out("%s access%d %s = %d %s", tag, m, g1, rc, rc ? ename(e) : "");
		break;
	}
	case 11: {
		char t[512];
		errno = 0; ssize_t l = readlink(p1, t, sizeof t - 1); e = errno;
		if (l < 0)
			out("%s readlink %s = -1 %s", tag, g1, ename(e));
		else {
			t[l] = 0;
			unexpand(t, r, sizeof r);
			out("%s readlink %s = %s", tag, g1, r);
		}
		break;
	}
	case 12: case 13: { /* symlink */
		errno = 0; rc = symlink(tp, p1); e = errno;
		out("%s symlink %s %s = %d %s", tag, tg, g1, rc, rc ? ename(e) : "");
		break;
	}
	case 14:
		errno = 0; rc = linkat(AT_FDCWD, p1, AT_FDCWD, p2, arg & 1 ? AT_SYMLINK_FOLLOW : 0); e = errno;
		out("%s link%s %s %s = %d %s", tag, arg & 1 ? "-follow" : "", g1, g2, rc, rc ? ename(e) : "");
		break;
	case 15: case 16: {
		unsigned fl = arg < 5 ? 0 : arg < 7 ? RENAME_EXCHANGE : RENAME_NOREPLACE;
		errno = 0; rc = renameat2(AT_FDCWD, p1, AT_FDCWD, p2, fl); e = errno;
		out("%s rename%s %s %s = %d %s", tag, fl == RENAME_EXCHANGE ? "-x" : fl ? "-n" : "", g1, g2, rc,
		    rc ? ename(e) : "");
		break;
	}
	case 17: { /* O_TMPFILE in a directory, then linked in by its /proc/self/fd name */
		errno = 0; fd = open(p1, O_TMPFILE | O_RDWR, 0644); e = errno;
		if (fd < 0) {
			out("%s tmpfile %s = -1 %s", tag, g1, ename(e));
			break;
		}
		char c[64], pf[64];
		int l = snprintf(c, sizeof c, "%s\n", tag);
		if (write(fd, c, (size_t)l) != l)
			e = errno;
		snprintf(pf, sizeof pf, "/proc/self/fd/%d", fd);
		errno = 0; rc = linkat(AT_FDCWD, pf, AT_FDCWD, p2, AT_SYMLINK_FOLLOW); e = errno;
		close(fd);
		out("%s tmpfile %s %s = %d %s", tag, g1, g2, rc, rc ? ename(e) : "");
		break;
	}
	case 18:
		errno = 0; rc = mknod(p1, S_IFIFO | 0644, 0); e = errno;
		out("%s mkfifo %s = %d %s", tag, g1, rc, rc ? ename(e) : "");
		break;
	case 19: case 20:
		list_dir(tag, g1, p1);
		break;
	case 21: { /* chdir: back to ROOT mostly */
		const char *g = arg < 6 ? "@" : g1;
		char p[512];
		expand(g, p, sizeof p);
		errno = 0; rc = chdir(p); e = errno;
		out("%s chdir %s = %d %s", tag, g, rc, rc ? ename(e) : "");
		break;
	}
	case 22: { /* a name relative to a directory's descriptor */
		errno = 0; fd = open(p1, O_RDONLY | O_DIRECTORY | (arg & 1 ? O_PATH : 0)); e = errno;
		if (fd < 0) {
			out("%s dirfd %s = -1 %s", tag, g1, ename(e));
			break;
		}
		const char *rel = g2[0] == '@' ? g2 + 2 : g2; /* "@/x" -> "x" */
		errno = 0; rc = fstatat(fd, rel, &st, arg & 2 ? AT_SYMLINK_NOFOLLOW : 0); e = errno;
		close(fd);
		if (rc)
			out("%s fstatat %s %s = -1 %s", tag, g1, rel, ename(e));
		else {
			show_stat(r, sizeof r, &st);
			out("%s fstatat %s %s = 0%s", tag, g1, rel, r);
		}
		break;
	}
	case 23: { /* burst: one name stat'ed 150 times; all the same? */
		struct stat st0;
		int rc0 = stat(p1, &st0), e0 = errno, same = 1;
		for (int i = 1; i < 150; i++) {
			errno = 0; rc = stat(p1, &st); e = errno;
			if (rc != rc0 || (rc && e != e0) || (!rc && st.st_mode != st0.st_mode))
				same = 0;
		}
		if (rc0)
			out("%s burst %s = -1 %s%s", tag, g1, ename(e0), same ? "" : " (changing)");
		else {
			show_stat(r, sizeof r, &st0);
			out("%s burst %s = 0%s%s", tag, g1, r, same ? "" : " (changing)");
		}
		break;
	}
	case 24: { /* rename then access the old and the new name at once */
		errno = 0; rc = rename(p1, p2); e = errno;
		int a1 = access(p1, F_OK), e1 = errno;
		int a2 = access(p2, F_OK), e2 = errno;
		out("%s mv %s %s = %d %s; old %d %s; new %d %s", tag, g1, g2, rc, rc ? ename(e) : "", a1,
		    a1 ? ename(e1) : "", a2, a2 ? ename(e2) : "");
		break;
	}
	case 25: /* hold a directory's descriptor across the next steps */
		if (held >= 0)
			close(held);
		errno = 0; held = open(p1, O_RDONLY | O_DIRECTORY | (arg & 1 ? O_PATH : 0)); e = errno;
		out("%s hold %s = %d %s", tag, g1, held >= 0 ? 0 : -1, held < 0 ? ename(e) : "");
		break;
	case 26: { /* a name relative to the held descriptor (its directory may have moved) */
		const char *rel = g2[0] == '@' ? g2 + 2 : g2;
		const char *what = arg < 3 ? "stat" : arg < 5 ? "open" : arg < 6 ? "mkdir" : arg < 7 ? "unlink" : "symlink";
		int d = held >= 0 ? held : AT_FDCWD;
		errno = 0;
		if (arg < 3) {
			rc = fstatat(d, rel, &st, arg == 2 ? AT_SYMLINK_NOFOLLOW : 0);
		} else if (arg < 5) {
			fd = openat(d, rel, O_RDONLY | O_NONBLOCK | (arg == 4 ? O_CREAT : 0), 0644);
			rc = fd < 0 ? -1 : 0;
			if (fd >= 0)
				close(fd);
		} else if (arg < 6) {
			rc = mkdirat(d, rel, 0755);
		} else if (arg < 7) {
			rc = unlinkat(d, rel, 0);
		} else {
			rc = symlinkat(tp, d, rel);
		}
		e = errno;
		if (rc)
			out("%s at-%s %s = -1 %s", tag, what, rel, ename(e));
		else if (arg < 3) {
			show_stat(r, sizeof r, &st);
			out("%s at-%s %s = 0%s", tag, what, rel, r);
		} else
			out("%s at-%s %s = 0", tag, what, rel);
		break;
	}
	default:
		abort();
	}
}

static void steps(const char *tag0, struct rng *s, int n, int nested, int base)
{
	for (int i = 0; i < n; i++)
		step(tag0, s, base + i, nested);
}

static int setup(void)
{
	static const char *const dirs[] = {"a", "h", "a/d", "a/e", "h/d", "a/d/e"};
	static const char *const files[] = {"a/f", "h/f", "a/d/f", "h/d/f"};
	static const struct { const char *t, *l; } links[] = {
		{"d", "a/l"}, {"@/h/f", "a/m"}, {"../h", "a/n"}, {"../f", "a/d/l"},
		{"@/a/d", "h/l"}, {"nothing", "a/e/l"}, {"l", "a/e/m"},
	};
	char p[512], t[512];
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		snprintf(p, sizeof p, "%s/%s", root, dirs[i]);
		if (mkdir(p, 0755))
			return perror(p), 1;
	}
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		snprintf(p, sizeof p, "%s/%s", root, files[i]);
		FILE *f = fopen(p, "w");
		if (!f)
			return perror(p), 1;
		fprintf(f, "%s\n", files[i]);
		fclose(f);
	}
	for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
		snprintf(p, sizeof p, "%s/%s", root, links[i].l);
		expand(links[i].t, t, sizeof t);
		if (symlink(t, p))
			return perror(p), 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		goto usage;
	root = argv[2];
	rootlen = strlen(root);
	if (!strcmp(argv[1], "setup"))
		return setup();
	if (argc < 5 || (strcmp(argv[1], "run") && strcmp(argv[1], "ops")))
		goto usage;
	if (!strcmp(argv[1], "ops"))
		for (nonly = 0; nonly < 1024 && 5 + nonly < argc; nonly++)
			only[nonly] = atoi(argv[5 + nonly]);
	struct rng s = {.x = strtoull(argv[3], NULL, 10) * 0x9E3779B97F4A7C15ULL + 1};
	int n = atoi(argv[4]);
	if (chdir(root))
		return perror(root), 1;
	out("seed %s", argv[3]);
	steps("", &s, n, 0, 0);
	return 0;
usage:
	fprintf(stderr, "usage: fsfuzz setup ROOT | run ROOT SEED N | ops ROOT SEED N I...\n");
	return 2;
}
