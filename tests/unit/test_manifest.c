/* tests/unit/test_manifest.c - daemon/manifest.c (file format, diff) and daemon/hashpool.c (identity cache). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sandtrace/common.h>
#include <sandtrace/protocol.h>

#include "hashpool.h"
#include "manifest.h"

/* sha256("hello\n") and sha256("") */
#define HELLO_SHA "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
#define EMPTY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static const char good[] =
    "sandtrace-manifest 1\n"
    "# KIND\tSHA256\tSIZE\tMTIME_NS\tDEV\tINO\tCTIME_NS\tFLAGS\tPATH\n"
    "R\t" HELLO_SHA "\t6\t1700000000123456789\t2049\t42\t1700000000123456790\t-\t/src/a.c\n"
    "\n"
    "X\t" EMPTY_SHA "\t0\t-5\t1\t2\t3\trw,versions\t/usr/bin/tab\\x09name\n"
    "R\t-\t10\t1\t1\t3\t1\twr\t/build/gen.h\n"
    "W\t-\t-\t-\t-\t-\t-\trw\t/build/out.o\n";

/* Parse text and expect an error naming line `line` (0: expect success). */
static void parse_expect(const char *text, unsigned line)
{
	struct st__manifest m;
	char err[512] = "";
	int rc = st__manifest_parse(text, strlen(text), "M", &m, err, sizeof(err));
	if (line == 0) {
		ck_assert_msg(rc == 0, "unexpected error: %s", err);
		st__manifest_free(&m);
		return;
	}
	ck_assert_int_eq(rc, -EINVAL);
	char want[32];
	snprintf(want, sizeof(want), "M:%u: ", line);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "error \"%s\" does not start with %s",
		      err, want);
	ck_assert_ptr_null(m.v);
}

