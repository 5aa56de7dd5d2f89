/* daemon/report.c - JSON Lines report records (jansson): builders, streaming writer, reader and
 * scanner. */
#include "report.h"

#include <bsd/string.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <uthash.h>

#include <sandtrace/common.h>
#include <sandtrace/protocol.h>

#include "escape.h"
#include "policy_file.h"

json_t *st__json_bytes(const char *s, size_t len)
{
	char stackbuf[1024];
	size_t n = st__escaped_len(s, len);
	char *buf = n < sizeof(stackbuf) ? stackbuf : malloc(n + 1);
	if (buf == NULL)
		return NULL;
	st__escape_into(s, len, buf);
	/* The escaped text is valid UTF-8 by construction. */
	json_t *j = json_stringn_nocheck(buf, n);
	if (buf != stackbuf)
		free(buf);
	return j;
}

json_t *st__json_argv_bytes(const char *argv, size_t len)
{
	json_t *a = json_array();
	if (a == NULL)
		return NULL;
	for (size_t i = 0; i < len;) {
		const char *end = memchr(argv + i, '\0', len - i);
		size_t n = end ? (size_t)(end - (argv + i)) : len - i;
		if (json_array_append_new(a, st__json_bytes(argv + i, n)) < 0) {
			json_decref(a);
			return NULL;
		}
		i += n + 1;
	}
	return a;
}

