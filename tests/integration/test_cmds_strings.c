/*
 * test_cmds_strings.c - the string commands of issue 5 checked against a
 * real Redis 7.0: each test starts a redis-server and an atticdb-server,
 * sends both the same commands and compares the raw reply bytes. SETNX,
 * SETEX, PSETEX, GETSET, GETEX, MSETNX, INCRBYFLOAT, SETRANGE, GETRANGE,
 * SUBSTR, SETBIT, GETBIT, BITCOUNT, BITPOS and OBJECT, with binary values,
 * empty strings, negative and huge offsets, float formats and values from a
 * few bytes to several KB built by mixing APPEND, SETRANGE and SETBIT (the
 * value shapes of store/core/value.c); then a seeded random run of all of them
 * (ATTIC_SEED, printed on failure) and a read-back after AtticDB restarts
 * (replay must rebuild the same values).
 *
 * The wire helpers and the runner are redis_diff.c's. Environment:
 * ATTICDB_SERVER, REDIS_SERVER (default: redis-server from PATH; the tests
 * are skipped without it), ATTIC_SEED.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "redis_diff.h"

/* Both servers, with proto-max-bulk-len = bulk when not NULL. */
static void start_both_bulk(diff_t *d, const char *bulk)
{
    char extra[128], redis_extra[64];
    snprintf(extra, sizeof(extra), "--frontends 2%s%s", bulk ? " --proto-max-bulk-len " : "",
             bulk ? bulk : "");
    snprintf(redis_extra, sizeof(redis_extra), "--proto-max-bulk-len %s", bulk ? bulk : "");
    rdiff_start_both_with(d, extra, bulk ? redis_extra : NULL, 1);
}

/* A command whose third argument (the value) is n binary bytes. */
static int d3b(diff_t *d, int line, const char *cmd, const char *key, const char *mid,
               const char *val, size_t n)
{
    const char *argv[4] = {cmd, key, mid, val};
    size_t lens[4] = {strlen(cmd), strlen(key), mid ? strlen(mid) : 0, n};
    if (!mid) { /* cmd key val */
        argv[2] = val;
        lens[2] = n;
        return rdiff_cmd(d, line, 0, RDIFF_EXACT, 3, argv, lens);
    }
    return rdiff_cmd(d, line, 0, RDIFF_EXACT, 4, argv, lens);
}
#define DVAL(d, cmd, key, val, n)   d3b((d), __LINE__, (cmd), (key), NULL, (val), (n))
#define DRANGE(d, key, off, val, n) d3b((d), __LINE__, "SETRANGE", (key), (off), (val), (n))

TestSuite(strings, .fini = rdiff_teardown, .timeout = 120);

/* ---- the SET family ------------------------------------------------- */

Test(strings, setnx_setex_psetex_getset)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "SETNX", "k", "v1");
    D(&d, "SETNX", "k", "v2");
    D(&d, "GET", "k");
    D(&d, "SETNX", "e", "");
    D(&d, "GET", "e");
    D(&d, "SETNX", "k");
    D(&d, "SETNX", "k", "a", "b");
    D(&d, "SETEX", "x", "100", "v");
    DT(&d, "TTL", "x");
    D(&d, "GET", "x");
    D(&d, "SETEX", "x", "0", "v");
    D(&d, "SETEX", "x", "-5", "v");
    D(&d, "SETEX", "x", "abc", "v");
    D(&d, "SETEX", "x", "1.5", "v");
    D(&d, "SETEX", "x", " 10", "v");
    D(&d, "SETEX", "x", "9223372036854775807", "v");
    D(&d, "SETEX", "x", "9223372036854775", "v");
    D(&d, "SETEX", "x", "9223372036854776", "v");
    D(&d, "SETEX", "x", "99999999999999999999", "v");
    D(&d, "SETEX", "x", "10");
    D(&d, "GET", "x");
    D(&d, "PSETEX", "p", "100000", "pv");
    DT(&d, "PTTL", "p");
    D(&d, "PSETEX", "p", "0", "v");
    D(&d, "PSETEX", "p", "-1", "v");
    D(&d, "PSETEX", "p", "x", "v");
    D(&d, "PSETEX", "p", "9223372036854775807", "v");
    D(&d, "PSETEX", "p", "9223372036854775000", "v");
    D(&d, "GET", "p");
    D(&d, "SETNX", "p", "other"); /* exists with a TTL: 0, TTL kept */
    DT(&d, "PTTL", "p");
    D(&d, "GETSET", "p", "gs"); /* drops the TTL */
    D(&d, "TTL", "p");
    D(&d, "GET", "p");
    D(&d, "GETSET", "nokey", "new");
    D(&d, "GET", "nokey");
    D(&d, "GETSET", "nokey", "");
    D(&d, "GETSET", "nokey", "x");
    D(&d, "GETSET", "nokey");
    /* values across the inline limit and from the log */
    char big[3000];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (char)(i * 31 + 7);
    DVAL(&d, "SETNX", "b1", big, 25);
    DVAL(&d, "GETSET", "b1", big, sizeof(big));
    D(&d, "GETSET", "b1", "short");
    D(&d, "STRLEN", "b1");
    const char *sx[] = {"SETEX", "b2", "100", big};
    size_t sxl[] = {5, 2, 3, 2000};
    DLEN(&d, 4, sx, sxl);
    D(&d, "GET", "b2");
    D(&d, "OBJECT", "ENCODING", "b2");
    rdiff_end_both(&d);
}

