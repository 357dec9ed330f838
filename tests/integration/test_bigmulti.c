/*
 * test_bigmulti.c - several large values in one command, large values in
 * MULTI/EXEC, and reads of arguments longer than a store channel message
 * (D58) with the real server.
 *
 * The replies are compared byte for byte with a real redis-server's (MSET,
 * MSETNX, HSET, HMSET, RPUSH, LPUSH, SADD, SREM with two or more values
 * past a record; a transaction of large writes and reads, its errors,
 * DISCARD, EXECABORT and WATCH; SISMEMBER, SMISMEMBER, LPOS, HEXISTS,
 * ZSCORE of a member past the channel). Then each way a large command or
 * a transaction can be cut is tried: the frontend killed after some of its
 * chunks, and killed or the whole server SIGKILLed while a transaction's
 * values are queued, or an MSET's values sent, half of one sent; a
 * checkpoint written while such a group is pending, loaded by a
 * respawned store, then EXEC (or the rest of the MSET), or the frontend's
 * death; the store or a frontend killed while a read goes in parts; a
 * replica's transaction. After each: nothing of a write that was not
 * acknowledged is visible, its parts no longer count live, and the DEBUG
 * DIGEST equals a replay of the whole log. The frontend's RSS stays within
 * 64 MB of idle while 3 x 100 MB are queued in one transaction and two
 * 100 MB values go in one MSET.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bigval_helpers.h"
#include "harness.h"
#include "redis_diff.h"

static void teardown(void)
{
    rdiff_teardown();
    srv_cleanup_all();
}

TestSuite(bigmulti, .fini = teardown, .timeout = 600);

#define MB BV_MB

/* ---- replies compared with redis-server --------------------------------- */

typedef struct arg {
    const char *p;
    size_t n;
} arg_t;

#define S(x)    ((arg_t){(x), strlen(x)})
#define B(p, n) ((arg_t){(p), (n)})
#define DV(d, ci, ...)                                                                             \
    dv((d), __LINE__, (ci), (int)(sizeof((arg_t[]){__VA_ARGS__}) / sizeof(arg_t)),                 \
       (arg_t[]){__VA_ARGS__})

/* One command of binary arguments to both servers on connection ci. */
static int dv(diff_t *d, int line, int ci, int argc, const arg_t *a)
{
    const char *argv[64];
    size_t lens[64];
    cr_assert_leq(argc, 64);
    for (int i = 0; i < argc; i++) {
        argv[i] = a[i].p;
        lens[i] = a[i].n;
    }
    return rdiff_cmd(d, line, ci, RDIFF_EXACT, argc, argv, lens);
}

/* Every value at once: a ring of 1 MB (records of 256 KB, so each of these
 * values is dozens of chunks) and a channel of 1 MB (messages of 512 KB,
 * so a read of a 3 MB member goes in parts). */
#define ARGS BV_SMALL_RING " --channel-size 1mb"