START_TEST(parse_good)
{
	struct st__manifest m;
	char err[512];
	ck_assert_int_eq(st__manifest_parse(good, strlen(good), "M", &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m.n, 4);
	ck_assert_int_eq(m.v[0].kind, 'R');
	ck_assert(m.v[0].has_digest && m.v[0].has_id);
	ck_assert_int_eq(m.v[0].id.size, 6);
	ck_assert_int_eq(m.v[0].id.mtime_ns, 1700000000123456789LL);
	ck_assert_uint_eq(m.v[0].id.dev, 2049);
	ck_assert_uint_eq(m.v[0].id.ino, 42);
	ck_assert_int_eq(m.v[0].id.ctime_ns, 1700000000123456790LL);
	char hex[65];
	st__sha256_hex(m.v[0].digest, hex);
	ck_assert_str_eq(hex, HELLO_SHA);
	ck_assert_str_eq(m.v[0].path, "/src/a.c");
	ck_assert_int_eq(m.v[1].kind, 'X');
	ck_assert_uint_eq(m.v[1].flags, ST_MF_RW | ST_MF_VERSIONS);
	ck_assert_int_eq(m.v[1].id.mtime_ns, -5);
	ck_assert_uint_eq(m.v[1].path_len, strlen("/usr/bin/tab\tname"));
	ck_assert_str_eq(m.v[1].path, "/usr/bin/tab\tname"); /* unescaped */
	ck_assert(!m.v[2].has_digest);
	ck_assert_uint_eq(m.v[2].flags, ST_MF_WR);
	ck_assert_int_eq(m.v[3].kind, 'W');
	ck_assert(!m.v[3].has_id);
	st__manifest_free(&m);
}
END_TEST

START_TEST(write_read_round_trip)
{
	struct st__manifest m, back;
	char err[512];
	ck_assert_int_eq(st__manifest_parse(good, strlen(good), "M", &m, err, sizeof(err)), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(st__manifest_write(f, &m), 0);
	fclose(f);
	ck_assert_int_eq(st__manifest_parse(buf, len, "W", &back, err, sizeof(err)), 0);
	ck_assert_uint_eq(back.n, m.n);
	for (size_t i = 0; i < m.n; i++) {
		ck_assert_int_eq(back.v[i].kind, m.v[i].kind);
		ck_assert_uint_eq(back.v[i].flags, m.v[i].flags);
		ck_assert_int_eq(back.v[i].has_digest, m.v[i].has_digest);
		ck_assert_mem_eq(back.v[i].digest, m.v[i].digest, 32);
		ck_assert_mem_eq(&back.v[i].id, &m.v[i].id, sizeof(m.v[i].id));
		ck_assert_uint_eq(back.v[i].path_len, m.v[i].path_len);
		ck_assert_mem_eq(back.v[i].path, m.v[i].path, m.v[i].path_len);
	}
	/* a newline in a path is escaped: still one entry a line */
	ck_assert_ptr_nonnull(strstr(buf, "/usr/bin/tab\\x09name\n"));
	free(buf);
	st__manifest_free(&m);
	st__manifest_free(&back);
}
END_TEST

START_TEST(malformed_line_numbers)
{
	parse_expect("", 1);
	parse_expect("sandtrace-manifest 2\n", 1);
	parse_expect("sandtrace-manifest 1\n", 0);
	parse_expect("sandtrace-manifest 1\n# c\nR\t-\t1\n", 3);
	parse_expect("sandtrace-manifest 1\n\n\nQ\t-\t-\t-\t-\t-\t-\t-\t/x\n", 4);
	parse_expect("sandtrace-manifest 1\nR\tabc\t1\t1\t1\t1\t1\t-\t/x\n", 2);
	parse_expect("sandtrace-manifest 1\nR\t" HELLO_SHA "\t1x\t1\t1\t1\t1\t-\t/x\n", 2);
	parse_expect("sandtrace-manifest 1\nR\t" HELLO_SHA "\t-1\t1\t1\t1\t1\t-\t/x\n", 2);
	parse_expect("sandtrace-manifest 1\nR\t-\t1\t1\t1\t1\t1\t-\t/x\n", 2); /* - needs a why */
	parse_expect("sandtrace-manifest 1\nR\t" HELLO_SHA "\t1\t1\t1\t1\t1\tzz\t/x\n", 2);
	parse_expect("sandtrace-manifest 1\nR\t" HELLO_SHA "\t1\t1\t1\t1\t1\t-\trel\n", 2);
	parse_expect("sandtrace-manifest 1\nR\t" HELLO_SHA "\t1\t1\t1\t1\t1\t-\t/a\\xg0\n", 2);
	parse_expect("sandtrace-manifest 1\nR\t" HELLO_SHA "\t1\t1\t1\t1\t1\t-\t\n", 2);
	parse_expect("sandtrace-manifest 1\nR\t" HELLO_SHA "\t1\t1\t1\t1\t1\t-\t/x\textra\n", 2);
	parse_expect("sandtrace-manifest 1\nW\t-\t5\t-\t-\t-\t-\t-\t/x\n", 2);
	parse_expect("sandtrace-manifest 1\nW\t-\t-\t-\t-\t-\t-\t-\t/x", 2); /* no newline */
	parse_expect("sandtrace-manifest 1\nW\t-\t-\t-\t-\t-\t-\t-\t/x\nR\n", 3);
}
END_TEST

START_TEST(read_missing_file)
{
	struct st__manifest m;
	char err[512];
	ck_assert_int_eq(st__manifest_read("/nonexistent/manifest", &m, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/manifest"));
	/* what does not begin as a manifest is not read to its end: a device
	 * that never ends was read until memory ran out */
	ck_assert_int_eq(st__manifest_read("/dev/zero", &m, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "/dev/zero:1: not a sandtrace manifest"));
}
END_TEST

/* a NUL byte in a line (no field and no path holds one) was taken */
START_TEST(nul_byte_refused)
{
	static const char text[] = "sandtrace-manifest 1\nW\t-\t-\t-\t-\t-\t-\t-\t/a\0b\n";
	struct st__manifest m;
	char err[512] = "";
	ck_assert_int_eq(st__manifest_parse(text, sizeof(text) - 1, "M", &m, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "M:2: a NUL byte in the line");
}
END_TEST

static void add(struct st__manifest *m, char kind, const char *path, const char *hex)
{
	struct st__mf_entry e = {.kind = kind, .path = (char *)path, .path_len = strlen(path)};
	if (kind != 'W') {
		e.has_id = true;
		if (hex) {
			e.has_digest = true;
			ck_assert_int_eq(st__sha256_parse(hex, 64, e.digest), 0);
		} else {
			e.flags = ST_MF_UNHASHED;
		}
	}
	ck_assert_int_eq(st__manifest_add(m, &e), 0);
}

START_TEST(diff_added_removed_changed)
{
	struct st__manifest a = {0}, b = {0};
	add(&a, 'R', "/same", HELLO_SHA);
	add(&a, 'R', "/gone", HELLO_SHA);
	add(&a, 'R', "/edited", HELLO_SHA);
	add(&a, 'W', "/out", NULL);
	add(&b, 'R', "/same", HELLO_SHA);
	add(&b, 'R', "/edited", EMPTY_SHA);
	add(&b, 'X', "/new", EMPTY_SHA);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_uint_eq(st__manifest_diff(&a, &b, f), 3);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "removed\t/gone\n"));
	ck_assert_ptr_nonnull(strstr(buf, "added\t/new\n"));
	ck_assert_ptr_nonnull(strstr(buf, "changed\t/edited\t" HELLO_SHA "\t" EMPTY_SHA "\n"));
	ck_assert_ptr_null(strstr(buf, "/same"));
	ck_assert_ptr_null(strstr(buf, "/out")); /* outputs are not inputs */
	free(buf);
	f = open_memstream(&buf, &len);
	ck_assert_uint_eq(st__manifest_diff(&a, &a, f), 0);
	fclose(f);
	free(buf);
	st__manifest_free(&a);
	st__manifest_free(&b);
}
END_TEST

/* ---- the identity cache ---- */

static char tmpdir[64];

static void make_file(const char *name, const char *text, char *path, struct sandtrace_identity *id)
{
	snprintf(path, 256, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	st__identity_of(&st, id);
}

static void setup_dir(void)
{
	strcpy(tmpdir, "/tmp/st-unit-mf.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

static void hashed_once(unsigned threads)
{
	struct st__hashpool *p;
	ck_assert_int_eq(st__hashpool_new(&p, threads), 0);
	char path[256], lnk[256];
	struct sandtrace_identity id;
	make_file("a", "hello\n", path, &id);
	snprintf(lnk, sizeof(lnk), "%s/hardlink", tmpdir);
	ck_assert_int_eq(link(path, lnk), 0);
	struct stat st; /* a new link changes the inode's ctime: a new identity */
	ck_assert_int_eq(stat(path, &st), 0);
	st__identity_of(&st, &id);
	/* the same identity by two paths and twice by one: hashed once */
	st__hashpool_submit(p, path, strlen(path), &id);
	st__hashpool_submit(p, lnk, strlen(lnk), &id);
	st__hashpool_wait(p);
	uint8_t d[32];
	ck_assert_int_eq(st__hashpool_get(p, path, strlen(path), &id, d), 0);
	char hex[65];
	st__sha256_hex(d, hex);
	ck_assert_str_eq(hex, HELLO_SHA);
	ck_assert_int_eq(st__hashpool_peek(p, &id, d), 1);
	struct st__hash_stats s;
	st__hashpool_stats(p, &s);
	ck_assert_uint_eq(s.hashed_files, 1);
	ck_assert_uint_eq(s.hashed_bytes, 6);
	ck_assert_uint_eq(s.cache_hits, 2);
	ck_assert_uint_eq(s.threads, threads);
	st__hashpool_free(p);
}

START_TEST(identity_cache_hashes_once_sync)
{
	hashed_once(0);
}
END_TEST

START_TEST(identity_cache_hashes_once_pool)
{
	hashed_once(2);
}
END_TEST

START_TEST(identity_cache_stale_version)
{
	struct st__hashpool *p;
	ck_assert_int_eq(st__hashpool_new(&p, 1), 0);
	char path[256];
	struct sandtrace_identity old, now;
	make_file("b", "hello\n", path, &old);
	usleep(20000);
	make_file("b", "other text\n", path, &now);
	ck_assert(memcmp(&old, &now, sizeof(old)) != 0);
	uint8_t d[32];
	/* the version the shim saw is gone: no digest of a different version under its name */
	ck_assert_int_eq(st__hashpool_get(p, path, strlen(path), &old, d), -ESTALE);
	ck_assert_int_eq(st__hashpool_peek(p, &old, d), -ESTALE);
	ck_assert_int_eq(st__hashpool_get(p, path, strlen(path), &now, d), 0);
	struct st__hash_stats s;
	st__hashpool_stats(p, &s);
	ck_assert_uint_eq(s.failed, 1);
	ck_assert_uint_eq(s.hashed_files, 1);
	/* a missing file */
	struct sandtrace_identity ghost = now;
	ghost.ino++;
	char missing[256];
	snprintf(missing, sizeof(missing), "%s/missing", tmpdir);
	ck_assert_int_eq(st__hashpool_get(p, missing, strlen(missing), &ghost, d), -ESTALE);
	st__hashpool_free(p);
}
END_TEST

START_TEST(identity_cache_persists)
{
	char path[256], cache[256], err[512];
	struct sandtrace_identity id;
	make_file("c", "", path, &id);
	snprintf(cache, sizeof(cache), "%s/sub/dir/hashes", tmpdir);
	struct st__hashpool *p;
	uint8_t d[32];
	ck_assert_int_eq(st__hashpool_new(&p, 0), 0);
	ck_assert_int_eq(st__hashpool_load(p, cache, err, sizeof(err)), 0); /* missing: fine */
	ck_assert_int_eq(st__hashpool_get(p, path, strlen(path), &id, d), 0);
	ck_assert_int_eq(st__hashpool_save(p, cache), 0); /* creates sub/dir */
	st__hashpool_free(p);

	ck_assert_int_eq(st__hashpool_new(&p, 0), 0);
	ck_assert_int_eq(st__hashpool_load(p, cache, err, sizeof(err)), 0);
	/* the next run: found on disk, not hashed; even a deleted file's digest */
	unlink(path);
	ck_assert_int_eq(st__hashpool_get(p, path, strlen(path), &id, d), 0);
	char hex[65];
	st__sha256_hex(d, hex);
	ck_assert_str_eq(hex, EMPTY_SHA);
	struct st__hash_stats s;
	st__hashpool_stats(p, &s);
	ck_assert_uint_eq(s.loaded, 1);
	ck_assert_uint_eq(s.disk_hits, 1);
	ck_assert_uint_eq(s.hashed_files, 0);
	st__hashpool_free(p);

	/* a damaged cache: rejected at the bad line, what came before is kept */
	FILE *f = fopen(cache, "a");
	fputs("1 2 three 4 5 " EMPTY_SHA "\n", f);
	fclose(f);
	ck_assert_int_eq(st__hashpool_new(&p, 0), 0);
	ck_assert_int_eq(st__hashpool_load(p, cache, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":3:"));
	st__hashpool_stats(p, &s);
	ck_assert_uint_eq(s.loaded, 1);
	st__hashpool_free(p);
}
END_TEST

START_TEST(sha256_fd_matches_known)
{
	char path[256];
	struct sandtrace_identity id;
	make_file("d", "hello\n", path, &id);
	int fd = open(path, O_RDONLY);
	uint8_t d[32];
	uint64_t n = 0;
	ck_assert_int_eq(st__sha256_fd(fd, d, &n), 0);
	close(fd);
	char hex[65];
	st__sha256_hex(d, hex);
	ck_assert_str_eq(hex, HELLO_SHA);
	ck_assert_uint_eq(n, 6);
	ck_assert_int_eq(st__sha256_parse("zz", 2, d), -EINVAL);
}
END_TEST

/* The ACCESS payload with SANDTRACE_AF_IDENTITY (shm/proto.c): strict lengths and flags. */
START_TEST(proto_identity_payload)
{
	uint8_t buf[128];
	struct sandtrace_access a = {.kind = SANDTRACE_KIND_READ, .flags = SANDTRACE_AF_IDENTITY,
				     .path_len = 2};
	struct sandtrace_identity id = {.dev = 1, .ino = 2, .size = 3, .mtime_ns = 4, .ctime_ns = 5};
	memcpy(buf, &a, sizeof(a));
	memcpy(buf + sizeof(a), "/x", 2);
	memcpy(buf + sizeof(a) + 2, &id, sizeof(id));
	struct sandtrace_access_view v;
	uint32_t len = sizeof(a) + 2 + sizeof(id);
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, len, &v), 0);
	ck_assert_mem_eq(&v.id, &id, sizeof(id));
	ck_assert_uint_eq(v.a.path_len, 2);
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, len - 1, &v), -EPROTO);
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, sizeof(a) + 2, &v), -EPROTO);
	/* identity only on READ and EXEC */
	a.kind = SANDTRACE_KIND_WRITE;
	memcpy(buf, &a, sizeof(a));
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, len, &v), -EPROTO);
	/* VERIFY needs REPLY and IDENTITY */
	a.kind = SANDTRACE_KIND_READ;
	a.flags = SANDTRACE_AF_IDENTITY | SANDTRACE_AF_VERIFY;
	memcpy(buf, &a, sizeof(a));
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, len, &v), -EPROTO);
	a.flags |= SANDTRACE_AF_REPLY;
	memcpy(buf, &a, sizeof(a));
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, len, &v), 0);
	/* without the flag, the payload is the old one */
	a.flags = 0;
	memcpy(buf, &a, sizeof(a));
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, sizeof(a) + 2, &v), 0);
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, len, &v), -EPROTO);
}
END_TEST

