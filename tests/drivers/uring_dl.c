/* tests/drivers/uring_dl.c - a module that makes a ring by liburing, for uring_lib dl-init: dlopen'ed RTLD_LOCAL, liburing is outside the global scope. */
#include <liburing.h>

/* io_uring_queue_init's result (0 or -errno); the ring is closed again */
int uring_dl_init(void);
int uring_dl_init(void)
{
	struct io_uring ring;
	int rc = io_uring_queue_init(4, &ring, 0);
	if (rc == 0)
		io_uring_queue_exit(&ring);
	return rc;
}
