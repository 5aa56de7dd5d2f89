/* daemon/cli.c - `sandtrace`: run a command under trace, print the environment of a daemon, read
 * reports. */
#include <bsd/stdlib.h>
#include <bsd/string.h>
#include <err.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sandtrace/arena.h>
#include <sandtrace/common.h>
#include <sandtrace/protocol.h>

#include "manifest.h"
#include "report.h"
#include "util.h"

#ifndef SANDTRACE_VERSION
#define SANDTRACE_VERSION "0.0.0"
#endif
#ifndef SANDTRACE_LIBDIR_REL
#define SANDTRACE_LIBDIR_REL "lib/sandtrace"
#endif
#ifndef SANDTRACE_LIBDIR_ABS
#define SANDTRACE_LIBDIR_ABS "/usr/local/lib/sandtrace"
#endif

/* How long the daemon may take to get ready, and to write its report after SIGTERM. */
#define READY_TIMEOUT_MS 30000
#define SHUTDOWN_TIMEOUT_S 120

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: sandtrace run [OPTIONS] -- CMD [ARG...]\n"
	    "       sandtrace env [--loader-audit] --socket PATH\n"
	    "       sandtrace report [--list | --audit] FILE\n"
	    "       sandtrace audit [--all] FILE\n"
	    "       sandtrace diff MANIFEST_A MANIFEST_B\n"
	    "       sandtrace --help | --version\n"
	    "\n"
	    "run options:\n"
	    "  --policy FILE        sandbox rules (ACTION CLASS PREFIX per line)\n"
	    "  --fence              deny what the policy does not allow (default rules without "
	    "--policy)\n"
	    "  --fail-open          a lost daemon allows what would be asked (marked in the "
	    "report)\n"
	    "  --fail-closed        a lost daemon denies what would be asked (default)\n"
	    "  --report FILE        write the JSON Lines report to FILE (default: a temporary "
	    "file)\n"
	    "  --summary[=FILE]     print the summary to stderr (or FILE) even when it is not a "
	    "tty\n"
	    "  --strict             exit %d when CMD succeeded but the trace found violations,\n"
	    "                       untraced programs or is incomplete\n"
	    "  --record=first|all   record the first access of each (kind, path) (default) or "
	    "every\n"
	    "                       distinct one per process\n"
	    "  --no-cache           no shared-memory cache: every access asks the daemon\n"
	    "  --loader-audit       also load the LD_AUDIT module (records the loader's failed\n"
	    "                       library searches; costs each process a second libc)\n"
	    "  --pidfile FILE       write the daemon's pid to FILE\n"
	    "  --log FILE           keep the daemon's log in FILE (default: removed at the end)\n"
	    "  --arena-size BYTES   size of the shared-memory arena (K, M, G suffixes)\n"
	    "  --arena-dir DIR      put the arena in DIR, a tmpfs (default: POSIX shared memory,\n"
	    "                       /dev/shm); a tmpfs mounted huge=within_size serves it in\n"
	    "                       2 MiB pages, which a traced process maps more cheaply\n"
	    "\n"
	    "dependency audit (run options; `ask` policy rules use them too):\n"
	    "  --audit              map every file used to its package (report records)\n"
	    "  --deps PKG,PKG       declared dependencies (debian/control syntax)\n"
	    "  --deps-from DIR      declared: DIR/debian/control Build-Depends{,-Arch,-Indep}\n"
	    "  --no-implicit-deps   do not declare Essential and build-essential's closure\n"
	    "  --dpkg-root DIR      the dpkg database (default /var/lib/dpkg)\n"
	    "  --owners FILE        a PATH<TAB>PACKAGE owner map instead of dpkg's lists\n"
	    "\n"
	    "input manifests (run options):\n"
	    "  --manifest FILE      write every file read/executed (size, mtime, dev/ino, SHA-256)\n"
	    "                       and every file written to FILE\n"
	    "  --verify FILE        check each read of a file FILE lists against its digest\n"
	    "                       (a mismatch is a violation; EACCES under --fence)\n"
	    "  --hash-cache FILE    digests kept between runs (default ~/.cache/sandtrace/hashes;\n"
	    "                       none: no cache)\n"
	    "  --hash-threads N     hashing threads (default: the CPUs, at most 4)\n"
	    "\n"
	    "Exit status: CMD's status (128+N when killed by signal N), 127 when CMD is not "
	    "found,\n"
	    "%d for sandtrace's own errors.\n",
	    SANDTRACE_EXIT_STRICT, SANDTRACE_EXIT_ERROR);
}

/* ---- locating the parts ---- */

/* Directory of this executable (malloc'd), or NULL. */
static char *self_dir(void)
{
	char *self = realpath("/proc/self/exe", NULL);
	if (self == NULL)
		return NULL;
	char *slash = strrchr(self, '/');
	if (slash == self)
		slash[1] = '\0';
	else
		*slash = '\0';
	return self;
}

/*
 * The preload library: $SANDTRACE_LIB, else <dir>/../shim/libsandtrace.so
 * (build tree), else <dir>/../lib/sandtrace/libsandtrace.so (installed).
 * Returns a malloc'd absolute path or NULL with a message printed.
 */
static char *find_shim(void)
{
	const char *env = getenv(SANDTRACE_ENV_LIB);
	if (env != NULL && env[0] != '\0') {
		char *p = realpath(env, NULL);
		if (p == NULL)
			warn("%s=%s", SANDTRACE_ENV_LIB, env);
		return p;
	}
	char *dir = self_dir();
	if (dir == NULL) {
		warn("/proc/self/exe");
		return NULL;
	}
	/* Build tree, then installed next to the CLI's bindir, then the configured libdir. */
	static const char *const rel[] = {
	    "/../shim/libsandtrace.so", "/../" SANDTRACE_LIBDIR_REL "/libsandtrace.so",
	    "/../lib/sandtrace/libsandtrace.so", SANDTRACE_LIBDIR_ABS "/libsandtrace.so"};
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char *cand, *p;
		if (rel[i][0] == '/' && rel[i][1] != '.' ? asprintf(&cand, "%s", rel[i]) < 0
							 : asprintf(&cand, "%s%s", dir, rel[i]) < 0)
			break;
		p = realpath(cand, NULL);
		free(cand);
		if (p != NULL) {
			free(dir);
			return p;
		}
	}
	warnx("cannot find libsandtrace.so next to %s (set %s)", dir, SANDTRACE_ENV_LIB);
	free(dir);
	return NULL;
}

/* <dir of shim>/libsandtrace-audit.so when it exists, else NULL. */
static char *find_audit(const char *shim)
{
	char *p;
	const char *slash = strrchr(shim, '/');
	if (asprintf(&p, "%.*s/libsandtrace-audit.so", (int)(slash - shim), shim) < 0)
		return NULL;
	if (access(p, R_OK) == 0)
		return p;
	free(p);
	return NULL;
}

/* LD_PRELOAD for traced programs: the shim first, then what was there. */
static char *preload_value(const char *shim)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;
	if (old != NULL && old[0] != '\0' && strstr(old, shim) == NULL) {
		if (asprintf(&v, "%s:%s", shim, old) < 0)
			return NULL;
		return v;
	}
	if (old != NULL && old[0] != '\0')
		return strdup(old);
	return strdup(shim);
}

/* ---- run ---- */

struct run_opts {
	const char *policy, *report, *summary_file, *pidfile, *log, *arena_size;
	char *arena_dir; /* --arena-dir, made absolute (realpath) */
	bool fence, fail_open, strict, summary, no_cache, record_all;
	const char *deps, *deps_from, *dpkg_root, *owners;
	bool audit, no_implicit_deps;
	bool loader_audit; /* --loader-audit: LD_AUDIT module in every process */
	char **cmd;
};

static volatile sig_atomic_t dummy_signal;
static void note_signal(int sig)
{
	dummy_signal = sig;
}

/*
 * A signal of set (the forwarded ones, held blocked) that would stop CMD
 * (all but SIGWINCH and SIGURG, ignored by default; SIGCHLD is left pending), taken if one is pending, or 0.
 * Before CMD runs, such a signal (a ^C at the terminal while the daemon
 * starts) means: do not start it.
 */
static int take_stop_signal(const sigset_t *set)
{
	sigset_t fw = *set, pend;
	sigdelset(&fw, SIGCHLD);
	sigdelset(&fw, SIGWINCH);
	sigdelset(&fw, SIGURG);
	sigdelset(&fw, SIGTSTP); /* (they stop, not end) */
	sigdelset(&fw, SIGTTIN);
	sigdelset(&fw, SIGTTOU);
	if (sigpending(&pend) < 0)
		return 0;
	for (int sig = 1; sig < NSIG; sig++) {
		if (!sigismember(&fw, sig) || !sigismember(&pend, sig))
			continue;
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		struct timespec zero = {0, 0};
		if (sigtimedwait(&one, NULL, &zero) == sig)
			return sig;
	}
	return 0;
}

