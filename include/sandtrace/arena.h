/* sandtrace/arena.h - layout and API of the shared-memory arena every traced process maps. */
#ifndef SANDTRACE_ARENA_H
#define SANDTRACE_ARENA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One arena per run: a POSIX shared-memory object of mode 0600 with an
 * unguessable name ("/sandtrace-<pid>-<128 random bits in hex>"), created by
 * the daemon and sized at start with ftruncate (sparse: a page costs memory
 * only once touched).  Traced processes map it read-write at any address.
 * With an arena directory (`sandtrace run --arena-dir DIR`, a tmpfs the user
 * chose, e.g. one mounted with huge=within_size) the object is the file
 * DIR/sandtrace-<pid>-<hex> instead, and its name is that absolute path: a
 * name with a '/' after the first byte is a path, any other a POSIX
 * shared-memory name.
 *
 * Everything inside holds offsets from the arena's base, never pointers.
 * Offset 0 is the header, so 0 doubles as "no object".  Allocation is a
 * bounds-checked fetch-and-add on `bump`; there is no free.  A full arena
 * makes the allocation fail (counted in SANDTRACE_CTR_FULL): callers stop
 * caching, they never crash and never answer wrongly.
 */

#define SANDTRACE_ARENA_MAGIC UINT64_C(0x616e657261545453) /* "STTarena" little-endian */
#define SANDTRACE_ARENA_VERSION 9u
/* Bytes for a name with its NUL: "/sandtrace-<pid>-<hex>" is at most 55, a
 * path in an arena directory leaves 200 for the directory. */
#define SANDTRACE_ARENA_NAME_MAX 256
/* Default size: 256 MiB of address space, touched only as used. */
#define SANDTRACE_ARENA_DEFAULT_SIZE (UINT64_C(256) << 20)
#define SANDTRACE_ARENA_ALIGN 16u
/* Every map of an arena starts at a multiple of this (bytes): the span of
 * addresses one page-table page maps with 4 KiB pages on x86-64 and arm64.
 * Offsets in one span cost a process one page-table page (shm/arena.c). */
#define SANDTRACE_ARENA_SPAN (UINT64_C(2) << 20)
/* Per-directory generations (hashed): a symlink to a file changes only the
 * names in its own directory. */
#define SANDTRACE_FS_GEN_SLOTS 4096u
/* The Ctrie's key filter: two bits of each inserted key's hash set in a
 * bit array of this many bits (a power of two), so that most lookups of a
 * key that is not there end without a walk (shm/ctrie.c). */
#define SANDTRACE_ARENA_FILTER_BITS (UINT32_C(1) << 16)
/* The library sets' memo (sandtrace_arena_libsets): slots of one 64-bit tag
 * each, a power of two. */
#define SANDTRACE_LIBSET_SLOTS 64u
/* The places of the three, in arenas with areas: the library sets' memo
 * right after the header (in the header's page, which every process reads),
 * the per-directory generations' table on the next page, the filter after
 * that.  A header that names any other offset for one has none in use there.
 * Between the memo and the end of the header's page: the run's first
 * compiled policy when it fits (SANDTRACE_ARENA_POLICY0_AT, at most
 * SANDTRACE_ARENA_POLICY0_MAX bytes; a reload's goes to the bump), so that a
 * process's start reads the policy on the page it reads the header on (one
 * page fewer to touch: docs/BENCHMARKS.md, stop 22). */
#define SANDTRACE_ARENA_LIBSETS_AT UINT64_C(1024)
#define SANDTRACE_ARENA_POLICY0_AT (SANDTRACE_ARENA_LIBSETS_AT + SANDTRACE_LIBSET_SLOTS * UINT64_C(8))
#define SANDTRACE_ARENA_GEN_SLOTS_AT UINT64_C(4096)
#define SANDTRACE_ARENA_POLICY0_MAX (SANDTRACE_ARENA_GEN_SLOTS_AT - SANDTRACE_ARENA_POLICY0_AT)
#define SANDTRACE_ARENA_FILTER_AT (SANDTRACE_ARENA_GEN_SLOTS_AT + SANDTRACE_FS_GEN_SLOTS * UINT64_C(4))
/* The record log's small chunks (log.h): segments named in the header, and
 * chunks of 1 KiB in each (an arena segment, SANDTRACE_ARENA_SEGMENT, each). */
