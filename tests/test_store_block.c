/*
 * test_store_block.c - the store's waiter queues (store/core/block.c) and
 * the blocking list records (store/types/t_list.c, t_block.c) driven
 * record by record through the store harness: a waiter queued only when
 * nothing is there, served inside the push's apply (the push's reply
 * counts the element, the list is empty after), FIFO across waiters and
 * keys, BLMPOP's count, BLMOVE to a list and to a key of another type,
 * UNBLOCK (timeout, error, drop) and BLOCKDROP, a blocking record inside
 * EXEC acting as its non-blocking form, replay reaching the same state,
 * and the checkpoint bytes rebuilding the same queues.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "command.h"
#include "record.h"
#include "store/core/block.h"
#include "store/core/entry.h"
#include "store/store-internal.h"
#include "store_harness.h"

#define T0 1000000

#define wr(t, id, ...) sh_wr((t), (id), __VA_ARGS__)
#define rd(id, ...)    sh_rd(T0, 0, (id), __VA_ARGS__)

static void setup(void)
{
    sh_setup("block", 0, 42);
    sh_canonical_only = 1;
    st_block_set_live(ctx, 1);
}

TestSuite(block, .init = setup, .fini = sh_teardown, .timeout = 120);

/* The waiter replies built since the last call, as "id:body|" each. */
static char served[4096];
static void take_one(void *arg, uint16_t origin, uint64_t id, const buf_t *body)
{
    (void)arg;
    cr_assert_eq(origin, 1, "replies go to the waiter's frontend");
    size_t n = strlen(served);
    snprintf(served + n, sizeof served - n, "%llu:%.*s|", (unsigned long long)id, (int)body->len,
             body->data);
}
static const char *take(void)
{
    served[0] = 0;
    st_block_take_replies(ctx, take_one, NULL);
    return served;
}

/* A BLPOP (right 0) / BRPOP record for client id on these keys; returns
 * the record's LSN (its waiter's reply id) and whether it was deferred. */
static uint64_t blpop(uint64_t client, int right, const char *k1, const char *k2, int *deferred)
{
    char cid[32], side[16];
    snprintf(cid, sizeof cid, "#i64:%llu", (unsigned long long)client);
    snprintf(side, sizeof side, "#u32:%d", right);
    uint64_t at = lsn;
    wr(T0, CMD_BLPOP, cid, "#u32:2", side, "#u32:1", "#i64:-1", k1, k2, NULL);
    *deferred = st_block_take_deferred(ctx);
    return at;
}

static char expect[256];
static const char *pair(uint64_t id, const char *key, const char *v)
{
    snprintf(expect, sizeof expect, "%llu:*2\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n|",
             (unsigned long long)id, strlen(key), key, strlen(v), v);
    return expect;
}

Test(block, immediate_when_data_else_queued)
{
    int def;
    wr(T0, CMD_LPUSH, "k", "#u32:1", "a", NULL);
    blpop(1, 0, "k", NULL, &def);
    cr_assert_eq(def, 0);
    cr_assert_str_eq(reply, "*2\r\n$1\r\nk\r\n$1\r\na\r\n");
    cr_assert_str_eq(rd(CMD_EXISTS, "k", NULL), ":0\r\n");
    uint64_t id = blpop(2, 0, "k", NULL, &def);
    cr_assert_eq(def, 1, "nothing there: the client waits, no reply yet");
    cr_assert_eq(st_block_count(ctx), 1);
    cr_assert_str_eq(take(), "");
    /* The push that serves is popped atomically: its own reply counts the
     * element, the list is gone after the same record. */
    cr_assert_str_eq(wr(T0, CMD_LPUSH, "k", "#u32:1", "x", NULL), ":1\r\n");
    cr_assert_str_eq(take(), pair(id, "k", "x"));
    cr_assert_str_eq(rd(CMD_LLEN, "k", NULL), ":0\r\n");
    cr_assert_eq(st_block_count(ctx), 0);
    sh_check_replay("served blocking pops");
}

Test(block, fifo_across_waiters_and_keys)
{
    int def;
    uint64_t w1 = blpop(1, 0, "a", "b", &def);
    uint64_t w2 = blpop(2, 0, "b", NULL, &def);
    uint64_t w3 = blpop(3, 1, "b", "a", &def);
    cr_assert_eq(st_block_count(ctx), 3);
    cr_assert_eq(st_block_first(ctx, 0, &(rec_arg_t){(const unsigned char *)"b", 1})->id, w1);
    /* Three elements on b: w1 (first on b too), then w2, then w3. */
    wr(T0, CMD_LPUSH, "b", "#u32:1", "x", "y", "z", NULL);
    char want[512];
    snprintf(want, sizeof want, "%s", pair(w1, "b", "x"));
    snprintf(want + strlen(want), sizeof want - strlen(want), "%s", pair(w2, "b", "y"));
    snprintf(want + strlen(want), sizeof want - strlen(want), "%s", pair(w3, "b", "z"));
    cr_assert_str_eq(take(), want);
    cr_assert_eq(st_block_count(ctx), 0);
    /* One element for two waiters: the second stays. */
    uint64_t w4 = blpop(4, 0, "c", NULL, &def);
    uint64_t w5 = blpop(5, 0, "c", NULL, &def);
    wr(T0, CMD_LPUSH, "c", "#u32:1", "only", NULL);
    cr_assert_str_eq(take(), pair(w4, "c", "only"));
    cr_assert_eq(st_block_first(ctx, 0, &(rec_arg_t){(const unsigned char *)"c", 1})->id, w5);
    sh_check_replay("FIFO waiters");
}

