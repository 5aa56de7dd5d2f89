/* tests/drivers/uring.c - reads a file through an io_uring (IORING_OP_OPENAT, IORING_OP_READ), falling back to open/read when there is no io_uring. */
/*
 * usage: uring HOW FILE
 *   sys          the ring set up by syscall(SYS_io_uring_setup), entered by
 *                syscall(SYS_io_uring_enter), the entries written by hand
 *   inline-setup the setup by an inline system call (unseen by a preload),
 *                the rest by syscall()
 *   lib-init, lib-params, lib-setup (built with liburing, as uring_lib):
 *                io_uring_queue_init, io_uring_queue_init_params, or
 *                liburing's io_uring_setup (the entries then by hand)
 *   dl-init FILE MODULE (uring, not linked with liburing): MODULE
 *                (uring_dl.so, which is), dlopen'ed RTLD_LOCAL, makes a ring
 *                by io_uring_queue_init and closes it: "io_uring: ring made",
 *                or the fallback
 * Prints "io_uring: CONTENT" when the ring read the file.  When the setup
 * fails as on a kernel without io_uring (ENOSYS, EPERM: kernel.io_uring_disabled)
 * it prints "no io_uring (ERRNO)" and takes the fallback path a real program
 * takes, open and read: "fallback: CONTENT", or "fallback: open ERRNO".  A
 * ring operation that fails prints "OP: ERRNO" and exits 1.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

static const char *ename(int e)
{
	switch (e) {
	case ENOSYS:
		return "ENOSYS";
	case EPERM:
		return "EPERM";
	case ENOENT:
		return "ENOENT";
	case EACCES:
		return "EACCES";
	case EBADF:
		return "EBADF";
	case EINVAL:
		return "EINVAL";
	}
	static char buf[16];
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

static char content[256];

static void put_content(const char *how, ssize_t n)
{
	if (n < 0)
		n = 0;
	content[n] = 0;
	if (n > 0 && content[n - 1] == '\n')
		content[n - 1] = 0;
	printf("%s: %s\n", how, content);
}

static int fallback(const char *path, int why)
{
	printf("no io_uring (%s)\n", ename(why));
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		printf("fallback: open %s\n", ename(errno));
		return 0;
	}
	put_content("fallback", read(fd, content, sizeof(content) - 1));
	close(fd);
	return 0;
}

/* the raw interface: the rings as the kernel maps them */
struct ring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static long inline_setup(unsigned entries, struct io_uring_params *p)
{
#if defined(__x86_64__)
	long r;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"((long)SYS_io_uring_setup), "D"((long)entries), "S"(p)
			 : "rcx", "r11", "memory");
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
#else
	return syscall(SYS_io_uring_setup, entries, p);
#endif
}

