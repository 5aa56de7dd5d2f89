/* shm/log.c - the record log in the arena: per-writer chunks appended without locks or system calls. */
#include <errno.h>
#include <string.h>

#include "sandtrace/log.h"

#define ALIGN8(n) (((n) + 7u) & ~(uint64_t)7u)

int sandtrace_log_init(struct sandtrace_arena *a, uint32_t cap)
{
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(a);
	uint32_t nblocks = cap / SANDTRACE_LOG_BLOCK + (cap % SANDTRACE_LOG_BLOCK != 0);
	uint64_t off = sandtrace_arena_alloc_in(a, SANDTRACE_AREA_LOG,
						(uint64_t)nblocks * sizeof(uint64_t));
	if (off == 0 || nblocks == 0)
		return -ENOSPC;
	h->log_cap = nblocks * SANDTRACE_LOG_BLOCK;
	atomic_store_explicit(&h->log_nchunks, 0, memory_order_relaxed);
	/* release: log_cap and the zeroed directory are visible to a writer
	 * that sees the directory's offset */
	atomic_store_explicit(&h->log_table, off, memory_order_release);
	return 0;
}

/*
 * The offset the word w names, made first when it names nothing yet: bytes
 * of zeroed log area (a table block, a segment of small chunks), installed
 * with a CAS.  Release on success: the zeroed bytes are whole for whoever
 * acquires the word; a racer that loses keeps its allocation unused and
 * takes the winner's.  0 when w names nothing and the arena is full.
 * Lock-free; async-signal-safe.
 */
static uint64_t made_on_demand(struct sandtrace_arena *a, _Atomic uint64_t *w, uint64_t bytes)
{
	uint64_t off = atomic_load_explicit(w, memory_order_acquire);
	if (off != 0)
		return off;
	uint64_t fresh = sandtrace_arena_alloc_in(a, SANDTRACE_AREA_LOG, bytes);
	if (fresh == 0) /* full: a racer may have made it meanwhile */
		return atomic_load_explicit(w, memory_order_acquire);
	return atomic_compare_exchange_strong_explicit(w, &off, fresh, memory_order_acq_rel,
						       memory_order_acquire)
		   ? fresh
		   : off;
}

_Atomic uint64_t *sandtrace_log_slot(const struct sandtrace_arena *a, uint64_t i, bool make)
{
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(a);
	uint64_t dir = atomic_load_explicit(&h->log_table, memory_order_acquire);
	uint32_t cap = h->log_cap;
	_Atomic uint64_t *blocks = sandtrace_arena_ptr(
	    a, dir, (uint64_t)(cap / SANDTRACE_LOG_BLOCK) * sizeof(uint64_t));
	if (!blocks || i >= cap)
		return NULL;
	_Atomic uint64_t *b = &blocks[i / SANDTRACE_LOG_BLOCK];
	/* acquire: the block's zeroed bytes (and the slots stored in it before
	 * their writers' release) are seen by whoever sees its offset */
	uint64_t off = make ? made_on_demand((struct sandtrace_arena *)a, b,
					     SANDTRACE_LOG_BLOCK * sizeof(uint64_t))
			    : atomic_load_explicit(b, memory_order_acquire);
	_Atomic uint64_t *slots =
	    sandtrace_arena_ptr(a, off, SANDTRACE_LOG_BLOCK * sizeof(uint64_t));
	return slots ? &slots[i % SANDTRACE_LOG_BLOCK] : NULL;
}

const struct sandtrace_log_chunk *sandtrace_log_small(const struct sandtrace_arena *a, uint64_t i,
						      uint64_t *off)
{
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(a);
	if (i >= (uint64_t)SANDTRACE_LOG_SMALL_SEGS * SANDTRACE_LOG_SMALL_PER_SEG)
		return NULL;
	/* acquire: the segment's zeroed bytes are seen by whoever sees its offset */
	uint64_t seg = atomic_load_explicit(&h->log_small[i / SANDTRACE_LOG_SMALL_PER_SEG],
					    memory_order_acquire);
	uint64_t o = seg + (i % SANDTRACE_LOG_SMALL_PER_SEG) * SANDTRACE_LOG_SMALL_SIZE;
	if (seg == 0 || o < seg || !sandtrace_arena_ptr(a, o, SANDTRACE_LOG_SMALL_SIZE))
		return NULL;
	*off = o;
	return sandtrace_arena_ptr(a, o, SANDTRACE_LOG_SMALL_SIZE);
}

/* A small chunk (see log.h), or 0 when the segments are used up (the table
 * takes the chunk) or the arena is full. */
