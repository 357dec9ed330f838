/*
 * test_repl.c - the replication commands of D33 that exist so far: ROLE's
 * and INFO replication's shapes (Redis 7.0's, offsets = durable LSNs),
 * WAIT's parsing and count, REPLICAOF NO ONE and its port checks, on a real server with hiredis.
 * The byte-exact replies were taken from redis-server 7.0.15 for a master without replicas.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

TestSuite(repl, .fini = srv_cleanup_all, .timeout = 120);

static srv_t S;

static redisContext *up(void)
{
    cr_assert(srv_start(&S, NULL) == 0, "server did not start");
    redisContext *c = srv_connect(&S);
    cr_assert(c, "connect");
    return c;
}

/* The value of field in INFO replication, as a number (-1 when missing). */
static long long info_repl(redisContext *c, const char *field)
{
    redisReply *r = redisCommand(c, "INFO replication");
    cr_assert(r && r->type == REDIS_REPLY_STRING, "INFO replication");
    long long v = srv_info_text_num(r->str, field);
    freeReplyObject(r);
    return v;
}

/* ROLE's offset, checking the master shape: ["master", offset, []]. */
static long long role_offset(redisContext *c)
{
    redisReply *r = redisCommand(c, "ROLE");
    cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 3, "ROLE is a 3-array");
    cr_assert(r->element[0]->type == REDIS_REPLY_STRING && !strcmp(r->element[0]->str, "master"));
    cr_assert(r->element[1]->type == REDIS_REPLY_INTEGER);
    cr_assert(r->element[2]->type == REDIS_REPLY_ARRAY && r->element[2]->elements == 0,
              "no replicas listed");
    long long off = r->element[1]->integer;
    freeReplyObject(r);
    return off;
}

Test(repl, role_and_info_offsets_are_the_durable_lsn)
{
    redisContext *c = up();
    char buf[512];
    cr_expect_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "ROLE x"),
                     "-ERR wrong number of arguments for 'role' command\r\n");
    long long before = role_offset(c);
    cr_expect_eq(info_repl(c, "master_repl_offset"), before);
    cr_expect_eq(info_repl(c, "connected_slaves"), 0);
    /* An acked write is durable: the offset has passed its record at once. */
    for (int i = 0; i < 5; i++) {
        redisReply *r = redisCommand(c, "SET k%d v", i);
        cr_assert(r && r->type == REDIS_REPLY_STATUS);
        freeReplyObject(r);
        long long now = role_offset(c);
        cr_expect_gt(now, before, "offset moves with each acked write");
        cr_expect_eq(now % 32, 0, "an LSN is record aligned");
        before = now;
    }
    cr_expect_eq(info_repl(c, "master_repl_offset"), before, "INFO and ROLE agree");
    /* It survives a restart: the log's end is the same LSN. */
    redisFree(c);
    cr_assert(srv_restart(&S) == 0);
    c = srv_connect(&S);
    cr_assert(c);
    cr_expect_eq(role_offset(c), before, "same offset after a restart");
    redisFree(c);
}

Test(repl, wait_parses_like_redis_and_counts_no_replicas)
{
    /* Each pair: a command, redis-server 7.0.15's reply to it (no replicas). */
    static const char *const cases[][2] = {
        {"WAIT 0 0", ":0\r\n"},
        {"WAIT -3 0", ":0\r\n"},
        {"WAIT 5 10", ":0\r\n"},
        {"WAIT x -1", "-ERR value is not an integer or out of range\r\n"},
        {"WAIT 99999999999999999999 0", "-ERR value is not an integer or out of range\r\n"},
        {"WAIT 0 -1", "-ERR timeout is negative\r\n"},
        {"WAIT 0 x", "-ERR timeout is not an integer or out of range\r\n"},
        {"WAIT 1 99999999999999999999", "-ERR timeout is not an integer or out of range\r\n"},
        {"WAIT 1", "-ERR wrong number of arguments for 'wait' command\r\n"},
    };
    redisContext *c = up();
    char buf[512];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_str_eq(srv_cmd_raw(c, buf, sizeof(buf), cases[i][0]), cases[i][1], "%s",
                         cases[i][0]);
    redisFree(c);
}