static int ring_map(struct ring *r, int fd, const struct io_uring_params *p)
{
	size_t sqsz = p->sq_off.array + p->sq_entries * sizeof(unsigned);
	size_t cqsz = p->cq_off.cqes + p->cq_entries * sizeof(struct io_uring_cqe);
	if (p->features & IORING_FEAT_SINGLE_MMAP)
		sqsz = cqsz = sqsz > cqsz ? sqsz : cqsz;
	char *sq = mmap(NULL, sqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
			IORING_OFF_SQ_RING);
	char *cq = sq;
	if (sq != MAP_FAILED && !(p->features & IORING_FEAT_SINGLE_MMAP))
		cq = mmap(NULL, cqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
			  IORING_OFF_CQ_RING);
	void *sqes = mmap(NULL, p->sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		return -1;
	r->fd = fd;
	r->sq_tail = (unsigned *)(sq + p->sq_off.tail);
	r->sq_mask = (unsigned *)(sq + p->sq_off.ring_mask);
	r->sq_array = (unsigned *)(sq + p->sq_off.array);
	r->cq_head = (unsigned *)(cq + p->cq_off.head);
	r->cq_tail = (unsigned *)(cq + p->cq_off.tail);
	r->cq_mask = (unsigned *)(cq + p->cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p->cq_off.cqes);
	r->sqes = sqes;
	return 0;
}

/* one entry submitted, its completion waited for: its res, or -errno of the enter */
static int ring_do(struct ring *r, const struct io_uring_sqe *e)
{
	unsigned tail = *r->sq_tail, idx = tail & *r->sq_mask;
	r->sqes[idx] = *e;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -errno;
	unsigned head = __atomic_load_n(r->cq_head, __ATOMIC_ACQUIRE);
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	int res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

/* the ring of fd (set up with p) opens and reads path */
static int by_hand(long fd, const struct io_uring_params *p, const char *path)
{
	struct ring r;
	if (ring_map(&r, (int)fd, p) != 0) {
		printf("mmap: %s\n", ename(errno));
		return 1;
	}
	struct io_uring_sqe e;
	memset(&e, 0, sizeof(e));
	e.opcode = IORING_OP_OPENAT;
	e.fd = AT_FDCWD;
	e.addr = (uintptr_t)path;
	e.open_flags = O_RDONLY;
	int file = ring_do(&r, &e);
	if (file < 0) {
		printf("openat: %s\n", ename(-file));
		return 1;
	}
	memset(&e, 0, sizeof(e));
	e.opcode = IORING_OP_READ;
	e.fd = file;
	e.addr = (uintptr_t)content;
	e.len = sizeof(content) - 1;
	int n = ring_do(&r, &e);
	if (n < 0) {
		printf("read: %s\n", ename(-n));
		return 1;
	}
	put_content("io_uring", n);
	return 0;
}

#ifdef HAVE_LIBURING
/* liburing: its functions return -errno */
static int by_liburing(const char *how, const char *path)
{
	struct io_uring ring;
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	int rc;
	if (strcmp(how, "lib-init") == 0) {
		rc = io_uring_queue_init(4, &ring, 0);
	} else if (strcmp(how, "lib-params") == 0) {
		rc = io_uring_queue_init_params(4, &ring, &p);
	} else {
		/* the ring's fd only: its entries are written by hand */
		rc = io_uring_setup(4, &p);
		if (rc >= 0)
			return by_hand(rc, &p, path);
	}
	if (rc < 0)
		return fallback(path, -rc);
	struct io_uring_sqe *e = io_uring_get_sqe(&ring);
	io_uring_prep_openat(e, AT_FDCWD, path, O_RDONLY, 0);
	struct io_uring_cqe *c;
	io_uring_submit(&ring);
	if ((rc = io_uring_wait_cqe(&ring, &c)) < 0 || (rc = c->res) < 0) {
		printf("openat: %s\n", ename(-rc));
		return 1;
	}
	int file = c->res;
	io_uring_cqe_seen(&ring, c);
	e = io_uring_get_sqe(&ring);
	io_uring_prep_read(e, file, content, sizeof(content) - 1, 0);
	io_uring_submit(&ring);
	if ((rc = io_uring_wait_cqe(&ring, &c)) < 0 || (rc = c->res) < 0) {
		printf("read: %s\n", ename(-rc));
		return 1;
	}
	put_content("io_uring", c->res);
	io_uring_cqe_seen(&ring, c);
	io_uring_queue_exit(&ring);
	return 0;
}
#endif

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "dl-init") == 0) {
		void *h = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
		int (*init)(void) = h ? (int (*)(void))dlsym(h, "uring_dl_init") : NULL;
		if (!init) {
			printf("dlopen: %s\n", dlerror());
			return 1;
		}
		int rc = init();
		if (rc < 0)
			return fallback(argv[2], -rc);
		printf("io_uring: ring made\n");
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: uring sys|inline-setup|lib-init|lib-params|lib-setup FILE\n"
				"       uring dl-init FILE MODULE\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	if (strcmp(argv[1], "sys") == 0 || strcmp(argv[1], "inline-setup") == 0) {
		struct io_uring_params p;
		memset(&p, 0, sizeof(p));
		long fd = argv[1][0] == 'i' ? inline_setup(4, &p) : syscall(SYS_io_uring_setup, 4, &p);
		if (fd < 0)
			return fallback(argv[2], errno);
		return by_hand(fd, &p, argv[2]);
	}
#ifdef HAVE_LIBURING
	if (strncmp(argv[1], "lib-", 4) == 0)
		return by_liburing(argv[1], argv[2]);
#endif
	fprintf(stderr, "uring: %s: not built in\n", argv[1]);
	return 2;
}
