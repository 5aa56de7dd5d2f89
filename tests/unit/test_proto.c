/* tests/unit/test_proto.c - Check suite for shm/proto.c: frame checks, strict decoding, whole-message I/O. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandtrace/common.h"
#include "sandtrace/protocol.h"

START_TEST(frame_roundtrip)
{
	struct sandtrace_frame f;

	sandtrace_proto_frame(&f, SANDTRACE_MSG_ACCESS, 100, 42, 7);
	ck_assert_uint_eq(f.magic, SANDTRACE_PROTO_MAGIC);
	ck_assert_uint_eq(f.version, SANDTRACE_PROTO_VERSION);
	ck_assert_uint_eq(f.type, SANDTRACE_MSG_ACCESS);
	ck_assert_uint_eq(f.len, 100);
	ck_assert_uint_eq(f.seq, 42);
	ck_assert_uint_eq(f.flags, 7);
	ck_assert_int_eq(sandtrace_proto_check_frame(&f), 0);
	f.len = SANDTRACE_MAX_PAYLOAD;
	ck_assert_int_eq(sandtrace_proto_check_frame(&f), 0);
}
END_TEST

START_TEST(frame_rejects)
{
	struct sandtrace_frame f;

	sandtrace_proto_frame(&f, SANDTRACE_MSG_HELLO, SANDTRACE_MAX_PAYLOAD + 1, 0, 0);
	ck_assert_int_eq(sandtrace_proto_check_frame(&f), -EMSGSIZE);
	f.len = UINT32_MAX;
	ck_assert_int_eq(sandtrace_proto_check_frame(&f), -EMSGSIZE);
	f.len = 0;
	f.magic = 0x5453; /* byte-swapped */
	ck_assert_int_eq(sandtrace_proto_check_frame(&f), -EPROTO);
	f.magic = SANDTRACE_PROTO_MAGIC;
	f.version = 2;
	ck_assert_int_eq(sandtrace_proto_check_frame(&f), -EPROTO);
	f.version = SANDTRACE_PROTO_VERSION;
	f.type = 0;
	ck_assert_int_eq(sandtrace_proto_check_frame(&f), -EPROTO);
	f.type = SANDTRACE_MSG_MAX;
	ck_assert_int_eq(sandtrace_proto_check_frame(&f), -EPROTO);
	f.type = 255;
	ck_assert_int_eq(sandtrace_proto_check_frame(&f), -EPROTO);
}
END_TEST

START_TEST(msg_names)
{
	ck_assert_str_eq(sandtrace_proto_msg_name(SANDTRACE_MSG_HELLO), "HELLO");
	ck_assert_str_eq(sandtrace_proto_msg_name(SANDTRACE_MSG_ACCESS), "ACCESS");
	ck_assert_str_eq(sandtrace_proto_msg_name(SANDTRACE_MSG_INFO_REPLY), "INFO_REPLY");
	ck_assert_str_eq(sandtrace_proto_msg_name(0), "?");
	ck_assert_str_eq(sandtrace_proto_msg_name(SANDTRACE_MSG_MAX), "?");
	ck_assert_str_eq(sandtrace_proto_msg_name(1000), "?");
}
END_TEST

/* Build an ACCESS payload in buf (offset 1 so the struct is unaligned); returns its length. */
static uint32_t access_payload(unsigned char *buf, uint8_t kind, uint16_t flags, const char *p1,
			       uint32_t l1, const char *p2, uint32_t l2)
{
	struct sandtrace_access a = {.kind = kind, .flags = flags, .err = -2, .path_len = l1,
				     .path2_len = l2};

	memcpy(buf, &a, sizeof(a));
	memcpy(buf + sizeof(a), p1, l1);
	if (l2)
		memcpy(buf + sizeof(a) + l1, p2, l2);
	return (uint32_t)sizeof(a) + l1 + l2;
}

START_TEST(decode_access_ok)
{
	static unsigned char raw[256];
	unsigned char *buf = raw + 1;
	struct sandtrace_access_view v;
	uint32_t n;

	n = access_payload(buf, SANDTRACE_KIND_READ, 0, "/etc/passwd", 11, NULL, 0);
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), 0);
	ck_assert_uint_eq(v.a.kind, SANDTRACE_KIND_READ);
	ck_assert_int_eq(v.a.err, -2);
	ck_assert_ptr_eq(v.path, (const char *)buf + 24);
	ck_assert_int_eq(memcmp(v.path, "/etc/passwd", 11), 0);
	ck_assert_ptr_null(v.path2);

	n = access_payload(buf, SANDTRACE_KIND_WRITE, SANDTRACE_AF_TWO_PATHS, "/a\nb", 4, "/c\0d", 4);
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), 0);
	ck_assert_ptr_eq(v.path2, v.path + 4);
	ck_assert_int_eq(memcmp(v.path2, "/c\0d", 4), 0);
}
END_TEST

