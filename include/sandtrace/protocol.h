/* sandtrace/protocol.h - the wire protocol between the shim and sandtraced (one definition). */
#ifndef SANDTRACE_PROTOCOL_H
#define SANDTRACE_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/*
 * Transport: a SOCK_STREAM unix socket.  Every message is a fixed 16-byte
 * frame header followed by `len` payload bytes.  Integers are in host byte
 * order (both ends run on the same machine).  Binary throughout: paths are
 * byte strings with explicit lengths and may hold newlines, tabs and invalid
 * UTF-8.  The daemon trusts nothing: a bad magic, version, type or a length
 * over SANDTRACE_MAX_PAYLOAD closes that client only.
 *
 * Clients send HELLO first on every connection (one connection per thread
 * of a traced process; a forked child opens its own).  Only ACCESS with
 * SANDTRACE_AF_REPLY gets an answer (VERDICT, same seq); everything else is
 * fire-and-forget, so the shim never waits for the daemon except on a
 * cache miss that needs a decision.
 */

#define SANDTRACE_PROTO_MAGIC 0x5354u /* 'S' 'T' */
#define SANDTRACE_PROTO_VERSION 1u
/* Largest payload accepted (bytes).  Paths longer than PATH_MAX fit whole. */
#define SANDTRACE_MAX_PAYLOAD (4u << 20)

/*
 * The message list: X(NAME, value, direction, payload).  Generates the enum,
 * the names used in logs, and the daemon's dispatch table.
 */
#define SANDTRACE_MSG_LIST(X)                                                  \
	X(HELLO, 1, "c->d", "struct sandtrace_hello + exe + argv")             \
	X(ACCESS, 2, "c->d", "struct sandtrace_access + path [+ path2] [+ identity]")     \
	X(VERDICT, 3, "d->c", "struct sandtrace_verdict")                      \
	X(EXIT, 4, "c->d", "struct sandtrace_exit")                            \
	X(INFO, 5, "c->d", "empty: asks for the arena name and run flags")    \
	X(INFO_REPLY, 6, "d->c", "struct sandtrace_info + arena name")

enum sandtrace_msg {
#define SANDTRACE_X_ENUM(name, val, dir, payload) SANDTRACE_MSG_##name = val,
	SANDTRACE_MSG_LIST(SANDTRACE_X_ENUM)
#undef SANDTRACE_X_ENUM
	SANDTRACE_MSG_MAX
};

/* Frame header: 16 bytes. */
struct sandtrace_frame {
	uint16_t magic;   /* SANDTRACE_PROTO_MAGIC */
	uint8_t version;  /* SANDTRACE_PROTO_VERSION */
	uint8_t type;     /* enum sandtrace_msg */
	uint32_t len;     /* payload bytes that follow, <= SANDTRACE_MAX_PAYLOAD */
	uint32_t seq;     /* a request: chosen by the client, echoed in VERDICT; a record: the
			   * record log stamp (sandtrace_log_stamp, log.h), or 0 */
	uint32_t flags;   /* per type; 0 if unused */
};
_Static_assert(sizeof(struct sandtrace_frame) == 16, "frame header is 16 bytes");

/* HELLO flags (frame.flags). */
enum sandtrace_hello_flags {
	SANDTRACE_HF_NO_ARENA = 1u << 0,     /* this process could not map the arena */
	SANDTRACE_HF_ARGV_TRUNC = 1u << 1,   /* argv did not fit and was cut */
	SANDTRACE_HF_THREAD = 1u << 2,       /* an extra connection of a known process */
	SANDTRACE_HF_ARENA_BAD = 1u << 3,    /* the arena's magic/version did not match */
	SANDTRACE_HF_RECONNECT = 1u << 4,    /* this image said HELLO by a socket before: the
					      * same image connecting again, not an exec */
	SANDTRACE_HF_LAUNCHER = 1u << 5      /* the CLI about to exec the command (its exec's
					      * check): no image of the build, no process record */
};

