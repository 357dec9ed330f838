/*
 * syncq.c - fdatasyncs in flight through io_uring (syncq.h). Run by the
 * logger's main thread only: one submitter, so the ring is set up
 * SINGLE_ISSUER where the kernel knows it.
 *
 * The fdatasyncs run in the kernel's io_uring workers, so several overlap
 * on the device's queues; the logger thread never blocks in one. A poll of
 * the logger's wake-up eventfd sits in the same ring, so one io_uring_enter
 * waits for "a sync finished" and "a producer committed a record" at once.
 *
 * Invariants: at most `depth` syncs outstanding (the caller's slots), plus
 * at most one poll. Nothing here decides durability: completions are handed
 * to the caller with their result, and the caller publishes durable_lsn
 * over the completed prefix only (logger.c). A crash of the logger with
 * syncs in flight loses nothing acked: the kernel finishes or cancels them,
 * and a respawned logger rewrites and syncs everything above durable_lsn.
 */
#include "syncq.h"

#include <errno.h>
#include <stdlib.h>

#ifdef HAVE_LIBURING

#include <liburing.h>
#include <unistd.h>

#include "uring.h"

struct syncq {
    struct io_uring ring;
    unsigned depth;
    unsigned outstanding; /* syncs queued or running */
    unsigned queued;      /* entries not yet submitted */
    int wake_fd;
    int poll_armed;
};

syncq_t *syncq_open(unsigned depth, int wake_fd)
{
    syncq_t *q = calloc(1, sizeof(*q));
    if (!q) return NULL;
    q->depth = depth;
    q->wake_fd = wake_fd;
    /* Single issuer and cooperative task running save IPIs where the
     * kernel has them (6.0, 5.19); older kernels refuse the flags. */
    int rc = io_uring_queue_init(depth + 2, &q->ring,
                                 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN);
    if (rc == -EINVAL) rc = io_uring_queue_init(depth + 2, &q->ring, 0);
    if (rc < 0) {
        free(q);
        errno = -rc;
        return NULL;
    }
    return q;
}

void syncq_close(syncq_t *q)
{
    if (!q) return;
    io_uring_queue_exit(&q->ring);
    free(q);
}

int syncq_fdatasync(syncq_t *q, int fd, uint64_t tag)
{
    if (q->outstanding >= q->depth) return -EBUSY;
    struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
    if (!sqe) return -EBUSY; /* not reached: the ring has depth + 2 entries */
    io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
    io_uring_sqe_set_data64(sqe, tag);
    q->outstanding++;
    q->queued++;
    return 0;
}

int syncq_wait(syncq_t *q, int timeout_ms, int watch_wake, syncq_done_fn done, void *arg)
{
    int rc = uring_submit_wait(&q->ring, &q->queued, watch_wake ? q->wake_fd : -1, &q->poll_armed,
                               timeout_ms);
    if (rc < 0) return rc;
    int reported = 0;
    struct io_uring_cqe *cqe;
    while (io_uring_peek_cqe(&q->ring, &cqe) == 0) {
        uint64_t tag = io_uring_cqe_get_data64(cqe);
        int res = cqe->res;
        io_uring_cqe_seen(&q->ring, cqe);
        if (tag == URING_TAG_WAKE) {
            uring_woken(q->wake_fd, &q->poll_armed);
            continue;
        }
        q->outstanding--;
        reported++;
        done(arg, tag, res);
    }
    return reported;
}

#else /* !HAVE_LIBURING */

syncq_t *syncq_open(unsigned depth, int wake_fd)
{
    (void)depth;
    (void)wake_fd;
    errno = ENOSYS;
    return NULL;
}

void syncq_close(syncq_t *q)
{
    (void)q;
}

int syncq_fdatasync(syncq_t *q, int fd, uint64_t tag)
{
    return -ENOSYS;
}

int syncq_wait(syncq_t *q, int timeout_ms, int watch_wake, syncq_done_fn done, void *arg)
{
    return -ENOSYS;
}

#endif
