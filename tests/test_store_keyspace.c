/*
 * test_store_keyspace.c - unit tests of the store's keyspace commands
 * (store/types/keyspace.c; their encoders: test_encode_keys.c): RENAME,
 * COPY, MOVE, SWAPDB, FLUSHDB, TYPE, TOUCH, EXPIRETIME, KEYS, SCAN and
 * RANDOMKEY, across databases (records whose op word names another db),
 * with expiry by the apply clock, the SCAN guarantee across resizes, the
 * per-database counters INFO keyspace shows, and replay: the same records
 * applied again, silently, give the same state.
 *
 * Records are written into real segment files at their LSN offsets (as the
 * logger would) and applied with store_apply, with tests/store_harness.c;
 * replies are compared byte for byte with Redis 7.0's.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "command.h"
#include "config.h"
#include "record.h"
#include "store/core/index.h"
#include "store/store-internal.h"
#include "store_harness.h"

/* ---- records (the miniature logger is store_harness.c) ------------------- */

/* A write in database db at time t; a read in database db, answered at now
 * (NULL-terminated arguments: strings, or "#u32:<n>" / "#i64:<n>"). */
#define wr(t, db, op, ...)   sh_wr((t), REC_OP_DB((op), (db)), __VA_ARGS__)
#define rd(now, db, op, ...) sh_rd((now), (db), (op), __VA_ARGS__)

#define T0  1000000
#define OK  "+OK\r\n"
#define NIL "$-1\r\n"
#define I0  ":0\r\n"
#define I1  ":1\r\n"

/* SET key value [expire_at]: the canonical SET form. */
static const char *set(int64_t t, unsigned db, const char *k, const char *v, int64_t at)
{
    char x[32];
    snprintf(x, sizeof(x), "#i64:%lld", (long long)at);
    return wr(t, db, CMD_SET, k, v, "#u32:0", x, NULL);
}

static const char *pexpireat(int64_t t, unsigned db, const char *k, int64_t at)
{
    char x[32];
    snprintf(x, sizeof(x), "#i64:%lld", (long long)at);
    return wr(t, db, CMD_PEXPIREAT, k, x, "#u32:0", NULL);
}

static const char *rename_(int64_t t, unsigned db, const char *k, const char *nk, int nx)
{
    return wr(t, db, CMD_RENAME, k, nk, nx ? "#u32:1" : "#u32:0", NULL);
}

static const char *copy(int64_t t, unsigned db, const char *k, const char *nk, unsigned dst,
                        int replace)
{
    char d[32];
    snprintf(d, sizeof(d), "#u32:%u", dst);
    return wr(t, db, CMD_COPY, k, nk, d, replace ? "#u32:1" : "#u32:0", NULL);
}

static const char *move(int64_t t, unsigned db, const char *k, unsigned dst)
{
    char d[32];
    snprintf(d, sizeof(d), "#u32:%u", dst);
    return wr(t, db, CMD_MOVE, k, d, NULL);
}

static const char *swapdb(int64_t t, unsigned x, unsigned y)
{
    char a[32], b[32];
    snprintf(a, sizeof(a), "#u32:%u", x);
    snprintf(b, sizeof(b), "#u32:%u", y);
    return wr(t, 0, CMD_SWAPDB, a, b, NULL);
}

static void setup(void)
{
    sh_setup("ks", 16, 1234);
}

TestSuite(keyspace, .init = setup, .fini = sh_teardown);

static uint64_t db_keys(int db)
{
    uint64_t k, e;
    store_db_stats(ctx, db, &k, &e);
    return k;
}

static uint64_t db_expires(int db)
{
    uint64_t k, e;
    store_db_stats(ctx, db, &k, &e);
    return e;
}

static const char *big(char fill)
{
    static char v[4][200];
    static int next;
    char *p = v[next++ % 4];
    memset(p, fill, 150);
    p[150] = 0;
    return p;
}

/* ---- RENAME ------------------------------------------------------------- */

Test(keyspace, rename_basics)
{
    cr_assert_str_eq(rename_(T0, 0, "nokey", "x", 0), "-ERR no such key\r\n");
    cr_assert_str_eq(rename_(T0, 0, "nokey", "nokey", 1), "-ERR no such key\r\n");
    set(T0, 0, "a", "1", 0);
    cr_assert_str_eq(rename_(T0, 0, "a", "a", 0), OK, "onto itself");
    cr_assert_str_eq(rename_(T0, 0, "a", "a", 1), I0, "RENAMENX onto itself");
    cr_assert_str_eq(rename_(T0, 0, "a", "b", 0), OK);
    cr_assert_str_eq(rd(T0, 0, CMD_EXISTS, "a", NULL), I0);
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "b", NULL), "$1\r\n1\r\n");
    set(T0, 0, "c", "3", 0);
    cr_assert_str_eq(rename_(T0, 0, "c", "b", 1), I0, "NX: the destination exists");
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "c", NULL), "$1\r\n3\r\n");
    cr_assert_str_eq(rename_(T0, 0, "c", "b", 0), OK, "overwrites");
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "b", NULL), "$1\r\n3\r\n");
    cr_assert_str_eq(rename_(T0, 0, "b", "d", 1), I1);
    cr_assert_str_eq(rd(T0, 0, CMD_DBSIZE, NULL), I1);
    cr_assert_eq(db_keys(0), 1);
}

