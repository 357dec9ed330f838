/*
 * test_cmds_dump.c - DUMP and RESTORE (D34) between a real atticdb-server
 * and a real redis-server 7.0.15: values DUMPed by Redis RESTORE into
 * AtticDB and read back the same, values DUMPed by AtticDB RESTORE into
 * Redis, the small values whose payloads must be byte-equal, and
 * RESTORE's IDLETIME and FREQ read back by OBJECT as Redis' (D52), live
 * and after a replay; compressible values of every type and encoding,
 * byte-equal with LZF where Redis compresses, rdbcompression and
 * list-compress-depth set at run time (D57).
 */
#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "redis_diff.h"
#include "cr_hiredis.h"

TestSuite(dump, .fini = rdiff_teardown, .timeout = 120);

/* DUMP key on from, RESTORE it as key on to; returns the payload's reply. */
static void move(redisContext *from, redisContext *to, const char *key, const char *as)
{
    redisReply *d = q(from, "DUMP %s", key);
    cr_assert_eq(d->type, REDIS_REPLY_STRING, "DUMP %s", key);
    redisReply *r = q(to, "RESTORE %s 0 %b", as, d->str, d->len);
    cr_assert_eq(r->type, REDIS_REPLY_STATUS, "RESTORE %s: %s", as, r->str);
    freeReplyObject(r);
    freeReplyObject(d);
}

/* The reply to fmt on ka at a and on kb at b are the same. */
static void same2(redisContext *a, const char *ka, redisContext *b, const char *kb, const char *fmt)
{
    const char *key = ka;
    redisReply *x = q(a, fmt, ka), *y = q(b, fmt, kb);
    cr_assert_eq(x->type, y->type, "%s %s", fmt, key);
    if (x->type == REDIS_REPLY_STRING || x->type == REDIS_REPLY_STATUS)
        cr_assert(x->len == y->len && !memcmp(x->str, y->str, x->len), "%s %s", fmt, key);
    if (x->type == REDIS_REPLY_INTEGER) cr_assert_eq(x->integer, y->integer);
    if (x->type == REDIS_REPLY_ARRAY) cr_assert_eq(x->elements, y->elements);
    freeReplyObject(x);
    freeReplyObject(y);
}

static void same(redisContext *a, redisContext *b, const char *fmt, const char *key)
{
    same2(a, key, b, key, fmt);
}

/* A redis-server (r) and an atticdb-server (a), both started, connected. */
static void start_both(diff_t *d, redisContext **r, redisContext **a)
{
    rdiff_start_both(d);
    *r = redisConnect("127.0.0.1", rdiff_redis.port);
    *a = srv_connect(&rdiff_atticdb);
    cr_assert(*r && !(*r)->err && *a);
}

static void end_both(diff_t *d, redisContext *r, redisContext *a)
{
    redisFree(r);
    redisFree(a);
    rdiff_end_both(d);
}

Test(dump, values_move_both_ways)
{
    diff_t d;
    redisContext *r, *a;
    start_both(&d, &r, &a);
    char big[3000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = 0;
    const char *fill[][4] = {{"SET", "s", "hello", NULL}, {"SET", "i", "-12345", NULL},
                             {"SET", "big", big, NULL},   {"SADD", "is", "5", "-3"},
                             {"SADD", "ss", "x", "y"},    {"HSET", "h", "f", "1"},
                             {"HSET", "h", "g", "hello"}, {"SET", "e", "", NULL}};
    for (size_t i = 0; i < sizeof fill / sizeof fill[0]; i++) {
        int n = fill[i][3] ? 4 : 3;
        freeReplyObject(redisCommandArgv(r, n, fill[i], NULL));
        freeReplyObject(redisCommandArgv(a, n, fill[i], NULL));
    }
    for (int i = 0; i < 300; i++) { /* a table set and hash */
        freeReplyObject(q(r, "SADD t m%d", i)), freeReplyObject(q(a, "SADD t m%d", i));
        freeReplyObject(q(r, "HSET th f%d v%d", i, i)),
            freeReplyObject(q(a, "HSET th f%d v%d", i, i));
    }
    freeReplyObject(q(r, "CONFIG SET set-max-intset-entries 512"));
    const char *keys[] = {"s", "i", "big", "is", "ss", "h", "e", "t", "th"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char as[32];
        snprintf(as, sizeof as, "from-redis-%s", keys[i]);
        move(r, a, keys[i], as); /* Redis -> AtticDB */
        snprintf(as, sizeof as, "from-attic-%s", keys[i]);
        move(a, r, keys[i], as); /* AtticDB -> Redis */
    }
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char k1[32], k2[32];
        snprintf(k1, sizeof k1, "from-redis-%s", keys[i]);
        snprintf(k2, sizeof k2, "from-attic-%s", keys[i]);
        same2(a, keys[i], a, k1, "TYPE %s");
        same2(r, keys[i], r, k2, "TYPE %s");
        same2(a, k1, r, k2, "OBJECT ENCODING %s");
        redisReply *t = q(a, "TYPE %s", k1);
        const char *fmt = !strcmp(t->str, "string") ? "GET %s"
                          : !strcmp(t->str, "set")  ? "SCARD %s"
                                                    : "HLEN %s";
        freeReplyObject(t);
        same2(a, k1, r, keys[i], fmt);
        same2(r, k2, a, keys[i], fmt);
    }
    /* Byte-equal payloads for the small values Redis does not compress. */
    const char *equal[] = {"s", "i", "is", "h", "e"};
    for (size_t i = 0; i < sizeof equal / sizeof equal[0]; i++)
        same(a, r, "DUMP %s", equal[i]);
    same2(a, "from-redis-h", r, "h", "HGET %s g");
    same2(r, "from-attic-h", a, "h", "HGET %s g");
    end_both(&d, r, a);
}

