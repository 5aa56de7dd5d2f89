/* shim/wrap_fs.c - wrappers of the file-system calls that take a path (open, stat, access, links, namespace, metadata). */
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/dqblk_xfs.h>
#include <link.h>
#include <mntent.h>
#include <netdb.h>
#include <netinet/ether.h>
#include <rpc/netdb.h>
#include <semaphore.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/auxv.h>
#include <locale.h>
#include <limits.h>
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

EXPORT int open(const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, st_open_kind(flags), st_open_nofollow(flags),
		 false, REAL(open)(path, flags, mode));
}
EXPORT int open64(const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, st_open_kind(flags), st_open_nofollow(flags),
		 false, REAL(open64)(path, flags, mode));
}
EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, st_open_kind(flags), st_open_nofollow(flags),
		 false, REAL(openat)(dirfd, path, flags, mode));
}
EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, st_open_kind(flags), st_open_nofollow(flags),
		 false, REAL(openat64)(dirfd, path, flags, mode));
}
/* _FORTIFY_SOURCE entry points: called when the flags need no mode */
EXPORT int __open_2(const char *path, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, st_open_kind(flags), st_open_nofollow(flags),
		 false, REAL(__open_2)(path, flags));
}
EXPORT int __open64_2(const char *path, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, st_open_kind(flags), st_open_nofollow(flags),
		 false, REAL(__open64_2)(path, flags));
}
EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, st_open_kind(flags), st_open_nofollow(flags), false,
		 REAL(__openat_2)(dirfd, path, flags));
}
EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, st_open_kind(flags), st_open_nofollow(flags), false,
		 REAL(__openat64_2)(dirfd, path, flags));
}
/* glibc's exported aliases of open (older programs and libraries link them) */
EXPORT int __open(const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, st_open_kind(flags), st_open_nofollow(flags),
		 false, REAL(__open)(path, flags, mode));
}
EXPORT int __open64(const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, st_open_kind(flags), st_open_nofollow(flags),
		 false, REAL(__open64)(path, flags, mode));
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
/* fopen's other public name (libio's, the same function in glibc) */
EXPORT FILE *_IO_fopen(const char *path, const char *mode) ST_ALIAS(fopen);
/*
 * freopen(NULL, mode, stream) reopens the stream's own file with the new mode
 * (glibc: through /proc/self/fd, an internal open).  A mode that asks for
 * more than the descriptor has (a write on a read-only one) is judged and
 * recorded as a write of that file, as a reopen through /proc/self/fd/N is;
 * any other passes as it is.  The stream's descriptor, or -1 when the reopen
 * gains nothing.  Preserves errno.
 */
static int reopen_gains_write(FILE *stream, const char *mode)
{
	if (!stream || st_fopen_kind(mode) != K_W)
		return -1;
	int saved = errno;
	int fd = fileno(stream);
	long fl = fd < 0 ? -1 : ST_SYSCALL(SYS_fcntl, fd, F_GETFL);
	errno = saved;
	return fl >= 0 && ((fl & O_ACCMODE) == O_RDONLY || (fl & O_PATH)) ? fd : -1;
}

EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	if (!path) {
		int fd = reopen_gains_write(stream, mode);
		if (fd < 0)
			return REAL(freopen)(path, mode, stream);
		ONE_PATH(FILE *, NULL, (r_ == NULL), fd, "", K_W, false, true,
			 REAL(freopen)(path, mode, stream));
	}
	ONE_PATH(FILE *, NULL, (r_ == NULL), AT_FDCWD, path, st_fopen_kind(mode), false, false,
		 REAL(freopen)(path, mode, stream));
}
EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
	if (!path) {
		int fd = reopen_gains_write(stream, mode);
		if (fd < 0)
			return REAL(freopen64)(path, mode, stream);
		ONE_PATH(FILE *, NULL, (r_ == NULL), fd, "", K_W, false, true,
			 REAL(freopen64)(path, mode, stream));
	}
	ONE_PATH(FILE *, NULL, (r_ == NULL), AT_FDCWD, path, st_fopen_kind(mode), false, false,
		 REAL(freopen64)(path, mode, stream));
}

/* ---- files libc opens itself, by an internal call ---- */
EXPORT FILE *setmntent(const char *path, const char *mode)
{
	ONE_PATH(FILE *, NULL, (r_ == NULL), AT_FDCWD, path, st_fopen_kind(mode), false, false,
		 REAL(setmntent)(path, mode));
}
/* setmntent's other public name (glibc's alias) */
EXPORT FILE *__setmntent(const char *path, const char *mode) ST_ALIAS(setmntent);
/* catopen: a name with a slash is the catalog's path, opened by an internal
 * call; so is each place a name without one is looked for along NLSPATH.
 * libc maps the catalog and keeps no descriptor: in identity mode its
 * version is the path's (st_acc.loads), and one that fails verification
 * under a fence is closed again and refused (EACCES), as an open of it is. */
static nl_catd catopen_path(const char *path, int flag)
{
	struct st_call c;
	if (!st__enter(&c))
		return ST_UNCHECKED(nl_catd, c, (nl_catd)-1, EACCES, ST_PROBE_SLOT(path),
				    REAL(catopen)(path, flag));
	struct st_acc *a = &st__tls_acc[0];
	st__acc_init(a, AT_FDCWD, path, K_R, false);
	int e = st__pre(a);
	if (e) {
		e = ST_REFUSAL(nl_catd, e, ST_PROBE_SLOT(path), REAL(catopen)(path, flag));
		st__leave(&c);
		errno = e;
		return (nl_catd)-1;
	}
	errno = c.saved_errno;
	nl_catd d = ST_FORWARD(REAL(catopen)(path, flag));
	int after = errno;
	a->loads = true;
	st__post(a, d == (nl_catd)-1 ? after : 0);
	if (a->refuse && d != (nl_catd)-1) { /* --verify --fence: a failed version */
		catclose(d);
		d = (nl_catd)-1;
		after = EACCES;
	}
	st__leave(&c);
	errno = after;
	return d;
}

/* glibc's places for a catalog when NLSPATH does not say (or after what it
 * says), with the trailing colon that ends its last element */
#define CAT_NLSPATH                                                                                \
	"/usr/share/locale/%L/%N:/usr/share/locale/%L/LC_MESSAGES/%N:"                             \
	"/usr/share/locale/%l/%N:/usr/share/locale/%l/LC_MESSAGES/%N:"

/* The element of the search list at *pp with its substitutions (%N the name,
 * %L the locale, %l %t %c its language, territory and codeset, %% a
 * percent sign; an empty element is the name itself) in buf; *pp moves past
 * it.  False when the element is not tried: empty, an unknown %x (glibc
 * skips it), or longer than buf. */
static bool cat_place(const char **pp, const char *name, const char *loc, char *buf, size_t size)
{
	const char *p = *pp;
	size_t n = 0;
	bool ok = true;
#define CAT_PUT(ch)                                                                                \
	do {                                                                                       \
		if (n + 1 < size)                                                                  \
			buf[n++] = (ch);                                                           \
		else                                                                               \
			ok = false;                                                                \
	} while (0)
	if (*p == ':') {
		for (const char *s = name; *s; s++)
			CAT_PUT(*s);
	}
	while (*p && *p != ':') {
		if (*p != '%') {
			CAT_PUT(*p++);
			continue;
		}
		const char *t = loc;
		switch (p[1]) {
		case 'N':
			for (t = name; *t; t++)
				CAT_PUT(*t);
			break;
		case 'L':
			for (; *t; t++)
				CAT_PUT(*t);
			break;
		case 'l':
			do
				CAT_PUT(*t++);
			while (*t && *t != '_' && *t != '.');
			break;
		case 't':
		case 'c':
			do
				t++;
			while (*t && *t != '.' && (p[1] == 'c' || *t != '_'));
			if (*t == (p[1] == 't' ? '_' : '.'))
				for (t++; *t && (p[1] == 'c' || *t != '.'); t++)
					CAT_PUT(*t);
			break;
		case '%':
			CAT_PUT('%');
			break;
		default: /* not tried */
			ok = false;
			while (*p && *p != ':')
				p++;
			continue;
		}
		p += 2;
	}
#undef CAT_PUT
	if (*p == ':')
		p++;
	*pp = p;
	buf[n] = 0;
	return ok && n > 0;
}

/* Did a catalog's open fail (the search goes on), rather than the file
 * found prove no catalog (EINVAL: the search stops there)? */
static bool cat_open_failed(int e)
{
	return e == ENOENT || e == ENOTDIR || e == EACCES || e == ELOOP || e == ENAMETOOLONG ||
	       e == EPERM || e == ENXIO || e == ENODEV || e == EOVERFLOW || e == EMFILE ||
	       e == ENFILE;
}

/* A name without a slash is looked for as glibc does (catgets/open_catalog):
 * along NLSPATH, then glibc's places, %L being LC_MESSAGES's locale
 * (NL_CAT_LOCALE) or LANG; each place is opened by path (catopen_path),
 * judged and recorded (a place the sandbox hides is not there) until one
 * opens.  No malloc: a list or a place too long for the stack buffers is
 * left to libc, unjudged, as before. */
EXPORT nl_catd catopen(const char *name, int flag)
{
	if (!name)
		return REAL(catopen)(name, flag);
	if (strchr(name, '/'))
		return catopen_path(name, flag);
	if (!*name)
		return REAL(catopen)(name, flag);
	int saved = errno;
	const char *loc = flag == NL_CAT_LOCALE ? REAL(setlocale)(LC_MESSAGES, NULL) : getenv("LANG");
	if (!loc || !*loc || (getauxval(AT_SECURE) && strchr(loc, '/')))
		loc = "C";
	const char *env = getenv("NLSPATH");
	char list[4096], place[PATH_MAX];
	size_t el = env ? strlen(env) : 0;
	if (el + 1 + sizeof(CAT_NLSPATH) > sizeof(list))
		return REAL(catopen)(name, flag);
	list[0] = 0;
	if (el) {
		memcpy(list, env, el);
		list[el] = ':';
		list[el + 1] = 0;
	}
	strcat(list, CAT_NLSPATH);
	errno = saved;
	int e = ENOENT;
	for (const char *p = list; *p;) {
		/* a place without a slash is opened in the working directory */
		place[0] = '.';
		place[1] = '/';
		if (!cat_place(&p, name, loc, place + 2, sizeof(place) - 2))
			continue;
		const char *path = strchr(place + 2, '/') ? place + 2 : place;
		errno = saved;
		nl_catd d = catopen_path(path, flag);
		if (d != (nl_catd)-1)
			return d;
		e = errno;
		if (!cat_open_failed(e))
			break;
	}
	errno = e;
	return (nl_catd)-1;
}

/*
 * The time zone: tzset (and localtime, mktime, ctime, which run it) reads
 * the zone's file with libc's internal fopen: TZ's file (":" stripped; a
 * name relative to TZDIR or /usr/share/zoneinfo; "" is "Universal"), or
 * /etc/localtime without TZ (glibc's time/tzset.c, tzfile.c).  Each call
 * judges and records that file (R, or N when it is not there) before the
 * real call; one the sandbox hides is kept from libc as a missing one is:
 * for the real call, TZ (an absolute name) or TZDIR (a relative one) names
 * a place that is never there, and libc falls back as it does for a
 * missing file (a relative name with no TZDIR: TZ names that place).  A
 * hidden /etc/localtime with TZ not set has no variable to swap: for the
 * call a TZ entry is put into environ (tz_insert: "TZ=UTC0", which libc
 * reads as UTC, named "UTC", as it does when /etc/localtime is missing) and
 * taken out again after it.  The last file judged is kept (tz_path), so a
 * loop of localtime costs a getenv and a compare; a policy reloaded during
 * the run is not seen for that file.
 *
 * The wrappers look at TZ only where libc does (glibc 2.36 tzset.c
 * tzset_internal): tzset, localtime, ctime, mktime (and getdate, through
 * it) read it at every call; localtime_r, ctime_r, gmtime, gmtime_r,
 * timegm, syslog's stamp and strptime's %s only at the process's first
 * (libc's is_initialized, mirrored by tz_ready once a call that certainly
 * ran libc's tzset returned); strftime and its kin only for a %Z of a tm
 * with no zone name (or a conversion a locale's format may hold one in)
 * and for %s (libc's internal mktime).  A wrapper that read environ where
 * libc does not crashed a program whose other thread freed environ
 * meanwhile (clearenv), which untraced ran (fence.sh, tz-clearenv).
 */
extern char **environ;
static atomic_flag tz_lock = ATOMIC_FLAG_INIT;
static char tz_path[PATH_MAX]; /* the last file judged, under tz_lock */
static bool tz_hidden;	       /* ... and whether the sandbox hides it */

/*
 * An environment swap: for one libc call, one entry of environ (TZ, TZDIR,
 * LOCPATH) holds a stand-in that names a place that is never there, so
 * libc goes on as it does when what the sandbox hides is missing.  One swap
 * of a kind at a time (lock, taken by swap_take, given back by swap_restore
 * or swap_drop): a second thread's call meanwhile, a signal handler's, or a
 * forked child's while the lock was taken, is a violation, not refused;
 * never a wait.  slot and held (the entry swapped, NULL when no swap runs,
 * and what it held) serve the exec and spawn wrappers, which pass the held
 * value on (st__env_unswap), and a forked child, which undoes a swap that
 * another thread of its parent was making (st__env_unswap_child).  sub: the
 * stand-in put.  bit: this swap's bit in swaps_mine, the swaps the calling
 * thread made.  Nothing here sets errno; async-signal-safe.
 *
 * The program's other threads may change environ during the call: a
 * setenv of a new name moves the array (realloc: slot then points into the
 * freed one, and the stand-in was copied into the new), an unsetenv shifts
 * the entries after the one it removes, a setenv or unsetenv of the
 * swapped name replaces or removes the stand-in, clearenv or an assignment
 * to environ drops the array.  So swap_restore puts the held value back
 * where the stand-in is now, found by its address in environ, and nowhere
 * when it is gone (the program replaced or removed the variable, as it
 * would have without the swap); a stand-in swap_put finds in the slot (one
 * a race left there) is taken for the value the last swap held.
 */
struct env_swap {
	atomic_flag lock;
	char **_Atomic slot;
	char *_Atomic held;
	unsigned bit;
	const char *sub;
};
static __thread unsigned swaps_mine;

/*
 * system(), popen() and wordexp() run the shell with libc's internal spawn,
 * which passes environ itself to the kernel: a swap or a TZ entry put in by
 * another thread meanwhile went to the shell (TZ=UTC0 in 15 of 40 children
 * of a program whose other thread called localtime), and an unsetenv that
 * shifted the array while the kernel copied it made the exec fail (popen:
 * NULL, ENOMEM).  While one of them runs (env_shells, st__env_shell_enter
 * and _leave), no swap is made: swap_take fails, as for a second swap of a
 * kind (a violation, not refused); st__env_shell_enter waits for those
 * under way to end (each lock taken once and given back).  The count is
 * raised, then each lock taken; a swap takes its lock, then reads the
 * count (sequentially consistent both): one of the two sees the other.
 */
static atomic_uint env_shells;

static bool swap_take(struct env_swap *w)
{
	if (atomic_flag_test_and_set(&w->lock))
		return false;
	if (!atomic_load(&env_shells))
		return true;
	atomic_flag_clear_explicit(&w->lock, memory_order_release);
	return false;
}
/* taken and not put after all */
static void swap_drop(struct env_swap *w) { atomic_flag_clear_explicit(&w->lock, memory_order_release); }
/* The swap (lock taken) of *slot for sub; what slot held is published
 * first, for st__env_unswap.  Returns what slot held; NULL for no slot. */
static char *swap_put(struct env_swap *w, char **slot, const char *sub)
{
	if (!slot)
		return NULL;
	char *last = atomic_load_explicit(&w->held, memory_order_relaxed);
	char *held = __atomic_load_n(slot, __ATOMIC_RELAXED), *was;
	do {
		was = held;
		if (last && (held == sub || held == w->sub))
			held = last;
		swaps_mine |= w->bit;
		w->sub = sub;
		atomic_store_explicit(&w->held, held, memory_order_relaxed);
		atomic_store_explicit(&w->slot, slot, memory_order_release);
		held = was;
		/* a setenv of the name between the read and the swap: again */
	} while (!__atomic_compare_exchange_n(slot, &held, (char *)sub, false, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	return atomic_load_explicit(&w->held, memory_order_relaxed);
}
static void swap_restore(struct env_swap *w, char **slot, char *held)
{
	if (!slot)
		return;
	for (char **e = environ; e && *e; e++) {
		char *sub = (char *)w->sub;
		/* (a setenv of the name meanwhile replaced it: kept) */
		if (*e == sub) {
			__atomic_compare_exchange_n(e, &sub, held, false, __ATOMIC_ACQ_REL,
						    __ATOMIC_RELAXED);
			break;
		}
	}
	atomic_store_explicit(&w->slot, NULL, memory_order_relaxed);
	swaps_mine &= ~w->bit;
	swap_drop(w);
}
/* in a forked child: a swap of the parent's other thread undone */
static void swap_undo_child(struct env_swap *w)
{
	char **slot = atomic_load_explicit(&w->slot, memory_order_acquire);
	if (slot && !(swaps_mine & w->bit))
		swap_restore(w, slot, atomic_load_explicit(&w->held, memory_order_relaxed));
}
/* the value w took out when e is one of its stand-ins */
static const char *swap_held(struct env_swap *w, const char *e)
{
	char *h = atomic_load_explicit(&w->held, memory_order_acquire);
	return h ? h : e;
}

/* The environment's entry NAME=..., or NULL */
static char **env_entry(const char *name)
{
	size_t nl = strlen(name);
	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, name, nl) && (*e)[nl] == '=')
			return e;
	return NULL;
}

static struct env_swap tz_sw = {ATOMIC_FLAG_INIT, NULL, NULL, 1u, NULL};
/* what a time-zone swap puts in environ (their addresses tell a stand-in) */
static const char tz_sub_dir[] = "TZDIR=" ST_ABSENT, tz_sub_tz[] = "TZ=:" ST_ABSENT;

/*
 * TZ not set and /etc/localtime hidden: there is no entry to swap, so one
 * is put into environ for the call, tz_sub_dflt by libc's putenv (which
 * keeps the string itself: its address tells the stand-in, as the swaps'),
 * and taken out after it by libc's unsetenv, both under libc's own
 * environment lock, so a setenv or unsetenv of another thread meanwhile is
 * not lost; and under tz_sw's lock (one swap of the time zone at a time).
 * Only when the file is hidden and at a call where libc reads TZ (the
 * first localtime_r, every localtime, tzset, mktime), where libc itself
 * calls malloc (its tzset keeps a copy of TZ, fopen's the file), so the
 * putenv's malloc is none libc would not have made.
 *
 * What the program's other threads see meanwhile: getenv and secure_getenv
 * answer NULL for it (env_value), an exec or spawn leaves it out
 * (st__env_unswap), a forked child takes it out (st__env_unswap_child);
 * code that walks environ itself sees TZ=UTC0.  The first insertion moves
 * environ as any setenv of a new name does: libc copies the array the
 * process started with (which is never freed, so a thread still reading
 * it reads what it did) into one of its own; taken out, the array keeps
 * its room, so the next insertion reallocates it to the size it had, in
 * place.  Only a program that itself adds variables (setenv of new names)
 * while another thread reads environ may see the array moved, as by its
 * own setenv.  A setenv of TZ by another thread in the moment between the
 * wrapper's lookup and its putenv is replaced (and then taken out); one
 * made during the call is kept (the stand-in is no longer there).
 */
/* writable: putenv's string is the program's to write through environ */
static char tz_sub_dflt[] = "TZ=UTC0";
/* tz_sub_dflt is in environ, or being put or taken out, by the thread that
 * holds tz_sw's lock (swaps_mine tells which) */
static atomic_bool tz_ins;

/* libc's putenv and unsetenv, the next definitions after the shim's place
 * (RTLD_NEXT): a program that defines its own (bash does, to keep its
 * variables in its own table) would take the entry there, not into environ.
 * An unresolvable one fails (ENOSYS): nothing is put in. */
static _Atomic(void *) tz_real_putenv, tz_real_unsetenv;
static int libc_putenv(char *s)
{
	void *p = atomic_load_explicit(&tz_real_putenv, memory_order_acquire);
	return ((int (*)(char *))(p ? p : st__resolve(&tz_real_putenv, "putenv")))(s);
}
static int libc_unsetenv(const char *name)
{
	void *p = atomic_load_explicit(&tz_real_unsetenv, memory_order_acquire);
	return ((int (*)(const char *))(p ? p : st__resolve(&tz_real_unsetenv, "unsetenv")))(name);
}

/*
 * A fork against the insertion's putenv and unsetenv: libc's fork does not
 * take libc's environment lock (glibc 2.36 posix/fork.c), so a child forked
 * while another thread was inside one of them inherits that lock taken and
 * its first setenv, putenv or unsetenv waited for ever (fence: 145 of 300
 * children of a program whose other thread called localtime hung; untraced
 * none: the program itself never set a variable in a thread).  A fork
 * (st__env_fork_enter, from the shim's fork prepare step) waits until no
 * such call runs, and none starts until the fork is over
 * (st__env_fork_leave, the parent and child steps); a Dekker pair of
 * sequentially consistent flags: the inserter raises tz_envop and then
 * reads tz_forks, the fork raises tz_forks and then reads tz_envop, so at
 * least one sees the other.  The wait is short (one putenv, or one fork);
 * an insertion of the forking thread itself (a signal handler's fork
 * interrupted it) is not waited for: the child inherits what the program's
 * own setenv interrupted there would have left.
 */
static atomic_uint tz_forks;  /* forks under way */
static atomic_bool tz_envop;  /* the insertion's putenv or unsetenv runs */
static void tz_envop_begin(void)
{
	for (;;) {
		atomic_store(&tz_envop, true);
		if (!atomic_load(&tz_forks))
			return;
		atomic_store(&tz_envop, false);
		while (atomic_load(&tz_forks))
			sched_yield();
	}
}
static void tz_envop_end(void) { atomic_store(&tz_envop, false); }
void st__env_fork_enter(void)
{
	atomic_fetch_add(&tz_forks, 1);
	if (swaps_mine & tz_sw.bit)
		return;
	while (atomic_load(&tz_envop))
		sched_yield();
}
void st__env_fork_leave(void) { atomic_fetch_sub(&tz_forks, 1); }

/* The insertion over (not made, or taken out again): tz_sw's lock given
 * back */
static void tz_ins_over(void)
{
	atomic_store_explicit(&tz_ins, false, memory_order_relaxed);
	swaps_mine &= ~tz_sw.bit;
	swap_drop(&tz_sw);
}
/* Put tz_sub_dflt into environ, tz_sw's lock held.  false: not put (TZ was
 * set meanwhile, or no memory), and the lock given back.  Preserves errno. */
static bool tz_insert(void)
{
	int saved = errno;
	swaps_mine |= tz_sw.bit;
	atomic_store_explicit(&tz_ins, true, memory_order_release);
	tz_envop_begin();
	bool ok = !env_entry("TZ") && libc_putenv(tz_sub_dflt) == 0;
	tz_envop_end();
	if (!ok)
		tz_ins_over();
	errno = saved;
	return ok;
}
/* Take tz_sub_dflt out again, when it is still there (a setenv or unsetenv
 * of TZ meanwhile replaced or removed it: theirs is kept), and give tz_sw's
 * lock back.  Preserves errno. */
