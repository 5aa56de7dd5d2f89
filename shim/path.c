/* shim/path.c - path arithmetic of the shim: join, clean, fold, and symlink resolution as the kernel does it. */
#include <fcntl.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "shim.h"

/* readlink without going through any interposed symbol (and without errno
 * side effects visible to the program: callers save errno). */
static ssize_t raw_readlink(const char *path, char *buf, size_t cap)
{
	return ST_SYSCALL(SYS_readlinkat, AT_FDCWD, path, buf, cap);
}

/*
 * A name the kernel refuses whole (ENAMETOOLONG: it and its NUL do not fit
 * in PATH_MAX) is asked piecewise: the directory that holds its last
 * component is opened by a chain of openat(O_PATH | O_DIRECTORY), each over
 * a run of whole components shorter than PATH_MAX (copied out, as the name
 * may not be written), and the call is made relative to it.  The components
 * before the last are followed as the kernel would follow them (the path
 * walk asks this only of names whose every earlier component it found not to
 * be a link).  Reached only from the ENAMETOOLONG of a call by name, so a
 * name shorter than PATH_MAX never costs more than it did.  Not marked
 * cold: GCC would split the walk's call of it into a .cold part that
 * layout.ld does not place with the walk (tests/shim_layout.py).
 */
static __attribute__((noinline)) int deep_dir(const char *p, size_t len, size_t *name_at)
{
	char piece[PATH_MAX];
	size_t end = len; /* the '/' before the last component */
	while (end > 0 && p[end - 1] != '/')
		end--;
	*name_at = end;
	if (end == 0 || end == len) { /* not absolute, or no last component */
		errno = ENOENT;
		return -1;
	}
	end--; /* the directory part: p[0..end), "" for "/" */
	int fd = AT_FDCWD;
	size_t at = 0; /* p[at] is the '/' the next piece starts at */
	do {
		size_t stop = end;
		if (stop - at >= PATH_MAX - 1) {
			/* the longest run of whole components that fits (a
			 * NAME_MAX component always does) */
			stop = at + PATH_MAX - 2;
			while (stop > at && p[stop] != '/')
				stop--;
			if (stop == at)
				stop = end; /* one name longer than PATH_MAX: refused below */
		}
		/* the first piece is absolute; the next ones are below fd */
		size_t from = fd == AT_FDCWD ? at : at + 1;
		size_t n = stop - from;
		if (n + 1 > sizeof(piece)) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		if (n == 0)
			piece[n++] = fd == AT_FDCWD ? '/' : '.';
		else
			memcpy(piece, p + from, n);
		piece[n] = 0;
		int next = (int)ST_SYSCALL(SYS_openat, fd, piece, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (next < 0)
			goto fail;
		if (fd != AT_FDCWD)
			ST_SYSCALL(SYS_close, fd);
		fd = next;
		at = stop;
	} while (at < end);
	return fd;
fail:
	if (fd != AT_FDCWD) {
		int e = errno;
		ST_SYSCALL(SYS_close, fd);
		errno = e;
	}
	return -1;
}

long st__at_deep(long nr, const char *p, size_t len, long a3, long a4)
{
	size_t name;
	int fd = deep_dir(p, len, &name);
	if (fd < 0)
		return -1;
	long r = ST_SYSCALL(nr, fd, p + name, a3, a4);
	int e = errno;
	ST_SYSCALL(SYS_close, fd);
	errno = e;
	return r;
}

long st__at_abs(long nr, const char *p, long a3, long a4)
{
	long r = ST_SYSCALL(nr, AT_FDCWD, p, a3, a4);
	if (r < 0 && errno == ENAMETOOLONG && p[0] == '/')
		r = st__at_deep(nr, p, strlen(p), a3, a4);
	return r;
}

/* Does the kernel fail to look ".." up in out[0..olen) (a file: ENOTDIR; gone:
 * ENOENT; a directory it may not search: EACCES)?  Asked as the lookup of
 * "." in it, which the kernel refuses for the same reasons (one stat; a
 * name deeper than PATH_MAX is asked piecewise, st__at_abs).  out[olen] is
 * written and put back to 0; with no room, it is taken to be left. */
static bool raw_no_dotdot(char *out, size_t olen, size_t cap)
{
	struct stat st;
	if (olen + 3 > cap)
		return false;
	memcpy(out + olen, "/.", 3);
	long r = st__at_abs(SYS_newfstatat, out, (long)&st, 0);
	int e = errno;
	out[olen] = 0;
	return r != 0 && (e == ENOENT || e == ENOTDIR || e == EACCES);
}

/* Does p[0..n) hold a ".." component? */
static bool has_dotdot(const char *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++)
		if (p[i] == '.' && p[i + 1] == '.' && (i == 0 || p[i - 1] == '/') &&
		    (i + 2 == n || p[i + 2] == '/'))
			return true;
	return false;
}