/* key DUMPed by Redis restored into AtticDB as k1 ("from-redis-key"),
 * DUMPed by AtticDB restored into Redis as k2; k1's encoding is Redis'. */
static void move_both(redisContext *r, redisContext *a, const char *key, char *k1, char *k2)
{
    snprintf(k1, 32, "from-redis-%s", key);
    move(r, a, key, k1);
    snprintf(k2, 32, "from-attic-%s", key);
    move(a, r, key, k2);
    same2(a, k1, r, key, "OBJECT ENCODING %s");
}

/* ZRANGE key 0 -1 WITHSCORES as "member score " text. */
static char *zset_text(redisContext *c, const char *key)
{
    redisReply *x = q(c, "ZRANGE %s 0 -1 WITHSCORES", key);
    cr_assert_eq(x->type, REDIS_REPLY_ARRAY, "ZRANGE %s", key);
    size_t total = 1;
    for (size_t i = 0; i < x->elements; i++)
        total += x->element[i]->len + 1;
    char *out = malloc(total), *p = out;
    for (size_t i = 0; i < x->elements; i++) {
        memcpy(p, x->element[i]->str, x->element[i]->len);
        p += x->element[i]->len;
        *p++ = ' ';
    }
    *p = 0;
    freeReplyObject(x);
    return out;
}

/* Sorted sets both ways: listpack (RDB type 17) and skiplist (type 5)
 * payloads, infinities, a long member, a skiplist small enough to load
 * back as a listpack under a raised limit; small listpacks' payloads are
 * byte-equal to Redis' (no LZF: they are under its 20-byte threshold). */
Test(dump, zsets_move_both_ways)
{
    diff_t d;
    redisContext *r, *a;
    start_both(&d, &r, &a);
    char longm[100];
    memset(longm, 'w', sizeof longm - 1);
    longm[sizeof longm - 1] = 0;
    redisContext *both[] = {r, a};
    for (int s = 0; s < 2; s++) {
        freeReplyObject(q(both[s], "ZADD tiny 1 a 2 b"));
        freeReplyObject(q(both[s], "ZADD lp 1 a 2.5 b -inf c 1e20 d -7 e 0.1 f"));
        freeReplyObject(q(both[s], "ZADD long 1 %s 2 y", longm));
        for (int i = 0; i < 200; i++)
            freeReplyObject(q(both[s], "ZADD sk %d.5 m%d", i % 17, i));
    }
    const char *keys[] = {"tiny", "lp", "long", "sk"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char k1[32], k2[32];
        move_both(r, a, keys[i], k1, k2);
        same2(r, k2, a, keys[i], "OBJECT ENCODING %s");
        char *want = zset_text(r, keys[i]), *got1 = zset_text(a, k1), *got2 = zset_text(r, k2);
        cr_assert_str_eq(got1, want, "%s: Redis' payload read back", keys[i]);
        cr_assert_str_eq(got2, want, "%s: AtticDB's payload read by Redis", keys[i]);
        free(want), free(got1), free(got2);
    }
    same(a, r, "DUMP %s", "tiny");
    same(a, r, "DUMP %s", "sk"); /* type 5: member strings under 20 bytes, binary scores */
    /* a skiplist payload loads as a listpack when it fits the limits */
    for (int s = 0; s < 2; s++)
        freeReplyObject(q(both[s], "CONFIG SET zset-max-listpack-entries 256"));
    move(r, a, "sk", "sk-small");
    move(r, r, "sk", "sk-small");
    same(a, r, "OBJECT ENCODING %s", "sk-small");
    end_both(&d, r, a);
}

