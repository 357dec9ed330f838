/*
 * list.c - the list type's data structure (list.h, D63) and its operations
 * table: what entry.c, COPY, store_digest and checkpoints call for a list.
 *
 * Store process only (and tests and tools); single-threaded. A crash loses
 * nothing: lists are rebuilt by replaying the log (or read from a
 * checkpoint, ckpt_read), their pages being log records.
 *
 * Design. A list is a sequence of chunks of consecutive elements
 * (list-internal.h), in an array with slack at both ends so that a chunk
 * is added at either end in O(1) amortised. A chunk is in RAM (an array
 * of element entries, up to ST_LCHUNK_ELEMS of them or ST_LCHUNK_BYTES of
 * element bytes) or clean: a window [first, first + n) of a list page in
 * the log (core/page.c's image, written by the store's pager as a
 * CMD_LPAGE record: core/list_page.c). Pushes go into the end chunks,
 * which stay in RAM while they take pushes (a full or clean end gets a new
 * RAM chunk beside it); a pop from a clean end moves its window (first,
 * n), reading the page once for the reply; a write inside a clean chunk
 * (LSET, LINSERT, LREM) copies its window into RAM first, after which the
 * pager writes it back. A chunk's position comes from walking a few
 * chunks from the nearer end or from a Fenwick tree over the chunks'
 * counts (rebuilt when chunks come or go, O(chunks)).
 *
 * Determinism (ARCHITECTURE.md, contract 4). Chunk boundaries are decided
 * by the records applied only (fixed limits, no setting), and each chunk
 * carries the stamp of the record that last changed it: CMD_LPAGE names
 * the chunks it replaces by stamp, so a record built before a write that
 * changed them is a no-op, live and on replay alike.
 *
 * Live bytes. A clean chunk's page is counted in ctx->live while the chunk
 * exists (count_log counts it with the list); the RAM elements' extents
 * are counted by the type handlers as before (types/t_list.c).
 *
 * Invariants: l->bytes is the requested size of this struct, the chunk
 * array, each RAM chunk's array and every RAM element entry (the Fenwick
 * tree, a cache reads may build, is not counted); no chunk is empty; l->n is the chunks' sum; the
 * type handlers add l->bytes' changes to ctx->entry_bytes. The list is bound to a store context
 * (l->ctx, through which it reads its pages) by any change made with one, and by bind after a
 * checkpoint is read.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "command.h"
#include "hash.h"
#include "io_fault.h"
#include "list-internal.h"
#include "live.h"
#include "log.h"
#include "page.h"
#include "pieces.h"
#include "resp.h"
#include "value.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* Chunks walked from the nearer end before the Fenwick tree is used. */
#define WALK_MAX 8u

/* ---- elements ------------------------------------------------------------ */

uint64_t st_list_elem_bytes(const idx_entry_t *e)
{
    uint64_t n = st_ent_alloc_size(e);
    return st_ent_kind(e) == VK_LIST ? n + st_ent_pieces((idx_entry_t *)e)->ram_bytes : n;
}

idx_entry_t *st_list_elem_new(const void *p, uint32_t len, uint64_t lsn)
{
    rec_arg_t name = {(const unsigned char *)"", 0}, val = {p, len};
    /* No log position: copied into RAM, up to 255 bytes in the entry
     * itself (a page's element, a sorted set's), without the aux word's
     * room (D74), longer as a piece (a large element read into RAM, D45). */
    if (!lsn && len > STORE_INLINE_MAX && len <= UINT8_MAX) {
        idx_entry_t *e = st_ent_alloc(NULL, 0, (uint8_t)len, VK_INLINE, 0);
        memcpy(st_ent_inline(e), p, len);
        return e;
    }
    if (!lsn && len > STORE_INLINE_MAX) return st_hash_field_new_ram("", 0, p, len);
    return st_ent_new(&name, &val, lsn, 0);
}

/*
 * Element blocks (D77). A page's window copied into RAM (dirty: a write
 * inside a clean chunk) puts its short elements into blocks of ELEM_BLOCK
 * bytes: one allocation and one run of memory per page instead of one of
 * each per element, which mostly were cache misses (the allocator's free
 * blocks) on the write's path. An element in a block has ENT_INBLOCK and
 * its block in `next`, which no index links a list element by; the block's
 * header counts the elements still in it, and the last one freed frees the
 * block. (Not found by aligning the blocks: mimalloc's aligned_alloc of 8
 * KiB at 8 KiB takes 16.) Elements leave their chunk as any other (splits,
 * pops, moves to other lists); only st_list_elem_free frees one.
 */
#define ELEM_BLOCK 8192u

typedef struct elem_block {
    uint32_t live; /* elements in the block not yet freed */
    uint32_t used; /* bytes handed out, the header's included */
} elem_block_t;

/* Entries in a block start on 8-byte boundaries, the first after the header. */
#define ELEM_ALIGN(n) (((n) + 7u) & ~(size_t)7u)

static elem_block_t *elem_block_of(const idx_entry_t *e)
{
    return (elem_block_t *)(void *)e->next;
}

/* An inline element of n bytes (at most 255, no log position) in *b, or in
 * a new block when *b has no room left (*b is then that block; the one it
 * replaces holds at least one element, which frees it in time). */
static idx_entry_t *elem_in_block(elem_block_t **b, const void *p, uint32_t n)
{
    size_t need = ELEM_ALIGN(st_entry_size(0, (uint8_t)n, VK_INLINE));
    if (!*b || (*b)->used + need > ELEM_BLOCK) {
        *b = st_xmalloc(ELEM_BLOCK);
        (*b)->live = 0;
        (*b)->used = (uint32_t)ELEM_ALIGN(sizeof(elem_block_t));
    }
    idx_entry_t *e =
        st_ent_init((unsigned char *)*b + (*b)->used, NULL, 0, (uint8_t)n, VK_INLINE, 0);
    (*b)->used += (uint32_t)need;
    (*b)->live++;
    e->next = (idx_entry_t *)(void *)*b;
    e->eflags |= ENT_INBLOCK;
    memcpy(st_ent_inline(e), p, n);
    return e;
}

