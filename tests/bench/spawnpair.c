/*
 * tests/bench/spawnpair.c - what a traced process pays to start and end, paired within
 * one run (scripts/bench-spawn).  Run under `sandtrace run`: it spawns ROUNDS rounds of
 * /bin/true, each round one child per variant in rotating order, and times each child
 * from vfork to the end of its wait:
 *
 *   bare      LD_PRELOAD=BARE_SO, no SANDTRACE_* variables (any preload's cost)
 *   inactive  LD_PRELOAD of the shim, no SANDTRACE_* variables (the shim loaded, idle)
 *   traced    the environment as this process got it (the shim, the run's socket, arena),
 *             with SANDTRACE_EXE made for /bin/true, as the shim's exec wrapper makes it
 *   noarena   as traced without SANDTRACE_ARENA (every record a daemon message)
 *   spawned   posix_spawn through the shim's wrapper, traced (the parent's side too:
 *             the wrapper inspects the program and fixes the environment)
 *   rawspawn  libc's own posix_spawn (looked up in libc, past the shim), traced
 *             environment: spawned - rawspawn is the wrapper's own cost in the parent
 *   barespawn libc's own posix_spawn, the bare preload's environment: spawned -
 *             barespawn is the whole per-process cost of a spawn, parent and child,
 *             with the same spawn mechanics on both sides
 *   floor0    MAPTOUCH (tests/bench/maptouch.c) exiting at once, bare environment
 *   floor     MAPTOUCH mapping this run's arena and reading 5 pages of its first span:
 *             floor - floor0 is what attaching costs a process that runs no sandtrace
 *             code (the page tables and faults of the map, on this machine)
 *
 * The first four are exec'd with an inline system call, which no wrapper sees (the shim's
 * execve and syscall() wrappers would put its variables back).  Prints, for each variant
 * but bare, the median over the rounds of its time minus the bare child's of the same
 * round, with the quartiles: rounds run close together, so a slow spell of the machine
 * hits every variant of a round alike.  x86-64 Linux only (the inline execve).
 *
 * usage: spawnpair ROUNDS BARE_SO SHIM_SO MAPTOUCH
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *,
		     const posix_spawnattr_t *, char *const[], char *const[]);

#include "../../shim/rawsys.h"

#if !ST_HAVE_RAW_SYSCALL
int main(void)
{
	fputs("spawnpair: x86-64 Linux only\n", stderr);
	return 2;
}
#else
/* execve(2) by an inline system call: no interposed function sees it */
static long raw_execve(const char *p, char *const a[], char *const e[])
{
	return st__sys6(SYS_execve, (long)p, (long)a, (long)e, 0, 0, 0);
}

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

enum { BARE, INACTIVE, TRACED, NOARENA, SPAWNED, RAWSPAWN, BARESPAWN, FLOOR0, FLOOR, NV };
static const char *const names[NV] = {"bare", "inactive", "traced", "noarena", "spawned", "rawspawn", "barespawn", "floor0", "floor"};

/* environ less the variables drop() names, plus one LD_PRELOAD=so when so is set; the
 * traced variants get SANDTRACE_EXE as the shim's exec wrapper would set it for
 * /bin/true (this process's own, inherited, names another exec) */
static char **env_of(int v, const char *so)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **e = calloc(n + 3, sizeof(*e));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *s = environ[i];
		bool sandtrace = strncmp(s, "SANDTRACE_", 10) == 0;
		if ((v == BARE || v == INACTIVE) && (sandtrace || strncmp(s, "LD_PRELOAD=", 11) == 0))
			continue;
		if (v == NOARENA && strncmp(s, "SANDTRACE_ARENA=", 16) == 0)
			continue;
		if (strncmp(s, "SANDTRACE_EXE=", 14) == 0)
			continue;
		e[k++] = environ[i];
	}
	char real[4096];
	if ((v == TRACED || v == NOARENA) && realpath("/bin/true", real)) {
		char *p = malloc(strlen(real) + 32);
		sprintf(p, "SANDTRACE_EXE=9:/bin/true%s", real);
		e[k++] = p;
	}
	if (so) {
		char *p = malloc(strlen(so) + 12);
		sprintf(p, "LD_PRELOAD=%s", so);
		e[k++] = p;
	}
	return e;
}

