/*
 * watch.c - the WATCH bookkeeping (watch.h): the table of recent changes
 * that EXEC judges watched keys by. Every apply handler that changes a key
 * reports it here (st_key_changed), and the flushes and SWAPDB report
 * whole databases; route.c's EXEC asks st_watch_dirty. Below the type
 * handlers: it calls only the entry layer (and types.c, whether an entry
 * is an emptied collection). Store process only (and tests);
 * single-threaded. A crash loses nothing: the table is a function of the
 * applied records and is rebuilt by replaying them.
 *
 * WATCH. The frontend sends, with the EXEC, each watched key with the point
 * at which it was watched: watch_lsn (every record below it came before the
 * WATCH: max(durable LSN, the connection's last write) then) and
 * watch_time_ms (the wall clock then). The store keeps what it needs to tell
 * whether a watched key changed since, as a function of the applied records
 * only, so live apply and replay decide alike (contract 4):
 *   - a table of buckets (WATCH_WAYS slots each), indexed by a hash of (the
 *     database's identity, the key) with a FIXED seed (the index's seed is
 *     random per process): each slot holds a key fingerprint, the LSN (and
 *     order within the record) of the last record that changed that key, and
 *     the key's TTL right after that change (or "absent"). A bucket that is
 *     full evicts its least recently changed slot and remembers the highest
 *     LSN it evicted. Every handler that changes a key calls st_key_changed;
 *     keys removed because their TTL ran out (lazily or by active expiry) do
 *     not pass here, so the table does not depend on when store_maintain ran.
 *   - per database number, the LSN of its last SWAPDB; per database
 *     identity (st_db_t.watch_id, which travels with SWAPDB), its last two
 *     FLUSHDB/FLUSHALL points.
 * EXEC then aborts (null array reply, nothing applied) when, for some
 * watched key:
 *   1. its slot's LSN is >= watch_lsn (changed since the WATCH), or its slot
 *      was evicted and the bucket evicted something at or after watch_lsn;
 *   2. its database was swapped at or after watch_lsn and the key exists
 *      (by the apply clock) in it or in the database it was swapped with
 *      (Redis: the key existed on either side of the swap); two swaps of
 *      it since, or a later swap of the partner, count as dirty;
 *   3. its database was flushed at or after watch_lsn and the key was live
 *      at the WATCH (present, not expired at watch_time_ms) - or that can't
 *      be known because its slot was evicted;
 *   4. it was live at the WATCH with a TTL that has run out by now (the
 *      apply clock): Redis aborts when a watched key expired since WATCH.
 * Whether a key was live at the WATCH is read from its slot (present after
 * its last change, not flushed since, TTL after watch_time_ms), never from
 * the index: whether an expired key is still in the index depends on when
 * active expiry ran, which differs between live apply and replay.
 * Collisions (two keys sharing a bucket, fingerprints equal) only add aborts
 * under rules 1 and 3; under rule 4 an evicted slot means no abort. The
 * differences from Redis that remain: a watched key that expires while its
 * slot has been evicted (by four later changes of other keys in its bucket)
 * does not abort EXEC; a watched key that existed at a SWAPDB but expired
 * before EXEC does not abort it (Redis looks at the swap's moment); a
 * change of another key of the same bucket, or a flush, can add an abort.
 * The table is part of every checkpoint (st_watch_state_save,
 * store/checkpoint.c): a store restarted from one judges the watches of
 * later EXECs as the live store did (D23).
 * Cost: st_key_changed hashes the key and looks it up once more; applying
 * plain SETs went from about 2.6 to 2.1 million a second in a micro
 * benchmark (one core), far above what the log can make durable.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "entry.h"
#include "index.h"
#include "log.h"
#include "block.h"
#include "notify.h"
#include "object.h"
#include "rcache.h"
#include "watch.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define WATCH_WAYS        4
#define WATCH_BUCKET_BITS 16              /* 65,536 buckets x 4 slots: 6.5 MiB */
#define WATCH_SEED        0x5741544348ull /* fixed: the table must replay alike */
#define WATCH_MAX_DBS     256
#define EXPIRE_ABSENT     INT64_MIN /* slot: the key did not exist after the change */