/* Read "READY flags name\n" from fd within READY_TIMEOUT_MS: the run's flags
 * (SANDTRACE_FLAGS for the command, as the daemon set them from its options
 * and the policy it loaded) and the arena's name ("-": none).  Returns 0
 * (name in buf, flags in *flags), -1, or -2 when a signal that stops CMD came
 * meanwhile (taken, in *stop: looked for every 100 ms, the signals being
 * held blocked; a daemon that hung at its start, on a FIFO policy nobody
 * writes, held a ^C for the whole timeout). */
static int read_ready(int fd, char *name, size_t namelen, unsigned *flags, const sigset_t *stops,
		      int *stop)
{
	char buf[SANDTRACE_ARENA_NAME_MAX + 32];
	size_t n = 0;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (n < sizeof(buf) - 1) {
		if ((*stop = take_stop_signal(stops)) != 0)
			return -2;
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		long waited = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (waited >= READY_TIMEOUT_MS)
			return -1;
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		long slice = READY_TIMEOUT_MS - waited < 100 ? READY_TIMEOUT_MS - waited : 100;
		int r = poll(&pfd, 1, (int)slice);
		if (r == 0 || (r < 0 && errno == EINTR))
			continue;
		if (r < 0)
			return -1;
		ssize_t k = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		n += (size_t)k;
		if (memchr(buf, '\n', n) != NULL)
			break;
	}
	buf[n] = '\0';
	char *nl = strchr(buf, '\n');
	if (nl == NULL || strncmp(buf, "READY ", 6) != 0)
		return -1;
	*nl = '\0';
	char *end;
	errno = 0;
	unsigned long f = strtoul(buf + 6, &end, 10);
	if (errno || end == buf + 6 || *end != ' ' || f > UINT_MAX)
		return -1;
	*flags = (unsigned)f;
	strlcpy(name, strcmp(end + 1, "-") == 0 ? "" : end + 1, namelen);
	return 0;
}

/*
 * Has the daemon (our child dpid) ended?  Then true, its wait status in *st.
 * A daemon that was stopped (SIGSTOP, SIGTSTP: it runs in a session of its
 * own, so only a kill() from outside stops it) is continued at once: while
 * stopped it answers nothing, so every traced process without the arena
 * waited each request's reply timeout (10 s) and the run crawled for good,
 * and at the end the CLI waited SHUTDOWN_TIMEOUT_S for a report it could
 * not write.  Continued, the run goes on traced, its report complete.
 * Reaps only dpid; errno as waitpid leaves it.
 */
static bool daemon_ended(pid_t dpid, int *st)
{
	int s;
	pid_t p = waitpid(dpid, &s, WNOHANG | WUNTRACED);
	if (p != dpid)
		return false;
	if (WIFSTOPPED(s)) {
		kill(dpid, SIGCONT);
		return false;
	}
	*st = s;
	return true;
}

/*
 * End the CLI by signal sig, as CMD ended: its parent's wait then sees what
 * it sees untraced.  An exit with 128 + N is what a shell's $? says either
 * way, but not what other parents see: Python's returncode (143, not -15),
 * make ("Error 143", not "Terminated"), a shell's own report of the death
 * ("Segmentation fault") and bash's wait for a child killed by SIGINT (it
 * ends its script too).  No core file of the CLI's own (RLIMIT_CORE 0).
 * Returns only when sig does not end a process (its default action is to
 * ignore or stop): the caller exits with 128 + N then.
 */
static void die_of_signal(int sig)
{
	if (sig == SIGKILL) {
		raise(SIGKILL);
		return;
	}
	struct rlimit nocore = {0, 0};
	setrlimit(RLIMIT_CORE, &nocore);
	fflush(stdout);
	fflush(stderr);
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigemptyset(&dfl.sa_mask);
	if (sigaction(sig, &dfl, NULL) != 0)
		return;
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	raise(sig); /* pending while blocked, taken at the unblock */
	sigprocmask(SIG_UNBLOCK, &one, NULL);
}

/*
 * CMD (our child cpid) stopped, by signal sig: stop the CLI as well, so that
 * its parent (a shell's job control, a process manager) sees the stop it
 * sees untraced; when the CLI is continued, continue CMD (a `kill -CONT`
 * sent to the CLI alone; `fg` continues the whole process group).  A
 * job-control stop (SIGTSTP, SIGTTIN, SIGTTOU) is taken with its default
 * action for the moment of the raise: the kernel drops it in an orphaned
 * process group, as it would CMD's own (then nothing stops); else SIGSTOP.
 * The CLI stayed running while CMD was stopped (`kill -STOP`, a shell's
 * `kill -STOP $$`, a terminal's ^Z on a command in a group of its own), and
 * a SIGTSTP sent to the CLI stopped the CLI alone (now passed on to CMD).
 */
static void stop_as(pid_t cpid, int sig)
{
	if (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
		struct sigaction dfl = {.sa_handler = SIG_DFL}, old;
		sigemptyset(&dfl.sa_mask);
		sigaction(sig, &dfl, &old);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		raise(sig); /* held (blocked), taken at the unblock: a stop, or dropped */
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		sigprocmask(SIG_BLOCK, &one, NULL);
		sigaction(sig, &old, NULL);
	} else {
		raise(SIGSTOP);
	}
	kill(cpid, SIGCONT);
}

/* Describe a wait status: "exit status N" / "killed by signal N (NAME)". */
static void describe_status(int st, char *buf, size_t len)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "wait status %#x", st);
}

/*
 * The daemon was lost: append a summary saying so, with the counts of what
 * the report holds, and the records and requests traced processes could not
 * deliver (lost: the arena header's count, read by the caller).  Returns 0
 * or -errno.
 */
static int append_lost_summary(const char *report, const char *why, uint64_t lost)
{
	struct st__report_scan s;
	char err[512];
	int rc = st__report_scan(report, &s, err, sizeof(err));
	if (rc < 0 && rc != -ENOENT && rc != -ENODATA) /* none written: the summary will say */
		warnx("%s", err);
	struct st__summary sum = {0};
	if (s.have_summary) {
		/* The daemon finished early: keep its counts, but what came later was not seen. */
		sum = s.summary;
		sum.reasons = json_deep_copy(s.summary.reasons);
		sum.notes = s.summary.notes ? json_deep_copy(s.summary.notes) : NULL;
	} else {
		sum.processes = s.processes;
		sum.accesses = s.accesses;
		sum.unique_paths = s.unique_paths;
		sum.violations = s.violations;
		sum.untraced = s.untraced;
	}
	st__report_scan_free(&s);
	st__summary_reason(&sum, "daemon lost: %s", why);
	if (lost)
		st__summary_reason(&sum, ST_LOST_REASON, (unsigned long long)lost);
	struct st__report w;
	rc = st__report_open(&w, report, true);
	if (rc == 0) {
		st__report_emit(&w, st__rec_summary(&sum));
		rc = st__report_close(&w);
	}
	st__summary_free(&sum);
	return rc;
}

