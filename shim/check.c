/* shim/check.c - the body every wrapper shares: make the path absolute, decide (pre), record (post). */
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandtrace/ctrie.h"
#include "shim.h"


/* ---- cwd cache: a seqlock over a process-wide copy of the cwd.  chdir,
 * fchdir and chroot invalidate it; readers that race a writer retry.  It is
 * also kept with the arena's global generation it was read in: a directory
 * moved by any traced process (a global bump) may have been one of its
 * ancestors, so a copy of an older generation is read again.  Without the
 * arena there is no such generation, and no copy. ---- */
static char cwd_buf[ST_PATH_BUF];
ST_HOT static _Atomic size_t cwd_len;
ST_HOT static _Atomic uint64_t cwd_fs_gen;

/* Where a copy of n bytes (and its NUL) is kept: st__g's when it fits. */
static inline char *cwd_copy(size_t n)
{
	return n < sizeof(st__g.cwd_small) ? st__g.cwd_small : cwd_buf;
}

/* The arena's global generation (0 without an arena).  acquire: pairs with
 * the release bump made after a namespace change. */
static uint64_t fs_gen_now(void)
{
	return st__g.arena.base ? atomic_load_explicit(&sandtrace_arena_hdr(&st__g.arena)->fs_gen,
						       memory_order_acquire)
				: 0;
}

void st__fs_gen_bump_global(void)
{
	if (!st__g.arena.base)
		return;
	/* release: the namespace change (done) before the new generation, as
	 * fs_gen_bump's global bump */
	atomic_fetch_add_explicit(&sandtrace_arena_hdr(&st__g.arena)->fs_gen, 1,
				  memory_order_release);
}

void st__cwd_invalidate(void)
{
	atomic_store_explicit(&st__g.cwd_valid, 0, memory_order_release);
}

/* The cwd from the kernel: its length, or -errno (-ENOENT for an unreachable
 * cwd, "(unreachable)/...", which is no path). */
static ssize_t kernel_cwd(char *buf, size_t cap)
{
	if (ST_SYSCALL(SYS_getcwd, buf, cap) <= 0)
		return errno == ENAMETOOLONG ? st__dir_path_deep(AT_FDCWD, buf, cap) : -errno;
	return buf[0] == '/' ? (ssize_t)strlen(buf) : -ENOENT;
}

ssize_t st__getcwd(char *buf, size_t cap)
{
	int saved = errno;
	unsigned g = atomic_load_explicit(&st__g.cwd_gen, memory_order_acquire);
	uint64_t fsg = fs_gen_now();
	/* without the arena (--no-cache) no generation says that an ancestor
	 * moved (a rename or exchange by this process or another): no copy,
	 * the kernel is asked each time, beside the daemon's round trip that
	 * follows anyway (the fuzzer: chdir d; exchange d and a link; a name
	 * relative to the cwd was resolved through the link) */
	bool keep = st__g.arena.base != NULL;
	if (keep && !(g & 1) && atomic_load_explicit(&st__g.cwd_valid, memory_order_acquire) &&
	    atomic_load_explicit(&cwd_fs_gen, memory_order_relaxed) == fsg) {
		size_t n = atomic_load_explicit(&cwd_len, memory_order_relaxed);
		if (n + 1 <= cap) {
			memcpy(buf, cwd_copy(n), n);
			buf[n] = 0;
			/* acquire fence: the copy happened before we re-read gen */
			atomic_thread_fence(memory_order_acquire);
			if (atomic_load_explicit(&st__g.cwd_gen, memory_order_relaxed) == g)
				return (ssize_t)n;
		}
	}
	/* not cached, or a writer raced the copy: ask the kernel */
	ssize_t r = kernel_cwd(buf, cap);
	errno = saved;
	if (r < 0 || st__vchild || !keep) /* a vfork child's cwd is not its parent's to cache */
		return r;
	size_t n = (size_t)r;
	unsigned exp = g & ~1u;
	if (n + 1 <= sizeof(cwd_buf) &&
	    atomic_compare_exchange_strong_explicit(&st__g.cwd_gen, &exp, exp + 1,
						    memory_order_acq_rel, memory_order_relaxed)) {
		memcpy(cwd_copy(n), buf, n + 1);
		atomic_store_explicit(&cwd_len, n, memory_order_relaxed);
		/* the generation read before the kernel was asked: a move racing
		 * the call leaves a copy that is read again next time */
		atomic_store_explicit(&cwd_fs_gen, fsg, memory_order_relaxed);
		atomic_store_explicit(&st__g.cwd_valid, 1, memory_order_relaxed);
		/* release: the copy is visible before gen turns even */
		atomic_store_explicit(&st__g.cwd_gen, exp + 2, memory_order_release);
	}
	return r;
}


void st__acc_init(struct st_acc *a, int dirfd, const char *path, unsigned kind, unsigned nofollow)
{
	a->dirfd = dirfd;
	a->path = path;
	a->kind = kind;
	a->nofollow = nofollow != 0;
	a->name_op = nofollow == ST_NF_NAME;
	a->empty_path = false;
	a->probe_fd = false;
	a->in_root = false;
	a->held_len = 0;
	a->skip = false;
	a->magic_fd = false;
	a->resolved = false;
	a->via_link = 0;
	a->fail_open = false;
	a->asked = false;
	a->verdict = SANDTRACE_ALLOW;
	a->deny_err = 0;
	a->ns_change = false;
	a->quiet = false;
	a->unjudgeable = false;
	a->unresolved = false;
	a->was_link = false;
	a->again = false;
	a->sent = false;
	a->link_wide = false;
	a->was_dir = false;
	a->pair = false;
	a->was_missing = false;
	a->abs = NULL;
	a->abs_len = 0;
	a->abs_src = NULL;
	a->gens = false;
	a->abs_map = 0;
	a->rpath = NULL;
	a->rpath_len = 0;
	a->fd = -1;
	a->refuse = false;
	a->loads = false;
	a->memo_hit = false;
	a->memo = NULL;
}

/*
 * Cache coherence.  A cached verdict or "already recorded" entry is keyed by
 * the path as spelled; what it stands for depends on symlink resolution,
 * which only changes when a symlink appears, disappears or moves (or a
 * directory holding one moves).  Every traced process bumps the arena's
 * fs_gen when it does that (st__post), and every key starts with the
 * generation it was made in, so older entries simply miss.  Writers that are
 * not traced (static binaries, processes outside the run) are not seen: a
 * symlink they change can leave a verdict stale until the next traced change.
 */
#define KEY_GEN 4u
/* Key class of a record by its resolved path (no generation prefix): 0x80 |
 * 0x40 is used by no other key class (violations are 0x80 | kind | nofollow,
 * verdicts 0x40 | class | nofollow). */
#define KEY_RESOLVED 0xc0u
/*
 * Key class of a directory known to resolve to itself (every component an
 * existing non-link, no "." or ".."), keyed like any path: generation (of
 * its parent's slot) + path bytes.  A miss resolves only the last component
 * of a path in such a directory: one readlink, not one per component.  It
 * goes stale exactly when a cached verdict would (fs_gen_bump): a component
 * moved, or replaced by a link that leads to a directory or to nothing,
 * bumps the global generation; a component can only be replaced by a link
 * to a file after it was removed, and removing a directory bumps its
 * children's slot, which is the slot this key is made with one level down.
 * It says no link, not a directory: "f/x" with f a file confirms f (the
 * lookup of x fails there, ENOTDIR), so the walk still asks a ".." right
 * after the prefix (st_walk.known).  0xf0 is no other key class.
 */
#define KEY_DIR_SELF 0xf0u

/* The per-directory generations, or NULL before the first bump.  Once
 * published the array never moves: the first sight of it is kept. */
ST_HOT static _Atomic(_Atomic uint32_t *) gen_slots_seen;
static _Atomic uint32_t *gen_slots(bool create)
{
	_Atomic uint32_t *seen = atomic_load_explicit(&gen_slots_seen, memory_order_acquire);
	if (seen)
		return seen;
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(&st__g.arena);
	/* acquire: the zeroed array is whole for whoever sees its offset */
	uint64_t off = atomic_load_explicit(&h->fs_gen_slots, memory_order_acquire);
	if (!off && create) {
		/* the zeroed table set aside beside the header at create (at the
		 * layout's place only: a damaged header's other offset is not
		 * taken), or a fresh one (an arena without areas) */
		uint64_t mine = atomic_load_explicit(&h->fs_gen_slots_home, memory_order_relaxed);
		if (mine != SANDTRACE_ARENA_GEN_SLOTS_AT)
			mine = sandtrace_arena_alloc(&st__g.arena,
						     SANDTRACE_FS_GEN_SLOTS * sizeof(uint32_t));
		uint64_t expect = 0;
		/* acq_rel: publish ours, or take the one another process published */
		if (mine && atomic_compare_exchange_strong_explicit(&h->fs_gen_slots, &expect, mine,
								    memory_order_acq_rel,
								    memory_order_acquire))
			off = mine;
		else
			off = expect;
	}
	seen = off ? sandtrace_arena_ptr(&st__g.arena, off, SANDTRACE_FS_GEN_SLOTS * sizeof(uint32_t))
		   : NULL;
	if (seen) /* release: pairs with the acquire above (the zeroed array is whole) */
		atomic_store_explicit(&gen_slots_seen, seen, memory_order_release);
	return seen;
}

