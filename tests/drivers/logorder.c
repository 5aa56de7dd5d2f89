/*
 * tests/drivers/logorder.c - a process whose record log and socket disagree in
 * timing (integration/lifecycle.sh).  Run under `sandtrace run`: it appends a
 * HELLO for its own pid ("/logorder/before") to the run's record log, exactly as
 * an image about to exec does (on a connection to the daemon opened and left
 * idle 50 ms before), then sends the next image's HELLO
 * ("/logorder/after") and its EXIT (status 7) by the daemon's socket, as an
 * exec'd image does when the log is full, and leaves with exit_group(7) (no
 * wrapper sees it).  The daemon must dispatch the log's HELLO first: the
 * report then shows the pid's images ..., before (exec'd), after (exit 7).
 * Exit status 2 when it cannot set this up.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../shim/rawsys.h"
#include "sandtrace/log.h"
#include "sandtrace/protocol.h"

static void hello_parts(struct sandtrace_hello *h, struct iovec *v, const char *exe,
			const char *arg)
{
	*h = (struct sandtrace_hello){.pid = getpid(), .ppid = getppid(),
				      .exe_len = (uint32_t)strlen(exe),
				      .argv_len = (uint32_t)strlen(arg) + 1};
	v[0] = (struct iovec){h, sizeof(*h)};
	v[1] = (struct iovec){(void *)exe, h->exe_len};
	v[2] = (struct iovec){(void *)arg, h->argv_len};
}

int main(void)
{
	const char *arena = getenv("SANDTRACE_ARENA"), *sock = getenv("SANDTRACE_SOCKET");
	struct sandtrace_arena a;
	if (!arena || !sock || sandtrace_arena_attach(&a, arena) != 0)
		return 2;
	/* connected first, and idle for a while: the daemon has accepted this
	 * client and drained the log before the HELLO below is appended, so
	 * only the order of the log and the socket decides what comes first */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (fd < 0 || strlen(sock) >= sizeof(sa.sun_path))
		return 2;
	strcpy(sa.sun_path, sock);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		return 2;
	usleep(50000);
	struct sandtrace_hello h;
	struct iovec v[3];
	hello_parts(&h, v, "/logorder/before", "before");
	uint64_t c = sandtrace_log_chunk_new(&a, SANDTRACE_LOG_CHUNK, getpid());
	if (!c || sandtrace_log_append(&a, c, getpid(), getuid(), SANDTRACE_MSG_HELLO, 0, v, 3) != 0)
		return 2;
	sandtrace_log_seal(&a, c);
	hello_parts(&h, v, "/logorder/after", "after");
	struct sandtrace_exit e = {.status = 7}; /* an image's own exit: the code */
	struct iovec ev = {&e, sizeof(e)};
	/* records by the socket carry the log's stamp, as the shim's do */
	if (sandtrace_proto_send(fd, SANDTRACE_MSG_HELLO, sandtrace_log_stamp(&a), 0, v, 3) != 0 ||
	    sandtrace_proto_send(fd, SANDTRACE_MSG_EXIT, sandtrace_log_stamp(&a), 0, &ev, 1) != 0)
		return 2;
	st__sys6(SYS_close, fd, 0, 0, 0, 0, 0);
	st__sys6(SYS_exit_group, 7, 0, 0, 0, 0, 0);
	return 2;
}
