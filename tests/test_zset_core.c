/*
 * test_zset_core.c - the sorted set's structure (store/core/zset.c)
 * against a plain sorted array: after every random add, score change and
 * removal, the order (both directions), ranks, the member at each rank
 * and the score and lex bounds agree; the member -> score part finds every
 * member and no removed one. Enough members for the order to take many
 * chunks (D65: a keyed list), so seeks cross them.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "command.h"
#include "store/core/object.h"
#include "store/core/zset.h"

typedef struct {
    char m[8];
    uint32_t n;
    double s;
} item_t;

static int lex(const char *a, uint32_t an, const char *b, uint32_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an < bn ? -1 : an > bn);
}

static int by_order(const void *x, const void *y)
{
    const item_t *a = x, *b = y;
    if (a->s != b->s) return a->s < b->s ? -1 : 1;
    return lex(a->m, a->n, b->m, b->n);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static void check(st_zset_t *z, item_t *v, uint32_t n)
{
    qsort(v, n, sizeof(*v), by_order);
    cr_assert_eq(st_zset_len(z), n);
    st_zset_iter_t it, back;
    st_zel_t x, y, at;
    st_zset_iter_init(&it, z, 0, n, 0);
    st_zset_iter_init(&back, z, n ? n - 1 : 0, n, 1);
    for (uint32_t i = 0; i < n; i++) {
        cr_assert(st_zset_next(&it, &x));
        cr_assert(x.n == v[i].n && !memcmp(x.m, v[i].m, x.n), "order at %u", i);
        cr_assert_eq(x.score, v[i].s);
        st_zset_at(z, i, &at);
        cr_assert(at.n == x.n && !memcmp(at.m, x.m, x.n), "member at rank %u", i);
        cr_assert_eq(st_zset_rank(z, v[i].m, v[i].n), (long)i);
        cr_assert(st_zset_next(&back, &y));
        cr_assert(y.n == v[n - 1 - i].n && !memcmp(y.m, v[n - 1 - i].m, y.n), "reverse %u", i);
        double s;
        cr_assert(st_zset_score(z, v[i].m, v[i].n, &s) && s == v[i].s);
    }
    cr_assert(!st_zset_next(&it, &x));
    st_zset_iter_free(&it);
    st_zset_iter_free(&back);
    cr_assert_null(st_zset_check(z));
    double probes[] = {-INFINITY, -1, 0, 0.5, 1, 2, 3, INFINITY};
    for (size_t p = 0; p < sizeof(probes) / sizeof(probes[0]); p++)
        for (int excl = 0; excl < 2; excl++) {
            uint32_t want = 0;
            while (want < n && (excl ? v[want].s <= probes[p] : v[want].s < probes[p]))
                want++;
            cr_assert_eq(st_zset_rank_score(z, probes[p], excl), want, "score %g excl %d",
                         probes[p], excl);
        }
}

Test(zset_core, random_against_sorted_array)
{
    enum { N = 900 };
    item_t v[N];
    uint32_t n = 0;
    st_zset_t *z = st_zset_new(7);
    for (int step = 0; step < 12000; step++) {
        char m[8];
        uint32_t len = (uint32_t)snprintf(m, sizeof(m), "m%u", (unsigned)(next() % N));
        double s = (double)(next() % 4) - 1 + ((next() % 3) == 0 ? 0.5 : 0);
        if (next() % 50 == 0) s = next() % 2 ? INFINITY : -INFINITY;
        uint32_t i;
        for (i = 0; i < n && lex(v[i].m, v[i].n, m, len) != 0; i++) {
        }
        int removed = next() % 3 == 0;
        if (removed) {
            cr_assert_eq(st_zset_del(NULL, z, m, len), i < n);
            if (i < n) v[i] = v[--n];
        } else {
            cr_assert_eq(st_zset_set(NULL, z, m, len, s), i == n);
            if (i == n) memcpy(v[n].m, m, len), v[n].n = len, n++;
            v[i].s = s;
        }
        if (step % 197 == 0 || step > 11900) check(z, v, n);
        double sc;
        cr_assert_eq(st_zset_score(z, m, len, &sc), !removed, "the member table agrees");
    }
    check(z, v, n);
    st_zset_free(z);
}

/* Equal scores order by member bytes (shorter first on a common prefix),
 * and lex bounds count from there. */
Test(zset_core, equal_scores_and_lex_bounds)
{
    st_zset_t *z = st_zset_new(1);
    const char *ms[] = {"b", "a", "ab", "c", "", "abc"};
    for (int i = 0; i < 6; i++)
        cr_assert_eq(st_zset_set(NULL, z, ms[i], (uint32_t)strlen(ms[i]), 0), 1);
    const char *order[] = {"", "a", "ab", "abc", "b", "c"};
    for (uint32_t i = 0; i < 6; i++) {
        st_zel_t x;
        st_zset_at(z, i, &x);
        cr_expect(x.n == strlen(order[i]) && !memcmp(x.m, order[i], x.n), "rank %u", i);
    }
    cr_expect_eq(st_zset_rank_lex(z, "ab", 2, 0), 2);
    cr_expect_eq(st_zset_rank_lex(z, "ab", 2, 1), 3);
    cr_expect_eq(st_zset_rank_lex(z, "", 0, 0), 0);
    cr_expect_eq(st_zset_rank_lex(z, "", 0, 1), 1);
    cr_expect_eq(st_zset_rank_lex(z, "d", 1, 0), 6);
    cr_expect_eq(st_zset_set(NULL, z, "a", 1, 0), 0, "an existing member");
    cr_expect_eq(st_zset_del(NULL, z, "zz", 2), 0);
    st_zset_free(z);
}

