/*
 * test_ring.c - unit tests of the record ring (common/ring.c).
 *
 * Single-process tests drive the claim protocol step by step, including the
 * states a producer can die in; the multi-process tests fork real producers
 * on MAP_SHARED memory, as the server does, and one of them is SIGKILLed
 * while it holds a claim. Every test is bounded in time and reaps its
 * children.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io_fault.h"
#include "record.h"
#include "ring.h"

#define NCLAIMERS 4

/* Shared memory for a ring and its claimer slots, as shm.c lays it out. */
typedef struct fixture {
    ring_t *ring;
    ring_claimer_t *claimers;
    size_t ring_bytes;
} fixture_t;

static fixture_t fixture_new(uint64_t size, uint64_t start)
{
    fixture_t f;
    f.ring_bytes = ring_shm_size(size);
    void *m = mmap(NULL, f.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(m, MAP_FAILED);
    void *c = mmap(NULL, sizeof(ring_claimer_t) * NCLAIMERS, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(c, MAP_FAILED);
    f.ring = m;
    f.claimers = c;
    ring_init(f.ring, size, start);
    return f;
}

static void fixture_free(fixture_t *f)
{
    munmap(f->ring, f->ring_bytes);
    munmap(f->claimers, sizeof(ring_claimer_t) * NCLAIMERS);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* In a forked child: die with the test process, whatever way it ends, so a
 * failed assertion never leaves producers spinning on a full ring. */
static void child_guard(pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(99);
}

/* ---- test records: (producer id, sequence number, derived payload) ---- */

static uint32_t body_len(uint32_t id, uint32_t seq)
{
    return (seq * 7u + id * 13u) % 300u;
}

static unsigned char body_byte(uint32_t id, uint32_t seq, uint32_t i)
{
    return (unsigned char)(id * 31u + seq * 17u + i);
}

static uint32_t test_space(uint32_t id, uint32_t seq)
{
    uint32_t lens[3] = {4, 4, body_len(id, seq)};
    return rec_space((uint32_t)rec_cmd_payload_size(3, lens));
}

static void encode_test(void *dst, uint64_t lsn, uint32_t id, uint32_t seq)
{
    unsigned char body[300];
    uint32_t n = body_len(id, seq);
    for (uint32_t i = 0; i < n; i++)
        body[i] = body_byte(id, seq, i);
    const unsigned char *argv[3] = {(const unsigned char *)&id, (const unsigned char *)&seq, body};
    uint32_t lens[3] = {4, 4, n};
    rec_encode_cmd(dst, lsn, (uint16_t)(id + 1), 12345, 7, 3, argv, lens);
}

/* Decode and verify a test record; returns 0 and sets *id, *seq when good. */
static int decode_test(const void *rec, uint32_t *id, uint32_t *seq)
{
    uint16_t cmd, argc;
    rec_arg_t a[3];
    if (rec_decode_cmd(rec, &cmd, &argc, a, 3) != 0 || cmd != 7 || argc != 3) return -1;
    if (a[0].len != 4 || a[1].len != 4) return -1;
    memcpy(id, a[0].ptr, 4);
    memcpy(seq, a[1].ptr, 4);
    if (a[2].len != body_len(*id, *seq)) return -1;
    for (uint32_t i = 0; i < a[2].len; i++)
        if (a[2].ptr[i] != body_byte(*id, *seq, i)) return -1;
    return 0;
}

/* Claim, retrying while the ring is full (the consumer runs elsewhere). */
static uint64_t claim_retry(ring_t *r, ring_claimer_t *c, uint32_t space)
{
    uint64_t pos;
    int rc;
    while ((rc = ring_claim(r, c, space, &pos)) == -EAGAIN)
        sched_yield();
    if (rc != 0) _exit(100 + (-rc & 0x3f));
    return pos;
}

static void produce(ring_t *r, ring_claimer_t *c, uint32_t id, uint32_t seq)
{
    uint64_t pos = claim_retry(r, c, test_space(id, seq));
    encode_test(ring_ptr(r, pos), pos, id, seq);
    ring_commit(r, c, pos);
}

/* Bytes readable at pos without crossing the end of the data area. */
static uint64_t lap_avail(const ring_t *r, uint64_t pos, uint64_t end)
{
    uint64_t to_wrap = r->size - (pos & r->mask);
    return end - pos < to_wrap ? end - pos : to_wrap;
}

/*
 * Walk [from, to) as the logger would: every record must pass rec_check and
 * lie within one lap. Test records are checked against next_seq[] (per
 * producer order, no loss, no duplicate). Returns test records seen.
 */
static uint64_t consume_span(const ring_t *r, uint64_t from, uint64_t to, uint32_t *next_seq,
                             uint32_t nprod, uint64_t *pads)
{
    uint64_t n = 0;
    while (from < to) {
        const void *p = ring_ptr(r, from);
        int64_t space = rec_check(p, from, lap_avail(r, from, to));
        cr_assert_gt(space, 0, "bad record at %llu: %lld", (unsigned long long)from,
                     (long long)space);
        cr_assert_leq((from & r->mask) + (uint64_t)space, r->size, "record straddles the wrap");
        const rec_hdr_t *h = p;
        if (h->type == REC_PAD) {
            if (pads) (*pads)++;
        } else {
            uint32_t id, seq;
            cr_assert_eq(decode_test(p, &id, &seq), 0, "payload at %llu", (unsigned long long)from);
            cr_assert_lt(id, nprod);
            cr_assert_eq(seq, next_seq[id], "producer %u: got seq %u, want %u", id, seq,
                         next_seq[id]);
            next_seq[id]++;
            n++;
        }
        from += (uint64_t)space;
    }
    cr_assert_eq(from, to);
    return n;
}

/* ---- single process ---- */

Test(ring, round_trip)
{
    fixture_t f = fixture_new(4096, 0);
    ring_t *r = f.ring;
    ring_claimer_t *c = &f.claimers[0];
    cr_assert_eq(ring_max_record(r), 1024);

    /* Nothing committed yet: not even the zeroed LSN 0 counts as a record. */
    cr_assert_eq(ring_scan(r, 0, 1 << 20), 0);
    uint64_t pos;
    uint32_t space = test_space(0, 0);
    cr_assert_eq(ring_claim(r, c, space, &pos), 0);
    cr_assert_eq(pos, 0);
    cr_assert_eq(atomic_load(&c->state), RING_CLAIMED);
    cr_assert_eq(atomic_load(&r->head), space);
    encode_test(ring_ptr(r, pos), pos, 0, 0);
    cr_assert_eq(ring_scan(r, 0, 1 << 20), 0, "uncommitted record at LSN 0 must be invisible");
    ring_commit(r, c, pos);
    cr_assert_eq(atomic_load(&c->state), RING_IDLE);
    cr_assert_eq(ring_scan(r, 0, 1 << 20), space);

    uint32_t next[1] = {0};
    cr_assert_eq(consume_span(r, 0, space, next, 1, NULL), 1);
    ring_release(r, space);
    cr_assert_eq(atomic_load(&r->tail), space);
    ring_release(r, 0); /* smaller: ignored */
    cr_assert_eq(atomic_load(&r->tail), space);
    fixture_free(&f);
}

Test(ring, bad_sizes)
{
    fixture_t f = fixture_new(4096, 0);
    uint64_t pos;
    cr_assert_eq(ring_claim(f.ring, &f.claimers[0], 1024 + REC_ALIGN, &pos), -EMSGSIZE);
    cr_assert_eq(ring_claim(f.ring, &f.claimers[0], 1u << 31, &pos), -EMSGSIZE);
    cr_assert_eq(ring_claim(f.ring, &f.claimers[0], 33, &pos), -EINVAL);
    cr_assert_eq(ring_claim(f.ring, &f.claimers[0], 0, &pos), -EINVAL);
    cr_assert_eq(atomic_load(&f.ring->head), 0, "a refused claim must not move head");
    cr_assert_eq(ring_claim(f.ring, &f.claimers[0], 1024, &pos), 0, "exactly size/4 is allowed");
    fixture_free(&f);
}

Test(ring, scan_limits)
{
    fixture_t f = fixture_new(4096, 0);
    ring_t *r = f.ring;
    ring_claimer_t *c = &f.claimers[0];
    uint64_t p[3];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(ring_claim(r, c, 128, &p[i]), 0);
    for (int i = 0; i < 3; i++)
        rec_write_pad(ring_ptr(r, p[i]), p[i], 128);
    /* max_bytes bounds the batch, but the first record always comes. */
    cr_assert_eq(ring_scan(r, 0, 1), 128);
    cr_assert_eq(ring_scan(r, 0, 128), 128);
    cr_assert_eq(ring_scan(r, 0, 255), 128);
    cr_assert_eq(ring_scan(r, 0, 256), 256);
    cr_assert_eq(ring_scan(r, 0, 1 << 20), 384);
    cr_assert_eq(ring_scan(r, 128, 1 << 20), 384);

    /* A hole stops the scan even if later records are committed. */
    uint64_t q[3];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(ring_claim(r, c, 64, &q[i]), 0);
    rec_write_pad(ring_ptr(r, q[0]), q[0], 64);
    rec_write_pad(ring_ptr(r, q[2]), q[2], 64);
    cr_assert_eq(ring_scan(r, 0, 1 << 20), q[1]);
    rec_write_pad(ring_ptr(r, q[1]), q[1], 64);
    cr_assert_eq(ring_scan(r, 0, 1 << 20), q[2] + 64);
    fixture_free(&f);
}

/* Small ring, many laps, odd start (as after recovery): pads at every wrap,
 * no record across the end, content intact. */
Test(ring, wrap_many_laps)
{
    const uint64_t size = 4096;
    fixture_t f = fixture_new(size, 3 * size - 96);
    ring_t *r = f.ring;
    ring_claimer_t *c = &f.claimers[1];
    uint64_t consumed = 3 * size - 96, pads = 0;
    uint32_t next[1] = {0}, seq = 0;
    while (seq < 5000) {
        uint64_t pos;
        int rc = ring_claim(r, c, test_space(0, seq), &pos);
        if (rc == -EAGAIN) {
            uint64_t end = ring_scan(r, consumed, 1500);
            cr_assert_gt(end, consumed);
            consume_span(r, consumed, end, next, 1, &pads);
            ring_release(r, end);
            consumed = end;
            continue;
        }
        cr_assert_eq(rc, 0);
        cr_assert_leq((pos & r->mask) + test_space(0, seq), size);
        encode_test(ring_ptr(r, pos), pos, 0, seq);
        ring_commit(r, c, pos);
        seq++;
    }
    uint64_t end = ring_scan(r, consumed, UINT64_MAX);
    cr_assert_eq(end, atomic_load(&r->head));
    consume_span(r, consumed, end, next, 1, &pads);
    cr_assert_eq(next[0], 5000);
    cr_assert_gt(pads, 50, "expected a pad at most wraps, got %llu", (unsigned long long)pads);
    cr_assert_gt(end / size, 100, "expected many laps");
    fixture_free(&f);
}

Test(ring, full_then_release)
{
    fixture_t f = fixture_new(4096, 0);
    ring_t *r = f.ring;
    ring_claimer_t *c = &f.claimers[0];
    uint64_t pos[4], x;
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(ring_claim(r, c, 1024, &pos[i]), 0);
        rec_write_pad(ring_ptr(r, pos[i]), pos[i], 1024);
        atomic_store(&c->state, RING_IDLE);
    }
    cr_assert_eq(ring_claim(r, c, 32, &x), -EAGAIN, "a full ring must refuse, not overwrite");
    cr_assert_eq(atomic_load(&c->state), RING_IDLE);
    cr_assert_eq(atomic_load(&r->head), 4096);
    cr_assert_eq(ring_scan(r, 0, UINT64_MAX), 4096);
    ring_release(r, 1024);
    cr_assert_eq(ring_claim(r, c, 1024, &x), 0);
    cr_assert_eq(x, 4096);
    cr_assert_eq(ring_claim(r, c, 32, &x), -EAGAIN);
    ring_release(r, 4096);
    cr_assert_eq(ring_claim(r, c, 1024, &x), 0);
    cr_assert_eq(ring_claim(r, c, 1024, &x), 0);
    cr_assert_eq(ring_claim(r, c, 512, &x), 0);
    cr_assert_eq(atomic_load(&r->head), 7680);
    /* 1024 bytes are free, but the record would wrap: its pad (512) and the
     * record must both fit. */
    ring_release(r, 4096 + 512);
    cr_assert_eq(ring_claim(r, c, 1024, &x), -EAGAIN);
    ring_release(r, 5120);
    cr_assert_eq(ring_claim(r, c, 1024, &x), 0);
    cr_assert_eq(x, 8192, "the record starts at the wrap");
    cr_assert_eq(rec_check(ring_ptr(r, 7680), 7680, 512), 512, "after a pad to the end");
    cr_assert_eq(atomic_load(&c->skip), 512);
    fixture_free(&f);
}

/* Bytes of an earlier lap must never look like a committed record of the
 * next one, even when a client planted a well-formed header in its payload. */
Test(ring, stale_bytes_never_commit)
{
    const uint64_t size = 4096;
    fixture_t f = fixture_new(size, 0);
    ring_t *r = f.ring;
    ring_claimer_t *c = &f.claimers[0];
    uint64_t pos;
    cr_assert_eq(ring_claim(r, c, 1024, &pos), 0);
    /* A "payload" holding a forged, valid pad record for LSN size + 64. */
    unsigned char *p = ring_ptr(r, pos);
    rec_write_pad(p, pos, 1024);
    rec_write_pad(p + 64, size + 64, 64);
    atomic_store(&c->state, RING_IDLE);
    cr_assert_eq(ring_claim(r, c, 64, &pos), 0); /* [1024, 1088) */
    rec_write_pad(ring_ptr(r, pos), pos, 64);
    ring_release(r, ring_scan(r, 0, UINT64_MAX));
    /* Fill up to size + 64, then claim there without committing. */
    cr_assert_eq(ring_claim(r, c, 1024, &pos), 0);
    rec_write_pad(ring_ptr(r, pos), pos, 1024);
    cr_assert_eq(ring_claim(r, c, 1024, &pos), 0);
    rec_write_pad(ring_ptr(r, pos), pos, 1024);
    cr_assert_eq(ring_claim(r, c, 960, &pos), 0);
    rec_write_pad(ring_ptr(r, pos), pos, 960);
    cr_assert_eq(ring_claim(r, c, 64, &pos), 0);
    rec_write_pad(ring_ptr(r, pos), pos, 64);
    cr_assert_eq(ring_claim(r, c, 64, &pos), 0);
    cr_assert_eq(pos, size + 64);
    cr_assert_eq(ring_scan(r, 1088, UINT64_MAX), size + 64, "stale forged header was taken");
    fixture_free(&f);
}

/* ---- abandoned claims ---- */

/* Claim through c and leave it uncommitted; a committed record follows it
 * (through `other`) so a scan that gets past the hole has somewhere to go. */
static uint64_t hole_then_record(ring_t *r, ring_claimer_t *c, ring_claimer_t *other,
                                 uint32_t space)
{
    uint64_t pos, next;
    cr_assert_eq(ring_claim(r, c, space, &pos), 0);
    memset(ring_ptr(r, pos) + 8, 0xab, space - 8); /* half-written junk */
    cr_assert_eq(ring_claim(r, other, 64, &next), 0);
    rec_write_pad(ring_ptr(r, next), next, 64);
    atomic_store(&other->state, RING_IDLE);
    return pos;
}

Test(ring, reclaim_dead_claimed)
{
    fixture_t f = fixture_new(4096, 0);
    ring_t *r = f.ring;
    ring_claimer_t *cl = f.claimers;
    uint64_t pos = hole_then_record(r, &cl[2], &cl[0], 256);
    cr_assert_eq(ring_scan(r, 0, UINT64_MAX), pos);
    cr_assert_eq(ring_reclaim_abandoned(r, cl, NCLAIMERS, pos), 0, "live owner: wait");
    atomic_store(&cl[2].owner_dead, 1);
    cr_assert_eq(ring_reclaim_abandoned(r, cl, NCLAIMERS, pos), 1);
    const rec_hdr_t *h = ring_ptr(r, pos);
    cr_assert_eq(h->type, REC_PAD);
    cr_assert_eq(rec_check(h, pos, 256), 256);
    cr_assert_eq(ring_scan(r, 0, UINT64_MAX), atomic_load(&r->head));
    /* Committed now: nothing more to do. */
    cr_assert_eq(ring_reclaim_abandoned(r, cl, NCLAIMERS, pos), 0);
    fixture_free(&f);
}

/* Died after winning the CAS but before saying CLAIMED. */
Test(ring, reclaim_dead_claiming_winner)
{
    fixture_t f = fixture_new(4096, 0);
    ring_t *r = f.ring;
    ring_claimer_t *cl = f.claimers;
    uint64_t pos = hole_then_record(r, &cl[1], &cl[0], 96);
    atomic_store(&cl[1].state, RING_CLAIMING);
    atomic_store(&cl[1].owner_dead, 1);
    cr_assert_eq(ring_reclaim_abandoned(r, cl, NCLAIMERS, pos), 1);
    cr_assert_eq(ring_scan(r, 0, UINT64_MAX), atomic_load(&r->head));
    fixture_free(&f);
}

Test(ring, reclaim_ambiguous_and_losers)
{
    fixture_t f = fixture_new(4096, 0);
    ring_t *r = f.ring;
    ring_claimer_t *cl = f.claimers;
    uint64_t pos = hole_then_record(r, &cl[1], &cl[0], 128);
    atomic_store(&cl[1].state, RING_CLAIMING);
    atomic_store(&cl[1].owner_dead, 1);
    /* A dead loser that announced the same position with another length. */
    atomic_store(&cl[2].pos, pos);
    atomic_store(&cl[2].len, 64);
    atomic_store(&cl[2].skip, 0);
    atomic_store(&cl[2].state, RING_CLAIMING);
    atomic_store(&cl[2].owner_dead, 1);
    cr_assert_eq(ring_reclaim_abandoned(r, cl, NCLAIMERS, pos), -1, "cannot tell the owner");
    /* A loser that announced the same length agrees: no ambiguity. */
    atomic_store(&cl[2].len, 128);
    cr_assert_eq(ring_reclaim_abandoned(r, cl, NCLAIMERS, pos), 1);
    cr_assert_eq(ring_scan(r, 0, UINT64_MAX), atomic_load(&r->head));
    fixture_free(&f);
}

Test(ring, reclaim_ignores_impossible_loser)
{
    fixture_t f = fixture_new(4096, 0);
    ring_t *r = f.ring;
    ring_claimer_t *cl = f.claimers;
    uint64_t pos = hole_then_record(r, &cl[1], &cl[0], 128);
    atomic_store(&cl[1].state, RING_CLAIMING);
    atomic_store(&cl[1].owner_dead, 1);
    /* Its claim would end beyond head: its CAS cannot have won. */
    atomic_store(&cl[3].pos, pos);
    atomic_store(&cl[3].len, 1024);
    atomic_store(&cl[3].state, RING_CLAIMING);
    atomic_store(&cl[3].owner_dead, 1);
    cr_assert_eq(ring_reclaim_abandoned(r, cl, NCLAIMERS, pos), 1);
    cr_assert_eq(ring_scan(r, 0, UINT64_MAX), atomic_load(&r->head));
    fixture_free(&f);
}

Test(ring, reclaim_waits_for_live_or_unknown)
{
    fixture_t f = fixture_new(4096, 0);
    ring_t *r = f.ring;
    ring_claimer_t *cl = f.claimers;
    uint64_t pos = hole_then_record(r, &cl[1], &cl[0], 128);
    atomic_store(&cl[1].owner_dead, 1);
    /* A live claimer that announced the same position: it may be the owner. */
    atomic_store(&cl[2].pos, pos);
    atomic_store(&cl[2].len, 128);
    atomic_store(&cl[2].state, RING_CLAIMING);
    cr_assert_eq(ring_reclaim_abandoned(r, cl, NCLAIMERS, pos), 0);
    atomic_store(&cl[2].state, RING_IDLE);
    /* No candidate at all: wait. */
    atomic_store(&cl[1].state, RING_IDLE);
    cr_assert_eq(ring_reclaim_abandoned(r, cl, NCLAIMERS, pos), 0);
    /* Nothing claimed at or beyond head. */
    cr_assert_eq(ring_reclaim_abandoned(r, cl, NCLAIMERS, atomic_load(&r->head)), 0);
    cr_assert_eq(ring_scan(r, 0, UINT64_MAX), pos);
    fixture_free(&f);
}

Test(ring, reclaim_malformed_commit_fails)
{
    fixture_t f = fixture_new(4096, 0);
    ring_t *r = f.ring;
    uint64_t pos;
    cr_assert_eq(ring_claim(r, &f.claimers[0], 64, &pos), 0);
    rec_hdr_t *h = ring_ptr(r, pos);
    h->len = 5;
    rec_publish(h, pos);
    cr_assert_eq(ring_scan(r, 0, UINT64_MAX), 0, "a malformed record must stop the scan");
    cr_assert_eq(ring_reclaim_abandoned(r, f.claimers, NCLAIMERS, pos), -1);
    fixture_free(&f);
}

/* Move head (and tail) of an empty ring to pos by padding. */
static void advance_to(ring_t *r, ring_claimer_t *c, uint64_t to)
{
    uint64_t pos;
    while (atomic_load(&r->head) < to) {
        uint64_t left = to - atomic_load(&r->head);
        uint32_t sp = left > 1024 ? 1024 : (uint32_t)left;
        cr_assert_eq(ring_claim(r, c, sp, &pos), 0);
        rec_write_pad(ring_ptr(r, pos), pos, sp);
        atomic_store(&c->state, RING_IDLE);
        ring_release(r, ring_scan(r, atomic_load(&r->tail), UINT64_MAX));
    }
    cr_assert_eq(atomic_load(&r->head), to);
}

/* Died after writing the wrap pad: the consumer waits at the lap boundary. */
Test(ring, reclaim_wrap_after_pad)
{
    const uint64_t size = 4096;
    fixture_t f = fixture_new(size, 0);
    ring_t *r = f.ring;
    ring_claimer_t *cl = f.claimers;
    advance_to(r, &cl[0], 2 * size - 128);
    uint64_t pos = hole_then_record(r, &cl[1], &cl[0], 512);
    cr_assert_eq(pos, 2 * size);
    cr_assert_eq(atomic_load(&cl[1].pos), 2 * size - 128);
    cr_assert_eq(atomic_load(&cl[1].skip), 128);
    cr_assert_eq(ring_scan(r, 2 * size - 128, UINT64_MAX), pos, "the pad is committed");
    cr_assert_eq(ring_claimer_adopt(&cl[1], pos), 0, "consumer waits at our record");
    atomic_store(&cl[1].owner_dead, 1);
    cr_assert_eq(ring_reclaim_abandoned(r, cl, NCLAIMERS, pos), 1);
    cr_assert_eq(rec_check(ring_ptr(r, pos), pos, 512), 512);
    uint64_t end = ring_scan(r, pos, UINT64_MAX);
    cr_assert_eq(end, atomic_load(&r->head));
    cr_assert_eq(ring_claimer_adopt(&cl[1], end), 1);
    cr_assert_eq(atomic_load(&cl[1].owner_dead), 0);
    cr_assert_eq(atomic_load(&cl[1].state), RING_IDLE);
    fixture_free(&f);
}

/* Died right after the CAS of a wrapping claim, before its pad: the whole
 * claim is padded, split at the wrap into two valid records. */
Test(ring, reclaim_wrap_before_pad)
{
    const uint64_t size = 4096;
    fixture_t f = fixture_new(size, 0);
    ring_t *r = f.ring;
    ring_claimer_t *cl = f.claimers;
    advance_to(r, &cl[0], 3 * size - 64);
    uint64_t rec = hole_then_record(r, &cl[2], &cl[0], 256);
    uint64_t pos = 3 * size - 64;
    /* Undo what ring_claim did after the CAS: no pad, not CLAIMED. */
    atomic_store((_Atomic uint64_t *)ring_ptr(r, pos), UINT64_MAX);
    atomic_store(&cl[2].state, RING_CLAIMING);
    atomic_store(&cl[2].owner_dead, 1);
    cr_assert_eq(ring_scan(r, pos, UINT64_MAX), pos);
    cr_assert_eq(ring_reclaim_abandoned(r, cl, NCLAIMERS, pos), 1);
    cr_assert_eq(rec_check(ring_ptr(r, pos), pos, 64), 64);
    cr_assert_eq(((rec_hdr_t *)ring_ptr(r, pos))->type, REC_PAD);
    cr_assert_eq(rec_check(ring_ptr(r, rec), rec, 256), 256);
    cr_assert_eq(((rec_hdr_t *)ring_ptr(r, rec))->type, REC_PAD);
    cr_assert_eq(ring_scan(r, pos, UINT64_MAX), atomic_load(&r->head));
    fixture_free(&f);
}

Test(ring, adopt_rules)
{
    ring_claimer_t c;
    memset(&c, 0, sizeof(c));
    atomic_store(&c.owner_dead, 1);
    cr_assert_eq(ring_claimer_adopt(&c, 0), 1, "idle slot");
    cr_assert_eq(atomic_load(&c.owner_dead), 0);

    /* Won claim [1000, 1256), record at 1000. */
    atomic_store(&c.pos, 1000);
    atomic_store(&c.len, 256);
    atomic_store(&c.skip, 0);
    atomic_store(&c.state, RING_CLAIMED);
    atomic_store(&c.owner_dead, 1);
    cr_assert_eq(ring_claimer_adopt(&c, 900), 0);
    cr_assert_eq(ring_claimer_adopt(&c, 1000), 0);
    cr_assert_eq(atomic_load(&c.owner_dead), 1, "a pending slot is left alone");
    cr_assert_eq(ring_claimer_adopt(&c, 1256), 1);
    cr_assert_eq(atomic_load(&c.state), RING_IDLE);

    /* Wrapping claim [4000, 4096 + 200): record at 4096. */
    atomic_store(&c.pos, 4000);
    atomic_store(&c.len, 96 + 200);
    atomic_store(&c.skip, 96);
    atomic_store(&c.state, RING_CLAIMED);
    cr_assert_eq(ring_claimer_adopt(&c, 4096), 0);
    atomic_store(&c.state, RING_CLAIMING);
    cr_assert_eq(ring_claimer_adopt(&c, 4096), 0, "may have won: consumer waits at it");
    cr_assert_eq(ring_claimer_adopt(&c, 4000), 0);
    cr_assert_eq(ring_claimer_adopt(&c, 4064), 1, "a boundary inside: it lost the CAS");

    atomic_store(&c.pos, 5000);
    atomic_store(&c.len, 256);
    atomic_store(&c.skip, 0);
    atomic_store(&c.state, RING_CLAIMING);
    cr_assert_eq(ring_claimer_adopt(&c, 5032), 1, "lost claim, consumer past its start");
}

/* ---- multi-process ---- */

static void reap(pid_t *pids, int n, int kill_first, int *statuses)
{
    for (int i = 0; i < n; i++) {
        if (pids[i] <= 0) continue;
        if (kill_first) kill(pids[i], SIGKILL);
        int st = 0;
        while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR) {
        }
        if (statuses) statuses[i] = st;
        pids[i] = 0;
    }
}

#define NPROD    4
#define PER_PROD 20000

Test(ring, multiprocess_stress, .timeout = 60)
{
    const uint64_t size = 16384; /* small: many laps, many wraps, much contention */
    fixture_t f = fixture_new(size, 0);
    ring_t *r = f.ring;
    pid_t pids[NPROD] = {0};
    pid_t parent = getpid();
    for (uint32_t id = 0; id < NPROD; id++) {
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
            child_guard(parent);
            for (uint32_t seq = 0; seq < PER_PROD; seq++)
                produce(r, &f.claimers[id], id, seq);
            _exit(0);
        }
        pids[id] = pid;
    }
    uint32_t next[NPROD] = {0};
    uint64_t consumed = 0, got = 0, pads = 0, batches = 0;
    uint64_t deadline = now_ms() + 30000;
    while (got < (uint64_t)NPROD * PER_PROD) {
        uint64_t end = ring_scan(r, consumed, 4096);
        if (end == consumed) {
            if (now_ms() > deadline) {
                reap(pids, NPROD, 1, NULL);
                cr_assert_fail("stuck at %llu after %llu records", (unsigned long long)consumed,
                               (unsigned long long)got);
            }
            sched_yield();
            continue;
        }
        got += consume_span(r, consumed, end, next, NPROD, &pads);
        ring_release(r, end);
        consumed = end;
        batches++;
    }
    int st[NPROD];
    reap(pids, NPROD, 0, st);
    for (int i = 0; i < NPROD; i++) {
        cr_assert(WIFEXITED(st[i]) && WEXITSTATUS(st[i]) == 0, "producer %d status %#x", i, st[i]);
        cr_assert_eq(next[i], PER_PROD);
    }
    cr_assert_eq(consumed, atomic_load(&r->head));
    cr_assert_eq(ring_scan(r, consumed, UINT64_MAX), consumed);
    cr_log_info("%llu records, %llu pads, %llu batches, %llu laps", (unsigned long long)got,
                (unsigned long long)pads, (unsigned long long)batches,
                (unsigned long long)(consumed / size));
    fixture_free(&f);
}

