/*
 * test_commands.c - every command AtticDB supports, checked against the
 * replies of a real Redis 7: most tests start a redis-server and an
 * atticdb-server, send the same commands to both and compare the raw reply
 * bytes off the wire. Also: a seeded random differential run (ATTIC_SEED),
 * redis-cli and redis-benchmark against AtticDB, a 1,000-command pipeline,
 * the AtticDB-only replies (SELECT 1, INFO persistence, COMMAND COUNT,
 * CONFIG GET save) and a read-back after a restart.
 *
 * Environment: ATTICDB_SERVER (the server binary), REDIS_SERVER (default:
 * redis-server from PATH; the differential tests are skipped without it),
 * ATTIC_SEED (seed of the random test; printed on failure).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "redis_diff.h"

static int tool_exists(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

static long long reply_int(const char *r)
{
    cr_assert(r[0] == ':', "expected an integer reply, got %s", r);
    return strtoll(r + 1, NULL, 10);
}

/* ------------------------------------------------------------------ */
/* connection-level commands                                           */

TestSuite(cmds, .fini = rdiff_teardown, .timeout = 60);

Test(cmds, ping_echo_select_dbsize)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "PING");
    D(&d, "ping");
    D(&d, "PiNg");
    D(&d, "PING", "hello world");
    D(&d, "PING", "");
    D(&d, "PING", "a", "b");
    D(&d, "ECHO", "hello");
    D(&d, "echo", "");
    D(&d, "ECHO");
    D(&d, "ECHO", "a", "b");
    D(&d, "SELECT", "0");
    D(&d, "SELECT", "abc");
    D(&d, "SELECT", "-1");
    D(&d, "SELECT");
    D(&d, "SELECT", "0", "1");
    D(&d, "DBSIZE");
    D(&d, "SET", "a", "1");
    D(&d, "SET", "b", "2");
    D(&d, "DBSIZE");
    D(&d, "DBSIZE", "x");
    D(&d, "DEL", "a");
    D(&d, "DBSIZE");
    D(&d, "QUIT");
    cr_expect(wire_closed_within(d.r[0], 2000), "redis closes after QUIT");
    cr_expect(wire_closed_within(d.a[0], 2000), "atticdb closes after QUIT");
    rdiff_end_both(&d);
}

Test(cmds, quit_after_pipelined_commands)
{
    diff_t d;
    rdiff_start_both(&d);
    /* Replies before QUIT's +OK are all delivered, then the close. */
    const char *req = "*3\r\n$3\r\nSET\r\n$1\r\nq\r\n$1\r\n1\r\n*2\r\n$4\r\nINCR\r\n$1\r\nq\r\n"
                      "*1\r\n$4\r\nQUIT\r\n*1\r\n$4\r\nPING\r\n";
    rdiff_pipeline(&d, __LINE__, 0, req, strlen(req), 3, "pipelined SET q 1; INCR q; QUIT; PING");
    cr_expect(wire_closed_within(d.r[0], 2000), "redis closes after QUIT");
    cr_expect(wire_closed_within(d.a[0], 2000), "atticdb closes after QUIT (and ignores the PING after it)");
    rdiff_end_both(&d);
}

/* (transactions helper: 16 databases now; SELECT is tested in
 * test_multi.c. Only the range ends are checked here.) */
Test(cmds, select_other_db_is_out_of_range)
{
    rdiff_start_atticdb();
    wire_conn_t *c = wire_open(rdiff_atticdb.port, 10);
    cr_assert_not_null(c);
    cr_expect_str_eq(ONE(c, "SELECT", "16"), "-ERR DB index is out of range\r\n");
    cr_expect_str_eq(ONE(c, "SELECT", "15"), "+OK\r\n");
    cr_expect_str_eq(ONE(c, "SELECT", "0"), "+OK\r\n");
    cr_expect_str_eq(ONE(c, "PING"), "+PONG\r\n");
    wire_close(c);
}

/* The Redis 7.0 replies the differential tests rely on, written out, so
 * AtticDB is checked even where no redis-server is installed. */