/* The string field k of a record, or "?" (a hand-made or damaged report). */
static const char *jstr(json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v != NULL ? v : "?";
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/*
 * The pids of the untraced process records in list (struct st__report_scan's
 * untraced_list), sorted, for bsearch; *n their count.  NULL when there are
 * none or no memory (every access record is then printed).  The caller frees.
 */
static long long *untraced_pids(json_t *list, size_t *n)
{
	size_t i, k = 0;
	json_t *v;
	long long *p = malloc((json_array_size(list) + 1) * sizeof(*p));
	if (p == NULL)
		return NULL;
	json_array_foreach(list, i, v)
	{
		const char *type = json_string_value(json_object_get(v, "type"));
		if (type && strcmp(type, "process") == 0)
			p[k++] = json_integer_value(json_object_get(v, "pid"));
	}
	qsort(p, k, sizeof(*p), cmp_ll);
	*n = k;
	return p;
}

/* Print the human summary of a scanned report to f. */
static void print_summary(FILE *f, const struct st__report_scan *s, bool verbose)
{
	const struct st__summary *m = &s->summary;
	bool have = s->have_summary;
	uint64_t procs = have ? m->processes : s->processes;
	uint64_t acc = have ? m->accesses : s->accesses;
	uint64_t uniq = have ? m->unique_paths : s->unique_paths;
	uint64_t viol = have ? m->violations : s->violations;
	uint64_t untr = have ? m->untraced : s->untraced;

	fprintf(f,
		"sandtrace: %llu process%s, %llu access%s (%llu unique path%s), %llu violation%s, "
		"%llu untraced\n",
		(unsigned long long)procs, procs == 1 ? "" : "es", (unsigned long long)acc,
		acc == 1 ? "" : "es", (unsigned long long)uniq, uniq == 1 ? "" : "s",
		(unsigned long long)viol, viol == 1 ? "" : "s", (unsigned long long)untr);
	if (verbose) {
		size_t i;
		json_t *v;
		json_array_foreach(s->violation_list, i, v)
		{
			if (json_object_get(v, "call") != NULL) { /* an io_uring refused */
				fprintf(f, "  violation: %s refused (pid %lld, %s): no io_uring\n",
					jstr(v, "call"),
					(long long)json_integer_value(json_object_get(v, "pid")),
					jstr(v, "class"));
				continue;
			}
			fprintf(f, "  violation: %s %s (pid %lld, %s, rule %s)\n", jstr(v, "kind"),
				jstr(v, "path"),
				(long long)json_integer_value(json_object_get(v, "pid")),
				jstr(v, "class"), jstr(v, "rule"));
		}
		/* An untraced program has two records: its exec's access record
		 * ("untraced", the first exec of its path only) and its process
		 * record ("traced":false, each process).  The access record is
		 * printed only when its process has no such record (a report
		 * from before process records, a daemon lost before it wrote
		 * it), so each untraced process is one line. */
		size_t npids = 0;
		long long *pids = untraced_pids(s->untraced_list, &npids);
		json_array_foreach(s->untraced_list, i, v)
		{
			const char *type = json_string_value(json_object_get(v, "type"));
			bool proc = type && strcmp(type, "process") == 0;
			long long pid = json_integer_value(json_object_get(v, "pid"));
			if (!proc && pids != NULL &&
			    bsearch(&pid, pids, npids, sizeof(*pids), cmp_ll) != NULL)
				continue;
			const char *why =
			    json_string_value(json_object_get(v, proc ? "why" : "untraced"));
			fprintf(f, "  untraced: %s (%s, pid %lld)\n",
				jstr(v, proc ? "exe" : "path"), why ? why : "?", pid);
		}
		free(pids);
	}
	if (verbose && have) {
		uint64_t miss = m->calls > m->hits ? m->calls - m->hits : 0;
		fprintf(f,
			"sandtrace: %llu intercepted calls: %llu cache hits (%.1f%%), %llu misses; "
			"%llu messages sent to the daemon\n",
			(unsigned long long)m->calls, (unsigned long long)m->hits,
			m->calls ? 100.0 * (double)m->hits / (double)m->calls : 0.0,
			(unsigned long long)miss, (unsigned long long)m->messages);
	}
	if (s->policy_reloads) {
		json_t *p = s->last_policy;
		fprintf(f,
			"sandtrace: policy reloaded %llu time%s (SIGHUP); last: %s, %lld rule(s), "
			"default %s\n",
			(unsigned long long)s->policy_reloads, s->policy_reloads == 1 ? "" : "s",
			jstr(p, "policy"),
			(long long)json_integer_value(json_object_get(p, "rules")),
			jstr(p, "default"));
	}
	if (verbose && s->arena) {
		json_t *a = s->arena;
#define AI(k) ((unsigned long long)json_integer_value(json_object_get(a, k)))
		char pages[40] = ""; /* reports before stop 18 do not say */
		if (AI("page_bytes"))
			snprintf(pages, sizeof(pages), " (pages of %llu KiB)", AI("page_bytes") / 1024);
		fprintf(f,
			"sandtrace: arena %.1f KiB used of %.1f MiB%s; %llu Ctrie "
			"entries (depth %llu, cache array %llu slots), %llu CAS retries, %llu "
			"allocations refused; %llu log chunks, %llu log entries\n",
			AI("bytes_used") / 1024.0, AI("size") / 1048576.0, pages, AI("snodes"),
			AI("max_depth"), AI("cache_slots"), AI("cas_retries"), AI("full"),
			AI("log_chunks"), AI("log_entries"));
#undef AI
	}
	if (!have) {
		fprintf(f, "sandtrace: trace INCOMPLETE: the report has no summary\n");
		return;
	}
	size_t i;
	json_t *r;
	json_array_foreach(m->notes, i, r)
		fprintf(f, "sandtrace: note: %s\n", json_string_value(r));
	if (m->complete) {
		fprintf(f, "sandtrace: trace complete\n");
		return;
	}
	fprintf(f, "sandtrace: trace INCOMPLETE:");
	const char *sep = " ";
	json_array_foreach(m->reasons, i, r)
	{
		fprintf(f, "%s%s", sep, json_string_value(r));
		sep = "; ";
	}
	fprintf(f, "\n");
}

static bool scan_complete(const struct st__report_scan *s)
{
	return s->have_summary && s->summary.complete;
}

/* Remove the private directory and what the run put in it. */
static void cleanup_dir(const char *dir, const char *report_tmp, const char *log_tmp,
			const char *sock)
{
	if (report_tmp)
		unlink(report_tmp);
	if (log_tmp)
		unlink(log_tmp);
	unlink(sock);
	{
		char argv_file[PATH_MAX]; /* the daemon removes it, unless it failed first */
		snprintf(argv_file, sizeof(argv_file), "%s/argv", dir);
		unlink(argv_file);
	}
	if (rmdir(dir) < 0 && errno != ENOENT)
		warn("rmdir %s", dir);
}

/* The file execvp(name) would run, made absolute and with symlinks resolved
 * (the sandbox judges resolved paths), or NULL.  malloc'd. */
static char *find_command(const char *name)
{
	if (strchr(name, '/') != NULL)
		return realpath(name, NULL);
	const char *path = getenv("PATH");
	if (path == NULL)
		path = "/bin:/usr/bin";
	char *copy = strdup(path), *save = NULL, *found = NULL;
	for (char *dir = strtok_r(copy, ":", &save); copy && dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		char cand[PATH_MAX];
		if (snprintf(cand, sizeof(cand), "%s/%s", *dir ? dir : ".", name) >= (int)sizeof(cand))
			continue;
		struct stat st;
		if (access(cand, X_OK) == 0 && stat(cand, &st) == 0 && S_ISREG(st.st_mode))
			found = realpath(cand, NULL);
	}
	free(copy);
	return found;
}

/* Send the daemon CMD's wait status, as a traced parent's wait() would (EXIT with
 * SANDTRACE_EF_CHILD).  Best effort: a lost daemon only leaves "exit": null. */
static void report_root_exit(const char *sock, pid_t pid, int status)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (fd < 0)
		return;
	strlcpy(sa.sun_path, sock, sizeof(sa.sun_path));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		struct sandtrace_exit e = {.status = status, .reserved = (uint32_t)pid};
		struct iovec iov[1] = {{&e, sizeof(e)}};
		sandtrace_proto_send(fd, SANDTRACE_MSG_EXIT, 0, SANDTRACE_EF_CHILD, iov, 1);
	}
	close(fd);
}

/*
 * An output file the daemon opens by name (--report, --manifest): the name
 * this process gives it, resolved here (realpath, when it exists: the
 * daemon's /dev/stdout, /dev/fd/N or /proc/self/... name other files than
 * ours), else made absolute.  A file that is our standard output or error
 * is refused: the command's output would be written into it.  Returns a
 * malloc'd path, or NULL with a message on stderr.
 */
static char *daemon_output(const char *opt, const char *path)
{
	struct stat st, sd;
	char *out = NULL;
	if (stat(path, &st) == 0) {
		for (int fd = 1; fd <= 2; fd++) {
			if (fstat(fd, &sd) == 0 && S_ISREG(sd.st_mode) && sd.st_dev == st.st_dev &&
			    sd.st_ino == st.st_ino) {
				warnx(
				    "%s %s: is the standard %s of the command: its output would be "
				    "written into it",
				    opt, path, fd == 1 ? "output" : "error");
				return NULL;
			}
		}
		out = realpath(path, NULL);
	}
	if (out == NULL) {
		char cwd[PATH_MAX];
		if (path[0] == '/')
			out = strdup(path);
		else if (getcwd(cwd, sizeof(cwd)) == NULL || asprintf(&out, "%s/%s", cwd, path) < 0)
			out = NULL;
		if (out == NULL)
			warn("%s %s", opt, path);
	}
	return out;
}

/*
 * file_place - where a file that is not there yet would be made: its
 * directory resolved (realpath) and its last name, malloc'ed; NULL when the
 * directory cannot be resolved (then the file cannot be made either, which
 * its own check says).  Two names of one such file give the same string.
 */
static char *file_place(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash == NULL ? strdup(".") : strndup(path, (size_t)(slash - path) + (slash == path));
	const char *base = slash == NULL ? path : slash + 1;
	char *rdir = dir != NULL ? realpath(dir, NULL) : NULL, *out = NULL;
	if (rdir != NULL && asprintf(&out, "%s/%s", strcmp(rdir, "/") == 0 ? "" : rdir, base) < 0)
		out = NULL;
	free(dir);
	free(rdir);
	return out;
}

