/*
 * test_store_hashes.c - the store's hash type (store/core/hash.c,
 * store/types/t_hash.c) driven record by record through the store harness
 * (store_harness.h): replies, encodings, WRONGTYPE both ways, the empty
 * hash that stops existing, replay giving the same digest and the same
 * replies, RAM accounting back to zero, and the checkpoint hooks
 * (ckpt_write / ckpt_read) round-tripping every value shape.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "record.h"
#include "store/core/entry.h"
#include "store/core/hash.h"
#include "store/core/index.h"
#include "store/core/object.h"
#include "store/store-internal.h"
#include "store_harness.h"

#define T0 1000000

#define wr(t, id, ...)   sh_wr((t), (id), __VA_ARGS__)
#define rd(now, id, ...) sh_rd((now), 0, (id), __VA_ARGS__)

static void setup(void)
{
    sh_setup("hashes", 0, 42);
    sh_canonical_only = 1;
}

TestSuite(hashes, .init = setup, .fini = sh_teardown, .timeout = 240);

/* The "#i64:" argument of hash-max-listpack-entries / -value. */
static const char *limits(uint32_t entries, uint32_t value)
{
    static char buf[4][40];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, 40, "#i64:%" PRIu64, (uint64_t)entries | (uint64_t)value << 32);
    return b;
}
#define LIM limits(512, 64)

static const char *hset(const char *key, const char *f, const char *v)
{
    return wr(T0, CMD_HSET, key, LIM, "#u32:0", f, v, NULL);
}

static idx_entry_t *entry(const char *key)
{
    idx_entry_t **slot = idx_find(&ctx->dbs[0]->ix, key, (uint32_t)strlen(key));
    return slot ? *slot : NULL;
}

static const char *encoding(const char *key)
{
    return rd(T0, CMD_OBJECT, "encoding", key, NULL);
}

Test(hashes, replies)
{
    cr_assert_str_eq(wr(T0, CMD_HSET, "h", LIM, "#u32:0", "a", "1", "b", "2", NULL), ":2\r\n");
    cr_assert_str_eq(wr(T0, CMD_HSET, "h", LIM, "#u32:0", "a", "3", "c", "4", NULL), ":1\r\n");
    cr_assert_str_eq(wr(T0, CMD_HSET, "h", LIM, "#u32:2", "d", "5", NULL), "+OK\r\n");
    cr_assert_str_eq(wr(T0, CMD_HSET, "h", LIM, "#u32:1", "d", "6", NULL), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_HGET, "h", "d", NULL), "$1\r\n5\r\n");
    cr_assert_str_eq(rd(T0, CMD_HGETALL, "h", NULL),
                     "*8\r\n$1\r\na\r\n$1\r\n3\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n4\r\n"
                     "$1\r\nd\r\n$1\r\n5\r\n");
    cr_assert_str_eq(rd(T0, CMD_HMGET, "h", "a", "zz", NULL), "*2\r\n$1\r\n3\r\n$-1\r\n");
    cr_assert_str_eq(rd(T0, CMD_HLEN, "h", NULL), ":4\r\n");
    cr_assert_str_eq(rd(T0, CMD_HSTRLEN, "h", "a", NULL), ":1\r\n");
    cr_assert_str_eq(rd(T0, CMD_HEXISTS, "h", "zz", NULL), ":0\r\n");
    cr_assert_str_eq(rd(T0, CMD_TYPE, "h", NULL), "+hash\r\n");
    cr_assert_str_eq(encoding("h"), "$8\r\nlistpack\r\n");
    cr_assert_str_eq(wr(T0, CMD_HINCRBY, "h", LIM, "a", "#i64:10", NULL), ":13\r\n");
    cr_assert_str_eq(wr(T0, CMD_HINCRBYFLOAT, "h", LIM, "a", "0.5", NULL), "$4\r\n13.5\r\n");
    cr_assert_str_eq(wr(T0, CMD_HINCRBY, "h", LIM, "a", "#i64:1", NULL),
                     "-ERR hash value is not an integer\r\n");
    hset("h", "big", "9223372036854775807");
    cr_assert_str_eq(wr(T0, CMD_HINCRBY, "h", LIM, "big", "#i64:1", NULL),
                     "-ERR increment or decrement would overflow\r\n");
    hset("h", "s", "abc");
    cr_assert_str_eq(wr(T0, CMD_HINCRBYFLOAT, "h", LIM, "s", "1", NULL),
                     "-ERR hash value is not a float\r\n");
    cr_assert_str_eq(wr(T0, CMD_HDEL, "h", "a", "a", "zz", NULL), ":1\r\n");
    sh_check_replay("hashes");
}