Test(cmds, literal_redis7_replies)
{
    rdiff_start_atticdb();
    wire_conn_t *c = wire_open(rdiff_atticdb.port, 10);
    cr_assert_not_null(c);
    static const char *cases[][8] = {
        {"-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n", "foo", "a", "b"},
        {"-ERR unknown command 'foo', with args beginning with: \r\n", "foo"},
        {"-ERR wrong number of arguments for 'get' command\r\n", "GET"},
        {"-ERR wrong number of arguments for 'mset' command\r\n", "MSET", "a"},
        {"-ERR invalid expire time in 'set' command\r\n", "SET", "k", "v", "EX", "0"},
        {"-ERR invalid expire time in 'set' command\r\n", "SET", "k", "v", "PX", "-1"},
        {"-ERR invalid expire time in 'set' command\r\n", "SET", "k", "v", "EX", "9223372036854775807"},
        {"-ERR syntax error\r\n", "SET", "k", "v", "NX", "XX"},
        {"-ERR value is not an integer or out of range\r\n", "SET", "k", "v", "EX", "x"},
        {"-ERR decrement would overflow\r\n", "DECRBY", "n", "-9223372036854775808"},
        {"+OK\r\n", "SET", "n", "9223372036854775807"},
        {"-ERR increment or decrement would overflow\r\n", "INCR", "n"},
        {"-ERR value is not an integer or out of range\r\n", "INCRBY", "n", "1x"},
        {"+OK\r\n", "SET", "k", "v"},
        {"-ERR NX and XX, GT or LT options at the same time are not compatible\r\n", "EXPIRE", "k", "10", "NX", "XX"},
        {"-ERR GT and LT options at the same time are not compatible\r\n", "EXPIRE", "k", "10", "GT", "LT"},
        {"-ERR Unsupported option FOO\r\n", "EXPIRE", "k", "10", "FOO"},
        {"-ERR invalid expire time in 'expire' command\r\n", "EXPIRE", "k", "9223372036854775807"},
        {"-ERR invalid expire time in 'expireat' command\r\n", "EXPIREAT", "k", "9223372036854775807"},
        {"-ERR syntax error\r\n", "FLUSHALL", "bad"},
        {":2\r\n", "EXISTS", "k", "k"},
        {"*2\r\n$1\r\nv\r\n$-1\r\n", "MGET", "k", "nokey"},
        {":-1\r\n", "TTL", "k"},
        {":-2\r\n", "PTTL", "nokey"},
        {"$1\r\nv\r\n", "GETDEL", "k"},
        {"$-1\r\n", "GET", "k"},
        {"+PONG\r\n", "PING"},
        {"$2\r\nhi\r\n", "PING", "hi"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int argc = 0;
        while (argc < 7 && cases[i][argc + 1]) argc++;
        size_t n;
        char *r = wire_cmd(c, argc, &cases[i][1], NULL, &n);
        char *what = wire_cmd_text(argc, &cases[i][1], NULL);
        char *er = wire_escape(r, n, 300), *ew = wire_escape(cases[i][0], strlen(cases[i][0]), 300);
        cr_expect(strcmp(r, cases[i][0]) == 0, "%s\n    want:    %s\n    atticdb: %s", what, ew, er);
        free(what);
        free(er);
        free(ew);
        free(r);
    }
    wire_close(c);
}

/* ------------------------------------------------------------------ */
/* SET                                                                 */

Test(cmds, set_options)
{
    diff_t d;
    rdiff_start_both(&d);
    char fut_s[32], fut_ms[32], past_s[32], past_ms[32];
    time_t now = time(NULL);
    snprintf(fut_s, sizeof(fut_s), "%lld", (long long)now + 1000);
    snprintf(fut_ms, sizeof(fut_ms), "%lld", ((long long)now + 1000) * 1000);
    snprintf(past_s, sizeof(past_s), "%lld", (long long)now - 1000);
    snprintf(past_ms, sizeof(past_ms), "%lld", ((long long)now - 1000) * 1000);

    D(&d, "SET", "k", "v");
    D(&d, "GET", "k");
    D(&d, "set", "k", "v2");
    D(&d, "GET", "k");
    D(&d, "TTL", "k");
    /* NX / XX */
    D(&d, "SET", "k", "nx", "NX");
    D(&d, "GET", "k");
    D(&d, "SET", "new", "nx", "nx");
    D(&d, "GET", "new");
    D(&d, "SET", "missing", "xx", "XX");
    D(&d, "GET", "missing");
    D(&d, "SET", "k", "xx", "xx");
    D(&d, "GET", "k");
    /* GET */
    D(&d, "SET", "k", "g1", "GET");
    D(&d, "SET", "nokey", "g1", "GET");
    D(&d, "GET", "nokey");
    D(&d, "SET", "k", "g2", "GET", "NX");
    D(&d, "GET", "k");
    D(&d, "SET", "g3", "v", "NX", "GET");
    D(&d, "SET", "k", "g4", "XX", "GET");
    D(&d, "SET", "nokey2", "g4", "XX", "GET");
    D(&d, "EXISTS", "nokey2");
    /* EX / PX / EXAT / PXAT */
    D(&d, "SET", "e1", "v", "EX", "1000");
    DT(&d, "TTL", "e1");
    D(&d, "SET", "e2", "v", "PX", "1000000");
    DT(&d, "PTTL", "e2");
    D(&d, "SET", "e3", "v", "EXAT", fut_s);
    DT(&d, "TTL", "e3");
    D(&d, "SET", "e4", "v", "PXAT", fut_ms);
    DT(&d, "PTTL", "e4");
    D(&d, "SET", "e5", "v", "ex", "1000", "nx");
    D(&d, "SET", "e5", "v", "px", "1000", "xx", "get");
    /* KEEPTTL */
    D(&d, "SET", "e1", "kept", "KEEPTTL");
    DT(&d, "TTL", "e1");
    D(&d, "GET", "e1");
    D(&d, "SET", "e1", "dropped");
    D(&d, "TTL", "e1");
    D(&d, "SET", "k", "kt", "KEEPTTL");
    D(&d, "TTL", "k");
    D(&d, "SET", "e2", "x", "KEEPTTL", "GET", "XX");
    DT(&d, "PTTL", "e2");
    /* already in the past: the key is gone (SET answers OK) */
    D(&d, "SET", "past1", "v", "EXAT", past_s);
    D(&d, "GET", "past1");
    D(&d, "SET", "past2", "v", "PXAT", past_ms);
    D(&d, "EXISTS", "past2");
    D(&d, "SET", "past3", "v", "PXAT", "1");
    D(&d, "GET", "past3");
    D(&d, "SET", "k", "v", "EXAT", "1", "GET");
    D(&d, "GET", "k");
    if (!D(&d, "DBSIZE")) {
        /* diagnostics for the report: which keys, and is it only late? */
        D(&d, "EXISTS", "k", "past1", "past2", "past3");
        usleep(300 * 1000);
        D(&d, "DBSIZE");
    }
    rdiff_end_both(&d);
}

Test(cmds, set_errors)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "SET", "k", "orig");
    /* syntax errors */
    D(&d, "SET", "k", "v", "NX", "XX");
    D(&d, "SET", "k", "v", "XX", "NX");
    D(&d, "SET", "k", "v", "EX", "10", "PX", "100");
    D(&d, "SET", "k", "v", "PX", "10", "EX", "100");
    D(&d, "SET", "k", "v", "EX", "10", "EXAT", "100");
    D(&d, "SET", "k", "v", "EXAT", "10", "PXAT", "100");
    D(&d, "SET", "k", "v", "KEEPTTL", "EX", "10");
    D(&d, "SET", "k", "v", "PX", "10", "KEEPTTL");
    D(&d, "SET", "k", "v", "EX");
    D(&d, "SET", "k", "v", "PX");
    D(&d, "SET", "k", "v", "EXAT");
    D(&d, "SET", "k", "v", "PXAT");
    D(&d, "SET", "k", "v", "FOO");
    D(&d, "SET", "k", "v", "NX", "FOO");
    D(&d, "SET", "k", "v", "10");
    D(&d, "SET", "k", "v", "GET", "GET");
    D(&d, "SET", "k", "v", "NX", "NX");
    D(&d, "SET", "k", "v", "EX", "10", "EX", "10");
    D(&d, "SET", "k", "v", "KEEPTTL", "KEEPTTL");
    /* not integers */
    D(&d, "SET", "k", "v", "EX", "abc");
    D(&d, "SET", "k", "v", "PX", "1.5");
    D(&d, "SET", "k", "v", "EX", "");
    D(&d, "SET", "k", "v", "EX", " 10");
    D(&d, "SET", "k", "v", "EX", "10 ");
    D(&d, "SET", "k", "v", "EXAT", "1e3");
    D(&d, "SET", "k", "v", "PXAT", "99999999999999999999");
    D(&d, "SET", "k", "v", "EX", "+10");
    /* invalid expire times */
    D(&d, "SET", "k", "v", "EX", "0");
    D(&d, "SET", "k", "v", "PX", "0");
    D(&d, "SET", "k", "v", "EXAT", "0");
    D(&d, "SET", "k", "v", "PXAT", "0");
    D(&d, "SET", "k", "v", "EX", "-1");
    D(&d, "SET", "k", "v", "PX", "-100");
    D(&d, "SET", "k", "v", "EXAT", "-5");
    D(&d, "SET", "k", "v", "PXAT", "-5");
    D(&d, "SET", "k", "v", "EX", "9223372036854775807");
    D(&d, "SET", "k", "v", "EX", "9223372036854775");
    D(&d, "SET", "k", "v", "EX", "9223372036854776");
    D(&d, "SET", "k", "v", "PX", "9223372036854775807");
    D(&d, "SET", "k", "v", "EXAT", "9223372036854775807");
    D(&d, "SET", "k", "v", "PXAT", "9223372036854775807");
    D(&d, "SET", "k", "v", "EX", "-9223372036854775808");
    D(&d, "SET", "k", "v", "NX", "EX", "0");
    D(&d, "SET", "k", "v", "GET", "EX", "0");
    /* none of these changed the key */
    D(&d, "GET", "k");
    D(&d, "TTL", "k");
    /* arity */
    D(&d, "SET");
    D(&d, "SET", "k");
    D(&d, "DBSIZE");
    rdiff_end_both(&d);
}