#define SANDTRACE_LOG_SMALL_SEGS 98u
#define SANDTRACE_LOG_SMALL_PER_SEG 128u

/* Counters in the header (rare events only: hot-path counters stay per process). */
enum sandtrace_arena_counter {
	SANDTRACE_CTR_INSERTS = 0,   /* Ctrie insertions that won their CAS */
	SANDTRACE_CTR_CAS_RETRIES,   /* failed CAS attempts that were retried */
	SANDTRACE_CTR_FULL,          /* allocations refused because the arena is full */
	SANDTRACE_CTR_ATTACHES,      /* processes that mapped the arena */
	SANDTRACE_CTR_BYTES_NODES,   /* bytes allocated to Ctrie nodes */
	SANDTRACE_CTR_LNODES,        /* LNode (full hash collision) insertions */
	SANDTRACE_CTR_FILTER_UNSET,  /* inserts about to publish a key whose key-filter bits
					read clear: must stay 0 (they are set before the walk) */
	SANDTRACE_CTR_ASKS,          /* requests on the socket that wait for an answer, counted
					once each is sent: the daemon's log drain stops
					between two entries when it moves (sandtraced.c) */
	SANDTRACE_CTR_MAX = 8
};

/*
 * The header's first 64 bytes (magic, version, header_size, size, bump,
 * generation, root, policy, run_flags, owner_pid) keep their offsets in every
 * layout version: a daemon of another version (two sandtrace builds on one
 * machine) reads whose arena it is from them (owner_pid) before its sweep of
 * dead daemons' arenas, and must not take a live run's arena for garbage
 * because the rest of the header is laid out differently.
 */
#define SANDTRACE_ARENA_FROZEN_BYTES 64u

