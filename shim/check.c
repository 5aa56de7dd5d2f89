/* shim/check.c - the body every wrapper shares: make the path absolute, decide (pre), record (post). */
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandtrace/ctrie.h"
#include "shim.h"


/* ---- cwd cache: a seqlock over a process-wide copy of the cwd.  chdir,
 * fchdir and chroot invalidate it; readers that race a writer retry. ---- */
static char cwd_buf[ST_PATH_BUF];
static _Atomic size_t cwd_len;

void st__cwd_invalidate(void)
{
	atomic_store_explicit(&st__g.cwd_valid, 0, memory_order_release);
}

ssize_t st__getcwd(char *buf, size_t cap)
{
	for (int tries = 0; tries < 4; tries++) {
		unsigned g = atomic_load_explicit(&st__g.cwd_gen, memory_order_acquire);
		if (!(g & 1) && atomic_load_explicit(&st__g.cwd_valid, memory_order_acquire)) {
			size_t n = atomic_load_explicit(&cwd_len, memory_order_relaxed);
			if (n + 1 <= cap) {
				memcpy(buf, cwd_buf, n);
				buf[n] = 0;
				/* acquire fence: the copy happened before we re-read gen */
				atomic_thread_fence(memory_order_acquire);
				if (atomic_load_explicit(&st__g.cwd_gen, memory_order_relaxed) == g)
					return (ssize_t)n;
			}
		}
		/* refresh from the kernel */
		long r = syscall(SYS_getcwd, buf, cap);
		if (r <= 0 || buf[0] != '/')
			return -1; /* unreachable cwd ("(unreachable)/..."): no path */
		size_t n = strlen(buf);
		unsigned exp = g & ~1u;
		if (n + 1 <= sizeof(cwd_buf) &&
		    atomic_compare_exchange_strong_explicit(&st__g.cwd_gen, &exp, exp + 1,
							    memory_order_acq_rel,
							    memory_order_relaxed)) {
			memcpy(cwd_buf, buf, n + 1);
			atomic_store_explicit(&cwd_len, n, memory_order_relaxed);
			atomic_store_explicit(&st__g.cwd_valid, 1, memory_order_relaxed);
			/* release: the copy is visible before gen turns even */
			atomic_store_explicit(&st__g.cwd_gen, exp + 2, memory_order_release);
		}
		return (ssize_t)n;
	}
	long r = syscall(SYS_getcwd, buf, cap);
	return r > 0 && buf[0] == '/' ? (ssize_t)strlen(buf) : -1;
}

ssize_t st__fd_path(int fd, char *buf, size_t cap)
{
	char p[40];
	int saved = errno;
	/* "/proc/self/fd/N" without snprintf (no locale, no malloc) */
	char num[16];
	int k = 0;
	unsigned u = (unsigned)fd;
	do
		num[k++] = (char)('0' + u % 10);
	while ((u /= 10) && k < 15);
	memcpy(p, "/proc/self/fd/", 14);
	for (int i = 0; i < k; i++)
		p[14 + i] = num[k - 1 - i];
	p[14 + k] = 0;
	ssize_t n = syscall(SYS_readlinkat, AT_FDCWD, p, buf, cap - 1);
	errno = saved;
	if (n <= 0 || buf[0] != '/')
		return -1;
	if (n > 10 && !memcmp(buf + n - 10, " (deleted)", 10))
		n -= 10;
	buf[n] = 0;
	return n;
}

void st__acc_init(struct st_acc *a, int dirfd, const char *path, unsigned kind, bool nofollow)
{
	a->dirfd = dirfd;
	a->path = path;
	a->kind = kind;
	a->nofollow = nofollow;
	a->empty_path = false;
	a->skip = false;
	a->magic_fd = false;
	a->resolved = false;
	a->fail_open = false;
	a->asked = false;
	a->verdict = SANDTRACE_ALLOW;
	a->deny_err = 0;
	a->abs = NULL;
	a->abs_len = 0;
	a->abs_map = 0;
	a->rpath = NULL;
	a->rpath_len = 0;
}

