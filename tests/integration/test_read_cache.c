/*
 * test_read_cache.c - GET answered by the frontends from the read cache
 * (common/rcache.h, docs/DECISIONS.md D70), on a real atticdb-server:
 *   - against a real redis-server 7.0.15: a key read, cached, then changed
 *     by another connection with every string write, TTL change, rename,
 *     move, copy, flush and swap, then read again (GET and MGET) once
 *     AtticDB's store has applied the change (a missed invalidation would
 *     answer the old value), in RESP2 and RESP3; the cache must have
 *     answered some;
 *   - AtticDB only: a write acknowledged on one frontend is read on the
 *     other, through the cache; a cached key written keeps its new value
 *     there;
 *     an MGET from the cache never sees half a transaction (one held by a
 *     fault point across one asks the store); the store killed half-way through a
 * slot write and right after an invalidation, then respawned: no read answers an old value; OBJECT
 * IDLETIME counts reads from the cache; an LRU policy and keymiss subscribers turn the cache's
 * answers off (and on again); read-cache-size 0. Waits poll with generous limits; nothing asserts a
 * duration.
 */
#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redis_diff.h"
#include "cr_hiredis.h"

static srv_t S;

static void fini(void)
{
    rdiff_teardown();
    srv_kill_all(&S);
    srv_cleanup(&S);
}

TestSuite(read_cache, .fini = fini, .timeout = 240);

/* ---- differential ---- */

/* AtticDB's store has applied everything durable: a GET may now be
 * answered from the cache, which must then know of every change. */
static void settle(diff_t *d)
{
    for (int i = 0; i < 5000; i++) {
        const char *t = ONE(d->a[2], "INFO", "persistence");
        long long durable = srv_info_text_num(t, "atticdb_durable_lsn");
        long long applied = srv_info_text_num(t, "atticdb_applied_lsn");
        cr_assert(durable >= 0 && applied >= 0, "INFO persistence: %s", t);
        if (applied >= durable) return;
        usleep(1000);
    }
    cr_assert_fail("the store did not catch up with the log");
}

/* key read three times on connection 0 (the first may fill the cache, the
 * others are answered from it) and once on connection 1. */
static void reads(diff_t *d, const char *key)
{
    settle(d);
    for (int i = 0; i < 3; i++)
        D(d, "GET", key);
    DC(d, 1, "GET", key);
}

/* MGET of the keys the changes touch, three times (answered from the
 * cache once it knows all of them). */
static void mgets(diff_t *d)
{
    settle(d);
    for (int i = 0; i < 3; i++)
        D(d, "MGET", "k", "k2", "k3", "k9", "nokey");
}

