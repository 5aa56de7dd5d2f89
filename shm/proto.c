/* shm/proto.c - wire protocol codec: frame headers, strict payload decoding, whole-message I/O. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include "sandtrace/common.h"
#include "sandtrace/protocol.h"

#define ST__MAX_PARTS 6

#if defined(SANDTRACE_IN_SHIM)
/* In the preload, the daemon's messages go out by an inline system call
 * (shim/rawsys.h): the shim's own sendmsg wrapper (a unix socket's named
 * destination, shim/wrap_fs.c) is not for its own connection. */
#include "../shim/rawsys.h"
#if ST_HAVE_RAW_SYSCALL
#define st__sendmsg(fd, m, f) st__sys6(SYS_sendmsg, (fd), (long)(m), (f), 0, 0, 0)
#endif
#endif
#ifndef st__sendmsg
#define st__sendmsg sendmsg
#endif

void sandtrace_proto_frame(struct sandtrace_frame *f, unsigned type, uint32_t len, uint32_t seq,
			   uint32_t flags)
{
	f->magic = SANDTRACE_PROTO_MAGIC;
	f->version = SANDTRACE_PROTO_VERSION;
	f->type = (uint8_t)type;
	f->len = len;
	f->seq = seq;
	f->flags = flags;
}

/* Is type one of the values in SANDTRACE_MSG_LIST?  (The list need not be dense.) */
static int st__known_type(unsigned type)
{
	switch (type) {
#define ST__X_CASE(name, val, dir, payload) case val:
		SANDTRACE_MSG_LIST(ST__X_CASE)
#undef ST__X_CASE
		return 1;
	default:
		return 0;
	}
}

int sandtrace_proto_check_frame(const struct sandtrace_frame *f)
{
	if (f->magic != SANDTRACE_PROTO_MAGIC || f->version != SANDTRACE_PROTO_VERSION ||
	    !st__known_type(f->type))
		return -EPROTO;
	if (f->len > SANDTRACE_MAX_PAYLOAD)
		return -EMSGSIZE;
	return 0;
}

/*
 * The fixed struct is memcpy'd out (the payload buffer need not be
 * aligned); lengths are summed in 64 bits so two lying uint32_t lengths
 * cannot wrap around to match len.
 */
int sandtrace_proto_decode_access(const void *payload, uint32_t len,
				  struct sandtrace_access_view *out)
{
	const char *p = payload;
	uint64_t want;

	if (payload == NULL || len < sizeof(out->a))
		return -EPROTO;
	memcpy(&out->a, p, sizeof(out->a));
	if (out->a.kind >= SANDTRACE_KIND_MAX || out->a.path_len == 0)
		return -EPROTO;
	if (out->a.flags & SANDTRACE_AF_TWO_PATHS) {
		if (out->a.path2_len == 0)
			return -EPROTO;
	} else if (out->a.path2_len != 0) {
		return -EPROTO;
	}
	if ((out->a.flags & SANDTRACE_AF_IDENTITY) && out->a.kind != SANDTRACE_KIND_READ &&
	    out->a.kind != SANDTRACE_KIND_EXEC)
		return -EPROTO;
	if ((out->a.flags & SANDTRACE_AF_VERIFY) &&
	    (out->a.flags & (SANDTRACE_AF_REPLY | SANDTRACE_AF_IDENTITY)) !=
		(SANDTRACE_AF_REPLY | SANDTRACE_AF_IDENTITY))
		return -EPROTO;
	if ((out->a.flags & SANDTRACE_AF_REFUSES) && !(out->a.flags & SANDTRACE_AF_VERIFY))
		return -EPROTO;
	/* a spawned child's untraced image: a record, its pid given */
	if ((out->a.flags & SANDTRACE_AF_SPAWNED) &&
	    ((out->a.flags & (SANDTRACE_AF_UNTRACED | SANDTRACE_AF_EXEC_FAILED | SANDTRACE_AF_REPLY)) !=
		 SANDTRACE_AF_UNTRACED ||
	     out->a.kind != SANDTRACE_KIND_EXEC || out->a.reserved == 0 || out->a.reserved > INT32_MAX))
		return -EPROTO;
	/* an amendment of an exec's record (a record itself) */
	if ((out->a.flags & SANDTRACE_AF_EXEC_FAILED) &&
	    (out->a.kind != SANDTRACE_KIND_EXEC || (out->a.flags & SANDTRACE_AF_REPLY)))
		return -EPROTO;
	want = (uint64_t)sizeof(out->a) + out->a.path_len + out->a.path2_len;
	if (out->a.flags & SANDTRACE_AF_IDENTITY)
		want += sizeof(out->id);
	if (want != len)
		return -EPROTO;
	out->path = p + sizeof(out->a);
	out->path2 = (out->a.flags & SANDTRACE_AF_TWO_PATHS) ? out->path + out->a.path_len : NULL;
	if (out->a.flags & SANDTRACE_AF_IDENTITY)
		memcpy(&out->id, out->path + out->a.path_len + out->a.path2_len, sizeof(out->id));
	else
		memset(&out->id, 0, sizeof(out->id));
	return 0;
}

