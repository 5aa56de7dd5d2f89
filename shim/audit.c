/* shim/audit.c - libsandtrace-audit.so: an rtld-audit module (LD_AUDIT) recording the loader's own opens of shared libraries. */
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "sandtrace/arena.h"
#include "sandtrace/common.h"
#include "sandtrace/ctrie.h"
#include "sandtrace/log.h"
#include "sandtrace/protocol.h"

/*
 * The loader calls an audit module in a namespace of its own (with its own
 * copy of libc), so it shares nothing with libsandtrace.so but the arena and
 * the socket.  Each library the loader maps (DT_NEEDED and dlopen) is a READ
 * of its file; the Ctrie makes every process after the first one skip the
 * message, and the connection is opened only on such a first sighting.
 * See rtld-audit(7): la_version, la_objopen.
 */

#define EXPORT __attribute__((visibility("default")))

static struct sandtrace_arena arena;
static int arena_state; /* 0 untried, 1 attached, -1 none */
static int sock = -1;
static int32_t sock_pid;     /* the process that connected it */
static dev_t sock_dev;       /* ... and what it is, to know it again */
static ino_t sock_ino;
static uint64_t chunk;   /* this module's record-log chunk (a writer of its own) */
static int32_t chunk_pid;
static char sock_path[108];
static bool gone;        /* the daemon could not be reached: not tried again */
static const char *own_lib, *own_audit; /* our own objects are not the build's inputs */

/* A record that reached neither the log nor the daemon: counted in the
 * arena's header, as the shim counts its own (client.c note_lost). */
static void lost(void)
{
	if (arena_state == 1)
		atomic_fetch_add_explicit(&sandtrace_arena_hdr(&arena)->lost, 1,
					  memory_order_relaxed);
}

static const char *env_get(const char *name)
{
	extern char **environ;
	size_t n = strlen(name);
	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

EXPORT unsigned int la_version(unsigned int version)
{
	const char *s = env_get(SANDTRACE_ENV_SOCKET);
	if (s && strlen(s) < sizeof(sock_path))
		memcpy(sock_path, s, strlen(s) + 1);
	own_lib = env_get(SANDTRACE_ENV_LIB);
	own_audit = env_get(SANDTRACE_ENV_AUDIT);
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

/* Is sock still the socket this module connected?  The program may have
 * closed its number and put a file of its own there (closefrom and an open,
 * dup2 onto it): then it is the program's, never to be written to or closed.
 * A forked child holds a copy of its parent's connection: not its own to
 * write to (its records would be its parent's), closed there. */
static bool sock_is_ours(void)
{
	struct stat st;
	if (sock < 0)
		return false;
	bool same = syscall(SYS_fstat, sock, &st) == 0 && S_ISSOCK(st.st_mode) &&
		    st.st_dev == sock_dev && st.st_ino == sock_ino;
	if (same && sock_pid == (int32_t)syscall(SYS_getpid))
		return true;
	if (same)
		syscall(SYS_close, sock);
	sock = -1;
	return false;
}

static void connect_once(void)
{
	if (sock_is_ours() || !sock_path[0] || gone)
		return;
	int fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memcpy(sa.sun_path, sock_path, sizeof(sa.sun_path) - 1);
	if (fd < 0 || syscall(SYS_connect, fd, &sa, sizeof(sa)) != 0) {
		if (fd >= 0)
			syscall(SYS_close, fd);
		gone = true; /* daemon gone: stop trying */
		return;
	}
	int n = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 900);
	if (n >= 0) {
		syscall(SYS_close, fd);
		fd = n;
	}
	struct stat st;
	if (syscall(SYS_fstat, fd, &st) != 0) {
		syscall(SYS_close, fd);
		return;
	}
	sock = fd;
	sock_pid = (int32_t)syscall(SYS_getpid);
	sock_dev = st.st_dev;
	sock_ino = st.st_ino;
	struct sandtrace_hello h = {.pid = (int32_t)syscall(SYS_getpid),
				    .ppid = (int32_t)syscall(SYS_getppid)};
	struct iovec iov[1] = {{&h, sizeof(h)}};
	if (sandtrace_proto_send(sock, SANDTRACE_MSG_HELLO, 0, SANDTRACE_HF_THREAD, iov, 1) < 0) {
		syscall(SYS_close, sock);
		sock = -1;
		gone = true;
	}
}

EXPORT unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	const char *name = map->l_name;
	if (!name || name[0] != '/' || !sock_path[0])
		return 0;
	size_t len = strlen(name);
	if ((own_lib && !strcmp(name, own_lib)) || (own_audit && !strcmp(name, own_audit)))
		return 0;
	if (arena_state == 0) {
		const char *an = env_get(SANDTRACE_ENV_ARENA);
		arena_state = an && *an && sandtrace_arena_attach(&arena, an) == 0 ? 1 : -1;
	}
	if (arena_state == 1 &&
	    sandtrace_ctrie_insert(&arena, SANDTRACE_KIND_READ, name, len, SANDTRACE_V_RECORDED,
				   NULL) == 0)
		return 0; /* recorded already */
	/* what the loader mapped, not judged here (the shim's init judges its
	 * libraries): the daemon reports the policy's verdict on it */
	struct sandtrace_access acc = {.kind = SANDTRACE_KIND_READ,
				       .flags = SANDTRACE_AF_UNJUDGED,
				       .path_len = (uint32_t)len};
	struct iovec iov[2] = {{&acc, sizeof(acc)}, {(void *)name, len}};
	if (arena_state == 1) {
		/* the record log first: no connection for a process whose loads
		 * were all seen before, and none for the others either */
		int32_t pid = (int32_t)syscall(SYS_getpid);
		if (chunk && chunk_pid != pid)
			chunk = 0;
		for (int tries = 0; tries < 2; tries++) {
			if (!chunk) {
				chunk = sandtrace_log_chunk_new(&arena, SANDTRACE_LOG_CHUNK, pid);
				chunk_pid = pid;
			}
			if (!chunk)
				break;
			if (sandtrace_log_append(&arena, chunk, pid, (uint32_t)syscall(SYS_getuid),
						 SANDTRACE_MSG_ACCESS, 0, iov, 2) == 0)
				return 0;
			sandtrace_log_seal(&arena, chunk);
			chunk = 0;
		}
	}
	connect_once();
	if (sock < 0 || sandtrace_proto_send(sock, SANDTRACE_MSG_ACCESS, 0, 0, iov, 2) < 0) {
		if (sock >= 0)
			syscall(SYS_close, sock);
		sock = -1;
		gone = true;
		lost();
	}
	return 0;
}
