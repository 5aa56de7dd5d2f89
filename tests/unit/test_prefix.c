/* tests/unit/test_prefix.c - Check suite for shm/policy_match.c: component-bounded prefixes, first-match rules. */
#include <check.h>
#include <stdalign.h>
#include <string.h>

#include "sandtrace/common.h"
#include "sandtrace/policy.h"

static int covers(const char *prefix, const char *path)
{
	return sandtrace_prefix_covers(prefix, strlen(prefix), path, strlen(path));
}

START_TEST(component_boundaries)
{
	ck_assert_int_eq(covers("/var/tmp", "/var/tmp"), 1);
	ck_assert_int_eq(covers("/var/tmp", "/var/tmp/x"), 1);
	ck_assert_int_eq(covers("/var/tmp", "/var/tmp/x/y/z"), 1);
	ck_assert_int_eq(covers("/var/tmp", "/var/tmpfoo"), 0);
	ck_assert_int_eq(covers("/var/tmp", "/var/tm"), 0);
	ck_assert_int_eq(covers("/var/tmp", "/var"), 0);
	ck_assert_int_eq(covers("/var/tmp", "/var/tmq/x"), 0);
	ck_assert_int_eq(covers("/var/tmp", "var/tmp/x"), 0);
	ck_assert_int_eq(covers("/usr", "/usr/"), 1);
	ck_assert_int_eq(covers("/usr/lib", "/usr/lib64/libc.so"), 0);
}
END_TEST

START_TEST(root_and_empty)
{
	ck_assert_int_eq(covers("/", "/"), 1);
	ck_assert_int_eq(covers("/", "/etc/passwd"), 1);
	ck_assert_int_eq(covers("/", "relative"), 0);
	ck_assert_int_eq(covers("/", ""), 0);
	/* an empty prefix must not switch the sandbox off (MacPorts' bug) */
	ck_assert_int_eq(covers("", "/etc/passwd"), 0);
	ck_assert_int_eq(covers("", ""), 0);
	ck_assert_int_eq(sandtrace_prefix_covers(NULL, 0, "/x", 2), 0);
}
END_TEST

START_TEST(lengths_not_nul)
{
	/* lengths rule, not NUL terminators: bytes past plen/len are ignored */
	ck_assert_int_eq(sandtrace_prefix_covers("/var/tmpXXX", 8, "/var/tmp/a", 10), 1);
	ck_assert_int_eq(sandtrace_prefix_covers("/var/tmp", 8, "/var/tmpfoo", 8), 1);
	ck_assert_int_eq(sandtrace_prefix_covers("/a\0b", 4, "/a\0b/c", 6), 1);
	ck_assert_int_eq(sandtrace_prefix_covers("/a\0b", 4, "/a\0c/c", 6), 0);
	/* a trailing slash on a (non-canonical) prefix is the same prefix */
	ck_assert_int_eq(covers("/var/tmp/", "/var/tmp"), 1);
	ck_assert_int_eq(covers("/var/tmp/", "/var/tmp/x"), 1);
	ck_assert_int_eq(covers("/var/tmp/", "/var/tmpfoo"), 0);
	ck_assert_int_eq(covers("//", "/x"), 1);
}
END_TEST

/* A compiled table in a buffer: rules then prefix bytes, offsets from the buffer. */
static alignas(8) unsigned char g_buf[1024];

struct rule_spec {
	uint8_t action, classes;
	const char *prefix;
};

static struct sandtrace_policy_table *build(uint8_t dflt, const struct rule_spec *rules, unsigned n)
{
	struct sandtrace_policy_table *t = (void *)g_buf;
	size_t off = sizeof(*t) + n * sizeof(t->rules[0]);

	memset(g_buf, 0, sizeof(g_buf));
	t->nrules = n;
	t->default_action = dflt;
	for (unsigned i = 0; i < n; i++) {
		size_t l = strlen(rules[i].prefix);
		t->rules[i].action = rules[i].action;
		t->rules[i].classes = rules[i].classes;
		t->rules[i].prefix_len = (uint32_t)l;
		t->rules[i].prefix_off = off;
		memcpy(g_buf + off, rules[i].prefix, l);
		off += l;
	}
	return t;
}

static unsigned match(const struct sandtrace_policy_table *t, unsigned cls, const char *p, int *idx)
{
	return sandtrace_policy_match(g_buf, t, cls, p, strlen(p), idx);
}

