/*
 * test_cmds_expiry.c - the TTL commands checked against the replies of a
 * real Redis 7 (split from test_commands.c): EXPIRE, PEXPIRE, EXPIREAT,
 * PEXPIREAT and their options, PERSIST, TTL, PTTL, SET with a TTL, keys
 * that really expire (and DBSIZE after), FLUSHALL. Differential where the
 * replies are fixed; ttl_ranges checks AtticDB's TTL values alone, in ranges.
 *
 * Environment: ATTICDB_SERVER (the server binary), REDIS_SERVER (default:
 * redis-server from PATH; the differential tests are skipped without it).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "redis_diff.h"

TestSuite(cmds, .fini = rdiff_teardown, .timeout = 60);

/* ------------------------------------------------------------------ */
/* TTL family                                                          */

Test(cmds, expire_family)
{
    diff_t d;
    rdiff_start_both(&d);
    time_t now = time(NULL);
    char fut_s[32], fut_ms[32], past_s[32], past_ms[32], fut2_s[32], fut2_ms[32];
    snprintf(fut_s, sizeof(fut_s), "%lld", (long long)now + 1000);
    snprintf(fut2_s, sizeof(fut2_s), "%lld", (long long)now + 5000);
    snprintf(fut_ms, sizeof(fut_ms), "%lld", ((long long)now + 1000) * 1000);
    snprintf(fut2_ms, sizeof(fut2_ms), "%lld", ((long long)now + 5000) * 1000);
    snprintf(past_s, sizeof(past_s), "%lld", (long long)now - 10);
    snprintf(past_ms, sizeof(past_ms), "%lld", ((long long)now - 10) * 1000);

    D(&d, "TTL", "none");
    D(&d, "PTTL", "none");
    D(&d, "SET", "k", "v");
    D(&d, "TTL", "k");
    D(&d, "PTTL", "k");
    D(&d, "EXPIRE", "none", "100");
    D(&d, "PEXPIRE", "none", "100000");
    D(&d, "EXPIREAT", "none", fut_s);
    D(&d, "PEXPIREAT", "none", fut_ms);
    D(&d, "PERSIST", "none");
    D(&d, "PERSIST", "k");
    D(&d, "EXPIRE", "k", "1000");
    DT(&d, "TTL", "k");
    DT(&d, "PTTL", "k");
    D(&d, "PERSIST", "k");
    D(&d, "TTL", "k");
    D(&d, "PEXPIRE", "k", "1000000");
    DT(&d, "TTL", "k");
    D(&d, "EXPIREAT", "k", fut_s);
    DT(&d, "TTL", "k");
    D(&d, "PEXPIREAT", "k", fut_ms);
    DT(&d, "PTTL", "k");
    D(&d, "PERSIST", "k");
    /* NX XX GT LT: on a key without a TTL (that counts as infinite) */
    D(&d, "EXPIRE", "k", "1000", "XX");
    D(&d, "EXPIRE", "k", "1000", "GT");
    D(&d, "TTL", "k");
    D(&d, "EXPIRE", "k", "1000", "LT");
    DT(&d, "TTL", "k");
    D(&d, "PERSIST", "k");
    D(&d, "EXPIRE", "k", "1000", "NX");
    D(&d, "EXPIRE", "k", "2000", "NX");
    D(&d, "EXPIRE", "k", "2000", "XX");
    D(&d, "EXPIRE", "k", "3000", "GT");
    D(&d, "EXPIRE", "k", "100", "GT");
    D(&d, "EXPIRE", "k", "5000", "LT");
    D(&d, "EXPIRE", "k", "50", "LT");
    D(&d, "EXPIRE", "k", "60", "xx", "gt");
    D(&d, "EXPIRE", "k", "40", "XX", "LT");
    D(&d, "EXPIRE", "k", "50", "LT", "XX");
    D(&d, "PEXPIRE", "k", "100000", "GT");
    D(&d, "PEXPIRE", "k", "1", "GT");
    D(&d, "EXPIREAT", "k", fut2_s, "GT");
    D(&d, "EXPIREAT", "k", fut_s, "GT");
    D(&d, "EXPIREAT", "k", fut_s, "LT");
    D(&d, "PEXPIREAT", "k", fut2_ms, "LT");
    D(&d, "PEXPIREAT", "k", fut2_ms, "GT");
    D(&d, "PEXPIREAT", "k", fut2_ms, "NX");
    D(&d, "PEXPIREAT", "k", fut_ms, "XX");
    D(&d, "EXPIRE", "none", "10", "NX");
    D(&d, "EXPIRE", "none", "10", "LT");
    /* options errors */
    D(&d, "EXPIRE", "k", "10", "NX", "XX");
    D(&d, "EXPIRE", "k", "10", "NX", "GT");
    D(&d, "EXPIRE", "k", "10", "LT", "NX");
    D(&d, "EXPIRE", "k", "10", "GT", "LT");
    D(&d, "PEXPIRE", "k", "10", "LT", "GT");
    D(&d, "EXPIREAT", "k", fut_s, "NX", "XX");
    D(&d, "PEXPIREAT", "k", fut_ms, "XX", "NX");
    D(&d, "EXPIRE", "k", "10", "FOO");
    D(&d, "EXPIRE", "k", "10", "NX", "foo");
    D(&d, "PEXPIRE", "k", "10", "bar");
    D(&d, "EXPIREAT", "k", "10", "baz");
    D(&d, "PEXPIREAT", "k", "10", "");
    D(&d, "EXPIRE", "none", "10", "FOO");
    D(&d, "EXPIRE", "none", "10", "NX", "XX");
    D(&d, "EXPIRE", "k", "abc");
    D(&d, "EXPIRE", "k", "1.5");
    D(&d, "EXPIRE", "k", "");
    D(&d, "PEXPIRE", "k", "10x");
    D(&d, "EXPIREAT", "k", "x");
    D(&d, "PEXPIREAT", "k", "99999999999999999999");
    D(&d, "EXPIRE", "none", "abc");
    /* invalid expire time */
    D(&d, "EXPIRE", "k", "9223372036854775807");
    D(&d, "EXPIRE", "k", "9223372036854775");
    D(&d, "EXPIRE", "k", "-9223372036854775808");
    D(&d, "EXPIRE", "k", "-9223372036854775");
    D(&d, "PEXPIRE", "k", "9223372036854775807");
    D(&d, "PEXPIRE", "k", "-9223372036854775808");
    D(&d, "EXPIREAT", "k", "9223372036854775807");
    D(&d, "EXPIREAT", "k", "-9223372036854775808");
    D(&d, "PEXPIREAT", "k", "9223372036854775807");
    D(&d, "EXPIRE", "none", "9223372036854775807");
    D(&d, "EXISTS", "k");
    /* expire in the past / zero / negative deletes */
    D(&d, "SET", "p1", "v");
    D(&d, "EXPIRE", "p1", "0");
    D(&d, "EXISTS", "p1");
    D(&d, "SET", "p2", "v");
    D(&d, "EXPIRE", "p2", "-10");
    D(&d, "GET", "p2");
    D(&d, "SET", "p3", "v");
    D(&d, "PEXPIRE", "p3", "-1");
    D(&d, "TTL", "p3");
    D(&d, "SET", "p4", "v");
    D(&d, "EXPIREAT", "p4", past_s);
    D(&d, "PTTL", "p4");
    D(&d, "SET", "p5", "v");
    D(&d, "PEXPIREAT", "p5", past_ms);
    D(&d, "EXISTS", "p5");
    D(&d, "SET", "p6", "v");
    D(&d, "EXPIREAT", "p6", "0");
    D(&d, "EXISTS", "p6");
    D(&d, "SET", "p7", "v");
    D(&d, "EXPIRE", "p7", "-10", "NX");
    D(&d, "EXISTS", "p7");
    D(&d, "SET", "p8", "v", "EX", "100");
    D(&d, "EXPIRE", "p8", "-10", "GT");
    D(&d, "EXPIRE", "p8", "-10", "LT");
    D(&d, "EXISTS", "p8");
    /* PERSIST */
    D(&d, "SET", "q", "v", "PX", "1000000");
    D(&d, "PERSIST", "q");
    D(&d, "PERSIST", "q");
    D(&d, "TTL", "q");
    D(&d, "GET", "q");
    /* arity */
    D(&d, "TTL");
    D(&d, "TTL", "a", "b");
    D(&d, "PTTL");
    D(&d, "PTTL", "a", "b");
    D(&d, "EXPIRE", "k");
    D(&d, "EXPIRE");
    D(&d, "PEXPIRE", "k");
    D(&d, "EXPIREAT", "k");
    D(&d, "PEXPIREAT", "k");
    D(&d, "PERSIST");
    D(&d, "PERSIST", "a", "b");
    D(&d, "DBSIZE");
    rdiff_end_both(&d);
}