/*
 * The files cmd_run made itself to check that they can be written (--report,
 * --summary, --pidfile that were not there): removed again when the run
 * fails before CMD started (a usage error, a daemon that did not start, a
 * signal while it started) and they are still empty, so that such a run
 * leaves no empty "report" behind (`sandtrace report` then said "not a
 * sandtrace report").  Main thread, before CMD's fork.
 */
static const char *made_outs[3];

static void unmake_outs(void)
{
	for (size_t i = 0; i < sizeof(made_outs) / sizeof(made_outs[0]); i++) {
		struct stat st;
		if (made_outs[i] != NULL && stat(made_outs[i], &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_size == 0)
			unlink(made_outs[i]);
		made_outs[i] = NULL;
	}
}

static int cmd_run_inner(int argc, char **argv, bool *cmd_started);

static int cmd_run(int argc, char **argv)
{
	bool cmd_started = false;
	int rc = cmd_run_inner(argc, argv, &cmd_started);
	if (!cmd_started)
		unmake_outs();
	return rc;
}

static int cmd_run_inner(int argc, char **argv, bool *cmd_started)
{
	enum {
		O_POLICY = 256,
		O_REPORT,
		O_FENCE,
		O_FAIL_OPEN,
		O_FAIL_CLOSED,
		O_STRICT,
		O_SUMMARY,
		O_PIDFILE,
		O_NO_CACHE,
		O_RECORD,
		O_LOG,
		O_ARENA_SIZE,
		O_ARENA_DIR,
		O_AUDIT,
		O_DEPS,
		O_DEPS_FROM,
		O_NO_IMPLICIT,
		O_DPKG_ROOT,
		O_OWNERS,
		O_HELP
	};
	static const struct option opts[] = {
	    {"audit", no_argument, NULL, O_AUDIT},
	    {"loader-audit", no_argument, NULL, 'L'},
	    {"deps", required_argument, NULL, O_DEPS},
	    {"deps-from", required_argument, NULL, O_DEPS_FROM},
	    {"no-implicit-deps", no_argument, NULL, O_NO_IMPLICIT},
	    {"dpkg-root", required_argument, NULL, O_DPKG_ROOT},
	    {"owners", required_argument, NULL, O_OWNERS},
	    {"policy", required_argument, NULL, O_POLICY},
	    {"report", required_argument, NULL, O_REPORT},
	    {"fence", no_argument, NULL, O_FENCE},
	    {"fail-open", no_argument, NULL, O_FAIL_OPEN},
	    {"fail-closed", no_argument, NULL, O_FAIL_CLOSED},
	    {"strict", no_argument, NULL, O_STRICT},
	    {"summary", optional_argument, NULL, O_SUMMARY},
	    {"pidfile", required_argument, NULL, O_PIDFILE},
	    {"no-cache", no_argument, NULL, O_NO_CACHE},
	    {"record", required_argument, NULL, O_RECORD},
	    {"log", required_argument, NULL, O_LOG},
	    {"arena-size", required_argument, NULL, O_ARENA_SIZE},
	    {"arena-dir", required_argument, NULL, O_ARENA_DIR},
	    ST__MF_LONGOPTS,
	    {"help", no_argument, NULL, O_HELP},
	    {NULL, 0, NULL, 0},
	};
	struct run_opts o = {0};
	struct st__mf_opts mfo = {0}; /* --manifest, --verify (daemon/manifest.h) */
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case O_POLICY:
			o.policy = optarg;
			break;
		case O_AUDIT:
			o.audit = true;
			break;
		case 'L':
			o.loader_audit = true;
			break;
		case O_DEPS:
			o.deps = optarg;
			break;
		case O_DEPS_FROM:
			o.deps_from = optarg;
			break;
		case O_NO_IMPLICIT:
			o.no_implicit_deps = true;
			break;
		case O_DPKG_ROOT:
			o.dpkg_root = optarg;
			break;
		case O_OWNERS:
			o.owners = optarg;
			break;
		case O_REPORT:
			o.report = optarg;
			break;
		case O_FENCE:
			o.fence = true;
			break;
		case O_FAIL_OPEN:
			o.fail_open = true;
			break;
		case O_FAIL_CLOSED:
			o.fail_open = false;
			break;
		case O_STRICT:
			o.strict = true;
			break;
		case O_SUMMARY:
			o.summary = true;
			o.summary_file = optarg;
			break;
		case O_PIDFILE:
			o.pidfile = optarg;
			break;
		case O_NO_CACHE:
			o.no_cache = true;
			break;
		case O_LOG:
			o.log = optarg;
			break;
		case O_ARENA_SIZE: {
			uint64_t sz;
			if (st__parse_size(optarg, &sz) < 0) {
				warnx("--arena-size %s: not a size", optarg);
				return SANDTRACE_EXIT_ERROR;
			}
			o.arena_size = optarg;
			break;
		}
		case O_ARENA_DIR:
			/* absolute: the daemon and every traced process open the
			 * arena by this path, from their own working directories */
			free(o.arena_dir);
			o.arena_dir = realpath(optarg, NULL);
			if (o.arena_dir == NULL) {
				warn("--arena-dir %s", optarg);
				return SANDTRACE_EXIT_ERROR;
			}
			break;
		case O_RECORD:
			if (strcmp(optarg, "all") == 0) {
				o.record_all = true;
			} else if (strcmp(optarg, "first") == 0) {
				o.record_all = false;
			} else {
				warnx("--record=%s: expected all or first", optarg);
				return SANDTRACE_EXIT_ERROR;
			}
			break;
		case O_HELP:
			usage(stdout);
			return 0;
		default:
			switch (st__mf_option(&mfo, c, optarg)) {
			case 1:
				continue;
			case 0: /* not an option of ours: usage; a bad value was said */
				usage(stderr);
			}
			return SANDTRACE_EXIT_ERROR;
		}
	}
	if (optind >= argc) {
		warnx("run: no command given");
		usage(stderr);
		return SANDTRACE_EXIT_ERROR;
	}
	/* `--summary FILE -- CMD`: the optional argument is only ever taken as
	 * --summary=FILE, and FILE would be run as the command (with "--" its
	 * first argument) */
	if (strcmp(argv[optind - 1], "--summary") == 0 && optind + 1 < argc &&
	    strcmp(argv[optind + 1], "--") == 0) {
		warnx("run: --summary takes its file as --summary=%s (%s would be run as the command)",
		      argv[optind], argv[optind]);
		return SANDTRACE_EXIT_ERROR;
	}
	o.cmd = argv + optind;

	/* SIGCHLD and the forwarded signals are taken synchronously (sigtimedwait). */
	sigset_t set, oldset;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	/* every signal a process manager or a user sends to stop or poke a
	 * command: passed on to CMD, as if sent to it.  SIGUSR1 killed the CLI
	 * and left CMD running untraced; so did every signal but the eight once
	 * listed here (SIGPWR, SIGXCPU, SIGVTALRM, SIGIO, SIGRTMIN+N, ...: the
	 * command's trap never ran, the run ended 128+N at once).  All but
	 * those that cannot be caught, SIGCHLD (the CLI's own) and SIGCONT.  A
	 * stop (SIGTSTP, SIGTTIN, SIGTTOU) too: the CLI stops when CMD does
	 * (stop_as), so its shell sees the stop of the job it waits for.  A fault of the CLI itself
	 * (SIGSEGV, SIGBUS, ...) still kills it: the kernel unblocks a fault's
	 * signal.  (sigaddset refuses glibc's own real-time signals.) */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGCONT)
			sigaddset(&set, sig);
	/* Blocked before anything is made: a SIGTERM that came between the
	 * mkdtemp of the private directory (or the open that makes --report,
	 * --summary or --pidfile below, to check it can be written) and this
	 * mask killed the CLI and left the directory behind in TMPDIR (the
	 * empty files beside the command); from here on it is pending and taken
	 * as an early stop (CMD not run, what was made removed).  A run that
	 * fails before then returns with it still blocked: it is dropped at the
	 * exit, after cmd_run removed the files (125, not 143).  Nothing
	 * before the mkdtemp waits (stat, open O_NONBLOCK). */
	sigprocmask(SIG_BLOCK, &set, &oldset);
	/* Files the run will write: refused now, before anything runs, rather
	 * than lost at the end (a report is written by the daemon; a file that
	 * is not a regular file, such as /proc/version, cannot hold one). */
	const char *outs[] = {o.report, o.summary_file, o.pidfile};
	const char *names[] = {"--report", "--summary", "--pidfile"};
	for (int i = 0; i < 3; i++) {
		if (outs[i] == NULL)
			continue;
		struct stat st;
		/* a FIFO is refused by its type, unopened: opened for writing it
		 * waited for a reader, and the run hung before CMD started */
		bool there = stat(outs[i], &st) == 0;
		bool special = there && !S_ISREG(st.st_mode);
		int fd = special ? -1
				 : open(outs[i], O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
		if (fd >= 0 && !there)
			made_outs[i] = outs[i];
		if (special || fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
		    st__report_pseudo_fs(fd)) {
			if (fd >= 0 || special)
				errno = EINVAL;
			warn("%s %s%s", names[i], outs[i],
			     fd >= 0 || special ? " (not a regular file)" : "");
			if (fd >= 0)
				close(fd);
			return SANDTRACE_EXIT_ERROR;
		}
		close(fd);
	}
	/* The files the daemon writes by name: named as this process sees them
	 * (the daemon's /dev/stdout or /dev/fd/N are other files), and never
	 * the command's own output, which would be mixed into them. */
	if (o.report != NULL && (o.report = daemon_output("--report", o.report)) == NULL)
		return SANDTRACE_EXIT_ERROR;
	if (mfo.manifest != NULL &&
	    (mfo.manifest = daemon_output("--manifest", mfo.manifest)) == NULL)
		return SANDTRACE_EXIT_ERROR;
	{
		/* no two outputs the same file (each would overwrite the other:
		 * --summary or --pidfile truncated the report, --log interleaved
		 * lines into it, --hash-cache replaced a --manifest), nor an
		 * output that is an input (--policy, --verify, --owners: a
		 * --hash-cache naming the --verify manifest replaced it) */
		const char *hc = mfo.hash_cache != NULL && strcmp(mfo.hash_cache, "none") != 0
				     ? mfo.hash_cache
				     : NULL;
		struct {
			const char *opt, *file;
			bool out; /* written by the run: may be no other of these */
			bool have;
			struct stat st;
			char *where; /* not there yet (--log, --manifest, --hash-cache): its place */
		} f[] = {
		    {.opt = "--report", .file = o.report, .out = true},
		    {.opt = "--summary", .file = o.summary_file, .out = true},
		    {.opt = "--pidfile", .file = o.pidfile, .out = true},
		    {.opt = "--log", .file = o.log, .out = true},
		    {.opt = "--manifest", .file = mfo.manifest, .out = true},
		    {.opt = "--hash-cache", .file = hc, .out = true},
		    {.opt = "--policy", .file = o.policy},
		    {.opt = "--verify", .file = mfo.verify},
		    {.opt = "--owners", .file = o.owners},
		};
		const size_t n = sizeof(f) / sizeof(f[0]);
		for (size_t i = 0; i < n; i++) {
			f[i].have = f[i].file != NULL && stat(f[i].file, &f[i].st) == 0;
			if (f[i].file != NULL && !f[i].have)
				f[i].where = file_place(f[i].file);
		}
		int same = 0;
		for (size_t i = 0; i < n && f[i].out && !same; i++)
			for (size_t j = i + 1; j < n && !same; j++)
				if ((f[i].have && f[j].have && f[i].st.st_dev == f[j].st.st_dev &&
				     f[i].st.st_ino == f[j].st.st_ino) ||
				    (f[i].where != NULL && f[j].where != NULL &&
				     strcmp(f[i].where, f[j].where) == 0)) {
					warnx("%s %s and %s %s are the same file", f[i].opt, f[i].file,
					      f[j].opt, f[j].file);
					same = 1;
				}
		for (size_t i = 0; i < n; i++)
			free(f[i].where);
		if (same)
			return SANDTRACE_EXIT_ERROR;
	}

	char *shim = find_shim();
	if (shim == NULL)
		return SANDTRACE_EXIT_ERROR;
	/* the rtld-audit module costs every process a second libc (see
	 * docs/BENCHMARKS.md): only on request; the shim itself records the
	 * libraries a process has loaded */
	char *audit = o.loader_audit ? find_audit(shim) : NULL;
	char *dir = self_dir(), *daemon_path = NULL;
	if (dir == NULL || asprintf(&daemon_path, "%s/sandtraced", dir) < 0 ||
	    access(daemon_path, X_OK) < 0) {
		warn("%s", daemon_path ? daemon_path : "sandtraced");
		return SANDTRACE_EXIT_ERROR;
	}
	free(dir);

	/* SIGPIPE ignored here (a write to a closed stderr fails with EPIPE):
	 * `sandtrace run --summary -- make 2>&1 | head` killed the CLI at its
	 * summary, exit 141 for CMD's status, and left the private directory.
	 * Both children get the disposition sandtrace was started with back
	 * before their exec (CMD's must be as without sandtrace). */
	struct sigaction pipe_ign = {.sa_handler = SIG_IGN}, pipe_old;
	sigemptyset(&pipe_ign.sa_mask);
	sigaction(SIGPIPE, &pipe_ign, &pipe_old);

	/* The private directory: its socket must fit in sun_path, so fall back to /tmp. */
	const char *tmp = getenv("TMPDIR");
	char tdir[96]; /* TMPDIR is capped at 60 bytes: the socket path must fit in sun_path */
	if (tmp == NULL || tmp[0] != '/' || strlen(tmp) > 60)
		tmp = "/tmp";
	snprintf(tdir, sizeof(tdir), "%s/sandtrace.XXXXXX", tmp);
	if (mkdtemp(tdir) == NULL) {
		warn("mkdtemp %s", tdir);
		sigprocmask(SIG_SETMASK, &oldset, NULL);
		return SANDTRACE_EXIT_ERROR;
	}
	/* Traversable by every uid (children that drop privileges), not listable. */
	if (chmod(tdir, 0711) < 0)
		warn("chmod %s", tdir);
	char sock[PATH_MAX], report_tmp[PATH_MAX], log_tmp[PATH_MAX], argv_file[PATH_MAX];
	snprintf(sock, sizeof(sock), "%s/sock", tdir);
	snprintf(argv_file, sizeof(argv_file), "%s/argv", tdir);
	{
		/* CMD's arguments for the report's run record (--argv-file) */
		FILE *af = fopen(argv_file, "wxe");
		bool ok = af != NULL;
		for (size_t i = 0; ok && o.cmd[i] != NULL; i++)
			ok = fwrite(o.cmd[i], 1, strlen(o.cmd[i]) + 1, af) == strlen(o.cmd[i]) + 1;
		if (af != NULL && fclose(af) != 0)
			ok = false;
		if (!ok) {
			warn("%s", argv_file);
			unlink(argv_file);
			cleanup_dir(tdir, NULL, NULL, sock);
			sigprocmask(SIG_SETMASK, &oldset, NULL);
			return SANDTRACE_EXIT_ERROR;
		}
	}
	snprintf(report_tmp, sizeof(report_tmp), "%s/report.jsonl", tdir);
	snprintf(log_tmp, sizeof(log_tmp), "%s/sandtraced.log", tdir);
	const char *report = o.report ? o.report : report_tmp;
	const char *logf = o.log ? o.log : log_tmp;

	/* A handler (never run while blocked) so that SIGCHLD is not discarded as ignored. */
	signal(SIGCHLD, note_signal);

	int ready[2];
	if (pipe2(ready, O_CLOEXEC) < 0) {
		warn("pipe");
		cleanup_dir(tdir, NULL, NULL, sock);
		return SANDTRACE_EXIT_ERROR;
	}
	pid_t self = getpid();
	pid_t dpid = fork();
	if (dpid < 0) {
		warn("fork");
		cleanup_dir(tdir, NULL, NULL, sock);
		return SANDTRACE_EXIT_ERROR;
	}
	if (dpid == 0) {
		/* The daemon: its own session, so a ^C at the terminal reaches CMD only. */
		setsid();
		close(ready[0]);
		int rfd = ready[1];
		if (rfd < 3) {
			rfd = fcntl(rfd, F_DUPFD, 3);
		}
		fcntl(rfd, F_SETFD, 0);
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
			if (nul > 2)
				close(nul);
		}
		char fdbuf[16], ppbuf[16];
		snprintf(fdbuf, sizeof(fdbuf), "%d", rfd);
		snprintf(ppbuf, sizeof(ppbuf), "%ld", (long)self);
		const char **dv = calloc(48, sizeof(char *));
		size_t n = 0;
		dv[n++] = daemon_path;
		dv[n++] = "--socket";
		dv[n++] = sock;
		dv[n++] = "--report";
		dv[n++] = report;
		dv[n++] = "--log";
		dv[n++] = logf;
		dv[n++] = "--parent-pid";
		dv[n++] = ppbuf;
		dv[n++] = "--ready-fd";
		dv[n++] = fdbuf;
		dv[n++] = "--private-dir";
		dv[n++] = tdir;
		if (o.policy) {
			dv[n++] = "--policy";
			dv[n++] = o.policy;
		}
		if (o.fence)
			dv[n++] = "--fence";
		if (o.no_cache)
			dv[n++] = "--no-cache";
		if (o.record_all)
			dv[n++] = "--record-all";
		if (o.fail_open)
			dv[n++] = "--fail-open";
		if (o.arena_size) {
			dv[n++] = "--arena-size";
			dv[n++] = o.arena_size;
		}
		if (o.arena_dir) {
			dv[n++] = "--arena-dir";
			dv[n++] = o.arena_dir;
		}
		if (o.audit)
			dv[n++] = "--audit";
		if (o.no_implicit_deps)
			dv[n++] = "--no-implicit-deps";
		const char *pairs[][2] = {{"--deps", o.deps},
					  {"--deps-from", o.deps_from},
					  {"--dpkg-root", o.dpkg_root},
					  {"--owners", o.owners}};
		for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
			if (pairs[i][1] != NULL) {
				dv[n++] = pairs[i][0];
				dv[n++] = pairs[i][1];
			}
		}
		n = st__mf_daemon_args(&mfo, dv, n);
		char *cmd_path = find_command(o.cmd[0]);
		if (cmd_path != NULL) {
			dv[n++] = "--allow-exec";
			dv[n++] = cmd_path;
		}
		/* the command's arguments by a file: on the daemon's command line
		 * a command near the argument limit failed its exec (E2BIG) */
		dv[n++] = "--argv-file";
		dv[n++] = argv_file;
		dv[n] = NULL;
		sigprocmask(SIG_SETMASK, &oldset, NULL);
		signal(SIGCHLD, SIG_DFL);
		sigaction(SIGPIPE, &pipe_old, NULL);
		execv(daemon_path, (char *const *)dv);
		fprintf(stderr, "sandtrace: exec %s: %s\n", daemon_path, strerror(errno));
		_exit(SANDTRACE_EXIT_ERROR);
	}
	close(ready[1]);
	char arena[SANDTRACE_ARENA_NAME_MAX] = "";
	unsigned flags = 0;
	int early = 0; /* a signal that stops CMD, come before CMD started */
	int rr = read_ready(ready[0], arena, sizeof(arena), &flags, &set, &early);
	if (rr < 0) {
		close(ready[0]);
		int st = 0;
		/* Give a dying daemon a moment, then make sure it is gone: one
		 * that hung at its start (opening a FIFO policy nobody writes)
		 * holds SIGTERM blocked, and waiting for it hung the run for good. */
		kill(dpid, SIGTERM);
		for (int i = 0; i < 200 && waitpid(dpid, &st, WNOHANG) == 0; i++)
			nanosleep(&(struct timespec){0, 10000000}, NULL);
		if (waitpid(dpid, &st, WNOHANG) == 0) {
			kill(dpid, SIGKILL);
			waitpid(dpid, &st, 0);
		}
		char why[128];
		describe_status(st, why, sizeof(why));
		if (rr == -2)
			warnx("%s while the daemon started: %s not run", strsignal(early), o.cmd[0]);
		else
			warnx("the daemon failed to start (%s)", why);
		if (o.log == NULL && rr != -2) {
			/* Its log would vanish with the directory: show it. */
			FILE *lf = fopen(log_tmp, "re");
			char line[1024];
			while (lf && fgets(line, sizeof(line), lf))
				if (strstr(line, "fatal:") ==
				    NULL) /* fatal lines were on stderr already */
					fputs(line, stderr);
			if (lf)
				fclose(lf);
		}
		cleanup_dir(tdir, o.report ? NULL : report_tmp, o.log ? NULL : log_tmp, sock);
		return rr == -2 ? 128 + early : SANDTRACE_EXIT_ERROR;
	}
	close(ready[0]);
	if (o.pidfile != NULL) {
		FILE *pf = fopen(o.pidfile, "we");
		if (pf == NULL || fprintf(pf, "%ld\n", (long)dpid) < 0 || fclose(pf) != 0)
			warn("--pidfile %s", o.pidfile);
	}

	/* A signal that came while the daemon started (a ^C at the terminal
	 * during a slow start: a policy read from a pipe, a registry to load)
	 * is pending here: the terminal's was sent to a process group CMD was
	 * not in yet, and the loop below passes on only what was kill()ed at
	 * us, so CMD started and ran to its end.  One that would kill CMD (all
	 * but SIGWINCH) means: do not start it. */
	early = take_stop_signal(&set);
	if (early != 0)
		warnx("%s while the daemon started: %s not run", strsignal(early), o.cmd[0]);

	char *preload = preload_value(shim);
	*cmd_started = early == 0; /* from here on the daemon writes the report */
	pid_t cpid = early != 0 ? -1 : fork();
	if (early != 0) {
		/* as if CMD was killed by it: 128 + N, and the daemon is stopped as
		 * after any CMD */
	} else if (cpid < 0) {
		warn("fork");
	} else if (cpid == 0) {
		char fl[16];
		snprintf(fl, sizeof(fl), "%u", flags);
		setenv("LD_PRELOAD", preload, 1);
		setenv(SANDTRACE_ENV_SOCKET, sock, 1);
		setenv(SANDTRACE_ENV_ARENA, arena, 1);
		setenv(SANDTRACE_ENV_LIB, shim, 1);
		setenv(SANDTRACE_ENV_FLAGS, fl, 1);
		if (audit != NULL)
			setenv(SANDTRACE_ENV_AUDIT, audit, 1);
		else
			unsetenv(SANDTRACE_ENV_AUDIT);
		signal(SIGCHLD, SIG_DFL);
		sigaction(SIGPIPE, &pipe_old, NULL);
		sigprocmask(SIG_SETMASK, &oldset, NULL);
		/*
		 * CMD's own exec goes through the shim too, so that it is checked,
		 * reported, and flagged when the preload cannot follow it (a static
		 * or set-id CMD): load the shim here and use its execvp.
		 */
		snprintf(fl, sizeof(fl), "%u", flags | SANDTRACE_F_LAUNCHER);
		setenv(SANDTRACE_ENV_FLAGS, fl, 1); /* the shim passes on `flags` only */
		void *h = dlopen(shim, RTLD_NOW | RTLD_LOCAL);
		int (*traced_execvp)(const char *, char *const[]) =
		    h != NULL ? (int (*)(const char *, char *const[]))dlsym(h, "execvp") : NULL;
		if (traced_execvp != NULL)
			traced_execvp(o.cmd[0], o.cmd);
		else
			execvp(o.cmd[0], o.cmd);
		int e = errno;
		fprintf(stderr, "sandtrace: %s: %s\n", o.cmd[0],
			e == ENOENT ? "command not found" : strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}

	/* Wait for CMD, forwarding signals that were sent to us (not those of the terminal). */
	int cst = 0, dst = 0;
	bool cmd_done = cpid < 0, daemon_done = false, daemon_early = false;
	if (early != 0)
		cst = early; /* a wait status: killed by signal `early` */
	else if (cpid < 0)
		cst = SANDTRACE_EXIT_ERROR << 8;
	while (!cmd_done) {
		siginfo_t si;
		int sig = sigwaitinfo(&set, &si);
		if (sig < 0)
			continue;
		if (sig == SIGCHLD) {
			int st;
			pid_t p;
			while ((p = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0) {
				if (WIFSTOPPED(st)) {
					if (p == cpid)
						stop_as(cpid, WSTOPSIG(st));
					else if (p == dpid) /* see daemon_ended */
						kill(dpid, SIGCONT);
				} else if (p == cpid) {
					cst = st;
					cmd_done = true;
				} else if (p == dpid) {
					dst = st;
					daemon_done = true;
					daemon_early = true;
				}
			}
			continue;
		}
		/*
		 * SI_USER/SI_QUEUE (si_code <= 0): someone kill()ed us: pass it on.
		 * A positive si_code came from the kernel (the terminal), which
		 * already delivered it to CMD's process group.
		 */
		if (si.si_code <= 0 && si.si_pid != cpid)
			kill(cpid, sig);
	}

	/* CMD is done: tell the daemon how it ended (nobody traced reaped it), then
	 * the daemon drains its clients, writes the end of the report and exits. */
	if (!daemon_done && cpid > 0)
		report_root_exit(sock, cpid, cst);
	int stops = 0, stop_sig = 0; /* signals to stop, come while the daemon ends */
	if (!daemon_done) {
		kill(dpid, SIGTERM);
		struct timespec deadline;
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += SHUTDOWN_TIMEOUT_S;
		while (!daemon_done) {
			if (daemon_ended(dpid, &dst)) {
				daemon_done = true;
				break;
			}
			struct timespec now, left;
			clock_gettime(CLOCK_MONOTONIC, &now);
			left.tv_sec = deadline.tv_sec - now.tv_sec;
			left.tv_nsec = deadline.tv_nsec - now.tv_nsec;
			if (left.tv_nsec < 0) {
				left.tv_nsec += 1000000000L;
				left.tv_sec--;
			}
			if (left.tv_sec < 0 || stops >= 2) {
				kill(dpid, SIGKILL);
				waitpid(dpid, &dst, 0);
				daemon_done = true;
				break;
			}
			/* CMD is done: a ^C or a SIGTERM now is for sandtrace itself.
			 * Each was taken and dropped, so a daemon that did not end (a
			 * stopped one, a long --manifest hashing) held the run for
			 * SHUTDOWN_TIMEOUT_S whatever the user sent: the first says
			 * what is waited for, the second stops the daemon. */
			siginfo_t si;
			int sig = sigtimedwait(&set, &si, &left);
			if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) {
				stop_sig = sig;
				if (++stops == 1)
					warnx("%s: waiting for the daemon to finish the report (send it "
					      "again to stop the daemon now: the report is then "
					      "incomplete)",
					      strsignal(sig));
			}
		}
	}
	bool daemon_ok = !daemon_early && WIFEXITED(dst) && WEXITSTATUS(dst) == 0;
	/* a write of the report failed (a full disk): the daemon ended well
	 * otherwise, but the report is cut short, and its summary may be what
	 * was lost; said on stderr, or the run looked like any other */
	bool report_cut = !daemon_early && WIFEXITED(dst) &&
			  WEXITSTATUS(dst) == SANDTRACE_DAEMON_EXIT_REPORT;
	if (!daemon_ok) {
		char why[320], st[128];
		describe_status(dst, st, sizeof(st));
		if (report_cut)
			snprintf(why, sizeof(why), "sandtraced could not write the whole report");
		else if (stops >= 2)
			snprintf(why, sizeof(why),
				 "sandtraced killed while writing the report: sandtrace run was "
				 "told to stop twice (last by %s)",
				 strsignal(stop_sig));
		else
			snprintf(why, sizeof(why), "sandtraced %s%s", st,
				 daemon_early ? " before the command ended"
					      : " while writing the report");
		/* what the processes could not deliver once the daemon was gone
		 * (they count it in the arena's header, which outlives it) */
		uint64_t lost = 0;
		struct sandtrace_arena a;
		if (arena[0] != '\0' && sandtrace_arena_attach(&a, arena) == 0) {
			lost = atomic_load(&sandtrace_arena_hdr(&a)->lost);
			sandtrace_arena_detach(&a);
		}
		int arc = append_lost_summary(report, why, lost);
		if (report_cut)
			warnx("%s: the report is cut short: a write failed%s%s", report,
			      arc < 0 ? ": " : " (the daemon's log says why)",
			      arc < 0 ? strerror(-arc) : "");
		else if (arc < 0)
			warnx("appending to %s: %s", report, strerror(-arc));
		/* A killed daemon leaves its arena and socket behind. */
		if (arena[0] != '\0')
			sandtrace_arena_unlink(arena);
	}

	/* The summary and --strict come from the report itself: from its last
	 * line when the daemon ended well (it writes its summary last), else
	 * from every record. */
	struct st__report_scan scan;
	char err[512];
	int rc = 0;
	if (!daemon_ok || st__report_scan_summary(report, &scan) != 1) {
		rc = st__report_scan(report, &scan, err, sizeof(err));
		if (rc < 0)
			warnx("%s", err);
	}
	FILE *sf = NULL;
	if (o.summary_file != NULL)
		sf = fopen(o.summary_file, "we");
	else if (o.summary || isatty(STDERR_FILENO))
		sf = stderr;
	if (o.summary_file != NULL && sf == NULL)
		warn("--summary=%s", o.summary_file);
	if (sf != NULL) {
		print_summary(sf, &scan, false);
		if (sf != stderr)
			fclose(sf);
	}

	int status;
	if (WIFEXITED(cst))
		status = WEXITSTATUS(cst);
	else if (WIFSIGNALED(cst))
		status = 128 + WTERMSIG(cst);
	else
		status = SANDTRACE_EXIT_ERROR;
	if (o.strict && status == 0) {
		uint64_t viol = scan.have_summary ? scan.summary.violations : scan.violations;
		uint64_t untr = scan.have_summary ? scan.summary.untraced : scan.untraced;
		if (rc < 0 || viol > 0 || untr > 0 || !scan_complete(&scan))
			status = SANDTRACE_EXIT_STRICT;
	}
	st__report_scan_free(&scan);
	cleanup_dir(tdir, o.report ? NULL : report_tmp, o.log ? NULL : log_tmp, sock);
	free(shim);
	free(audit);
	free(preload);
	free(daemon_path);
	if (WIFSIGNALED(cst) && status == 128 + WTERMSIG(cst))
		die_of_signal(WTERMSIG(cst));
	return status;
}

