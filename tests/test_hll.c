/*
 * test_hll.c - common/hll.c alone: the hash and pattern against values
 * redis-server 7.0.15 gave (PFADD then PFDEBUG DECODE), dense registers at
 * every bit offset, sparse and dense strings agreeing register for
 * register and estimate for estimate through random additions under
 * several hll-sparse-max-bytes, the estimates Redis gave for known sets,
 * and corrupt sparse strings refused rather than read past their end.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hll.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* All registers of b, one per byte. */
static void regs_of(const hll_buf_t *b, uint8_t out[HLL_REGISTERS])
{
    memset(out, 0, HLL_REGISTERS);
    cr_assert_eq(hll_merge(out, b->p, b->len), 0);
}

Test(hll, pattern_as_redis)
{
    static const struct {
        const char *ele;
        long idx;
        int count;
    } v[] = {{"a", 12711, 2}, {"hello", 9216, 1}, {"", 5938, 2}, {"0123456789abcdefX", 11257, 1}};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        long idx;
        int count = hll_pattern((const unsigned char *)v[i].ele, strlen(v[i].ele), &idx);
        cr_expect_eq(idx, v[i].idx, "%s", v[i].ele);
        cr_expect_eq(count, v[i].count, "%s", v[i].ele);
    }
}

Test(hll, a_new_one_is_sparse_empty_and_counts_zero)
{
    hll_buf_t b;
    hll_new(&b);
    cr_assert_eq(b.len, HLL_HDR_SIZE + 2);
    cr_expect(hll_is_valid(b.p, b.len));
    cr_expect_eq(memcmp(b.p, "HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff", 18), 0);
    uint64_t card = 99;
    cr_expect(hll_cached(b.p, &card));
    cr_expect_eq(card, 0);
    int bad = 0;
    cr_expect_eq(hll_count(b.p, b.len, &bad), 0);
    cr_expect_eq(bad, 0);
    hll_invalidate(&b);
    cr_expect_not(hll_cached(b.p, &card));
    free(b.p);
}

/* Every register, the last one included, set and read back without
 * touching its neighbours or any byte past the registers. */
Test(hll, dense_registers_at_every_offset)
{
    hll_buf_t b;
    hll_new(&b);
    cr_assert_eq(hll_to_dense(&b), 0);
    cr_assert_eq(b.len, HLL_DENSE_SIZE);
    unsigned char *regs = b.p + HLL_HDR_SIZE;
    static uint8_t want[HLL_REGISTERS];
    for (int round = 0; round < 3; round++) {
        memset(regs, 0, HLL_DENSE_SIZE - HLL_HDR_SIZE);
        memset(want, 0, sizeof(want));
        for (long i = 0; i < HLL_REGISTERS; i++) {
            want[i] = (uint8_t)(round == 0 ? 63 : round == 1 ? (uint64_t)i % 64 : next() % 52);
            cr_assert_eq(hll_set(&b, i, want[i], 3000), want[i] > 0);
        }
        for (long i = 0; i < HLL_REGISTERS; i++)
            cr_assert_eq(hll_dense_get(regs, i), want[i], "register %ld", i);
    }
    cr_expect_eq(hll_set(&b, 5, 1, 3000), 0, "not higher: no change");
    free(b.p);
}

/* The same elements into a string kept sparse as long as it can be and
 * into a dense one: the same registers and estimate at every step, and
 * the sparse one turns dense only past sparse_max or a value over 32. */
Test(hll, sparse_and_dense_agree)
{
    static const int64_t maxes[] = {0, 40, 300, 3000, 1 << 20};
    for (size_t m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++) {
        hll_buf_t s, d;
        hll_new(&s);
        hll_new(&d);
        cr_assert_eq(hll_to_dense(&d), 0);
        static uint8_t rs[HLL_REGISTERS], rd[HLL_REGISTERS];
        for (int i = 0; i < 20000; i++) {
            uint64_t v = next();
            unsigned char ele[8];
            memcpy(ele, &v, sizeof(ele));
            size_t n = v % 9;
            int a = hll_add(&s, ele, n, maxes[m]), b = hll_add(&d, ele, n, maxes[m]);
            cr_assert_eq(a, b, "element %d, sparse-max %lld", i, (long long)maxes[m]);
            if (s.p[4] == HLL_SPARSE) cr_assert_leq((int64_t)s.len, maxes[m] > 18 ? maxes[m] : 18);
            if (i % 997 == 0 || i == 19999) {
                regs_of(&s, rs);
                regs_of(&d, rd);
                cr_assert_eq(memcmp(rs, rd, HLL_REGISTERS), 0, "element %d", i);
                int bad = 0;
                cr_assert_eq(hll_count(s.p, s.len, &bad), hll_count(d.p, d.len, &bad));
                cr_assert_eq(bad, 0);
            }
        }
        cr_expect_eq(s.p[4], maxes[m] == 1 << 20 ? HLL_SPARSE : HLL_DENSE);
        free(s.p);
        free(d.p);
    }
}

/* Estimates redis-server 7.0.15 gave: PFADD of "e1" ... "eN". */
Test(hll, estimates_as_redis)
{
    static const struct {
        int n;
        uint64_t card;
    } v[] = {{1000, 1008}, {100000, 100853}};
    for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
        hll_buf_t b;
        hll_new(&b);
        static uint8_t max[HLL_REGISTERS];
        for (int i = 1; i <= v[k].n; i++) {
            char ele[16];
            int len = snprintf(ele, sizeof(ele), "e%d", i);
            cr_assert_geq(hll_add(&b, (const unsigned char *)ele, (size_t)len, 3000), 0);
        }
        int bad = 0;
        cr_expect_eq(hll_count(b.p, b.len, &bad), v[k].card, "%d elements", v[k].n);
        regs_of(&b, max);
        cr_expect_eq(hll_count_raw(max), v[k].card, "raw registers");
        free(b.p);
    }
}

/* Corrupt sparse strings: a cut XZERO, registers past the last, too few
 * registers. Each is refused by the function that reads it. */
Test(hll, corrupt_sparse_strings_are_refused)
{
    hll_buf_t b;
    hll_new(&b);
    static uint8_t max[HLL_REGISTERS];
    int bad;
    b.len--; /* XZERO without its second byte */
    memset(max, 0, sizeof(max));
    cr_expect_eq(hll_merge(max, b.p, b.len), -1);
    bad = 0;
    (void)hll_count(b.p, b.len, &bad);
    cr_expect_eq(bad, 1);
    cr_expect_eq(hll_add(&b, (const unsigned char *)"a", 1, 3000), -1);
    b.len++;
    b.p[17] = 0xfe; /* 16383 registers: one short */
    bad = 0;
    (void)hll_count(b.p, b.len, &bad);
    cr_expect_eq(bad, 1);
    cr_expect_eq(hll_to_dense(&b), -1);
    b.p[17] = 0xff;
    b.p[b.len++] = 0x80; /* a VAL past the last register */
    bad = 0;
    (void)hll_count(b.p, b.len, &bad);
    cr_expect_eq(bad, 1, "counting is strict");
    cr_expect_eq(hll_merge(max, b.p, b.len), 0, "merging stops there, as Redis' does");
    cr_expect_not(hll_is_valid((const unsigned char *)"HYLL\x02", 16));
    cr_expect_not(hll_is_valid((const unsigned char *)"HYLX", 16));
    cr_expect_not(hll_is_valid(b.p, 15));
    b.p[4] = HLL_DENSE;
    cr_expect_not(hll_is_valid(b.p, b.len), "dense of the wrong length");
    free(b.p);
}
