/*
 * t_list.c - the store's list commands (handlers.h): the writes LPUSH,
 * RPUSH, LPUSHX, RPUSHX (CMD_LPUSH), LPOP, RPOP (CMD_LPOP), LSET, LTRIM,
 * LREM, LINSERT, LMOVE and RPOPLPUSH (CMD_LMOVE), LMPOP, and the reads
 * LLEN, LINDEX, LRANGE, LPOS. Store process only; a type handler (calls
 * core/, called by route.c) following route.c's determinism rules.
 *
 * A list is core/list.c's chunks of elements, in RAM or in pages of the
 * log (D63). Redis 7.0 answers "quicklist" for every list's encoding, so
 * no record needs to carry a limit: the structure's limits are constants.
 * An emptied list is deleted, as in Redis. Each RAM element added to a
 * list in the index is counted in the live-bytes table here, each one
 * dropped uncounted (object.h, count_log); pages are counted by the list
 * itself. Scans (LRANGE, LPOS, LREM, LINSERT's pivot) walk the list with
 * its iterator, reading each page once.
 *
 * The frontend checks what Redis checks before it looks the key up
 * (frontend/cmd/t_list.c); the checks Redis makes after (LSET's index)
 * are made here, in Redis' order.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "handlers.h"
#include "log.h"
#include "pubsub.h"
#include "resp.h"
#include "record.h"
#include "store/core/alloc.h"
#include "store/core/block.h"
#include "store/core/entry.h"
#include "store/core/list.h"
#include "store/core/object.h"
#include "store/core/value.h"
#include "store/core/watch.h"
#include "strutil.h"

#define ERR_NOT_INT "ERR value is not an integer or out of range"

/* 1 when element x's bytes are p[0, n), 0 when not, -1 on an I/O error
 * (logged). */
static int elem_eq(store_ctx_t *ctx, const st_lelem_t *x, const void *p, uint32_t n)
{
    if (st_lelem_len(x) != n) return 0;
    const unsigned char *v;
    unsigned char *tmp = NULL;
    size_t cap = 0;
    int rc = st_lelem_bytes(ctx, x, &v, &tmp, &cap);
    int eq = rc ? -1 : memcmp(v, p, n) == 0;
    free(tmp);
    return eq;
}

/* elem_eq while applying a record: an unreadable log cannot be followed. */
static int elem_eq_apply(store_ctx_t *ctx, const st_lelem_t *x, const void *p, uint32_t n)
{
    int eq = elem_eq(ctx, x, p, n);
    if (eq < 0) {
        log_warn("store: cannot read a list element back from the log while applying a "
                 "record: the state would no longer follow the log; stopping");
        exit(EXIT_FATAL);
    }
    return eq;
}

static void account(store_ctx_t *ctx, const st_list_t *l, uint64_t before)
{
    ctx->entry_bytes += st_list_bytes(l) - before;
}

/* Add element e to l (in the index) at i, counting its log bytes. */
static void add_at(store_ctx_t *ctx, st_list_t *l, uint32_t i, idx_entry_t *e)
{
    st_list_insert(ctx, l, i, e);
    st_ent_live_add(&ctx->live, e, 1);
}

/* Take element i out of l, uncounting its log bytes (the caller frees). */
static idx_entry_t *take_at(store_ctx_t *ctx, st_list_t *l, uint32_t i)
{
    idx_entry_t *e = st_list_take(ctx, l, i);
    st_ent_live_add(&ctx->live, e, -1);
    return e;
}

/* A new empty list at key (absent), in the index. */
static st_list_t *create(st_db_t *db, const rec_arg_t *key)
{
    st_list_t *l = st_list_new();
    st_ent_store(db, NULL, st_ent_new_obj(key, (st_obj_t *)l, 0));
    return l;
}

/* ---- writes ---- */

#define PUSH_RIGHT 1u
#define PUSH_X     2u

/* CMD_LPUSH key mode element...: mode's PUSH_RIGHT (RPUSH), PUSH_X (the X
 * forms: only onto an existing list). */
