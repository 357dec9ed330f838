/*
 * pager.c - the store's pager (D60, D63, D64, D65): it decides when
 * large hashes, sets, lists, streams and sorted sets go into pages, and
 * writes the records that do it, CMD_PAGEIN and CMD_PAGE
 * (core/hash_paged.c: the design), CMD_LPAGE (core/list.c,
 * core/list_page.c), CMD_SPAGE (core/stream.c, core/stream_page.c);
 * types/t_page.c applies them. Lists (a sorted set's order among them)
 * and streams are chunked collections (core/chunked.c): one table drives
 * both; a sorted set's member -> score part is paged as a hash.
 *
 * Store process, between batches (store.c), single-threaded. What it
 * writes goes through the store's own ring claimer, as compaction's
 * relocations do (store/compact.c), and changes the state only when the
 * logger made it durable and the store applied it, like any record: a
 * crash anywhere loses nothing (a record not yet durable is simply not
 * there after the restart; the pager writes it again later). Its own
 * state (the queue, the in-flight marks) is never part of the state.
 *
 * What it looks at: the keys core/watch.c reports changed (ctx->on_changed)
 * whose collection might want work (st_hash_page_wanted,
 * st_list_page_wanted, st_stream_page_wanted: O(1)), and those
 * compaction's pass finds with pages below its line. A queue of at most
 * STORE_PAGER_QUEUE keys, each dropped once it wants nothing; one that
 * does not fit is noted again by its next write.
 *
 * Records may be in flight when the pager looks again: a range with a
 * record in flight is skipped (busy), and a CMD_PAGEIN written is not
 * written again before it is applied. Once everything the pager wrote is
 * applied, marks still set belong to records that did not match (a no-op
 * apply) and are cleared.
 */
#include "pager.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "io_fault.h"
#include "log.h"
#include "record.h"
#include "ring.h"
#include "store/core/entry.h"
#include "store/core/object.h"
#include "store/core/stream.h"
#include "store/core/zset.h"

/* The overlay size past which the densest ranges get new pages even below
 * ST_PAGE_RANGE_MIN entries (RAM bounded per collection). */
#define PAGER_OVERLAY_MAX 1024u
/* Page bytes one turn builds at most, so that a turn costs the clients
 * little (about a millisecond); a collection whose overlay is past twice
 * its bound may take that much past the budget (a turn at a time). */
#define PAGER_TURN (256u << 10)
/* Members per range a collection starts its pages with. */
#define PAGER_PAGE_MEMBERS 32u
/* A page record's largest size (a quarter of the ring at most). */
#define PAGER_RECORD_MAX (1u << 20)

/* The hash whose members may go into pages at e: a hash's or set's own,
 * a sorted set's member -> score part (D65); else NULL. */
static st_hash_t *hash_of(idx_entry_t *e)
{
    if (st_ent_kind(e) != VK_OBJ) return NULL;
    unsigned t = st_ent_type(e);
    if (t == ST_ZSET) return st_zset_dict(st_ent_zset(e));
    return t == ST_HASH || t == ST_SET ? st_ent_hash(e) : NULL;
}

/* A chunked collection (a list, D63, or a stream, D64), as the pager
 * drives it: its page record's op, and its type's builder
 * (core/list_page.c, core/stream_page.c). */
typedef struct chunked_ops {
    cmd_id_t op;
    const char *what; /* for the log */
    int (*wanted)(void *o, const st_pgpolicy_t *pol);
    int (*behind)(const void *o);
    int (*build)(store_ctx_t *ctx, void *o, const st_pgpolicy_t *pol, st_cpbuilt_t *out);
    void (*unbusy)(void *o);
} chunked_ops_t;

static int list_wanted(void *o, const st_pgpolicy_t *pol)
{
    return st_list_page_wanted(o, pol);
}
static int list_behind(const void *o)
{
    return st_list_page_behind(o);
}
static int list_build(store_ctx_t *ctx, void *o, const st_pgpolicy_t *pol, st_cpbuilt_t *out)
{
    return st_list_page_build(ctx, o, pol, out);
}
static void list_unbusy(void *o)
{
    st_list_page_unbusy(o);
}
static const chunked_ops_t list_chunked = {CMD_LPAGE,   "list",     list_wanted,
                                           list_behind, list_build, list_unbusy};

