/*
 * test_maxmemory.c - the memory bound (issue 15 part 1, D32) on a real
 * server: maxmemory and its companions through CONFIG GET/SET and INFO;
 * noeviction's refusal of denyoom writes while used_memory is over the
 * bound, with reads and deletes still served; and eviction: each policy
 * evicts the keys Redis' would prefer (statistically: allkeys-lru keeps a
 * set read again while a cold set goes, allkeys-lfu keeps the keys used
 * more, volatile-ttl takes the nearest expiries, volatile-* never takes a
 * key without a TTL and refuses with -OOM once none is left), INFO
 * evicted_keys counts, a restart after kill -9 replays the evictions to
 * the same digest, and OBJECT FREQ/IDLETIME answer as redis-server 7.0.15
 * does. maxmemory-eviction-tenacity and INFO's total_/current_eviction_
 * exceeded_time (D43) are compared with redis-server's. The access data
 * survives a restart from a checkpoint (D49): OBJECT FREQ / IDLETIME as
 * they were, eviction still choosing the cold keys, and a kill at each of
 * its fault points (ckptaccess, accessload) costs nothing. A round at
 * tenacity 0 yields after 16 victims and later rounds finish the work.
 *
 * Waits poll for a condition with a generous timeout; nothing asserts how
 * long anything took. The LRU clock counts seconds (as Redis'), so the
 * LRU test lets two seconds pass between the cold writes and the hot reads.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "redis_diff.h"

static void teardown(void)
{
    rdiff_teardown(); /* the differential test's two servers */
    srv_cleanup_all();
}

TestSuite(maxmemory, .fini = teardown, .timeout = 240);

#define OOM_TEXT "OOM command not allowed when used memory > 'maxmemory'."

static redisReply *cmd(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    cr_assert(r, "%s: no reply", fmt);
    return r;
}

/* A server with these arguments and a connection to it. */
static redisContext *start(srv_t *s, const char *args)
{
    cr_assert(srv_start(s, args) == 0);
    redisContext *c = srv_connect(s);
    cr_assert(c);
    return c;
}

/* Close c, stop the server cleanly (exit 0), remove its directory. */
static void finish(srv_t *s, redisContext *c)
{
    redisFree(c);
    cr_assert_eq(srv_stop(s), 0);
    srv_cleanup(s);
}

static void expect_status(redisContext *c, const char *line, const char *want)
{
    redisReply *r = cmd(c, line);
    cr_expect(r->type == REDIS_REPLY_STATUS && !strcmp(r->str, want), "%s: %s", line,
              r->str ? r->str : "(no text)");
    freeReplyObject(r);
}

static void expect_error(redisContext *c, const char *line, const char *want)
{
    redisReply *r = cmd(c, line);
    cr_expect(r->type == REDIS_REPLY_ERROR && !strcmp(r->str, want), "%s: %s", line,
              r->str ? r->str : "(no text)");
    freeReplyObject(r);
}

static int info_has(redisContext *c, const char *line)
{
    redisReply *r = cmd(c, "INFO memory");
    int found = r->type == REDIS_REPLY_STRING && strstr(r->str, line) != NULL;
    freeReplyObject(r);
    return found;
}

