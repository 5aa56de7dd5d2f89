/* daemon/sandtraced.c - the daemon: owns the socket and the arena, answers cache misses, writes the
 * report. */
#include <assert.h>
#include <bsd/stdlib.h>
#include <bsd/string.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>

#include <sandtrace/arena.h>
#include <sandtrace/common.h>
#include <sandtrace/ctrie.h>
#include <sandtrace/log.h>
#include <sandtrace/policy.h>
#include <sandtrace/protocol.h>

#include "manifest.h"
#include "policy_file.h"
#include "registry.h"
#include "report.h"
#include "util.h"

/* Exit status for a refused start (bad options, bad policy, socket or arena failure). */
#define EXIT_STARTUP 2
/* Bytes read per read(2) call; a client's buffer grows past it only for a large frame. */
#define READ_CHUNK (64u << 10)
/* Reads per client per epoll wakeup before serving the others (fairness under make -j64). */
#define READS_PER_WAKEUP 8
/* Flush the report at least this often (ns) while the loop never goes idle. */
#define FLUSH_INTERVAL_NS 1000000000LL

/* One process image (a pid after each exec is a new image). */
struct image {
	int32_t pid, ppid;
	int64_t uid;
	char *exe;
	size_t exe_len;
	char *argv;
	size_t argv_len;
	bool hello; /* exe/argv came from a HELLO (else a placeholder) */
	bool exited;
	int32_t exit_status;
	bool traced;
	unsigned why;
	bool argv_trunc, no_cache, execed;
	/* ended by its parent's reap (EXIT with EF_CHILD), not its own EXIT;
	 * reaped_at: that record's stamp (sandtrace_log_stamp), 0 unknown */
	bool reaped;
	uint32_t reaped_at;
	bool have_counters;
	uint64_t calls, hits, messages;
	/* records and requests the image could not deliver (its EXIT says;
	 * counted for an image without the arena: the others count in the
	 * arena's header) */
	uint32_t lost;
	/* the image an exec replaced, still running then (prev valid) */
	bool has_prev;
	size_t prev;
	/* an untraced exec's image whose exec failed (exec_failed): it never
	 * ran, and has no process record */
	bool gone;
	/* an io_uring: set up and let through (its accesses through the ring are
	 * unseen), or refused (a violation, written once an image) */
	bool io_uring, io_uring_refused;
};

/* pid -> index of its current image. */
struct proc {
	int32_t pid;
	size_t image;
	UT_hash_handle hh;
};

/* A reaped child's wait status that came before any image of it: a
 * posix_spawn of a program the preload cannot follow sends the child's
 * untraced record after the spawn returns, and another thread of the
 * spawner may reap the child first (its exit was lost: exit null).  Kept
 * until that record (on_access, AF_SPAWNED) takes it; at most
 * EARLY_EXITS_MAX, the rest dropped as before. */
struct early_exit {
	int32_t pid, ppid;
	int status; /* as the report gives it: N, 128+N */
	UT_hash_handle hh;
};
#define EARLY_EXITS_MAX 4096

/* A connection; buf holds bytes read but not yet dispatched (from off to len). */
struct client {
	int fd;
	int32_t peer_pid;
	int64_t uid;
	int32_t pid; /* who records are attributed to: HELLO's process, else the peer */
	bool hello;
	uint8_t *buf;
	size_t off, len, cap;
	UT_hash_handle hh;
};

/*
 * An exec's access record, held until the end of the run: the shim records
 * an exec before the call (when it succeeds the process is replaced), and
 * amends the record when the call returns (SANDTRACE_AF_EXEC_FAILED), which
 * may be after this record was read.  runs: the X records of this key that
 * said the program runs (every exec that sent one: the first, an untraced
 * exec's, and those the shim records again after a failure); failed: the
 * amendments among them.  Written as one that ran while runs > failed,
 * else with the first failure's errno.
 */
struct xrec {
	UT_hash_handle hh;
	struct st__access_rec r; /* path and package point into this record */
	unsigned runs, failed;
	int32_t fail_err;
	bool written; /* written already: an image of the program said HELLO (exec_ran) */
	size_t len;
	uint8_t key[]; /* the record key (record_path's), then the path, then the package */
};

/* Members of the recorded sets: an opaque byte key. */
struct seen {
	UT_hash_handle hh;
	size_t len;
	uint8_t key[];
};

struct daemon {
	/* options */
	const char *socket_path, *report_path, *policy_path, *log_path, *private_dir;
	const char *allow_exec; /* the program the user named: read+exec allowed before any rule */
	bool fence, no_cache, record_all, fail_open;
	/* the dependency auditor (registry.h) */
	const char *dpkg_root, *owners_path, *deps_list, *deps_from;
	bool audit, no_implicit_deps;
	uint64_t arena_size;
	const char *arena_dir; /* --arena-dir: a tmpfs for the arena (NULL: POSIX shm) */
	long parent_pid;
	int ready_fd;
	char **run_argv;

	/* state */
	unsigned run_flags;
	int epfd, lfd, sigfd;
	/* lfd taken out of the epoll set: accept() failed for want of a
	 * descriptor (EMFILE, ENFILE); put back when a client closes */
	bool accept_paused;
	bool stopping;
	bool report_failed; /* a write of the report failed: logged once (report_failed) */
	bool reload_pending; /* SIGHUP: re-read the policy file */
	char start_cwd[PATH_MAX]; /* what relative policy prefixes are relative to */
	bool parent_lost; /* the CLI died first: nobody will clean up after us */
	/* processes without the arena that stopped waiting for an answer and
	 * went on without the daemon (client_gave_up) */
	uint64_t gave_up;
	struct early_exit *early_exits; /* by pid */
	unsigned n_early_exits;
	struct sandtrace_arena arena;
	struct sandtrace_log_reader logr; /* the record log in the arena (log.h) */
	int64_t last_log_ns;
	unsigned wakeups; /* busy wakeups of the event loop (check_parent) */
	uint64_t log_seq_drained; /* the arena's log_seq when the log was last drained */
	uint32_t cur_stamp;       /* the stamp of the record being dispatched (0: none) */
	bool yield_to_asks;       /* a slice of the log drain stops when an asker waits */
	uint64_t asks_seen;       /* SANDTRACE_CTR_ASKS when a slice last stopped for it */
	char arena_name[SANDTRACE_ARENA_NAME_MAX];
	bool have_arena, arena_full_logged;
	struct st__policy policy;
	bool policy_hides; /* st__policy_hides(&policy), set where policy is (publish_policy) */
	const void *ptab_base;
	const struct sandtrace_policy_table *ptab;
	void *ptab_private; /* the table's buffer with --no-cache */
	struct st__report report;
	bool report_dirty;
	int64_t last_flush_ns;

	struct client *clients;
	struct proc *procs;
	struct image *images;
	size_t nimages, capimages;
	struct seen *recorded, *violated, *paths;
	struct xrec *execs; /* exec records held until the end (struct xrec), in their order */

	uint64_t seq;
	struct st__summary sum;
	uint64_t internal_errors;

	/* registry: loaded by a background thread, joined before the first use */
	bool want_registry; /* ask rules or --audit */
	enum { REG_NONE, REG_LOADING, REG_READY, REG_FAILED } reg_state;
	pthread_t reg_thread;
	struct st__registry reg;
	struct st__deplist deps;
	bool have_deps;
	int reg_rc;
	char reg_err[ST_POLICY_ERR_MAX];
	size_t ndeclared_direct, ndeclared;
	struct st__audit audit_log;
	char cwd[PATH_MAX];
	char cli_exe[PATH_MAX]; /* <our dir>/sandtrace: its pre-exec image is not the build */
	struct st__mf_opts mfo; /* --manifest, --verify, --hash-cache (daemon/manifest.h) */
	struct st__mf *mf;
};

/* ---- small helpers ---- */

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Note a daemon-side failure: logged, counted, and it makes the run incomplete. */
static void internal_error(struct daemon *d, const char *what, int err)
{
	d->internal_errors++;
	st__log("error: %s: %s", what, strerror(err < 0 ? -err : err));
}

/* A write of the report failed (the error stays in d->report.error and every later
 * write is skipped): logged and counted once, not once for each record of the run,
 * which filled the log with the same line by the thousand on a full disk. */
static void report_failed(struct daemon *d)
{
	if (d->report_failed)
		return;
	d->report_failed = true;
	internal_error(d, "writing the report", d->report.error);
}

/* Add key to set; returns 1 if new, 0 if present, -ENOMEM. */
static int set_add(struct seen **set, const void *key, size_t len)
{
	struct seen *e;
	unsigned hv;
	HASH_VALUE(key, len, hv); /* once, for the look-up and the add */
	HASH_FIND_BYHASHVALUE(hh, *set, key, len, hv, e);
	if (e != NULL)
		return 0;
	e = malloc(sizeof(*e) + len);
	if (e == NULL)
		return -ENOMEM;
	e->len = len;
	memcpy(e->key, key, len);
	HASH_ADD_KEYPTR_BYHASHVALUE(hh, *set, e->key, len, hv, e);
	return 1;
}

static void set_free(struct seen **set)
{
	struct seen *e, *tmp;
	HASH_ITER(hh, *set, e, tmp)
	{
		HASH_DEL(*set, e);
		free(e);
	}
}

/* A new image for pid becomes its current one; returns it or NULL (ENOMEM). */
static struct image *image_new(struct daemon *d, int32_t pid)
{
	if (d->nimages == d->capimages) {
		size_t ncap = d->capimages ? d->capimages * 2 : 64;
		struct image *n = reallocarray(d->images, ncap, sizeof(*n));
		if (n == NULL)
			return NULL;
		d->images = n;
		d->capimages = ncap;
	}
	struct proc *p;
	int32_t ppid = 0;
	int64_t uid = -1;
	bool has_prev = false;
	HASH_FIND_INT(d->procs, &pid, p);
	if (p == NULL) {
		p = calloc(1, sizeof(*p));
		if (p == NULL)
			return NULL;
		p->pid = pid;
		HASH_ADD_INT(d->procs, pid, p);
	} else {
		/*
		 * An exec (the old image is still running): the new image keeps the
		 * pid's parent and owner until its HELLO says otherwise.  An exited
		 * old image means the pid was reused by a new process.
		 */
		struct image *old = &d->images[p->image];
		if (!old->exited) {
			old->execed = true;
			ppid = old->ppid;
			uid = old->uid;
			has_prev = true;
		}
	}
	size_t prev = p->image;
	p->image = d->nimages;
	struct image *im = &d->images[d->nimages++];
	memset(im, 0, sizeof(*im));
	im->has_prev = has_prev;
	im->prev = prev;
	im->pid = pid;
	im->ppid = ppid;
	im->uid = uid;
	im->traced = true;
	return im;
}

static struct image *image_of(struct daemon *d, int32_t pid)
{
	struct proc *p;
	HASH_FIND_INT(d->procs, &pid, p);
	return p ? &d->images[p->image] : NULL;
}

/* The current image of pid, created as a placeholder when a record comes before any HELLO. */
static struct image *image_get(struct daemon *d, int32_t pid, int64_t uid)
{
	struct image *im = image_of(d, pid);
	if (im == NULL && (im = image_new(d, pid)) != NULL)
		im->uid = uid;
	return im;
}

/* ---- the registry (background load) ---- */

/*
 * The loader thread: everything it touches (reg, deps, reg_rc, reg_err,
 * the declared counts) is the main thread's only after pthread_join, which
 * is the synchronisation point; the main thread does not look at them
 * while reg_state is REG_LOADING.
 */
static void *registry_loader(void *arg)
{
	struct daemon *d = arg;
	const char *root = d->dpkg_root ? d->dpkg_root : "/var/lib/dpkg";
	int rc;
	if (d->owners_path != NULL) /* files came from the map; status is optional (README:
				     * "when there is one"; the directory was checked at the start) */
		rc = st__registry_load_status(&d->reg, root, true, d->reg_err, sizeof(d->reg_err));
	else
		rc = st__registry_load_dpkg(&d->reg, root, d->reg_err, sizeof(d->reg_err));
	if (rc == 0) {
		rc = st__registry_declare(&d->reg, d->have_deps ? &d->deps : NULL,
					  !d->no_implicit_deps, &d->ndeclared_direct, &d->ndeclared);
		if (rc < 0)
			snprintf(d->reg_err, sizeof(d->reg_err), "declared dependencies: %s",
				 strerror(-rc));
	}
	d->reg_rc = rc;
	return NULL;
}

/*
 * registry_ready - wait for the loader (the first ask or the end of the run
 * pays for it; later calls return at once).  Returns true when the registry
 * can answer.  Main thread only.
 */