/* ------------------------------------------------------------------ */
/* GET DEL EXISTS MSET MGET GETDEL STRLEN                              */

Test(cmds, get_del_exists_mset_mget)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "GET", "nothing");
    D(&d, "SET", "a", "1");
    D(&d, "SET", "b", "2");
    D(&d, "GET", "a");
    D(&d, "EXISTS", "a");
    D(&d, "EXISTS", "a", "a", "a");
    D(&d, "EXISTS", "a", "b", "c", "b");
    D(&d, "EXISTS", "zz");
    D(&d, "DEL", "zz");
    D(&d, "DEL", "a", "a");
    D(&d, "DEL", "a");
    D(&d, "GET", "a");
    D(&d, "MSET", "a", "1", "b", "22", "c", "333");
    D(&d, "MGET", "a", "b", "c", "d");
    D(&d, "MGET", "d");
    D(&d, "MGET", "a", "a");
    D(&d, "MSET", "a", "x", "a", "y");
    D(&d, "GET", "a");
    D(&d, "MSET", "a", "1", "b");
    D(&d, "MSET", "a");
    D(&d, "MSET");
    D(&d, "MGET");
    D(&d, "GET", "a");
    D(&d, "DEL", "a", "b", "c", "d");
    D(&d, "DBSIZE");
    /* STRLEN, GETDEL */
    D(&d, "STRLEN", "nothing");
    D(&d, "SET", "s", "hello");
    D(&d, "STRLEN", "s");
    D(&d, "SET", "s", "");
    D(&d, "STRLEN", "s");
    D(&d, "SET", "s", "a value that is longer than twenty-four bytes, so it lives in the log");
    D(&d, "STRLEN", "s");
    D(&d, "INCR", "n");
    D(&d, "STRLEN", "n");
    D(&d, "INCRBY", "n", "-123456");
    D(&d, "STRLEN", "n");
    D(&d, "GETDEL", "s");
    D(&d, "GETDEL", "s");
    D(&d, "EXISTS", "s");
    D(&d, "GETDEL", "n");
    D(&d, "SET", "t", "v", "EX", "1000");
    D(&d, "GETDEL", "t");
    D(&d, "TTL", "t");
    D(&d, "SET", "t", "v");
    D(&d, "TTL", "t");
    /* arity */
    D(&d, "GET");
    D(&d, "GET", "a", "b");
    D(&d, "DEL");
    D(&d, "EXISTS");
    D(&d, "STRLEN");
    D(&d, "STRLEN", "a", "b");
    D(&d, "GETDEL");
    D(&d, "GETDEL", "a", "b");
    D(&d, "DBSIZE");
    rdiff_end_both(&d);
}

/* ------------------------------------------------------------------ */
/* INCR family                                                         */

Test(cmds, incr_decr)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "INCR", "n");
    D(&d, "INCR", "n");
    D(&d, "GET", "n");
    D(&d, "DECR", "n");
    D(&d, "DECR", "n");
    D(&d, "DECR", "n");
    D(&d, "GET", "n");
    D(&d, "INCRBY", "n", "100");
    D(&d, "INCRBY", "n", "-1000");
    D(&d, "DECRBY", "n", "7");
    D(&d, "DECRBY", "n", "-7");
    D(&d, "DECR", "fresh");
    D(&d, "INCRBY", "fresh2", "5");
    D(&d, "DECRBY", "fresh3", "5");
    D(&d, "INCRBY", "n", "0");
    D(&d, "GET", "n");
    /* values that are and are not integers */
    const char *vals[] = {"10", "-10", "0", "007", "-0", "+5", " 5", "5 ", "1.5", "abc", "", "1e3",
                          "9223372036854775807", "-9223372036854775808", "9223372036854775808",
                          "-9223372036854775809", "0x10", "12345678901234567890123456789"};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        D(&d, "SET", "v", vals[i]);
        D(&d, "INCR", "v");
        D(&d, "GET", "v");
        D(&d, "SET", "v", vals[i]);
        D(&d, "DECR", "v");
        D(&d, "SET", "v", vals[i]);
        D(&d, "INCRBY", "v", "3");
        D(&d, "DECRBY", "v", "3");
        D(&d, "GET", "v");
        /* and as the increment */
        D(&d, "SET", "w", "1");
        D(&d, "INCRBY", "w", vals[i]);
        D(&d, "SET", "w", "1");
        D(&d, "DECRBY", "w", vals[i]);
        D(&d, "GET", "w");
    }
    /* overflow */
    D(&d, "SET", "o", "9223372036854775807");
    D(&d, "INCR", "o");
    D(&d, "INCRBY", "o", "1");
    D(&d, "INCRBY", "o", "0");
    D(&d, "DECRBY", "o", "-1");
    D(&d, "GET", "o");
    D(&d, "SET", "o", "-9223372036854775808");
    D(&d, "DECR", "o");
    D(&d, "DECRBY", "o", "1");
    D(&d, "INCRBY", "o", "-1");
    D(&d, "INCRBY", "o", "9223372036854775807");
    D(&d, "GET", "o");
    D(&d, "SET", "o", "0");
    D(&d, "DECRBY", "o", "-9223372036854775808");
    D(&d, "DECRBY", "o", "-9223372036854775807");
    D(&d, "DECRBY", "o", "9223372036854775807");
    D(&d, "INCRBY", "o", "-9223372036854775808");
    D(&d, "INCRBY", "o", "-9223372036854775808");
    D(&d, "GET", "o");
    D(&d, "DECRBY", "neverset", "-9223372036854775808");
    D(&d, "EXISTS", "neverset");
    D(&d, "SET", "big", "a value that is longer than twenty-four bytes for the log");
    D(&d, "INCR", "big");
    /* INCR keeps the TTL */
    D(&d, "SET", "t", "5", "EX", "1000");
    D(&d, "INCR", "t");
    DT(&d, "TTL", "t");
    /* arity */
    D(&d, "INCR");
    D(&d, "INCR", "a", "b");
    D(&d, "DECR");
    D(&d, "DECR", "a", "b");
    D(&d, "INCRBY", "a");
    D(&d, "INCRBY", "a", "1", "2");
    D(&d, "DECRBY", "a");
    D(&d, "DECRBY", "a", "1", "2");
    D(&d, "DBSIZE");
    rdiff_end_both(&d);
}

/* ------------------------------------------------------------------ */
/* APPEND                                                              */