void st_apply_lpush(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    uint32_t mode = cmd_get_u32(a->argv[1].ptr);
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (st_wrongtype(slot, ST_LIST, r)) return;
    if (!slot && (mode & PUSH_X)) {
        if (r) resp_integer(r, 0);
        return;
    }
    st_list_t *l = slot ? st_ent_list(*slot) : create(a->db, &a->argv[0]);
    uint64_t before = st_list_bytes(l);
    for (uint16_t i = 2; i < a->argc; i++) {
        idx_entry_t *e = st_list_elem_new(a->argv[i].ptr, a->argv[i].len, st_arg_lsn(a, i));
        add_at(ctx, l, (mode & PUSH_RIGHT) ? st_list_len(l) : 0, e);
    }
    account(ctx, l, before);
    st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    if (r) resp_integer(r, st_list_len(l));
}

/* Pop n elements of the list at *slot from its head (or tail), replying
 * each as a bulk string when r is not NULL; an emptied list is deleted. */
static void pop_n(store_ctx_t *ctx, const apply_args_t *a, const rec_arg_t *key, idx_entry_t **slot,
                  int right, uint32_t n, buf_t *r)
{
    st_list_t *l = st_ent_list(*slot);
    uint64_t before = st_list_bytes(l);
    for (uint32_t k = 0; k < n; k++) {
        idx_entry_t *e = take_at(ctx, l, right ? st_list_len(l) - 1 : 0);
        if (r) st_reply_value(ctx, e, r);
        st_list_elem_free(e);
    }
    account(ctx, l, before);
    /* LPOP, LMPOP, BLPOP and a pop served inside a push say the pop */
    st_key_changed_as(ctx, a, a->dbnum, key, PS_NOTIFY_LIST, right ? "rpop" : "lpop");
    if (!st_list_len(l)) st_remove(a->db, slot);
}

/* CMD_LPOP key right proto count (-1: none given). */
void st_apply_lpop(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    int right = cmd_get_u32(a->argv[1].ptr) != 0;
    int proto = (int)cmd_get_u32(a->argv[2].ptr);
    long long count = cmd_get_i64(a->argv[3].ptr);
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (!slot) {
        if (r && count < 0)
            resp_null3(r, proto);
        else if (r)
            resp_null_array3(r, proto);
        return;
    }
    if (st_wrongtype(slot, ST_LIST, r)) return;
    uint32_t len = st_list_len(st_ent_list(*slot));
    if (count < 0) {
        pop_n(ctx, a, &a->argv[0], slot, right, 1, r);
        return;
    }
    uint32_t n = (uint64_t)count < len ? (uint32_t)count : len;
    if (r) resp_array(r, n);
    if (n) pop_n(ctx, a, &a->argv[0], slot, right, n, r);
}

/* CMD_LSET key index element: the index is checked after the key, as
 * Redis does. */
void st_apply_lset(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (!slot) {
        if (r) resp_error(r, "ERR no such key");
        return;
    }
    if (st_wrongtype(slot, ST_LIST, r)) return;
    long long idx;
    if (str_to_ll((const char *)a->argv[1].ptr, a->argv[1].len, &idx)) {
        if (r) resp_error(r, ERR_NOT_INT);
        return;
    }
    st_list_t *l = st_ent_list(*slot);
    long long len = st_list_len(l);
    if (idx < 0) idx += len;
    if (idx < 0 || idx >= len) {
        if (r) resp_error(r, "ERR index out of range");
        return;
    }
    uint64_t before = st_list_bytes(l);
    idx_entry_t *e = st_list_elem_new(a->argv[2].ptr, a->argv[2].len, st_arg_lsn(a, 2));
    st_ent_live_add(&ctx->live, e, 1);
    idx_entry_t *old = st_list_replace(ctx, l, (uint32_t)idx, e);
    st_ent_live_add(&ctx->live, old, -1);
    st_list_elem_free(old);
    account(ctx, l, before);
    st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    if (r) resp_simple(r, "OK");
}

/* Redis' range of [start, stop] over len elements: 0 when empty, else 1
 * with *from and *n set. */
static int clamp_range(long long start, long long stop, long long len, uint32_t *from, uint32_t *n)
{
    if (start < 0) start += len;
    if (stop < 0) stop += len;
    if (start < 0) start = 0;
    if (start > stop || start >= len) return 0;
    if (stop >= len) stop = len - 1;
    *from = (uint32_t)start;
    *n = (uint32_t)(stop - start + 1);
    return 1;
}

