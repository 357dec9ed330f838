/*
 * test_store.c - unit tests of the store's state machine (store/route.c, store/state.c),
 * driven without processes: records are encoded with rec_encode_cmd, written
 * into real segment files in a temporary directory at their LSN offsets (as
 * the logger would), then applied with store_apply; replies are compared
 * byte for byte with what Redis 7.0 sends.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "command.h"
#include "config.h"
#include "io.h"
#include "log.h"
#include "record.h"
#include "store/store-internal.h"
#include "store_harness.h"

/* ---- records (the miniature logger is store_harness.c) ------------------- */

/* A write / a read in database 0 with string arguments (NULL-terminated). */
#define wr(t, id, ...)   sh_wr((t), (id), __VA_ARGS__)
#define rd(now, id, ...) sh_rd((now), 0, (id), __VA_ARGS__)

static const char *wr_setb(int64_t t, const char *key, const void *val, size_t vlen, uint32_t flags,
                           int64_t expire_at)
{
    return sh_put_key(t, CMD_SET, key, "bui", val, vlen, flags, expire_at);
}

static const char *wr_set(int64_t t, const char *key, const char *val, uint32_t flags,
                          int64_t expire_at)
{
    return wr_setb(t, key, val, strlen(val), flags, expire_at);
}

static const char *wr_incrby(int64_t t, const char *key, int64_t delta)
{
    return sh_put_key(t, CMD_INCRBY, key, "i", delta);
}

static const char *wr_pexpireat(int64_t t, const char *key, int64_t at, uint32_t flags)
{
    return sh_put_key(t, CMD_PEXPIREAT, key, "iu", at, flags);
}

/* A fresh store with this segment size (the log stays). */
static void start_store(uint64_t segment_size)
{
    sh_new_store(segment_size, 0, 1234);
}

static void setup(void)
{
    sh_setup("store", 0, 1234);
}

TestSuite(store, .init = setup, .fini = sh_teardown);

#define T0  1000000 /* record time of most tests, ms */
#define OK  "+OK\r\n"
#define NIL "$-1\r\n"

/* ---- SET / GET ---------------------------------------------------------- */

Test(store, set_get)
{
    cr_assert_str_eq(wr_set(T0, "k", "v", 0, 0), OK);
    cr_assert_str_eq(rd(T0, CMD_GET, "k", NULL), "$1\r\nv\r\n");
    cr_assert_str_eq(rd(T0, CMD_GET, "nokey", NULL), NIL);
    cr_assert_str_eq(wr_set(T0, "k", "", 0, 0), OK);
    cr_assert_str_eq(rd(T0, CMD_GET, "k", NULL), "$0\r\n\r\n");
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "k", NULL), ":1\r\n", "an empty value is a value");
    cr_assert_str_eq(rd(T0, CMD_DBSIZE, NULL), ":1\r\n");
}

Test(store, large_value_is_read_from_the_log)
{
    char v[1001];
    for (int i = 0; i < 1000; i++)
        v[i] = (char)('a' + i % 26);
    v[1000] = 0;
    uint64_t before = store_index_bytes(ctx);
    uint64_t rec_lsn = lsn;
    cr_assert_str_eq(wr_set(T0, "big", v, 0, 0), OK);
    cr_assert_lt(store_index_bytes(ctx) - before, 100, "the value is not kept in RAM");
    rd(T0, CMD_GET, "big", NULL);
    cr_assert_eq(reply_len, 1000 + 9);
    cr_assert(memcmp(reply, "$1000\r\n", 7) == 0);
    cr_assert(memcmp(reply + 7, v, 1000) == 0);
    cr_assert_str_eq(rd(T0, CMD_STRLEN, "big", NULL), ":1000\r\n");
    /* Change the bytes in the segment file: GET must see the file. The value
     * argument starts after the header, cmd/argc and 3 args (key, len). */
    uint64_t off = rec_lsn + REC_HDR_SIZE + 4 + 4 + 3 + 4;
    cr_assert_eq(pwrite(seg_fd, "XYZ", 3, (off_t)off), 3);
    rd(T0, CMD_GET, "big", NULL);
    cr_assert(memcmp(reply + 7, "XYZ", 3) == 0);
    cr_assert(memcmp(reply + 10, v + 3, 997) == 0);
}

Test(store, inline_boundary)
{
    const char *v24 = "abcdefghijklmnopqrstuvwx", *v25 = "abcdefghijklmnopqrstuvwxy";
    wr_set(T0, "a", v24, 0, 0);
    wr_set(T0, "b", v25, 0, 0);
    cr_assert_str_eq(rd(T0, CMD_GET, "a", NULL), "$24\r\nabcdefghijklmnopqrstuvwx\r\n");
    cr_assert_str_eq(rd(T0, CMD_GET, "b", NULL), "$25\r\nabcdefghijklmnopqrstuvwxy\r\n");
    cr_assert_str_eq(rd(T0, CMD_MGET, "a", "zz", "b", NULL),
                     "*3\r\n$24\r\nabcdefghijklmnopqrstuvwx\r\n$-1\r\n"
                     "$25\r\nabcdefghijklmnopqrstuvwxy\r\n");
}

Test(store, binary_keys_and_values)
{
    const unsigned char key[] = {'k', 0, 'z'};
    unsigned char val[40];
    for (int i = 0; i < 40; i++)
        val[i] = (unsigned char)(i * 7);
    unsigned char f[4] = {0}, x[8] = {0};
    const unsigned char *argv[4] = {key, val, f, x};
    uint32_t lens[4] = {3, 40, 4, 8};
    cr_assert_str_eq(sh_put(T0, CMD_SET, 4, argv, lens), OK);
    lens[1] = 5; /* and a short binary one under another key */
    const unsigned char key2[] = {0};
    argv[0] = key2;
    lens[0] = 1;
    sh_put(T0, CMD_SET, 4, argv, lens);
    unsigned char p[128];
    const unsigned char *rargv[1] = {key};
    uint32_t rlens[1] = {3};
    size_t n = rec_encode_payload(p, CMD_GET, 1, rargv, rlens);
    buf_t b;
    buf_init(&b);
    store_read_at(ctx, p, n, T0, &b);
    cr_assert_eq(b.len, 5 + 40 + 2);
    cr_assert(memcmp(b.data, "$40\r\n", 5) == 0 && memcmp(b.data + 5, val, 40) == 0);
    buf_reset(&b);
    rargv[0] = key2;
    rlens[0] = 1;
    n = rec_encode_payload(p, CMD_GET, 1, rargv, rlens);
    store_read_at(ctx, p, n, T0, &b);
    cr_assert_eq(b.len, 4 + 5 + 2);
    cr_assert(memcmp(b.data + 4, val, 5) == 0);
    buf_free(&b);
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "k", NULL), ":0\r\n", "the NUL is part of the key");
}

