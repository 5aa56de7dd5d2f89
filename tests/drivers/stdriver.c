/* tests/drivers/stdriver.c - perform one file-system call named on argv; print "ok" or the errno name. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <semaphore.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <linux/fs.h> /* after sys/mount.h: FS_IOC_* */
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/auxv.h>
#include <syslog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>
#include <wordexp.h>
#include <linux/openat2.h>

#include "../../shim/rawsys.h"
#if !ST_HAVE_RAW_SYSCALL
/* no inline system call here: rawexec-stale-exe goes through libc's syscall() (and the
 * shim's wrapper of it), which tests less but still passes */
#define st__sys6(nr, a1, a2, a3, a4, a5, a6) syscall(nr, a1, a2, a3, a4, a5, a6)
#endif

extern char **environ;

/* usage: stdriver CALL PATH [PATH2]
 *   open-r open-w open-creat open-rdonly-creat open-path-w (O_PATH|O_RDWR|O_CREAT|O_TRUNC) stat lstat access readlink unlink mkdir
 *   rename link symlink chmod truncate exec syscall-openat fork-open sighandler-open
 *   execveat DIR NAME: execveat of NAME relative to a descriptor of DIR (by syscall())
 *   execveat-nofollow DIR NAME: the same with AT_SYMLINK_NOFOLLOW
 *   null-pairs PATH: rename, link (libc), renameat2, linkat (syscall()) with PATH and a
 *     null name, each way round, then symlink, symlinkat, syscall symlinkat of a null
 *     target at PATH: one result a line (EFAULT: errno=14)
 *   openat2-in-root DIR NAME: openat2 of NAME with RESOLVE_IN_ROOT below DIR (O_RDONLY)
 *   vfork-exec PROG DIR: three vfork children exec PROG (the second after chdir DIR), then
 *     one execs a missing program and _exits 3, and one _exits 4 without an exec; "ok" when
 *     every status is as expected, and the parent then stats the relative name
 *     "after-vfork" (must resolve in its own cwd)
 *   threads-stat PATH: four threads stat PATH 100,000 times each (the shim's counters under
 *     threads: a run's summary must count at least 400,000 calls, no more hits than calls)
 *   tsd-stat PATH: a thread stats PATH, and a thread-specific-data destructor of its
 *     stats it again as the thread exits (after the shim's own destructor, which freed
 *     the thread's buffers, has run: the call must not use them)
 *   read-wait PATH TRIGGER: open and close PATH 1,000 times (warm: the thread's memo holds
 *     it, past its trial, so the wrappers' fast path answers), print "warm", wait (up to
 *     20 s) until TRIGGER exists, then open PATH once more and print the result (what
 *     another process changed meanwhile must be seen); give TRIGGER relative: its polling
 *     then stays out of the memo (absolute paths only)
 *   stat-wait PATH TRIGGER: the same with stat
 *   sig-storm MODE TARGET DIR N: a SIGALRM every 30 us (setitimer) while the main
 *     thread, in DIR, loops over relative stats, opens and accesses of the names "a" and
 *     "b" there, and a scandir of DIR whose selector stats each entry (a checked call made
 *     inside a forwarded one), until the handler ran N times (or 60 s passed).  MODE open:
 *     the handler opens TARGET (O_RDONLY); stat: it stats TARGET-I, I the handler call's
 *     number from 0 (a distinct name each time).  Prints "calls=C opened=K" (K: the
 *     handler's opens that succeeded).  SIG_STORM_US=P: a period of P us instead
 *   jump-out FIFO TARGET N: N times, a blocking open of FIFO (made here, no writer) that a
 *     SIGALRM handler siglongjmps out of (the old timeout idiom), then opens TARGET and
 *     prints "opened" or its errno's name
 *   tz-first HOW: libc's tzset first run by HOW (gmtime, gmtime_r, timegm, strftime,
 *     wcsftime, syslog, strptime), then prints "%H %z" of localtime_r(1700000000)
 *   tz-env N [VAR]: a thread calls localtime_r, localtime and newlocale (a locale LOCPATH may hold)
 *     without a pause while N children are spawned, N forked, N shells run by system() and N
 *     by popen(), each reporting its VAR (TZ when not given); prints "differ=K VAR=..." (K:
 *     children whose VAR was not the parent's, or whose system() or popen() failed)
 *   tz-unset N: the same thread with TZ not set, while this one reads TZ N times with getenv
 *     and secure_getenv and runs N/100 children by posix_spawn, by system(), by popen() and
 *     by fork; prints
 *     "differ=K entries=E TZ=..." (K: reads and children that found a TZ; E: environ's TZ
 *     entries at the end)
 *   tz-forkenv N: the same thread with TZ not set, while this one forks N children, each
 *     setting and unsetting a variable; prints "hung=H of I" (H: children that waited for
 *     libc's environment lock for good, the run stopping at the first; I: children made)
 *   tz-show -: the zone libc uses by localtime_r (first), localtime, mktime, ctime, tzset, one
 *     line each, then "TZ=VALUE entries=E" (E: environ's TZ entries)
 *   tz-clearenv N: a thread calls localtime_r, ctime_r and gmtime_r without a pause while
 *     this one sets new variables and clears the environment (clearenv) N times; prints "done"
 *   tz-getenv N [VAR]: the same thread, while this one reads VAR (TZ when not given) N
 *     times with getenv and N with secure_getenv; prints "differ=K VAR=..." (K: reads that
 *     were not the value at the start)
 *   spawn-reap PROG N: a thread reaps every child (waitpid(-1)) while this one posix_spawns
 *     PROG N times; prints "child PID" for each, then "reaped=N"
 *   tz-setenv N [VAR]: the same thread, while this one sets VAR N times (and every other
 *     time takes environ's first entry out and sets it again: the entries shift); prints
 *     "stray ..." for each entry that is not the program's, then "reverted=R entries=1
 *     VAR=last" (R: values set that another thread's call put back)
 *   jump-deep FIFO TARGET N [NAME]: the same, each blocking open made from a frame deeper
 *     than the one before, and TARGET opened from a deeper one still, the handler jumping
 *     by NAME (siglongjmp, longjmp, _longjmp, __longjmp_chk; siglongjmp when not given);
 *     prints "opened", "ENOENT", "EACCES" or the error's text
 *   jump-nest FIFO1 FIFO2 DIR TARGET: a scandir of DIR whose selector blocks in an open of
 *     FIFO1 (a checked call inside a forwarded one); a SIGALRM handler's scandir of DIR
 *     (a call checked aside) blocks the same way in an open of FIFO2, and a SIGUSR1 handler (a timer's, 150 ms in) that
 *     interrupts it opens TARGET and siglongjmps out of all three; then TARGET is opened
 *     again; prints "handler=R main=R", R opened, ENOENT, EACCES or other
 *   vfork-nest FIFO DIR TARGET: a vfork child's scandir of DIR whose selector blocks in
 *     an open of FIFO, interrupted by a SIGALRM handler of the child's that opens TARGET
 *     and prints "opened", "ENOENT", "EACCES" or "other", and _exits
 *   spawn-chdir DIR PROG OUT, spawn-fchdir DIR PROG OUT, spawnp-chdir DIR PROG OUT: a
 *     spawn whose file actions move the child to DIR (chdir; fchdir of a descriptor),
 *     then open the relative OUT as its stdout, of the relative PROG (spawnp-chdir: found
 *     through PATH=".", a relative entry); "ok" when the child ran and exited 0.  Words
 *     after OUT are the child's arguments (spawn-chdir DIR LDSO OUT ./prog: the loader
 *     run as a program, given a program relative to DIR)
 *   fdopen-conn PATH: stat PATH (under --no-cache that connects the shim, at descriptor
 *     900), then close 900 inside libc (fclose of an fdopen: no close() call the shim
 *     sees), put a socket of the program's at 900 and stat PATH-after; "ok" when the stat
 *     succeeded and not one byte reached the program's socket ("leaked N" otherwise,
 *     "hang" when the stat did not return in 10 s)
 *   rawclose-conn PATH: stat PATH, close 900 by an inline system call, then stat
 *     PATH-after-0 .. PATH-after-19 (each must still be recorded)
 *   dlopen PATH: dlopen(PATH, RTLD_NOW) (a name searched for, or a path): ok or ENOENT
 *   stat-late PATH S1 S2: stat PATH, sleep S1 seconds, stat PATH-late, sleep S2 seconds
 *     (a test stops the daemon in the first sleep and lets it go on in the second):
 *     the result of the stat of PATH-late
 *   shell WORD: system("echo WORD-system"), popen("echo WORD-popen"), wordexp("$(echo
 *     WORD)"): one line each, "system=STATUS", "popen=read|NULL ERRNO", "wordexp=RC [WORD]"
 *   mount-source SRC DIR: (root, in a mount namespace of its own) mount a tmpfs on DIR
 *     with source SRC (tmpfs never looks it up), then a file system context of tmpfs
 *     (fsopen) given "source" SRC and then "source" "other"; prints the mount's result,
 *     the source /proc/self/mounts gives DIR ("none": no mount), "fd0 open" or "fd0
 *     closed", and the two fsconfig results, one a line
 *   badargs PATH OTHER: calls on PATH with a flag, mode or length the kernel refuses
 *     before it looks the name up (OTHER, a name that does not exist, as the second
 *     name of the two-name calls; each side is tried): one line each, "CALL=ERRNO"
 *   dlerror PATH: dlopen(PATH, RTLD_NOW) twice, each followed by dlerror(); prints "ok" for
 *     a handle, "msg" for a failure with a message, "nomsg" for one dlerror() says nothing of
 *     (a caller's puts(dlerror()) crashes on it), one word a line
 *   dlsym-text NAME: dlsym(RTLD_DEFAULT, NAME), then dlerror(): "ok" or the message
 *   dlerror-text PATH [ns]: dlopen(PATH, RTLD_NOW) (ns: dlmopen into LM_ID_NEWLM), then
 *     dlerror() twice: "ok" or the first message, "|", the second one or "(null)"
 *   emfile-conn PATH: stat PATH (under --no-cache that connects the shim, at 900), take
 *     every descriptor under a limit of 64, close 900 by an inline system call, stat
 *     PATH-lost-0 .. PATH-lost-4 (the shim cannot open a new connection: EMFILE), give
 *     the descriptors back and stat PATH-after; prints "lost" and the errno name of each
 *     PATH-lost stat, then the result
 *   env-main X: main's third argument's entries, a line each, then "--", then environ's
 *     (a traced run shows what an untraced one does: no variable of the shim's)
 *   stack-exec PROG FILE: execs PROG FILE by an inline system call with the environment
 *     the loader put on the initial stack (argv + argc + 1), as a Go program's runtime
 *     execs its children: no wrapper sees the exec
 *   vfork-errno PROG: errno set to EDOM, a vfork child execs PROG (execv), then another
 *     execs it by execvp of its base name; after each the parent prints "errno N", N as the
 *     child's exec left it (EDOM by execv; by execvp the last failed PATH candidate's)
 *   held-empty-queries PATH: with descriptor 3 open on PATH (by the run's caller), query
 *     its file by an empty name (fstatat, statx, syscall newfstatat, name_to_handle_at, each
 *     with AT_EMPTY_PATH) and print the result, then stat PATH by name and print that
 *   audit-conn LIB LIB2: dlopen LIB (under --loader-audit --no-cache the audit module
 *     connects), close every descriptor from 3 on, dup2 a pipe of the program's onto
 *     900..909, dlopen LIB2: "ok" when the ten are still open and the pipe got no byte
 *     (the module wrote to its old number, failed, and closed the program's descriptor)
 *   nonblock-conn PATH: stat PATH (under --no-cache that connects the shim), set O_NONBLOCK
 *     on every descriptor from 3 to 1023 (the shim's socket among them), then stat PATH
 *     200 times; "ok" when every stat succeeded (under a fence a request whose answer
 *     was not there at once counted as a lost daemon: the stat was refused)
 *   dup2-conn-fork PATH WAY: stat PATH (under --no-cache that connects the shim, at 900),
 *     dup2 a socket of the program's onto 900, then a child made by WAY (fork, clone:
 *     syscall(SYS_clone), rawclone: an inline system call no wrapper sees) stats PATH-child
 *     and writes "c" into its 900, the program's socket it inherited; "ok" when the
 *     program's socket got exactly that byte (a child's shim closed 900 as its parent's
 *     connection and connected there again: the write went to the daemon, "got N bytes")
 *   clone-vm PATH, clone-vfork PATH, clone-files PATH: a child made by clone(2) with
 *     CLONE_VM (its own stack), CLONE_VM | CLONE_VFORK or CLONE_FILES stats PATH-child-<its pid>, then the parent stats PATH-parent-<its
 *     pid>, three times each ("ok" when every child ran; the names need not exist): each
 *     access must carry the pid its name says
 *   reap-killed HOW: fork three children that wait to be killed, SIGKILL each and reap it
 *     with HOW = waitid, syscall-waitid or syscall-wait4 (the wait family's other ways in);
 *     prints the children's pids, one a line, then "ok" (each must be reported killed: 137)
 *   reexec PATH: stat PATH, then exec /proc/self/exe with the same arguments, three times
 *     (a counter in the environment, STDRIVER_REEXEC), the last image exiting 9: four
 *     images of one pid with the same program and arguments
 *   retarget-reexec LINK TARGET: point the symlink LINK at TARGET, then exec this image's
 *     own AT_EXECFN again (argv: it, "stat", "/") by an inline system call, with the initial
 *     stack's environment as it is (the raw execs here pass that array, as a Go program's
 *     runtime does: environ, a copy without the shim's variables, would run PROG untraced)
 *   rawexec PROG HINT: exec PROG (argv: PROG HINT) by an inline system call, which no wrapper
 *     sees, with the initial stack's environment and SANDTRACE_EXE as HINT says: "=" as inherited, "-"
 *     removed, else set to HINT (the parent's exec wrapper's name for the new image: the
 *     image must take it only when it was made for this very exec)
 *   rawexec-many PROG N: the same with N arguments "a1" ... "aN" and SANDTRACE_EXE removed
 *   rawfork-stat PATH: stat PATH, then a child made by a raw clone system call (no fork
 *     wrapper sees it) stats PATH-child and prints its pid; the parent waits and stats
 *     PATH-after.  Under --no-cache every stat is a request on the shim's socket: the child
 *     must not use its parent's connection (its access would be the parent's, and the two
 *     would read each other's answers)
 *   rawfork-orphan SECONDS: a child made by a raw clone system call (no wrapper sees
 *     it, so the daemon never hears of it) sleeps SECONDS by inline system calls and
 *     exits; the parent prints its pid and exits at once.  The child still maps the arena:
 *     the end of the trace must find it there and call the trace incomplete
 *   vfork-fork PATH: a vfork child stats PATH-vc-<its pid>, then forks (three times, the
 *     third by a nested vfork, which the shim makes a fork): each grandchild stats
 *     PATH-gc-<its pid> and exits 3; the vfork child reaps them and exits 0 ("ok" when
 *     every status was as said): every access must carry the pid its name says, and
 *     each grandchild be a process of its own, child of the vfork child, exit 3
 *   unshared-exec PROG: a thread unshares its descriptor table (unshare(CLONE_FILES)),
 *     the main thread then opens /etc/hostname (so the number the thread's next open
 *     takes names that file in the main thread's table, which /proc/self/fd shows), and
 *     the thread execs PROG with argv [PROG]: its image's exe must be PROG's own
 *   unshared-openat DIR NAME: a thread unshares its descriptor table and opens DIR, the
 *     main thread then opens /etc at the same number in its own table, and the thread
 *     opens NAME relative to its DIR descriptor ("ok" when that open succeeded): the
 *     record must name DIR/NAME, not /etc/NAME
 *   deep-stack MIB: grow the main stack by MIB MiB (recursion, every page written),
 *     "ok" when it returns: the arena's map must leave the stack all the room its
 *     limit gives (a map in the way is a SIGSEGV) */
