/* tests/unit/test_ctrie.c - Check suite for shm/ctrie.c: insert/lookup, odd keys, collisions, full and corrupted arenas. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../shm/ctrie_internal.h"
#include "sandtrace/arena.h"
#include "sandtrace/common.h"
#include "sandtrace/ctrie.h"

#define MIB (UINT64_C(1) << 20)

static struct sandtrace_arena g_a;
static char g_name[SANDTRACE_ARENA_NAME_MAX];

static void make_trie(uint64_t size)
{
	ck_assert_int_eq(sandtrace_arena_create(&g_a, size, 0, g_name), 0);
	ck_assert_int_eq(sandtrace_ctrie_init(&g_a), 0);
}

static void teardown(void)
{
	sandtrace_arena_detach(&g_a);
	if (g_name[0] != '\0')
		sandtrace_arena_unlink(g_name);
	g_name[0] = '\0';
}

static uint64_t ctr(enum sandtrace_arena_counter c)
{
	return atomic_load(&sandtrace_arena_hdr(&g_a)->counters[c]);
}

/* A path-like key for index i. */
static size_t key_of(unsigned i, char *buf, size_t cap)
{
	return (size_t)snprintf(buf, cap, "/usr/lib/gcc/x86_64-linux-gnu/12/include/d%u/f%u.h", i % 97,
				i);
}

START_TEST(no_root)
{
	uint32_t v;

	ck_assert_int_eq(sandtrace_arena_create(&g_a, MIB, 0, g_name), 0);
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, "/x", 2, &v), -EINVAL);
	ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 0, "/x", 2, 1, NULL), -EINVAL);
	struct sandtrace_arena none = {NULL, 0, 0};
	ck_assert_int_eq(sandtrace_ctrie_lookup(&none, 0, "/x", 2, &v), -EINVAL);

	uint64_t gen = atomic_load(&sandtrace_arena_hdr(&g_a)->generation);
	ck_assert_int_eq(sandtrace_ctrie_init(&g_a), 0);
	ck_assert_uint_eq(atomic_load(&sandtrace_arena_hdr(&g_a)->generation), gen + 1);
	ck_assert_uint_ne(atomic_load(&sandtrace_arena_hdr(&g_a)->root), 0);
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, "/x", 2, &v), 0);
	ck_assert(sandtrace_arena_valid(&g_a));
}
END_TEST

START_TEST(hash_is_pure)
{
	const char *k = "/usr/include/stdio.h";
	uint64_t h = sandtrace_ctrie_hash(0, k, strlen(k));
	char copy[64];

	strcpy(copy, k);
	ck_assert_uint_eq(sandtrace_ctrie_hash(0, copy, strlen(copy)), h);
	ck_assert_uint_ne(sandtrace_ctrie_hash(1, k, strlen(k)), h);
	ck_assert_uint_ne(sandtrace_ctrie_hash(0, k, strlen(k) - 1), h);
	/* every length class of the tail code; also: the hash reads only len bytes (ASan) */
	char big[64];
	memset(big, 'a', sizeof(big));
	for (size_t n = 0; n < sizeof(big); n++)
		ck_assert_uint_ne(sandtrace_ctrie_hash(0, big, n), sandtrace_ctrie_hash(0, big, n + 1));
}
END_TEST

START_TEST(insert_lookup_100k)
{
	enum { N = 100000 };
	char k[128];
	uint32_t v;

	make_trie(64 * MIB);
	for (unsigned i = 0; i < N; i++) {
		size_t n = key_of(i, k, sizeof(k));
		ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, i % 6, k, n, i, NULL), 1);
	}
	for (unsigned i = 0; i < N; i++) {
		size_t n = key_of(i, k, sizeof(k));
		v = ~0u;
		ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, i % 6, k, n, &v), 1);
		ck_assert_uint_eq(v, i);
		/* the same path under another class is absent */
		ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, (i + 1) % 6, k, n, &v), 0);
	}
	for (unsigned i = N; i < N + 1000; i++) {
		size_t n = key_of(i, k, sizeof(k));
		ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, i % 6, k, n, &v), 0);
	}
	struct sandtrace_ctrie_stats st;
	ck_assert_int_eq(sandtrace_ctrie_stats(&g_a, &st), 0);
	ck_assert_uint_eq(st.snodes, N);
	ck_assert_uint_eq(st.inodes, st.cnodes);
	ck_assert_uint_ge(st.max_depth, 3);
	ck_assert_uint_le(st.max_depth, 6); /* 64-way levels: ~log64(100k) + a few */
	ck_assert_uint_eq(st.lnodes, 0);
	ck_assert_uint_eq(ctr(SANDTRACE_CTR_INSERTS), N);
	ck_assert_uint_eq(ctr(SANDTRACE_CTR_FULL), 0);
}
END_TEST

