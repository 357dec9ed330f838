/*
 * keyspace.c - the store's key and database commands: DEL, the expiry
 * family, FLUSHALL, EXISTS, TTL, DBSIZE (state-internal.h). Store process
 * only; apply handlers follow the determinism rules of state.c.
 */
#include <stdint.h>

#include "resp.h"
#include "state-internal.h"

void st_apply_del(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    long long n = 0;
    for (uint16_t i = 0; i < a->argc; i++) {
        idx_entry_t **slot = st_find_live(a->db, &a->argv[i], ctx->now, 1);
        if (slot) {
            st_remove(a->db, slot);
            st_key_changed(ctx, a, a->dbnum, &a->argv[i]);
            n++;
        }
    }
    if (r) resp_integer(r, n);
}

void st_apply_pexpireat(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    int64_t when = cmd_get_i64(a->argv[1].ptr);
    uint32_t flags = cmd_get_u32(a->argv[2].ptr);
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    int ok = slot != NULL;
    if (ok) {
        /* Redis 7 expireGenericCommand: no TTL counts as an infinite one. */
        int64_t cur = (*slot)->expire_at_ms;
        if ((flags & EXPF_NX) && cur) ok = 0;
        if ((flags & EXPF_XX) && !cur) ok = 0;
        if ((flags & EXPF_GT) && (!cur || when <= cur)) ok = 0;
        if ((flags & EXPF_LT) && cur && when >= cur) ok = 0;
    }
    if (ok) {
        if (when <= ctx->now)
            st_remove(a->db, slot);
        else
            st_ent_set_expire(a->db, *slot, when);
        st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    }
    if (r) resp_integer(r, ok);
}

void st_apply_persist(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    int ok = slot && (*slot)->expire_at_ms;
    if (ok) {
        st_ent_set_expire(a->db, *slot, 0);
        st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    }
    if (r) resp_integer(r, ok);
}

void st_apply_flushall(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    /* Synchronous, as Redis' default (lazyfree-lazy-user-flush no). */
    for (int i = 0; i < ctx->ndb; i++) {
        idx_clear(&ctx->dbs[i]->ix);
        st_db_changed(ctx, a, (unsigned)i);
    }
    ctx->expire_cursor = 0;
    ctx->expire_db = 0;
    if (r) resp_simple(r, "OK");
}

/* CMD_TICK: store_apply has moved the apply clock; nothing else to do. */
void st_apply_tick(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)ctx;
    (void)a;
    (void)r;
}

/* ---- reads ---------------------------------------------------------- */

void st_read_exists(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    long long n = 0; /* duplicates count, as in Redis */
    for (uint16_t i = 0; i < a->argc; i++)
        n += st_find_live(a->db, &a->argv[i], a->now, 0) != NULL;
    resp_integer(r, n);
}

/* TTL (seconds, rounded) and PTTL. */
static void reply_ttl(const read_args_t *a, buf_t *r, int ms)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    if (!slot) {
        resp_integer(r, -2);
    } else if (!(*slot)->expire_at_ms) {
        resp_integer(r, -1);
    } else {
        long long ttl = (*slot)->expire_at_ms - a->now;
        if (ttl < 0) ttl = 0;
        resp_integer(r, ms ? ttl : (ttl + 500) / 1000);
    }
}

void st_read_ttl(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    reply_ttl(a, r, 0);
}

void st_read_pttl(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    reply_ttl(a, r, 1);
}

typedef struct count_arg {
    int64_t now;
    uint64_t n;
} count_arg_t;

static int count_expired_at(void *arg, idx_entry_t *e)
{
    count_arg_t *c = arg;
    if (e->expire_at_ms && e->expire_at_ms <= c->now) c->n++;
    return 0;
}

void st_read_dbsize(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    /* Redis deletes an expired key as soon as a command touches it, so its
     * DBSIZE stops counting a key a GET has already called missing. Our
     * reads must not remove anything (removal is a state change: it happens
     * by the apply clock, within about a second thanks to CMD_TICK), so keys
     * expired by the wall clock but not yet reclaimed are left out of the
     * count instead. That walks the keys, but only in the moments after
     * some key's TTL ran out (next_expiry says when none can have). */
    uint64_t n = idx_count(&a->db->ix);
    if (a->db->expires > 0 && a->now >= a->db->next_expiry) {
        count_arg_t c = {a->now, 0};
        idx_foreach(&a->db->ix, count_expired_at, &c);
        n -= c.n;
    }
    resp_integer(r, (long long)n);
}
