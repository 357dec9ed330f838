/*
 * zset.c - the sorted set's structure (zset.h, D65) and its operations
 * table: what entry.c, COPY, store_digest and checkpoints call for a
 * sorted set.
 *
 * Store process only (and tests and tools); single-threaded. A crash loses
 * nothing: sorted sets are rebuilt by replaying the log (or read from a
 * checkpoint), their pages being log records.
 *
 * Design. A sorted set is two parts, each a form a large collection of
 * another type already lives in:
 *   dict   a hash (core/hash.c) from member to score, the value the
 *          score's IEEE bits (8 bytes, little-endian). A large one is paged
 *          as any hash is (D60: CMD_PAGEIN, CMD_PAGE through the store's
 *          pager), so a score costs the overlay's table, then at most one
 *          page read (ZSCORE, ZADD's and ZREM's lookups).
 *   order  a keyed list (core/list.c, D63) of elements "score bits, member
 *          bytes", ascending by (score, member): chunks in RAM or in pages
 *          of the log (CMD_LPAGE), each clean one with a copy of its first
 *          element. st_list_seek finds where (score, member) is or goes
 *          by a binary search over the chunks' first elements, then one
 *          chunk (one page read), and the list's Fenwick tree gives the
 *          chunk's rank: ZADD, ZRANK and the ZRANGE forms are O(log n).
 * Every write changes both in the same record, so they hold the same
 * members with the same scores (st_zset_check).
 *
 * Order. By score as a double (so 0 and -0 are equal), then member bytes
 * (memcmp, the shorter first), as Redis' skiplist; lex ranges compare the
 * member only and assume equal scores, as Redis does.
 *
 * Determinism (ARCHITECTURE.md, contract 4). The order's chunk boundaries
 * are the list's fixed limits, the dict's encoding follows a fixed size
 * (DICT_TABLE_AT), and the page records name what they replace (D60's
 * object ids and page LSNs, D63's chunk stamps): a live run and any replay
 * build the same parts.
 *
 * RAM. A sorted set in RAM holds each member twice (its dict field and
 * its order element): 124 bytes for a 16-byte member, against the
 * skiplist's 86 before D65; a paged one holds the dict's directory and
 * overlay and the order's chunk entries (D65 has the figures).
 */
#include "zset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "command.h"
#include "log.h"
#include "object.h"
#include "pieces.h"
#include "resp.h"
#include "value.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* An order element: the score's bits, then the member. */
#define ZEL_HDR 8u
/* The dict leaves the listpack encoding (a linear array) past this many
 * members: a constant, so replay converts at the same write. */
#define DICT_TABLE_AT 128u

struct st_zset {
    st_obj_t obj; /* first: the entry's object (st_zset_ops) */
    int skiplist; /* OBJECT ENCODING: 0 listpack, 1 skiplist */
    uint64_t seed;
    st_hash_t *dict;  /* member -> score */
    st_list_t *order; /* keyed: elements by (score, member) */
};

static uint64_t bits_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof(u));
    return u;
}

static double double_of(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof(d));
    return d;
}

