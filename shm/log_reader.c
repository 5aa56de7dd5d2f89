/* shm/log_reader.c - the daemon's side of the record log: drain published entries, trusting nothing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sandtrace/log.h"

/* This file allocates (the reader's state lives in the daemon's heap); the
 * shim never links it: it references none of its symbols. */

static int grow(struct sandtrace_log_reader *r, uint64_t need)
{
	if (need <= r->cap)
		return 0;
	uint64_t ncap = r->cap ? r->cap : 256;
	while (ncap < need)
		ncap *= 2;
	uint64_t *o = realloc(r->offs, ncap * sizeof(*o));
	if (!o)
		return -ENOMEM;
	r->offs = o;
	uint32_t *rd = realloc(r->read, ncap * sizeof(*rd));
	if (!rd)
		return -ENOMEM;
	r->read = rd;
	uint8_t *d = realloc(r->done, ncap);
	if (!d)
		return -ENOMEM;
	r->done = d;
	memset(r->offs + r->cap, 0, (ncap - r->cap) * sizeof(*o));
	memset(r->read + r->cap, 0, (ncap - r->cap) * sizeof(*rd));
	memset(r->done + r->cap, 0, ncap - r->cap);
	r->cap = ncap;
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

long sandtrace_log_drain(const struct sandtrace_arena *a, struct sandtrace_log_reader *r,
			 sandtrace_log_fn fn, void *ctx)
{
	struct sandtrace_arena_header *h = sandtrace_arena_hdr(a);
	if (atomic_load_explicit(&h->log_table, memory_order_acquire) == 0)
		return 0;
	uint64_t tcap = h->log_cap;
	uint64_t n = atomic_load_explicit(&h->log_nchunks, memory_order_relaxed);
	if (n > tcap)
		n = tcap;
	if (grow(r, n) < 0)
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
		struct sandtrace_log_chunk *c = sandtrace_arena_ptr(a, r->offs[i], sizeof(*c));
		uint64_t cap = c ? c->cap : 0;
		if (!c || !sandtrace_arena_ptr(a, r->offs[i], sizeof(*c) + cap)) {
			r->done[i] = 1;
			r->bad++;
			continue;
		}
		/* acquire (both): entries published before used / the seal */
		uint32_t sealed = atomic_load_explicit(&c->sealed, memory_order_acquire);
		uint32_t used = atomic_load_explicit(&c->used, memory_order_acquire);
		if (used > cap)
			used = (uint32_t)cap;
		while (r->read[i] + sizeof(struct sandtrace_log_entry) <= used) {
			const struct sandtrace_log_entry *e =
			    (const void *)(c->data + r->read[i]);
			if (e->size < sizeof(*e) || e->size > used - r->read[i] ||
			    sandtrace_proto_check_frame(&e->frame) != 0 ||
			    sizeof(*e) + (uint64_t)e->frame.len > e->size) {
				r->bad++;
				r->read[i] = used; /* skip the rest: untrusted */
				sealed = 1;
				break;
			}
			if (batch_add(r, nb, e) < 0)
				return -ENOMEM;
			nb++;
			r->read[i] += e->size;
		}
		if (sealed && r->read[i] >= used)
			r->done[i] = 1;
	}
	r->nseen = n;
	/* entries stay where they are in the arena (never freed during the
	 * run): deliver them in seq order */
	struct pending *p = r->batch;
	if (nb > 1)
		qsort(p, nb, sizeof(*p), by_seq);
	for (uint64_t k = 0; k < nb; k++) {
		r->entries++;
		if (fn(ctx, p[k].e, (const uint8_t *)(p[k].e + 1)) != 0)
			return (long)k + 1;
	}
	return (long)nb;
}

void sandtrace_log_reader_free(struct sandtrace_log_reader *r)
{
	free(r->offs);
	free(r->read);
	free(r->done);
	free(r->batch);
	memset(r, 0, sizeof(*r));
}
