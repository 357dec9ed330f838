/*
 * test_probe.c - pops that find nothing are answered without the log
 * (docs/DECISIONS.md, D68), on a real atticdb-server:
 *   - every reply byte for byte against a real redis-server 7.0.15: LPOP,
 *     RPOP, SPOP, ZPOPMIN, ZPOPMAX, LMOVE and RPOPLPUSH (with and without a
 *     count, count 0, RESP2 and RESP3) polled on missing keys until the
 *     frontend answers them itself, then the key made, popped empty,
 *     made of another type, expired, in another database, and pipelines
 *     where a push follows a probed pop on the same connection;
 *   - AtticDB only: a thousand empty polls write (almost) nothing to the
 *     log and count once each in commandstats; a poller and a pusher on
 *     different frontends: every pushed element is popped exactly once;
 *     the store SIGKILLed while pollers wait on their probe: every poll is
 *     answered, and replay gives the same DEBUG DIGEST.
 * Waits poll with generous limits; nothing asserts a duration.
 */
#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <signal.h>
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

TestSuite(probe, .fini = fini, .timeout = 240);

/* AtticDB's atticdb_writes_without_log (INFO stats) on d's connection 0. */
static long long unlogged_of(diff_t *d)
{
    const char *st = ONE(d->a[0], "INFO", "stats");
    const char *p = strstr(st, "atticdb_writes_without_log:");
    cr_assert_not_null(p, "INFO stats has no atticdb_writes_without_log");
    return atoll(p + strlen("atticdb_writes_without_log:"));
}

/* ---- differential: replies against Redis ---- */

/* Each pop form polled on missing keys, three times: the first through
 * the log, the others answered by the frontend after its probe. */
static void poll_missing(diff_t *d)
{
    for (int i = 0; i < 3; i++) {
        D(d, "LPOP", "nol");
        D(d, "RPOP", "nol");
        D(d, "LPOP", "nol", "2");
        D(d, "RPOP", "nol", "0");
        D(d, "SPOP", "nos");
        D(d, "SPOP", "nos", "3");
        D(d, "SPOP", "nos", "0");
        D(d, "ZPOPMIN", "noz");
    }
    /* More commands than a connection remembers, in turn. */
    for (int i = 0; i < 3; i++) {
        D(d, "ZPOPMAX", "noz", "2");
        D(d, "LMOVE", "nol", "dst", "LEFT", "RIGHT");
        D(d, "RPOPLPUSH", "nol", "dst");
    }
}

static void pops_against_redis(diff_t *d)
{
    poll_missing(d);
    /* The keys appear: the probe finds them, the pops go to the log. */
    D(d, "RPUSH", "nol", "a", "b", "c");
    D(d, "SADD", "nos", "1"); /* one member: SPOP's choice is random */
    D(d, "ZADD", "noz", "1", "x", "2", "y");
    poll_missing(d);
    /* Now all of them are empty again (lists and sets emptied above). */
    poll_missing(d);
    /* Another type under the name: WRONGTYPE, from the log. */
    D(d, "SET", "nol", "v");
    D(d, "SET", "nos", "v");
    D(d, "SET", "noz", "v");
    poll_missing(d);
    D(d, "DEL", "nol", "nos", "noz");
    poll_missing(d);
    /* A destination of another type does not matter while the source is
     * missing (Redis looks at the source first). */
    D(d, "SET", "dst", "v");
    D(d, "LMOVE", "nol", "dst", "LEFT", "RIGHT");
    D(d, "RPOPLPUSH", "nol", "dst");
    D(d, "DEL", "dst");
    /* Expired but perhaps not yet deleted: the pop answers as missing. */
    D(d, "RPUSH", "nol", "e");
    D(d, "PEXPIRE", "nol", "1");
    RDIFF_AWAIT_EXPIRED(d, "nol");
    poll_missing(d);
    /* Another database: the remembered pop is per database. */
    D(d, "SELECT", "3");
    D(d, "RPUSH", "nol", "in3");
    poll_missing(d);
    D(d, "SELECT", "0");
    poll_missing(d);
}

