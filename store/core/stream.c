/*
 * stream.c - the stream's structure (stream.h, D39, D64) and its
 * operations table: what entry.c, COPY, store_digest and checkpoints call
 * for a stream.
 *
 * Store process only (and tests and tools); single-threaded. A crash loses
 * nothing: streams are rebuilt by replaying the log (or read from a
 * checkpoint, ckpt_read), their pages being log records.
 *
 * Design. IDs only grow (XADD refuses an ID at or below the last one), so
 * a stream is a sequence of chunks of consecutive entries in ID order
 * (stream-internal.h), in an array with slack before them so that
 * trimming drops a chunk from the head in O(1). A chunk is in RAM (an
 * array of entries, each one allocation: its ID and its pairs; up to
 * ST_SCHUNK_ENTRIES entries or ST_SCHUNK_BYTES bytes) or clean: a window
 * [first, first + n) of a stream page in the log (core/stream_page.c's
 * image, written by the store's pager as a CMD_SPAGE record). XADD
 * appends to the last chunk, which stays in RAM (a full or clean one gets
 * a new RAM chunk after it); trimming drops whole chunks and moves the
 * first one's window, reading its page once for the new first ID; XDEL
 * inside a clean chunk copies its window into RAM first ("dirty"), after
 * which the pager writes it again. Each chunk keeps its first ID, so a
 * lookup by ID is a binary search over the chunks and one over the chunk
 * (a page's index, for a clean one); a lookup by position, a binary search
 * over the chunks' positions: `before` (entries before the chunk, plus
 * base), which appends and head drops keep right in O(1) (head drops move
 * base) and other changes leave to be recomputed from the first chunk
 * they changed on when next needed (pos_ok).
 *
 * Determinism (ARCHITECTURE.md, contract 4). Chunk boundaries are decided
 * by the records applied only (fixed limits, no setting), and each chunk
 * carries the stamp of the record that last changed it (core/page.h):
 * CMD_SPAGE names the chunks it replaces by stamp, so a record built
 * before a write that changed them is a no-op, live and on replay alike.
 *
 * Live bytes. A clean chunk's page is counted in ctx->live while the chunk
 * exists (count_log counts it with the stream); entries in RAM are copies
 * and count nothing (D39).
 *
 * Invariants: s->bytes is the requested size of this struct, the chunk
 * array, each RAM chunk's array and every RAM entry (the page view, the
 * context's, is not the stream's); no chunk is empty; s->n is the
 * chunks' sum; each chunk's fid is its first entry's ID. The type handlers
 * add st_stream_bytes' changes to ctx->entry_bytes. The stream is bound to
 * a store context (s->ctx, through which it reads its pages) by any change
 * made with one, and by bind after a checkpoint is read.
 */
#include "stream.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "command.h"
#include "hash.h"
#include "io_fault.h"
#include "live.h"
#include "page.h"
#include "resp.h"
#include "sgroup.h"
#include "stream-internal.h"
#include "streamid.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

st_stream_t *st_stream_new(void)
{
    st_stream_t *s = st_xmalloc(sizeof(*s));
    memset(s, 0, sizeof(*s));
    s->obj.ops = &st_stream_ops;
    s->bytes = sizeof(*s);
    return s;
}

void st_stream_free(st_stream_t *s)
{
    for (uint32_t j = 0; j < s->nc; j++) {
        st_schunk_t *ch = st_sch(s, j);
        for (uint32_t k = 0; !ch->lsn && k < ch->n; k++)
            free(ch->v[k]);
        free(ch->v);
    }
    free(s->c);
    sg_free_all(&s->groups);
    free(s);
}

uint64_t st_stream_len(const st_stream_t *s)
{
    return s->n;
}

uint64_t st_stream_bytes(const st_stream_t *s)
{
    return s->bytes + sg_bytes(&s->groups);
}

st_sgroups_t *st_stream_groups(st_stream_t *s)
{
    return &s->groups;
}

st_stream_meta_t *st_stream_meta(st_stream_t *s)
{
    return &s->meta;
}

const st_stream_meta_t *st_stream_meta_c(const st_stream_t *s)
{
    return &s->meta;
}

