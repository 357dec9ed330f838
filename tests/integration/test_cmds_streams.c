/*
 * test_cmds_streams.c - the stream commands (D39) between a real
 * atticdb-server and a real redis-server 7.0.15: XADD XTRIM XDEL XSETID
 * XLEN XRANGE XREVRANGE XINFO with explicit IDs compared byte for byte
 * (errors included, RESP2 and RESP3), "*" IDs checked for shape and order
 * (they come from each server's clock), MULTI/EXEC, and streams that
 * survive a SIGKILL of every process with the same DEBUG DIGEST and the
 * same entries after replay.
 */
#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_diff.h"

TestSuite(streams, .fini = rdiff_teardown, .timeout = 120);

Test(streams, explicit_ids_byte_for_byte)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "xadd", "s", "maxlen", "5", "1-1", "a");
    D(&d, "xadd", "s", "limit", "5", "1-2", "a", "b");
    D(&d, "xadd", "s", "1-1", "a", "b");
    D(&d, "xadd", "s", "0-0", "a", "b");
    D(&d, "xadd", "s", "0", "a", "b");
    D(&d, "xadd", "s", "maxlen", "-1", "2-1", "a", "b");
    D(&d, "xadd", "s", "maxlen", "x", "2-1", "a", "b");
    D(&d, "xadd", "s", "minid", "x", "2-1", "a", "b");
    D(&d, "xadd", "s", "maxlen", "1", "minid", "1", "2-1", "a", "b");
    D(&d, "xadd", "s", "maxlen", "1", "limit", "2", "2-1", "a", "b");
    D(&d, "xadd", "s", "bad", "a", "b");
    D(&d, "xadd", "s", "0-*", "a", "b");
    D(&d, "xadd", "s", "1-*", "a", "b");
    D(&d, "xadd", "s", "3-*", "a", "b");
    D(&d, "xadd", "s", "3-*", "a", "b", "c", "d");
    D(&d, "xadd", "s", "2", "a", "b");
    D(&d, "xadd", "s", "007", "a", "b");
    D(&d, "xadd", "s", "10-010", "a", "b");
    D(&d, "xadd", "s", "+5", "a", "b");
    D(&d, "xadd", "s", "8-", "a", "b");
    D(&d, "xadd", "s", "-", "a", "b");
    D(&d, "xlen", "s");
    D(&d, "xrange", "s", "-", "+");
    D(&d, "xrange", "s", "-", "+", "count", "0");
    D(&d, "xrange", "s", "-", "+", "count", "-1");
    D(&d, "xrange", "s", "-", "+", "count", "2");
    D(&d, "xrange", "s", "(3-0", "+");
    D(&d, "xrange", "s", "(-", "+");
    D(&d, "xrange", "s", "(18446744073709551615-18446744073709551615", "+");
    D(&d, "xrange", "s", "-", "(0-0");
    D(&d, "xrange", "s", "x", "+");
    D(&d, "xrange", "s", "-", "+", "foo");
    D(&d, "xrange", "s", "-", "+", "count");
    D(&d, "xrange", "s", "-", "+", "count", "x");
    D(&d, "xrange", "nokey", "x", "+");
    D(&d, "xrange", "nokey", "-", "+");
    D(&d, "xrange", "s", "3", "3");
    D(&d, "xrange", "s", "10", "3");
    D(&d, "xrevrange", "s", "+", "-", "count", "1");
    D(&d, "xrevrange", "s", "+", "-");
    D(&d, "xrevrange", "s", "(10-10", "(3-0");
    D(&d, "xdel", "s", "7-0", "8-0", "x");
    D(&d, "xdel", "nokey", "x");
    D(&d, "xdel", "s", "7-0", "7-0", "3-1");
    D(&d, "xinfo", "stream", "s");
    D(&d, "xinfo", "stream", "s", "full");
    D(&d, "xinfo", "stream", "s", "full", "count", "1");
    D(&d, "xinfo", "stream", "s", "full", "count", "x");
    D(&d, "xinfo", "stream", "s", "full", "foo");
    D(&d, "xinfo", "stream", "s", "foo");
    D(&d, "xinfo", "stream", "nokey");
    D(&d, "xinfo", "help");
    D(&d, "xinfo", "foo");
    D(&d, "xinfo", "stream");
    D(&d, "xinfo", "help", "x");
    D(&d, "xtrim", "s", "limit", "1");
    D(&d, "xtrim", "s");
    D(&d, "xtrim", "s", "maxlen", "1", "limit", "1");
    D(&d, "xtrim", "s", "nomkstream", "maxlen", "1");
    D(&d, "xtrim", "s", "maxlen", "2");
    D(&d, "xtrim", "s", "maxlen", "~", "1");
    D(&d, "xtrim", "s", "minid", "10-10");
    D(&d, "xtrim", "nokey", "maxlen", "1");
    D(&d, "xinfo", "stream", "s");
    D(&d, "xadd", "s2", "nomkstream", "1", "a", "b");
    D(&d, "xlen", "s2");
    D(&d, "xadd", "s3", "maxlen", "0", "1", "a", "b");
    D(&d, "exists", "s3");
    D(&d, "xinfo", "stream", "s3");
    D(&d, "set", "str", "x");
    D(&d, "xadd", "str", "*", "a", "b");
    D(&d, "xlen", "str");
    D(&d, "xrange", "str", "-", "+");
    D(&d, "xdel", "str", "1");
    D(&d, "xtrim", "str", "maxlen", "1");
    D(&d, "xsetid", "str", "1");
    D(&d, "xinfo", "stream", "str");
    D(&d, "type", "s");
    D(&d, "object", "encoding", "s");
    D(&d, "xsetid", "nokey", "1");
    D(&d, "xsetid", "s", "1");
    D(&d, "xsetid", "s", "99-0", "entriesadded", "x");
    D(&d, "xsetid", "s", "99-0", "entriesadded", "-1");
    D(&d, "xsetid", "s", "99-0", "maxdeletedid", "100");
    D(&d, "xsetid", "s", "99-0", "maxdeletedid", "x");
    D(&d, "xsetid", "s", "99-0", "foo");
    D(&d, "xsetid", "s", "99-0", "entriesadded", "0");
    D(&d, "xsetid", "s", "99-0", "entriesadded", "10", "maxdeletedid", "98");
    D(&d, "xsetid", "s", "97-0");
    D(&d, "xinfo", "stream", "s");
    D(&d, "xadd", "s", "99-*", "f", "v");
    D(&d, "xadd", "s", "18446744073709551615-18446744073709551615", "a", "b");
    D(&d, "xadd", "s", "*", "a", "b");
    D(&d, "xadd", "s", "5-*", "a", "b");
    D(&d, "xsetid", "s", "18446744073709551615-18446744073709551615");
    D(&d, "xinfo", "stream", "s");
    rdiff_resp3(&d);
    D(&d, "xinfo", "stream", "s");
    D(&d, "xinfo", "stream", "s", "full");
    D(&d, "xadd", "nm", "nomkstream", "*", "a", "b");
    D(&d, "xrange", "s", "-", "+", "count", "0");
    D(&d, "xrange", "s", "-", "+");
    D(&d, "xinfo", "stream", "s3");
    D(&d, "copy", "s", "s4");
    D(&d, "xrange", "s4", "-", "+");
    D(&d, "rename", "s4", "s5");
    D(&d, "xinfo", "stream", "s5");
    D(&d, "del", "s5");
    D(&d, "exists", "s5");
    rdiff_end_both(&d);
}

