/*
 * test_checkpoint.c - unit tests of the store's checkpoints
 * (store/checkpoint.c, common/ckpt.c) with the store harness: every value
 * shape survives a checkpoint; a checkpoint plus the log after it gives the
 * same state and the same replies as replaying the whole log (store_digest
 * and the 160-bit DEBUG DIGEST, WATCH decisions included); a damaged,
 * foreign or out-of-range checkpoint is skipped for an older one or for a
 * full replay; failed writes leave no checkpoint; old ones are pruned; the
 * forked writer of the schedule; DEBUG DIGEST's replies.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt.h"
#include "command.h"
#include "config.h"
#include "io.h"
#include "io_fault.h"
#include "record.h"
#include "store/checkpoint.h"
#include "store/digest.h"
#include "store/core/entry.h"
#include "store/core/pieces.h"
#include "store/store-internal.h"
#include "store_harness.h"

#define T0      1000000
#define OK      "+OK\r\n"
#define ABORTED "*-1\r\n"

#define wr(t, op, db, ...) sh_wr((t), REC_OP_DB((op), (db)), __VA_ARGS__)

static void setup(void)
{
    sh_setup("ckpt", 16, 1234);
}

TestSuite(checkpoint, .init = setup, .fini = sh_teardown);

/* ---- helpers ------------------------------------------------------------ */

static const char *set(int64_t t, int db, const char *key, const char *val, int64_t at)
{
    return sh_put_key(t, REC_OP_DB(CMD_SET, db), key, "bui", val, strlen(val), (uint32_t)0, at);
}

static const char *setrange(int64_t t, int db, const char *key, int64_t off, const char *val)
{
    return sh_put_key(t, REC_OP_DB(CMD_SETRANGE, db), key, "ib", off, val, strlen(val));
}

static const char *setbit(int64_t t, int db, const char *key, int64_t bit, uint32_t on)
{
    return sh_put_key(t, REC_OP_DB(CMD_SETBIT, db), key, "iu", bit, on);
}

/* A fresh context with the harness's config (16 databases). */
static store_ctx_t *fresh(void)
{
    store_ctx_t *c = store_ctx_create(&cfg, 99);
    cr_assert(c);
    return c;
}

static void expect_same_state(store_ctx_t *a, store_ctx_t *b, int64_t now, const char *what)
{
    uint64_t d1, d2;
    unsigned char x1[STORE_DIGEST_BYTES], x2[STORE_DIGEST_BYTES];
    cr_assert_eq(store_digest(a, now, &d1), 0);
    cr_assert_eq(store_digest(b, now, &d2), 0);
    cr_assert_eq(d1, d2, "%s: store_digest", what);
    cr_assert_eq(store_digest160(a, now, x1), 0);
    cr_assert_eq(store_digest160(b, now, x2), 0);
    cr_assert(memcmp(x1, x2, sizeof(x1)) == 0, "%s: digest160", what);
    cr_assert_eq(store_applied(a), store_applied(b), "%s: applied", what);
    cr_assert_eq(store_now(a), store_now(b), "%s: apply clock", what);
    /* Keys expired by the apply clock but not reclaimed yet count until
     * active expiry runs, which happens at other moments live and on
     * replay: compare the counts once it has run on both. */
    while (store_maintain(a, 1000000)) {
    }
    while (store_maintain(b, 1000000)) {
    }
    cr_assert_eq(store_expire_count(a), store_expire_count(b), "%s: expires", what);
    for (int i = 0; i < store_db_count(a); i++) {
        uint64_t k1, e1, k2, e2;
        store_db_stats(a, i, &k1, &e1);
        store_db_stats(b, i, &k2, &e2);
        cr_assert_eq(k1, k2, "%s: db %d keys", what, i);
        cr_assert_eq(e1, e2, "%s: db %d expires", what, i);
    }
}

/* Load the checkpoint at lsn into a fresh context. */
static store_ctx_t *load_at(uint64_t at)
{
    char path[512], err[256];
    ckpt_path(path, sizeof(path), dir, at, 0);
    store_ctx_t *c = fresh();
    cr_assert_eq(store_ckpt_load(c, path, err, sizeof(err)), 0, "load %s: %s", path, err);
    return c;
}

static int file_exists(uint64_t at, int tmp)
{
    char path[512];
    ckpt_path(path, sizeof(path), dir, at, tmp);
    return access(path, F_OK) == 0;
}

/* Every value shape: inline, one extent, piece lists of LOG, ZERO and RAM
 * pieces, TTLs, encodings, several databases, swapped ones. */
