/*
 * test_cmds_sort.c - SORT and SORT_RO (D47) checked against a real Redis
 * 7.0 byte for byte: numeric and ALPHA orders, DESC, LIMIT's edges, BY
 * patterns (string keys, hash fields, missing ones, BY nosort and the
 * natural orders of lists and sorted sets), GET (#, keys, fields,
 * missing), STORE (a list replacing the destination and its TTL, an empty
 * result deleting it), the errors and their order, WRONGTYPE, binary
 * elements, elements and values kept in the log (large ones), MULTI/EXEC,
 * COMMAND GETKEYS, in RESP2 and RESP3; a seeded random differential test
 * (random lists, sets and sorted sets, random options); and SORT ... STORE
 * replayed after a kill -9 of the whole server reaching the same digest.
 *
 * Environment: ATTICDB_SERVER, REDIS_SERVER (default: redis-server from
 * PATH; skipped without it), ATTIC_SEED (the random test's seed).
 */
#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "redis_diff.h"

TestSuite(sort, .fini = rdiff_teardown, .timeout = 300);

static void fixtures(diff_t *d)
{
    D(d, "rpush", "l", "3", "1", "2", "10", "-5", "1.5", "1");
    D(d, "sadd", "si", "5", "3", "9", "1", "-2");
    D(d, "sadd", "sw", "foo", "bar", "baz", "qux");
    D(d, "zadd", "z", "3", "a", "1", "b", "2", "c", "2", "d");
    D(d, "rpush", "words", "pear", "apple", "fig", "Apple", "", "banana");
    D(d, "mset", "w_3", "30", "w_1", "10", "w_2", "20", "w_10", "5", "w_-5", "x");
    D(d, "mset", "o_1", "one", "o_2", "two", "o_3", "three", "o_a", "A");
    D(d, "hset", "h_1", "f", "x1", "g", "9");
    D(d, "hset", "h_3", "f", "x3", "g", "1");
    D(d, "hset", "h_a", "f", "xa", "g", "2");
    D(d, "mset", "u_pear", "d", "u_apple", "b", "u_fig", "a", "u_Apple", "c", "u_", "f");
}

