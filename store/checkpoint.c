/*
 * checkpoint.c - the store's checkpoints (checkpoint.h): what of the state
 * goes into a checkpoint file (common/ckpt.h has the file's framing), how it
 * is loaded back, and when the store writes one.
 *
 * Run by the store process: loading at start (store.c, before replay), the
 * schedule between batches; the writing itself runs in a child forked from
 * the store, which sees the state as it was at the fork (copy-on-write) and
 * writes it while the store goes on applying and answering (D23). The child
 * touches no shared memory, ring or channel, only reads its copy of the
 * state and writes files through the I/O seam, and leaves with _exit (no
 * atexit handler of the server runs twice). It dies with the store
 * (PR_SET_PDEATHSIG).
 *
 * What a checkpoint at LSN X holds: everything replay from X needs to
 * reach the state a replay from the log's start reaches (contract 4):
 *   - every entry of every database, expired or not (an entry expired by
 *     the apply clock but not reclaimed is invisible to every later record,
 *     so keeping it changes nothing), with the piece lists exactly as they
 *     are (how APPEND and SETRANGE cut and compact later depends on them);
 *   - the apply clock, X, and each database's WATCH identity;
 *   - the WATCH table (exec.c): an EXEC after X whose watch point is before
 *     X must be judged as it was when it was acknowledged;
 *   - the clients blocked on keys (core/block.c, D36), in registration
 *     order: a push after X serves the waiter a replay from the start would;
 *   - the pending value groups (core/groups.c, D31, D55): a chunk or final
 *     after X continues a group whose first chunks lie before X.
 * And one thing that is not log state: each key's access data (the LRU
 * clock or LFU counter of core/access.h), last, in ACCESS blocks, so a
 * restart's OBJECT IDLETIME / FREQ and eviction order go on from X's
 * (D49). Reads change it without a record, so a restart has it as of the
 * checkpoint, with the writes replayed after X touching their keys again.
 * Not in it: the index's layout and seed (random per process anyway), the
 * counters derivable from the entries (rebuilt while loading), the active
 * expiry cursor (when it runs never changes what later records see).
 *
 * The ENTRIES payload, one item per entry, host order (little-endian):
 *   u8 type        1 = string; 1 + the collection's type number
 *                  (core/object.h: hash 2, list 3, set 4, zset 5)
 *   u8 vkind       exactly as in the entry: kind bits and encoding bits
 *   u8 ilen, u8 0, u32 klen, i64 expire (ms; 0 = none)
 *   key bytes, then the ilen inline bytes
 *   string body by kind: VK_INLINE nothing; VK_EXTENT u64 lsn, u32 len;
 *   VK_LIST u32 pieces, u32 capacity, then per piece u64 end word (kind in
 *   the top bits, as st_piece_t) and: PIECE_LOG u64 lsn, PIECE_ZERO
 *   nothing, PIECE_RAM the piece's bytes.
 *   collection body (vkind VK_OBJ, ilen 0): u64 length, then that many
 *   bytes its type's ckpt_write wrote (its values' extents as LSNs too).
 * The GROUPS payload, one item per pending group: u64 id (the LSN of its
 * first chunk), u64 owner, u32 the seq its next chunk must carry, u32
 * pieces, u32 the list's capacity (MEMORY USAGE counts it), then per piece u64 end word and u64 lsn
 * (PIECE_LOG only, each at least one byte, all below X). The `aborting` hint is not written: a
 * restart's sweep decides again whose writer is gone (D31).
 * The ACCESS payload, one item per key, databases in order and each in the
 * ENTRIES blocks' order: u32 database, u32 klen, u32 the 24 access bits,
 * the key bytes. A file without them (older) loads with fresh access data.
 * LOG pieces and extents stay LSNs: the log below X must stay readable
 * while a checkpoint refers to it. So a MINREF block comes first: the
 * lowest LSN any entry refers to (from the live-bytes table, core/live.c;
 * recounted and compared on load), which store/compact.c reads to know
 * which segments the kept checkpoints still need (D27).
 *
 * A crash at any moment (the store, the child, the power) leaves the files
 * that were there, plus at most a .tmp or a renamed file whose name is not
 * durable: start-up then loads the newest file that verifies, or replays
 * the whole log; never wrong data, at worst a longer replay.
 */
#include "checkpoint.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "ckpt.h"
#include "io.h"
#include "io_fault.h"
#include "log.h"
#include "shm.h"
#include "store/core/alloc.h"
#include "store/core/entry.h"
#include "store/core/index.h"
#include "store/core/object.h"
#include "store/core/pieces.h"
#include "store/core/block.h"
#include "store/core/groups.h"
#include "store/core/watch.h"

#define CKPT_TYPE_STRING 1
#define CKPT_ENTRY_HDR   16u
#define CKPT_POLL_NS     (5ull * 1000 * 1000) /* reap a finished child within 5 ms */
#define CKPT_WATCH_CHUNK (1u << 20)
#define CKPT_CHILD_NICE  10 /* the checkpoint child's nice value */

_Static_assert(CKPT_ACCESS_BITS_MAX == IDX_ACCESS_MAX, "an ACCESS item holds an entry's bits");

