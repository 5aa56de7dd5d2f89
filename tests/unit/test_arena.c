/* tests/unit/test_arena.c - Check suite for shm/arena.c: create/attach, header checks, allocation bounds. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandtrace/arena.h"

#define MIB (UINT64_C(1) << 20)

/* Each test owns at most one arena; teardown unlinks it even when an assertion failed. */
static struct sandtrace_arena g_a;
static char g_name[SANDTRACE_ARENA_NAME_MAX];

static void make_arena(uint64_t size)
{
	int rc = sandtrace_arena_create(&g_a, size, 5, g_name);
	ck_assert_int_eq(rc, 0);
	ck_assert_ptr_nonnull(g_a.base);
}

static void teardown(void)
{
	sandtrace_arena_detach(&g_a);
	if (g_name[0] != '\0')
		sandtrace_arena_unlink(g_name);
	g_name[0] = '\0';
}

START_TEST(create_header_and_name)
{
	make_arena(MIB);
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(&g_a);

	ck_assert_uint_eq(h->magic, SANDTRACE_ARENA_MAGIC);
	ck_assert_uint_eq(h->version, SANDTRACE_ARENA_VERSION);
	ck_assert_uint_eq(h->header_size, sizeof(*h));
	ck_assert_uint_eq(h->size, MIB);
	ck_assert_uint_eq(g_a.size, MIB);
	ck_assert_uint_eq(h->run_flags, 5);
	ck_assert_uint_eq(atomic_load(&h->bump), sizeof(struct sandtrace_arena_header));
	ck_assert_uint_eq(atomic_load(&h->root), 0);
	ck_assert(sandtrace_arena_valid(&g_a));
	/* no areas: no library sets' memo either; nor where a header names
	 * another place for it */
	ck_assert_ptr_null(sandtrace_arena_libsets(&g_a));
	h->libsets = sizeof(*h);
	ck_assert_ptr_nonnull(sandtrace_arena_libsets(&g_a));
	h->libsets = sizeof(*h) + 8;
	ck_assert_ptr_null(sandtrace_arena_libsets(&g_a));
	h->libsets = 0;

	/* "/sandtrace-<pid>-<32 hex>" */
	char want[64];
	int n = snprintf(want, sizeof(want), "/sandtrace-%d-", (int)getpid());
	ck_assert_int_eq(strncmp(g_name, want, (size_t)n), 0);
	ck_assert_uint_eq(strlen(g_name), (size_t)n + 32);
	for (size_t i = (size_t)n; g_name[i] != '\0'; i++)
		ck_assert_ptr_nonnull(strchr("0123456789abcdef", g_name[i]));

	/* Two arenas never share a name. */
	struct sandtrace_arena b;
	char name2[SANDTRACE_ARENA_NAME_MAX];
	ck_assert_int_eq(sandtrace_arena_create(&b, MIB, 0, name2), 0);
	ck_assert_str_ne(g_name, name2);
	sandtrace_arena_detach(&b);
	ck_assert_int_eq(sandtrace_arena_unlink(name2), 0);
}
END_TEST

START_TEST(create_rejects_tiny)
{
	struct sandtrace_arena a;
	char name[SANDTRACE_ARENA_NAME_MAX];

	ck_assert_int_eq(sandtrace_arena_create(&a, 4096, 0, name), -EINVAL);
	ck_assert_ptr_null(a.base);
}
END_TEST

/* A forked child maps the arena by name and sees (and writes) the same bytes. */
START_TEST(attach_in_forked_child)
{
	make_arena(MIB);
	uint64_t off = sandtrace_arena_alloc(&g_a, 64);
	ck_assert_uint_ne(off, 0);
	strcpy((char *)g_a.base + off, "hello from the daemon");

	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sandtrace_arena c;
		int ok = sandtrace_arena_attach(&c, g_name) == 0 && c.size == MIB &&
			 strcmp((char *)c.base + off, "hello from the daemon") == 0;
		/* the child maps it elsewhere: offsets, not pointers */
		uint64_t off2 = ok ? sandtrace_arena_alloc(&c, 32) : 0;
		if (off2 != 0)
			strcpy((char *)c.base + off2, "child");
		ok = ok && off2 == off + 64;
		sandtrace_arena_detach(&c);
		_exit(ok ? 0 : 1);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_str_eq((char *)g_a.base + off + 64, "child");
	ck_assert_uint_eq(atomic_load(&sandtrace_arena_hdr(&g_a)->counters[SANDTRACE_CTR_ATTACHES]), 1);
	ck_assert_uint_eq(atomic_load(&sandtrace_arena_hdr(&g_a)->bump), off + 64 + 32);
}
END_TEST

