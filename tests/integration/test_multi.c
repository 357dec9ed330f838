/*
 * test_multi.c - transactions (MULTI, EXEC, DISCARD, WATCH, UNWATCH) and
 * SELECT against the real server:
 *   - differential: the same sequences sent to redis-server and to AtticDB,
 *     on two connections each, reply bytes compared (EXECABORT, runtime
 *     errors inside EXEC, SELECT inside MULTI, WATCH dirtied by the other
 *     connection, by the connection itself, by FLUSHALL, by expiry), and a
 *     seeded random run (ATTIC_SEED; printed on failure);
 *   - WATCH dirtied by a client on the same frontend and on another one;
 *   - limits: a transaction larger than one record is refused whole;
 *   - connection close drops the transaction;
 *   - SELECT and per-database data survive a restart;
 *   - atomicity: simulated power cuts (ATTICDB_TEST_FAULTS, as in
 *     test_powercut.c) during a load of big EXECs: after each restart every
 *     transaction is there whole or not at all, and every acked one whole.
 *
 * Environment: ATTICDB_SERVER, REDIS_SERVER (default: redis-server from
 * PATH; the differential tests are skipped without it), ATTIC_SEED,
 * ATTIC_MULTI_CUTS (power cuts, default 12).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "redis_diff.h"

/* Two frontends (a WATCH must see writes made through the other), and a
 * small ring: a record may hold 64 KiB, so the limit tests stay small. */
#define ATTIC_ARGS "--frontends 2 --ring-size 256kb --segment-size 1mb"

/* The differential runner on two connections to each server: DC(&d, i,
 * ...) sends on connection i of both. */
#define NCONN 2

static void start_both(diff_t *d)
{
    rdiff_start_both_with(d, ATTIC_ARGS, NULL, NCONN);
}

/* ------------------------------------------------------------------ */

TestSuite(multi, .fini = rdiff_teardown, .timeout = 240);

Test(multi, errors_and_queueing_as_redis)
{
    diff_t d;
    start_both(&d);
    DC(&d, 0, "FLUSHALL");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "DISCARD");
    DC(&d, 0, "EXEC", "x");
    DC(&d, 0, "MULTI", "x");
    DC(&d, 0, "WATCH");
    DC(&d, 0, "UNWATCH", "x");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "MULTI");      /* nested: an error that does not abort */
    DC(&d, 0, "WATCH", "x"); /* inside MULTI: the same */
    DC(&d, 0, "SET", "a", "1");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "DISCARD");
    DC(&d, 0, "DISCARD");
    /* Queue-time errors: EXECABORT, nothing runs. */
    DC(&d, 0, "MULTI");
    DC(&d, 0, "SET", "q", "1");
    DC(&d, 0, "NOSUCHCOMMAND", "x");
    DC(&d, 0, "SET", "q");
    DC(&d, 0, "GET", "q");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "GET", "q");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "MULTI", "x");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "DISCARD", "x");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "SET", "q", "1");
    DC(&d, 0, "EXEC", "x"); /* EXEC's own arity error ends the transaction */
    DC(&d, 0, "EXEC");
    DC(&d, 0, "GET", "q");
    /* Runtime errors are elements of EXEC's reply. */
    DC(&d, 0, "MULTI");
    DC(&d, 0, "SET", "x", "y", "EX", "0");
    DC(&d, 0, "SET", "x", "y", "NX", "XX");
    DC(&d, 0, "INCR", "x");
    DC(&d, 0, "SET", "s", "abc");
    DC(&d, 0, "INCR", "s");
    DC(&d, 0, "GET", "s");
    DC(&d, 0, "INCRBY", "s", "notanumber");
    DC(&d, 0, "EXPIRE", "s", "100", "XX", "NX");
    DC(&d, 0, "PING");
    DC(&d, 0, "ECHO", "hello");
    DC(&d, 0, "UNWATCH");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "EXEC");
    /* Reads and writes see each other inside, in order. */
    char big[201];
    memset(big, 'B', 200);
    big[200] = '\0';
    DC(&d, 0, "MULTI");
    DC(&d, 0, "SET", "k", "v");
    DC(&d, 0, "GET", "k");
    DC(&d, 0, "APPEND", "k", big);
    DC(&d, 0, "STRLEN", "k");
    DC(&d, 0, "GET", "k");
    DC(&d, 0, "MSET", "m1", big, "m2", "2");
    DC(&d, 0, "MGET", "m1", "m2", "nokey");
    DC(&d, 0, "GETDEL", "k");
    DC(&d, 0, "EXISTS", "k", "m1");
    DC(&d, 0, "DEL", "m1", "m2", "nokey");
    DC(&d, 0, "INCR", "counter");
    DC(&d, 0, "DECRBY", "counter", "10");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "GET", "counter");
    /* DISCARD changes nothing. */
    DC(&d, 0, "MULTI");
    DC(&d, 0, "SET", "discarded", "1");
    DC(&d, 0, "DISCARD");
    DC(&d, 0, "GET", "discarded");
    /* A pipeline of a whole transaction. */
    DRAW(&d, 0,
         "MULTI\r\nSET p 1\r\nINCR p\r\nGET p\r\nEXEC\r\nGET p\r\n"
         "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nq\r\n$3\r\nabc\r\n*1\r\n$4\r\nEXEC\r\n",
         9);
    rdiff_end_both(&d);
}