/* ---- writing ------------------------------------------------------------ */

typedef struct save_arg {
    ckpt_writer_t *w;
    uint64_t keys;
} save_arg_t;

static void put_u32(ckpt_writer_t *w, uint32_t v)
{
    ckpt_put(w, CKPT_BLK_ENTRIES, &v, 4);
}

static void put_u64(ckpt_writer_t *w, uint64_t v)
{
    ckpt_put(w, CKPT_BLK_ENTRIES, &v, 8);
}

/* A collection's body: its type's own stream, length first. */
static void save_object(ckpt_writer_t *w, const st_obj_t *o)
{
    buf_t b;
    buf_init(&b);
    o->ops->ckpt_write(o, &b);
    put_u64(w, b.len);
    ckpt_put(w, CKPT_BLK_ENTRIES, b.data, b.len);
    buf_free(&b);
}

static int save_entry(void *arg, idx_entry_t *e)
{
    save_arg_t *a = arg;
    ckpt_writer_t *w = a->w;
    unsigned char h[CKPT_ENTRY_HDR] = {(unsigned char)(CKPT_TYPE_STRING + st_ent_type(e)), e->vkind,
                                       e->ilen, 0};
    memcpy(h + 4, &e->klen, 4);
    int64_t expire = st_ent_expire(e);
    memcpy(h + 8, &expire, 8);
    ckpt_put(w, CKPT_BLK_ENTRIES, h, sizeof(h));
    ckpt_put(w, CKPT_BLK_ENTRIES, e->data, (size_t)e->klen + e->ilen);
    switch (st_ent_kind(e)) {
    case VK_EXTENT: {
        uint64_t lsn;
        uint32_t len;
        st_ent_get_ext1(e, &lsn, &len);
        put_u64(w, lsn);
        put_u32(w, len);
        break;
    }
    case VK_LIST: {
        const st_pieces_t *l = st_ent_pieces(e);
        put_u32(w, l->n);
        put_u32(w, l->cap);
        uint64_t start = 0;
        for (uint32_t i = 0; i < l->n; i++) {
            const st_piece_t *p = &l->p[i];
            uint64_t end = p->end & PIECE_END_MASK;
            put_u64(w, p->end);
            unsigned kind = (unsigned)(p->end >> PIECE_KIND_SHIFT);
            if (kind == PIECE_LOG) put_u64(w, p->where);
            if (kind == PIECE_RAM)
                ckpt_put(w, CKPT_BLK_ENTRIES, (const void *)(uintptr_t)p->where,
                         (size_t)(end - start));
            start = end;
        }
        break;
    }
    case VK_OBJ:
        save_object(w, st_ent_obj(e));
        break;
    default:
        break;
    }
    a->keys++;
    return ckpt_item_done(w) ? 1 : 0;
}

typedef struct access_arg {
    ckpt_writer_t *w;
    uint32_t db;
} access_arg_t;

static int save_access(void *arg, idx_entry_t *e)
{
    access_arg_t *a = arg;
    uint32_t h[3] = {a->db, e->klen, idx_access(e)};
    ckpt_put(a->w, CKPT_BLK_ACCESS, h, sizeof(h));
    ckpt_put(a->w, CKPT_BLK_ACCESS, e->data, e->klen);
    return ckpt_item_done(a->w) ? 1 : 0;
}

/* Every key's access data, after the entries (the same visiting order). */
static int save_access_all(store_ctx_t *ctx, ckpt_writer_t *w)
{
    /* Tests: killed with the entries written and no access data. */
    if (io_fault_point(IO_FAULT_CKPT_ACCESS)) raise(SIGKILL);
    int rc = 0;
    for (int i = 0; i < ctx->ndb && !rc; i++) {
        access_arg_t a = {w, (uint32_t)i};
        rc = idx_foreach(&ctx->dbs[i]->ix, save_access, &a) ? -1 : 0;
    }
    return rc ? rc : ckpt_flush_block(w);
}

/* The pending value groups (D55), one item each: a chunk after the
 * checkpoint continues its group, a final takes it. */
static int save_groups(const st_groups_t *t, ckpt_writer_t *w)
{
    int rc = 0;
    for (uint32_t i = 0; i < t->n && !rc; i++) {
        const st_group_t *g = &t->g[i];
        uint32_t h32[3] = {g->next_seq, g->l->n, g->l->cap};
        ckpt_put(w, CKPT_BLK_GROUPS, &g->id, 8);
        ckpt_put(w, CKPT_BLK_GROUPS, &g->owner, 8);
        ckpt_put(w, CKPT_BLK_GROUPS, h32, sizeof(h32));
        for (uint32_t k = 0; k < g->l->n; k++) {
            ckpt_put(w, CKPT_BLK_GROUPS, &g->l->p[k].end, 8);
            ckpt_put(w, CKPT_BLK_GROUPS, &g->l->p[k].where, 8);
        }
        rc = ckpt_item_done(w);
    }
    return rc || !t->n ? rc : ckpt_flush_block(w);
}

/* A state kept as bytes (the WATCH table, the blocked clients): n bytes
 * from save, in blocks of the given type of at most CKPT_WATCH_CHUNK. */
