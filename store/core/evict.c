/*
 * evict.c - the choice of eviction victims (evict.h), approximated as
 * Redis approximates it (its evict.c is the model; this is our code).
 *
 * Store process only; single-threaded. Nothing here changes the state
 * machine: the victims are written into the log by store/evict.c and
 * removed when that record is applied, so a crash here loses nothing and
 * replay never calls this file's choice.
 *
 * The choice: for each database with candidates, sample maxmemory-samples
 * entries (consecutive buckets from where the last sampling of that
 * database stopped: hash order, so independent of the access pattern)
 * into a pool of 16 best candidates kept between rounds, then take the
 * pool's best whose key still exists. Scores (access data, access.h): LRU
 * the idle time, LFU 255 - the decayed counter, TTL the nearness of the
 * expiry. The random policies take a random key (allkeys) or the next key
 * with a TTL from the sampling cursor (volatile), databases in turn.
 */
#include "evict.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "entry.h"

#define LFU_MAX   255u
#define SCAN_HOLD 64u /* entries one bucket may contribute */

/* ---- the pool ------------------------------------------------------------ */

static uint64_t score_of(const st_access_t *a, const idx_entry_t *e, int64_t now_ms)
{
    switch (a->policy) {
    case CONFIG_POLICY_VOLATILE_TTL:
        return UINT64_MAX - (uint64_t)st_ent_expire(e);
    case CONFIG_POLICY_VOLATILE_LFU:
    case CONFIG_POLICY_ALLKEYS_LFU:
        return LFU_MAX - st_access_freq(a, e, now_ms);
    default:
        return st_access_idle_ms(e, now_ms);
    }
}

static void pool_drop(st_access_t *a, unsigned i)
{
    free(a->pool[i].key);
    memmove(&a->pool[1], &a->pool[0], i * sizeof(a->pool[0]));
    a->pool[0] = (st_evcand_t){.db = -1};
}

/* Offer entry e of database db to the pool (ascending score; empty slots,
 * db -1, at the low end). A key already there gets its new score. */
static void pool_offer(st_access_t *a, int db, const idx_entry_t *e, uint64_t score)
{
    for (unsigned i = 0; i < ST_EVPOOL_SIZE; i++) {
        st_evcand_t *c = &a->pool[i];
        if (c->db == db && c->klen == e->klen && memcmp(c->key, e->data, e->klen) == 0) {
            pool_drop(a, i);
            break;
        }
    }
    if (a->pool[0].db >= 0 && score <= a->pool[0].score) return; /* full of better ones */
    free(a->pool[0].key);
    unsigned i = 0; /* slide the lower ones down until the new one fits */
    while (i + 1 < ST_EVPOOL_SIZE && (a->pool[i + 1].db < 0 || a->pool[i + 1].score < score)) {
        a->pool[i] = a->pool[i + 1];
        i++;
    }
    unsigned char *k = st_xmalloc(e->klen ? e->klen : 1);
    memcpy(k, e->data, e->klen);
    a->pool[i] = (st_evcand_t){.score = score, .db = db, .klen = e->klen, .key = k};
}

typedef struct sample {
    int volatile_only;
    unsigned n, want;
    idx_entry_t *e[SCAN_HOLD];
} sample_t;

static int sample_visit(void *arg, idx_entry_t *e)
{
    sample_t *s = arg;
    if (s->n < SCAN_HOLD && s->n < s->want && (!s->volatile_only || st_ent_expire(e)))
        s->e[s->n++] = e;
    return 0; /* never remove */
}

static int volatile_policy(int policy)
{
    return policy <= CONFIG_POLICY_VOLATILE_TTL;
}

static int ensure_cursors(store_ctx_t *ctx)
{
    st_access_t *a = &ctx->access;
    if (!a->cursor) a->cursor = calloc((size_t)ctx->ndb, sizeof(uint64_t));
    return a->cursor != NULL;
}

