/* shim/init.c - real-symbol slots, on-demand initialisation, constructor and fork handling of the preload. */
#include <stdlib.h>
#include <link.h>
#include <signal.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandtrace/ctrie.h"
#include "shim.h"

/* __libc_start_main's slot, which every process writes at its start, in
 * .data: on the page its relocations write (the bss behind it moves off that
 * page by what env_room takes of it; tests/shim_layout.py) */
extern _Atomic(void *) st__real___libc_start_main __attribute__((section(".data")));
#define SYM(ret, name, params) _Atomic(void *) st__real_##name;
#include "symbols.def"
#undef SYM

struct st_state st__g = {.fd = -1,
			  .lock = PTHREAD_MUTEX_INITIALIZER,
			  .socket_path = "",
			  .arena_name = "",
			  .lib_path = "",
			  .audit_path = ""};
/* the strings st__g points at (see struct st_state): sun_path, the arena
 * name, two paths and their NULs */
static char env_store[108 + SANDTRACE_ARENA_NAME_MAX + 2 * PATH_MAX + 4];
ST_HOT static size_t env_used;
__thread int st__depth;
__thread int st__level;
__thread bool st__aside; /* shim.h */
__thread uintptr_t st__frame[ST_MAX_LEVEL + 1]; /* shim.h */
/* the call checked aside: its st_call's address, and the interrupted call's
 * frames (its st__depth, st__level and buffers are in that st_call, which a
 * siglongjmp out of the aside call may leave overwritten: kept here too) */
static __thread uintptr_t aside_frame;
static __thread struct st_call aside_saved;
static __thread uintptr_t aside_saved_frame[ST_MAX_LEVEL + 1];
/* the thread's buffers for a call checked aside (st__aside), mapped at its
 * first such call, unmapped with the thread's own (tls_free) */
static __thread struct st_tls *aside_bufs;
__thread struct st_tls *st__tls_bufs; /* shim.h */
ST_HOT static pthread_key_t tls_key;
ST_HOT static _Atomic int tls_key_state; /* 0 none, 1 being created, 2 created */

/* The first thread's buffers (normally the main thread's): static, so a
 * process that never starts a thread makes no mmap (and no munmap) for them.
 * In a section of their own, which layout.ld places after .bss on a page
 * of its own (aligning the variable would align all of .bss, and push the
 * small variables the start writes off the page of .data; left in .bss it
 * moved with every variable added before it): tests/shim_layout.py checks
 * that it starts in the first half of a page, which keeps its first
 * access's head on one page (shim.h, ST_ACC_HEAD_END). */
static struct st_tls first_tls __attribute__((section(".bss.st_first_tls")));
ST_HOT static _Atomic int first_tls_taken;

static void tls_free(void *p)
{
	/* the end of a thread whose dlopen was noted too early (st__libs_mine) */
	if (st__libs_mine && !st__depth)
		st__libs_flush(false);
	st__log_seal(); /* this thread's chunk: a key destructor runs in its thread */
	/* another thread-exit destructor may still make a checked call: it
	 * must map fresh buffers (freed on the next destructor round), not
	 * use these */
	if (st__tls_bufs == p)
		st__tls_bufs = NULL;
	if (p != &first_tls) /* first_tls is not handed out again */
		st__munmap(p, sizeof(struct st_tls));
	struct st_tls *b = aside_bufs;
	aside_bufs = NULL; /* before the unmap: a handler that comes now maps its own */
	atomic_signal_fence(memory_order_seq_cst);
	if (b)
		st__munmap(b, sizeof(struct st_tls));
}

static void tls_key_init(void)
{
	/* keys below PTHREAD_KEY_2NDLEVEL_SIZE use a static per-thread array:
	 * pthread_setspecific does not allocate */
	pthread_key_create(&tls_key, tls_free);
}