static bool registry_ready(struct daemon *d)
{
	if (d->reg_state == REG_LOADING) {
		int64_t t0 = now_ns();
		pthread_join(d->reg_thread, NULL);
		double waited = (double)(now_ns() - t0) / 1e6;
		if (d->reg_rc < 0) {
			d->reg_state = REG_FAILED;
			st__log("error: registry: %s", d->reg_err);
			st__summary_reason(&d->sum, "registry: %s", d->reg_err);
		} else {
			d->reg_state = REG_READY;
			st__log("registry %s: %llu package(s), %llu file(s), %llu director%s, "
				"%llu diverted, loaded in %.1f ms (%.1f ms CPU; waited %.1f ms); %zu declared "
				"(%zu direct)",
				d->reg.source, (unsigned long long)d->reg.npackages,
				(unsigned long long)d->reg.nfiles, (unsigned long long)d->reg.ndirs,
				d->reg.ndirs == 1 ? "y" : "ies",
				(unsigned long long)d->reg.ndiverted, d->reg.load_ms,
				d->reg.load_cpu_ms, waited,
				d->ndeclared, d->ndeclared_direct);
		}
	}
	return d->reg_state == REG_READY;
}

/* How an ask rule judges path: "declared", "undeclared" or "unknown"; *pkg gets the owner. */
static const char *ask_judge(struct daemon *d, const char *path, size_t len,
			     const struct st__pkg **pkg)
{
	*pkg = NULL;
	if (!registry_ready(d))
		return "unknown";
	struct st__pkg *p = st__registry_owner(&d->reg, path, len, NULL);
	/*
	 * dpkg lists directories as well as files, and an empty directory (or
	 * one whose contents come from another package) looks like a file in
	 * a .list: a directory is never owned.  One stat, once per path.
	 */
	struct stat st;
	char buf[PATH_MAX];
	if (p != NULL && len < sizeof(buf)) {
		memcpy(buf, path, len);
		buf[len] = '\0';
		if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
			p = NULL;
	}
	*pkg = p;
	if (p == NULL)
		return "unknown";
	return p->declared != ST_DECL_NO ? "declared" : "undeclared";
}

/*
 * The answer of an ask rule, MacPorts semantics: allowed when a declared
 * package owns the path or none does ("unknown"); owned by an undeclared
 * package: hidden (ENOENT) under a fence, allowed and reported as a
 * violation (record_path) otherwise.  A registry that failed to load
 * answers like "unknown", except under a fence, which fails closed.
 * *how gets ask_judge's answer, *owner the package.
 */
static unsigned ask_answer(struct daemon *d, const char *path, size_t len, const char **how,
			   const struct st__pkg **owner)
{
	*how = ask_judge(d, path, len, owner);
	bool hide = d->fence && (strcmp(*how, "undeclared") == 0 || d->reg_state == REG_FAILED);
	return hide ? SANDTRACE_DENY : SANDTRACE_ALLOW;
}

/*
 * Start the loader when ask rules or --audit need it: parse the declared
 * dependencies and an owner map here (their errors stop the start, with
 * file and line), read the dpkg database in the background.
 */
/* 0 when path is a directory, else why not (stat's errno, or ENOTDIR) */
static int dir_err(const char *path)
{
	struct stat sb;
	if (stat(path, &sb) < 0)
		return errno;
	return S_ISDIR(sb.st_mode) ? 0 : ENOTDIR;
}

static void setup_registry(struct daemon *d, void (*fatal_fn)(const char *, ...))
{
	if (st__policy_has_ask(&d->policy) || d->audit)
		d->want_registry = true;
	if (!d->want_registry)
		return;
	char err[ST_POLICY_ERR_MAX];
	int rc;
	st__registry_init(&d->reg, ST_REG_DETECT_USRMERGE);
	if (d->deps_list != NULL) {
		d->have_deps = true;
		rc = st__deps_parse(d->deps_list, strlen(d->deps_list), "amd64", "--deps", 0,
				    &d->deps, err, sizeof(err));
		if (rc < 0)
			fatal_fn("%s", err);
	}
	if (d->deps_from != NULL) {
		d->have_deps = true;
		rc = st__control_build_deps(d->deps_from, "amd64", &d->deps, err, sizeof(err));
		if (rc < 0)
			fatal_fn("--deps-from: %s", err);
	}
	if (d->owners_path != NULL) {
		rc = st__registry_load_owners(&d->reg, d->owners_path, err, sizeof(err));
		if (rc < 0)
			fatal_fn("--owners: %s", err);
		/* a --dpkg-root that is not there is a usage error here too, said before
		 * the build starts (the loader found it at the end: no audit at all) */
		int e;
		if (d->dpkg_root != NULL && (e = dir_err(d->dpkg_root)) != 0)
			fatal_fn("--dpkg-root %s: %s", d->dpkg_root, strerror(e));
	} else {
		/* a missing database is a usage error, said before the build starts */
		const char *root = d->dpkg_root ? d->dpkg_root : "/var/lib/dpkg";
		char st[PATH_MAX];
		snprintf(st, sizeof(st), "%s/status", root);
		if (access(st, R_OK) < 0)
			fatal_fn("--dpkg-root %s: %s: %s", root, st, strerror(errno));
		/* so is one without its file lists: the loader found that only
		 * at the end of the run, which then had no audit at all */
		snprintf(st, sizeof(st), "%s/info", root);
		int e = dir_err(st);
		if (e != 0)
			fatal_fn("--dpkg-root %s: %s: %s", root, st, strerror(e));
	}
	rc = pthread_create(&d->reg_thread, NULL, registry_loader, d);
	if (rc != 0)
		fatal_fn("starting the registry loader: %s", strerror(rc));
	d->reg_state = REG_LOADING;
}

/* ---- replies ---- */

/*
 * Send one reply without trusting the client to read: the socket is
 * non-blocking and a client that leaves its receive buffer full for
 * REPLY_WAIT_MS is dropped by the caller (replies are a few dozen bytes, so
 * only a client flooding requests without reading its answers gets there).
 */
#define REPLY_WAIT_MS 2000
static int reply(struct daemon *d, struct client *c, unsigned type, uint32_t seq,
		 const struct iovec *parts, int nparts)
{
	struct sandtrace_frame f;
	struct iovec iov[4];
	size_t total = 0, sent = 0;
	int n = 0;
	(void)d;

	assert(nparts <= 3);
	for (int i = 0; i < nparts; i++)
		total += parts[i].iov_len;
	sandtrace_proto_frame(&f, type, (uint32_t)total, seq, 0);
	iov[n++] = (struct iovec){&f, sizeof(f)};
	for (int i = 0; i < nparts; i++)
		iov[n++] = parts[i];
	total += sizeof(f);

	int64_t deadline = now_ns() + REPLY_WAIT_MS * 1000000LL;
	while (sent < total) {
		struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
		ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int64_t left = (deadline - now_ns()) / 1000000LL;
			struct pollfd pfd = {.fd = c->fd, .events = POLLOUT};
			if (left <= 0 || poll(&pfd, 1, (int)left) == 0)
				return -ETIMEDOUT;
			continue;
		}
		if (w < 0)
			return -errno;
		sent += (size_t)w;
		/* Skip what went out; partial sends of a few dozen bytes are rare. */
		while (n > 0 && (size_t)w >= iov[0].iov_len) {
			w -= (ssize_t)iov[0].iov_len;
			memmove(iov, iov + 1, (size_t)(--n) * sizeof(iov[0]));
		}
		if (n > 0 && w > 0) {
			iov[0].iov_base = (char *)iov[0].iov_base + w;
			iov[0].iov_len -= (size_t)w;
		}
	}
	return 0;
}

/*
 * The dedupe key of a record of kind for path[0..len): kind [+ pid with
 * --record-all] + the path's bytes, in buf (cap bytes) when it fits, else
 * allocated (the caller frees a key that is not buf); *klen its length.
 * NULL when out of memory.
 */
static uint8_t *record_key(const struct daemon *d, unsigned kind, int32_t pid, const char *path,
			   size_t len, uint8_t *buf, size_t cap, size_t *klen)
{
	size_t n = 1 + (d->record_all ? sizeof(int32_t) : 0) + len;
	uint8_t *key = n <= cap ? buf : malloc(n);
	if (key == NULL)
		return NULL;
	key[0] = (uint8_t)kind;
	if (d->record_all)
		memcpy(key + 1, &pid, sizeof(int32_t));
	memcpy(key + n - len, path, len);
	*klen = n;
	return key;
}

/* The held record (struct xrec) of pid's exec of path[0..len), or NULL:
 * none, or no memory for its key (*nomem). */
static struct xrec *held_exec(struct daemon *d, int32_t pid, const char *path, size_t len,
			      bool *nomem)
{
	uint8_t buf[1024];
	size_t klen;
	uint8_t *key = record_key(d, SANDTRACE_KIND_EXEC, pid, path, len, buf, sizeof(buf), &klen);
	*nomem = key == NULL;
	if (key == NULL)
		return NULL;
	struct xrec *x;
	HASH_FIND(hh, d->execs, key, klen, x);
	if (key != buf)
		free(key);
	return x;
}

/*
 * An image of exe (exe_len bytes) said HELLO as pid: an exec of exe ran, so
 * its held record (struct xrec) is written now, as one that ran, rather
 * than at the end, where a daemon that dies first would lose it; no later
 * amendment can undo a run.  An exec the HELLO does not confirm (a static
 * program's, one that fails) stays held until the end.
 */
static void exec_ran(struct daemon *d, int32_t pid, const char *exe, size_t exe_len)
{
	if (d->execs == NULL || exe == NULL || exe_len == 0)
		return;
	bool nomem;
	struct xrec *x = held_exec(d, pid, exe, exe_len, &nomem);
	if (x == NULL || x->written)
		return; /* (no memory for the key: written at the end) */
	x->written = true;
	if (st__report_emit(&d->report, st__rec_access(&x->r)) < 0)
		report_failed(d);
	d->report_dirty = true;
}

/* ---- message handlers (dispatched from SANDTRACE_MSG_LIST) ---- */

typedef int handler_fn(struct daemon *d, struct client *c, const struct sandtrace_frame *f,
		       const uint8_t *payload);

static int on_HELLO(struct daemon *d, struct client *c, const struct sandtrace_frame *f,
		    const uint8_t *payload)
{
	struct sandtrace_hello_view v;
	int rc = sandtrace_proto_decode_hello(payload, f->len, &v);
	if (rc < 0)
		return rc;
	/* The kernel's word beats the payload's; 0 means the peer is in another pid namespace. */
	int32_t pid = c->peer_pid > 0 ? c->peer_pid : v.h.pid;
	c->pid = pid;
	c->hello = true;

	/* the launcher's connection (--no-cache: its exec of the command is a
	 * request) makes no image: the command's HELLO makes the pid's first,
	 * as when the launcher's check was settled in the arena */
	if (f->flags & SANDTRACE_HF_LAUNCHER)
		return 0;
	struct image *im = image_of(d, pid);
	if ((f->flags & SANDTRACE_HF_THREAD) && im != NULL)
		return 0;
	/* the same image connecting again (its socket was closed or lost): said
	 * by the shim, never guessed from an equal exe and argv (a program that
	 * re-execs itself with the same arguments is a new image each time) */
	if ((f->flags & SANDTRACE_HF_RECONNECT) && im != NULL && im->hello && !im->exited &&
	    im->exe_len == v.h.exe_len &&
	    im->argv_len == v.h.argv_len && memcmp(im->exe, v.exe, v.h.exe_len) == 0 &&
	    memcmp(im->argv, v.argv, v.h.argv_len) == 0)
		return 0; /* the same image reconnecting (its socket was closed or lost) */
	/*
	 * The pid's last image was ended by its parent's reap, and this HELLO
	 * is its exec'd successor's, dispatched after the reap (it came by
	 * another connection, or the log, read later): the reap's status is
	 * this image's.  Told apart from a new process that reuses the pid by
	 * the stamps (the HELLO was sent before the reap).  Without both stamps
	 * (a sender without the arena) the HELLO is a new image: a guess by the
	 * same parent merged killed children into the next child that reused
	 * their pid (a review: 541 of 1,200 with pid_max 1000).
	 */
	bool successor = false;
	int32_t reaped_status = 0;
	uint32_t reaped_at = 0;
	if (im != NULL && im->hello && im->exited && im->reaped) {
		successor = im->reaped_at != 0 && d->cur_stamp != 0 &&
			    (int32_t)(im->reaped_at - d->cur_stamp) > 0;
		if (successor) {
			reaped_status = im->exit_status;
			reaped_at = im->reaped_at;
			im->exited = false; /* image_new marks it execed */
			im->reaped = false;
		}
	}
	if (im == NULL || im->hello || im->exited)
		im = image_new(d, pid);
	if (im == NULL) {
		internal_error(d, "HELLO", -ENOMEM);
		return 0;
	}
	if (successor) {
		im->exited = true;
		im->exit_status = reaped_status;
		im->reaped = true;
		im->reaped_at = reaped_at;
	}
	free(im->exe);
	free(im->argv);
	im->exe = malloc(v.h.exe_len + 1);
	im->argv = malloc(v.h.argv_len + 1);
	if (im->exe == NULL || im->argv == NULL) {
		internal_error(d, "HELLO", -ENOMEM);
		free(im->exe);
		free(im->argv);
		im->exe = im->argv = NULL;
		return 0;
	}
	memcpy(im->exe, v.exe, v.h.exe_len);
	memcpy(im->argv, v.argv, v.h.argv_len);
	im->exe_len = v.h.exe_len;
	im->argv_len = v.h.argv_len;
	im->ppid = v.h.ppid;
	im->uid = c->uid;
	im->hello = true;
	im->argv_trunc = (f->flags & SANDTRACE_HF_ARGV_TRUNC) != 0;
	im->no_cache =
	    (f->flags & (SANDTRACE_HF_NO_ARENA | SANDTRACE_HF_ARENA_BAD)) != 0 && d->have_arena;
	if (f->flags & SANDTRACE_HF_ARENA_BAD)
		st__log("pid %d: the arena's magic/version did not match; running without cache",
			pid);
	exec_ran(d, pid, im->exe, im->exe_len);
	return 0;
}

