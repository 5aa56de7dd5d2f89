/*
 * tests/bench/echo.h - the far end of the benchmarks' bare unix-socket round trip
 * (bench-calls' socket-rtt, bench-ask's round trip): a forked process that reads an 80-byte
 * request and writes a 24-byte reply (the sizes of an ACCESS request and its VERDICT) until
 * its socket closes.  Header-only: each benchmark is one C file built by its script.
 */
#ifndef SANDTRACE_BENCH_ECHO_H
#define SANDTRACE_BENCH_ECHO_H

#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#define ECHO_REQUEST 80
#define ECHO_REPLY 24

/* Exactly n bytes from or to fd; 0 on EOF or error. */
static int echo_io(int fd, void *buf, size_t n, int rd)
{
	size_t done = 0;
	while (done < n) {
		ssize_t r = rd ? read(fd, (char *)buf + done, n - done)
			       : write(fd, (const char *)buf + done, n - done);
		if (r <= 0)
			return 0;
		done += (size_t)r;
	}
	return 1;
}

/* Fork the echo process; *fd gets this side's socket.  Returns its pid, or -1 (errno set). */
static pid_t echo_start(int *fd)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char buf[ECHO_REQUEST];
		close(sv[0]);
		while (echo_io(sv[1], buf, ECHO_REQUEST, 1) && echo_io(sv[1], buf, ECHO_REPLY, 0))
			;
		_exit(0);
	}
	close(sv[1]);
	*fd = sv[0];
	return pid;
}

#endif