START_TEST(attach_missing)
{
	struct sandtrace_arena a;

	ck_assert_int_eq(sandtrace_arena_attach(&a, "/sandtrace-0-doesnotexist"), -ENOENT);
	ck_assert_ptr_null(a.base);
	ck_assert_int_eq(sandtrace_arena_attach(&a, ""), -EINVAL);
	ck_assert_int_eq(sandtrace_arena_attach(&a, NULL), -EINVAL);
}
END_TEST

/* Corrupt one header field, attach must say -EPROTO and leave base NULL (no abort). */
static void expect_eproto_after(void (*corrupt)(struct sandtrace_arena_header *))
{
	struct sandtrace_arena b;

	corrupt(sandtrace_arena_hdr(&g_a));
	b.base = (void *)1;
	ck_assert_int_eq(sandtrace_arena_attach(&b, g_name), -EPROTO);
	ck_assert_ptr_null(b.base);
	ck_assert(!sandtrace_arena_valid(&g_a));
}

static void bad_magic(struct sandtrace_arena_header *h) { h->magic ^= 1; }
static void bad_version(struct sandtrace_arena_header *h) { h->version = 99; }
static void bad_hsize(struct sandtrace_arena_header *h) { h->header_size = 64; }
static void bad_size(struct sandtrace_arena_header *h) { h->size = 2 * MIB; }

START_TEST(attach_bad_header)
{
	static void (*const corrupt[])(struct sandtrace_arena_header *) = {
		bad_magic, bad_version, bad_hsize, bad_size};

	make_arena(MIB);
	expect_eproto_after(corrupt[_i]);
	/* the failed attach did not count */
	ck_assert_uint_eq(atomic_load(&sandtrace_arena_hdr(&g_a)->counters[SANDTRACE_CTR_ATTACHES]), 0);
}
END_TEST

/* An object too small to hold a header is refused before mapping (no SIGBUS). */
START_TEST(attach_truncated_object)
{
	const char *name = "/sandtrace-unit-truncated";
	int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 100), 0);
	close(fd);

	struct sandtrace_arena b;
	int rc = sandtrace_arena_attach(&b, name);
	shm_unlink(name);
	ck_assert_int_eq(rc, -EPROTO);
	ck_assert_ptr_null(b.base);

	/* ... and an empty one */
	fd = shm_open(name, O_CREAT | O_RDWR, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	rc = sandtrace_arena_attach(&b, name);
	shm_unlink(name);
	ck_assert_int_eq(rc, -EPROTO);
}
END_TEST

START_TEST(alloc_aligned_zeroed)
{
	make_arena(MIB);
	uint64_t prev = 0;

	for (uint64_t sz = 1; sz < 100; sz += 7) {
		uint64_t off = sandtrace_arena_alloc(&g_a, sz);
		ck_assert_uint_ne(off, 0);
		ck_assert_uint_eq(off % SANDTRACE_ARENA_ALIGN, 0);
		ck_assert_uint_gt(off, prev);
		ck_assert_uint_ge(off, sizeof(struct sandtrace_arena_header));
		for (uint64_t i = 0; i < sz; i++)
			ck_assert_uint_eq(g_a.base[off + i], 0);
		memset(g_a.base + off, 0xff, sz);
		prev = off;
	}
}
END_TEST