static void forms(diff_t *d)
{
    fixtures(d);
    /* Numeric, ALPHA, DESC, LIMIT. */
    D(d, "sort", "l");
    D(d, "sort", "l", "desc");
    D(d, "sort", "l", "asc", "desc", "asc");
    D(d, "sort", "l", "alpha");
    D(d, "sort", "l", "alpha", "desc");
    D(d, "sort", "si");
    D(d, "sort", "si", "desc", "limit", "1", "2");
    D(d, "sort", "sw", "alpha");
    D(d, "sort", "sw");
    D(d, "sort", "z");
    D(d, "sort", "z", "alpha", "desc");
    D(d, "sort", "words", "alpha");
    D(d, "sort", "words");
    D(d, "sort", "nokey");
    D(d, "sort", "nokey", "by", "w_*", "get", "#");
    const char *limits[][2] = {{"0", "0"},
                               {"0", "1"},
                               {"1", "2"},
                               {"-1", "2"},
                               {"2", "-1"},
                               {"-5", "-5"},
                               {"6", "1"},
                               {"7", "1"},
                               {"100", "5"},
                               {"3", "100"},
                               {"2", "9223372036854775807"},
                               {"9223372036854775807", "1"},
                               {"0", "-9223372036854775808"}};
    for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
        D(d, "sort", "l", "limit", limits[i][0], limits[i][1]);
        D(d, "sort", "l", "by", "nosort", "limit", limits[i][0], limits[i][1]);
        D(d, "sort", "l", "by", "nosort", "desc", "limit", limits[i][0], limits[i][1]);
        D(d, "sort", "z", "by", "nosort", "limit", limits[i][0], limits[i][1]);
        D(d, "sort", "z", "by", "nosort", "desc", "limit", limits[i][0], limits[i][1]);
        D(d, "sort", "l", "by", "w_*", "limit", limits[i][0], limits[i][1]);
    }
    /* BY: keys, fields, missing, nosort, the natural orders. */
    D(d, "sort", "l", "by", "w_*");
    D(d, "sort", "l", "by", "w_*", "desc");
    D(d, "sort", "si", "by", "w_*");
    D(d, "sort", "l", "by", "h_*->g");
    D(d, "sort", "l", "by", "missing_*");
    D(d, "sort", "l", "by", "h_*->missing");
    D(d, "sort", "l", "by", "nosort");
    D(d, "sort", "l", "by", "nosort", "desc");
    D(d, "sort", "si", "by", "nosort");
    D(d, "sort", "z", "by", "nosort");
    D(d, "sort", "z", "by", "nosort", "desc");
    D(d, "sort", "z", "by", "nosort", "alpha");
    D(d, "sort", "words", "by", "u_*", "alpha");
    D(d, "sort", "words", "by", "u_*", "alpha", "desc");
    D(d, "sort", "words", "by", "u_*", "alpha", "limit", "1", "3");
    D(d, "sort", "l", "by", "o_*", "alpha", "limit", "0", "1");
    /* GET: #, keys, fields, missing, a pattern without '*'. */
    D(d, "sort", "l", "get", "#");
    D(d, "sort", "l", "get", "o_*");
    D(d, "sort", "l", "get", "o_*", "get", "#", "get", "h_*->f", "get", "nothing");
    D(d, "sort", "l", "by", "w_*", "get", "o_*", "limit", "1", "3");
    D(d, "sort", "z", "by", "nosort", "get", "o_*", "get", "#");
    D(d, "sort", "l", "get", "h_*->");
    D(d, "sort", "l", "by", "h_*->", "get", "#");
    D(d, "sort", "l", "get", "*->f");
    D(d, "sort", "z", "get", "h_*->f", "alpha");
    /* A pattern naming a key of another type is missing, not an error. */
    D(d, "sort", "l", "by", "h_*", "get", "h_*");
    D(d, "sort", "l", "get", "h_*->f->g");
    /* Scores that are not numbers, and those that are. */
    D(d, "sort", "sw");
    D(d, "sort", "l", "by", "w_*", "get", "#"); /* w_-5 is "x" */
    D(d, "rpush", "nums", "", " 5", "0x10", "inf", "-inf", "1e3", "3", "-0", "0");
    D(d, "sort", "nums");
    D(d, "sort", "nums", "desc");
    D(d, "rpush", "nan", "nan", "1");
    D(d, "sort", "nan");
    D(d, "rpush", "trail", "5 ", "1");
    D(d, "sort", "trail");
    D(d, "sort", "trail", "alpha");
    /* Errors, in Redis' order. */
    D(d, "sort", "l", "limit", "a", "1");
    D(d, "sort", "l", "limit", "1");
    D(d, "sort", "l", "limit", "1", "x", "foo");
    D(d, "sort", "l", "foo", "limit", "x", "1");
    D(d, "sort", "l", "get");
    D(d, "sort", "l", "by");
    D(d, "sort", "l", "store");
    D(d, "sort");
    D(d, "sort_ro");
    D(d, "sort_ro", "l", "store", "x");
    D(d, "sort_ro", "l", "by", "w_*", "get", "#", "get", "o_*", "limit", "0", "3", "desc");
    D(d, "set", "str", "x");
    D(d, "sort", "str");
    D(d, "sort", "str", "foo");
    D(d, "sort", "str", "store", "d");
    D(d, "sort_ro", "str");
    D(d, "exists", "d");
    /* STORE. */
    D(d, "sort", "l", "store", "dst");
    D(d, "lrange", "dst", "0", "-1");
    D(d, "type", "dst");
    D(d, "object", "encoding", "dst");
    D(d, "expire", "dst", "100");
    D(d, "sort", "l", "by", "w_*", "get", "o_*", "get", "#", "store", "dst");
    D(d, "ttl", "dst");
    D(d, "lrange", "dst", "0", "-1");
    D(d, "sort", "si", "by", "nosort", "store", "dst");
    D(d, "lrange", "dst", "0", "-1");
    D(d, "sort", "sw", "by", "nosort", "desc", "store", "dst");
    D(d, "lrange", "dst", "0", "-1");
    D(d, "sort", "z", "by", "nosort", "desc", "limit", "1", "2", "store", "dst");
    D(d, "lrange", "dst", "0", "-1");
    D(d, "sort", "sw", "alpha", "store", "dst", "store", "dst2");
    D(d, "lrange", "dst", "0", "-1");
    D(d, "lrange", "dst2", "0", "-1");
    D(d, "sort", "nokey", "store", "dst");
    D(d, "exists", "dst");
    D(d, "sort", "l", "limit", "5", "0", "store", "dst2");
    D(d, "exists", "dst2");
    D(d, "sort", "sw", "store", "dst");
    D(d, "exists", "dst");
    D(d, "sort", "l", "store", "str");
    D(d, "type", "str");
    D(d, "sort", "words", "alpha", "store", "words");
    D(d, "lrange", "words", "0", "-1");
    D(d, "sort", "l", "get", "nothing_*", "store", "dst");
    D(d, "lrange", "dst", "0", "-1");
    /* GET of values APPEND made: a short prefix kept in the entry and the
     * appended bytes in the log (empty, short and long), into STORE, the
     * destination one of them (test_diff seed 145: the store crashed). */
    D(d, "set", "ap_1", "abcdefghijklmnopqrstuv");
    D(d, "append", "ap_1", "v81");
    D(d, "set", "ap_2", "");
    D(d, "append", "ap_2", "xyz");
    D(d, "set", "ap_3", "0123456789");
    D(d, "append", "ap_3", "a value longer than twenty-four bytes");
    D(d, "rpush", "apl", "1", "2", "3");
    D(d, "sort", "apl", "get", "ap_*", "store", "apd");
    D(d, "lrange", "apd", "0", "-1");
    D(d, "sort", "apl", "get", "ap_*", "get", "#", "store", "ap_1");
    D(d, "lrange", "ap_1", "0", "-1");
    /* Keys: COMMAND GETKEYS as Redis finds them. */
    D(d, "command", "getkeys", "sort", "l");
    D(d, "command", "getkeys", "sort", "l", "store", "d");
    D(d, "command", "getkeys", "sort", "l", "get", "x", "by", "y", "limit", "0", "1", "store", "d",
      "store", "e");
    D(d, "command", "getkeys", "sort", "l", "get", "store", "d");
    D(d, "command", "getkeys", "sort", "l", "store");
    D(d, "command", "getkeys", "sort_ro", "l", "by", "b");
    D(d, "command", "info", "sort", "sort_ro");
    /* MULTI/EXEC: a read and a STORE in one transaction, errors inside. */
    D(d, "multi");
    D(d, "sort", "l", "limit", "0", "2");
    D(d, "sort", "l", "desc", "store", "dst");
    D(d, "sort", "l", "foo", "store", "dst");
    D(d, "sort", "str");
    D(d, "lrange", "dst", "0", "-1");
    D(d, "sort_ro", "dst", "alpha");
    D(d, "exec");
    /* Last: after a score out of range Redis' errno stays ERANGE, and its
     * numeric SORTs fail until some call resets it (AtticDB's do not). */
    D(d, "rpush", "big", "1e400", "2");
    D(d, "sort", "big");
}