Test(store, set_nx_xx)
{
    cr_assert_str_eq(wr_set(T0, "k", "1", SETF_XX, 0), NIL);
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "k", NULL), ":0\r\n");
    cr_assert_str_eq(wr_set(T0, "k", "1", SETF_NX, 0), OK);
    cr_assert_str_eq(wr_set(T0, "k", "2", SETF_NX, 0), NIL);
    cr_assert_str_eq(rd(T0, CMD_GET, "k", NULL), "$1\r\n1\r\n");
    cr_assert_str_eq(wr_set(T0, "k", "3", SETF_XX, 0), OK);
    cr_assert_str_eq(rd(T0, CMD_GET, "k", NULL), "$1\r\n3\r\n");
}

Test(store, set_get_flag)
{
    cr_assert_str_eq(wr_set(T0, "k", "a", SETF_GET, 0), NIL);
    cr_assert_str_eq(rd(T0, CMD_GET, "k", NULL), "$1\r\na\r\n");
    cr_assert_str_eq(wr_set(T0, "k", "b", SETF_GET, 0), "$1\r\na\r\n");
    /* NX + GET (Redis 7): the old value is returned, nothing is set. */
    cr_assert_str_eq(wr_set(T0, "k", "c", SETF_GET | SETF_NX, 0), "$1\r\nb\r\n");
    cr_assert_str_eq(rd(T0, CMD_GET, "k", NULL), "$1\r\nb\r\n");
    cr_assert_str_eq(wr_set(T0, "new", "c", SETF_GET | SETF_XX, 0), NIL);
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "new", NULL), ":0\r\n");
    /* A large old value comes back from the log. */
    char big[101];
    memset(big, 'q', 100);
    big[100] = 0;
    wr_set(T0, "k", big, 0, 0);
    wr_set(T0, "k", "small", SETF_GET, 0);
    cr_assert_eq(reply_len, 100 + 8);
    cr_assert(memcmp(reply, "$100\r\nqqq", 9) == 0);
}

Test(store, set_ttl_and_keepttl)
{
    wr_set(T0, "k", "v", 0, T0 + 10000);
    cr_assert_str_eq(rd(T0, CMD_TTL, "k", NULL), ":10\r\n");
    cr_assert_str_eq(rd(T0, CMD_PTTL, "k", NULL), ":10000\r\n");
    cr_assert_eq(store_expire_count(ctx), 1);
    wr_set(T0, "k", "v2", SETF_KEEPTTL, 0);
    cr_assert_str_eq(rd(T0, CMD_PTTL, "k", NULL), ":10000\r\n", "KEEPTTL keeps it");
    wr_set(T0, "k", "v3", 0, 0);
    cr_assert_str_eq(rd(T0, CMD_TTL, "k", NULL), ":-1\r\n", "a plain SET clears it");
    cr_assert_eq(store_expire_count(ctx), 0);
    cr_assert_str_eq(rd(T0, CMD_TTL, "nokey", NULL), ":-2\r\n");
    cr_assert_str_eq(rd(T0, CMD_PTTL, "nokey", NULL), ":-2\r\n");
    cr_assert_str_eq(rd(T0, CMD_PTTL, "k", NULL), ":-1\r\n");
    /* KEEPTTL on a key without TTL, and on a new key. */
    wr_set(T0, "n", "v", SETF_KEEPTTL, 0);
    cr_assert_str_eq(rd(T0, CMD_TTL, "n", NULL), ":-1\r\n");
}

Test(store, ttl_rounding)
{
    /* Redis: TTL = (ms + 500) / 1000. */
    wr_set(T0, "a", "v", 0, T0 + 499);
    wr_set(T0, "b", "v", 0, T0 + 500);
    wr_set(T0, "c", "v", 0, T0 + 1499);
    wr_set(T0, "d", "v", 0, T0 + 1500);
    cr_assert_str_eq(rd(T0, CMD_TTL, "a", NULL), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_TTL, "b", NULL), ":1\r\n");
    cr_assert_str_eq(rd(T0, CMD_TTL, "c", NULL), ":1\r\n");
    cr_assert_str_eq(rd(T0, CMD_TTL, "d", NULL), ":2\r\n");
    cr_assert_str_eq(rd(T0 + 1, CMD_PTTL, "d", NULL), ":1499\r\n");
}

Test(store, mset)
{
    wr_set(T0, "a", "old", 0, T0 + 5000);
    cr_assert_str_eq(wr(T0, CMD_MSET, "a", "1", "b", "2", "a", "3", NULL), OK);
    cr_assert_str_eq(rd(T0, CMD_MGET, "a", "b", "c", NULL), "*3\r\n$1\r\n3\r\n$1\r\n2\r\n$-1\r\n");
    cr_assert_str_eq(rd(T0, CMD_TTL, "a", NULL), ":-1\r\n", "MSET clears the TTL");
    cr_assert_eq(store_expire_count(ctx), 0);
    cr_assert_str_eq(rd(T0, CMD_DBSIZE, NULL), ":2\r\n");
}

Test(store, del_exists)
{
    wr(T0, CMD_MSET, "a", "1", "b", "2", "c", "3", NULL);
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "a", "a", "b", "x", NULL), ":3\r\n", "duplicates count");
    cr_assert_str_eq(wr(T0, CMD_DEL, "a", "x", "b", "a", NULL), ":2\r\n");
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "a", "b", "c", NULL), ":1\r\n");
    cr_assert_str_eq(wr(T0, CMD_DEL, "nothing", NULL), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_DBSIZE, NULL), ":1\r\n");
}

/* ---- INCR ---------------------------------------------------------------- */

Test(store, incr)
{
    cr_assert_str_eq(wr_incrby(T0, "n", 1), ":1\r\n");
    cr_assert_str_eq(wr_incrby(T0, "n", 10), ":11\r\n");
    cr_assert_str_eq(wr_incrby(T0, "n", -20), ":-9\r\n");
    cr_assert_str_eq(rd(T0, CMD_GET, "n", NULL), "$2\r\n-9\r\n");
    wr_set(T0, "s", "41", 0, 0);
    cr_assert_str_eq(wr_incrby(T0, "s", 1), ":42\r\n");
    wr_set(T0, "m", "-9223372036854775808", 0, 0);
    cr_assert_str_eq(wr_incrby(T0, "m", 0), ":-9223372036854775808\r\n");
    cr_assert_str_eq(wr_incrby(T0, "m", 9223372036854775807ll), ":-1\r\n");
}