static int save_blob(store_ctx_t *ctx, ckpt_writer_t *w, uint32_t type, size_t n,
                     void (*save)(const store_ctx_t *, unsigned char *))
{
    if (!n) return 0;
    unsigned char *b = malloc(n);
    if (!b) {
        errno = ENOMEM;
        return -1;
    }
    save(ctx, b);
    int rc = 0;
    for (size_t off = 0; off < n && !rc; off += CKPT_WATCH_CHUNK) {
        size_t k = n - off < CKPT_WATCH_CHUNK ? n - off : CKPT_WATCH_CHUNK;
        ckpt_put(w, type, b + off, k);
        rc = ckpt_item_done(w);
        if (!rc) rc = ckpt_flush_block(w);
    }
    free(b);
    return rc;
}

int store_ckpt_save(store_ctx_t *ctx, const char *dir)
{
    uint64_t t0 = shm_mono_ns();
    ckpt_info_t info = {
        .segment_size = ctx->segment_size,
        .lsn = ctx->applied,
        .now = ctx->now,
        .keys = store_key_count(ctx),
        .ndb = (uint32_t)ctx->ndb,
        .flags = ctx->watch ? CKPT_F_WATCH : 0,
    };
    if (info.keys) info.flags |= CKPT_F_ACCESS;
    if (ctx->groups.n) info.flags |= CKPT_F_GROUPS;
    /* The lowest LSN an entry refers to, from the live-bytes table (exact
     * at the fork: it is the child's copy); the loader recounts it and
     * refuses a file that disagrees. A broken table (live.c) writes none:
     * the file then protects the whole log below it. */
    int minref = !ctx->live.broken;
    uint64_t min_ref = st_live_lowest(&ctx->live);
    if (minref) info.flags |= CKPT_F_MINREF;
    ckpt_writer_t w;
    if (ckpt_writer_open(&w, dir, &info)) {
        log_warn("store: cannot create the checkpoint at LSN %" PRIu64 " in %s: %s", info.lsn, dir,
                 strerror(errno));
        return -1;
    }
    save_arg_t a = {&w, 0};
    int rc = 0;
    if (minref) {
        ckpt_put(&w, CKPT_BLK_MINREF, &min_ref, 8);
        rc = ckpt_item_done(&w);
        if (!rc) rc = ckpt_flush_block(&w);
    }
    for (int i = 0; i < ctx->ndb && !rc; i++) {
        st_db_t *db = ctx->dbs[i];
        unsigned char d[16];
        uint32_t num = (uint32_t)i, id = db->watch_id;
        uint64_t keys = idx_count(&db->ix);
        memcpy(d, &num, 4);
        memcpy(d + 4, &id, 4);
        memcpy(d + 8, &keys, 8);
        ckpt_put(&w, CKPT_BLK_DB, d, sizeof(d));
        rc = ckpt_item_done(&w);
        if (!rc) rc = ckpt_flush_block(&w); /* one database per DB block */
        if (!rc && keys) rc = idx_foreach(&db->ix, save_entry, &a) ? -1 : 0;
    }
    if (!rc) rc = save_blob(ctx, &w, CKPT_BLK_WATCH, st_watch_state_size(ctx), st_watch_state_save);
    if (!rc)
        rc = save_blob(ctx, &w, CKPT_BLK_BLOCKED, st_block_state_size(ctx), st_block_state_save);
    if (!rc) rc = save_groups(&ctx->groups, &w);
    if (!rc) rc = save_access_all(ctx, &w);
    uint64_t bytes = w.off;
    if (rc) {
        int e = errno;
        ckpt_writer_abort(&w);
        log_warn("store: writing the checkpoint at LSN %" PRIu64 " failed: %s; abandoned", info.lsn,
                 strerror(e));
        return -1;
    }
    if (ckpt_writer_commit(&w)) {
        log_warn("store: finishing the checkpoint at LSN %" PRIu64 " failed: %s; abandoned",
                 info.lsn, strerror(errno));
        return -1;
    }
    log_info("store: checkpoint at LSN %" PRIu64 " written: %" PRIu64 " keys, %" PRIu64
             " bytes in %.3f s",
             info.lsn, a.keys, bytes + CKPT_TRAILER, (double)(shm_mono_ns() - t0) / 1e9);
    return 0;
}

static int prune_list(const char *dir, int tmp, size_t keep)
{
    uint64_t *v;
    size_t n;
    int failed = 0;
    if (ckpt_list(dir, tmp, &v, &n)) return 1;
    for (size_t i = 0; i + keep < n; i++) {
        char path[4096];
        ckpt_path(path, sizeof(path), dir, v[i], tmp);
        /* Tests: killed with some old checkpoints removed, some not. */
        if (io_fault_point(IO_FAULT_CKPT_DELETE)) raise(SIGKILL);
        if (io->unlink(path) && errno != ENOENT) {
            log_warn("store: cannot remove %s: %s", path, strerror(errno));
            failed++;
        }
    }
    free(v);
    return failed;
}

int store_ckpt_prune(const char *dir, unsigned keep)
{
    return prune_list(dir, 0, keep) + prune_list(dir, 1, 0);
}

