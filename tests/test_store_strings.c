/*
 * test_store_strings.c - unit tests of the store's string and bit commands
 * (store/types/t_string.c, t_bitmap.c) and of the value shapes they make
 * (store/core/value.c), driven without processes (store_harness.c): records
 * are encoded, written into segment files at their LSN offsets (as the
 * logger would), applied with store_apply, and poisoned in memory
 * afterwards, so every value byte that is not in RAM must come back from
 * the files. Replies are compared with Redis 7.0's bytes; values are
 * compared byte for byte with a plain model; replay into a fresh context
 * (reply NULL, and with replies) must give the same store_digest and the
 * same replies.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "command.h"
#include "config.h"
#include "record.h"
#include "store/core/entry.h"
#include "store/core/index.h"
#include "store/core/pieces.h"
#include "store/core/value.h"
#include "store/store-internal.h"
#include "store_harness.h"

/* ---- records (the miniature logger is store_harness.c) ------------------- */

/* A write / a read in database 0 with string arguments (NULL-terminated). */
#define wr(t, id, ...)   sh_wr((t), (id), __VA_ARGS__)
#define rd(now, id, ...) sh_rd((now), 0, (id), __VA_ARGS__)

static const char *wr_set(int64_t t, const char *key, const void *val, size_t vlen, uint32_t flags,
                          int64_t at)
{
    return sh_put_key(t, CMD_SET, key, "bui", val, vlen, flags, at);
}

static const char *wr_append(int64_t t, const char *key, const void *val, size_t vlen)
{
    return sh_put_key(t, CMD_APPEND, key, "b", val, vlen);
}

static const char *wr_setrange(int64_t t, const char *key, uint64_t off, const void *val,
                               size_t vlen)
{
    return sh_put_key(t, CMD_SETRANGE, key, "ib", (int64_t)off, val, vlen);
}

static const char *wr_setbit(int64_t t, const char *key, uint64_t bit, unsigned on)
{
    return sh_put_key(t, CMD_SETBIT, key, "iu", (int64_t)bit, (uint32_t)on);
}

static const char *wr_getex(int64_t t, const char *key, uint32_t flags, int64_t at)
{
    return sh_put_key(t, CMD_GETEX, key, "ui", flags, at);
}

static const char *wr_incrby(int64_t t, const char *key, int64_t delta)
{
    return sh_put_key(t, CMD_INCRBY, key, "i", delta);
}

static void setup(void)
{
    sh_setup("strings", 0, 42);
    sh_canonical_only = 1; /* every record here is a canonical write */
}

TestSuite(strings, .init = setup, .fini = sh_teardown, .timeout = 120);

#define T0  1000000
#define OK  "+OK\r\n"
#define NIL "$-1\r\n"

/* Replay the whole log into a fresh context (replies into *all when not
 * NULL); returns it. */
static store_ctx_t *replay(buf_t *all)
{
    return sh_replay(store_ctx_create(&cfg, 7), all);
}

/* Replay silently and with replies: same digest, same replies as live. */
static void check_replay(void)
{
    buf_t again;
    buf_init(&again);
    store_ctx_t *quiet = replay(NULL), *loud = replay(&again);
    uint64_t d0, d1, d2;
    int64_t now = store_now(ctx);
    cr_assert_eq(store_digest(ctx, now, &d0), 0);
    cr_assert_eq(store_digest(quiet, now, &d1), 0);
    cr_assert_eq(store_digest(loud, now, &d2), 0);
    cr_assert_eq(d0, d1, "a silent replay rebuilds the same values");
    cr_assert_eq(d0, d2);
    cr_assert_eq(store_index_bytes(ctx), store_index_bytes(quiet), "and the same shapes");
    cr_assert_eq(again.len, live_replies.len);
    cr_assert(memcmp(again.data, live_replies.data, live_replies.len) == 0,
              "replayed replies equal live ones");
    store_ctx_destroy(quiet);
    store_ctx_destroy(loud);
    buf_free(&again);
}

/* GET key must be exactly the n bytes at want. */
static void expect_value(const char *key, const void *want, size_t n)
{
    rd(T0, CMD_GET, key, NULL);
    char head[32];
    int h = snprintf(head, sizeof(head), "$%zu\r\n", n);
    cr_assert_eq(reply_len, (size_t)h + n + 2, "GET %s: length %zu, want %zu", key, reply_len,
                 (size_t)h + n + 2);
    cr_assert(memcmp(reply, head, (size_t)h) == 0);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq((unsigned char)reply[h + i], ((const unsigned char *)want)[i],
                     "GET %s: byte %zu differs", key, i);
}

/* The entry of key in database 0 (white-box checks of shapes). */
static idx_entry_t *entry(const char *key)
{
    idx_entry_t **slot = idx_find(&ctx->dbs[0]->ix, key, (uint32_t)strlen(key));
    cr_assert(slot, "key %s exists", key);
    return *slot;
}

/* ---- the SET family ------------------------------------------------- */

Test(strings, setnx_replies_integers)
{
    cr_assert_str_eq(wr_set(T0, "k", "v", 1, SETF_NX | SETF_REPLY_INT, 0), ":1\r\n");
    cr_assert_str_eq(wr_set(T0, "k", "w", 1, SETF_NX | SETF_REPLY_INT, 0), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_GET, "k", NULL), "$1\r\nv\r\n");
    /* an expired key is not there for SETNX */
    wr_set(T0, "t", "old", 3, 0, T0 + 10);
    cr_assert_str_eq(wr_set(T0 + 20, "t", "new", 3, SETF_NX | SETF_REPLY_INT, 0), ":1\r\n");
    cr_assert_str_eq(rd(T0 + 20, CMD_GET, "t", NULL), "$3\r\nnew\r\n");
    check_replay();
}