Test(streams, multi_exec_and_wrongtype)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "MULTI");
    D(&d, "XADD", "m", "1-1", "a", "b");
    D(&d, "XADD", "m", "1-1", "a", "b");
    D(&d, "XADD", "m", "MAXLEN", "x", "2-1", "a", "b");
    D(&d, "XADD", "m", "2-*", "c", "d");
    D(&d, "XDEL", "m", "1-1");
    D(&d, "XLEN", "m");
    D(&d, "XRANGE", "m", "-", "+");
    D(&d, "XSETID", "m", "5-5");
    D(&d, "XTRIM", "m", "MAXLEN", "0");
    D(&d, "EXEC");
    D(&d, "XINFO", "STREAM", "m");
    D(&d, "LPUSH", "l", "x");
    D(&d, "MULTI");
    D(&d, "XADD", "l", "1", "a", "b");
    D(&d, "XLEN", "l");
    D(&d, "EXEC");
    D(&d, "MULTI");
    D(&d, "XREAD", "BLOCK", "0", "STREAMS", "nokey", "$");
    D(&d, "XREAD", "BLOCK", "0", "STREAMS", "m", "0");
    D(&d, "EXEC");
    D(&d, "EXPIRE", "m", "100");
    D(&d, "TTL", "m");
    D(&d, "PERSIST", "m");
    D(&d, "OBJECT", "ENCODING", "m");
    rdiff_end_both(&d);
}