Test(multi, select_inside_and_outside_multi)
{
    diff_t d;
    start_both(&d);
    DC(&d, 0, "FLUSHALL");
    DC(&d, 0, "SELECT", "16");
    DC(&d, 0, "SELECT", "15");
    DC(&d, 0, "SELECT", "-1");
    DC(&d, 0, "SELECT", "x");
    DC(&d, 0, "SELECT", "1.5");
    DC(&d, 0, "SELECT", "99999999999");
    DC(&d, 0, "SET", "k", "fifteen");
    DC(&d, 0, "SELECT", "0");
    DC(&d, 0, "GET", "k");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "SET", "k", "zero");
    DC(&d, 0, "SELECT", "1");
    DC(&d, 0, "SET", "k", "one");
    DC(&d, 0, "SELECT", "99");
    DC(&d, 0, "SELECT", "x");
    DC(&d, 0, "GET", "k");
    DC(&d, 0, "SELECT", "0");
    DC(&d, 0, "GET", "k");
    DC(&d, 0, "SELECT", "15");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "GET", "k"); /* the connection is in 15 now */
    DC(&d, 0, "SELECT", "1");
    DC(&d, 0, "GET", "k");
    DC(&d, 0, "DBSIZE");
    /* Per-database keyspace commands. */
    DC(&d, 0, "SET", "e", "1");
    DC(&d, 0, "EXPIRE", "e", "1000");
    DC(&d, 0, "PERSIST", "e");
    DC(&d, 0, "EXISTS", "e", "k");
    DC(&d, 0, "DEL", "e");
    DC(&d, 1, "SELECT", "1");
    DC(&d, 1, "GET", "k");
    DC(&d, 1, "INCR", "n1");
    DC(&d, 0, "GET", "n1");
    DC(&d, 0, "SELECT", "0");
    DC(&d, 0, "GET", "n1");
    DC(&d, 0, "DBSIZE");
    /* SELECT queued before an EXECABORT changes nothing. */
    DC(&d, 0, "MULTI");
    DC(&d, 0, "SELECT", "2");
    DC(&d, 0, "BADCOMMAND");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "GET", "k");
    /* ... nor before a DISCARD. */
    DC(&d, 0, "MULTI");
    DC(&d, 0, "SELECT", "2");
    DC(&d, 0, "DISCARD");
    DC(&d, 0, "GET", "k");
    rdiff_end_both(&d);
}