/* Member byte order: memcmp of the common part, then the shorter first. */
static int lexcmp(const void *a, uint32_t an, const void *b, uint32_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

/* ---- order elements ---- */

/* Element p[0, n) as its parts (a short one, never written so, as 0 ""). */
static void el_parts(const unsigned char *p, uint32_t n, st_zel_t *x)
{
    if (n < ZEL_HDR) {
        *x = (st_zel_t){0, "", 0};
        return;
    }
    x->score = double_of((uint64_t)cmd_get_i64(p));
    x->m = (const char *)p + ZEL_HDR;
    x->n = n - ZEL_HDR;
}

/* A new element entry for (s, m). */
static idx_entry_t *el_new(double s, const void *m, uint32_t n)
{
    unsigned char small[256];
    unsigned char *b = n <= sizeof(small) - ZEL_HDR ? small : st_xmalloc((size_t)n + ZEL_HDR);
    cmd_put_i64(b, (int64_t)bits_of(s));
    memcpy(b + ZEL_HDR, m, n);
    idx_entry_t *e = st_list_elem_new(b, n + ZEL_HDR, 0);
    if (b != small) free(b);
    return e;
}

/* An element entry as its parts: its bytes are one block in RAM (inline
 * in the entry, or one RAM piece: st_list_elem_new's), never a log
 * extent. */
static void el_of_entry(idx_entry_t *e, st_zel_t *x)
{
    const unsigned char *p = NULL;
    if (st_ent_kind(e) == VK_INLINE) {
        p = st_ent_inline(e);
    } else if (st_ent_kind(e) == VK_LIST) {
        const st_pieces_t *pl = st_ent_pieces(e);
        if (pl->n == 1 && st_piece_kind(&pl->p[0]) == PIECE_RAM) p = st_piece_ram(&pl->p[0]);
    }
    if (!p) {
        log_warn("store: a sorted set's element is not one block in RAM; stopping");
        exit(EXIT_FATAL);
    }
    el_parts(p, (uint32_t)st_ent_vlen(e), x);
}

/* What st_list_seek looks for: an element before (score, member), or
 * before a score or member bound (excl: before or equal). */
enum { SEEK_FULL, SEEK_SCORE, SEEK_LEX };
typedef struct seek {
    int by, excl;
    double s;
    const void *m;
    uint32_t n;
} seek_t;

static int before(const void *arg, const unsigned char *p, uint32_t n)
{
    const seek_t *k = arg;
    st_zel_t x;
    el_parts(p, n, &x);
    int c;
    if (k->by == SEEK_LEX) {
        c = lexcmp(x.m, x.n, k->m, k->n);
    } else {
        c = x.score < k->s ? -1 : x.score > k->s;
        if (!c && k->by == SEEK_FULL) c = lexcmp(x.m, x.n, k->m, k->n);
    }
    return k->excl ? c <= 0 : c < 0;
}

static uint32_t seek(st_zset_t *z, int by, double s, const void *m, uint32_t n, int excl)
{
    seek_t k = {by, excl, s, m, n};
    return st_list_seek(z->order, before, &k);
}

/* ---- the structure ---- */

st_zset_t *st_zset_new(uint64_t seed)
{
    st_zset_t *z = st_xmalloc(sizeof(*z));
    memset(z, 0, sizeof(*z));
    z->obj.ops = &st_zset_ops;
    z->seed = seed;
    z->dict = st_hash_new(seed ^ 0x5A5E7C0FFEE15EEDull);
    z->order = st_list_new();
    st_list_set_keyed(z->order);
    return z;
}

void st_zset_free(st_zset_t *z)
{
    if (!z) return;
    st_hash_ops.free((st_obj_t *)z->dict);
    st_list_ops.free((st_obj_t *)z->order);
    free(z);
}

int st_zset_is_skiplist(const st_zset_t *z)
{
    return z->skiplist;
}

void st_zset_set_skiplist(st_zset_t *z, int on)
{
    z->skiplist = on;
}

uint64_t st_zset_seed(const st_zset_t *z)
{
    return z->seed;
}

uint32_t st_zset_len(const st_zset_t *z)
{
    return st_list_len(z->order);
}

uint64_t st_zset_bytes(const st_zset_t *z)
{
    return sizeof(*z) + st_hash_bytes(z->dict) + st_list_bytes(z->order);
}

st_hash_t *st_zset_dict(st_zset_t *z)
{
    return z->dict;
}

st_list_t *st_zset_order(st_zset_t *z)
{
    return z->order;
}

int st_zset_score(st_zset_t *z, const void *m, uint32_t n, double *s)
{
    unsigned char b[8];
    uint32_t vlen;
    if (st_hash_peek(z->dict, m, n, b, sizeof(b), &vlen) != 1 || vlen != 8) return 0;
    *s = double_of((uint64_t)cmd_get_i64(b));
    return 1;
}

static void dict_put(store_ctx_t *ctx, st_zset_t *z, const void *m, uint32_t n, double s)
{
    unsigned char b[8];
    cmd_put_i64(b, (int64_t)bits_of(s));
    st_hash_set(z->dict, ctx ? &ctx->live : NULL, m, n, b, 8, 0);
    if (!st_hash_is_table(z->dict) && st_hash_len(z->dict) > DICT_TABLE_AT)
        st_hash_convert(z->dict);
}

/* Remove (s, m), which the order holds. */
static void order_remove(store_ctx_t *ctx, st_zset_t *z, double s, const void *m, uint32_t n)
{
    seek_t k = {SEEK_FULL, 0, s, m, n};
    st_list_elem_free(st_list_take_sorted(ctx, z->order, before, &k));
}

int st_zset_set(store_ctx_t *ctx, st_zset_t *z, const void *m, uint32_t n, double s)
{
    double old;
    int had = st_zset_score(z, m, n, &old);
    if (had && old == s) return 0;
    if (had) order_remove(ctx, z, old, m, n);
    seek_t k = {SEEK_FULL, 0, s, m, n};
    st_list_insert_sorted(ctx, z->order, before, &k, el_new(s, m, n));
    dict_put(ctx, z, m, n, s);
    return !had;
}

int st_zset_del(store_ctx_t *ctx, st_zset_t *z, const void *m, uint32_t n)
{
    double s;
    if (!st_zset_score(z, m, n, &s)) return 0;
    order_remove(ctx, z, s, m, n);
    st_hash_del(z->dict, ctx ? &ctx->live : NULL, m, n);
    return 1;
}

void st_zset_take(store_ctx_t *ctx, st_zset_t *z, uint32_t r, st_zel_t *x, unsigned char **buf,
                  size_t *cap)
{
    idx_entry_t *e = st_list_take(ctx, z->order, r);
    uint64_t len = st_ent_vlen(e);
    if (*cap < len) {
        *buf = st_xrealloc(*buf, (size_t)len);
        *cap = (size_t)len;
    }
    if (st_read_value(NULL, e, *buf)) abort(); /* in RAM: cannot fail */
    st_list_elem_free(e);
    el_parts(*buf, (uint32_t)len, x);
    st_hash_del(z->dict, ctx ? &ctx->live : NULL, x->m, x->n);
}

void st_zset_seal(store_ctx_t *ctx, st_zset_t *z)
{
    st_list_seal(ctx, z->order);
}

long st_zset_rank(st_zset_t *z, const void *m, uint32_t n)
{
    double s;
    if (!st_zset_score(z, m, n, &s)) return -1;
    return (long)seek(z, SEEK_FULL, s, m, n, 0);
}

void st_zset_at(st_zset_t *z, uint32_t r, st_zel_t *x)
{
    idx_entry_t *e = st_list_at(z->order, r);
    /* A RAM element, or a page's copy (handed out until the record or
     * request is done). */
    el_of_entry(e, x);
}

uint32_t st_zset_rank_score(st_zset_t *z, double s, int excl)
{
    return seek(z, SEEK_SCORE, s, NULL, 0, excl);
}

uint32_t st_zset_rank_lex(st_zset_t *z, const void *m, uint32_t n, int excl)
{
    return seek(z, SEEK_LEX, 0, m, n, excl);
}

void st_zset_iter_init(st_zset_iter_t *it, st_zset_t *z, uint32_t from, uint32_t count, int rev)
{
    memset(it, 0, sizeof(*it));
    st_list_iter_init(&it->it, z->order, from, count, rev);
}

int st_zset_next(st_zset_iter_t *it, st_zel_t *x)
{
    st_lelem_t le;
    if (!st_list_next(&it->it, &le)) return 0;
    if (le.e)
        el_of_entry(le.e, x);
    else
        el_parts(le.p, le.n, x);
    return 1;
}

void st_zset_iter_free(st_zset_iter_t *it)
{
    st_list_iter_free(&it->it);
}

void st_zset_reply_member(buf_t *r, int proto, const st_zel_t *x, int withscores, int pair)
{
    if (pair) resp_array(r, 2);
    resp_bulk(r, x->m, x->n);
    if (withscores) resp_double(r, proto, x->score);
}

/* How a snapshot's members are replied (its put function's arg). */
typedef struct zshape {
    int proto, withscores, pair;
} zshape_t;

static void put_member(const void *arg, const unsigned char *p, uint32_t n, buf_t *out)
{
    const zshape_t *sh = arg;
    st_zel_t x;
    el_parts(p, n, &x);
    st_zset_reply_member(out, sh->proto, &x, sh->withscores, sh->pair);
}

static void free_shape(const void *arg)
{
    free((void *)arg);
}

struct st_vsnap *st_zset_run_snapshot(st_zset_t *z, uint32_t from, uint32_t count, int rev,
                                      int proto, int withscores, int pair)
{
    if (!st_list_has_pages(z->order)) return NULL;
    zshape_t *sh = st_xmalloc(sizeof(*sh));
    *sh = (zshape_t){proto, withscores, pair};
    return st_list_run_snapshot(z->order, from, count, rev, put_member, sh, free_shape);
}

const char *st_zset_check(st_zset_t *z)
{
    static char why[160];
    const char *bad = st_list_check(z->order);
    if (bad) return bad;
    if (st_hash_is_paged(z->dict) && (bad = st_hash_page_check(z->dict))) return bad;
    if (st_hash_len(z->dict) != st_list_len(z->order))
        return "the dict and the order differ in size";
    st_zset_iter_t it;
    st_zel_t x;
    unsigned char *prev = NULL;
    uint32_t pn = 0, r = 0;
    double ps = 0;
    st_zset_iter_init(&it, z, 0, st_zset_len(z), 0);
    why[0] = 0;
    while (!why[0] && st_zset_next(&it, &x)) {
        double s;
        if (r && (ps > x.score || (ps == x.score && lexcmp(prev, pn, x.m, x.n) >= 0)))
            snprintf(why, sizeof(why), "rank %u is out of order", r);
        else if (!st_zset_score(z, x.m, x.n, &s) || bits_of(s) != bits_of(x.score))
            snprintf(why, sizeof(why), "rank %u's score is not the dict's", r);
        prev = st_xrealloc(prev, x.n ? x.n : 1);
        memcpy(prev, x.m, x.n);
        pn = x.n;
        ps = x.score;
        r++;
    }
    st_zset_iter_free(&it);
    free(prev);
    return why[0] ? why : NULL;
}

/* ---- the operations table (object.h) ----
 * Checkpoint stream, version 2 (D65): u8 2, u8 skiplist, u64 seed, then
 * the dict's stream (core/hash.c's) and the order's (core/list.c's,
 * version 3). Version 1 (before D65; still read, into RAM): u8 1, u8
 * skiplist, u64 seed, u32 count, then per member in order: u32 length,
 * its bytes, u64 the score's IEEE bits. */

#define ZCKPT_V1 1
#define ZCKPT_V2 2

static void zobj_free(st_obj_t *o)
{
    st_zset_free((st_zset_t *)o);
}

static st_obj_t *zobj_dup(const st_obj_t *o)
{
    const st_zset_t *z = (const st_zset_t *)o;
    st_zset_t *c = st_xmalloc(sizeof(*c));
    *c = *z;
    c->dict = (st_hash_t *)st_hash_ops.dup((st_obj_t *)z->dict);
    c->order = (st_list_t *)st_list_ops.dup((const st_obj_t *)z->order);
    return &c->obj;
}

static void zobj_bind(st_obj_t *o, store_ctx_t *ctx)
{
    st_zset_t *z = (st_zset_t *)o;
    st_hash_ops.bind((st_obj_t *)z->dict, ctx);
    st_list_ops.bind((st_obj_t *)z->order, ctx);
}

/* A sum of each member's hash with its score: independent of order. */
static int zobj_digest(store_ctx_t *ctx, const st_obj_t *o, uint64_t *out)
{
    st_zset_t *z = (st_zset_t *)o;
    if (ctx) zobj_bind((st_obj_t *)z, ctx);
    uint64_t sum = 0;
    st_zset_iter_t it;
    st_zel_t x;
    st_zset_iter_init(&it, z, 0, st_zset_len(z), 0);
    while (st_zset_next(&it, &x)) {
        unsigned char sc[8];
        cmd_put_i64(sc, (int64_t)bits_of(x.score));
        XXH3_state_t st;
        XXH3_64bits_reset(&st);
        XXH3_64bits_update(&st, &x.n, sizeof(x.n));
        XXH3_64bits_update(&st, x.m, x.n);
        XXH3_64bits_update(&st, sc, sizeof(sc));
        sum += XXH3_64bits_digest(&st);
    }
    st_zset_iter_free(&it);
    *out = sum ^ ((uint64_t)st_zset_len(z) * 0xC2B2AE3D27D4EB4Full);
    return 0;
}

static uint64_t zobj_mem(const st_obj_t *o)
{
    return st_zset_bytes((const st_zset_t *)o);
}

static void zobj_count_log(const st_obj_t *o, st_live_t *t, int sign)
{
    const st_zset_t *z = (const st_zset_t *)o;
    st_hash_ops.count_log((st_obj_t *)z->dict, t, sign);
    st_list_ops.count_log((const st_obj_t *)z->order, t, sign);
}

static const char *zobj_encoding(const st_obj_t *o)
{
    return st_zset_is_skiplist((const st_zset_t *)o) ? "skiplist" : "listpack";
}

static void zobj_ckpt_write(const st_obj_t *o, buf_t *out)
{
    const st_zset_t *z = (const st_zset_t *)o;
    unsigned char hdr[10];
    hdr[0] = ZCKPT_V2;
    hdr[1] = (unsigned char)z->skiplist;
    cmd_put_i64(hdr + 2, (int64_t)z->seed);
    buf_append(out, hdr, sizeof(hdr));
    st_hash_ops.ckpt_write((st_obj_t *)z->dict, out);
    st_list_ops.ckpt_write((const st_obj_t *)z->order, out);
}

/* Version 1: the members in order, into RAM; chunks stamped by contents. */
static long ckpt_read_v1(st_zset_t *z, const unsigned char *p, size_t len)
{
    if (len < 14) return -1;
    uint32_t count = cmd_get_u32(p + 10);
    size_t at = 14;
    double ps = 0;
    const unsigned char *prev = NULL;
    uint32_t pn = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (len - at < 4) return -1;
        uint32_t n = cmd_get_u32(p + at);
        at += 4;
        if (len - at < (uint64_t)n + 8) return -1;
        const unsigned char *m = p + at;
        double s = double_of((uint64_t)cmd_get_i64(p + at + n));
        if (s != s) return -1;
        if (i && (ps > s || (ps == s && lexcmp(prev, pn, m, n) >= 0))) return -1; /* not in order */
        st_list_insert(NULL, z->order, i, el_new(s, m, n));
        dict_put(NULL, z, m, n, s);
        prev = m;
        pn = n;
        ps = s;
        at += (size_t)n + 8;
    }
    st_list_seal_contents(z->order);
    return (long)at;
}

