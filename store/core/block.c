/*
 * block.c - the store's waiter queues (block.h): which clients wait on
 * which keys, oldest first, for the blocking pops (docs/DECISIONS.md,
 * D36). Store process only (and tests); single-threaded, below the type
 * handlers (route.c hands it their serve table, types/t_block.c).
 *
 * Invariants:
 *   - The queues are a function of the applied records: a waiter comes in
 *     with its blocking record and leaves with the record that served,
 *     unblocked or dropped it, so replay (and a checkpoint, which saves
 *     every waiter in registration order) rebuilds them exactly.
 *   - Each key's queue is in registration (LSN) order, whichever frontend
 *     a waiter is on: the first client blocked on a key is served first.
 *   - Serving happens inside the apply of the record that made a key
 *     ready (after its handler, st_block_serve_ready), so the push and
 *     the pop it serves are one durable step: nobody sees the element in
 *     between, and every reply of that record (the pusher's and the
 *     waiters') leaves only once the record is durable, since the store
 *     applies durable records only.
 * A crash loses nothing: the state is rebuilt from the log.
 */
#include <stdlib.h>
#include <string.h>

#include "block.h"
#include "log.h"
#include "resp.h"

typedef struct st_wnode {
    st_waiter_t *w;
    struct st_wkey *k;
    struct st_wnode *prev, *next; /* in k's queue */
} st_wnode_t;

typedef struct st_wkey {
    struct st_wkey *hnext; /* in its bucket */
    struct st_wkey *rnext; /* in the ready list */
    st_wnode_t *head, *tail;
    uint32_t dbnum, len;
    uint8_t ready, serving;
    unsigned char bytes[];
} st_wkey_t;

typedef struct st_block_reply {
    uint16_t origin;
    uint64_t id;
    buf_t body;
} st_block_reply_t;

struct st_block {
    st_waiter_t *head, *tail; /* registration order */
    uint32_t nwaiters;
    uint32_t ngroup; /* waiters of kind ST_BLOCK_STREAM_GROUP (st_block_clock_moved) */
    st_wkey_t **buckets;
    uint32_t nbuckets, nkeys; /* nbuckets: a power of two, or 0 */
    st_wkey_t *ready_head, *ready_tail;
    int live, deferred;
    st_block_reply_t *replies;
    uint32_t nreplies, replies_cap;
};

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p) {
        log_warn("store: out of memory for blocked clients; stopping");
        exit(EXIT_FATAL);
    }
    return p;
}

static struct st_block *state(store_ctx_t *ctx)
{
    if (!ctx->block) ctx->block = xcalloc(1, sizeof(struct st_block));
    return ctx->block;
}

/* FNV-1a of the database and the key: the table's layout never shows in
 * any order (queues are lists), so a fixed hash is enough. */
