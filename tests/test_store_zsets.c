/*
 * test_store_zsets.c - the store's sorted-set type (store/types/t_zset.c,
 * t_zset_read.c, zset_ops.c on core/zset.c) through the store harness:
 * encodings chosen from the limits each record carries (and never back,
 * except for new keys of the STORE forms), replies in Redis' words, refused
 * writes that change nothing, the pops, and a random workload whose replay
 * reaches the same digest and the same replies (sh_check_replay).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "store/core/entry.h"
#include "store/core/index.h"
#include "store/core/object.h"
#include "store/store-internal.h"
#include "store_harness.h"

#define T0 1000000

#define wr(t, id, ...)   sh_wr((t), (id), __VA_ARGS__)
#define rd(now, id, ...) sh_rd((now), 0, (id), __VA_ARGS__)
/* limits: entries in the low half, value bytes in the high half */
#define LIM  "#i64:274877907072" /* 128, 64: Redis' defaults */
#define LIM3 "#i64:274877906947" /* 3, 64 */
#define P2   "#u32:2"
#define P3   "#u32:3"

static void setup(void)
{
    sh_setup("zsets", 0, 42);
    sh_canonical_only = 1;
}

TestSuite(zsets, .init = setup, .fini = sh_teardown, .timeout = 120);

static const char *encoding(const char *key)
{
    return rd(T0, CMD_OBJECT, "encoding", key, NULL);
}

Test(zsets, encodings_follow_the_records_limits)
{
    cr_assert_str_eq(wr(T0, CMD_ZADD, "z", LIM3, P2, "1", "a", "2", "b", "3", "c", NULL), ":3\r\n");
    cr_assert_str_eq(encoding("z"), "$8\r\nlistpack\r\n");
    cr_assert_str_eq(wr(T0, CMD_ZADD, "z", LIM3, P2, "5", "a", NULL), ":0\r\n");
    cr_assert_str_eq(encoding("z"), "$8\r\nlistpack\r\n", "a new score adds no member");
    wr(T0, CMD_ZADD, "z", LIM3, P2, "4", "d", NULL);
    cr_assert_str_eq(encoding("z"), "$8\r\nskiplist\r\n");
    cr_assert_str_eq(wr(T0, CMD_ZREM, "z", "a", "b", "c", NULL), ":3\r\n");
    cr_assert_str_eq(encoding("z"), "$8\r\nskiplist\r\n", "never back");
    /* a long member converts; XX on an absent member adds nothing */
    char longm[80];
    memset(longm, 'x', sizeof(longm) - 1);
    longm[sizeof(longm) - 1] = 0;
    wr(T0, CMD_ZADD, "w", LIM, P2, "1", "a", NULL);
    wr(T0, CMD_ZADD, "w", LIM, P2, "XX", "1", longm, NULL);
    cr_assert_str_eq(encoding("w"), "$8\r\nlistpack\r\n");
    wr(T0, CMD_ZADD, "w", LIM, P2, "1", longm, NULL);
    cr_assert_str_eq(encoding("w"), "$8\r\nskiplist\r\n");
    /* a STORE form's new key is chosen from its size */
    cr_assert_str_eq(wr(T0, CMD_ZRANGESTORE, "d", LIM, "w", "0", "0", NULL), ":1\r\n");
    cr_assert_str_eq(encoding("d"), "$8\r\nlistpack\r\n");
    cr_assert_str_eq(wr(T0, CMD_ZUNIONSTORE, "d", LIM, "#u32:0", "1", "w", NULL), ":2\r\n");
    cr_assert_str_eq(encoding("d"), "$8\r\nskiplist\r\n");
    cr_assert_str_eq(rd(T0, CMD_TYPE, "d", NULL), "+zset\r\n");
    sh_check_replay("zsets");
}