Test(strings, getset_and_setex_shapes)
{
    char big[200];
    for (int i = 0; i < 200; i++)
        big[i] = (char)i;
    cr_assert_str_eq(wr_set(T0, "k", big, 200, SETF_GET, 0), NIL);
    wr_set(T0, "k", "x", 1, SETF_GET, T0 + 5000); /* GETSET then SETEX-like */
    cr_assert_eq(reply_len, 200 + 8);
    cr_assert(memcmp(reply + 6, big, 200) == 0, "the old value came back from the log");
    cr_assert_str_eq(rd(T0, CMD_PTTL, "k", NULL), ":5000\r\n");
    cr_assert_str_eq(wr_set(T0, "k", "y", 1, SETF_GET, 0), "$1\r\nx\r\n");
    cr_assert_str_eq(rd(T0, CMD_TTL, "k", NULL), ":-1\r\n", "GETSET drops the TTL");
    check_replay();
}

Test(strings, getex)
{
    cr_assert_str_eq(wr_getex(T0, "nokey", 0, 0), NIL);
    cr_assert_str_eq(wr_getex(T0, "nokey", GETEXF_ERR_NOT_INT, 0), NIL, "no key, no error");
    wr_set(T0, "k", "v", 1, 0, 0);
    cr_assert_str_eq(wr_getex(T0, "k", 0, 0), "$1\r\nv\r\n");
    cr_assert_str_eq(rd(T0, CMD_TTL, "k", NULL), ":-1\r\n");
    cr_assert_str_eq(wr_getex(T0, "k", GETEXF_ERR_NOT_INT, 0),
                     "-ERR value is not an integer or out of range\r\n");
    cr_assert_str_eq(wr_getex(T0, "k", GETEXF_ERR_EXPIRE, 0),
                     "-ERR invalid expire time in 'getex' command\r\n");
    cr_assert_str_eq(wr_getex(T0, "k", GETEXF_AT, T0 + 3000), "$1\r\nv\r\n");
    cr_assert_str_eq(rd(T0, CMD_PTTL, "k", NULL), ":3000\r\n");
    cr_assert_eq(store_expire_count(ctx), 1);
    cr_assert_str_eq(wr_getex(T0, "k", GETEXF_PERSIST, 0), "$1\r\nv\r\n");
    cr_assert_str_eq(rd(T0, CMD_PTTL, "k", NULL), ":-1\r\n");
    cr_assert_eq(store_expire_count(ctx), 0);
    cr_assert_str_eq(wr_getex(T0, "k", GETEXF_PERSIST, 0), "$1\r\nv\r\n", "no TTL: no change");
    /* a time not after the apply clock: replied, then deleted */
    char big[100];
    memset(big, 'b', sizeof(big));
    wr_set(T0, "b", big, sizeof(big), 0, 0);
    wr_getex(T0 + 10, "b", GETEXF_AT, T0 + 10);
    cr_assert_eq(reply_len, 100 + 8);
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "b", NULL), ":0\r\n");
    cr_assert_eq(store_key_count(ctx), 1);
    check_replay();
}

Test(strings, msetnx_all_or_nothing)
{
    cr_assert_str_eq(wr(T0, CMD_MSETNX, "a", "1", "b", "2", NULL), ":1\r\n");
    cr_assert_str_eq(wr(T0, CMD_MSETNX, "c", "3", "a", "x", NULL), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_MGET, "a", "b", "c", NULL), "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n");
    cr_assert_str_eq(wr(T0, CMD_MSETNX, "d", "1", "d", "2", NULL), ":1\r\n");
    cr_assert_str_eq(rd(T0, CMD_GET, "d", NULL), "$1\r\n2\r\n");
    wr_set(T0, "t", "v", 1, 0, T0 + 5);
    cr_assert_str_eq(wr(T0 + 5, CMD_MSETNX, "t", "w", NULL), ":1\r\n", "expired: absent");
    cr_assert_str_eq(rd(T0 + 5, CMD_TTL, "t", NULL), ":-1\r\n");
    check_replay();
}

/* ---- INCRBYFLOAT ----------------------------------------------------- */

Test(strings, incrbyfloat_formats)
{
    /* Redis 7.0.15's replies to this sequence, taken from redis-server. */
    static const char *steps[][2] = {
        {"10.5", "10.5"},
        {"0.1", "10.6"},
        {"-10.6", "0"},
        {"5.0e3", "5000"},
        {"0.1", "5000.10000000000000009"},
        {"-5000.1", "0"},
        {"1e-30", "0"},
        {"0.00000000000000009", "0.00000000000000009"},
        {"-1e-30", "0.00000000000000009"},
        {"0x10", "16.00000000000000009"},
        {"-.5", "15.50000000000000009"},
        {"inf", NULL},
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        const char *r = wr(T0, CMD_INCRBYFLOAT, "f", steps[i][0], NULL);
        if (!steps[i][1]) {
            cr_assert_str_eq(r, "-ERR increment would produce NaN or Infinity\r\n");
            continue;
        }
        char want[128];
        snprintf(want, sizeof(want), "$%zu\r\n%s\r\n", strlen(steps[i][1]), steps[i][1]);
        cr_assert_str_eq(r, want, "INCRBYFLOAT f %s", steps[i][0]);
    }
    cr_assert_str_eq(rd(T0, CMD_GET, "f", NULL), "$20\r\n15.50000000000000009\r\n");
    cr_assert_str_eq(rd(T0, CMD_OBJECT, "ENCODING", "f", NULL), "$6\r\nembstr\r\n");
    /* errors: the key's value, then the increment */
    wr_set(T0, "s", "abc", 3, 0, 0);
    cr_assert_str_eq(wr(T0, CMD_INCRBYFLOAT, "s", "1", NULL),
                     "-ERR value is not a valid float\r\n");
    cr_assert_str_eq(wr(T0, CMD_INCRBYFLOAT, "f", "x", NULL),
                     "-ERR value is not a valid float\r\n");
    cr_assert_str_eq(wr(T0, CMD_INCRBYFLOAT, "f", "nan", NULL),
                     "-ERR value is not a valid float\r\n");
    cr_assert_str_eq(wr(T0, CMD_INCRBYFLOAT, "n", "-inf", NULL),
                     "-ERR increment would produce NaN or Infinity\r\n");
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "n", NULL), ":0\r\n");
    check_replay();
}