/* Every change made on connection 1 to keys connection 0 has read. */
static void changes_against_redis(diff_t *d)
{
    reads(d, "k");
    DC(d, 1, "SET", "k", "v1");
    reads(d, "k");
    DC(d, 1, "APPEND", "k", "x");
    reads(d, "k");
    DC(d, 1, "SET", "k", "10");
    reads(d, "k");
    DC(d, 1, "INCR", "k");
    reads(d, "k");
    DC(d, 1, "INCRBY", "k", "5");
    reads(d, "k");
    DC(d, 1, "DECR", "k");
    reads(d, "k");
    DC(d, 1, "INCRBYFLOAT", "k", "1.5");
    reads(d, "k");
    DC(d, 1, "SETRANGE", "k", "1", "zz");
    reads(d, "k");
    DC(d, 1, "SETBIT", "k", "3", "1");
    reads(d, "k");
    DC(d, 1, "GETSET", "k", "new");
    reads(d, "k");
    DC(d, 1, "GETDEL", "k");
    reads(d, "k");
    DC(d, 1, "SET", "k", "a");
    reads(d, "k");
    DC(d, 1, "GETEX", "k", "EX", "100");
    reads(d, "k"); /* a TTL: never cached, still read */
    DC(d, 1, "PERSIST", "k");
    reads(d, "k");
    DC(d, 1, "SET", "k", "b", "EX", "100");
    reads(d, "k");
    DC(d, 1, "SET", "k", "c", "KEEPTTL");
    reads(d, "k");
    DC(d, 1, "GETEX", "k", "PERSIST");
    reads(d, "k");
    DC(d, 1, "SETNX", "k", "no");
    DC(d, 1, "SET", "k", "d", "XX");
    reads(d, "k");
    DC(d, 1, "MSET", "k", "m1", "k2", "m2");
    reads(d, "k");
    reads(d, "k2");
    DC(d, 1, "MSETNX", "k", "z", "k3", "z");
    reads(d, "k3");
    mgets(d);
    DC(d, 1, "RENAME", "k", "k9");
    reads(d, "k");
    reads(d, "k9");
    DC(d, 1, "RENAMENX", "k9", "k");
    reads(d, "k");
    reads(d, "k9");
    mgets(d);
    DC(d, 1, "COPY", "k", "k2", "REPLACE");
    reads(d, "k2");
    DC(d, 1, "MOVE", "k", "1");
    reads(d, "k");
    D(d, "SELECT", "1");
    reads(d, "k"); /* connection 0 in database 1, connection 1 in 0 */
    D(d, "SELECT", "0");
    DC(d, 1, "SET", "k", "v");
    reads(d, "k");
    DC(d, 1, "DEL", "k");
    reads(d, "k");
    DC(d, 1, "SET", "k", "v");
    reads(d, "k");
    DC(d, 1, "UNLINK", "k", "k2");
    reads(d, "k");
    reads(d, "k2");
    mgets(d);
    DC(d, 1, "SET", "k", "in0");
    reads(d, "k");
    DC(d, 1, "SWAPDB", "0", "1");
    reads(d, "k");
    DC(d, 1, "SWAPDB", "0", "1");
    reads(d, "k");
    DC(d, 1, "FLUSHDB");
    reads(d, "k");
    mgets(d);
    DC(d, 1, "SET", "k", "v");
    reads(d, "k");
    DC(d, 1, "FLUSHALL");
    reads(d, "k");
    DC(d, 1, "RPUSH", "k", "x"); /* another type: WRONGTYPE, never cached */
    reads(d, "k");
    mgets(d);
    DC(d, 1, "SET", "k", "over-a-list");
    reads(d, "k");
    DC(d, 1, "PEXPIRE", "k", "50");
    RDIFF_AWAIT_EXPIRED(d, "k");
    reads(d, "k");
    /* Larger than a slot holds: read from the store every time. */
    static char big[1024];
    memset(big, 'b', sizeof(big) - 1);
    DC(d, 1, "SET", "k", big);
    reads(d, "k");
    DC(d, 1, "SET", "k", "small");
    reads(d, "k");
    DC(d, 1, "DEL", "k", "k3", "k9");
}

/* ---- other reads of one key (D71) ---- */

/* Every read the registry marks RC, of the keys the collection changes
 * touch: three times on connection 0 (the first may fill the cache, the
 * others are answered from it), once on connection 1. */