/* Fill to the end: exact fit succeeds, the next request fails, bump never passes size. */
START_TEST(alloc_until_full)
{
	make_arena(64 << 10);
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(&g_a);
	uint64_t n = 0, off;

	/* 1,200 bytes (a multiple of the alignment) leave a tail smaller than one */
	while ((off = sandtrace_arena_alloc(&g_a, 1200)) != 0) {
		ck_assert_uint_le(off + 1200, g_a.size);
		n++;
	}
	ck_assert_uint_eq(n, ((64 << 10) - sizeof(struct sandtrace_arena_header)) / 1200);
	ck_assert_uint_eq(atomic_load(&h->counters[SANDTRACE_CTR_FULL]), 1);
	/* what is left still serves small requests, up to exactly the end */
	uint64_t left = g_a.size - atomic_load(&h->bump);
	ck_assert_uint_gt(left, 0);
	off = sandtrace_arena_alloc(&g_a, left);
	ck_assert_uint_eq(off + left, g_a.size);
	ck_assert_uint_eq(sandtrace_arena_alloc(&g_a, 1), 0);
	/* huge requests cannot wrap bump around to a small value */
	ck_assert_uint_eq(sandtrace_arena_alloc(&g_a, UINT64_MAX), 0);
	ck_assert_uint_eq(sandtrace_arena_alloc(&g_a, UINT64_MAX - 8), 0);
	ck_assert_uint_eq(atomic_load(&h->bump), g_a.size);
	ck_assert_uint_eq(atomic_load(&h->counters[SANDTRACE_CTR_FULL]), 4);
	ck_assert(sandtrace_arena_valid(&g_a));
}
END_TEST

START_TEST(alloc_huge_on_fresh_arena)
{
	make_arena(MIB);
	ck_assert_uint_eq(sandtrace_arena_alloc(&g_a, UINT64_MAX), 0);
	ck_assert_uint_eq(sandtrace_arena_alloc(&g_a, MIB), 0);
	ck_assert_uint_eq(atomic_load(&sandtrace_arena_hdr(&g_a)->bump), sizeof(struct sandtrace_arena_header));
	ck_assert_uint_ne(sandtrace_arena_alloc(&g_a, 16), 0);
}
END_TEST

/* A corrupted bump (beyond size, or misaligned) makes alloc refuse, never hand out memory. */
START_TEST(alloc_corrupted_bump)
{
	make_arena(MIB);
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(&g_a);

	atomic_store(&h->bump, MIB + 4096);
	ck_assert_uint_eq(sandtrace_arena_alloc(&g_a, 16), 0);
	ck_assert(!sandtrace_arena_valid(&g_a));
	atomic_store(&h->bump, 8);
	ck_assert_uint_eq(sandtrace_arena_alloc(&g_a, 16), 0);
	atomic_store(&h->bump, 1001);
	ck_assert_uint_eq(sandtrace_arena_alloc(&g_a, 16), 0);
	const uint64_t hs = sizeof(*h);
	atomic_store(&h->bump, hs + 1024);
	ck_assert(sandtrace_arena_valid(&g_a));
	atomic_store(&h->root, hs + 4096); /* root beyond bump: not written yet */
	ck_assert(!sandtrace_arena_valid(&g_a));
	atomic_store(&h->root, hs + 512);
	ck_assert(sandtrace_arena_valid(&g_a));
	atomic_store(&h->policy, 64); /* inside the header */
	ck_assert(!sandtrace_arena_valid(&g_a));
}
END_TEST

#define ALLOC_THREADS 4
#define ALLOC_EACH 5000
static uint64_t g_offs[ALLOC_THREADS * ALLOC_EACH];

static void *alloc_thread(void *arg)
{
	uintptr_t t = (uintptr_t)arg;

	for (int i = 0; i < ALLOC_EACH; i++)
		g_offs[t * ALLOC_EACH + (uintptr_t)i] = sandtrace_arena_alloc(&g_a, 16 + (i % 3) * 16);
	return NULL;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* Concurrent allocations never overlap. */
START_TEST(alloc_concurrent_disjoint)
{
	pthread_t th[ALLOC_THREADS];

	make_arena(4 * MIB);
	for (uintptr_t t = 0; t < ALLOC_THREADS; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, alloc_thread, (void *)t), 0);
	for (int t = 0; t < ALLOC_THREADS; t++)
		pthread_join(th[t], NULL);
	qsort(g_offs, ALLOC_THREADS * ALLOC_EACH, sizeof(g_offs[0]), cmp_u64);
	ck_assert_uint_ne(g_offs[0], 0);
	for (int i = 1; i < ALLOC_THREADS * ALLOC_EACH; i++)
		ck_assert_uint_ge(g_offs[i] - g_offs[i - 1], 16);
}
END_TEST

