/* sandtrace/log.h - the record log in the arena: traced processes append records without a system call. */
#ifndef SANDTRACE_LOG_H
#define SANDTRACE_LOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "arena.h"
#include "protocol.h"

/*
 * Records that need no answer (HELLO, ACCESS records, EXIT) are appended to
 * the arena instead of being sent over the socket, so that a traced process
 * whose accesses are all settled in the arena never makes a system call for
 * sandtrace, and a process killed a moment later loses nothing it wrote.
 * The daemon drains the log periodically and at the end of the run, and
 * dispatches each entry exactly like the socket message it stands for.
 *
 * Layout: a writer registers a chunk with a fetch-and-add on log_nchunks,
 * which hands it slot i of log_cap; the slots are in blocks of
 * SANDTRACE_LOG_BLOCK (one page), made when first needed: the header's
 * log_table is a directory of block offsets (0 = not made yet; the first
 * writer of a block allocates it in the log area and installs it with a
 * CAS, a loser uses the winner's).  So the table of a large arena costs a
 * small run a few pages, not megabytes, and sits next to the chunks it
 * names.
 *
 * Small chunks: a writer's first chunk (SANDTRACE_LOG_CHUNK_FIRST, 1 KiB with
 * its header; most processes write nothing more) does not go through the
 * table: small chunk i is the (i % SANDTRACE_LOG_SMALL_PER_SEG)-th of the
 * segment the header's log_small[i / SANDTRACE_LOG_SMALL_PER_SEG] names, i
 * handed out by a fetch-and-add on log_nsmall; the first writer of a
 * segment makes it (installed with a CAS, as a table block), and a chunk is
 * published by the release store of its cap (0 until then; the reader
 * skips it).  A process so touches the header's page (which it has touched
 * already) and its chunk's, not a directory and a block.  Past the last
 * segment, first chunks go through the table.  A chunk has one
 * writer (a thread of one process) and one reader (the daemon): the writer
 * writes an entry, then publishes it with a release store of `used`; the
 * reader loads `used` with acquire and reads up to it.  A writer that dies
 * leaves every entry it published intact.  Full table or arena: appends
 * fail with -ENOSPC and the caller falls back to the socket.
 */

struct sandtrace_log_chunk {
	_Atomic uint32_t used;   /* bytes of data published */
	uint32_t cap;            /* bytes of data */
	int32_t pid;             /* the writer's process */
	_Atomic uint32_t sealed; /* 1: the writer will append no more */
	uint8_t data[];          /* entries, each 8-byte aligned */
};
_Static_assert(sizeof(struct sandtrace_log_chunk) == 16, "chunk header is 16 bytes");

/* One entry: the writer's pid, then a protocol frame and its payload. */
struct sandtrace_log_entry {
	int32_t pid;
	uint32_t size; /* bytes of this entry including header and padding */
	uint64_t seq;  /* fetch-and-add on log_seq: the order across chunks */
	struct sandtrace_frame frame;
};
_Static_assert(sizeof(struct sandtrace_log_entry) == 32, "entry header is 32 bytes");

/* Default chunk size (bytes of data): one page with its header. */
#define SANDTRACE_LOG_CHUNK (4096u - 16u)
/* A writer's first chunk: a quarter page (most processes write a HELLO, a
 * few records and an EXIT). */
#define SANDTRACE_LOG_CHUNK_FIRST (1024u - 16u)

/* A small chunk's size with its header. */
#define SANDTRACE_LOG_SMALL_SIZE (SANDTRACE_LOG_CHUNK_FIRST + 16u)
_Static_assert(SANDTRACE_LOG_SMALL_SIZE * SANDTRACE_LOG_SMALL_PER_SEG == SANDTRACE_ARENA_SEGMENT,
	       "a segment of small chunks is an arena segment");

/*
 * sandtrace_log_small - small chunk i: its header (and *off its offset), or
 * NULL when i is past the segments or its segment is not made yet or lies
 * outside the map.  Its cap is 0 until the writer publishes it (read it with
 * __atomic_load_n(..., __ATOMIC_ACQUIRE)).  Lock-free, async-signal-safe.
 */