/*
 * HELLO: exe may be empty (the shim could not read /proc/self/exe); argv,
 * when present, must end with the NUL that terminates its last argument, so
 * the daemon can walk it with strlen without leaving the buffer.
 */
int sandtrace_proto_decode_hello(const void *payload, uint32_t len,
				 struct sandtrace_hello_view *out)
{
	const char *p = payload;
	uint64_t want;

	if (payload == NULL || len < sizeof(out->h))
		return -EPROTO;
	memcpy(&out->h, p, sizeof(out->h));
	want = (uint64_t)sizeof(out->h) + out->h.exe_len + out->h.argv_len;
	if (want != len)
		return -EPROTO;
	out->exe = p + sizeof(out->h);
	out->argv = out->exe + out->h.exe_len;
	if (out->h.argv_len != 0 && out->argv[out->h.argv_len - 1] != '\0')
		return -EPROTO;
	return 0;
}

/*
 * Wait until fd is ready for events: 0 ready, 1 interrupted (the caller
 * recomputes its timeout and waits again), -ETIMEDOUT or -errno.
 * timeout_ms < 0: forever.
 */
static int st__wait(int fd, short events, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = events};
	int r;

	r = poll(&pfd, 1, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 1 : -errno;
	if (r == 0)
		return -ETIMEDOUT;
	return 0;
}

int sandtrace_proto_send(int fd, unsigned type, uint32_t seq, uint32_t flags,
			 const struct iovec *parts, int nparts)
{
	struct iovec iov[ST__MAX_PARTS + 1];
	struct sandtrace_frame f;
	struct msghdr mh;
	uint64_t total = 0;
	int i, n = 0, cur = 0;

	if (nparts < 0 || nparts > ST__MAX_PARTS || (nparts > 0 && parts == NULL))
		return -EINVAL;
	for (i = 0; i < nparts; i++) {
		total += parts[i].iov_len;
		if (total > SANDTRACE_MAX_PAYLOAD)
			return -EMSGSIZE;
	}
	sandtrace_proto_frame(&f, type, (uint32_t)total, seq, flags);
	iov[n].iov_base = &f;
	iov[n++].iov_len = sizeof(f);
	for (i = 0; i < nparts; i++) {
		if (parts[i].iov_len != 0)
			iov[n++] = parts[i];
	}

	/* One sendmsg in the common case; a short write resumes where it stopped. */
	while (cur < n) {
		ssize_t w;

		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = iov + cur;
		mh.msg_iovlen = (size_t)(n - cur);
		/* MSG_NOSIGNAL: a dead daemon is -EPIPE, not a SIGPIPE in the traced program */
		w = st__sendmsg(fd, &mh, MSG_NOSIGNAL);
		if (w < 0) {
			int rc;

			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -errno;
			/* a non-blocking socket that is full: wait for room, then go on */
			rc = st__wait(fd, POLLOUT, -1);
			if (rc < 0)
				return rc;
			continue;
		}
		while (cur < n && (size_t)w >= iov[cur].iov_len) {
			w -= (ssize_t)iov[cur].iov_len;
			cur++;
		}
		if (cur < n && w > 0) {
			iov[cur].iov_base = (char *)iov[cur].iov_base + w;
			iov[cur].iov_len -= (size_t)w;
		}
	}
	return 0;
}

static int64_t st__now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe (POSIX) */
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int sandtrace_proto_recv_exact(int fd, void *buf, size_t n, int timeout_ms)
{
	int64_t deadline = timeout_ms >= 0 ? st__now_ms() + timeout_ms : 0;
	size_t got = 0;

	while (got < n) {
		ssize_t r;
		int rc;

		/* The timeout covers the whole read, not each piece of it. */
		if (timeout_ms >= 0) {
			int64_t left = deadline - st__now_ms();

			if (left < 0)
				left = 0;
			rc = st__wait(fd, POLLIN, (int)(left > INT_MAX ? INT_MAX : left));
			if (rc < 0)
				return rc;
			if (rc > 0)
				continue; /* EINTR: never fall into a blocking recv without a wait */
		}
		r = recv(fd, (char *)buf + got, n - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (timeout_ms < 0 && (rc = st__wait(fd, POLLIN, -1)) < 0)
					return rc;
				continue;
			}
			return -errno;
		}
		if (r == 0)
			return -ECONNRESET;
		got += (size_t)r;
	}
	return 0;
}

const char *sandtrace_proto_msg_name(unsigned type)
{
	switch (type) {
#define ST__X_NAME(name, val, dir, payload) \
	case val:                           \
		return #name;
		SANDTRACE_MSG_LIST(ST__X_NAME)
#undef ST__X_NAME
	default:
		return "?";
	}
}
