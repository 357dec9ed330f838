/*
 * test_blocking.c - the blocking list pops (BLPOP BRPOP BLMOVE BRPOPLPUSH
 * BLMPOP, CLIENT UNBLOCK; docs/DECISIONS.md, D36) on a real atticdb-server:
 *   - every reply byte for byte against a real redis-server 7.0.15:
 *     immediate pops, errors in Redis' order, timeouts, MULTI, RESP3, a
 *     blocked client served by a push (the push popped atomically), CLIENT
 *     UNBLOCK in both modes;
 *   - AtticDB only: blocked clients and pushers on different frontends,
 *     served oldest first whichever frontend they are on, INFO
 *     blocked_clients and CLIENT LIST's b flag seen from another frontend;
 *   - failures: a frontend SIGKILLed with blocked clients leaves nothing
 *     stuck; the store SIGKILLed while clients are blocked: they are
 *     served or time out; after a kill -9 of everything, replay gives the
 *     same DEBUG DIGEST and no served pop is lost or applied twice.
 *   XREADGROUP ... BLOCK (D46): against Redis (served by XADD, COUNT,
 *     NOACK, timeouts, MULTI, -NOGROUP and -UNBLOCKED, RESP3), across
 *     frontends (oldest of each group first), a frontend killed with a
 *     parked client, the store killed at "xrgparked" and "xrgserved".
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

TestSuite(blocking, .fini = fini, .timeout = 240);

/* ---- differential: replies against Redis ---- */

/* INFO clients' blocked_clients through a raw connection. */
static long long wire_blocked(wire_conn_t *c)
{
    const char *r = ONE(c, "INFO", "clients");
    const char *p = strstr(r, "blocked_clients:");
    cr_assert_not_null(p, "INFO clients has no blocked_clients: %s", r);
    return atoll(p + 16);
}

/* Wait (20 s at most) until both servers count n blocked clients. */
static void both_blocked(diff_t *d, long long n)
{
    for (int i = 0; i < 2000; i++) {
        if (wire_blocked(d->r[0]) == n && wire_blocked(d->a[0]) == n) return;
        usleep(10000);
    }
    cr_assert_fail("blocked_clients did not reach %lld on both servers (%lld, %lld)", n,
                   wire_blocked(d->r[0]), wire_blocked(d->a[0]));
}

/* Send a blocking command on connection ci of both, without its reply. */
#define BLOCKN(d, ci, ...)                                                                         \
    do {                                                                                           \
        const char *argv_[] = {__VA_ARGS__};                                                       \
        int n_ = (int)(sizeof argv_ / sizeof argv_[0]);                                            \
        cr_assert_eq(wire_send((d)->r[ci], n_, argv_, NULL), 0);                                   \
        cr_assert_eq(wire_send((d)->a[ci], n_, argv_, NULL), 0);                                   \
    } while (0)
#define BLOCK1(d, ...) BLOCKN(d, 1, __VA_ARGS__)

/* The replies both connections ci got (the blocked command's). */
static void both_reply(diff_t *d, int ci, int line, const char *what)
{
    size_t rn, an;
    char *rr = wire_reply(d->r[ci], &rn), *ar = wire_reply(d->a[ci], &an);
    rdiff_compare(d, line, what, rr, rn, ar, an);
    free(rr);
    free(ar);
}

static void both_reply1(diff_t *d, int line, const char *what)
{
    both_reply(d, 1, line, what);
}