/* The cache array grows with the trie (4x once inserts reach its slots, up to
 * 2^18), and lookups stay right across every replacement. */
/* In an arena with areas, a fresh trie's root and first cache array lie in
 * the header's window (its first 64 KiB, which the first read of the header
 * maps whole): a process's first lookups fault in no page of their own for
 * them.  (An earlier layout served the 32 KiB array a segment of its own,
 * one more page fault in every process.) */
START_TEST(first_cache_beside_header)
{
	make_trie(SANDTRACE_ARENA_AREAS_MIN);
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(&g_a);
	uint64_t root = atomic_load(&h->root);
	struct st__inode *in = (struct st__inode *)(g_a.base + root);
	uint64_t w = atomic_load(&in->cache);
	uint64_t off = (uint32_t)w, bytes = sizeof(uint64_t) << (w >> 32);
	ck_assert_uint_ne(off, 0);
	ck_assert_uint_lt(root + sizeof(*in), 64 << 10);
	ck_assert_uint_le(off + bytes, 64 << 10);
}
END_TEST

/* The key filter (shm/ctrie.c): every inserted key's two bits are set, few
 * absent keys pass it, and it gates the walk: with the cache off, a present
 * key whose bits are cleared is not found, and is again once they are back;
 * a filter offset outside the map is not used (every lookup walks). */
static bool filter_bits(const _Atomic uint64_t *f, uint64_t hash)
{
	uint32_t b1 = (uint32_t)(hash >> 48), b2 = (uint32_t)(hash >> 16) & 0xffffu;
	return (atomic_load(&f[b1 >> 6]) >> (b1 & 63) & 1) && (atomic_load(&f[b2 >> 6]) >> (b2 & 63) & 1);
}

START_TEST(key_filter)
{
	char k[128];
	uint32_t v;
	make_trie(SANDTRACE_ARENA_AREAS_MIN);
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(&g_a);
	uint64_t foff = h->filter;
	ck_assert_uint_ne(foff, 0);
	ck_assert_uint_lt(foff + SANDTRACE_ARENA_FILTER_BITS / 8, 64 << 10); /* beside the header */
	_Atomic uint64_t *f = (_Atomic uint64_t *)(void *)((char *)g_a.base + foff);
	for (unsigned i = 0; i < 2000; i++) {
		size_t n = key_of(i, k, sizeof(k));
		ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 0, k, n, i + 1, NULL), 1);
		ck_assert(filter_bits(f, sandtrace_ctrie_hash(0, k, n)));
	}
	unsigned pass = 0;
	for (unsigned i = 2000; i < 22000; i++) {
		size_t n = key_of(i, k, sizeof(k));
		pass += filter_bits(f, sandtrace_ctrie_hash(0, k, n));
		ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, k, n, &v), 0);
	}
	ck_assert_uint_lt(pass, 1000); /* about 0.35% expected for 2,000 keys */
	ck_assert_uint_eq(ctr(SANDTRACE_CTR_FILTER_UNSET), 0); /* set before publication */
	for (unsigned i = 0; i < 2000; i++) {
		size_t n = key_of(i, k, sizeof(k));
		ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, k, n, &v), 1);
		ck_assert_uint_eq(v, i + 1);
	}
	/* the cache off: lookups of present keys walk, through the filter */
	struct st__inode *root = (struct st__inode *)(void *)((char *)g_a.base + atomic_load(&h->root));
	atomic_store(&root->cache, 0);
	size_t n = key_of(7, k, sizeof(k));
	uint64_t hash = sandtrace_ctrie_hash(0, k, n);
	uint32_t b1 = (uint32_t)(hash >> 48), b2 = (uint32_t)(hash >> 16) & 0xffffu;
	uint64_t w1 = atomic_load(&f[b1 >> 6]), w2 = atomic_load(&f[b2 >> 6]);
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, k, n, &v), 1);
	atomic_fetch_and(&f[b1 >> 6], ~(UINT64_C(1) << (b1 & 63)));
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, k, n, &v), 0);
	/* a damaged offset (outside the map, or anywhere but the filter's
	 * place, over other tables): the filter is not used, the walk finds it */
	h->filter = g_a.size - 8;
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, k, n, &v), 1);
	h->filter = sizeof(*h);
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, k, n, &v), 1);
	h->filter = foff;
	atomic_store(&f[b1 >> 6], w1);
	atomic_store(&f[b2 >> 6], w2);
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, k, n, &v), 1);
	/* an insert of a new key sets its bits before publishing it */
	n = key_of(99999, k, sizeof(k));
	ck_assert(!filter_bits(f, sandtrace_ctrie_hash(0, k, n)) ||
		  sandtrace_ctrie_lookup(&g_a, 0, k, n, &v) == 0);
	ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 0, k, n, 5, NULL), 1);
	ck_assert(filter_bits(f, sandtrace_ctrie_hash(0, k, n)));
	ck_assert_uint_eq(ctr(SANDTRACE_CTR_FILTER_UNSET), 0);
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, k, n, &v), 1);
}
END_TEST

