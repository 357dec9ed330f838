/*
 * test_pzset.c - large sorted sets on disk (D65), on the real server: a
 * sorted set of a million members (scores with ties, some members long)
 * and a lexicographic one (every score 0) are written beside a real
 * redis-server and compared byte for byte once the store has put both
 * parts into pages: ranges by rank, score and lex both ways, with LIMIT
 * and WITHSCORES, ZRANK, ZSCORE, ZCOUNT, ZLEXCOUNT, pops (BZPOPMIN too),
 * rescoring and removals inside pages, ZREMRANGEBYSCORE/RANK/LEX,
 * ZUNIONSTORE, ZINTERSTORE, ZRANGESTORE, SORT, DUMP restored both ways,
 * a whole ZRANGE in parts as of its request while writes go on;
 * the state survives SIGKILL of the whole group and a clean restart from
 * a checkpoint with the same DEBUG DIGEST; and the store killed at each
 * new fault point ("zsetpaged", "zsetwritten", "zsetdirty") loses nothing
 * acknowledged. No timed assertions.
 */
#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "paged_helpers.h"
#include "redis_diff.h"

#define ARGS                                                                                       \
    "--frontends 2 --collection-paging-entries 1000 --segment-size 8mb --ring-size 2mb "           \
    "--checkpoint-bytes 32mb"

TestSuite(pzset, .timeout = 1200);

/* Members of "z" (a million; ATTIC_PZSET_N, at least 100,000, makes it
 * fewer: .ci/run's sanitizer pass) and of "lex" (three tenths of that).
 * The windows below name ranks of a million; those past a smaller set are
 * empty on both sides, and same_scaled asks the same places by fraction. */
static long pz_n(void)
{
    const char *e = getenv("ATTIC_PZSET_N");
    long n = e ? atol(e) : 1000000;
    return n >= 100000 ? n : 100000;
}