static void tz_uninsert(void)
{
	int saved = errno;
	for (char **e = environ; e && *e; e++)
		if (*e == tz_sub_dflt) {
			tz_envop_begin();
			libc_unsetenv("TZ");
			tz_envop_end();
			break;
		}
	tz_ins_over();
	errno = saved;
}
/* In a forked child: another thread's insertion taken out by hand (the
 * child has one thread; libc's environment lock may have been held by that
 * thread at the fork and is never given back in the child: no unsetenv). */
static void tz_uninsert_child(void)
{
	if (!atomic_load_explicit(&tz_ins, memory_order_acquire) || (swaps_mine & tz_sw.bit))
		return;
	for (char **e = environ; e && *e; e++)
		if (*e == tz_sub_dflt) {
			for (char **d = e; (d[0] = d[1]) != NULL; d++)
				;
			break;
		}
	tz_ins_over(); /* (not this thread's: swaps_mine has no bit) */
}
/* libc's tzset has run in this process (its is_initialized): a call that
 * reads TZ only at the first (localtime_r ...) reads nothing.  Set after a
 * call that certainly ran it returned; relaxed: a thread that does not see
 * it yet judges once more, which is what it did before. */
static atomic_bool tz_ready;

/* The file tzset reads, in buf; *rel: TZ names it relative to TZDIR.
 * False when it reads none (secure mode outside the zone directories) or
 * the name does not fit. */
static bool tz_file(char *buf, size_t size, bool *rel)
{
	static const char zdir[] = "/usr/share/zoneinfo", dflt[] = "/etc/localtime";
	const char *tz = getenv("TZ");
	if (tz && !*tz)
		tz = "Universal";
	if (tz && *tz == ':')
		tz++;
	if (!tz || !*tz)
		tz = dflt;
	*rel = *tz != '/';
	if (getauxval(AT_SECURE) &&
	    ((!*rel && strcmp(tz, dflt) && strncmp(tz, zdir, sizeof(zdir) - 1)) || strstr(tz, "../")))
		return false;
	const char *dir = NULL;
	size_t dl = 0, tl = strlen(tz);
	if (*rel) {
		dir = getenv("TZDIR");
		if (!dir || !*dir)
			dir = zdir;
		dl = strlen(dir);
	}
	if (dl + 1 + tl + 1 > size)
		return false;
	if (dir) {
		memcpy(buf, dir, dl);
		buf[dl++] = '/';
	}
	memcpy(buf + dl, tz, tl + 1);
	return true;
}

/* Judge and record the zone's file; when the sandbox hides it, *slot is the
 * environment entry to swap for the real call and *sub what to put there,
 * or (*slot NULL) *ins says a TZ entry is to be put in (tz_insert); either
 * with tz_sw's lock taken.  Preserves errno. */
static void tz_judge(char ***slot, const char **sub, bool *ins)
{
	struct st_call c;
	*slot = NULL;
	*ins = false;
	if (!st__enter(&c))
		return;
	char path[PATH_MAX];
	bool rel;
	if (tz_file(path, sizeof(path), &rel)) {
		int hidden = -1;
		if (!atomic_flag_test_and_set_explicit(&tz_lock, memory_order_acquire)) {
			if (!strcmp(path, tz_path))
				hidden = tz_hidden;
			atomic_flag_clear_explicit(&tz_lock, memory_order_release);
		}
		if (hidden < 0) {
			/* the core of every file libc reads by a path it fixes
			 * (wrap_libc.c): a version that fails verification under
			 * a fence is kept from libc as a hidden one */
			hidden = st__own_check(path, K_R, -1) != 0;
			if (!atomic_flag_test_and_set_explicit(&tz_lock, memory_order_acquire)) {
				memcpy(tz_path, path, strlen(path) + 1);
				tz_hidden = hidden;
				atomic_flag_clear_explicit(&tz_lock, memory_order_release);
			}
		}
		if (hidden && swap_take(&tz_sw)) {
			*slot = rel ? env_entry("TZDIR") : NULL;
			*sub = tz_sub_dir;
			if (!*slot) {
				*slot = env_entry("TZ");
				*sub = tz_sub_tz;
			}
			/* TZ not set (no entry; the file is /etc/localtime): one
			 * put in (tz_insert looks for an entry again just before
			 * its putenv) */
			*ins = !*slot && !rel && !strcmp(path, "/etc/localtime");
			if (!*slot && !*ins)
				swap_drop(&tz_sw);
		}
	}
	st__leave(&c);
	errno = c.saved_errno;
}

/* One wrapped call of the time-zone kind: judged (tz_judge) when libc will
 * read TZ in it (judge), the swap or insertion made for the real call and
 * undone after it (tz_end); inits: the call certainly runs libc's tzset
 * (tz_ready after it).  Neither sets errno. */
struct tz_call {
	char **slot;
	const char *sub;
	char *held;
	bool ins;
};
static void tz_begin(struct tz_call *t, bool judge)
{
	t->slot = NULL;
	t->ins = false;
	t->held = NULL;
	if (!judge)
		return;
	tz_judge(&t->slot, &t->sub, &t->ins);
	if (t->ins)
		t->ins = tz_insert();
	else
		t->held = swap_put(&tz_sw, t->slot, t->sub);
}
static void tz_end(struct tz_call *t, bool inits)
{
	if (t->ins)
		tz_uninsert();
	else
		swap_restore(&tz_sw, t->slot, t->held);
	if (inits)
		atomic_store_explicit(&tz_ready, true, memory_order_relaxed);
}
/* does libc read TZ in a call that reads it only at its first tzset? */
static bool tz_first(void) { return !atomic_load_explicit(&tz_ready, memory_order_relaxed); }

/* TZ_CALL_IF(judge, inits, call): the wrapper's body (tz_begin, tz_end) */
#define TZ_CALL_IF(judge, inits, call)                                                             \
	do {                                                                                       \
		struct tz_call t_;                                                                 \
		tz_begin(&t_, (judge));                                                            \
		typeof(call) r_ = call;                                                            \
		tz_end(&t_, (inits));                                                              \
		return r_;                                                                         \
	} while (0)
/* libc reads TZ at every call (its tzset_internal(1)) */
#define TZ_CALL(call) TZ_CALL_IF(true, true, call)
/* ... only at the process's first tzset (tzset_internal(0)), which this
 * call certainly runs */
#define TZ_FIRST(call) TZ_CALL_IF(tz_first(), true, call)
/* ... only at the first, which this call may not run (libc's internal
 * localtime_r on some paths only) */
#define TZ_MAYBE(call) TZ_CALL_IF(tz_first(), false, call)

EXPORT void tzset(void)
{
	struct tz_call t;
	tz_begin(&t, true);
	REAL(tzset)();
	tz_end(&t, true);
}
EXPORT struct tm *localtime(const time_t *t) { TZ_CALL(REAL(localtime)(t)); }
EXPORT struct tm *localtime_r(const time_t *t, struct tm *tm) { TZ_FIRST(REAL(localtime_r)(t, tm)); }
EXPORT time_t mktime(struct tm *tm) { TZ_CALL(REAL(mktime)(tm)); }
EXPORT time_t timelocal(struct tm *tm) { TZ_CALL(REAL(timelocal)(tm)); }
EXPORT char *ctime(const time_t *t) { TZ_CALL(REAL(ctime)(t)); }
EXPORT char *ctime_r(const time_t *t, char *buf) { TZ_FIRST(REAL(ctime_r)(t, buf)); }
/* libc's tzset runs inside these too (symbols.def): the first gmtime or
 * timegm of a process, strftime's %Z of a tm with no zone name */
EXPORT struct tm *gmtime(const time_t *t) { TZ_FIRST(REAL(gmtime)(t)); }
EXPORT struct tm *gmtime_r(const time_t *t, struct tm *tm) { TZ_FIRST(REAL(gmtime_r)(t, tm)); }
EXPORT struct tm *__gmtime_r(const time_t *t, struct tm *tm) ST_ALIAS(gmtime_r);
EXPORT time_t timegm(struct tm *tm) { TZ_MAYBE(REAL(timegm)(tm)); }

/*
 * Does strftime (wcsftime: wide) read TZ with this format and tm?  glibc
 * 2.36 (time/strftime_l.c) runs tzset for a %Z when the tm has no zone name
 * (tm_zone NULL or "") and tm_isdst >= 0, and its internal mktime for %s;
 * nothing else there looks at the zone.  A conversion that expands a
 * locale's format (%c, %x, %X, %r, and any with E) may hold a %Z: taken as
 * one.  A conversion is '%', flags (_-0^#), a width, E or O, a letter.
 */
#define STRF_READS_TZ(T, f, tm)                                                                    \
	do {                                                                                       \
		bool nozone_ = (!(tm)->tm_zone || !*(tm)->tm_zone) && (tm)->tm_isdst >= 0;         \
		for (const T *p_ = (f); p_ && *p_; p_++) {                                         \
			if (*p_ != '%')                                                            \
				continue;                                                          \
			p_++;                                                                      \
			while (*p_ == '_' || *p_ == '-' || *p_ == '0' || *p_ == '^' || *p_ == '#') \
				p_++;                                                              \
			while (*p_ >= '0' && *p_ <= '9')                                           \
				p_++;                                                              \
			bool e_ = false;                                                           \
			if (*p_ == 'E' || *p_ == 'O')                                              \
				e_ = *p_++ == 'E';                                                 \
			if (*p_ == 's')                                                            \
				return true;                                                       \
			if (nozone_ && (e_ || *p_ == 'Z' || *p_ == 'c' || *p_ == 'x' ||            \
					*p_ == 'X' || *p_ == 'r'))                                 \
				return true;                                                       \
			if (!*p_)                                                                  \
				break;                                                             \
		}                                                                                  \
		return false;                                                                      \
	} while (0)
static bool strf_reads_tz(const char *f, const struct tm *tm) { STRF_READS_TZ(char, f, tm); }
static bool wcsf_reads_tz(const wchar_t *f, const struct tm *tm) { STRF_READS_TZ(wchar_t, f, tm); }

EXPORT size_t strftime(char *s, size_t max, const char *f, const struct tm *tm)
{
	TZ_CALL_IF(strf_reads_tz(f, tm), false, REAL(strftime)(s, max, f, tm));
}
EXPORT size_t strftime_l(char *s, size_t max, const char *f, const struct tm *tm, locale_t l)
{
	TZ_CALL_IF(strf_reads_tz(f, tm), false, REAL(strftime_l)(s, max, f, tm, l));
}
EXPORT size_t __strftime_l(char *s, size_t max, const char *f, const struct tm *tm, locale_t l)
	ST_ALIAS(strftime_l);
EXPORT size_t wcsftime(wchar_t *s, size_t max, const wchar_t *f, const struct tm *tm)
{
	TZ_CALL_IF(wcsf_reads_tz(f, tm), false, REAL(wcsftime)(s, max, f, tm));
}
EXPORT size_t wcsftime_l(wchar_t *s, size_t max, const wchar_t *f, const struct tm *tm, locale_t l)
{
	TZ_CALL_IF(wcsf_reads_tz(f, tm), false, REAL(wcsftime_l)(s, max, f, tm, l));
}
EXPORT size_t __wcsftime_l(wchar_t *s, size_t max, const wchar_t *f, const struct tm *tm,
			   locale_t l) ST_ALIAS(wcsftime_l);
/* ... and libc's internal localtime_r in these (symbols.def), at strptime's
 * %s only */
EXPORT char *strptime(const char *in, const char *f, struct tm *tm)
{
	TZ_MAYBE(REAL(strptime)(in, f, tm));
}
EXPORT char *strptime_l(const char *in, const char *f, struct tm *tm, locale_t l)
{
	TZ_MAYBE(REAL(strptime_l)(in, f, tm, l));
}
/* getdate's templates: the file DATEMSK names, looked up (stat) and read by
 * libc's internal calls; refused, getdate_r gives 3 ("cannot get the
 * file's status") as for a missing one, before any tzset (time/getdate.c) */
static int datemsk_refused(void)
{
	const char *f = getenv("DATEMSK");
	return f && *f ? st__own_judge(f, K_R) : 0;
}
EXPORT struct tm *getdate(const char *in)
{
	int e = datemsk_refused();
	if (e) {
		getdate_err = 3;
		errno = e;
		return NULL;
	}
	TZ_CALL_IF(true, false, REAL(getdate)(in));
}
EXPORT int getdate_r(const char *in, struct tm *tm)
{
	int e = datemsk_refused();
	if (e) {
		errno = e;
		return 3;
	}
	TZ_CALL_IF(true, false, REAL(getdate_r)(in, tm));
}
/* syslog's four names go through the two va_list ones (a void call: TZ_CALL
 * of it and 0) */
static int tz_vsyslog(int pri, const char *f, va_list ap) { TZ_MAYBE((REAL(vsyslog)(pri, f, ap), 0)); }
static int tz_vsyslog_chk(int pri, int flag, const char *f, va_list ap)
{
	TZ_MAYBE((REAL(__vsyslog_chk)(pri, flag, f, ap), 0));
}
EXPORT void vsyslog(int pri, const char *f, va_list ap) { tz_vsyslog(pri, f, ap); }
EXPORT void syslog(int pri, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	tz_vsyslog(pri, f, ap);
	va_end(ap);
}
EXPORT void __vsyslog_chk(int pri, int flag, const char *f, va_list ap)
{
	tz_vsyslog_chk(pri, flag, f, ap);
}
EXPORT void __syslog_chk(int pri, int flag, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	tz_vsyslog_chk(pri, flag, f, ap);
	va_end(ap);
}

/*
 * Locales: setlocale and newlocale load a locale's files (LC_CTYPE, ...,
 * LC_MESSAGES/SYS_LC_MESSAGES) with libc's internal open and map them, from
 * each LOCPATH directory, then /usr/lib/locale (its locale-archive when
 * LOCPATH is not set; glibc's locale/findlocale.c).  Only while LOCPATH is
 * set (loc_loads): a LOCPATH directory
 * the sandbox hides is a violation and, for the call, LOCPATH names a place
 * that is never there in its stead (loc_swap), so libc goes on to the next
 * as for a missing directory.  After a call that loaded something, the
 * locale files the process has mapped (/proc/self/maps) are recorded, judged
 * (a hidden file below a visible directory is a violation, not refused).
 */
static struct env_swap loc_sw = {ATOMIC_FLAG_INIT, NULL, NULL, 2u, NULL};
static _Atomic bool mo_pending = true; /* see "gettext" below */
static char loc_env[4096]; /* "LOCPATH=..." for the call, under loc_sw's lock */

/* Each LOCPATH directory judged; when one is hidden, its environment entry
 * is swapped for loc_env (*slot; swap_restore(&loc_sw, ...) gives it
 * back).  Preserves errno. */
static char *loc_swap(char ***slot)
{
	*slot = NULL;
	const char *v = getenv("LOCPATH");
	if (!v || !*v || !st__listing_filtered())
		return NULL;
	struct st_call c;
	if (!st__enter(&c))
		return NULL;
	char out[sizeof(loc_env)], elem[PATH_MAX];
	size_t n = sizeof("LOCPATH=") - 1, absl = sizeof(ST_ABSENT) - 1;
	memcpy(out, "LOCPATH=", n);
	bool hidden = false, fits = true;
	for (const char *p = v; *p;) {
		const char *e = strchrnul(p, ':');
		size_t l = (size_t)(e - p);
		const char *put = p;
		size_t pl = l;
		if (l && l < sizeof(elem)) {
			memcpy(elem, p, l);
			elem[l] = 0;
			struct st_acc *a = &st__tls_acc[0];
			st__acc_init(a, AT_FDCWD, elem, K_R, false);
			if (st__pre(a)) { /* a violation, recorded */
				hidden = true;
				put = ST_ABSENT;
				pl = absl;
			} else {
				st__acc_done(a);
			}
		}
		if (n + pl + 2 > sizeof(out)) {
			fits = false;
			break;
		}
		memcpy(out + n, put, pl);
		n += pl;
		if (*e)
			out[n++] = ':';
		p = *e ? e + 1 : e;
	}
	out[n] = 0;
	char **entry = hidden && fits ? env_entry("LOCPATH") : NULL;
	char *held = NULL;
	if (entry && swap_take(&loc_sw)) {
		memcpy(loc_env, out, n + 1);
		held = swap_put(&loc_sw, entry, loc_env);
		*slot = entry;
	}
	st__leave(&c);
	errno = c.saved_errno;
	return held;
}
/*
 * The swaps above write environ, which the program's other threads read
 * meanwhile: an exec or spawn of another thread copied the stand-in into a
 * new program's environment (TZ=:/proc/-1/..., for good), and a fork made
 * then left it in the child's environ and the swap's lock taken.
 * st__env_unswap(e): the entry to pass on for environment entry e: the
 * value a swap under way took out when e is its stand-in, else e (the exec
 * and spawn wrappers' env_fix).  st__env_unswap_child: in a forked child,
 * a swap another thread of the parent was making is undone (that thread is
 * not in the child).  Async-signal-safe.
 */
const char *st__env_unswap(const char *e)
{
	if (e == tz_sub_dir || e == tz_sub_tz)
		return swap_held(&tz_sw, e);
	if (e == tz_sub_dflt)
		return NULL;
	return e == loc_env ? swap_held(&loc_sw, e) : e;
}
void st__env_shell_enter(void)
{
	atomic_fetch_add(&env_shells, 1);
	struct env_swap *all[] = {&tz_sw, &loc_sw};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		/* (this thread's own, interrupted by a signal handler: not
		 * waited for) */
		if (swaps_mine & all[i]->bit)
			continue;
		while (atomic_flag_test_and_set(&all[i]->lock))
			sched_yield();
		swap_drop(all[i]);
	}
}
void st__env_shell_leave(void) { atomic_fetch_sub(&env_shells, 1); }
void st__env_unswap_child(void)
{
	/* the child's one thread: no fork, shell or insertion of another
	 * under way */
	atomic_store(&tz_forks, 0);
	atomic_store(&env_shells, 0);
	atomic_store(&tz_envop, false);
	swap_undo_child(&tz_sw);
	tz_uninsert_child();
	swap_undo_child(&loc_sw);
}

/*
 * getenv and secure_getenv: the program's other threads (and its signal
 * handlers) read the environment while a swap runs; the stand-in is what
 * libc's own call is to see (its tzset's and setlocale's getenv are
 * libc-internal calls, which no wrapper sees), not the variable's value.
 * A value inside a stand-in is answered with the value the swap took out,
 * at the same offset (the stand-in and the entry it replaced begin with the
 * same "NAME=").  Other direct readers of environ still see the stand-in
 * while it is there.  Async-signal-safe as libc's getenv.
 */
static char *env_value(char *v)
{
	uintptr_t p = (uintptr_t)v;
	uintptr_t base;
	struct env_swap *w = &tz_sw;
	/* an entry put in for a TZ not set: still not set */
	if (p - (uintptr_t)tz_sub_dflt < sizeof(tz_sub_dflt))
		return NULL;
	if (p - (base = (uintptr_t)tz_sub_tz) < sizeof(tz_sub_tz) ||
	    p - (base = (uintptr_t)tz_sub_dir) < sizeof(tz_sub_dir)) {
		w = &tz_sw;
	} else if (p - (base = (uintptr_t)loc_env) < sizeof(loc_env)) {
		w = &loc_sw;
	} else {
		return v;
	}
	char *h = atomic_load_explicit(&w->held, memory_order_acquire);
	return h ? h + (p - base) : v;
}
/* A SANDTRACE_* name environ does not hold (init.c env_hide took it out of
 * the program's copy) is answered from the environment the process started
 * with: a program that joins the trace itself (a nested `sandtrace run`
 * looking for SANDTRACE_LIB, a tool reading SANDTRACE_SOCKET) still finds
 * it; `env` and environ do not show it.  Only from the initial stack's
 * array (never freed), and not SANDTRACE_EXE (this exec's alone). */