/* ---- env ---- */

static int cmd_env(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"loader-audit", no_argument, NULL, 'L'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *sockpath = NULL;
	bool loader_audit = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (c == 's') {
			sockpath = optarg;
		} else if (c == 'L') {
			loader_audit = true;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return SANDTRACE_EXIT_ERROR;
		}
	}
	if (sockpath == NULL || optind != argc) {
		warnx("env: need --socket PATH");
		return SANDTRACE_EXIT_ERROR;
	}
	/* The shim needs an absolute socket path. */
	char abs[PATH_MAX];
	if (sockpath[0] != '/') {
		char cwd[PATH_MAX];
		if (getcwd(cwd, sizeof(cwd)) == NULL ||
		    (size_t)snprintf(abs, sizeof(abs), "%s/%s", cwd, sockpath) >= sizeof(abs)) {
			warn("getcwd");
			return SANDTRACE_EXIT_ERROR;
		}
		sockpath = abs;
	}
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlcpy(sa.sun_path, sockpath, sizeof(sa.sun_path)) >= sizeof(sa.sun_path)) {
		warnx("%s: path too long for a unix socket", sockpath);
		return SANDTRACE_EXIT_ERROR;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		warn("connect %s", sockpath);
		return SANDTRACE_EXIT_ERROR;
	}
	int rc = sandtrace_proto_send(fd, SANDTRACE_MSG_INFO, 1, 0, NULL, 0);
	struct sandtrace_frame f;
	struct sandtrace_info info;
	char name[SANDTRACE_ARENA_NAME_MAX] = "";
	if (rc == 0)
		rc = sandtrace_proto_recv_exact(fd, &f, sizeof(f), 5000);
	if (rc == 0 && (sandtrace_proto_check_frame(&f) < 0 || f.type != SANDTRACE_MSG_INFO_REPLY ||
			f.len < sizeof(info) || f.len - sizeof(info) >= sizeof(name)))
		rc = -EPROTO;
	if (rc == 0)
		rc = sandtrace_proto_recv_exact(fd, &info, sizeof(info), 5000);
	if (rc == 0 && info.name_len != f.len - sizeof(info))
		rc = -EPROTO;
	if (rc == 0 && info.name_len > 0)
		rc = sandtrace_proto_recv_exact(fd, name, info.name_len, 5000);
	close(fd);
	if (rc < 0) {
		warnx("%s: no answer from sandtraced: %s", sockpath, strerror(-rc));
		return SANDTRACE_EXIT_ERROR;
	}

	char *shim = find_shim();
	if (shim == NULL)
		return SANDTRACE_EXIT_ERROR;
	char *audit = loader_audit ? find_audit(shim) : NULL;
	char *preload = preload_value(shim);
	char flags[16];
	snprintf(flags, sizeof(flags), "%u", info.run_flags);
	const char *vars[][2] = {
	    {"LD_PRELOAD", preload},	  {SANDTRACE_ENV_SOCKET, sockpath},
	    {SANDTRACE_ENV_ARENA, name},  {SANDTRACE_ENV_LIB, shim},
	    {SANDTRACE_ENV_FLAGS, flags}, {SANDTRACE_ENV_AUDIT, audit},
	};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		if (vars[i][1] == NULL)
			continue;
		char *q = st__shell_quote(vars[i][1]);
		if (q == NULL)
			err(SANDTRACE_EXIT_ERROR, "out of memory");
		printf("export %s=%s\n", vars[i][0], q);
		free(q);
	}
	free(shim);
	free(audit);
	free(preload);
	return fflush(stdout) == 0 ? 0 : SANDTRACE_EXIT_ERROR;
}