static void every_shape(void)
{
    char big[300];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    cr_assert_str_eq(set(T0, 0, "inline", "short", 0), OK);
    cr_assert_str_eq(set(T0, 0, "extent", big, 0), OK);
    cr_assert_str_eq(set(T0, 0, "ttl", big, T0 + 500000), OK);
    wr(T0, CMD_APPEND, 0, "appended", "first-part-longer-than-the-inline-prefix", NULL);
    wr(T0, CMD_APPEND, 0, "appended", "second", NULL);
    setrange(T0, 0, "zeros", 5000, "tail");
    setbit(T0, 0, "bits", 12345, 1);
    setbit(T0, 0, "bits", 7, 1);
    wr(T0, CMD_INCRBYFLOAT, 0, "float", "3.14159265358979323846264338327950288", NULL);
    sh_put_key(T0, REC_OP_DB(CMD_INCRBY, 0), "counter", "i", (int64_t)42);
    for (int i = 0; i < 100; i++) /* many one-byte appends: a compacted list */
        wr(T0, CMD_APPEND, 0, "tiny", "z", NULL);
    set(T0, 3, "in3", big, 0);
    set(T0, 5, "in5", "five", T0 + 900000);
    sh_wr(T0, REC_OP_DB(CMD_SWAPDB, 0), "#u32:3", "#u32:7", NULL);
    /* Collections: a listpack hash (its order is its replies' order), a
     * hashtable one whose long values stay in the log, an intset set, a
     * hashtable set, one with a TTL, one in another database. */
    const char *lim = "#i64:274877907456"; /* 512 entries, 64-byte values */
    wr(T0, CMD_HSET, 0, "hsmall", lim, "#u32:0", "z", "1", "a", "2", "m", "3", NULL);
    wr(T0, CMD_HSET, 0, "hbig", lim, "#u32:0", "f1", big, "f2", "short", NULL);
    wr(T0, CMD_HINCRBYFLOAT, 0, "hbig", lim, "pi", "3.14159265358979323846264338", NULL);
    wr(T0, CMD_SADD, 0, "sint", "#i64:512", "5", "-3", "100", NULL);
    wr(T0, CMD_SADD, 0, "swords", "#i64:512", "pear", "apple", "fig", NULL);
    wr(T0, CMD_HSET, 0, "httl", lim, "#u32:0", "f", big, NULL);
    sh_put_key(T0, REC_OP_DB(CMD_PEXPIREAT, 0), "httl", "iu", (int64_t)T0 + 700000, (uint32_t)0);
    wr(T0, CMD_SADD, 5, "s5", "#i64:512", "x", NULL);
    /* Lists: short elements inline, long ones log extents, one emptied. */
    wr(T0, CMD_LPUSH, 0, "lmix", "#u32:1", "a", big, "", "z", NULL);
    wr(T0, CMD_LPUSH, 0, "lmix", "#u32:0", "head", NULL);
    wr(T0, CMD_LPUSH, 3, "lgone", "#u32:1", "x", NULL);
    wr(T0, CMD_LPOP, 3, "lgone", "#u32:0", "#u32:2", "#i64:-1", NULL);
    /* Sorted sets: a listpack, a skiplist (by the record's limits), one in
     * another database. */
    const char *zlim = "#i64:274877906947"; /* 3 members, 64-byte values */
    wr(T0, CMD_ZADD, 0, "zsmall", zlim, "#u32:2", "2", "b", "-inf", "a", "1.5", "c", NULL);
    wr(T0, CMD_ZADD, 0, "zbig", zlim, "#u32:2", "1", "a", "2", "b", "3", "c", "4", "d", NULL);
    wr(T0, CMD_ZADD, 0, "zbig", zlim, "#u32:258", "0.25", "a", NULL);
    wr(T0, CMD_ZADD, 5, "z5", zlim, "#u32:2", "7", "x", NULL);
}

/* ---- round trips ------------------------------------------------------- */

Test(checkpoint, every_value_shape_round_trips)
{
    every_shape();
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    cr_assert(file_exists(lsn, 0));
    cr_assert(!file_exists(lsn, 1), "the .tmp is renamed");
    store_ctx_t *c = load_at(lsn);
    expect_same_state(ctx, c, T0, "loaded");
    cr_assert_eq(store_index_bytes(ctx), store_index_bytes(c), "the same pieces, the same RAM");
    /* Every value reads back alike, through the same read path. */
    const char *keys[] = {"inline", "extent", "ttl",     "appended", "zeros",
                          "bits",   "float",  "counter", "tiny"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        char want[8192];
        sh_rd(T0, 0, CMD_GET, keys[i], NULL);
        cr_assert_lt(reply_len, sizeof(want));
        memcpy(want, reply, reply_len + 1);
        store_ctx_t *live = ctx;
        ctx = c;
        sh_rd(T0, 0, CMD_GET, keys[i], NULL);
        ctx = live;
        cr_assert_str_eq(reply, want, "GET %s", keys[i]);
    }
    /* Collections read back alike, in the same order, with the same
     * encodings (OBJECT ENCODING is state: replay decides it once). */
    const struct {
        uint16_t op;
        const char *key;
    } colls[] = {{CMD_HGETALL, "hsmall"},
                 {CMD_HGETALL, "hbig"},
                 {CMD_HGETALL, "httl"},
                 {CMD_SMEMBERS, "sint"},
                 {CMD_SMEMBERS, "swords"}};
    for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++) {
        char want[8192];
        sh_rd(T0, 0, colls[i].op, colls[i].key, NULL);
        cr_assert_gt(reply_len, 4, "%s holds something", colls[i].key);
        cr_assert_lt(reply_len, sizeof(want));
        memcpy(want, reply, reply_len + 1);
        store_ctx_t *live = ctx;
        ctx = c;
        sh_rd(T0, 0, colls[i].op, colls[i].key, NULL);
        ctx = live;
        cr_assert_str_eq(reply, want, "%s", colls[i].key);
    }
    const char *zsets[] = {"zsmall", "zbig"};
    for (size_t i = 0; i < 2; i++) {
        char want[2048];
        for (int enc = 0; enc < 2; enc++) {
            if (enc)
                sh_rd(T0, 0, CMD_OBJECT, "encoding", zsets[i], NULL);
            else
                sh_rd(T0, 0, CMD_ZRANGE, zsets[i], "0", "-1", "WITHSCORES", NULL);
            cr_assert_lt(reply_len, sizeof(want));
            memcpy(want, reply, reply_len + 1);
            store_ctx_t *live = ctx;
            ctx = c;
            if (enc)
                sh_rd(T0, 0, CMD_OBJECT, "encoding", zsets[i], NULL);
            else
                sh_rd(T0, 0, CMD_ZRANGE, zsets[i], "0", "-1", "WITHSCORES", NULL);
            ctx = live;
            cr_assert_str_eq(reply, want, "%s", zsets[i]);
        }
    }
    cr_assert_eq(c->live.total, ctx->live.total, "the hash values' extents are counted live");
    store_ctx_destroy(c);
}

Test(checkpoint, empty_state_round_trips)
{
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    store_ctx_t *c = load_at(0);
    expect_same_state(ctx, c, T0, "empty");
    unsigned char d[STORE_DIGEST_BYTES], zero[STORE_DIGEST_BYTES] = {0};
    cr_assert_eq(store_digest160(c, T0, d), 0);
    cr_assert(memcmp(d, zero, sizeof(d)) == 0, "an empty dataset digests to zeros");
    store_ctx_destroy(c);
}

/* Writes after the checkpoint change the loaded state exactly as they
 * change the live one (APPEND and SETRANGE cut the same pieces). */
