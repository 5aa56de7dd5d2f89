/* shim/wrap_fs.c - wrappers of the file-system calls that take a path (open, stat, access, links, namespace, metadata). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wrap.h"

#define EXPORT __attribute__((visibility("default")))
#define FAILED_INT (r_ < 0)

/* ---- open family: mode is read only when O_CREAT or O_TMPFILE asks for it ---- */
#define OPEN_MODE(flags)                                                                           \
	mode_t mode = 0;                                                                           \
	if (__OPEN_NEEDS_MODE(flags)) {                                                            \
		va_list ap;                                                                        \
		va_start(ap, flags);                                                               \
		mode = (mode_t)va_arg(ap, int);                                                    \
		va_end(ap);                                                                        \
	}

#define OPEN_NOFOLLOW(flags) (((flags) & O_NOFOLLOW) || (((flags) & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)))

EXPORT int open(const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, st_open_kind(flags), OPEN_NOFOLLOW(flags),
		 false, REAL(open)(path, flags, mode));
}
EXPORT int open64(const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, st_open_kind(flags), OPEN_NOFOLLOW(flags),
		 false, REAL(open64)(path, flags, mode));
}
EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, st_open_kind(flags), OPEN_NOFOLLOW(flags),
		 false, REAL(openat)(dirfd, path, flags, mode));
}
EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, st_open_kind(flags), OPEN_NOFOLLOW(flags),
		 false, REAL(openat64)(dirfd, path, flags, mode));
}
/* _FORTIFY_SOURCE entry points: called when the flags need no mode */
EXPORT int __open_2(const char *path, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, st_open_kind(flags), OPEN_NOFOLLOW(flags),
		 false, REAL(__open_2)(path, flags));
}
EXPORT int __open64_2(const char *path, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, st_open_kind(flags), OPEN_NOFOLLOW(flags),
		 false, REAL(__open64_2)(path, flags));
}
EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, st_open_kind(flags), OPEN_NOFOLLOW(flags), false,
		 REAL(__openat_2)(dirfd, path, flags));
}
EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, st_open_kind(flags), OPEN_NOFOLLOW(flags), false,
		 REAL(__openat64_2)(dirfd, path, flags));
}
EXPORT int creat(const char *path, mode_t mode)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, false, false, REAL(creat)(path, mode));
}
EXPORT int creat64(const char *path, mode_t mode)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, false, false, REAL(creat64)(path, mode));
}
EXPORT FILE *fopen(const char *path, const char *mode)
{
	ONE_PATH(FILE *, NULL, (r_ == NULL), AT_FDCWD, path, st_fopen_kind(mode), false, false,
		 REAL(fopen)(path, mode));
}
EXPORT FILE *fopen64(const char *path, const char *mode)
{
	ONE_PATH(FILE *, NULL, (r_ == NULL), AT_FDCWD, path, st_fopen_kind(mode), false, false,
		 REAL(fopen64)(path, mode));
}
EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	if (!path)
		return REAL(freopen)(path, mode, stream);
	ONE_PATH(FILE *, NULL, (r_ == NULL), AT_FDCWD, path, st_fopen_kind(mode), false, false,
		 REAL(freopen)(path, mode, stream));
}
EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
	if (!path)
		return REAL(freopen64)(path, mode, stream);
	ONE_PATH(FILE *, NULL, (r_ == NULL), AT_FDCWD, path, st_fopen_kind(mode), false, false,
		 REAL(freopen64)(path, mode, stream));
}

/* ---- stat family ---- */
#define AT_NOFOLLOW(f) (((f) & AT_SYMLINK_NOFOLLOW) != 0)
#define AT_EMPTY(f) (((f) & AT_EMPTY_PATH) != 0)

EXPORT int stat(const char *path, struct stat *st)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false, REAL(stat)(path, st));
}
EXPORT int lstat(const char *path, struct stat *st)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, true, false, REAL(lstat)(path, st));
}
EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_Q, AT_NOFOLLOW(flags), AT_EMPTY(flags),
		 REAL(fstatat)(dirfd, path, st, flags));
}
EXPORT int stat64(const char *path, struct stat64 *st)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false, REAL(stat64)(path, st));
}
EXPORT int lstat64(const char *path, struct stat64 *st)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, true, false, REAL(lstat64)(path, st));
}
EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_Q, AT_NOFOLLOW(flags), AT_EMPTY(flags),
		 REAL(fstatat64)(dirfd, path, st, flags));
}
/* The pre-2.33 ABI: binaries built against older glibc call these.  Only
 * compat versions exist in glibc >= 2.33, which dlsym(RTLD_NEXT) does not
 * return, so they are forwarded to the new calls (same struct on x86_64 for
 * _STAT_VER 1, the only version such binaries pass there). */
