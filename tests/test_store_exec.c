/*
 * test_store_exec.c - unit tests of transactions in the store (store/route.c, store/core/watch.c):
 * CMD_EXEC records with writes, reads and literals, values stored as extents
 * inside a transaction, the WATCH decisions (changes, flushes, swaps,
 * expiry, collisions), their equality between live apply and replay, and
 * malformed records. Records are written into real segment files at their
 * LSN (the miniature logger of store_harness.c) and applied with store_apply.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "command.h"
#include "config.h"
#include "record.h"
#include "store/core/watch.h"
#include "store/store-internal.h"
#include "store_harness.h"

/* ---- records (the miniature logger is store_harness.c) ------------------- */

static unsigned watch_bits;  /* 0 = the default table */
static int maintain_between; /* run store_maintain before each record (live only) */

static void maintain_if_asked(void)
{
    if (maintain_between)
        while (store_maintain(ctx, 1000)) {
        }
}

/* A plain write with string arguments (NULL-terminated) in database db;
 * a read in database db. */
#define wr(t, op, db, ...)   sh_wr((t), REC_OP_DB((op), (db)), __VA_ARGS__)
#define rd(now, db, op, ...) sh_rd((now), (unsigned)(db), (op), __VA_ARGS__)

static const char *wr_set(int64_t t, int db, const char *key, const char *val, int64_t at)
{
    return sh_put_key(t, REC_OP_DB(CMD_SET, db), key, "bui", val, strlen(val), (uint32_t)0, at);
}

/* ---- building CMD_EXEC records ---------------------------------------- */

#define XMAX 512

typedef struct xb {
    unsigned char hdr[24];
    unsigned char *own[XMAX];
    const unsigned char *argv[XMAX];
    uint32_t lens[XMAX];
    int argc, nwatch;
} xb_t;

static void xb_begin(xb_t *x, uint64_t watch_lsn, int64_t watch_time)
{
    memset(x, 0, sizeof(*x));
    cmd_put_i64(x->hdr, (int64_t)watch_lsn);
    cmd_put_i64(x->hdr + 8, watch_time);
    x->argv[0] = x->hdr;
    x->lens[0] = 24;
    x->argc = 1;
}

static void xb_arg(xb_t *x, const void *p, size_t n)
{
    cr_assert_lt(x->argc, XMAX);
    unsigned char *c = malloc(n ? n : 1);
    memcpy(c, p, n);
    x->own[x->argc] = c;
    x->argv[x->argc] = c;
    x->lens[x->argc] = (uint32_t)n;
    x->argc++;
}

/* A watched key (before any command). */
static void xb_watch(xb_t *x, int db, const char *key)
{
    cr_assert_eq(x->argc, 1 + x->nwatch);
    unsigned char k[256];
    k[0] = (unsigned char)db;
    memcpy(k + 1, key, strlen(key));
    xb_arg(x, k, 1 + strlen(key));
    cmd_put_u32(x->hdr + 16, (uint32_t)++x->nwatch);
}

/* A watched key with its own watch point (flags = 1). */
static void xb_watch_at(xb_t *x, int db, uint64_t wlsn, int64_t wtime, const char *key)
{
    cr_assert_eq(x->argc, 1 + x->nwatch);
    unsigned char k[256];
    k[0] = (unsigned char)db;
    cmd_put_i64(k + 1, (int64_t)wlsn);
    cmd_put_i64(k + 9, wtime);
    memcpy(k + 17, key, strlen(key));
    xb_arg(x, k, 17 + strlen(key));
    cmd_put_u32(x->hdr + 16, (uint32_t)++x->nwatch);
    cmd_put_u32(x->hdr + 20, 1);
}

static void xb_cmdv(xb_t *x, uint16_t op, int db, uint16_t argc, const unsigned char *const *argv,
                    const uint32_t *lens)
{
    size_t n = rec_cmd_payload_size(argc, lens);
    unsigned char *p = malloc(n);
    rec_encode_payload(p, REC_OP_DB(op, db), argc, argv, lens);
    xb_arg(x, p, n);
    free(p);
}