Test(sort, forms_resp2)
{
    diff_t d;
    rdiff_start_both(&d);
    forms(&d);
    rdiff_end_both(&d);
}

Test(sort, forms_resp3)
{
    diff_t d;
    rdiff_start_both(&d);
    rdiff_hello3(&d);
    forms(&d);
    rdiff_end_both(&d);
}

/* Elements with NUL and high bytes, and elements and values kept in the
 * log (longer than an inline value, and larger than one record). */
Test(sort, binary_and_large)
{
    diff_t d;
    rdiff_start_both(&d);
    const char *push[] = {"rpush", "b", "a\0z", "a", "\xff", "\x80q", "a\0a", "A", "5\0x"};
    const size_t plens[] = {5, 1, 3, 1, 1, 2, 3, 1, 3};
    DLEN(&d, 9, push, plens);
    D(&d, "sort", "b", "alpha");
    D(&d, "sort", "b", "alpha", "desc");
    D(&d, "sort", "b", "alpha", "store", "bs");
    D(&d, "lrange", "bs", "0", "-1");
    D(&d, "sort", "b");
    const char *by[] = {"sort", "b", "by", "w\0*", "get", "#"};
    const size_t blens[] = {4, 1, 2, 3, 3, 1};
    DLEN(&d, 6, by, blens);
    const char *get[] = {"sort", "b", "by", "nosort", "get", "#\0x"};
    const size_t glens[] = {4, 1, 2, 6, 3, 3};
    DLEN(&d, 6, get, glens);
    /* Large elements: sizes across the inline limit and past 1 MiB. */
    static const size_t sizes[] = {30, 100, 5000, 70000, 1500000};
    char key[32];
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i];
        char *v = malloc(n + 1);
        for (size_t j = 0; j < n; j++)
            v[j] = (char)('a' + (j * 7 + i * 3) % 26);
        v[0] = (char)('e' - (char)i);
        v[n] = '\0';
        const char *ra[] = {"rpush", "large", v};
        const size_t rl[] = {5, 5, n};
        DLEN(&d, 3, ra, rl);
        snprintf(key, sizeof(key), "val_%c", v[0]);
        const char *sa[] = {"set", key, v};
        const size_t sl[] = {3, strlen(key), n};
        DLEN(&d, 3, sa, sl);
        snprintf(key, sizeof(key), "%zu", i);
        const char *ha[] = {"hset", "hv_x", key, v};
        const size_t hl[] = {4, 4, strlen(key), n};
        DLEN(&d, 4, ha, hl);
        free(v);
    }
    D(&d, "sort", "large", "alpha");
    D(&d, "sort", "large", "alpha", "desc", "limit", "1", "3");
    D(&d, "sort", "large", "alpha", "store", "ls");
    D(&d, "lrange", "ls", "0", "-1");
    D(&d, "rpush", "short", "a", "b", "c", "d", "e");
    D(&d, "sort", "short", "alpha", "get", "val_*");
    D(&d, "sort", "short", "alpha", "get", "val_*", "store", "vs");
    D(&d, "lrange", "vs", "0", "-1");
    D(&d, "rpush", "idx", "0", "1", "2", "3", "4");
    D(&d, "sort", "idx", "get", "hv_*->#");
    D(&d, "hset", "hv_0", "f", "x");
    D(&d, "sort", "idx", "by", "nosort", "get", "hv_x->*");
    D(&d, "mset", "large_1", "7");
    D(&d, "sort", "large", "by", "nosort", "get", "#", "store", "ln");
    D(&d, "lrange", "ln", "0", "-1");
    D(&d, "sort", "large");
    rdiff_end_both(&d);
}

