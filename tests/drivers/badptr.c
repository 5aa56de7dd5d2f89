/* tests/drivers/badptr.c - call every path-taking entry point the shim interposes with a bad
 * pointer for a name (or another argument the shim reads); print "NAME PTR RESULT". */
/*
 * usage: badptr DIR [PTR...]     DIR: an existing directory (names below DIR/nx/, which does
 *                                not exist, stand for the good arguments beside a bad one)
 *        badptr DIR list          print the case names
 *
 * PTR is one of (default: all but runoff)
 *   one      (char *)1
 *   m1       (char *)-1
 *   kernel   0xffff800000000000, the kernel half
 *   noncanon 0x0000800000000000, just past the user half
 *   unmapped a page that was mapped and unmapped again
 *   protnone a page mapped PROT_NONE (as LTP's tst_get_bad_addr)
 *   runoff   a name whose bytes run into a PROT_NONE page without a NUL
 * Each call runs in a child of its own; RESULT is "ok", the errno's name,
 * or "SIG<name>" when the child was killed.  An untraced run and a traced
 * one must print the same lines (integration/badptr.sh).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <ftw.h>
#include <glob.h>
#include <limits.h>
#include <mntent.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <iconv.h>
#include <linux/openat2.h>
#include <netdb.h>
#include <nl_types.h>
#include <pwd.h>
#include <semaphore.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/quota.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

extern int __open_2(const char *, int);
extern int __openat_2(int, const char *, int);
extern int __xstat(int, const char *, struct stat *);
extern int __lxstat(int, const char *, struct stat *);
extern int __fxstatat(int, int, const char *, struct stat *, int);
extern int pivot_root(const char *, const char *); /* glibc exports it, no header declares it */
extern int __xmknod(int, const char *, mode_t, dev_t *);
extern ssize_t __readlink_chk(const char *, char *, size_t, size_t);
extern char *__realpath_chk(const char *, char *, size_t);
extern char **environ;

static char nx[PATH_MAX];  /* DIR/nx/x: a good name that does not exist */
static char nx2[PATH_MAX]; /* DIR/nx/y */
static int only_list;

