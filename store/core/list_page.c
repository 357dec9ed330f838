/*
 * list_page.c - a list's pages (D63): CMD_LPAGE's change as types/t_page.c
 * applies it, the records the store's pager (store/pager.c) builds, and
 * the checks tests run. The list's structure is core/list.c's (its banner
 * has the design).
 *
 * Store process only (and tests and tools); single-threaded. Everything an
 * apply does is decided by the state the log built and the record's bytes
 * (contract 4): the record names the chunks it replaces by their stamps,
 * and equal stamps mean equal contents, so the pages it carries hold what
 * those chunks hold, or it is a no-op. What the builder chooses (which
 * chunks, how many elements a page) is free, since its choice is in the
 * record.
 *
 * CMD_LPAGE key stamps layout page...:
 *   stamps  the replaced run of consecutive chunks, head first: u64 lsn,
 *           u32 seq each;
 *   layout  the new chunks in order, u32 each: a page's element count (the
 *           next page argument), or ST_CPAGE_PIN | n: a run of n elements
 *           too long for a page, kept in RAM as a chunk of their own;
 *   pages   list pages (core/page.h).
 * Element counts must add up to the run's, each page must hold elements a
 * page may take and each pinned run elements it may not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "command.h"
#include "hash.h"
#include "list-internal.h"
#include "live.h"
#include "log.h"
#include "page.h"
#include "value.h"

/* The chunk whose stamp is s (stamps are unique in a list), or nc. */
static uint32_t find_stamp(const st_list_t *l, st_pgstamp_t s)
{
    for (uint32_t j = 0; j < l->nc; j++)
        if (st_pgstamp_eq(st_lch(l, j)->stamp, s)) return j;
    return l->nc;
}

/* A cursor over the elements of chunks [j, ...). */
typedef struct cur {
    const st_list_t *l;
    uint32_t j, k;
} cur_t;

/* The element at the cursor: 1 with *e (NULL: in a page), then moved on. */
static void cur_next(cur_t *c, idx_entry_t **e)
{
    const st_lchunk_t *ch = st_lch(c->l, c->j);
    *e = ch->lsn ? NULL : ch->v[ch->first + c->k];
    if (++c->k == ch->n) {
        c->j++;
        c->k = 0;
    }
}

/* Whether the layout fits the run [j0, j0 + k) of total elements and the
 * pages in the record. */
static int layout_fits(const st_list_t *l, const apply_args_t *a, uint32_t j0, uint64_t total)
{
    const rec_arg_t *lay = &a->argv[2];
    uint32_t m = lay->len / 4, img = 3;
    uint64_t seen = 0;
    cur_t c = {l, j0, 0};
    for (uint32_t t = 0; t < m; t++) {
        uint32_t v = cmd_get_u32(lay->ptr + 4 * t), n = v & ~ST_CPAGE_PIN;
        int pin = (v & ST_CPAGE_PIN) != 0;
        if (!n || seen + n > total) return 0;
        if (!pin) {
            if (img >= a->argc) return 0;
            const rec_arg_t *im = &a->argv[img++];
            if (st_lpimg_check(im->ptr, im->len, ST_LIST_PAGE_ELEM_MAX) != (long)n) return 0;
        }
        for (uint32_t q = 0; q < n; q++) {
            idx_entry_t *e;
            cur_next(&c, &e);
            int pageable = !e || st_lelem_pageable(st_ent_vlen(e));
            if (pin == pageable) return 0;
        }
        seen += n;
    }
    return seen == total && img == a->argc;
}

