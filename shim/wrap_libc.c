/* shim/wrap_libc.c - files libc opens by an internal call at places it fixes itself (utmp,
 * /etc/shells, /etc/fstab, /dev/tty, ...). */
#include <fstab.h>
#include <paths.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <termios.h>
#include <ttyent.h>
#include <unistd.h>
#include <utmp.h>
#include <utmpx.h>

#include "wrap.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * The kind: a public libc function whose file is opened by libc's own
 * internal call (__open_nocancel, fopen with "ce"), which no open or fopen
 * wrapper sees (docs/INTERNALS.md, "Files libc opens itself").  Each wrapper
 * judges and records the file first (st__own_judge) and, when the sandbox
 * refuses it, gives what libc gives when the file is not there (hidden:
 * ENOENT) or cannot be opened for writing (EACCES), without letting libc
 * open it: either by handing libc a name that is not there (the utmp
 * family's utmpname) or by returning libc's own result for that case
 * (documented at each wrapper, from glibc 2.36's source).
 *
 * st__own_check(path, kind, found): the one judging core of a file libc
 * opens by its own internal call at a path it fixes (these wrappers; the
 * zone file, wrap_fs.c tz_judge; DATEMSK's, getdate), and of a library the
 * loader mapped (wrap_fs.c dl_dst, dl_new_judge: found 0).  Called inside
 * an entered call (st__enter), in access slot 0.  The file is judged
 * (st__pre) and, when the sandbox lets it be, recorded as found (the errno
 * of looking it up, 0 when there) or, found -1, after a faccessat says
 * whether it is there.  libc reads it by its path inside the call and
 * keeps nothing the shim could check later (the loader, the same), so it
 * is marked as such (st_acc.loads): in identity mode (--manifest,
 * --verify) its version is the path's, and under --verify --fence a
 * version that fails verification is refused as an open of it is: EACCES,
 * recorded as a hidden integrity violation.
 * Before one core served both, only the zone file was marked: a changed
 * DATEMSK file, /etc/shells, /etc/fstab, /etc/hostid were reported but read.
 * Returns 0 to go on, or the errno the caller fails with (st__pre's
 * refusal: ENOENT hidden, EACCES not writable; EACCES a failed version).
 * Leaves errno to the caller (st__enter saved it).
 */
int st__own_check(const char *path, unsigned kind, int found)
{
	struct st_acc *a = &st__tls_acc[0];
	st__acc_init(a, AT_FDCWD, path, kind, false);
	int e = st__pre(a);
	if (e)
		return e;
	a->loads = true;
	if (found < 0)
		found = ST_SYSCALL(SYS_faccessat, AT_FDCWD, path, F_OK) == 0 ? 0 : errno;
	st__post(a, found);
	return a->refuse ? EACCES : 0;
}

/*
 * st__own_judge(path, kind) (shim.h): st__own_check in a call of its own:
 * 0 to go on (the access recorded: as there, or with the errno of looking
 * it up, so a missing file is an N record), or the errno a refused access
 * fails with (the refusal recorded as a violation by st__pre).  A call
 * that cannot be checked (st__enter) passes, or is refused with EACCES
 * where the sandbox can refuse (as ST_UNCHECKED).
 * Preserves errno; one faccessat per call; not async-signal-safe beyond
 * what the wrapped function is (none of these is).
 */
int st__own_judge(const char *path, unsigned kind)
{
	struct st_call c;
	if (!st__enter(&c))
		return c.refuse ? EACCES : 0;
	int e = st__own_check(path, kind, -1);
	st__leave(&c);
	errno = c.saved_errno;
	return e;
}

/* OWN_CALL(path, kind, missing, call): the body of a wrapper whose call
 * opens path itself: a refused file makes the wrapper return missing (an
 * expression giving libc's result when the file is not there; errno is
 * already the refusal's) without the call. */
#define OWN_CALL(path, kind, missing, call)                                                        \
	do {                                                                                       \
		int oe_ = st__own_judge((path), (kind));                                           \
		if (oe_) {                                                                         \
			errno = oe_;                                                               \
			return missing;                                                            \
		}                                                                                  \
		return call;                                                                       \
	} while (0)
/* the same for a call with no result */
#define OWN_VOID(path, kind, missing, call)                                                        \
	do {                                                                                       \
		int oe_ = st__own_judge((path), (kind));                                           \
		if (oe_) {                                                                         \
			errno = oe_;                                                               \
			missing;                                                                   \
			return;                                                                    \
		}                                                                                  \
		call;                                                                              \
	} while (0)

/*
 * ---- utmp and wtmp ----
 * libc keeps one current utmp file (utmpname; _PATH_UTMP at first) and
 * opens it lazily, read-only, in whichever of setutent, getutent(_r),
 * getutid(_r), getutline(_r), pututline (and their utmpx twins, separate
 * functions that call the same internal ones) comes first with no file
 * open; pututline reopens it read-write.  The shim mirrors the current name
 * (utmp_name: what the last successful utmpname or utmpxname was given) and
 * judges it at each of those calls (a read; pututline's a write).  A hidden
 * one is given to libc as utmpname(ST_ABSENT) before the call (utmp_swapped;
 * the next utmpname undoes it), so libc fails exactly as for a missing file,
 * with its own errno and its own state; a file visible but not writable
 * makes pututline fail with EACCES, as its O_RDWR open would.  updwtmp names
 * its file; logwtmp, login and logout name _PATH_WTMP and _PATH_UTMP
 * themselves (a write each).  Two threads that race utmpname against each
 * other leave the mirror as the last to finish (libc as the last to take its
 * lock): such a program cannot tell which file it reads either.
 */
static char utmp_name[PATH_MAX]; /* "" for libc's default, _PATH_UTMP */
static bool utmp_swapped;	 /* libc holds ST_ABSENT for the hidden utmp_name */
static bool utmp_long;		 /* utmp_name could not hold the name: not judged */
static atomic_flag utmp_lock = ATOMIC_FLAG_INIT;

/* utmp_lock guards the mirror only, for a copy: no libc call is made under
 * it, so it never waits on libc's own utmp lock.  A signal handler's utmp
 * call that interrupts the holder in its own thread would wait for good:
 * utmp_take gives up after a bounded wait (false), and the call goes on
 * unjudged (the mirror left as it was). */
static bool utmp_take(void)
{
	for (int i = 0; atomic_flag_test_and_set_explicit(&utmp_lock, memory_order_acquire); i++) {
		if (i > 1000)
			return false;
		sched_yield();
	}
	return true;
}
static void utmp_give(void)
{
	atomic_flag_clear_explicit(&utmp_lock, memory_order_release);
}

/* Judge the current utmp file for a call of this kind; a hidden one is
 * swapped for ST_ABSENT in libc (once).  Returns 0 to make the call, or
 * EACCES (visible, not writable) for the caller to fail with.  Preserves
 * errno. */
static int utmp_prepare(unsigned kind)
{
	char name[PATH_MAX];
	if (!utmp_take())
		return 0;
	bool skip = utmp_long;
	memcpy(name, utmp_name[0] ? utmp_name : _PATH_UTMP,
	       strlen(utmp_name[0] ? utmp_name : _PATH_UTMP) + 1);
	utmp_give();
	if (skip)
		return 0;
	int saved = errno;
	int e = st__own_judge(name, kind);
	if (e == ENOENT || (e == EACCES && kind == K_R)) {
		if (!utmp_take())
			return 0;
		bool swap = !utmp_swapped;
		utmp_swapped = true;
		utmp_give();
		if (swap)
			REAL(utmpname)(ST_ABSENT);
		e = 0;
	} else if (!e) {
		if (!utmp_take())
			return 0;
		bool back = utmp_swapped; /* the verdict changed (an ask answered) */
		utmp_swapped = false;
		utmp_give();
		if (back)
			REAL(utmpname)(name);
	}
	errno = saved;
	return e;
}

/* utmpname's result is mirrored (a name that does not fit is not judged) */
static int utmp_rename(int (*real)(const char *), const char *file)
{
	int r = real(file);
	if (r == 0 && file) {
		int saved = errno;
		size_t n = strlen(file);
		if (!utmp_take())
			return r;
		utmp_long = n >= sizeof(utmp_name);
		if (utmp_long || !strcmp(file, _PATH_UTMP))
			utmp_name[0] = 0;
		else
			memcpy(utmp_name, file, n + 1);
		utmp_swapped = false;
		utmp_give();
		errno = saved;
	}
	return r;
}
EXPORT int utmpname(const char *file)
{
	return utmp_rename(REAL(utmpname), file);
}
EXPORT int utmpxname(const char *file)
{
	return utmp_rename(REAL(utmpxname), file);
}

/* UTMP_CALL(kind, failv, call): a call on the current utmp file */
#define UTMP_CALL(kind, failv, call)                                                               \
	do {                                                                                       \
		int ue_ = utmp_prepare(kind);                                                      \
		if (ue_) {                                                                         \
			errno = ue_;                                                               \
			return failv;                                                              \
		}                                                                                  \
		return call;                                                                       \
	} while (0)

EXPORT void setutent(void)
{
	utmp_prepare(K_R);
	REAL(setutent)();
}
EXPORT void setutxent(void)
{
	utmp_prepare(K_R);
	REAL(setutxent)();
}
EXPORT struct utmp *getutent(void)
{
	UTMP_CALL(K_R, NULL, REAL(getutent)());
}
EXPORT struct utmpx *getutxent(void)
{
	UTMP_CALL(K_R, NULL, REAL(getutxent)());
}
EXPORT int getutent_r(struct utmp *buf, struct utmp **res)
{
	UTMP_CALL(K_R, -1, REAL(getutent_r)(buf, res));
}
EXPORT struct utmp *getutid(const struct utmp *id)
{
	UTMP_CALL(K_R, NULL, REAL(getutid)(id));
}
EXPORT struct utmpx *getutxid(const struct utmpx *id)
{
	UTMP_CALL(K_R, NULL, REAL(getutxid)(id));
}
EXPORT int getutid_r(const struct utmp *id, struct utmp *buf, struct utmp **res)
{
	UTMP_CALL(K_R, -1, REAL(getutid_r)(id, buf, res));
}
EXPORT struct utmp *getutline(const struct utmp *l)
{
	UTMP_CALL(K_R, NULL, REAL(getutline)(l));
}
EXPORT struct utmpx *getutxline(const struct utmpx *l)
{
	UTMP_CALL(K_R, NULL, REAL(getutxline)(l));
}
EXPORT int getutline_r(const struct utmp *l, struct utmp *buf, struct utmp **res)
{
	UTMP_CALL(K_R, -1, REAL(getutline_r)(l, buf, res));
}
/* a write: a file visible but not writable fails with EACCES, as libc's
 * O_RDWR reopen does, and is not opened */
EXPORT struct utmp *pututline(const struct utmp *ut)
{
	UTMP_CALL(K_W, NULL, REAL(pututline)(ut));
}
EXPORT struct utmpx *pututxline(const struct utmpx *ut)
{
	UTMP_CALL(K_W, NULL, REAL(pututxline)(ut));
}
/* getlogin: when the kernel keeps no login uid, the utmp entry of stdin's
 * terminal, read from the current utmp file under libc's lock */
EXPORT char *getlogin(void)
{
	UTMP_CALL(K_R, NULL, REAL(getlogin)());
}
EXPORT int getlogin_r(char *name, size_t n)
{
	UTMP_CALL(K_R, EACCES, REAL(getlogin_r)(name, n));
}

/* updwtmp opens its file O_WRONLY (no O_CREAT) and returns nothing: a
 * refused one is not opened, as a missing one adds nothing */
EXPORT void updwtmp(const char *file, const struct utmp *ut)
{
	OWN_VOID(file, K_W, (void)0, REAL(updwtmp)(file, ut));
}
EXPORT void updwtmpx(const char *file, const struct utmpx *ut)
{
	OWN_VOID(file, K_W, (void)0, REAL(updwtmpx)(file, ut));
}
EXPORT void logwtmp(const char *line, const char *name, const char *host)
{
	OWN_VOID(_PATH_WTMP, K_W, (void)0, REAL(logwtmp)(line, name, host));
}

/* login and logout switch libc to _PATH_UTMP themselves (utmpname), which
 * the mirror follows.  When the sandbox refuses either file they are made
 * here with glibc 2.36's steps (login/login.c, logout.c) through the real
 * public functions, the refused file left out as libc leaves out a missing
 * one; login's line is "???" when stdin is no terminal (glibc copies an
 * unset buffer there: its tty_name's error is positive). */
static void utmp_default(void)
{
	if (!utmp_take())
		return;
	utmp_name[0] = 0;
	utmp_long = false;
	utmp_swapped = false;
	utmp_give();
}
EXPORT void login(const struct utmp *ut)
{
	int eu = st__own_judge(_PATH_UTMP, K_W), ew = st__own_judge(_PATH_WTMP, K_W);
	if (!eu && !ew) {
		REAL(login)(ut);
		utmp_default();
		return;
	}
	struct utmp copy = *ut;
	char tty[PATH_MAX];
	copy.ut_type = USER_PROCESS;
	copy.ut_pid = getpid();
	if (ttyname_r(STDIN_FILENO, tty, sizeof(tty)) == 0) {
		const char *line = strncmp(tty, "/dev/", 5) ? basename(tty) : tty + 5;
		strncpy(copy.ut_line, line, sizeof(copy.ut_line));
		if (REAL(utmpname)(eu ? ST_ABSENT : _PATH_UTMP) == 0) {
			REAL(setutent)();
			REAL(pututline)(&copy);
			REAL(endutent)();
		}
		utmp_default();
		if (eu && utmp_take()) {
			utmp_swapped = true;
			utmp_give();
		}
	} else {
		strncpy(copy.ut_line, "???", sizeof(copy.ut_line));
	}
	if (!ew)
		REAL(updwtmp)(_PATH_WTMP, &copy);
	errno = ew ? ew : eu;
}
/* logout with the utmp refused: libc's open fails, no entry is found, 0 */
EXPORT int logout(const char *line)
{
	int e = st__own_judge(_PATH_UTMP, K_W);
	if (!e) {
		int r = REAL(logout)(line);
		utmp_default();
		return r;
	}
	REAL(utmpname)(ST_ABSENT);
	utmp_default();
	if (utmp_take()) {
		utmp_swapped = true;
		utmp_give();
	}
	errno = e;
	return 0;
}

/* ---- /etc/shells: getusershell's list, glibc's two default shells when the
 * file cannot be opened (misc/getusershell.c okshells) ---- */
static const char *const shells_ok[] = {_PATH_BSHELL, "/bin/csh", NULL};
static unsigned shells_at; /* the next default one to give */
EXPORT char *getusershell(void)
{
	int e = st__own_judge(_PATH_SHELLS, K_R);
	if (e) {
		const char *s = shells_ok[shells_at];
		if (s)
			shells_at++;
		errno = e;
		return (char *)s;
	}
	return REAL(getusershell)();
}
EXPORT void setusershell(void)
{
	shells_at = 0;
	OWN_VOID(_PATH_SHELLS, K_R, (void)0, REAL(setusershell)());
}
EXPORT void endusershell(void)
{
	shells_at = 0;
	REAL(endusershell)();
}

/* ---- /etc/fstab: setfsent, getfsent, getfsspec, getfsfile open it with
 * setmntent; libc's results for one it cannot open: 0, NULL ---- */
EXPORT int setfsent(void)
{
	OWN_CALL(_PATH_FSTAB, K_R, 0, REAL(setfsent)());
}
EXPORT struct fstab *getfsent(void)
{
	OWN_CALL(_PATH_FSTAB, K_R, NULL, REAL(getfsent)());
}
EXPORT struct fstab *getfsspec(const char *n)
{
	OWN_CALL(_PATH_FSTAB, K_R, NULL, REAL(getfsspec)(n));
}
EXPORT struct fstab *getfsfile(const char *n)
{
	OWN_CALL(_PATH_FSTAB, K_R, NULL, REAL(getfsfile)(n));
}

/* ---- /etc/ttys (none on Linux): setttyent 0, getttyent and getttynam NULL ---- */
EXPORT int setttyent(void)
{
	OWN_CALL(_PATH_TTYS, K_R, 0, REAL(setttyent)());
}
EXPORT struct ttyent *getttyent(void)
{
	OWN_CALL(_PATH_TTYS, K_R, NULL, REAL(getttyent)());
}
EXPORT struct ttyent *getttynam(const char *n)
{
	OWN_CALL(_PATH_TTYS, K_R, NULL, REAL(getttynam)(n));
}

/* ---- the terminal: getpass opens /dev/tty "w+"; when it cannot, it prompts
 * on stderr and reads stdin (misc/getpass.c), which is done here for a
 * refused /dev/tty with glibc's steps ---- */
static char *getpass_stdio(const char *prompt)
{
	static char *buf;
	static size_t size;
	struct termios s, t;
	bool changed = false;
	FILE *in = stdin, *out = stderr;
	flockfile(out);
	if (tcgetattr(fileno(in), &t) == 0) {
		s = t;
		t.c_lflag &= ~(ECHO | ISIG);
		changed = tcsetattr(fileno(in), TCSAFLUSH, &t) == 0;
	}
	/* glibc prints it with "%s": a null one as "(null)" (libc declares it
	 * nonnull: a plain test would be folded away) */
	fputs_unlocked(st__null(prompt) ? "(null)" : prompt, out);
	fflush_unlocked(out);
	ssize_t n = getline(&buf, &size, in);
	if (buf) {
		if (n < 0)
			buf[0] = 0;
		else if (buf[n - 1] == '\n') {
			buf[n - 1] = 0;
			if (changed)
				putc_unlocked('\n', out);
		}
	}
	if (changed)
		tcsetattr(fileno(in), TCSAFLUSH, &s);
	funlockfile(out);
	return buf;
}
EXPORT char *getpass(const char *prompt)
{
	int e = st__own_judge("/dev/tty", K_W);
	if (e) {
		errno = e;
		return getpass_stdio(prompt);
	}
	return REAL(getpass)(prompt);
}

/* ---- pseudo-terminals: posix_openpt and getpt open /dev/ptmx (an open with
 * these flags: -1 when refused); openpty through getpt (the terminal's side
 * by an ioctl on it) ---- */
EXPORT int posix_openpt(int flags)
{
	OWN_CALL("/dev/ptmx", st_open_kind(flags), -1, REAL(posix_openpt)(flags));
}
EXPORT int getpt(void)
{
	OWN_CALL("/dev/ptmx", K_W, -1, REAL(getpt)());
}
EXPORT int openpty(int *m, int *s, char *name, const struct termios *tio, const struct winsize *ws)
{
	OWN_CALL("/dev/ptmx", K_W, -1, REAL(openpty)(m, s, name, tio, ws));
}

/* ---- /etc/hostid: gethostid reads it, else takes the host's address
 * (sysdeps/unix/sysv/linux/gethostid.c), done here for a refused one;
 * sethostid writes it (O_CREAT|O_TRUNC): -1 when refused ---- */
EXPORT long gethostid(void)
{
	int e = st__own_judge("/etc/hostid", K_R);
	if (!e)
		return REAL(gethostid)();
	char host[HOST_NAME_MAX + 1], buf[8192];
	struct hostent hb, *hp;
	int herr;
	if (gethostname(host, sizeof(host)) < 0 || !host[0])
		return 0;
	if (gethostbyname_r(host, &hb, buf, sizeof(buf), &hp, &herr) != 0 || !hp)
		return 0;
	struct in_addr in = {0};
	memcpy(&in, hp->h_addr, (int)sizeof(in) < hp->h_length ? (int)sizeof(in) : hp->h_length);
	return (long)(in.s_addr << 16 | in.s_addr >> 16);
}
EXPORT int sethostid(long id)
{
	OWN_CALL("/etc/hostid", K_W, -1, REAL(sethostid)(id));
}

/* ---- the shadow files' lock, created by lckpwdf ---- */
EXPORT int lckpwdf(void)
{
	OWN_CALL("/etc/.pwd.lock", K_W, -1, REAL(lckpwdf)());
}

/* ---- /proc and /sys, recorded as a plain open of them is: getloadavg's
 * /proc/loadavg (-1 when refused); get_nprocs' /sys/.../online and
 * get_nprocs_conf's /sys/.../possible (libc falls back to /proc/stat and
 * sched_getaffinity when they fail, which is not redone here: recorded and
 * judged, a denied one a violation, not refused) ---- */
EXPORT int getloadavg(double *avg, int n)
{
	OWN_CALL("/proc/loadavg", K_R, -1, REAL(getloadavg)(avg, n));
}
enum { OWN_ONLINE, OWN_POSSIBLE, OWN_NGROUPS, OWN_NOTED };
static const char *const own_noted[OWN_NOTED] = {"/sys/devices/system/cpu/online",
						 "/sys/devices/system/cpu/possible",
						 "/proc/sys/kernel/ngroups_max"};
/* -1 not looked up yet, else 0 there or the errno of looking it up: once a
 * process (a program that asks sysconf for the processors in a loop pays a
 * judged record, no system call); relaxed: a race looks twice */
static _Atomic int own_noted_err[OWN_NOTED] = {-1, -1, -1};
/* Record (judged, not refused) the read of own_noted[i].  Preserves errno. */
static void own_note(int i)
{
	struct st_call c;
	if (!st__enter(&c))
		return;
	int e = atomic_load_explicit(&own_noted_err[i], memory_order_relaxed);
	if (e < 0) {
		e = ST_SYSCALL(SYS_faccessat, AT_FDCWD, own_noted[i], F_OK) == 0 ? 0 : errno;
		atomic_store_explicit(&own_noted_err[i], e, memory_order_relaxed);
	}
	st__record_path0(AT_FDCWD, own_noted[i], K_R, false, e);
	st__leave(&c);
	errno = c.saved_errno;
}
/* sysconf: the processor counts through libc's internal get_nprocs, the
 * groups' limit from /proc/sys/kernel/ngroups_max (linux/sysconf.c); any
 * other name reads no file */
EXPORT long sysconf(int name)
{
	if (name == _SC_NPROCESSORS_ONLN)
		own_note(OWN_ONLINE);
	else if (name == _SC_NPROCESSORS_CONF)
		own_note(OWN_POSSIBLE);
	else if (name == _SC_NGROUPS_MAX)
		own_note(OWN_NGROUPS);
	return REAL(sysconf)(name);
}
/* sysconf's other public name (glibc's alias) */
EXPORT long __sysconf(int name) ST_ALIAS(sysconf);
EXPORT int get_nprocs(void)
{
	own_note(OWN_ONLINE);
	return REAL(get_nprocs)();
}
EXPORT int get_nprocs_conf(void)
{
	own_note(OWN_POSSIBLE);
	return REAL(get_nprocs_conf)();
}

/*
 * Names libc picks by an internal stat of a directory it was given or fixes:
 * get_current_dir_name gives $PWD when a stat of it finds the working
 * directory (else getcwd's name); tempnam takes the first of TMPDIR (not in a
 * set-id program), its dir argument and P_tmpdir ("/tmp") that a stat finds
 * a directory, tmpnam and tmpnam_r "/tmp" (else they fail, ENOENT);
 * stdio/tempnam.c, sysdeps/posix/tempname.c __path_search.  Unjudged, a
 * hidden $PWD (a link there to the working directory) was given back, and a
 * hidden directory was taken, its name in the answer: both told that it is
 * there.  Each name libc would stat is judged as a query and recorded as
 * one; a hidden one is passed over as libc passes over a missing one
 * (get_current_dir_name gives getcwd's name; tempnam takes the next
 * directory and makes the name itself, as libc's mktemp does, from a
 * template of libc's shape: DIR/PFX (at most five bytes, "file" when none)
 * and six letters; tmpnam fails).  Nothing hidden, the call is libc's.
 */
EXPORT char *get_current_dir_name(void)
{
	const char *pwd = getenv("PWD");
	if (pwd && st__own_judge(pwd, K_Q))
		return getcwd(NULL, 0); /* libc's answer when PWD is not here */
	return REAL(get_current_dir_name)();
}

/* the first directory of libc's search that is there and not hidden into
 * *dir (NULL: none); whether a hidden one came before it */
static bool tmp_dir_search(const char *const *cand, size_t n, const char **dir)
{
	bool hidden = false;
	*dir = NULL;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (!cand[i])
			continue;
		if (st__own_judge(cand[i], K_Q)) {
			hidden = true;
			continue;
		}
		if (ST_SYSCALL(SYS_newfstatat, AT_FDCWD, cand[i], &st, 0) == 0 &&
		    S_ISDIR(st.st_mode)) {
			*dir = cand[i];
			break;
		}
	}
	return hidden;
}

static _Atomic(void *) real_mktemp;
EXPORT char *tempnam(const char *dir, const char *pfx)
{
	const char *cand[3] = {secure_getenv("TMPDIR"), dir, P_tmpdir}, *d;
	int saved = errno;
	if (!tmp_dir_search(cand, 3, &d)) {
		errno = saved;
		return REAL(tempnam)(dir, pfx);
	}
	if (!d) {
		errno = ENOENT;
		return NULL;
	}
	size_t dlen = strlen(d), plen = pfx && pfx[0] ? strlen(pfx) : 4;
	while (dlen > 1 && d[dlen - 1] == '/')
		dlen--;
	if (plen > 5)
		plen = 5;
	char tmpl[PATH_MAX];
	if (dlen + 1 + plen + 6 >= sizeof(tmpl)) {
		errno = EINVAL;
		return NULL;
	}
	snprintf(tmpl, sizeof(tmpl), "%.*s/%.*sXXXXXX", (int)dlen, d, (int)plen,
		 pfx && pfx[0] ? pfx : "file");
	char *(*mk)(char *) = (char *(*)(char *))st__resolve(&real_mktemp, "mktemp");
	errno = saved;
	if (!mk(tmpl)[0])
		return NULL; /* mktemp's errno */
	return strdup(tmpl);
}

EXPORT char *tmpnam_r(char *s)
{
	const char *cand[1] = {P_tmpdir}, *d;
	int saved = errno;
	if (s && tmp_dir_search(cand, 1, &d)) {
		errno = ENOENT;
		return NULL;
	}
	errno = saved;
	return REAL(tmpnam_r)(s);
}
EXPORT char *tmpnam(char *s)
{
	const char *cand[1] = {P_tmpdir}, *d;
	int saved = errno;
	if (tmp_dir_search(cand, 1, &d)) {
		errno = ENOENT;
		return NULL;
	}
	errno = saved;
	return REAL(tmpnam)(s);
}