/* LRANGE key 0 -1 of a and b are the same elements. */
static void same_list(redisContext *a, const char *ka, redisContext *b, const char *kb)
{
    redisReply *x = q(a, "LRANGE %s 0 -1", ka), *y = q(b, "LRANGE %s 0 -1", kb);
    cr_assert_eq(x->type, REDIS_REPLY_ARRAY, "LRANGE %s", ka);
    cr_assert_eq(x->elements, y->elements, "LRANGE %s / %s", ka, kb);
    for (size_t i = 0; i < x->elements; i++)
        cr_assert(x->element[i]->len == y->element[i]->len &&
                      !memcmp(x->element[i]->str, y->element[i]->str, x->element[i]->len),
                  "%s[%zu]", ka, i);
    freeReplyObject(x);
    freeReplyObject(y);
}

/* xorshift64: the random tests' generator, seeded, so a failure repeats. */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* n incompressible 100-byte elements (xorshift from seed): Redis leaves
 * their nodes uncompressed, so DUMP payloads can be byte-equal. */
static void random_elements(unsigned char (*out)[100], int n, uint64_t seed)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 100; k++)
            out[i][k] = (unsigned char)rnd(&seed);
}

/* Lists (RDB type 18, D40) both ways: short, integer elements, several
 * 8 KB nodes, an element over 8 KB in a node of its own; payloads of
 * incompressible elements (Redis stores those nodes without LZF) are
 * byte-equal, so the node split is Redis'. RESTORE's options and errors
 * answer as Redis does. */
Test(dump, lists_move_both_ways)
{
    diff_t d;
    redisContext *r, *a;
    start_both(&d, &r, &a);
    redisContext *both[] = {r, a};
    static unsigned char rnd[200][100];
    random_elements(rnd, 200, 88172645463325252ull);
    static char big[9000];
    memset(big, 'b', sizeof big - 1);
    for (int s = 0; s < 2; s++) {
        freeReplyObject(q(both[s], "RPUSH short a b c"));
        freeReplyObject(q(both[s], "RPUSH ints 1 -5 300 70000 -9000000000 12345678901234567890"));
        for (int i = 0; i < 200; i++)
            freeReplyObject(q(both[s], "RPUSH rnd %b", rnd[i], (size_t)100));
        for (int i = 0; i < 2000; i++)
            freeReplyObject(q(both[s], "RPUSH many e%d", i));
        freeReplyObject(q(both[s], "RPUSH big x %s y", big));
    }
    const char *keys[] = {"short", "ints", "rnd", "many", "big"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char k1[32], k2[32];
        move_both(r, a, keys[i], k1, k2);
        same_list(a, k1, r, keys[i]);
        same_list(r, k2, a, keys[i]);
    }
    same(a, r, "DUMP %s", "short");
    same(a, r, "DUMP %s", "rnd"); /* three nodes of 100-byte elements, uncompressed */
    /* RESTORE's options on a list, and its errors, as Redis answers them */
    redisReply *p = q(r, "DUMP short");
    const char *opts[] = {"RESTORE short 0 %b",
                          "RESTORE short 0 %b REPLACE",
                          "RESTORE t1 4102444800000 %b ABSTTL",
                          "RESTORE t2 0 %b IDLETIME 100",
                          "RESTORE t3 0 %b FREQ 5",
                          "RESTORE t4 0 %b IDLETIME 1 FREQ 5",
                          "RESTORE t5 -1 %b"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        redisReply *x = q(r, opts[i], p->str, p->len), *y = q(a, opts[i], p->str, p->len);
        cr_assert_eq(x->type, y->type, "%s", opts[i]);
        cr_assert_str_eq(x->str ? x->str : "", y->str ? y->str : "", "%s", opts[i]);
        freeReplyObject(x), freeReplyObject(y);
    }
    same(a, r, "PEXPIRETIME %s", "t1");
    same_list(a, "t1", r, "t1");
    /* a damaged payload (its CRC fixed by no one) and a bad one */
    char bad[64];
    memcpy(bad, p->str, p->len);
    bad[5] ^= 1;
    redisReply *x = q(r, "RESTORE bad 0 %b", bad, p->len),
               *y = q(a, "RESTORE bad 0 %b", bad, p->len);
    cr_assert_str_eq(y->str, x->str);
    freeReplyObject(x), freeReplyObject(y);
    freeReplyObject(p);
    same(a, r, "EXISTS %s", "bad");
    end_both(&d, r, a);
}

/* CONFIG SET list-max-listpack-size reaches CONFIG GET and DUMP's node
 * split: by count (4 elements a node), by size (-1: 4 KB) and clamped
 * (-9 acts as -5, 99999 as 32767), payloads byte-equal to Redis' for
 * lists made under each setting. */