int st_list_page_apply(store_ctx_t *ctx, st_list_t *l, const apply_args_t *a)
{
    const rec_arg_t *st = &a->argv[1], *lay = &a->argv[2];
    uint32_t k = st->len / ST_PGSTAMP_BYTES, m = lay->len / 4;
    if (!k || st->len % ST_PGSTAMP_BYTES || !m || lay->len % 4) return -1;
    st_pgstamp_t s0 = st_pgstamp_get(st->ptr);
    if (!s0.lsn) return -1;
    uint32_t j0 = find_stamp(l, s0);
    if (j0 + k > l->nc) return -1;
    uint64_t total = 0;
    for (uint32_t t = 0; t < k; t++) {
        st_pgstamp_t s = st_pgstamp_get(st->ptr + ST_PGSTAMP_BYTES * t);
        const st_lchunk_t *ch = st_lch(l, j0 + t);
        if (!st_pgstamp_eq(ch->stamp, s)) return -1;
        total += ch->n;
    }
    if (!layout_fits(l, a, j0, total)) {
        log_warn("store: list page record at LSN %llu does not fit its chunks; ignored",
                 (unsigned long long)a->lsn);
        return -1;
    }
    l->ctx = ctx;
    /* The old run's elements: those the pages took go (their extents and
     * pages uncounted), the pinned ones are kept aside in order. */
    idx_entry_t **pins = st_xmalloc(((size_t)l->npin + 1) * sizeof(*pins));
    uint32_t npins = 0;
    for (uint32_t t = 0; t < k; t++) {
        st_lchunk_t *ch = st_lch(l, j0 + t);
        st_lch_count(l, ch, -1);
        if (ch->lsn) {
            st_live_add(&ctx->live, ch->lsn, ch->len, -1);
            continue;
        }
        for (uint32_t q = 0; q < ch->n; q++) {
            idx_entry_t *e = ch->v[ch->first + q];
            l->bytes -= st_list_elem_bytes(e);
            if (!st_lelem_pageable(st_ent_vlen(e))) {
                pins[npins++] = e;
            } else {
                st_ent_live_add(&ctx->live, e, -1);
                st_list_elem_free(e);
            }
        }
        st_lch_free_ram(l, ch);
    }
    st_list_chunks_close(l, j0, k);
    st_lchunk_t *nc = st_list_chunks_open(l, j0, m);
    uint32_t img = 3, at = 0;
    for (uint32_t t = 0; t < m; t++) {
        uint32_t v = cmd_get_u32(lay->ptr + 4 * t), n = v & ~ST_CPAGE_PIN;
        st_lchunk_t *ch = &nc[t];
        if (v & ST_CPAGE_PIN) {
            for (uint32_t q = 0; q < n; q++)
                st_lch_append(l, ch, pins[at++]);
        } else {
            ch->lsn = st_arg_lsn(a, img);
            ch->len = a->argv[img].len;
            ch->n = n;
            st_live_add(&ctx->live, ch->lsn, ch->len, 1);
            img++;
        }
        st_lch_stamp(ctx, ch);
        st_lch_count(l, ch, 1);
    }
    free(pins);
    return 0;
}

/* ---- building records (store/pager.c) ------------------------------------- */

/* Whether chunk j wants a record: a RAM chunk with pageable elements
 * that no longer takes pushes (not an end), or a page below pol->below. */
static int chunk_wanted(const st_list_t *l, uint32_t j, const st_pgpolicy_t *pol)
{
    const st_lchunk_t *ch = st_lch(l, j);
    if (ch->lsn) return pol->below && ch->lsn < pol->below;
    return st_lch_wants(ch) && ch->stamp.lsn && j != 0 && j + 1 != l->nc;
}

/* RAM chunks between the ends with pageable elements, and their bytes. */
static uint32_t ram_wanted(const st_list_t *l, uint64_t *bytes)
{
    uint32_t w = l->nwram;
    *bytes = l->wbytes;
    for (uint32_t e = 0; e < 2 && e < l->nc; e++) {
        const st_lchunk_t *ch = st_lch(l, e ? l->nc - 1 : 0);
        if (!st_lch_wants(ch)) continue;
        w--;
        *bytes -= ch->vbytes;
    }
    return w;
}

/* Chunks a record is built for once they hold a page's worth of elements
 * (pushes at an end leave one full chunk at a time: one record each
 * would make pages of one chunk), or when this many wait (chunks a write
 * inside the list copied into RAM, each alone). */
#define WANT_CHUNKS 4u

