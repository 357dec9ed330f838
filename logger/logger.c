/*
 * logger.c - the logger process: group commit of the ring into the log.
 *
 * One loop: take every committed record from the write position on (as far
 * as they are contiguous), write them to the current segment straight from
 * the ring's memory, fdatasync once, publish durable_lsn, wake the store and
 * the frontends that sleep. Whatever producers commit while one fdatasync
 * runs is the next batch: the batch grows with the load, and nobody sleeps
 * to make it grow (issue 2; PostgreSQL's XLogFlush "piggybacks" the same way).
 *
 * Invariants:
 *  - durable_lsn only grows, and only after fdatasync returned 0 for every
 *    byte below it (contracts 1, 2).
 *  - The ring's bytes below durable_lsn are not released here: the store
 *    releases them once applied, so a respawned logger finds every record
 *    from durable_lsn on still in the ring and rewrites them (the same bytes
 *    at the same offsets, so a rewrite is harmless).
 *  - A failed write or fdatasync is never retried: the page cache may have
 *    dropped the dirty pages and a retry would "succeed" on lost data. The
 *    logger marks LOGGER_FAILED and exits EXIT_IOFAIL; recovery from what is
 *    on disk decides (contract 6). LOGGER_FAILED outlives the process: a
 *    logger that starts and finds it writes nothing.
 *  - A batch never crosses a segment's end, so a segment is synced, and its
 *    records acked, before the logger needs the next one.
 *  - With log-sync uring, several fdatasyncs run at once (each batch's is
 *    handed to io_uring and the loop goes on to the next batch), and
 *    durable_lsn moves over the completed prefix only: a batch is acked
 *    once its own sync and every earlier one returned 0, never past one
 *    that failed or is still running. Before the write position moves to
 *    the next segment every sync in flight has completed (D24).
 * A crash of this process loses nothing acked: acks follow durable_lsn.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cpu.h"
#include "direct.h"
#include "io.h"
#include "io_fault.h"
#include "log.h"
#include "logger.h"
#include "record.h"
#include "seg.h"
#include "syncq.h"

/* Cap on one batch's bytes: large enough that the fdatasync, not the cap,
 * bounds throughput; small enough that one batch never hogs the ring. */
#define BATCH_MAX (8u << 20)
/* How long a record may stay claimed but uncommitted before we check whether
 * its producer died (the master marks dead claimers as it reaps them). */
#define ABANDON_CHECK_NS (2u * 1000 * 1000)
/* Piggybacking before an fdatasync: at most this many extra scans, and this
 * long a wait for a claimed record to be committed. */
#define PIGGYBACK_ROUNDS  4
#define PIGGYBACK_SPIN_NS (20u * 1000)
/* fdatasyncs in flight with log-sync uring (docs/DECISIONS.md, D24). */
#define SYNCS_IN_FLIGHT 4
/* The store hears of records nobody waits for once the log has been idle
 * this long (D25). */
#define IDLE_STORE_WAKE_MS 1

/* One batch whose fdatasync is in flight (log-sync uring). */
typedef struct sync_slot {
    uint64_t start, end; /* the batch: [start, end) */
    uint64_t nrec;
    uint64_t t0, t_sync;      /* batch began, sync submitted (shm_mono_ns) */
    unsigned long long token; /* the I/O seam's (io.h, sync_begin) */
    int wants_store;
    int done;
    int res; /* once done: 0 or -errno */
} sync_slot_t;

typedef struct logger {
    shm_t *shm;
    ring_t *ring;
    const config_t *cfg;
    uint64_t pos;       /* next LSN to write; == durable_lsn when no sync is in flight */
    uint64_t durable;   /* durable_lsn as this logger last published it */
    uint64_t seg_start; /* segment of the open fd */
    int fd;

    /* log-sync uring: NULL when off (or io_uring is unavailable). Each slot
     * syncs through its own open file of the segment, so each sync reports
     * the write-back errors that happened since that file's previous sync,
     * whatever another sync already reported (errors are counted per open
     * file description). Slots are used in submission order. */
    syncq_t *syncq;
    int lanes[SYNCS_IN_FLIGHT];
    sync_slot_t slots[SYNCS_IN_FLIGHT];
    unsigned slot_head, inflight;

    /* log-sync direct: the segment is open O_DIRECT|O_DSYNC and a batch is
     * one write of whole blocks (direct.c); 0 when off. */
    int direct_on;
    direct_t direct;

    /* Idle wake-up of the store (D25): the LSN the log went idle at and
     * since when, and the LSN the store was last woken for being idle. */
    uint64_t idle_pos, idle_since, store_told;

    /* Segment preparation runs in its own thread so that zero-filling a new
     * segment never stalls a commit. */
    pthread_t prep_thread;
    pthread_mutex_t prep_lock;
    pthread_cond_t prep_cond;
    uint64_t prep_want; /* segment start the writer wants ready next */
    uint64_t prep_next; /* segments that start below this exist */
    int prep_errno;     /* creation failed (ENOSPC, EIO, ...) */
    int prep_stop;
} logger_t;