Test(strings, incrbyfloat_long_results_live_in_ram)
{
    /* 1e4000 + 1: a 4001-digit integer part plus the 17 decimals' 0s
     * trimmed; no record holds these bytes. */
    wr_set(T0, "big", "1e4000", 6, 0, T0 + 100000);
    wr(T0, CMD_INCRBYFLOAT, "big", "1", NULL);
    cr_assert_eq(reply[0], '$', "%s", reply);
    long n = strtol(reply + 1, NULL, 10);
    cr_assert_geq(n, 4000); /* 1e4000 is 9999...: 4000 digits */
    char *first = strndup(reply, reply_len);
    idx_entry_t *e = entry("big");
    cr_assert_eq(st_ent_kind(e), VK_LIST);
    cr_assert_eq(st_ent_pieces(e)->ram_bytes, (uint64_t)n);
    cr_assert_str_eq(rd(T0, CMD_GET, "big", NULL), first);
    cr_assert_str_eq(rd(T0, CMD_PTTL, "big", NULL), ":100000\r\n", "INCRBYFLOAT keeps the TTL");
    cr_assert_str_eq(rd(T0, CMD_OBJECT, "ENCODING", "big", NULL), "$3\r\nraw\r\n");
    /* parsing a long value back (from RAM), and one from the log */
    wr(T0, CMD_INCRBYFLOAT, "big", "-1e4000", NULL);
    cr_assert_eq(reply[0], '$', "%s", reply);
    const char *lf = "1.000000000000000000000000000000000001"; /* 38 bytes: a log extent */
    wr_set(T0, "lf", lf, strlen(lf), 0, 0);
    cr_assert_str_eq(wr(T0, CMD_INCRBYFLOAT, "lf", "1", NULL), "$1\r\n2\r\n");
    free(first);
    check_replay();
}

/* ---- SETRANGE and the value shapes ---------------------------------- */

Test(strings, setrange_basics)
{
    cr_assert_str_eq(wr_setrange(T0, "k", 5, "", 0), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "k", NULL), ":0\r\n", "nothing written, no key");
    cr_assert_str_eq(wr_setrange(T0, "k", 3, "abc", 3), ":6\r\n");
    expect_value("k", "\0\0\0abc", 6);
    cr_assert_str_eq(wr_setrange(T0, "k", 1, "XY", 2), ":6\r\n");
    expect_value("k", "\0XYabc", 6);
    cr_assert_str_eq(wr_setrange(T0, "k", 0, "", 0), ":6\r\n");
    /* growing past the inline limit keeps the inline bytes as the prefix */
    cr_assert_str_eq(wr_setrange(T0, "k", 30, "0123456789", 10), ":40\r\n");
    static const char want[] = "\0XYabc\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
                               "0123456789";
    expect_value("k", want, 40);
    cr_assert_str_eq(rd(T0, CMD_OBJECT, "ENCODING", "k", NULL), "$3\r\nraw\r\n");
    /* a TTL stays */
    wr_set(T0, "t", "v", 1, 0, T0 + 700);
    wr_setrange(T0, "t", 1, "w", 1);
    cr_assert_str_eq(rd(T0, CMD_PTTL, "t", NULL), ":700\r\n");
    check_replay();
}

/* A reference model of one value: plain bytes. */
typedef struct model {
    unsigned char *p;
    size_t len, cap;
} model_t;

static void model_write(model_t *m, size_t off, const void *src, size_t n)
{
    if (off + n > m->cap) {
        m->cap = (off + n) * 2 + 64;
        m->p = realloc(m->p, m->cap);
    }
    if (off > m->len) memset(m->p + m->len, 0, off - m->len);
    memcpy(m->p + off, src, n);
    if (off + n > m->len) m->len = off + n;
}

static void model_setbit(model_t *m, size_t bit, unsigned on)
{
    size_t byte = bit / 8;
    if (byte >= m->len) {
        unsigned char z = 0;
        model_write(m, byte, &z, 1);
    }
    unsigned shift = 7 - (unsigned)(bit % 8);
    m->p[byte] = (unsigned char)((m->p[byte] & ~(1u << shift)) | (on << shift));
}

/* Every shape, crossing each other: SET (extent), APPEND (list), SETRANGE
 * over inline prefix, extents, zero runs and RAM blocks, SETBIT in each. */
