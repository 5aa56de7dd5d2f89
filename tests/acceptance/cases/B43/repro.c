/* B43: dlopen and dlmopen of a bare name, found along LD_LIBRARY_PATH: the
 * loader opens the file it finds itself, inside ld.so. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

static void load(const char *name, int m)
{
	void *h = m ? dlmopen(LM_ID_BASE, name, RTLD_NOW) : dlopen(name, RTLD_NOW);
	if (!h) {
		printf("%s %s: %s\n", m ? "dlmopen" : "dlopen", name, dlerror());
		return;
	}
	int (*f)(void) = (int (*)(void))dlsym(h, "which");
	printf("%s %s: %d\n", m ? "dlmopen" : "dlopen", name, f ? f() : -1);
}

int main(void)
{
	load("libb43.so", 0);  /* in hid/ (1) and vis/ (2) */
	load("libm43.so", 1);  /* in hid/ (3) and vis/ (4) */
	load("libonly.so", 0); /* in hid/ only */
	load("libnone.so", 0); /* nowhere */
	return 0;
}
