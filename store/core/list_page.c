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
#include "chunked.h"
#include "page.h"
#include "value.h"

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
    const rec_arg_t *lay = &a->argv[2];
    st_chunks_t chunks = st_list_chunks(l);
    uint32_t j0, k, m;
    uint64_t total;
    if (st_chunked_run(&chunks, &a->argv[1], lay, UINT32_MAX, &j0, &k, &total, &m)) return -1;
    if (!layout_fits(l, a, j0, total)) {
        log_warn("store: list page record at LSN %llu does not fit its chunks; ignored",
                 (unsigned long long)a->lsn);
        return -1;
    }
    l->ctx = ctx;
    /* The old run's elements: those the pages took go (their extents and
     * pages uncounted), the pinned ones are kept aside in order. */
    idx_entry_t **pins = st_xmalloc(((size_t)l->cc.npin + 1) * sizeof(*pins));
    uint32_t npins = 0;
    for (uint32_t t = 0; t < k; t++) {
        st_lchunk_t *ch = st_lch(l, j0 + t);
        st_lch_count(l, ch, -1);
        if (ch->lsn) {
            st_live_add(&ctx->live, ch->lsn, ch->len, -1);
            st_lch_head_drop(l, ch);
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
    st_lchunk_t *nc = st_list_chunks_replace(l, j0, k, m);
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
            ch->n = ch->pn = n;
            st_live_add(&ctx->live, ch->lsn, ch->len, 1);
            if (l->keyed) { /* the page's first element, from the record */
                const unsigned char *p;
                uint32_t pn;
                size_t off = ST_PGIMG_HDR;
                st_lpimg_next(a->argv[img].ptr, a->argv[img].len, &off, &p, &pn);
                st_lch_head_set(l, ch, p, pn);
            }
            img++;
        }
        st_lch_stamp(ctx, ch);
        st_lch_count(l, ch, 1);
    }
    free(pins);
    return 0;
}

/* ---- building records (store/pager.c) ------------------------------------- */

/* A keyed list's clean chunk worth merging with its neighbours: under
 * half its page's elements, or a page under half a page's bytes (a run's
 * last). core/chunked.c asks it of clean chunks between the ends. */
static int mergeable(const void *owner, const st_cchunk_t *c, const st_pgpolicy_t *pol)
{
    const st_list_t *l = owner;
    const st_lchunk_t *ch = (const st_lchunk_t *)c; /* c is its first member */
    return l->keyed && ch->lsn && ch->pn && (st_lch_sparse(l, ch) || 2 * ch->len < pol->page_bytes);
}

st_chunks_t st_list_chunks(const st_list_t *l)
{
    return (st_chunks_t){(char *)(l->c + l->c0), sizeof(*l->c), l->nc, l->keyed ? mergeable : NULL,
                         l};
}

int st_list_page_wanted(st_list_t *l, const st_pgpolicy_t *pol)
{
    st_chunks_t v = st_list_chunks(l);
    if (pol->entries && l->nsparse >= ST_CHUNKED_WANT_CHUNKS) return ST_PAGE_WANT_BUILD;
    return st_chunked_wanted(&v, &l->cc, l->n, pol);
}

int st_list_page_behind(const st_list_t *l)
{
    st_chunks_t v = st_list_chunks(l);
    return st_chunked_behind(&v, &l->cc, ST_LIST_BEHIND_CHUNKS);
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
    st_chunks_t v = st_list_chunks(l);
    uint32_t j;
    int rc = st_chunked_pick(&v, &l->cc, pol, &j);
    if (rc != ST_PAGE_BUILT) return rc;
    /* A run of wanted chunks from j, up to the record's bytes and pages
     * (a chunk adds at most ST_LCHUNK_BYTES of elements: its pages and a
     * pinned run each side of them). */
    st_cpack_t pk;
    st_cpack_start(&pk, out, pol->page_bytes, begin_page, NULL);
    do {
        st_pgstamp_put(&out->stamps, st_lch(l, j)->stamp);
        pack_chunk(ctx, l, j, &pk);
        st_chunked_took(&v, &l->cc, j++);
    } while (st_chunked_more(&v, j, pol, st_cpack_bytes(&pk), out->nimg, ST_LCHUNK_BYTES * 2,
                             ST_LCHUNK_ELEMS));
    st_cpack_end(&pk);
    return ST_PAGE_BUILT;
}

void st_list_page_unbusy(st_list_t *l)
{
    st_chunks_t v = st_list_chunks(l);
    st_chunked_unbusy(&v, &l->cc);
}

void st_list_page_stats(const st_list_t *l, long long out[7])
{
    st_chunks_t v = st_list_chunks(l);
    st_chunked_stats(&v, &l->cc, l->n, out);
}

/* ---- a full check, for tests ---------------------------------------------- */

const char *st_list_check(st_list_t *l)
{
    static char why[160];
    uint64_t n = 0, bytes = sizeof(*l) + (uint64_t)l->ccap * sizeof(*l->c);
    uint32_t nsparse = 0;
    st_chunks_t v = st_list_chunks(l);
    const char *bad = st_ccounts_check(&v, &l->cc);
    if (bad) return bad;
    for (uint32_t j = 0; j < l->nc; j++) {
        st_lchunk_t *ch = st_lch(l, j);
        n += ch->n;
        nsparse += st_lch_sparse(l, ch);
        if (ch->lsn) {
            const unsigned char *img = st_page_read(l->ctx, ch->lsn, ch->len);
            long c = st_lpimg_check(img, ch->len, ST_LIST_PAGE_ELEM_MAX);
            if (c < 0 || (uint64_t)ch->first + ch->n > (uint64_t)c) {
                snprintf(why, sizeof(why), "chunk %u: a window [%u, +%u) of a page of %ld", j,
                         ch->first, ch->n, c);
                return why;
            }
            if (!l->keyed != !ch->head) return "a clean chunk's head where none belongs, or none";
            if (l->keyed && ch->pn != (uint32_t)c)
                return "a clean chunk's page count is not its page's";
            if (ch->head) {
                const unsigned char *p;
                uint32_t pn;
                size_t off = ST_PGIMG_HDR;
                for (uint32_t t = 0; t <= ch->first; t++)
                    st_lpimg_next(img, ch->len, &off, &p, &pn);
                unsigned char hb[ST_LIST_PAGE_ELEM_MAX];
                if (st_ent_vlen(ch->head) != pn || st_read_value(l->ctx, ch->head, hb) ||
                    memcmp(hb, p, pn) != 0)
                    return "a clean chunk's head is not its first element";
                bytes += st_list_elem_bytes(ch->head);
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
    }
    if (n != l->n) return "the element count is not the chunks' sum";
    if (nsparse != l->nsparse) return "the list's chunk counts drifted";
    if (bytes != l->bytes) {
        snprintf(why, sizeof(why), "RAM bytes %llu, counted %llu", (unsigned long long)bytes,
                 (unsigned long long)l->bytes);
        return why;
    }
    if (l->ctx) st_hash_mat_reset(l->ctx);
    return NULL;
}