static void *prep_main(void *arg)
{
    logger_t *lg = arg;
    pthread_mutex_lock(&lg->prep_lock);
    while (!lg->prep_stop) {
        if (lg->prep_want >= lg->prep_next && !lg->prep_errno) {
            uint64_t want = lg->prep_want;
            pthread_mutex_unlock(&lg->prep_lock);
            int rc = segfile_create(lg->cfg->dir, want, lg->cfg->segment_size, 1);
            int err = errno;
            pthread_mutex_lock(&lg->prep_lock);
            if (rc == 0) {
                lg->prep_next = want + lg->cfg->segment_size;
                atomic_fetch_add(&lg->shm->stats.segments_created, 1);
                if (atomic_exchange(&lg->shm->log_no_space, 0))
                    log_warn("Disk space is back: log segment at LSN %" PRIu64
                             " created, writes are accepted again",
                             want);
            } else if (err == ENOSPC || err == EDQUOT) {
                /* Contract 8: seen before any record is half written. New
                 * writes are refused (frontends read the flag), what is
                 * in the ring waits, and we try again every second. */
                if (!atomic_exchange(&lg->shm->log_no_space, 1))
                    log_warn("No space for the next log segment (LSN %" PRIu64
                             "): %s. Writes are refused until space is freed; reads go on",
                             want, strerror(err));
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_sec += 1;
                pthread_cond_timedwait(&lg->prep_cond, &lg->prep_lock, &ts);
            } else {
                lg->prep_errno = err;
                log_warn("Can't create log segment at LSN %" PRIu64 ": %s", want, strerror(err));
            }
            pthread_cond_broadcast(&lg->prep_cond);
            continue;
        }
        pthread_cond_wait(&lg->prep_cond, &lg->prep_lock);
    }
    pthread_mutex_unlock(&lg->prep_lock);
    return NULL;
}

/* Ask for the segment after the current one to be prepared, once the
 * current one is half full: early enough that it is ready in time, late
 * enough that a server which writes little never pays for it. */
static void prep_ahead(logger_t *lg)
{
    pthread_mutex_lock(&lg->prep_lock);
    uint64_t next = lg->seg_start + lg->cfg->segment_size;
    if (lg->prep_want < next) {
        lg->prep_want = next;
        pthread_cond_broadcast(&lg->prep_cond);
    }
    pthread_mutex_unlock(&lg->prep_lock);
}

static void close_lanes(logger_t *lg)
{
    for (int i = 0; i < SYNCS_IN_FLIGHT; i++) {
        if (lg->lanes[i] >= 0) io->close(lg->lanes[i]);
        lg->lanes[i] = -1;
    }
}

/* Open the sync slots' files of the segment at start (no sync is in
 * flight). Returns 0 or -1 with errno. */
static int open_lanes(logger_t *lg, uint64_t start)
{
    close_lanes(lg);
    for (int i = 0; i < SYNCS_IN_FLIGHT; i++) {
        lg->lanes[i] = segfile_open(lg->cfg->dir, start, 0);
        if (lg->lanes[i] < 0) {
            int saved = errno;
            close_lanes(lg);
            errno = saved;
            return -1;
        }
    }
    return 0;
}

/* Switch to the segment starting at start, waiting for its preparation.
 * Returns 0 or -1 with errno. */