static uint64_t ms_of(const char *id)
{
    return strtoull(id, NULL, 10);
}

/* "*" IDs: <ms>-<seq>, each above the last, ms close to the wall clock. */
Test(streams, star_ids_shape_and_order)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, ""), 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    char last[64] = "0-0";
    for (int i = 0; i < 200; i++) {
        redisReply *r = redisCommand(c, "XADD s * n %d", i);
        cr_assert_not_null(r);
        cr_assert_eq(r->type, REDIS_REPLY_STRING, "XADD *: %s", r->str);
        uint64_t ms, seq, lms = 0, lseq = 0;
        cr_assert_eq(sscanf(r->str, "%" SCNu64 "-%" SCNu64, &ms, &seq), 2, "shape: %s", r->str);
        sscanf(last, "%" SCNu64 "-%" SCNu64, &lms, &lseq);
        cr_assert(ms > lms || (ms == lms && seq > lseq), "%s after %s", r->str, last);
        snprintf(last, sizeof(last), "%s", r->str);
        freeReplyObject(r);
    }
    redisReply *t = redisCommand(c, "TIME");
    cr_assert_not_null(t);
    uint64_t now_ms = strtoull(t->element[0]->str, NULL, 10) * 1000;
    freeReplyObject(t);
    cr_assert(ms_of(last) <= now_ms + 1000 && ms_of(last) + 600000 > now_ms,
              "the ms part is the time of the write (%s, now %" PRIu64 ")", last, now_ms);
    redisReply *r = redisCommand(c, "XLEN s");
    cr_assert_eq(r->integer, 200);
    freeReplyObject(r);
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* XRANGE's reply as "id field value ...\n" lines. */
static char *text_of(redisContext *c, const char *cmd)
{
    redisReply *r = redisCommand(c, cmd);
    cr_assert_not_null(r);
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY, "%s", cmd);
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    for (size_t i = 0; i < r->elements; i++) {
        redisReply *e = r->element[i];
        fprintf(f, "%s", e->element[0]->str);
        for (size_t k = 0; k < e->element[1]->elements; k++)
            fprintf(f, " %s", e->element[1]->element[k]->str);
        fputc('\n', f);
    }
    fclose(f);
    freeReplyObject(r);
    return out;
}

static char *status_of(redisContext *c, const char *cmd)
{
    redisReply *r = redisCommand(c, cmd);
    cr_assert_not_null(r);
    char *out = strdup(r->str ? r->str : "");
    freeReplyObject(r);
    return out;
}

/* Every acked stream write survives a SIGKILL of every process: the same
 * entries, counters ("*" IDs included) and DEBUG DIGEST after replay. */