Test(strings, getex)
{
    diff_t d;
    rdiff_start_both(&d);
    char fut_s[32], fut_ms[32], past_s[32];
    time_t now = time(NULL);
    snprintf(fut_s, sizeof(fut_s), "%lld", (long long)now + 1000);
    snprintf(fut_ms, sizeof(fut_ms), "%lld", ((long long)now + 1000) * 1000);
    snprintf(past_s, sizeof(past_s), "%lld", (long long)now - 1000);
    D(&d, "GETEX", "nokey");
    D(&d, "GETEX", "nokey", "EX", "10");
    /* the time is checked only when the key exists */
    D(&d, "GETEX", "nokey", "EX", "-5");
    D(&d, "GETEX", "nokey", "EX", "abc");
    D(&d, "GETEX", "nokey", "FOO");
    D(&d, "EXISTS", "nokey");
    D(&d, "SET", "k", "v");
    D(&d, "GETEX", "k");
    D(&d, "TTL", "k");
    D(&d, "GETEX", "k", "EX", "100");
    DT(&d, "TTL", "k");
    D(&d, "GETEX", "k", "PERSIST");
    D(&d, "TTL", "k");
    D(&d, "GETEX", "k", "persist", "PERSIST");
    D(&d, "GETEX", "k", "px", "100000");
    DT(&d, "PTTL", "k");
    D(&d, "GETEX", "k", "EXAT", fut_s);
    DT(&d, "TTL", "k");
    D(&d, "GETEX", "k", "PXAT", fut_ms);
    DT(&d, "PTTL", "k");
    D(&d, "GETEX", "k", "EX", "10", "EX", "200");
    DT(&d, "TTL", "k");
    /* errors */
    D(&d, "GETEX", "k", "EX", "-5");
    D(&d, "GETEX", "k", "EX", "0");
    D(&d, "GETEX", "k", "PX", "0");
    D(&d, "GETEX", "k", "EX", "abc");
    D(&d, "GETEX", "k", "EX", "9223372036854775");
    D(&d, "GETEX", "k", "EX", "9223372036854776");
    D(&d, "GETEX", "k", "PX", "9223372036854775807");
    D(&d, "GETEX", "k", "EXAT", "9223372036854775807");
    D(&d, "GETEX", "k", "EX");
    D(&d, "GETEX", "k", "EX", "10", "PX", "10");
    D(&d, "GETEX", "k", "PERSIST", "EX", "10");
    D(&d, "GETEX", "k", "EX", "10", "PERSIST");
    D(&d, "GETEX", "k", "NX");
    D(&d, "GETEX", "k", "KEEPTTL");
    D(&d, "GETEX", "k", "GET");
    D(&d, "GETEX", "k", "EXAT", "abc", "PXAT", "1");
    DT(&d, "TTL", "k");
    D(&d, "GETEX");
    /* a time in the past deletes the key after replying its value */
    D(&d, "GETEX", "k", "EXAT", past_s);
    D(&d, "EXISTS", "k");
    D(&d, "SET", "k", "v2");
    D(&d, "GETEX", "k", "PXAT", "1");
    D(&d, "GET", "k");
    /* a long value comes back from the log */
    char big[500];
    memset(big, 'z', sizeof(big));
    DVAL(&d, "SET", "big", big, sizeof(big));
    D(&d, "GETEX", "big", "EX", "100");
    DT(&d, "TTL", "big");
    rdiff_end_both(&d);
}

Test(strings, msetnx)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "MSETNX", "a", "1", "b", "2");
    D(&d, "MGET", "a", "b");
    D(&d, "MSETNX", "a", "x", "c", "3");
    D(&d, "MGET", "a", "b", "c");
    D(&d, "MSETNX", "c", "3", "c", "4");
    D(&d, "GET", "c");
    D(&d, "MSETNX", "d");
    D(&d, "MSETNX", "d", "1", "e");
    D(&d, "MSETNX");
    D(&d, "EXISTS", "d", "e");
    D(&d, "SET", "t", "v", "EX", "100");
    D(&d, "MSETNX", "t", "x");
    DT(&d, "TTL", "t");
    D(&d, "MSETNX", "n1", "", "n2", "12345678901234567890123456789");
    D(&d, "MGET", "n1", "n2");
    D(&d, "OBJECT", "ENCODING", "n2");
    rdiff_end_both(&d);
}

/* ---- INCRBYFLOAT ----------------------------------------------------- */