#if defined(__x86_64__)
#define XSTAT_OK(ver) ((ver) == 1)
#else
#define XSTAT_OK(ver) 1
#endif
#define XSTAT_BAD(ver)                                                                             \
	if (!XSTAT_OK(ver)) {                                                                      \
		errno = EINVAL;                                                                    \
		return -1;                                                                         \
	}
EXPORT int __xstat(int ver, const char *path, struct stat *st)
{
	XSTAT_BAD(ver);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false, REAL(stat)(path, st));
}
EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
	XSTAT_BAD(ver);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, true, false, REAL(lstat)(path, st));
}
EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	XSTAT_BAD(ver);
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_Q, AT_NOFOLLOW(flags), AT_EMPTY(flags),
		 REAL(fstatat)(dirfd, path, st, flags));
}
EXPORT int __xstat64(int ver, const char *path, struct stat64 *st)
{
	XSTAT_BAD(ver);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false, REAL(stat64)(path, st));
}
EXPORT int __lxstat64(int ver, const char *path, struct stat64 *st)
{
	XSTAT_BAD(ver);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, true, false, REAL(lstat64)(path, st));
}
EXPORT int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags)
{
	XSTAT_BAD(ver);
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_Q, AT_NOFOLLOW(flags), AT_EMPTY(flags),
		 REAL(fstatat64)(dirfd, path, st, flags));
}
EXPORT int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *stx)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_Q, AT_NOFOLLOW(flags), AT_EMPTY(flags),
		 REAL(statx)(dirfd, path, flags, mask, stx));
}

/* ---- access family ---- */
EXPORT int access(const char *path, int mode)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false, REAL(access)(path, mode));
}
EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_Q, AT_NOFOLLOW(flags), AT_EMPTY(flags),
		 REAL(faccessat)(dirfd, path, mode, flags));
}
EXPORT int euidaccess(const char *path, int mode)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false,
		 REAL(euidaccess)(path, mode));
}
EXPORT int eaccess(const char *path, int mode)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false, REAL(eaccess)(path, mode));
}

/* ---- links ---- */
EXPORT ssize_t readlink(const char *path, char *buf, size_t len)
{
	ONE_PATH(ssize_t, -1, FAILED_INT, AT_FDCWD, path, K_Q, true, false,
		 REAL(readlink)(path, buf, len));
}
EXPORT ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t len)
{
	ONE_PATH(ssize_t, -1, FAILED_INT, dirfd, path, K_Q, true, true,
		 REAL(readlinkat)(dirfd, path, buf, len));
}
EXPORT int link(const char *old, const char *new)
{
	TWO_PATHS(int, -1, FAILED_INT, AT_FDCWD, old, K_Q, true, AT_FDCWD, new, K_W, true,
		  REAL(link)(old, new));
}
EXPORT int linkat(int od, const char *old, int nd, const char *new, int flags)
{
	/* the source of linkat(AT_EMPTY_PATH) or of /proc/self/fd/N names an
	 * open file (O_TMPFILE): resolution maps it to the real file or skips it */
	TWO_PATHS(int, -1, FAILED_INT, od, old, K_Q, !(flags & AT_SYMLINK_FOLLOW), nd, new, K_W, true,
		  REAL(linkat)(od, old, nd, new, flags));
}
EXPORT int symlink(const char *target, const char *linkpath)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, linkpath, K_W, true, false,
		 REAL(symlink)(target, linkpath));
}
EXPORT int symlinkat(const char *target, int dirfd, const char *linkpath)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, linkpath, K_W, true, false,
		 REAL(symlinkat)(target, dirfd, linkpath));
}
/* realpath: glibc resolves with internal lstat/readlink calls; the link
 * itself is recorded as a query, and the call is judged on its target. */
EXPORT char *realpath(const char *path, char *resolved)
{
	struct st_call c;
	if (!path || !st__enter(&c))
		return REAL(realpath)(path, resolved);
	st__record_path(AT_FDCWD, path, K_Q, true, 0);
	st__leave(&c);
	errno = c.saved_errno;
	ONE_PATH(char *, NULL, (r_ == NULL), AT_FDCWD, path, K_Q, false, false,
		 REAL(realpath)(path, resolved));
}
EXPORT char *canonicalize_file_name(const char *path)
{
	ONE_PATH(char *, NULL, (r_ == NULL), AT_FDCWD, path, K_Q, false, false,
		 REAL(canonicalize_file_name)(path));
}