/* When (in log order) something happened: LSN + 1 (0 = never) and the
 * order among the changes of one record (a transaction changes many keys). */
typedef struct watch_point {
    uint64_t lsn1;
    uint32_t ord;
} watch_point_t;

typedef struct watch_slot {
    uint64_t lsn1;  /* last change: LSN + 1; 0 = empty slot */
    int64_t expire; /* TTL after it: 0 none, EXPIRE_ABSENT = key absent */
    uint32_t fp;    /* key fingerprint */
    uint32_t ord;
} watch_slot_t;

typedef struct watch_bucket {
    watch_slot_t s[WATCH_WAYS];
    uint64_t evicted_lsn1; /* highest LSN + 1 of a slot evicted from here */
} watch_bucket_t;

typedef struct st_watch {
    watch_bucket_t *b;
    uint64_t mask;
    watch_point_t cur;                      /* the change being recorded */
    uint64_t swap_lsn1[WATCH_MAX_DBS];      /* by database number: last SWAPDB */
    uint64_t swap_prev_lsn1[WATCH_MAX_DBS]; /* ... and the one before */
    uint32_t swap_partner[WATCH_MAX_DBS];   /* the other database of the last */
    watch_point_t flush[WATCH_MAX_DBS][2];  /* by identity: last, previous */
} st_watch_t;

static st_watch_t *watch_create(store_ctx_t *ctx, unsigned bits)
{
    st_watch_t *w = calloc(1, sizeof(*w));
    if (!w) {
        log_warn("store: out of memory");
        abort();
    }
    w->b = calloc((size_t)1 << bits, sizeof(*w->b));
    if (!w->b) {
        log_warn("store: out of memory");
        abort();
    }
    w->mask = ((uint64_t)1 << bits) - 1;
    /* Identities are handed out when the table is first needed, which is
     * at the same record on replay, so they are a function of the log. */
    for (int i = 0; i < ctx->ndb; i++)
        ctx->dbs[i]->watch_id = (unsigned)i;
    return w;
}

static st_watch_t *watch_get(store_ctx_t *ctx)
{
    if (!ctx->watch) ctx->watch = watch_create(ctx, WATCH_BUCKET_BITS);
    return ctx->watch;
}

void st_watch_ensure(store_ctx_t *ctx)
{
    watch_get(ctx);
}

void st_watch_configure(store_ctx_t *ctx, unsigned bucket_bits)
{
    st_watch_free(ctx);
    ctx->watch = watch_create(ctx, bucket_bits < 1 ? 1 : bucket_bits > 24 ? 24 : bucket_bits);
}

void st_watch_free(store_ctx_t *ctx)
{
    st_watch_t *w = ctx->watch;
    if (!w) return;
    free(w->b);
    free(w);
    ctx->watch = NULL;
}

static int point_after(watch_point_t a, uint64_t lsn1, uint32_t ord)
{
    return a.lsn1 > lsn1 || (a.lsn1 == lsn1 && a.ord > ord);
}

/* Stamp the change being recorded now. */
static watch_point_t watch_stamp(st_watch_t *w, uint64_t lsn)
{
    if (w->cur.lsn1 != lsn + 1) {
        w->cur.lsn1 = lsn + 1;
        w->cur.ord = 0;
    } else {
        w->cur.ord++;
    }
    return w->cur;
}

static watch_bucket_t *watch_bucket(st_watch_t *w, unsigned id, const void *key, size_t len,
                                    uint32_t *fp)
{
    uint64_t h = XXH3_64bits_withSeed(key, len, WATCH_SEED + 0x9E3779B97F4A7C15ull * id);
    *fp = (uint32_t)(h >> 32);
    return &w->b[h & w->mask];
}

static watch_slot_t *slot_find(watch_bucket_t *b, uint32_t fp)
{
    for (int i = 0; i < WATCH_WAYS; i++)
        if (b->s[i].lsn1 && b->s[i].fp == fp) return &b->s[i];
    return NULL;
}

void st_key_changed(store_ctx_t *ctx, const apply_args_t *a, unsigned dbnum, const rec_arg_t *key)
{
    st_key_changed_as(ctx, a, dbnum, key, 0, NULL);
}

