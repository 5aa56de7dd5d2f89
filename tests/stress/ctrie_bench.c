/* tests/stress/ctrie_bench.c - micro-benchmark: Ctrie lookups vs an insert-only open-addressing table in one arena. */
/*
 * usage: ctrie_bench [KEYS [HOT [ROUNDS]]]   (defaults 1500 256 20000)
 *
 * KEYS path-like keys (a build touches ≈ 1.2–1.5k distinct paths, DESIGN.md)
 * go into both structures; HOT of them are then looked up round-robin,
 * ROUNDS times, best of 7 runs.  Both structures live in the same arena and
 * use the same hash and the same SNode compare, so the difference is the
 * structure: the Ctrie walks INode -> CNode per level, the flat table
 * probes one slot (which holds 32 hash bits and the SNode offset).
 * A fresh forked child also reports what a new process pays for its first
 * lookups (wall time and minor page faults).  Timings are printed, never
 * asserted.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../shm/ctrie_internal.h"
#include "sandtrace/arena.h"
#include "sandtrace/ctrie.h"

/* ---- the flat table: insert-only linear probing in the arena ---- */

struct flat {
	uint32_t cap_log2, reserved;
	_Atomic uint64_t slot[]; /* 0, or (hash >> 32) << 32 | SNode offset */
};

static uint64_t g_flat; /* offset of struct flat */

static int flat_init(struct sandtrace_arena *a, unsigned keys)
{
	unsigned lg = 4;

	while ((1u << lg) < 2 * keys) /* load factor <= 0.5 */
		lg++;
	g_flat = sandtrace_arena_alloc(a, sizeof(struct flat) + (8u << lg));
	if (g_flat == 0)
		return -ENOSPC;
	((struct flat *)(a->base + g_flat))->cap_log2 = lg;
	return 0;
}

static int flat_insert(struct sandtrace_arena *a, unsigned cls, const void *key, size_t len,
		       uint32_t value)
{
	struct flat *f = (struct flat *)(a->base + g_flat);
	uint64_t h = sandtrace_ctrie_hash(cls, key, len), mask = (1u << f->cap_log2) - 1;
	uint64_t off = sandtrace_arena_alloc(a, sizeof(struct st__snode) + len);
	struct st__snode *s;

	if (off == 0)
		return -ENOSPC;
	s = (struct st__snode *)(a->base + off);
	s->hash = h;
	s->value = value;
	s->lencls = (uint32_t)len << 8 | (cls & 0xff);
	memcpy(s->key, key, len);
	for (uint64_t i = h & mask;; i = (i + 1) & mask) {
		uint64_t want = 0, nv = (h >> 32) << 32 | off;
		if (atomic_compare_exchange_strong_explicit(&f->slot[i], &want, nv,
							    memory_order_acq_rel,
							    memory_order_acquire))
			return 1;
		/* (a full duplicate check is not needed for the benchmark's distinct keys) */
	}
}

static int flat_lookup(const struct sandtrace_arena *a, unsigned cls, const void *key, size_t len,
		       uint32_t *value)
{
	const struct flat *f = (const struct flat *)(a->base + g_flat);
	uint64_t h = sandtrace_ctrie_hash(cls, key, len), mask = (1u << f->cap_log2) - 1;
	uint32_t lencls = (uint32_t)len << 8 | (cls & 0xff);

	for (uint64_t i = h & mask;; i = (i + 1) & mask) {
		uint64_t s = atomic_load_explicit(&f->slot[i], memory_order_acquire);
		const struct st__snode *sn;

		if (s == 0)
			return 0;
		if ((s >> 32) != (h >> 32))
			continue;
		sn = (const struct st__snode *)(a->base + (uint32_t)s);
		if (sn->hash == h && sn->lencls == lencls && memcmp(sn->key, key, len) == 0) {
			*value = sn->value;
			return 1;
		}
	}
}

/* ---- keys ---- */

static char (*g_keys)[128];
static size_t *g_lens;

static void make_keys(unsigned n)
{
	static const char *const fmt[] = {
		"/usr/include/x86_64-linux-gnu/bits/types/struct_%u.h",
		"/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef%u.h",
		"/home/build/src/project/module%u/src/file.c",
		"/usr/include/c++/12/bits/stl_%u.h",
		"/tmp/cc%uXa.o",
		"/usr/lib/x86_64-linux-gnu/libfoo.so.%u",
	};
	g_keys = calloc(n, sizeof(*g_keys));
	g_lens = calloc(n, sizeof(*g_lens));
	if (g_keys == NULL || g_lens == NULL)
		exit(1);
	for (unsigned i = 0; i < n; i++)
		g_lens[i] = (size_t)snprintf(g_keys[i], sizeof(g_keys[i]), fmt[i % 6], i);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

enum which { W_HASH, W_CTRIE, W_FLAT };
static volatile uint64_t g_sink;

/* One pass of rounds × hot lookups; ns per lookup. */
static double run(const struct sandtrace_arena *a, enum which w, unsigned hot, unsigned rounds)
{
	uint64_t acc = 0;
	uint32_t v;
	double t0 = now_ns();

	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned i = 0; i < hot; i++) {
			switch (w) {
			case W_HASH:
				acc += sandtrace_ctrie_hash(0, g_keys[i], g_lens[i]);
				break;
			case W_CTRIE:
				acc += (uint64_t)sandtrace_ctrie_lookup(a, 0, g_keys[i], g_lens[i], &v) + v;
				break;
			case W_FLAT:
				acc += (uint64_t)flat_lookup(a, 0, g_keys[i], g_lens[i], &v) + v;
				break;
			}
		}
	}
	g_sink = acc;
	return (now_ns() - t0) / ((double)rounds * hot);
}