Test(multi, watch_as_redis)
{
    diff_t d;
    start_both(&d);
    DC(&d, 0, "FLUSHALL");
    DC(&d, 0, "SET", "k", "1");
    /* Another connection changes the key. */
    DC(&d, 0, "WATCH", "k");
    DC(&d, 1, "SET", "k", "2");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "INCR", "n");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "GET", "n");
    /* EXEC unwatched: the next one runs. */
    DC(&d, 0, "MULTI");
    DC(&d, 0, "INCR", "n");
    DC(&d, 0, "EXEC");
    /* Reads and other keys do not dirty it; an empty EXEC runs. */
    DC(&d, 0, "WATCH", "k", "k", "k2");
    DC(&d, 1, "GET", "k");
    DC(&d, 1, "SET", "other", "1");
    DC(&d, 1, "DEL", "nokey");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "EXEC");
    /* The connection's own write dirties it; the empty EXEC is null. */
    DC(&d, 0, "WATCH", "k");
    DC(&d, 0, "SET", "k", "3");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "EXEC");
    /* UNWATCH, DISCARD and EXECABORT drop the watch. */
    DC(&d, 0, "WATCH", "k");
    DC(&d, 1, "SET", "k", "4");
    DC(&d, 0, "UNWATCH");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "PING");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "WATCH", "k");
    DC(&d, 1, "SET", "k", "5");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "DISCARD");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "PING");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "WATCH", "k");
    DC(&d, 1, "SET", "k", "6");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "NOSUCH");
    DC(&d, 0, "EXEC"); /* EXECABORT wins over the dirty watch */
    DC(&d, 0, "MULTI");
    DC(&d, 0, "PING");
    DC(&d, 0, "EXEC");
    /* UNWATCH inside MULTI is queued and does not save the transaction. */
    DC(&d, 0, "WATCH", "k");
    DC(&d, 1, "APPEND", "k", "x");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "UNWATCH");
    DC(&d, 0, "EXEC");
    /* WATCH accumulates; a key is judged from when it was watched. */
    DC(&d, 0, "WATCH", "a");
    DC(&d, 1, "SET", "b", "1");
    DC(&d, 0, "WATCH", "b");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "SET", "ab", "ok");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "WATCH", "a");
    DC(&d, 0, "WATCH", "b");
    DC(&d, 1, "SET", "a", "1");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "SET", "ab", "no");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "GET", "ab");
    /* The key's database counts. */
    DC(&d, 0, "SELECT", "3");
    DC(&d, 0, "WATCH", "k");
    DC(&d, 1, "SET", "k", "db0");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "PING");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "WATCH", "k");
    DC(&d, 1, "SELECT", "3");
    DC(&d, 1, "SET", "k", "db3");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "PING");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "SELECT", "0");
    DC(&d, 1, "SELECT", "0");
    /* Every kind of change. */
    const char *const changes[][4] = {
        {"DEL", "k", NULL},  {"EXPIRE", "k", "1000", NULL}, {"PERSIST", "k", NULL},
        {"INCR", "k", NULL}, {"GETDEL", "k", NULL},         {"MSET", "z", "1", "k"},
    };
    for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
        DC(&d, 0, "SET", "k", "7", "EX", "1000");
        DC(&d, 0, "WATCH", "k");
        int n = 0;
        while (n < 4 && changes[i][n])
            n++;
        const char *argv[5];
        for (int j = 0; j < n; j++)
            argv[j] = changes[i][j];
        if (i == 5) argv[n++] = "8";
        rdiff_cmd(&d, __LINE__, 1, RDIFF_EXACT, n, argv, NULL);
        DC(&d, 0, "MULTI");
        DC(&d, 0, "PING");
        DC(&d, 0, "EXEC");
    }
    /* SMOVE dirties its destination only when the member was added
     * (Redis' unit/type/set.tcl): one already there leaves it unchanged. */
    DC(&d, 0, "SADD", "src", "a", "b");
    DC(&d, 0, "SADD", "dst", "a");
    DC(&d, 0, "WATCH", "dst");
    DC(&d, 1, "SMOVE", "src", "dst", "a");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "SADD", "dst", "c");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "WATCH", "dst");
    DC(&d, 1, "SMOVE", "src", "dst", "b");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "SADD", "dst", "d");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "SCARD", "dst");
    /* FLUSHALL dirties a watched key that existed, not one that did not. */
    DC(&d, 0, "SET", "k", "1");
    DC(&d, 0, "WATCH", "k");
    DC(&d, 1, "FLUSHALL");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "PING");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "WATCH", "nokey");
    DC(&d, 1, "FLUSHALL");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "PING");
    DC(&d, 0, "EXEC");
    /* Expiry: a key that expires while watched dirties it; one already
     * expired when watched does not. */
    DC(&d, 0, "SET", "t", "v", "PX", "1000");
    DC(&d, 0, "WATCH", "t");
    RDIFF_AWAIT_EXPIRED(&d, "t");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "PING");
    DC(&d, 0, "EXEC");
    DC(&d, 0, "SET", "t", "v", "PX", "50");
    RDIFF_AWAIT_EXPIRED(&d, "t");
    DC(&d, 0, "WATCH", "t");
    DC(&d, 0, "MULTI");
    DC(&d, 0, "PING");
    DC(&d, 0, "EXEC");
    /* SELECT inside a transaction that WATCH aborts does not switch. */
    DC(&d, 0, "SET", "k", "1");
    DC(&d, 0, "WATCH", "k");
    DC(&d, 1, "SET", "k", "2");
    DRAW(&d, 0, "MULTI\r\nSELECT 4\r\nSET s4 1\r\nEXEC\r\nSET s0 1\r\nDBSIZE\r\n", 6);
    DC(&d, 0, "WATCH", "k");
    DRAW(&d, 0, "MULTI\r\nSELECT 4\r\nSET s4 1\r\nEXEC\r\nSET s4b 1\r\nDBSIZE\r\n", 6);
    DC(&d, 0, "SELECT", "0");
    DC(&d, 0, "DBSIZE");
    rdiff_end_both(&d);
}