Test(dump, list_max_listpack_size_shapes_the_nodes)
{
    diff_t d;
    redisContext *r, *a;
    start_both(&d, &r, &a);
    redisContext *both[] = {r, a};
    static unsigned char rnd[100][100];
    random_elements(rnd, 100, 2463534242ull);
    const char *fills[] = {"4", "-1", "-9", "99999", "1"};
    for (size_t f = 0; f < sizeof fills / sizeof fills[0]; f++) {
        char key[32];
        snprintf(key, sizeof key, "l%zu", f);
        for (int s = 0; s < 2; s++) {
            redisReply *ok = q(both[s], "CONFIG SET list-max-listpack-size %s", fills[f]);
            cr_assert_str_eq(ok->str, "OK");
            freeReplyObject(ok);
            for (int i = 0; i < 100; i++)
                freeReplyObject(q(both[s], "RPUSH %s %b", key, rnd[i], (size_t)100));
        }
        same(a, r, "CONFIG GET %s", "list-max-listpack-size");
        same(a, r, "DUMP %s", key);
    }
    end_both(&d, r, a);
}

/* Short elements (1 to 60 random bytes, which LZF leaves alone) fill a
 * node as far as Redis 7.0.15's estimate lets them: it counts 8 bytes of
 * overhead for every element (SIZE_ESTIMATE_OVERHEAD), where D40 first
 * counted listpack's own 2 to 10, which made some nodes one element
 * longer than Redis' under the size limits (-1, -2). Payloads byte-equal. */
Test(dump, short_elements_fill_nodes_as_redis)
{
    diff_t d;
    redisContext *r, *a;
    start_both(&d, &r, &a);
    redisContext *both[] = {r, a};
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    const char *fills[] = {"-1", "-2", "7"};
    for (size_t f = 0; f < sizeof fills / sizeof fills[0]; f++) {
        char key[32];
        snprintf(key, sizeof key, "short%zu", f);
        unsigned char e[60];
        for (int s = 0; s < 2; s++)
            freeReplyObject(q(both[s], "CONFIG SET list-max-listpack-size %s", fills[f]));
        for (int i = 0; i < 600; i++) {
            size_t n = 1 + rnd(&seed) % sizeof e;
            for (size_t k = 0; k < n; k++)
                e[k] = (unsigned char)(rnd(&seed) >> 32);
            for (int s = 0; s < 2; s++)
                freeReplyObject(q(both[s], "RPUSH %s %b", key, e, n));
        }
        same(a, r, "DUMP %s", key);
    }
    end_both(&d, r, a);
}

/* ---- LZF where Redis 7.0 compresses (D57) ---- */

/* DUMP key on both: byte-equal payloads, and the payload's first string
 * LZF (its second byte 0xC3) or not, as want_lzf says. */
static void same_dump_lzf(redisContext *a, redisContext *r, const char *key, int want_lzf)
{
    same(a, r, "DUMP %s", key);
    redisReply *x = q(a, "DUMP %s", key);
    cr_assert(x->type == REDIS_REPLY_STRING && x->len > 2, "DUMP %s", key);
    cr_assert_eq((unsigned char)x->str[1] == 0xC3, want_lzf, "DUMP %s: LZF %d", key, !want_lzf);
    freeReplyObject(x);
}

/* A compressible value of every type and encoding DUMPs byte-equal to
 * redis-server 7.0.15's under rdbcompression yes (its default): strings
 * longer than 20 bytes LZF when that saves 4, listpacks (hash, zset, list
 * nodes) and intsets compressed as one string each, a table's members and
 * values one by one; each payload restores into the other server to the
 * same value. */
