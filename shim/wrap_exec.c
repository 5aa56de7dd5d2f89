/* shim/wrap_exec.c - processes: exec*, posix_spawn*, fork/vfork, system/popen, exit and wait; the preload is re-injected at every exec. */
#include <elf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sandtrace/log.h"
#include "wrap.h"

#define EXPORT __attribute__((visibility("default")))
extern char **environ;

/* ---------------------------------------------------------------------------
 * Environment re-injection.  The envp handed to the kernel always carries
 * LD_PRELOAD with our library first (entries the program asked for are
 * kept after it) and the SANDTRACE_* variables as this process received
 * them, whatever the program did to its environment (env -i, unsetenv,
 * LD_PRELOAD= ...).  Memory comes from a private mmap: no malloc between
 * fork and exec, and the map is dropped if the exec fails.
 * ------------------------------------------------------------------------ */
struct st_env {
	char **envp;
	void *map;
	size_t maplen;
};

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static bool is_our_var(const char *e)
{
	return has_prefix(e, "LD_PRELOAD=") || has_prefix(e, "SANDTRACE_SOCKET=") ||
	       has_prefix(e, "SANDTRACE_ARENA=") || has_prefix(e, "SANDTRACE_LIB=") ||
	       has_prefix(e, "SANDTRACE_FLAGS=") || has_prefix(e, "SANDTRACE_AUDIT=") ||
	       has_prefix(e, "SANDTRACE_EXE=") ||
	       (st__g.audit && has_prefix(e, "LD_AUDIT="));
}

/* Is token (len n) our library?  Compared by path, and by file name for a
 * preload given without a directory. */
static bool is_our_lib(const char *tok, size_t n)
{
	size_t l = strlen(st__g.lib_path);
	if (n == l && !memcmp(tok, st__g.lib_path, n))
		return true;
	return n == 15 && !memcmp(tok, "libsandtrace.so", 15);
}

static char *put(char **w, const char *s)
{
	char *start = *w;
	size_t n = strlen(s);
	memcpy(*w, s, n);
	*w += n;
	**w = 0;
	return start;
}

static void put_u(char **w, unsigned u)
{
	char d[16];
	int k = 0;
	do
		d[k++] = (char)('0' + u % 10);
	while ((u /= 10) && k < 15);
	while (k)
		*(*w)++ = d[--k];
	**w = 0;
}

/* Append "NAME=" + list with ours first and the program's other entries after. */
static char *put_list(char **w, const char *name, const char *ours, const char *theirs)
{
	char *start = *w;
	put(w, name);
	put(w, ours);
	if (theirs) {
		const char *p = theirs;
		while (*p) {
			while (*p == ':' || *p == ' ')
				p++;
			const char *s = p;
			while (*p && *p != ':' && *p != ' ')
				p++;
			if (p > s && !is_our_lib(s, (size_t)(p - s)) &&
			    !(strlen(ours) == (size_t)(p - s) && !memcmp(s, ours, (size_t)(p - s)))) {
				*(*w)++ = ':';
				memcpy(*w, s, (size_t)(p - s));
				*w += p - s;
			}
		}
	}
	*(*w)++ = 0;
	return start;
}

/* with_preload false: a program that cannot load our preload (another ELF
 * class) gets LD_PRELOAD without it, so the loader prints nothing. */
/* A nested `sandtrace run` (or any program) that set up a trace of its own
 * for this exec names another daemon: its variables are passed on as they
 * are (its processes report to it; this run saw the exec), except the
 * launcher bit, which is for the launcher alone. */
static bool env_nested(char *const envp[], size_t n, struct st_env *out)
{
	size_t len = ((n + 1) * sizeof(char *) + 64 + 4095) & ~(size_t)4095;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return false;
	char **v = m;
	char *w = (char *)m + (n + 1) * sizeof(char *);
	size_t k = 0;
	/* (envp[i] NULL before n: environ itself, shortened meanwhile by a
	 * time-zone call's entry taken out, wrap_fs.c tz_uninsert) */
	for (size_t i = 0; i < n && envp[i]; i++) {
		if (has_prefix(envp[i], "SANDTRACE_FLAGS=")) {
			unsigned f = st__parse_uint(envp[i] + 16);
			v[k++] = put(&w, "SANDTRACE_FLAGS=");
			put_u(&w, f & ~SANDTRACE_F_LAUNCHER);
			w++;
		} else {
			/* (NULL: an entry a time-zone call put in for the call) */
			const char *u = st__env_unswap(envp[i]);
			if (u)
				v[k++] = (char *)u;
		}
	}
	v[k] = NULL;
	out->envp = v;
	out->map = m;
	out->maplen = len;
	return true;
}

/* Does an envp that names another daemon's socket (their_socket) carry a
 * trace of its own the new image will join: a socket there, and a sandtrace
 * library in its LD_PRELOAD (preload, NULL when none) to report to it?
 * Else the image would be traced by nobody (an environment saved in an
 * earlier run and put back, naming a daemon long gone; a socket variable
 * copied without the preload), and it is not a nested trace: env_fix puts
 * this run's variables in place of those.  One stat, only for such an envp.
 * Under a sandbox that can refuse (st__may_refuse) nothing is handed over:
 * the new image stays in this run's sandbox (a nested run's processes are
 * this run's, and its own daemon hears of none of them), or any program
 * could leave the fence by naming a socket and a file of that name. */
static bool nested_live(const char *their_socket, const char *preload)
{
	if (st__may_refuse())
		return false;
	struct stat st;
	if (ST_SYSCALL(SYS_newfstatat, AT_FDCWD, their_socket, &st, 0) != 0 || !S_ISSOCK(st.st_mode))
		return false;
	for (const char *p = preload; p && *p;) {
		while (*p == ':' || *p == ' ')
			p++;
		const char *s = p;
		while (*p && *p != ':' && *p != ' ')
			p++;
		size_t n = (size_t)(p - s);
		if ((n == 15 || (n > 15 && s[n - 16] == '/')) &&
		    !memcmp(s + n - 15, "libsandtrace.so", 15))
			return true;
	}
	return false;
}

/* The new image's executable, named for it (SANDTRACE_ENV_EXE): the
 * absolute path handed to execve and what it runs, resolved.  slen 0: none. */
struct exe_hint {
	const char *spelling, *exe;
	size_t slen, elen;
};

/* Is an environment whose SANDTRACE_SOCKET and LD_PRELOAD are these (NULL:
 * none) one that env_fix hands to another trace (env_nested)?  handed_over:
 * the same asked of envp.  An exec with it runs a program this run does
 * not trace: recorded untraced (SANDTRACE_UNTRACED_NESTED, note_exec). */
static bool handed_over_to(const char *their_socket, const char *preload)
{
	return their_socket && *their_socket && strcmp(their_socket, st__g.socket_path) != 0 &&
	       nested_live(their_socket, preload);
}
static bool handed_over(char *const envp[])
{
	const char *preload = NULL, *their_socket = NULL;
	for (size_t n = 0; envp && envp[n]; n++) {
		if (has_prefix(envp[n], "LD_PRELOAD="))
			preload = envp[n] + 11;
		if (has_prefix(envp[n], "SANDTRACE_SOCKET="))
			their_socket = envp[n] + 17;
	}
	return handed_over_to(their_socket, preload);
}

/* buf/cap: a caller's buffer (the free access slot's path buffer, whose first
 * page is already touched) used when the new environment fits; else a map.
 * In a vfork child the buffer is in the parent's memory, which is fine: the
 * slot is free in the parent too (it was not inside the shim at vfork). */
static bool env_fix(char *const envp[], struct st_env *out, bool with_preload, char *buf,
		    size_t cap, const struct exe_hint *hint)
{
	size_t n = 0, bytes = 0;
	const char *preload = NULL, *audit = NULL;
	out->envp = (char **)envp;
	out->map = NULL;
	if (!st__g.lib_path[0])
		return false; /* nothing to inject with */
	const char *their_socket = NULL;
	if (envp)
		for (; envp[n]; n++) {
			if (has_prefix(envp[n], "LD_PRELOAD="))
				preload = envp[n] + 11;
			if (has_prefix(envp[n], "LD_AUDIT="))
				audit = envp[n] + 9;
			if (has_prefix(envp[n], "SANDTRACE_SOCKET="))
				their_socket = envp[n] + 17;
		}
	if (handed_over_to(their_socket, preload))
		return env_nested(envp, n, out);
	/* exactly what is written below (each list entry adds at most its
	 * length and a ':'), plus slack */
	size_t lib = strlen(st__g.lib_path), aud = strlen(st__g.audit_path);
	bytes = (n + 9) * sizeof(char *) + (11 + lib + (preload ? strlen(preload) + 1 : 0) + 1) +
		(9 + aud + (audit ? strlen(audit) + 1 : 0) + 1) + (16 + aud + 1) +
		(17 + strlen(st__g.socket_path) + 1) + (16 + strlen(st__g.arena_name) + 1) +
		(14 + lib + 1) + (16 + 10 + 1) + 64;
	if (hint && hint->slen)
		bytes += 14 + 10 + 1 + hint->slen + hint->elen + 1 + sizeof(char *);
	size_t len = 0;
	void *m = buf;
	if (!buf || bytes > cap || ((uintptr_t)buf & (sizeof(char *) - 1))) {
		len = (bytes + 4095) & ~(size_t)4095;
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return false;
	}
	char **v = m;
	char *w = (char *)m + (n + 9) * sizeof(char *);
	size_t k = 0;
	/* the lists where the program's own entry was (the first of its
	 * name), which a traced program's environ shows without the shim's
	 * library (init.c env_hide): `env -i A=1 LD_PRELOAD=x env` prints its
	 * entries in the order untraced; first when the program has none */
	char *lp = put_list(&w, "LD_PRELOAD=", with_preload ? st__g.lib_path : "", preload);
	w++;
	char *la = NULL;
	if (st__g.audit && with_preload) {
		la = put_list(&w, "LD_AUDIT=", st__g.audit_path, audit);
		w++;
	}
	if (!preload)
		v[k++] = lp;
	if (la && !audit)
		v[k++] = la;
	if (la)
		v[k++] = put(&w, "SANDTRACE_AUDIT="), put(&w, st__g.audit_path), w++;
	v[k++] = put(&w, "SANDTRACE_SOCKET="), put(&w, st__g.socket_path), w++;
	v[k++] = put(&w, "SANDTRACE_ARENA="), put(&w, st__g.arena_name), w++;
	v[k++] = put(&w, "SANDTRACE_LIB="), put(&w, st__g.lib_path), w++;
	v[k++] = put(&w, "SANDTRACE_FLAGS="), put_u(&w, st__g.flags), w++;
	if (hint && hint->slen) {
		v[k++] = put(&w, "SANDTRACE_EXE="), put_u(&w, (unsigned)hint->slen);
		*w++ = ':';
		memcpy(w, hint->spelling, hint->slen);
		w += hint->slen;
		memcpy(w, hint->exe, hint->elen);
		w += hint->elen;
		*w++ = 0;
	}
	/* (envp[i] NULL before n: environ itself, shortened meanwhile by a
	 * time-zone call's entry taken out, wrap_fs.c tz_uninsert) */
	for (size_t i = 0; i < n && envp[i]; i++) {
		if (preload && lp && has_prefix(envp[i], "LD_PRELOAD=")) {
			v[k++] = lp;
			lp = NULL;
		} else if (audit && la && has_prefix(envp[i], "LD_AUDIT=")) {
			v[k++] = la;
			la = NULL;
		}
		const char *u = is_our_var(envp[i]) ? NULL : st__env_unswap(envp[i]);
		if (u) /* (NULL also for an entry a time-zone call put in for the call) */
			v[k++] = (char *)u;
	}
	/* (the program's entry gone meanwhile: environ shortened, as above) */
	if (preload && lp)
		v[k++] = lp;
	if (audit && la)
		v[k++] = la;
	v[k] = NULL;
	out->envp = v;
	out->map = len ? m : NULL;
	out->maplen = len;
	return true;
}

static void env_free(struct st_env *e)
{
	if (e->map)
		munmap(e->map, e->maplen);
	e->map = NULL;
}

/* ---------------------------------------------------------------------------
 * What will run: programs the preload cannot follow are reported before the
 * exec (static binaries, set-id programs for which ld.so drops LD_PRELOAD),
 * and a #! script's interpreter is an exec of its own.
 * ------------------------------------------------------------------------ */
/* The head of the file probe_exec reads in one pread: the ELF header, and
 * for ordinary executables the program headers and notes behind it. */
#define PROBE_HEAD 1024u

/* len bytes of the file at off: from the head when they lie in it (no
 * system call), else by pread.  Returns buf, or NULL. */