/* Seeded random sequences of transactions and plain commands on two
 * connections, compared reply by reply. */
Test(multi, random_sequences_as_redis)
{
    diff_t d;
    start_both(&d);
    unsigned seed =
        getenv("ATTIC_SEED") ? (unsigned)atoi(getenv("ATTIC_SEED")) : (unsigned)time(NULL);
    srandom(seed);
    fprintf(stderr, "multi random: seed %u (ATTIC_SEED=%u to repeat)\n", seed, seed);
    DC(&d, 0, "FLUSHALL");
    static const char *const keys[] = {"a", "b", "c", "d"};
    for (int step = 0; step < 600 && !d.mismatches; step++) {
        int ci = (int)(random() % NCONN);
        const char *k = keys[random() % 4], *k2 = keys[random() % 4];
        char v[64];
        snprintf(v, sizeof(v), "%ld%s", random() % 100,
                 random() % 3 ? "" : "-a-value-longer-than-24-bytes");
        const char *argv[6];
        int argc = 0;
        switch (random() % 20) {
        case 0:
            argv[argc++] = "MULTI";
            break;
        case 1:
        case 2:
            argv[argc++] = "EXEC";
            break;
        case 3:
            argv[argc++] = "DISCARD";
            break;
        case 4:
            argv[argc++] = "WATCH";
            argv[argc++] = k;
            if (random() % 2) argv[argc++] = k2;
            break;
        case 5:
            argv[argc++] = "UNWATCH";
            break;
        case 6:
            argv[argc++] = "SELECT";
            argv[argc++] = random() % 4 ? (random() % 2 ? "0" : "1") : "77";
            break;
        case 7:
        case 8:
            argv[argc++] = "SET";
            argv[argc++] = k;
            argv[argc++] = v;
            break;
        case 9:
            argv[argc++] = "GET";
            argv[argc++] = k;
            break;
        case 10:
            argv[argc++] = "INCR";
            argv[argc++] = k;
            break;
        case 11:
            argv[argc++] = "DEL";
            argv[argc++] = k;
            argv[argc++] = k2;
            break;
        case 12:
            argv[argc++] = "APPEND";
            argv[argc++] = k;
            argv[argc++] = v;
            break;
        case 13:
            argv[argc++] = "MGET";
            argv[argc++] = k;
            argv[argc++] = k2;
            break;
        case 14:
            argv[argc++] = "EXPIRE";
            argv[argc++] = k;
            argv[argc++] = "5000";
            break;
        case 15:
            argv[argc++] = "PERSIST";
            argv[argc++] = k;
            break;
        case 16:
            argv[argc++] = "GETDEL";
            argv[argc++] = k;
            break;
        case 17:
            argv[argc++] = random() % 2 ? "NOSUCHCMD" : "SET";
            argv[argc++] = k;
            break;
        case 18:
            argv[argc++] = "EXISTS";
            argv[argc++] = k;
            argv[argc++] = k2;
            break;
        default:
            argv[argc++] = random() % 10 ? "PING" : "FLUSHALL";
            break;
        }
        if (!rdiff_cmd(&d, __LINE__, ci, RDIFF_EXACT, argc, argv, NULL))
            cr_expect_fail("random run diverged at step %d (seed %u)", step, seed);
    }
    rdiff_end_both(&d);
}

/* ------------------------------------------------------------------ */
/* AtticDB only                                                        */