struct sandtrace_arena_header {
	uint64_t magic;                       /*  0: SANDTRACE_ARENA_MAGIC */
	uint32_t version;                     /*  8: SANDTRACE_ARENA_VERSION */
	uint32_t header_size;                 /* 12: sizeof(struct sandtrace_arena_header) */
	uint64_t size;                        /* 16: bytes in the object (and mapped) */
	_Atomic uint64_t bump;                /* 24: next free offset (fetch-and-add) */
	_Atomic uint64_t generation;          /* 32: bumped by a policy reload */
	_Atomic uint64_t root;                /* 40: offset of the current Ctrie root INode */
	_Atomic uint64_t policy;              /* 48: offset of the compiled sandbox (policy.h) */
	uint32_t run_flags;                   /* 56: enum sandtrace_run_flags */
	uint32_t owner_pid;                   /* 60: the process that started the daemon (`sandtrace
						       run`): while it lives, the run does, even if
						       its daemon was killed (the stale-arena sweep
						       keeps the arena) */
	_Atomic uint64_t counters[SANDTRACE_CTR_MAX]; /* 64..127 */
	/* the record log (log.h): a table of per-writer chunks */
	_Atomic uint64_t log_table;           /* 128: offset of the table's directory:
						       uint64_t[log_cap / SANDTRACE_LOG_BLOCK] offsets
						       of blocks of chunk offsets (log.h) */
	uint32_t log_cap;                     /* 136: chunk slots in the table (whole blocks) */
	_Atomic uint32_t ns_epoch;            /* 140: bumped by every per-directory generation
						       bump (the shim's per-thread memo of warm
						       accesses is kept with fs_gen + generation +
						       ns_epoch, and drops on any change) */
	_Atomic uint64_t log_nchunks;         /* 144: slots handed out (fetch-and-add) */
	_Atomic uint64_t log_seq;             /* 152: order of entries across chunks */
	_Atomic uint64_t fs_gen;              /* 160: bumped when a traced process creates, removes
						       or renames a symlink or renames a directory:
						       cached entries of older generations miss */
	_Atomic uint64_t fs_gen_slots;        /* 168: offset of uint32_t[SANDTRACE_FS_GEN_SLOTS]:
						       per-directory generations (0 = none yet) */
	/* areas (arenas of SANDTRACE_ARENA_AREAS_MIN bytes or more; 0 = none):
	 * each area allocates from a segment of its own (SANDTRACE_ARENA_SEGMENT
	 * bytes, taken from bump when the last one is full), so that the
	 * Ctrie's keys (SNodes) are not mixed with the copied-and-dropped
	 * CNodes or with the log: the pages a cache hit reads stay few and
	 * dense (each page a process first touches costs it a fault).  The
	 * segments of the three areas interleave in the order they are needed,
	 * so that a small run's arena is one 2 MiB span (one page-table page per
	 * process, SANDTRACE_ARENA_SPAN) and a large one's early, most-read
	 * data sits in the first spans.  Each word is the area's next free
	 * offset inside its current segment; 0 = no segment yet. */
	_Atomic uint64_t bump_keys;           /* 176: the keys area (Ctrie SNodes) */
	_Atomic uint64_t bump_log;            /* 184: the log area (record-log chunks, their table) */
	_Atomic uint64_t bump_main;           /* 192: everything else (tables, INodes, CNodes, LNodes) */
	/* the record log's small chunks (log.h: a writer's first chunk), in
	 * segments of SANDTRACE_LOG_SMALL_PER_SEG named here, in the header's
	 * own page, which every process has touched by then: taking one costs
	 * a process no page of a table */
	_Atomic uint64_t log_nsmall;          /* 200: small chunks handed out (fetch-and-add) */
	_Atomic uint64_t fs_gen_slots_home;   /* 208: zeroed bytes for fs_gen_slots, taken at
						       create beside the header (arenas with areas;
						       0 = none): the first namespace change
						       publishes them, so that reading a directory's
						       generation costs no page of its own */
	uint64_t filter;                      /* 216: offset of the Ctrie's key filter (arenas
						       with areas; 0 = none): SANDTRACE_ARENA_FILTER_BITS
						       bits, beside the header (shm/ctrie.c) */
	_Atomic uint64_t log_small[SANDTRACE_LOG_SMALL_SEGS]; /* 224..1007: segment offsets,
							       0 = not made yet */
	_Atomic uint64_t lost;                /* 1008: records and requests a traced process
						       could not deliver, neither to the record log
						       nor to the daemon (its connection lost, the
						       daemon dead or not answering): each one a
						       fetch-and-add by the shim; the daemon's
						       summary, or the CLI's when the daemon died,
						       says the trace is incomplete */
	uint64_t libsets;                     /* 1016: offset of the library sets' memo
						       (sandtrace_arena_libsets; arenas with areas,
						       at SANDTRACE_ARENA_LIBSETS_AT; 0 = none) */
};
_Static_assert(offsetof(struct sandtrace_arena_header, bump) == 24, "layout");
_Static_assert(offsetof(struct sandtrace_arena_header, root) == 40, "layout");
_Static_assert(offsetof(struct sandtrace_arena_header, run_flags) == 56, "layout");
_Static_assert(offsetof(struct sandtrace_arena_header, owner_pid) == 60, "layout (frozen)");
_Static_assert(offsetof(struct sandtrace_arena_header, counters) == SANDTRACE_ARENA_FROZEN_BYTES,
	       "the frozen prefix ends at owner_pid");
_Static_assert(offsetof(struct sandtrace_arena_header, counters) == 64, "layout");
_Static_assert(offsetof(struct sandtrace_arena_header, log_table) == 128, "layout");
_Static_assert(offsetof(struct sandtrace_arena_header, log_nchunks) == 144, "layout");
_Static_assert(offsetof(struct sandtrace_arena_header, bump_main) == 192, "layout");
_Static_assert(offsetof(struct sandtrace_arena_header, fs_gen_slots_home) == 208, "layout");
_Static_assert(offsetof(struct sandtrace_arena_header, filter) == 216, "layout");
_Static_assert(offsetof(struct sandtrace_arena_header, libsets) == 1016, "layout");
_Static_assert(sizeof(struct sandtrace_arena_header) == SANDTRACE_ARENA_LIBSETS_AT,
	       "the library sets' memo follows the header");
_Static_assert(offsetof(struct sandtrace_arena_header, log_small) == 224, "layout");
_Static_assert(offsetof(struct sandtrace_arena_header, lost) == 1008, "layout");
_Static_assert(sizeof(struct sandtrace_arena_header) == 1024, "header is a quarter page");