static int stream_wanted(void *o, const st_pgpolicy_t *pol)
{
    return st_stream_page_wanted(o, pol);
}
static int stream_behind(const void *o)
{
    return st_stream_page_behind(o);
}
static int stream_build(store_ctx_t *ctx, void *o, const st_pgpolicy_t *pol, st_cpbuilt_t *out)
{
    return st_stream_page_build(ctx, o, pol, out);
}
static void stream_unbusy(void *o)
{
    st_stream_page_unbusy(o);
}
static const chunked_ops_t stream_chunked = {CMD_SPAGE,     "stream",     stream_wanted,
                                             stream_behind, stream_build, stream_unbusy};

/* The chunked collection at e, with its ops in *ops, or NULL: a list, a
 * sorted set's order (a keyed list, D65), a stream. */
static void *chunked(idx_entry_t *e, const chunked_ops_t **ops)
{
    if (st_ent_kind(e) != VK_OBJ) return NULL;
    if (st_ent_type(e) == ST_LIST || st_ent_type(e) == ST_ZSET) {
        *ops = &list_chunked;
        return st_ent_type(e) == ST_ZSET ? st_zset_order(st_ent_zset(e)) : st_ent_list(e);
    }
    if (st_ent_type(e) == ST_STREAM) {
        *ops = &stream_chunked;
        return st_ent_stream(e);
    }
    return NULL;
}

int store_pager_wants(const store_pager_t *pg, idx_entry_t *e, uint64_t below)
{
    st_pgpolicy_t pol = pg->pol;
    pol.below = below;
    const chunked_ops_t *ops;
    void *o = chunked(e, &ops);
    st_hash_t *h = hash_of(e);
    return (o && ops->wanted(o, &pol)) || (h && st_hash_page_wanted(h, &pol));
}

/* ctx->on_changed: a write changed the key whose entry is e. */
static void note_changed(store_ctx_t *ctx, unsigned dbnum, idx_entry_t *e)
{
    store_pager_t *pg = ctx->pager;
    if (!pg || !e || !store_pager_wants(pg, e, 0)) return;
    store_pager_note_key(pg, dbnum, e->data, e->klen, 0);
}

void store_pager_init(store_pager_t *pg, store_ctx_t *ctx, const config_t *cfg, uint64_t ring_max,
                      uint64_t seed)
{
    memset(pg, 0, sizeof(*pg));
    uint64_t rec = ring_max > 4096 ? ring_max - 1024 : ring_max / 2;
    if (rec > PAGER_RECORD_MAX) rec = PAGER_RECORD_MAX;
    uint64_t page = cfg->page_size ? cfg->page_size : 4096;
    if (page > rec / 2) page = rec / 2;
    pg->pol = (st_pgpolicy_t){.entries = cfg->paging_entries,
                              .overlay_max = PAGER_OVERLAY_MAX,
                              .page_bytes = (uint32_t)page,
                              .record_bytes = (uint32_t)rec};
    for (unsigned i = 0; i < ST_PAGE_MAX_IMAGES; i++)
        buf_init(&pg->built.img[i]);
    st_cpbuilt_init(&pg->cbuilt);
    pg->rng = seed | 1;
    if (ctx && cfg->paging_entries) {
        ctx->pager = pg;
        ctx->on_changed = note_changed;
    }
}

void store_pager_free(store_pager_t *pg)
{
    for (uint32_t i = 0; i < pg->nq; i++)
        free(pg->q[i].key);
    pg->nq = 0;
    for (unsigned i = 0; i < ST_PAGE_MAX_IMAGES; i++)
        buf_free(&pg->built.img[i]);
    st_cpbuilt_free(&pg->cbuilt);
}