Test(keyspace, rename_moves_value_ttl_and_extents)
{
    set(T0, 0, "big", big('x'), T0 + 5000);
    wr(T0, 0, CMD_APPEND, "list", big('y'), NULL);
    wr(T0, 0, CMD_APPEND, "list", big('z'), NULL); /* an extent list now */
    set(T0, 0, "dst", "old", T0 + 9000);
    uint64_t bytes = store_index_bytes(ctx);
    cr_assert_eq(store_expire_count(ctx), 2);
    cr_assert_str_eq(rename_(T0, 0, "big", "dst", 0), OK);
    cr_assert_str_eq(rd(T0, 0, CMD_PTTL, "dst", NULL), ":5000\r\n", "the TTL moves with the key");
    rd(T0, 0, CMD_GET, "dst", NULL);
    cr_assert_eq(reply_len, 150 + 8);
    cr_assert(memcmp(reply + 6, big('x'), 150) == 0);
    cr_assert_eq(store_expire_count(ctx), 1);
    cr_assert_eq(db_expires(0), 1);
    cr_assert_str_eq(rename_(T0, 0, "list", "LIST", 0), OK);
    rd(T0, 0, CMD_GET, "LIST", NULL);
    cr_assert_eq(reply_len, 300 + 8);
    cr_assert(memcmp(reply + 6, big('y'), 150) == 0 && memcmp(reply + 156, big('z'), 150) == 0);
    /* The list came along: appending to it still works. */
    cr_assert_str_eq(wr(T0, 0, CMD_APPEND, "LIST", "!", NULL), ":301\r\n");
    /* Same-length keys, one entry fewer (dst was replaced): accounting holds. */
    cr_assert_str_eq(rename_(T0, 0, "dst", "big", 0), OK);
    cr_assert_lt(store_index_bytes(ctx), bytes);
    cr_assert_str_eq(rd(T0, 0, CMD_PTTL, "big", NULL), ":5000\r\n");
    cr_assert_str_eq(rename_(T0, 0, "big", "nottl", 0), OK);
    cr_assert_str_eq(wr(T0, 0, CMD_PERSIST, "nottl", NULL), I1);
    cr_assert_eq(store_expire_count(ctx), 0);
    cr_assert_eq(db_expires(0), 0);
}

Test(keyspace, rename_and_expiry_by_the_apply_clock)
{
    set(T0, 0, "a", "1", T0 + 100);
    set(T0, 0, "b", "2", T0 + 100);
    set(T0, 0, "c", "3", 0);
    cr_assert_str_eq(rename_(T0 + 100, 0, "a", "x", 0), "-ERR no such key\r\n",
                     "expired at the record's time");
    cr_assert_eq(store_key_count(ctx), 2, "and reaped");
    cr_assert_str_eq(rename_(T0 + 100, 0, "c", "b", 1), I1, "an expired destination is absent");
    cr_assert_str_eq(rd(T0 + 100, 0, CMD_TTL, "b", NULL), ":-1\r\n");
    cr_assert_eq(store_expire_count(ctx), 0);
}

/* ---- COPY --------------------------------------------------------------- */

Test(keyspace, copy_basics)
{
    cr_assert_str_eq(copy(T0, 0, "nokey", "x", 0, 0), I0);
    set(T0, 0, "a", "1", T0 + 7000);
    cr_assert_str_eq(copy(T0, 0, "a", "b", 0, 0), I1);
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "b", NULL), "$1\r\n1\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_PTTL, "b", NULL), ":7000\r\n", "the TTL is copied");
    cr_assert_str_eq(rd(T0, 0, CMD_PTTL, "a", NULL), ":7000\r\n");
    cr_assert_eq(db_expires(0), 2);
    set(T0, 0, "a", "2", 0);
    cr_assert_str_eq(copy(T0, 0, "a", "b", 0, 0), I0, "the destination exists");
    cr_assert_str_eq(copy(T0, 0, "a", "b", 0, 1), I1, "REPLACE");
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "b", NULL), "$1\r\n2\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_TTL, "b", NULL), ":-1\r\n", "replaced TTL and all");
    cr_assert_eq(db_expires(0), 0);
    /* Refused forms (the frontend never sends them) change nothing. */
    cr_assert_str_eq(copy(T0, 0, "a", "a", 0, 1),
                     "-ERR source and destination objects are the same\r\n");
    cr_assert_str_eq(copy(T0, 0, "a", "z", 16, 1), "-ERR DB index is out of range\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_DBSIZE, NULL), ":2\r\n");
}