Test(dump, compressible_values_dump_as_redis)
{
    diff_t d;
    redisContext *r, *a;
    start_both(&d, &r, &a);
    redisContext *both[] = {r, a};
    static char text[5001], noise[31], a21[22], a20[21], x200[201], y100[101];
    for (int i = 0; i < 5000; i++)
        text[i] = "The quick brown fox jumps over the lazy dog. "[i % 45];
    uint64_t seed = 88172645463325252ull;
    for (int i = 0; i < 30; i++)
        noise[i] = (char)('!' + rnd(&seed) % 90);
    memset(a21, 'a', 21), memset(a20, 'a', 20), memset(x200, 'x', 200), memset(y100, 'y', 100);
    for (int s = 0; s < 2; s++) {
        redisContext *c = both[s];
        freeReplyObject(q(c, "SET s21 %s", a21));
        freeReplyObject(q(c, "SET s20 %s", a20));
        freeReplyObject(q(c, "SET text %s", text));
        freeReplyObject(q(c, "SET noise %s", noise));
        freeReplyObject(q(c, "HSET hlp f1 %b f2 %b n 12345", x200, (size_t)60, y100, (size_t)50));
        freeReplyObject(q(c, "HSET ht f %s", x200));
        freeReplyObject(q(c, "SADD st %s", y100));
        for (int i = 0; i < 50; i++) {
            freeReplyObject(q(c, "SADD is8 %lld", (1LL << 40) + i));
            freeReplyObject(q(c, "ZADD zlp %d member-%d-pad", i, i));
        }
        for (int i = 0; i < 200; i++)
            freeReplyObject(q(c, "ZADD zsk %d member-%d-%b", i % 7, i, y100, (size_t)30));
        for (int i = 0; i < 1500; i++)
            freeReplyObject(q(c, "RPUSH list element-%d-%b", i, x200, (size_t)20));
        for (int i = 0; i < 300; i++) /* tables: byte-equal only one by one */
            freeReplyObject(q(c, "HSET htab field-%d value-%d-%b", i, i, y100, (size_t)40));
    }
    static const struct {
        const char *key;
        int lzf;
    } equal[] = {{"s21", 1}, {"s20", 0}, {"text", 1}, {"noise", 0}, {"hlp", 1}, {"ht", 0},
                 {"st", 0},  {"is8", 1}, {"zlp", 1},  {"zsk", 0},   {"list", 0}};
    for (size_t i = 0; i < sizeof equal / sizeof equal[0]; i++)
        same_dump_lzf(a, r, equal[i].key, equal[i].lzf);
    /* the tables' and lists' strings are past their headers: LZF too */
    redisReply *x = q(a, "DUMP ht");
    cr_assert_eq((unsigned char)x->str[4], 0xC3, "the hash table's value");
    freeReplyObject(x);
    const char *keys[] = {"s21", "text", "noise", "hlp",  "ht",  "st",
                          "is8", "zlp",  "zsk",   "list", "htab"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char k1[32], k2[32];
        move_both(r, a, keys[i], k1, k2);
        redisReply *t = q(a, "TYPE %s", keys[i]);
        if (!strcmp(t->str, "list")) {
            same_list(a, k1, r, keys[i]);
            same_list(r, k2, a, keys[i]);
        } else if (!strcmp(t->str, "zset")) {
            char *want = zset_text(r, keys[i]), *got1 = zset_text(a, k1), *got2 = zset_text(r, k2);
            cr_assert_str_eq(got1, want, "%s", keys[i]);
            cr_assert_str_eq(got2, want, "%s", keys[i]);
            free(want), free(got1), free(got2);
        } else {
            const char *fmt = !strcmp(t->str, "string") ? "GET %s"
                              : !strcmp(t->str, "set")  ? "SCARD %s"
                                                        : "HLEN %s";
            same2(a, k1, r, keys[i], fmt);
            same2(r, k2, a, keys[i], fmt);
        }
        freeReplyObject(t);
    }
    same2(a, "from-redis-htab", r, "htab", "HGET %s field-299");
    same2(r, "from-attic-htab", a, "htab", "HGET %s field-299");
    same2(a, "from-redis-hlp", r, "hlp", "HGET %s f1");
    same2(r, "from-attic-st", a, "st", "SRANDMEMBER %s");
    end_both(&d, r, a);
}

/* CONFIG SET rdbcompression reaches the store: under no, DUMP writes
 * plain strings as Redis then does (same bytes, no LZF), and yes brings
 * LZF back; CONFIG GET answers as Redis. */
Test(dump, rdbcompression_is_set_at_run_time)
{
    diff_t d;
    redisContext *r, *a;
    start_both(&d, &r, &a);
    redisContext *both[] = {r, a};
    static char big[3000];
    memset(big, 'z', sizeof big - 1);
    for (int s = 0; s < 2; s++) {
        freeReplyObject(q(both[s], "SET s %s", big));
        freeReplyObject(q(both[s], "HSET h f %b g %b", big, (size_t)60, big, (size_t)60));
        freeReplyObject(q(both[s], "ZADD z 1 %b 2 %b", big, (size_t)40, big, (size_t)41));
        for (int i = 0; i < 900; i++)
            freeReplyObject(q(both[s], "RPUSH l %b", big, (size_t)30));
    }
    const char *keys[] = {"s", "h", "z", "l"};
    for (int round = 0; round < 3; round++) {
        const char *v = round == 1 ? "no" : "yes";
        for (int s = 0; s < 2; s++) {
            redisReply *ok = q(both[s], "CONFIG SET rdbcompression %s", v);
            cr_assert_str_eq(ok->str, "OK");
            freeReplyObject(ok);
        }
        same(a, r, "CONFIG GET %s", "rdbcompression");
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            same_dump_lzf(a, r, keys[i], !strcmp(keys[i], "l") ? 0 : round != 1);
            char as[32];
            snprintf(as, sizeof as, "%s-%d", keys[i], round);
            move(a, r, keys[i], as);
            move(r, a, keys[i], as);
            same2(r, as, a, as,
                  !strcmp(keys[i], "s")   ? "GET %s"
                  : !strcmp(keys[i], "h") ? "HGET %s g"
                  : !strcmp(keys[i], "z") ? "ZCARD %s"
                                          : "LLEN %s");
        }
    }
    redisReply *bad = q(a, "CONFIG SET rdbcompression maybe"),
               *want = q(r, "CONFIG SET rdbcompression maybe");
    cr_assert_str_eq(bad->str, want->str);
    freeReplyObject(bad), freeReplyObject(want);
    end_both(&d, r, a);
}