int main(int argc, char **argv)
{
	if (argc != 5 || atoi(argv[1]) < 1) {
		fputs("usage: spawnpair ROUNDS BARE_SO SHIM_SO MAPTOUCH\n", stderr);
		return 2;
	}
	int rounds = atoi(argv[1]);
	if (!getenv("SANDTRACE_SOCKET")) {
		fputs("spawnpair: run it under `sandtrace run`\n", stderr);
		return 2;
	}
	char **env[NV] = {env_of(BARE, argv[2]), env_of(INACTIVE, argv[3]), env_of(TRACED, NULL),
			  env_of(NOARENA, NULL), environ, environ, NULL};
	env[BARESPAWN] = env[FLOOR0] = env[FLOOR] = env[BARE];
	const char *arena = getenv("SANDTRACE_ARENA");
	char *const av0[] = {argv[4], "", "0", NULL};
	char *const av5[] = {argv[4], (char *)(arena ? arena : ""), "5", NULL};
	/* libc's posix_spawn, not the shim's (which the program's own calls reach) */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	spawn_fn *libc_spawn = libc ? (spawn_fn *)dlsym(libc, "posix_spawn") : NULL;
	if (!libc_spawn) {
		fputs("spawnpair: libc's posix_spawn not found\n", stderr);
		return 2;
	}
	char *const av[] = {"/bin/true", NULL};
	double *t[NV];
	for (int v = 0; v < NV; v++)
		t[v] = calloc((size_t)rounds, sizeof(double));
	for (int i = 0; i < rounds; i++) {
		for (int j = 0; j < NV; j++) {
			int v = (i + j) % NV;
			pid_t p;
			double t0 = now_us();
			if (v >= SPAWNED) {
				if ((v == SPAWNED ? posix_spawn : libc_spawn)(&p, av[0], NULL, NULL, av,
									       env[v]) != 0)
					return 1;
			} else if ((p = vfork()) == 0) {
				char *const *a = v == FLOOR0 ? av0 : v == FLOOR ? av5 : av;
				raw_execve(a[0], a, env[v]);
				_exit(127);
			}
			int st;
			if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
				fprintf(stderr, "spawnpair: %s child failed\n", names[v]);
				return 1;
			}
			t[v][i] = now_us() - t0;
		}
	}
	double *d = calloc((size_t)rounds, sizeof(double));
	memcpy(d, t[BARE], (size_t)rounds * sizeof(double));
	qsort(d, (size_t)rounds, sizeof(double), cmp_double);
	printf("bare: median %.0f us per child (fork, exec, run, exit, wait)\n", d[rounds / 2]);
	for (int v = INACTIVE; v < FLOOR0; v++) {
		for (int i = 0; i < rounds; i++)
			d[i] = t[v][i] - t[BARE][i];
		qsort(d, (size_t)rounds, sizeof(double), cmp_double);
		printf("%s - bare: median %+.0f us (quartiles %+.0f, %+.0f) over %d rounds\n", names[v],
		       d[rounds / 2], d[rounds / 4], d[3 * rounds / 4], rounds);
	}
	static const int pairs[][2] = {{SPAWNED, BARESPAWN}, {FLOOR, FLOOR0}};
	for (unsigned k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
		for (int i = 0; i < rounds; i++)
			d[i] = t[pairs[k][0]][i] - t[pairs[k][1]][i];
		qsort(d, (size_t)rounds, sizeof(double), cmp_double);
		printf("%s - %s: median %+.0f us (quartiles %+.0f, %+.0f) over %d rounds\n",
		       names[pairs[k][0]], names[pairs[k][1]], d[rounds / 2], d[rounds / 4],
		       d[3 * rounds / 4], rounds);
	}
	return 0;
}
#endif
