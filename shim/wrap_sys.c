/* shim/wrap_sys.c - libc's syscall(): file-system system call numbers are decoded like their named wrappers. */
#include <link.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wrap.h"

#define EXPORT __attribute__((visibility("default")))

/* The named wrappers of this library (they check, forward and record). */
int open(const char *, int, ...);
int openat(int, const char *, int, ...);
int creat(const char *, mode_t);
int stat(const char *, struct stat *);
int lstat(const char *, struct stat *);
int fstatat(int, const char *, struct stat *, int);
int statx(int, const char *, int, unsigned int, struct statx *);
int access(const char *, int);
int faccessat(int, const char *, int, int);
ssize_t readlink(const char *, char *, size_t);
ssize_t readlinkat(int, const char *, char *, size_t);
int rename(const char *, const char *);
int renameat(int, const char *, int, const char *);
int renameat2(int, const char *, int, const char *, unsigned int);
int unlink(const char *);
int unlinkat(int, const char *, int);
int mkdir(const char *, mode_t);
int mkdirat(int, const char *, mode_t);
int rmdir(const char *);
int link(const char *, const char *);
int linkat(int, const char *, int, const char *, int);
int symlink(const char *, const char *);
int symlinkat(const char *, int, const char *);
int chmod(const char *, mode_t);
int fchmodat(int, const char *, mode_t, int);
int chown(const char *, uid_t, gid_t);
int lchown(const char *, uid_t, gid_t);
int fchownat(int, const char *, uid_t, gid_t, int);
int truncate(const char *, off_t);
int utimensat(int, const char *, const struct timespec *, int);
int mknod(const char *, mode_t, dev_t);
int mknodat(int, const char *, mode_t, dev_t);
int chdir(const char *);
int fchdir(int);
int fchmod(int, mode_t);
int fchown(int, uid_t, gid_t);
int ioctl(int, unsigned long, ...);
int execve(const char *, char *const[], char *const[]);
int execveat(int, const char *, char *const[], char *const[], int);

int lchmod(const char *, mode_t);
int utime(const char *, const struct utimbuf *);
int utimes(const char *, const struct timeval *);
int futimesat(int, const char *, const struct timeval *);
int chroot(const char *);
long st__sys_getdents(long nr, int fd, void *buf, size_t len); /* wrap_dir.c */
int acct(const char *);
int swapon(const char *, int);
int swapoff(const char *);

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452 /* Linux 6.6; the number is the same on every architecture */
#endif

/* System calls without a libc function of their own: the check is made here
 * and the call forwarded as it came. */
static long sys_openat2(int dirfd, const char *path, const struct open_how *how, size_t size)
{
	/* EFAULT (NULL, (void *)-1: shim.h st__unreadable), EINVAL: the kernel says so */
	if (size < sizeof(*how) || st__unreadable(how))
		return REAL(syscall)(SYS_openat2, dirfd, path, how, size);
	int flags = st_open_flags((int)how->flags);
	bool nofollow = st_open_nofollow(flags);
	const char *judged = path;
	/* RESOLVE_IN_ROOT: an absolute name, ".." and every symlink's target
	 * are taken below dirfd, as in a chroot: the name, relative to dirfd,
	 * is resolved so (struct st_walk's root) */
	bool in_root = path && (how->resolve & RESOLVE_IN_ROOT) && dirfd != AT_FDCWD;
	if (in_root)
		while (*judged == '/')
			judged++;
	if (judged && !*judged && path && *path)
		judged = ".";
	/* typed int, as open's result: a descriptor, which --verify --fence closes
	 * again when the version it opened failed verification (ST_RESULT_FD,
	 * ST_UNDO_RESULT take an int result for a descriptor, never a long) */
	if (!in_root) /* judged is path */
		ONE_PATH(int, -1, (r_ < 0), dirfd, path, st_open_kind(flags), nofollow, false,
			 (int)REAL(syscall)(SYS_openat2, dirfd, path, how, size));
	ONE_PATH_ROOTED(int, -1, (r_ < 0), dirfd, ST_NOPROBE(judged), st_open_kind(flags),
			nofollow, false, in_root,
			(int)REAL(syscall)(SYS_openat2, dirfd, path, how, size));
}
static long sys_fchmodat2(int dirfd, const char *path, mode_t mode, int flags)
{
	ONE_PATH(long, -1, (r_ < 0), dirfd, path, K_W, (flags & AT_SYMLINK_NOFOLLOW) != 0,
		 (flags & AT_EMPTY_PATH) != 0,
		 REAL(syscall)(SYS_fchmodat2, dirfd, path, mode, flags));
}