ssize_t st__path_join(const char *base, size_t blen, const char *rel, size_t rlen, char *out,
		      size_t cap)
{
	if (rel[0] == '/') {
		if (rlen + 1 > cap)
			return -1;
		memcpy(out, rel, rlen + 1);
		return (ssize_t)rlen;
	}
	if (blen + 1 + rlen + 1 > cap)
		return -1;
	if (out != base) /* else base is in place already */
		memcpy(out, base, blen);
	size_t n = blen;
	if (n == 0 || out[n - 1] != '/')
		out[n++] = '/';
	memcpy(out + n, rel, rlen + 1);
	return (ssize_t)(n + rlen);
}

/* Bytes of w equal to c: 0x80 in each such byte, 0 elsewhere (exact: no
 * borrow reaches a byte above a match, as the high bit is tested on ~x). */
static inline uint64_t bytes_eq(uint64_t w, uint64_t c)
{
	uint64_t x = w ^ (c * UINT64_C(0x0101010101010101));
	return ~(((x & UINT64_C(0x7f7f7f7f7f7f7f7f)) + UINT64_C(0x7f7f7f7f7f7f7f7f)) | x |
		 UINT64_C(0x7f7f7f7f7f7f7f7f));
}

/*
 * Is p already clean?  Clean means no '/' followed by '/' or '.' (which
 * rules out "//", "." and ".." components, and a little more: "/.hidden"
 * takes the slow path, which is also right) and no trailing '/'.  Eight
 * bytes at a time: a '/' at byte j and a '/' or '.' at byte j + 1 of the
 * same word.  Words start every 7 bytes, so every adjacent pair lies inside
 * one; the last word ends at len (no read past the path).
 */
bool st__path_is_clean(const char *p, size_t len)
{
	if (len > 1 && p[len - 1] == '/')
		return false;
#ifdef __SSE2__
	/* the same test sixteen bytes at a time (windows every 15 bytes) */
	if (len >= 16) {
		const __m128i slash = _mm_set1_epi8('/'), dot = _mm_set1_epi8('.');
		for (size_t i = 0;; i += 15) {
			if (i + 16 > len)
				i = len - 16;
			__m128i w = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
			unsigned sl = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w, slash));
			unsigned nx = sl | (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w, dot));
			/* bit j + 1 is the byte after bit j's */
			if ((sl << 1) & nx)
				return false;
			if (i + 16 >= len)
				return true;
		}
	}
#endif
	if (len < 8) {
		for (size_t i = 0; i + 1 < len; i++)
			if (p[i] == '/' && (p[i + 1] == '/' || p[i + 1] == '.'))
				return false;
		return true;
	}
	for (size_t i = 0;; i += 7) {
		if (i + 8 > len)
			i = len - 8;
		uint64_t w;
		memcpy(&w, p + i, 8);
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
		w = __builtin_bswap64(w);
#endif
		uint64_t slash = bytes_eq(w, '/');
		uint64_t next = slash | bytes_eq(w, '.');
		/* byte j + 1 sits 8 bits above byte j (little-endian order) */
		if ((slash << 8) & next)
			return false;
		if (i + 8 >= len)
			return true;
	}
}

/* Collapse "//" and "/./", drop a trailing "/." or "/" (not the root).  ".."
 * is kept: whether "a/.." is "." depends on whether a is a symlink. */
ssize_t st__path_clean(char *p, size_t len)
{
	size_t r = 0, w = 0;
	if (len == 0 || p[0] != '/')
		return -1;
	/* fast path: most paths are clean already (no "//", no "." component,
	 * no trailing '/'): found out eight bytes at a time */
	{
		bool clean = st__path_is_clean(p, len);
		if (clean) {
			p[len] = 0;
			return (ssize_t)len;
		}
	}
	while (r < len) {
		if (p[r] == '/') {
			while (r < len && p[r] == '/')
				r++;
			if (r + 1 <= len && p[r] == '.' && (r + 1 == len || p[r + 1] == '/')) {
				r++; /* a "." component */
				continue;
			}
			p[w++] = '/';
			continue;
		}
		p[w++] = p[r++];
	}
	if (w > 1 && p[w - 1] == '/')
		w--;
	if (w == 0)
		p[w++] = '/';
	p[w] = 0;
	return (ssize_t)w;
}