/* Large arenas keep keys and log chunks in areas of their own; a full area
 * falls back to the main one, and used() counts every area. */
static int by_off(const void *x, const void *y)
{
	const uint64_t *p = x, *q = y;
	return p[0] < q[0] ? -1 : p[0] > q[0];
}

/* Areas grow by segments that interleave from the header on: the first
 * allocation of each area lands in the first span; an area's next bytes
 * follow its last ones until its segment is full; a large request gets
 * whole segments of its own; a damaged area word is replaced by a fresh
 * segment; at exhaustion every area says full, and nothing handed out
 * overlapped. */
START_TEST(alloc_areas)
{
	const uint64_t seg = SANDTRACE_ARENA_SEGMENT;
	uint64_t size = SANDTRACE_ARENA_AREAS_MIN;
	make_arena(size);
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(&g_a);
	uint64_t m = sandtrace_arena_alloc(&g_a, 100);
	uint64_t k = sandtrace_arena_alloc_in(&g_a, SANDTRACE_AREA_KEYS, 100);
	uint64_t l = sandtrace_arena_alloc_in(&g_a, SANDTRACE_AREA_LOG, 100);
	/* the header's segment is main's first; it starts with the library
	 * sets' memo (empty) and the room of the run's first policy in the
	 * header's page, then (on the next page) the zeroed per-directory
	 * generations' table (not published yet) and the Ctrie's key filter,
	 * in the header's 64 KiB window */
	const uint64_t memo = SANDTRACE_LIBSET_SLOTS * sizeof(uint64_t);
	ck_assert_uint_eq(SANDTRACE_ARENA_POLICY0_AT, sizeof(*h) + memo);
	ck_assert_uint_eq(SANDTRACE_ARENA_POLICY0_AT + SANDTRACE_ARENA_POLICY0_MAX, 4096);
	ck_assert_uint_ge(SANDTRACE_ARENA_POLICY0_MAX, 2048);
	const uint64_t policy0 = SANDTRACE_ARENA_POLICY0_MAX;
	const uint64_t table = memo + policy0 + SANDTRACE_FS_GEN_SLOTS * sizeof(uint32_t) +
			       SANDTRACE_ARENA_FILTER_BITS / 8;
	_Atomic uint64_t *sets = sandtrace_arena_libsets(&g_a);
	ck_assert_ptr_eq(sets, (void *)(g_a.base + sizeof(*h)));
	ck_assert_uint_le(sizeof(*h) + memo, 4096);
	for (unsigned i = 0; i < SANDTRACE_LIBSET_SLOTS; i++)
		ck_assert_uint_eq(atomic_load(&sets[i]), 0);
	ck_assert_uint_eq(atomic_load(&h->fs_gen_slots_home), 4096);
	ck_assert_uint_eq(atomic_load(&h->fs_gen_slots), 0);
	ck_assert_uint_eq(h->filter, 4096 + SANDTRACE_FS_GEN_SLOTS * sizeof(uint32_t));
	ck_assert_uint_le(sizeof(*h) + table, 64 << 10);
	ck_assert_uint_eq(m, sizeof(*h) + table);
	ck_assert_uint_eq(k, seg);
	ck_assert_uint_eq(l, 2 * seg);
	ck_assert_uint_lt(l, SANDTRACE_ARENA_SPAN);
	ck_assert_uint_eq(sandtrace_arena_alloc_in(&g_a, SANDTRACE_AREA_KEYS, 16), k + 112);
	ck_assert_uint_eq(sandtrace_arena_alloc(&g_a, 16), m + 112);
	ck_assert_uint_eq(sandtrace_arena_used(&g_a), sizeof(*h) + table + 3 * 112 + 2 * 16);
	/* more than half a segment: a segment of its own */
	uint64_t big = sandtrace_arena_alloc_in(&g_a, SANDTRACE_AREA_KEYS, seg / 2 + 1);
	ck_assert_uint_eq(big, 3 * seg);
	/* fill the keys segment: the next key starts a new one */
	for (uint64_t w; (w = atomic_load(&h->bump_keys)) < 2 * seg;) {
		uint64_t piece = 2 * seg - w < seg / 4 ? 2 * seg - w : seg / 4;
		ck_assert_uint_eq(sandtrace_arena_alloc_in(&g_a, SANDTRACE_AREA_KEYS, piece), w);
	}
	ck_assert_uint_eq(sandtrace_arena_alloc_in(&g_a, SANDTRACE_AREA_KEYS, 16), 4 * seg);
	/* a damaged word (not 16-byte aligned) is dropped for a fresh segment */
	atomic_store(&h->bump_log, 2 * seg + 5);
	ck_assert_uint_eq(sandtrace_arena_alloc_in(&g_a, SANDTRACE_AREA_LOG, 16), 5 * seg);
	/* exhaustion: round robin over the areas and sizes until all refuse */
	static uint64_t got[4096][2];
	size_t n = 0;
	for (unsigned i = 0, refused = 0; refused < 3; i++) {
		/* after the first refusal only the smallest requests: the
		 * loop ends when no area has 16 bytes left */
		uint64_t want = refused || atomic_load(&h->counters[SANDTRACE_CTR_FULL]) ? 16
				: (i % 7 == 0)					     ? seg + 16
										     : 16 + (i % 5) * 1000;
		uint64_t off = sandtrace_arena_alloc_in(&g_a, (enum sandtrace_arena_area)(i % 3), want);
		refused = off ? 0 : refused + 1;
		if (off && n < 4096) {
			got[n][0] = off;
			got[n][1] = want;
			n++;
		}
		ck_assert(off == 0 || off + want <= size);
	}
	ck_assert_uint_gt(n, 100);
	qsort(got, n, sizeof(got[0]), by_off);
	for (size_t i = 1; i < n; i++)
		ck_assert_uint_ge(got[i][0], got[i - 1][0] + got[i - 1][1]);
	ck_assert_uint_eq(sandtrace_arena_alloc_in(&g_a, SANDTRACE_AREA_MAIN, 16) |
			      sandtrace_arena_alloc_in(&g_a, SANDTRACE_AREA_KEYS, 16) |
			      sandtrace_arena_alloc_in(&g_a, SANDTRACE_AREA_LOG, 16),
			  0);
	ck_assert_uint_gt(atomic_load(&h->counters[SANDTRACE_CTR_FULL]), 0);
	ck_assert(sandtrace_arena_valid(&g_a));
}
END_TEST