Test(block, blmpop_count_and_blmove)
{
    int def;
    uint64_t at = lsn;
    wr(T0, CMD_BLPOP, "#i64:1", "#u32:2", "#u32:1", "#u32:2", "#i64:2", "m", NULL);
    cr_assert_eq(st_block_take_deferred(ctx), 1);
    wr(T0, CMD_LPUSH, "m", "#u32:1", "1", "2", "3", NULL);
    char want[256];
    snprintf(want, sizeof want, "%llu:*2\r\n$1\r\nm\r\n*2\r\n$1\r\n3\r\n$1\r\n2\r\n|",
             (unsigned long long)at);
    cr_assert_str_eq(take(), want);
    cr_assert_str_eq(rd(CMD_LLEN, "m", NULL), ":1\r\n");
    /* BLMOVE src dst: served by the push, the element lands in dst. */
    at = lsn;
    wr(T0, CMD_BLMOVE, "#i64:2", "#u32:2", "#u32:0", "#u32:1", "src", "dst", NULL);
    cr_assert_eq(st_block_take_deferred(ctx), 1);
    wr(T0, CMD_LPUSH, "src", "#u32:1", "e", NULL);
    snprintf(want, sizeof want, "%llu:$1\r\ne\r\n|", (unsigned long long)at);
    cr_assert_str_eq(take(), want);
    cr_assert_str_eq(rd(CMD_LRANGE, "dst", "0", "-1", NULL), "*1\r\n$1\r\ne\r\n");
    cr_assert_str_eq(rd(CMD_EXISTS, "src", NULL), ":0\r\n");
    /* A destination of another type: WRONGTYPE to the waiter, the source
     * keeps the element. */
    wr(T0, CMD_SET, "str", "v", "#u32:0", "#i64:0", NULL);
    at = lsn;
    wr(T0, CMD_BLMOVE, "#i64:3", "#u32:2", "#u32:0", "#u32:0", "src", "str", NULL);
    cr_assert_eq(st_block_take_deferred(ctx), 1);
    wr(T0, CMD_LPUSH, "src", "#u32:1", "f", NULL);
    snprintf(want, sizeof want,
             "%llu:-WRONGTYPE Operation against a key holding the wrong kind of value\r\n|",
             (unsigned long long)at);
    cr_assert_str_eq(take(), want);
    cr_assert_str_eq(rd(CMD_LLEN, "src", NULL), ":1\r\n");
    cr_assert_eq(st_block_count(ctx), 0);
    (void)def;
    sh_check_replay("BLMPOP and BLMOVE waiters");
}

Test(block, unblock_and_drop)
{
    int def;
    uint64_t w1 = blpop(7, 0, "k", NULL, &def);
    uint64_t w2 = blpop(8, 0, "k", NULL, &def);
    blpop(9, 0, "k", NULL, &def);
    cr_assert_str_eq(wr(T0, CMD_UNBLOCK, "#i64:7", "#u32:1", NULL), ":1\r\n");
    char want[128];
    snprintf(want, sizeof want, "%llu:*-1\r\n|", (unsigned long long)w1);
    cr_assert_str_eq(take(), want, "a timeout's null array");
    cr_assert_str_eq(wr(T0, CMD_UNBLOCK, "#i64:8", "#u32:2", NULL), ":1\r\n");
    snprintf(want, sizeof want, "%llu:-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n|",
             (unsigned long long)w2);
    cr_assert_str_eq(take(), want);
    cr_assert_str_eq(wr(T0, CMD_UNBLOCK, "#i64:8", "#u32:1", NULL), ":0\r\n", "gone already");
    cr_assert_eq(st_block_count(ctx), 1);
    /* The harness's records come from origin 1: BLOCKDROP 1 drops them,
     * silently; a push after it stays in the list. */
    wr(T0, CMD_BLOCKDROP, "#u32:1", NULL);
    cr_assert_eq(st_block_count(ctx), 0);
    cr_assert_str_eq(take(), "");
    wr(T0, CMD_LPUSH, "k", "#u32:1", "kept", NULL);
    cr_assert_str_eq(rd(CMD_LLEN, "k", NULL), ":1\r\n");
    sh_check_replay("unblocked waiters");
}