/*
 * The path-taking calls newer than glibc 2.36's headers, which no libc
 * function of this glibc makes (a program reaches them only by syscall()):
 * the extended attributes at a directory (Linux 6.13) and a file's
 * attributes (file_getattr, file_setattr: 6.17).  Their numbers are the
 * same on every architecture of the unified table (x86-64's and the
 * generic one, since Linux 5.1), where they are defined here.  Reads are
 * queries, changes writes, as for their older siblings (getxattr,
 * setxattr, the FS_IOC_*FLAGS ioctls' files); AT_SYMLINK_NOFOLLOW and
 * AT_EMPTY_PATH as in at_flags.  (open_tree_attr, 6.15, is decoded with
 * the rest of the mount API: st__mount_api.)
 */
#if defined(__x86_64__) || defined(__aarch64__)
#ifndef SYS_setxattrat
#define SYS_setxattrat 463
#endif
#ifndef SYS_getxattrat
#define SYS_getxattrat 464
#endif
#ifndef SYS_listxattrat
#define SYS_listxattrat 465
#endif
#ifndef SYS_removexattrat
#define SYS_removexattrat 466
#endif
#ifndef SYS_file_getattr
#define SYS_file_getattr 468
#endif
#ifndef SYS_file_setattr
#define SYS_file_setattr 469
#endif
#define ST_HAVE_XATTRAT 1
static long sys_at_flags_call(long nr, int dirfd, const char *path, unsigned kind,
			      unsigned at_flags, long a3, long a4, long a5, long a6)
{
	/* a null name with AT_EMPTY_PATH: the file of dirfd itself, as an
	 * empty one (the kernel takes both, getname_maybe_null); a null name
	 * would be skipped unjudged, a set or removed xattr unrecorded and,
	 * fenced, let through to a file the run may only read */
	bool empty = (at_flags & AT_EMPTY_PATH) != 0, nul = !path && empty;
	/* name: what is judged, and what the call reads (ST_REFUSAL sets it) */
	const char *name = nul ? "" : path;
	ONE_PATH(long, -1, (r_ < 0), dirfd, name, kind,
		 nul || (at_flags & AT_SYMLINK_NOFOLLOW) != 0, empty,
		 REAL(syscall)(nr, dirfd, nul ? path : name, a3, a4, a5, a6));
}
#endif

/* utimensat with a null path: the file of dirfd itself (the kernel's
 * futimens), which glibc's utimensat refuses (EINVAL): forwarded as it came */
static long sys_utimensat_fd(int fd, const struct timespec *ts, int flags)
{
	FD_WRITE(long, -1, (r_ < 0), fd, REAL(syscall)(SYS_utimensat, fd, NULL, ts, flags));
}