const struct sandtrace_log_chunk *sandtrace_log_small(const struct sandtrace_arena *a, uint64_t i,
						      uint64_t *off);

/* Chunk slots per block of the table (8 bytes each: one page). */
#define SANDTRACE_LOG_BLOCK 512u

/*
 * sandtrace_log_init - allocate the directory of a table of cap chunk slots
 * (rounded up to whole blocks) and publish it.  Daemon only, before any
 * writer attaches.  0 or -ENOSPC.
 */
int sandtrace_log_init(struct sandtrace_arena *a, uint32_t cap);

/* sandtrace_log_cap_for - the chunk slots a run gives an arena of size bytes:
 * one per 256 bytes (small arenas keep room for the Ctrie), at least 64 and
 * at most 1M (8 MiB of table, touched only as used).  Pure. */
static inline uint32_t sandtrace_log_cap_for(uint64_t size)
{
	uint64_t slots = size / 256;
	return (uint32_t)(slots > (UINT64_C(1) << 20) ? UINT64_C(1) << 20 : slots < 64 ? 64 : slots);
}

/*
 * sandtrace_log_chunk_new - allocate a chunk of at least cap data bytes for
 * pid and register it: a small chunk (cap == SANDTRACE_LOG_CHUNK_FIRST) in
 * the small-chunk segments while they last, else in the table.  Returns its
 * offset, or 0 (no table, table full or arena full).  Lock-free; async-signal-safe.  Linearization point: the
 * fetch-and-add on log_nchunks that hands out the slot; the slot's offset
 * is then stored with release, so a reader that sees it sees the header
 * (the slot's block, when this writer made it, is installed with a release
 * CAS first).
 */
uint64_t sandtrace_log_chunk_new(struct sandtrace_arena *a, uint32_t cap, int32_t pid);

/*
 * sandtrace_log_slot - slot i of the chunk table, or NULL when i is past
 * log_cap, the table is absent or damaged, or its block is not made yet
 * (make false) or cannot be (make true: the arena is full).  make true
 * makes a missing block (lock-free, see above; async-signal-safe).  The
 * reader passes false: a block not made yet holds no published chunk.
 */
_Atomic uint64_t *sandtrace_log_slot(const struct sandtrace_arena *a, uint64_t i, bool make);

/*
 * sandtrace_log_append - append one entry (frame of type/flags + the parts
 * as payload) to the chunk at offset chunk; the frame's seq field carries
 * the writer's uid (the log has no SO_PEERCRED).  Single writer per chunk.
 * Returns 0, -ENOSPC when the entry does not fit in what is left (the
 * caller seals this chunk and takes a new one), -EINVAL for a bad chunk.
 * Allocation-free, async-signal-safe.  Publication: release store of used.
 */
int sandtrace_log_append(struct sandtrace_arena *a, uint64_t chunk, int32_t pid, uint32_t uid,
			 unsigned type, uint32_t flags, const struct iovec *parts, int nparts);

/* sandtrace_log_seal - the writer is done with this chunk (release store). */
void sandtrace_log_seal(struct sandtrace_arena *a, uint64_t chunk);

/*
 * The reader's state: how far each chunk has been read.  Owned by the daemon
 * (malloc'd here, not in the arena: the arena is writable by every traced
 * process and is never trusted by the reader).
 */
struct sandtrace_log_reader {
	uint64_t nseen;     /* table slots looked at */
	uint64_t *offs;     /* chunk offset of each slot seen (0 = not yet published) */
	uint32_t *read;     /* bytes of each chunk consumed */
	uint8_t *done;      /* sealed and fully read */
	uint64_t cap;
	uint32_t *sread;    /* the same for small chunks (their offsets are computed) */
	uint8_t *sdone;
	uint64_t scap;
	uint64_t entries;   /* entries delivered */
	uint64_t bad;       /* entries or chunks skipped as malformed */
	void *batch;        /* the entries one collection took, sorted by seq */
	uint64_t batch_cap;
	uint64_t bn, bnext; /* entries in the batch; the next to deliver */
};