static const unsigned char *probe_bytes(int fd, const unsigned char *head, size_t hlen,
					uint64_t off, size_t len, unsigned char *buf)
{
	if (off <= hlen && len <= hlen - off)
		return head + off;
	return ST_SYSCALL(SYS_pread64, fd, buf, len, (off_t)off) == (ssize_t)len ? buf : NULL;
}

/* Does this PT_NOTE segment hold Go's build-id note (owner "Go", type 4)?
 * A dynamically linked Go program loads the preload but its runtime makes
 * most system calls itself, past libc. */
static bool is_go_note(int fd, const unsigned char *head, size_t hlen, const Elf64_Phdr *ph)
{
	unsigned char tmp[512];
	size_t len = ph->p_filesz < sizeof(tmp) ? (size_t)ph->p_filesz : sizeof(tmp);
	const unsigned char *buf = probe_bytes(fd, head, hlen, ph->p_offset, len, tmp);
	if (buf == NULL)
		return false;
	for (size_t off = 0; off + 12 <= len;) {
		uint32_t namesz, descsz, type;
		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		size_t name_at = off + 12, desc_at = name_at + ((namesz + 3u) & ~3u);
		if (namesz == 3 && type == 4 && name_at + 3 <= len && !memcmp(buf + name_at, "Go", 3))
			return true;
		off = desc_at + ((descsz + 3u) & ~3u);
	}
	return false;
}

/* Open what an exec of (dirfd, path) would run, to probe it: the fd, or -1
 * with errno.  Non-blocking: a FIFO (which the exec refuses) must not hang
 * the probe. */
static int probe_open(int dirfd, const char *path)
{
	int fl = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	if (dirfd == AT_FDCWD) /* a resolved name deeper than PATH_MAX too */
		return (int)st__at_abs(SYS_openat, path, fl, 0);
	return (int)ST_SYSCALL(SYS_openat, dirfd, path, fl);
}

/* Is the head of a file (hlen bytes) a 64-bit ELF program of this machine,
 * which the kernel runs itself?  (One of another machine may be run by an
 * emulator registered with binfmt_misc, which is then the executable.) */
static bool native_elf(const unsigned char *hdr, size_t hlen)
{
#if defined(__x86_64__)
	const unsigned machine = EM_X86_64;
#elif defined(__aarch64__)
	const unsigned machine = EM_AARCH64;
#else
	const unsigned machine = EM_NONE; /* not known here: never */
#endif
	Elf64_Ehdr eh;
	if (hlen < sizeof(eh) || memcmp(hdr, ELFMAG, SELFMAG) != 0 || hdr[EI_CLASS] != ELFCLASS64)
		return false;
	memcpy(&eh, hdr, sizeof(eh));
	return machine != EM_NONE && eh.e_machine == machine;
}

/* Is the file whose identity st is this process's own dynamic loader (the
 * PT_INTERP of its program)?  Run as a program (`ld.so [OPTION]... PROGRAM`,
 * as ldd runs it), the loader has no PT_INTERP of its own, like a static
 * program, but it reads LD_PRELOAD as it does for any dynamic program, and
 * PROGRAM runs traced.  The loader's identity is taken once a process (one
 * stat; a vfork child, which writes none of its parent's memory, takes it
 * again each time).  Thread-safe (threads that race store the same). */
static bool own_loader(const struct stat *st)
{
	static dev_t loader_dev;
	static ino_t loader_ino;
	static _Atomic int known; /* 0: not yet, 1: known, -1: none */
	int k = atomic_load_explicit(&known, memory_order_acquire);
	dev_t dev = loader_dev;
	ino_t ino = loader_ino;
	if (!k) {
		k = -1;
		const Elf64_Phdr *ph = (const Elf64_Phdr *)st__auxval(AT_PHDR);
		unsigned long n = ph ? st__auxval(AT_PHNUM) : 0;
		uintptr_t bias = 0; /* a program without PT_PHDR is not moved */
		const char *interp = NULL;
		for (unsigned long i = 0; i < n; i++)
			if (ph[i].p_type == PT_PHDR)
				bias = (uintptr_t)ph - ph[i].p_vaddr;
		for (unsigned long i = 0; i < n; i++)
			if (ph[i].p_type == PT_INTERP)
				interp = (const char *)(bias + ph[i].p_vaddr);
		struct stat ls;
		if (interp && ST_SYSCALL(SYS_newfstatat, AT_FDCWD, interp, &ls, 0) == 0) {
			dev = ls.st_dev;
			ino = ls.st_ino;
			k = 1;
		}
		if (!st__vchild) {
			loader_dev = dev;
			loader_ino = ino;
			atomic_store_explicit(&known, k, memory_order_release);
		}
	}
	return k > 0 && st->st_dev == dev && st->st_ino == ino;
}

/* The program a run of the dynamic loader loads: argv's first word after
 * the loader's options (glibc's rtld: --list, --verify, --inhibit-cache;
 * --library-path, --inhibit-rpath, --audit, --preload, --argv0,
 * --glibc-hwcaps-prepend, --glibc-hwcaps-mask with a value), with *list
 * set when the loader only maps it (--list, --verify: ldd); NULL when the
 * loader loads none (no word; --help, --version, --list-tunables, an
 * option it does not know, which it refuses). */
static const char *loader_program(char *const argv[], bool *list)
{
	static const char *const valued[] = {"--library-path", "--inhibit-rpath", "--audit",
					     "--preload", "--argv0", "--glibc-hwcaps-prepend",
					     "--glibc-hwcaps-mask"};
	*list = false;
	if (!argv || !argv[0])
		return NULL;
	for (size_t i = 1; argv[i]; i++) {
		const char *o = argv[i];
		if (o[0] != '-' || o[1] != '-')
			return o;
		if (!strcmp(o, "--list") || !strcmp(o, "--verify")) {
			*list = true;
			continue;
		}
		if (!strcmp(o, "--inhibit-cache"))
			continue;
		size_t v = 0;
		while (v < sizeof(valued) / sizeof(valued[0]) && strcmp(o, valued[v]))
			v++;
		if (v == sizeof(valued) / sizeof(valued[0]) || !argv[i + 1])
			return NULL;
		i++;
	}
	return NULL;
}

/* Does the kernel ignore what the file open on fd grants an exec: its
 * set-id bits (ids true) or its capabilities (false)?  Both on a mount
 * without suid (mnt_may_suid); the set-id bits also in a process under
 * no_new_privs (prctl PR_SET_NO_NEW_PRIVS: bubblewrap, systemd's
 * NoNewPrivileges), whose capabilities still count.  One or two system
 * calls; async-signal-safe. */