struct st_tls *st__tls(void)
{
	if (st__tls_bufs)
		return st__tls_bufs;
	void *m;
	int taken = 0;
	if (atomic_compare_exchange_strong_explicit(&first_tls_taken, &taken, 1,
						    memory_order_relaxed, memory_order_relaxed)) {
		m = &first_tls;
	} else {
		/* st__mmap (rawsys.h): libc's is a page of its code that this part
		 * of the shim (shim/layout.ld) does not touch */
		m = st__mmap(NULL, sizeof(struct st_tls), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
	}
	/* once, without pthread_once: glibc's wakes waiters with a futex
	 * system call on every first use, in every process */
	int st = 0;
	if (atomic_load_explicit(&tls_key_state, memory_order_acquire) != 2) {
		if (atomic_compare_exchange_strong_explicit(&tls_key_state, &st, 1,
							    memory_order_acq_rel,
							    memory_order_acquire)) {
			tls_key_init();
			atomic_store_explicit(&tls_key_state, 2, memory_order_release);
		} else {
			while (atomic_load_explicit(&tls_key_state, memory_order_acquire) != 2)
				sched_yield();
		}
	}
	pthread_setspecific(tls_key, m);
	st__tls_bufs = m;
	return m;
}

long st__enosys_stub(void)
{
	errno = ENOSYS;
	return -1;
}

void *st__resolve(_Atomic(void *) *slot, const char *name)
{
	/* dlsym on a found symbol does not allocate in glibc >= 2.34 (the
	 * dlerror buffer is only allocated on failure); it may still take
	 * the loader lock, which malloc never holds. */
	void *p = dlsym(RTLD_NEXT, name);
#if defined(__x86_64__)
	/* compat-only symbols (the pre-2.33 __xstat ABI) have no default
	 * version: ask for the base one */
	if (!p)
		p = dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5");
#endif
	if (!p)
		p = (void *)st__enosys_stub;
	/* release: a reader that sees the pointer may call through it */
	atomic_store_explicit(slot, p, memory_order_release);
	return p;
}

/* getenv without locale or allocation, usable before libc finished its
 * own initialisation (environ is set by the loader before any constructor). */
extern char **environ;
static const char *env_get(const char *name)
{
	if (!environ)
		return NULL;
	for (char **e = environ; *e; e++) {
		const char *v = st__skip_prefix(*e, name);
		if (v && *v == '=')
			return v + 1;
	}
	return NULL;
}

/* Copy variable NAME (at most max - 1 bytes) into st__g.env_small, or
 * env_store when it is full, and point *dst
 * at the copy; a longer value is ignored (*dst stays ""). */
static void copy_env(const char **dst, size_t max, const char *name)
{
	const char *v = env_get(name);
	if (!v)
		return;
	size_t n = st__strlen(v);
	if (n >= max)
		return;
	char *d;
	if (st__g.env_small_used + n + 1 <= sizeof(st__g.env_small)) {
		d = st__g.env_small + st__g.env_small_used;
		st__g.env_small_used += n + 1;
	} else if (env_used + n + 1 <= sizeof(env_store)) {
		d = env_store + env_used;
		env_used += n + 1;
	} else {
		return;
	}
	st__copy(d, v, n + 1);
	*dst = d;
}

/* The auxiliary vector on the initial stack, found by the constructor (NULL
 * until then, or when it could not tell): see st__auxval. */
ST_HOT static const ElfW(auxv_t) *auxv_at;

unsigned long st__auxval(unsigned long type)
{
	const ElfW(auxv_t) *a = auxv_at;
	if (!a)
		return getauxval(type);
	for (; a->a_type != AT_NULL; a++)
		if (a->a_type == type)
			return a->a_un.a_val;
	errno = ENOENT;
	return 0;
}

/* Find the auxiliary vector after the environment that the loader handed the
 * constructors: envp is then argv + argc + 1 on the initial stack (a dlopen
 * hands the current environ instead, which may be another array), and the
 * vector follows its NULL.  An earlier constructor's unsetenv shifts entries
 * down in that array and leaves NULLs before the old terminator: they are
 * skipped (an entry's type is never 0 but the vector's last). */
static void find_auxv(int argc, char **argv, char **envp)
{
	if (argc < 0 || !argv || !envp || envp != argv + argc + 1)
		return;
	char **e = envp;
	while (*e)
		e++;
	for (int n = 0; !*e; n++, e++)
		if (n == 256) /* not a shifted environment: ask libc */
			return;
	const ElfW(auxv_t) *a = (const ElfW(auxv_t) *)(void *)e;
	if (a->a_type > 0 && a->a_type < 64) /* the AT_ types in use are below 64 */
		auxv_at = a;
}

/* Take the executable the parent's exec wrapper resolved (SANDTRACE_ENV_EXE)
 * when it was resolved for this very exec: the path the kernel was handed
 * (AT_EXECFN) is the one the hint names.  Saves the readlink of
 * /proc/self/exe: 25-36 us of a process's start on this project's VM
 * (docs/BENCHMARKS.md, stop 15). */
static void take_exe_hint(void)
{
	const char *v = env_get(SANDTRACE_ENV_EXE);
	const char *fn = (const char *)st__auxval(AT_EXECFN);
	if (!v || !fn || fn[0] != '/')
		return;
	size_t n = 0;
	for (; *v >= '0' && *v <= '9' && n <= PATH_MAX; v++)
		n = n * 10 + (size_t)(*v - '0');
	if (*v++ != ':' || n > PATH_MAX)
		return;
	/* v's first n bytes are fn's, and fn ends there (a NUL in v stops the
	 * loop at fn's, which differs from it or ends fn early) */
	size_t i = 0;
	while (i < n && v[i] && v[i] == fn[i])
		i++;
	if (i != n || fn[n] != 0)
		return;
	const char *r = v + n;
	size_t rl = st__strlen(r);
	if (r[0] != '/' || rl > sizeof(st__g.exe))
		return;
	st__copy(st__g.exe, r, rl);
	st__g.exe_len = (uint16_t)rl;
}

bool st__policy_take(void)
{
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(&st__g.arena);
	/* the generation first: a table published after it is newer, never older */
	uint64_t gen = atomic_load_explicit(&h->generation, memory_order_acquire);
	/* acquire: the table's bytes were written before the daemon published
	 * its offset */
	uint64_t off = atomic_load_explicit(&h->policy, memory_order_acquire);
	const struct sandtrace_policy_table *t = sandtrace_arena_ptr(&st__g.arena, off, sizeof(*t));
	bool ok = t && sandtrace_arena_ptr(&st__g.arena, off,
					   sizeof(*t) + (uint64_t)t->nrules * sizeof(t->rules[0]));
	/* the matcher trusts prefix offsets: check them once here */
	for (uint32_t i = 0; ok && i < t->nrules; i++)
		ok = sandtrace_arena_ptr(&st__g.arena, t->rules[i].prefix_off,
					 t->rules[i].prefix_len) != NULL;
	if (ok) {
		/* trivial: no rule can refuse anything (trace only, or only
		 * allow rules such as the command's own): no verdicts needed */
		bool all_allow = t->default_action == SANDTRACE_ALLOW;
		bool asks = t->default_action == SANDTRACE_ASK;
		for (uint32_t i = 0; i < t->nrules; i++) {
			all_allow = all_allow && t->rules[i].action == SANDTRACE_ALLOW;
			asks = asks || t->rules[i].action == SANDTRACE_ASK;
		}
		atomic_store(&st__g.policy, t);
		atomic_store(&st__g.trivial_policy, all_allow);
		atomic_store(&st__g.policy_asks, asks);
	}
	/* even when malformed: not re-checked on every call */
	atomic_store_explicit(&st__g.policy_gen, gen, memory_order_release);
	return ok;
}

void st__init(void)
{
	int expect = 0;
	if (atomic_load_explicit(&st__g.init, memory_order_acquire) == 2)
		return;
	/* acq_rel: the winner initialises; losers wait for init == 2 */
	if (!atomic_compare_exchange_strong_explicit(&st__g.init, &expect, 1,
						     memory_order_acq_rel, memory_order_acquire)) {
		while (atomic_load_explicit(&st__g.init, memory_order_acquire) != 2)
			sched_yield();
		return;
	}
	int saved = errno;
	copy_env(&st__g.socket_path, 108, SANDTRACE_ENV_SOCKET);
	copy_env(&st__g.arena_name, SANDTRACE_ARENA_NAME_MAX, SANDTRACE_ENV_ARENA);
	copy_env(&st__g.lib_path, PATH_MAX, SANDTRACE_ENV_LIB);
	copy_env(&st__g.audit_path, PATH_MAX, SANDTRACE_ENV_AUDIT);
	st__g.audit = st__g.audit_path[0] != 0;
	const char *f = env_get(SANDTRACE_ENV_FLAGS);
	st__g.flags = f ? st__parse_uint(f) : 0;
	const char *rt = env_get(SANDTRACE_ENV_REPLY_TIMEOUT);
	unsigned rtms = rt ? st__parse_uint(rt) : 0;
	st__g.reply_timeout_ms = rtms <= 10000 ? rtms : 0;
	st__g.launcher = (st__g.flags & SANDTRACE_F_LAUNCHER) != 0;
	st__g.flags &= ~SANDTRACE_F_LAUNCHER; /* what is re-injected at exec */
	st__g.active = st__g.socket_path[0] != 0;
	if (st__g.active)
		take_exe_hint();
	st__g.pid = (int32_t)ST_SYSCALL(SYS_getpid);
	/* the real uid the kernel gave the image (AT_UID), as getuid() says
	 * before the program could change it: one system call fewer */
	errno = 0;
	unsigned long uid = st__auxval(AT_UID);
	st__g.uid = uid || !errno ? (uint32_t)uid : (uint32_t)ST_SYSCALL(SYS_getuid);
	if (st__g.active && st__g.arena_name[0] && !(st__g.flags & SANDTRACE_F_NO_CACHE)) {
		uint64_t size = 0, blksize = 0;
		int fd = st__arena_open(st__g.arena_name, &size, &blksize);
		int r = fd;
		if (fd >= 0) {
			r = sandtrace_arena_map_fd(&st__g.arena, fd, size, blksize);
			ST_SYSCALL(SYS_close, fd);
		}
		if (r < 0) {
			st__g.arena_err = r;
			st__g.arena.base = NULL;
		} else {
			struct sandtrace_arena_header *h = sandtrace_arena_hdr(&st__g.arena);
			if (st__policy_take()) {
				st__g.log_ok = atomic_load_explicit(&h->log_table,
								    memory_order_acquire) != 0;
			} else {
				st__g.arena_err = -EPROTO;
				sandtrace_arena_detach(&st__g.arena);
			}
		}
	}
	st__g.hit_fast = st__g.active && st__g.arena.base &&
			 !(st__g.flags &
			   (SANDTRACE_F_RECORD_ALL | SANDTRACE_F_IDENTITY | SANDTRACE_F_VERIFY));
	errno = saved;
	atomic_store_explicit(&st__g.init, 2, memory_order_release);
}

/* How far this process's last walk that recorded went: the loader's count of
 * objects taken out then (high 32 bits), and how many objects it went
 * through, all recorded (the earlier ones by an earlier walk).  While no
 * object was taken out since, those are still the list's first ones (the
 * loader appends): a walk after a dlopen records only the objects after them,
 * not again every library of the process for each library it opens. */
/* In .data, beside st__g: a forked child resets both (st__after_fork_child), and
 * each page of the shim's data a child writes is a copy-on-write fault of its own */
static _Atomic uint64_t noted_upto __attribute__((section(".data")));

void st__after_fork_child(void)
{
	/* by assignment: pthread_mutex_init would be a page of libc's code to
	 * fault in again in every forked child */
	st__g.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	/* the parent's connection: ours to close, unless the program had
	 * taken its number before the fork (dup2 onto it, closefrom and an
	 * open): then the child's copy is the program's file */
	if (st__g.fd >= 0 && st__conn_fd_same())
		ST_SYSCALL(SYS_close, st__g.fd);
	st__g.fd = -1;
	/* two stores: merged, GCC loads the pair from .rodata, a page of its
	 * own that every forked child then faults in */
	__asm__ volatile("" ::: "memory");
	st__g.fd_pid = 0;
	st__g.pid = (int32_t)ST_SYSCALL(SYS_getpid);
	st__g.hello_logged = false;
	st__g.hello_sent = false;
	/* release: a thread that sees the new generation drops its chunk */
	atomic_fetch_add_explicit(&st__g.fork_gen, 1, memory_order_release);
	atomic_store_explicit(&st__g.calls, 0, memory_order_relaxed);
	atomic_store_explicit(&st__g.hits, 0, memory_order_relaxed);
	atomic_store_explicit(&st__g.messages, 0, memory_order_relaxed);
	atomic_store_explicit(&st__g.lost, 0, memory_order_relaxed);
	atomic_store_explicit(&st__g.exit_sent, 0, memory_order_relaxed);
	atomic_store_explicit(&noted_upto, 0, memory_order_relaxed); /* a process of its own */
}

__thread bool st__libs_mine; /* shim.h */

void st__libs_flush(bool all)
{
	bool mine = st__libs_mine;
	st__libs_mine = false;
	bool pending = atomic_load_explicit(&st__g.libs_pending, memory_order_relaxed) &&
		       atomic_exchange_explicit(&st__g.libs_pending, 0, memory_order_relaxed);
	if (mine || pending || (all && atomic_load_explicit(&st__g.dlopened, memory_order_relaxed)))
		st__note_libraries();
}

/* A call of a traced process that st__enter cannot check: unrecorded (the
 * trace says it is incomplete), and refused when the sandbox can refuse
 * (struct st_call refuse).  Async-signal-safe; errno preserved. */
static __attribute__((noinline)) bool unchecked(struct st_call *c)
{
	st__note_lost();
	c->refuse = st__may_refuse();
	return false;
}

/*
 * A checked call that came while this thread's own checked call runs the
 * shim's code (st__depth), or forwards at the deepest level: a signal
 * handler's (shim.h, st__aside).  It gets a context of its own, in which it
 * is judged and recorded as an outermost call.  Async-signal-safe: only
 * this thread's variables, swapped in order, with a system call (mmap) the
 * first time.  Not in a vfork child (the thread's variables are its
 * suspended parent's), nor while a call aside runs: those cannot be checked
 * (unchecked: refused under a sandbox that can refuse, counted lost).
 */
static __attribute__((noinline)) bool enter_aside(struct st_call *c)
{
	if (atomic_load_explicit(&st__g.init, memory_order_acquire) != 2 ||
	    !st__g.active)
		return false;
	if (st__aside || st__vchild)
		return unchecked(c);
	c->saved_errno = errno;
	struct st_tls *b = aside_bufs;
	if (!b) {
		/* a handler that comes between the map and the store maps one of
		 * its own: one mapping leaked, never one shared */
		void *m = st__mmap(NULL, sizeof(struct st_tls), PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			errno = c->saved_errno;
			return unchecked(c);
		}
		aside_bufs = b = m;
	}
	c->depth = st__depth;
	c->level = st__level;
	c->bufs = st__tls_bufs;
	c->aside = true;
	aside_saved = *c;
	memcpy(aside_saved_frame, st__frame, sizeof st__frame);
	aside_frame = (uintptr_t)c;
	/* st__aside first: a handler that interrupts what follows passes */
	st__aside = true;
	atomic_signal_fence(memory_order_seq_cst);
	st__tls_bufs = b;
	st__depth = 1;
	st__level = 1;
	atomic_signal_fence(memory_order_seq_cst);
	return true;
}

/* The aside call is left without its st__leave: the interrupted call's
 * state back, as st__leave would put it.  Async-signal-safe. */
static void drop_aside(void)
{
	st__tls_bufs = aside_saved.bufs;
	st__depth = aside_saved.depth;
	st__level = aside_saved.level;
	memcpy(st__frame, aside_saved_frame, sizeof st__frame);
	atomic_signal_fence(memory_order_seq_cst);
	st__aside = false;
}

/*
 * A call that finds the thread inside the shim's code or inside another
 * checked call: is that call still running?  A signal handler that
 * siglongjmps out of it (the old alarm-and-siglongjmp timeout around a
 * blocking open of a FIFO) skips its st__leave, and left st__level,
 * st__depth and st__aside as they were for good: every later call of the
 * thread went aside, then (once an aside call was jumped out of) passed
 * unchecked, a fence escape.  Each checked call's st_call (or st_fast) is
 * on its wrapper's frame (st__frame, by level; aside_frame): one at or
 * above the new call's on the stack (which grows down) has been left, its
 * state is dropped.  A handler on an alternate signal stack may be
 * anywhere: there nothing is dropped.  Async-signal-safe.
 */
static __attribute__((noinline)) void drop_left(uintptr_t here)
{
	bool left = (st__aside && here >= aside_frame) ||
		    (st__level > 0 && here >= st__frame[st__level]);
	if (!left)
		return;
	stack_t ss;
	if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK))
		return;
	if (st__aside && here >= aside_frame)
		drop_aside();
	while (st__level > 0 && here >= st__frame[st__level]) {
		st__level--;
		st__depth = 0; /* the call below it was forwarding, or none is left */
	}
}

