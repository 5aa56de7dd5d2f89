/* tests/stress/ctrie_validate.c - concurrency validator: P processes × T threads insert overlapping keys into one Ctrie. */
/*
 * usage: ctrie_validate PROCS THREADS KEYS [hash|collide]
 *
 * Every thread of every process inserts all KEYS keys (each thread in its
 * own order, so every key is contended), and between inserts looks up
 * random keys.  Invariants checked (after Concurrency Kit's
 * regressions/ * /validate):
 *   - each key is inserted exactly once: the "1" returns for a key, summed
 *     over all inserters in all processes, is 1 (counted in a second shared
 *     map, not in the arena under test);
 *   - a 0 return reports the value of the winner;
 *   - a lookup never sees a wrong value, and sees the key once its own
 *     insert returned;
 *   - afterwards every key is found with its value, the trie holds exactly
 *     KEYS SNodes and the arena counted KEYS insertions;
 *   - seen bits (sandtrace_ctrie_value_or): every thread, once it has
 *     inserted or found a key, looks it up again in two pieces (its first
 *     four bytes, then the rest: sandtrace_ctrie_lookup_prefixed) and ors
 *     its own seen bit (thread number mod SANDTRACE_KIND_MAX) into it; no
 *     or is lost, and a value's other bits never change.
 * "collide" feeds the test hook hashes that agree on bits 12..59 and, in
 * groups of four keys, on all 64 bits: deep one-branch chains and LNodes
 * built and extended concurrently.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../shm/ctrie_internal.h"
#include "sandtrace/arena.h"
#include "sandtrace/common.h"
#include "sandtrace/ctrie.h"

struct shared {
	_Atomic uint32_t ready;  /* threads waiting at the start line */
	_Atomic uint32_t go;     /* start flag */
	_Atomic uint64_t errors; /* invariant violations seen by the inserters */
	_Atomic uint64_t enospc;
	_Atomic uint32_t wins[]; /* per key: inserts that returned 1 */
};

static struct shared *g_sh;
static char g_name[SANDTRACE_ARENA_NAME_MAX];
static struct sandtrace_arena g_a; /* the process's own mapping (re-attached in children) */
static unsigned g_procs, g_threads, g_keys;
static int g_collide;