/* ---- loading ------------------------------------------------------------ */

typedef struct load_state {
    store_ctx_t *ctx;
    st_db_t *db;      /* database being filled */
    uint64_t db_keys; /* keys its DB block announced */
    uint64_t db_loaded;
    uint64_t keys;
    int dbs_seen;
    uint64_t lsn;    /* the checkpoint's: every LOG reference lies below it */
    int has_min_ref; /* a MINREF block was read (first) */
    uint64_t min_ref;
    unsigned char *watch; /* WATCH blocks, concatenated */
    size_t watch_len, watch_cap;
    buf_t blocked; /* BLOCKED blocks, concatenated */
    uint64_t access_items;
    uint32_t groups; /* GROUPS items loaded */
    char *err;
    size_t errlen;
} load_state_t;

typedef struct cursor {
    const unsigned char *p, *end;
} cursor_t;

static int take(cursor_t *c, void *out, size_t n)
{
    if ((size_t)(c->end - c->p) < n) return -1;
    if (out) memcpy(out, c->p, n);
    c->p += n;
    return 0;
}

static int load_fail(load_state_t *ls, const char *what)
{
    snprintf(ls->err, ls->errlen, "%s", what);
    return -1;
}

static int db_done(load_state_t *ls)
{
    if (ls->db && ls->db_loaded != ls->db_keys) return load_fail(ls, "a database's key count");
    return 0;
}

/* Largest piece capacity taken from a file without question: lists grow by
 * doubling, and compaction leaves the capacity of the list it replaced, so
 * a capacity is not tied to the piece count; one beyond this and twice the
 * count is damage (a count that big would ask for gigabytes). */
#define CKPT_CAP_PLAIN (1u << 26)

/* Read the string body of an entry whose 16-byte header is h; every LSN it
 * refers to must lie below lsn_max, the checkpoint's. NULL when malformed. */
static idx_entry_t *load_string(cursor_t *c, const unsigned char *h, uint64_t lsn_max)
{
    uint8_t vkind = h[1], ilen = h[2];
    uint32_t klen;
    int64_t expire;
    memcpy(&klen, h + 4, 4);
    memcpy(&expire, h + 8, 8);
    unsigned kind = vkind & VK_KIND_MASK;
    if (kind > VK_LIST || ilen > STORE_INLINE_MAX || h[3]) return NULL;
    if ((size_t)(c->end - c->p) < (size_t)klen + ilen) return NULL;
    if (expire < 0) return NULL;
    idx_entry_t *e = st_ent_alloc(NULL, klen, ilen, vkind, expire); /* key taken below */
    take(c, e->data, (size_t)klen + ilen);
    if (kind == VK_LIST) st_ent_set_pieces(e, NULL);
    if (kind == VK_EXTENT) {
        uint64_t lsn;
        uint32_t len;
        if (take(c, &lsn, 8) || take(c, &len, 4) || lsn > lsn_max || len > lsn_max - lsn) goto bad;
        st_ent_set_ext1(e, lsn, len);
    } else if (kind == VK_LIST) {
        uint32_t n, cap;
        if (take(c, &n, 4) || take(c, &cap, 4) || cap < n || cap == 0) goto bad;
        if (cap > CKPT_CAP_PLAIN && cap > 2ull * n + 1024) goto bad;
        /* Each piece takes at least 8 bytes of the block: n is bounded. */
        if (n > (size_t)(c->end - c->p) / 8) goto bad;
        st_pieces_t *l = st_xmalloc(sizeof(*l) + (size_t)cap * sizeof(st_piece_t));
        l->n = 0;
        l->cap = cap;
        l->ram_bytes = 0;
        st_ent_set_pieces(e, l);
        uint64_t start = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t endw, where = 0;
            if (take(c, &endw, 8)) goto bad;
            uint64_t end = endw & PIECE_END_MASK;
            unsigned pk = (unsigned)(endw >> PIECE_KIND_SHIFT);
            if (end < start || pk > PIECE_RAM) goto bad;
            if (pk == PIECE_LOG &&
                (take(c, &where, 8) || where > lsn_max || end - start > lsn_max - where))
                goto bad;
            if (pk == PIECE_RAM) {
                uint64_t len = end - start;
                if ((uint64_t)(c->end - c->p) < len) goto bad;
                unsigned char *b = st_xmalloc(len ? (size_t)len : 1);
                take(c, b, (size_t)len);
                where = (uintptr_t)b;
                l->ram_bytes += len;
            }
            l->p[l->n++] = (st_piece_t){where, endw};
            start = end;
        }
    }
    return e;
bad:
    if (kind == VK_LIST && st_ent_pieces(e)) st_pieces_free(st_ent_pieces(e));
    free(e);
    return NULL;
}

/* Read a collection entry (type tag h[0] > CKPT_TYPE_STRING) through its
 * type's ckpt_read. NULL when malformed. */
