/*
 * t_zset.c - the store's sorted-set writes (handlers.h): ZADD and ZINCRBY
 * (CMD_ZADD), ZREM, ZREMRANGEBYRANK/SCORE/LEX, ZPOPMIN and ZPOPMAX, ZMPOP,
 * ZRANGESTORE, ZUNIONSTORE/ZINTERSTORE/ZDIFFSTORE. Store process only; a
 * type handler (calls core/zset.c through zset_ops.c, called by route.c)
 * following route.c's determinism rules: no clock or randomness but the
 * record's.
 *
 * The records hold the user's words (common/command.h) and the checks are
 * Redis 7.0.15's, in its order, made here: a refused write changes
 * nothing, live or on replay. Encoding: listpack until a new member passes
 * the limits the record carries, then skiplist for good; the STORE forms
 * choose from the result's size (zset_ops.c). An empty sorted set does not
 * exist: the write that removes the last member removes the key.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "handlers.h"
#include "resp.h"
#include "store/core/alloc.h"
#include "store/core/entry.h"
#include "store/core/object.h"
#include "store/core/watch.h"
#include "store/core/zset.h"
#include "strutil.h"
#include "zset_ops.h"

static void account(store_ctx_t *ctx, const st_zset_t *z, uint64_t before)
{
    ctx->entry_bytes += st_zset_bytes(z) - before; /* modular: a decrease too */
}

static int word_is(const rec_arg_t *x, const char *w)
{
    size_t n = strlen(w);
    return x->len == n && strncasecmp((const char *)x->ptr, w, n) == 0;
}

enum { F_NX = 1, F_XX = 2, F_GT = 4, F_LT = 8, F_CH = 16, F_INCR = 32 };

/* CMD_ZADD key limits mode words...: zaddGenericCommand's order. */
void st_apply_zadd(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    zs_limits_t l = zs_get_limits(&a->argv[1]);
    uint32_t mode = cmd_get_u32(a->argv[2].ptr);
    int proto = (int)(mode & 0xff), flags = (mode & 0x100) ? F_INCR : 0;
    static const char *const words[] = {"nx", "xx", "gt", "lt", "ch", "incr"};
    uint16_t at = 3;
    for (; at < a->argc; at++) {
        int f = 0;
        for (int i = 0; i < 6 && !f; i++)
            if (word_is(&a->argv[at], words[i])) f = 1 << i;
        if (!f) break;
        flags |= f;
    }
    uint16_t elements = (uint16_t)(a->argc - at);
    const char *err = NULL;
    if (elements % 2 || !elements)
        err = "ERR syntax error";
    else if ((flags & F_NX) && (flags & F_XX))
        err = "ERR XX and NX options at the same time are not compatible";
    else if (((flags & F_GT) && (flags & F_NX)) || ((flags & F_LT) && (flags & F_NX)) ||
             ((flags & F_GT) && (flags & F_LT)))
        err = "ERR GT, LT, and/or NX options at the same time are not compatible";
    else if ((flags & F_INCR) && elements > 2)
        err = "ERR INCR option supports a single increment-element pair";
    for (uint16_t i = at; !err && i < a->argc; i += 2) {
        double s;
        if (zs_parse_score(&a->argv[i], &s)) err = ZS_ERR_NOT_FLOAT;
    }
    if (err) {
        if (r) resp_error(r, err);
        return;
    }
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (st_wrongtype(slot, ST_ZSET, r)) return;
    long long added = 0, updated = 0, processed = 0;
    double score = 0;
    if (!slot && (flags & F_XX)) goto reply;
    st_zset_t *z;
    if (slot) {
        z = st_ent_zset(*slot);
    } else {
        z = zs_new(a->db);
        st_ent_store(a->db, NULL, st_ent_new_obj(&a->argv[0], (st_obj_t *)z, 0));
    }
    uint64_t before = st_zset_bytes(z);
    for (uint16_t i = at; i < a->argc; i += 2) {
        const rec_arg_t *m = &a->argv[i + 1];
        zs_parse_score(&a->argv[i], &score);
        double cur;
        if (st_zset_score(z, m->ptr, m->len, &cur)) {
            if (flags & F_NX) continue;
            if (flags & F_INCR) {
                score += cur;
                if (isnan(score)) {
                    if (r) resp_error(r, "ERR resulting score is not a number (NaN)");
                    return; /* INCR takes one member: nothing changed yet */
                }
            }
            if (((flags & F_LT) && score >= cur) || ((flags & F_GT) && score <= cur)) continue;
            processed++;
            if (score != cur) {
                zs_add(ctx, z, l, m->ptr, m->len, score);
                updated++;
            }
        } else if (!(flags & F_XX)) {
            zs_add(ctx, z, l, m->ptr, m->len, score);
            added++;
            processed++;
        }
    }
    account(ctx, z, before);
    if (added || updated) st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
reply:
    if (!r) return;
    if (flags & F_INCR) {
        if (processed)
            resp_double(r, proto, score);
        else
            resp_null3(r, proto);
    } else {
        resp_integer(r, (flags & F_CH) ? added + updated : added);
    }
}