Test(checkpoint, tail_applies_alike_on_every_shape)
{
    every_shape();
    uint64_t at = lsn;
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    size_t mark = live_replies.len;
    wr(T0 + 1, CMD_APPEND, 0, "appended", "more-after-the-checkpoint", NULL);
    setrange(T0 + 1, 0, "zeros", 10, "middle");
    setrange(T0 + 1, 0, "tiny", 50, "overwrite-inside-the-compacted-chunks");
    setbit(T0 + 1, 0, "bits", 8, 1);
    wr(T0 + 1, CMD_INCRBYFLOAT, 0, "float", "1", NULL);
    wr(T0 + 1, CMD_DEL, 0, "extent", NULL);
    sh_wr(T0 + 1, REC_OP_DB(CMD_SWAPDB, 0), "#u32:7", "#u32:5", NULL);
    store_ctx_t *c = load_at(at);
    buf_t tail;
    buf_init(&tail);
    sh_replay_from(c, at, &tail);
    cr_assert_eq(tail.len, live_replies.len - mark);
    cr_assert(memcmp(tail.data, live_replies.data + mark, tail.len) == 0, "the same replies");
    expect_same_state(ctx, c, T0 + 1, "after the tail");
    cr_assert_eq(store_index_bytes(ctx), store_index_bytes(c));
    buf_free(&tail);
    store_ctx_destroy(c);
}

/* ---- checkpoint + tail == full replay, on a random workload ------------ */

static void xb_hdr(unsigned char h[24], uint64_t wlsn, int64_t wtime, uint32_t nwatch)
{
    cmd_put_i64(h, (int64_t)wlsn);
    cmd_put_i64(h + 8, wtime);
    cmd_put_u32(h + 16, nwatch);
    cmd_put_u32(h + 20, 0);
}

/* A transaction watching `key` in db 0 from (wlsn, wtime), then SET key. */
static const char *watched_set(int64_t t, uint64_t wlsn, int64_t wtime, const char *key,
                               const char *val)
{
    unsigned char h[24], wk[64], p[256];
    xb_hdr(h, wlsn, wtime, 1);
    wk[0] = 0;
    size_t kl = strlen(key);
    memcpy(wk + 1, key, kl);
    sh_args_t a;
    sh_key_args(&a, key, "bui", val, strlen(val), (uint32_t)0, (int64_t)0);
    cr_assert_leq(rec_cmd_payload_size(a.argc, a.lens), sizeof(p));
    size_t pn = rec_encode_payload(p, REC_OP_DB(CMD_SET, 0), a.argc, a.argv, a.lens);
    const unsigned char *argv[3] = {h, wk, p};
    uint32_t lens[3] = {24, (uint32_t)(kl + 1), (uint32_t)pn};
    return sh_put(t, REC_OP_DB(CMD_EXEC, 0), 3, argv, lens);
}

typedef struct point {
    uint64_t lsn;
    size_t reply_off;
} point_t;

Test(checkpoint, checkpoint_plus_tail_equals_full_replay, .timeout = 60)
{
    unsigned seed = getenv("ATTIC_SEED") ? (unsigned)atoi(getenv("ATTIC_SEED")) : 777;
    srandom(seed);
    enum { RECORDS = 3000, CKPTS = 4 };
    point_t ck[CKPTS];
    int nck = 0;
    uint64_t wpoints[32] = {0};
    int64_t wtimes[32] = {T0};
    int nw = 1;
    int64_t t = T0;
    int aborted = 0, ran = 0;
    for (int i = 0; i < RECORDS; i++) {
        t += random() % 30;
        char k[16], v[64];
        snprintf(k, sizeof(k), "k%ld", random() % 40);
        snprintf(v, sizeof(v), "%ld-%s", random(),
                 random() % 2 ? "a-value-longer-than-the-inline-prefix" : "s");
        int db = (int)(random() % 3);
        switch (random() % 12) {
        case 0:
        case 1:
            set(t, db, k, v, random() % 3 ? 0 : t + random() % 400);
            break;
        case 2:
            wr(t, CMD_APPEND, db, k, v, NULL);
            break;
        case 3:
            setrange(t, db, k, random() % 600, v);
            break;
        case 4:
            setbit(t, db, k, random() % 5000, (uint32_t)(random() % 2));
            break;
        case 5:
            wr(t, CMD_DEL, db, k, NULL);
            break;
        case 6:
            sh_put_key(t, REC_OP_DB(CMD_PEXPIREAT, db), k, "iu", t + random() % 300, (uint32_t)0);
            break;
        case 7:
            if (random() % 30 == 0)
                sh_wr(t, REC_OP_DB(CMD_SWAPDB, 0), "#u32:0", "#u32:1", NULL);
            else if (random() % 30 == 0)
                wr(t, CMD_FLUSHDB, db, NULL);
            else
                wr(t, CMD_INCRBYFLOAT, db, "f", "0.5", NULL);
            break;
        default: {
            int p = (int)(random() % nw);
            const char *r = watched_set(t, wpoints[p], wtimes[p], k, v);
            if (!strcmp(r, ABORTED))
                aborted++;
            else
                ran++;
            break;
        }
        }
        if (nw < 32 && random() % 8 == 0) {
            wpoints[nw] = lsn;
            wtimes[nw++] = t;
        }
        if (random() % 200 == 0) /* active expiry live, never on replay */
            while (store_maintain(ctx, 1000)) {
            }
        if (nck < CKPTS && i == (nck + 1) * RECORDS / (CKPTS + 1)) {
            cr_assert_eq(store_ckpt_save(ctx, dir), 0);
            ck[nck].lsn = lsn;
            ck[nck].reply_off = live_replies.len;
            nck++;
        }
    }
    cr_assert_gt(aborted, 20, "seed %u: watch points too rarely dirty", seed);
    cr_assert_gt(ran, 20, "seed %u", seed);
    store_ctx_t *full = sh_replay(fresh(), NULL);
    expect_same_state(ctx, full, t, "full replay");
    for (int i = 0; i < nck; i++) {
        store_ctx_t *c = load_at(ck[i].lsn);
        buf_t tail;
        buf_init(&tail);
        sh_replay_from(c, ck[i].lsn, &tail);
        cr_assert_eq(tail.len, live_replies.len - ck[i].reply_off, "seed %u ckpt %d", seed, i);
        cr_assert(memcmp(tail.data, live_replies.data + ck[i].reply_off, tail.len) == 0,
                  "seed %u: checkpoint %d + tail replied otherwise", seed, i);
        expect_same_state(full, c, t, "checkpoint + tail");
        buf_free(&tail);
        store_ctx_destroy(c);
    }
    store_ctx_destroy(full);
}