static const char *cmd_raw(redisContext *c, const char *fmt, ...)
{
    static char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (!r) {
        snprintf(buf, sizeof(buf), "<error %s>", c->errstr);
        return buf;
    }
    switch (r->type) {
    case REDIS_REPLY_STATUS:
        snprintf(buf, sizeof(buf), "+%s", r->str);
        break;
    case REDIS_REPLY_ERROR:
        snprintf(buf, sizeof(buf), "-%s", r->str);
        break;
    case REDIS_REPLY_INTEGER:
        snprintf(buf, sizeof(buf), ":%lld", r->integer);
        break;
    case REDIS_REPLY_NIL:
        snprintf(buf, sizeof(buf), "(nil)");
        break;
    case REDIS_REPLY_STRING:
        snprintf(buf, sizeof(buf), "$%s", r->str);
        break;
    case REDIS_REPLY_ARRAY:
        snprintf(buf, sizeof(buf), "*%zu", r->elements);
        break;
    default:
        snprintf(buf, sizeof(buf), "?%d", r->type);
        break;
    }
    freeReplyObject(r);
    return buf;
}

/* WATCH on one connection, a write through another on the same frontend,
 * or on the other frontend: EXEC aborts either way; a write to another key
 * does not abort it. */
Test(multi, watch_sees_writes_of_every_frontend)
{
    rdiff_start_atticdb_args(ATTIC_ARGS);
    redisContext *c[16];
    int fe[16], n = 0, watcher = -1, same = -1, other = -1;
    for (; n < 16 && (watcher < 0 || same < 0 || other < 0); n++) {
        c[n] = srv_connect(&rdiff_atticdb);
        cr_assert_not_null(c[n]);
        fe[n] = srv_frontend_of(c[n]);
        cr_assert_geq(fe[n], 0, "INFO server has no frontend: field");
        if (watcher < 0)
            watcher = n;
        else if (fe[n] == fe[watcher] && same < 0)
            same = n;
        else if (fe[n] != fe[watcher] && other < 0)
            other = n;
    }
    cr_assert(same >= 0 && other >= 0, "16 connections did not reach both frontends");
    const int writers[2] = {same, other};
    for (int w = 0; w < 2; w++) {
        redisContext *a = c[watcher], *b = c[writers[w]];
        cr_assert_str_eq(cmd_raw(a, "SET k%d 1", w), "+OK");
        cr_assert_str_eq(cmd_raw(a, "WATCH k%d", w), "+OK");
        cr_assert_str_eq(cmd_raw(b, "SET other%d x", w), "+OK");
        cr_assert_str_eq(cmd_raw(a, "MULTI"), "+OK");
        cr_assert_str_eq(cmd_raw(a, "INCR n%d", w), "+QUEUED");
        cr_assert_str_eq(cmd_raw(a, "EXEC"), "*1", "%s frontend: an unrelated write aborted EXEC",
                         w ? "other" : "same");
        cr_assert_str_eq(cmd_raw(a, "WATCH k%d", w), "+OK");
        cr_assert_str_eq(cmd_raw(b, "SET k%d 2", w), "+OK");
        cr_assert_str_eq(cmd_raw(a, "MULTI"), "+OK");
        cr_assert_str_eq(cmd_raw(a, "INCR n%d", w), "+QUEUED");
        cr_assert_str_eq(cmd_raw(a, "EXEC"), "(nil)", "%s frontend: EXEC not aborted",
                         w ? "other" : "same");
        cr_assert_str_eq(cmd_raw(b, "GET n%d", w), "$1");
    }
    /* Many watchers racing for one counter: every increment that EXEC
     * reports is counted once (optimistic locking works across frontends). */
    int done = 0, aborts = 0;
    for (int round = 0; round < 200; round++) {
        int ia = round % n, ib = (ia + 1 + round % (n - 1)) % n; /* never ia */
        redisContext *a = c[ia], *b = c[ib];
        cmd_raw(a, "WATCH ctr");
        cmd_raw(b, "WATCH ctr");
        redisReply *ra = redisCommand(a, "GET ctr"), *rb = redisCommand(b, "GET ctr");
        long va = ra->type == REDIS_REPLY_STRING ? atol(ra->str) : 0;
        long vb = rb->type == REDIS_REPLY_STRING ? atol(rb->str) : 0;
        freeReplyObject(ra);
        freeReplyObject(rb);
        redisAppendCommand(a, "MULTI");
        redisAppendCommand(a, "SET ctr %ld", va + 1);
        redisAppendCommand(a, "EXEC");
        redisAppendCommand(b, "MULTI");
        redisAppendCommand(b, "SET ctr %ld", vb + 1);
        redisAppendCommand(b, "EXEC");
        redisContext *order[2] = {a, b};
        for (int i = 0; i < 2; i++) {
            redisReply *r;
            for (int j = 0; j < 3; j++) {
                cr_assert_eq(redisGetReply(order[i], (void **)&r), REDIS_OK);
                if (j == 2) {
                    if (r->type == REDIS_REPLY_ARRAY)
                        done++;
                    else {
                        cr_assert_eq(r->type, REDIS_REPLY_NIL);
                        aborts++;
                    }
                }
                freeReplyObject(r);
            }
        }
    }
    redisReply *r = redisCommand(c[0], "GET ctr");
    cr_assert_eq(atol(r->str), done, "%d EXECs succeeded but the counter is %s", done, r->str);
    freeReplyObject(r);
    cr_assert_gt(done, 0);
    for (int i = 0; i < n; i++)
        redisFree(c[i]);
}