/* A user with key patterns may SORT what they allow, but BY with a
 * pattern and GET name keys no check saw: Redis refuses them (its text,
 * in its order among the other errors), inside MULTI at EXEC. */
Test(sort, acl_key_patterns)
{
    diff_t d;
    rdiff_start_both_with(&d, "--frontends 2", NULL, 2);
    D(&d, "acl", "setuser", "lim", "on", ">pw", "~l*", "~d*", "+@all");
    D(&d, "rpush", "l", "2", "1", "3");
    DC(&d, 1, "auth", "lim", "pw");
    DC(&d, 1, "sort", "l");
    DC(&d, 1, "sort", "l", "by", "nosort", "desc");
    DC(&d, 1, "sort", "l", "by", "w_*");
    DC(&d, 1, "sort", "l", "get", "#");
    DC(&d, 1, "sort_ro", "l", "get", "#");
    DC(&d, 1, "sort", "l", "limit", "a", "1", "get", "#");
    DC(&d, 1, "sort", "l", "get", "#", "limit", "a", "1");
    DC(&d, 1, "sort", "l", "get", "#", "store", "d");
    DC(&d, 1, "sort", "l", "store", "d");
    DC(&d, 1, "sort", "l", "store", "x");
    DC(&d, 1, "sort", "x");
    DC(&d, 1, "multi");
    DC(&d, 1, "sort", "l", "by", "w_*");
    DC(&d, 1, "sort", "l", "desc", "store", "d");
    DC(&d, 1, "exec");
    D(&d, "lrange", "d", "0", "-1");
    D(&d, "sort", "l", "by", "w_*", "get", "#");
    rdiff_end_both(&d);
}

/* ---- the random differential test ---- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned rnd(uint64_t *s, unsigned n)
{
    return (unsigned)(rng_next(s) % n);
}

/* One element: an integer, a decimal, a word. */
static void element(uint64_t *s, int ints_only, char *out, size_t n)
{
    static const char *const words[] = {"apple", "pear",  "fig", "kiwi", "lime", "plum",
                                        "date",  "Apple", "b",   "zz",   "",     "a b"};
    unsigned k = ints_only ? 0 : rnd(s, 3);
    if (k == 0)
        snprintf(out, n, "%d", (int)rnd(s, 40) - 10);
    else if (k == 1)
        snprintf(out, n, "%d.%u", (int)rnd(s, 20) - 5, rnd(s, 100));
    else
        snprintf(out, n, "%s%u", words[rnd(s, 12)], rnd(s, 3));
}

