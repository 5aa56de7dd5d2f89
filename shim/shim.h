/* shim/shim.h - internal interface of libsandtrace.so (the preload): state, real symbols, the check. */
#ifndef SANDTRACE_SHIM_H
#define SANDTRACE_SHIM_H

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fstab.h>
#include <fts.h>
#include <ftw.h>
#include <glob.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/ether.h>
#include <nl_types.h>
#include <rpc/netdb.h>
#include <aliases.h>
#include <grp.h>
#include <gshadow.h>
#include <iconv.h>
#include <pthread.h>
#include <pwd.h>
#include <shadow.h>
#include <pty.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/mount.h>
#include <sys/quota.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <syslog.h>
#include <ttyent.h>
#include <utime.h>
#include <utmp.h>
#include <utmpx.h>
#include <wchar.h>
#include <wordexp.h>

struct __res_state; /* resolv.h: not included, its macros (p_type) clash with elf.h */
#include "sandtrace/arena.h"
#include "sandtrace/common.h"
#include "sandtrace/policy.h"
#include "sandtrace/protocol.h"

/* Real functions: one slot per SYM() of symbols.def, resolved lazily with
 * dlsym(RTLD_NEXT) and published with a release store (an atomic pointer, so
 * two threads resolving at once both store the same value). */
