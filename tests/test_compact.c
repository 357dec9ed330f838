/*
 * test_compact.c - unit tests of reclaiming log space (store/compact.c,
 * store/core/live.c; D27) with the store harness: after a random workload
 * of every command that changes a value's log references, the live-bytes
 * table equals a recount from scratch, and a replay of the whole log, or a
 * checkpoint plus the log after it, rebuilds the same table; checkpoints
 * record their lowest log reference, and a load checks it; segments at the
 * log's start are deleted only below every kept checkpoint and the live
 * state, and what is left restarts to the same state; a log whose start
 * was deleted is never replayed without a checkpoint.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt.h"
#include "command.h"
#include "config.h"
#include "record.h"
#include "seg.h"
#include "store/checkpoint.h"
#include "store/compact.h"
#include "store/core/entry.h"
#include "store/core/live.h"
#include "store/digest.h"
#include "store/store-internal.h"
#include "store_harness.h"

#define T0 1000000
#define OK "+OK\r\n"

#define wr(t, op, db, ...) sh_wr((t), REC_OP_DB((op), (db)), __VA_ARGS__)

#define SEG (64u * 1024)

static void setup(void)
{
    sh_setup("compact", 4, 77);
    sh_new_store(SEG, 4, 77);
}

TestSuite(compact, .init = setup, .fini = sh_teardown);

static void set(int64_t t, int db, const char *key, const void *val, size_t n)
{
    sh_put_key(t, REC_OP_DB(CMD_SET, db), key, "bui", val, n, (uint32_t)0, (int64_t)0);
}

/* Apply log_copy from byte `from` to c. */
static void replay_from(store_ctx_t *c, uint64_t from)
{
    for (size_t off = (size_t)from; off < log_len;) {
        const unsigned char *rec = log_copy + off;
        rec_hdr_t h;
        memcpy(&h, rec, sizeof(h));
        cr_assert_geq(store_apply(c, rec, NULL), 0);
        off += rec_space(h.len - REC_HDR_SIZE);
    }
}

static void expect_same_live(store_ctx_t *a, store_ctx_t *b, const char *what)
{
    cr_assert(store_live_verify(a), "%s: the first table disagrees with a recount", what);
    cr_assert(store_live_verify(b), "%s: the second table disagrees with a recount", what);
    cr_assert(st_live_equal(&a->live, &b->live), "%s: tables differ (%llu vs %llu bytes)", what,
              (unsigned long long)a->live.total, (unsigned long long)b->live.total);
}