/* A nested command with string arguments (NULL-terminated). */
static void xb_cmd(xb_t *x, uint16_t op, int db, ...)
{
    sh_args_t sa;
    va_list ap;
    va_start(ap, db);
    sh_collect(&sa, ap);
    va_end(ap);
    xb_cmdv(x, op, db, sa.argc, sa.argv, sa.lens);
}

static void xb_set(xb_t *x, int db, const char *key, const char *val, int64_t at)
{
    sh_args_t a;
    sh_key_args(&a, key, "bui", val, strlen(val), (uint32_t)0, at);
    xb_cmdv(x, CMD_SET, db, a.argc, a.argv, a.lens);
}

static void xb_incrby(xb_t *x, int db, const char *key, int64_t delta)
{
    sh_args_t a;
    sh_key_args(&a, key, "i", delta);
    xb_cmdv(x, CMD_INCRBY, db, a.argc, a.argv, a.lens);
}

static void xb_literal(xb_t *x, const char *resp)
{
    const unsigned char *argv[1] = {(const unsigned char *)resp};
    uint32_t lens[1] = {(uint32_t)strlen(resp)};
    xb_cmdv(x, CMD_LITERAL, 0, 1, argv, lens);
}

/* Write and apply the transaction at time t; returns its reply. */
static const char *xb_put(xb_t *x, int64_t t)
{
    const char *r = sh_put(t, REC_OP_DB(CMD_EXEC, 0), (uint16_t)x->argc, x->argv, x->lens);
    for (int i = 0; i < x->argc; i++)
        free(x->own[i]);
    return r;
}

/* ---- setup ---------------------------------------------------------------- */

static store_ctx_t *new_ctx(void)
{
    store_ctx_t *c = store_ctx_create(&cfg, 1234);
    cr_assert(c);
    if (watch_bits) st_watch_configure(c, watch_bits);
    return c;
}

static void setup(void)
{
    watch_bits = 0;
    maintain_between = 0;
    sh_setup("exec", 16, 1234);
    sh_before_put = maintain_if_asked;
}

/* Apply the whole log copy to a fresh context (no store_maintain, as at
 * startup), collecting the replies into *all when not NULL. */
static store_ctx_t *replay_copy(buf_t *all)
{
    return sh_replay(new_ctx(), all);
}

TestSuite(exec, .init = setup, .fini = sh_teardown);

#define T0      1000000
#define OK      "+OK\r\n"
#define NIL     "$-1\r\n"
#define ABORTED "*-1\r\n"

/* ---- transactions --------------------------------------------------------- */

Test(exec, writes_reads_and_literals_in_order)
{
    char big[101];
    memset(big, 'b', 100);
    big[100] = 0;
    xb_t x;
    xb_begin(&x, 0, 0);
    xb_set(&x, 0, "k", "v", 0);
    xb_cmd(&x, CMD_GET, 0, "k", NULL);
    xb_set(&x, 0, "big", big, 0);
    xb_incrby(&x, 0, "n", 5);
    xb_literal(&x, "+PONG\r\n");
    xb_cmd(&x, CMD_GET, 0, "big", NULL);
    xb_cmd(&x, CMD_APPEND, 0, "big", "-tail-that-is-longer-than-24-bytes", NULL);
    xb_cmd(&x, CMD_STRLEN, 0, "big", NULL);
    xb_cmd(&x, CMD_MGET, 0, "k", "nokey", "n", NULL);
    xb_cmd(&x, CMD_DEL, 0, "k", "nokey", NULL);
    char want[1024];
    snprintf(want, sizeof(want),
             "*10\r\n+OK\r\n$1\r\nv\r\n+OK\r\n:5\r\n+PONG\r\n$100\r\n%s\r\n:134\r\n:134\r\n"
             "*3\r\n$1\r\nv\r\n$-1\r\n$1\r\n5\r\n:1\r\n",
             big);
    cr_assert_str_eq(xb_put(&x, T0), want);
    /* The values > 24 bytes point into the transaction's record. */
    char both[200];
    snprintf(both, sizeof(both), "$134\r\n%s-tail-that-is-longer-than-24-bytes\r\n", big);
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "big", NULL), both);
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "k", NULL), NIL);
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "n", NULL), "$1\r\n5\r\n");
}

