/* B47: files libc opens itself, by internal calls no open or fopen wrapper
 * sees: the utmp file utmpname names (opened lazily by setutent, getutent,
 * getutid, getutline, pututline and their utmpx twins), the wtmp file updwtmp
 * names, the getdate templates DATEMSK names; and at places libc fixes: /etc/shells (getusershell), /etc/fstab
 * (setfsent, getfsent, getfsspec), /etc/ttys (getttyent), /dev/tty
 * (getpass), /dev/ptmx (posix_openpt, getpt, openpty, forkpty), /proc/loadavg
 * (getloadavg), /sys's cpu lists (get_nprocs_conf, sysconf), the groups' limit
 * in /proc/sys (sysconf), the default
 * utmp file (getlogin), /etc/resolv.conf (res_init), /etc/gai.conf
 * (getaddrinfo's sort).
 *   ./repro prepare     write one entry into hid/h.utmp and hid/h.wtmp
 *   ./repro files       the calls on <W>'s files (traced, then fenced)
 *   ./repro fixed       the calls on the fixed files (fenced: they are denied)
 *   ./repro system      logwtmp, login, logout on the system's utmp and wtmp
 *   ./repro resolver    res_init, getaddrinfo of the wildcard (recorded only)
 *   ./repro users HOW   the user database looked up inside glob's or wordexp's
 *                       tilde, cuserid or getpw; the nss walks and databases
 *                       (recorded only) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <aliases.h>
#include <glob.h>
#include <gshadow.h>
#include <shadow.h>
#include <pwd.h>
#include <wordexp.h>
#include <netdb.h>
#include <rpc/netdb.h>
#include <resolv.h>
#include <fstab.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <ttyent.h>
#include <unistd.h>
#include <utmp.h>
#include <utmpx.h>

static struct utmp entry(const char *line, const char *user)
{
	struct utmp u;
	memset(&u, 0, sizeof(u));
	u.ut_type = USER_PROCESS;
	u.ut_pid = 4747;
	strncpy(u.ut_line, line, sizeof(u.ut_line));
	strncpy(u.ut_id, line + strlen(line) - 2, sizeof(u.ut_id));
	strncpy(u.ut_user, user, sizeof(u.ut_user));
	return u;
}

/* every entry of the current utmp file, then how the reading ended */
static void list(const char *what)
{
	struct utmp *u;
	errno = 0;
	setutent();
	int n = 0;
	while ((u = getutent()))
		printf("%s: %s %s\n", what, u->ut_line, u->ut_user), n++;
	printf("%s: %d entries, %s\n", what, n, n ? "end" : strerror(errno));
	endutent();
}

static void files(void)
{
	struct utmp u = entry("pts/47", "alice"), *r;
	/* a file that is there: written, then read back every way */
	if (utmpname("vis.utmp")) /* relative: <W>/vis.utmp */
		return perror("utmpname");
	setutent();
	r = pututline(&u);
	printf("pututline vis: %s\n", r ? "ok" : strerror(errno));
	endutent();
	list("vis");
	struct utmp key = entry("pts/47", "");
	r = getutline(&key);
	printf("getutline vis: %s\n", r ? r->ut_user : strerror(errno));
	endutent();
	key.ut_type = USER_PROCESS;
	r = getutid(&key);
	printf("getutid vis: %s\n", r ? r->ut_user : strerror(errno));
	endutent();
	struct utmp buf, *res;
	setutent();
	printf("getutent_r vis: %d\n", getutent_r(&buf, &res));
	endutent();
	updwtmp("vis.wtmp", &u);
	/* the utmpx twins, on the same file */
	if (utmpxname("vis.utmp"))
		return perror("utmpxname");
	setutxent();
	struct utmpx *x = getutxent();
	printf("getutxent vis: %s\n", x ? x->ut_user : strerror(errno));
	endutxent();
	struct utmpx ux;
	memset(&ux, 0, sizeof(ux));
	ux.ut_type = USER_PROCESS;
	strcpy(ux.ut_line, "pts/48");
	strcpy(ux.ut_id, "48");
	strcpy(ux.ut_user, "bob");
	struct utmpx *rx = pututxline(&ux);
	printf("pututxline vis: %s\n", rx ? "ok" : strerror(errno));
	endutxent();
	updwtmpx("vis.wtmp", &ux);
	list("vis again");

	/* a file the fenced run hides: as if it were not there */
	if (utmpname("hid/h.utmp"))
		return perror("utmpname");
	list("hid");
	errno = 0;
	r = getutline(&key);
	printf("getutline hid: %s\n", r ? r->ut_user : strerror(errno));
	errno = 0;
	x = getutxent();
	printf("getutxent hid: %s\n", x ? x->ut_user : strerror(errno));
	errno = 0;
	setutent();
	r = pututline(&u);
	printf("pututline hid: %s\n", r ? "ok" : strerror(errno));
	errno = 0;
	rx = pututxline(&ux);
	printf("pututxline hid: %s\n", rx ? "ok" : strerror(errno));
	endutent();
	updwtmp("hid/h.wtmp", &u);
	updwtmpx("hid/h.wtmp", &ux);
	/* getdate's templates, the file DATEMSK names */
	struct tm tm, *t;
	setenv("DATEMSK", "datemsk", 1);
	t = getdate("2026-01-02");
	printf("getdate vis: %d\n", t ? t->tm_mday : -getdate_err);
	setenv("DATEMSK", "hid/datemsk", 1);
	t = getdate("2026-01-03");
	printf("getdate hid: %d\n", t ? t->tm_mday : -getdate_err);
	printf("getdate_r hid: %d\n", getdate_r("2026-01-04", &tm));
	/* back to the visible one: read as before */
	utmpname("vis.utmp");
	list("vis last");
}