static long long cmd_int(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    cr_assert(r && r->type == REDIS_REPLY_INTEGER, "%s: not an integer", fmt);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

static void ok(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    cr_assert(r && r->type == REDIS_REPLY_STATUS, "%s: %s", fmt, r && r->str ? r->str : "?");
    freeReplyObject(r);
}

/* An INFO field as a number; -1 when missing. */
static long long info_num(redisContext *c, const char *field)
{
    redisReply *r = cmd(c, "INFO");
    cr_assert(r->type == REDIS_REPLY_STRING);
    long long v = srv_info_text_num(r->str, field);
    freeReplyObject(r);
    return v;
}

/* mem_clients_normal once the frontend's next sum (every FE_OBUF_SUM_MS)
 * has seen the clients' buffers empty: a sum taken while a request was
 * being received or run stays in INFO until the next one. */
static long long clients_settled(redisContext *c)
{
    for (int i = 0; i < 3000 && info_num(c, "mem_clients_normal") != 0; i++)
        usleep(10000);
    return info_num(c, "mem_clients_normal");
}

/* What maxmemory bounds: used_memory less mem_not_counted_for_evict (the
 * shared memory mapped at start, D43), as Redis compares. */
static long long bounded(redisContext *c)
{
    long long used = info_num(c, "used_memory"), fixed = info_num(c, "mem_not_counted_for_evict");
    cr_assert(used > 0 && fixed > 0 && used > fixed, "used_memory %lld, not counted %lld", used,
              fixed);
    return used - fixed;
}

/* SET prefix:0..n-1 (pipelined), with EX ttl when ttl > 0 (ttl + i when
 * spread is set). */
static void fill(redisContext *c, const char *prefix, int n, long ttl, int spread)
{
    for (int i = 0; i < n; i++) {
        if (ttl > 0)
            redisAppendCommand(c, "SET %s:%d v EX %ld", prefix, i, ttl + (spread ? i : 0));
        else
            redisAppendCommand(c, "SET %s:%d v", prefix, i);
    }
    for (int i = 0; i < n; i++) {
        redisReply *r = NULL;
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
        cr_assert(r->type == REDIS_REPLY_STATUS, "SET %s:%d: %s", prefix, i, r->str);
        freeReplyObject(r);
    }
}

/* How many of prefix:0..n-1 exist (EXISTS does not touch them). */
static int count_present(redisContext *c, const char *prefix, int n)
{
    for (int i = 0; i < n; i++)
        redisAppendCommand(c, "EXISTS %s:%d", prefix, i);
    int present = 0;
    for (int i = 0; i < n; i++) {
        redisReply *r = NULL;
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
        cr_assert_eq(r->type, REDIS_REPLY_INTEGER);
        present += (int)r->integer;
        freeReplyObject(r);
    }
    return present;
}

/* GET prefix:0..n-1, `times` times over (pipelined). */
static void read_all(redisContext *c, const char *prefix, int n, int times)
{
    for (int t = 0; t < times; t++) {
        for (int i = 0; i < n; i++)
            redisAppendCommand(c, "GET %s:%d", prefix, i);
        for (int i = 0; i < n; i++) {
            redisReply *r = NULL;
            cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
            freeReplyObject(r);
        }
    }
}

/* Set maxmemory to pct % of the current used_memory and wait (60 s at
 * most) until used_memory is under it. Returns the bound. */
static long long shrink_to(redisContext *c, int pct)
{
    /* A read after this connection's writes is answered once they are
     * applied (D19), and the store publishes used_memory before it
     * answers: the figure below includes them. */
    cmd_int(c, "DBSIZE");
    long long used = bounded(c);
    long long bound = used * pct / 100;
    ok(c, "CONFIG SET maxmemory %lld", bound);
    int i = 0;
    while (bounded(c) > bound && i++ < 6000)
        usleep(10000);
    cr_assert_leq(bounded(c), bound, "used memory never came under %lld", bound);
    return bound;
}

Test(maxmemory, settings_are_redis_ones_in_config_and_info)
{
    srv_t s;
    redisContext *c = start(&s, "--maxmemory 2mb");
    redisReply *r = cmd(c, "CONFIG GET maxmemory*");
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(r->elements, 8);
    cr_expect_str_eq(r->element[0]->str, "maxmemory");
    cr_expect_str_eq(r->element[1]->str, "2097152");
    cr_expect_str_eq(r->element[2]->str, "maxmemory-policy");
    cr_expect_str_eq(r->element[3]->str, "noeviction");
    cr_expect_str_eq(r->element[4]->str, "maxmemory-samples");
    cr_expect_str_eq(r->element[5]->str, "5");
    cr_expect_str_eq(r->element[6]->str, "maxmemory-eviction-tenacity");
    cr_expect_str_eq(r->element[7]->str, "10");
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
    r = cmd(c, "CONFIG SET maxmemory-samples 0");
    cr_expect_eq(r->type, REDIS_REPLY_ERROR);
    freeReplyObject(r);
    finish(&s, c);
}

Test(maxmemory, noeviction_refuses_growing_writes_and_serves_reads_and_deletes)
{
    srv_t s;
    redisContext *c = start(&s, "");
    expect_status(c, "SET a 1", "OK");
    expect_status(c, "SET b 2", "OK");
    /* The store publishes used_memory after applying. */
    int i = 0;
    while (bounded(c) <= 1 && i++ < 500)
        usleep(10000);
    cr_assert_gt(bounded(c), 1);

    expect_status(c, "CONFIG SET maxmemory 1", "OK");
    expect_error(c, "SET c 3", OOM_TEXT);
    expect_error(c, "SET a 9", OOM_TEXT);
    expect_error(c, "INCR a", OOM_TEXT);
    expect_error(c, "HSET h f v", OOM_TEXT);
    expect_error(c, "SADD s m", OOM_TEXT);
    expect_error(c, "APPEND a x", OOM_TEXT);
    redisReply *r = cmd(c, "GET a");
    cr_expect(r->type == REDIS_REPLY_STRING && !strcmp(r->str, "1"), "reads are served");
    freeReplyObject(r);
    r = cmd(c, "EXISTS c");
    cr_expect(r->type == REDIS_REPLY_INTEGER && r->integer == 0, "the refused write did nothing");
    freeReplyObject(r);
    r = cmd(c, "DEL b");
    cr_expect(r->type == REDIS_REPLY_INTEGER && r->integer == 1, "deletes are served");
    freeReplyObject(r);
    r = cmd(c, "EXPIRE a 100");
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
        r = cmd(c, "SET c 3");
        int refused = r->type == REDIS_REPLY_ERROR && !strcmp(r->str, OOM_TEXT);
        freeReplyObject(r);
        if (refused) break;
        usleep(10000);
    }
    cr_expect_lt(i, 3000, "refused once nothing is left to evict");
    r = cmd(c, "EXISTS a");
    cr_expect(r->type == REDIS_REPLY_INTEGER && r->integer == 0, "the key with a TTL was evicted");
    freeReplyObject(r);

    expect_status(c, "CONFIG SET maxmemory 0", "OK");
    expect_status(c, "SET c 3", "OK");
    r = cmd(c, "GET c");
    cr_expect(r->type == REDIS_REPLY_STRING && !strcmp(r->str, "3"));
    freeReplyObject(r);
    finish(&s, c);
}

/* DEBUG DIGEST's answer into out (64 bytes). */
static void digest_of(redisContext *c, char *out)
{
    redisReply *r = cmd(c, "DEBUG DIGEST");
    cr_assert_eq(r->type, REDIS_REPLY_STATUS);
    snprintf(out, 64, "%s", r->str);
    freeReplyObject(r);
}

static void expect_digest(redisContext *c, const char *want, const char *what)
{
    char got[64];
    digest_of(c, got);
    cr_expect_str_eq(got, want, "%s", what);
}

/* Stop the server cleanly after a write (so the stop writes a checkpoint,
 * with the access data as it is now, D49) and start it again on the same
 * directory; returns the new connection. */