#define SYM(ret, name, params)                                                                     \
	typedef ret(*st__t_##name) params;                                                         \
	extern _Atomic(void *) st__real_##name;
#include "symbols.def"
#undef SYM

/*
 * st__auxval - getauxval(type) without libc's page of code for it (a page a
 * traced /bin/true touches for nothing else: docs/BENCHMARKS.md, stop 22):
 * read from the auxiliary vector the constructor found on the initial stack,
 * else libc's getauxval.  0 with errno ENOENT when type is absent.
 * Async-signal-safe.
 */
unsigned long st__auxval(unsigned long type);

/* st__resolve - dlsym(RTLD_NEXT, name), cached in *slot.  Never NULL: a
 * missing symbol resolves to a stub that fails with ENOSYS. */
void *st__resolve(_Atomic(void *) *slot, const char *name);

/*
 * The functions whose GLIBC_2.2.5 version behaves differently from the
 * default one (shim/abi.c): st__old_abi(ret, which) - whether the object
 * that a wrapper returns to (ret: __builtin_return_address(0)) binds the
 * function at GLIBC_2.2.5, so that the wrapper gives the old behaviour.
 * Memoized per thread for the last object; no allocation, no lock
 * (_dl_find_object); errno preserved; async-signal-safe.  Always false but
 * on x86-64.  st__resolve_old(slot, name): the old version's real function
 * (dlvsym), cached in *slot; the default one where there is none.
 */
enum st_old {
	ST_OLD_REALPATH,
	ST_OLD_NFTW,
	ST_OLD_NFTW64,
	ST_OLD_GLOB,
	ST_OLD_GLOB64,
	ST_OLD_SPAWN,
	ST_OLD_SPAWNP,
	ST_OLD_N
};
bool st__old_abi(const void *ret, enum st_old which);
void *st__resolve_old(_Atomic(void *) *slot, const char *name);

/*
 * st__resolve_all - resolve every slot of symbols.def now, once per process
 * (a forked child inherits the slots).  Called before a process's second
 * thread is made (the pthread_create wrapper): a wrapper's first call
 * otherwise resolves its real function with dlsym, which takes the loader's
 * lock, so that a thread's first call of a wrapper waited for any dlopen
 * another thread was in (its search, a library's constructor), and waited
 * for good when that dlopen waited for the thread.  ≈ 200 dlsym calls, only
 * in processes that start threads; errno preserved.  Not async-signal-safe.
 */
void st__resolve_all(void);

/*
 * ST_HOT: a small variable every traced process touches, placed in .data
 * next to st__g instead of in .bss.  The shim's .bss is ~90 KiB (the first
 * thread's buffers, the cwd cache, the env store) and a variable the
 * compiler happened to put behind those cost every process a page fault
 * of its own (≈ 10–20 µs on the benchmark VM); in .data it shares the page
 * the loader touches anyway.  Zero-initialised like .bss.
 */
#define ST_HOT __attribute__((section(".data.st_hot")))

/*
 * ST_EVERY: a function every traced process runs though its file's others
 * are not (main's trampoline, the exit hook): placed at the front of the
 * code (the default linker script puts .text.hot.* first), in the 64 KiB
 * window of the file that the process faults in anyway (shim/meson.build).
 */
#define ST_EVERY __attribute__((section(".text.hot.st_every")))

/*
 * String helpers for the code every traced process runs at its start (the
 * environment, the executable's hint, the arena's name, the HELLO, the
 * libraries' names).  libc's own are IFUNC-selected variants, each on a
 * page of libc's code that a process which never calls them (/bin/true)
 * would not touch: with mmap, seven such pages cost a traced child's start ≈ 7 µs on
 * this project's VM (docs/BENCHMARKS.md, stop 22).  Byte loops: the strings
 * are short (names and paths); the shim is built with
 * -fno-tree-loop-distribute-patterns so that GCC does not turn them back
 * into calls.  Async-signal-safe.
 */
static inline size_t st__strlen(const char *s)
{
	const char *p = s;
	while (*p)
		p++;
	return (size_t)(p - s);
}
static inline void st__copy(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	while (n--)
		*d++ = *s++;
}
/* s begins with pfx: a pointer past it, else NULL */
static inline const char *st__skip_prefix(const char *s, const char *pfx)
{
	while (*pfx)
		if (*s++ != *pfx++)
			return NULL;
	return s;
}
static inline bool st__streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

/* Bump a statistics counter: a plain load and store while the process has
 * one thread (glibc's __libc_single_threaded: most processes of a build),
 * a locked add once it has more, so that threads racing on it lose no
 * count (a threaded run once showed more hits than calls). */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
#include <sys/single_threaded.h>
#define ST_SINGLE_THREADED() (__libc_single_threaded != 0)
#else
#define ST_SINGLE_THREADED() 0
#endif
#define ST_COUNT(ctr)                                                                              \
	do {                                                                                       \
		if (ST_SINGLE_THREADED())                                                          \
			atomic_store_explicit(                                                     \
			    &(ctr), atomic_load_explicit(&(ctr), memory_order_relaxed) + 1,        \
			    memory_order_relaxed);                                                 \
		else                                                                               \
			atomic_fetch_add_explicit(&(ctr), 1, memory_order_relaxed);                \
	} while (0)

/*
 * ST_SYSCALL(nr, args...) - a system call made by the shim itself, with
 * libc's syscall() contract (returns -1 and sets errno on failure), for at
 * most six integer or pointer arguments.  On x86-64 Linux it is an inline
 * `syscall` instruction: no call through the interposed syscall() wrapper,
 * no dlsym of the real one, no page of either to fault in when a process
 * starts.  Elsewhere it is libc's syscall().  Async-signal-safe.
 */
#include "rawsys.h"
#if !ST_HAVE_RAW_SYSCALL
#define st__sys6(nr, a1, a2, a3, a4, a5, a6) REAL(syscall)(nr, a1, a2, a3, a4, a5, a6)
#endif
#define ST__SYS_PAD(nr, a1, a2, a3, a4, a5, a6, ...)                                               \
	st__sys6((long)(nr), (long)(a1), (long)(a2), (long)(a3), (long)(a4), (long)(a5), (long)(a6))
#define ST_SYSCALL(...) ST__SYS_PAD(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)

/*
 * A pointer argument the shim would read before the kernel sees it (a name,
 * a socket address, an exec's vectors) may be one the program's untraced
 * call hands to the kernel only to get -1/EFAULT back: (char *)1,
 * (char *)-1, a kernel-half address.  Reading it in the shim would kill the
 * program with SIGSEGV instead.
 *
 * st__odd_ptr(p): p lies outside the usual user range [ST_USER_LOW,
 * ST_USER_END): NULL and the first 64 KiB (vm.mmap_min_addr's usual
 * floor), or at or above 2^47 (x86-64's user half with 4-level page
 * tables; 2^48 on arm64).  One subtraction and one comparison: the test
 * every wrapper makes on the hit path.  An odd pointer is not yet a bad
 * one: a process may map page 0 (mmap_min_addr 0 and CAP_SYS_RAWIO), map
 * above 2^47 (5-level page tables, by a hint), or tag its pointers (x86-64
 * LAM, arm64 TBI).
 * st__unreadable(p): p is NULL, or odd and the kernel cannot read its first
 * byte (st__unreadable_slow: one process_vm_readv of it from this process,
 * which the kernel answers with EFAULT and no fault; where that call is
 * refused (seccomp), the first page and a top bit set count as unreadable).
 * A good pointer in the usual range costs the odd test only.
 * A name the shim finds unreadable is neither judged nor recorded (like a
 * NULL one): the real call is made with it and gives the program what it
 * gives untraced (EFAULT).  A pointer in the usual range that is unmapped or
 * PROT_NONE is not caught (README, Known limits).  Async-signal-safe;
 * preserves errno.
 */
#define ST_USER_LOW 65536ul
#if defined(__x86_64__)
#define ST_USER_END (1ul << 47)
#elif defined(__aarch64__)
#define ST_USER_END (1ul << 48)
#else
#define ST_USER_END (~0ul)
#endif
/* ST_USER_END - ST_USER_LOW, read from memory (init.c, on st__g's page):
 * as an immediate it takes a 64-bit register, and the hit path spilled
 * another for it (2 instructions more per call than this load) */
extern __attribute__((visibility("hidden"))) uintptr_t st__user_span;
static inline bool st__odd_ptr(const void *p)
{
	return (uintptr_t)p - ST_USER_LOW >= st__user_span;
}
bool st__unreadable_slow(const void *p);
static inline bool st__unreadable(const void *p)
{
	return __builtin_expect(st__odd_ptr(p), 0) && st__unreadable_slow(p);
}

/* What an unresolvable symbol resolves to (fails with ENOSYS). */
long st__enosys_stub(void);

#define REAL(name)                                                                                 \
	((st__t_##name)({                                                                          \
		void *p_ = atomic_load_explicit(&st__real_##name, memory_order_acquire);           \
		p_ ? p_ : st__resolve(&st__real_##name, #name);                                    \
	}))

/* Buffer size for one path held by the shim (bytes).  Longer paths are held
 * in a private mmap (st__pathbuf). */
#define ST_PATH_BUF (2 * PATH_MAX)

/* Process-wide state.  Written by st__init (once, or again in a forked child)
 * and by the connection code under st__g.lock. */
struct st_state {
	_Atomic int init;             /* 0 none, 1 in progress, 2 done */
	bool active;                  /* SANDTRACE_SOCKET was set: trace this process */
	bool launcher;                /* the CLI about to exec CMD (SANDTRACE_F_LAUNCHER) */
	bool audit;                   /* audit_path is set (read without touching its page) */
	unsigned flags;               /* enum sandtrace_run_flags */
	struct sandtrace_arena arena; /* base == NULL: no cache */
	bool hit_fast;                /* st__fast_pre may answer: active, with an arena, and
					 none of record-all, identity, verify (set by st__init) */
	/* a dlopen the shim could not follow with a record (st__libs_later):
	 * 1 while its libraries are to be noted at the next checked call; dlopened
	 * stays set, for a last look at exit */
	_Atomic int libs_pending;
	_Atomic int dlopened;
	/* a dlmopen into another namespace than the base one was made: the
	 * walks of the libraries look into the other namespaces too */
	_Atomic int dlmopened;
	/* the sandbox in the arena (NULL: none), re-read when the arena's
	 * generation moves past policy_gen (a SIGHUP reload, st__policy_take) */
	_Atomic(const struct sandtrace_policy_table *) policy;
	_Atomic bool trivial_policy;  /* no rules and default allow: trace only */
	_Atomic bool policy_asks;     /* some rule (or the default) is ask: a daemon answer */
	_Atomic uint64_t policy_gen;  /* the arena generation policy was read at */
	int arena_err;                /* why the arena could not be mapped (-errno) */
	/* the connection to the daemon (guarded by lock) */
	pthread_mutex_t lock;
	int fd;
	pid_t fd_pid;
	dev_t fd_dev;
	ino_t fd_ino;
	bool daemon_lost;
	uint32_t seq;
	uint32_t reply_timeout_ms; /* a request's wait (client.c; 0: ST_REPLY_TIMEOUT_MS) */
	/* per-process statistics (relaxed atomics) */
	_Atomic uint64_t calls, hits, messages;
	_Atomic uint64_t lost;        /* records and requests not delivered (client.c note_lost) */
	_Atomic int exit_sent;
	/* the record log (log.h) */
	bool log_ok;                  /* the arena has a log table */
	int32_t pid;                  /* this process (refreshed after fork) */
	uint32_t uid;
	_Atomic unsigned fork_gen;    /* bumped in a forked child: chunks are per process */
	bool hello_logged;            /* this image's HELLO went to the log */
	bool hello_sent;              /* this image's HELLO went by a socket (later ones reconnect) */
	int (*real_main)(int, char **, char **); /* the program's main (__libc_start_main wrapper) */
	/* the environment the loader handed the constructor (env_from) and the
	 * copy without the shim's variables that environ was pointed at
	 * (env_clean), NULL when none was made (init.c env_hide): main is
	 * handed env_clean in place of env_from */
	char **env_from, **env_clean;
	int argc;                     /* from the constructor, for HELLO */
	char **argv;
	/* cwd cache, a seqlock: gen odd while a writer updates it */
	_Atomic unsigned cwd_gen;
	_Atomic int cwd_valid;
	/* The run's strings, copied from the environment at initialisation
	 * into st__env_store (packed end to end, so a process touches one
	 * page for all of them, not one per PATH_MAX buffer: a page first
	 * touched is a page fault, 8-15 µs on this kind of VM, for every
	 * process of a build).  Never NULL: "" when unset. */
	const char *socket_path;      /* sun_path (at most 107 bytes) */
	const char *arena_name;       /* at most SANDTRACE_ARENA_NAME_MAX - 1 bytes */
	const char *lib_path;         /* our own .so, re-injected at exec */
	const char *audit_path;       /* LD_AUDIT library, optional */
	char env_small[384];          /* where they are copied when they fit */
	size_t env_small_used;
	/* this process's executable (0: not known yet, or too long): from
	 * the parent's exec wrapper (SANDTRACE_ENV_EXE), or as the first
	 * HELLO read it; a forked child runs the same one and reports it
	 * without asking the kernel again; on the page the rest of st__g is on */
	uint16_t exe_len;
	char exe[254];
	/* the cwd cache's copy (check.c) when it is shorter than this, else
	 * in a buffer of its own: here on the page of st__g, which every
	 * process writes anyway, where a process's first relative name
	 * wrote a page of .bss for it (0.8 page faults per process image of a
	 * zlib build, docs/BENCHMARKS.md stop 25) */
	char cwd_small[256];
};
extern struct st_state st__g;

/* Is st__g.fd still the socket the shim connected (its device and inode,
 * whichever process holds the number now)?  A program may have closed the
 * number and reused it (closefrom and an open, dup2 onto it) before the
 * shim looked again: then it is the program's, never to be written to or
 * closed, in the process that connected and in a child that inherited its
 * table (a fork copies the program's file at that number, not the socket). */
static inline bool st__conn_fd_same(void)
{
	struct stat st;
	return st__g.fd >= 0 && ST_SYSCALL(SYS_fstat, st__g.fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	       st.st_dev == st__g.fd_dev && st.st_ino == st__g.fd_ino;
}

/*
 * vfork (wrap_exec.c; the entry point is assembly in shim/os/, where the
 * platform has it).  A real vfork child runs in its parent's memory until it
 * execs or exits: it shares the parent's globals and the calling thread's
 * TLS.  st__vfork_begin (parent, before the system call) says whether a
 * real vfork may be used: only when everything the child's exec wrapper does
 * goes to the arena (records to the log, verdicts from the policy table), so
 * the child never touches the parent's connection, lock or caches; otherwise
 * vfork becomes fork.  While st__vchild is set, the shim's code in the child
 * writes only st__vf (its pid, read from the kernel once; its own log chunk
 * when a record does not fit in the thread's; the exec environment it
 * mapped) and appends to the thread's log chunk (client.c
 * st__log_record); st__vfork_end (parent, when the child has
 * exec'd or exited) restores the thread's nesting counters, unmaps what the
 * child left and seals its chunk.
 */
struct st_vfork {
	int depth, level;  /* st__depth/st__level of the parent at vfork */
	int32_t pid;       /* the child's, once read (st__pid); 0 before */
	bool hello;        /* the child's HELLO is logged */
	uint64_t chunk;    /* the child's log chunk, or 0 */
	unsigned chunks;   /* chunks it has taken */
	void *map;         /* the child's exec environment (a mapping in our memory) */
	size_t maplen;
};
#if defined(__x86_64__) && defined(__linux__)
#define ST_HAVE_VFORK_ASM 1 /* vfork's entry point: shim/os/linux.c */
#else
#define ST_HAVE_VFORK_ASM 0
#endif
extern __thread bool st__vchild;
extern __thread struct st_vfork st__vf;
int st__vfork_begin(void);
long st__vfork_end(long r);
pid_t st__fork(void);
/* st__clone_child - the first steps of a child no fork wrapper saw (libc's
 * clone() or a raw clone, daemon's or forkpty's internal fork), forked from
 * parent's pid; shared_files: it shares its parent's descriptor table
 * (CLONE_FILES), so the parent's connection is not its to close.  Not for
 * a child sharing the memory.  In the child, first thing (wrap_exec.c). */
void st__clone_child(int32_t parent, bool shared_files);
/* st__fork_handlers - register the shim's atfork handlers (wrap_exec.c),
 * st__fork_prepare (takes the connection lock), st__fork_parent (lets it
 * go), st__fork_child (the child's first steps): by the first call of
 * __register_atfork (the program's pthread_atfork), before the handlers it
 * registers; once.  The handlers run
 * in the forking thread only; each preserves errno. */
void st__fork_handlers(void);
void st__fork_prepare(void);
void st__fork_parent(void);
void st__fork_child(void);

/* st__reaped_info - a waitid (or syscall(SYS_waitid)) reported info: a
 * child that exited or was killed is reported to the daemon as reaped. */
void st__reaped_info(const siginfo_t *info);

/* The calling process's pid: st__g.pid, or the kernel's in a vfork child (read once). */
static inline int32_t st__pid(void)
{
	if (!st__vchild)
		return st__g.pid;
	if (!st__vf.pid)
		st__vf.pid = (int32_t)ST_SYSCALL(SYS_getpid);
	return st__vf.pid;
}

/*
 * st__policy_take - (re-)read the arena's current policy table and its
 * generation into st__g; false (and the current one kept) when the table is
 * malformed.  st__policy_refresh calls it when the daemon reloaded the
 * policy: one acquire load of the header's generation per decision.
 * Thread-safe (racing refreshes store the same values); async-signal-safe.
 */
bool st__policy_take(void);
static inline void st__policy_refresh(void)
{
	/* acquire: pairs with the daemon's release increment, made after it
	 * published the new table */
	if (st__g.arena.base &&
	    atomic_load_explicit(&sandtrace_arena_hdr(&st__g.arena)->generation,
				 memory_order_acquire) !=
		atomic_load_explicit(&st__g.policy_gen, memory_order_relaxed))
		st__policy_take();
}

/*
 * st__arena_epoch - the arena epoch a memo of cached answers is valid in
 * (the thread's memo of warm accesses, the library sets' memo): fs_gen +
 * policy generation + ns_epoch.  Every counter only grows, so the sum moves
 * when any does (a namespace change anywhere, a policy reload).  acquire:
 * pairs with the release bumps made after the change.  The arena must be
 * attached.  Async-signal-safe.
 */
static inline uint64_t st__arena_epoch(void)
{
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(&st__g.arena);
	return atomic_load_explicit(&h->fs_gen, memory_order_acquire) +
	       atomic_load_explicit(&h->generation, memory_order_acquire) +
	       atomic_load_explicit(&h->ns_epoch, memory_order_acquire);
}

/* Nesting depth of this thread inside the shim's own code: nonzero while the
 * shim's code runs.  It is dropped to 0 while a wrapper forwards to the real
 * function (ST_FORWARD), so that what the real function runs of the
 * program's code (its own malloc opening files, a selector, a signal
 * handler) is checked as a nested call (st__level 2).  The shim never calls
 * a wrapper of its own, so a checked call that comes while st__depth is
 * nonzero is the program's code that interrupted the shim's: a signal
 * handler's (or the program's malloc, free or atfork handler reached
 * from a libc call the shim made); it is checked aside (st__enter). */
extern __thread int st__depth;
/* Wrappers active in this thread (1 = a plain call, 2 = a call made while a
 * wrapper was forwarding); each level has its own access slots.  A call
 * that comes deeper (while a level-2 call forwards) is checked aside. */
extern __thread int st__level;
#define ST_MAX_LEVEL 2
/* the address of each active level's st_call (or st_fast), on its
 * wrapper's frame: one at or above a new call's has been left by a
 * siglongjmp (init.c drop_left) */
extern __thread uintptr_t st__frame[ST_MAX_LEVEL + 1];
/*
 * st__jump_out - a longjmp (any of glibc's names: wrap_sys.c) to env is about
 * to be made: drop the state of every checked call of this thread whose
 * frame (st__frame, the aside call's) it unwinds, as each call's st__leave
 * would have, so that what the thread calls next is an outermost call again
 * (or nested in the calls still running).  Where the stack pointer env
 * holds can be read (glibc on x86-64: mangled with the thread's pointer
 * guard, checked once against a setjmp of the shim's own), and only then;
 * elsewhere, or after a jump no wrapper saw (setcontext, an exception), the
 * state stays until drop_left (init.c) drops it, and a call that cannot be
 * checked meanwhile is refused under a policy that can refuse (st__enter,
 * struct st_call refuse).  Async-signal-safe.
 */
void st__jump_out(const struct __jmp_buf_tag *env);
/*
 * st__aside - this thread runs a checked call that came while its own
 * checked call was inside the shim's code (st__depth), or forwarding at
 * the deepest level: a signal handler's, which cannot wait for the
 * interrupted call to finish.  st__enter gives it a context of its own: a
 * second set of buffers (access slots, scratch, memo: struct st_tls, mapped
 * at the thread's first such call) in place of the thread's, st__depth and
 * st__level as for an outermost call; st__leave puts the interrupted
 * call's back.  The interrupted call's other state is left alone: its log
 * entry (st__log_record does not append while the thread is in the middle
 * of an append: the record is counted lost), its connection to the daemon
 * (never used aside: a request is answered as if the daemon were lost,
 * a record that the log cannot take is counted lost), the pending
 * libraries (noted by the next ordinary call).  One aside call at a time:
 * a call that comes while it runs the shim's code (or forwards its deepest
 * level) cannot be checked, nor can one in a vfork child: counted lost
 * (st__note_lost), refused under a sandbox that can refuse, else passed
 * (struct st_call refuse).
 */
extern __thread bool st__aside;
/* st__note_lost - a record (or a call) that the trace will not have: the
 * arena header's lost count, which makes the report say the trace is
 * incomplete (client.c).  Async-signal-safe. */
void st__note_lost(void);
/* Bytes of struct st_acc's rhead: a resolved path shorter than this is kept
 * on the page of the access's other fields. */
#define ST_RHEAD 512u
/* st_acc.verdict of a record no check judged (st__record_path): sent as
 * SANDTRACE_AF_UNJUDGED, never a value of enum sandtrace_action */
#define ST_UNJUDGED 0xffu

/* Forward to the real function: outside the shim's own code. */
#define ST_FORWARD(expr)                                                                           \
	({                                                                                         \
		st__depth--;                                                                       \
		__auto_type fwd_r_ = (expr);                                                       \
		st__depth++;                                                                       \
		fwd_r_;                                                                            \
	})

/* st__init - initialise on demand (also from the constructor).  Reads the
 * environment once into st__g, attaches the arena.  Never allocates with
 * malloc and never aborts.  Idempotent and thread-safe. */
void st__init(void);
/* st__after_fork_child - the child of fork: fresh lock, no connection. */
void st__after_fork_child(void);
/* st__env_unswap - the environment entry to pass on for e: the value the
 * time-zone or LOCPATH wrappers' swap under way took out of environ when e
 * is its stand-in (wrap_fs.c), NULL when e is an entry a time-zone call
 * put in for a TZ not set (to be left out), else e.  st__env_unswap_child -
 * a forked child undoes a swap another thread of its parent was making. */
const char *st__env_unswap(const char *e);
void st__env_unswap_child(void);
/* st__shell_env_child - in a forked child: the shells' environment map
 * (wrap_exec.c swap_environ) free to be written, whatever another thread of
 * the parent was doing at the fork.  Async-signal-safe. */
void st__shell_env_child(void);
/* st__env_fork_enter - a fork is about to be made (the fork prepare step):
 * waits until no putenv or unsetenv the time-zone wrappers make runs in
 * another thread, and holds new ones back until st__env_fork_leave (the
 * parent step; the child starts with none held).  Preserves errno. */
void st__env_fork_enter(void);
void st__env_fork_leave(void);
/* st__env_shell_enter - system(), popen() or wordexp() is about to run the
 * shell with environ itself: waits until no time-zone or LOCPATH swap (or
 * TZ entry put in) of another thread is in environ, and makes none until
 * st__env_shell_leave (those calls meanwhile are violations, not refused).
 * Preserves errno. */
void st__env_shell_enter(void);
void st__env_shell_leave(void);

/* One intercepted access of one path. */
struct st_acc {
	int dirfd;            /* AT_FDCWD or a descriptor */
	const char *path;     /* as the program passed it */
	unsigned kind;        /* enum sandtrace_kind as attempted */
	bool nofollow;        /* the last component is not followed */
	bool name_op;         /* ... and the call works on the name itself (ST_NF_NAME) */
	bool empty_path;      /* AT_EMPTY_PATH allowed */
	bool probe_fd;        /* ... and dirfd is the shim's own descriptor (open_by_handle_at's
				 probe), not one the program holds */
	bool in_root;         /* openat2's RESOLVE_IN_ROOT: the path is resolved below dirfd (its
				 path, held_len, is the root).  Such a spelling means something
				 else to every other call: it gets no keys, only its resolved
				 path does */
	size_t held_len;      /* abs[0..held_len) is the cwd's or dirfd's path a relative name
				 was joined to (make_abs; 0 for an absolute name) */
	bool skip;            /* nothing to check or record (NULL path, non-file, ...) */
	bool magic_fd;        /* the path is a /proc/<pid>/fd/N (or exe, cwd, root) link: an
				 open file of the process, never a violation */
	bool resolved;        /* rpath holds the resolved path */
	unsigned via_link;    /* ... and ST_VIA_LINK: a symlink was followed to get there (what
				 the spelling means depends on links anywhere: its keys are
				 key_via_link's); ST_VIA_MAGIC: a /proc magic link was (it
				 moves with the process: no key at all); ST_VIA_SHORT: the
				 walk stopped short, more than a name below (keys as LINK) */
	bool fail_open;       /* allowed only because the daemon was lost */
	bool asked;           /* verdict came from an ask rule */
	unsigned verdict;     /* enum sandtrace_action applied, or ST_UNJUDGED: a record of a
				 name no check judged (st__record_path) */
	int deny_err;         /* ENOENT or EACCES */
	bool quiet;           /* a refusal is not a violation (listing filters) */
	bool unjudgeable;     /* the policy can refuse (st__listing_filtered), and the
				 directory is too deep to be named: refused (EACCES) */
	bool unresolved;      /* the name is too long for the walk's buffers (resolve): judged
				 unjudgeable under a policy that can refuse, recorded by its
				 spelling (marked) otherwise; never keyed */
	bool ns_change;       /* a namespace write: may change symlink resolution */
	bool was_link;        /* the name was a symlink before the call */
	bool link_wide;       /* ... that reached past its own name (link_is_wide) */
	bool was_dir;         /* the name was a directory before the call */
	bool pair;            /* one of the two names of a rename or link */
	bool was_missing;     /* the name did not exist before the call */
	char *abs;            /* absolute spelling: points into absbuf (after the 4-byte
				 generation that prefixes every Ctrie key) or an mmap */
	size_t abs_len;
	uint32_t gen_abs, gen_link; /* the generations of abs's two keys (take_gens) */
	bool gens;            /* ... taken: keys are made with them */
	const char *abs_src;  /* the same bytes as abs, where they can be read without
				 reading back the copy (make_abs: the program's own buffer
				 when it was clean and absolute, else abs) */
	size_t abs_map;       /* bytes mapped for abs when it did not fit */
	char *rpath;          /* resolved path: points into rbuf or equals abs */
	size_t rpath_len;
	int fd;               /* identity mode: the descriptor a read-only open returned, or -1 */
	bool refuse;          /* identity mode, fenced: the version failed --verify; the wrapper
				 closes what it opened and fails with EACCES */
	bool loads;           /* a file libc reads by its path inside the call and keeps no
				 descriptor of (a library dlopen loads, a catalog catopen
				 maps, the zone file tzset reads, a file libc opens itself
				 at a path it fixes: st__own_check): identity mode takes its
				 version from the path, and refuses one that fails
				 verification under a fence as an exec (the wrapper records
				 it before the call, or undoes the call) */
	bool again;           /* st__post records even what was recorded already (an exec
				 after one of this process failed: wrap_exec.c) */
	bool sent;            /* st__post (or st__pre's violation) sent a record */
	bool memo_hit;        /* st__pre answered from the thread's memo (abs not built) */
	struct st_memo_ent *memo; /* the memo entry for path, or NULL (no memo for this call) */
	uint64_t memo_tag, memo_epoch; /* what st__pre probed with */
	/* the resolved path when it fits here, else in rbuf (resolve, check.c):
	 * beside the fields above and the head of absbuf, so that an access to
	 * a short path writes one page of the thread's buffers, not three
	 * (docs/BENCHMARKS.md, stop 25) */
	_Alignas(16) char rhead[ST_RHEAD];
	_Alignas(16) char absbuf[ST_PATH_BUF]; /* aligned: st__log_hello keeps iovecs in it */
	char rbuf[ST_PATH_BUF]; /* a resolved path longer than rhead; an exec's program name */
};
/* rpath holds a resolution's result (in rhead or rbuf), not abs as it was
 * spelled (resolution failed, or was not made) */
static inline bool st__rpath_resolved(const struct st_acc *a)
{
	return a->rpath == a->rhead || a->rpath == a->rbuf;
}

/*
 * st__copy_short - copy src[0..n) to dst in 16-byte moves, the last one
 * overlapping (8-byte ones under 16, bytes under 8).  For the hot path's
 * short copies (a memo entry's key): a memcpy of a variable length compiles
 * to `rep movsq`, whose start-up alone costs more than the rest of a memo
 * fill.  Reads and writes no byte outside [0, n); the two must not overlap.
 * Async-signal-safe.
 */
static inline void st__copy_short(char *dst, const char *src, size_t n)
{
	if (n >= 16) {
		for (size_t i = 0; i + 16 < n; i += 16)
			memcpy(dst + i, src + i, 16);
		memcpy(dst + n - 16, src + n - 16, 16);
	} else if (n >= 8) {
		memcpy(dst, src, 8);
		memcpy(dst + n - 8, src + n - 8, 8);
	} else {
		for (size_t i = 0; i < n; i++)
			dst[i] = src[i];
	}
}

/*
 * A thread's memo of its warm accesses (check.c): direct-mapped, ST_MEMO_WAYS
 * entries of a spelled absolute path (at most ST_MEMO_KEY bytes) and what
 * the Ctrie said about it in one arena epoch (fs_gen + policy generation +
 * ns_epoch): the sandbox classes it allows, the record kinds it holds.  A
 * hit answers a stat() of a warm path without building its key.  Filled
 * and read only by its thread's outermost checked call.  Its page is one
 * more to fault in (≈ 10 µs on this project's VM, the cost of ≈ 100 hits),
 * so a thread uses it only from its ST_MEMO_AFTER-th eligible call on, and
 * stops when it pays too little (fewer than one hit in ST_MEMO_MIN_RATIO
 * probes once ST_MEMO_TRIAL probes were made: a working set larger than the
 * memo, or no repeats), to try again ST_MEMO_RETRY eligible calls later.  In a zlib build a third of the probes hit, and 32
 * or 512 entries catch hardly more than 16.
 */
#define ST_MEMO_WAYS 16u
#define ST_MEMO_KEY 104u
#define ST_MEMO_AFTER 128u
#define ST_MEMO_TRIAL 256u
#define ST_MEMO_MIN_RATIO 8u
#define ST_MEMO_RETRY 16384u /* eligible calls before a dropped memo is tried again */
struct st_memo_ent {
	uint64_t tag;   /* hash of (path, nofollow) | 1; 0: empty, or being written */
	uint64_t epoch; /* the arena epoch it was filled in */
	uint16_t len;   /* path bytes */
	uint8_t kinds;  /* bit k: the record (kind k, path) is in the Ctrie */
	uint8_t allow;  /* SANDTRACE_CLASS_* bits the sandbox allows for path */
	uint32_t pad;
	char key[ST_MEMO_KEY];
};
_Static_assert(sizeof(struct st_memo_ent) == 128, "two entries per cache line pair");

/* The buffers of this thread: two access slots (rename, link) per nesting
 * level and scratch for symlink resolution.  One call per level is active
 * in a thread at a time, so they are safe to reuse; a call checked aside
 * (st__aside: a signal handler's that interrupted the shim's code, which
 * may be in the middle of a resolution in scratch or of a memo entry) uses
 * a second set of its own, mapped at its first such call.  They live in a
 * private mmap made on the thread's first checked call (TLS holds only a
 * pointer: a large static TLS block fails to load beside LD_AUDIT, and the
 * stack may be a small alternate signal stack); a thread-exit destructor
 * unmaps them. */
struct st_tls {
	unsigned memo_calls;     /* eligible calls: to ST_MEMO_AFTER, then since the memo was dropped */
	unsigned memo_probes;    /* memo probes, and how many hit (saturate after the trial) */
	unsigned memo_hits;
	bool memo_off;           /* the trial found it not worth its page */
	bool memo_fast;          /* the trial is over and paid: st__fast_pre may use it */
	struct st_acc acc[2 * ST_MAX_LEVEL];
	char scratch[ST_PATH_BUF];
	_Alignas(128) struct st_memo_ent memo[ST_MEMO_WAYS]; /* past scratch: pages no call touches until the memo is used */
};
/* Each access's fields, its rhead and the first KiB of its absbuf share one
 * page of the buffers, so that an access to a short path writes one page of
 * them (docs/BENCHMARKS.md, stop 25): for every access of a thread's mapped
 * buffers (which start on a page), and for the first access of the main
 * thread's static ones, which start in the first half of a page
 * (tests/shim_layout.py). */
#define ST_ACC_HEAD_END(i)                                                                    \
	((offsetof(struct st_tls, acc) + (i) * sizeof(struct st_acc)) % 4096 +               \
	 offsetof(struct st_acc, absbuf) + 1024)
_Static_assert(2 * ST_MAX_LEVEL == 4 && ST_ACC_HEAD_END(0) <= 2048 && ST_ACC_HEAD_END(1) <= 4096 &&
		       ST_ACC_HEAD_END(2) <= 4096 && ST_ACC_HEAD_END(3) <= 4096,
	       "an access's head on one page");
/*
 * A thread's record-log chunk (client.c), in the thread's static TLS block
 * (beside the thread control block, which libc has written by the time any
 * code of the shim runs), not in its buffers: a process that records only
 * its HELLO and its EXIT (a /bin/true) never touches a page of the buffers,
 * nor makes libc's thread key.  Sealed at the thread's end by the buffers'
 * destructor (a thread other than the constructor's takes its buffers with
 * its first record) and at the process's exit (st__send_exit).  A vfork child
 * shares it with the thread that called vfork (same memory, same TLS).
 */
struct st_logtls {
	uint64_t chunk;  /* the chunk in the arena, or 0 */
	unsigned gen;    /* st__g.fork_gen when the chunk was taken */
	unsigned chunks; /* chunks this thread has taken (the first one is small) */
};
extern __thread struct st_logtls st__logtls;
/* true in the thread that ran the shim's constructor (normally main) */
extern __thread bool st__ctor_thread;

/* st__tls - this thread's buffers, or NULL when they cannot be mapped (the
 * call then cannot be checked: struct st_call refuse). */
struct st_tls *st__tls(void);
/* the thread's buffers if it has any yet (st__tls makes them), else NULL */
extern __thread struct st_tls *st__tls_bufs;

/*
 * The hit path (wrap.h ONE_PATH): a read or query of an absolute path whose
 * answers are all cached costs lookups and nothing else: no access slot, no
 * copy of the path.  Two caches answer, the thread's memo of warm accesses
 * (check.c) first, then the arena's Ctrie, with the path as the program
 * spelled it: a spelling that is not already clean is never a key, so it
 * misses and takes the ordinary path.  st__fast_pre answers whether the
 * call may go ahead on what the caches hold (the sandbox allows its class:
 * a trace-only run, or a cached verdict of allow); then the caller makes
 * the real call and hands its errno, or 0, to st__fast_post, which looks
 * the record up and, when it is not there, records the outcome through the
 * ordinary path (st__post).  Only the outermost call of a thread, in a
 * process where st__g.hit_fast holds; between the two the thread is at
 * st__level 1, so a signal handler's calls never use the memo.  Preserve
 * errno.
 */
struct st_fast {
	struct st_memo_ent *e; /* the memo entry to fill, or NULL */
	uint64_t tag, epoch;
	const char *path;
	size_t len;
	unsigned kind;
	bool nofollow;
	uint32_t vref, vgen; /* the cached verdict's SNode and key generation (0: none) */
};
#define ST_FAST_PATH 1024u /* longer spellings take the ordinary path */
/* path: not st__odd_ptr (the caller tests it) */
bool st__fast_pre(struct st_fast *f, const char *path, unsigned kind, bool nofollow);
void st__fast_post(struct st_fast *f, int err);
#define st__tls_acc (st__tls()->acc + 2 * (st__level - 1))

/* Context of one wrapper call: errno is saved at entry and the real call's
 * errno is what the program sees. */
struct st_call {
	int saved_errno;
	bool aside;           /* a call checked aside (st__aside): what follows is restored */
	/* st__enter did not enter a call it could not check (another call aside
	 * runs, a vfork child's handler, no buffers), counted lost, and the
	 * sandbox can refuse (st__may_refuse): the wrapper refuses the call
	 * without making it (wrap.h ST_UNCHECKED).  false on every other
	 * return of st__enter: the call passes unchecked (an untraced process,
	 * a trace-only run) */
	bool refuse;
	int depth, level;     /* the interrupted call's st__depth, st__level */
	struct st_tls *bufs;  /* ... and buffers */
};

/* st__enter - true if this call is to be checked (then st__leave must follow);
 * false: passed unchecked, or refused when c->refuse (struct st_call). */
bool st__enter(struct st_call *c);
void st__leave(struct st_call *c);

/* st__acc_init - prepare an access (no system call yet).  nofollow: 0 (the
 * last name is followed), nonzero (not followed), ST_NF_NAME (not followed,
 * and the call works on the name itself: unlink, rmdir, rename, mkdir, the
 * new name of link and symlink, mknod; a spelling ending in "/" does not
 * make the kernel follow a link there, as it does for lstat or lchown). */
#define ST_NF_NAME 3u
void st__acc_init(struct st_acc *a, int dirfd, const char *path, unsigned kind, unsigned nofollow);

/* st__pre - decide an access before the real call.  Returns 0 to go on, or
 * the errno (ENOENT, EACCES) with which the call must fail; a refusal is
 * recorded as a violation.  Preserves errno. */
int st__pre(struct st_acc *a);

/* st__post - record an access after the real call; err is its errno (0 on
 * success).  Preserves errno.  Releases what st__pre mapped. */
void st__post(struct st_acc *a, int err);

/* st__exec_failed - an exec whose record went before the call returned with
 * err: the program at (dirfd, path) did not run.  Sends the amendment
 * (SANDTRACE_AF_EXEC_FAILED) of that X record, named as it was: resolved,
 * or its absolute spelling (spelled).  why: the amended record is the
 * untraced record (the exec's untraced reason), not the X record.  Uses
 * access slot 1; preserves errno. */
void st__exec_failed(int dirfd, const char *path, bool nofollow, bool empty, bool spelled,
		     unsigned why, int err);

/* st__acc_done - release an access that is not passed to st__post. */
void st__acc_done(struct st_acc *a);

/* st__hidden - would the sandbox hide this name (relative to dirfd) from a
 * directory listing?  Only a denial counts, nothing is recorded, errno is
 * preserved.  Called inside an entered wrapper (uses access slot 1). */
bool st__hidden(int dirfd, const char *path);
/* st__entry_hidden - st__hidden of the entry name[0..nl) of a listed
 * directory whose absolute path is dir[0..dl) (dir has room for NAME_MAX + 2
 * bytes more).  ".", "..", a name longer than NAME_MAX, and any entry of a
 * directory that could not be named (dl < 0) never are, but every other
 * entry of one too deep to be named (dl == -ENAMETOOLONG: deeper than
 * 2 x PATH_MAX) is (fail closed).  dir[dl] is left NUL; inside an entered
 * wrapper. */
bool st__entry_hidden(char *dir, ssize_t dl, const char *name, size_t nl);
/* st__listing_dir - the path of the listed directory fd for
 * st__entry_hidden: in dir (PATH_MAX + NAME_MAX + 2 bytes), or, deeper than
 * PATH_MAX, in a mapping (*out, *map bytes: munmap it when *map); its
 * length, or -errno (-ENAMETOOLONG: deeper than 2 x PATH_MAX). */
ssize_t st__listing_dir(int fd, char *dir, char **out, size_t *map);
/* st__dir_map - a mapping with room for a directory's name of dl bytes and
 * an entry (cold: names longer than PATH_MAX); NULL, or *map its size. */
char *st__dir_map(size_t dl, size_t *map);
/* st__refused - would the sandbox refuse an access of this kind to this
 * name?  Its errno (ENOENT, EACCES), or 0.  Quiet like st__hidden: nothing
 * recorded, no violation; errno preserved; inside an entered wrapper. */
int st__refused(int dirfd, const char *path, unsigned kind, bool nofollow, bool empty);
/* st__resolve_exe - the program an exec of the absolute path will run, as
 * the kernel's /proc/<pid>/exe will name it (symlinks followed, the same
 * resolution as a judged access, memoised directories included), worked
 * out in the free access slot a: its length, with the path (no NUL) in
 * a->rbuf, where *out points until the slot's next use; -1 when it cannot
 * be resolved (too long, a /proc magic link).  Records nothing, preserves
 * errno.  Called inside an entered wrapper. */
ssize_t st__resolve_exe(struct st_acc *a, const char *path, const char **out);
/* st__listing_filtered - may listings need filtering in this run? (cheap) */
bool st__listing_filtered(void);
/* st__may_refuse - can the sandbox refuse an access in this run (a fence, a
 * policy that is not all allow, a deny or ask rule the daemon says it has)?
 * A call the shim cannot check is then refused (struct st_call refuse).
 * Reads st__g only (no refresh of the policy: safe in a vfork child);
 * async-signal-safe. */
bool st__may_refuse(void);

/* st__record_path - record an access of an already absolute path (no
 * decision), e.g. a file named by a libc function after it returned, a PATH
 * candidate that is not there, a link an exec ran through.  Never a
 * violation: the record says it was not judged (SANDTRACE_AF_UNJUDGED), and
 * the report carries the policy's verdict on the path. */
void st__record_path(int dirfd, const char *path, unsigned kind, bool nofollow, int err);
/* st__record_path0 - the same, in access slot 0, for a caller that entered
 * (st__enter) but holds no access of its own, and judged: a path the sandbox
 * denies is recorded as a violation (what the loader mapped, which no
 * wrapper could refuse).  Returns whether the outcome is keyed, the same for
 * any process (false: the spelling names a file through a /proc magic link,
 * a hidden or held directory decided it, a fail-open answer, or nothing was
 * recorded): the library sets' memo may stand only for keyed outcomes. */
bool st__record_path0(int dirfd, const char *path, unsigned kind, bool nofollow, int err);
/* st__own_judge - judge and record a file a libc function is about to open
 * by its own internal call (wrap_libc.c): 0 to make the call (recorded, as
 * there or with the errno of looking it up), or the errno (ENOENT, EACCES)
 * the caller fails with as libc does when it cannot open the file (the
 * refusal recorded as a violation; EACCES also for a version that fails
 * --verify under a fence).  Not inside an entered wrapper (it enters);
 * preserves errno. */
int st__own_judge(const char *path, unsigned kind);
/* st__own_check - the same judging core, for a caller already inside an
 * entered call (st__enter; access slot 0): the zone file's tz_judge, and
 * the libraries a dlopen loaded (found 0: they are there; -1: looked up
 * with a faccessat).  Marks the read as one made by path inside the call
 * (st_acc.loads), so a version that fails --verify is refused under a
 * fence.  errno is left to the caller. */
int st__own_check(const char *path, unsigned kind, int found);
/* st__nss_passwd - record the user database's files (nsswitch.conf, and
 * /etc/passwd for the files source) after a lookup libc made by an internal
 * call inside another public function (glob's and wordexp's tilde, cuserid,
 * getpw): wrap_fs.c's nss record, not refused.  Not inside an entered
 * wrapper; preserves errno. */
void st__nss_passwd(void);

/* st__fd_path - the path of an open descriptor of the calling thread (Linux:
 * /proc/thread-self/fd), NUL-terminated in buf (cap bytes); a removed file's
 * " (deleted)" mark is taken off.  Returns its length, or -errno: -ENOENT for
 * a non-file (pipe, socket, ...) and for a memfd (st__name_anonymous),
 * -ENAMETOOLONG for a directory too deep to name in cap bytes (one deeper than
 * PATH_MAX is named by st__dir_path_deep), -EBADF.  Preserves errno. */
ssize_t st__fd_path(int fd, char *buf, size_t cap); /* platform hook: shim/os/<system>.c */
/* st__dir_path_deep - the path of the directory dirfd (AT_FDCWD: the cwd)
 * when the kernel will not give it (deeper than PATH_MAX: getcwd and the
 * /proc link fail with ENAMETOOLONG): each level's name is looked up in its
 * parent's entries by device and inode, up to an ancestor the kernel names.
 * NUL-terminated in buf (cap bytes); its length, or -ENAMETOOLONG (longer
 * than cap), -ENOENT (unreachable, removed), -errno of a step.  Raw system
 * calls only: no malloc, async-signal-safe; a few descriptors are opened
 * and closed on the way.  Preserves errno. */
ssize_t st__dir_path_deep(int dirfd, char *buf, size_t cap); /* platform hook */
/* st__at_deep - the *at system call nr (dirfd, name, a3, a4) of the absolute
 * name p[0..len), NUL-terminated, that the kernel refuses whole
 * (ENAMETOOLONG: deeper than PATH_MAX): made relative to the directory that
 * holds its last component, opened by a chain of openat(O_PATH) over pieces
 * shorter than PATH_MAX (the components before the last are followed) and
 * closed again.  libc's contract (-1 and errno).  Raw system calls only,
 * async-signal-safe (shim/path.c).  A verdict must not depend on the
 * shim's own ENAMETOOLONG: every question the shim asks of a path it
 * built (a readlink in the walk, an existence or type check, an exec's
 * probe) takes this way when the name is too long. */
long st__at_deep(long nr, const char *p, size_t len, long a3, long a4);
/* st__at_abs - nr(AT_FDCWD, p, a3, a4), and for an absolute p too long for
 * the kernel, st__at_deep: the same answer at any depth.  A name shorter
 * than PATH_MAX costs the call by name and a test of its result.  Not
 * inline: each copy would grow the code in front of first_tls
 * (tests/shim_layout.py). */
long st__at_abs(long nr, const char *p, long a3, long a4);
/* st__fd_name - the same, byte for byte as the kernel names it (a removed
 * file keeps its " (deleted)", as /proc/PID/exe does). */
ssize_t st__fd_name(int fd, char *buf, size_t cap); /* platform hook: shim/os/<system>.c */
/* st__name_deleted - does name[0..n), a name st__fd_name gave, end in the
 * kernel's mark of a removed file, " (deleted)"? */
static inline bool st__name_deleted(const char *name, size_t n)
{
	return n > 10 && memcmp(name + n - 10, " (deleted)", 10) == 0;
}
/* st__name_anonymous - is name[0..n), as the kernel names an open file, a
 * file with no place in any file system: a memfd ("/memfd:NAME (deleted)",
 * memfd_create(2)).  What is read or run from one was written by the
 * process or handed to it, never a dependency on a path.  Async-signal-safe. */
static inline bool st__name_anonymous(const char *name, size_t n)
{
	return n > 7 && memcmp(name, "/memfd:", 7) == 0 && st__name_deleted(name, n);
}

/* st__arena_open - open the arena object NAME, a POSIX shared-memory name or
 * a path (platform hook, shim/os/): returns a close-on-exec descriptor and
 * stores its size and its file system's block size (st_blksize), in bytes,
 * or returns -errno.  Preserves errno.  Async-signal-safe. */
int st__arena_open(const char *name, uint64_t *size, uint64_t *blksize);

/* st__parse_uint - a decimal number, without strtoul (whose locale tables
 * would be one more page for every process to fault in); stops at the
 * first non-digit.  Async-signal-safe. */
unsigned st__parse_uint(const char *s);

/* st__dir_slot - the per-directory generation slot (0..nslots-1, nslots a
 * power of two) of the directory part of p[0..len) ("/a/b" -> "/a/"; all of
 * p when it ends in '/'): a hash of its length, its last sixteen bytes and
 * eight from its middle, fully mixed, so that siblings (names that differ
 * in their last bytes) spread; names alike in every byte read share a slot,
 * which only widens what a bump invalidates.  Pure. */
unsigned st__dir_slot(const char *p, size_t len, unsigned nslots);

/* Path helpers (path.c, also unit tested).  Return the length or -1.
 * st__path_join: base[0..blen) joined with rel (rlen = strlen(rel)); out may
 * be base itself (joined in place), but no other overlap. */
ssize_t st__path_join(const char *base, size_t blen, const char *rel, size_t rlen, char *out,
		      size_t cap);
/* Is p (absolute, len bytes) clean already: no "//", no "." or ".." component, no trailing
 * '/'?  (A name starting with '.' also answers false: the slow path is right for it too.) */
bool st__path_is_clean(const char *p, size_t len);
ssize_t st__path_clean(char *p, size_t len);     /* collapse //, /./, trailing / ; keeps .. */
ssize_t st__path_fold(char *p, size_t len);      /* lexical fold of .. too (no symlink check) */
/* What st__path_resolve is told, beside the path, and tells back. */
struct st_walk {
	/* in: the length of a prefix of the path, ending before a '/', that
	 * the caller knows resolves to itself (no component a link, no "." or
	 * ".."): taken as is, without a readlink (0: none).  Its last name
	 * is not vouched to be a directory: a ".." right after it is asked
	 * of the kernel (ENOTDIR at a file) */
	size_t known;
	/* in: RESOLVE_IN_ROOT's root, the length of a prefix of the path, at
	 * most known, that ".." never leaves and where an absolute link's
	 * target starts (a /proc magic link's still jumps), as openat2(2) does
	 * (0: the real root) */
	size_t root;
	/* in: the length of a prefix of the path that names a directory the
	 * process holds (its cwd or the dirfd a relative name was given
	 * with; 0: none): it and its ancestors are never asked of through
	 * (a process may leave the directory it is in by "..", hidden or
	 * not, as it may leave a removed one) */
	size_t held;
	/* in: ask through of those too, and say ST_VIA_HELD when it refuses
	 * one (the walk goes on): the outcome holds for this process only */
	bool ask_held;
	/* in, or NULL: asked of each directory a ".." component leaves, and
	 * of the directory of each symlink whose absolute target the walk
	 * goes on from (dir[0..len), NUL-terminated, resolved), before it is
	 * left; false
	 * (the sandbox hides it, so the kernel's lookup of ".." in it would
	 * fail) ends the walk there: out names that directory and via_link
	 * gets ST_VIA_HIDDEN.  Must be async-signal-safe. */
	bool (*through)(const char *dir, size_t len);
	/* out: the length of the longest prefix of the path, at a component
	 * boundary, that this walk found to resolve to itself (known included;
	 * 0 on the -1 and loop returns) */
	size_t confirmed;
	/* out: ST_VIA_LINK when a symlink was followed on the way;
	 * ST_VIA_MAGIC when one of them was a /proc magic link (what it names
	 * moves with the process); ST_VIA_HIDDEN and ST_VIA_HELD as above */
	unsigned via_link;
	/* out: the -1 return was for want of room: in out (a caller with a
	 * short out may try again with a longer one), or in scratch (in, or
	 * what is left to walk after a link, is longer than scap) */
	bool overflow;
};
#define ST_VIA_LINK 1u
#define ST_VIA_MAGIC 2u
#define ST_VIA_HIDDEN 4u
#define ST_VIA_HELD 8u
/* ST_VIA_SHORT: the walk stopped at a name that is missing (ENOENT) with two
 * or more names after it, or below a non-directory (ENOTDIR) with one or more,
 * the rest taken as spelled.  What the spelling means then changes when a link
 * is made at that name, even a link to a file, which moves only the slots of
 * the name's directory and its own (fs_gen_bump, BUMP_NAME), not the deeper
 * one of the spelling: its keys are key_via_link's, as through a link. */
#define ST_VIA_SHORT 16u
/* ST_VIA_UNSURE: the walk stopped before a ".." of the spelling (a name
 * missing, or no directory, on the way): once the name is made (mkdir,
 * creat, a rename to it), which moves no generation, the ".." folds and the
 * spelling names another place (d/x/../../h/f: d/x, then h/f).  No key at
 * all: resolved each time. */
#define ST_VIA_UNSURE 32u
/* st__path_resolve - resolve symlinks as the kernel would (all components,
 * the last one only if follow).  in is absolute.  Returns the length, or -1
 * when the path leads to a non-file (pipe:[N], socket:[N], anon_inode) and
 * sets *magic when the whole path is a /proc/<pid>/{fd/N,exe,cwd,root} link
 * (through one, the rest is resolved and judged like any path).  A loop gives
 * up after 40 links and returns the input, folded.  Uses readlink only.
 * w (NULL: nothing to tell) carries the options and results of struct
 * st_walk.  Async-signal-safe. */
ssize_t st__path_resolve(const char *in, size_t len, bool follow, char *out, size_t cap,
			 bool *magic, char *scratch, size_t scap, struct st_walk *w);

/* Connection (client.c).  All preserve errno and never allocate. */
int st__send_access(const struct sandtrace_access *acc, const char *path, size_t len,
		    const char *path2, size_t len2);
int st__request(unsigned kind, const char *path, size_t len, struct sandtrace_verdict *v);
/* st__request_verify - ask the daemon whether this version (id) of path
 * matches the --verify manifest (ACCESS with AF_REPLY|AF_VERIFY|AF_IDENTITY;
 * refuses: the caller refuses a version that fails, AF_REFUSES). */
int st__request_verify(unsigned kind, const char *path, size_t len,
		       const struct sandtrace_identity *id, bool refuses, struct sandtrace_verdict *v);
void st__send_exit(int status, bool child, pid_t pid);
void st__hello(void);
/* st__note_libraries - record the shared objects mapped in this process.
 * Preserves errno. */
void st__note_libraries(void);
/*
 * What a dlopen the shim makes itself adds to the link map (its DT_NEEDED,
 * which the loader finds and opens itself, unseen), to be judged when it
 * returns: st__dl_snap, before the call, lists the objects of every
 * namespace (their link maps and load addresses); st__dl_added, after it,
 * the names (absolute, or relative to the cwd as the loader found them;
 * not the shim's own, nor the vDSO's) of the objects of the namespace of
 * the handle h that the snapshot did not hold, one NUL-terminated name
 * after another in a buffer to free (NULL: none, or not told: a snapshot
 * or a buffer that could not be allocated).  skip_main leaves h's own out;
 * *main_at is the offset of h's name, or -1.  An object another thread's
 * dlopen added meanwhile is listed too (the loader serialises the two
 * calls, not the walks around them); one taken out and a new one made at
 * the same address and load base is not.  Both preserve errno; not
 * async-signal-safe (malloc, dl_iterate_phdr's lock): for dlopen's callers.
 */
#define ST_DL_SMALL 64
struct st_dl_obj {
	const struct link_map *map;
	uintptr_t addr;
};
struct st_dl_snap {
	struct st_dl_obj *objs; /* small, or a malloc'ed array */
	unsigned n, cap;
	bool ok; /* every object listed */
	struct st_dl_obj small[ST_DL_SMALL];
};
/* st__dl_lock_child - in a forked child: the lock of the dlopen wrappers'
 * judged calls (wrap_fs.c dl_lock) free again, unless this thread held it */
void st__dl_lock_child(void);
void st__dl_snap(struct st_dl_snap *s);
void st__dl_snap_free(struct st_dl_snap *s);
char *st__dl_added(const struct st_dl_snap *s, void *h, bool skip_main, size_t *len, int *main_at);
/* This thread entered a dlopen by a tail call (st__libs_later) and has not
 * noted the libraries since: another thread's checked call may have come
 * while the loader was still searching, and taken libs_pending. */
extern __thread bool st__libs_mine;
/*
 * st__libs_later - a dlopen is about to be entered by a tail call (glibc
 * takes the caller of dlopen from its return address: the search of the
 * caller's DT_RUNPATH and a $ORIGIN in the name are the program's only when
 * the shim leaves no frame of its own), so nothing runs after it: what it
 * loads is noted at the thread's or another thread's next checked call
 * (st__enter), a dlclose, an exec, or the exit.  A checked call of another
 * thread that comes before the load completes notes too early; the thread
 * that made the dlopen notes again at its own next checked call (or dlclose,
 * or its end: st__libs_mine; the thread's buffers are made here, if it had
 * none yet, for their destructor, tls_free, to run at its end), and the
 * exit's look still records what is loaded.
 */
static inline void st__libs_later(void)
{
	if (st__g.active)
		(void)st__tls();
	st__libs_mine = true;
	atomic_store_explicit(&st__g.dlopened, 1, memory_order_relaxed);
	atomic_store_explicit(&st__g.libs_pending, 1, memory_order_relaxed);
}
/* st__libs_flush - note the libraries if a dlopen left them pending, or this
 * thread's dlopen did (all: also at exit when any dlopen was made).
 * st__libs_due says whether it has anything to do (all false): two loads, for
 * the hot paths to test before they call. */
void st__libs_flush(bool all);
static inline bool st__libs_due(void)
{
	return st__libs_mine || atomic_load_explicit(&st__g.libs_pending, memory_order_relaxed);
}
/* st__log_record - append a record to this thread's chunk of the arena's log.
 * 0, or -1 when there is no log (or it is full): send it over the socket. */
int st__log_record(unsigned type, uint32_t flags, const struct iovec *iov, int n);
/* st__log_hello - this image's HELLO, to the log (argv from the constructor).
 * st__log_hello_as(ppid): a forked child's, its parent being ppid (> 0): no
 * system call when the parent's HELLO kept the executable's name.  false:
 * no log (send it over the socket). */
bool st__log_hello(void);
bool st__log_hello_as(int32_t ppid);
/* st__log_seal - the calling thread is done with its chunk (st__logtls; a
 * vfork child's own, st__vf's, in a vfork child). */
void st__log_seal(void);

/* Exec support (wrap_exec.c). */
void st__exit_hook(int status);

/* cwd cache (check.c): st__getcwd returns the length, or -errno from the
 * kernel (-ENAMETOOLONG: deeper than PATH_MAX; -ENOENT: unreachable).
 * Preserves errno. */
ssize_t st__getcwd(char *buf, size_t cap);
void st__cwd_invalidate(void);
/* st__fs_gen_bump_global - after a namespace change that can move how any
 * path resolves (mount, umount): every cached resolution and verdict of a
 * spelling misses from now on (the arena's global generation; the cwd cache
 * follows it).  Lock-free, async-signal-safe; nothing without an arena. */
void st__fs_gen_bump_global(void);

/* st__mount_api - syscall(nr, ...) of the mount API's path-taking calls
 * (open_tree, open_tree_attr, move_mount, fspick, mount_setattr, fsconfig),
 * checked and recorded as their libc wrappers (wrap_fs.c); another nr is
 * forwarded.  open_tree_attr (Linux 6.15) has the same number on every
 * architecture of the unified table; glibc 2.36 has no name for it. */
#ifdef SYS_mount_setattr
#define ST_HAVE_MOUNT_API 1
#if defined(__x86_64__) || defined(__aarch64__)
#define ST_SYS_open_tree_attr 467
#endif
long st__mount_api(long nr, long a1, long a2, long a3, long a4, long a5);
#endif

/* syscall() of quotactl, pivot_root and uselib (wrap_fs.c): checked and
 * recorded as the libc wrappers of the first two are, forwarded as
 * syscall(nr, ...); the same result and errno. */
long st__quotactl(long cmd, long special, long id, long addr);
long st__pivot_root(long new_root, long put_old);
long st__uselib(long path);

/* raw syscall dispatch for syscall() (wrap_sys.c) */
long st__syscall_path(long nr, long a1, long a2, long a3, long a4, long a5, long a6, bool *handled);

#endif