Test(store, incr_not_an_integer)
{
    static const char *bad[] = {"abc",
                                " 1",
                                "1 ",
                                "+1",
                                "01",
                                "-0",
                                "",
                                "1.5",
                                "-",
                                "99999999999999999999",
                                "9223372036854775808",
                                "-9223372036854775809",
                                "0x10"};
    const char *err = "-ERR value is not an integer or out of range\r\n";
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        wr_set(T0, "k", bad[i], 0, 0);
        cr_assert_str_eq(wr_incrby(T0, "k", 1), err, "value '%s'", bad[i]);
        char want[64];
        snprintf(want, sizeof(want), "$%zu\r\n%s\r\n", strlen(bad[i]), bad[i]);
        cr_assert_str_eq(rd(T0, CMD_GET, "k", NULL), want, "value '%s' unchanged", bad[i]);
    }
    char big[41];
    memset(big, '1', 40);
    big[40] = 0;
    wr_set(T0, "big", big, 0, 0);
    cr_assert_str_eq(wr_incrby(T0, "big", 1), err);
}

Test(store, incr_overflow)
{
    const char *err = "-ERR increment or decrement would overflow\r\n";
    wr_set(T0, "max", "9223372036854775807", 0, 0);
    cr_assert_str_eq(wr_incrby(T0, "max", 1), err);
    cr_assert_str_eq(rd(T0, CMD_GET, "max", NULL), "$19\r\n9223372036854775807\r\n");
    wr_set(T0, "min", "-9223372036854775808", 0, 0);
    cr_assert_str_eq(wr_incrby(T0, "min", -1), err);
    wr_set(T0, "one", "1", 0, 0);
    cr_assert_str_eq(wr_incrby(T0, "one", 9223372036854775807ll), err);
    cr_assert_str_eq(wr_incrby(T0, "one", -9223372036854775807ll - 1), ":-9223372036854775807\r\n");
    cr_assert_str_eq(wr_incrby(T0, "none", -9223372036854775807ll - 1),
                     ":-9223372036854775808\r\n");
}

Test(store, incr_keeps_ttl)
{
    wr_set(T0, "n", "5", 0, T0 + 3000);
    cr_assert_str_eq(wr_incrby(T0, "n", 1), ":6\r\n");
    cr_assert_str_eq(rd(T0, CMD_PTTL, "n", NULL), ":3000\r\n");
    /* An expired key counts as absent: INCR starts from 0, without TTL. */
    cr_assert_str_eq(wr_incrby(T0 + 3000, "n", 1), ":1\r\n");
    cr_assert_str_eq(rd(T0 + 3000, CMD_TTL, "n", NULL), ":-1\r\n");
}

/* ---- APPEND -------------------------------------------------------------- */

Test(store, append_chain)
{
    cr_assert_str_eq(wr(T0, CMD_APPEND, "k", "hello", NULL), ":5\r\n");
    cr_assert_str_eq(wr(T0, CMD_APPEND, "k", " world", NULL), ":11\r\n"); /* inline */
    cr_assert_str_eq(rd(T0, CMD_GET, "k", NULL), "$11\r\nhello world\r\n");
    cr_assert_str_eq(wr(T0, CMD_APPEND, "k", ", and more than 24", NULL),
                     ":29\r\n"); /* prefix + extent */
    cr_assert_str_eq(rd(T0, CMD_GET, "k", NULL), "$29\r\nhello world, and more than 24\r\n");
    cr_assert_str_eq(wr(T0, CMD_APPEND, "k", "!", NULL), ":30\r\n"); /* list */
    char want[4096] = "hello world, and more than 24!";
    for (int i = 0; i < 40; i++) {
        char piece[64];
        snprintf(piece, sizeof(piece), "<%d:%s>", i, i % 3 ? "x" : "a longer piece of text here");
        strcat(want, piece);
        char exp[32];
        snprintf(exp, sizeof(exp), ":%zu\r\n", strlen(want));
        cr_assert_str_eq(wr(T0, CMD_APPEND, "k", piece, NULL), exp);
    }
    char exp[4200];
    snprintf(exp, sizeof(exp), "$%zu\r\n%s\r\n", strlen(want), want);
    cr_assert_str_eq(rd(T0, CMD_GET, "k", NULL), exp);
    snprintf(exp, sizeof(exp), ":%zu\r\n", strlen(want));
    cr_assert_str_eq(rd(T0, CMD_STRLEN, "k", NULL), exp);
    cr_assert_str_eq(wr(T0, CMD_APPEND, "k", "", NULL), exp, "an empty APPEND changes nothing");
}

Test(store, append_to_incr_result_and_large_values)
{
    wr_incrby(T0, "n", 12345);
    cr_assert_str_eq(wr(T0, CMD_APPEND, "n", "-suffix-that-is-rather-long", NULL), ":32\r\n");
    cr_assert_str_eq(rd(T0, CMD_GET, "n", NULL), "$32\r\n12345-suffix-that-is-rather-long\r\n");
    /* INCR on it fails, and INCR replaces extents with an inline number. */
    cr_assert_str_eq(wr_incrby(T0, "n", 1), "-ERR value is not an integer or out of range\r\n");
    wr_set(T0, "n", "7", 0, 0);
    cr_assert_str_eq(wr_incrby(T0, "n", 1), ":8\r\n");
    /* A large SET value followed by appends: extent then list. */
    char big[201];
    memset(big, 'B', 200);
    big[200] = 0;
    wr_set(T0, "b", big, 0, 0);
    cr_assert_str_eq(wr(T0, CMD_APPEND, "b", "xy", NULL), ":202\r\n");
    cr_assert_str_eq(wr(T0, CMD_APPEND, "b", big, NULL), ":402\r\n");
    rd(T0, CMD_GET, "b", NULL);
    cr_assert_eq(reply_len, 402 + 8);
    cr_assert(memcmp(reply + 6, big, 200) == 0);
    cr_assert(memcmp(reply + 206, "xy", 2) == 0);
    cr_assert(memcmp(reply + 208, big, 200) == 0);
    /* APPEND to a missing key of a big value; APPEND keeps the TTL. */
    wr_pexpireat(T0, "b", T0 + 9000, 0);
    wr(T0, CMD_APPEND, "b", "z", NULL);
    cr_assert_str_eq(rd(T0, CMD_PTTL, "b", NULL), ":9000\r\n");
    cr_assert_str_eq(wr(T0, CMD_APPEND, "c", big, NULL), ":200\r\n");
    cr_assert_str_eq(rd(T0, CMD_STRLEN, "c", NULL), ":200\r\n");
}