Test(streams, survive_sigkill_of_everything)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 2"), 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    for (int i = 0; i < 300; i++) {
        redisReply *r = i % 3 ? redisCommand(c, "XADD s * n %d v %d", i, i * 7)
                              : redisCommand(c, "XADD s MAXLEN ~ 150 * n %d", i);
        cr_assert_not_null(r);
        cr_assert_eq(r->type, REDIS_REPLY_STRING);
        if (i % 10 == 0) freeReplyObject(redisCommand(c, "XDEL s %s", r->str));
        freeReplyObject(r);
    }
    const char *setup[] = {"XADD e 5-5 a b", "XTRIM e MAXLEN 0", "XSETID e 9-9 ENTRIESADDED 4",
                           "XADD t 1 x y",   "XADD t 2 x y",     "XTRIM t MINID 2"};
    for (size_t i = 0; i < sizeof(setup) / sizeof(setup[0]); i++) {
        redisReply *r = redisCommand(c, setup[i]);
        cr_assert_not_null(r);
        cr_assert_neq(r->type, REDIS_REPLY_ERROR, "%s: %s", setup[i], r->str);
        freeReplyObject(r);
    }
    char *s1 = text_of(c, "XRANGE s - +"), *t1 = text_of(c, "XRANGE t - +");
    char *d1 = status_of(c, "DEBUG DIGEST");
    cr_assert_str_eq(t1, "2-0 x y\n");
    redisFree(c);

    srv_kill_all(&s);
    cr_assert_eq(srv_restart(&s), 0, "restart after SIGKILL");
    c = srv_connect(&s);
    cr_assert_not_null(c);
    char *s2 = text_of(c, "XRANGE s - +"), *t2 = text_of(c, "XRANGE t - +");
    char *d2 = status_of(c, "DEBUG DIGEST");
    cr_assert(strcmp(s1, s2) == 0, "the stream came back whole, with the same IDs");
    cr_assert_str_eq(t2, t1);
    cr_assert_str_eq(d2, d1, "the same digest after replay");
    redisReply *info = redisCommand(c, "XINFO STREAM e");
    cr_assert_eq(info->type, REDIS_REPLY_ARRAY);
    cr_assert_str_eq(info->element[7]->str, "9-9", "XSETID's last ID replayed");
    cr_assert_eq(info->element[11]->integer, 4, "entries-added replayed");
    freeReplyObject(info);
    free(s1), free(s2), free(t1), free(t2), free(d1), free(d2);
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* XREAD, with BLOCK answered at once or timing out (its waits served by
 * writes are test_blocking's). */
Test(streams, xread_byte_for_byte)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "xadd", "s", "1-1", "a", "b");
    D(&d, "xadd", "s", "2-2", "c", "d");
    D(&d, "set", "str", "x");
    D(&d, "xread", "count", "x", "streams", "s", "0");
    D(&d, "xread", "block", "x", "streams", "s", "0");
    D(&d, "xread", "block", "-1", "streams", "s", "0");
    D(&d, "xread", "streams", "s");
    D(&d, "xread", "streams", "s", "t", "0");
    D(&d, "xread", "foo", "streams", "s", "0");
    D(&d, "xread", "count", "1");
    D(&d, "xread", "streams", "s", ">");
    D(&d, "xread", "streams", "s", "x");
    D(&d, "xread", "streams", "nokey", "0");
    D(&d, "xread", "streams", "nokey", "$");
    D(&d, "xread", "count", "0", "streams", "s", "0");
    D(&d, "xread", "count", "-5", "streams", "s", "0");
    D(&d, "xread", "count", "1", "streams", "s", "0");
    D(&d, "xread", "streams", "s", "18446744073709551615-18446744073709551615");
    D(&d, "xread", "streams", "str", "0");
    D(&d, "xread", "streams", "s", "s", "0", "0");
    D(&d, "xread", "streams", "STREAMS", "s", "0");
    D(&d, "xread", "block", "1.5", "streams", "s", "0");
    D(&d, "xread", "streams", "s", "(0");
    D(&d, "xread", "streams", "s", "-");
    D(&d, "xread", "streams", "s", "+");
    D(&d, "xread", "streams", "s", "0", "");
    D(&d, "xread", "streams", "nokey", "0");
    D(&d, "xread", "block", "50", "streams", "nokey", "$");
    D(&d, "xread", "block", "50", "streams", "s", "$");
    D(&d, "xread", "block", "50", "group", "g", "c", "streams", "s", "$");
    D(&d, "xread", "block", "50", "noack", "streams", "s", "$");
    rdiff_resp3(&d);
    D(&d, "xread", "block", "50", "streams", "s", "$");
    D(&d, "xread", "streams", "s", "0");
    D(&d, "xread", "streams", "nokey", "0");
    D(&d, "xread", "count", "1", "streams", "s", "s", "0", "1-1");
    D(&d, "command", "getkeys", "xread", "count", "1", "streams", "a", "b", "0", "0");
    D(&d, "command", "getkeys", "xread", "streams", "a");
    D(&d, "command", "info", "xread");
    rdiff_end_both(&d);
}
