/*
 * state.c - the store's state machine as a whole (store-internal.h): the
 * context (creating and destroying it with its databases), the counters
 * and statistics the store process publishes, background maintenance
 * (incremental rehashing and active expiry by the apply clock), and the
 * digest tests and tools compare states by. Records and read requests are
 * routed to their handlers by route.c.
 *
 * Run by the store process only (and by tests and tools, which drive it
 * directly). Single-threaded. Invariant: active expiry removes keys by the
 * apply clock (ctx->now), never the wall clock, so what it removes is
 * invisible to every later record whether it ran or not, and replay
 * reaches the same state (ARCHITECTURE.md, contract 4). A crash loses
 * nothing: the state is rebuilt by replaying the durable log.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "io.h"
#include "log.h"
#include "store/core/alloc.h"
#include "store/core/entry.h"
#include "store/core/hash.h"
#include "store/core/index.h"
#include "store/core/object.h"
#include "store/core/stream.h"
#include "store/core/value.h"
#include "store/core/block.h"
#include "store/core/notify.h"
#include "store/core/watch.h"
#include "store/store-internal.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* ---- context ---------------------------------------------------------- */

store_ctx_t *store_ctx_create(const config_t *cfg, uint64_t seed)
{
    store_ctx_t *ctx = calloc(1, sizeof(*ctx));
    if (!ctx) return NULL;
    ctx->reply_pin = UINT64_MAX;
    ctx->dir = strdup(cfg->dir ? cfg->dir : ".");
    ctx->segment_size = cfg->segment_size;
    ctx->max_bulk = cfg->proto_max_bulk_len;
    st_live_init(&ctx->live, ctx->segment_size);
    st_groups_init(&ctx->groups, &ctx->live);
    st_access_init(&ctx->access, seed);
    ctx->access.policy = cfg->maxmemory_policy;
    ctx->access.samples = (int)cfg->maxmemory_samples;
    ctx->access.lfu_log_factor = cfg->lfu_log_factor;
    ctx->list_fill = cfg->list_max_listpack_size;
    ctx->list_compress_depth = cfg->list_compress_depth;
    ctx->rdb_compression = cfg->rdb_compression;
    ctx->access.lfu_decay_time = cfg->lfu_decay_time;
    ctx->args_cap = 16;
    ctx->args = malloc(ctx->args_cap * sizeof(rec_arg_t));
    for (unsigned i = 0; i < STORE_FD_CACHE; i++)
        ctx->fds[i].fd = -1;
    ctx->ndb = cfg->databases > 0 ? cfg->databases : 16;
    ctx->dbs = calloc((size_t)ctx->ndb, sizeof(*ctx->dbs));
    if (cfg->cluster_enabled) {
        /* The master checked the file before anything started. */
        char err[512];
        ctx->cluster = malloc(sizeof(*ctx->cluster));
        if (!ctx->cluster || cluster_load_config(ctx->cluster, cfg, err, sizeof(err)) != 0) {
            log_warn("FATAL: %s", ctx->cluster ? err : "out of memory for the cluster topology");
            store_ctx_destroy(ctx);
            return NULL;
        }
    }
    if (!ctx->dir || !ctx->args || !ctx->dbs) {
        store_ctx_destroy(ctx);
        return NULL;
    }
    for (int i = 0; i < ctx->ndb; i++) {
        st_db_t *db = calloc(1, sizeof(*db));
        if (!db) {
            store_ctx_destroy(ctx);
            return NULL;
        }
        db->ctx = ctx;
        db->next_expiry = db->pass_min = db->set_min = INT64_MAX;
        /* Each database gets its own seed, from the one given. */
        if (idx_init(&db->ix, seed + 0x9E3779B97F4A7C15ull * (uint64_t)i, st_ent_free, db)) {
            free(db);
            store_ctx_destroy(ctx);
            return NULL;
        }
        ctx->dbs[i] = db;
    }
    ctx->on_expired = st_notify_expired;
    ctx->on_new = st_notify_new;
    ctx->on_miss = st_notify_keymiss;
    return ctx;
}

void store_ctx_destroy(store_ctx_t *ctx)
{
    if (!ctx) return;
    for (int i = 0; ctx->dbs && i < ctx->ndb; i++) {
        if (!ctx->dbs[i]) continue;
        idx_destroy(&ctx->dbs[i]->ix);
        free(ctx->dbs[i]);
    }
    free(ctx->dbs);
    st_groups_free(&ctx->groups);
    st_access_free(&ctx->access);
    st_watch_free(ctx);
    st_block_free(ctx);
    free(ctx->exec.outer);
    free(ctx->exec.nested);
    free(ctx->notes);
    for (unsigned i = 0; i < STORE_FD_CACHE; i++)
        if (ctx->fds[i].fd >= 0) io->close(ctx->fds[i].fd);
    st_live_free(&ctx->live);
    st_vsnap_free(ctx->reply_stream);
    st_hash_pg_ctx_free(ctx);
    st_stream_ctx_free(ctx);
    free(ctx->args);
    free(ctx->dir);
    free(ctx->cluster);
    free(ctx);
}