void st_list_elem_free(idx_entry_t *e)
{
    if (e->eflags & ENT_INBLOCK) {
        elem_block_t *b = elem_block_of(e);
        if (!--b->live) free(b);
        return;
    }
    if (st_ent_kind(e) == VK_LIST) st_pieces_free(st_ent_pieces(e));
    free(e);
}

static uint32_t weight(uint64_t vlen)
{
    return vlen > ST_LCHUNK_BYTES ? ST_LCHUNK_BYTES + 2 : (uint32_t)vlen + 2;
}

st_list_t *st_list_new(void)
{
    st_list_t *l = st_xmalloc(sizeof(*l));
    memset(l, 0, sizeof(*l));
    l->obj.ops = &st_list_ops;
    l->bytes = sizeof(*l);
    return l;
}

uint32_t st_list_len(const st_list_t *l)
{
    return l->n;
}

uint64_t st_list_bytes(const st_list_t *l)
{
    return l->bytes;
}

/* ---- chunks --------------------------------------------------------------- */

/* Chunks are opened and closed anywhere (a sorted set's inserts split
 * chunks inside): the shorter side of the array moves. */
st_lchunk_t *st_list_chunks_open(st_list_t *l, uint32_t j, uint32_t add)
{
    int head_room = l->c0 >= add, tail_room = l->c0 + l->nc + add <= l->ccap;
    if (head_room && (j <= l->nc - j || !tail_room)) {
        memmove(l->c + l->c0 - add, l->c + l->c0, (size_t)j * sizeof(*l->c));
        l->c0 -= add;
    } else {
        if (!tail_room) {
            uint32_t cap = l->ccap ? l->ccap : 4;
            while (cap < l->nc + add + 2)
                cap *= 2;
            /* Recentred: slack on both sides for pushes at either end. */
            uint32_t c0 = (cap - l->nc - add) / 2;
            st_lchunk_t *c = st_xmalloc((size_t)cap * sizeof(*c));
            if (l->nc) { /* none yet: l->c may be NULL, which memcpy may not take */
                memcpy(c + c0, l->c + l->c0, (size_t)j * sizeof(*c));
                memcpy(c + c0 + j + add, l->c + l->c0 + j, (size_t)(l->nc - j) * sizeof(*c));
            }
            free(l->c);
            l->bytes += (uint64_t)(cap - l->ccap) * sizeof(*c);
            l->c = c;
            l->ccap = cap;
            l->c0 = c0;
        } else {
            memmove(l->c + l->c0 + j + add, l->c + l->c0 + j, (size_t)(l->nc - j) * sizeof(*l->c));
        }
    }
    l->nc += add;
    l->fen_ok = 0;
    memset(st_lch(l, j), 0, (size_t)add * sizeof(*l->c));
    return st_lch(l, j);
}

void st_list_chunks_close(st_list_t *l, uint32_t j, uint32_t k)
{
    if (j < l->nc - j - k) {
        memmove(l->c + l->c0 + k, l->c + l->c0, (size_t)j * sizeof(*l->c));
        l->c0 += k;
    } else {
        memmove(l->c + l->c0 + j, l->c + l->c0 + j + k, (size_t)(l->nc - j - k) * sizeof(*l->c));
    }
    l->nc -= k;
    l->fen_ok = 0;
    if (!l->nc) l->c0 = l->ccap / 2;
}

st_lchunk_t *st_list_chunks_replace(st_list_t *l, uint32_t j, uint32_t k, uint32_t m)
{
    if (m > k) st_list_chunks_open(l, j + k, m - k);
    if (m < k) st_list_chunks_close(l, j + m, k - m);
    l->fen_ok = 0;
    memset(st_lch(l, j), 0, (size_t)m * sizeof(*l->c));
    return st_lch(l, j);
}

void st_lch_free_ram(st_list_t *l, st_lchunk_t *ch)
{
    l->bytes -= (uint64_t)ch->cap * sizeof(*ch->v);
    free(ch->v);
    ch->v = NULL;
    ch->cap = ch->first = 0;
}

void st_lch_head_drop(st_list_t *l, st_lchunk_t *ch)
{
    if (!ch->head) return;
    l->bytes -= st_list_elem_bytes(ch->head);
    st_list_elem_free(ch->head);
    ch->head = NULL;
}

void st_lch_head_set(st_list_t *l, st_lchunk_t *ch, const unsigned char *p, uint32_t n)
{
    if (!l->keyed) return;
    st_lch_head_drop(l, ch);
    ch->head = st_list_elem_new(p, n, 0);
    l->bytes += st_list_elem_bytes(ch->head);
}

/* Room in RAM chunk ch for one more element; recentred when it grows. */
static void ram_room(st_list_t *l, st_lchunk_t *ch)
{
    if (ch->first > 0 && ch->first + ch->n < ch->cap) return;
    uint32_t cap = ch->n < 4 ? 8 : ch->n * 2;
    idx_entry_t **v = st_xmalloc((size_t)cap * sizeof(*v));
    uint32_t first = (cap - ch->n) / 2;
    if (ch->n) memcpy(v + first, ch->v + ch->first, (size_t)ch->n * sizeof(*v));
    free(ch->v);
    l->bytes += (uint64_t)cap * sizeof(*v);
    l->bytes -= (uint64_t)ch->cap * sizeof(*v);
    ch->v = v;
    ch->cap = cap;
    ch->first = first;
}

/* Put e at k of RAM chunk ch (the list's counts are the caller's). */
static void ram_put(st_list_t *l, st_lchunk_t *ch, uint32_t k, idx_entry_t *e)
{
    ram_room(l, ch);
    idx_entry_t **v = ch->v + ch->first;
    if (k < ch->n - k) { /* the head side moves one slot left */
        memmove(v - 1, v, (size_t)k * sizeof(*v));
        ch->first--;
    } else {
        memmove(v + k + 1, v + k, (size_t)(ch->n - k) * sizeof(*v));
    }
    ch->v[ch->first + k] = e;
    ch->n++;
    uint64_t vlen = st_ent_vlen(e);
    ch->vbytes += weight(vlen);
    ch->npin += !st_lelem_pageable(vlen);
    l->bytes += st_list_elem_bytes(e);
}