Test(strings, mixed_writes_read_back_exactly)
{
    model_t m = {0};
    static unsigned char src[16384]; /* step sources reach 3000 + 9001 */
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (unsigned char)(i * 97 + 13);
    wr_set(T0, "v", src, 10, 0, 0);
    model_write(&m, 0, src, 10);
    wr_append(T0, "v", src + 10, 3000);
    model_write(&m, 10, src + 10, 3000);
    cr_assert_eq(st_ent_kind(entry("v")), VK_EXTENT, "short value + append: prefix + extent");
    wr_append(T0, "v", src + 50, 500);
    model_write(&m, 3010, src + 50, 500);
    cr_assert_eq(st_ent_kind(entry("v")), VK_LIST);
    expect_value("v", m.p, m.len);
    struct {
        int op; /* 0 setrange, 1 setbit, 2 append */
        size_t off, n;
    } steps[] = {
        {0, 5, 30},           /* over the inline prefix and into the first extent */
        {0, 3005, 10},        /* across two log pieces */
        {0, 5000, 20},        /* past the end: a zero run, then bytes */
        {1, 8 * 4200 + 3, 1}, /* in the zero run: a RAM block */
        {1, 8 * 100 + 1, 1},  /* in an extent */
        {1, 8 * 2 + 5, 1},    /* in the inline prefix */
        {0, 4190, 30},        /* across the RAM block's start */
        {0, 4201, 4},         /* inside the RAM block: copied into it */
        {1, 8 * 9000, 1},     /* growing by SETBIT */
        {0, 0, 9001},         /* over everything */
        {1, 8 * 9000 + 7, 1}, {2, 0, 100},           {0, 8990, 40},
        {1, 8 * 12000, 1},    {1, 8 * 12000 + 1, 1}, {1, 8 * 11999 + 1, 1},
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        size_t off = steps[i].off, n = steps[i].n;
        const unsigned char *s = src + (i * 101) % 3000;
        if (steps[i].op == 0) {
            char want[32];
            snprintf(want, sizeof(want), ":%zu\r\n", off + n > m.len ? off + n : m.len);
            cr_assert_str_eq(wr_setrange(T0, "v", off, s, n), want, "step %zu", i);
            model_write(&m, off, s, n);
        } else if (steps[i].op == 1) {
            unsigned on = (unsigned)(i & 1) ^ 1;
            size_t byte = off / 8;
            unsigned old = byte < m.len ? (m.p[byte] >> (7 - off % 8)) & 1 : 0;
            char want[8];
            snprintf(want, sizeof(want), ":%u\r\n", old);
            cr_assert_str_eq(wr_setbit(T0, "v", off, on), want, "step %zu", i);
            model_setbit(&m, off, on);
        } else {
            wr_append(T0, "v", s, n);
            model_write(&m, m.len, s, n);
        }
        expect_value("v", m.p, m.len);
        char len[32];
        snprintf(len, sizeof(len), ":%zu\r\n", m.len);
        cr_assert_str_eq(rd(T0, CMD_STRLEN, "v", NULL), len);
    }
    /* ranges of every part */
    for (size_t a = 0; a < m.len; a += 997) {
        char s[24], e[24];
        snprintf(s, sizeof(s), "%zu", a);
        snprintf(e, sizeof(e), "%zu", a + 1500);
        rd(T0, CMD_GETRANGE, "v", s, e, NULL);
        size_t n = a + 1501 <= m.len ? 1501 : m.len - a;
        char *body = strstr(reply, "\r\n") + 2;
        cr_assert(memcmp(body, m.p + a, n) == 0, "GETRANGE %zu", a);
    }
    free(m.p);
    check_replay();
}

Test(strings, setbit_far_offset_costs_no_ram)
{
    uint64_t before = store_index_bytes(ctx);
    cr_assert_str_eq(wr_setbit(T0, "b", 4000000000ull, 1), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_STRLEN, "b", NULL), ":500000001\r\n");
    cr_assert_lt(store_index_bytes(ctx) - before, 4096 + 1024,
                 "500 MB of zeros are one zero run and one small RAM block");
    cr_assert_str_eq(rd(T0, CMD_GETBIT, "b", "4000000000", NULL), ":1\r\n");
    cr_assert_str_eq(rd(T0, CMD_GETBIT, "b", "3999999999", NULL), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_BITCOUNT, "b", NULL), ":1\r\n");
    cr_assert_str_eq(rd(T0, CMD_BITPOS, "b", "1", NULL), ":4000000000\r\n");
    cr_assert_str_eq(rd(T0, CMD_BITPOS, "b", "0", NULL), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_BITPOS, "b", "1", "-1", NULL), ":4000000000\r\n");
    cr_assert_str_eq(rd(T0, CMD_BITCOUNT, "b", "0", "3999999999", "BIT", NULL), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_GETRANGE, "b", "-3", "-1", NULL), "$3\r\n\0\0\x80\r\n");
    store_set_max_reply(ctx, 1 << 20);
    cr_assert_str_eq(rd(T0, CMD_GET, "b", NULL), "-" STORE_ERR_TOO_LARGE "\r\n");
    cr_assert_str_eq(rd(T0, CMD_GETRANGE, "b", "0", "-1", NULL), "-" STORE_ERR_TOO_LARGE "\r\n");
    check_replay();
}

Test(strings, setbit_replies_and_growth)
{
    cr_assert_str_eq(wr_setbit(T0, "b", 7, 1), ":0\r\n");
    expect_value("b", "\x01", 1);
    cr_assert_str_eq(wr_setbit(T0, "b", 7, 1), ":1\r\n");
    cr_assert_str_eq(wr_setbit(T0, "b", 7, 0), ":1\r\n");
    cr_assert_str_eq(wr_setbit(T0, "b", 0, 0), ":0\r\n");
    expect_value("b", "\0", 1);
    cr_assert_str_eq(wr_setbit(T0, "b", 8 * 30, 1), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_STRLEN, "b", NULL), ":31\r\n");
    cr_assert_str_eq(wr_setbit(T0, "z", 100, 0), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_STRLEN, "z", NULL), ":13\r\n", "a new key even for a 0");
    /* a bitmap built bit after bit is RAM in blocks, not one piece per byte */
    for (uint64_t i = 0; i < 8 * 20000; i += 3)
        wr_setbit(T0, "seq", i, 1);
    st_pieces_t *l = st_ent_pieces(entry("seq"));
    cr_assert_leq(l->n, 20000 / 4096 + 2, "%u pieces", l->n);
    cr_assert_str_eq(rd(T0, CMD_BITCOUNT, "seq", NULL), ":53334\r\n");
    check_replay();
}