static char *env_hidden(const char *name)
{
	char **e = st__g.env_clean ? st__g.env_from : NULL;
	if (!e || e != st__g.argv + st__g.argc + 1 || strncmp(name, "SANDTRACE_", 10) != 0 ||
	    !strcmp(name, SANDTRACE_ENV_EXE) || strchr(name, '='))
		return NULL;
	size_t n = strlen(name);
	for (; *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}
EXPORT char *getenv(const char *name)
{
	char *v = env_value(REAL(getenv)(name));
	return v || name[0] != 'S' ? v : env_hidden(name);
}
EXPORT char *secure_getenv(const char *name)
{
	char *v = env_value(REAL(secure_getenv)(name));
	/* (none for a set-id program, as libc answers) */
	return v || name[0] != 'S' || st__auxval(AT_SECURE) ? v : env_hidden(name);
}
/* its older name (glibc's alias, a compat symbol) */
EXPORT char *__secure_getenv(const char *name) ST_ALIAS(secure_getenv);

/* Is this mapped file a locale's: LC_*, SYS_LC_MESSAGES, locale-archive? */
static bool loc_file(const char *path, size_t len)
{
	const char *b = path + len;
	while (b > path && b[-1] != '/')
		b--;
	return !strncmp(b, "LC_", 3) || !strcmp(b, "SYS_LC_MESSAGES") || !strcmp(b, "locale-archive");
}

/* Is this mapped file a message catalog: *.mo? */
static bool mo_file(const char *path, size_t len)
{
	return len > 3 && !strcmp(path + len - 3, ".mo");
}

/* Record each file the process has mapped that is(path, len) picks (read;
 * the arena keeps one record of each).  Raw reads of /proc/self/maps into
 * a stack buffer: no malloc, no stdio.  Preserves errno. */
static void maps_note(bool (*is)(const char *, size_t))
{
	struct st_call c;
	if (!st__enter(&c))
		return;
	int fd = (int)ST_SYSCALL(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		char buf[8192];
		size_t have = 0;
		for (;;) {
			ssize_t r = ST_SYSCALL(SYS_read, fd, buf + have, sizeof(buf) - 1 - have);
			if (r <= 0)
				break;
			have += (size_t)r;
			buf[have] = 0;
			char *line = buf, *nl;
			while ((nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
				*nl = 0;
				char *path = strchr(line, '/');
				size_t pl = path ? (size_t)(nl - path) : 0;
				if (path && !strstr(path, " (deleted)") && is(path, pl))
					st__record_path0(AT_FDCWD, path, K_R, false, 0);
				line = nl + 1;
			}
			have -= (size_t)(line - buf);
			memmove(buf, line, have);
			if (have >= sizeof(buf) - 1)
				have = 0; /* a line longer than the buffer: dropped */
		}
		ST_SYSCALL(SYS_close, fd);
	}
	st__leave(&c);
	errno = c.saved_errno;
}

/* Is this call one the wrappers look at: a locale named (not a query,
 * NULL, nor "C" or "POSIX", which are built in) while LOCPATH is set?
 * Without LOCPATH the files are the system's (/usr/lib/locale): not
 * recorded, which spares the common setlocale(LC_ALL, "") of each process
 * the read of its maps. */
static bool loc_loads(const char *name)
{
	const char *v;
	return name && strcmp(name, "C") && strcmp(name, "POSIX") && (v = getenv("LOCPATH")) && *v;
}

EXPORT char *setlocale(int category, const char *name)
{
	if (!loc_loads(name))
		return REAL(setlocale)(category, name);
	char **slot;
	char *held = loc_swap(&slot);
	char *r = REAL(setlocale)(category, name);
	swap_restore(&loc_sw, slot, held);
	if (r && loc_loads(r))
		maps_note(loc_file);
	if (r && (category == LC_ALL || category == LC_MESSAGES))
		atomic_store_explicit(&mo_pending, true, memory_order_relaxed);
	return r;
}
EXPORT locale_t newlocale(int mask, const char *name, locale_t base)
{
	if (!loc_loads(name))
		return REAL(newlocale)(mask, name, base);
	char **slot;
	char *held = loc_swap(&slot);
	locale_t r = REAL(newlocale)(mask, name, base);
	swap_restore(&loc_sw, slot, held);
	if (r)
		maps_note(loc_file);
	return r;
}
/* newlocale's other public name (glibc's alias) */
EXPORT locale_t __newlocale(int mask, const char *name, locale_t base) ST_ALIAS(newlocale);

/*
 * gettext: a message is looked up in DIR/LANG/LC_MESSAGES/DOMAIN.mo, DIR the
 * directory bindtextdomain bound to the domain, loaded (opened and mapped)
 * by libc's internal open on the first lookup of that domain in that
 * language.  A bound directory the sandbox hides is a violation and is
 * bound as a place that is never there (messages stay untranslated, as
 * with a missing one); bindtextdomain then returns that place.  After a
 * lookup, when the catalogs may have changed (the first lookup, or the first
 * after a bindtextdomain, a textdomain, a setlocale of the messages, or a
 * lookup in another domain than the last: mo_pending), the catalogs the
 * process has mapped are recorded (at most 64 times a process: a program
 * that switches domains at each message does not read its maps each time).
 */
static _Atomic int mo_scans;
static const char *_Atomic mo_last; /* the domain of the last lookup */

/* The messages' locale is "C" or "POSIX" for the whole process: libc loads
 * no catalog (and ignores LANGUAGE), so there is nothing to read the maps
 * for.  A thread with a locale of its own (uselocale) is not asked about. */
static bool mo_c_locale(void)
{
	if (uselocale((locale_t)0) != LC_GLOBAL_LOCALE)
		return false;
	const char *l = REAL(setlocale)(LC_MESSAGES, NULL); /* a query: no lock, no file */
	return l && (st__streq(l, "C") || st__streq(l, "POSIX"));
}

static void mo_after(const char *domain)
{
	if (domain && atomic_load_explicit(&mo_last, memory_order_relaxed) != domain) {
		atomic_store_explicit(&mo_last, domain, memory_order_relaxed);
		atomic_store_explicit(&mo_pending, true, memory_order_relaxed);
	}
	/* still pending in the C locale: a setlocale later may load catalogs */
	if (!atomic_load_explicit(&mo_pending, memory_order_relaxed) || mo_c_locale())
		return;
	atomic_store_explicit(&mo_pending, false, memory_order_relaxed);
	if (atomic_fetch_add_explicit(&mo_scans, 1, memory_order_relaxed) < 64)
		maps_note(mo_file);
}

EXPORT char *bindtextdomain(const char *domain, const char *dir)
{
	atomic_store_explicit(&mo_pending, true, memory_order_relaxed);
	struct st_call c;
	if (!dir || !*dir || !st__listing_filtered() || !st__enter(&c))
		return REAL(bindtextdomain)(domain, dir);
	struct st_acc *a = &st__tls_acc[0];
	st__acc_init(a, AT_FDCWD, dir, K_R, false);
	bool hidden = st__pre(a) != 0; /* a violation, recorded */
	if (!hidden)
		st__acc_done(a);
	st__leave(&c);
	errno = c.saved_errno;
	return REAL(bindtextdomain)(domain, hidden ? ST_ABSENT : dir);
}
EXPORT char *textdomain(const char *domain)
{
	if (domain)
		atomic_store_explicit(&mo_pending, true, memory_order_relaxed);
	return REAL(textdomain)(domain);
}
#define MO_LOOKUP(domain, call)                                                                    \
	do {                                                                                       \
		char *r_ = call;                                                                   \
		int e_ = errno;                                                                    \
		mo_after(domain);                                                                  \
		errno = e_;                                                                        \
		return r_;                                                                         \
	} while (0)
EXPORT char *gettext(const char *id) { MO_LOOKUP(NULL, REAL(gettext)(id)); }
EXPORT char *dgettext(const char *domain, const char *id)
{
	MO_LOOKUP(domain, REAL(dgettext)(domain, id));
}
EXPORT char *dcgettext(const char *domain, const char *id, int category)
{
	MO_LOOKUP(domain, REAL(dcgettext)(domain, id, category));
}
/* their other public names (glibc's aliases) */
EXPORT char *__dgettext(const char *domain, const char *id) ST_ALIAS(dgettext);
EXPORT char *__dcgettext(const char *domain, const char *id, int category) ST_ALIAS(dcgettext);
EXPORT char *ngettext(const char *id, const char *plural, unsigned long n)
{
	MO_LOOKUP(NULL, REAL(ngettext)(id, plural, n));
}
EXPORT char *dngettext(const char *domain, const char *id, const char *plural, unsigned long n)
{
	MO_LOOKUP(domain, REAL(dngettext)(domain, id, plural, n));
}
EXPORT char *dcngettext(const char *domain, const char *id, const char *plural, unsigned long n,
			int category)
{
	MO_LOOKUP(domain, REAL(dcngettext)(domain, id, plural, n, category));
}

/*
 * The user and group databases: glibc's nss reads /etc/nsswitch.conf and,
 * for the "files" (or "compat") source, /etc/passwd, /etc/group or
 * /etc/shadow with its internal opens, which no wrapper sees.  After each
 * lookup the files it read are recorded: the configuration, and the
 * database's file when the configuration names that source for it (or has
 * no line for it, or is missing: glibc's default is the files).  They are
 * judged, so a file the sandbox denies is a violation in the report, but the
 * lookup is not refused (as a library the loader mapped: what nss does with
 * a missing file depends on the other sources it is configured with).
 * errno is the lookup's.
 */
#define NSS_CONF "/etc/nsswitch.conf"
/* The network databases are read the same way (hosts, services, protocols,
 * networks, rpc, ethers: getaddrinfo, getservbyname, ...); a lookup of the
 * hosts also reads the resolver's configuration first (host.conf,
 * resolv.conf), whatever the sources. */
enum {
	NSS_PASSWD,
	NSS_GROUP,
	NSS_SHADOW,
	NSS_HOSTS,
	NSS_SERVICES,
	NSS_PROTOCOLS,
	NSS_NETWORKS,
	NSS_RPC,
	NSS_ETHERS,
	NSS_GSHADOW,
	NSS_ALIASES,
	NSS_NETGROUP,
	NSS_DBS
};
static const char *const nss_db[NSS_DBS] = {"passwd",	 "group",    "shadow",	"hosts",
					    "services",	 "protocols", "networks", "rpc",
					    "ethers",	 "gshadow",  "aliases",	"netgroup"};
static const char *const nss_file[NSS_DBS] = {
	"/etc/passwd",	  "/etc/group",	   "/etc/shadow", "/etc/hosts",	  "/etc/services",
	"/etc/protocols", "/etc/networks", "/etc/rpc",	  "/etc/ethers",  "/etc/gshadow",
	"/etc/aliases",	  "/etc/netgroup"};
enum { NSS_SLOT_CONF = NSS_DBS, NSS_SLOT_HOSTCONF, NSS_SLOT_RESOLV, NSS_SLOT_GAI, NSS_SLOTS };
/* per database: 0 not read yet, 1 the files source, 2 other sources only;
 * read once per process (a configuration edited during the run is not
 * seen); relaxed: a race reads the file twice and stores the same answer */
static _Atomic unsigned char nss_src[NSS_DBS];
/* per database's file, then the configuration and the resolver's two: -1
 * not asked yet, 0 there, else the errno of looking it up (same contract
 * as nss_src) */
static _Atomic int nss_err[NSS_SLOTS] = {-1, -1, -1, -1, -1, -1, -1, -1,
					  -1, -1, -1, -1, -1, -1, -1, -1};
_Static_assert(NSS_SLOTS == 16, "nss_err's initialiser");

/* Does the configuration's line for db name "files" or "compat"?  Raw
 * system calls, a stack buffer: no malloc, no stdio. */
static bool nss_files_source(const char *db)
{
	char buf[4096];
	int fd = (int)ST_SYSCALL(SYS_openat, AT_FDCWD, NSS_CONF, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	ssize_t n = ST_SYSCALL(SYS_read, fd, buf, sizeof(buf) - 1);
	ST_SYSCALL(SYS_close, fd);
	if (n <= 0)
		return true;
	buf[n] = 0;
	size_t dl = strlen(db);
	for (char *l = buf; l && *l;) {
		char *e = strchr(l, '\n');
		if (e)
			*e = 0;
		while (*l == ' ' || *l == '\t')
			l++;
		if (!strncmp(l, db, dl)) {
			char *q = l + dl;
			while (*q == ' ' || *q == '\t')
				q++;
			if (*q == ':') {
				char *hash = strchr(q, '#');
				if (hash)
					*hash = 0;
				for (char *w = strstr(q, "files"); w; w = strstr(w + 1, "files"))
					if ((w[-1] == ' ' || w[-1] == '\t' || w[-1] == ':') &&
					    (!w[5] || w[5] == ' ' || w[5] == '\t' || w[5] == '['))
						return true;
				return strstr(q, "compat") != NULL;
			}
		}
		l = e ? e + 1 : NULL;
	}
	return true; /* no line: glibc's default */
}

/* Record the read of path (nss_err[i] its slot): whether it is there is
 * asked once per process (a lookup per getpwuid of `ls -l` would cost two
 * system calls). */
static void nss_read(int i, const char *path)
{
	int e = atomic_load_explicit(&nss_err[i], memory_order_relaxed);
	if (e < 0) {
		e = ST_SYSCALL(SYS_faccessat, AT_FDCWD, path, F_OK) == 0 ? 0 : errno;
		atomic_store_explicit(&nss_err[i], e, memory_order_relaxed);
	}
	st__record_path0(AT_FDCWD, path, K_R, false, e);
}

static void nss_note(int db)
{
	struct st_call c;
	if (!st__enter(&c))
		return;
	unsigned src = atomic_load_explicit(&nss_src[db], memory_order_relaxed);
	if (!src) {
		src = nss_files_source(nss_db[db]) ? 1 : 2;
		atomic_store_explicit(&nss_src[db], (unsigned char)src, memory_order_relaxed);
	}
	if (db == NSS_HOSTS) {
		nss_read(NSS_SLOT_HOSTCONF, "/etc/host.conf");
		nss_read(NSS_SLOT_RESOLV, "/etc/resolv.conf");
	}
	nss_read(NSS_SLOT_CONF, NSS_CONF);
	if (src == 1)
		nss_read(db, nss_file[db]);
	st__leave(&c);
	errno = c.saved_errno;
}

/* the user database read by a lookup libc makes inside another public
 * function (glob's and wordexp's tilde, cuserid, getpw): shim.h */
void st__nss_passwd(void)
{
	int saved = errno;
	nss_note(NSS_PASSWD);
	errno = saved;
}
EXPORT char *cuserid(char *s)
{
	char *r = REAL(cuserid)(s);
	st__nss_passwd();
	return r;
}
EXPORT int getpw(uid_t uid, char *buf)
{
	int r = REAL(getpw)(uid, buf);
	st__nss_passwd();
	return r;
}

#define NSS_LOOKUP(db, call)                                                                       \
	do {                                                                                       \
		typeof(call) r_ = call;                                                            \
		nss_note(db);                                                                      \
		return r_;                                                                         \
	} while (0)

EXPORT struct passwd *getpwnam(const char *name) { NSS_LOOKUP(NSS_PASSWD, REAL(getpwnam)(name)); }
EXPORT struct passwd *getpwuid(uid_t uid) { NSS_LOOKUP(NSS_PASSWD, REAL(getpwuid)(uid)); }
EXPORT int getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t n,
		      struct passwd **res)
{
	NSS_LOOKUP(NSS_PASSWD, REAL(getpwnam_r)(name, pw, buf, n, res));
}
EXPORT int getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t n, struct passwd **res)
{
	NSS_LOOKUP(NSS_PASSWD, REAL(getpwuid_r)(uid, pw, buf, n, res));
}
EXPORT struct passwd *getpwent(void) { NSS_LOOKUP(NSS_PASSWD, REAL(getpwent)()); }
EXPORT struct group *getgrnam(const char *name) { NSS_LOOKUP(NSS_GROUP, REAL(getgrnam)(name)); }
EXPORT struct group *getgrgid(gid_t gid) { NSS_LOOKUP(NSS_GROUP, REAL(getgrgid)(gid)); }
EXPORT int getgrnam_r(const char *name, struct group *gr, char *buf, size_t n, struct group **res)
{
	NSS_LOOKUP(NSS_GROUP, REAL(getgrnam_r)(name, gr, buf, n, res));
}
EXPORT int getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t n, struct group **res)
{
	NSS_LOOKUP(NSS_GROUP, REAL(getgrgid_r)(gid, gr, buf, n, res));
}
EXPORT struct group *getgrent(void) { NSS_LOOKUP(NSS_GROUP, REAL(getgrent)()); }
EXPORT int getgrouplist(const char *user, gid_t group, gid_t *groups, int *ngroups)
{
	NSS_LOOKUP(NSS_GROUP, REAL(getgrouplist)(user, group, groups, ngroups));
}
EXPORT int initgroups(const char *user, gid_t group)
{
	NSS_LOOKUP(NSS_GROUP, REAL(initgroups)(user, group));
}
EXPORT struct spwd *getspnam(const char *name) { NSS_LOOKUP(NSS_SHADOW, REAL(getspnam)(name)); }
EXPORT int getspnam_r(const char *name, struct spwd *sp, char *buf, size_t n, struct spwd **res)
{
	NSS_LOOKUP(NSS_SHADOW, REAL(getspnam_r)(name, sp, buf, n, res));
}

/* the network databases: the same lookups, recorded after the call */
#define NSS_FN(ret, name, params, db, args)                                                        \
	EXPORT ret name params { NSS_LOOKUP(db, REAL(name) args); }
NSS_FN(struct hostent *, gethostbyname, (const char *n), NSS_HOSTS, (n))
NSS_FN(struct hostent *, gethostbyname2, (const char *n, int af), NSS_HOSTS, (n, af))
NSS_FN(struct hostent *, gethostbyaddr, (const void *a, socklen_t l, int t), NSS_HOSTS, (a, l, t))
NSS_FN(int, gethostbyname_r,
       (const char *n, struct hostent *h, char *b, size_t bl, struct hostent **r, int *e),
       NSS_HOSTS, (n, h, b, bl, r, e))
NSS_FN(int, gethostbyname2_r,
       (const char *n, int af, struct hostent *h, char *b, size_t bl, struct hostent **r, int *e),
       NSS_HOSTS, (n, af, h, b, bl, r, e))
NSS_FN(int, gethostbyaddr_r,
       (const void *a, socklen_t l, int t, struct hostent *h, char *b, size_t bl,
	struct hostent **r, int *e),
       NSS_HOSTS, (a, l, t, h, b, bl, r, e))
NSS_FN(struct hostent *, gethostent, (void), NSS_HOSTS, ())
NSS_FN(struct servent *, getservbyname, (const char *n, const char *p), NSS_SERVICES, (n, p))
NSS_FN(struct servent *, getservbyport, (int port, const char *p), NSS_SERVICES, (port, p))
NSS_FN(int, getservbyname_r,
       (const char *n, const char *p, struct servent *s, char *b, size_t bl, struct servent **r),
       NSS_SERVICES, (n, p, s, b, bl, r))
NSS_FN(int, getservbyport_r,
       (int port, const char *p, struct servent *s, char *b, size_t bl, struct servent **r),
       NSS_SERVICES, (port, p, s, b, bl, r))
NSS_FN(struct servent *, getservent, (void), NSS_SERVICES, ())
NSS_FN(struct protoent *, getprotobyname, (const char *n), NSS_PROTOCOLS, (n))
NSS_FN(struct protoent *, getprotobynumber, (int num), NSS_PROTOCOLS, (num))
NSS_FN(int, getprotobyname_r,
       (const char *n, struct protoent *pe, char *b, size_t bl, struct protoent **r),
       NSS_PROTOCOLS, (n, pe, b, bl, r))
NSS_FN(int, getprotobynumber_r,
       (int num, struct protoent *pe, char *b, size_t bl, struct protoent **r), NSS_PROTOCOLS,
       (num, pe, b, bl, r))
NSS_FN(struct protoent *, getprotoent, (void), NSS_PROTOCOLS, ())
NSS_FN(struct netent *, getnetbyname, (const char *n), NSS_NETWORKS, (n))
NSS_FN(struct netent *, getnetbyaddr, (uint32_t net, int t), NSS_NETWORKS, (net, t))
NSS_FN(struct netent *, getnetent, (void), NSS_NETWORKS, ())
NSS_FN(struct rpcent *, getrpcbyname, (const char *n), NSS_RPC, (n))
NSS_FN(struct rpcent *, getrpcbynumber, (int num), NSS_RPC, (num))
NSS_FN(struct rpcent *, getrpcent, (void), NSS_RPC, ())
/* the reentrant forms of the walks and of the network lookups, the shadow
 * walk, and the databases nothing above reads: gshadow, aliases, netgroup */
NSS_FN(int, getpwent_r, (struct passwd *p, char *b, size_t bl, struct passwd **r), NSS_PASSWD,
       (p, b, bl, r))
NSS_FN(int, getgrent_r, (struct group *g, char *b, size_t bl, struct group **r), NSS_GROUP,
       (g, b, bl, r))
NSS_FN(struct spwd *, getspent, (void), NSS_SHADOW, ())
NSS_FN(int, getspent_r, (struct spwd *sp, char *b, size_t bl, struct spwd **r), NSS_SHADOW,
       (sp, b, bl, r))
NSS_FN(int, gethostent_r,
       (struct hostent *h, char *b, size_t bl, struct hostent **r, int *e), NSS_HOSTS,
       (h, b, bl, r, e))
NSS_FN(int, getservent_r, (struct servent *se, char *b, size_t bl, struct servent **r),
       NSS_SERVICES, (se, b, bl, r))
NSS_FN(int, getprotoent_r, (struct protoent *pe, char *b, size_t bl, struct protoent **r),
       NSS_PROTOCOLS, (pe, b, bl, r))
NSS_FN(int, getnetent_r,
       (struct netent *ne, char *b, size_t bl, struct netent **r, int *e), NSS_NETWORKS,
       (ne, b, bl, r, e))
NSS_FN(int, getnetbyname_r,
       (const char *n, struct netent *ne, char *b, size_t bl, struct netent **r, int *e),
       NSS_NETWORKS, (n, ne, b, bl, r, e))
NSS_FN(int, getnetbyaddr_r,
       (uint32_t net, int t, struct netent *ne, char *b, size_t bl, struct netent **r, int *e),
       NSS_NETWORKS, (net, t, ne, b, bl, r, e))
NSS_FN(int, getrpcent_r, (struct rpcent *re, char *b, size_t bl, struct rpcent **r), NSS_RPC,
       (re, b, bl, r))
NSS_FN(int, getrpcbyname_r,
       (const char *n, struct rpcent *re, char *b, size_t bl, struct rpcent **r), NSS_RPC,
       (n, re, b, bl, r))
NSS_FN(int, getrpcbynumber_r,
       (int num, struct rpcent *re, char *b, size_t bl, struct rpcent **r), NSS_RPC,
       (num, re, b, bl, r))
NSS_FN(struct sgrp *, getsgnam, (const char *n), NSS_GSHADOW, (n))
NSS_FN(int, getsgnam_r, (const char *n, struct sgrp *sg, char *b, size_t bl, struct sgrp **r),
       NSS_GSHADOW, (n, sg, b, bl, r))
NSS_FN(struct sgrp *, getsgent, (void), NSS_GSHADOW, ())
NSS_FN(struct aliasent *, getaliasbyname, (const char *n), NSS_ALIASES, (n))
NSS_FN(int, getaliasbyname_r,
       (const char *n, struct aliasent *ae, char *b, size_t bl, struct aliasent **r),
       NSS_ALIASES, (n, ae, b, bl, r))
NSS_FN(struct aliasent *, getaliasent, (void), NSS_ALIASES, ())
NSS_FN(int, innetgr, (const char *g, const char *h, const char *u, const char *d), NSS_NETGROUP,
       (g, h, u, d))
NSS_FN(int, setnetgrent, (const char *g), NSS_NETGROUP, (g))
NSS_FN(int, ether_hostton, (const char *h, struct ether_addr *a), NSS_ETHERS, (h, a))
NSS_FN(int, ether_ntohost, (char *h, const struct ether_addr *a), NSS_ETHERS, (h, a))

/* getaddrinfo and getnameinfo: the hosts only for a name that is not a
 * numeric address (nor asked to be one), the services only for a service
 * that is not a number; then as above */
static bool numeric_host(const char *n)
{
	unsigned char b[sizeof(struct in6_addr)];
	struct in_addr a4;
	return inet_aton(n, &a4) || inet_pton(AF_INET6, n, b) == 1;
}
static bool numeric_serv(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}
/* Did getaddrinfo sort its answer: more than one address (one address is
 * listed once per socket type)?  glibc reads /etc/gai.conf for the sort,
 * once a process (sysdeps/posix/getaddrinfo.c gaiconf_init): recorded, not
 * refused, as the nss files are. */
static bool gai_sorted(const struct addrinfo *ai)
{
	for (const struct addrinfo *p = ai ? ai->ai_next : NULL; p; p = p->ai_next)
		if (p->ai_addrlen != ai->ai_addrlen || !p->ai_addr || !ai->ai_addr ||
		    memcmp(p->ai_addr, ai->ai_addr, ai->ai_addrlen))
			return true;
	return false;
}
EXPORT int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
		       struct addrinfo **res)
{
	int r = REAL(getaddrinfo)(node, service, hints, res);
	int flags = hints ? hints->ai_flags : 0;
	int saved = errno;
	if (node && !(flags & AI_NUMERICHOST) && !numeric_host(node))
		nss_note(NSS_HOSTS);
	if (service && !(flags & AI_NUMERICSERV) && !numeric_serv(service))
		nss_note(NSS_SERVICES);
	if (r == 0 && gai_sorted(*res)) {
		struct st_call c;
		if (st__enter(&c)) {
			nss_read(NSS_SLOT_GAI, "/etc/gai.conf");
			st__leave(&c);
		}
	}
	errno = saved;
	return r;
}
EXPORT int getnameinfo(const struct sockaddr *sa, socklen_t len, char *host, socklen_t hl,
		       char *serv, socklen_t sl, int flags)
{
	int r = REAL(getnameinfo)(sa, len, host, hl, serv, sl, flags);
	int saved = errno;
	bool inet = sa && (sa->sa_family == AF_INET || sa->sa_family == AF_INET6);
	if (inet && host && hl && !(flags & NI_NUMERICHOST))
		nss_note(NSS_HOSTS);
	if (inet && serv && sl && !(flags & NI_NUMERICSERV))
		nss_note(NSS_SERVICES);
	errno = saved;
	return r;
}

/* The resolver's own entry points read /etc/resolv.conf (and reload it
 * when it changed) by libc's internal fopen, whatever nsswitch.conf says
 * (resolv/res_init.c): recorded after the call, not refused, as the nss
 * files.  res_init and res_ninit are __res_init and __res_ninit for a
 * program (resolv.h); the query calls have both names. */