Test(strings, incrbyfloat)
{
    diff_t d;
    rdiff_start_both(&d);
    static const char *incs[] = {
        "10.5",     "0.1",   "-5",    "5.0e3",  "3e-2",   "1",       "-1",
        "0",        "-0",    "0.0",   "1e30",   "-1e30",  "1.5e-7",  "123456789.123456789",
        "0x10",     "0x1p3", ".5",    "5.",     "+3",     "1E2",     "0.00000000000000000001",
        "-1.0e-20", "7",     "1e308", "-1e308", "1e4000", "-1e4000",
    };
    for (size_t i = 0; i < sizeof(incs) / sizeof(incs[0]); i++) {
        D(&d, "INCRBYFLOAT", "f", incs[i]);
        D(&d, "GET", "f");
        D(&d, "OBJECT", "ENCODING", "f");
        char key[16];
        snprintf(key, sizeof(key), "g%zu", i);
        D(&d, "INCRBYFLOAT", key, incs[i]);
        D(&d, "INCRBYFLOAT", key, "0.25");
    }
    /* not floats, NaN and infinities */
    static const char *bad[] = {"abc",    "",        " 1",      "1 ", "1.5x", "nan", "NaN",
                                "1e5000", "-1e5000", "1e-5000", "0x", "--1",  "1e",  "infinity-"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        D(&d, "INCRBYFLOAT", "f", bad[i]);
    D(&d, "INCRBYFLOAT", "f", "inf");
    D(&d, "INCRBYFLOAT", "f", "-inf");
    D(&d, "INCRBYFLOAT", "f", "infinity");
    D(&d, "INCRBYFLOAT", "nokey", "inf");
    D(&d, "EXISTS", "nokey");
    D(&d, "GET", "f");
    const char *nul[] = {"INCRBYFLOAT", "f",
                         "1\0"
                         "2"};
    size_t nl[] = {11, 1, 3};
    DLEN(&d, 3, nul, nl);
    /* the key's value is parsed first */
    D(&d, "SET", "s", "hello");
    D(&d, "INCRBYFLOAT", "s", "1");
    D(&d, "INCRBYFLOAT", "s", "abc");
    D(&d, "SET", "s", " 1");
    D(&d, "INCRBYFLOAT", "s", "1");
    D(&d, "SET", "s", "");
    D(&d, "INCRBYFLOAT", "s", "1");
    D(&d, "SET", "s", "1e4000");
    D(&d, "INCRBYFLOAT", "s", "1");
    D(&d, "STRLEN", "s");
    D(&d, "INCRBYFLOAT", "s", "1");
    D(&d, "INCRBYFLOAT", "s", "-1e4000");
    D(&d, "SET", "s", "12");
    D(&d, "INCRBYFLOAT", "s", "0.5");
    D(&d, "INCRBYFLOAT", "s", "0.5");
    D(&d, "OBJECT", "ENCODING", "s");
    D(&d, "INCR", "s");
    D(&d, "OBJECT", "ENCODING", "s");
    /* a value too long to be a float, read from the log */
    char big[6000];
    memset(big, '1', sizeof(big));
    DVAL(&d, "SET", "s", big, 5119);
    D(&d, "INCRBYFLOAT", "s", "1");
    DVAL(&d, "SET", "s", big, 5120);
    D(&d, "INCRBYFLOAT", "s", "1");
    big[0] = '0';
    big[1] = '.';
    DVAL(&d, "SET", "s", big, 60);
    D(&d, "INCRBYFLOAT", "s", "1");
    /* the TTL stays */
    D(&d, "SET", "t", "1.5", "EX", "100");
    D(&d, "INCRBYFLOAT", "t", "1");
    DT(&d, "TTL", "t");
    D(&d, "INCRBYFLOAT", "t");
    D(&d, "INCRBYFLOAT", "t", "1", "2");
    rdiff_end_both(&d);
}

/* ---- SETRANGE, GETRANGE, SUBSTR -------------------------------------- */

Test(strings, setrange_getrange)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "SETRANGE", "k", "0", "");
    D(&d, "EXISTS", "k");
    D(&d, "SETRANGE", "k", "5", "");
    D(&d, "EXISTS", "k");
    D(&d, "SETRANGE", "k", "-1", "x");
    D(&d, "SETRANGE", "k", "-1", "");
    D(&d, "SETRANGE", "k", "abc", "x");
    D(&d, "SETRANGE", "k", "1.0", "x");
    D(&d, "SETRANGE", "k", "9223372036854775808", "x");
    D(&d, "SETRANGE", "k", "536870912", "x");
    D(&d, "SETRANGE", "k", "536870911", "xy");
    D(&d, "SETRANGE", "k", "536870912", "");
    D(&d, "SETRANGE", "k", "9223372036854775807", "x");
    D(&d, "SETRANGE", "k", "9223372036854775807", "");
    D(&d, "SETRANGE", "k", "0");
    D(&d, "SETRANGE", "k", "0", "hello");
    D(&d, "GET", "k");
    D(&d, "SETRANGE", "k", "10", "world");
    D(&d, "GET", "k");
    D(&d, "SETRANGE", "k", "1", "EL");
    D(&d, "GET", "k");
    D(&d, "SETRANGE", "k", "0", "");
    D(&d, "OBJECT", "ENCODING", "k");
    D(&d, "SET", "n", "123");
    D(&d, "SETRANGE", "n", "0", "");
    D(&d, "OBJECT", "ENCODING", "n");
    D(&d, "SETRANGE", "n", "1", "9");
    D(&d, "OBJECT", "ENCODING", "n");
    D(&d, "GET", "n");
    D(&d, "INCR", "n");
    D(&d, "OBJECT", "ENCODING", "n");
    /* across the inline limit, with the TTL kept */
    D(&d, "SET", "t", "0123456789", "EX", "100");
    D(&d, "SETRANGE", "t", "20", "abcdefghij");
    D(&d, "GET", "t");
    DT(&d, "TTL", "t");
    D(&d, "SETRANGE", "t", "5", "XYZ");
    D(&d, "GET", "t");
    D(&d, "SETRANGE", "t", "28", "__");
    D(&d, "GET", "t");
    /* a big zero-padded value, then patches and reads of its parts */
    D(&d, "SETRANGE", "z", "4000", "end");
    D(&d, "STRLEN", "z");
    D(&d, "GETRANGE", "z", "3990", "-1");
    D(&d, "SETRANGE", "z", "100", "middle");
    D(&d, "GETRANGE", "z", "95", "110");
    D(&d, "GET", "z");
    /* getrange indexes */
    D(&d, "SET", "g", "Hello World");
    static const char *idx[][2] = {
        {"0", "-1"},
        {"0", "4"},
        {"-3", "-1"},
        {"-1", "-3"},
        {"5", "3"},
        {"-100", "100"},
        {"100", "200"},
        {"-100", "-50"},
        {"3", "3"},
        {"-1", "-1"},
        {"0", "0"},
        {"10", "10"},
        {"11", "11"},
        {"-11", "-11"},
        {"-12", "0"},
        {"0", "9223372036854775807"},
        {"-9223372036854775808", "-9223372036854775808"},
        {"-9223372036854775808", "9223372036854775807"},
        {"9223372036854775807", "-9223372036854775808"},
        {"2", "-2"},
        {"-2", "2"},
    };
    for (size_t i = 0; i < sizeof(idx) / sizeof(idx[0]); i++) {
        D(&d, "GETRANGE", "g", idx[i][0], idx[i][1]);
        D(&d, "SUBSTR", "g", idx[i][0], idx[i][1]);
        D(&d, "GETRANGE", "nokey", idx[i][0], idx[i][1]);
    }
    D(&d, "GETRANGE", "g", "a", "1");
    D(&d, "GETRANGE", "g", "1", "b");
    D(&d, "GETRANGE", "nokey", "a", "1");
    D(&d, "GETRANGE", "g", "1");
    D(&d, "GETRANGE", "g", "1", "2", "3");
    D(&d, "SET", "e", "");
    D(&d, "GETRANGE", "e", "0", "-1");
    D(&d, "GETRANGE", "e", "-1", "0");
    D(&d, "SET", "i", "-12345");
    D(&d, "GETRANGE", "i", "1", "-2");
    rdiff_end_both(&d);
}

/* Values of several KB built by SET, APPEND, SETRANGE and SETBIT mixed:
 * every representation (extent, list of log pieces, zero runs, RAM) read
 * back whole and in parts. */