Test(multi, transaction_larger_than_a_record_is_refused_whole)
{
    rdiff_start_atticdb_args(ATTIC_ARGS); /* a record holds 64 KiB */
    redisContext *c = srv_connect(&rdiff_atticdb);
    char *val = malloc(4001);
    memset(val, 'v', 4000);
    val[4000] = '\0';
    cr_assert_str_eq(cmd_raw(c, "MULTI"), "+OK");
    int queued = 0, refused = 0;
    for (int i = 0; i < 40; i++) {
        const char *r = cmd_raw(c, "SET big:%d %s", i, val);
        if (!strcmp(r, "+QUEUED"))
            queued++;
        else {
            cr_assert(strstr(r, "-ERR transaction too large") == r, "%s", r);
            refused++;
        }
    }
    cr_assert_gt(queued, 5);
    cr_assert_gt(refused, 0, "40 x 4 KB fit one 64 KiB record?");
    cr_assert_str_eq(cmd_raw(c, "EXEC"),
                     "-EXECABORT Transaction discarded because of previous errors.");
    cr_assert_str_eq(cmd_raw(c, "EXISTS big:0 big:1"), ":0");
    /* A transaction that fits runs. */
    cr_assert_str_eq(cmd_raw(c, "MULTI"), "+OK");
    for (int i = 0; i < 10; i++)
        cr_assert_str_eq(cmd_raw(c, "SET big:%d %s", i, val), "+QUEUED");
    cr_assert_str_eq(cmd_raw(c, "EXEC"), "*10");
    cr_assert_str_eq(cmd_raw(c, "STRLEN big:9"), ":4000");
    /* Too many watched keys for one record. */
    redisAppendCommand(c, "WATCH %s %s %s %s %s %s %s %s %s %s %s %s %s %s %s %s %s", val, val, val,
                       val, val, val, val, val, val, val, val, val, val, val, val, val, val);
    redisReply *r;
    cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
    cr_assert_eq(r->type, REDIS_REPLY_ERROR);
    freeReplyObject(r);
    free(val);
    redisFree(c);
}

Test(multi, closing_the_connection_drops_the_transaction)
{
    rdiff_start_atticdb_args(ATTIC_ARGS);
    redisContext *a = srv_connect(&rdiff_atticdb), *b = srv_connect(&rdiff_atticdb);
    cr_assert_str_eq(cmd_raw(a, "MULTI"), "+OK");
    cr_assert_str_eq(cmd_raw(a, "SET dropped 1"), "+QUEUED");
    redisFree(a);
    usleep(100 * 1000);
    cr_assert_str_eq(cmd_raw(b, "GET dropped"), "(nil)");
    /* A pipeline cut before EXEC. */
    wire_conn_t *raw = wire_open(rdiff_atticdb.port, 10);
    const char *p = "MULTI\r\nSET dropped2 1\r\n";
    cr_assert_eq(wire_write(raw, p, strlen(p)), 0);
    wire_close(raw);
    usleep(100 * 1000);
    cr_assert_str_eq(cmd_raw(b, "GET dropped2"), "(nil)");
    redisFree(b);
}

