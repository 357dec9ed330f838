/*
 * test_monitor.c - MONITOR against redis-server 7.0.15: the same lines,
 * in the same order, for the same commands (time and client address
 * aside), on a MONITOR client of each of atticdb-server's two frontends
 * (the commands run on one of them, so the other's lines come through
 * the shared ring); what Redis leaves out (admin commands, commands
 * refused before they run, MULTI's commands until EXEC), AUTH's and
 * HELLO's redacted arguments, a MONITOR client's own PING after its
 * reply, its reads refused, RESET ending it.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "redis_diff.h"

TestSuite(monitor, .fini = rdiff_teardown, .timeout = 120);

/* A MONITOR line without its time and client address: "[db] args". */
static void add_normalized(wire_buf_t *out, const char *line)
{
    const char *db = strchr(line, '[');
    const char *sp = db ? strchr(db, ' ') : NULL;
    const char *end = sp ? strchr(sp, ']') : NULL;
    cr_assert(end, "not a MONITOR line: %s", line);
    wire_buf_add(out, db, (size_t)(sp - db));
    wire_buf_printf(out, "]%s\n", end + 1);
}

/* The lines c receives up to the one that names sentinel, normalized. */
static void read_lines(redisContext *c, const char *sentinel, wire_buf_t *out)
{
    for (int i = 0; i < 1000; i++) {
        redisReply *r;
        cr_assert(redisGetReply(c, (void **)&r) == REDIS_OK && r, "a MONITOR line");
        cr_assert(r->type == REDIS_REPLY_STATUS, "a status line (%d)", r->type);
        add_normalized(out, r->str);
        int last = strstr(r->str, sentinel) != NULL;
        freeReplyObject(r);
        if (last) return;
    }
    cr_assert_fail("no line with %s", sentinel);
}

static redisContext *connect_to(int port)
{
    redisContext *c = redisConnect("127.0.0.1", port);
    cr_assert(c && !c->err);
    struct timeval tv = {10, 0};
    redisSetTimeout(c, tv);
    return c;
}

static void start_monitor(redisContext *c)
{
    redisReply *r = redisCommand(c, "MONITOR");
    cr_assert(r && r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "OK"));
    freeReplyObject(r);
}

/* The reply to cmd on a MONITOR client, as text, then its own line. */
static void own_command(redisContext *c, const char *cmd, wire_buf_t *out)
{
    redisReply *r = redisCommand(c, cmd);
    cr_assert(r);
    wire_buf_printf(out, "%d %s\n", r->type, r->str ? r->str : "");
    freeReplyObject(r);
}

Test(monitor, lines_as_redis_on_every_frontend)
{
    diff_t d;
    rdiff_start_both_with(&d, "--frontends 2", NULL, 1);
    redisContext *rm = connect_to(rdiff_redis.port);
    /* A connection on each frontend (INFO says which), before any MONITOR:
     * INFO is a command MONITOR shows. */
    redisContext *am[2] = {NULL, NULL};
    for (int tries = 0; tries < 64 && !(am[0] && am[1]); tries++) {
        redisContext *c = connect_to(rdiff_atticdb.port);
        int fe = srv_frontend_of(c);
        cr_assert(fe == 0 || fe == 1);
        if (am[fe])
            redisFree(c);
        else
            am[fe] = c;
    }
    cr_assert(am[0] && am[1], "a connection on each frontend");
    start_monitor(rm);
    start_monitor(am[0]);
    start_monitor(am[1]);
    D(&d, "SET", "k", "v\n\"x\x01\xff");
    D(&d, "GET", "k");
    D(&d, "GET");
    D(&d, "NOSUCH", "a");
    D(&d, "AUTH", "wrongpass");
    D(&d, "AUTH", "someone", "wrongpass");
    D(&d, "HELLO", "2", "AUTH", "nobody", "wrongpass");
    D(&d, "MULTI");
    D(&d, "SET", "a", "1");
    D(&d, "INCR", "a");
    D(&d, "EXEC");
    D(&d, "CONFIG", "GET", "maxmemory");
    D(&d, "CLIENT", "SETNAME", "me");
    D(&d, "SELECT", "1");
    D(&d, "SET", "b", "2");
    D(&d, "SELECT", "0");
    /* Inside EXEC each command shows the database it ran in: a SELECT
     * its target, the ones before it the one before (the store's EXEC
     * and one the frontend answers alone). */
    D(&d, "MULTI");
    D(&d, "SET", "c", "1");
    D(&d, "SELECT", "2");
    D(&d, "GET", "c");
    D(&d, "SELECT", "3");
    D(&d, "EXEC");
    D(&d, "MULTI");
    D(&d, "PING");
    D(&d, "SELECT", "0");
    D(&d, "ECHO", "x");
    D(&d, "EXEC");
    D(&d, "PFADD", "h", "x");
    D(&d, "DEL", "k", "a");
    D(&d, "ECHO", "end-of-script");
    wire_buf_t want = {0};
    read_lines(rm, "end-of-script", &want);
    for (int f = 0; f < 2; f++) {
        wire_buf_t got = {0};
        read_lines(am[f], "end-of-script", &got);
        cr_expect_str_eq(got.p, want.p, "frontend %d's MONITOR client", f);
        wire_buf_free(&got);
    }
    /* A MONITOR client's own commands: a read refused, PING answered and
     * then shown, RESET ending MONITOR (its own line not shown to it). */
    wire_buf_t rw = {0};
    own_command(rm, "GET k", &rw);
    own_command(rm, "PING", &rw);
    read_lines(rm, "PING", &rw);
    own_command(rm, "RESET", &rw);
    wire_buf_t aw = {0};
    own_command(am[0], "GET k", &aw);
    own_command(am[0], "PING", &aw);
    read_lines(am[0], "PING", &aw);
    own_command(am[0], "RESET", &aw);
    cr_expect_str_eq(aw.p, rw.p);
    /* The other one saw PING and RESET, and still sees the rest. */
    D(&d, "ECHO", "after");
    wire_buf_t other = {0};
    read_lines(am[1], "after", &other);
    cr_expect_str_eq(other.p, "[0] \"PING\"\n[0] \"RESET\"\n[0] \"ECHO\" \"after\"\n");
    wire_buf_free(&want);
    wire_buf_free(&rw);
    wire_buf_free(&aw);
    wire_buf_free(&other);
    redisFree(rm);
    redisFree(am[0]);
    redisFree(am[1]);
    rdiff_end_both(&d);
}