/* CMD_LTRIM key start stop. */
void st_apply_ltrim(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    long long start = cmd_get_i64(a->argv[1].ptr), stop = cmd_get_i64(a->argv[2].ptr);
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (st_wrongtype(slot, ST_LIST, r)) return;
    if (slot) {
        st_list_t *l = st_ent_list(*slot);
        uint32_t len = st_list_len(l), from = 0, n = 0;
        if (!clamp_range(start, stop, len, &from, &n)) from = n = 0;
        uint64_t before = st_list_bytes(l);
        /* Whole chunks and pages go without a read (D63). */
        st_list_trim(ctx, l, from, len - from - n);
        account(ctx, l, before);
        st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
        if (!st_list_len(l)) st_remove(a->db, slot);
    }
    if (r) resp_simple(r, "OK");
}

/* CMD_LREM key count element. */
void st_apply_lrem(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    long long count = cmd_get_i64(a->argv[1].ptr);
    const rec_arg_t *v = &a->argv[2];
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (st_wrongtype(slot, ST_LIST, r)) return;
    long long removed = 0;
    if (slot) {
        st_list_t *l = st_ent_list(*slot);
        uint64_t before = st_list_bytes(l);
        unsigned long long want =
            count < 0 ? -(unsigned long long)count : (unsigned long long)count;
        /* The matches' positions first (one pass over the pages), then
         * taken out from the last, so that the earlier ones stay put. */
        uint32_t len = st_list_len(l), *at = NULL, nat = 0, cap = 0;
        st_list_iter_t it;
        st_lelem_t x;
        st_list_iter_init(&it, l, count < 0 ? len - 1 : 0, len, count < 0);
        for (uint32_t k = 0; st_list_next(&it, &x) && (!want || nat < want); k++) {
            if (!elem_eq_apply(ctx, &x, v->ptr, v->len)) continue;
            if (nat == cap) {
                cap = cap ? cap * 2 : 16;
                at = st_xrealloc(at, (size_t)cap * sizeof(*at));
            }
            at[nat++] = count < 0 ? len - 1 - k : k;
        }
        st_list_iter_free(&it);
        for (uint32_t t = 0; t < nat; t++) /* the last position first */
            st_list_elem_free(take_at(ctx, l, count < 0 ? at[t] : at[nat - 1 - t]));
        free(at);
        removed = nat;
        account(ctx, l, before);
        if (removed) st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
        if (!st_list_len(l)) st_remove(a->db, slot);
    }
    if (r) resp_integer(r, removed);
}

/* CMD_LINSERT key after pivot element. */
void st_apply_linsert(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    int after = cmd_get_u32(a->argv[1].ptr) != 0;
    const rec_arg_t *pivot = &a->argv[2];
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (!slot) {
        if (r) resp_integer(r, 0);
        return;
    }
    if (st_wrongtype(slot, ST_LIST, r)) return;
    st_list_t *l = st_ent_list(*slot);
    uint32_t len = st_list_len(l), i = 0;
    st_list_iter_t it;
    st_lelem_t x;
    st_list_iter_init(&it, l, 0, len, 0);
    while (st_list_next(&it, &x) && !elem_eq_apply(ctx, &x, pivot->ptr, pivot->len))
        i++;
    st_list_iter_free(&it);
    if (i == len) {
        if (r) resp_integer(r, -1);
        return;
    }
    uint64_t before = st_list_bytes(l);
    add_at(ctx, l, i + (uint32_t)after,
           st_list_elem_new(a->argv[3].ptr, a->argv[3].len, st_arg_lsn(a, 3)));
    account(ctx, l, before);
    st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    if (r) resp_integer(r, st_list_len(l));
}

/* Move the head (or tail) element of the list at *sslot (src) to an end
 * of dst (a list, or absent), replying it when r is not NULL. */
static void move_elem(store_ctx_t *ctx, const apply_args_t *a, const rec_arg_t *src,
                      idx_entry_t **sslot, const rec_arg_t *dst, int from_right, int to_right,
                      buf_t *r)
{
    st_list_t *s = st_ent_list(*sslot);
    uint64_t before = st_list_bytes(s);
    idx_entry_t *e = take_at(ctx, s, from_right ? st_list_len(s) - 1 : 0);
    account(ctx, s, before);
    if (!st_list_len(s)) st_remove(a->db, sslot);
    idx_entry_t **dslot = st_find_live(a->db, dst, ctx->now, 0);
    st_list_t *d = dslot ? st_ent_list(*dslot) : create(a->db, dst);
    before = st_list_bytes(d);
    add_at(ctx, d, to_right ? st_list_len(d) : 0, e);
    account(ctx, d, before);
    /* Redis 7.0 tells the push, then the pop (and "del" of an emptied
     * source), whether LMOVE ran now or served a blocked BLMOVE */
    st_key_changed_as(ctx, a, a->dbnum, dst, PS_NOTIFY_LIST, to_right ? "rpush" : "lpush");
    st_key_changed_as(ctx, a, a->dbnum, src, PS_NOTIFY_LIST, from_right ? "rpop" : "lpop");
    if (r) st_reply_value(ctx, e, r);
}

