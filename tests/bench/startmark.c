/*
 * tests/bench/startmark.c - the mark at the start of a process's preload constructors
 * (scripts/bench-start): the monotonic clock and the process's minor faults, taken in this
 * object's constructor.  Preloaded after the object measured (LD_PRELOAD="X startmark.so":
 * the loader runs preloaded objects' constructors last-listed first, so this one runs
 * before X's) and read by tests/bench/startend.c's main, which links against it.
 */
#include <sys/resource.h>
#include <time.h>

struct timespec startmark_t0;
long startmark_minflt0;

__attribute__((constructor)) static void startmark(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	startmark_minflt0 = u.ru_minflt;
	clock_gettime(CLOCK_MONOTONIC, &startmark_t0);
}
