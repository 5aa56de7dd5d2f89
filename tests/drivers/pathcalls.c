/* tests/drivers/pathcalls.c - every x86-64 system call that takes a path name (strace's %file
 * class, and the newer ones), by syscall() and by its libc function: the table the shim's
 * coverage is checked against (integration/pathcalls.sh). */
/*
 * usage: pathcalls list              "NR NAME" of each table entry, then "NR NAME -" of each
 *                                    exclusion (a %file call that looks no name up)
 *        pathcalls libc-unlisted     the table's calls that glibc exports under their own name
 *                                    without the table naming that libc function (one a line)
 *        pathcalls cases             "LABEL KIND" of each case
 *        pathcalls probe             for strace -n -e trace=%file: every number 0..511 called
 *                                    with a string in each argument, none run (seccomp: ENOSYS)
 *        pathcalls DIR plain|seccomp run each case, print "LABEL RESULT"
 *        pathcalls acct FILE sys|libc   (root) do_acct: accounting into FILE
 *        pathcalls pivot NEW sys|libc   (root) do_pivot: the root moved to a tmpfs on NEW
 *
 * A case is one call with one of its looked-up names (the table's P argument) set to
 * DIR/hid/nodir/LABEL, the other names to DIR/vis (an existing file), in a child of its own:
 * the parent directory is missing, so the call fails at that name (nothing is made, changed,
 * mounted or run), or earlier on its flags or privileges.  RESULT is "ok", the errno's name,
 * "FORWARDED", or "SIG<name>".  In seccomp mode the child first installs a filter that
 * fails this system call with EHWPOISON, unrun, when the P argument is the very pointer
 * the program passed: RESULT FORWARDED says the call reached the kernel with the program's
 * name (the shim forwarded it, judged or not); anything else, that something refused it
 * before (a refusal's probe on the shim's own stand-in name is let run and fails at it).
 * So, with DIR/hid hidden by a fence, FORWARDED is a call the shim does not judge; traced
 * without a fence, every case is FORWARDED and recorded with its KIND.
 * Labels are sys-NAME-I and libc-FUNCTION-I, I the P argument's index (0-based).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/mount.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/quota.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__)
/* argument tokens (any other value is passed as it is) */
enum {
	P = -1000001, /* the name under test */
	V,	      /* a visible existing file */
	AT,	      /* AT_FDCWD */
	HOW,	      /* a zeroed struct open_how (size 24 follows) */
	VEC,	      /* an empty argument vector */
	BUF,	      /* zeroed scratch memory (4 KiB) */
	NAME,	      /* the string "user.sandtrace" (an xattr name; fsconfig's key) */
	MATTR,	      /* a struct mount_attr setting MOUNT_ATTR_RDONLY (size 32 follows) */
};
#define QC(sub) QCMD(sub, USRQUOTA)
struct pc {
	const char *name; /* the system call's name, as strace spells it */
	long nr;
	const char *libc; /* the libc function of the same arguments, or NULL */
	char kind;	  /* the P name's access kind in the report */
	long a[6];
	/* the refusal is not probed (the name may be ignored by the kernel:
	 * quotactl's Q_QUOTAON file), so it gives ENOENT where the untraced call
	 * fails on the other name first */
	int noprobe;
};
static const struct pc tab[] = {
    {"open", SYS_open, "open", 'R', {P, O_RDONLY}},
    {"stat", SYS_stat, "stat", 'Q', {P, BUF}},
    {"lstat", SYS_lstat, "lstat", 'Q', {P, BUF}},
    {"access", SYS_access, "access", 'Q', {P, F_OK}},
    {"execve", SYS_execve, "execve", 'X', {P, VEC, VEC}},
    {"truncate", SYS_truncate, "truncate", 'W', {P, 0}},
    {"chdir", SYS_chdir, "chdir", 'Q', {P}},
    {"rename", SYS_rename, "rename", 'W', {P, V}},
    {"rename", SYS_rename, "rename", 'W', {V, P}},
    {"mkdir", SYS_mkdir, "mkdir", 'W', {P, 0700}},
    {"rmdir", SYS_rmdir, "rmdir", 'W', {P}},
    {"creat", SYS_creat, "creat", 'W', {P, 0600}},
    {"link", SYS_link, "link", 'Q', {P, V}},
    {"link", SYS_link, "link", 'W', {V, P}},
    {"unlink", SYS_unlink, "unlink", 'W', {P}},
    /* the target (argument 0) is a string kept in the link, not looked up */
    {"symlink", SYS_symlink, "symlink", 'W', {V, P}},
    {"readlink", SYS_readlink, "readlink", 'Q', {P, BUF, 64}},
    {"chmod", SYS_chmod, "chmod", 'W', {P, 0600}},
    {"chown", SYS_chown, "chown", 'W', {P, -1, -1}},
    {"lchown", SYS_lchown, "lchown", 'W', {P, -1, -1}},
    {"utime", SYS_utime, "utime", 'W', {P, 0}},
    {"mknod", SYS_mknod, "mknod", 'W', {P, S_IFIFO | 0600, 0}},
    /* glibc's uselib is a compat symbol: no program links it */
    {"uselib", SYS_uselib, NULL, 'R', {P}},
    {"statfs", SYS_statfs, "statfs", 'Q', {P, BUF}},
    {"pivot_root", SYS_pivot_root, "pivot_root", 'Q', {P, V}},
    {"pivot_root", SYS_pivot_root, "pivot_root", 'W', {V, P}},
    {"chroot", SYS_chroot, "chroot", 'Q', {P}},
    {"acct", SYS_acct, "acct", 'W', {P}},
    /* a source is looked up for a bind or a move (or when absolute) */
    {"mount", SYS_mount, "mount", 'R', {P, V, 0, MS_BIND, 0}},
    {"mount", SYS_mount, "mount", 'W', {V, P, 0, MS_BIND, 0}},
    {"umount2", SYS_umount2, "umount2", 'W', {P, 0}},
    {"swapon", SYS_swapon, "swapon", 'W', {P, 0}},
    {"swapoff", SYS_swapoff, "swapoff", 'W', {P}},
    {"quotactl", SYS_quotactl, "quotactl", 'Q', {QC(Q_GETQUOTA), P, 0, BUF}},
    {"quotactl", SYS_quotactl, "quotactl", 'W', {QC(Q_QUOTAON), P, QFMT_VFS_V0, V}},
    /* Q_QUOTAON's quota file */
    {"quotactl", SYS_quotactl, "quotactl", 'W', {QC(Q_QUOTAON), V, QFMT_VFS_V0, P}, 1},
    {"setxattr", SYS_setxattr, "setxattr", 'W', {P, NAME, BUF, 1, 0}},
    {"lsetxattr", SYS_lsetxattr, "lsetxattr", 'W', {P, NAME, BUF, 1, 0}},
    {"getxattr", SYS_getxattr, "getxattr", 'Q', {P, NAME, BUF, 64}},
    {"lgetxattr", SYS_lgetxattr, "lgetxattr", 'Q', {P, NAME, BUF, 64}},
    {"listxattr", SYS_listxattr, "listxattr", 'Q', {P, BUF, 64}},
    {"llistxattr", SYS_llistxattr, "llistxattr", 'Q', {P, BUF, 64}},
    {"removexattr", SYS_removexattr, "removexattr", 'W', {P, NAME}},
    {"lremovexattr", SYS_lremovexattr, "lremovexattr", 'W', {P, NAME}},
    {"utimes", SYS_utimes, "utimes", 'W', {P, 0}},
    {"inotify_add_watch", SYS_inotify_add_watch, "inotify_add_watch", 'Q', {-1, P, IN_ALL_EVENTS}},
    {"openat", SYS_openat, "openat", 'R', {AT, P, O_RDONLY}},
    {"mkdirat", SYS_mkdirat, "mkdirat", 'W', {AT, P, 0700}},
    {"mknodat", SYS_mknodat, "mknodat", 'W', {AT, P, S_IFIFO | 0600, 0}},
    {"fchownat", SYS_fchownat, "fchownat", 'W', {AT, P, -1, -1, 0}},
    {"futimesat", SYS_futimesat, "futimesat", 'W', {AT, P, 0}},
    {"newfstatat", SYS_newfstatat, "fstatat", 'Q', {AT, P, BUF, 0}},
    {"unlinkat", SYS_unlinkat, "unlinkat", 'W', {AT, P, 0}},
    {"renameat", SYS_renameat, "renameat", 'W', {AT, P, AT, V}},
    {"renameat", SYS_renameat, "renameat", 'W', {AT, V, AT, P}},
    {"linkat", SYS_linkat, "linkat", 'Q', {AT, P, AT, V, 0}},
    {"linkat", SYS_linkat, "linkat", 'W', {AT, V, AT, P, 0}},
    {"symlinkat", SYS_symlinkat, "symlinkat", 'W', {V, AT, P}},
    {"readlinkat", SYS_readlinkat, "readlinkat", 'Q', {AT, P, BUF, 64}},
    {"fchmodat", SYS_fchmodat, "fchmodat", 'W', {AT, P, 0600, 0}},
    {"faccessat", SYS_faccessat, "faccessat", 'Q', {AT, P, F_OK, 0}},
    {"utimensat", SYS_utimensat, "utimensat", 'W', {AT, P, 0, 0}},
    {"fanotify_mark", SYS_fanotify_mark, "fanotify_mark", 'Q', {-1, FAN_MARK_ADD, FAN_OPEN, AT, P}},
    {"name_to_handle_at", SYS_name_to_handle_at, "name_to_handle_at", 'Q', {AT, P, BUF, BUF, 0}},
    {"renameat2", SYS_renameat2, "renameat2", 'W', {AT, P, AT, V, 0}},
    {"renameat2", SYS_renameat2, "renameat2", 'W', {AT, V, AT, P, 0}},
    {"execveat", SYS_execveat, "execveat", 'X', {AT, P, VEC, VEC, 0}},
    {"statx", SYS_statx, "statx", 'Q', {AT, P, 0, 0x7ff, BUF}},
    {"open_tree", 428, "open_tree", 'Q', {AT, P, 0}},
    {"move_mount", 429, "move_mount", 'R', {AT, P, AT, V, 0}},
    {"move_mount", 429, "move_mount", 'W', {AT, V, AT, P, 0}},
    {"fsconfig", 431, "fsconfig", 'R', {-1, 3 /* FSCONFIG_SET_PATH */, NAME, P, AT}},
    {"fspick", 433, "fspick", 'W', {AT, P, 0}},
    {"openat2", 437, NULL, 'R', {AT, P, HOW, 24}},
    {"faccessat2", 439, "faccessat", 'Q', {AT, P, F_OK, 0}},
    {"mount_setattr", 442, "mount_setattr", 'W', {AT, P, 0, MATTR, 32}},
    /* newer than glibc 2.36 (no libc function) and than strace 6.1 */
    {"fchmodat2", 452, NULL, 'W', {AT, P, 0600, 0}},
    {"setxattrat", 463, NULL, 'W', {AT, P, 0, NAME, BUF, 16}},
    {"getxattrat", 464, NULL, 'Q', {AT, P, 0, NAME, BUF, 16}},
    {"listxattrat", 465, NULL, 'Q', {AT, P, 0, BUF, 64}},
    {"removexattrat", 466, NULL, 'W', {AT, P, 0, NAME}},
    {"open_tree_attr", 467, NULL, 'Q', {AT, P, 0, 0, 0}},
    {"file_getattr", 468, NULL, 'Q', {AT, P, BUF, 32, 0}},
    {"file_setattr", 469, NULL, 'W', {AT, P, BUF, 32, 0}},
};
/* strace's %file calls that look no name up: why each is left out */
static const struct {
	const char *name;
	long nr;
	const char *why;
} excluded[] = {
    {"getcwd", SYS_getcwd, "writes the cwd's name out, takes none"},
};
#define N(a) (sizeof(a) / sizeof((a)[0]))

