/*
 * test_cmds_basic.c - the connection and string commands checked against
 * the replies of a real Redis 7 (split from test_commands.c): PING, ECHO,
 * SELECT, DBSIZE, QUIT; SET and its options; GET, DEL, EXISTS, MSET, MGET,
 * GETDEL, STRLEN; the INCR family; APPEND; unknown commands and wrong
 * arity; empty, binary and large (100 KB, 1 MB) values. Most tests start a
 * redis-server and an atticdb-server, send the same commands to both and
 * compare the raw reply bytes off the wire; literal_redis7_replies checks
 * AtticDB alone against Redis 7.0 replies written out.
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
    cr_expect(wire_closed_within(d.a[0], 2000),
              "atticdb closes after QUIT (and ignores the PING after it)");
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
        {"-ERR invalid expire time in 'set' command\r\n", "SET", "k", "v", "EX",
         "9223372036854775807"},
        {"-ERR syntax error\r\n", "SET", "k", "v", "NX", "XX"},
        {"-ERR value is not an integer or out of range\r\n", "SET", "k", "v", "EX", "x"},
        {"-ERR decrement would overflow\r\n", "DECRBY", "n", "-9223372036854775808"},
        {"+OK\r\n", "SET", "n", "9223372036854775807"},
        {"-ERR increment or decrement would overflow\r\n", "INCR", "n"},
        {"-ERR value is not an integer or out of range\r\n", "INCRBY", "n", "1x"},
        {"+OK\r\n", "SET", "k", "v"},
        {"-ERR NX and XX, GT or LT options at the same time are not compatible\r\n", "EXPIRE", "k",
         "10", "NX", "XX"},
        {"-ERR GT and LT options at the same time are not compatible\r\n", "EXPIRE", "k", "10",
         "GT", "LT"},
        {"-ERR Unsupported option FOO\r\n", "EXPIRE", "k", "10", "FOO"},
        {"-ERR invalid expire time in 'expire' command\r\n", "EXPIRE", "k", "9223372036854775807"},
        {"-ERR invalid expire time in 'expireat' command\r\n", "EXPIREAT", "k",
         "9223372036854775807"},
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
        while (argc < 7 && cases[i][argc + 1])
            argc++;
        size_t n;
        char *r = wire_cmd(c, argc, &cases[i][1], NULL, &n);
        char *what = wire_cmd_text(argc, &cases[i][1], NULL);
        char *er = wire_escape(r, n, 300), *ew = wire_escape(cases[i][0], strlen(cases[i][0]), 300);
        cr_expect(strcmp(r, cases[i][0]) == 0, "%s\n    want:    %s\n    atticdb: %s", what, ew,
                  er);
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
    const char *vals[] = {"10",
                          "-10",
                          "0",
                          "007",
                          "-0",
                          "+5",
                          " 5",
                          "5 ",
                          "1.5",
                          "abc",
                          "",
                          "1e3",
                          "9223372036854775807",
                          "-9223372036854775808",
                          "9223372036854775808",
                          "-9223372036854775809",
                          "0x10",
                          "12345678901234567890123456789"};
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
    for (int i = 0; i < 20; i++)
        D(&d, "APPEND", "a", "0123456789abcdefghijklmnopqrstuvwxyz");
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
/* unknown commands, arity                                             */

