/* shm/arena.c - the shared-memory arena: create, attach, bump-allocate, validate. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__linux__)
#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#endif
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandtrace/arena.h"

#if defined(SANDTRACE_IN_SHIM)
/* In the preload, st__mmap and st__munmap are inline system calls
 * (shim/rawsys.h): libc's sit on a page of its code that a process which
 * never calls them would not touch (a traced /bin/true's start), and the
 * shim's wrappers do not see these either way.  Same contract as libc's. */
#include "../shim/rawsys.h"
/* the preload's, which reads the vector the constructor found (shim/shim.h) */
unsigned long st__auxval(unsigned long type);
#define st__getauxval st__auxval
#else
#define st__mmap mmap
#define st__munmap munmap
#define st__getauxval getauxval
#endif

/* Smallest arena accepted by create (arena.h: "at least 64 KiB"). */
#define ST__ARENA_MIN_SIZE (UINT64_C(64) << 10)

static inline uint64_t st__align_up(uint64_t v)
{
	return (v + (SANDTRACE_ARENA_ALIGN - 1)) & ~(uint64_t)(SANDTRACE_ARENA_ALIGN - 1);
}

#if defined(__linux__) && defined(MAP_FIXED_NOREPLACE) && (defined(__x86_64__) || defined(__aarch64__))
/*
 * Where an attach may map the arena so that its first pages share a
 * page-table page the process already has: the first page above the
 * dynamic loader's image, the highest mapping of a standard (top-down)
 * layout, whose last 2 MiB window the loader's own pages have paid for.
 * The header and the data every process reads first (the first segments of
 * the areas, the log's small chunks) then cost a new process no page-table
 * page (nor, mostly, a middle-level one): 27 µs of a traced child's start
 * on this project's VM (docs/BENCHMARKS.md, stop 17).  Returns 0 when that
 * is not safe or not known:
 * - no loader (a static program: AT_BASE is 0), or its program headers are
 *   not as expected;
 * - the main stack is not above it, or the room between them is less than
 *   len and the stack's own reserve: its soft limit (RLIMIT_STACK, and at
 *   least the 128 MiB the kernel keeps for it) and 2 MiB of guard, so the
 *   stack keeps all the room the kernel promised it; an unlimited stack
 *   means the kernel's bottom-up layout, where this is not tried.
 * The stack is the caller's (the main thread's in a constructor); on a
 * thread's stack, normally below the loader, the test fails safe.  One
 * system call (getrlimit); takes no lock and allocates nothing.
 */
static uintptr_t st__above_loader(size_t len, size_t page)
{
	uintptr_t base = (uintptr_t)st__getauxval(AT_BASE);
	if (base == 0)
		return 0;
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_phentsize != sizeof(ElfW(Phdr)) ||
	    eh->e_phnum == 0 || eh->e_phnum > 64)
		return 0;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
	uintptr_t end = 0;
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr + ph[i].p_memsz > end)
			end = (uintptr_t)(ph[i].p_vaddr + ph[i].p_memsz);
	if (end == 0 || base + end < base)
		return 0;
	uintptr_t want = (base + end + page - 1) & ~(uintptr_t)(page - 1);
	/* libc's getrlimit: its page is warm, libc's start asked the same */
	struct rlimit rl;
	if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	uint64_t reserve = rl.rlim_cur > (UINT64_C(128) << 20) ? rl.rlim_cur : UINT64_C(128) << 20;
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	/* in this order: a limit near 2^64 must not wrap the sum */
	if (sp <= want || (uint64_t)(sp - want) < reserve ||
	    (uint64_t)(sp - want) - reserve < (uint64_t)len + SANDTRACE_ARENA_SPAN)
		return 0;
	return want;
}
#endif

/*
 * The arena's offsets are laid out so that what a process reads sits in few
 * 2 MiB spans (SANDTRACE_ARENA_SPAN): each span a process touches costs it a
 * page-table page that the kernel allocates, zeroes and frees at exit (on
 * this project's VM ≈ 70 µs a span; docs/BENCHMARKS.md, stop 12).  That only
 * holds if offset 0 is mapped at a span boundary, which mmap(NULL) does not
 * give for a tmpfs object: reserve size + one span of address space
 * (PROT_NONE, no memory), map the object at the first boundary inside it
 * (MAP_FIXED replaces that part of the reservation) and return the rest.
 * Three system calls more than a plain mmap (≈ 4 µs here), so a placement
 * at a span boundary just below the thread's TLS block is tried first, in
 * one call (stop 15).  Before that, an attach (beside_loader) tries the
 * page above the dynamic loader (st__above_loader): not at a span
 * boundary, but in a span the process has paid for already.  Falls back to
 * a plain mmap when the reservation cannot be made.  Returns the map or
 * MAP_FAILED with errno set, like mmap.  Thread-safe (the reservation is
 * this thread's until it is replaced or returned); not async-signal-safe
 * in general (it calls mmap), though nothing here allocates.
 */