/* Lexical fold of ".." (only valid when no component before it is a symlink,
 * or as a last resort). */
ssize_t st__path_fold(char *p, size_t len)
{
	ssize_t n = st__path_clean(p, len);
	if (n < 0)
		return -1;
	size_t r = 0, w = 0;
	len = (size_t)n;
	while (r < len) {
		/* at a '/' */
		size_t s = r + 1, e = s;
		while (e < len && p[e] != '/')
			e++;
		if (e - s == 2 && p[s] == '.' && p[s + 1] == '.') {
			while (w > 0 && p[w - 1] != '/')
				w--;
			if (w > 0)
				w--; /* drop the '/' too */
		} else {
			memmove(p + w, p + r, e - r);
			w += e - r;
		}
		r = e;
	}
	if (w == 0)
		p[w++] = '/';
	p[w] = 0;
	return (ssize_t)w;
}

/* Is out[0..len) a /proc/<pid or self or thread-self>/{fd/N,exe,cwd,root,task/T/fd/N} magic link? */
static bool is_proc_magic(const char *p, size_t len)
{
	if (len < 7 || memcmp(p, "/proc/", 6) != 0)
		return false;
	const char *q = p + 6, *end = p + len;
	const char *slash = memchr(q, '/', (size_t)(end - q));
	if (!slash)
		return false;
	const char *rest = slash + 1;
	size_t rl = (size_t)(end - rest);
	/* a thread's own directory has the same links: /proc/P/task/T/... */
	if (rl > 5 && !memcmp(rest, "task/", 5)) {
		const char *s2 = memchr(rest + 5, '/', rl - 5);
		if (!s2)
			return false;
		rest = s2 + 1;
		rl = (size_t)(end - rest);
	}
	if ((rl == 3 && !memcmp(rest, "exe", 3)) || (rl == 3 && !memcmp(rest, "cwd", 3)) ||
	    (rl == 4 && !memcmp(rest, "root", 4)))
		return true;
	return rl > 3 && !memcmp(rest, "fd/", 3);
}

/* Is /proc/PID/... (p, len) of the calling process?  Another process's
 * descriptors and directories are not the caller's own: what they lead to
 * is judged like any path.  (Read from the kernel, not st__g: a vfork child
 * is another process.) */
static bool proc_is_own(const char *p, size_t len)
{
	unsigned long pid = 0;
	size_t i = 6; /* past "/proc/" (is_proc_magic checked it) */
	for (; i < len && p[i] >= '0' && p[i] <= '9'; i++)
		pid = pid * 10 + (unsigned long)(p[i] - '0');
	return i > 6 && i < len && p[i] == '/' && pid == (unsigned long)ST_SYSCALL(SYS_getpid);
}

/* May the walk leave the directory out[0..olen) for one that is not below
 * it (st_walk.through)?  Yes for the directory the process holds and its
 * ancestors, reached by ".." from it (out[0..hold), see st__path_resolve).
 * out is NUL-terminated there for the question. */
static bool may_leave(struct st_walk *w, char *out, size_t olen, size_t hold)
{
	if (!w || !w->through || olen == 0)
		return true;
	if (olen <= hold) {
		/* what a name lookup would have met, for a caller that keeps
		 * the outcome under the spelling (another process spells it
		 * from elsewhere) */
		if (w->ask_held) {
			out[olen] = 0;
			if (!w->through(out, olen))
				w->via_link |= ST_VIA_HELD;
		}
		return true;
	}
	out[olen] = 0;
	return w->through(out, olen);
}