static void on_hang(int sig)
{
	(void)sig;
	static const char m[] = "hang\n";
	if (write(1, m, sizeof(m) - 1) < 0)
		_exit(2);
	_exit(1);
}

/* vfork-fork: stat PATH-TAG-<the caller's pid> */
static void stat_named(const char *p, const char *tag)
{
	char q[4096];
	struct stat st;
	snprintf(q, sizeof(q), "%s-%s-%ld", p, tag, (long)syscall(SYS_getpid));
	stat(q, &st);
}

/* vfork-fork's grandchild and vfork child, each in a frame of its own below
 * its parent's (a vfork child that wrote locals of the parent's frame could
 * change what the parent reads there when it resumes); never return */
static __attribute__((noinline, noreturn)) void vfork_fork_grandchild(const char *p)
{
	stat_named(p, "gc");
	_exit(3);
}

static __attribute__((noinline, noreturn)) void vfork_fork_child(const char *p)
{
	stat_named(p, "vc");
	int bad = 0;
	for (int i = 0; i < 3; i++) {
		pid_t g = i < 2 ? fork() : vfork();
		if (g == 0)
			vfork_fork_grandchild(p); /* a frame of its own, as above */
		int gs;
		bad |= g < 0 || waitpid(g, &gs, 0) != g || !WIFEXITED(gs) || WEXITSTATUS(gs) != 3;
	}
	_exit(bad);
}

/* unshared-exec's thread */
static pthread_barrier_t unshared_ready, unshared_go;
static const char *unshared_prog;
static void *unshared_exec(void *arg)
{
	(void)arg;
	if (unshare(CLONE_FILES) != 0)
		_exit(2);
	pthread_barrier_wait(&unshared_ready);
	pthread_barrier_wait(&unshared_go);
	char *argv[] = {(char *)unshared_prog, NULL};
	execv(unshared_prog, argv);
	_exit(127);
}

/* unshared-openat's thread: DIR and NAME in unshared_prog and unshared_name */
static const char *unshared_name;
static void *unshared_openat(void *arg)
{
	(void)arg;
	if (unshare(CLONE_FILES) != 0)
		return (void *)1;
	int d = open(unshared_prog, O_RDONLY | O_DIRECTORY);
	pthread_barrier_wait(&unshared_ready);
	pthread_barrier_wait(&unshared_go);
	int f = d < 0 ? -1 : openat(d, unshared_name, O_RDONLY);
	return f < 0 ? (void *)1 : NULL;
}

/* unshared-exec, unshared-openat: start the thread FN, which unshares its
 * descriptor table and waits; open OTHER here (at the number the thread's
 * next descriptor takes in its own table); let the thread go and join it.
 * 0 when both the open and the thread succeeded. */
static int unshared_run(void *(*fn)(void *), const char *other, int flags)
{
	pthread_t th;
	void *res = (void *)1;
	pthread_barrier_init(&unshared_ready, NULL, 2);
	pthread_barrier_init(&unshared_go, NULL, 2);
	if (pthread_create(&th, NULL, fn, NULL) != 0)
		return -1;
	pthread_barrier_wait(&unshared_ready);
	int e = open(other, O_RDONLY | flags);
	pthread_barrier_wait(&unshared_go);
	pthread_join(th, &res);
	return e >= 0 && res == NULL ? 0 : -1;
}

/* deep-stack: 64 KiB a frame, each of its pages written; returns a sum the
 * compiler cannot fold away */
static unsigned long deep(unsigned long frames)
{
	volatile char pad[64 * 1024];
	for (size_t i = 0; i < sizeof(pad); i += 4096)
		pad[i] = (char)frames;
	return frames == 0 ? (unsigned long)pad[0] : deep(frames - 1) + (unsigned long)pad[4096];
}

/* clone-vm, clone-files: the child's stat, named by its pid */
static const char *clone_path;
static int clone_child(void *arg)
{
	(void)arg;
	char q[4096];
	struct stat st;
	snprintf(q, sizeof(q), "%s-child-%ld", clone_path, (long)syscall(SYS_getpid));
	stat(q, &st); /* found or not: either is an access of this pid's */
	return 0;
}

static void report(int r)
{
	if (r >= 0) {
		puts("ok");
		return;
	}
	switch (errno) {
	case ENOENT: puts("ENOENT"); break;
	case EACCES: puts("EACCES"); break;
	case ELOOP: puts("ELOOP"); break;
	case ENAMETOOLONG: puts("ENAMETOOLONG"); break;
	case EEXIST: puts("EEXIST"); break;
	case EINTR: puts("EINTR"); break;
	case ECHILD: puts("ECHILD"); break;
	default: printf("errno=%d\n", errno);
	}
}

/* jump-out: a handler that leaves the interrupted open by siglongjmp */
static sigjmp_buf jump_env;
static void on_jump(int sig)
{
	(void)sig;
	siglongjmp(jump_env, 1);
}
static int jump_out(const char *fifo, const char *target, long n)
{
	unlink(fifo);
	if (mkfifo(fifo, 0600))
		return 2;
	signal(SIGALRM, on_jump);
	for (volatile long k = 0; k < n; k++) {
		if (sigsetjmp(jump_env, 1) == 0) {
			struct itimerval it = {{0, 0}, {0, 20000}};
			setitimer(ITIMER_REAL, &it, NULL);
			open(fifo, O_RDONLY); /* no writer: blocks until the handler jumps */
			return 3;
		}
	}
	int fd = open(target, O_RDONLY);
	if (fd >= 0)
		printf("opened\n");
	else
		printf("%s\n", errno == ENOENT ? "ENOENT" : strerror(errno));
	return 0;
}

/* jump-deep: the same, each open made from a deeper frame than the one before
 * (pad keeps each level's frame large and the recursion not a tail call) */
static __attribute__((noinline)) int deep_open(const char *p, int flags, int d)
{
	volatile char pad[512];
	pad[0] = (char)d;
	if (d > 0) {
		int r = deep_open(p, flags, d - 1);
		pad[1] = pad[0];
		return r;
	}
	return open(p, flags);
}
static void print_errno_name(int fd)
{
	if (fd >= 0)
		printf("opened\n");
	else
		printf("%s\n", errno == ENOENT ? "ENOENT" : errno == EACCES ? "EACCES" : strerror(errno));
}
/* tz-env N: a thread calls localtime_r without a pause while this one runs N
 * children, each printing the TZ it got in its environment: N by
 * posix_spawn of /usr/bin/printenv, N by fork (getenv in the child), N
 * shells by system() and N by popen() (printenv; one whose call failed
 * counts as one that differs); prints
 * how many children saw another TZ than the parent's ("differ=K"), and the
 * parent's own TZ at the end */
static volatile int tz_stop;
static void *tz_loop(void *arg)
{
	(void)arg;
	time_t t = 1700000000;
	struct tm tm;
	while (!tz_stop) {
		/* localtime_r judges at the first call only (libc reads TZ then
		 * only); localtime at every call, as libc's reads it */
		localtime_r(&t, &tm);
		localtime(&t);
		locale_t l = newlocale(LC_ALL_MASK, "xx_XX.UTF-8", (locale_t)0);
		if (l)
			freelocale(l);
	}
	return NULL;
}
static const char *tz_var = "TZ";
/* tz_var's value (with end after it) into want, and tz_loop's thread
 * started: false when the variable is not set or the thread not made */
static bool tz_start(char want[512], const char *end, pthread_t *th)
{
	const char *v = getenv(tz_var);
	if (!v)
		return false;
	snprintf(want, 512, "%s%s", v, end);
	tz_stop = 0;
	return pthread_create(th, NULL, tz_loop, NULL) == 0;
}
/* tz_loop's thread stopped and joined */
static void tz_join(pthread_t th)
{
	tz_stop = 1;
	pthread_join(th, NULL);
}
/* the end of tz-env and tz-getenv: their line */
static int tz_end(pthread_t th, long differ)
{
	tz_join(th);
	printf("differ=%ld %s=%s\n", differ, tz_var, getenv(tz_var));
	return 0;
}
/* posix_spawn "printenv VAR" with its stdout on fd (libc's spawn with the
 * program's environ, as a build's make would); 0 or posix_spawn's error */