START_TEST(cache_grows)
{
	char k[128];
	uint32_t v;
	make_trie(64 * MIB);
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(&g_a);
	struct st__inode *in = (struct st__inode *)(g_a.base + atomic_load(&h->root));
	ck_assert_uint_eq(atomic_load(&in->cache) >> 32, 12);
	unsigned n = 70000;
	for (unsigned i = 0; i < n; i++) {
		size_t len = key_of(i, k, sizeof(k));
		ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 0, k, len, i, NULL), 1);
		if (i == 4096 + 1)
			ck_assert_uint_eq(atomic_load(&in->cache) >> 32, 14);
	}
	ck_assert_uint_eq(atomic_load(&in->cache) >> 32, 18);
	for (unsigned i = 0; i < n; i++) {
		size_t len = key_of(i, k, sizeof(k));
		ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, k, len, &v), 1);
		ck_assert_uint_eq(v, i);
	}
}
END_TEST

START_TEST(duplicates_keep_first_value)
{
	uint32_t prev = 0, v;

	make_trie(MIB);
	ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 2, "/etc/passwd", 11, 7, &prev), 1);
	ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 2, "/etc/passwd", 11, 9, &prev), 0);
	ck_assert_uint_eq(prev, 7);
	ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 2, "/etc/passwd", 11, 9, NULL), 0);
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 2, "/etc/passwd", 11, &v), 1);
	ck_assert_uint_eq(v, 7);
	/* a duplicate allocates nothing */
	uint64_t bump = atomic_load(&sandtrace_arena_hdr(&g_a)->bump);
	ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 2, "/etc/passwd", 11, 1, NULL), 0);
	ck_assert_uint_eq(atomic_load(&sandtrace_arena_hdr(&g_a)->bump), bump);
	/* prefix / extension of the key are other keys */
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 2, "/etc/passw", 10, &v), 0);
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 2, "/etc/passwd\0", 12, &v), 0);
}
END_TEST

START_TEST(keys_differing_only_in_cls)
{
	uint32_t v;
	const char *p = "/tmp/cc123.o";
	unsigned classes[] = {SANDTRACE_KIND_READ,
			      SANDTRACE_KIND_WRITE,
			      SANDTRACE_KIND_MISSING,
			      SANDTRACE_KIND_READ | SANDTRACE_KEY_NOFOLLOW,
			      SANDTRACE_KEY_VERDICT | SANDTRACE_CLASS_READ,
			      SANDTRACE_KEY_VERDICT | SANDTRACE_CLASS_WRITE,
			      SANDTRACE_KEY_VERDICT | SANDTRACE_CLASS_EXEC};
	size_t n = sizeof(classes) / sizeof(classes[0]);

	make_trie(MIB);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, classes[i], p, strlen(p), 100 + (uint32_t)i, NULL), 1);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, classes[i], p, strlen(p), &v), 1);
		ck_assert_uint_eq(v, 100 + i);
	}
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, SANDTRACE_KIND_EXEC, p, strlen(p), &v), 0);
}
END_TEST