static bool privs_ignored(int fd, bool ids)
{
	struct statfs sf;
	if (ST_SYSCALL(SYS_fstatfs, fd, &sf) == 0 && (sf.f_flags & ST_NOSUID))
		return true;
	return ids && ST_SYSCALL(SYS_prctl, PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
}

/* Why the preload cannot follow the program open on fd (0: it can), its
 * #! interpreter in interp, and in *elf whether its head was read and is a
 * program of this machine's (native_elf); *loader: it is this process's own
 * dynamic loader, run as a program (own_loader), which the preload follows.
 * A file that could not be opened (fd < 0: execute-only, say) is taken as
 * followable.  System calls: getresuid, getresgid, fstat, fgetxattr, one
 * pread of the head (more only for program headers or notes past its first
 * PROBE_HEAD bytes; one stat the first time a program without PT_INTERP is
 * met).  resetids: the exec is made with the effective ids reset to the
 * real ones (posix_spawn's POSIX_SPAWN_RESETIDS, in the child). */
static unsigned probe_exec(int fd, char *interp, size_t icap, bool *elf, bool *loader,
			   bool resetids)
{
	interp[0] = 0;
	*elf = false;
	*loader = false;
	if (fd < 0)
		return 0;
	unsigned why = 0;
	struct stat st;
	bool have_st = false;
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	ST_SYSCALL(SYS_getresuid, &ru, &eu, &su);
	ST_SYSCALL(SYS_getresgid, &rg, &eg, &sg);
	if (resetids)
		eu = ru, eg = rg;
	if (ST_SYSCALL(SYS_fstat, fd, &st) == 0) {
		have_st = true;
		/* the kernel sets AT_SECURE when the new effective ids differ
		 * from the real ones, or when the file's capabilities raise a
		 * user whose real uid is not root (bprm_fill_uid,
		 * cap_bprm_creds_from_file).  It ignores the set-id bits on a
		 * nosuid mount and under no_new_privs, the capabilities on a
		 * nosuid mount (privs_ignored: asked only of such a file) */
		bool suid = st.st_mode & S_ISUID;
		bool sgid = (st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP);
		if ((suid || sgid) && privs_ignored(fd, true))
			suid = sgid = false;
		uid_t neu = suid ? st.st_uid : eu;
		gid_t neg = sgid ? st.st_gid : eg;
		if (neu != ru || neg != rg)
			why = SANDTRACE_UNTRACED_SETID;
		else if (ru != 0 &&
			 ST_SYSCALL(SYS_fgetxattr, fd, "security.capability", NULL, 0) > 0 &&
			 !privs_ignored(fd, false))
			why = SANDTRACE_UNTRACED_SETID;
	}
	if (why)
		return why;
	_Alignas(8) unsigned char hdr[PROBE_HEAD];
	ssize_t n = ST_SYSCALL(SYS_pread64, fd, hdr, sizeof(hdr), 0);
	size_t hlen = n > 0 ? (size_t)n : 0;
	if (hlen >= 2 && hdr[0] == '#' && hdr[1] == '!') {
		size_t i = 2;
		while (i < hlen && (hdr[i] == ' ' || hdr[i] == '\t'))
			i++;
		size_t s = i;
		while (i < hlen && hdr[i] != ' ' && hdr[i] != '\t' && hdr[i] != '\n')
			i++;
		if (i > s && i - s < icap) {
			memcpy(interp, hdr + s, i - s);
			interp[i - s] = 0;
		}
	} else if (hlen >= sizeof(Elf32_Ehdr) && !memcmp(hdr, ELFMAG, SELFMAG) &&
		   hdr[EI_CLASS] != ELFCLASS64) {
		/* 32-bit (or x32): ld.so cannot load our 64-bit preload there */
		why = SANDTRACE_UNTRACED_ELFCLASS;
	} else if (hlen >= sizeof(Elf64_Ehdr) && !memcmp(hdr, ELFMAG, SELFMAG) &&
		   hdr[EI_CLASS] == ELFCLASS64) {
		*elf = native_elf(hdr, hlen);
		Elf64_Ehdr eh;
		memcpy(&eh, hdr, sizeof(eh));
		bool has_interp = false, is_go = false, whole = eh.e_phnum <= 128;
		for (unsigned i = 0; i < eh.e_phnum && i < 128; i++) {
			Elf64_Phdr ph;
			unsigned char tmp[sizeof(ph)];
			const unsigned char *b =
				probe_bytes(fd, hdr, hlen, eh.e_phoff + (uint64_t)i * eh.e_phentsize,
					    sizeof(ph), tmp);
			if (b == NULL) {
				whole = false; /* truncated or corrupt: the kernel refuses it */
				break;
			}
			memcpy(&ph, b, sizeof(ph));
			if (ph.p_type == PT_INTERP)
				has_interp = true;
			if (ph.p_type == PT_NOTE && ph.p_filesz >= 16 && is_go_note(fd, hdr, hlen, &ph))
				is_go = true;
		}
		/* only a program whose headers were all read is judged: one the
		 * kernel will refuse (ENOEXEC) must not be reported as a static
		 * program that ran */
		if (whole && !has_interp && eh.e_type == ET_DYN && have_st && own_loader(&st))
			*loader = true;
		else if (whole && !has_interp)
			why = SANDTRACE_UNTRACED_STATIC;
		else if (whole && is_go)
			why = SANDTRACE_UNTRACED_GO;
	}
	return why;
}

/* note_exec's fd when the caller has not opened the program */
#define PROBE_OPEN_HERE (-2)

/* Name the executable for the image an exec of the absolute path spelling
 * will start (struct exe_hint): the program, or its #! interpreter when
 * that is a program itself (an interpreter that is a script runs another
 * one: no hint, the image asks the kernel).  a: the exec's own access,
 * done with; fd: the program, open (probe_open), or -1.  The name is the
 * exec's own resolution when its check made one; else the kernel's name of
 * the open program (or interpreter) from /proc/thread-self/fd (st__fd_name: one
 * readlink, 2.8 us here against 5.9 us for the four of /bin/true's
 * resolution, docs/BENCHMARKS.md stop 17; the file the kernel will run,
 * named as its /proc/PID/exe will be); else the slot resolves again
 * (st__resolve_exe).  The name is in the slot's rbuf (the environment is
 * built in its absbuf).  For a script, an open and a read of its
 * interpreter.  All less than the new image's readlink of /proc/self/exe
 * (25-36 us here, docs/BENCHMARKS.md stop 15). */
static void exe_hint(struct exe_hint *h, struct st_acc *a, const char *spelling,
		     const char *interp, bool elf, int fd)
{
	h->slen = 0;
	if (!spelling || spelling[0] != '/')
		return;
	const char *prog = spelling;
	int ifd = -1;
	if (interp[0]) {
		if (interp[0] != '/')
			return;
		ifd = probe_open(AT_FDCWD, interp);
		if (ifd < 0)
			return;
		_Alignas(8) unsigned char m[sizeof(Elf64_Ehdr)];
		ssize_t r = ST_SYSCALL(SYS_pread64, ifd, m, sizeof(m), 0);
		if (r < 0 || !native_elf(m, (size_t)r)) {
			ST_SYSCALL(SYS_close, ifd);
			return; /* a script, an emulated program, or one the kernel refuses */
		}
		prog = interp;
		fd = ifd;
	} else if (!elf) {
		return; /* not read (execute-only, say): what the kernel runs is not known */
	}
	ssize_t n = -1;
	if (prog == spelling && a->resolved && st__rpath_resolved(a) && !a->magic_fd && !a->skip &&
	    !(a->via_link & (ST_VIA_MAGIC | ST_VIA_HIDDEN)) && a->path == spelling && !a->nofollow) {
		/* the exec's own check resolved it already */
		h->exe = a->rpath;
		n = (ssize_t)a->rpath_len;
	} else {
		/* a name the kernel marks removed is not the file's (a memfd, a
		 * program replaced since it was opened): the resolution decides,
		 * which leaves a /proc spelling to the image itself */
		if (fd >= 0 && (n = st__fd_name(fd, a->rbuf, sizeof(a->rbuf))) > 0 &&
		    !st__name_deleted(a->rbuf, (size_t)n))
			h->exe = a->rbuf;
		else
			n = st__resolve_exe(a, prog, &h->exe);
	}
	if (ifd >= 0)
		ST_SYSCALL(SYS_close, ifd);
	size_t sl = strlen(spelling);
	if (n <= 0 || sl > PATH_MAX)
		return;
	h->elen = (size_t)n;
	h->spelling = spelling;
	h->slen = sl;
}

/*
 * A program run by a name that is a symlink (gcc -> gcc-12, ar ->
 * x86_64-linux-gnu-ar, /bin/sh -> dash, an interpreter named through a
 * link): the kernel read the link, so the package that owns it was used, as
 * docs/AUDIT.md says and the auditor counts.  The exec's record names what
 * the link leads to; the link itself is recorded as a query of the name, not
 * followed (as lstat would record it), unjudged as a PATH probe is: the exec
 * was judged by what it runs.  One readlink an exec; the record's key keeps
 * it to one a run (the first process), with the arena or without it.
 */
static void note_link(const struct st_acc *a)
{
	const char *name = a->path;
	/* a no-follow exec (execveat's AT_SYMLINK_NOFOLLOW) of a link fails
	 * with ELOOP: the kernel did not run through it */
	if (a->skip || a->magic_fd || a->nofollow || !name || !name[0] ||
	    (a->via_link & (ST_VIA_MAGIC | ST_VIA_HIDDEN)))
		return;
	/* a chain (cc -> /etc/alternatives/cc -> /usr/bin/gcc -> gcc-12):
	 * the kernel read each link, and each may be another package's; a
	 * relative target is below the directory of the link that holds it */
	char cur[PATH_MAX], link[PATH_MAX];
	int dirfd = a->dirfd;
	for (int hops = 0; hops < 40; hops++) {
		ssize_t n = ST_SYSCALL(SYS_readlinkat, dirfd, name, link, sizeof(link) - 1);
		if (n <= 0)
			return; /* not a link (EINVAL), or not there */
		st__record_path(dirfd, name, K_Q, true, 0);
		link[n] = 0;
		size_t dl = 0; /* name's directory part, with its '/' */
		if (link[0] != '/') {
			for (size_t i = 0; name[i]; i++)
				if (name[i] == '/')
					dl = i + 1;
		} else {
			dirfd = AT_FDCWD;
		}
		if (dl + (size_t)n + 1 > sizeof(cur))
			return;
		memmove(cur, name, dl); /* name may be cur */
		memcpy(cur + dl, link, (size_t)n + 1);
		name = cur;
	}
}

/* name as the child of spawn_child_dir's dir looks it up: dir/name for a
 * relative name, in out (cap bytes); name itself when dir is "" or name is
 * absolute, or when the two do not fit */
static const char *spawn_child_name(const char *dir, const char *name, char *out, size_t cap)
{
	if (!dir[0] || !name || name[0] == '/')
		return name;
	return st__path_join(dir, strlen(dir), name, strlen(name), out, cap) >= 0 ? out : name;
}

/*
 * What an exec recorded before the call (note_exec), for the amendments an
 * exec that returns sends (exec_undo): the records before the call say it
 * ran, which it did only when it does not return.  A record the Ctrie had
 * (another process's, or an earlier exec's of this one) is not this call's
 * to amend.
 */
struct exec_sent {
	bool prog;          /* the program's X record */
	unsigned why;       /* its untraced record: the reason (0: none) */
	bool why_spelled;   /* ... named by its absolute spelling, not resolved */
	bool second;        /* the X record of the program the loader runs (note_second) */
	const char *second_name; /* ... its name */
	const char *second_dir;  /* where it and the interpreters are looked up from */
	/* the #! interpreters (interp_chain): the first one's name (the
	 * caller's buffer; the others are read again from each one's #! line),
	 * bit i of chain: the X record of the (i+1)-th, and the untraced record
	 * of the last one, a program the preload cannot follow (its reason,
	 * its level, and whether it was named as spelled) */
	const char *interp;
	unsigned chain;
	unsigned chain_why, chain_why_at;
	bool chain_why_spelled;
	/* a spawn's (spawn_common): its untraced record waits for the child's
	 * pid, known only after the spawn.  hold: a PATH_MAX buffer for its
	 * name (NULL: an exec's, sent at once), hold_len (0: none) and
	 * hold_why; sent after a spawn that succeeded, none after one that
	 * failed, so it is never amended (untraced_out) */
	char *hold;
	size_t hold_len;
	unsigned hold_why;
};

/* Did an exec of this process fail since its image started?  Then its
 * execs record again what the Ctrie holds already (st_acc.again): the
 * failed one's record was amended, and a retry that runs (E2BIG, then a
 * response file; ETXTBSY, then again) must be recorded as one that ran.
 * Per process: another process's later exec of the same program is not
 * recorded again (README, "What the shim does not see").  A vfork child
 * sets its parent's, which only records more. */
static bool exec_failed_flag;
static bool exec_failed_here(void)
{
	return __atomic_load_n(&exec_failed_flag, __ATOMIC_RELAXED);
}

/* A second file an exec runs (a #! interpreter, the program the dynamic
 * loader is asked to load), judged as an access of kind of its own: 0, or
 * the errno of its refusal (ENOENT: one the sandbox hides fails the exec as
 * a missing one does).  Recorded as a failed lookup when it is not there.
 * A relative path is taken from dir, the directory the new image looks it
 * up from (the kernel opens a #! interpreter, the loader its program, from
 * the cwd of the process that execs: a spawn's child's, after its file
 * actions' chdir, spawn_child_dir's), or from the cwd when dir is "" or
 * the two do not fit.  Uses the second access slot. */
static int note_second(const char *path, unsigned kind, const char *dir, bool *xsent)
{
	char joined[PATH_MAX];
	path = spawn_child_name(dir, path, joined, sizeof(joined));
	struct st_acc *b = &st__tls_acc[1];
	st__acc_init(b, AT_FDCWD, path, kind, false);
	b->again = exec_failed_here();
	int e = st__pre(b);
	if (e) {
		st__acc_done(b);
		return e;
	}
	bool there = st__at_abs(SYS_faccessat, path, F_OK, 0) == 0;
	st__post(b, there ? 0 : ENOENT);
	*xsent = there && kind == K_X && b->sent;
	if (there && kind == K_X)
		note_link(b); /* b->path is the caller's: slot 1 may take it again */
	return 0;
}

/* The record of an exec of a program the preload cannot follow (why: the
 * reason), path[0..len) as its X record names it: this process's next
 * image, or (child > 0) the first of the child a spawn made. */
static void send_untraced(const char *path, size_t len, unsigned why, pid_t child)
{
	struct sandtrace_access acc = {
	    .kind = K_X,
	    .flags = (uint16_t)(SANDTRACE_AF_UNTRACED | (child > 0 ? SANDTRACE_AF_SPAWNED : 0)),
	    .aux = why,
	    .path_len = (uint32_t)len,
	    .reserved = child > 0 ? (uint32_t)child : 0};
	st__send_access(&acc, path, len, NULL, 0);
}

/* The untraced record of path[0..len): sent now, or a spawn's kept in
 * s->hold (struct exec_sent) until its child's pid is known.  True when
 * sent now, which an exec that returns must amend. */
static bool untraced_out(struct exec_sent *s, const char *path, size_t len, unsigned why)
{
	if (s && s->hold && len < PATH_MAX) {
		memcpy(s->hold, path, len);
		s->hold_len = len;
		s->hold_why = why;
		return false;
	}
	send_untraced(path, len, why, 0);
	return true;
}

/*
 * The same for the absolute path (or a relative one, taken from the cwd)
 * as spelled: named by what it resolves to, as the exec's X record and the
 * kernel's /proc/PID/exe name it (a program run through a symlink: X of the
 * target, Q of the link, note_link), never by the spelling beside it.  The
 * exec's own check leaves its access unresolved when a cached verdict
 * answered it: resolved here, in the second access slot (free: the
 * interpreter's note comes after).  The spelling only when it cannot be
 * resolved (a /proc magic link): *spelled then, which its amendment must
 * say (st__exec_failed's spelled).  Sent or held as untraced_out, whose
 * answer it returns.  Only for an untraced program: rare.
 */
static bool send_untraced_resolved(struct exec_sent *s, const char *path, unsigned why,
				   bool *spelled)
{
	const char *r;
	ssize_t n = path[0] == '/' ? st__resolve_exe(&st__tls_acc[1], path, &r) : -1;
	*spelled = n <= 0;
	return n > 0 ? untraced_out(s, r, (size_t)n, why) : untraced_out(s, path, strlen(path), why);
}

/* How many #! interpreters one exec may open: the kernel runs an
 * interpreter that is a script by that one's interpreter, and gives up with
 * ELOOP after the sixth (fs/exec.c, exec_binprm's depth). */
#define ST_INTERP_MAX 6

/*
 * The #! interpreters an exec runs: first (the program's #! line, from
 * probe_exec), then each one's own while it is a script too (the kernel
 * opens each in turn, and fails the exec with ENOENT or EACCES at the first
 * that is missing or not executable).  Each is an exec of its own, judged
 * and recorded (note_second: one the sandbox hides fails the exec as a
 * missing one does, ENOENT; one missing is a failed lookup, N, which ends
 * the chain); the last, when it is a program the preload cannot follow
 * (static, set-id, ...), is reported untraced as a program is.  With undo
 * 0 (before the exec) it records, into s, and returns 0, the refusal's
 * errno, and in *why the untraced reason (0: none).  With undo an errno
 * (after an exec that returned with it) it reads the chain again and sends
 * the amendment of each record s says this exec sent (s is read only
 * then): a failed exec only.
 * dir: where the new image looks a relative interpreter up
 * (note_second's).  Uses the second access slot.
 */
static int interp_chain(const char *first, const char *dir, bool resetids, struct exec_sent *s,
			int undo, unsigned *why)
{
	char buf[2][PATH_MAX], joined[PATH_MAX];
	const char *name = first;
	if (why)
		*why = 0;
	for (unsigned lv = 0; lv < ST_INTERP_MAX && name && name[0]; lv++) {
		const char *p = spawn_child_name(dir, name, joined, sizeof(joined));
		if (undo) {
			if (s->chain & (1u << lv))
				st__exec_failed(AT_FDCWD, p, false, false, false, 0, undo);
			if (s->chain_why && s->chain_why_at == lv) {
				st__exec_failed(AT_FDCWD, p, false, false, s->chain_why_spelled,
						s->chain_why, undo);
				break;
			}
		} else {
			bool xs = false;
			int e = note_second(name, K_X, dir, &xs);
			if (xs)
				s->chain |= 1u << lv;
			if (e)
				return e;
		}
		/* the kernel opens each interpreter for an exec, and reads one
		 * it may not run (EACCES) no further */
		if (st__at_abs(SYS_faccessat, p, X_OK, 0) != 0)
			break;
		int fd = probe_open(AT_FDCWD, p);
		if (fd < 0)
			break; /* not readable: what it runs is not known */
		char *next = buf[lv & 1];
		bool elf, loader;
		unsigned w = probe_exec(fd, next, PATH_MAX, &elf, &loader, resetids);
		ST_SYSCALL(SYS_close, fd);
		bool spelled;
		if (w && !undo && send_untraced_resolved(s, p, w, &spelled)) {
			s->chain_why = w; /* sent: amended if the exec returns */
			s->chain_why_at = lv;
			s->chain_why_spelled = spelled;
		}
		if (w && !undo && why)
			*why = w;
		if (w)
			break;
		name = next;
	}
	return 0;
}

/* Report an exec that is about to happen (or a spawn): the program (open on
 * fd; -1: could not be opened; PROBE_OPEN_HERE: open it by its absolute
 * name), its #! interpreter, and whether the preload can follow it.  a has
 * passed st__pre.  interp: the #! interpreter's path ("" when none); *elf:
 * the program was read and is an ELF program of this machine (native_elf).
 * keep: when not NULL, the descriptor opened here (PROBE_OPEN_HERE) is left
 * open in *keep for the caller to close (-1 when none), not closed.  argv,
 * envp: the exec's (what the dynamic loader run as a program loads);
 * resetids: as probe_exec's; dir: where the new image looks a relative
 * interpreter or loaded program up (note_second's; "": the cwd). */
static unsigned note_exec(struct st_acc *a, int fd, char interp[PATH_MAX], bool *elf, int *keep,
			  int *ierr, char *const argv[], char *const envp[], bool resetids,
			  const char *dir, struct exec_sent *sent)
{
	*ierr = 0;
	*sent = (struct exec_sent){.second_dir = dir, .hold = sent->hold};
	if (keep)
		*keep = -1;
	const char *path = a->resolved ? a->rpath : a->abs;
	interp[0] = 0;
	*elf = false;
	int own = -1;
	if (fd == PROBE_OPEN_HERE && path && !a->skip) {
		fd = own = probe_open(AT_FDCWD, path);
		/* the kernel looks a relative spelling up from the cwd, not
		 * through the directories above it, which the process may not
		 * search (EACCES): the probe takes the same way, so that what
		 * runs is still known (a static or set-id program reported) */
		if (own < 0 && errno == EACCES && a->path && a->path[0] && a->path[0] != '/')
			fd = own = probe_open(AT_FDCWD, a->path);
		if (own < 0 && (errno == ENOENT || errno == ENOTDIR)) {
			/* the exec will fail with ENOENT: recorded as missing after it */
			st__acc_done(a);
			return 0;
		}
	}
	*elf = false;
	bool loader = false;
	unsigned why = (path && !a->skip) ? probe_exec(fd, interp, PATH_MAX, elf, &loader, resetids) : 0;
	/* a program handed to a nested trace: untraced here, whatever it is */
	if (!why && path && !a->skip && handed_over(envp)) {
		why = SANDTRACE_UNTRACED_NESTED;
		interp[0] = 0;
	}
	if (own >= 0 && keep)
		*keep = own;
	else if (own >= 0)
		ST_SYSCALL(SYS_close, own);
	if (why) {
		bool now;
		if (a->resolved && st__rpath_resolved(a))
			now = untraced_out(sent, a->rpath, a->rpath_len, why);
		else
			now = send_untraced_resolved(sent, path, why, &sent->why_spelled);
		if (now) /* to amend */
			sent->why = why;
	}
	st__post(a, 0);
	sent->prog = a->sent;
	note_link(a);
	if (!why && interp[0]) {
		/* the interpreters are execs of their own, judged as such
		 * (interp_chain).  A relative one is taken from the cwd of the
		 * process that execs, as the kernel does (not from an
		 * execveat's dirfd; a spawn's child's, dir).  One the preload
		 * cannot follow makes the exec's image untraced */
		sent->interp = interp;
		*ierr = interp_chain(interp, dir, resetids, sent, 0, &why);
	}
	const char *lp;
	bool list;
	if (!why && loader && (lp = loader_program(argv, &list)) && strchr(lp, '/')) {
		/* the dynamic loader run as a program opens the program it is
		 * asked to load by its own calls: an exec of its own (a read when
		 * the loader only lists it: --list, --verify, or
		 * LD_TRACE_LOADED_OBJECTS set to anything, which ldd uses),
		 * judged as the interpreter is, so that one the sandbox hides is
		 * not run through the loader.  A name without a slash is searched
		 * among the libraries: the loader's own search, not judged here. */
		for (size_t i = 0; envp && envp[i] && !list; i++)
			list = has_prefix(envp[i], "LD_TRACE_LOADED_OBJECTS=");
		bool xs = false;
		sent->second_name = lp;
		*ierr = note_second(lp, list ? K_R : K_X, dir, &xs);
		sent->second = xs;
	}
	return why;
}

/* After an exec or a spawn returned with err (it did not run): the
 * amendments of the records it sent before the call (struct exec_sent).
 * (dirfd, path, flags): the program as the exec named it.  Only on the way
 * out of a failed call: an exec that runs costs nothing more. */
static void exec_undo(struct exec_sent *s, int dirfd, const char *path, int flags, int err)
{
	if (!s->prog && !s->why && !s->second && !s->chain && !s->chain_why)
		return;
	__atomic_store_n(&exec_failed_flag, true, __ATOMIC_RELAXED);
	bool nf = (flags & AT_SYMLINK_NOFOLLOW) != 0, empty = (flags & AT_EMPTY_PATH) != 0;
	if (s->why)
		st__exec_failed(dirfd, path, nf, empty, s->why_spelled, s->why, err);
	if (s->prog)
		st__exec_failed(dirfd, path, nf, empty, false, 0, err);
	if (s->second && s->second_name) {
		char joined[PATH_MAX];
		st__exec_failed(AT_FDCWD,
				spawn_child_name(s->second_dir ? s->second_dir : "", s->second_name,
						 joined, sizeof(joined)),
				false, false, false, 0, err);
	}
	if ((s->chain || s->chain_why) && s->interp)
		interp_chain(s->interp, s->second_dir ? s->second_dir : "", false, s,
			     err ? err : EIO, NULL);
}

/* After an exec or a spawn failed with ENOENT: the program itself missing
 * is a failed lookup; a program that is there but whose interpreter is
 * missing (recorded by note_exec) is not. */
static void record_exec_enoent(int dirfd, const char *path)
{
	int saved = errno;
	if (path && ST_SYSCALL(SYS_faccessat, dirfd, path, F_OK) != 0 &&
	    (errno == ENOENT || errno == ENOTDIR))
		st__record_path(dirfd, path, K_X, false, ENOENT);
	errno = saved;
}

/* Is the lookup the first thing that can fail the kernel's exec, so that the
 * probe's ENOENT or ENOTDIR is the exec's answer too?  Not before Linux 6.8,
 * which counts and copies argv and envp before it opens the program (E2BIG,
 * EFAULT come first).  Not after a set*uid that left the process a user over
 * its RLIMIT_NPROC either: the next exec fails with EAGAIN before the lookup
 * (PF_NPROC_EXCEEDED, which the kernel sets only when the real uid changes),
 * so only a process whose real uid is still its image's (st__g.uid, a
 * forked child's too) is answered from the probe. */
static bool exec_looks_up_first(void)
{
	static _Atomic int opens_first = -1; /* the kernel's, asked once */
	int k = opens_first;
	if (k < 0) {
		struct utsname u;
		unsigned major = 0, minor = 0;
		if (ST_SYSCALL(SYS_uname, &u) == 0) {
			major = st__parse_uint(u.release);
			const char *dot = strchr(u.release, '.');
			minor = dot ? st__parse_uint(dot + 1) : 0;
		}
		opens_first = k = major > 6 || (major == 6 && minor >= 8);
	}
	return k && (uint32_t)ST_SYSCALL(SYS_getuid) == st__g.uid;
}

/* One answer of exec_looks_up_first for all the candidates of one PATH search
 * (execvpe_search): no code of the program runs between them, so its real uid
 * cannot change, and a search of twelve PATH entries makes one getuid, not
 * twelve (≈ 1 µs each on this project's VM).  0: no search; 1: in one, not
 * asked yet; 2: yes; 3: no.  A vfork child's search writes its parent's
 * (shared) copy, which st__vfork_end clears. */
static __thread unsigned char search_first;

static bool looks_up_first(void)
{
	if (search_first == 0)
		return exec_looks_up_first();
	if (search_first == 1)
		search_first = exec_looks_up_first() ? 2 : 3;
	return search_first == 2;
}

/* Does an exec's argv or envp hold what the kernel cannot read (the vector
 * itself, or one of its strings: (char **)-1, a kernel address; NULL is an
 * empty vector), so that the exec fails with EFAULT whatever it names?  The
 * shim reads both (note_exec, env_fix): such an exec is forwarded untouched.
 * An odd test per string (shim.h st__unreadable). */
static bool exec_vec_bad(char *const v[])
{
	if (!v)
		return false;
	if (st__unreadable(v))
		return true;
	for (size_t i = 0; v[i]; i++)
		if (st__unreadable(v[i]))
			return true;
	return false;
}

/* execve on a path as the kernel would: check, report, re-inject, exec. */
static int exec_checked(int dirfd, const char *path, char *const argv[], char *const envp[],
			int flags, bool fexec, int entry_errno)
{
	if (st__vchild && !st__vf.hello) {
		/* as a forked child's: the process, before its exec (st__g.pid is
		 * the parent's: the child shares its memory) */
		st__vf.hello = true;
		st__log_hello_as(st__g.pid);
	}
	if (path && st__unreadable(path)) {
		/* the kernel copies the name first and fails (EFAULT): not
		 * read, not judged, nothing recorded (shim.h st__unreadable) */
		errno = entry_errno;
		return ST_FORWARD(dirfd == AT_FDCWD && !flags
				      ? REAL(execve)(path, argv, envp)
				      : REAL(execveat)(dirfd, path, argv, envp, flags));
	}
	struct st_acc *a = &st__tls_acc[0];
	st__acc_init(a, dirfd, path, K_X, (flags & AT_SYMLINK_NOFOLLOW) != 0);
	a->empty_path = (flags & AT_EMPTY_PATH) != 0;
	a->again = exec_failed_here();
	struct exec_sent sent = {0};
	/* nothing there (a PATH probe, say): not an exec to judge, so never a
	 * violation; the real call fails and the miss is recorded as a lookup */
	unsigned why = 0;
	char interp[PATH_MAX];
	bool elf = false;
	interp[0] = 0;
	bool bad_vec = false;
	/* one open both tells a missing file and is what probe_exec reads */
	int fd = a->empty_path || !path ? PROBE_OPEN_HERE : probe_open(dirfd, path);
	int miss = fd < 0 ? errno : 0; /* the probe's, before exec_looks_up_first's calls */
	bool absent = fd < 0 && !a->empty_path && path && (miss == ENOENT || miss == ENOTDIR);
	int e = 0;
	if (absent) {
		st__acc_done(a);
		/*
		 * The kernel's exec resolves the path as the open did, with the
		 * same credentials, so it would fail with the same ENOENT or
		 * ENOTDIR: no environment is built, no exec is made, and the
		 * miss needs no second look (record_exec_enoent's).  The open
		 * for each PATH candidate that is not there (and one getuid a
		 * search) instead of three lookups, in every execvp-style
		 * search.  With flags (a no-follow exec of a dangling link
		 * fails with ELOOP, which the open cannot tell), or when the
		 * exec can fail before its lookup (exec_looks_up_first), the
		 * real call still decides.
		 */
		if (!flags && looks_up_first()) {
			st__record_path(dirfd, path, K_X, false, ENOENT);
			errno = miss;
			return -1;
		}
	} else if ((e = st__pre(a)) == 0 && !(bad_vec = exec_vec_bad(argv) || exec_vec_bad(envp))) {
		why = note_exec(a, fd, interp, &elf, NULL, &e, argv, envp, false, "", &sent);
	} else if (!e) {
		st__acc_done(a);
	}
	if (!e && (bad_vec || (absent && (exec_vec_bad(argv) || exec_vec_bad(envp))))) {
		/* an argv or envp the kernel cannot read (exec_vec_bad): the
		 * exec fails (EFAULT; ENOENT first for a missing program on
		 * Linux >= 6.8) and runs nothing: forwarded untouched, nothing
		 * recorded */
		if (fd >= 0)
			ST_SYSCALL(SYS_close, fd);
		errno = entry_errno;
		if (fexec)
			return ST_FORWARD(REAL(fexecve)(dirfd, argv, envp));
		return ST_FORWARD(dirfd == AT_FDCWD && !flags
				      ? REAL(execve)(path, argv, envp)
				      : REAL(execveat)(dirfd, path, argv, envp, flags));
	}
	struct exe_hint hint = {0};
	/* the kernel names a path relative to a descriptor /dev/fd/N/...:
	 * the image asks it; named while the program is open */
	if (!e && !a->refuse && !why && !fexec && dirfd == AT_FDCWD && !flags)
		exe_hint(&hint, a, path, interp, elf, fd);
	if (fd >= 0)
		ST_SYSCALL(SYS_close, fd);
	if (e) { /* a hidden interpreter: the program's record went before */
		exec_undo(&sent, dirfd, path, flags, e);
		errno = e;
		return -1;
	}
	if (a->refuse) { /* --verify --fence: this version of the program failed verification */
		exec_undo(&sent, dirfd, path, flags, EACCES);
		errno = EACCES;
		return -1;
	}
	struct st_env env;
	/* the exec's access (slot 0) is done: its path buffer holds the environment */
	env_fix(envp, &env, why != SANDTRACE_UNTRACED_ELFCLASS, a->absbuf, sizeof(a->absbuf),
		&hint);
	if (st__vchild) { /* if the exec succeeds, the parent unmaps it */
		st__vf.map = env.map;
		st__vf.maplen = env.maplen;
	}
	int r;
	/* the program's errno, not the probe's (ENODATA from its look for
	 * file capabilities, say): an exec that succeeds leaves errno as it
	 * was, and a vfork parent reads what its child's exec left there */
	errno = entry_errno;
	if (fexec)
		r = ST_FORWARD(REAL(fexecve)(dirfd, argv, env.envp));
	else if (dirfd == AT_FDCWD && !flags)
		r = ST_FORWARD(REAL(execve)(path, argv, env.envp));
	else
		r = ST_FORWARD(REAL(execveat)(dirfd, path, argv, env.envp, flags));
	int after = errno;
	env_free(&env);
	st__vf.map = NULL;
	if (after == ENOENT && !fexec)
		record_exec_enoent(dirfd, path);
	exec_undo(&sent, dirfd, path, flags, after);
	errno = after;
	return r;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	struct st_call c;
	if (!st__enter(&c))
		return ST_UNCHECKED(int, c, -1, EACCES, NULL, REAL(execve)(path, argv, envp));
	int r = exec_checked(AT_FDCWD, path, argv, envp, 0, false, c.saved_errno);
	int after = errno;
	st__leave(&c);
	errno = after;
	return r;
}
EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	struct st_call c;
	if (!st__enter(&c))
		return ST_UNCHECKED(int, c, -1, EACCES, NULL,
				    REAL(execveat)(dirfd, path, argv, envp, flags));
	int r = exec_checked(dirfd, path, argv, envp, flags, false, c.saved_errno);
	int after = errno;
	st__leave(&c);
	errno = after;
	return r;
}
EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct st_call c;
	if (!st__enter(&c))
		return ST_UNCHECKED(int, c, -1, EACCES, NULL, REAL(fexecve)(fd, argv, envp));
	int r = exec_checked(fd, "", argv, envp, AT_EMPTY_PATH, true, c.saved_errno);
	int after = errno;
	st__leave(&c);
	errno = after;
	return r;
}
EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

