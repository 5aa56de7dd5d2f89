/* shim/os/linux.c - the shim's hooks into Linux: the path of an open descriptor through /proc, the arena's file under /dev/shm. */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../shim.h"

#define ST__STR2(x) #x
#define ST__STR(x) ST__STR2(x)

/*
 * Two of the short list of platform hooks declared in shim.h (st__fd_path,
 * st__fd_name).  Linux names a descriptor's file through
 * /proc/thread-self/fd/N: the calling thread's descriptor table, which a
 * thread that called unshare(CLONE_FILES) (or a task cloned without
 * CLONE_FILES) does not share with the thread group's leader, whose table
 * /proc/self/fd shows (review, stop 17); /proc/self/fd/N where there is no
 * /proc/thread-self (before Linux 3.17).  A Darwin port would use
 * fcntl(F_GETPATH) in shim/os/darwin.c, chosen by meson.
 */
static ssize_t fd_readlink(int fd, char *buf, size_t cap)
{
	/* "/proc/thread-self/fd/N" without snprintf (no locale, no malloc) */
	char p[48], num[16];
	int k = 0;
	unsigned u = (unsigned)fd;
	do
		num[k++] = (char)('0' + u % 10);
	while ((u /= 10) && k < 15);
	for (int i = 0; i < k; i++)
		p[21 + i] = num[k - 1 - i];
	p[21 + k] = 0;
	memcpy(p, "/proc/thread-self/fd/", 21);
	ssize_t n = ST_SYSCALL(SYS_readlinkat, AT_FDCWD, p, buf, cap - 1);
	if (n < 0 && errno == ENOENT) {
		/* no /proc/thread-self (or no such descriptor: asked twice) */
		memmove(p + 14, p + 21, (size_t)k + 1);
		memcpy(p, "/proc/self/fd/", 14);
		n = ST_SYSCALL(SYS_readlinkat, AT_FDCWD, p, buf, cap - 1);
	}
	return n;
}

ssize_t st__fd_name(int fd, char *buf, size_t cap)
{
	int saved = errno;
	ssize_t n = fd_readlink(fd, buf, cap);
	int err = errno;
	errno = saved;
	if (n < 0)
		return -err;
	if (n == 0 || buf[0] != '/')
		return -ENOENT; /* pipe:[N], socket:[N], anon_inode:...: not a file */
	buf[n] = 0;
	return n;
}

/* name[0..n) before buf[at..] (a name and a '/' when slash); false when it
 * does not fit */
static bool prepend(char *buf, size_t *at, const char *name, size_t n, bool slash)
{
	if (n + slash > *at)
		return false;
	*at -= n;
	memcpy(buf + *at, name, n);
	if (slash)
		buf[--*at] = '/';
	return true;
}

/* The name in directory par of the directory whose identity st is, put in
 * front of buf[*at..] with its '/'.  0, or -errno (-ENOENT: not there). */
static int name_in_parent(int par, const struct stat *st, char *buf, size_t *at)
{
	_Alignas(8) char d[2048];
	for (;;) {
		long got = ST_SYSCALL(SYS_getdents64, par, d, sizeof(d));
		if (got < 0)
			return -errno;
		if (got == 0)
			return -ENOENT;
		for (long off = 0; off < got;) {
			struct dirent64 *e = (struct dirent64 *)(d + off);
			off += e->d_reclen;
			if (e->d_ino != st->st_ino || !strcmp(e->d_name, ".") ||
			    !strcmp(e->d_name, ".."))
				continue;
			/* d_ino is not the mounted root's inode at a mount point:
			 * the entry is checked by its identity */
			struct stat cs;
			if (ST_SYSCALL(SYS_newfstatat, par, e->d_name, &cs, AT_SYMLINK_NOFOLLOW) != 0 ||
			    cs.st_dev != st->st_dev || cs.st_ino != st->st_ino)
				continue;
			return prepend(buf, at, e->d_name, strlen(e->d_name), true) ? 0
											: -ENAMETOOLONG;
		}
	}
}