START_TEST(odd_key_bytes)
{
	static char big[10000];
	const struct {
		const char *k;
		size_t n;
	} keys[] = {
		{"", 0},
		{"/a\0b", 4},
		{"/a\0c", 4},
		{"/a", 2},
		{"/with\nnewline", 13},
		{"/with\ttab", 9},
		{"/bad\xff\xfe utf8", 12},
		{"/\xc3\x28", 3},
		{"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 17},
		{"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16},
		{big, sizeof(big)},
		{big, sizeof(big) - 1},
	};
	size_t nk = sizeof(keys) / sizeof(keys[0]);
	uint32_t v;

	memset(big, 'x', sizeof(big));
	big[0] = '/';
	big[5000] = '\0';
	make_trie(MIB);
	for (size_t i = 0; i < nk; i++)
		ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 1, keys[i].k, keys[i].n, (uint32_t)i, NULL), 1);
	for (size_t i = 0; i < nk; i++) {
		ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 1, keys[i].k, keys[i].n, &v), 1);
		ck_assert_uint_eq(v, i);
		ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 1, keys[i].k, keys[i].n, 999, &v), 0);
		ck_assert_uint_eq(v, i);
	}
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 1, "/a\0d", 4, &v), 0);
	ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 1, NULL, 5, 0, NULL), -EINVAL);
}
END_TEST

/* Full 64-bit hash collisions end in an LNode; every colliding key stays distinct. */
START_TEST(full_hash_collisions)
{
	const uint64_t h = UINT64_C(0x0123456789abcdef);
	char k[32];
	uint32_t v;

	make_trie(MIB);
	for (unsigned i = 0; i < 50; i++) {
		size_t n = (size_t)snprintf(k, sizeof(k), "/collide/%u", i);
		ck_assert_int_eq(st__ctrie_insert_hashed(&g_a, h, 0, k, n, i, NULL), 1);
	}
	for (unsigned i = 0; i < 50; i++) {
		size_t n = (size_t)snprintf(k, sizeof(k), "/collide/%u", i);
		ck_assert_int_eq(st__ctrie_lookup_hashed(&g_a, h, 0, k, n, &v), 1);
		ck_assert_uint_eq(v, i);
		ck_assert_int_eq(st__ctrie_insert_hashed(&g_a, h, 0, k, n, 5, &v), 0);
		ck_assert_uint_eq(v, i);
		/* same bytes, same hash, other class: still a different key */
		ck_assert_int_eq(st__ctrie_lookup_hashed(&g_a, h, 3, k, n, &v), 0);
	}
	ck_assert_int_eq(st__ctrie_lookup_hashed(&g_a, h, 0, "/collide/50", 11, &v), 0);
	/* same length, same hash, different bytes */
	ck_assert_int_eq(st__ctrie_lookup_hashed(&g_a, h, 0, "/collide/x", 10, &v), 0);

	/* a key sharing all but the top 4 bits lands next to the LNode, not in it */
	uint64_t h2 = h ^ (UINT64_C(1) << 63);
	ck_assert_int_eq(st__ctrie_insert_hashed(&g_a, h2, 0, "/near", 5, 77, NULL), 1);
	ck_assert_int_eq(st__ctrie_lookup_hashed(&g_a, h2, 0, "/near", 5, &v), 1);
	ck_assert_uint_eq(v, 77);
	ck_assert_int_eq(st__ctrie_lookup_hashed(&g_a, h, 0, "/collide/7", 10, &v), 1);
	ck_assert_uint_eq(v, 7);

	struct sandtrace_ctrie_stats st;
	ck_assert_int_eq(sandtrace_ctrie_stats(&g_a, &st), 0);
	ck_assert_uint_eq(st.snodes, 51);
	ck_assert_uint_eq(st.lnodes, 1);
	ck_assert_uint_eq(st.max_depth, 12); /* 11 CNode levels + the LNode's INode */
	ck_assert_uint_eq(ctr(SANDTRACE_CTR_LNODES), 49); /* one dual + 48 appends */
}
END_TEST

/* The two-piece key (a 32-bit prefix, then the rest) hashes and compares as
 * the same bytes in one piece: for every length class of the hash's tail,
 * every byte value, through the cache, the walk and an LNode. */