static idx_entry_t *ram_take(st_list_t *l, st_lchunk_t *ch, uint32_t k)
{
    idx_entry_t **v = ch->v + ch->first, *e = v[k];
    if (k < ch->n - 1 - k) {
        memmove(v + 1, v, (size_t)k * sizeof(*v));
        ch->first++;
    } else {
        memmove(v + k, v + k + 1, (size_t)(ch->n - 1 - k) * sizeof(*v));
    }
    ch->n--;
    uint64_t vlen = st_ent_vlen(e);
    ch->vbytes -= weight(vlen);
    ch->npin -= !st_lelem_pageable(vlen);
    l->bytes -= st_list_elem_bytes(e);
    return e;
}

void st_lch_append(st_list_t *l, st_lchunk_t *ch, idx_entry_t *e)
{
    ram_put(l, ch, ch->n, e);
}

/* A keyed list's RAM chunks take twice as much: a page a write copies
 * into RAM (its elements ~ a page) then takes inserts without splitting
 * at once, which would shift the chunk array for each. */
static int ram_full(const st_list_t *l, const st_lchunk_t *ch)
{
    uint32_t x = l->keyed ? 2 : 1;
    return ch->n >= x * ST_LCHUNK_ELEMS || ch->vbytes >= x * ST_LCHUNK_BYTES;
}

/* ---- positions ------------------------------------------------------------ */

static void fen_build(st_list_t *l)
{
    if (l->fen_cap < l->nc + 1) {
        uint32_t cap = l->fen_cap ? l->fen_cap : 16;
        while (cap < l->nc + 1)
            cap *= 2;
        /* Not in l->bytes: a cache a read may build (8 bytes a chunk),
         * which would change the RAM accounted outside a write. */
        l->fen = st_xrealloc(l->fen, (size_t)cap * sizeof(*l->fen));
        l->fen_cap = cap;
    }
    for (uint32_t j = 1; j <= l->nc; j++)
        l->fen[j] = st_lch(l, j - 1)->n;
    for (uint32_t j = 1; j <= l->nc; j++) {
        uint32_t up = j + (j & -j);
        if (up <= l->nc) l->fen[up] += l->fen[j];
    }
    l->fen_ok = 1;
}

/* Chunk j's count changed by d (after the change). */
static void fen_add(st_list_t *l, uint32_t j, int d)
{
    if (!l->fen_ok) return;
    for (uint32_t x = j + 1; x <= l->nc; x += x & -x)
        l->fen[x] += (uint64_t)(int64_t)d;
}

void st_list_locate(st_list_t *l, uint32_t i, uint32_t *j, uint32_t *k)
{
    if (i < l->n / 2) {
        uint32_t at = 0;
        for (uint32_t t = 0; t < WALK_MAX && t < l->nc; t++) {
            uint32_t n = st_lch(l, t)->n;
            if (i < at + n) {
                *j = t;
                *k = i - at;
                return;
            }
            at += n;
        }
    } else {
        uint32_t after = l->n; /* elements before the end of chunk t */
        for (uint32_t t = l->nc; t > 0 && l->nc - t < WALK_MAX; t--) {
            uint32_t n = st_lch(l, t - 1)->n;
            if (i >= after - n) {
                *j = t - 1;
                *k = i - (after - n);
                return;
            }
            after -= n;
        }
    }
    if (!l->fen_ok) fen_build(l);
    uint32_t pos = 0, rem = i, step = 1;
    while (step * 2 <= l->nc)
        step *= 2;
    for (; step; step /= 2)
        if (pos + step <= l->nc && l->fen[pos + step] <= rem) {
            pos += step;
            rem -= (uint32_t)l->fen[pos];
        }
    *j = pos;
    *k = rem;
}

/* The elements before chunk j: walked from the nearer end, or the
 * Fenwick tree's prefix sum. */
static uint64_t prefix(st_list_t *l, uint32_t j)
{
    uint64_t sum = 0;
    if (j <= WALK_MAX) {
        for (uint32_t t = 0; t < j; t++)
            sum += st_lch(l, t)->n;
        return sum;
    }
    if (l->nc - j <= WALK_MAX) {
        for (uint32_t t = j; t < l->nc; t++)
            sum += st_lch(l, t)->n;
        return l->n - sum;
    }
    if (!l->fen_ok) fen_build(l);
    for (uint32_t x = j; x > 0; x -= x & -x)
        sum += l->fen[x];
    return sum;
}

/* ---- clean chunks ---------------------------------------------------------- */

static store_ctx_t *reader(st_list_t *l, store_ctx_t *ctx)
{
    if (ctx) l->ctx = ctx;
    return l->ctx;
}

/* Element k of clean chunk ch: p[0, *n) in the page (cached: valid until
 * the next page read). */
static const unsigned char *clean_elem(st_list_t *l, const st_lchunk_t *ch, uint32_t k, uint32_t *n)
{
    const unsigned char *p = NULL;
    if (st_lpimg_at(l->ctx, ch->lsn, ch->len, ch->first + k, &p, n) != 0) {
        log_warn("store: a list page at LSN %llu lacks an element it counts; stopping",
                 (unsigned long long)ch->lsn);
        exit(EXIT_FATAL);
    }
    return p;
}

/* A keyed list's clean chunk ch whose window moved: its head is the
 * window's new first element (one page read, mostly the cached page the
 * move itself read). */
static void head_refresh(st_list_t *l, st_lchunk_t *ch)
{
    if (!l->keyed || !ch->lsn || !ch->n) return;
    uint32_t n;
    const unsigned char *p = clean_elem(l, ch, 0, &n);
    st_lch_head_set(l, ch, p, n);
}

/* Uncount clean chunk ch's page (it leaves the list or RAM takes it). */
static void page_gone(store_ctx_t *ctx, const st_lchunk_t *ch)
{
    if (ctx) st_live_add(&ctx->live, ch->lsn, ch->len, -1);
}

/* Clean chunk j becomes a RAM chunk holding copies of its window (a write
 * inside it). */