ssize_t st__path_resolve(const char *in, size_t len, bool follow, char *out, size_t cap,
			 bool *magic, char *rest, size_t rcap, struct st_walk *w)
{
	/* out holds the resolved prefix (no trailing '/', "" for the root);
	 * cur holds what is left to walk: in itself until a link is followed,
	 * then rest (a path that meets no link never writes rest, whose pages
	 * stay untouched: docs/BENCHMARKS.md, stop 25).  While pristine (no
	 * link followed, no "." or ".." met) out is byte for byte the prefix
	 * of in walked so far, and each component readlink calls "not a link"
	 * extends what is confirmed to resolve to itself. */
	size_t olen = 0, rlen, pos = 0, conf = 0;
	int hops = 0;
	bool pristine = true;
	/* out's last component is there and no link, but maybe no directory
	 * (readlink said EINVAL, and nothing was looked up below it yet): a
	 * ".." after it asks (the kernel looks ".." up in it: ENOTDIR there) */
	bool unsure_dir = false;
	char link[PATH_MAX + 1];

	size_t known = w ? w->known : 0, root = w ? w->root : 0;
	/* out[0..hold) is the held directory (st_walk.held) or an ancestor
	 * the walk went up to from it: once a name is looked up below such
	 * an ancestor, what lies below is reached by name, no longer held */
	size_t hold = w ? w->held : 0;
	unsigned via_none, *via = w ? &w->via_link : &via_none;
	*magic = false;
	*via = 0;
	if (w)
		w->confirmed = 0, w->overflow = false;
	if (len == 0 || in[0] != '/' || known >= len || (known && in[known] != '/') || root > known)
		return -1;
	if (len + 1 > rcap)
		goto overflow;
	if (known + 1 > cap)
		goto overflow;
	const char *cur = in;
	rlen = len;
	if (known) { /* the caller vouches for in[0..known): no readlink there */
		memcpy(out, in, known);
		olen = pos = conf = known;
		/* but not that its last name is a directory: a file's name
		 * resolves to itself too ("f/x" confirms "f" when the lookup of
		 * x fails with ENOTDIR), and "f/.." fails there (a review's
		 * fuzzer: "unlink f/d" then "open f/../" was judged and
		 * recorded as f's directory with the cache, as f without).
		 * RESOLVE_IN_ROOT's root is the dirfd's directory. */
		unsure_dir = known > root;
	}
	while (pos < rlen) {
		while (pos < rlen && cur[pos] == '/')
			pos++;
		if (pos >= rlen)
			break;
		size_t s = pos;
		while (pos < rlen && cur[pos] != '/')
			pos++;
		size_t clen = pos - s;
		bool last = true;
		for (size_t k = pos; k < rlen; k++)
			if (cur[k] != '/') {
				last = false;
				break;
			}
		if (clen == 1 && cur[s] == '.') {
			pristine = false;
			continue;
		}
		if (clen == 2 && cur[s] == '.' && cur[s + 1] == '.') {
			pristine = false;
			/* the kernel looks ".." up in the directory out names: a
			 * directory the sandbox hides is not there to leave */
			if (!may_leave(w, out, olen, hold)) {
				*via |= ST_VIA_HIDDEN;
				return (ssize_t)olen;
			}
			/* a file (or what vanished, or a directory that may
			 * not be searched) is not left by "..": the kernel
			 * fails there (ENOTDIR, ENOENT, EACCES), which is the
			 * path that names the failure, not its parent's x */
			if (unsure_dir && olen > root) {
				out[olen] = 0;
				if (raw_no_dotdot(out, olen, cap)) {
					if (w)
						w->confirmed = conf;
					*via |= ST_VIA_UNSURE;
					return (ssize_t)olen;
				}
			}
			unsure_dir = false;
			if (olen > root) { /* never above the root: its ".." is itself */
				while (out[olen - 1] != '/')
					olen--;
				olen--;
			}
			continue;
		}
		if (!pristine && olen < hold)
			hold = olen;
		if (olen + 1 + clen + 1 > cap)
			goto overflow;
		out[olen] = '/';
		memcpy(out + olen + 1, cur + s, clen);
		size_t cand = olen + 1 + clen;
		out[cand] = 0;
		if (last && !follow) {
			olen = cand;
			break;
		}
		ssize_t n = raw_readlink(out, link, sizeof(link) - 1);
		/* looked up below out: out is a directory */
		unsure_dir = false;
		if (n < 0) {
			if (errno == EINVAL) { /* not a symlink: keep it */
			plain:
				olen = cand;
				unsure_dir = true;
				if (pristine && cand == pos)
					conf = cand;
				continue;
			}
			/* deeper than PATH_MAX: asked below a directory opened
			 * piecewise (out[0..olen) is resolved, no link in it); a
			 * link taken for a plain name would be judged as its own
			 * name, not as what the call reaches */
			if (errno == ENAMETOOLONG) {
				n = st__at_deep(SYS_readlinkat, out, cand, (long)link,
						(long)(sizeof(link) - 1));
				if (n < 0 && errno == EINVAL)
					goto plain;
			}
		}
		if (n < 0) {
			/* does not exist (or cannot be looked into): the kernel
			 * fails there.  A rest with a ".." names a place it
			 * never reached (L/../x, L a dangling link: the lookup
			 * failed at L's target, not at x; d/sub/../x, d not
			 * searchable: EACCES at sub): the path is the one
			 * looked for in vain, cand, or for ENOTDIR (out is no
			 * directory) out itself.  Else the rest is appended
			 * lexically (missing/x is the name looked for). */
			if (has_dotdot(cur + pos, rlen - pos)) {
				if (errno != ENOTDIR)
					olen = cand;
				out[olen] = 0;
				if (w)
					w->confirmed = conf;
				*via |= ST_VIA_UNSURE;
				return (ssize_t)olen;
			}
			/* names after the one that stopped the walk, below
			 * the directory it would be: one more for ENOTDIR,
			 * where the walk stopped below a non-directory */
			{
				unsigned deep = errno == ENOTDIR;
				for (size_t k = pos; k < rlen; k++)
					if (cur[k] != '/' && (k == pos || cur[k - 1] == '/') &&
					    !(cur[k] == '.' && (k + 1 == rlen || cur[k + 1] == '/')))
						deep++;
				if (deep >= 2)
					*via |= ST_VIA_SHORT;
			}
			olen = cand;
			size_t tail = rlen - pos;
			if (olen + tail + 1 > cap)
				goto overflow;
			memcpy(out + olen, cur + pos, tail);
			olen += tail;
			out[olen] = 0;
			if (w)
				w->confirmed = conf;
			if (root) { /* folded below the root ("/..." after it) */
				ssize_t f = st__path_fold(out + root, olen - root);
				return f < 0 ? f : (ssize_t)root + f;
			}
			return st__path_fold(out, olen);
		}
		link[n] = 0;
		/* /proc/self and /proc/thread-self lead to the calling process's
		 * (thread's) own directory: what lies beyond moves with the
		 * process, so no key may hold it (each process is recorded) */
		if ((cand == 10 && !memcmp(out, "/proc/self", 10)) ||
		    (cand == 17 && !memcmp(out, "/proc/thread-self", 17)))
			*via |= ST_VIA_MAGIC;
		bool magic_link = is_proc_magic(out, cand);
		if (magic_link) {
			*via |= ST_VIA_MAGIC; /* what it names moves with the process (chdir, dup2) */
			/*
			 * Only a magic link that is the whole path names an open
			 * file of the process (never a violation: it was opened
			 * or is running already).  Through one, as in
			 * /proc/self/root/etc/x or /dev/fd/3/x, it is an ordinary
			 * link, and what lies beyond is judged like any path.
			 */
			if (last && proc_is_own(out, cand))
				*magic = true;
			if (n == 0 || link[0] != '/' || st__name_anonymous(link, (size_t)n))
				return -1; /* pipe:[N], socket:[N], anon_inode:..., a memfd */
			/* "/x (deleted)": the file was unlinked; name what it was */
			if (st__name_deleted(link, (size_t)n))
				n -= 10, link[n] = 0;
		}
		pristine = false;
		*via |= ST_VIA_LINK;
		if (++hops > 40) { /* ELOOP: let the real call say so */
			/* the lookup failed at this link: a ".." after it
			 * names no place the kernel reached (loop/../x) */
			if (has_dotdot(cur + pos, rlen - pos)) {
				out[cand] = 0;
				if (w)
					w->confirmed = conf;
				return (ssize_t)cand;
			}
			goto lexical;
		}
		/* an absolute target leaves the link's directory, which the
		 * kernel looked the link up in (a relative one stays below it,
		 * but for its ".."s, asked above) */
		if (link[0] == '/' && !magic_link && !may_leave(w, out, olen, hold)) {
			*via |= ST_VIA_HIDDEN;
			return (ssize_t)olen;
		}
		/* rest := link + cur[pos..] */
		size_t tail = rlen - pos;
		if ((size_t)n + tail + 1 > rcap)
			goto overflow; /* the rest to walk is too long for rest */
		memmove(rest + n, cur + pos, tail); /* cur is in (apart) or rest */
		memcpy(rest, link, (size_t)n);
		rlen = (size_t)n + tail;
		rest[rlen] = 0;
		cur = rest;
		pos = 0;
		if (link[0] == '/') /* below the root, but for a magic link: a jump */
			olen = magic_link ? 0 : root;
	}
	if (olen == 0) {
		out[0] = '/';
		olen = 1;
	}
	out[olen] = 0;
	if (w)
		w->confirmed = conf;
	return (ssize_t)olen;
lexical:
	if (len + 1 > cap)
		goto overflow;
	memcpy(out, in, len);
	return st__path_fold(out, len);
overflow:
	if (w)
		w->overflow = true;
	return -1;
}