Test(strings, mixed_shapes)
{
    diff_t d;
    rdiff_start_both(&d);
    char buf[8192];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (char)((i * 131 + 17) & 0xff);
    DVAL(&d, "SET", "m", buf, 3000);
    DVAL(&d, "APPEND", "m", buf + 100, 2000);
    DRANGE(&d, "m", "2990", buf + 7, 40); /* across the first two pieces */
    DRANGE(&d, "m", "6000", buf, 10);     /* past the end: zeros, then bytes */
    D(&d, "SETBIT", "m", "100", "1");     /* inside an extent: a RAM block */
    D(&d, "SETBIT", "m", "100", "0");
    D(&d, "SETBIT", "m", "40001", "1");   /* in the zero run */
    D(&d, "SETBIT", "m", "70000", "1");   /* growing */
    DRANGE(&d, "m", "10", buf + 1, 3);    /* inside the RAM block */
    DRANGE(&d, "m", "4090", buf + 2, 20); /* across a block edge */
    D(&d, "GET", "m");
    D(&d, "STRLEN", "m");
    D(&d, "OBJECT", "ENCODING", "m");
    D(&d, "BITCOUNT", "m");
    D(&d, "BITCOUNT", "m", "10", "5000");
    D(&d, "BITCOUNT", "m", "7", "40003", "BIT");
    D(&d, "BITPOS", "m", "0");
    D(&d, "BITPOS", "m", "1", "5001");
    D(&d, "BITPOS", "m", "1", "5001", "-1");
    D(&d, "BITPOS", "m", "0", "6010", "-1");
    D(&d, "GETRANGE", "m", "2980", "3050");
    D(&d, "GETRANGE", "m", "-20", "-1");
    for (int bit = 0; bit < 80; bit += 9) {
        char off[16];
        snprintf(off, sizeof(off), "%d", 8 * 2995 + bit);
        D(&d, "GETBIT", "m", off);
    }
    /* many small appends, then SETRANGEs over them (compaction) */
    D(&d, "SET", "a", "");
    for (int i = 0; i < 300; i++) {
        DVAL(&d, "APPEND", "a", buf + i, (size_t)(i % 7) + 1);
        if (i % 50 == 0) D(&d, "GET", "a");
    }
    for (int i = 0; i < 100; i++) {
        char off[16];
        snprintf(off, sizeof(off), "%d", (i * 37) % 1300);
        DRANGE(&d, "a", off, buf + 500 + i, (size_t)(i % 5) + 1);
    }
    D(&d, "GET", "a");
    D(&d, "GETRANGE", "a", "100", "200");
    D(&d, "BITCOUNT", "a");
    /* a bitmap built by SETBIT, byte after byte and at random */
    for (int i = 0; i < 400; i++) {
        char off[16];
        snprintf(off, sizeof(off), "%d", (i * 7919) % 60000);
        D(&d, "SETBIT", "bm", off, i % 3 ? "1" : "0");
    }
    D(&d, "GET", "bm");
    D(&d, "BITCOUNT", "bm");
    D(&d, "BITPOS", "bm", "1");
    D(&d, "BITPOS", "bm", "0");
    D(&d, "BITPOS", "bm", "1", "-100");
    /* append on a short value crossing the inline limit */
    D(&d, "SET", "s", "12345");
    D(&d, "APPEND", "s", "67890123456789012345678");
    D(&d, "OBJECT", "ENCODING", "s");
    D(&d, "SETRANGE", "s", "3", "abc");
    D(&d, "GET", "s");
    D(&d, "SETBIT", "s", "3", "1");
    D(&d, "GET", "s");
    rdiff_end_both(&d);
}

/* ---- bits ------------------------------------------------------------- */

Test(strings, setbit_getbit)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "SETBIT", "b", "7", "1");
    D(&d, "GET", "b");
    D(&d, "SETBIT", "b", "7", "1");
    D(&d, "SETBIT", "b", "7", "0");
    D(&d, "SETBIT", "b", "0", "0");
    D(&d, "SETBIT", "b", "100", "0"); /* grows with zeros */
    D(&d, "STRLEN", "b");
    D(&d, "GET", "b");
    D(&d, "SETBIT", "b", "4294967296", "1");
    D(&d, "SETBIT", "b", "-1", "1");
    D(&d, "SETBIT", "b", "x", "1");
    D(&d, "SETBIT", "b", "1.5", "1");
    D(&d, "SETBIT", "b", "", "1");
    D(&d, "SETBIT", "b", "9223372036854775807", "1");
    D(&d, "SETBIT", "b", "9223372036854775808", "1");
    D(&d, "SETBIT", "b", "0", "2");
    D(&d, "SETBIT", "b", "0", "-1");
    D(&d, "SETBIT", "b", "0", "x");
    D(&d, "SETBIT", "b", "0", "01");
    D(&d, "SETBIT", "b", "0", "");
    D(&d, "SETBIT", "b", "x", "x");
    D(&d, "SETBIT", "b", "0");
    D(&d, "SETBIT", "b", "0", "1", "1");
    D(&d, "OBJECT", "ENCODING", "b");
    D(&d, "SET", "s", "1");
    D(&d, "SETBIT", "s", "0", "0"); /* unchanged, but raw now */
    D(&d, "OBJECT", "ENCODING", "s");
    D(&d, "SET", "s", "A", "EX", "100");
    D(&d, "SETBIT", "s", "6", "1");
    D(&d, "GET", "s");
    DT(&d, "TTL", "s");
    D(&d, "SETBIT", "big", "8000000", "1");
    D(&d, "STRLEN", "big");
    D(&d, "GETBIT", "big", "8000000");
    D(&d, "GETBIT", "big", "7999999");
    D(&d, "BITCOUNT", "big");
    D(&d, "BITPOS", "big", "1");
    D(&d, "GETBIT", "nokey", "0");
    D(&d, "GETBIT", "nokey", "x");
    D(&d, "GETBIT", "nokey", "-1");
    D(&d, "GETBIT", "nokey", "4294967295");
    D(&d, "GETBIT", "nokey", "4294967296");
    D(&d, "GETBIT", "b", "4294967296");
    D(&d, "GETBIT", "b", "1000");
    D(&d, "SET", "g", "\x01\x80z");
    for (int i = 0; i < 26; i++) {
        char off[8];
        snprintf(off, sizeof(off), "%d", i);
        D(&d, "GETBIT", "g", off);
    }
    D(&d, "GETBIT", "g");
    D(&d, "GETBIT", "g", "1", "2");
    rdiff_end_both(&d);
}

/* BITOP against Redis: each operation over values of different lengths
 * and a missing key, NOT, the errors in Redis' order (syntax, NOT's single
 * source, arity, WRONGTYPE of any source), an empty result deleting the
 * destination, a result replacing a list and dropping a TTL, the
 * destination among its sources, integer-encoded sources; then the same
 * values after a kill -9 of the group (the store replays the records). */