static redisContext *restart_from_checkpoint(srv_t *s, redisContext *c)
{
    ok(c, "SET restart:marker 1");
    redisFree(c);
    cr_assert_eq(srv_stop(s), 0);
    cr_assert_eq(srv_restart(s), 0);
    c = srv_connect(s);
    cr_assert(c);
    /* PING is the frontend's; a read is the store's, served once it has
     * loaded (and logged) the checkpoint. */
    redisReply *r = cmd(c, "GET restart:marker");
    cr_assert(r->type == REDIS_REPLY_STRING && !strcmp(r->str, "1"));
    freeReplyObject(r);
    cr_assert(srv_log_contains(s, "loaded checkpoint", NULL), "the restart loaded a checkpoint");
    return c;
}

/* Under policy, nhot keys read `reads` times (after pause_s seconds) and
 * ncold keys never read: shrinking used_memory to 60 % evicts cold keys
 * and keeps nearly every hot one, and evicted_keys counts them all. With
 * restart set, the server restarts from a checkpoint between the reads
 * and the eviction. */
static void hot_set_stays(const char *policy, int nhot, int ncold, int reads, int pause_s,
                          int restart)
{
    srv_t s;
    char args[64];
    snprintf(args, sizeof(args), "--maxmemory-policy %s", policy);
    redisContext *c = start(&s, args);
    fill(c, "hot", nhot, 0, 0);
    fill(c, "cold", ncold, 0, 0);
    cr_assert_eq(cmd_int(c, "DBSIZE"), nhot + ncold);
    if (pause_s) sleep((unsigned)pause_s);
    read_all(c, "hot", nhot, reads);
    if (restart) {
        c = restart_from_checkpoint(&s, c);
        cr_assert_eq(cmd_int(c, "DEL restart:marker"), 1);
    }
    shrink_to(c, 60);
    /* A round of evictions may still be applying its last records once
     * used memory is under the bound (store/evict.c: a round covers the
     * excess, its records apply in turn): count once evicted_keys holds
     * still across the count. */
    int hot = 0, cold = 0;
    long long evicted = -1;
    for (int i = 0; i < 200; i++) {
        long long before = info_num(c, "evicted_keys");
        hot = count_present(c, "hot", nhot), cold = count_present(c, "cold", ncold);
        evicted = info_num(c, "evicted_keys");
        if (evicted == before) break;
        usleep(20000);
    }
    cr_expect_gt(evicted, 0);
    cr_expect_eq(evicted, nhot + ncold - hot - cold,
                 "evicted_keys counts every key gone: %lld, %d gone", evicted,
                 nhot + ncold - hot - cold);
    cr_expect_geq(hot, nhot * 95 / 100, "%s: the keys used stay (%d of %d kept, %d of %d cold)",
                  policy, hot, nhot, cold, ncold);
    cr_expect_lt(cold, ncold * 8 / 10, "%s: the unused ones go (%d of %d kept)", policy, cold,
                 ncold);
    finish(&s, c);
}

Test(maxmemory, allkeys_lru_keeps_the_keys_read_again_and_evicts_the_cold_ones)
{
    /* Two seconds: the LRU clock's resolution, so the reads are later. */
    hot_set_stays("allkeys-lru", 500, 3000, 1, 2, 0);
}

Test(maxmemory, allkeys_lfu_keeps_the_keys_used_more)
{
    hot_set_stays("allkeys-lfu", 300, 2000, 10, 0, 0);
}

/* The access data is in the checkpoint (D49): after a restart eviction
 * still tells the keys used from the ones not, under LRU and LFU. */
Test(maxmemory, eviction_after_a_restart_evicts_the_cold_keys_under_lru)
{
    hot_set_stays("allkeys-lru", 500, 3000, 1, 2, 1);
}

Test(maxmemory, eviction_after_a_restart_evicts_the_cold_keys_under_lfu)
{
    hot_set_stays("allkeys-lfu", 300, 2000, 10, 0, 1);
}

/* OBJECT FREQ of prefix:0..n-1 into out. */
static void freqs(redisContext *c, const char *prefix, int n, long long *out)
{
    for (int i = 0; i < n; i++)
        out[i] = cmd_int(c, "OBJECT FREQ %s:%d", prefix, i);
}

/* After a restart each counter is what it was, less at most the one step
 * lfu-decay-time (1 minute) takes if a minute passed meanwhile. */
static void expect_freqs_kept(redisContext *c, const char *prefix, int n, const long long *before)
{
    long long after[64];
    cr_assert_leq(n, 64);
    freqs(c, prefix, n, after);
    for (int i = 0; i < n; i++)
        cr_expect(after[i] <= before[i] && after[i] >= before[i] - 1,
                  "OBJECT FREQ %s:%d: %lld before the restart, %lld after", prefix, i, before[i],
                  after[i]);
}

Test(maxmemory, object_freq_under_allkeys_lfu_survives_a_restart)
{
    srv_t s;
    redisContext *c = start(&s, "--maxmemory-policy allkeys-lfu");
    fill(c, "hot", 20, 0, 0);
    fill(c, "cold", 20, 0, 0);
    read_all(c, "hot", 20, 300);
    long long hot[20], cold[20];
    freqs(c, "hot", 20, hot);
    freqs(c, "cold", 20, cold);
    for (int i = 0; i < 20; i++) /* 300 uses take a counter from 5 to about 13 */
        cr_assert_gt(hot[i], 8, "hot:%d used 300 times: OBJECT FREQ %lld", i, hot[i]);
    c = restart_from_checkpoint(&s, c);
    expect_freqs_kept(c, "hot", 20, hot);
    expect_freqs_kept(c, "cold", 20, cold);
    finish(&s, c);
}