ssize_t st__dir_path_deep(int dirfd, char *buf, size_t cap)
{
	if (cap < 2)
		return -ENAMETOOLONG;
	int saved = errno;
	int cur = (int)ST_SYSCALL(SYS_openat, dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0) {
		int e = errno;
		errno = saved;
		return -e;
	}
	size_t at = cap - 1;
	buf[at] = 0;
	ssize_t r = -ENAMETOOLONG;
	char link[PATH_MAX];
	for (;;) {
		ssize_t n = fd_readlink(cur, link, sizeof(link));
		if (n > 0 && link[0] == '/') { /* an ancestor the kernel names */
			if (n == 1 && at < cap - 1)
				n = 0; /* "/" in front of "/name...": no second slash */
			r = prepend(buf, &at, link, (size_t)n, false) ? (ssize_t)(cap - 1 - at)
								     : -ENAMETOOLONG;
			break;
		}
		if (n >= 0 || errno != ENAMETOOLONG) {
			r = -ENOENT; /* not a path: unreachable, or not a file */
			break;
		}
		struct stat st;
		int par = -1;
		if (ST_SYSCALL(SYS_fstat, cur, &st) != 0 ||
		    (par = (int)ST_SYSCALL(SYS_openat, cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
			r = -errno;
			break;
		}
		int e = name_in_parent(par, &st, buf, &at);
		ST_SYSCALL(SYS_close, cur);
		cur = par;
		if (e) {
			r = e;
			break;
		}
	}
	ST_SYSCALL(SYS_close, cur);
	if (r > 0)
		memmove(buf, buf + at, (size_t)r + 1);
	errno = saved;
	return r;
}

ssize_t st__fd_path(int fd, char *buf, size_t cap)
{
	int saved = errno;
	ssize_t n = st__fd_name(fd, buf, cap);
	if (n == -ENAMETOOLONG) /* a directory too deep for the kernel to name */
		return st__dir_path_deep(fd, buf, cap);
	if (n < 0)
		return n; /* EBADF, a non-file */
	if (st__name_anonymous(buf, (size_t)n))
		return -ENOENT; /* a memfd: no path to judge or record */
	/* the kernel's mark of a name that was removed (the file may live on
	 * under another link): name what it was; a name that merely ends so,
	 * the same file under that very name, is kept */
	struct stat st, named;
	if (st__name_deleted(buf, (size_t)n) &&
	    !(ST_SYSCALL(SYS_fstat, fd, &st) == 0 &&
	      ST_SYSCALL(SYS_newfstatat, AT_FDCWD, buf, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
	      named.st_dev == st.st_dev && named.st_ino == st.st_ino))
		n -= 10;
	errno = saved;
	buf[n] = 0;
	return n;
}

/*
 * The arena object's descriptor, as shm_open(3) would open it, but with two
 * raw system calls: glibc's shm_open copies its directory name out of libc's
 * data (one more page for every process to fault in) and its fstat would go
 * through the interposed wrapper.  On Linux a POSIX shared-memory name "/N"
 * is the file /dev/shm/N; a name that is a path (an arena directory's,
 * sandtrace_arena_name_is_path) is opened as it is.  Returns the descriptor
 * (O_CLOEXEC) and stores its size and its file system's block size, or
 * returns -errno.
 */
int st__arena_open(const char *name, uint64_t *size, uint64_t *blksize)
{
	static const char dir[] = "/dev/shm";
	char p[sizeof(dir) + SANDTRACE_ARENA_NAME_MAX];
	size_t n = st__strlen(name);
	if (name[0] != '/' || n < 2 || n >= SANDTRACE_ARENA_NAME_MAX)
		return -EINVAL;
	const char *path = name;
	if (!sandtrace_arena_name_is_path(name)) {
		st__copy(p, dir, sizeof(dir) - 1);
		st__copy(p + sizeof(dir) - 1, name, n + 1);
		path = p;
	}
	int saved = errno;
	int fd = (int)ST_SYSCALL(SYS_openat, AT_FDCWD, path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int r = fd < 0 ? -errno : ST_SYSCALL(SYS_fstat, fd, &st) != 0 ? -errno : fd;
	if (r < 0 && fd >= 0)
		ST_SYSCALL(SYS_close, fd);
	errno = saved;
	if (r >= 0) {
		*size = (uint64_t)st.st_size;
		*blksize = (uint64_t)st.st_blksize;
	}
	return r;
}

#if ST_HAVE_VFORK_ASM
/*
 * vfork(2) for x86-64.  It cannot be a C function: the child returns from
 * it first, on the parent's stack, and the parent returns from the same frame
 * afterwards.  As glibc's own vfork does, the return address is kept in a
 * register across the system call (the child's calls overwrite the stack
 * below the caller's frame) and pushed back by each side.  st__vfork_begin
 * (before) chooses between a real vfork and the fork wrapper; the parent
 * calls st__vfork_end with the system call's result (the pid, or -errno),
 * which restores the shim's per-thread state and sets errno.  Both calls
 * are made with the stack 16-byte aligned.
 */
__asm__(".pushsection .text.vfork, \"ax\", @progbits\n" /* as -ffunction-sections names it: layout.ld */
	".globl vfork\n"
	".globl __vfork\n" /* its other public name, glibc's alias */
	".type vfork, @function\n"
	".type __vfork, @function\n"
	".p2align 4\n"
	"vfork:\n"
	"__vfork:\n"
#ifdef __CET__
	"	endbr64\n"
#endif
	"	sub $8, %rsp\n"
	"	call st__vfork_begin\n"
	"	add $8, %rsp\n"
	"	test %eax, %eax\n"
	"	jz 1f\n"
	"	pop %rdi\n"
	"	mov $" ST__STR(SYS_vfork) ", %eax\n"
	"	syscall\n"
	"	push %rdi\n"
	"	test %rax, %rax\n"
	"	jz 2f\n"
	"	mov %rax, %rdi\n"
	"	sub $8, %rsp\n"
	"	call st__vfork_end\n"
	"	add $8, %rsp\n"
	"2:	ret\n"
	"1:	jmp st__fork\n"
	".size vfork, .-vfork\n"
	".size __vfork, .-__vfork\n"
	".popsection\n");
#endif
