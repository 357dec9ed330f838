/*
 * ring.c - the multi-producer, single-consumer ring of log records (ring.h).
 *
 * Who runs it: frontends claim and commit (producers, many processes at
 * once); the logger scans and reclaims abandoned claims (the one consumer);
 * the store releases space it has applied (ring_release). The ring lives in
 * MAP_SHARED memory created by the master before fork, so everything here is
 * lock-free and uses C11 atomics on shared words; no process may block
 * another one.
 *
 * Invariants:
 *   - head and tail only grow; tail <= the logger's position <= head, and
 *     head - tail <= size, so a claim never overwrites bytes not yet released.
 *   - Every position in [tail, head) belongs to exactly one claim. A claim is
 *     [pos, pos + len) and is announced in its claimer slot before the CAS on
 *     head that makes it real; a claim that would cross the end of the data
 *     area starts with `skip` bytes of REC_PAD up to the wrap, and its record
 *     starts at the wrap. No record straddles the end of the data area.
 *   - The lsn word of a record at p equals p only once the record is whole
 *     (rec_publish is a release store, read with acquire). Before the first
 *     lap every 32-byte slot's lsn word holds RING_NO_LSN, and ring_release()
 *     rewrites the slots it frees to RING_NO_LSN, so neither zeros nor stale
 *     bytes of an earlier lap (client payload included: a client could
 *     otherwise plant a forged "committed" header) can look committed.
 *   - tail <= releasing <= head, and every record at or above releasing is
 *     intact. Release is two-phase: publish releasing = pos, invalidate
 *     [tail, pos), then move tail. A releaser killed at any instruction in
 *     between leaves [tail, releasing) possibly destroyed but declared so;
 *     its successor reads those records from the log (they are durable and
 *     were applied) and repeats the release. This costs one store per
 *     release and no special case anywhere else (docs/DECISIONS.md, D18).
 *
 * What a crash means: a producer that dies between claim and commit leaves an
 * uncommitted claim that stops the consumer; the master marks its claimer
 * owner_dead and the logger pads the claim (ring_reclaim_abandoned), so no
 * acknowledged record is lost and nothing blocks for long (contract 5). A
 * consumer that dies loses nothing: its position is durable_lsn, and the
 * records from there on are still in the ring. A releaser (the store) that
 * dies loses nothing either: see `releasing` above.
 *
 * Memory orders, in one place (each use repeats the reason briefly):
 *   - announcement stores, the head CAS and the reclaimer's reads of the
 *     claimer slots are seq_cst: the reclaimer must be able to conclude
 *     "this slot's owner is dead and this is its last announcement" from
 *     reads of several words written by different processes (the producer,
 *     the master setting owner_dead, a successor resetting the slot); one
 *     total order keeps that argument simple, and a claim is paid for with an
 *     fdatasync anyway, so a few fenced stores cost nothing measurable.
 *   - tail is loaded with acquire by producers and stored with release by
 *     ring_release: the consumer's reads of old bytes must happen before a
 *     producer overwrites them.
 *   - head is loaded with acquire by the consumer: the announcement of every
 *     claim below head is then visible (the CAS is a release).
 *   - the commit marker (record's lsn word) is release/acquire: see record.c.
 */
#include "ring.h"

#include <errno.h>
#include <stdint.h>
#include <signal.h>
#include <string.h>

#include "io_fault.h"
#include "record.h"

/* Never a position: positions are multiples of REC_ALIGN. */
#define RING_NO_LSN UINT64_MAX

size_t ring_shm_size(uint64_t size)
{
    if (size > SIZE_MAX - sizeof(ring_t)) return SIZE_MAX;
    return sizeof(ring_t) + (size_t)size;
}

/* Mark every slot of [from, to) (ring positions, REC_ALIGN aligned) as "no
 * record here", so a later claim's lsn word cannot look committed early. */
static void ring_invalidate(ring_t *r, uint64_t from, uint64_t to)
{
    for (uint64_t p = from; p < to; p += REC_ALIGN)
        atomic_store_explicit((_Atomic uint64_t *)ring_ptr(r, p), RING_NO_LSN,
                              memory_order_relaxed);
}

void ring_init(ring_t *r, uint64_t size, uint64_t start)
{
    r->size = size;
    r->mask = size - 1;
    ring_invalidate(r, start, start + size);
    atomic_store_explicit(&r->tail, start, memory_order_relaxed);
    atomic_store_explicit(&r->releasing, start, memory_order_relaxed);
    /* Release: a process that sees this head also sees the slots above. */
    atomic_store_explicit(&r->head, start, memory_order_release);
}