Test(maxmemory, object_idletime_survives_a_restart)
{
    srv_t s;
    redisContext *c = start(&s, "");
    fill(c, "old", 20, 0, 0);
    sleep(3); /* the LRU clock counts seconds */
    fill(c, "new", 20, 0, 0);
    long long old[20];
    for (int i = 0; i < 20; i++) {
        old[i] = cmd_int(c, "OBJECT IDLETIME old:%d", i);
        cr_assert_geq(old[i], 2, "old:%d idle since its write: %lld s", i, old[i]);
    }
    time_t t0 = time(NULL);
    c = restart_from_checkpoint(&s, c);
    long long passed = (long long)(time(NULL) - t0);
    for (int i = 0; i < 20; i++) {
        long long now = cmd_int(c, "OBJECT IDLETIME old:%d", i);
        /* Idle as before plus the seconds of the restart (and one for the
         * clock's resolution), not since the restart. */
        cr_expect(now >= old[i] && now <= old[i] + passed + 1,
                  "old:%d: idle %lld s before, %lld s after a %lld s restart", i, old[i], now,
                  passed);
        cr_expect_lt(cmd_int(c, "OBJECT IDLETIME new:%d", i), now, "new:%d is the younger", i);
    }
    finish(&s, c);
}

/* Fault point 22 (ckptaccess): the checkpoint child of the clean stop is
 * killed with every entry written and no access data: no checkpoint comes
 * of it, and the restart replays the log to the same state. */
Test(maxmemory, checkpoint_child_killed_before_the_access_data_leaves_no_checkpoint)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "store.ckptaccess:1:KILL", ""), 0);
    redisContext *c = srv_connect(&s);
    cr_assert(c);
    fill(c, "k", 200, 0, 0);
    char digest[64];
    digest_of(c, digest);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert(srv_log_contains(&s, "the checkpoint at LSN", "killed by signal 9"),
              "the child died at the fault point");
    cr_assert_eq(srv_restart(&s), 0);
    cr_expect(!srv_log_contains(&s, "loaded checkpoint", NULL), "no checkpoint was completed");
    c = srv_connect(&s);
    cr_assert(c);
    expect_digest(c, digest, "the replay reaches the same state");
    cr_expect_eq(cmd_int(c, "DBSIZE"), 200);
    finish(&s, c);
}

/* Fault point 23 (accessload): the store starting from a checkpoint is
 * killed with its entries loaded and their access data not applied; the
 * store the master starts next loads the whole file again, access data
 * included. */
Test(maxmemory, store_killed_while_loading_the_access_data_loads_it_again)
{
    srv_t s;
    redisContext *c = start(&s, "--maxmemory-policy allkeys-lfu");
    fill(c, "hot", 20, 0, 0);
    read_all(c, "hot", 20, 300);
    long long hot[20];
    freqs(c, "hot", 20, hot);
    ok(c, "SET restart:marker 1");
    char digest[64];
    digest_of(c, digest);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    setenv("ATTICDB_TEST_FAULTS", "store.accessload:1:KILL", 1);
    int rc = srv_restart(&s);
    unsetenv("ATTICDB_TEST_FAULTS");
    cr_assert_eq(rc, 0);
    c = srv_connect(&s);
    cr_assert(c);
    cr_expect(srv_log_contains(&s, "store (pid", "killed by signal 9"),
              "the first store died at the fault point");
    expect_digest(c, digest, "the state of the checkpoint");
    expect_freqs_kept(c, "hot", 20, hot);
    finish(&s, c);
}

Test(maxmemory, volatile_ttl_takes_the_nearest_expiries_and_never_a_key_without_ttl)
{
    srv_t s;
    redisContext *c = start(&s, "--maxmemory-policy volatile-ttl");
    fill(c, "p", 1000, 0, 0);
    fill(c, "short", 1000, 10000, 1);
    fill(c, "long", 1000, 1000000, 1);
    shrink_to(c, 75);
    int p = count_present(c, "p", 1000), sh = count_present(c, "short", 1000),
        lg = count_present(c, "long", 1000);
    cr_expect_eq(p, 1000, "no key without a TTL is evicted");
    cr_expect_lt(sh, 800, "the nearest expiries go (%d short, %d long kept)", sh, lg);
    cr_expect_geq(lg, 900, "the far ones stay (%d short, %d long kept)", sh, lg);
    cr_expect_eq(info_num(c, "evicted_keys"), 3000 - p - sh - lg);
    finish(&s, c);
}

Test(maxmemory, random_policies_evict_and_volatile_random_only_keys_with_ttl)
{
    srv_t s;
    redisContext *c = start(&s, "--maxmemory-policy volatile-random");
    fill(c, "p", 1000, 0, 0);
    fill(c, "v", 1000, 100000, 0);
    shrink_to(c, 80);
    cr_expect_eq(count_present(c, "p", 1000), 1000, "volatile-random: keys with a TTL only");
    int v = count_present(c, "v", 1000);
    cr_expect_lt(v, 1000);
    ok(c, "CONFIG SET maxmemory 0");
    ok(c, "CONFIG SET maxmemory-policy allkeys-random");
    shrink_to(c, 80);
    int p = count_present(c, "p", 1000), v2 = count_present(c, "v", 1000);
    cr_expect_lt(p + v2, 1000 + v, "allkeys-random evicted more");
    cr_expect_eq(info_num(c, "evicted_keys"), 2000 - p - v2);
    finish(&s, c);
}