Test(probe, empty_pops_answer_as_redis)
{
    diff_t d;
    rdiff_start_both_with(&d, "--frontends 2", NULL, 2);
    pops_against_redis(&d);
    /* A pipeline on a connection that has learned the empty pop: the pop,
     * then a push, then pops that must see it, then a pop after MULTI. */
    DRAW(&d, 0,
         "LPOP nol\r\nLPOP nol\r\nRPUSH nol p\r\nLPOP nol\r\nLPOP nol\r\n"
         "MULTI\r\nLPOP nol\r\nEXEC\r\nLPOP nol\r\n",
         9);
    /* Another connection pushes between two polls of this one. */
    D(&d, "SPOP", "nos");
    D(&d, "SPOP", "nos");
    DC(&d, 1, "SADD", "nos", "m");
    D(&d, "SPOP", "nos");
    D(&d, "SPOP", "nos");
    rdiff_resp3(&d);
    pops_against_redis(&d);
    /* The comparison went through the frontend's answers, not only the log. */
    long long unlogged = unlogged_of(&d);
    cr_assert_geq(unlogged, 100, "only %lld pops were answered without the log", unlogged);
    rdiff_end_both(&d);
}

/* Each removal of a missing key, three times in a row: the first through
 * the log, the others answered by the frontend after its probe. */
static void remove_missing(diff_t *d)
{
    /* Each in a row: more of them than a connection remembers. */
    for (int i = 0; i < 3; i++)
        D(d, "DEL", "gone");
    for (int i = 0; i < 3; i++)
        D(d, "UNLINK", "gone");
    for (int i = 0; i < 3; i++)
        D(d, "DEL", "gone", "gone2"); /* two keys: not probed */
    for (int i = 0; i < 3; i++)
        D(d, "SREM", "gone", "a", "b");
    for (int i = 0; i < 3; i++)
        D(d, "HDEL", "gone", "f");
    for (int i = 0; i < 3; i++)
        D(d, "ZREM", "gone", "m");
    for (int i = 0; i < 3; i++)
        D(d, "LREM", "gone", "0", "x");
    for (int i = 0; i < 3; i++)
        D(d, "ZREMRANGEBYSCORE", "gone", "-inf", "+inf");
    for (int i = 0; i < 3; i++)
        D(d, "ZREMRANGEBYSCORE", "gone", "x", "y"); /* an error before the key */
    for (int i = 0; i < 3; i++)
        D(d, "ZREMRANGEBYRANK", "gone", "0", "-1");
    for (int i = 0; i < 3; i++)
        D(d, "ZREMRANGEBYLEX", "gone", "-", "+");
    for (int i = 0; i < 3; i++)
        D(d, "EXPIRE", "gone", "100");
    for (int i = 0; i < 3; i++)
        D(d, "PEXPIRE", "gone", "100", "NX");
    for (int i = 0; i < 3; i++)
        D(d, "EXPIREAT", "gone", "99999999999");
    for (int i = 0; i < 3; i++)
        D(d, "PEXPIREAT", "gone", "1");
    for (int i = 0; i < 3; i++)
        D(d, "PERSIST", "gone");
}

Test(probe, removals_of_missing_keys_answer_as_redis)
{
    diff_t d;
    rdiff_start_both_with(&d, "--frontends 2", NULL, 2);
    remove_missing(&d);
    /* The key appears (another connection): the probe finds it. */
    DC(&d, 1, "SET", "gone", "v");
    D(&d, "DEL", "gone");
    remove_missing(&d);
    /* Of another type: WRONGTYPE where Redis gives it, from the log. */
    DC(&d, 1, "SET", "gone", "v");
    remove_missing(&d);
    DC(&d, 1, "DEL", "gone");
    remove_missing(&d);
    /* Each type made again, then removed to empty by the same commands. */
    DC(&d, 1, "SADD", "gone", "a");
    D(&d, "SREM", "gone", "a", "b");
    DC(&d, 1, "HSET", "gone", "f", "v");
    D(&d, "HDEL", "gone", "f");
    DC(&d, 1, "ZADD", "gone", "1", "m");
    D(&d, "ZREM", "gone", "m");
    DC(&d, 1, "RPUSH", "gone", "x", "x");
    D(&d, "LREM", "gone", "0", "x");
    remove_missing(&d);
    rdiff_resp3(&d);
    remove_missing(&d);
    cr_assert_geq(unlogged_of(&d), 100);
    rdiff_end_both(&d);
}