Test(repl, waitaof_parses_like_redis_7_2_and_counts_local_durability)
{
    /* Each pair: a command and Redis 7.2's reply to it on a leader with
     * appendfsync always and no replicas (7.0.15, the reference here, has
     * no WAITAOF: these follow 7.2's argument checks, in its order). */
    static const char *const cases[][2] = {
        {"WAITAOF 0 0 0", "*2\r\n:1\r\n:0\r\n"},
        {"WAITAOF 1 0 0", "*2\r\n:1\r\n:0\r\n"},
        {"WAITAOF 1 1 50", "*2\r\n:1\r\n:0\r\n"}, /* the timeout passes */
        {"WAITAOF 2 0 0", "-ERR value is out of range, value must between 0 and 1\r\n"},
        {"WAITAOF -1 0 0", "-ERR value is out of range, value must between 0 and 1\r\n"},
        {"WAITAOF 2 x 0", "-ERR value is out of range, value must between 0 and 1\r\n"},
        {"WAITAOF x 0 0", "-ERR value is not an integer or out of range\r\n"},
        {"WAITAOF 1 x 0", "-ERR value is not an integer or out of range\r\n"},
        {"WAITAOF 1 -1 0", "-ERR value is out of range, must be positive\r\n"},
        {"WAITAOF 1 0 -1", "-ERR timeout is negative\r\n"},
        {"WAITAOF 1 0 x", "-ERR timeout is not an integer or out of range\r\n"},
        {"WAITAOF 1 0", "-ERR wrong number of arguments for 'waitaof' command\r\n"},
    };
    redisContext *c = up();
    char buf[512];
    cr_expect_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "SET k v"), "+OK\r\n");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_str_eq(srv_cmd_raw(c, buf, sizeof(buf), cases[i][0]), cases[i][1], "%s",
                         cases[i][0]);
    /* Inside MULTI it does not block: the counts at EXEC. */
    cr_expect_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "MULTI"), "+OK\r\n");
    cr_expect_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "SET k w"), "+QUEUED\r\n");
    cr_expect_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "WAITAOF 1 3 0"), "+QUEUED\r\n");
    cr_expect_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "EXEC"), "*2\r\n+OK\r\n*2\r\n:1\r\n:0\r\n");
    redisReply *r = redisCommand(c, "COMMAND INFO waitaof");
    cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
              r->element[0]->type == REDIS_REPLY_ARRAY);
    cr_expect_str_eq(r->element[0]->element[0]->str, "waitaof");
    cr_expect_eq(r->element[0]->element[1]->integer, 4);
    freeReplyObject(r);
    redisFree(c);
}

/* Reads one reply off c as RESP text, for a pipeline's replies. */
static const char *next_raw(redisContext *c, char *buf, size_t n)
{
    redisReply *r;
    cr_assert(redisGetReply(c, (void **)&r) == REDIS_OK && r, "a reply");
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2)
        snprintf(buf, n, "[%lld,%lld]", r->element[0]->integer, r->element[1]->integer);
    else if (r->type == REDIS_REPLY_INTEGER)
        snprintf(buf, n, ":%lld", r->integer);
    else
        snprintf(buf, n, "%s", r->str ? r->str : "?");
    freeReplyObject(r);
    return buf;
}

/* A WAIT's timeout counts once the commands before it in the pipeline are
 * done, as in Redis, where the next command of a pipeline runs only then.
 * Here a write is done once durable: with the logger stopped past the
 * timeout, WAITAOF still finds the write fsynced when its time starts
 * (it answered [0,0] from beside the write, before). */
Test(repl, a_pipelined_waits_timeout_counts_from_the_end_of_the_commands_before_it)
{
    redisContext *c = up();
    pid_t logger[2];
    cr_assert_eq(srv_wait_children(&S, "atticdb-server: logger", logger, 2, 1), 1);
    cr_assert_eq(kill(logger[0], SIGSTOP), 0);
    redisAppendCommand(c, "SET k v");
    redisAppendCommand(c, "WAITAOF 1 1 50");
    redisAppendCommand(c, "WAIT 1 50");
    redisAppendCommand(c, "WAITAOF 0 0 10");
    int done = 0;
    while (!done)
        cr_assert(redisBufferWrite(c, &done) == REDIS_OK);
    usleep(300 * 1000); /* six times the timeouts */
    cr_assert_eq(kill(logger[0], SIGCONT), 0);
    char buf[64];
    cr_expect_str_eq(next_raw(c, buf, sizeof(buf)), "OK");
    cr_expect_str_eq(next_raw(c, buf, sizeof(buf)), "[1,0]", "WAITAOF 1 1 50");
    cr_expect_str_eq(next_raw(c, buf, sizeof(buf)), ":0", "WAIT 1 50");
    cr_expect_str_eq(next_raw(c, buf, sizeof(buf)), "[1,0]", "WAITAOF 0 0 10");
    redisFree(c);
}

Test(repl, replicaof_no_one_and_bad_ports_as_redis)
{
    /* Each pair: a command, redis-server 7.0.15's reply on a master,
     * and on a replica whose leader is not there. */
    static const char *const cases[][2] = {
        {"REPLICAOF no one", "+OK\r\n"},
        {"REPLICAOF NO ONE", "+OK\r\n"},
        {"SLAVEOF No One", "+OK\r\n"},
        {"REPLICAOF localhost x", "-ERR Invalid master port\r\n"},
        {"REPLICAOF localhost 70000", "-ERR Invalid master port\r\n"},
        {"REPLICAOF localhost -1", "-ERR Invalid master port\r\n"},
        {"REPLICAOF a", "-ERR wrong number of arguments for 'replicaof' command\r\n"},
        {"SET still writable", "+OK\r\n"},
        /* Nothing listens on port 1: a replica whose link stays down. */
        {"REPLICAOF 127.0.0.1 1", "+OK\r\n"},
        {"REPLICAOF 127.0.0.1 1", "+OK Already connected to specified master\r\n"},
        {"SET now refused", "-READONLY You can't write against a read only replica.\r\n"},
        {"REPLICAOF NO ONE", "+OK\r\n"},
        {"SET writable again", "+OK\r\n"},
    };
    redisContext *c = up();
    char buf[512];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_str_eq(srv_cmd_raw(c, buf, sizeof(buf), cases[i][0]), cases[i][1], "%s",
                         cases[i][0]);
    cr_expect_eq(role_offset(c) > 0, 1, "still a leader, with its write");
    redisFree(c);
}