Test(zsets, zadd_options_and_scores)
{
    cr_expect_str_eq(wr(T0, CMD_ZADD, "z", LIM, P2, "1.1", "a", "-inf", "b", NULL), ":2\r\n");
    cr_expect_str_eq(rd(T0, CMD_ZSCORE, "z", "a", NULL), "$18\r\n1.1000000000000001\r\n");
    cr_expect_str_eq(rd(T0, CMD_ZSCORE, "z", "b", NULL), "$4\r\n-inf\r\n");
    cr_expect_str_eq(wr(T0, CMD_ZADD, "z", LIM, P2, "CH", "GT", "0", "a", "2", "c", NULL),
                     ":1\r\n");
    cr_expect_str_eq(wr(T0, CMD_ZADD, "z", LIM, P3, "INCR", "1", "a", NULL),
                     ",2.1000000000000001\r\n");
    cr_expect_str_eq(wr(T0, CMD_ZADD, "z", LIM, P2, "NX", "INCR", "1", "a", NULL), "$-1\r\n");
    cr_expect_str_eq(wr(T0, CMD_ZADD, "z", LIM, "#u32:258", "-1", "a", NULL),
                     "$18\r\n1.1000000000000001\r\n");
    cr_expect_str_eq(wr(T0, CMD_ZADD, "z", LIM, "#u32:258", "+inf", "b", NULL),
                     "-ERR resulting score is not a number (NaN)\r\n");
    cr_expect_str_eq(wr(T0, CMD_ZADD, "z", LIM, P2, "NX", "XX", "1", "a", NULL),
                     "-ERR XX and NX options at the same time are not compatible\r\n");
    cr_expect_str_eq(wr(T0, CMD_ZADD, "z", LIM, P2, "GT", "LT", "1", "a", NULL),
                     "-ERR GT, LT, and/or NX options at the same time are not compatible\r\n");
    cr_expect_str_eq(wr(T0, CMD_ZADD, "z", LIM, P2, "INCR", "1", "a", "2", "b", NULL),
                     "-ERR INCR option supports a single increment-element pair\r\n");
    cr_expect_str_eq(wr(T0, CMD_ZADD, "z", LIM, P2, "nan", "a", NULL),
                     "-ERR value is not a valid float\r\n");
    cr_expect_str_eq(wr(T0, CMD_ZADD, "z", LIM, P2, "1", "a", "2", NULL), "-ERR syntax error\r\n");
    cr_expect_str_eq(rd(T0, CMD_ZRANGE, "z", "0", "-1", "WITHSCORES", NULL),
                     "*6\r\n$1\r\nb\r\n$4\r\n-inf\r\n$1\r\na\r\n$18\r\n1.1000000000000001\r\n"
                     "$1\r\nc\r\n$1\r\n2\r\n");
    wr(T0, CMD_SET, "s", "v", "#u32:0", "#i64:0", NULL);
    cr_expect_str_eq(wr(T0, CMD_ZADD, "s", LIM, P2, "x", "a", NULL),
                     "-ERR value is not a valid float\r\n", "scores before the type, as Redis");
    cr_expect_str_eq(wr(T0, CMD_ZADD, "s", LIM, P2, "1", "a", NULL),
                     "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    sh_check_replay("zsets");
}

Test(zsets, refused_writes_change_nothing)
{
    wr(T0, CMD_ZADD, "z", LIM, P2, "1", "a", "2", "b", NULL);
    uint64_t before, after;
    cr_assert_eq(store_digest(ctx, T0, &before), 0);
    wr(T0, CMD_ZADD, "z", LIM, P2, "1", "c", "x", "d", NULL);
    wr(T0, CMD_ZREMRANGEBYRANK, "z", "#u32:1", "a", "b", NULL);
    wr(T0, CMD_ZRANGESTORE, "d", LIM, "z", "0", "-1", "LIMIT", "0", "1", NULL);
    wr(T0, CMD_ZUNIONSTORE, "d", LIM, "#u32:0", "1", "z", "WEIGHTS", "x", NULL);
    cr_assert_eq(store_digest(ctx, T0, &after), 0);
    cr_assert_eq(after, before);
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "d", NULL), ":0\r\n");
    sh_check_replay("zsets");
}