START_TEST(prefixed_keys)
{
	unsigned char whole[200], rest[196];
	uint32_t v;
	srandom(7);
	for (size_t n = 0; n < sizeof(rest); n++) {
		for (unsigned t = 0; t < 4; t++) {
			uint32_t pre = t == 0 ? 0 : t == 1 ? UINT32_MAX : (uint32_t)random();
			for (size_t i = 0; i < n; i++)
				rest[i] = t == 3 ? (unsigned char)(i * 37) : (unsigned char)random();
			memcpy(whole, &pre, 4);
			memcpy(whole + 4, rest, n);
			for (unsigned cls = 0; cls < 256; cls += 85)
				ck_assert_uint_eq(sandtrace_ctrie_hash_prefixed(cls, pre, rest, n),
						  sandtrace_ctrie_hash(cls, whole, n + 4));
		}
	}

	make_trie(64 * MIB);
	char k[128];
	const unsigned N = 20000; /* more than the first cache holds: some lookups walk */
	for (unsigned i = 0; i < N; i++) {
		uint32_t gen = i % 5 ? 0x80000000u | i : i;
		memcpy(k, &gen, 4);
		size_t n = key_of(i, k + 4, sizeof(k) - 4);
		ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 3, k, n + 4, i, NULL), 1);
	}
	for (unsigned i = 0; i < N; i++) {
		uint32_t gen = i % 5 ? 0x80000000u | i : i;
		size_t n = key_of(i, k, sizeof(k));
		ck_assert_int_eq(sandtrace_ctrie_lookup_prefixed(&g_a, 3, gen, k, n, &v, NULL), 1);
		ck_assert_uint_eq(v, i);
		/* another prefix, class, length or last byte: another key */
		ck_assert_int_eq(sandtrace_ctrie_lookup_prefixed(&g_a, 3, gen ^ 1, k, n, &v, NULL), 0);
		ck_assert_int_eq(sandtrace_ctrie_lookup_prefixed(&g_a, 2, gen, k, n, &v, NULL), 0);
		ck_assert_int_eq(sandtrace_ctrie_lookup_prefixed(&g_a, 3, gen, k, n - 1, &v, NULL), 0);
		k[n - 1] ^= 0x40;
		ck_assert_int_eq(sandtrace_ctrie_lookup_prefixed(&g_a, 3, gen, k, n, &v, NULL), 0);
	}
	ck_assert_int_eq(sandtrace_ctrie_lookup_prefixed(&g_a, 3, 0, NULL, 5, &v, NULL), -EINVAL);

	/* a verdict's SNode takes the record kinds seen (only those bits, only more) */
	uint32_t ref = 0, ref2 = 0;
	size_t n7 = key_of(7, k, sizeof(k));
	ck_assert_int_eq(sandtrace_ctrie_lookup_prefixed(&g_a, 3, 0x80000007u, k, n7, &v, &ref), 1);
	ck_assert_uint_ne(ref, 0);
	ck_assert_uint_eq(sandtrace_ctrie_value(&g_a, ref), 7);
	sandtrace_ctrie_value_or(&g_a, ref, 1u << (SANDTRACE_V_SEEN_SHIFT + SANDTRACE_KIND_MISSING));
	sandtrace_ctrie_value_or(&g_a, ref, 0xffu | SANDTRACE_V_EACCES); /* not a seen bit: ignored */
	ck_assert_int_eq(sandtrace_ctrie_lookup_prefixed(&g_a, 3, 0x80000007u, k, n7, &v, &ref2), 1);
	ck_assert_uint_eq(ref2, ref);
	ck_assert_uint_eq(v, 7u | 1u << (SANDTRACE_V_SEEN_SHIFT + SANDTRACE_KIND_MISSING));
	ck_assert_uint_eq(sandtrace_ctrie_value(&g_a, ref), v);
	/* an insert of the key again keeps the value, seen bits and all */
	memcpy(k + 64, k, n7);
	uint32_t g7 = 0x80000007u;
	memcpy(k, &g7, 4);
	memcpy(k + 4, k + 64, n7);
	ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 3, k, n7 + 4, 99, &v), 0);
	ck_assert_uint_eq(v, 7u | 1u << (SANDTRACE_V_SEEN_SHIFT + SANDTRACE_KIND_MISSING));
	ck_assert_uint_eq(sandtrace_ctrie_value(&g_a, UINT32_MAX - 8), 0); /* out of bounds */

	/* full-hash collisions: the LNode's SNodes compared in two pieces */
	const uint64_t h = UINT64_C(0x0123456789abcdef);
	for (unsigned i = 0; i < 20; i++) {
		uint32_t gen = 1000 + i % 2;
		memcpy(k, &gen, 4);
		size_t n = (size_t)snprintf(k + 4, sizeof(k) - 4, "/collide/%u", i);
		ck_assert_int_eq(st__ctrie_insert_hashed(&g_a, h, 1, k, n + 4, i, NULL), 1);
	}
	for (unsigned i = 0; i < 20; i++) {
		size_t n = (size_t)snprintf(k, sizeof(k), "/collide/%u", i);
		ck_assert_int_eq(st__ctrie_lookup_hashed_prefixed(&g_a, h, 1, 1000 + i % 2, k, n, &v, NULL), 1);
		ck_assert_uint_eq(v, i);
		ck_assert_int_eq(st__ctrie_lookup_hashed_prefixed(&g_a, h, 1, 1001 - i % 2, k, n, &v, NULL), 0);
	}
}
END_TEST