static void dirty(store_ctx_t *ctx, st_list_t *l, uint32_t j)
{
    st_lchunk_t *ch = st_lch(l, j);
    st_lch_count(l, ch, -1);
    unsigned char *buf = NULL;
    size_t cap = 0;
    const unsigned char *img = st_page_read_into(l->ctx, ch->lsn, ch->len, &buf, &cap), *p;
    size_t off = ST_PGIMG_HDR;
    uint32_t n, first = ch->first, count = ch->n, len = ch->len;
    st_lch_head_drop(l, ch);
    page_gone(ctx, ch);
    ch->lsn = 0;
    ch->len = ch->first = ch->n = ch->vbytes = ch->npin = 0;
    elem_block_t *b = NULL;
    for (uint32_t t = 0; t < first + count && st_lpimg_next(img, len, &off, &p, &n) == 1; t++)
        if (t >= first)
            ram_put(l, ch, ch->n,
                    n <= UINT8_MAX ? elem_in_block(&b, p, n) : st_list_elem_new(p, n, 0));
    free(buf);
    st_lch_stamp(ctx, ch);
    st_lch_count(l, ch, 1);
    /* Tests: killed with a page's elements copied into RAM only. */
    if (io_fault_point(l->keyed ? IO_FAULT_ZSET_DIRTY : IO_FAULT_LIST_DIRTY) == IO_FAULT_KILL)
        raise(SIGKILL);
}

/* ---- changes ----------------------------------------------------------------- */

/* A new empty RAM chunk at j. */
static st_lchunk_t *new_ram_chunk(store_ctx_t *ctx, st_list_t *l, uint32_t j)
{
    st_lchunk_t *ch = st_list_chunks_open(l, j, 1);
    st_lch_stamp(ctx, ch);
    return ch;
}

/* Split full RAM chunk j in two halves (an insertion inside it). */
static void split(store_ctx_t *ctx, st_list_t *l, uint32_t j)
{
    st_lchunk_t *b = st_list_chunks_open(l, j + 1, 1), *a = st_lch(l, j);
    st_lch_count(l, a, -1);
    uint32_t keep = a->n / 2;
    while (a->n > keep) {
        idx_entry_t *e = ram_take(l, a, keep);
        ram_put(l, b, b->n, e);
    }
    st_lch_stamp(ctx, a);
    st_lch_stamp(ctx, b);
    st_lch_count(l, a, 1);
    st_lch_count(l, b, 1);
}

/* Put e before element k of chunk j (k == its n: after its last), not at
 * either end of the list: the chunk copied into RAM when clean, split when
 * full. */
/* Put e at k of RAM chunk j, one element more in the list. */
static void put_in(store_ctx_t *ctx, st_list_t *l, uint32_t j, uint32_t k, idx_entry_t *e)
{
    st_lchunk_t *ch = st_lch(l, j);
    st_lch_count(l, ch, -1);
    ram_put(l, ch, k, e);
    st_lch_stamp(ctx, ch);
    st_lch_count(l, ch, 1);
    l->n++;
    fen_add(l, j, 1);
}

static void insert_at(store_ctx_t *ctx, st_list_t *l, uint32_t j, uint32_t k, idx_entry_t *e)
{
    if (st_lch(l, j)->lsn) dirty(ctx, l, j);
    if (ram_full(l, st_lch(l, j))) {
        uint32_t keep = st_lch(l, j)->n / 2; /* split's */
        split(ctx, l, j);
        if (k > keep) j++, k -= keep;
    }
    put_in(ctx, l, j, k, e);
}

void st_list_insert(store_ctx_t *ctx, st_list_t *l, uint32_t i, idx_entry_t *e)
{
    reader(l, ctx);
    uint32_t j, k;
    st_lchunk_t *ch;
    if (i == 0 || i == l->n) {
        j = i == 0 ? 0 : l->nc - 1;
        ch = l->nc ? st_lch(l, j) : NULL;
        if (!ch || ch->lsn || ram_full(l, ch)) {
            j = i == 0 ? 0 : l->nc;
            ch = new_ram_chunk(ctx, l, j);
        }
        k = i == 0 ? 0 : ch->n;
        put_in(ctx, l, j, k, e);
    } else {
        st_list_locate(l, i, &j, &k);
        insert_at(ctx, l, j, k, e);
    }
}

static idx_entry_t *take_at(store_ctx_t *ctx, st_list_t *l, uint32_t j, uint32_t k);

/* Chunk j is empty: it goes. */
static void drop_if_empty(store_ctx_t *ctx, st_list_t *l, uint32_t j)
{
    st_lchunk_t *ch = st_lch(l, j);
    if (ch->n) return;
    st_lch_count(l, ch, -1);
    if (ch->lsn) page_gone(ctx, ch);
    st_lch_head_drop(l, ch);
    st_lch_free_ram(l, ch);
    st_list_chunks_close(l, j, 1);
}

idx_entry_t *st_list_take(store_ctx_t *ctx, st_list_t *l, uint32_t i)
{
    reader(l, ctx);
    uint32_t j, k;
    st_list_locate(l, i, &j, &k);
    return take_at(ctx, l, j, k);
}

/* Take element k of chunk j out. */
static idx_entry_t *take_at(store_ctx_t *ctx, st_list_t *l, uint32_t j, uint32_t k)
{
    st_lchunk_t *ch = st_lch(l, j);
    idx_entry_t *e;
    if (ch->lsn && (k == 0 || k == ch->n - 1)) { /* an edge of a page: its window moves */
        uint32_t n;
        const unsigned char *p = clean_elem(l, ch, k, &n);
        e = st_list_elem_new(p, n, 0);
        st_lch_count(l, ch, -1);
        if (k == 0) ch->first++;
        ch->n--;
        if (k == 0) head_refresh(l, ch);
    } else {
        if (ch->lsn) dirty(ctx, l, j);
        ch = st_lch(l, j);
        st_lch_count(l, ch, -1);
        e = ram_take(l, ch, k);
    }
    st_lch_stamp(ctx, ch);
    st_lch_count(l, ch, 1);
    l->n--;
    fen_add(l, j, -1);
    drop_if_empty(ctx, l, j);
    return e;
}