static inline unsigned dir_slot(const char *p, size_t len)
{
	return st__dir_slot(p, len, SANDTRACE_FS_GEN_SLOTS);
}

/* The generation a key for the path p[0..len) starts with (0 without an arena). */
static uint32_t gen_of(const char *p, size_t len)
{
	uint32_t gen = 0;
	if (st__g.arena.base) {
		struct sandtrace_arena_header *h = sandtrace_arena_hdr(&st__g.arena);
		/* every counter only grows: their sum moves when any does (a
		 * policy reload, a namespace change anywhere or in this
		 * directory), and keys of the older sum miss.  acquire: pairs
		 * with the bump after the namespace change (or the reload) */
		gen = (uint32_t)atomic_load_explicit(&h->fs_gen, memory_order_acquire) +
		      (uint32_t)atomic_load_explicit(&h->generation, memory_order_acquire);
		/* no per-directory generations yet (no symlink made or moved
		 * in this run): the common case, two loads and no call */
		_Atomic uint32_t *slots = atomic_load_explicit(&gen_slots_seen, memory_order_acquire);
		if (!slots && atomic_load_explicit(&h->fs_gen_slots, memory_order_relaxed))
			slots = gen_slots(false);
		if (slots)
			gen += atomic_load_explicit(&slots[dir_slot(p, len)], memory_order_acquire);
	}
	/* top bit clear: a key through a symlink has it set (key_via_link) */
	return gen & 0x7fffffffu;
}

/* The key of a->abs[0..n) made with gen: written in the KEY_GEN bytes in
 * front of abs (every key of this access is made there, one at a time);
 * *len gets its length. */
static const char *key_with(struct st_acc *a, uint32_t gen, size_t n, size_t *len)
{
	char *k = a->abs - KEY_GEN;
	memcpy(k, &gen, KEY_GEN);
	*len = n + KEY_GEN;
	return k;
}

static const char *key_of_abs(struct st_acc *a, size_t *len)
{
	return key_with(a, a->gens ? a->gen_abs : gen_of(a->abs, a->abs_len), a->abs_len, len);
}

/* The slot of the children of the name p[0..len) ("/a/b" -> the slot of
 * "/a/b/"); p's buffer has room past its NUL (absbuf, rbuf or the mapping):
 * made "/a/b/" for the hash and put back. */
static unsigned own_slot(char *p, size_t len)
{
	p[len] = '/';
	unsigned s = dir_slot(p, len + 1);
	p[len] = 0;
	return s;
}

/*
 * After a namespace change at a->abs.  BUMP_GLOBAL: a symlink that leads to
 * a directory or to nothing, or a moved directory, can change how any path
 * resolves: every key misses (global generation).  BUMP_NAME (a symlink to
 * an existing file: configure's conftest.sym, libtool's lib.so links): only
 * the slots of the name's directory and of the name's own children move, and
 * the rest of the cache stays warm.  Nothing resolves under a link to a file
 * (ENOTDIR) until the name changes again, which bumps again.  Not seen: the
 * link's target file replaced by a directory (no link changes): entries
 * under the link's name made before then stay (documented in INTERNALS).
 * BUMP_CHILDREN (a directory removed): the keys of its children (keyed with
 * its own slot) must not outlive it, since the name can come back as a
 * link; removing a tree bottom-up (rm -r) reaches every level.  A per-
 * directory bump falls back to the global one when the slots cannot be
 * allocated.
 */
enum bump { BUMP_GLOBAL, BUMP_NAME, BUMP_CHILDREN };
static void resolve(struct st_acc *a);
static void fs_gen_bump(struct st_acc *a, enum bump how)
{
	if (!st__g.arena.base)
		return;
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(&st__g.arena);
	_Atomic uint32_t *slots = how == BUMP_GLOBAL ? NULL : gen_slots(true);
	/* release (every add): the namespace change (done) before the new generation */
	if (!slots) {
		st__fs_gen_bump_global();
		return;
	}
	/* the slots of where the name really is: its directory spelled
	 * through a link or with ".." is another spelling of that directory,
	 * whose keys carry its real slot (spellings through links carry the
	 * arena epoch, which ns_epoch moves below) */
	resolve(a); /* sets rpath: the resolved path, or abs when it cannot be resolved */
	if (how == BUMP_NAME)
		atomic_fetch_add_explicit(&slots[dir_slot(a->rpath, a->rpath_len)], 1,
					  memory_order_release);
	atomic_fetch_add_explicit(&slots[own_slot(a->rpath, a->rpath_len)], 1,
				  memory_order_release);
	/* every thread's memo of warm accesses drops (st__arena_epoch) */
	atomic_fetch_add_explicit(&h->ns_epoch, 1, memory_order_release);
}

/*
 * Does a symlink at abs reach past its own name?  Its target (followed) is
 * a directory, or cannot be reached: a dangling link becomes a directory's
 * link when its target is made (mkdir, no link changes), so it counts as
 * one.  Only a link to an existing non-directory leaves every path beyond it
 * failing with ENOTDIR.
 */
static bool link_is_wide(const char *abs)
{
	struct stat st;
	return st__at_abs(SYS_newfstatat, abs, (long)&st, 0) != 0 || S_ISDIR(st.st_mode);
}

/* Build a->abs: the absolute spelling, cleaned but with ".." kept. */
static bool make_abs(struct st_acc *a)
{
	/* the directory's name goes where abs will be, and the name is
	 * joined to it in place: a PATH_MAX array on the stack would push
	 * every call below it onto stack pages the program never touched (a
	 * page fault each), and another buffer would be a page of its own */
	char *out = a->absbuf + KEY_GEN;
	size_t cap = sizeof(a->absbuf) - KEY_GEN;
	char *base = out;
	ssize_t blen = 0;
	const char *p = a->path;
	if (st__unreadable(p)) {
		/* NULL, (char *)-1, a kernel address...: not read, neither
		 * judged nor recorded; the real call answers EFAULT */
		a->skip = true;
		return false;
	}
	if (p[0] == 0) {
		if (!a->empty_path || a->dirfd == AT_FDCWD) {
			if (!a->empty_path) {
				a->skip = true; /* ENOENT from the real call */
				return false;
			}
		}
		/* AT_EMPTY_PATH: the file the descriptor refers to, never what
		 * its name leads to: a descriptor of a symlink itself (O_PATH |
		 * O_NOFOLLOW) is named by the link's path, and fstatat, statx,
		 * fchownat... act on the link, as lstat does */
		a->nofollow = true;
	}
	if (p[0] != '/') {
		if (a->dirfd == AT_FDCWD)
			blen = st__getcwd(base, cap);
		else
			blen = st__fd_path(a->dirfd, base, cap);
		if (blen < 0) {
			/* EBADF, ENOTDIR, a non-file: the kernel decides.  But a
			 * directory deeper than PATH_MAX has no name the kernel
			 * will give, and one deeper than 2 x PATH_MAX none the
			 * shim can build: a run whose policy can refuse (a
			 * fence, a deny or an ask rule) cannot judge it and
			 * refuses (fail closed: a deny rule could be passed by
			 * a link there); a trace-only run lets it through,
			 * unrecorded, and counts it lost: the report says
			 * the trace is incomplete. */
			a->skip = true;
			if (blen == -ENAMETOOLONG) {
				if (st__listing_filtered())
					a->unjudgeable = true;
				else
					st__note_lost();
			}
			return false;
		}
	}
	size_t plen = strlen(p);
	size_t need = (size_t)blen + plen + 2 + KEY_GEN;
	if (need > sizeof(a->absbuf)) {
		/* a path longer than our buffer is carried whole */
		size_t m = (need + 4095) & ~(size_t)4095;
		char *map = mmap(NULL, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED) {
			a->skip = true;
			return false;
		}
		a->abs_map = m;
		out = map + KEY_GEN;
		cap = m - KEY_GEN;
	}
	ssize_t n;
	if (p[0] == '/' && plen + 1 <= cap && st__path_is_clean(p, plen)) {
		/* the common case, an absolute path already clean: checked in the
		 * program's buffer, not in the copy (reading back bytes just
		 * written, across the copy's stores, stalls the load) */
		memcpy(out, p, plen + 1);
		n = (ssize_t)plen;
		a->abs_src = p;
	} else {
		/* base is out (joined in place) unless abs took a mapping */
		if (p[0] == 0) {
			if (out != base)
				memcpy(out, base, (size_t)blen + 1);
			n = blen;
		} else {
			n = st__path_join(base, (size_t)blen, p, plen, out, cap);
		}
		if (n >= 0)
			n = st__path_clean(out, (size_t)n);
		a->abs_src = out;
	}
	if (n < 0) {
		a->skip = true;
		return false;
	}
	/* a spelling that ends in "/" or "/." (the cleaning drops them)
	 * makes the kernel follow a symlink at its last name even for
	 * lstat, readlink, lchown or O_NOFOLLOW: judged and recorded as
	 * followed; a final "/" not for the calls on the name itself
	 * (unlink, rmdir, rename, mkdir, symlink, ...), which fail on the
	 * link instead, but a final "." for them too (the name is ".") */
	if (a->nofollow && plen > 1) {
		size_t q = plen;
		while (q > 1 && p[q - 1] == '/')
			q--;
		bool dot_last = q >= 2 && p[q - 1] == '.' && p[q - 2] == '/';
		if (dot_last || (q < plen && !a->name_op))
			a->nofollow = false;
	}
	a->abs = out;
	a->abs_len = (size_t)n;
	/* the cwd's or dirfd's path (a clean name from the kernel, kept as
	 * the prefix of abs by the cleaning) */
	if (p[0] != '/' && blen > 1)
		a->held_len = (size_t)blen;
	return true;
}

