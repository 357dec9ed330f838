/*
 * test_pstream.c - large streams on disk (D64), on the real server: a
 * stream of a million entries is written beside a real redis-server and
 * compared byte for byte once the store has put it into pages (XRANGE and
 * XREVRANGE windows, large ranges that go out in parts, XREAD from the
 * middle, XDEL inside old chunks, a consumer group reading the history,
 * XPENDING's summary, XCLAIM, XAUTOCLAIM, XINFO GROUPS, XTRIM by MAXLEN and MINID, XADD with
 * MAXLEN ~); it survives SIGKILL of the whole group and a clean restart
 * from a checkpoint with the same DEBUG DIGEST; and the store killed at
 * each new fault point ("streampaged", "streampagewritten",
 * "streamdirty") loses nothing acknowledged.
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

TestSuite(pstream, .timeout = 900);

/* Entry i's ID: four entries a millisecond. */
static int id_of(long i, char *out, size_t n)
{
    return snprintf(out, n, "%ld-%ld", 1000 + i / 4, i % 4);
}

/* XADD of entries [from, to) to c and, when not NULL, r, pipelined: two
 * fields mostly (every 7th value long, every 50th entry other fields);
 * every reply must be the entry's ID. */
static void add_range(redisContext *c, redisContext *r, long from, long to)
{
    for (int side = 0; side < 2; side++) {
        redisContext *x = side ? r : c;
        if (!x) continue;
        long sent = 0;
        for (long i = from; i < to; i++) {
            char id[32], v[96];
            id_of(i, id, sizeof(id));
            if (i % 7 == 0)
                snprintf(v, sizeof(v), "reading-%ld-%040d", i, 0);
            else
                snprintf(v, sizeof(v), "%ld", i % 1000);
            if (i % 50 == 0)
                redisAppendCommand(x, "XADD s %s sensor s%ld value %s unit C", id, i % 13, v);
            else
                redisAppendCommand(x, "XADD s %s temp %s humidity h%ld", id, v, i % 100);
            if (++sent % 1024 == 0 || i + 1 == to)
                while (sent) {
                    redisReply *rep;
                    cr_assert_eq(redisGetReply(x, (void **)&rep), REDIS_OK, "XADD reply");
                    cr_assert_eq(rep->type, REDIS_REPLY_STRING, "%s", rep->str ? rep->str : "");
                    freeReplyObject(rep);
                    sent--;
                }
        }
    }
}

/* Wait until the pager is done: in RAM only the first and last chunks and
 * less than a page's worth (and 4 chunks) between them, besides the
 * entries XDEL made dirty that are not yet written again. */
static void wait_paged(redisContext *c, const char *when)
{
    long long st[7] = {0};
    time_t deadline = time(NULL) + 120;
    do {
        ph_paged_stats(c, "s", st);
        if (st[0] && st[4] <= 6 * 128) break;
        usleep(50000);
    } while (time(NULL) < deadline);
    cr_assert(st[0] && st[4] <= 6 * 128, "%s: %lld of %lld entries still in RAM, %lld pages", when,
              st[4], st[6], st[2]);
}

static const char *const windows[] = {"XRANGE s - + COUNT 100",
                                      "XREVRANGE s + - COUNT 100",
                                      "XRANGE s 100000 100050",
                                      "XRANGE s (120000-1 120010-2",
                                      "XREVRANGE s 250010 250000",
                                      "XREVRANGE s (200000-3 (199990-0",
                                      "XRANGE s 150000-2 + COUNT 7",
                                      "XRANGE s 99999999 +",
                                      "XREAD COUNT 100 STREAMS s 180000-2",
                                      "XREAD COUNT 3 STREAMS s 0-1",
                                      "XREAD STREAMS s 250999-3",
                                      "XLEN s",
                                      "TYPE s",
                                      "OBJECT ENCODING s"};

static void same_windows(wire_conn_t *a, wire_conn_t *b)
{
    ph_same_each(a, b, windows, sizeof(windows) / sizeof(windows[0]));
}