static void random_round(diff_t *d, uint64_t *s)
{
    D(d, "flushall");
    unsigned type = rnd(s, 3), n = rnd(s, 25);
    int ints_only = rnd(s, 2), numeric = rnd(s, 3) != 0;
    static const char *const keys[] = {"rl", "rs", "rz"};
    const char *key = keys[type];
    char el[40], val[64], wkey[80], score[32];
    for (unsigned i = 0; i < n; i++) {
        element(s, ints_only, el, sizeof(el));
        if (type == 0)
            D(d, "rpush", key, el);
        else if (type == 1)
            D(d, "sadd", key, el);
        else {
            snprintf(score, sizeof(score), "%u", rnd(s, 6));
            D(d, "zadd", key, score, el);
        }
        /* Weights (numbers, or sometimes not), unique ALPHA weights,
         * values and hash fields for most elements. */
        if (rnd(s, 4)) {
            snprintf(wkey, sizeof(wkey), "w_%s", el);
            if (numeric || rnd(s, 8))
                snprintf(val, sizeof(val), "%d", (int)rnd(s, 10));
            else
                snprintf(val, sizeof(val), "x%u", rnd(s, 3));
            D(d, "set", wkey, val);
        }
        snprintf(wkey, sizeof(wkey), "u_%s", el);
        snprintf(val, sizeof(val), "u%s", el);
        D(d, "set", wkey, val);
        if (rnd(s, 3)) {
            snprintf(wkey, sizeof(wkey), "o_%s", el);
            snprintf(val, sizeof(val), "v%u", rnd(s, 100));
            D(d, "set", wkey, val);
        }
        if (rnd(s, 2)) {
            snprintf(wkey, sizeof(wkey), "h_%s", el);
            snprintf(val, sizeof(val), "%u", rnd(s, 7));
            D(d, "hset", wkey, "f", val);
        }
    }
    for (int q = 0; q < 6; q++) {
        const char *argv[32];
        char lim[2][24];
        int argc = 0;
        argv[argc++] = rnd(s, 4) ? "sort" : "sort_ro";
        int ro = argv[0][4] == '_';
        argv[argc++] = key;
        int alpha = rnd(s, 2), desc = rnd(s, 2), store = !ro && rnd(s, 3) == 0;
        unsigned by = rnd(s, 6); /* 0-1 none, 2 w_*, 3 h_*->f, 4 nosort, 5 u_* */
        /* Orders that depend on a table's layout or on ties among equal
         * ALPHA weights are not compared: a set's own order (BY nosort
         * without STORE, unless it is all integers), and ALPHA by weights
         * that may be equal or missing (only u_* is unique and complete). */
        if (by == 4 && type == 1 && !store && !ints_only) by = 0;
        if (alpha && (by == 2 || by == 3)) by = 5;
        if (by == 2) argv[argc++] = "by", argv[argc++] = "w_*";
        if (by == 3) argv[argc++] = "by", argv[argc++] = "h_*->f";
        if (by == 4) argv[argc++] = "by", argv[argc++] = "nosort";
        if (by == 5) argv[argc++] = "by", argv[argc++] = "u_*";
        if (rnd(s, 2)) {
            snprintf(lim[0], sizeof(lim[0]), "%d", (int)rnd(s, 30) - 5);
            snprintf(lim[1], sizeof(lim[1]), "%d", (int)rnd(s, 30) - 5);
            argv[argc++] = "limit";
            argv[argc++] = lim[0];
            argv[argc++] = lim[1];
        }
        static const char *const gets[] = {"#", "o_*", "h_*->f", "none_*", "u_*"};
        for (unsigned g = rnd(s, 4); g > 0; g--)
            argv[argc++] = "get", argv[argc++] = gets[rnd(s, 5)];
        if (alpha) argv[argc++] = "alpha";
        if (desc) argv[argc++] = "desc";
        if (store) argv[argc++] = "store", argv[argc++] = "dst";
        rdiff_cmd(d, __LINE__, 0, RDIFF_EXACT, argc, argv, NULL);
        if (store) D(d, "lrange", "dst", "0", "-1");
    }
}