Test(store, append_limit)
{
    cfg.proto_max_bulk_len = 30;
    store_ctx_destroy(ctx);
    ctx = store_ctx_create(&cfg, 1);
    wr(T0, CMD_APPEND, "k", "0123456789012345678901234", NULL);
    cr_assert_str_eq(wr(T0, CMD_APPEND, "k", "56789", NULL), ":30\r\n");
    cr_assert_str_eq(wr(T0, CMD_APPEND, "k", "!", NULL),
                     "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n");
    cr_assert_str_eq(rd(T0, CMD_STRLEN, "k", NULL), ":30\r\n");
}

/* ---- GETDEL, EXPIRE, PERSIST, FLUSHALL ----------------------------------- */

Test(store, getdel)
{
    cr_assert_str_eq(wr(T0, CMD_GETDEL, "k", NULL), NIL);
    wr_set(T0, "k", "v", 0, T0 + 100);
    cr_assert_str_eq(wr(T0, CMD_GETDEL, "k", NULL), "$1\r\nv\r\n");
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "k", NULL), ":0\r\n");
    cr_assert_eq(store_expire_count(ctx), 0);
    char big[61];
    memset(big, 'g', 60);
    big[60] = 0;
    wr_set(T0, "k", big, 0, 0);
    wr(T0, CMD_GETDEL, "k", NULL);
    cr_assert_eq(reply_len, 60 + 7);
    cr_assert_str_eq(rd(T0, CMD_DBSIZE, NULL), ":0\r\n");
}

Test(store, pexpireat_flags)
{
    const char *z = ":0\r\n", *o = ":1\r\n";
    cr_assert_str_eq(wr_pexpireat(T0, "none", T0 + 1000, 0), z);
    wr_set(T0, "k", "v", 0, 0);
    cr_assert_str_eq(wr_pexpireat(T0, "k", T0 + 1000, EXPF_XX), z, "XX: no TTL yet");
    cr_assert_str_eq(wr_pexpireat(T0, "k", T0 + 1000, EXPF_GT), z, "GT: no TTL is infinite");
    cr_assert_str_eq(wr_pexpireat(T0, "k", T0 + 1000, EXPF_NX), o);
    cr_assert_str_eq(wr_pexpireat(T0, "k", T0 + 2000, EXPF_NX), z);
    cr_assert_str_eq(rd(T0, CMD_PTTL, "k", NULL), ":1000\r\n");
    cr_assert_str_eq(wr_pexpireat(T0, "k", T0 + 2000, EXPF_XX), o);
    cr_assert_str_eq(wr_pexpireat(T0, "k", T0 + 1500, EXPF_GT), z);
    cr_assert_str_eq(wr_pexpireat(T0, "k", T0 + 2000, EXPF_GT), z, "GT: equal fails");
    cr_assert_str_eq(wr_pexpireat(T0, "k", T0 + 3000, EXPF_GT), o);
    cr_assert_str_eq(wr_pexpireat(T0, "k", T0 + 4000, EXPF_LT), z);
    cr_assert_str_eq(wr_pexpireat(T0, "k", T0 + 3000, EXPF_LT), z, "LT: equal fails");
    cr_assert_str_eq(wr_pexpireat(T0, "k", T0 + 2500, EXPF_LT), o);
    cr_assert_str_eq(rd(T0, CMD_PTTL, "k", NULL), ":2500\r\n");
    wr_set(T0, "p", "v", 0, 0);
    cr_assert_str_eq(wr_pexpireat(T0, "p", T0 + 500, EXPF_LT), o, "LT: no TTL is infinite");
    cr_assert_str_eq(wr_pexpireat(T0, "p", T0 + 800, 0), o);
    cr_assert_str_eq(rd(T0, CMD_PTTL, "p", NULL), ":800\r\n");
    cr_assert_eq(store_expire_count(ctx), 2);
}

Test(store, pexpireat_in_the_past_deletes)
{
    wr_set(T0, "k", "v", 0, 0);
    cr_assert_str_eq(wr_pexpireat(T0, "k", T0, 0), ":1\r\n", "at == now deletes");
    cr_assert_str_eq(rd(T0 - 100000, CMD_EXISTS, "k", NULL), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_DBSIZE, NULL), ":0\r\n", "removed, not just hidden");
    wr_set(T0, "k", "v", 0, 0);
    cr_assert_str_eq(wr_pexpireat(T0, "k", -5000, 0), ":1\r\n");
    cr_assert_str_eq(rd(T0, CMD_DBSIZE, NULL), ":0\r\n");
    /* A flag that fails wins over deletion. */
    wr_set(T0, "k", "v", 0, 0);
    cr_assert_str_eq(wr_pexpireat(T0, "k", 1, EXPF_XX), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "k", NULL), ":1\r\n");
}

Test(store, persist)
{
    cr_assert_str_eq(wr(T0, CMD_PERSIST, "none", NULL), ":0\r\n");
    wr_set(T0, "k", "v", 0, 0);
    cr_assert_str_eq(wr(T0, CMD_PERSIST, "k", NULL), ":0\r\n");
    wr_pexpireat(T0, "k", T0 + 1000, 0);
    cr_assert_eq(store_expire_count(ctx), 1);
    cr_assert_str_eq(wr(T0, CMD_PERSIST, "k", NULL), ":1\r\n");
    cr_assert_str_eq(rd(T0, CMD_TTL, "k", NULL), ":-1\r\n");
    cr_assert_eq(store_expire_count(ctx), 0);
}

Test(store, flushall)
{
    for (int i = 0; i < 100; i++) {
        char k[16];
        snprintf(k, sizeof(k), "k%d", i);
        wr_set(T0, k, "value that is longer than twenty-four bytes", 0, i % 2 ? T0 + 100 : 0);
    }
    cr_assert_str_eq(rd(T0, CMD_DBSIZE, NULL), ":100\r\n");
    cr_assert_str_eq(wr(T0, CMD_FLUSHALL, NULL), OK);
    cr_assert_str_eq(rd(T0, CMD_DBSIZE, NULL), ":0\r\n");
    cr_assert_eq(store_expire_count(ctx), 0);
    cr_assert_str_eq(rd(T0, CMD_GET, "k1", NULL), NIL);
    wr_set(T0, "k1", "x", 0, 0);
    cr_assert_str_eq(rd(T0, CMD_GET, "k1", NULL), "$1\r\nx\r\n");
}