Test(bigmulti, several_large_values_in_one_command_reply_as_redis)
{
    diff_t d;
    rdiff_start_both_with(&d, ARGS, NULL, 1);
    size_t n3 = 3 * MB + 5, n5 = 5 * MB + 3, nm = 200 * 1024;
    char *v3 = bv_pattern(n3, 1), *v5 = bv_pattern(n5, 2), *m = bv_pattern(10 * nm, 3);
    DV(&d, 0, S("MSET"), S("k1"), B(v3, n3), S("k2"), B(v5, n5), S("k3"), S("small"));
    DV(&d, 0, S("MGET"), S("k1"), S("k2"), S("k3"));
    DV(&d, 0, S("MSETNX"), S("k1"), B(v5, n5), S("k4"), B(v3, n3));
    DV(&d, 0, S("EXISTS"), S("k4"));
    DV(&d, 0, S("MSETNX"), S("k5"), B(v5, n5), S("k6"), B(v3, n3));
    DV(&d, 0, S("MGET"), S("k5"), S("k6"));
    /* Ten values, each under a chunk, past a record together. */
    arg_t ms[21] = {S("MSET")};
    char keys[10][8];
    for (int i = 0; i < 10; i++) {
        snprintf(keys[i], sizeof(keys[i]), "m%d", i);
        ms[1 + 2 * i] = S(keys[i]);
        ms[2 + 2 * i] = B(m + (size_t)i * nm, nm);
    }
    dv(&d, __LINE__, 0, 21, ms);
    DV(&d, 0, S("MGET"), S("m0"), S("m4"), S("m9"));
    DV(&d, 0, S("HSET"), S("h"), S("f1"), B(v3, n3), S("f2"), B(v5, n5), S("f3"), S("x"));
    DV(&d, 0, S("HSET"), S("h"), S("f1"), B(v5, n5), S("f4"), B(v3, n3));
    DV(&d, 0, S("HMSET"), S("h"), S("f5"), B(v3, n3), S("f6"), B(v3 + 1, n3 - 1));
    DV(&d, 0, S("HMGET"), S("h"), S("f1"), S("f3"), S("f4"), S("f6"));
    DV(&d, 0, S("HSTRLEN"), S("h"), S("f2"));
    DV(&d, 0, S("HLEN"), S("h"));
    DV(&d, 0, S("RPUSH"), S("l"), B(v3, n3), S("a"), B(v5, n5));
    DV(&d, 0, S("LPUSH"), S("l"), B(v5, n5), B(v3, n3));
    DV(&d, 0, S("LRANGE"), S("l"), S("0"), S("-1"));
    DV(&d, 0, S("RPUSHX"), S("nolist"), B(v3, n3), B(v5, n5));
    DV(&d, 0, S("SADD"), S("s"), B(v3, n3), B(v5, n5), B(v3, n3), S("x"));
    DV(&d, 0, S("SCARD"), S("s"));
    /* Reads of arguments past the channel's message (512 KB here). */
    DV(&d, 0, S("SISMEMBER"), S("s"), B(v5, n5));
    DV(&d, 0, S("SISMEMBER"), S("s"), B(v5, n5 - 1));
    DV(&d, 0, S("SMISMEMBER"), S("s"), B(v3, n3), S("nope"), B(v5, n5), B(v5 + 1, n5 - 1));
    DV(&d, 0, S("LPOS"), S("l"), B(v5, n5));
    DV(&d, 0, S("HEXISTS"), S("h"), B(v3, n3));
    DV(&d, 0, S("ZSCORE"), S("nozset"), B(v3, n3));
    DV(&d, 0, S("GET"), B(v3, 600 * 1024));
    DV(&d, 0, S("SREM"), S("s"), B(v3, n3), B(v5, n5), S("nope"));
    DV(&d, 0, S("SMEMBERS"), S("s"));
    /* WRONGTYPE: nothing changes. */
    DV(&d, 0, S("SADD"), S("k1"), B(v3, n3), B(v5, n5));
    DV(&d, 0, S("HSET"), S("k1"), S("a"), B(v3, n3), S("b"), B(v5, n5));
    DV(&d, 0, S("RPUSH"), S("h"), B(v3, n3), B(v5, n5));
    DV(&d, 0, S("GET"), S("k1"));
    DV(&d, 0, S("HLEN"), S("h"));
    rdiff_end_both(&d);
    /* The live table agrees with a recount; restarts keep it all. */
    bv_live_total(&rdiff_atticdb, "several values");
    bv_restarts_keep(&rdiff_atticdb, "several values");
    redisContext *c = bv_conn(&rdiff_atticdb);
    bv_expect_value(c, "k2", v5, n5, "MSET's second value after restarts");
    bv_expect_bulk(c, v3, n3, "HSET's value after restarts", "HGET h f4");
    bv_expect_bulk(c, v5, n5, "RPUSH's element after restarts", "LINDEX l -1");
    redisFree(c);
    free(v3);
    free(v5);
    free(m);
}

