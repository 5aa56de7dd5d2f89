/* tests/unit/test_policy.c - daemon/policy.c: parsing, canonicalisation, matching order, errors
 * with FILE:LINE. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sandtrace/common.h>
#include <sandtrace/policy.h>

#include "policy_file.h"

static char err[ST_POLICY_ERR_MAX];

static int parse(struct st__policy *p, const char *text)
{
	memset(p, 0, sizeof(*p));
	err[0] = '\0';
	return st__policy_parse(p, "test.policy", text, strlen(text), err, sizeof(err));
}

/* Compile p into a private buffer (freed by the caller). */
static struct sandtrace_policy_table *compile(const struct st__policy *p)
{
	size_t n = st__policy_table_size(p);
	void *buf = calloc(1, n);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(st__policy_compile(p, buf, 0, n), 0);
	return buf;
}

static unsigned decide(const struct sandtrace_policy_table *t, unsigned cls, const char *path,
		       int *e)
{
	return st__policy_decide(t, t, cls, path, strlen(path), e, NULL);
}

/* A parse that must fail with -EINVAL and a message "test.policy:LINE: ..." holding what. */
static void expect_error(const char *text, unsigned line, const char *what)
{
	struct st__policy p;
	char prefix[64];
	ck_assert_int_eq(parse(&p, text), -EINVAL);
	snprintf(prefix, sizeof(prefix), "test.policy:%u: ", line);
	ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "message \"%s\" lacks \"%s\"", err,
		      prefix);
	ck_assert_msg(strstr(err, what) != NULL, "message \"%s\" lacks \"%s\"", err, what);
	st__policy_free(&p);
}

START_TEST(comments_and_blanks)
{
	struct st__policy p;
	ck_assert_int_eq(parse(&p, "# a comment\n\n   \t\n  # indented comment\nallow read /\n"),
			 0);
	ck_assert_uint_eq(p.nrules, 1);
	ck_assert_str_eq(p.rules[0].prefix, "/");
	ck_assert_uint_eq(p.rules[0].action, SANDTRACE_ALLOW);
	ck_assert_uint_eq(p.rules[0].classes, SANDTRACE_CLASS_READ);
	ck_assert_str_eq(p.rules[0].origin, "test.policy:5");
	st__policy_free(&p);
}
END_TEST

START_TEST(byte_order_mark)
{
	struct st__policy p = {0};
	ck_assert_int_eq(parse(&p, "\xef\xbb\xbf" "allow read /usr\n"), 0);
	ck_assert_uint_ge(p.nrules, 1);
	ck_assert_uint_eq(p.rules[0].action, SANDTRACE_ALLOW);
	st__policy_free(&p);
}
END_TEST

START_TEST(spaces_in_prefix)
{
	struct st__policy p;
	ck_assert_int_eq(parse(&p, "deny\twrite   /nonexistent-st/a dir #1/b  \t\n"), 0);
	ck_assert_uint_eq(p.nrules, 1);
	ck_assert_str_eq(p.rules[0].prefix, "/nonexistent-st/a dir #1/b");
	ck_assert_uint_eq(p.rules[0].classes, SANDTRACE_CLASS_WRITE);
	st__policy_free(&p);
}
END_TEST

START_TEST(classes_and_actions)
{
	struct st__policy p;
	ck_assert_int_eq(parse(&p, "ask any /a\nallow write /b\ndeny exec /c\ndefault deny\n"), 0);
	ck_assert_uint_eq(p.nrules, 3);
	ck_assert_uint_eq(p.rules[0].action, SANDTRACE_ASK);
	ck_assert_uint_eq(p.rules[0].classes, SANDTRACE_CLASS_ANY);
	ck_assert_uint_eq(p.rules[1].classes, SANDTRACE_CLASS_WRITE);
	ck_assert_uint_eq(p.rules[2].action, SANDTRACE_DENY);
	ck_assert_uint_eq(p.default_action, SANDTRACE_DENY);
	ck_assert_uint_eq(p.default_line, 4);
	st__policy_free(&p);
}
END_TEST