/* Hashes equal in their low bits build deep chains; neighbours at each level stay reachable. */
START_TEST(partial_hash_collisions)
{
	char k[32];
	uint32_t v;

	make_trie(MIB);
	for (unsigned lvl = 0; lvl < 11; lvl++) {
		for (unsigned j = 0; j < 3; j++) {
			/* equal on the low 6*lvl bits, different above */
			uint64_t h = UINT64_C(0x5555555555555555) ^ ((uint64_t)(j + 1) << (6 * lvl));
			size_t n = (size_t)snprintf(k, sizeof(k), "/p/%u/%u", lvl, j);
			ck_assert_int_eq(st__ctrie_insert_hashed(&g_a, h, 0, k, n, lvl * 10 + j, NULL), 1);
		}
	}
	for (unsigned lvl = 0; lvl < 11; lvl++) {
		for (unsigned j = 0; j < 3; j++) {
			uint64_t h = UINT64_C(0x5555555555555555) ^ ((uint64_t)(j + 1) << (6 * lvl));
			size_t n = (size_t)snprintf(k, sizeof(k), "/p/%u/%u", lvl, j);
			ck_assert_int_eq(st__ctrie_lookup_hashed(&g_a, h, 0, k, n, &v), 1);
			ck_assert_uint_eq(v, lvl * 10 + j);
		}
	}
	struct sandtrace_ctrie_stats st;
	ck_assert_int_eq(sandtrace_ctrie_stats(&g_a, &st), 0);
	ck_assert_uint_eq(st.snodes, 33);
	ck_assert_uint_eq(st.lnodes, 0);
}
END_TEST

/* A full arena refuses new keys with -ENOSPC and still answers for every key it took. */
START_TEST(full_arena)
{
	enum { MAXK = 10000 };
	static int got[MAXK];
	char k[128];
	uint32_t v;
	unsigned i, nfull = 0;

	make_trie(64 << 10);
	for (i = 0; i < MAXK; i++) {
		size_t n = key_of(i, k, sizeof(k));
		got[i] = sandtrace_ctrie_insert(&g_a, 0, k, n, i, NULL);
		ck_assert(got[i] == 1 || got[i] == -ENOSPC);
		if (got[i] == -ENOSPC)
			nfull++;
	}
	ck_assert_uint_gt(nfull, MAXK / 2);
	ck_assert_uint_gt(MAXK - nfull, 100);
	ck_assert_uint_gt(ctr(SANDTRACE_CTR_FULL), 0);
	ck_assert(sandtrace_arena_valid(&g_a));
	for (i = 0; i < MAXK; i++) {
		size_t n = key_of(i, k, sizeof(k));
		int r = sandtrace_ctrie_lookup(&g_a, 0, k, n, &v);
		if (got[i] == 1) {
			ck_assert_int_eq(r, 1);
			ck_assert_uint_eq(v, i);
			/* a duplicate needs no memory: still answered on a full arena */
			ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 0, k, n, 0, &v), 0);
			ck_assert_uint_eq(v, i);
		} else {
			ck_assert_int_eq(r, 0); /* nothing half-inserted */
		}
	}
	struct sandtrace_ctrie_stats st;
	ck_assert_int_eq(sandtrace_ctrie_stats(&g_a, &st), 0);
	ck_assert_uint_eq(st.snodes, MAXK - nfull);

	/* no root fits in a full arena (what small space was left is used up first) */
	while (sandtrace_arena_alloc(&g_a, 16) != 0)
		;
	ck_assert_int_eq(sandtrace_ctrie_init(&g_a), -ENOSPC);
}
END_TEST