static idx_entry_t *load_object(cursor_t *c, const unsigned char *h)
{
    const st_type_ops_t *ops = st_type_ops((unsigned)h[0] - CKPT_TYPE_STRING);
    uint8_t vkind = h[1];
    uint32_t klen;
    int64_t expire;
    uint64_t len;
    memcpy(&klen, h + 4, 4);
    memcpy(&expire, h + 8, 8);
    if (!ops || vkind != (uint8_t)(VK_OBJ | (ops->type << VK_TYPE_SHIFT)) || h[2] || h[3])
        return NULL;
    if ((size_t)(c->end - c->p) < klen) return NULL;
    rec_arg_t key = {c->p, klen};
    c->p += klen;
    if (take(c, &len, 8) || len > (uint64_t)(c->end - c->p)) return NULL;
    st_obj_t *o;
    long used = ops->ckpt_read(c->p, (size_t)len, &o);
    if (used < 0) return NULL;
    if ((uint64_t)used != len) {
        o->ops->free(o);
        return NULL;
    }
    c->p += len;
    return st_ent_new_obj(&key, o, expire);
}

static int load_entries(load_state_t *ls, const unsigned char *p, uint64_t n, uint32_t items)
{
    if (!ls->db) return load_fail(ls, "entries before any database");
    cursor_t c = {p, p + n};
    for (uint32_t i = 0; i < items; i++) {
        unsigned char h[CKPT_ENTRY_HDR];
        if (take(&c, h, sizeof(h))) return load_fail(ls, "a truncated entry");
        if (h[0] < CKPT_TYPE_STRING ||
            (h[0] > CKPT_TYPE_STRING && !st_type_ops((unsigned)h[0] - CKPT_TYPE_STRING)))
            return load_fail(ls, "an entry of an unknown type");
        idx_entry_t *e =
            h[0] == CKPT_TYPE_STRING ? load_string(&c, h, ls->lsn) : load_object(&c, h);
        if (!e) return load_fail(ls, "a malformed entry");
        /* No lookup first: the writer visits each entry once
         * (idx_foreach) and the file is trusted only whole (CRCs), and
         * looking every key up cost 60% of the load (2.0 s vs 0.74 s for
         * 2.5 M keys). */
        st_ent_store(ls->db, NULL, e);
        if (st_ent_kind(e) == VK_OBJ && st_ent_obj(e)->ops->bind)
            st_ent_obj(e)->ops->bind(st_ent_obj(e), ls->db->ctx);
        ls->db_loaded++;
        ls->keys++;
    }
    if (c.p != c.end) return load_fail(ls, "bytes after the last entry of a block");
    return 0;
}

/* An ACCESS block: after every database, each item a key loaded. */
static int load_access(load_state_t *ls, const unsigned char *p, uint64_t n, uint32_t items)
{
    store_ctx_t *ctx = ls->ctx;
    if (db_done(ls)) return -1;
    if (ls->dbs_seen != ctx->ndb) return load_fail(ls, "malformed access data (before a database)");
    /* Tests: killed with the entries in and their access data not. */
    if (!ls->access_items && io_fault_point(IO_FAULT_ACCESS_LOAD)) raise(SIGKILL);
    const unsigned char *end = p + n;
    for (uint32_t i = 0; i < items; i++) {
        ckpt_access_item_t it;
        if (ckpt_access_next(&p, end, (uint32_t)ctx->ndb, &it))
            return load_fail(ls, "malformed access data");
        idx_entry_t **slot = idx_find(&ctx->dbs[it.db]->ix, it.key, it.klen);
        if (!slot) return load_fail(ls, "malformed access data (a key it does not hold)");
        idx_set_access(*slot, it.bits);
    }
    if (p != end) return load_fail(ls, "malformed access data (bytes after its last item)");
    ls->access_items += items;
    return 0;
}

/* A GROUPS item: one pending group, every piece a LOG piece of at least
 * one byte below the checkpoint's LSN, the group's id not above its first
 * piece (the id is its first chunk record's LSN). NULL when malformed. */
static st_pieces_t *load_group(cursor_t *c, uint64_t lsn_max, uint64_t *id, uint64_t *owner,
                               uint32_t *next_seq)
{
    uint32_t n, cap;
    if (take(c, id, 8) || take(c, owner, 8) || take(c, next_seq, 4) || take(c, &n, 4) ||
        take(c, &cap, 4) || !n || n > *next_seq || cap < n || n > (size_t)(c->end - c->p) / 16 ||
        (cap > CKPT_CAP_PLAIN && cap > 2ull * n + 1024))
        return NULL;
    st_pieces_t *l = st_pieces_new(cap);
    uint64_t start = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t endw = 0, where = 0;
        take(c, &endw, 8);
        take(c, &where, 8);
        uint64_t end = endw & PIECE_END_MASK;
        if (endw >> PIECE_KIND_SHIFT != PIECE_LOG || end <= start || where > lsn_max ||
            end - start > lsn_max - where || (i == 0 && where < *id)) {
            st_pieces_free(l);
            return NULL;
        }
        l->p[l->n++] = (st_piece_t){where, endw};
        start = end;
    }
    return l;
}