Test(exec, empty_transaction_and_runtime_errors)
{
    xb_t x;
    xb_begin(&x, 0, 0);
    cr_assert_str_eq(xb_put(&x, T0), "*0\r\n");
    wr_set(T0, 0, "s", "abc", 0);
    xb_begin(&x, 0, 0);
    xb_incrby(&x, 0, "s", 1); /* an error in the middle does not stop the rest */
    xb_set(&x, 0, "after", "1", 0);
    xb_literal(&x, "-ERR invalid expire time in 'set' command\r\n");
    xb_cmd(&x, CMD_GET, 0, NULL); /* a read with a wrong argument count */
    cr_assert_str_eq(xb_put(&x, T0), "*4\r\n-ERR value is not an integer or out of range\r\n+OK\r\n"
                                     "-ERR invalid expire time in 'set' command\r\n"
                                     "-ERR wrong number of arguments for 'get' command\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "after", NULL), "$1\r\n1\r\n");
}

Test(exec, each_payload_has_its_database)
{
    xb_t x;
    xb_begin(&x, 0, 0);
    xb_set(&x, 0, "k", "zero", 0);
    xb_set(&x, 3, "k", "three", 0);
    xb_cmd(&x, CMD_GET, 3, "k", NULL);
    xb_cmd(&x, CMD_DBSIZE, 5, NULL);
    cr_assert_str_eq(xb_put(&x, T0), "*4\r\n+OK\r\n+OK\r\n$5\r\nthree\r\n:0\r\n");
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "k", NULL), "$4\r\nzero\r\n");
    cr_assert_str_eq(rd(T0, 3, CMD_GET, "k", NULL), "$5\r\nthree\r\n");
}

Test(exec, reads_use_the_apply_clock)
{
    xb_t x;
    xb_begin(&x, 0, 0);
    xb_set(&x, 0, "t", "v", T0 + 50);
    xb_cmd(&x, CMD_PTTL, 0, "t", NULL);
    cr_assert_str_eq(xb_put(&x, T0), "*2\r\n+OK\r\n:50\r\n");
}

Test(exec, reply_too_large_is_an_error_but_applied)
{
    store_set_max_reply(ctx, 64);
    xb_t x;
    xb_begin(&x, 0, 0);
    for (int i = 0; i < 20; i++)
        xb_incrby(&x, 0, "n", 1);
    xb_put(&x, T0);
    cr_assert(strstr(reply, "was applied") != NULL, "%s", reply);
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "n", NULL), "$2\r\n20\r\n");
}

/* ---- WATCH ------------------------------------------------------------- */

Test(exec, watch_change_after_the_point_aborts)
{
    wr_set(T0, 0, "k", "1", 0);
    uint64_t point = lsn; /* WATCH here: everything so far is before it */
    xb_t x;
    xb_begin(&x, point, T0);
    xb_watch(&x, 0, "k");
    xb_set(&x, 0, "k", "mine", 0);
    cr_assert_str_eq(xb_put(&x, T0), "*1\r\n+OK\r\n", "no change since the WATCH");
    point = lsn;
    wr_set(T0, 0, "k", "theirs", 0);
    xb_begin(&x, point, T0);
    xb_watch(&x, 0, "k");
    xb_set(&x, 0, "k", "mine2", 0);
    xb_set(&x, 0, "other", "x", 0);
    cr_assert_str_eq(xb_put(&x, T0), ABORTED);
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "k", NULL), "$6\r\ntheirs\r\n", "nothing applied");
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "other", NULL), NIL);
    /* Same key in another database: not the watched one. */
    point = lsn;
    wr_set(T0, 1, "k", "db1", 0);
    xb_begin(&x, point, T0);
    xb_watch(&x, 0, "k");
    cr_assert_str_eq(xb_put(&x, T0), "*0\r\n");
    xb_begin(&x, point, T0);
    xb_watch(&x, 1, "k");
    cr_assert_str_eq(xb_put(&x, T0), ABORTED, "an empty EXEC after a dirty WATCH is null");
}