static int switch_segment(logger_t *lg, uint64_t start)
{
    pthread_mutex_lock(&lg->prep_lock);
    if (lg->prep_want < start) {
        lg->prep_want = start;
        pthread_cond_broadcast(&lg->prep_cond);
    }
    while (lg->prep_next <= start && !lg->prep_errno)
        pthread_cond_wait(&lg->prep_cond, &lg->prep_lock);
    int err = lg->prep_errno;
    pthread_mutex_unlock(&lg->prep_lock);
    if (err && lg->prep_next <= start) {
        errno = err;
        return -1;
    }
    int flags = lg->cfg->log_sync == CONFIG_SYNC_ODSYNC ? O_DSYNC : 0;
    if (lg->direct_on) flags = O_DIRECT | O_DSYNC;
    int fd = segfile_open(lg->cfg->dir, start, flags);
    if (fd < 0) return -1;
    /* The log continues at lg->pos in this segment: at its start, or where
     * recovery or a predecessor left it. */
    if (lg->direct_on && direct_start(&lg->direct, fd, start, lg->pos) != 0) {
        int saved = errno;
        io->close(fd);
        errno = saved;
        return -1;
    }
    if (lg->syncq && open_lanes(lg, start) != 0) {
        int saved = errno;
        io->close(fd);
        errno = saved;
        return -1;
    }
    if (lg->fd >= 0) io->close(lg->fd);
    lg->fd = fd;
    lg->seg_start = start;
    return 0;
}

/* Wake the store and every frontend, so that whoever waits looks at
 * durable_lsn and logger_state again. */
static void wake_all(logger_t *lg)
{
    shm_wake(&lg->shm->store_wake);
    for (uint32_t i = 0; i < lg->shm->nfrontends; i++)
        shm_wake(&lg->shm->fe[i].wake);
}

/* The log failed at LSN at: nothing at or past it is ever acked. */
static void fail_stop_at(logger_t *lg, const char *what, int err, uint64_t at)
{
    atomic_store(&lg->shm->logger_errno, err);
    atomic_store(&lg->shm->logger_state, LOGGER_FAILED);
    /* Test hook: die here, as a SIGKILL at this instruction would. */
    if (io_fault_point(IO_FAULT_FAILED)) raise(SIGKILL);
    log_warn("FATAL: %s failed at LSN %" PRIu64 ": %s. No write is acknowledged from now on; "
             "restart the server to recover from what is on disk.",
             what, at, strerror(err));
    /* Wake everyone so waiting clients get their error now. */
    wake_all(lg);
}

static void fail_stop(logger_t *lg, const char *what, int err)
{
    fail_stop_at(lg, what, err, lg->pos);
}

/* Write [from, to) of the ring, all within the current segment. */
static int write_span(logger_t *lg, uint64_t from, uint64_t to)
{
    if (lg->direct_on) return 0; /* the batch is written whole when it is complete */
    while (from < to) {
        /* Split where the ring's data area wraps. */
        uint64_t lap_end = (from | lg->ring->mask) + 1;
        uint64_t stop = to < lap_end ? to : lap_end;
        if (io_pwrite_all(lg->fd, ring_ptr(lg->ring, from), (size_t)(stop - from),
                          (off_t)(from - lg->seg_start)) != 0)
            return -1;
        from = stop;
    }
    return 0;
}

/* Flush the current segment, unless every write to it was already durable
 * when it returned (O_DSYNC). Returns 0 or -1 with errno. */
static int sync_segment(logger_t *lg)
{
    if (lg->cfg->log_sync == CONFIG_SYNC_ODSYNC) return 0;
    return io->fdatasync(lg->fd);
}

/* Count records in [from, to) for the statistics (cheap: headers only), and
 * say whether any waits for a reply computed by the store. */
static uint64_t count_records(const ring_t *r, uint64_t from, uint64_t to, int *wants_store)
{
    uint64_t n = 0;
    *wants_store = 0;
    while (from < to) {
        const rec_hdr_t *h = ring_ptr(r, from);
        if (h->type == REC_CMD) n++;
        if (h->origin) *wants_store = 1;
        from += rec_space(h->len - REC_HDR_SIZE);
    }
    return n;
}

/*
 * Whether the store must hear about this batch now. Plain SETs are acked by
 * the frontends alone, so waking the store after every batch would cost a
 * context switch per fdatasync for nothing; it is woken when a record in the
 * batch waits for its reply, when it holds reads waiting for durable
 * records, or when 1/64 of the ring waits to be applied (it releases ring space by
 * applying). Otherwise it catches up when the logger goes idle, or when a
 * read arrives (a read first applies everything durable).
 */
static int store_must_know(logger_t *lg, int wants_store)
{
    if (wants_store || atomic_load_explicit(&lg->shm->store_deferred, memory_order_relaxed))
        return 1;
    uint64_t used = atomic_load_explicit(&lg->ring->head, memory_order_relaxed) -
                    atomic_load_explicit(&lg->ring->tail, memory_order_relaxed);
    return used > lg->ring->size / 64;
}