Test(keyspace, copy_is_deep)
{
    wr(T0, 0, CMD_APPEND, "src", big('a'), NULL);
    wr(T0, 0, CMD_APPEND, "src", big('b'), NULL);
    uint64_t one = store_index_bytes(ctx);
    cr_assert_str_eq(copy(T0, 0, "src", "dst", 0, 0), I1);
    /* Appending to either must not show in the other: separate lists. */
    for (int i = 0; i < 10; i++)
        wr(T0, 0, CMD_APPEND, "dst", "-more-bytes-than-inline-", NULL);
    cr_assert_str_eq(rd(T0, 0, CMD_STRLEN, "src", NULL), ":300\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_STRLEN, "dst", NULL), ":540\r\n");
    wr(T0, 0, CMD_APPEND, "src", "x", NULL);
    cr_assert_str_eq(rd(T0, 0, CMD_STRLEN, "src", NULL), ":301\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_STRLEN, "dst", NULL), ":540\r\n");
    rd(T0, 0, CMD_GET, "dst", NULL);
    cr_assert(memcmp(reply + 6, big('a'), 150) == 0 && memcmp(reply + 156, big('b'), 150) == 0);
    /* Deleting the copy gives its bytes back (the lists were not shared). */
    wr(T0, 0, CMD_DEL, "dst", NULL);
    wr(T0, 0, CMD_DEL, "src", NULL);
    wr(T0, 0, CMD_APPEND, "src", big('a'), NULL);
    wr(T0, 0, CMD_APPEND, "src", big('b'), NULL);
    cr_assert_eq(store_index_bytes(ctx), one);
}

Test(keyspace, copy_to_another_db)
{
    set(T0, 0, "k", big('q'), T0 + 3000);
    cr_assert_str_eq(copy(T0, 0, "k", "k", 3, 0), I1, "same key, other db");
    cr_assert_eq(db_keys(3), 1);
    cr_assert_eq(db_expires(3), 1);
    cr_assert_str_eq(rd(T0, 3, CMD_PTTL, "k", NULL), ":3000\r\n");
    rd(T0, 3, CMD_GET, "k", NULL);
    cr_assert(memcmp(reply + 6, big('q'), 150) == 0);
    cr_assert_str_eq(copy(T0, 0, "k", "k", 3, 0), I0);
    set(T0, 0, "k", "new", 0);
    cr_assert_str_eq(copy(T0, 0, "k", "k", 3, 1), I1);
    cr_assert_str_eq(rd(T0, 3, CMD_GET, "k", NULL), "$3\r\nnew\r\n");
    cr_assert_eq(db_expires(3), 0);
    /* From another db into db 0, and expired sources. */
    set(T0, 5, "e", "v", T0 + 10);
    cr_assert_str_eq(copy(T0 + 10, 5, "e", "e", 0, 0), I0, "expired by the record's time");
    cr_assert_eq(db_keys(5), 0, "and reaped");
    cr_assert_str_eq(rd(T0, 0, CMD_EXISTS, "e", NULL), I0);
}

/* ---- MOVE --------------------------------------------------------------- */

Test(keyspace, move_between_dbs)
{
    cr_assert_str_eq(move(T0, 0, "nokey", 1), I0);
    set(T0, 0, "k", big('m'), T0 + 4000);
    set(T0, 0, "other", "1", 0);
    uint64_t bytes = store_index_bytes(ctx);
    cr_assert_str_eq(move(T0, 0, "k", 1), I1);
    cr_assert_eq(store_index_bytes(ctx), bytes, "moved, not copied");
    cr_assert_str_eq(rd(T0, 0, CMD_EXISTS, "k", NULL), I0);
    cr_assert_str_eq(rd(T0, 1, CMD_PTTL, "k", NULL), ":4000\r\n");
    rd(T0, 1, CMD_GET, "k", NULL);
    cr_assert(memcmp(reply + 6, big('m'), 150) == 0);
    cr_assert_eq(db_keys(0), 1);
    cr_assert_eq(db_expires(0), 0);
    cr_assert_eq(db_keys(1), 1);
    cr_assert_eq(db_expires(1), 1);
    cr_assert_eq(store_expire_count(ctx), 1);
    set(T0, 0, "k", "again", 0);
    cr_assert_str_eq(move(T0, 0, "k", 1), I0, "exists in the destination");
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "k", NULL), "$5\r\nagain\r\n");
    /* An expired destination does not block; an expired source is absent. */
    cr_assert_str_eq(move(T0 + 4000, 0, "k", 1), I1);
    cr_assert_str_eq(rd(T0 + 4000, 1, CMD_GET, "k", NULL), "$5\r\nagain\r\n");
    cr_assert_eq(db_expires(1), 0);
    set(T0 + 4000, 2, "x", "v", T0 + 4001);
    cr_assert_str_eq(move(T0 + 4001, 2, "x", 0), I0);
    cr_assert_eq(db_keys(2), 0);
    cr_assert_str_eq(move(T0, 0, "other", 0),
                     "-ERR source and destination objects are the same\r\n");
    cr_assert_str_eq(move(T0, 0, "other", 99), "-ERR DB index is out of range\r\n");
    cr_assert_eq(db_keys(0), 1);
}