Test(exec, watch_sees_every_kind_of_change)
{
    const char *r;
    for (int kind = 0; kind < 6; kind++) {
        wr_set(T0, 0, "k", "1", kind == 4 ? T0 + 100000 : 0);
        uint64_t point = lsn;
        switch (kind) {
        case 0:
            wr(T0, CMD_DEL, 0, "k", NULL);
            break;
        case 1:
            wr(T0, CMD_APPEND, 0, "k", "x", NULL);
            break;
        case 2:
            wr(T0, CMD_GETDEL, 0, "k", NULL);
            break;
        case 3:
            wr(T0, CMD_MSET, 0, "a", "1", "k", "2", NULL);
            break;
        case 4:
            wr(T0, CMD_PERSIST, 0, "k", NULL);
            break;
        case 5: {
            unsigned char d[8];
            cmd_put_i64(d, 1);
            const unsigned char *argv[2] = {(const unsigned char *)"k", d};
            uint32_t lens[2] = {1, 8};
            sh_put(T0, REC_OP_DB(CMD_INCRBY, 0), 2, argv, lens);
            break;
        }
        }
        xb_t x;
        xb_begin(&x, point, T0);
        xb_watch(&x, 0, "k");
        r = xb_put(&x, T0);
        cr_assert_str_eq(r, ABORTED, "change kind %d", kind);
    }
    /* A command that changes nothing is no change (DEL of a missing key). */
    wr(T0, CMD_DEL, 0, "k", NULL);
    uint64_t point = lsn;
    wr(T0, CMD_DEL, 0, "k", NULL);
    wr(T0, CMD_PERSIST, 0, "k", NULL);
    xb_t x;
    xb_begin(&x, point, T0);
    xb_watch(&x, 0, "k");
    cr_assert_str_eq(xb_put(&x, T0), "*0\r\n");
}

Test(exec, per_key_watch_points)
{
    uint64_t first = lsn;
    wr_set(T0, 0, "b", "changed before b was watched", 0);
    uint64_t second = lsn;
    xb_t x;
    xb_begin(&x, 0, 0);
    xb_watch_at(&x, 0, first, T0, "a");
    xb_watch_at(&x, 0, second, T0, "b");
    cr_assert_str_eq(xb_put(&x, T0), "*0\r\n");
    /* With the first point for both, it would abort. */
    xb_begin(&x, first, T0);
    xb_watch(&x, 0, "a");
    xb_watch(&x, 0, "b");
    cr_assert_str_eq(xb_put(&x, T0), ABORTED);
}

Test(exec, flush_aborts_only_for_keys_that_were_live)
{
    wr_set(T0, 0, "live", "1", 0);
    wr_set(T0, 0, "gone", "1", T0 + 10); /* expired before the WATCH */
    uint64_t point = lsn;
    int64_t wtime = T0 + 20;
    wr(T0 + 30, CMD_FLUSHALL, 0, NULL);
    xb_t x;
    xb_begin(&x, point, wtime);
    xb_watch(&x, 0, "never");
    xb_watch(&x, 0, "gone");
    cr_assert_str_eq(xb_put(&x, T0 + 40), "*0\r\n", "as Redis: no such key, no change");
    xb_begin(&x, point, wtime);
    xb_watch(&x, 0, "live");
    cr_assert_str_eq(xb_put(&x, T0 + 40), ABORTED);
    /* A key flushed before the WATCH was not live at it. */
    wr_set(T0 + 50, 0, "k2", "1", 0);
    wr(T0 + 60, CMD_FLUSHALL, 0, NULL);
    point = lsn;
    wr(T0 + 70, CMD_FLUSHALL, 0, NULL);
    xb_begin(&x, point, T0 + 65);
    xb_watch(&x, 0, "k2");
    cr_assert_str_eq(xb_put(&x, T0 + 80), "*0\r\n");
}