int st_stream_has_pages(const st_stream_t *s)
{
    return s->cc.npages > 0;
}

static st_sentry_t *entry_new(st_sid_t id, uint32_t npairs, uint32_t size)
{
    st_sentry_t *e = st_xmalloc(sizeof(*e) + (size ? size : 1));
    e->id = id;
    e->npairs = npairs;
    e->size = size;
    return e;
}

static store_ctx_t *reader(st_stream_t *s, store_ctx_t *ctx)
{
    if (ctx) s->ctx = ctx;
    return s->ctx;
}

/* ---- chunks ---------------------------------------------------------------- */

static uint32_t weight(const st_sentry_t *e)
{
    uint64_t w = st_sentry_bytes(e);
    return w > ST_SCHUNK_BYTES ? ST_SCHUNK_BYTES : (uint32_t)w;
}

static int ram_full(const st_schunk_t *ch)
{
    return ch->n >= ST_SCHUNK_ENTRIES || ch->vbytes >= ST_SCHUNK_BYTES;
}

st_schunk_t *st_stream_chunks_open(st_stream_t *s, uint32_t j, uint32_t add)
{
    if (s->c0 + s->nc + add > s->ccap) {
        /* A new array half as large again as the chunks need, the chunks
         * from its start: the slack before them (head drops) comes back.
         * Appends amortise to O(1) a chunk; a stream of pages holds at
         * most half its chunks' bytes again in slack. */
        uint32_t cap = s->nc + add + (s->nc + add) / 2 + 4;
        st_schunk_t *c = st_xmalloc((size_t)cap * sizeof(*c));
        if (s->nc) {
            memcpy(c, s->c + s->c0, (size_t)j * sizeof(*c));
            memcpy(c + j + add, s->c + s->c0 + j, (size_t)(s->nc - j) * sizeof(*c));
        }
        free(s->c);
        s->bytes += (uint64_t)cap * sizeof(*c);
        s->bytes -= (uint64_t)s->ccap * sizeof(*c);
        s->c = c;
        s->ccap = cap;
        s->c0 = 0;
    } else {
        memmove(s->c + s->c0 + j + add, s->c + s->c0 + j, (size_t)(s->nc - j) * sizeof(*s->c));
    }
    s->nc += add;
    if (s->pos_ok > j) s->pos_ok = j;
    memset(st_sch(s, j), 0, (size_t)add * sizeof(*s->c));
    return st_sch(s, j);
}

void st_stream_chunks_close(st_stream_t *s, uint32_t j, uint32_t k)
{
    if (j == 0) {
        /* The rest keep their positions: the caller moved base past the
         * dropped entries, or made pos_ok 0. */
        s->c0 += k;
        s->pos_ok = s->pos_ok > k ? s->pos_ok - k : 0;
    } else {
        memmove(s->c + s->c0 + j, s->c + s->c0 + j + k, (size_t)(s->nc - j - k) * sizeof(*s->c));
        if (s->pos_ok > j) s->pos_ok = j;
    }
    s->nc -= k;
    if (!s->nc) s->c0 = s->pos_ok = 0;
}

void st_sch_free_ram(st_stream_t *s, st_schunk_t *ch)
{
    s->bytes -= (uint64_t)ch->cap * sizeof(*ch->v);
    free(ch->v);
    ch->v = NULL;
    ch->cap = 0;
}

void st_sch_append(st_stream_t *s, st_schunk_t *ch, st_sentry_t *e)
{
    if (ch->n == ch->cap) {
        uint32_t cap = ch->cap ? ch->cap * 2 : 4;
        ch->v = st_xrealloc(ch->v, (size_t)cap * sizeof(*ch->v));
        s->bytes += (uint64_t)(cap - ch->cap) * sizeof(*ch->v);
        ch->cap = cap;
    }
    if (!ch->n) ch->fid = e->id;
    ch->v[ch->n++] = e;
    ch->vbytes += weight(e);
    ch->npin += !st_sentry_pageable(e->size);
    s->bytes += st_sentry_bytes(e);
}