/* RESOLVE_IN_ROOT's root: abs[0..root_len) is dirfd's path (0: none, or
 * dirfd is "/") */
static inline size_t root_len(const struct st_acc *a)
{
	return a->in_root ? a->held_len : 0;
}

/* st_walk.through for the sandbox: may a ".." leave dir?  Not when the
 * sandbox hides dir (a query of it is denied, ENOENT): the kernel's lookup
 * of ".." in a directory the program cannot see would fail, and
 * "denied/../allowed" would tell that it exists.  A directory under an ask
 * rule passes (the answer the caller gets is about the whole path). */
static bool dir_passable(const char *dir, size_t len)
{
	if (st__g.arena.base)
		return sandtrace_policy_match(st__g.arena.base, atomic_load(&st__g.policy),
					      SANDTRACE_CLASS_READ, dir, len,
					      NULL) != SANDTRACE_DENY;
	/* without the arena the daemon judges (only when the run's policy can
	 * hide a name: st__listing_filtered); a lost daemon passes it, and the
	 * caller's own request then fails as it must */
	struct sandtrace_verdict vd;
	return st__request(SANDTRACE_KIND_QUERY, dir, len, &vd) != 0 ||
	       vd.action != SANDTRACE_DENY || vd.err == EACCES;
}

/* Resolve a->abs into a->rpath (symlinks followed as the call would). */
static void resolve(struct st_acc *a)
{
	if (a->resolved)
		return;
	a->resolved = true;
	int saved = errno;
	ssize_t n = -1;
	char *out = NULL;
	bool overflow = false;
	if (a->abs_len + 1 <= sizeof(a->rbuf)) {
		/* the directory part: "/a/b" of "/a/b/c" (none for "/c") */
		const char *e = memrchr(a->abs, '/', a->abs_len);
		size_t dlen = e ? (size_t)(e - a->abs) : 0;
		struct st_walk w = {.through = st__listing_filtered() ? dir_passable : NULL,
				    .known = root_len(a),
				    .root = root_len(a),
				    .held = a->held_len,
				    .ask_held = st__g.arena.base != NULL};
		uint32_t v, gen = 0;
		size_t klen;
		/* the memo's key borrows the generation prefix in front of abs,
		 * which a caller may hold as its own key (key_of_abs): kept
		 * and put back */
		char held[KEY_GEN] = {0};
		const char *k;
		bool memo = st__g.arena.base && dlen > 0 && !root_len(a);
		if (memo) {
			memcpy(held, a->abs - KEY_GEN, KEY_GEN);
			gen = gen_of(a->abs, dlen);
			k = key_with(a, gen, dlen, &klen);
			if (sandtrace_ctrie_lookup(&st__g.arena, KEY_DIR_SELF, k, klen, &v) == 1)
				w.known = dlen;
		}
		/* into rhead, on the page of abs; a result too long for it is
		 * walked again into rbuf (the readlinks again: rare) */
		out = a->rhead;
		n = st__path_resolve(a->abs, a->abs_len, !a->nofollow, out, sizeof(a->rhead),
				     &a->magic_fd, st__tls()->scratch, ST_PATH_BUF, &w);
		if (n < 0 && w.overflow) {
			out = a->rbuf;
			n = st__path_resolve(a->abs, a->abs_len, !a->nofollow, out, sizeof(a->rbuf),
					     &a->magic_fd, st__tls()->scratch, ST_PATH_BUF, &w);
		}
		a->via_link = w.via_link;
		overflow = w.overflow;
		if (memo && !w.known && n >= 0 && w.confirmed >= dlen) {
			k = key_with(a, gen, dlen, &klen);
			sandtrace_ctrie_insert(&st__g.arena, KEY_DIR_SELF, k, klen, 1, NULL);
		}
		if (memo)
			memcpy(a->abs - KEY_GEN, held, KEY_GEN);
	}
	errno = saved;
	/* longer than the walk's buffers (2 x PATH_MAX: a deep cwd joined to
	 * a relative name, links whose resolution grows): what it leads to
	 * is unknown, so its spelling is no ground for a verdict */
	if (n < 0 && (a->abs_len + 1 > sizeof(a->rbuf) || overflow))
		a->unresolved = true;
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
	a->rpath = out;
	a->rpath_len = (size_t)n;
}

static unsigned key_of(unsigned kind, bool nofollow)
{
	return kind | (nofollow ? SANDTRACE_KEY_NOFOLLOW : 0);
}

/* The descriptor number a spelling of a process's own open file names:
 * .../fd/N (/dev/fd/N, /proc/self/fd/N, /proc/PID/task/T/fd/N) or
 * /dev/stdin, /dev/stdout, /dev/stderr; -1 when the spelling does not say
 * (a link of the program's own to such a name). */