/* A hash, list, set or sorted set whose last member went no longer exists,
 * so a FLUSHALL after a WATCH of it does not abort EXEC, as in Redis 7.0.15
 * (test_diff seed 62 with small thresholds: ZPOPMAX of the last member,
 * WATCH, FLUSHALL, EXEC); the handlers remove the emptied key after they
 * report the change. Each way to empty one, and a stream, which exists
 * empty. */
Test(exec, flush_after_a_collection_was_emptied_does_not_abort)
{
    static const char *const lim = "#i64:274877907072"; /* 128, 64 */
    for (int kind = 0; kind < 6; kind++) {
        const char *r = NULL;
        switch (kind) {
        case 0:
            wr(T0, CMD_ZADD, 0, "k", lim, "#u32:2", "1", "a", NULL);
            r = wr(T0, CMD_ZREM, 0, "k", "a", NULL);
            break;
        case 1:
            wr(T0, CMD_LPUSH, 0, "k", "#u32:1", "a", NULL);
            r = wr(T0, CMD_LPOP, 0, "k", "#u32:0", "#u32:2", "#i64:-1", NULL);
            break;
        case 2:
            wr(T0, CMD_SADD, 0, "k", "#i64:512", "a", NULL);
            r = wr(T0, CMD_SREM, 0, "k", "a", NULL);
            break;
        case 3:
            wr(T0, CMD_SADD, 0, "k", "#i64:512", "a", NULL);
            wr(T0, CMD_SADD, 0, "k", "#i64:512", "x", NULL); /* a hashtable set */
            wr(T0, CMD_SREM, 0, "k", "x", NULL);
            r = wr(T0, CMD_SREM, 0, "k", "a", NULL);
            break;
        case 4:
            wr(T0, CMD_HSET, 0, "k", lim, "#u32:0", "f", "v", NULL);
            r = wr(T0, CMD_HDEL, 0, "k", "f", NULL);
            break;
        case 5:
            wr(T0, CMD_LPUSH, 0, "k", "#u32:1", "a", "b", NULL);
            r = wr(T0, CMD_LTRIM, 0, "k", "#i64:5", "#i64:10", NULL);
            break;
        }
        cr_assert(r && (r[0] == ':' || r[0] == '$' || r[0] == '+'), "kind %d: %s", kind, r);
        cr_assert_str_eq(rd(T0, 0, CMD_EXISTS, "k", NULL), ":0\r\n", "kind %d", kind);
        uint64_t point = lsn;
        wr(T0 + 10, CMD_FLUSHALL, 0, NULL);
        xb_t x;
        xb_begin(&x, point, T0 + 5);
        xb_watch(&x, 0, "k");
        cr_assert_str_eq(xb_put(&x, T0 + 20), "*0\r\n", "kind %d: the key did not exist", kind);
    }
}

Test(exec, swapdb_after_the_watch_aborts_when_the_key_was_on_either_side)
{
    wr_set(T0, 2, "k", "1", 0);
    uint64_t point = lsn;
    cr_assert_str_eq(wr(T0, CMD_SWAPDB, 0, "#u32:2", "#u32:3", NULL), "+OK\r\n");
    xb_t x;
    /* Redis: a swap dirties a watched key that existed in either database
     * at the swap. "k" was in db 2 and is now in db 3. */
    xb_begin(&x, point, T0);
    xb_watch(&x, 3, "k");
    cr_assert_str_eq(xb_put(&x, T0), ABORTED, "the key arrived by the swap");
    xb_begin(&x, point, T0);
    xb_watch(&x, 2, "k");
    cr_assert_str_eq(xb_put(&x, T0), ABORTED, "the key left by the swap");
    xb_begin(&x, point, T0);
    xb_watch(&x, 3, "nokey");
    cr_assert_str_eq(xb_put(&x, T0), "*0\r\n", "a key on neither side is not touched");
    xb_begin(&x, point, T0);
    xb_watch(&x, 4, "k");
    cr_assert_str_eq(xb_put(&x, T0), "*0\r\n", "another database");
    /* Two swaps since the WATCH: not followed, judged dirty. */
    cr_assert_str_eq(wr(T0, CMD_SWAPDB, 0, "#u32:3", "#u32:5", NULL), "+OK\r\n");
    xb_begin(&x, point, T0);
    xb_watch(&x, 3, "nokey");
    cr_assert_str_eq(xb_put(&x, T0), ABORTED);
}