void st_rcache_drop(store_ctx_t *ctx, unsigned dbnum, const rec_arg_t *key)
{
    if (ctx->rcache) /* D70 */
        ctx->rcache_dropped = rcache_invalidate(ctx->rcache, dbnum, key->ptr, key->len) > 0;
}

void st_key_changed_as(store_ctx_t *ctx, const apply_args_t *a, unsigned dbnum,
                       const rec_arg_t *key, unsigned cls, const char *event)
{
    st_rcache_drop(ctx, dbnum, key);
    st_block_key_touched(ctx, dbnum, key);       /* clients blocked on it (block.c) */
    st_notify_note(ctx, dbnum, key, cls, event); /* its keyspace event, after the handler */
    st_db_t *db = st_db(ctx, dbnum);
    if (!db) return;
    st_watch_t *w = watch_get(ctx);
    watch_point_t at = watch_stamp(w, a->lsn);
    uint32_t fp;
    watch_bucket_t *b = watch_bucket(w, db->watch_id, key->ptr, key->len, &fp);
    watch_slot_t *s = slot_find(b, fp);
    if (!s) {
        for (int i = 0; i < WATCH_WAYS && !s; i++)
            if (!b->s[i].lsn1) s = &b->s[i];
    }
    if (!s) {
        s = &b->s[0];
        for (int i = 1; i < WATCH_WAYS; i++)
            if (point_after((watch_point_t){s->lsn1, s->ord}, b->s[i].lsn1, b->s[i].ord))
                s = &b->s[i];
        if (s->lsn1 > b->evicted_lsn1) b->evicted_lsn1 = s->lsn1;
    }
    /* The key's state after the change, judged by the apply clock: an
     * expired entry not yet reclaimed counts as absent, as it would once
     * reclaimed (which happens at different moments live and on replay);
     * so does a collection emptied by this change, which its handler
     * removes after reporting it. */
    idx_entry_t **e = idx_find(&db->ix, key->ptr, key->len);
    /* The pager (D60) looks at collections that grow. */
    if (ctx->on_changed) ctx->on_changed(ctx, dbnum, e ? *e : NULL);
    int64_t expire = EXPIRE_ABSENT;
    if (e && !st_ent_emptied(*e) && !st_ent_expired(*e, ctx->now)) expire = st_ent_expire(*e);
    *s = (watch_slot_t){.lsn1 = at.lsn1, .expire = expire, .fp = fp, .ord = at.ord};
}

/* Stamp a change of a whole database (FLUSHDB, FLUSHALL, SWAPDB): the
 * table, or NULL when dbnum is not one the table follows. */
static st_watch_t *db_change(store_ctx_t *ctx, const apply_args_t *a, unsigned dbnum,
                             watch_point_t *at)
{
    if (!st_db(ctx, dbnum) || dbnum >= WATCH_MAX_DBS) return NULL;
    st_watch_t *w = watch_get(ctx);
    *at = watch_stamp(w, a->lsn);
    return w;
}

void st_db_swapped(store_ctx_t *ctx, const apply_args_t *a, unsigned dbnum, unsigned partner)
{
    if (ctx->rcache) rcache_db_changed(ctx->rcache, dbnum); /* D70 */
    st_block_db_touched(ctx, dbnum, partner);               /* clients blocked on either side */
    watch_point_t at;
    st_watch_t *w = db_change(ctx, a, dbnum, &at);
    if (!w) return;
    /* The contents keep their identity (and their slots); a WATCH of this
     * database number sees other contents from now on. */
    w->swap_prev_lsn1[dbnum] = w->swap_lsn1[dbnum];
    w->swap_lsn1[dbnum] = at.lsn1;
    w->swap_partner[dbnum] = partner;
}

void st_db_flushed(store_ctx_t *ctx, const apply_args_t *a, unsigned dbnum)
{
    /* Clients blocked on its keys: an XREADGROUP waiter answers that its
     * key is gone (D46); a pop's finds nothing and waits on. */
    st_block_db_touched(ctx, dbnum, dbnum);
    if (ctx->rcache) rcache_db_changed(ctx->rcache, dbnum); /* D70 */
    watch_point_t at;
    st_watch_t *w = db_change(ctx, a, dbnum, &at);
    if (!w) return;
    watch_point_t *f = w->flush[ctx->dbs[dbnum]->watch_id % WATCH_MAX_DBS];
    f[1] = f[0];
    f[0] = at;
}

