/*
 * test_stream_groups.c - stream consumer groups (D42) between a real
 * atticdb-server and a real redis-server 7.0.15: XGROUP CREATE (MKSTREAM,
 * ENTRIESREAD) SETID DESTROY CREATECONSUMER DELCONSUMER HELP and XINFO
 * GROUPS, XREADGROUP, XCLAIM and XAUTOCLAIM compared byte for byte
 * (errors included, RESP2 and RESP3, inside MULTI), XINFO CONSUMERS by
 * shape (its idle times come from each server's clock), and groups, with
 * the pending entries those commands leave, that come back with the same
 * DEBUG DIGEST from a checkpoint (clean stop) and from the log (SIGKILL of
 * every process).
 */
#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_diff.h"

TestSuite(stream_groups, .fini = rdiff_teardown, .timeout = 120);

Test(stream_groups, xgroup_byte_for_byte)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "xgroup", "help");
    D(&d, "xgroup", "foo");
    D(&d, "xgroup", "create", "s", "g");
    D(&d, "xgroup", "destroy", "s");
    D(&d, "xgroup", "create", "s", "g", "$");
    D(&d, "xgroup", "create", "s", "g", "$", "mkstream", "entriesread", "-2");
    D(&d, "xgroup", "create", "s", "g", "$", "mkstream", "entriesread", "x");
    D(&d, "xgroup", "create", "s", "g", "$", "mkstream", "entriesread");
    D(&d, "xgroup", "create", "s", "g", "$", "bogus");
    D(&d, "xgroup", "create", "s", "g", "1-x", "mkstream");
    D(&d, "exists", "s");
    D(&d, "xgroup", "create", "s", "g", "$", "mkstream");
    D(&d, "xgroup", "create", "s", "g", "0");
    D(&d, "xinfo", "groups", "s");
    D(&d, "xadd", "s", "1-1", "f", "v");
    D(&d, "xadd", "s", "2-1", "f", "v");
    D(&d, "xadd", "s", "3-1", "f", "v");
    D(&d, "xgroup", "create", "s", "first", "1-1");
    D(&d, "xgroup", "create", "s", "last", "$");
    D(&d, "xgroup", "create", "s", "read", "0", "ENTRIESREAD", "1");
    D(&d, "xgroup", "create", "s", "f", "5");
    D(&d, "xgroup", "create", "s", "fir", "1", "mkstream", "mkstream");
    D(&d, "xgroup", "create", "s", "x", "1", "mkstream", "mkstream", "mkstream", "mkstream");
    D(&d, "xinfo", "groups", "s");
    D(&d, "xgroup", "setid", "s", "nog", "0");
    D(&d, "xgroup", "setid", "s", "g", "2");
    D(&d, "xgroup", "setid", "s", "g", "$", "entriesread", "3");
    D(&d, "xgroup", "setid", "s", "g", "0", "mkstream");
    D(&d, "xgroup", "setid", "s", "g", "0", "entriesread", "-5");
    D(&d, "xgroup", "setid", "s", "g", "x");
    D(&d, "xgroup", "setid", "nokey", "g", "0");
    D(&d, "xdel", "s", "2-1");
    D(&d, "xinfo", "groups", "s");
    D(&d, "xinfo", "stream", "s");
    D(&d, "xinfo", "stream", "s", "full");
    D(&d, "xinfo", "stream", "s", "full", "count", "1");
    D(&d, "xack", "s", "g", "1-1", "2");
    D(&d, "xack", "s", "g", "1-1", "x");
    D(&d, "xack", "s", "nog", "x");
    D(&d, "xack", "nokey", "g", "x");
    D(&d, "xack", "s", "g");
    D(&d, "xpending", "s", "g");
    D(&d, "xpending", "s", "nog");
    D(&d, "xpending", "nokey", "g");
    D(&d, "xpending", "str0", "g");
    D(&d, "xpending", "s", "g", "-", "+", "10");
    D(&d, "xpending", "s", "g", "-", "+", "10", "c1");
    D(&d, "xpending", "s", "g", "IDLE", "10", "-", "+", "10");
    D(&d, "xpending", "s", "g", "IDLE", "x", "-", "+", "10");
    D(&d, "xpending", "s", "g", "IDLE", "10", "-", "+");
    D(&d, "xpending", "s", "g", "-", "+", "x");
    D(&d, "xpending", "s", "g", "x", "+", "10");
    D(&d, "xpending", "s", "g", "(-", "+", "10");
    D(&d, "xpending", "s", "g", "-", "(0-0", "10");
    D(&d, "xpending", "s", "g", "-", "+");
    D(&d, "xpending", "s", "g", "-", "+", "1", "c", "d", "e");
    D(&d, "xpending", "nokey", "g", "x", "+", "10");
    D(&d, "xgroup", "createconsumer", "s", "g", "c1");
    D(&d, "xgroup", "createconsumer", "s", "g", "c1");
    D(&d, "xgroup", "createconsumer", "s", "nog", "c1");
    D(&d, "xgroup", "createconsumer", "nokey", "g", "c1");
    D(&d, "xgroup", "createconsumer", "s", "g");
    D(&d, "xgroup", "delconsumer", "s", "g", "c9");
    D(&d, "xgroup", "delconsumer", "s", "g", "c1");
    D(&d, "xgroup", "delconsumer", "s", "nog", "c1");
    D(&d, "xgroup", "destroy", "s", "g");
    D(&d, "xgroup", "destroy", "s", "g");
    D(&d, "xgroup", "destroy", "nokey", "g");
    D(&d, "xgroup", "destroy", "s", "g", "x");
    D(&d, "xinfo", "groups", "nokey");
    D(&d, "xinfo", "groups");
    D(&d, "xinfo", "consumers", "s");
    D(&d, "xinfo", "consumers", "s", "nog");
    D(&d, "xinfo", "consumers", "nokey", "g");
    D(&d, "set", "str", "v");
    D(&d, "xgroup", "create", "str", "g", "$", "mkstream");
    D(&d, "xinfo", "groups", "str");
    D(&d, "xinfo", "consumers", "str", "g");
    D(&d, "copy", "s", "s2");
    D(&d, "xinfo", "groups", "s2");
    rdiff_resp3(&d);
    D(&d, "xinfo", "groups", "s");
    D(&d, "xinfo", "stream", "s", "full");
    D(&d, "xgroup", "help");
    D(&d, "MULTI");
    D(&d, "xgroup", "create", "m", "g", "$", "mkstream");
    D(&d, "xgroup", "create", "m", "g", "$");
    D(&d, "xgroup", "createconsumer", "m", "g", "c");
    D(&d, "xinfo", "groups", "m");
    D(&d, "EXEC");
    D(&d, "xgroup", "create", "e", "g", "$", "mkstream");
    D(&d, "xinfo", "groups", "e");
    rdiff_end_both(&d);
}