/*
 * HELLO payload: this struct, then exe_len bytes of the executable's path,
 * then argv_len bytes of argv (each argument NUL-terminated).
 */
struct sandtrace_hello {
	int32_t pid;
	int32_t ppid;
	uint32_t exe_len;
	uint32_t argv_len;
};
_Static_assert(sizeof(struct sandtrace_hello) == 16, "hello is 16 bytes");

/* ACCESS flags (sandtrace_access.flags). */
enum sandtrace_access_flags {
	SANDTRACE_AF_REPLY = 1u << 0,      /* decide and answer with VERDICT; do not record */
	SANDTRACE_AF_DENIED = 1u << 1,     /* the shim refused the call: a violation */
	SANDTRACE_AF_UNTRACED = 1u << 2,   /* EXEC of a program the shim cannot follow; aux says why */
	SANDTRACE_AF_FAIL_OPEN = 1u << 3,  /* allowed only because the daemon was lost (fail-open) */
	SANDTRACE_AF_TWO_PATHS = 1u << 4,  /* payload holds path2 after path (rename, link) */
	SANDTRACE_AF_ASKED = 1u << 5,      /* the verdict came from an ask rule */
	SANDTRACE_AF_IDENTITY = 1u << 6,   /* struct sandtrace_identity follows the path bytes */
	SANDTRACE_AF_VERIFY = 1u << 7,     /* with AF_REPLY|AF_IDENTITY: check this file version
					      against the run's --verify manifest */
	SANDTRACE_AF_UNRESOLVED = 1u << 8, /* the name was too long for the shim to resolve: the
					      path is its spelling, not what it leads to */
	SANDTRACE_AF_UNJUDGED = 1u << 9,   /* a record of a name the shim did not judge (a PATH
					      probe's miss, a link an exec ran through, what
					      the loader mapped, ...): verdict is not the
					      shim's; the daemon reports the policy's verdict on
					      the path, and the record is never a violation by
					      itself (docs/INTERNALS.md, "Report") */
	SANDTRACE_AF_EXEC_FAILED = 1u << 10, /* kind EXEC, err set: an exec this process recorded
					      before the call (as the record an exec is before
					      it: one per record sent) returned with err, so the
					      program did not run; with AF_UNTRACED (aux: why)
					      the untraced record it sent.  The daemon amends
					      what it holds (sandtraced.c, exec_failed) */
	SANDTRACE_AF_IO_URING = 1u << 11,  /* no access: the process set up (or entered) an
					      io_uring, whose entries reach files unseen; the
					      path is the call's name (io_uring_setup,
					      io_uring_queue_init, ...), kind QUERY.  With
					      AF_DENIED the shim refused it (ENOSYS): a
					      violation; without, the ring was let through and
					      the process's accesses through it are missing */
	SANDTRACE_AF_SPAWNED = 1u << 12,   /* with AF_UNTRACED, kind EXEC: the program the
					      preload cannot follow runs in a child the sender
					      spawned (posix_spawn), whose pid is `reserved`,
					      not in the sender's next image: the daemon makes
					      that pid an untraced image, child of the sender.
					      Sent after the spawn returned; never amended */
	SANDTRACE_AF_REFUSES = 1u << 13    /* with AF_VERIFY: the sender refuses a version that
					      fails (a fenced run's open, exec or load); without,
					      it is reported and used (a file libc mapped, a
					      database it read): the violation says whether the
					      file was hidden */
};

/*
 * The identity of one version of a file, as fstat saw it on the descriptor
 * the traced program opened (or stat on the path of an exec or a library
 * load).  Sent with SANDTRACE_AF_IDENTITY in identity mode only
 * (SANDTRACE_F_IDENTITY: `sandtrace run --manifest` or `--verify`), for
 * READ and EXEC records of regular files and for verification requests.
 * Two reads with equal identities are taken to have read the same bytes
 * (the premise of the digest cache: dev, ino, size, mtime and ctime all
 * equal; ctime cannot be set back by a program).  40 bytes, no padding;
 * the Ctrie keys of identity mode end with these 40 bytes.
 */