static void coll_reads_on(diff_t *d, int ci)
{
    DC(d, ci, "LRANGE", "l", "0", "-1");
    DC(d, ci, "LRANGE", "l", "1", "2");
    DC(d, ci, "LLEN", "l");
    DC(d, ci, "LINDEX", "l", "1");
    DC(d, ci, "LINDEX", "l", "99");
    DC(d, ci, "LPOS", "l", "b");
    DC(d, ci, "HGETALL", "h");
    DC(d, ci, "HGET", "h", "f1");
    DC(d, ci, "HGET", "h", "nofield");
    DC(d, ci, "HMGET", "h", "f1", "nofield", "f2");
    DC(d, ci, "HLEN", "h");
    DC(d, ci, "HEXISTS", "h", "f2");
    DC(d, ci, "HSTRLEN", "h", "f1");
    DC(d, ci, "HKEYS", "h");
    DC(d, ci, "HVALS", "h");
    RDIFF_(d, ci, RDIFF_SORTED, "SMEMBERS", "s");
    DC(d, ci, "SISMEMBER", "s", "m1");
    DC(d, ci, "SMISMEMBER", "s", "m1", "m9");
    DC(d, ci, "SCARD", "s");
    DC(d, ci, "ZRANGE", "z", "0", "-1", "WITHSCORES");
    DC(d, ci, "ZRANGE", "z", "(1", "+inf", "BYSCORE", "LIMIT", "0", "2");
    DC(d, ci, "ZREVRANGE", "z", "0", "1");
    DC(d, ci, "ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES");
    DC(d, ci, "ZREVRANGEBYSCORE", "z", "+inf", "2");
    DC(d, ci, "ZSCORE", "z", "a");
    DC(d, ci, "ZMSCORE", "z", "a", "nomember");
    DC(d, ci, "ZRANK", "z", "b");
    DC(d, ci, "ZREVRANK", "z", "b");
    DC(d, ci, "ZCARD", "z");
    DC(d, ci, "ZCOUNT", "z", "1", "3");
    DC(d, ci, "ZRANGEBYLEX", "zl", "-", "+");
    DC(d, ci, "ZREVRANGEBYLEX", "zl", "+", "[b");
    DC(d, ci, "ZLEXCOUNT", "zl", "-", "+");
    DC(d, ci, "XLEN", "x");
    DC(d, ci, "XRANGE", "x", "-", "+");
    DC(d, ci, "XREVRANGE", "x", "+", "-", "COUNT", "1");
    DC(d, ci, "STRLEN", "str");
    DC(d, ci, "GETRANGE", "str", "1", "3");
    DC(d, ci, "SUBSTR", "str", "0", "-1");
    DC(d, ci, "GETBIT", "str", "3");
    DC(d, ci, "BITCOUNT", "str");
    DC(d, ci, "BITPOS", "str", "1");
}

static void coll_reads(diff_t *d)
{
    settle(d);
    for (int i = 0; i < 3; i++)
        coll_reads_on(d, 0);
    coll_reads_on(d, 1);
}

/* Every write family of every type made on connection 1 to keys
 * connection 0 has read. */