/* A GROUPS block: after every database, before the access data. */
static int load_groups(load_state_t *ls, const unsigned char *p, uint64_t n, uint32_t items)
{
    if (db_done(ls)) return -1;
    if (ls->dbs_seen != ls->ctx->ndb || ls->access_items)
        return load_fail(ls, "malformed value groups (out of place)");
    cursor_t c = {p, p + n};
    for (uint32_t i = 0; i < items; i++) {
        uint64_t id, owner;
        uint32_t next_seq;
        st_pieces_t *l = load_group(&c, ls->lsn, &id, &owner, &next_seq);
        if (!l) return load_fail(ls, "malformed value groups");
        if (st_groups_restore(&ls->ctx->groups, id, owner, next_seq, l))
            return load_fail(ls, "malformed value groups (one group twice)");
    }
    if (c.p != c.end) return load_fail(ls, "malformed value groups (bytes after its last item)");
    ls->groups += items;
    return 0;
}

static int load_block(load_state_t *ls, uint32_t type, uint32_t items, const unsigned char *p,
                      uint64_t n)
{
    store_ctx_t *ctx = ls->ctx;
    switch (type) {
    case CKPT_BLK_DB: {
        if (items != 1 || n != 16) return load_fail(ls, "a malformed database block");
        if (db_done(ls)) return -1;
        uint32_t num, id;
        memcpy(&num, p, 4);
        memcpy(&id, p + 4, 4);
        memcpy(&ls->db_keys, p + 8, 8);
        if (num != (uint32_t)ls->dbs_seen || num >= (uint32_t)ctx->ndb)
            return load_fail(ls, "databases out of order");
        ls->db = ctx->dbs[num];
        ls->db->watch_id = id;
        ls->db_loaded = 0;
        ls->dbs_seen++;
        return 0;
    }
    case CKPT_BLK_MINREF:
        if (items != 1 || n != 8 || ls->dbs_seen || ls->has_min_ref)
            return load_fail(ls, "a malformed lowest-reference block");
        memcpy(&ls->min_ref, p, 8);
        ls->has_min_ref = 1;
        return 0;
    case CKPT_BLK_ENTRIES:
        return load_entries(ls, p, n, items);
    case CKPT_BLK_WATCH:
        if (ls->watch_len + n > ls->watch_cap) {
            size_t cap = ls->watch_len + (size_t)n;
            unsigned char *b = realloc(ls->watch, cap);
            if (!b) return load_fail(ls, "out of memory");
            ls->watch = b;
            ls->watch_cap = cap;
        }
        memcpy(ls->watch + ls->watch_len, p, (size_t)n);
        ls->watch_len += (size_t)n;
        return 0;
    case CKPT_BLK_BLOCKED:
        buf_append(&ls->blocked, p, (size_t)n);
        return 0;
    case CKPT_BLK_ACCESS:
        return load_access(ls, p, n, items);
    case CKPT_BLK_GROUPS:
        return load_groups(ls, p, n, items);
    default:
        return load_fail(ls, "a block of an unknown type");
    }
}

int store_ckpt_load(store_ctx_t *ctx, const char *path, char *err, size_t errlen)
{
    ckpt_reader_t r;
    load_state_t ls = {.ctx = ctx, .err = err, .errlen = errlen};
    buf_init(&ls.blocked);
    int rc = -1;
    if (ckpt_reader_open(&r, path, ctx->segment_size)) {
        snprintf(err, errlen, "%s", r.err);
        goto out;
    }
    ls.lsn = r.info.lsn;
    if (r.info.ndb != (uint32_t)ctx->ndb) {
        snprintf(err, errlen, "written with %u databases, not %d", (unsigned)r.info.ndb, ctx->ndb);
        goto out;
    }
    /* The entries' fresh access data (a file without ACCESS blocks keeps
     * it) is as of the checkpoint's clock. */
    ctx->now = r.info.now;
    for (;;) {
        uint32_t type, items;
        const unsigned char *p;
        uint64_t n;
        int k = ckpt_reader_next(&r, &type, &items, &p, &n);
        if (k < 0) {
            snprintf(err, errlen, "%s", r.err);
            goto out;
        }
        if (k == 0) break;
        if (load_block(&ls, type, items, p, n)) goto out;
    }
    if (db_done(&ls)) goto out;
    if (ls.dbs_seen != ctx->ndb || ls.keys != r.info.keys) {
        load_fail(&ls, "fewer databases or keys than the header says");
        goto out;
    }
    if (!!(r.info.flags & CKPT_F_WATCH) != (ls.watch_len > 0) ||
        (ls.watch_len && st_watch_state_load(ctx, ls.watch, ls.watch_len))) {
        load_fail(&ls, "a malformed WATCH table");
        goto out;
    }
    if (ls.blocked.len &&
        st_block_state_load(ctx, (const unsigned char *)ls.blocked.data, ls.blocked.len)) {
        load_fail(&ls, "malformed blocked clients");
        goto out;
    }
    if (!!(r.info.flags & CKPT_F_ACCESS) != (ls.access_items > 0) ||
        (ls.access_items && ls.access_items != r.info.keys)) {
        load_fail(&ls, "malformed access data (not one item per key)");
        goto out;
    }
    if (!!(r.info.flags & CKPT_F_GROUPS) != (ls.groups > 0)) {
        load_fail(&ls, "malformed value groups (the header's flag disagrees)");
        goto out;
    }
    if (!!(r.info.flags & CKPT_F_MINREF) != ls.has_min_ref ||
        (ls.has_min_ref && st_live_lowest(&ctx->live) != ls.min_ref)) {
        /* The segments deleted were chosen by this number (D27): a file
         * whose entries refer below it may need a deleted one. */
        load_fail(&ls, "its entries' lowest log reference is not the one it records");
        goto out;
    }
    ctx->now = r.info.now;
    ctx->applied = r.info.lsn;
    rc = 0;
out:
    free(ls.watch);
    buf_free(&ls.blocked);
    ckpt_reader_close(&r);
    return rc;
}