/* Many tiny writes: compaction bounds the pieces, and RAM stays near the
 * value's size. */
Test(strings, tiny_writes_are_compacted)
{
    model_t m = {0};
    wr_set(T0, "a", "", 0, 0, 0);
    for (int i = 0; i < 6000; i++) {
        unsigned char c = (unsigned char)(i * 7);
        wr_append(T0, "a", &c, 1);
        model_write(&m, m.len, &c, 1);
    }
    for (int i = 0; i < 3000; i++) {
        unsigned char c[2] = {(unsigned char)i, (unsigned char)(i >> 3)};
        size_t off = (size_t)(i * 7919) % 7000;
        wr_setrange(T0, "a", off, c, 2);
        model_write(&m, off, c, 2);
    }
    expect_value("a", m.p, m.len);
    st_pieces_t *l = st_ent_pieces(entry("a"));
    uint64_t tail = st_pieces_len(l);
    cr_assert_leq(l->n, tail / 32 + 16 > 64 ? tail / 32 + 16 : 64, "%u pieces for %llu bytes", l->n,
                  (unsigned long long)tail);
    cr_assert_leq(store_index_bytes(ctx), 2 * m.len + 64 * 1024, "RAM near the value's size");
    free(m.p);
    check_replay();
}

/* store_index_bytes without the bucket arrays (which a test's keys may
 * have grown): the entries and their values. */
static uint64_t entry_bytes(void)
{
    uint64_t n = store_index_bytes(ctx);
    for (int i = 0; i < ctx->ndb; i++)
        n -= idx_table_bytes(&ctx->dbs[i]->ix);
    return n;
}

Test(strings, index_bytes_return_to_zero)
{
    uint64_t base = entry_bytes();
    unsigned char buf[3000];
    memset(buf, 'x', sizeof(buf));
    for (int k = 0; k < 20; k++) {
        char key[8];
        snprintf(key, sizeof(key), "k%d", k);
        wr_set(T0, key, buf, (size_t)k * 150, 0, 0);
        for (int i = 0; i < 40; i++) {
            wr_setbit(T0, key, (uint64_t)(i * 977 + k) % 30000, (unsigned)i & 1);
            wr_setrange(T0, key, (uint64_t)(i * 131) % 3000, buf, (size_t)i % 9);
            wr_append(T0, key, buf, (size_t)i % 3);
        }
        if (k % 3 == 0) wr(T0, CMD_INCRBYFLOAT, key, "1", NULL);
    }
    wr_set(T0, "fl", "1e40", 4, 0, 0);
    cr_assert_eq(wr(T0, CMD_INCRBYFLOAT, "fl", "1", NULL)[0], '$', "a 41-byte result in RAM");
    cr_assert_eq(st_ent_kind(entry("fl")), VK_LIST);
    check_replay();
    for (int k = 0; k < 20; k++) {
        char key[8];
        snprintf(key, sizeof(key), "k%d", k);
        cr_assert_str_eq(wr(T0, CMD_DEL, key, NULL), ":1\r\n");
    }
    cr_assert_str_eq(wr(T0, CMD_DEL, "fl", NULL), ":1\r\n");
    cr_assert_eq(store_key_count(ctx), 0);
    cr_assert_eq(entry_bytes(), base, "every byte counted for values was given back");
}

/* D74: a key's TTL is 8 bytes after its value, there only while the key
 * has one. Changing the value's shape keeps it, PERSIST gives the bytes
 * back, and 300 keys share buckets, so every reallocation relinks an
 * entry inside a chain. */
Test(strings, a_ttl_takes_room_only_while_the_key_has_one)
{
    uint64_t base = entry_bytes();
    unsigned char buf[200];
    memset(buf, 'y', sizeof(buf));
    char key[16], want[32];
    for (int i = 0; i < 300; i++) {
        snprintf(key, sizeof(key), "t%d", i);
        wr_set(T0, key, "abc", 3, 0, 0);
    }
    uint64_t plain = entry_bytes();
    cr_assert_eq(entry("t7")->eflags & ENT_AUX, 0, "no TTL, no room for one");
    for (int i = 0; i < 300; i++) {
        snprintf(key, sizeof(key), "t%d", i);
        cr_assert_str_eq(sh_put_key(T0, CMD_PEXPIREAT, key, "iu", (int64_t)T0 + 100000 + i, 0),
                         ":1\r\n");
    }
    cr_assert_eq(entry_bytes(), plain + 300 * 8, "8 bytes per TTL");
    for (int i = 0; i < 300; i++) {
        snprintf(key, sizeof(key), "t%d", i);
        if (i % 3 == 0) wr_append(T0, key, buf, sizeof(buf)); /* inline to an extent */
        if (i % 3 == 1) wr_setrange(T0, key, 1, "zz", 2);
    }
    for (int i = 0; i < 300; i++) {
        snprintf(key, sizeof(key), "t%d", i);
        snprintf(want, sizeof(want), ":%d\r\n", 100000 + i);
        cr_assert_str_eq(rd(T0, CMD_PTTL, key, NULL), want, "%s keeps its TTL", key);
        if (i % 2 == 0) cr_assert_str_eq(wr(T0, CMD_PERSIST, key, NULL), ":1\r\n");
    }
    cr_assert_eq(entry("t0")->eflags & ENT_AUX, 0, "PERSIST took the room away");
    cr_assert_neq(entry("t1")->eflags & ENT_AUX, 0);
    cr_assert_str_eq(rd(T0, CMD_PTTL, "t0", NULL), ":-1\r\n");
    cr_assert_str_eq(rd(T0, CMD_PTTL, "t1", NULL), ":100001\r\n");
    unsigned char v[203] = "a";
    memcpy(v + 1, "zz", 2);
    expect_value("t1", v, 3);
    memcpy(v, "abc", 3);
    memcpy(v + 3, buf, sizeof(buf));
    expect_value("t3", v, 3 + sizeof(buf));
    check_replay();
    for (int i = 0; i < 300; i++) {
        snprintf(key, sizeof(key), "t%d", i);
        cr_assert_str_eq(wr(T0, CMD_DEL, key, NULL), ":1\r\n");
    }
    cr_assert_eq(entry_bytes(), base, "every byte counted was given back");
}