static void coll_changes_against_redis(diff_t *d)
{
    coll_reads(d); /* all absent */
    DC(d, 1, "RPUSH", "l", "a", "b", "c");
    DC(d, 1, "HSET", "h", "f1", "v1", "f2", "v2");
    DC(d, 1, "SADD", "s", "m1", "m2");
    DC(d, 1, "ZADD", "z", "1", "a", "2", "b", "3", "c");
    DC(d, 1, "ZADD", "zl", "0", "a", "0", "b", "0", "c");
    DC(d, 1, "XADD", "x", "1-1", "f", "v");
    DC(d, 1, "SET", "str", "hello");
    coll_reads(d);
    /* Lists. */
    DC(d, 1, "LPUSH", "l", "z");
    coll_reads(d);
    DC(d, 1, "LSET", "l", "0", "y");
    coll_reads(d);
    DC(d, 1, "LINSERT", "l", "BEFORE", "b", "bb");
    coll_reads(d);
    DC(d, 1, "LREM", "l", "1", "bb");
    coll_reads(d);
    DC(d, 1, "LPOP", "l");
    coll_reads(d);
    DC(d, 1, "RPOPLPUSH", "l", "l");
    coll_reads(d);
    DC(d, 1, "LMOVE", "l", "l", "LEFT", "RIGHT");
    coll_reads(d);
    DC(d, 1, "LTRIM", "l", "0", "1");
    coll_reads(d);
    DC(d, 1, "RPOP", "l");
    coll_reads(d);
    /* Hashes. */
    DC(d, 1, "HSETNX", "h", "f3", "v3");
    coll_reads(d);
    DC(d, 1, "HSET", "h", "f1", "new");
    coll_reads(d);
    DC(d, 1, "HINCRBY", "h", "f2", "1");
    coll_reads(d);
    DC(d, 1, "HSET", "h", "f2", "1");
    DC(d, 1, "HINCRBYFLOAT", "h", "f2", "1.5");
    coll_reads(d);
    DC(d, 1, "HDEL", "h", "f3");
    coll_reads(d);
    /* Sets. */
    DC(d, 1, "SADD", "s", "m3");
    coll_reads(d);
    DC(d, 1, "SREM", "s", "m2");
    coll_reads(d);
    DC(d, 1, "SMOVE", "s", "s2", "m1");
    coll_reads(d);
    DC(d, 1, "SADD", "s2", "m1", "m9");
    DC(d, 1, "SUNIONSTORE", "s", "s", "s2");
    coll_reads(d);
    /* Sorted sets. */
    DC(d, 1, "ZINCRBY", "z", "5", "a");
    coll_reads(d);
    DC(d, 1, "ZADD", "z", "XX", "CH", "0", "b");
    coll_reads(d);
    DC(d, 1, "ZREM", "z", "c");
    coll_reads(d);
    DC(d, 1, "ZPOPMIN", "z");
    coll_reads(d);
    DC(d, 1, "ZADD", "z", "1", "b", "2", "c", "3", "d");
    DC(d, 1, "ZREMRANGEBYRANK", "z", "0", "0");
    coll_reads(d);
    DC(d, 1, "ZUNIONSTORE", "z", "2", "z", "zl");
    coll_reads(d);
    DC(d, 1, "ZRANGESTORE", "z", "zl", "0", "1");
    coll_reads(d);
    DC(d, 1, "ZADD", "zl", "0", "aa");
    coll_reads(d);
    /* Streams. */
    DC(d, 1, "XADD", "x", "2-1", "g", "w");
    coll_reads(d);
    DC(d, 1, "XDEL", "x", "1-1");
    coll_reads(d);
    DC(d, 1, "XTRIM", "x", "MAXLEN", "0");
    coll_reads(d);
    /* Strings read by other commands than GET. */
    DC(d, 1, "APPEND", "str", "!");
    coll_reads(d);
    DC(d, 1, "SETRANGE", "str", "0", "J");
    coll_reads(d);
    DC(d, 1, "SETBIT", "str", "3", "1");
    coll_reads(d);
    /* The keyspace. */
    DC(d, 1, "RENAME", "l", "l9");
    coll_reads(d);
    DC(d, 1, "RENAME", "l9", "l");
    DC(d, 1, "COPY", "zl", "z", "REPLACE");
    coll_reads(d);
    DC(d, 1, "EXPIRE", "h", "100"); /* a TTL: never cached, still read */
    coll_reads(d);
    DC(d, 1, "PERSIST", "h");
    coll_reads(d);
    DC(d, 1, "MOVE", "s", "1");
    coll_reads(d);
    DC(d, 1, "DEL", "h");
    DC(d, 1, "SET", "h", "a-string"); /* WRONGTYPE replies: never cached */
    coll_reads(d);
    DC(d, 1, "SWAPDB", "0", "1");
    coll_reads(d);
    DC(d, 1, "SWAPDB", "0", "1");
    coll_reads(d);
    DC(d, 1, "PEXPIRE", "z", "50");
    RDIFF_AWAIT_EXPIRED(d, "z");
    coll_reads(d);
    DC(d, 1, "FLUSHDB");
    coll_reads(d);
    DC(d, 1, "FLUSHALL");
}

static long long stat_of_conn(wire_conn_t *c, const char *field)
{
    long long v = srv_info_text_num(ONE(c, "INFO", "stats"), field);
    cr_assert_geq(v, 0, "INFO stats has no %s", field);
    return v;
}

Test(read_cache, reads_after_every_change_answer_as_redis)
{
    diff_t d;
    rdiff_start_both_with(&d, "--frontends 2", NULL, 3);
    changes_against_redis(&d);
    rdiff_hello3(&d);
    changes_against_redis(&d);
    /* The comparison went through the cache, not only the store. */
    long long hits = stat_of_conn(d.a[2], "atticdb_read_cache_hits");
    long long absent = stat_of_conn(d.a[2], "atticdb_read_cache_absent_hits");
    cr_assert_geq(hits, 40, "only %lld GETs were answered from the cache", hits);
    cr_assert_geq(absent, 10, "only %lld absences were answered from the cache", absent);
    cr_assert_gt(stat_of_conn(d.a[2], "atticdb_read_cache_invalidations"), 10);
    rdiff_end_both(&d);
}

