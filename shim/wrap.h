/* shim/wrap.h - the wrapper skeleton: enter, check, forward, record, leave (check/forward/record kept apart). */
#ifndef SANDTRACE_WRAP_H
#define SANDTRACE_WRAP_H

#include "shim.h"

/* kinds, short */
#define K_R SANDTRACE_KIND_READ
#define K_W SANDTRACE_KIND_WRITE
#define K_Q SANDTRACE_KIND_QUERY
#define K_X SANDTRACE_KIND_EXEC
#define K_D SANDTRACE_KIND_DIR
/* nofollow, for a call on the name itself (unlink, rmdir, rename, link's and
 * symlink's new name, mkdir, mknod, mkfifo): see ST_NF_NAME */
#define NF_NAME ST_NF_NAME

/*
 * ONE_PATH(type, failed, fdir, fpath, kind, nofollow, empty, call):
 * the body of a wrapper of a call on one path.  `failed` is an expression
 * over the result r_ telling a failure; `call` is the real call.  errno as
 * the real call left it is what the program sees; a refusal returns the
 * failure value `failv` with ENOENT or EACCES and the real call is not made
 * (failv is evaluated with errno already set to that reason, and must keep
 * it: dlopen's leaves dlerror() a message, dl_refused).
 * ONE_PATH_ROOTED(..., in_root, call): the same, the path resolved below
 * fdir when in_root (openat2's RESOLVE_IN_ROOT; fpath then relative).
 */
/*
 * ST_REFUSAL(type, e, slot, call): the errno a refused call gives.
 * A refusal is e, ENOENT (the sandbox hides the name) or EACCES (visible,
 * not writable), unless the call fails otherwise on a name that does not
 * exist: the kernel checks its flags, modes and lengths before it looks the
 * name up (fstatat's unknown flag, truncate's negative length, renameat2's
 * RENAME_EXCHANGE|RENAME_NOREPLACE, a bad fopen mode are EINVAL for any
 * name), so the refused call gives what it would give for a missing file.
 * The call is made once more with *slot (ST_PROBE_SLOT of the refused name,
 * an lvalue the call reads: a pointer variable; a literal or an array is not
 * probed, its slot is NULL) set to
 * ST_ABSENT, whose lookup fails at its second component for
 * any caller (a /proc that is mounted or not), so nothing is created,
 * changed or opened by a call that looks the name up; a name the call may
 * not look up is ST_NOPROBE (ST_UNDO_PROBE).
 * Not for an empty or null name (a descriptor's file). Costs a refusal one
 * system call; must run between st__enter and st__leave (the call is
 * forwarded untouched). Async-signal-safe as the call is.
 */
/* ST_ALIAS(target): a wrapper declared with this is target's wrapper under
 * another exported name (libc's second public name of the same function,
 * e.g. __connect for connect: tests/shim_aliases.py), at the same address:
 * the wrapper's body is written once.  target must be defined in the same
 * file; its attributes (libc's declaration's nothrow, leaf) are copied. */
#define ST_ALIAS(target) __attribute__((alias(#target), copy(target)))
#define ST_ABSENT "/proc/-1/sandtrace-absent"
/* A probe that succeeded: a stream is closed; an int is not (it is a status as
 * often as a descriptor: mount's 0 is no stdin, inotify's watch no file).  A
 * call that can succeed on ST_ABSENT (one that does not look the name up:
 * mount's or fsconfig's source string) must mark it ST_NOPROBE. */
static inline void st__probe_undo_file(int unused, FILE *f) { if (f) fclose(f); }
static inline void st__probe_undo_none(int unused, ...) {}
#define ST_UNDO_PROBE(r)                                                                           \
	_Generic((r), FILE *: st__probe_undo_file, default: st__probe_undo_none)(0, (r))
/* Is r a call's failure: a null pointer or (void *)-1 (catopen's), or a
 * negative number (-1)?  (Not failv, which may do work of its own:
 * dl_refused.) */
#define ST_FAILED_RESULT(r)                                                                        \
	(__builtin_classify_type(r) == 5 /* a pointer */                                            \
	     ? (uintptr_t)(r) == 0 || (intptr_t)(r) == -1                                          \
	     : (intptr_t)(r) < 0)
/* ST_NOPROBE(p): a name judged that the call does not read itself (a
 * path made from the call's arguments): ST_REFUSAL does not probe it.  The
 * same lvalue, read only; tests/refusal_probe.py checks that every other
 * wrapper's judged name is read by its call. */