Test(strings, dup_is_a_deep_copy)
{
    unsigned char buf[500];
    memset(buf, 'd', sizeof(buf));
    wr_set(T0, "src", buf, sizeof(buf), 0, T0 + 9000);
    wr_setbit(T0, "src", 8 * 100, 1); /* a RAM block */
    wr_setrange(T0, "src", 1000, "tail", 4);
    rd(T0, CMD_GET, "src", NULL);
    char *before = malloc(reply_len + 1);
    memcpy(before, reply, reply_len + 1);
    size_t before_len = reply_len;
    rec_arg_t key = {(const unsigned char *)"dst", 3};
    uint64_t bytes = store_index_bytes(ctx);
    st_ent_store(ctx->dbs[0], NULL, st_ent_dup(entry("src"), &key));
    cr_assert_gt(store_index_bytes(ctx), bytes);
    wr_setbit(T0, "src", 8 * 100 + 1, 1); /* change the source's RAM block */
    wr(T0, CMD_DEL, "src", NULL);
    rd(T0, CMD_GET, "dst", NULL);
    cr_assert_eq(reply_len, before_len);
    cr_assert(memcmp(reply, before, reply_len) == 0, "the copy kept its own bytes");
    cr_assert_str_eq(rd(T0, CMD_PTTL, "dst", NULL), ":9000\r\n");
    cr_assert_str_eq(rd(T0, CMD_OBJECT, "ENCODING", "dst", NULL), "$3\r\nraw\r\n");
    free(before);
}

/* ---- reads ------------------------------------------------------------ */

Test(strings, getrange_indexes)
{
    wr_set(T0, "g", "Hello World", 11, 0, 0);
    static const char *cases[][3] = {
        {"0", "-1", "$11\r\nHello World\r\n"},
        {"-3", "-1", "$3\r\nrld\r\n"},
        {"-1", "-3", "$0\r\n\r\n"},
        {"5", "3", "$0\r\n\r\n"},
        {"-100", "100", "$11\r\nHello World\r\n"},
        {"100", "200", "$0\r\n\r\n"},
        {"-100", "-50", "$1\r\nH\r\n"},
        {"0", "9223372036854775807", "$11\r\nHello World\r\n"},
        {"a", "1", "-ERR value is not an integer or out of range\r\n"},
        {"1", "b", "-ERR value is not an integer or out of range\r\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_str_eq(rd(T0, CMD_GETRANGE, "g", cases[i][0], cases[i][1], NULL), cases[i][2],
                         "GETRANGE g %s %s", cases[i][0], cases[i][1]);
        cr_assert_str_eq(rd(T0, CMD_SUBSTR, "g", cases[i][0], cases[i][1], NULL), cases[i][2]);
    }
    cr_assert_str_eq(rd(T0, CMD_GETRANGE, "nokey", "0", "-1", NULL), "$0\r\n\r\n");
    cr_assert_str_eq(rd(T0, CMD_GETRANGE, "nokey", "x", "-1", NULL),
                     "-ERR value is not an integer or out of range\r\n");
}

Test(strings, bit_reads)
{
    wr_set(T0, "f", "foobar", 6, 0, 0);
    cr_assert_str_eq(rd(T0, CMD_BITCOUNT, "f", NULL), ":26\r\n");
    cr_assert_str_eq(rd(T0, CMD_BITCOUNT, "f", "1", "1", NULL), ":6\r\n");
    cr_assert_str_eq(rd(T0, CMD_BITCOUNT, "f", "5", "30", "BIT", NULL), ":17\r\n");
    cr_assert_str_eq(rd(T0, CMD_BITCOUNT, "f", "0", NULL), "-ERR syntax error\r\n");
    cr_assert_str_eq(rd(T0, CMD_BITCOUNT, "nokey", "0", NULL), ":0\r\n", "key first");
    cr_assert_str_eq(rd(T0, CMD_BITCOUNT, "f", "-1", "-3", "foo", NULL), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_BITCOUNT, "f", "0", "1", "foo", NULL), "-ERR syntax error\r\n");
    wr_set(T0, "z", "\xff\xf0\x00", 3, 0, 0);
    cr_assert_str_eq(rd(T0, CMD_BITPOS, "z", "0", NULL), ":12\r\n");
    cr_assert_str_eq(rd(T0, CMD_BITPOS, "z", "1", "2", NULL), ":-1\r\n");
    cr_assert_str_eq(rd(T0, CMD_BITPOS, "z", "1", "1", NULL), ":8\r\n");
    cr_assert_str_eq(rd(T0, CMD_BITPOS, "z", "0", "9", "14", "BIT", NULL), ":12\r\n");
    wr_set(T0, "ff", "\xff\xff", 2, 0, 0);
    cr_assert_str_eq(rd(T0, CMD_BITPOS, "ff", "0", NULL), ":16\r\n", "past the end: padding");
    cr_assert_str_eq(rd(T0, CMD_BITPOS, "ff", "0", "0", "-1", NULL), ":-1\r\n", "end given");
    cr_assert_str_eq(rd(T0, CMD_BITPOS, "ff", "2", NULL),
                     "-ERR The bit argument must be 1 or 0.\r\n");
    cr_assert_str_eq(rd(T0, CMD_BITPOS, "nokey", "0", NULL), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_BITPOS, "nokey", "1", NULL), ":-1\r\n");
    cr_assert_str_eq(rd(T0, CMD_GETBIT, "z", "11", NULL), ":1\r\n");
    cr_assert_str_eq(rd(T0, CMD_GETBIT, "z", "12", NULL), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_GETBIT, "z", "4294967296", NULL),
                     "-ERR bit offset is not an integer or out of range\r\n");
    cr_assert_str_eq(rd(T0, CMD_GETBIT, "z", "99999", NULL), ":0\r\n");
}