/* The hash of a directory's name p[0..n) for its slot, in its top bits:
 * the length and at most three words, its last sixteen bytes (its own name
 * and the end of its parent's) and eight from its middle, folded and put
 * through one multiply (the slot is read from the product's top bits, which
 * every bit below reaches).  Two directories of equal length that differ
 * only elsewhere share a slot: a bump in one then invalidates the other's
 * keys too, which costs a lookup, never a wrong answer (the slot is only a
 * generation). */
static uint64_t dir_hash(const char *p, size_t n)
{
	uint64_t a = 0, b = 0, c = 0;
	if (n >= 16) {
		memcpy(&a, p + n - 8, 8);
		memcpy(&b, p + n - 16, 8);
		if (n >= 24)
			memcpy(&c, p + (n - 16) / 2, 8);
	} else if (n >= 8) {
		memcpy(&a, p + n - 8, 8);
		memcpy(&b, p, 8);
	} else {
		for (size_t i = 0; i < n; i++)
			a = a << 8 | (unsigned char)p[i];
	}
	uint64_t x = a ^ (b << 29 | b >> 35) ^ (c << 47 | c >> 17) ^ n * UINT64_C(0x9e3779b97f4a7c15);
	x ^= x >> 32;
	return x * UINT64_C(0xff51afd7ed558ccd);
}

