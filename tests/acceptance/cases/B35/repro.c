/* B35: the user and group databases, read by glibc's nss with its own
 * internal opens: getpwnam, getpwuid_r, getgrgid, getgrouplist. */
#define _GNU_SOURCE
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	struct passwd *pw = getpwnam("root");
	struct passwd pwb, *pr = NULL;
	char buf[4096];
	int r = getpwuid_r(0, &pwb, buf, sizeof(buf), &pr);
	struct group *gr = getgrgid(0);
	gid_t groups[64];
	int n = 64;
	int g = getgrouplist("root", 0, groups, &n);
	printf("getpwnam %s\n", pw ? pw->pw_name : "-");
	printf("getpwuid_r %d %s\n", r, pr ? pr->pw_dir : "-");
	printf("getgrgid %s\n", gr ? gr->gr_name : "-");
	printf("getgrouplist %s\n", g >= 1 ? "ok" : "failed");
	return 0;
}