Test(exec, watched_key_expiring_since_the_watch_aborts)
{
    wr_set(T0, 0, "t", "v", T0 + 100);
    uint64_t point = lsn;
    xb_t x;
    /* Still live at EXEC: no abort. */
    xb_begin(&x, point, T0 + 10);
    xb_watch(&x, 0, "t");
    cr_assert_str_eq(xb_put(&x, T0 + 50), "*0\r\n");
    /* Expired between the WATCH and the EXEC: abort. */
    xb_begin(&x, point, T0 + 10);
    xb_watch(&x, 0, "t");
    xb_set(&x, 0, "w", "1", 0);
    cr_assert_str_eq(xb_put(&x, T0 + 150), ABORTED);
    cr_assert_str_eq(rd(T0 + 150, 0, CMD_GET, "w", NULL), NIL);
    /* Already expired when watched: no abort, as in Redis. */
    xb_begin(&x, point, T0 + 120);
    xb_watch(&x, 0, "t");
    cr_assert_str_eq(xb_put(&x, T0 + 160), "*0\r\n");
}

Test(exec, expiry_decision_does_not_depend_on_active_expiry)
{
    /* Live: active expiry reclaims the watched key before the EXEC;
     * replay: it does not run. Both must decide the same. */
    maintain_between = 1;
    wr_set(T0, 0, "t", "v", T0 + 100);
    wr_set(T0, 0, "u", "v", T0 + 100);
    uint64_t point = lsn;
    wr(T0 + 200, CMD_TICK, 0, NULL); /* the clock passes both TTLs */
    wr(T0 + 210, CMD_TICK, 0, NULL); /* and maintain has run before this */
    cr_assert_eq(store_key_count(ctx), 0, "active expiry reclaimed them");
    xb_t x;
    xb_begin(&x, point, T0 + 10);
    xb_watch(&x, 0, "t");
    xb_set(&x, 0, "w", "1", 0);
    cr_assert_str_eq(xb_put(&x, T0 + 220), ABORTED);
    xb_begin(&x, point, T0 + 150);
    xb_watch(&x, 0, "u");
    xb_set(&x, 0, "w2", "1", 0);
    cr_assert_str_eq(xb_put(&x, T0 + 220), "*1\r\n+OK\r\n");
    buf_t live;
    buf_init(&live);
    maintain_between = 0;
    store_ctx_t *c = replay_copy(&live);
    const char both[] = ABORTED "*1\r\n+OK\r\n";
    cr_assert(memmem(live.data, live.len, both, strlen(both)) != NULL, "replay decided otherwise");
    uint64_t d1, d2;
    cr_assert_eq(store_digest(ctx, T0 + 300, &d1), 0);
    cr_assert_eq(store_digest(c, T0 + 300, &d2), 0);
    cr_assert_eq(d1, d2);
    store_ctx_destroy(c);
    buf_free(&live);
}

Test(exec, collisions_only_add_aborts)
{
    /* Two buckets of four slots: most keys share a bucket. */
    watch_bits = 1;
    store_ctx_destroy(ctx);
    ctx = new_ctx();
    wr_set(T0, 0, "quiet", "1", 0);
    uint64_t point = lsn;
    char k[16];
    for (int i = 0; i < 20; i++) {
        snprintf(k, sizeof(k), "other%d", i);
        wr_set(T0, 0, k, "x", 0);
    }
    xb_t x;
    xb_begin(&x, point, T0);
    xb_watch(&x, 0, "quiet");
    cr_assert_str_eq(xb_put(&x, T0), ABORTED, "evicted, changes since: an extra abort");
    /* Watched after those changes: no abort. */
    point = lsn;
    xb_begin(&x, point, T0);
    xb_watch(&x, 0, "quiet");
    cr_assert_str_eq(xb_put(&x, T0), "*0\r\n");
}

/* A random mix of writes, TTLs, flushes and transactions with random watch
 * points, on a tiny table (collisions) with active expiry between records
 * live: the replay's replies and state equal the live ones. */