/* The operations table: a copy and a checkpoint read back have the same
 * digest, members, scores (inf and -0 included) and encoding; a cut or
 * damaged stream is refused. */
Test(zset_core, ops_copy_and_checkpoint_round_trip)
{
    st_zset_t *z = st_zset_new(3);
    char m[16];
    for (int i = 0; i < 200; i++) {
        uint32_t len = (uint32_t)snprintf(m, sizeof(m), "k%d", i);
        st_zset_set(NULL, z, m, len,
                    i % 7 == 0   ? INFINITY
                    : i % 5 == 0 ? -0.0
                                 : (double)(i % 13) / 3);
    }
    st_zset_set_skiplist(z, 1);
    const st_type_ops_t *ops = ((st_obj_t *)z)->ops;
    cr_assert_eq(ops, &st_zset_ops);
    cr_expect_str_eq(ops->name, "zset");
    cr_expect_str_eq(ops->encoding((st_obj_t *)z), "skiplist");
    uint64_t d0, d1, d2;
    cr_assert_eq(ops->digest(NULL, (st_obj_t *)z, &d0), 0);
    st_obj_t *c = ops->dup((st_obj_t *)z);
    cr_assert_eq(ops->digest(NULL, c, &d1), 0);
    cr_expect_eq(d0, d1, "a copy digests alike");
    buf_t b;
    buf_init(&b);
    ops->ckpt_write((st_obj_t *)z, &b);
    st_obj_t *r = NULL;
    cr_assert_eq(ops->ckpt_read((const unsigned char *)b.data, b.len, &r), (long)b.len);
    cr_assert_eq(ops->digest(NULL, r, &d2), 0);
    cr_expect_eq(d0, d2, "a checkpoint reads back alike");
    cr_expect_str_eq(ops->encoding(r), "skiplist");
    st_zset_t *rz = (st_zset_t *)r;
    cr_assert_eq(st_zset_len(rz), 200);
    for (uint32_t i = 0; i < 200; i++) {
        st_zel_t x, y;
        st_zset_at(z, i, &x);
        st_zset_at(rz, i, &y);
        cr_assert(x.n == y.n && !memcmp(x.m, y.m, x.n));
        cr_assert(!memcmp(&x.score, &y.score, 8));
    }
    cr_assert_null(st_zset_check(rz));
    st_obj_t *bad = NULL;
    cr_expect_eq(ops->ckpt_read((const unsigned char *)b.data, b.len - 1, &bad), -1);
    b.data[0] = 9;
    cr_expect_eq(ops->ckpt_read((const unsigned char *)b.data, b.len, &bad), -1);
    cr_expect(ops->mem_usage((st_obj_t *)z) > 200 * 8);
    st_zset_t *e = st_zset_new(1);
    cr_expect_str_eq(st_zset_ops.encoding((st_obj_t *)e), "listpack");
    st_zset_free(e);
    buf_free(&b);
    ops->free(c);
    ops->free(r);
    ops->free((st_obj_t *)z);
}

/* A version 1 stream (before D65: the members in order with their
 * scores' bits) still loads, into RAM; one out of order is refused. */
Test(zset_core, a_version_1_checkpoint_still_loads)
{
    buf_t b;
    buf_init(&b);
    unsigned char hdr[14] = {1, 1};
    cmd_put_i64(hdr + 2, 77);
    cmd_put_u32(hdr + 10, 300);
    buf_append(&b, hdr, sizeof(hdr));
    for (int i = 0; i < 300; i++) {
        char m[16];
        unsigned char w[8];
        uint32_t n = (uint32_t)snprintf(m, sizeof(m), "v1-%04d", i);
        cmd_put_u32(w, n);
        buf_append(&b, w, 4);
        buf_append(&b, m, n);
        double s = i / 10;
        uint64_t u;
        memcpy(&u, &s, 8);
        cmd_put_i64(w, (int64_t)u);
        buf_append(&b, w, 8);
    }
    st_obj_t *o = NULL;
    cr_assert_eq(st_zset_ops.ckpt_read((const unsigned char *)b.data, b.len, &o), (long)b.len);
    st_zset_t *z = (st_zset_t *)o;
    cr_assert_eq(st_zset_len(z), 300);
    cr_expect_str_eq(st_zset_ops.encoding(o), "skiplist");
    cr_assert_null(st_zset_check(z));
    cr_assert_eq(st_zset_rank(z, "v1-0150", 7), 150);
    cr_assert_eq(st_zset_rank_score(z, 7, 0), 70);
    /* Written again, it is a version 2 stream that reads back alike. */
    buf_t c;
    buf_init(&c);
    st_zset_ops.ckpt_write(o, &c);
    cr_assert_eq(c.data[0], 2);
    st_obj_t *o2 = NULL;
    cr_assert_eq(st_zset_ops.ckpt_read((const unsigned char *)c.data, c.len, &o2), (long)c.len);
    uint64_t d1, d2;
    st_zset_ops.digest(NULL, o, &d1);
    st_zset_ops.digest(NULL, o2, &d2);
    cr_assert_eq(d1, d2);
    /* Two members swapped: not a stream AtticDB wrote. */
    memcpy(b.data + 14 + 4, "v1-0001", 7);
    memcpy(b.data + 14 + 19 + 4, "v1-0000", 7);
    st_obj_t *bad = NULL;
    cr_expect_eq(st_zset_ops.ckpt_read((const unsigned char *)b.data, b.len, &bad), -1);
    st_zset_ops.free(o);
    st_zset_ops.free(o2);
    buf_free(&b);
    buf_free(&c);
}