void store_pager_note_key(store_pager_t *pg, unsigned db, const void *key, uint32_t klen,
                          uint64_t below)
{
    for (uint32_t i = 0; i < pg->nq; i++)
        if (pg->q[i].db == db && pg->q[i].klen == klen && memcmp(pg->q[i].key, key, klen) == 0) {
            if (below > pg->q[i].below) pg->q[i].below = below;
            return;
        }
    if (pg->nq == STORE_PAGER_QUEUE) return; /* noted again by its next write */
    unsigned char *copy = malloc(klen ? klen : 1);
    if (!copy) return;
    memcpy(copy, key, klen);
    pg->q[pg->nq++] = (store_pager_note_t){db, klen, copy, 0, below};
}

static void drop(store_pager_t *pg, uint32_t i)
{
    free(pg->q[i].key);
    pg->q[i] = pg->q[--pg->nq];
}

/* Commit one record of argc arguments to the ring: its ring bytes, 0 when
 * the ring has no room now, or UINT64_MAX when it can never fit. */
static uint64_t commit(store_pager_t *pg, store_ctx_t *ctx, shm_t *shm, unsigned db, cmd_id_t op,
                       uint16_t argc, const unsigned char **argv, const uint32_t *lens)
{
    ring_t *ring = shm_ring(shm);
    size_t payload = rec_cmd_payload_size(argc, lens);
    if (payload + REC_HDR_SIZE > ring_max_record(ring)) return UINT64_MAX;
    uint32_t space = rec_space((uint32_t)payload);
    uint64_t pos;
    if (ring_claim(ring, shm_store_claimer(shm), space, &pos) != 0) return 0;
    uint64_t durable = atomic_load_explicit(&shm->durable_lsn, memory_order_acquire);
    /* The store's apply clock as the record's time: applying it moves no
     * clock (route.c: now = max(now, record time)). */
    rec_encode_cmd_durable(ring_ptr(ring, pos), pos, durable, 0, ctx->now, REC_OP_DB(op, db), argc,
                           argv, lens);
    ring_commit(ring, shm_store_claimer(shm), pos);
    pg->last_end = pos + space;
    pg->space_written += space;
    pg->records++;
    enum io_fault_point at = pg->zset          ? IO_FAULT_ZSET_WRITTEN
                             : op == CMD_LPAGE ? IO_FAULT_LIST_WRITTEN
                             : op == CMD_SPAGE ? IO_FAULT_STREAM_WRITTEN
                                               : IO_FAULT_PAGE_WRITTEN;
    if (io_fault_point(at) == IO_FAULT_KILL) raise(SIGKILL);
    return space;
}

static uint64_t next_seed(store_pager_t *pg)
{
    uint64_t x = pg->rng; /* xorshift64 */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return pg->rng = x;
}

static uint64_t write_page_in(store_pager_t *pg, store_ctx_t *ctx, shm_t *shm,
                              const store_pager_note_t *n, uint32_t members)
{
    unsigned char seed[8], ranges[4];
    cmd_put_i64(seed, (int64_t)next_seed(pg));
    /* About PAGER_PAGE_MEMBERS members a range to start with: each range
     * gets its first page on its own (a range's page splits as it grows). */
    uint32_t r = members / PAGER_PAGE_MEMBERS;
    cmd_put_u32(ranges, r < 1 ? 1 : r > ST_PAGE_IN_RANGES_MAX ? ST_PAGE_IN_RANGES_MAX : r);
    const unsigned char *argv[3] = {n->key, seed, ranges};
    uint32_t lens[3] = {n->klen, 8, 4};
    uint64_t space = commit(pg, ctx, shm, n->db, CMD_PAGEIN, 3, argv, lens);
    if (space && space != UINT64_MAX) {
        pg->page_ins++;
        log_info("store: %s of %u members goes into pages (D60%s)",
                 pg->zset ? "a sorted set" : "a hash or set", members, pg->zset ? ", D65" : "");
    }
    return space;
}