json_t *st__json_argv(char *const *argv)
{
	json_t *a = json_array();
	if (a == NULL)
		return NULL;
	for (size_t i = 0; argv != NULL && argv[i] != NULL; i++) {
		if (json_array_append_new(a, st__json_bytes(argv[i], strlen(argv[i]))) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

const char *st__untraced_name(unsigned why)
{
	switch (why) {
	case SANDTRACE_UNTRACED_STATIC:
		return "static";
	case SANDTRACE_UNTRACED_SETID:
		return "setid";
	case SANDTRACE_UNTRACED_ELFCLASS:
		return "elfclass";
	case SANDTRACE_UNTRACED_GO:
		return "go";
	case SANDTRACE_UNTRACED_NESTED:
		return "nested";
	}
	return "other";
}

static char kind_letter(unsigned kind)
{
	return kind < SANDTRACE_KIND_MAX ? SANDTRACE_KIND_LETTERS[kind] : '?';
}

/* json_object_set_new on a NULL value leaks nothing and fails: collect failures in *ok. */
static void put(json_t *o, const char *key, json_t *v, bool *ok)
{
	if (v == NULL || json_object_set_new(o, key, v) < 0)
		*ok = false;
}

static json_t *finish(json_t *o, bool ok)
{
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *st__rec_access(const struct st__access_rec *r)
{
	char k[2] = {kind_letter(r->kind), 0};
	json_t *o = json_object();
	bool ok = o != NULL;
	if (!ok)
		return NULL;
	put(o, "type", json_string("access"), &ok);
	put(o, "seq", json_integer((json_int_t)r->seq), &ok);
	put(o, "kind", json_string(k), &ok);
	put(o, "path", st__json_bytes(r->path, r->path_len), &ok);
	put(o, "pid", json_integer(r->pid), &ok);
	put(o, "verdict", json_string(st__action_name(r->verdict)), &ok);
	put(o, "err", json_integer(r->err), &ok);
	if (r->asked)
		put(o, "asked", json_string(r->asked), &ok);
	if (r->package)
		put(o, "package", json_string(r->package), &ok);
	if (r->fail_open)
		put(o, "fail_open", json_true(), &ok);
	if (r->unresolved)
		put(o, "unresolved", json_true(), &ok);
	if (r->untraced)
		put(o, "untraced", json_string(st__untraced_name(r->untraced)), &ok);
	return finish(o, ok);
}

json_t *st__rec_violation(const struct st__violation_rec *r)
{
	char k[2] = {kind_letter(r->kind), 0};
	json_t *o = json_object();
	bool ok = o != NULL;
	if (!ok)
		return NULL;
	put(o, "type", json_string("violation"), &ok);
	put(o, "seq", json_integer((json_int_t)r->seq), &ok);
	if (r->io_uring) {
		/* no file: the call that would have made a ring */
		put(o, "call", st__json_bytes(r->path, r->path_len), &ok);
		put(o, "pid", json_integer(r->pid), &ok);
		put(o, "class", json_string("io_uring"), &ok);
		put(o, "err", json_integer(r->err), &ok);
		return finish(o, ok);
	}
	put(o, "kind", json_string(k), &ok);
	put(o, "path", st__json_bytes(r->path, r->path_len), &ok);
	put(o, "pid", json_integer(r->pid), &ok);
	put(o, "class", json_string(st__class_name(r->cls)), &ok);
	put(o, "rule", st__json_bytes(r->rule, strlen(r->rule)), &ok);
	if (r->package) {
		put(o, "package", json_string(r->package), &ok);
		put(o, "hidden", json_boolean(r->hidden), &ok);
	}
	return finish(o, ok);
}

json_t *st__rec_process(const struct st__process_rec *r)
{
	json_t *o = json_object();
	bool ok = o != NULL;
	if (!ok)
		return NULL;
	put(o, "type", json_string("process"), &ok);
	put(o, "pid", json_integer(r->pid), &ok);
	put(o, "ppid", json_integer(r->ppid), &ok);
	put(o, "uid", r->uid >= 0 ? json_integer(r->uid) : json_null(), &ok);
	put(o, "exe", st__json_bytes(r->exe ? r->exe : "", r->exe_len), &ok);
	put(o, "argv", st__json_argv_bytes(r->argv ? r->argv : "", r->argv_len), &ok);
	put(o, "exit", r->exited ? json_integer(r->exit) : json_null(), &ok);
	put(o, "traced", json_boolean(r->traced), &ok);
	if (!r->traced)
		put(o, "why", json_string(st__untraced_name(r->why)), &ok);
	if (r->argv_truncated)
		put(o, "argv_truncated", json_true(), &ok);
	if (r->no_cache)
		put(o, "cache", json_false(), &ok);
	if (r->execed)
		put(o, "execed", json_true(), &ok);
	if (r->io_uring)
		put(o, "io_uring", json_true(), &ok);
	return finish(o, ok);
}

json_t *st__rec_run(const struct st__run_rec *r)
{
	json_t *o = json_object();
	bool ok = o != NULL;
	if (!ok)
		return NULL;
	put(o, "type", json_string("run"), &ok);
	put(o, "version", json_integer(1), &ok);
	put(o, "argv", st__json_argv(r->argv), &ok);
	put(o, "cwd", st__json_bytes(r->cwd ? r->cwd : "", r->cwd ? strlen(r->cwd) : 0), &ok);
	put(o, "policy", st__json_bytes(r->policy, strlen(r->policy)), &ok);
	put(o, "fenced", json_boolean(r->fenced), &ok);
	put(o, "cache", json_boolean(r->cache), &ok);
	put(o, "record_all", json_boolean(r->record_all), &ok);
	put(o, "fail_open", json_boolean(r->fail_open), &ok);
	put(o, "arena", r->arena ? json_string(r->arena) : json_null(), &ok);
	put(o, "daemon_pid", json_integer(r->daemon_pid), &ok);
	return finish(o, ok);
}

json_t *st__rec_summary(const struct st__summary *s)
{
	json_t *o = json_object();
	bool ok = o != NULL;
	if (!ok)
		return NULL;
	put(o, "type", json_string("summary"), &ok);
	put(o, "complete", json_boolean(s->complete), &ok);
	put(o, "reasons", s->reasons ? json_deep_copy(s->reasons) : json_array(), &ok);
	if (s->notes)
		put(o, "notes", json_deep_copy(s->notes), &ok);
	put(o, "processes", json_integer((json_int_t)s->processes), &ok);
	put(o, "accesses", json_integer((json_int_t)s->accesses), &ok);
	put(o, "unique_paths", json_integer((json_int_t)s->unique_paths), &ok);
	put(o, "violations", json_integer((json_int_t)s->violations), &ok);
	put(o, "untraced", json_integer((json_int_t)s->untraced), &ok);
	put(o, "calls", json_integer((json_int_t)s->calls), &ok);
	put(o, "hits", json_integer((json_int_t)s->hits), &ok);
	put(o, "messages", json_integer((json_int_t)s->messages), &ok);
	put(o, "daemon_messages", json_integer((json_int_t)s->daemon_messages), &ok);
	put(o, "clients", json_integer((json_int_t)s->clients), &ok);
	put(o, "dropped_clients", json_integer((json_int_t)s->dropped_clients), &ok);
	if (s->policy_reloads)
		put(o, "policy_reloads", json_integer((json_int_t)s->policy_reloads), &ok);
	if (s->io_uring)
		put(o, "io_uring", json_integer((json_int_t)s->io_uring), &ok);
	return finish(o, ok);
}

static int summary_add(json_t **list, const char *fmt, va_list ap)
{
	char buf[1024];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (*list == NULL && (*list = json_array()) == NULL)
		return -ENOMEM;
	return json_array_append_new(*list, st__json_bytes(buf, strlen(buf))) < 0 ? -ENOMEM : 0;
}

int st__summary_reason(struct st__summary *s, const char *fmt, ...)
{
	va_list ap;
	s->complete = false;
	va_start(ap, fmt);
	int rc = summary_add(&s->reasons, fmt, ap);
	va_end(ap);
	return rc;
}

int st__summary_note(struct st__summary *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = summary_add(&s->notes, fmt, ap);
	va_end(ap);
	return rc;
}

void st__summary_free(struct st__summary *s)
{
	json_decref(s->reasons);
	s->reasons = NULL;
	json_decref(s->notes);
	s->notes = NULL;
}

bool st__report_pseudo_fs(int fd)
{
	struct statfs sfs;
	return fstatfs(fd, &sfs) == 0 &&
	       (sfs.f_type == 0x9fa0 /* proc */ || sfs.f_type == 0x62656572 /* sysfs */);
}

int st__report_open(struct st__report *r, const char *path, bool append)
{
	r->error = 0;
	if (append) {
		r->f = fopen(path, "a+e");
	} else {
		/*
		 * Locked before it is truncated, and for the daemon's life: a
		 * second run given the same --report (two runs at once) truncated
		 * the first's and both wrote into it, a report of torn and mixed
		 * lines that still said "trace complete".  A file system without
		 * flock (ENOLCK, EINVAL) is written unlocked; a FIFO or a device
		 * is not truncated.
		 */
		int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0 && (errno == EWOULDBLOCK || errno == EINTR)) {
			close(fd);
			return -EBUSY;
		}
		struct stat st;
		/* (a daemon started by hand is told here, the CLI before) */
		if (st__report_pseudo_fs(fd)) {
			close(fd);
			return -EINVAL;
		}
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, 0) < 0) {
			int e = -errno;
			close(fd);
			return e;
		}
		r->f = fdopen(fd, "we");
		if (r->f == NULL) {
			int e = -errno;
			close(fd);
			return e;
		}
	}
	if (r->f == NULL)
		return -errno;
	if (append && fseek(r->f, -1, SEEK_END) == 0) {
		/* a writer killed in the middle of a line (the daemon): end that
		 * line, so what is appended stays a record of its own */
		int last = fgetc(r->f);
		fseek(r->f, 0, SEEK_END);
		if (last != '\n' && last != EOF)
			fputc('\n', r->f);
	}
	/* Streamed records are flushed when the daemon goes idle; a large buffer batches them. */
	setvbuf(r->f, NULL, _IOFBF, 1u << 18);
	return 0;
}

int st__report_emit(struct st__report *r, json_t *obj)
{
	if (obj == NULL) {
		if (r->error == 0)
			r->error = -ENOMEM;
		return -ENOMEM;
	}
	if (r->error != 0) {
		json_decref(obj);
		return r->error;
	}
	errno = 0;
	/* a record of the usual size into a buffer and the stream in one
	 * write: json_dumpf hands the stream each token apart (a locked
	 * fwrite each, a third of a record's cost in the daemon) */
	char buf[2048];
	size_t n = json_dumpb(obj, buf, sizeof(buf) - 1, JSON_COMPACT);
	bool ok;
	if (n > 0 && n < sizeof(buf) - 1) {
		buf[n++] = '\n';
		ok = fwrite(buf, 1, n, r->f) == n;
	} else {
		ok = n > 0 && json_dumpf(obj, r->f, JSON_COMPACT) == 0 && fputc('\n', r->f) != EOF;
	}
	json_decref(obj);
	if (!ok) {
		r->error = errno ? -errno : -EIO;
		return r->error;
	}
	return 0;
}

int st__report_flush(struct st__report *r)
{
	if (r->f != NULL && fflush(r->f) == EOF && r->error == 0)
		r->error = -errno;
	return r->error;
}

int st__report_close(struct st__report *r)
{
	if (r->f == NULL)
		return r->error;
	if (fclose(r->f) == EOF && r->error == 0)
		r->error = -errno;
	r->f = NULL;
	return r->error;
}

int st__report_read(const char *path, int (*fn)(json_t *obj, unsigned long lineno, void *ctx),
		    void *ctx, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	if (f == NULL) {
		int e = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return e;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned long lineno = 0, records = 0;
	int rc = 0;
	errno = 0;
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		size_t len = (size_t)n;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		if (len == 0)
			continue;
		json_error_t je;
		json_t *obj = json_loadb(line, len, 0, &je);
		if (obj == NULL || !json_is_object(obj)) {
			/* a line torn by a writer that was killed (the daemon, mid-
			 * write) is skipped with a warning: the records around it
			 * are still read, nothing else is lost */
			fprintf(stderr, "sandtrace: %s:%lu: %s: line skipped\n", path, lineno,
				obj ? "not a JSON object" : je.text);
			json_decref(obj);
			continue;
		}
		if (json_is_string(json_object_get(obj, "type")))
			records++;
		rc = fn(obj, lineno, ctx);
		json_decref(obj);
		if (rc < 0) {
			snprintf(err, errlen, "%s:%lu: %s", path, lineno, strerror(-rc));
			break;
		}
		errno = 0;
	}
	if (rc == 0 && ferror(f)) {
		rc = errno ? -errno : -EIO;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
	} else if (rc == 0 && records == 0) {
		/* not a report at all (empty, binary, another JSON file): say so
		 * rather than summarise it as a run of nothing */
		rc = -ENODATA;
		snprintf(err, errlen, "%s: not a sandtrace report (no record in it)", path);
	}
	free(line);
	fclose(f);
	return rc;
}

struct path_entry {
	UT_hash_handle hh;
	char key[];
};

static uint64_t get_u64(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v)
							       : 0;
}

