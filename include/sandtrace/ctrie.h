/* sandtrace/ctrie.h - lock-free concurrent hash trie (Ctrie) living in a shared-memory arena. */
#ifndef SANDTRACE_CTRIE_H
#define SANDTRACE_CTRIE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "common.h"

/*
 * After A. Prokopec, N. Bronson, P. Bagwell, M. Odersky, "Concurrent Tries
 * with Efficient Non-Blocking Snapshots", PPoPP 2012 (insert and lookup
 * only: no remove, hence no TNode and no contraction), with the wide nodes
 * of A. Prokopec, "Cache-Tries: Concurrent Lock-Free Hash Tries with
 * Constant-Time Operations", PPoPP 2018 (arXiv:1712.09636) in mind.
 *
 * Nodes: INode (the CAS target: one atomic offset of its main node), CNode
 * (bitmap + array of branch offsets, popcount indexing), SNode (hash, key,
 * value), LNode (a list of SNodes whose 64-bit hashes collide fully).
 * All links are arena offsets.  Usable from many threads of many processes
 * at once; each function documents its linearization point.
 *
 * A key is (key class byte, path bytes).  The key class is an enum
 * sandtrace_kind for "already recorded" entries, or SANDTRACE_KEY_VERDICT +
 * sandbox class for cached sandbox verdicts; the value is a 32-bit word
 * (see SANDTRACE_V_*).
 */

#define SANDTRACE_KEY_VERDICT 0x40u   /* key class of a cached verdict: | class bit */
#define SANDTRACE_KEY_NOFOLLOW 0x20u  /* or'ed into a record key: last component not followed */
/*
 * Identity mode (SANDTRACE_F_IDENTITY): a READ/EXEC record of a regular
 * file is keyed by SANDTRACE_KEY_IDENTITY | kind [| NOFOLLOW] + path bytes
 * + the 40 bytes of struct sandtrace_identity, so a new version of a file
 * already read is a miss (recorded, and verified under --verify) even
 * though its path is not new.  The value is SANDTRACE_V_RECORDED, with
 * SANDTRACE_V_TAMPERED when that version failed verification.
 */
#define SANDTRACE_KEY_IDENTITY 0x08u
/* A path the --verify manifest lists (resolved path bytes; published by the daemon at start). */
#define SANDTRACE_KEY_LISTED 0x10u
/*
 * The daemon's answer to an ask rule: | sandbox class; the key is
 * sandtrace_ask_key's (policy generation + resolved path).  A class of its
 * own: under SANDTRACE_KEY_VERDICT its key once met a spelled verdict's
 * (a generation + a spelling) of equal bytes after a link and a reload, and
 * the old policy's verdict answered for the new ask rule.
 */
#define SANDTRACE_KEY_ASK 0xd0u

/* Values. */
#define SANDTRACE_V_ACTION_MASK 0xffu /* enum sandtrace_action */
#define SANDTRACE_V_EACCES (1u << 8)  /* denied with EACCES (visible, not writable) */
#define SANDTRACE_V_RECORDED (1u << 9)
#define SANDTRACE_V_TAMPERED (1u << 10) /* identity key: the version does not match the manifest */
/*
 * On a verdict key (SANDTRACE_KEY_VERDICT | class [| NOFOLLOW], generation +
 * spelling): bit SANDTRACE_V_SEEN_SHIFT + kind says that the record key
 * (kind [| NOFOLLOW], the same generation + spelling) is in the Ctrie, so
 * that a hit under a sandbox reads one SNode, not two.  Set by the shim with
 * sandtrace_ctrie_value_or once it has seen that record key; they only
 * grow; an unset bit says nothing (look the record key up).
 */
#define SANDTRACE_V_SEEN_SHIFT 16u
#define SANDTRACE_V_SEEN_MASK (((1u << SANDTRACE_KIND_MAX) - 1u) << SANDTRACE_V_SEEN_SHIFT)

/* The value a daemon's answer (its action, and the errno a denial fails
 * with) is cached and decided by: the action, and SANDTRACE_V_EACCES for a
 * denial with EACCES.  Pure; async-signal-safe. */
static inline uint32_t sandtrace_verdict_value(unsigned action, int err)
{
	return (uint32_t)action | (err == EACCES ? SANDTRACE_V_EACCES : 0u);
}