static void *st__map_spans(int fd, size_t size, bool beside_loader)
{
	const size_t span = (size_t)SANDTRACE_ARENA_SPAN;
	(void)beside_loader; /* only where st__above_loader is built */
#if defined(__x86_64__) || defined(__i386__)
	/* always 4 KiB; sysconf would be one more page of libc's code to fault
	 * in, in every traced process */
	const size_t page = 4096;
#else
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
#endif
	size_t len = (size + page - 1) & ~(page - 1);
	if (len < size || len + span < len)
		return st__mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
#if defined(MAP_FIXED_NOREPLACE) && (defined(__x86_64__) || defined(__aarch64__))
	/* An attach first tries above the loader (one call, undone the same
	 * way when the kernel took the address as a hint) */
	uintptr_t at = 0;
#if defined(__linux__)
	if (beside_loader)
		at = st__above_loader(len, page);
#endif
	if (at) {
		char *q = st__mmap((void *)at, size, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
		if (q == (char *)at)
			return q;
		if (q != MAP_FAILED)
			st__munmap(q, size);
	}
	/* Then, one system call: where the kernel's top-down search would put
	 * it, rounded down to a span.  At a process's start the lowest mapping
	 * near the top is the main thread's TLS block, whose address the
	 * thread pointer gives; the room below it is normally free.  A taken
	 * range fails (EEXIST); a kernel without the flag (before 4.17) takes
	 * it as a hint and may map elsewhere, which is undone. */
	uintptr_t tp = (uintptr_t)__builtin_thread_pointer();
	if (tp > len + 2 * span) {
		char *want = (char *)((tp - span - len) & ~(uintptr_t)(span - 1));
		char *q = st__mmap(want, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE,
			       fd, 0);
		if (q == want)
			return q;
		if (q != MAP_FAILED)
			st__munmap(q, size);
	}
#endif
	char *r = st__mmap(NULL, len + span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (r == MAP_FAILED)
		return st__mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *p = (char *)(((uintptr_t)r + span - 1) & ~(uintptr_t)(span - 1));
	if (st__mmap(p, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
		int e = errno;
		st__munmap(r, len + span);
		errno = e;
		return MAP_FAILED;
	}
	if (p > r)
		st__munmap(r, (size_t)(p - r));
	if (r + len + span > p + len)
		st__munmap(p + len, (size_t)(r + len + span - (p + len)));
	return p;
}

/*
 * Build "/sandtrace-<pid>-<32 hex>" by hand: create runs in the daemon, but
 * snprintf is avoided anyway so the whole file stays obviously malloc-free.
 */
static void st__arena_name(char name[SANDTRACE_ARENA_NAME_MAX], size_t dirlen,
			   const uint8_t rnd[16])
{
	static const char hex[] = "0123456789abcdef";
	static const char pfx[] = "/sandtrace-";
	char digits[24];
	size_t n = 0, i, o = dirlen; /* name[0..dirlen): the directory, if any */
	unsigned long pid = (unsigned long)getpid();

	do {
		digits[n++] = (char)('0' + pid % 10);
		pid /= 10;
	} while (pid != 0);
	memcpy(name + o, pfx, sizeof(pfx) - 1);
	o += sizeof(pfx) - 1;
	while (n > 0)
		name[o++] = digits[--n];
	name[o++] = '-';
	for (i = 0; i < 16; i++) {
		name[o++] = hex[rnd[i] >> 4];
		name[o++] = hex[rnd[i] & 15];
	}
	name[o] = '\0'; /* dirlen + at most 11 + 10 + 1 + 32 + 1 = 55 bytes: pid_t has <= 10 digits */
}

/* The longest name st__arena_name makes, NUL included, past the directory. */
#define ST__ARENA_BASENAME_MAX 55u

/* Open (or with O_CREAT, create) the object a name names: a path as a file,
 * any other name as POSIX shared memory (shm_open: /dev/shm on Linux). */
static int st__open_name(const char *name, int flags, mode_t mode)
{
	if (sandtrace_arena_name_is_path(name))
		return open(name, flags | O_NOFOLLOW, mode);
	return shm_open(name, flags, mode);
}

static int st__random(uint8_t *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = getrandom(buf + got, n - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)r;
	}
	return 0;
}

/*
 * Back the pages of [from, to) of the arena with memory now, before they are
 * handed out.  The arena is a sparse file: on a memory file system with less
 * room than --arena-size (a container's 64 MiB /dev/shm, a small tmpfs for
 * --arena-dir) the first write to a page the file system cannot give is
 * SIGBUS in whichever traced process made it.  MADV_POPULATE_WRITE fails
 * instead (EFAULT), and the allocation is refused: a full arena, counted,
 * caching stops, nothing crashes.  A kernel without it (EINVAL) keeps the
 * old behaviour.  errno is kept (the shim calls this inside wrappers).
 */
static bool st__populate(const struct sandtrace_arena *a, uint64_t from, uint64_t to)
{
#ifdef MADV_POPULATE_WRITE
	if (from >= to)
		return true;
	int saved = errno;
	bool ok = madvise(a->base + from, (size_t)(to - from), MADV_POPULATE_WRITE) == 0 ||
		  errno == EINVAL || errno == ENOSYS;
	errno = saved;
	return ok;
#else
	(void)a;
	(void)from;
	(void)to;
	return true;
#endif
}

/* The arena's page size (at least 4 KiB). */
static inline uint64_t st__page(const struct sandtrace_arena *a)
{
	return a->page >= 4096 && (a->page & (a->page - 1)) == 0 ? a->page : 4096;
}

int sandtrace_arena_create(struct sandtrace_arena *a, uint64_t size, uint32_t run_flags,
			   char name[SANDTRACE_ARENA_NAME_MAX])
{
	return sandtrace_arena_create_in(a, size, run_flags, NULL, name);
}

int sandtrace_arena_create_in(struct sandtrace_arena *a, uint64_t size, uint32_t run_flags,
			      const char *dir, char name[SANDTRACE_ARENA_NAME_MAX])
{
	struct sandtrace_arena_header *h;
	uint8_t rnd[16];
	void *p;
	int fd, rc, tries;
	size_t dirlen = 0;

	a->base = NULL;
	a->size = 0;
	a->page = 0;
	name[0] = '\0';
	if (size < ST__ARENA_MIN_SIZE || size > (uint64_t)SIZE_MAX || size > (uint64_t)INT64_MAX)
		return -EINVAL;
	if (dir != NULL) {
		dirlen = strlen(dir);
		while (dirlen > 1 && dir[dirlen - 1] == '/')
			dirlen--; /* "DIR/" as "DIR" */
		if (dir[0] != '/' || (dirlen == 1 && dir[0] == '/'))
			return -EINVAL; /* relative, or the root: never a memory file system here */
		if (dirlen + ST__ARENA_BASENAME_MAX > SANDTRACE_ARENA_NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(name, dir, dirlen);
	}

	/* O_EXCL: a name collision (or a squatter) is never silently reused. */
	for (tries = 0;; tries++) {
		rc = st__random(rnd, sizeof(rnd));
		if (rc < 0)
			return rc;
		st__arena_name(name, dirlen, rnd);
		fd = st__open_name(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
		if (fd >= 0)
			break;
		if (errno != EEXIST || tries >= 3) {
			name[0] = '\0'; /* no arena by that name: nothing to remove */
			return -errno;
		}
	}
	/* Sparse: pages cost memory only when first touched. */
	struct stat st;
	if (ftruncate(fd, (off_t)size) < 0 || fstat(fd, &st) < 0)
		goto fail;
	p = st__map_spans(fd, (size_t)size, false);
	if (p == MAP_FAILED)
		goto fail;
	close(fd);
	fd = -1;
	a->base = p;
	a->size = size;
	a->page = (uint64_t)st.st_blksize;
	{
		/* the header and (with areas) the first segment, which create
		 * writes and every process reads: backed now (st__populate), or
		 * the run cannot start (-ENOSPC) rather than SIGBUS */
		uint64_t pg = st__page(a), first = size >= SANDTRACE_ARENA_AREAS_MIN
						       ? SANDTRACE_ARENA_SEGMENT
						       : st__align_up(sizeof(*h));
		if (!st__populate(a, 0, (first + pg - 1) & ~(pg - 1))) {
			st__munmap(p, (size_t)size);
			a->base = NULL;
			a->size = 0;
			a->page = 0;
			errno = ENOSPC;
			goto fail;
		}
	}

	h = p;
	h->version = SANDTRACE_ARENA_VERSION;
	h->header_size = (uint32_t)sizeof(*h);
	h->size = size;
	atomic_store_explicit(&h->bump, st__align_up(sizeof(*h)), memory_order_relaxed);
	atomic_store_explicit(&h->generation, 0, memory_order_relaxed);
	atomic_store_explicit(&h->root, 0, memory_order_relaxed);
	atomic_store_explicit(&h->policy, 0, memory_order_relaxed);
	if (size >= SANDTRACE_ARENA_AREAS_MIN) {
		/* the header's segment is the main area's first.  It starts with
		 * the library sets' memo (in the header's own page; zeroed: every
		 * slot empty), the per-directory generations' table and the
		 * Ctrie's key filter, in the window of pages a process's first
		 * read of the header maps (the Ctrie's first cache array comes
		 * after them, and still fits).  The generations' table is
		 * published by the first namespace change (shim/check.c), never
		 * needed before */
		h->libsets = SANDTRACE_ARENA_LIBSETS_AT;
		_Static_assert(SANDTRACE_ARENA_GEN_SLOTS_AT % SANDTRACE_ARENA_ALIGN == 0 &&
				       SANDTRACE_ARENA_FILTER_AT % 64 == 0,
			       "aligned places");
		atomic_store_explicit(&h->fs_gen_slots_home, SANDTRACE_ARENA_GEN_SLOTS_AT,
				      memory_order_relaxed);
		/* the Ctrie's key filter (zero bits: nothing inserted) next, in the
		 * same window: most lookups of keys that are not there read it
		 * instead of walking the trie */
		h->filter = SANDTRACE_ARENA_FILTER_AT;
		atomic_store_explicit(&h->bump_main,
				      SANDTRACE_ARENA_FILTER_AT + SANDTRACE_ARENA_FILTER_BITS / 8,
				      memory_order_relaxed);
		atomic_store_explicit(&h->bump, SANDTRACE_ARENA_SEGMENT, memory_order_relaxed);
	}
	h->run_flags = run_flags;
	h->owner_pid = (uint32_t)getppid();
	/*
	 * Magic last, after a release fence: nobody can know the name before
	 * we return, but a header that says "valid" must be whole even if a
	 * squatter guessed the name and mapped early.
	 */
	atomic_thread_fence(memory_order_release);
	h->magic = SANDTRACE_ARENA_MAGIC;

	a->base = p;
	a->size = size;
	a->page = (uint64_t)st.st_blksize;
	return 0;
fail:
	rc = -errno;
	if (fd >= 0)
		close(fd);
	sandtrace_arena_unlink(name);
	name[0] = '\0';
	return rc;
}

/* Header checks shared by attach (before trusting the map) and valid(). */
static bool st__header_ok(const struct sandtrace_arena_header *h, uint64_t mapped)
{
	return h->magic == SANDTRACE_ARENA_MAGIC && h->version == SANDTRACE_ARENA_VERSION &&
	       h->header_size == sizeof(*h) && h->size == mapped;
}

int sandtrace_arena_map_fd(struct sandtrace_arena *a, int fd, uint64_t size, uint64_t blksize)
{
	void *p;

	a->base = NULL;
	a->size = 0;
	a->page = 0;
	/*
	 * Too small to hold a header: do not map it at all, reading past the
	 * end of the object would be SIGBUS, not a clean -EPROTO.
	 */
	if (size < (uint64_t)sizeof(struct sandtrace_arena_header) || size > (uint64_t)SIZE_MAX ||
	    size > (uint64_t)INT64_MAX)
		return -EPROTO;
	/* served in 2 MiB pages: beside the loader, the kernel could map them
	 * only 4 KiB at a time */
	p = st__map_spans(fd, (size_t)size, blksize < SANDTRACE_ARENA_SPAN);
	if (p == MAP_FAILED)
		return -errno;
	/* The header's size must equal the object's: every bound below uses it. */
	if (!st__header_ok(p, size)) {
		st__munmap(p, (size_t)size);
		return -EPROTO;
	}
	a->base = p;
	a->size = size;
	a->page = blksize;
	sandtrace_arena_count(a, SANDTRACE_CTR_ATTACHES, 1);
	return 0;
}

int sandtrace_arena_attach(struct sandtrace_arena *a, const char *name)
{
	struct stat st;
	int fd, rc;

	a->base = NULL;
	a->size = 0;
	a->page = 0;
	if (name == NULL || name[0] == '\0')
		return -EINVAL;
	fd = st__open_name(name, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	rc = fstat(fd, &st) < 0 ? -errno
				: sandtrace_arena_map_fd(a, fd, (uint64_t)st.st_size,
							 (uint64_t)st.st_blksize);
	close(fd);
	return rc;
}

void sandtrace_arena_detach(struct sandtrace_arena *a)
{
	if (a->base != NULL)
		st__munmap(a->base, (size_t)a->size);
	a->base = NULL;
	a->size = 0;
	a->page = 0;
}

int sandtrace_arena_unlink(const char *name)
{
	if (name == NULL || name[0] == '\0')
		return -EINVAL;
	int r = sandtrace_arena_name_is_path(name) ? unlink(name) : shm_unlink(name);
	return r < 0 ? -errno : 0;
}

/*
 * Lock-free bump allocation.  A CAS loop rather than a bare fetch-and-add:
 * with FAA a refused request still moves bump past the end, and enough
 * refused requests (or one huge one) could wrap it around to a small value
 * and hand out the header.  With CAS, bump only ever moves to a value
 * <= size.  Contention is low (one CAS per Ctrie node built), so the loop
 * costs nothing measurable.
 *
 * Every bound is taken from a->size (what this process mapped), never from
 * the header alone: a corrupted header must not make us write outside the map.
 */
/* Hand out need bytes from *bump, bounded by [lo, hi).  Every page below
 * bump rounded up to a page is backed (st__populate): the pages a request
 * reaches beyond it are backed before the CAS that hands them out. */
static uint64_t st__alloc_from(const struct sandtrace_arena *a, _Atomic uint64_t *bump, uint64_t lo,
			       uint64_t hi, uint64_t need)
{
	uint64_t pg = st__page(a);
	/* relaxed: bump orders nothing; the bytes are published by a later release. */
	uint64_t old = atomic_load_explicit(bump, memory_order_relaxed);
	for (;;) {
		/* bounds check BEFORE handing out the memory; also rejects a corrupted bump */
		if (old < lo || (old & (SANDTRACE_ARENA_ALIGN - 1)) != 0 || old > hi ||
		    need > hi - old)
			return 0;
		uint64_t end = (old + need + pg - 1) & ~(pg - 1);
		if (!st__populate(a, (old + pg - 1) & ~(pg - 1), end > hi ? hi : end))
			return 0;
		/* relaxed on both paths: see above.  Linearization point on success. */
		if (atomic_compare_exchange_weak_explicit(bump, &old, old + need,
							  memory_order_relaxed,
							  memory_order_relaxed))
			return old;
	}
}

/* Are the areas in use?  Only when the header says so and the map is that large. */
static bool st__areas(const struct sandtrace_arena *a)
{
	return a->size >= SANDTRACE_ARENA_AREAS_MIN &&
	       atomic_load_explicit(&sandtrace_arena_hdr(a)->bump_main, memory_order_relaxed) != 0;
}

static _Atomic uint64_t *st__area_word(struct sandtrace_arena_header *h,
				       enum sandtrace_arena_area area)
{
	return area == SANDTRACE_AREA_KEYS ? &h->bump_keys
	       : area == SANDTRACE_AREA_LOG ? &h->bump_log
					    : &h->bump_main;
}

/* The end of the segment an area word's offset w lies in.  An offset on a
 * boundary ends the segment before it (a full segment): a word is never the
 * start of its own segment, since taking a segment also takes its first
 * bytes. */
static inline uint64_t st__segment_end(uint64_t w)
{
	return ((w - 1) | (SANDTRACE_ARENA_SEGMENT - 1)) + 1;
}

/*
 * need bytes (aligned, at most half a segment) from an area: a CAS on the
 * area's word while its segment has room, else a new segment from bump,
 * installed with a CAS that also takes the first need bytes of it.  A racer
 * that loses that CAS keeps its segment unused and retries on the winner's.
 */
static uint64_t st__alloc_area(struct sandtrace_arena *a, _Atomic uint64_t *word, uint64_t need)
{
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(a);
	uint64_t fresh = 0;
	/* relaxed throughout, as st__alloc_from: the bytes are published later */
	uint64_t old = atomic_load_explicit(word, memory_order_relaxed);
	for (;;) {
		if (old != 0 && (old & (SANDTRACE_ARENA_ALIGN - 1)) == 0 && old < a->size &&
		    need <= st__segment_end(old) - old && st__segment_end(old) <= a->size) {
			if (atomic_compare_exchange_weak_explicit(word, &old, old + need,
								  memory_order_relaxed,
								  memory_order_relaxed))
				return old;
			continue;
		}
		if (fresh == 0)
			fresh = st__alloc_from(a, &h->bump, SANDTRACE_ARENA_SEGMENT, a->size,
					       SANDTRACE_ARENA_SEGMENT);
		if (fresh == 0)
			return 0;
		/* a corrupted word is replaced like a full one */
		if (atomic_compare_exchange_strong_explicit(word, &old, fresh + need,
							    memory_order_relaxed,
							    memory_order_relaxed))
			return fresh;
	}
}

uint64_t sandtrace_arena_alloc_in(struct sandtrace_arena *a, enum sandtrace_arena_area area,
				  uint64_t size)
{
	struct sandtrace_arena_header *h;
	uint64_t need, off = 0;

	if (a->base == NULL)
		return 0;
	h = sandtrace_arena_hdr(a);
	if (size == 0)
		size = 1;
	if (size > a->size)
		goto full;
	need = st__align_up(size);
	if (!st__areas(a))
		off = st__alloc_from(a, &h->bump, sizeof(*h), a->size, need);
	else if (need <= SANDTRACE_ARENA_SEGMENT / 2)
		off = st__alloc_area(a, st__area_word(h, area), need);
	else /* whole segments of its own: bump stays on a segment boundary */
		off = st__alloc_from(a, &h->bump, SANDTRACE_ARENA_SEGMENT, a->size,
				     (need + SANDTRACE_ARENA_SEGMENT - 1) &
					 ~(SANDTRACE_ARENA_SEGMENT - 1));
	if (off != 0)
		return off;
full:
	sandtrace_arena_count(a, SANDTRACE_CTR_FULL, 1);
	return 0;
}

uint64_t sandtrace_arena_alloc(struct sandtrace_arena *a, uint64_t size)
{
	return sandtrace_arena_alloc_in(a, SANDTRACE_AREA_MAIN, size);
}

uint64_t sandtrace_arena_used(const struct sandtrace_arena *a)
{
	const struct sandtrace_arena_header *h = sandtrace_arena_hdr(a);
	uint64_t used = atomic_load_explicit(&h->bump, memory_order_relaxed);
	if (st__areas(a)) {
		/* less what the areas' current segments have left */
		for (int i = SANDTRACE_AREA_MAIN; i <= SANDTRACE_AREA_LOG; i++) {
			uint64_t w = atomic_load_explicit(
			    st__area_word((struct sandtrace_arena_header *)h, i), memory_order_relaxed);
			if (w != 0 && st__segment_end(w) - w <= used)
				used -= st__segment_end(w) - w;
		}
	}
	return used;
}

/* An offset stored in the header: 0 (none) or inside the allocated part. */
static bool st__off_ok(uint64_t off, uint64_t bump)
{
	return off == 0 || (off >= sizeof(struct sandtrace_arena_header) && off < bump);
}

bool sandtrace_arena_valid(const struct sandtrace_arena *a)
{
	const struct sandtrace_arena_header *h;
	uint64_t bump;

	if (a == NULL || a->base == NULL || a->size < sizeof(*h))
		return false;
	h = (const struct sandtrace_arena_header *)a->base;
	if (!st__header_ok(h, a->size))
		return false;
	/* relaxed would do for a plain range check; acquire keeps it in step with root/policy */
	bump = atomic_load_explicit(&h->bump, memory_order_acquire);
	if (bump < sizeof(*h) || bump > a->size || (bump & (SANDTRACE_ARENA_ALIGN - 1)) != 0)
		return false;
	return st__off_ok(atomic_load_explicit(&h->root, memory_order_acquire), bump) &&
	       st__off_ok(atomic_load_explicit(&h->policy, memory_order_acquire), bump);
}