/* The PATH of this process (glibc's default when unset). */
static const char *path_var(void)
{
	for (char **e = environ; e && *e; e++)
		if (has_prefix(*e, "PATH="))
			return *e + 5;
	return "/bin:/usr/bin";
}

/* The next PATH candidate for file (flen bytes) into buf; *cursor walks
 * PATH and is NULL when done.  An empty entry is the cwd, spelled as glibc
 * spells it: the bare name ("prog", not "./prog"; a script run that way
 * sees that name as $0).  Returns false for an entry too long for buf
 * (skipped). */
static bool path_next(const char **cursor, const char *file, size_t flen, char *buf, size_t cap)
{
	const char *s = *cursor, *p = s;
	while (*p && *p != ':')
		p++;
	*cursor = *p ? p + 1 : NULL;
	size_t dlen = (size_t)(p - s);
	if (dlen + flen + 3 > cap)
		return false;
	size_t k = 0;
	if (dlen > 0) {
		memcpy(buf, s, dlen), k = dlen;
		buf[k++] = '/';
	}
	memcpy(buf + k, file, flen + 1);
	return true;
}

/* glibc's fallback of the execvp family for a file the kernel refused with
 * ENOEXEC (a script without "#!"): run it with /bin/sh, the file as the
 * shell's first argument, then argv[1..]; an empty argv gives {sh, file}.
 * Returns only when that exec failed too (-1, errno from it). */