Test(bigmulti, transactions_with_large_values_reply_as_redis)
{
    diff_t d;
    rdiff_start_both_with(&d, ARGS, NULL, 2);
    size_t n3 = 3 * MB + 5, n5 = 5 * MB + 3, nm = 200 * 1024;
    char *v3 = bv_pattern(n3, 4), *v5 = bv_pattern(n5, 5), *m = bv_pattern(nm, 6);
    DV(&d, 0, S("SADD"), S("s"), S("x"), B(v3, n3));
    /* Large writes and reads among small ones, applied as one. */
    DV(&d, 0, S("MULTI"));
    DV(&d, 0, S("SET"), S("t1"), B(v5, n5));
    DV(&d, 0, S("HSET"), S("th"), S("a"), B(v3, n3), S("b"), B(v5, n5));
    DV(&d, 0, S("SISMEMBER"), S("s"), S("x"));
    DV(&d, 0, S("SISMEMBER"), S("s"), B(v3, n3));
    DV(&d, 0, S("SMISMEMBER"), S("s"), B(v5, n5), B(v3, n3));
    DV(&d, 0, S("RPUSH"), S("tl"), B(m, nm), B(m, nm), B(m, nm), B(m, nm), B(m, nm), B(m, nm));
    DV(&d, 0, S("MSET"), S("u1"), B(v3, n3), S("u2"), B(v5, n5));
    DV(&d, 0, S("STRLEN"), S("t1"));
    DV(&d, 0, S("INCR"), S("cnt"));
    DV(&d, 0, S("EXEC"));
    DV(&d, 0, S("GET"), S("t1"));
    DV(&d, 0, S("HGET"), S("th"), S("b"));
    DV(&d, 0, S("MGET"), S("u1"), S("u2"));
    DV(&d, 0, S("LLEN"), S("tl"));
    /* An error inside EXEC: the rest still runs. */
    DV(&d, 0, S("MULTI"));
    DV(&d, 0, S("SET"), S("t2"), B(v3, n3));
    DV(&d, 0, S("LSET"), S("nolist"), S("0"), B(v5, n5));
    DV(&d, 0, S("SET"), S("t2b"), B(v5, n5), S("BADOPT"));
    DV(&d, 0, S("APPEND"), S("t2"), B(v5, n5));
    DV(&d, 0, S("EXEC"));
    DV(&d, 0, S("GET"), S("t2"));
    DV(&d, 0, S("EXISTS"), S("t2b"));
    /* A queue-time error: EXECABORT, nothing applied. */
    DV(&d, 0, S("MULTI"));
    DV(&d, 0, S("SET"), S("t3"), B(v3, n3));
    DV(&d, 0, S("NOSUCHCOMMAND"), B(v5, n5));
    DV(&d, 0, S("SET"), S("t3b"), B(v5, n5));
    DV(&d, 0, S("EXEC"));
    DV(&d, 0, S("EXISTS"), S("t3"), S("t3b"));
    /* DISCARD. */
    DV(&d, 0, S("MULTI"));
    DV(&d, 0, S("SET"), S("t4"), B(v5, n5));
    DV(&d, 0, S("DISCARD"));
    DV(&d, 0, S("EXISTS"), S("t4"));
    /* WATCH: a key changed by another client aborts it, parts and all. */
    DV(&d, 0, S("WATCH"), S("t1"));
    DV(&d, 1, S("SET"), S("t1"), S("small"));
    DV(&d, 0, S("MULTI"));
    DV(&d, 0, S("SET"), S("t1"), B(v3, n3));
    DV(&d, 0, S("HSET"), S("th"), S("c"), B(v5, n5));
    DV(&d, 0, S("EXEC"));
    DV(&d, 0, S("GET"), S("t1"));
    DV(&d, 0, S("HEXISTS"), S("th"), S("c"));
    /* ... and one left alone runs. */
    DV(&d, 0, S("WATCH"), S("t1"));
    DV(&d, 0, S("MULTI"));
    DV(&d, 0, S("SET"), S("t1"), B(v3, n3));
    DV(&d, 0, S("EXEC"));
    DV(&d, 0, S("GET"), S("t1"));
    rdiff_end_both(&d);
    bv_live_total(&rdiff_atticdb, "transactions");
    bv_restarts_keep(&rdiff_atticdb, "transactions");
    redisContext *c = bv_conn(&rdiff_atticdb);
    bv_expect_value(c, "t1", v3, n3, "the watched transaction's value after restarts");
    bv_expect_value(c, "u2", v5, n5, "a transaction's MSET after restarts");
    redisFree(c);
    free(v3);
    free(v5);
    free(m);
}

/* ---- cut short: kills and restarts ---------------------------------------- */

/* Wait until the server answers PING again (a respawn). */
static redisContext *answering(srv_t *s, const char *what)
{
    time_t deadline = time(NULL) + 60;
    for (;;) {
        redisContext *c = srv_connect(s);
        if (c) {
            redisReply *r = redisCommand(c, "PING");
            int ok = r && r->type == REDIS_REPLY_STATUS;
            if (r) freeReplyObject(r);
            if (ok) {
                struct timeval tv = {120, 0};
                redisSetTimeout(c, tv);
                return c;
            }
            redisFree(c);
        }
        cr_assert_lt(time(NULL), deadline, "%s: no answer", what);
        usleep(50000);
    }
}

/* Wait until the store has dropped a dead writer's group. */
static void group_dropped(const srv_t *s, const char *what)
{
    time_t deadline = time(NULL) + 60;
    while (!srv_log_contains(s, "value group", "is gone")) {
        cr_assert_lt(time(NULL), deadline, "%s: the parts were not dropped", what);
        usleep(20000);
    }
}

/* The old values a and b are still there, whole. */
static void still_old(redisContext *c, const char *what)
{
    bv_expect_value(c, "a", "old-a", 5, what);
    bv_expect_value(c, "b", "old-b", 5, what);
    cr_assert_eq(bv_integer(c, what, "EXISTS c"), 0, "%s: c", what);
}