/* The stack pointer a longjmp to env returns to, or 0 when it cannot be
 * told.  glibc on x86-64 keeps it in __jmpbuf[6] (JB_RSP) mangled
 * (PTR_MANGLE: xor with the thread's pointer guard, %fs:0x30 in its
 * tcbhead_t, then a rotation left by 17): an ABI of glibc's own, not a
 * documented interface, so it is checked once against a setjmp made here
 * (jmp_abi) and not used when that does not come out as this frame. */
static uintptr_t jmp_sp_raw(const struct __jmp_buf_tag *env)
{
#if defined(__x86_64__) && defined(__GLIBC__)
	uintptr_t v = (uintptr_t)env->__jmpbuf[6], guard;
	__asm__("mov %%fs:0x30, %0" : "=r"(guard));
	return ((v >> 17) | (v << 47)) ^ guard;
#else
	(void)env;
	return 0;
#endif
}
static _Atomic int jmp_abi; /* 0 not checked yet, 1 jmp_sp_raw holds, -1 it does not */
static __attribute__((noinline)) int jmp_abi_check(void)
{
	jmp_buf jb;
	if (_setjmp(jb) != 0) /* never jumped to */
		return -1;
	uintptr_t sp = jmp_sp_raw(jb), at = (uintptr_t)&jb;
	return sp && sp <= at && at - sp < 4096 ? 1 : -1;
}
static uintptr_t jmp_sp(const struct __jmp_buf_tag *env)
{
	int ok = atomic_load_explicit(&jmp_abi, memory_order_relaxed);
	if (!ok) {
		ok = jmp_abi_check();
		atomic_store_explicit(&jmp_abi, ok, memory_order_relaxed);
	}
	return ok > 0 ? jmp_sp_raw(env) : 0;
}