/* Inserts from a forked child (another mapping address) are seen by the parent. */
START_TEST(cross_process)
{
	char k[128];
	uint32_t v;

	make_trie(4 * MIB);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sandtrace_arena c;
		int ok = sandtrace_arena_attach(&c, g_name) == 0;
		for (unsigned i = 0; ok && i < 2000; i++) {
			size_t n = key_of(i, k, sizeof(k));
			ok = sandtrace_ctrie_insert(&c, 0, k, n, i * 3, NULL) == 1;
		}
		_exit(ok ? 0 : 1);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (unsigned i = 0; i < 2000; i++) {
		size_t n = key_of(i, k, sizeof(k));
		ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, k, n, &v), 1);
		ck_assert_uint_eq(v, i * 3);
	}
}
END_TEST

/* A new generation starts empty; the old root is still readable by whoever holds it. */
START_TEST(new_generation)
{
	uint32_t v;

	make_trie(MIB);
	ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 0, "/a", 2, 1, NULL), 1);
	ck_assert_int_eq(sandtrace_ctrie_init(&g_a), 0);
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, "/a", 2, &v), 0);
	ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 0, "/a", 2, 2, NULL), 1);
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, "/a", 2, &v), 1);
	ck_assert_uint_eq(v, 2);
	ck_assert_uint_eq(atomic_load(&sandtrace_arena_hdr(&g_a)->generation), 2);
}
END_TEST

/* Targeted corruption: bad root, bad tags, offsets past the end -> -EINVAL, no crash. */
START_TEST(corrupted_links)
{
	struct sandtrace_arena_header *h;
	uint32_t v;
	char k[128];

	make_trie(MIB);
	h = sandtrace_arena_hdr(&g_a);
	for (unsigned i = 0; i < 300; i++) {
		size_t n = key_of(i, k, sizeof(k));
		ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 0, k, n, i, NULL), 1);
	}
	uint64_t root = atomic_load(&h->root);
	struct st__inode *in = (struct st__inode *)(g_a.base + root);
	uint32_t main = atomic_load(&in->main);

	/* the cache array: garbage in its entries is never trusted, even
	 * under the right tag (answers stay right), and emptied it sends
	 * every lookup down the trie below */
	uint64_t cw = atomic_load(&in->cache);
	uint32_t nslots = (uint32_t)1 << (cw >> 32);
	ck_assert_uint_ne((uint32_t)cw, 0);
	ck_assert_uint_eq((uint32_t)cw % 64, 0); /* a bucket never straddles a line */
	uint64_t *slots = (uint64_t *)(g_a.base + (uint32_t)cw);
	const uint32_t bad[ST__CACHE_WAYS] = {
		0xfffffff0u | ST__TAG_SNODE,     /* past the end */
		(uint32_t)root | ST__TAG_SNODE,  /* an INode taken for an SNode */
		(uint32_t)root | ST__TAG_INODE,  /* not an SNode at all */
		8u | ST__TAG_SNODE,              /* inside the header */
	};
	for (unsigned i = 0; i < 300; i++) {
		size_t n = key_of(i, k, sizeof(k));
		uint64_t hash = sandtrace_ctrie_hash(0, k, n);
		uint64_t *b = slots + (size_t)((uint32_t)(hash >> 32) & (nslots / ST__CACHE_WAYS - 1)) *
					       ST__CACHE_WAYS;
		for (unsigned w = 0; w < ST__CACHE_WAYS; w++)
			b[w] = (uint64_t)(uint32_t)hash << 32 | bad[w];
	}
	for (unsigned i = 0; i < 300; i++) {
		size_t n = key_of(i, k, sizeof(k));
		ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, k, n, &v), 1);
		ck_assert_uint_eq(v, i);
	}
	memset(slots, 0, (size_t)nslots * sizeof(uint64_t));

	atomic_store(&h->root, MIB + 16);
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, "/x", 2, &v), -EINVAL);
	ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 0, "/x", 2, 0, NULL), -EINVAL);
	atomic_store(&h->root, root + 4); /* misaligned */
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, "/x", 2, &v), -EINVAL);
	atomic_store(&h->root, 0);
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, "/x", 2, &v), -EINVAL);
	atomic_store(&h->root, root);

	atomic_store(&in->main, (main & ~15u) | ST__TAG_SNODE); /* wrong tag */
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, "/x", 2, &v), -EINVAL);
	atomic_store(&in->main, 0xfffffff0u | ST__TAG_CNODE); /* past the end */
	ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, "/x", 2, &v), -EINVAL);
	ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 0, "/x", 2, 0, NULL), -EINVAL);
	struct sandtrace_ctrie_stats st;
	ck_assert_int_eq(sandtrace_ctrie_stats(&g_a, &st), -EINVAL);
	atomic_store(&in->main, main);

	/* every branch of the root CNode pointed past the end */
	struct st__cnode *cn = (struct st__cnode *)(g_a.base + (main & ~15u));
	unsigned nb = (unsigned)__builtin_popcountll(cn->bitmap);
	for (unsigned i = 0; i < nb; i++)
		cn->br[i] = (0xfffffff0u) | (cn->br[i] & 15u);
	for (unsigned i = 0; i < 300; i++) {
		size_t n = key_of(i, k, sizeof(k));
		ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, k, n, &v), -EINVAL);
	}
	/* a bitmap claiming 64 branches of a CNode at the very end of the map */
	cn->bitmap = ~UINT64_C(0);
	atomic_store(&in->main, (uint32_t)(MIB - 16) | ST__TAG_CNODE);
	memset(g_a.base + MIB - 16, 0xff, 16);
	for (unsigned i = 0; i < 300; i++) {
		size_t n = key_of(i, k, sizeof(k));
		ck_assert_int_eq(sandtrace_ctrie_lookup(&g_a, 0, k, n, &v), -EINVAL);
	}
}
END_TEST