uint64_t ring_max_record(const ring_t *r)
{
    return r->size / 4;
}

int ring_claim(ring_t *r, ring_claimer_t *c, uint32_t space, uint64_t *pos)
{
    if (space < REC_HDR_SIZE || space % REC_ALIGN) return -EINVAL;
    /* The second test keeps skip + space (< 2 * space) inside the u32 len. */
    if (space > ring_max_record(r) || space > UINT32_MAX / 2) return -EMSGSIZE;

    /* Relaxed is enough: the CAS below checks the value and reloads it. */
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    int announced = 0;
    uint64_t skip;
    for (;;) {
        uint64_t off = head & r->mask;
        skip = off + space > r->size ? r->size - off : 0;
        uint64_t total = skip + space;
        /* Acquire: pairs with ring_release(), so the consumer's reads of the
         * bytes we are about to reuse are finished. A stale (smaller) tail
         * only makes us more careful. */
        uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (tail > head) {
            /* Our head is older than the tail we just read: refresh it. */
            head = atomic_load_explicit(&r->head, memory_order_relaxed);
            continue;
        }
        if (head + total - tail > r->size) {
            if (announced) atomic_store_explicit(&c->state, RING_IDLE, memory_order_seq_cst);
            return -EAGAIN;
        }
        if (announced) {
            /* Retract the old announcement before rewriting its fields: a
             * death half way through must not leave a mix of two claims. */
            atomic_store_explicit(&c->state, RING_IDLE, memory_order_seq_cst);
        }
        /* Announce before the CAS (seq_cst): whoever sees head past pos can
         * find who claimed it, even if we die right after the CAS. */
        atomic_store_explicit(&c->pos, head, memory_order_seq_cst);
        atomic_store_explicit(&c->len, (uint32_t)total, memory_order_seq_cst);
        atomic_store_explicit(&c->skip, (uint32_t)skip, memory_order_seq_cst);
        atomic_store_explicit(&c->state, RING_CLAIMING, memory_order_seq_cst);
        announced = 1;
        if (atomic_compare_exchange_weak_explicit(&r->head, &head, head + total,
                                                  memory_order_seq_cst, memory_order_relaxed))
            break;
        /* Lost the race (or a spurious failure): head now holds the winner's
         * end; try again from there. */
    }
    /* From here the claim is ours; say so, so a reclaimer need not guess. */
    atomic_store_explicit(&c->state, RING_CLAIMED, memory_order_seq_cst);
    if (skip) rec_write_pad(ring_ptr(r, head), head, (uint32_t)skip);
    *pos = head + skip;
    return 0;
}

int ring_claim_at(ring_t *r, ring_claimer_t *c, uint32_t space, uint64_t pos)
{
    if (space < REC_HDR_SIZE || space % REC_ALIGN || pos % REC_ALIGN) return -EINVAL;
    if (space > ring_max_record(r) || space > UINT32_MAX / 2) return -EMSGSIZE;
    if ((pos & r->mask) + space > r->size) return -ERANGE;
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (head != pos) return -ESPIPE;
    /* Acquire: as in ring_claim, the consumer is done with what we reuse. */
    if (head + space - atomic_load_explicit(&r->tail, memory_order_acquire) > r->size)
        return -EAGAIN;
    /* Announced before the CAS, as ring_claim does, so a death after it
     * leaves a claim the logger can pad (contract 5). */
    atomic_store_explicit(&c->pos, pos, memory_order_seq_cst);
    atomic_store_explicit(&c->len, space, memory_order_seq_cst);
    atomic_store_explicit(&c->skip, 0, memory_order_seq_cst);
    atomic_store_explicit(&c->state, RING_CLAIMING, memory_order_seq_cst);
    if (!atomic_compare_exchange_strong_explicit(&r->head, &head, pos + space, memory_order_seq_cst,
                                                 memory_order_relaxed)) {
        atomic_store_explicit(&c->state, RING_IDLE, memory_order_seq_cst);
        return -ESPIPE; /* another claimer got there first */
    }
    atomic_store_explicit(&c->state, RING_CLAIMED, memory_order_seq_cst);
    return 0;
}

void ring_commit(ring_t *r, ring_claimer_t *c, uint64_t pos)
{
    /* The record first, then the slot: a producer dying between the two
     * leaves a committed record and a stale CLAIMED slot, which is harmless
     * (the consumer never reclaims a committed record). The other order
     * would leave an uncommitted claim nobody owns. Release keeps the order. */
    rec_publish(ring_ptr(r, pos), pos);
    atomic_store_explicit(&c->state, RING_IDLE, memory_order_release);
}

