/*
 * t_zset_read.c - the store's sorted-set reads (handlers.h): ZCARD,
 * ZSCORE, ZMSCORE, ZRANK, ZREVRANK, ZCOUNT, ZLEXCOUNT, the ZRANGE family
 * (ZRANGE, ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX,
 * ZREVRANGEBYLEX: one handler, told apart by read_args_t's cmd),
 * ZRANDMEMBER, ZSCAN, ZUNION, ZINTER, ZDIFF, ZINTERCARD. Store process
 * only; reads change nothing.
 *
 * Replies are Redis 7.0.15's, RESP2 and RESP3 (scores as doubles, pairs
 * as arrays of two): checked against redis-server by
 * tests/integration/test_cmds_zsets. ZRANDMEMBER uses this process's
 * generator, as SRANDMEMBER does (a read has no record to seed from).
 * ZSCAN of a listpack-encoded set returns it whole with cursor 0, as
 * Redis; of a skiplist, its cursor is the rank to go on from (Redis' is a
 * hash-table cursor: docs/COMMANDS.md says what differs).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "glob.h"
#include "handlers.h"
#include "resp.h"
#include "store/core/alloc.h"
#include "store/core/entry.h"
#include "store/core/object.h"
#include "store/core/zset.h"
#include "strutil.h"
#include "zset_ops.h"

/* A ZRANGE of this many members of a sorted set in pages goes in parts. */
#define ZRANGE_PARTS_MIN 1024u

static st_zset_t *lookup_read(const read_args_t *a, buf_t *r, int *wrong)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    *wrong = st_wrongtype(slot, ST_ZSET, r);
    return slot && !*wrong ? st_ent_zset(*slot) : NULL;
}

/* A reply past the channel's limit becomes the store's error. */
static void bound_reply(store_ctx_t *ctx, buf_t *r, size_t mark)
{
    if (ctx->max_reply && r->len - mark > ctx->max_reply) {
        r->len = mark;
        resp_error(r, STORE_ERR_TOO_LARGE);
    }
}

void st_read_zcard(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    int wrong;
    st_zset_t *z = lookup_read(a, r, &wrong);
    if (!wrong) resp_integer(r, z ? st_zset_len(z) : 0);
}

static void reply_score_of(buf_t *r, int proto, st_zset_t *z, const rec_arg_t *m)
{
    double s;
    if (z && st_zset_score(z, m->ptr, m->len, &s))
        resp_double(r, proto, s);
    else
        resp_null3(r, proto);
}

void st_read_zscore(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    int wrong;
    st_zset_t *z = lookup_read(a, r, &wrong);
    if (!wrong) reply_score_of(r, a->proto, z, &a->argv[1]);
}

void st_read_zmscore(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    int wrong;
    st_zset_t *z = lookup_read(a, r, &wrong);
    if (wrong) return;
    resp_array(r, a->argc - 1);
    for (uint16_t i = 1; i < a->argc; i++)
        reply_score_of(r, a->proto, z, &a->argv[i]);
}

/* ZRANK, ZREVRANK key member. */
void st_read_zrank(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    int wrong;
    st_zset_t *z = lookup_read(a, r, &wrong);
    if (wrong) return;
    long rank = z ? st_zset_rank(z, a->argv[1].ptr, a->argv[1].len) : -1;
    if (rank < 0)
        resp_null3(r, a->proto);
    else
        resp_integer(r, a->cmd == CMD_ZREVRANK ? (long)st_zset_len(z) - 1 - rank : rank);
}

/* ZCOUNT, ZLEXCOUNT key min max: the range first, then the key. */
void st_read_zcount(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    zs_spec_t s;
    memset(&s, 0, sizeof(s));
    const char *err;
    if (zs_parse_minmax(a->cmd == CMD_ZLEXCOUNT ? ZS_BY_LEX : ZS_BY_SCORE, &a->argv[1], &a->argv[2],
                        &s, &err)) {
        resp_error(r, err);
        return;
    }
    int wrong;
    st_zset_t *z = lookup_read(a, r, &wrong);
    if (wrong) return;
    uint32_t from = 0, to = 0;
    if (z) zs_span(z, &s, &from, &to);
    resp_integer(r, to - from);
}