Test(blocking, replies_match_redis)
{
    diff_t d = {0};
    rdiff_start_both_with(&d, "--frontends 2", NULL, 2);
    /* Data there: the pop happens at once. */
    D(&d, "RPUSH", "k", "a", "b", "c");
    D(&d, "BLPOP", "k", "0");
    D(&d, "BRPOP", "nokey", "k", "0");
    D(&d, "LLEN", "k");
    D(&d, "BLPOP", "k", "k", "1");
    D(&d, "EXISTS", "k");
    D(&d, "RPUSH", "m", "1", "2", "3", "4");
    D(&d, "BLMPOP", "0", "2", "nokey", "m", "LEFT", "COUNT", "3");
    D(&d, "BLMPOP", "0", "1", "m", "RIGHT");
    D(&d, "RPUSH", "s", "x", "y", "z");
    D(&d, "BLMOVE", "s", "d", "RIGHT", "LEFT", "0");
    D(&d, "BRPOPLPUSH", "s", "d", "0");
    D(&d, "BLMOVE", "s", "s", "LEFT", "RIGHT", "0");
    D(&d, "LRANGE", "d", "0", "-1");
    D(&d, "LRANGE", "s", "0", "-1");
    /* Errors, in Redis' order. */
    D(&d, "BLPOP", "k", "-1");
    D(&d, "BLPOP", "k", "abc");
    D(&d, "BLPOP", "k", "nan");
    D(&d, "BLPOP", "k", "inf");
    D(&d, "BLPOP", "k", " 1");
    D(&d, "BLPOP", "k", "1e400");
    D(&d, "BRPOP", "k", "");
    D(&d, "BLPOP", "k");
    D(&d, "BLMOVE", "s", "d", "UP", "LEFT", "0");
    D(&d, "BLMOVE", "s", "d", "LEFT", "LEFT", "-1");
    D(&d, "BRPOPLPUSH", "s", "d", "x");
    D(&d, "BLMPOP", "abc", "0", "k", "LEFT");
    D(&d, "BLMPOP", "abc", "1", "k", "LEFT");
    D(&d, "BLMPOP", "abc", "1", "k", "FOO");
    D(&d, "BLMPOP", "0", "1", "k", "LEFT", "COUNT", "0");
    D(&d, "BLMPOP", "0", "5", "k", "LEFT");
    D(&d, "BLMPOP", "0", "1", "k", "LEFT", "COUNT");
    D(&d, "BLMPOP", "-1", "1", "k", "LEFT");
    D(&d, "BLMPOP", "0", "1", "k");
    D(&d, "SET", "str", "v");
    D(&d, "BLPOP", "nokey", "str", "0");
    D(&d, "BLMPOP", "0", "2", "nokey", "str", "LEFT");
    D(&d, "RPUSH", "l2", "z");
    D(&d, "BLMOVE", "l2", "str", "LEFT", "LEFT", "0");
    D(&d, "BRPOPLPUSH", "str", "l2", "0");
    D(&d, "LLEN", "l2");
    /* Timeouts: the null of each command. */
    D(&d, "BLPOP", "nokey", "0.05");
    D(&d, "BRPOP", "nokey", "other", "0.01");
    D(&d, "BLMOVE", "nokey", "d", "LEFT", "LEFT", "0.01");
    D(&d, "BRPOPLPUSH", "nokey", "d", "0.001");
    D(&d, "BLMPOP", "0.01", "1", "nokey", "LEFT");
    D(&d, "BLPOP", "nokey", "0.0001");
    /* Inside MULTI, a blocking command is its non-blocking form. */
    D(&d, "MULTI");
    D(&d, "BLPOP", "nokey", "0");
    D(&d, "BLMOVE", "nokey", "x", "LEFT", "LEFT", "0");
    D(&d, "BLMPOP", "0", "1", "nokey", "LEFT");
    D(&d, "RPUSH", "nokey", "v");
    D(&d, "BRPOP", "nokey", "0");
    D(&d, "BLPOP", "nokey", "abc");
    D(&d, "EXEC");
    /* RESP3 nulls. */
    ONE(d.r[1], "HELLO", "3");
    ONE(d.a[1], "HELLO", "3");
    DC(&d, 1, "BLPOP", "nokey", "0.01");
    DC(&d, 1, "BLMOVE", "nokey", "d", "LEFT", "LEFT", "0.01");
    DC(&d, 1, "BLMPOP", "0.01", "1", "nokey", "LEFT");
    /* The registry's facts and CLIENT UNBLOCK's errors. */
    D(&d, "COMMAND", "INFO", "blpop", "brpop", "blmove", "brpoplpush", "blmpop");
    D(&d, "COMMAND", "GETKEYS", "BLMPOP", "0", "2", "a", "b", "LEFT");
    D(&d, "COMMAND", "GETKEYS", "BLPOP", "a", "b", "0");
    D(&d, "CLIENT", "UNBLOCK", "abc");
    D(&d, "CLIENT", "UNBLOCK", "999999");
    D(&d, "CLIENT", "UNBLOCK", "999999", "FOO");
    D(&d, "CLIENT", "UNBLOCK", "999999", "error");
    rdiff_end_both(&d);
}

Test(blocking, served_by_a_push_matches_redis)
{
    diff_t d = {0};
    rdiff_start_both_with(&d, "--frontends 2", NULL, 2);
    /* BLPOP served: the push's reply counts the element, then nobody
     * sees it in the list. */
    BLOCK1(&d, "BLPOP", "q", "other", "0");
    both_blocked(&d, 1);
    D(&d, "LLEN", "q");
    D(&d, "RPUSH", "q", "a");
    both_reply1(&d, __LINE__, "BLPOP served by RPUSH");
    D(&d, "LLEN", "q");
    /* Served by a push of several: one popped, the rest stays. */
    BLOCK1(&d, "BRPOP", "q", "0");
    both_blocked(&d, 1);
    D(&d, "LPUSH", "q", "x", "y", "z");
    both_reply1(&d, __LINE__, "BRPOP served by LPUSH");
    D(&d, "LRANGE", "q", "0", "-1");
    D(&d, "DEL", "q");
    /* BLMPOP with a count, on its second key. */
    BLOCK1(&d, "BLMPOP", "0", "2", "e1", "e2", "RIGHT", "COUNT", "2");
    both_blocked(&d, 1);
    D(&d, "RPUSH", "e2", "1", "2", "3");
    both_reply1(&d, __LINE__, "BLMPOP served");
    D(&d, "LRANGE", "e2", "0", "-1");
    /* BLMOVE served: the element lands in the destination. */
    BLOCK1(&d, "BLMOVE", "src", "dst", "LEFT", "RIGHT", "0");
    both_blocked(&d, 1);
    D(&d, "RPUSH", "src", "m");
    both_reply1(&d, __LINE__, "BLMOVE served");
    D(&d, "LRANGE", "dst", "0", "-1");
    D(&d, "EXISTS", "src");
    /* Its destination a string when it is served: WRONGTYPE to the
     * waiter, the element stays in the source. */
    D(&d, "SET", "wt", "x");
    BLOCK1(&d, "BLMOVE", "ws", "wt", "LEFT", "LEFT", "0");
    both_blocked(&d, 1);
    D(&d, "RPUSH", "ws", "e");
    both_reply1(&d, __LINE__, "BLMOVE served into a string");
    D(&d, "LRANGE", "ws", "0", "-1");
    both_blocked(&d, 0);
    /* Served by an LMOVE into the key and by a transaction. */
    BLOCK1(&d, "BRPOPLPUSH", "dst", "back", "0");
    both_blocked(&d, 0); /* dst had an element: served at once */
    both_reply1(&d, __LINE__, "BRPOPLPUSH with data");
    BLOCK1(&d, "BLPOP", "t", "0");
    both_blocked(&d, 1);
    D(&d, "MULTI");
    D(&d, "RPUSH", "t", "1");
    D(&d, "RPUSH", "t", "2");
    D(&d, "EXEC");
    both_reply1(&d, __LINE__, "BLPOP served after EXEC");
    D(&d, "LRANGE", "t", "0", "-1");
    /* A string in the key does not serve a list waiter; CLIENT UNBLOCK
     * does, in both modes. */
    const char *ids_r = ONE(d.r[1], "CLIENT", "ID");
    long long idr = reply_int(ids_r);
    long long ida = reply_int(ONE(d.a[1], "CLIENT", "ID"));
    char sr[32], sa[32];
    snprintf(sr, sizeof sr, "%lld", idr);
    snprintf(sa, sizeof sa, "%lld", ida);
    BLOCK1(&d, "BLPOP", "u", "0");
    both_blocked(&d, 1);
    D(&d, "SET", "u", "string");
    D(&d, "INFO", "nosuchsection");
    both_blocked(&d, 1);
    const char *rr = ONE(d.r[0], "CLIENT", "UNBLOCK", sr);
    char keep[64];
    snprintf(keep, sizeof keep, "%s", rr);
    const char *ar = ONE(d.a[0], "CLIENT", "UNBLOCK", sa);
    rdiff_compare(&d, __LINE__, "CLIENT UNBLOCK id", keep, strlen(keep), ar, strlen(ar));
    both_reply1(&d, __LINE__, "BLPOP unblocked (TIMEOUT)");
    BLOCK1(&d, "BLMOVE", "u2", "d2", "LEFT", "LEFT", "0");
    both_blocked(&d, 1);
    rr = ONE(d.r[0], "CLIENT", "UNBLOCK", sr, "ERROR");
    snprintf(keep, sizeof keep, "%s", rr);
    ar = ONE(d.a[0], "CLIENT", "UNBLOCK", sa, "ERROR");
    rdiff_compare(&d, __LINE__, "CLIENT UNBLOCK id ERROR", keep, strlen(keep), ar, strlen(ar));
    both_reply1(&d, __LINE__, "BLMOVE unblocked (ERROR)");
    rr = ONE(d.r[0], "CLIENT", "UNBLOCK", sr);
    snprintf(keep, sizeof keep, "%s", rr);
    ar = ONE(d.a[0], "CLIENT", "UNBLOCK", sa);
    rdiff_compare(&d, __LINE__, "CLIENT UNBLOCK of a client not blocked", keep, strlen(keep), ar,
                  strlen(ar));
    /* A timeout that runs out while blocked. */
    BLOCK1(&d, "BLPOP", "never", "0.2");
    both_reply1(&d, __LINE__, "BLPOP timed out");
    both_blocked(&d, 0);
    DC(&d, 1, "PING");
    rdiff_end_both(&d);
}

