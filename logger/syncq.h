/*
 * syncq.h - fdatasyncs in flight through io_uring, for the logger's one
 * thread (log-sync uring; docs/DECISIONS.md, D24).
 *
 * The logger writes a batch with pwrite, hands its fdatasync to the kernel
 * and goes on with the next batch while it runs; several run at once, and
 * the same wait that reaps their completions also watches the logger's
 * wake-up eventfd, so a record committed while a sync runs is written and
 * synced at once instead of waiting for that sync (D7's two cohorts).
 * Built without liburing, syncq_open() fails with ENOSYS and the logger
 * keeps its one-at-a-time fdatasync.
 */
#ifndef ATTIC_SYNCQ_H
#define ATTIC_SYNCQ_H

#include <stdint.h>

typedef struct syncq syncq_t;

/* Called once per completed sync with its tag and result (0 or -errno). */
typedef void (*syncq_done_fn)(void *arg, uint64_t tag, int res);

/*
 * A queue for up to `depth` syncs in flight, which can also watch wake_fd
 * (an eventfd; -1 for none). Returns NULL with errno: ENOSYS when built
 * without liburing, or io_uring_setup's error (EPERM when the kernel has
 * io_uring disabled, ENOMEM under a low RLIMIT_MEMLOCK).
 */
syncq_t *syncq_open(unsigned depth, int wake_fd);
void syncq_close(syncq_t *q);

/* Queue an fdatasync of fd, reported with tag (below UINT64_MAX - 1). At most
 * `depth` may be outstanding. It reaches the kernel at the next
 * syncq_wait(). Returns 0, or -EBUSY when depth syncs are outstanding. */
int syncq_fdatasync(syncq_t *q, int fd, uint64_t tag);

/*
 * Submit what was queued, then report completed syncs through done(arg,
 * ...). With timeout_ms 0 it does not block (one syscall when something was
 * queued, none otherwise); else it blocks until a sync completes, wake_fd
 * becomes readable (only when watch_wake), or timeout_ms pass (< 0: no
 * limit). A readable wake_fd is drained. Returns the number of syncs
 * reported, or -errno when io_uring itself fails (the caller fail-stops:
 * it no longer knows which syncs ran).
 */
int syncq_wait(syncq_t *q, int timeout_ms, int watch_wake, syncq_done_fn done, void *arg);

#endif