/* The frontend of one MONITOR client is SIGKILLed: the other MONITOR
 * client goes on, the respawned frontend's count of MONITOR clients
 * starts again from none (ps_slot_reset), and a MONITOR client on it
 * sees the commands run on the other frontend. */
Test(monitor, a_killed_frontends_monitor_clients_are_gone_and_the_rest_go_on)
{
    cr_assert_eq(rdiff_atticdb_start("--frontends 2"), 0);
    redisContext *am[2] = {NULL, NULL};
    for (int tries = 0; tries < 64 && !(am[0] && am[1]); tries++) {
        redisContext *c = connect_to(rdiff_atticdb.port);
        int fe = srv_frontend_of(c);
        if (am[fe])
            redisFree(c);
        else
            am[fe] = c;
    }
    cr_assert(am[0] && am[1], "a connection on each frontend");
    start_monitor(am[0]);
    start_monitor(am[1]);
    pid_t fe1[2], again[2];
    cr_assert_eq(srv_wait_children(&rdiff_atticdb, "atticdb-server: frontend 1", fe1, 2, 1), 1);
    cr_assert_eq(kill(fe1[0], SIGKILL), 0);
    int i = 0;
    for (; i < 1000; i++) {
        if (srv_find_children(&rdiff_atticdb, "atticdb-server: frontend 1", again, 2) == 1 &&
            again[0] != fe1[0])
            break;
        usleep(10000);
    }
    cr_assert_lt(i, 1000, "frontend 1 was respawned");
    redisFree(am[1]);
    /* Commands from frontend 0 reach a new MONITOR client of frontend 1. */
    redisContext *c0 = NULL, *m1 = NULL;
    for (int tries = 0; tries < 64 && !(c0 && m1); tries++) {
        redisContext *c = connect_to(rdiff_atticdb.port);
        int fe = srv_frontend_of(c);
        if (fe == 0 && !c0)
            c0 = c;
        else if (fe == 1 && !m1)
            m1 = c;
        else
            redisFree(c);
    }
    cr_assert(c0 && m1, "a connection on each frontend again");
    wire_buf_t before = {0};
    read_lines(am[0], "\"server\"", &before); /* the INFO calls just made */
    start_monitor(m1);
    redisReply *r = redisCommand(c0, "SET after-kill 1");
    cr_assert(r && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    wire_buf_t w0 = {0}, w1 = {0};
    read_lines(am[0], "after-kill", &w0);
    read_lines(m1, "after-kill", &w1);
    cr_expect_str_eq(w1.p, "[0] \"SET\" \"after-kill\" \"1\"\n");
    cr_expect(strstr(w0.p, "\"SET\" \"after-kill\" \"1\""), "%s", w0.p);
    wire_buf_free(&before);
    wire_buf_free(&w0);
    wire_buf_free(&w1);
    redisFree(c0);
    redisFree(m1);
    redisFree(am[0]);
}