/* ---- namespace changes: every name that appears or disappears is a write ---- */
EXPORT int mkdir(const char *path, mode_t mode)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, true, false, REAL(mkdir)(path, mode));
}
EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_W, true, false,
		 REAL(mkdirat)(dirfd, path, mode));
}
EXPORT int rmdir(const char *path)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, true, false, REAL(rmdir)(path));
}
EXPORT int unlink(const char *path)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, true, false, REAL(unlink)(path));
}
EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_W, true, false,
		 REAL(unlinkat)(dirfd, path, flags));
}
EXPORT int remove(const char *path)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, true, false, REAL(remove)(path));
}
EXPORT int rename(const char *old, const char *new)
{
	TWO_PATHS(int, -1, FAILED_INT, AT_FDCWD, old, K_W, true, AT_FDCWD, new, K_W, true,
		  REAL(rename)(old, new));
}
EXPORT int renameat(int od, const char *old, int nd, const char *new)
{
	TWO_PATHS(int, -1, FAILED_INT, od, old, K_W, true, nd, new, K_W, true,
		  REAL(renameat)(od, old, nd, new));
}
EXPORT int renameat2(int od, const char *old, int nd, const char *new, unsigned int flags)
{
	TWO_PATHS(int, -1, FAILED_INT, od, old, K_W, true, nd, new, K_W, true,
		  REAL(renameat2)(od, old, nd, new, flags));
}
EXPORT int mknod(const char *path, mode_t mode, dev_t dev)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, true, false,
		 REAL(mknod)(path, mode, dev));
}
EXPORT int mknodat(int dirfd, const char *path, mode_t mode, dev_t dev)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_W, true, false,
		 REAL(mknodat)(dirfd, path, mode, dev));
}
EXPORT int mkfifo(const char *path, mode_t mode)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, true, false, REAL(mkfifo)(path, mode));
}
EXPORT int mkfifoat(int dirfd, const char *path, mode_t mode)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_W, true, false,
		 REAL(mkfifoat)(dirfd, path, mode));
}

/* ---- metadata writes ---- */
EXPORT int chmod(const char *path, mode_t mode)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, false, false, REAL(chmod)(path, mode));
}
EXPORT int fchmodat(int dirfd, const char *path, mode_t mode, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_W, AT_NOFOLLOW(flags), AT_EMPTY(flags),
		 REAL(fchmodat)(dirfd, path, mode, flags));
}
EXPORT int chown(const char *path, uid_t u, gid_t g)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, false, false, REAL(chown)(path, u, g));
}
EXPORT int lchown(const char *path, uid_t u, gid_t g)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, true, false, REAL(lchown)(path, u, g));
}
EXPORT int fchownat(int dirfd, const char *path, uid_t u, gid_t g, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_W, AT_NOFOLLOW(flags), AT_EMPTY(flags),
		 REAL(fchownat)(dirfd, path, u, g, flags));
}
EXPORT int truncate(const char *path, off_t len)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, false, false, REAL(truncate)(path, len));
}
EXPORT int truncate64(const char *path, off64_t len)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, false, false,
		 REAL(truncate64)(path, len));
}
EXPORT int utime(const char *path, const struct utimbuf *t)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, false, false, REAL(utime)(path, t));
}
EXPORT int utimes(const char *path, const struct timeval *t)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, false, false, REAL(utimes)(path, t));
}
EXPORT int lutimes(const char *path, const struct timeval *t)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, true, false, REAL(lutimes)(path, t));
}
EXPORT int futimesat(int dirfd, const char *path, const struct timeval *t)
{
	if (!path) /* the file of dirfd itself */
		ONE_PATH(int, -1, FAILED_INT, dirfd, "", K_W, false, true,
			 REAL(futimesat)(dirfd, path, t));
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_W, false, false,
		 REAL(futimesat)(dirfd, path, t));
}
EXPORT int utimensat(int dirfd, const char *path, const struct timespec *ts, int flags)
{
	if (!path) /* glibc's futimens: the file of dirfd itself */
		ONE_PATH(int, -1, FAILED_INT, dirfd, "", K_W, false, true,
			 REAL(utimensat)(dirfd, path, ts, flags));
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_W, AT_NOFOLLOW(flags), AT_EMPTY(flags),
		 REAL(utimensat)(dirfd, path, ts, flags));
}
EXPORT int futimens(int fd, const struct timespec *ts)
{
	ONE_PATH(int, -1, FAILED_INT, fd, "", K_W, false, true, REAL(futimens)(fd, ts));
}