static char pbuf[PATH_MAX], vbuf[PATH_MAX];
static char scratch[4096] __attribute__((aligned(16)));
static char *const empty_vec[] = {NULL};
static struct {
	uint64_t flags, mode, resolve;
} how;
static struct mount_attr mattr = {.attr_set = MOUNT_ATTR_RDONLY};

static long arg(long t)
{
	switch (t) {
	case P:
		return (long)pbuf;
	case V:
		return (long)vbuf;
	case AT:
		return AT_FDCWD;
	case HOW:
		return (long)&how;
	case VEC:
		return (long)empty_vec;
	case BUF:
		return (long)scratch;
	case NAME:
		return (long)"user.sandtrace";
	case MATTR:
		return (long)&mattr;
	default:
		return t;
	}
}

static int p_index(const struct pc *c)
{
	for (int i = 0; i < 6; i++)
		if (c->a[i] == P)
			return i;
	return -1;
}

/* the case's label: sys-NAME-I or libc-FUNCTION-I, then .2, .3 for a second
 * and third case of the same name and index (quotactl's commands) */
static void label_of(char *out, size_t len, const struct pc *c, bool libc)
{
	const char *n = libc ? c->libc : c->name;
	int pi = p_index(c), k = 1;
	for (const struct pc *o = tab; o < c; o++)
		k += (libc ? o->libc && !strcmp(o->libc, n) : !strcmp(o->name, n)) &&
		     p_index(o) == pi;
	int w = snprintf(out, len, "%s-%s-%d", libc ? "libc" : "sys", n, pi);
	if (k > 1)
		snprintf(out + w, len - (size_t)w, ".%d", k);
}

