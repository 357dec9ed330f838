/*
 * ring.h - the one multi-producer, single-consumer ring of log records, in
 * shared memory.
 *
 * Positions are 64-bit and only grow; a position is also the LSN of the record
 * claimed there (record.h). Producers (frontends) claim space with a CAS on
 * `head`, fill the record, and commit by release-storing its lsn. The logger
 * is the single consumer: it scans committed records from its position on.
 * `tail` is the position below which space may be reused; it is the store's
 * applied LSN, because the store reads durable records out of the ring.
 * `releasing` is the tail a release is moving to, published before the
 * release destroys anything, so a releaser killed half way is resumable.
 *
 * No record straddles the end of the data area: a claim that would wrap first
 * fills the rest of the lap with a REC_PAD record. With the segment size a
 * multiple of the ring size, no record straddles a segment boundary either.
 *
 * Crash safety (ARCHITECTURE.md, contract 5): every producer announces its
 * claim in its own ring_claimer_t before the CAS. If a producer dies between
 * claim and commit, the consumer finds the uncommitted position, sees that the
 * claimer that announced it is marked dead (the master sets owner_dead when it
 * reaps the process) and turns the claim into padding with
 * ring_reclaim_abandoned().
 */
#ifndef ATTIC_RING_H
#define ATTIC_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum ring_claim_state {
    RING_IDLE = 0,     /* no claim in progress */
    RING_CLAIMING = 1, /* pos/len announced, CAS not known to have won */
    RING_CLAIMED = 2,  /* CAS won: [pos, pos + len) belongs to this claimer */
};

typedef struct ring_claimer {
    _Atomic uint64_t pos;        /* start of the claim (including any wrap pad) */
    _Atomic uint32_t len;        /* total bytes of the claim */
    _Atomic uint32_t state;      /* enum ring_claim_state */
    _Atomic uint32_t owner_dead; /* set by the master after reaping the owner */
    /* Private to ring.c: wrap padding at the start of the claim, so the
     * record itself starts at pos + skip (0 when the claim does not wrap).
     * Lets ring_claimer_adopt() tell "consumer waits at our record" apart
     * from "consumer is past our claim" without knowing the ring size. */
    _Atomic uint32_t skip;
} ring_claimer_t;

typedef struct ring {
    uint64_t size; /* bytes of data, a power of two */
    uint64_t mask;
    _Alignas(64) _Atomic uint64_t head; /* next position to claim */
    _Alignas(64) _Atomic uint64_t tail; /* space below this may be reused */
    _Atomic uint64_t releasing;         /* >= tail: see ring_released() */
    _Alignas(64) unsigned char data[];
} ring_t;

/* Bytes of shared memory for a ring of `size` data bytes; SIZE_MAX when that
 * does not fit in a size_t (shm_size then refuses the segment). */
size_t ring_shm_size(uint64_t size);

/* Initialise a ring in zeroed memory; head = tail = start (REC_ALIGN aligned). */
void ring_init(ring_t *r, uint64_t size, uint64_t start);

/* Largest record space (rec_space()) a claim may ask for: a quarter of the ring. */
uint64_t ring_max_record(const ring_t *r);

/*
 * Claim `space` bytes (a multiple of REC_ALIGN) for one record.
 * On success returns 0 and sets *pos to the record's position (its LSN);
 * write the record at ring_ptr(r, *pos), then ring_commit().
 * Returns -EAGAIN when the ring lacks space (back-pressure: retry later, never
 * overwrite), -EMSGSIZE when space > ring_max_record(), -EINVAL when space is
 * not a multiple of REC_ALIGN or is less than REC_HDR_SIZE.
 */
int ring_claim(ring_t *r, ring_claimer_t *c, uint32_t space, uint64_t *pos);

/*
 * Claim `space` bytes exactly at `pos`, never padding: a replica's receiver
 * puts each of its leader's records (pads included) at the leader's LSN
 * (docs/DECISIONS.md D33). Returns 0 when the claim is made (write, then
 * ring_commit at pos); -EAGAIN when the ring lacks space (retry later);
 * -ESPIPE when head is not pos (someone else claimed there, or the
 * receiver's position is wrong: the LSN spaces differ); -ERANGE when the
 * record would cross the ring's end (this ring is smaller than the one the
 * record was laid out in); -EMSGSIZE and -EINVAL as ring_claim.
 */
int ring_claim_at(ring_t *r, ring_claimer_t *c, uint32_t space, uint64_t pos);

/* Address of position pos in the data area. */
static inline void *ring_ptr(const ring_t *r, uint64_t pos)
{
    return (void *)(r->data + (pos & r->mask));
}

/* Publish the record at pos (it must be fully written) and clear the claim. */
void ring_commit(ring_t *r, ring_claimer_t *c, uint64_t pos);

/*
 * Consumer: from `from`, walk committed records without passing `max_bytes`
 * beyond it or the head; return the end position of the contiguous committed
 * run (== from when the record at `from` is not committed yet). The record at
 * `from`, once committed, is always included even if larger than max_bytes,
 * so the consumer always makes progress.
 */
uint64_t ring_scan(const ring_t *r, uint64_t from, uint64_t max_bytes);

/* Let producers reuse space below pos (monotonic; smaller values ignored).
 * Only one process may release (the store): it publishes `releasing`, then
 * rewrites the freed slots' commit markers, then moves tail, and none of
 * that may race another releaser. */
void ring_release(ring_t *r, uint64_t pos);

/*
 * Where a new incarnation of the releaser resumes: records below it were
 * released (and may be gone from the ring, even if tail is lower: the last
 * releaser died inside ring_release), records from it on are untouched.
 * Equal to tail unless a release was cut short; ring_release(r,
 * ring_released(r)) finishes that release.
 */
uint64_t ring_released(const ring_t *r);

/*
 * Consumer: the record at `pos` is not committed. If a claimer marked dead
 * owns it, overwrite that claim with REC_PAD records and return 1. Return 0
 * when no dead owner is found (someone alive is still writing: wait), and -1
 * when two dead claimers announced pos with different lengths and ownership
 * cannot be decided, or when the record at pos is committed but malformed
 * (the caller fail-stops; recovery from the log decides).
 */
int ring_reclaim_abandoned(ring_t *r, ring_claimer_t *claimers, int nclaimers, uint64_t pos);

/*
 * A new owner of claimer c, before its first claim: wait until nothing of a
 * dead predecessor's claim is pending (the consumer position `consumed` has
 * passed it), then reset c. Returns 1 when c is ready, 0 when still pending.
 */
int ring_claimer_adopt(ring_claimer_t *c, uint64_t consumed);

#endif