/* ---- time --------------------------------------------------------------- */

Test(store, expiry_follows_record_time)
{
    wr_set(T0, "k", "v", 0, T0 + 500);
    /* Reads use their own clock and never remove. */
    cr_assert_str_eq(rd(T0 + 499, CMD_GET, "k", NULL), "$1\r\nv\r\n");
    cr_assert_str_eq(rd(T0 + 500, CMD_GET, "k", NULL), NIL);
    cr_assert_str_eq(rd(T0 + 500, CMD_TTL, "k", NULL), ":-2\r\n");
    cr_assert_str_eq(rd(T0 + 500, CMD_DBSIZE, NULL), ":0\r\n", "hidden from DBSIZE too");
    /* A write encoded before the expiry (record time) still sees the key. */
    cr_assert_str_eq(wr(T0 + 400, CMD_PERSIST, "k", NULL), ":1\r\n");
    cr_assert_str_eq(rd(T0 + 10000, CMD_GET, "k", NULL), "$1\r\nv\r\n");
    wr_pexpireat(T0 + 400, "k", T0 + 600, 0);
    cr_assert_str_eq(wr(T0 + 600, CMD_DEL, "other", NULL), ":0\r\n");
    cr_assert_eq(store_now(ctx), T0 + 600);
    /* The apply clock never goes back: a record stamped earlier (another
     * frontend's lagging clock) still finds the key expired. */
    cr_assert_str_eq(wr(T0 + 100, CMD_PERSIST, "k", NULL), ":0\r\n");
    cr_assert_eq(store_now(ctx), T0 + 600);
    cr_assert_str_eq(rd(T0, CMD_DBSIZE, NULL), ":0\r\n", "the touch removed it");
}

Test(store, set_with_expiry_in_the_past)
{
    /* SET ... PXAT in the past: set, but already expired. */
    cr_assert_str_eq(wr_set(T0, "k", "v", 0, T0 - 1), OK);
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "k", NULL), ":0\r\n");
    cr_assert_str_eq(wr_set(T0, "k", "w", SETF_NX, 0), OK, "expired counts as absent");
    cr_assert_str_eq(rd(T0, CMD_GET, "k", NULL), "$1\r\nw\r\n");
}

Test(store, active_expiry_uses_the_apply_clock)
{
    for (int i = 0; i < 1000; i++) {
        char k[16];
        snprintf(k, sizeof(k), "k%d", i);
        wr_set(T0, k, "v", 0, i < 600 ? T0 + 100 : 0);
    }
    cr_assert_eq(store_expire_count(ctx), 600);
    while (store_maintain(ctx, 16)) {
    }
    cr_assert_eq(store_key_count(ctx), 1000, "the apply clock has not reached the expiry");
    wr(T0 + 100, CMD_DEL, "none", NULL);
    while (store_maintain(ctx, 16)) {
    }
    cr_assert_eq(store_key_count(ctx), 400);
    cr_assert_eq(store_expire_count(ctx), 0);
    cr_assert_eq(store_maintain(ctx, 16), 0, "nothing to do until the clock moves");
}

/* ---- replay ------------------------------------------------------------- */

static void workload(void)
{
    char big[300];
    memset(big, 'R', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    for (int i = 0; i < 400; i++) {
        char k[16], v[16];
        int64_t t = T0 + i * 10 - (i % 7) * 30; /* clocks not quite in order */
        snprintf(k, sizeof(k), "k%d", i % 37);
        snprintf(v, sizeof(v), "%d", i);
        switch (i % 11) {
        case 0:
            wr_set(t, k, v, SETF_GET, i % 3 ? t + 200 : 0);
            break;
        case 1:
            wr_incrby(t, k, i);
            break;
        case 2:
            wr(t, CMD_APPEND, k, i % 2 ? big : "tail", NULL);
            break;
        case 3:
            wr_set(t, k, big + (i % 50), SETF_NX | SETF_GET, 0);
            break;
        case 4:
            wr_pexpireat(t, k, t + (i % 5) * 100 - 100, (uint32_t)(i % 4 ? 1u << (i % 4) : 0));
            break;
        case 5:
            wr(t, CMD_GETDEL, k, NULL);
            break;
        case 6:
            wr(t, CMD_PERSIST, k, NULL);
            break;
        case 7:
            wr(t, CMD_MSET, k, big, "m", v, NULL);
            break;
        case 8:
            wr(t, CMD_DEL, k, "m", k, NULL);
            break;
        case 9:
            wr_set(t, k, v, SETF_KEEPTTL | SETF_XX, 0);
            break;
        case 10:
            if (i == 208)
                wr(t, CMD_FLUSHALL, NULL);
            else
                wr_incrby(t, k, -1);
            break;
        }
    }
}

/* Apply the whole log copy to a fresh context; returns it. With replies,
 * they are collected into *all. */
static store_ctx_t *replay_copy(buf_t *all)
{
    return sh_replay(store_ctx_create(&cfg, 987654321), all);
}

Test(store, replay_is_deterministic)
{
    /* Live run, collecting every reply. */
    buf_t live;
    buf_init(&live);
    store_ctx_t *first = ctx;
    workload();
    /* Replies of the live run, recomputed from a replay with replies. */
    buf_t again;
    buf_init(&again);
    store_ctx_t *b = replay_copy(&again);
    store_ctx_t *c = replay_copy(NULL); /* silent, as at startup */
    uint64_t da, db, dc;
    int64_t now = store_now(first);
    cr_assert_eq(store_digest(first, now, &da), 0);
    cr_assert_eq(store_digest(b, now, &db), 0);
    cr_assert_eq(store_digest(c, now, &dc), 0);
    cr_assert_eq(da, db);
    cr_assert_eq(da, dc);
    cr_assert_eq(store_key_count(first), store_key_count(c));
    cr_assert_eq(store_expire_count(first), store_expire_count(c));
    cr_assert_eq(store_now(first), store_now(c));
    cr_assert_eq(store_applied(first), store_applied(c));
    /* The live replies: apply once more to a fresh context with replies and
     * compare with the second one (both replayed from the same bytes). */
    store_ctx_t *d = replay_copy(&live);
    cr_assert_eq(live.len, again.len);
    cr_assert(memcmp(live.data, again.data, live.len) == 0);
    cr_assert_gt(live.len, 1000);
    /* The digest sees a difference. */
    ctx = c;
    wr_set(T0 + 100000, "k1", "changed", 0, 0);
    cr_assert_eq(store_digest(c, now, &dc), 0);
    cr_assert_neq(da, dc);
    ctx = first;
    store_ctx_destroy(b);
    store_ctx_destroy(c);
    store_ctx_destroy(d);
    buf_free(&live);
    buf_free(&again);
}

Test(store, live_replies_equal_replayed_replies)
{
    /* Capture the live replies record by record, then compare with a replay
     * that computes replies. */
    buf_t live, again;
    buf_init(&live);
    buf_init(&again);
    char big[100];
    memset(big, 'z', 99);
    big[99] = 0;
    const char *r;
    r = wr_set(T0, "a", big, 0, T0 + 50);
    buf_append(&live, r, reply_len);
    r = wr(T0 + 10, CMD_APPEND, "a", "x", NULL);
    buf_append(&live, r, reply_len);
    r = wr_set(T0 + 20, "a", "y", SETF_GET, 0);
    buf_append(&live, r, reply_len);
    r = wr_incrby(T0 + 30, "a", 1);
    buf_append(&live, r, reply_len);
    r = wr_set(T0 + 30, "b", "1", 0, T0 + 40);
    buf_append(&live, r, reply_len);
    r = wr_incrby(T0 + 40, "b", 1);
    buf_append(&live, r, reply_len);
    r = wr(T0 + 40, CMD_GETDEL, "a", NULL);
    buf_append(&live, r, reply_len);
    store_ctx_t *b = replay_copy(&again);
    cr_assert_eq(live.len, again.len);
    cr_assert(memcmp(live.data, again.data, live.len) == 0, "%.*s", (int)again.len, again.data);
    store_ctx_destroy(b);
    buf_free(&live);
    buf_free(&again);
}

/* ---- segments, limits, errors -------------------------------------------- */

Test(store, values_across_many_segments)
{
    /* Small segments: 80 of them, more than the fd cache holds. */
    start_store(64 * 1024);
    static char v[30000];
    for (int i = 0; i < 160; i++) {
        memset(v, 'a' + i % 26, sizeof(v) - 1);
        snprintf(v, 16, "<%d>", i);
        v[strlen(v)] = '.';
        char k[16];
        snprintf(k, sizeof(k), "v%d", i);
        wr_set(T0, k, v, 0, 0);
    }
    cr_assert_gt(lsn, 64u * 1024 * 70);
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < 160; i++) {
            char k[16], head[16];
            snprintf(k, sizeof(k), "v%d", i);
            snprintf(head, sizeof(head), "<%d>.", i);
            rd(T0, CMD_GET, k, NULL);
            cr_assert_eq(reply_len, sizeof(v) - 1 + 10);
            cr_assert(memcmp(reply + 8, head, strlen(head)) == 0, "value %d", i);
            cr_assert_eq(reply[8 + sizeof(v) - 2], 'a' + i % 26);
        }
    }
    /* Replay over the pads at each segment end gives the same state. */
    store_ctx_t *c = replay_copy(NULL);
    uint64_t d1, d2;
    store_digest(ctx, T0, &d1);
    store_digest(c, T0, &d2);
    cr_assert_eq(d1, d2);
    store_ctx_destroy(c);
}