Test(cmds, append)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "APPEND", "a", "hello");
    D(&d, "GET", "a");
    D(&d, "APPEND", "a", " world");
    D(&d, "GET", "a");
    D(&d, "APPEND", "a", "");
    D(&d, "APPEND", "empty", "");
    D(&d, "EXISTS", "empty");
    D(&d, "GET", "empty");
    /* grow past 24 bytes so the value lives on disk, then keep appending */
    D(&d, "APPEND", "a", ", and this part makes it longer than 24 bytes");
    D(&d, "GET", "a");
    D(&d, "STRLEN", "a");
    for (int i = 0; i < 20; i++) D(&d, "APPEND", "a", "0123456789abcdefghijklmnopqrstuvwxyz");
    D(&d, "GET", "a");
    D(&d, "STRLEN", "a");
    /* on an integer created by INCR */
    D(&d, "INCR", "n");
    D(&d, "APPEND", "n", "23");
    D(&d, "GET", "n");
    D(&d, "INCR", "n");
    D(&d, "APPEND", "n", "x");
    D(&d, "INCR", "n");
    D(&d, "GET", "n");
    D(&d, "INCRBY", "m", "-9223372036854775808");
    D(&d, "APPEND", "m", "1");
    D(&d, "GET", "m");
    D(&d, "INCR", "m");
    /* APPEND keeps the TTL */
    D(&d, "SET", "t", "v", "EX", "1000");
    D(&d, "APPEND", "t", "w");
    DT(&d, "TTL", "t");
    D(&d, "GET", "t");
    /* arity */
    D(&d, "APPEND");
    D(&d, "APPEND", "a");
    D(&d, "APPEND", "a", "b", "c");
    rdiff_end_both(&d);
}

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
    usleep(300 * 1000);
    D(&d, "GET", "k1");
    D(&d, "STRLEN", "k2");
    D(&d, "EXISTS", "k3");
    D(&d, "TTL", "k1");
    D(&d, "PTTL", "k2");
    D(&d, "INCR", "k4");     /* starts again from 0 */
    D(&d, "TTL", "k4");      /* no TTL any more */
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
    usleep(200 * 1000);
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

/* ------------------------------------------------------------------ */
/* unknown commands, arity                                             */

Test(cmds, unknown_and_arity)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "foo");
    D(&d, "foo", "a", "b");
    D(&d, "FOO", "a");
    D(&d, "nosuchcommand", "with", "many", "args", "here");
    D(&d, "foo", "a long argument that redis cuts somewhere, maybe at one hundred and twenty-eight bytes "
                 "or so, let us see if it does it the same way xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    D(&d, "foo", "");
    D(&d, "foo", "a b", "c'd");
    D(&d, "");
    D(&d, "GETT", "k");
    D(&d, "SETX", "k", "v");
    /* every command with too few / too many arguments */
    D(&d, "PING", "a", "b");
    D(&d, "ECHO");
    D(&d, "ECHO", "a", "b");
    D(&d, "SELECT");
    D(&d, "SELECT", "0", "0");
    D(&d, "DBSIZE", "a");
    D(&d, "SET");
    D(&d, "SET", "k");
    D(&d, "GET");
    D(&d, "GET", "a", "b");
    D(&d, "DEL");
    D(&d, "EXISTS");
    D(&d, "MSET");
    D(&d, "MSET", "a");
    D(&d, "MSET", "a", "b", "c");
    D(&d, "MGET");
    D(&d, "INCR");
    D(&d, "INCR", "a", "b");
    D(&d, "INCRBY", "a");
    D(&d, "INCRBY", "a", "1", "2");
    D(&d, "DECR");
    D(&d, "DECR", "a", "b");
    D(&d, "DECRBY", "a");
    D(&d, "DECRBY", "a", "1", "2");
    D(&d, "APPEND", "a");
    D(&d, "APPEND", "a", "b", "c");
    D(&d, "STRLEN");
    D(&d, "STRLEN", "a", "b");
    D(&d, "GETDEL");
    D(&d, "GETDEL", "a", "b");
    D(&d, "TTL");
    D(&d, "TTL", "a", "b");
    D(&d, "PTTL");
    D(&d, "PTTL", "a", "b");
    D(&d, "EXPIRE");
    D(&d, "EXPIRE", "a");
    D(&d, "PEXPIRE", "a");
    D(&d, "EXPIREAT", "a");
    D(&d, "PEXPIREAT", "a");
    D(&d, "PERSIST");
    D(&d, "PERSIST", "a", "b");
    D(&d, "get");
    D(&d, "Set", "x");
    D(&d, "DBSIZE");
    D(&d, "PING");
    rdiff_end_both(&d);
}

/* ------------------------------------------------------------------ */
/* empty, binary and large values                                      */

#define DBIN(d, n, ...)                                                                              \
    do {                                                                                             \
        const char *a_[] = {__VA_ARGS__};                                                            \
        rdiff_cmd((d), __LINE__, 0, RDIFF_EXACT, (int)(sizeof(a_) / sizeof(a_[0])), a_, lens_);          \
    } while (0)

Test(cmds, empty_and_binary)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "SET", "", "");
    D(&d, "GET", "");
    D(&d, "STRLEN", "");
    D(&d, "EXISTS", "");
    D(&d, "APPEND", "", "x");
    D(&d, "GET", "");
    D(&d, "SET", "e", "");
    D(&d, "GET", "e");
    D(&d, "MGET", "e", "", "nope");
    D(&d, "ECHO", "");
    D(&d, "DEL", "");
    D(&d, "DBSIZE");

    static const char bin[] = "a\0b\r\nc\r\n\0\xff\xfe$3\r\n*1\r\n";
    const size_t binlen = sizeof(bin) - 1;
    static const char key[] = "k\0\r\ney";
    const size_t keylen = sizeof(key) - 1;
    static const char longbin[] = "\0\0\0\r\n\r\n\r\n this binary value is longer than 24 bytes \0\r\n\xff end";
    const size_t longlen = sizeof(longbin) - 1;
    {
        const size_t lens_[] = {3, keylen, binlen};
        DBIN(&d, 3, "SET", key, bin);
    }
    {
        const size_t lens_[] = {3, keylen};
        DBIN(&d, 2, "GET", key);
        DBIN(&d, 2, "STRLEN", key);
        DBIN(&d, 2, "EXISTS", key);
    }
    {
        const size_t lens_[] = {6, keylen, longlen};
        DBIN(&d, 3, "APPEND", key, longbin);
    }
    {
        const size_t lens_[] = {3, keylen};
        DBIN(&d, 2, "GET", key);
    }
    {
        const size_t lens_[] = {3, 2, longlen};
        DBIN(&d, 3, "SET", "k2", longbin);
        DBIN(&d, 3, "SET", "k2", longbin);
    }
    {
        const size_t lens_[] = {4, keylen, 2, 1};
        DBIN(&d, 4, "MGET", key, "k2", "k");
    }
    {
        const size_t lens_[] = {4, binlen, binlen, 1, 1};
        DBIN(&d, 5, "MSET", bin, bin, "z", "\0");
    }
    {
        const size_t lens_[] = {3, binlen};
        DBIN(&d, 2, "GET", bin);
    }
    {
        const size_t lens_[] = {3, 1};
        DBIN(&d, 2, "GET", "z");
    }
    {
        const size_t lens_[] = {4, binlen};
        DBIN(&d, 2, "ECHO", bin);
        DBIN(&d, 2, "PING", bin);
    }
    {
        const size_t lens_[] = {3, 1, 2};
        DBIN(&d, 3, "SET", "n", "1\0");
    }
    {
        const size_t lens_[] = {4, 1};
        DBIN(&d, 2, "INCR", "n");
    }
    {
        const size_t lens_[] = {6, 1, 3};
        DBIN(&d, 3, "INCRBY", "m", "1\0" "2");
    }
    {
        const size_t lens_[] = {3, 1, 1, 2, 3};
        DBIN(&d, 5, "SET", "x", "v", "E\0", "100");
    }
    {
        const size_t lens_[] = {6, keylen, 4};
        DBIN(&d, 3, "EXPIRE", key, "1000");
    }
    {
        const size_t lens_[] = {7, keylen};
        DBIN(&d, 2, "PERSIST", key);
    }
    {
        const size_t lens_[] = {6, keylen};
        DBIN(&d, 2, "GETDEL", key);
    }
    {
        const size_t lens_[] = {3, keylen};
        DBIN(&d, 2, "DEL", key);
    }
    {
        const size_t lens_[] = {3, 1, 2};
        DBIN(&d, 3, "foo", "\0", "\r\n");
    }
    D(&d, "DBSIZE");
    rdiff_end_both(&d);
}