/* ---- SWAPDB, FLUSHDB ---------------------------------------------------- */

Test(keyspace, swapdb)
{
    set(T0, 0, "zero", "0", 0);
    set(T0, 1, "one", "1", T0 + 5000);
    set(T0, 1, "uno", "1", 0);
    cr_assert_str_eq(swapdb(T0, 0, 1), OK);
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "one", NULL), "$1\r\n1\r\n");
    cr_assert_str_eq(rd(T0, 1, CMD_GET, "zero", NULL), "$1\r\n0\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_DBSIZE, NULL), ":2\r\n");
    cr_assert_eq(db_keys(0), 2);
    cr_assert_eq(db_expires(0), 1);
    cr_assert_eq(db_keys(1), 1);
    cr_assert_eq(db_expires(1), 0);
    cr_assert_str_eq(swapdb(T0, 1, 1), OK, "with itself: nothing");
    cr_assert_eq(db_keys(1), 1);
    cr_assert_str_eq(swapdb(T0, 0, 16), "-ERR DB index is out of range\r\n");
    /* Writes after the swap land in the right table. */
    set(T0, 0, "new0", "x", 0);
    cr_assert_str_eq(swapdb(T0, 1, 0), OK);
    cr_assert_str_eq(rd(T0, 1, CMD_EXISTS, "one", "uno", "new0", NULL), ":3\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_EXISTS, "zero", NULL), I1);
    /* Active expiry still finds every TTL wherever its db went. */
    set(T0, 7, "seven", "7", 0);
    swapdb(T0, 7, 1);
    wr(T0 + 5000, 0, CMD_TICK, NULL);
    while (store_maintain(ctx, 4)) {
    }
    cr_assert_eq(store_expire_count(ctx), 0);
    cr_assert_eq(db_keys(7), 2);
    cr_assert_eq(db_keys(1), 1);
}

Test(keyspace, swapdb_during_an_active_expiry_pass)
{
    for (int i = 0; i < 10; i++) {
        char k[16];
        snprintf(k, sizeof(k), "x%d", i);
        set(T0, 0, k, "v", T0 + 10);
        set(T0, 1, k, "v", T0 + 10);
    }
    wr(T0 + 10, 0, CMD_TICK, NULL);
    /* 16 buckets of db 0, then a few of db 1: the pass is inside db 1. */
    cr_assert_eq(store_maintain(ctx, 20), 1);
    cr_assert_eq(db_keys(0), 0);
    cr_assert_gt(db_keys(1), 0);
    swapdb(T0 + 10, 0, 1); /* same apply clock: no new pass by the clock */
    while (store_maintain(ctx, 20)) {
    }
    cr_assert_eq(store_key_count(ctx), 0, "the db swapped into slot 0 was reclaimed too");
    cr_assert_eq(store_expire_count(ctx), 0);
}

Test(keyspace, flushdb_only_its_db)
{
    set(T0, 0, "a", "1", T0 + 1000);
    set(T0, 0, "b", big('f'), 0);
    set(T0, 4, "c", "1", T0 + 1000);
    cr_assert_str_eq(wr(T0, 0, CMD_FLUSHDB, NULL), OK);
    cr_assert_eq(db_keys(0), 0);
    cr_assert_eq(db_expires(0), 0);
    cr_assert_eq(db_keys(4), 1);
    cr_assert_eq(store_expire_count(ctx), 1);
    cr_assert_str_eq(wr(T0, 4, CMD_FLUSHDB, NULL), OK);
    cr_assert_eq(store_key_count(ctx), 0);
    cr_assert_eq(store_expire_count(ctx), 0);
    store_ctx_t *fresh = store_ctx_create(&cfg, 1);
    cr_assert_eq(store_index_bytes(ctx), store_index_bytes(fresh), "every byte given back");
    store_ctx_destroy(fresh);
    cr_assert_str_eq(wr(T0, 0, CMD_FLUSHDB, NULL), OK, "an empty db");
}

/* ---- simple reads ------------------------------------------------------- */

Test(keyspace, type_touch_expiretime)
{
    set(T0, 0, "k", "v", 0);
    set(T0, 0, "t", "v", 1796223547499);
    set(T0, 0, "u", "v", 1796223547500);
    cr_assert_str_eq(rd(T0, 0, CMD_TYPE, "k", NULL), "+string\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_TYPE, "nokey", NULL), "+none\r\n");
    cr_assert_str_eq(rd(T0, 1, CMD_TYPE, "k", NULL), "+none\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_TOUCH, "k", "k", "t", "nokey", NULL), ":3\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_EXPIRETIME, "nokey", NULL), ":-2\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_EXPIRETIME, "k", NULL), ":-1\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_PEXPIRETIME, "k", NULL), ":-1\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_EXPIRETIME, "t", NULL), ":1796223547\r\n", "rounded");
    cr_assert_str_eq(rd(T0, 0, CMD_EXPIRETIME, "u", NULL), ":1796223548\r\n", "rounded up");
    cr_assert_str_eq(rd(T0, 0, CMD_PEXPIRETIME, "u", NULL), ":1796223547500\r\n");
    /* Expired at read time: hidden, not removed. */
    set(T0, 0, "e", "v", T0 + 10);
    cr_assert_str_eq(rd(T0 + 10, 0, CMD_TYPE, "e", NULL), "+none\r\n");
    cr_assert_str_eq(rd(T0 + 10, 0, CMD_TOUCH, "e", NULL), I0);
    cr_assert_str_eq(rd(T0 + 10, 0, CMD_PEXPIRETIME, "e", NULL), ":-2\r\n");
    cr_assert_str_eq(rd(T0 + 9, 0, CMD_PEXPIRETIME, "e", NULL), ":1000010\r\n");
    cr_assert_eq(db_keys(0), 4);
    cr_assert_str_eq(rd(T0, 0, CMD_TYPE, NULL),
                     "-ERR wrong number of arguments for 'type' command\r\n");
}

/* The keys of an array reply, sorted, joined by spaces. */
static char *sorted_keys(const char *r, size_t len, size_t *count)
{
    char **keys = NULL;
    size_t n = 0;
    const char *p = r, *end = r + len;
    while (p < end) {
        const char *eol = strstr(p, "\r\n");
        if (*p == '$') {
            size_t l = strtoul(p + 1, NULL, 10);
            keys = realloc(keys, (n + 1) * sizeof(*keys));
            keys[n++] = strndup(eol + 2, l);
            p = eol + 2 + l + 2;
        } else {
            p = eol + 2;
        }
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
            char *t = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = t;
        }
    size_t total = 1;
    for (size_t i = 0; i < n; i++)
        total += strlen(keys[i]) + 1;
    char *out = calloc(1, total);
    for (size_t i = 0; i < n; i++) {
        if (i) strcat(out, " ");
        strcat(out, keys[i]);
        free(keys[i]);
    }
    free(keys);
    if (count) *count = n;
    return out;
}

Test(keyspace, keys_patterns)
{
    cr_assert_str_eq(rd(T0, 0, CMD_KEYS, "*", NULL), "*0\r\n");
    wr(T0, 0, CMD_MSET, "hello", "1", "hallo", "1", "hxllo", "1", "hllo", "1", "heeeello", "1",
       "a*b", "1", NULL);
    set(T0, 0, "hexpired", "1", T0 + 5);
    set(T0, 1, "hother", "1", 0);
    rd(T0 + 5, 0, CMD_KEYS, "*", NULL);
    char *k = sorted_keys(reply, reply_len, NULL);
    cr_assert_str_eq(k, "a*b hallo heeeello hello hllo hxllo");
    free(k);
    cr_assert_eq(strncmp(reply, "*6\r\n", 4), 0);
    rd(T0 + 5, 0, CMD_KEYS, "h?llo", NULL);
    k = sorted_keys(reply, reply_len, NULL);
    cr_assert_str_eq(k, "hallo hello hxllo");
    free(k);
    rd(T0 + 5, 0, CMD_KEYS, "h[ae]llo", NULL);
    k = sorted_keys(reply, reply_len, NULL);
    cr_assert_str_eq(k, "hallo hello");
    free(k);
    cr_assert_str_eq(rd(T0, 0, CMD_KEYS, "a\\*b", NULL), "*1\r\n$3\r\na*b\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_KEYS, "h*z", NULL), "*0\r\n");
    rd(T0, 0, CMD_KEYS, "h*", NULL);
    k = sorted_keys(reply, reply_len, NULL);
    cr_assert_str_eq(k, "hallo heeeello hello hexpired hllo hxllo", "not expired yet at T0");
    free(k);
    cr_assert_str_eq(rd(T0, 1, CMD_KEYS, "*", NULL), "*1\r\n$6\r\nhother\r\n");
    store_set_max_reply(ctx, 50);
    cr_assert_str_eq(rd(T0, 0, CMD_KEYS, "*", NULL), "-" STORE_ERR_TOO_LARGE "\r\n");
    cr_assert_str_eq(rd(T0, 1, CMD_KEYS, "*", NULL), "*1\r\n$6\r\nhother\r\n");
}

/* ---- SCAN --------------------------------------------------------------- */

Test(keyspace, scan_errors)
{
    const char *syntax = "-ERR syntax error\r\n", *cursor = "-ERR invalid cursor\r\n";
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "x", NULL), cursor);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, " 0", NULL), cursor);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "0 ", NULL), cursor);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "0x1", NULL), cursor);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "+", NULL), cursor);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "-", NULL), cursor);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "18446744073709551616", NULL), cursor);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "x", "count", "0", NULL), cursor, "cursor first");
    const char *empty = "*2\r\n$1\r\n0\r\n*0\r\n";
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "", NULL), empty, "strtoul(\"\") is 0");
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "+0", NULL), empty);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "-1", NULL), empty);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "18446744073709551615", NULL), empty);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "0", "count", "0", NULL), syntax);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "0", "count", "-1", NULL), syntax);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "0", "count", "x", NULL),
                     "-ERR value is not an integer or out of range\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "0", "count", NULL), syntax);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "0", "match", NULL), syntax);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "0", "type", NULL), syntax);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "0", "foo", "bar", NULL), syntax);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "0", "COUNT", "5", "count", "9223372036854775807", NULL),
                     empty);
}