/* Does a PROT_NONE map (what st__map_spans reserves) border [base, base + len)? */
static bool reservation_borders(const void *base, uint64_t len)
{
	uintptr_t lo = (uintptr_t)base, hi = lo + (uintptr_t)len;
	FILE *f = fopen("/proc/self/maps", "r");
	ck_assert_ptr_nonnull(f);
	char line[512];
	bool found = false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		char perm[8];
		if (sscanf(line, "%lx-%lx %7s", &s, &e, perm) == 3 && strcmp(perm, "---p") == 0 &&
		    (e == lo || s == hi))
			found = true;
	}
	fclose(f);
	return found;
}

/* The end of the dynamic loader's image in this process, from /proc/self/maps
 * (the lines of the file mapped at AT_BASE), rounded to a page; 0 if none. */
static uintptr_t loader_end(void)
{
	uintptr_t base = (uintptr_t)getauxval(AT_BASE), end = 0;
	char path[512] = "", line[1024];
	FILE *f = fopen("/proc/self/maps", "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		char p[512] = "";
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %511s", &s, &e, p) < 2)
			continue;
		if (s == base)
			strcpy(path, p);
		if (path[0] && strcmp(p, path) == 0 && e > end)
			end = e;
	}
	fclose(f);
	return end;
}

/* What an attach maps of an object of size bytes: whole pages (4 KiB here). */
static uint64_t mapped_len(uint64_t size)
{
	return (size + 4095) & ~UINT64_C(4095);
}