/* XREADGROUP (D46): new entries, the consumer's history (a deleted
 * entry as [id, null]), NOACK, COUNT, many streams, errors in Redis'
 * order; XPENDING's summary shows what was delivered (the extended form
 * is left out: its idle times come from each server's clock). */
Test(stream_groups, xreadgroup_byte_for_byte)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "xadd", "s", "1-0", "a", "1");
    D(&d, "xadd", "s", "2-0", "b", "2");
    D(&d, "xadd", "s", "3-0", "c", "3");
    D(&d, "xgroup", "create", "s", "g", "0");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "s");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "s", "s", ">");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "s", "$");
    D(&d, "xreadgroup", "group", "g", "c", "count", "x", "streams", "s", ">");
    D(&d, "xreadgroup", "group", "g", "c", "block", "-1", "streams", "s", ">");
    D(&d, "xreadgroup", "group", "g", "c", "block", "x", "streams", "s", ">");
    D(&d, "xreadgroup", "group", "g", "c", "block", "9223372036854775807", "streams", "s", ">");
    D(&d, "xreadgroup", "group", "g", "streams", "s", ">", "x");
    D(&d, "xreadgroup", "count", "1", "streams", "s", ">", "x", "y");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "nokey", ">");
    D(&d, "xreadgroup", "group", "nog", "c", "streams", "s", ">");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "s", "foo");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "s", "nokey", "foo", "0");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "s", "nokey", ">", "0");
    D(&d, "xreadgroup", "group", "g", "c", "noack", "xx", "streams", "s", "0");
    D(&d, "set", "str", "v");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "str", ">");
    D(&d, "xinfo", "groups", "s");
    D(&d, "xreadgroup", "group", "g", "c", "count", "2", "streams", "s", ">");
    D(&d, "xreadgroup", "group", "g", "c", "count", "0", "streams", "s", ">");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "s", ">");
    D(&d, "xreadgroup", "group", "g", "nobody", "streams", "s", ">");
    D(&d, "xinfo", "groups", "s");
    D(&d, "xreadgroup", "group", "g", "c", "block", "100", "streams", "s", "0");
    D(&d, "xpending", "s", "g");
    D(&d, "xinfo", "groups", "s");
    D(&d, "xdel", "s", "2-0");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "s", "0");
    D(&d, "xreadgroup", "group", "g", "c", "count", "1", "streams", "s", "1-0");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "s", "-");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "s", "+");
    D(&d, "xreadgroup", "group", "g", "other", "streams", "s", "0");
    D(&d, "xinfo", "groups", "s");
    D(&d, "xadd", "s", "4-0", "d", "4");
    D(&d, "xreadgroup", "group", "g", "c2", "noack", "streams", "s", ">");
    D(&d, "xpending", "s", "g");
    D(&d, "xinfo", "groups", "s");
    D(&d, "xgroup", "setid", "s", "g", "0");
    D(&d, "xreadgroup", "group", "g", "c2", "streams", "s", ">");
    D(&d, "xpending", "s", "g");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "s", "0");
    D(&d, "xgroup", "create", "t", "g", "$", "mkstream");
    D(&d, "xadd", "t", "9-0", "t", "9");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "s", "t", ">", ">");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "t", "s", ">", "0");
    D(&d, "xinfo", "groups", "s");
    D(&d, "xack", "s", "g", "1-0", "3-0");
    D(&d, "xpending", "s", "g");
    rdiff_resp3(&d);
    D(&d, "xadd", "s", "5-0", "e", "5");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "s", "t", ">", "0");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "s", ">");
    D(&d, "xdel", "s", "5-0");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "s", "0");
    D(&d, "MULTI");
    D(&d, "xadd", "m", "1-0", "f", "v");
    D(&d, "xgroup", "create", "m", "g", "0");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "m", ">");
    D(&d, "xreadgroup", "group", "g", "c", "block", "0", "streams", "m", ">");
    D(&d, "xreadgroup", "group", "g", "c", "streams", "m", "0");
    D(&d, "xreadgroup", "group", "nog", "c", "streams", "m", "0");
    D(&d, "EXEC");
    D(&d, "xpending", "m", "g");
    D(&d, "command", "info", "xreadgroup", "xclaim", "xautoclaim");
    D(&d, "command", "getkeys", "xreadgroup", "group", "g", "c", "streams", "a", "b", ">", ">");
    rdiff_end_both(&d);
}