/* ---- report ---- */

static int list_one(json_t *obj, unsigned long lineno, void *ctx)
{
	(void)lineno;
	(void)ctx;
	const char *type = json_string_value(json_object_get(obj, "type"));
	if (type == NULL || strcmp(type, "access") != 0)
		return 0;
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	const char *path = json_string_value(json_object_get(obj, "path"));
	if (kind == NULL || path == NULL)
		return 0;
	/* The path as escaped in the report: never a tab or newline inside. */
	if (printf("%s\t%s\n", kind, path) < 0)
		return -errno;
	return 0;
}

/* ---- audit ---- */

/* The audit records of a report, gathered by audit_one. */
struct audit_view {
	json_t *used, *unused, *unowned; /* arrays of records (references) */
	json_t *summary;		 /* the "audit" record or NULL */
	json_t *reg_error;		 /* the summary's "registry: ..." reason (a string) or NULL */
};

static int audit_one(json_t *obj, unsigned long lineno, void *ctx)
{
	struct audit_view *v = ctx;
	(void)lineno;
	const char *type = json_string_value(json_object_get(obj, "type"));
	if (type == NULL)
		return 0;
	if (strcmp(type, "package") == 0)
		json_array_append(json_is_true(json_object_get(obj, "used")) ? v->used : v->unused,
				  obj);
	else if (strcmp(type, "unowned") == 0)
		json_array_append(v->unowned, obj);
	else if (strcmp(type, "audit") == 0) {
		json_decref(v->summary);
		v->summary = json_incref(obj);
	} else if (strcmp(type, "summary") == 0) {
		/* a registry that failed to load leaves no audit record, only this reason */
		size_t i;
		json_t *r;
		json_array_foreach(json_object_get(obj, "reasons"), i, r)
		{
			const char *s = json_string_value(r);
			if (s != NULL && strncmp(s, "registry: ", 10) == 0) {
				json_decref(v->reg_error);
				v->reg_error = json_incref(r);
			}
		}
	}
	return 0;
}