Test(multi, databases_survive_a_restart)
{
    rdiff_start_atticdb_args(ATTIC_ARGS);
    redisContext *c = srv_connect(&rdiff_atticdb);
    for (int db = 0; db < 16; db += 5) {
        cr_assert_str_eq(cmd_raw(c, "SELECT %d", db), "+OK");
        cr_assert_str_eq(cmd_raw(c, "SET k value-of-db-%d-which-is-longer-than-24", db), "+OK");
        cr_assert_str_eq(cmd_raw(c, "SET n%d %d", db, db), "+OK");
        cr_assert_str_eq(cmd_raw(c, "EXPIRE k %d", 100000 + db), ":1");
    }
    cr_assert_str_eq(cmd_raw(c, "SELECT 5"), "+OK");
    cr_assert_str_eq(cmd_raw(c, "DEL n5"), ":1");
    cr_assert_str_eq(cmd_raw(c, "MULTI"), "+OK");
    cr_assert_str_eq(cmd_raw(c, "SELECT 7"), "+QUEUED");
    cr_assert_str_eq(cmd_raw(c, "SET intx 7"), "+QUEUED");
    cr_assert_str_eq(cmd_raw(c, "SELECT 8"), "+QUEUED");
    cr_assert_str_eq(cmd_raw(c, "SET intx 8"), "+QUEUED");
    cr_assert_str_eq(cmd_raw(c, "EXEC"), "*4");
    cr_assert_str_eq(cmd_raw(c, "SET after-exec in8"), "+OK");
    redisFree(c);
    cr_assert_eq(srv_stop(&rdiff_atticdb), 0);
    cr_assert_eq(srv_restart(&rdiff_atticdb), 0);
    c = srv_connect(&rdiff_atticdb);
    for (int db = 0; db < 16; db += 5) {
        cr_assert_str_eq(cmd_raw(c, "SELECT %d", db), "+OK");
        char want[64];
        snprintf(want, sizeof(want), "$value-of-db-%d-which-is-longer-than-24", db);
        cr_assert_str_eq(cmd_raw(c, "GET k"), want);
        const char *ttl = cmd_raw(c, "TTL k");
        cr_assert(ttl[0] == ':' && atol(ttl + 1) > 99000 + db && atol(ttl + 1) <= 100000 + db, "%s",
                  ttl);
        if (db == 5)
            cr_assert_str_eq(cmd_raw(c, "GET n5"), "(nil)");
        else
            cr_assert_str_eq(cmd_raw(c, "EXISTS n%d", db), ":1");
        cr_assert_str_eq(cmd_raw(c, "DBSIZE"), db == 5 ? ":1" : ":2");
    }
    cr_assert_str_eq(cmd_raw(c, "SELECT 7"), "+OK");
    cr_assert_str_eq(cmd_raw(c, "GET intx"), "$7");
    cr_assert_str_eq(cmd_raw(c, "SELECT 8"), "+OK");
    cr_assert_str_eq(cmd_raw(c, "GET intx"), "$8");
    cr_assert_str_eq(cmd_raw(c, "GET after-exec"), "$in8");
    cr_assert_str_eq(cmd_raw(c, "SELECT 1"), "+OK");
    cr_assert_str_eq(cmd_raw(c, "DBSIZE"), ":0");
    redisFree(c);
}

/* ------------------------------------------------------------------ */
/* atomicity under power cuts                                          */

enum { TX_KEYS = 100, TX_MAX_ROUNDS = 100000 };

typedef struct tx_writer {
    int port;
    int cut;
    int attempted; /* transactions sent (acked or not) */
    int acked;     /* transactions whose EXEC reply arrived */
    volatile int *stop;
} tx_writer_t;

static void tx_value(char *out, size_t n, int cut, int round, int i)
{
    int k = snprintf(out, n, "c%d-r%d-i%d-", cut, round, i);
    memset(out + k, 'x', 150); /* an extent inside the transaction's record */
    out[k + 150] = '\0';
}

static void *tx_writer_main(void *arg)
{
    tx_writer_t *w = arg;
    srv_t tmp = {.port = w->port};
    redisContext *c = srv_connect(&tmp);
    if (!c) return NULL;
    redisSetTimeout(c, (struct timeval){2, 0});
    for (int round = 0; round < TX_MAX_ROUNDS && !*w->stop; round++) {
        redisAppendCommand(c, "MULTI");
        for (int i = 0; i < TX_KEYS; i++) {
            char v[256];
            tx_value(v, sizeof(v), w->cut, round, i);
            redisAppendCommand(c, "SET tx:%d:%d:%d %s", w->cut, round, i, v);
        }
        redisAppendCommand(c, "EXEC");
        w->attempted = round + 1;
        int ok = 1;
        for (int i = 0; i < TX_KEYS + 2 && ok; i++) {
            redisReply *r;
            if (redisGetReply(c, (void **)&r) != REDIS_OK || !r) {
                ok = 0;
                break;
            }
            if (i == TX_KEYS + 1) ok = r->type == REDIS_REPLY_ARRAY && r->elements == TX_KEYS;
            freeReplyObject(r);
        }
        if (!ok) break;
        w->acked = round + 1;
    }
    redisFree(c);
    return NULL;
}

