/* B38: freopen(NULL, mode, stream) reopens the stream's own file with a new
 * mode: "r+" on a stream opened "r" makes it writable. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	FILE *f = fopen(argv[1], "r");
	if (!f) {
		printf("fopen: %s\n", strerrorname_np(errno));
		return 1;
	}
	FILE *g = freopen(NULL, "r+", f);
	printf("freopen r+: %s\n", g ? "ok" : strerrorname_np(errno));
	if (g) {
		fputs("X", g);
		fclose(g);
	}
	FILE *h = fopen(argv[1], "r");
	h = freopen(NULL, "r", h); /* no more than it has: as untraced */
	printf("freopen r: %s\n", h ? "ok" : strerrorname_np(errno));
	char b[8] = {0};
	if (h && fgets(b, sizeof(b), h))
		printf("content %s", b);
	return 0;
}