void st__jump_out(const struct __jmp_buf_tag *env)
{
	if (!st__aside && !st__level)
		return;
	uintptr_t to = jmp_sp(env);
	if (!to)
		return;
	int saved = errno;
	/* a frame is unwound when it is below the target on the same stack, or
	 * on the alternate signal stack when the target is not (the jump
	 * leaves that stack's handler whole); a frame on another stack than the
	 * alternate one is never unwound by a jump to the alternate one */
	uintptr_t lo = 0, hi = 0;
	stack_t ss;
	if (sigaltstack(NULL, &ss) == 0 && !(ss.ss_flags & SS_DISABLE)) {
		lo = (uintptr_t)ss.ss_sp;
		hi = lo + ss.ss_size;
	}
	bool to_alt = to >= lo && to < hi;
#define UNWOUND(f) (((f) >= lo && (f) < hi) == to_alt ? (f) < to : !to_alt)
	if (st__aside && UNWOUND(aside_frame))
		drop_aside();
	while (st__level > 0 && UNWOUND(st__frame[st__level])) {
		st__level--;
		st__depth = 0; /* the call below it was forwarding, or none is left */
	}
#undef UNWOUND
	errno = saved;
}

bool st__enter(struct st_call *c)
{
	c->aside = false;
	c->refuse = false;
	if (st__depth || st__level)
		drop_left((uintptr_t)c);
	if (st__depth || st__level >= ST_MAX_LEVEL)
		return enter_aside(c);
	/* before this call's own work (and its saved errno) */
	if (st__libs_due())
		st__libs_flush(false);
	c->saved_errno = errno;
	st__depth++;
	st__init();
	if (!st__g.active || !st__tls()) {
		st__depth--;
		return st__g.active ? unchecked(c) : false; /* no buffers */
	}
	st__level++;
	st__frame[st__level] = (uintptr_t)c;
	return true;
}