Test(pstream, a_million_entries_match_redis_in_pages)
{
    srv_t s;
    wire_redis_t ref;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    cr_assert_eq(wire_redis_start(&ref, NULL), 0, "redis-server did not start");
    redisContext *c = srv_connect(&s), *r = redisConnect("127.0.0.1", ref.port);
    cr_assert(c && r && !r->err);
    add_range(c, r, 0, 1000000);
    wait_paged(c, "after a million XADDs");
    wire_conn_t *a = wire_open(s.port, 120), *b = wire_open(ref.port, 120);
    cr_assert(a && b);
    same_windows(a, b);
    /* Large ranges both ways: in parts from the store (D64). */
    ph_same(a, b, "XRANGE s 400000 + COUNT 150000");
    ph_same(a, b, "XREVRANGE s 300000 - COUNT 150000");
    /* XDEL inside old chunks, and the windows around them. */
    ph_same(a, b, "XDEL s 100010-0 100010-1 100010-2 100030-3 777777-1 1-1");
    ph_same(a, b, "XDEL s 1000-0 1000-1 1000-2 1000-3 1001-0");
    ph_same(a, b, "XRANGE s 100005 100035");
    ph_same(a, b, "XREVRANGE s 100035 100005");
    ph_same(a, b, "XRANGE s - + COUNT 10");
    /* A consumer group reading history in pages. */
    ph_same(a, b, "XGROUP CREATE s g 0");
    ph_same(a, b, "XREADGROUP GROUP g alice COUNT 1000 STREAMS s >");
    ph_same(a, b, "XREADGROUP GROUP g bob COUNT 3000 STREAMS s >");
    ph_same(a, b, "XREADGROUP GROUP g alice COUNT 200 STREAMS s 0");
    ph_same(a, b, "XREADGROUP GROUP g bob COUNT 50 STREAMS s 1500-0");
    ph_same(a, b, "XDEL s 1100-1 1200-2");
    ph_same(a, b, "XREADGROUP GROUP g bob COUNT 300 STREAMS s 1000");
    ph_same(a, b, "XPENDING s g"); /* the extended form shows idle times: not compared */
    ph_same(a, b, "XACK s g 1001-1 1001-2 1200-0 1999-3");
    ph_same(a, b, "XCLAIM s g carol 0 1002-0 1003-1 1100-1");
    ph_same(a, b, "XCLAIM s g carol 0 1004-0 JUSTID");
    ph_same(a, b, "XAUTOCLAIM s g dave 0 1150-0 COUNT 25");
    ph_same(a, b, "XAUTOCLAIM s g dave 0 0 COUNT 5 JUSTID");
    ph_same(a, b, "XINFO GROUPS s");
    ph_same(a, b, "XGROUP CREATE s late 200000-0");
    ph_same(a, b, "XREADGROUP GROUP late erin COUNT 2000 STREAMS s >");
    ph_same(a, b, "XINFO GROUPS s");
    same_windows(a, b);
    /* Trimming through pages, and XADD with MAXLEN ~ at the tail. */
    ph_same(a, b, "XTRIM s MAXLEN 700000");
    ph_same(a, b, "XTRIM s MINID 200000-2");
    ph_same(a, b, "XTRIM s MAXLEN ~ 500000");
    ph_same(a, b, "XRANGE s - + COUNT 20");
    ph_same(a, b, "XADD s MAXLEN ~ 400000 300000-0 late entry");
    ph_same(a, b, "XADD s MAXLEN 450000 300000-1 later entry");
    ph_same(a, b, "XLEN s");
    ph_same(a, b, "XREADGROUP GROUP late erin COUNT 100 STREAMS s 0");
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
    cr_assert_str_eq(d1, d2, "the same stream after SIGKILL and a restart");
    a = wire_open(s.port, 120);
    same_windows(a, b);
    ph_same(a, b, "XINFO GROUPS s");
    wire_close(a);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0); /* a clean stop writes a checkpoint */
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    ph_digest(c, d2);
    cr_assert_str_eq(d1, d2, "the same stream after a clean restart from a checkpoint");
    long long st[7];
    ph_paged_stats(c, "s", st);
    cr_assert(st[0] && st[2] > 100, "still in pages: %lld", st[2]);
    a = wire_open(s.port, 120);
    same_windows(a, b);
    ph_same(a, b, "XRANGE s - + COUNT 5000");
    /* DEL is O(chunks). */
    ph_same(a, b, "DEL s");
    ph_same(a, b, "EXISTS s");
    wire_close(a);
    wire_close(b);
    redisFree(c);
    redisFree(r);
    wire_redis_stop(&ref);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* atticdb_log_start_lsn of INFO persistence. */