Test(zsets, pops_and_ranges)
{
    wr(T0, CMD_ZADD, "z", LIM, P2, "1", "a", "2", "b", "3", "c", "4", "d", NULL);
    cr_expect_str_eq(wr(T0, CMD_ZPOPMIN, "z", "#u32:0", "#i64:-1", P3, NULL),
                     "*2\r\n$1\r\na\r\n,1\r\n");
    cr_expect_str_eq(wr(T0, CMD_ZPOPMIN, "z", "#u32:1", "#i64:2", P3, NULL),
                     "*2\r\n*2\r\n$1\r\nd\r\n,4\r\n*2\r\n$1\r\nc\r\n,3\r\n");
    cr_expect_str_eq(wr(T0, CMD_ZMPOP, "#u32:2", "#u32:0", "#i64:5", P2, "none", "z", NULL),
                     "*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n");
    cr_expect_str_eq(rd(T0, CMD_EXISTS, "z", NULL), ":0\r\n", "the last pop removes the key");
    cr_expect_str_eq(wr(T0, CMD_ZMPOP, "#u32:1", "#u32:0", "#i64:1", P3, "z", NULL), "_\r\n");
    wr(T0, CMD_ZADD, "l", LIM, P2, "0", "a", "0", "b", "0", "c", "0", "d", NULL);
    cr_expect_str_eq(rd(T0, CMD_ZRANGEBYLEX, "l", "(a", "[c", NULL),
                     "*2\r\n$1\r\nb\r\n$1\r\nc\r\n");
    cr_expect_str_eq(rd(T0, CMD_ZREVRANGEBYLEX, "l", "+", "-", "LIMIT", "1", "2", NULL),
                     "*2\r\n$1\r\nc\r\n$1\r\nb\r\n");
    cr_expect_str_eq(rd(T0, CMD_ZLEXCOUNT, "l", "-", "(c", NULL), ":2\r\n");
    cr_expect_str_eq(rd(T0, CMD_ZREVRANK, "l", "a", NULL), ":3\r\n");
    cr_expect_str_eq(wr(T0, CMD_ZREMRANGEBYRANK, "l", "#u32:2", "[b", "[c", NULL), ":2\r\n");
    cr_expect_str_eq(rd(T0, CMD_ZRANGE, "l", "0", "-1", NULL), "*2\r\n$1\r\na\r\n$1\r\nd\r\n");
    sh_check_replay("zsets");
}

Test(zsets, random_sequence_replays_alike)
{
    static const char *const mins[] = {"-inf", "(1", "2", "0"};
    static const char *const maxs[] = {"+inf", "(5", "3", "9"};
    uint64_t s = 7;
    for (int i = 0; i < 3000; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        unsigned r = (unsigned)(s >> 33);
        char key[8], key2[8], m[16], sc[32], cnt[32];
        snprintf(key, sizeof(key), "z%u", r % 4);
        snprintf(key2, sizeof(key2), "z%u", (r >> 3) % 4);
        snprintf(m, sizeof(m), "m%u", (r >> 6) % 40);
        snprintf(sc, sizeof(sc), "%d.%u", (int)((r >> 12) % 10) - 2, (r >> 16) % 4);
        snprintf(cnt, sizeof(cnt), "#i64:%d", (int)((r >> 18) % 4) - 1);
        const char *lim = (r >> 24) % 2 ? LIM : LIM3;
        switch ((r >> 20) % 10) {
        case 0:
        case 1:
        case 2:
            wr(T0 + i, CMD_ZADD, key, lim, P2, sc, m, NULL);
            break;
        case 3:
            wr(T0 + i, CMD_ZADD, key, lim, "#u32:258", sc, m, NULL);
            break;
        case 4:
            wr(T0 + i, CMD_ZREM, key, m, NULL);
            break;
        case 5:
            wr(T0 + i, CMD_ZPOPMIN, key, "#u32:1", cnt, P2, NULL);
            break;
        case 6:
            wr(T0 + i, CMD_ZREMRANGEBYRANK, key, "#u32:1", mins[(r >> 26) % 4], maxs[(r >> 28) % 4],
               NULL);
            break;
        case 7:
            wr(T0 + i, CMD_ZRANGESTORE, key2, lim, key, mins[(r >> 26) % 4], maxs[(r >> 28) % 4],
               "BYSCORE", NULL);
            break;
        case 8:
            wr(T0 + i, CMD_ZUNIONSTORE, "dst", lim, "#u32:1", "2", key, key2, "WEIGHTS", "2", "1",
               NULL);
            break;
        default:
            wr(T0 + i, CMD_ZMPOP, "#u32:2", "#u32:0", "#i64:2", P2, key, key2, NULL);
            break;
        }
    }
    sh_check_replay("zsets");
}

/* MEMORY USAGE counts the zset's members (the object's RAM), not only
 * its key's entry. */
Test(zsets, memory_usage_counts_the_members)
{
    wr(T0, CMD_ZADD, "one", LIM, P2, "1", "a", NULL);
    long long small = atoll(rd(T0, CMD_MEMORY, "usage", "one", NULL) + 1);
    for (int i = 0; i < 100; i++) {
        char m[16];
        snprintf(m, sizeof m, "member-%d", i);
        wr(T0, CMD_ZADD, "many", LIM, P2, "1", m, NULL);
    }
    long long large = atoll(rd(T0, CMD_MEMORY, "usage", "many", NULL) + 1);
    cr_assert_gt(small, 40);
    cr_assert_gt(large, small + 100 * 40, "%lld vs %lld", large, small);
}