static int exec_script(const char *file, char *const argv[], char *const envp[])
{
	size_t argc = 0;
	while (argv && argv[argc])
		argc++;
	char *nargv[argc > 1 ? argc + 2 : 3];
	nargv[0] = (char *)"/bin/sh";
	nargv[1] = (char *)file;
	if (argc > 1)
		memcpy(nargv + 2, argv + 1, argc * sizeof(char *)); /* with the NULL */
	else
		nargv[2] = NULL;
	return execve("/bin/sh", nargv, envp);
}

/* PATH search as glibc's execvpe does it; each probe is an exec attempt of
 * its own (checked and, when missing, recorded). */
static int execvpe_search(const char *file, char *const argv[], char *const envp[])
{
	if (!file || !*file) {
		errno = ENOENT;
		return -1;
	}
	if (strchr(file, '/')) {
		execve(file, argv, envp);
		if (errno == ENOEXEC)
			exec_script(file, argv, envp);
		return -1;
	}
	size_t flen = strlen(file);
	if (flen >= NAME_MAX + 1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	bool got_eacces = false;
	char buf[PATH_MAX + NAME_MAX + 2];
	search_first = 1;
	for (const char *cur = path_var(); cur;) {
		if (!path_next(&cur, file, flen, buf, sizeof(buf)))
			continue;
		execve(buf, argv, envp);
		switch (errno) {
		case EACCES:
			got_eacces = true;
			/* fall through */
		case ENOENT:
		case ESTALE:
		case ENOTDIR:
		case ENODEV:
		case ETIMEDOUT:
			break;
		case ENOEXEC:
			search_first = 0;
			exec_script(buf, argv, envp);
			return -1;
		default:
			search_first = 0;
			return -1;
		}
	}
	search_first = 0;
	if (got_eacces)
		errno = EACCES;
	return -1;
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return execvpe_search(file, argv, envp);
}
EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe_search(file, argv, environ);
}

#define VARARGS_TO_ARGV(first, last_arg)                                                           \
	va_list ap;                                                                                \
	size_t argc = 1;                                                                           \
	va_start(ap, first);                                                                       \
	while (va_arg(ap, char *))                                                                 \
		argc++;                                                                            \
	va_end(ap);                                                                                \
	char *argv[argc + 1];                                                                      \
	argv[0] = (char *)(first);                                                                 \
	va_start(ap, first);                                                                       \
	for (size_t i = 1; i <= argc; i++)                                                         \
		argv[i] = va_arg(ap, char *);                                                      \
	last_arg;                                                                                  \
	va_end(ap);

EXPORT int execl(const char *path, const char *arg, ...)
{
	VARARGS_TO_ARGV(arg, (void)0);
	return execve(path, argv, environ);
}
EXPORT int execlp(const char *file, const char *arg, ...)
{
	VARARGS_TO_ARGV(arg, (void)0);
	return execvpe_search(file, argv, environ);
}
EXPORT int execle(const char *path, const char *arg, ...)
{
	VARARGS_TO_ARGV(arg, char *const *envp = va_arg(ap, char *const *));
	return execve(path, argv, envp);
}

/* ---------------------------------------------------------------------------
 * posix_spawn: glibc's child runs in clone(CLONE_VM|CLONE_VFORK) and execs
 * with internal calls, so the parent checks, reports and re-injects here.
 * ------------------------------------------------------------------------ */
/* where a refused file action's name is pointed (addopen, addchdir_np) */
#define ST_DENIED_PATH "/proc/sandtrace-denied/file"

/* glibc's record of one file action (posix/spawn_int.h: this layout since
 * 2.29 brought chdir and fchdir; 2.34 added closefrom, 2.35 tcsetpgrp): the
 * public posix_spawn_file_actions_t shows only the array (__actions,
 * __used).  spawn_actions_known checks it against libc's own functions
 * once; where it differs, a child's directory is taken to be the parent's
 * cwd, as the shim did before it read the list. */
struct st_spawn_action {
	int tag;
	union {
		struct { int fd; } close;
		struct { int fd, newfd; } dup2;
		struct { int fd; char *path; int oflag; mode_t mode; } open;
		struct { char *path; } chdir;
		struct { int fd; } fchdir;
		struct { int from; } closefrom;
	} u;
};
enum { SA_CLOSE, SA_DUP2, SA_OPEN, SA_CHDIR, SA_FCHDIR, SA_CLOSEFROM };

/* Does libc's list of file actions have the layout above?  Decided once a
 * process, by adding one action of each kind that names a place to a list
 * of its own and reading them back.  Thread-safe (two threads may both
 * decide, alike). */
static bool spawn_actions_known(void)
{
	static _Atomic int known; /* 0: not yet, 1: yes, -1: no */
	int k = atomic_load_explicit(&known, memory_order_relaxed);
	if (k)
		return k > 0;
	posix_spawn_file_actions_t fa;
	bool ok = false;
	if (posix_spawn_file_actions_init(&fa) == 0) {
		if (posix_spawn_file_actions_adddup2(&fa, 3, 4) == 0 &&
		    REAL(posix_spawn_file_actions_addopen)(&fa, 5, "o", O_RDONLY, 0) == 0 &&
		    REAL(posix_spawn_file_actions_addchdir_np)(&fa, "d") == 0 &&
		    posix_spawn_file_actions_addfchdir_np(&fa, 6) == 0 &&
		    posix_spawn_file_actions_addclosefrom_np(&fa, 7) == 0 && fa.__used == 5) {
			const struct st_spawn_action *a = (const void *)fa.__actions;
			ok = a[0].tag == SA_DUP2 && a[0].u.dup2.fd == 3 && a[0].u.dup2.newfd == 4 &&
			     a[1].tag == SA_OPEN && a[1].u.open.fd == 5 && a[1].u.open.path &&
			     !strcmp(a[1].u.open.path, "o") && a[2].tag == SA_CHDIR &&
			     a[2].u.chdir.path && !strcmp(a[2].u.chdir.path, "d") &&
			     a[3].tag == SA_FCHDIR && a[3].u.fchdir.fd == 6 &&
			     a[4].tag == SA_CLOSEFROM && a[4].u.closefrom.from == 7;
		}
		posix_spawn_file_actions_destroy(&fa);
	}
	atomic_store_explicit(&known, ok ? 1 : -1, memory_order_relaxed);
	return ok;
}

/* buf (an absolute directory, or "": the cwd) moved to name, as chdir(name)
 * from it would; false when it does not fit in cap bytes or the cwd cannot
 * be named */
static bool spawn_dir_join(char *buf, size_t cap, const char *name)
{
	if (name[0] != '/' && !buf[0] && st__getcwd(buf, cap) <= 0)
		return false;
	return st__path_join(buf, strlen(buf), name, strlen(name), buf, cap) >= 0; /* in place */
}

/*
 * spawn_child_dir(fa, buf, cap) - the directory the child of a spawn with
 * the file actions fa looks names up from once they have run (their
 * addchdir_np and addfchdir_np, the child's own calls inside libc): an
 * absolute path in buf (cap bytes), or "" when they leave it the cwd.  An
 * addfchdir_np names its descriptor as the actions before it leave it (a
 * dup2 names another; an open in the same list names its path, from the
 * directory of that moment when no other chdir came between).  Returns
 * false when the directory cannot be named (too long; an fchdir to a
 * descriptor the list closed, or opened before another chdir; a list whose
 * layout is not glibc's): buf is then "" and names are taken from the cwd,
 * as before.  Reads only; not async-signal-safe (its first call in a
 * process may allocate).
 */
static bool spawn_child_dir(const posix_spawn_file_actions_t *fa, char *buf, size_t cap)
{
	buf[0] = 0;
	if (!fa || fa->__used <= 0 || !spawn_actions_known())
		return true;
	const struct st_spawn_action *act = (const void *)fa->__actions;
	int last_dir = -1; /* the last action that moved the directory */
	for (int i = 0; i < fa->__used; i++) {
		bool ok = true;
		if (act[i].tag == SA_CHDIR) {
			/* one the sandbox refused fails the spawn in the child */
			ok = act[i].u.chdir.path && strcmp(act[i].u.chdir.path, ST_DENIED_PATH) &&
			     spawn_dir_join(buf, cap, act[i].u.chdir.path);
		} else if (act[i].tag == SA_FCHDIR) {
			int fd = act[i].u.fchdir.fd, j = i;
			while (--j >= 0) {
				const struct st_spawn_action *b = &act[j];
				if (b->tag == SA_DUP2 && b->u.dup2.newfd == fd)
					fd = b->u.dup2.fd;
				else if ((b->tag == SA_OPEN && b->u.open.fd == fd) ||
					 (b->tag == SA_CLOSE && b->u.close.fd == fd) ||
					 (b->tag == SA_CLOSEFROM && b->u.closefrom.from <= fd))
					break;
			}
			if (j < 0)
				ok = st__fd_path(fd, buf, cap) > 0 && buf[0] == '/';
			else if (act[j].tag == SA_OPEN && last_dir < j && act[j].u.open.path)
				ok = spawn_dir_join(buf, cap, act[j].u.open.path);
			else
				ok = false;
		} else {
			continue;
		}
		if (!ok) {
			buf[0] = 0;
			return false;
		}
		last_dir = i;
	}
	return true;
}