/*
 * Space of the committed record at pos, or 0 when it is not committed yet.
 * *bad is set when the record is committed but its header cannot be right
 * (a producer bug): the consumer must not walk past it.
 */
static uint64_t committed_space(const ring_t *r, uint64_t pos, uint64_t head, int *bad)
{
    const void *p = ring_ptr(r, pos);
    /* Acquire: pairs with rec_publish(); the header and payload written
     * before it are visible once we see lsn == pos. */
    if (rec_load_lsn(p) != pos) return 0;
    uint32_t len = ((const rec_hdr_t *)p)->len;
    uint64_t space = len >= REC_HDR_SIZE ? rec_space(len - REC_HDR_SIZE) : 0;
    if (space < len || space > r->size - (pos & r->mask) || pos + space > head) {
        *bad = 1;
        return 0;
    }
    return space;
}

/*
 * Records are taken whole: the first committed record is always included,
 * even when it alone is larger than max_bytes (a batch bound, not a buffer
 * size), so the consumer always makes progress; later records are included
 * only while the run stays within max_bytes of `from`.
 */
uint64_t ring_scan(const ring_t *r, uint64_t from, uint64_t max_bytes)
{
    /* head bounds the walk: nothing at or above it is claimed, whatever its
     * bytes say. Each record's own marker is what orders its contents; the
     * acquire here only makes the bound at least as new as the claims the
     * caller may go on to inspect (ring_reclaim_abandoned). */
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t pos = from;
    int bad = 0;
    while (pos < head) {
        uint64_t space = committed_space(r, pos, head, &bad);
        if (!space) break;
        if (pos > from && pos + space - from > max_bytes) break;
        pos += space;
    }
    return pos;
}

void ring_release(ring_t *r, uint64_t pos)
{
    /* Never free what was not claimed: that space may be written right now. */
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    if (pos > head) pos = head;
    /* Only one process (the store) releases, so nobody else moves tail or
     * releasing between our loads and our stores. */
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    if (pos <= tail) return;
    /* Phase 1: declare [tail, pos) lost to the ring before touching it, so
     * a successor of a releaser killed below knows to read it from the log.
     * The fence keeps this store ahead of the invalidation's. */
    if (pos > atomic_load_explicit(&r->releasing, memory_order_relaxed))
        atomic_store_explicit(&r->releasing, pos, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    if (io_fault_point(IO_FAULT_RELEASING)) raise(SIGKILL); /* tests: io_fault.h */
    /* Phase 2: invalidate before publishing the new tail: once producers
     * see it they may claim this space, and its old bytes must not look
     * like a committed record of the next lap. */
    ring_invalidate(r, tail, pos);
    if (io_fault_point(IO_FAULT_RELEASE)) raise(SIGKILL);
    /* Release: our reads of these bytes, and the invalidation, happen
     * before any producer's overwrite (it loads tail with acquire). */
    atomic_store_explicit(&r->tail, pos, memory_order_release);
}

uint64_t ring_released(const ring_t *r)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    uint64_t releasing = atomic_load_explicit(&r->releasing, memory_order_acquire);
    return releasing > tail ? releasing : tail;
}

/* One consistent reading of a claimer slot. */
typedef struct claim_view {
    uint32_t state;
    uint64_t pos;
    uint32_t len;
    uint32_t skip;
} claim_view_t;

static claim_view_t claim_read(ring_claimer_t *c)
{
    claim_view_t v;
    v.state = atomic_load_explicit(&c->state, memory_order_seq_cst);
    v.pos = atomic_load_explicit(&c->pos, memory_order_seq_cst);
    v.len = atomic_load_explicit(&c->len, memory_order_seq_cst);
    v.skip = atomic_load_explicit(&c->skip, memory_order_seq_cst);
    return v;
}

static int claim_same(const claim_view_t *a, const claim_view_t *b)
{
    return a->state == b->state && a->pos == b->pos && a->len == b->len && a->skip == b->skip;
}

/* Cover [from, to) with REC_PAD records, one per lap piece. The later piece
 * is written first so that once the first is visible the range is whole. */
static void ring_pad(ring_t *r, uint64_t from, uint64_t to)
{
    uint64_t lap_end = (from | r->mask) + 1;
    if (to > lap_end) {
        rec_write_pad(ring_ptr(r, lap_end), lap_end, (uint32_t)(to - lap_end));
        to = lap_end;
    }
    rec_write_pad(ring_ptr(r, from), from, (uint32_t)(to - from));
}