/* A lock polled by one connection while another holds it (SET NX, SETNX:
 * no-ops while the key is there and live), then released, expired, of
 * another type; SET XX of a missing key. */
static void locks_against_redis(diff_t *d)
{
    DC(d, 1, "SET", "lock", "owner1", "NX", "PX", "100000");
    for (int i = 0; i < 3; i++)
        D(d, "SET", "lock", "owner0", "NX", "PX", "30000");
    for (int i = 0; i < 3; i++)
        D(d, "SETNX", "lock", "owner0");
    for (int i = 0; i < 3; i++)
        D(d, "SET", "lock", "owner0", "NX", "GET"); /* GET: the old value, never remembered */
    DC(d, 1, "DEL", "lock");
    D(d, "SET", "lock", "owner0", "NX", "PX", "30000"); /* free now: taken */
    D(d, "GET", "lock");
    DC(d, 1, "DEL", "lock");
    D(d, "SETNX", "lock", "owner0");
    DC(d, 1, "DEL", "lock");
    /* Held by a key that expires: once expired, the poll takes it. */
    DC(d, 1, "SET", "lock", "owner1", "NX", "PX", "1");
    RDIFF_AWAIT_EXPIRED(d, "lock");
    D(d, "SET", "lock", "owner0", "NX", "PX", "30000");
    D(d, "GET", "lock");
    /* A key of another type holds it too (NX looks only at the key). */
    DC(d, 1, "DEL", "lock");
    DC(d, 1, "RPUSH", "lock", "x");
    for (int i = 0; i < 3; i++)
        D(d, "SETNX", "lock", "owner0");
    DC(d, 1, "DEL", "lock");
    for (int i = 0; i < 3; i++)
        D(d, "SET", "lock", "owner0", "XX");
    DC(d, 1, "SET", "lock", "owner1");
    D(d, "SET", "lock", "owner0", "XX");
    D(d, "GET", "lock");
    DC(d, 1, "DEL", "lock");
}

Test(probe, locks_polled_answer_as_redis)
{
    diff_t d;
    rdiff_start_both_with(&d, "--frontends 2", NULL, 2);
    locks_against_redis(&d);
    rdiff_resp3(&d);
    locks_against_redis(&d);
    cr_assert_geq(unlogged_of(&d), 10);
    rdiff_end_both(&d);
}

/* ---- AtticDB alone ---- */

static unsigned long long durable_lsn(redisContext *c)
{
    char v[64];
    srv_info_persistence(c, "atticdb_durable_lsn", v, sizeof(v));
    cr_assert(v[0] >= '0' && v[0] <= '9', "atticdb_durable_lsn: %s", v);
    return strtoull(v, NULL, 10);
}

/* calls= of cmdstat_<name> in INFO commandstats. */
static long long calls_of(redisContext *c, const char *name)
{
    redisReply *r = q(c, "INFO commandstats");
    char key[64];
    snprintf(key, sizeof(key), "cmdstat_%s:calls=", name);
    const char *p = strstr(r->str, key);
    long long n = p ? atoll(p + strlen(key)) : 0;
    freeReplyObject(r);
    return n;
}