static void fixed(void)
{
	char *s;
	int n = 0;
	setusershell();
	while ((s = getusershell()) && n < 2)
		printf("shell %d: %s\n", n++, s);
	endusershell();
	errno = 0;
	int ok = setfsent();
	printf("setfsent: %d %s\n", ok, ok ? "" : strerror(errno));
	struct fstab *f = getfsent();
	printf("getfsent: %s\n", f ? "entry" : "none");
	printf("getfsspec: %s\n", getfsspec("/dev/b47-none") ? "entry" : "none");
	endfsent();
	printf("getttyent: %s\n", getttyent() ? "entry" : "none");
	endttyent();
	double avg[3];
	errno = 0;
	int l = getloadavg(avg, 3);
	printf("getloadavg: %d %s\n", l, l < 0 ? strerror(errno) : "");
	errno = 0;
	int pt = posix_openpt(O_RDWR | O_NOCTTY);
	printf("posix_openpt: %s\n", pt >= 0 ? "ok" : strerror(errno));
	if (pt >= 0)
		close(pt);
	errno = 0;
	pt = getpt();
	printf("getpt: %s\n", pt >= 0 ? "ok" : strerror(errno));
	if (pt >= 0)
		close(pt);
	int m, sl;
	errno = 0;
	l = openpty(&m, &sl, NULL, NULL, NULL);
	printf("openpty: %s\n", l == 0 ? "ok" : strerror(errno));
	if (l == 0)
		close(m), close(sl);
	errno = 0;
	pid_t child = forkpty(&m, NULL, NULL, NULL);
	if (child == 0)
		_exit(0);
	printf("forkpty: %s\n", child > 0 ? "ok" : strerror(errno));
	if (child > 0)
		waitpid(child, NULL, 0), close(m);
	s = getpass("b47 password: ");
	printf("getpass: %s\n", s ? s : "(null)");
	/* a null prompt: glibc prints it as "(null)" (its __fxprintf's %s), at the end of
	 * stdin: "" */
	s = getpass(NULL);
	printf("getpass null: %s\n", s ? s : "(null)");
	printf("get_nprocs: %s\n", get_nprocs_conf() > 0 && sysconf(_SC_NPROCESSORS_ONLN) > 0 &&
					    sysconf(_SC_NGROUPS_MAX) > 0
					? "ok"
					: "none");
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";
	if (!strcmp(how, "prepare")) {
		struct utmp u = entry("pts/46", "carol");
		utmpname("hid/h.utmp");
		setutent();
		if (!pututline(&u))
			perror("prepare pututline");
		endutent();
		updwtmp("hid/h.wtmp", &u);
		return 0;
	}
	if (!strcmp(how, "files")) {
		getlogin(); /* the default utmp file, when there is no login uid */
		files();
	} else if (!strcmp(how, "fixed")) {
		fixed();
	} else if (!strcmp(how, "users") && argc > 2) {
		/* the user database, looked up inside other functions */
		const char *k = argv[2];
		char buf[1024];
		int r = -1;
		if (!strcmp(k, "glob")) {
			glob_t g;
			r = glob("~root", GLOB_TILDE, NULL, &g);
		} else if (!strcmp(k, "wordexp")) {
			wordexp_t w;
			r = wordexp("~root/x", &w, 0);
		} else if (!strcmp(k, "cuserid")) {
			r = cuserid(buf) ? 0 : -1;
		} else if (!strcmp(k, "getpw")) {
			r = getpw(0, buf);
		} else if (!strcmp(k, "getpwent_r")) {
			struct passwd pw, *res;
			r = getpwent_r(&pw, buf, sizeof(buf), &res);
		} else if (!strcmp(k, "getspent")) {
			r = getspent() ? 0 : -1;
		} else if (!strcmp(k, "getsgnam")) {
			r = getsgnam("root") ? 0 : -1;
		} else if (!strcmp(k, "getaliasbyname")) {
			r = getaliasbyname("b47-none") ? 0 : -1;
		} else if (!strcmp(k, "gethostent_r")) {
			struct hostent h, *res;
			int e;
			r = gethostent_r(&h, buf, sizeof(buf), &res, &e);
		} else if (!strcmp(k, "getrpcbyname_r")) {
			struct rpcent re, *res;
			r = getrpcbyname_r("b47-none", &re, buf, sizeof(buf), &res);
		}
		printf("users %s: %d\n", k, r);
	} else if (!strcmp(how, "system")) {
		/* the system's utmp and wtmp (a mount namespace's stand-ins) */
		struct utmp u = entry("pts/49", "erin");
		strncpy(u.ut_id, "b47", sizeof(u.ut_id));
		logwtmp("pts/9", "dave", "b47host");
		login(&u);
		printf("logout: %d\n", logout("zz"));
	} else if (!strcmp(how, "resolver")) {
		/* res_init reads /etc/resolv.conf; getaddrinfo reads /etc/gai.conf
		 * to sort more than one address (the wildcard's two here) */
		printf("res_init: %d\n", res_init());
		struct addrinfo h, *r, *p;
		memset(&h, 0, sizeof(h));
		h.ai_socktype = SOCK_STREAM;
		h.ai_flags = AI_PASSIVE;
		int e = getaddrinfo(NULL, "80", &h, &r), k = 0;
		for (p = e ? NULL : r; p; p = p->ai_next)
			k++;
		printf("getaddrinfo: %d %d\n", e, k);
	}
	return 0;
}
