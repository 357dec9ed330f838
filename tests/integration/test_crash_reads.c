/*
 * test_crash_reads.c - what a frontend waits on from the store survives the
 * store's death: reads that wait for a durable write, replies that need
 * state (INCR), big replies sent in parts; and a store or frontend respawned
 * after the log failed serves again (ARCHITECTURE.md, contracts 5 and 6;
 * docs/OPERATIONS.md, "Processes and the restart policy").
 *
 * The logger is held with SIGSTOP so that reads must wait for a write that
 * is not durable yet, then the store is SIGKILLed; every reply must still
 * come, in request order, once the logger goes on.
 */
#include <criterion/criterion.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

TestSuite(crash_reads, .fini = srv_cleanup_all, .timeout = 120);

#define LOGGER   "atticdb-server: logger"
#define STORE    "atticdb-server: store"
#define FRONTEND "atticdb-server: frontend 0"

static pid_t child(const srv_t *s, const char *title)
{
    pid_t pids[2];
    cr_assert_eq(srv_wait_children(s, title, pids, 2, 1), 1, "%s is running", title);
    return pids[0];
}

/* The value of `field` in INFO (all sections), or "" when it is missing. */
static const char *info(redisContext *c, const char *field, char *out, size_t n)
{
    redisReply *r = redisCommand(c, "INFO everything");
    cr_assert_not_null(r, "INFO: %s", c->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    out[0] = '\0';
    const char *p = strstr(r->str, field);
    if (p) {
        p += strlen(field);
        snprintf(out, n, "%.*s", (int)strcspn(p, "\r\n"), p);
    }
    freeReplyObject(r);
    return out;
}

/* Poll (10 s) until INFO shows field with a value starting with want. */
static void wait_info(redisContext *c, const char *field, const char *want)
{
    char v[256];
    for (int i = 0; i < 1000; i++) {
        if (strncmp(info(c, field, v, sizeof(v)), want, strlen(want)) == 0) return;
        usleep(10000);
    }
    cr_assert_fail("INFO %s is \"%s\", not \"%s\"", field, v, want);
}

/* Poll (10 s) until the process titled `title` is another than old (the
 * master respawned it); returns its pid. */
static pid_t wait_respawn(const srv_t *s, const char *title, pid_t old)
{
    pid_t pids[2];
    for (int i = 0; i < 1000; i++) {
        if (srv_find_children(s, title, pids, 2) == 1 && pids[0] != old) return pids[0];
        usleep(10000);
    }
    cr_assert_fail("%s (pid %d) was not respawned", title, (int)old);
    return 0;
}

/* Kill the store and wait until its successor has replayed the log and
 * serves (INFO loading:0 on c). */
static void kill_store_and_wait(srv_t *s, redisContext *c)
{
    pid_t old = child(s, STORE);
    cr_assert_eq(kill(old, SIGKILL), 0);
    wait_respawn(s, STORE, old);
    wait_info(c, "\r\nloading:", "0");
}

/* Start s with ATTICDB_TEST_FAULTS=faults and one frontend; returns a
 * connection. */
static redisContext *start_with_faults(srv_t *s, const char *faults)
{
    setenv("ATTICDB_TEST_FAULTS", faults, 1);
    int started = srv_start(s, "--frontends 1");
    unsetenv("ATTICDB_TEST_FAULTS");
    cr_assert_eq(started, 0);
    redisContext *c = srv_connect(s);
    cr_assert_not_null(c);
    return c;
}

/* Send everything hiredis has buffered for c. */
static void flush(redisContext *c)
{
    int done = 0;
    while (!done)
        cr_assert_eq(redisBufferWrite(c, &done), REDIS_OK, "%s", c->errstr);
}

static redisReply *next_reply(redisContext *c, const char *what)
{
    redisReply *r = NULL;
    cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "no reply to %s: %s", what, c->errstr);
    return r;
}

static void expect_str(redisContext *c, const char *what, const char *want, size_t len)
{
    redisReply *r = next_reply(c, what);
    cr_assert_eq(r->type, REDIS_REPLY_STRING, "%s: type %d", what, r->type);
    cr_assert_eq(r->len, len, "%s: %zu bytes", what, r->len);
    cr_assert(memcmp(r->str, want, len) == 0, "%s: wrong value", what);
    freeReplyObject(r);
}