/* The built record pg->built for the key of n. */
static uint64_t write_page(store_pager_t *pg, store_ctx_t *ctx, shm_t *shm,
                           const store_pager_note_t *n)
{
    st_pgbuilt_t *b = &pg->built;
    unsigned char objid[8], as_of[8], first[8], end[8], rest[4], ver[8];
    cmd_put_i64(objid, (int64_t)b->objid);
    cmd_put_i64(as_of, (int64_t)b->as_of);
    cmd_put_i64(first, (int64_t)b->first_lo);
    cmd_put_i64(end, (int64_t)b->end_lo);
    cmd_put_u32(rest, b->rest);
    cmd_put_i64(ver, (int64_t)b->version);
    const unsigned char *argv[7 + ST_PAGE_MAX_IMAGES] = {n->key, objid, as_of, first,
                                                         end,    rest,  ver};
    uint32_t lens[7 + ST_PAGE_MAX_IMAGES] = {n->klen, 8, 8, 8, 8, 4, 8};
    uint64_t bytes = 0;
    for (uint32_t j = 0; j < b->nimg; j++) {
        argv[7 + j] = (const unsigned char *)b->img[j].data;
        lens[7 + j] = (uint32_t)b->img[j].len;
        bytes += b->img[j].len;
    }
    uint64_t space = commit(pg, ctx, shm, n->db, CMD_PAGE, (uint16_t)(7 + b->nimg), argv, lens);
    if (space && space != UINT64_MAX) {
        pg->pages += b->nimg;
        pg->page_bytes += bytes;
    }
    return space;
}

/* The built record pg->cbuilt, op's, for the key of n. */
static uint64_t write_cpage(store_pager_t *pg, store_ctx_t *ctx, shm_t *shm,
                            const store_pager_note_t *n, cmd_id_t op)
{
    st_cpbuilt_t *b = &pg->cbuilt;
    const unsigned char *argv[3 + ST_CPAGE_MAX_IMAGES] = {
        n->key, (const unsigned char *)b->stamps.data, (const unsigned char *)b->layout.data};
    uint32_t lens[3 + ST_CPAGE_MAX_IMAGES] = {n->klen, (uint32_t)b->stamps.len,
                                              (uint32_t)b->layout.len};
    uint64_t bytes = 0;
    for (uint32_t j = 0; j < b->nimg; j++) {
        argv[3 + j] = (const unsigned char *)b->img[j].data;
        lens[3 + j] = (uint32_t)b->img[j].len;
        bytes += b->img[j].len;
    }
    uint64_t space = commit(pg, ctx, shm, n->db, op, (uint16_t)(3 + b->nimg), argv, lens);
    if (space && space != UINT64_MAX) {
        pg->pages += b->nimg;
        pg->page_bytes += bytes;
    }
    return space;
}

/* One look at chunked collection o (the key of n): its records, up to the
 * budget (past it when the pager is behind). Sets *full when the ring had
 * no room; returns whether to look again. */
static int turn_chunked(store_pager_t *pg, store_ctx_t *ctx, shm_t *shm,
                        const store_pager_note_t *n, const chunked_ops_t *ops, void *o, int settled,
                        uint64_t budget, uint64_t *done, int *full)
{
    if (settled) ops->unbusy(o);
    if (!ops->wanted(o, &pg->pol)) return 0;
    uint64_t limit = ops->behind(o) ? PAGER_TURN : budget;
    int keep = *done >= limit, rc;
    while (*done < limit && (rc = ops->build(ctx, o, &pg->pol, &pg->cbuilt)) != ST_PAGE_NONE) {
        keep = 1;
        if (rc != ST_PAGE_BUILT) break;
        uint64_t s = write_cpage(pg, ctx, shm, n, ops->op);
        if (!s || s == UINT64_MAX) {
            ops->unbusy(o);
            if (!s) *full = 1;
            if (s == UINT64_MAX)
                log_warn("store: a %s page record does not fit the ring; the %s stays in RAM",
                         ops->what, ops->what);
            break;
        }
        *done += s;
    }
    return keep;
}