#define ST_NOPROBE(p) (*(const char *const *)&(p))
/* ST_PROBE_SLOT(pvar): the address of the name pvar for ST_REFUSAL to set: a
 * pointer variable only, NULL for a literal or an array (not probed) */
#define ST_PROBE_SLOT(pvar)                                                                        \
	((const char **)(void *)_Generic(&(pvar), const char **: &(pvar), char **: &(pvar),        \
					 default: NULL))
#define ST_REFUSAL(type, e, slot, call) ST_REFUSAL_BY(type, e, slot, call, ST_FORWARD)
/* ST_REFUSAL_BY(..., fwd): the probe made as fwd(call) (ST_FORWARD: inside
 * an entered wrapper) */
#define ST_REFUSAL_BY(type, e, slot, call, fwd)                                                    \
	({                                                                                         \
		int re_ = (e);                                                                     \
		const char **pp_ = (slot);                                                         \
		const char *held_ = pp_ ? *pp_ : NULL;                                             \
		if ((re_ == ENOENT || re_ == EACCES) && !st__null(held_) && held_[0]) {            \
			*pp_ = ST_ABSENT;                                                          \
			errno = 0;                                                                 \
			type pr_ = fwd(call);                                                      \
			int pe_ = errno;                                                           \
			*pp_ = held_;                                                              \
			if (!ST_FAILED_RESULT(pr_))                                                \
				ST_UNDO_PROBE(pr_);                                                \
			else if (pe_ != 0 && pe_ != ENOENT)                                        \
				re_ = pe_;                                                         \
		}                                                                                  \
		re_;                                                                               \
	})

/*
 * ST_UNCHECKED(type, c, failv, e, slot, call): what a wrapper returns when
 * st__enter(&c) did not enter: the call, made unchecked; or, when c.refuse
 * (the call could not be checked and the sandbox can refuse: struct
 * st_call), failv with errno e, the call not made.  Not probed (slot is
 * unused): a third copy of the call in every wrapper, for a path as rare as
 * a second signal handler inside a checked one, took .text.st_hot past its
 * sixteen pages (tests/shim_layout.py); such a call gives e whatever its
 * flags.  Async-signal-safe as the call and failv are.
 */
#define ST_UNCHECKED(type, c, failv, e, slot, call)                                                \
	({                                                                                         \
		(void)(slot);                                                                      \
		type u_;                                                                           \
		if ((c).refuse) {                                                                  \
			errno = (e);                                                               \
			u_ = failv;                                                                \
		} else {                                                                           \
			u_ = (call);                                                               \
		}                                                                                  \
		u_;                                                                                \
	})

/*
 * FD_WRITE(type, failv, failed, fd, call): the body of a write through a
 * descriptor (fchmod, fchown, futimens, futimes, fsetxattr, fremovexattr,
 * ioctl's attribute writes, utimensat with a null name): ONE_PATH on the
 * file the descriptor names, as a write.  A descriptor open O_PATH takes
 * none of them (the kernel's EBADF, the file untouched): where the sandbox
 * can refuse, such a call is forwarded unjudged, which a refusal answered
 * EACCES.  One fcntl more a call there.
 */
#define FD_WRITE(type, failv, failed, fd, call)                                                    \
	do {                                                                                       \
		if (st__may_refuse() && st__fd_opath(fd))                                          \
			return call;                                                               \
		ONE_PATH(type, failv, failed, fd, "", K_W, false, true, call);                     \
	} while (0)
/* st__fd_opath - is fd open O_PATH?  Preserves errno; async-signal-safe. */
static inline bool st__fd_opath(int fd)
{
	int saved = errno;
	long fl = ST_SYSCALL(SYS_fcntl, fd, F_GETFL);
	errno = saved;
	return fl != -1 && (fl & O_PATH);
}

#define ONE_PATH(type, failv, failed, fdir, fpath, kind, nofollow, empty, call)                    \
	ONE_PATH_ROOTED(type, failv, failed, fdir, fpath, kind, nofollow, empty, false, call)
#define ONE_PATH_ROOTED(type, failv, failed, fdir, fpath, kind, nofollow, empty, root, call)       \
	ONE_PATH_ERR(type, failv, ((failed) ? after_ : 0), fdir, fpath, kind, nofollow, empty, root, \
		     call)
/* ONE_PATH_ERR(type, failv, err, ...): the same, err an expression over r_ and
 * after_ (errno as the call left it) giving the errno to record, 0 for a
 * success: for a call whose errno does not say why it failed (dlopen) */