static long long log_start(redisContext *c)
{
    char v[64];
    return atoll(srv_info_persistence(c, "atticdb_log_start_lsn", v, sizeof(v)));
}

/* Compaction reclaims the log under a paged stream: its pass notes the
 * stream, whose pages below the pass's line the pager writes again above
 * it, so the oldest segments hold nothing live and go (D27, D64). */
Test(pstream, compaction_reclaims_the_log_under_a_paged_stream)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    redisContext *c = srv_connect(&s);
    add_range(c, NULL, 0, 400000);
    wait_paged(c, "after 400,000 XADDs");
    /* Other writes move the log on: compaction's passes and checkpoints
     * follow the log. */
    long long start = 0;
    for (int i = 0; i < 600 && !(start = log_start(c)); i++) {
        for (int k = 0; k < 200; k++)
            redisAppendCommand(c, "SET k%d %0100d", k, i);
        for (int k = 0; k < 200; k++) {
            redisReply *r;
            cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
            freeReplyObject(r);
        }
        usleep(50000);
    }
    cr_assert_gt(start, 0, "compaction deleted the log's first segments");
    redisReply *r = redisCommand(c, "DEBUG SEGMENTS");
    cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements >= 2 && r->element[0]->integer == 1,
              "the live bytes recount the same");
    freeReplyObject(r);
    r = redisCommand(c, "XLEN s");
    cr_assert(r && r->integer == 400000);
    freeReplyObject(r);
    ph_same_after_kill(&s, c, "compaction under a paged stream");
}

/* The store killed at one point of paging; nothing acknowledged is lost,
 * and the stream pages again. */
typedef struct xadd_rounds {
    int deletes;
    long added, deleted;
} xadd_rounds_t;

static void xadd_round(redisContext *c, int i, void *arg)
{
    xadd_rounds_t *w = arg;
    add_range(c, NULL, w->added, w->added + 5000);
    w->added += 5000;
    if (w->deletes && w->added > 20000) {
        /* XDEL inside the paged part: a page copied into RAM. */
        char id[32];
        id_of(w->added / 3 + i, id, sizeof(id));
        redisReply *x = redisCommand(c, "XDEL s %s", id);
        cr_assert(x && x->type == REDIS_REPLY_INTEGER, "XDEL %s", id);
        w->deleted += x->integer;
        freeReplyObject(x);
    }
}

static void killed_at(const char *fault, int deletes)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, fault, ARGS), 0, "%s", fault);
    xadd_rounds_t w = {deletes, 0, 0};
    redisContext *c = ph_write_until_store_killed(&s, fault, 40, xadd_round, &w);
    long added = w.added, deleted = w.deleted;
    redisReply *n = redisCommand(c, "XLEN s");
    cr_assert(n && n->type == REDIS_REPLY_INTEGER);
    /* Every XADD and XDEL was acknowledged (add_range checked each reply):
     * all of them are there. */
    cr_assert_eq(n->integer, added - deleted, "%s: %lld entries of %ld added, %ld deleted", fault,
                 n->integer, added, deleted);
    cr_assert_gt(added, 5000, "%s: killed after the first batch", fault);
    freeReplyObject(n);
    wait_paged(c, fault);
    ph_same_after_kill(&s, c, fault);
}

Test(pstream, store_killed_after_applying_a_stream_page_record)
{
    killed_at("store.streampaged:200:KILL", 0);
}

Test(pstream, store_killed_with_a_stream_page_record_in_the_ring)
{
    killed_at("store.streampagewritten:200:KILL", 0);
}

Test(pstream, store_killed_after_xdel_copied_a_page_into_ram)
{
    killed_at("store.streamdirty:2:KILL", 1);
}