START_TEST(variables)
{
	struct st__policy p;
	setenv("ST_TEST_TOP", "/nonexistent-st/top", 1);
	setenv("ST_TEST_SUB", "sub dir", 1);
	ck_assert_int_eq(parse(&p, "allow write ${ST_TEST_TOP}/${ST_TEST_SUB}/x\n"), 0);
	ck_assert_uint_eq(p.nrules, 1);
	ck_assert_str_eq(p.rules[0].prefix, "/nonexistent-st/top/sub dir/x");
	st__policy_free(&p);
	/* A '$' not followed by '{' is literal. */
	ck_assert_int_eq(parse(&p, "allow write /nonexistent-st/$x\n"), 0);
	ck_assert_str_eq(p.rules[0].prefix, "/nonexistent-st/$x");
	st__policy_free(&p);
}
END_TEST

/* A prefix through a symlink is kept in both spellings, canonical first. */
START_TEST(canonical_and_alias)
{
	char dir[] = "/tmp/st-policy-XXXXXX", real[PATH_MAX], link[PATH_MAX], rule[PATH_MAX + 32];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *rdir = realpath(dir, NULL);
	snprintf(real, sizeof(real), "%s/real", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	ck_assert_int_eq(mkdir(real, 0700), 0);
	ck_assert_int_eq(symlink("real", link), 0);

	struct st__policy p;
	/* Trailing '/', "//", "." and a missing tail are folded; ".." after the missing part too.
	 */
	snprintf(rule, sizeof(rule), "allow read %s//./link/missing/../sub/\n", dir);
	ck_assert_int_eq(parse(&p, rule), 0);
	ck_assert_uint_eq(p.nrules, 2);
	char want[PATH_MAX + 16];
	snprintf(want, sizeof(want), "%s/real/sub", rdir);
	ck_assert_str_eq(p.rules[0].prefix, want);
	snprintf(want, sizeof(want), "%s/link/sub", dir);
	ck_assert_str_eq(p.rules[1].prefix, want);
	ck_assert_str_eq(p.rules[1].origin, "test.policy:1");

	/* Both spellings match. */
	struct sandtrace_policy_table *t = compile(&p);
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/real/sub/f.h", rdir);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_READ, path, NULL), SANDTRACE_ALLOW);
	snprintf(path, sizeof(path), "%s/link/sub/f.h", dir);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_READ, path, NULL), SANDTRACE_ALLOW);
	free(t);
	st__policy_free(&p);

	unlink(link);
	rmdir(real);
	rmdir(dir);
	free(rdir);
}
END_TEST

/* On merged-/usr systems /bin is a symlink to usr/bin. */
START_TEST(bin_to_usr_bin)
{
	char *r = realpath("/bin", NULL);
	struct st__policy p;
	ck_assert_int_eq(parse(&p, "allow exec /bin\n"), 0);
	if (r != NULL && strcmp(r, "/usr/bin") == 0) {
		ck_assert_uint_eq(p.nrules, 2);
		ck_assert_str_eq(p.rules[0].prefix, "/usr/bin");
		ck_assert_str_eq(p.rules[1].prefix, "/bin");
	} else {
		ck_assert_uint_eq(p.nrules, 1);
		ck_assert_str_eq(p.rules[0].prefix, "/bin");
	}
	free(r);
	st__policy_free(&p);
}
END_TEST

START_TEST(proc_not_resolved)
{
	char *c = NULL;
	ck_assert_int_eq(st__prefix_canonicalize("/proc/self/fd/", &c), 0);
	ck_assert_str_eq(c, "/proc/self/fd");
	free(c);
	ck_assert_int_eq(st__prefix_canonicalize("relative", &c), -EINVAL);
}
END_TEST

START_TEST(component_boundary)
{
	struct st__policy p;
	ck_assert_int_eq(parse(&p, "allow any /var/tmp\ndefault deny\n"), 0);
	struct sandtrace_policy_table *t = compile(&p);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_WRITE, "/var/tmp", NULL), SANDTRACE_ALLOW);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_WRITE, "/var/tmp/x", NULL), SANDTRACE_ALLOW);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_WRITE, "/var/tmpfoo", NULL), SANDTRACE_DENY);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_WRITE, "/var/tm", NULL), SANDTRACE_DENY);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_WRITE, "/var", NULL), SANDTRACE_DENY);
	/* on the way to /var/tmp: readable (ancestors_of_allowed_visible) */
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_READ, "/var", NULL), SANDTRACE_ALLOW);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_READ, "/var/tm", NULL), SANDTRACE_DENY);
	free(t);
	st__policy_free(&p);
}
END_TEST