#define RES_FN(ret, name, params, args)                                                            \
	EXPORT ret name params                                                                     \
	{                                                                                          \
		ret r_ = REAL(name) args;                                                          \
		int saved_ = errno;                                                                \
		struct st_call c_;                                                                 \
		if (st__enter(&c_)) {                                                              \
			nss_read(NSS_SLOT_RESOLV, "/etc/resolv.conf");                            \
			st__leave(&c_);                                                            \
		}                                                                                  \
		errno = saved_;                                                                    \
		return r_;                                                                         \
	}
RES_FN(int, __res_init, (void), ())
RES_FN(int, __res_ninit, (struct __res_state *s), (s))
RES_FN(int, res_query, (const char *d, int c, int t, unsigned char *a, int l), (d, c, t, a, l))
RES_FN(int, res_search, (const char *d, int c, int t, unsigned char *a, int l), (d, c, t, a, l))
RES_FN(int, res_querydomain,
       (const char *n, const char *d, int c, int t, unsigned char *a, int l),
       (n, d, c, t, a, l))
RES_FN(int, res_send, (const unsigned char *m, int ml, unsigned char *a, int l), (m, ml, a, l))
EXPORT int __res_query(const char *d, int c, int t, unsigned char *a, int l) ST_ALIAS(res_query);
EXPORT int __res_search(const char *d, int c, int t, unsigned char *a, int l) ST_ALIAS(res_search);
EXPORT int __res_querydomain(const char *n, const char *d, int c, int t, unsigned char *a, int l)
	ST_ALIAS(res_querydomain);
EXPORT int __res_send(const unsigned char *m, int ml, unsigned char *a, int l) ST_ALIAS(res_send);

/*
 * POSIX shared memory and named semaphores are files in glibc's directory
 * /dev/shm: "/dev/shm/NAME" and "/dev/shm/sem.NAME", NAME without its
 * leading slashes.  A name glibc refuses before it opens anything (empty,
 * with a slash inside, too long) is forwarded unjudged for glibc's error.
 */
#define SHM_DIR "/dev/shm/"
static const char *shm_path(char *buf, size_t cap, const char *name, const char *prefix)
{
	if (!name)
		return NULL;
	while (*name == '/')
		name++;
	size_t n = strlen(name), pl = strlen(prefix);
	if (n == 0 || memchr(name, '/', n) || pl + n >= NAME_MAX ||
	    sizeof(SHM_DIR) + pl + n > cap)
		return NULL;
	memcpy(buf, SHM_DIR, sizeof(SHM_DIR) - 1);
	memcpy(buf + sizeof(SHM_DIR) - 1, prefix, pl);
	memcpy(buf + sizeof(SHM_DIR) - 1 + pl, name, n + 1);
	return buf;
}
EXPORT int shm_open(const char *name, int flags, mode_t mode)
{
	char buf[sizeof(SHM_DIR) + NAME_MAX + 1];
	const char *path = shm_path(buf, sizeof(buf), name, "");
	if (!path)
		return REAL(shm_open)(name, flags, mode);
	/* glibc opens it with O_NOFOLLOW */
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, ST_NOPROBE(path), st_open_kind(flags), true,
		 false, REAL(shm_open)(name, flags, mode));
}
/* shm_unlink and sem_unlink: a removal of the name's file (prefix: see
 * shm_path), by real */
static int shm_name_unlink(const char *name, const char *prefix, int (*real)(const char *))
{
	char buf[sizeof(SHM_DIR) + NAME_MAX + 1];
	const char *path = shm_path(buf, sizeof(buf), name, prefix);
	if (!path)
		return real(name);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, ST_NOPROBE(path), K_W, NF_NAME, false, real(name));
}
EXPORT int shm_unlink(const char *name)
{
	return shm_name_unlink(name, "", REAL(shm_unlink));
}
/* A semaphore is opened for reading and writing (its count is shared
 * memory the caller changes), or made under its name: a write either way. */
EXPORT sem_t *sem_open(const char *name, int flags, ...)
{
	mode_t mode = 0;
	unsigned value = 0;
	if (flags & O_CREAT) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		value = va_arg(ap, unsigned);
		va_end(ap);
	}
	char buf[sizeof(SHM_DIR) + NAME_MAX + 1];
	const char *path = shm_path(buf, sizeof(buf), name, "sem.");
	if (!path)
		return REAL(sem_open)(name, flags, mode, value);
	ONE_PATH(sem_t *, SEM_FAILED, (r_ == SEM_FAILED), AT_FDCWD, ST_NOPROBE(path), K_W, true,
		 false, REAL(sem_open)(name, flags, mode, value));
}
EXPORT int sem_unlink(const char *name)
{
	return shm_name_unlink(name, "sem.", REAL(sem_unlink));
}
/* ftok names a file by its device and inode: a stat */
EXPORT key_t ftok(const char *path, int id)
{
	ONE_PATH(key_t, -1, (r_ == -1), AT_FDCWD, path, K_Q, false, false, REAL(ftok)(path, id));
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
/* The old ABI forwards to the next definition of the same old symbol (libc's
 * compat version, or another preload such as libfakeroot, whose own stat
 * may call __xstat: forwarding to stat instead would loop back here). */
#define XFWD(old, oargs, new, nargs)                                                               \
	((void *)REAL(old) != (void *)st__enosys_stub ? REAL(old) oargs : REAL(new) nargs)

EXPORT int __xstat(int ver, const char *path, struct stat *st)
{
	XSTAT_BAD(ver);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false, XFWD(__xstat, (ver, path, st), stat, (path, st)));
}
EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
	XSTAT_BAD(ver);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, true, false, XFWD(__lxstat, (ver, path, st), lstat, (path, st)));
}
EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	XSTAT_BAD(ver);
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_Q, AT_NOFOLLOW(flags), AT_EMPTY(flags),
		 XFWD(__fxstatat, (ver, dirfd, path, st, flags), fstatat, (dirfd, path, st, flags)));
}
EXPORT int __xstat64(int ver, const char *path, struct stat64 *st)
{
	XSTAT_BAD(ver);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false, XFWD(__xstat64, (ver, path, st), stat64, (path, st)));
}
EXPORT int __lxstat64(int ver, const char *path, struct stat64 *st)
{
	XSTAT_BAD(ver);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, true, false, XFWD(__lxstat64, (ver, path, st), lstat64, (path, st)));
}
EXPORT int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags)
{
	XSTAT_BAD(ver);
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_Q, AT_NOFOLLOW(flags), AT_EMPTY(flags),
		 XFWD(__fxstatat64, (ver, dirfd, path, st, flags), fstatat64, (dirfd, path, st, flags)));
}
EXPORT int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *stx)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_Q, AT_NOFOLLOW(flags), AT_EMPTY(flags),
		 REAL(statx)(dirfd, path, flags, mask, stx));
}

/* ---- file-system queries by path ---- */
EXPORT int statfs(const char *path, struct statfs *b)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false, REAL(statfs)(path, b));
}
EXPORT int statfs64(const char *path, struct statfs64 *b)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false, REAL(statfs64)(path, b));
}
/* statfs's other public name (glibc's alias) */
EXPORT int __statfs(const char *path, struct statfs *b) ST_ALIAS(statfs);
EXPORT int statvfs(const char *path, struct statvfs *b)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false, REAL(statvfs)(path, b));
}
EXPORT int statvfs64(const char *path, struct statvfs64 *b)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false,
		 REAL(statvfs64)(path, b));
}
/* -1 is also "no limit" (errno untouched): only a changed errno is a failure */
EXPORT long pathconf(const char *path, int name)
{
	ONE_PATH(long, -1, (r_ < 0 && errno != c_.saved_errno), AT_FDCWD, path, K_Q, false, false,
		 REAL(pathconf)(path, name));
}
EXPORT int name_to_handle_at(int dirfd, const char *path, struct file_handle *h, int *mnt,
			     int flags)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_Q, !(flags & AT_SYMLINK_FOLLOW),
		 AT_EMPTY(flags), REAL(name_to_handle_at)(dirfd, path, h, mnt, flags));
}
/* open_by_handle_at (CAP_DAC_READ_SEARCH) opens a file named by no path: a
 * handle taken anywhere, before the run too.  The file is first opened
 * O_PATH (no access, no O_TRUNC) to learn where it is, judged there like an
 * open with these flags, and recorded; one the sandbox refuses fails as a
 * handle of a file that is gone does (ESTALE). */
EXPORT int open_by_handle_at(int mount_fd, struct file_handle *h, int flags)
{
	struct st_call c;
	if (!st__enter(&c)) /* unchecked, refused: as its refusal */
		return ST_UNCHECKED(int, c, -1, ESTALE, NULL, REAL(open_by_handle_at)(mount_fd, h, flags));
	int probe = ST_FORWARD(REAL(open_by_handle_at)(mount_fd, h, O_PATH | O_CLOEXEC));
	if (probe < 0) { /* the kernel's error, for the real call to give */
		st__leave(&c);
		errno = c.saved_errno;
		return REAL(open_by_handle_at)(mount_fd, h, flags);
	}
	struct st_acc *a = &st__tls_acc[0];
	st__acc_init(a, probe, "", st_open_kind(flags), true);
	a->empty_path = true;
	a->probe_fd = true; /* a handle names any file: judged where it is */
	int e = st__pre(a);
	if (e) {
		ST_SYSCALL(SYS_close, probe);
		st__leave(&c);
		errno = ESTALE;
		return -1;
	}
	errno = c.saved_errno;
	int r = ST_FORWARD(REAL(open_by_handle_at)(mount_fd, h, flags));
	int after = errno;
	st__post(a, r < 0 ? after : 0);
	ST_SYSCALL(SYS_close, probe);
	st__leave(&c);
	errno = after;
	return r;
}
EXPORT int inotify_add_watch(int fd, const char *path, uint32_t mask)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, (mask & IN_DONT_FOLLOW) != 0, false,
		 REAL(inotify_add_watch)(fd, path, mask));
}

/* fanotify_mark: a watch on the name (a null name: the file of dirfd itself),
 * a query as inotify_add_watch's; FAN_MARK_FLUSH names nothing */
EXPORT int fanotify_mark(int fd, unsigned int flags, uint64_t mask, int dirfd, const char *path)
{
	if (flags & FAN_MARK_FLUSH)
		return REAL(fanotify_mark)(fd, flags, mask, dirfd, path);
	/* name: what is judged, and what the call reads (ST_REFUSAL sets it) */
	const char *name = path ? path : "";
	ONE_PATH(int, -1, FAILED_INT, dirfd, name, K_Q, (flags & FAN_MARK_DONT_FOLLOW) != 0,
		 path == NULL, REAL(fanotify_mark)(fd, flags, mask, dirfd, path ? name : NULL));
}

/*
 * ---- a unix socket's name ----
 * bind of a unix socket to a name makes a file there (a write of the name
 * itself, as mknod: an existing one, a link too, is EADDRINUSE); connect,
 * and the destination of a datagram (sendto, sendmsg, sendmmsg), look the
 * name up, following links (a query).  A name the sandbox hides is not
 * there (ENOENT), a bind in a visible place that may not be written is
 * EACCES, as for any other file.  Abstract names (a first byte 0), an
 * autobind (no name), other families and calls the kernel refuses before
 * it looks a name up (a name too long, a socket of another family, a
 * stream's or seqpacket's send, which ignores or refuses the address) are
 * forwarded unjudged.
 */
#define SUN_MAX (sizeof(((struct sockaddr_un *)0)->sun_path))
/* The file name of a unix socket address, in buf (SUN_MAX + 1 bytes), as
 * the kernel takes it: up to the first 0 or the address's end; NULL for
 * an address that names no file. */
static const char *sun_name(const struct sockaddr *sa, socklen_t len, char *buf)
{
	size_t head = offsetof(struct sockaddr_un, sun_path);
	/* an unreadable address (NULL, (void *)-1): the call's EFAULT */
	if (len <= head || len > sizeof(struct sockaddr_un) || st__unreadable(sa) ||
	    sa->sa_family != AF_UNIX)
		return NULL;
	const char *p = ((const struct sockaddr_un *)sa)->sun_path;
	size_t n = 0;
	while (n < len - head && p[n]) {
		buf[n] = p[n];
		n++;
	}
	buf[n] = 0;
	return n ? buf : NULL;
}
/* Is fd a unix socket (of type want, or any type when want is 0)? */
static bool unix_socket(int fd, int want)
{
	int v = 0;
	socklen_t l = sizeof(v);
	if (ST_SYSCALL(SYS_getsockopt, fd, SOL_SOCKET, SO_DOMAIN, &v, &l) != 0 || v != AF_UNIX)
		return false;
	if (!want)
		return true;
	l = sizeof(v);
	return ST_SYSCALL(SYS_getsockopt, fd, SOL_SOCKET, SO_TYPE, &v, &l) == 0 && v == want;
}
EXPORT int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	char buf[SUN_MAX + 1];
	const char *path = sun_name(sa, len, buf);
	if (!path || !unix_socket(fd, 0))
		return REAL(bind)(fd, sa, len);
	/* path is a copy of the address's name: the call reads sa (not probed) */
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, ST_NOPROBE(path), K_W, NF_NAME, false,
		 REAL(bind)(fd, sa, len));
}
EXPORT int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	char buf[SUN_MAX + 1];
	const char *path = sun_name(sa, len, buf);
	if (!path || !unix_socket(fd, 0))
		return REAL(connect)(fd, sa, len);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, ST_NOPROBE(path), K_Q, false, false,
		 REAL(connect)(fd, sa, len));
}
/* connect's other public name (glibc's alias) */
EXPORT int __connect(int fd, const struct sockaddr *sa, socklen_t len) ST_ALIAS(connect);
EXPORT ssize_t sendto(int fd, const void *b, size_t n, int flags, const struct sockaddr *sa,
		      socklen_t len)
{
	char buf[SUN_MAX + 1];
	const char *path = sun_name(sa, len, buf);
	if (!path || !unix_socket(fd, SOCK_DGRAM))
		return REAL(sendto)(fd, b, n, flags, sa, len);
	ONE_PATH(ssize_t, -1, FAILED_INT, AT_FDCWD, ST_NOPROBE(path), K_Q, false, false,
		 REAL(sendto)(fd, b, n, flags, sa, len));
}
EXPORT ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	char buf[SUN_MAX + 1];
	const char *path = !st__unreadable(m) ? sun_name(m->msg_name, m->msg_namelen, buf) : NULL;
	if (!path || !unix_socket(fd, SOCK_DGRAM))
		return REAL(sendmsg)(fd, m, flags);
	ONE_PATH(ssize_t, -1, FAILED_INT, AT_FDCWD, ST_NOPROBE(path), K_Q, false, false,
		 REAL(sendmsg)(fd, m, flags));
}
/* sendmmsg is the kernel's loop of sendmsg, one message after the other, which
 * stops at the first failure (then the count sent, or -1 for the first): with
 * a named destination among them, the same loop of the sendmsg wrapper */
EXPORT int sendmmsg(int fd, struct mmsghdr *v, unsigned int vlen, int flags)
{
	char buf[SUN_MAX + 1];
	unsigned i = 0;
	if (vlen > 1024) /* the kernel's UIO_MAXIOV: more are not sent */
		vlen = 1024;
	if (st__unreadable(v))
		return REAL(sendmmsg)(fd, v, vlen, flags);
	while (i < vlen && !sun_name(v[i].msg_hdr.msg_name, v[i].msg_hdr.msg_namelen, buf))
		i++;
	if (i >= vlen || !unix_socket(fd, SOCK_DGRAM))
		return REAL(sendmmsg)(fd, v, vlen, flags);
	int saved = errno;
	for (i = 0; i < vlen; i++) {
		ssize_t r = sendmsg(fd, &v[i].msg_hdr, flags);
		if (r < 0) {
			if (!i)
				return -1;
			break;
		}
		v[i].msg_len = (unsigned)r;
	}
	errno = saved;
	return (int)i;
}

/* ---- extended attributes: reading them is a query, changing them a write ---- */
EXPORT ssize_t getxattr(const char *path, const char *name, void *v, size_t n)
{
	ONE_PATH(ssize_t, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false,
		 REAL(getxattr)(path, name, v, n));
}
EXPORT ssize_t lgetxattr(const char *path, const char *name, void *v, size_t n)
{
	ONE_PATH(ssize_t, -1, FAILED_INT, AT_FDCWD, path, K_Q, true, false,
		 REAL(lgetxattr)(path, name, v, n));
}
EXPORT ssize_t listxattr(const char *path, char *list, size_t n)
{
	ONE_PATH(ssize_t, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false,
		 REAL(listxattr)(path, list, n));
}
EXPORT ssize_t llistxattr(const char *path, char *list, size_t n)
{
	ONE_PATH(ssize_t, -1, FAILED_INT, AT_FDCWD, path, K_Q, true, false,
		 REAL(llistxattr)(path, list, n));
}
EXPORT int setxattr(const char *path, const char *name, const void *v, size_t n, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, false, false,
		 REAL(setxattr)(path, name, v, n, flags));
}
EXPORT int lsetxattr(const char *path, const char *name, const void *v, size_t n, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, true, false,
		 REAL(lsetxattr)(path, name, v, n, flags));
}
EXPORT int removexattr(const char *path, const char *name)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, false, false,
		 REAL(removexattr)(path, name));
}
EXPORT int lremovexattr(const char *path, const char *name)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, true, false,
		 REAL(lremovexattr)(path, name));
}

/* ---- access family ---- */
/* W_OK asks whether a write would succeed: on a file the sandbox lets the
 * program see but not write, the answer is the write's, EACCES (the file is
 * there: a write refused as hidden is still EACCES here).  Judged after the
 * real call said yes; quiet (asking is not a violation). */
static int access_w(int r, int dirfd, const char *path, int mode, int flags)
{
	if (r != 0 || !(mode & W_OK))
		return r;
	struct st_call c;
	if (!st__enter(&c)) /* unchecked, refused: a write would be */
		return ST_UNCHECKED(int, c, -1, EACCES, NULL, r);
	int e = st__refused(dirfd, path, K_W, AT_NOFOLLOW(flags), AT_EMPTY(flags));
	st__leave(&c);
	errno = c.saved_errno;
	if (e) {
		errno = EACCES;
		return -1;
	}
	return r;
}
static int access_q(const char *path, int mode)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false, REAL(access)(path, mode));
}
static int faccessat_q(int dirfd, const char *path, int mode, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_Q, AT_NOFOLLOW(flags), AT_EMPTY(flags),
		 REAL(faccessat)(dirfd, path, mode, flags));
}
static int euidaccess_q(const char *path, int mode)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false,
		 REAL(euidaccess)(path, mode));
}
static int eaccess_q(const char *path, int mode)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_Q, false, false, REAL(eaccess)(path, mode));
}
EXPORT int access(const char *path, int mode)
{
	return access_w(access_q(path, mode), AT_FDCWD, path, mode, 0);
}
EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
	return access_w(faccessat_q(dirfd, path, mode, flags), dirfd, path, mode, flags);
}
EXPORT int euidaccess(const char *path, int mode)
{
	return access_w(euidaccess_q(path, mode), AT_FDCWD, path, mode, 0);
}
EXPORT int eaccess(const char *path, int mode)
{
	return access_w(eaccess_q(path, mode), AT_FDCWD, path, mode, 0);
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
/* _FORTIFY_SOURCE turns readlink/readlinkat with a known buffer size into these */
EXPORT ssize_t __readlink_chk(const char *path, char *buf, size_t len, size_t buflen)
{
	ONE_PATH(ssize_t, -1, FAILED_INT, AT_FDCWD, path, K_Q, true, false,
		 REAL(__readlink_chk)(path, buf, len, buflen));
}
EXPORT ssize_t __readlinkat_chk(int dirfd, const char *path, char *buf, size_t len, size_t buflen)
{
	ONE_PATH(ssize_t, -1, FAILED_INT, dirfd, path, K_Q, true, true,
		 REAL(__readlinkat_chk)(dirfd, path, buf, len, buflen));
}
EXPORT int link(const char *old, const char *new)
{
	TWO_PATHS(int, -1, FAILED_INT, AT_FDCWD, old, K_Q, true, false, AT_FDCWD, new, K_W, NF_NAME,
		  REAL(link)(old, new));
}
EXPORT int linkat(int od, const char *old, int nd, const char *new, int flags)
{
	/* the source of linkat(AT_EMPTY_PATH) or of /proc/self/fd/N names an
	 * open file (O_TMPFILE): both are mapped to the file the same way */
	TWO_PATHS(int, -1, FAILED_INT, od, old, K_Q, !(flags & AT_SYMLINK_FOLLOW),
		  AT_EMPTY(flags), nd, new, K_W, NF_NAME, REAL(linkat)(od, old, nd, new, flags));
}
/* a null target: the kernel copies it in and fails (EFAULT) before it looks
 * linkpath up, so linkpath is not judged (as TWO_PATHS's null names) */
EXPORT int symlink(const char *target, const char *linkpath)
{
	if (st__null(target))
		return REAL(symlink)(target, linkpath);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, linkpath, K_W, NF_NAME, false,
		 REAL(symlink)(target, linkpath));
}
EXPORT int symlinkat(const char *target, int dirfd, const char *linkpath)
{
	if (st__null(target))
		return REAL(symlinkat)(target, dirfd, linkpath);
	ONE_PATH(int, -1, FAILED_INT, dirfd, linkpath, K_W, NF_NAME, false,
		 REAL(symlinkat)(target, dirfd, linkpath));
}
/* realpath and friends: glibc resolves with internal lstat/readlink calls.
 * The name as spelled (the link itself) and its target are both queries,
 * both judged before the call: a refusal of either hides the answer.  Not
 * probed (ST_NOPROBE): glibc leaves in the caller's buffer the part it
 * resolved before it failed, which for ST_ABSENT is "/proc/-1", a name the
 * program never spelled; a refused call leaves the buffer as it was (its
 * content is unspecified after a failure), and its errno is ENOENT, which is
 * what a missing name gives (realpath checks no flags). */
#define REALPATH(call)                                                                             \
	TWO_PATHS(char *, NULL, (r_ == NULL), AT_FDCWD, ST_NOPROBE(path), K_Q, true, false,        \
		  AT_FDCWD, ST_NOPROBE(path), K_Q, false, call)
EXPORT char *realpath(const char *path, char *resolved)
{
	/* realpath@GLIBC_2.2.5 (shim/abi.c) takes no NULL buffer: EINVAL,
	 * the name not looked at */
	if (!resolved && st__old_abi(__builtin_return_address(0), ST_OLD_REALPATH)) {
		errno = EINVAL;
		return NULL;
	}
	REALPATH(REAL(realpath)(path, resolved));
}
EXPORT char *__realpath_chk(const char *path, char *resolved, size_t rlen)
{
	REALPATH(REAL(__realpath_chk)(path, resolved, rlen));
}
EXPORT char *canonicalize_file_name(const char *path)
{
	REALPATH(REAL(canonicalize_file_name)(path));
}