idx_entry_t *st_list_replace(store_ctx_t *ctx, st_list_t *l, uint32_t i, idx_entry_t *e)
{
    reader(l, ctx);
    uint32_t j, k;
    st_list_locate(l, i, &j, &k);
    if (st_lch(l, j)->lsn) dirty(ctx, l, j);
    st_lchunk_t *ch = st_lch(l, j);
    st_lch_count(l, ch, -1);
    idx_entry_t *old = ram_take(l, ch, k);
    ram_put(l, ch, k, e);
    st_lch_stamp(ctx, ch);
    st_lch_count(l, ch, 1);
    return old;
}

/* Drop up to `count` elements from the head (or tail) end chunk: the
 * number dropped. */
static uint32_t trim_end(store_ctx_t *ctx, st_list_t *l, int tail, uint32_t count)
{
    uint32_t j = tail ? l->nc - 1 : 0;
    st_lchunk_t *ch = st_lch(l, j);
    uint32_t d = count < ch->n ? count : ch->n;
    st_lch_count(l, ch, -1);
    if (ch->lsn) {
        if (!tail) ch->first += d;
        ch->n -= d;
        if (!tail) head_refresh(l, ch);
    } else {
        for (uint32_t t = 0; t < d; t++) {
            idx_entry_t *e = ram_take(l, ch, tail ? ch->n - 1 : 0);
            if (ctx) st_ent_live_add(&ctx->live, e, -1);
            st_list_elem_free(e);
        }
    }
    st_lch_stamp(ctx, ch);
    st_lch_count(l, ch, 1);
    l->n -= d;
    fen_add(l, j, -(int)d);
    drop_if_empty(ctx, l, j);
    return d;
}

void st_list_trim(store_ctx_t *ctx, st_list_t *l, uint32_t head, uint32_t tail)
{
    reader(l, ctx);
    while (head && l->n)
        head -= trim_end(ctx, l, 0, head);
    while (tail && l->n)
        tail -= trim_end(ctx, l, 1, tail);
}

void st_list_seal(store_ctx_t *ctx, st_list_t *l)
{
    reader(l, ctx);
    for (uint32_t j = 0; j < l->nc; j++)
        if (!st_lch(l, j)->stamp.lsn) st_lch_stamp(ctx, st_lch(l, j));
}

idx_entry_t *st_list_at(st_list_t *l, uint32_t i)
{
    uint32_t j, k;
    st_list_locate(l, i, &j, &k);
    st_lchunk_t *ch = st_lch(l, j);
    if (!ch->lsn) return ch->v[ch->first + k];
    uint32_t n;
    const unsigned char *p = clean_elem(l, ch, k, &n);
    return st_hash_mat_new(l->ctx, "", 0, p, n);
}

/* ---- keyed lists (a sorted set's order, D65) ------------------------------------ */

void st_list_set_keyed(st_list_t *l)
{
    l->keyed = 1;
}

int st_list_is_keyed(const st_list_t *l)
{
    return l->keyed;
}

int st_list_has_pages(const st_list_t *l)
{
    return l->cc.npages > 0;
}

/* Chunk j's first element as bytes: its head (a keyed list's clean chunk,
 * else read from its page) or its first RAM element. */
static void first_of(st_list_t *l, uint32_t j, const unsigned char **p, uint32_t *n,
                     unsigned char **tmp, size_t *cap)
{
    const st_lchunk_t *ch = st_lch(l, j);
    st_lelem_t x = {ch->lsn ? ch->head : ch->v[ch->first], NULL, 0};
    if (!x.e) {
        *p = clean_elem(l, ch, 0, n);
        return;
    }
    *n = (uint32_t)st_ent_vlen(x.e);
    if (st_lelem_bytes(l->ctx, &x, p, tmp, cap)) {
        log_warn("store: cannot read a list element to seek; stopping");
        exit(EXIT_FATAL);
    }
}

/* Where st_list_seek's position is: chunk *j, *k within it (k may be its
 * n: after its last). l is not empty. */
static void seek_place(st_list_t *l, st_list_before_fn before, const void *arg, uint32_t *jp,
                       uint32_t *kp)
{
    unsigned char *tmp = NULL;
    size_t cap = 0;
    const unsigned char *p;
    uint32_t n, lo = 0, hi = l->nc;
    /* The first chunk whose first element is not before: the answer is in
     * the chunk ahead of it (or at 0). */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        first_of(l, mid, &p, &n, &tmp, &cap);
        if (before(arg, p, n))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) {
        free(tmp);
        *jp = *kp = 0;
        return;
    }
    uint32_t j = lo - 1, k = 1;
    const st_lchunk_t *ch = st_lch(l, j);
    if (ch->lsn) { /* a page: a binary search of its window past its first */
        uint32_t a = 1, b = ch->n;
        while (a < b) {
            uint32_t mid = a + (b - a) / 2;
            p = clean_elem(l, ch, mid, &n);
            if (before(arg, p, n))
                a = mid + 1;
            else
                b = mid;
        }
        k = a;
    } else { /* in RAM: a binary search past its first */
        uint32_t a = 1, b = ch->n;
        while (a < b) {
            uint32_t mid = a + (b - a) / 2;
            st_lelem_t x = {ch->v[ch->first + mid], NULL, 0};
            if (st_lelem_bytes(l->ctx, &x, &p, &tmp, &cap)) {
                log_warn("store: cannot read a list element to seek; stopping");
                exit(EXIT_FATAL);
            }
            if (before(arg, p, (uint32_t)st_ent_vlen(x.e)))
                a = mid + 1;
            else
                b = mid;
        }
        k = a;
    }
    free(tmp);
    *jp = j;
    *kp = k;
}

uint32_t st_list_seek(st_list_t *l, st_list_before_fn before, const void *arg)
{
    if (!l->n) return 0;
    uint32_t j, k;
    seek_place(l, before, arg, &j, &k);
    return (uint32_t)(prefix(l, j) + k);
}