/* LMOVE's lookups in Redis 7.0's order: a missing source is null whatever
 * the destination holds; a destination of another type changes nothing.
 * Returns 1 when done (moved, or an error replied), 0 when the source is
 * missing (nothing replied). */
static int lmove_now(store_ctx_t *ctx, const apply_args_t *a, const rec_arg_t *src,
                     const rec_arg_t *dst, int from_right, int to_right, buf_t *r)
{
    st_find_live(a->db, src, ctx->now, 1);
    idx_entry_t **dslot = st_find_live(a->db, dst, ctx->now, 1);
    idx_entry_t **sslot = st_find_live(a->db, src, ctx->now, 0); /* reaping dst may move it */
    if (!sslot) return 0;
    if (st_wrongtype(sslot, ST_LIST, r) || st_wrongtype(dslot, ST_LIST, r)) return 1;
    move_elem(ctx, a, src, sslot, dst, from_right, to_right, r);
    return 1;
}

/* CMD_LMOVE source destination from_right to_right proto (RPOPLPUSH too). */
void st_apply_lmove(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    int from_right = cmd_get_u32(a->argv[2].ptr) != 0;
    int to_right = cmd_get_u32(a->argv[3].ptr) != 0;
    int proto = (int)cmd_get_u32(a->argv[4].ptr);
    if (!lmove_now(ctx, a, &a->argv[0], &a->argv[1], from_right, to_right, r) && r)
        resp_null3(r, proto);
}

/* Pop from the list at *slot (key) for a BLPOP-shaped reply: [key,
 * element], or BLMPOP's [key, [up to count elements]] when count >= 1. */
static void pop_keyed(store_ctx_t *ctx, const apply_args_t *a, const rec_arg_t *key,
                      idx_entry_t **slot, int right, long long count, buf_t *r)
{
    uint32_t len = st_list_len(st_ent_list(*slot)), n = 1;
    if (r) {
        resp_array(r, 2);
        resp_bulk(r, key->ptr, key->len);
    }
    if (count >= 1) {
        n = (uint64_t)count < len ? (uint32_t)count : len;
        if (r) resp_array(r, n);
    }
    pop_n(ctx, a, key, slot, right, n, r);
}

/* CMD_LMPOP numkeys right count proto key... (the user's LEFT|RIGHT and
 * COUNT after the keys are ignored): from the first key holding a list (a
 * key of another type before it is WRONGTYPE, as Redis). */
void st_apply_lmpop(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    uint32_t nkeys = cmd_get_u32(a->argv[0].ptr);
    int right = cmd_get_u32(a->argv[1].ptr) != 0;
    long long count = cmd_get_i64(a->argv[2].ptr);
    int proto = (int)cmd_get_u32(a->argv[3].ptr);
    if (nkeys > (uint32_t)a->argc - 4) nkeys = (uint32_t)a->argc - 4;
    uint32_t i;
    int wrong;
    idx_entry_t **slot =
        st_first_live_of(a->db, &a->argv[4], nkeys, ST_LIST, ctx->now, &i, &wrong, r);
    if (slot)
        pop_keyed(ctx, a, &a->argv[4 + i], slot, right, count, r);
    else if (!wrong && r)
        resp_null_array3(r, proto);
}

/* ---- blocking pops (core/block.c, D36) ---- */

/* CMD_BLPOP client_id proto right kind count key... (BLPOP BRPOP: kind
 * ST_BLOCK_LIST_POP; BLMPOP: ST_BLOCK_LIST_MPOP with its COUNT): from the
 * first key holding a list, as LMPOP; when none does, the client waits. */