Test(read_cache, collection_reads_after_every_change_answer_as_redis)
{
    diff_t d;
    rdiff_start_both_with(&d, "--frontends 2", NULL, 3);
    coll_changes_against_redis(&d);
    long long hits2 = stat_of_conn(d.a[2], "atticdb_read_cache_hits");
    rdiff_hello3(&d);
    coll_changes_against_redis(&d);
    long long hits = stat_of_conn(d.a[2], "atticdb_read_cache_hits");
    /* Each protocol's comparison went through the cache, not only the
     * store. */
    cr_assert_geq(hits2, 1000, "only %lld reads were answered from the cache (RESP2)", hits2);
    cr_assert_geq(hits - hits2, 1000, "only %lld reads were answered from the cache (RESP3)",
                  hits - hits2);
    cr_assert_gt(stat_of_conn(d.a[2], "atticdb_read_cache_invalidations"), 100);
    rdiff_end_both(&d);
}

/* ---- AtticDB alone ---- */

static long long stat_of(redisContext *c, const char *field)
{
    redisReply *r = q(c, "INFO stats");
    long long v = srv_info_text_num(r->str, field);
    freeReplyObject(r);
    cr_assert_geq(v, 0, "INFO stats has no %s", field);
    return v;
}

static void expect_value(redisContext *c, const char *key, const char *want)
{
    redisReply *r = q(c, "GET %s", key);
    if (!want) {
        cr_assert_eq(r->type, REDIS_REPLY_NIL, "GET %s: type %d, not nil", key, r->type);
    } else {
        cr_assert_eq(r->type, REDIS_REPLY_STRING, "GET %s: type %d (%s)", key, r->type,
                     r->str ? r->str : "");
        cr_assert_str_eq(r->str, want, "GET %s answered an old value", key);
    }
    freeReplyObject(r);
}

static void ok(redisContext *c, const char *fmt, const char *a, const char *b)
{
    redisReply *r = q(c, fmt, a, b);
    cr_assert(r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_INTEGER, "%s: %s", fmt,
              r->str ? r->str : "?");
    freeReplyObject(r);
}

static redisContext *conn_on(int fe)
{
    return cr_conn_on(&S, fe);
}

/* Round i: a write acknowledged on w, then reads on r and w that must see
 * it (the second read of r is usually a cache hit). */
static void round_trip(redisContext *w, redisContext *r, int i)
{
    char v[32];
    snprintf(v, sizeof(v), "v%d", i);
    if (i % 5 == 4) {
        ok(w, "DEL %s%s", "k", "");
        expect_value(r, "k", NULL);
        expect_value(r, "k", NULL);
        return;
    }
    ok(w, "SET %s %s", "k", v);
    expect_value(r, "k", v);
    expect_value(r, "k", v);
    expect_value(w, "k", v);
}

Test(read_cache, a_write_acked_on_one_frontend_is_read_on_the_other)
{
    cr_assert_eq(srv_start(&S, "--frontends 2"), 0);
    redisContext *w = conn_on(0), *r = conn_on(1);
    for (int i = 0; i < 300; i++)
        round_trip(w, r, i);
    /* A pipeline on the reading connection: its own write, then reads. */
    cr_assert_eq(redisAppendCommand(r, "SET k mine"), REDIS_OK);
    cr_assert_eq(redisAppendCommand(r, "GET k"), REDIS_OK);
    redisReply *rep;
    cr_assert_eq(redisGetReply(r, (void **)&rep), REDIS_OK);
    freeReplyObject(rep);
    cr_assert_eq(redisGetReply(r, (void **)&rep), REDIS_OK);
    cr_assert_eq(rep->type, REDIS_REPLY_STRING);
    cr_assert_str_eq(rep->str, "mine");
    freeReplyObject(rep);
    long long hits = stat_of(w, "atticdb_read_cache_hits");
    cr_assert_geq(hits, 100, "only %lld reads were answered from the cache", hits);
    redisFree(w);
    redisFree(r);
    cr_assert_eq(srv_stop(&S), 0);
    srv_cleanup(&S);
}