/* A server holding a = old-a and b = old-b; *live0 its live bytes. */
static redisContext *old_values(srv_t *s, const char *faults, const char *args, long long *live0)
{
    cr_assert_eq(faults ? srv_start_faults(s, faults, args) : srv_start(s, args), 0);
    redisContext *c = bv_conn(s);
    bv_expect_status(c, redisCommand(c, "MSET a old-a b old-b"), "OK", "MSET old");
    *live0 = bv_live_total(s, "before");
    return c;
}

/* A command with several large values whose frontend dies after its 30th
 * chunk (inside the second value): no reply, nothing of it visible, the
 * parts dropped; restarts keep that. Then the same for a transaction. */
Test(bigmulti, frontend_killed_mid_command_leaves_nothing)
{
    const char *cmds[] = {"MSET", "HSET", "RPUSH", "MULTI"};
    size_t n = 4 * MB;
    char *v = bv_pattern(n, 7), *w = bv_pattern(n, 8);
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        srv_t s;
        long long live0;
        redisContext *c = old_values(&s, "frontend.bigchunk:30:KILL", BV_SMALL_RING, &live0);
        redisReply *r = NULL;
        if (i == 0) r = redisCommand(c, "MSET a %b b %b c x", v, n, w, n);
        if (i == 1) r = redisCommand(c, "HSET c f %b g %b", v, n, w, n);
        if (i == 2) r = redisCommand(c, "RPUSH c %b %b", v, n, w, n);
        if (i == 3) {
            /* Queued values go into the group as they are queued. */
            bv_expect_status(c, redisCommand(c, "MULTI"), "OK", "MULTI");
            bv_expect_status(c, redisCommand(c, "SET a %b", v, n), "QUEUED", "SET a");
            r = redisCommand(c, "SET b %b", w, n);
        }
        cr_assert(!r || r->type == REDIS_REPLY_ERROR, "%s: answered though its frontend died",
                  cmds[i]);
        if (r) freeReplyObject(r);
        redisFree(c);
        c = answering(&s, cmds[i]);
        cr_assert(srv_log_contains(&s, "frontend 0", "killed by signal 9"), "%s: no kill", cmds[i]);
        group_dropped(&s, cmds[i]);
        still_old(c, cmds[i]);
        bv_live_back_to(&s, live0, cmds[i]);
        redisFree(c);
        bv_restarts_keep(&s, cmds[i]);
        c = bv_conn(&s);
        still_old(c, cmds[i]);
        redisFree(c);
        bv_finish(&s);
    }
    free(v);
    free(w);
}

/* A raw connection whose large write is half sent: in a transaction,
 * MULTI, SET a <v> queued and half of SET b's bytes (mset 0); or half of
 * MSET a <v> b <v>'s second value (mset 1). Either way its group holds
 * one value and a half, pending. */
static redisContext *half_sent(srv_t *s, int mset, const char *v, size_t n)
{
    redisContext *raw = bv_conn(s);
    if (mset) {
        char head[128];
        int hl = snprintf(head, sizeof(head), "*5\r\n$4\r\nMSET\r\n$1\r\na\r\n$%zu\r\n", n);
        cr_assert_eq(write(raw->fd, head, (size_t)hl), hl);
        bv_send_bytes(raw, v, n, 0, n);
        hl = snprintf(head, sizeof(head), "\r\n$1\r\nb\r\n$%zu\r\n", n);
        cr_assert_eq(write(raw->fd, head, (size_t)hl), hl);
        bv_send_bytes(raw, v, n, 0, n / 2);
        return raw;
    }
    bv_expect_status(raw, redisCommand(raw, "MULTI"), "OK", "MULTI");
    bv_expect_status(raw, redisCommand(raw, "SET a %b", v, n), "QUEUED", "SET a");
    const char *args[] = {"SET", "b"};
    bv_send_head(raw, 3, args, n);
    bv_send_bytes(raw, v, n, 0, n / 2);
    return raw;
}

/* Wait until the live total passes want (parts counted as they arrive). */
static void live_past(const srv_t *s, long long want, const char *what)
{
    time_t deadline = time(NULL) + 60;
    while (bv_live_total(s, what) < want) {
        cr_assert_lt(time(NULL), deadline, "%s: the parts never counted", what);
        usleep(20000);
    }
}

static const char *const HALF_SENT[2] = {"a transaction", "an MSET"};

/* The frontend SIGKILLed while a transaction's values are half queued,
 * or while an MSET's second value is half sent: the store drops the
 * group; nothing is visible; a replay of the whole log agrees. */