struct sandtrace_identity {
	uint64_t dev;
	uint64_t ino;
	int64_t size;
	int64_t mtime_ns; /* st_mtim as nanoseconds since the epoch */
	int64_t ctime_ns; /* st_ctim as nanoseconds since the epoch */
};
_Static_assert(sizeof(struct sandtrace_identity) == 40, "identity is 40 bytes");

/* Why an exec is untraced (sandtrace_access.aux with SANDTRACE_AF_UNTRACED). */
enum sandtrace_untraced {
	SANDTRACE_UNTRACED_STATIC = 1, /* ELF without PT_INTERP: the preload cannot load */
	SANDTRACE_UNTRACED_SETID = 2,  /* set-id or file capabilities: ld.so drops LD_PRELOAD */
	SANDTRACE_UNTRACED_OTHER = 3,
	SANDTRACE_UNTRACED_ELFCLASS = 4, /* 32-bit or x32 ELF: the loader refuses a 64-bit preload */
	SANDTRACE_UNTRACED_GO = 5,       /* Go program (build-id note): its runtime makes raw syscalls */
	SANDTRACE_UNTRACED_NESTED = 6    /* handed to another trace (a nested sandtrace run): its
					    processes report to that run's daemon, not this one */
};

/*
 * ACCESS payload: this struct, then path_len bytes of the absolute,
 * normalised path, then (SANDTRACE_AF_TWO_PATHS) path2_len bytes, then
 * (SANDTRACE_AF_IDENTITY) a struct sandtrace_identity (unaligned: copy it
 * out).  AF_IDENTITY is valid only with kind READ or EXEC; AF_VERIFY only
 * together with AF_REPLY and AF_IDENTITY (the daemon answers ALLOW when the
 * version matches the manifest or the path is not listed in it, DENY with
 * EACCES when it does not match: a violation the daemon reports).
 * kind is an enum sandtrace_kind; err is the errno of the real call (0 on
 * success) for records; verdict is the enum sandtrace_action the shim
 * applied (records; 0 with SANDTRACE_AF_UNJUDGED) or 0 (requests).
 */
struct sandtrace_access {
	uint8_t kind;
	uint8_t verdict;
	uint16_t flags;
	int32_t err;
	uint32_t aux;
	uint32_t path_len;
	uint32_t path2_len;
	uint32_t reserved;
};
_Static_assert(sizeof(struct sandtrace_access) == 24, "access is 24 bytes");

/* VERDICT payload: answer to an ACCESS with SANDTRACE_AF_REPLY. */
struct sandtrace_verdict {
	uint8_t action; /* enum sandtrace_action: ALLOW or DENY (ask is resolved) */
	uint8_t flags;  /* enum sandtrace_verdict_flags: the daemon's policy as of the answer */
	uint8_t reserved[2];
	int32_t err;    /* errno to fail the call with when denied: ENOENT or EACCES */
};
/* VERDICT flags: what a process without the arena (--no-cache, which has no
 * compiled policy to read) learns of the policy with each answer; a reload
 * (SIGHUP) can change it.  A daemon that sets none is the same as one whose
 * policy hides nothing. */
enum sandtrace_verdict_flags {
	SANDTRACE_VF_HIDES = 1u << 0 /* the policy can hide a name (st__policy_hides): listings
					are filtered (SANDTRACE_F_HIDES) */
};
_Static_assert(sizeof(struct sandtrace_verdict) == 8, "verdict is 8 bytes");

/* EXIT flags (frame.flags). */
enum sandtrace_exit_flags {
	SANDTRACE_EF_CHILD = 1u << 0 /* a parent reaped a child: pid names it, status is the raw wait status */
};