/* Hits since the last call (INFO stats on c). */
static long long new_hits(redisContext *c, long long *last)
{
    long long now = stat_of(c, "atticdb_read_cache_hits"), d = now - *last;
    *last = now;
    return d;
}

Test(read_cache, a_cached_key_written_keeps_its_new_value_there)
{
    cr_assert_eq(srv_start(&S, "--frontends 1"), 0);
    redisContext *c = srv_connect(&S);
    cr_assert_not_null(c);
    ok(c, "MSET %s 1 %s 1", "w", "m1");
    freeReplyObject(q(c, "INFO persistence")); /* waits for the store to catch up */
    expect_value(c, "w", "1");                 /* filled by this read */
    expect_value(c, "m1", "1");
    long long last = stat_of(c, "atticdb_read_cache_hits");
    /* Written while in the cache: the new values replace the old there. */
    ok(c, "SET %s %s", "w", "2");
    ok(c, "MSET %s 2 %s 2", "m1", "m2");
    ok(c, "SET %s %s EX 100", "t", "ttl");
    freeReplyObject(q(c, "INFO persistence"));
    last = stat_of(c, "atticdb_read_cache_hits");
    expect_value(c, "w", "2");
    expect_value(c, "m1", "2");
    cr_assert_eq(new_hits(c, &last), 2, "the written values were not in the cache");
    /* Never read: not added by its write. A TTL: never cached. */
    expect_value(c, "m2", "2");
    expect_value(c, "t", "ttl");
    cr_assert_eq(new_hits(c, &last), 0);
    expect_value(c, "m2", "2"); /* filled by the read before */
    cr_assert_eq(new_hits(c, &last), 1);
    redisFree(c);
    cr_assert_eq(srv_stop(&S), 0);
    srv_cleanup(&S);
}

Test(read_cache, an_mget_never_sees_half_a_transaction)
{
    cr_assert_eq(srv_start(&S, "--frontends 2"), 0);
    redisContext *w = conn_on(0), *r = conn_on(1);
    long long before = stat_of(r, "atticdb_read_cache_hits");
    for (int i = 0; i < 300; i++) {
        /* Both keys in one transaction, their values equal. */
        cr_assert_eq(redisAppendCommand(w, "MULTI"), REDIS_OK);
        cr_assert_eq(redisAppendCommand(w, "SET a %d", i), REDIS_OK);
        cr_assert_eq(redisAppendCommand(w, "SET b %d", i), REDIS_OK);
        cr_assert_eq(redisAppendCommand(w, "EXEC"), REDIS_OK);
        int done = 0;
        while (!done)
            cr_assert_eq(redisBufferWrite(w, &done), REDIS_OK);
        /* Reads race the transaction, then follow its reply. */
        for (int k = 0; k < 8; k++) {
            if (k == 4)
                for (int j = 0; j < 4; j++) {
                    redisReply *x;
                    cr_assert_eq(redisGetReply(w, (void **)&x), REDIS_OK, "%s", w->errstr);
                    freeReplyObject(x);
                }
            redisReply *m = q(r, "MGET a b");
            cr_assert_eq(m->type, REDIS_REPLY_ARRAY);
            cr_assert_eq(m->elements, 2);
            if (i > 0 || m->element[0]->type == REDIS_REPLY_STRING) {
                cr_assert_eq(m->element[0]->type, REDIS_REPLY_STRING);
                cr_assert_eq(m->element[1]->type, REDIS_REPLY_STRING);
                cr_assert_str_eq(m->element[0]->str, m->element[1]->str,
                                 "MGET saw half a transaction");
                if (k >= 4) cr_assert_eq(atoi(m->element[0]->str), i, "an acked EXEC unseen");
            }
            freeReplyObject(m);
        }
    }
    long long hits = stat_of(r, "atticdb_read_cache_hits") - before;
    cr_assert_geq(hits, 200, "only %lld keys were read from the cache", hits);
    redisFree(w);
    redisFree(r);
    cr_assert_eq(srv_stop(&S), 0);
    srv_cleanup(&S);
}