static struct file_handle *handle(void)
{
	static union {
		struct file_handle h;
		char b[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	u.h.handle_bytes = MAX_HANDLE_SZ;
	return &u.h;
}
static long spawn_err(int e)
{
	errno = e;
	return e ? -1 : 0;
}
static int nosel(const struct dirent *d) { (void)d; return 0; }
static int nowalk(const char *f, const struct stat *s, int t, struct FTW *w)
{
	(void)f, (void)s, (void)t, (void)w;
	return 0;
}
static int nowalk1(const char *f, const struct stat *s, int t)
{
	(void)f, (void)s, (void)t;
	return 0;
}

/* one case: the expression e over B (the bad pointer), in a child */
static void one(const char *name, const char *ptr, char *B, long (*fn)(char *))
{
	if (only_list) {
		printf("%s\n", name);
		return;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		errno = 0;
		long r = fn(B);
		const char *e = errno ? strerrorname_np(errno) : "E0";
		printf("%s %s %s\n", name, ptr, r >= 0 ? "ok" : e ? e : "E?");
		fflush(stdout);
		_exit(0);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(st)) {
		printf("%s %s SIG%s\n", name, ptr, sigabbrev_np(WTERMSIG(st)));
		fflush(stdout);
	}
}

#define L(e) (long)(e)
#define P(e) ((e) ? 0L : -1L)
/* the cases: each a function of B */
#define CASES(X)                                                                                   \
	X(open, L(open(B, O_RDONLY)))                                                              \
	X(open_creat, L(open(B, O_WRONLY | O_CREAT, 0644)))                                        \
	X(open64, L(open64(B, O_RDONLY)))                                                          \
	X(openat, L(openat(AT_FDCWD, B, O_RDONLY)))                                                \
	X(openat64, L(openat64(AT_FDCWD, B, O_RDONLY)))                                            \
	X(__open_2, L(__open_2(B, O_RDONLY)))                                                      \
	X(__openat_2, L(__openat_2(AT_FDCWD, B, O_RDONLY)))                                        \
	X(creat, L(creat(B, 0644)))                                                                \
	X(fopen, P(fopen(B, "r")))                                                                 \
	X(fopen_mode, P(fopen(nx, B)))                                                             \
	X(freopen, P(freopen(B, "r", stdin)))                                                      \
	X(stat, L(stat(B, &(struct stat){0})))                                                     \
	X(lstat, L(lstat(B, &(struct stat){0})))                                                   \
	X(fstatat, L(fstatat(AT_FDCWD, B, &(struct stat){0}, 0)))                                  \
	X(stat64, L(stat64(B, &(struct stat64){0})))                                               \
	X(__xstat, L(__xstat(1, B, &(struct stat){0})))                                            \
	X(__lxstat, L(__lxstat(1, B, &(struct stat){0})))                                          \
	X(__fxstatat, L(__fxstatat(1, AT_FDCWD, B, &(struct stat){0}, 0)))                         \
	X(statx, L(statx(AT_FDCWD, B, 0, STATX_BASIC_STATS, &(struct statx){0})))                  \
	X(statfs, L(statfs(B, &(struct statfs){0})))                                               \
	X(statvfs, L(statvfs(B, &(struct statvfs){0})))                                           \
	X(pathconf, L(pathconf(B, _PC_NAME_MAX)))                                                  \
	X(inotify_add_watch, L(inotify_add_watch(inotify_init1(IN_CLOEXEC), B, IN_ALL_EVENTS)))    \
	X(access, L(access(B, F_OK)))                                                              \
	X(faccessat, L(faccessat(AT_FDCWD, B, F_OK, 0)))                                           \
	X(euidaccess, L(euidaccess(B, F_OK)))                                                      \
	X(readlink, L(readlink(B, (char[64]){0}, 64)))                                             \
	X(readlinkat, L(readlinkat(AT_FDCWD, B, (char[64]){0}, 64)))                               \
	X(__readlink_chk, L(__readlink_chk(B, (char[64]){0}, 64, 64)))                             \
	X(link_old, L(link(B, nx)))                                                                \
	X(link_new, L(link(nx, B)))                                                                \
	X(linkat, L(linkat(AT_FDCWD, B, AT_FDCWD, nx, 0)))                                         \
	X(symlink_target, L(symlink(B, nx)))                                                       \
	X(symlink_name, L(symlink(nx, B)))                                                         \
	X(symlinkat, L(symlinkat(nx, AT_FDCWD, B)))                                                \
	X(realpath, P(realpath(B, (char[PATH_MAX]){0})))                                           \
	X(canonicalize_file_name, P(canonicalize_file_name(B)))                                    \
	X(mkdir, L(mkdir(B, 0755)))                                                                \
	X(mkdirat, L(mkdirat(AT_FDCWD, B, 0755)))                                                  \
	X(rmdir, L(rmdir(B)))                                                                      \
	X(unlink, L(unlink(B)))                                                                    \
	X(unlinkat, L(unlinkat(AT_FDCWD, B, 0)))                                                   \
	X(remove, L(remove(B)))                                                                    \
	X(rename_old, L(rename(B, nx)))                                                            \
	X(rename_new, L(rename(nx, B)))                                                            \
	X(renameat, L(renameat(AT_FDCWD, B, AT_FDCWD, nx)))                                        \
	X(renameat2, L(renameat2(AT_FDCWD, nx, AT_FDCWD, B, 0)))                                   \
	X(mknod, L(mknod(B, S_IFIFO | 0644, 0)))                                                   \
	X(mknodat, L(mknodat(AT_FDCWD, B, S_IFIFO | 0644, 0)))                                     \
	X(mkfifo, L(mkfifo(B, 0644)))                                                              \
	X(__xmknod, L(__xmknod(0, B, S_IFIFO | 0644, &(dev_t){0})))                                \
	X(chmod, L(chmod(B, 0644)))                                                                \
	X(fchmodat, L(fchmodat(AT_FDCWD, B, 0644, 0)))                                             \
	X(chown, L(chown(B, (uid_t)-1, (gid_t)-1)))                                                \
	X(lchown, L(lchown(B, (uid_t)-1, (gid_t)-1)))                                              \
	X(fchownat, L(fchownat(AT_FDCWD, B, (uid_t)-1, (gid_t)-1, 0)))                             \
	X(truncate, L(truncate(B, 0)))                                                             \
	X(utime, L(utime(B, NULL)))                                                                \
	X(utimes, L(utimes(B, NULL)))                                                              \
	X(lutimes, L(lutimes(B, NULL)))                                                            \
	X(futimesat, L(futimesat(AT_FDCWD, B, NULL)))                                              \
	X(utimensat, L(utimensat(AT_FDCWD, B, NULL, 0)))                                           \
	X(getxattr, L(getxattr(B, "user.x", NULL, 0)))                                             \
	X(lgetxattr, L(lgetxattr(B, "user.x", NULL, 0)))                                           \
	X(listxattr, L(listxattr(B, NULL, 0)))                                                     \
	X(setxattr, L(setxattr(B, "user.x", "v", 1, 0)))                                           \
	X(removexattr, L(removexattr(B, "user.x")))                                                \
	X(opendir, P(opendir(B)))                                                                  \
	X(scandir, L(scandir(B, &(struct dirent **){0}, nosel, NULL)))                             \
	X(scandirat, L(scandirat(AT_FDCWD, B, &(struct dirent **){0}, nosel, NULL)))               \
	X(nftw, L(nftw(B, nowalk, 4, 0)))                                                          \
	X(ftw, L(ftw(B, nowalk1, 4)))                                                              \
	X(chdir, L(chdir(B)))                                                                      \
	X(chroot, L(chroot(B)))                                                                    \
	X(mount_target, L(mount("none", B, "tmpfs", 0, NULL)))                                     \
	X(umount, L(umount(B)))                                                                    \
	X(umount2, L(umount2(B, 0)))                                                               \
	X(acct, L(acct(B)))                                                                        \
	X(swapon, L(swapon(B, 0)))                                                                 \
	X(swapoff, L(swapoff(B)))                                                                  \
	X(quotactl, L(quotactl(QCMD(Q_GETQUOTA, USRQUOTA), B, 0, (caddr_t)&(struct dqblk){0})))    \
	X(quotactl_file, L(quotactl(QCMD(Q_QUOTAON, USRQUOTA), nx, QFMT_VFS_V0, (caddr_t)B)))      \
	X(pivot_root_new, L(pivot_root(B, nx)))                                                    \
	X(pivot_root_old, L(pivot_root(nx, B)))                                                    \
	X(dlopen, P(dlopen(B, RTLD_NOW)))                                                          \
	X(execve, L(execve(B, (char *[]){"x", NULL}, environ)))                                    \
	X(execve_argv, L(execve(nx, (char **)B, environ)))                                         \
	X(execve_envp, L(execve(nx, (char *[]){"x", NULL}, (char **)B)))                           \
	X(execve_argv_true, L(execve("/bin/true", (char **)B, environ)))                          \
	X(execve_envp_true, L(execve("/bin/true", (char *[]){"x", NULL}, (char **)B)))             \
	X(execve_arg_true, L(execve("/bin/true", (char *[]){"x", B, NULL}, environ)))             \
	X(execve_env_true, L(execve("/bin/true", (char *[]){"x", NULL}, (char *[]){"A=1", B, NULL}))) \
	X(execv, L(execv(B, (char *[]){"x", NULL})))                                               \
	X(execvp, L(execvp(B, (char *[]){"x", NULL})))                                             \
	X(execvp_argv_true, L(execvp("true", (char **)B)))                                         \
	X(execl_true, L(execl("/bin/true", "x", B, (char *)NULL)))                                 \
	X(execle_true, L(execle("/bin/true", "x", (char *)NULL, (char **)B)))                      \
	X(posix_spawn_argv, spawn_err(posix_spawn(NULL, "/bin/true", NULL, NULL, (char **)B, environ))) \
	X(posix_spawn_envp, spawn_err(posix_spawn(NULL, "/bin/true", NULL, NULL, (char *[]){"x", NULL}, (char **)B))) \
	X(posix_spawnp, spawn_err(posix_spawnp(NULL, B, NULL, NULL, (char *[]){"x", NULL}, environ)))                                               \
	X(execveat, L(execveat(AT_FDCWD, B, (char *[]){"x", NULL}, environ, 0)))                   \
	X(posix_spawn, spawn_err(posix_spawn(NULL, B, NULL, NULL, (char *[]){"x", NULL}, environ)))  \
	X(shm_open, L(shm_open(B, O_RDONLY, 0)))                                                   \
	X(shm_unlink, L(shm_unlink(B)))                                                            \
	X(bind, L(bind(socket(AF_UNIX, SOCK_STREAM, 0), (struct sockaddr *)B,                      \
		       sizeof(struct sockaddr_un))))                                                \
	X(connect, L(connect(socket(AF_UNIX, SOCK_STREAM, 0), (struct sockaddr *)B,                \
			     sizeof(struct sockaddr_un))))                                          \
	X(sendto, L(sendto(socket(AF_UNIX, SOCK_DGRAM, 0), "m", 1, 0, (struct sockaddr *)B,        \
			   sizeof(struct sockaddr_un))))                                            \
	X(sendmsg, L(sendmsg(socket(AF_UNIX, SOCK_DGRAM, 0), (struct msghdr *)B, 0)))              \
	X(fopen64, P(fopen64(B, "r")))                                                             \
	X(freopen64, P(freopen64(B, "r", stdin)))                                                  \
	X(truncate64, L(truncate64(B, 0)))                                                         \
	X(statfs64, L(statfs64(B, &(struct statfs64){0})))                                         \
	X(statvfs64, L(statvfs64(B, &(struct statvfs64){0})))                                      \
	X(llistxattr, L(llistxattr(B, NULL, 0)))                                                   \
	X(lsetxattr, L(lsetxattr(B, "user.x", "v", 1, 0)))                                         \
	X(lremovexattr, L(lremovexattr(B, "user.x")))                                              \
	X(name_to_handle_at, L(name_to_handle_at(AT_FDCWD, B, handle(), &(int){0}, 0)))           \
	X(fanotify_mark, L(fanotify_mark(-1, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, B)))                \
	X(mount_source, L(mount(B, nx, "tmpfs", 0, NULL)))                                         \
	X(mount_fstype, L(mount("none", nx, B, 0, NULL)))                                          \
	X(open_tree, L(open_tree(AT_FDCWD, B, 0)))                                                 \
	X(move_mount_from, L(move_mount(AT_FDCWD, B, AT_FDCWD, nx, 0)))                            \
	X(move_mount_to, L(move_mount(AT_FDCWD, nx, AT_FDCWD, B, 0)))                              \
	X(fspick, L(fspick(AT_FDCWD, B, 0)))                                                       \
	X(mount_setattr, L(mount_setattr(AT_FDCWD, B, 0, &(struct mount_attr){0}, sizeof(struct mount_attr)))) \
	X(fsconfig_key, L(fsconfig(fsopen("tmpfs", 0), FSCONFIG_SET_STRING, B, "x", 0)))           \
	X(fsconfig_value, L(fsconfig(fsopen("tmpfs", 0), FSCONFIG_SET_STRING, "source", B, 0)))    \
	X(fsconfig_path, L(fsconfig(fsopen("tmpfs", 0), FSCONFIG_SET_PATH, "source", B, AT_FDCWD))) \
	X(glob, L(glob(B, 0, NULL, &(glob_t){0})))                                                 \
	X(fts_open, P(fts_open((char *const[]){B, NULL}, FTS_PHYSICAL, NULL)))                    \
	X(fts_open_vec, P(fts_open((char *const *)B, FTS_PHYSICAL, NULL)))                         \
	X(system, L(system(B)))                                                                    \
	X(popen, P(popen(B, "r")))                                                                 \
	X(popen_mode, P(popen("true", B)))                                                         \
	X(dlmopen, P(dlmopen(LM_ID_BASE, B, RTLD_NOW)))                                            \
	X(catopen, L((long)catopen(B, 0)))                                                         \
	X(setmntent, P(setmntent(B, "r")))                                                         \
	X(sem_open, P(sem_open(B, 0) != SEM_FAILED))                                               \
	X(sem_unlink, L(sem_unlink(B)))                                                            \
	X(ftok, L(ftok(B, 1)))                                                                     \
	X(mkstemp, L(mkstemp(B)))                                                                  \
	X(mkdtemp, P(mkdtemp(B)))                                                                  \
	X(iconv_open, L((long)iconv_open(B, "UTF-8")))                                             \
	X(getpwnam, P(getpwnam(B)))                                                                \
	X(getaddrinfo, L(-getaddrinfo(B, NULL, NULL, &(struct addrinfo *){0})))                    \
	X(fa_addopen, L(-posix_spawn_file_actions_addopen(&(posix_spawn_file_actions_t){0}, 3, B, O_RDONLY, 0))) \
	X(fa_addchdir, L(-posix_spawn_file_actions_addchdir_np(&(posix_spawn_file_actions_t){0}, B))) \
	X(sendmmsg, L(sendmmsg(socket(AF_UNIX, SOCK_DGRAM, 0), (struct mmsghdr *)B, 1, 0)))       \
	X(SYS_openat2_path, L(syscall(SYS_openat2, AT_FDCWD, B, &(struct open_how){.flags = O_RDONLY}, sizeof(struct open_how)))) \
	X(SYS_openat2_how, L(syscall(SYS_openat2, AT_FDCWD, nx, B, sizeof(struct open_how))))    \
	X(SYS_open, L(syscall(SYS_open, B, O_RDONLY)))                                             \
	X(SYS_creat, L(syscall(SYS_creat, B, 0644)))                                               \
	X(SYS_stat, L(syscall(SYS_stat, B, &(struct stat){0})))                                    \
	X(SYS_statx, L(syscall(SYS_statx, AT_FDCWD, B, 0, STATX_BASIC_STATS, &(struct statx){0}))) \
	X(SYS_access, L(syscall(SYS_access, B, F_OK)))                                             \
	X(SYS_faccessat2, L(syscall(SYS_faccessat2, AT_FDCWD, B, F_OK, 0)))                        \
	X(SYS_readlink, L(syscall(SYS_readlink, B, (char[64]){0}, 64)))                            \
	X(SYS_rename, L(syscall(SYS_rename, B, nx)))                                               \
	X(SYS_link, L(syscall(SYS_link, nx, B)))                                                   \
	X(SYS_symlink, L(syscall(SYS_symlink, nx, B)))                                             \
	X(SYS_mkdir, L(syscall(SYS_mkdir, B, 0755)))                                               \
	X(SYS_chmod, L(syscall(SYS_chmod, B, 0644)))                                               \
	X(SYS_fchmodat2, L(syscall(452, AT_FDCWD, B, 0644, 0)))                                    \
	X(SYS_truncate, L(syscall(SYS_truncate, B, 0)))                                            \
	X(SYS_utimensat, L(syscall(SYS_utimensat, AT_FDCWD, B, NULL, 0)))                          \
	X(SYS_chdir, L(syscall(SYS_chdir, B)))                                                     \
	X(SYS_chroot, L(syscall(SYS_chroot, B)))                                                   \
	X(SYS_mount, L(syscall(SYS_mount, "none", B, "tmpfs", 0, NULL)))                           \
	X(SYS_umount2, L(syscall(SYS_umount2, B, 0)))                                              \
	X(SYS_acct, L(syscall(SYS_acct, B)))                                                       \
	X(SYS_swapon, L(syscall(SYS_swapon, B, 0)))                                                \
	X(SYS_swapoff, L(syscall(SYS_swapoff, B)))                                                 \
	X(SYS_quotactl, L(syscall(SYS_quotactl, QCMD(Q_GETQUOTA, USRQUOTA), B, 0, &(struct dqblk){0}))) \
	X(SYS_pivot_root, L(syscall(SYS_pivot_root, B, nx)))                                       \
	X(SYS_uselib, L(syscall(SYS_uselib, B)))                                                   \
	X(SYS_statfs, L(syscall(SYS_statfs, B, &(struct statfs){0})))                              \
	X(SYS_getxattr, L(syscall(SYS_getxattr, B, "user.x", NULL, 0)))                            \
	X(SYS_setxattr, L(syscall(SYS_setxattr, B, "user.x", "v", 1, 0)))                          \
	X(SYS_inotify_add_watch, L(syscall(SYS_inotify_add_watch, inotify_init1(0), B, IN_ALL_EVENTS))) \
	X(SYS_bind, L(syscall(SYS_bind, socket(AF_UNIX, SOCK_STREAM, 0), B, sizeof(struct sockaddr_un)))) \
	X(SYS_connect, L(syscall(SYS_connect, socket(AF_UNIX, SOCK_STREAM, 0), B, sizeof(struct sockaddr_un)))) \
	X(SYS_sendmsg, L(syscall(SYS_sendmsg, socket(AF_UNIX, SOCK_DGRAM, 0), B, 0)))            \
	X(SYS_sendmmsg, L(syscall(SYS_sendmmsg, socket(AF_UNIX, SOCK_DGRAM, 0), B, 1, 0)))       \
	X(SYS_execveat, L(syscall(SYS_execveat, AT_FDCWD, B, (char *[]){"x", NULL}, environ, 0)))  \
	X(SYS_execve_envp, L(syscall(SYS_execve, "/bin/true", (char *[]){"x", NULL}, B)))          \
	X(SYS_openat, L(syscall(SYS_openat, AT_FDCWD, B, O_RDONLY)))                               \
	X(SYS_newfstatat, L(syscall(SYS_newfstatat, AT_FDCWD, B, &(struct stat){0}, 0)))           \
	X(SYS_execve, L(syscall(SYS_execve, B, (char *[]){"x", NULL}, environ)))                   \
	X(SYS_unlinkat, L(syscall(SYS_unlinkat, AT_FDCWD, B, 0)))                                  \
	X(SYS_renameat2, L(syscall(SYS_renameat2, AT_FDCWD, nx, AT_FDCWD, B, 0)))

#define FN(name, e)                                                                                \
	static long f_##name(char *B)                                                              \
	{                                                                                          \
		(void)B;                                                                           \
		return e;                                                                          \
	}
CASES(FN)
#undef FN

static void run_all(const char *ptr, char *B)
{
#define RUN(name, e) one(#name, ptr, B, f_##name);
	CASES(RUN)
#undef RUN
}

static char *bad_ptr(const char *k)
{
	long pg = sysconf(_SC_PAGESIZE);
	if (!strcmp(k, "one"))
		return (char *)1;
	if (!strcmp(k, "m1"))
		return (char *)-1;
	if (!strcmp(k, "kernel"))
		return (char *)0xffff800000000000ul;
	if (!strcmp(k, "noncanon"))
		return (char *)0x0000800000000000ul;
	if (!strcmp(k, "unmapped") || !strcmp(k, "protnone") || !strcmp(k, "runoff")) {
		char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			perror("mmap");
			exit(2);
		}
		if (!strcmp(k, "unmapped")) {
			munmap(m, 2 * pg);
			return m + 16;
		}
		if (!strcmp(k, "protnone")) {
			mprotect(m, 2 * pg, PROT_NONE);
			return m + 16;
		}
		memset(m, 'a', pg);
		m[0] = '/';
		mprotect(m + pg, pg, PROT_NONE);
		return m + pg - 64;
	}
	fprintf(stderr, "badptr: unknown PTR %s\n", k);
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: badptr DIR [list | PTR...]\n");
		return 2;
	}
	snprintf(nx, sizeof(nx), "%s/nx/x", argv[1]);
	snprintf(nx2, sizeof(nx2), "%s/nx/y", argv[1]);
	if (argc > 2 && !strcmp(argv[2], "list")) {
		only_list = 1;
		run_all("", NULL);
		return 0;
	}
	static const char *const dflt[] = {"one", "m1", "kernel", "noncanon", "unmapped", "protnone"};
	if (argc > 2) {
		for (int i = 2; i < argc; i++)
			run_all(argv[i], bad_ptr(argv[i]));
	} else {
		for (size_t i = 0; i < sizeof(dflt) / sizeof(dflt[0]); i++)
			run_all(dflt[i], bad_ptr(dflt[i]));
	}
	return 0;
}