START_TEST(first_match_wins)
{
	const struct rule_spec rules[] = {
		{SANDTRACE_DENY, SANDTRACE_CLASS_ANY, "/home/user/.ssh"},
		{SANDTRACE_ALLOW, SANDTRACE_CLASS_WRITE, "/var/tmp"},
		{SANDTRACE_ASK, SANDTRACE_CLASS_READ | SANDTRACE_CLASS_EXEC, "/opt"},
		{SANDTRACE_ALLOW, SANDTRACE_CLASS_READ, "/"},
		{SANDTRACE_ALLOW, SANDTRACE_CLASS_ANY, "/home/user"},
	};
	struct sandtrace_policy_table *t = build(SANDTRACE_DENY, rules, 5);
	int idx = 99;

	ck_assert_uint_eq(match(t, SANDTRACE_CLASS_READ, "/home/user/.ssh/id_rsa", &idx), SANDTRACE_DENY);
	ck_assert_int_eq(idx, 0);
	/* rule 4 would allow, but rule 0 comes first */
	ck_assert_uint_eq(match(t, SANDTRACE_CLASS_WRITE, "/home/user/.ssh", &idx), SANDTRACE_DENY);
	ck_assert_int_eq(idx, 0);
	ck_assert_uint_eq(match(t, SANDTRACE_CLASS_WRITE, "/home/user/.sshx", &idx), SANDTRACE_ALLOW);
	ck_assert_int_eq(idx, 4);
	ck_assert_uint_eq(match(t, SANDTRACE_CLASS_WRITE, "/var/tmp/cc.o", &idx), SANDTRACE_ALLOW);
	ck_assert_int_eq(idx, 1);
	/* write rule does not govern reads: falls to "/" for reads */
	ck_assert_uint_eq(match(t, SANDTRACE_CLASS_READ, "/var/tmp/cc.o", &idx), SANDTRACE_ALLOW);
	ck_assert_int_eq(idx, 3);
	ck_assert_uint_eq(match(t, SANDTRACE_CLASS_WRITE, "/var/tmpfoo", &idx), SANDTRACE_DENY);
	ck_assert_int_eq(idx, -1);
	ck_assert_uint_eq(match(t, SANDTRACE_CLASS_EXEC, "/opt/bin/cc", &idx), SANDTRACE_ASK);
	ck_assert_int_eq(idx, 2);
	ck_assert_uint_eq(match(t, SANDTRACE_CLASS_EXEC, "/usr/bin/cc", &idx), SANDTRACE_DENY);
	ck_assert_int_eq(idx, -1);
	ck_assert_uint_eq(match(t, SANDTRACE_CLASS_WRITE, "/etc/passwd", NULL), SANDTRACE_DENY);
}
END_TEST

START_TEST(empty_table_default)
{
	struct sandtrace_policy_table *t = build(SANDTRACE_ALLOW, NULL, 0);
	int idx = 5;

	ck_assert_uint_eq(match(t, SANDTRACE_CLASS_WRITE, "/etc/passwd", &idx), SANDTRACE_ALLOW);
	ck_assert_int_eq(idx, -1);
	t->default_action = SANDTRACE_DENY;
	ck_assert_uint_eq(match(t, SANDTRACE_CLASS_READ, "/etc/passwd", &idx), SANDTRACE_DENY);
	/* no table at all: fail closed */
	ck_assert_uint_eq(sandtrace_policy_match(g_buf, NULL, SANDTRACE_CLASS_READ, "/x", 2, &idx),
			  SANDTRACE_DENY);
	ck_assert_int_eq(idx, -1);
}
END_TEST

START_TEST(empty_prefix_rule_matches_nothing)
{
	const struct rule_spec rules[] = {
		{SANDTRACE_ALLOW, SANDTRACE_CLASS_ANY, ""},
	};
	struct sandtrace_policy_table *t = build(SANDTRACE_DENY, rules, 1);
	int idx;

	ck_assert_uint_eq(match(t, SANDTRACE_CLASS_READ, "/etc/shadow", &idx), SANDTRACE_DENY);
	ck_assert_int_eq(idx, -1);
}
END_TEST

Suite *suite_prefix(void)
{
	Suite *s = suite_create("prefix");
	TCase *tc = tcase_create("prefix");

	tcase_add_test(tc, component_boundaries);
	tcase_add_test(tc, root_and_empty);
	tcase_add_test(tc, lengths_not_nul);
	tcase_add_test(tc, first_match_wins);
	tcase_add_test(tc, empty_table_default);
	tcase_add_test(tc, empty_prefix_rule_matches_nothing);
	suite_add_tcase(s, tc);
	return s;
}