/* Set the stack's soft limit (the hard one raised to unlimited if needed: root). */
static void stack_limit(rlim_t cur)
{
	struct rlimit rl = {.rlim_cur = cur, .rlim_max = RLIM_INFINITY};
	ck_assert_int_eq(setrlimit(RLIMIT_STACK, &rl), 0);
}

/* The creator maps at a span boundary (offsets in one 2 MiB span share a
 * page-table page), whatever the size.  An attach maps at the first page
 * above the dynamic loader, in the span its image has paid for; when that
 * spot is taken, at a span boundary too.  The address space reserved to
 * find a boundary is given back. */
START_TEST(map_span_aligned)
{
	uint64_t size = 3 * MIB + 4096; /* not a multiple of the span */
	stack_limit(8 * MIB);           /* the usual limit, whatever the caller's */
	make_arena(size);
	ck_assert_uint_eq((uintptr_t)g_a.base % SANDTRACE_ARENA_SPAN, 0);
	ck_assert(!reservation_borders(g_a.base, size));
	uintptr_t want = loader_end();
	ck_assert_uint_ne(want, 0);
	/* room for the arena, the stack's 128 MiB floor and a span? (not
	 * without the kernel's address randomisation: setarch -R leaves about
	 * 128 MiB) 64 KiB either way for the attach's deeper frames */
	uint64_t len = mapped_len(size), need = len + 128 * MIB + SANDTRACE_ARENA_SPAN;
	uint64_t room = (uintptr_t)__builtin_frame_address(0) - want;
	struct sandtrace_arena b, c;
	ck_assert_int_eq(sandtrace_arena_attach(&b, g_name), 0);
	if (room >= need + 64 * 1024)
		ck_assert_ptr_eq(b.base, (void *)want);
	else if (room + 64 * 1024 <= need)
		ck_assert_uint_eq((uintptr_t)b.base % SANDTRACE_ARENA_SPAN, 0);
	ck_assert_int_eq(sandtrace_arena_attach(&c, g_name), 0);
	ck_assert_ptr_ne(c.base, g_a.base);
	ck_assert_uint_eq((uintptr_t)c.base % SANDTRACE_ARENA_SPAN, 0);
	ck_assert(!reservation_borders(c.base, size));
	/* the same bytes through all three maps */
	((volatile char *)g_a.base)[size - 1] = 'x';
	ck_assert_int_eq(((volatile char *)b.base)[size - 1], 'x');
	ck_assert_int_eq(((volatile char *)c.base)[size - 1], 'x');
	sandtrace_arena_detach(&c);
	sandtrace_arena_detach(&b);
}
END_TEST

/* Above the loader only where the main stack keeps all its room: its soft
 * limit (at least 128 MiB) and a span of guard between the arena's end and
 * the stack.  Checked 64 KiB on either side of the limit that just fits
 * (the attach's frames sit below this one's by less than that), and with
 * an unlimited stack (the kernel's bottom-up layout: not tried). */
