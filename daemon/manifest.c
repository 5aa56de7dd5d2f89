/* daemon/manifest.c - input manifests: file format, diff, and the daemon's --manifest/--verify state. */
#include <bsd/string.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>

#include <sandtrace/common.h>
#include <sandtrace/ctrie.h>

#include "escape.h"
#include "manifest.h"
#include "report.h"
#include "util.h"

/* ---- the file format ---- */

static const struct {
	const char *name;
	unsigned bit;
} flag_names[] = {
    {"rw", ST_MF_RW}, {"wr", ST_MF_WR}, {"versions", ST_MF_VERSIONS}, {"unhashed", ST_MF_UNHASHED}};

int st__manifest_add(struct st__manifest *m, const struct st__mf_entry *e)
{
	if (m->n == m->cap) {
		size_t ncap = m->cap ? 2 * m->cap : 64;
		struct st__mf_entry *nv = realloc(m->v, ncap * sizeof(*nv));
		if (nv == NULL)
			return -ENOMEM;
		m->v = nv;
		m->cap = ncap;
	}
	struct st__mf_entry *d = &m->v[m->n];
	*d = *e;
	d->path = malloc(e->path_len + 1);
	if (d->path == NULL)
		return -ENOMEM;
	memcpy(d->path, e->path, e->path_len);
	d->path[e->path_len] = '\0';
	m->n++;
	return 0;
}

void st__manifest_free(struct st__manifest *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* A decimal field: unsigned (neg false) or signed. */
static bool parse_num(const char *s, size_t len, bool neg, int64_t *out)
{
	size_t i = 0;
	bool minus = false;
	if (neg && len > 0 && s[0] == '-') {
		minus = true;
		i = 1;
	}
	if (i == len || len - i > 19)
		return false;
	uint64_t v = 0;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (!neg && len == 20)
		return false;
	if (v > (uint64_t)INT64_MAX)
		return false;
	*out = minus ? -(int64_t)v : (int64_t)v;
	return true;
}

static bool is_dash(const char *s, size_t len)
{
	return len == 1 && s[0] == '-';
}

/* Parse one entry line (without its newline) into e; returns NULL or the error message. */
static const char *parse_line(const char *s, size_t len, struct st__mf_entry *e)
{
	const char *f[9];
	size_t fl[9];
	size_t k = 0, start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || s[i] == '\t') {
			if (k == 9)
				return "too many fields (expected 9, tab-separated)";
			f[k] = s + start;
			fl[k++] = i - start;
			start = i + 1;
		}
	}
	if (k != 9)
		return "too few fields (expected 9, tab-separated)";
	memset(e, 0, sizeof(*e));
	if (fl[0] != 1 || (f[0][0] != 'R' && f[0][0] != 'X' && f[0][0] != 'W'))
		return "KIND must be R, X or W";
	e->kind = f[0][0];
	/* flags */
	if (!is_dash(f[7], fl[7])) {
		size_t a = 0;
		while (a <= fl[7]) {
			size_t b = a;
			while (b < fl[7] && f[7][b] != ',')
				b++;
			unsigned bit = 0;
			for (size_t j = 0; j < sizeof(flag_names) / sizeof(flag_names[0]); j++)
				if (strlen(flag_names[j].name) == b - a &&
				    memcmp(flag_names[j].name, f[7] + a, b - a) == 0)
					bit = flag_names[j].bit;
			if (bit == 0)
				return "unknown flag (expected rw, wr, versions, unhashed or -)";
			e->flags |= bit;
			a = b + 1;
		}
	}
	if (e->kind == 'W') {
		for (int i = 1; i <= 6; i++)
			if (!is_dash(f[i], fl[i]))
				return "an output (W) has \"-\" in fields 2 to 7";
	} else {
		int64_t v[5];
		for (int i = 0; i < 5; i++)
			if (!parse_num(f[2 + i], fl[2 + i], i == 1 || i == 4, &v[i]))
				return i == 0   ? "SIZE is not a decimal number"
				       : i == 1 ? "MTIME_NS is not a decimal number"
				       : i == 2 ? "DEV is not a decimal number"
				       : i == 3 ? "INO is not a decimal number"
						: "CTIME_NS is not a decimal number";
		e->has_id = true;
		e->id.size = v[0];
		e->id.mtime_ns = v[1];
		e->id.dev = (uint64_t)v[2];
		e->id.ino = (uint64_t)v[3];
		e->id.ctime_ns = v[4];
		if (is_dash(f[1], fl[1])) {
			if (!(e->flags & (ST_MF_WR | ST_MF_UNHASHED)))
				return "SHA256 is \"-\" but the flags say neither wr nor unhashed";
		} else if (st__sha256_parse(f[1], fl[1], e->digest) < 0) {
			return "SHA256 is not 64 hex digits";
		} else {
			for (size_t i = 0; i < fl[1]; i++)
				if (f[1][i] >= 'A' && f[1][i] <= 'F')
					return "SHA256 must be lower-case hex";
			e->has_digest = true;
		}
	}
	if (fl[8] == 0)
		return "empty PATH";
	char *p;
	size_t plen;
	int rc = st__unescape(f[8], fl[8], &p, &plen);
	if (rc == -ENOMEM)
		return "out of memory";
	if (rc < 0)
		return "PATH has a malformed \\x escape";
	if (plen == 0 || p[0] != '/') {
		free(p);
		return "PATH is not absolute";
	}
	e->path = p;
	e->path_len = plen;
	return NULL;
}