/*
 * Fail, unrun, with EHWPOISON, every system call one of whose arguments is
 * ptr: the call under test, and the call libc makes for it, which may be
 * another (glibc's open and renameat2 make openat and renameat).  The shim
 * looks names up in copies of its own.
 */
static int forbid(const void *ptr)
{
	uint64_t v = (uint64_t)(uintptr_t)ptr;
	struct sock_filter f[3 + 6 * 4 + 2], *q = f;
	*q++ = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					    offsetof(struct seccomp_data, arch));
	*q++ = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	*q++ = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	for (int i = 0; i < 6; i++) {
		/* low half equal: test the high half, else the next argument */
		*q++ = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						    offsetof(struct seccomp_data, args) + 8 * i);
		*q++ = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)v, 0, 2);
		*q++ = (struct sock_filter)BPF_STMT(
		    BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args) + 8 * i + 4);
		/* equal: to the last statement (EHWPOISON) */
		*q++ = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(v >> 32),
						    (uint8_t)(4 * (5 - i) + 1), 0);
	}
	*q++ = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	*q++ = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EHWPOISON);
	struct sock_fprog p = {(unsigned short)(q - f), f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p);
}

typedef long (*fn6)(long, long, long, long, long, long);

/* one case in a child; prints "LABEL RESULT" */
static void run_case(const char *dir, const struct pc *c, bool libc, bool filter)
{
	char label[128];
	label_of(label, sizeof(label), c, libc);
	snprintf(pbuf, sizeof(pbuf), "%s/hid/nodir/%s", dir, label);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		long a[6];
		for (int i = 0; i < 6; i++)
			a[i] = arg(c->a[i]);
		fn6 f = libc ? (fn6)dlsym(RTLD_DEFAULT, c->libc) : NULL;
		if (libc && !f) {
			printf("%s NOSYMBOL\n", label);
			_exit(0);
		}
		if (filter && forbid(pbuf) != 0) {
			printf("%s NOFILTER\n", label);
			_exit(0);
		}
		errno = 0;
		/* every libc function here returns an int, or an ssize_t whose
		 * failure is -1: its low half taken as an int */
		long r = libc ? (int)f(a[0], a[1], a[2], a[3], a[4], a[5])
			      : syscall(c->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		int e = errno;
		if (r >= 0)
			printf("%s ok\n", label);
		else if (e == EHWPOISON)
			printf("%s FORWARDED\n", label);
		else
			printf("%s %s\n", label, strerrorname_np(e) ? strerrorname_np(e) : "?");
		fflush(stdout);
		_exit(0);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		printf("%s NOCHILD\n", label);
	else if (WIFSIGNALED(st))
		printf("%s SIG%s\n", label, sigabbrev_np(WTERMSIG(st)));
}

/* the probe strace watches: nothing runs but exit_group */
static int probe(void)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	};
	struct sock_fprog p = {N(f), f};
	static const char *s[6] = {"/st-a0", "/st-a1", "/st-a2", "/st-a3", "/st-a4", "/st-a5"};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p) != 0)
		return 1;
	/* not exit_group; nor 335 and 336 (uretprobe, uprobe: SIGILL unless
	 * called from a probe's trampoline, before seccomp is asked) */
	for (long nr = 0; nr < 512; nr++)
		if (nr != SYS_exit_group && nr != 335 && nr != 336)
			syscall(nr, s[0], s[1], s[2], s[3], s[4], s[5]);
	syscall(SYS_exit_group, 0);
	return 1;
}