/* The ZRANGE family: key min max [options], as the command reads them. */
void st_read_zrange(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    zs_spec_t s;
    if (zs_parse_range(a->cmd, &a->argv[1], (uint16_t)(a->argc - 1), &s, r)) return;
    int wrong;
    st_zset_t *z = lookup_read(a, r, &wrong);
    if (wrong) return;
    if (!z) {
        resp_array(r, 0);
        return;
    }
    uint32_t from, n;
    zs_select(z, &s, &from, &n);
    size_t mark = r->len;
    /* A long run of a sorted set in pages goes in parts, a page at a time
     * (D65), where parts may go (a read outside MULTI). */
    if (n >= ZRANGE_PARTS_MIN && ctx->reply_stream_ok && !ctx->reply_stream) {
        resp_array(r, s.withscores && a->proto < 3 ? 2 * (long long)n : n);
        ctx->reply_stream = st_zset_run_snapshot(z, from, n, s.rev, a->proto, s.withscores,
                                                 s.withscores && a->proto >= 3);
        if (ctx->reply_stream) return;
        r->len = mark;
    }
    zs_reply_run(r, a->proto, z, from, n, s.rev, s.withscores, 0);
    bound_reply(ctx, r, mark);
}

/* ---- ZRANDMEMBER ---- */

static uint64_t read_rng;

static uint64_t rng_next(const read_args_t *a)
{
    uint64_t x = read_rng ? read_rng : (a->db->ix.seed | 1);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return read_rng = x;
}

/* ZRANDMEMBER key [count [WITHSCORES]]: Redis 7.0's checks in its order
 * (the count, the words after it, WITHSCORES' range, then the key). */