static void expect_status(redisContext *c, const char *what)
{
    redisReply *r = next_reply(c, what);
    cr_assert_eq(r->type, REDIS_REPLY_STATUS, "%s: type %d (%s)", what, r->type,
                 r->type == REDIS_REPLY_ERROR ? r->str : "");
    freeReplyObject(r);
}

static void expect_int(redisContext *c, const char *what, long long want)
{
    redisReply *r = next_reply(c, what);
    cr_assert_eq(r->type, REDIS_REPLY_INTEGER, "%s: type %d", what, r->type);
    cr_assert_eq(r->integer, want, "%s", what);
    freeReplyObject(r);
}

/* Every request sent before this one on the frontends of cs[0..n) has been
 * taken from the connections' sockets: `set` was counted `sets` times,
 * then a read on each connection in `barrier` (one per frontend) was
 * answered, so the store has passed every request queued before it. */
static void wait_taken(redisContext *c, long long sets, redisContext **barrier, int nb)
{
    char want[64];
    snprintf(want, sizeof(want), "calls=%lld,", sets);
    wait_info(c, "cmdstat_set:", want);
    for (int i = 0; i < nb; i++) {
        redisReply *r = redisCommand(barrier[i], "GET barrier");
        cr_assert_not_null(r, "barrier read: %s", barrier[i]->errstr);
        freeReplyObject(r);
    }
}

/* True once the server closed c's connection (5 s). */
static int closed_by_server(redisContext *c)
{
    char buf[256];
    for (int i = 0; i < 500; i++) {
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        if (poll(&p, 1, 10) == 1) {
            ssize_t n = read(c->fd, buf, sizeof(buf));
            if (n == 0) return 1;
            if (n < 0) return 0;
        }
    }
    return 0;
}

/* Issue 9, item 2, exactly: a read waiting for its connection's write is
 * not lost when the store dies before the write is durable. */
