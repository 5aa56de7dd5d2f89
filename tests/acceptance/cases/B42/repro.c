/* B42: files libc opens by itself along a search: a message catalog named
 * without a slash (catopen looks along NLSPATH), and the time zone's file
 * (tzset, localtime, localtime_r, mktime, ctime read TZ's file, relative
 * to TZDIR or absolute). */
#define _GNU_SOURCE
#include <errno.h>
#include <nl_types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void cat(const char *name, int flag)
{
	nl_catd c = catopen(name, flag);
	if (c == (nl_catd)-1) {
		printf("catopen %s: %s\n", name, strerrorname_np(errno));
		return;
	}
	printf("catopen %s: %s\n", name, catgets(c, 1, 1, "none"));
	catclose(c);
}

int main(void)
{
	cat("hello", 0);         /* NLSPATH's first place: nls/fr/hello.cat */
	cat("other", 0);         /* only in the second place: alt/other.cat */
	cat("rel", NL_CAT_LOCALE); /* a place without a slash: ./rel.cat (LC_MESSAGES is C) */
	cat("missing", 0);       /* nowhere: ENOENT */
	time_t t = 0;
	struct tm tm;
	char buf[64];
	/* each call below is the first to see its TZ, and reads the file */
	localtime_r(&t, &tm); /* TZ: an absolute file (the first call of the process) */
	printf("localtime_r [%s] %d\n", tm.tm_zone, tm.tm_hour);
	setenv("TZ", "Tokyo", 1); /* a name relative to TZDIR */
	struct tm *m = localtime(&t);
	printf("localtime [%s] %d\n", m->tm_zone, m->tm_hour);
	setenv("TZ", ":Zulu", 1);
	tm = (struct tm){.tm_year = 70, .tm_mday = 1, .tm_hour = 12};
	printf("mktime %lld\n", (long long)mktime(&tm));
	setenv("TZ", getenv("ZONE2"), 1);
	printf("ctime %s", ctime(&t));
	setenv("TZ", "Tokyo", 1);
	tzset();
	printf("tzset [%s]\n", tzname[0]);
	return 0;
}