static const char *str_or(json_t *o, const char *k, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : dflt;
}

/*
 * Print the audit section of a report: packages used (file counts, a
 * sample), undeclared ones (every path, the first pid), declared packages
 * never used (direct declarations; the closure and implicit ones with
 * all), files no package owns.  Returns 0, 1 when the report has no audit
 * (a message on stderr), or 1 on a read error.
 */
static int print_audit(FILE *f, const char *file, bool all)
{
	struct audit_view v = {json_array(), json_array(), json_array(), NULL, NULL};
	char errbuf[512];
	int rc = st__report_read(file, audit_one, &v, errbuf, sizeof(errbuf));
	int status = 0;
	if (rc < 0) {
		warnx("%s", errbuf);
		status = 1;
		goto out;
	}
	if (v.summary == NULL && v.reg_error != NULL) {
		/* the run asked for one: say why there is none (it said "run with --audit") */
		warnx("%s: no audit in this report: the package registry could not be loaded (%s)",
		      file, json_string_value(v.reg_error) + 10);
		status = 1;
		goto out;
	}
	if (v.summary == NULL) {
		warnx("%s: no audit in this report (run with --audit, or ask rules)", file);
		status = 1;
		goto out;
	}
	bool decl = json_is_true(json_object_get(v.summary, "declarations"));
	fprintf(f, "registry: %s (%lld packages, %lld files, loaded in %.1f ms, %.1f ms CPU)\n",
		str_or(v.summary, "registry", "?"),
		(long long)json_integer_value(json_object_get(v.summary, "registry_packages")),
		(long long)json_integer_value(json_object_get(v.summary, "registry_files")),
		json_real_value(json_object_get(v.summary, "load_ms")),
		json_real_value(json_object_get(v.summary, "load_cpu_ms")));
	size_t i;
	json_t *p;
	fprintf(f, "\npackages used: %zu\n", json_array_size(v.used));
	json_array_foreach(v.used, i, p)
	{
		json_t *d = json_object_get(p, "declared");
		fprintf(f, "  %-32s %5lld file%s  %-10s %s\n", str_or(p, "package", "?"),
			(long long)json_integer_value(json_object_get(p, "files")),
			json_integer_value(json_object_get(p, "files")) == 1 ? " " : "s",
			json_is_string(d) ? json_string_value(d) : json_is_false(d) ? "UNDECLARED" : "-",
			str_or(p, "sample", ""));
	}
	if (decl) {
		size_t n = 0;
		json_array_foreach(v.used, i, p) n += json_is_false(json_object_get(p, "declared"));
		fprintf(f, "\nundeclared packages used: %zu\n", n);
		json_array_foreach(v.used, i, p)
		{
			if (!json_is_false(json_object_get(p, "declared")))
				continue;
			json_int_t hidden = json_integer_value(json_object_get(p, "hidden"));
			fprintf(f, "  %s (first used by pid %lld%s)\n", str_or(p, "package", "?"),
				(long long)json_integer_value(json_object_get(p, "first_pid")),
				hidden ? ", hidden by the fence" : "");
			size_t j;
			json_t *path;
			json_array_foreach(json_object_get(p, "paths"), j, path)
			    fprintf(f, "    %s\n", json_string_value(path));
		}
		size_t direct = 0, other = 0;
		json_array_foreach(v.unused, i, p)
		{
			if (strcmp(str_or(p, "declared", ""), "direct") == 0)
				direct++;
			else
				other++;
		}
		fprintf(f, "\ndeclared packages never used: %zu direct", direct);
		if (other)
			fprintf(f, " (and %zu from the closure or implicit%s)", other,
				all ? "" : ": --all lists them");
		fprintf(f, "\n");
		json_array_foreach(v.unused, i, p)
		{
			bool d = strcmp(str_or(p, "declared", ""), "direct") == 0;
			if (d)
				fprintf(f, "  %s%s\n", str_or(p, "package", "?"),
					json_is_false(json_object_get(p, "installed")) ? " (not installed)" : "");
			else if (all)
				fprintf(f, "  %s (%s)\n", str_or(p, "package", "?"),
					str_or(p, "declared", "?"));
		}
	}
	fprintf(f, "\nfiles used that no package owns: %zu\n", json_array_size(v.unowned));
	json_array_foreach(v.unowned, i, p)
	    fprintf(f, "  %s %s\n", str_or(p, "kind", "?"), str_or(p, "path", "?"));
out:
	json_decref(v.used);
	json_decref(v.unused);
	json_decref(v.unowned);
	json_decref(v.summary);
	json_decref(v.reg_error);
	return status;
}