static void *noise_main(void *arg)
{
    tx_writer_t *w = arg;
    srv_t tmp = {.port = w->port};
    redisContext *c = srv_connect(&tmp);
    if (!c) return NULL;
    redisSetTimeout(c, (struct timeval){2, 0});
    for (int i = 0; !*w->stop; i++) {
        redisReply *r = redisCommand(c, "INCR noise");
        if (!r) break;
        freeReplyObject(r);
    }
    redisFree(c);
    return NULL;
}

Test(multi, transactions_are_durable_whole_or_not_at_all)
{
    int cuts = getenv("ATTIC_MULTI_CUTS") ? atoi(getenv("ATTIC_MULTI_CUTS")) : 12;
    unsigned seed =
        getenv("ATTIC_SEED") ? (unsigned)atoi(getenv("ATTIC_SEED")) : (unsigned)time(NULL);
    srandom(seed);
    fprintf(stderr, "multi powercut: %d cuts, seed %u (ATTIC_SEED=%u to repeat)\n", cuts, seed,
            seed);
    srv_t s;
    int really_cut = 0, torn_seen = 0, acked_total = 0, whole_unacked = 0;
    for (int cut = 0; cut < cuts; cut++) {
        char spec[64];
        snprintf(spec, sizeof(spec), "logger.fdatasync:%ld:CUT", 5 + random() % 150);
        setenv("ATTICDB_TEST_FAULTS", spec, 1);
        int rc = cut == 0 ? srv_start(&s, ATTIC_ARGS) : srv_restart(&s);
        unsetenv("ATTICDB_TEST_FAULTS");
        cr_assert_eq(rc, 0, "server did not start for cut %d (seed %u)", cut, seed);
        volatile int stop = 0;
        tx_writer_t txw = {.port = s.port, .cut = cut, .stop = &stop};
        tx_writer_t noise = {.port = s.port, .stop = &stop};
        pthread_t t1, t2;
        pthread_create(&t1, NULL, tx_writer_main, &txw);
        pthread_create(&t2, NULL, noise_main, &noise);
        for (int i = 0; i < 300 && kill(s.pid, 0) == 0; i++) {
            int status;
            if (waitpid(s.pid, &status, WNOHANG) == s.pid) {
                really_cut++;
                break;
            }
            usleep(10000);
        }
        stop = 1;
        srv_kill_all(&s);
        pthread_join(t1, NULL);
        pthread_join(t2, NULL);
        char tail[2048];
        cr_assert_eq(srv_restart(&s), 0, "no restart after cut %d (%s, seed %u); log:\n%s", cut,
                     spec, seed, srv_log_tail(&s, tail, sizeof(tail)));
        redisContext *c = srv_connect(&s);
        cr_assert_not_null(c);
        for (int round = 0; round < txw.attempted; round++) {
            for (int i = 0; i < TX_KEYS; i++)
                redisAppendCommand(c, "GET tx:%d:%d:%d", cut, round, i);
            int present = 0;
            for (int i = 0; i < TX_KEYS; i++) {
                redisReply *r;
                cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
                if (r->type == REDIS_REPLY_STRING) {
                    char want[256];
                    tx_value(want, sizeof(want), cut, round, i);
                    cr_assert_str_eq(r->str, want, "cut %d round %d key %d (seed %u)", cut, round,
                                     i, seed);
                    present++;
                }
                freeReplyObject(r);
            }
            cr_assert(present == 0 || present == TX_KEYS,
                      "cut %d (%s): transaction %d is there in part: %d of %d keys (seed %u)", cut,
                      spec, round, present, TX_KEYS, seed);
            if (round < txw.acked)
                cr_assert_eq(present, TX_KEYS, "cut %d: acked transaction %d lost (seed %u)", cut,
                             round, seed);
            if (round >= txw.acked && present == 0) torn_seen++;
            if (round >= txw.acked && present == TX_KEYS) whole_unacked++;
        }
        acked_total += txw.acked;
        redisFree(c);
        srv_kill_all(&s);
    }
    fprintf(stderr,
            "multi powercut: %d of %d rounds cut power; %d transactions acked, of the unacked "
            "%d absent and %d whole\n",
            really_cut, cuts, acked_total, torn_seen, whole_unacked);
    cr_assert_gt(acked_total, 0, "no transaction was acked (seed %u)", seed);
    cr_assert_gt(really_cut, 0, "no round reached its cut point (seed %u)", seed);
    srv_cleanup(&s);
}