#define ONE_PATH_ERR(type, failv, err, fdir, fpath, kind, nofollow, empty, root, call)             \
	do {                                                                                       \
		struct st_fast f_;                                                                 \
		/* an odd name (shim.h st__odd_ptr) is not read here: the \
		 * ordinary path tells a bad one (make_abs) */                      \
		if (((kind) == K_R || (kind) == K_Q) && !st__odd_ptr(fpath) &&                    \
		    st__fast_pre(&f_, (fpath), (kind), (nofollow))) {                              \
			struct st_call c_ = {.saved_errno = errno}; /* for failed, as below */                    \
			(void)c_;                                                                  \
			type r_ = (call);                                                          \
			int after_ = errno;                                                        \
			st__fast_post(&f_, (err));                                                 \
			errno = after_;                                                            \
			return r_;                                                                 \
		}                                                                                  \
		struct st_call c_;                                                                 \
		if (!st__enter(&c_))                                                               \
			return ST_UNCHECKED(type, c_, failv, EACCES, ST_PROBE_SLOT(fpath), call);  \
		struct st_acc *a_ = &st__tls_acc[0];                                               \
		st__acc_init(a_, (fdir), (fpath), (kind), (nofollow));                             \
		a_->empty_path = (empty);                                                          \
		a_->in_root = (root);                                                              \
		int e_ = st__pre(a_);                                                              \
		if (e_) {                                                                          \
			e_ = ST_REFUSAL(type, e_, ST_PROBE_SLOT(fpath), call);                     \
			st__leave(&c_);                                                            \
			errno = e_;                                                                \
			return failv;                                                              \
		}                                                                                  \
		errno = c_.saved_errno;                                                            \
		type r_ = ST_FORWARD(call);                                                        \
		int after_ = errno;                                                                \
		int rec_ = (err);                                                                  \
		if (!rec_ && (kind) == K_R && (st__g.flags & SANDTRACE_F_IDENTITY))                \
			a_->fd = ST_RESULT_FD(r_);                                                 \
		st__post(a_, rec_);                                                                \
		if (a_->refuse) { /* --verify --fence: this version failed verification */        \
			ST_UNDO_RESULT(r_);                                                        \
			errno = after_ = EACCES; /* failv may ask why (dl_refused) */              \
			r_ = failv;                                                                \
		}                                                                                  \
		st__leave(&c_);                                                                    \
		errno = after_;                                                                    \
		return r_;                                                                         \
	} while (0)

/*
 * Identity mode: the descriptor behind a wrapper's result (an int from the
 * open family, a FILE * from fopen), so that st__post takes the file's
 * identity with one fstat on what was opened; -1 for other results (dlopen:
 * st__post stats the path).  ST_UNDO_RESULT closes it again when the
 * version is refused.  The shim's own calls pass through (st__depth).
 * An int result is taken for a descriptor, a long never (move_mount's and
 * fsconfig's 0 would close fd 0): a wrapper of an open that returns long
 * (syscall(SYS_openat2)) types its ONE_PATH int.
 */
static inline int st__fd_int(int unused, int r) { return r; }
static inline int st__fd_file(int unused, FILE *f) { return f ? fileno(f) : -1; }
static inline int st__fd_none(int unused, ...) { return -1; }
#define ST_RESULT_FD(r)                                                                            \
	_Generic((r), int: st__fd_int, FILE *: st__fd_file, default: st__fd_none)(0, (r))
static inline void st__undo_int(int unused, int r) { if (r >= 0) close(r); }
static inline void st__undo_file(int unused, FILE *f) { if (f) fclose(f); }
static inline void st__undo_none(int unused, ...) {}
#define ST_UNDO_RESULT(r)                                                                          \
	_Generic((r), int: st__undo_int, FILE *: st__undo_file, default: st__undo_none)(0, (r))

/* TWO_PATHS: rename and link style calls; both names are checked before the
 * call (a refusal of either refuses the call) and recorded after it.  The
 * first name may be empty (AT_EMPTY_PATH: the file of d1) when e1. */
#define TWO_PATHS(type, failv, failed, d1, p1, k1, nf1, e1, d2, p2, k2, nf2, call)                 \
	TWO_PATHS_E(type, failv, failed, d1, p1, k1, nf1, e1, d2, p2, k2, nf2, false, call)
/* Is p null?  Asked of a wrapper's argument that libc declares nonnull
 * (link's, rename's): GCC folds a plain test of it to false, even with
 * -fno-delete-null-pointer-checks, unless the value is hidden from it. */
static inline bool st__null(const void *p)
{
	__asm__("" : "+r"(p));
	return p == NULL;
}
/* TWO_PATHS_E: the same, the second name also possibly empty (the file of d2)
 * when e2 (move_mount's MOVE_MOUNT_T_EMPTY_PATH) */