/* Take entries [k, k + d) out of RAM chunk ch and free them. */
static void ram_drop(st_stream_t *s, st_schunk_t *ch, uint32_t k, uint32_t d)
{
    for (uint32_t t = k; t < k + d; t++) {
        st_sentry_t *e = ch->v[t];
        ch->vbytes -= weight(e);
        ch->npin -= !st_sentry_pageable(e->size);
        s->bytes -= st_sentry_bytes(e);
        free(e);
    }
    memmove(ch->v + k, ch->v + k + d, (size_t)(ch->n - k - d) * sizeof(*ch->v));
    ch->n -= d;
    if (ch->n) ch->fid = ch->v[0]->id;
}

st_spview_t *st_stream_view(st_stream_t *s, const st_schunk_t *ch)
{
    store_ctx_t *ctx = s->ctx;
    if (!ctx->spview) {
        ctx->spview = st_xmalloc(sizeof(*ctx->spview));
        memset(ctx->spview, 0, sizeof(*ctx->spview));
    }
    st_spview_load(ctx->spview, ctx, ch->lsn, ch->len);
    return ctx->spview;
}

/* Uncount clean chunk ch's page (it leaves the stream or RAM takes it). */
static void page_gone(store_ctx_t *ctx, const st_schunk_t *ch)
{
    if (ctx) st_live_add(&ctx->live, ch->lsn, ch->len, -1);
}

/* Clean chunk j becomes a RAM chunk holding copies of its window (XDEL
 * inside it). */
static void dirty(store_ctx_t *ctx, st_stream_t *s, uint32_t j)
{
    st_schunk_t *ch = st_sch(s, j);
    st_sch_count(s, ch, -1);
    const st_spview_t *v = st_stream_view(s, ch);
    uint32_t first = ch->first, count = ch->n;
    page_gone(ctx, ch);
    ch->lsn = 0;
    ch->len = ch->first = ch->n = ch->vbytes = ch->npin = 0;
    for (uint32_t t = first; t < first + count; t++) {
        st_sentry_t *e = st_xmalloc(st_spview_entry_size(v, t));
        st_spview_entry(v, t, e);
        st_sch_append(s, ch, e);
    }
    st_pgstamp_take(ctx, &ch->stamp);
    st_sch_count(s, ch, 1);
    /* Tests: killed with a page's entries copied into RAM only. */
    if (io_fault_point(IO_FAULT_STREAM_DIRTY) == IO_FAULT_KILL) raise(SIGKILL);
}

/* ---- positions -------------------------------------------------------------- */

static void pos_fix(st_stream_t *s)
{
    for (uint32_t j = s->pos_ok; j < s->nc; j++)
        st_sch(s, j)->before = j ? st_sch(s, j - 1)->before + st_sch(s, j - 1)->n : s->base;
    s->pos_ok = s->nc;
}

/* The chunk holding position i (< s->n) and i's place in it. */
static void locate(st_stream_t *s, uint64_t i, uint32_t *j, uint32_t *k)
{
    const st_schunk_t *head = st_sch(s, 0), *tail = st_sch(s, s->nc - 1);
    if (i < head->n) {
        *j = 0;
        *k = (uint32_t)i;
        return;
    }
    if (i >= s->n - tail->n) {
        *j = s->nc - 1;
        *k = (uint32_t)(i - (s->n - tail->n));
        return;
    }
    pos_fix(s);
    uint32_t lo = 0, hi = s->nc; /* the last chunk starting at or before i */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (st_sch(s, mid)->before - s->base <= i)
            lo = mid;
        else
            hi = mid;
    }
    *j = lo;
    *k = (uint32_t)(i - (st_sch(s, lo)->before - s->base));
}

/* Where chunk j starts. */
static uint64_t chunk_pos(st_stream_t *s, uint32_t j)
{
    if (j == 0) return 0;
    if (j == s->nc - 1) return s->n - st_sch(s, j)->n;
    pos_fix(s);
    return st_sch(s, j)->before - s->base;
}

const st_sentry_t *st_stream_at(st_stream_t *s, uint64_t i)
{
    uint32_t j, k;
    locate(s, i, &j, &k);
    const st_schunk_t *ch = st_sch(s, j);
    if (!ch->lsn) return ch->v[k];
    const st_spview_t *v = st_stream_view(s, ch);
    st_sentry_t *e = st_hash_mat_alloc(s->ctx, st_spview_entry_size(v, ch->first + k));
    st_spview_entry(v, ch->first + k, e);
    return e;
}