/* The statistics of one synced batch (INFO persistence, issue 5). */
static void count_batch(logger_t *lg, uint64_t bytes, uint64_t nrec, uint64_t batch_ns,
                        uint64_t sync_ns)
{
    shm_stats_t *st = &lg->shm->stats;
    atomic_fetch_add_explicit(&st->fsync_hist[shm_hist_index(sync_ns)], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->fsyncs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->bytes, bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->records, nrec, memory_order_relaxed);
    if (nrec > atomic_load_explicit(&st->max_batch_records, memory_order_relaxed))
        atomic_store_explicit(&st->max_batch_records, nrec, memory_order_relaxed);
    atomic_store_explicit(&st->last_fsync_ns, batch_ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->total_fsync_ns, batch_ns, memory_order_relaxed);
}

/* Everything below end is on stable storage: say so, and wake who waits. */
static void publish_durable(logger_t *lg, uint64_t end, int wants_store)
{
    lg->durable = end;
    atomic_store_explicit(&lg->shm->durable_lsn, end, memory_order_release);
    /* The store sets store_deferred, then reads durable_lsn before it
     * sleeps; we store durable_lsn, then read store_deferred. Without a full
     * fence between the two, each side may see the other's old value: no
     * wake, and a deferred read waits out the store's idle timeout. (The
     * store's store_deferred write is seq_cst, a full barrier on x86.) */
    atomic_thread_fence(memory_order_seq_cst);
    if (store_must_know(lg, wants_store)) shm_wake(&lg->shm->store_wake);
    /* A frontend whose waits are all the store's (LPUSH, GET) is woken by
     * the store's reply, not by this flush (D85). The same fence orders
     * its durable_want as its sleeping flag: the frontend stores both,
     * fences, then re-reads durable_lsn. */
    for (uint32_t i = 0; i < lg->shm->nfrontends; i++)
        if (atomic_load_explicit(&lg->shm->fe[i].durable_want, memory_order_relaxed) <= end)
            shm_wake(&lg->shm->fe[i].wake);
    shm_wake(&lg->shm->repl_wake); /* the sender ships, the receiver acks (D33) */
}

static void on_sync_done(void *arg, uint64_t tag, int res)
{
    logger_t *lg = arg;
    sync_slot_t *s = &lg->slots[tag];
    /* Syncs in flight are all of the current segment (drain_syncs before
     * a switch), whose writes were made on lg->fd. */
    s->res = io->sync_end(lg->fd, s->token, res);
    s->done = 1;
}

/*
 * log-sync uring: hand queued syncs to the kernel and collect the ones that
 * completed, waiting up to timeout_ms (0: not at all, < 0: no limit) and,
 * with watch_wake, also for a producer's wake-up. durable_lsn then moves
 * over the completed prefix: the oldest syncs that returned 0. A failed one
 * is final even when later ones succeeded: nothing past it is acked, ever.
 * Returns 0, or -1 after fail_stop().
 */
static int reap_syncs(logger_t *lg, int timeout_ms, int watch_wake)
{
    int n = syncq_wait(lg->syncq, timeout_ms, watch_wake, on_sync_done, lg);
    if (n < 0) {
        /* io_uring itself failed: which syncs ran is unknown. */
        fail_stop(lg, "io_uring wait", -n);
        return -1;
    }
    uint64_t end = lg->durable;
    int wants_store = 0, moved = 0;
    while (lg->inflight && lg->slots[lg->slot_head].done) {
        sync_slot_t *s = &lg->slots[lg->slot_head];
        if (s->res != 0) {
            /* Published up to here, whatever completed after it. */
            if (moved) publish_durable(lg, end, wants_store);
            fail_stop_at(lg, "fdatasync", -s->res, s->start);
            return -1;
        }
        uint64_t now = shm_mono_ns();
        count_batch(lg, s->end - s->start, s->nrec, now - s->t0, now - s->t_sync);
        end = s->end;
        wants_store |= s->wants_store;
        moved = 1;
        lg->slot_head = (lg->slot_head + 1) % SYNCS_IN_FLIGHT;
        lg->inflight--;
    }
    if (moved) publish_durable(lg, end, wants_store);
    return 0;
}

/* Wait until no sync is in flight, and publish what they made durable.
 * Returns 0, or -1 after fail_stop(). */