static int cmd_audit(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"all", no_argument, NULL, 'a'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	bool all = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (c == 'a') {
			all = true;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return SANDTRACE_EXIT_ERROR;
		}
	}
	if (optind + 1 != argc) {
		warnx("audit: need one FILE");
		return SANDTRACE_EXIT_ERROR;
	}
	int rc = print_audit(stdout, argv[optind], all);
	return fflush(stdout) == 0 ? rc : 1;
}

static int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"list", no_argument, NULL, 'l'},
	    {"audit", no_argument, NULL, 'a'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	bool list = false, audit = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (c == 'l') {
			list = true;
		} else if (c == 'a') {
			audit = true;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return SANDTRACE_EXIT_ERROR;
		}
	}
	if (optind + 1 != argc) {
		warnx("report: need one FILE");
		return SANDTRACE_EXIT_ERROR;
	}
	const char *file = argv[optind];
	char errbuf[512];
	int rc;
	if (list) {
		rc = st__report_read(file, list_one, NULL, errbuf, sizeof(errbuf));
		if (rc < 0) {
			warnx("%s", errbuf);
			return 1;
		}
		return fflush(stdout) == 0 ? 0 : 1;
	}
	struct st__report_scan s;
	rc = st__report_scan(file, &s, errbuf, sizeof(errbuf));
	if (rc < 0) {
		warnx("%s", errbuf);
		st__report_scan_free(&s);
		return 1;
	}
	if (s.run != NULL) {
		json_t *av = json_object_get(s.run, "argv");
		size_t i;
		json_t *a;
		printf("sandtrace: run of");
		json_array_foreach(av, i, a)
		    printf(" %s", json_is_string(a) ? json_string_value(a) : "?");
		const char *pol = json_string_value(json_object_get(s.run, "policy"));
		printf(" (policy %s%s)\n", pol ? pol : "?",
		       json_is_true(json_object_get(s.run, "fenced")) ? ", fenced" : "");
	}
	print_summary(stdout, &s, true);
	st__report_scan_free(&s);
	if (audit) {
		printf("\n");
		fflush(stdout);
		rc = print_audit(stdout, file, false);
		return fflush(stdout) == 0 ? rc : 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return SANDTRACE_EXIT_ERROR;
	}
	const char *sub = argv[1];
	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(sub, "--version") == 0) {
		printf("sandtrace %s\n", SANDTRACE_VERSION);
		return 0;
	}
	if (strcmp(sub, "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(sub, "env") == 0)
		return cmd_env(argc - 1, argv + 1);
	if (strcmp(sub, "report") == 0)
		return cmd_report(argc - 1, argv + 1);
	if (strcmp(sub, "audit") == 0)
		return cmd_audit(argc - 1, argv + 1);
	if (strcmp(sub, "diff") == 0)
		return st__mf_cmd_diff(argc - 1, argv + 1);
	warnx("unknown command \"%s\"", sub);
	usage(stderr);
	return SANDTRACE_EXIT_ERROR;
}
