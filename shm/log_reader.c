/* shm/log_reader.c - the daemon's side of the record log: drain published entries, trusting nothing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sandtrace/log.h"

/* This file allocates (the reader's state lives in the daemon's heap); the
 * shim never links it: it references none of its symbols. */

/* Make room for need chunks' state in (offs), read and done; *cap is their size. */
static int grow_arrays(uint64_t **offs, uint32_t **read, uint8_t **done, uint64_t *cap,
		       uint64_t need)
{
	if (need <= *cap)
		return 0;
	uint64_t ncap = *cap ? *cap : 256;
	while (ncap < need)
		ncap *= 2;
	if (offs) {
		uint64_t *o = realloc(*offs, ncap * sizeof(*o));
		if (!o)
			return -ENOMEM;
		*offs = o;
		memset(o + *cap, 0, (ncap - *cap) * sizeof(*o));
	}
	uint32_t *rd = realloc(*read, ncap * sizeof(*rd));
	if (!rd)
		return -ENOMEM;
	*read = rd;
	uint8_t *d = realloc(*done, ncap);
	if (!d)
		return -ENOMEM;
	*done = d;
	memset(rd + *cap, 0, (ncap - *cap) * sizeof(*rd));
	memset(d + *cap, 0, ncap - *cap);
	*cap = ncap;
	return 0;
}

struct pending {
	uint64_t seq;
	const struct sandtrace_log_entry *e;
};

static int by_seq(const void *x, const void *y)
{
	const struct pending *a = x, *b = y;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int batch_add(struct sandtrace_log_reader *r, uint64_t n, const struct sandtrace_log_entry *e)
{
	if (n >= r->batch_cap) {
		uint64_t ncap = r->batch_cap ? r->batch_cap * 2 : 1024;
		void *b = realloc(r->batch, ncap * sizeof(struct pending));
		if (!b)
			return -ENOMEM;
		r->batch = b;
		r->batch_cap = ncap;
	}
	((struct pending *)r->batch)[n] = (struct pending){e->seq, e};
	return 0;
}

/*
 * Take the new entries of the chunk at off (published, cap bytes of data by
 * its header) into the batch: *read is what was consumed before, *done is
 * set once the chunk is sealed and read to its end or found malformed.
 */
static int drain_chunk(const struct sandtrace_arena *a, struct sandtrace_log_reader *r, uint64_t off,
		       uint32_t *read, uint8_t *done, uint64_t *nb)
{
	struct sandtrace_log_chunk *c = sandtrace_arena_ptr(a, off, sizeof(*c));
	uint64_t cap = c ? c->cap : 0;
	if (!c || !sandtrace_arena_ptr(a, off, sizeof(*c) + cap)) {
		*done = 1;
		r->bad++;
		return 0;
	}
	/* acquire (both): entries published before used / the seal */
	uint32_t sealed = atomic_load_explicit(&c->sealed, memory_order_acquire);
	uint32_t used = atomic_load_explicit(&c->used, memory_order_acquire);
	if (used > cap)
		used = (uint32_t)cap;
	while (*read + sizeof(struct sandtrace_log_entry) <= used) {
		const struct sandtrace_log_entry *e = (const void *)(c->data + *read);
		if (e->size < sizeof(*e) || e->size > used - *read ||
		    sandtrace_proto_check_frame(&e->frame) != 0 ||
		    sizeof(*e) + (uint64_t)e->frame.len > e->size) {
			r->bad++;
			*read = used; /* skip the rest: untrusted */
			sealed = 1;
			break;
		}
		if (batch_add(r, *nb, e) < 0)
			return -ENOMEM;
		(*nb)++;
		*read += e->size;
	}
	if (sealed && *read >= used)
		*done = 1;
	return 0;
}

/* Collect every entry published and not taken yet into the batch, sorted by
 * seq; returns how many, or -ENOMEM. */
static long collect(const struct sandtrace_arena *a, struct sandtrace_log_reader *r)
{
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(a);
	if (atomic_load_explicit(&h->log_table, memory_order_acquire) == 0)
		return 0;
	uint64_t tcap = h->log_cap;
	uint64_t n = atomic_load_explicit(&h->log_nchunks, memory_order_relaxed);
	if (n > tcap)
		n = tcap;
	if (grow_arrays(&r->offs, &r->read, &r->done, &r->cap, n) < 0)
		return -ENOMEM;
	uint64_t nb = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (r->done[i])
			continue;
		if (r->offs[i] == 0) {
			_Atomic uint64_t *slot = sandtrace_log_slot(a, i, false);
			/* acquire: pairs with the writer's release of the slot */
			r->offs[i] = slot ? atomic_load_explicit(slot, memory_order_acquire) : 0;
		}
		if (r->offs[i] == 0)
			continue; /* handed out, not yet published */
		if (drain_chunk(a, r, r->offs[i], &r->read[i], &r->done[i], &nb) < 0)
			return -ENOMEM;
	}
	r->nseen = n;
	/* the small chunks: their offsets follow from their index */
	uint64_t ns = atomic_load_explicit(&h->log_nsmall, memory_order_relaxed);
	const uint64_t smax = (uint64_t)SANDTRACE_LOG_SMALL_SEGS * SANDTRACE_LOG_SMALL_PER_SEG;
	if (ns > smax)
		ns = smax;
	if (grow_arrays(NULL, &r->sread, &r->sdone, &r->scap, ns) < 0)
		return -ENOMEM;
	for (uint64_t i = 0; i < ns; i++) {
		uint64_t off;
		const struct sandtrace_log_chunk *c;
		if (r->sdone[i] || !(c = sandtrace_log_small(a, i, &off)))
			continue; /* done, or its segment not made yet */
		/* acquire: pairs with the writer's release of cap */
		uint32_t cap = __atomic_load_n(&c->cap, __ATOMIC_ACQUIRE);
		if (cap == 0)
			continue; /* handed out, not yet published */
		if (cap != SANDTRACE_LOG_CHUNK_FIRST) { /* not what a writer publishes */
			r->sdone[i] = 1;
			r->bad++;
			continue;
		}
		if (drain_chunk(a, r, off, &r->sread[i], &r->sdone[i], &nb) < 0)
			return -ENOMEM;
	}
	/* entries stay where they are in the arena (never freed during the
	 * run): delivered in seq order */
	if (nb > 1)
		qsort(r->batch, nb, sizeof(struct pending), by_seq);
	r->bn = nb;
	r->bnext = 0;
	return (long)nb;
}

