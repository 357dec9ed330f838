/*
 * test_plist.c - large lists on disk (D63), on the real server: a list of
 * a million elements is written beside a real redis-server and compared
 * byte for byte (LRANGE windows, LINDEX at both ends and inside, pops,
 * LTRIM, LINSERT, LREM, LSET, LPOS, BLPOP, LMOVE, DUMP restored into
 * redis-server) once the store has put it into pages; it survives SIGKILL
 * of the whole group and a clean restart from a checkpoint with the same
 * DEBUG DIGEST; and the store killed at each new fault point ("listpaged",
 * "listpagewritten", "listdirty") loses nothing acknowledged.
 */
#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "paged_helpers.h"
#include "redis_diff.h"

#define ARGS                                                                                       \
    "--frontends 2 --collection-paging-entries 1000 --segment-size 8mb --ring-size 2mb "           \
    "--checkpoint-bytes 32mb"

TestSuite(plist, .timeout = 900);

/* Element i: short (inline) mostly, every 7th long enough to be a log
 * extent until it is in a page. */
static int elem_of(long i, char *out, size_t n)
{
    return i % 7 == 0 ? snprintf(out, n, "element-%ld-%040d", i, 0) : snprintf(out, n, "e%ld", i);
}

/* RPUSH (or LPUSH) of elements [from, to) in commands of 1000, pipelined,
 * to c and, when not NULL, r; every reply an integer. */
static void push_range(redisContext *c, redisContext *r, const char *cmd, long from, long to)
{
    for (int side = 0; side < 2; side++) {
        redisContext *x = side ? r : c;
        if (!x) continue;
        long sent = 0;
        for (long at = from; at < to; at += 1000) {
            long n = to - at < 1000 ? to - at : 1000;
            const char **argv = malloc((size_t)(n + 2) * sizeof(*argv));
            size_t *lens = malloc((size_t)(n + 2) * sizeof(*lens));
            static char bufs[1000][64];
            argv[0] = cmd;
            lens[0] = strlen(cmd);
            argv[1] = "l";
            lens[1] = 1;
            for (long k = 0; k < n; k++) {
                lens[2 + k] = (size_t)elem_of(at + k, bufs[k], sizeof(bufs[k]));
                argv[2 + k] = bufs[k];
            }
            redisAppendCommandArgv(x, (int)n + 2, argv, lens);
            free(argv);
            free(lens);
            if (++sent % 64 == 0 || at + 1000 >= to)
                while (sent) {
                    redisReply *rep;
                    cr_assert_eq(redisGetReply(x, (void **)&rep), REDIS_OK, "push reply");
                    cr_assert_eq(rep->type, REDIS_REPLY_INTEGER, "%s", rep->str ? rep->str : "");
                    freeReplyObject(rep);
                    sent--;
                }
        }
    }
}

static void paged_stats(redisContext *c, long long out[7])
{
    ph_paged_stats(c, "l", out);
}

/* Wait until the pager is done: in RAM only the two end chunks and fewer
 * than a page's worth (and 4 chunks) between them (core/list_page.c). */
static void wait_paged(redisContext *c, const char *when)
{
    long long st[7] = {0};
    time_t deadline = time(NULL) + 120;
    do {
        paged_stats(c, st);
        if (st[0] && st[4] <= 5 * 128) break;
        usleep(50000);
    } while (time(NULL) < deadline);
    cr_assert(st[0] && st[4] <= 5 * 128, "%s: %lld of %lld elements still in RAM, %lld pages", when,
              st[4], st[6], st[2]);
}

static const char *const windows[] = {"LRANGE l 0 99",
                                      "LRANGE l -100 -1",
                                      "LRANGE l 500000 500199",
                                      "LRANGE l 123456 124999",
                                      "LRANGE l -700000 -699000",
                                      "LINDEX l 0",
                                      "LINDEX l -1",
                                      "LINDEX l 1",
                                      "LINDEX l -2",
                                      "LINDEX l 333333",
                                      "LINDEX l -654321",
                                      "LINDEX l 5000000",
                                      "LLEN l",
                                      "LPOS l e700001",
                                      "LPOS l e3 RANK -1",
                                      "LPOS l e10 COUNT 0 MAXLEN 2000",
                                      "OBJECT ENCODING l",
                                      "TYPE l"};

static void same_windows(wire_conn_t *a, wire_conn_t *b)
{
    ph_same_each(a, b, windows, sizeof(windows) / sizeof(windows[0]));
}