Test(cmds, large_values, .timeout = 60)
{
    diff_t d;
    rdiff_start_both(&d);
    size_t n100k = 100 * 1024, n1m = 1024 * 1024;
    char *v100k = malloc(n100k), *v1m = malloc(n1m);
    for (size_t i = 0; i < n100k; i++) v100k[i] = (char)('a' + i % 26);
    for (size_t i = 0; i < n1m; i++) v1m[i] = (char)(i * 2654435761u >> 24); /* all byte values */
    {
        const size_t lens[] = {3, 4, n100k};
        rdiff_cmd(&d, __LINE__, 0, RDIFF_EXACT, 3, (const char *[]){"SET", "k100", v100k}, lens);
    }
    {
        const size_t lens[] = {3, 2, n1m};
        rdiff_cmd(&d, __LINE__, 0, RDIFF_EXACT, 3, (const char *[]){"SET", "k1", v1m}, lens);
    }
    D(&d, "GET", "k100");
    D(&d, "GET", "k1");
    D(&d, "STRLEN", "k100");
    D(&d, "STRLEN", "k1");
    D(&d, "MGET", "k100", "k1", "none");
    D(&d, "APPEND", "k100", "tail");
    D(&d, "GET", "k100");
    {
        const size_t lens[] = {6, 4, n1m};
        rdiff_cmd(&d, __LINE__, 0, RDIFF_EXACT, 3, (const char *[]){"APPEND", "k100", v1m}, lens);
    }
    D(&d, "STRLEN", "k100");
    D(&d, "GET", "k100");
    {
        const size_t lens[] = {4, n100k};
        rdiff_cmd(&d, __LINE__, 0, RDIFF_EXACT, 2, (const char *[]){"ECHO", v100k}, lens);
    }
    {
        const size_t lens[] = {3, 2, n100k, 3};
        rdiff_cmd(&d, __LINE__, 0, RDIFF_EXACT, 4, (const char *[]){"SET", "k1", v100k, "GET"}, lens);
    }
    D(&d, "GETDEL", "k1");
    D(&d, "GET", "k1");
    {
        const size_t lens[] = {3, n100k, 1};
        rdiff_cmd(&d, __LINE__, 0, RDIFF_EXACT, 3, (const char *[]){"SET", v100k, "v"}, lens);
        rdiff_cmd(&d, __LINE__, 0, RDIFF_EXACT, 2, (const char *[]){"GET", v100k}, lens);
    }
    D(&d, "DBSIZE");
    free(v100k);
    free(v1m);
    rdiff_end_both(&d);
}

/* ------------------------------------------------------------------ */
/* seeded random differential run                                      */

static uint64_t rng_state;

static unsigned rn(unsigned n)
{
    return rdiff_below(&rng_state, n);
}

typedef struct rcmd {
    int argc;
    char *argv[16];
    size_t lens[16];
} rcmd_t;

static void radd(rcmd_t *c, const char *p, size_t n)
{
    c->argv[c->argc] = malloc(n + 1);
    memcpy(c->argv[c->argc], p, n);
    c->argv[c->argc][n] = '\0';
    c->lens[c->argc] = n;
    c->argc++;
}

static void radds(rcmd_t *c, const char *s)
{
    radd(c, s, strlen(s));
}

static void rfree(rcmd_t *c)
{
    for (int i = 0; i < c->argc; i++) free(c->argv[i]);
    c->argc = 0;
}

static void rkey(rcmd_t *c)
{
    static const char *keys[] = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "", "key\r\n\0x"};
    unsigned i = rn(10);
    radd(c, keys[i], i == 9 ? 7 : strlen(keys[i]));
}

static void rval(rcmd_t *c)
{
    char buf[512];
    switch (rn(10)) {
    case 0: radds(c, ""); break;
    case 1: snprintf(buf, sizeof(buf), "%d", (int)rn(2000) - 1000); radds(c, buf); break;
    case 2: radds(c, rn(2) ? "9223372036854775800" : "-9223372036854775800"); break;
    case 3: radds(c, rn(2) ? "abc" : "1.5"); break;
    case 4: {
        size_t n = 25 + rn(300); /* lives on disk */
        for (size_t i = 0; i < n; i++) buf[i] = (char)('a' + rn(26));
        radd(c, buf, n);
        break;
    }
    case 5: radd(c, "b\0i\r\nn", 6); break;
    case 6: {
        size_t n = rn(24);
        for (size_t i = 0; i < n; i++) buf[i] = (char)rn(256);
        radd(c, buf, n);
        break;
    }
    default: snprintf(buf, sizeof(buf), "v%u", rn(100)); radds(c, buf); break;
    }
}

static void rnd_int_arg(rcmd_t *c)
{
    char buf[32];
    switch (rn(8)) {
    case 0: radds(c, "9223372036854775807"); break;
    case 1: radds(c, "-9223372036854775808"); break;
    case 2: radds(c, "x"); break;
    default: snprintf(buf, sizeof(buf), "%d", (int)rn(200) - 100); radds(c, buf); break;
    }
}

static void rttl(rcmd_t *c, int ms)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%u", (100000 + rn(100000)) * (ms ? 1000 : 1));
    radds(c, buf);
}

static void rgen(rcmd_t *c)
{
    static const char *opts_set[] = {"NX", "XX", "GET", "KEEPTTL", "EX", "PX"};
    static const char *opts_exp[] = {"NX", "XX", "GT", "LT"};
    switch (rn(22)) {
    case 0: case 1: case 2: {
        radds(c, "SET"), rkey(c), rval(c);
        int nopt = (int)rn(3);
        for (int i = 0; i < nopt; i++) {
            const char *o = opts_set[rn(6)];
            radds(c, o);
            if (strcmp(o, "EX") == 0) rttl(c, 0);
            else if (strcmp(o, "PX") == 0) rttl(c, 1);
        }
        break;
    }
    case 3: case 4: radds(c, "GET"), rkey(c); break;
    case 5: radds(c, "DEL"), rkey(c); if (rn(2)) rkey(c); break;
    case 6: radds(c, "EXISTS"), rkey(c), rkey(c), rkey(c); break;
    case 7: radds(c, "INCR"), rkey(c); break;
    case 8: radds(c, "INCRBY"), rkey(c), rnd_int_arg(c); break;
    case 9: radds(c, "DECRBY"), rkey(c), rnd_int_arg(c); break;
    case 10: radds(c, "DECR"), rkey(c); break;
    case 11: radds(c, "APPEND"), rkey(c), rval(c); break;
    case 12: radds(c, "STRLEN"), rkey(c); break;
    case 13: radds(c, "GETDEL"), rkey(c); break;
    case 14: {
        radds(c, "MSET");
        int n = 1 + (int)rn(3);
        for (int i = 0; i < n; i++) rkey(c), rval(c);
        break;
    }
    case 15: radds(c, "MGET"), rkey(c), rkey(c), rkey(c); break;
    case 16: radds(c, "PERSIST"), rkey(c); break;
    case 17: {
        int ms = (int)rn(2);
        radds(c, ms ? "PEXPIRE" : "EXPIRE"), rkey(c), rttl(c, ms);
        if (rn(2)) radds(c, opts_exp[rn(4)]);
        break;
    }
    case 18: radds(c, "DBSIZE"); break;
    case 19: radds(c, rn(2) ? "TTL" : "PTTL"), rkey(c); break;
    case 20: radds(c, "EXPIRE"), rkey(c), radds(c, rn(2) ? "-1" : "0"); break; /* deletes */
    default:
        if (rn(20) == 0) radds(c, "FLUSHALL");
        else radds(c, "GET"), rkey(c);
        break;
    }
}