/* ---- temporary files: judged on the template's directory, recorded by the final name ---- */
#define MKTEMP(call)                                                                               \
	do {                                                                                       \
		struct st_call c_;                                                                 \
		if (!tmpl || !st__enter(&c_))                                                      \
			return call;                                                               \
		struct st_acc *a_ = &st__tls_acc[0];                                               \
		st__acc_init(a_, AT_FDCWD, tmpl, K_W, true);                                       \
		int e_ = st__pre(a_);                                                              \
		if (e_) {                                                                          \
			st__leave(&c_);                                                            \
			errno = e_;                                                                \
			return -1;                                                                 \
		}                                                                                  \
		st__acc_done(a_);                                                                  \
		errno = c_.saved_errno;                                                            \
		int r_ = ST_FORWARD(call);                                                         \
		int after_ = errno;                                                                \
		if (r_ >= 0)                                                                       \
			st__record_path(AT_FDCWD, tmpl, K_W, true, 0);                             \
		st__leave(&c_);                                                                    \
		errno = after_;                                                                    \
		return r_;                                                                         \
	} while (0)

EXPORT int mkstemp(char *tmpl)
{
	MKTEMP(REAL(mkstemp)(tmpl));
}
EXPORT int mkstemp64(char *tmpl)
{
	MKTEMP(REAL(mkstemp64)(tmpl));
}
EXPORT int mkostemp(char *tmpl, int flags)
{
	MKTEMP(REAL(mkostemp)(tmpl, flags));
}
EXPORT int mkostemp64(char *tmpl, int flags)
{
	MKTEMP(REAL(mkostemp64)(tmpl, flags));
}
EXPORT int mkstemps(char *tmpl, int sl)
{
	MKTEMP(REAL(mkstemps)(tmpl, sl));
}
EXPORT int mkstemps64(char *tmpl, int sl)
{
	MKTEMP(REAL(mkstemps64)(tmpl, sl));
}
EXPORT int mkostemps(char *tmpl, int sl, int flags)
{
	MKTEMP(REAL(mkostemps)(tmpl, sl, flags));
}
EXPORT int mkostemps64(char *tmpl, int sl, int flags)
{
	MKTEMP(REAL(mkostemps64)(tmpl, sl, flags));
}
EXPORT char *mkdtemp(char *tmpl)
{
	struct st_call c;
	if (!tmpl || !st__enter(&c))
		return REAL(mkdtemp)(tmpl);
	struct st_acc *a = &st__tls_acc[0];
	st__acc_init(a, AT_FDCWD, tmpl, K_W, true);
	int e = st__pre(a);
	if (e) {
		st__leave(&c);
		errno = e;
		return NULL;
	}
	st__acc_done(a);
	errno = c.saved_errno;
	char *r = ST_FORWARD(REAL(mkdtemp)(tmpl));
	int after = errno;
	if (r)
		st__record_path(AT_FDCWD, tmpl, K_W, true, 0);
	st__leave(&c);
	errno = after;
	return r;
}

/* ---- directories ---- */
EXPORT DIR *opendir(const char *path)
{
	ONE_PATH(DIR *, NULL, (r_ == NULL), AT_FDCWD, path, K_D, false, false, REAL(opendir)(path));
}
EXPORT int scandir(const char *path, struct dirent ***nl, int (*sel)(const struct dirent *),
		   int (*cmp)(const struct dirent **, const struct dirent **))
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_D, false, false,
		 REAL(scandir)(path, nl, sel, cmp));
}
EXPORT int scandir64(const char *path, struct dirent64 ***nl, int (*sel)(const struct dirent64 *),
		     int (*cmp)(const struct dirent64 **, const struct dirent64 **))
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_D, false, false,
		 REAL(scandir64)(path, nl, sel, cmp));
}
EXPORT int scandirat(int dirfd, const char *path, struct dirent ***nl,
		     int (*sel)(const struct dirent *),
		     int (*cmp)(const struct dirent **, const struct dirent **))
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_D, false, false,
		 REAL(scandirat)(dirfd, path, nl, sel, cmp));
}

/* nftw/ftw walk with internal calls: the root is a directory listing and
 * every entry the walk reports is recorded as a query through a trampoline.
 * The user's callback is kept per thread (a callback may start another walk:
 * the previous one is saved and restored around it). */
static __thread __nftw_func_t tls_nftw;
static __thread __nftw64_func_t tls_nftw64;
static __thread __ftw_func_t tls_ftw;
static __thread __ftw64_func_t tls_ftw64;