/* The sorted sets' blocking pops, beside Redis: at once, errors, timeouts,
 * MULTI, RESP3, and served by a ZADD on another connection. */
Test(blocking, zset_pops_match_redis)
{
    diff_t d = {0};
    rdiff_start_both_with(&d, "--frontends 2", NULL, 2);
    D(&d, "ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d");
    D(&d, "BZPOPMIN", "z", "0");
    D(&d, "BZPOPMAX", "nokey", "z", "0");
    D(&d, "BZMPOP", "0", "2", "nokey", "z", "MIN", "COUNT", "5");
    D(&d, "EXISTS", "z");
    D(&d, "BZPOPMIN", "z", "-1");
    D(&d, "BZPOPMIN", "z", "abc");
    D(&d, "BZMPOP", "0", "0", "z", "MIN");
    D(&d, "BZMPOP", "0", "1", "z", "FOO");
    D(&d, "BZMPOP", "0", "1", "z", "MAX", "COUNT", "0");
    D(&d, "BZMPOP", "-1", "1", "z", "MAX");
    D(&d, "SET", "str", "v");
    D(&d, "BZPOPMIN", "nokey", "str", "0");
    D(&d, "BZMPOP", "0", "1", "str", "MIN");
    D(&d, "BZPOPMIN", "nokey", "0.01");
    D(&d, "BZMPOP", "0.01", "1", "nokey", "MAX");
    D(&d, "MULTI");
    D(&d, "BZPOPMIN", "nokey", "0");
    D(&d, "BZMPOP", "0", "1", "nokey", "MIN");
    D(&d, "EXEC");
    D(&d, "COMMAND", "INFO", "bzpopmin", "bzpopmax", "bzmpop");
    D(&d, "COMMAND", "GETKEYS", "BZMPOP", "0", "2", "a", "b", "MIN");
    /* Served by a ZADD: the lowest member goes to the waiter. */
    BLOCK1(&d, "BZPOPMIN", "q", "other", "0");
    both_blocked(&d, 1);
    D(&d, "ZADD", "q", "5", "x", "3", "y");
    both_reply1(&d, __LINE__, "BZPOPMIN served by ZADD");
    D(&d, "ZRANGE", "q", "0", "-1", "WITHSCORES");
    BLOCK1(&d, "BZMPOP", "0", "2", "e1", "e2", "MAX", "COUNT", "2");
    both_blocked(&d, 1);
    D(&d, "ZADD", "e2", "1", "m1", "2", "m2", "3", "m3");
    both_reply1(&d, __LINE__, "BZMPOP served by ZADD");
    D(&d, "ZRANGE", "e2", "0", "-1");
    /* A list pushed on the key does not serve a zset waiter. */
    BLOCK1(&d, "BZPOPMAX", "w", "0");
    both_blocked(&d, 1);
    D(&d, "RPUSH", "w", "l");
    D(&d, "DEL", "w");
    D(&d, "ZADD", "w", "7", "s");
    both_reply1(&d, __LINE__, "BZPOPMAX served after a list came and went");
    ONE(d.r[1], "HELLO", "3");
    ONE(d.a[1], "HELLO", "3");
    BLOCK1(&d, "BZPOPMIN", "r3", "0");
    both_blocked(&d, 1);
    D(&d, "ZADD", "r3", "1.5", "p");
    both_reply1(&d, __LINE__, "BZPOPMIN served in RESP3");
    DC(&d, 1, "BZPOPMIN", "nokey", "0.01");
    rdiff_end_both(&d);
}

/* ---- AtticDB only: across frontends ---- */

/* A connection on frontend fe (connecting until one lands there). */
static redisContext *conn_on(int fe)
{
    return cr_conn_on(&S, fe);
}

