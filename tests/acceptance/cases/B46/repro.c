/* B46: gettext's message catalogs: DIR/LANG/LC_MESSAGES/DOMAIN.mo, DIR bound by
 * bindtextdomain, opened and mapped by libc's internal open at the first
 * lookup of the domain. */
#define _GNU_SOURCE
#include <libintl.h>
#include <locale.h>
#include <stdio.h>

int main(void)
{
	setlocale(LC_ALL, "");
	bindtextdomain("b46", "tr");   /* a relative directory: <W>/tr */
	bindtextdomain("b46x", "hid"); /* <W>/hid */
	textdomain("b46");
	printf("gettext: %s\n", gettext("hello"));
	printf("ngettext: %s\n", ngettext("file", "files", 2));
	printf("dgettext: %s\n", dgettext("b46x", "hello"));
	printf("dcgettext: %s\n", dcgettext("b46x", "bye", LC_MESSAGES));
	printf("dgettext none: %s\n", dgettext("b46none", "hello"));
	return 0;
}