Test(strings, bitop)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "SET", "a", "foobar");
    D(&d, "SET", "b", "abcdef\xff\x01");
    D(&d, "SET", "c", "");
    static const char *const ops[] = {"AND", "or", "Xor"};
    for (int i = 0; i < 3; i++) {
        D(&d, "BITOP", ops[i], "r", "a", "b");
        D(&d, "GET", "r");
        D(&d, "BITOP", ops[i], "r", "b", "nokey", "a");
        D(&d, "GET", "r");
        D(&d, "BITOP", ops[i], "r", "a");
        D(&d, "GET", "r");
        D(&d, "BITOP", ops[i], "r", "c", "a");
        D(&d, "GET", "r");
    }
    D(&d, "BITOP", "NOT", "r", "b");
    D(&d, "GET", "r");
    D(&d, "OBJECT", "ENCODING", "r");
    D(&d, "BITOP", "not", "r", "a", "b");
    D(&d, "BITOP", "nand", "r", "a", "b");
    D(&d, "BITOP", "and", "r");
    D(&d, "BITOP", "and");
    D(&d, "LPUSH", "l", "x");
    D(&d, "BITOP", "or", "r", "a", "l");
    D(&d, "BITOP", "or", "r", "nokey", "l");
    D(&d, "BITOP", "xx", "r", "l");
    D(&d, "GET", "r");
    /* An empty result deletes the destination, whatever it held. */
    D(&d, "BITOP", "and", "r", "nokey", "c");
    D(&d, "EXISTS", "r");
    D(&d, "BITOP", "or", "l", "nokey");
    D(&d, "TYPE", "l");
    D(&d, "LPUSH", "l", "x");
    D(&d, "BITOP", "or", "l", "a");
    D(&d, "TYPE", "l");
    D(&d, "GET", "l");
    D(&d, "SET", "t", "v", "EX", "100");
    D(&d, "BITOP", "xor", "t", "t", "a");
    D(&d, "TTL", "t");
    D(&d, "GET", "t");
    D(&d, "BITOP", "not", "a", "a");
    D(&d, "GET", "a");
    D(&d, "SET", "n", "123");
    D(&d, "SET", "m", "-9");
    D(&d, "BITOP", "xor", "r", "n", "m", "n");
    D(&d, "GET", "r");
    D(&d, "OBJECT", "ENCODING", "r");
    D(&d, "SETBIT", "big", "80000", "1");
    D(&d, "BITOP", "or", "r", "big", "b");
    D(&d, "BITCOUNT", "r");
    D(&d, "STRLEN", "r");
    /* The values after a kill -9: the store rebuilds them from the log. */
    rdiff_kill9_restart(&d);
    static const char *const keys[] = {"a", "l", "t", "r"};
    for (int i = 0; i < 4; i++)
        D(&d, "GET", keys[i]);
    D(&d, "BITCOUNT", "r");
    rdiff_end_both(&d);
}

/* LCS against Redis: the example of Redis' documentation, every option
 * and their errors, missing keys, a key of another type, integer values,
 * the table's limit (proto-max-bulk-len), in RESP2 and RESP3; then 300
 * random pairs over a small alphabet with random options. */
Test(strings, lcs)
{
    diff_t d;
    start_both_bulk(&d, "1mb");
    D(&d, "SET", "a", "ohmytext");
    D(&d, "SET", "b", "mynewtext");
    static const char *const forms[][5] = {
        {NULL},
        {"LEN", NULL},
        {"IDX", NULL},
        {"IDX", "WITHMATCHLEN", NULL},
        {"IDX", "MINMATCHLEN", "4", NULL},
        {"idx", "minmatchlen", "2", "withmatchlen", NULL},
        {"MINMATCHLEN", "-5", "IDX", NULL},
        {"LEN", "IDX", NULL},
        {"MINMATCHLEN", NULL},
        {"MINMATCHLEN", "x", NULL},
        {"BOGUS", NULL},
        {"WITHMATCHLEN", NULL},
    };
    static const char *const pairs[][2] = {{"a", "b"}, {"b", "a"}, {"a", "nokey"}, {"nokey", "a"},
                                           {"a", "a"}, {"n", "m"}, {"a", "l"},     {"l", "nokey"}};
    D(&d, "SET", "n", "12345");
    D(&d, "SET", "m", "-2 4");
    D(&d, "RPUSH", "l", "x");
    for (int proto = 2; proto <= 3; proto++) {
        if (proto == 3) rdiff_hello3(&d);
        for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
            for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
                const char *argv[8] = {"LCS", pairs[p][0], pairs[p][1]};
                int n = 3;
                for (int w = 0; forms[f][w]; w++)
                    argv[n++] = forms[f][w];
                rdiff_cmd(&d, __LINE__, 0, RDIFF_EXACT, n, argv, NULL);
            }
    }
    /* (len + 1)^2 cells of 4 bytes over 1 MB: refused as Redis refuses it. */
    static char big[600];
    memset(big, 'x', sizeof big - 1);
    D(&d, "SET", "big", big);
    D(&d, "LCS", "big", "big", "LEN");
    D(&d, "LCS", "big", "a");
    uint64_t rng = rdiff_seed();
    char label[96];
    snprintf(label, sizeof(label), "[ATTIC_SEED=%" PRIu64 "] ", rng);
    d.label = label;
    for (int it = 0; it < 300 && d.mismatches == 0; it++) {
        char x[40], y[40];
        size_t xl = rdiff_below(&rng, 30), yl = rdiff_below(&rng, 30);
        for (size_t i = 0; i < xl; i++)
            x[i] = (char)('a' + rdiff_below(&rng, 4));
        for (size_t i = 0; i < yl; i++)
            y[i] = (char)('a' + rdiff_below(&rng, 4));
        DVAL(&d, "SET", "x", x, xl);
        DVAL(&d, "SET", "y", y, yl);
        switch (rdiff_below(&rng, 4)) {
        case 0:
            D(&d, "LCS", "x", "y");
            break;
        case 1:
            D(&d, "LCS", "x", "y", "LEN");
            break;
        case 2:
            D(&d, "LCS", "x", "y", "IDX", "WITHMATCHLEN");
            break;
        default:
            D(&d, "LCS", "y", "x", "IDX", "MINMATCHLEN", rdiff_below(&rng, 2) ? "2" : "3");
        }
    }
    rdiff_end_both(&d);
}

/* BITFIELD and BITFIELD_RO against Redis: every subcommand, the types and
 * #offsets, OVERFLOW WRAP, SAT and FAIL at the edges of signed and
 * unsigned fields of every width, the errors in Redis' order, a key made
 * or grown by writes, a line of GETs (a read here), WRONGTYPE, integer
 * values; then 600 random lines and the value after each; then the same
 * value after a kill -9 (the store replays the records). */