/* Called for each entry: payload has e->frame.len bytes.  A nonzero return stops the drain. */
typedef int (*sandtrace_log_fn)(void *ctx, const struct sandtrace_log_entry *e,
				const uint8_t *payload);

/*
 * sandtrace_log_drain - deliver every entry published since the last drain,
 * in the order of their seq (an entry appended while a drain runs may come
 * in the next drain, after entries with a higher seq).
 * Every offset, size and frame is checked: a malformed chunk is skipped
 * from the bad entry on (counted in r->bad), never trusted.  Returns the
 * number of entries delivered, or -ENOMEM.  Reader thread only.  When fn
 * returns nonzero the drain stops after that entry; the rest of the batch
 * stays pending (sandtrace_log_pending) for the next call.
 */
long sandtrace_log_drain(const struct sandtrace_arena *a, struct sandtrace_log_reader *r,
			 sandtrace_log_fn fn, void *ctx);

/*
 * sandtrace_log_drain_some - the same, at most max entries: first what an
 * earlier call collected and did not deliver, else a new collection of
 * everything published (delivered from its lowest seq on).  For a reader
 * that must stay responsive: the daemon answers its askers between slices.
 * Returns the number delivered (0..max) or -ENOMEM.  Reader thread only.
 */
long sandtrace_log_drain_some(const struct sandtrace_arena *a, struct sandtrace_log_reader *r,
			      sandtrace_log_fn fn, void *ctx, uint64_t max);

/* The stamp of a log entry or record of sequence number seq (taken from
 * log_seq): its low 32 bits + 1, never 0 (0 means no stamp). */
static inline uint32_t sandtrace_log_entry_stamp(uint64_t seq)
{
	uint32_t s = (uint32_t)(seq + 1);
	return s ? s : 1;
}

/*
 * sandtrace_log_stamp - what a writer that sends a record by the socket puts
 * in its frame's seq (the record stamp): a seq of its own taken from log_seq
 * as a log entry's is (fetch-and-add), as sandtrace_log_entry_stamp gives it.
 * Log entries and socket records then share one order even when the log is
 * full: every entry whose seq was taken before is below it, every entry or
 * record made after the send is above it.  Async-signal-safe.
 */
static inline uint32_t sandtrace_log_stamp(const struct sandtrace_arena *a)
{
	/* acq_rel: after the entries this thread saw, before what follows the send */
	return sandtrace_log_entry_stamp(
	    atomic_fetch_add_explicit(&sandtrace_arena_hdr(a)->log_seq, 1, memory_order_acq_rel));
}

/*
 * sandtrace_log_drain_before - deliver, in seq order, the entries whose seq
 * is below the one a record stamp (sandtrace_log_stamp) was taken at: what
 * was already collected, then (once) a fresh collection; stops at the first
 * entry at or above it, which stays pending.  So a record that came by a
 * socket is dispatched after the log entries that were there before it was
 * sent, and before those appended after.  Returns the number delivered or
 * -ENOMEM.  Reader thread only.
 */
long sandtrace_log_drain_before(const struct sandtrace_arena *a, struct sandtrace_log_reader *r,
				sandtrace_log_fn fn, void *ctx, uint32_t stamp);

/*
 * sandtrace_log_collect - when nothing is pending, take what was published
 * since the last collection into the reader's batch (delivered by the
 * drain functions).  Returns how many were taken (0 when some were still
 * pending) or -ENOMEM.  Reader thread only.
 */
long sandtrace_log_collect(const struct sandtrace_arena *a, struct sandtrace_log_reader *r);

/* sandtrace_log_pending - does the reader hold collected entries not delivered yet? */
static inline bool sandtrace_log_pending(const struct sandtrace_log_reader *r)
{
	return r->bnext < r->bn;
}

/* sandtrace_log_reader_free - release the reader's state. */
void sandtrace_log_reader_free(struct sandtrace_log_reader *r);

#endif