#define TWO_PATHS_E(type, failv, failed, d1, p1, k1, nf1, e1, d2, p2, k2, nf2, e2, call)           \
	do {                                                                                       \
		struct st_call c_;                                                                 \
		/* a null name the call does not take for its descriptor's file: the    \
		 * kernel copies both names in first and fails (EFAULT) before it looks  \
		 * either up, so the other is neither judged nor recorded; the same for \
		 * a name it cannot read (shim.h st__unreadable: (char *)-1, a kernel   \
		 * address), empty flag or not */                                        \
		if ((st__null(p1) ? !(e1) : st__unreadable(p1)) ||                                 \
		    (st__null(p2) ? !(e2) : st__unreadable(p2)))                                   \
			return call;                                                               \
		if (!st__enter(&c_)) /* probed on the first name: looked up first */              \
			return ST_UNCHECKED(type, c_, failv, EACCES,                               \
					    (e1) ? NULL : ST_PROBE_SLOT(p1), call);                \
		struct st_acc *a_ = &st__tls_acc[0], *b_ = &st__tls_acc[1];                        \
		st__acc_init(a_, (d1), (p1), (k1), (nf1));                                         \
		a_->empty_path = (e1);                                                             \
		st__acc_init(b_, (d2), (p2), (k2), (nf2));                                         \
		b_->empty_path = (e2);                                                             \
		a_->pair = b_->pair = true;                                         \
		int e_ = st__pre(a_);                                                              \
		const char **slot_ = ST_PROBE_SLOT(p1); /* the refused name's */                  \
		if (!e_) {                                                                         \
			e_ = st__pre(b_);                                                          \
			slot_ = ST_PROBE_SLOT(p2);                                                 \
		} else {                                                                           \
			st__acc_done(b_);                                                          \
		}                                                                                  \
		if (e_) {                                                                          \
			e_ = ST_REFUSAL(type, e_, slot_, call);                                    \
			st__acc_done(a_);                                                          \
			st__acc_done(b_);                                                          \
			st__leave(&c_);                                                            \
			errno = e_;                                                                \
			return failv;                                                              \
		}                                                                                  \
		errno = c_.saved_errno;                                                            \
		type r_ = ST_FORWARD(call);                                                        \
		int after_ = errno;                                                                \
		st__post(a_, (failed) ? after_ : 0);                                               \
		st__post(b_, (failed) ? after_ : 0);                                               \
		st__leave(&c_);                                                                    \
		errno = after_;                                                                    \
		return r_;                                                                         \
	} while (0)

/* The open(2) flags the kernel acts on: with O_PATH (and no O_TMPFILE, which
 * it takes first) only O_CLOEXEC, O_DIRECTORY and O_NOFOLLOW count; the
 * access mode, O_CREAT, O_EXCL and O_TRUNC are ignored (nothing is created,
 * truncated or opened for writing, and a final symlink is followed). */
static inline int st_open_flags(int flags)
{
	if ((flags & O_PATH) && !(flags & (O_TMPFILE & ~O_DIRECTORY)))
		return flags & (O_PATH | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW);
	return flags;
}

/* Does an open with these flags work on a final symlink itself rather than
 * follow it: O_NOFOLLOW, or O_CREAT|O_EXCL (which fails on any link), of
 * the flags the kernel acts on (st_open_flags). */
static inline bool st_open_nofollow(int flags)
{
	flags = st_open_flags(flags);
	return (flags & O_NOFOLLOW) || (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
}

/* The access kind of open(2) flags: anything that can change the file
 * (write access, O_CREAT, O_TRUNC, O_TMPFILE) is a write, even O_RDONLY|O_CREAT;
 * an O_PATH open is a query whatever else it says (st_open_flags). */
static inline unsigned st_open_kind(int flags)
{
	flags = st_open_flags(flags);
	if ((flags & O_TMPFILE) == O_TMPFILE)
		return K_W;
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)))
		return K_W;
	if (flags & O_PATH)
		return K_Q;
	if (flags & O_DIRECTORY)
		return K_D;
	return K_R;
}

/* The access kind of an fopen() mode string. */
static inline unsigned st_fopen_kind(const char *mode)
{
	if (!mode)
		return K_R;
	if (mode[0] != 'r')
		return K_W;
	/* as glibc reads it (libio/fileops.c): the six characters after the
	 * first, up to a ',' (",ccs="); a '+' further on is ignored */
	for (int i = 1; i < 7 && mode[i] && mode[i] != ','; i++)
		if (mode[i] == '+')
			return K_W;
	return K_R;
}

#endif