/*
 * A real producer is SIGKILLed holding a claim (it tells us through a pipe);
 * the "master" marks it dead, the consumer pads the claim and goes on, and a
 * successor adopts the slot. `wrap` puts the claim across the end of the
 * data area (the pad is written, the record is not).
 */
static void killed_claimer(uint64_t start, uint32_t space)
{
    const uint64_t size = 4096;
    fixture_t f = fixture_new(size, start);
    ring_t *r = f.ring;
    ring_claimer_t *cl = f.claimers;
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t parent = getpid();
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        child_guard(parent);
        close(fds[0]);
        uint64_t pos;
        if (ring_claim(r, &cl[3], space, &pos) != 0) _exit(1);
        memset(ring_ptr(r, pos) + 8, 0xee, space - 8);
        if (write(fds[1], &pos, sizeof(pos)) != sizeof(pos)) _exit(2);
        for (;;)
            pause();
    }
    close(fds[1]);
    uint64_t pos = 0;
    ssize_t n = read(fds[0], &pos, sizeof(pos));
    close(fds[0]);
    if (n != sizeof(pos)) {
        reap(&pid, 1, 1, NULL);
        cr_assert_fail("child did not claim");
    }
    /* Others keep writing after the hole. */
    for (uint32_t seq = 0; seq < 3; seq++)
        produce(r, &cl[0], 0, seq);
    cr_assert_eq(ring_scan(r, start, UINT64_MAX), start < pos && pos % size == 0 ? pos : start);

    int st;
    reap(&pid, 1, 1, &st);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    uint64_t stuck = ring_scan(r, start, UINT64_MAX);
    cr_assert_eq(ring_reclaim_abandoned(r, cl, NCLAIMERS, stuck), 0, "not marked dead yet");
    cr_assert_eq(ring_claimer_adopt(&cl[3], stuck), 0);
    atomic_store(&cl[3].owner_dead, 1); /* what the master does after waitpid */
    cr_assert_eq(ring_reclaim_abandoned(r, cl, NCLAIMERS, stuck), 1);
    uint64_t end = ring_scan(r, start, UINT64_MAX);
    cr_assert_eq(end, atomic_load(&r->head));
    uint32_t next[1] = {0};
    uint64_t pads = 0;
    cr_assert_eq(consume_span(r, start, end, next, 1, &pads), 3);
    cr_assert_geq(pads, 1);
    ring_release(r, end);
    cr_assert_eq(ring_claimer_adopt(&cl[3], end), 1);
    cr_assert_eq(atomic_load(&cl[3].owner_dead), 0);
    /* The successor claims through the same slot. */
    produce(r, &cl[3], 0, 3);
    cr_assert_eq(consume_span(r, end, ring_scan(r, end, UINT64_MAX), next, 1, NULL), 1);
    fixture_free(&f);
}