store_ctx_t *store_ckpt_restore(const config_t *cfg, uint64_t seed, uint64_t min_lsn,
                                uint64_t max_lsn, uint64_t *from)
{
    const char *dir = cfg->dir ? cfg->dir : ".";
    uint64_t *v = NULL;
    size_t n = 0;
    if (ckpt_list(dir, 0, &v, &n)) {
        log_warn("store: cannot list checkpoints in %s: %s; replaying the whole log", dir,
                 strerror(errno));
        n = 0;
    }
    for (size_t i = n; i-- > 0;) {
        char path[4096], err[256];
        ckpt_path(path, sizeof(path), dir, v[i], 0);
        if (v[i] > max_lsn || v[i] < min_lsn) {
            log_warn("store: checkpoint %s is outside the log (LSN %" PRIu64 "..%" PRIu64
                     "): skipped",
                     path, min_lsn, max_lsn);
            continue;
        }
        uint64_t t0 = shm_mono_ns();
        store_ctx_t *ctx = store_ctx_create(cfg, seed);
        if (!ctx) break;
        int loaded = store_ckpt_load(ctx, path, err, sizeof(err)) == 0, loaded_but_below = 0;
        if (loaded && st_live_lowest(&ctx->live) < min_lsn) {
            loaded_but_below = 1;
            snprintf(err, sizeof(err),
                     "it refers to the log at LSN %" PRIu64 ", below the log's first segment",
                     st_live_lowest(&ctx->live));
            loaded = 0;
        }
        if (loaded) {
            log_info("store: loaded checkpoint %s (LSN %" PRIu64 ", %" PRIu64 " keys) in %.2f s",
                     path, v[i], store_key_count(ctx), (double)(shm_mono_ns() - t0) / 1e9);
            *from = v[i];
            /* The newest: a child killed after its commit, before its
             * prune, left older ones behind, and no later checkpoint may
             * come to remove them (a clean stop at this LSN writes none).
             * The name it was loaded by is made durable first, as the
             * child does before pruning. */
            if (i + 1 == n && io_fsync_dir(dir) == 0) store_ckpt_prune(dir, STORE_CKPT_KEEP);
            free(v);
            return ctx;
        }
        log_warn("store: checkpoint %s is %s (%s): skipped", path,
                 loaded_but_below ? "unusable" : "damaged", err);
        store_ctx_destroy(ctx);
    }
    free(v);
    if (min_lsn > 0) {
        /* The log's first segments were deleted (D27): they were needed by
         * no kept checkpoint, so a replay from here would lose the state
         * they held. Never start with less than the log says. */
        log_warn("store: the log starts at LSN %" PRIu64 " (its earlier segments were deleted "
                 "after a checkpoint), but no checkpoint in %s can be loaded at or after it: "
                 "refusing to start rather than lose data; restore the checkpoint files "
                 "(atticdb-check %s lists them)",
                 min_lsn, dir, dir);
        *from = UINT64_MAX;
        return NULL;
    }
    if (n) log_warn("store: no usable checkpoint: replaying the whole log");
    *from = min_lsn;
    return store_ctx_create(cfg, seed);
}

int store_ckpt_min_ref(const char *path, uint64_t segment_size, uint64_t *min_ref)
{
    ckpt_reader_t r;
    int rc = -1;
    if (ckpt_reader_open(&r, path, segment_size) == 0 && (r.info.flags & CKPT_F_MINREF)) {
        uint32_t type, items;
        const unsigned char *p;
        uint64_t n;
        if (ckpt_reader_next(&r, &type, &items, &p, &n) == 1 && type == CKPT_BLK_MINREF &&
            items == 1 && n == 8) {
            memcpy(min_ref, p, 8);
            rc = 0;
        }
    }
    ckpt_reader_close(&r);
    return rc;
}

/* ---- the schedule ------------------------------------------------------- */

void store_ckpt_sched_init(store_ckpt_sched_t *s, const config_t *cfg, uint64_t from)
{
    memset(s, 0, sizeof(*s));
    s->dir = cfg->dir ? cfg->dir : ".";
    s->every = cfg->checkpoint_bytes;
    s->last_lsn = from;
    s->next_lsn = from + s->every;
}

/* What a child runs: job(ctx, arg), on its copy of the state. */
typedef struct child_job {
    int (*job)(store_ctx_t *, void *);
    void *arg;
} child_job_t;

/* In the child: run the job, leave without running the server's exit
 * handlers (the parent's atexit work is the parent's). */