/*
 * sandtrace_ctrie_init - start a new generation: allocate an empty root
 * INode and publish it in the header (release store), bumping generation.
 * Lookups that already hold the old root finish on it.  Returns 0 or
 * -ENOSPC.  Daemon only (one writer of the root).
 */
int sandtrace_ctrie_init(struct sandtrace_arena *a);

/* sandtrace_ctrie_hash - the 64-bit hash used for (cls, key). Pure function. */
uint64_t sandtrace_ctrie_hash(unsigned cls, const void *key, size_t len);

/*
 * sandtrace_ctrie_hash_prefixed - sandtrace_ctrie_hash(cls, K, rest_len + 4)
 * for the key K = the four bytes of prefix as stored in memory, then
 * rest[0..rest_len), without K in one piece.  The shim's keys are a 32-bit
 * generation in front of a path: this hashes the path where the program
 * keeps it, instead of reading back a copy just written (a load that spans
 * the stores of the copy waits for them).  Pure function.
 */
uint64_t sandtrace_ctrie_hash_prefixed(unsigned cls, uint32_t prefix, const void *rest,
				       size_t rest_len);

/*
 * sandtrace_ctrie_lookup - find (cls, key).  Returns 1 and stores the value,
 * 0 when absent, -EINVAL when the arena holds no root or a node offset is
 * out of bounds (a corrupted arena: callers treat it as a miss).
 * Lock-free, wait-free in the absence of inserts; allocation-free and
 * async-signal-safe.  Linearization point: the acquire load of the INode's
 * main node that leads to the SNode (or to the empty slot).
 */
int sandtrace_ctrie_lookup(const struct sandtrace_arena *a, unsigned cls, const void *key,
			   size_t len, uint32_t *value);

/*
 * sandtrace_ctrie_lookup_prefixed - sandtrace_ctrie_lookup of the key made
 * of the four bytes of prefix (as stored in memory) and then
 * rest[0..rest_len), given in its two pieces: the key is hashed
 * (sandtrace_ctrie_hash_prefixed) and compared where it lies, never put
 * together.  Same returns and guarantees as sandtrace_ctrie_lookup; rest is
 * read, not kept.  When found and ref is not NULL, *ref names the key's
 * SNode for sandtrace_ctrie_value and sandtrace_ctrie_value_or (valid as
 * long as the arena is mapped: nodes are never freed).
 */
int sandtrace_ctrie_lookup_prefixed(const struct sandtrace_arena *a, unsigned cls,
				    uint32_t prefix, const void *rest, size_t rest_len,
				    uint32_t *value, uint32_t *ref);

/*
 * sandtrace_ctrie_value - the value of the SNode ref names now (acquire);
 * 0 for a ref out of bounds.  sandtrace_ctrie_value_or - or bits into it
 * (release), only SANDTRACE_V_SEEN_MASK bits (others are ignored: the
 * verdict itself never changes).  Both lock-free, async-signal-safe.
 */
uint32_t sandtrace_ctrie_value(const struct sandtrace_arena *a, uint32_t ref);
void sandtrace_ctrie_value_or(struct sandtrace_arena *a, uint32_t ref, uint32_t bits);

/*
 * sandtrace_ctrie_insert - insert (cls, key) -> value if absent.  Returns 1
 * when this call inserted it, 0 when the key was already present (its value
 * is stored in *prev if prev is not NULL; the existing value is kept), or
 * -ENOSPC when the arena is full (nothing inserted; caller stops caching),
 * -EINVAL on a corrupted arena.  Lock-free; async-signal-safe.
 * Linearization point: the successful CAS (acq_rel) on an INode's main
 * node that installs the new CNode/LNode.
 */
int sandtrace_ctrie_insert(struct sandtrace_arena *a, unsigned cls, const void *key, size_t len,
			   uint32_t value, uint32_t *prev);

/* Statistics gathered by a full walk (daemon, at the end of the run). */
struct sandtrace_ctrie_stats {
	uint64_t snodes, cnodes, inodes, lnodes, max_depth;
	uint64_t cache_slots; /* the current generation's cache array (0: none) */
};

/* sandtrace_ctrie_stats - walk the current generation.  0 or -EINVAL. */
int sandtrace_ctrie_stats(const struct sandtrace_arena *a, struct sandtrace_ctrie_stats *st);

#endif