/* A process's view of an arena: caller-owned storage, no allocation. */
struct sandtrace_arena {
	uint8_t *base;   /* where this process mapped it; NULL when detached */
	uint64_t size;   /* mapped bytes */
	uint64_t page;   /* its file system's block size (st_blksize), bytes: 2 MiB when a
			    tmpfs serves it in 2 MiB pages; 0 when not known */
};

/*
 * sandtrace_arena_create - create, size and map a new arena; write its name
 * (NUL-terminated, < SANDTRACE_ARENA_NAME_MAX) to name.  size is in bytes,
 * at least 64 KiB.  Returns 0 or -errno.  Not async-signal-safe (daemon only).
 */
int sandtrace_arena_create(struct sandtrace_arena *a, uint64_t size, uint32_t run_flags,
			   char name[SANDTRACE_ARENA_NAME_MAX]);

/*
 * sandtrace_arena_create_in - as sandtrace_arena_create, in the directory
 * dir (absolute; NULL: POSIX shared memory, as sandtrace_arena_create): the
 * file dir/sandtrace-<pid>-<hex>, created with O_EXCL | O_NOFOLLOW, mode
 * 0600; name gets its absolute path.  -ENAMETOOLONG when that path would not
 * fit in SANDTRACE_ARENA_NAME_MAX; other -errno from open/ftruncate/mmap.
 * The caller chooses the directory's file system: a disk would write the
 * arena back (the daemon takes only a tmpfs).  Not async-signal-safe.
 */
int sandtrace_arena_create_in(struct sandtrace_arena *a, uint64_t size, uint32_t run_flags,
			      const char *dir, char name[SANDTRACE_ARENA_NAME_MAX]);

/*
 * sandtrace_arena_attach - map an existing arena by name (a POSIX
 * shared-memory name or a path, above).  Never aborts and never allocates:
 * returns 0, -errno from shm_open/open/fstat/mmap, or -EPROTO
 * when the magic, version or size in the header do not match (a->base is
 * then NULL and the caller runs without a cache).  Async-signal-safe.
 */
int sandtrace_arena_attach(struct sandtrace_arena *a, const char *name);

/*
 * sandtrace_arena_map_fd - attach, given an open descriptor of the arena
 * object, its size in bytes (st_size) and its file system's block size in
 * bytes (st_blksize); the caller opened it (the shim does so with raw system
 * calls) and closes it.  Returns 0, -errno from mmap, or -EPROTO as
 * sandtrace_arena_attach.  Async-signal-safe.  Where: a block size of
 * SANDTRACE_ARENA_SPAN or more is a tmpfs that serves the object in 2 MiB
 * pages (mounted huge=always or huge=within_size), which the kernel maps
 * with one page-middle entry each only at a 2 MiB boundary: there.
 * Otherwise the first page above the dynamic loader's image when the
 * caller's (main) stack keeps the room its soft limit gives, at least 128
 * MiB, beyond the arena (its header then shares a page-table page the
 * process has already); else at a 2 MiB boundary, as the creator's map
 * (shm/arena.c).
 */
int sandtrace_arena_map_fd(struct sandtrace_arena *a, int fd, uint64_t size, uint64_t blksize);

/*
 * sandtrace_arena_name_is_path - does name (a NUL-terminated arena name) name
 * a file by its absolute path (an arena directory's) rather than a POSIX
 * shared-memory object?  True when a '/' follows its first byte.
 * Async-signal-safe.
 */
static inline bool sandtrace_arena_name_is_path(const char *name)
{
	if (name[0] != '/')
		return false;
	for (const char *c = name + 1; *c; c++)
		if (*c == '/')
			return true;
	return false;
}

/* sandtrace_arena_detach - unmap.  Safe on a detached arena. */
void sandtrace_arena_detach(struct sandtrace_arena *a);

/* sandtrace_arena_unlink - remove the name, a POSIX shared-memory name or a
 * path (the daemon, at the end of the run).  0 or -errno. */
int sandtrace_arena_unlink(const char *name);

/*
 * sandtrace_arena_alloc - allocate size bytes aligned to
 * SANDTRACE_ARENA_ALIGN; returns the offset, or 0 when the arena is full
 * (SANDTRACE_CTR_FULL is then incremented).  Lock-free, usable from any
 * thread of any process; the memory is zero (fresh pages, never reused).
 * Linearization point: the fetch-and-add on bump (relaxed: the bytes are
 * published later by a release CAS/store of an offset pointing at them).
 */