Test(ring, sigkill_holding_claim, .timeout = 20)
{
    killed_claimer(0, 320);
}

Test(ring, sigkill_holding_wrapping_claim, .timeout = 20)
{
    killed_claimer(4096 - 96, 320);
}

/*
 * The releaser (the store) SIGKILLed inside ring_release, at each of its
 * steps (fault points "releasing" and "release", io_fault.h): tail has not
 * moved, but ring_released() already covers what may be destroyed, every
 * record from there on is intact, and ring_release(r, ring_released(r))
 * finishes the job. Without `releasing`, a successor resuming at tail found
 * the record there invalidated (issue 9).
 */
static void killed_releaser(const char *fault, uint64_t start)
{
    fixture_t f = fixture_new(4096, start);
    ring_t *r = f.ring;
    ring_claimer_t *c = &f.claimers[0];
    /* Records 0..7 (about 1 KB): release the first three normally, then
     * die releasing up to record 6. */
    uint64_t at[9];
    at[0] = start;
    for (uint32_t seq = 0; seq < 8; seq++) {
        produce(r, c, 0, seq);
        at[seq + 1] = ring_scan(r, at[seq], UINT64_MAX);
        cr_assert_gt(at[seq + 1], at[seq]);
    }
    ring_release(r, at[3]);
    cr_assert_eq(ring_released(r), at[3]);

    pid_t parent = getpid();
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        child_guard(parent);
        if (io_fault_install(fault, NULL, 1) != 1) _exit(1);
        ring_release(r, at[6]);
        _exit(2); /* the fault point did not fire */
    }
    int st;
    reap(&pid, 1, 0, &st);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "%s: status %d", fault, st);

    cr_assert_eq(atomic_load(&r->tail), at[3], "tail moves last");
    cr_assert_eq(ring_released(r), at[6], "what may be destroyed is declared first");
    uint32_t next[1] = {6};
    cr_assert_eq(consume_span(r, at[6], at[8], next, 1, NULL), 2, "records past it are intact");

    /* The successor finishes the release: the space is free and the
     * released slots can no longer look committed. */
    ring_release(r, ring_released(r));
    cr_assert_eq(atomic_load(&r->tail), at[6]);
    cr_assert_eq(ring_released(r), at[6]);
    for (int i = 3; i < 6; i++)
        cr_assert_neq(rec_load_lsn(ring_ptr(r, at[i])), at[i]);
    produce(r, c, 0, 8);
    next[0] = 6;
    cr_assert_eq(consume_span(r, at[6], ring_scan(r, at[6], UINT64_MAX), next, 1, NULL), 3);
    fixture_free(&f);
}