static void child_main(store_ctx_t *ctx, const child_job_t *j, pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1); /* the store died before prctl */
    /* Behind the store, the logger and the frontends for the CPU: a
     * checkpoint may take its time, an ack may not (D23). Failing only
     * means it competes harder. */
    setpriority(PRIO_PROCESS, 0, CKPT_CHILD_NICE);
    _exit(j->job(ctx, j->arg) ? 1 : 0);
}

/* The checkpoint child's job: write, then prune. */
static int checkpoint_job(store_ctx_t *ctx, void *dir)
{
    int rc = store_ckpt_save(ctx, dir);
    /* Only once the new one is durable under its name may older ones go. */
    if (rc == 0) store_ckpt_prune(dir, STORE_CKPT_KEEP);
    return rc;
}

/* Fork a child running j; fill in what the schedule knows of it. */
static pid_t fork_child(store_ckpt_sched_t *s, store_ctx_t *ctx, const child_job_t *j,
                        uint64_t min_ref)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) child_main(ctx, j, parent);
    s->child = pid;
    s->child_lsn = store_applied(ctx);
    s->child_min_ref = min_ref;
    s->child_start_ns = shm_mono_ns();
    return pid;
}

static int start_child(store_ckpt_sched_t *s, store_ctx_t *ctx)
{
    uint64_t t0 = shm_mono_ns();
    child_job_t j = {checkpoint_job, (void *)s->dir};
    pid_t pid = fork_child(s, ctx, &j, ctx->live.broken ? 0 : st_live_lowest(&ctx->live));
    if (pid < 0) {
        log_warn("store: cannot fork to write a checkpoint: %s; tried again later",
                 strerror(errno));
        return -1;
    }
    log_info("store: writing a checkpoint at LSN %" PRIu64 " in pid %d (fork took %.1f ms)",
             s->child_lsn, (int)pid, (double)(s->child_start_ns - t0) / 1e6);
    return 0;
}

/* Reap the child if it ended (or wait for it). Returns 1 when it did. */
static int reap_child(store_ckpt_sched_t *s, int wait)
{
    int status;
    pid_t r = waitpid(s->child, &status, wait ? 0 : WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR)) return 0;
    if (s->job_done) {
        void (*done)(void *, int) = s->job_done;
        s->job_done = NULL;
        s->child = 0;
        done(s->job_arg, r > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
        return 1;
    }
    if (r > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        s->last_lsn = s->child_lsn;
        s->last_min_ref = s->child_min_ref;
        s->written++;
        char path[4096];
        struct stat st;
        ckpt_path(path, sizeof(path), s->dir, s->child_lsn, 0);
        if (io->stat(path, &st) == 0) s->last_bytes = (uint64_t)st.st_size;
    } else {
        s->failed++;
        char how[64] = "lost";
        if (r > 0 && WIFEXITED(status))
            snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(status));
        else if (r > 0 && WIFSIGNALED(status))
            snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(status));
        log_warn("store: the checkpoint at LSN %" PRIu64 " failed (pid %d %s): abandoned; the "
                 "next one starts after another checkpoint-bytes of log",
                 s->child_lsn, (int)s->child, how);
    }
    s->child = 0;
    return 1;
}

void store_ckpt_poll(store_ckpt_sched_t *s, store_ctx_t *ctx)
{
    if (s->child) {
        uint64_t now = shm_mono_ns();
        if (now - s->last_poll_ns < CKPT_POLL_NS) return;
        s->last_poll_ns = now;
        if (!reap_child(s, 0)) return;
    }
    if (!s->every) return;
    uint64_t applied = store_applied(ctx);
    if (applied < s->next_lsn || applied == s->last_lsn) return;
    /* Pending value groups go into the checkpoint (D55): one may be taken
     * while a client is halfway through a large value. */
    /* The next one after another `every` bytes, whether this one works or
     * not: a failing disk is not hammered, and a failure is retried. */
    s->next_lsn = applied + s->every;
    start_child(s, ctx);
}

void store_ckpt_wait(store_ckpt_sched_t *s)
{
    while (s->child && !reap_child(s, 1)) {
    }
}

int store_ckpt_start_job(store_ckpt_sched_t *s, store_ctx_t *ctx, int (*job)(store_ctx_t *, void *),
                         void (*done)(void *, int), void *arg, uint64_t min_ref)
{
    if (s->child) return -1;
    child_job_t j = {job, arg};
    if (fork_child(s, ctx, &j, min_ref) < 0) {
        log_warn("store: cannot fork: %s", strerror(errno));
        return -1;
    }
    s->job_done = done;
    s->job_arg = arg;
    return 0;
}

void store_ckpt_finish(store_ckpt_sched_t *s, store_ctx_t *ctx, int clean)
{
    if (s->child && !clean) {
        kill(s->child, SIGKILL);
        reap_child(s, 1);
        return;
    }
    while (s->child && !reap_child(s, 1)) {
    }
    if (!clean || !s->every || store_applied(ctx) == s->last_lsn) return;
    if (start_child(s, ctx) == 0) {
        while (s->child && !reap_child(s, 1)) {
        }
    }
}