static int spawn_printenv(pid_t *pid, const char *var, int fd)
{
	char *argv[] = {"printenv", (char *)var, NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 1);
	int e = posix_spawn(pid, "/usr/bin/printenv", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return e;
}

/* What a shell run by system() (how 0) or popen() (1) prints for "printenv
 * VAR" (its lines, at most size - 1 bytes, into got); -1 when the call
 * failed (popen NULL, system -1 or a shell that could not run) */
static int shell_printenv(int how, const char *var, char *got, size_t size)
{
	char cmd[600];
	size_t have = 0;
	ssize_t r;
	got[0] = 0;
	if (how == 1) {
		snprintf(cmd, sizeof(cmd), "printenv %s", var);
		FILE *f = popen(cmd, "r");
		if (!f)
			return -1;
		have = fread(got, 1, size - 1, f);
		got[have] = 0;
		return pclose(f) == -1 ? -1 : 0;
	}
	int p[2];
	if (pipe(p))
		return -1;
	snprintf(cmd, sizeof(cmd), "printenv %s >&%d", var, p[1]);
	int st = system(cmd);
	close(p[1]);
	while (have < size - 1 && (r = read(p[0], got + have, size - 1 - have)) > 0)
		have += (size_t)r;
	got[have] = 0;
	close(p[0]);
	return st == -1 || (WIFEXITED(st) && WEXITSTATUS(st) == 127) ? -1 : 0;
}
static int tz_env(long n)
{
	char want[512];
	pthread_t th;
	if (!tz_start(want, "\n", &th))
		return 2;
	long differ = 0;
	/* then N by system() and N by popen() */
	for (long i = 0; i < 2 * n; i++) {
		char got[512];
		if (shell_printenv(i < n, tz_var, got, sizeof(got)) || strcmp(got, want))
			differ++;
	}
	for (long i = 0; i < 2 * n; i++) {
		int p[2];
		if (pipe(p))
			return 2;
		pid_t pid;
		if (i < n) {
			if (spawn_printenv(&pid, tz_var, p[1]))
				return 2;
		} else if ((pid = fork()) == 0) {
			const char *v = getenv(tz_var);
			char line[512];
			int l = snprintf(line, sizeof(line), "%s\n", v ? v : "");
			_exit(write(p[1], line, (size_t)l) == l ? 0 : 1);
		} else if (pid < 0) {
			return 2;
		}
		close(p[1]);
		char got[512] = {0};
		size_t have = 0;
		ssize_t r;
		while (have < sizeof(got) - 1 && (r = read(p[0], got + have, sizeof(got) - 1 - have)) > 0)
			have += (size_t)r;
		close(p[0]);
		waitpid(pid, NULL, 0);
		if (strcmp(got, want))
			differ++;
	}
	return tz_end(th, differ);
}
/* tz-getenv N: tz_loop's thread runs while this one reads tz_var with getenv
 * and secure_getenv, N times each */
static int tz_getenv(long n)
{
	char want[512];
	pthread_t th;
	if (!tz_start(want, "", &th))
		return 2;
	long differ = 0;
	for (long i = 0; i < n; i++) {
		const char *a = getenv(tz_var), *b = secure_getenv(tz_var);
		differ += !a || strcmp(a, want);
		differ += !b || strcmp(b, want);
	}
	return tz_end(th, differ);
}
/* spawn-reap PROG N: a thread reaps every child (waitpid(-1)) while this one
 * posix_spawns PROG N times; prints "child PID" for each, then "reaped=K" */
static volatile int reap_stop;
static long reaped_n;
static void *reap_loop(void *arg)
{
	(void)arg;
	for (;;) {
		int st;
		pid_t p = waitpid(-1, &st, 0);
		if (p > 0)
			reaped_n++;
		else if (errno == ECHILD && reap_stop)
			break;
		else if (errno == ECHILD)
			sched_yield();
	}
	return NULL;
}
static int spawn_reap(const char *prog, long n)
{
	pthread_t th;
	if (pthread_create(&th, NULL, reap_loop, NULL))
		return 2;
	for (long i = 0; i < n; i++) {
		pid_t pid;
		char *argv[] = {(char *)prog, NULL};
		if (posix_spawn(&pid, prog, NULL, NULL, argv, environ) == 0)
			printf("child %d\n", (int)pid);
	}
	reap_stop = 1;
	pthread_join(th, NULL);
	printf("reaped=%ld\n", reaped_n);
	return 0;
}
/* tz-setenv N [VAR]: tz_loop's thread runs while this one changes the
 * environment in the ways glibc lets threads do meanwhile (in place: no new
 * name, environ is not moved): VAR set N times, to "VALUE-I" (a setenv of
 * the swapped name itself), and every other time the first entry of environ
 * taken out and set again (the entries after it shift down one place; it
 * comes back at the end).  Then each entry of environ is checked: prints
 * "stray ENTRY" for each entry naming VAR whose value is not the last one
 * set, or holding a stand-in (/proc/-1), "stray NAME lost" when the first
 * entry's variable lost its value, and "reverted=R entries=K VAR=..." (R: the
 * times getenv, 200 us after a setenv, gave another value than the one set;
 * K: environ's entries naming VAR) */
static int tz_setenv(long n)
{
	char want[512], last[600] = "";
	pthread_t th;
	if (!tz_start(want, "", &th))
		return 2;
	char first[256] = "";
	if (environ[0] && strcspn(environ[0], "=") < sizeof(first))
		snprintf(first, sizeof(first), "%.*s", (int)strcspn(environ[0], "="), environ[0]);
	if (!strcmp(first, tz_var))
		first[0] = 0;
	char *first_v = first[0] && getenv(first) ? strdup(getenv(first)) : NULL;
	long reverted = 0;
	for (long i = 0; i < n; i++) {
		snprintf(last, sizeof(last), "%s-%ld", want, i);
		setenv(tz_var, last, 1);
		if (i % 2 == 0 && first_v) {
			unsetenv(first);
			setenv(first, first_v, 1);
		}
		/* a swap under way when setenv ran is over by then */
		struct timespec ts = {0, 200000};
		nanosleep(&ts, NULL);
		const char *v = getenv(tz_var);
		reverted += !v || strcmp(v, last);
	}
	tz_join(th);
	size_t vl = strlen(tz_var);
	int entries = 0;
	for (char **e = environ; *e; e++) {
		if (!strncmp(*e, tz_var, vl) && (*e)[vl] == '=') {
			entries++;
			if (strcmp(*e + vl + 1, last))
				printf("stray %s\n", *e);
		} else if (strstr(*e, "/proc/-1")) {
			printf("stray %s\n", *e);
		}
	}
	if (first_v && (!getenv(first) || strcmp(getenv(first), first_v)))
		printf("stray %s lost\n", first);
	printf("reverted=%ld entries=%d %s=%s\n", reverted, entries, tz_var,
	       entries == 1 && !strcmp(getenv(tz_var), last) ? "last" : getenv(tz_var));
	return 0;
}
/* tz-unset N: TZ not set (the default zone file, /etc/localtime, may be
 * hidden: the wrapper puts a TZ in for libc's call): tz_loop's thread runs
 * while this one reads TZ with getenv and secure_getenv N times, and spawns
 * printenv N/100 times, runs it by system() and popen() N/100 times each
 * and forks N/100 times, each child reporting its TZ
 * (getenv, and environ's own entries in the forked one); prints "differ=K
 * entries=E TZ=..." (K: reads and children that found a TZ; E: environ's
 * TZ entries at the end) */
static int tz_unset(long n)
{
	pthread_t th;
	if (getenv("TZ"))
		return 2;
	tz_stop = 0;
	if (pthread_create(&th, NULL, tz_loop, NULL))
		return 2;
	long differ = 0;
	for (long i = 0; i < n; i++) {
		differ += getenv("TZ") != NULL;
		differ += secure_getenv("TZ") != NULL;
		if (i % 100)
			continue;
		for (int how = 0; how < 2; how++) {
			char got[64];
			/* (a call that failed counts) */
			differ += shell_printenv(how, "TZ", got, sizeof(got)) || got[0];
		}
		for (int k = 0; k < 2; k++) {
			int p[2];
			pid_t pid;
			if (pipe(p))
				return 2;
			if (k == 0) {
				if (spawn_printenv(&pid, "TZ", p[1]))
					return 2;
			} else if ((pid = fork()) == 0) {
				int found = getenv("TZ") != NULL;
				for (char **e = environ; *e; e++)
					found += !strncmp(*e, "TZ=", 3);
				_exit(found && write(p[1], "TZ\n", 3) != 3);
			} else if (pid < 0) {
				return 2;
			}
			close(p[1]);
			char got[64];
			differ += read(p[0], got, sizeof(got)) > 0;
			close(p[0]);
			waitpid(pid, NULL, 0);
		}
	}
	tz_join(th);
	int entries = 0;
	for (char **e = environ; *e; e++)
		entries += !strncmp(*e, "TZ=", 3);
	printf("differ=%ld entries=%d TZ=%s\n", differ, entries, getenv("TZ") ? getenv("TZ") : "(unset)");
	return 0;
}
/* tz-forkenv N: tz_loop's thread runs (TZ not set and /etc/localtime hidden:
 * the wrapper puts a TZ entry in for libc's call with libc's putenv and
 * takes it out with its unsetenv) while this one forks N times; each child
 * sets, reads and unsets a variable of its own (libc's environment lock)
 * and exits, a SIGALRM ending one that waits for 2 s; stops at the first
 * such child.  Prints "hung=H of I" (I: the children made) */
static int tz_forkenv(long n)
{
	pthread_t th;
	tz_stop = 0;
	if (pthread_create(&th, NULL, tz_loop, NULL))
		return 2;
	long i, hung = 0;
	for (i = 0; i < n && !hung; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			alarm(2);
			setenv("ST_FORKENV", "1", 1);
			_exit(!getenv("ST_FORKENV") || unsetenv("ST_FORKENV"));
		}
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return 2;
		hung += WIFSIGNALED(st);
	}
	tz_join(th);
	printf("hung=%ld of %ld\n", hung, i);
	return 0;
}
/* tz-show: the zone libc uses, through each way in: localtime_r (the
 * process's first), localtime, mktime, ctime, tzset; then environ's TZ
 * entries */
static int tz_show(void)
{
	time_t t = 0;
	struct tm tm;
	localtime_r(&t, &tm);
	printf("localtime_r [%s] %d\n", tm.tm_zone, tm.tm_hour);
	struct tm *m = localtime(&t);
	printf("localtime [%s] %d\n", m->tm_zone, m->tm_hour);
	struct tm x = {.tm_year = 70, .tm_mday = 1, .tm_hour = 9, .tm_isdst = -1};
	printf("mktime %ld\n", (long)mktime(&x));
	printf("ctime %s", ctime(&t));
	tzset();
	printf("tzset [%s] [%s]\n", tzname[0], tzname[1]);
	int n = 0;
	for (char **e = environ; *e; e++)
		n += !strncmp(*e, "TZ=", 3);
	printf("TZ=%s entries=%d\n", getenv("TZ") ? getenv("TZ") : "(unset)", n);
	return 0;
}
/* tz-clearenv N: a thread calls localtime_r (and ctime_r, gmtime_r) without a
 * pause, which libc's own code makes read TZ only at its first call, while
 * this one, N times, adds new variables (setenv: environ reallocated) and
 * clears them all (clearenv: the array freed); prints "done" */