/* Keep an exec's access record r (its record key, klen bytes) until the
 * end of the run: 1, or -ENOMEM. */
static int hold_exec(struct daemon *d, const struct st__access_rec *r, const uint8_t *key,
		     size_t klen)
{
	size_t plen = r->package ? strlen(r->package) + 1 : 0;
	struct xrec *x = malloc(sizeof(*x) + klen + r->path_len + plen);
	if (x == NULL)
		return -ENOMEM;
	x->r = *r;
	x->runs = 1;
	x->failed = 0;
	x->fail_err = 0;
	x->written = false;
	x->len = klen;
	memcpy(x->key, key, klen);
	memcpy(x->key + klen, r->path, r->path_len);
	x->r.path = (const char *)x->key + klen;
	if (plen) {
		memcpy(x->key + klen + r->path_len, r->package, plen);
		x->r.package = (const char *)x->key + klen + r->path_len;
	}
	HASH_ADD_KEYPTR(hh, d->execs, x->key, klen, x);
	return 1;
}

/*
 * SANDTRACE_AF_EXEC_FAILED: an exec the sender recorded before the call
 * returned with a->err, so the program did not run.  One amendment per
 * record that said it would: the X record (counted against the held record,
 * struct xrec), or with AF_UNTRACED the untraced record, whose image (made
 * for a program the shim cannot follow) never ran: it is dropped and the
 * sender's image is its current one again.  Amendments come after the
 * record they amend (the same thread's log chunk or connection, and the log
 * entries before a socket record are dispatched first), and the held
 * records are written at the end, so the order in which the daemon reads
 * the log does not matter.
 */
static void exec_failed(struct daemon *d, struct client *c, const struct sandtrace_access *a,
			const char *path, size_t len)
{
	bool nomem;
	struct xrec *x = held_exec(d, c->pid, path, len, &nomem);
	if (nomem) {
		internal_error(d, "exec amendment", -ENOMEM);
		return;
	}
	if (x != NULL && x->failed < x->runs) {
		if (x->failed++ == 0)
			x->fail_err = a->err;
		d->report_dirty = true;
	}
	if (!(a->flags & SANDTRACE_AF_UNTRACED))
		return;
	struct proc *p;
	HASH_FIND_INT(d->procs, &c->pid, p);
	struct image *im = p ? &d->images[p->image] : NULL;
	if (im == NULL || im->traced || im->gone || im->exe == NULL || im->exe_len != len ||
	    memcmp(im->exe, path, len) != 0)
		return;
	d->sum.untraced--;
	st__log("pid %d: the untraced exec of %.*s failed (%s): it did not run", c->pid,
		(int)(len > 512 ? 512 : len), path, strerror(a->err));
	if (im->has_prev) { /* the image that made the exec goes on */
		im->gone = true;
		p->image = im->prev;
		d->images[im->prev].execed = false;
	} else { /* nothing before it: what image_get would have made */
		free(im->exe);
		im->exe = NULL;
		im->exe_len = 0;
		im->traced = true;
		im->why = 0;
		im->hello = false;
	}
}

/* Record one path of an ACCESS record; writes the access and violation records. */
static void record_path(struct daemon *d, struct client *c, const struct sandtrace_access *a,
			const char *path, size_t len)
{
	unsigned cls = sandtrace_kind_class(a->kind);
	int rule = -1;
	unsigned action = st__policy_decide(d->ptab_base, d->ptab, cls, path, len, NULL, &rule);
	const char *asked = NULL;
	const struct st__pkg *owner = NULL;
	unsigned verdict = a->verdict;
	if (action == SANDTRACE_ASK)
		action = ask_answer(d, path, len, &asked, &owner);
	else if (a->flags & SANDTRACE_AF_ASKED)
		asked = ask_judge(d, path, len, &owner);
	/*
	 * A record the shim did not judge (a PATH probe's miss, a link an exec
	 * ran through, what the loader mapped): its verdict is the policy's on
	 * the path as it stands now, so that a name the sandbox hides is never
	 * reported allowed; no call was refused, so it is no violation (only
	 * AF_DENIED is, or an undeclared package's use below)
	 */
	if (a->flags & SANDTRACE_AF_UNJUDGED)
		verdict = action;
	bool denied = (a->flags & SANDTRACE_AF_DENIED) != 0;
	/* Without a fence an undeclared package is reported, not hidden (MacPorts hides it). */
	bool undeclared = asked != NULL && strcmp(asked, "undeclared") == 0;

	/* Dedupe key: kind [+ pid with --record-all] + path bytes. */
	size_t klen;
	uint8_t stackkey[1024];
	uint8_t *key = record_key(d, a->kind, c->pid, path, len, stackkey, sizeof(stackkey), &klen);
	if (key == NULL) {
		internal_error(d, "record", -ENOMEM);
		return;
	}

	/* an exec that ran, as far as the record can tell (the shim amends
	 * one that returns): held until the end (struct xrec) */
	bool held = a->kind == SANDTRACE_KIND_EXEC && !denied;
	int rc = set_add(&d->recorded, key, klen);
	if (rc == 0 && held) {
		struct xrec *x;
		HASH_FIND(hh, d->execs, key, klen, x);
		if (x != NULL)
			x->runs++;
		/* a program the preload cannot follow, run by this name after
		 * the record was made (another process's exec of the name went
		 * first, and failed; a #! interpreter's untraced record follows
		 * its X record): the record says so, unless written already */
		if (x != NULL && !x->written && !x->r.untraced && (a->flags & SANDTRACE_AF_UNTRACED))
			x->r.untraced = a->aux ? a->aux : 3u;
	}
	if (rc > 0) {
		struct st__access_rec r = {
		    .seq = ++d->seq,
		    .kind = a->kind,
		    .path = path,
		    .path_len = len,
		    .pid = c->pid,
		    .verdict = verdict,
		    .err = a->err,
		    .asked = asked,
		    .package = owner ? owner->name : NULL,
		    .fail_open = (a->flags & SANDTRACE_AF_FAIL_OPEN) != 0,
		    .unresolved = (a->flags & SANDTRACE_AF_UNRESOLVED) != 0,
		    .untraced = (a->flags & SANDTRACE_AF_UNTRACED) ? (a->aux ? a->aux : 3u) : 0,
		};
		if (held) {
			if (hold_exec(d, &r, key, klen) < 0)
				internal_error(d, "record", -ENOMEM);
		} else if (st__report_emit(&d->report, st__rec_access(&r)) < 0) {
			report_failed(d);
		}
		d->sum.accesses++;
		d->report_dirty = true;
		/*
		 * The first image of the command is `sandtrace run`'s own child,
		 * which loads the shim before it execs CMD: what it maps (the
		 * CLI's libbsd, jansson) is not the build's.
		 */
		struct image *im = image_of(d, c->pid);
		bool cli = im != NULL && im->exe != NULL && d->cli_exe[0] != '\0' &&
			   im->exe_len == strlen(d->cli_exe) &&
			   memcmp(im->exe, d->cli_exe, im->exe_len) == 0;
		if (d->want_registry && !cli &&
		    st__audit_note(&d->audit_log, a->kind, path, len, c->pid, a->err, denied) < 0)
			internal_error(d, "audit", -ENOMEM);
		rc = set_add(&d->paths, path, len);
		if (rc > 0)
			d->sum.unique_paths++;
	}
	if (rc < 0)
		internal_error(d, "record", rc);

	if (denied || (undeclared && a->kind != SANDTRACE_KIND_MISSING &&
		       a->kind != SANDTRACE_KIND_WRITE)) {
		rc = set_add(&d->violated, key, klen);
		if (rc > 0) {
			struct st__violation_rec v = {
			    .seq = ++d->seq,
			    .kind = a->kind,
			    .path = path,
			    .path_len = len,
			    .pid = c->pid,
			    .cls = cls,
			    .rule = rule >= 0 ? d->policy.rules[rule].origin : "default",
			    .package = undeclared && owner ? owner->name : NULL,
			    .hidden = denied,
			};
			if (st__report_emit(&d->report, st__rec_violation(&v)) < 0)
				report_failed(d);
			d->sum.violations++;
			d->report_dirty = true;
		} else if (rc < 0) {
			internal_error(d, "violation", rc);
		}
	}
	if (key != stackkey)
		free(key);
}

/*
 * A process set up (or entered) an io_uring (SANDTRACE_AF_IO_URING; the path
 * is the call's name): no file access of its own.  Refused by the shim
 * (AF_DENIED): a violation, once an image.  Let through: the image is marked,
 * and the summary says the accesses it made through the ring are missing
 * (finish_report).
 */
static int on_io_uring(struct daemon *d, struct client *c, const struct sandtrace_access_view *v)
{
	struct image *im = image_get(d, c->pid, c->uid);
	if (im == NULL) {
		internal_error(d, "io_uring", -ENOMEM);
		return 0;
	}
	size_t n = v->a.path_len > 64 ? 64 : v->a.path_len;
	if (!(v->a.flags & SANDTRACE_AF_DENIED)) {
		if (!im->io_uring)
			st__log("pid %d: an io_uring was set up (%.*s): its accesses are not seen",
				c->pid, (int)n, v->path);
		im->io_uring = true;
		return 0;
	}
	if (im->io_uring_refused)
		return 0;
	im->io_uring_refused = true;
	struct st__violation_rec r = {
	    .seq = ++d->seq,
	    .path = v->path,
	    .path_len = n,
	    .pid = c->pid,
	    .rule = "default",
	    .io_uring = true,
	    .err = v->a.err,
	};
	if (st__report_emit(&d->report, st__rec_violation(&r)) < 0)
		internal_error(d, "writing the report", d->report.error);
	d->sum.violations++;
	d->report_dirty = true;
	return 0;
}

