/* shm/ctrie.c - lock-free insert-only Ctrie (INode/CNode/SNode/LNode) in the shared-memory arena. */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ctrie_internal.h"
#include "sandtrace/arena.h"
#include "sandtrace/ctrie.h"

/*
 * Concurrency contract (after Prokopec et al., PPoPP 2012, insert/lookup
 * only):
 *  - Any number of lookups and inserts run at once, from any thread of any
 *    process that mapped the arena.  sandtrace_ctrie_init is the daemon's,
 *    and replaces the root: operations already holding the old root finish
 *    on it (inserts into an old generation are lost, which only costs a
 *    cache miss later).
 *  - INode.main is the only word ever modified after publication.  Every
 *    other node is written completely while private, then published by the
 *    release half of the CAS that installs a main node referring to it
 *    (directly or through a chain of private nodes).  Readers acquire-load
 *    main, so every plain load of a CNode/SNode/LNode they reach afterwards
 *    sees the bytes as written.
 *  - No remove, so no TNode, no contraction and no GCAS: an INode, once
 *    reachable, stays reachable at the same level forever, and a failed CAS
 *    may retry at the same INode instead of from the root.
 *  - Every offset read from the arena is bounds-checked against the mapped
 *    size before use (a corrupted arena gives -EINVAL, never a fault), and
 *    every walk is bounded by the hash length (11 CNode levels, then one
 *    LNode), so a corrupted arena cannot make a lookup loop.
 */

#define ST__HDR_SIZE ((uint64_t)sizeof(struct sandtrace_arena_header))

/* ---- hash ------------------------------------------------------------- */

/*
 * wyhash-style: 16 bytes per 64×64→128 multiply-fold, overlapping loads for
 * the tail, so a 60-byte path costs four multiplies instead of the 60
 * dependent multiplies of byte-wise FNV-1a (≈ 15 ns against ≈ 80 ns here).
 * The key class seeds the state; the length is folded into the last mix.
 * Constants from wyhash (W. Yi, public domain).
 */
#define ST__K0 UINT64_C(0xa0761d6478bd642f)
#define ST__K1 UINT64_C(0xe7037ed1a0b428db)
#define ST__K2 UINT64_C(0x8ebc6af09c88c6e3)
#define ST__K3 UINT64_C(0x589965cc75374cc3)

static inline uint64_t st__rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8); /* unaligned-safe; compiles to one load */
	return v;
}