void store_set_max_reply(store_ctx_t *ctx, uint64_t max_reply)
{
    ctx->max_reply = max_reply;
}

void store_set_reply_parts(store_ctx_t *ctx, int ok)
{
    ctx->reply_stream_ok = ok;
}

store_vsnap_t *store_take_reply_parts(store_ctx_t *ctx)
{
    store_vsnap_t *v = ctx->reply_stream;
    ctx->reply_stream = NULL;
    return v;
}

void store_set_reply_pin(store_ctx_t *ctx, uint64_t lsn)
{
    ctx->reply_pin = lsn;
}

int store_vsnap_is_gen(const store_vsnap_t *v)
{
    return st_vsnap_is_gen(v);
}

int store_vsnap_next(store_ctx_t *ctx, store_vsnap_t *v, buf_t *out, size_t max)
{
    return st_vsnap_gen_next(ctx, v, out, max);
}

uint64_t store_vsnap_len(const store_vsnap_t *v)
{
    return st_vsnap_len(v);
}

uint64_t store_vsnap_lowest(const store_vsnap_t *v)
{
    return st_vsnap_lowest(v);
}

int store_vsnap_read(store_ctx_t *ctx, store_vsnap_t *v, uint64_t off, uint64_t n, void *dst)
{
    return st_vsnap_read(ctx, v, off, n, dst);
}

void store_vsnap_free(store_vsnap_t *v)
{
    st_vsnap_free(v);
}

uint64_t store_applied(const store_ctx_t *ctx)
{
    return ctx->applied;
}

void store_set_applied(store_ctx_t *ctx, uint64_t lsn)
{
    ctx->applied = lsn;
}

int64_t store_now(const store_ctx_t *ctx)
{
    return ctx->now;
}

uint64_t store_key_count(const store_ctx_t *ctx)
{
    uint64_t n = 0;
    for (int i = 0; i < ctx->ndb; i++)
        n += idx_count(&ctx->dbs[i]->ix);
    return n;
}

int store_cache_allowed(const store_ctx_t *ctx)
{
    return ctx->rcache && !config_policy_by_access(ctx->access.policy);
}

/* The entry of key as a fill of the read cache sees it (*e NULL: absent),
 * or -1 when nothing may be filled for it (no cache, the policy, no such
 * database). */
static int cache_lookup(store_ctx_t *ctx, unsigned dbnum, const void *key, uint32_t klen,
                        int64_t now, idx_entry_t **e)
{
    st_db_t *db = store_cache_allowed(ctx) ? st_db(ctx, dbnum) : NULL;
    if (!db) return -1;
    rec_arg_t k = {key, klen};
    idx_entry_t **slot = st_find_quiet(db, &k, now);
    *e = slot ? *slot : NULL;
    return 0;
}

int store_get_cacheable(store_ctx_t *ctx, unsigned dbnum, const void *key, uint32_t klen,
                        int64_t now)
{
    idx_entry_t *e;
    if (cache_lookup(ctx, dbnum, key, klen, now, &e) < 0) return -1;
    if (!e) return 0;
    return st_ent_type(e) == ST_STRING && !st_ent_expire(e) ? 1 : -1;
}

int store_key_cacheable(store_ctx_t *ctx, unsigned dbnum, const void *key, uint32_t klen,
                        int64_t now)
{
    idx_entry_t *e;
    return cache_lookup(ctx, dbnum, key, klen, now, &e) == 0 && e && !st_ent_expire(e);
}

uint64_t store_expire_count(const store_ctx_t *ctx)
{
    return ctx->expires;
}

int store_db_count(const store_ctx_t *ctx)
{
    return ctx->ndb;
}

void store_db_stats(const store_ctx_t *ctx, int dbnum, uint64_t *keys, uint64_t *expires)
{
    const st_db_t *db = ctx->dbs[dbnum];
    *keys = idx_count(&db->ix);
    *expires = db->expires;
}

uint64_t store_table_bytes(const store_ctx_t *ctx)
{
    uint64_t n = 0;
    for (int i = 0; i < ctx->ndb; i++)
        n += idx_table_bytes(&ctx->dbs[i]->ix);
    return n;
}

uint64_t store_index_bytes(const store_ctx_t *ctx)
{
    return ctx->entry_bytes + store_table_bytes(ctx);
}

uint64_t store_evicted(const store_ctx_t *ctx)
{
    return ctx->evicted;
}

void store_stat_counts(const store_ctx_t *ctx, uint64_t *expired, uint64_t *hits, uint64_t *misses)
{
    *expired = ctx->stat_expired;
    *hits = ctx->stat_hits;
    *misses = ctx->stat_misses;
}

static int expired_by_apply_clock(void *arg, idx_entry_t *e)
{
    st_db_t *db = arg;
    int64_t at = st_ent_expire(e);
    if (!at) return 0;
    if (at <= db->ctx->now) {
        db->ctx->stat_expired++; /* INFO expired_keys */
        st_notify_expired(db->ctx, db, e);
        return 1;
    }
    if (at < db->pass_min) db->pass_min = at;
    return 0;
}