/* Up to `want` entries of database i from its cursor on, looking at no
 * more than `buckets` buckets. */
static void sample_db(store_ctx_t *ctx, int i, sample_t *s, unsigned buckets)
{
    idx_t *ix = &ctx->dbs[i]->ix;
    uint64_t *cur = &ctx->access.cursor[i];
    for (unsigned b = 0; b < buckets && s->n < s->want; b++)
        *cur = idx_scan(ix, *cur, sample_visit, s);
}

/* Databases that have a candidate under the policy. */
static int has_candidates(const st_db_t *db, int vol)
{
    return vol ? db->expires > 0 : idx_count(&db->ix) > 0;
}

static void victim_of(st_victim_t *v, int db, const idx_entry_t *e)
{
    v->db = db;
    v->klen = e->klen;
    v->key = st_xmalloc(e->klen ? e->klen : 1);
    memcpy(v->key, e->data, e->klen);
    v->bytes = st_ent_bytes((idx_entry_t *)e);
}

static int pick_random(store_ctx_t *ctx, st_victim_t *v, int vol)
{
    st_access_t *a = &ctx->access;
    int start = (int)(idx_rand_next(&a->rng) % (uint64_t)ctx->ndb);
    for (int k = 0; k < ctx->ndb; k++) {
        int i = (start + k) % ctx->ndb;
        st_db_t *db = ctx->dbs[i];
        if (!has_candidates(db, vol)) continue;
        idx_entry_t *e = NULL;
        if (vol) {
            sample_t s = {.volatile_only = 1, .want = 1};
            sample_db(ctx, i, &s, 4096);
            e = s.n ? s.e[0] : NULL;
        } else {
            e = idx_random(&db->ix, &a->rng);
        }
        if (e) {
            victim_of(v, i, e);
            return 1;
        }
    }
    return 0;
}

int st_evict_pick(store_ctx_t *ctx, int64_t now_ms, st_victim_t *v, int *none)
{
    st_access_t *a = &ctx->access;
    int vol = volatile_policy(a->policy);
    *none = 1;
    for (int i = 0; i < ctx->ndb; i++)
        if (has_candidates(ctx->dbs[i], vol)) *none = 0;
    if (*none || a->policy == CONFIG_POLICY_NOEVICTION || !ensure_cursors(ctx)) return 0;
    if (a->policy == CONFIG_POLICY_ALLKEYS_RANDOM || a->policy == CONFIG_POLICY_VOLATILE_RANDOM)
        return pick_random(ctx, v, vol);
    unsigned want = a->samples < 1                ? 1
                    : a->samples > (int)SCAN_HOLD ? SCAN_HOLD
                                                  : (unsigned)a->samples;
    for (int i = 0; i < ctx->ndb; i++) {
        st_db_t *db = ctx->dbs[i];
        if (!has_candidates(db, vol)) continue;
        sample_t s = {.volatile_only = vol, .want = want};
        /* Keys with a TTL may be few among many: look further for them. */
        sample_db(ctx, i, &s, vol ? 4096 : want * 10);
        for (unsigned k = 0; k < s.n; k++)
            pool_offer(a, i, s.e[k], score_of(a, s.e[k], now_ms));
    }
    for (int i = (int)ST_EVPOOL_SIZE - 1; i >= 0; i--) {
        st_evcand_t *c = &a->pool[i];
        if (c->db < 0) break;
        rec_arg_t key = {.ptr = c->key, .len = c->klen};
        idx_entry_t **slot =
            c->db < ctx->ndb ? idx_find(&ctx->dbs[c->db]->ix, key.ptr, key.len) : NULL;
        int ok = slot && (!vol || st_ent_expire(*slot));
        if (ok) victim_of(v, c->db, *slot);
        pool_drop(a, (unsigned)i);
        if (ok) return 1;
        i++; /* pool_drop moved the lower ones up: look at slot i again */
    }
    return 0;
}
