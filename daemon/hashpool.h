/* daemon/hashpool.h - SHA-256 of file versions: a worker thread pool and a digest cache keyed by file identity. */
#ifndef ST_HASHPOOL_H
#define ST_HASHPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sandtrace/protocol.h>

/*
 * The digests of `sandtrace run --manifest` and `--verify` are computed
 * here, off the traced processes' critical path: the daemon's main thread
 * submits (path, identity) jobs and worker threads hash them.
 *
 * The cache is keyed by the whole struct sandtrace_identity (dev, ino,
 * size, mtime ns, ctime ns): an identity is hashed at most once per run
 * however many paths (hard links, spellings) or processes reach it, and a
 * persistent cache file (st__hashpool_load/save) carries the digests to the
 * next run, so an unchanged file is never hashed again.  A worker hashes a
 * file only if, opened by path, it still has the identity the shim saw, and
 * still has it after the last byte was read; otherwise that version is gone
 * (-ESTALE: a file modified or replaced before the daemon got to it).
 *
 * Digests: OpenSSL's libcrypto (EVP, SHA-256 with the CPU's SHA extensions
 * where present), loaded (dlopen) on the first call that needs it; when it
 * cannot be, st__hashpool_new and st__sha256_fd fail with -ENOSYS and
 * st__sha256_unavailable says why.  Thread-safety: every function may be called from any
 * thread; one mutex guards the cache and the queue (held only to look up,
 * insert and pop, never while reading a file).
 */

#define ST_SHA256_LEN 32

struct st__hashpool;

struct st__hash_stats {
	uint64_t hashed_files; /* files read and hashed in this run */
	uint64_t hashed_bytes; /* their bytes */
	uint64_t cache_hits;   /* digests found already computed in this run */
	uint64_t disk_hits;    /* digests found in the persistent cache */
	uint64_t failed;       /* versions that could not be hashed (changed, gone, unreadable) */
	uint64_t hash_ns;      /* wall time the workers (and synchronous callers) spent hashing */
	uint64_t hash_cpu_ns;  /* their CPU time (user + system) */
	uint64_t loaded;       /* entries read from the persistent cache */
	unsigned threads;
};

/* st__sha256_unavailable - NULL when libcrypto is loaded (it is, by this
 * call, the first time), else why it cannot be (dlerror's words, or the
 * symbol missing).  Thread-safe. */
const char *st__sha256_unavailable(void);

/* st__hashpool_new - a pool of nthreads workers (0: no workers, every
 * digest is computed by the caller of st__hashpool_get).  0 or -errno. */
int st__hashpool_new(struct st__hashpool **out, unsigned nthreads);

/* st__hashpool_free - stop the workers (after the queue is done) and free. */
void st__hashpool_free(struct st__hashpool *p);

/*
 * st__hashpool_load - read a persistent cache file into the pool.  A missing
 * file is not an error (0); a malformed one is ignored from the bad line on
 * (-EINVAL with "FILE:LINE: message" in err; what came before is kept).
 */
int st__hashpool_load(struct st__hashpool *p, const char *file, char *err, size_t errlen);

/* st__hashpool_save - write every digest known (loaded or computed) to file,
 * atomically (a temporary file renamed over it; the directory is created).
 * 0 or -errno. */
int st__hashpool_save(struct st__hashpool *p, const char *file);

/* st__hashpool_submit - hash (path, id) in the background unless the
 * identity is known or queued already.  Never blocks on I/O. */
void st__hashpool_submit(struct st__hashpool *p, const char *path, size_t len,
			 const struct sandtrace_identity *id);

/*
 * st__hashpool_get - the digest of this version: from the cache, by waiting
 * for a worker already on it, or by hashing it in the calling thread.
 * Returns 0, -ESTALE (the file no longer has this identity), or -errno.
 */
int st__hashpool_get(struct st__hashpool *p, const char *path, size_t len,
		     const struct sandtrace_identity *id, uint8_t digest[ST_SHA256_LEN]);

/* st__hashpool_peek - the digest if computed (1), 0 if unknown or pending,
 * or the negative errno its hashing failed with.  Never blocks on I/O. */
int st__hashpool_peek(struct st__hashpool *p, const struct sandtrace_identity *id,
		      uint8_t digest[ST_SHA256_LEN]);

/* st__hashpool_wait - return when the queue is empty and no worker is busy. */
void st__hashpool_wait(struct st__hashpool *p);

void st__hashpool_stats(struct st__hashpool *p, struct st__hash_stats *s);

/*
 * st__sha256_fd - hash what is left of fd (read(2) to EOF) into digest;
 * *bytes gets the count.  0 or -errno.  Thread-safe.
 */
int st__sha256_fd(int fd, uint8_t digest[ST_SHA256_LEN], uint64_t *bytes);

/* Hex helpers: 64 lower-case digits + NUL; parse accepts exactly 64 hex digits (0 or -EINVAL). */
void st__sha256_hex(const uint8_t digest[ST_SHA256_LEN], char hex[2 * ST_SHA256_LEN + 1]);
int st__sha256_parse(const char *hex, size_t len, uint8_t digest[ST_SHA256_LEN]);

/* st__identity_of - the identity of an fstat/stat result. */
struct stat;
void st__identity_of(const struct stat *st, struct sandtrace_identity *id);

#endif