Test(plist, a_million_elements_match_redis_in_pages)
{
    srv_t s;
    wire_redis_t ref;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    cr_assert_eq(wire_redis_start(&ref, NULL), 0, "redis-server did not start");
    redisContext *c = srv_connect(&s), *r = redisConnect("127.0.0.1", ref.port);
    cr_assert(c && r && !r->err);
    push_range(c, r, "RPUSH", 0, 1000000);
    wait_paged(c, "after a million RPUSHes");
    wire_conn_t *a = wire_open(s.port, 60), *b = wire_open(ref.port, 60);
    cr_assert(a && b);
    same_windows(a, b);
    /* Pops from both ends read through pages; pushes at both ends. */
    ph_same(a, b, "LPOP l 300");
    ph_same(a, b, "RPOP l 300");
    ph_same(a, b, "LPOP l");
    ph_same(a, b, "RPOP l");
    ph_same(a, b, "LPUSH l front1 front2");
    ph_same(a, b, "RPUSH l back1 back2");
    /* Writes inside pages. */
    ph_same(a, b, "LSET l 400000 changed");
    ph_same(a, b, "LSET l -400000 changed-too");
    ph_same(a, b, "LINSERT l BEFORE e600001 inserted");
    ph_same(a, b, "LINSERT l AFTER e3 inserted-after");
    ph_same(a, b, "LREM l 1 e250001");
    ph_same(a, b, "LREM l -2 changed");
    ph_same(a, b, "LMOVE l l2 LEFT RIGHT");
    ph_same(a, b, "BLPOP l 1");
    ph_same(a, b, "RPOPLPUSH l l2");
    ph_same(a, b, "LRANGE l2 0 -1");
    same_windows(a, b);
    ph_same(a, b, "LRANGE l 399990 400010");
    ph_same(a, b, "LRANGE l 599990 600010");
    /* DUMP of the paged list restores into redis-server equal. */
    redisReply *d = redisCommand(c, "DUMP l");
    cr_assert(d && d->type == REDIS_REPLY_STRING);
    redisReply *ok = redisCommand(r, "RESTORE lcopy 0 %b", d->str, d->len);
    cr_assert(ok && ok->type == REDIS_REPLY_STATUS, "RESTORE: %s", ok ? ok->str : "");
    freeReplyObject(ok);
    freeReplyObject(d);
    ph_same(a, b, "LLEN l");
    redisReply *n1 = redisCommand(r, "LLEN lcopy"), *n2 = redisCommand(r, "LLEN l");
    cr_assert_eq(n1->integer, n2->integer, "the restored copy is as long");
    freeReplyObject(n1);
    freeReplyObject(n2);
    /* Redis's DUMP of its list restored here: equal, and put into pages. */
    d = redisCommand(r, "DUMP l");
    cr_assert(d && d->type == REDIS_REPLY_STRING);
    ok = redisCommand(c, "RESTORE lcopy 0 %b", d->str, d->len);
    cr_assert(ok && ok->type == REDIS_REPLY_STATUS, "RESTORE: %s", ok ? ok->str : "");
    freeReplyObject(ok);
    freeReplyObject(d);
    ph_same(a, b, "LRANGE lcopy 0 99");
    ph_same(a, b, "LRANGE lcopy 400000 400099");
    ph_same(a, b, "LINDEX lcopy -1");
    long long cs[7] = {0};
    for (int i = 0; i < 200 && !(cs[0] && cs[4] <= 5 * 128); i++) {
        ph_paged_stats(c, "lcopy", cs);
        usleep(50000);
    }
    cr_assert(cs[0] && cs[4] <= 5 * 128, "a restored list goes into pages: %lld in RAM", cs[4]);
    ph_same(a, b, "LRANGE lcopy 700000 700099");
    /* LTRIM through pages, then the windows of what is left. */
    ph_same(a, b, "LTRIM l 1000 -1001");
    same_windows(a, b);
    /* The state survives SIGKILL of the group and a clean restart. */
    char d1[64], d2[64];
    ph_digest(c, d1);
    wire_close(a);
    redisFree(c);
    srv_kill_all(&s);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    ph_digest(c, d2);
    cr_assert_str_eq(d1, d2, "the same list after SIGKILL and a restart");
    a = wire_open(s.port, 60);
    same_windows(a, b);
    wire_close(a);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0); /* a clean stop writes a checkpoint */
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    ph_digest(c, d2);
    cr_assert_str_eq(d1, d2, "the same list after a clean restart from a checkpoint");
    long long st[7];
    paged_stats(c, st);
    cr_assert(st[0] && st[2] > 100, "still in pages: %lld", st[2]);
    a = wire_open(s.port, 60);
    same_windows(a, b);
    /* DEL is O(pages). */
    ph_same(a, b, "DEL l");
    ph_same(a, b, "EXISTS l");
    wire_close(a);
    wire_close(b);
    redisFree(c);
    redisFree(r);
    wire_redis_stop(&ref);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* The store killed at one point of paging; nothing acknowledged is lost,
 * and the list pages again. */
typedef struct push_rounds {
    int writes_inside;
    long pushed;
} push_rounds_t;

static void push_round(redisContext *c, int i, void *arg)
{
    push_rounds_t *w = arg;
    push_range(c, NULL, "RPUSH", w->pushed, w->pushed + 5000);
    w->pushed += 5000;
    if (w->writes_inside && w->pushed > 20000) {
        /* LSET inside the paged part: a page copied into RAM. */
        redisReply *x = redisCommand(c, "LSET l %ld set-%d", w->pushed / 3, i);
        if (x) freeReplyObject(x);
    }
}

static void killed_at(const char *fault, int writes_inside)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, fault, ARGS), 0, "%s", fault);
    push_rounds_t w = {writes_inside, 0};
    redisContext *c = ph_write_until_store_killed(&s, fault, 40, push_round, &w);
    long pushed = w.pushed;
    redisReply *n = redisCommand(c, "LLEN l");
    cr_assert(n && n->type == REDIS_REPLY_INTEGER);
    /* Every push was acknowledged (a cut connection's batch is retried
     * whole by push_range's next call only if it failed: count what the
     * list has against the elements' own numbers). */
    cr_assert_geq(n->integer, pushed - 5000, "%s: %lld elements of %ld pushed", fault, n->integer,
                  pushed);
    freeReplyObject(n);
    wait_paged(c, fault);
    ph_same_after_kill(&s, c, fault);
}

Test(plist, store_killed_after_applying_a_list_page_record)
{
    killed_at("store.listpaged:20:KILL", 0);
}

Test(plist, store_killed_with_a_list_page_record_in_the_ring)
{
    killed_at("store.listpagewritten:20:KILL", 0);
}

Test(plist, store_killed_after_a_write_copied_a_page_into_ram)
{
    killed_at("store.listdirty:2:KILL", 1);
}