Test(keyspace, scan_filters)
{
    wr(T0, 0, CMD_MSET, "a1", "1", "a2", "1", "b1", "1", NULL);
    set(T0, 0, "a3", "1", T0 + 5);
    char *k;
    rd(T0 + 5, 0, CMD_SCAN, "0", NULL);
    cr_assert_eq(strncmp(reply, "*2\r\n$1\r\n0\r\n*3\r\n", 15), 0, "%s", reply);
    k = sorted_keys(reply + 11, reply_len - 11, NULL);
    cr_assert_str_eq(k, "a1 a2 b1");
    free(k);
    rd(T0 + 5, 0, CMD_SCAN, "0", "MATCH", "a*", NULL);
    k = sorted_keys(reply + 11, reply_len - 11, NULL);
    cr_assert_str_eq(k, "a1 a2");
    free(k);
    rd(T0, 0, CMD_SCAN, "0", "match", "a*", "type", "STRING", NULL);
    k = sorted_keys(reply + 11, reply_len - 11, NULL);
    cr_assert_str_eq(k, "a1 a2 a3");
    free(k);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "0", "type", "list", NULL), "*2\r\n$1\r\n0\r\n*0\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "0", "type", "foo", NULL), "*2\r\n$1\r\n0\r\n*0\r\n");
    /* Redis 7.0: TYPE none lists keys expired but not reclaimed yet. */
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "0", "type", "none", NULL), "*2\r\n$1\r\n0\r\n*0\r\n");
    cr_assert_str_eq(rd(T0 + 5, 0, CMD_SCAN, "0", "type", "none", NULL),
                     "*2\r\n$1\r\n0\r\n*1\r\n$2\r\na3\r\n");
    cr_assert_str_eq(rd(T0 + 5, 0, CMD_SCAN, "0", "type", "none", "match", "b*", NULL),
                     "*2\r\n$1\r\n0\r\n*0\r\n");
}