Test(store, reply_limit)
{
    store_set_max_reply(ctx, 100);
    char v[200];
    memset(v, 'x', 199);
    v[199] = 0;
    wr_set(T0, "big", v, 0, 0);
    wr_set(T0, "s", "small", 0, 0);
    cr_assert_str_eq(rd(T0, CMD_GET, "big", NULL), "-" STORE_ERR_TOO_LARGE "\r\n");
    cr_assert_str_eq(rd(T0, CMD_GET, "s", NULL), "$5\r\nsmall\r\n");
    v[60] = 0;
    wr_set(T0, "m1", v, 0, 0);
    wr_set(T0, "m2", v, 0, 0);
    cr_assert_str_eq(
        rd(T0, CMD_MGET, "m1", NULL),
        "*1\r\n$60\r\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n");
    cr_assert_str_eq(rd(T0, CMD_MGET, "m1", "m2", NULL), "-" STORE_ERR_TOO_LARGE "\r\n");
}

static int fail_pread_calls;
static ssize_t failing_pread(int fd, void *buf, size_t n, off_t off)
{
    (void)fd, (void)buf, (void)n, (void)off;
    fail_pread_calls++;
    errno = EIO;
    return -1;
}

Test(store, io_error_reading_a_value)
{
    char v[100];
    memset(v, 'e', 99);
    v[99] = 0;
    wr_set(T0, "k", v, 0, 0);
    wr_set(T0, "s", "inline", 0, 0);
    io_ops_t ops = io_real;
    ops.pread = failing_pread;
    const io_ops_t *old = io_set(&ops);
    cr_assert_str_eq(rd(T0, CMD_GET, "k", NULL), "-" STORE_ERR_IO "\r\n");
    cr_assert_str_eq(rd(T0, CMD_GET, "s", NULL), "$6\r\ninline\r\n", "inline values need no I/O");
    /* A write whose reply needs the value still changes the state. */
    cr_assert_str_eq(wr(T0, CMD_GETDEL, "k", NULL), "-" STORE_ERR_IO "\r\n");
    io_set(old);
    cr_assert_gt(fail_pread_calls, 0);
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "k", NULL), ":0\r\n");
}

Test(store, pad_and_unknown_records)
{
    unsigned char pad[64];
    rec_write_pad(pad, lsn, 64);
    sh_write_log(pad, 64);
    cr_assert_eq(store_apply(ctx, pad, NULL), 0);
    lsn += 64;
    cr_assert_eq(store_applied(ctx), lsn);
    /* A read command as a record: durable, so a no-op with an error reply. */
    const unsigned char *argv[1] = {(const unsigned char *)"k"};
    uint32_t lens[1] = {1};
    unsigned char rec[64];
    rec_encode_cmd(rec, lsn, 1, T0, CMD_GET, 1, argv, lens);
    rec_publish(rec, lsn);
    buf_t b;
    buf_init(&b);
    cr_assert_eq(store_apply(ctx, rec, &b), 1);
    cr_assert_eq(b.len, strlen("-ERR the store cannot apply this record\r\n"));
    /* SET with a wrong-size integer argument, likewise. */
    buf_reset(&b);
    const unsigned char *sargv[4] = {(const unsigned char *)"k", (const unsigned char *)"v",
                                     (const unsigned char *)"12",
                                     (const unsigned char *)"12345678"};
    uint32_t slens[4] = {1, 1, 2, 8};
    rec_encode_cmd(rec, lsn, 1, T0, CMD_SET, 4, sargv, slens);
    cr_assert_eq(store_apply(ctx, rec, &b), 1);
    cr_assert_eq(store_key_count(ctx), 0);
    /* Garbage is refused. */
    memset(rec, 0, sizeof(rec));
    cr_assert_eq(store_apply(ctx, rec, NULL), -1);
    buf_free(&b);
}