static void *tz_r_loop(void *arg)
{
	(void)arg;
	time_t t = 1700000000;
	struct tm tm;
	char b[32];
	while (!tz_stop) {
		localtime_r(&t, &tm);
		ctime_r(&t, b);
		gmtime_r(&t, &tm);
	}
	return NULL;
}
static int tz_clearenv(long n)
{
	time_t t = 1700000000;
	struct tm tm;
	localtime_r(&t, &tm); /* libc's first tzset, before the thread */
	pthread_t th;
	tz_stop = 0;
	if (pthread_create(&th, NULL, tz_r_loop, NULL))
		return 2;
	for (long i = 0; i < n; i++) {
		char name[32];
		for (int k = 0; k < 8; k++) {
			snprintf(name, sizeof(name), "ST_CLEAR_%d", k);
			setenv(name, "value", 1);
		}
		clearenv();
	}
	tz_join(th);
	printf("done\n");
	return 0;
}
/* tz-first HOW: libc's tzset first run by HOW (gmtime, gmtime_r, timegm, strftime: %Z of
 * a tm with no zone name, wcsftime, syslog, strptime's %s), then localtime_r of 1700000000; prints "%H %z" of it */
static int tz_first(const char *how)
{
	time_t t = 1700000000;
	struct tm tm = {.tm_year = 100, .tm_mday = 1, .tm_zone = ""};
	char b[64];
	wchar_t w[64];
	if (!strcmp(how, "gmtime"))
		gmtime(&t);
	else if (!strcmp(how, "gmtime_r"))
		gmtime_r(&t, &tm);
	else if (!strcmp(how, "timegm"))
		timegm(&tm);
	else if (!strcmp(how, "strftime"))
		strftime(b, sizeof(b), "%Z", &tm);
	else if (!strcmp(how, "wcsftime"))
		wcsftime(w, 64, L"%Z", &tm);
	else if (!strcmp(how, "syslog"))
		syslog(LOG_DEBUG, "tz-first");
	else if (!strcmp(how, "strptime"))
		strptime("1700000000", "%s", &tm);
	else
		return 2;
	localtime_r(&t, &tm);
	strftime(b, sizeof(b), "%H %z", &tm);
	printf("%s\n", b);
	return 0;
}
/* glibc's fortified name of the three (what _FORTIFY_SOURCE makes of them) */
extern void __longjmp_chk(sigjmp_buf env, int val) __attribute__((noreturn));
static const char *jump_name = "siglongjmp";
static void on_jump_named(int sig)
{
	(void)sig;
	if (!strcmp(jump_name, "longjmp"))
		longjmp(jump_env, 1);
	if (!strcmp(jump_name, "_longjmp"))
		_longjmp(jump_env, 1);
	if (!strcmp(jump_name, "__longjmp_chk"))
		__longjmp_chk(jump_env, 1);
	siglongjmp(jump_env, 1);
}
static int jump_deep(const char *fifo, const char *target, long n, const char *name)
{
	unlink(fifo);
	if (mkfifo(fifo, 0600))
		return 2;
	if (name)
		jump_name = name;
	signal(SIGALRM, on_jump_named);
	for (volatile long k = 0; k < n; k++) {
		if (sigsetjmp(jump_env, 1) == 0) {
			struct itimerval it = {{0, 0}, {0, 20000}};
			setitimer(ITIMER_REAL, &it, NULL);
			deep_open(fifo, O_RDONLY, (int)k + 1); /* blocks until the handler jumps */
			return 3;
		}
	}
	print_errno_name(deep_open(target, O_RDONLY, (int)n + 1));
	return 0;
}

/* jump-nest: a handler's call interrupted by a second handler's (see the usage) */
static const char *nest_fifo1, *nest_fifo2, *nest_target;
static volatile sig_atomic_t nest_res = -2;
static int nest_sel(const struct dirent *e)
{
	(void)e;
	open(nest_fifo1, O_RDONLY); /* no writer: blocks, a checked call at level 2 */
	return 1;
}
static const char *nest_dir;
static int nest_sel2(const struct dirent *e)
{
	(void)e;
	open(nest_fifo2, O_RDONLY); /* blocks: a nested call of the one checked aside */
	return 1;
}
static void on_nest_a(int sig)
{
	(void)sig;
	struct dirent **nl; /* the interrupted thread is in no malloc: its selector blocks */
	scandir(nest_dir, &nl, nest_sel2, NULL); /* a call checked aside */
}
static void on_nest_b(int sig)
{
	(void)sig;
	int fd = open(nest_target, O_RDONLY);
	nest_res = fd >= 0 ? 0 : errno;
	if (fd >= 0)
		close(fd);
	siglongjmp(jump_env, 1);
}
static int jump_nest(const char *fifo1, const char *fifo2, const char *dir, const char *target)
{
	nest_fifo1 = fifo1;
	nest_fifo2 = fifo2;
	nest_target = target;
	nest_dir = dir;
	unlink(fifo1);
	unlink(fifo2);
	if (mkfifo(fifo1, 0600) || mkfifo(fifo2, 0600))
		return 2;
	struct sigaction sa = {.sa_handler = on_nest_a};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = on_nest_b;
	sigaction(SIGUSR1, &sa, NULL);
	timer_t t;
	struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
	if (timer_create(CLOCK_MONOTONIC, &sev, &t))
		return 2;
	if (sigsetjmp(jump_env, 1) == 0) {
		struct itimerval it = {{0, 0}, {0, 30000}};
		setitimer(ITIMER_REAL, &it, NULL);
		struct itimerspec ts = {{0, 0}, {0, 150000000}};
		timer_settime(t, 0, &ts, NULL);
		struct dirent **nl;
		scandir(dir, &nl, nest_sel, NULL);
		return 3;
	}
	int fd = open(target, O_RDONLY);
	int main_err = fd >= 0 ? 0 : errno;
	const char *h = nest_res == 0 ? "opened" : nest_res == ENOENT ? "ENOENT"
					: nest_res == EACCES ? "EACCES" : "other";
	const char *m = main_err == 0 ? "opened" : main_err == ENOENT ? "ENOENT"
					: main_err == EACCES ? "EACCES" : "other";
	printf("handler=%s main=%s\n", h, m);
	return 0;
}