Test(hashes, wrongtype_both_ways_and_empty_hash_deleted)
{
    wr(T0, CMD_SET, "s", "v", "#u32:0", "#i64:0", NULL);
    const char *wt = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
    cr_assert_str_eq(hset("s", "f", "v"), wt);
    cr_assert_str_eq(rd(T0, CMD_HGET, "s", "f", NULL), wt);
    cr_assert_str_eq(rd(T0, CMD_HGETALL, "s", NULL), wt);
    hset("h", "f", "v");
    cr_assert_str_eq(rd(T0, CMD_GET, "h", NULL), wt);
    cr_assert_str_eq(wr(T0, CMD_INCRBY, "h", "#i64:1", NULL), wt);
    cr_assert_str_eq(wr(T0, CMD_APPEND, "h", "x", "#i64:0", NULL), wt);
    cr_assert_str_eq(wr(T0, CMD_SET, "h", "v", "#u32:4", "#i64:0", NULL), wt); /* SET GET */
    cr_assert_str_eq(rd(T0, CMD_MGET, "h", "s", NULL), "*2\r\n$-1\r\n$1\r\nv\r\n");
    cr_assert_str_eq(wr(T0, CMD_HDEL, "h", "f", NULL), ":1\r\n");
    cr_assert_null(entry("h"), "a hash whose last field went does not exist");
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "h", NULL), ":0\r\n");
    hset("h2", "f", "v");
    cr_assert_str_eq(wr(T0, CMD_SET, "h2", "str", "#u32:0", "#i64:0", NULL), "+OK\r\n");
    cr_assert_str_eq(rd(T0, CMD_TYPE, "h2", NULL), "+string\r\n");
    sh_check_replay("hashes");
}

Test(hashes, encodings_follow_the_limits_the_records_carry)
{
    wr(T0, CMD_HSET, "a", limits(2, 64), "#u32:0", "f1", "v", "f2", "v", NULL);
    cr_assert_str_eq(encoding("a"), "$8\r\nlistpack\r\n");
    wr(T0, CMD_HSET, "a", limits(2, 64), "#u32:0", "f3", "v", NULL);
    cr_assert_str_eq(encoding("a"), "$9\r\nhashtable\r\n");
    wr(T0, CMD_HDEL, "a", "f1", "f2", NULL);
    cr_assert_str_eq(encoding("a"), "$9\r\nhashtable\r\n", "once a table, always");
    wr(T0, CMD_HSET, "b", limits(512, 4), "#u32:0", "f", "12345", NULL);
    cr_assert_str_eq(encoding("b"), "$9\r\nhashtable\r\n");
    /* HSETNX of a field that exists changes nothing, not even the encoding. */
    wr(T0, CMD_HSET, "c", limits(512, 4), "#u32:0", "f", "1", NULL);
    wr(T0, CMD_HSET, "c", limits(512, 4), "#u32:1", "f", "123456", NULL);
    cr_assert_str_eq(encoding("c"), "$8\r\nlistpack\r\n");
    wr(T0, CMD_HINCRBY, "c", limits(512, 4), "a-long-field", "#i64:1", NULL);
    cr_assert_str_eq(encoding("c"), "$9\r\nhashtable\r\n");
    sh_check_replay("hashes");
}

/* A mixed random sequence over a few keys and fields: replay (silent and
 * with replies) must give the same digest and the same replies. */
Test(hashes, random_sequence_replays_alike)
{
    uint64_t s = 12345;
    char big[300];
    memset(big, 'x', sizeof(big));
    big[sizeof(big) - 1] = 0;
    for (int i = 0; i < 4000; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        unsigned r = (unsigned)(s >> 33);
        char key[8], f[8], v[32];
        snprintf(key, sizeof(key), "k%u", r % 5);
        snprintf(f, sizeof(f), "f%u", (r >> 4) % 40);
        snprintf(v, sizeof(v), "%u", (r >> 10) % 1000);
        switch ((r >> 20) % 10) {
        case 0:
        case 1:
            wr(T0 + i, CMD_HSET, key, limits(16 + r % 20, 64), "#u32:0", f, v, NULL);
            break;
        case 2:
            wr(T0 + i, CMD_HSET, key, LIM, "#u32:0", f, big + (r % 290), NULL); /* extents */
            break;
        case 3:
            wr(T0 + i, CMD_HDEL, key, f, NULL);
            break;
        case 4:
            wr(T0 + i, CMD_HINCRBY, key, LIM, f, "#i64:7", NULL);
            break;
        case 5:
            wr(T0 + i, CMD_HINCRBYFLOAT, key, LIM, f, "1e300", NULL);
            break;
        case 6:
            wr(T0 + i, CMD_HSET, key, LIM, "#u32:1", f, v, NULL);
            break;
        case 7:
            wr(T0 + i, CMD_SET, key, v, "#u32:0", "#i64:0", NULL);
            break;
        case 8:
            wr(T0 + i, CMD_DEL, key, NULL);
            break;
        default:
            wr(T0 + i, CMD_COPY, key, "copy", "#u32:0", "#u32:1", NULL);
            break;
        }
    }
    sh_check_replay("hashes");
}