/* A relative name in out (cap bytes) put under dir (spawn_child_dir's, ""
 * for the cwd), where the child looks it up; false when it does not fit. */
static bool spawn_prefix(const char *dir, char *out, size_t cap)
{
	if (!dir[0] || out[0] == '/')
		return true;
	size_t dl = strlen(dir), ol = strlen(out);
	if (dl + 1 + ol + 1 > cap)
		return false;
	memmove(out + dl + 1, out, ol + 1);
	memcpy(out, dir, dl);
	out[dl] = '/';
	return true;
}

/* The first candidate of posix_spawnp's search for file into out: file
 * itself when it has a slash, else from PATH at *cursor (NULL: the start),
 * which is left after the candidate found, for a search that goes on past
 * it (NULL when PATH is done).  A relative candidate is named under dir,
 * the child's directory after its file actions (spawn_child_dir), where
 * the child's own search takes it from. */
static bool spawn_find(const char *file, char *out, size_t cap, const char **cursor,
		       bool *eacces, const char *dir)
{
	size_t flen = strlen(file);
	if (strchr(file, '/')) {
		*cursor = NULL;
		if (flen + 1 > cap)
			return false;
		memcpy(out, file, flen + 1);
		return spawn_prefix(dir, out, cap);
	}
	if (!*cursor)
		*cursor = path_var();
	for (const char **cur = cursor; *cur;) {
		if (!path_next(cur, file, flen, out, cap) || !spawn_prefix(dir, out, cap))
			continue;
		/* as glibc's search: the first candidate the exec would take;
		 * a directory (which X_OK lets through) or a file without
		 * execute permission is passed over (EACCES), a name that is
		 * not there is a failed lookup */
		struct stat st;
		if (st__at_abs(SYS_newfstatat, out, (long)&st, 0) != 0)
			st__record_path(AT_FDCWD, out, K_X, false, ENOENT);
		else if (S_ISREG(st.st_mode) && st__at_abs(SYS_faccessat, out, X_OK, 0) == 0)
			return true;
		else {
			st__record_path(AT_FDCWD, out, K_Q, false, 0); /* there, not runnable */
			*eacces = true;
		}
	}
	return false;
}

/* posix_spawn@ and posix_spawnp@GLIBC_2.2.5 (shim/abi.c): a file the kernel
 * will not run (ENOEXEC: no #!) is run by /bin/sh, where the new ones fail */
typedef int (*st_spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			   const posix_spawnattr_t *, char *const[], char *const[]);
static _Atomic(void *) real_spawn_old, real_spawnp_old;

static int spawn_common(bool search, bool old, pid_t *pid, const char *file,
			const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
			char *const argv[], char *const envp[])
{
	char found[PATH_MAX + NAME_MAX + 2];
	struct st_call c;
	/* a name, argv or envp the kernel cannot read (shim.h st__unreadable,
	 * exec_vec_bad): libc's spawn answers as it does untraced (the
	 * child's exec fails with EFAULT, or libc itself faults reading
	 * argv): forwarded untouched, nothing recorded */
	if ((file && st__unreadable(file)) || exec_vec_bad(argv) || exec_vec_bad(envp))
		return search ? REAL(posix_spawnp)(pid, file, fa, attr, argv, envp)
			      : REAL(posix_spawn)(pid, file, fa, attr, argv, envp);
	if (!st__enter(&c)) /* posix_spawn returns its error */
		return ST_UNCHECKED(int, c, EACCES, EACCES, NULL,
				    search ? REAL(posix_spawnp)(pid, file, fa, attr, argv, envp)
					   : REAL(posix_spawn)(pid, file, fa, attr, argv, envp));
	/* the file actions' chdir and fchdir move where the child looks up a
	 * relative program (and PATH entry): it is judged and probed there */
	char cdir[PATH_MAX];
	cdir[0] = 0;
	if (fa && fa->__used > 0)
		spawn_child_dir(fa, cdir, sizeof(cdir));
	const char *named = search || !file ? file : spawn_child_name(cdir, file, found, sizeof(found));
	/* the child resets its effective ids before its exec: the probe's
	 * set-id test is made with those */
	short sflags = 0;
	bool resetids = attr && posix_spawnattr_getflags(attr, &sflags) == 0 &&
			(sflags & POSIX_SPAWN_RESETIDS);
	int r;
	unsigned why = 0;
	char interp[PATH_MAX];
	bool elf = false;
	struct exe_hint hint = {0};
	const char *prog = NULL;
	int pfd = -1; /* the program, left open by note_exec for its name */
	char hold[PATH_MAX]; /* an untraced program's name, for its record */
	struct exec_sent sent = {.hold = hold};
	interp[0] = 0;
	/* a PATH candidate the sandbox hides (or whose interpreter it hides) is
	 * passed over as a missing one is, and the search goes on: the one
	 * found after it is then spawned by its path (glibc's own search would
	 * take the hidden one again) */
	const char *cur = NULL;
	bool direct = false;
	int skipped = 0;
	bool eacces = false; /* a candidate passed over was there but not runnable */
	while (file && (!search || spawn_find(file, found, sizeof(found), &cur, &eacces, cdir))) {
		prog = search ? found : named;
		struct st_acc *a = &st__tls_acc[0];
		st__acc_init(a, AT_FDCWD, prog, K_X, false);
		a->again = exec_failed_here();
		sent = (struct exec_sent){.hold = hold};
		int e = st__pre(a), ie = 0;
		if (!e) {
			/* the child's #! interpreter and ld.so's program, when
			 * relative, are looked up from its directory too */
			why = note_exec(a, PROBE_OPEN_HERE, interp, &elf, &pfd, &ie, argv, envp,
					resetids, cdir, &sent);
			if (ie && pfd >= 0) {
				ST_SYSCALL(SYS_close, pfd);
				pfd = -1;
			}
			e = ie;
			/* its interpreter hidden: this one does not run */
			if (e)
				exec_undo(&sent, AT_FDCWD, prog, 0, e);
		}
		if (e && search && cur && (e == ENOENT || e == EACCES)) {
			skipped = skipped == EACCES ? EACCES : e;
			direct = true;
			prog = NULL;
			interp[0] = 0;
			why = 0;
			continue;
		}
		if (e) {
			st__leave(&c);
			errno = c.saved_errno;
			return e; /* posix_spawn returns the error number */
		}
		if (a->refuse) { /* --verify --fence: the program failed verification */
			exec_undo(&sent, AT_FDCWD, prog, 0, EACCES);
			if (pfd >= 0)
				ST_SYSCALL(SYS_close, pfd);
			st__leave(&c);
			errno = c.saved_errno;
			return EACCES;
		}
		break;
	}
	if (direct && !prog) { /* every candidate was hidden or missing */
		st__leave(&c);
		errno = c.saved_errno;
		return eacces ? EACCES : skipped;
	}
	struct st_env env;
	struct st_acc *slot = &st__tls_acc[0]; /* done with (or never used) */
	/* file actions can change what a /proc/self/fd/N in the spelling names
	 * in the child (a dup2 there): the program's descriptor names it for
	 * this process only; the resolution refuses such spellings */
	if (prog && !why)
		exe_hint(&hint, slot, prog, interp, elf, fa ? -1 : pfd);
	if (pfd >= 0)
		ST_SYSCALL(SYS_close, pfd);
	env_fix(envp, &env, why != SANDTRACE_UNTRACED_ELFCLASS, slot->absbuf, sizeof(slot->absbuf),
		&hint);
	errno = c.saved_errno;
	pid_t child = 0, *cp = pid ? pid : &child; /* the child's pid, for hold's record */
	st_spawn_fn spawn =
	    old ? (st_spawn_fn)st__resolve_old(&real_spawn_old, "posix_spawn") : REAL(posix_spawn);
	st_spawn_fn spawnp = old ? (st_spawn_fn)st__resolve_old(&real_spawnp_old, "posix_spawnp")
				 : REAL(posix_spawnp);
	r = ST_FORWARD(search && !direct
			   ? spawnp(cp, file, fa, attr, argv, env.envp)
			   : spawn(cp, direct ? found : file, fa, attr, argv, env.envp));
	int after = errno;
	/* a program the preload cannot follow ran in the child: its image */
	if (r == 0 && sent.hold_len)
		send_untraced(hold, sent.hold_len, sent.hold_why, *cp);
	env_free(&env);
	/* a program that is not there: the lookup failed (posix_spawnp's
	 * candidates were recorded by spawn_find) */
	if (r == ENOENT && file && !search)
		record_exec_enoent(AT_FDCWD, named);
	/* the child's exec failed (libc's spawn returns its error), or the
	 * spawn before it: the program did not run */
	if (r != 0 && prog)
		exec_undo(&sent, AT_FDCWD, prog, 0, r);
	st__leave(&c);
	errno = after;
	return r;
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_common(false, st__old_abi(__builtin_return_address(0), ST_OLD_SPAWN), pid,
			    path, fa, attr, argv, envp);
}
EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_common(true, st__old_abi(__builtin_return_address(0), ST_OLD_SPAWNP), pid,
			    file, fa, attr, argv, envp);
}

/* A file action opens in the child, inside libc: judged and recorded here,
 * a relative name from where the actions added before it leave the child
 * (spawn_child_dir: their chdir and fchdir; else the cwd at the time the
 * action is added).  A refused open is pointed at a name that cannot exist,
 * so the child's open fails with ENOENT and the spawn fails as it would for
 * a missing file. */
EXPORT int posix_spawn_file_actions_addopen(posix_spawn_file_actions_t *fa, int fd,
					    const char *path, int oflag, mode_t mode)
{
	struct st_call c;
	if (!path)
		return REAL(posix_spawn_file_actions_addopen)(fa, fd, path, oflag, mode);
	if (!st__enter(&c)) /* unchecked, refused: the child's open fails as for a refusal */
		return REAL(posix_spawn_file_actions_addopen)(fa, fd, c.refuse ? ST_DENIED_PATH : path,
							     oflag, mode);
	char dir[PATH_MAX], name[PATH_MAX];
	spawn_child_dir(fa, dir, sizeof(dir));
	struct st_acc *a = &st__tls_acc[0];
	/* the child's open: a final symlink not followed as open's wrapper says */
	st__acc_init(a, AT_FDCWD, spawn_child_name(dir, path, name, sizeof(name)),
		     st_open_kind(oflag), st_open_nofollow(oflag));
	int e = st__pre(a);
	if (e)
		path = ST_DENIED_PATH;
	else
		st__post(a, 0);
	st__leave(&c);
	errno = c.saved_errno;
	return REAL(posix_spawn_file_actions_addopen)(fa, fd, path, oflag, mode);
}
EXPORT int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *fa, const char *path)
{
	/* the child's chdir is a lookup, judged here like addopen's open (from
	 * where the actions before it leave the child) */
	struct st_call c;
	if (!path)
		return REAL(posix_spawn_file_actions_addchdir_np)(fa, path);
	if (!st__enter(&c)) /* unchecked, refused: the child's chdir fails as for a refusal */
		return REAL(posix_spawn_file_actions_addchdir_np)(fa, c.refuse ? ST_DENIED_PATH : path);
	char dir[PATH_MAX], name[PATH_MAX];
	spawn_child_dir(fa, dir, sizeof(dir));
	struct st_acc *a = &st__tls_acc[0];
	st__acc_init(a, AT_FDCWD, spawn_child_name(dir, path, name, sizeof(name)), K_Q, false);
	if (st__pre(a))
		path = ST_DENIED_PATH;
	else
		st__post(a, 0);
	st__leave(&c);
	errno = c.saved_errno;
	return REAL(posix_spawn_file_actions_addchdir_np)(fa, path);
}

/* ---------------------------------------------------------------------------
 * fork: the connection lock is held across the fork so that the child never
 * inherits it taken; the child starts with a fresh lock and no connection
 * (it connects, with its own pid, on its first message).  vfork is a real
 * vfork when the child's exec can be handled in the arena alone (see struct
 * st_vfork in shim.h); otherwise it is turned into fork.  A fork copies the
 * parent's page tables and makes every page it writes afterwards a
 * copy-on-write fault: for a compiler driver that spawns three programs per
 * source file, that was most of the shim's cost in a build.
 * ------------------------------------------------------------------------ */