/* ---- namespace changes: every name that appears or disappears is a write ---- */
EXPORT int mkdir(const char *path, mode_t mode)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, NF_NAME, false, REAL(mkdir)(path, mode));
}
EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_W, NF_NAME, false,
		 REAL(mkdirat)(dirfd, path, mode));
}
EXPORT int rmdir(const char *path)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, NF_NAME, false, REAL(rmdir)(path));
}
EXPORT int unlink(const char *path)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, NF_NAME, false, REAL(unlink)(path));
}
EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_W, NF_NAME, false,
		 REAL(unlinkat)(dirfd, path, flags));
}
EXPORT int remove(const char *path)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, NF_NAME, false, REAL(remove)(path));
}
EXPORT int rename(const char *old, const char *new)
{
	TWO_PATHS(int, -1, FAILED_INT, AT_FDCWD, old, K_W, NF_NAME, false, AT_FDCWD, new, K_W, NF_NAME,
		  REAL(rename)(old, new));
}
EXPORT int renameat(int od, const char *old, int nd, const char *new)
{
	TWO_PATHS(int, -1, FAILED_INT, od, old, K_W, NF_NAME, false, nd, new, K_W, NF_NAME,
		  REAL(renameat)(od, old, nd, new));
}
EXPORT int renameat2(int od, const char *old, int nd, const char *new, unsigned int flags)
{
	TWO_PATHS(int, -1, FAILED_INT, od, old, K_W, NF_NAME, false, nd, new, K_W, NF_NAME,
		  REAL(renameat2)(od, old, nd, new, flags));
}
EXPORT int mknod(const char *path, mode_t mode, dev_t dev)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, NF_NAME, false,
		 REAL(mknod)(path, mode, dev));
}
EXPORT int mknodat(int dirfd, const char *path, mode_t mode, dev_t dev)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_W, NF_NAME, false,
		 REAL(mknodat)(dirfd, path, mode, dev));
}
EXPORT int mkfifo(const char *path, mode_t mode)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, NF_NAME, false, REAL(mkfifo)(path, mode));
}
EXPORT int mkfifoat(int dirfd, const char *path, mode_t mode)
{
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_W, NF_NAME, false,
		 REAL(mkfifoat)(dirfd, path, mode));
}

/* the pre-2.33 mknod ABI, forwarded to mknod/mknodat like __xstat to stat */
#define XMKNOD_BAD(ver)                                                                            \
	if ((ver) != 0 || !dev) {                                                                  \
		errno = EINVAL;                                                                    \
		return -1;                                                                         \
	}
EXPORT int __xmknod(int ver, const char *path, mode_t mode, dev_t *dev)
{
	XMKNOD_BAD(ver);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, NF_NAME, false,
		 XFWD(__xmknod, (ver, path, mode, dev), mknod, (path, mode, *dev)));
}
EXPORT int __xmknodat(int ver, int dirfd, const char *path, mode_t mode, dev_t *dev)
{
	XMKNOD_BAD(ver);
	ONE_PATH(int, -1, FAILED_INT, dirfd, path, K_W, NF_NAME, false,
		 XFWD(__xmknodat, (ver, dirfd, path, mode, dev), mknodat, (dirfd, path, mode, *dev)));
}

/* ---- metadata writes ---- */
EXPORT int chmod(const char *path, mode_t mode)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, false, false, REAL(chmod)(path, mode));
}
EXPORT int lchmod(const char *path, mode_t mode)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, true, false, REAL(lchmod)(path, mode));
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
	FD_WRITE(int, -1, FAILED_INT, fd, REAL(futimens)(fd, ts));
}
/* The metadata writes on a descriptor: the descriptor may be open read-only
 * (a file the sandbox lets the process read, not write), so the write is
 * judged and recorded on the file it names, as futimens is (glibc's futimes
 * reaches the kernel by an internal call, not through futimens). */
EXPORT int fchmod(int fd, mode_t mode)
{
	FD_WRITE(int, -1, FAILED_INT, fd, REAL(fchmod)(fd, mode));
}
EXPORT int fchown(int fd, uid_t u, gid_t g)
{
	FD_WRITE(int, -1, FAILED_INT, fd, REAL(fchown)(fd, u, g));
}
EXPORT int futimes(int fd, const struct timeval *t)
{
	FD_WRITE(int, -1, FAILED_INT, fd, REAL(futimes)(fd, t));
}
EXPORT int fsetxattr(int fd, const char *name, const void *v, size_t n, int flags)
{
	FD_WRITE(int, -1, FAILED_INT, fd, REAL(fsetxattr)(fd, name, v, n, flags));
}
EXPORT int fremovexattr(int fd, const char *name)
{
	FD_WRITE(int, -1, FAILED_INT, fd, REAL(fremovexattr)(fd, name));
}

/*
 * The file attribute writes of the ioctl interface: chattr's FS_IOC_SETFLAGS
 * (lsattr's flags: immutable, append-only, nodump, ...), xfs_io's and
 * file_setattr's FS_IOC_FSSETXATTR, the inode generation (FS_IOC_SETVERSION),
 * an encryption policy on an empty directory, fs-verity (which wants the file
 * open read-only and makes it read-only for good) and ext4's migration to
 * extents.  The kernel asks only that the caller own the file, not that the
 * descriptor be open for writing: chattr opens it O_RDONLY.  So a request of
 * these is judged and recorded as a write of the descriptor's file, as fchmod
 * is; every other request (terminals, sockets, devices, the queries) is
 * forwarded untouched.  The numbers are spelled here: <linux/fs.h> clashes with
 * <sys/mount.h> (shim.h).  Left: requests that change a whole file system
 * (FS_IOC_SETFSLABEL, EXT4_IOC_SETFSUUID, FITRIM, resizing: CAP_SYS_ADMIN) and
 * other file systems' private ones (btrfs, f2fs, xfs).
 */
struct st_fsxattr_ { /* struct fsxattr: only its size makes the number */
	uint32_t fsx_xflags, fsx_extsize, fsx_nextents, fsx_projid, fsx_cowextsize;
	unsigned char fsx_pad[8];
};
struct st_fsverity_enable_ { /* struct fsverity_enable_arg */
	uint32_t version, hash_algorithm, block_size, salt_size;
	uint64_t salt_ptr;
	uint32_t sig_size, reserved1;
	uint64_t sig_ptr, reserved2[11];
};
struct st_fscrypt_policy_v1_ {
	uint8_t version, contents_mode, filenames_mode, flags, master_key_descriptor[8];
};
static bool ioctl_writes(unsigned long req)
{
	switch (req) {
	case _IOW('f', 2, long):		/* FS_IOC_SETFLAGS (ext4's EXT4_IOC_SETFLAGS) */
	case _IOW('f', 2, int):			/* FS_IOC32_SETFLAGS */
	case _IOW('v', 2, long):		/* FS_IOC_SETVERSION (EXT4_IOC_SETVERSION) */
	case _IOW('v', 2, int):			/* FS_IOC32_SETVERSION */
	case _IOW('f', 4, long):		/* EXT4_IOC_SETVERSION_OLD */
	case _IOW('f', 4, int):			/* EXT4_IOC32_SETVERSION_OLD */
	case _IOW('X', 32, struct st_fsxattr_): /* FS_IOC_FSSETXATTR */
	case _IOR('f', 19, struct st_fscrypt_policy_v1_): /* FS_IOC_SET_ENCRYPTION_POLICY */
	case _IOW('f', 133, struct st_fsverity_enable_):  /* FS_IOC_ENABLE_VERITY */
	case _IO('f', 9):				  /* EXT4_IOC_MIGRATE */
		return true;
	default:
		return false;
	}
}
EXPORT int ioctl(int fd, unsigned long req, ...)
{
	/* the third argument, when there is one, is one word (a pointer or
	 * an int), forwarded as it came */
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (!ioctl_writes(req))
		return REAL(ioctl)(fd, req, arg);
	FD_WRITE(int, -1, FAILED_INT, fd, REAL(ioctl)(fd, req, arg));
}

/* ---- temporary files: judged on the template's directory, recorded by the final name ---- */
/*
 * TMPL_REFUSAL(type, e, call): the errno a refused mkstemp-style call gives,
 * as on a directory that does not exist (ST_REFUSAL's kind).  libc checks the
 * template (six X's before the suffix, a suffix length >= 0) before it
 * opens anything, and fills the X's before it fails: the call is made once
 * more on a copy of the template's last component below ST_ABSENT (where
 * its open or mkdir fails with ENOENT), its other errno (EINVAL) is given,
 * and the copy's letters go back into the caller's template, as a missing
 * directory leaves them.  The template variable is swapped for the copy and
 * back; nothing is created.
 */
#define TMPL_REFUSAL(type, e, call)                                                                \
	({                                                                                         \
		int re_ = (e);                                                                     \
		char *held_ = tmpl, *b_ = tmpl;                                                    \
		for (char *q_ = held_; *q_; q_++)                                                  \
			if (*q_ == '/')                                                            \
				b_ = q_ + 1;                                                       \
		size_t bl_ = st__strlen(b_);                                                       \
		char pb_[sizeof ST_ABSENT + NAME_MAX + 1];                                         \
		if ((re_ == ENOENT || re_ == EACCES) && bl_ <= NAME_MAX) {                         \
			st__copy_short(pb_, ST_ABSENT "/", sizeof ST_ABSENT);                      \
			st__copy_short(pb_ + sizeof ST_ABSENT, b_, bl_ + 1);                       \
			tmpl = pb_;                                                                \
			errno = 0;                                                                 \
			type pr_ = ST_FORWARD(call);                                               \
			int pe_ = errno;                                                           \
			tmpl = held_;                                                              \
			if (ST_FAILED_RESULT(pr_) && pe_ != 0 && pe_ != ENOENT)                    \
				re_ = pe_;                                                         \
			st__copy_short(b_, pb_ + sizeof ST_ABSENT, bl_);                           \
		}                                                                                  \
		re_;                                                                               \
	})
