/*
 * test_crash_ring.c - the store killed inside ring_release (the fault point
 * "release" of common/io_fault.h: after the freed slots' commit markers are
 * rewritten, before tail moves) while clients write. The master respawns
 * it, the server keeps serving, and every acknowledged write reads back
 * (ARCHITECTURE.md, contract 5; docs/DECISIONS.md, D18).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

TestSuite(crash_ring, .fini = srv_cleanup_all, .timeout = 120);

/* Value of write i: a few hundred bytes, so one release frees many slots. */
static void value_of(char *out, size_t len, int i)
{
    int n = snprintf(out, len, "v%d:", i);
    memset(out + n, 'a' + i % 26, len - (size_t)n - 1);
    out[len - 1] = '\0';
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One round: a SET (acked by the frontend once durable) and an INCR (its
 * reply comes from the store, so the store must be back to answer). */
static void write_round(redisContext *c, const srv_t *s, int i)
{
    char val[600], tail[2048];
    value_of(val, sizeof(val), i);
    redisReply *r = redisCommand(c, "SET w:%d %s", i, val);
    cr_assert_not_null(r, "SET %d: %s; log:\n%s", i, c->errstr,
                       srv_log_tail(s, tail, sizeof(tail)));
    cr_assert_eq(r->type, REDIS_REPLY_STATUS, "SET %d: %s", i, r->str);
    freeReplyObject(r);
    r = redisCommand(c, "INCR rounds");
    cr_assert_not_null(r, "INCR %d: %s; log:\n%s", i, c->errstr,
                       srv_log_tail(s, tail, sizeof(tail)));
    cr_assert_eq(r->type, REDIS_REPLY_INTEGER, "INCR %d: %s", i, r->str);
    cr_assert_eq(r->integer, i + 1, "INCR %d", i);
    freeReplyObject(r);
}

static void expect_all(redisContext *c, int n)
{
    char val[600];
    for (int i = 0; i < n; i++) {
        value_of(val, sizeof(val), i);
        redisReply *r = redisCommand(c, "GET w:%d", i);
        cr_assert_not_null(r, "GET %d: %s", i, c->errstr);
        cr_assert_eq(r->type, REDIS_REPLY_STRING, "acked write w:%d lost", i);
        cr_assert_str_eq(r->str, val, "w:%d", i);
        freeReplyObject(r);
    }
    redisReply *r = redisCommand(c, "GET rounds");
    cr_assert_not_null(r);
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert_eq(atoi(r->str), n, "acked INCRs");
    freeReplyObject(r);
}

/* Run writes with the store set to die at fault point `spec`; it must be
 * respawned and lose nothing. */
static void store_dies_in_release(const char *spec)
{
    setenv("ATTICDB_TEST_FAULTS", spec, 1);
    srv_t s;
    int started = srv_start(&s, "--frontends 1");
    unsetenv("ATTICDB_TEST_FAULTS");
    cr_assert_eq(started, 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);

    /* Write until the store has died in ring_release and been respawned,
     * then as much again: the new store must apply and answer. */
    int n = 0;
    double deadline = now_s() + 60;
    while (!srv_log_contains(&s, "respawned store", NULL)) {
        cr_assert_lt(now_s(), deadline, "the store never died in ring_release");
        write_round(c, &s, n++);
    }
    for (int k = n + 200; n < k;)
        write_round(c, &s, n++);
    cr_assert(srv_log_contains(&s, "store (pid", "killed by signal 9"),
              "the store did not die by the fault point");
    expect_all(c, n);
    redisFree(c);

    /* And all of it is in the log, for a restart. */
    cr_assert_eq(srv_stop(&s), 0, "clean shutdown");
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    cr_assert_not_null(c);
    expect_all(c, n);
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* Killed after the freed slots were invalidated, before tail moved: the
 * records at [tail, releasing) are gone from the ring. */
Test(crash_ring, store_killed_before_tail_moves_loses_nothing)
{
    store_dies_in_release("store.release:20:KILL");
}

/* Killed after publishing where it releases to, before invalidating. */
Test(crash_ring, store_killed_before_invalidating_loses_nothing)
{
    store_dies_in_release("store.releasing:20:KILL");
}