static void walk_note(const char *p, int type)
{
	struct st_call c;
	if (!st__enter(&c))
		return;
	st__record_path(AT_FDCWD, p, type == FTW_D || type == FTW_DP ? K_D : K_Q, true,
			type == FTW_NS ? EACCES : 0);
	st__leave(&c);
	errno = c.saved_errno;
}
static int tramp_nftw(const char *p, const struct stat *s, int t, struct FTW *f)
{
	walk_note(p, t);
	return tls_nftw(p, s, t, f);
}
static int tramp_nftw64(const char *p, const struct stat64 *s, int t, struct FTW *f)
{
	walk_note(p, t);
	return tls_nftw64(p, s, t, f);
}
static int tramp_ftw(const char *p, const struct stat *s, int t)
{
	walk_note(p, t);
	return tls_ftw(p, s, t);
}
static int tramp_ftw64(const char *p, const struct stat64 *s, int t)
{
	walk_note(p, t);
	return tls_ftw64(p, s, t);
}

#define WALK(slot, tramp, call_real, call_tramp)                                                   \
	do {                                                                                       \
		struct st_call c_;                                                                 \
		if (!path || !fn || !st__enter(&c_))                                               \
			return call_real;                                                          \
		struct st_acc *a_ = &st__tls_acc[0];                                               \
		st__acc_init(a_, AT_FDCWD, path, K_D, false);                                      \
		int e_ = st__pre(a_);                                                              \
		if (e_) {                                                                          \
			st__leave(&c_);                                                            \
			errno = e_;                                                                \
			return -1;                                                                 \
		}                                                                                  \
		st__acc_done(a_);                                                                  \
		typeof(slot) saved_ = slot;                                                        \
		slot = fn;                                                                         \
		st__leave(&c_); /* the callbacks run the program's code: not "inside" */            \
		errno = c_.saved_errno;                                                            \
		int r_ = call_tramp;                                                               \
		slot = saved_;                                                                     \
		return r_;                                                                         \
	} while (0)

EXPORT int nftw(const char *path, __nftw_func_t fn, int nfd, int flags)
{
	WALK(tls_nftw, tramp_nftw, REAL(nftw)(path, fn, nfd, flags),
	     REAL(nftw)(path, tramp_nftw, nfd, flags));
}
EXPORT int nftw64(const char *path, __nftw64_func_t fn, int nfd, int flags)
{
	WALK(tls_nftw64, tramp_nftw64, REAL(nftw64)(path, fn, nfd, flags),
	     REAL(nftw64)(path, tramp_nftw64, nfd, flags));
}
EXPORT int ftw(const char *path, __ftw_func_t fn, int nfd)
{
	WALK(tls_ftw, tramp_ftw, REAL(ftw)(path, fn, nfd), REAL(ftw)(path, tramp_ftw, nfd));
}
EXPORT int ftw64(const char *path, __ftw64_func_t fn, int nfd)
{
	WALK(tls_ftw64, tramp_ftw64, REAL(ftw64)(path, fn, nfd),
	     REAL(ftw64)(path, tramp_ftw64, nfd));
}

/* ---- working directory: the cwd cache is dropped after every change ---- */
EXPORT int chdir(const char *path)
{
	struct st_call c;
	if (!st__enter(&c))
		return REAL(chdir)(path);
	struct st_acc *a = &st__tls_acc[0];
	st__acc_init(a, AT_FDCWD, path, K_Q, false);
	int e = st__pre(a);
	if (e) {
		st__leave(&c);
		errno = e;
		return -1;
	}
	errno = c.saved_errno;
	int r = ST_FORWARD(REAL(chdir)(path));
	int after = errno;
	if (r == 0)
		st__cwd_invalidate();
	st__post(a, r < 0 ? after : 0);
	st__leave(&c);
	errno = after;
	return r;
}
EXPORT int fchdir(int fd)
{
	int r = REAL(fchdir)(fd);
	if (r == 0)
		st__cwd_invalidate();
	return r;
}
EXPORT int chroot(const char *path)
{
	int r = REAL(chroot)(path);
	if (r == 0)
		st__cwd_invalidate();
	return r;
}

/* ---- libraries loaded by path (the loader's own opens are seen by the audit library) ---- */
EXPORT void *dlopen(const char *path, int flags)
{
	if (!path || !strchr(path, '/'))
		return REAL(dlopen)(path, flags);
	ONE_PATH(void *, NULL, (r_ == NULL), AT_FDCWD, path, K_R, false, false,
		 REAL(dlopen)(path, flags));
}
EXPORT void *dlmopen(Lmid_t lm, const char *path, int flags)
{
	if (!path || !strchr(path, '/'))
		return REAL(dlmopen)(lm, path, flags);
	ONE_PATH(void *, NULL, (r_ == NULL), AT_FDCWD, path, K_R, false, false,
		 REAL(dlmopen)(lm, path, flags));
}