#define MKTEMP(call)                                                                               \
	do {                                                                                       \
		struct st_call c_;                                                                 \
		if (!tmpl)                                                                         \
			return call;                                                               \
		if (!st__enter(&c_))                                                               \
			return ST_UNCHECKED(int, c_, -1, EACCES, NULL, call);                      \
		struct st_acc *a_ = &st__tls_acc[0];                                               \
		st__acc_init(a_, AT_FDCWD, tmpl, K_W, true);                                       \
		int e_ = st__pre(a_);                                                              \
		if (e_) {                                                                          \
			e_ = TMPL_REFUSAL(int, e_, call);                                          \
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
	if (!tmpl)
		return REAL(mkdtemp)(tmpl);
	if (!st__enter(&c))
		return ST_UNCHECKED(char *, c, NULL, EACCES, NULL, REAL(mkdtemp)(tmpl));
	struct st_acc *a = &st__tls_acc[0];
	st__acc_init(a, AT_FDCWD, tmpl, K_W, true);
	int e = st__pre(a);
	if (e) {
		e = TMPL_REFUSAL(char *, e, REAL(mkdtemp)(tmpl));
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

/* tmpfile names no path: glibc makes an O_TMPFILE (or an unlinked temporary)
 * in P_tmpdir, a write in that directory */
EXPORT FILE *tmpfile(void)
{
	ONE_PATH(FILE *, NULL, (r_ == NULL), AT_FDCWD, P_tmpdir, K_W, false, false,
		 REAL(tmpfile)());
}
EXPORT FILE *tmpfile64(void)
{
	ONE_PATH(FILE *, NULL, (r_ == NULL), AT_FDCWD, P_tmpdir, K_W, false, false,
		 REAL(tmpfile64)());
}

/* ---- directories ---- */
EXPORT DIR *opendir(const char *path)
{
	ONE_PATH(DIR *, NULL, (r_ == NULL), AT_FDCWD, path, K_D, false, false, REAL(opendir)(path));
}
/* scandir lists with internal calls: hidden names are taken out of the
 * result (freed, the array compacted), after sorting, so the order of what
 * is left is the program's.  dir is the listed directory's absolute path. */
/* A copy of the listed directory's name dir (dlen bytes) that
 * st__entry_hidden may write behind: in buf (PATH_MAX + NAME_MAX + 2 bytes)
 * or, a name longer than PATH_MAX (the shim names directories up to 2 x
 * PATH_MAX deep), in a mapping of its own (*out; *map bytes to munmap when
 * not 0).  Its length, or -ENAMETOOLONG with no room for one: every entry is
 * then hidden (fail closed), as st__listing_dir does for a descriptor. */
static ssize_t listed_dir_copy(const char *dir, size_t dlen, char *buf, char **out, size_t *map)
{
	*map = 0;
	*out = buf;
	if (dlen > PATH_MAX && !(*out = st__dir_map(dlen, map))) {
		*out = buf;
		return -ENAMETOOLONG;
	}
	memcpy(*out, dir, dlen);
	return (ssize_t)dlen;
}

static void scan_filter(void **list, int *n, size_t name_off, const char *dir, size_t dlen)
{
	char fullb[PATH_MAX + NAME_MAX + 2], *full;
	size_t map;
	ssize_t dl = listed_dir_copy(dir, dlen, fullb, &full, &map);
	int w = 0;
	for (int i = 0; i < *n; i++) {
		const char *name = (const char *)list[i] + name_off;
		if (st__entry_hidden(full, dl, name, strnlen(name, NAME_MAX + 1)))
			free(list[i]);
		else
			list[w++] = list[i];
	}
	if (map)
		munmap(full, map);
	*n = w;
}

/* The program's selector sees only what the listing shows: a trampoline
 * answers 0 (not selected) for a hidden name without calling it.  Kept per
 * thread, with the listed directory's name, for the scandir call running. */
static __thread int (*tls_sel)(const struct dirent *);
static __thread int (*tls_sel64)(const struct dirent64 *);
static __thread const char *tls_sel_dir;
static __thread size_t tls_sel_dlen;
static bool sel_hidden(const char *name)
{
	if (!tls_sel_dir)
		return false;
	struct st_call c;
	if (!st__enter(&c))
		return c.refuse; /* unchecked, refused: hidden */
	/* a name longer than PATH_MAX in a mapping (one an entry: rare) */
	char fullb[PATH_MAX + NAME_MAX + 2], *full;
	size_t map;
	ssize_t dl = listed_dir_copy(tls_sel_dir, tls_sel_dlen, fullb, &full, &map);
	bool hide = st__entry_hidden(full, dl, name, strnlen(name, NAME_MAX + 1));
	if (map)
		munmap(full, map);
	st__leave(&c);
	errno = c.saved_errno;
	return hide;
}
static int tramp_sel(const struct dirent *e)
{
	return sel_hidden(e->d_name) ? 0 : tls_sel(e);
}
static int tramp_sel64(const struct dirent64 *e)
{
	return sel_hidden(e->d_name) ? 0 : tls_sel64(e);
}

/* call names the selector sel_: the program's, or the trampoline in front of
 * it (slot, tramp) when the listing is filtered */
#define SCANDIR(dtype, fdir, slot, tramp, call)                                                    \
	do {                                                                                       \
		__typeof__(sel) sel_ = sel;                                                        \
		struct st_call c_;                                                                 \
		if (!st__enter(&c_))                                                               \
			return ST_UNCHECKED(int, c_, -1, EACCES, NULL, call);                      \
		struct st_acc *a_ = &st__tls_acc[0];                                               \
		st__acc_init(a_, (fdir), path, K_D, false);                                        \
		int e_ = st__pre(a_);                                                              \
		if (e_) {                                                                          \
			st__leave(&c_);                                                            \
			errno = e_;                                                                \
			return -1;                                                                 \
		}                                                                                  \
		bool filt_ = a_->abs && st__listing_filtered();                                   \
		__typeof__(slot) saved_sel_ = slot;                                                \
		const char *saved_dir_ = tls_sel_dir;                                              \
		size_t saved_dlen_ = tls_sel_dlen;                                                 \
		if (filt_ && sel) {                                                                \
			slot = sel;                                                                \
			sel_ = tramp;                                                              \
			tls_sel_dir = a_->abs;                                                     \
			tls_sel_dlen = a_->abs_len;                                                \
		}                                                                                  \
		errno = c_.saved_errno;                                                            \
		int r_ = ST_FORWARD(call);                                                         \
		int after_ = errno;                                                                \
		slot = saved_sel_;                                                                 \
		tls_sel_dir = saved_dir_;                                                          \
		tls_sel_dlen = saved_dlen_;                                                        \
		if (r_ > 0 && nl && *nl && filt_)                                                  \
			scan_filter((void **)*nl, &r_, offsetof(dtype, d_name), a_->abs,           \
				    a_->abs_len);                                                  \
		st__post(a_, r_ < 0 ? after_ : 0);                                                 \
		st__leave(&c_);                                                                    \
		errno = after_;                                                                    \
		return r_;                                                                         \
	} while (0)

EXPORT int scandir(const char *path, struct dirent ***nl, int (*sel)(const struct dirent *),
		   int (*cmp)(const struct dirent **, const struct dirent **))
{
	SCANDIR(struct dirent, AT_FDCWD, tls_sel, tramp_sel, REAL(scandir)(path, nl, sel_, cmp));
}
EXPORT int scandir64(const char *path, struct dirent64 ***nl, int (*sel)(const struct dirent64 *),
		     int (*cmp)(const struct dirent64 **, const struct dirent64 **))
{
	SCANDIR(struct dirent64, AT_FDCWD, tls_sel64, tramp_sel64,
		REAL(scandir64)(path, nl, sel_, cmp));
}
EXPORT int scandirat(int dirfd, const char *path, struct dirent ***nl,
		     int (*sel)(const struct dirent *),
		     int (*cmp)(const struct dirent **, const struct dirent **))
{
	SCANDIR(struct dirent, dirfd, tls_sel, tramp_sel,
		REAL(scandirat)(dirfd, path, nl, sel_, cmp));
}

EXPORT int scandirat64(int dirfd, const char *path, struct dirent64 ***nl,
		       int (*sel)(const struct dirent64 *),
		       int (*cmp)(const struct dirent64 **, const struct dirent64 **))
{
	SCANDIR(struct dirent64, dirfd, tls_sel64, tramp_sel64,
		REAL(scandirat64)(dirfd, path, nl, sel_, cmp));
}

/* nftw/ftw walk with internal calls: the root is a directory listing and
 * every entry the walk reports is recorded as a query through a trampoline.
 * The user's callback is kept per thread (a callback may start another walk:
 * the previous one is saved and restored around it).
 * nftw with FTW_CHDIR moves into each directory with its internal fchdir
 * before it calls the callback (and back after), which the cwd cache does
 * not see: the cache is dropped before every callback, whose relative names
 * are then made absolute against where the walk really is, and after the
 * walk.  The names the walk reports stay relative to the cwd the walk
 * started in: a relative root's walk judges them against a descriptor of
 * that directory (tls_walk_base, O_PATH, high and close-on-exec). */
static __thread __nftw_func_t tls_nftw;
static __thread __nftw64_func_t tls_nftw64;
static __thread __ftw_func_t tls_ftw;
static __thread __ftw64_func_t tls_ftw64;
/* the descriptor less AT_FDCWD: zero, AT_FDCWD, needs no initialised
 * thread-local data (.tdata: an image every thread's start copies) */
static __thread int tls_walk_off;
#define tls_walk_base (tls_walk_off + AT_FDCWD)
#define set_walk_base(fd) (tls_walk_off = (fd) - AT_FDCWD)
static __thread dev_t tls_walk_dev;
static __thread ino_t tls_walk_ino;

/* Is tls_walk_base still the descriptor walk_base opened?  A callback may
 * close descriptors and open others, which can take its number (B14's
 * closefrom, B15's dup2): such a number is the program's, never to be used
 * as the walk's directory or closed.  Preserves errno. */
static bool walk_base_ours(void)
{
	if (tls_walk_base == AT_FDCWD)
		return false;
	int saved = errno;
	struct stat st;
	long fl = ST_SYSCALL(SYS_fcntl, tls_walk_base, F_GETFL);
	bool ours = fl >= 0 && (fl & O_PATH) && ST_SYSCALL(SYS_fstat, tls_walk_base, &st) == 0 &&
		    st.st_dev == tls_walk_dev && st.st_ino == tls_walk_ino;
	errno = saved;
	return ours;
}

/* Returns true when the sandbox hides the entry: the program is not told of
 * it.  Drops the cwd cache (see above).  Preserves errno. */
static bool walk_note(const char *p, int type)
{
	st__cwd_invalidate();
	struct st_call c;
	if (!st__enter(&c))
		return c.refuse; /* unchecked, refused: hidden */
	/* a base the program took away: the names are judged from the cwd */
	int base = walk_base_ours() ? tls_walk_base : AT_FDCWD;
	bool hide = st__hidden(base, p);
	if (!hide)
		st__record_path(base, p, type == FTW_D || type == FTW_DP ? K_D : K_Q, true,
				type == FTW_NS ? EACCES : 0);
	st__leave(&c);
	errno = c.saved_errno;
	return hide;
}

/* A descriptor of the cwd for the names of a walk of a relative root that
 * moves (FTW_CHDIR), else AT_FDCWD.  Preserves errno. */
static int walk_base(const char *path, int flags)
{
	if (!(flags & FTW_CHDIR) || path[0] == '/')
		return AT_FDCWD;
	int saved = errno;
	int fd = (int)ST_SYSCALL(SYS_openat, AT_FDCWD, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		int hi = (int)ST_SYSCALL(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 100);
		if (hi >= 0) {
			ST_SYSCALL(SYS_close, fd);
			fd = hi;
		}
		struct stat st;
		if (ST_SYSCALL(SYS_fstat, fd, &st) == 0) {
			tls_walk_dev = st.st_dev;
			tls_walk_ino = st.st_ino;
		} else {
			ST_SYSCALL(SYS_close, fd);
			fd = -1;
		}
	}
	errno = saved;
	return fd >= 0 ? fd : AT_FDCWD;
}
static int tramp_nftw(const char *p, const struct stat *s, int t, struct FTW *f)
{
	if (walk_note(p, t))
		return 0;
	return tls_nftw(p, s, t, f);
}
static int tramp_nftw64(const char *p, const struct stat64 *s, int t, struct FTW *f)
{
	if (walk_note(p, t))
		return 0;
	return tls_nftw64(p, s, t, f);
}
static int tramp_ftw(const char *p, const struct stat *s, int t)
{
	if (walk_note(p, t))
		return 0;
	return tls_ftw(p, s, t);
}
static int tramp_ftw64(const char *p, const struct stat64 *s, int t)
{
	if (walk_note(p, t))
		return 0;
	return tls_ftw64(p, s, t);
}

#define WALK(slot, tramp, flags, call_real, call_tramp)                                            \
	do {                                                                                       \
		struct st_call c_;                                                                 \
		if (!path || !fn || !st__enter(&c_)) {                                             \
			if (path && fn && c_.refuse) { /* ST_UNCHECKED */                          \
				errno = EACCES;                                                    \
				return -1;                                                         \
			}                                                                          \
			int r_ = call_real;                                                        \
			st__cwd_invalidate();                                                      \
			return r_;                                                                 \
		}                                                                                  \
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
		int base_ = tls_walk_base;                                                         \
		dev_t bdev_ = tls_walk_dev;                                                        \
		ino_t bino_ = tls_walk_ino;                                                        \
		slot = fn;                                                                         \
		set_walk_base(walk_base(path, (flags)));                                           \
		st__leave(&c_); /* the callbacks run the program's code: not "inside" */            \
		errno = c_.saved_errno;                                                            \
		int r_ = call_tramp;                                                               \
		int after_ = errno;                                                                \
		st__cwd_invalidate(); /* FTW_CHDIR came back with an internal fchdir */            \
		if (walk_base_ours())                                                              \
			ST_SYSCALL(SYS_close, tls_walk_base);                                      \
		set_walk_base(base_);                                                              \
		tls_walk_dev = bdev_;                                                              \
		tls_walk_ino = bino_;                                                              \
		slot = saved_;                                                                     \
		errno = after_;                                                                    \
		return r_;                                                                         \
	} while (0)

/* nftw@ and nftw64@GLIBC_2.2.5 (shim/abi.c) keep the four flags of their
 * time and drop the others (FTW_ACTIONRETVAL, unknown ones: EINVAL now) */
#define NFTW_OLD_FLAGS (FTW_PHYS | FTW_MOUNT | FTW_CHDIR | FTW_DEPTH)
EXPORT int nftw(const char *path, __nftw_func_t fn, int nfd, int flags)
{
	if ((flags & ~NFTW_OLD_FLAGS) && st__old_abi(__builtin_return_address(0), ST_OLD_NFTW))
		flags &= NFTW_OLD_FLAGS;
	WALK(tls_nftw, tramp_nftw, flags, REAL(nftw)(path, fn, nfd, flags),
	     REAL(nftw)(path, tramp_nftw, nfd, flags));
}
EXPORT int nftw64(const char *path, __nftw64_func_t fn, int nfd, int flags)
{
	if ((flags & ~NFTW_OLD_FLAGS) && st__old_abi(__builtin_return_address(0), ST_OLD_NFTW64))
		flags &= NFTW_OLD_FLAGS;
	WALK(tls_nftw64, tramp_nftw64, flags, REAL(nftw64)(path, fn, nfd, flags),
	     REAL(nftw64)(path, tramp_nftw64, nfd, flags));
}
EXPORT int ftw(const char *path, __ftw_func_t fn, int nfd)
{
	WALK(tls_ftw, tramp_ftw, 0, REAL(ftw)(path, fn, nfd), REAL(ftw)(path, tramp_ftw, nfd));
}
EXPORT int ftw64(const char *path, __ftw64_func_t fn, int nfd)
{
	WALK(tls_ftw64, tramp_ftw64, 0, REAL(ftw64)(path, fn, nfd),
	     REAL(ftw64)(path, tramp_ftw64, nfd));
}

/* fts walks with internal calls and, without FTS_NOCHDIR, moves through the
 * tree with its internal fchdir.  fts_open's roots are judged once fts built
 * them: a refused root becomes what fts makes of a missing one (FTS_NS,
 * ENOENT), neither listed nor entered.  fts_read judges every entry it
 * returns through fts_accpath (the name from the current directory, so the
 * cwd cache is dropped first) and records it; a refused entry below the
 * roots is skipped, as a directory listing omits it (a refused directory is
 * not entered). */
#define ST_FTS_FOLLOW_ROOT(o) (((o) & (FTS_LOGICAL | FTS_COMFOLLOW)) != 0)
#define ST_FTS_FOLLOW(o) (((o) & FTS_LOGICAL) != 0)

#define FTS_OPEN(FTS_T, ENT_T, call)                                                               \
	do {                                                                                       \
		struct st_call c_;                                                                 \
		if (!st__enter(&c_))                                                               \
			return ST_UNCHECKED(FTS_T *, c_, NULL, EACCES, NULL, call);                \
		errno = c_.saved_errno;                                                            \
		FTS_T *r_ = ST_FORWARD(call);                                                      \
		int after_ = errno;                                                                \
		for (ENT_T *e_ = r_ && r_->fts_cur ? r_->fts_cur->fts_link : NULL; e_;            \
		     e_ = e_->fts_link) {                                                          \
			struct st_acc *a_ = &st__tls_acc[0];                                       \
			st__acc_init(a_, AT_FDCWD, e_->fts_accpath,                                \
				     e_->fts_info == FTS_D ? K_D : K_Q,                            \
				     !ST_FTS_FOLLOW_ROOT(options));                                   \
			if (st__pre(a_)) {                                                         \
				e_->fts_info = FTS_NS;                                             \
				e_->fts_errno = ENOENT;                                            \
			} else {                                                                   \
				st__acc_done(a_);                                                  \
			}                                                                          \
		}                                                                                  \
		st__leave(&c_);                                                                    \
		errno = after_;                                                                    \
		return r_;                                                                         \
	} while (0)

EXPORT FTS *fts_open(char *const *argv, int options,
		     int (*cmp)(const FTSENT **, const FTSENT **))
{
	FTS_OPEN(FTS, FTSENT, REAL(fts_open)(argv, options, cmp));
}
EXPORT FTS64 *fts64_open(char *const *argv, int options,
			 int (*cmp)(const FTSENT64 **, const FTSENT64 **))
{
	FTS_OPEN(FTS64, FTSENT64, REAL(fts64_open)(argv, options, cmp));
}

#define FTS_READ(ENT_T, set, call)                                                                      \
	do {                                                                                       \
		ENT_T *e_, *skip_ = NULL;                                                          \
		for (;;) {                                                                         \
			e_ = call;                                                                 \
			st__cwd_invalidate();                                                      \
			if (!e_ || e_->fts_info == FTS_DP || e_->fts_info == FTS_DOT) {            \
				if (e_ && e_ == skip_)                                             \
					continue; /* the post-order visit of a skipped dir */      \
				return e_;                                                         \
			}                                                                          \
			struct st_call c_;                                                         \
			if (!st__enter(&c_)) { /* unchecked, refused: the walk fails */            \
				if (c_.refuse)                                                     \
					errno = EACCES;                                            \
				return c_.refuse ? NULL : e_;                                      \
			}                                                                          \
			struct st_acc *a_ = &st__tls_acc[0];                                       \
			bool root_ = e_->fts_level == FTS_ROOTLEVEL;                               \
			st__acc_init(a_, AT_FDCWD, e_->fts_accpath,                                \
				     e_->fts_info == FTS_D ? K_D : K_Q,                            \
				     root_ ? !ST_FTS_FOLLOW_ROOT(sp->fts_options)                     \
					   : !ST_FTS_FOLLOW(sp->fts_options));                        \
			bool denied_ = st__pre(a_) != 0;                                           \
			if (!denied_)                                                              \
				st__post(a_, e_->fts_info == FTS_NS || e_->fts_info == FTS_DNR ||  \
						     e_->fts_info == FTS_ERR                       \
						 ? e_->fts_errno                                   \
						 : 0);                                             \
			st__leave(&c_);                                                            \
			errno = c_.saved_errno;                                                    \
			if (!denied_ || root_)                                                     \
				return e_; /* a refused root is already FTS_NS */          \
			if (e_->fts_info == FTS_D) {                                               \
				set(sp, e_, FTS_SKIP);                                             \
				skip_ = e_;                                                        \
			}                                                                          \
			errno = c_.saved_errno;                                                    \
		}                                                                                  \
	} while (0)

EXPORT FTSENT *fts_read(FTS *sp)
{
	FTS_READ(FTSENT, fts_set, REAL(fts_read)(sp));
}
EXPORT FTSENT64 *fts64_read(FTS64 *sp)
{
	FTS_READ(FTSENT64, fts64_set, REAL(fts64_read)(sp));
}
/* fts_children lists with internal calls and may move in and out of the
 * directory: only the cwd cache needs to know */
EXPORT FTSENT *fts_children(FTS *sp, int opts)
{
	FTSENT *r = REAL(fts_children)(sp, opts);
	st__cwd_invalidate();
	return r;
}
EXPORT FTSENT64 *fts64_children(FTS64 *sp, int opts)
{
	FTSENT64 *r = REAL(fts64_children)(sp, opts);
	st__cwd_invalidate();
	return r;
}
/* fts_close goes back to where fts_open was called (internal fchdir) when
 * the walk stopped inside the tree: the cwd cache must not keep naming the
 * directory it left.  errno is fts_close's. */
EXPORT int fts_close(FTS *sp)
{
	int r = REAL(fts_close)(sp);
	st__cwd_invalidate();
	return r;
}
EXPORT int fts64_close(FTS64 *sp)
{
	int r = REAL(fts64_close)(sp);
	st__cwd_invalidate();
	return r;
}

/* glob lists directories with internal calls.  The directory named by the
 * pattern's literal part (before the first component with a wildcard) is a
 * listing judged before the call (a refused one matches nothing); every
 * match is judged and recorded after it, and a refused match is taken out of
 * the result as a listing omits it. */
static bool glob_meta(const char *s, size_t n, int flags)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '*' || s[i] == '?' || s[i] == '[' ||
		    (s[i] == '{' && (flags & GLOB_BRACE)) || (s[i] == '~' && (flags & GLOB_TILDE)) ||
		    (s[i] == '\\' && !(flags & GLOB_NOESCAPE)))
			return true;
	return false;
}
/* the literal directory of a pattern into buf ("." when none); false if the
 * pattern has no wildcard (then it is a lookup of the name itself) */
static bool glob_dir(const char *pat, int flags, char *buf, size_t cap)
{
	size_t start = 0, n = strlen(pat);
	for (size_t i = 0; i <= n; i++) {
		if (i < n && pat[i] != '/')
			continue;
		if (glob_meta(pat + start, i - start, flags)) {
			size_t d = start > 1 ? start - 1 : start; /* without the trailing '/' */
			if (d == 0 && start == 0) {
				buf[0] = '.', buf[1] = 0;
			} else {
				if (d == 0)
					d = 1; /* "/x*": the root */
				if (d + 1 > cap)
					return false;
				memcpy(buf, pat, d);
				buf[d] = 0;
			}
			return true;
		}
		start = i + 1;
	}
	return false;
}
#define GLOB(call)                                                                         \
	do {                                                                                       \
		struct st_call c_;                                                                 \
		char dir_[PATH_MAX];                                                               \
		if (!pattern || !pglob)                                                            \
			return call;                                                               \
		if (!st__enter(&c_)) {                                                             \
			if (!c_.refuse)                                                            \
				return call;                                                       \
			if (!(flags & GLOB_APPEND)) /* unchecked, refused: as a refused dir */     \
				pglob->gl_pathc = 0, pglob->gl_pathv = NULL;                       \
			return GLOB_NOMATCH;                                                       \
		}                                                                                  \
		size_t before_ = (flags & GLOB_APPEND) ? pglob->gl_pathc : 0;                      \
		if (glob_dir(pattern, flags, dir_, sizeof(dir_))) {                                \
			struct st_acc *a_ = &st__tls_acc[0];                                       \
			st__acc_init(a_, AT_FDCWD, dir_, K_D, false);                              \
			if (st__pre(a_)) {                                                         \
				st__leave(&c_);                                                    \
				errno = c_.saved_errno;                                            \
				if (!(flags & GLOB_APPEND))                                        \
					pglob->gl_pathc = 0, pglob->gl_pathv = NULL;               \
				return GLOB_NOMATCH;                                               \
			}                                                                          \
			st__post(a_, 0);                                                           \
		}                                                                                  \
		errno = c_.saved_errno;                                                            \
		int r_ = ST_FORWARD(call);                                                         \
		int after_ = errno;                                                                \
		size_t off_ = (flags & GLOB_DOOFFS) ? pglob->gl_offs : 0, w_ = before_;             \
		for (size_t i_ = before_; r_ == 0 && i_ < pglob->gl_pathc; i_++) {                 \
			char *m_ = pglob->gl_pathv[off_ + i_];                                     \
			struct st_acc *a_ = &st__tls_acc[0];                                       \
			st__acc_init(a_, AT_FDCWD, m_, K_Q, true);                                 \
			if (st__pre(a_)) {                                                         \
				free(m_);                                                          \
				continue;                                                          \
			}                                                                          \
			st__post(a_, 0);                                                           \
			pglob->gl_pathv[off_ + w_++] = m_;                                         \
		}                                                                                  \
		if (r_ == 0 && w_ != pglob->gl_pathc) {                                            \
			pglob->gl_pathc = w_;                                                      \
			pglob->gl_pathv[off_ + w_] = NULL;                                         \
			if (w_ == 0 && !(flags & GLOB_APPEND))                                     \
				r_ = GLOB_NOMATCH;                                                 \
		}                                                                                  \
		st__leave(&c_);                                                                    \
		errno = after_;                                                                    \
		return r_;                                                                         \
	} while (0)

static int glob_body(const char *pattern, int flags, int (*errf)(const char *, int),
		     glob_t *pglob)
{
	GLOB(REAL(glob)(pattern, flags, errf, pglob));
}
static int glob64_body(const char *pattern, int flags, int (*errf)(const char *, int),
		       glob64_t *pglob)
{
	GLOB(REAL(glob64)(pattern, flags, errf, pglob));
}
/* A tilde glob expands (GLOB_TILDE, GLOB_TILDE_CHECK) looks the user up
 * with libc's internal getpwnam_r: "~user", or "~" when HOME is not set
 * (posix/glob.c) */
static void glob_tilde(const char *pattern, int flags)
{
	if (pattern && pattern[0] == '~' && (flags & (GLOB_TILDE | GLOB_TILDE_CHECK)) &&
	    ((pattern[1] && pattern[1] != '/') || !getenv("HOME")))
		st__nss_passwd();
}
/* glob@ and glob64@GLIBC_2.2.5 (shim/abi.c): GLOB_ALTDIRFUNC's gl_stat
 * where the new ones call gl_lstat, which a program of their time never set */
typedef int (*st_glob_fn)(const char *, int, int (*)(const char *, int), glob_t *);
typedef int (*st_glob64_fn)(const char *, int, int (*)(const char *, int), glob64_t *);
static _Atomic(void *) real_glob_old, real_glob64_old;
static int glob_old_body(const char *pattern, int flags, int (*errf)(const char *, int),
			 glob_t *pglob)
{
	GLOB(((st_glob_fn)st__resolve_old(&real_glob_old, "glob"))(pattern, flags, errf, pglob));
}
static int glob64_old_body(const char *pattern, int flags, int (*errf)(const char *, int),
			   glob64_t *pglob)
{
	GLOB(((st_glob64_fn)st__resolve_old(&real_glob64_old, "glob64"))(pattern, flags, errf,
									 pglob));
}
EXPORT int glob(const char *pattern, int flags, int (*errf)(const char *, int), glob_t *pglob)
{
	int r = st__old_abi(__builtin_return_address(0), ST_OLD_GLOB)
		    ? glob_old_body(pattern, flags, errf, pglob)
		    : glob_body(pattern, flags, errf, pglob);
	glob_tilde(pattern, flags);
	return r;
}
EXPORT int glob64(const char *pattern, int flags, int (*errf)(const char *, int),
		  glob64_t *pglob)
{
	int r = st__old_abi(__builtin_return_address(0), ST_OLD_GLOB64)
		    ? glob64_old_body(pattern, flags, errf, pglob)
		    : glob64_body(pattern, flags, errf, pglob);
	glob_tilde(pattern, flags);
	return r;
}

/* ---- working directory: the cwd cache is dropped after every change ---- */
EXPORT int chdir(const char *path)
{
	struct st_call c;
	if (!st__enter(&c))
		return ST_UNCHECKED(int, c, -1, EACCES, ST_PROBE_SLOT(path), REAL(chdir)(path));
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
/* chroot: a lookup of the new root.  The connection to the daemon is made
 * before it, while the socket's path still leads there. */
EXPORT int chroot(const char *path)
{
	struct st_call c;
	if (!st__enter(&c)) {
		if (c.refuse)
			return ST_UNCHECKED(int, c, -1, EACCES, ST_PROBE_SLOT(path), REAL(chroot)(path));
		int r = REAL(chroot)(path);
		if (r == 0)
			st__cwd_invalidate();
		return r;
	}
	struct st_acc *a = &st__tls_acc[0];
	st__acc_init(a, AT_FDCWD, path, K_Q, false);
	int e = st__pre(a);
	if (e) {
		st__leave(&c);
		errno = e;
		return -1;
	}
	st__hello();
	errno = c.saved_errno;
	int r = ST_FORWARD(REAL(chroot)(path));
	int after = errno;
	if (r == 0)
		st__cwd_invalidate();
	st__post(a, r < 0 ? after : 0);
	st__leave(&c);
	errno = after;
	return r;
}

/*
 * mount and umount change what a directory shows.  The target is judged and
 * recorded as a write (a hidden one is missing, as for a mkdir over it); a
 * source that names a file (a bind or a move, or an absolute path: a block
 * device or an image; not a remount or a propagation change, nor a file
 * system's name such as "tmpfs") as a read.  Once the call succeeded a
 * symlink or a file may have appeared anywhere under the target: every
 * cached resolution goes (the global generation).  errno is the call's.
 */
#define MS_NO_SOURCE (MS_REMOUNT | MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE)
static int mount_checked(const char *src, const char *target, const char *type,
			 unsigned long flags, const void *data)
{
	/* a bind's or a move's source is looked up; a file system's source string may
	 * not be (tmpfs, proc: any string mounts), so a refusal's probe on it would
	 * mount (ST_REFUSAL): it is not probed */
	/* a source the kernel cannot read (shim.h st__unreadable): the call
	 * fails (EFAULT) before either name is looked up: forwarded untouched */
	if (src && st__unreadable(src))
		return REAL(mount)(src, target, type, flags, data);
	if (src && !(flags & MS_NO_SOURCE) && (flags & (MS_BIND | MS_MOVE)))
		TWO_PATHS(int, -1, FAILED_INT, AT_FDCWD, src, K_R, false, false, AT_FDCWD, target,
			  K_W, false, REAL(mount)(src, target, type, flags, data));
	if (src && !(flags & MS_NO_SOURCE) && src[0] == '/')
		TWO_PATHS(int, -1, FAILED_INT, AT_FDCWD, ST_NOPROBE(src), K_R, false, false,
			  AT_FDCWD, target, K_W, false, REAL(mount)(src, target, type, flags, data));
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, target, K_W, false, false,
		 REAL(mount)(src, target, type, flags, data));
}
EXPORT int mount(const char *src, const char *target, const char *type, unsigned long flags,
		 const void *data)
{
	int r = mount_checked(src, target, type, flags, data);
	if (r == 0)
		st__fs_gen_bump_global();
	return r;
}
static int umount2_checked(const char *target, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, target, K_W, (flags & UMOUNT_NOFOLLOW) != 0, false,
		 REAL(umount2)(target, flags));
}
EXPORT int umount2(const char *target, int flags)
{
	int r = umount2_checked(target, flags);
	if (r == 0)
		st__fs_gen_bump_global();
	return r;
}
EXPORT int umount(const char *target)
{
	return umount2(target, 0);
}

/*
 * The other calls that put a name to a system-wide use.  acct, swapon,
 * swapoff and pivot_root need a capability, which the kernel checks before
 * it looks the name up (EPERM without it: what a refusal's probe gives, as
 * for a missing name); quotactl checks its after the lookup.
 * acct: process accounting appends to the file, a write; a null name turns
 * accounting off and names nothing (forwarded).
 * swapon, swapoff: the kernel opens the swap file read-write and writes
 * pages into it (swapoff ends that, as umount ends a mount): writes.
 * quotactl(cmd, special, id, addr): special names the block device of the
 * file system whose quotas are asked (the Q_GET* and Q_XGET* commands: a
 * query) or changed (quotas turned on or off, limits set, synced: a write,
 * as mount's target); a null special (Q_SYNC of every file system, else
 * ENODEV) names nothing.  Q_QUOTAON's addr names the quota file the kernel
 * then reads and writes (a write), judged with special: it is looked up
 * first, but a file system that keeps hidden quota files (quota_on_meta)
 * ignores it, so a refusal is not probed on it (the probe would turn the
 * quotas on); a null or unreadable addr (EFAULT, ignored the same way) is
 * left to the kernel.
 * pivot_root(new_root, put_old): new_root becomes the root, a lookup as
 * chroot's (a query); the old root is attached at put_old, a mount's target
 * (a write).  The daemon's connection is made before it, while the
 * socket's path still leads there (as for chroot); once it succeeded the
 * cwd cache and every cached resolution go (as after chroot and mount).
 * (uselib, below: syscall() only.)  errno is the call's.
 */
EXPORT int acct(const char *path)
{
	if (st__null(path))
		return REAL(acct)(path);
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, false, false, REAL(acct)(path));
}
EXPORT int swapon(const char *path, int flags)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, false, false, REAL(swapon)(path, flags));
}
EXPORT int swapoff(const char *path)
{
	ONE_PATH(int, -1, FAILED_INT, AT_FDCWD, path, K_W, false, false, REAL(swapoff)(path));
}

/* Does quotactl's command (QCMD(subcmd, type)) only read quotas? */
static bool quota_query(int cmd)
{
	switch ((unsigned)cmd >> SUBCMDSHIFT) {
	case Q_GETFMT:
	case Q_GETINFO:
	case Q_GETQUOTA:
	case Q_GETNEXTQUOTA:
	case Q_XGETQSTAT:
	case Q_XGETQSTATV:
	case Q_XGETQUOTA:
	case Q_XGETNEXTQUOTA:
		return true;
	default:
		return false;
	}
}
/* quotactl(raw: syscall()'s number, else libc's) */
static long quotactl_checked(bool raw, int cmd, const char *special, int id, caddr_t addr)
{
	/* addr: what is judged, a name the call may ignore (not probed) */
	const char *file = addr;
#define QUOTA_CALL                                                                                 \
	(raw ? REAL(syscall)(SYS_quotactl, cmd, special, id, addr)                                 \
	     : (long)REAL(quotactl)(cmd, special, id, addr))
	if (st__null(special))
		return QUOTA_CALL;
	unsigned kind = quota_query(cmd) ? K_Q : K_W;
	if ((unsigned)cmd >> SUBCMDSHIFT == Q_QUOTAON && !st__null(file) && !st__unreadable(file))
		TWO_PATHS(long, -1, (r_ < 0), AT_FDCWD, special, kind, false, false, AT_FDCWD,
			  ST_NOPROBE(file), K_W, false, QUOTA_CALL);
	ONE_PATH(long, -1, (r_ < 0), AT_FDCWD, special, kind, false, false, QUOTA_CALL);
#undef QUOTA_CALL
}
EXPORT int quotactl(int cmd, const char *special, int id, caddr_t addr)
{
	return (int)quotactl_checked(false, cmd, special, id, addr);
}
long st__quotactl(long cmd, long special, long id, long addr)
{
	return quotactl_checked(true, (int)cmd, (const char *)special, (int)id, (caddr_t)addr);
}

int pivot_root(const char *new_root, const char *put_old);
/* pivot_root (raw: syscall()'s number, else libc's) */
static long pivot_checked(bool raw, const char *new_root, const char *put_old)
{
#define PIVOT_CALL                                                                                 \
	(raw ? REAL(syscall)(SYS_pivot_root, new_root, put_old)                                    \
	     : (long)REAL(pivot_root)(new_root, put_old))
	/* a name the kernel cannot copy in: EFAULT (TWO_PATHS) */
	if (st__null(new_root) || st__unreadable(new_root) || st__null(put_old) ||
	    st__unreadable(put_old))
		return PIVOT_CALL;
	struct st_call c;
	if (!st__enter(&c))
		return ST_UNCHECKED(long, c, -1, EACCES, ST_PROBE_SLOT(new_root), PIVOT_CALL);
	struct st_acc *a = &st__tls_acc[0], *b = &st__tls_acc[1];
	st__acc_init(a, AT_FDCWD, new_root, K_Q, false);
	st__acc_init(b, AT_FDCWD, put_old, K_W, false);
	a->pair = b->pair = true;
	int e = st__pre(a);
	const char **slot = ST_PROBE_SLOT(new_root); /* the refused name's */
	if (!e) {
		e = st__pre(b);
		slot = ST_PROBE_SLOT(put_old);
	} else {
		st__acc_done(b);
	}
	if (e) {
		e = ST_REFUSAL(long, e, slot, PIVOT_CALL);
		st__acc_done(a);
		st__acc_done(b);
		st__leave(&c);
		errno = e;
		return -1;
	}
	st__hello();
	errno = c.saved_errno;
	long r = ST_FORWARD(PIVOT_CALL);
	int after = errno;
	if (r == 0) {
		st__cwd_invalidate();
		st__fs_gen_bump_global();
	}
	st__post(a, r < 0 ? after : 0);
	st__post(b, r < 0 ? after : 0);
	st__leave(&c);
	errno = after;
	return r;
#undef PIVOT_CALL
}
EXPORT int pivot_root(const char *new_root, const char *put_old)
{
	return (int)pivot_checked(false, new_root, put_old);
}
long st__pivot_root(long new_root, long put_old)
{
	return pivot_checked(true, (const char *)new_root, (const char *)put_old);
}