/*
 * A slot is a candidate owner of the stuck position pos when its claim is
 * announced (state != IDLE) and either starts at pos, or starts with a wrap
 * pad and its record starts at pos (the pad was written and consumed, the
 * record was not). Decision rules:
 *   - any live candidate: wait (return 0); it may still commit;
 *   - a dead RING_CLAIMED candidate won its CAS: its extent is the truth;
 *   - dead RING_CLAIMING candidates may have won (died between CAS and the
 *     CLAIMED store) or lost (died before retrying). One whose claim ends
 *     beyond head cannot have won and is ignored. If the rest agree on the
 *     end of the claim, that is the claim; if they disagree, we cannot tell
 *     (-1: fail-stop, recovery from the log decides);
 *   - no candidate: someone alive is between its announcement and our reads
 *     or already committed: wait.
 * The slot's owner_dead is read after its claim fields (seq_cst), and the
 * fields are read again after it: a successor resets owner_dead before it
 * announces, so a dead flag seen between two equal readings belongs to the
 * owner of exactly that announcement, which can no longer change it.
 */
int ring_reclaim_abandoned(ring_t *r, ring_claimer_t *claimers, int nclaimers, uint64_t pos)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_seq_cst);
    if (pos >= head) return 0; /* nothing claimed here yet */
    int bad = 0;
    if (committed_space(r, pos, head, &bad)) return 0;
    if (bad) return -1; /* committed but malformed: no padding can fix that */

    uint64_t claimed_end = 0, claiming_end = 0;
    int disagree = 0;
    for (int i = 0; i < nclaimers; i++) {
        ring_claimer_t *c = &claimers[i];
        claim_view_t v = claim_read(c);
        if (v.state == RING_IDLE) continue;
        if (v.pos != pos && !(v.skip && v.pos + v.skip == pos)) continue;
        uint32_t dead = atomic_load_explicit(&c->owner_dead, memory_order_seq_cst);
        claim_view_t again = claim_read(c);
        if (!dead || !claim_same(&v, &again)) return 0; /* alive, or still moving */
        uint64_t end = v.pos + v.len;
        if (v.state == RING_CLAIMED) {
            if (claimed_end && claimed_end != end) return -1; /* two owners: impossible */
            claimed_end = end;
        } else {
            if (end > head) continue; /* its CAS never happened */
            if (claiming_end && claiming_end != end) disagree = 1;
            claiming_end = end;
        }
    }
    uint64_t end = claimed_end;
    if (!end) {
        if (disagree) return -1;
        end = claiming_end;
    }
    if (!end) return 0;
    /* A claim that does not fit what we know is not one we should pad. */
    if (end <= pos || end > head || end - pos >= r->size || (end - pos) % REC_ALIGN) return -1;
    /* The owner is dead, so it cannot commit now; but a live claimer we read
     * as idle might have committed this position just before: look again. */
    if (rec_load_lsn(ring_ptr(r, pos)) == pos) return 0;
    ring_pad(r, pos, end);
    return 1;
}

/*
 * The predecessor's claim [pos, pos + len) is pending unless the consumer
 * passed its end. `consumed` is a record boundary (durable_lsn), and the
 * only boundaries inside a claim are pos and, for a wrapping claim, pos +
 * skip. So for a RING_CLAIMING slot (which may have lost its CAS and then
 * own nothing) consumed > pos already proves the claim passed unless
 * consumed == pos + skip, where the consumer may be waiting at our record.
 * Resetting too early would hide a dead claim from the reclaimer and stop
 * the logger for good; waiting is the safe side.
 */
int ring_claimer_adopt(ring_claimer_t *c, uint64_t consumed)
{
    claim_view_t v = claim_read(c);
    int ready = 0;
    if (v.state == RING_IDLE || consumed >= v.pos + v.len)
        ready = 1;
    else if (v.state == RING_CLAIMING && consumed > v.pos && consumed != v.pos + v.skip)
        ready = 1;
    if (!ready) return 0;
    /* Idle first, then alive: a reclaimer reading owner_dead == 0 after our
     * next announcement must never pair it with the old claim, and one that
     * reads the old claim now finds it idle. */
    atomic_store_explicit(&c->state, RING_IDLE, memory_order_seq_cst);
    atomic_store_explicit(&c->owner_dead, 0, memory_order_seq_cst);
    return 1;
}