static void expect_same_digest(store_ctx_t *a, store_ctx_t *b, const char *what)
{
    unsigned char x1[STORE_DIGEST_BYTES], x2[STORE_DIGEST_BYTES];
    cr_assert_eq(store_digest160(a, T0, x1), 0);
    cr_assert_eq(store_digest160(b, T0, x2), 0);
    cr_assert(memcmp(x1, x2, sizeof(x1)) == 0, "%s: digest", what);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* One random write of any kind that changes log references. */
static void random_write(const unsigned char *src)
{
    char key[8], key2[8];
    int db = (int)(next() % 2);
    snprintf(key, sizeof(key), "k%d", (int)(next() % 12));
    snprintf(key2, sizeof(key2), "k%d", (int)(next() % 12));
    size_t n = next() % 4 == 0 ? next() % 3000 : next() % 60;
    const unsigned char *s = src + next() % 1000;
    char val[3001];
    memcpy(val, s, n);
    for (size_t i = 0; i < n; i++)
        val[i] = (char)('a' + (unsigned char)val[i] % 26); /* a C string for wr */
    val[n] = 0;
    switch (next() % 19) {
    case 0:
    case 1:
        set(T0, db, key, s, n);
        break;
    case 2:
    case 3:
        sh_put_key(T0, REC_OP_DB(CMD_APPEND, db), key, "b", s, n);
        break;
    case 4:
        sh_put_key(T0, REC_OP_DB(CMD_SETRANGE, db), key, "ib", (int64_t)(next() % 5000), s,
                   n % 200);
        break;
    case 5:
        sh_put_key(T0, REC_OP_DB(CMD_SETBIT, db), key, "iu", (int64_t)(next() % 40000),
                   (uint32_t)(next() & 1));
        break;
    case 6:
        wr(T0, CMD_DEL, db, key, NULL);
        break;
    case 7:
        sh_put_key(T0, REC_OP_DB(CMD_RENAME, db), key, "bu", key2, strlen(key2), (uint32_t)0);
        break;
    case 8:
        sh_put_key(T0, REC_OP_DB(CMD_COPY, db), key, "buu", key2, strlen(key2), (uint32_t)(1 - db),
                   (uint32_t)1);
        break;
    case 9:
        sh_put_key(T0, REC_OP_DB(CMD_MOVE, db), key, "u", (uint32_t)(1 - db));
        break;
    case 10:
        /* Expiring soon: later records (their time moves on) reap it. */
        sh_put_key(T0, REC_OP_DB(CMD_PEXPIREAT, db), key, "iu", (int64_t)T0 + 1, (uint32_t)0);
        break;
    case 11:
    case 12: {
        /* Hash fields' long values stay in the log: live bytes too. */
        char field[8];
        snprintf(field, sizeof(field), "f%d", (int)(next() % 6));
        wr(T0, CMD_HSET, db, key, "#i64:274877907456", "#u32:0", field, val, NULL);
        break;
    }
    case 13: {
        char field[8];
        snprintf(field, sizeof(field), "f%d", (int)(next() % 6));
        if (next() % 2)
            wr(T0, CMD_HDEL, db, key, field, NULL);
        else
            wr(T0, CMD_SADD, db, key, "#i64:512", field, NULL);
        break;
    }
    case 14:
        /* List elements: long ones are extents of the pushing record. */
        wr(T0, CMD_LPUSH, db, key, next() % 2 ? "#u32:1" : "#u32:0", val, "s", NULL);
        break;
    case 15:
        if (next() % 2)
            wr(T0, CMD_LPOP, db, key, "#u32:0", "#u32:2", "#i64:1", NULL);
        else
            wr(T0, CMD_LTRIM, db, key, "#i64:1", "#i64:-1", NULL);
        break;
    case 16:
    case 17: {
        /* Sorted sets: members in RAM, nothing for the live bytes. */
        char m[8];
        snprintf(m, sizeof(m), "m%d", (int)(next() % 8));
        if (next() % 3)
            wr(T0, CMD_ZADD, db, key, "#i64:274877906947", "#u32:2", "1.5", m, NULL);
        else
            wr(T0, CMD_ZPOPMIN, db, key, "#u32:1", "#i64:2", "#u32:2", NULL);
        break;
    }
    default:
        if (next() % 20 == 0)
            wr(T0, CMD_FLUSHDB, db, NULL);
        else
            wr(T0, CMD_INCRBYFLOAT, db, key, "1.5", NULL);
        break;
    }
}

static void random_workload(int steps)
{
    static unsigned char src[4096];
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (unsigned char)next();
    for (int step = 0; step < steps; step++) {
        random_write(src);
        if (step % 97 == 0)
            cr_assert(store_live_verify(ctx), "step %d: the table disagrees with a recount", step);
    }
}

Test(compact, live_bytes_equal_a_recount_and_replay_rebuilds_them)
{
    random_workload(4000);
    cr_assert(store_live_verify(ctx));
    cr_assert_gt(lsn, 10u * SEG, "the workload spans many segments");
    store_ctx_t *r = sh_replay(store_ctx_create(&cfg, 5), NULL);
    expect_same_live(ctx, r, "replayed");
    expect_same_digest(ctx, r, "replayed");
    store_ctx_destroy(r);
}

Test(compact, overwrites_and_deletes_take_bytes_away)
{
    char v[300];
    memset(v, 'v', sizeof(v));
    set(T0, 0, "a", v, sizeof(v));
    cr_assert_eq(store_live_total(ctx), sizeof(v));
    sh_put_key(T0, CMD_APPEND, "a", "b", v, (size_t)100);
    cr_assert_eq(store_live_total(ctx), sizeof(v) + 100);
    set(T0, 0, "a", "short", 5); /* inline: nothing in the log */
    cr_assert_eq(store_live_total(ctx), 0);
    set(T0, 0, "b", v, sizeof(v));
    wr(T0, CMD_DEL, 0, "b", NULL);
    cr_assert_eq(store_live_total(ctx), 0);
    set(T0, 1, "c", v, sizeof(v));
    wr(T0, CMD_FLUSHALL, 0, NULL);
    cr_assert_eq(store_live_total(ctx), 0);
    cr_assert(store_live_verify(ctx));
}

Test(compact, checkpoint_records_and_checks_its_lowest_reference)
{
    random_workload(1500);
    uint64_t at = lsn, m = 0;
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    char path[512];
    ckpt_path(path, sizeof(path), dir, at, 0);
    cr_assert_eq(store_ckpt_min_ref(path, SEG, &m), 0);
    cr_assert_eq(m, st_live_lowest(&ctx->live));
    random_workload(1500);
    store_ctx_t *r = store_ctx_create(&cfg, 9);
    char err[256];
    cr_assert_eq(store_ckpt_load(r, path, err, sizeof(err)), 0, "%s", err);
    cr_assert(store_live_verify(r));
    replay_from(r, at);
    expect_same_live(ctx, r, "checkpoint + tail");
    expect_same_digest(ctx, r, "checkpoint + tail");
    store_ctx_destroy(r);
}

/* Overwrite a few keys again and again: the old segments die. */
static void overwrites(int rounds)
{
    char v[900];
    for (int i = 0; i < rounds; i++) {
        char key[8];
        snprintf(key, sizeof(key), "o%d", i % 16);
        memset(v, 'a' + i % 26, sizeof(v));
        set(T0, 0, key, v, sizeof(v));
    }
}

static int seg_exists(uint64_t start)
{
    char path[512];
    seg_path(path, sizeof(path), dir, start);
    return access(path, F_OK) == 0;
}

Test(compact, dead_segments_below_every_checkpoint_are_deleted)
{
    store_ckpt_sched_t sched;
    memset(&sched, 0, sizeof(sched));
    store_compact_t c;
    store_compact_init(&c, dir, SEG, 0);
    set(T0, 0, "cold", "a-cold-value-longer-than-inline", 31);
    overwrites(400);
    /* No checkpoint: a restart would replay everything. */
    cr_assert_eq(store_compact_delete(&c, ctx, &sched), 0);
    uint64_t first = lsn;
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    /* The cold key pins segment 0, and so everything after it. */
    cr_assert_eq(store_compact_delete(&c, ctx, &sched), 0);
    wr(T0, CMD_DEL, 0, "cold", NULL);
    overwrites(400);
    /* The checkpoint still refers to segment 0. */
    cr_assert_eq(store_compact_delete(&c, ctx, &sched), 0);
    uint64_t second = lsn;
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    store_ckpt_prune(dir, 2);
    /* The older checkpoint (first) is still kept and refers to segment 0. */
    cr_assert_eq(store_compact_delete(&c, ctx, &sched), 0);
    overwrites(400);
    uint64_t third = lsn;
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    store_ckpt_prune(dir, 2);
    /* Kept: second and third. Below second's lowest reference, all goes. */
    int n = store_compact_delete(&c, ctx, &sched);
    cr_assert_gt(n, 0);
    cr_assert_eq(c.log_start, (uint64_t)n * SEG);
    cr_assert_leq(c.log_start, second);
    for (uint64_t s = 0; s < c.log_start; s += SEG)
        cr_assert(!seg_exists(s), "segment %llu deleted", (unsigned long long)s);
    cr_assert(seg_exists(c.log_start));
    cr_assert_geq(st_live_lowest(&ctx->live), c.log_start);
    /* Every value still reads back, and both kept checkpoints restart. */
    store_ctx_t *r = store_ckpt_restore(&cfg, 5, c.log_start, lsn, &(uint64_t){0});
    cr_assert(r);
    cr_assert_eq(store_applied(r), third);
    replay_from(r, third);
    expect_same_digest(ctx, r, "restored after deletion");
    expect_same_live(ctx, r, "restored after deletion");
    store_ctx_destroy(r);
    char path[512], err[256];
    ckpt_path(path, sizeof(path), dir, second, 0);
    r = store_ctx_create(&cfg, 6);
    cr_assert_eq(store_ckpt_load(r, path, err, sizeof(err)), 0, "%s", err);
    cr_assert_geq(st_live_lowest(&r->live), c.log_start,
                  "the older kept one needs no deleted segment");
    replay_from(r, second);
    expect_same_digest(ctx, r, "older checkpoint after deletion");
    store_ctx_destroy(r);
    (void)first;
}

/* A hash field's value in the log keeps its segment (and everything after
 * it) as a string's does, until the field is overwritten. */
Test(compact, a_hash_fields_value_keeps_its_segment)
{
    store_ckpt_sched_t sched;
    memset(&sched, 0, sizeof(sched));
    store_compact_t c;
    store_compact_init(&c, dir, SEG, 0);
    const char *lim = "#i64:274877907456";
    wr(T0, CMD_HSET, 0, "h", lim, "#u32:0", "cold", "a-cold-field-value-longer-than-inline",
       "small", "1", NULL);
    cr_assert_eq(st_live_lowest(&ctx->live), 0u, "the field's value is live in segment 0");
    for (int round = 0; round < 3; round++) {
        overwrites(400);
        cr_assert_eq(store_ckpt_save(ctx, dir), 0);
        store_ckpt_prune(dir, 2);
    }
    cr_assert_eq(store_compact_delete(&c, ctx, &sched), 0, "segment 0 is still needed");
    cr_assert(seg_exists(0));
    sh_rd(T0, 0, CMD_HGET, "h", "cold", NULL);
    cr_assert_str_eq(reply, "$37\r\na-cold-field-value-longer-than-inline\r\n");
    /* Overwritten (by a short value): nothing refers to segment 0 once
     * the checkpoints that did are gone. */
    wr(T0, CMD_HSET, 0, "h", lim, "#u32:0", "cold", "warm", NULL);
    cr_assert(store_live_verify(ctx));
    for (int round = 0; round < 3; round++) {
        overwrites(400);
        cr_assert_eq(store_ckpt_save(ctx, dir), 0);
        store_ckpt_prune(dir, 2);
    }
    cr_assert_gt(store_compact_delete(&c, ctx, &sched), 0);
    cr_assert(!seg_exists(0));
    store_ctx_t *r = store_ckpt_restore(&cfg, 5, c.log_start, lsn, &(uint64_t){0});
    cr_assert(r);
    replay_from(r, store_applied(r));
    expect_same_digest(ctx, r, "restored after deletion");
    expect_same_live(ctx, r, "restored after deletion");
    store_ctx_destroy(r);
}

Test(compact, a_running_checkpoint_child_protects_its_references)
{
    store_ckpt_sched_t sched;
    memset(&sched, 0, sizeof(sched));
    store_compact_t c;
    store_compact_init(&c, dir, SEG, 0);
    overwrites(300);
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    overwrites(300);
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    store_ckpt_prune(dir, 1);
    sched.child = 1; /* pretend: writing one whose entries refer to LSN 0 */
    sched.child_min_ref = 0;
    cr_assert_eq(store_compact_delete(&c, ctx, &sched), 0);
    sched.child = 0;
    cr_assert_gt(store_compact_delete(&c, ctx, &sched), 0);
}

Test(compact, a_checkpoint_without_a_lowest_reference_protects_the_log)
{
    store_ckpt_sched_t sched;
    memset(&sched, 0, sizeof(sched));
    store_compact_t c;
    store_compact_init(&c, dir, SEG, 0);
    overwrites(300);
    uint64_t at = lsn;
    /* A checkpoint as written before D27 (a broken table writes none). */
    ctx->live.broken = 1;
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    ctx->live.broken = 0;
    char path[512];
    uint64_t m;
    ckpt_path(path, sizeof(path), dir, at, 0);
    cr_assert_eq(store_ckpt_min_ref(path, SEG, &m), -1);
    overwrites(300);
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    cr_assert_eq(store_compact_delete(&c, ctx, &sched), 0);
    /* Still loadable (v1 files are). */
    store_ctx_t *r = store_ctx_create(&cfg, 6);
    char err[256];
    cr_assert_eq(store_ckpt_load(r, path, err, sizeof(err)), 0, "%s", err);
    store_ctx_destroy(r);
}

Test(compact, a_deleted_log_start_is_never_replayed_without_a_checkpoint)
{
    overwrites(300);
    uint64_t from = 0;
    /* No checkpoint and a log that starts after 0: refused. */
    cr_assert_null(store_ckpt_restore(&cfg, 5, SEG, lsn, &from));
    cr_assert_eq(from, UINT64_MAX);
    /* A checkpoint that refers below the log's start is not loaded either. */
    set(T0, 0, "cold", "a-cold-value-longer-than-inline", 31);
    overwrites(300);
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    from = 0;
    cr_assert_null(store_ckpt_restore(&cfg, 5, st_live_lowest(&ctx->live) + SEG, lsn, &from));
    cr_assert_eq(from, UINT64_MAX);
    /* With the log starting at 0, the same one loads. */
    store_ctx_t *r = store_ckpt_restore(&cfg, 5, 0, lsn, &from);
    cr_assert(r);
    cr_assert_eq(from, lsn);
    store_ctx_destroy(r);
}

Test(compact, debug_segments_reply)
{
    char v[300];
    memset(v, 'v', sizeof(v));
    set(T0, 0, "a", v, sizeof(v));
    buf_t b;
    buf_init(&b);
    store_live_reply(ctx, &b);
    /* verified, total, then one segment: 0 with 300 bytes */
    const char want[] = "*4\r\n:1\r\n:300\r\n:0\r\n:300\r\n";
    cr_assert_eq(b.len, sizeof(want) - 1);
    cr_assert(memcmp(b.data, want, b.len) == 0);
    buf_free(&b);
}

/* ---- CMD_RELOCATE ------------------------------------------------------- */

static uint64_t extent_of(int db, const char *key, uint32_t *len)
{
    idx_entry_t **slot = idx_find(&ctx->dbs[db]->ix, key, strlen(key));
    cr_assert_not_null(slot);
    cr_assert_eq(st_ent_kind(*slot), VK_EXTENT);
    uint64_t at;
    st_ent_get_ext1(*slot, &at, len);
    return at;
}

static void relocate(int db, const char *key, const char *val, uint64_t old)
{
    unsigned char o[8];
    cmd_put_i64(o, (int64_t)old);
    sh_put_key(T0, REC_OP_DB(CMD_RELOCATE, db), key, "bb", val, strlen(val), o, (size_t)8);
}

Test(compact, relocate_moves_only_the_value_it_names)
{
    const char *v = "a-value-longer-than-the-inline-prefix";
    set(T0, 1, "k", v, strlen(v));
    uint32_t len;
    uint64_t old = extent_of(1, "k", &len);
    unsigned char before[STORE_DIGEST_BYTES], after[STORE_DIGEST_BYTES];
    cr_assert_eq(store_digest160(ctx, T0, before), 0);
    uint64_t at = lsn;
    relocate(1, "k", v, old);
    uint64_t moved = extent_of(1, "k", &len);
    cr_assert_gt(moved, at, "now in the relocation record");
    cr_assert_eq(len, strlen(v));
    cr_assert_eq(st_live_get(&ctx->live, 0), strlen(v), "counted where it is now");
    cr_assert(store_live_verify(ctx));
    cr_assert_eq(store_digest160(ctx, T0, after), 0);
    cr_assert(memcmp(before, after, sizeof(before)) == 0, "the same bytes");
    /* Stale: the key moved on (or another db, or the old place) - nothing. */
    relocate(1, "k", v, old);
    cr_assert_eq(extent_of(1, "k", &len), moved);
    relocate(0, "k", v, moved);
    cr_assert_eq(extent_of(1, "k", &len), moved);
    set(T0, 1, "k", "overwritten-with-another-long-value", 35);
    uint64_t now_at = extent_of(1, "k", &len);
    relocate(1, "k", v, moved);
    cr_assert_eq(extent_of(1, "k", &len), now_at);
    relocate(1, "missing", v, moved);
    cr_assert(store_live_verify(ctx));
    /* Replay makes the same decisions. */
    store_ctx_t *r = sh_replay(store_ctx_create(&cfg, 5), NULL);
    expect_same_live(ctx, r, "replayed relocations");
    expect_same_digest(ctx, r, "replayed relocations");
    store_ctx_destroy(r);
}