/* list-compress-depth reaches the store: a list made under depth d has
 * all its nodes but the d at each end LZF in Redis' payload, even under
 * rdbcompression no, and AtticDB's is byte-equal. */
Test(dump, list_compress_depth_nodes_as_redis)
{
    diff_t d;
    redisContext *r, *a;
    start_both(&d, &r, &a);
    redisContext *both[] = {r, a};
    const char *depths[] = {"1", "2", "3"}, *modes[] = {"no", "yes"};
    for (size_t k = 0; k < 3; k++)
        for (size_t m = 0; m < 2; m++) {
            char key[32];
            snprintf(key, sizeof key, "l-%s-%s", depths[k], modes[m]);
            for (int s = 0; s < 2; s++) {
                freeReplyObject(q(both[s], "CONFIG SET list-compress-depth %s", depths[k]));
                freeReplyObject(q(both[s], "CONFIG SET rdbcompression %s", modes[m]));
                for (int i = 0; i < 2000; i++)
                    freeReplyObject(q(both[s], "RPUSH %s element-%d-of-%s", key, i, key));
            }
            same(a, r, "CONFIG GET %s", "list-compress-depth");
            same(a, r, "DUMP %s", key);
            char k1[32], k2[32];
            move_both(r, a, key, k1, k2);
            same_list(a, k1, r, key);
            same_list(r, k2, a, key);
        }
    end_both(&d, r, a);
}

/* n bytes into p, from one of a few alphabets (all bytes, digits, a
 * phrase, one letter...), a third of the time a repeated prefix: strings
 * LZF compresses well, a little, or not at all, and some integers. */
static void rnd_bytes(uint64_t *s, unsigned char *p, size_t n)
{
    static const char *const alphabets[] = {"a",          "ab",           "abc", "abcdefgh",
                                            "0123456789", "hello world ", ""};
    const char *al = alphabets[rnd(s) % (sizeof alphabets / sizeof alphabets[0])];
    size_t an = strlen(al);
    for (size_t i = 0; i < n; i++)
        p[i] = an ? (unsigned char)al[rnd(s) % an] : (unsigned char)rnd(s);
    if (n > 4 && rnd(s) % 3 == 0)
        for (size_t i = n / 3; i < n; i++)
            p[i] = p[i % (n / 3)];
}

/* The same command, with one random value of up to max bytes in it, on
 * both servers: fmt has one %b. */
static void both_rnd(redisContext **both, uint64_t *s, size_t max, const char *fmt)
{
    static unsigned char v[5001];
    size_t n = (size_t)(rnd(s) % (max + 1));
    rnd_bytes(s, v, n);
    for (int k = 0; k < 2; k++)
        freeReplyObject(q(both[k], fmt, v, n));
}

/* Random values of each type and encoding, under random rdbcompression,
 * list-compress-depth and list-max-listpack-size: each DUMP byte-equal
 * to redis-server's (session 11 ran 400 such cases before this test: all
 * equal once the node split was Redis', D40). Table-encoded hashes and
 * sets have one member here: a table's order is its own. */
Test(dump, random_values_dump_as_redis)
{
    diff_t d;
    redisContext *r, *a;
    start_both(&d, &r, &a);
    redisContext *both[] = {r, a};
    uint64_t s = 0x2545F4914F6CDD1Dull;
    static const char *const depths[] = {"0", "0", "1", "2", "5"},
                             *fills[] = {"-2", "-1", "4", "16", "100"};
    for (int it = 0; it < 150; it++) {
        const char *comp = rnd(&s) % 2 ? "yes" : "no", *depth = depths[rnd(&s) % 5],
                   *fill = fills[rnd(&s) % 5];
        for (int k = 0; k < 2; k++) {
            freeReplyObject(q(both[k], "FLUSHALL"));
            freeReplyObject(q(both[k],
                              "CONFIG SET rdbcompression %s list-compress-depth %s "
                              "list-max-listpack-size %s",
                              comp, depth, fill));
        }
        int type = (int)(rnd(&s) % 7), count = 1 + (int)(rnd(&s) % 300);
        if (type == 0 || type == 4 || type == 5) count = 1;
        if (type == 2 && count > 100) count = 100; /* a listpack: few short members */
        for (int i = 0; i < count; i++) {
            char fmt[64];
            snprintf(fmt, sizeof fmt, "ZADD k %d.5 %%b", (int)(rnd(&s) % 2001) - 1000);
            long long v = rnd(&s) % 10 ? (long long)(rnd(&s) % 1000)
                                       : (long long)(rnd(&s) % (1ull << 41)) - (1LL << 40);
            switch (type) {
            case 0:
                both_rnd(both, &s, 5000, "SET k %b");
                break;
            case 1:
                both_rnd(both, &s, 300, "RPUSH k %b");
                break;
            case 2:
                both_rnd(both, &s, 30, fmt);
                break;
            case 3:
                both_rnd(both, &s, 300, fmt);
                break;
            case 4:
                both_rnd(both, &s, 500, "HSET k field %b");
                break;
            case 5:
                both_rnd(both, &s, 500, "SADD k m%b");
                break;
            default:
                for (int k = 0; k < 2; k++)
                    freeReplyObject(q(both[k], "SADD k %lld", v));
            }
        }
        same(a, r, "OBJECT ENCODING %s", "k");
        redisReply *x = q(a, "DUMP k"), *y = q(r, "DUMP k");
        cr_assert(x->type == REDIS_REPLY_STRING && y->type == REDIS_REPLY_STRING, "case %d", it);
        cr_assert(x->len == y->len && !memcmp(x->str, y->str, x->len),
                  "case %d (type %d, rdbcompression %s, depth %s, fill %s): %zu and %zu bytes", it,
                  type, comp, depth, fill, x->len, y->len);
        freeReplyObject(x), freeReplyObject(y);
    }
    end_both(&d, r, a);
}

