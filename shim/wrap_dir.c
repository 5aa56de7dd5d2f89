/* shim/wrap_dir.c - directory listings under a fence: a hidden name is left out of readdir, as it is missing to lookups. */
#include <string.h>
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
#define READDIR_BODY(type, call)                                                                   \
	do {                                                                                       \
		struct st_call c_;                                                                 \
		if (!st__enter(&c_))                                                               \
			return call;                                                               \
		if (!st__listing_filtered()) {                                                     \
			st__leave(&c_);                                                            \
			errno = c_.saved_errno;                                                    \
			return call;                                                               \
		}                                                                                  \
		char dir_[PATH_MAX + NAME_MAX + 2];                                                \
		ssize_t dl_ = st__fd_path(dirfd(d), dir_, PATH_MAX);                               \
		type e_;                                                                           \
		int after_;                                                                        \
		for (;;) {                                                                         \
			errno = c_.saved_errno;                                                    \
			e_ = ST_FORWARD(call);                                                     \
			after_ = errno;                                                            \
			if (!e_ || dl_ < 0)                                                        \
				break;                                                             \
			size_t nl_ = strlen(e_->d_name);                                           \
			if ((nl_ == 1 && e_->d_name[0] == '.') ||                                 \
			    (nl_ == 2 && !memcmp(e_->d_name, "..", 2)) || nl_ > NAME_MAX)          \
				break;                                                             \
			dir_[dl_] = '/';                                                           \
			memcpy(dir_ + dl_ + 1, e_->d_name, nl_ + 1);                               \
			bool hide_ = st__hidden(AT_FDCWD, dir_);                                   \
			dir_[dl_] = 0;                                                             \
			if (!hide_)                                                                \
				break;                                                             \
		}                                                                                  \
		st__leave(&c_);                                                                    \
		errno = after_;                                                                    \
		return e_;                                                                         \
	} while (0)

EXPORT struct dirent *readdir(DIR *d)
{
	READDIR_BODY(struct dirent *, REAL(readdir)(d));
}
EXPORT struct dirent64 *readdir64(DIR *d)
{
	READDIR_BODY(struct dirent64 *, REAL(readdir64)(d));
}