Test(ring, releaser_killed_after_invalidating, .timeout = 20)
{
    killed_releaser("release:1:KILL", 0);
}

Test(ring, releaser_killed_before_invalidating, .timeout = 20)
{
    killed_releaser("releasing:1:KILL", 4096 - 320);
}

/*
 * The whole crash protocol under load: producers are SIGKILLed at random
 * moments (some while holding a claim: one record in eight dawdles between
 * claim and commit), the parent plays the master (reap, mark owner_dead,
 * respawn into the same slot, which adopts it) and the logger (scan, and
 * reclaim a claim that stays uncommitted). Each incarnation writes its own
 * id, so the check is: per id, sequence numbers 0, 1, 2, ... with no gap
 * and no duplicate; only the record a victim held can be missing, at the end.
 */
#define KILL_SLOTS  4
#define KILL_IDS    4096
#define KILL_TARGET 200 /* kills a run makes before it stops */

typedef struct kill_ctl {
    _Atomic uint64_t consumed; /* the consumer's position, like durable_lsn */
    _Atomic int stop;
} kill_ctl_t;

static void dawdle_us(uint64_t us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000 + (uint64_t)(b.tv_nsec - a.tv_nsec) / 1000 <
             us);
}

static void kill_producer(ring_t *r, ring_claimer_t *c, kill_ctl_t *ctl, uint32_t id)
{
    while (!ring_claimer_adopt(c, atomic_load(&ctl->consumed))) {
        if (atomic_load(&ctl->stop)) _exit(0);
        usleep(100);
    }
    for (uint32_t seq = 0;; seq++) {
        uint32_t space = test_space(id, seq);
        uint64_t pos;
        int rc;
        while ((rc = ring_claim(r, c, space, &pos)) == -EAGAIN) {
            if (atomic_load(&ctl->stop)) _exit(0);
            sched_yield();
        }
        if (rc != 0) _exit(3);
        if ((seq & 7) == 0) dawdle_us(20);
        encode_test(ring_ptr(r, pos), pos, id, seq);
        ring_commit(r, c, pos);
        if (atomic_load(&ctl->stop)) _exit(0);
    }
}