/* One look at hash h (the key of n, or its sorted set's member -> score
 * part): a CMD_PAGEIN, or CMD_PAGE records up to the budget (past it when
 * the pager is behind). Sets *full when the ring had no room; returns
 * whether to look again. */
static int turn_hash(store_pager_t *pg, store_ctx_t *ctx, shm_t *shm, store_pager_note_t *n,
                     st_hash_t *h, int settled, uint64_t budget, uint64_t *done, int *full)
{
    if (n->pagein_end && ctx->applied < n->pagein_end) return 1; /* its CMD_PAGEIN is in flight */
    n->pagein_end = 0;
    if (settled) st_hash_page_unbusy(h);
    int want = st_hash_page_wanted(h, &pg->pol), keep = 0;
    if (want == ST_PAGE_WANT_IN) {
        uint64_t s = write_page_in(pg, ctx, shm, n, st_hash_len(h));
        if (!s) {
            *full = 1;
            return 1;
        }
        if (s != UINT64_MAX) {
            *done += s;
            n->pagein_end = pg->last_end;
            keep = 1;
        }
    } else if (want == ST_PAGE_WANT_BUILD) {
        /* Behind the writes: catch up past the budget (RAM is what the
         * bound protects), a turn at a time. */
        uint64_t limit = st_hash_page_behind(h, &pg->pol) ? PAGER_TURN : budget;
        if (*done >= limit) keep = 1; /* no budget left this turn */
        int rc;
        while (*done < limit &&
               (rc = st_hash_page_build(ctx, h, &pg->pol, &pg->built)) != ST_PAGE_NONE) {
            keep = 1; /* more to look at, or records in flight: look again */
            if (rc != ST_PAGE_BUILT) break;
            uint64_t s = write_page(pg, ctx, shm, n);
            if (!s || s == UINT64_MAX) {
                st_hash_page_unbusy(h);
                if (!s) *full = 1;
                if (s == UINT64_MAX)
                    log_warn(
                        "store: a page record does not fit the ring; the collection stays in RAM");
                break;
            }
            *done += s;
        }
    }
    return keep;
}

uint64_t store_pager_run(store_pager_t *pg, store_ctx_t *ctx, shm_t *shm, store_compact_t *c,
                         uint64_t below, uint64_t budget)
{
    if (!pg->nq || !store_compact_claimer_ready(c, shm)) return 0;
    if (budget > PAGER_TURN) budget = PAGER_TURN;
    /* Everything written is applied: marks left are of no-op records. */
    int settled = ctx->applied >= pg->last_end;
    uint64_t done = 0;
    int full = 0;
    uint32_t i = pg->next < pg->nq ? pg->next : 0;
    for (uint32_t looked = 0; looked < pg->nq && done < PAGER_TURN && !full; looked++) {
        if (i >= pg->nq) i = 0;
        store_pager_note_t *n = &pg->q[i];
        /* Compaction's line when its pass noted the key, kept past the
         * pass (one over few keys ends before the pager's turn comes). */
        pg->pol.below = n->below > below ? n->below : below;
        st_db_t *db = st_db(ctx, n->db);
        idx_entry_t **slot = db ? idx_find(&db->ix, n->key, n->klen) : NULL;
        st_hash_t *h = slot ? hash_of(*slot) : NULL;
        const chunked_ops_t *ops;
        void *co = slot ? chunked(*slot, &ops) : NULL;
        /* A sorted set has both (D65): its order's records, then its
         * member -> score part's. */
        pg->zset = slot && st_ent_type(*slot) == ST_ZSET;
        int keep = 0;
        if (co) keep = turn_chunked(pg, ctx, shm, n, ops, co, settled, budget, &done, &full);
        if (h && !full) keep |= turn_hash(pg, ctx, shm, n, h, settled, budget, &done, &full);
        if (keep)
            i++;
        else
            drop(pg, i);
    }
    pg->zset = 0;
    pg->next = i;
    if (done) shm_wake(&shm->logger_wake);
    return done;
}