Test(block, inside_exec_never_blocks)
{
    /* EXEC header (24 bytes: watch lsn, watch time, count of watched keys,
     * flags) then a nested BLPOP on an empty key. */
    unsigned char hdr[24] = {0};
    sh_args_t x = {0};
    const unsigned char *nargv[8];
    uint32_t nlens[8];
    unsigned char cid[8], proto[4], side[4], kind[4], count[8];
    cmd_put_i64(cid, 1);
    cmd_put_u32(proto, 2);
    cmd_put_u32(side, 0);
    cmd_put_u32(kind, 1);
    cmd_put_i64(count, -1);
    const unsigned char *a[] = {cid, proto, side, kind, count, (const unsigned char *)"e"};
    uint32_t l[] = {8, 4, 4, 4, 8, 1};
    unsigned char nested[128];
    size_t n = rec_encode_payload(nested, CMD_BLPOP, 6, a, l);
    nargv[0] = hdr;
    nlens[0] = 24;
    nargv[1] = nested;
    nlens[1] = (uint32_t)n;
    (void)x;
    cr_assert_str_eq(sh_put(T0, CMD_EXEC, 2, nargv, nlens), "*1\r\n*-1\r\n");
    cr_assert_eq(st_block_take_deferred(ctx), 0);
    cr_assert_eq(st_block_count(ctx), 0, "no waiter from inside EXEC");
}

Test(block, checkpoint_bytes_rebuild_the_queues)
{
    int def;
    uint64_t w1 = blpop(1, 0, "a", "b", &def);
    uint64_t w2 = blpop(2, 1, "b", NULL, &def);
    wr(T0, CMD_BLMOVE, "#i64:3", "#u32:3", "#u32:1", "#u32:0", "b", "d", NULL);
    size_t n = st_block_state_size(ctx);
    cr_assert_gt(n, 4);
    unsigned char *bytes = malloc(n);
    st_block_state_save(ctx, bytes);
    store_ctx_t *live = ctx;
    ctx = store_ctx_create(&cfg, 5);
    cr_assert_eq(st_block_state_load(ctx, bytes, n), 0);
    cr_assert_eq(st_block_count(ctx), 3);
    cr_assert_eq(st_block_first(ctx, 0, &(rec_arg_t){(const unsigned char *)"b", 1})->id, w1);
    cr_assert_eq(st_block_first(ctx, 0, &(rec_arg_t){(const unsigned char *)"a", 1})->id, w1);
    cr_assert_eq(st_block_count_origin(ctx, 1), 3);
    cr_assert_eq(st_block_state_load(ctx, bytes, n - 1), -1, "a cut blob is refused");
    store_ctx_destroy(ctx);
    ctx = store_ctx_create(&cfg, 5);
    cr_assert_eq(st_block_state_load(ctx, bytes, n), 0);
    /* The same save from the loaded queues. */
    unsigned char *again = malloc(n);
    cr_assert_eq(st_block_state_size(ctx), n);
    st_block_state_save(ctx, again);
    cr_assert_eq(memcmp(bytes, again, n), 0);
    store_ctx_destroy(ctx);
    ctx = live;
    free(bytes);
    free(again);
    (void)w2;
}

/* The sorted sets' blocking pops: the waiter is served inside the ZADD
 * that fills its key (lowest first for BZPOPMIN; BZMPOP's COUNT from the
 * highest), in their reply shapes, and replay reaches the same state. */
Test(block, zset_waiters_served_inside_zadd)
{
    const char *limits = "#i64:274877907072"; /* zset-max-listpack-entries 128, -value 64 */
    uint64_t id = lsn;
    wr(T0, CMD_BZPOPMIN, "#i64:7", "#u32:2", "#u32:0", "#u32:4", "#i64:1", "z", NULL);
    cr_assert_eq(st_block_take_deferred(ctx), 1, "nothing there: the client waits");
    cr_assert_str_eq(wr(T0, CMD_ZADD, "z", limits, "#u32:2", "2", "b", "1", "a", NULL), ":2\r\n");
    char want[256];
    snprintf(want, sizeof want, "%llu:*3\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\n1\r\n|",
             (unsigned long long)id);
    cr_assert_str_eq(take(), want);
    cr_assert_str_eq(rd(CMD_ZCARD, "z", NULL), ":1\r\n");
    id = lsn;
    wr(T0, CMD_BZPOPMIN, "#i64:8", "#u32:2", "#u32:1", "#u32:5", "#i64:2", "y", NULL);
    cr_assert_eq(st_block_take_deferred(ctx), 1);
    /* A list in the key serves no zset waiter. */
    wr(T0, CMD_LPUSH, "y", "#u32:1", "l", NULL);
    cr_assert_str_eq(take(), "");
    wr(T0, CMD_DEL, "y", NULL);
    wr(T0, CMD_ZADD, "y", limits, "#u32:2", "1", "p", "2", "q", "3", "r", NULL);
    snprintf(
        want, sizeof want,
        "%llu:*2\r\n$1\r\ny\r\n*2\r\n*2\r\n$1\r\nr\r\n$1\r\n3\r\n*2\r\n$1\r\nq\r\n$1\r\n2\r\n|",
        (unsigned long long)id);
    cr_assert_str_eq(take(), want);
    cr_assert_eq(st_block_count(ctx), 0);
    sh_check_replay("served zset blocking pops");
}