/* Remove the n members from rank from of the zset at *slot; the key goes
 * when empty. */
static long long remove_members(store_ctx_t *ctx, const apply_args_t *a, idx_entry_t **slot,
                                const rec_arg_t *key, uint32_t from, uint32_t n)
{
    st_zset_t *z = st_ent_zset(*slot);
    uint64_t before = st_zset_bytes(z);
    unsigned char *buf = NULL;
    size_t cap = 0;
    for (uint32_t i = 0; i < n; i++) {
        st_zel_t x;
        st_zset_take(ctx, z, from, &x, &buf, &cap);
    }
    free(buf);
    account(ctx, z, before);
    if (n) st_key_changed(ctx, a, a->dbnum, key);
    if (!st_zset_len(z)) st_remove(a->db, slot);
    return n;
}

/* CMD_ZREM key member... */
void st_apply_zrem(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (st_wrongtype(slot, ST_ZSET, r)) return;
    long long removed = 0;
    if (slot) {
        st_zset_t *z = st_ent_zset(*slot);
        uint64_t before = st_zset_bytes(z);
        for (uint16_t i = 1; i < a->argc; i++)
            removed += st_zset_del(ctx, z, a->argv[i].ptr, a->argv[i].len);
        account(ctx, z, before);
        if (removed) st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
        if (!st_zset_len(z)) st_remove(a->db, slot);
    }
    if (r) resp_integer(r, removed);
}

/* CMD_ZREMRANGEBYRANK key kind min max: the range is parsed before the
 * key is looked up, as Redis. */
void st_apply_zremrange(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    zs_spec_t s;
    memset(&s, 0, sizeof(s));
    const char *err;
    if (zs_parse_minmax((zs_by_t)cmd_get_u32(a->argv[1].ptr), &a->argv[2], &a->argv[3], &s, &err)) {
        if (r) resp_error(r, err);
        return;
    }
    s.limit = -1;
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (st_wrongtype(slot, ST_ZSET, r)) return;
    long long removed = 0;
    if (slot) {
        uint32_t from, n;
        zs_select(st_ent_zset(*slot), &s, &from, &n);
        removed = remove_members(ctx, a, slot, &a->argv[0], from, n);
    }
    if (r) resp_integer(r, removed);
}

/* CMD_ZPOPMIN key max count proto: the type first, then the count. */
void st_apply_zpop(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    int max = cmd_get_u32(a->argv[1].ptr) != 0;
    long long count = cmd_get_i64(a->argv[2].ptr);
    int proto = (int)cmd_get_u32(a->argv[3].ptr);
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (st_wrongtype(slot, ST_ZSET, r)) return;
    if (!slot || count == 0) {
        if (r) resp_array(r, 0);
        return;
    }
    uint32_t n = count < 0 ? 1 : count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;
    st_zset_pop(ctx, a, &a->argv[0], slot, max, n, proto, count < 0 ? ZS_POP_FLAT : ZS_POP_AUTO, r);
}

/* Pop from the zset at *slot for a command naming several keys: BZPOPMIN
 * and BZPOPMAX reply [key, member, score], ZMPOP and BZMPOP (mpop) [key,
 * [[member, score] ...]], as Redis 7.0 (a score is a double in RESP3). */
static void zpop_keyed(store_ctx_t *ctx, const apply_args_t *a, const rec_arg_t *key,
                       idx_entry_t **slot, int max, int mpop, int64_t count, int proto, buf_t *r)
{
    if (r) {
        resp_array(r, mpop ? 2 : 3);
        resp_bulk(r, key->ptr, key->len);
    }
    uint32_t n = !mpop || count < 1 ? 1 : count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;
    st_zset_pop(ctx, a, key, slot, max, n, proto, mpop ? ZS_POP_NESTED : ZS_POP_BARE, r);
}

/* CMD_ZMPOP numkeys max count proto key...: the first non-empty key's. */
void st_apply_zmpop(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    uint32_t nkeys = cmd_get_u32(a->argv[0].ptr);
    int max = cmd_get_u32(a->argv[1].ptr) != 0;
    long long count = cmd_get_i64(a->argv[2].ptr);
    int proto = (int)cmd_get_u32(a->argv[3].ptr);
    if (nkeys > (uint32_t)a->argc - 4) nkeys = (uint32_t)a->argc - 4;
    uint32_t i;
    int wrong;
    idx_entry_t **slot =
        st_first_live_of(a->db, &a->argv[4], nkeys, ST_ZSET, ctx->now, &i, &wrong, r);
    if (slot)
        zpop_keyed(ctx, a, &a->argv[4 + i], slot, max, 1, count, proto, r);
    else if (!wrong && r)
        resp_null_array3(r, proto);
}

/* ---- blocking pops (core/block.c, D36) ---- */

