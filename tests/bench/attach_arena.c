/*
 * tests/bench/attach_arena.c - make the arena of scripts/bench-start's "attach" variant
 * (tests/bench/attach_preload.c): a POSIX shared-memory arena of the daemon's default size
 * with its record log, as sandtraced makes one, and no Ctrie, policy or daemon.
 *
 * usage: attach_arena           prints the arena's name (for BENCH_ATTACH_ARENA), exit 0
 *        attach_arena -u NAME   removes it
 * Errors go to stderr with exit 1.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandtrace/arena.h"
#include "sandtrace/log.h"

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "-u") == 0) {
		int rc = sandtrace_arena_unlink(argv[2]);
		if (rc < 0) {
			fprintf(stderr, "attach_arena: %s: %s\n", argv[2], strerror(-rc));
			return 1;
		}
		return 0;
	}
	struct sandtrace_arena a;
	char name[SANDTRACE_ARENA_NAME_MAX];
	int rc = sandtrace_arena_create(&a, SANDTRACE_ARENA_DEFAULT_SIZE, 0, name);
	if (rc == 0)
		rc = sandtrace_log_init(&a, sandtrace_log_cap_for(SANDTRACE_ARENA_DEFAULT_SIZE));
	if (rc < 0) {
		/* an arena made before the log failed is removed: nobody else knows its name */
		if (name[0] != '\0')
			sandtrace_arena_unlink(name);
		fprintf(stderr, "attach_arena: %s\n", strerror(-rc));
		return 1;
	}
	/* Named after bench-start (the parent, alive while the arena is in use), not
	 * after this maker, which exits now: a daemon's start removes arenas whose
	 * name's pid is gone unless it can read their owner, which a daemon of
	 * another layout version cannot (bench-start --compare across versions) */
	const char *hex = strrchr(name, '-');
	char renamed[SANDTRACE_ARENA_NAME_MAX], from[SANDTRACE_ARENA_NAME_MAX + 16],
	    to[SANDTRACE_ARENA_NAME_MAX + 16];
	if (hex && name[0] == '/' && !strchr(name + 1, '/') &&
	    snprintf(renamed, sizeof(renamed), "/sandtrace-%ld%s", (long)getppid(), hex) <
		(int)sizeof(renamed)) {
		snprintf(from, sizeof(from), "/dev/shm%s", name);
		snprintf(to, sizeof(to), "/dev/shm%s", renamed);
		if (rename(from, to) == 0)
			strcpy(name, renamed);
	}
	printf("%s\n", name);
	return 0;
}