START_TEST(first_match_wins)
{
	struct st__policy p;
	ck_assert_int_eq(parse(&p, "deny write /nonexistent-st/a\n"
				   "allow any /nonexistent-st\n"
				   "deny any /nonexistent-st/b\n"),
			 0);
	ck_assert_uint_eq(p.default_action, SANDTRACE_ALLOW); /* no `default`, no fence */
	struct sandtrace_policy_table *t = compile(&p);
	int rule;
	ck_assert_uint_eq(
	    st__policy_decide(t, t, SANDTRACE_CLASS_WRITE, "/nonexistent-st/a/x", 19, NULL, &rule),
	    SANDTRACE_DENY);
	ck_assert_int_eq(rule, 0);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_READ, "/nonexistent-st/a/x", NULL),
			  SANDTRACE_ALLOW);
	/* The later, more specific deny never matches: the broader allow came first. */
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_WRITE, "/nonexistent-st/b/x", NULL),
			  SANDTRACE_ALLOW);
	ck_assert_uint_eq(
	    st__policy_decide(t, t, SANDTRACE_CLASS_READ, "/elsewhere", 10, NULL, &rule),
	    SANDTRACE_ALLOW);
	ck_assert_int_eq(rule, -1);
	free(t);
	st__policy_free(&p);
}
END_TEST

/* Under a default deny, the directories on the way to an allowed prefix stay
 * readable (stat, listing); not writable, not executable, not their siblings,
 * and a rule naming one of them still wins. */
START_TEST(ancestors_of_allowed_visible)
{
	struct st__policy p;
	ck_assert_int_eq(parse(&p, "deny read /nonexistent-st/hidden\n"
				   "allow any /nonexistent-st/hidden/inner\n"
				   "allow write /nonexistent-st/tree/build\n"
				   "default deny\n"),
			 0);
	struct sandtrace_policy_table *t = compile(&p);
	int e = -1, rule = 0;
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_READ, "/", &e), SANDTRACE_ALLOW);
	ck_assert_uint_eq(
	    st__policy_decide(t, t, SANDTRACE_CLASS_READ, "/nonexistent-st/tree", 20, &e, &rule),
	    SANDTRACE_ALLOW);
	ck_assert_int_eq(rule, -1);
	/* the allowed prefix itself and below: its own rule (write only here) */
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_READ, "/nonexistent-st/tree/build", &e),
			  SANDTRACE_DENY);
	/* siblings and look-alikes stay hidden */
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_READ, "/nonexistent-st/treehouse", &e),
			  SANDTRACE_DENY);
	ck_assert_int_eq(e, ENOENT);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_READ, "/nonexistent-st/other", &e),
			  SANDTRACE_DENY);
	/* not writable (but visible: EACCES), not executable */
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_WRITE, "/nonexistent-st", &e), SANDTRACE_DENY);
	ck_assert_int_eq(e, EACCES);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_EXEC, "/nonexistent-st", &e), SANDTRACE_DENY);
	/* a rule that names the directory wins over being on the way */
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_READ, "/nonexistent-st/hidden", &e),
			  SANDTRACE_DENY);
	free(t);
	st__policy_free(&p);
}
END_TEST

/* Denied: hidden (ENOENT) unless a write to a path that is readable (EACCES). */
START_TEST(deny_errno)
{
	struct st__policy p;
	ck_assert_int_eq(parse(&p, "allow read /nonexistent-st/ro\n"
				   "deny read /nonexistent-st/hidden\n"
				   "default deny\n"),
			 0);
	struct sandtrace_policy_table *t = compile(&p);
	int e = -1;
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_WRITE, "/nonexistent-st/ro/f", &e),
			  SANDTRACE_DENY);
	ck_assert_int_eq(e, EACCES);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_WRITE, "/nonexistent-st/hidden/f", &e),
			  SANDTRACE_DENY);
	ck_assert_int_eq(e, ENOENT);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_READ, "/nonexistent-st/hidden/f", &e),
			  SANDTRACE_DENY);
	ck_assert_int_eq(e, ENOENT);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_EXEC, "/nonexistent-st/ro/f", &e),
			  SANDTRACE_DENY);
	ck_assert_int_eq(e, ENOENT);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_READ, "/nonexistent-st/ro/f", &e),
			  SANDTRACE_ALLOW);
	ck_assert_int_eq(e, 0);
	free(t);
	st__policy_free(&p);
}
END_TEST