static int on_ACCESS(struct daemon *d, struct client *c, const struct sandtrace_frame *f,
		     const uint8_t *payload)
{
	struct sandtrace_access_view v;
	int rc = sandtrace_proto_decode_access(payload, f->len, &v);
	if (rc < 0)
		return rc;

	if ((v.a.flags & SANDTRACE_AF_VERIFY) && d->mf != NULL) {
		/* --verify: does this version of a listed file match the manifest? */
		struct sandtrace_verdict vd;
		st__mf_verify(d->mf, &v, c->pid ? c->pid : c->peer_pid, &vd);
		d->report_dirty = true;
		struct iovec iov = {&vd, sizeof(vd)};
		return reply(d, c, SANDTRACE_MSG_VERDICT, f->seq, &iov, 1);
	}
	if (v.a.flags & SANDTRACE_AF_REPLY) {
		unsigned cls = sandtrace_kind_class(v.a.kind);
		int err = 0;
		unsigned action =
		    st__policy_decide(d->ptab_base, d->ptab, cls, v.path, v.a.path_len, &err, NULL);
		/*
		 * Ask rules, MacPorts semantics: allowed when a declared package
		 * owns the path or none does ("unknown"); owned by an undeclared
		 * package: hidden (ENOENT) under a fence, allowed and reported
		 * as a violation (record_path) otherwise.  A registry that failed
		 * to load answers like "unknown", except under a fence, which
		 * fails closed.
		 */
		if (action == SANDTRACE_ASK) {
			const struct st__pkg *owner;
			const char *how;
			action = ask_answer(d, v.path, v.a.path_len, &how, &owner);
			err = action == SANDTRACE_DENY ? ENOENT : 0;
		}
		/* the answer first: the asker waits for it.  An asker with the
		 * arena stores it in the Ctrie for later askers itself (check.c
		 * decide_local); one without it cannot (its HELLO, by the
		 * socket, said so): the cache entry below is for its answers
		 * (this daemon reads no other request before it is in) */
		struct sandtrace_verdict vd = {
		    .action = (uint8_t)action,
		    .flags = d->policy_hides ? SANDTRACE_VF_HIDES : 0,
		    .err = err};
		struct iovec iov = {&vd, sizeof(vd)};
		int sent = reply(d, c, SANDTRACE_MSG_VERDICT, f->seq, &iov, 1);
		const struct image *asker = image_of(d, c->pid ? c->pid : c->peer_pid);
		if (d->have_arena && asker != NULL && asker->no_cache) {
			uint32_t val = sandtrace_verdict_value(action, err);
			/* the key the shim looks the answer up by
			 * (sandtrace_ask_key): a reload makes every ask
			 * answer of the old policy miss */
			uint32_t pgen = (uint32_t)atomic_load_explicit(
			    &sandtrace_arena_hdr(&d->arena)->generation, memory_order_relaxed);
			char stackkey[4096];
			size_t klen = (size_t)v.a.path_len + sizeof(pgen);
			char *key = klen <= sizeof(stackkey) ? stackkey : malloc(klen);
			rc = -ENOMEM;
			if (key != NULL) {
				sandtrace_ask_key(key, klen, pgen, v.path, v.a.path_len);
				rc = sandtrace_ctrie_insert(&d->arena, SANDTRACE_KEY_ASK | cls,
							    key, klen, val, NULL);
				if (key != stackkey)
					free(key);
			}
			if (rc == -ENOSPC && !d->arena_full_logged) {
				st__log("the arena is full: verdicts are no longer cached");
				d->arena_full_logged = true;
			} else if (rc < 0 && rc != -ENOSPC) {
				internal_error(d, "Ctrie insert", rc);
			}
		}
		return sent;
	}

	if (c->pid == 0)
		c->pid = c->peer_pid;
	if (v.a.flags & SANDTRACE_AF_EXEC_FAILED) {
		exec_failed(d, c, &v.a, v.path, v.a.path_len);
		return 0;
	}
	if (v.a.flags & SANDTRACE_AF_IO_URING)
		return on_io_uring(d, c, &v);
	if (v.a.flags & SANDTRACE_AF_UNTRACED) {
		/* The exec replaces the sender's image by one the shim cannot
		 * follow; with AF_SPAWNED it is the first image of the child the
		 * sender spawned (pid `reserved`, checked by the decoder) */
		bool spawned = (v.a.flags & SANDTRACE_AF_SPAWNED) != 0;
		int32_t ipid = spawned ? (int32_t)v.a.reserved : c->pid;
		struct image *im = image_new(d, ipid);
		if (im == NULL) {
			internal_error(d, "untraced exec", -ENOMEM);
		} else {
			if (spawned) {
				im->ppid = c->pid;
				image_get(d, c->pid, c->uid); /* the sender's, as below */
				/* reaped already (another thread's wait) */
				struct early_exit *x;
				HASH_FIND_INT(d->early_exits, &ipid, x);
				if (x != NULL) {
					if (x->ppid == c->pid) {
						im->exited = true;
						im->exit_status = x->status;
						im->reaped = true;
						im->reaped_at = d->cur_stamp;
					}
					HASH_DEL(d->early_exits, x);
					free(x);
					d->n_early_exits--;
				}
			}
			im->traced = false;
			im->why = v.a.aux ? v.a.aux : SANDTRACE_UNTRACED_OTHER;
			im->uid = c->uid;
			im->exe = malloc(v.a.path_len + 1);
			if (im->exe != NULL) {
				memcpy(im->exe, v.path, v.a.path_len);
				im->exe_len = v.a.path_len;
			}
			im->hello = true;
		}
		d->sum.untraced++;
		st__log("pid %d: untraced exec (%s) of %.*s", ipid,
			st__untraced_name(im ? im->why : 3),
			(int)(v.a.path_len > 512 ? 512 : v.a.path_len), v.path);
	} else {
		image_get(d, c->pid, c->uid);
	}
	record_path(d, c, &v.a, v.path, v.a.path_len);
	if (v.path2 != NULL)
		record_path(d, c, &v.a, v.path2, v.a.path2_len);
	st__mf_note(d->mf, &v, c->pid); /* --manifest: inputs, outputs, digests */
	return 0;
}

static int on_EXIT(struct daemon *d, struct client *c, const struct sandtrace_frame *f,
		   const uint8_t *payload)
{
	struct sandtrace_exit e;
	if (f->len != sizeof(e))
		return -EPROTO;
	memcpy(&e, payload, sizeof(e));
	if (f->flags & SANDTRACE_EF_CHILD) {
		/* a parent reaped a child: the wait status is the truth about
		 * how the child's last image ended (signals as 128+N) */
		struct image *ch = image_of(d, (int32_t)e.reserved);
		int st = e.status;
		int status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
		if (ch != NULL && !ch->exited) {
			ch->exited = true;
			ch->exit_status = status;
			ch->reaped = true;
			ch->reaped_at = d->cur_stamp;
		} else if (ch == NULL || ch->reaped) {
			/* no image of this process yet (none of the pid, or its
			 * last one reaped already): kept for its untraced record */
			int32_t pid = (int32_t)e.reserved;
			struct early_exit *x;
			HASH_FIND_INT(d->early_exits, &pid, x);
			if (x == NULL && d->n_early_exits < EARLY_EXITS_MAX &&
			    (x = calloc(1, sizeof(*x))) != NULL) {
				x->pid = pid;
				HASH_ADD_INT(d->early_exits, pid, x);
				d->n_early_exits++;
			}
			if (x != NULL) {
				x->ppid = c->pid;
				x->status = status;
			}
		}
		return 0;
	}
	if (c->pid == 0)
		c->pid = c->peer_pid;
	struct image *im = image_get(d, c->pid, c->uid);
	if (im == NULL) {
		internal_error(d, "EXIT", -ENOMEM);
		return 0;
	}
	/* -1: sent from a destructor, the status is not known here; the
	 * parent's wait (EF_CHILD) will tell */
	if (e.status != -1) {
		im->exited = true;
		im->exit_status = e.status;
		im->reaped = false;
	}
	/* Kept per image, not added: a second EXIT (another thread) must not count twice. */
	im->have_counters = true;
	im->calls = e.calls;
	im->hits = e.hits;
	im->messages = e.messages;
	if (e.reserved > im->lost) /* what its connection lost, when it came back */
		im->lost = e.reserved;
	return 0;
}

static int on_INFO(struct daemon *d, struct client *c, const struct sandtrace_frame *f,
		   const uint8_t *payload)
{
	(void)payload;
	if (f->len != 0)
		return -EPROTO;
	struct sandtrace_info info = {.run_flags = d->run_flags,
				      .name_len =
					  d->have_arena ? (uint32_t)strlen(d->arena_name) : 0};
	struct iovec iov[2] = {{&info, sizeof(info)}, {d->arena_name, info.name_len}};
	return reply(d, c, SANDTRACE_MSG_INFO_REPLY, f->seq, iov, info.name_len ? 2 : 1);
}

/* Messages the daemon sends are never valid from a client. */
static int on_VERDICT(struct daemon *d, struct client *c, const struct sandtrace_frame *f,
		      const uint8_t *payload)
{
	return -EPROTO;
}

static int on_INFO_REPLY(struct daemon *d, struct client *c, const struct sandtrace_frame *f,
			 const uint8_t *payload)
{
	return -EPROTO;
}

static handler_fn *const dispatch[SANDTRACE_MSG_MAX] = {
#define SANDTRACE_X_DISPATCH(name, val, dir, payload) [SANDTRACE_MSG_##name] = on_##name,
    SANDTRACE_MSG_LIST(SANDTRACE_X_DISPATCH)
#undef SANDTRACE_X_DISPATCH
};

/* ---- clients ---- */

static void client_close(struct daemon *d, struct client *c, const char *why)
{
	if (why != NULL)
		st__log("client fd %d pid %d uid %lld: closed: %s", c->fd, c->pid,
			(long long)c->uid, why);
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (d->accept_paused) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &d->lfd};
		if (epoll_ctl(d->epfd, EPOLL_CTL_MOD, d->lfd, &ev) == 0)
			d->accept_paused = false;
	}
	HASH_DEL(d->clients, c);
	free(c->buf);
	free(c);
}

/* Drop a client that sent garbage: logged, counted, and the run is incomplete. */
static void client_drop(struct daemon *d, struct client *c, const char *what, int rc)
{
	char why[256];
	snprintf(why, sizeof(why), "protocol error (%s: %s)", what, strerror(-rc));
	d->sum.dropped_clients++;
	client_close(d, c, why);
}

static void drain_log(struct daemon *d, bool force);
static int on_log_entry(void *ctx, const struct sandtrace_log_entry *e, const uint8_t *payload);

/* Is this frame a record (HELLO, EXIT, an ACCESS that asks for no answer)?
 * The only frames the record log may hold; by the socket, the ones the log
 * may have predecessors of. */
static bool frame_is_record(const struct sandtrace_frame *f, const uint8_t *payload)
{
	struct sandtrace_access a;
	if (f->type == SANDTRACE_MSG_HELLO || f->type == SANDTRACE_MSG_EXIT)
		return true;
	return f->type == SANDTRACE_MSG_ACCESS && f->len >= sizeof(a) &&
	       (memcpy(&a, payload, sizeof(a)), (a.flags & SANDTRACE_AF_REPLY) == 0);
}

/* Drain the record log now if it may hold an entry not delivered yet: its
 * global sequence moved since the last drain, or that drain delivered fewer
 * entries than had been handed out before it (some were being written; a
 * writer killed in the middle of one, an entry skipped as malformed, or a
 * stamp taken by a socket record keeps this true, which costs drains, never
 * order).  A record from the socket without a stamp then follows every log
 * entry its sender published before sending it. */
static void drain_log_if_new(struct daemon *d)
{
	if (!d->have_arena)
		return;
	uint64_t seq = atomic_load_explicit(&sandtrace_arena_hdr(&d->arena)->log_seq,
					    memory_order_acquire);
	if (seq != d->log_seq_drained || d->logr.entries < d->log_seq_drained)
		drain_log(d, true);
}

/*
 * Before a record from a socket: the log entries that were there before it
 * was sent.  Its frame's seq is the sender's record stamp
 * (sandtrace_log_stamp): exactly the entries below it are delivered, and
 * those appended after the send stay for later (a parent's reaping of a
 * child logged after the child's last records came by the socket must not
 * be dispatched before them).  A record without a stamp (its sender has no
 * arena) takes everything the log holds first.
 */
static void order_record(struct daemon *d, uint32_t stamp)
{
	if (!d->have_arena)
		return;
	if (stamp == 0) {
		drain_log_if_new(d);
		return;
	}
	long n = sandtrace_log_drain_before(&d->arena, &d->logr, on_log_entry, d, stamp);
	if (n < 0)
		internal_error(d, "draining the record log", (int)n);
	else if (n > 0)
		d->report_dirty = true;
}

/* Dispatch every whole frame in the buffer; returns 0 or a negative errno (client to drop). */
static int client_consume(struct daemon *d, struct client *c, const char **what)
{
	for (;;) {
		size_t avail = c->len - c->off;
		struct sandtrace_frame f;
		if (avail < sizeof(f))
			break;
		memcpy(&f, c->buf + c->off, sizeof(f));
		int rc = sandtrace_proto_check_frame(&f);
		if (rc < 0) {
			*what = "bad frame header";
			return rc;
		}
		if (avail < sizeof(f) + f.len) {
			size_t need = sizeof(f) + f.len;
			if (c->off > 0) {
				memmove(c->buf, c->buf + c->off, avail);
				c->len = avail;
				c->off = 0;
			}
			if (need > c->cap) {
				uint8_t *nb = realloc(c->buf, need);
				if (nb == NULL) {
					*what = "buffer";
					return -ENOMEM;
				}
				c->buf = nb;
				c->cap = need;
			}
			return 0;
		}
		d->sum.daemon_messages++;
		/* a record (not a request) may come by the socket while earlier
		 * ones of the same process sit in the record log (its log filled,
		 * or the image before its exec wrote there): the log entries
		 * below its stamp come first (order_record), or an exec'd image's
		 * HELLO and EXIT would be dispatched before its predecessor's and
		 * the records pinned on the wrong program */
		bool record = frame_is_record(&f, c->buf + c->off + sizeof(f));
		if (record)
			order_record(d, f.seq);
		d->cur_stamp = record ? f.seq : 0;
		rc = dispatch[f.type](d, c, &f, c->buf + c->off + sizeof(f));
		if (rc < 0) {
			*what = sandtrace_proto_msg_name(f.type);
			return rc;
		}
		c->off += sizeof(f) + f.len;
	}
	/* Compact: keep the partial frame at the start. */
	if (c->off > 0) {
		memmove(c->buf, c->buf + c->off, c->len - c->off);
		c->len -= c->off;
		c->off = 0;
	}
	return 0;
}