Test(bigmulti, frontend_sigkilled_mid_transfer)
{
    for (int mset = 0; mset < 2; mset++) {
        srv_t s;
        size_t n = 6 * MB;
        char *v = bv_pattern(n, 9);
        long long live0;
        const char *what = HALF_SENT[mset];
        redisContext *c = old_values(&s, NULL, BV_SMALL_RING, &live0);
        redisContext *raw = half_sent(&s, mset, v, n);
        live_past(&s, live0 + (long long)(n + n / 4), what);
        kill(bv_the_frontend(&s), SIGKILL);
        redisFree(raw);
        redisFree(c);
        group_dropped(&s, what);
        c = answering(&s, what);
        still_old(c, what);
        redisFree(c);
        bv_live_back_to(&s, live0, what);
        bv_expect_replay_digest(&s, what);
        free(v);
        bv_finish(&s);
    }
}

/* The whole server SIGKILLed in the same places: after the restart
 * nothing of the write is visible, its parts are dropped (the writer of
 * the previous run is gone), a replay agrees. */
Test(bigmulti, whole_server_sigkilled_mid_transfer)
{
    for (int mset = 0; mset < 2; mset++) {
        srv_t s;
        size_t n = 6 * MB;
        char *v = bv_pattern(n, 10);
        long long live0;
        const char *what = HALF_SENT[mset];
        redisContext *c = old_values(&s, NULL, BV_SMALL_RING, &live0);
        redisContext *raw = half_sent(&s, mset, v, n);
        live_past(&s, live0 + (long long)(n + n / 4), what);
        srv_kill_all(&s);
        redisFree(raw);
        redisFree(c);
        cr_assert_eq(srv_restart(&s), 0);
        c = bv_conn(&s);
        still_old(c, what);
        redisFree(c);
        bv_live_back_to(&s, live0, what);
        bv_expect_replay_digest(&s, what);
        free(v);
        bv_finish(&s);
    }
}

/* An MSET whose second value is half sent while another client writes
 * past checkpoint-bytes: a checkpoint holds its pending group, the store,
 * SIGKILLed, loads it; then the rest arrives and the MSET is done, both
 * values whole; a replay of the whole log agrees. */
Test(bigmulti, an_mset_pending_across_a_checkpoint_completes_after_a_restart_from_it)
{
    srv_t s;
    size_t n = 3 * MB;
    char *v = bv_pattern(n, 18);
    long long live0;
    redisContext *c = old_values(&s, NULL, BV_SMALL_RING " --checkpoint-bytes 1mb", &live0);
    redisContext *raw = half_sent(&s, 1, v, n);
    live_past(&s, live0 + (long long)(n + n / 4), "half sent");
    unsigned long long before = bv_newest_checkpoint(&s);
    char *filler = bv_pattern(64 * 1024, 7);
    for (int i = 0; i < 40; i++)
        bv_expect_status(c, redisCommand(c, "SET filler:%d %b", i, filler, (size_t)64 * 1024), "OK",
                         "SET filler");
    free(filler);
    time_t deadline = time(NULL) + 60;
    while (bv_newest_checkpoint(&s) <= before) {
        cr_assert_lt(time(NULL), deadline, "no checkpoint while the MSET is pending");
        usleep(20000);
    }
    pid_t st;
    cr_assert_eq(srv_wait_children(&s, "atticdb-server: store", &st, 1, 1), 1, "no store");
    kill(st, SIGKILL);
    deadline = time(NULL) + 60;
    while (!srv_log_contains(&s, "loaded checkpoint", NULL)) {
        cr_assert_lt(time(NULL), deadline, "the respawned store loaded no checkpoint");
        usleep(20000);
    }
    bv_send_bytes(raw, v, n, n / 2, n);
    cr_assert_eq(write(raw->fd, "\r\n", 2), 2);
    redisReply *r = NULL;
    cr_assert_eq(redisGetReply(raw, (void **)&r), REDIS_OK, "%s", raw->errstr);
    bv_expect_status(raw, r, "OK", "the MSET");
    redisFree(raw);
    bv_expect_value(c, "a", v, n, "the MSET's first value");
    bv_expect_value(c, "b", v, n, "the MSET's second value");
    redisFree(c);
    cr_assert(!srv_log_contains(&s, "names no pending group", NULL), "the final found its parts");
    bv_expect_replay_digest(&s, "an MSET completed after the restart");
    free(v);
    bv_finish(&s);
}

/* A transaction whose values are queued (its group pending) while
 * another client writes past checkpoint-bytes: a checkpoint is written
 * with the group in it, and the store, SIGKILLed, loads it. */