/* vfork-nest: the vfork child's handler (write and _exit only) */
static void on_vnest(int sig)
{
	(void)sig;
	int fd = open(nest_target, O_RDONLY);
	const char *m = fd >= 0 ? "opened\n" : errno == ENOENT ? "ENOENT\n"
					  : errno == EACCES ? "EACCES\n" : "other\n";
	(void)!write(1, m, strlen(m));
	_exit(0);
}
static int vfork_nest(const char *fifo, const char *dir, const char *target)
{
	nest_fifo1 = fifo;
	nest_target = target;
	unlink(fifo);
	if (mkfifo(fifo, 0600))
		return 2;
	fflush(stdout);
	pid_t pid = vfork();
	if (pid == 0) {
		/* the child's own copy of the handlers (no CLONE_SIGHAND), its own timer */
		struct sigaction sa = {.sa_handler = on_vnest};
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		struct itimerval it = {{0, 0}, {0, 30000}};
		setitimer(ITIMER_REAL, &it, NULL);
		struct dirent **nl;
		scandir(dir, &nl, nest_sel, NULL); /* the selector blocks at level 2 */
		_exit(3);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 2;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 4;
}

/* sig-storm: the handler's part (async-signal-safe: no stdio, no malloc) */
static volatile sig_atomic_t storm_calls, storm_opened;
static int storm_stat;
static const char *storm_target;
static size_t storm_tlen;
static void on_storm(int sig)
{
	(void)sig;
	int saved = errno;
	if (storm_stat) {
		char name[PATH_MAX + 24], dig[16];
		size_t n = storm_tlen, k = 0;
		memcpy(name, storm_target, n);
		name[n++] = '-';
		unsigned v = (unsigned)storm_calls;
		do
			dig[k++] = (char)('0' + v % 10);
		while ((v /= 10) != 0);
		while (k)
			name[n++] = dig[--k];
		name[n] = 0;
		struct stat st;
		(void)stat(name, &st);
	} else {
		int fd = open(storm_target, O_RDONLY);
		if (fd >= 0) {
			storm_opened++;
			close(fd);
		}
	}
	storm_calls++;
	errno = saved;
}
static int storm_sel(const struct dirent *e)
{
	struct stat st;
	return stat(e->d_name, &st) == 0;
}
static int sig_storm(const char *mode, const char *target, const char *dir, long want)
{
	storm_stat = !strcmp(mode, "stat");
	storm_target = target;
	storm_tlen = strlen(target);
	if (storm_tlen > PATH_MAX || chdir(dir) != 0)
		return 2;
	struct sigaction sa = {.sa_handler = on_storm, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	const char *us = getenv("SIG_STORM_US"); /* the timer's period, 30 us unless set */
	long per = us ? atol(us) : 30;
	struct itimerval it = {{0, per}, {0, per}};
	setitimer(ITIMER_REAL, &it, NULL);
	time_t end = time(NULL) + 60;
	struct stat st;
	for (long i = 0; storm_calls < want && (i & 255 || time(NULL) < end); i++) {
		stat("a", &st);
		int fd = open("a", O_RDONLY);
		if (fd >= 0)
			close(fd);
		access("b", F_OK);
		if (i % 64 == 0) {
			struct dirent **nl;
			int n = scandir(".", &nl, storm_sel, NULL);
			for (int k = 0; k < n; k++)
				free(nl[k]);
			if (n >= 0)
				free(nl);
		}
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("calls=%ld opened=%ld\n", (long)storm_calls, (long)storm_opened);
	return 0;
}

static volatile sig_atomic_t handler_result = -2;
static const char *handler_path;
static void on_alarm(int sig)
{
	int fd = open(handler_path, O_RDONLY);
	handler_result = fd >= 0 ? 0 : errno;
	if (fd >= 0)
		close(fd);
}

static const char *stat_path;
static void *stat_loop(void *unused)
{
	struct stat st;
	for (int i = 0; i < 100000; i++)
		stat(stat_path, &st);
	return unused;
}

/* tsd-stat: keys made after the thread's first checked call run their
 * destructors after the shim's (glibc runs them in key order) */
static pthread_key_t tsd_key;
static volatile int tsd_done;
static void tsd_destructor(void *v)
{
	struct stat st;
	(void)v;
	tsd_done = stat(stat_path, &st) == 0;
}
static void *tsd_thread(void *unused)
{
	struct stat st;
	(void)unused;
	stat(stat_path, &st);
	if (pthread_key_create(&tsd_key, tsd_destructor) == 0)
		pthread_setspecific(tsd_key, (void *)1);
	return NULL;
}

/* list-scandir-sel's selector: prints each name scandir asks about */
static int print_sel(const struct dirent *e)
{
	if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
		printf("%s ", e->d_name);
	return 1;
}

/* clonefn-stat's child: stat of p-child, then its pid */
static int clone_child_stat(void *arg)
{
	char q[4096];
	struct stat st;
	snprintf(q, sizeof(q), "%s-child", (const char *)arg);
	int rc = stat(q, &st);
	printf("child %ld\n", (long)syscall(SYS_getpid));
	fflush(stdout);
	return rc == 0 ? 0 : 1;
}

extern char **environ;

/* execve(path, av, ev) by the syscall instruction (no wrapper of the shim's sees it) */
static long raw_execve(const char *path, char *const av[], char *const ev[])
{
#ifdef __x86_64__
	long r;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"((long)SYS_execve), "D"(path), "S"(av), "d"(ev)
			 : "rcx", "r11", "memory");
	return r;
#else
	return syscall(SYS_execve, path, av, ev);
#endif
}

int main(int argc, char **argv, char **envp)
{
	if (argc < 3) {
		fprintf(stderr, "usage: stdriver CALL PATH [PATH2]\n");
		return 2;
	}
	const char *c = argv[1], *p = argv[2], *q = argc > 3 ? argv[3] : NULL;
	struct stat st;
	char buf[4096];
	int r;
	if (!strcmp(c, "open-r"))
		r = open(p, O_RDONLY);
	else if (!strcmp(c, "open-w"))
		r = open(p, O_WRONLY);
	else if (!strcmp(c, "open-creat"))
		r = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	else if (!strcmp(c, "open-rdonly-creat"))
		r = open(p, O_RDONLY | O_CREAT, 0640);
	else if (!strcmp(c, "open-path-w")) /* O_PATH: the kernel ignores the rest */
		r = open(p, O_PATH | O_RDWR | O_CREAT | O_TRUNC, 0640);
	else if (!strcmp(c, "stat"))
		r = stat(p, &st);
	else if (!strcmp(c, "lstat"))
		r = lstat(p, &st);
	else if (!strcmp(c, "access"))
		r = access(p, F_OK);
	else if (!strcmp(c, "access-w"))
		r = access(p, W_OK);
	else if (!strcmp(c, "readlink"))
		r = (int)readlink(p, buf, sizeof(buf));
	else if (!strcmp(c, "unlink"))
		r = unlink(p);
	else if (!strcmp(c, "mkdir"))
		r = mkdir(p, 0755);
	else if (!strcmp(c, "rename") && q)
		r = rename(p, q);
	else if (!strcmp(c, "link") && q)
		r = link(p, q);
	else if (!strcmp(c, "symlink") && q)
		r = symlink(q, p);
	else if (!strcmp(c, "chmod"))
		r = chmod(p, 0600);
	else if (!strcmp(c, "truncate"))
		r = truncate(p, 0);
	else if (!strcmp(c, "shm-open")) /* p: a POSIX shared memory name */
		r = shm_open(p, O_CREAT | O_RDWR, 0600);
	else if (!strcmp(c, "shm-unlink"))
		r = shm_unlink(p);
	else if (!strcmp(c, "sem-open")) {
		sem_t *s = sem_open(p, O_CREAT, 0600, 1);
		r = s == SEM_FAILED ? -1 : 0;
	} else if (!strcmp(c, "sem-unlink"))
		r = sem_unlink(p);
	else if (!strncmp(c, "list-", 5)) {
		/* the names of directory p, as one way of listing reads them, each
		 * followed by a space (not . and ..), then the result line:
		 * list-readdir_r, list-readdir64_r, list-getdents64,
		 * list-getdirentries, list-sys-getdents64, list-sys-getdents;
		 * a small buffer (one record at a time) for the getdents ones */
		r = 0;
		if (!strcmp(c, "list-scandir-sel")) { /* the names the selector sees */
			struct dirent **nl;
			int n = scandir(p, &nl, print_sel, alphasort);
			r = n < 0 ? -1 : 0;
		} else if (!strcmp(c, "list-readdir_r") || !strcmp(c, "list-readdir64_r")) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
			DIR *d = opendir(p);
			struct dirent ent, *e;
			struct dirent64 ent64, *e64;
			while (d) {
				const char *name;
				if (c[13] == '6') {
					if ((r = readdir64_r(d, &ent64, &e64)) != 0 || !e64)
						break;
					name = e64->d_name;
				} else {
					if ((r = readdir_r(d, &ent, &e)) != 0 || !e)
						break;
					name = e->d_name;
				}
				if (strcmp(name, ".") && strcmp(name, ".."))
					printf("%s ", name);
			}
			r = !d ? -1 : r ? (errno = r, -1) : 0;
#pragma GCC diagnostic pop
		} else {
			int fd = open(p, O_RDONLY | O_DIRECTORY);
			bool old = !strcmp(c, "list-sys-getdents");
			size_t name_off = old ? 18 : offsetof(struct dirent64, d_name);
			long n = fd < 0 ? -1 : 1;
			while (n > 0) {
				off_t base;
				size_t len = 48; /* one record of a short name */
				if (!strcmp(c, "list-getdents64"))
					n = getdents64(fd, buf, len);
				else if (!strcmp(c, "list-getdirentries"))
					n = getdirentries(fd, buf, len, &base);
				else if (!strcmp(c, "list-sys-getdents64"))
					n = syscall(SYS_getdents64, fd, buf, len);
				else if (old)
					n = syscall(SYS_getdents, fd, buf, len);
				else
					n = (errno = EINVAL, -1);
				for (long o = 0; o < n;) {
					unsigned short reclen;
					memcpy(&reclen, buf + o + offsetof(struct dirent64, d_reclen),
					       sizeof(reclen));
					const char *name = buf + o + name_off;
					if (strcmp(name, ".") && strcmp(name, ".."))
						printf("%s ", name);
					o += reclen;
				}
			}
			r = n < 0 ? -1 : 0;
		}
	} else if (!strcmp(c, "reopen-w") || !strcmp(c, "reopen-w-opath")) {
		/* p opened read-only (or O_PATH), then opened again for writing
		 * through /proc/self/fd/N and /dev/fd/N */
		int fd = open(p, c[8] ? O_PATH : O_RDONLY);
		char q[64];
		r = fd;
		if (r >= 0) {
			snprintf(q, sizeof(q), "/proc/self/fd/%d", fd);
			r = open(q, O_WRONLY | O_APPEND);
		}
		if (r >= 0) {
			snprintf(q, sizeof(q), "/dev/fd/%d", fd);
			r = open(q, O_WRONLY | O_APPEND);
		}
	} else if (!strcmp(c, "handle-get") && q) {
		/* the file handle of p into the file q */
		char hb[sizeof(struct file_handle) + MAX_HANDLE_SZ];
		struct file_handle *h = (struct file_handle *)hb;
		int mnt;
		h->handle_bytes = MAX_HANDLE_SZ;
		r = name_to_handle_at(AT_FDCWD, p, h, &mnt, 0);
		FILE *f = r == 0 ? fopen(q, "wb") : NULL;
		if (r == 0 && (!f || fwrite(hb, 1, sizeof(*h) + h->handle_bytes, f) == 0))
			r = -1;
		if (f)
			fclose(f);
	} else if (!strcmp(c, "handle-open") && q) {
		/* open_by_handle_at of the handle in file p, on the mount of q */
		char hb[sizeof(struct file_handle) + MAX_HANDLE_SZ];
		int hfd = open(p, O_RDONLY), mfd = open(q, O_RDONLY | O_DIRECTORY);
		r = hfd < 0 || mfd < 0 || read(hfd, hb, sizeof(hb)) <= 0 ? -1
			: open_by_handle_at(mfd, (struct file_handle *)hb, O_RDONLY);
	} else if (!strcmp(c, "freeze")) {
		/* freeze PID THAW: hold process PID still (a ptrace stop, which
		 * PID's parent does not see: a daemon that hangs, alive, and
		 * that its CLI cannot tell from one at work) until the file
		 * THAW exists or PID ends; prints "frozen" once it is.  A
		 * SIGTERM sent meanwhile waits; a SIGKILL ends it (and is
		 * reaped here, so that its parent's waitpid returns). */
		pid_t pid = (pid_t)atol(p);
		int wst;
		if (ptrace(PTRACE_SEIZE, pid, 0, 0) != 0 || ptrace(PTRACE_INTERRUPT, pid, 0, 0) != 0 ||
		    waitpid(pid, &wst, __WALL) != pid) {
			printf("%s\n", strerrorname_np(errno));
			return 1;
		}
		printf("frozen\n");
		fflush(stdout);
		while (q != NULL && access(q, F_OK) != 0) {
			pid_t w = waitpid(pid, &wst, __WALL | WNOHANG);
			if (w == pid && (WIFEXITED(wst) || WIFSIGNALED(wst)))
				return 0;
			usleep(20000);
		}
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return 0;
	} else if (!strcmp(c, "open-fds")) {
		/* PATH opened until an open fails: the numbers got, then the
		 * errno name (the shim's own descriptors must not take the
		 * program's low numbers, nor, under a soft RLIMIT_NOFILE the
		 * hard one lets it leave, any of its numbers) */
		int fd;
		while ((fd = open(p, O_RDONLY)) >= 0 && fd < 64)
			printf("%d ", fd);
		printf("%s\n", fd < 0 ? strerrorname_np(errno) : "more");
		return 0;
	} else if (!strcmp(c, "env-main")) {
		for (char **e = envp; e && *e; e++)
			puts(*e);
		puts("--");
		for (char **e = environ; e && *e; e++)
			puts(*e);
		r = 0;
	} else if (!strcmp(c, "stack-exec")) {
		char *av[] = {(char *)p, (char *)q, NULL};
		fflush(stdout);
		raw_execve(p, av, argv + argc + 1);
		return 127;
	} else if (!strcmp(c, "vfork-errno")) {
		/* errno set to EDOM, then a vfork child that execs PROG by
		 * execv, and one by execvp of its base name: the parent prints
		 * errno as each child's exec left it (a successful exec
		 * changes nothing; an execvp search leaves its last failed
		 * candidate's), to compare with an untraced run */
		const char *volatile base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
		for (volatile int i = 0; i < 2; i++) {
			char *av[] = {(char *)p, NULL};
			errno = EDOM;
			pid_t pid = vfork();
			if (pid == 0) {
				if (i == 0)
					execv(p, av);
				else
					execvp(base, av);
				_exit(127);
			}
			int e = errno, ws;
			if (pid < 0 || waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) ||
			    WEXITSTATUS(ws) != 0)
				return 1;
			printf("errno %d\n", e);
		}
		r = 0;
	} else if (!strcmp(c, "held-empty-queries")) {
		/* descriptor 3, PATH opened by whoever started the run: the
		 * queries of its file by an empty name with AT_EMPTY_PATH (what
		 * fstat(3) answers), then a stat of PATH by its name; prints
		 * the queries' result, then the stat's */
		struct statx sx;
		struct file_handle *fh = calloc(1, sizeof(*fh) + MAX_HANDLE_SZ);
		int mount_id;
		fh->handle_bytes = MAX_HANDLE_SZ;
		r = fstatat(3, "", &st, AT_EMPTY_PATH);
		if (r == 0)
			r = statx(3, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &sx);
		if (r == 0)
			r = (int)syscall(SYS_newfstatat, 3, "", &st, AT_EMPTY_PATH);
		if (r == 0)
			r = name_to_handle_at(3, "", fh, &mount_id, AT_EMPTY_PATH);
		report(r);
		r = stat(p, &st);
	} else if (!strcmp(c, "opath-link-empty")) {
		/* the calls with AT_EMPTY_PATH on an O_PATH descriptor of a
		 * symlink act on the link itself: ok when each sees a link */
		struct statx sx;
		int fd = open(p, O_PATH | O_NOFOLLOW);
		r = fd < 0 ? -1 : fstatat(fd, "", &st, AT_EMPTY_PATH);
		if (r == 0 && !S_ISLNK(st.st_mode))
			r = (errno = EINVAL, -1);
		if (r == 0)
			r = statx(fd, "", AT_EMPTY_PATH, STATX_TYPE, &sx);
		if (r == 0 && !S_ISLNK(sx.stx_mode))
			r = (errno = EINVAL, -1);
		if (r == 0)
			r = fchownat(fd, "", getuid(), getgid(), AT_EMPTY_PATH);
	} else if (!strncmp(c, "fd-", 3)) {
		/* a metadata write through a descriptor opened for reading:
		 * fd-fchmod, fd-fchown, fd-futimes, fd-fsetxattr, and the file
		 * attribute writes of ioctl: fd-ioctl-setflags (chattr),
		 * fd-sys-ioctl-setflags (by syscall()), fd-ioctl-fssetxattr;
		 * fd-opath-NAME: the same through a descriptor open O_PATH,
		 * which the kernel takes for none of them (EBADF) */
		char fdname[64];
		bool opath = !strncmp(c, "fd-opath-", 9);
		if (opath) {
			snprintf(fdname, sizeof(fdname), "fd-%s", c + 9);
			c = fdname;
		}
		int fd = open(p, opath ? O_PATH : O_RDONLY);
		if (fd < 0)
			r = -1;
		else if (!strcmp(c, "fd-fchmod"))
			r = fchmod(fd, 0600);
		else if (!strcmp(c, "fd-fchown"))
			r = fchown(fd, getuid(), getgid());
		else if (!strcmp(c, "fd-futimes"))
			r = futimes(fd, NULL);
		else if (!strcmp(c, "fd-fsetxattr"))
			r = fsetxattr(fd, "user.st", "1", 1, 0);
		else if (!strcmp(c, "fd-futimens"))
			r = futimens(fd, NULL);
		else if (!strcmp(c, "fd-fremovexattr"))
			r = fremovexattr(fd, "user.st");
		else if (!strcmp(c, "fd-sys-utimensat"))
			r = (int)syscall(SYS_utimensat, fd, NULL, NULL, 0);
		else if (!strcmp(c, "fd-ioctl-setflags") || !strcmp(c, "fd-sys-ioctl-setflags")) {
			/* chattr +d: the owner needs no write access */
			long fl = 0;
			bool sys = c[3] == 's';
			r = sys ? (int)syscall(SYS_ioctl, fd, FS_IOC_GETFLAGS, &fl)
				: ioctl(fd, FS_IOC_GETFLAGS, &fl);
			fl |= FS_NODUMP_FL;
			if (r == 0 || opath) /* O_PATH: the get failed, the set must too */
				r = sys ? (int)syscall(SYS_ioctl, fd, FS_IOC_SETFLAGS, &fl)
					: ioctl(fd, FS_IOC_SETFLAGS, &fl);
		} else if (!strcmp(c, "fd-ioctl-fssetxattr")) {
			struct fsxattr fx;
			r = ioctl(fd, FS_IOC_FSGETXATTR, &fx);
			fx.fsx_xflags |= FS_XFLAG_NODUMP;
			if (r == 0)
				r = ioctl(fd, FS_IOC_FSSETXATTR, &fx);
		}
		else if (!strcmp(c, "fd-setxattrat-null") || !strcmp(c, "fd-removexattrat-null")) {
			/* Linux 6.13's setxattrat/removexattrat with a null name
			 * and AT_EMPTY_PATH: the descriptor's file, as fsetxattr
			 * (x86-64 and arm64 numbers; ENOSYS on older kernels) */
			struct {
				uint64_t value;
				uint32_t size, flags;
			} xa = {(uint64_t)(uintptr_t) "1", 1, 0};
			r = c[3] == 's' ? (int)syscall(463, fd, NULL, AT_EMPTY_PATH, "user.st", &xa, sizeof(xa))
					: (int)syscall(466, fd, NULL, AT_EMPTY_PATH, "user.st");
		} else
			r = (errno = EINVAL, -1);
	}
	else if (!strcmp(c, "fopen-as") && q) { /* fopen(p, q): q the mode */
		FILE *f = fopen(p, q);
		r = f ? 0 : -1;
		if (f)
			fclose(f);
	}
	else if (!strcmp(c, "syscall-openat"))
		r = (int)syscall(SYS_openat, AT_FDCWD, p, O_RDONLY);
	else if (!strcmp(c, "openat2-in-root") && q) {
		struct open_how how = {.flags = O_RDONLY, .resolve = RESOLVE_IN_ROOT};
		int d = open(p, O_PATH | O_DIRECTORY);
		r = d < 0 ? -1 : (int)syscall(SYS_openat2, d, q, &how, sizeof(how));
	}
	else if (!strcmp(c, "exec")) {
		execl(p, p, (char *)NULL);
		r = -1;
	} else if ((!strcmp(c, "execveat") || !strcmp(c, "execveat-nofollow")) && q) {
		/* execveat DIR NAME: NAME run relative to a descriptor of DIR
		 * (-nofollow: with AT_SYMLINK_NOFOLLOW, ELOOP for a link) */
		char *av[] = {(char *)q, NULL};
		int d = open(p, O_RDONLY | O_DIRECTORY);
		if (d >= 0)
			syscall(SYS_execveat, d, q, av, environ, c[8] ? AT_SYMLINK_NOFOLLOW : 0);
		r = -1;
	} else if (!strcmp(c, "fexecve")) {
		/* p: a descriptor number (one the shell opened) */
		char *av[] = {"fexecve", NULL};
		fexecve(atoi(p), av, environ);
		r = -1;
	} else if (!strcmp(c, "exec-memfd")) {
		/* p copied into a memfd, run by fexecve, or by execv of its
		 * /dev/fd/N name when q is "devfd" */
		int in = open(p, O_RDONLY), fd = memfd_create("prog", 0);
		ssize_t n;
		while (in >= 0 && fd >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
			if (write(fd, buf, (size_t)n) != n)
				break;
		char *av[] = {"memfd", NULL}, name[32];
		snprintf(name, sizeof(name), "/dev/fd/%d", fd);
		if (in >= 0 && fd >= 0 && q && !strcmp(q, "devfd"))
			execv(name, av);
		else if (in >= 0 && fd >= 0)
			fexecve(fd, av, environ);
		r = -1;
	} else if (!strcmp(c, "spawnp") || !strcmp(c, "spawn") || !strcmp(c, "execvp")) {
		/* p run by posix_spawnp (a PATH search), posix_spawn or execvp;
		 * the result line after the child's output */
		char *av[] = {(char *)p, NULL};
		if (c[0] == 'e') {
			execvp(p, av);
			r = -1;
		} else {
			pid_t pid;
			fflush(stdout);
			int e = c[5] == 'p' ? posix_spawnp(&pid, p, NULL, NULL, av, environ)
					    : posix_spawn(&pid, p, NULL, NULL, av, environ);
			int ws = 0;
			if (e == 0 && waitpid(pid, &ws, 0) == pid && WIFEXITED(ws) &&
			    WEXITSTATUS(ws) == 0)
				r = 0;
			else
				r = (errno = e ? e : ECHILD, -1);
		}
	} else if (!strcmp(c, "spawn-chdir") || !strcmp(c, "spawn-fchdir") ||
		   !strcmp(c, "spawnp-chdir")) {
		/* spawn-chdir DIR PROG OUT: posix_spawn of the relative PROG with
		 * the file actions chdir DIR (addchdir_np; spawn-fchdir: fchdir to
		 * a descriptor of DIR, addfchdir_np), then the relative OUT opened
		 * (O_CREAT|O_TRUNC) as the child's stdout: both names are the
		 * child's, looked up from DIR.  spawnp-chdir: PROG by
		 * posix_spawnp with PATH ".", a relative entry, also DIR's */
		const char *prog = argc > 3 ? argv[3] : "", *out = argc > 4 ? argv[4] : "";
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		int dfd = c[6] == 'f' ? open(p, O_RDONLY | O_DIRECTORY) : -1;
		if (c[6] == 'f')
			posix_spawn_file_actions_addfchdir_np(&fa, dfd);
		else
			posix_spawn_file_actions_addchdir_np(&fa, p);
		posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		/* the child's argv: PROG, then the words after OUT */
		char *av[argc > 5 ? argc - 3 : 2];
		av[0] = (char *)prog;
		for (int i = 5; i < argc; i++)
			av[i - 4] = argv[i];
		av[argc > 5 ? argc - 4 : 1] = NULL;
		pid_t pid;
		if (c[5] == 'p')
			setenv("PATH", ".", 1);
		int e = c[5] == 'p' ? posix_spawnp(&pid, prog, &fa, NULL, av, environ)
				    : posix_spawn(&pid, prog, &fa, NULL, av, environ);
		int ws = 0;
		if (e == 0 && waitpid(pid, &ws, 0) == pid && WIFEXITED(ws) && WEXITSTATUS(ws) == 0)
			r = 0;
		else
			r = (errno = e ? e : ECHILD, -1);
		posix_spawn_file_actions_destroy(&fa);
	} else if (!strcmp(c, "fdopen-conn")) {
		struct stat st;
		char q[4096];
		r = stat(p, &st);
		if (r == 0 && (fstat(900, &st) != 0 || !S_ISSOCK(st.st_mode))) {
			puts("no connection at 900");
			return 1;
		}
		FILE *f = fdopen(900, "r");
		if (f)
			fclose(f); /* closes 900 inside libc */
		int sv[2];
		if (r == 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0 &&
		    fcntl(sv[0], F_DUPFD_CLOEXEC, 900) == 900) {
			signal(SIGALRM, on_hang);
			alarm(10);
			snprintf(q, sizeof(q), "%s-after", p);
			r = stat(q, &st);
			alarm(0);
			char b[256];
			ssize_t n = recv(sv[1], b, sizeof(b), MSG_DONTWAIT);
			if (n > 0) {
				printf("leaked %zd\n", n);
				return 1;
			}
		}
	} else if (!strcmp(c, "audit-conn") && q) {
		/* dlopen PATH (under --loader-audit --no-cache the audit module
		 * connects), close every descriptor from 3 on, put a file of
		 * the program's at 900..909, then dlopen PATH2: "ok" when all
		 * ten are still open and none got a byte */
		int pv[2];
		r = dlopen(p, RTLD_NOW) ? 0 : (errno = ENOENT, -1);
		closefrom(3);
		if (r == 0 && pipe(pv) != 0)
			return 1;
		for (int i = 900; r == 0 && i < 910; i++)
			if (dup2(pv[1], i) != i)
				return 1;
		if (r == 0 && !dlopen(q, RTLD_NOW))
			r = (errno = ENOENT, -1);
		int open_ = 0;
		for (int i = 900; i < 910; i++)
			open_ += fcntl(i, F_GETFD) >= 0;
		fcntl(pv[0], F_SETFL, O_NONBLOCK);
		char b[64];
		ssize_t n = read(pv[0], b, sizeof(b));
		if (r == 0 && (open_ != 10 || n > 0)) {
			printf("open %d, got %zd bytes\n", open_, n);
			return 1;
		}
	} else if (!strcmp(c, "nonblock-conn")) {
		/* stat PATH (under --no-cache that connects the shim), then
		 * O_NONBLOCK on every descriptor 3..1023 (the shim's socket
		 * too), then 200 stats of PATH: "ok" when each succeeded */
		struct stat st;
		r = stat(p, &st);
		for (int fd = 3; fd < 1024; fd++) {
			int fl = fcntl(fd, F_GETFL);
			if (fl >= 0)
				fcntl(fd, F_SETFL, fl | O_NONBLOCK);
		}
		for (int i = 0; r == 0 && i < 200; i++)
			r = stat(p, &st);
	} else if (!strcmp(c, "dup2-conn-fork") && q) {
		struct stat st;
		char n2[4096];
		int sv[2];
		r = stat(p, &st);
		if (r == 0 && (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
			       dup2(sv[0], 900) != 900))
			return 1;
		fflush(stdout);
		long pid = !strcmp(q, "fork")	 ? (long)fork()
			   : !strcmp(q, "clone") ? syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0)
						 : st__sys6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
		if (pid == 0) {
			snprintf(n2, sizeof(n2), "%s-child", p);
			stat(n2, &st);
			_exit(write(900, "c", 1) == 1 ? 0 : 1);
		}
		int ws;
		if (pid < 0 || waitpid((pid_t)pid, &ws, 0) != (pid_t)pid || !WIFEXITED(ws) ||
		    WEXITSTATUS(ws) != 0)
			r = (errno = ECHILD, -1);
		char b[256];
		ssize_t n = recv(sv[1], b, sizeof(b), MSG_DONTWAIT);
		if (r == 0 && (n != 1 || b[0] != 'c')) {
			printf("got %zd bytes\n", n);
			return 1;
		}
	} else if (!strcmp(c, "shell")) {
		char cmd[256];
		snprintf(cmd, sizeof(cmd), "echo %s-system", p);
		int s = system(cmd);
		printf("system=%d\n", s);
		fflush(stdout);
		snprintf(cmd, sizeof(cmd), "echo %s-popen", p);
		errno = 0;
		FILE *f = popen(cmd, "r");
		if (f) {
			char line[256] = "";
			if (!fgets(line, sizeof(line), f))
				line[0] = 0;
			pclose(f);
			printf("popen=read %s", line);
		} else {
			printf("popen=NULL %s\n", strerrorname_np(errno));
		}
		snprintf(cmd, sizeof(cmd), "$(echo %s)", p);
		wordexp_t we;
		int w = wordexp(cmd, &we, 0);
		printf("wordexp=%d %s\n", w, w == 0 && we.we_wordc ? we.we_wordv[0] : "");
		if (w == 0)
			wordfree(&we);
		return 0;
	} else if (!strcmp(c, "mount-source") && argc > 3) {
		int r = mount(p, argv[3], "tmpfs", 0, NULL);
		printf("mount=%s\n", r < 0 ? strerrorname_np(errno) : "ok");
		char line[4096], src[4096] = "none", dir[4096];
		FILE *m = fopen("/proc/self/mounts", "r");
		while (m && fgets(line, sizeof(line), m))
			if (sscanf(line, "%4095s %4095s", src + 0, dir) == 2 && !strcmp(dir, argv[3]))
				break;
			else
				strcpy(src, "none");
		if (m)
			fclose(m);
		printf("source=%s\n", src);
		printf("fd0 %s\n", fcntl(0, F_GETFD) < 0 ? "closed" : "open");
		int fc = (int)syscall(SYS_fsopen, "tmpfs", 0);
		if (fc < 0)
			return 1;
		r = (int)syscall(SYS_fsconfig, fc, 1 /* FSCONFIG_SET_STRING */, "source", p, 0);
		printf("fsconfig=%s\n", r < 0 ? strerrorname_np(errno) : "ok");
		r = (int)syscall(SYS_fsconfig, fc, 1, "source", "other", 0);
		printf("fsconfig-again=%s\n", r < 0 ? strerrorname_np(errno) : "ok");
		return 0;
	} else if (!strcmp(c, "badargs")) {
		const char *o = argc > 3 ? argv[3] : "";
		const int bad = 0x40000000; /* no call takes this flag */
		struct stat st;
		struct statx sx;
		struct open_how how = {.flags = O_RDONLY, .resolve = 0x80000};
#define BADARG(name, expr)                                                                         \
	do {                                                                                       \
		errno = 0;                                                                         \
		long r_ = (long)(expr);                                                            \
		printf("%s=%s\n", name, r_ == -1 ? strerrorname_np(errno) : "ok");                \
	} while (0)
		BADARG("fstatat", fstatat(AT_FDCWD, p, &st, bad));
		BADARG("statx", statx(AT_FDCWD, p, bad, 0, &sx));
		BADARG("faccessat-mode", faccessat(AT_FDCWD, p, 0x80, 0));
		BADARG("faccessat", faccessat(AT_FDCWD, p, R_OK, bad));
		BADARG("open-tmpfile-rdonly", open(p, O_TMPFILE | O_RDONLY));
		BADARG("openat2", syscall(SYS_openat2, AT_FDCWD, p, &how, sizeof(how)));
		BADARG("renameat2-first", renameat2(AT_FDCWD, p, AT_FDCWD, o,
						    RENAME_EXCHANGE | RENAME_NOREPLACE));
		BADARG("renameat2-second", renameat2(AT_FDCWD, o, AT_FDCWD, p,
						     RENAME_EXCHANGE | RENAME_NOREPLACE));
		BADARG("linkat", linkat(AT_FDCWD, p, AT_FDCWD, o, bad));
		BADARG("unlinkat", unlinkat(AT_FDCWD, p, bad));
		BADARG("fchmodat", fchmodat(AT_FDCWD, p, 0600, bad));
		BADARG("fchownat", fchownat(AT_FDCWD, p, 0, 0, bad));
		BADARG("utimensat", utimensat(AT_FDCWD, p, NULL, bad));
		BADARG("truncate", truncate(p, -1));
		BADARG("syscall-fchmodat2", syscall(452 /* fchmodat2 */, AT_FDCWD, p, 0600, bad));
		BADARG("syscall-newfstatat", syscall(SYS_newfstatat, AT_FDCWD, p, &st, bad));
		errno = 0;
		FILE *f = fopen(p, "q");
		printf("fopen-mode=%s\n", f ? "ok" : strerrorname_np(errno));
		if (f)
			fclose(f);
#undef BADARG
		return 0;
	} else if (!strcmp(c, "tmpnames")) {
		/* the names libc picks by a stat of its own (p ignored): what
		 * get_current_dir_name gives ($PWD or getcwd's), the directory
		 * of tempnam(q) (TMPDIR, q, /tmp) and whether tmpnam found one */
		/* by dlsym: a direct reference draws the linker's warning that
		 * they are dangerous (the preload's come first) */
		char *(*tempnam_)(const char *, const char *) = dlsym(RTLD_DEFAULT, "tempnam");
		char *(*tmpnam_)(char *) = dlsym(RTLD_DEFAULT, "tmpnam");
		char *(*tmpnam_r_)(char *) = dlsym(RTLD_DEFAULT, "tmpnam_r");
		char *w = get_current_dir_name();
		printf("cwd=%s\n", w ? w : strerrorname_np(errno));
		free(w);
		char *t = tempnam_(q, "st");
		char *slash = t ? strrchr(t, '/') : NULL;
		if (slash)
			*slash = 0;
		printf("tempnam=%s\n", t ? t : strerrorname_np(errno));
		free(t);
		char nb[L_tmpnam];
		printf("tmpnam=%s\n", tmpnam_(nb) ? "ok" : strerrorname_np(errno));
		printf("tmpnam_r=%s\n", tmpnam_r_(nb) ? "ok" : strerrorname_np(errno));
		return 0;
	} else if (!strcmp(c, "mktemps")) {
		/* each mkstemp-style call on a copy of the template p: its errno, and
		 * whether it left the template's letters changed */
		char t[PATH_MAX];
#define MKT(name, expr)                                                                            \
	do {                                                                                       \
		snprintf(t, sizeof t, "%s", p);                                                    \
		errno = 0;                                                                         \
		long r_ = (long)(expr);                                                            \
		printf("%s=%s %s\n", name, r_ == -1 || r_ == 0 ? strerrorname_np(errno) : "ok",   \
		       strcmp(t, p) ? "changed" : "same");                                         \
	} while (0)
		MKT("mkstemp", mkstemp(t));
		MKT("mkostemp", mkostemp(t, O_CLOEXEC));
		MKT("mkstemps", mkstemps(t, 0));
		MKT("mkstemps-neg", mkstemps(t, -1));
		MKT("mkdtemp", (long)(mkdtemp(t) ? 1 : 0));
#undef MKT
		return 0;
	} else if (!strcmp(c, "realpath-buf")) {
		/* what realpath leaves in the caller's buffer when it fails */
		static char rb[PATH_MAX + 1];
		memset(rb, 'Z', 16);
		rb[16] = 0;
		errno = 0;
		char *rr = realpath(p, rb);
		printf("%s buf=%s\n", rr ? "ok" : strerrorname_np(errno), rb);
		return 0;
	} else if (!strcmp(c, "reads")) {
		/* every entry point that opens p for reading: what each gave, and whether
		 * the program's descriptors 0-2 are still open after them all */
		extern int __open_2(const char *, int);
		extern int __openat_2(int, const char *, int);
		struct open_how how = {.flags = O_RDONLY};
#define READ_FD(name, expr)                                                                        \
	do {                                                                                       \
		errno = 0;                                                                         \
		long r_ = (long)(expr);                                                            \
		printf("%s=%s\n", name, r_ < 0 ? strerrorname_np(errno) : "ok");                 \
		if (r_ >= 0)                                                                       \
			close((int)r_);                                                            \
	} while (0)
		READ_FD("open", open(p, O_RDONLY));
		READ_FD("open64", open64(p, O_RDONLY));
		READ_FD("openat", openat(AT_FDCWD, p, O_RDONLY));
		READ_FD("__open_2", __open_2(p, O_RDONLY));
		READ_FD("__openat_2", __openat_2(AT_FDCWD, p, O_RDONLY));
		READ_FD("syscall-open", syscall(SYS_open, p, O_RDONLY));
		READ_FD("syscall-openat", syscall(SYS_openat, AT_FDCWD, p, O_RDONLY));
		READ_FD("syscall-openat2", syscall(SYS_openat2, AT_FDCWD, p, &how, sizeof(how)));
#undef READ_FD
		FILE *f = fopen(p, "r");
		printf("fopen=%s\n", f ? "ok" : strerrorname_np(errno));
		if (f)
			fclose(f);
		for (int fd = 0; fd < 3; fd++)
			printf("fd%d=%s\n", fd, fcntl(fd, F_GETFD) < 0 ? "closed" : "open");
		return 0;
	} else if (!strcmp(c, "dlerror")) {
		for (int i = 0; i < 2; i++) {
			void *h = dlopen(p, RTLD_NOW);
			const char *m = dlerror();
			puts(h ? "ok" : m ? "msg" : "nomsg");
		}
		return 0;
	} else if (!strcmp(c, "dlsym-text")) {
		void *f = dlsym(RTLD_DEFAULT, p);
		const char *m = dlerror();
		puts(f ? "ok" : m ? m : "(null)");
		return 0;
	} else if (!strcmp(c, "dlerror-text")) {
		void *h = q && !strcmp(q, "ns") ? dlmopen(LM_ID_NEWLM, p, RTLD_NOW)
						: dlopen(p, RTLD_NOW);
		const char *m = dlerror();
		char *first = m ? strdup(m) : NULL; /* the next dlerror() frees it */
		m = dlerror();
		printf("%s|%s\n", h ? "ok" : first ? first : "(null)", m ? m : "(null)");
		free(first);
		return 0;
	} else if (!strcmp(c, "dlopen")) { /* PATH: a name or a path, RTLD_NOW */
		r = dlopen(p, RTLD_NOW) ? 0 : (errno = ENOENT, -1);
	} else if (!strcmp(c, "stat-late") && q && argc > 4) {
		char late[4096];
		snprintf(late, sizeof(late), "%s-late", p);
		stat(p, &st);
		struct timespec t1 = {atoi(q), 0}, t2 = {atoi(argv[4]), 0};
		nanosleep(&t1, NULL);
		r = stat(late, &st);
		int e = errno;
		nanosleep(&t2, NULL);
		errno = e;
	} else if (!strcmp(c, "emfile-conn")) {
		char q[4096];
		r = stat(p, &st);
		struct rlimit rl = {64, 64};
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = 64;
		if (r != 0 || setrlimit(RLIMIT_NOFILE, &rl) != 0)
			return 1;
		int fds[64], n = 0;
		while (n < 64 && (fds[n] = open("/dev/null", O_RDONLY)) >= 0)
			n++;
		st__sys6(SYS_close, 900, 0, 0, 0, 0, 0);
		printf("lost");
		for (int i = 0; i < 5; i++) {
			snprintf(q, sizeof(q), "%s-lost-%d", p, i);
			printf(" %s", stat(q, &st) == 0 ? "ok" : errno == ENOENT ? "ENOENT" : "error");
		}
		printf("\n");
		while (n > 0)
			close(fds[--n]);
		snprintf(q, sizeof(q), "%s-after", p);
		r = stat(q, &st);
	} else if (!strcmp(c, "rawclose-conn")) {
		struct stat st;
		char q[4096];
		r = stat(p, &st);
		st__sys6(SYS_close, 900, 0, 0, 0, 0, 0);
		for (int i = 0; r == 0 && i < 20; i++) {
			snprintf(q, sizeof(q), "%s-after-%d", p, i);
			r = stat(q, &st);
		}
	} else if (!strcmp(c, "clone-vm") || !strcmp(c, "clone-files") ||
		   !strcmp(c, "clone-vfork")) {
		static char stack[256 * 1024];
		clone_path = p;
		int flags = (!strcmp(c, "clone-vm")	   ? CLONE_VM
			     : !strcmp(c, "clone-vfork") ? CLONE_VM | CLONE_VFORK
							 : CLONE_FILES) |
			    SIGCHLD;
		r = 0;
		for (int i = 0; r == 0 && i < 3; i++) {
			int ws;
			pid_t pid = clone(clone_child, stack + sizeof(stack), flags, NULL);
			if (pid < 0 || waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) ||
			    WEXITSTATUS(ws) != 0) {
				r = (errno = ECHILD, -1);
				break;
			}
			char q[4096];
			struct stat st;
			snprintf(q, sizeof(q), "%s-parent-%ld", p, (long)syscall(SYS_getpid));
			stat(q, &st);
		}
	} else if (!strcmp(c, "reap-killed")) {
		r = 0;
		for (int i = 0; r == 0 && i < 3; i++) {
			int ready[2];
			if (pipe(ready) != 0)
				return 1;
			pid_t pid = fork();
			if (pid == 0) { /* past fork's wrapper: its process record is logged */
				if (write(ready[1], "r", 1) != 1)
					_exit(1);
				for (;;)
					pause();
			}
			char b;
			if (pid < 0 || read(ready[0], &b, 1) != 1)
				return 1;
			close(ready[0]);
			close(ready[1]);
			printf("%d\n", (int)pid);
			fflush(stdout);
			kill(pid, SIGKILL);
			siginfo_t si;
			int ws;
			long w;
			if (!strcmp(p, "waitid"))
				w = waitid(P_PID, (id_t)pid, &si, WEXITED);
			else if (!strcmp(p, "syscall-waitid"))
				w = syscall(SYS_waitid, P_PID, (long)pid, &si, WEXITED, NULL);
			else
				w = syscall(SYS_wait4, (long)pid, &ws, 0, NULL) == pid ? 0 : -1;
			if (w != 0)
				r = -1;
		}
	} else if (!strcmp(c, "reexec")) {
		struct stat st;
		stat(p, &st);
		const char *n = getenv("STDRIVER_REEXEC");
		int k = n ? atoi(n) : 0;
		if (k >= 3)
			return 9;
		char v[16];
		snprintf(v, sizeof(v), "%d", k + 1);
		setenv("STDRIVER_REEXEC", v, 1);
		execv("/proc/self/exe", argv);
		r = -1;
	} else if (!strcmp(c, "retarget-reexec") && q) {
		const char *self = (const char *)getauxval(AT_EXECFN);
		char tmp[4096];
		snprintf(tmp, sizeof(tmp), "%s.new", p);
		if (!self || symlink(q, tmp) != 0 || rename(tmp, p) != 0) {
			r = -1;
		} else {
			char *argv1[] = {(char *)self, "stat", "/", NULL};
			st__sys6(SYS_execve, (long)self, (long)argv1, (long)(argv + argc + 1), 0, 0,
				 0);
			r = -1;
		}
	} else if (!strcmp(c, "rawexec") && q) {
		char **stack_env = argv + argc + 1;
		size_t n = 0;
		while (stack_env[n])
			n++;
		char **env = calloc(n + 2, sizeof(char *));
		char hint[8192];
		size_t k = 0;
		for (size_t i = 0; env && i < n; i++)
			if (strncmp(stack_env[i], "SANDTRACE_EXE=", 14) != 0 || !strcmp(q, "="))
				env[k++] = stack_env[i];
		if (env && strcmp(q, "=") != 0 && strcmp(q, "-") != 0) {
			snprintf(hint, sizeof(hint), "SANDTRACE_EXE=%s", q);
			env[k++] = hint;
		}
		char *argv1[] = {(char *)p, (char *)q, NULL};
		if (env)
			st__sys6(SYS_execve, (long)p, (long)argv1, (long)env, 0, 0, 0);
		r = -1;
	} else if (!strcmp(c, "rawexec-many") && q) {
		/* p with q arguments ("a1", "a2", ...) and no SANDTRACE_EXE: the
		 * image names itself, its HELLO's iovecs beside the name */
		char **stack_env = argv + argc + 1;
		size_t n = 0, k = 0, m = (size_t)strtoul(q, NULL, 10);
		while (stack_env[n])
			n++;
		char **env = calloc(n + 1, sizeof(char *));
		char **args = calloc(m + 2, sizeof(char *));
		for (size_t i = 0; env && i < n; i++)
			if (strncmp(stack_env[i], "SANDTRACE_EXE=", 14) != 0)
				env[k++] = stack_env[i];
		args[0] = (char *)p;
		for (size_t i = 1; args && i <= m; i++) {
			args[i] = malloc(24);
			snprintf(args[i], 24, "a%zu", i);
		}
		if (env && args)
			st__sys6(SYS_execve, (long)p, (long)args, (long)env, 0, 0, 0);
		r = -1;
	} else if (!strcmp(c, "vfork-fork")) {
		int ws;
		pid_t v = vfork();
		if (v == 0)
			vfork_fork_child(p);
		r = v > 0 && waitpid(v, &ws, 0) == v && WIFEXITED(ws) && WEXITSTATUS(ws) == 0
			? 0
			: (errno = ECHILD, -1);
	} else if (!strcmp(c, "unshared-exec")) {
		unshared_prog = p;
		unshared_run(unshared_exec, "/etc/hostname", 0); /* the exec ends this image */
		r = -1;
	} else if (!strcmp(c, "unshared-openat") && q) {
		unshared_prog = p;
		unshared_name = q;
		r = unshared_run(unshared_openat, "/etc", O_DIRECTORY) == 0 ? 0 : (errno = ENOENT, -1);
	} else if (!strcmp(c, "deep-stack")) {
		deep(strtoul(p, NULL, 10) * 16);
		r = 0;
	} else if (!strcmp(c, "rawfork-stat")) {
		struct stat st;
		char q[4096];
		r = stat(p, &st);
		fflush(stdout);
		long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
		if (pid == 0) {
			snprintf(q, sizeof(q), "%s-child", p);
			int rc = stat(q, &st);
			printf("child %ld\n", (long)syscall(SYS_getpid));
			fflush(stdout);
			_exit(rc == 0 ? 0 : 1);
		}
		int ws;
		if (pid < 0 || waitpid((pid_t)pid, &ws, 0) != (pid_t)pid || !WIFEXITED(ws) ||
		    WEXITSTATUS(ws) != 0)
			r = (errno = ECHILD, -1);
		snprintf(q, sizeof(q), "%s-after", p);
		if (r == 0)
			r = stat(q, &st);
	} else if (!strcmp(c, "rawfork-orphan")) {
		fflush(stdout);
		long pid = st__sys6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
		if (pid == 0) {
			struct timespec ts = {(time_t)strtol(p, NULL, 10), 0};
			st__sys6(SYS_nanosleep, (long)&ts, 0, 0, 0, 0, 0);
			st__sys6(SYS_exit_group, 0, 0, 0, 0, 0, 0);
		}
		printf("%ld\n", pid);
		r = pid > 0 ? 0 : -1;
	} else if (!strcmp(c, "clonefn-stat")) {
		/* as rawfork-stat, with libc's clone() (no CLONE_VM): the
		 * child runs clone_child_stat on a stack of its own */
		static char stack[64 * 1024];
		r = stat(p, &st);
		fflush(stdout);
		pid_t pid = clone(clone_child_stat, stack + sizeof(stack), SIGCHLD, (void *)p);
		int ws;
		if (pid < 0 || waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
			r = (errno = ECHILD, -1);
		char q[4096];
		snprintf(q, sizeof(q), "%s-after", p);
		if (r == 0)
			r = stat(q, &st);
	} else if (!strcmp(c, "fork-open")) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(open(p, O_RDONLY) >= 0 ? 0 : 1);
		int ws;
		waitpid(pid, &ws, 0);
		r = WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? 0 : (errno = ENOENT, -1);
	} else if (!strcmp(c, "vfork-exec")) {
		r = 0;
		for (int i = 0; i < 5; i++) {
			int ws;
			pid_t pid = vfork();
			if (pid == 0) {
				/* the child runs on the parent's stack: constants only
				 * (gcc spilled a computed exit status into the slot of
				 * the parent's loop counter) */
				if (i == 4)
					_exit(4);
				if (i == 3) {
					execl("/nonexistent-sandtrace/prog", "prog", (char *)NULL);
					_exit(3);
				}
				if (i == 1 && q)
					chdir(q);
				execl(p, "prog", (char *)NULL);
				_exit(127);
			}
			if (pid < 0 || waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) ||
			    WEXITSTATUS(ws) != (i >= 3 ? i : 0))
				r = -1;
		}
		stat("after-vfork", &st);
		if (r < 0)
			errno = ECHILD;
	} else if (!strcmp(c, "threads-stat")) {
		pthread_t th[4];
		stat_path = p;
		r = 0;
		for (int i = 0; i < 4; i++)
			if (pthread_create(&th[i], NULL, stat_loop, NULL) != 0)
				r = (errno = EAGAIN, -1);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
	} else if (!strcmp(c, "tsd-stat")) {
		pthread_t th;
		stat_path = p;
		r = pthread_create(&th, NULL, tsd_thread, NULL) == 0 && pthread_join(th, NULL) == 0 &&
			    tsd_done
			? 0
			: (errno = EAGAIN, -1);
	} else if ((!strcmp(c, "read-wait") || !strcmp(c, "stat-wait")) && q) {
		bool rd = c[0] == 'r';
		for (int i = 0; i < 1000; i++)
			if (rd && (r = open(p, O_RDONLY)) >= 0)
				close(r);
			else if (!rd)
				stat(p, &st);
		puts("warm");
		fflush(stdout);
		for (int i = 0; i < 2000 && access(q, F_OK) != 0; i++)
			usleep(10000);
		r = rd ? open(p, O_RDONLY) : stat(p, &st);
	} else if (!strcmp(c, "null-pairs")) {
		/* a call of two names with one of them null: the kernel copies
		 * both names in before it looks either up (EFAULT) */
		const char *volatile nul = NULL;
		report(rename(nul, p));
		report(rename(p, nul));
		report(link(nul, p));
		report(link(p, nul));
		report((int)syscall(SYS_renameat2, AT_FDCWD, nul, AT_FDCWD, p, 0));
		report((int)syscall(SYS_linkat, AT_FDCWD, p, AT_FDCWD, nul, 0));
		report(symlink(nul, p));
		report(symlinkat(nul, AT_FDCWD, p));
		report((int)syscall(SYS_symlinkat, nul, AT_FDCWD, p));
		return 0;
	} else if (!strcmp(c, "jump-out") && q && argc > 4) {
		return jump_out(p, q, atol(argv[4]));
	} else if (!strcmp(c, "tz-first") && p) {
		return tz_first(p);
	} else if (!strcmp(c, "tz-show")) {
		return tz_show();
	} else if (!strcmp(c, "tz-forkenv") && p) {
		return tz_forkenv(atol(p));
	} else if (!strcmp(c, "tz-unset") && p) {
		return tz_unset(atol(p));
	} else if (!strcmp(c, "tz-clearenv") && p) {
		return tz_clearenv(atol(p));
	} else if (!strcmp(c, "tz-env") && p) {
		if (q)
			tz_var = q;
		return tz_env(atol(p));
	} else if (!strcmp(c, "spawn-reap") && p && q) {
		return spawn_reap(p, atol(q));
	} else if (!strcmp(c, "tz-setenv") && p) {
		if (q)
			tz_var = q;
		return tz_setenv(atol(p));
	} else if (!strcmp(c, "tz-getenv") && p) {
		if (q)
			tz_var = q;
		return tz_getenv(atol(p));
	} else if (!strcmp(c, "jump-deep") && q && argc > 4) {
		return jump_deep(p, q, atol(argv[4]), argc > 5 ? argv[5] : NULL);
	} else if (!strcmp(c, "vfork-nest") && q && argc > 4) {
		return vfork_nest(p, q, argv[4]);
	} else if (!strcmp(c, "jump-nest") && q && argc > 5) {
		return jump_nest(p, q, argv[4], argv[5]);
	} else if (!strcmp(c, "sig-storm") && q && argc > 4) {
		return sig_storm(p, q, argv[4], argc > 5 ? atol(argv[5]) : 20000);
	} else if (!strcmp(c, "sighandler-open")) {
		/* a handler that opens a file, interrupting a loop of stats */
		handler_path = p;
		signal(SIGALRM, on_alarm);
		ualarm(1000, 1000);
		for (int i = 0; i < 20000 && handler_result == -2; i++)
			stat(q ? q : "/", &st);
		ualarm(0, 0);
		r = handler_result == 0 ? 0 : (errno = handler_result == -2 ? ETIMEDOUT : handler_result, -1);
	} else {
		fprintf(stderr, "stdriver: unknown call %s\n", c);
		return 2;
	}
	report(r);
	return 0;
}