int st__manifest_parse(const char *buf, size_t len, const char *name, struct st__manifest *m,
		       char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	unsigned long lineno = 0;
	size_t at = 0;
	while (at < len) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - buf) : len;
		const char *s = buf + at;
		size_t l = end - at;
		lineno++;
		at = nl ? end + 1 : len;
		if (lineno == 1) {
			if (l != strlen(ST_MF_MAGIC) || memcmp(s, ST_MF_MAGIC, l) != 0) {
				snprintf(err, errlen, "%s:1: not a sandtrace manifest (expected \"%s\")",
					 name, ST_MF_MAGIC);
				goto bad;
			}
			continue;
		}
		if (!nl) {
			snprintf(err, errlen, "%s:%lu: last line has no newline (truncated file?)",
				 name, lineno);
			goto bad;
		}
		if (l == 0 || s[0] == '#')
			continue;
		if (memchr(s, 0, l) != NULL) { /* no field, no path holds one */
			snprintf(err, errlen, "%s:%lu: a NUL byte in the line", name, lineno);
			goto bad;
		}
		struct st__mf_entry e;
		const char *why = parse_line(s, l, &e);
		if (why != NULL) {
			snprintf(err, errlen, "%s:%lu: %s", name, lineno, why);
			goto bad;
		}
		int rc = st__manifest_add(m, &e);
		free(e.path);
		if (rc < 0) {
			snprintf(err, errlen, "%s: out of memory", name);
			st__manifest_free(m);
			return rc;
		}
	}
	if (lineno == 0) {
		snprintf(err, errlen, "%s:1: empty file (expected \"%s\")", name, ST_MF_MAGIC);
		goto bad;
	}
	return 0;
bad:
	st__manifest_free(m);
	return -EINVAL;
}

int st__manifest_read(const char *file, struct st__manifest *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	FILE *f = fopen(file, "re");
	if (f == NULL) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", file, strerror(e));
		return -e;
	}
	char *buf = NULL;
	size_t len = 0, cap = 0;
	errno = 0;
	for (;;) {
		if (cap - len < 65536) {
			char *nb = realloc(buf, cap + (1u << 20));
			if (nb == NULL) {
				free(buf);
				fclose(f);
				snprintf(err, errlen, "%s: out of memory", file);
				return -ENOMEM;
			}
			buf = nb;
			cap += 1u << 20;
		}
		size_t r = fread(buf + len, 1, cap - len, f);
		len += r;
		if (r == 0)
			break;
		/* what does not begin as a manifest is not read to its end (a
		 * device that never ends, /dev/zero): the parse says why */
		size_t ml = strlen(ST_MF_MAGIC);
		if (len >= ml + 1 && (memcmp(buf, ST_MF_MAGIC, ml) != 0 || buf[ml] != '\n'))
			break;
	}
	/* fread's own error (a directory: EISDIR), not a made-up EIO */
	int e = ferror(f) ? (errno != 0 ? errno : EIO) : 0;
	fclose(f);
	if (e) {
		free(buf);
		snprintf(err, errlen, "%s: %s", file, strerror(e));
		return -e;
	}
	int rc = st__manifest_parse(buf, len, file, m, err, errlen);
	free(buf);
	return rc;
}

static void write_flags(FILE *f, unsigned flags)
{
	if (flags == 0) {
		fputc('-', f);
		return;
	}
	bool first = true;
	for (size_t j = 0; j < sizeof(flag_names) / sizeof(flag_names[0]); j++) {
		if (flags & flag_names[j].bit) {
			fprintf(f, "%s%s", first ? "" : ",", flag_names[j].name);
			first = false;
		}
	}
}

int st__manifest_write(FILE *f, const struct st__manifest *m)
{
	fprintf(f, "%s\n# KIND\tSHA256\tSIZE\tMTIME_NS\tDEV\tINO\tCTIME_NS\tFLAGS\tPATH\n",
		ST_MF_MAGIC);
	for (size_t i = 0; i < m->n; i++) {
		const struct st__mf_entry *e = &m->v[i];
		char *p;
		if (st__escape(e->path, e->path_len, &p, NULL) < 0)
			return -ENOMEM;
		if (e->kind == 'W') {
			fprintf(f, "W\t-\t-\t-\t-\t-\t-\t");
		} else {
			char hex[2 * ST_SHA256_LEN + 1] = "-";
			if (e->has_digest)
				st__sha256_hex(e->digest, hex);
			fprintf(f, "%c\t%s\t%lld\t%lld\t%llu\t%llu\t%lld\t", e->kind, hex,
				(long long)e->id.size, (long long)e->id.mtime_ns,
				(unsigned long long)e->id.dev, (unsigned long long)e->id.ino,
				(long long)e->id.ctime_ns);
		}
		write_flags(f, e->flags);
		fprintf(f, "\t%s\n", p);
		free(p);
	}
	return ferror(f) ? -EIO : 0;
}