/* XCLAIM and XAUTOCLAIM (D46): claims by ID and by scan, FORCE, JUSTID,
 * RETRYCOUNT, LASTID, entries deleted since delivery (XCLAIM drops them,
 * XAUTOCLAIM lists them), cursors, errors in Redis' order. Idle times
 * are never shown: a min-idle-time of 0 claims everything, one of an
 * hour nothing, on both servers. */
Test(stream_groups, xclaim_xautoclaim_byte_for_byte)
{
    diff_t d;
    rdiff_start_both(&d);
    for (int i = 1; i <= 6; i++) {
        char id[8];
        snprintf(id, sizeof(id), "%d-0", i);
        D(&d, "xadd", "s", id, "f", id);
    }
    D(&d, "xgroup", "create", "s", "g", "0");
    D(&d, "xreadgroup", "group", "g", "a", "count", "4", "streams", "s", ">");
    D(&d, "xclaim", "nokey", "g", "b", "0", "1-0");
    D(&d, "xclaim", "s", "nog", "b", "0", "1-0");
    D(&d, "xclaim", "s", "g", "b", "x", "1-0");
    D(&d, "xclaim", "s", "g", "b", "0", "1-0", "foo");
    D(&d, "xclaim", "s", "g", "b", "0", "1-0", "idle", "x");
    D(&d, "xclaim", "s", "g", "b", "0", "1-0", "time", "x");
    D(&d, "xclaim", "s", "g", "b", "0", "1-0", "retrycount", "x");
    D(&d, "xclaim", "s", "g", "b", "0", "1-0", "lastid", "x");
    D(&d, "xclaim", "s", "g", "b", "0", "1-0", "idle");
    D(&d, "xclaim", "str", "g", "b", "0", "1-0");
    D(&d, "set", "str", "v");
    D(&d, "xclaim", "str", "g", "b", "0", "1-0");
    D(&d, "xclaim", "s", "g", "b", "3600000", "1-0");
    D(&d, "xinfo", "consumers", "s", "nog");
    D(&d, "xpending", "s", "g");
    D(&d, "xclaim", "s", "g", "b", "0", "1-0", "2-0", "9-0");
    D(&d, "xpending", "s", "g");
    D(&d, "xclaim", "s", "g", "b", "0", "1-0", "justid");
    D(&d, "xclaim", "s", "g", "c", "0", "3-0", "retrycount", "7", "justid");
    D(&d, "xclaim", "s", "g", "c", "0", "5-0", "6-0");
    D(&d, "xclaim", "s", "g", "c", "0", "5-0", "force", "justid");
    D(&d, "xclaim", "s", "g", "c", "0", "6-0", "force", "idle", "5", "time", "1");
    D(&d, "xclaim", "s", "g", "c", "0", "1-0", "lastid", "99-0", "justid");
    D(&d, "xinfo", "groups", "s");
    D(&d, "xinfo", "groups", "s");
    D(&d, "xdel", "s", "2-0", "4-0");
    D(&d, "xclaim", "s", "g", "d", "0", "2-0");
    D(&d, "xpending", "s", "g");
    D(&d, "xautoclaim", "s", "g", "d", "x", "0");
    D(&d, "xautoclaim", "s", "g", "d", "0", "x");
    D(&d, "xautoclaim", "s", "g", "d", "0", "(+");
    D(&d, "xautoclaim", "s", "g", "d", "0", "0", "count", "0");
    D(&d, "xautoclaim", "s", "g", "d", "0", "0", "count");
    D(&d, "xautoclaim", "s", "g", "d", "0", "0", "foo");
    D(&d, "xautoclaim", "nokey", "g", "d", "0", "0");
    D(&d, "xautoclaim", "s", "nog", "d", "0", "0");
    D(&d, "xautoclaim", "str", "g", "d", "0", "0");
    D(&d, "xautoclaim", "s", "g", "d", "3600000", "0");
    D(&d, "xautoclaim", "s", "g", "d", "0", "0", "count", "1");
    D(&d, "xautoclaim", "s", "g", "d", "0", "0", "count", "2", "justid");
    D(&d, "xautoclaim", "s", "g", "e", "0", "(1-0", "count", "1");
    D(&d, "xautoclaim", "s", "g", "e", "0", "-");
    D(&d, "xpending", "s", "g");
    D(&d, "xinfo", "groups", "s");
    rdiff_resp3(&d);
    D(&d, "xautoclaim", "s", "g", "f", "0", "0");
    D(&d, "xclaim", "s", "g", "f", "0", "1-0", "3-0");
    D(&d, "MULTI");
    D(&d, "xclaim", "s", "g", "h", "0", "1-0");
    D(&d, "xautoclaim", "s", "g", "h", "0", "0", "justid");
    D(&d, "xclaim", "s", "g", "h", "x", "1-0");
    D(&d, "EXEC");
    D(&d, "xpending", "s", "g");
    rdiff_end_both(&d);
}