/*
 * io_uring.  A ring's entries (IORING_OP_OPENAT, OPENAT2, STATX, RENAMEAT,
 * UNLINKAT, MKDIRAT, SYMLINKAT, LINKAT, the xattr operations, ...) are read
 * by the kernel from memory the process shares with it: no libc function and
 * no system call with a path is made.  The shim cannot decode them safely
 * (the process can rewrite an entry until the kernel has read it, and a ring
 * polled by a kernel thread, IORING_SETUP_SQPOLL, needs no system call at
 * all), so it watches how a ring is made instead: io_uring_setup by
 * syscall(), and liburing's entry points, which make their system calls
 * inline.  Under a policy that can refuse anything (st__listing_filtered: a
 * fence, a deny or an ask rule) the call fails as on a kernel built without
 * io_uring, ENOSYS: every program that falls back from io_uring takes that
 * for "none here" (EPERM, what kernel.io_uring_disabled=2 and the container
 * runtimes' seccomp profiles give, is younger, and fallbacks written before
 * it still take it for an error), and the attempt is a violation.  Otherwise
 * the ring is let through and the daemon marks the process: the report is
 * incomplete.  io_uring_enter and io_uring_register by syscall() are taken
 * the same way, for a ring made where the shim did not see it (an inline
 * system call).  A process says each outcome once (uring_said: the pid that
 * said it; a forked child is a process of its own).
 */
static _Atomic int32_t uring_said[2]; /* [0] let through, [1] refused */

static void uring_note(const char *call, bool refused)
{
	int32_t pid = st__g.pid;
	if (atomic_exchange_explicit(&uring_said[refused], pid, memory_order_relaxed) == pid)
		return;
	struct sandtrace_access acc = {
	    .kind = K_Q,
	    .flags = (uint16_t)(SANDTRACE_AF_IO_URING | (refused ? SANDTRACE_AF_DENIED : 0)),
	    .err = refused ? ENOSYS : 0,
	    .path_len = (uint32_t)strlen(call)};
	st__send_access(&acc, call, acc.path_len, NULL, 0); /* preserves errno */
}

/* After st__enter: refuse (true: noted, left, errno the program's) or go on */
static bool uring_refuse(struct st_call *c, const char *call)
{
	if (!st__listing_filtered())
		return false;
	uring_note(call, true);
	st__leave(c);
	errno = c->saved_errno;
	return true;
}

static long sys_io_uring(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	const char *call = nr == SYS_io_uring_setup   ? "io_uring_setup"
			   : nr == SYS_io_uring_enter ? "io_uring_enter"
						      : "io_uring_register";
	struct st_call c;
	if (!st__enter(&c)) /* unchecked, refused: as uring_refuse */
		return ST_UNCHECKED(long, c, -1, ENOSYS, NULL,
				    REAL(syscall)(nr, a1, a2, a3, a4, a5, a6));
	if (uring_refuse(&c, call)) {
		errno = ENOSYS;
		return -1;
	}
	errno = c.saved_errno;
	/* forwarded outside the shim: an enter waits for completions, and a
	 * signal handler's calls meanwhile are checked */
	long r = ST_FORWARD(REAL(syscall)(nr, a1, a2, a3, a4, a5, a6));
	int e = errno;
	if (r >= 0)
		uring_note(call, false);
	st__leave(&c);
	errno = e;
	return r;
}

/* The first loaded object named liburing* (liburing.so.2, liburing-ffi.so.2). */
static int find_liburing(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const char *n = info->dlpi_name, *base = n;
	for (const char *q = n; *q; q++)
		if (*q == '/')
			base = q + 1;
	size_t l = strlen(n);
	if (strncmp(base, "liburing", 8) != 0 || l >= PATH_MAX)
		return 0;
	memcpy(arg, n, l + 1);
	return 1;
}

/*
 * liburing's function name: the next definition after the shim's, else the
 * one of a liburing the loader holds outside the global scope (a library
 * dlopen'ed with RTLD_LOCAL that needs liburing calls the shim's definition,
 * which comes first, and RTLD_NEXT looks in the global scope only).  A slot
 * holding st__resolve's stub (st__resolve_all ran before liburing came) is
 * looked up again; NULL when there is none.
 */
static void *uring_real(_Atomic(void *) *slot, const char *name)
{
	void *p = atomic_load_explicit(slot, memory_order_acquire);
	if (p && p != (void *)st__enosys_stub)
		return p;
	p = dlsym(RTLD_NEXT, name);
	char lib[PATH_MAX];
	void *h;
	if (!p && dl_iterate_phdr(find_liburing, lib) &&
	    (h = REAL(dlopen)(lib, RTLD_LAZY | RTLD_NOLOAD)) != NULL) {
		p = dlsym(h, name);
		REAL(dlclose)(h);
	}
	if (p)
		atomic_store_explicit(slot, p, memory_order_release);
	return p;
}