int st_list_page_wanted(const st_list_t *l, const st_pgpolicy_t *pol)
{
    uint64_t bytes;
    uint32_t w = ram_wanted(l, &bytes);
    if (pol->entries && l->n >= pol->entries && w && (bytes >= pol->page_bytes || w >= WANT_CHUNKS))
        return ST_PAGE_WANT_BUILD;
    if (pol->below && l->npages)
        for (uint32_t j = 0; j < l->nc; j++)
            if (st_lch(l, j)->lsn && st_lch(l, j)->lsn < pol->below) return ST_PAGE_WANT_BUILD;
    return 0;
}

int st_list_page_behind(const st_list_t *l)
{
    uint64_t bytes;
    return ram_wanted(l, &bytes) > ST_LIST_BEHIND_CHUNKS;
}

static void begin_page(buf_t *img, void *arg)
{
    (void)arg;
    st_lpimg_begin(img);
}

static void pack(st_cpack_t *pk, const unsigned char *p, uint32_t n)
{
    if (!st_lelem_pageable(n))
        st_cpack_pin(pk);
    else
        st_lpimg_put(st_cpack_room(pk, ST_LPIMG_ENT_HDR + n), p, n);
}

/* Chunk j's elements into the packer. */
static void pack_chunk(store_ctx_t *ctx, st_list_t *l, uint32_t j, st_cpack_t *pk)
{
    st_list_iter_t it;
    st_lelem_t x;
    unsigned char *tmp = NULL;
    size_t cap = 0;
    st_list_iter_init(&it, l, 0, 0, 0);
    it.j = j; /* the chunk's elements, from its first */
    it.left = st_lch(l, j)->n;
    while (st_list_next(&it, &x)) {
        const unsigned char *p;
        if (x.e && !st_lelem_pageable(st_ent_vlen(x.e))) {
            pack(pk, NULL, (uint32_t)st_ent_vlen(x.e)); /* pinned: not read */
            continue;
        }
        if (st_lelem_bytes(ctx, &x, &p, &tmp, &cap)) {
            log_warn("store: cannot read a list element to build a page; stopping");
            exit(EXIT_FATAL);
        }
        pack(pk, p, (uint32_t)st_lelem_len(&x));
    }
    st_list_iter_free(&it);
    free(tmp);
}

int st_list_page_build(store_ctx_t *ctx, st_list_t *l, const st_pgpolicy_t *pol, st_cpbuilt_t *out)
{
    l->ctx = ctx;
    if (!l->nc) return ST_PAGE_NONE;
    uint32_t j0 = l->nc, looked = 0;
    int inflight = 0;
    if (l->scan_at >= l->nc) l->scan_at = 0;
    for (uint32_t t = l->scan_at; looked < l->nc && j0 == l->nc; t = (t + 1) % l->nc) {
        if (looked++ == ST_PAGE_SCAN) {
            l->scan_at = t;
            return ST_PAGE_MORE;
        }
        if (!chunk_wanted(l, t, pol)) continue;
        if (st_lch(l, t)->busy)
            inflight = 1;
        else
            j0 = t;
    }
    if (j0 == l->nc) return inflight ? ST_PAGE_INFLIGHT : ST_PAGE_NONE;
    /* From the start of its run of wanted chunks: fuller pages. */
    while (j0 > 0 && chunk_wanted(l, j0 - 1, pol) && !st_lch(l, j0 - 1)->busy)
        j0--;
    /* A run of wanted chunks from j0, up to the record's bytes and pages
     * (a chunk adds at most ST_LCHUNK_BYTES of elements: its pages and a
     * pinned run each side of them). */
    st_cpack_t pk;
    st_cpack_start(&pk, out, pol->page_bytes, begin_page, NULL);
    uint32_t j = j0;
    do {
        st_lchunk_t *ch = st_lch(l, j);
        st_pgstamp_put(&out->stamps, ch->stamp);
        pack_chunk(ctx, l, j, &pk);
        st_lch_count(l, ch, -1);
        ch->busy = 1;
        st_lch_count(l, ch, 1);
        j++;
    } while (j < l->nc && chunk_wanted(l, j, pol) && !st_lch(l, j)->busy &&
             st_cpack_bytes(&pk) + ST_LCHUNK_BYTES * 2 < pol->record_bytes &&
             out->nimg + 1 + ST_LCHUNK_ELEMS < ST_CPAGE_MAX_IMAGES);
    st_cpack_end(&pk);
    l->scan_at = j;
    return ST_PAGE_BUILT;
}