/* Names of the keys of a SCAN reply, added to seen[] by number ("k<n>"). */
static uint64_t scan_step(unsigned db, uint64_t cursor, const char *count, unsigned char *seen,
                          int nseen, size_t *returned)
{
    char cur[32];
    snprintf(cur, sizeof(cur), "%llu", (unsigned long long)cursor);
    rd(T0, db, CMD_SCAN, cur, "COUNT", count, NULL);
    cr_assert_eq(reply[0], '*', "%s", reply);
    const char *p = strstr(reply, "\r\n$") + 3;
    uint64_t next = strtoull(strstr(p, "\r\n") + 2, NULL, 10);
    p = strstr(strstr(p, "\r\n") + 2, "\r\n") + 2; /* the keys array */
    size_t n = strtoul(p + 1, NULL, 10);
    p = strstr(p, "\r\n") + 2;
    for (size_t i = 0; i < n; i++) {
        size_t l = strtoul(p + 1, NULL, 10);
        const char *key = strstr(p, "\r\n") + 2;
        int num = atoi(key + 1);
        if (key[0] == 'k' && num >= 0 && num < nseen) seen[num] = 1;
        p = key + l + 2;
    }
    if (returned) *returned += n;
    return next;
}

static void set_k(unsigned db, int i)
{
    char k[32];
    snprintf(k, sizeof(k), "k%d", i);
    set(T0, db, k, "v", 0);
}

Test(keyspace, scan_returns_every_key_across_growth)
{
    static unsigned char seen[20000];
    const int first = 300;
    for (int i = 0; i < first; i++)
        set_k(0, i);
    memset(seen, 0, sizeof(seen));
    uint64_t cursor = 0;
    int next = first, steps = 0;
    do {
        cursor = scan_step(0, cursor, "7", seen, 20000, NULL);
        /* Keys added while scanning make the table double, over and over. */
        for (int j = 0; j < 40 && next < 20000; j++)
            set_k(0, next++);
        store_maintain(ctx, 3);
        steps++;
    } while (cursor != 0);
    cr_assert_gt(next, 4 * first, "the table resized during the scan");
    for (int i = 0; i < first; i++)
        cr_assert(seen[i], "key k%d present throughout, never returned", i);
    cr_log_info("scan over a growing table: %d steps, %d keys at the end", steps, next);
}