static void run_random(int batch_size, const char *name)
{
    diff_t d;
    rdiff_start_both(&d);
    uint64_t seed = rdiff_seed();
    rng_state = seed;
    enum { TOTAL = 3000, BATCH = 50 };
    cr_assert(batch_size >= 1 && batch_size <= BATCH);
    rcmd_t batch[BATCH];
    memset(batch, 0, sizeof(batch));
    for (int done = 0; done < TOTAL && d.mismatches < 20; done += batch_size) {
        wire_buf_t req = {0};
        for (int i = 0; i < batch_size; i++) {
            rgen(&batch[i]);
            wire_encode(&req, batch[i].argc, (const char *const *)batch[i].argv, batch[i].lens);
        }
        /* pipelined: both get the whole batch in one write */
        cr_assert_eq(wire_write(d.r[0], req.p, req.len), 0);
        cr_assert_eq(wire_write(d.a[0], req.p, req.len), 0);
        wire_buf_free(&req);
        for (int i = 0; i < batch_size; i++) {
            size_t rn_, an;
            char *rr = wire_reply(d.r[0], &rn_), *ar = wire_reply(d.a[0], &an);
            const char *cmd0 = batch[i].argv[0];
            int norm = strcmp(cmd0, "TTL") == 0 || strcmp(cmd0, "PTTL") == 0 ? RDIFF_POSITIVE : RDIFF_EXACT;
            rdiff_normalize(&rr, &rn_, norm);
            rdiff_normalize(&ar, &an, norm);
            char *what = wire_cmd_text(batch[i].argc, (const char *const *)batch[i].argv, batch[i].lens);
            char label[700];
            snprintf(label, sizeof(label), "[%s, ATTIC_SEED=%" PRIu64 ", command %d] %s", name, seed,
                     done + i + 1, what);
            rdiff_compare(&d, __LINE__, label, rr, rn_, ar, an);
            free(what);
            free(rr);
            free(ar);
            rfree(&batch[i]);
        }
    }
    cr_expect(d.mismatches > 0 || d.step == TOTAL, "ran %d of %d commands", d.step, TOTAL);
    /* final state, key by key */
    D(&d, "DBSIZE");
    D(&d, "MGET", "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "");
    if (d.mismatches)
        fprintf(stderr, "%s: seed %" PRIu64 " (rerun with ATTIC_SEED=%" PRIu64 ")\n", name, seed, seed);
    rdiff_end_both(&d);
}

/* One command at a time: finds differences in what each command does. */
Test(cmds, random_differential, .timeout = 120)
{
    run_random(1, "random_differential");
}

/* The same, 50 commands per write: replies in order, and each command sees
 * exactly the effects of the commands before it on the connection. */
Test(cmds, random_differential_pipelined, .timeout = 120)
{
    run_random(50, "random_differential_pipelined");
}

/* ------------------------------------------------------------------ */
/* pipelining                                                          */

Test(cmds, pipeline_1000_in_one_write)
{
    diff_t d;
    rdiff_start_both(&d);
    enum { N = 1000 };
    wire_buf_t req = {0};
    char k[32], v[64];
    for (int i = 0; i < N; i++) {
        snprintf(k, sizeof(k), "p:%d", i % 37);
        snprintf(v, sizeof(v), "value-%d", i);
        switch (i % 9) {
        case 0: wire_encode(&req, 3, (const char *[]){"SET", k, v}, NULL); break;
        case 1: wire_encode(&req, 2, (const char *[]){"GET", k}, NULL); break;
        case 2: wire_encode(&req, 2, (const char *[]){"INCR", "counter"}, NULL); break;
        case 3: wire_encode(&req, 3, (const char *[]){"APPEND", k, "+"}, NULL); break;
        case 4: wire_encode(&req, 1, (const char *[]){"DBSIZE"}, NULL); break;
        case 5: /* errors the frontend can answer at once, between writes */
            if (i % 2) wire_encode(&req, 5, (const char *[]){"SET", k, v, "EX", "0"}, NULL);
            else wire_encode(&req, 2, (const char *[]){"nosuchcmd", k}, NULL);
            break;
        case 6: wire_encode(&req, 2, (const char *[]){"PING", v}, NULL); break;
        case 7: wire_encode(&req, 2, (const char *[]){"GETDEL", k}, NULL); break;
        default: wire_encode(&req, 2, (const char *[]){"STRLEN", k}, NULL); break;
        }
    }
    cr_assert_eq(wire_write(d.r[0], req.p, req.len), 0);
    cr_assert_eq(wire_write(d.a[0], req.p, req.len), 0);
    wire_buf_free(&req);
    for (int i = 0; i < N && d.mismatches < 10; i++) {
        size_t rn_, an;
        char *rr = wire_reply(d.r[0], &rn_), *ar = wire_reply(d.a[0], &an);
        char label[64];
        snprintf(label, sizeof(label), "pipelined command %d of %d", i, N);
        rdiff_compare(&d, __LINE__, label, rr, rn_, ar, an);
        free(rr);
        free(ar);
    }
    D(&d, "GET", "counter");
    rdiff_end_both(&d);
}

/* The smallest pipelined case: each read sees exactly the writes before it
 * on the connection, not the ones after it. */
Test(cmds, pipeline_read_your_writes)
{
    diff_t d;
    rdiff_start_both(&d);
    const char *req = "*3\r\n$3\r\nSET\r\n$1\r\np\r\n$1\r\n1\r\n"
                      "*2\r\n$3\r\nGET\r\n$1\r\np\r\n"
                      "*3\r\n$3\r\nSET\r\n$1\r\np\r\n$1\r\n2\r\n"
                      "*2\r\n$3\r\nGET\r\n$1\r\np\r\n"
                      "*3\r\n$3\r\nSET\r\n$1\r\np\r\n$1\r\n3\r\n";
    const char *want = "+OK\r\n$1\r\n1\r\n+OK\r\n$1\r\n2\r\n+OK\r\n";
    wire_write(d.r[0], req, strlen(req));
    wire_write(d.a[0], req, strlen(req));
    wire_buf_t rr = {0}, ar = {0};
    for (int i = 0; i < 5; i++) {
        size_t n;
        char *x = wire_reply(d.r[0], &n);
        wire_buf_add(&rr, x, n);
        free(x);
        x = wire_reply(d.a[0], &n);
        wire_buf_add(&ar, x, n);
        free(x);
    }
    cr_expect_str_eq(rr.p, want, "(test check) redis");
    rdiff_compare(&d, __LINE__, "pipelined in one write: SET p 1; GET p; SET p 2; GET p; SET p 3", rr.p, rr.len, ar.p, ar.len);
    wire_buf_free(&rr);
    wire_buf_free(&ar);
    rdiff_end_both(&d);
}

/* Acknowledged writes are visible at once on every other connection (the
 * connections are spread over the frontends). */
Test(cmds, other_connections_see_acked_writes)
{
    rdiff_start_atticdb();
    enum { CONNS = 8, ROUNDS = 400 };
    wire_conn_t *c[CONNS];
    for (int i = 0; i < CONNS; i++) cr_assert_not_null(c[i] = wire_open(rdiff_atticdb.port, 10));
    char v[32], want[64];
    int bad = 0;
    for (int i = 0; i < ROUNDS && bad < 5; i++) {
        snprintf(v, sizeof(v), "%d", i);
        const char *r = ONE(c[i % CONNS], "SET", "shared", v);
        cr_assert_str_eq(r, "+OK\r\n");
        r = ONE(c[(i + 3) % CONNS], "GET", "shared");
        snprintf(want, sizeof(want), "$%zu\r\n%s\r\n", strlen(v), v);
        if (strcmp(r, want) != 0) {
            bad++;
            cr_expect_fail("round %d: SET shared %s on connection %d, then GET on connection %d gave %s", i, v,
                           i % CONNS, (i + 3) % CONNS, r);
        }
        r = ONE(c[(i + 5) % CONNS], "INCR", "ctr");
        snprintf(want, sizeof(want), ":%d\r\n", i + 1);
        if (strcmp(r, want) != 0) {
            bad++;
            cr_expect_fail("round %d: INCR ctr on connection %d gave %s, want %d", i, (i + 5) % CONNS, r, i + 1);
        }
    }
    for (int i = 0; i < CONNS; i++) wire_close(c[i]);
}

/* Inline commands (as telnet or nc send them). */
Test(cmds, inline_commands)
{
    diff_t d;
    rdiff_start_both(&d);
    const char *req = "PING\r\nset inl 5\r\nincr inl\r\nget inl\nECHO hi\r\n";
    rdiff_pipeline(&d, __LINE__, 0, req, strlen(req), 5, "inline: PING; set inl 5; incr inl; get inl; ECHO hi");
    rdiff_end_both(&d);
}

/* ------------------------------------------------------------------ */
/* real tools                                                          */

static char *run_capture(const char *cmd, int *status)
{
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f, "popen %s", cmd);
    wire_buf_t b = {0};
    char tmp[4096];
    size_t n;
    while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) wire_buf_add(&b, tmp, n);
    *status = pclose(f);
    return b.p ? b.p : strdup("");
}