static long zobj_ckpt_read(const unsigned char *p, size_t len, st_obj_t **out)
{
    if (len < 10 || (p[0] != ZCKPT_V1 && p[0] != ZCKPT_V2) || p[1] > 1) return -1;
    st_zset_t *z = st_zset_new((uint64_t)cmd_get_i64(p + 2));
    z->skiplist = p[1];
    long at;
    if (p[0] == ZCKPT_V1) {
        at = ckpt_read_v1(z, p, len);
    } else {
        st_obj_t *d = NULL, *l = NULL;
        long a = st_hash_ops.ckpt_read(p + 10, len - 10, &d), b = -1;
        if (a >= 0) {
            st_hash_ops.free((st_obj_t *)z->dict);
            z->dict = (st_hash_t *)d;
            b = st_list_ops.ckpt_read(p + 10 + a, len - 10 - (size_t)a, &l);
        }
        if (b >= 0) {
            st_list_ops.free((st_obj_t *)z->order);
            z->order = (st_list_t *)l;
        }
        at = b < 0 ? -1 : 10 + a + b;
        /* Ours: a keyed order as long as the dict (a hash's stream) */
        if (at >= 0 && (!st_list_is_keyed(z->order) || d->ops != &st_hash_ops ||
                        st_hash_len(z->dict) != st_list_len(z->order)))
            at = -1;
    }
    if (at < 0) {
        st_zset_free(z);
        return -1;
    }
    *out = &z->obj;
    return at;
}

const st_type_ops_t st_zset_ops = {
    .type = ST_ZSET,
    .name = "zset",
    .free = zobj_free,
    .dup = zobj_dup,
    .digest = zobj_digest,
    .mem_usage = zobj_mem,
    .count_log = zobj_count_log,
    .encoding = zobj_encoding,
    .ckpt_write = zobj_ckpt_write,
    .ckpt_read = zobj_ckpt_read,
    .bind = zobj_bind,
};