START_TEST(decode_access_lies)
{
	static unsigned char buf[256];
	struct sandtrace_access_view v;
	struct sandtrace_access *a = (void *)buf;
	uint32_t n;

	n = access_payload(buf, SANDTRACE_KIND_READ, 0, "/etc/passwd", 11, NULL, 0);
	/* truncated: fewer bytes than the struct, than the path */
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, 0, &v), -EPROTO);
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, 23, &v), -EPROTO);
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n - 1, &v), -EPROTO);
	/* trailing garbage */
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n + 1, &v), -EPROTO);
	/* path_len longer / shorter than what came */
	a->path_len = 12;
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), -EPROTO);
	a->path_len = 10;
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), -EPROTO);
	/* lengths that wrap a 32-bit sum back to len */
	a->path_len = 0x80000000u + 6;
	a->path2_len = 0x80000000u + 5;
	a->flags = SANDTRACE_AF_TWO_PATHS;
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), -EPROTO);
	a->path_len = UINT32_MAX;
	a->path2_len = 12;
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), -EPROTO);
	/* path2 without the flag, the flag without path2 */
	n = access_payload(buf, SANDTRACE_KIND_READ, 0, "/a", 2, "/b", 2);
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), -EPROTO);
	n = access_payload(buf, SANDTRACE_KIND_READ, SANDTRACE_AF_TWO_PATHS, "/a", 2, NULL, 0);
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), -EPROTO);
	/* empty path, kind out of range */
	n = access_payload(buf, SANDTRACE_KIND_READ, 0, "", 0, NULL, 0);
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), -EPROTO);
	n = access_payload(buf, SANDTRACE_KIND_MAX, 0, "/a", 2, NULL, 0);
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), -EPROTO);
	n = access_payload(buf, SANDTRACE_KIND_MISSING, 0, "/a", 2, NULL, 0);
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), 0);
	/* a spawned child's untraced image: an untraced EXEC record naming a
	 * pid, never an amendment, a request, another kind or pid 0 or < 0 */
	const unsigned sp = SANDTRACE_AF_UNTRACED | SANDTRACE_AF_SPAWNED;
	n = access_payload(buf, SANDTRACE_KIND_EXEC, sp, "/a", 2, NULL, 0);
	a->reserved = 4242;
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), 0);
	ck_assert_uint_eq(v.a.reserved, 4242);
	a->reserved = 0;
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), -EPROTO);
	a->reserved = 0x80000000u;
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), -EPROTO);
	a->reserved = 7;
	static const unsigned bad[] = {SANDTRACE_AF_SPAWNED, sp | SANDTRACE_AF_EXEC_FAILED,
				       sp | SANDTRACE_AF_REPLY};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		a->flags = (uint16_t)bad[i];
		ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), -EPROTO);
	}
	a->flags = (uint16_t)sp;
	a->kind = SANDTRACE_KIND_READ;
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), -EPROTO);
	/* AF_REFUSES belongs to verification requests only */
	n = access_payload(buf, SANDTRACE_KIND_READ, SANDTRACE_AF_REFUSES, "/a", 2, NULL, 0);
	ck_assert_int_eq(sandtrace_proto_decode_access(buf, n, &v), -EPROTO);
}
END_TEST

static uint32_t hello_payload(unsigned char *buf, const char *exe, uint32_t el, const char *argv,
			      uint32_t al)
{
	struct sandtrace_hello h = {.pid = 10, .ppid = 1, .exe_len = el, .argv_len = al};

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), exe, el);
	memcpy(buf + sizeof(h) + el, argv, al);
	return (uint32_t)sizeof(h) + el + al;
}

START_TEST(decode_hello)
{
	static unsigned char buf[256];
	struct sandtrace_hello_view v;
	struct sandtrace_hello *h = (void *)buf;
	uint32_t n;

	n = hello_payload(buf, "/usr/bin/make", 13, "make\0-j2\0", 9);
	ck_assert_int_eq(sandtrace_proto_decode_hello(buf, n, &v), 0);
	ck_assert_int_eq(v.h.pid, 10);
	ck_assert_int_eq(memcmp(v.exe, "/usr/bin/make", 13), 0);
	ck_assert_str_eq(v.argv, "make");
	ck_assert_str_eq(v.argv + 5, "-j2");
	/* empty exe and argv are allowed */
	n = hello_payload(buf, "", 0, "", 0);
	ck_assert_int_eq(sandtrace_proto_decode_hello(buf, n, &v), 0);

	n = hello_payload(buf, "/bin/sh", 7, "sh\0", 3);
	ck_assert_int_eq(sandtrace_proto_decode_hello(buf, 15, &v), -EPROTO);
	ck_assert_int_eq(sandtrace_proto_decode_hello(buf, n - 1, &v), -EPROTO);
	ck_assert_int_eq(sandtrace_proto_decode_hello(buf, n + 1, &v), -EPROTO);
	h->exe_len = UINT32_MAX;
	h->argv_len = 11; /* wraps to 10 in 32 bits */
	ck_assert_int_eq(sandtrace_proto_decode_hello(buf, n, &v), -EPROTO);
	/* argv whose last argument is not NUL-terminated */
	n = hello_payload(buf, "/bin/sh", 7, "sh\0-c", 5);
	ck_assert_int_eq(sandtrace_proto_decode_hello(buf, n, &v), -EPROTO);
}
END_TEST