static uint64_t small_new(struct sandtrace_arena *a, int32_t pid)
{
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(a);
	const uint64_t max = (uint64_t)SANDTRACE_LOG_SMALL_SEGS * SANDTRACE_LOG_SMALL_PER_SEG;
	/* relaxed: a cheap early check, the fetch-and-add below decides */
	if (atomic_load_explicit(&h->log_nsmall, memory_order_relaxed) >= max)
		return 0;
	/* relaxed: each index is handed out once; only the index matters */
	uint64_t i = atomic_fetch_add_explicit(&h->log_nsmall, 1, memory_order_relaxed);
	if (i >= max)
		return 0;
	if (made_on_demand(a, &h->log_small[i / SANDTRACE_LOG_SMALL_PER_SEG],
			   (uint64_t)SANDTRACE_LOG_SMALL_PER_SEG * SANDTRACE_LOG_SMALL_SIZE) == 0)
		return 0; /* the arena is full: index i stays unpublished */
	uint64_t off;
	struct sandtrace_log_chunk *c = (struct sandtrace_log_chunk *)sandtrace_log_small(a, i, &off);
	if (!c)
		return 0;
	c->pid = pid;
	/* release: the chunk's pid (and its zeroed rest) before the cap that
	 * publishes it */
	__atomic_store_n(&c->cap, SANDTRACE_LOG_CHUNK_FIRST, __ATOMIC_RELEASE);
	return off;
}

uint64_t sandtrace_log_chunk_new(struct sandtrace_arena *a, uint32_t cap, int32_t pid)
{
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(a);
	if (atomic_load_explicit(&h->log_table, memory_order_acquire) == 0)
		return 0;
	/* small chunks in arenas with areas: a smaller one would spend an
	 * eighth of itself or more on a segment */
	if (cap == SANDTRACE_LOG_CHUNK_FIRST && a->size >= SANDTRACE_ARENA_AREAS_MIN) {
		uint64_t off = small_new(a, pid);
		if (off != 0)
			return off;
	}
	/* relaxed: a cheap early check, the fetch-and-add below decides */
	if (atomic_load_explicit(&h->log_nchunks, memory_order_relaxed) >= h->log_cap)
		return 0;
	uint64_t off = sandtrace_arena_alloc_in(a, SANDTRACE_AREA_LOG,
						sizeof(struct sandtrace_log_chunk) + cap);
	if (off == 0)
		return 0;
	struct sandtrace_log_chunk *c = sandtrace_arena_ptr(a, off, sizeof(*c) + cap);
	c->cap = cap;
	c->pid = pid;
	/* relaxed: slots are handed out once each; only the index matters */
	uint64_t idx = atomic_fetch_add_explicit(&h->log_nchunks, 1, memory_order_relaxed);
	_Atomic uint64_t *slot = sandtrace_log_slot(a, idx, true);
	if (!slot)
		return 0; /* table or arena full: the chunk stays allocated and unused */
	/* release: the chunk header is written before its offset is seen */
	atomic_store_explicit(slot, off, memory_order_release);
	return off;
}

int sandtrace_log_append(struct sandtrace_arena *a, uint64_t chunk, int32_t pid, uint32_t uid,
			 unsigned type, uint32_t flags, const struct iovec *parts, int nparts)
{
	struct sandtrace_log_chunk *c = sandtrace_arena_ptr(a, chunk, sizeof(*c));
	if (!c || !sandtrace_arena_ptr(a, chunk, sizeof(*c) + (uint64_t)c->cap))
		return -EINVAL;
	uint64_t len = 0;
	for (int i = 0; i < nparts; i++)
		len += parts[i].iov_len;
	uint64_t size = ALIGN8(sizeof(struct sandtrace_log_entry) + len);
	/* relaxed: this thread is the only writer of used */
	uint32_t used = atomic_load_explicit(&c->used, memory_order_relaxed);
	if (len > SANDTRACE_MAX_PAYLOAD || size > (uint64_t)c->cap - used)
		return -ENOSPC;
	/* relaxed: seq only orders entries; publication is the store of used */
	struct sandtrace_log_entry e = {
	    .pid = pid,
	    .size = (uint32_t)size,
	    .seq = atomic_fetch_add_explicit(&sandtrace_arena_hdr(a)->log_seq, 1,
					     memory_order_relaxed)};
	sandtrace_proto_frame(&e.frame, type, (uint32_t)len, uid, flags);
	uint8_t *w = c->data + used;
	memcpy(w, &e, sizeof(e));
	w += sizeof(e);
	for (int i = 0; i < nparts; i++) {
		/* a byte loop, not memcpy: libc's is a page of its code that a
		 * traced process's start (its HELLO) would touch for nothing else
		 * (docs/BENCHMARKS.md, stop 22); parts are names and paths */
		const uint8_t *r = parts[i].iov_base;
		for (size_t k = 0; k < parts[i].iov_len; k++)
			w[k] = r[k];
		w += parts[i].iov_len;
	}
	/* release: the entry's bytes before the new used */
	atomic_store_explicit(&c->used, used + (uint32_t)size, memory_order_release);
	return 0;
}

void sandtrace_log_seal(struct sandtrace_arena *a, uint64_t chunk)
{
	struct sandtrace_log_chunk *c = sandtrace_arena_ptr(a, chunk, sizeof(*c));
	if (c)
		/* release: every entry published before the seal */
		atomic_store_explicit(&c->sealed, 1, memory_order_release);
}