START_TEST(map_keeps_stack_room)
{
	uint64_t size = 3 * MIB + 4096, len = mapped_len(size);
	make_arena(size);
	uintptr_t want = loader_end();
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	ck_assert_uint_gt(sp, want);
	uint64_t room = sp - want;
	struct sandtrace_arena b;
	if (room <= len + SANDTRACE_ARENA_SPAN + 256 * MIB) {
		/* little randomisation slack (setarch -R leaves about 128 MiB):
		 * only the 128 MiB floor of an 8 MiB limit is tried */
		uint64_t need = len + 128 * MIB + SANDTRACE_ARENA_SPAN;
		stack_limit(8 * MIB);
		ck_assert_int_eq(sandtrace_arena_attach(&b, g_name), 0);
		if (room + 64 * 1024 <= need) {
			ck_assert_ptr_ne(b.base, (void *)want);
			ck_assert_uint_eq((uintptr_t)b.base % SANDTRACE_ARENA_SPAN, 0);
		} else if (room >= need + 64 * 1024) {
			ck_assert_ptr_eq(b.base, (void *)want);
		}
		sandtrace_arena_detach(&b);
		return;
	}
	/* normally GiBs: enough for a limit above the 128 MiB floor */
	stack_limit(room - len - SANDTRACE_ARENA_SPAN + 64 * 1024);
	ck_assert_int_eq(sandtrace_arena_attach(&b, g_name), 0);
	ck_assert_ptr_ne(b.base, (void *)want);
	ck_assert_uint_eq((uintptr_t)b.base % SANDTRACE_ARENA_SPAN, 0);
	sandtrace_arena_detach(&b);
	stack_limit(room - len - SANDTRACE_ARENA_SPAN - 64 * 1024);
	ck_assert_int_eq(sandtrace_arena_attach(&b, g_name), 0);
	ck_assert_ptr_eq(b.base, (void *)want);
	sandtrace_arena_detach(&b);
	stack_limit(RLIM_INFINITY);
	ck_assert_int_eq(sandtrace_arena_attach(&b, g_name), 0);
	ck_assert_ptr_ne(b.base, (void *)want);
	sandtrace_arena_detach(&b);
}
END_TEST

/* An arena directory: the file DIR/sandtrace-<pid>-<hex>, named by its path,
 * attached, refused again (O_EXCL) and removed through that name.  The
 * directory is on /dev/shm, a tmpfs, as the daemon demands. */
