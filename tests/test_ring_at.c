/*
 * test_ring_at.c - unit tests of ring_claim_at (common/ring.c), the claim a
 * replica's receiver makes at its leader's LSN (docs/DECISIONS.md D33): it
 * lands exactly there or fails with a reason, and never pads or moves head
 * when it fails.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include "record.h"
#include "ring.h"

static ring_t *ring_new(uint64_t size, uint64_t start, size_t *bytes)
{
    *bytes = ring_shm_size(size);
    void *m = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(m, MAP_FAILED);
    ring_init(m, size, start);
    return m;
}

/* Claim at pos, write a one-argument record there and commit it. */
static void put_at(ring_t *r, ring_claimer_t *c, uint64_t pos, uint32_t space)
{
    cr_assert_eq(ring_claim_at(r, c, space, pos), 0, "claim at %llu", (unsigned long long)pos);
    cr_assert_eq(atomic_load(&c->state), RING_CLAIMED);
    cr_assert_eq(atomic_load(&r->head), pos + space);
    uint32_t len = space - REC_HDR_SIZE - 8; /* u16 id, u16 argc, u32 len */
    cr_assert_eq(rec_space((uint32_t)rec_cmd_payload_size(1, &len)), space);
    unsigned char body[1024] = {0};
    const unsigned char *argv[1] = {body};
    rec_encode_cmd(ring_ptr(r, pos), pos, 0, 1, 7, 1, argv, &len);
    ring_commit(r, c, pos);
}

Test(ring_at, lands_exactly_or_says_why)
{
    size_t bytes;
    ring_t *r = ring_new(4096, 1024, &bytes);
    ring_claimer_t c = {0};
    put_at(r, &c, 1024, 64);
    cr_assert_eq(ring_scan(r, 1024, 1 << 20), 1088, "the record is committed where asked");
    /* Not where head is: refused, head unchanged. */
    cr_expect_eq(ring_claim_at(r, &c, 64, 1024), -ESPIPE);
    cr_expect_eq(ring_claim_at(r, &c, 64, 2048), -ESPIPE);
    cr_expect_eq(atomic_load(&r->head), 1088);
    /* Bad sizes and positions, as ring_claim's. */
    cr_expect_eq(ring_claim_at(r, &c, 33, 1088), -EINVAL);
    cr_expect_eq(ring_claim_at(r, &c, 64, 1090), -EINVAL);
    cr_expect_eq(ring_claim_at(r, &c, 1024 + REC_ALIGN, 1088), -EMSGSIZE);
    cr_expect_eq(atomic_load(&c.state), RING_IDLE, "a refusal leaves no claim announced");
    cr_expect_eq(atomic_load(&r->head), 1088);
    munmap(r, bytes);
}

Test(ring_at, never_pads_at_the_wrap)
{
    size_t bytes;
    ring_t *r = ring_new(4096, 4096 - 64, &bytes);
    ring_claimer_t c = {0};
    /* 128 bytes at 64 before the end would need a pad: this ring is smaller
     * than the leader's layout. */
    cr_expect_eq(ring_claim_at(r, &c, 128, 4096 - 64), -ERANGE);
    cr_expect_eq(atomic_load(&r->head), 4096 - 64);
    /* The leader's own pad record fills the gap; then the next lap. */
    put_at(r, &c, 4096 - 64, 64);
    put_at(r, &c, 4096, 128);
    cr_assert_eq(ring_scan(r, 4096 - 64, 1 << 20), 4096 + 128);
    munmap(r, bytes);
}

Test(ring_at, full_ring_waits_for_release)
{
    size_t bytes;
    ring_t *r = ring_new(4096, 0, &bytes);
    ring_claimer_t c = {0};
    for (uint64_t p = 0; p < 4096; p += 1024)
        put_at(r, &c, p, 1024);
    cr_expect_eq(ring_claim_at(r, &c, 1024, 4096), -EAGAIN, "nothing released yet");
    cr_expect_eq(atomic_load(&r->head), 4096);
    ring_release(r, 1024);
    put_at(r, &c, 4096, 1024);
    munmap(r, bytes);
}
