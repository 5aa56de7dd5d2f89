/* shim/client.c - the shim's connection to sandtraced: connect, HELLO, records, requests, EXIT. */
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "sandtrace/log.h"
#include "shim.h"

/* How long a request waits for its verdict (ms), and how long a blocked send
 * may wait for a busy daemon, before the daemon counts as lost. */
#define ST_REPLY_TIMEOUT_MS 10000
#define ST_SEND_TIMEOUT_S 10

static pid_t raw_getpid(void)
{
	return (pid_t)ST_SYSCALL(SYS_getpid);
}

/* Is fd still the socket we opened?  A program may have closed it and
 * reused the number (close loops, closefrom, dup2 onto it): then it is not
 * ours any more and must never be written to. */
static bool fd_is_ours(void)
{
	return st__g.fd >= 0 && st__g.fd_pid == raw_getpid() && st__conn_fd_same();
}

/* Move a new descriptor out of the low numbers programs use (>= 10; high
 * numbers first so that shells' N>file and close loops rarely meet it).
 *
 * Under a small RLIMIT_NOFILE (a program or a shell's `ulimit -n 8`: no
 * number >= 10 can be had) the socket stayed where socket() put it, the
 * lowest free number, 3: the program's next open got 4 where untraced it
 * got 3, and with `ulimit -n 5` a program that held two files failed its
 * second open with EMFILE.  Then, when the hard limit lets it, the soft one
 * is raised for the dup alone (a descriptor above the soft limit stays
 * valid; only new numbers are bounded by it) and put back: another thread
 * that asks for the limit meanwhile sees the raised one, and one that opens
 * a file while all numbers below the limit are taken gets one above it.
 * Else the socket goes to the highest free number below the limit, so that
 * the program's opens still get the numbers they would get untraced, while
 * it has fewer of them (EMFILE one open early, not at its first).
 * Raw system calls only: async-signal-safe; errno is not preserved (the
 * caller's lock path saves it). */
static int move_high(int fd)
{
	static const int mins[] = {900, 100, 10};
	for (unsigned i = 0; i < sizeof(mins) / sizeof(mins[0]); i++) {
		int n = (int)ST_SYSCALL(SYS_fcntl, fd, F_DUPFD_CLOEXEC, mins[i]);
		if (n >= 0) {
			ST_SYSCALL(SYS_close, fd);
			return n;
		}
	}
	struct rlimit rl;
	if (ST_SYSCALL(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) != 0)
		return fd;
	if (rl.rlim_max > rl.rlim_cur) {
		struct rlimit up = rl;
		up.rlim_cur = rl.rlim_max < (rlim_t)mins[0] + 1 ? rl.rlim_max : (rlim_t)mins[0] + 1;
		if (ST_SYSCALL(SYS_prlimit64, 0, RLIMIT_NOFILE, &up, NULL) == 0) {
			int n = -1;
			for (unsigned i = 0; i < sizeof(mins) / sizeof(mins[0]) && n < 0; i++)
				n = (int)ST_SYSCALL(SYS_fcntl, fd, F_DUPFD_CLOEXEC, mins[i]);
			if (n < 0 && up.rlim_cur > 1) /* the hard limit below 11 */
				n = (int)ST_SYSCALL(SYS_fcntl, fd, F_DUPFD_CLOEXEC,
						    (int)up.rlim_cur - 1);
			ST_SYSCALL(SYS_prlimit64, 0, RLIMIT_NOFILE, &rl, NULL);
			if (n >= 0) {
				ST_SYSCALL(SYS_close, fd);
				return n;
			}
		}
	}
	/* the highest free number below the limit (at most 10 tries: the
	 * limit is below 11 here, or every number from 10 up is taken) */
	for (long k = (long)(rl.rlim_cur < 11 ? rl.rlim_cur : 11) - 1; k > fd; k--) {
		int n = (int)ST_SYSCALL(SYS_fcntl, fd, F_DUPFD_CLOEXEC, (int)k);
		if (n >= 0) {
			ST_SYSCALL(SYS_close, fd);
			return n;
		}
	}
	return fd;
}

/* This process's executable into exe (PATH_MAX bytes): st__g.exe when the
 * parent's exec wrapper named it or a HELLO of this image read it, else
 * the kernel's /proc/self/exe (kept for the next HELLO, a forked child's).
 * Its length, or -1 when the kernel cannot tell. */