/* The integer of an integer reply, or LLONG_MIN for any other reply. */
static long long int_or_min(const redisReply *x)
{
    return x->type == REDIS_REPLY_INTEGER ? x->integer : LLONG_MIN;
}

/* OBJECT sub key on both: the same reply; two IDLETIME integers may be
 * apart by the seconds a clock moved between the two servers' replies. */
static void same_access(redisContext *r, redisContext *a, const char *sub, const char *what)
{
    redisReply *x = q(r, "OBJECT %s x", sub), *y = q(a, "OBJECT %s x", sub);
    cr_assert_eq(x->type, y->type, "OBJECT %s after %s: %s vs %s", sub, what, x->str ? x->str : "",
                 y->str ? y->str : "");
    if (x->type == REDIS_REPLY_ERROR) cr_assert_str_eq(y->str, x->str, "%s after %s", sub, what);
    long long rx = int_or_min(x), ay = int_or_min(y);
    if (!strcmp(sub, "IDLETIME"))
        cr_assert(rx - ay <= 2 && ay - rx <= 2, "IDLETIME after %s: redis %lld, atticdb %lld", what,
                  rx, ay);
    else
        cr_assert_eq(ay, rx, "FREQ after %s: redis %lld, atticdb %lld", what, rx, ay);
    freeReplyObject(x), freeReplyObject(y);
}

/* RESTORE's IDLETIME and FREQ set the key's access data as Redis'
 * objectSetLRUOrLFU does (D52): FREQ the counter under an LFU policy,
 * IDLETIME the idle seconds under any other (noeviction included), the
 * other option ignored, REPLACE giving a fresh key's data (a hot key
 * replaced without FREQ reads 5); values past the LRU clock's 24 bits
 * wrap as Redis' do. OBJECT FREQ and IDLETIME (replies or errors) are
 * compared after each, under each policy, set by CONFIG SET. */
Test(dump, restore_idletime_and_freq_set_the_access_data_as_redis)
{
    diff_t d;
    redisContext *r, *a;
    start_both(&d, &r, &a);
    redisContext *both[] = {r, a};
    const char *policies[] = {"allkeys-lru", "allkeys-lfu", "noeviction", "volatile-lfu"};
    const char *opts[] = {"",
                          "IDLETIME 100",
                          "FREQ 7",
                          "IDLETIME 0",
                          "FREQ 0",
                          "FREQ 255",
                          "IDLETIME 99999999",
                          "IDLETIME 16777216",
                          "IDLETIME 9223372036854775807",
                          "IDLETIME 9223372036854776",
                          "REPLACE",
                          "REPLACE FREQ 3",
                          "REPLACE IDLETIME 5000",
                          "ABSTTL IDLETIME 7 REPLACE"};
    for (int s = 0; s < 2; s++)
        freeReplyObject(q(both[s], "SET src hello"));
    redisReply *p = q(r, "DUMP src");
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++) {
        for (int s = 0; s < 2; s++) {
            redisReply *ok = q(both[s], "CONFIG SET maxmemory-policy %s", policies[i]);
            cr_assert_str_eq(ok->str, "OK");
            freeReplyObject(ok);
        }
        for (size_t j = 0; j < sizeof opts / sizeof opts[0]; j++) {
            char what[128], cmd[128];
            snprintf(what, sizeof what, "RESTORE x 0 <payload> %s under %s", opts[j], policies[i]);
            snprintf(cmd, sizeof cmd, "RESTORE x 0 %%b %s", opts[j]);
            for (int s = 0; s < 2; s++) {
                freeReplyObject(q(both[s], "DEL x"));
                if (strstr(opts[j], "REPLACE")) {
                    freeReplyObject(q(both[s], "SET x old"));
                    for (int k = 0; k < 300; k++) /* a hot key: its counter grows */
                        freeReplyObject(q(both[s], "GET x"));
                }
            }
            redisReply *x = q(r, cmd, p->str, p->len), *y = q(a, cmd, p->str, p->len);
            cr_assert_eq(x->type, y->type, "%s", what);
            cr_assert_str_eq(y->str ? y->str : "", x->str ? x->str : "", "%s", what);
            freeReplyObject(x), freeReplyObject(y);
            same_access(r, a, "FREQ", what);
            same_access(r, a, "IDLETIME", what);
        }
    }
    freeReplyObject(p);
    end_both(&d, r, a);
}