/* Random scribbles over the nodes: lookups, inserts and stats answer, never crash. */
START_TEST(corrupted_random)
{
	char k[128];
	uint32_t v;

	make_trie(MIB);
	for (unsigned i = 0; i < 3000; i++) {
		size_t n = key_of(i, k, sizeof(k));
		ck_assert_int_eq(sandtrace_ctrie_insert(&g_a, 0, k, n, i, NULL), 1);
	}
	uint64_t bump = atomic_load(&sandtrace_arena_hdr(&g_a)->bump);
	srand(1234 + (unsigned)_i);
	for (unsigned j = 0; j < 2000; j++) {
		uint64_t off = 128 + (uint64_t)rand() % (bump - 128 - 4);
		uint32_t w = (uint32_t)rand() * 2654435761u;
		memcpy(g_a.base + off, &w, 4);
	}
	for (unsigned i = 0; i < 4000; i++) {
		size_t n = key_of(i, k, sizeof(k));
		int r = sandtrace_ctrie_lookup(&g_a, 0, k, n, &v);
		ck_assert(r == 1 || r == 0 || r == -EINVAL);
		r = sandtrace_ctrie_insert(&g_a, 0, k, n, i, NULL);
		ck_assert(r == 1 || r == 0 || r == -EINVAL || r == -ENOSPC);
	}
	struct sandtrace_ctrie_stats st;
	int r = sandtrace_ctrie_stats(&g_a, &st);
	ck_assert(r == 0 || r == -EINVAL);
}
END_TEST

Suite *suite_ctrie(void)
{
	Suite *s = suite_create("ctrie");
	TCase *tc = tcase_create("ctrie");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, no_root);
	tcase_add_test(tc, hash_is_pure);
	tcase_add_test(tc, insert_lookup_100k);
	tcase_add_test(tc, first_cache_beside_header);
	tcase_add_test(tc, key_filter);
	tcase_add_test(tc, cache_grows);
	tcase_add_test(tc, duplicates_keep_first_value);
	tcase_add_test(tc, keys_differing_only_in_cls);
	tcase_add_test(tc, odd_key_bytes);
	tcase_add_test(tc, full_hash_collisions);
	tcase_add_test(tc, prefixed_keys);
	tcase_add_test(tc, partial_hash_collisions);
	tcase_add_test(tc, full_arena);
	tcase_add_test(tc, cross_process);
	tcase_add_test(tc, new_generation);
	tcase_add_test(tc, corrupted_links);
	tcase_add_loop_test(tc, corrupted_random, 0, 8);
	suite_add_tcase(s, tc);
	return s;
}