/* An MGET held (fault point cachemget, STALL: 300 ms) after its first key
 * was read from the cache; meanwhile a transaction on the other frontend
 * changes both keys and a GET there puts b's new value in the cache.
 * Reading b's slot then finds the new value: the MGET must see that a's
 * slot moved and ask the store, not answer half of the transaction. */
Test(read_cache, an_mget_held_across_a_transaction_asks_the_store)
{
    cr_assert_eq(srv_start_faults(&S, "frontend.cachemget:1:STALL", "--frontends 2"), 0);
    redisContext *w = conn_on(0), *r = conn_on(1);
    ok(w, "MSET %s 0 %s 0", "a", "b");
    freeReplyObject(q(r, "INFO persistence")); /* the store caught up */
    expect_value(r, "a", "0");                 /* both in the cache now */
    expect_value(r, "b", "0");
    cr_assert_eq(redisAppendCommand(r, "MGET a b"), REDIS_OK);
    int done = 0;
    while (!done)
        cr_assert_eq(redisBufferWrite(r, &done), REDIS_OK);
    usleep(50000); /* r's frontend is held at its first key */
    freeReplyObject(q(w, "MULTI"));
    freeReplyObject(q(w, "SET a 1"));
    freeReplyObject(q(w, "SET b 1"));
    redisReply *x = q(w, "EXEC");
    cr_assert_eq(x->type, REDIS_REPLY_ARRAY);
    freeReplyObject(x);
    freeReplyObject(q(w, "INFO persistence"));
    expect_value(w, "b", "1"); /* fills b's slot with its new value */
    redisReply *m;
    cr_assert_eq(redisGetReply(r, (void **)&m), REDIS_OK, "%s", r->errstr);
    cr_assert_eq(m->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(m->elements, 2);
    cr_assert_str_eq(m->element[0]->str, m->element[1]->str,
                     "MGET answered a=%s b=%s: half a transaction", m->element[0]->str,
                     m->element[1]->str);
    freeReplyObject(m);
    redisFree(w);
    redisFree(r);
    cr_assert_eq(srv_stop(&S), 0);
    srv_cleanup(&S);
}

/* The store killed at a step of the cache (fault), respawned: every read
 * before and after sees the write acknowledged before it. */
static void killed_at(const char *fault)
{
    cr_assert_eq(srv_start_faults(&S, fault, "--frontends 2"), 0);
    redisContext *w = conn_on(0), *r = conn_on(1);
    int i = 0;
    for (; i < 4000 && !srv_log_contains(&S, "killed by signal 9", "store"); i++)
        round_trip(w, r, i);
    cr_assert(srv_log_contains(&S, "killed by signal 9", "store"), "%s: never reached", fault);
    for (int k = 0; k < 200 && !srv_log_contains(&S, "respawned", "store"); k++)
        usleep(50000);
    for (int end = i + 200; i < end; i++)
        round_trip(w, r, i);
    cr_assert_gt(stat_of(w, "atticdb_read_cache_hits"), 0);
    redisFree(w);
    redisFree(r);
    srv_kill_all(&S);
    srv_cleanup(&S);
}

Test(read_cache, store_killed_with_a_slot_half_written)
{
    killed_at("store.cacheslot:300:KILL");
}

Test(read_cache, store_killed_after_an_invalidation)
{
    killed_at("store.cacheinval:60:KILL");
}

/* D75: a slot written (or dropped) whose tag is not: the frontends do not
 * find it (or look at a slot that no longer holds the key), and the next
 * store's fills and drops go on over what it left. */
Test(read_cache, store_killed_between_a_slot_and_its_tag)
{
    killed_at("store.cachetag:300:KILL");
}

Test(read_cache, lru_policies_and_keymiss_listeners_are_left_to_the_store)
{
    cr_assert_eq(srv_start(&S, "--frontends 1"), 0);
    redisContext *c = srv_connect(&S);
    cr_assert_not_null(c);
    ok(c, "SET %s %s", "k", "v");
    for (int i = 0; i < 5; i++)
        expect_value(c, "k", "v");
    long long hits = stat_of(c, "atticdb_read_cache_hits");
    cr_assert_geq(hits, 3);
    /* Read only from the cache for over two seconds: OBJECT IDLETIME still
     * counts from the last of those reads, as Redis' from its last GET. */
    for (int i = 0; i < 25; i++) {
        expect_value(c, "k", "v");
        usleep(100000);
    }
    cr_assert_geq(stat_of(c, "atticdb_read_cache_hits"), hits + 20);
    redisReply *idle = q(c, "OBJECT IDLETIME k");
    cr_assert_eq(idle->type, REDIS_REPLY_INTEGER);
    cr_assert_leq(idle->integer, 1, "OBJECT IDLETIME %lld after reads from the cache",
                  idle->integer);
    freeReplyObject(idle);
    hits = stat_of(c, "atticdb_read_cache_hits");
    /* A hit would not touch the key's access time, which LRU evicts by. */
    ok(c, "CONFIG SET %s %s", "maxmemory-policy", "allkeys-lru");
    for (int i = 0; i < 5; i++)
        expect_value(c, "k", "v");
    cr_assert_eq(stat_of(c, "atticdb_read_cache_hits"), hits, "a hit under allkeys-lru");
    ok(c, "CONFIG SET %s %s", "maxmemory-policy", "noeviction");
    ok(c, "SET %s %s", "k", "w"); /* filled again once the policy allows */
    for (int i = 0; i < 5; i++)
        expect_value(c, "k", "w");
    cr_assert_gt(stat_of(c, "atticdb_read_cache_hits"), hits);
    /* Each GET of a missing key publishes "keymiss": none is answered
     * from the cache while anyone may listen. */
    expect_value(c, "nokey", NULL);
    expect_value(c, "nokey", NULL);
    long long absent = stat_of(c, "atticdb_read_cache_absent_hits");
    cr_assert_geq(absent, 1);
    ok(c, "CONFIG SET %s %s", "notify-keyspace-events", "Em");
    redisContext *sub = srv_connect(&S);
    cr_assert_not_null(sub);
    freeReplyObject(q(sub, "SUBSCRIBE __keyevent@0__:keymiss"));
    for (int i = 0; i < 5; i++)
        expect_value(c, "nokey", NULL);
    for (int i = 0; i < 5; i++) {
        redisReply *m;
        cr_assert_eq(redisGetReply(sub, (void **)&m), REDIS_OK, "keymiss %d of 5: %s", i,
                     sub->errstr);
        cr_assert_eq(m->type, REDIS_REPLY_ARRAY);
        cr_assert_str_eq(m->element[2]->str, "nokey");
        freeReplyObject(m);
    }
    cr_assert_eq(stat_of(c, "atticdb_read_cache_absent_hits"), absent);
    redisFree(sub);
    redisFree(c);
    cr_assert_eq(srv_stop(&S), 0);
    srv_cleanup(&S);
}

Test(read_cache, size_zero_turns_it_off)
{
    cr_assert_eq(srv_start(&S, "--read-cache-size 0"), 0);
    redisContext *c = srv_connect(&S);
    cr_assert_not_null(c);
    ok(c, "SET %s %s", "k", "v");
    for (int i = 0; i < 5; i++)
        expect_value(c, "k", "v");
    cr_assert_eq(stat_of(c, "atticdb_read_cache_bytes"), 0);
    cr_assert_eq(stat_of(c, "atticdb_read_cache_hits"), 0);
    cr_assert_eq(stat_of(c, "keyspace_hits"), 5);
    redisFree(c);
    cr_assert_eq(srv_stop(&S), 0);
    srv_cleanup(&S);
}