Test(cmds, redis_cli)
{
    if (!tool_exists("redis-cli")) cr_skip_test("redis-cli not installed");
    int have_redis = wire_redis_path() != NULL;
    if (have_redis) cr_assert_eq(rdiff_redis_start(NULL), 0, "redis-server did not start");
    rdiff_start_atticdb();
    const char *scripts[][2] = {
        {"redis-cli -p %d set a b", "OK\n"},
        {"redis-cli -p %d get a", "b\n"},
        {"redis-cli -p %d get nope", "\n"},
        {"redis-cli -p %d incr a", "ERR value is not an integer or out of range\n\n"},
        {"redis-cli -p %d mget a nope", "b\n\n"},
        {"redis-cli -p %d del a a", "1\n"},
        {"printf 'set x 1\\nincr x\\nget x\\n' | redis-cli -p %d", "OK\n2\n2\n"},
        {"printf 'set y \"hello world\"\\nappend y !\\nget y\\nstrlen y\\nexists y x nope\\n' | redis-cli -p %d",
         "OK\n12\nhello world!\n12\n2\n"},
        {"printf 'ping\\necho hi\\nselect 0\\ndbsize\\n' | redis-cli -p %d", "PONG\nhi\nOK\n2\n"},
        {"redis-cli -p %d --no-raw ttl x", "(integer) -1\n"},
        {"echo value-from-stdin | redis-cli -p %d -x set z", "OK\n"},
        {"redis-cli -p %d get z", "value-from-stdin\n\n"},
    };
    for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
        char cmd[512];
        int st;
        snprintf(cmd, sizeof(cmd), scripts[i][0], rdiff_atticdb.port);
        char *out = run_capture(cmd, &st);
        char *e = wire_escape(out, strlen(out), 300);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: exit status %d", cmd, st);
        cr_expect_str_eq(out, scripts[i][1], "atticdb: %s -> %s", cmd, e);
        free(e);
        free(out);
        if (have_redis) {
            snprintf(cmd, sizeof(cmd), scripts[i][0], rdiff_redis.port);
            out = run_capture(cmd, &st);
            cr_expect_str_eq(out, scripts[i][1], "(test check) redis: %s", cmd);
            free(out);
        }
    }
}

Test(cmds, redis_benchmark, .timeout = 90)
{
    if (!tool_exists("redis-benchmark")) cr_skip_test("redis-benchmark not installed");
    rdiff_start_atticdb();
    char cmd[256];
    snprintf(cmd, sizeof(cmd),
             "timeout 60 redis-benchmark -h 127.0.0.1 -p %d -t set,get -n 20000 -c 16 -d 256 -q 2>&1",
             rdiff_atticdb.port);
    int st;
    char *out = run_capture(cmd, &st);
    char *e = wire_escape(out, strlen(out), 2000);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "redis-benchmark exit status %d; output %s", st, e);
    cr_expect(strstr(out, "SET: ") != NULL, "no SET line in %s", e);
    cr_expect(strstr(out, "GET: ") != NULL, "no GET line in %s", e);
    cr_expect(strstr(out, "rror") == NULL && strstr(out, "ERR") == NULL, "errors in %s", e);
    free(e);
    free(out);
    /* the server is still fine */
    wire_conn_t *c = wire_open(rdiff_atticdb.port, 10);
    cr_assert_not_null(c);
    cr_expect_str_eq(ONE(c, "DBSIZE"), ":1\r\n", "redis-benchmark -t set,get uses the one key key:__rand_int__");
    cr_expect_eq(reply_int(ONE(c, "STRLEN", "key:__rand_int__")), 256);
    wire_close(c);
}

/* ------------------------------------------------------------------ */
/* AtticDB only                                                        */

static long long info_field(wire_conn_t *c, const char *section, const char *field)
{
    const char *r = ONE(c, "INFO", section);
    cr_assert(r[0] == '$', "INFO %s: %s", section, r);
    char pat[128];
    snprintf(pat, sizeof(pat), "\r\n%s:", field);
    const char *p = strstr(r, pat);
    cr_assert_not_null(p, "INFO %s has no %s: %s", section, field, r);
    return strtoll(p + strlen(pat), NULL, 10);
}