static int drain_syncs(logger_t *lg)
{
    while (lg->syncq && lg->inflight)
        if (reap_syncs(lg, -1, 0) != 0) return -1;
    return 0;
}

/* log-sync uring: the batch [lg->pos, end) is written; start its
 * fdatasync and move the write position on without waiting for it. A free
 * slot exists (the caller checked). Returns 0, or -1 after fail_stop(). */
static int submit_sync(logger_t *lg, uint64_t end, uint64_t nrec, int wants_store, uint64_t t0)
{
    unsigned i = (lg->slot_head + lg->inflight) % SYNCS_IN_FLIGHT;
    sync_slot_t *s = &lg->slots[i];
    *s = (sync_slot_t){
        .start = lg->pos, .end = end, .nrec = nrec, .t0 = t0, .wants_store = wants_store};
    int e = io->sync_begin(lg->fd, &s->token);
    if (e) {
        fail_stop(lg, "fdatasync", e);
        return -1;
    }
    s->t_sync = shm_mono_ns();
    int rc = syncq_fdatasync(lg->syncq, lg->lanes[i], i);
    if (rc < 0) {
        fail_stop(lg, "fdatasync", -rc);
        return -1;
    }
    lg->inflight++;
    lg->pos = end;
    /* Submit now, not at the next wait: the device starts on this batch
     * while we look for the next one. */
    return reap_syncs(lg, 0, 0);
}

/* Write [from, end) of the ring to the log. A batch lies within one segment
 * (commit_batch ends it at the segment's end), so the only switch is at its
 * start, and the segment left behind was synced by the batch that filled
 * it. Returns 0, or -1 after fail_stop(). */
static int write_range(logger_t *lg, uint64_t from, uint64_t end)
{
    if (from == lg->seg_start + lg->cfg->segment_size) {
        /* The segment left behind is acked in full before we wait for the
         * next one (a full disk must not hold back what fits), and its
         * slots' files are closed only once their syncs are done. */
        if (drain_syncs(lg) != 0) return -1;
        if (switch_segment(lg, from) != 0) {
            fail_stop(lg, "creating a log segment", errno);
            return -1;
        }
    }
    if (write_span(lg, from, end) != 0) {
        fail_stop(lg, "write", errno);
        return -1;
    }
    return 0;
}

/* Wait, briefly, for the record at pos to be committed, when its space is
 * already claimed: its producer is copying it into the ring right now.
 * Returns 1 when it was committed within PIGGYBACK_SPIN_NS. */
static int wait_claimed(logger_t *lg, uint64_t pos)
{
    if (atomic_load_explicit(&lg->ring->head, memory_order_acquire) <= pos) return 0;
    uint64_t t0 = shm_mono_ns();
    do {
        if (rec_load_lsn(ring_ptr(lg->ring, pos)) == pos) return 1;
        cpu_relax();
    } while (shm_mono_ns() - t0 < PIGGYBACK_SPIN_NS);
    return 0;
}

/*
 * Make [lg->pos, *end) durable, and whatever else is committed by the time
 * the writes are done: records that arrive while we write ride along in the
 * same fdatasync for free ("piggyback", as PostgreSQL's XLogFlush does).
 * A record whose space is claimed but not yet committed is being copied by
 * its producer at this moment, so we wait a few microseconds for it rather
 * than leave it for the next fdatasync; we never wait for records that have
 * not been claimed (no sleeping to grow batches). On return *end is where
 * the batch ended. Returns 0, or -1 after fail_stop().
 */
