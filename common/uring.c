/*
 * uring.c - the io_uring wait the roles' loops share (uring.h). Runs in
 * the thread that owns the ring (the logger's, the store's); keeps no
 * state of its own, so a crash here is its role's crash.
 */
#include "uring.h"

#ifdef HAVE_LIBURING

#include <errno.h>
#include <poll.h>
#include <unistd.h>

int uring_submit_wait(struct io_uring *ring, unsigned *queued, int wake_fd, int *armed,
                      int timeout_ms)
{
    if (wake_fd >= 0 && !*armed) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
        if (sqe) {
            io_uring_prep_poll_add(sqe, wake_fd, POLLIN);
            io_uring_sqe_set_data64(sqe, URING_TAG_WAKE);
            *armed = 1;
            ++*queued;
        }
    }
    int rc = 0;
    if (timeout_ms == 0) {
        if (*queued) rc = io_uring_submit(ring);
    } else {
        struct io_uring_cqe *cqe;
        struct __kernel_timespec ts = {.tv_sec = timeout_ms / 1000,
                                       .tv_nsec = (long long)(timeout_ms % 1000) * 1000000};
        rc = io_uring_submit_and_wait_timeout(ring, &cqe, 1, timeout_ms > 0 ? &ts : NULL, NULL);
        if (rc == -ETIME || rc == -EINTR) rc = 0;
    }
    if (rc < 0) return rc;
    *queued = 0;
    return 0;
}

void uring_woken(int wake_fd, int *armed)
{
    uint64_t v;
    ssize_t r = read(wake_fd, &v, sizeof(v));
    (void)r; /* EAGAIN: already drained */
    *armed = 0;
}

#endif