static uint64_t mix(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

static unsigned key_cls(unsigned k)
{
	static const unsigned cls[] = {SANDTRACE_KIND_READ, SANDTRACE_KIND_WRITE,
				       SANDTRACE_KIND_QUERY, SANDTRACE_KIND_MISSING,
				       SANDTRACE_KEY_VERDICT | SANDTRACE_CLASS_READ};
	return cls[k % 5];
}

static size_t key_bytes(unsigned k, char *buf, size_t cap)
{
	/* k / 5 shared between the classes: same path under several classes */
	return (size_t)snprintf(buf, cap, "/build/obj/dir%u/sub/file-%u.o", (k / 5) % 61, k / 5);
}

/* a key's value: seen bits clear (the threads or theirs in) */
static uint32_t key_value(unsigned k)
{
	return (k * 2654435761u ^ 0x5a5a5a5au) & ~SANDTRACE_V_SEEN_MASK;
}

/* the seen bit thread id ors into every key */
static uint32_t seen_bit(unsigned id)
{
	return 1u << (SANDTRACE_V_SEEN_SHIFT + id % SANDTRACE_KIND_MAX);
}

static uint64_t key_hash(unsigned k)
{
	uint64_t h = mix(k >> 2);
	return h & ~(((UINT64_C(1) << 48) - 1) << 12); /* keep bits 0..11 and 60..63 */
}

static int do_insert(unsigned k, uint32_t *prev)
{
	char buf[96];
	size_t n = key_bytes(k, buf, sizeof(buf));

	if (g_collide)
		return st__ctrie_insert_hashed(&g_a, key_hash(k), key_cls(k), buf, n, key_value(k),
					       prev);
	return sandtrace_ctrie_insert(&g_a, key_cls(k), buf, n, key_value(k), prev);
}

static int do_lookup(const struct sandtrace_arena *a, unsigned k, uint32_t *v)
{
	char buf[96];
	size_t n = key_bytes(k, buf, sizeof(buf));

	if (g_collide)
		return st__ctrie_lookup_hashed(a, key_hash(k), key_cls(k), buf, n, v);
	return sandtrace_ctrie_lookup(a, key_cls(k), buf, n, v);
}

/* Look k up in two pieces and or bit into its value: 1 when done. */
static int do_seen(unsigned k, uint32_t bit)
{
	char buf[96];
	size_t n = key_bytes(k, buf, sizeof(buf));
	uint32_t pre, v, ref = 0;
	int r;

	memcpy(&pre, buf, 4);
	if (g_collide)
		r = st__ctrie_lookup_hashed_prefixed(&g_a, key_hash(k), key_cls(k), pre, buf + 4,
						     n - 4, &v, &ref);
	else
		r = sandtrace_ctrie_lookup_prefixed(&g_a, key_cls(k), pre, buf + 4, n - 4, &v, &ref);
	if (r != 1)
		return r;
	sandtrace_ctrie_value_or(&g_a, ref, bit);
	return (sandtrace_ctrie_value(&g_a, ref) & bit) ? 1 : -1;
}

static void fail(const char *what, unsigned k, long got)
{
	if (atomic_fetch_add(&g_sh->errors, 1) < 20)
		fprintf(stderr, "ctrie_validate: pid %d: %s: key %u: got %ld\n", (int)getpid(), what, k,
			got);
}

static void *inserter(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg; /* global thread index */
	unsigned nth = g_procs * g_threads;
	unsigned start = (unsigned)((uint64_t)g_keys * id / nth);
	uint64_t rnd = mix(id + 1);
	int backwards = id & 1;

	atomic_fetch_add(&g_sh->ready, 1);
	while (!atomic_load_explicit(&g_sh->go, memory_order_acquire))
		sched_yield();
	for (unsigned i = 0; i < g_keys; i++) {
		/* every thread its own starting point and direction: each key is contended */
		unsigned k = backwards ? (start + g_keys - i) % g_keys : (start + i) % g_keys;
		uint32_t prev = 0, v = 0;
		int r = do_insert(k, &prev);

		if (r == 1) {
			atomic_fetch_add_explicit(&g_sh->wins[k], 1, memory_order_relaxed);
		} else if (r == 0) {
			if ((prev & ~SANDTRACE_V_SEEN_MASK) != key_value(k))
				fail("duplicate insert reported a wrong value", k, (long)prev);
		} else if (r == -ENOSPC) {
			atomic_fetch_add(&g_sh->enospc, 1);
			continue;
		} else {
			fail("insert failed", k, r);
			continue;
		}
		r = do_lookup(&g_a, k, &v);
		if (r != 1 || (v & ~SANDTRACE_V_SEEN_MASK) != key_value(k))
			fail("lookup after insert", k, r == 1 ? (long)v : r);
		r = do_seen(k, seen_bit(id));
		if (r != 1)
			fail("seen bit", k, r);
		/* a random key: absent, or present with its own value */
		rnd = mix(rnd);
		unsigned q = (unsigned)(rnd % g_keys);
		r = do_lookup(&g_a, q, &v);
		if (r < 0 || (r == 1 && (v & ~SANDTRACE_V_SEEN_MASK) != key_value(q)))
			fail("random lookup", q, r == 1 ? (long)v : r);
	}
	return NULL;
}

static int child(unsigned p)
{
	pthread_t th[64];
	unsigned t;
	int rc;

	/* a real attach, as a traced process does: another address, offsets only */
	sandtrace_arena_detach(&g_a);
	rc = sandtrace_arena_attach(&g_a, g_name);
	if (rc < 0) {
		fprintf(stderr, "ctrie_validate: attach: %s\n", strerror(-rc));
		return 1;
	}
	for (t = 0; t < g_threads; t++) {
		if (pthread_create(&th[t], NULL, inserter, (void *)(uintptr_t)(p * g_threads + t)) != 0) {
			fprintf(stderr, "ctrie_validate: pthread_create failed\n");
			return 1;
		}
	}
	for (t = 0; t < g_threads; t++)
		pthread_join(th[t], NULL);
	sandtrace_arena_detach(&g_a);
	return 0;
}

int main(int argc, char **argv)
{
	struct sandtrace_ctrie_stats st;
	struct sandtrace_arena_header *h;
	unsigned long errors = 0;
	pid_t pids[256];
	unsigned p, k;
	int rc;

	if (argc < 4) {
		fprintf(stderr, "usage: %s PROCS THREADS KEYS [hash|collide]\n", argv[0]);
		return 2;
	}
	g_procs = (unsigned)strtoul(argv[1], NULL, 10);
	g_threads = (unsigned)strtoul(argv[2], NULL, 10);
	g_keys = (unsigned)strtoul(argv[3], NULL, 10);
	g_collide = argc > 4 && strcmp(argv[4], "collide") == 0;
	if (g_procs < 1 || g_procs > 256 || g_threads < 1 || g_threads > 64 || g_keys < 1) {
		fprintf(stderr, "ctrie_validate: 1..256 processes, 1..64 threads, >= 1 key\n");
		return 2;
	}

	/* sparse: only what the trie (and its copy-on-write garbage) touches costs memory */
	rc = sandtrace_arena_create(&g_a, (UINT64_C(64) << 20) + (uint64_t)g_keys * 4096, 0, g_name);
	if (rc < 0 || (rc = sandtrace_ctrie_init(&g_a)) < 0) {
		fprintf(stderr, "ctrie_validate: arena: %s\n", strerror(-rc));
		return 1;
	}
	g_sh = mmap(NULL, sizeof(*g_sh) + (size_t)g_keys * sizeof(g_sh->wins[0]),
		    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g_sh == MAP_FAILED) {
		perror("ctrie_validate: mmap");
		sandtrace_arena_unlink(g_name);
		return 1;
	}

	for (p = 0; p < g_procs; p++) {
		pids[p] = fork();
		if (pids[p] < 0) {
			perror("ctrie_validate: fork");
			atomic_store(&g_sh->go, 1);
			g_procs = p;
			errors++;
			break;
		}
		if (pids[p] == 0)
			_exit(child(p));
	}
	/* everyone at the start line, then go: maximal overlap */
	while (errors == 0 && atomic_load(&g_sh->ready) < g_procs * g_threads)
		sched_yield();
	atomic_store_explicit(&g_sh->go, 1, memory_order_release);
	for (p = 0; p < g_procs; p++) {
		int status;

		if (waitpid(pids[p], &status, 0) != pids[p] || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(stderr, "ctrie_validate: child %u failed (status %#x)\n", p, status);
			errors++;
		}
	}

	errors += atomic_load(&g_sh->errors);
	if (atomic_load(&g_sh->enospc) != 0) {
		fprintf(stderr, "ctrie_validate: arena full (%lu ENOSPC): enlarge it\n",
			(unsigned long)atomic_load(&g_sh->enospc));
		errors++;
	}
	uint32_t all_seen = 0;
	for (unsigned id = 0; id < g_procs * g_threads; id++)
		all_seen |= seen_bit(id);
	for (k = 0; k < g_keys; k++) {
		uint32_t w = atomic_load(&g_sh->wins[k]), v = 0;

		if (w != 1) {
			if (errors++ < 20)
				fprintf(stderr, "ctrie_validate: key %u inserted %u times\n", k, w);
		}
		rc = do_lookup(&g_a, k, &v);
		if (rc != 1 || v != (key_value(k) | all_seen)) {
			if (errors++ < 20)
				fprintf(stderr, "ctrie_validate: key %u: final lookup %d value %u\n", k,
					rc, v);
		}
	}
	rc = sandtrace_ctrie_stats(&g_a, &st);
	h = sandtrace_arena_hdr(&g_a);
	if (rc < 0 || st.snodes != g_keys ||
	    atomic_load(&h->counters[SANDTRACE_CTR_INSERTS]) != g_keys) {
		fprintf(stderr, "ctrie_validate: stats rc %d snodes %lu inserts %lu, want %u\n", rc,
			(unsigned long)st.snodes,
			(unsigned long)atomic_load(&h->counters[SANDTRACE_CTR_INSERTS]), g_keys);
		errors++;
	}
	if (atomic_load(&h->counters[SANDTRACE_CTR_FILTER_UNSET]) != 0) {
		fprintf(stderr, "ctrie_validate: %lu inserts published a key whose filter bits read clear\n",
			(unsigned long)atomic_load(&h->counters[SANDTRACE_CTR_FILTER_UNSET]));
		errors++;
	}
	if (!sandtrace_arena_valid(&g_a)) {
		fprintf(stderr, "ctrie_validate: arena header invalid after the run\n");
		errors++;
	}
	printf("ctrie_validate: %u procs x %u threads x %u keys (%s): %s\n"
	       "  snodes %lu cnodes %lu lnodes %lu max_depth %lu; cas_retries %lu; "
	       "node bytes %lu (%.1f per key); attaches %lu\n",
	       g_procs, g_threads, g_keys, g_collide ? "collide" : "hash",
	       errors ? "FAILED" : "ok", (unsigned long)st.snodes, (unsigned long)st.cnodes,
	       (unsigned long)st.lnodes, (unsigned long)st.max_depth,
	       (unsigned long)atomic_load(&h->counters[SANDTRACE_CTR_CAS_RETRIES]),
	       (unsigned long)atomic_load(&h->counters[SANDTRACE_CTR_BYTES_NODES]),
	       (double)atomic_load(&h->counters[SANDTRACE_CTR_BYTES_NODES]) / g_keys,
	       (unsigned long)atomic_load(&h->counters[SANDTRACE_CTR_ATTACHES]));
	sandtrace_arena_detach(&g_a);
	sandtrace_arena_unlink(g_name);
	return errors ? 1 : 0;
}