void st_apply_blpop(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    st_waiter_spec_t sp = {.client_id = (uint64_t)cmd_get_i64(a->argv[0].ptr),
                           .proto = (uint8_t)cmd_get_u32(a->argv[1].ptr),
                           .right = cmd_get_u32(a->argv[2].ptr) != 0,
                           .kind = cmd_get_u32(a->argv[3].ptr) == ST_BLOCK_LIST_MPOP
                                       ? ST_BLOCK_LIST_MPOP
                                       : ST_BLOCK_LIST_POP,
                           .count = cmd_get_i64(a->argv[4].ptr),
                           .nkeys = (uint32_t)a->argc - 5,
                           .keys = &a->argv[5]};
    if (sp.kind == ST_BLOCK_LIST_POP) sp.count = -1;
    uint32_t i;
    int wrong;
    idx_entry_t **slot =
        st_first_live_of(a->db, sp.keys, sp.nkeys, ST_LIST, ctx->now, &i, &wrong, r);
    if (slot)
        pop_keyed(ctx, a, &sp.keys[i], slot, sp.right, sp.count, r);
    else if (!wrong)
        st_block_wait(ctx, a, &sp, r);
}

/* CMD_BLMOVE client_id proto from_right to_right source destination
 * (BLMOVE, BRPOPLPUSH): LMOVE now, or wait on the source. */
void st_apply_blmove(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    st_waiter_spec_t sp = {.client_id = (uint64_t)cmd_get_i64(a->argv[0].ptr),
                           .proto = (uint8_t)cmd_get_u32(a->argv[1].ptr),
                           .right = cmd_get_u32(a->argv[2].ptr) != 0,
                           .to_right = cmd_get_u32(a->argv[3].ptr) != 0,
                           .kind = ST_BLOCK_LIST_MOVE,
                           .nkeys = 1,
                           .keys = &a->argv[4],
                           .dst = a->argv[5]};
    if (lmove_now(ctx, a, &a->argv[4], &a->argv[5], sp.right, sp.to_right, r)) return;
    st_block_wait(ctx, a, &sp, r);
}

int st_list_serve(store_ctx_t *ctx, const apply_args_t *a, st_waiter_t *w, const rec_arg_t *key,
                  buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    if (!slot || st_ent_type(*slot) != ST_LIST) return ST_NOT_SERVED;
    if (w->kind != ST_BLOCK_LIST_MOVE) {
        pop_keyed(ctx, a, key, slot, w->right, w->count, r);
        return ST_SERVED;
    }
    /* Redis 7.0 answers a waiter whose destination holds another type
     * with WRONGTYPE and leaves the source as it was. */
    idx_entry_t **dslot = st_find_live(a->db, &w->dst, ctx->now, 1);
    if (st_wrongtype(dslot, ST_LIST, r)) return ST_REFUSED;
    slot = st_find_live(a->db, key, ctx->now, 0); /* reaping dst may move it */
    move_elem(ctx, a, key, slot, &w->dst, w->right, w->to_right, r);
    return ST_SERVED;
}

/* ---- reads ---- */

static st_list_t *lookup_read(const read_args_t *a, buf_t *r, int *wrong)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    *wrong = st_wrongtype(slot, ST_LIST, r);
    return slot && !*wrong ? st_ent_list(*slot) : NULL;
}

void st_read_llen(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    int wrong;
    st_list_t *l = lookup_read(a, r, &wrong);
    if (!wrong) resp_integer(r, l ? st_list_len(l) : 0);
}

/* LINDEX key index: the key first, then the index, as Redis. */
void st_read_lindex(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    int wrong;
    st_list_t *l = lookup_read(a, r, &wrong);
    if (wrong) return;
    if (!l) {
        resp_null3(r, a->proto);
        return;
    }
    long long idx;
    if (str_to_ll((const char *)a->argv[1].ptr, a->argv[1].len, &idx)) {
        resp_error(r, ERR_NOT_INT);
        return;
    }
    long long len = st_list_len(l);
    if (idx < 0) idx += len;
    if (idx < 0 || idx >= len)
        resp_null3(r, a->proto);
    else
        st_reply_value(ctx, st_list_at(l, (uint32_t)idx), r);
}