static int commit_batch(logger_t *lg, uint64_t *end_io)
{
    uint64_t t0 = shm_mono_ns();
    /* The batch ends where the segment of lg->pos ends (no record straddles
     * it: segment ends are ring wraps). Whatever lies in that segment is
     * then synced and acked before the logger moves on, even when the next
     * segment is not ready: a full disk or a slow zero-fill holds back only
     * the records past it. */
    uint64_t seg_end = (lg->pos | (lg->cfg->segment_size - 1)) + 1;
    uint64_t end = *end_io < seg_end ? *end_io : seg_end;
    if (write_range(lg, lg->pos, end) != 0) return -1;
    for (int round = 0; round < PIGGYBACK_ROUNDS && end < seg_end; round++) {
        uint64_t more = ring_scan(lg->ring, end, BATCH_MAX);
        if (more == end && wait_claimed(lg, end)) more = ring_scan(lg->ring, end, BATCH_MAX);
        if (more > seg_end) more = seg_end;
        if (more == end) break;
        if (write_range(lg, end, more) != 0) return -1;
        end = more;
    }
    *end_io = end;
    if (end - lg->seg_start >= lg->cfg->segment_size / 2) prep_ahead(lg);
    /* Counted now: once durable_lsn moves, the store may apply and release
     * these records and producers may overwrite them. */
    int wants_store;
    uint64_t nrec = count_records(lg->ring, lg->pos, end, &wants_store);
    if (lg->syncq) return submit_sync(lg, end, nrec, wants_store, t0);
    uint64_t t_sync = shm_mono_ns(); /* issue 5: INFO's fsync latency percentiles */
    if (lg->direct_on) {
        if (direct_write(&lg->direct, lg->fd, lg->ring, lg->seg_start, lg->pos, end) != 0) {
            fail_stop(lg, "O_DIRECT|O_DSYNC write", errno);
            return -1;
        }
    } else if (sync_segment(lg) != 0) {
        fail_stop(lg, "fdatasync", errno);
        return -1;
    }
    uint64_t now = shm_mono_ns();
    count_batch(lg, end - lg->pos, nrec, now - t0, now - t_sync);
    lg->pos = end;
    publish_durable(lg, end, wants_store);
    return 0;
}

/*
 * Whether the segment the log continues in (at lg->pos) exists. A respawned
 * logger cannot assume it: its predecessor may have reached the segment's
 * start before its preparer had made it (a full disk, a slow zero-fill).
 * Sets lg->prep_next; returns 0, or an exit status.
 */
static int find_start_segment(logger_t *lg, uint64_t seg)
{
    int have = segfile_check(lg->cfg->dir, seg, lg->cfg->segment_size);
    if (have < 0) {
        log_warn("FATAL: log segment at LSN %" PRIu64 " is unusable: %s", seg, strerror(errno));
        return EXIT_FATAL;
    }
    if (!have && lg->pos != seg) {
        /* Records up to lg->pos were acked from it: making a new one would
         * hide their loss. */
        log_warn("FATAL: log segment at LSN %" PRIu64 " is gone, with acknowledged records up "
                 "to LSN %" PRIu64,
                 seg, lg->pos);
        return EXIT_FATAL;
    }
    if (!have) log_warn("Log segment at LSN %" PRIu64 " was never made: making it now", seg);
    lg->prep_next = have ? seg + lg->cfg->segment_size : seg;
    lg->prep_want = seg;
    return 0;
}

/* Sleep (the waiter is armed) until a producer wakes us, timeout_ms pass,
 * or, with log-sync uring, a sync in flight completes. Returns 0, or -1
 * after fail_stop(). */
static int logger_sleep(logger_t *lg, int timeout_ms)
{
    if (!lg->syncq) {
        shm_waiter_wait(&lg->shm->logger_wake, timeout_ms);
        return 0;
    }
    int rc = reap_syncs(lg, timeout_ms, 1);
    shm_waiter_disarm(&lg->shm->logger_wake);
    return rc;
}

/* Whether the segment at seg opens with O_DIRECT and takes 4 KiB-aligned
 * transfers (not every file system has it: tmpfs refuses with EINVAL; a
 * device with larger blocks would refuse the reads and writes); if not,
 * say so, and fdatasync. */
static int direct_supported(logger_t *lg, uint64_t seg)
{
    int fd = segfile_open(lg->cfg->dir, seg, O_DIRECT | O_DSYNC);
    if (fd < 0 && errno == ENOENT) return 1; /* made later by the preparer: try then */
    int ok = fd >= 0 && io_pread_all(fd, lg->direct.buf, DIRECT_BLOCK, 0) == 0;
    int err = errno;
    if (fd >= 0) io->close(fd);
    if (ok) return 1;
    log_warn("log-sync direct: can't read the log with O_DIRECT in 4 KiB blocks (%s); syncing "
             "with fdatasync",
             strerror(err));
    return 0;
}