static ssize_t own_exe(char *exe)
{
	if (st__g.exe_len > 0) {
		st__copy(exe, st__g.exe, st__g.exe_len);
		return st__g.exe_len;
	}
	ssize_t n = ST_SYSCALL(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", exe, PATH_MAX);
	/* a vfork child's memory is its parent's: its exe is not kept there */
	if (n > 0 && (size_t)n <= sizeof(st__g.exe) && !st__vchild) {
		st__copy(st__g.exe, exe, (size_t)n);
		st__g.exe_len = (uint16_t)n;
	}
	return n;
}

static void send_hello_locked(void);

/* Make sure st__g.fd is a live connection of this process.  Called with the
 * lock held.  Returns false when the daemon cannot be reached. */
static bool conn_locked(void)
{
	if (st__vchild) /* the connection, its fd and daemon_lost are the parent's */
		return false;
	if (fd_is_ours())
		return true;
	if (st__g.fd >= 0 && st__g.fd_pid != raw_getpid() && st__conn_fd_same()) {
		/* inherited through a fork the shim did not see (raw clone):
		 * the number is a copy of the parent's socket, still ours
		 * unless the program had taken the number in the parent */
		ST_SYSCALL(SYS_close, st__g.fd);
	}
	st__g.fd = -1;
	if (st__g.daemon_lost)
		return false;
	int fd = (int)ST_SYSCALL(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memcpy(sa.sun_path, st__g.socket_path, strnlen(st__g.socket_path, sizeof(sa.sun_path) - 1));
	if (ST_SYSCALL(SYS_connect, fd, &sa, sizeof(sa)) != 0) {
		ST_SYSCALL(SYS_close, fd);
		/* ENOENT/ECONNREFUSED: the daemon is gone; do not retry on
		 * every call (each try would cost a system call) */
		st__g.daemon_lost = true;
		return false;
	}
	struct timeval tv = {.tv_sec = ST_SEND_TIMEOUT_S};
	ST_SYSCALL(SYS_setsockopt, fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	unsigned ms = st__g.reply_timeout_ms ? st__g.reply_timeout_ms : ST_REPLY_TIMEOUT_MS;
	struct timeval rtv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
	ST_SYSCALL(SYS_setsockopt, fd, SOL_SOCKET, SO_RCVTIMEO, &rtv, sizeof(rtv));
	fd = move_high(fd);
	struct stat st;
	ST_SYSCALL(SYS_fstat, fd, &st);
	st__g.fd = fd;
	st__g.fd_pid = raw_getpid();
	st__g.fd_dev = st.st_dev;
	st__g.fd_ino = st.st_ino;
	send_hello_locked();
	return st__g.fd >= 0;
}

/* A record or a request that reached neither the record log nor the daemon:
 * counted in the arena's header, where the daemon's summary (or the CLI's,
 * when the daemon died) finds it and says the trace is incomplete, and in
 * this process's EXIT (for a process without the arena: the daemon alive,
 * its connection lost for a while).  Relaxed: a count read after the
 * processes that made it ended. */
static void note_lost(void)
{
	atomic_fetch_add_explicit(&st__g.lost, 1, memory_order_relaxed);
	if (st__g.arena.base)
		atomic_fetch_add_explicit(&sandtrace_arena_hdr(&st__g.arena)->lost, 1,
					  memory_order_relaxed);
}

void st__note_lost(void)
{
	note_lost();
}

static void lost_locked(void)
{
	if (st__g.fd >= 0 && fd_is_ours())
		ST_SYSCALL(SYS_close, st__g.fd);
	st__g.fd = -1;
	st__g.daemon_lost = true;
}

/* Send one message.  A record (HELLO, EXIT, an ACCESS asking no answer)
 * carries the record log's stamp in its seq (sandtrace_log_stamp, 0 without
 * an arena): the daemon dispatches it after the log entries made before it
 * was sent and before those made after; a request carries its own number,
 * which its VERDICT echoes. */
static int send_locked(unsigned type, uint32_t flags, const struct iovec *iov, int n, bool record)
{
	uint32_t seq = !record ? ++st__g.seq : st__g.arena.base ? sandtrace_log_stamp(&st__g.arena) : 0;
	int r = sandtrace_proto_send(st__g.fd, type, seq, flags, iov, n);
	ST_COUNT(st__g.messages);
	if (r < 0)
		lost_locked();
	return r;
}

/* Read /proc/self/cmdline into a private mapping (argv may be large; no malloc). */
static void send_hello_locked(void)
{
	struct sandtrace_hello h = {.pid = raw_getpid(), .ppid = (int32_t)ST_SYSCALL(SYS_getppid)};
	char exe[PATH_MAX];
	ssize_t n = own_exe(exe);
	h.exe_len = n > 0 ? (uint32_t)n : 0;
	size_t cap = 256 * 1024;
	uint32_t flags = 0;
	char *argv = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t alen = 0;
	if (argv != MAP_FAILED) {
		int fd = (int)ST_SYSCALL(SYS_openat, AT_FDCWD, "/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t r;
			while (alen < cap && (r = ST_SYSCALL(SYS_read, fd, argv + alen, cap - alen)) > 0)
				alen += (size_t)r;
			if (alen == cap) {
				flags |= SANDTRACE_HF_ARGV_TRUNC;
				argv[alen - 1] = 0; /* every argument NUL-terminated */
			}
			ST_SYSCALL(SYS_close, fd);
		}
	} else {
		argv = NULL;
	}
	if (!st__g.arena.base && st__g.arena_name[0])
		flags |= st__g.arena_err == -EPROTO ? SANDTRACE_HF_ARENA_BAD : SANDTRACE_HF_NO_ARENA;
	if (st__g.launcher)
		flags |= SANDTRACE_HF_LAUNCHER; /* not the build: its command's image is */
	else if (st__g.hello_logged)
		flags |= SANDTRACE_HF_THREAD; /* the image is known from the log */
	else if (st__g.hello_sent)
		flags |= SANDTRACE_HF_RECONNECT; /* the same image, a new connection */
	h.argv_len = (uint32_t)alen;
	struct iovec iov[3] = {{&h, sizeof(h)}, {exe, h.exe_len}, {argv, alen}};
	if (send_locked(SANDTRACE_MSG_HELLO, flags, iov, 3, true) == 0)
		st__g.hello_sent = true;
	if (argv)
		munmap(argv, cap);
}

/* Append one entry to the writer's chunk *chunk (0: none yet), taking a new
 * chunk when there is none or it is full; *chunks counts those taken. */
static int append_in(uint64_t *chunk, unsigned *chunks, int32_t pid, unsigned type,
		     uint32_t flags, const struct iovec *iov, int n)
{
	uint64_t need = sizeof(struct sandtrace_log_entry) + 8;
	for (int i = 0; i < n; i++)
		need += iov[i].iov_len;
	for (int tries = 0; tries < 2; tries++) {
		if (!*chunk) {
			/* most processes write a HELLO, a few records and an EXIT:
			 * their first chunk is small (a build starts tens of
			 * thousands of processes, all in one arena); a writer that
			 * writes more gets page-sized chunks after it */
			uint64_t first = SANDTRACE_LOG_CHUNK_FIRST;
			uint64_t cap = need > SANDTRACE_LOG_CHUNK ? (need + 4095) & ~(uint64_t)4095
				       : (*chunks == 0 && need <= first) ? first
									 : SANDTRACE_LOG_CHUNK;
			if (cap > UINT32_MAX)
				return -1;
			*chunk = sandtrace_log_chunk_new(&st__g.arena, (uint32_t)cap, pid);
			(*chunks)++;
			if (!*chunk)
				return -1; /* table or arena full: the socket takes over */
		}
		if (sandtrace_log_append(&st__g.arena, *chunk, pid, st__g.uid, type, flags, iov, n) == 0)
			return 0;
		sandtrace_log_seal(&st__g.arena, *chunk);
		*chunk = 0;
	}
	return -1;
}

__thread struct st_logtls st__logtls; /* shim.h */
__thread bool st__ctor_thread;        /* shim.h */

/* The chunk of this thread's calls checked aside (st__aside): a signal
 * handler's record must not go into the thread's own chunk, whose writer it
 * may have interrupted in the middle of an append (between its read of the
 * chunk's used and the store that publishes the entry: the handler's entry
 * would be written over, or published under the interrupted one).  Aside
 * calls never nest (shim.h), so this chunk has one writer at a time; its
 * entries take their place among the thread's by their seq, as another
 * thread's do.  Taken at the thread's first record aside, sealed with the
 * thread's own (st__log_seal). */
static __thread struct st_logtls aside_log;

int st__log_record(unsigned type, uint32_t flags, const struct iovec *iov, int n)
{
	if (!st__g.arena.base || !st__g.log_ok)
		return -1;
	struct st_logtls *l = st__aside ? &aside_log : &st__logtls;
	if (st__vchild) { /* (never aside: st__enter) */
		/* a vfork child (pid from the kernel): first into the chunk of the
		 * thread that called vfork, which is suspended until the child
		 * execs or exits, when the entry fits: one append, as the thread's
		 * own, on a page the process has mapped, where a chunk of its own
		 * cost each child a page fault in every other spawn (bench-start's
		 * shell, docs/BENCHMARKS.md stop 17).  Nothing else of the
		 * thread's is written: a child killed in the middle leaves the
		 * entry unpublished (its used not stored), and the thread's next
		 * append writes over it.  Else a chunk of its own (st__vf). */
		if (!st__vf.chunk && l->chunk &&
		    l->gen == atomic_load_explicit(&st__g.fork_gen, memory_order_acquire) &&
		    sandtrace_log_append(&st__g.arena, l->chunk, st__pid(), st__g.uid, type, flags,
					 iov, n) == 0)
			return 0;
		return append_in(&st__vf.chunk, &st__vf.chunks, st__pid(), type, flags, iov, n);
	}
	/* another thread's first record takes its buffers, whose destructor
	 * seals its chunk at the thread's end (the constructor's thread's is
	 * sealed at the process's exit) */
	if (!st__ctor_thread && !st__tls())
		return -1;
	/* acquire: pairs with the release increment in a forked child */
	unsigned gen = atomic_load_explicit(&st__g.fork_gen, memory_order_acquire);
	if (l->gen != gen) {
		if (l->chunk) { /* the parent's chunk, inherited through fork: not ours */
			l->chunk = 0;
			l->chunks = 0;
		}
		l->gen = gen; /* of the chunk it takes */
	}
	return append_in(&l->chunk, &l->chunks, st__g.pid, type, flags, iov, n);
}

void st__log_seal(void)
{
	if (st__vchild) { /* the chunk to seal is the vfork child's own */
		if (st__vf.chunk && st__g.arena.base)
			sandtrace_log_seal(&st__g.arena, st__vf.chunk);
		st__vf.chunk = 0;
		return;
	}
	/* the thread's chunk and the chunk of its calls checked aside */
	struct st_logtls *ls[2] = {&st__logtls, &aside_log};
	for (int i = 0; i < 2; i++) {
		struct st_logtls *l = ls[i];
		if (l->chunk && st__g.arena.base &&
		    l->gen == atomic_load_explicit(&st__g.fork_gen, memory_order_acquire))
			sandtrace_log_seal(&st__g.arena, l->chunk);
		l->chunk = 0;
	}
}

/* HELLO without a system call but readlink: argv as the constructor got it.
 * ppid > 0: a forked child's, whose parent (ppid) and executable (the
 * parent's, kept in st__g.exe) are known without asking the kernel. */
bool st__log_hello_as(int32_t ppid)
{
	enum { MAX_PARTS = 256, SMALL_PARTS = 16 };
	if (!st__g.arena.base || !st__g.log_ok || !st__g.argv || st__g.argc + 2 > MAX_PARTS)
		return false;
	/* the iovecs on the stack, and the exe's name where st__g keeps it
	 * (the exec wrapper's hint): a process that records nothing else then
	 * touches no page of its access slots.  Otherwise in the access slot of
	 * this nesting level (free: HELLO is written before any access of the
	 * call): not 8 KiB of stack */
	_Static_assert(MAX_PARTS * sizeof(struct iovec) + PATH_MAX <= ST_PATH_BUF, "buffer");
	struct iovec small[SMALL_PARTS];
	struct iovec *iov = small;
	const char *exe = st__g.exe;
	ssize_t n = st__g.exe_len;
	if (st__g.argc + 2 > SMALL_PARTS || n == 0) {
		struct st_tls *t = st__tls();
		if (!t)
			return false;
		char *buf = t->acc[st__level > 0 ? 2 * (st__level - 1) : 0].absbuf;
		/* at the head of absbuf, on the page of the slot's fields: after
		 * the iovecs when they are there too (a compiler's long command) */
		char *e = buf;
		if (st__g.argc + 2 > SMALL_PARTS) {
			iov = (struct iovec *)(void *)buf;
			e = buf + (size_t)(st__g.argc + 2) * sizeof(struct iovec);
		}
		n = own_exe(e);
		exe = e;
	}
	struct sandtrace_hello h = {.pid = st__pid(),
				    .ppid = ppid > 0 ? ppid : (int32_t)ST_SYSCALL(SYS_getppid)};
	h.exe_len = n > 0 ? (uint32_t)n : 0;
	int k = 0;
	iov[k++] = (struct iovec){&h, sizeof(h)};
	iov[k++] = (struct iovec){(void *)exe, h.exe_len};
	uint64_t alen = 0;
	for (int i = 0; i < st__g.argc && st__g.argv[i]; i++) {
		size_t l = st__strlen(st__g.argv[i]) + 1; /* with its NUL */
		iov[k++] = (struct iovec){st__g.argv[i], l};
		alen += l;
	}
	if (alen > SANDTRACE_MAX_PAYLOAD / 2)
		return false;
	h.argv_len = (uint32_t)alen;
	if (st__log_record(SANDTRACE_MSG_HELLO, 0, iov, k) != 0)
		return false;
	if (!st__vchild)
		st__g.hello_logged = true;
	return true;
}

bool st__log_hello(void)
{
	return st__log_hello_as(0);
}

void st__hello(void)
{
	if (st__aside) /* the interrupted code may hold the lock */
		return;
	int saved = errno;
	pthread_mutex_lock(&st__g.lock);
	bool ok = conn_locked(); /* connecting sends HELLO */
	pthread_mutex_unlock(&st__g.lock);
	if (!ok && !st__vchild)
		note_lost();
	errno = saved;
}

int st__send_access(const struct sandtrace_access *acc, const char *path, size_t len,
		    const char *path2, size_t len2)
{
	int saved = errno, r = -EPIPE;
	struct iovec iov[3] = {{(void *)acc, sizeof(*acc)}, {(void *)path, len}, {(void *)path2, len2}};
	if (st__log_record(SANDTRACE_MSG_ACCESS, 0, iov, path2 ? 3 : 2) == 0) {
		errno = saved;
		return 0;
	}
	if (st__aside) { /* the interrupted code may hold the lock, or be sending */
		note_lost();
		errno = saved;
		return r;
	}
	pthread_mutex_lock(&st__g.lock);
	if (conn_locked())
		r = send_locked(SANDTRACE_MSG_ACCESS, 0, iov, path2 ? 3 : 2, true);
	pthread_mutex_unlock(&st__g.lock);
	if (r < 0)
		note_lost();
	errno = saved;
	return r;
}

/* The program made the connection non-blocking (fcntl(F_SETFL, O_NONBLOCK)
 * on every descriptor it has, an ioctl FIONBIO): a receive that finds no
 * answer yet then fails with EAGAIN at once, which is not the daemon's
 * silence the reply timeout stands for.  The socket is the shim's alone:
 * blocking again, and true, so that the receive is made again; false when it
 * was blocking (EAGAIN was SO_RCVTIMEO's timeout).  Preserves errno. */
static bool made_blocking_locked(void)
{
	int saved = errno;
	long fl = ST_SYSCALL(SYS_fcntl, st__g.fd, F_GETFL);
	bool was = fl >= 0 && (fl & O_NONBLOCK) &&
		   ST_SYSCALL(SYS_fcntl, st__g.fd, F_SETFL, fl & ~(long)O_NONBLOCK) == 0;
	errno = saved;
	return was;
}

/* One ACCESS request (AF_REPLY) and its VERDICT. */
static int request(const struct iovec *iov, int n, struct sandtrace_verdict *v)
{
	int saved = errno, r = -EPIPE;
	/* a call checked aside: the interrupted code may hold the lock or wait
	 * for its own answer; decided without the daemon, as when it is lost
	 * (fail closed unless --fail-open), the outcome recorded as usual */
	if (st__aside)
		return r;
	pthread_mutex_lock(&st__g.lock);
	if (conn_locked() && (r = send_locked(SANDTRACE_MSG_ACCESS, 0, iov, n, false)) == 0) {
		uint32_t want = st__g.seq;
		/* the request is in the daemon's socket now: a log drain in
		 * progress sees the count move and stops for it (relaxed: a
		 * hint, never needed for an answer) */
		if (st__g.arena.base)
			atomic_fetch_add_explicit(
			    &sandtrace_arena_hdr(&st__g.arena)->counters[SANDTRACE_CTR_ASKS], 1,
			    memory_order_relaxed);
		struct sandtrace_frame f;
		for (;;) {
			/* the frame and the verdict in one blocking receive: the
			 * socket's SO_RCVTIMEO bounds the wait (one system call
			 * where a poll and two reads were) */
			struct iovec in[2] = {{&f, sizeof(f)}, {v, sizeof(*v)}};
			struct msghdr mh = {.msg_iov = in, .msg_iovlen = 2};
			ssize_t got;
			do
				got = ST_SYSCALL(SYS_recvmsg, st__g.fd, &mh, MSG_WAITALL);
			while (got < 0 && (errno == EINTR || ((errno == EAGAIN || errno == EWOULDBLOCK) &&
							      made_blocking_locked())));
			r = got == (ssize_t)(sizeof(f) + sizeof(*v)) ? 0
			    : got < 0 && errno != EAGAIN && errno != EWOULDBLOCK ? -errno
			    : got < 0 ? -ETIMEDOUT : -ECONNRESET;
			if (r == 0 && (sandtrace_proto_check_frame(&f) != 0 ||
				       f.type != SANDTRACE_MSG_VERDICT || f.len != sizeof(*v)))
				r = -EPROTO;
			if (r != 0 || f.seq == want)
				break;
			/* an answer to an older request that timed out: skip */
		}
		if (r != 0)
			lost_locked();
	}
	pthread_mutex_unlock(&st__g.lock);
	/* the access is decided without the daemon (fail closed, or fail open) */
	if (r != 0)
		note_lost();
	errno = saved;
	return r;
}

int st__request(unsigned kind, const char *path, size_t len, struct sandtrace_verdict *v)
{
	struct sandtrace_access acc = {.kind = (uint8_t)kind, .flags = SANDTRACE_AF_REPLY,
				       .path_len = (uint32_t)len};
	struct iovec iov[2] = {{&acc, sizeof(acc)}, {(void *)path, len}};
	return request(iov, 2, v);
}

int st__request_verify(unsigned kind, const char *path, size_t len,
		       const struct sandtrace_identity *id, bool refuses, struct sandtrace_verdict *v)
{
	struct sandtrace_access acc = {
	    .kind = (uint8_t)kind,
	    .flags = (uint16_t)(SANDTRACE_AF_REPLY | SANDTRACE_AF_VERIFY | SANDTRACE_AF_IDENTITY |
				(refuses ? SANDTRACE_AF_REFUSES : 0)),
	    .path_len = (uint32_t)len};
	struct iovec iov[3] = {{&acc, sizeof(acc)}, {(void *)path, len}, {(void *)id, sizeof(*id)}};
	return request(iov, 3, v);
}

void st__send_exit(int status, bool child, pid_t pid)
{
	int saved = errno;
	/* a process's own EXIT carries what it could not deliver before */
	uint64_t lost = atomic_load_explicit(&st__g.lost, memory_order_relaxed);
	struct sandtrace_exit e = {
	    .status = status,
	    .reserved = child ? (uint32_t)pid : lost > UINT32_MAX ? UINT32_MAX : (uint32_t)lost,
	    .calls = atomic_load_explicit(&st__g.calls, memory_order_relaxed),
	    .hits = atomic_load_explicit(&st__g.hits, memory_order_relaxed),
	    .messages = atomic_load_explicit(&st__g.messages, memory_order_relaxed)};
	struct iovec iov[1] = {{&e, sizeof(e)}};
	if (st__log_record(SANDTRACE_MSG_EXIT, child ? SANDTRACE_EF_CHILD : 0, iov, 1) == 0) {
		if (!child)
			st__log_seal();
		errno = saved;
		return;
	}
	if (st__aside) {
		note_lost();
		errno = saved;
		return;
	}
	pthread_mutex_lock(&st__g.lock);
	bool sent = conn_locked() &&
		    send_locked(SANDTRACE_MSG_EXIT, child ? SANDTRACE_EF_CHILD : 0, iov, 1, true) == 0;
	pthread_mutex_unlock(&st__g.lock);
	if (!sent)
		note_lost();
	errno = saved;
}