/* TTL values themselves, in ranges (not differential: they move). */
Test(cmds, ttl_ranges)
{
    rdiff_start_atticdb();
    wire_conn_t *c = wire_open(rdiff_atticdb.port, 10);
    cr_assert_not_null(c);
    long long now = (long long)time(NULL);
    char buf[32];
    long long t;
    cr_assert_str_eq(ONE(c, "SET", "a", "v", "EX", "100"), "+OK\r\n");
    t = reply_int(ONE(c, "TTL", "a"));
    cr_expect(t >= 99 && t <= 100, "TTL after EX 100: %lld", t);
    t = reply_int(ONE(c, "PTTL", "a"));
    cr_expect(t > 98000 && t <= 100000, "PTTL after EX 100: %lld", t);
    cr_assert_str_eq(ONE(c, "SET", "b", "v", "PX", "5500"), "+OK\r\n");
    t = reply_int(ONE(c, "PTTL", "b"));
    cr_expect(t > 4500 && t <= 5500, "PTTL after PX 5500: %lld", t);
    t = reply_int(ONE(c, "TTL", "b"));
    cr_expect(t >= 5 && t <= 6, "TTL after PX 5500 (rounded): %lld", t);
    snprintf(buf, sizeof(buf), "%lld", now + 200);
    cr_assert_str_eq(ONE(c, "SET", "c", "v", "EXAT", buf), "+OK\r\n");
    t = reply_int(ONE(c, "TTL", "c"));
    cr_expect(t >= 198 && t <= 200, "TTL after EXAT now+200: %lld", t);
    snprintf(buf, sizeof(buf), "%lld", (now + 300) * 1000);
    cr_assert_str_eq(ONE(c, "SET", "d", "v", "PXAT", buf), "+OK\r\n");
    t = reply_int(ONE(c, "PTTL", "d"));
    cr_expect(t > 298000 && t <= 300000, "PTTL after PXAT now+300s: %lld", t);
    cr_assert_str_eq(ONE(c, "EXPIRE", "a", "42"), ":1\r\n");
    t = reply_int(ONE(c, "TTL", "a"));
    cr_expect(t >= 41 && t <= 42, "TTL after EXPIRE 42: %lld", t);
    cr_assert_str_eq(ONE(c, "PEXPIRE", "a", "42000"), ":1\r\n");
    t = reply_int(ONE(c, "PTTL", "a"));
    cr_expect(t > 41000 && t <= 42000, "PTTL after PEXPIRE 42000: %lld", t);
    snprintf(buf, sizeof(buf), "%lld", now + 77);
    cr_assert_str_eq(ONE(c, "EXPIREAT", "a", buf), ":1\r\n");
    t = reply_int(ONE(c, "TTL", "a"));
    cr_expect(t >= 75 && t <= 77, "TTL after EXPIREAT now+77: %lld", t);
    snprintf(buf, sizeof(buf), "%lld", (now + 88) * 1000);
    cr_assert_str_eq(ONE(c, "PEXPIREAT", "a", buf), ":1\r\n");
    t = reply_int(ONE(c, "PTTL", "a"));
    cr_expect(t > 86000 && t <= 88000, "PTTL after PEXPIREAT now+88s: %lld", t);
    cr_assert_str_eq(ONE(c, "SET", "a", "w", "KEEPTTL"), "+OK\r\n");
    t = reply_int(ONE(c, "PTTL", "a"));
    cr_expect(t > 86000 && t <= 88000, "PTTL after SET KEEPTTL: %lld", t);
    wire_close(c);
}