static int logger_start(logger_t *lg)
{
    shm_t *shm = lg->shm;
    if (atomic_load(&shm->logger_state) == LOGGER_FAILED) {
        /* A predecessor failed a write or fdatasync and was killed before
         * it could exit with EXIT_IOFAIL, so the master took it for a crash.
         * Its failure stands: running would rewrite and sync the very bytes
         * whose fdatasync failed, and ack them (contract 6). Nothing is
         * written again until an operator restarts the server. */
        log_warn("Logger restarted after the log failed (%s): it stays stopped; restart the "
                 "server to recover from what is on disk",
                 strerror(atomic_load(&shm->logger_errno)));
        wake_all(lg); /* in case the predecessor died before it woke them */
        return EXIT_IOFAIL;
    }
    int starting = atomic_load(&shm->logger_state) == LOGGER_STARTING;
    /* A predecessor (or, after a crash of the whole server, a previous
     * server) may have died between renaming a new segment into place and
     * fsyncing the directory: the segment is there, but its name would not
     * survive a power cut. Make every name durable before acking anything
     * in it. */
    if (io_fsync_dir(lg->cfg->dir) != 0) {
        if (starting) {
            log_warn("FATAL: can't fsync the data directory %s: %s", lg->cfg->dir, strerror(errno));
            return EXIT_FATAL;
        }
        fail_stop(lg, "fsync of the data directory", errno);
        return EXIT_IOFAIL;
    }
    if (starting) {
        char err[512];
        uint64_t start, end;
        if (logger_recover(lg->cfg->dir, lg->cfg->segment_size, &start, &end, err, sizeof(err)) !=
            0) {
            log_warn("FATAL: log recovery failed: %s", err);
            return EXIT_FATAL;
        }
        ring_init(lg->ring, lg->cfg->ring_size, end);
        atomic_store(&shm->log_start_lsn, start);
        atomic_store(&shm->durable_lsn, end);
    } else {
        log_info("Logger restarted: continuing at durable LSN %" PRIu64,
                 atomic_load(&shm->durable_lsn));
    }
    lg->pos = atomic_load(&shm->durable_lsn);
    lg->durable = lg->pos;
    lg->fd = -1;
    uint64_t seg = lg->pos & ~(lg->cfg->segment_size - 1);
    int rc = find_start_segment(lg, seg);
    if (rc) return rc;
    if (pthread_create(&lg->prep_thread, NULL, prep_main, lg) != 0) {
        log_warn("FATAL: can't start the segment preparer thread");
        return EXIT_FATAL;
    }
    if (lg->cfg->log_sync == CONFIG_SYNC_DIRECT) {
        if (direct_init(&lg->direct) != 0) {
            log_warn("FATAL: no memory for log-sync direct's buffers");
            return EXIT_FATAL;
        }
        lg->direct_on = direct_supported(lg, seg);
    }
    if (lg->cfg->log_sync == CONFIG_SYNC_URING) {
        lg->syncq = syncq_open(SYNCS_IN_FLIGHT, shm->logger_wake.efd);
        if (!lg->syncq)
            log_warn("log-sync uring: io_uring is not available (%s); syncing one batch at a "
                     "time with fdatasync",
                     strerror(errno));
    }
    /* Waits for the preparer when the segment is still to be made; on a
     * full disk it sets log_no_space and tries again every second. */
    if (switch_segment(lg, seg) != 0) {
        log_warn("FATAL: can't open log segment at LSN %" PRIu64 ": %s", seg, strerror(errno));
        return EXIT_FATAL;
    }
    atomic_store(&shm->logger_state, LOGGER_RUNNING);
    return 0;
}

/*
 * logger-nice (D80): every durable write waits for this thread twice, when
 * its record arrives and when its flush returns; at the default priority it
 * waits for a CPU behind the frontends and clients it is about to ack. Only
 * this thread: the segment preparer, started before, keeps the default.
 * (setpriority on PRIO_PROCESS 0 is the calling thread's on Linux.)
 */
static void logger_priority(const config_t *cfg)
{
    if (cfg->logger_nice == 0 || setpriority(PRIO_PROCESS, 0, cfg->logger_nice) == 0) return;
    log_info("Logger: logger-nice %d refused (%s: needs CAP_SYS_NICE or RLIMIT_NICE); it runs at "
             "the default priority",
             cfg->logger_nice, strerror(errno));
}