/* A counter of INFO stats. */
static long long stat_of(redisContext *c, const char *field)
{
    redisReply *r = q(c, "INFO stats");
    const char *p = strstr(r->str, field);
    cr_assert_not_null(p, "INFO stats has no %s", field);
    long long n = atoll(p + strlen(field) + 1);
    freeReplyObject(r);
    return n;
}

static void expect_nil(redisContext *c, const char *cmd)
{
    redisReply *r = q(c, cmd);
    cr_assert_eq(r->type, REDIS_REPLY_NIL, "%s did not answer nil (type %d)", cmd, r->type);
    freeReplyObject(r);
}

Test(probe, empty_polls_write_nothing_and_count_once)
{
    cr_assert_eq(srv_start(&S, "--frontends 2"), 0);
    redisContext *c = srv_connect(&S);
    cr_assert_not_null(c);
    expect_nil(c, "RPOP queue"); /* through the log: learned */
    expect_nil(c, "SPOP pool");
    unsigned long long before = durable_lsn(c);
    for (int i = 0; i < 500; i++) {
        expect_nil(c, "RPOP queue");
        expect_nil(c, "SPOP pool");
    }
    unsigned long long grew = durable_lsn(c) - before;
    /* A pop's record is 64 bytes or more: 1000 of them would be 64,000.
     * What the log may take meanwhile is the apply clock's ticks. */
    cr_assert_lt(grew, 2000, "1000 empty polls wrote %llu log bytes", grew);
    long long rpops = calls_of(c, "rpop");
    cr_assert_eq(rpops, 501, "cmdstat_rpop calls=%lld", rpops);
    cr_assert_eq(calls_of(c, "spop"), 501);
    cr_assert_eq(stat_of(c, "atticdb_write_probes"), 1000);
    cr_assert_eq(stat_of(c, "atticdb_writes_without_log"), 1000);
    /* The queue gets an element: the next poll pops it, through the log. */
    cr_assert_eq(qint(c, "LPUSH queue job"), 1);
    redisReply *r = q(c, "RPOP queue");
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert_str_eq(r->str, "job");
    freeReplyObject(r);
    expect_nil(c, "RPOP queue");
    /* A cache invalidation of a key that is not there, polled the same. */
    cr_assert_eq(qint(c, "DEL cache:1"), 0);
    before = durable_lsn(c);
    for (int i = 0; i < 500; i++)
        cr_assert_eq(qint(c, "DEL cache:1"), 0);
    grew = durable_lsn(c) - before;
    cr_assert_lt(grew, 1000, "500 deletions of a missing key wrote %llu log bytes", grew);
    cr_assert_eq(stat_of(c, "atticdb_writes_without_log"), 1500);
    /* Once the key exists, the deletion finds it. */
    freeReplyObject(q(c, "SET cache:1 v"));
    cr_assert_eq(qint(c, "DEL cache:1"), 1);
    cr_assert_eq(qint(c, "EXISTS cache:1"), 0);
    redisFree(c);
    cr_assert_eq(srv_stop(&S), 0);
    srv_cleanup(&S);
}

static redisContext *conn_on(int fe)
{
    return cr_conn_on(&S, fe);
}

#define PUSHES 400

/* One RPOP q: 1 when it popped an element (never seen before), 0 nil. */
static int pop_one(redisContext *c, char *seen)
{
    redisReply *r = q(c, "RPOP q");
    if (r->type == REDIS_REPLY_NIL) {
        freeReplyObject(r);
        return 0;
    }
    cr_assert_eq(r->type, REDIS_REPLY_STRING, "RPOP q: type %d", r->type);
    int v = atoi(r->str);
    cr_assert(v >= 0 && v < PUSHES && !seen[v], "element %s popped twice", r->str);
    seen[v] = 1;
    freeReplyObject(r);
    return 1;
}