START_TEST(option_flags)
{
	struct st__mf_opts o = {0};
	ck_assert_uint_eq(st__mf_opts_flags(&o), 0);
	ck_assert_int_eq(st__mf_option(&o, ST__MF_O_MANIFEST, "m"), 1);
	ck_assert_uint_eq(st__mf_opts_flags(&o), SANDTRACE_F_MANIFEST | SANDTRACE_F_IDENTITY);
	ck_assert_int_eq(st__mf_option(&o, ST__MF_O_VERIFY, "v"), 1);
	ck_assert_uint_eq(st__mf_opts_flags(&o),
			  SANDTRACE_F_MANIFEST | SANDTRACE_F_IDENTITY | SANDTRACE_F_VERIFY);
	ck_assert_int_eq(st__mf_option(&o, 'x', "v"), 0);
	ck_assert_int_eq(st__mf_option(&o, ST__MF_O_HASH_THREADS, "many"), -1);
}
END_TEST

Suite *suite_manifest(void)
{
	Suite *s = suite_create("manifest");
	TCase *tc = tcase_create("format");
	tcase_add_test(tc, parse_good);
	tcase_add_test(tc, write_read_round_trip);
	tcase_add_test(tc, malformed_line_numbers);
	tcase_add_test(tc, read_missing_file);
	tcase_add_test(tc, nul_byte_refused);
	tcase_add_test(tc, diff_added_removed_changed);
	tcase_add_test(tc, proto_identity_payload);
	tcase_add_test(tc, option_flags);
	suite_add_tcase(s, tc);
	tc = tcase_create("identity_cache");
	tcase_add_checked_fixture(tc, setup_dir, teardown_dir);
	tcase_add_test(tc, identity_cache_hashes_once_sync);
	tcase_add_test(tc, identity_cache_hashes_once_pool);
	tcase_add_test(tc, identity_cache_stale_version);
	tcase_add_test(tc, identity_cache_persists);
	tcase_add_test(tc, sha256_fd_matches_known);
	suite_add_tcase(s, tc);
	return s;
}