/* ---- diff ---- */

struct dpath {
	UT_hash_handle hh;
	const char *path;
	size_t len;
	char *digests; /* the digests of its versions, comma-separated, in manifest order */
	bool seen;     /* also in the other manifest */
};

static int dpath_index(const struct st__manifest *m, struct dpath **set, struct dpath ***order,
		       size_t *n)
{
	*set = NULL;
	*order = calloc(m->n + 1, sizeof(**order));
	*n = 0;
	if (*order == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		const struct st__mf_entry *e = &m->v[i];
		if (e->kind == 'W')
			continue;
		char hex[2 * ST_SHA256_LEN + 1] = "-";
		if (e->has_digest)
			st__sha256_hex(e->digest, hex);
		struct dpath *d;
		HASH_FIND(hh, *set, e->path, e->path_len, d);
		if (d == NULL) {
			d = calloc(1, sizeof(*d));
			if (d == NULL || (d->digests = strdup(hex)) == NULL) {
				free(d);
				return -ENOMEM;
			}
			d->path = e->path;
			d->len = e->path_len;
			HASH_ADD_KEYPTR(hh, *set, d->path, d->len, d);
			(*order)[(*n)++] = d;
		} else {
			size_t ol = strlen(d->digests);
			char *nd = realloc(d->digests, ol + strlen(hex) + 2);
			if (nd == NULL)
				return -ENOMEM;
			nd[ol] = ',';
			strcpy(nd + ol + 1, hex);
			d->digests = nd;
		}
	}
	return 0;
}

static void dpath_free(struct dpath **set, struct dpath **order)
{
	struct dpath *d, *t;
	HASH_ITER(hh, *set, d, t)
	{
		HASH_DEL(*set, d);
		free(d->digests);
		free(d);
	}
	free(order);
}

static void put_path(FILE *out, const char *p, size_t len)
{
	char *e;
	if (st__escape(p, len, &e, NULL) == 0) {
		fputs(e, out);
		free(e);
	}
}

size_t st__manifest_diff(const struct st__manifest *a, const struct st__manifest *b, FILE *out)
{
	struct dpath *sa, *sb, **oa, **ob;
	size_t na, nb, added = 0, removed = 0, changed = 0;
	if (dpath_index(a, &sa, &oa, &na) < 0 || dpath_index(b, &sb, &ob, &nb) < 0) {
		fprintf(out, "# out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < na; i++) {
		struct dpath *x = oa[i], *y;
		HASH_FIND(hh, sb, x->path, x->len, y);
		if (y == NULL) {
			fputs("removed\t", out);
			put_path(out, x->path, x->len);
			fputc('\n', out);
			removed++;
			continue;
		}
		y->seen = true;
		if (strcmp(x->digests, y->digests) != 0) {
			fputs("changed\t", out);
			put_path(out, x->path, x->len);
			fprintf(out, "\t%s\t%s\n", x->digests, y->digests);
			changed++;
		}
	}
	for (size_t i = 0; i < nb; i++) {
		if (ob[i]->seen)
			continue;
		fputs("added\t", out);
		put_path(out, ob[i]->path, ob[i]->len);
		fputc('\n', out);
		added++;
	}
	fprintf(out, "# inputs: %zu added, %zu removed, %zu changed (%zu in A, %zu in B)\n", added,
		removed, changed, na, nb);
	dpath_free(&sa, oa);
	dpath_free(&sb, ob);
	return added + removed + changed;
}

int st__mf_cmd_diff(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: sandtrace diff A B\n"
		       "Compares the inputs of two manifests (sandtrace run --manifest): lines\n"
		       "added/removed/changed<TAB>PATH[<TAB>OLD<TAB>NEW]; exit 0 when they are the "
		       "same, 1 when not.\n");
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "sandtrace: diff: need two manifests (sandtrace diff A B)\n");
		return SANDTRACE_EXIT_ERROR;
	}
	struct st__manifest a, b;
	char err[512];
	if (st__manifest_read(argv[1], &a, err, sizeof(err)) < 0) {
		fprintf(stderr, "sandtrace: %s\n", err);
		return SANDTRACE_EXIT_ERROR;
	}
	if (st__manifest_read(argv[2], &b, err, sizeof(err)) < 0) {
		fprintf(stderr, "sandtrace: %s\n", err);
		st__manifest_free(&a);
		return SANDTRACE_EXIT_ERROR;
	}
	size_t n = st__manifest_diff(&a, &b, stdout);
	st__manifest_free(&a);
	st__manifest_free(&b);
	if (fflush(stdout) != 0)
		return SANDTRACE_EXIT_ERROR;
	return n ? 1 : 0;
}