static void random_run(unsigned bits)
{
    watch_bits = bits;
    store_ctx_destroy(ctx);
    ctx = new_ctx();
    unsigned seed = getenv("ATTIC_SEED") ? (unsigned)atoi(getenv("ATTIC_SEED")) : 4242;
    srandom(seed);
    buf_t live;
    buf_init(&live);
    uint64_t points[64] = {0};
    int64_t times[64] = {T0};
    int npoints = 1;
    int64_t t = T0;
    int aborted = 0, ran = 0;
    for (int i = 0; i < 1500; i++) {
        t += random() % 40;
        char k[8], v[40];
        snprintf(k, sizeof(k), "k%ld", random() % 12);
        snprintf(v, sizeof(v), "%ld-%s", random(), random() % 2 ? "long-value-past-inline" : "s");
        maintain_between = (int)(random() % 2);
        int db = (int)(random() % 3);
        switch (random() % 8) {
        case 0:
        case 1:
            wr_set(t, db, k, v, random() % 2 ? t + random() % 300 : 0);
            break;
        case 2:
            wr(t, CMD_DEL, db, k, NULL);
            break;
        case 3:
            if (random() % 20 == 0)
                wr(t, CMD_FLUSHALL, 0, NULL);
            else
                wr(t, CMD_APPEND, db, k, v, NULL);
            break;
        default: {
            xb_t x;
            int p = (int)(random() % npoints);
            xb_begin(&x, points[p], times[p]);
            int nw = (int)(random() % 3);
            for (int j = 0; j < nw; j++) {
                char wk[8];
                snprintf(wk, sizeof(wk), "k%ld", random() % 12);
                xb_watch(&x, (int)(random() % 3), wk);
            }
            int nc = (int)(random() % 5);
            for (int j = 0; j < nc; j++) {
                char ck[8];
                snprintf(ck, sizeof(ck), "k%ld", random() % 12);
                int cdb = (int)(random() % 3);
                switch (random() % 5) {
                case 0:
                    xb_set(&x, cdb, ck, v, random() % 2 ? t + random() % 200 : 0);
                    break;
                case 1:
                    xb_incrby(&x, cdb, ck, 3);
                    break;
                case 2:
                    xb_cmd(&x, CMD_GET, cdb, ck, NULL);
                    break;
                case 3:
                    xb_cmd(&x, CMD_DEL, cdb, ck, NULL);
                    break;
                default:
                    xb_literal(&x, "+PONG\r\n");
                    break;
                }
            }
            const char *r = xb_put(&x, t);
            if (!strcmp(r, ABORTED))
                aborted++;
            else
                ran++;
            break;
        }
        }
        buf_append(&live, reply, reply_len);
        if (npoints < 64 && random() % 4 == 0) {
            points[npoints] = lsn;
            times[npoints++] = t;
        }
    }
    cr_assert_gt(aborted, 10, "seed %u: too few aborts to mean anything", seed);
    cr_assert_gt(ran, 10, "seed %u", seed);
    buf_t again;
    buf_init(&again);
    maintain_between = 0;
    store_ctx_t *c = replay_copy(&again);
    cr_assert_eq(live.len, again.len, "seed %u", seed);
    cr_assert(memcmp(live.data, again.data, live.len) == 0, "seed %u: replay replied otherwise",
              seed);
    uint64_t d1, d2;
    cr_assert_eq(store_digest(ctx, t, &d1), 0);
    cr_assert_eq(store_digest(c, t, &d2), 0);
    cr_assert_eq(d1, d2, "seed %u", seed);
    store_ctx_destroy(c);
    buf_free(&live);
    buf_free(&again);
}

Test(exec, random_transactions_replay_alike)
{
    random_run(0); /* the default table: every key keeps its slot */
}

Test(exec, random_transactions_replay_alike_with_collisions)
{
    random_run(2); /* 16 slots for 36 keys */
}

/* ---- malformed records ------------------------------------------------- */

/* A transaction that starts with a valid write of "probe", which a
 * refused transaction must not apply. */