Test(cmds, unknown_and_arity)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "foo");
    D(&d, "foo", "a", "b");
    D(&d, "FOO", "a");
    D(&d, "nosuchcommand", "with", "many", "args", "here");
    D(&d, "foo",
      "a long argument that redis cuts somewhere, maybe at one hundred and twenty-eight bytes "
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

#define DBIN(d, n, ...)                                                                            \
    do {                                                                                           \
        const char *a_[] = {__VA_ARGS__};                                                          \
        rdiff_cmd((d), __LINE__, 0, RDIFF_EXACT, (int)(sizeof(a_) / sizeof(a_[0])), a_, lens_);    \
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
    static const char longbin[] =
        "\0\0\0\r\n\r\n\r\n this binary value is longer than 24 bytes \0\r\n\xff end";
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
        DBIN(&d, 3, "INCRBY", "m",
             "1\0"
             "2");
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

/* Values larger than the store's reply channel (channel-size, 4 MB by
 * default) come back whole: the store sends such replies in parts. Also
 * through a RESP3 connection, whose null conversion sees the whole reply. */
Test(cmds, values_larger_than_the_reply_channel, .timeout = 120)
{
    diff_t d;
    rdiff_start_both(&d);
    /* A 3 MB SET, then APPENDs up to 9 MB (values_larger_than_one_record
     * has writes larger than a record). */
    size_t n = 3 * 1024 * 1024 + 7;
    char *v = malloc(n);
    for (size_t i = 0; i < n; i++)
        v[i] = (char)(i * 2654435761u >> 24);
    {
        const size_t lens[] = {3, 3, n};
        rdiff_cmd(&d, __LINE__, 0, RDIFF_EXACT, 3, (const char *[]){"SET", "big", v}, lens);
    }
    D(&d, "GET", "big");
    for (int i = 0; i < 2; i++) {
        const size_t lens[] = {6, 3, n};
        rdiff_cmd(&d, __LINE__, 0, RDIFF_EXACT, 3, (const char *[]){"APPEND", "big", v}, lens);
    }
    D(&d, "GET", "big");
    D(&d, "MGET", "big", "none", "big");
    D(&d, "GETRANGE", "big", "1000", "-1000");
    D(&d, "APPEND", "big", "tail");
    D(&d, "GETDEL", "big");
    D(&d, "EXISTS", "big");
    {
        const size_t lens[] = {3, 3, n};
        rdiff_cmd(&d, __LINE__, 0, RDIFF_EXACT, 3, (const char *[]){"SET", "big", v}, lens);
        const size_t alens[] = {6, 3, n};
        rdiff_cmd(&d, __LINE__, 0, RDIFF_EXACT, 3, (const char *[]){"APPEND", "big", v}, alens);
    }
    rdiff_hello3(&d); /* RESP3 on both */
    D(&d, "MGET", "big", "none");
    D(&d, "MULTI");
    D(&d, "GET", "big");
    D(&d, "GET", "none");
    D(&d, "EXEC");
    free(v);
    rdiff_end_both(&d);
}

/* Writes whose value is larger than one log record (a quarter of
 * ring-size, 4 MB by default), written in parts (D31): the same replies
 * as Redis, the SET variants, APPEND, SETRANGE, MSET and their errors. */
Test(cmds, values_larger_than_one_record, .timeout = 180)
{
    diff_t d;
    rdiff_start_both(&d);
    size_t n = 5 * 1024 * 1024 + 3;
    char *v = malloc(n), *w = malloc(n);
    for (size_t i = 0; i < n; i++) {
        v[i] = (char)(i * 2654435761u >> 24);
        w[i] = (char)(i * 40503u >> 8);
    }
#define DBIG(...)                                                                                  \
    do {                                                                                           \
        const char *argv_[] = {__VA_ARGS__};                                                       \
        size_t lens_[sizeof(argv_) / sizeof(argv_[0])];                                            \
        for (size_t i_ = 0; i_ < sizeof(argv_) / sizeof(argv_[0]); i_++)                           \
            lens_[i_] = argv_[i_] == v || argv_[i_] == w ? n : strlen(argv_[i_]);                  \
        rdiff_cmd(&d, __LINE__, 0, RDIFF_EXACT, (int)(sizeof(argv_) / sizeof(argv_[0])), argv_,    \
                  lens_);                                                                          \
    } while (0)
    DBIG("SET", "k", v);
    D(&d, "GET", "k");
    DBIG("SET", "k", w, "NX");
    DBIG("SET", "k", w, "XX", "GET");
    D(&d, "STRLEN", "k");
    DBIG("GETSET", "k", v);
    DBIG("SETEX", "e", "100", w);
    DT(&d, "TTL", "e");
    DBIG("PSETEX", "p", "100000", v);
    DBIG("SETNX", "e", v);
    DBIG("SET", "k", v, "EX", "0");
    DBIG("SET", "k", v, "KEEPTTL", "PX", "10");
    D(&d, "HSET", "h", "f", "v");
    DBIG("SET", "h", v, "GET");
    DBIG("APPEND", "h", v);
    DBIG("APPEND", "k", w);
    DBIG("APPEND", "new", v);
    D(&d, "GETRANGE", "k", "5242870", "5242890");
    DBIG("SETRANGE", "k", "7", w);
    DBIG("SETRANGE", "fresh", "100", v);
    D(&d, "GET", "k");
    D(&d, "GET", "fresh");
    DBIG("MSET", "a", "1", "b", v, "c", "3");
    DBIG("MSETNX", "b", w, "z", "1");
    DBIG("MSETNX", "y", w, "z", "1");
    D(&d, "MGET", "a", "b", "c", "y", "z");
#undef DBIG
    free(v);
    free(w);
    rdiff_end_both(&d);
}

Test(cmds, large_values, .timeout = 60)
{
    diff_t d;
    rdiff_start_both(&d);
    size_t n100k = 100 * 1024, n1m = 1024 * 1024;
    char *v100k = malloc(n100k), *v1m = malloc(n1m);
    for (size_t i = 0; i < n100k; i++)
        v100k[i] = (char)('a' + i % 26);
    for (size_t i = 0; i < n1m; i++)
        v1m[i] = (char)(i * 2654435761u >> 24); /* all byte values */
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
        rdiff_cmd(&d, __LINE__, 0, RDIFF_EXACT, 4, (const char *[]){"SET", "k1", v100k, "GET"},
                  lens);
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