static int scan_one(json_t *obj, unsigned long lineno, void *ctx)
{
	struct st__report_scan *s = ctx;
	const char *type = json_string_value(json_object_get(obj, "type"));
	(void)lineno;
	if (type == NULL)
		return 0;
	if (strcmp(type, "run") == 0 && s->run == NULL) {
		s->run = json_incref(obj);
	} else if (strcmp(type, "arena") == 0) {
		json_decref(s->arena);
		s->arena = json_incref(obj);
	} else if (strcmp(type, "policy") == 0) {
		json_decref(s->last_policy);
		s->last_policy = json_incref(obj);
		s->policy_reloads++;
	} else if (strcmp(type, "process") == 0) {
		s->processes++;
		if (json_is_false(json_object_get(obj, "traced")))
			json_array_append(s->untraced_list, obj);
	} else if (strcmp(type, "access") == 0) {
		s->accesses++;
		if (json_object_get(obj, "untraced") != NULL) {
			s->untraced++;
			json_array_append(s->untraced_list, obj);
		}
		const char *p = json_string_value(json_object_get(obj, "path"));
		if (p != NULL) {
			struct path_entry *head = s->paths, *e;
			size_t n = strlen(p);
			HASH_FIND(hh, head, p, n, e);
			if (e == NULL) {
				e = malloc(sizeof(*e) + n + 1);
				if (e == NULL)
					return -ENOMEM;
				memcpy(e->key, p, n + 1);
				HASH_ADD_KEYPTR(hh, head, e->key, n, e);
				s->paths = head;
				s->unique_paths++;
			}
		}
	} else if (strcmp(type, "violation") == 0) {
		s->violations++;
		json_array_append(s->violation_list, obj);
	} else if (strcmp(type, "summary") == 0) {
		st__summary_free(&s->summary);
		s->have_summary = true;
		struct st__summary *m = &s->summary;
		m->complete = json_is_true(json_object_get(obj, "complete"));
		json_t *r = json_object_get(obj, "reasons");
		m->reasons = json_is_array(r) ? json_incref(r) : json_array();
		json_t *nt = json_object_get(obj, "notes");
		m->notes = json_is_array(nt) ? json_incref(nt) : NULL;
		m->processes = get_u64(obj, "processes");
		m->accesses = get_u64(obj, "accesses");
		m->unique_paths = get_u64(obj, "unique_paths");
		m->violations = get_u64(obj, "violations");
		m->untraced = get_u64(obj, "untraced");
		m->calls = get_u64(obj, "calls");
		m->hits = get_u64(obj, "hits");
		m->messages = get_u64(obj, "messages");
		m->daemon_messages = get_u64(obj, "daemon_messages");
		m->clients = get_u64(obj, "clients");
		m->dropped_clients = get_u64(obj, "dropped_clients");
		m->policy_reloads = get_u64(obj, "policy_reloads");
		m->io_uring = get_u64(obj, "io_uring");
	}
	return 0;
}