Test(keyspace, scan_returns_every_key_across_shrink)
{
    static unsigned char seen[5000];
    for (int i = 0; i < 5000; i++)
        set_k(2, i);
    uint64_t cursor = 0;
    int deleted = 0;
    do {
        cursor = scan_step(2, cursor, "20", seen, 5000, NULL);
        /* Delete the upper keys: the table shrinks (store_maintain) while
         * the keys below 200 stay throughout. */
        for (int j = 0; j < 200 && 200 + deleted < 5000; j++) {
            char k[32];
            snprintf(k, sizeof(k), "k%d", 200 + deleted++);
            wr(T0, 2, CMD_DEL, k, NULL);
        }
        store_maintain(ctx, 8);
    } while (cursor != 0);
    for (int i = 0; i < 200; i++)
        cr_assert(seen[i], "key k%d present throughout, never returned", i);
}

Test(keyspace, scan_count_bounds_the_work)
{
    for (int i = 0; i < 1000; i++)
        set_k(0, i);
    static unsigned char seen[1000];
    size_t returned = 0;
    uint64_t cursor = scan_step(0, 0, "10", seen, 1000, &returned);
    cr_assert_neq(cursor, 0);
    /* About COUNT keys: buckets hold one or two entries at this load. */
    cr_assert_geq(returned, 10);
    cr_assert_leq(returned, 30);
    returned = 0;
    memset(seen, 0, sizeof(seen));
    cr_assert_eq(scan_step(0, 0, "100000", seen, 1000, &returned), 0, "one call does it all");
    cr_assert_eq(returned, 1000);
    /* Sparse table (most keys deleted, no shrink yet): an empty-bucket walk
     * stops after 10 * COUNT buckets. */
    for (int i = 1; i < 1000; i++) {
        char k[32];
        snprintf(k, sizeof(k), "k%d", i);
        wr(T0, 0, CMD_DEL, k, NULL);
    }
    returned = 0;
    cursor = 0;
    int calls = 0;
    do {
        cursor = scan_step(0, cursor, "1", seen, 1000, &returned);
        calls++;
    } while (cursor);
    cr_assert_eq(returned, 1);
    cr_assert_gt(calls, 10, "1024 buckets, at most 11 per call");
}

Test(keyspace, scan_reply_limit_returns_a_partial_step)
{
    for (int i = 0; i < 400; i++)
        set_k(0, i);
    store_set_max_reply(ctx, 600);
    static unsigned char seen[400];
    uint64_t cursor = 0;
    size_t returned = 0;
    int calls = 0;
    do {
        cursor = scan_step(0, cursor, "1000000", seen, 400, &returned);
        calls++;
        cr_assert_lt(reply_len, 600);
    } while (cursor != 0);
    cr_assert_gt(calls, 5);
    cr_assert_eq(returned, 400);
    for (int i = 0; i < 400; i++)
        cr_assert(seen[i]);
    /* A bucket that alone passes the limit is an error, not a loop. */
    store_set_max_reply(ctx, 10);
    cr_assert_str_eq(rd(T0, 0, CMD_SCAN, "0", NULL), "-" STORE_ERR_TOO_LARGE "\r\n");
}

/* ---- RANDOMKEY ---------------------------------------------------------- */

Test(keyspace, randomkey)
{
    cr_assert_str_eq(rd(T0, 0, CMD_RANDOMKEY, NULL), NIL);
    set(T0, 0, "only", "v", 0);
    cr_assert_str_eq(rd(T0, 0, CMD_RANDOMKEY, NULL), "$4\r\nonly\r\n");
    for (int i = 0; i < 50; i++)
        set_k(0, i);
    int hits[50] = {0};
    for (int i = 0; i < 2000; i++) {
        rd(T0, 0, CMD_RANDOMKEY, NULL);
        cr_assert_eq(reply[0], '$');
        const char *key = strstr(reply, "\r\n") + 2;
        if (key[0] == 'k') hits[atoi(key + 1)]++;
    }
    for (int i = 0; i < 50; i++)
        cr_assert_gt(hits[i], 0, "k%d never drawn in 2000", i);
    cr_assert_str_eq(rd(T0, 1, CMD_RANDOMKEY, NULL), NIL, "another db");
}

Test(keyspace, randomkey_with_expired_keys)
{
    for (int i = 0; i < 5000; i++) {
        char k[32];
        snprintf(k, sizeof(k), "e%d", i);
        set(T0, 0, k, "v", T0 + 10);
    }
    cr_assert_str_eq(rd(T0 + 10, 0, CMD_RANDOMKEY, NULL), NIL, "all expired: nil, no endless loop");
    set(T0, 0, "live", "v", 0);
    for (int i = 0; i < 20; i++)
        cr_assert_str_eq(rd(T0 + 10, 0, CMD_RANDOMKEY, NULL), "$4\r\nlive\r\n");
    cr_assert_eq(db_keys(0), 5001, "a read removes nothing");
}

Test(keyspace, idx_random_in_a_sparse_table)
{
    for (int i = 0; i < 20000; i++)
        set_k(0, i);
    for (int i = 1; i < 20000; i++) {
        char k[32];
        snprintf(k, sizeof(k), "k%d", i);
        wr(T0, 0, CMD_DEL, k, NULL);
    }
    /* 32768 buckets, one key: the random probes miss, the walk finds it. */
    for (int i = 0; i < 20; i++)
        cr_assert_str_eq(rd(T0, 0, CMD_RANDOMKEY, NULL), "$2\r\nk0\r\n");
}