/* ---- options ---- */

int st__mf_option(struct st__mf_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case ST__MF_O_MANIFEST:
		o->manifest = arg;
		return 1;
	case ST__MF_O_VERIFY:
		o->verify = arg;
		return 1;
	case ST__MF_O_HASH_CACHE:
		o->hash_cache = arg;
		return 1;
	case ST__MF_O_HASH_THREADS: {
		char *end;
		long v = strtol(arg, &end, 10);
		if (*arg == '\0' || *end != '\0' || v < 0 || v > 64) {
			warnx("--hash-threads %s: expected 0 (the default) to 64", arg);
			return -1;
		}
		o->threads = (unsigned)v;
		return 1;
	}
	default:
		return 0;
	}
}

unsigned st__mf_opts_flags(const struct st__mf_opts *o)
{
	unsigned f = 0;
	if (o->manifest != NULL)
		f |= SANDTRACE_F_MANIFEST | SANDTRACE_F_IDENTITY;
	if (o->verify != NULL)
		f |= SANDTRACE_F_VERIFY | SANDTRACE_F_IDENTITY;
	return f;
}

/* path made absolute against the cwd (leaked: the CLI execs right after). */
static const char *absolute(const char *path)
{
	char cwd[PATH_MAX], *out;
	if (path[0] == '/' || strcmp(path, "none") == 0 || getcwd(cwd, sizeof(cwd)) == NULL)
		return path;
	if (asprintf(&out, "%s/%s", cwd, path) < 0)
		return path;
	return out;
}

size_t st__mf_daemon_args(const struct st__mf_opts *o, const char **argv, size_t n)
{
	if (o->manifest) {
		argv[n++] = "--manifest";
		argv[n++] = absolute(o->manifest);
	}
	if (o->verify) {
		argv[n++] = "--verify";
		argv[n++] = absolute(o->verify);
	}
	if (o->hash_cache) {
		argv[n++] = "--hash-cache";
		argv[n++] = absolute(o->hash_cache);
	}
	if (o->threads) {
		static char buf[16];
		snprintf(buf, sizeof(buf), "%u", o->threads);
		argv[n++] = "--hash-threads";
		argv[n++] = buf;
	}
	return n;
}

/* ---- the daemon's side ---- */

struct version {
	struct sandtrace_identity id;
	bool hashing; /* submitted to the pool (not a generated file) */
};

struct input {
	UT_hash_handle hh;
	char *path;
	size_t len;
	char kind; /* 'R', or 'X' once executed */
	uint64_t first;
	struct version *v;
	size_t nv, capv;
};

struct output {
	UT_hash_handle hh;
	char *path;
	size_t len;
	uint64_t first;
};

/* The --verify manifest's digests of one path. */
struct listed {
	UT_hash_handle hh;
	const char *path; /* into ref */
	size_t len;
	size_t *idx; /* entries of ref */
	size_t n;
};

/* A (path, identity) already answered under --verify. */
struct checked {
	UT_hash_handle hh;
	bool ok;
	size_t len;
	uint8_t key[]; /* path bytes + identity */
};

struct st__mf {
	struct st__mf_opts o;
	char cache_path[PATH_MAX]; /* "" = none */
	char manifest_path[PATH_MAX]; /* --manifest, a symlink resolved (o.manifest points here) */
	unsigned run_flags;
	struct st__hashpool *pool;
	struct st__report *rep;
	struct st__summary *sum;
	uint64_t *seq;
	uint64_t order;
	struct input *inputs;
	struct input **in_order;
	size_t nin, capin;
	struct output *outputs;
	struct output **out_order;
	size_t nout, capout;
	struct st__manifest ref; /* --verify */
	struct listed *listed;
	struct checked *checked;
	uint64_t verify_requests, verify_identity_ok, verify_hashed, verify_mismatches;
	uint64_t skipped_generated;
	bool finished;
	char cache_err[512];
};

static bool excluded(const char *p, size_t len)
{
	/* kernel views and devices: not build inputs (and /proc files are regular) */
	static const char *const pre[] = {"/proc/", "/sys/", "/dev/"};
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		size_t l = strlen(pre[i]);
		if (len >= l && memcmp(p, pre[i], l) == 0)
			return true;
	}
	return false;
}

/*
 * Can the manifest be written at the end (a temporary file beside it, then
 * rename)?  Checked when the run starts, so that a path that cannot hold it
 * stops the run before the build rather than losing the manifest after it.
 * A symlink is followed (the rename replaces the file it names, not the
 * link: /dev/stdout must never be replaced): the path to write goes to out
 * (PATH_MAX bytes).  Returns 0, or -errno with "--manifest FILE: message"
 * in err.
 */