void st_list_insert_sorted(store_ctx_t *ctx, st_list_t *l, st_list_before_fn before,
                           const void *arg, idx_entry_t *e)
{
    reader(l, ctx);
    uint32_t j, k;
    if (!l->n) {
        st_list_insert(ctx, l, 0, e);
        return;
    }
    seek_place(l, before, arg, &j, &k);
    if (j == 0 && k == 0) { /* the ends: as pushes */
        st_list_insert(ctx, l, 0, e);
        return;
    }
    if (j == l->nc - 1 && k == st_lch(l, j)->n) {
        st_list_insert(ctx, l, l->n, e);
        return;
    }
    /* Between two chunks: into the one in RAM with room, if any. */
    const st_lchunk_t *ch = st_lch(l, j);
    if (k == 0 && !st_lch(l, j - 1)->lsn && !ram_full(l, st_lch(l, j - 1))) {
        j--;
        k = st_lch(l, j)->n;
    } else if (k == ch->n && !st_lch(l, j + 1)->lsn && !ram_full(l, st_lch(l, j + 1))) {
        j++;
        k = 0;
    }
    insert_at(ctx, l, j, k, e);
}

idx_entry_t *st_list_take_sorted(store_ctx_t *ctx, st_list_t *l, st_list_before_fn before,
                                 const void *arg)
{
    reader(l, ctx);
    uint32_t j, k;
    seek_place(l, before, arg, &j, &k);
    if (k == st_lch(l, j)->n) j++, k = 0; /* the next chunk's first */
    return take_at(ctx, l, j, k);
}

/* ---- walking ------------------------------------------------------------------ */

void st_list_iter_init(st_list_iter_t *it, st_list_t *l, uint32_t from, uint32_t count, int rev)
{
    memset(it, 0, sizeof(*it));
    it->l = l;
    it->rev = rev;
    it->cj = UINT32_MAX;
    it->left = from < l->n ? count : 0;
    if (it->left) st_list_locate(l, from, &it->j, &it->k);
}

/* Index clean chunk j's window into it->p[], it->n[]. */
static void iter_load(st_list_iter_t *it, uint32_t j)
{
    const st_lchunk_t *ch = st_lch(it->l, j);
    const unsigned char *img = st_page_read_into(it->l->ctx, ch->lsn, ch->len, &it->buf, &it->cap),
                        *p;
    if (it->pcap < ch->n) {
        it->pcap = ch->n;
        it->p = st_xrealloc(it->p, (size_t)ch->n * sizeof(*it->p));
        it->n = st_xrealloc(it->n, (size_t)ch->n * sizeof(*it->n));
    }
    size_t off = ST_PGIMG_HDR;
    uint32_t n;
    for (uint32_t t = 0; t < ch->first + ch->n; t++) {
        if (st_lpimg_next(img, ch->len, &off, &p, &n) != 1) {
            log_warn("store: a list page at LSN %llu lacks an element it counts; stopping",
                     (unsigned long long)ch->lsn);
            exit(EXIT_FATAL);
        }
        if (t >= ch->first) {
            it->p[t - ch->first] = p;
            it->n[t - ch->first] = n;
        }
    }
    it->cj = j;
}

int st_list_next(st_list_iter_t *it, st_lelem_t *x)
{
    if (!it->left) return 0;
    const st_lchunk_t *ch = st_lch(it->l, it->j);
    if (!ch->lsn) {
        *x = (st_lelem_t){ch->v[ch->first + it->k], NULL, 0};
    } else {
        if (it->cj != it->j) iter_load(it, it->j);
        *x = (st_lelem_t){NULL, it->p[it->k], it->n[it->k]};
    }
    if (--it->left) {
        if (!it->rev && ++it->k == ch->n) {
            it->j++;
            it->k = 0;
        } else if (it->rev && it->k-- == 0) {
            it->j--;
            it->k = st_lch(it->l, it->j)->n - 1;
        }
    }
    return 1;
}

void st_list_iter_free(st_list_iter_t *it)
{
    free(it->buf);
    free(it->p);
    free(it->n);
    memset(it, 0, sizeof(*it));
}

uint64_t st_lelem_len(const st_lelem_t *x)
{
    return x->e ? st_ent_vlen(x->e) : x->n;
}

int st_lelem_bytes(store_ctx_t *ctx, const st_lelem_t *x, const unsigned char **p,
                   unsigned char **tmp, size_t *cap)
{
    if (!x->e) {
        *p = x->p;
        return 0;
    }
    if (st_ent_kind(x->e) == VK_INLINE) {
        *p = st_ent_inline(x->e);
        return 0;
    }
    uint64_t n = st_ent_vlen(x->e);
    if (*cap < n) {
        *tmp = st_xrealloc(*tmp, (size_t)n);
        *cap = (size_t)n;
    }
    *p = *tmp;
    return st_read_value(ctx, x->e, *tmp);
}

void st_lelem_reply(store_ctx_t *ctx, const st_lelem_t *x, buf_t *r)
{
    if (x->e)
        st_reply_value(ctx, x->e, r);
    else
        resp_bulk(r, x->p, x->n);
}

idx_entry_t *st_lelem_entry(store_ctx_t *ctx, const st_lelem_t *x)
{
    return x->e ? x->e : st_hash_mat_new(ctx, "", 0, x->p, x->n);
}

/* ---- the operations table ------------------------------------------------------ */

static void list_free(st_obj_t *o)
{
    st_list_t *l = (st_list_t *)o;
    for (uint32_t j = 0; j < l->nc; j++) {
        st_lchunk_t *ch = st_lch(l, j);
        for (uint32_t k = 0; !ch->lsn && k < ch->n; k++)
            st_list_elem_free(ch->v[ch->first + k]);
        free(ch->v);
        if (ch->head) st_list_elem_free(ch->head);
    }
    free(l->c);
    free(l->fen);
    free(l);
}

/* Pages are shared (the log is immutable), stamps copied with the
 * contents they name. */
static st_obj_t *list_dup(const st_obj_t *o)
{
    const st_list_t *l = (const st_list_t *)o;
    st_list_t *c = st_list_new();
    c->ctx = l->ctx;
    c->keyed = l->keyed;
    rec_arg_t name = {(const unsigned char *)"", 0};
    if (l->nc) st_list_chunks_open(c, 0, l->nc);
    for (uint32_t j = 0; j < l->nc; j++) {
        const st_lchunk_t *s = st_lch(l, j);
        st_lchunk_t *d = st_lch(c, j);
        if (s->lsn) {
            *d = *s;
            d->busy = 0;
            if (s->head) {
                d->head = st_ent_dup(s->head, &name);
                c->bytes += st_list_elem_bytes(d->head);
            }
        } else {
            d->stamp = s->stamp;
            for (uint32_t k = 0; k < s->n; k++)
                ram_put(c, d, k, st_ent_dup(s->v[s->first + k], &name));
        }
        st_lch_count(c, d, 1);
        c->n += d->n;
    }
    return &c->obj;
}

