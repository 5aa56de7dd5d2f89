/*
 * tests/bench/attach_preload.c - a plain attach (scripts/bench-start, variant "attach"): a
 * preload whose constructor does only what sharing an arena with the run asks of a
 * process, written plainly with the project's own arena code (libsandtrace_shm.a: the same
 * placement of the map, the same header, the same small log chunks), and nothing else of
 * the shim's: no environment parsing, no memo of its libraries, no exit hook, no thread
 * buffers, and none of the shim's care for the pages a start touches (its raw system
 * calls in place of libc's shm_open and getenv, its hot variables kept on one page).
 *
 *   sandtrace_arena_attach (shm_open, fstat, map, close; the header's magic, version and
 *   size read), sandtrace_log_chunk_new (a small chunk: a fetch-and-add in the header's
 *   page) and one sandtrace_log_append of a HELLO (pid, ppid, exe and argv, as the shim's).
 *
 * The arena is BENCH_ATTACH_ARENA's, made by tests/bench/attach_arena.c for the benchmark
 * (no run, no daemon: nobody reads the records).  Without the variable, or when any step
 * fails, the constructor stops there.  "traced - attach" sets the shim's whole start
 * against this straightforward one.
 */
#define _GNU_SOURCE
#include <string.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sandtrace/arena.h"
#include "sandtrace/log.h"
#include "sandtrace/protocol.h"

__attribute__((constructor)) static void plain_attach(int argc, char **argv)
{
	enum { MAX_PARTS = 16 };
	const char *name = getenv("BENCH_ATTACH_ARENA");
	struct sandtrace_arena a;
	if (name == NULL || argc + 2 > MAX_PARTS || sandtrace_arena_attach(&a, name) != 0)
		return;
	struct sandtrace_hello h = {.pid = (int32_t)syscall(SYS_getpid),
				    .ppid = (int32_t)syscall(SYS_getppid)};
	uint64_t chunk = sandtrace_log_chunk_new(&a, SANDTRACE_LOG_CHUNK_FIRST, h.pid);
	if (chunk == 0)
		return;
	struct iovec iov[MAX_PARTS];
	int k = 0;
	iov[k++] = (struct iovec){&h, sizeof(h)};
	h.exe_len = argc > 0 ? (uint32_t)strlen(argv[0]) : 0;
	iov[k++] = (struct iovec){argc > 0 ? argv[0] : "", h.exe_len};
	for (int i = 0; i < argc; i++) {
		iov[k++] = (struct iovec){argv[i], strlen(argv[i]) + 1};
		h.argv_len += (uint32_t)iov[k - 1].iov_len;
	}
	sandtrace_log_append(&a, chunk, h.pid, (uint32_t)getuid(), SANDTRACE_MSG_HELLO, 0, iov, k);
}
