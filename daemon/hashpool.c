/* daemon/hashpool.c - SHA-256 of file versions: worker threads, a digest cache keyed by identity, its file. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>

#include <openssl/evp.h>

#include "hashpool.h"

/* Bytes read per read(2) while hashing (one buffer per hashing thread). */
#define HASH_BUF (256u << 10)
#define CACHE_MAGIC "sandtrace-hash-cache 1"

/*
 * libcrypto, loaded on first use: a run without --manifest or --verify, and
 * every command of the CLI but those, never maps it.  Linked, its load and
 * its relocations cost each of the CLI and the daemon at every start (in all,
 * `sandtrace run -- true` 29.8 -> 23.1 ms: docs/BENCHMARKS.md, stop 23).
 * ST_LIBCRYPTO_SONAME comes from the build (daemon/meson.build: the major
 * version of the headers compiled against); each pointer has the type of the
 * header's own declaration.  Loaded once (pthread_once), never unloaded.
 */
static struct {
	__typeof__(EVP_MD_fetch) *md_fetch;
	__typeof__(EVP_MD_free) *md_free;
	__typeof__(EVP_MD_CTX_new) *ctx_new;
	__typeof__(EVP_MD_CTX_free) *ctx_free;
	__typeof__(EVP_DigestInit_ex) *init;
	__typeof__(EVP_DigestUpdate) *update;
	__typeof__(EVP_DigestFinal_ex) *final;
} evp;
static pthread_once_t evp_once = PTHREAD_ONCE_INIT;
static const char *evp_error = "not loaded"; /* NULL once every symbol is found */
static char evp_errbuf[512];

static void evp_load(void)
{
	void *h = dlopen(ST_LIBCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		/* dlerror names the file that failed, which may be one of its
		 * dependencies: say what was being loaded, and why */
		snprintf(evp_errbuf, sizeof(evp_errbuf), "loading %s for SHA-256: %s",
			 ST_LIBCRYPTO_SONAME, dlerror());
		evp_error = evp_errbuf;
		return;
	}
	struct {
		void **slot;
		const char *name;
	} syms[] = {
	    {(void **)&evp.md_fetch, "EVP_MD_fetch"},
	    {(void **)&evp.md_free, "EVP_MD_free"},
	    {(void **)&evp.ctx_new, "EVP_MD_CTX_new"},
	    {(void **)&evp.ctx_free, "EVP_MD_CTX_free"},
	    {(void **)&evp.init, "EVP_DigestInit_ex"},
	    {(void **)&evp.update, "EVP_DigestUpdate"},
	    {(void **)&evp.final, "EVP_DigestFinal_ex"},
	};
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		if ((*syms[i].slot = dlsym(h, syms[i].name)) == NULL) {
			snprintf(evp_errbuf, sizeof(evp_errbuf), "loading %s for SHA-256: no %s",
				 ST_LIBCRYPTO_SONAME, syms[i].name);
			evp_error = evp_errbuf;
			return;
		}
	}
	evp_error = NULL;
}

const char *st__sha256_unavailable(void)
{
	pthread_once(&evp_once, evp_load);
	return evp_error;
}

enum { E_PENDING, E_DONE, E_FAILED };

struct entry {
	struct sandtrace_identity id; /* the key: 40 bytes, no padding */
	int state;
	int err;     /* E_FAILED: the negative errno */
	bool loaded; /* from the persistent cache */
	uint8_t digest[ST_SHA256_LEN];
	UT_hash_handle hh;
};

struct job {
	struct job *next;
	struct sandtrace_identity id;
	size_t len;
	char path[]; /* NUL-terminated */
};