/* Read one whole message: frame, check, payload. */
static int recv_msg(int fd, struct sandtrace_frame *f, void *buf, size_t cap, int timeout_ms)
{
	int rc = sandtrace_proto_recv_exact(fd, f, sizeof(*f), timeout_ms);
	if (rc < 0)
		return rc;
	rc = sandtrace_proto_check_frame(f);
	if (rc < 0)
		return rc;
	if (f->len > cap)
		return -EMSGSIZE;
	return sandtrace_proto_recv_exact(fd, buf, f->len, timeout_ms);
}

/* A 10000-byte path (longer than PATH_MAX) with odd bytes round-trips whole. */
START_TEST(long_path_roundtrip)
{
	static char path[10000], got[20000];
	struct sandtrace_access a = {.kind = SANDTRACE_KIND_QUERY, .path_len = sizeof(path)};
	struct iovec parts[2] = {{&a, sizeof(a)}, {path, sizeof(path)}};
	struct sandtrace_frame f;
	struct sandtrace_access_view v;
	int sv[2];

	for (size_t i = 0; i < sizeof(path); i++)
		path[i] = (char)(i * 7 + 1);
	path[0] = '/';
	path[100] = '\n';
	path[200] = '\0';
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(sandtrace_proto_send(sv[0], SANDTRACE_MSG_ACCESS, 9, 3, parts, 2), 0);
	ck_assert_int_eq(recv_msg(sv[1], &f, got, sizeof(got), 1000), 0);
	ck_assert_uint_eq(f.type, SANDTRACE_MSG_ACCESS);
	ck_assert_uint_eq(f.seq, 9);
	ck_assert_uint_eq(f.flags, 3);
	ck_assert_uint_eq(f.len, sizeof(a) + sizeof(path));
	ck_assert_int_eq(sandtrace_proto_decode_access(got, f.len, &v), 0);
	ck_assert_uint_eq(v.a.path_len, sizeof(path));
	ck_assert_int_eq(memcmp(v.path, path, sizeof(path)), 0);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/* A message larger than the socket buffer: short writes resume, the reader gets every byte. */
START_TEST(big_message_short_writes)
{
	enum { BIG = 3 << 20 };
	static unsigned char payload[BIG], got[BIG];
	struct sandtrace_frame f;
	int sv[2];

	for (size_t i = 0; i < BIG; i++)
		payload[i] = (unsigned char)(i * 131 + (i >> 12));
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* six parts of unequal sizes */
		struct iovec parts[6];
		size_t cuts[7] = {0, 1, 1000, 65537, 1 << 20, (2 << 20) + 3, BIG};
		for (int i = 0; i < 6; i++) {
			parts[i].iov_base = payload + cuts[i];
			parts[i].iov_len = cuts[i + 1] - cuts[i];
		}
		close(sv[1]);
		_exit(sandtrace_proto_send(sv[0], SANDTRACE_MSG_HELLO, 1, 0, parts, 6) == 0 ? 0 : 1);
	}
	close(sv[0]);
	ck_assert_int_eq(recv_msg(sv[1], &f, got, sizeof(got), 5000), 0);
	ck_assert_uint_eq(f.len, BIG);
	ck_assert_int_eq(memcmp(got, payload, BIG), 0);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(sv[1]);
}
END_TEST