void st__leave(struct st_call *c)
{
	if (c->aside) {
		/* the interrupted call's state, kept by enter_aside (aside_saved is
		 * *c as it was; a nested call of the aside one wrote its own frame) */
		atomic_signal_fence(memory_order_seq_cst);
		drop_aside();
		return;
	}
	st__level--;
	st__depth--;
}

/* Each shared object the loader mapped before main (DT_NEEDED, and
 * LD_PRELOAD entries of the program's) is a read of its file.  Without the
 * LD_AUDIT module this is how library dependencies reach the report; the
 * Ctrie makes it a lookup per library after the first process, and the
 * library sets' memo one probe for all of them. */
/* A name with a slash: an absolute one, or one the loader found along a
 * relative search directory (LD_LIBRARY_PATH=lib: "lib/libz.so.1", below the
 * cwd it was loaded from); not the program's "" nor the vDSO's bare
 * "linux-vdso.so.1", which name no file. */
static bool has_slash(const char *n)
{
	for (; *n; n++)
		if (*n == '/')
			return true;
	return false;
}
static const char *noted_name(const char *n)
{
	return n && has_slash(n) && !st__streq(n, st__g.lib_path) ? n : NULL;
}
static const char *noted_object(const struct dl_phdr_info *info)
{
	return noted_name(info->dlpi_name);
}

/* A 64-bit finaliser (MurmurHash3's fmix64): every input bit reaches every
 * output bit, so chained names and the epoch do not cancel out. */
static uint64_t fmix64(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

/* The hash of this process's library set (sandtrace_arena_libsets): the names
 * the walk records (walk_object), in the loader's order, chained through fmix64. */
static uint64_t libset_chain(uint64_t h, const char *n)
{
	return fmix64(h ^ sandtrace_ctrie_hash(SANDTRACE_KIND_READ, n, st__strlen(n)));
}

/* One walk of the loader's list: the set's hash (libset_chain) and how many
 * names it has; with record, each name recorded too.  A record walk's hash
 * must be the set the memo's tag was made of (another thread may dlclose
 * between the two walks: an object hashed and never recorded), and keyed
 * says whether every outcome was keyed (st__record_path0): one that is not (a
 * name through a /proc magic link, LD_LIBRARY_PATH=/proc/self/cwd) names
 * another file, or gets another answer, in the next process with the same
 * names. */
struct libwalk {
	uint64_t h;
	unsigned n;
	bool record, keyed;
	uint64_t upto; /* a record walk: noted_upto when it began */
	uint32_t subs; /* the loader's count of objects taken out (dlpi_subs) */
	uint32_t seen; /* objects gone through */
};
static int walk_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct libwalk *w = ctx;
	bool done = false; /* recorded by an earlier walk of this process */
	if (w->record) {
		if (w->seen == 0)
			w->subs = size >= offsetof(struct dl_phdr_info, dlpi_subs) +
						  sizeof(info->dlpi_subs)
					  ? (uint32_t)info->dlpi_subs
					  : UINT32_MAX;
		done = w->subs != UINT32_MAX && w->upto >> 32 == w->subs &&
		       w->seen < (uint32_t)w->upto;
		w->seen++;
	}
	const char *n = noted_object(info);
	if (!n)
		return 0;
	if (w->record && !done && !st__record_path0(AT_FDCWD, n, SANDTRACE_KIND_READ, false, 0))
		w->keyed = false;
	if (n[0] != '/') /* relative: another process's same name is another file */
		w->keyed = false;
	w->h = libset_chain(w->h, n);
	w->n++;
	return 0;
}

/* The loader's list for debuggers, found through the program's DT_DEBUG (its
 * own _r_debug may be a copy); info is the first object's.  Inlined: its
 * callers are in the start's section and in .text. */