struct st__hashpool {
	pthread_mutex_t lock;
	pthread_cond_t work; /* a job was queued, or stop */
	pthread_cond_t done; /* an entry left E_PENDING, or the pool went idle */
	struct entry *cache;
	struct job *head, *tail;
	unsigned busy; /* workers hashing now */
	bool stop;
	pthread_t *threads;
	unsigned nthreads;
	EVP_MD *md;
	struct st__hash_stats st;
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* CPU time of this thread: what hashing cost, whatever else the machine runs. */
static int64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void st__identity_of(const struct stat *st, struct sandtrace_identity *id)
{
	memset(id, 0, sizeof(*id));
	id->dev = (uint64_t)st->st_dev;
	id->ino = (uint64_t)st->st_ino;
	id->size = (int64_t)st->st_size;
	id->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	id->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

void st__sha256_hex(const uint8_t d[ST_SHA256_LEN], char hex[2 * ST_SHA256_LEN + 1])
{
	static const char digits[] = "0123456789abcdef";
	for (unsigned i = 0; i < ST_SHA256_LEN; i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 15];
	}
	hex[2 * ST_SHA256_LEN] = '\0';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int st__sha256_parse(const char *hex, size_t len, uint8_t d[ST_SHA256_LEN])
{
	if (len != 2 * ST_SHA256_LEN)
		return -EINVAL;
	for (unsigned i = 0; i < ST_SHA256_LEN; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		d[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* Hash fd to EOF with md (NULL: fetch SHA-256 for this call). */
static int sha256_fd_md(EVP_MD *md, int fd, uint8_t digest[ST_SHA256_LEN], uint64_t *bytes)
{
	int rc = 0;
	uint64_t n = 0;
	unsigned dlen = 0;
	/* a pool's md says libcrypto is loaded; a call without one loads it */
	EVP_MD *own = NULL; /* fetched for this call alone */
	if (md == NULL) {
		if (st__sha256_unavailable() != NULL)
			return -ENOSYS;
		md = own = evp.md_fetch(NULL, "SHA256", NULL);
	}
	EVP_MD_CTX *ctx = evp.ctx_new();
	/* one buffer per thread, kept: a fresh 1 MiB malloc is a fresh mmap,
	 * and its 256 page faults cost more than hashing a small file */
	static __thread uint8_t *buf;
	if (buf == NULL)
		buf = malloc(HASH_BUF);
	if (md == NULL || ctx == NULL || buf == NULL || !evp.init(ctx, md, NULL)) {
		rc = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t r = read(fd, buf, HASH_BUF);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			goto out;
		}
		if (r == 0)
			break;
		if (!evp.update(ctx, buf, (size_t)r)) {
			rc = -EIO;
			goto out;
		}
		n += (uint64_t)r;
	}
	if (!evp.final(ctx, digest, &dlen) || dlen != ST_SHA256_LEN)
		rc = -EIO;
	if (bytes != NULL)
		*bytes = n;
out:
	evp.ctx_free(ctx);
	evp.md_free(own);
	return rc;
}

int st__sha256_fd(int fd, uint8_t digest[ST_SHA256_LEN], uint64_t *bytes)
{
	return sha256_fd_md(NULL, fd, digest, bytes);
}

/*
 * Hash the version id of path: open it, check that it is still that
 * version, hash it, check again (a writer that changed it while we read
 * would leave a digest of neither version).  Called without the lock.
 */
static int hash_version(struct st__hashpool *p, const char *path, const struct sandtrace_identity *id,
			uint8_t digest[ST_SHA256_LEN], uint64_t *bytes)
{
	/* O_NOATIME where allowed (our own files): reading for a digest is not a use */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? -ESTALE : -errno;
	struct stat st;
	struct sandtrace_identity now;
	int rc = 0;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	st__identity_of(&st, &now);
	if (!S_ISREG(st.st_mode) || memcmp(&now, id, sizeof(now)) != 0) {
		rc = -ESTALE;
		goto out;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	rc = sha256_fd_md(p->md, fd, digest, bytes);
	if (rc == 0 && (fstat(fd, &st) < 0 || (st__identity_of(&st, &now), memcmp(&now, id, sizeof(now)) != 0) ||
			(int64_t)*bytes != id->size))
		rc = -ESTALE;
out:
	close(fd);
	return rc;
}

/* Hash a job whose entry is E_PENDING and settle the entry.  Called with
 * the lock held; drops it while reading. */
static void run_job_locked(struct st__hashpool *p, const char *path,
			   const struct sandtrace_identity *id)
{
	uint8_t digest[ST_SHA256_LEN];
	uint64_t bytes = 0;
	p->busy++;
	pthread_mutex_unlock(&p->lock);
	int64_t t0 = now_ns(), c0 = cpu_ns();
	int rc = hash_version(p, path, id, digest, &bytes);
	int64_t dt = now_ns() - t0, dc = cpu_ns() - c0;
	pthread_mutex_lock(&p->lock);
	p->busy--;
	struct entry *e;
	HASH_FIND(hh, p->cache, id, sizeof(*id), e);
	p->st.hash_ns += (uint64_t)dt;
	p->st.hash_cpu_ns += (uint64_t)dc;
	if (e != NULL) {
		if (rc == 0) {
			e->state = E_DONE;
			memcpy(e->digest, digest, sizeof(digest));
			p->st.hashed_files++;
			p->st.hashed_bytes += bytes;
		} else {
			e->state = E_FAILED;
			e->err = rc;
			p->st.failed++;
		}
	}
	pthread_cond_broadcast(&p->done);
}

static void *worker(void *arg)
{
	struct st__hashpool *p = arg;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (p->head == NULL && !p->stop)
			pthread_cond_wait(&p->work, &p->lock);
		if (p->head == NULL)
			break;
		struct job *j = p->head;
		p->head = j->next;
		if (p->head == NULL)
			p->tail = NULL;
		struct entry *e;
		HASH_FIND(hh, p->cache, &j->id, sizeof(j->id), e);
		/* a synchronous caller may have settled it meanwhile */
		if (e != NULL && e->state == E_PENDING)
			run_job_locked(p, j->path, &j->id);
		free(j);
		if (p->head == NULL && p->busy == 0)
			pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int st__hashpool_new(struct st__hashpool **out, unsigned nthreads)
{
	struct st__hashpool *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	/* fetched once: an implicit fetch per digest takes a global lock */
	if (st__sha256_unavailable() != NULL) {
		st__hashpool_free(p);
		return -ENOSYS;
	}
	p->md = evp.md_fetch(NULL, "SHA256", NULL);
	if (p->md == NULL) {
		st__hashpool_free(p);
		return -ENOSYS;
	}
	if (nthreads > 0) {
		p->threads = calloc(nthreads, sizeof(pthread_t));
		if (p->threads == NULL) {
			st__hashpool_free(p);
			return -ENOMEM;
		}
	}
	for (unsigned i = 0; i < nthreads; i++) {
		int rc = pthread_create(&p->threads[i], NULL, worker, p);
		if (rc != 0) {
			st__hashpool_free(p);
			return -rc;
		}
		p->nthreads++;
	}
	p->st.threads = p->nthreads;
	*out = p;
	return 0;
}

void st__hashpool_free(struct st__hashpool *p)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	free(p->threads);
	struct entry *e, *tmp;
	HASH_ITER(hh, p->cache, e, tmp)
	{
		HASH_DEL(p->cache, e);
		free(e);
	}
	while (p->head != NULL) {
		struct job *j = p->head;
		p->head = j->next;
		free(j);
	}
	if (p->md != NULL)
		evp.md_free(p->md);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* Find or add the entry of id (E_PENDING when new).  *fresh: it was added. */
static struct entry *entry_get_locked(struct st__hashpool *p, const struct sandtrace_identity *id,
				      bool *fresh)
{
	struct entry *e;
	*fresh = false;
	HASH_FIND(hh, p->cache, id, sizeof(*id), e);
	if (e != NULL)
		return e;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	e->id = *id;
	e->state = E_PENDING;
	HASH_ADD(hh, p->cache, id, sizeof(e->id), e);
	*fresh = true;
	return e;
}

static void count_hit_locked(struct st__hashpool *p, const struct entry *e)
{
	if (e->loaded)
		p->st.disk_hits++;
	else
		p->st.cache_hits++;
}

void st__hashpool_submit(struct st__hashpool *p, const char *path, size_t len,
			 const struct sandtrace_identity *id)
{
	struct job *j = malloc(sizeof(*j) + len + 1);
	if (j == NULL)
		return; /* the entry stays unknown: the manifest says "unhashed" */
	memcpy(j->path, path, len);
	j->path[len] = '\0';
	j->len = len;
	j->id = *id;
	j->next = NULL;
	pthread_mutex_lock(&p->lock);
	bool fresh;
	struct entry *e = entry_get_locked(p, id, &fresh);
	if (e == NULL || !fresh) {
		if (e != NULL && e->state != E_FAILED) /* done or on its way: not hashed again */
			count_hit_locked(p, e);
		pthread_mutex_unlock(&p->lock);
		free(j);
		return;
	}
	if (p->nthreads == 0) {
		run_job_locked(p, j->path, id);
		pthread_mutex_unlock(&p->lock);
		free(j);
		return;
	}
	if (p->tail != NULL)
		p->tail->next = j;
	else
		p->head = j;
	p->tail = j;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

int st__hashpool_get(struct st__hashpool *p, const char *path, size_t len,
		     const struct sandtrace_identity *id, uint8_t digest[ST_SHA256_LEN])
{
	char stackpath[PATH_MAX + 1];
	char *cpath = len < sizeof(stackpath) ? stackpath : malloc(len + 1);
	if (cpath == NULL)
		return -ENOMEM;
	memcpy(cpath, path, len);
	cpath[len] = '\0';
	int rc;
	pthread_mutex_lock(&p->lock);
	bool fresh;
	struct entry *e = entry_get_locked(p, id, &fresh);
	if (e == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if (fresh) {
		run_job_locked(p, cpath, id);
	} else if (e->state == E_DONE) {
		count_hit_locked(p, e);
	} else {
		while (e->state == E_PENDING) /* a worker is on it, or it is queued */
			pthread_cond_wait(&p->done, &p->lock);
	}
	rc = e->state == E_DONE ? 0 : e->state == E_FAILED ? e->err : -EAGAIN;
	if (rc == 0)
		memcpy(digest, e->digest, ST_SHA256_LEN);
out:
	pthread_mutex_unlock(&p->lock);
	if (cpath != stackpath)
		free(cpath);
	return rc;
}

int st__hashpool_peek(struct st__hashpool *p, const struct sandtrace_identity *id,
		      uint8_t digest[ST_SHA256_LEN])
{
	struct entry *e;
	int rc = 0;
	pthread_mutex_lock(&p->lock);
	HASH_FIND(hh, p->cache, id, sizeof(*id), e);
	if (e != NULL && e->state == E_DONE) {
		memcpy(digest, e->digest, ST_SHA256_LEN);
		rc = 1;
	} else if (e != NULL && e->state == E_FAILED) {
		rc = e->err;
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void st__hashpool_wait(struct st__hashpool *p)
{
	pthread_mutex_lock(&p->lock);
	while (p->nthreads > 0 && (p->head != NULL || p->busy > 0))
		pthread_cond_wait(&p->done, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

void st__hashpool_stats(struct st__hashpool *p, struct st__hash_stats *s)
{
	pthread_mutex_lock(&p->lock);
	*s = p->st;
	pthread_mutex_unlock(&p->lock);
}

/*
 * The cache file: a first line CACHE_MAGIC, then one digest a line,
 * "DEV INO SIZE MTIME_NS CTIME_NS SHA256" (decimal, hex).  Written only by
 * the daemon, but read defensively: a bad line stops the load there.
 */
int st__hashpool_load(struct st__hashpool *p, const char *file, char *err, size_t errlen)
{
	FILE *f = fopen(file, "re");
	if (f == NULL) {
		if (errno == ENOENT)
			return 0;
		int e = errno;
		snprintf(err, errlen, "%s: %s", file, strerror(e));
		return -e;
	}
	char line[256];
	unsigned long lineno = 0;
	int rc = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		size_t n = strlen(line);
		if (n == 0 || line[n - 1] != '\n') {
			snprintf(err, errlen, "%s:%lu: line too long or unterminated", file, lineno);
			rc = -EINVAL;
			break;
		}
		line[--n] = '\0';
		if (lineno == 1) {
			if (strcmp(line, CACHE_MAGIC) != 0) {
				snprintf(err, errlen, "%s:1: not a sandtrace hash cache", file);
				rc = -EINVAL;
				break;
			}
			continue;
		}
		unsigned long long dev, ino;
		long long size, mt, ct;
		char hex[80];
		int used = 0;
		struct entry tmp;
		if (sscanf(line, "%llu %llu %lld %lld %lld %79s%n", &dev, &ino, &size, &mt, &ct, hex,
			   &used) != 6 ||
		    (size_t)used != n || st__sha256_parse(hex, strlen(hex), tmp.digest) < 0) {
			snprintf(err, errlen, "%s:%lu: malformed entry", file, lineno);
			rc = -EINVAL;
			break;
		}
		struct sandtrace_identity id = {.dev = dev, .ino = ino, .size = size,
						.mtime_ns = mt, .ctime_ns = ct};
		pthread_mutex_lock(&p->lock);
		bool fresh;
		struct entry *e = entry_get_locked(p, &id, &fresh);
		if (e != NULL && fresh) {
			e->state = E_DONE;
			e->loaded = true;
			memcpy(e->digest, tmp.digest, ST_SHA256_LEN);
			p->st.loaded++;
		}
		pthread_mutex_unlock(&p->lock);
	}
	fclose(f);
	return rc;
}

static int mkdir_parents(char *path)
{
	for (char *s = strchr(path + 1, '/'); s != NULL; s = strchr(s + 1, '/')) {
		*s = '\0';
		int rc = mkdir(path, 0700);
		*s = '/';
		if (rc < 0 && errno != EEXIST)
			return -errno;
	}
	return 0;
}

int st__hashpool_save(struct st__hashpool *p, const char *file)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", file, (long)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int rc = mkdir_parents(tmp);
	if (rc < 0)
		return rc;
	FILE *f = fopen(tmp, "we");
	if (f == NULL)
		return -errno;
	fprintf(f, "%s\n", CACHE_MAGIC);
	pthread_mutex_lock(&p->lock);
	struct entry *e, *t;
	HASH_ITER(hh, p->cache, e, t)
	{
		if (e->state != E_DONE)
			continue;
		char hex[2 * ST_SHA256_LEN + 1];
		st__sha256_hex(e->digest, hex);
		fprintf(f, "%llu %llu %lld %lld %lld %s\n", (unsigned long long)e->id.dev,
			(unsigned long long)e->id.ino, (long long)e->id.size,
			(long long)e->id.mtime_ns, (long long)e->id.ctime_ns, hex);
	}
	pthread_mutex_unlock(&p->lock);
	if (ferror(f) | (fclose(f) != 0)) {
		rc = -EIO;
		unlink(tmp);
		return rc;
	}
	if (rename(tmp, file) < 0) {
		rc = -errno;
		unlink(tmp);
	}
	return rc;
}