/* The number of times member m (a bulk string) appears in text. */
static int count_in(const char *text, const char *m)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\r\n%s\r\n", m);
    int n = 0;
    for (const char *p = text; (p = strstr(p, pat)); p += 2)
        n++;
    return n;
}

/* ZRANDMEMBER: a positive count picks distinct members (all of them when
 * it passes the size), a negative one |count| members that exist. */
Test(zsets, zrandmember_counts)
{
    wr(T0, CMD_ZADD, "z", LIM, P2, "1", "m1", "2", "m2", "3", "m3", "4", "m4", "5", "m5", NULL);
    for (int round = 0; round < 20; round++) {
        const char *r = rd(T0, CMD_ZRANDMEMBER, "z", "3", NULL);
        cr_assert_eq(strncmp(r, "*3\r\n", 4), 0, "%s", r);
        int total = 0;
        for (int i = 1; i <= 5; i++) {
            char m[8];
            snprintf(m, sizeof m, "m%d", i);
            int n = count_in(r, m);
            cr_assert_leq(n, 1, "distinct: %s", r);
            total += n;
        }
        cr_assert_eq(total, 3);
    }
    static char all[256];
    rd(T0, CMD_ZRANGE, "z", "0", "-1", NULL);
    memcpy(all, reply, reply_len + 1);
    cr_assert_str_eq(rd(T0, CMD_ZRANDMEMBER, "z", "9", NULL), all, "the whole set, in order");
    const char *r = rd(T0, CMD_ZRANDMEMBER, "z", "-12", "WITHSCORES", NULL);
    cr_assert_eq(strncmp(r, "*24\r\n", 5), 0, "%s", r);
}

/* ZSCAN of a skiplist: a whole walk, however small COUNT is, returns
 * every member once, with its score. */
Test(zsets, zscan_skiplist_walk)
{
    for (int i = 0; i < 300; i++) {
        char m[16], sc[16];
        snprintf(m, sizeof m, "m%03d", i);
        snprintf(sc, sizeof sc, "%d", i % 7);
        wr(T0, CMD_ZADD, "z", LIM, P2, sc, m, NULL);
    }
    cr_assert_str_eq(encoding("z"), "$8\r\nskiplist\r\n");
    static int seen[300];
    char cursor[32] = "0";
    int calls = 0;
    do {
        const char *r = rd(T0, CMD_ZSCAN, "z", cursor, "COUNT", "7", NULL);
        cr_assert_eq(strncmp(r, "*2\r\n$", 5), 0);
        const char *p = strchr(r + 5, '\n') + 1; /* the cursor's text */
        size_t n = strcspn(p, "\r");
        memcpy(cursor, p, n);
        cursor[n] = 0;
        for (const char *q = r; (q = strstr(q, "\r\nm")); q += 3)
            seen[atoi(q + 3)]++;
        cr_assert_lt(++calls, 1000);
    } while (strcmp(cursor, "0"));
    for (int i = 0; i < 300; i++)
        cr_assert_eq(seen[i], 1, "m%03d seen %d times", i, seen[i]);
}

Test(zsets, checkpoint_round_trip)
{
    wr(T0, CMD_ZADD, "z", LIM3, P2, "1", "a", "2.5", "b", "-inf", "c", "7", "d", NULL);
    idx_entry_t **slot = idx_find(&ctx->dbs[0]->ix, "z", 1);
    cr_assert_not_null(slot);
    st_obj_t *o = st_ent_obj(*slot);
    const st_type_ops_t *ops = st_type_ops(ST_ZSET);
    cr_assert_eq(o->ops, ops);
    buf_t b1, b2;
    buf_init(&b1);
    buf_init(&b2);
    ops->ckpt_write(o, &b1);
    st_obj_t *copy = NULL;
    cr_assert_eq(ops->ckpt_read((const unsigned char *)b1.data, b1.len, &copy), (long)b1.len);
    ops->ckpt_write(copy, &b2);
    cr_assert(b1.len == b2.len && memcmp(b1.data, b2.data, b1.len) == 0);
    cr_assert_str_eq(ops->encoding(copy), "skiplist");
    ops->free(copy);
    buf_free(&b1);
    buf_free(&b2);
}