/*
 * The body of a liburing entry point: its functions return -errno.  Refused:
 * -ENOSYS, as liburing returns on a kernel without io_uring, and errno
 * ENOSYS, as a liburing built on libc's syscall() leaves it (and as a
 * program's own io_uring_setup of the -1-and-errno kind, which this name
 * also takes, would set it); none found to forward to: the same.
 */
#define URING_LIB(name, args)                                                                      \
	do {                                                                                       \
		st__t_##name real_ = (st__t_##name)uring_real(&st__real_##name, #name);            \
		struct st_call c_;                                                                 \
		if (!st__enter(&c_)) /* unchecked, refused: as uring_refuse */                    \
			return ST_UNCHECKED(int, c_, -ENOSYS, ENOSYS, NULL,                        \
					    real_ ? real_ args : (errno = ENOSYS, -ENOSYS));       \
		if (uring_refuse(&c_, #name)) {                                                    \
			errno = ENOSYS;                                                            \
			return -ENOSYS;                                                            \
		}                                                                                  \
		errno = c_.saved_errno;                                                            \
		int r_ = real_ ? ST_FORWARD(real_ args) : (errno = ENOSYS, -ENOSYS);               \
		int e_ = errno;                                                                    \
		if (r_ >= 0)                                                                       \
			uring_note(#name, false);                                                  \
		st__leave(&c_);                                                                    \
		errno = e_;                                                                        \
		return r_;                                                                         \
	} while (0)

EXPORT int io_uring_setup(unsigned entries, void *p)
{
	URING_LIB(io_uring_setup, (entries, p));
}
EXPORT int io_uring_queue_init(unsigned entries, void *ring, unsigned flags)
{
	URING_LIB(io_uring_queue_init, (entries, ring, flags));
}
EXPORT int io_uring_queue_init_params(unsigned entries, void *ring, void *p)
{
	URING_LIB(io_uring_queue_init_params, (entries, ring, p));
}
EXPORT int io_uring_queue_init_mem(unsigned entries, void *ring, void *p, void *buf, size_t size)
{
	URING_LIB(io_uring_queue_init_mem, (entries, ring, p, buf, size));
}

#define P(x) ((const char *)(x))
#define I(x) ((int)(x))

EXPORT long syscall(long nr, ...)
{
	va_list ap;
	va_start(ap, nr);
	long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
	long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
	va_end(ap);
	switch (nr) {
#ifdef SYS_open
	case SYS_open:
		return open(P(a1), I(a2), (mode_t)a3);
#endif
	case SYS_openat:
		return openat(I(a1), P(a2), I(a3), (mode_t)a4);
#ifdef SYS_creat
	case SYS_creat:
		return creat(P(a1), (mode_t)a2);
#endif
#ifdef SYS_stat
	case SYS_stat:
		return stat(P(a1), (struct stat *)a2);
	case SYS_lstat:
		return lstat(P(a1), (struct stat *)a2);
#endif
	case SYS_newfstatat:
		return fstatat(I(a1), P(a2), (struct stat *)a3, I(a4));
	case SYS_statx:
		return statx(I(a1), P(a2), I(a3), (unsigned)a4, (struct statx *)a5);
#ifdef SYS_access
	case SYS_access:
		return access(P(a1), I(a2));
#endif
	case SYS_faccessat:
		return faccessat(I(a1), P(a2), I(a3), 0);
#ifdef SYS_faccessat2
	case SYS_faccessat2:
		return faccessat(I(a1), P(a2), I(a3), I(a4));
#endif
#ifdef SYS_readlink
	case SYS_readlink:
		return readlink(P(a1), (char *)a2, (size_t)a3);
#endif
	case SYS_readlinkat:
		return readlinkat(I(a1), P(a2), (char *)a3, (size_t)a4);
#ifdef SYS_rename
	case SYS_rename:
		return rename(P(a1), P(a2));
#endif
	case SYS_renameat:
		return renameat(I(a1), P(a2), I(a3), P(a4));
#ifdef SYS_renameat2
	case SYS_renameat2:
		return renameat2(I(a1), P(a2), I(a3), P(a4), (unsigned)a5);
#endif
#ifdef SYS_unlink
	case SYS_unlink:
		return unlink(P(a1));
	case SYS_rmdir:
		return rmdir(P(a1));
	case SYS_mkdir:
		return mkdir(P(a1), (mode_t)a2);
	case SYS_link:
		return link(P(a1), P(a2));
	case SYS_symlink:
		return symlink(P(a1), P(a2));
	case SYS_chmod:
		return chmod(P(a1), (mode_t)a2);
	case SYS_chown:
		return chown(P(a1), (uid_t)a2, (gid_t)a3);
	case SYS_lchown:
		return lchown(P(a1), (uid_t)a2, (gid_t)a3);
	case SYS_mknod:
		return mknod(P(a1), (mode_t)a2, (dev_t)a3);
#endif
	case SYS_unlinkat:
		return unlinkat(I(a1), P(a2), I(a3));
	case SYS_mkdirat:
		return mkdirat(I(a1), P(a2), (mode_t)a3);
	case SYS_linkat:
		return linkat(I(a1), P(a2), I(a3), P(a4), I(a5));
	case SYS_symlinkat:
		return symlinkat(P(a1), I(a2), P(a3));
	case SYS_fchmodat:
		return fchmodat(I(a1), P(a2), (mode_t)a3, 0);
	case SYS_fchownat:
		return fchownat(I(a1), P(a2), (uid_t)a3, (gid_t)a4, I(a5));
	case SYS_truncate:
		return truncate(P(a1), (off_t)a2);
	case SYS_utimensat:
		if (!P(a2))
			return sys_utimensat_fd(I(a1), (const struct timespec *)a3, I(a4));
		return utimensat(I(a1), P(a2), (const struct timespec *)a3, I(a4));
	case SYS_mknodat:
		return mknodat(I(a1), P(a2), (mode_t)a3, (dev_t)a4);
	case SYS_chdir:
		return chdir(P(a1));
	/* the cwd moves: the fchdir wrapper drops the cwd cache (relative
	 * names were made absolute against the old cwd without it) */
	case SYS_fchdir:
		return fchdir(I(a1));
	/* writes on a descriptor that may be open read-only, as their named
	 * wrappers record them */
	case SYS_fchmod:
		return fchmod(I(a1), (mode_t)a2);
	case SYS_fchown:
		return fchown(I(a1), (uid_t)a2, (gid_t)a3);
	case SYS_fsetxattr:
		return fsetxattr(I(a1), P(a2), (const void *)a3, (size_t)a4, I(a5));
	case SYS_fremovexattr:
		return fremovexattr(I(a1), P(a2));
	case SYS_ioctl: /* the file attribute writes, as the named wrapper */
		return ioctl(I(a1), (unsigned long)a2, (void *)a3);
	case SYS_chroot:
		return chroot(P(a1));
	case SYS_mount:
		return mount(P(a1), P(a2), P(a3), (unsigned long)a4, (const void *)a5);
	case SYS_umount2:
		return umount2(P(a1), I(a2));
	/* the other system-wide uses of a name, as their libc wrappers
	 * (pivot_root and uselib: wrap_fs.c) */
	case SYS_acct:
		return acct(P(a1));
	case SYS_swapon:
		return swapon(P(a1), I(a2));
	case SYS_swapoff:
		return swapoff(P(a1));
	case SYS_quotactl:
		return st__quotactl(a1, a2, a3, a4);
	case SYS_pivot_root:
		return st__pivot_root(a1, a2);
#ifdef SYS_uselib
	case SYS_uselib:
		return st__uselib(a1);
#endif
#ifdef ST_HAVE_MOUNT_API
	/* the new mount API, as its libc wrappers (and open_tree_attr) */
	case SYS_open_tree:
	case SYS_move_mount:
	case SYS_fspick:
	case SYS_mount_setattr:
	case SYS_fsconfig:
#ifdef ST_SYS_open_tree_attr
	case ST_SYS_open_tree_attr:
#endif
		return st__mount_api(nr, a1, a2, a3, a4, a5);
#endif
	/* a listing: the names the sandbox hides are taken out */
	case SYS_getdents64:
#ifdef SYS_getdents
	case SYS_getdents:
#endif
		return st__sys_getdents(nr, I(a1), (void *)a2, (size_t)a3);
	case SYS_openat2:
		return sys_openat2(I(a1), P(a2), (const struct open_how *)a3, (size_t)a4);
	case SYS_fchmodat2:
		return sys_fchmodat2(I(a1), P(a2), (mode_t)a3, I(a4));
#ifdef SYS_utime
	case SYS_utime:
		return utime(P(a1), (const struct utimbuf *)a2);
	case SYS_utimes:
		return utimes(P(a1), (const struct timeval *)a2);
#endif
	case SYS_futimesat:
		return futimesat(I(a1), P(a2), (const struct timeval *)a3);
	case SYS_statfs:
		return statfs(P(a1), (struct statfs *)a2);
	case SYS_open_by_handle_at:
		return open_by_handle_at(I(a1), (struct file_handle *)a2, I(a3));
	case SYS_name_to_handle_at:
		return name_to_handle_at(I(a1), P(a2), (struct file_handle *)a3, (int *)a4, I(a5));
	case SYS_inotify_add_watch:
		return inotify_add_watch(I(a1), P(a2), (uint32_t)a3);
	case SYS_fanotify_mark:
		return fanotify_mark(I(a1), (unsigned)a2, (uint64_t)a3, I(a4), P(a5));
#ifdef ST_HAVE_XATTRAT
	/* (dirfd, path, at_flags, ...) */
	case SYS_setxattrat:
	case SYS_removexattrat:
		return sys_at_flags_call(nr, I(a1), P(a2), K_W, (unsigned)a3, a3, a4, a5, a6);
	case SYS_getxattrat:
	case SYS_listxattrat:
		return sys_at_flags_call(nr, I(a1), P(a2), K_Q, (unsigned)a3, a3, a4, a5, a6);
	/* (dirfd, path, attr, size, at_flags) */
	case SYS_file_setattr:
		return sys_at_flags_call(nr, I(a1), P(a2), K_W, (unsigned)a5, a3, a4, a5, a6);
	case SYS_file_getattr:
		return sys_at_flags_call(nr, I(a1), P(a2), K_Q, (unsigned)a5, a3, a4, a5, a6);
#endif
	case SYS_getxattr:
		return getxattr(P(a1), P(a2), (void *)a3, (size_t)a4);
	case SYS_lgetxattr:
		return lgetxattr(P(a1), P(a2), (void *)a3, (size_t)a4);
	case SYS_listxattr:
		return listxattr(P(a1), (char *)a2, (size_t)a3);
	case SYS_llistxattr:
		return llistxattr(P(a1), (char *)a2, (size_t)a3);
	case SYS_setxattr:
		return setxattr(P(a1), P(a2), (const void *)a3, (size_t)a4, I(a5));
	case SYS_lsetxattr:
		return lsetxattr(P(a1), P(a2), (const void *)a3, (size_t)a4, I(a5));
	case SYS_removexattr:
		return removexattr(P(a1), P(a2));
	case SYS_lremovexattr:
		return lremovexattr(P(a1), P(a2));
	/* a unix socket's name, as the named wrappers judge it */
	case SYS_bind:
		return bind(I(a1), (const struct sockaddr *)a2, (socklen_t)a3);
	case SYS_connect:
		return connect(I(a1), (const struct sockaddr *)a2, (socklen_t)a3);
	case SYS_sendto:
		return sendto(I(a1), (const void *)a2, (size_t)a3, I(a4),
			      (const struct sockaddr *)a5, (socklen_t)a6);
	case SYS_sendmsg:
		return sendmsg(I(a1), (const struct msghdr *)a2, I(a3));
	case SYS_sendmmsg:
		return sendmmsg(I(a1), (struct mmsghdr *)a2, (unsigned)a3, I(a4));
	case SYS_execve:
		return execve(P(a1), (char *const *)a2, (char *const *)a3);
	case SYS_execveat:
		return execveat(I(a1), P(a2), (char *const *)a3, (char *const *)a4, I(a5));
	/* a child with memory of its own: its first steps are a forked
	 * child's (one that shares the memory is left alone) */
	case SYS_clone:
#ifdef SYS_fork
	case SYS_fork:
#endif
	case SYS_clone3: {
		unsigned long flags = nr == SYS_clone ? (unsigned long)a1
				      : nr == SYS_clone3 && a1 ? ((const struct clone_args *)a1)->flags
								: 0;
		int32_t parent = st__g.pid;
		long r = REAL(syscall)(nr, a1, a2, a3, a4, a5, a6);
		if (r == 0 && !(flags & (CLONE_VM | CLONE_THREAD)))
			st__clone_child(parent, (flags & CLONE_FILES) != 0);
		return r;
	}
	/* a ring's entries reach files unseen: refused or marked */
	case SYS_io_uring_setup:
	case SYS_io_uring_enter:
	case SYS_io_uring_register:
		return sys_io_uring(nr, a1, a2, a3, a4, a5, a6);
	/* a reaped child's status, as the wait wrappers report it */
	case SYS_wait4:
		return wait4((pid_t)a1, (int *)a2, I(a3), (struct rusage *)a4);
	case SYS_waitid: {
		siginfo_t *info = (siginfo_t *)a3;
		if (info)
			info->si_pid = 0;
		long r = REAL(syscall)(nr, a1, a2, a3, a4, a5, a6);
		if (r == 0) {
			int saved = errno;
			st__reaped_info(info);
			errno = saved;
		}
		return r;
	}
	default:
		return REAL(syscall)(nr, a1, a2, a3, a4, a5, a6);
	}
}

static _Atomic bool resolved_all;

/* here, among the wrappers laid out after the code every process runs
 * (shim/meson.build): its ~200 look-ups are 6 KiB of code, which in init.c
 * pushed that code into one more 64 KiB window, a page fault in every
 * process (and as `cold` it would go in front of it) */
void st__resolve_all(void)
{
	if (atomic_load_explicit(&resolved_all, memory_order_acquire))
		return;
	int saved = errno;
#define SYM(ret, name, params) (void)REAL(name);
#include "symbols.def"
#undef SYM
	atomic_store_explicit(&resolved_all, true, memory_order_release);
	errno = saved;
}

/*
 * pthread_create: the process's real functions are all resolved before its
 * second thread exists (st__resolve_all, once), so that no thread's first
 * call of a wrapper takes the loader's lock (dlsym) while another thread is
 * inside dlopen.  Then libc's.  Threads made by a raw clone are not covered:
 * their first calls resolve as before.
 */
EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	st__resolve_all();
	return REAL(pthread_create)(th, attr, fn, arg);
}

/* ---- jumps: longjmp and its names (shim.h st__jump_out) ---- */
#define JUMP(name)                                                                                 \
	EXPORT void name(struct __jmp_buf_tag env[1], int val)                                    \
	{                                                                                          \
		st__jump_out(env);                                                                 \
		REAL(name)(env, val);                                                              \
		__builtin_unreachable();                                                           \
	}
JUMP(longjmp)
JUMP(_longjmp)
JUMP(siglongjmp)
JUMP(__longjmp_chk)