static inline uint64_t st__rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t st__mum(uint64_t a, uint64_t b)
{
	unsigned __int128 r = (unsigned __int128)a * b;
	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/*
 * The hash of a key whose first eight bytes are w0 and whose byte at offset
 * o (o >= 8) is base[o]: the caller passes w0 when the key's first bytes
 * are not where the rest are (st__hash_prefixed).  w0 is read only for
 * len > 16.
 */
static inline __attribute__((always_inline)) uint64_t
st__hash_body(unsigned cls, const uint8_t *base, size_t len, uint64_t w0)
{
	const uint8_t *p = base;
	uint64_t seed = ST__K3 ^ ((uint64_t)(cls & 0xffu) * ST__K2);
	uint64_t a, b;

	seed ^= st__mum(seed ^ ST__K0, ST__K1);
	if (len <= 16) {
		if (len >= 4) {
			size_t q = (len >> 3) << 2;
			a = st__rd32(p) << 32 | st__rd32(p + q);
			b = st__rd32(p + len - 4) << 32 | st__rd32(p + len - 4 - q);
		} else if (len > 0) {
			a = (uint64_t)p[0] << 16 | (uint64_t)p[len >> 1] << 8 | p[len - 1];
			b = 0;
		} else {
			a = b = 0;
		}
	} else {
		/* the first block peeled: its first word is w0 */
		size_t i = len - 16;
		seed = st__mum(w0 ^ ST__K1, st__rd64(p + 8) ^ seed);
		p += 16;
		while (i > 16) {
			seed = st__mum(st__rd64(p) ^ ST__K1, st__rd64(p + 8) ^ seed);
			p += 16;
			i -= 16;
		}
		/* offsets len - 16 and len - 8 of the key: >= 1, and >= 8
		 * whenever len >= 24 */
		a = st__rd64(p + i - 16);
		b = st__rd64(p + i - 8);
	}
	a ^= ST__K1;
	b ^= seed;
	{
		unsigned __int128 r = (unsigned __int128)a * b;
		a = (uint64_t)r;
		b = (uint64_t)(r >> 64);
	}
	return st__mum(a ^ ST__K0 ^ (uint64_t)len, b ^ ST__K1);
}

static inline uint64_t st__hash(unsigned cls, const void *key, size_t len)
{
	const uint8_t *p = key;
	return st__hash_body(cls, p, len, len > 16 ? st__rd64(p) : 0);
}

uint64_t sandtrace_ctrie_hash(unsigned cls, const void *key, size_t len)
{
	return st__hash(cls, key, len);
}

/* st__hash of the key prefix || rest[0..rest_len), read in its two pieces. */
static inline uint64_t st__hash_prefixed(unsigned cls, uint32_t prefix, const void *rest,
					 size_t rest_len)
{
	const uint8_t *r = rest;
	size_t len = rest_len + 4;
	if (len < 24) { /* a short key: put together (every load may straddle) */
		uint8_t k[24];
		memcpy(k, &prefix, 4);
		memcpy(k + 4, r, rest_len);
		return st__hash(cls, k, len);
	}
	/* the key's byte o (o >= 4) is r[o - 4]: every load but the first
	 * word's is at o >= 8 (st__hash_body), so the base below is only
	 * ever read at r and beyond */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t w0 = (uint64_t)prefix | st__rd32(r) << 32;
#else
	uint64_t w0 = (uint64_t)prefix << 32 | st__rd32(r);
#endif
	return st__hash_body(cls, (const uint8_t *)((uintptr_t)r - 4), len, w0);
}

uint64_t sandtrace_ctrie_hash_prefixed(unsigned cls, uint32_t prefix, const void *rest,
				       size_t rest_len)
{
	return st__hash_prefixed(cls, prefix, rest, rest_len);
}

/* ---- node access (bounds-checked) -------------------------------------- */

/* Pointer to need bytes at off, or NULL if any of them lies outside the map or in the header. */
static inline void *st__at(const struct sandtrace_arena *a, uint64_t off, uint64_t need)
{
	if (off < ST__HDR_SIZE || off > a->size || need > a->size - off)
		return NULL;
	return a->base + off;
}

/* st__at for a 32-bit offset and a need below 2^32: the sum cannot wrap in 64 bits, so one compare does */
static inline void *st__at32(const struct sandtrace_arena *a, uint32_t off, uint32_t need)
{
	if (off < ST__HDR_SIZE || (uint64_t)off + need > a->size)
		return NULL;
	return a->base + off;
}

static inline uint32_t st__off(uint32_t link)
{
	return link & ~ST__TAG_MASK;
}

static inline size_t st__cnode_bytes(unsigned n)
{
	return sizeof(struct st__cnode) + (size_t)n * sizeof(uint32_t);
}

/* The INode at the top of the current generation, or NULL. */
static inline struct st__inode *st__root(const struct sandtrace_arena *a)
{
	const struct sandtrace_arena_header *h = (const void *)a->base;
	/*
	 * acquire: pairs with the release store in sandtrace_ctrie_init, so
	 * the root INode and its empty CNode are seen initialised.
	 */
	uint64_t root = atomic_load_explicit(&h->root, memory_order_acquire);

	if ((root & ST__TAG_MASK) != 0 || root > UINT32_MAX)
		return NULL;
	return st__at32(a, (uint32_t)root, sizeof(struct st__inode));
}

/*
 * A key in two pieces (sandtrace_ctrie_lookup_prefixed): pre is its first
 * four bytes and key points at the rest; ST__WHOLE as pre means key is the
 * whole key.  len is always the whole key's length.
 */
#define ST__WHOLE UINT64_MAX

/*
 * Compare the SNode at off with (hash, lencls, pre, key).  1 and *value
 * (and *ref = off, if ref is not NULL) on a match, 0 when it is another
 * key, -EINVAL when out of bounds.  *hash_out (if not NULL) gets the
 * SNode's hash for expansion.
 */
static inline __attribute__((always_inline)) int
st__snode_match(const struct sandtrace_arena *a, uint32_t off, uint64_t hash, uint32_t lencls,
		uint64_t pre, const void *key, size_t len, uint32_t *value, uint32_t *ref,
		uint64_t *hash_out)
{
	const struct st__snode *s = st__at32(a, off, sizeof(*s));

	if (s == NULL)
		return -EINVAL;
	if (hash_out != NULL)
		*hash_out = s->hash;
	/* Hash and (len, cls) first: a different key almost never gets past these. */
	if (s->hash != hash || s->lencls != lencls)
		return 0;
	/* len < 2^24 (every caller checked it against ST__KEY_MAX) */
	if (st__at32(a, off, (uint32_t)(sizeof(*s) + len)) == NULL)
		return -EINVAL;
	if (pre != ST__WHOLE) { /* len >= 4: the prefix, then the rest */
		if (st__rd32(s->key) != (uint32_t)pre || memcmp(s->key + 4, key, len - 4) != 0)
			return 0;
	} else if (len != 0 && memcmp(s->key, key, len) != 0) {
		return 0;
	}
	/* acquire: pairs with sandtrace_ctrie_value_or's release */
	if (value != NULL)
		*value = atomic_load_explicit(&s->value, memory_order_acquire);
	if (ref != NULL)
		*ref = off;
	return 1;
}

/*
 * The cache array, after Prokopec's cache-trie ("Cache-Tries: Concurrent
 * Lock-Free Hash Tries with Constant-Time Operations", PPoPP 2018;
 * arXiv:1712.09636): a table in front of the trie that answers most lookups
 * with one cache line and one SNode, named by the generation's root INode
 * (a reader that acquired the root sees its cache: one generation, one
 * cache).  Where the cache-trie caches the nodes of one trie level, this one
 * caches SNodes, set-associatively: buckets of ST__CACHE_WAYS 64-bit
 * entries (32 bytes, aligned so that a bucket never straddles a cache
 * line), indexed by hash bits the trie's top levels do not use (bits 32 and
 * up).  An entry is (low 32 bits of the hash) << 32 | SNode link: a lookup
 * rejects another key's entry on its tag without reading that SNode, and
 * four keys share a bucket before one evicts another (a direct-mapped table
 * of bare links lost a third of 100k keys to slot conflicts, each conflict
 * a wrong SNode read and a full walk).
 * It only ever answers "present": an entry names an SNode that was
 * published in the trie before the entry was written, and SNodes never
 * change, so an entry of another key (or none) sends the lookup down the
 * trie.  Entries are written whole (one 64-bit store or CAS) and never
 * cleared; a bucket fills from way 0.
 * It starts at 2^12 entries (32 KiB: a process of a small build touches few
 * pages) and, as in the cache-trie, grows with the trie: once the arena has
 * had as many inserts as the cache has entries, an insert allocates one four
 * times larger (up to 2^18 entries, 2 MiB) and installs it with a CAS; the
 * new one fills as lookups pass.
 */
#define ST__CACHE_MIN_LOG 12u
#define ST__CACHE_MAX_LOG 18u
#define ST__CACHE_ALIGN 64u

struct st__cache {
	_Atomic uint64_t *slots; /* NULL: no cache */
	uint32_t mask;           /* of bucket numbers */
	uint32_t lg;             /* log2 of the entries */
};

static inline struct st__cache st__cache(const struct sandtrace_arena *a,
					 const struct st__inode *root)
{
	/* acquire: the (zeroed) array is whole for whoever sees its word */
	uint64_t w = atomic_load_explicit(&root->cache, memory_order_acquire);
	uint32_t off = (uint32_t)w, lg = (uint32_t)(w >> 32);
	struct st__cache c = {NULL, 0, 0};
	/* one unsigned compare: MIN_LOG <= lg <= MAX_LOG */
	if (lg - ST__CACHE_MIN_LOG > ST__CACHE_MAX_LOG - ST__CACHE_MIN_LOG || off % ST__CACHE_ALIGN)
		return c;
	c.slots = st__at32(a, off, (uint32_t)sizeof(uint64_t) << lg);
	c.mask = ((uint32_t)1 << lg) / ST__CACHE_WAYS - 1;
	c.lg = lg;
	return c;
}

static inline _Atomic uint64_t *st__bucket(struct st__cache c, uint64_t hash)
{
	return c.slots + (size_t)((uint32_t)(hash >> 32) & c.mask) * ST__CACHE_WAYS;
}

/* 1 and *value when the cache names (cls, key); else 0 (look in the trie). */
static inline int st__cache_probe(const struct sandtrace_arena *a, struct st__cache c,
				  uint64_t hash, uint32_t lencls, uint64_t pre, const void *key,
				  size_t len, uint32_t *value, uint32_t *ref)
{
	if (c.slots == NULL)
		return 0;
	_Atomic uint64_t *b = st__bucket(c, hash);
	uint64_t e = 0;
	/*
	 * All four ways (one cache line), the matching tag picked without a
	 * branch: the way a key sits in is random, and a mispredicted branch
	 * on a load that missed the cache would throw away the work the CPU
	 * overlapped with it.  acquire: pairs with the release in
	 * st__cache_fill, so the SNode the entry names is seen whole.
	 */
	for (unsigned i = ST__CACHE_WAYS; i-- > 0;) {
		uint64_t w = atomic_load_explicit(&b[i], memory_order_acquire);
		e = (uint32_t)(w >> 32) == (uint32_t)hash ? w : e;
	}
	return ((uint32_t)e & ST__TAG_MASK) == ST__TAG_SNODE &&
	       st__snode_match(a, st__off((uint32_t)e), hash, lencls, pre, key, len, value, ref,
			       NULL) == 1;
}

/* Name the SNode br (published, of this hash) in its bucket: the first
 * empty way, else the way the hash picks (evicting its key). */
static void st__cache_fill(struct st__cache c, uint64_t hash, uint32_t br)
{
	if (c.slots == NULL)
		return;
	_Atomic uint64_t *b = st__bucket(c, hash);
	uint64_t want = (uint64_t)(uint32_t)hash << 32 | br;
	for (unsigned i = 0; i < ST__CACHE_WAYS; i++) {
		uint64_t e = atomic_load_explicit(&b[i], memory_order_relaxed);
		if (e == want)
			return;
		/* release on success: whoever acquires the entry sees the
		 * SNode (which this thread saw published, or published
		 * itself); a racing fill that took the way first keeps it */
		if (e == 0 && (atomic_compare_exchange_strong_explicit(&b[i], &e, want,
								       memory_order_release,
								       memory_order_relaxed) ||
			       e == want))
			return;
	}
	/* release: as above */
	atomic_store_explicit(&b[(hash >> 30) & (ST__CACHE_WAYS - 1)], want, memory_order_release);
}

static uint32_t st__node_alloc(struct sandtrace_arena *a, size_t bytes);

/* A zeroed (empty) cache array of 2^lg entries, ST__CACHE_ALIGN-aligned: its offset or 0. */
static uint32_t st__cache_alloc(struct sandtrace_arena *a, uint32_t lg)
{
	/* nodes are 16-byte aligned: 48 spare bytes reach the next line */
	uint32_t off = st__node_alloc(a, (sizeof(uint64_t) << lg) + ST__CACHE_ALIGN - 16);
	return off ? (off + ST__CACHE_ALIGN - 1) & ~(ST__CACHE_ALIGN - 1) : 0;
}

/*
 * After an insert: when the arena has had as many inserts as the cache has
 * entries, install a cache four times larger (zeroed, so empty).  Lock-free:
 * of racing processes one CAS wins, the others' arrays stay unused in the
 * arena (there is no free).  Linearization point: the successful CAS
 * (release: the zeroed array is whole for whoever acquires the word).
 */
static void st__cache_grow(struct sandtrace_arena *a, struct st__inode *root, struct st__cache c)
{
	if (c.slots == NULL || c.lg + 2 > ST__CACHE_MAX_LOG)
		return;
	uint64_t inserts = atomic_load_explicit(&sandtrace_arena_hdr(a)->counters[SANDTRACE_CTR_INSERTS],
						memory_order_relaxed);
	if (inserts < (uint64_t)1 << c.lg)
		return;
	uint64_t w = atomic_load_explicit(&root->cache, memory_order_relaxed);
	if ((uint32_t)(w >> 32) != c.lg)
		return; /* someone grew it already */
	uint32_t off = st__cache_alloc(a, c.lg + 2);
	if (off == 0)
		return; /* a full arena keeps the cache it has */
	atomic_compare_exchange_strong_explicit(&root->cache, &w, (uint64_t)(c.lg + 2) << 32 | off,
						memory_order_release, memory_order_relaxed);
}

/* The LNode that main links to, with its count checked against the map; NULL if corrupted. */
static inline const struct st__lnode *st__lnode(const struct sandtrace_arena *a, uint32_t main,
						uint32_t *count)
{
	const struct st__lnode *ln;

	if ((main & ST__TAG_MASK) != ST__TAG_LNODE)
		return NULL;
	ln = st__at32(a, st__off(main), sizeof(*ln));
	if (ln == NULL || ln->count == 0 || ln->count > ST__LNODE_MAX ||
	    st__at32(a, st__off(main), sizeof(*ln) + (uint64_t)ln->count * 4) == NULL)
		return NULL;
	*count = ln->count;
	return ln;
}

/* ---- lookup ------------------------------------------------------------ */

/* An SNode's (len, cls) word: the key length (< 2^24) and the class byte. */
static inline uint32_t st__lencls(unsigned cls, size_t len)
{
	return (uint32_t)len << 8 | (cls & 0xffu);
}

/* The cache's answer (a hit: 1 and *value), else 0.  The common case of
 * every lookup and of every insert of a present key: kept small and inline,
 * the walk below is out of line. */
static inline int st__cached(const struct sandtrace_arena *a, uint64_t hash, uint32_t lencls,
			     uint64_t pre, const void *key, size_t len, uint32_t *value,
			     uint32_t *ref)
{
	const struct st__inode *root = st__root(a);
	return root != NULL &&
	       st__cache_probe(a, st__cache(a, root), hash, lencls, pre, key, len, value, ref);
}

/*
 * The key filter (a Bloom filter with two bits a key, SANDTRACE_ARENA_FILTER_BITS
 * bits beside the header, shared by every generation): a lookup the cache did
 * not answer walks the trie only when both bits of its hash are set.  In a
 * build most lookups that miss the cache are of keys that are not there (a
 * file's first outcome, a directory not yet known to resolve to itself:
 * zlib's, 14,040 of 15,070), and each walk reads INodes and CNodes on pages of
 * their own (every page a process first reads costs it, docs/BENCHMARKS.md).
 * Bits are only ever set, by st__insert before its walk and so before the CAS
 * that publishes the key (whose release orders the set before it): a lookup
 * that finds a bit clear is linearized at that load, before any insert of its
 * key, with the same guarantee the trie's own acquire loads of main nodes give
 * (a set that completed before the load is seen).  A bit set by an insert that
 * then finds its key present, or fails, only costs a walk.
 * Bits from the hash's top 16 and its bits 16..31 (the cache's bucket and tag
 * take 32..47 and 0..31, the trie's levels the low bits: a filter hit says
 * nothing about where the key would be).  A header that names any other
 * place than the layout's (SANDTRACE_ARENA_FILTER_AT: a damaged header) has
 * no filter in use: every lookup walks.  SANDTRACE_CTR_FILTER_UNSET counts
 * inserts about to publish a key whose bits read clear: it stays 0 unless
 * the bits are set too late (tests check it).
 */
static inline const _Atomic uint64_t *st__filter(const struct sandtrace_arena *a)
{
	uint64_t off = ((const struct sandtrace_arena_header *)(const void *)a->base)->filter;
	if (off != SANDTRACE_ARENA_FILTER_AT || a->size < off + SANDTRACE_ARENA_FILTER_BITS / 8)
		return NULL;
	return (const _Atomic uint64_t *)(const void *)(a->base + off);
}

/* A key's i-th filter bit (i = 0, 1): the hash's top 16 bits, then its
 * bits 16..31. */
static inline uint32_t st__filter_bit(uint64_t hash, int i)
{
	_Static_assert(SANDTRACE_ARENA_FILTER_BITS == 1u << 16, "16-bit filter indices");
	return i == 0 ? (uint32_t)(hash >> 48) : (uint32_t)(hash >> 16) & 0xffffu;
}

/* acquire: pairs with the release fetch-or of the insert that set the bit
 * (so a lookup that saw a key's publication, and through it the bit set by
 * whichever insert set it first, cannot read it clear) */
static inline bool st__filter_has(const _Atomic uint64_t *f, uint32_t b)
{
	return atomic_load_explicit(&f[b >> 6], memory_order_acquire) >> (b & 63) & 1;
}

static inline bool st__filter_maybe(const struct sandtrace_arena *a, uint64_t hash)
{
	const _Atomic uint64_t *f = st__filter(a);
	return f == NULL ||
	       (st__filter_has(f, st__filter_bit(hash, 0)) && st__filter_has(f, st__filter_bit(hash, 1)));
}

static inline void st__filter_add(struct sandtrace_arena *a, uint64_t hash)
{
	_Atomic uint64_t *f = (_Atomic uint64_t *)st__filter(a);
	if (f == NULL)
		return;
	/* Skipped when the bit is set already (no write to a line every
	 * process reads).  Then the bit is another insert's: the acquire load
	 * makes that insert's release fetch-or happen before this insert's
	 * publishing CAS (acq_rel), as this thread's own fetch-or does when it
	 * makes one; either way whoever sees the key can see the bit. */
	for (int i = 0; i < 2; i++) {
		uint32_t b = st__filter_bit(hash, i);
		if (!st__filter_has(f, b))
			atomic_fetch_or_explicit(&f[b >> 6], UINT64_C(1) << (b & 63),
						 memory_order_acq_rel);
	}
}

/* The walk from the root, for what the cache did not answer. */
static __attribute__((noinline)) int st__lookup_walk(const struct sandtrace_arena *a,
						     uint64_t hash, uint32_t lencls, uint64_t pre,
						     const void *key, size_t len, uint32_t *value,
						     uint32_t *ref)
{
	const struct st__inode *in = st__root(a);
	unsigned shift;

	if (in == NULL)
		return -EINVAL;
	struct st__cache cache = st__cache(a, in);
	for (shift = 0;; shift += ST__BITS) {
		/*
		 * acquire: pairs with the release half of the CAS (or the
		 * private store before publication) that installed main, so
		 * the node it names, and the nodes that one names, are whole.
		 */
		uint32_t m = atomic_load_explicit(&in->main, memory_order_acquire);
		const struct st__cnode *cn;
		uint64_t flag, bmp;
		uint32_t br;
		unsigned pos;

		if (shift >= 64) {
			const struct st__lnode *ln;
			uint32_t n, i;

			ln = st__lnode(a, m, &n);
			if (ln == NULL)
				return -EINVAL;
			for (i = 0; i < n; i++) {
				int r = st__snode_match(a, st__off(ln->sn[i]), hash, lencls, pre, key, len,
							value, ref, NULL);
				if (r != 0)
					return r;
			}
			return 0;
		}
		if ((m & ST__TAG_MASK) != ST__TAG_CNODE)
			return -EINVAL;
		cn = st__at32(a, st__off(m), sizeof(*cn));
		if (cn == NULL)
			return -EINVAL;
		bmp = cn->bitmap;
		flag = UINT64_C(1) << ((hash >> shift) & ST__LEVEL_MASK);
		if ((bmp & flag) == 0)
			return 0;
		pos = (unsigned)__builtin_popcountll(bmp & (flag - 1));
		if (st__at32(a, st__off(m), st__cnode_bytes(pos + 1)) == NULL)
			return -EINVAL;
		br = cn->br[pos];
		switch (br & ST__TAG_MASK) {
		case ST__TAG_SNODE: {
			int r = st__snode_match(a, st__off(br), hash, lencls, pre, key, len, value,
						ref, NULL);
			if (r == 1)
				st__cache_fill(cache, hash, br);
			return r;
		}
		case ST__TAG_INODE:
			in = st__at32(a, st__off(br), sizeof(*in));
			if (in == NULL)
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	}
}

/*
 * Lookup.  Allocation-free, lock-free (wait-free: the walk is bounded by
 * the hash length and never retries), async-signal-safe.
 * Linearization point: for a cache hit, the acquire load of the entry (the
 * SNode it names was in the trie before the entry was written, and nothing
 * is ever removed, so the key is present at that instant); otherwise the
 * acquire load of the INode main node from which the answer is read: the
 * SNode found (or not found) in that CNode/LNode is the state of the trie
 * at that instant, since main nodes are immutable.
 */
static inline __attribute__((always_inline)) int
st__lookup(const struct sandtrace_arena *a, uint64_t hash, unsigned cls, uint64_t pre,
	   const void *key, size_t len, uint32_t *value, uint32_t *ref)
{
	if (a == NULL || a->base == NULL)
		return -EINVAL;
	if (len > ST__KEY_MAX)
		return 0; /* never insertable, so never present */
	if (len != 0 && key == NULL)
		return -EINVAL;
	uint32_t lencls = st__lencls(cls, len);
	if (st__cached(a, hash, lencls, pre, key, len, value, ref))
		return 1;
	if (!st__filter_maybe(a, hash))
		return 0; /* never inserted (linearized at the filter's load) */
	return st__lookup_walk(a, hash, lencls, pre, key, len, value, ref);
}

int st__ctrie_lookup_hashed(const struct sandtrace_arena *a, uint64_t hash, unsigned cls,
			    const void *key, size_t len, uint32_t *value)
{
	return st__lookup(a, hash, cls, ST__WHOLE, key, len, value, NULL);
}

int st__ctrie_lookup_hashed_prefixed(const struct sandtrace_arena *a, uint64_t hash, unsigned cls,
				     uint32_t prefix, const void *rest, size_t rest_len,
				     uint32_t *value, uint32_t *ref)
{
	if (rest_len > ST__KEY_MAX - 4)
		return 0;
	return st__lookup(a, hash, cls, prefix, rest, rest_len + 4, value, ref);
}

int sandtrace_ctrie_lookup_prefixed(const struct sandtrace_arena *a, unsigned cls,
				    uint32_t prefix, const void *rest, size_t rest_len,
				    uint32_t *value, uint32_t *ref)
{
	/* checked before hashing, which would read rest */
	if (rest_len != 0 && rest == NULL)
		return -EINVAL;
	if (rest_len > ST__KEY_MAX - 4)
		return 0;
	return st__lookup(a, st__hash_prefixed(cls, prefix, rest, rest_len), cls, prefix, rest,
			  rest_len + 4, value, ref);
}

uint32_t sandtrace_ctrie_value(const struct sandtrace_arena *a, uint32_t ref)
{
	const struct st__snode *s = a != NULL && a->base != NULL ? st__at32(a, ref, sizeof(*s)) : NULL;
	/* acquire: pairs with sandtrace_ctrie_value_or's release */
	return s != NULL ? atomic_load_explicit(&s->value, memory_order_acquire) : 0;
}

void sandtrace_ctrie_value_or(struct sandtrace_arena *a, uint32_t ref, uint32_t bits)
{
	struct st__snode *s = a != NULL && a->base != NULL ? st__at32(a, ref, sizeof(*s)) : NULL;
	/* release: what the caller did before (the insert it names) comes
	 * first for whoever acquires the bits */
	if (s != NULL && (bits & SANDTRACE_V_SEEN_MASK) != 0)
		atomic_fetch_or_explicit(&s->value, bits & SANDTRACE_V_SEEN_MASK,
					 memory_order_release);
}

int sandtrace_ctrie_lookup(const struct sandtrace_arena *a, unsigned cls, const void *key,
			   size_t len, uint32_t *value)
{
	/* checked before hashing, which would read key */
	if (len != 0 && key == NULL)
		return -EINVAL;
	if (len > ST__KEY_MAX)
		return 0;
	return st__lookup(a, st__hash(cls, key, len), cls, ST__WHOLE, key, len, value, NULL);
}

/* ---- insert ------------------------------------------------------------ */

/*
 * Allocate a node: the arena's allocation, refused if it ends above 4 GiB
 * (links are 32 bits).  Returns the offset or 0.
 */
static uint32_t st__node_alloc_in(struct sandtrace_arena *a, enum sandtrace_arena_area area,
				  size_t bytes)
{
	uint64_t off = sandtrace_arena_alloc_in(a, area, bytes);

	if (off == 0)
		return 0;
	if (off + bytes > UINT32_MAX) {
		sandtrace_arena_count(a, SANDTRACE_CTR_FULL, 1);
		return 0;
	}
	sandtrace_arena_count(a, SANDTRACE_CTR_BYTES_NODES, bytes);
	return (uint32_t)off;
}

static uint32_t st__node_alloc(struct sandtrace_arena *a, size_t bytes)
{
	return st__node_alloc_in(a, SANDTRACE_AREA_MAIN, bytes);
}

/* A new private SNode; its link, or 0 when the arena is full. */
static uint32_t st__snode_new(struct sandtrace_arena *a, uint64_t hash, uint32_t lencls,
			      const void *key, size_t len, uint32_t value)
{
	/* the keys area: what a cache hit reads, apart from the CNodes that
	 * inserts copy and drop (arena.h) */
	uint32_t off = st__node_alloc_in(a, SANDTRACE_AREA_KEYS, sizeof(struct st__snode) + len);
	struct st__snode *s;

	if (off == 0)
		return 0;
	s = (struct st__snode *)(a->base + off);
	s->hash = hash;
	atomic_store_explicit(&s->value, value, memory_order_relaxed); /* published by the CAS */
	s->lencls = lencls;
	if (len != 0)
		memcpy(s->key, key, len);
	return off | ST__TAG_SNODE;
}

/*
 * st__dual - a private subtree holding SNodes s1 (hash h1) and s2 (hash
 * h2), rooted at an INode of the level whose first hash bit is shift.
 * While the two hashes agree on a level's bits, that level gets a
 * one-branch CNode; when all 64 bits agree, an LNode.  Each level's INode
 * and main node are allocated together (adjacent: one cache line), top
 * down, so the chain reads forward in memory.  Returns the INode link, or
 * 0 when the arena is full (the partial chain is unreachable garbage).
 */
static uint32_t st__dual(struct sandtrace_arena *a, uint32_t s1, uint64_t h1, uint32_t s2,
			 uint64_t h2, unsigned shift)
{
	uint32_t top = 0, *hole = &top;

	for (;; shift += ST__BITS) {
		struct st__inode *in;
		uint32_t off;

		if (shift >= 64) {
			struct st__lnode *ln;

			off = st__node_alloc(a, sizeof(*in) + sizeof(*ln) + 2 * sizeof(uint32_t));
			if (off == 0)
				return 0;
			in = (struct st__inode *)(a->base + off);
			ln = (struct st__lnode *)(a->base + off + sizeof(*in));
			ln->count = 2;
			ln->sn[0] = s1;
			ln->sn[1] = s2;
			/* relaxed: private until the caller's release CAS */
			atomic_store_explicit(&in->main, (off + (uint32_t)sizeof(*in)) | ST__TAG_LNODE,
					      memory_order_relaxed);
			*hole = off | ST__TAG_INODE;
			sandtrace_arena_count(a, SANDTRACE_CTR_LNODES, 1);
			return top;
		}
		unsigned b1 = (unsigned)((h1 >> shift) & ST__LEVEL_MASK);
		unsigned b2 = (unsigned)((h2 >> shift) & ST__LEVEL_MASK);
		unsigned n = b1 == b2 ? 1 : 2;
		struct st__cnode *cn;

		off = st__node_alloc(a, sizeof(*in) + st__cnode_bytes(n));
		if (off == 0)
			return 0;
		in = (struct st__inode *)(a->base + off);
		cn = (struct st__cnode *)(a->base + off + sizeof(*in));
		cn->bitmap = (UINT64_C(1) << b1) | (UINT64_C(1) << b2);
		/* relaxed: private until the caller's release CAS */
		atomic_store_explicit(&in->main, (off + (uint32_t)sizeof(*in)) | ST__TAG_CNODE,
				      memory_order_relaxed);
		*hole = off | ST__TAG_INODE;
		if (n == 2) {
			cn->br[b1 < b2 ? 0 : 1] = s1;
			cn->br[b1 < b2 ? 1 : 0] = s2;
			return top;
		}
		hole = &cn->br[0]; /* filled by the next level */
	}
}

/*
 * Insert if absent.  Lock-free: a CAS fails only because another insert's
 * CAS on the same INode succeeded.  Async-signal-safe (no locks; memory
 * comes from the arena).  On a failed CAS the private nodes built for it
 * are left as garbage (there is no free); the new SNode is kept for the
 * next attempt.
 * Linearization point: the successful CAS (acq_rel) on an INode's main
 * that installs the new CNode/LNode holding the SNode; for "already
 * present", the acquire load of the cache entry that named it, or of the
 * main node in which the key was found.
 */
static __attribute__((noinline)) int st__insert_walk(struct sandtrace_arena *a, uint64_t hash,
						     uint32_t lencls, const void *key,
						     size_t len, uint32_t value, uint32_t *prev)
{
	struct st__inode *in = st__root(a);
	uint32_t sn = 0;
	unsigned shift = 0;

	if (in == NULL)
		return -EINVAL;
	struct st__inode *root = in;
	struct st__cache cache = st__cache(a, in);
	for (;;) {
		/*
		 * acquire: the main node's content is read (and copied) below;
		 * pairs with the release half of the CAS that installed it.
		 */
		uint32_t m = atomic_load_explicit(&in->main, memory_order_acquire);
		uint32_t nm, noff;

		if (shift >= 64) {
			const struct st__lnode *ln;
			struct st__lnode *nl;
			uint32_t n, i;

			ln = st__lnode(a, m, &n);
			if (ln == NULL)
				return -EINVAL;
			for (i = 0; i < n; i++) {
				int r = st__snode_match(a, st__off(ln->sn[i]), hash, lencls, ST__WHOLE,
							key, len, prev, NULL, NULL);
				if (r != 0)
					return r == 1 ? 0 : r;
			}
			/* 4096 keys with one 64-bit hash: an attack, not a build; stop caching them */
			if (n >= ST__LNODE_MAX)
				return -ENOSPC;
			if (sn == 0 && (sn = st__snode_new(a, hash, lencls, key, len, value)) == 0)
				return -ENOSPC;
			noff = st__node_alloc(a, sizeof(*nl) + (size_t)(n + 1) * sizeof(uint32_t));
			if (noff == 0)
				return -ENOSPC;
			nl = (struct st__lnode *)(a->base + noff);
			nl->count = n + 1;
			memcpy(nl->sn, ln->sn, (size_t)n * sizeof(uint32_t));
			nl->sn[n] = sn;
			nm = noff | ST__TAG_LNODE;
			if (!st__filter_maybe(a, hash))
				sandtrace_arena_count(a, SANDTRACE_CTR_FILTER_UNSET, 1);
			/*
			 * acq_rel on success: release publishes nl and the
			 * SNode (written above); acquire on failure: the new
			 * main is re-read on retry anyway.
			 */
			if (atomic_compare_exchange_strong_explicit(&in->main, &m, nm,
								    memory_order_acq_rel,
								    memory_order_acquire)) {
				sandtrace_arena_count(a, SANDTRACE_CTR_INSERTS, 1);
				sandtrace_arena_count(a, SANDTRACE_CTR_LNODES, 1);
				return 1;
			}
			sandtrace_arena_count(a, SANDTRACE_CTR_CAS_RETRIES, 1);
			continue;
		}

		const struct st__cnode *cn;
		struct st__cnode *ncn;
		uint64_t flag, bmp;
		unsigned pos, n;

		if ((m & ST__TAG_MASK) != ST__TAG_CNODE)
			return -EINVAL;
		cn = st__at32(a, st__off(m), sizeof(*cn));
		if (cn == NULL)
			return -EINVAL;
		bmp = cn->bitmap;
		n = (unsigned)__builtin_popcountll(bmp);
		if (st__at32(a, st__off(m), st__cnode_bytes(n)) == NULL)
			return -EINVAL;
		flag = UINT64_C(1) << ((hash >> shift) & ST__LEVEL_MASK);
		pos = (unsigned)__builtin_popcountll(bmp & (flag - 1));

		if ((bmp & flag) == 0) {
			/* Empty slot: copy the CNode with the new SNode added at pos. */
			if (sn == 0 && (sn = st__snode_new(a, hash, lencls, key, len, value)) == 0)
				return -ENOSPC;
			noff = st__node_alloc(a, st__cnode_bytes(n + 1));
			if (noff == 0)
				return -ENOSPC;
			ncn = (struct st__cnode *)(a->base + noff);
			ncn->bitmap = bmp | flag;
			memcpy(ncn->br, cn->br, (size_t)pos * sizeof(uint32_t));
			ncn->br[pos] = sn;
			memcpy(ncn->br + pos + 1, cn->br + pos, (size_t)(n - pos) * sizeof(uint32_t));
		} else {
			uint32_t br = cn->br[pos];
			uint64_t oh;
			uint32_t sub;
			int r;

			if ((br & ST__TAG_MASK) == ST__TAG_INODE) {
				in = st__at32(a, st__off(br), sizeof(*in));
				if (in == NULL)
					return -EINVAL;
				shift += ST__BITS;
				continue;
			}
			if ((br & ST__TAG_MASK) != ST__TAG_SNODE)
				return -EINVAL;
			r = st__snode_match(a, st__off(br), hash, lencls, ST__WHOLE, key, len, prev,
					    NULL, &oh);
			if (r == 1)
				st__cache_fill(cache, hash, br);
			if (r != 0)
				return r == 1 ? 0 : r;
			/* Another key in the slot: push both one level down. */
			if (sn == 0 && (sn = st__snode_new(a, hash, lencls, key, len, value)) == 0)
				return -ENOSPC;
			sub = st__dual(a, br, oh, sn, hash, shift + ST__BITS);
			if (sub == 0)
				return -ENOSPC;
			noff = st__node_alloc(a, st__cnode_bytes(n));
			if (noff == 0)
				return -ENOSPC;
			ncn = (struct st__cnode *)(a->base + noff);
			ncn->bitmap = bmp;
			memcpy(ncn->br, cn->br, (size_t)n * sizeof(uint32_t));
			ncn->br[pos] = sub;
		}
		nm = noff | ST__TAG_CNODE;
		if (!st__filter_maybe(a, hash))
			sandtrace_arena_count(a, SANDTRACE_CTR_FILTER_UNSET, 1);
		/*
		 * acq_rel on success: the release half publishes the new CNode
		 * and every private node it reaches (SNode, dual chain), all
		 * written above.  acquire on failure: we retry from this INode
		 * and re-load its main with acquire anyway.
		 */
		if (atomic_compare_exchange_strong_explicit(&in->main, &m, nm, memory_order_acq_rel,
							    memory_order_acquire)) {
			sandtrace_arena_count(a, SANDTRACE_CTR_INSERTS, 1);
			st__cache_fill(cache, hash, sn); /* published by the CAS just made */
			st__cache_grow(a, root, cache);
			return 1;
		}
		sandtrace_arena_count(a, SANDTRACE_CTR_CAS_RETRIES, 1);
	}
}

static inline __attribute__((always_inline)) int
st__insert(struct sandtrace_arena *a, uint64_t hash, unsigned cls, const void *key, size_t len,
	   uint32_t value, uint32_t *prev)
{
	if (a == NULL || a->base == NULL || len > ST__KEY_MAX || (len != 0 && key == NULL))
		return -EINVAL;
	uint32_t lencls = st__lencls(cls, len);
	if (st__cached(a, hash, lencls, ST__WHOLE, key, len, prev, NULL))
		return 0; /* present: the hit path of "already recorded" */
	st__filter_add(a, hash); /* before the walk's publishing CAS */
	return st__insert_walk(a, hash, lencls, key, len, value, prev);
}

int st__ctrie_insert_hashed(struct sandtrace_arena *a, uint64_t hash, unsigned cls,
			    const void *key, size_t len, uint32_t value, uint32_t *prev)
{
	return st__insert(a, hash, cls, key, len, value, prev);
}

int sandtrace_ctrie_insert(struct sandtrace_arena *a, unsigned cls, const void *key, size_t len,
			   uint32_t value, uint32_t *prev)
{
	/* checked before hashing, which would read key */
	if (len > ST__KEY_MAX || (len != 0 && key == NULL))
		return -EINVAL;
	return st__insert(a, st__hash(cls, key, len), cls, key, len, value, prev);
}

/* ---- generation and statistics ---------------------------------------- */

/*
 * New generation: an INode with an empty CNode right behind it.  Daemon
 * only (the single writer of hdr->root).
 * Linearization point: the release store of root.
 */
int sandtrace_ctrie_init(struct sandtrace_arena *a)
{
	struct sandtrace_arena_header *h;
	struct st__inode *in;
	struct st__cnode *cn;
	uint32_t off;

	if (a == NULL || a->base == NULL)
		return -EINVAL;
	h = sandtrace_arena_hdr(a);
	off = st__node_alloc(a, sizeof(*in) + st__cnode_bytes(0));
	if (off == 0)
		return -ENOSPC;
	in = (struct st__inode *)(a->base + off);
	cn = (struct st__cnode *)(a->base + off + sizeof(*in));
	cn->bitmap = 0;
	/* the generation's cache array (zeroed pages: every slot empty); none
	 * if the arena is too small, which only costs speed */
	uint32_t coff = st__cache_alloc(a, ST__CACHE_MIN_LOG);
	atomic_store_explicit(&in->cache, coff ? (uint64_t)ST__CACHE_MIN_LOG << 32 | coff : 0,
			      memory_order_relaxed);
	/* relaxed: published by the release store of root below */
	atomic_store_explicit(&in->main, (off + (uint32_t)sizeof(*in)) | ST__TAG_CNODE,
			      memory_order_relaxed);
	/* release: the INode and CNode above are whole for whoever acquires root */
	atomic_store_explicit(&h->root, off, memory_order_release);
	/* release: a reader that sees the new generation (acquire) also sees the new root */
	atomic_fetch_add_explicit(&h->generation, 1, memory_order_release);
	return 0;
}

static int st__walk(const struct sandtrace_arena *a, const struct st__inode *in, unsigned shift,
		    uint64_t depth, struct sandtrace_ctrie_stats *st)
{
	/* acquire: as in lookup */
	uint32_t m = atomic_load_explicit(&in->main, memory_order_acquire);
	uint32_t i, n;

	st->inodes++;
	if (depth > st->max_depth)
		st->max_depth = depth;
	if (shift >= 64) {
		const struct st__lnode *ln = st__lnode(a, m, &n);

		if (ln == NULL)
			return -EINVAL;
		st->lnodes++;
		for (i = 0; i < n; i++) {
			if ((ln->sn[i] & ST__TAG_MASK) != ST__TAG_SNODE ||
			    st__at32(a, st__off(ln->sn[i]), sizeof(struct st__snode)) == NULL)
				return -EINVAL;
			st->snodes++;
		}
		return 0;
	}
	if ((m & ST__TAG_MASK) != ST__TAG_CNODE)
		return -EINVAL;
	const struct st__cnode *cn = st__at32(a, st__off(m), sizeof(*cn));
	if (cn == NULL)
		return -EINVAL;
	n = (uint32_t)__builtin_popcountll(cn->bitmap);
	if (st__at32(a, st__off(m), st__cnode_bytes(n)) == NULL)
		return -EINVAL;
	st->cnodes++;
	for (i = 0; i < n; i++) {
		uint32_t br = cn->br[i];
		int r;

		switch (br & ST__TAG_MASK) {
		case ST__TAG_SNODE:
			if (st__at32(a, st__off(br), sizeof(struct st__snode)) == NULL)
				return -EINVAL;
			st->snodes++;
			break;
		case ST__TAG_INODE: {
			const struct st__inode *sub = st__at32(a, st__off(br), sizeof(*sub));

			if (sub == NULL)
				return -EINVAL;
			/* recursion depth <= 12: bounded by the hash length */
			r = st__walk(a, sub, shift + ST__BITS, depth + 1, st);
			if (r < 0)
				return r;
			break;
		}
		default:
			return -EINVAL;
		}
	}
	return 0;
}

int sandtrace_ctrie_stats(const struct sandtrace_arena *a, struct sandtrace_ctrie_stats *st)
{
	const struct st__inode *in;

	memset(st, 0, sizeof(*st));
	if (a == NULL || a->base == NULL)
		return -EINVAL;
	in = st__root(a);
	if (in == NULL)
		return -EINVAL;
	struct st__cache c = st__cache(a, in);
	st->cache_slots = c.slots ? (uint64_t)1 << c.lg : 0;
	return st__walk(a, in, 0, 1, st);
}