Test(maxmemory, volatile_policy_with_no_key_with_ttl_refuses_with_oom_and_evicts_nothing)
{
    srv_t s;
    redisContext *c = start(&s, "--maxmemory-policy volatile-lru");
    fill(c, "p", 200, 0, 0);
    ok(c, "CONFIG SET maxmemory 1");
    int i, refused = 0;
    for (i = 0; i < 3000 && !refused; i++) {
        redisReply *r = cmd(c, "SET x%d v", i);
        refused = r->type == REDIS_REPLY_ERROR && !strcmp(r->str, OOM_TEXT);
        freeReplyObject(r);
        if (!refused) usleep(10000);
    }
    cr_expect(refused, "-OOM once the store found nothing to evict");
    cr_expect_eq(count_present(c, "p", 200), 200);
    cr_expect_eq(info_num(c, "evicted_keys"), 0);
    /* A key with a TTL is a candidate again: it goes, the others stay. */
    ok(c, "CONFIG SET maxmemory 0");
    ok(c, "SET t v EX 1000");
    ok(c, "CONFIG SET maxmemory 1");
    for (i = 0; i < 6000 && cmd_int(c, "EXISTS t"); i++)
        usleep(10000);
    cr_expect_eq(cmd_int(c, "EXISTS t"), 0, "the key with a TTL was evicted");
    cr_expect_eq(count_present(c, "p", 200), 200);
    cr_expect_eq(info_num(c, "evicted_keys"), 1);
    ok(c, "CONFIG RESETSTAT");
    cr_expect_eq(info_num(c, "evicted_keys"), 0, "RESETSTAT starts the count again");
    finish(&s, c);
}

Test(maxmemory, replay_after_kill_9_reaches_the_same_state_and_evicted_keys_stay_gone)
{
    srv_t s;
    redisContext *c = start(&s, "--maxmemory-policy allkeys-lru --frontends 2");
    fill(c, "k", 3000, 0, 0);
    shrink_to(c, 50);
    /* No more rounds; then a write of our own after every eviction record
     * already in the ring, read back so the store applied it. */
    ok(c, "CONFIG SET maxmemory 0");
    ok(c, "SET marker 1");
    redisReply *r = cmd(c, "GET marker");
    freeReplyObject(r);
    long long keys = cmd_int(c, "DBSIZE");
    cr_assert_lt(keys, 3001);
    char gone[32] = "";
    for (int i = 0; i < 3000 && !gone[0]; i++)
        if (!cmd_int(c, "EXISTS k:%d", i)) snprintf(gone, sizeof(gone), "k:%d", i);
    cr_assert(gone[0]);
    char digest[64];
    digest_of(c, digest);
    redisFree(c);

    srv_kill_all(&s);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    cr_assert(c);
    expect_digest(c, digest, "replay reaches the state the evictions left");
    cr_expect_eq(cmd_int(c, "DBSIZE"), keys);
    cr_expect_eq(cmd_int(c, "EXISTS %s", gone), 0, "an evicted key stays gone");
    cr_expect_eq(info_num(c, "evicted_keys"), 0, "counted since the start, as Redis");
    finish(&s, c);
}

Test(maxmemory, object_freq_and_idletime_answer_as_redis)
{
    diff_t d;
    rdiff_start_both_with(&d, "--frontends 1", NULL, 1);
    D(&d, "SET", "k", "v");
    DI(&d, "OBJECT", "IDLETIME", "k");
    D(&d, "OBJECT", "FREQ", "k");
    D(&d, "OBJECT", "FREQ", "missing");
    D(&d, "CONFIG", "SET", "maxmemory-policy", "allkeys-lfu");
    D(&d, "OBJECT", "IDLETIME", "k");
    D(&d, "OBJECT", "IDLETIME", "missing");
    D(&d, "SET", "n", "v");
    D(&d, "OBJECT", "FREQ", "n");
    D(&d, "GET", "n");
    D(&d, "OBJECT", "FREQ", "n");
    DS(&d, "CONFIG", "GET", "lfu-*"); /* Redis: in its hash order */
    D(&d, "CONFIG", "SET", "lfu-log-factor", "-1");
    D(&d, "CONFIG", "SET", "lfu-decay-time", "x");
    D(&d, "CONFIG", "SET", "maxmemory-policy", "volatile-lru");
    DI(&d, "OBJECT", "IDLETIME", "n");
    D(&d, "OBJECT", "FREQ", "n");
    rdiff_end_both(&d);
}

