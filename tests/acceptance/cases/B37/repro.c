/* B37: wordexp's command substitution runs /bin/sh with libc's internal
 * posix_spawn, also after the program took LD_PRELOAD out of its own
 * environment. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <wordexp.h>

int main(void)
{
	wordexp_t we;
	int r = wordexp("$(cat w1) `cat w2`", &we, 0);
	printf("wordexp %d:", r);
	for (size_t i = 0; r == 0 && i < we.we_wordc; i++)
		printf(" %s", we.we_wordv[i]);
	printf("\n");
	if (r == 0)
		wordfree(&we);
	unsetenv("LD_PRELOAD"); /* a build that scrubs its environment */
	r = wordexp("$(cat w3)", &we, 0);
	printf("scrubbed %d: %s\n", r, r == 0 && we.we_wordc ? we.we_wordv[0] : "-");
	if (r == 0)
		wordfree(&we);
	r = wordexp("$(cat w1)", &we, WRDE_NOCMD);
	printf("nocmd %d\n", r);
	return 0;
}