static uint64_t entry_bytes(void)
{
    uint64_t n = store_index_bytes(ctx);
    for (int i = 0; i < ctx->ndb; i++)
        n -= idx_table_bytes(&ctx->dbs[i]->ix);
    return n;
}

Test(hashes, ram_is_counted_and_given_back)
{
    uint64_t base = entry_bytes();
    char big[100];
    memset(big, 'y', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    for (int k = 0; k < 5; k++) {
        char key[8];
        snprintf(key, sizeof(key), "k%d", k);
        for (int i = 0; i < 300; i++) {
            char f[16];
            snprintf(f, sizeof(f), "field%d", i);
            wr(T0, CMD_HSET, key, LIM, "#u32:0", f, i % 2 ? big : "small", NULL);
            if (i % 7 == 0) wr(T0, CMD_HINCRBYFLOAT, key, LIM, f, "1e300", NULL);
        }
        wr(T0, CMD_COPY, key, "c", "#u32:0", "#u32:1", NULL);
        wr(T0, CMD_RENAME, "c", "d", "#u32:0", NULL);
    }
    store_ctx_t *again = sh_replay(store_ctx_create(&cfg, 7), NULL);
    uint64_t here = entry_bytes(), there = store_index_bytes(again);
    for (int i = 0; i < again->ndb; i++)
        there -= idx_table_bytes(&again->dbs[i]->ix);
    cr_assert_eq(here, there, "replay counts the same bytes");
    store_ctx_destroy(again);
    for (int k = 0; k < 5; k++) {
        char key[8];
        snprintf(key, sizeof(key), "k%d", k);
        wr(T0, CMD_DEL, key, NULL);
    }
    wr(T0, CMD_DEL, "d", NULL);
    cr_assert_eq(store_key_count(ctx), 0);
    cr_assert_eq(entry_bytes(), base, "every byte counted for hashes was given back");
}

/* ckpt_write then ckpt_read: the same contents (digest), encoding and
 * order; writing the copy gives the same bytes. Extents stay extents. */
static void round_trip(const char *key)
{
    idx_entry_t *e = entry(key);
    cr_assert_not_null(e);
    cr_assert_eq(st_ent_type(e), ST_HASH);
    st_obj_t *o = st_ent_obj(e);
    const st_type_ops_t *ops = st_type_ops(ST_HASH);
    cr_assert_eq(ops, o->ops);
    buf_t b1, b2;
    buf_init(&b1);
    buf_init(&b2);
    ops->ckpt_write(o, &b1);
    st_obj_t *copy = NULL;
    cr_assert_eq(ops->ckpt_read((const unsigned char *)b1.data, b1.len, &copy), (long)b1.len);
    ops->ckpt_write(copy, &b2);
    cr_assert_eq(b1.len, b2.len);
    cr_assert(memcmp(b1.data, b2.data, b1.len) == 0, "the copy writes the same stream");
    uint64_t d1, d2;
    cr_assert_eq(ops->digest(ctx, o, &d1), 0);
    cr_assert_eq(ops->digest(ctx, copy, &d2), 0);
    cr_assert_eq(d1, d2);
    cr_assert_str_eq(ops->encoding(o), ops->encoding(copy));
    cr_assert_eq(ops->mem_usage(o) > 0, 1);
    /* Truncated streams are refused, never read past. */
    for (size_t n = 0; n < b1.len; n += 1 + n / 8) {
        st_obj_t *x = NULL;
        cr_assert_eq(ops->ckpt_read((const unsigned char *)b1.data, n, &x), -1, "cut at %zu", n);
    }
    ops->free(copy);
    buf_free(&b1);
    buf_free(&b2);
}

Test(hashes, checkpoint_round_trip)
{
    char big[200];
    memset(big, 'z', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    wr(T0, CMD_HSET, "lp", LIM, "#u32:0", "a", "1", "b", big, "", "", NULL);
    wr(T0, CMD_HINCRBYFLOAT, "lp", LIM, "f", "1e300", NULL); /* a 300-byte text in RAM */
    wr(T0, CMD_HSET, "ht", limits(4, 64), "#u32:0", "a", "1", "b", big, "c", "3", "d", "4", "e",
       "5", NULL);
    cr_assert_str_eq(encoding("ht"), "$9\r\nhashtable\r\n");
    round_trip("lp");
    round_trip("ht");
    unsigned char junk[20] = {9, 9, 9};
    st_obj_t *x = NULL;
    cr_assert_eq(st_type_ops(ST_HASH)->ckpt_read(junk, sizeof(junk), &x), -1);
}

/* RAM per field of a 1M-field hash (the report's number): 16-byte field
 * names, 100-byte values (log extents). Printed, bounded loosely. */
Test(hashes, ram_per_field_of_a_million_fields)
{
    char val[101];
    memset(val, 'v', 100);
    val[100] = 0;
    uint64_t before = store_index_bytes(ctx);
    const int per = 500, total = 1000000;
    static char names[500][20];
    for (int r = 0; r < total / per; r++) {
        for (int k = 0; k < per; k += 30) {
            const char *argv[64];
            uint32_t lens[64];
            unsigned char lim[8], flags[4];
            cmd_put_i64(lim, (int64_t)(512u | (uint64_t)64 << 32));
            cmd_put_u32(flags, 0);
            int n = 0;
            argv[n] = "big", lens[n++] = 3;
            argv[n] = (const char *)lim, lens[n++] = 8;
            argv[n] = (const char *)flags, lens[n++] = 4;
            for (int j = k; j < k + 30 && j < per; j++) {
                snprintf(names[j], sizeof(names[j]), "field-%09d", r * per + j);
                argv[n] = names[j], lens[n++] = 16;
                argv[n] = val, lens[n++] = 100;
            }
            sh_put(T0, CMD_HSET, (uint16_t)n, (const unsigned char *const *)argv, lens);
        }
    }
    cr_assert_str_eq(rd(T0, CMD_HLEN, "big", NULL), ":1000000\r\n");
    uint64_t bytes = store_index_bytes(ctx) - before;
    double per_field = (double)bytes / total;
    printf("hash RAM: %" PRIu64 " bytes for %d fields: %.1f B/field (16-byte names, "
           "100-byte values in the log; raw bytes 116/field: %.0f%%)\n",
           bytes, total, per_field, 100.0 * per_field / 116.0);
    cr_assert_lt(per_field, 80.0);
}

/* A read in database 0 for a client speaking protocol proto. */
static const char *rd_proto(int proto, uint16_t op, const char *key, const char *a1, const char *a2)
{
    static buf_t b;
    static int init;
    if (!init) buf_init(&b), init = 1;
    buf_reset(&b);
    const unsigned char *argv[3] = {(const unsigned char *)key, (const unsigned char *)a1,
                                    (const unsigned char *)a2};
    uint32_t lens[3] = {(uint32_t)strlen(key), a1 ? (uint32_t)strlen(a1) : 0,
                        a2 ? (uint32_t)strlen(a2) : 0};
    uint16_t argc = a2 ? 3 : a1 ? 2 : 1;
    unsigned char p[512];
    size_t n = rec_cmd_payload_size(argc, lens);
    cr_assert_leq(n, sizeof(p));
    rec_encode_payload(p, op, argc, argv, lens);
    cr_assert_eq(store_read_proto(ctx, 0, proto, p, n, T0, &b), 0);
    buf_append(&b, "", 1);
    return b.data;
}

/* RESP3: HGETALL is a map, HRANDFIELD WITHVALUES pairs are arrays of 2;
 * RESP2 the flat arrays. */
Test(hashes, resp3_maps_and_pairs)
{
    wr(T0, CMD_HSET, "h", LIM, "#u32:0", "a", "1", NULL);
    cr_assert_str_eq(rd_proto(3, CMD_HGETALL, "h", NULL, NULL), "%1\r\n$1\r\na\r\n$1\r\n1\r\n");
    cr_assert_str_eq(rd_proto(2, CMD_HGETALL, "h", NULL, NULL), "*2\r\n$1\r\na\r\n$1\r\n1\r\n");
    cr_assert_str_eq(rd_proto(3, CMD_HGETALL, "none", NULL, NULL), "%0\r\n");
    cr_assert_str_eq(rd_proto(3, CMD_HRANDFIELD, "h", "-2", "WITHVALUES"),
                     "*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n");
    cr_assert_str_eq(rd_proto(2, CMD_HRANDFIELD, "h", "5", "withvalues"),
                     "*2\r\n$1\r\na\r\n$1\r\n1\r\n");
    cr_assert_str_eq(rd_proto(3, CMD_HRANDFIELD, "h", "5", "withvalues"),
                     "*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n");
}