/* uselib(library), by syscall() (glibc's uselib is a compat symbol): a
 * library loaded, a read as dlopen's name.  A kernel built without it gives
 * ENOSYS for any name (a refusal too, by its probe). */
long st__uselib(long path)
{
	const char *lib = (const char *)path;
	ONE_PATH(long, -1, (r_ < 0), AT_FDCWD, lib, K_R, false, false,
		 REAL(syscall)(SYS_uselib, lib));
}

/*
 * The new mount API (Linux 5.2; glibc 2.36's wrappers, and syscall(): see
 * st__mount_api).  Classed as mount's names are: where a mount is attached
 * or its attributes changed (move_mount's target, mount_setattr) is a
 * write, and so is fspick's (a remount's target: its descriptor
 * reconfigures the mounted file system); a tree cloned (open_tree with
 * OPEN_TREE_CLONE, open_tree_attr: a bind's source), a mount moved
 * (move_mount's source) and a file a file system is given (fsconfig's
 * FSCONFIG_SET_PATH and _EMPTY, relative to aux; "source" as an absolute
 * string, a device or an image) are reads; open_tree without the clone
 * opens the mount as O_PATH does, a query.  Each call's flags say whether
 * a final symlink is followed (open_tree, mount_setattr:
 * AT_SYMLINK_NOFOLLOW; fspick: FSPICK_SYMLINK_NOFOLLOW; move_mount follows
 * only with MOVE_MOUNT_F_SYMLINKS, _T_SYMLINKS) and whether an empty name
 * is the descriptor's own file (AT_EMPTY_PATH, FSPICK_EMPTY_PATH,
 * MOVE_MOUNT_F_EMPTY_PATH, _T_EMPTY_PATH, FSCONFIG_SET_PATH_EMPTY; with a
 * null name too where the kernel takes one: move_mount's; the others fail
 * with EFAULT, and a null name is left to the kernel, unrecorded).
 * A descriptor of a detached mount (open_tree's clone, fsmount's) is not a
 * name's: the kernel calls its root "/" (held_unnamed), and what a call on
 * it acts on no name reaches until move_mount attaches it (judged there, at
 * its target): such an empty name is not judged.  Once move_mount or
 * mount_setattr (MOUNT_ATTR_NOSYMFOLLOW) succeeded, every cached
 * resolution goes, as after mount.  raw: forwarded as syscall(nr, ...).
 */
/* Does the kernel's name of fd fail to lead back to its file (a detached
 * mount's root, named "/"; a file in a tree no name of this process's
 * reaches)?  One readlink, two stats. */
static bool held_unnamed(int fd)
{
	char name[PATH_MAX];
	struct stat a, b;
	if (fd < 0 || st__fd_path(fd, name, sizeof(name)) <= 0 || name[0] != '/' ||
	    ST_SYSCALL(SYS_fstat, fd, &a) != 0)
		return false;
	return ST_SYSCALL(SYS_newfstatat, AT_FDCWD, name, &b, AT_SYMLINK_NOFOLLOW) != 0 ||
	       a.st_dev != b.st_dev || a.st_ino != b.st_ino;
}

/* an empty name standing for a detached mount's descriptor */
static bool empty_unnamed(int fd, const char *path, bool empty)
{
	return empty && fd != AT_FDCWD && path && !path[0] && held_unnamed(fd);
}

#define MNT_FWD(raw, nr, real, ...) ((raw) ? REAL(syscall)(nr, __VA_ARGS__) : (long)REAL(real)(__VA_ARGS__))

/* open_tree(dfd, path, flags), and open_tree_attr(..., attr, size) (raw only) */
static long open_tree_checked(bool raw, long nr, int dfd, const char *path, unsigned flags,
			      void *attr, size_t size)
{
	bool empty = (flags & AT_EMPTY_PATH) != 0;
	unsigned kind = (flags & OPEN_TREE_CLONE) ? K_R : K_Q;
#define OPEN_TREE_CALL                                                                             \
	(nr == SYS_open_tree ? MNT_FWD(raw, nr, open_tree, dfd, path, flags)                      \
			     : REAL(syscall)(nr, dfd, path, flags, attr, size))
	if (empty_unnamed(dfd, path, empty))
		return OPEN_TREE_CALL;
	ONE_PATH(long, -1, (r_ < 0), dfd, path, kind, (flags & AT_SYMLINK_NOFOLLOW) != 0, empty,
		 OPEN_TREE_CALL);
#undef OPEN_TREE_CALL
}

static long move_mount_checked(bool raw, int fdfd, const char *fpath, int tdfd, const char *tpath,
			       unsigned flags)
{
	bool fe = (flags & MOVE_MOUNT_F_EMPTY_PATH) != 0, te = (flags & MOVE_MOUNT_T_EMPTY_PATH) != 0;
	bool fnf = !(flags & MOVE_MOUNT_F_SYMLINKS), tnf = !(flags & MOVE_MOUNT_T_SYMLINKS);
	/* a null name with its EMPTY_PATH flag is the descriptor's file, as "" */
	const char *fp = !fpath && fe ? "" : fpath, *tp = !tpath && te ? "" : tpath;
	bool fskip = empty_unnamed(fdfd, fp, fe), tskip = empty_unnamed(tdfd, tp, te);
/* fp and tp: what is judged, and what the call reads (ST_REFUSAL sets them) */
#define MOVE_MOUNT_CALL                                                                            \
	MNT_FWD(raw, SYS_move_mount, move_mount, fdfd, fpath ? fp : fpath, tdfd, tpath ? tp : tpath, \
		flags)
	if (fskip && tskip)
		return MOVE_MOUNT_CALL;
	if (fskip)
		ONE_PATH(long, -1, (r_ < 0), tdfd, tp, K_W, tnf, te, MOVE_MOUNT_CALL);
	if (tskip)
		ONE_PATH(long, -1, (r_ < 0), fdfd, fp, K_R, fnf, fe, MOVE_MOUNT_CALL);
	TWO_PATHS_E(long, -1, (r_ < 0), fdfd, fp, K_R, fnf, fe, tdfd, tp, K_W, tnf, te,
		    MOVE_MOUNT_CALL);
#undef MOVE_MOUNT_CALL
}

static long fspick_checked(bool raw, int dfd, const char *path, unsigned flags)
{
	bool empty = (flags & FSPICK_EMPTY_PATH) != 0;
	if (empty_unnamed(dfd, path, empty))
		return MNT_FWD(raw, SYS_fspick, fspick, dfd, path, flags);
	ONE_PATH(long, -1, (r_ < 0), dfd, path, K_W, (flags & FSPICK_SYMLINK_NOFOLLOW) != 0, empty,
		 MNT_FWD(raw, SYS_fspick, fspick, dfd, path, flags));
}

static long mount_setattr_checked(bool raw, int dfd, const char *path, unsigned flags,
				  struct mount_attr *attr, size_t size)
{
	bool empty = (flags & AT_EMPTY_PATH) != 0;
#define SETATTR_CALL MNT_FWD(raw, SYS_mount_setattr, mount_setattr, dfd, path, flags, attr, size)
	if (empty_unnamed(dfd, path, empty))
		return SETATTR_CALL;
	ONE_PATH(long, -1, (r_ < 0), dfd, path, K_W, (flags & AT_SYMLINK_NOFOLLOW) != 0, empty,
		 SETATTR_CALL);
#undef SETATTR_CALL
}

static long fsconfig_checked(bool raw, int fd, unsigned cmd, const char *key, const void *value,
			     int aux)
{
	const char *v = value;
#define FSCONFIG_CALL MNT_FWD(raw, SYS_fsconfig, fsconfig, fd, cmd, key, (const void *)v, aux)
	if (cmd == FSCONFIG_SET_PATH || cmd == FSCONFIG_SET_PATH_EMPTY) {
		bool empty = cmd == FSCONFIG_SET_PATH_EMPTY;
		if (empty_unnamed(aux, v, empty))
			return FSCONFIG_CALL;
		ONE_PATH(long, -1, (r_ < 0), aux, v, K_R, false, empty, FSCONFIG_CALL);
	}
	/* the kernel keeps the string, it looks nothing up: a probe would set the
	 * context's source (a second one is EINVAL), so it is not probed */
	if (cmd == FSCONFIG_SET_STRING && !st__unreadable(key) && !st__unreadable(v) &&
	    !strcmp(key, "source") && v[0] == '/')
		ONE_PATH(long, -1, (r_ < 0), AT_FDCWD, ST_NOPROBE(v), K_R, false, false,
			 FSCONFIG_CALL);
	return FSCONFIG_CALL;
#undef FSCONFIG_CALL
}

/* a call that can change what a name resolves to: the cached resolutions go */
static long mnt_changed(long r)
{
	if (r == 0)
		st__fs_gen_bump_global();
	return r;
}

EXPORT int open_tree(int dfd, const char *path, unsigned flags)
{
	return (int)open_tree_checked(false, SYS_open_tree, dfd, path, flags, NULL, 0);
}
EXPORT int move_mount(int fdfd, const char *fpath, int tdfd, const char *tpath, unsigned flags)
{
	return (int)mnt_changed(move_mount_checked(false, fdfd, fpath, tdfd, tpath, flags));
}
EXPORT int fspick(int dfd, const char *path, unsigned flags)
{
	return (int)fspick_checked(false, dfd, path, flags);
}
EXPORT int mount_setattr(int dfd, const char *path, unsigned flags, struct mount_attr *attr,
			 size_t size)
{
	return (int)mnt_changed(mount_setattr_checked(false, dfd, path, flags, attr, size));
}
EXPORT int fsconfig(int fd, unsigned cmd, const char *key, const void *value, int aux)
{
	return (int)fsconfig_checked(false, fd, cmd, key, value, aux);
}

#ifdef ST_HAVE_MOUNT_API
long st__mount_api(long nr, long a1, long a2, long a3, long a4, long a5)
{
	switch (nr) {
	case SYS_open_tree:
		return open_tree_checked(true, nr, (int)a1, (const char *)a2, (unsigned)a3, NULL, 0);
#ifdef ST_SYS_open_tree_attr
	case ST_SYS_open_tree_attr:
		return open_tree_checked(true, nr, (int)a1, (const char *)a2, (unsigned)a3,
					 (void *)a4, (size_t)a5);
#endif
	case SYS_move_mount:
		return mnt_changed(move_mount_checked(true, (int)a1, (const char *)a2, (int)a3,
						      (const char *)a4, (unsigned)a5));
	case SYS_fspick:
		return fspick_checked(true, (int)a1, (const char *)a2, (unsigned)a3);
	case SYS_mount_setattr:
		return mnt_changed(mount_setattr_checked(true, (int)a1, (const char *)a2, (unsigned)a3,
							 (struct mount_attr *)a4, (size_t)a5));
	case SYS_fsconfig:
		return fsconfig_checked(true, (int)a1, (unsigned)a2, (const char *)a3,
					(const void *)a4, (int)a5);
	}
	return REAL(syscall)(nr, a1, a2, a3, a4, a5);
}
#endif

/* ---- libraries loaded by path (the loader's own opens are seen by the audit library) ---- */

/* The directories the loader searches for a bare name asked for by the object
 * `handle` (its DT_RPATH and its loaders', LD_LIBRARY_PATH, its DT_RUNPATH,
 * the system's), malloc'd; NULL when it cannot say. */
static Dl_serinfo *search_of(void *handle)
{
	Dl_serinfo size;
	if (dlinfo(handle, RTLD_DI_SERINFOSIZE, &size) != 0 || size.dls_size < sizeof(size))
		return NULL;
	Dl_serinfo *si = malloc(size.dls_size);
	if (si) {
		*si = size;
		if (dlinfo(handle, RTLD_DI_SERINFO, si) != 0) {
			free(si);
			si = NULL;
		}
	}
	return si;
}

/* The first directory of si from the i-th on that is not one of those
 * before it (a directory searched again finds nothing new: the shim's own
 * list has the program's DT_RPATH twice, as its loader's and as the
 * program's); si->dls_cnt when there is none. */
static unsigned next_dir(const Dl_serinfo *si, unsigned i)
{
	for (; i < si->dls_cnt; i++) {
		unsigned k = 0;
		while (k < i && strcmp(si->dls_serpath[k].dls_name, si->dls_serpath[i].dls_name) != 0)
			k++;
		if (k == i)
			return i;
	}
	return i;
}

/* x and y search the same directories in the same order. */
static bool same_dirs(const Dl_serinfo *x, const Dl_serinfo *y)
{
	for (unsigned i = 0, j = 0;; i++, j++) {
		i = next_dir(x, i);
		j = next_dir(y, j);
		if (i == x->dls_cnt || j == y->dls_cnt)
			return i == x->dls_cnt && j == y->dls_cnt;
		if (strcmp(x->dls_serpath[i].dls_name, y->dls_serpath[j].dls_name) != 0)
			return false;
	}
}

/*
 * glibc takes dlopen's caller from its return address: a bare name is searched
 * for along the caller's DT_RPATH (and its loaders') or DT_RUNPATH, in the
 * caller's namespace.  true when that search is the one the loader makes for
 * the shim, so that the shim may call the real dlopen itself and record what
 * it loaded as soon as it returns (the program's own objects seldom carry a
 * path of their own); false (unknown, or another search): the real function is
 * entered by a tail call and what it loads is recorded later (st__libs_later).
 * The dl calls' own errors are dropped by the real dlopen, which clears
 * dlerror's state first; errno is kept.
 */
static __attribute__((noinline)) bool same_search(const void *caller)
{
	int saved = errno;
	Dl_info di;
	struct link_map *from = NULL, *self = NULL;
	Lmid_t a = -1, b = -2;
	bool same = false;
	if (dladdr1(caller, &di, (void **)&from, RTLD_DL_LINKMAP) && from &&
	    dladdr1((const void *)same_search, &di, (void **)&self, RTLD_DL_LINKMAP) && self &&
	    dlinfo(from, RTLD_DI_LMID, &a) == 0 && dlinfo(self, RTLD_DI_LMID, &b) == 0 && a == b) {
		Dl_serinfo *x = search_of(from), *y = x ? search_of(self) : NULL;
		same = x && y && same_dirs(x, y);
		free(x);
		free(y);
	}
	errno = saved;
	return same;
}

/* The length of the dynamic string token tok ("ORIGIN", "PLATFORM", "LIB")
 * at p, a '$' (the loader's is_dst: not followed by a character of a name,
 * or the same in braces), else 0. */
static size_t dst_len(const char *p, const char *tok)
{
	const char *q = p + 1 + (p[1] == '{');
	size_t n = strlen(tok);
	char c = q[n];
	if (strncmp(q, tok, n) != 0)
		return 0;
	if (p[1] == '{')
		return c == '}' ? n + 3 : 0;
	bool name_char = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			 (c >= '0' && c <= '9') || c == '_';
	return name_char ? 0 : n + 1;
}

/* A dynamic string token in a name the loader expands ($ORIGIN, $PLATFORM
 * or $LIB; with origin_only, $ORIGIN); any other '$' is a character of the
 * path. */
static bool dst_in(const char *name, bool origin_only)
{
	for (const char *p = strchr(name, '$'); p; p = strchr(p + 1, '$'))
		if (dst_len(p, "ORIGIN") ||
		    (!origin_only && (dst_len(p, "PLATFORM") || dst_len(p, "LIB"))))
			return true;
	return false;
}
static bool has_dst(const char *name)
{
	return dst_in(name, false);
}

/* Why a dlopen of path failed, for its record: the real dlopen keeps the
 * caller's errno (the loader's own open is not seen), so the file is looked
 * at: missing (ENOENT, ENOTDIR: a failed lookup), else 0 (the loader read it,
 * and refused it: not an object, another class, a symbol missing).
 * Preserves errno. */
static int dl_path_err(const char *path)
{
	int saved = errno;
	int e = ST_SYSCALL(SYS_faccessat, AT_FDCWD, path, F_OK) != 0 ? errno : 0;
	errno = saved;
	return e == ENOENT || e == ENOTDIR ? e : 0;
}

/*
 * A refused dlopen leaves dlerror() a message, as glibc's own failure does
 * ("NAME: cannot open shared object file: No such file or directory"; the
 * shim's refusal made no dl call, so dlerror() said NULL and a program's
 * printf("%s", dlerror()) crashed or printed "(null)").  The real function
 * is asked for a stand-in that cannot exist and names the refused one, below
 * DL_REFUSED: "/proc/self/fd/-1/sandtrace-refused-<errno>/NAME" (no process
 * has a descriptor -1: the loader's open fails with ENOENT, or /proc is not
 * there and it fails so all the same; nothing is loaded).  glibc keeps that
 * failure as it keeps its own (the same flags and namespace are checked
 * first: an invalid mode is still that; the next dl call's success drops it,
 * a dlerror() call takes it once), and the dlerror wrapper takes the stand-in
 * out of the message it formats: NAME's, with the refusal's reason (EACCES
 * for a denied one).  A caller of libc's dlerror by another way (dlsym
 * RTLD_NEXT) sees the stand-in.  Returns NULL; errno kept.
 */
#define DL_REFUSED "/proc/self/fd/-1/sandtrace-refused-"

/* libc's dlerror, found without a dl call: dlsym, the shim's way to find a
 * real function (st__resolve), succeeds and so drops the message dlerror()
 * is to give (each dl call that succeeds clears it: a program's dlsym that
 * failed, then the wrapper's first call, said NULL).  Looked up by name in
 * the GNU hash table of the object that holds dlsym (dladdr1 clears
 * nothing), its default version; dlsym when that finds nothing. */
static void *libc_dlerror_find(void)
{
	static const char name[] = "dlerror";
	Dl_info di;
	struct link_map *l = NULL;
	if (!dladdr1((const void *)dlsym, &di, (void **)&l, RTLD_DL_LINKMAP) || !l || !l->l_ld)
		return NULL;
	const ElfW(Sym) *sym = NULL;
	const char *str = NULL;
	const uint32_t *gh = NULL;
	const ElfW(Half) *ver = NULL;
	for (const ElfW(Dyn) *d = l->l_ld; d->d_tag != DT_NULL; d++) {
		uintptr_t a = d->d_un.d_ptr;
		if (a < l->l_addr) /* a loader that leaves .dynamic as in the file */
			a += l->l_addr;
		if (d->d_tag == DT_SYMTAB)
			sym = (const void *)a;
		else if (d->d_tag == DT_STRTAB)
			str = (const void *)a;
		else if (d->d_tag == DT_GNU_HASH)
			gh = (const void *)a;
		else if (d->d_tag == DT_VERSYM)
			ver = (const void *)a;
	}
	if (!sym || !str || !gh || gh[0] == 0)
		return NULL;
	uint32_t h = 5381;
	for (const char *c = name; *c; c++)
		h = h * 33 + (unsigned char)*c;
	const uint32_t nbuckets = gh[0], first = gh[1];
	const uint32_t *bucket = (const uint32_t *)((const ElfW(Addr) *)(gh + 4) + gh[2]);
	const uint32_t *chain = bucket + nbuckets;
	uint32_t i = bucket[h % nbuckets];
	if (i < first)
		return NULL;
	for (;; i++) {
		uint32_t ch = chain[i - first];
		const ElfW(Sym) *s = &sym[i];
		if ((ch | 1) == (h | 1) && s->st_shndx != SHN_UNDEF &&
		    ELF64_ST_TYPE(s->st_info) == STT_FUNC && (!ver || !(ver[i] & 0x8000)) &&
		    strcmp(str + s->st_name, name) == 0)
			return (void *)(l->l_addr + s->st_value);
		if (ch & 1)
			return NULL;
	}
}
static st__t_dlerror libc_dlerror(void)
{
	void *p = atomic_load_explicit(&st__real_dlerror, memory_order_acquire);
	if (!p) {
		p = libc_dlerror_find();
		if (p)
			atomic_store_explicit(&st__real_dlerror, p, memory_order_release);
		else
			p = st__resolve(&st__real_dlerror, "dlerror");
	}
	return (st__t_dlerror)p;
}

static void *dl_refused(bool m, Lmid_t lm, const char *path, int flags)
{
	int saved = errno;
	char num[16], small[PATH_MAX];
	size_t k = sizeof(num);
	unsigned e = (unsigned)saved;
	num[--k] = '/';
	do
		num[--k] = (char)('0' + e % 10);
	while ((e /= 10) && k);
	size_t pre = sizeof(DL_REFUSED) - 1, nl = sizeof(num) - k, len = strlen(path);
	size_t size = pre + nl + len + 1;
	/* a long name (the kernel's ENAMETOOLONG, which the message says
	 * then) in a buffer of its own; none: the stand-in without it */
	char *buf = size <= sizeof(small) ? small : malloc(size);
	if (!buf) {
		buf = small;
		len = 0;
	}
	memcpy(buf, DL_REFUSED, pre);
	memcpy(buf + pre, num + k, nl);
	memcpy(buf + pre + nl, path, len);
	buf[pre + nl + len] = '\0';
	(void)libc_dlerror(); /* found before the failure it is to report */
	if (m)
		REAL(dlmopen)(lm, buf, flags);
	else
		REAL(dlopen)(buf, flags);
	if (buf != small)
		free(buf);
	errno = saved;
	return NULL;
}

/* glibc's message, the stand-in of a refusal (dl_refused) taken out of it:
 * the refused name, then glibc's words, then the refusal's reason in place
 * of the stand-in's, in the buffer glibc formatted (the stand-in's
 * directory is longer than any reason the shim gives).  Any other message
 * (an invalid mode, checked first) as glibc said it. */
EXPORT char *dlerror(void)
{
	char *m = libc_dlerror()();
	size_t n = sizeof(DL_REFUSED) - 1;
	if (!m || strncmp(m, DL_REFUSED, n) != 0)
		return m;
	int saved = errno, e = 0;
	char *p = m + n;
	while (*p >= '0' && *p <= '9')
		e = e * 10 + (*p++ - '0');
	if (*p++ != '/') {
		errno = saved;
		return m;
	}
	/* the reason: after the last ": " (a name may hold one too) */
	size_t len = strlen(p);
	char *tail = NULL;
	for (char *q = strstr(p, ": "); q; q = strstr(q + 1, ": "))
		tail = q + 2;
	/* the stand-in's own reason: ENOENT, ENAMETOOLONG for a long name */
	bool standin = tail && (strcmp(tail, strerror(ENOENT)) == 0 ||
				strcmp(tail, strerror(ENAMETOOLONG)) == 0);
	const char *now = strerror(e);
	size_t head = tail ? (size_t)(tail - p) : 0;
	if (standin && strcmp(tail, now) != 0 && head + strlen(now) <= (size_t)(p - m) + len) {
		memmove(m, p, head);
		memcpy(m + head, now, strlen(now) + 1);
	} else {
		memmove(m, p, len + 1);
	}
	errno = saved;
	return m;
}

static void *dl_real(bool m, Lmid_t lm, const char *path, int flags)
{
	return m ? REAL(dlmopen)(lm, path, flags) : REAL(dlopen)(path, flags);
}