int st__report_scan(const char *path, struct st__report_scan *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->violation_list = json_array();
	s->untraced_list = json_array();
	if (s->violation_list == NULL || s->untraced_list == NULL)
		return -ENOMEM;
	return st__report_read(path, scan_one, s, err, errlen);
}

/* The most of a report's end st__report_scan_summary reads (bytes): a summary
 * record is a few hundred bytes, its reasons at most a few KiB. */
#define SUMMARY_TAIL (64u << 10)

int st__report_scan_summary(const char *path, struct st__report_scan *s)
{
	memset(s, 0, sizeof(*s));
	s->violation_list = json_array();
	s->untraced_list = json_array();
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	int found = 0;
	if (s->violation_list == NULL || s->untraced_list == NULL || fd < 0 ||
	    fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 2)
		goto out;
	size_t want = (uint64_t)st.st_size < SUMMARY_TAIL ? (size_t)st.st_size : SUMMARY_TAIL;
	off_t at = st.st_size - (off_t)want;
	if ((buf = malloc(want)) == NULL)
		goto out;
	size_t got = 0;
	while (got < want) {
		ssize_t r = pread(fd, buf + got, want - got, at + (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			goto out;
		got += (size_t)r;
	}
	/* the last line, whole: it ends the file with a newline, and starts after
	 * the newline before it (or at the file's start) */
	if (buf[want - 1] != '\n')
		goto out;
	size_t end = want - 1, start = end;
	while (start > 0 && buf[start - 1] != '\n')
		start--;
	if (start == 0 && at != 0)
		goto out; /* longer than the tail read */
	json_error_t je;
	json_t *obj = json_loadb(buf + start, end - start, 0, &je);
	const char *type = json_string_value(json_object_get(obj, "type"));
	/* a run whose policy was reloaded (SIGHUP): its summary names the last
	 * policy record, which only the whole report has */
	if (json_is_object(obj) && type != NULL && strcmp(type, "summary") == 0 &&
	    scan_one(obj, 0, s) == 0 && s->summary.policy_reloads == 0)
		found = 1;
	json_decref(obj);
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	if (!found) {
		st__report_scan_free(s);
		memset(s, 0, sizeof(*s)); /* have_summary too: nothing was taken */
	}
	return found;
}

void st__report_scan_free(struct st__report_scan *s)
{
	struct path_entry *head = s->paths, *e, *tmp;
	HASH_ITER(hh, head, e, tmp)
	{
		HASH_DEL(head, e);
		free(e);
	}
	s->paths = NULL;
	st__summary_free(&s->summary);
	json_decref(s->arena);
	json_decref(s->last_policy);
	s->arena = NULL;
	json_decref(s->run);
	json_decref(s->violation_list);
	json_decref(s->untraced_list);
	s->run = s->violation_list = s->untraced_list = NULL;
}