/* LRANGE key start stop: the numbers first, then the key. */
void st_read_lrange(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    long long start, stop;
    if (str_to_ll((const char *)a->argv[1].ptr, a->argv[1].len, &start) ||
        str_to_ll((const char *)a->argv[2].ptr, a->argv[2].len, &stop)) {
        resp_error(r, ERR_NOT_INT);
        return;
    }
    int wrong;
    st_list_t *l = lookup_read(a, r, &wrong);
    if (wrong) return;
    uint32_t from = 0, n = 0;
    if (!l || !clamp_range(start, stop, st_list_len(l), &from, &n)) {
        resp_array(r, 0);
        return;
    }
    resp_array(r, n);
    st_list_iter_t it;
    st_lelem_t x;
    st_list_iter_init(&it, l, from, n, 0);
    while (st_list_next(&it, &x))
        st_lelem_reply(ctx, &x, r);
    st_list_iter_free(&it);
}

/* A LPOS option's number: Redis' getPositiveLongFromObjectOrReply with its
 * own text for any bad value. */
static int positive(const rec_arg_t *v, long long *out)
{
    return str_to_ll((const char *)v->ptr, v->len, out) == 0 && *out >= 0 ? 0 : -1;
}

/* LPOS key element [RANK rank] [COUNT count] [MAXLEN len]: the options
 * first, in Redis' order and texts, then the key. */
void st_read_lpos(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    long long rank = 1, count = -1, maxlen = 0;
    for (uint16_t j = 2; j < a->argc; j++) {
        const rec_arg_t *o = &a->argv[j];
        int more = j + 1 < a->argc;
        if (more && o->len == 4 && strncasecmp((const char *)o->ptr, "RANK", 4) == 0) {
            j++;
            if (str_to_ll((const char *)a->argv[j].ptr, a->argv[j].len, &rank)) {
                resp_error(r, ERR_NOT_INT);
                return;
            }
            if (rank == 0) {
                resp_error(r, "ERR RANK can't be zero: use 1 to start from the first match, 2 "
                              "from the second ... or use negative to start from the end of "
                              "the list");
                return;
            }
        } else if (more && o->len == 5 && strncasecmp((const char *)o->ptr, "COUNT", 5) == 0) {
            if (positive(&a->argv[++j], &count)) {
                resp_error(r, "ERR COUNT can't be negative");
                return;
            }
        } else if (more && o->len == 6 && strncasecmp((const char *)o->ptr, "MAXLEN", 6) == 0) {
            if (positive(&a->argv[++j], &maxlen)) {
                resp_error(r, "ERR MAXLEN can't be negative");
                return;
            }
        } else {
            resp_error(r, "ERR syntax error");
            return;
        }
    }
    int wrong;
    st_list_t *l = lookup_read(a, r, &wrong);
    if (wrong) return;
    if (!l) {
        if (count != -1)
            resp_array(r, 0);
        else
            resp_null3(r, a->proto);
        return;
    }
    const rec_arg_t *v = &a->argv[1];
    uint32_t len = st_list_len(l);
    unsigned long long skip =
        rank < 0 ? -(unsigned long long)(rank + 1) : (unsigned long long)(rank - 1);
    /* Redis negates a negative rank to search from the tail; LLONG_MIN
     * stays negative there, so its "matches >= rank" holds from the first
     * match and its COUNT test (matches - rank + 1 >= count) wraps and
     * never holds: the tail's matches, all of them. Same replies here. */
    int rank_min = rank == LLONG_MIN;
    if (rank_min) skip = 0;
    buf_t body;
    buf_init(&body);
    long long found = 0;
    st_list_iter_t it;
    st_lelem_t x;
    st_list_iter_init(&it, l, rank < 0 ? len - 1 : 0, len, rank < 0);
    for (uint32_t k = 0; (!maxlen || k < (unsigned long long)maxlen) && st_list_next(&it, &x);
         k++) {
        uint32_t i = rank < 0 ? len - 1 - k : k;
        int eq = elem_eq(ctx, &x, v->ptr, v->len);
        if (eq < 0) {
            st_list_iter_free(&it);
            buf_free(&body);
            resp_error(r, "ERR I/O error reading a list element");
            return;
        }
        if (!eq) continue;
        if (skip) {
            skip--;
            continue;
        }
        resp_integer(&body, i);
        found++;
        if (count == -1 || (count && found == count && !rank_min)) break;
    }
    st_list_iter_free(&it);
    if (count != -1) {
        resp_array(r, found);
        buf_append(r, body.data, body.len);
    } else if (found) {
        buf_append(r, body.data, body.len);
    } else {
        resp_null3(r, a->proto);
    }
    buf_free(&body);
}