static inline __attribute__((always_inline)) struct r_debug *
r_debug_of(const struct dl_phdr_info *info)
{
	struct r_debug *r = NULL;
	for (size_t i = 0; i < info->dlpi_phnum && !r; i++) {
		if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
			continue;
		for (const ElfW(Dyn) *d = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		     d->d_tag != DT_NULL; d++)
			if (d->d_tag == DT_DEBUG)
				r = (struct r_debug *)d->d_un.d_ptr;
	}
	return r ? r : &_r_debug;
}

/*
 * The objects of the namespaces other than the shim's (dlmopen), which
 * dl_iterate_phdr does not report: the loader's list of namespaces for
 * debuggers (glibc 2.35: r_version 2, each r_debug_extended's r_next), found
 * through the program's DT_DEBUG (its own _r_debug may be a copy), read in the
 * first call back of dl_iterate_phdr, under the lock the loader holds while
 * it adds an object to a namespace or takes one out.
 */
static int note_namespaces(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct r_debug *r = r_debug_of(info);
	if (__atomic_load_n(&r->r_version, __ATOMIC_ACQUIRE) < 2)
		return 1;
	for (struct r_debug_extended *e = __atomic_load_n(&((struct r_debug_extended *)r)->r_next,
							  __ATOMIC_ACQUIRE);
	     e; e = __atomic_load_n(&e->r_next, __ATOMIC_ACQUIRE))
		for (struct link_map *l = __atomic_load_n(&e->base.r_map, __ATOMIC_ACQUIRE); l;
		     l = l->l_next)
			if (noted_name(l->l_name))
				st__record_path0(AT_FDCWD, l->l_name, SANDTRACE_KIND_READ, false, 0);
	return 1; /* the first object (the program) is enough */
}

/*
 * The objects of every namespace, in the loader's order (the base one, then
 * the others along r_debug's r_next), each as its link map and load address,
 * taken while a dlopen is yet to be made (st__dl_snap) to tell the objects
 * it adds (st__dl_added).  Read in the first call back of dl_iterate_phdr,
 * under the lock the loader holds while it adds an object to a namespace or
 * takes one out (the maps are not freed under it).
 */
static bool snap_add(struct st_dl_snap *s, const struct link_map *l)
{
	if (s->n == s->cap) {
		unsigned cap = s->cap * 2;
		struct st_dl_obj *o = s->objs == s->small ? malloc(cap * sizeof(*o))
							 : realloc(s->objs, cap * sizeof(*o));
		if (!o)
			return false;
		if (s->objs == s->small)
			memcpy(o, s->small, sizeof(s->small));
		s->objs = o;
		s->cap = cap;
	}
	s->objs[s->n++] = (struct st_dl_obj){l, l->l_addr};
	return true;
}
static int snap_walk(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct st_dl_snap *s = ctx;
	struct r_debug *r = r_debug_of(info);
	bool ok = true;
	for (const struct link_map *l = r->r_map; l && ok; l = l->l_next)
		ok = snap_add(s, l);
	if (__atomic_load_n(&r->r_version, __ATOMIC_ACQUIRE) >= 2)
		for (struct r_debug_extended *e = __atomic_load_n(
			     &((struct r_debug_extended *)r)->r_next, __ATOMIC_ACQUIRE);
		     e && ok; e = __atomic_load_n(&e->r_next, __ATOMIC_ACQUIRE))
			for (const struct link_map *l =
				     __atomic_load_n(&e->base.r_map, __ATOMIC_ACQUIRE);
			     l && ok; l = l->l_next)
				ok = snap_add(s, l);
	s->ok = ok;
	return 1;
}

void st__dl_snap(struct st_dl_snap *s)
{
	int saved = errno;
	s->objs = s->small;
	s->n = 0;
	s->cap = ST_DL_SMALL;
	s->ok = false;
	dl_iterate_phdr(snap_walk, s);
	errno = saved;
}

void st__dl_snap_free(struct st_dl_snap *s)
{
	if (s->objs != s->small)
		free(s->objs);
	s->objs = s->small;
	s->n = 0;
}

/* Was l in the snapshot?  The survivors of a namespace keep their order (the
 * loader appends, and takes out), so the search goes on from where the last
 * one was found (*at), then from the start. */
static bool snap_has(const struct st_dl_snap *s, const struct link_map *l, unsigned *at)
{
	for (unsigned pass = 0; pass < 2; pass++)
		for (unsigned i = pass ? 0 : *at; i < (pass ? *at : s->n); i++)
			if (s->objs[i].map == l && s->objs[i].addr == l->l_addr) {
				*at = i + 1;
				return true;
			}
	return false;
}

struct added_walk {
	const struct st_dl_snap *s;
	const struct link_map *h, *skip;
	char *names; /* NUL-terminated names, one after another */
	size_t len, cap;
	int main_at; /* the offset of h's name in names, or -1 */
	bool ok;
};
static int added_walk(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct added_walk *w = ctx;
	const struct link_map *l = w->h;
	unsigned at = 0;
	while (l->l_prev)
		l = l->l_prev;
	for (; l && w->ok; l = l->l_next) {
		const char *n = l == w->skip ? NULL : noted_name(l->l_name);
		if (!n || snap_has(w->s, l, &at))
			continue;
		size_t k = strlen(n) + 1;
		if (w->len + k > w->cap) {
			size_t cap = (w->cap ? w->cap * 2 : 512) + k;
			char *p = realloc(w->names, cap);
			if (!p) {
				w->ok = false;
				break;
			}
			w->names = p;
			w->cap = cap;
		}
		if (l == w->h)
			w->main_at = (int)w->len;
		memcpy(w->names + w->len, n, k);
		w->len += k;
	}
	return 1;
}