static redisContext *queued_across_a_checkpoint(srv_t *s, const char *v, size_t n, long long *live0)
{
    redisContext *c = old_values(s, NULL, BV_SMALL_RING " --checkpoint-bytes 1mb", live0);
    redisContext *raw = bv_conn(s);
    bv_expect_status(raw, redisCommand(raw, "MULTI"), "OK", "MULTI");
    bv_expect_status(raw, redisCommand(raw, "SET a %b", v, n), "QUEUED", "SET a");
    bv_expect_status(raw, redisCommand(raw, "HSET c f %b g %b", v, n, v + 1, n - 1), "QUEUED",
                     "HSET c");
    unsigned long long before = bv_newest_checkpoint(s);
    char *filler = bv_pattern(64 * 1024, 7);
    for (int i = 0; i < 40; i++)
        bv_expect_status(c, redisCommand(c, "SET filler:%d %b", i, filler, (size_t)64 * 1024), "OK",
                         "SET filler");
    free(filler);
    time_t deadline = time(NULL) + 60;
    while (bv_newest_checkpoint(s) <= before) {
        cr_assert_lt(time(NULL), deadline, "no checkpoint while the transaction is queued");
        usleep(20000);
    }
    redisFree(c);
    pid_t st;
    cr_assert_eq(srv_wait_children(s, "atticdb-server: store", &st, 1, 1), 1, "no store");
    kill(st, SIGKILL);
    deadline = time(NULL) + 60;
    while (!srv_log_contains(s, "loaded checkpoint", NULL)) {
        cr_assert_lt(time(NULL), deadline, "the respawned store loaded no checkpoint");
        usleep(20000);
    }
    return raw;
}

Test(bigmulti, a_transaction_queued_across_a_checkpoint_runs_after_a_restart_from_it)
{
    srv_t s;
    size_t n = 3 * MB;
    char *v = bv_pattern(n, 11);
    long long live0;
    redisContext *raw = queued_across_a_checkpoint(&s, v, n, &live0);
    redisReply *r = redisCommand(raw, "EXEC");
    cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2, "EXEC: %s",
              r ? r->str : raw->errstr);
    cr_assert_str_eq(r->element[0]->str, "OK");
    cr_assert_eq(r->element[1]->integer, 2);
    freeReplyObject(r);
    redisFree(raw);
    redisContext *c = bv_conn(&s);
    bv_expect_value(c, "a", v, n, "the transaction's SET");
    bv_expect_bulk(c, v + 1, n - 1, "the transaction's HSET", "HGET c g");
    redisFree(c);
    cr_assert(!srv_log_contains(&s, "names no pending group", NULL), "the final found its parts");
    bv_expect_replay_digest(&s, "completed after the restart");
    free(v);
    bv_finish(&s);
}

Test(bigmulti, a_transaction_queued_across_a_checkpoint_is_dropped_when_its_frontend_dies)
{
    srv_t s;
    size_t n = 3 * MB;
    char *v = bv_pattern(n, 12);
    long long live0;
    redisContext *raw = queued_across_a_checkpoint(&s, v, n, &live0);
    kill(bv_the_frontend(&s), SIGKILL);
    redisFree(raw);
    group_dropped(&s, "frontend died after the checkpoint");
    redisContext *c = answering(&s, "frontend died after the checkpoint");
    still_old(c, "frontend died after the checkpoint");
    redisFree(c);
    bv_live_back_to(&s, live0 + 40 * 64 * 1024, "the transaction's parts"); /* the filler stays */
    bv_expect_replay_digest(&s, "dropped after the restart");
    free(v);
    bv_finish(&s);
}

/* A client that leaves with a transaction's values queued, or DISCARDs
 * it: the parts are dropped at once. */
Test(bigmulti, discard_and_a_client_leaving_drop_the_queued_values)
{
    srv_t s;
    size_t n = 3 * MB;
    char *v = bv_pattern(n, 13);
    long long live0;
    redisContext *c = old_values(&s, NULL, BV_SMALL_RING, &live0);
    bv_expect_status(c, redisCommand(c, "MULTI"), "OK", "MULTI");
    bv_expect_status(c, redisCommand(c, "SET a %b", v, n), "QUEUED", "SET a");
    cr_assert_gt(bv_live_total(&s, "queued"), live0, "the queued value's parts are counted");
    bv_expect_status(c, redisCommand(c, "DISCARD"), "OK", "DISCARD");
    bv_live_back_to(&s, live0, "after DISCARD");
    redisContext *raw = half_sent(&s, 0, v, n);
    live_past(&s, live0 + (long long)(n + n / 4), "queued");
    redisFree(raw);
    bv_live_back_to(&s, live0, "after the client left");
    still_old(c, "after DISCARD and a client that left");
    redisFree(c);
    bv_restarts_keep(&s, "dropped transactions");
    free(v);
    bv_finish(&s);
}

/* ---- reads in parts cut short ---------------------------------------------- */

/* The store killed with the 2nd part of a SISMEMBER's request copied
 * (fault point 26, "reqpart"): its successor gets the later parts
 * without the first and answers an error, never a read of part of the
 * member; the same read again is answered. */