Test(store, bad_read_requests)
{
    cr_assert_str_eq(rd(T0, CMD_GET, NULL), "-ERR wrong number of arguments for 'get' command\r\n");
    cr_assert_str_eq(rd(T0, CMD_SET, "k", NULL), "-ERR the store does not answer this command\r\n");
    unsigned char junk[3] = {1, 2, 3};
    buf_t b;
    buf_init(&b);
    store_read_at(ctx, junk, sizeof(junk), T0, &b);
    cr_assert(b.len > 0 && b.data[0] == '-');
    buf_free(&b);
}

Test(store, many_args)
{
    /* More arguments than the initial decode array holds. */
    static const unsigned char *argv[2000];
    static uint32_t lens[2000];
    static char keys[2000][8];
    for (int i = 0; i < 2000; i++) {
        snprintf(keys[i], 8, "%d", i / 2);
        argv[i] = (const unsigned char *)keys[i];
        lens[i] = (uint32_t)strlen(keys[i]);
    }
    cr_assert_str_eq(sh_put(T0, CMD_MSET, 2000, argv, lens), OK);
    cr_assert_str_eq(rd(T0, CMD_DBSIZE, NULL), ":1000\r\n");
    cr_assert_str_eq(rd(T0, CMD_GET, "999", NULL), "$3\r\n999\r\n");
    cr_assert_str_eq(sh_put(T0, CMD_DEL, 2000, argv, lens), ":1000\r\n");
}

Test(store, ram_per_key)
{
    /* Not a limit to enforce, a number to report: bytes of index per key. */
    const int n = 100000;
    char v[101];
    memset(v, 'v', 100);
    v[100] = 0;
    for (int i = 0; i < n; i++) {
        char k[32];
        snprintf(k, sizeof(k), "key:%012d", i); /* 16 bytes */
        wr_set(T0, k, i % 2 ? v : "12345678", 0, 0);
    }
    cr_assert_eq(store_key_count(ctx), (uint64_t)n);
    double per_key = (double)store_index_bytes(ctx) / n;
    cr_log_info("index bytes per key (16-byte keys, half 8-byte inline, half 100-byte "
                "extent values): %.1f",
                per_key);
    cr_assert_lt(per_key, 80);
    rd(T0, CMD_GET, "key:000000099999", NULL);
    cr_assert_eq(reply_len, 100 + 8);
}

/* ---- the process loop (store_main) ---------------------------------------
 * The test plays master, frontend 0 and logger around a forked store. */

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "shm.h"
#include "store/store.h"

static shm_t *pshm;

/* Frontend + logger: claim, encode, commit, write to the segment, make
 * durable, wake the store. Returns the record's LSN. */
static uint64_t proc_write(uint16_t origin, uint16_t id, uint16_t argc,
                           const unsigned char *const *argv, const uint32_t *lens)
{
    ring_t *ring = shm_ring(pshm);
    uint32_t space = rec_space((uint32_t)rec_cmd_payload_size(argc, lens));
    uint64_t pos;
    cr_assert_eq(ring_claim(ring, &pshm->claimers[0], space, &pos), 0);
    cr_assert_eq(pos, lsn, "the test keeps ring and log in step");
    rec_encode_cmd(ring_ptr(ring, pos), pos, origin, shm_now_ms(), id, argc, argv, lens);
    ring_commit(ring, &pshm->claimers[0], pos);
    sh_write_log(ring_ptr(ring, pos), space);
    lsn = pos + space;
    atomic_store_explicit(&pshm->durable_lsn, lsn, memory_order_release);
    shm_wake(&pshm->store_wake);
    return pos;
}

static void proc_request(uint64_t req_id, uint64_t min_lsn, uint16_t id, const char *key)
{
    const unsigned char *argv[1] = {(const unsigned char *)key};
    uint32_t lens[1] = {key ? (uint32_t)strlen(key) : 0};
    unsigned char payload[256];
    size_t n = rec_encode_payload(payload, id, key ? 1 : 0, argv, lens);
    store_req_t req = {.id = req_id, .min_lsn = min_lsn, .payload_len = (uint32_t)n};
    unsigned char *p = chan_reserve(shm_to_store(pshm, 0), (uint32_t)(sizeof(req) + n));
    cr_assert(p);
    memcpy(p, &req, sizeof(req));
    memcpy(p + sizeof(req), payload, n);
    chan_publish(shm_to_store(pshm, 0));
    shm_wake(&pshm->store_wake);
}

/* The next reply for frontend 0 (waits up to 5 s). */
static int reply_parts; /* how many messages the last reply took */

/* The next whole reply from the store process: a reply larger than one
 * channel message comes in parts (STORE_REPLY_MORE / CONT, same id). */
static store_reply_t proc_reply(void)
{
    chan_t *c = shm_from_store(pshm, 0);
    store_reply_t whole = {0};
    reply_len = 0;
    reply_parts = 0;
    for (int i = 0; i < 5000; i++) {
        uint32_t len;
        const unsigned char *m = chan_peek(c, &len);
        if (!m) {
            struct timespec ts = {0, 1000 * 1000};
            nanosleep(&ts, NULL);
            continue;
        }
        store_reply_t r;
        cr_assert_geq(len, sizeof(r));
        memcpy(&r, m, sizeof(r));
        cr_assert_eq(len, sizeof(r) + r.len);
        if (reply_parts == 0) {
            cr_assert_eq(r.kind & STORE_REPLY_CONT, 0, "a reply starts with its first part");
            whole = r;
        } else {
            cr_assert(r.kind & STORE_REPLY_CONT, "later parts say so");
            cr_assert_eq(r.id, whole.id, "parts of one reply are not interleaved");
        }
        cr_assert_lt(reply_len + r.len, sizeof(reply));
        memcpy(reply + reply_len, m + sizeof(r), r.len);
        reply_len += r.len;
        reply_parts++;
        chan_consume(c);
        if (!(r.kind & STORE_REPLY_MORE)) {
            reply[reply_len] = 0;
            whole.kind = STORE_REPLY_KIND(whole.kind);
            whole.len = (uint32_t)reply_len;
            return whole;
        }
    }
    cr_assert_fail("no reply from the store");
    return (store_reply_t){0};
}