static void probe_begin(xb_t *x)
{
    xb_begin(x, 0, 0);
    xb_set(x, 0, "probe", "after", 0);
}

static void expect_refused(xb_t *x, const char *why)
{
    wr_set(T0, 0, "probe", "before", 0);
    const char *r = xb_put(x, T0);
    cr_assert(strstr(r, "cannot apply this transaction") != NULL, "%s: %s", why, r);
    cr_assert_str_eq(rd(T0, 0, CMD_GET, "probe", NULL), "$6\r\nbefore\r\n", "%s: applied", why);
}

Test(exec, malformed_records_apply_nothing)
{
    xb_t x;
    const unsigned char junk[] = {1, 2, 3};
    /* A nested payload that does not decode, after a valid write. */
    probe_begin(&x);
    xb_arg(&x, junk, sizeof(junk));
    expect_refused(&x, "undecodable payload");
    /* An argument length past the payload's end. */
    probe_begin(&x);
    unsigned char bad[12] = {0};
    uint16_t opdb = REC_OP_DB(CMD_GET, 0), one = 1;
    uint32_t huge = 1000;
    memcpy(bad, &opdb, 2);
    memcpy(bad + 2, &one, 2);
    memcpy(bad + 4, &huge, 4);
    xb_arg(&x, bad, sizeof(bad));
    expect_refused(&x, "argument past the end");
    /* A write with the wrong shape (SET without its flags). */
    probe_begin(&x);
    xb_cmd(&x, CMD_SET, 0, "probe", "x", NULL);
    expect_refused(&x, "misshapen write");
    /* A nested transaction. */
    probe_begin(&x);
    unsigned char inner[24] = {0};
    const unsigned char *iargv[1] = {inner};
    uint32_t ilens[1] = {24};
    xb_cmdv(&x, CMD_EXEC, 0, 1, iargv, ilens);
    expect_refused(&x, "nested EXEC");
    /* A database out of range. */
    probe_begin(&x);
    xb_set(&x, 16, "k", "v", 0);
    expect_refused(&x, "database 16");
    /* An unknown operation, a literal with two arguments. */
    probe_begin(&x);
    xb_cmd(&x, CMD_PING, 0, NULL);
    expect_refused(&x, "not a canonical form");
    probe_begin(&x);
    xb_cmd(&x, CMD_LITERAL, 0, "+a\r\n", "+b\r\n", NULL);
    expect_refused(&x, "literal with two arguments");
    /* More watched keys than arguments; a watched key without its db. */
    probe_begin(&x);
    cmd_put_u32(x.hdr + 16, 5);
    expect_refused(&x, "nwatch too large");
    xb_begin(&x, 0, 0);
    xb_arg(&x, "", 0);
    cmd_put_u32(x.hdr + 16, 1);
    xb_set(&x, 0, "probe", "after", 0);
    expect_refused(&x, "empty watched key");
    xb_begin(&x, 0, 0);
    xb_watch(&x, 0, "short");
    cmd_put_u32(x.hdr + 20, 1); /* per-key points, but the key has none */
    xb_set(&x, 0, "probe", "after", 0);
    expect_refused(&x, "per-key point missing");
    xb_begin(&x, 0, 0);
    cmd_put_u32(x.hdr + 20, 4); /* 1 and 2 are known (command.h) */
    xb_set(&x, 0, "probe", "after", 0);
    expect_refused(&x, "unknown flags");
    /* A header of the wrong size is not a transaction at all. */
    const unsigned char h23[23] = {0};
    const unsigned char *argv[1] = {h23};
    uint32_t lens[1] = {23};
    sh_put(T0, REC_OP_DB(CMD_EXEC, 0), 1, argv, lens);
    cr_assert(strstr(reply, "cannot apply") != NULL, "%s", reply);
    /* Replay refuses the same records. */
    buf_t again;
    buf_init(&again);
    store_ctx_t *c = replay_copy(&again);
    uint64_t d1, d2;
    store_digest(ctx, T0, &d1);
    store_digest(c, T0, &d2);
    cr_assert_eq(d1, d2);
    store_ctx_destroy(c);
    buf_free(&again);
}