/* Is pid a process that still runs (not gone, not a zombie, not dying)? */
static bool pid_running(int32_t pid)
{
	char path[64], buf[512];
	if (pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* the name may hold anything */
	return p != NULL && p[1] == ' ' && p[2] != '\0' && strchr("ZXx", p[2]) == NULL;
}

/*
 * A request's answer could not be sent: the asker closed its connection
 * before it came.  A process that died while it waited lost nothing (the
 * access it asked about was never made).  One that still runs stopped
 * waiting: its reply timeout (shim/client.c) passed, or its connection broke,
 * and the shim took the daemon for lost for good, deciding the rest without
 * it and dropping its records; nor will its EXIT come.  With the arena the
 * shim counts that in the header; without it (--no-cache, or a process that
 * could not map it) only this tells: the report is incomplete.  The
 * connection's end is what the process's own close made (a process whose
 * files were closed by its exit is no longer running when the daemon reads
 * the error, the kernel closes them after it stopped running code).
 */
static void client_gave_up(struct daemon *d, struct client *c)
{
	const struct image *im = image_of(d, c->pid);
	if (d->have_arena && (im == NULL || !im->no_cache))
		return;
	if (!pid_running(c->pid))
		return;
	st__log("pid %d stopped waiting for an answer: the rest of its trace is lost", c->pid);
	d->gave_up++;
}

/*
 * Read from c and dispatch.  max_reads bounds the read(2) calls (0 = until
 * EAGAIN or EOF).  Returns false when the client was closed.
 */
static bool client_read(struct daemon *d, struct client *c, unsigned max_reads)
{
	for (unsigned i = 0; max_reads == 0 || i < max_reads; i++) {
		if (c->cap - c->len < READ_CHUNK / 4) {
			size_t ncap = c->len + READ_CHUNK;
			uint8_t *nb = realloc(c->buf, ncap);
			if (nb == NULL) {
				internal_error(d, "client buffer", -ENOMEM);
				client_close(d, c, "out of memory");
				return false;
			}
			c->buf = nb;
			c->cap = ncap;
		}
		ssize_t n = read(c->fd, c->buf + c->len, c->cap - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (n < 0) {
			int e = errno;
			client_close(d, c, strerror(e));
			return false;
		}
		if (n == 0) {
			if (c->len != c->off)
				st__log(
				    "client fd %d pid %d: %zu bytes of an unfinished frame at EOF",
				    c->fd, c->pid, c->len - c->off);
			client_close(d, c, NULL);
			return false;
		}
		bool drained = (size_t)n < c->cap - c->len; /* a short read: nothing more queued */
		c->len += (size_t)n;
		const char *what = "";
		int rc = client_consume(d, c, &what);
		if (rc == -EPIPE || rc == -ECONNRESET) {
			/* The client went away while we answered it: not its fault;
			 * lost, when the process goes on without us */
			client_gave_up(d, c);
			client_close(d, c, "gone before its reply");
			return false;
		}
		if (rc < 0) {
			client_drop(d, c, what, rc);
			return false;
		}
		/* on a wakeup, a short read ends the round: epoll (level-triggered)
		 * reports the socket again if more came, so the read that would
		 * only say EAGAIN is not made (one system call less per request
		 * in the asker's wait); at shutdown (max_reads 0) read until
		 * EAGAIN or EOF */
		if (drained && max_reads != 0)
			break;
	}
	return true;
}

/* Read every connected client until its socket holds nothing more. */
static void read_clients_dry(struct daemon *d)
{
	struct client *c, *tmp;
	HASH_ITER(hh, d->clients, c, tmp)
	client_read(d, c, 0);
}

/* Accept every pending connection; returns how many. */
static unsigned accept_all(struct daemon *d)
{
	unsigned n = 0;
	for (;;) {
		int fd = accept4(d->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			/* Out of descriptors (the hard RLIMIT_NOFILE: the soft one
			 * was raised at the start): the connection stays in the
			 * backlog, and the listening socket, readable, woke the loop
			 * at once again: 900 000 log lines in two seconds and a
			 * spinning daemon.  It waits out of the epoll set until a
			 * client closes (client_close puts it back). */
			if ((errno == EMFILE || errno == ENFILE) && !d->accept_paused) {
				st__log("accept: %s: new clients wait until a client closes",
					strerror(errno));
				struct epoll_event ev = {.events = 0, .data.ptr = &d->lfd};
				if (epoll_ctl(d->epfd, EPOLL_CTL_MOD, d->lfd, &ev) == 0)
					d->accept_paused = true;
			} else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EMFILE &&
				   errno != ENFILE)
				st__log("accept: %s", strerror(errno));
			return n;
		}
		struct ucred cr = {0, (uid_t)-1, (gid_t)-1};
		socklen_t crlen = sizeof(cr);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0)
			st__log("SO_PEERCRED: %s", strerror(errno));
		/*
		 * Who may talk to this daemon: a run started by root may have
		 * children that drop privileges (setpriv, su): any uid.  A run of
		 * an ordinary user has no way to change uid (set-id programs are
		 * untraced): only that user; another local user's garbage must not
		 * mark this run incomplete.
		 */
		if (geteuid() != 0 && crlen == sizeof(cr) && cr.uid != geteuid()) {
			st__log("refusing a client of uid %u (pid %d): not this run's user",
				(unsigned)cr.uid, (int)cr.pid);
			close(fd);
			continue;
		}
		struct client *c = calloc(1, sizeof(*c));
		struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP};
		ev.data.ptr = c;
		if (c == NULL || epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			internal_error(d, "accepting a client", c ? -errno : -ENOMEM);
			d->sum.dropped_clients++;
			free(c);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->peer_pid = cr.pid;
		c->pid = cr.pid;
		c->uid = cr.uid == (uid_t)-1 ? -1 : (int64_t)cr.uid;
		HASH_ADD_INT(d->clients, fd, c);
		d->sum.clients++;
		n++;
		st__log("client fd %d: pid %d uid %lld", fd, (int)cr.pid, (long long)c->uid);
	}
}

/* How often the record log in the arena is drained while the run goes on,
 * and how many entries the event loop dispatches between two looks at its
 * sockets.  Nothing waits on the timed drain (entries stay in the arena until
 * the run ends; a record from the socket drains what precedes it first; an
 * asker is answered between slices): it only keeps the report current.  Each
 * wake-up costs the build a context switch on a busy machine: at 20 ms the
 * daemon took 37-39 ms of CPU over a zlib build, at 100 ms 20-22 ms
 * (docs/BENCHMARKS.md, stop 21). */
#define LOG_INTERVAL_MS 100
#define LOG_SLICE 32

/*
 * Has a request that waits for its answer been sent since the last look?
 * The shim counts each one in the arena (SANDTRACE_CTR_ASKS) once it is in
 * this daemon's socket, so that a slice of the log drain stops after the
 * entry in hand, not after LOG_SLICE of them: an asker waits for one
 * record's work at most, not for a slice's.  Each count seen once.
 */
static bool asker_waits(struct daemon *d)
{
	uint64_t n = atomic_load_explicit(
	    &sandtrace_arena_hdr(&d->arena)->counters[SANDTRACE_CTR_ASKS], memory_order_relaxed);
	if (n == d->asks_seen)
		return false;
	d->asks_seen = n;
	return true;
}

/* One entry of the arena's record log: dispatched like the socket message it
 * stands for, from a client that is only the writer's pid and uid (frame.seq
 * carries the uid in the log).  Only records are valid there. */
static int on_log_entry(void *ctx, const struct sandtrace_log_entry *e, const uint8_t *payload)
{
	struct daemon *d = ctx;
	if (!frame_is_record(&e->frame, payload)) {
		d->logr.bad++;
		return 0;
	}
	struct client pc = {.fd = -1, .peer_pid = e->pid, .uid = (int64_t)e->frame.seq,
			    .pid = e->pid, .hello = true};
	d->cur_stamp = sandtrace_log_entry_stamp(e->seq);
	if (dispatch[e->frame.type](d, &pc, &e->frame, payload) < 0)
		d->logr.bad++;
	return d->yield_to_asks && asker_waits(d);
}

static void on_signal(struct daemon *d);

/* One epoll event: the listening socket, the signal fd or a client. */
static void on_event(struct daemon *d, void *p)
{
	if (p == &d->lfd)
		accept_all(d);
	else if (p == &d->sigfd)
		on_signal(d);
	else
		client_read(d, p, READS_PER_WAKEUP);
}

/* Take what the sockets hold now, without waiting (one epoll_wait). */
static void pump_sockets(struct daemon *d)
{
	struct epoll_event evs[128];
	int n = epoll_wait(d->epfd, evs, 128, 0);
	for (int i = 0; i < n; i++)
		on_event(d, evs[i].data.ptr);
}

/*
 * Drain the record log: force, everything now (at the end, and before a
 * record from the socket without a stamp); otherwise every LOG_INTERVAL_MS,
 * LOG_SLICE entries at a time, the event loop answering its askers between
 * slices (a drain of 20 ms of a build's records in one go kept an ask
 * waiting for milliseconds).
 */
static void drain_log(struct daemon *d, bool force)
{
	if (!d->have_arena)
		return;
	long n;
	if (force || !sandtrace_log_pending(&d->logr)) {
		int64_t now = now_ns();
		if (!force && now - d->last_log_ns < (int64_t)LOG_INTERVAL_MS * 1000000)
			return;
		d->last_log_ns = now;
		/* the sequence before the collection: entries appended during it
		 * move it again, and the next drain_log_if_new takes them */
		d->log_seq_drained = atomic_load_explicit(&sandtrace_arena_hdr(&d->arena)->log_seq,
							  memory_order_acquire);
	}
	if (force) {
		n = sandtrace_log_drain(&d->arena, &d->logr, on_log_entry, d);
	} else {
		/* what the sockets hold now was sent before the entries just
		 * collected were appended, or concurrently: dispatched first
		 * (each record takes the entries below its stamp) */
		n = sandtrace_log_collect(&d->arena, &d->logr);
		if (n >= 0) {
			pump_sockets(d);
			/* what is left of the collection (no second scan of the
			 * chunks when it was empty or the records took it all) */
			if (sandtrace_log_pending(&d->logr)) {
				/* a slice, cut short for an asker (asker_waits):
				 * the event loop answers it before the next */
				d->yield_to_asks = true;
				n = sandtrace_log_drain_some(&d->arena, &d->logr, on_log_entry, d,
							     LOG_SLICE);
				d->yield_to_asks = false;
			}
		}
	}
	if (n < 0)
		internal_error(d, "draining the record log", (int)n);
	else if (n > 0)
		d->report_dirty = true;
}

static void maybe_flush(struct daemon *d, bool force)
{
	if (!d->report_dirty)
		return;
	int64_t now = now_ns();
	if (!force && now - d->last_flush_ns < FLUSH_INTERVAL_NS)
		return;
	if (st__report_flush(&d->report) < 0)
		report_failed(d);
	d->last_flush_ns = now;
	d->report_dirty = false;
}

static void check_parent(struct daemon *d);

static void on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;
	while (read(d->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			st__log("signal %u from pid %u: reloading the policy", si.ssi_signo,
				si.ssi_pid);
			d->reload_pending = true;
			continue;
		}
		st__log("signal %u from pid %u: shutting down", si.ssi_signo, si.ssi_pid);
		d->stopping = true;
	}
	/* PR_SET_PDEATHSIG's SIGTERM (the CLI was killed) looks like any other:
	 * the parent is already the reaper when it comes */
	if (d->stopping)
		check_parent(d);
}

static void reload_policy(struct daemon *d);

/* Has `sandtrace run` (our parent) gone?  PR_SET_PDEATHSIG tells of its
 * death; this is the fallback, made when idle and on every 64th busy wakeup
 * (not on every request: a system call in every asker's wait). */
static void check_parent(struct daemon *d)
{
	if (d->parent_pid > 0 && getppid() != (pid_t)d->parent_pid) {
		st__log("parent %ld is gone: shutting down", d->parent_pid);
		d->stopping = true;
		d->parent_lost = true;
	}
}

/* The event loop; returns when a signal asked to stop. */
static void serve(struct daemon *d)
{
	struct epoll_event evs[128];
	while (!d->stopping) {
		/* at the top: a SIGHUP may be read in any branch below, or by
		 * drain_log's look at the sockets (pump_sockets) */
		if (d->reload_pending) {
			d->reload_pending = false;
			reload_policy(d);
		}
		bool busy = d->report_dirty || sandtrace_log_pending(&d->logr);
		int timeout = busy ? 0 : d->have_arena ? LOG_INTERVAL_MS : -1;
		int n = epoll_wait(d->epfd, evs, 128, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			internal_error(d, "epoll_wait", -errno);
			return;
		}
		if (n == 0) {
			drain_log(d, false);
			if (!sandtrace_log_pending(&d->logr)) { /* idle */
				maybe_flush(d, true);
				check_parent(d);
			}
			continue;
		}
		for (int i = 0; i < n; i++)
			on_event(d, evs[i].data.ptr);
		drain_log(d, false);
		maybe_flush(d, false);
		if ((++d->wakeups & 63) == 0)
			check_parent(d);
	}
}

/* Shutdown: take what is pending, read every client dry, then write the end of the report. */
static void drain(struct daemon *d)
{
	for (int round = 0; round < 16; round++) {
		unsigned accepted = accept_all(d);
		read_clients_dry(d);
		if (accepted == 0 && round > 0)
			break;
	}
	drain_log(d, true);
	if (d->logr.bad)
		st__log("record log: %llu malformed entries skipped",
			(unsigned long long)d->logr.bad);
}

/* Pids with an image that said HELLO: a placeholder image of the same pid
 * (records that arrived before or after the process's HELLO, from the log
 * of another writer) is not a process of its own. */
struct hello_pid {
	int32_t pid;
	UT_hash_handle hh;
};

/*
 * The start time of process pid (clock ticks since boot, /proc/PID/stat's
 * 22nd field), or 0 when it is gone, a zombie, or unreadable.
 */
static unsigned long long proc_start(long pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "PID (COMM) STATE ...": COMM may hold spaces and parentheses */
	const char *f = strrchr(buf, ')');
	if (f == NULL || f[1] != ' ' || f[2] == 'Z' || f[2] == 'X' || f[2] == 'x')
		return 0;
	/* f + 2 is field 3 (state); field 22 is 19 fields further */
	f += 2;
	for (int i = 0; i < 19 && f != NULL; i++)
		if ((f = strchr(f, ' ')) != NULL)
			f++;
	return f != NULL ? strtoull(f, NULL, 10) : 0;
}