static long long blocked_clients(redisContext *c)
{
    redisReply *r = q(c, "INFO clients");
    const char *p = strstr(r->str, "blocked_clients:");
    cr_assert_not_null(p);
    long long n = atoll(p + 16);
    freeReplyObject(r);
    return n;
}

static void wait_blocked(redisContext *c, long long n)
{
    for (int i = 0; i < 2000; i++) {
        if (blocked_clients(c) == n) return;
        usleep(10000);
    }
    cr_assert_fail("blocked_clients did not reach %lld (%lld)", n, blocked_clients(c));
}

/* Send a command without reading its reply (it blocks). */
static void send_only(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cr_assert_eq(redisvAppendCommand(c, fmt, ap), REDIS_OK);
    va_end(ap);
    int done = 0;
    while (!done)
        cr_assert_eq(redisBufferWrite(c, &done), REDIS_OK);
}

/* The reply of the command sent last: a [key, value] pair. */
static void expect_pair(redisContext *c, const char *key, const char *val)
{
    redisReply *r = NULL;
    cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "no reply: %s", c->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY, "not an array (type %d)", r->type);
    cr_assert_eq(r->elements, 2);
    cr_assert_str_eq(r->element[0]->str, key);
    cr_assert_str_eq(r->element[1]->str, val);
    freeReplyObject(r);
}

static void expect_type(redisContext *c, int type, const char *str)
{
    redisReply *r = NULL;
    cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "no reply: %s", c->errstr);
    cr_assert_eq(r->type, type, "reply type %d, not %d", r->type, type);
    if (str) cr_assert_str_eq(r->str, str);
    freeReplyObject(r);
}

static long long client_id(redisContext *c)
{
    return qint(c, "CLIENT ID");
}