int logger_main(shm_t *shm, const config_t *cfg)
{
    logger_t lg = {.shm = shm, .ring = shm_ring(shm), .cfg = cfg, .fd = -1};
    for (int i = 0; i < SYNCS_IN_FLIGHT; i++)
        lg.lanes[i] = -1;
    pthread_mutex_init(&lg.prep_lock, NULL);
    pthread_cond_init(&lg.prep_cond, NULL);
    int rc = logger_start(&lg);
    if (rc) return rc;
    logger_priority(cfg);
    atomic_store(&shm->logger_ready, 1);
    log_info("Logger ready: log at LSN %" PRIu64, lg.pos);

    uint64_t stuck_since = 0;
    for (;;) {
        if (lg.inflight && reap_syncs(&lg, 0, 0) != 0) return EXIT_IOFAIL;
        uint64_t end = ring_scan(lg.ring, lg.pos, BATCH_MAX);
        if (end > lg.pos) {
            if (lg.inflight == SYNCS_IN_FLIGHT) {
                /* Every slot busy: the batch waits for one, and grows. */
                if (reap_syncs(&lg, -1, 0) != 0) return EXIT_IOFAIL;
                continue;
            }
            if (commit_batch(&lg, &end) != 0) return EXIT_IOFAIL;
            stuck_since = 0;
            continue;
        }
        uint64_t head = atomic_load_explicit(&lg.ring->head, memory_order_acquire);
        if (head > lg.pos) {
            /* Claimed but not committed yet: normally a producer in the
             * middle of a memcpy. If it stays so, look for a dead owner. */
            uint64_t now = shm_mono_ns();
            if (!stuck_since) stuck_since = now;
            if (now - stuck_since > ABANDON_CHECK_NS) {
                int r = ring_reclaim_abandoned(lg.ring, shm->claimers, shm_nclaimers(shm), lg.pos);
                if (r < 0) {
                    log_warn("FATAL: cannot tell which dead frontend owned the ring claim at LSN "
                             "%" PRIu64,
                             lg.pos);
                    fail_stop(&lg, "abandoned-claim recovery", EIO);
                    return EXIT_IOFAIL;
                }
                if (r > 0) {
                    log_warn("Turned an abandoned ring claim at LSN %" PRIu64 " into padding",
                             lg.pos);
                    stuck_since = 0;
                    continue;
                }
            }
            /* Its producer wakes us when it commits (it may have been
             * preempted mid-copy); the timeout brings us back to look for
             * a dead owner. */
            shm_waiter_arm(&shm->logger_wake);
            if (ring_scan(lg.ring, lg.pos, REC_HDR_SIZE) > lg.pos) {
                shm_waiter_disarm(&shm->logger_wake);
                continue;
            }
            if (logger_sleep(&lg, 1) != 0) return EXIT_IOFAIL;
            continue;
        }
        stuck_since = 0;
        int nap_ms = 100;
        if (!lg.inflight) {
            if (atomic_load(&shm->shutdown) >= 2)
                break; /* frontends are gone: nothing more comes */
            if (!shm_master_alive(shm)) break;
            /* Idle: let the store catch up, but only once the log has
             * been idle for IDLE_STORE_WAKE_MS (D25): a lone writer's
             * next record comes sooner, and a store woken after each of
             * its batches costs a wake-up on the CPU its reply needs. */
            if (lg.store_told != lg.pos) {
                uint64_t now = shm_mono_ns();
                if (lg.idle_pos != lg.pos) {
                    lg.idle_pos = lg.pos;
                    lg.idle_since = now;
                }
                if (now - lg.idle_since >= IDLE_STORE_WAKE_MS * 1000000ull) {
                    shm_wake(&shm->store_wake);
                    lg.store_told = lg.pos;
                } else {
                    nap_ms = IDLE_STORE_WAKE_MS;
                }
            }
        }
        shm_waiter_arm(&shm->logger_wake);
        if (ring_scan(lg.ring, lg.pos, REC_HDR_SIZE) > lg.pos ||
            atomic_load(&lg.ring->head) > lg.pos) {
            shm_waiter_disarm(&shm->logger_wake);
            continue;
        }
        if (logger_sleep(&lg, nap_ms) != 0) return EXIT_IOFAIL;
    }
    pthread_mutex_lock(&lg.prep_lock);
    lg.prep_stop = 1;
    pthread_cond_broadcast(&lg.prep_cond);
    pthread_mutex_unlock(&lg.prep_lock);
    pthread_join(lg.prep_thread, NULL);
    close_lanes(&lg);
    syncq_close(lg.syncq);
    direct_free(&lg.direct);
    if (lg.fd >= 0) io->close(lg.fd);
    atomic_store(&shm->logger_state, LOGGER_STOPPED);
    log_info("Logger stopped at durable LSN %" PRIu64, lg.pos);
    return 0;
}