/* Keys that really expire, on both. */
Test(cmds, keys_expire)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "SET", "k1", "v", "PX", "100");
    D(&d, "SET", "k2", "a value longer than twenty-four bytes, on disk", "PX", "100");
    D(&d, "SET", "k3", "v");
    D(&d, "PEXPIRE", "k3", "100");
    D(&d, "SET", "k4", "5");
    D(&d, "PEXPIRE", "k4", "150");
    D(&d, "SET", "keep", "v", "PX", "100000");
    RDIFF_AWAIT_EXPIRED(&d, "k1", "k2", "k3", "k4");
    D(&d, "GET", "k1");
    D(&d, "STRLEN", "k2");
    D(&d, "EXISTS", "k3");
    D(&d, "TTL", "k1");
    D(&d, "PTTL", "k2");
    D(&d, "INCR", "k4"); /* starts again from 0 */
    D(&d, "TTL", "k4");  /* no TTL any more */
    D(&d, "APPEND", "k1", "new");
    D(&d, "GET", "k1");
    D(&d, "SET", "k3", "v", "XX"); /* an expired key does not exist */
    D(&d, "GETDEL", "k2");
    D(&d, "PERSIST", "k3");
    D(&d, "MGET", "k1", "k2", "k3", "k4", "keep");
    D(&d, "DBSIZE");
    rdiff_end_both(&d);
}

