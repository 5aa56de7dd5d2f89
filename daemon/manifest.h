/* daemon/manifest.h - input manifests: the file format, `sandtrace diff`, and the daemon's --manifest/--verify. */
#ifndef ST_MANIFEST_H
#define ST_MANIFEST_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include <sandtrace/arena.h>
#include <sandtrace/protocol.h>

#include "hashpool.h"

/*
 * The manifest file (docs/INTERNALS.md, "Manifests"): a first line
 * "sandtrace-manifest 1", '#' comments, then one entry a line, nine fields
 * separated by tabs:
 *
 *   KIND SHA256 SIZE MTIME_NS DEV INO CTIME_NS FLAGS PATH
 *
 * KIND R (read) or X (executed) for inputs, W for outputs (files the build
 * wrote: every other field but FLAGS and PATH is "-").  SHA256 is 64
 * lower-case hex digits, or "-" when the flags say why there is none.
 * FLAGS is "-" or a comma-separated list of: rw (read, then written by the
 * build), wr (written by the build, then read: a generated input, not
 * hashed), versions (the path was read in more than one version: one line
 * each), unhashed (the version was gone before it could be hashed).  PATH
 * is escaped as in the report (daemon/escape.h).
 */

#define ST_MF_MAGIC "sandtrace-manifest 1"

enum st__mf_flags {
	ST_MF_RW = 1u << 0,
	ST_MF_WR = 1u << 1,
	ST_MF_VERSIONS = 1u << 2,
	ST_MF_UNHASHED = 1u << 3
};

struct st__mf_entry {
	char kind; /* 'R', 'X' or 'W' */
	unsigned flags;
	bool has_digest;
	uint8_t digest[ST_SHA256_LEN];
	bool has_id; /* R/X entries */
	struct sandtrace_identity id;
	char *path; /* unescaped bytes, NUL-terminated (may hold NULs: use path_len) */
	size_t path_len;
};

struct st__manifest {
	struct st__mf_entry *v;
	size_t n, cap;
};

/*
 * st__manifest_parse - parse len bytes (name is used in messages).
 * Strict: returns 0, -EINVAL with "NAME:LINE: message" in err, or -ENOMEM.
 * st__manifest_read does the same for a file (-errno when it cannot be read).
 */
int st__manifest_parse(const char *buf, size_t len, const char *name, struct st__manifest *m,
		       char *err, size_t errlen);
int st__manifest_read(const char *file, struct st__manifest *m, char *err, size_t errlen);

/* st__manifest_add - append a copy of e (its path is copied).  0 or -ENOMEM. */
int st__manifest_add(struct st__manifest *m, const struct st__mf_entry *e);

/* st__manifest_write - the file format above, header included.  0 or -errno. */
int st__manifest_write(FILE *f, const struct st__manifest *m);

void st__manifest_free(struct st__manifest *m);

/*
 * st__manifest_diff - the inputs of a and b compared by path: lines
 * "added\tPATH", "removed\tPATH", "changed\tPATH\tOLD\tNEW" (digests, or
 * "-"; a path read in several versions compares the list) to out, then a
 * "# inputs: ..." line.  Returns the number of differences.
 */
size_t st__manifest_diff(const struct st__manifest *a, const struct st__manifest *b, FILE *out);

/* `sandtrace diff A B`: exit 0 (same inputs), 1 (differences), 125 (error). */
int st__mf_cmd_diff(int argc, char **argv);

/* ---- options shared by `sandtrace run` and sandtraced ---- */

struct st__mf_opts {
	const char *manifest;   /* --manifest FILE: write the run's manifest */
	const char *verify;     /* --verify FILE: check reads against this manifest */
	const char *hash_cache; /* --hash-cache FILE ("none": no persistent cache) */
	unsigned threads;       /* --hash-threads N (0: default) */
};

enum { ST__MF_O_MANIFEST = 0x4d00, ST__MF_O_VERIFY, ST__MF_O_HASH_CACHE, ST__MF_O_HASH_THREADS };

/* Entries of a getopt_long table. */
#define ST__MF_LONGOPTS                                                                            \
	{"manifest", required_argument, NULL, ST__MF_O_MANIFEST},                                  \
	    {"verify", required_argument, NULL, ST__MF_O_VERIFY},                                  \
	    {"hash-cache", required_argument, NULL, ST__MF_O_HASH_CACHE},                          \
	    {"hash-threads", required_argument, NULL, ST__MF_O_HASH_THREADS}

/* st__mf_option - take option opt if it is one of ours: 1 taken, 0 not
 * ours, -1 bad value (said on stderr). */
int st__mf_option(struct st__mf_opts *o, int opt, const char *arg);

/* The run flags these options add (SANDTRACE_F_IDENTITY, _MANIFEST, _VERIFY). */
unsigned st__mf_opts_flags(const struct st__mf_opts *o);

/* The CLI: append the daemon's options (absolute paths) to argv at n; returns the new n
 * (at most 8 more). */
size_t st__mf_daemon_args(const struct st__mf_opts *o, const char **argv, size_t n);

/* ---- the daemon's side ---- */

struct st__report;
struct st__summary;
struct st__mf;

/*
 * st__mf_new - start manifest/verify state for a run (*out NULL when
 * neither --manifest nor --verify was given).  Checks that the --manifest
 * file can be written (a regular file or none, in a directory where a
 * temporary file can be made: else the run must not start), loads the
 * --verify manifest and the hash cache, starts the workers.  rep, sum and seq are the
 * daemon's report, summary and record sequence (integrity violations are
 * written there, from the daemon's main thread).  0, or -errno with a
 * message in err.
 */
int st__mf_new(struct st__mf **out, const struct st__mf_opts *o, unsigned run_flags,
	       struct st__report *rep, struct st__summary *sum, uint64_t *seq, char *err,
	       size_t errlen);

/* st__mf_publish - insert SANDTRACE_KEY_LISTED for every path the --verify
 * manifest holds a digest for.  0 or -ENOSPC. */
int st__mf_publish(struct st__mf *m, struct sandtrace_arena *a);

/* st__mf_note - an ACCESS record (not a request): inputs, outputs, hashing. */
void st__mf_note(struct st__mf *m, const struct sandtrace_access_view *v, int32_t pid);

/* st__mf_verify - answer an ACCESS request with SANDTRACE_AF_VERIFY (see protocol.h). */
void st__mf_verify(struct st__mf *m, const struct sandtrace_access_view *v, int32_t pid,
		   struct sandtrace_verdict *vd);

/* st__mf_finish - wait for the digests, write the manifest, save the hash
 * cache, write the "manifest" record to the report.  0 or -errno (also a
 * reason in the summary). */
int st__mf_finish(struct st__mf *m);

/* st__mf_summary - add the hashing counters to a summary record; returns it. */
json_t *st__mf_summary(struct st__mf *m, json_t *summary);

void st__mf_free(struct st__mf *m);

#endif