Test(strings, bitfield)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "BITFIELD", "k", "SET", "i8", "0", "100", "GET", "i8", "0", "INCRBY", "i8", "0", "100");
    D(&d, "BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "i8", "0", "100", "INCRBY", "u7", "3",
      "-500");
    D(&d, "BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "i8", "0", "100", "GET", "u8", "0");
    D(&d, "BITFIELD", "k", "SET", "i64", "#1", "-9223372036854775808", "INCRBY", "i64", "#1", "-1");
    D(&d, "BITFIELD", "k", "SET", "u63", "1", "-1", "GET", "u63", "1", "GET", "i64", "64");
    D(&d, "GET", "k");
    D(&d, "BITFIELD", "k", "GET", "u64", "0");
    D(&d, "BITFIELD", "k", "GET", "i0", "0");
    D(&d, "BITFIELD", "k", "GET", "x8", "0");
    D(&d, "BITFIELD", "k", "GET", "u8", "-1");
    D(&d, "BITFIELD", "k", "GET", "u8", "#");
    D(&d, "BITFIELD", "k", "GET", "u8", "4294967296");
    D(&d, "BITFIELD", "k", "SET", "u8", "0", "1.5");
    D(&d, "BITFIELD", "k", "SET", "u8", "0");
    D(&d, "BITFIELD", "k", "OVERFLOW", "BOGUS", "GET", "u8", "0");
    D(&d, "BITFIELD", "k", "OVERFLOW");
    D(&d, "BITFIELD", "k", "NOPE", "u8", "0");
    D(&d, "BITFIELD", "k");
    D(&d, "BITFIELD_RO", "k", "GET", "i16", "3", "GET", "u1", "#5");
    D(&d, "BITFIELD_RO", "k", "SET", "u8", "0", "1");
    D(&d, "BITFIELD_RO", "k", "GET", "u8");
    D(&d, "BITFIELD", "none", "GET", "u8", "0");
    D(&d, "EXISTS", "none");
    D(&d, "BITFIELD", "new", "OVERFLOW", "FAIL", "INCRBY", "u2", "100", "7");
    D(&d, "STRLEN", "new");
    D(&d, "BITFIELD", "new", "SET", "u4", "1000", "3");
    D(&d, "STRLEN", "new");
    D(&d, "RPUSH", "l", "x");
    D(&d, "BITFIELD", "l", "GET", "u8", "0");
    D(&d, "BITFIELD", "l", "SET", "u8", "0", "1");
    D(&d, "BITFIELD_RO", "l", "SET", "u8", "0", "1");
    D(&d, "SET", "n", "1234");
    D(&d, "BITFIELD", "n", "GET", "u16", "0");
    D(&d, "OBJECT", "ENCODING", "n");
    D(&d, "BITFIELD", "n", "INCRBY", "u8", "0", "1");
    D(&d, "OBJECT", "ENCODING", "n");
    D(&d, "GET", "n");
    uint64_t rng = rdiff_seed();
    char label[96];
    snprintf(label, sizeof(label), "[ATTIC_SEED=%" PRIu64 "] ", rng);
    d.label = label;
    static const char *const ows[] = {"WRAP", "SAT", "FAIL"};
    for (int it = 0; it < 600 && d.mismatches == 0; it++) {
        const char *argv[2 + 4 * 6] = {"BITFIELD", "f"}; /* 4 operations of at most 6 words */
        char words[6][3][24];
        int n = 2, nops = 1 + (int)rdiff_below(&rng, 4);
        for (int o = 0; o < nops; o++) {
            unsigned sign = rdiff_below(&rng, 2), bits = 1 + rdiff_below(&rng, sign ? 64 : 63);
            if (rdiff_below(&rng, 3) == 0) {
                argv[n++] = "OVERFLOW";
                argv[n++] = ows[rdiff_below(&rng, 3)];
            }
            snprintf(words[o][0], 24, "%c%u", sign ? 'i' : 'u', bits);
            if (rdiff_below(&rng, 4))
                snprintf(words[o][1], 24, "%u", rdiff_below(&rng, 200));
            else
                snprintf(words[o][1], 24, "#%u", rdiff_below(&rng, 4));
            long long v = (long long)rdiff_splitmix(&rng);
            if (rdiff_below(&rng, 2)) v = (long long)rdiff_below(&rng, 600) - 300;
            snprintf(words[o][2], 24, "%lld", v);
            unsigned kind = rdiff_below(&rng, 3);
            argv[n++] = kind == 0 ? "GET" : kind == 1 ? "SET" : "INCRBY";
            argv[n++] = words[o][0];
            argv[n++] = words[o][1];
            if (kind) argv[n++] = words[o][2];
        }
        rdiff_cmd(&d, __LINE__, 0, RDIFF_EXACT, n, argv, NULL);
        if (it % 10 == 0) D(&d, "GET", "f");
    }
    D(&d, "GET", "f");
    rdiff_kill9_restart(&d);
    D(&d, "GET", "f");
    D(&d, "GET", "k");
    D(&d, "STRLEN", "new");
    rdiff_end_both(&d);
}

Test(strings, bitcount)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "BITCOUNT", "nokey");
    D(&d, "BITCOUNT", "nokey", "0");
    D(&d, "BITCOUNT", "nokey", "a", "b");
    D(&d, "BITCOUNT", "nokey", "0", "1", "foo");
    D(&d, "SET", "f", "foobar");
    D(&d, "BITCOUNT", "f");
    D(&d, "BITCOUNT", "f", "0");
    D(&d, "BITCOUNT", "f", "a", "1");
    D(&d, "BITCOUNT", "f", "0", "b");
    D(&d, "BITCOUNT", "f", "0", "1", "foo");
    D(&d, "BITCOUNT", "f", "a", "1", "foo");
    D(&d, "BITCOUNT", "f", "0", "1", "bit", "x");
    D(&d, "BITCOUNT", "f", "-1", "-3", "foo");
    static const char *r[][3] = {
        {"0", "0", NULL},
        {"1", "1", NULL},
        {"1", "1", "BYTE"},
        {"5", "30", "BIT"},
        {"5", "30", "bit"},
        {"-1", "-3", NULL},
        {"-3", "-1", NULL},
        {"0", "-1", "BIT"},
        {"-5", "-1", "BIT"},
        {"100", "200", NULL},
        {"-100", "-50", NULL},
        {"-100", "-50", "BIT"},
        {"7", "7", "BIT"},
        {"7", "8", "BIT"},
        {"1", "46", "BIT"},
        {"47", "47", "BIT"},
        {"48", "100", "BIT"},
        {"2", "1", "BIT"},
        {"-9223372036854775808", "9223372036854775807", "BIT"},
        {"0", "9223372036854775807", "byte"},
        {"3", "-3", "BIT"},
    };
    for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
        if (r[i][2])
            D(&d, "BITCOUNT", "f", r[i][0], r[i][1], r[i][2]);
        else
            D(&d, "BITCOUNT", "f", r[i][0], r[i][1]);
    }
    D(&d, "SET", "e", "");
    D(&d, "BITCOUNT", "e");
    D(&d, "BITCOUNT", "e", "0", "-1");
    D(&d, "BITCOUNT", "e", "0", "-1", "BIT");
    D(&d, "SET", "i", "12345");
    D(&d, "BITCOUNT", "i");
    rdiff_end_both(&d);
}