/* The slot of the directory part of a path (shim.h).  The last '/' is
 * looked for in the last sixteen bytes first, where a file's name ends
 * (no call); memrchr only for a longer name. */
unsigned st__dir_slot(const char *p, size_t len, unsigned nslots)
{
	size_t n = len;
#ifdef __SSE2__
	if (len >= 16) {
		__m128i w = _mm_loadu_si128((const __m128i *)(const void *)(p + len - 16));
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w, _mm_set1_epi8('/')));
		if (m) {
			n = len - 16 + (unsigned)(31 - __builtin_clz(m)) + 1;
			goto hash;
		}
		len -= 16; /* no '/' there: look before */
	}
#endif
	const char *e = memrchr(p, '/', len);
	if (e)
		n = (size_t)(e - p) + 1;
#ifdef __SSE2__
hash:
#endif
	if (nslots < 2)
		return 0;
	return (unsigned)(dir_hash(p, n) >> (64 - __builtin_ctz(nslots)));
}

ST_EVERY unsigned st__parse_uint(const char *s)
{
	unsigned v = 0;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (unsigned)(*s++ - '0');
	return v;
}

/* shim.h st__odd_ptr: never written; in .data beside st__g (ST_HOT), on
 * the page every process touches */
ST_HOT uintptr_t st__user_span = ST_USER_END - ST_USER_LOW;

/* st__unreadable's cold half (shim.h): p is NULL or odd.  The kernel reads
 * p's first byte for us (process_vm_readv from this very process: no signal,
 * EFAULT when there is nothing readable there), so a program that really
 * mapped page 0, or high or tagged memory, is judged and recorded as usual. */
bool st__unreadable_slow(const void *p)
{
	if (!p)
		return true;
	int saved = errno;
	char c;
	struct iovec local = {&c, 1}, remote = {(void *)p, 1};
	long r = ST_SYSCALL(SYS_process_vm_readv, ST_SYSCALL(SYS_getpid), &local, 1, &remote, 1, 0);
	bool bad;
	if (r == 1)
		bad = false;
	else if (errno == EFAULT)
		bad = true;
	else /* refused (seccomp, ENOSYS): only what no process can map */
		bad = (uintptr_t)p < 4096 || (intptr_t)p < 0;
	errno = saved;
	return bad;
}