static pid_t fork_store(void)
{
    atomic_store(&pshm->store_ready, 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) _exit(store_main(pshm, &cfg));
    for (int i = 0; i < 5000 && !atomic_load(&pshm->store_ready); i++) {
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    cr_assert(atomic_load(&pshm->store_ready), "the store did not get ready");
    return pid;
}

static int stop_store(pid_t pid)
{
    /* The master's last shutdown stage: frontends and logger are gone. */
    atomic_store(&pshm->shutdown, 3);
    shm_wake(&pshm->store_wake);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    atomic_store(&pshm->shutdown, 0);
    cr_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

Test(store, process_loop)
{
    /* A log from an earlier run: the store replays it at startup. */
    wr_set(T0, "a", "1", 0, 0);
    char big[500];
    memset(big, 'P', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    wr_set(T0, "big", big, 0, 0);
    static char huge[40001];
    memset(huge, 'H', 40000);
    wr_set(T0, "huge", huge, 0, 0);
    uint64_t end = lsn;

    pshm = shm_create(1, 64 * 1024, 64 * 1024, 0);
    cr_assert(pshm);
    ring_init(shm_ring(pshm), 64 * 1024, end); /* as the logger does after recovery */
    atomic_store(&pshm->durable_lsn, end);
    atomic_store(&pshm->log_start_lsn, 0);
    atomic_store(&pshm->fe[0].pid, getpid());
    atomic_store(&pshm->logger_state, LOGGER_RUNNING);
    pid_t pid = fork_store();
    cr_assert_eq(atomic_load(&pshm->store_keys), 3);

    /* More than a reply message can hold: sent in parts, whole. */
    proc_request(100, 0, CMD_GET, "huge");
    cr_assert_eq(proc_reply().id, 100);
    cr_assert_gt(reply_parts, 1, "40 KB through a 64 KB channel takes several messages");
    cr_assert_eq(reply_len, 40000 + 10);
    cr_assert(memcmp(reply, "$40000\r\nHHH", 11) == 0 && memcmp(reply + 40007, "H\r\n", 3) == 0);

    /* A full reply channel: the store waits for us, dropping nothing. */
    for (uint64_t i = 0; i < 800; i++)
        proc_request(1000 + i, 0, CMD_GET, "big");
    for (uint64_t i = 0; i < 800; i++) {
        cr_assert_eq(proc_reply().id, 1000 + i);
        cr_assert_eq(reply_len, 499 + 8);
    }

    proc_request(1, 0, CMD_GET, "a");
    store_reply_t r = proc_reply();
    cr_assert_eq(r.id, 1);
    cr_assert_eq(r.kind, STORE_REPLY_READ);
    cr_assert_str_eq(reply, "$1\r\n1\r\n");
    proc_request(2, 0, CMD_GET, "big");
    proc_reply();
    cr_assert_eq(reply_len, 499 + 8);

    /* A read that must see a write not yet durable (frontends send none:
     * docs/DECISIONS.md, D19) waits for it at the head of its channel,
     * with the read behind it, and stays there: a store killed meanwhile
     * leaves both to its successor, which answers them in order. */
    unsigned char d[8];
    cmd_put_i64(d, 5);
    const unsigned char *argv[2] = {(const unsigned char *)"a", d};
    uint32_t lens[2] = {1, 8};
    uint32_t space = rec_space((uint32_t)rec_cmd_payload_size(2, lens));
    proc_request(3, lsn + space, CMD_GET, "a");
    proc_request(4, lsn + space, CMD_DBSIZE, NULL);
    for (int i = 0; i < 5000 && !atomic_load(&pshm->store_deferred); i++) {
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    cr_assert(atomic_load(&pshm->store_deferred), "the store did not hold the read");
    cr_assert(chan_empty(shm_from_store(pshm, 0)), "no reply before the write is durable");
    kill(pid, SIGKILL);
    cr_assert_eq(waitpid(pid, NULL, 0), pid);
    pid = fork_store();
    uint64_t wlsn = proc_write(1, CMD_INCRBY, 2, argv, lens);
    r = proc_reply();
    cr_assert_eq(r.kind, STORE_REPLY_WRITE);
    cr_assert_eq(r.id, wlsn);
    cr_assert_str_eq(reply, ":6\r\n");
    r = proc_reply();
    cr_assert_eq(r.id, 3);
    cr_assert_str_eq(reply, "$1\r\n6\r\n");
    r = proc_reply();
    cr_assert_eq(r.id, 4);
    cr_assert_str_eq(reply, ":3\r\n");

    /* A write with a fixed reply (origin 0) gets none from the store. */
    const unsigned char *margv[2] = {(const unsigned char *)"m", (const unsigned char *)"x"};
    uint32_t mlens[2] = {1, 1};
    proc_write(0, CMD_MSET, 2, margv, mlens);
    proc_request(5, lsn, CMD_GET, "m");
    r = proc_reply();
    cr_assert_eq(r.id, 5);
    cr_assert_str_eq(reply, "$1\r\nx\r\n");
    cr_assert_eq(atomic_load(&shm_ring(pshm)->tail), lsn, "applied space is released");
    cr_assert_eq(atomic_load(&pshm->store_keys), 4);

    atomic_store(&pshm->logger_state, LOGGER_STOPPED);
    cr_assert_eq(stop_store(pid), 0);

    /* A new incarnation replays the log up to the ring tail and continues. */
    atomic_store(&pshm->logger_state, LOGGER_RUNNING);
    pid = fork_store();
    cr_assert_eq(atomic_load(&pshm->store_keys), 4);
    proc_request(6, lsn, CMD_GET, "a");
    proc_reply();
    cr_assert_str_eq(reply, "$1\r\n6\r\n");
    wlsn = proc_write(1, CMD_INCRBY, 2, argv, lens);
    r = proc_reply();
    cr_assert_eq(r.id, wlsn);
    cr_assert_str_eq(reply, ":11\r\n");
    atomic_store(&pshm->logger_state, LOGGER_STOPPED);
    cr_assert_eq(stop_store(pid), 0);

    /* A damaged log below the ring tail is fatal, not silently skipped. */
    cr_assert_eq(pwrite(seg_fd, "junk", 4, 40), 4);
    atomic_store(&pshm->logger_state, LOGGER_RUNNING);
    pid = fork();
    if (pid == 0) _exit(store_main(pshm, &cfg));
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_FATAL);
}