Test(bigmulti, store_killed_while_a_read_arrives_in_parts)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "store.reqpart:2:KILL", ARGS), 0);
    redisContext *c = bv_conn(&s);
    size_t n = 3 * MB + 5;
    char *v = bv_pattern(n, 15);
    cr_assert_eq(bv_integer(c, "SADD", "SADD s %b", v, n), 1);
    bv_expect_error(c,
                    "ERR this request came in parts and the store restarted while it arrived: "
                    "nothing was read, send it again",
                    "SISMEMBER s %b", v, n);
    cr_assert(srv_log_contains(&s, "store", "killed by signal 9"), "the store did not die");
    cr_assert_eq(bv_integer(c, "SISMEMBER again", "SISMEMBER s %b", v, n), 1);
    redisFree(c);
    free(v);
    bv_finish(&s);
}

/* A frontend killed with the 3rd part of a read's request sent (fault
 * point 27, "reqpartsent"): its client loses the connection, the store
 * drops the parts (the frontend's pid changed), and the respawned
 * frontend's reads in parts are answered. */
Test(bigmulti, frontend_killed_while_a_read_goes_in_parts)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "frontend.reqpartsent:3:KILL", ARGS), 0);
    redisContext *c = bv_conn(&s);
    size_t n = 3 * MB + 5;
    char *v = bv_pattern(n, 16);
    cr_assert_eq(bv_integer(c, "SADD", "SADD s %b", v, n), 1);
    redisReply *r = redisCommand(c, "SISMEMBER s %b", v, n);
    cr_assert_null(r, "answered though its frontend died");
    redisFree(c);
    time_t deadline = time(NULL) + 60;
    while (!srv_log_contains(&s, "dropped a read request in parts", NULL)) {
        cr_assert_lt(time(NULL), deadline, "the store kept the dead frontend's parts");
        usleep(20000);
    }
    c = answering(&s, "frontend killed mid-request");
    cr_assert_eq(bv_integer(c, "SISMEMBER", "SISMEMBER s %b", v, n), 1);
    redisFree(c);
    free(v);
    bv_finish(&s);
}

/* ---- a replica ---------------------------------------------------------------- */

/* INFO's integer field (-1 when missing). */
static long long info_num(redisContext *c, const char *field)
{
    redisReply *r = redisCommand(c, "INFO");
    cr_assert(r && r->type == REDIS_REPLY_STRING, "INFO");
    long long v = srv_info_text_num(r->str, field);
    freeReplyObject(r);
    return v;
}

/* Wait until the replica has what the leader has; same digest. */
static void caught_up(srv_t *l, srv_t *r, const char *what)
{
    redisContext *lc = bv_conn(l), *rc = bv_conn(r);
    long long want = -1, got = -2;
    time_t deadline = time(NULL) + 120;
    while (time(NULL) < deadline) {
        want = info_num(lc, "master_repl_offset");
        got = info_num(rc, "slave_repl_offset");
        if (want > 0 && got == want) break;
        usleep(50000);
    }
    cr_assert_eq(got, want, "%s: the replica reached the leader's LSN", what);
    char a[64], b[64];
    bv_digest(l, a);
    bv_digest(r, b);
    cr_assert_str_eq(a, b, "%s: same data on both", what);
    redisFree(lc);
    redisFree(rc);
}

/* A replica's log is its leader's (D33): a transaction there whose
 * arguments pass a record cannot move them into a group (chunks it would
 * log), so it is refused as too large, as before D58; the replica goes
 * on following its leader, large values and all. */
Test(bigmulti, a_replica_logs_no_chunks_of_its_own)
{
    srv_t l, r;
    cr_assert_eq(srv_start(&l, BV_SMALL_RING), 0);
    char extra[256];
    snprintf(extra, sizeof(extra), BV_SMALL_RING " --replicaof 127.0.0.1 %d", l.port);
    cr_assert_eq(srv_start(&r, extra), 0);
    size_t n = 600 * 1024;
    char *v = bv_pattern(n, 17);
    redisContext *lc = bv_conn(&l);
    cr_assert_eq(bv_integer(lc, "SADD", "SADD s %b %b", v, n, v + 1, n - 1), 2);
    caught_up(&l, &r, "after SADD");
    redisContext *rc = bv_conn(&r);
    bv_expect_status(rc, redisCommand(rc, "MULTI"), "OK", "MULTI on the replica");
    redisReply *x = redisCommand(rc, "SISMEMBER s %b", v, n);
    cr_assert(x && x->type == REDIS_REPLY_ERROR && strstr(x->str, "transaction too large"),
              "SISMEMBER queued on the replica: %s", x ? x->str : rc->errstr);
    freeReplyObject(x);
    bv_expect_error(rc, "EXECABORT Transaction discarded because of previous errors.", "EXEC");
    cr_assert_eq(bv_integer(rc, "SISMEMBER", "SISMEMBER s %b", v, n), 1);
    cr_assert_eq(bv_integer(lc, "SADD", "SADD s %b %b", v + 2, n - 2, v + 3, n - 3), 2);
    caught_up(&l, &r, "after a refused transaction on the replica");
    cr_assert_eq(bv_integer(rc, "SCARD", "SCARD s"), 4);
    redisFree(lc);
    redisFree(rc);
    free(v);
    bv_finish(&r);
    bv_finish(&l);
}