static double best(const struct sandtrace_arena *a, enum which w, unsigned hot, unsigned rounds)
{
	double b = 1e30;

	for (int i = 0; i < 7; i++) {
		double t = run(a, w, hot, rounds);
		if (t < b)
			b = t;
	}
	return b;
}

/* A new process: attach, then the first pass over the hot keys (cold pages, cold cache). */
static void first_touch(const char *name, enum which w, unsigned hot)
{
	int pfd[2];
	pid_t pid;

	if (pipe(pfd) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		struct sandtrace_arena c;
		struct rusage r0, r1;
		double t0, t1;

		close(pfd[0]);
		if (sandtrace_arena_attach(&c, name) < 0)
			_exit(1);
		/* warm the code and the header line, not the nodes */
		uint32_t v;
		(void)sandtrace_ctrie_lookup(&c, 0xff, "", 0, &v);
		getrusage(RUSAGE_SELF, &r0);
		t0 = now_ns();
		run(&c, w, hot, 1);
		t1 = now_ns();
		getrusage(RUSAGE_SELF, &r1);
		dprintf(pfd[1], "%.1f %ld\n", (t1 - t0) / 1000.0, r1.ru_minflt - r0.ru_minflt);
		_exit(0);
	}
	close(pfd[1]);
	char buf[64] = "";
	ssize_t n = read(pfd[0], buf, sizeof(buf) - 1);
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	if (n > 0) {
		double us;
		long flt;
		if (sscanf(buf, "%lf %ld", &us, &flt) == 2)
			printf("  first %u lookups in a new process (%s): %.1f us, %ld minor faults\n", hot,
			       w == W_CTRIE ? "ctrie" : "flat ", us, flt);
	}
}

int main(int argc, char **argv)
{
	unsigned keys = argc > 1 ? (unsigned)atoi(argv[1]) : 1500;
	unsigned hot = argc > 2 ? (unsigned)atoi(argv[2]) : 256;
	unsigned rounds = argc > 3 ? (unsigned)atoi(argv[3]) : 20000;
	struct sandtrace_arena a;
	struct sandtrace_ctrie_stats st;
	char name[SANDTRACE_ARENA_NAME_MAX];
	uint64_t b0, b1, b2;
	int rc;

	if (keys < 1 || hot < 1 || rounds < 1)
		return 2;
	if (hot > keys)
		hot = keys;
	make_keys(keys);
	rc = sandtrace_arena_create(&a, UINT64_C(256) << 20, 0, name);
	if (rc < 0 || (rc = sandtrace_ctrie_init(&a)) < 0) {
		fprintf(stderr, "ctrie_bench: %s\n", strerror(-rc));
		return 1;
	}
	b0 = atomic_load(&sandtrace_arena_hdr(&a)->bump);
	for (unsigned i = 0; i < keys; i++)
		if (sandtrace_ctrie_insert(&a, 0, g_keys[i], g_lens[i], i, NULL) != 1)
			return 1;
	b1 = atomic_load(&sandtrace_arena_hdr(&a)->bump);
	if (flat_init(&a, keys) < 0)
		return 1;
	for (unsigned i = 0; i < keys; i++)
		if (flat_insert(&a, 0, g_keys[i], g_lens[i], i) != 1)
			return 1;
	b2 = atomic_load(&sandtrace_arena_hdr(&a)->bump);
	/* both answer every key right before anything is timed */
	for (unsigned i = 0; i < keys; i++) {
		uint32_t v1 = ~0u, v2 = ~0u;
		if (sandtrace_ctrie_lookup(&a, 0, g_keys[i], g_lens[i], &v1) != 1 || v1 != i ||
		    flat_lookup(&a, 0, g_keys[i], g_lens[i], &v2) != 1 || v2 != i) {
			fprintf(stderr, "ctrie_bench: key %u answered wrong\n", i);
			return 1;
		}
	}
	sandtrace_ctrie_stats(&a, &st);

	double th = best(&a, W_HASH, hot, rounds);
	double tc = best(&a, W_CTRIE, hot, rounds);
	double tf = best(&a, W_FLAT, hot, rounds);
	double tca = best(&a, W_CTRIE, keys, rounds * hot / keys + 1);
	double tfa = best(&a, W_FLAT, keys, rounds * hot / keys + 1);

	printf("keys %u (avg %.0f bytes), hot set %u, %u rounds, best of 7\n", keys,
	       (double)(b2 - b1) / keys - 16, hot, rounds);
	printf("  hash only          %6.1f ns/key\n", th);
	printf("  ctrie lookup (hot) %6.1f ns/lookup\n", tc);
	printf("  flat  lookup (hot) %6.1f ns/lookup   ctrie/flat %.2fx\n", tf, tc / tf);
	printf("  ctrie lookup (all) %6.1f ns/lookup\n", tca);
	printf("  flat  lookup (all) %6.1f ns/lookup   ctrie/flat %.2fx\n", tfa, tca / tfa);
	printf("  ctrie: %lu bytes allocated (incl. copy-on-write garbage), depth %lu, %lu cnodes\n",
	       (unsigned long)(b1 - b0), (unsigned long)st.max_depth, (unsigned long)st.cnodes);
	printf("  flat:  %lu bytes (table + own SNodes)\n", (unsigned long)(b2 - b1));
	/* twice each, interleaved: the first child also pays for warming the shared page cache */
	first_touch(name, W_FLAT, hot);
	first_touch(name, W_CTRIE, hot);
	first_touch(name, W_FLAT, hot);
	first_touch(name, W_CTRIE, hot);

	sandtrace_arena_detach(&a);
	sandtrace_arena_unlink(name);
	return 0;
}