Test(strings, bitpos)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "BITPOS", "nokey", "0");
    D(&d, "BITPOS", "nokey", "1");
    D(&d, "BITPOS", "nokey", "2");
    D(&d, "BITPOS", "nokey", "x");
    D(&d, "BITPOS", "nokey", "0", "a");
    D(&d, "BITPOS", "nokey", "1", "0", "1", "foo");
    const char *v1[] = {"SET", "z", "\xff\xf0\x00"};
    size_t l1[] = {3, 1, 3};
    DLEN(&d, 3, v1, l1);
    const char *v2[] = {"SET", "ff", "\xff\xff\xff"};
    size_t l2[] = {3, 2, 3};
    DLEN(&d, 3, v2, l2);
    const char *v3[] = {"SET", "zz", "\x00\x00\x00"};
    size_t l3[] = {3, 2, 3};
    DLEN(&d, 3, v3, l3);
    D(&d, "SET", "e", "");
    static const char *keys[] = {"z", "ff", "zz", "e"};
    static const char *r[][3] = {
        {NULL, NULL, NULL},    {"0", NULL, NULL},
        {"1", NULL, NULL},     {"2", NULL, NULL},
        {"-1", NULL, NULL},    {"5", NULL, NULL},
        {"0", "-1", NULL},     {"0", "0", NULL},
        {"1", "1", NULL},      {"1", "2", NULL},
        {"-1", "-3", NULL},    {"0", "-1", "BIT"},
        {"1", "-1", "bit"},    {"7", "15", "BIT"},
        {"9", "14", "BIT"},    {"12", "12", "BIT"},
        {"12", "19", "BIT"},   {"20", "23", "BIT"},
        {"3", "2", "BIT"},     {"0", "5", "BYTE"},
        {"-2", "-1", "BYTE"},  {"100", "200", NULL},
        {"-100", "-50", NULL}, {"0", "100", "BIT"},
        {"4", "4", "BIT"},     {"-9223372036854775808", "9223372036854775807", "BIT"},
    };
    for (size_t k = 0; k < 4; k++) {
        for (int bit = 0; bit <= 1; bit++) {
            const char *b = bit ? "1" : "0";
            for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
                if (!r[i][0])
                    D(&d, "BITPOS", keys[k], b);
                else if (!r[i][1])
                    D(&d, "BITPOS", keys[k], b, r[i][0]);
                else if (!r[i][2])
                    D(&d, "BITPOS", keys[k], b, r[i][0], r[i][1]);
                else
                    D(&d, "BITPOS", keys[k], b, r[i][0], r[i][1], r[i][2]);
            }
        }
    }
    D(&d, "BITPOS", "ff", "0", "a");
    D(&d, "BITPOS", "ff", "0", "0", "a");
    D(&d, "BITPOS", "ff", "0", "0", "1", "foo");
    D(&d, "BITPOS", "ff", "0", "0", "a", "foo");
    D(&d, "BITPOS", "ff", "0", "a", "1", "foo");
    D(&d, "BITPOS", "ff", "0", "0", "1", "bit", "x");
    D(&d, "BITPOS", "ff", "01");
    D(&d, "BITPOS", "ff", "-0");
    D(&d, "BITPOS", "ff");
    rdiff_end_both(&d);
}

/* The size limits at their edges, with a proto-max-bulk-len of 1 MB (the
 * default 512 MB edges would make redis-server allocate 512 MB). */
Test(strings, limits_at_the_edge)
{
    diff_t d;
    start_both_bulk(&d, "1mb");
    D(&d, "SETRANGE", "r", "1048576", "x");
    D(&d, "SETRANGE", "r", "1048575", "xy");
    D(&d, "SETRANGE", "r", "1048576", "");
    D(&d, "EXISTS", "r");
    D(&d, "SETRANGE", "r", "1048575", "x");
    D(&d, "STRLEN", "r");
    D(&d, "GETRANGE", "r", "-3", "-1");
    D(&d, "APPEND", "r", "z");
    D(&d, "APPEND", "r", "");
    D(&d, "SETRANGE", "r", "0", "abc");
    D(&d, "SETBIT", "b", "8388608", "1");
    D(&d, "SETBIT", "b", "8388607", "1");
    D(&d, "STRLEN", "b");
    D(&d, "GETBIT", "b", "8388607");
    D(&d, "GETBIT", "b", "8388608");
    D(&d, "GETBIT", "nokey", "8388608");
    D(&d, "BITCOUNT", "b");
    D(&d, "BITPOS", "b", "1");
    D(&d, "BITPOS", "b", "0", "-1");
    D(&d, "BITCOUNT", "r", "0", "-1", "BIT");
    D(&d, "SETRANGE", "b", "1048575", "");
    D(&d, "SETRANGE", "b", "1048575", "q");
    D(&d, "SETBIT", "r", "8388607", "0");
    D(&d, "GETRANGE", "r", "1048570", "1048580");
    rdiff_end_both(&d);
}

/* CONFIG SET proto-max-bulk-len takes effect for APPEND at once, in every
 * frontend, as in Redis (the limit travels in the APPEND record). */
Test(strings, append_follows_config_set_limit)
{
    diff_t d;
    start_both_bulk(&d, "2mb");
    static char big[700 * 1024];
    memset(big, 'a', sizeof(big));
    DVAL(&d, "APPEND", "a", big, sizeof(big));
    DVAL(&d, "APPEND", "a", big, sizeof(big));
    D(&d, "CONFIG", "SET", "proto-max-bulk-len", "1mb");
    DVAL(&d, "APPEND", "a", big, 1);
    D(&d, "STRLEN", "a");
    D(&d, "CONFIG", "SET", "proto-max-bulk-len", "4mb");
    DVAL(&d, "APPEND", "a", big, sizeof(big));
    D(&d, "STRLEN", "a");
    rdiff_end_both(&d);
}

/* ---- OBJECT ----------------------------------------------------------- */