/* ---- memory ----------------------------------------------------------------- */

/* Send `cmd key` with a bulk of n bytes repeating v[0, vn) by hand (the
 * client holds no copy either). */
static void send_value(redisContext *c, const char *cmd, const char *key, const char *v, size_t vn,
                       size_t n)
{
    const char *args[] = {cmd, key};
    bv_send_head(c, 3, args, n);
    bv_send_bytes(c, v, vn, 0, n);
    cr_assert_eq(write(c->fd, "\r\n", 2), 2);
}

static void next_reply(redisContext *c, const char *want, const char *what)
{
    redisReply *r = NULL;
    cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "%s: %s", what, c->errstr);
    bv_expect_status(c, r, want, what);
}

/* 3 x 100 MB queued in one transaction, then two 100 MB values in one
 * MSET (hand-made: a second bulk after the first): the frontend's peak
 * RSS stays within 64 MB of idle (each value goes out as chunks while it
 * arrives); the values read back. */
Test(bigmulti, frontend_rss_bounded_with_large_values_in_multi_and_mset)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1"), 0);
    pid_t fe = bv_the_frontend(&s);
    size_t n = 100 * MB, vn = MB + 13;
    char *v = bv_pattern(vn, 14);
    redisContext *c = bv_conn(&s);
    bv_expect_status(c, redisCommand(c, "PING"), "PONG", "PING");
    long idle = bv_proc_kb(fe, "VmRSS:");
    bv_expect_status(c, redisCommand(c, "MULTI"), "OK", "MULTI");
    for (int i = 0; i < 3; i++) {
        char key[8];
        snprintf(key, sizeof(key), "q%d", i);
        send_value(c, "SET", key, v, vn, n);
        next_reply(c, "QUEUED", "SET queued");
    }
    redisReply *r = redisCommand(c, "EXEC");
    cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 3, "EXEC");
    freeReplyObject(r);
    long peak_multi = bv_proc_kb(fe, "VmHWM:");
    char head[128];
    int hl = snprintf(head, sizeof(head), "*5\r\n$4\r\nMSET\r\n$2\r\nm1\r\n$%zu\r\n", n);
    cr_assert_eq(write(c->fd, head, (size_t)hl), hl);
    bv_send_bytes(c, v, vn, 0, n);
    hl = snprintf(head, sizeof(head), "\r\n$2\r\nm2\r\n$%zu\r\n", n);
    cr_assert_eq(write(c->fd, head, (size_t)hl), hl);
    bv_send_bytes(c, v, vn, 7, n + 7);
    cr_assert_eq(write(c->fd, "\r\n", 2), 2);
    next_reply(c, "OK", "MSET of two 100 MB values");
    long peak = bv_proc_kb(fe, "VmHWM:");
    cr_log_info("frontend RSS idle %ld kB; peak %ld kB after 3 x 100 MB in MULTI, %ld kB after "
                "MSET of 2 x 100 MB",
                idle, peak_multi, peak);
    bv_expect_rss_within(peak - idle, "frontend peak RSS %ld kB, idle %ld kB", peak, idle);
    /* Probes across the values, each against the pattern it repeats. */
    const char *keys[] = {"q0", "q1", "q2", "m1", "m2"};
    for (int k = 0; k < 5; k++) {
        size_t shift = k == 4 ? 7 : 0;
        cr_assert_eq(bv_integer(c, "STRLEN", "STRLEN %s", keys[k]), (long long)n);
        for (size_t at = 0; at < n; at += 37 * MB + 5) {
            size_t len = n - at < 4096 ? n - at : 4096;
            r = redisCommand(c, "GETRANGE %s %lld %lld", keys[k], (long long)at,
                             (long long)(at + len - 1));
            cr_assert(r && r->len == len, "GETRANGE %s", keys[k]);
            for (size_t j = 0; j < len; j++)
                cr_assert_eq(r->str[j], v[(at + j + shift) % vn], "%s byte %zu", keys[k], at + j);
            freeReplyObject(r);
        }
    }
    redisFree(c);
    free(v);
    bv_finish(&s);
}