Test(crash_reads, read_waiting_for_a_write_survives_a_store_kill)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1"), 0);
    redisContext *admin = srv_connect(&s), *c = srv_connect(&s);
    cr_assert(admin && c);
    pid_t logger = child(&s, LOGGER);
    cr_assert_eq(kill(logger, SIGSTOP), 0);
    redisAppendCommand(c, "SET k v");
    redisAppendCommand(c, "GET k");
    flush(c);
    /* Meanwhile another connection's read (the barrier) is answered: the
     * waiting GET holds up nobody else. */
    wait_taken(admin, 1, &admin, 1);
    kill_store_and_wait(&s, admin);
    cr_assert_eq(kill(logger, SIGCONT), 0);
    expect_status(c, "SET k v");
    expect_str(c, "GET k", "v", 1);
    /* The connection goes on, and `timeout` closes it once idle. */
    redisReply *r = redisCommand(c, "GET k");
    cr_assert(r && r->type == REDIS_REPLY_STRING && strcmp(r->str, "v") == 0);
    freeReplyObject(r);
    r = redisCommand(admin, "CONFIG SET timeout 1");
    cr_assert(r && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    cr_assert(closed_by_server(c), "an idle connection outlived `timeout`");
    redisFree(c);
    redisFree(admin);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* Many clients with reads waiting for their writes, stateful write replies
 * behind them, a client that leaves while it waits, and big replies (sent
 * in parts through a small channel) in flight: the store is killed, and
 * every client still gets every reply, in order. */
Test(crash_reads, waiting_reads_and_big_replies_survive_a_store_kill)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 2 --channel-size 64kb"), 0);
    enum { N = 12, BIG_READS = 8 };
    size_t big_len = 1024 * 1024;
    char *big = malloc(big_len);
    for (size_t i = 0; i < big_len; i++)
        big[i] = (char)('a' + i % 26);
    redisContext *admin = srv_connect(&s);
    redisReply *r = redisCommand(admin, "SET big %b", big, big_len);
    cr_assert(r && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);

    /* One idle connection per frontend, to tell when a frontend's earlier
     * requests were taken; one big reader per frontend. */
    redisContext *barrier[2] = {NULL, NULL}, *reader[2] = {NULL, NULL};
    for (int tries = 0; tries < 200 && !(barrier[0] && barrier[1] && reader[0] && reader[1]);
         tries++) {
        redisContext *x = srv_connect(&s);
        cr_assert_not_null(x);
        char fe[16];
        int k = atoi(info(x, "\r\nfrontend:", fe, sizeof(fe)));
        cr_assert(k == 0 || k == 1);
        if (!barrier[k])
            barrier[k] = x;
        else if (!reader[k])
            reader[k] = x;
        else
            redisFree(x);
    }
    cr_assert(barrier[0] && barrier[1] && reader[0] && reader[1], "a frontend got no connection");
    redisContext *cs[N], *leaver = srv_connect(&s);
    for (int i = 0; i < N; i++)
        cr_assert_not_null(cs[i] = srv_connect(&s));
    cr_assert_not_null(leaver);

    pid_t logger = child(&s, LOGGER);
    cr_assert_eq(kill(logger, SIGSTOP), 0);
    for (int i = 0; i < N; i++) {
        redisAppendCommand(cs[i], "SET a:%d v%d", i, i);
        redisAppendCommand(cs[i], "GET a:%d", i);
        redisAppendCommand(cs[i], "INCR n:%d", i);
        redisAppendCommand(cs[i], "GET n:%d", i);
        redisAppendCommand(cs[i], "GET big");
        redisAppendCommand(cs[i], "MGET a:%d n:%d", i, i);
        flush(cs[i]);
    }
    redisAppendCommand(leaver, "SET gone 1");
    redisAppendCommand(leaver, "GET gone");
    flush(leaver);
    wait_taken(admin, 1 + N + 1, barrier, 2);
    redisFree(leaver); /* it leaves while its read waits */
    /* Big replies in flight: the first one has reached the reader, the
     * others are on their way through the 64 KB channel. */
    for (int k = 0; k < 2; k++) {
        for (int j = 0; j < BIG_READS; j++)
            redisAppendCommand(reader[k], "GET big");
        flush(reader[k]);
    }
    for (int k = 0; k < 2; k++) {
        struct pollfd p = {.fd = reader[k]->fd, .events = POLLIN};
        cr_assert_eq(poll(&p, 1, 10000), 1, "no big reply started");
    }
    kill_store_and_wait(&s, admin);
    cr_assert_eq(kill(logger, SIGCONT), 0);

    for (int k = 0; k < 2; k++)
        for (int j = 0; j < BIG_READS; j++)
            expect_str(reader[k], "GET big (reader)", big, big_len);
    for (int i = 0; i < N; i++) {
        char v[16];
        snprintf(v, sizeof(v), "v%d", i);
        expect_status(cs[i], "SET a:i");
        expect_str(cs[i], "GET a:i", v, strlen(v));
        expect_int(cs[i], "INCR n:i", 1);
        expect_str(cs[i], "GET n:i", "1", 1);
        expect_str(cs[i], "GET big", big, big_len);
        r = next_reply(cs[i], "MGET");
        cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
        cr_assert_eq(r->elements, 2);
        cr_assert_str_eq(r->element[0]->str, v);
        cr_assert_str_eq(r->element[1]->str, "1");
        freeReplyObject(r);
        redisFree(cs[i]);
    }
    /* The connection that left is closed on the server too. */
    wait_info(admin, "\r\nconnected_clients:", "5"); /* admin, 2 barriers, 2 readers */
    r = redisCommand(admin, "GET gone");
    cr_assert(r && r->type == REDIS_REPLY_STRING && strcmp(r->str, "1") == 0);
    freeReplyObject(r);
    for (int k = 0; k < 2; k++) {
        redisFree(barrier[k]);
        redisFree(reader[k]);
    }
    redisFree(admin);
    free(big);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* Write until the injected fdatasync failure; returns how many were acked
 * (keys f:<i> = v<i>). */
static int write_until_failure(redisContext *c)
{
    int acked = 0;
    for (int i = 0; i < 200; i++) {
        redisReply *r = redisCommand(c, "SET f:%d v%d", i, i);
        cr_assert_not_null(r, "%s", c->errstr);
        int ok = r->type == REDIS_REPLY_STATUS;
        freeReplyObject(r);
        if (!ok) break;
        acked++;
    }
    cr_assert_gt(acked, 0);
    cr_assert_lt(acked, 200, "no write failed");
    return acked;
}

/* After the log failed, a new connection reads the acked data and has
 * its writes refused with the error of D12. */
static void expect_read_only(const srv_t *s, int acked)
{
    redisContext *c = srv_connect(s);
    cr_assert_not_null(c);
    redisReply *r = redisCommand(c, "GET f:0");
    cr_assert_not_null(r, "GET after the respawn: %s", c->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert_str_eq(r->str, "v0");
    freeReplyObject(r);
    r = redisCommand(c, "GET f:%d", acked - 1);
    cr_assert(r && r->type == REDIS_REPLY_STRING);
    freeReplyObject(r);
    r = redisCommand(c, "SET after x");
    cr_assert_not_null(r);
    cr_assert_eq(r->type, REDIS_REPLY_ERROR, "a write after the failure was acked");
    freeReplyObject(r);
    redisFree(c);
}

/* Issue 9, item 4: the read-only mode after a failed fdatasync outlives a
 * store and a frontend killed in it. */
Test(crash_reads, store_and_frontend_respawned_after_a_failed_fsync_serve_reads)
{
    srv_t s;
    redisContext *c = start_with_faults(&s, "logger.fdatasync:20:EIO");
    int acked = write_until_failure(c);
    expect_read_only(&s, acked);

    kill_store_and_wait(&s, c);
    expect_read_only(&s, acked);
    redisFree(c);

    pid_t old = child(&s, FRONTEND);
    cr_assert_eq(kill(old, SIGKILL), 0);
    wait_respawn(&s, FRONTEND, old);
    expect_read_only(&s, acked);
    cr_assert_eq(srv_stop(&s), 1, "a stop after a failed log exits 1");
    srv_cleanup(&s);
}

/* Issue 9, item 4, the frontend's half: a frontend dies holding a ring
 * claim just before the log fails, so the claim is never passed; its
 * successor must still accept and serve reads (writes get D12's error).
 * The fault counts fdatasync calls of all kinds, so a first server tells
 * how many the logger makes before its first commit. */
Test(crash_reads, frontend_respawned_over_a_claim_the_failed_log_never_passes)
{
    srv_t s;
    redisContext *c = start_with_faults(&s, "logger.fdatasync:20:EIO");
    int before = 19 - write_until_failure(c); /* one fdatasync per acked SET */
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 1);
    srv_cleanup(&s);
    cr_assert_geq(before, 0);

    /* Three acked writes; then, with the logger stopped, SET a is
     * committed and SET b's claim kills the frontend; the logger's next
     * fdatasync (SET a's) fails. */
    enum { K = 3 };
    char faults[128];
    snprintf(faults, sizeof(faults), "logger.fdatasync:%d:EIO,frontend.claim:%d:KILL",
             before + K + 1, K + 2);
    c = start_with_faults(&s, faults);
    for (int i = 0; i < K; i++) {
        redisReply *r = redisCommand(c, "SET f:%d v%d", i, i);
        cr_assert(r && r->type == REDIS_REPLY_STATUS);
        freeReplyObject(r);
    }
    pid_t logger = child(&s, LOGGER), fe = child(&s, FRONTEND);
    cr_assert_eq(kill(logger, SIGSTOP), 0);
    redisAppendCommand(c, "SET a 1");
    redisAppendCommand(c, "SET b 1");
    flush(c);
    wait_respawn(&s, FRONTEND, fe); /* it died at SET b's claim */
    redisFree(c);
    cr_assert_eq(kill(logger, SIGCONT), 0);
    c = srv_connect(&s);
    cr_assert_not_null(c);
    wait_info(c, "atticdb_log_state:", "failed");
    redisFree(c);
    expect_read_only(&s, K);
    cr_assert_eq(srv_stop(&s), 1);
    srv_cleanup(&s);
}
