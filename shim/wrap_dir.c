/* shim/wrap_dir.c - directory listings under a fence: a hidden name is left out of readdir, as it is missing to lookups. */
#include <dirent.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wrap.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * readdir and friends read entries that libc fetched with getdents64; each
 * entry is judged like a lookup of dir/name (without following a final
 * symlink), and a name the sandbox hides is skipped.  The directory's path
 * comes from its descriptor (/proc/self/fd), so a directory renamed after
 * opendir is still judged where it is.  In runs whose sandbox hides nothing
 * (trace-only) this is one flag test per call.  scandir, nftw, fts and glob
 * filter through their own wrappers (wrap_fs.c).
 */
/* The body of readdir and readdir_r and their 64-bit twins: the next
 * entry is read until one is not hidden.  got: an entry was read (an
 * expression of r_, the call's result); name: its d_name; failv: the
 * call's failure (a listing that cannot be filtered: ST_UNCHECKED). */
#define READDIR_BODY(type, failv, call, got, name)                                                 \
	do {                                                                                       \
		struct st_call c_;                                                                 \
		if (!st__enter(&c_))                                                               \
			return ST_UNCHECKED(type, c_, failv, EACCES, NULL, call);                  \
		if (!st__listing_filtered()) {                                                     \
			st__leave(&c_);                                                            \
			errno = c_.saved_errno;                                                    \
			return call;                                                               \
		}                                                                                  \
		char dirb_[PATH_MAX + NAME_MAX + 2], *dir_;                                         \
		size_t map_;                                                                       \
		ssize_t dl_ = st__listing_dir(dirfd(d), dirb_, &dir_, &map_);                      \
		type r_;                                                                           \
		int after_;                                                                        \
		for (;;) {                                                                         \
			errno = c_.saved_errno;                                                    \
			r_ = ST_FORWARD(call);                                                     \
			after_ = errno;                                                            \
			if (!(got) || !st__entry_hidden(dir_, dl_, (name), strlen(name)))          \
				break;                                                             \
		}                                                                                  \
		if (map_)                                                                          \
			munmap(dir_, map_);                                                        \
		st__leave(&c_);                                                                    \
		errno = after_;                                                                    \
		return r_;                                                                         \
	} while (0)

EXPORT struct dirent *readdir(DIR *d)
{
	READDIR_BODY(struct dirent *, NULL, REAL(readdir)(d), r_ != NULL, r_->d_name);
}
EXPORT struct dirent64 *readdir64(DIR *d)
{
	READDIR_BODY(struct dirent64 *, NULL, REAL(readdir64)(d), r_ != NULL, r_->d_name);
}

/* readdir_r and readdir64_r (deprecated, still used): the same filter, the
 * next entry read into the caller's buffer until one is not hidden. */
EXPORT int readdir_r(DIR *d, struct dirent *entry, struct dirent **result)
{
	READDIR_BODY(int, (result ? (*result = NULL) : 0, EACCES), REAL(readdir_r)(d, entry, result),
		     r_ == 0 && result && *result, (*result)->d_name);
}
EXPORT int readdir64_r(DIR *d, struct dirent64 *entry, struct dirent64 **result)
{
	READDIR_BODY(int, (result ? (*result = NULL) : 0, EACCES), REAL(readdir64_r)(d, entry, result),
		     r_ == 0 && result && *result, (*result)->d_name);
}

/*
 * getdents64 and getdirentries (and syscall() with SYS_getdents64 or
 * SYS_getdents): the kernel's records, in the caller's buffer, are filtered
 * in place: a hidden name's record is taken out and the ones after it moved
 * down (each keeps its d_off, the position after it, so a seek to it stays
 * right).  A buffer whose every record was hidden is read again, since 0
 * means the end of the directory.  name_off: where the name starts in a
 * record (struct dirent64, or the kernel's older struct linux_dirent).
 */
static long dents_filter(int fd, char *buf, long n, size_t name_off)
{
	char dirb[PATH_MAX + NAME_MAX + 2], *dir;
	size_t map;
	ssize_t dl = st__listing_dir(fd, dirb, &dir, &map);
	if (dl < 0 && dl != -ENAMETOOLONG)
		return n;
	long w = 0;
	for (long o = 0; o < n;) {
		unsigned short reclen;
		memcpy(&reclen, buf + o + offsetof(struct dirent64, d_reclen), sizeof(reclen));
		if (reclen == 0 || (long)reclen > n - o ||
		    reclen <= name_off) { /* not the kernel's */
			w = n;
			break;
		}
		const char *name = buf + o + name_off;
		if (!st__entry_hidden(dir, dl, name, strnlen(name, reclen - name_off))) {
			if (w != o)
				memmove(buf + w, buf + o, reclen);
			w += reclen;
		}
		o += reclen;
	}
	if (map)
		munmap(dir, map);
	return w;
}

/* which call reads the records */
enum { DENTS_GETDENTS64, DENTS_GETDIRENTRIES, DENTS_GETDIRENTRIES64, DENTS_SYSCALL };

static long dents(int how, long nr, int fd, void *buf, size_t len, off64_t *basep)
{
	struct st_call c_;
	bool in = st__enter(&c_);
	if (!in && c_.refuse) { /* a listing that cannot be filtered (ST_UNCHECKED) */
		errno = EACCES;
		return -1;
	}
	bool filter = in && st__listing_filtered();
	long n;
	int after;
	for (;;) {
		if (in)
			errno = c_.saved_errno;
#define DENTS_CALL                                                                                 \
	(how == DENTS_GETDENTS64	? (long)REAL(getdents64)(fd, buf, len)                           \
	 : how == DENTS_GETDIRENTRIES	? (long)REAL(getdirentries)(fd, buf, len, (off_t *)basep)    \
	 : how == DENTS_GETDIRENTRIES64 ? (long)REAL(getdirentries64)(fd, buf, len, basep)           \
					: REAL(syscall)(nr, (long)fd, (long)buf, (long)len))
		n = in ? ST_FORWARD(DENTS_CALL) : DENTS_CALL;
#undef DENTS_CALL
		after = errno;
		if (!filter || n <= 0)
			break;
		n = dents_filter(fd, buf, n,
				 how == DENTS_SYSCALL && nr != SYS_getdents64
					 ? offsetof(struct dirent64, d_type) /* linux_dirent: name after d_reclen */
					 : offsetof(struct dirent64, d_name));
		if (n > 0)
			break;
	}
	if (in)
		st__leave(&c_);
	errno = after;
	return n;
}

EXPORT ssize_t getdents64(int fd, void *buf, size_t len)
{
	return dents(DENTS_GETDENTS64, 0, fd, buf, len, NULL);
}
EXPORT ssize_t getdirentries(int fd, char *buf, size_t len, off_t *basep)
{
	return dents(DENTS_GETDIRENTRIES, 0, fd, buf, len, (off64_t *)basep);
}
EXPORT ssize_t getdirentries64(int fd, char *buf, size_t len, off64_t *basep)
{
	return dents(DENTS_GETDIRENTRIES64, 0, fd, buf, len, basep);
}
long st__sys_getdents(long nr, int fd, void *buf, size_t len)
{
	return dents(DENTS_SYSCALL, nr, fd, buf, len, NULL);
}