static redisReply *cmd(redisContext *c, const char *text)
{
    redisReply *r = redisCommand(c, text);
    cr_assert_not_null(r, "%s", text);
    cr_assert_neq(r->type, REDIS_REPLY_ERROR, "%s: %s", text, r->str);
    return r;
}

/* XINFO CONSUMERS: names in order, pending counts, idle times >= 0. */
Test(stream_groups, xinfo_consumers_shape)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, ""), 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    freeReplyObject(cmd(c, "XGROUP CREATE s g $ MKSTREAM"));
    freeReplyObject(cmd(c, "XGROUP CREATECONSUMER s g zed"));
    freeReplyObject(cmd(c, "XGROUP CREATECONSUMER s g al"));
    redisReply *r = cmd(c, "XINFO CONSUMERS s g");
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(r->elements, 2);
    const char *names[] = {"al", "zed"};
    for (size_t i = 0; i < 2; i++) {
        redisReply *e = r->element[i];
        cr_assert_eq(e->elements, 6);
        cr_assert_str_eq(e->element[0]->str, "name");
        cr_assert_str_eq(e->element[1]->str, names[i]);
        cr_assert_str_eq(e->element[2]->str, "pending");
        cr_assert_eq(e->element[3]->integer, 0);
        cr_assert_str_eq(e->element[4]->str, "idle");
        cr_assert_geq(e->element[5]->integer, 0);
    }
    freeReplyObject(r);
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

static char *status_of(redisContext *c, const char *text)
{
    redisReply *r = cmd(c, text);
    char *out = strdup(r->str ? r->str : "");
    freeReplyObject(r);
    return out;
}