/* Was the key of slot s live when it was WATCHed? */
static int slot_live_at_watch(const st_watch_t *w, unsigned id, const watch_slot_t *s,
                              uint64_t watch_lsn, int64_t watch_time)
{
    if (s->expire == EXPIRE_ABSENT) return 0;
    if (s->expire && s->expire <= watch_time) return 0;
    /* Flushed between its last change and the WATCH? The last flush before
     * watch_lsn is one of the two kept; when both are later, assume none
     * (the worst this can do is one extra abort). */
    const watch_point_t *f = w->flush[id % WATCH_MAX_DBS];
    for (int i = 0; i < 2; i++) {
        if (f[i].lsn1 && f[i].lsn1 <= watch_lsn) return !point_after(f[i], s->lsn1, s->ord);
    }
    return 1;
}

int st_watch_dirty(store_ctx_t *ctx, unsigned dbnum, const unsigned char *key, size_t klen,
                   uint64_t watch_lsn, int64_t watch_time)
{
    st_watch_t *w = watch_get(ctx);
    st_db_t *db = st_db(ctx, dbnum);
    if (w->swap_lsn1[dbnum] > watch_lsn) {
        /* Swapped since the WATCH. Redis marks the key dirty when it
         * existed in either database at the swap: its contents are now in
         * this database and in the partner. A later change would be seen
         * below; more than one swap since is judged dirty (can't follow). */
        unsigned y = w->swap_partner[dbnum];
        st_db_t *other = st_db(ctx, y);
        if (w->swap_prev_lsn1[dbnum] > watch_lsn || !other || y >= WATCH_MAX_DBS ||
            w->swap_lsn1[y] > w->swap_lsn1[dbnum])
            return 1;
        rec_arg_t k = {key, (uint32_t)klen};
        if (st_find_peek(db, &k, ctx->now) || st_find_peek(other, &k, ctx->now)) return 1;
    }
    unsigned id = db->watch_id;
    uint32_t fp;
    watch_bucket_t *b = watch_bucket(w, id, key, klen, &fp);
    const watch_slot_t *s = slot_find(b, fp);
    if (s ? s->lsn1 > watch_lsn : b->evicted_lsn1 > watch_lsn) return 1;
    /* Never changed (and nothing evicted here): the key never existed. */
    int live = s ? slot_live_at_watch(w, id, s, watch_lsn, watch_time) : b->evicted_lsn1 != 0;
    if (live && w->flush[id % WATCH_MAX_DBS][0].lsn1 > watch_lsn) return 1;
    if (s && live && s->expire && s->expire <= ctx->now) return 1;
    return 0;
}

/* ---- checkpoints (store/checkpoint.c): the table as bytes ----
 * The table is a function of every record applied since the first one, so
 * a store that starts from a checkpoint must start with the table as it
 * was, or an EXEC in the tail could be judged differently than when it was
 * acknowledged (contract 4). Layout (host order, as the checkpoint): u32
 * version 1, u32 bucket bits, u64 cur.lsn1, u32 cur.ord, u32 0; per
 * database number (WATCH_MAX_DBS): u64 swap, u64 previous swap, u32
 * partner, then the two flush points of that identity (u64 lsn1, u32 ord
 * each); then u32 buckets in use and, for each, u32 its index and the
 * bucket as it lies in memory (no padding; empty buckets are left out). The
 * databases' watch_id travel with the databases (st_db_t), not here. */

#define WATCH_STATE_HEAD   24u
#define WATCH_STATE_PER_DB 44u

_Static_assert(sizeof(watch_slot_t) == 24 && sizeof(watch_bucket_t) == 104,
               "watch buckets are saved as they lie in memory: no padding");

static unsigned watch_bits(const st_watch_t *w)
{
    return (unsigned)__builtin_popcountll(w->mask);
}

static int bucket_used(const watch_bucket_t *b)
{
    if (b->evicted_lsn1) return 1;
    for (int i = 0; i < WATCH_WAYS; i++)
        if (b->s[i].lsn1) return 1;
    return 0;
}

static size_t buckets_used(const st_watch_t *w)
{
    size_t n = 0;
    for (uint64_t i = 0; i <= w->mask; i++)
        n += (size_t)bucket_used(&w->b[i]);
    return n;
}