uint64_t sandtrace_arena_alloc(struct sandtrace_arena *a, uint64_t size);

/* Arenas at least this large (bytes) are split into areas (see the header). */
#define SANDTRACE_ARENA_AREAS_MIN (UINT64_C(16) << 20)
/* An area's unit of growth (bytes, a power of two).  Requests larger than
 * half of it are served whole segments of their own from bump; a smaller one
 * that does not fit in what its area's segment has left starts a new one
 * (the Ctrie's first cache array, 32 KiB, so stays beside the header, in the
 * window of pages the header's first read maps: shm/ctrie.c). */
#define SANDTRACE_ARENA_SEGMENT (UINT64_C(128) << 10)
enum sandtrace_arena_area {
	SANDTRACE_AREA_MAIN = 0, /* header-adjacent: tables, INodes, CNodes, LNodes */
	SANDTRACE_AREA_KEYS = 1, /* Ctrie SNodes */
	SANDTRACE_AREA_LOG = 2   /* record-log chunks */
};

/*
 * sandtrace_arena_alloc_in - as sandtrace_arena_alloc, from the given
 * area's current segment, or a new segment when it is full (a small arena
 * has no areas: everything comes from bump).  0 when no segment is left.
 * Same thread-safety and zeroing; linearization point: the CAS on the
 * area's word that hands out the bytes.  Processes racing for a new
 * segment each take one and one wins; the others' segments stay unused
 * (at most one per racer per segment change).
 */
uint64_t sandtrace_arena_alloc_in(struct sandtrace_arena *a, enum sandtrace_arena_area area,
				  uint64_t size);

/* sandtrace_arena_used - bytes allocated in all areas (with the header). */
uint64_t sandtrace_arena_used(const struct sandtrace_arena *a);

/*
 * sandtrace_arena_valid - check a mapped arena's header (magic, version,
 * size, bump within bounds, root/policy offsets inside).  For a map that a
 * crashed writer left behind.  Thread-safe.
 */
bool sandtrace_arena_valid(const struct sandtrace_arena *a);

static inline struct sandtrace_arena_header *sandtrace_arena_hdr(const struct sandtrace_arena *a)
{
	return (struct sandtrace_arena_header *)a->base;
}

/* Translate an offset into a pointer, or NULL for 0 or out-of-bounds (len bytes needed). */
static inline void *sandtrace_arena_ptr(const struct sandtrace_arena *a, uint64_t off, uint64_t len)
{
	if (off == 0 || off > a->size || len > a->size - off)
		return NULL;
	return a->base + off;
}

/*
 * sandtrace_arena_libsets - the library sets' memo: SANDTRACE_LIBSET_SLOTS
 * 64-bit tags in the header's page, or NULL when the arena has none (no
 * areas, or a header that names another place).  Tag 0 is an empty slot.
 *
 * A traced process hashes the names of the shared objects the loader mapped
 * for it, with the arena epoch (fs_gen + generation + ns_epoch), into one
 * tag; a slot holding that tag says that a process has already recorded that
 * set of libraries in that epoch, so each of their lookups would be a cache
 * hit that records nothing, and the new process skips them (shim/init.c).
 * Each slot is one word written with one release store and read with one
 * acquire load: no torn entries, no lock.  A slot overwritten by another set
 * costs the next process of the first set its lookups, never a record.  A
 * false match needs two sets' 64-bit tags to collide.  Lock-free,
 * async-signal-safe.
 */
static inline _Atomic uint64_t *sandtrace_arena_libsets(const struct sandtrace_arena *a)
{
	if (sandtrace_arena_hdr(a)->libsets != SANDTRACE_ARENA_LIBSETS_AT)
		return NULL;
	return (_Atomic uint64_t *)sandtrace_arena_ptr(a, SANDTRACE_ARENA_LIBSETS_AT,
						       SANDTRACE_LIBSET_SLOTS * UINT64_C(8));
}

/* Add to a header counter (relaxed: statistics only). */
static inline void sandtrace_arena_count(struct sandtrace_arena *a, enum sandtrace_arena_counter c,
					 uint64_t n)
{
	atomic_fetch_add_explicit(&sandtrace_arena_hdr(a)->counters[c], n, memory_order_relaxed);
}

#endif