char *st__dl_added(const struct st_dl_snap *s, void *h, bool skip_main, size_t *len, int *main_at)
{
	int saved = errno;
	struct link_map *l = NULL;
	struct added_walk w = {.s = s, .main_at = -1, .ok = s->ok};
	*len = 0;
	*main_at = -1;
	if (!w.ok || dlinfo(h, RTLD_DI_LINKMAP, &l) != 0 || !l) {
		errno = saved;
		return NULL;
	}
	w.h = l;
	w.skip = skip_main ? l : NULL;
	dl_iterate_phdr(added_walk, &w);
	errno = saved;
	if (!w.ok || w.len == 0) {
		free(w.names);
		return NULL;
	}
	*len = w.len;
	*main_at = w.main_at;
	return w.names;
}

static void note_libraries(void);
void st__note_libraries(void)
{
	int saved = errno;
	note_libraries();
	errno = saved;
}

static void note_libraries(void)
{
	struct st_call c;
	st__init();
	if (st__g.audit || !st__g.active || st__depth)
		return; /* the audit module records them; the shim's own dlopen */
	if (atomic_load_explicit(&st__g.dlmopened, memory_order_relaxed) && st__enter(&c)) {
		dl_iterate_phdr(note_namespaces, NULL);
		st__leave(&c);
		errno = c.saved_errno;
	}
	/* the memo stands for cache hits that record nothing: only where a hit
	 * is all a recorded access needs (st__g.hit_fast: not --record=all,
	 * identity or verify), and not once the arena refused an allocation
	 * (an access whose key could not be inserted is recorded again by the
	 * next process, which the memo would skip) */
	_Atomic uint64_t *memo = st__g.hit_fast ? sandtrace_arena_libsets(&st__g.arena) : NULL;
	uint64_t epoch = 0, tag = 0;
	struct libwalk set = {.record = false};
	_Atomic uint64_t *slot = NULL;
	if (memo && !atomic_load_explicit(&sandtrace_arena_hdr(&st__g.arena)->counters[SANDTRACE_CTR_FULL],
					  memory_order_relaxed)) {
		epoch = st__arena_epoch();
		dl_iterate_phdr(walk_object, &set);
		tag = fmix64(set.h ^ fmix64(epoch + UINT64_C(0x9e3779b97f4a7c15))) | 1u;
		/* the slot from bits above the one the tag sets */
		slot = &memo[(tag >> 8) & (SANDTRACE_LIBSET_SLOTS - 1)];
		/* acquire: the records of the process that stored the tag (its
		 * Ctrie inserts, its log entries) were made before it */
		if (atomic_load_explicit(slot, memory_order_acquire) == tag) {
			/* counted as the cache hits they stand for, as before */
			for (unsigned i = 0; i < set.n; i++) {
				ST_COUNT(st__g.calls);
				ST_COUNT(st__g.hits);
			}
			return;
		}
	}
	if (!st__enter(&c))
		return;
	struct libwalk d = {.record = true,
			    .keyed = true,
			    .upto = atomic_load_explicit(&noted_upto, memory_order_relaxed)};
	dl_iterate_phdr(walk_object, &d);
	st__leave(&c);
	errno = c.saved_errno;
	/* a name not keyed, or not recorded (the daemon lost), is looked up
	 * again by every walk */
	atomic_store_explicit(&noted_upto,
			      d.keyed && !st__g.daemon_lost && d.subs != UINT32_MAX
				      ? (uint64_t)d.subs << 32 | d.seen
				      : 0,
			      memory_order_relaxed);
	/* release: after this process's records.  Only for the set it
	 * recorded, every outcome keyed (struct libwalk).  Not when the epoch
	 * moved meanwhile (a lookup may have been answered in the older one),
	 * nor when the daemon was lost (an ask answered open is neither
	 * recorded nor cached) */
	if (slot && d.keyed && d.h == set.h && st__arena_epoch() == epoch && !st__g.daemon_lost)
		atomic_store_explicit(slot, tag, memory_order_release);
}

/*
 * The program's environment without the shim's entries (README, "What the
 * shim changes in a process"): environ is pointed at a copy of the array the
 * constructor found, with the SANDTRACE_* variables left out, and LD_PRELOAD
 * (LD_AUDIT when the run loads the audit module) without the shim's library
 * (left out too when nothing else is in it), so that `env`, a shell's `set`
 * and getenv show what they would untraced.  The exec, spawn and shell
 * wrappers put the variables back into every new image's environment
 * (wrap_exec.c env_fix), as they did for a program that removed them itself.
 *
 * The array itself is not changed (no entry moved, no NULL put in): a Go
 * program's runtime reads its environment from the initial stack's array and
 * the auxiliary vector after its NULL, and execs its children by system
 * calls no wrapper sees: they stay traced because that array keeps the
 * variables.  Only the executable's hint, which names this exec alone, is
 * spoiled there, in its string: its value emptied, which take_exe_hint does
 * not take (a child exec'd past the wrappers would read it else, where the
 * same path can name another file by then).
 *
 * The copy is made where the start writes anyway: env_room, on the page of
 * .data that the loader's relocations write in every process (no page fault
 * of its own: tests/shim_layout.py checks that it, and the bss the start
 * writes after it, stay on that page), for ENV_ROOM - 1 entries and the
 * strings made shorter; a bigger environment gets a private map of its own
 * (a system call and a page fault), never unmapped: environ is the
 * program's from here on (setenv and putenv of a new name copy it into an
 * array of libc's own, unsetenv shifts its entries in place, as they do with
 * the initial stack's).  No malloc: the program's allocator may not be ready
 * (tests/acceptance B18).
 */
#define ENV_ROOM 64
static char *env_room[ENV_ROOM] __attribute__((section(".data")));

/* What environment entry e is to the shim: 0 the program's, 1 the shim's
 * (left out), 2 a list to take the shim's library out of (LD_PRELOAD, or
 * LD_AUDIT with the audit module), 3 the executable's hint (left out, and
 * spoiled in place).  First characters first: most entries are decided by
 * one compare. */