/*
 * A library by path (dlopen, or dlmopen into lm when m), judged and
 * recorded as a read of that path (a failed lookup when the file is not
 * there); refused, dlerror() says why (dl_refused asks glibc itself, with
 * the same flags; errno is the refusal's, as a dlopen does not set it).
 * With --manifest or --verify the version of a file that is there is
 * recorded (and verified) before the call, as an exec's is (the loader
 * reads the file whether or not it then loads it: the same record as after
 * the call): one that failed verification is refused under a fence before
 * the loader maps it and runs its constructors (after the call, with no
 * descriptor to undo, it was loaded and only reported).
 */
static __attribute__((noinline)) void *dl_checked(bool m, Lmid_t lm, const char *path, int flags)
{
	struct st_call c;
	if (!st__enter(&c))
		return dl_real(m, lm, path, flags);
	struct st_acc *a = &st__tls_acc[0];
	st__acc_init(a, AT_FDCWD, path, K_R, false);
	int e = st__pre(a);
	if (e) {
		st__leave(&c);
		errno = e;
		return dl_refused(m, lm, path, flags);
	}
	a->loads = true;
	bool before = (st__g.flags & SANDTRACE_F_IDENTITY) && dl_path_err(path) == 0;
	if (before) {
		st__post(a, 0);
		if (a->refuse) {
			st__leave(&c);
			errno = EACCES;
			return dl_refused(m, lm, path, flags);
		}
	}
	errno = c.saved_errno;
	void *h = ST_FORWARD(dl_real(m, lm, path, flags));
	int after = errno;
	if (!before)
		st__post(a, h == NULL ? dl_path_err(path) : 0);
	st__leave(&c);
	errno = after;
	return h;
}

static void *noted(void *h);
/*
 * The objects a dlopen the shim makes itself adds to the link map (by path,
 * a name with $LIB or $PLATFORM, a bare name along the shim's own search,
 * and the same by dlmopen), judged when it returns: its DT_NEEDED (and
 * theirs), which the loader finds along their own paths and opens inside
 * ld.so, where no wrapper can refuse the open, and the object itself when
 * the wrapper did not judge it first (a bare name the loader found; where,
 * it says only after).  Under a policy that can refuse, an object the
 * sandbox hides, or whose version a fenced --verify refuses, unloads the
 * whole call again (dlclose of its handle) and the call fails as if that
 * library were missing: dlerror() says "NAME: cannot open shared object
 * file: No such file or directory" (EACCES's words for --verify) with NAME
 * the hidden library's file name (the DT_NEEDED spelling the loader's own
 * message has when it finds nothing), or the caller's name for the object
 * itself.  Each object added is judged and recorded (every hidden one a
 * violation), not only the first.  The constructors of what was loaded have
 * run by then (the loader opens a DT_NEEDED only inside the call), and an
 * object that cannot be unloaded (RTLD_NODELETE, DF_1_NODELETE) stays: a
 * second dlopen finds it loaded and adds nothing to judge.
 * An object loaded before the call (the same file by another name, a
 * DT_NEEDED already there by its soname) is not added, so not judged again;
 * an RTLD_NOLOAD call adds nothing, and no snapshot is taken for it, nor
 * when the policy cannot refuse (the walk after the call records what was
 * loaded), nor for the shim's own dlopen (st__depth).
 */
/*
 * One judged call at a time (dl_lock, from the snapshot to the judgement and
 * the dlclose of a refusal): two threads' calls each took what the other
 * loaded meanwhile for their own.  Fenced, 4 threads each opening a library
 * with a hidden DT_NEEDED and one without, 300 times: the first was loaded,
 * not refused, 924 of 1,200 times (a second call found the library the
 * first had loaded and not yet unloaded: nothing new, and it kept it
 * loaded), and the second refused once, naming the other's hidden library.
 * A call made inside one (a constructor's dlopen, the same thread:
 * dl_lock_mine) goes on under the outer call's lock.  A judged call is
 * taken before the loader's own lock (a dlopen holds that through the
 * constructors); one made by a constructor inside a call the shim does not
 * judge (a dlopen entered by a tail call, libc's own) holds the loader's
 * lock already, and a second thread's judged call may hold this one and
 * wait for the loader's: a call waits at most DL_LOCK_WAIT_MS for it, then
 * goes on without (judging what others load meanwhile, as before).  A
 * forked child starts with it free (st__dl_lock_child).
 */
#define DL_LOCK_WAIT_MS 500
struct dl_new {
	bool on, locked;
	struct st_dl_snap snap;
};
static pthread_mutex_t dl_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread bool dl_lock_mine;
static void dl_new_begin(struct dl_new *s, int flags)
{
	s->on = !(flags & RTLD_NOLOAD) && !st__depth && st__g.active && st__listing_filtered();
	s->locked = false;
	if (s->on && !dl_lock_mine) {
		int saved = errno;
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += DL_LOCK_WAIT_MS * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		s->locked = dl_lock_mine = pthread_mutex_timedlock(&dl_lock, &until) == 0;
		errno = saved;
	}
	if (s->on)
		st__dl_snap(&s->snap);
}
/* the lock dl_new_begin took given back.  Preserves errno. */
static void dl_unlock(struct dl_new *s)
{
	if (!s->locked)
		return;
	s->locked = false;
	dl_lock_mine = false;
	int saved = errno;
	pthread_mutex_unlock(&dl_lock);
	errno = saved;
}
void st__dl_lock_child(void)
{
	if (!dl_lock_mine)
		dl_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}
/* the snapshot freed and the lock given back (the call is over) */
static void dl_new_free(struct dl_new *s)
{
	if (s->on)
		st__dl_snap_free(&s->snap);
	s->on = false;
	dl_unlock(s);
}
static void *dl_new_end(struct dl_new *s, bool m, Lmid_t lm, const char *path, int flags,
			void *h, bool main_judged);

/*
 * What a dlopen of a name with $LIB or $PLATFORM (and no $ORIGIN) loaded,
 * h: the loader expands those two the same for every caller (its own
 * library directory, the platform it runs on), so the shim calls it itself
 * rather than by a tail call, and the file the loader opened is the loaded
 * object's name (dlinfo's link map: the expanded name), judged and recorded
 * as a library by path is, before the call returns.  The expansion is the
 * loader's alone (its $PLATFORM is not always the kernel's AT_PLATFORM), so
 * the check comes after the load: one the sandbox denies, or whose version a
 * fenced --verify refuses, is unloaded again (its constructors have run)
 * and the call fails as a refused one does.  What it brought with it is
 * judged (dl_new_end) and noted as after a dlopen by name.  A name not
 * found leaves no record (where the loader looked is not known).
 */
static __attribute__((noinline)) void *dl_dst(bool m, Lmid_t lm, const char *path, int flags)
{
	struct dl_new s;
	dl_new_begin(&s, flags);
	void *h = dl_real(m, lm, path, flags);
	if (h == NULL) {
		dl_new_free(&s);
		return NULL;
	}
	int saved = errno, e = 0;
	struct link_map *l = NULL;
	struct st_call c;
	if (dlinfo(h, RTLD_DI_LINKMAP, &l) == 0 && l && l->l_name[0] == '/' && st__enter(&c)) {
		e = st__own_check(l->l_name, K_R, 0);
		st__leave(&c);
	}
	if (e) {
		REAL(dlclose)(h);
		dl_new_free(&s); /* (after the dlclose: dl_lock) */
		errno = e;
		return dl_refused(m, lm, path, flags);
	}
	errno = saved;
	return noted(dl_new_end(&s, m, lm, path, flags, h, true));
}

/* Does a directory of the search si hold name?  A relative one (an empty or
 * relative LD_LIBRARY_PATH entry: "." or "lib") is looked in below the cwd,
 * as the loader does. */
static bool dirs_hold(const Dl_serinfo *si, const char *name, size_t nlen, char *buf)
{
	for (unsigned i = next_dir(si, 0); i < si->dls_cnt; i = next_dir(si, i + 1)) {
		const char *d = si->dls_serpath[i].dls_name;
		if (st__path_join(d, strlen(d), name, nlen, buf, PATH_MAX) >= 0 &&
		    ST_SYSCALL(SYS_faccessat, AT_FDCWD, buf, F_OK) == 0)
			return true;
	}
	return false;
}
/* Each directory of si joined to name, a failed lookup (N dir/name). */
static void dirs_missing(const Dl_serinfo *si, const char *name, size_t nlen, char *buf)
{
	for (unsigned i = next_dir(si, 0); i < si->dls_cnt; i = next_dir(si, i + 1)) {
		const char *d = si->dls_serpath[i].dls_name;
		if (st__path_join(d, strlen(d), name, nlen, buf, PATH_MAX) >= 0)
			st__record_path(AT_FDCWD, buf, K_R, false, ENOENT);
	}
}

/* A dlopen of a bare name, searched for along the shim's own search (the
 * caller's: same_search), failed: when no directory of that search holds
 * the name, each place looked in is a failed lookup (N dir/name), what an
 * auditor needs to see that the name was looked for and not found (the
 * loader's own opens are not seen).  The ld.so.cache the loader also
 * consults holds no name that none of them has, but for the directories of
 * ld.so.conf: those it names too; a relative directory (an empty or relative
 * LD_LIBRARY_PATH entry) is the cwd's.  When one holds it, the dlopen failed for
 * another reason and nothing is recorded here.  Preserves errno, not
 * dlerror's message: the dlinfo of the search clears it (true when the
 * search was asked: the caller asks the failure again for its message). */
static __attribute__((noinline)) bool dl_name_missing(const char *name)
{
	struct st_call c;
	if (!st__enter(&c))
		return false;
	Dl_info di;
	struct link_map *self = NULL;
	Dl_serinfo *si = NULL;
	size_t nlen = strlen(name);
	if (dladdr1((const void *)dl_name_missing, &di, (void **)&self, RTLD_DL_LINKMAP) && self)
		si = search_of(self);
	char buf[PATH_MAX];
	if (si && !dirs_hold(si, name, nlen, buf))
		dirs_missing(si, name, nlen, buf);
	free(si);
	st__leave(&c); /* errno as on entry */
	return true;
}

/* name with each $ORIGIN (or ${ORIGIN}) made the directory of the object l,
 * as the loader expands it for a dlopen l makes: the program's is the
 * directory of /proc/self/exe (glibc's _dl_get_origin), another object's
 * that of the absolute name the loader gave it.  false when that cannot be
 * told (a relative name, another token: $LIB, $PLATFORM), or it does not
 * fit. */
static bool dst_expand(const struct link_map *l, const char *name, char *out, size_t size)
{
	char origin[PATH_MAX];
	ssize_t olen;
	if (l->l_name[0] == '\0') {
		olen = ST_SYSCALL(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", origin,
				  sizeof(origin) - 1);
	} else if (l->l_name[0] == '/' && strlen(l->l_name) < sizeof(origin)) {
		olen = (ssize_t)strlen(l->l_name);
		memcpy(origin, l->l_name, (size_t)olen);
	} else {
		return false;
	}
	if (olen <= 0 || origin[0] != '/')
		return false;
	while (olen > 1 && origin[olen - 1] != '/')
		olen--;
	if (olen > 1)
		olen--; /* the directory: "/" for an object at the root */
	size_t n = 0;
	for (const char *p = name; *p;) {
		size_t tok = p[0] == '$' ? dst_len(p, "ORIGIN") : 0;
		if (p[0] == '$' && (dst_len(p, "PLATFORM") || dst_len(p, "LIB")))
			return false; /* $LIB, $PLATFORM: not told here */
		if (tok) {
			if (n + (size_t)olen >= size)
				return false;
			memcpy(out + n, origin, (size_t)olen);
			n += (size_t)olen;
			p += tok;
		} else {
			if (n + 1 >= size)
				return false;
			out[n++] = *p++;
		}
	}
	out[n] = '\0';
	return true;
}

/*
 * A dlopen (dlmopen into lm: the base namespace or a new one) entered by a
 * tail call (the caller's own search, or a name with $ORIGIN) that will find
 * nothing: what the loader will look in is recorded now, each a failed
 * lookup, as dl_name_missing records the shim's own search (nothing could
 * be recorded after the call).  A bare name: each directory of the caller's
 * search (dlinfo(RTLD_DI_SERINFO) of the caller's object: its DT_RPATH and
 * its loaders', LD_LIBRARY_PATH, its DT_RUNPATH with $ORIGIN expanded, the
 * system's), when none holds it; a name with $ORIGIN: that name expanded
 * for the caller, when it is missing.  Then the loader is asked for the
 * name without loading anything (RTLD_NOLOAD, in the namespace the call
 * loads into; the base one for a new namespace): an object of that name
 * already loaded, or one the shim's own search finds (ld.so.cache holds
 * what no listed directory does), and nothing is recorded.  Nor for a mode
 * the loader refuses before it looks (dlopen_doit's, dlmopen_doit's
 * checks), nor another namespace.  Errno kept; dlerror's state is the real
 * call's, made after.
 */
#define DL_MODES                                                                                   \
	(RTLD_BINDING_MASK | RTLD_NOLOAD | RTLD_DEEPBIND | RTLD_GLOBAL | RTLD_LOCAL | RTLD_NODELETE)
static __attribute__((noinline)) void dl_tail_missing(const void *caller, bool m, Lmid_t lm,
						      const char *name, int flags)
{
	if (!(flags & RTLD_BINDING_MASK) || (flags & ~DL_MODES) ||
	    (m && lm != LM_ID_BASE && lm != LM_ID_NEWLM) || (m && lm == LM_ID_NEWLM && (flags & RTLD_GLOBAL)))
		return;
	struct st_call c;
	if (!st__enter(&c))
		return;
	Dl_info di;
	struct link_map *from = NULL;
	Lmid_t in = LM_ID_BASE;
	char buf[PATH_MAX];
	Dl_serinfo *si = NULL;
	size_t nlen = strlen(name);
	bool missing = false;
	if (dladdr1(caller, &di, (void **)&from, RTLD_DL_LINKMAP) && from &&
	    (m || dlinfo(from, RTLD_DI_LMID, &in) == 0)) {
		if (strchr(name, '/')) {
			missing = dst_expand(from, name, buf, sizeof(buf)) &&
				  dl_path_err(buf) != 0;
		} else {
			si = search_of(from);
			missing = si && !dirs_hold(si, name, nlen, buf);
		}
	}
	if (missing) {
		void *h = REAL(dlmopen)(m ? LM_ID_BASE : in, name, RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			REAL(dlclose)(h);
			missing = false;
		} else {
			missing = libc_dlerror()() != NULL; /* not found; NULL: found, not loaded */
		}
	}
	if (missing && si)
		dirs_missing(si, name, nlen, buf);
	else if (missing)
		st__record_path(AT_FDCWD, buf, K_R, false, dl_path_err(buf));
	free(si);
	st__leave(&c); /* errno as on entry */
}
/*
 * A bare name the caller's search (the shim's own: same_search) finds in a
 * directory the sandbox hides must be found as if that file were not there:
 * the loader's own open cannot be refused, so the name is looked up here
 * first, when the policy can refuse (st__listing_filtered) and no object of
 * that name is loaded yet.  Returns 0 to leave the name to the loader:
 * nothing hidden comes first.  Else out holds the path to open instead (by
 * path, judged: dl_checked): 1, the first place of the search that holds
 * the name and is not hidden; 2, when every place that holds it is hidden,
 * the first of them, whose refusal is the answer (ENOENT; dlerror's message
 * then names the bare name, as the loader's that found nothing).
 * Not for the ld.so.cache's names outside the search's directories.
 * Preserves errno.
 */
static __attribute__((noinline)) int dl_name_hidden(const char *name, bool m, Lmid_t lm, char *out)
{
	if (!st__listing_filtered())
		return 0;
	int saved = errno;
	void *h = m ? REAL(dlmopen)(lm, name, RTLD_LAZY | RTLD_NOLOAD)
		    : REAL(dlopen)(name, RTLD_LAZY | RTLD_NOLOAD);
	if (h) { /* loaded already: the loader does not search */
		REAL(dlclose)(h);
		errno = saved;
		return 0;
	}
	struct st_call c;
	if (!st__enter(&c)) {
		errno = saved;
		return 0;
	}
	Dl_info di;
	struct link_map *self = NULL;
	Dl_serinfo *si = NULL;
	size_t nlen = strlen(name);
	if (dladdr1((const void *)dl_name_hidden, &di, (void **)&self, RTLD_DL_LINKMAP) && self)
		si = search_of(self);
	int instead = 0;
	char buf[PATH_MAX];
	for (unsigned i = si ? next_dir(si, 0) : 0; si && i < si->dls_cnt; i = next_dir(si, i + 1)) {
		const char *d = si->dls_serpath[i].dls_name;
		if (st__path_join(d, strlen(d), name, nlen, buf, PATH_MAX) < 0 ||
		    ST_SYSCALL(SYS_faccessat, AT_FDCWD, buf, F_OK) != 0)
			continue;
		if (!st__refused(AT_FDCWD, buf, K_R, false, false)) {
			if (instead) { /* a visible one after a hidden one */
				memcpy(out, buf, strlen(buf) + 1);
				instead = 1;
			}
			break;
		}
		if (!instead) { /* the first hidden one: refused if no other */
			memcpy(out, buf, strlen(buf) + 1);
			instead = 2;
		}
	}
	free(si);
	st__leave(&c);
	errno = saved;
	return instead;
}

/* what a library opened by path brought with it (its DT_NEEDED, found along its
 * own paths) is noted as after a dlopen by name */
static void *noted(void *h)
{
	if (h)
		st__note_libraries(); /* errno is the real call's */
	return h;
}

/* h, the call's result (NULL: it failed, nothing to judge), or NULL when an
 * object it added is refused (h closed, dlerror() set by dl_refused, errno
 * the refusal's).  main_judged: the wrapper judged h's own file before. */
static void *dl_new_judge(struct dl_new *s, bool m, Lmid_t lm, const char *path, int flags,
			  void *h, bool main_judged);
static __attribute__((noinline)) void *dl_new_end(struct dl_new *s, bool m, Lmid_t lm,
						  const char *path, int flags, void *h,
						  bool main_judged)
{
	h = dl_new_judge(s, m, lm, path, flags, h, main_judged);
	dl_unlock(s);
	return h;
}
static void *dl_new_judge(struct dl_new *s, bool m, Lmid_t lm, const char *path, int flags,
			  void *h, bool main_judged)
{
	if (!s->on)
		return h;
	size_t len = 0;
	int main_at = -1;
	char *names = h ? st__dl_added(&s->snap, h, main_judged, &len, &main_at) : NULL;
	/* (the lock kept until the dlclose of a refusal: dl_new_end) */
	st__dl_snap_free(&s->snap);
	s->on = false;
	if (!names)
		return h;
	int saved = errno, first = 0;
	size_t bad = 0;
	struct st_call c;
	if (st__enter(&c)) {
		for (size_t i = 0; i < len; i += strlen(names + i) + 1) {
			int e = st__own_check(names + i, K_R, 0);
			if (e && !first) {
				first = e;
				bad = i;
			}
		}
		st__leave(&c);
	}
	if (!first) {
		free(names);
		errno = saved;
		return h;
	}
	REAL(dlclose)(h);
	const char *say = path;
	if ((int)bad != main_at) { /* a dependency: its file's name */
		say = strrchr(names + bad, '/');
		say = say ? say + 1 : names + bad;
	}
	errno = first;
	h = dl_refused(m, lm, say, flags); /* errno kept: the refusal's */
	free(names);
	return h;
}

/* A library by path (dlopen, or dlmopen into lm when m): the file judged
 * before the call (dl_checked), what it brought after (dl_new_end). */
static __attribute__((noinline)) void *dl_path(bool m, Lmid_t lm, const char *path, int flags)
{
	struct dl_new s;
	dl_new_begin(&s, flags);
	return noted(dl_new_end(&s, m, lm, path, flags, dl_checked(m, lm, path, flags), true));
}

/* A bare name the shim's own call finds (same_search): recorded now, and so
 * is a name not found; one hidden is not found there (dl_name_hidden), and
 * what the call adds is judged (dl_new_end) */
static __attribute__((noinline)) void *dl_own_name(bool m, Lmid_t lm, const char *path, int flags)
{
	char instead[PATH_MAX];
	struct dl_new s;
	int hid = has_dst(path) ? 0 : dl_name_hidden(path, m, lm, instead);
	dl_new_begin(&s, flags);
	if (hid == 1) {
		void *h = dl_checked(m, lm, instead, flags);
		return noted(dl_new_end(&s, m, lm, path, flags, h, true));
	}
	if (hid == 2) { /* refused (recorded), said of the bare name */
		void *h = dl_checked(m, lm, instead, flags);
		if (!h) {
			dl_new_free(&s);
			return dl_refused(m, lm, path, flags);
		}
		return noted(dl_new_end(&s, m, lm, path, flags, h, true));
	}
	void *h = dl_real(m, lm, path, flags);
	/* dl_name_missing's dlinfo cleared dlerror's message: the
	 * loader is asked again, for the caller's dlerror() */
	if (h == NULL && !has_dst(path) && dl_name_missing(path))
		h = dl_real(m, lm, path, flags);
	return noted(dl_new_end(&s, m, lm, path, flags, h, false));
}

EXPORT void *dlopen(const char *path, int flags)
{
	if (!path)
		return REAL(dlopen)(path, flags);
	if (!strchr(path, '/') && same_search(__builtin_return_address(0)))
		return dl_own_name(false, 0, path, flags);
	if (!strchr(path, '/') || dst_in(path, true)) {
		/* found by the loader's search, which starts at the caller's
		 * DT_RUNPATH, or spelled with $ORIGIN, the caller's directory:
		 * the real dlopen entered by a tail call, so that its caller is
		 * the program; what it loads is recorded later (st__libs_later),
		 * the places a name not found was looked for now */
		dl_tail_missing(__builtin_return_address(0), false, 0, path, flags);
		st__libs_later();
		return REAL(dlopen)(path, flags);
	}
	if (has_dst(path)) /* $LIB, $PLATFORM: the same for any caller */
		return dl_dst(false, 0, path, flags);
	return dl_path(false, 0, path, flags);
}
/* What a dlopen entered by a tail call loaded is noted before it can be
 * unloaded (closed before the next checked call, it was never recorded). */
EXPORT int dlclose(void *handle)
{
	if (!st__depth && st__libs_due())
		st__libs_flush(false);
	return REAL(dlclose)(handle);
}
/* iconv_open loads the conversion's gconv modules with libc's internal
 * dlopen, which the dlopen wrapper does not see (and iconv_close may unload
 * them before anything else looks): the libraries loaded are recorded when
 * it returns, as after a dlopen by name.  errno is iconv_open's. */
EXPORT iconv_t iconv_open(const char *to, const char *from)
{
	iconv_t r = REAL(iconv_open)(to, from);
	if (r != (iconv_t)-1)
		st__note_libraries();
	return r;
}
EXPORT void *dlmopen(Lmid_t lm, const char *path, int flags)
{
	if (lm != LM_ID_BASE)
		atomic_store_explicit(&st__g.dlmopened, 1, memory_order_relaxed);
	if (path && !strchr(path, '/') && same_search(__builtin_return_address(0)))
		return dl_own_name(true, lm, path, flags);
	if (!path || !strchr(path, '/') || dst_in(path, true)) {
		if (path) {
			dl_tail_missing(__builtin_return_address(0), true, lm, path, flags);
			st__libs_later();
		}
		return REAL(dlmopen)(lm, path, flags); /* a tail call, as dlopen's */
	}
	if (has_dst(path))
		return dl_dst(true, lm, path, flags);
	return dl_path(true, lm, path, flags);
}