/* OBJECT sub key on c, an integer (asserted). */
static long long object_int(redisContext *c, const char *sub, const char *key)
{
    redisReply *x = q(c, "OBJECT %s %s", sub, key);
    cr_assert_eq(x->type, REDIS_REPLY_INTEGER, "OBJECT %s %s: %s", sub, key, x->str);
    long long v = x->integer;
    freeReplyObject(x);
    return v;
}

/* RESTORE ... FREQ / IDLETIME are in the record (D52): after a kill -9
 * (no checkpoint after the RESTOREs, so the store replays them) OBJECT
 * FREQ reads the FREQ given (lfu-decay-time 0: no decay) and a key
 * restored without it a fresh 5; under LRU the idle time is IDLETIME's
 * plus the seconds since the RESTORE, not the seconds since the replay. */
Test(dump, restore_access_options_survive_a_replay)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1 --maxmemory-policy allkeys-lfu --lfu-decay-time 0"),
                 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    freeReplyObject(q(c, "SET src hello"));
    redisReply *p = q(c, "DUMP src");
    cr_assert_eq(p->type, REDIS_REPLY_STRING);
    freeReplyObject(q(c, "RESTORE hot 0 %b FREQ 200", p->str, p->len));
    freeReplyObject(q(c, "RESTORE plain 0 %b", p->str, p->len));
    freeReplyObject(q(c, "RESTORE lru 0 %b IDLETIME 5000", p->str, p->len));
    cr_assert_eq(object_int(c, "FREQ", "hot"), 200);
    redisFree(c);
    srv_kill_all(&s);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    cr_assert_not_null(c);
    cr_assert_eq(object_int(c, "FREQ", "hot"), 200, "FREQ 200 replayed");
    cr_assert_eq(object_int(c, "FREQ", "plain"), 5, "no FREQ: a fresh counter");
    cr_assert_eq(object_int(c, "FREQ", "lru"), 5, "IDLETIME ignored under LFU");
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);

    cr_assert_eq(srv_start(&s, "--frontends 1 --maxmemory-policy allkeys-lru"), 0);
    c = srv_connect(&s);
    cr_assert_not_null(c);
    time_t t0 = time(NULL);
    freeReplyObject(q(c, "RESTORE lru 0 %b IDLETIME 5000", p->str, p->len));
    freeReplyObject(q(c, "RESTORE hot 0 %b FREQ 200", p->str, p->len));
    redisFree(c);
    srv_kill_all(&s);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    cr_assert_not_null(c);
    long long idle = object_int(c, "IDLETIME", "lru"), passed = (long long)(time(NULL) - t0);
    cr_assert(idle >= 5000 && idle <= 5000 + passed + 1,
              "IDLETIME 5000 replayed: %lld s idle, %lld s after the RESTORE", idle, passed);
    cr_assert_leq(object_int(c, "IDLETIME", "hot"), passed + 1, "FREQ ignored under LRU");
    freeReplyObject(p);
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* TOUCH uses the key (Redis' lookupKeyRead: its access time is now),
 * EXISTS does not (LOOKUP_NOTOUCH): a key restored 100 seconds idle
 * reads 100 after EXISTS and 0 after TOUCH on both servers
 * (unit/introspection-2.tcl's "TOUCH alters the last access time"). */
Test(dump, touch_uses_the_key_and_exists_does_not)
{
    diff_t d;
    redisContext *r, *a;
    start_both(&d, &r, &a);
    redisContext *both[] = {r, a};
    for (int s = 0; s < 2; s++)
        freeReplyObject(q(both[s], "SET src hello"));
    redisReply *p = q(r, "DUMP src");
    cr_assert_eq(p->type, REDIS_REPLY_STRING);
    for (int s = 0; s < 2; s++) {
        redisReply *ok = q(both[s], "RESTORE x 0 %b IDLETIME 100", p->str, p->len);
        cr_assert_str_eq(ok->str, "OK");
        freeReplyObject(ok);
        freeReplyObject(q(both[s], "EXISTS x"));
    }
    same_access(r, a, "IDLETIME", "EXISTS");
    cr_assert_geq(object_int(a, "IDLETIME", "x"), 99);
    for (int s = 0; s < 2; s++)
        freeReplyObject(q(both[s], "TOUCH x nokey"));
    same_access(r, a, "IDLETIME", "TOUCH");
    cr_assert_leq(object_int(a, "IDLETIME", "x"), 2);
    freeReplyObject(p);
    end_both(&d, r, a);
}