Test(blocking, across_frontends_oldest_first)
{
    cr_assert_eq(srv_start(&S, "--frontends 2"), 0);
    redisContext *w1 = conn_on(0), *w2 = conn_on(1), *w3 = conn_on(0), *p = conn_on(1);
    send_only(w1, "BLPOP k 0");
    wait_blocked(p, 1);
    send_only(w2, "BLPOP other k 0");
    wait_blocked(p, 2);
    send_only(w3, "BRPOP k 0");
    wait_blocked(p, 3);
    /* Every blocked client in CLIENT LIST with the b flag, from either
     * frontend. */
    redisReply *l = q(p, "CLIENT LIST");
    int flagged = 0;
    for (const char *s = l->str; (s = strstr(s, "flags=b")) != NULL; s++)
        flagged++;
    cr_assert_eq(flagged, 3, "CLIENT LIST: %s", l->str);
    freeReplyObject(l);
    /* One push of three: each waiter one element, oldest first, and the
     * list is empty for everyone once the push is acknowledged. */
    cr_assert_eq(qint(p, "RPUSH k a b c"), 3);
    cr_assert_eq(qint(p, "LLEN k"), 0);
    cr_assert_eq(qint(w3 == p ? w1 : conn_on(0), "LLEN k"), 0);
    expect_pair(w1, "k", "a");
    expect_pair(w2, "k", "b");
    expect_pair(w3, "k", "c");
    wait_blocked(p, 0);
    /* A connection runs nothing more while blocked: its pipelined PING
     * answers after the pop. */
    send_only(w1, "BLPOP k2 0");
    send_only(w1, "PING");
    wait_blocked(p, 1);
    cr_assert_eq(qint(p, "RPUSH k2 v"), 1);
    expect_pair(w1, "k2", "v");
    expect_type(w1, REDIS_REPLY_STATUS, "PONG");
    /* CLIENT UNBLOCK from the other frontend, both modes. */
    long long id1 = client_id(w1), id2 = client_id(w2);
    send_only(w1, "BLPOP k 0");
    wait_blocked(p, 1);
    cr_assert_eq(qint(p, "CLIENT UNBLOCK %lld", id1), 1);
    expect_type(w1, REDIS_REPLY_NIL, NULL);
    send_only(w2, "BLMOVE k d LEFT LEFT 0");
    wait_blocked(w3, 1);
    cr_assert_eq(qint(w3, "CLIENT UNBLOCK %lld ERROR", id2), 1);
    expect_type(w2, REDIS_REPLY_ERROR, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
    cr_assert_eq(qint(p, "CLIENT UNBLOCK %lld", id2), 0);
    /* A timeout, then a client that leaves while blocked: its element is
     * not taken. */
    send_only(w1, "BLPOP k 0.3");
    expect_type(w1, REDIS_REPLY_NIL, NULL);
    send_only(w2, "BLPOP gone 0");
    wait_blocked(p, 1);
    redisFree(w2);
    wait_blocked(p, 0);
    cr_assert_eq(qint(p, "RPUSH gone x"), 1);
    cr_assert_eq(qint(w1, "LLEN gone"), 1);
    redisFree(w1);
    redisFree(w3);
    redisFree(p);
    cr_assert_eq(srv_stop(&S), 0);
    srv_cleanup(&S);
}

/* The pid of the one process titled title, waiting for it (10 s). */
static pid_t child(const char *title)
{
    pid_t pids[4];
    cr_assert_eq(srv_wait_children(&S, title, pids, 4, 1), 1, "no %s", title);
    return pids[0];
}

static pid_t respawned(const char *title, pid_t old)
{
    pid_t pids[4];
    for (int i = 0; i < 2000; i++) {
        if (srv_find_children(&S, title, pids, 4) == 1 && pids[0] != old) return pids[0];
        usleep(10000);
    }
    cr_assert_fail("%s was not respawned", title);
    return 0;
}

Test(blocking, frontend_killed_with_blocked_clients)
{
    cr_assert_eq(srv_start(&S, "--frontends 2"), 0);
    redisContext *w1 = conn_on(0), *w2 = conn_on(0), *p = conn_on(1);
    send_only(w1, "BLPOP k 0");
    wait_blocked(p, 1);
    send_only(w2, "BLMOVE k d LEFT LEFT 0");
    wait_blocked(p, 2);
    pid_t old = child("atticdb-server: frontend 0");
    kill(old, SIGKILL);
    respawned("atticdb-server: frontend 0", old);
    /* The other frontend kept serving; the dead one's clients are gone. */
    cr_assert_eq(qint(p, "RPUSH other x"), 1);
    redisReply *r = redisCommand(w1, "PING");
    cr_assert_null(r, "a client of the killed frontend still answered");
    /* A new client blocked on the same key through the new incarnation is
     * the first in line now: the dead ones' waits were dropped. */
    redisContext *w3 = conn_on(0);
    send_only(w3, "BLPOP k 0");
    wait_blocked(p, 1);
    cr_assert_eq(qint(p, "RPUSH k v"), 1);
    expect_pair(w3, "k", "v");
    cr_assert_eq(qint(p, "EXISTS d"), 0, "nothing was moved for the dead BLMOVE");
    cr_assert_eq(qint(p, "LLEN k"), 0);
    redisFree(w1);
    redisFree(w2);
    redisFree(w3);
    redisFree(p);
    cr_assert_eq(srv_stop(&S), 0);
    srv_cleanup(&S);
}

static char *digest(redisContext *c)
{
    redisReply *r = q(c, "DEBUG DIGEST");
    cr_assert_eq(r->type, REDIS_REPLY_STATUS, "DEBUG DIGEST: %s", r->str);
    char *d = strdup(r->str);
    freeReplyObject(r);
    return d;
}

/* SIGKILL every process and restart: a new connection, once the replay
 * reached the DEBUG DIGEST before. */
static redisContext *killed_and_replayed(const char *before)
{
    srv_kill_all(&S);
    cr_assert_eq(srv_restart(&S), 0, "restart after SIGKILL");
    redisContext *c = srv_connect(&S);
    cr_assert_not_null(c);
    char *after = digest(c);
    cr_assert_str_eq(after, before, "replay reached another state");
    free(after);
    return c;
}

Test(blocking, store_killed_while_blocked_then_replay)
{
    cr_assert_eq(srv_start(&S, "--frontends 2"), 0);
    redisContext *w1 = conn_on(0), *w2 = conn_on(1), *w3 = conn_on(1), *p = conn_on(0);
    send_only(w1, "BLPOP k 0");
    wait_blocked(p, 1);
    send_only(w2, "BLPOP j 1");
    wait_blocked(p, 2);
    send_only(w3, "BLMOVE src dst LEFT RIGHT 0");
    wait_blocked(p, 3);
    pid_t old = child("atticdb-server: store");
    kill(old, SIGKILL);
    /* Pushes made while the store is down are acknowledged once a new
     * store applies them, and they serve the clients that waited. */
    cr_assert_eq(qint(p, "RPUSH k x"), 1);
    respawned("atticdb-server: store", old);
    expect_pair(w1, "k", "x");
    expect_type(w2, REDIS_REPLY_NIL, NULL); /* its timeout ran out meanwhile */
    cr_assert_eq(qint(p, "RPUSH src e f"), 2);
    redisReply *r = NULL;
    cr_assert_eq(redisGetReply(w3, (void **)&r), REDIS_OK);
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert_str_eq(r->str, "e");
    freeReplyObject(r);
    wait_blocked(p, 0);
    /* One more waiter left blocked across the kill of everything. */
    send_only(w1, "BLPOP later 0");
    wait_blocked(p, 1);
    char *before = digest(p);
    cr_assert_eq(qint(p, "LLEN k"), 0);
    redisFree(w1);
    redisFree(w2);
    redisFree(w3);
    redisFree(p);
    redisContext *c = killed_and_replayed(before);
    /* Every served pop stays applied once: k empty, src has f, dst e. */
    cr_assert_eq(qint(c, "EXISTS k"), 0);
    r = q(c, "LRANGE src 0 -1");
    cr_assert_eq(r->elements, 1);
    cr_assert_str_eq(r->element[0]->str, "f");
    freeReplyObject(r);
    r = q(c, "LRANGE dst 0 -1");
    cr_assert_eq(r->elements, 1);
    cr_assert_str_eq(r->element[0]->str, "e");
    freeReplyObject(r);
    /* The waiter of the dead server is gone: a push stays in the list. */
    cr_assert_eq(qint(c, "RPUSH later v"), 1);
    for (int i = 0; i < 500 && qint(c, "LLEN later") != 1; i++)
        usleep(10000);
    redisContext *w = conn_on(1);
    send_only(w, "BLPOP later 0");
    expect_pair(w, "later", "v");
    free(before);
    redisFree(w);
    redisFree(c);
    cr_assert_eq(srv_stop(&S), 0);
    srv_cleanup(&S);
}

/* ---- XREADGROUP ... BLOCK (D46) ---- */

/* Byte for byte against Redis: answered at once (new entries, or a
 * history, even empty), a timeout, MULTI, served by an XADD with the PEL
 * written (COUNT, NOACK), a group destroyed (-NOGROUP) and the key
 * deleted (-UNBLOCKED) while waiting, RESP3. */
Test(blocking, xreadgroup_block_matches_redis)
{
    diff_t d = {0};
    rdiff_start_both_with(&d, "--frontends 2", NULL, 2);
    D(&d, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
    D(&d, "XGROUP", "CREATE", "s", "h", "$");
    D(&d, "XADD", "s", "1-0", "f", "v");
    D(&d, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">");
    D(&d, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "STREAMS", "s", "0");
    D(&d, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", "s", ">", "0");
    DC(&d, 1, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "100", "STREAMS", "s", ">");
    D(&d, "MULTI");
    D(&d, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">");
    D(&d, "EXEC");
    BLOCK1(&d, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "nokey", ">");
    both_reply1(&d, __LINE__, "XREADGROUP BLOCK on a missing key");
    BLOCK1(&d, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">");
    both_blocked(&d, 1);
    D(&d, "XPENDING", "s", "g");
    D(&d, "XADD", "s", "2-0", "f", "w");
    both_reply1(&d, __LINE__, "XREADGROUP served by XADD");
    D(&d, "XPENDING", "s", "g");
    D(&d, "XINFO", "GROUPS", "s");
    D(&d, "XREADGROUP", "GROUP", "h", "c", "STREAMS", "s", ">");
    D(&d, "XGROUP", "CREATE", "other", "h", "$", "MKSTREAM");
    BLOCK1(&d, "XREADGROUP", "GROUP", "h", "c", "COUNT", "1", "NOACK", "BLOCK", "0", "STREAMS",
           "other", "s", ">", ">");
    both_blocked(&d, 1);
    D(&d, "XACK", "s", "h", "1-0");
    D(&d, "MULTI");
    D(&d, "XADD", "s", "3-0", "f", "x");
    D(&d, "XADD", "s", "4-0", "f", "y");
    D(&d, "EXEC");
    both_reply1(&d, __LINE__, "XREADGROUP COUNT 1 NOACK served by EXEC");
    D(&d, "XPENDING", "s", "h");
    D(&d, "XINFO", "GROUPS", "s");
    BLOCK1(&d, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">");
    both_blocked(&d, 0); /* 3-0 and 4-0 are new for g */
    both_reply1(&d, __LINE__, "XREADGROUP BLOCK with new entries");
    BLOCK1(&d, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">");
    both_blocked(&d, 1);
    D(&d, "XGROUP", "DESTROY", "s", "g");
    both_reply1(&d, __LINE__, "XREADGROUP's group destroyed");
    D(&d, "XREADGROUP", "GROUP", "h", "c", "STREAMS", "s", ">"); /* 4-0, left by COUNT 1 */
    BLOCK1(&d, "XREADGROUP", "GROUP", "h", "c", "BLOCK", "0", "STREAMS", "s", ">");
    both_blocked(&d, 1);
    D(&d, "DEL", "s");
    both_reply1(&d, __LINE__, "XREADGROUP's key deleted");
    both_blocked(&d, 0);
    D(&d, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
    BLOCK1(&d, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">");
    both_blocked(&d, 1);
    D(&d, "SET", "s", "string");
    both_reply1(&d, __LINE__, "XREADGROUP's key replaced by a string");
    D(&d, "DEL", "s");
    D(&d, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
    BLOCK1(&d, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">");
    both_blocked(&d, 1);
    BLOCK1(&d, "BLPOP", "nolist", "0"); /* sent on conn 1 after its XREADGROUP: queued */
    D(&d, "FLUSHALL");
    both_reply1(&d, __LINE__, "XREADGROUP's database flushed");
    both_blocked(&d, 1); /* the BLPOP waits on: a flush serves no pop */
    D(&d, "RPUSH", "nolist", "x");
    both_reply1(&d, __LINE__, "BLPOP after the flush");
    both_blocked(&d, 0);
    ONE(d.r[1], "HELLO", "3");
    ONE(d.a[1], "HELLO", "3");
    D(&d, "XGROUP", "CREATE", "r3", "g", "$", "MKSTREAM");
    BLOCK1(&d, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "r3", ">");
    both_blocked(&d, 1);
    D(&d, "XADD", "r3", "1-0", "a", "b");
    both_reply1(&d, __LINE__, "XREADGROUP served in RESP3");
    DC(&d, 1, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "50", "STREAMS", "r3", ">");
    rdiff_end_both(&d);
}

/* Send w's blocking command (hiredis splits it into words) and wait until
 * n clients are blocked. */
#define PARK(w, p, n, cmd)                                                                         \
    do {                                                                                           \
        send_only((w), cmd);                                                                       \
        wait_blocked((p), (n));                                                                    \
    } while (0)

/* Close the n connections given, then stop the server (a clean exit). */
static void close_and_stop(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        redisFree(va_arg(ap, redisContext *));
    va_end(ap);
    cr_assert_eq(srv_stop(&S), 0);
    srv_cleanup(&S);
}

/* An XREADGROUP reply: [[key, [[id, [field, value]]]]], one entry. */
static void expect_group_entry(redisContext *c, const char *key, const char *id)
{
    redisReply *r = NULL;
    cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "no reply: %s", c->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY, "not an array (type %d %s)", r->type,
                 r->type == REDIS_REPLY_ERROR ? r->str : "");
    cr_assert_eq(r->elements, 1);
    redisReply *k = r->element[0];
    cr_assert_str_eq(k->element[0]->str, key);
    cr_assert_eq(k->element[1]->elements, 1);
    cr_assert_str_eq(k->element[1]->element[0]->element[0]->str, id);
    freeReplyObject(r);
}

/* The pending entries of key's group g as "id:owner:count" words. */
static char *pending_of(redisContext *c, const char *key)
{
    redisReply *r = q(c, "XPENDING %s g - + 100", key);
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
    char *out = calloc(1, 64 * r->elements + 1);
    for (size_t i = 0; i < r->elements; i++) {
        redisReply *e = r->element[i];
        sprintf(out + strlen(out), "%s%s:%s:%lld", i ? " " : "", e->element[0]->str,
                e->element[1]->str, e->element[3]->integer);
    }
    freeReplyObject(r);
    return out;
}

/* Waiters and writer on different frontends: an XADD serves the oldest
 * waiter of each group (the second of a group keeps waiting, one of
 * another group behind it is served); a frontend killed with a parked
 * client: its wait is dropped, the next waiter gets the entry; after a
 * kill -9 of everything the replay reaches the same DEBUG DIGEST. */
Test(blocking, xreadgroup_across_frontends)
{
    cr_assert_eq(srv_start(&S, "--frontends 2"), 0);
    redisContext *w1 = conn_on(0), *w2 = conn_on(0), *w3 = conn_on(0), *p = conn_on(1);
    freeReplyObject(q(p, "XGROUP CREATE s g $ MKSTREAM"));
    freeReplyObject(q(p, "XGROUP CREATE s h $"));
    freeReplyObject(q(p, "XGROUP CREATE other g $ MKSTREAM"));
    PARK(w1, p, 1, "XREADGROUP GROUP g a BLOCK 0 STREAMS s >");
    PARK(w2, p, 2, "XREADGROUP GROUP g b BLOCK 0 STREAMS other s > >");
    PARK(w3, p, 3, "XREADGROUP GROUP h c BLOCK 0 STREAMS s >");
    freeReplyObject(q(p, "XADD s 1-0 f v"));
    expect_group_entry(w1, "s", "1-0");
    expect_group_entry(w3, "s", "1-0");
    wait_blocked(p, 1);
    char *pel = pending_of(p, "s");
    cr_assert_str_eq(pel, "1-0:a:1");
    free(pel);
    freeReplyObject(q(p, "XADD s 2-0 f v"));
    expect_group_entry(w2, "s", "2-0");
    wait_blocked(p, 0);
    /* A parked client on a frontend that dies. */
    PARK(w1, p, 1, "XREADGROUP GROUP g a BLOCK 0 STREAMS s >");
    pid_t old = child("atticdb-server: frontend 0");
    kill(old, SIGKILL);
    respawned("atticdb-server: frontend 0", old);
    redisContext *w4 = conn_on(0);
    PARK(w4, p, 1, "XREADGROUP GROUP g d BLOCK 0 STREAMS s >");
    freeReplyObject(q(p, "XADD s 3-0 f v"));
    expect_group_entry(w4, "s", "3-0");
    pel = pending_of(p, "s");
    cr_assert_str_eq(pel, "1-0:a:1 2-0:b:1 3-0:d:1", "the dead client got nothing");
    free(pel);
    /* A waiter parked across a kill -9 of everything. */
    PARK(w4, p, 1, "XREADGROUP GROUP g d BLOCK 0 STREAMS s >");
    char *before = digest(p);
    redisFree(w1);
    redisFree(w2);
    redisFree(w3);
    redisFree(w4);
    redisFree(p);
    redisContext *c = killed_and_replayed(before);
    freeReplyObject(q(c, "XADD s 4-0 f v"));
    pel = pending_of(c, "s");
    cr_assert_str_eq(pel, "1-0:a:1 2-0:b:1 3-0:d:1", "the gone waiter is served nothing");
    free(pel);
    free(before);
    close_and_stop(1, c);
}

/* The store killed at the two moments of a blocked XREADGROUP that only
 * its RAM holds (common/io_fault.h): right after queueing the waiter
 * ("xrgparked") and right after serving it inside the XADD, its PEL
 * written and its reply not yet sent ("xrgserved"). Either way the new
 * store rebuilds the state from the log: the client gets its entry once,
 * delivered once. */
static void store_killed_at(const char *faults)
{
    cr_assert_eq(srv_start_faults(&S, faults, "--frontends 2"), 0);
    redisContext *w = conn_on(0), *p = conn_on(1);
    freeReplyObject(q(p, "XGROUP CREATE s g $ MKSTREAM"));
    pid_t old = child("atticdb-server: store");
    send_only(w, "XREADGROUP GROUP g a BLOCK 0 STREAMS s >");
    if (strstr(faults, "xrgparked")) respawned("atticdb-server: store", old);
    wait_blocked(p, 1);
    freeReplyObject(q(p, "XADD s 1-0 f v"));
    if (strstr(faults, "xrgserved")) respawned("atticdb-server: store", old);
    expect_group_entry(w, "s", "1-0");
    wait_blocked(p, 0);
    char *pel = pending_of(p, "s");
    cr_assert_str_eq(pel, "1-0:a:1", "%s: delivered once", faults);
    free(pel);
    /* Nothing more comes to the client: its next command answers. */
    redisReply *r = q(w, "PING");
    cr_assert_str_eq(r->str, "PONG");
    freeReplyObject(r);
    close_and_stop(2, w, p);
}

Test(blocking, xreadgroup_store_killed_parked)
{
    store_killed_at("store.xrgparked:1:KILL");
}

Test(blocking, xreadgroup_store_killed_served)
{
    store_killed_at("store.xrgserved:1:KILL");
}

/* ---- XREAD ... BLOCK (D46) ---- */

/* Byte for byte against Redis: answered at once, served by an XADD and
 * by an EXEC (COUNT), "$" as the stream's last ID when the command was
 * applied, a deleted or replaced key keeps the client waiting, one stream
 * of several, a timeout, RESP3. */
Test(blocking, xread_block_matches_redis)
{
    diff_t d = {0};
    rdiff_start_both_with(&d, "--frontends 2", NULL, 2);
    D(&d, "XADD", "s", "1-0", "f", "v");
    D(&d, "XREAD", "BLOCK", "0", "STREAMS", "s", "0");
    BLOCK1(&d, "XREAD", "BLOCK", "0", "STREAMS", "s", "$");
    both_blocked(&d, 1);
    D(&d, "XADD", "s", "2-0", "f", "w");
    both_reply1(&d, __LINE__, "XREAD served by XADD");
    BLOCK1(&d, "XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "nokey", "s", "$", "$");
    both_blocked(&d, 1);
    D(&d, "MULTI");
    D(&d, "XADD", "s", "3-0", "f", "x");
    D(&d, "XADD", "s", "4-0", "f", "y");
    D(&d, "EXEC");
    both_reply1(&d, __LINE__, "XREAD COUNT 1 served by EXEC");
    BLOCK1(&d, "XREAD", "BLOCK", "0", "STREAMS", "s", "4-0");
    both_blocked(&d, 1);
    D(&d, "DEL", "s");
    D(&d, "SET", "s", "string");
    D(&d, "DEL", "s");
    both_blocked(&d, 1);
    D(&d, "XADD", "s", "5-0", "f", "z");
    both_reply1(&d, __LINE__, "XREAD served by a new stream at the key");
    BLOCK1(&d, "XREAD", "BLOCK", "0", "STREAMS", "a", "b", "$", "$");
    both_blocked(&d, 1);
    D(&d, "XADD", "b", "1-0", "x", "y");
    both_reply1(&d, __LINE__, "XREAD served by its second stream");
    DC(&d, 1, "XREAD", "BLOCK", "50", "STREAMS", "s", "$");
    ONE(d.r[1], "HELLO", "3");
    ONE(d.a[1], "HELLO", "3");
    BLOCK1(&d, "XREAD", "BLOCK", "0", "STREAMS", "s", "$");
    both_blocked(&d, 1);
    D(&d, "XADD", "s", "6-0", "f", "r");
    both_reply1(&d, __LINE__, "XREAD served in RESP3");
    DC(&d, 1, "XREAD", "BLOCK", "50", "STREAMS", "s", "$");
    rdiff_end_both(&d);
}

/* Readers blocked on one frontend, the writer on the other: every reader
 * whose ID is below the new entry is served by one XADD (XREAD is no
 * queue), one waiting after a higher ID keeps waiting while a reader
 * behind it is served, and an XREADGROUP waiter on the same key is served
 * by the same XADD. */
Test(blocking, xread_across_frontends)
{
    cr_assert_eq(srv_start(&S, "--frontends 2"), 0);
    redisContext *w1 = conn_on(0), *w2 = conn_on(0), *w3 = conn_on(0), *p = conn_on(1);
    freeReplyObject(q(p, "XADD s 4-0 f v"));
    freeReplyObject(q(p, "XGROUP CREATE s g $"));
    PARK(w1, p, 1, "XREAD BLOCK 0 STREAMS s 7-0");
    PARK(w2, p, 2, "XREAD BLOCK 0 STREAMS s $");
    PARK(w3, p, 3, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >");
    freeReplyObject(q(p, "XADD s 5-0 f v"));
    expect_group_entry(w2, "s", "5-0");
    expect_group_entry(w3, "s", "5-0");
    wait_blocked(p, 1);
    PARK(w2, p, 2, "XREAD BLOCK 0 STREAMS s $");
    freeReplyObject(q(p, "XADD s 8-0 f v"));
    expect_group_entry(w1, "s", "8-0");
    expect_group_entry(w2, "s", "8-0");
    wait_blocked(p, 0);
    close_and_stop(4, w1, w2, w3, p);
}

/* A stream key with a TTL expires under its waiters: Redis 7.0.15 signals
 * the expired key as deleted, so XREADGROUP's waiter gets -UNBLOCKED and
 * XREAD's keeps waiting (served by the next stream at the key), whether
 * active expiry removed it or a read did (active expiry off in Redis:
 * PTTL's lookup deletes it). Here the answer comes from the apply of the
 * first record whose clock passed the TTL (a tick, D14), the same on
 * replay (xreadgroup_expired_key_replays). */
Test(blocking, xreadgroup_block_on_an_expiring_key_matches_redis)
{
    diff_t d = {0};
    rdiff_start_both_with(&d, "--frontends 2", "--enable-debug-command local", 3);
    for (int lazy = 0; lazy < 2; lazy++) {
        if (lazy) cr_assert_str_eq(ONE(d.r[0], "DEBUG", "SET-ACTIVE-EXPIRE", "0"), "+OK\r\n");
        D(&d, "XADD", "s", "1-0", "f", "v");
        D(&d, "XGROUP", "CREATE", "s", "g", "$");
        BLOCKN(&d, 1, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">");
        BLOCKN(&d, 2, "XREAD", "BLOCK", "0", "STREAMS", "s", "$");
        both_blocked(&d, 2);
        D(&d, "PEXPIRE", "s", "100");
        if (lazy) RDIFF_AWAIT_EXPIRED(&d, "s");
        both_reply(&d, 1, __LINE__,
                   lazy ? "XREADGROUP's key expired, then read" : "XREADGROUP's key expired");
        both_blocked(&d, 1);
        D(&d, "EXISTS", "s");
        D(&d, "XADD", "s", "5-0", "a", "b");
        both_reply(&d, 2, __LINE__, "XREAD served by the stream after the expired one");
        both_blocked(&d, 0);
        D(&d, "DEL", "s");
    }
    /* A multi-key read: the expired key answers, the other stream is
     * never looked at. */
    D(&d, "XGROUP", "CREATE", "t", "g", "$", "MKSTREAM");
    D(&d, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
    BLOCKN(&d, 1, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "t", "s", ">", ">");
    both_blocked(&d, 1);
    D(&d, "PEXPIRE", "s", "100");
    RDIFF_AWAIT_EXPIRED(&d, "s");
    both_reply(&d, 1, __LINE__, "XREADGROUP on two keys, one expired");
    both_blocked(&d, 0);
    D(&d, "XINFO", "GROUPS", "t");
    rdiff_end_both(&d);
}

/* The waiter answered by expiry leaves in the log too: after kill -9 the
 * replay reaches the same state with no client blocked, and a later
 * stream at the key is a new one. */
Test(blocking, xreadgroup_expired_key_replays)
{
    cr_assert_eq(srv_start(&S, "--frontends 2"), 0);
    redisContext *w = conn_on(0), *p = conn_on(1);
    freeReplyObject(q(p, "XADD s 1-0 f v"));
    freeReplyObject(q(p, "XGROUP CREATE s g $"));
    PARK(w, p, 1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >");
    freeReplyObject(q(p, "PEXPIRE s 100"));
    expect_type(w, REDIS_REPLY_ERROR, "UNBLOCKED the stream key no longer exists");
    wait_blocked(p, 0);
    cr_assert_eq(qint(p, "EXISTS s"), 0);
    char *before = digest(p);
    redisFree(w);
    redisFree(p);
    redisContext *c = killed_and_replayed(before);
    free(before);
    cr_assert_eq(blocked_clients(c), 0);
    cr_assert_eq(qint(c, "EXISTS s"), 0);
    close_and_stop(1, c);
}