static void step(const char *what, long r)
{
	printf("%s %s\n", what, r >= 0 ? "ok" : strerrorname_np(errno));
	fflush(stdout);
}

int pivot_root(const char *, const char *); /* glibc exports it, no header declares it */

/* accounting into file (by syscall() or libc's acct; root, in a pid
 * namespace of its own: accounting is the namespace's) while a child exits,
 * then off; says whether the file was written */
static int do_acct(const char *file, bool libc)
{
	step("acct", libc ? acct(file) : syscall(SYS_acct, file));
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	step("acct-off", libc ? acct(NULL) : syscall(SYS_acct, NULL));
	struct stat st;
	printf("written %s\n", stat(file, &st) != 0 ? strerrorname_np(errno)
			       : st.st_size > 0	    ? "yes"
						    : "no");
	return 0;
}

/* in a mount namespace of its own (root): a tmpfs on new, new/old made,
 * the root moved there (by syscall() or libc's pivot_root), the old one
 * detached; each step's result */
static int do_pivot(const char *new, bool libc)
{
	char old[PATH_MAX];
	snprintf(old, sizeof(old), "%s/old", new);
	/* the namespace's set-up, by libc's own mount (a preloaded one would
	 * judge "/": not writable under a fence) */
	void *libc_h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	int (*libc_mount)(const char *, const char *, const char *, unsigned long, const void *) =
	    libc_h ? dlsym(libc_h, "mount") : NULL;
	step("unshare", unshare(CLONE_NEWNS));
	step("private", libc_mount ? libc_mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)
				   : (errno = ENOSYS, -1));
	step("mount", mount("tmpfs", new, "tmpfs", 0, NULL));
	step("mkdir", mkdir(old, 0700));
	step("pivot_root", libc ? pivot_root(new, old) : syscall(SYS_pivot_root, new, old));
	step("chdir", chdir("/"));
	struct stat st;
	step("stat-old", stat("/old", &st));
	step("umount", umount2("/old", MNT_DETACH));
	step("stat-old-etc", stat("/old/etc", &st));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (size_t i = 0; i < N(tab); i++)
			if (i == 0 || strcmp(tab[i].name, tab[i - 1].name))
				printf("%ld %s\n", tab[i].nr, tab[i].name);
		for (size_t i = 0; i < N(excluded); i++)
			printf("%ld %s - %s\n", excluded[i].nr, excluded[i].name, excluded[i].why);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "libc-unlisted")) {
		void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
		for (size_t i = 0; libc && i < N(tab); i++) {
			bool named = false;
			for (size_t j = 0; j < N(tab); j++)
				named |= tab[j].libc && !strcmp(tab[j].libc, tab[i].name);
			if (!named && dlsym(libc, tab[i].name))
				printf("%s\n", tab[i].name);
		}
		return libc ? 0 : 1;
	}
	if (argc == 2 && !strcmp(argv[1], "cases")) {
		char l[128];
		for (size_t i = 0; i < N(tab); i++) {
			label_of(l, sizeof(l), &tab[i], false);
			printf("%s %c\n", l, tab[i].kind);
			if (tab[i].libc) {
				label_of(l, sizeof(l), &tab[i], true);
				printf("%s %c\n", l, tab[i].kind);
			}
		}
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "noprobe")) {
		char l[128];
		for (size_t i = 0; i < N(tab); i++)
			if (tab[i].noprobe) {
				label_of(l, sizeof(l), &tab[i], false);
				printf("%s\n", l);
				if (tab[i].libc) {
					label_of(l, sizeof(l), &tab[i], true);
					printf("%s\n", l);
				}
			}
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "probe"))
		return probe();
	if (argc == 4 && !strcmp(argv[1], "acct"))
		return do_acct(argv[2], !strcmp(argv[3], "libc"));
	if (argc == 4 && !strcmp(argv[1], "pivot"))
		return do_pivot(argv[2], !strcmp(argv[3], "libc"));
	if (argc != 3 || (strcmp(argv[2], "plain") && strcmp(argv[2], "seccomp"))) {
		fprintf(stderr,
			"usage: pathcalls list|libc-unlisted|cases|noprobe|probe|DIR plain|seccomp|"
			"acct FILE sys|libc|pivot NEW sys|libc\n");
		return 2;
	}
	bool filter = !strcmp(argv[2], "seccomp");
	snprintf(vbuf, sizeof(vbuf), "%s/vis", argv[1]);
	for (size_t i = 0; i < N(tab); i++) {
		run_case(argv[1], &tab[i], false, filter);
		if (tab[i].libc)
			run_case(argv[1], &tab[i], true, filter);
	}
	return 0;
}
#else
int main(void)
{
	puts("skip: the table is x86-64's");
	return 77;
}
#endif