static pid_t spawn_kill_producer(fixture_t *f, kill_ctl_t *ctl, int slot, uint32_t id)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        child_guard(parent);
        kill_producer(f->ring, &f->claimers[slot], ctl, id);
        _exit(0);
    }
    return pid;
}

Test(ring, random_kills, .timeout = 60)
{
    fixture_t f = fixture_new(16384, 0);
    ring_t *r = f.ring;
    kill_ctl_t *ctl =
        mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(ctl, MAP_FAILED);
    static uint32_t next[KILL_IDS]; /* per id: next sequence number expected */
    memset(next, 0, sizeof(next));
    pid_t pids[KILL_SLOTS];
    uint32_t next_id = 0;
    for (int s = 0; s < KILL_SLOTS; s++)
        pids[s] = spawn_kill_producer(&f, ctl, s, next_id++);

    uint64_t start = now_ms(), consumed = 0, stuck_since = 0;
    uint64_t got = 0, kills = 0, reclaims = 0, rng = 88172645463325252ull;
    uint64_t next_kill = start + 2;
    int stopping = 0;
    for (;;) {
        uint64_t now = now_ms();
        if (now - start > 30000) {
            reap(pids, KILL_SLOTS, 1, NULL);
            cr_assert_fail("stuck at %llu", (unsigned long long)consumed);
        }
        uint64_t end = ring_scan(r, consumed, 8192);
        if (end > consumed) {
            got += consume_span(r, consumed, end, next, KILL_IDS, NULL);
            ring_release(r, end);
            consumed = end;
            atomic_store(&ctl->consumed, consumed);
            stuck_since = 0;
            continue;
        }
        uint64_t head = atomic_load(&r->head);
        if (head > consumed) {
            if (!stuck_since) {
                stuck_since = now;
            } else if (now - stuck_since >= 2) {
                int rc = ring_reclaim_abandoned(r, f.claimers, KILL_SLOTS, consumed);
                if (rc < 0) reap(pids, KILL_SLOTS, 1, NULL);
                cr_assert_geq(rc, 0, "ambiguous claim at %llu", (unsigned long long)consumed);
                if (rc > 0) {
                    reclaims++;
                    stuck_since = 0;
                    continue;
                }
            }
        }
        if (!stopping && now >= next_kill && next_id < KILL_IDS) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            int s = (int)(rng % KILL_SLOTS);
            reap(&pids[s], 1, 1, NULL);
            atomic_store(&f.claimers[s].owner_dead, 1); /* the master's part */
            pids[s] = spawn_kill_producer(&f, ctl, s, next_id++);
            kills++;
            next_kill = now + 1 + rng % 4;
        }
        /* Stop after a number of kills, not a time: under sanitizers on a
         * loaded machine a fork can take tens of milliseconds. The deadline
         * only ends a run that cannot get there (the asserts then say so). */
        if (!stopping && ((kills >= KILL_TARGET && reclaims > 0) || now - start > 20000)) {
            stopping = 1;
            atomic_store(&ctl->stop, 1);
        }
        if (stopping) {
            int alive = 0;
            for (int s = 0; s < KILL_SLOTS; s++) {
                if (pids[s] > 0 && waitpid(pids[s], NULL, WNOHANG) == pids[s]) pids[s] = 0;
                alive += pids[s] > 0;
            }
            if (!alive && atomic_load(&r->head) == consumed) break;
        }
        sched_yield();
    }
    cr_log_info("%llu records from %u incarnations, %llu kills, %llu claims reclaimed",
                (unsigned long long)got, next_id, (unsigned long long)kills,
                (unsigned long long)reclaims);
    cr_assert_geq(kills, KILL_TARGET);
    cr_assert_gt(reclaims, 0, "no kill landed inside a claim");
    munmap(ctl, sizeof(*ctl));
    fixture_free(&f);
}