void st_read_zrandmember(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    long long count = 0;
    int withscores = 0;
    if (a->argc >= 2) {
        if (zs_parse_ll(&a->argv[1], &count)) {
            resp_error(r, ZS_ERR_NOT_INT);
            return;
        }
        if (count < -LLONG_MAX) {
            resp_error(r, "ERR value is out of range, value must between -9223372036854775807 "
                          "and 9223372036854775807");
            return;
        }
        if (a->argc > 3 ||
            (a->argc == 3 && !(a->argv[2].len == 10 &&
                               strncasecmp((const char *)a->argv[2].ptr, "withscores", 10) == 0))) {
            resp_error(r, "ERR syntax error");
            return;
        }
        withscores = a->argc == 3;
        if (withscores && (count < -LLONG_MAX / 2 || count > LLONG_MAX / 2)) {
            resp_error(r, "ERR value is out of range");
            return;
        }
    }
    int wrong;
    st_zset_t *z = lookup_read(a, r, &wrong);
    if (wrong) return;
    uint32_t size = z ? st_zset_len(z) : 0;
    if (a->argc == 1) {
        if (!z) {
            resp_null3(r, a->proto);
            return;
        }
        st_zel_t x;
        st_zset_at(z, (uint32_t)(rng_next(a) % size), &x);
        resp_bulk(r, x.m, x.n);
        return;
    }
    if (!z || count == 0) {
        resp_array(r, 0);
        return;
    }
    size_t mark = r->len;
    if (count < 0) { /* repeats allowed */
        uint64_t n = (uint64_t)(-count);
        resp_array(r, (long long)(withscores && a->proto < 3 ? 2 * n : n));
        for (uint64_t i = 0; i < n; i++) {
            st_zel_t x;
            st_zset_at(z, (uint32_t)(rng_next(a) % size), &x);
            st_zset_reply_member(r, a->proto, &x, withscores, withscores && a->proto >= 3);
            if (ctx->max_reply && r->len - mark > ctx->max_reply) break;
            if (i % 1024 == 1023) st_hash_mat_reset(ctx); /* pages' copies, replied */
        }
        bound_reply(ctx, r, mark);
        return;
    }
    if ((uint64_t)count >= size) { /* every member, in order */
        zs_reply_run(r, a->proto, z, 0, size, 0, withscores, 0);
        bound_reply(ctx, r, mark);
        return;
    }
    uint32_t n = (uint32_t)count, *v = st_xmalloc((size_t)size * sizeof(*v));
    for (uint32_t k = 0; k < size; k++)
        v[k] = k;
    for (uint32_t i = 0; i < n; i++) { /* a partial shuffle of the ranks: n distinct members */
        uint32_t j = i + (uint32_t)(rng_next(a) % (size - i)), t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
    resp_array(r, withscores && a->proto < 3 ? 2 * (long long)n : n);
    for (uint32_t i = 0; i < n; i++) {
        st_zel_t x;
        st_zset_at(z, v[i], &x);
        st_zset_reply_member(r, a->proto, &x, withscores, withscores && a->proto >= 3);
        if (ctx->max_reply && r->len - mark > ctx->max_reply) break;
        if (i % 1024 == 1023) st_hash_mat_reset(ctx); /* pages' copies, replied */
    }
    free(v);
    bound_reply(ctx, r, mark);
}

/* ---- ZSCAN ---- */

typedef struct zscan_arg {
    st_zset_t *z;
    const rec_arg_t *pat;
    st_scan_out_t out;
} zscan_arg_t;

static void zscan_visit(zscan_arg_t *x, const st_zel_t *e)
{
    x->out.visited++;
    if (x->pat && !glob_match((const char *)x->pat->ptr, x->pat->len, e->m, e->n, 0)) return;
    resp_bulk(&x->out.body, e->m, e->n);
    resp_double(&x->out.body, 2, e->score); /* a bulk string in RESP3 too */
    x->out.n++;
}

static uint64_t zscan_step(void *arg, uint64_t cursor)
{
    zscan_arg_t *x = arg;
    uint32_t len = st_zset_len(x->z);
    st_zel_t e;
    if (!st_zset_is_skiplist(x->z)) { /* a listpack: all of it at once, as Redis */
        st_zset_iter_t it;
        st_zset_iter_init(&it, x->z, 0, len, 0);
        while (st_zset_next(&it, &e))
            zscan_visit(x, &e);
        st_zset_iter_free(&it);
        return 0;
    }
    if (cursor >= len) return 0;
    st_zset_at(x->z, (uint32_t)cursor, &e);
    zscan_visit(x, &e);
    return cursor + 1 < len ? cursor + 1 : 0;
}

void st_read_zscan(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    uint64_t cursor;
    long long count;
    zscan_arg_t x = {NULL, NULL, {{0}, 0, 0, 2}};
    idx_entry_t *e = st_scan_key_begin(a, ST_ZSET, &cursor, &count, &x.pat, r);
    if (!e) return;
    x.z = st_ent_zset(e);
    buf_init(&x.out.body);
    st_scan_reply(ctx, cursor, count, zscan_step, &x, &x.out, r);
    buf_free(&x.out.body);
}

/* ---- ZUNION, ZINTER, ZDIFF, ZINTERCARD ---- */

static void read_setop(store_ctx_t *ctx, const read_args_t *a, buf_t *r, int op, const char *cmd)
{
    zs_setop_t o = {op, 0, 0};
    uint64_t count;
    int failed;
    zs_limits_t l = {0, 0};
    st_zset_t *z = zs_setop(a->db, a->now, 0, a->argv, a->argc, &o, cmd, 0, l, &count, &failed, r);
    if (failed) return;
    if (!z) {
        resp_array(r, 0);
        return;
    }
    size_t mark = r->len;
    zs_reply_run(r, a->proto, z, 0, st_zset_len(z), 0, o.withscores, 0);
    st_zset_ops.free((st_obj_t *)z);
    bound_reply(ctx, r, mark);
}

void st_read_zunion(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    read_setop(ctx, a, r, ZS_UNION, "zunion");
}

void st_read_zinter(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    read_setop(ctx, a, r, ZS_INTER, "zinter");
}

void st_read_zdiff(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    read_setop(ctx, a, r, ZS_DIFF, "zdiff");
}

void st_read_zintercard(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    zs_setop_t o = {ZS_INTER, -1, 0};
    uint64_t count;
    int failed;
    zs_limits_t l = {0, 0};
    zs_setop(a->db, a->now, 0, a->argv, a->argc, &o, "zintercard", 1, l, &count, &failed, r);
    if (!failed) resp_integer(r, (long long)count);
}
