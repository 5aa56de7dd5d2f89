/* B44: a locale's files, loaded by setlocale and newlocale with libc's
 * internal open (and mmap) from the LOCPATH directories. */
#define _GNU_SOURCE
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	char *r = setlocale(LC_ALL, ""); /* LC_ALL=xx_YY.UTF-8: xx_YY.utf8/LC_* */
	printf("setlocale %s\n", r ? r : "NULL");
	printf("codeset %s\n", nl_langinfo(CODESET));
	locale_t l = newlocale(LC_CTYPE_MASK, "zz_ZZ", 0); /* only in hid/ */
	printf("newlocale zz_ZZ %s\n", l ? nl_langinfo_l(CODESET, l) : strerrorname_np(errno));
	if (l)
		freelocale(l);
	l = newlocale(LC_ALL_MASK, "ww_WW", 0); /* nowhere */
	printf("newlocale ww_WW %s\n", l ? nl_langinfo_l(CODESET, l) : strerrorname_np(errno));
	return 0;
}