/*
 * EXIT payload.  Without SANDTRACE_EF_CHILD: sent by a traced process from
 * exit()/_exit() (status = the exit code) or its destructor (status = -1,
 * unknown), with its counters.  With SANDTRACE_EF_CHILD: sent by a parent
 * whose wait*() reaped pid, status as wait() returned it (W* macros); the
 * counters are 0.
 */
struct sandtrace_exit {
	int32_t status;
	uint32_t reserved;   /* with SANDTRACE_EF_CHILD: the child's pid; without it: the
				records and requests this process could not deliver before
				(its connection lost for a while; the daemon counts it for a
				process without the arena, the arena's header has the others') */
	uint64_t calls;      /* intercepted calls in this process */
	uint64_t hits;       /* answered from the arena without a message */
	uint64_t messages;   /* messages sent to the daemon */
};
_Static_assert(sizeof(struct sandtrace_exit) == 32, "exit is 32 bytes");

/* INFO_REPLY payload: this struct, then name_len bytes of the arena name (0 = no arena). */
struct sandtrace_info {
	uint32_t run_flags; /* enum sandtrace_run_flags */
	uint32_t name_len;
};
_Static_assert(sizeof(struct sandtrace_info) == 8, "info is 8 bytes");

/*
 * sandtrace_proto_frame - fill a frame header.
 * Async-signal-safe, allocation-free.
 */
void sandtrace_proto_frame(struct sandtrace_frame *f, unsigned type, uint32_t len, uint32_t seq,
			   uint32_t flags);

/*
 * sandtrace_proto_check_frame - validate a received frame header.
 * Returns 0, -EPROTO (bad magic, version or type) or -EMSGSIZE (len over
 * SANDTRACE_MAX_PAYLOAD).  Async-signal-safe.
 */
int sandtrace_proto_check_frame(const struct sandtrace_frame *f);

/* A decoded ACCESS: pointers into the payload buffer (not NUL-terminated). */
struct sandtrace_access_view {
	struct sandtrace_access a;
	const char *path;
	const char *path2; /* NULL without SANDTRACE_AF_TWO_PATHS */
	struct sandtrace_identity id; /* with SANDTRACE_AF_IDENTITY, else zero */
};

/*
 * sandtrace_proto_decode_access - decode an ACCESS payload of len bytes.
 * Returns 0 or -EPROTO when the lengths disagree with len, the kind is out
 * of range, or path is empty.  Does not copy; thread-safe.
 */
int sandtrace_proto_decode_access(const void *payload, uint32_t len,
				  struct sandtrace_access_view *out);

/* A decoded HELLO. */
struct sandtrace_hello_view {
	struct sandtrace_hello h;
	const char *exe;
	const char *argv; /* argv_len bytes, NUL-separated */
};

/* sandtrace_proto_decode_hello - as decode_access, for HELLO.  0 or -EPROTO. */
int sandtrace_proto_decode_hello(const void *payload, uint32_t len,
				 struct sandtrace_hello_view *out);

/*
 * sandtrace_proto_send - write one whole message (frame + the iov parts) to a
 * stream socket with sendmsg(MSG_NOSIGNAL), retrying on EINTR and short
 * writes.  Returns 0 or -errno (-EPIPE when the daemon is gone).  Never
 * allocates; async-signal-safe.  at most 6 parts.
 */
int sandtrace_proto_send(int fd, unsigned type, uint32_t seq, uint32_t flags,
			 const struct iovec *parts, int nparts);

/*
 * sandtrace_proto_recv_exact - read exactly n bytes, retrying on EINTR.
 * timeout_ms < 0 waits forever.  Returns 0, -ETIMEDOUT, -ECONNRESET on EOF,
 * or -errno.  Never allocates; async-signal-safe.
 */
int sandtrace_proto_recv_exact(int fd, void *buf, size_t n, int timeout_ms);

/* sandtrace_proto_msg_name - "HELLO", "ACCESS", ... or "?" for an unknown type. */
const char *sandtrace_proto_msg_name(unsigned type);

#endif