/* ---- OBJECT ----------------------------------------------------------- */

static const char *encoding(const char *key)
{
    return rd(T0, CMD_OBJECT, "ENCODING", key, NULL);
}

Test(strings, object_encoding_follows_redis)
{
    char big[60];
    memset(big, 'e', sizeof(big));
    wr_set(T0, "int", "12345", 5, 0, 0);
    wr_set(T0, "str", "hello", 5, 0, 0);
    wr_set(T0, "e44", big, 44, 0, 0);
    wr_set(T0, "r45", big, 45, 0, 0);
    wr_set(T0, "lead0", "012", 3, 0, 0);
    wr_incrby(T0, "cnt", 5);
    wr(T0, CMD_INCRBYFLOAT, "fl", "3", NULL);
    wr_append(T0, "newap", "7", 1);
    wr_set(T0, "ap", "7", 1, 0, 0);
    wr_append(T0, "ap", "", 0);
    cr_assert_str_eq(encoding("int"), "$3\r\nint\r\n");
    cr_assert_str_eq(encoding("str"), "$6\r\nembstr\r\n");
    cr_assert_str_eq(encoding("e44"), "$6\r\nembstr\r\n");
    cr_assert_str_eq(encoding("r45"), "$3\r\nraw\r\n");
    cr_assert_str_eq(encoding("lead0"), "$6\r\nembstr\r\n");
    cr_assert_str_eq(encoding("cnt"), "$3\r\nint\r\n");
    cr_assert_str_eq(encoding("fl"), "$6\r\nembstr\r\n", "INCRBYFLOAT never makes an int");
    cr_assert_str_eq(encoding("newap"), "$3\r\nint\r\n", "APPEND to nothing is a SET");
    cr_assert_str_eq(encoding("ap"), "$3\r\nraw\r\n", "even an empty APPEND");
    wr_incrby(T0, "ap", 1);
    cr_assert_str_eq(encoding("ap"), "$3\r\nint\r\n");
    wr_setrange(T0, "ap", 0, "", 0);
    cr_assert_str_eq(encoding("ap"), "$3\r\nint\r\n", "an empty SETRANGE changes nothing");
    wr_setbit(T0, "ap", 0, 0);
    cr_assert_str_eq(encoding("ap"), "$3\r\nraw\r\n", "SETBIT, even of an unchanged bit");
    wr_getex(T0, "ap", GETEXF_AT, T0 + 100000);
    cr_assert_str_eq(encoding("ap"), "$3\r\nraw\r\n", "a TTL doesn't change it");
    wr_set(T0, "ap", "8", 1, SETF_KEEPTTL, 0);
    cr_assert_str_eq(encoding("ap"), "$3\r\nint\r\n");
    cr_assert_str_eq(encoding("nokey"), NIL);
    cr_assert_str_eq(rd(T0, CMD_OBJECT, "REFCOUNT", "ap", NULL), ":2147483647\r\n");
    cr_assert_str_eq(rd(T0, CMD_OBJECT, "REFCOUNT", "int", NULL), ":1\r\n");
    cr_assert_str_eq(rd(T0, CMD_OBJECT, "REFCOUNT", "fl", NULL), ":1\r\n");
    cr_assert_str_eq(rd(T0, CMD_OBJECT, "IDLETIME", "int", NULL), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_OBJECT, "freq", "int", NULL),
                     "-ERR An LFU maxmemory policy is not selected, access frequency not "
                     "tracked. Please note that when switching between policies at runtime LRU "
                     "and LFU data will take some time to adjust.\r\n");
    cr_assert_str_eq(rd(T0, CMD_OBJECT, "FREQ", "nokey", NULL), NIL);
    cr_assert_str_eq(rd(T0, CMD_OBJECT, "FOO", "k", NULL),
                     "-ERR unknown subcommand 'FOO'. Try OBJECT HELP.\r\n");
    cr_assert_str_eq(rd(T0, CMD_OBJECT, "Encoding", NULL),
                     "-ERR wrong number of arguments for 'object|encoding' command\r\n");
    cr_assert_str_eq(rd(T0, CMD_OBJECT, "help", "x", NULL),
                     "-ERR wrong number of arguments for 'object|help' command\r\n");
    rd(T0, CMD_OBJECT, "HELP", NULL);
    cr_assert(strncmp(reply, "*15\r\n+OBJECT <subcommand>", 25) == 0);
    cr_assert(strstr(reply, "+    Prints this help.\r\n"));
    /* the encoding survives replay */
    store_ctx_t *c = replay(NULL);
    store_ctx_t *mine = ctx;
    ctx = c;
    cr_assert_str_eq(encoding("ap"), "$3\r\nint\r\n");
    cr_assert_str_eq(encoding("fl"), "$6\r\nembstr\r\n");
    cr_assert_str_eq(encoding("r45"), "$3\r\nraw\r\n");
    ctx = mine;
    store_ctx_destroy(c);
}