Test(probe, a_push_from_another_frontend_is_popped_once)
{
    cr_assert_eq(srv_start(&S, "--frontends 2"), 0);
    redisContext *poller = conn_on(0), *pusher = conn_on(1);
    static char seen[PUSHES];
    memset(seen, 0, sizeof(seen));
    int got = 0;
    expect_nil(poller, "RPOP q");
    for (int i = 0; i < PUSHES; i++) {
        /* The push goes out, a poll races it, then the push's reply. */
        cr_assert_eq(redisAppendCommand(pusher, "RPUSH q %d", i), REDIS_OK);
        cr_assert_eq(redisBufferWrite(pusher, &(int){0}), REDIS_OK);
        got += pop_one(poller, seen);
        redisReply *r;
        cr_assert_eq(redisGetReply(pusher, (void **)&r), REDIS_OK, "%s", pusher->errstr);
        cr_assert_eq(r->type, REDIS_REPLY_INTEGER);
        freeReplyObject(r);
        /* Acknowledged: the next poll sees it, if the racing one did not. */
        if (got == i) got += pop_one(poller, seen);
        cr_assert_eq(got, i + 1, "element %d was not popped after it was acknowledged", i);
        expect_nil(poller, "RPOP q");
    }
    cr_assert_eq(qint(pusher, "LLEN q"), 0);
    cr_assert_eq(qint(pusher, "EXISTS q"), 0);
    redisFree(poller);
    redisFree(pusher);
    cr_assert_eq(srv_stop(&S), 0);
    srv_cleanup(&S);
}

static pid_t store_pid(void)
{
    pid_t pids[4];
    cr_assert_eq(srv_wait_children(&S, "atticdb-server: store", pids, 4, 1), 1, "no store");
    return pids[0];
}

static char *digest(redisContext *c)
{
    redisReply *r = q(c, "DEBUG DIGEST");
    cr_assert_eq(r->type, REDIS_REPLY_STATUS, "DEBUG DIGEST: %s", r->str);
    char *d = strdup(r->str);
    freeReplyObject(r);
    return d;
}

Test(probe, store_killed_under_pollers_then_replay)
{
    cr_assert_eq(srv_start(&S, "--frontends 2"), 0);
    redisContext *p0 = conn_on(0), *p1 = conn_on(1), *w = conn_on(0);
    expect_nil(p0, "LPOP jobs");
    expect_nil(p1, "SPOP tags");
    cr_assert_eq(qint(w, "RPUSH other 1 2 3"), 3);
    /* Polls in flight on both frontends when the store dies: each is
     * answered, by the store that replaces it. */
    cr_assert_eq(redisAppendCommand(p0, "LPOP jobs"), REDIS_OK);
    cr_assert_eq(redisAppendCommand(p1, "SPOP tags"), REDIS_OK);
    cr_assert_eq(redisAppendCommand(p0, "LPOP jobs"), REDIS_OK);
    pid_t old = store_pid();
    kill(old, SIGKILL);
    redisReply *r;
    cr_assert_eq(redisGetReply(p0, (void **)&r), REDIS_OK, "%s", p0->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    cr_assert_eq(redisGetReply(p1, (void **)&r), REDIS_OK, "%s", p1->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    cr_assert_eq(redisGetReply(p0, (void **)&r), REDIS_OK, "%s", p0->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    for (int i = 0; i < 50; i++) {
        expect_nil(p0, "LPOP jobs");
        expect_nil(p1, "SPOP tags");
    }
    cr_assert_eq(qint(w, "RPUSH jobs j"), 1);
    r = q(p0, "LPOP jobs");
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert_str_eq(r->str, "j");
    freeReplyObject(r);
    char *before = digest(w);
    redisFree(p0);
    redisFree(p1);
    redisFree(w);
    srv_kill_all(&S);
    cr_assert_eq(srv_restart(&S), 0, "restart after SIGKILL");
    redisContext *c = srv_connect(&S);
    cr_assert_not_null(c);
    char *after = digest(c);
    cr_assert_str_eq(after, before, "replay reached another state");
    free(before);
    free(after);
    redisFree(c);
    cr_assert_eq(srv_stop(&S), 0);
    srv_cleanup(&S);
}
