/*
 * compact.h - reclaiming log space (store/compact.c): the live-bytes table
 * checked against a recount (tests, DEBUG SEGMENTS), and deleting the log
 * segments at the log's start that nothing can need any more (D27).
 */
#ifndef ATTIC_STORE_COMPACT_H
#define ATTIC_STORE_COMPACT_H

#include <stdatomic.h>
#include <stdint.h>

#include "buf.h"
#include "checkpoint.h"
#include "store-internal.h"

/* 1 when ctx's live-bytes table equals a recount from every entry. */
int store_live_verify(store_ctx_t *ctx);
/* Log bytes the entries refer to, all segments. */
uint64_t store_live_total(const store_ctx_t *ctx);
/* Live bytes of the segment starting at seg_start. */
uint64_t store_live_segment(const store_ctx_t *ctx, uint64_t seg_start);
/* DEBUG SEGMENTS' reply: an array of integers: 1 when the table equals a
 * recount (else 0), the total, then (segment start, live bytes) for every
 * segment with live bytes, lowest first. */
void store_live_reply(store_ctx_t *ctx, buf_t *r);

struct idx_entry;
struct repl_shm;

/* What the deleter keeps between calls. */
#define STORE_COMPACT_KNOWN 8
typedef struct store_compact {
    const char *dir;
    uint64_t segment_size;
    uint64_t log_start; /* start of the first segment present */
    /* Lowest references of checkpoints, learnt when written or loaded or
     * read from their files: (LSN, lowest reference). */
    struct {
        uint64_t lsn, min_ref;
    } known[STORE_COMPACT_KNOWN];
    unsigned nknown, next_known;
    uint64_t deleted;      /* segments deleted by this process */
    uint64_t seen_written; /* sched->written at the last pass */
    /* Relocation (store_compact_relocate): a pass over every database
     * moving each extent below `below` to the log's head. */
    double target; /* space-amplification-target; 0 = no relocation */
    int pass;      /* a pass is in progress */
    uint64_t below;
    int db;
    uint64_t cursor;
    int adopted; /* the store's ring claimer is ours */
    unsigned char *buf;
    size_t buf_cap;
    uint64_t last_low, last_applied; /* at the last pass's start */
    uint64_t space_written;          /* ring bytes of relocation records, ever */
    /* Collections a pass meets (their pages are the pager's to move:
     * store/pager.c); NULL: none told. */
    void (*note)(void *arg, unsigned db, struct idx_entry *e);
    void *note_arg;
    uint64_t relocated, relocated_bytes, passes; /* counts, for the log and tests */
    /* The replicas' part (D67): the shared table the backlog and the
     * replicas' positions are read from, and where the log's start is
     * published (NULL: no replication, as in unit tests). held: the last
     * pass deleted less because of it (store_compact_released). */
    struct repl_shm *repl;
    _Atomic uint64_t *durable;
    _Atomic uint64_t *log_start_pub;
    int held;
} store_compact_t;

void store_compact_init(store_compact_t *c, const char *dir, uint64_t segment_size,
                        uint64_t log_start);
/* Just restored ctx from the checkpoint at from (when from is above the
 * log's start): note its lowest reference, which the load checked. */
void store_compact_restored(store_compact_t *c, store_ctx_t *ctx, uint64_t from);
/* The checkpoint at lsn refers to nothing below min_ref. */
void store_compact_note(store_compact_t *c, uint64_t lsn, uint64_t min_ref);
/*
 * Delete, lowest first, every segment at the log's start that lies wholly
 * below (a) the oldest kept checkpoint's LSN, (b) the lowest LSN any kept
 * checkpoint, or the one being written by sched's child, refers to, and (c)
 * the lowest LSN the live state refers to; each unlink is followed by a
 * directory fsync, so the segments present stay contiguous whatever the
 * crash. Nothing is deleted without a checkpoint, or after the live table
 * broke. Returns the number deleted (c->log_start moved past them), or -1
 * on an I/O error (logged; tried again at the next call).
 */
int store_compact_delete(store_compact_t *c, store_ctx_t *ctx, const store_ckpt_sched_t *sched);
/*
 * With c->repl set, store_compact_delete also keeps (D67): while the
 * backlog is active, every segment holding any of the last
 * repl-backlog-size bytes below durable; and the record ending at
 * repl->keep_lsn (the replicas' lowest resume point). It publishes the
 * bound it is about to delete below in repl->deleting_below before it
 * reads keep_lsn, and clears it once the new start is in *log_start_pub.
 * store_compact_released: 1 when the last pass was held back by the
 * replicas and what they hold now would let a segment go (durable is the
 * log's durable LSN): a pass is worth running before the next checkpoint.
 */
int store_compact_released(const store_compact_t *c, uint64_t durable);

/*
 * Relocation (D27): while the log the live state spans (from its lowest
 * reference to the applied LSN) is more than c->target times the live
 * bytes, move every value that is one extent below a line (the applied LSN
 * minus target x live, at least the lowest live segment's end) to the
 * log's head: a CMD_RELOCATE record (key, value, old LSN) claimed through
 * the store's own claimer and committed to the ring like a frontend's.
 * Never waits: a full ring, a logger that is not running or a claimer still
 * held by a dead predecessor's claim stops the step until the next call.
 * At most about `budget` value bytes per call. Returns the bytes relocated.
 */
struct shm;
/* 1 when the store's ring claimer may claim now: the logger runs and the
 * claimer was adopted from a dead predecessor (ring_claimer_adopt).
 * Relocation and eviction (store/evict.c) write through it. */
int store_compact_claimer_ready(store_compact_t *c, struct shm *shm);
uint64_t store_compact_relocate(store_compact_t *c, store_ctx_t *ctx, struct shm *shm,
                                uint64_t budget);
/* Free what c holds. */
void store_compact_free(store_compact_t *c);

/* Values larger than one record (D31): write a CMD_BIGABORT for every
 * pending group whose writing frontend is gone (its slot has another pid
 * or none), through the store's ring claimer; applying it, live and on
 * replay, drops the parts and their live bytes. Returns how many were
 * written (0 when the ring is full or the log stopped: tried again). */
int store_abort_orphans(store_compact_t *c, store_ctx_t *ctx, struct shm *shm);

#endif