/* ---- a random mix against the model, then replay ---------------------- */

Test(strings, random_mix_matches_model_and_replays)
{
    model_t m[4] = {{0}};
    int exists[4] = {0};
    unsigned char src[4096];
    uint64_t x = 88172645463325252ull;
#define NEXT() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (unsigned char)NEXT();
    for (int step = 0; step < 3000; step++) {
        int k = (int)(NEXT() % 4);
        char key[4] = {'r', (char)('0' + k), 0};
        size_t n = NEXT() % 5 == 0 ? NEXT() % 3000 : NEXT() % 40;
        const unsigned char *s = src + NEXT() % 1000;
        switch (NEXT() % 6) {
        case 0:
            wr_set(T0, key, s, n, 0, 0);
            m[k].len = 0;
            model_write(&m[k], 0, s, n);
            exists[k] = 1;
            break;
        case 1:
            wr_append(T0, key, s, n);
            model_write(&m[k], m[k].len, s, n);
            exists[k] = 1;
            break;
        case 2:
        case 3: {
            size_t off = NEXT() % 9000;
            wr_setrange(T0, key, off, s, n % 50);
            if (n % 50) {
                model_write(&m[k], off, s, n % 50);
                exists[k] = 1;
            }
            break;
        }
        case 4: {
            size_t bit = NEXT() % 80000;
            unsigned on = (unsigned)(NEXT() & 1);
            size_t byte = bit / 8;
            unsigned old = byte < m[k].len ? (m[k].p[byte] >> (7 - bit % 8)) & 1 : 0;
            char want[8];
            snprintf(want, sizeof(want), ":%u\r\n", old);
            cr_assert_str_eq(wr_setbit(T0, key, bit, on), want, "step %d", step);
            model_setbit(&m[k], bit, on);
            exists[k] = 1;
            break;
        }
        default:
            if (exists[k])
                expect_value(key, m[k].p, m[k].len);
            else
                cr_assert_str_eq(rd(T0, CMD_GET, key, NULL), NIL);
            if (NEXT() % 8 == 0) {
                wr(T0, CMD_DEL, key, NULL);
                m[k].len = 0;
                exists[k] = 0;
            }
        }
    }
#undef NEXT
    for (int k = 0; k < 4; k++) {
        char key[4] = {'r', (char)('0' + k), 0};
        if (exists[k]) expect_value(key, m[k].p, m[k].len);
        free(m[k].p);
    }
    check_replay();
}

/* Values whose pieces lie in many segments (small segments), replayed. */
Test(strings, pieces_across_segments)
{
    store_ctx_destroy(ctx);
    cfg.segment_size = 64 * 1024;
    ctx = store_ctx_create(&cfg, 42);
    model_t m = {0};
    static unsigned char v[20000];
    for (int i = 0; i < 60; i++) {
        memset(v, 'a' + i % 26, sizeof(v));
        size_t off = (size_t)(i * 7777) % 50000;
        wr_setrange(T0, "s", off, v, 5000 + (size_t)i * 250);
        model_write(&m, off, v, 5000 + (size_t)i * 250);
        wr_setbit(T0, "s", (uint64_t)i * 6007, 1);
        model_setbit(&m, (size_t)i * 6007, 1);
    }
    cr_assert_gt(lsn, 64u * 1024 * 10);
    expect_value("s", m.p, m.len);
    free(m.p);
    check_replay();
}

Test(strings, append_limit_travels_in_the_record)
{
    /* The store's own setting is generous; the records carry a smaller
     * one, as a frontend after CONFIG SET proto-max-bulk-len would. */
    cr_assert_str_eq(wr(T0, CMD_APPEND, "k", "12345678", "#i64:10", NULL), ":8\r\n");
    cr_assert_str_eq(wr(T0, CMD_APPEND, "k", "123", "#i64:10", NULL),
                     "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n");
    cr_assert_str_eq(wr(T0, CMD_APPEND, "k", "12", "#i64:10", NULL), ":10\r\n");
    cr_assert_str_eq(wr(T0, CMD_APPEND, "k", "123", "#i64:0", NULL), ":13\r\n", "0: no limit");
    cr_assert_str_eq(wr(T0, CMD_APPEND, "old", "x", NULL), ":1\r\n",
                     "a record without a limit uses the store's");
    /* Replay under another configuration refuses the same APPENDs. */
    int64_t saved = cfg.proto_max_bulk_len;
    cfg.proto_max_bulk_len = 5;
    buf_t again;
    buf_init(&again);
    store_ctx_t *other = replay(&again);
    cfg.proto_max_bulk_len = saved;
    uint64_t d0, d1;
    cr_assert_eq(store_digest(ctx, T0, &d0), 0);
    cr_assert_eq(store_digest(other, T0, &d1), 0);
    cr_assert_eq(d0, d1, "the same state whatever the store's setting");
    cr_assert(again.len == live_replies.len &&
              memcmp(again.data, live_replies.data, again.len) == 0);
    store_ctx_destroy(other);
    buf_free(&again);
}