/* Build a->abs: the absolute spelling, cleaned but with ".." kept. */
static bool make_abs(struct st_acc *a)
{
	char base[ST_PATH_BUF];
	ssize_t blen = 0;
	const char *p = a->path;
	if (!p) {
		a->skip = true; /* the real call answers EFAULT */
		return false;
	}
	if (p[0] == 0) {
		if (!a->empty_path || a->dirfd == AT_FDCWD) {
			if (!a->empty_path) {
				a->skip = true; /* ENOENT from the real call */
				return false;
			}
		}
	}
	if (p[0] != '/') {
		if (a->dirfd == AT_FDCWD)
			blen = st__getcwd(base, sizeof(base));
		else
			blen = st__fd_path(a->dirfd, base, sizeof(base));
		if (blen < 0) {
			a->skip = true; /* EBADF, ENOTDIR, or a non-file: the kernel decides */
			return false;
		}
	}
	size_t need = (size_t)blen + strlen(p) + 2;
	char *out = a->absbuf;
	size_t cap = sizeof(a->absbuf);
	if (need > cap) {
		/* a path longer than our buffer is carried whole */
		size_t m = (need + 4095) & ~(size_t)4095;
		out = mmap(NULL, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (out == MAP_FAILED) {
			a->skip = true;
			return false;
		}
		a->abs_map = m;
		cap = m;
	}
	ssize_t n = p[0] == 0 ? (memcpy(out, base, (size_t)blen + 1), blen)
			      : st__path_join(base, (size_t)blen, p, out, cap);
	if (n >= 0)
		n = st__path_clean(out, (size_t)n);
	if (n < 0) {
		a->skip = true;
		return false;
	}
	a->abs = out;
	a->abs_len = (size_t)n;
	return true;
}

/* Resolve a->abs into a->rpath (symlinks followed as the call would). */
static void resolve(struct st_acc *a)
{
	if (a->resolved)
		return;
	a->resolved = true;
	int saved = errno;
	ssize_t n = -1;
	if (a->abs_len + 1 <= sizeof(a->rbuf))
		n = st__path_resolve(a->abs, a->abs_len, !a->nofollow, a->rbuf, sizeof(a->rbuf),
				     &a->magic_fd, st__tls()->scratch, ST_PATH_BUF);
	errno = saved;
	if (n < 0 && a->magic_fd) {
		a->skip = true; /* a pipe, socket or tty by number: not a file dependency */
		a->rpath = a->abs;
		a->rpath_len = a->abs_len;
		return;
	}
	if (n < 0) { /* too long to resolve: judge and record the spelling */
		a->rpath = a->abs;
		a->rpath_len = a->abs_len;
		return;
	}
	a->rpath = a->rbuf;
	a->rpath_len = (size_t)n;
}

static unsigned key_of(unsigned kind, bool nofollow)
{
	return kind | (nofollow ? SANDTRACE_KEY_NOFOLLOW : 0);
}

/* Decide with the compiled sandbox in the arena.  Returns the value to cache. */
static uint32_t decide_local(struct st_acc *a, unsigned cls)
{
	resolve(a);
	if (a->skip || a->magic_fd)
		return SANDTRACE_ALLOW;
	unsigned act = sandtrace_policy_match(st__g.arena.base, st__g.policy, cls, a->rpath,
					      a->rpath_len, NULL);
	if (act == SANDTRACE_ASK) {
		uint32_t v;
		a->asked = true;
		/* the daemon caches ask answers under the resolved path */
		if (sandtrace_ctrie_lookup(&st__g.arena, SANDTRACE_KEY_VERDICT | cls, a->rpath,
					   a->rpath_len, &v) == 1)
			return v;
		struct sandtrace_verdict vd;
		if (st__request(a->kind, a->rpath, a->rpath_len, &vd) == 0)
			return vd.action | (vd.err == EACCES ? SANDTRACE_V_EACCES : 0);
		if (st__g.flags & SANDTRACE_F_FAIL_OPEN) {
			a->fail_open = true;
			return SANDTRACE_ALLOW;
		}
		return SANDTRACE_DENY; /* fail closed: an ask never becomes an allow */
	}
	if (act == SANDTRACE_DENY && cls == SANDTRACE_CLASS_WRITE &&
	    sandtrace_policy_match(st__g.arena.base, st__g.policy, SANDTRACE_CLASS_READ, a->rpath,
				   a->rpath_len, NULL) == SANDTRACE_ALLOW)
		return SANDTRACE_DENY | SANDTRACE_V_EACCES; /* visible but not writable */
	return act;
}

/* Decide by asking the daemon (no arena). */
static uint32_t decide_remote(struct st_acc *a)
{
	resolve(a);
	if (a->skip || a->magic_fd)
		return SANDTRACE_ALLOW;
	struct sandtrace_verdict vd;
	if (st__request(a->kind, a->rpath, a->rpath_len, &vd) == 0)
		return vd.action | (vd.err == EACCES ? SANDTRACE_V_EACCES : 0);
	if ((st__g.flags & SANDTRACE_F_FENCED) && !(st__g.flags & SANDTRACE_F_FAIL_OPEN))
		return SANDTRACE_DENY;
	a->fail_open = (st__g.flags & SANDTRACE_F_FENCED) != 0;
	return SANDTRACE_ALLOW;
}

static void send_record(struct st_acc *a, unsigned kind, int err, uint16_t flags)
{
	resolve(a);
	if (a->skip)
		return;
	struct sandtrace_access acc = {.kind = (uint8_t)kind,
				       .verdict = (uint8_t)a->verdict,
				       .flags = flags,
				       .err = err,
				       .path_len = (uint32_t)a->rpath_len};
	if (a->fail_open)
		acc.flags |= SANDTRACE_AF_FAIL_OPEN;
	if (a->asked)
		acc.flags |= SANDTRACE_AF_ASKED;
	st__send_access(&acc, a->rpath, a->rpath_len, NULL, 0);
}

int st__pre(struct st_acc *a)
{
	int saved = errno;
	if (!make_abs(a)) {
		errno = saved;
		return 0;
	}
	unsigned cls = sandtrace_kind_class(a->kind);
	uint32_t v;
	if (st__g.arena.base) {
		if (st__g.trivial_policy) {
			errno = saved;
			return 0;
		}
		unsigned key = SANDTRACE_KEY_VERDICT | cls | (a->nofollow ? SANDTRACE_KEY_NOFOLLOW : 0);
		int r = sandtrace_ctrie_lookup(&st__g.arena, key, a->abs, a->abs_len, &v);
		if (r != 1) {
			v = decide_local(a, cls);
			/* a fail-open answer is not cached: the next call tries again */
			if (!a->fail_open && !a->asked)
				sandtrace_ctrie_insert(&st__g.arena, key, a->abs, a->abs_len, v, NULL);
			else if (!a->fail_open && a->asked)
				sandtrace_ctrie_insert(&st__g.arena, key, a->abs, a->abs_len, v, NULL);
		}
	} else {
		v = decide_remote(a);
	}
	a->verdict = v & SANDTRACE_V_ACTION_MASK;
	if (a->verdict == SANDTRACE_ALLOW || a->verdict == SANDTRACE_ASK) {
		a->verdict = SANDTRACE_ALLOW;
		errno = saved;
		return 0;
	}
	a->deny_err = (v & SANDTRACE_V_EACCES) ? EACCES : ENOENT;
	/* a violation: recorded once per (kind, path) */
	bool first = true;
	if (st__g.arena.base && !(st__g.flags & SANDTRACE_F_RECORD_ALL))
		first = sandtrace_ctrie_insert(&st__g.arena, key_of(a->kind, a->nofollow) | 0x80u,
					       a->abs, a->abs_len, v, NULL) != 0;
	if (first)
		send_record(a, a->kind, a->deny_err, SANDTRACE_AF_DENIED);
	st__acc_done(a);
	errno = saved;
	return a->deny_err;
}

void st__acc_done(struct st_acc *a)
{
	if (a->abs_map) {
		munmap(a->abs, a->abs_map);
		a->abs_map = 0;
		a->abs = NULL;
	}
}

void st__post(struct st_acc *a, int err)
{
	int saved = errno;
	if (a->skip || !a->abs)
		goto out;
	unsigned kind = a->kind;
	if (err == ENOENT && kind != SANDTRACE_KIND_WRITE)
		kind = SANDTRACE_KIND_MISSING;
	if (st__g.arena.base && !(st__g.flags & SANDTRACE_F_RECORD_ALL)) {
		int r = sandtrace_ctrie_insert(&st__g.arena, key_of(kind, a->nofollow), a->abs,
					       a->abs_len, SANDTRACE_V_RECORDED, NULL);
		if (r == 0) { /* already recorded by some process: a hit */
			atomic_fetch_add_explicit(&st__g.hits, 1, memory_order_relaxed);
			goto out;
		}
	}
	send_record(a, kind, err, 0);
out:
	st__acc_done(a);
	errno = saved;
}

void st__record_path(int dirfd, const char *path, unsigned kind, bool nofollow, int err)
{
	struct st_acc *a = &st__tls_acc[1];
	st__acc_init(a, dirfd, path, kind, nofollow);
	if (!make_abs(a))
		return;
	st__post(a, err);
}
