/*
 * reads.h - values read from the log for read commands, many at once, for
 * the store process's one thread (read-io uring and buffered;
 * docs/DECISIONS.md, D59).
 *
 * A read request whose reply needs bytes of the log leaves them as holes
 * in its reply (store/core/value.h, st_defer_t). This module fills them:
 * bytes the page cache holds are copied at once from the segment's
 * read-only mapping (no system call); the others are read through
 * io_uring, one submission for all those a turn of the store's loop
 * started, straight from the device (O_DIRECT; through the page cache a
 * value read again soon, so that it stays there) or, read-io buffered,
 * always through the page cache. The reply is handed back once whole, while the
 * store goes on serving and applying. The same ring watches the store's
 * wake-up eventfd, so the store sleeps in one place for both.
 *
 * The caller keeps the log a read in flight reads (store_reads_lowest:
 * compaction's deletion limit) and says which segments were deleted
 * (store_reads_forget). Built without liburing, store_reads_open() fails
 * with ENOSYS and the store reads with pread, one value at a time.
 */
#ifndef ATTIC_STORE_READS_H
#define ATTIC_STORE_READS_H

#include <stdint.h>

#include "buf.h"
#include "store/core/value.h"

typedef struct store_reads store_reads_t;

/* A finished read: its reply (bytes the holes named filled in; still the
 * module's, valid during the call), or err (an errno: the reply is then
 * unusable). Returns 0, or -1 to stop reporting (the master is gone). */
typedef int (*store_reads_done_fn)(void *arg, int fe, uint64_t id, uint64_t tag, const buf_t *reply,
                                   int err);

/*
 * Reads of the log in dir (segments of segment_size bytes), up to `depth`
 * in flight, watching wake_fd (an eventfd; -1 for none) in
 * store_reads_wait. With direct, bytes the page cache does not hold are
 * read with O_DIRECT (neither cached nor read ahead; the page cache only
 * serves what it has, RWF_NOWAIT); without, every read goes through the
 * page cache, which then keeps what was read. Returns NULL with errno:
 * ENOSYS when built without liburing, or io_uring_setup's error (EPERM
 * when the kernel has io_uring disabled, ENOMEM under a low
 * RLIMIT_MEMLOCK).
 */
store_reads_t *store_reads_open(const char *dir, uint64_t segment_size, unsigned depth, int direct,
                                int wake_fd);
/* Waits for the reads in flight (their buffers are freed after), then
 * closes everything. */
void store_reads_close(store_reads_t *r);

/* What the reads did since they were opened: pieces of values copied
 * from the page cache (through the segment's mapping), pieces read from
 * the device (or through the page cache, read-io buffered), residency
 * probes (mincore). */
typedef struct store_reads_stats {
    uint64_t copied, device, probes;
    uint64_t admitted; /* of device: read through the page cache, to keep */
} store_reads_stats_t;
const store_reads_stats_t *store_reads_stats(const store_reads_t *r);

/* True when no other read can start now (store_reads_start would refuse). */
int store_reads_full(const store_reads_t *r);
/* Reads in flight (started, not yet reported). */
unsigned store_reads_inflight(const store_reads_t *r);

/*
 * Fill d's holes in *reply, for frontend fe's request id (tag: the
 * caller's, given back with it). Returns 1 when every hole was filled at
 * once (from the page cache; *reply is the caller's still), 0 when some
 * are read in flight: the reply is then taken (*reply becomes an empty
 * buffer, one the module had) and reported by store_reads_wait once
 * whole; the reads reach the kernel at the next store_reads_submit() or
 * store_reads_wait(). -EAGAIN when there is no room for its reads now
 * (nothing taken; holes may be filled or not: the caller reads them all
 * itself, store_reads_fill_now).
 */
int store_reads_start(store_reads_t *r, const st_defer_t *d, buf_t *reply, int fe, uint64_t id,
                      uint64_t tag);
/* Read d's holes into reply now, with pread (0, or -1: logged). */
int store_reads_fill_now(store_ctx_t *ctx, const st_defer_t *d, buf_t *reply);

/* Submit what was started (one system call; none when nothing was). */
void store_reads_submit(store_reads_t *r);

/*
 * Submit what was started, then report finished reads through done(arg,
 * ...). With timeout_ms 0 it does not block; else it blocks until a read
 * finishes, wake_fd is written (it is drained), or timeout_ms pass.
 * Returns the number reported, or -1 when done() asked to stop.
 */
int store_reads_wait(store_reads_t *r, int timeout_ms, store_reads_done_fn done, void *arg);
/* True when finished reads wait to be reported (no system call). */
int store_reads_ready(store_reads_t *r);

/* The lowest LSN a read in flight reads, UINT64_MAX when none. */
uint64_t store_reads_lowest(const store_reads_t *r);
/* Close the descriptors of segments that start below lsn (deleted). */
void store_reads_forget(store_reads_t *r, uint64_t lsn);

#endif