/*
 * Is the process of image im still running (not a zombie), and started no
 * earlier than the daemon (since: its start time; a pid reused by an older
 * process is not counted)?  For the end of a run: a traced process that
 * outlives it (a daemonized grandchild) goes on unrecorded.
 */
static bool image_still_running(const struct image *im, unsigned long long since)
{
	unsigned long long t = proc_start(im->pid);
	return t != 0 && t >= since;
}

/* Does /proc/PID/maps of pid name the arena (needle: its file's name)? */
static bool maps_arena(long pid, const char *needle)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return false;
	char line[PATH_MAX + 128];
	bool found = false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

/*
 * Traced processes that outlive the trace (a daemonized grandchild, a
 * background job the command did not wait for): what they do from there on
 * is not recorded, so the trace is not complete.  Found by their images
 * (no exit yet, still running) and, for those whose first record has not
 * come yet (a fork child whose parent ended at once), by the arena in their
 * memory map (/proc/PID/maps; processes of other users cannot be read).
 */
static void note_survivors(struct daemon *d)
{
	struct hello_pid *seen = NULL, *hp, *tmp;
	unsigned long running = 0;
	char pids[160] = "";
	pid_t self = getpid();
	unsigned long long since = proc_start(self);
	const char *needle = NULL;
	if (d->have_arena) {
		/* "/sandtrace-..." is /dev/shm/sandtrace-...; a path is itself */
		needle =
		    sandtrace_arena_name_is_path(d->arena_name) ? d->arena_name : d->arena_name + 1;
	}
	DIR *proc = needle != NULL ? opendir("/proc") : NULL;
	struct dirent *e = NULL;
	struct proc *p = d->procs;
	for (;;) {
		long pid;
		if (p != NULL) {
			struct image *im = &d->images[p->image];
			pid = im->pid;
			p = p->hh.next;
			if (im->exited || !image_still_running(im, since))
				continue;
		} else if (proc != NULL && (e = readdir(proc)) != NULL) {
			char *end;
			pid = strtol(e->d_name, &end, 10);
			if (*end != '\0' || pid <= 0)
				continue;
			struct image *im = image_of(d, (int32_t)pid);
			/* a process that started before this daemon cannot have
			 * mapped its arena: its start time (one short read) spares
			 * reading the memory map of nearly every process on the
			 * machine (/proc/PID/maps: ≈ 0.2 ms each here) */
			if ((im != NULL && im->exited) || proc_start(pid) < since ||
			    !maps_arena(pid, needle))
				continue;
		} else {
			break;
		}
		int32_t key = (int32_t)pid;
		HASH_FIND_INT(seen, &key, hp);
		if (pid == self || hp != NULL || (hp = calloc(1, sizeof(*hp))) == NULL)
			continue;
		hp->pid = key;
		HASH_ADD_INT(seen, pid, hp);
		if (running++ < 8) {
			size_t l = strlen(pids);
			snprintf(pids + l, sizeof(pids) - l, "%s%ld", l ? ", " : "", pid);
		}
	}
	if (proc != NULL)
		closedir(proc);
	HASH_ITER(hh, seen, hp, tmp)
	{
		HASH_DEL(seen, hp);
		free(hp);
	}
	if (running)
		st__summary_reason(&d->sum,
				   "%lu traced process(es) still running when the trace ended (pid "
				   "%s%s): what they do from there on is not recorded",
				   running, pids, running > 8 ? ", ..." : "");
}

static void finish_report(struct daemon *d)
{
	struct hello_pid *said = NULL, *hp, *tmp;
	for (size_t i = 0; i < d->nimages; i++) {
		if (!d->images[i].hello)
			continue;
		int32_t pid = d->images[i].pid;
		HASH_FIND_INT(said, &pid, hp);
		if (hp == NULL && (hp = calloc(1, sizeof(*hp))) != NULL) {
			hp->pid = pid;
			HASH_ADD_INT(said, pid, hp);
		}
	}
	/* the exec records held back (struct xrec), in the order they came */
	struct xrec *x, *xtmp;
	HASH_ITER(hh, d->execs, x, xtmp)
	{
		if (x->failed >= x->runs) { /* not one of them ran */
			x->r.err = x->fail_err;
			x->r.untraced = 0;
		}
		if (!x->written && st__report_emit(&d->report, st__rec_access(&x->r)) < 0)
			report_failed(d);
		HASH_DEL(d->execs, x);
		free(x);
	}
	uint64_t lost = 0; /* records and requests traced processes could not deliver */
	uint64_t uring = 0; /* images that set up an io_uring it let through */
	char uring_pids[128] = "";
	for (size_t i = 0; i < d->nimages; i++) {
		struct image *im = &d->images[i];
		if (im->gone)
			continue;
		if (!d->have_arena || im->no_cache)
			lost += im->lost;
		if (im->io_uring && uring++ < 8) {
			size_t l = strlen(uring_pids);
			snprintf(uring_pids + l, sizeof(uring_pids) - l, "%s%d", l ? ", " : "",
				 im->pid);
		}
		if (!im->hello && im->exe_len == 0 && im->traced) {
			HASH_FIND_INT(said, &im->pid, hp);
			if (hp != NULL)
				continue;
		}
		struct st__process_rec r = {
		    .pid = im->pid,
		    .ppid = im->ppid,
		    .uid = im->uid,
		    .exe = im->exe,
		    .exe_len = im->exe_len,
		    .argv = im->argv,
		    .argv_len = im->argv_len,
		    .exited = im->exited,
		    .exit = im->exit_status,
		    .traced = im->traced,
		    .why = im->why,
		    .argv_truncated = im->argv_trunc,
		    .no_cache = im->no_cache,
		    .execed = im->execed,
		    .io_uring = im->io_uring,
		};
		st__report_emit(&d->report, st__rec_process(&r));
		d->sum.processes++;
		if (im->have_counters) {
			d->sum.calls += im->calls;
			d->sum.hits += im->hits;
			d->sum.messages += im->messages;
		}
	}
	HASH_ITER(hh, said, hp, tmp)
	{
		HASH_DEL(said, hp);
		free(hp);
	}
	if (d->want_registry && registry_ready(d)) {
		int rc = st__audit_emit(&d->audit_log, &d->reg, d->have_deps, d->cwd,
					getenv("TMPDIR"), &d->report);
		if (rc < 0)
			internal_error(d, "writing the audit", rc);
	}
	note_survivors(d);
	/* every command that ran reports at least one process (its hello, the
	 * launcher's record of its exec, an untraced image): none is a command
	 * whose processes reported elsewhere, a nested run's under an outer one
	 * whose sandbox can refuse (which keeps them in its own trace) */
	if (d->sum.processes == 0)
		st__summary_reason(&d->sum, "no process of the command reported to this run: it did "
				   "not start, or an enclosing sandtrace run whose sandbox can refuse "
				   "traced it (its processes are in that run's report)");
	if (d->parent_lost)
		st__summary_reason(&d->sum, "sandtrace run was killed before the command ended: "
				   "what its processes did afterwards was not traced");
	if (d->have_arena)
		lost += atomic_load(&sandtrace_arena_hdr(&d->arena)->lost);
	if (lost)
		st__summary_reason(&d->sum, ST_LOST_REASON, (unsigned long long)lost);
	if (d->gave_up)
		st__summary_reason(&d->sum,
				   "%llu traced process(es) stopped waiting for the daemon's answer "
				   "(the reply timeout passed, or the connection broke) and went on "
				   "without it: what they did afterwards is missing from the report, "
				   "and what they asked was decided without the daemon",
				   (unsigned long long)d->gave_up);
	d->sum.io_uring = uring;
	if (uring)
		st__summary_reason(&d->sum,
				   "%llu traced process(es) set up an io_uring (pid %s%s): what they "
				   "opened, read, wrote, renamed or removed through its rings is not "
				   "in the report (a policy that can refuse, such as --fence, refuses "
				   "the setup)",
				   (unsigned long long)uring, uring_pids, uring > 8 ? ", ..." : "");
	if (d->sum.untraced)
		st__summary_reason(&d->sum, "%llu untraced program(s) executed",
				   (unsigned long long)d->sum.untraced);
	if (d->sum.dropped_clients)
		st__summary_reason(&d->sum, "%llu client(s) dropped for protocol errors",
				   (unsigned long long)d->sum.dropped_clients);
	if (d->internal_errors || d->report.error)
		st__summary_reason(&d->sum, "%llu daemon-side error(s)%s%s",
				   (unsigned long long)d->internal_errors,
				   d->report.error ? ", report write: " : "",
				   d->report.error ? strerror(-d->report.error) : "");
	st__mf_finish(d->mf); /* --manifest/--verify: digests, the manifest file, its record */
	if (d->have_arena) {
		/* what the cache did: `sandtrace report` prints it */
		struct sandtrace_arena_header *h = sandtrace_arena_hdr(&d->arena);
		struct sandtrace_ctrie_stats cs = {0};
		sandtrace_ctrie_stats(&d->arena, &cs);
		json_t *o = json_pack(
		    "{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "type",
		    "arena", "size", (json_int_t)h->size, "page_bytes", (json_int_t)d->arena.page,
		    "bytes_used", (json_int_t)sandtrace_arena_used(&d->arena),
		    "inserts", (json_int_t)atomic_load(&h->counters[SANDTRACE_CTR_INSERTS]),
		    "cas_retries", (json_int_t)atomic_load(&h->counters[SANDTRACE_CTR_CAS_RETRIES]),
		    "full", (json_int_t)atomic_load(&h->counters[SANDTRACE_CTR_FULL]), "attaches",
		    (json_int_t)atomic_load(&h->counters[SANDTRACE_CTR_ATTACHES]), "snodes",
		    (json_int_t)cs.snodes, "max_depth", (json_int_t)cs.max_depth, "cache_slots",
		    (json_int_t)cs.cache_slots, "log_chunks",
		    (json_int_t)(atomic_load(&h->log_nchunks) + atomic_load(&h->log_nsmall)),
		    "log_entries",
		    (json_int_t)d->logr.entries, "fs_generation", (json_int_t)atomic_load(&h->fs_gen),
		    "asks", (json_int_t)atomic_load(&h->counters[SANDTRACE_CTR_ASKS]));
		st__report_emit(&d->report, o);
		if (atomic_load(&h->counters[SANDTRACE_CTR_FULL]))
			st__summary_note(&d->sum, "the arena filled up: caching stopped (%llu "
				"allocations refused); nothing was lost",
				(unsigned long long)atomic_load(&h->counters[SANDTRACE_CTR_FULL]));
	}
	st__report_emit(&d->report, st__mf_summary(d->mf, st__rec_summary(&d->sum)));
	int rc = st__report_close(&d->report);
	if (rc < 0)
		st__log("error: the report %s is cut short: %s", d->report_path, strerror(-rc));
}

/*
 * The CLI was killed (SIGKILL) and cannot remove its private directory:
 * empty it (it holds only the socket, the log and a temporary report) and
 * remove it.  Subdirectories are left alone: the CLI never makes any.
 */
static void remove_private_dir(const char *dir)
{
	DIR *dp = opendir(dir);
	if (dp == NULL)
		return;
	struct dirent *e;
	while ((e = readdir(dp)) != NULL) {
		if (e->d_type != DT_DIR)
			unlinkat(dirfd(dp), e->d_name, 0);
	}
	closedir(dp);
	rmdir(dir);
}

/* ---- startup ---- */

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: sandtraced --socket PATH --report FILE [--policy FILE] [--fence] [--no-cache]\n"
	    "                  [--record-all] [--fail-open] [--arena-size BYTES] [--arena-dir DIR]\n"
	    "                  [--parent-pid PID]\n"
	    "                  [--ready-fd N] [--log FILE] [--private-dir DIR]\n"
	    "                  [--audit] [--deps PKG,PKG] [--deps-from DIR] [--no-implicit-deps]\n"
	    "                  [--dpkg-root DIR] [--owners FILE] [--manifest FILE] [--verify FILE]\n"
	    "                  [--hash-cache FILE|none] [--hash-threads N] [--argv-file FILE]\n"
	    "                  [-- CMD ARG...]\n"
	    "The operands after -- are the traced command, written to the report's run record\n"
	    "(--argv-file: read from FILE, each argument ended by a NUL; FILE is removed).\n"
	    "--private-dir: the CLI's directory, emptied and removed if the parent dies first.\n");
}

/* What a refused start must remove (set as it is created). */
static const char *created_arena, *created_socket;