static int magic_fd_number(const char *p, size_t n)
{
	static const char *const std[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
	for (int i = 0; i < 3; i++)
		if (n == strlen(std[i]) && !memcmp(p, std[i], n))
			return i;
	size_t e = n, b = n;
	while (b > 0 && p[b - 1] >= '0' && p[b - 1] <= '9')
		b--;
	if (b == e || e - b > 9 || b < 4 || memcmp(p + b - 4, "/fd/", 4) != 0)
		return -1;
	int fd = 0;
	for (size_t i = b; i < e; i++)
		fd = fd * 10 + (p[i] - '0');
	return fd;
}

/* A process's own open file by its /proc or /dev/fd name is never a
 * violation: it holds the file already.  But a reopen that asks for more
 * than the descriptor was opened for (a write through a descriptor opened
 * read-only, anything through an O_PATH one, which grants no access) is a
 * new access of the file, judged by where it is; so is an exec, which no
 * descriptor grants (execv("/dev/fd/N") is judged as fexecve(N) is). */
static bool magic_fd_grants(const struct st_acc *a)
{
	if (a->kind == SANDTRACE_KIND_EXEC && magic_fd_number(a->abs, a->abs_len) >= 0)
		return false;
	if (a->kind != SANDTRACE_KIND_WRITE && a->kind != SANDTRACE_KIND_READ &&
	    a->kind != SANDTRACE_KIND_EXEC && a->kind != SANDTRACE_KIND_DIR)
		return true;
	int fd = magic_fd_number(a->abs, a->abs_len);
	if (fd < 0)
		return true;
	long fl = ST_SYSCALL(SYS_fcntl, fd, F_GETFL);
	if (fl < 0)
		return true; /* not open here (another process's, a thread's table) */
	if (fl & O_PATH)
		return false;
	return a->kind != SANDTRACE_KIND_WRITE || (fl & O_ACCMODE) != O_RDONLY;
}

/* Does the call act on the file of a descriptor the program holds (an empty
 * name with AT_EMPTY_PATH: fstatat, statx, readlinkat, name_to_handle_at,
 * linkat's source, the fd writes), rather than look a name up? */
static bool held_fd_file(const struct st_acc *a)
{
	return a->path && a->path[0] == 0 && a->empty_path && a->dirfd != AT_FDCWD &&
	       !a->probe_fd;
}

/* Decide with the compiled sandbox in the arena.  Returns the value to cache. */
static uint32_t decide_local(struct st_acc *a, unsigned cls)
{
	resolve(a);
	if (a->via_link & ST_VIA_HIDDEN)
		return SANDTRACE_DENY; /* through a hidden directory (rpath names it) */
	if (a->unresolved) /* a sandbox that can refuse: fail closed, as unjudgeable */
		return SANDTRACE_DENY | SANDTRACE_V_EACCES;
	if (a->skip || (a->magic_fd && magic_fd_grants(a)))
		return SANDTRACE_ALLOW;
	const struct sandtrace_policy_table *pol = atomic_load(&st__g.policy);
	unsigned act = sandtrace_policy_match(st__g.arena.base, pol, cls, a->rpath,
					      a->rpath_len, NULL);
	if (act == SANDTRACE_ASK) {
		uint32_t v;
		a->asked = true;
		/* the daemon caches ask answers under the policy generation and
		 * the resolved path */
		struct st_tls *t = st__tls();
		uint32_t pgen = (uint32_t)atomic_load_explicit(
		    &sandtrace_arena_hdr(&st__g.arena)->generation, memory_order_acquire);
		size_t klen = sandtrace_ask_key(t->scratch, sizeof(t->scratch), pgen, a->rpath,
						a->rpath_len);
		if (klen && sandtrace_ctrie_lookup(&st__g.arena, SANDTRACE_KEY_ASK | cls,
						   t->scratch, klen, &v) == 1)
			return v;
		struct sandtrace_verdict vd;
		if (st__request(a->kind, a->rpath, a->rpath_len, &vd) == 0) {
			v = sandtrace_verdict_value(vd.action, vd.err);
			/* the answer under the key just missed, for every later
			 * asker: stored here, where that walk left the trie's
			 * path warm, not by the daemon after its reply (which
			 * an asker on its CPU would wait for); the daemon stores
			 * the answers of processes without the arena */
			if (klen)
				sandtrace_ctrie_insert(&st__g.arena, SANDTRACE_KEY_ASK | cls,
						       t->scratch, klen, v, NULL);
			return v;
		}
		if (st__g.flags & SANDTRACE_F_FAIL_OPEN) {
			a->fail_open = true;
			return SANDTRACE_ALLOW;
		}
		return SANDTRACE_DENY; /* fail closed: an ask never becomes an allow */
	}
	if (act == SANDTRACE_DENY && cls == SANDTRACE_CLASS_WRITE &&
	    sandtrace_policy_match(st__g.arena.base, pol, SANDTRACE_CLASS_READ, a->rpath,
				   a->rpath_len, NULL) == SANDTRACE_ALLOW)
		return SANDTRACE_DENY | SANDTRACE_V_EACCES; /* visible but not writable */
	return act;
}

/* Without the arena: whether the daemon's policy can hide a name, as its
 * answer says (a reload may have brought the first deny rule, or taken the
 * last away), for st__listing_filtered, this process's later listings and
 * what it execs.  Written by whichever thread got an answer last. */
static void take_hides(const struct sandtrace_verdict *vd)
{
	bool hides = (vd->flags & SANDTRACE_VF_HIDES) != 0;
	if (hides == ((__atomic_load_n(&st__g.flags, __ATOMIC_RELAXED) & SANDTRACE_F_HIDES) != 0))
		return;
	if (hides)
		__atomic_fetch_or(&st__g.flags, SANDTRACE_F_HIDES, __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(&st__g.flags, ~(unsigned)SANDTRACE_F_HIDES, __ATOMIC_RELAXED);
}

/* Decide by asking the daemon (no arena). */
static uint32_t decide_remote(struct st_acc *a)
{
	resolve(a);
	if (a->via_link & ST_VIA_HIDDEN)
		return SANDTRACE_DENY;
	/* as decide_local, when the policy can refuse (else the daemon allows
	 * the spelling, and the record marks it) */
	if (a->unresolved && st__listing_filtered())
		return SANDTRACE_DENY | SANDTRACE_V_EACCES;
	if (a->skip || (a->magic_fd && magic_fd_grants(a)))
		return SANDTRACE_ALLOW;
	struct sandtrace_verdict vd;
	if (st__request(a->kind, a->rpath, a->rpath_len, &vd) == 0) {
		take_hides(&vd);
		return sandtrace_verdict_value(vd.action, vd.err);
	}
	if ((st__g.flags & SANDTRACE_F_FENCED) && !(st__g.flags & SANDTRACE_F_FAIL_OPEN))
		return SANDTRACE_DENY;
	a->fail_open = (st__g.flags & SANDTRACE_F_FENCED) != 0;
	return SANDTRACE_ALLOW;
}

/* The verdict and the flags of an access's record: one st__pre never judged
 * (record_in: ST_UNJUDGED) says so, and the daemon writes the policy's
 * verdict on the path, never a violation (SANDTRACE_AF_UNJUDGED) */
static void record_verdict(const struct st_acc *a, struct sandtrace_access *acc)
{
	if (a->verdict == ST_UNJUDGED) {
		acc->verdict = 0;
		acc->flags |= SANDTRACE_AF_UNJUDGED;
	} else {
		acc->verdict = (uint8_t)a->verdict;
	}
	if (a->fail_open)
		acc->flags |= SANDTRACE_AF_FAIL_OPEN;
	if (a->asked)
		acc->flags |= SANDTRACE_AF_ASKED;
	if (a->unresolved)
		acc->flags |= SANDTRACE_AF_UNRESOLVED;
}

static void send_record(struct st_acc *a, unsigned kind, int err, uint16_t flags)
{
	resolve(a);
	if (a->skip)
		return;
	struct sandtrace_access acc = {.kind = (uint8_t)kind,
				       .flags = flags,
				       .err = err,
				       .path_len = (uint32_t)a->rpath_len};
	record_verdict(a, &acc);
	st__send_access(&acc, a->rpath, a->rpath_len, NULL, 0);
	a->sent = true;
}

/* ---- identity mode (SANDTRACE_F_IDENTITY: --manifest, --verify) ---- */

/* The identity of the regular file a read or exec reached: one fstat on the
 * descriptor the program got (a->fd), or a stat of the resolved path when
 * there is none (exec, dlopen, libraries mapped by the loader).  false for
 * anything that is not a regular file, or when the call fails.  The caller
 * preserves errno. */
static bool take_identity(struct st_acc *a, struct sandtrace_identity *id)
{
	struct stat st;
	long r;
	if (a->fd >= 0) {
		r = ST_SYSCALL(SYS_fstat, a->fd, &st);
	} else {
		resolve(a);
		struct st_tls *t = st__tls();
		if (a->skip || !t || a->rpath_len + 1 > sizeof(t->scratch))
			return false;
		memcpy(t->scratch, a->rpath, a->rpath_len); /* rpath need not end with a NUL */
		t->scratch[a->rpath_len] = 0;
		r = ST_SYSCALL(SYS_newfstatat, AT_FDCWD, t->scratch, &st, 0);
	}
	if (r != 0 || !S_ISREG(st.st_mode))
		return false;
	id->dev = (uint64_t)st.st_dev;
	id->ino = (uint64_t)st.st_ino;
	id->size = (int64_t)st.st_size;
	id->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	id->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
	return true;
}

/* Look up (insert false) or insert the identity key: the usual key (fs
 * generation + abs) followed by the 40 identity bytes, written in place
 * after abs and replaced by a NUL after.  Returns as sandtrace_ctrie_lookup
 * or sandtrace_ctrie_insert (*v: the value to insert / the value found). */
static int id_key(struct st_acc *a, unsigned cls, const struct sandtrace_identity *id,
		  bool insert, uint32_t *v)
{
	size_t klen;
	const char *k = key_of_abs(a, &klen);
	memcpy(a->abs + a->abs_len, id, sizeof(*id));
	klen += sizeof(*id);
	int r = insert ? sandtrace_ctrie_insert(&st__g.arena, cls, k, klen, *v, v)
		       : sandtrace_ctrie_lookup(&st__g.arena, cls, k, klen, v);
	a->abs[a->abs_len] = 0;
	return r;
}

/* --verify: is this version of a listed file the one the manifest holds?
 * Returns SANDTRACE_V_TAMPERED when not, 0 when it is or the path is not
 * listed.  *nocache: the answer must not be cached (the daemon was lost). */
/* Does a fenced run refuse a version of a's file that fails verification?
 * When the call can be undone or not made: an open (a->fd), an exec, a file
 * libc reads by path inside the call (a->loads). */
static bool refusable(const struct st_acc *a, unsigned kind)
{
	return (st__g.flags & SANDTRACE_F_FENCED) &&
	       (a->fd >= 0 || kind == SANDTRACE_KIND_EXEC || a->loads);
}

static uint32_t verify_version(struct st_acc *a, unsigned kind, const struct sandtrace_identity *id,
			       bool *nocache)
{
	uint32_t v;
	resolve(a);
	if (a->skip)
		return 0;
	/* the daemon published every listed path at start: most reads never ask */
	if (st__g.arena.base && sandtrace_ctrie_lookup(&st__g.arena, SANDTRACE_KEY_LISTED,
						       a->rpath, a->rpath_len, &v) != 1)
		return 0;
	struct sandtrace_verdict vd;
	if (st__request_verify(kind, a->rpath, a->rpath_len, id, refusable(a, kind), &vd) == 0)
		return vd.action == SANDTRACE_ALLOW ? 0 : SANDTRACE_V_TAMPERED;
	*nocache = true;
	/* the daemon is lost: a fenced run fails closed */
	return (st__g.flags & SANDTRACE_F_FENCED) && !(st__g.flags & SANDTRACE_F_FAIL_OPEN)
		   ? SANDTRACE_V_TAMPERED
		   : 0;
}

/* Record a successful READ/EXEC in identity mode: one record per (path
 * spelling, file version), verified under --verify at its first use.
 * Returns false when the access has no identity (not a regular file): the
 * caller records it by path as usual. */
static bool post_identity(struct st_acc *a, unsigned kind)
{
	struct sandtrace_identity id;
	if (!take_identity(a, &id))
		return false;
	unsigned cls = SANDTRACE_KEY_IDENTITY | key_of(kind, a->nofollow);
	size_t cap = a->abs_map ? a->abs_map - KEY_GEN : sizeof(a->absbuf) - KEY_GEN;
	bool keyed = st__g.arena.base && !(st__g.flags & SANDTRACE_F_RECORD_ALL) &&
		     a->abs_len + sizeof(id) + 1 <= cap;
	uint32_t v = 0;
	if (keyed && id_key(a, cls, &id, false, &v) == 1) {
		/* this version was recorded (and verified) by some process: a hit */
		ST_COUNT(st__g.hits);
		goto done;
	}
	bool nocache = false;
	v = SANDTRACE_V_RECORDED;
	if (st__g.flags & SANDTRACE_F_VERIFY)
		v |= verify_version(a, kind, &id, &nocache);
	if (keyed && !nocache && id_key(a, cls, &id, true, &v) == 0) {
		/* another process recorded it first (v is now its value) */
		ST_COUNT(st__g.hits);
		goto done;
	}
	resolve(a);
	if (!a->skip) {
		bool refused = (v & SANDTRACE_V_TAMPERED) && refusable(a, kind);
		struct sandtrace_access acc = {.kind = (uint8_t)kind,
					       .flags = SANDTRACE_AF_IDENTITY,
					       .err = refused ? EACCES : 0,
					       .path_len = (uint32_t)a->rpath_len};
		record_verdict(a, &acc);
		/* the identity travels as the last part of the payload */
		st__send_access(&acc, a->rpath, a->rpath_len, (const char *)&id, sizeof(id));
		a->sent = true;
	}
done:
	/* a fenced run refuses a version that failed verification: the wrapper
	 * undoes the open (a->fd), the exec is not made, the library not loaded
	 * (or unloaded) */
	if ((v & SANDTRACE_V_TAMPERED) && refusable(a, kind))
		a->refuse = true;
	return true;
}

/* ---- the thread's memo of warm accesses (shim.h, struct st_memo_ent) ---- */

/*
 * The key of a->abs for a spelling that goes through a symlink: the link's
 * meaning can change with a name change in any directory (a link elsewhere
 * pointing at the changed name), so such a key is made with the arena epoch
 * (st__arena_epoch: fs_gen + policy generation + ns_epoch, which every link made,
 * removed or moved anywhere moves), top bit set so that it never meets a
 * key made with gen_of.  Whether a spelling goes through a link is known
 * only after resolving it: lookups try both keys.
 */
static inline uint32_t link_gen(void)
{
	return (uint32_t)st__arena_epoch() | 0x80000000u;
}
static const char *key_via_link(struct st_acc *a, size_t *len)
{
	return key_with(a, a->gens ? a->gen_link : link_gen(), a->abs_len, len);
}

/*
 * Take the generations of a->abs's two keys once, before the decision they
 * key: whatever is decided from then on (a policy read, a resolution) is
 * inserted under them, so a reload or a namespace change that lands during
 * the decision leaves its answer under generations already past, where no
 * lookup meets it, never under the new ones.  Before st__policy_refresh and
 * resolve(); st__post takes them anew for the records.
 */
static void take_gens(struct st_acc *a)
{
	a->gen_link = link_gen();
	a->gen_abs = gen_of(a->abs_src, a->abs_len);
	a->gens = true;
}

/* Has the clean spelling p[0..n) a ".." component?  What it names depends on
 * every directory before the "..", not only on the one its slot is of. */
static bool has_dotdot(const char *p, size_t n)
{
	for (const char *q = p; (q = memmem(q, (size_t)(p + n - q), "/..", 3)) != NULL; q += 3)
		if (q + 3 == p + n || q[3] == '/')
			return true;
	return false;
}

/* After resolve(): does the spelling get keys at all (not through a /proc
 * magic link, which moves with the process), and which. */
static bool keyable(const struct st_acc *a)
{
	/* nor one whose answer a hidden directory decided (ST_VIA_HIDDEN,
	 * ST_VIA_HELD): the same bytes, as a cwd joined to a relative name
	 * or spelled from "/", are refused to a process that does not hold
	 * the directory and allowed to one that does */
	/* nor one that stopped before a ".." (ST_VIA_UNSURE): a name made on
	 * the way, which moves no generation, makes it name another place */
	return !(a->via_link & (ST_VIA_MAGIC | ST_VIA_HIDDEN | ST_VIA_HELD | ST_VIA_UNSURE)) &&
	       !root_len(a) && !a->unresolved;
}
static const char *key_as_resolved(struct st_acc *a, size_t *len)
{
	/* a ".." spelling too is keyed with the arena epoch: the change of
	 * any directory before its ".." moves what it names */
	return a->via_link || has_dotdot(a->abs, a->abs_len) ? key_via_link(a, len)
							       : key_of_abs(a, len);
}

/*
 * Look (cls, p[0..n)) up under both kinds of key, the likelier first: a
 * spelling under /lib, /lib64, /bin or /sbin goes through a link on a
 * merged-/usr system (every process's libraries are spelled so), anything
 * else seldom does.  The order only saves a walk of the trie for a key that
 * is not there; both keys are always tried.  p is an absolute spelling,
 * NUL-terminated; its bytes are read where they lie (the key's two pieces:
 * the generation, then p).  Returns as sandtrace_ctrie_lookup (1: found,
 * *v its value; and, if ref is not NULL, *ref its SNode and *gen the
 * generation of the key found, which tells its kind: top bit set through a
 * link).
 */
static int lookup_spelling_gens(const char *p, size_t n, unsigned cls, const struct st_acc *g,
				uint32_t *v, uint32_t *ref, uint32_t *gen_found)
{
	bool linky = p[0] == '/' && ((p[1] == 'l' && p[2] == 'i' && p[3] == 'b' &&
				       (p[4] == '/' || (p[4] == '6' && p[5] == '4' && p[6] == '/'))) ||
				      (p[1] == 'b' && p[2] == 'i' && p[3] == 'n' && p[4] == '/') ||
				      (p[1] == 's' && p[2] == 'b' && p[3] == 'i' && p[4] == 'n' &&
				       p[5] == '/'));
	for (int i = 0; i < 2; i++) {
		uint32_t gen = (i == 0) == linky ? (g ? g->gen_link : link_gen())
						 : (g ? g->gen_abs : gen_of(p, n));
		if (sandtrace_ctrie_lookup_prefixed(&st__g.arena, cls, gen, p, n, v, ref) == 1) {
			if (gen_found)
				*gen_found = gen;
			return 1;
		}
	}
	return 0;
}

static int lookup_spelling_ref(const char *p, size_t n, unsigned cls, uint32_t *v, uint32_t *ref,
			       uint32_t *gen_found)
{
	return lookup_spelling_gens(p, n, cls, NULL, v, ref, gen_found);
}

/* ... of a->abs, read from abs_src (the copy's bytes were just stored),
 * under the generations take_gens took */
static int lookup_both(struct st_acc *a, unsigned cls, uint32_t *v)
{
	return lookup_spelling_gens(a->abs_src, a->abs_len, cls, a, v, NULL, NULL);
}

/* (path, nofollow) -> an odd 64-bit tag (0 is "empty").  It picks the
 * entry and rejects most other paths in one compare; equality is always
 * settled by comparing the bytes, so the hash reads only what tells a
 * build's paths apart cheaply: the length and the last sixteen bytes (a
 * file name and the end of its directory), or the whole of a shorter path. */
static inline uint64_t memo_hash(const char *p, size_t n, bool nofollow)
{
	uint64_t a = 0, b = 0;
	if (n >= 16) {
		memcpy(&a, p + n - 8, 8);
		memcpy(&b, p + n - 16, 8);
	} else if (n >= 8) {
		memcpy(&a, p + n - 8, 8);
		memcpy(&b, p, 8);
	} else {
		for (size_t i = 0; i < n; i++)
			a = a << 8 | (unsigned char)p[i];
	}
	uint64_t h = (a ^ (b << 29 | b >> 35) ^ n ^ (uint64_t)nofollow << 40) *
		     UINT64_C(0xff51afd7ed558ccd);
	return (h ^ h >> 32) | 1;
}

/* Is e the entry of path[0..n) (tag its memo_hash) in this epoch? */
static inline bool memo_mine(const struct st_memo_ent *e, uint64_t tag, uint64_t epoch,
			     const char *path, size_t n)
{
	return e->tag == tag && e->epoch == epoch && e->len == n && memcmp(e->key, path, n) == 0;
}

/* ... with the classes cls allowed? */
static inline bool memo_allows(const struct st_memo_ent *e, uint64_t tag, uint64_t epoch,
			       const char *path, size_t n, unsigned cls)
{
	return e->tag == tag && e->epoch == epoch && e->len == n && (e->allow & cls) &&
	       memcmp(e->key, path, n) == 0;
}

/*
 * The memo's part of one eligible call of thread t (the outermost checked
 * call of a read or query of the absolute path[0..n), none of the modes that
 * look at every access): its trial's bookkeeping, and the entry to probe and
 * fill, with its tag in *tag; NULL when the memo is not in use for this call
 * (not yet, dropped, or a path longer than ST_MEMO_KEY).  A thread uses it
 * from its ST_MEMO_AFTER-th eligible call on (a short-lived thread never
 * touches its page), and a trial of ST_MEMO_TRIAL probes decides whether it
 * pays; a dropped memo is tried again ST_MEMO_RETRY calls later (a
 * program's phases differ).  Probes once the trial is over and paid are not
 * counted (st__fast_pre makes them).
 */
static struct st_memo_ent *memo_entry(struct st_tls *t, const char *path, size_t n,
				      bool nofollow, uint64_t *tag)
{
	if (t->memo_calls < ST_MEMO_AFTER) {
		t->memo_calls++;
		return NULL;
	}
	if (t->memo_off) {
		if (++t->memo_calls < ST_MEMO_RETRY)
			return NULL;
		t->memo_off = false;
		t->memo_probes = t->memo_hits = 0;
	}
	if (t->memo_probes == ST_MEMO_TRIAL) { /* the trial is over: keep it if it paid */
		t->memo_fast = t->memo_hits * ST_MEMO_MIN_RATIO >= ST_MEMO_TRIAL;
		if (!t->memo_fast) {
			t->memo_off = true;
			t->memo_calls = 0;
			return NULL;
		}
	} else {
		t->memo_probes++;
	}
	if (n > ST_MEMO_KEY)
		return NULL;
	*tag = memo_hash(path, n, nofollow);
	return &t->memo[(*tag >> 1) % ST_MEMO_WAYS];
}

/* A hit of the memo's trial: counted until the trial is over. */
static inline void memo_hit(struct st_tls *t)
{
	if (t->memo_probes < ST_MEMO_TRIAL)
		t->memo_hits++;
}

/*
 * Probe the memo for a->path (absolute, as spelled).  Only the outermost
 * checked call of a thread uses it (st__level 1): a signal handler's nested
 * call never meets an entry half written (one that comes at level 2 does not
 * use it; one that interrupts the shim's own code is checked aside, at level
 * 1 of buffers of its own, whose memo it uses).  Only reads and queries (the hot
 * calls; writes change the namespace, execs and listings do more), and not
 * in the modes that look at every access (record-all, identity, verify).
 * Returns true when the entry says cls is allowed in the current epoch (the
 * call goes ahead without building the key); a->memo is then the entry to
 * fill or to read after the call, else NULL.
 */
static bool memo_probe(struct st_acc *a, unsigned cls)
{
	if (st__level != 1 || !st__g.arena.base || st__odd_ptr(a->path) || a->path[0] != '/' || a->quiet ||
	    (a->kind != SANDTRACE_KIND_READ && a->kind != SANDTRACE_KIND_QUERY) ||
	    (st__g.flags & (SANDTRACE_F_RECORD_ALL | SANDTRACE_F_IDENTITY | SANDTRACE_F_VERIFY)))
		return false;
	struct st_tls *t = st__tls();
	size_t n = strnlen(a->path, ST_MEMO_KEY + 1);
	uint64_t tag;
	struct st_memo_ent *e = memo_entry(t, a->path, n, a->nofollow, &tag);
	if (!e)
		return false;
	a->memo = e;
	a->memo_tag = tag;
	a->memo_epoch = st__arena_epoch();
	bool hit = memo_allows(e, tag, a->memo_epoch, a->path, n, cls);
	if (hit)
		memo_hit(t);
	return hit;
}

/* The sandbox allows the classes cls for path[0..n): note it in e (taking
 * the entry over from another path or an older epoch). */
static void memo_fill(struct st_memo_ent *e, uint64_t tag, uint64_t epoch, const char *path,
		      size_t n, unsigned cls)
{
	if (!memo_mine(e, tag, epoch, path, n)) {
		e->tag = 0;
		e->epoch = epoch;
		e->len = (uint16_t)n;
		e->kinds = 0;
		e->allow = 0;
		st__copy_short(e->key, path, n);
		e->tag = tag;
	}
	e->allow |= (uint8_t)cls;
}

static void memo_allow(struct st_acc *a, unsigned cls)
{
	if (a->memo) /* strlen <= ST_MEMO_KEY: memo_probe checked */
		memo_fill(a->memo, a->memo_tag, a->memo_epoch, a->path, strlen(a->path), cls);
}

/* The record (kind, a->path) is in the Ctrie: note it. */
static void memo_recorded(struct st_acc *a, unsigned kind)
{
	if (a->memo && memo_mine(a->memo, a->memo_tag, a->memo_epoch, a->path, a->memo->len) &&
	    a->path[a->memo->len] == 0)
		a->memo->kinds |= (uint8_t)(1u << kind);
}

bool st__fast_pre(struct st_fast *f, const char *path, unsigned kind, bool nofollow)
{
	struct st_tls *t = st__tls_bufs; /* made by the thread's first checked call */
	/* libraries a dlopen left to note: the ordinary path notes them first
	 * (st__enter) */
	/* path is not odd (shim.h st__odd_ptr, NULL included): ONE_PATH
	 * tested it */
	if (!t || !st__g.hit_fast || st__depth || st__level || path[0] != '/' ||
	    (kind != SANDTRACE_KIND_READ && kind != SANDTRACE_KIND_QUERY) ||
	    st__libs_due())
		return false;
	st__level = 1; /* before the memo is read: see shim.h */
	st__frame[1] = (uintptr_t)f;
	size_t n = strnlen(path, ST_FAST_PATH + 1);
	if (n > ST_FAST_PATH)
		goto slow;
	unsigned cls = sandtrace_kind_class(kind);
	/* the epoch before anything is decided: a memo entry filled below is
	 * valid in it only, so a change that lands during the decision leaves
	 * the entry already stale (an epoch read after it would not) */
	uint64_t tag = 0, epoch = st__arena_epoch();
	uint32_t vref = 0, vgen = 0;
	struct st_memo_ent *e = NULL;
	if (t->memo_fast && n <= ST_MEMO_KEY) { /* the trial is over and paid */
		tag = memo_hash(path, n, nofollow);
		e = &t->memo[(tag >> 1) % ST_MEMO_WAYS];
		if (memo_allows(e, tag, epoch, path, n, cls))
			goto go;
	}
	/* the Ctrie: does the sandbox allow cls for this spelling? */
	st__policy_refresh();
	bool trivial = atomic_load_explicit(&st__g.trivial_policy, memory_order_relaxed);
	if (!trivial) {
		uint32_t v;
		unsigned key = SANDTRACE_KEY_VERDICT | cls | (nofollow ? SANDTRACE_KEY_NOFOLLOW : 0);
		if (lookup_spelling_ref(path, n, key, &v, &vref, &vgen) != 1)
			goto slow; /* not decided yet: st__pre decides */
		v &= SANDTRACE_V_ACTION_MASK;
		if (v != SANDTRACE_ALLOW && v != SANDTRACE_ASK)
			goto slow; /* a violation: st__pre refuses and records it */
	}
	/* allowed: an eligible call of the memo's (counted once: the ordinary
	 * path is not taken) */
	if (!t->memo_fast) {
		e = memo_entry(t, path, n, nofollow, &tag);
		if (e && memo_allows(e, tag, epoch, path, n, cls))
			memo_hit(t);
	}
	if (e)
		memo_fill(e, tag, epoch, path, n, trivial ? 0xffu : cls);
go:
	*f = (struct st_fast){e, tag, epoch, path, n, kind, nofollow, vref, vgen};
	return true;
slow:
	st__level = 0;
	return false;
}

void st__fast_post(struct st_fast *f, int err)
{
	unsigned kind = err == ENOENT ? SANDTRACE_KIND_MISSING : f->kind;
	/* the entry is as st__fast_pre left it: the real call's nested calls
	 * and signal handlers ran at level 2, which leaves the memo alone */
	if (f->e && (f->e->kinds & (1u << kind)))
		goto hit;
	/* under a sandbox: the verdict's SNode says which records of the same
	 * key are in the Ctrie (SANDTRACE_V_SEEN_SHIFT), as long as its key is
	 * still the spelling's (its generation read again: a namespace change
	 * during the call is seen) */
	uint32_t seen = 1u << (SANDTRACE_V_SEEN_SHIFT + kind);
	/* the arena epoch unchanged since st__fast_pre read it (before the
	 * verdict's generation was taken): no generation moved, the key is the
	 * spelling's without working its generation out again */
	bool vkey = f->vref &&
		    (st__arena_epoch() == f->epoch ||
		     f->vgen == ((f->vgen & 0x80000000u) ? link_gen() : gen_of(f->path, f->len)));
	if (vkey && (sandtrace_ctrie_value(&st__g.arena, f->vref) & seen))
		goto known;
	uint32_t had, rgen;
	if (lookup_spelling_ref(f->path, f->len, key_of(kind, f->nofollow), &had, NULL, &rgen) ==
	    1) {
		/* recorded already, by some process; under the verdict's key
		 * itself: say so on its SNode */
		if (vkey && rgen == f->vgen)
			sandtrace_ctrie_value_or(&st__g.arena, f->vref, seen);
		goto known;
	}
	/* an outcome not recorded yet: recorded as st__post does (the key is
	 * built now) */
	st__depth++;
	struct st_acc *a = &st__tls_bufs->acc[0];
	st__acc_init(a, AT_FDCWD, f->path, f->kind, f->nofollow);
	if (f->e) {
		a->memo = f->e;
		a->memo_tag = f->tag;
		a->memo_epoch = f->epoch;
	}
	make_abs(a); /* when it cannot, a->skip: st__post records nothing */
	st__post(a, err);
	st__depth--;
	st__level = 0;
	return;
known:
	if (f->e)
		f->e->kinds |= (uint8_t)(1u << kind);
hit:
	ST_COUNT(st__g.calls);
	ST_COUNT(st__g.hits);
	st__level = 0;
}

int st__pre(struct st_acc *a)
{
	int saved = errno;
	unsigned cls = sandtrace_kind_class(a->kind);
	if (memo_probe(a, cls)) { /* allowed, as this thread saw in this epoch */
		a->memo_hit = true;
		errno = saved;
		return 0;
	}
	if (!make_abs(a)) {
		errno = saved;
		return a->unjudgeable ? EACCES : 0;
	}
	if (a->kind == SANDTRACE_KIND_QUERY && held_fd_file(a)) {
		/* a query of a file the process holds open is never a
		 * violation, as fstat of the descriptor, which no wrapper sees,
		 * and a query by its /dev/fd/N name (magic_fd_grants) are not;
		 * nor is the answer kept under the file's path (the process
		 * that spells it does not hold it) */
		errno = saved;
		return 0;
	}
	if (a->kind == SANDTRACE_KIND_WRITE && a->nofollow && st__g.arena.base) {
		/* a namespace write (unlink, rename, symlink, mkdir, ...): was
		 * the name a symlink or a directory, or absent? (st__post) */
		struct stat st;
		a->ns_change = true;
		if (st__at_abs(SYS_newfstatat, a->abs, (long)&st, AT_SYMLINK_NOFOLLOW) == 0) {
			a->was_link = S_ISLNK(st.st_mode);
			a->was_dir = S_ISDIR(st.st_mode);
			a->link_wide = a->was_link && link_is_wide(a->abs);
		} else
			a->was_missing = errno == ENOENT;
	}
	uint32_t v;
	if (st__g.arena.base) {
		take_gens(a);
		/* the name of a namespace write (a rename's or link's, an
		 * unlink's, a mkdir's, ...) is resolved now, whatever the Ctrie
		 * knows of its verdict: the call can move what its names go
		 * through (rename("l", "l/x"), l a link to a directory, puts l
		 * in its target's directory; an unlink can remove a name a link
		 * on the way leads through), and st__post's resolution after the
		 * call would record a place the call never wrote; as without the
		 * arena, where every name is resolved before the call (found by
		 * tests/integration/fsfuzz.sh, seeds 13 and 4027) */
		if (a->ns_change)
			resolve(a);
		st__policy_refresh();
		if (atomic_load_explicit(&st__g.trivial_policy, memory_order_relaxed)) {
			memo_allow(a, 0xffu); /* no sandbox: every class */
			errno = saved;
			return 0;
		}
		unsigned key = SANDTRACE_KEY_VERDICT | cls | (a->nofollow ? SANDTRACE_KEY_NOFOLLOW : 0);
		size_t klen;
		/* a spelling below a root has no keys (keyable) */
		int r = root_len(a) ? 0 : lookup_both(a, key, &v);
		if (r != 1) {
			v = decide_local(a, cls);
			/* a fail-open answer is not cached: the next call tries
			 * again; nor one through a /proc magic link */
			if (!a->fail_open && keyable(a)) {
				const char *k = key_as_resolved(a, &klen);
				/* seen bits are of a key's own records only */
				sandtrace_ctrie_insert(&st__g.arena, key, k, klen,
						       v & ~SANDTRACE_V_SEEN_MASK, NULL);
			}
		}
	} else {
		v = decide_remote(a);
	}
	a->verdict = v & SANDTRACE_V_ACTION_MASK;
	if (a->verdict == SANDTRACE_ALLOW || a->verdict == SANDTRACE_ASK) {
		a->verdict = SANDTRACE_ALLOW;
		if (!a->fail_open && keyable(a)) /* cached in the Ctrie too */
			memo_allow(a, cls);
		errno = saved;
		return 0;
	}
	a->deny_err = (v & SANDTRACE_V_EACCES) ? EACCES : ENOENT;
	/* a violation: recorded once per (kind, path).  A quiet check (a
	 * listing's filter) records nothing and marks nothing: the mark would
	 * make the program's own access of the name later unreported */
	bool first = true;
	if (!a->quiet && st__g.arena.base && !(st__g.flags & SANDTRACE_F_RECORD_ALL) &&
	    keyable(a)) {
		size_t klen;
		const char *k = key_as_resolved(a, &klen);
		first = sandtrace_ctrie_insert(&st__g.arena, key_of(a->kind, a->nofollow) | 0x80u,
					       k, klen, v, NULL) != 0;
	}
	if (first && !a->quiet)
		send_record(a, a->kind, a->deny_err, SANDTRACE_AF_DENIED);
	st__acc_done(a);
	errno = saved;
	return a->deny_err;
}

void st__acc_done(struct st_acc *a)
{
	if (a->abs_map) {
		munmap(a->abs - KEY_GEN, a->abs_map);
		a->abs_map = 0;
		a->abs = NULL;
	}
}

void st__post(struct st_acc *a, int err)
{
	int saved = errno;
	unsigned kind = a->kind;
	if (err == ENOENT && kind != SANDTRACE_KIND_WRITE)
		kind = SANDTRACE_KIND_MISSING;
	if (a->memo_hit) {
		/* the entry st__pre matched: only this thread's level-1 calls write
		 * it, and none ran since (the real call's nested ones pass through) */
		if ((a->memo->kinds & (1u << kind)) && !a->again) {
			/* recorded already, as this thread saw in this epoch */
			ST_COUNT(st__g.calls);
			ST_COUNT(st__g.hits);
			errno = saved;
			return;
		}
		/* an outcome not seen yet: the record's key is built now */
		if (!make_abs(a))
			goto out;
	}
	if (a->skip || !a->abs)
		goto out;
	if (a->ns_change && !err) {
		/*
		 * What the name was before the call and is after it: a directory
		 * moved (a rename or exchange: the only pair whose names can be
		 * directories) moves every path under it; a directory removed
		 * takes its children's keys with it; a link that was there and
		 * a link that is there now (made by symlink or link, or moved
		 * here by a rename or an exchange, over whatever was there) each
		 * change what the name resolves to.  Only calls that can put a
		 * link at the name (it was missing, or one of a pair) look again.
		 */
		struct stat st;
		int now = -1; /* the name's type after the call, -1: gone */
		if (a->was_missing || a->pair || a->was_dir)
			now = st__at_abs(SYS_newfstatat, a->abs, (long)&st, AT_SYMLINK_NOFOLLOW) == 0
				  ? (int)(st.st_mode & S_IFMT)
				  : -1;
		if (a->was_dir && a->pair)
			fs_gen_bump(a, BUMP_GLOBAL);
		else if (a->was_dir && now != S_IFDIR)
			fs_gen_bump(a, BUMP_CHILDREN);
		if (a->was_link)
			fs_gen_bump(a, a->link_wide ? BUMP_GLOBAL : BUMP_NAME);
		if (now == S_IFLNK && (a->was_missing || a->pair))
			fs_gen_bump(a, link_is_wide(a->abs) ? BUMP_GLOBAL : BUMP_NAME);
	}
	if (err == 0 && (st__g.flags & SANDTRACE_F_IDENTITY) &&
	    (kind == SANDTRACE_KIND_READ || kind == SANDTRACE_KIND_EXEC) && post_identity(a, kind))
		goto out;
	if (st__g.arena.base && !(st__g.flags & SANDTRACE_F_RECORD_ALL) && !a->again) {
		size_t klen;
		ST_COUNT(st__g.calls);
		uint32_t had;
		unsigned rk = key_of(kind, a->nofollow);
		/* the records are a decision of their own, keyed with
		 * generations read before the resolution they use: anew when
		 * it is yet to be made, else st__pre's, read before any
		 * resolution of this access (st__pre's, or a bump's above after
		 * the call): a change during the call then leaves them under
		 * past generations, never a stale resolution under new ones */
		if (!a->resolved)
			take_gens(a);
		if (!root_len(a) &&
		    lookup_both(a, rk, &had) == 1) { /* already recorded by some process: a hit */
			ST_COUNT(st__g.hits);
			memo_recorded(a, kind);
			goto out;
		}
		/*
		 * A miss on the spelling.  After a generation bump every spelling
		 * misses once; what it resolves to has usually been recorded
		 * already: the resolved path is a key of its own (no generation:
		 * a resolved path does not depend on symlinks), so a bump costs a
		 * resolution, never a second record.  A spelling that goes through
		 * a symlink is keyed with the arena epoch (key_via_link).
		 */
		resolve(a);
		if (!a->skip && keyable(a)) {
			const char *k = key_as_resolved(a, &klen);
			int r = sandtrace_ctrie_insert(&st__g.arena, rk, k, klen,
						       SANDTRACE_V_RECORDED, NULL);
			if (r >= 0) /* in the Ctrie from now on (r == 0: another process won) */
				memo_recorded(a, kind);
		}
		if (!a->skip && sandtrace_ctrie_insert(&st__g.arena, KEY_RESOLVED | kind, a->rpath,
						       a->rpath_len, SANDTRACE_V_RECORDED,
						       NULL) == 0) {
			ST_COUNT(st__g.hits);
			goto out;
		}
	} else {
		ST_COUNT(st__g.calls);
	}
	send_record(a, kind, err, 0);
out:
	st__acc_done(a);
	errno = saved;
}

void st__exec_failed(int dirfd, const char *path, bool nofollow, bool empty, bool spelled,
		     unsigned why, int err)
{
	int saved = errno;
	struct st_acc *a = &st__tls_acc[1];
	st__acc_init(a, dirfd, path, SANDTRACE_KIND_EXEC, nofollow);
	a->empty_path = empty;
	/* the path as the records before the call named it: resolved again
	 * (their buffers hold the exec's environment since) */
	if (make_abs(a)) {
		if (!spelled)
			resolve(a);
		else
			a->rpath = a->abs, a->rpath_len = a->abs_len;
		if (!a->skip) {
			struct sandtrace_access acc = {.kind = SANDTRACE_KIND_EXEC,
						       .flags = SANDTRACE_AF_EXEC_FAILED,
						       .err = err ? err : EIO,
						       .path_len = (uint32_t)a->rpath_len};
			if (why) {
				acc.flags |= SANDTRACE_AF_UNTRACED;
				acc.aux = why;
			}
			st__send_access(&acc, a->rpath, a->rpath_len, NULL, 0);
		}
	}
	st__acc_done(a);
	errno = saved;
}

bool st__listing_filtered(void)
{
	if (st__g.arena.base) {
		st__policy_refresh();
		return !atomic_load_explicit(&st__g.trivial_policy, memory_order_relaxed);
	}
	/* without the arena: what the run's flags said at the start, kept up to
	 * date by each answer of the daemon (take_hides): the listing's own
	 * opendir asked it */
	return (__atomic_load_n(&st__g.flags, __ATOMIC_RELAXED) &
		(SANDTRACE_F_FENCED | SANDTRACE_F_HIDES)) != 0;
}

bool st__may_refuse(void)
{
	unsigned f = __atomic_load_n(&st__g.flags, __ATOMIC_RELAXED);
	if (f & SANDTRACE_F_FENCED)
		return true;
	if (st__g.arena.base)
		return !atomic_load_explicit(&st__g.trivial_policy, memory_order_relaxed);
	return (f & SANDTRACE_F_HIDES) != 0;
}

ssize_t st__resolve_exe(struct st_acc *a, const char *path, const char **out)
{
	int saved = errno;
	ssize_t n = -1;
	st__acc_init(a, AT_FDCWD, path, SANDTRACE_KIND_EXEC, false);
	if (path && path[0] == '/' && make_abs(a)) {
		resolve(a);
		/* rpath is abs itself when resolving failed */
		/* through a /proc magic link: what it names is the exec'ing
		 * process's (a spawn's file actions change it in the child) */
		if (st__rpath_resolved(a) && !a->magic_fd && !a->skip && a->rpath_len > 0 &&
		    !(a->via_link & (ST_VIA_MAGIC | ST_VIA_HIDDEN))) {
			*out = a->rpath;
			n = (ssize_t)a->rpath_len;
		}
	}
	st__acc_done(a);
	errno = saved;
	return n;
}

int st__refused(int dirfd, const char *path, unsigned kind, bool nofollow, bool empty)
{
	int saved = errno;
	struct st_acc *a = &st__tls_acc[1];
	st__acc_init(a, dirfd, path, kind, nofollow);
	a->empty_path = empty;
	a->quiet = true;
	int e = st__pre(a);
	st__acc_done(a);
	errno = saved;
	return e;
}

bool st__hidden(int dirfd, const char *path)
{
	return st__listing_filtered() &&
	       st__refused(dirfd, path, SANDTRACE_KIND_QUERY, true, false) == ENOENT;
}

bool st__entry_hidden(char *dir, ssize_t dl, const char *name, size_t nl)
{
	if (nl > NAME_MAX || (nl == 1 && name[0] == '.') || (nl == 2 && !memcmp(name, "..", 2)))
		return false;
	/* a directory deeper than 2 x PATH_MAX has no name to judge its
	 * entries by: hidden, as its relative accesses are refused (make_abs) */
	if (dl == -ENAMETOOLONG)
		return true;
	if (dl < 0)
		return false;
	dir[dl] = '/';
	memcpy(dir + dl + 1, name, nl);
	dir[dl + 1 + nl] = 0;
	bool hide = st__hidden(AT_FDCWD, dir);
	dir[dl] = 0;
	return hide;
}

char *st__dir_map(size_t dl, size_t *map)
{
	size_t m = (dl + NAME_MAX + 2 + 4095) & ~(size_t)4095;
	char *p = mmap(NULL, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	*map = m;
	return p;
}

ssize_t st__listing_dir(int fd, char *dir, char **out, size_t *map)
{
	*out = dir;
	*map = 0;
	ssize_t dl = st__fd_path(fd, dir, PATH_MAX);
	if (dl != -ENAMETOOLONG)
		return dl;
	/* deeper than PATH_MAX: named by the shim (st__dir_path_deep), up to
	 * 2 x PATH_MAX, in a mapping of its own (cold) */
	char *p = st__dir_map(ST_PATH_BUF, map);
	if (!p)
		return -ENAMETOOLONG; /* no room to name it: fail closed */
	*out = p;
	return st__fd_path(fd, p, ST_PATH_BUF);
}

static void record_in(struct st_acc *a, int dirfd, const char *path, unsigned kind, bool nofollow,
		      int err)
{
	st__acc_init(a, dirfd, path, kind, nofollow);
	a->verdict = ST_UNJUDGED; /* recorded, not judged: the daemon says what the policy says */
	if (!make_abs(a))
		return;
	st__post(a, err);
}

void st__record_path(int dirfd, const char *path, unsigned kind, bool nofollow, int err)
{
	record_in(&st__tls_acc[1], dirfd, path, kind, nofollow, err);
}

bool st__record_path0(int dirfd, const char *path, unsigned kind, bool nofollow, int err)
{
	/* slot 0 shares the first page of the thread's buffers with their
	 * other fields: a process whose first records are its libraries
	 * touches one page of them, not two.
	 * Its callers record what the loader mapped (DT_NEEDED, a dlopen by
	 * name): judged first, so that a library the sandbox denies is a
	 * violation (st__pre records it) and not an allowed read; it was read
	 * all the same, before any wrapper could refuse it.  Keyed: the
	 * outcome is kept in the Ctrie under the spelling, the same for every
	 * process (not a spelling through a /proc magic link, whose file moves
	 * with the process, nor one a hidden or held directory decided, nor a
	 * fail-open answer, nor nothing recorded at all) */
	struct st_acc *a = &st__tls_acc[0];
	st__acc_init(a, dirfd, path, kind, nofollow);
	if (st__pre(a))
		return !a->unjudgeable && !a->fail_open && keyable(a);
	st__post(a, err);
	return !a->skip && !a->fail_open && keyable(a);
}