Test(maxmemory, clients_unsent_replies_count_in_used_memory_and_against_the_bound)
{
    srv_t s;
    redisContext *c = start(&s, "--frontends 1");
    size_t vlen = 1 << 20;
    char *val = malloc(vlen);
    cr_assert(val);
    memset(val, 'x', vlen);
    redisReply *r = redisCommand(c, "SET big %b", val, vlen);
    cr_assert(r && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    free(val);
    cmd_int(c, "DBSIZE");
    /* The shared memory mapped at start (the ring, channels and tables, at
     * least the 16 MB ring) is in used_memory and not counted against
     * maxmemory (D43). */
    cr_expect_geq(info_num(c, "atticdb_shared_memory"), 16 << 20);
    cr_expect_eq(info_num(c, "mem_not_counted_for_evict"), info_num(c, "atticdb_shared_memory"));
    /* The 1 MB SET may be in the last sum: the base is taken once the
     * sum has seen it gone. */
    cr_expect_eq(clients_settled(c), 0);
    long long base = bounded(c);

    /* A client that asks for 40 MB of replies and reads none of them. */
    redisContext *slow = srv_connect(&s);
    cr_assert(slow);
    for (int i = 0; i < 40; i++)
        redisAppendCommand(slow, "GET big");
    int done = 0;
    while (!done)
        cr_assert_eq(redisBufferWrite(slow, &done), REDIS_OK);
    int i = 0;
    while (info_num(c, "mem_clients_normal") < 8 << 20 && i++ < 3000)
        usleep(10000);
    long long held = info_num(c, "mem_clients_normal");
    cr_expect_geq(held, 8 << 20, "the unsent replies are counted (%lld bytes)", held);
    cr_expect_geq(bounded(c), base + (8 << 20), "and are part of used_memory");

    /* noeviction: the clients' buffers alone put it over the bound. */
    ok(c, "CONFIG SET maxmemory %lld", base + (4 << 20));
    r = cmd(c, "SET k v");
    cr_expect(r->type == REDIS_REPLY_ERROR && !strcmp(r->str, OOM_TEXT), "%s", r->str);
    freeReplyObject(r);

    /* The slow client goes: its buffers with it, and writes are served. */
    redisFree(slow);
    for (i = 0; i < 3000; i++) {
        r = cmd(c, "SET k v");
        int served = r->type == REDIS_REPLY_STATUS;
        freeReplyObject(r);
        if (served) break;
        usleep(10000);
    }
    cr_expect_lt(i, 3000, "served again once the buffers are gone");
    cr_expect_eq(clients_settled(c), 0);
    finish(&s, c);
}

/* A request still being received (a 12 MB value, 9 MB of it sent) is
 * held in its client's query buffer: counted in mem_clients_normal and
 * used_memory, as Redis counts query buffers, and gone once it is run.
 * (With records of 16 MB and big-value-buffer past the value, it is not
 * taken as chunks while it arrives, D48, which would hold a chunk.) */
Test(maxmemory, a_request_being_received_counts_in_the_clients_memory)
{
    srv_t s;
    redisContext *c = start(&s, "--frontends 1 --ring-size 64mb --segment-size 128mb "
                                "--big-value-buffer 64mb");
    cr_expect_eq(clients_settled(c), 0);
    long long used0 = info_num(c, "used_memory");
    redisContext *sender = srv_connect(&s); /* its socket, written by hand */
    cr_assert(sender);
    int fd = sender->fd;
    const char *head = "*3\r\n$3\r\nSET\r\n$1\r\nq\r\n$12582912\r\n";
    cr_assert_eq(write(fd, head, strlen(head)), (ssize_t)strlen(head));
    size_t chunk = 1 << 20;
    char *part = malloc(chunk);
    cr_assert(part);
    memset(part, 'q', chunk);
    for (int i = 0; i < 9; i++)
        for (size_t off = 0; off < chunk;) {
            ssize_t n = write(fd, part + off, chunk - off);
            cr_assert(n > 0);
            off += (size_t)n;
        }
    int i = 0;
    while (info_num(c, "mem_clients_normal") < 8 << 20 && i++ < 3000)
        usleep(10000);
    cr_expect_geq(info_num(c, "mem_clients_normal"), 8 << 20);
    cr_expect_geq(info_num(c, "used_memory"), used0 + (8 << 20));
    /* The rest: the SET runs, the buffer goes. */
    for (int k = 0; k < 3; k++)
        for (size_t off = 0; off < chunk;) {
            ssize_t n = write(fd, part + off, chunk - off);
            cr_assert(n > 0);
            off += (size_t)n;
        }
    cr_assert_eq(write(fd, "\r\n", 2), 2);
    char reply[16] = "";
    cr_assert_eq(read(fd, reply, 5), 5);
    cr_expect_str_eq(reply, "+OK\r\n");
    free(part);
    cr_expect_eq(clients_settled(c), 0);
    redisFree(sender);
    finish(&s, c);
}

Test(maxmemory, eviction_tenacity_is_redis_setting)
{
    diff_t d;
    rdiff_start_both_with(&d, "--frontends 1", NULL, 1);
    D(&d, "CONFIG", "GET", "maxmemory-eviction-tenacity");
    D(&d, "CONFIG", "SET", "maxmemory-eviction-tenacity", "101");
    D(&d, "CONFIG", "SET", "maxmemory-eviction-tenacity", "-1");
    D(&d, "CONFIG", "SET", "maxmemory-eviction-tenacity", "abc");
    D(&d, "CONFIG", "SET", "maxmemory-eviction-tenacity", "0");
    D(&d, "CONFIG", "GET", "maxmemory-eviction-tenacity");
    D(&d, "CONFIG", "SET", "maxmemory-eviction-tenacity", "100");
    D(&d, "CONFIG", "GET", "maxmemory-eviction-tenacity");
    rdiff_end_both(&d);
}

/* A field of an INFO section from a raw reply of the differential runner;
 * -1 when missing. */
static long long wire_info_field(wire_conn_t *c, const char *section, const char *field)
{
    const char *r = ONE(c, "INFO", section);
    char key[128];
    snprintf(key, sizeof(key), "\r\n%s:", field);
    const char *p = strstr(r, key);
    return p ? atoll(p + strlen(key)) : -1;
}

static long long wire_info_num(wire_conn_t *c, const char *field)
{
    return wire_info_field(c, "stats", field);
}

/* Poll both servers (PING between, since Redis looks at its memory only
 * when a command comes) until field satisfies above (> 0) or not (== 0);
 * 60 s at most. Returns 1 when both did. */
static int both_exceeded(diff_t *d, const char *field, int above)
{
    for (int i = 0; i < 6000; i++) {
        ONE(d->r[0], "PING");
        ONE(d->a[0], "PING");
        long long r = wire_info_num(d->r[0], field), a = wire_info_num(d->a[0], field);
        if (above ? r > 0 && a > 0 : r == 0 && a == 0) return 1;
        usleep(10000);
    }
    return 0;
}

Test(maxmemory, eviction_exceeded_time_counts_spells_over_the_bound_as_redis)
{
    diff_t d;
    rdiff_start_both_with(&d, "--frontends 1", NULL, 1);
    cr_expect_eq(wire_info_num(d.r[0], "total_eviction_exceeded_time"), 0);
    cr_expect_eq(wire_info_num(d.a[0], "total_eviction_exceeded_time"), 0);
    cr_expect_eq(wire_info_num(d.a[0], "current_eviction_exceeded_time"), 0);
    D(&d, "SET", "a", "1");
    /* Over the bound under noeviction: a spell runs (Redis' EVICT_FAIL). */
    D(&d, "CONFIG", "SET", "maxmemory", "1");
    cr_assert(both_exceeded(&d, "current_eviction_exceeded_time", 1), "no spell began");
    /* Under the bound again: the spell ends, its time stays in the total.
     * (Redis keeps counting after maxmemory 0, which it no longer checks;
     * a large bound ends the spell on both.) */
    D(&d, "CONFIG", "SET", "maxmemory", "1gb");
    cr_assert(both_exceeded(&d, "current_eviction_exceeded_time", 0), "the spell never ended");
    long long total = wire_info_num(d.a[0], "total_eviction_exceeded_time");
    cr_expect_gt(total, 0, "the ended spell is in the total");
    cr_expect_gt(wire_info_num(d.r[0], "total_eviction_exceeded_time"), 0);
    cr_expect_eq(wire_info_num(d.a[0], "total_eviction_exceeded_time"), total,
                 "no time is added while under the bound");
    /* A second spell adds to the total. */
    D(&d, "CONFIG", "SET", "maxmemory", "1");
    cr_assert(both_exceeded(&d, "current_eviction_exceeded_time", 1), "no second spell");
    D(&d, "CONFIG", "SET", "maxmemory", "1gb");
    cr_assert(both_exceeded(&d, "current_eviction_exceeded_time", 0));
    cr_expect_gt(wire_info_num(d.a[0], "total_eviction_exceeded_time"), total);
    D(&d, "CONFIG", "RESETSTAT");
    cr_expect_eq(wire_info_num(d.r[0], "total_eviction_exceeded_time"), 0);
    cr_expect_eq(wire_info_num(d.a[0], "total_eviction_exceeded_time"), 0);
    cr_expect_eq(wire_info_num(d.a[0], "current_eviction_exceeded_time"), 0);
    rdiff_end_both(&d);
}

/* INFO's memory figures add up as redis-server's do: used_memory is the
 * overhead (the startup memory included) plus the dataset, and what is
 * not counted for eviction is part of used_memory. Here the shared memory
 * is both used_memory_startup and mem_not_counted_for_evict (D43). */
static void memory_adds_up(wire_conn_t *c, int atticdb)
{
    const char *r = ONE(c, "INFO", "memory");
    long long v[5];
    static const char *const f[5] = {"used_memory", "used_memory_overhead", "used_memory_startup",
                                     "used_memory_dataset", "mem_not_counted_for_evict"};
    for (int i = 0; i < 5; i++) {
        char key[64];
        snprintf(key, sizeof(key), "\r\n%s:", f[i]);
        const char *p = strstr(r, key);
        cr_assert(p, "%s: no %s", atticdb ? "atticdb" : "redis", f[i]);
        v[i] = atoll(p + strlen(key));
    }
    cr_expect_eq(v[0], v[1] + v[3], "%s: used %lld = overhead %lld + dataset %lld",
                 atticdb ? "atticdb" : "redis", v[0], v[1], v[3]);
    cr_expect(v[2] > 0 && v[2] <= v[1], "startup %lld within overhead %lld", v[2], v[1]);
    cr_expect(v[4] >= 0 && v[4] < v[0], "not counted %lld within used %lld", v[4], v[0]);
    if (atticdb) cr_expect_eq(v[4], v[2], "the shared memory is both");
}

Test(maxmemory, used_memory_counts_the_shared_memory_and_adds_up_as_redis)
{
    diff_t d;
    rdiff_start_both_with(&d, "--frontends 1", NULL, 1);
    D(&d, "SET", "a", "1");
    D(&d, "DBSIZE");
    memory_adds_up(d.r[0], 0);
    memory_adds_up(d.a[0], 1);
    rdiff_end_both(&d);
}

/* The server's child with this title (srv_find_children: the master's
 * children only, so not a checkpoint child of the store). */
static pid_t child_of_master(const srv_t *s, const char *title)
{
    pid_t pid = 0;
    cr_assert_eq(srv_wait_children(s, title, &pid, 1, 1), 1, "no %s process", title);
    return pid;
}

/*
 * maxmemory-eviction-tenacity's yield (D43): at tenacity 0 a round may
 * take 16 victims, and a bound that needs hundreds of evictions makes the
 * first round stop there and leave the rest to later rounds. Made
 * visible without timing: with the logger stopped the round's records
 * cannot be applied, so no second round starts, the spell over the bound
 * goes on (current_eviction_exceeded_time > 0) and no key is gone yet;
 * with the store then stopped and the logger let go, the log gains
 * exactly the first round's 16 records; with the store let go the later
 * rounds bring memory under the bound and the spell ends (back to 0).
 */
Test(maxmemory, a_round_at_tenacity_0_yields_after_16_victims_and_later_rounds_finish)
{
    srv_t s;
    redisContext *c = start(&s, "--maxmemory-policy allkeys-random --frontends 1");
    fill(c, "k", 2000, 0, 0);
    cr_assert_eq(cmd_int(c, "DBSIZE"), 2000);
    ok(c, "CONFIG SET maxmemory-eviction-tenacity 0");
    long long records = info_num(c, "atticdb_records"), bound = bounded(c) / 2;
    cr_assert_gt(records, 0);
    pid_t logger = child_of_master(&s, "atticdb-server: logger");
    pid_t store = child_of_master(&s, "atticdb-server: store");

    cr_assert_eq(kill(logger, SIGSTOP), 0);
    ok(c, "CONFIG SET maxmemory %lld", bound);
    int i = 0;
    while (info_num(c, "current_eviction_exceeded_time") <= 0 && i++ < 6000)
        usleep(10000);
    cr_expect_gt(info_num(c, "current_eviction_exceeded_time"), 0, "a spell over the bound runs");
    cr_expect_eq(info_num(c, "evicted_keys"), 0, "nothing is applied while the logger waits");

    cr_assert_eq(kill(store, SIGSTOP), 0);
    cr_assert_eq(kill(logger, SIGCONT), 0);
    for (i = 0; info_num(c, "atticdb_records") < records + 16 && i < 6000; i++)
        usleep(10000);
    freeReplyObject(
        cmd(c, "PING")); /* one more turn of the frontend: the logger's count is settled */
    cr_expect_eq(info_num(c, "atticdb_records") - records, 16,
                 "the first round wrote 16 victims and yielded");

    cr_assert_eq(kill(store, SIGCONT), 0);
    for (i = 0;
         (info_num(c, "current_eviction_exceeded_time") != 0 || bounded(c) > bound) && i < 6000;
         i++)
        usleep(10000);
    cr_expect_eq(info_num(c, "current_eviction_exceeded_time"), 0, "the spell ended");
    cr_expect_leq(bounded(c), bound, "later rounds brought memory under the bound");
    long long evicted = info_num(c, "evicted_keys");
    cr_expect_gt(evicted, 16, "the rest was evicted later (%lld keys)", evicted);
    cr_expect_eq(evicted, 2000 - cmd_int(c, "DBSIZE"));
    cr_expect_gt(info_num(c, "total_eviction_exceeded_time"), 0, "the spell is in the total");
    finish(&s, c);
}

/* MEMORY STATS' field names in order ("db.0.overhead.hashtable.main" for
 * a database's), into out as one line each; its top-level integer fields
 * into v by name (names[], -1 when missing). */
static void memory_stats_of(wire_conn_t *c, wire_buf_t *out, const char *const *names, int n,
                            long long *v)
{
    const char *r = ONE(c, "MEMORY", "STATS");
    wire_val_t val;
    cr_assert_eq(wire_parse(r, strlen(r), &val), 0, "MEMORY STATS: %s", r);
    cr_assert(val.type == '*' && val.n % 2 == 0);
    for (int k = 0; k < n; k++)
        v[k] = -1;
    for (long long i = 0; i + 1 < val.n; i += 2) {
        const wire_val_t *name = &val.elem[i], *x = &val.elem[i + 1];
        cr_assert_eq(name->type, '$');
        if (x->type == '*') {
            for (long long j = 0; j + 1 < x->n; j += 2)
                wire_buf_printf(out, "%.*s.%.*s\n", (int)name->len, name->str, (int)x->elem[j].len,
                                x->elem[j].str);
            continue;
        }
        wire_buf_printf(out, "%.*s\n", (int)name->len, name->str);
        for (int k = 0; k < n; k++)
            if (x->type == ':' && strlen(names[k]) == name->len &&
                !memcmp(names[k], name->str, name->len))
                v[k] = x->integer;
    }
    wire_val_free(&val);
}

static long long wire_info_memory(wire_conn_t *c, const char *field)
{
    return wire_info_field(c, "memory", field);
}

/* MEMORY STATS has redis-server 7.0.15's fields in its order, and counts
 * what INFO's used_memory counts (D49): total.allocated is used_memory,
 * startup.allocated used_memory_startup, overhead.total and dataset.bytes
 * INFO's overhead and dataset. */
Test(maxmemory, memory_stats_has_redis_fields_and_counts_what_used_memory_counts)
{
    diff_t d;
    rdiff_start_both_with(&d, "--frontends 1", NULL, 1);
    D(&d, "SET", "a", "1");
    D(&d, "SET", "b", "a-value-longer-than-the-inline-prefix-of-an-entry");
    D(&d, "SELECT", "3");
    D(&d, "SET", "c", "1");
    D(&d, "SELECT", "0");
    D(&d, "DBSIZE");
    static const char *const names[] = {"total.allocated", "startup.allocated", "overhead.total",
                                        "dataset.bytes",   "clients.normal",    "peak.allocated",
                                        "keys.count"};
    enum { TOTAL, STARTUP, OVERHEAD, DATASET, CLIENTS, PEAK, KEYS, N };
    wire_buf_t fields[2] = {{0}, {0}};
    long long v[N];
    memory_stats_of(d.r[0], &fields[0], names, N, v);
    cr_expect_eq(v[KEYS], 3, "redis");
    memory_stats_of(d.a[0], &fields[1], names, N, v);
    /* AtticDB's figures hold still between two commands (Redis' move with
     * each reply it builds), except the clients' buffers. */
    wire_conn_t *a = d.a[0];
    long long used = wire_info_memory(a, "used_memory"),
              clients = wire_info_memory(a, "mem_clients_normal");
    cr_expect_eq(v[TOTAL] - v[CLIENTS], used - clients, "total.allocated %lld, used_memory %lld",
                 v[TOTAL], used);
    cr_expect_eq(v[STARTUP], wire_info_memory(a, "used_memory_startup"));
    cr_expect_eq(v[OVERHEAD] - v[CLIENTS], wire_info_memory(a, "used_memory_overhead") - clients);
    cr_expect_eq(v[DATASET], wire_info_memory(a, "used_memory_dataset"));
    cr_expect_eq(v[TOTAL], v[OVERHEAD] + v[DATASET], "total = overhead + dataset");
    cr_expect(v[STARTUP] > 0 && v[STARTUP] < v[OVERHEAD], "startup within overhead");
    cr_expect_geq(v[PEAK], v[TOTAL]);
    cr_expect_eq(v[KEYS], 3);
    cr_expect_str_eq(fields[1].p, fields[0].p, "the field names and order of redis-server");
    wire_buf_free(&fields[0]);
    wire_buf_free(&fields[1]);
    rdiff_end_both(&d);
}