/* CMD_BZPOPMIN client_id proto max kind count key... (BZPOPMIN BZPOPMAX:
 * kind ST_BLOCK_ZSET_POP; BZMPOP: ST_BLOCK_ZSET_MPOP with its COUNT):
 * from the first key holding a zset (a key of another type before it is
 * WRONGTYPE); when none does, the client waits. */
void st_apply_bzpop(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    st_waiter_spec_t sp = {.client_id = (uint64_t)cmd_get_i64(a->argv[0].ptr),
                           .proto = (uint8_t)cmd_get_u32(a->argv[1].ptr),
                           .right = cmd_get_u32(a->argv[2].ptr) != 0,
                           .kind = cmd_get_u32(a->argv[3].ptr) == ST_BLOCK_ZSET_MPOP
                                       ? ST_BLOCK_ZSET_MPOP
                                       : ST_BLOCK_ZSET_POP,
                           .count = cmd_get_i64(a->argv[4].ptr),
                           .nkeys = (uint32_t)a->argc - 5,
                           .keys = &a->argv[5]};
    uint32_t i;
    int wrong;
    idx_entry_t **slot =
        st_first_live_of(a->db, sp.keys, sp.nkeys, ST_ZSET, ctx->now, &i, &wrong, r);
    if (slot)
        zpop_keyed(ctx, a, &sp.keys[i], slot, sp.right, sp.kind == ST_BLOCK_ZSET_MPOP, sp.count,
                   sp.proto, r);
    else if (!wrong)
        st_block_wait(ctx, a, &sp, r);
}

int st_zset_serve(store_ctx_t *ctx, const apply_args_t *a, st_waiter_t *w, const rec_arg_t *key,
                  buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    if (!slot || st_ent_type(*slot) != ST_ZSET) return ST_NOT_SERVED;
    zpop_keyed(ctx, a, key, slot, w->right, w->kind == ST_BLOCK_ZSET_MPOP, w->count, w->proto, r);
    return ST_SERVED;
}

/* Put result z (NULL: empty) at destination key: replaced whatever it
 * held, its TTL gone, or removed when the result is empty. */
static void store_result(store_ctx_t *ctx, const apply_args_t *a, st_zset_t *z, buf_t *r)
{
    idx_entry_t **dslot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (!z) {
        if (dslot) {
            st_remove(a->db, dslot);
            st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
        }
        if (r) resp_integer(r, 0);
        return;
    }
    uint32_t n = st_zset_len(z);
    st_ent_store(a->db, dslot, st_ent_new_obj(&a->argv[0], (st_obj_t *)z, 0));
    st_zset_seal(ctx, z);
    st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    if (r) resp_integer(r, n);
}

/* CMD_ZRANGESTORE destination limits source words... */
void st_apply_zrangestore(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    zs_limits_t l = zs_get_limits(&a->argv[1]);
    zs_spec_t s;
    buf_t err;
    buf_init(&err);
    if (zs_parse_range(CMD_ZRANGESTORE, &a->argv[3], (uint16_t)(a->argc - 3), &s, &err)) {
        if (r) buf_append(r, err.data, err.len);
        buf_free(&err);
        return;
    }
    buf_free(&err);
    idx_entry_t **slot = st_find_read(a->db, &a->argv[2], ctx->now, 1);
    if (st_wrongtype(slot, ST_ZSET, r)) return;
    st_zset_t *out = NULL;
    if (slot) {
        st_zset_t *z = st_ent_zset(*slot);
        uint32_t from, n;
        zs_select(z, &s, &from, &n);
        uint64_t maxlen = 0;
        st_zset_iter_t it;
        st_zel_t x;
        /* The encoding first (a listpack keeps -0 as 0), so two walks. */
        st_zset_iter_init(&it, z, from, n, s.rev);
        while (st_zset_next(&it, &x))
            if (x.n > maxlen) maxlen = x.n;
        st_zset_iter_free(&it);
        if (n) out = zs_new_result(a->db, l, n, maxlen);
        st_zset_iter_init(&it, z, from, n, s.rev);
        while (st_zset_next(&it, &x))
            zs_put(NULL, out, x.m, x.n, x.score);
        st_zset_iter_free(&it);
    }
    store_result(ctx, a, out, r);
}

/* CMD_ZUNIONSTORE destination limits op words (numkeys on). */
void st_apply_zstore(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    static const char *const names[] = {"zunionstore", "zinterstore", "zdiffstore"};
    zs_limits_t l = zs_get_limits(&a->argv[1]);
    uint32_t op = cmd_get_u32(a->argv[2].ptr);
    if (op > 2) op = 0;
    zs_setop_t o = {(int)op, -1, 0};
    uint64_t count;
    int failed;
    buf_t err;
    buf_init(&err);
    st_zset_t *z = zs_setop(a->db, ctx->now, 1, &a->argv[3], (uint16_t)(a->argc - 3), &o, names[op],
                            0, l, &count, &failed, &err);
    if (failed) {
        if (r) buf_append(r, err.data, err.len);
        buf_free(&err);
        return;
    }
    buf_free(&err);
    store_result(ctx, a, z, r);
}