static void fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void fatal(const char *fmt, ...)
{
	char msg[ST_POLICY_ERR_MAX + 64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Startup errors go to stderr as well as to the log: the run cannot begin. */
	fprintf(stderr, "sandtraced: %s\n", msg);
	if (!st__log_is_stderr()) /* before the log is open, the line above was all */
		st__log("fatal: %s", msg);
	if (created_arena != NULL)
		sandtrace_arena_unlink(created_arena);
	if (created_socket != NULL)
		unlink(created_socket);
	exit(EXIT_STARTUP);
}

/* fatal() for callers that take a function pointer. */
static void fatal_v(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void fatal_v(const char *fmt, ...)
{
	char msg[ST_POLICY_ERR_MAX + 64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fatal("%s", msg);
}

/*
 * --argv-file FILE: the traced command's arguments, each ended by a NUL (the
 * CLI's way: on the daemon's own command line a command near the system's
 * argument limit made its exec fail with E2BIG, and the run with it).  The
 * file is removed once read.  Returns a NULL-terminated array (leaked: the
 * daemon keeps it for its life), or NULL with errno set.
 */
static char **read_argv_file(const char *file)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (buf == NULL) {
			close(fd);
			errno = ENOMEM;
			return NULL;
		}
		if (n == cap) {
			char *nb = realloc(buf, cap * 2);
			if (nb == NULL)
				free(buf);
			buf = nb;
			cap *= 2;
			continue;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			close(fd);
			errno = e;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	unlink(file);
	size_t count = 0;
	for (size_t i = 0; i < n; i++)
		count += buf[i] == '\0';
	if (n > 0 && buf[n - 1] != '\0') {
		free(buf);
		errno = EINVAL;
		return NULL;
	}
	char **v = calloc(count + 1, sizeof(*v));
	if (v == NULL) {
		free(buf);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0, k = 0; i < n; i += strlen(buf + i) + 1)
		v[k++] = buf + i;
	return v;
}

static void parse_options(struct daemon *d, int argc, char **argv)
{
	enum {
		O_SOCKET = 256,
		O_REPORT,
		O_POLICY,
		O_FENCE,
		O_NO_CACHE,
		O_RECORD_ALL,
		O_FAIL_OPEN,
		O_ARENA_SIZE,
		O_ARENA_DIR,
		O_PARENT_PID,
		O_READY_FD,
		O_LOG,
		O_PRIVATE_DIR,
		O_ALLOW_EXEC,
		O_ARGV_FILE,
		O_AUDIT,
		O_DEPS,
		O_DEPS_FROM,
		O_NO_IMPLICIT,
		O_DPKG_ROOT,
		O_OWNERS,
		O_HELP
	};
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, O_SOCKET},
	    {"report", required_argument, NULL, O_REPORT},
	    {"policy", required_argument, NULL, O_POLICY},
	    {"fence", no_argument, NULL, O_FENCE},
	    {"no-cache", no_argument, NULL, O_NO_CACHE},
	    {"record-all", no_argument, NULL, O_RECORD_ALL},
	    {"fail-open", no_argument, NULL, O_FAIL_OPEN},
	    {"arena-size", required_argument, NULL, O_ARENA_SIZE},
	    {"arena-dir", required_argument, NULL, O_ARENA_DIR},
	    {"parent-pid", required_argument, NULL, O_PARENT_PID},
	    {"ready-fd", required_argument, NULL, O_READY_FD},
	    {"log", required_argument, NULL, O_LOG},
	    {"private-dir", required_argument, NULL, O_PRIVATE_DIR},
	    {"allow-exec", required_argument, NULL, O_ALLOW_EXEC},
	    {"argv-file", required_argument, NULL, O_ARGV_FILE},
	    {"audit", no_argument, NULL, O_AUDIT},
	    {"deps", required_argument, NULL, O_DEPS},
	    {"deps-from", required_argument, NULL, O_DEPS_FROM},
	    {"no-implicit-deps", no_argument, NULL, O_NO_IMPLICIT},
	    {"dpkg-root", required_argument, NULL, O_DPKG_ROOT},
	    {"owners", required_argument, NULL, O_OWNERS},
	    ST__MF_LONGOPTS,
	    {"help", no_argument, NULL, O_HELP},
	    {NULL, 0, NULL, 0},
	};
	const char *errstr, *argv_file = NULL;
	int o;
	d->ready_fd = -1;
	d->arena_size = SANDTRACE_ARENA_DEFAULT_SIZE;
	while ((o = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (o) {
		case O_SOCKET:
			d->socket_path = optarg;
			break;
		case O_REPORT:
			d->report_path = optarg;
			break;
		case O_POLICY:
			d->policy_path = optarg;
			break;
		case O_FENCE:
			d->fence = true;
			break;
		case O_NO_CACHE:
			d->no_cache = true;
			break;
		case O_RECORD_ALL:
			d->record_all = true;
			break;
		case O_FAIL_OPEN:
			d->fail_open = true;
			break;
		case O_LOG:
			d->log_path = optarg;
			break;
		case O_ALLOW_EXEC:
			d->allow_exec = optarg;
			break;
		case O_ARGV_FILE:
			argv_file = optarg;
			break;
		case O_PRIVATE_DIR:
			d->private_dir = optarg;
			break;
		case O_AUDIT:
			d->audit = true;
			break;
		case O_DEPS:
			d->deps_list = optarg;
			break;
		case O_DEPS_FROM:
			d->deps_from = optarg;
			break;
		case O_NO_IMPLICIT:
			d->no_implicit_deps = true;
			break;
		case O_DPKG_ROOT:
			d->dpkg_root = optarg;
			break;
		case O_OWNERS:
			d->owners_path = optarg;
			break;
		case O_ARENA_SIZE:
			if (st__parse_size(optarg, &d->arena_size) < 0 ||
			    d->arena_size < (64u << 10))
				fatal("--arena-size %s: need a size of at least 64K", optarg);
			break;
		case O_ARENA_DIR:
			d->arena_dir = optarg;
			break;
		case O_PARENT_PID:
			d->parent_pid = strtonum(optarg, 1, INT_MAX, &errstr);
			if (errstr)
				fatal("--parent-pid %s: %s", optarg, errstr);
			break;
		case O_READY_FD:
			d->ready_fd = (int)strtonum(optarg, 0, INT_MAX, &errstr);
			if (errstr)
				fatal("--ready-fd %s: %s", optarg, errstr);
			break;
		case O_HELP:
			usage(stdout);
			exit(0);
		default:
			switch (st__mf_option(&d->mfo, o, optarg)) {
			case 1:
				continue;
			case 0: /* not an option of ours: usage; a bad value was said */
				usage(stderr);
			}
			exit(EXIT_STARTUP);
		}
	}
	if (d->socket_path == NULL || d->report_path == NULL) {
		usage(stderr);
		exit(EXIT_STARTUP);
	}
	d->run_argv = argv + optind;
	if (argv_file != NULL && (d->run_argv = read_argv_file(argv_file)) == NULL)
		fatal("--argv-file %s: %s", argv_file, strerror(errno));
}

/* Parse the policy (the file, or the run's default rules) with the command's
 * own rule first.  Returns 0, or -1 with the message in err. */
static int load_policy(struct daemon *d, struct st__policy *pol, char *err, size_t errlen)
{
	if (st__policy_load(pol, d->policy_path, d->fence, d->start_cwd, getenv("TMPDIR"), err,
			    errlen) < 0)
		return -1;
	if (d->allow_exec != NULL && d->allow_exec[0] == '/' && pol->nrules + 1 > 0) {
		/* the command the user typed runs even under a fence: its rule
		 * goes first (first match wins) */
		size_t before = pol->nrules;
		if (st__policy_add(pol, SANDTRACE_ALLOW, SANDTRACE_CLASS_READ | SANDTRACE_CLASS_EXEC,
				   d->allow_exec, "command") < 0) {
			snprintf(err, errlen, "--allow-exec %s: not an absolute path", d->allow_exec);
			st__policy_free(pol);
			return -1;
		}
		size_t added = pol->nrules - before;
		struct st__rule tmp[2];
		memcpy(tmp, pol->rules + before, added * sizeof(tmp[0]));
		memmove(pol->rules + added, pol->rules, before * sizeof(tmp[0]));
		memcpy(pol->rules, tmp, added * sizeof(tmp[0]));
	}
	return 0;
}

/* Compile pol where the shims (arena) or this daemon (--no-cache) read it and
 * make it the current one.  Returns 0, or -1 with the message in err (the
 * current policy stays). */
static int publish_policy(struct daemon *d, struct st__policy *pol, char *err, size_t errlen)
{
	size_t size = st__policy_table_size(pol);
	if (d->have_arena) {
		/* the run's first policy in the header's page when it fits (arena.h:
		 * SANDTRACE_ARENA_POLICY0_AT; nobody has read the place before);
		 * a reload's, which processes may read beside the old one, from the bump */
		struct sandtrace_arena_header *h = sandtrace_arena_hdr(&d->arena);
		uint64_t off = atomic_load_explicit(&h->policy, memory_order_relaxed) == 0 &&
				       h->libsets == SANDTRACE_ARENA_LIBSETS_AT &&
				       size <= SANDTRACE_ARENA_POLICY0_MAX
				   ? SANDTRACE_ARENA_POLICY0_AT
				   : sandtrace_arena_alloc(&d->arena, size);
		void *dst = off ? sandtrace_arena_ptr(&d->arena, off, size) : NULL;
		if (dst == NULL || st__policy_compile(pol, dst, off, size) < 0) {
			snprintf(err, errlen,
				 "the arena cannot hold the policy (%zu bytes): use a larger "
				 "--arena-size",
				 size);
			return -1;
		}
		d->ptab_base = d->arena.base;
		d->ptab = dst;
		/* Release: a process that acquires hdr->policy sees the whole table. */
		atomic_store_explicit(&sandtrace_arena_hdr(&d->arena)->policy, off,
				      memory_order_release);
	} else {
		void *buf = calloc(1, size);
		if (buf == NULL || st__policy_compile(pol, buf, 0, size) < 0) {
			free(buf);
			snprintf(err, errlen, "out of memory for the policy");
			return -1;
		}
		free(d->ptab_private);
		d->ptab_private = buf;
		d->ptab_base = buf;
		d->ptab = buf;
	}
	st__policy_free(&d->policy);
	d->policy = *pol;
	d->policy_hides = st__policy_hides(&d->policy);
	return 0;
}

static void setup_policy(struct daemon *d)
{
	char err[ST_POLICY_ERR_MAX];
	struct st__policy pol = {0};
	if (load_policy(d, &pol, err, sizeof(err)) < 0 || publish_policy(d, &pol, err, sizeof(err)) < 0)
		fatal("%s", err);
	st__log("policy %s: %zu rule(s), default %s", d->policy.name, d->policy.nrules,
		st__action_name(d->policy.default_action));
}

/*
 * SIGHUP: read the policy file again (a build's next phase may allow what
 * the last one did not).  The new table is compiled into the arena, then the
 * arena's generation is bumped (release): every shim sees it on its next
 * decision, re-reads the table, and its cached verdicts (whose keys carry
 * the generation) miss once; what was recorded stays recorded.  A malformed
 * file is reported (file and line) and the current policy stays.
 */
static void reload_policy(struct daemon *d)
{
	char err[ST_POLICY_ERR_MAX];
	struct st__policy pol = {0};
	if (d->policy_path == NULL) {
		st__log("policy reload: the run has no policy file (--policy): nothing to re-read");
		return;
	}
	struct stat st;
	if (stat(d->policy_path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* a pipe (--policy <(...)) was read once: read again it is empty,
		 * and the reload would drop every rule */
		st__log("error: policy reload: %s is not a regular file: it cannot be read again "
			"(the current policy stays)",
			d->policy_path);
		return;
	}
	if (load_policy(d, &pol, err, sizeof(err)) < 0) {
		st__log("error: policy reload: %s (the current policy stays)", err);
		return;
	}
	if (st__policy_has_ask(&pol) && !d->want_registry) {
		st__log("error: policy reload: %s has ask rules, but the run started without the "
			"package registry (no ask rule, no --audit): restart the daemon (the current "
			"policy stays)",
			d->policy_path);
		st__policy_free(&pol);
		return;
	}
	/* what was recorded before the reload was judged by the current policy:
	 * dispatched under it (record_path's ask and the rule a violation
	 * names read the daemon's table), and before the policy record.  The
	 * log holds up to LOG_INTERVAL_MS of records the timed drain has not
	 * taken: those of a process that then sent the SIGHUP were reported as
	 * violations of the new policy's rules (an allow rule named; reads of
	 * an undeclared package under a plain allow turned into ask violations
	 * when the new policy asked) */
	read_clients_dry(d);
	drain_log(d, true);
	if (publish_policy(d, &pol, err, sizeof(err)) < 0) {
		st__log("error: policy reload: %s (the current policy stays)", err);
		st__policy_free(&pol);
		return;
	}
	uint64_t gen = 0;
	if (d->have_arena)
		gen = atomic_fetch_add_explicit(&sandtrace_arena_hdr(&d->arena)->generation, 1,
						memory_order_release) +
		      1;
	st__log("policy reloaded: %s: %zu rule(s), default %s (generation %llu)", d->policy.name,
		d->policy.nrules, st__action_name(d->policy.default_action), (unsigned long long)gen);
	json_t *rec = json_pack("{s:s, s:I, s:s, s:I, s:s, s:I}", "type", "policy", "seq",
				(json_int_t)++d->seq, "policy", d->policy.name, "rules",
				(json_int_t)d->policy.nrules, "default",
				st__action_name(d->policy.default_action), "generation", (json_int_t)gen);
	if (st__report_emit(&d->report, rec) < 0)
		report_failed(d);
	d->sum.policy_reloads++;
	d->report_dirty = true;
}

/* Is pid gone?  (A pid reused by another process counts as alive: the safe direction.) */
static bool pid_gone(long pid)
{
	return pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* The owner pid in the header of the arena file DIR/NAME (of any layout
 * version), or 0 when it cannot be read or is no arena. */
static long arena_owner(const char *dir, const char *dname)
{
	char path[PATH_MAX];
	strlcpy(path, dir, sizeof(path));
	strlcat(path, "/", sizeof(path));
	if (strlcat(path, dname, sizeof(path)) >= sizeof(path))
		return 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* only the frozen prefix (arena.h): an arena of any layout version,
	 * another sandtrace's, names its owner at the same offset */
	struct sandtrace_arena_header h;
	ssize_t n = pread(fd, &h, SANDTRACE_ARENA_FROZEN_BYTES, 0);
	close(fd);
	if (n != (ssize_t)SANDTRACE_ARENA_FROZEN_BYTES || h.magic != SANDTRACE_ARENA_MAGIC)
		return 0;
	return (long)h.owner_pid;
}

/*
 * Arenas left by daemons that were killed with SIGKILL (nothing could remove
 * them): their names carry the daemon's pid; a name whose pid is gone is
 * removed, unless the process that started that daemon (the header's owner)
 * still runs: its command may still be running, and its processes still
 * attach the arena by name (the run's own CLI removes it at the end).  So
 * also for another sandtrace build's arena (another layout version): its
 * owner is read from the header's frozen prefix.  A reused pid keeps its
 * arena (the safe direction).
 */
static void remove_dead_arenas(const char *where)
{
	DIR *dir = opendir(where ? where : "/dev/shm");
	if (dir == NULL)
		return;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		long pid;
		char rest[128];
		if (sscanf(e->d_name, "sandtrace-%ld-%127s", &pid, rest) != 2 || pid <= 0)
			continue;
		if (!pid_gone(pid))
			continue;
		long owner = arena_owner(where ? where : "/dev/shm", e->d_name);
		if (owner > 0 && !pid_gone(owner))
			continue;
		char name[PATH_MAX]; /* a POSIX shm name, or a path in the arena directory */
		strlcpy(name, where ? where : "", sizeof(name));
		strlcat(name, "/", sizeof(name));
		if (strlcat(name, e->d_name, sizeof(name)) >= sizeof(name))
			continue;
		if (sandtrace_arena_unlink(name) == 0)
			st__log("removed the arena of dead daemon %ld: %s", pid, name);
	}
	closedir(dir);
}

/*
 * --arena-dir: an absolute directory on a tmpfs.  The arena is the cache
 * every traced process maps; on a disk it would be written back, and on
 * hugetlbfs a page the pool cannot give is SIGBUS in a traced process.  The
 * tmpfs chooses the page size: mounted huge=within_size (or always) it
 * serves the arena in 2 MiB pages, and each process then maps the whole
 * window it reads with one entry (docs/INTERNALS.md, "Arena placement").
 */
static void check_arena_dir(const char *dir)
{
	struct statfs sf;
	if (dir[0] != '/')
		fatal("--arena-dir %s: need an absolute path", dir);
	if (statfs(dir, &sf) < 0)
		fatal("--arena-dir %s: %s", dir, strerror(errno));
	if (sf.f_type != 0x01021994) /* TMPFS_MAGIC, <linux/magic.h> */
		fatal("--arena-dir %s: not a tmpfs (the arena must live in memory: mount one, e.g. "
		      "`mount -t tmpfs -o huge=within_size,mode=1777 tmpfs DIR`)",
		      dir);
}

static void setup_socket(struct daemon *d)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlcpy(sa.sun_path, d->socket_path, sizeof(sa.sun_path)) >= sizeof(sa.sun_path))
		fatal("--socket %s: path too long for a unix socket", d->socket_path);
	d->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (d->lfd < 0)
		fatal("socket: %s", strerror(errno));
	int b = bind(d->lfd, (struct sockaddr *)&sa, sizeof(sa));
	if (b < 0 && errno == EADDRINUSE) {
		/* a socket left by a daemon that was killed: nobody answers on it */
		struct stat st;
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		bool stale = probe >= 0 && lstat(d->socket_path, &st) == 0 && S_ISSOCK(st.st_mode) &&
			     connect(probe, (struct sockaddr *)&sa, sizeof(sa)) < 0 &&
			     errno == ECONNREFUSED;
		if (probe >= 0)
			close(probe);
		if (!stale && probe >= 0 && lstat(d->socket_path, &st) == 0 &&
		    !S_ISSOCK(st.st_mode))
			fatal("bind %s: a file that is not a socket is in the way", d->socket_path);
		if (!stale)
			fatal("bind %s: %s (another daemon is serving it?)", d->socket_path,
			      strerror(EADDRINUSE));
		st__log("removing the stale socket %s", d->socket_path);
		unlink(d->socket_path);
		b = bind(d->lfd, (struct sockaddr *)&sa, sizeof(sa));
	}
	if (b < 0)
		fatal("bind %s: %s", d->socket_path, strerror(errno));
	created_socket = d->socket_path; /* ours from here: a refused start removes it */
	/* Traced children may drop privileges (to nobody): anyone may connect. */
	if (chmod(d->socket_path, 0777) < 0)
		fatal("chmod %s: %s", d->socket_path, strerror(errno));
	if (listen(d->lfd, 4096) < 0)
		fatal("listen: %s", strerror(errno));
}

static void epoll_add(struct daemon *d, int fd, void *tag)
{
	struct epoll_event ev = {.events = EPOLLIN};
	ev.data.ptr = tag;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		fatal("epoll_ctl: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	static struct daemon dd;
	struct daemon *d = &dd;
	char cwd[PATH_MAX];

	parse_options(d, argc, argv);
	if (d->log_path != NULL) {
		FILE *lf = fopen(d->log_path, "ae");
		if (lf == NULL)
			fatal("--log %s: %s", d->log_path, strerror(errno));
		setvbuf(lf, NULL, _IOLBF, 0);
		st__log_set(lf);
	}
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		fatal("getcwd: %s", strerror(errno));

	/* One descriptor a client (every traced process of a --no-cache run,
	 * each that asks): at the soft limit accept() failed with EMFILE, and
	 * processes past it waited their reply timeout, then went on untraced
	 * (1100 at once under the usual soft 1024 made the report incomplete).
	 * The soft limit goes up to the hard one; the daemon runs no program,
	 * so no traced process inherits it. */
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &nofile) != 0)
			st__log("raising RLIMIT_NOFILE: %s", strerror(errno));
	}

	/* Signals arrive through a signalfd; the parent's death is one of them. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP); /* reload the policy */
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (d->parent_pid > 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0)
			fatal("prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
		if (getppid() != (pid_t)d->parent_pid)
			fatal("parent %ld is already gone", d->parent_pid);
	}
	d->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->sigfd < 0 || d->epfd < 0)
		fatal("signalfd/epoll: %s", strerror(errno));

	d->run_flags = st__run_flags(d->fence, d->fail_open, d->record_all, d->no_cache);
	d->run_flags |= st__mf_opts_flags(&d->mfo);
	{
		char mferr[600];
		if (st__mf_new(&d->mf, &d->mfo, d->run_flags, &d->report, &d->sum, &d->seq, mferr,
			       sizeof(mferr)) < 0)
			fatal("%s", mferr);
	}
	if (!d->no_cache) {
		if (d->arena_dir != NULL)
			check_arena_dir(d->arena_dir);
		remove_dead_arenas(d->arena_dir);
		int rc = sandtrace_arena_create_in(&d->arena, d->arena_size, d->run_flags,
						   d->arena_dir, d->arena_name);
		if (rc < 0)
			fatal("creating the arena%s%s: %s", d->arena_dir ? " in " : "",
			      d->arena_dir ? d->arena_dir : "", strerror(-rc));
		st__log("arena %s: %llu bytes, served in pages of %llu bytes", d->arena_name,
			(unsigned long long)d->arena_size, (unsigned long long)d->arena.page);
		d->have_arena = true;
		created_arena = d->arena_name;
	}
	snprintf(d->start_cwd, sizeof(d->start_cwd), "%s", cwd);
	setup_policy(d);
	if (d->no_cache && d->policy_hides)
		d->run_flags |= SANDTRACE_F_HIDES; /* for `sandtrace env` (INFO) */
	strlcpy(d->cwd, cwd, sizeof(d->cwd));
	{
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		char *slash = n > 0 ? (self[n] = '\0', strrchr(self, '/')) : NULL;
		if (slash != NULL)
			snprintf(d->cli_exe, sizeof(d->cli_exe), "%.*s/sandtrace",
				 (int)(slash - self), self);
	}
	setup_registry(d, fatal_v);
	if (d->have_arena) {
		int rc = sandtrace_ctrie_init(&d->arena);
		if (rc < 0)
			fatal("starting the Ctrie: %s", strerror(-rc));
		rc = sandtrace_log_init(&d->arena, sandtrace_log_cap_for(d->arena_size));
		if (rc < 0)
			fatal("starting the record log: %s", strerror(-rc));
		if (st__mf_publish(d->mf, &d->arena) < 0)
			fatal("the arena cannot hold the --verify manifest's paths: use a larger "
			      "--arena-size");
	}

	/* the socket first: a daemon refused because another one serves it
	 * must not truncate that one's report (the same --report, a mistake) */
	setup_socket(d);
	int rc = st__report_open(&d->report, d->report_path, false);
	if (rc == -EBUSY)
		fatal("--report %s: another sandtrace run is writing it (its daemon holds the "
		      "file's lock): give this run a report of its own",
		      d->report_path);
	if (rc < 0)
		fatal("--report %s: %s", d->report_path, strerror(-rc));
	struct st__run_rec run = {
	    .argv = d->run_argv,
	    .cwd = cwd,
	    .policy = d->policy.name,
	    .fenced = d->fence,
	    .cache = d->have_arena,
	    .record_all = d->record_all,
	    .fail_open = d->fail_open,
	    .arena = d->have_arena ? d->arena_name : NULL,
	    .daemon_pid = getpid(),
	};
	st__report_emit(&d->report, st__rec_run(&run));
	st__report_flush(&d->report);
	d->sum.complete = true;

	epoll_add(d, d->lfd, &d->lfd);
	epoll_add(d, d->sigfd, &d->sigfd);
	d->last_flush_ns = now_ns();

	if (d->ready_fd >= 0) {
		/* the run's flags for the traced processes' environment, then
		 * the arena's name (which may hold spaces: the rest of the line) */
		char line[SANDTRACE_ARENA_NAME_MAX + 32];
		int n = snprintf(line, sizeof(line), "READY %u %s\n", d->run_flags,
				 d->have_arena ? d->arena_name : "-");
		if (write(d->ready_fd, line, (size_t)n) != n)
			st__log("writing READY to fd %d: %s", d->ready_fd, strerror(errno));
		close(d->ready_fd);
		/* Keep 0-2 open: a later socket must not land on a standard descriptor. */
		if (d->ready_fd <= 2) {
			int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
			if (fd >= 0 && fd != d->ready_fd) {
				dup2(fd, d->ready_fd);
				close(fd);
			}
		}
	}
	st__log("ready: socket %s, arena %s, flags %u", d->socket_path,
		d->have_arena ? d->arena_name : "-", d->run_flags);
	/* From here on nothing may reach the traced program's stderr: stray output goes to the log.
	 */
	if (d->log_path != NULL) {
		int lfd = fileno(stderr);
		int fd = open(d->log_path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd >= 0) {
			dup2(fd, lfd);
			close(fd);
		}
	}

	serve(d);
	drain(d);
	finish_report(d);

	unlink(d->socket_path);
	if (d->have_arena) {
		rc = sandtrace_arena_unlink(d->arena_name);
		if (rc < 0)
			st__log("unlinking the arena %s: %s", d->arena_name, strerror(-rc));
		sandtrace_arena_detach(&d->arena);
	}
	struct client *c, *tmp;
	HASH_ITER(hh, d->clients, c, tmp)
	client_close(d, c, NULL);
	if (d->parent_lost && d->private_dir != NULL)
		remove_private_dir(d->private_dir);
	set_free(&d->recorded);
	set_free(&d->violated);
	set_free(&d->paths);
	st__policy_free(&d->policy);
	st__summary_free(&d->sum);
	if (d->reg_state == REG_LOADING)
		registry_ready(d);
	st__registry_free(&d->reg);
	st__deplist_free(&d->deps);
	st__audit_free(&d->audit_log);
	st__mf_free(d->mf);
	free(d->ptab_private);
	st__log("done: %llu process image(s), %llu access record(s), %llu violation(s)",
		(unsigned long long)d->sum.processes, (unsigned long long)d->sum.accesses,
		(unsigned long long)d->sum.violations);
	/* the report cut short by a failed write: `sandtrace run` must say so (its
	 * summary, which says why, may be what could not be written) */
	return d->report.error != 0 ? SANDTRACE_DAEMON_EXIT_REPORT : 0;
}