/* ph_same of the command fmt makes (printf-style). */
static void same_fmt(wire_conn_t *a, wire_conn_t *b, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void same_fmt(wire_conn_t *a, wire_conn_t *b, const char *fmt, ...)
{
    char cmd[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    ph_same(a, b, cmd);
}

/* Member i of "z": short mostly, every 7th 40 bytes; its score has ties
 * and halves. Member i of "lex": zero-padded, score 0. */
static int member_of(int lex, long i, char *out, size_t n)
{
    if (lex) return snprintf(out, n, "w%08ld", (i * 7919) % 1000003);
    return i % 7 == 0 ? snprintf(out, n, "member-%ld-%030d", i, 0) : snprintf(out, n, "m%ld", i);
}

static int score_of(int lex, long i, char *out, size_t n)
{
    if (lex) return snprintf(out, n, "0");
    long v = (i * 104729) % 200000;
    return v % 2 ? snprintf(out, n, "%ld.5", v / 2) : snprintf(out, n, "%ld", v / 2);
}

/* ZADD of members [from, to) in commands of 1000 pairs, pipelined, to c
 * and, when not NULL, r; every reply an integer. */
static void zadd_range(redisContext *c, redisContext *r, const char *key, int lex, long from,
                       long to)
{
    static char mb[1000][64], sb[1000][32];
    const char *argv[2 + 2000];
    size_t lens[2 + 2000];
    for (int side = 0; side < 2; side++) {
        redisContext *x = side ? r : c;
        if (!x) continue;
        long sent = 0;
        for (long at = from; at < to; at += 1000) {
            long n = to - at < 1000 ? to - at : 1000;
            argv[0] = "ZADD";
            lens[0] = 4;
            argv[1] = key;
            lens[1] = strlen(key);
            for (long k = 0; k < n; k++) {
                lens[2 + 2 * k] = (size_t)score_of(lex, at + k, sb[k], sizeof(sb[k]));
                argv[2 + 2 * k] = sb[k];
                lens[3 + 2 * k] = (size_t)member_of(lex, at + k, mb[k], sizeof(mb[k]));
                argv[3 + 2 * k] = mb[k];
            }
            redisAppendCommandArgv(x, (int)(2 + 2 * n), argv, lens);
            if (++sent % 64 == 0 || at + 1000 >= to)
                while (sent) {
                    redisReply *rep;
                    cr_assert_eq(redisGetReply(x, (void **)&rep), REDIS_OK, "ZADD reply");
                    cr_assert_eq(rep->type, REDIS_REPLY_INTEGER, "%s", rep->str ? rep->str : "");
                    freeReplyObject(rep);
                    sent--;
                }
        }
    }
}

/* DEBUG PAGED key of a sorted set: the order's seven figures, then the
 * scores' seven (digest.c). */
static void paged_stats(redisContext *c, const char *key, long long out[14])
{
    redisReply *r = redisCommand(c, "DEBUG PAGED %s", key);
    cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 14, "DEBUG PAGED %s", key);
    for (int i = 0; i < 14; i++)
        out[i] = r->element[i]->integer;
    freeReplyObject(r);
}

static int pager_done(const long long st[14])
{
    return st[0] && st[4] <= 5 * 128 && st[7] && st[11] <= 1024 + st[13] / 32;
}

/* Wait until the pager is done with key: the order's RAM holds its two
 * end chunks and less than a page's worth between them, the scores'
 * overlay is within its bound. */
static void wait_paged(redisContext *c, const char *key, const char *when)
{
    long long st[14] = {0};
    time_t deadline = time(NULL) + 300;
    do {
        paged_stats(c, key, st);
        if (pager_done(st)) break;
        usleep(50000);
    } while (time(NULL) < deadline);
    cr_assert(pager_done(st),
              "%s: %s: %lld of %lld elements still in RAM, %lld order pages; %lld score overlay "
              "entries, %lld score pages",
              when, key, st[4], st[6], st[2], st[11], st[9]);
}

static const char *const windows[] = {"ZCARD z",
                                      "ZRANGE z 0 99 WITHSCORES",
                                      "ZRANGE z -100 -1 WITHSCORES",
                                      "ZRANGE z 500000 500199",
                                      "ZRANGE z 123456 124999 WITHSCORES",
                                      "ZREVRANGE z 0 99 WITHSCORES",
                                      "ZREVRANGE z 654321 655000",
                                      "ZRANGE z 5000000 5000010",
                                      "ZRANGEBYSCORE z 1000 1100 WITHSCORES",
                                      "ZRANGEBYSCORE z (1000 1100.5",
                                      "ZRANGEBYSCORE z -inf 3",
                                      "ZRANGEBYSCORE z 99990 +inf WITHSCORES",
                                      "ZRANGEBYSCORE z 40000 +inf LIMIT 1000 50",
                                      "ZREVRANGEBYSCORE z 77777 77000 WITHSCORES",
                                      "ZREVRANGEBYSCORE z +inf -inf LIMIT 300000 20",
                                      "ZRANGE z 50000 (50010 BYSCORE REV",
                                      "ZRANGE z (60000 60100 BYSCORE LIMIT 5 30 WITHSCORES",
                                      "ZCOUNT z 1000 2000",
                                      "ZCOUNT z (1000 (2000",
                                      "ZCOUNT z -inf +inf",
                                      "ZRANK z m1",
                                      "ZRANK z m999999",
                                      "ZRANK z member-700000-000000000000000000000000000000",
                                      "ZREVRANK z m333333",
                                      "ZRANK z nothere",
                                      "ZSCORE z m424242",
                                      "ZSCORE z member-7-000000000000000000000000000000",
                                      "ZSCORE z nothere",
                                      "ZMSCORE z m1 m2 nothere m500001",
                                      "OBJECT ENCODING z",
                                      "TYPE z",
                                      "ZCARD lex",
                                      "ZRANGEBYLEX lex [w00100000 [w00100500",
                                      "ZRANGEBYLEX lex - (w00000200",
                                      "ZRANGEBYLEX lex (w00900000 + LIMIT 10 20",
                                      "ZREVRANGEBYLEX lex [w00600000 (w00599000",
                                      "ZREVRANGEBYLEX lex + - LIMIT 250000 30",
                                      "ZRANGE lex [w00700000 (w00700300 BYLEX",
                                      "ZRANGE lex (w00500000 [w00499000 BYLEX REV LIMIT 2 40",
                                      "ZLEXCOUNT lex [w00100000 [w00200000",
                                      "ZLEXCOUNT lex - +",
                                      "ZRANK lex w00123457",
                                      "ZRANGE lex 150000 150099",
                                      "OBJECT ENCODING lex"};

static void same_windows(wire_conn_t *a, wire_conn_t *b)
{
    ph_same_each(a, b, windows, sizeof(windows) / sizeof(windows[0]));
    long n = pz_n();
    same_fmt(a, b, "ZRANGE z %ld %ld", n / 2, n / 2 + 199);
    same_fmt(a, b, "ZREVRANGE z %ld %ld WITHSCORES", n * 65 / 100, n * 65 / 100 + 700);
    same_fmt(a, b, "ZRANK z m%ld", n - 1);
    same_fmt(a, b, "ZREVRANK z m%ld", n / 3);
    same_fmt(a, b, "ZRANGE lex %ld %ld", n * 3 / 20, n * 3 / 20 + 99);
}

Test(pzset, a_million_members_match_redis_in_pages)
{
    srv_t s;
    wire_redis_t ref;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    cr_assert_eq(wire_redis_start(&ref, NULL), 0, "redis-server did not start");
    redisContext *c = srv_connect(&s), *r = redisConnect("127.0.0.1", ref.port);
    cr_assert(c && r && !r->err);
    long n = pz_n();
    zadd_range(c, r, "z", 0, 0, n);
    zadd_range(c, r, "lex", 1, 0, n * 3 / 10);
    wait_paged(c, "z", "after a million ZADDs");
    wait_paged(c, "lex", "after 300,000 ZADDs of score 0");
    wire_conn_t *a = wire_open(s.port, 60), *b = wire_open(ref.port, 60);
    cr_assert(a && b);
    same_windows(a, b);
    /* Pops from both ends read through pages. */
    ph_same(a, b, "ZPOPMIN z 300");
    ph_same(a, b, "ZPOPMAX z 300");
    ph_same(a, b, "ZPOPMIN z");
    ph_same(a, b, "BZPOPMAX z 1");
    ph_same(a, b, "ZMPOP 2 nothere lex MIN COUNT 5");
    /* Writes inside pages: new scores, removals, new members. */
    ph_same(a, b, "ZADD z 123.25 m400000 -5 m400001 777777 newmember");
    ph_same(a, b, "ZADD z XX CH 1 m600000 2 m600001 3 absent");
    ph_same(a, b, "ZADD z NX 1 m600002 4 another");
    ph_same(a, b, "ZADD z GT 0 m700000 99999999 m700001");
    ph_same(a, b, "ZINCRBY z 2.5 m250001");
    ph_same(a, b, "ZREM z m250002 m250003 nothere");
    ph_same(a, b, "ZADD lex 0 w00400000x 0 a-first 0 zzzz-last");
    ph_same(a, b, "ZREM lex w00400000 w00123457");
    same_windows(a, b);
    ph_same(a, b, "ZRANGE z 399990 400010 WITHSCORES");
    ph_same(a, b, "ZRANGEBYSCORE z 123 124 WITHSCORES");
    /* Ranges removed from inside the pages. */
    ph_same(a, b, "ZREMRANGEBYSCORE z 30000 30500");
    same_fmt(a, b, "ZREMRANGEBYRANK z %ld %ld", n * 8 / 10, n * 8 / 10 + 1999);
    ph_same(a, b, "ZREMRANGEBYLEX lex [w00300000 (w00301000");
    same_windows(a, b);
    /* The STORE forms and SORT over paged inputs. */
    ph_same(a, b, "ZUNIONSTORE u 2 z lex WEIGHTS 2 1 AGGREGATE SUM");
    ph_same(a, b, "ZINTERSTORE i 2 z u AGGREGATE MAX");
    ph_same(a, b, "ZDIFFSTORE d 2 z u");
    ph_same(a, b, "ZRANGESTORE rs z 100000 (100200 BYSCORE");
    ph_same(a, b, "ZRANGE u 0 99 WITHSCORES");
    same_fmt(a, b, "ZRANGE u %ld %ld WITHSCORES", n - 1000, n - 901);
    ph_same(a, b, "ZREVRANGE i 0 49 WITHSCORES");
    ph_same(a, b, "ZCARD i");
    ph_same(a, b, "ZCARD d");
    ph_same(a, b, "ZRANGE rs 0 -1 WITHSCORES");
    ph_same(a, b, "ZINTERCARD 2 z lex");
    ph_same(a, b, "SORT z BY nosort LIMIT 1000 20");
    ph_same(a, b, "SORT lex ALPHA LIMIT 0 20 DESC");
    ph_same(a, b, "OBJECT ENCODING u");
    /* DUMP of the paged sorted set restores into redis-server equal. */
    redisReply *d = redisCommand(c, "DUMP z");
    cr_assert(d && d->type == REDIS_REPLY_STRING);
    redisReply *ok = redisCommand(r, "RESTORE zcopy 0 %b", d->str, d->len);
    cr_assert(ok && ok->type == REDIS_REPLY_STATUS, "RESTORE: %s", ok ? ok->str : "");
    freeReplyObject(ok);
    freeReplyObject(d);
    redisReply *n1 = redisCommand(r, "ZCARD zcopy"), *n2 = redisCommand(r, "ZCARD z");
    cr_assert_eq(n1->integer, n2->integer, "the restored copy is as large");
    freeReplyObject(n1);
    freeReplyObject(n2);
    n1 = redisCommand(r, "ZRANGE zcopy 444444 444454 WITHSCORES");
    n2 = redisCommand(r, "ZRANGE z 444444 444454 WITHSCORES");
    cr_assert_eq(n1->elements, n2->elements);
    for (size_t i = 0; i < n1->elements; i++)
        cr_assert_str_eq(n1->element[i]->str, n2->element[i]->str);
    freeReplyObject(n1);
    freeReplyObject(n2);
    /* Redis's DUMP of its sorted set restored here: equal, and paged. */
    d = redisCommand(r, "DUMP lex");
    cr_assert(d && d->type == REDIS_REPLY_STRING);
    ok = redisCommand(c, "RESTORE lexcopy 0 %b", d->str, d->len);
    cr_assert(ok && ok->type == REDIS_REPLY_STATUS, "RESTORE: %s", ok ? ok->str : "");
    freeReplyObject(ok);
    ok = redisCommand(r, "RESTORE lexcopy 0 %b", d->str, d->len);
    freeReplyObject(ok);
    freeReplyObject(d);
    wait_paged(c, "lexcopy", "a restored sorted set");
    ph_same(a, b, "ZRANGEBYLEX lexcopy [w00100000 [w00100500");
    ph_same(a, b, "ZRANGE lexcopy 200000 200099");
    ph_same(a, b, "ZRANK lexcopy w00123458");
    /* A long ZRANGE goes in parts as of its request: asked, then most of
     * the sorted set removed before the reply is read (D65). */
    {
        const char *argv[] = {"ZRANGE", "z", "0", "-1", "WITHSCORES"};
        size_t lens[] = {6, 1, 1, 2, 10}, lb, la;
        char *want = wire_cmd(b, 5, argv, lens, &lb);
        wire_conn_t *slow = wire_open(s.port, 120);
        cr_assert(slow && wire_send(slow, 5, argv, lens) == 0);
        usleep(200000);
        same_fmt(a, b, "ZREMRANGEBYRANK z 0 %ld", n * 9 / 10 - 1);
        ph_same(a, b, "ZADD z 5 after-the-request");
        char *got = wire_reply(slow, &la);
        cr_assert(got && la == lb && memcmp(got, want, la) == 0,
                  "ZRANGE 0 -1 as asked for: %zu bytes, redis's %zu", la, lb);
        free(got);
        free(want);
        wire_close(slow);
        ph_same(a, b, "ZRANGE z 0 -1 WITHSCORES");
    }
    /* The state survives SIGKILL of the group and a clean restart. */
    char d1[64], d2[64];
    ph_digest(c, d1);
    wire_close(a);
    redisFree(c);
    srv_kill_all(&s);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    ph_digest(c, d2);
    cr_assert_str_eq(d1, d2, "the same sorted sets after SIGKILL and a restart");
    a = wire_open(s.port, 60);
    same_windows(a, b);
    wire_close(a);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0); /* a clean stop writes a checkpoint */
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    ph_digest(c, d2);
    cr_assert_str_eq(d1, d2, "the same sorted sets after a clean restart from a checkpoint");
    long long st[14];
    paged_stats(c, "z", st);
    cr_assert(st[0] && st[2] > n / 10000 && st[7] && st[9] > n / 10000,
              "still in pages: %lld and %lld", st[2], st[9]);
    a = wire_open(s.port, 60);
    same_windows(a, b);
    /* DEL is O(pages). */
    ph_same(a, b, "DEL z u i");
    ph_same(a, b, "EXISTS z");
    wire_close(a);
    wire_close(b);
    redisFree(c);
    redisFree(r);
    wire_redis_stop(&ref);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* The store killed at one point of paging; nothing acknowledged is lost,
 * and the sorted set pages again. */
typedef struct zadd_rounds {
    int writes_inside;
    long added;
} zadd_rounds_t;

static void zadd_round(redisContext *c, int i, void *arg)
{
    zadd_rounds_t *w = arg;
    zadd_range(c, NULL, "z", 0, w->added, w->added + 5000);
    w->added += 5000;
    if (w->writes_inside && w->added > 20000) {
        /* A new score inside the paged part: a page copied into RAM. */
        redisReply *x = redisCommand(c, "ZADD z %d.75 m%ld", i, w->added / 3);
        if (x) freeReplyObject(x);
    }
}

static void killed_at(const char *fault, int writes_inside)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, fault, ARGS), 0, "%s", fault);
    zadd_rounds_t w = {writes_inside, 0};
    redisContext *c = ph_write_until_store_killed(&s, fault, 60, zadd_round, &w);
    long added = w.added;
    redisReply *n = redisCommand(c, "ZCARD z");
    cr_assert(n && n->type == REDIS_REPLY_INTEGER);
    /* Every ZADD acknowledged is there (a batch cut by the kill may be
     * missing: its replies never came). */
    cr_assert_geq(n->integer, added - 5000, "%s: %lld members of %ld added", fault, n->integer,
                  added);
    freeReplyObject(n);
    wait_paged(c, "z", fault);
    ph_same_after_kill(&s, c, fault);
}

Test(pzset, store_killed_after_applying_a_sorted_sets_page_record)
{
    killed_at("store.zsetpaged:20:KILL", 0);
}

Test(pzset, store_killed_with_a_sorted_sets_page_record_in_the_ring)
{
    killed_at("store.zsetwritten:20:KILL", 0);
}

Test(pzset, store_killed_after_a_write_copied_a_page_into_ram)
{
    killed_at("store.zsetdirty:2:KILL", 1);
}