void st_list_page_unbusy(st_list_t *l)
{
    if (!l->nbusy) return;
    for (uint32_t j = 0; j < l->nc; j++)
        st_lch(l, j)->busy = 0;
    l->nbusy = 0;
}

void st_list_page_stats(const st_list_t *l, long long v[7])
{
    long long bytes = 0, ram = 0;
    for (uint32_t j = 0; j < l->nc; j++) {
        const st_lchunk_t *ch = st_lch(l, j);
        if (ch->lsn)
            bytes += ch->len;
        else
            ram += ch->n;
    }
    long long s[7] = {l->npages > 0, l->nc, l->npages, bytes, ram, l->npin, l->n};
    memcpy(v, s, sizeof(s));
}

/* ---- a full check, for tests ---------------------------------------------- */

const char *st_list_check(st_list_t *l)
{
    static char why[160];
    uint64_t n = 0, bytes = sizeof(*l) + (uint64_t)l->ccap * sizeof(*l->c);
    uint32_t nwram = 0, npages = 0, npin = 0, nbusy = 0;
    uint64_t wbytes = 0;
    for (uint32_t j = 0; j < l->nc; j++) {
        st_lchunk_t *ch = st_lch(l, j);
        if (!ch->n) return "an empty chunk";
        n += ch->n;
        nwram += st_lch_wants(ch);
        wbytes += st_lch_wants(ch) ? ch->vbytes : 0;
        nbusy += ch->busy != 0;
        if (ch->lsn) {
            npages++;
            const unsigned char *img = st_page_read(l->ctx, ch->lsn, ch->len);
            long c = st_lpimg_check(img, ch->len, ST_LIST_PAGE_ELEM_MAX);
            if (c < 0 || (uint64_t)ch->first + ch->n > (uint64_t)c) {
                snprintf(why, sizeof(why), "chunk %u: a window [%u, +%u) of a page of %ld", j,
                         ch->first, ch->n, c);
                return why;
            }
            continue;
        }
        uint32_t pin = 0, vb = 0;
        bytes += (uint64_t)ch->cap * sizeof(*ch->v);
        for (uint32_t k = 0; k < ch->n; k++) {
            idx_entry_t *e = ch->v[ch->first + k];
            uint64_t vlen = st_ent_vlen(e);
            pin += !st_lelem_pageable(vlen);
            vb += vlen > ST_LCHUNK_BYTES ? ST_LCHUNK_BYTES + 2 : (uint32_t)vlen + 2;
            bytes += st_list_elem_bytes(e);
        }
        if (pin != ch->npin || vb != ch->vbytes) return "a RAM chunk's counts drifted";
        npin += pin;
        for (uint32_t t = 0; t < j; t++)
            if (st_lch(l, t)->stamp.lsn && st_lch(l, t)->stamp.lsn == ch->stamp.lsn &&
                st_lch(l, t)->stamp.seq == ch->stamp.seq)
                return "two chunks share a stamp";
    }
    if (n != l->n) return "the element count is not the chunks' sum";
    if (nwram != l->nwram || npages != l->npages || npin != l->npin || nbusy != l->nbusy ||
        wbytes != l->wbytes)
        return "the list's chunk counts drifted";
    if (bytes != l->bytes) {
        snprintf(why, sizeof(why), "RAM bytes %llu, counted %llu", (unsigned long long)bytes,
                 (unsigned long long)l->bytes);
        return why;
    }
    st_hash_mat_reset(l->ctx);
    return NULL;
}