Test(sort, random_against_redis)
{
    diff_t d;
    rdiff_start_both(&d);
    const char *env = getenv("ATTIC_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
    fprintf(stderr, "test_cmds_sort random_against_redis: ATTIC_SEED=%" PRIu64 "\n", seed);
    d.seed = seed;
    uint64_t s = seed;
    for (int round = 0; round < 150; round++)
        random_round(&d, &s);
    rdiff_end_both(&d);
}

/* ---- replay ---- */

static srv_t S;

static redisReply *q(redisContext *c, const char *cmd)
{
    redisReply *r = redisCommand(c, cmd);
    cr_assert_not_null(r, "%s: no reply", cmd);
    return r;
}

static char *digest(redisContext *c)
{
    redisReply *r = q(c, "DEBUG DIGEST");
    cr_assert_eq(r->type, REDIS_REPLY_STATUS, "DEBUG DIGEST: %s", r->str);
    char *dg = strdup(r->str);
    freeReplyObject(r);
    return dg;
}

/* Whether the data directory holds a checkpoint (checkpoint-*.ckpt). */
static int has_checkpoint(const srv_t *s)
{
    DIR *dir = opendir(s->dir);
    cr_assert_not_null(dir);
    int found = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        size_t l = strlen(e->d_name);
        if (!strncmp(e->d_name, "checkpoint-", 11) && l > 5 && !strcmp(e->d_name + l - 5, ".ckpt"))
            found = 1;
    }
    closedir(dir);
    return found;
}

/* SORT ... STORE applied live over sets built member by member, replayed
 * after kill -9 over the same sets read back from a checkpoint taken
 * before it (whose tables may be laid out otherwise): the same state. */
Test(sort, store_replays_to_the_same_digest)
{
    cr_assert_eq(srv_start(&S, "--frontends 2 --checkpoint-bytes 64kb"), 0);
    redisContext *c = srv_connect(&S);
    cr_assert_not_null(c);
    char big[3000];
    memset(big, 'q', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    for (int i = 0; i < 200; i++) {
        redisReply *r = redisCommand(c, "RPUSH src %d", (i * 37) % 101);
        freeReplyObject(r);
        r = redisCommand(c, "SET w_%d %d", i, (i * 13) % 17);
        freeReplyObject(r);
        r = redisCommand(c, "SET v_%d %s%d", i, i % 5 ? "v" : big, i);
        freeReplyObject(r);
        r = redisCommand(c, "SADD set m%d", i % 50);
        freeReplyObject(r);
    }
    /* Wait (bounded) for a checkpoint of what is written so far. */
    for (int i = 0; i < 600 && !has_checkpoint(&S); i++) {
        freeReplyObject(q(c, "PING"));
        usleep(50000);
    }
    cr_assert(has_checkpoint(&S), "no checkpoint was written");
    /* Members that sort equal (no BY value) come in byte order. */
    redisReply *t = q(c, "SORT set BY nosuch_* ALPHA LIMIT 0 3");
    cr_assert_eq(t->elements, 3);
    cr_assert_str_eq(t->element[0]->str, "m0");
    cr_assert_str_eq(t->element[1]->str, "m1");
    cr_assert_str_eq(t->element[2]->str, "m10");
    freeReplyObject(t);
    freeReplyObject(q(c, "SORT set BY nosuch_* ALPHA STORE ties"));
    freeReplyObject(q(c, "SORT set BY w_* ALPHA DESC STORE ties2"));
    freeReplyObject(q(c, "SORT src STORE a"));
    freeReplyObject(q(c, "SORT src BY w_* GET v_* GET # DESC LIMIT 10 100 STORE b"));
    freeReplyObject(q(c, "SORT set ALPHA STORE c"));
    freeReplyObject(q(c, "SORT set BY nosort STORE d"));
    freeReplyObject(q(c, "SORT src GET v_* STORE src"));
    freeReplyObject(q(c, "SORT missing STORE a2"));
    redisReply *r = q(c, "LLEN b");
    cr_assert_eq(r->integer, 200); /* 100 elements, two GETs each */
    freeReplyObject(r);
    r = q(c, "LINDEX b 0");
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    freeReplyObject(r);
    char *before = digest(c);
    redisFree(c);
    srv_kill_all(&S);
    cr_assert_eq(srv_restart(&S), 0, "restart after SIGKILL");
    c = srv_connect(&S);
    cr_assert_not_null(c);
    char *after = digest(c);
    cr_assert_str_eq(after, before, "replay reached another state");
    r = q(c, "LRANGE ties 0 1");
    cr_assert_eq(r->elements, 2);
    cr_assert_str_eq(r->element[0]->str, "m0");
    cr_assert_str_eq(r->element[1]->str, "m1");
    freeReplyObject(r);
    r = q(c, "LRANGE c 0 2");
    cr_assert_eq(r->elements, 3);
    cr_assert_str_eq(r->element[0]->str, "m0");
    cr_assert_str_eq(r->element[1]->str, "m1");
    cr_assert_str_eq(r->element[2]->str, "m10");
    freeReplyObject(r);
    free(before);
    free(after);
    redisFree(c);
    srv_cleanup(&S);
}