/* A forked child's first steps, with its parent's pid: its own state
 * (st__after_fork_child), then its own process record, by the socket when the
 * log cannot take it (a full arena), as the constructor does. */
static void forked_child(int32_t parent)
{
	st__after_fork_child();
	st__env_unswap_child();
	st__shell_env_child();
	st__dl_lock_child();
	if (!st__log_hello_as(parent))
		st__hello();
}

/*
 * The lock is taken in an atfork handler of the shim's own, registered
 * (st__fork_handlers) before the program's: glibc runs the
 * prepare handlers in the reverse order of registration and the parent and
 * child handlers in that order, so the program's prepare handlers run
 * before the shim takes the lock and its parent and child handlers after
 * the shim let it go (and made the child a process of its own).  A file a
 * program's handler opens is then checked and recorded as any other; it
 * passed through unchecked while the fork wrapper held the lock (a denied
 * file opened).  libc's internal fork (daemon, forkpty) runs the handlers
 * too, once the handlers are registered.  Until then (no registration of
 * the program's yet, see __register_atfork below), or if it failed, the
 * fork wrapper calls the three steps itself around the fork.
 */
static _Atomic bool fork_handlers;
static __thread bool fork_held;     /* this thread's prepare took the lock */
static __thread int32_t fork_from;  /* the pid the child is forked from */

void st__fork_prepare(void)
{
	/* held already: the fork wrapper took these steps itself and the
	 * handlers were registered (another thread) before its fork ran
	 * them; the first prepare's lock serves, and the first parent or
	 * child step lets it go (fork_held is always cleared by one) */
	if (fork_held || !st__g.active || st__depth || st__vchild)
		return;
	/* inside the shim while the lock is held: a signal handler that runs
	 * now passes through instead of waiting for the lock */
	st__depth++;
	st__env_fork_enter();
	pthread_mutex_lock(&st__g.lock);
	fork_from = st__g.pid;
	fork_held = true;
}
void st__fork_parent(void)
{
	if (!fork_held)
		return;
	fork_held = false;
	int saved = errno;
	pthread_mutex_unlock(&st__g.lock);
	st__env_fork_leave();
	errno = saved;
	st__depth--;
}
void st__fork_child(void)
{
	if (!fork_held)
		return;
	fork_held = false;
	int saved = errno;
	forked_child(fork_from);
	errno = saved;
	st__depth--;
}
extern void *__dso_handle;
static _Atomic bool fork_handlers_tried;
void st__fork_handlers(void)
{
	/* once; straight to libc's: pthread_atfork (libc_nonshared.a) would
	 * call the shim's own __register_atfork */
	bool tried = false;
	if (atomic_compare_exchange_strong(&fork_handlers_tried, &tried, true) &&
	    REAL(__register_atfork)(st__fork_prepare, st__fork_parent, st__fork_child,
				    &__dso_handle) == 0)
		atomic_store_explicit(&fork_handlers, true, memory_order_relaxed);
}

/*
 * The program's pthread_atfork (a function of libc_nonshared.a, linked into
 * it) registers through __register_atfork: the shim's handlers go first, on
 * the first registration of any.  Registering them in the constructor of
 * every process wrote libc's handler list, three page faults (≈ 40 us a
 * traced process on this project's VM, docs/BENCHMARKS.md stop 19); a
 * process that registers none forks through the fork wrapper, which takes
 * the same three steps itself.  Handlers a library's constructor registered
 * before the shim's constructor ran are covered too.
 */
EXPORT int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void),
			     void *dso)
{
	st__init();
	if (st__g.active)
		st__fork_handlers();
	return REAL(__register_atfork)(prepare, parent, child, dso);
}

/*
 * A fork whose child takes its first steps (forked_child) here, with no lock
 * held across the fork: _Fork (which runs no atfork handlers), and a fork made
 * inside the shim's own code (st__depth).  The shim never forks itself, so the
 * latter is a signal handler's, the handler having interrupted this thread in
 * a wrapper; its child is a process of its own all the same (passed through,
 * it went on with its parent's pid, connection and log chunk: its records
 * under the parent's pid, no process record of its own).  No lock: the
 * interrupted code may hold it, and the child's is a fresh one.  The child's
 * steps are taken only when no atfork handler of the shim's took them already.
 */
static pid_t fork_own_steps(pid_t (*real)(void))
{
	int32_t parent = st__g.pid;
	st__depth++;
	pid_t p = real();
	if (p == 0 && st__g.pid == parent) {
		int saved = errno;
		forked_child(parent);
		errno = saved;
	}
	st__depth--;
	return p;
}

pid_t st__fork(void)
{
	st__init();
	if (!st__g.active)
		return REAL(fork)();
	if (st__depth && !st__vchild)
		return fork_own_steps(REAL(fork));
	if (st__depth)
		return REAL(fork)();
	if (st__vchild) {
		/* a fork in a vfork child (or a vfork there, made a fork): the
		 * grandchild has memory of its own, a copy of the parent's as
		 * the vfork child left it, and is an ordinary forked child of
		 * the vfork child's from its first instruction: not a vfork
		 * child (its pid, its records and its log chunk are its own, not
		 * the vfork child's or the suspended thread's).  The vfork child
		 * takes no lock: the lock is its parent's. */
		st__depth++;
		int32_t parent = st__pid();
		pid_t p = REAL(fork)();
		if (p == 0) {
			st__vchild = false;
			st__vf = (struct st_vfork){0};
			forked_child(parent);
		}
		st__depth--;
		return p;
	}
	/* what a forked child calls on its way to an exec (or out of a failed
	 * one), resolved here once: a dlsym in each child writes the
	 * loader's and libc's pages (lock, lookup state), a copy-on-write
	 * fault each (shell fork+exec: 6.5 fewer faults per child) */
	(void)REAL(execve);
	(void)REAL(execveat);
	(void)REAL(fexecve);
	(void)REAL(_exit);
	if (atomic_load_explicit(&fork_handlers, memory_order_relaxed))
		return REAL(fork)(); /* st__fork_prepare and the others do the rest */
	st__fork_prepare();
	pid_t p = REAL(fork)();
	if (p == 0)
		st__fork_child();
	else
		st__fork_parent();
	return p;
}
EXPORT pid_t fork(void)
{
	return st__fork();
}
/* fork's other public name: the same wrapper */
EXPORT pid_t __fork(void) ST_ALIAS(fork);

/* _Fork (glibc 2.34: a fork without the atfork handlers) is a fork as the
 * wrapper above sees one: the child starts as a forked child. */
EXPORT pid_t _Fork(void)
{
	st__init();
	if (!st__g.active || st__vchild)
		return REAL(_Fork)();
	return fork_own_steps(REAL(_Fork));
}

/*
 * daemon and forkpty fork with libc's internal fork, which no wrapper sees:
 * without this the child's records went on under its parent's pid, in the
 * parent's log chunk (closed by the parent's EXIT, so a daemon()'s child
 * was not recorded at all), and daemon's chdir("/") (internal too) left the
 * cwd cache naming the old directory.  The child is known on the way back
 * (its pid is not the one the shim holds) and starts as a forked child
 * there: before that it ran only libc's own calls.  errno is the call's.
 */
static void after_libc_fork(int32_t parent)
{
	if ((int32_t)ST_SYSCALL(SYS_getpid) == parent)
		return;
	int saved = errno;
	st__clone_child(parent, false);
	errno = saved;
}
EXPORT int daemon(int nochdir, int noclose)
{
	st__init();
	int32_t parent = st__g.pid;
	int r = REAL(daemon)(nochdir, noclose);
	if (!st__depth)
		after_libc_fork(parent);
	st__cwd_invalidate();
	return r;
}
EXPORT pid_t forkpty(int *amaster, char *name, const struct termios *tio,
		     const struct winsize *ws)
{
	st__init();
	/* its openpty opens /dev/ptmx by an internal call, before the fork:
	 * refused, forkpty fails as that open would (wrap_libc.c openpty) */
	int e = st__own_judge("/dev/ptmx", SANDTRACE_KIND_WRITE);
	if (e) {
		errno = e;
		return -1;
	}
	int32_t parent = st__g.pid;
	pid_t p = REAL(forkpty)(amaster, name, tio, ws);
	if (p == 0 && !st__depth)
		after_libc_fork(parent);
	return p;
}

/*
 * A child made by clone without CLONE_VM (libc's clone(), or syscall() with
 * SYS_clone, SYS_clone3 or SYS_fork): a forked child no fork wrapper saw.
 * Without this its records went on in the parent's log chunk under the
 * parent's pid (the arena is shared memory), and it had no process record.
 * Its first steps are a forked child's; with CLONE_FILES the descriptor
 * table is the parent's, so the parent's connection is left open, not ours
 * to close.  A child sharing the memory (CLONE_VM) is left alone: what it
 * would reset is its parent's.
 */
void st__clone_child(int32_t parent, bool shared_files)
{
	if (!st__g.active || st__vchild)
		return;
	st__depth++;
	if (shared_files)
		st__g.fd = -1;
	forked_child(parent);
	st__depth--;
}

struct clone_tramp {
	int (*fn)(void *);
	void *arg;
	int32_t parent;
	bool files;
};
/* in the child: on its own copy of the parent's memory, so t (in the
 * parent's frame at the time of the clone) is readable */
static int clone_tramp(void *p)
{
	struct clone_tramp *t = p;
	st__clone_child(t->parent, t->files);
	return t->fn(t->arg);
}
/* the child of a clone(CLONE_VM | CLONE_VFORK): a vfork child (st__vchild,
 * set by st__vfork_begin in the memory and thread-local storage it shares
 * with its suspended parent), which may end by returning from fn, a raw
 * exit no exit wrapper sees: its exit is recorded here */
static int clone_vfork_tramp(void *p)
{
	struct clone_tramp *t = p;
	int r = t->fn(t->arg);
	st__exit_hook(r);
	return r;
}
static int clone_as(int (*fn)(void *), void *stack, int flags, void *arg, pid_t *ptid, void *tls,
		    pid_t *ctid);
EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	pid_t *ptid = va_arg(ap, pid_t *);
	void *tls = va_arg(ap, void *);
	pid_t *ctid = va_arg(ap, pid_t *);
	va_end(ap);
	return clone_as(fn, stack, flags, arg, ptid, tls, ctid);
}
/* clone's other public name: the same wrapper, at the same address */
EXPORT int __clone(int (*fn)(void *), void *stack, int flags, void *arg, ...) ST_ALIAS(clone);
static int clone_as(int (*fn)(void *), void *stack, int flags, void *arg, pid_t *ptid, void *tls,
		    pid_t *ctid)
{
	st__init();
	if (!st__g.active || st__depth || st__vchild || !fn)
		return REAL(clone)(fn, stack, flags, arg, ptid, tls, ctid);
	const int vfork_like = CLONE_VM | CLONE_VFORK;
	if ((flags & (vfork_like | CLONE_THREAD | CLONE_SETTLS)) == vfork_like) {
		/* a vfork by another name (the parent waits until the child
		 * execs or exits; the child runs on the parent's thread-local
		 * storage): the vfork wrapper's state, when the child's exec
		 * can be handled in the arena alone; else as before, its
		 * records under the parent's pid */
		if (st__vfork_begin() != 1 || !st__vchild)
			return REAL(clone)(fn, stack, flags, arg, ptid, tls, ctid);
		struct clone_tramp t = {fn, arg, st__g.pid, false};
		int r = REAL(clone)(clone_vfork_tramp, stack, flags, &t, ptid, tls, ctid);
		return (int)st__vfork_end(r < 0 ? -(long)errno : r);
	}
	if (flags & (CLONE_VM | CLONE_THREAD))
		return REAL(clone)(fn, stack, flags, arg, ptid, tls, ctid);
	struct clone_tramp t = {fn, arg, st__g.pid, (flags & CLONE_FILES) != 0};
	return REAL(clone)(clone_tramp, stack, flags, &t, ptid, tls, ctid);
}

__thread bool st__vchild;
__thread struct st_vfork st__vf;

/* Can a vfork child's exec wrapper do all it needs in the arena alone? */
static bool vfork_safe(void)
{
	const unsigned need_daemon = SANDTRACE_F_NO_CACHE | SANDTRACE_F_RECORD_ALL |
				     SANDTRACE_F_IDENTITY | SANDTRACE_F_VERIFY;
	st__policy_refresh();
	if (!st__g.arena.base || !st__g.log_ok || !atomic_load(&st__g.policy) ||
	    atomic_load(&st__g.policy_asks) ||
	    (st__g.flags & need_daemon))
		return false;
	/* room for the child's records: a full arena would send them to the
	 * socket, which a vfork child must not use */
	uint64_t used = sandtrace_arena_used(&st__g.arena);
	return used < st__g.arena.size && st__g.arena.size - used > (4u << 20);
}