/* ---- record checks ------------------------------------------------------ */

Test(keyspace, malformed_records_are_no_ops)
{
    set(T0, 0, "k", "v", 0);
    /* Wrong integer widths: not the canonical form. */
    cr_assert_str_eq(wr(T0, 0, CMD_MOVE, "k", "1", NULL),
                     "-ERR the store cannot apply this record\r\n");
    cr_assert_str_eq(wr(T0, 0, CMD_RENAME, "k", "x", NULL),
                     "-ERR the store cannot apply this record\r\n");
    cr_assert_str_eq(wr(T0, 0, CMD_SWAPDB, "#u32:0", NULL),
                     "-ERR the store cannot apply this record\r\n");
    cr_assert_str_eq(wr(T0, 0, CMD_FLUSHDB, "x", NULL),
                     "-ERR the store cannot apply this record\r\n");
    cr_assert_str_eq(wr(T0, 99, CMD_FLUSHDB, NULL), "-ERR the store cannot apply this record\r\n",
                     "a database that does not exist");
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "k", NULL), "$1\r\nv\r\n");
}

/* ---- replay ------------------------------------------------------------- */

static store_ctx_t *replay_copy(buf_t *all)
{
    return sh_replay(store_ctx_create(&cfg, 987654321), all);
}

static void keyspace_workload(void)
{
    for (int i = 0; i < 600; i++) {
        char k[16], k2[16];
        int64_t t = T0 + i * 7 - (i % 5) * 20; /* clocks not quite in order */
        unsigned db = (unsigned)(i % 3), db2 = (unsigned)((i / 3) % 4);
        snprintf(k, sizeof(k), "k%d", i % 23);
        snprintf(k2, sizeof(k2), "k%d", (i * 7) % 23);
        switch (i % 13) {
        case 0:
            set(t, db, k, i % 2 ? big('s') : "short", i % 4 ? t + 60 : 0);
            break;
        case 1:
            wr(t, db, CMD_APPEND, k, big('a'), NULL);
            break;
        case 2:
            rename_(t, db, k, k2, i % 2);
            break;
        case 3:
            copy(t, db, k, k2, db2, i % 2);
            break;
        case 4:
            move(t, db, k, db2);
            break;
        case 5:
            if (i % 65 == 5)
                swapdb(t, db, db2);
            else
                set(t, db2, k2, "x", t + 30);
            break;
        case 6:
            if (i % 130 == 6)
                wr(t, db, CMD_FLUSHDB, NULL);
            else
                wr(t, db, CMD_DEL, k, NULL);
            break;
        case 7:
            pexpireat(t, db, k, t + (i % 3) * 40);
            break;
        case 8:
            wr(t, db, CMD_APPEND, k, "tail", NULL);
            break;
        case 9:
            wr(t, db, CMD_DEL, k2, NULL);
            break;
        case 10:
            copy(t, db, k2, k, db, 1);
            break;
        case 11:
            rename_(t, db2, k2, k, 0);
            break;
        case 12:
            if (i % 4 == 0)
                wr(t, db, CMD_TICK, NULL);
            else
                move(t, db2, k, db);
            break;
        }
        if (i % 50 == 49) store_maintain(ctx, 16); /* active expiry, live only */
    }
}

Test(keyspace, replay_gives_the_same_state_and_replies)
{
    keyspace_workload();
    buf_t again;
    buf_init(&again);
    store_ctx_t *b = replay_copy(&again);
    store_ctx_t *c = replay_copy(NULL);
    int64_t now = store_now(ctx);
    uint64_t da, db, dc;
    cr_assert_eq(store_digest(ctx, now, &da), 0);
    cr_assert_eq(store_digest(b, now, &db), 0);
    cr_assert_eq(store_digest(c, now, &dc), 0);
    cr_assert_eq(da, db);
    cr_assert_eq(da, dc);
    cr_assert_eq(live_replies.len, again.len);
    cr_assert(memcmp(live_replies.data, again.data, again.len) == 0);
    /* The counters INFO keyspace shows agree, once every copy reclaimed
     * what the apply clock expired. */
    while (store_maintain(ctx, 64)) {
    }
    while (store_maintain(c, 64)) {
    }
    for (int i = 0; i < 16; i++) {
        uint64_t k1, e1, k2, e2;
        store_db_stats(ctx, i, &k1, &e1);
        store_db_stats(c, i, &k2, &e2);
        cr_assert_eq(k1, k2, "db %d keys", i);
        cr_assert_eq(e1, e2, "db %d expires", i);
    }
    cr_assert_eq(store_index_bytes(ctx), store_index_bytes(c));
    cr_assert_gt(store_key_count(ctx), 5, "the workload leaves something to compare");
    store_ctx_destroy(b);
    store_ctx_destroy(c);
    buf_free(&again);
}