Test(strings, object)
{
    diff_t d;
    rdiff_start_both(&d);
    char big[100];
    memset(big, 'q', sizeof(big));
    D(&d, "SET", "int", "12345");
    D(&d, "SET", "small", "5");
    D(&d, "SET", "neg", "-5");
    D(&d, "SET", "max", "9223372036854775807");
    D(&d, "SET", "over", "9223372036854775808");
    D(&d, "SET", "lead0", "012");
    D(&d, "SET", "str", "hello");
    D(&d, "SET", "e", "");
    DVAL(&d, "SET", "s44", big, 44);
    DVAL(&d, "SET", "s45", big, 45);
    DVAL(&d, "SET", "s24", big, 24);
    DVAL(&d, "SET", "s25", big, 25);
    D(&d, "INCR", "cnt");
    D(&d, "INCRBY", "cnt2", "100000");
    D(&d, "INCRBYFLOAT", "fl", "2");
    D(&d, "APPEND", "ap", "123");
    D(&d, "APPEND", "ap2", "x");
    D(&d, "APPEND", "ap2", "");
    D(&d, "SETRANGE", "sr", "0", "1");
    D(&d, "SETBIT", "sb", "0", "1");
    D(&d, "MSET", "m1", "7", "m2", "seven");
    D(&d, "SETEX", "se", "100", "42");
    D(&d, "GETSET", "gs", "9999");
    D(&d, "GETSET", "gs2", "10000");
    static const char *keys[] = {"int", "small", "neg", "max",  "over", "lead0", "str",
                                 "e",   "s44",   "s45", "s24",  "s25",  "cnt",   "cnt2",
                                 "fl",  "ap",    "ap2", "sr",   "sb",   "m1",    "m2",
                                 "se",  "gs",    "gs2", "nokey"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        D(&d, "OBJECT", "ENCODING", keys[i]);
        D(&d, "OBJECT", "REFCOUNT", keys[i]);
        D(&d, "OBJECT", "FREQ", keys[i]);
        DI(&d, "OBJECT", "IDLETIME", keys[i]);
    }
    D(&d, "OBJECT", "encoding", "int");
    D(&d, "OBJECT", "HELP");
    D(&d, "object", "help");
    D(&d, "OBJECT", "HELP", "x");
    D(&d, "OBJECT", "ENCODING");
    D(&d, "OBJECT", "ENCODING", "a", "b");
    D(&d, "OBJECT", "refcount");
    D(&d, "OBJECT", "FOO");
    D(&d, "OBJECT", "FOO", "k");
    D(&d, "OBJECT");
    D(&d, "OBJECT", "a\r\nb", "k");
    const char *nul[] = {"OBJECT", "enc\0oding", "k"};
    size_t nl[] = {6, 9, 1};
    DLEN(&d, 3, nul, nl);
    char longsub[300];
    memset(longsub, 's', sizeof(longsub) - 1);
    longsub[sizeof(longsub) - 1] = '\0';
    D(&d, "OBJECT", longsub);
    rdiff_end_both(&d);
}

/* ---- seeded random run, then a restart -------------------------------- */

static uint64_t rng_state;

static unsigned rn(unsigned n)
{
    return rdiff_below(&rng_state, n);
}

static const char *rnd_num(char *buf, long long lo, long long hi)
{
    uint64_t span = (uint64_t)(hi - lo + 1);
    snprintf(buf, 32, "%lld", lo + (long long)(rdiff_splitmix(&rng_state) % span));
    return buf;
}

Test(strings, random_sequence)
{
    diff_t d;
    rdiff_start_both(&d);
    uint64_t seed = rdiff_seed();
    rng_state = seed;
    char label[96];
    snprintf(label, sizeof(label), "[ATTIC_SEED=%" PRIu64 "] ", seed);
    d.label = label;
    static const char *keys[] = {"k0", "k1", "k2", "k3", "k4"};
    static const char *floats[] = {"1.5", "-0.25", "1e3", "3", "0.1", "-7", "abc", "1e30"};
    char val[3000], n1[32], n2[32];
    for (int step = 0; step < 1500 && d.mismatches == 0; step++) {
        const char *k = keys[rn(5)];
        size_t vlen = rn(4) == 0 ? rn(2000) : rn(40);
        for (size_t i = 0; i < vlen; i++)
            val[i] = (char)(rn(3) ? 'a' + rn(26) : rn(256));
        switch (rn(18)) {
        case 0:
            DVAL(&d, "SET", k, val, vlen);
            break;
        case 1:
            DVAL(&d, "APPEND", k, val, vlen);
            break;
        case 2:
        case 3:
            DRANGE(&d, k, rnd_num(n1, 0, 3000), val, vlen % 64);
            break;
        case 4:
        case 5:
            D(&d, "SETBIT", k, rnd_num(n1, 0, 30000), rn(2) ? "1" : "0");
            break;
        case 6:
            D(&d, "GETRANGE", k, rnd_num(n1, -3000, 3000), rnd_num(n2, -3000, 3000));
            break;
        case 7:
            D(&d, "GETBIT", k, rnd_num(n1, 0, 30000));
            break;
        case 8: {
            static const char *units[] = {"BYTE", "BIT"};
            if (rn(3))
                D(&d, "BITCOUNT", k, rnd_num(n1, -500, 500), rnd_num(n2, -500, 500), units[rn(2)]);
            else
                D(&d, "BITCOUNT", k);
            break;
        }
        case 9: {
            const char *b = rn(2) ? "1" : "0";
            switch (rn(4)) {
            case 0:
                D(&d, "BITPOS", k, b);
                break;
            case 1:
                D(&d, "BITPOS", k, b, rnd_num(n1, -300, 300));
                break;
            case 2:
                D(&d, "BITPOS", k, b, rnd_num(n1, -300, 300), rnd_num(n2, -300, 300));
                break;
            default:
                D(&d, "BITPOS", k, b, rnd_num(n1, -3000, 3000), rnd_num(n2, -3000, 3000),
                  rn(2) ? "BIT" : "BYTE");
            }
            break;
        }
        case 10:
            D(&d, "INCRBYFLOAT", k, floats[rn(8)]);
            break;
        case 11:
            D(&d, "INCRBY", k, rnd_num(n1, -100, 100));
            break;
        case 12:
            D(&d, "OBJECT", "ENCODING", k);
            break;
        case 13:
            D(&d, "GET", k);
            break;
        case 14:
            D(&d, "STRLEN", k);
            break;
        case 15:
            DVAL(&d, "GETSET", k, val, vlen);
            break;
        case 16: {
            static const char *const ops[] = {"AND", "OR", "XOR", "NOT"};
            int op = (int)rn(4);
            if (op == 3)
                D(&d, "BITOP", "NOT", k, keys[rn(5)]);
            else
                D(&d, "BITOP", ops[op], k, keys[rn(5)], keys[rn(5)], keys[rn(5)]);
            break;
        }
        default:
            if (rn(2))
                D(&d, "DEL", k);
            else
                D(&d, "MSETNX", k, "1", keys[rn(5)], "2");
        }
    }
    /* Replay: AtticDB restarted rebuilds every value from its log. */
    for (int i = 0; i < 5; i++)
        D(&d, "GET", keys[i]);
    wire_close(d.a[0]);
    cr_assert_eq(srv_stop(&rdiff_atticdb), 0, "atticdb stops cleanly");
    cr_assert_eq(srv_restart(&rdiff_atticdb), 0, "atticdb restarts");
    d.a[0] = wire_open(rdiff_atticdb.port, 10);
    cr_assert(d.a[0]);
    for (int i = 0; i < 5; i++) {
        D(&d, "GET", keys[i]);
        D(&d, "OBJECT", "ENCODING", keys[i]);
    }
    if (d.mismatches) fprintf(stderr, "random_sequence: rerun with ATTIC_SEED=%" PRIu64 "\n", seed);
    rdiff_end_both(&d);
}