START_TEST(errors_name_file_and_line)
{
	unsetenv("ST_TEST_UNSET_VARIABLE");
	setenv("ST_TEST_EMPTY", "", 1);
	expect_error("# comment\nallow read\n", 2, "empty prefix");
	expect_error("allow read    \t \n", 1, "empty prefix");
	expect_error("allow read ${ST_TEST_EMPTY}\n", 1, "empty prefix");
	expect_error("\n\nallow read usr/lib\n", 3, "not absolute");
	expect_error("allow read ${ST_TEST_EMPTY}usr\n", 1, "not absolute");
	expect_error("allow read /usr\npermit read /usr\n", 2, "unknown action");
	expect_error("allow rread /usr\n", 1, "unknown class");
	expect_error("allow read,exec /usr\n", 1, "unknown class"); /* no lists */
	expect_error("allow READ /usr\n", 1, "unknown class");
	expect_error("allow\n", 1, "missing class");
	expect_error("allow read ${ST_TEST_UNSET_VARIABLE}/x\n", 1, "ST_TEST_UNSET_VARIABLE");
	expect_error("allow read ${ST_TEST_TOP/x\n", 1, "unterminated");
	expect_error("allow read /${9x}\n", 1, "bad variable name");
	expect_error("default ask\n", 1, "default");
	expect_error("default deny\ndefault allow\n", 2, "second");
	/* a trailing comment would have become part of the prefix */
	expect_error("# ok\ndeny write /src   # keep sources read-only\n", 2, "comments go on");
	expect_error("deny write /src\t#\n", 1, "comments go on");
}
END_TEST

/* st__policy_load names the file; --fence refuses `default allow`. */
START_TEST(load_file)
{
	char path[] = "/tmp/st-policy-file-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	const char *text = "allow read /usr\n\nallow read\n";
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);

	struct st__policy p;
	ck_assert_int_eq(st__policy_load(&p, path, false, "/", NULL, err, sizeof(err)), -EINVAL);
	char want[128];
	snprintf(want, sizeof(want), "%s:3: ", path);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "\"%s\"", err);
	ck_assert_uint_eq(p.nrules, 0); /* freed on error */

	FILE *f = fopen(path, "w");
	fputs("default allow\nallow read /usr\n", f);
	fclose(f);
	ck_assert_int_eq(st__policy_load(&p, path, true, "/", NULL, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "--fence"));
	ck_assert_int_eq(st__policy_load(&p, path, false, "/", NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(p.default_action, SANDTRACE_ALLOW);
	ck_assert_str_eq(p.name, path);
	st__policy_free(&p);

	f = fopen(path, "w");
	fputs("allow read /usr\n", f);
	fclose(f);
	ck_assert_int_eq(st__policy_load(&p, path, true, "/", NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(p.default_action, SANDTRACE_DENY);
	st__policy_free(&p);
	unlink(path);

	ck_assert_int_eq(
	    st__policy_load(&p, "/nonexistent-st/policy", false, "/", NULL, err, sizeof(err)),
	    -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent-st/policy: "));
}
END_TEST

START_TEST(embedded_defaults)
{
	struct st__policy p;
	ck_assert_int_eq(st__policy_load(&p, NULL, false, "/", NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(p.nrules, 0);
	ck_assert_uint_eq(p.default_action, SANDTRACE_ALLOW);
	ck_assert_str_eq(p.name, "trace-only");
	st__policy_free(&p);

	ck_assert_int_eq(st__policy_load(&p, NULL, true, "/nonexistent-st/proj",
					 "/nonexistent-st/tmp", err, sizeof(err)),
			 0);
	ck_assert_str_eq(p.name, "fenced");
	ck_assert_uint_eq(p.default_action, SANDTRACE_DENY);
	struct sandtrace_policy_table *t = compile(&p);
	int e;
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_WRITE, "/nonexistent-st/proj/a.o", &e),
			  SANDTRACE_ALLOW);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_WRITE, "/nonexistent-st/tmp/cc.s", &e),
			  SANDTRACE_ALLOW);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_WRITE, "/tmp/x", &e), SANDTRACE_ALLOW);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_WRITE, "/dev/null", &e), SANDTRACE_ALLOW);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_WRITE, "/proc/self/fd/1", &e), SANDTRACE_ALLOW);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_READ, "/usr/include/stdio.h", &e),
			  SANDTRACE_ALLOW);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_EXEC, "/usr/bin/cc", &e), SANDTRACE_ALLOW);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_WRITE, "/usr/include/stdio.h", &e),
			  SANDTRACE_DENY);
	ck_assert_int_eq(e, EACCES);
	ck_assert_uint_eq(decide(t, SANDTRACE_CLASS_READ, "/home/someone/.ssh/id", &e),
			  SANDTRACE_DENY);
	ck_assert_int_eq(e, ENOENT);
	free(t);
	st__policy_free(&p);
}
END_TEST