static int manifest_writable(const char *file, char *out, char *err, size_t errlen)
{
	struct stat st;
	char tmp[PATH_MAX];
	int rc = 0;
	if (lstat(file, &st) == 0 && S_ISLNK(st.st_mode)) {
		char *real = realpath(file, NULL);
		if (real == NULL)
			rc = -errno;
		else if (strlcpy(out, real, PATH_MAX) >= PATH_MAX)
			rc = -ENAMETOOLONG;
		free(real);
	} else if (strlcpy(out, file, PATH_MAX) >= PATH_MAX) {
		rc = -ENAMETOOLONG;
	}
	if (rc == 0 && stat(out, &st) == 0 && !S_ISREG(st.st_mode))
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	else if (rc == 0 &&
		 snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", out, (long)getpid()) >= (int)sizeof(tmp))
		rc = -ENAMETOOLONG;
	if (rc == 0) {
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			rc = -errno;
		else {
			close(fd);
			unlink(tmp);
		}
	}
	if (rc < 0)
		snprintf(err, errlen, "--manifest %s: %s", file,
			 rc == -EINVAL ? "not a regular file" : strerror(-rc));
	return rc;
}

int st__mf_new(struct st__mf **out, const struct st__mf_opts *o, unsigned run_flags,
	       struct st__report *rep, struct st__summary *sum, uint64_t *seq, char *err,
	       size_t errlen)
{
	*out = NULL;
	if (o->manifest == NULL && o->verify == NULL)
		return 0;
	struct st__mf *m = calloc(1, sizeof(*m));
	if (m == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->o = *o;
	if (o->manifest != NULL) {
		int rc = manifest_writable(o->manifest, m->manifest_path, err, errlen);
		if (rc < 0) {
			free(m);
			return rc;
		}
		m->o.manifest = m->manifest_path;
	}
	m->run_flags = run_flags;
	m->rep = rep;
	m->sum = sum;
	m->seq = seq;
	if (o->verify != NULL) {
		int rc = st__manifest_read(o->verify, &m->ref, err, errlen);
		if (rc < 0) {
			free(m);
			return rc;
		}
		for (size_t i = 0; i < m->ref.n; i++) {
			struct st__mf_entry *e = &m->ref.v[i];
			if (e->kind == 'W' || !e->has_digest)
				continue;
			struct listed *l;
			HASH_FIND(hh, m->listed, e->path, e->path_len, l);
			if (l == NULL) {
				l = calloc(1, sizeof(*l));
				if (l == NULL)
					goto nomem;
				l->path = e->path;
				l->len = e->path_len;
				HASH_ADD_KEYPTR(hh, m->listed, l->path, l->len, l);
			}
			size_t *ni = realloc(l->idx, (l->n + 1) * sizeof(size_t));
			if (ni == NULL)
				goto nomem;
			l->idx = ni;
			l->idx[l->n++] = i;
		}
	}
	/* the persistent cache: --hash-cache, else $XDG_CACHE_HOME or ~/.cache */
	const char *hc = o->hash_cache;
	if (hc == NULL) {
		const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
		if (x != NULL && x[0] == '/')
			snprintf(m->cache_path, sizeof(m->cache_path), "%s/sandtrace/hashes", x);
		else if (home != NULL && home[0] == '/')
			snprintf(m->cache_path, sizeof(m->cache_path), "%s/.cache/sandtrace/hashes",
				 home);
	} else if (strcmp(hc, "none") != 0) {
		snprintf(m->cache_path, sizeof(m->cache_path), "%s", hc);
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned threads = o->threads ? o->threads : ncpu > 4 ? 4 : ncpu > 1 ? (unsigned)ncpu : 1;
	int rc = st__hashpool_new(&m->pool, threads);
	if (rc < 0) {
		const char *why = rc == -ENOSYS ? st__sha256_unavailable() : NULL;
		snprintf(err, errlen, "starting the hash workers: %s", why ? why : strerror(-rc));
		st__mf_free(m);
		return rc;
	}
	if (m->cache_path[0] != '\0' &&
	    st__hashpool_load(m->pool, m->cache_path, m->cache_err, sizeof(m->cache_err)) < 0)
		st__log("hash cache: %s (ignored from there on)", m->cache_err);
	*out = m;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	st__mf_free(m);
	return -ENOMEM;
}

int st__mf_publish(struct st__mf *m, struct sandtrace_arena *a)
{
	if (m == NULL)
		return 0;
	struct listed *l, *t;
	HASH_ITER(hh, m->listed, l, t)
	{
		int rc = sandtrace_ctrie_insert(a, SANDTRACE_KEY_LISTED, l->path, l->len, 1, NULL);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static struct output *output_of(struct st__mf *m, const char *p, size_t len)
{
	struct output *o;
	HASH_FIND(hh, m->outputs, p, len, o);
	return o;
}

static void note_write(struct st__mf *m, const char *p, size_t len)
{
	if (excluded(p, len) || output_of(m, p, len) != NULL)
		return;
	struct output *o = calloc(1, sizeof(*o));
	if (o == NULL || (o->path = malloc(len + 1)) == NULL) {
		free(o);
		return;
	}
	if (m->nout == m->capout) {
		size_t nc = m->capout ? 2 * m->capout : 256;
		struct output **no = realloc(m->out_order, nc * sizeof(*no));
		if (no == NULL) {
			free(o->path);
			free(o);
			return;
		}
		m->out_order = no;
		m->capout = nc;
	}
	memcpy(o->path, p, len);
	o->path[len] = '\0';
	o->len = len;
	o->first = ++m->order;
	HASH_ADD_KEYPTR(hh, m->outputs, o->path, o->len, o);
	m->out_order[m->nout++] = o;
}

static void note_read(struct st__mf *m, unsigned kind, const char *p, size_t len,
		      const struct sandtrace_identity *id)
{
	struct input *in;
	HASH_FIND(hh, m->inputs, p, len, in);
	if (in == NULL) {
		in = calloc(1, sizeof(*in));
		if (in == NULL || (in->path = malloc(len + 1)) == NULL) {
			free(in);
			return;
		}
		if (m->nin == m->capin) {
			size_t nc = m->capin ? 2 * m->capin : 256;
			struct input **ni = realloc(m->in_order, nc * sizeof(*ni));
			if (ni == NULL) {
				free(in->path);
				free(in);
				return;
			}
			m->in_order = ni;
			m->capin = nc;
		}
		memcpy(in->path, p, len);
		in->path[len] = '\0';
		in->len = len;
		in->kind = 'R';
		in->first = ++m->order;
		HASH_ADD_KEYPTR(hh, m->inputs, in->path, in->len, in);
		m->in_order[m->nin++] = in;
	}
	if (kind == SANDTRACE_KIND_EXEC)
		in->kind = 'X';
	for (size_t i = 0; i < in->nv; i++)
		if (memcmp(&in->v[i].id, id, sizeof(*id)) == 0)
			return;
	if (in->nv == in->capv) {
		size_t nc = in->capv ? 2 * in->capv : 1;
		struct version *nv = realloc(in->v, nc * sizeof(*nv));
		if (nv == NULL)
			return;
		in->v = nv;
		in->capv = nc;
	}
	struct version *v = &in->v[in->nv++];
	v->id = *id;
	/* a file the build wrote before reading it is its own product: not hashed */
	v->hashing = output_of(m, p, len) == NULL;
	if (v->hashing)
		st__hashpool_submit(m->pool, in->path, len, id);
	else
		m->skipped_generated++;
}

void st__mf_note(struct st__mf *m, const struct sandtrace_access_view *v, int32_t pid)
{
	(void)pid;
	if (m == NULL || m->o.manifest == NULL || (v->a.flags & SANDTRACE_AF_DENIED) ||
	    v->a.err != 0)
		return;
	if (v->a.kind == SANDTRACE_KIND_WRITE) {
		note_write(m, v->path, v->a.path_len);
		if (v->path2 != NULL)
			note_write(m, v->path2, v->a.path2_len);
		return;
	}
	if (v->a.kind != SANDTRACE_KIND_READ && v->a.kind != SANDTRACE_KIND_EXEC)
		return;
	if (excluded(v->path, v->a.path_len) || v->a.path_len >= PATH_MAX)
		return;
	struct sandtrace_identity id = v->id;
	if (!(v->a.flags & SANDTRACE_AF_IDENTITY)) {
		/* a record without identity (LD_AUDIT, a non-regular file): look ourselves */
		char p[PATH_MAX];
		struct stat st;
		memcpy(p, v->path, v->a.path_len);
		p[v->a.path_len] = '\0';
		if (stat(p, &st) < 0 || !S_ISREG(st.st_mode))
			return;
		st__identity_of(&st, &id);
	}
	note_read(m, v->a.kind, v->path, v->a.path_len, &id);
}

static void emit_mismatch(struct st__mf *m, const struct sandtrace_access_view *v, int32_t pid,
			  const struct listed *l, const uint8_t *actual, int hash_err)
{
	char k[2] = {SANDTRACE_KIND_LETTERS[v->a.kind], 0};
	char hex[2 * ST_SHA256_LEN + 1];
	json_t *o = json_object();
	if (o == NULL)
		return;
	json_object_set_new(o, "type", json_string("violation"));
	json_object_set_new(o, "seq", json_integer((json_int_t)++*m->seq));
	json_object_set_new(o, "kind", json_string(k));
	json_object_set_new(o, "path", st__json_bytes(v->path, v->a.path_len));
	json_object_set_new(o, "pid", json_integer(pid));
	json_object_set_new(o, "class", json_string("integrity"));
	json_object_set_new(o, "rule", st__json_bytes(m->o.verify, strlen(m->o.verify)));
	st__sha256_hex(m->ref.v[l->idx[0]].digest, hex);
	json_object_set_new(o, "expected", json_string(hex));
	if (actual != NULL) {
		st__sha256_hex(actual, hex);
		json_object_set_new(o, "actual", json_string(hex));
	} else {
		json_object_set_new(o, "actual", json_null());
		json_object_set_new(o, "why", json_string(strerror(-hash_err)));
	}
	json_object_set_new(o, "size", json_integer(v->id.size));
	/* hidden: the sender refuses the version (a fenced run's open, exec or
	 * load); a file libc mapped or a database it read is used */
	json_object_set_new(o, "hidden", json_boolean((m->run_flags & SANDTRACE_F_FENCED) != 0 &&
						      (v->a.flags & SANDTRACE_AF_REFUSES) != 0));
	st__report_emit(m->rep, o);
	m->sum->violations++;
}

void st__mf_verify(struct st__mf *m, const struct sandtrace_access_view *v, int32_t pid,
		   struct sandtrace_verdict *vd)
{
	memset(vd, 0, sizeof(*vd));
	vd->action = SANDTRACE_ALLOW;
	if (m == NULL || m->o.verify == NULL)
		return;
	m->verify_requests++;
	struct listed *l;
	HASH_FIND(hh, m->listed, v->path, v->a.path_len, l);
	if (l == NULL)
		return;
	/* answered before (another spelling, a process without the arena)? */
	size_t klen = v->a.path_len + sizeof(v->id);
	struct checked *c;
	uint8_t stackkey[PATH_MAX + sizeof(v->id)];
	uint8_t *key = klen <= sizeof(stackkey) ? stackkey : malloc(klen);
	if (key == NULL)
		return;
	memcpy(key, v->path, v->a.path_len);
	memcpy(key + v->a.path_len, &v->id, sizeof(v->id));
	HASH_FIND(hh, m->checked, key, klen, c);
	bool ok = false;
	if (c != NULL) {
		ok = c->ok;
		goto out;
	}
	/* an unchanged file costs one identity comparison */
	for (size_t i = 0; i < l->n && !ok; i++) {
		const struct st__mf_entry *e = &m->ref.v[l->idx[i]];
		if (e->has_id && memcmp(&e->id, &v->id, sizeof(v->id)) == 0)
			ok = true;
	}
	if (ok) {
		m->verify_identity_ok++;
	} else {
		uint8_t d[ST_SHA256_LEN];
		int rc = st__hashpool_get(m->pool, v->path, v->a.path_len, &v->id, d);
		m->verify_hashed++;
		for (size_t i = 0; rc == 0 && i < l->n && !ok; i++)
			ok = memcmp(m->ref.v[l->idx[i]].digest, d, ST_SHA256_LEN) == 0;
		if (!ok) {
			m->verify_mismatches++;
			emit_mismatch(m, v, pid, l, rc == 0 ? d : NULL, rc);
		}
	}
	c = malloc(sizeof(*c) + klen);
	if (c != NULL) {
		c->ok = ok;
		c->len = klen;
		memcpy(c->key, key, klen);
		HASH_ADD(hh, m->checked, key, klen, c);
	}
out:
	if (key != stackkey)
		free(key);
	if (!ok) {
		vd->action = SANDTRACE_DENY;
		vd->err = EACCES;
	}
}

int st__mf_finish(struct st__mf *m)
{
	if (m == NULL || m->finished)
		return 0;
	m->finished = true;
	int rc = 0;
	st__hashpool_wait(m->pool);
	size_t nin_lines = 0;
	if (m->o.manifest != NULL) {
		struct st__manifest out = {0};
		for (size_t i = 0; i < m->nin && rc == 0; i++) {
			struct input *in = m->in_order[i];
			struct output *o = output_of(m, in->path, in->len);
			unsigned flags = 0;
			if (o != NULL)
				flags |= o->first < in->first ? ST_MF_WR : ST_MF_RW;
			if (in->nv > 1)
				flags |= ST_MF_VERSIONS;
			for (size_t j = 0; j < in->nv && rc == 0; j++) {
				struct st__mf_entry e = {.kind = in->kind, .flags = flags,
							 .has_id = true, .id = in->v[j].id,
							 .path = in->path, .path_len = in->len};
				int got = st__hashpool_peek(m->pool, &in->v[j].id, e.digest);
				e.has_digest = got == 1;
				if (!e.has_digest && !(flags & ST_MF_WR))
					e.flags |= ST_MF_UNHASHED;
				rc = st__manifest_add(&out, &e);
				nin_lines++;
			}
		}
		for (size_t i = 0; i < m->nout && rc == 0; i++) {
			struct output *o = m->out_order[i];
			struct input *in;
			HASH_FIND(hh, m->inputs, o->path, o->len, in);
			struct st__mf_entry e = {.kind = 'W', .path = o->path, .path_len = o->len};
			if (in != NULL)
				e.flags = o->first < in->first ? ST_MF_WR : ST_MF_RW;
			rc = st__manifest_add(&out, &e);
		}
		char tmp[PATH_MAX];
		snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", m->o.manifest, (long)getpid());
		FILE *f = rc == 0 ? fopen(tmp, "we") : NULL;
		if (rc == 0 && f == NULL)
			rc = -errno;
		if (f != NULL) {
			rc = st__manifest_write(f, &out);
			if (fclose(f) != 0 && rc == 0)
				rc = -errno;
			if (rc == 0 && rename(tmp, m->o.manifest) < 0)
				rc = -errno;
			if (rc < 0)
				unlink(tmp);
		}
		st__manifest_free(&out);
		if (rc < 0)
			st__summary_reason(m->sum, "manifest %s: %s", m->o.manifest, strerror(-rc));
	}
	if (m->cache_path[0] != '\0') {
		int crc = st__hashpool_save(m->pool, m->cache_path);
		if (crc < 0)
			st__log("hash cache %s: %s", m->cache_path, strerror(-crc));
	}
	struct st__hash_stats hs;
	st__hashpool_stats(m->pool, &hs);
	json_t *o = json_object();
	if (o != NULL) {
		json_object_set_new(o, "type", json_string("manifest"));
		if (m->o.manifest)
			json_object_set_new(o, "manifest",
					    st__json_bytes(m->o.manifest, strlen(m->o.manifest)));
		if (m->o.verify)
			json_object_set_new(o, "verify",
					    st__json_bytes(m->o.verify, strlen(m->o.verify)));
		json_object_set_new(o, "inputs", json_integer((json_int_t)m->nin));
		json_object_set_new(o, "input_versions", json_integer((json_int_t)nin_lines));
		json_object_set_new(o, "outputs", json_integer((json_int_t)m->nout));
		json_object_set_new(o, "generated_inputs",
				    json_integer((json_int_t)m->skipped_generated));
		json_object_set_new(o, "hash_threads", json_integer(hs.threads));
		json_object_set_new(o, "hash_cache",
				    m->cache_path[0] ? st__json_bytes(m->cache_path,
								     strlen(m->cache_path))
						     : json_null());
		json_object_set_new(o, "hash_cache_loaded", json_integer((json_int_t)hs.loaded));
		json_object_set_new(o, "verify_requests",
				    json_integer((json_int_t)m->verify_requests));
		json_object_set_new(o, "verify_identity_ok",
				    json_integer((json_int_t)m->verify_identity_ok));
		json_object_set_new(o, "verify_hashed", json_integer((json_int_t)m->verify_hashed));
		json_object_set_new(o, "verify_mismatches",
				    json_integer((json_int_t)m->verify_mismatches));
		st__report_emit(m->rep, o);
	}
	return rc;
}

json_t *st__mf_summary(struct st__mf *m, json_t *s)
{
	if (m == NULL || s == NULL)
		return s;
	struct st__hash_stats hs;
	st__hashpool_stats(m->pool, &hs);
	json_object_set_new(s, "hashed_files", json_integer((json_int_t)hs.hashed_files));
	json_object_set_new(s, "hashed_bytes", json_integer((json_int_t)hs.hashed_bytes));
	json_object_set_new(s, "hash_cache_hits", json_integer((json_int_t)hs.cache_hits));
	json_object_set_new(s, "hash_disk_hits", json_integer((json_int_t)hs.disk_hits));
	json_object_set_new(s, "hash_failed", json_integer((json_int_t)hs.failed));
	json_object_set_new(s, "hash_ms", json_real((double)hs.hash_ns / 1e6));
	json_object_set_new(s, "hash_cpu_ms", json_real((double)hs.hash_cpu_ns / 1e6));
	json_object_set_new(s, "integrity_violations",
			    json_integer((json_int_t)m->verify_mismatches));
	return s;
}

void st__mf_free(struct st__mf *m)
{
	if (m == NULL)
		return;
	st__hashpool_free(m->pool);
	struct input *in, *ti;
	HASH_ITER(hh, m->inputs, in, ti)
	{
		HASH_DEL(m->inputs, in);
		free(in->path);
		free(in->v);
		free(in);
	}
	struct output *o, *to;
	HASH_ITER(hh, m->outputs, o, to)
	{
		HASH_DEL(m->outputs, o);
		free(o->path);
		free(o);
	}
	struct listed *l, *tl;
	HASH_ITER(hh, m->listed, l, tl)
	{
		HASH_DEL(m->listed, l);
		free(l->idx);
		free(l);
	}
	struct checked *c, *tc;
	HASH_ITER(hh, m->checked, c, tc)
	{
		HASH_DEL(m->checked, c);
		free(c);
	}
	free(m->in_order);
	free(m->out_order);
	st__manifest_free(&m->ref);
	free(m);
}