START_TEST(create_in_directory)
{
	char dir[] = "/dev/shm/st-unit-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char slashed[sizeof(dir) + 1];
	snprintf(slashed, sizeof(slashed), "%s/", dir); /* "DIR/" is DIR */
	ck_assert_int_eq(sandtrace_arena_create_in(&g_a, MIB, 0, slashed, g_name), 0);
	char want[128];
	int n = snprintf(want, sizeof(want), "%s/sandtrace-%d-", dir, (int)getpid());
	ck_assert_int_eq(strncmp(g_name, want, (size_t)n), 0);
	ck_assert_uint_eq(strlen(g_name), (size_t)n + 32);
	ck_assert(sandtrace_arena_name_is_path(g_name));
	struct stat st;
	ck_assert_int_eq(lstat(g_name, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_uint_eq((uint64_t)st.st_size, MIB);
	ck_assert_uint_eq(g_a.page, (uint64_t)st.st_blksize);
	struct sandtrace_arena b;
	ck_assert_int_eq(sandtrace_arena_attach(&b, g_name), 0);
	((volatile char *)g_a.base)[MIB - 1] = 'd';
	ck_assert_int_eq(((volatile char *)b.base)[MIB - 1], 'd');
	sandtrace_arena_detach(&b);
	/* a link in place of the name is not followed */
	char link[sizeof(dir) + 8];
	snprintf(link, sizeof(link), "%s/lnk", dir);
	ck_assert_int_eq(symlink(g_name, link), 0);
	ck_assert_int_eq(sandtrace_arena_attach(&b, link), -ELOOP);
	ck_assert_int_eq(unlink(link), 0);
	ck_assert_int_eq(sandtrace_arena_unlink(g_name), 0);
	ck_assert_int_eq(lstat(g_name, &st), -1);
	ck_assert_int_eq(sandtrace_arena_attach(&b, g_name), -ENOENT);
	g_name[0] = '\0';
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(create_in_rejects)
{
	struct sandtrace_arena a;
	char name[SANDTRACE_ARENA_NAME_MAX] = "x";
	ck_assert_int_eq(sandtrace_arena_create_in(&a, MIB, 0, "dev/shm", name), -EINVAL);
	ck_assert_str_eq(name, "");
	ck_assert_int_eq(sandtrace_arena_create_in(&a, MIB, 0, "/", name), -EINVAL);
	ck_assert_int_eq(sandtrace_arena_create_in(&a, MIB, 0, "/nonexistent-st-dir", name),
			 -ENOENT);
	ck_assert_str_eq(name, "");
	ck_assert_ptr_null(a.base);
	/* the longest directory that leaves room for the name, and one byte more */
	char dir[SANDTRACE_ARENA_NAME_MAX];
	size_t fits = SANDTRACE_ARENA_NAME_MAX - 55;
	memset(dir, 'd', sizeof(dir));
	dir[0] = '/';
	dir[fits + 1] = '\0';
	ck_assert_int_eq(sandtrace_arena_create_in(&a, MIB, 0, dir, name), -ENAMETOOLONG);
	dir[fits] = '\0';
	ck_assert_int_eq(sandtrace_arena_create_in(&a, MIB, 0, dir, name), -ENOENT);
}
END_TEST

START_TEST(name_is_path)
{
	ck_assert(!sandtrace_arena_name_is_path("/sandtrace-1-ab"));
	ck_assert(!sandtrace_arena_name_is_path("/"));
	ck_assert(!sandtrace_arena_name_is_path(""));
	ck_assert(!sandtrace_arena_name_is_path("relative/name"));
	ck_assert(sandtrace_arena_name_is_path("/d/sandtrace-1-ab"));
	ck_assert(sandtrace_arena_name_is_path("//x"));
}
END_TEST

/* A block size of 2 MiB (a tmpfs serving 2 MiB pages) puts the map at a
 * 2 MiB boundary, where the kernel can map each 2 MiB with one entry, even
 * where the loader's neighbourhood has room; 4 KiB keeps the placement
 * beside the loader (map_span_aligned). */
START_TEST(map_huge_pages_aligned)
{
	uint64_t size = 3 * MIB + 4096;
	stack_limit(8 * MIB);
	make_arena(size);
	int fd = shm_open(g_name, O_RDWR | O_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	struct sandtrace_arena b;
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(sandtrace_arena_map_fd(&b, fd, size, SANDTRACE_ARENA_SPAN), 0);
		ck_assert_uint_eq((uintptr_t)b.base % SANDTRACE_ARENA_SPAN, 0);
		ck_assert_uint_eq(b.page, SANDTRACE_ARENA_SPAN);
		ck_assert_ptr_ne(b.base, (void *)loader_end());
		ck_assert(!reservation_borders(b.base, size));
		sandtrace_arena_detach(&b);
	}
	close(fd);
}
END_TEST

START_TEST(detach_and_unlink)
{
	make_arena(MIB);
	sandtrace_arena_detach(&g_a);
	ck_assert_ptr_null(g_a.base);
	sandtrace_arena_detach(&g_a); /* twice is safe */
	ck_assert(!sandtrace_arena_valid(&g_a));
	ck_assert_uint_eq(sandtrace_arena_alloc(&g_a, 16), 0);
	ck_assert_int_eq(sandtrace_arena_unlink(g_name), 0);
	ck_assert_int_eq(sandtrace_arena_attach(&g_a, g_name), -ENOENT);
	ck_assert_int_eq(sandtrace_arena_unlink(g_name), -ENOENT);
	g_name[0] = '\0';
}
END_TEST

Suite *suite_arena(void)
{
	Suite *s = suite_create("arena");
	TCase *tc = tcase_create("arena");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, create_header_and_name);
	tcase_add_test(tc, create_rejects_tiny);
	tcase_add_test(tc, attach_in_forked_child);
	tcase_add_test(tc, attach_missing);
	tcase_add_loop_test(tc, attach_bad_header, 0, 4);
	tcase_add_test(tc, attach_truncated_object);
	tcase_add_test(tc, alloc_aligned_zeroed);
	tcase_add_test(tc, alloc_until_full);
	tcase_add_test(tc, alloc_huge_on_fresh_arena);
	tcase_add_test(tc, alloc_corrupted_bump);
	tcase_add_test(tc, alloc_concurrent_disjoint);
	tcase_add_test(tc, alloc_areas);
	tcase_add_test(tc, map_span_aligned);
	tcase_add_test(tc, map_keeps_stack_room);
	tcase_add_test(tc, create_in_directory);
	tcase_add_test(tc, create_in_rejects);
	tcase_add_test(tc, name_is_path);
	tcase_add_test(tc, map_huge_pages_aligned);
	tcase_add_test(tc, detach_and_unlink);
	suite_add_tcase(s, tc);
	return s;
}