int st__vfork_begin(void)
{
	st__init();
	if (!st__g.active)
		return 1; /* nothing of ours runs in the child */
	if (st__depth || st__vchild || !vfork_safe())
		return 0; /* fork */
	st__vf = (struct st_vfork){.depth = st__depth, .level = st__level};
	st__vchild = true;
	return 1;
}

long st__vfork_end(long r)
{
	if (st__vchild) {
		st__vchild = false;
		/* the child's exec succeeded inside a wrapper that never returned */
		st__depth = st__vf.depth;
		st__level = st__vf.level;
		if (st__vf.map)
			munmap(st__vf.map, st__vf.maplen);
		if (st__vf.chunk) /* the child is gone from our memory: its chunk is done */
			sandtrace_log_seal(&st__g.arena, st__vf.chunk);
		search_first = 0; /* a search the child's exec ended */
		st__vf = (struct st_vfork){0};
	}
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

#if !ST_HAVE_VFORK_ASM
/* No assembly entry point for this platform: vfork is fork (the child gets
 * its own copy of the shim's state). */
EXPORT pid_t vfork(void)
{
	return st__fork();
}
#endif

/* The environment the shells of system(), popen() and wordexp() get
 * (swap_environ): one map, reused by every call, never unmapped.  The
 * program's other threads may read environ while it points there (a getenv
 * inside libc's newlocale), and go on reading it after the call put environ
 * back: a map unmapped then crashed them (fence.sh tz-env), which happened
 * at every such call once the program's environ lacked the shim's
 * variables (init.c env_hide).  A call rewrites it in place with what it
 * held, but for what the program changed in its environment since: such a
 * reader may then see an entry twice or miss one, never freed memory.  A
 * bigger environment gets a bigger map; the old one is left mapped.
 * shell_env_lock: taken while the map is written (a forked child starts
 * with it free: st__shell_env_child). */
static char *shell_env_map;
static size_t shell_env_cap;
static atomic_bool shell_env_lock;

/* system() and popen() spawn /bin/sh inside libc with the process's own
 * environ, which lacks the shim's variables (init.c env_hide, or the
 * program removed them): they are put back for the duration of the call. */
static char **swap_environ(struct st_env *env)
{
	char **old = environ;
	bool ok = false;
	for (char **e = environ; e && *e; e++)
		if (has_prefix(*e, "LD_PRELOAD=") && strstr(*e, st__g.lib_path))
			ok = true;
	env->map = NULL;
	if (ok)
		return NULL;
	while (atomic_exchange_explicit(&shell_env_lock, true, memory_order_acquire))
		sched_yield();
	bool fixed = env_fix(environ, env, true, shell_env_map, shell_env_cap, NULL);
	if (fixed && env->map) { /* a map of its own: kept as the new one */
		shell_env_map = env->map;
		shell_env_cap = env->maplen;
		env->map = NULL;
	}
	atomic_store_explicit(&shell_env_lock, false, memory_order_release);
	if (!fixed)
		return NULL;
	environ = env->envp;
	return old;
}
void st__shell_env_child(void)
{
	atomic_store_explicit(&shell_env_lock, false, memory_order_relaxed);
}

/* system(), popen() and wordexp() run /bin/sh inside libc, by its own
 * spawn, which no wrapper sees: an exec of it, judged and recorded here (a
 * shell the sandbox hides is not run: *refused is set, and the caller fails
 * as libc does when the shell is missing), with the shim's variables put
 * back into environ for the call (swap_environ).  shell_begin leaves the
 * shim (the opens the call makes are checked as the program's); shell_end
 * puts environ back, keeping the call's errno (not called after a
 * refusal); between the two no swap of environ is made
 * (st__env_shell_enter).  NULL and *refused false: nothing to put back. */
static char **shell_begin(struct st_call *c, struct st_env *env, bool *refused)
{
	struct st_acc *a = &st__tls_acc[0];
	st__acc_init(a, AT_FDCWD, "/bin/sh", K_X, false);
	*refused = st__pre(a) != 0;
	if (*refused) {
		st__leave(c);
		return NULL;
	}
	st__post(a, 0);
	note_link(a); /* /bin/sh is a link to the shell that runs */
	/* no time-zone or LOCPATH swap in environ while libc hands it on */
	st__env_shell_enter();
	char **old = swap_environ(env);
	st__leave(c);
	errno = c->saved_errno;
	return old;
}
static void shell_end(char **old, struct st_env *env)
{
	int after = errno;
	if (old) {
		environ = old;
		env_free(env);
	}
	st__env_shell_leave();
	errno = after;
}

EXPORT int system(const char *cmd)
{
	struct st_call c;
	if (!cmd)
		return REAL(system)(cmd);
	if (!st__enter(&c)) /* unchecked, refused: as a refused shell */
		return ST_UNCHECKED(int, c, W_EXITCODE(127, 0), EACCES, NULL, REAL(system)(cmd));
	struct st_env env;
	bool refused;
	char **old = shell_begin(&c, &env, &refused);
	if (refused) /* POSIX: as if the shell had exited with 127 */
		return W_EXITCODE(127, 0);
	int r = REAL(system)(cmd);
	shell_end(old, &env);
	return r;
}
EXPORT FILE *popen(const char *cmd, const char *mode)
{
	struct st_call c;
	if (!cmd)
		return REAL(popen)(cmd, mode);
	if (!st__enter(&c)) /* unchecked, refused: as a refused shell */
		return ST_UNCHECKED(FILE *, c, NULL, ENOMEM, NULL, REAL(popen)(cmd, mode));
	struct st_env env;
	bool refused;
	char **old = shell_begin(&c, &env, &refused);
	if (refused) { /* glibc 2.36 with no /bin/sh: NULL, ENOMEM (seen with /usr/bin
			* hidden under a tmpfs in a mount namespace) */
		errno = ENOMEM;
		return NULL;
	}
	FILE *r = REAL(popen)(cmd, mode);
	shell_end(old, &env);
	return r;
}
/* popen's other public name (libio's, the same function in glibc): a
 * program that calls it reaches no popen wrapper */
EXPORT FILE *_IO_popen(const char *cmd, const char *mode) ST_ALIAS(popen);

/* wordexp runs /bin/sh for a command substitution ("$(...)" or a backquote)
 * with libc's internal posix_spawn: recorded (and the shell given the
 * preload) as system() does, when the words may hold one and WRDE_NOCMD
 * does not forbid it. */
/* ... and a tilde it expands ("~user", or "~" without HOME: at the start of
 * a word, or after an assignment's '=' or ':') looks the user up with
 * libc's internal getpwnam_r or getpwuid_r (posix/wordexp.c): the user
 * database recorded after the call */
static int wordexp_cmd(const char *words, wordexp_t *we, int flags);
static bool wordexp_tilde(const char *w)
{
	bool home = getenv("HOME") != NULL;
	for (const char *p = strchr(w, '~'); p; p = strchr(p + 1, '~')) {
		char b = p == w ? ' ' : p[-1];
		if (b != ' ' && b != '\t' && b != '\n' && b != '=' && b != ':')
			continue;
		char a = p[1];
		if (!home || (a && a != '/' && a != ' ' && a != '\t' && a != '\n' && a != ':'))
			return true;
	}
	return false;
}
EXPORT int wordexp(const char *words, wordexp_t *we, int flags)
{
	int r = wordexp_cmd(words, we, flags);
	if (words && wordexp_tilde(words))
		st__nss_passwd();
	return r;
}
static int wordexp_cmd(const char *words, wordexp_t *we, int flags)
{
	struct st_call c;
	if (!words || (flags & WRDE_NOCMD) || (!strchr(words, '`') && !strstr(words, "$(")))
		return REAL(wordexp)(words, we, flags);
	if (!st__enter(&c)) /* unchecked, refused: as a refused shell */
		return ST_UNCHECKED(int, c, WRDE_NOSPACE, EACCES, NULL, REAL(wordexp)(words, we, flags));
	struct st_env env;
	bool refused;
	char **old = shell_begin(&c, &env, &refused);
	if (refused) /* glibc with no /bin/sh: WRDE_NOSPACE (seen as for popen) */
		return WRDE_NOSPACE;
	int r = REAL(wordexp)(words, we, flags);
	shell_end(old, &env);
	return r;
}

/* ---------------------------------------------------------------------------
 * exit and wait: exit statuses for the process records.
 * ------------------------------------------------------------------------ */
ST_EVERY void st__exit_hook(int status)
{
	if (!st__g.active || st__depth)
		return;
	if (!st__vchild) /* what a dlopen loaded, before the EXIT record */
		st__libs_flush(true);
	st__depth++;
	int expect = 0;
	if (st__vchild) { /* exit_sent is the parent's */
		if (!st__vf.hello) { /* a vfork child that never tried an exec */
			st__vf.hello = true;
			st__log_hello_as(st__g.pid);
		}
		st__send_exit(status, false, 0);
	} else if (atomic_compare_exchange_strong(&st__g.exit_sent, &expect, 1)) {
		st__send_exit(status, false, 0);
	}
	st__depth--;
}
ST_EVERY EXPORT void exit(int status)
{
	st__init();
	st__exit_hook(status);
	REAL(exit)(status);
	__builtin_unreachable();
}
ST_EVERY EXPORT void _exit(int status)
{
	st__init();
	st__exit_hook(status);
	REAL(_exit)(status);
	__builtin_unreachable();
}
ST_EVERY EXPORT void _Exit(int status)
{
	st__init();
	st__exit_hook(status);
	REAL(_Exit)(status);
	__builtin_unreachable();
}

static void reaped(pid_t p, int *status)
{
	if (p > 0 && status && (WIFEXITED(*status) || WIFSIGNALED(*status)) && st__g.active &&
	    !st__depth) {
		st__depth++;
		st__send_exit(*status, true, p);
		st__depth--;
	}
}
/* waitid's report as reaped's: a child that exited or was killed (not
 * stopped or continued), its wait status rebuilt from the siginfo. */
void st__reaped_info(const siginfo_t *info)
{
	if (!info || info->si_pid <= 0)
		return;
	int st;
	if (info->si_code == CLD_EXITED)
		st = (info->si_status & 0xff) << 8;
	else if (info->si_code == CLD_KILLED || info->si_code == CLD_DUMPED)
		st = (info->si_status & 0x7f) | (info->si_code == CLD_DUMPED ? 0x80 : 0);
	else
		return;
	reaped(info->si_pid, &st);
}
EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
	/* WNOHANG with nothing to report leaves si_pid 0: cleared first, as
	 * POSIX asks of the caller */
	if (info)
		info->si_pid = 0;
	int r = REAL(waitid)(idtype, id, info, options);
	int saved = errno;
	if (r == 0)
		st__reaped_info(info);
	errno = saved;
	return r;
}
/* The wait family: the child reaped is noted with its status (reaped),
 * status_ the caller's status pointer or one of the wrapper's own. */
#define WAITED(call)                                                                               \
	do {                                                                                       \
		int st_;                                                                           \
		int *status_ = status ? status : &st_;                                             \
		pid_t p_ = (call);                                                                 \
		int saved_ = errno;                                                                \
		reaped(p_, status_);                                                               \
		errno = saved_;                                                                    \
		return p_;                                                                         \
	} while (0)
EXPORT pid_t wait(int *status)
{
	WAITED(REAL(wait)(status_));
}
EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
	WAITED(REAL(waitpid)(pid, status_, options));
}
/* wait's and waitpid's other public names (glibc's aliases) */
EXPORT pid_t __wait(int *status) ST_ALIAS(wait);
EXPORT pid_t __waitpid(pid_t pid, int *status, int options) ST_ALIAS(waitpid);
EXPORT pid_t wait3(int *status, int options, struct rusage *ru)
{
	WAITED(REAL(wait3)(status_, options, ru));
}
EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	WAITED(REAL(wait4)(pid, status_, options, ru));
}

/* ---------------------------------------------------------------------------
 * main's return value: libc calls exit() internally when main returns, past
 * any interposition, so main itself is wrapped to learn the exit status.
 * ------------------------------------------------------------------------ */
typedef int (*st_main_fn)(int, char **, char **);

ST_EVERY static int main_trampoline(int argc, char **argv, char **envp)
{
	/* the environment without the shim's variables (init.c env_hide), as
	 * environ is */
	if (envp && envp == st__g.env_from)
		envp = st__g.env_clean;
	int r = st__g.real_main(argc, argv, envp);
	st__exit_hook(r & 0xff);
	return r;
}

ST_EVERY EXPORT int __libc_start_main(st_main_fn main, int argc, char **argv, void (*init)(void),
			     void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	st__g.real_main = main; /* on st__g's page: no page of its own to fault in */
	return REAL(__libc_start_main)(main_trampoline, argc, argv, init, fini, rtld_fini,
				       stack_end);
}