/* A command that must not fail, printf-formatted. */
static void must(redisContext *c, const char *fmt, int round, int i)
{
    char t[128];
    snprintf(t, sizeof(t), fmt, round, i);
    freeReplyObject(cmd(c, t));
}

static void group_writes(redisContext *c, int round)
{
    for (int i = 0; i < 20; i++)
        must(c, "XADD s%d * n %d", round, i);
    must(c, "XGROUP CREATE s%d g 0", round, 0);
    must(c, "XGROUP CREATE s%d h $ ENTRIESREAD %d", round, 20);
    must(c, "XGROUP CREATE new%d g%d $ MKSTREAM", round, 0);
    for (int i = 0; i < 5; i++)
        must(c, "XGROUP CREATECONSUMER s%d g c%d", round, i);
    must(c, "XGROUP DELCONSUMER s%d g c%d", round, 2);
    must(c, "XGROUP SETID s%d h 0-%d", round, 5);
    /* The PEL and counters XREADGROUP, XCLAIM and XAUTOCLAIM leave (D46),
     * their delivery times the records'. */
    must(c, "XREADGROUP GROUP g c1 COUNT 5 STREAMS s%d >", round, 0);
    must(c, "XREADGROUP GROUP g c3 COUNT 3 STREAMS s%d s0 > >", round, 0);
    must(c, "XREADGROUP GROUP h c9 NOACK STREAMS s%d >", round, 0);
    redisReply *r = cmd(c, round ? "XRANGE s1 - + COUNT 2" : "XRANGE s0 - + COUNT 2");
    char del[128], claim[128];
    snprintf(del, sizeof(del), "XDEL s%d %s", round, r->element[0]->element[0]->str);
    snprintf(claim, sizeof(claim), "XCLAIM s%d g c4 0 %s RETRYCOUNT 4", round,
             r->element[1]->element[0]->str);
    freeReplyObject(r);
    freeReplyObject(cmd(c, del));
    must(c, "XREADGROUP GROUP g c1 COUNT 2 STREAMS s%d 0-%d", round, 0);
    freeReplyObject(cmd(c, claim));
    must(c, "XAUTOCLAIM s%d g c%d 0 0 COUNT 3", round, 5);
}

/* Groups and consumers come back from a checkpoint (a clean stop writes
 * one at the last LSN) and from the log (SIGKILL of everything) with the
 * same DEBUG DIGEST and the same XINFO GROUPS. */
Test(stream_groups, survive_checkpoint_and_sigkill)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 2"), 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    char *d0 = status_of(c, "DEBUG DIGEST");
    group_writes(c, 0);
    char *d1 = status_of(c, "DEBUG DIGEST");
    cr_assert_str_neq(d1, d0);
    redisReply *g1 = cmd(c, "XINFO GROUPS s0");
    cr_assert_eq(g1->elements, 2);
    redisFree(c);

    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    cr_assert_not_null(c);
    char *d2 = status_of(c, "DEBUG DIGEST"); /* answered once the store is ready */
    cr_assert(srv_log_contains(&s, "store: loaded checkpoint", NULL));
    cr_assert_str_eq(d2, d1, "the same digest from the checkpoint");
    redisReply *g2 = cmd(c, "XINFO GROUPS s0");
    cr_assert_eq(g2->elements, g1->elements);
    for (size_t i = 0; i < g1->elements; i++)
        for (size_t k = 0; k < g1->element[i]->elements; k++)
            cr_assert_eq(g2->element[i]->element[k]->integer, g1->element[i]->element[k]->integer);
    redisReply *cs = cmd(c, "XINFO CONSUMERS s0 g");
    cr_assert_eq(cs->elements, 5, "c0 c1 c3 c4, and c5 made by XAUTOCLAIM");
    freeReplyObject(cs);

    group_writes(c, 1);
    freeReplyObject(cmd(c, "XGROUP DESTROY s0 h"));
    char *d3 = status_of(c, "DEBUG DIGEST");
    redisFree(c);
    srv_kill_all(&s);
    cr_assert_eq(srv_restart(&s), 0, "restart after SIGKILL");
    c = srv_connect(&s);
    cr_assert_not_null(c);
    char *d4 = status_of(c, "DEBUG DIGEST");
    cr_assert_str_eq(d4, d3, "the same digest after replay");
    redisReply *g3 = cmd(c, "XINFO GROUPS s0");
    cr_assert_eq(g3->elements, 1, "DESTROY replayed");
    freeReplyObject(g1), freeReplyObject(g2), freeReplyObject(g3);
    free(d0), free(d1), free(d2), free(d3), free(d4);
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}
