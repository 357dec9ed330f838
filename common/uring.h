/*
 * uring.h - what the roles' io_uring loops share: the logger's syncs in
 * flight (logger/syncq.c, D24) and the store's reads of values
 * (store/reads.c, D59). Each has one ring, one thread, and a wake-up
 * eventfd that a poll in the same ring watches, so a single wait covers
 * "a request completed" and "somebody woke us". Only with liburing
 * (HAVE_LIBURING); nothing here without it.
 */
#ifndef ATTIC_URING_H
#define ATTIC_URING_H

#ifdef HAVE_LIBURING

#include <liburing.h>
#include <stdint.h>

/* The wake-up poll's completion tag. Not UINT64_MAX: liburing uses it for
 * its own timeout entries. */
#define URING_TAG_WAKE (UINT64_MAX - 1)

/*
 * Arm a poll of wake_fd unless wake_fd < 0 or *armed, then submit the
 * *queued entries (0 once they are in the kernel's hands). With
 * timeout_ms 0 that is all (no system call when nothing is queued);
 * otherwise block until a completion, wake_fd becomes readable, or
 * timeout_ms pass (< 0: no limit). Returns 0 or -errno (io_uring failed).
 */
int uring_submit_wait(struct io_uring *ring, unsigned *queued, int wake_fd, int *armed,
                      int timeout_ms);

/* The completion tagged URING_TAG_WAKE arrived: drain wake_fd, disarm. */
void uring_woken(int wake_fd, int *armed);

#endif
#endif