/* Order matters: a running XXH3 over each element's length and bytes
 * (the same whether an element is in RAM or a page). */
static int list_digest(store_ctx_t *ctx, const st_obj_t *o, uint64_t *out)
{
    st_list_t *l = (st_list_t *)o;
    reader(l, ctx);
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    unsigned char *tmp = NULL;
    size_t cap = 0;
    int rc = 0;
    st_list_iter_t it;
    st_lelem_t x;
    st_list_iter_init(&it, l, 0, l->n, 0);
    while (!rc && st_list_next(&it, &x)) {
        const unsigned char *p;
        uint64_t vlen = st_lelem_len(&x);
        rc = st_lelem_bytes(ctx, &x, &p, &tmp, &cap);
        XXH3_64bits_update(&st, &vlen, sizeof(vlen));
        if (!rc) XXH3_64bits_update(&st, p, (size_t)vlen);
    }
    st_list_iter_free(&it);
    free(tmp);
    *out = XXH3_64bits_digest(&st) ^ 0x6C697374ull; /* "list": unlike an equal hash */
    return rc ? -1 : 0;
}

static uint64_t list_mem(const st_obj_t *o)
{
    return ((const st_list_t *)o)->bytes;
}

static void list_count_log(const st_obj_t *o, st_live_t *t, int sign)
{
    const st_list_t *l = (const st_list_t *)o;
    for (uint32_t j = 0; j < l->nc; j++) {
        const st_lchunk_t *ch = st_lch(l, j);
        if (ch->lsn)
            st_live_add(t, ch->lsn, ch->len, sign);
        else
            for (uint32_t k = 0; k < ch->n; k++)
                st_ent_live_add(t, ch->v[ch->first + k], sign);
    }
}

static const char *list_encoding(const st_obj_t *o)
{
    (void)o;
    return "quicklist";
}

static void list_bind(st_obj_t *o, store_ctx_t *ctx)
{
    ((st_list_t *)o)->ctx = ctx;
}

/*
 * Checkpoint stream (integers little-endian). Version 2 (D63):
 *   u8 2, u32 element count, u32 chunk count, then per chunk, head first:
 *     u8 0 (RAM), u64 stamp lsn, u32 stamp seq, u32 n, n elements as
 *       version 1 writes them;
 *     u8 1 (a page), u64 stamp lsn, u32 stamp seq, u64 page lsn, u32 page
 *       length, u32 first, u32 n.
 * Version 3 (D65: a keyed list, a sorted set's order): version 2 with u8 3
 * first, and after each page's fields its head, the window's first
 * element, as version 1 writes an element, and u32 its page's element
 * count.
 * Version 1 (before D63; still read, into RAM chunks stamped by their
 * contents): u8 1, u32 element count, then per element, head first:
 *     u8 0, u32 length, bytes        (inline; read back at any length)
 *     u8 1, u64 lsn, u32 length      (a log extent)
 *     u8 2, u32 length, bytes        (held in RAM: a long element RESTORE
 *                                     decoded from an LZF node, D40, or
 *                                     read from a big value's parts, D45)
 */
#define CKPT_V1 1
#define CKPT_V2 2
#define CKPT_V3 3

static void put_u32(buf_t *b, uint32_t v)
{
    unsigned char p[4];
    cmd_put_u32(p, v);
    buf_append(b, p, 4);
}

static void put_u64(buf_t *b, uint64_t v)
{
    unsigned char p[8];
    cmd_put_i64(p, (int64_t)v);
    buf_append(b, p, 8);
}

static void put_elem(buf_t *out, idx_entry_t *e)
{
    if (st_ent_kind(e) == VK_EXTENT) {
        uint64_t lsn;
        uint32_t len;
        st_ent_get_ext1(e, &lsn, &len);
        buf_append(out, "\1", 1);
        put_u64(out, lsn);
        put_u32(out, len);
    } else if (st_ent_kind(e) == VK_LIST) { /* one PIECE_RAM (st_ent_new_ram) */
        const st_pieces_t *pl = st_ent_pieces(e);
        uint32_t len = (uint32_t)st_ent_vlen(e);
        buf_append(out, "\2", 1);
        put_u32(out, len);
        buf_append(out, st_piece_ram(&pl->p[0]), len);
    } else {
        /* Inline: read without I/O. */
        uint64_t vlen = st_ent_vlen(e);
        buf_append(out, "\0", 1);
        put_u32(out, (uint32_t)vlen);
        buf_reserve(out, (size_t)vlen);
        if (st_read_value(NULL, e, (unsigned char *)out->data + out->len)) abort();
        out->len += (size_t)vlen;
    }
}

static void list_ckpt_write(const st_obj_t *o, buf_t *out)
{
    const st_list_t *l = (const st_list_t *)o;
    buf_append(out, l->keyed ? "\3" : "\2", 1);
    put_u32(out, l->n);
    put_u32(out, l->nc);
    for (uint32_t j = 0; j < l->nc; j++) {
        const st_lchunk_t *ch = st_lch(l, j);
        buf_append(out, ch->lsn ? "\1" : "\0", 1);
        put_u64(out, ch->stamp.lsn);
        put_u32(out, ch->stamp.seq);
        if (ch->lsn) {
            put_u64(out, ch->lsn);
            put_u32(out, ch->len);
            put_u32(out, ch->first);
            put_u32(out, ch->n);
            if (l->keyed) {
                put_elem(out, ch->head);
                put_u32(out, ch->pn);
            }
        } else {
            put_u32(out, ch->n);
            for (uint32_t k = 0; k < ch->n; k++)
                put_elem(out, ch->v[ch->first + k]);
        }
    }
}