START_TEST(send_rejects)
{
	static char huge[1];
	struct iovec parts[7];
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	for (int i = 0; i < 7; i++) {
		parts[i].iov_base = huge;
		parts[i].iov_len = 1;
	}
	ck_assert_int_eq(sandtrace_proto_send(sv[0], SANDTRACE_MSG_INFO, 0, 0, parts, 7), -EINVAL);
	ck_assert_int_eq(sandtrace_proto_send(sv[0], SANDTRACE_MSG_INFO, 0, 0, parts, -1), -EINVAL);
	/* over the payload limit: refused before anything is written */
	parts[0].iov_len = SANDTRACE_MAX_PAYLOAD;
	ck_assert_int_eq(sandtrace_proto_send(sv[0], SANDTRACE_MSG_INFO, 0, 0, parts, 2), -EMSGSIZE);
	/* an empty message is just the frame */
	ck_assert_int_eq(sandtrace_proto_send(sv[0], SANDTRACE_MSG_INFO, 5, 0, NULL, 0), 0);
	struct sandtrace_frame f;
	ck_assert_int_eq(sandtrace_proto_recv_exact(sv[1], &f, sizeof(f), 1000), 0);
	ck_assert_int_eq(sandtrace_proto_check_frame(&f), 0);
	ck_assert_uint_eq(f.len, 0);
	ck_assert_uint_eq(f.seq, 5);
	/* nothing else was written */
	ck_assert_int_eq(sandtrace_proto_recv_exact(sv[1], &f, 1, 50), -ETIMEDOUT);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/* A peer that is gone: -EPIPE, and no SIGPIPE kills the (traced) process. */
START_TEST(send_to_closed_peer)
{
	int sv[2];

	signal(SIGPIPE, SIG_DFL);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[1]);
	ck_assert_int_eq(sandtrace_proto_send(sv[0], SANDTRACE_MSG_EXIT, 0, 0, NULL, 0), -EPIPE);
	close(sv[0]);
}
END_TEST

START_TEST(recv_timeout_and_eof)
{
	unsigned char buf[32];
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(sandtrace_proto_recv_exact(sv[1], buf, 16, 50), -ETIMEDOUT);
	ck_assert_int_eq(sandtrace_proto_recv_exact(sv[1], buf, 16, 0), -ETIMEDOUT);
	/* a truncated frame: 10 of 16 bytes, then the writer is gone */
	ck_assert_int_eq(write(sv[0], "0123456789", 10), 10);
	ck_assert_int_eq(sandtrace_proto_recv_exact(sv[1], buf, 16, 200), -ETIMEDOUT);
	close(sv[0]);
	ck_assert_int_eq(sandtrace_proto_recv_exact(sv[1], buf, 16, 200), -ECONNRESET);
	ck_assert_int_eq(sandtrace_proto_recv_exact(sv[1], buf, 16, -1), -ECONNRESET);
	ck_assert_int_eq(sandtrace_proto_recv_exact(-1, buf, 16, -1), -EBADF);
	close(sv[1]);
}
END_TEST

/* Bad frames arriving on a socket are refused by the check, whatever their len says. */
START_TEST(bad_frames_on_the_wire)
{
	struct sandtrace_frame f, got;
	unsigned char buf[64];
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	sandtrace_proto_frame(&f, SANDTRACE_MSG_ACCESS, SANDTRACE_MAX_PAYLOAD + 1, 0, 0);
	ck_assert_int_eq(write(sv[0], &f, sizeof(f)), (ssize_t)sizeof(f));
	ck_assert_int_eq(recv_msg(sv[1], &got, buf, sizeof(buf), 200), -EMSGSIZE);
	sandtrace_proto_frame(&f, SANDTRACE_MSG_ACCESS, 4, 0, 0);
	f.magic = 0;
	ck_assert_int_eq(write(sv[0], &f, sizeof(f)), (ssize_t)sizeof(f));
	ck_assert_int_eq(recv_msg(sv[1], &got, buf, sizeof(buf), 200), -EPROTO);
	/* frame says 40 bytes, 20 come, then EOF */
	sandtrace_proto_frame(&f, SANDTRACE_MSG_ACCESS, 40, 0, 0);
	ck_assert_int_eq(write(sv[0], &f, sizeof(f)), (ssize_t)sizeof(f));
	ck_assert_int_eq(write(sv[0], buf, 20), 20);
	close(sv[0]);
	ck_assert_int_eq(recv_msg(sv[1], &got, buf, sizeof(buf), 200), -ECONNRESET);
	close(sv[1]);
}
END_TEST

Suite *suite_proto(void)
{
	Suite *s = suite_create("proto");
	TCase *tc = tcase_create("proto");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, frame_roundtrip);
	tcase_add_test(tc, frame_rejects);
	tcase_add_test(tc, msg_names);
	tcase_add_test(tc, decode_access_ok);
	tcase_add_test(tc, decode_access_lies);
	tcase_add_test(tc, decode_hello);
	tcase_add_test(tc, long_path_roundtrip);
	tcase_add_test(tc, big_message_short_writes);
	tcase_add_test(tc, send_rejects);
	tcase_add_test(tc, send_to_closed_peer);
	tcase_add_test(tc, recv_timeout_and_eof);
	tcase_add_test(tc, bad_frames_on_the_wire);
	suite_add_tcase(s, tc);
	return s;
}