/* Deliver up to max entries of the batch; *stop is set when fn asked to. */
static uint64_t deliver(struct sandtrace_log_reader *r, sandtrace_log_fn fn, void *ctx, uint64_t max,
			bool *stop)
{
	const struct pending *p = r->batch;
	uint64_t k = 0;
	while (k < max && r->bnext < r->bn) {
		const struct sandtrace_log_entry *e = p[r->bnext++].e;
		r->entries++;
		k++;
		if (fn(ctx, e, (const uint8_t *)(e + 1)) != 0) {
			*stop = true;
			break;
		}
	}
	return k;
}

long sandtrace_log_drain_some(const struct sandtrace_arena *a, struct sandtrace_log_reader *r,
			      sandtrace_log_fn fn, void *ctx, uint64_t max)
{
	bool stop = false;
	if (!sandtrace_log_pending(r)) {
		long n = collect(a, r);
		if (n <= 0)
			return n;
	}
	return (long)deliver(r, fn, ctx, max, &stop);
}

long sandtrace_log_collect(const struct sandtrace_arena *a, struct sandtrace_log_reader *r)
{
	return sandtrace_log_pending(r) ? 0 : collect(a, r);
}

/* Does the next pending entry precede a record stamped stamp? */
static bool before_stamp(const struct sandtrace_log_reader *r, uint32_t stamp)
{
	const struct pending *p = r->batch;
	/* below the stamp's seq, modulo 2^32 */
	return (int32_t)(sandtrace_log_entry_stamp(p[r->bnext].e->seq) - stamp) < 0;
}

long sandtrace_log_drain_before(const struct sandtrace_arena *a, struct sandtrace_log_reader *r,
				sandtrace_log_fn fn, void *ctx, uint32_t stamp)
{
	uint64_t k = 0;
	for (int round = 0; round < 2; round++) {
		while (sandtrace_log_pending(r) && before_stamp(r, stamp)) {
			bool stop = false;
			k += deliver(r, fn, ctx, 1, &stop);
			if (stop)
				return (long)k;
		}
		/* an entry at or above the stamp is next: the rest comes later */
		if (sandtrace_log_pending(r) || round == 1)
			break;
		long n = collect(a, r);
		if (n < 0)
			return n;
		if (n == 0)
			break;
	}
	return (long)k;
}

long sandtrace_log_drain(const struct sandtrace_arena *a, struct sandtrace_log_reader *r,
			 sandtrace_log_fn fn, void *ctx)
{
	bool stop = false;
	/* what an earlier slice left, then everything published since */
	uint64_t k = deliver(r, fn, ctx, UINT64_MAX, &stop);
	if (stop)
		return (long)k;
	long n = collect(a, r);
	if (n < 0)
		return n;
	return (long)(k + deliver(r, fn, ctx, UINT64_MAX, &stop));
}

void sandtrace_log_reader_free(struct sandtrace_log_reader *r)
{
	free(r->offs);
	free(r->read);
	free(r->done);
	free(r->sread);
	free(r->sdone);
	free(r->batch);
	memset(r, 0, sizeof(*r));
}