/* One element as put_elem wrote it, at p[*at, len): the entry, or NULL. */
static idx_entry_t *get_elem(const unsigned char *p, size_t len, size_t *at)
{
    if (len - *at < 5) return NULL;
    unsigned kind = p[(*at)++];
    rec_arg_t name = {(const unsigned char *)"", 0};
    if (kind == 1) {
        if (len - *at < 12) return NULL;
        uint64_t lsn = (uint64_t)cmd_get_i64(p + *at);
        uint32_t vlen = cmd_get_u32(p + *at + 8);
        *at += 12;
        if (vlen <= STORE_INLINE_MAX || lsn == 0) return NULL; /* never written so */
        rec_arg_t val = {NULL, vlen};
        return st_ent_new(&name, &val, lsn, 0);
    }
    uint32_t vlen = cmd_get_u32(p + *at);
    *at += 4;
    if (kind > 2 || len - *at < vlen || (kind == 2 && vlen <= STORE_INLINE_MAX)) return NULL;
    idx_entry_t *e =
        kind == 2 ? st_ent_new_ram(&name, p + *at, vlen, 0) : st_list_elem_new(p + *at, vlen, 0);
    *at += vlen;
    return e;
}

/* The tail RAM chunk of l for one more element read in order (v1). */
static st_lchunk_t *v1_chunk(st_list_t *l)
{
    st_lchunk_t *ch = l->nc ? st_lch(l, l->nc - 1) : NULL;
    return ch && !ram_full(l, ch) ? ch : st_list_chunks_open(l, l->nc, 1);
}

/* A chunk stamped by its contents where no record made it (a version 1
 * stream's): bit 63 set, the element bytes' hash, the chunk's place. */
static void v1_stamp(st_lchunk_t *ch, uint32_t j)
{
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    for (uint32_t k = 0; k < ch->n; k++) { /* the value, not the entry: loaded twice, alike */
        idx_entry_t *e = ch->v[ch->first + k];
        uint64_t vlen = st_ent_vlen(e), lsn = 0;
        if (st_ent_kind(e) == VK_EXTENT) {
            uint32_t len;
            st_ent_get_ext1(e, &lsn, &len);
        } else if (st_ent_kind(e) == VK_LIST) {
            XXH3_64bits_update(&st, st_piece_ram(&st_ent_pieces(e)->p[0]), (size_t)vlen);
        } else {
            XXH3_64bits_update(&st, st_ent_inline(e), (size_t)vlen);
        }
        XXH3_64bits_update(&st, &lsn, sizeof(lsn));
        XXH3_64bits_update(&st, &vlen, sizeof(vlen));
    }
    ch->stamp = st_pgstamp_of(XXH3_64bits_digest(&st), j);
}

void st_list_seal_contents(st_list_t *l)
{
    for (uint32_t j = 0; j < l->nc; j++)
        if (!st_lch(l, j)->stamp.lsn) v1_stamp(st_lch(l, j), j);
}

static long list_ckpt_read(const unsigned char *p, size_t len, st_obj_t **out)
{
    size_t at = 5;
    if (len < 5 || p[0] < CKPT_V1 || p[0] > CKPT_V3) return -1;
    uint32_t n = cmd_get_u32(p + 1);
    st_list_t *l = st_list_new();
    l->keyed = p[0] == CKPT_V3;
    if (p[0] == CKPT_V1) {
        for (uint32_t i = 0; i < n; i++) {
            idx_entry_t *e = get_elem(p, len, &at);
            if (!e) goto bad;
            st_lchunk_t *ch = v1_chunk(l);
            ram_put(l, ch, ch->n, e);
            l->n++;
        }
        st_list_seal_contents(l);
        for (uint32_t j = 0; j < l->nc; j++)
            st_lch_count(l, st_lch(l, j), 1);
        *out = &l->obj;
        return (long)at;
    }
    if (len - at < 4) goto bad;
    uint32_t nc = cmd_get_u32(p + at);
    at += 4;
    for (uint32_t j = 0; j < nc; j++) {
        if (len - at < 17) goto bad; /* kind, stamp, and at least 4 more */
        unsigned kind = p[at];
        st_pgstamp_t s = st_pgstamp_get(p + at + 1);
        at += 13;
        st_lchunk_t *ch = st_list_chunks_open(l, l->nc, 1);
        ch->stamp = s;
        if (kind == 1) { /* u64 page lsn, u32 length, u32 first, u32 n */
            if (len - at < 20) goto bad;
            ch->lsn = (uint64_t)cmd_get_i64(p + at);
            ch->len = cmd_get_u32(p + at + 8);
            ch->first = cmd_get_u32(p + at + 12);
            ch->n = cmd_get_u32(p + at + 16);
            at += 20;
            if (!ch->lsn || ch->len < ST_PGIMG_HDR || !ch->n) goto bad;
            if (l->keyed) { /* version 3: the window's first element, the page's count */
                if (!(ch->head = get_elem(p, len, &at))) goto bad;
                l->bytes += st_list_elem_bytes(ch->head);
                if (len - at < 4) goto bad;
                ch->pn = cmd_get_u32(p + at);
                at += 4;
            }
        } else if (kind == 0) { /* u32 n, the elements */
            uint32_t cn = cmd_get_u32(p + at);
            at += 4;
            for (uint32_t k = 0; k < cn; k++) {
                idx_entry_t *e = get_elem(p, len, &at);
                if (!e) goto bad;
                ram_put(l, ch, ch->n, e);
            }
            if (!ch->n) goto bad;
        } else {
            goto bad;
        }
        st_lch_count(l, ch, 1);
        l->n += ch->n;
    }
    if (l->n != n) goto bad;
    *out = &l->obj;
    return (long)at;
bad:
    list_free(&l->obj);
    return -1;
}

const st_type_ops_t st_list_ops = {
    .type = ST_LIST,
    .name = "list",
    .free = list_free,
    .dup = list_dup,
    .digest = list_digest,
    .mem_usage = list_mem,
    .count_log = list_count_log,
    .encoding = list_encoding,
    .ckpt_write = list_ckpt_write,
    .ckpt_read = list_ckpt_read,
    .bind = list_bind,
};
