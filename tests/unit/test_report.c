/* tests/unit/test_report.c - daemon/report.c: the summary read from a report's last line alone
 * (st__report_scan_summary), against the whole report's scan, and every case it must refuse. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

#define SUMMARY                                                                                   \
	"{\"type\":\"summary\",\"complete\":false,\"reasons\":[\"a reason\"],\"processes\":5,"     \
	"\"accesses\":7,\"unique_paths\":6,\"violations\":2,\"untraced\":1,\"calls\":900,"         \
	"\"hits\":880,\"messages\":3,\"daemon_messages\":4,\"clients\":1,\"dropped_clients\":0}"

/* A report file made of text: its path (static buffer). */
static const char *report_of(const char *text, size_t len)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/st-test-report.XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
	return path;
}

static const char *records =
    "{\"type\":\"run\",\"version\":1,\"argv\":[\"make\"]}\n"
    "{\"type\":\"access\",\"seq\":1,\"kind\":\"read\",\"path\":\"/a\"}\n"
    "{\"type\":\"violation\",\"seq\":2,\"kind\":\"write\",\"path\":\"/b\"}\n";

START_TEST(summary_from_the_last_line)
{
	char text[4096];
	snprintf(text, sizeof(text), "%s%s\n", records, SUMMARY);
	const char *path = report_of(text, strlen(text));
	struct st__report_scan s, all;
	char err[256];
	ck_assert_int_eq(st__report_scan_summary(path, &s), 1);
	ck_assert_int_eq(st__report_scan(path, &all, err, sizeof(err)), 0);
	ck_assert(s.have_summary && all.have_summary);
	/* the same summary as the whole report's scan */
	ck_assert(!s.summary.complete);
	ck_assert_uint_eq(s.summary.processes, 5);
	ck_assert_uint_eq(s.summary.violations, all.summary.violations);
	ck_assert_uint_eq(s.summary.untraced, all.summary.untraced);
	ck_assert_uint_eq(s.summary.hits, 880);
	ck_assert_uint_eq(json_array_size(s.summary.reasons), 1);
	ck_assert_str_eq(json_string_value(json_array_get(s.summary.reasons, 0)), "a reason");
	/* only the summary: the records before it were not read */
	ck_assert_uint_eq(s.accesses, 0);
	ck_assert_uint_eq(all.accesses, 1);
	st__report_scan_free(&s);
	st__report_scan_free(&all);
	unlink(path);
}
END_TEST

START_TEST(summary_alone)
{
	const char *path = report_of(SUMMARY "\n", strlen(SUMMARY) + 1);
	struct st__report_scan s;
	ck_assert_int_eq(st__report_scan_summary(path, &s), 1);
	ck_assert_uint_eq(s.summary.accesses, 7);
	st__report_scan_free(&s);
	unlink(path);
}
END_TEST

/* Each of these must send the caller to the whole report: 0, and *s freed. */
static void refused(const char *text, size_t len)
{
	const char *path = report_of(text, len);
	struct st__report_scan s;
	ck_assert_int_eq(st__report_scan_summary(path, &s), 0);
	ck_assert(!s.have_summary);
	ck_assert_ptr_null(s.violation_list);
	unlink(path);
}

START_TEST(refused_when_not_a_summary_last)
{
	char text[4096];
	/* a record after the summary (an appended one): the last line is not it */
	snprintf(text, sizeof(text), "%s%s\n{\"type\":\"access\",\"path\":\"/c\"}\n", records,
		 SUMMARY);
	refused(text, strlen(text));
	refused(records, strlen(records));
}
END_TEST

START_TEST(refused_when_torn)
{
	char text[4096];
	/* no newline at the end: a writer stopped in the middle */
	snprintf(text, sizeof(text), "%s%s", records, SUMMARY);
	refused(text, strlen(text));
	/* cut inside the record */
	snprintf(text, sizeof(text), "%s%.*s\n", records, (int)strlen(SUMMARY) - 5, SUMMARY);
	refused(text, strlen(text));
	refused("", 0);
	refused("\n", 1);
}
END_TEST

START_TEST(refused_when_longer_than_the_tail)
{
	/* a summary line longer than what is read of the end: not taken from its tail */
	size_t big = 70000, n = 0;
	char *text = malloc(big + 4096);
	ck_assert_ptr_nonnull(text);
	n += (size_t)sprintf(text, "%s{\"type\":\"summary\",\"complete\":true,\"reasons\":[\"", records);
	memset(text + n, 'r', big);
	n += big;
	n += (size_t)sprintf(text + n, "\"],\"processes\":1}\n");
	refused(text, n);
	free(text);
}
END_TEST

START_TEST(refused_when_policy_reloaded)
{
	/* a run whose policy was reloaded: the summary line counts the reloads, and the last
	 * policy record the summary names is only in the whole report */
	char text[4096];
	snprintf(text, sizeof(text),
		 "%s{\"type\":\"policy\",\"seq\":3,\"policy\":\"p\",\"rules\":2,"
		 "\"default\":\"allow\",\"generation\":1}\n%.*s,\"policy_reloads\":1}\n",
		 records, (int)strlen(SUMMARY) - 1, SUMMARY);
	refused(text, strlen(text));
	struct st__report_scan all;
	char err[256];
	const char *path = report_of(text, strlen(text));
	ck_assert_int_eq(st__report_scan(path, &all, err, sizeof(err)), 0);
	ck_assert_uint_eq(all.policy_reloads, 1);
	ck_assert_uint_eq(all.summary.policy_reloads, 1);
	st__report_scan_free(&all);
	unlink(path);
}
END_TEST

START_TEST(refused_when_missing)
{
	struct st__report_scan s;
	ck_assert_int_eq(st__report_scan_summary("/nonexistent/report.jsonl", &s), 0);
	ck_assert_int_eq(st__report_scan_summary("/tmp", &s), 0);
}
END_TEST

Suite *suite_report(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("summary");
	tcase_add_test(tc, summary_from_the_last_line);
	tcase_add_test(tc, summary_alone);
	tcase_add_test(tc, refused_when_not_a_summary_last);
	tcase_add_test(tc, refused_when_torn);
	tcase_add_test(tc, refused_when_longer_than_the_tail);
	tcase_add_test(tc, refused_when_policy_reloaded);
	tcase_add_test(tc, refused_when_missing);
	suite_add_tcase(s, tc);
	return s;
}