/* Redis deletes an expired key when a command touches it, so DBSIZE after
 * reading every expired key is exact on Redis. */
Test(cmds, dbsize_after_expiry)
{
    diff_t d;
    rdiff_start_both(&d);
    char past_s[32];
    snprintf(past_s, sizeof(past_s), "%lld", (long long)time(NULL) - 1000);
    D(&d, "SET", "keep", "v");
    D(&d, "SET", "x1", "v", "PX", "50");
    D(&d, "SET", "x2", "a value longer than twenty-four bytes, on disk", "PX", "50");
    D(&d, "SET", "x3", "v");
    D(&d, "PEXPIRE", "x3", "50");
    D(&d, "SET", "y1", "v", "EXAT", past_s);
    D(&d, "SET", "y2", "v", "PXAT", "1");
    D(&d, "SET", "keep", "v", "EXAT", "1", "GET");
    RDIFF_AWAIT_EXPIRED(&d, "x1", "x2", "x3");
    D(&d, "GET", "x1");
    D(&d, "EXISTS", "x2");
    D(&d, "TTL", "x3");
    D(&d, "GET", "y1");
    D(&d, "GET", "y2");
    D(&d, "GET", "keep");
    D(&d, "DBSIZE");
    rdiff_end_both(&d);
}

/* ------------------------------------------------------------------ */
/* FLUSHALL                                                            */

Test(cmds, flushall)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "MSET", "a", "1", "b", "2", "c", "a value longer than twenty-four bytes here");
    D(&d, "SET", "t", "v", "EX", "1000");
    D(&d, "DBSIZE");
    D(&d, "FLUSHALL");
    D(&d, "DBSIZE");
    D(&d, "GET", "a");
    D(&d, "MSET", "a", "1", "b", "2");
    D(&d, "FLUSHALL", "ASYNC");
    D(&d, "DBSIZE");
    D(&d, "MSET", "a", "1", "b", "2");
    D(&d, "flushall", "sync");
    D(&d, "EXISTS", "a", "b");
    D(&d, "SET", "a", "1");
    D(&d, "FLUSHALL", "bad");
    D(&d, "FLUSHALL", "ASYNC", "SYNC");
    D(&d, "FLUSHALL", "SYNC", "x");
    D(&d, "DBSIZE");
    D(&d, "INCR", "a");
    D(&d, "FLUSHALL");
    D(&d, "FLUSHALL");
    D(&d, "INCR", "a");
    rdiff_end_both(&d);
}