int store_maintain(store_ctx_t *ctx, int budget)
{
    int more = 0;
    for (int i = 0; i < ctx->ndb; i++)
        more |= idx_rehash_step(&ctx->dbs[i]->ix, budget);
    /* One full pass of active expiry (every database) per apply-clock
     * value: when the clock has not moved since the last pass, nothing new
     * can have expired. Removal by the apply clock is deterministic: replay
     * removes the same keys, perhaps at other moments, but a key expired by
     * the apply clock is invisible to every later record either way. */
    if (ctx->expire_pass_done && ctx->expire_pass_now != ctx->now) ctx->expire_pass_done = 0;
    if (ctx->expires > 0 && !ctx->expire_pass_done) {
        for (int i = 0; i < budget; i++) {
            st_db_t *db = ctx->dbs[ctx->expire_db];
            if (ctx->expire_cursor == 0) db->pass_min = db->set_min = INT64_MAX;
            if (db->expires > 0)
                ctx->expire_cursor =
                    idx_scan(&db->ix, ctx->expire_cursor, expired_by_apply_clock, db);
            else
                ctx->expire_cursor = 0;
            if (ctx->expire_cursor == 0) {
                /* A whole pass: every TTL left was seen, or set since. */
                db->next_expiry = db->pass_min < db->set_min ? db->pass_min : db->set_min;
            }
            if (ctx->expire_cursor == 0 && ++ctx->expire_db == ctx->ndb) {
                ctx->expire_db = 0;
                ctx->expire_pass_done = 1;
                ctx->expire_pass_now = ctx->now;
                break;
            }
        }
        if (!ctx->expire_pass_done) more = 1;
    }
    return more;
}

typedef struct digest_arg {
    store_ctx_t *ctx;
    uint32_t dbnum;
    int64_t now;
    uint64_t sum;
    unsigned char *buf;
    size_t cap;
} digest_arg_t;

static int digest_entry(void *arg, idx_entry_t *e)
{
    digest_arg_t *d = arg;
    if (st_ent_expired(e, d->now)) return 0;
    if (st_ent_kind(e) == VK_OBJ) { /* a collection: its type's digest */
        st_obj_t *o = st_ent_obj(e);
        uint64_t sub;
        if (o->ops->digest(d->ctx, o, &sub)) return -1;
        XXH3_state_t st;
        XXH3_64bits_reset(&st);
        if (d->dbnum) XXH3_64bits_update(&st, &d->dbnum, sizeof(d->dbnum));
        XXH3_64bits_update(&st, &e->klen, sizeof(e->klen));
        XXH3_64bits_update(&st, e->data, e->klen);
        XXH3_64bits_update(&st, &o->ops->type, sizeof(o->ops->type));
        XXH3_64bits_update(&st, &sub, sizeof(sub));
        int64_t expire = st_ent_expire(e);
        XXH3_64bits_update(&st, &expire, sizeof(expire));
        d->sum += XXH3_64bits_digest(&st);
        return 0;
    }
    uint64_t vlen = st_ent_vlen(e);
    if (vlen > d->cap) {
        d->buf = st_xrealloc(d->buf, (size_t)vlen);
        d->cap = (size_t)vlen;
    }
    if (st_read_value(d->ctx, e, d->buf)) return -1;
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    if (d->dbnum) XXH3_64bits_update(&st, &d->dbnum, sizeof(d->dbnum));
    XXH3_64bits_update(&st, &e->klen, sizeof(e->klen));
    XXH3_64bits_update(&st, e->data, e->klen);
    XXH3_64bits_update(&st, &vlen, sizeof(vlen));
    XXH3_64bits_update(&st, d->buf, (size_t)vlen);
    int64_t expire = st_ent_expire(e);
    XXH3_64bits_update(&st, &expire, sizeof(expire));
    d->sum += XXH3_64bits_digest(&st); /* a sum: independent of order */
    return 0;
}

int store_digest(store_ctx_t *ctx, int64_t now_ms, uint64_t *out)
{
    digest_arg_t d = {ctx, 0, now_ms, 0, NULL, 0};
    int rc = 0;
    for (int i = 0; i < ctx->ndb && !rc; i++) {
        d.dbnum = (uint32_t)i;
        rc = idx_foreach(&ctx->dbs[i]->ix, digest_entry, &d);
    }
    free(d.buf);
    *out = d.sum;
    return rc ? -1 : 0;
}

void store_set_notify_out(store_ctx_t *ctx,
                          void (*out)(void *arg, const char *chan, size_t clen, const char *msg,
                                      size_t mlen),
                          void *arg)
{
    ctx->notify_out = out;
    ctx->notify_arg = arg;
}

void store_set_notify_flags(store_ctx_t *ctx, uint32_t flags)
{
    ctx->notify_flags = flags;
}

void store_set_notify_expired_floor(store_ctx_t *ctx, int64_t floor)
{
    ctx->notify_expired_floor = floor;
    if (ctx->notify_expired_max < floor) ctx->notify_expired_max = floor;
}

int64_t store_notify_expired_max(const store_ctx_t *ctx)
{
    return ctx->notify_expired_max;
}