/* The compiled table in an arena-like buffer at a non-zero offset. */
/* The ask-answer key the daemon inserts and the shim looks up: the policy
 * generation's 4 bytes, then the path; 0 when it does not fit. */
START_TEST(ask_key_layout)
{
	char buf[16];
	uint32_t g = 0x01020304u, back;
	ck_assert_uint_eq(sandtrace_ask_key(buf, sizeof(buf), g, "/a/b", 4), 8);
	memcpy(&back, buf, 4);
	ck_assert_uint_eq(back, g);
	ck_assert_int_eq(memcmp(buf + 4, "/a/b", 4), 0);
	ck_assert_uint_eq(sandtrace_ask_key(buf, sizeof(buf), g, "/0123456789ab", 12), 16);
	ck_assert_uint_eq(sandtrace_ask_key(buf, sizeof(buf), g, "/0123456789abc", 13), 0);
	ck_assert_uint_eq(sandtrace_ask_key(buf, 3, g, "", 0), 0);
}
END_TEST

START_TEST(compile_at_offset)
{
	struct st__policy p;
	ck_assert_int_eq(parse(&p, "deny write /nonexistent-st/x\n"), 0);
	size_t n = st__policy_table_size(&p);
	char *base = calloc(1, 4096 + n);
	ck_assert_int_eq(st__policy_compile(&p, base + 4096, 4096, n), 0);
	ck_assert_int_eq(st__policy_compile(&p, base + 4096, 4096, n - 1), -ENOSPC);
	const struct sandtrace_policy_table *t = (const void *)(base + 4096);
	ck_assert_uint_eq(t->nrules, 1);
	ck_assert_uint_eq(t->rules[0].prefix_len, strlen("/nonexistent-st/x"));
	ck_assert_mem_eq(base + t->rules[0].prefix_off, "/nonexistent-st/x",
			 t->rules[0].prefix_len);
	ck_assert_uint_eq(
	    sandtrace_policy_match(base, t, SANDTRACE_CLASS_WRITE, "/nonexistent-st/x/y", 19, NULL),
	    SANDTRACE_DENY);
	free(base);
	st__policy_free(&p);
}
END_TEST

Suite *suite_policy(void)
{
	Suite *s = suite_create("policy");
	TCase *tc = tcase_create("parse");
	tcase_add_test(tc, comments_and_blanks);
	tcase_add_test(tc, spaces_in_prefix);
	tcase_add_test(tc, byte_order_mark);
	tcase_add_test(tc, classes_and_actions);
	tcase_add_test(tc, variables);
	tcase_add_test(tc, canonical_and_alias);
	tcase_add_test(tc, bin_to_usr_bin);
	tcase_add_test(tc, proc_not_resolved);
	tcase_add_test(tc, errors_name_file_and_line);
	tcase_add_test(tc, load_file);
	tcase_add_test(tc, embedded_defaults);
	suite_add_tcase(s, tc);
	TCase *tm = tcase_create("match");
	tcase_add_test(tm, component_boundary);
	tcase_add_test(tm, first_match_wins);
	tcase_add_test(tm, deny_errno);
	tcase_add_test(tm, ancestors_of_allowed_visible);
	tcase_add_test(tm, compile_at_offset);
	tcase_add_test(tm, ask_key_layout);
	suite_add_tcase(s, tm);
	return s;
}