/* The WATCH table travels: a change before the checkpoint, watched from a
 * point before that change, still aborts an EXEC after the checkpoint. */
Test(checkpoint, watch_table_is_in_the_checkpoint)
{
    uint64_t before = lsn;
    set(T0, 0, "w", "v1", 0);
    uint64_t after = lsn;
    for (int i = 0; i < 10; i++)
        set(T0, 0, "other", "x", 0);
    uint64_t at = lsn;
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    size_t mark = live_replies.len;
    cr_assert_str_eq(watched_set(T0, before, T0, "w", "v2"), ABORTED, "changed since the watch");
    cr_assert_str_eq(watched_set(T0, after, T0, "w", "v3"), "*1\r\n+OK\r\n");
    store_ctx_t *c = load_at(at);
    buf_t tail;
    buf_init(&tail);
    sh_replay_from(c, at, &tail);
    cr_assert_eq(tail.len, live_replies.len - mark);
    cr_assert(memcmp(tail.data, live_replies.data + mark, tail.len) == 0,
              "the restored table judges the watches alike");
    expect_same_state(ctx, c, T0, "watch");
    buf_free(&tail);
    store_ctx_destroy(c);
}

/* ---- choosing the checkpoint at start ----------------------------------- */

/* Two checkpoints (at *older and *newer) with writes between and after. */
static void two_checkpoints(uint64_t *older, uint64_t *newer)
{
    for (int i = 0; i < 50; i++) {
        char k[16];
        snprintf(k, sizeof(k), "a%d", i);
        set(T0, i % 3, k, "a-value-longer-than-the-inline-prefix", 0);
    }
    *older = lsn;
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    for (int i = 0; i < 50; i++) {
        char k[16];
        snprintf(k, sizeof(k), "b%d", i);
        wr(T0, CMD_APPEND, 0, k, "appended-bytes", NULL);
    }
    *newer = lsn;
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    set(T0, 0, "after", "both", 0);
}

/* restore + tail gives the live state; returns where replay started. */
static uint64_t restore_and_check(const config_t *c, uint64_t max_lsn)
{
    uint64_t from = UINT64_MAX;
    store_ctx_t *r = store_ckpt_restore(c, 5, 0, max_lsn, &from);
    cr_assert(r);
    cr_assert_eq(store_applied(r), from);
    sh_replay_from(r, from, NULL);
    expect_same_state(ctx, r, T0, "restored");
    store_ctx_destroy(r);
    return from;
}

static void damage(uint64_t at, off_t off, int truncate_to)
{
    char path[512];
    ckpt_path(path, sizeof(path), dir, at, 0);
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0);
    if (truncate_to >= 0) {
        cr_assert_eq(ftruncate(fd, truncate_to), 0);
    } else {
        struct stat st;
        fstat(fd, &st);
        if (off < 0) off += st.st_size;
        unsigned char b;
        cr_assert_eq(pread(fd, &b, 1, off), 1);
        b ^= 0x40;
        cr_assert_eq(pwrite(fd, &b, 1, off), 1);
    }
    close(fd);
}

Test(checkpoint, restore_uses_the_newest)
{
    uint64_t older, newer;
    two_checkpoints(&older, &newer);
    cr_assert_eq(restore_and_check(&cfg, lsn), newer);
}

Test(checkpoint, damaged_newest_falls_back_to_the_older)
{
    uint64_t older, newer;
    two_checkpoints(&older, &newer);
    damage(newer, 200, -1); /* a byte inside the first block */
    cr_assert_eq(restore_and_check(&cfg, lsn), older);
    char err[256];
    ckpt_path(err, sizeof(err), dir, newer, 0);
    cr_assert_neq(ckpt_verify(err, 0, NULL, NULL, err, sizeof(err)), 0);
    cr_assert(strstr(err, "CRC"), "%s", err);
}

/* The size of the checkpoint file at `at`. */
static off_t ckpt_size(uint64_t at)
{
    char path[512];
    ckpt_path(path, sizeof(path), dir, at, 0);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    return st.st_size;
}

Test(checkpoint, truncated_newest_falls_back_to_the_older)
{
    uint64_t older, newer;
    two_checkpoints(&older, &newer);
    damage(newer, 0, (int)ckpt_size(newer) - 1);
    cr_assert_eq(restore_and_check(&cfg, lsn), older);
}

Test(checkpoint, damaged_trailer_or_header_is_refused)
{
    uint64_t older, newer;
    two_checkpoints(&older, &newer);
    damage(newer, -3, -1); /* the trailer's CRC */
    damage(older, 30, -1); /* the header's LSN */
    cr_assert_eq(restore_and_check(&cfg, lsn), 0, "both bad: the whole log");
}

Test(checkpoint, checkpoint_beyond_the_log_is_skipped)
{
    uint64_t older, newer;
    two_checkpoints(&older, &newer);
    /* A log cut below the newest (atticdb-check --cut): that state never
     * happened as far as the log knows. The tail is then shorter too. */
    uint64_t from = UINT64_MAX;
    store_ctx_t *r = store_ckpt_restore(&cfg, 5, 0, newer - 1, &from);
    cr_assert_eq(from, older);
    store_ctx_destroy(r);
}

Test(checkpoint, other_segment_size_or_databases_is_skipped)
{
    uint64_t older, newer;
    two_checkpoints(&older, &newer);
    config_t other = cfg;
    other.segment_size = cfg.segment_size * 2;
    uint64_t from = UINT64_MAX;
    store_ctx_t *r = store_ckpt_restore(&other, 5, 0, lsn, &from);
    cr_assert_eq(from, 0, "no checkpoint of these segments");
    store_ctx_destroy(r);
    other = cfg;
    other.databases = 8;
    r = store_ckpt_restore(&other, 5, 0, lsn, &from);
    cr_assert_eq(from, 0, "written with 16 databases");
    store_ctx_destroy(r);
}