Test(cmds, info_persistence)
{
    rdiff_start_atticdb();
    wire_conn_t *c = wire_open(rdiff_atticdb.port, 10);
    cr_assert_not_null(c);
    const char *r = ONE(c, "INFO", "persistence");
    cr_expect(strstr(r, "# Persistence\r\n") != NULL, "INFO persistence: %s", r);
    cr_expect(strstr(r, "\r\natticdb_fsyncs:") != NULL, "INFO persistence: %s", r);
    cr_expect(strstr(r, "\r\natticdb_records:") != NULL, "INFO persistence: %s", r);
    long long rec0 = info_field(c, "persistence", "atticdb_records");
    long long fs0 = info_field(c, "persistence", "atticdb_fsyncs");
    for (int i = 0; i < 10; i++) {
        char k[16];
        snprintf(k, sizeof(k), "k%d", i);
        cr_assert_str_eq(ONE(c, "SET", k, "v"), "+OK\r\n");
    }
    cr_assert_str_eq(ONE(c, "INCR", "n"), ":1\r\n");
    long long rec1 = info_field(c, "persistence", "atticdb_records");
    long long fs1 = info_field(c, "persistence", "atticdb_fsyncs");
    cr_expect(rec1 > rec0, "atticdb_records %lld -> %lld after 11 acknowledged writes", rec0, rec1);
    cr_expect(fs1 > fs0, "atticdb_fsyncs %lld -> %lld after 11 acknowledged writes", fs0, fs1);
    /* The counters may trail the acknowledgement a little; within 2 s
     * they count all 11 records. */
    for (int i = 0; i < 200 && rec1 < rec0 + 11; i++) {
        usleep(10000);
        rec1 = info_field(c, "persistence", "atticdb_records");
    }
    cr_expect(rec1 >= rec0 + 11, "atticdb_records %lld -> %lld after 11 acknowledged writes", rec0, rec1);
    /* reads log nothing */
    cr_assert_str_eq(ONE(c, "GET", "k1"), "$1\r\nv\r\n");
    usleep(50000);
    long long rec2 = info_field(c, "persistence", "atticdb_records");
    cr_expect_eq(rec2, rec1, "a GET added log records: %lld -> %lld", rec1, rec2);
    /* whole INFO works too, and is a bulk string */
    r = ONE(c, "INFO");
    cr_expect(r[0] == '$' && strstr(r, "atticdb_records:") != NULL, "INFO: %.200s", r);
    wire_close(c);
}

Test(cmds, command_count_and_config)
{
    rdiff_start_atticdb();
    redisContext *c = srv_connect(&rdiff_atticdb);
    cr_assert_not_null(c);
    redisReply *cnt = redisCommand(c, "COMMAND COUNT");
    cr_assert_not_null(cnt);
    cr_assert_eq(cnt->type, REDIS_REPLY_INTEGER, "COMMAND COUNT type %d", cnt->type);
    redisReply *all = redisCommand(c, "COMMAND");
    cr_assert_not_null(all);
    cr_assert_eq(all->type, REDIS_REPLY_ARRAY, "COMMAND type %d", all->type);
    cr_expect_eq((long long)all->elements, cnt->integer, "COMMAND has %zu entries, COMMAND COUNT says %lld",
                 all->elements, cnt->integer);
    /* every command the README lists is there, with a name */
    const char *want[] = {"ping", "echo", "quit", "select", "dbsize", "set", "get", "del", "exists", "mset",
                          "mget", "incr", "incrby", "decr", "decrby", "append", "strlen", "getdel", "ttl",
                          "pttl", "expire", "pexpire", "expireat", "pexpireat", "persist", "flushall",
                          "command", "info", "config"};
    for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
        int found = 0;
        for (size_t i = 0; i < all->elements; i++) {
            redisReply *e = all->element[i];
            if (e->type == REDIS_REPLY_ARRAY && e->elements > 0 && e->element[0]->type == REDIS_REPLY_STRING &&
                strcasecmp(e->element[0]->str, want[w]) == 0)
                found = 1;
        }
        cr_expect(found, "COMMAND has no entry for %s", want[w]);
    }
    freeReplyObject(cnt);
    freeReplyObject(all);

    char buf[4096];
    srv_cmd_raw(c, buf, sizeof(buf), "CONFIG GET save");
    redisReply *r = redisCommand(c, "CONFIG GET save");
    cr_assert_not_null(r);
    cr_expect_eq(r->type, REDIS_REPLY_ARRAY, "CONFIG GET save: %s", buf);
    cr_expect_eq(r->elements, 2, "CONFIG GET save: %s", buf);
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2)
        cr_expect_str_eq(r->element[0]->str, "save", "CONFIG GET save: %s", buf);
    freeReplyObject(r);
    /* what redis-benchmark asks at start */
    r = redisCommand(c, "CONFIG GET appendonly");
    cr_assert_not_null(r);
    cr_expect_eq(r->type, REDIS_REPLY_ARRAY, "CONFIG GET appendonly: type %d", r->type);
    freeReplyObject(r);
    srv_cmd_raw(c, buf, sizeof(buf), "COMMAND INFO get");
    cr_expect(buf[0] == '*', "COMMAND INFO get: %s", buf);
    redisFree(c);
}

Test(cmds, keys_read_back_after_restart)
{
    rdiff_start_atticdb();
    wire_conn_t *c = wire_open(rdiff_atticdb.port, 10);
    cr_assert_not_null(c);
    char big[3000];
    memset(big, 'z', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    cr_assert_str_eq(ONE(c, "SET", "small", "v"), "+OK\r\n");
    cr_assert_str_eq(ONE(c, "SET", "big", big), "+OK\r\n");
    cr_assert_str_eq(ONE(c, "INCRBY", "n", "41"), ":41\r\n");
    cr_assert_str_eq(ONE(c, "APPEND", "small", "w"), ":2\r\n");
    cr_assert_str_eq(ONE(c, "SET", "t", "v", "EX", "1000"), "+OK\r\n");
    cr_assert_str_eq(ONE(c, "SET", "gone", "v"), "+OK\r\n");
    cr_assert_str_eq(ONE(c, "DEL", "gone"), ":1\r\n");
    wire_close(c);
    cr_assert_eq(srv_stop(&rdiff_atticdb), 0, "clean shutdown exits 0");
    cr_assert_eq(srv_restart(&rdiff_atticdb), 0, "restart");
    c = wire_open(rdiff_atticdb.port, 10);
    cr_assert_not_null(c);
    cr_expect_str_eq(ONE(c, "DBSIZE"), ":4\r\n");
    cr_expect_str_eq(ONE(c, "GET", "small"), "$2\r\nvw\r\n");
    cr_expect_str_eq(ONE(c, "INCR", "n"), ":42\r\n");
    cr_expect_str_eq(ONE(c, "EXISTS", "gone"), ":0\r\n");
    cr_expect_str_eq(ONE(c, "STRLEN", "big"), ":2999\r\n");
    const char *r = ONE(c, "GET", "big");
    cr_expect(strncmp(r, "$2999\r\n", 7) == 0 && strncmp(r + 7, big, 2999) == 0, "GET big after restart");
    long long t = reply_int(ONE(c, "TTL", "t"));
    cr_expect(t > 990 && t <= 1000, "TTL after restart: %lld", t);
    wire_close(c);
}