st_sid_t st_stream_id_at(st_stream_t *s, uint64_t i)
{
    uint32_t j, k;
    locate(s, i, &j, &k);
    const st_schunk_t *ch = st_sch(s, j);
    if (!ch->lsn) return ch->v[k]->id;
    if (k == 0) return ch->fid;
    return st_stream_view(s, ch)->ids[ch->first + k];
}

uint32_t st_stream_chunk_of(const st_stream_t *s, st_sid_t id)
{
    if (!s->nc || st_sid_cmp(id, st_sch(s, 0)->fid) < 0) return s->nc;
    uint32_t lo = 0, hi = s->nc;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (st_sid_cmp(st_sch(s, mid)->fid, id) <= 0)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

uint64_t st_stream_lower(st_stream_t *s, st_sid_t id)
{
    if (!s->n || st_sid_cmp(id, st_sch(s, 0)->fid) <= 0) return 0;
    if (st_sid_cmp(id, s->meta.last_id) > 0) return s->n; /* above every entry */
    uint32_t lo = st_stream_chunk_of(s, id);
    const st_schunk_t *ch = st_sch(s, lo);
    const st_sid_t *ids = NULL;
    if (ch->lsn) ids = st_stream_view(s, ch)->ids + ch->first;
    uint32_t a = 0, b = ch->n; /* the first entry of the chunk at or above id */
    while (a < b) {
        uint32_t mid = a + (b - a) / 2;
        st_sid_t m = ids ? ids[mid] : ch->v[mid]->id;
        if (st_sid_cmp(m, id) < 0)
            a = mid + 1;
        else
            b = mid;
    }
    return chunk_pos(s, lo) + a;
}

/* ---- changes ------------------------------------------------------------------ */

void st_stream_append(store_ctx_t *ctx, st_stream_t *s, st_sid_t id, const rec_arg_t *pairs,
                      uint32_t n)
{
    reader(s, ctx);
    uint32_t size = 0;
    for (uint32_t i = 0; i < n; i++)
        size += 4 + pairs[i].len;
    st_sentry_t *e = entry_new(id, n / 2, size);
    unsigned char *p = e->data;
    for (uint32_t i = 0; i < n; i++) {
        cmd_put_u32(p, pairs[i].len);
        memcpy(p + 4, pairs[i].ptr, pairs[i].len);
        p += 4 + pairs[i].len;
    }
    st_schunk_t *ch = s->nc ? st_sch(s, s->nc - 1) : NULL;
    if (!ch || ch->lsn || ram_full(ch)) ch = st_stream_chunks_open(s, s->nc, 1);
    st_sch_count(s, ch, -1);
    st_sch_append(s, ch, e);
    st_pgstamp_take(ctx, &ch->stamp);
    st_sch_count(s, ch, 1);
    s->n++;
    s->meta.last_id = id;
    s->meta.entries_added++;
}

/* Chunk j is empty: it goes. */
static void drop_chunk(store_ctx_t *ctx, st_stream_t *s, uint32_t j)
{
    st_schunk_t *ch = st_sch(s, j);
    st_sch_count(s, ch, -1);
    if (ch->lsn) page_gone(ctx, ch);
    for (uint32_t k = 0; !ch->lsn && k < ch->n; k++) {
        s->bytes -= st_sentry_bytes(ch->v[k]);
        free(ch->v[k]);
    }
    st_sch_free_ram(s, ch);
    st_stream_chunks_close(s, j, 1);
}

void st_stream_remove(store_ctx_t *ctx, st_stream_t *s, uint64_t i)
{
    reader(s, ctx);
    uint32_t j, k;
    locate(s, i, &j, &k);
    if (st_sch(s, j)->lsn) dirty(ctx, s, j);
    st_schunk_t *ch = st_sch(s, j);
    st_sch_count(s, ch, -1);
    ram_drop(s, ch, k, 1);
    st_pgstamp_take(ctx, &ch->stamp);
    st_sch_count(s, ch, 1);
    s->n--;
    if (s->pos_ok > j + 1) s->pos_ok = j + 1;
    if (!ch->n) drop_chunk(ctx, s, j);
}

void st_stream_drop_head(store_ctx_t *ctx, st_stream_t *s, uint64_t count)
{
    reader(s, ctx);
    while (count && s->n) {
        st_schunk_t *ch = st_sch(s, 0);
        if (count >= ch->n) { /* the whole chunk: O(1) for a page */
            uint32_t d = ch->n;
            s->base += d;
            s->n -= d;
            count -= d;
            drop_chunk(ctx, s, 0);
            continue;
        }
        uint32_t d = (uint32_t)count;
        st_sch_count(s, ch, -1);
        if (ch->lsn) { /* the window moves; its new first ID from the page */
            ch->first += d;
            ch->n -= d;
            ch->fid = st_stream_view(s, ch)->ids[ch->first];
        } else {
            ram_drop(s, ch, 0, d);
        }
        st_pgstamp_take(ctx, &ch->stamp);
        st_sch_count(s, ch, 1);
        if (s->pos_ok) ch->before += d;
        s->base += d;
        s->n -= d;
        count = 0;
    }
}

void st_sentry_item(const st_sentry_t *e, uint32_t k, const unsigned char **p, uint32_t *len)
{
    const unsigned char *q = e->data;
    for (uint32_t i = 0; i < k; i++)
        q += 4 + cmd_get_u32(q);
    *len = cmd_get_u32(q);
    *p = q + 4;
}

void st_sentry_reply(buf_t *r, const st_sentry_t *e)
{
    char t[SID_TEXT_MAX];
    resp_array(r, 2);
    resp_bulk(r, t, (size_t)sid_format(t, e->id.ms, e->id.seq));
    resp_array(r, 2ll * e->npairs);
    const unsigned char *q = e->data;
    for (uint32_t k = 0; k < 2 * e->npairs; k++) {
        uint32_t n = cmd_get_u32(q);
        resp_bulk(r, q + 4, n);
        q += 4 + n;
    }
}

/* ---- walking ------------------------------------------------------------------- */

void st_stream_iter_init(st_stream_iter_t *it, st_stream_t *s, uint64_t from, uint64_t count,
                         int rev)
{
    memset(it, 0, sizeof(*it));
    it->s = s;
    it->rev = rev;
    buf_init(&it->one);
    if (from >= s->n) return;
    uint64_t room = rev ? from + 1 : s->n - from;
    it->left = count < room ? count : room;
    if (it->left) locate(s, from, &it->j, &it->k);
}

const st_sentry_t *st_stream_next(st_stream_iter_t *it)
{
    if (!it->left) return NULL;
    st_stream_t *s = it->s;
    const st_schunk_t *ch = st_sch(s, it->j);
    const st_sentry_t *e;
    if (!ch->lsn) {
        e = ch->v[it->k];
    } else {
        const st_spview_t *v = st_stream_view(s, ch);
        size_t size = st_spview_entry_size(v, ch->first + it->k);
        buf_reset(&it->one);
        buf_reserve(&it->one, size);
        st_spview_entry(v, ch->first + it->k, (st_sentry_t *)it->one.data);
        e = (const st_sentry_t *)it->one.data;
    }
    if (--it->left) {
        if (!it->rev && ++it->k == ch->n) {
            it->j++;
            it->k = 0;
        } else if (it->rev && it->k-- == 0) {
            it->j--;
            it->k = st_sch(s, it->j)->n - 1;
        }
    }
    return e;
}

void st_stream_iter_free(st_stream_iter_t *it)
{
    buf_free(&it->one);
    memset(it, 0, sizeof(*it));
}

void st_stream_ctx_free(store_ctx_t *ctx)
{
    if (!ctx->spview) return;
    st_spview_free(ctx->spview);
    free(ctx->spview);
    ctx->spview = NULL;
}

/* ---- the operations table (object.h) ---------------------------------------------- */

static void put_sid(unsigned char *p, st_sid_t id)
{
    cmd_put_i64(p, (int64_t)id.ms);
    cmd_put_i64(p + 8, (int64_t)id.seq);
}

static st_sid_t get_sid(const unsigned char *p)
{
    return (st_sid_t){(uint64_t)cmd_get_i64(p), (uint64_t)cmd_get_i64(p + 8)};
}

static st_sentry_t *entry_copy(const st_sentry_t *e)
{
    st_sentry_t *c = entry_new(e->id, e->npairs, e->size);
    memcpy(c->data, e->data, e->size);
    return c;
}

/* Pages are shared (the log is immutable), stamps copied with the
 * contents they name. */
static st_obj_t *sobj_dup(const st_obj_t *o)
{
    const st_stream_t *s = (const st_stream_t *)o;
    st_stream_t *c = st_stream_new();
    c->ctx = s->ctx;
    if (s->nc) st_stream_chunks_open(c, 0, s->nc);
    for (uint32_t j = 0; j < s->nc; j++) {
        const st_schunk_t *f = st_sch(s, j);
        st_schunk_t *t = st_sch(c, j);
        if (f->lsn) {
            *t = *f;
            t->busy = 0;
        } else {
            for (uint32_t k = 0; k < f->n; k++)
                st_sch_append(c, t, entry_copy(f->v[k]));
        }
        t->stamp = f->stamp;
        st_sch_count(c, t, 1);
        c->n += t->n;
    }
    c->meta = s->meta;
    sg_dup(&c->groups, &s->groups);
    return &c->obj;
}

static void sobj_free(st_obj_t *o)
{
    st_stream_free((st_stream_t *)o);
}

#define SCKPT_HEAD (1 + 16 + 16 + 8 + 8)

/* Entries are in ID order in every copy, so one running hash serves; the
 * same whether an entry is in RAM or a page (and as before D64). */
static int sobj_digest(store_ctx_t *ctx, const st_obj_t *o, uint64_t *out)
{
    st_stream_t *s = (st_stream_t *)o;
    reader(s, ctx);
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    unsigned char m[SCKPT_HEAD];
    put_sid(m, s->meta.last_id);
    put_sid(m + 16, s->meta.max_deleted);
    cmd_put_i64(m + 32, (int64_t)s->meta.entries_added);
    cmd_put_i64(m + 40, (int64_t)s->n);
    XXH3_64bits_update(&st, m, 48);
    st_stream_iter_t it;
    const st_sentry_t *e;
    st_stream_iter_init(&it, s, 0, s->n, 0);
    while ((e = st_stream_next(&it))) {
        unsigned char id[16];
        put_sid(id, e->id);
        XXH3_64bits_update(&st, id, sizeof(id));
        XXH3_64bits_update(&st, e->data, e->size);
    }
    st_stream_iter_free(&it);
    if (s->groups.n) sg_digest(&s->groups, &st); /* a stream without groups keeps its digest */
    *out = XXH3_64bits_digest(&st);
    return 0;
}

static uint64_t sobj_mem(const st_obj_t *o)
{
    return st_stream_bytes((const st_stream_t *)o);
}

static void sobj_count_log(const st_obj_t *o, st_live_t *t, int sign)
{
    const st_stream_t *s = (const st_stream_t *)o;
    for (uint32_t j = 0; j < s->nc; j++) /* pages only: RAM entries are copies */
        if (st_sch(s, j)->lsn) st_live_add(t, st_sch(s, j)->lsn, st_sch(s, j)->len, sign);
}

static const char *sobj_encoding(const st_obj_t *o)
{
    (void)o;
    return "stream";
}

static void sobj_bind(st_obj_t *o, store_ctx_t *ctx)
{
    ((st_stream_t *)o)->ctx = ctx;
}

/*
 * Checkpoint stream (integers little-endian): u8 version, the meta (last
 * ID, max deleted ID: 16 bytes each; entries added: 8), u64 count, then:
 *   version 3 (D64): u32 chunk count, then per chunk, first ID first:
 *     u8 0 (RAM), u64 stamp lsn, u32 stamp seq, u32 n, n entries;
 *     u8 1 (a page), u64 stamp lsn, u32 stamp seq, u64 page lsn, u32 page
 *       length, u32 first, u32 n, the first entry's ID (16);
 *   versions 1 and 2 (before D64; still read, into RAM chunks stamped by
 *   their contents): count entries;
 * an entry being its ID (16), u32 pairs, u32 size, its data. Versions 2
 * and 3 then have the consumer groups (sgroup.c).
 */
#define SCKPT_VERSION 3

static void put_u32(buf_t *b, uint32_t v)
{
    unsigned char p[4];
    cmd_put_u32(p, v);
    buf_append(b, p, 4);
}

static void put_entry(buf_t *out, const st_sentry_t *e)
{
    unsigned char b[24];
    put_sid(b, e->id);
    cmd_put_u32(b + 16, e->npairs);
    cmd_put_u32(b + 20, e->size);
    buf_append(out, b, sizeof(b));
    buf_append(out, e->data, e->size);
}

static void sobj_ckpt_write(const st_obj_t *o, buf_t *out)
{
    const st_stream_t *s = (const st_stream_t *)o;
    unsigned char h[SCKPT_HEAD];
    h[0] = SCKPT_VERSION;
    put_sid(h + 1, s->meta.last_id);
    put_sid(h + 17, s->meta.max_deleted);
    cmd_put_i64(h + 33, (int64_t)s->meta.entries_added);
    cmd_put_i64(h + 41, (int64_t)s->n);
    buf_append(out, h, sizeof(h));
    put_u32(out, s->nc);
    for (uint32_t j = 0; j < s->nc; j++) {
        const st_schunk_t *ch = st_sch(s, j);
        buf_append(out, ch->lsn ? "\1" : "\0", 1);
        st_pgstamp_put(out, ch->stamp);
        if (ch->lsn) {
            unsigned char b[8 + 12 + 16];
            cmd_put_i64(b, (int64_t)ch->lsn);
            cmd_put_u32(b + 8, ch->len);
            cmd_put_u32(b + 12, ch->first);
            cmd_put_u32(b + 16, ch->n);
            put_sid(b + 20, ch->fid);
            buf_append(out, b, sizeof(b));
        } else {
            put_u32(out, ch->n);
            for (uint32_t k = 0; k < ch->n; k++)
                put_entry(out, ch->v[k]);
        }
    }
    sg_ckpt_write(&s->groups, out);
}

/* 1 when data[0, size) is npairs * 2 length-prefixed items exactly. */
static int items_ok(const unsigned char *p, uint32_t size, uint32_t npairs)
{
    uint64_t at = 0;
    for (uint64_t k = 0; k < 2ull * npairs; k++) {
        if (size - at < 4) return 0;
        uint32_t n = cmd_get_u32(p + at);
        if (size - at - 4 < n) return 0;
        at += 4ull + n;
    }
    return at == size;
}

/* One entry at p[*at, len), above *last (then moved to it): the entry, or
 * NULL. */
static st_sentry_t *get_entry(const unsigned char *p, size_t len, size_t *at, st_sid_t *last,
                              int any)
{
    if (len - *at < 24) return NULL;
    st_sid_t id = get_sid(p + *at);
    uint32_t npairs = cmd_get_u32(p + *at + 16), size = cmd_get_u32(p + *at + 20);
    if (len - *at - 24 < size || !items_ok(p + *at + 24, size, npairs)) return NULL;
    if (!any && st_sid_cmp(*last, id) >= 0) return NULL; /* out of order */
    st_sentry_t *e = entry_new(id, npairs, size);
    memcpy(e->data, p + *at + 24, size);
    *at += 24 + (size_t)size;
    *last = id;
    return e;
}

/* A version 1 or 2 stream's chunk, stamped by its contents (no record
 * made it here): the entries' hash and the chunk's place. */
static void old_stamp(st_schunk_t *ch, uint32_t j)
{
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    for (uint32_t k = 0; k < ch->n; k++) {
        unsigned char id[16];
        put_sid(id, ch->v[k]->id);
        XXH3_64bits_update(&st, id, sizeof(id));
        XXH3_64bits_update(&st, ch->v[k]->data, ch->v[k]->size);
    }
    ch->stamp = st_pgstamp_of(XXH3_64bits_digest(&st), j);
}

/* Versions 1 and 2: count entries into RAM chunks cut as appends cut them. */
static int read_old(st_stream_t *s, const unsigned char *p, size_t len, size_t *at, uint64_t count)
{
    st_sid_t last = {0, 0};
    for (uint64_t i = 0; i < count; i++) {
        st_sentry_t *e = get_entry(p, len, at, &last, i == 0);
        if (!e) return -1;
        st_schunk_t *ch = s->nc ? st_sch(s, s->nc - 1) : NULL;
        if (!ch || ram_full(ch)) ch = st_stream_chunks_open(s, s->nc, 1);
        st_sch_append(s, ch, e);
        s->n++;
    }
    for (uint32_t j = 0; j < s->nc; j++) {
        old_stamp(st_sch(s, j), j);
        st_sch_count(s, st_sch(s, j), 1);
    }
    return 0;
}

/* Version 3's chunks. */
static int read_chunks(st_stream_t *s, const unsigned char *p, size_t len, size_t *at,
                       uint64_t count)
{
    if (len - *at < 4) return -1;
    uint32_t nc = cmd_get_u32(p + *at);
    *at += 4;
    st_sid_t last = {0, 0};
    for (uint32_t j = 0; j < nc; j++) {
        if (len - *at < 1 + ST_PGSTAMP_BYTES + 4) return -1;
        unsigned kind = p[*at];
        st_pgstamp_t stamp = st_pgstamp_get(p + *at + 1);
        *at += 1 + ST_PGSTAMP_BYTES;
        st_schunk_t *ch = st_stream_chunks_open(s, s->nc, 1);
        ch->stamp = stamp;
        if (kind == 1) {
            if (len - *at < 36) return -1;
            ch->lsn = (uint64_t)cmd_get_i64(p + *at);
            ch->len = cmd_get_u32(p + *at + 8);
            ch->first = cmd_get_u32(p + *at + 12);
            ch->n = cmd_get_u32(p + *at + 16);
            ch->fid = get_sid(p + *at + 20);
            *at += 36;
            if (!ch->lsn || ch->len < ST_PGIMG_HDR || !ch->n) return -1;
            if ((j || s->n) && st_sid_cmp(last, ch->fid) >= 0) return -1;
            last = ch->fid; /* the rest of its IDs are in its page */
        } else if (kind == 0) {
            uint32_t n = cmd_get_u32(p + *at);
            *at += 4;
            for (uint32_t k = 0; k < n; k++) {
                st_sentry_t *e = get_entry(p, len, at, &last, j == 0 && k == 0);
                if (!e) return -1;
                st_sch_append(s, ch, e);
            }
            if (!ch->n) return -1;
        } else {
            return -1;
        }
        st_sch_count(s, ch, 1);
        s->n += ch->n;
    }
    return s->n == count ? 0 : -1;
}

static long sobj_ckpt_read(const unsigned char *p, size_t len, st_obj_t **out)
{
    if (len < SCKPT_HEAD || p[0] < 1 || p[0] > SCKPT_VERSION) return -1;
    st_stream_t *s = st_stream_new();
    s->meta.last_id = get_sid(p + 1);
    s->meta.max_deleted = get_sid(p + 17);
    s->meta.entries_added = (uint64_t)cmd_get_i64(p + 33);
    uint64_t count = (uint64_t)cmd_get_i64(p + 41);
    size_t at = SCKPT_HEAD;
    int rc = p[0] == 3 ? read_chunks(s, p, len, &at, count) : read_old(s, p, len, &at, count);
    if (rc) goto bad;
    if (p[0] >= 2) {
        long used = sg_ckpt_read(&s->groups, p + at, len - at);
        if (used < 0) goto bad;
        at += (size_t)used;
    }
    *out = &s->obj;
    return (long)at;
bad:
    st_stream_free(s);
    return -1;
}

const st_type_ops_t st_stream_ops = {
    .type = ST_STREAM,
    .name = "stream",
    .free = sobj_free,
    .dup = sobj_dup,
    .digest = sobj_digest,
    .mem_usage = sobj_mem,
    .count_log = sobj_count_log,
    .encoding = sobj_encoding,
    .ckpt_write = sobj_ckpt_write,
    .ckpt_read = sobj_ckpt_read,
    .bind = sobj_bind,
};
