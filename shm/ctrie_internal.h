/* shm/ctrie_internal.h - Ctrie node layout and test hooks (not part of the public API). */
#ifndef SANDTRACE_SHM_CTRIE_INTERNAL_H
#define SANDTRACE_SHM_CTRIE_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "sandtrace/arena.h"
#include "sandtrace/ctrie.h"

/*
 * Links are 32-bit arena offsets (nodes are 16-byte aligned, so the low 4
 * bits are free) with the target's node type in the low bits.  32 bits
 * halve CNodes against 64-bit links (fewer cache lines and fewer first-touch
 * page faults per process); the type in the link lets a lookup branch
 * without a dependent load.  Nodes are only ever allocated below 4 GiB; a
 * larger arena is simply "full" for the Ctrie beyond that.
 * A link of 0 (never-written, zeroed memory) has no valid tag.
 */
#define ST__TAG_MASK 15u
#define ST__TAG_INODE 1u /* CNode branch -> INode */
#define ST__TAG_SNODE 2u /* CNode branch -> SNode */
#define ST__TAG_CNODE 3u /* INode main -> CNode */
#define ST__TAG_LNODE 4u /* INode main -> LNode */

/*
 * Hash bits per level: 6, so a CNode bitmap is one uint64_t and a level
 * fans out 64 ways.  5 bits (the paper's 32-way nodes) would add a level
 * for every 32× more keys; a build's 1.5k paths fit in two levels at 6
 * bits.  Levels 0..9 use bits 0..59, level 10 the last 4 bits; below that
 * (shift >= 64) an INode's main node is an LNode of full-hash collisions.
 */
#define ST__BITS 6u
#define ST__LEVEL_MASK 63u

/* INode: the only mutable node; its main link is the CAS target. 16 bytes. */
struct st__inode {
	_Atomic uint32_t main; /* CNode or LNode link */
	uint32_t reserved;
	/* root INode only: the generation's cache array, (log2 slots) << 32 |
	 * offset, 0 = none; replaced by a larger one as the trie grows */
	_Atomic uint64_t cache;
};
_Static_assert(sizeof(struct st__inode) == 16, "INode layout");

/* CNode: immutable once published.  8 + 4 * popcount(bitmap) bytes. */
struct st__cnode {
	uint64_t bitmap;
	uint32_t br[]; /* INode or SNode links, in bit order */
};

/*
 * SNode: immutable.  16-byte head then the key bytes inline.  cls and len
 * share one word so a lookup rejects a wrong key with two compares
 * (hash, lencls) before touching the bytes; len is therefore < 2^24.
 */
struct st__snode {
	uint64_t hash;
	_Atomic uint32_t value; /* fixed at insert but for bits that only grow (sandtrace_ctrie_value_or) */
	uint32_t lencls; /* len << 8 | cls */
	uint8_t key[];
};
#define ST__KEY_MAX ((UINT32_C(1) << 24) - 1)

/*
 * The root INode's cache array (shm/ctrie.c): 2^lg 64-bit entries in
 * buckets of ST__CACHE_WAYS, bucket (hash >> 32) & (2^lg / WAYS - 1); an
 * entry is (uint32_t)hash << 32 | SNode link, 0 when empty.
 */
#define ST__CACHE_WAYS 4u

/* LNode: immutable array of SNode links whose full 64-bit hashes are equal. */
struct st__lnode {
	uint32_t count;
	uint32_t sn[];
};
/* Bounds a lookup's walk of a corrupted LNode; real ones hold 2..few entries. */
#define ST__LNODE_MAX 4096u

_Static_assert(sizeof(struct st__inode) == 16, "INode is 16 bytes");
_Static_assert(sizeof(struct st__snode) == 16, "SNode head is 16 bytes");

/*
 * Test hooks: insert/lookup with a caller-chosen 64-bit hash, to force
 * full-hash collisions (LNodes) and deep chains.  A key must always be used
 * with the same hash.  Same contracts as the public functions.
 */
int st__ctrie_insert_hashed(struct sandtrace_arena *a, uint64_t hash, unsigned cls,
			    const void *key, size_t len, uint32_t value, uint32_t *prev);
int st__ctrie_lookup_hashed(const struct sandtrace_arena *a, uint64_t hash, unsigned cls,
			    const void *key, size_t len, uint32_t *value);
/* ... and of the key prefix || rest in its two pieces (sandtrace_ctrie_lookup_prefixed) */
int st__ctrie_lookup_hashed_prefixed(const struct sandtrace_arena *a, uint64_t hash, unsigned cls,
				     uint32_t prefix, const void *rest, size_t rest_len,
				     uint32_t *value, uint32_t *ref);

#endif
