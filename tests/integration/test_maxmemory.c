/*
 * test_maxmemory.c - the memory bound (issue 15 part 1, D32) on a real
 * server: maxmemory and its companions through CONFIG GET/SET and INFO,
 * and noeviction's refusal of denyoom writes while used_memory is over the
 * bound, with reads and deletes still served. The evicting policies are
 * tests/integration/test_evict.c's.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

TestSuite(maxmemory, .fini = srv_cleanup_all, .timeout = 120);

#define OOM_TEXT "OOM command not allowed when used memory > 'maxmemory'."

static redisReply *cmdv(redisContext *c, const char *fmt)
{
    redisReply *r = redisCommand(c, fmt);
    cr_assert(r, "%s: no reply", fmt);
    return r;
}

static void expect_status(redisContext *c, const char *cmd, const char *want)
{
    redisReply *r = cmdv(c, cmd);
    cr_expect(r->type == REDIS_REPLY_STATUS && !strcmp(r->str, want), "%s: %s", cmd,
              r->str ? r->str : "(no text)");
    freeReplyObject(r);
}

static void expect_error(redisContext *c, const char *cmd, const char *want)
{
    redisReply *r = cmdv(c, cmd);
    cr_expect(r->type == REDIS_REPLY_ERROR && !strcmp(r->str, want), "%s: %s", cmd,
              r->str ? r->str : "(no text)");
    freeReplyObject(r);
}

/* INFO's field as a number; -1 when missing. */
static long long info_num(redisContext *c, const char *field)
{
    redisReply *r = cmdv(c, "INFO memory");
    cr_assert(r->type == REDIS_REPLY_STRING);
    char key[128];
    snprintf(key, sizeof(key), "\r\n%s:", field);
    const char *p = strstr(r->str, key);
    long long v = p ? atoll(p + strlen(key)) : -1;
    freeReplyObject(r);
    return v;
}

static int info_has(redisContext *c, const char *line)
{
    redisReply *r = cmdv(c, "INFO memory");
    int found = r->type == REDIS_REPLY_STRING && strstr(r->str, line) != NULL;
    freeReplyObject(r);
    return found;
}

Test(maxmemory, settings_are_redis_ones_in_config_and_info)
{
    srv_t s;
    cr_assert(srv_start(&s, "--maxmemory 2mb") == 0);
    redisContext *c = srv_connect(&s);
    cr_assert(c);
    redisReply *r = cmdv(c, "CONFIG GET maxmemory*");
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(r->elements, 6);
    cr_expect_str_eq(r->element[0]->str, "maxmemory");
    cr_expect_str_eq(r->element[1]->str, "2097152");
    cr_expect_str_eq(r->element[2]->str, "maxmemory-policy");
    cr_expect_str_eq(r->element[3]->str, "noeviction");
    cr_expect_str_eq(r->element[4]->str, "maxmemory-samples");
    cr_expect_str_eq(r->element[5]->str, "5");
    freeReplyObject(r);
    cr_expect_eq(info_num(c, "maxmemory"), 2097152);
    cr_expect(info_has(c, "\r\nmaxmemory_human:2.00M\r\n"));
    cr_expect(info_has(c, "\r\nmaxmemory_policy:noeviction\r\n"));
    expect_status(c, "CONFIG SET maxmemory-policy allkeys-lru", "OK");
    cr_expect(info_has(c, "\r\nmaxmemory_policy:allkeys-lru\r\n"));
    expect_status(c, "CONFIG SET maxmemory 100mb", "OK");
    cr_expect_eq(info_num(c, "maxmemory"), 100ll * 1024 * 1024);
    /* Redis 7.0's texts for a bad value. */
    expect_error(c, "CONFIG SET maxmemory-policy lru",
                 "ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - "
                 "argument(s) must be one of the following: volatile-lru, volatile-lfu, "
                 "volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, "
                 "noeviction");
    r = cmdv(c, "CONFIG SET maxmemory-samples 0");
    cr_expect_eq(r->type, REDIS_REPLY_ERROR);
    freeReplyObject(r);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

Test(maxmemory, noeviction_refuses_growing_writes_and_serves_reads_and_deletes)
{
    srv_t s;
    cr_assert(srv_start(&s, "") == 0);
    redisContext *c = srv_connect(&s);
    cr_assert(c);
    expect_status(c, "SET a 1", "OK");
    expect_status(c, "SET b 2", "OK");
    /* The store publishes used_memory after applying. */
    int i = 0;
    while (info_num(c, "used_memory") <= 1 && i++ < 500)
        usleep(10000);
    cr_assert_gt(info_num(c, "used_memory"), 1);

    expect_status(c, "CONFIG SET maxmemory 1", "OK");
    expect_error(c, "SET c 3", OOM_TEXT);
    expect_error(c, "SET a 9", OOM_TEXT);
    expect_error(c, "INCR a", OOM_TEXT);
    expect_error(c, "HSET h f v", OOM_TEXT);
    expect_error(c, "SADD s m", OOM_TEXT);
    expect_error(c, "APPEND a x", OOM_TEXT);
    redisReply *r = cmdv(c, "GET a");
    cr_expect(r->type == REDIS_REPLY_STRING && !strcmp(r->str, "1"), "reads are served");
    freeReplyObject(r);
    r = cmdv(c, "EXISTS c");
    cr_expect(r->type == REDIS_REPLY_INTEGER && r->integer == 0, "the refused write did nothing");
    freeReplyObject(r);
    r = cmdv(c, "DEL b");
    cr_expect(r->type == REDIS_REPLY_INTEGER && r->integer == 1, "deletes are served");
    freeReplyObject(r);
    r = cmdv(c, "EXPIRE a 100");
    cr_expect(r->type == REDIS_REPLY_INTEGER && r->integer == 1, "EXPIRE is not denyoom");
    freeReplyObject(r);

    /* Inside MULTI the command is refused at queueing and EXEC aborts. */
    expect_status(c, "MULTI", "OK");
    expect_error(c, "SET d 4", OOM_TEXT);
    expect_error(c, "EXEC", "EXECABORT Transaction discarded because of previous errors.");

    /* A volatile policy evicts the one key with a TTL (a), then has no
     * victim left and refuses as noeviction (tests/integration/test_evict
     * has the policies' choices). */
    expect_status(c, "CONFIG SET maxmemory-policy volatile-ttl", "OK");
    for (i = 0; i < 3000; i++) {
        r = cmdv(c, "SET c 3");
        int refused = r->type == REDIS_REPLY_ERROR && !strcmp(r->str, OOM_TEXT);
        freeReplyObject(r);
        if (refused) break;
        usleep(10000);
    }
    cr_expect_lt(i, 3000, "refused once nothing is left to evict");
    r = cmdv(c, "EXISTS a");
    cr_expect(r->type == REDIS_REPLY_INTEGER && r->integer == 0, "the key with a TTL was evicted");
    freeReplyObject(r);

    expect_status(c, "CONFIG SET maxmemory 0", "OK");
    expect_status(c, "SET c 3", "OK");
    r = cmdv(c, "GET c");
    cr_expect(r->type == REDIS_REPLY_STRING && !strcmp(r->str, "3"));
    freeReplyObject(r);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}