static int env_kind(const char *e)
{
	if (e[0] == 'S') {
		/* SANDTRACE_ then the name's first letter picks the one to compare */
		const char *r = st__skip_prefix(e, "SANDTRACE_");
		if (!r)
			return 0;
		const char *name = r[0] == 'S'   ? SANDTRACE_ENV_SOCKET "="
				   : r[0] == 'L' ? SANDTRACE_ENV_LIB "="
				   : r[0] == 'F' ? SANDTRACE_ENV_FLAGS "="
				   : r[0] == 'E' ? SANDTRACE_ENV_EXE "="
				   : r[1] == 'R' ? SANDTRACE_ENV_ARENA "="
						 : SANDTRACE_ENV_AUDIT "=";
		if (!st__skip_prefix(e, name))
			return 0;
		return r[0] == 'E' ? 3 : 1;
	}
	if (e[0] == 'L' && e[1] == 'D' && e[2] == '_') {
		const char *v = st__skip_prefix(e, "LD_PRELOAD=");
		if (v) { /* the shim alone (the common case): left out whole */
			const char *l = st__g.lib_path;
			while (*v && *v == *l)
				v++, l++;
			return *v || *l ? 2 : 1;
		}
		if (st__g.audit && st__skip_prefix(e, "LD_AUDIT="))
			return 2;
	}
	return 0;
}

/* Is the list entry s (n bytes) the shim's library lib (or the preload's
 * bare file name, as for LD_PRELOAD=libsandtrace.so)? */
static bool env_is_lib(const char *s, size_t n, const char *lib, bool preload)
{
	size_t l = st__strlen(lib), i = 0;
	if (n == l) {
		while (i < n && s[i] == lib[i])
			i++;
		if (i == n)
			return true;
	}
	static const char bare[] = "libsandtrace.so";
	if (!preload || n != sizeof(bare) - 1)
		return false;
	for (i = 0; i < n && s[i] == bare[i]; i++)
		;
	return i == n;
}

/* Write list entry e (NAME=a:b ..., kind 2) into d without the shim's
 * library: the other entries with the separators that stood before them
 * (the first one's dropped), as the program or the user wrote them.
 * Returns the bytes written with the NUL, or 0 when nothing is left (the
 * variable is then left out); d NULL: only counted. */
static size_t env_strip(const char *e, char *d)
{
	bool preload = e[3] == 'P';
	const char *lib = preload ? st__g.lib_path : st__g.audit_path;
	size_t k = 0, kept = 0;
	const char *p = e;
	while (*p != '=')
		k++, p++;
	k++, p++; /* "NAME=" */
	if (d)
		st__copy(d, e, k);
	while (*p) {
		const char *sep = p;
		while (*p == ':' || *p == ' ')
			p++;
		const char *s = p;
		while (*p && *p != ':' && *p != ' ')
			p++;
		size_t n = (size_t)(p - s);
		if (!n || env_is_lib(s, n, lib, preload))
			continue;
		if (kept++) { /* the separators before it */
			if (d)
				st__copy(d + k, sep, (size_t)(s - sep));
			k += (size_t)(s - sep);
		}
		if (d)
			st__copy(d + k, s, n);
		k += n;
	}
	if (!kept)
		return 0;
	if (d)
		d[k] = 0;
	return k + 1;
}

static void env_hide(void)
{
	char **from = environ;
	if (!from || !st__g.lib_path[0])
		return;
	/* what the copy needs: its entries, and the lists' strings */
	size_t n = 0, mine = 0, bytes = 0;
	for (char **e = from; *e; e++, n++) {
		int k = env_kind(*e);
		mine += k != 0;
		if (k == 2)
			bytes += env_strip(*e, NULL);
	}
	if (!mine)
		return;
	size_t need = (n + 1) * sizeof(char *) + bytes;
	char **v = env_room;
	if (need > sizeof(env_room)) {
		size_t len = (need + 4095) & ~(size_t)4095;
		int saved = errno;
		long m = ST_SYSCALL(SYS_mmap, 0, len, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		errno = saved;
		if (m == -1)
			return; /* left as it was: the variables stay visible */
		v = (char **)m;
	}
	char *w = (char *)v + need - bytes; /* the strings, after the entries */
	size_t j = 0;
	for (char **e = from; *e; e++) {
		int k = env_kind(*e);
		if (k == 0) {
			v[j++] = *e;
		} else if (k == 2) {
			size_t l = env_strip(*e, w);
			if (l) {
				v[j++] = w;
				w += l;
			}
		} else if (k == 3) {
			char *val = *e + sizeof(SANDTRACE_ENV_EXE);
			*val = 0;
		}
	}
	v[j] = NULL;
	st__g.env_from = from;
	st__g.env_clean = v;
	environ = v;
}

/* glibc passes (argc, argv, envp) to the constructors of preloaded objects. */
__attribute__((constructor)) static void st_ctor(int argc, char **argv, char **envp)
{
	st__ctor_thread = true;
	find_auxv(argc, argv, envp);
	st__depth++;
	st__init();
	if (st__g.active && !st__g.launcher)
		env_hide();
	st__g.argc = argc;
	st__g.argv = argv;
	/* the process record goes to the arena's log: no connection is made
	 * unless this process needs an answer from the daemon */
	bool self = st__g.active && !st__g.launcher; /* the launcher is not the build */
	if (self && !st__log_hello())
		st__hello();
	st__depth--;
	if (self)
		st__note_libraries();
}

__attribute__((destructor)) static void st_dtor(void)
{
	if (!st__g.active || st__depth)
		return;
	/* a dlopen made after the exit's look (in an atexit handler) */
	if (st__libs_due())
		st__libs_flush(false);
	st__depth++;
	if (!atomic_load_explicit(&st__g.exit_sent, memory_order_relaxed))
		st__send_exit(-1, false, 0);
	st__depth--;
}