Test(checkpoint, verify_counts_blocks_and_items)
{
    every_shape();
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    char path[512], err[256];
    ckpt_path(path, sizeof(path), dir, lsn, 0);
    ckpt_info_t info;
    uint64_t items[4];
    cr_assert_eq(ckpt_verify(path, cfg.segment_size, &info, items, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(info.lsn, lsn);
    cr_assert_eq(info.keys, store_key_count(ctx));
    cr_assert_eq(info.ndb, 16);
    cr_assert_eq(items[CKPT_BLK_DB], 16);
    cr_assert_eq(items[CKPT_BLK_ENTRIES], store_key_count(ctx));
    cr_assert(info.flags & CKPT_F_WATCH, "SWAPDB made a WATCH table");
    cr_assert_gt(items[CKPT_BLK_WATCH], 0);
}

/* ---- failures while writing -------------------------------------------- */

static void expect_failed_save(const char *fault)
{
    every_shape();
    cr_assert_eq(io_fault_install(fault, NULL, 1), 1, "%s", fault);
    cr_assert_eq(store_ckpt_save(ctx, dir), -1, "%s fails the checkpoint", fault);
    cr_assert(!file_exists(lsn, 0), "%s: no .ckpt", fault);
    cr_assert(!file_exists(lsn, 1), "%s: no .tmp left", fault);
    /* Abandoned, and the next try works (a fault hits once). */
    cr_assert_eq(store_ckpt_save(ctx, dir), 0, "%s: retried", fault);
    store_ctx_t *c = load_at(lsn);
    expect_same_state(ctx, c, T0, fault);
    store_ctx_destroy(c);
    io_set(NULL);
}

Test(checkpoint, enospc_on_write_leaves_nothing)
{
    expect_failed_save("pwrite:1:ENOSPC");
}

Test(checkpoint, eio_on_a_later_write_leaves_nothing)
{
    expect_failed_save("pwrite:2:EIO");
}

Test(checkpoint, eio_on_fdatasync_leaves_nothing)
{
    expect_failed_save("fdatasync:1:EIO");
}

Test(checkpoint, eio_on_rename_leaves_nothing)
{
    expect_failed_save("rename:1:EIO");
}

Test(checkpoint, failed_open_leaves_nothing)
{
    expect_failed_save("open:1:ENOSPC");
}

/* A failed directory fsync: the file is complete (it verifies), but the
 * writer reports failure so nothing older is removed on its strength. */
Test(checkpoint, failed_dir_fsync_is_reported)
{
    every_shape();
    cr_assert_eq(io_fault_install("fsync:1:EIO", NULL, 1), 1);
    cr_assert_eq(store_ckpt_save(ctx, dir), -1);
    io_set(NULL);
    store_ctx_t *c = load_at(lsn);
    expect_same_state(ctx, c, T0, "complete despite the fsync error");
    store_ctx_destroy(c);
}

/* ---- pruning and the schedule ------------------------------------------ */

/* Poll until the running child is reaped. */
static void wait_child(store_ckpt_sched_t *s)
{
    while (s->child) {
        usleep(1000);
        store_ckpt_poll(s, ctx);
    }
}

Test(checkpoint, prune_keeps_the_newest_two_and_removes_tmp)
{
    uint64_t at[3];
    for (int i = 0; i < 3; i++) {
        set(T0, 0, "k", "a-value-longer-than-the-inline-prefix", 0);
        at[i] = lsn;
        cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    }
    char path[512];
    ckpt_path(path, sizeof(path), dir, 12345, 1);
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(store_ckpt_prune(dir, STORE_CKPT_KEEP), 0);
    cr_assert(!file_exists(at[0], 0));
    cr_assert(file_exists(at[1], 0));
    cr_assert(file_exists(at[2], 0));
    cr_assert(!file_exists(12345, 1), "a stale .tmp is removed");
}

/* A child killed between its commit and its prune leaves three: the
 * store that loads the newest removes the extra one; one that had to fall
 * back to an older checkpoint removes nothing. */
Test(checkpoint, restore_from_the_newest_prunes_what_a_killed_child_left)
{
    uint64_t at[3];
    for (int i = 0; i < 3; i++) {
        set(T0, 0, "k", "a-value-longer-than-the-inline-prefix", 0);
        at[i] = lsn;
        cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    }
    damage(at[2], 200, -1);
    uint64_t from = UINT64_MAX;
    store_ctx_t *r = store_ckpt_restore(&cfg, 5, 0, lsn, &from);
    cr_assert(r);
    cr_assert_eq(from, at[1]);
    store_ctx_destroy(r);
    for (int i = 0; i < 3; i++)
        cr_assert(file_exists(at[i], 0), "a fall-back removes nothing (%d)", i);

    cr_assert_eq(store_ckpt_save(ctx, dir), 0); /* at[2] again, good this time */
    r = store_ckpt_restore(&cfg, 5, 0, lsn, &from);
    cr_assert(r);
    cr_assert_eq(from, at[2]);
    store_ctx_destroy(r);
    cr_assert(!file_exists(at[0], 0), "the oldest of three is removed");
    cr_assert(file_exists(at[1], 0));
    cr_assert(file_exists(at[2], 0));
}

Test(checkpoint, schedule_forks_a_writer_and_writes_at_shutdown)
{
    config_t c = cfg;
    c.checkpoint_bytes = 4096;
    store_ckpt_sched_t s;
    store_ckpt_sched_init(&s, &c, 0);
    store_ckpt_poll(&s, ctx);
    cr_assert_eq(s.child, 0, "nothing applied: nothing to write");
    for (int i = 0; s.child == 0 && i < 1000; i++) {
        char k[16];
        snprintf(k, sizeof(k), "k%d", i);
        set(T0, 0, k, "a-value-longer-than-the-inline-prefix", 0);
        store_ckpt_poll(&s, ctx);
    }
    cr_assert_neq(s.child, 0, "a child writes once checkpoint-bytes were applied");
    uint64_t first = s.child_lsn;
    set(T0, 0, "later", "applied while the child writes", 0);
    store_ckpt_finish(&s, ctx, 1);
    cr_assert_eq(s.child, 0);
    cr_assert_eq(s.written, 2, "the periodic one and the shutdown one");
    cr_assert_eq(s.failed, 0);
    cr_assert(file_exists(first, 0));
    cr_assert(file_exists(lsn, 0));
    store_ctx_t *r = load_at(lsn);
    expect_same_state(ctx, r, T0, "written by the children");
    store_ctx_destroy(r);
}

Test(checkpoint, failed_child_is_abandoned_and_retried)
{
    config_t c = cfg;
    c.checkpoint_bytes = 1;
    cr_assert_eq(io_fault_install("rename:1:EIO", NULL, 1), 1);
    store_ckpt_sched_t s;
    store_ckpt_sched_init(&s, &c, 0);
    set(T0, 0, "k", "v", 0);
    store_ckpt_poll(&s, ctx);
    cr_assert_neq(s.child, 0);
    uint64_t first = s.child_lsn;
    wait_child(&s);
    cr_assert_eq(s.failed, 1);
    cr_assert_eq(s.written, 0);
    cr_assert(!file_exists(first, 0));
    cr_assert(!file_exists(first, 1));
    set(T0, 0, "k", "w", 0);
    store_ckpt_poll(&s, ctx); /* the counts are shared: the next rename works */
    cr_assert_neq(s.child, 0, "retried after another checkpoint-bytes");
    wait_child(&s);
    cr_assert_eq(s.written, 1);
    cr_assert(file_exists(lsn, 0));
    io_set(NULL);
}

Test(checkpoint, killed_child_leaves_the_older_checkpoints)
{
    config_t c = cfg;
    c.checkpoint_bytes = 1;
    uint64_t older, newer;
    two_checkpoints(&older, &newer);
    cr_assert_eq(io_fault_install("ckptwritten:1:KILL,ckptrenamed:1:KILL", NULL, 1), 2);
    store_ckpt_sched_t s;
    store_ckpt_sched_init(&s, &c, newer);
    store_ckpt_poll(&s, ctx);
    cr_assert_neq(s.child, 0);
    wait_child(&s); /* killed before its rename */
    cr_assert_eq(s.failed, 1);
    cr_assert(!file_exists(lsn, 0));
    cr_assert(file_exists(lsn, 1), "the .tmp stays until the next checkpoint prunes it");
    set(T0, 0, "again", "x", 0);
    store_ckpt_poll(&s, ctx);
    cr_assert_neq(s.child, 0);
    wait_child(&s); /* killed after its rename, before the dir fsync */
    cr_assert_eq(s.failed, 2);
    cr_assert(file_exists(lsn, 0), "renamed: a complete checkpoint");
    cr_assert(file_exists(older, 0), "nothing pruned by a child that did not finish");
    cr_assert_eq(restore_and_check(&cfg, lsn), lsn);
    io_set(NULL);
}

/* ---- DEBUG ---------------------------------------------------------------- */

Test(checkpoint, debug_digest_replies)
{
    cr_assert_str_eq(sh_rd(T0, 0, CMD_DEBUG, "digest", NULL),
                     "+0000000000000000000000000000000000000000\r\n");
    set(T0, 0, "a", "1", 0);
    const char *r = sh_rd(T0, 0, CMD_DEBUG, "DIGEST", NULL);
    cr_assert_eq(reply_len, 43);
    cr_assert_neq(strcmp(r, "+0000000000000000000000000000000000000000\r\n"), 0);
    char d1[64];
    strcpy(d1, r);
    set(T0, 0, "b", "2", 0);
    cr_assert_neq(strcmp(sh_rd(T0, 0, CMD_DEBUG, "digest", NULL), d1), 0);
    wr(T0, CMD_DEL, 0, "b", NULL);
    cr_assert_str_eq(sh_rd(T0, 0, CMD_DEBUG, "digest", NULL), d1, "the same data, the same digest");
    r = sh_rd(T0, 0, CMD_DEBUG, "digest-value", "a", "missing", NULL);
    cr_assert_eq(strncmp(r, "*2\r\n+", 5), 0, "%s", r);
    cr_assert(strstr(r, "+0000000000000000000000000000000000000000\r\n"), "a missing key: zeros");
    set(T0, 4, "a", "1", 0);
    char v[128];
    strcpy(v, sh_rd(T0, 0, CMD_DEBUG, "digest-value", "a", NULL));
    cr_assert_str_eq(sh_rd(T0, 4, CMD_DEBUG, "digest-value", "a", NULL), v,
                     "the value only: the same in another database");
    cr_assert_str_eq(sh_rd(T0, 0, CMD_DEBUG, "digest-value", NULL), "*0\r\n");
    cr_assert_str_eq(sh_rd(T0, 0, CMD_DEBUG, "sleep", "0", NULL),
                     "-ERR unknown subcommand or wrong number of arguments for 'sleep'. Try "
                     "DEBUG HELP.\r\n");
    cr_assert_str_eq(sh_rd(T0, 0, CMD_DEBUG, "digest", "x", NULL),
                     "-ERR unknown subcommand or wrong number of arguments for 'digest'. Try "
                     "DEBUG HELP.\r\n");
    cr_assert_eq(strncmp(sh_rd(T0, 0, CMD_DEBUG, "help", NULL), "*15\r\n", 4), 0);
}

Test(checkpoint, digest_hides_keys_expired_by_the_clock)
{
    set(T0, 0, "gone", "v", T0 + 10);
    unsigned char d[STORE_DIGEST_BYTES], zero[STORE_DIGEST_BYTES] = {0};
    cr_assert_eq(store_digest160(ctx, T0 + 10, d), 0);
    cr_assert(memcmp(d, zero, sizeof(d)) == 0);
    cr_assert_eq(store_digest160(ctx, T0, d), 0);
    cr_assert(memcmp(d, zero, sizeof(d)) != 0);
}

/* ---- files that verify but do not make sense ---------------------------- */

/* A checkpoint at `at` whose database 0 holds one entry with these bytes
 * after its 16-byte header (key "k", no inline bytes), then `items` ACCESS
 * items of acc's bytes (none: no block), with these header flags. */
static void write_one_key_checkpoint(uint64_t at, uint32_t flags, uint8_t vkind, const void *body,
                                     size_t n, const void *acc, size_t accn, uint32_t items)
{
    ckpt_info_t info = {.segment_size = cfg.segment_size,
                        .lsn = at,
                        .now = T0,
                        .keys = 1,
                        .ndb = 16,
                        .flags = flags};
    ckpt_writer_t w;
    cr_assert_eq(ckpt_writer_open(&w, dir, &info), 0);
    for (uint32_t i = 0; i < 16; i++) {
        unsigned char d[16] = {0};
        uint64_t keys = i == 0;
        memcpy(d, &i, 4);
        memcpy(d + 4, &i, 4);
        memcpy(d + 8, &keys, 8);
        ckpt_put(&w, CKPT_BLK_DB, d, sizeof(d));
        cr_assert_eq(ckpt_item_done(&w), 0);
        cr_assert_eq(ckpt_flush_block(&w), 0);
        if (i) continue;
        unsigned char h[16] = {1, vkind, 0, 0, 1, 0, 0, 0};
        ckpt_put(&w, CKPT_BLK_ENTRIES, h, sizeof(h));
        ckpt_put(&w, CKPT_BLK_ENTRIES, "k", 1);
        ckpt_put(&w, CKPT_BLK_ENTRIES, body, n);
        cr_assert_eq(ckpt_item_done(&w), 0);
    }
    if (items) {
        ckpt_put(&w, CKPT_BLK_ACCESS, acc, accn);
        for (uint32_t i = 0; i < items; i++)
            cr_assert_eq(ckpt_item_done(&w), 0);
    }
    cr_assert_eq(ckpt_writer_commit(&w), 0);
}

static void write_odd_checkpoint(uint64_t at, uint8_t vkind, const void *body, size_t n)
{
    write_one_key_checkpoint(at, 0, vkind, body, n, NULL, 0, 0);
}

static void expect_refused(uint64_t at, const char *why)
{
    char path[512], err[256];
    ckpt_path(path, sizeof(path), dir, at, 0);
    cr_assert_eq(ckpt_verify(path, 0, NULL, NULL, err, sizeof(err)), 0, "its CRCs are right");
    store_ctx_t *c = fresh();
    cr_assert_eq(store_ckpt_load(c, path, err, sizeof(err)), -1, "%s", why);
    cr_assert(strstr(err, "malformed"), "%s: %s", why, err);
    store_ctx_destroy(c);
}

Test(checkpoint, references_beyond_the_checkpoint_are_refused)
{
    unsigned char b[64];
    uint64_t lsn0 = 100;
    uint32_t len = 200;
    memcpy(b, &lsn0, 8);
    memcpy(b + 8, &len, 4);
    write_odd_checkpoint(4096, VK_EXTENT, b, 12);
    store_ctx_destroy(load_at(4096)); /* the control: within the log below it */
    lsn0 = 4000;                      /* ends past 4096 */
    memcpy(b, &lsn0, 8);
    write_odd_checkpoint(4096, VK_EXTENT, b, 12);
    expect_refused(4096, "an extent ending past the checkpoint");
    lsn0 = 5000; /* starts past it */
    memcpy(b, &lsn0, 8);
    write_odd_checkpoint(4096, VK_EXTENT, b, 12);
    expect_refused(4096, "an extent starting past the checkpoint");
    /* A list of one LOG piece past it. */
    uint32_t n = 1, cap = 4;
    uint64_t endw = 50 | ((uint64_t)PIECE_LOG << PIECE_KIND_SHIFT), where = 20000;
    memcpy(b, &n, 4);
    memcpy(b + 4, &cap, 4);
    memcpy(b + 8, &endw, 8);
    memcpy(b + 16, &where, 8);
    write_odd_checkpoint(16384, VK_LIST, b, 24);
    expect_refused(16384, "a LOG piece past the checkpoint");
    /* A capacity no list has. */
    where = 100;
    cap = 0xF0000000u;
    memcpy(b + 4, &cap, 4);
    memcpy(b + 16, &where, 8);
    write_odd_checkpoint(20480, VK_LIST, b, 24);
    expect_refused(20480, "a capacity of billions of pieces");
}

/* ---- access data (D49) -------------------------------------------------- */

/* The 24 access bits of key in database db of c (fails when absent). */
static uint32_t access_of(store_ctx_t *c, int db, const char *key)
{
    idx_entry_t **slot = idx_find(&c->dbs[db]->ix, key, (uint32_t)strlen(key));
    cr_assert(slot, "%s is in database %d", key, db);
    return idx_access(*slot);
}

/* OBJECT `what` of key in database 0 of c at now, as a reply. */
static const char *object_of(store_ctx_t *c, int64_t now, const char *what, const char *key,
                             char *out, size_t outlen)
{
    store_ctx_t *live = ctx;
    ctx = c;
    sh_rd(now, 0, CMD_OBJECT, what, key, NULL);
    ctx = live;
    cr_assert_lt(reply_len, outlen);
    memcpy(out, reply, reply_len + 1);
    return out;
}

/* Keys read at different times (LRU) or different numbers of times (LFU)
 * load with the access data they had: the same 24 bits, the same OBJECT
 * IDLETIME / FREQ. */
static void access_round_trips(int policy)
{
    ctx->access.policy = policy;
    for (int i = 0; i < 40; i++) {
        char k[16];
        snprintf(k, sizeof(k), "k%d", i);
        set(T0, i % 3, k, i % 2 ? "a-value-longer-than-the-inline-prefix" : "v", 0);
    }
    wr(T0, CMD_HSET, 0, "h", "#i64:274877907456", "#u32:0", "f", "v", NULL);
    /* k0..k9 of database 0 (every third) read again, later and more. */
    for (int i = 0; i < 30; i += 3) {
        char k[16];
        snprintf(k, sizeof(k), "k%d", i);
        for (int n = 0; n <= i * 10; n++)
            sh_rd(T0 + 1000 * (60 + i), 0, CMD_GET, k, NULL);
    }
    int64_t later = T0 + 1000 * 600;
    char want[64], got[64];
    object_of(ctx, later, st_policy_lfu(policy) ? "freq" : "idletime", "k27", want, sizeof(want));
    object_of(ctx, later, st_policy_lfu(policy) ? "freq" : "idletime", "k0", got, sizeof(got));
    cr_assert_str_neq(want, got, "the test reads the keys unevenly");
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    store_ctx_t *c = load_at(lsn);
    c->access.policy = policy;
    expect_same_state(ctx, c, T0, "loaded");
    for (int i = 0; i < 40; i++) {
        char k[16];
        snprintf(k, sizeof(k), "k%d", i);
        cr_assert_eq(access_of(c, i % 3, k), access_of(ctx, i % 3, k), "%s's access data", k);
    }
    cr_assert_eq(access_of(c, 0, "h"), access_of(ctx, 0, "h"));
    const char *keys[] = {"k0", "k9", "k27", "h"};
    for (int i = 0; i < 4; i++) {
        const char *what = st_policy_lfu(policy) ? "freq" : "idletime";
        object_of(ctx, later, what, keys[i], want, sizeof(want));
        object_of(c, later, what, keys[i], got, sizeof(got));
        cr_assert_str_eq(got, want, "OBJECT %s %s", what, keys[i]);
    }
    store_ctx_destroy(c);
}

Test(checkpoint, lru_access_data_round_trips)
{
    access_round_trips(CONFIG_POLICY_ALLKEYS_LRU);
}

Test(checkpoint, lfu_access_data_round_trips)
{
    access_round_trips(CONFIG_POLICY_ALLKEYS_LFU);
}

Test(checkpoint, access_data_is_one_item_per_key_after_the_databases)
{
    every_shape();
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    char path[512];
    ckpt_path(path, sizeof(path), dir, lsn, 0);
    ckpt_reader_t r;
    cr_assert_eq(ckpt_reader_open(&r, path, 0), 0);
    cr_assert(r.info.flags & CKPT_F_ACCESS);
    uint32_t type, items, last = 0;
    const unsigned char *p;
    uint64_t n, access = 0;
    int k;
    while ((k = ckpt_reader_next(&r, &type, &items, &p, &n)) == 1) {
        if (type == CKPT_BLK_ACCESS) access += items;
        cr_assert(last != CKPT_BLK_ACCESS || type == CKPT_BLK_ACCESS, "the access data is last");
        last = type;
    }
    cr_assert_eq(k, 0, "%s", r.err);
    ckpt_reader_close(&r);
    cr_assert_eq(access, store_key_count(ctx));
}

/* A file without access data (written before D49) loads; its keys' data
 * is fresh, as of the checkpoint's apply clock. */
Test(checkpoint, a_checkpoint_without_access_data_loads_fresh)
{
    unsigned char body[1] = {0};
    write_odd_checkpoint(4096, VK_INLINE, body, 0);
    store_ctx_t *c = load_at(4096);
    char got[64];
    object_of(c, T0 + 7000, "idletime", "k", got, sizeof(got));
    cr_assert_str_eq(got, ":7\r\n", "idle since the checkpoint's clock");
    store_ctx_destroy(c);
}

/* A checkpoint holding key "k" (inline, empty) in database 0 and `items`
 * ACCESS items of these bytes (none: no block), CKPT_F_ACCESS set. */
static void write_access_checkpoint(uint64_t at, const void *acc, size_t n, uint32_t items)
{
    write_one_key_checkpoint(at, CKPT_F_ACCESS, VK_INLINE, "", 0, acc, n, items);
}

/* One ACCESS item: database, key length, bits, key. */
static size_t access_item(unsigned char *b, uint32_t db, const char *key, uint32_t bits)
{
    uint32_t klen = (uint32_t)strlen(key);
    memcpy(b, &db, 4);
    memcpy(b + 4, &klen, 4);
    memcpy(b + 8, &bits, 4);
    memcpy(b + 12, key, klen);
    return 12 + klen;
}

Test(checkpoint, malformed_access_data_is_refused)
{
    unsigned char b[64];
    size_t n = access_item(b, 0, "k", 1234);
    write_access_checkpoint(4096, b, n, 1);
    store_ctx_t *c = load_at(4096); /* the control */
    cr_assert_eq(access_of(c, 0, "k"), 1234);
    store_ctx_destroy(c);

    write_access_checkpoint(4096, b, n - 1, 1);
    expect_refused(4096, "an item cut short");
    write_access_checkpoint(4096, b, 8, 1);
    expect_refused(4096, "an item without its bits");
    n = access_item(b, 0, "k", 1234);
    b[n] = 'x';
    write_access_checkpoint(4096, b, n + 1, 1);
    expect_refused(4096, "bytes after the last item");
    write_access_checkpoint(4096, b, access_item(b, 0, "other", 1), 1);
    expect_refused(4096, "a key the checkpoint does not hold");
    write_access_checkpoint(4096, b, access_item(b, 1, "k", 1), 1);
    expect_refused(4096, "the key in another database");
    write_access_checkpoint(4096, b, access_item(b, 16, "k", 1), 1);
    expect_refused(4096, "a database beyond the last");
    write_access_checkpoint(4096, b, access_item(b, 0, "k", 1u << 24), 1);
    expect_refused(4096, "more than 24 bits");
    write_access_checkpoint(4096, b, 0, 0);
    expect_refused(4096, "the flag without the blocks");
    n = access_item(b, 0, "k", 1);
    n += access_item(b + n, 0, "k", 2);
    write_access_checkpoint(4096, b, n, 2);
    expect_refused(4096, "more items than keys");
}

/* The access blocks are the file's last: damaged or cut there, the file is
 * refused by its CRCs as any block is, and the older one is used. */
Test(checkpoint, damaged_or_truncated_access_block_falls_back_to_the_older)
{
    uint64_t older, newer;
    two_checkpoints(&older, &newer);
    damage(newer, ckpt_size(newer) - CKPT_TRAILER - 3, -1); /* in the last access item */
    cr_assert_eq(restore_and_check(&cfg, lsn), older);
    char path[512], err[256];
    ckpt_path(path, sizeof(path), dir, newer, 0);
    cr_assert_neq(ckpt_verify(path, 0, NULL, NULL, err, sizeof(err)), 0);
    cr_assert(strstr(err, "CRC"), "%s", err);

    two_checkpoints(&older, &newer);
    damage(newer, 0, (int)(ckpt_size(newer) - CKPT_TRAILER - 5)); /* cut inside the access block */
    cr_assert_eq(restore_and_check(&cfg, lsn), older);
}