static uint32_t key_hash(unsigned dbnum, const unsigned char *p, uint32_t n)
{
    uint32_t h = 2166136261u ^ dbnum;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static st_wkey_t **key_slot(struct st_block *b, unsigned dbnum, const rec_arg_t *key)
{
    if (!b->nbuckets) return NULL;
    st_wkey_t **s = &b->buckets[key_hash(dbnum, key->ptr, key->len) & (b->nbuckets - 1)];
    for (; *s; s = &(*s)->hnext)
        if ((*s)->dbnum == dbnum && (*s)->len == key->len &&
            memcmp((*s)->bytes, key->ptr, key->len) == 0)
            return s;
    return s;
}

static void grow(struct st_block *b)
{
    uint32_t n = b->nbuckets ? b->nbuckets * 2 : 16;
    st_wkey_t **nb = xcalloc(n, sizeof(*nb));
    for (uint32_t i = 0; i < b->nbuckets; i++) {
        for (st_wkey_t *k = b->buckets[i], *next; k; k = next) {
            next = k->hnext;
            st_wkey_t **s = &nb[key_hash(k->dbnum, k->bytes, k->len) & (n - 1)];
            k->hnext = *s;
            *s = k;
        }
    }
    free(b->buckets);
    b->buckets = nb;
    b->nbuckets = n;
}

static st_wkey_t *key_get(struct st_block *b, unsigned dbnum, const rec_arg_t *key)
{
    if (b->nkeys >= b->nbuckets) grow(b);
    st_wkey_t **s = key_slot(b, dbnum, key);
    if (*s) return *s;
    st_wkey_t *k = xcalloc(1, sizeof(*k) + key->len);
    k->dbnum = dbnum;
    k->len = key->len;
    memcpy(k->bytes, key->ptr, key->len);
    *s = k;
    b->nkeys++;
    return k;
}

static void key_free(struct st_block *b, st_wkey_t *k)
{
    rec_arg_t key = {k->bytes, k->len};
    st_wkey_t **s = key_slot(b, k->dbnum, &key);
    if (s && *s == k) *s = k->hnext;
    b->nkeys--;
    free(k);
}

int st_block_add(store_ctx_t *ctx, const st_waiter_spec_t *sp)
{
    struct st_block *b = state(ctx);
    size_t bytes = sp->dst.len;
    for (uint32_t i = 0; i < sp->nkeys; i++)
        bytes += sp->keys[i].len;
    /* One allocation: the waiter, its nodes, its keys' descriptors and bytes. */
    size_t size =
        sizeof(st_waiter_t) + sp->nkeys * (sizeof(st_wnode_t) + sizeof(rec_arg_t)) + bytes;
    st_waiter_t *w = xcalloc(1, size);
    st_wnode_t *nodes = (st_wnode_t *)(w + 1);
    rec_arg_t *keys = (rec_arg_t *)(nodes + sp->nkeys);
    unsigned char *p = (unsigned char *)(keys + sp->nkeys);
    *w = (st_waiter_t){.id = sp->id,
                       .client_id = sp->client_id,
                       .origin = sp->origin,
                       .kind = sp->kind,
                       .proto = sp->proto,
                       .right = sp->right,
                       .to_right = sp->to_right,
                       .dbnum = sp->dbnum,
                       .count = sp->count,
                       .nkeys = sp->nkeys,
                       .keys = keys,
                       .nodes = nodes};
    for (uint32_t i = 0; i < sp->nkeys; i++) {
        memcpy(p, sp->keys[i].ptr, sp->keys[i].len);
        keys[i] = (rec_arg_t){p, sp->keys[i].len};
        p += sp->keys[i].len;
    }
    if (sp->dst.len) memcpy(p, sp->dst.ptr, sp->dst.len); /* none but for BLMOVE */
    w->dst = (rec_arg_t){p, sp->dst.len};
    for (uint32_t i = 0; i < sp->nkeys; i++) {
        st_wnode_t *n = &nodes[i];
        n->w = w;
        /* The same key twice (BLPOP k k 0) waits once on it, as Redis. */
        st_wkey_t *k = key_get(b, sp->dbnum, &keys[i]);
        int dup = 0;
        for (uint32_t j = 0; j < i; j++)
            if (nodes[j].k == k) dup = 1;
        if (dup) continue;
        n->k = k;
        n->prev = k->tail;
        if (k->tail)
            k->tail->next = n;
        else
            k->head = n;
        k->tail = n;
    }
    w->prev = b->tail;
    if (b->tail)
        b->tail->next = w;
    else
        b->head = w;
    b->tail = w;
    b->nwaiters++;
    if (w->kind == ST_BLOCK_STREAM_GROUP) b->ngroup++;
    return 0;
}

static void remove_waiter(struct st_block *b, st_waiter_t *w)
{
    for (uint32_t i = 0; i < w->nkeys; i++) {
        st_wnode_t *n = &w->nodes[i];
        st_wkey_t *k = n->k;
        if (!k) continue;
        if (n->prev)
            n->prev->next = n->next;
        else
            k->head = n->next;
        if (n->next)
            n->next->prev = n->prev;
        else
            k->tail = n->prev;
        /* A key being served or on the ready list is freed by that loop. */
        if (!k->head && !k->serving && !k->ready) key_free(b, k);
    }
    if (w->prev)
        w->prev->next = w->next;
    else
        b->head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        b->tail = w->prev;
    b->nwaiters--;
    if (w->kind == ST_BLOCK_STREAM_GROUP) b->ngroup--;
    free(w);
}

static buf_t *reply_for(struct st_block *b, const st_waiter_t *w)
{
    if (b->nreplies == b->replies_cap) {
        uint32_t cap = b->replies_cap ? b->replies_cap * 2 : 8;
        st_block_reply_t *nr = realloc(b->replies, cap * sizeof(*nr));
        if (!nr) {
            log_warn("store: out of memory for blocked clients' replies; stopping");
            exit(EXIT_FATAL);
        }
        b->replies = nr;
        b->replies_cap = cap;
    }
    st_block_reply_t *r = &b->replies[b->nreplies++];
    r->origin = w->origin;
    r->id = w->id;
    buf_init(&r->body);
    return &r->body;
}

/* The reply of a waiter that gave up (timeout, CLIENT UNBLOCK). */
static void reply_unblocked(struct st_block *b, const st_waiter_t *w, int mode)
{
    if (!b->live || mode == ST_UNBLOCK_DROP) return;
    buf_t *r = reply_for(b, w);
    /* Redis 7.0 times every list waiter out with a null array, BLMOVE's
     * too (its non-blocking form answers a null string). */
    if (mode == ST_UNBLOCK_ERROR)
        resp_error(r, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
    else
        resp_null_array3(r, w->proto);
}

int st_block_unblock(store_ctx_t *ctx, uint64_t client_id, int mode)
{
    struct st_block *b = ctx->block;
    for (st_waiter_t *w = b ? b->head : NULL; w; w = w->next) {
        if (w->client_id != client_id) continue;
        reply_unblocked(b, w, mode);
        remove_waiter(b, w);
        return 1;
    }
    return 0;
}

uint32_t st_block_drop_origin(store_ctx_t *ctx, uint16_t origin)
{
    struct st_block *b = ctx->block;
    uint32_t n = 0;
    for (st_waiter_t *w = b ? b->head : NULL, *next; w; w = next) {
        next = w->next;
        if (origin && w->origin != origin) continue;
        remove_waiter(b, w);
        n++;
    }
    return n;
}

static void make_ready(struct st_block *b, st_wkey_t *k)
{
    if (k->ready) return;
    k->ready = 1;
    k->rnext = NULL;
    if (b->ready_tail)
        b->ready_tail->rnext = k;
    else
        b->ready_head = k;
    b->ready_tail = k;
}

void st_block_key_touched(store_ctx_t *ctx, unsigned dbnum, const rec_arg_t *key)
{
    struct st_block *b = ctx->block;
    if (!b || !b->nwaiters) return;
    st_wkey_t **s = key_slot(b, dbnum, key);
    if (s && *s && (*s)->head) make_ready(b, *s);
}

void st_block_db_touched(store_ctx_t *ctx, unsigned x, unsigned y)
{
    struct st_block *b = ctx->block;
    if (!b || !b->nwaiters) return;
    /* In registration order, so the keys are served in an order that is
     * the same on every replay (the bucket order would be too, but this
     * one means something). */
    for (st_waiter_t *w = b->head; w; w = w->next)
        if (w->dbnum == x || w->dbnum == y)
            for (uint32_t i = 0; i < w->nkeys; i++)
                if (w->nodes[i].k) make_ready(b, w->nodes[i].k);
}

void st_block_clock_moved(store_ctx_t *ctx)
{
    struct st_block *b = ctx->block;
    if (!b || !b->ngroup) return;
    for (st_waiter_t *w = b->head; w; w = w->next) {
        if (w->kind != ST_BLOCK_STREAM_GROUP) continue;
        st_db_t *db = st_db(ctx, w->dbnum);
        for (uint32_t i = 0; db && i < w->nkeys; i++) {
            st_wkey_t *k = w->nodes[i].k;
            if (!k) continue;
            idx_entry_t **slot = idx_find(&db->ix, k->bytes, k->len);
            int64_t at = slot ? st_ent_expire(*slot) : 0;
            if (at && at <= ctx->now) make_ready(b, k);
        }
    }
}

void st_block_serve_ready(store_ctx_t *ctx, const apply_args_t *a, const st_block_serve_fn *serve)
{
    struct st_block *b = ctx->block;
    if (!b) return;
    st_wkey_t *k;
    while ((k = b->ready_head) != NULL) {
        b->ready_head = k->rnext;
        if (!b->ready_head) b->ready_tail = NULL;
        k->ready = 0;
        k->serving = 1;
        /* Waiters passed over stay at the head, in their order: the next
         * one to try is the one after them. */
        uint32_t passed = 0;
        for (;;) {
            st_wnode_t *n = k->head;
            for (uint32_t i = 0; n && i < passed; i++)
                n = n->next;
            if (!n) break;
            st_waiter_t *w = n->w;
            rec_arg_t key = {k->bytes, k->len};
            st_db_t *db = st_db(ctx, w->dbnum);
            if (!db) break;
            apply_args_t wa = {NULL, 0, a->rec, a->lsn, w->dbnum, db};
            buf_t tmp;
            buf_init(&tmp);
            int rc = serve[w->kind](ctx, &wa, w, &key, b->live ? &tmp : NULL);
            if (rc == ST_NOT_SERVED || rc == ST_PASSED) {
                buf_free(&tmp);
                if (rc == ST_NOT_SERVED) break;
                passed++;
                continue;
            }
            if (b->live) {
                buf_t *r = reply_for(b, w);
                *r = tmp; /* moved */
            } else {
                buf_free(&tmp);
            }
            remove_waiter(b, w);
        }
        k->serving = 0;
        if (!k->head && !k->ready) key_free(b, k);
    }
}

void st_block_set_live(store_ctx_t *ctx, int live)
{
    state(ctx)->live = live;
}

void st_block_take_replies(store_ctx_t *ctx, st_block_reply_fn fn, void *arg)
{
    struct st_block *b = ctx->block;
    if (!b) return;
    for (uint32_t i = 0; i < b->nreplies; i++) {
        fn(arg, b->replies[i].origin, b->replies[i].id, &b->replies[i].body);
        buf_free(&b->replies[i].body);
    }
    b->nreplies = 0;
}

int st_block_take_deferred(store_ctx_t *ctx)
{
    struct st_block *b = ctx->block;
    if (!b || !b->deferred) return 0;
    b->deferred = 0;
    return 1;
}

void st_block_defer_reply(store_ctx_t *ctx)
{
    state(ctx)->deferred = 1;
}

uint32_t st_block_count(const store_ctx_t *ctx)
{
    return ctx->block ? ctx->block->nwaiters : 0;
}

uint32_t st_block_count_origin(const store_ctx_t *ctx, uint16_t origin)
{
    uint32_t n = 0;
    for (st_waiter_t *w = ctx->block ? ctx->block->head : NULL; w; w = w->next)
        n += w->origin == origin;
    return n;
}

const st_waiter_t *st_block_first(store_ctx_t *ctx, unsigned dbnum, const rec_arg_t *key)
{
    struct st_block *b = ctx->block;
    st_wkey_t **s = b ? key_slot(b, dbnum, key) : NULL;
    return s && *s && (*s)->head ? (*s)->head->w : NULL;
}

/* ---- checkpoints: u32 count, then per waiter its fields and keys ---- */

#define FIXED_BYTES (8 + 8 + 2 + 4 + 4 + 8 + 4 + 4) /* + kind/proto/right/to_right bytes */

static size_t waiter_size(const st_waiter_t *w)
{
    size_t n = FIXED_BYTES + w->dst.len;
    for (uint32_t i = 0; i < w->nkeys; i++)
        n += 4 + w->keys[i].len;
    return n;
}

size_t st_block_state_size(const store_ctx_t *ctx)
{
    if (!st_block_count(ctx)) return 0;
    size_t n = 4;
    for (const st_waiter_t *w = ctx->block->head; w; w = w->next)
        n += waiter_size(w);
    return n;
}

static unsigned char *put(unsigned char *p, const void *v, size_t n)
{
    memcpy(p, v, n);
    return p + n;
}

void st_block_state_save(const store_ctx_t *ctx, unsigned char *p)
{
    uint32_t count = st_block_count(ctx);
    p = put(p, &count, 4);
    for (const st_waiter_t *w = ctx->block->head; w; w = w->next) {
        unsigned char flags[4] = {w->kind, w->proto, w->right, w->to_right};
        p = put(p, &w->id, 8);
        p = put(p, &w->client_id, 8);
        p = put(p, &w->origin, 2);
        p = put(p, flags, 4);
        p = put(p, &w->dbnum, 4);
        p = put(p, &w->count, 8);
        p = put(p, &w->nkeys, 4);
        for (uint32_t i = 0; i < w->nkeys; i++) {
            p = put(p, &w->keys[i].len, 4);
            p = put(p, w->keys[i].ptr, w->keys[i].len);
        }
        p = put(p, &w->dst.len, 4);
        p = put(p, w->dst.ptr, w->dst.len);
    }
}

/* Take n bytes at *p of the end end, or fail. */
static int take(const unsigned char **p, const unsigned char *end, void *out, size_t n)
{
    if ((size_t)(end - *p) < n) return -1;
    if (out) memcpy(out, *p, n);
    *p += n;
    return 0;
}

int st_block_state_load(store_ctx_t *ctx, const unsigned char *p, size_t n)
{
    const unsigned char *end = p + n;
    uint32_t count;
    if (take(&p, end, &count, 4)) return -1;
    rec_arg_t *keys = NULL;
    int rc = 0;
    for (uint32_t c = 0; c < count && !rc; c++) {
        st_waiter_spec_t sp = {0};
        unsigned char flags[4];
        if (take(&p, end, &sp.id, 8) || take(&p, end, &sp.client_id, 8) ||
            take(&p, end, &sp.origin, 2) || take(&p, end, flags, 4) ||
            take(&p, end, &sp.dbnum, 4) || take(&p, end, &sp.count, 8) ||
            take(&p, end, &sp.nkeys, 4) || sp.nkeys > (size_t)(end - p) / 4 || !sp.nkeys) {
            rc = -1;
            break;
        }
        sp.kind = flags[0];
        sp.proto = flags[1];
        sp.right = flags[2];
        sp.to_right = flags[3];
        if (!sp.kind || sp.kind >= ST_BLOCK_KINDS || sp.dbnum >= (uint32_t)ctx->ndb) {
            rc = -1;
            break;
        }
        free(keys);
        keys = xcalloc(sp.nkeys, sizeof(*keys));
        for (uint32_t i = 0; i < sp.nkeys && !rc; i++) {
            uint32_t len;
            if (take(&p, end, &len, 4) || (size_t)(end - p) < len) {
                rc = -1;
                break;
            }
            keys[i] = (rec_arg_t){p, len};
            p += len;
        }
        if (rc || take(&p, end, &sp.dst.len, 4) || (size_t)(end - p) < sp.dst.len) {
            rc = -1;
            break;
        }
        sp.dst.ptr = p;
        p += sp.dst.len;
        sp.keys = keys;
        rc = st_block_add(ctx, &sp);
    }
    free(keys);
    if (!rc && p != end) rc = -1;
    return rc;
}

void st_block_free(store_ctx_t *ctx)
{
    struct st_block *b = ctx->block;
    if (!b) return;
    while (b->head)
        remove_waiter(b, b->head);
    for (uint32_t i = 0; i < b->nbuckets; i++)
        for (st_wkey_t *k = b->buckets[i], *next; k; k = next) {
            next = k->hnext;
            free(k);
        }
    free(b->buckets);
    for (uint32_t i = 0; i < b->nreplies; i++)
        buf_free(&b->replies[i].body);
    free(b->replies);
    free(b);
    ctx->block = NULL;
}

/* The origin of the record being applied: the frontend slot + 1 that
 * waits for its reply. */
/* The origin of the record being applied: the frontend slot + 1 that
 * waits for its reply (0: none, e.g. the store's own). */
static uint16_t record_origin(const apply_args_t *a)
{
    rec_hdr_t h;
    memcpy(&h, a->rec, sizeof(h));
    return h.origin;
}

void st_block_wait(store_ctx_t *ctx, const apply_args_t *a, st_waiter_spec_t *sp, buf_t *r)
{
    if (ctx->in_exec || !record_origin(a)) {
        if (r && sp->kind == ST_BLOCK_LIST_MOVE)
            resp_null3(r, sp->proto);
        else if (r)
            resp_null_array3(r, sp->proto);
        return;
    }
    sp->id = a->lsn;
    sp->origin = record_origin(a);
    sp->dbnum = a->dbnum;
    st_block_add(ctx, sp);
    st_block_defer_reply(ctx);
}