size_t st_watch_state_size(const store_ctx_t *ctx)
{
    const st_watch_t *w = ctx->watch;
    if (!w) return 0;
    return WATCH_STATE_HEAD + WATCH_MAX_DBS * WATCH_STATE_PER_DB + 4 +
           buckets_used(w) * (4 + sizeof(watch_bucket_t));
}

static unsigned char *put_u32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
    return p + 4;
}

static unsigned char *put_u64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
    return p + 8;
}

static const unsigned char *get_u32(const unsigned char *p, uint32_t *v)
{
    memcpy(v, p, 4);
    return p + 4;
}

static const unsigned char *get_u64(const unsigned char *p, uint64_t *v)
{
    memcpy(v, p, 8);
    return p + 8;
}

void st_watch_state_save(const store_ctx_t *ctx, unsigned char *out)
{
    const st_watch_t *w = ctx->watch;
    if (!w) return;
    unsigned char *p = put_u32(out, 1);
    p = put_u32(p, watch_bits(w));
    p = put_u64(p, w->cur.lsn1);
    p = put_u32(p, w->cur.ord);
    p = put_u32(p, 0);
    for (int i = 0; i < WATCH_MAX_DBS; i++) {
        p = put_u64(p, w->swap_lsn1[i]);
        p = put_u64(p, w->swap_prev_lsn1[i]);
        p = put_u32(p, w->swap_partner[i]);
        for (int k = 0; k < 2; k++) {
            p = put_u64(p, w->flush[i][k].lsn1);
            p = put_u32(p, w->flush[i][k].ord);
        }
    }
    p = put_u32(p, (uint32_t)buckets_used(w));
    for (uint64_t i = 0; i <= w->mask; i++) {
        if (!bucket_used(&w->b[i])) continue;
        p = put_u32(p, (uint32_t)i);
        memcpy(p, &w->b[i], sizeof(watch_bucket_t));
        p += sizeof(watch_bucket_t);
    }
}

int st_watch_state_load(store_ctx_t *ctx, const unsigned char *in, size_t n)
{
    uint32_t version, bits, ord, pad;
    if (n < WATCH_STATE_HEAD) return -1;
    const unsigned char *p = get_u32(in, &version);
    p = get_u32(p, &bits);
    if (version != 1 || bits < 1 || bits > 24) return -1;
    size_t nb = (size_t)1 << bits;
    size_t fixed = WATCH_STATE_HEAD + WATCH_MAX_DBS * WATCH_STATE_PER_DB + 4;
    uint32_t used;
    if (n < fixed) return -1;
    memcpy(&used, in + fixed - 4, 4);
    if (used > nb || n != fixed + (size_t)used * (4 + sizeof(watch_bucket_t))) return -1;
    /* Not watch_create: that hands out identities, which the checkpoint
     * already gave the databases. */
    st_watch_t *w = calloc(1, sizeof(*w));
    if (!w) return -1;
    w->b = calloc(nb, sizeof(*w->b));
    if (!w->b) {
        free(w);
        return -1;
    }
    w->mask = nb - 1;
    p = get_u64(p, &w->cur.lsn1);
    p = get_u32(p, &ord);
    w->cur.ord = ord;
    p = get_u32(p, &pad);
    for (int i = 0; i < WATCH_MAX_DBS; i++) {
        p = get_u64(p, &w->swap_lsn1[i]);
        p = get_u64(p, &w->swap_prev_lsn1[i]);
        p = get_u32(p, &w->swap_partner[i]);
        for (int k = 0; k < 2; k++) {
            p = get_u64(p, &w->flush[i][k].lsn1);
            p = get_u32(p, &ord);
            w->flush[i][k].ord = ord;
        }
    }
    p = get_u32(p, &used);
    for (uint32_t k = 0; k < used; k++) {
        uint32_t i;
        p = get_u32(p, &i);
        if (i >= nb) {
            free(w->b);
            free(w);
            return -1;
        }
        memcpy(&w->b[i], p, sizeof(watch_bucket_t));
        p += sizeof(watch_bucket_t);
    }
    st_watch_free(ctx);
    ctx->watch = w;
    return 0;
}
