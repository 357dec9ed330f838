/*
 * stream_page.c - a stream's pages (D64): the page image (core/page.h's
 * "PSv1" format) written (core/stream_view.c reads it), CMD_SPAGE's change as
 * types/t_page.c applies it, the records the store's pager
 * (store/pager.c) builds, and the checks tests run. The stream's
 * structure is core/stream.c's (its banner has the design).
 *
 * Store process only (and tests and tools); single-threaded. Everything an
 * apply does is decided by the state the log built and the record's bytes
 * (contract 4): the record names the chunks it replaces by their stamps,
 * and equal stamps mean equal contents, so the pages it carries hold what
 * those chunks hold, or it is a no-op. What the builder chooses (which
 * chunks, how many entries a page) is free, since its choice is in the
 * record.
 *
 * CMD_SPAGE key stamps layout page..., as CMD_LPAGE (core/list_page.c):
 *   stamps  the replaced run of consecutive chunks, first first (core/
 *           chunked.h's st_pgstamp_t each);
 *   layout  the new chunks in order, u32 each: a page's entry count (the
 *           next page argument), or ST_CPAGE_PIN | n: a run of n entries
 *           too long for a page, kept in RAM as a chunk of their own;
 *   pages   stream pages.
 * Entry counts must add up to the run's, each page must hold entries a
 * page may take (the first being the run's entry at that place) and each
 * pinned run entries it may not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "command.h"
#include "chunked.h"
#include "hash.h"
#include "live.h"
#include "log.h"
#include "page.h"
#include "stream-internal.h"
#include "value.h"

/* ---- the image ------------------------------------------------------------ */

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static void put_varint(buf_t *b, uint64_t v)
{
    unsigned char p[10];
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    buf_append(b, p, n);
}

/* What the writer of one page remembers: the previous entry's ID and
 * field names (u32 length + bytes each), for the deltas. */
typedef struct spenc {
    int have;
    st_sid_t prev;
    uint32_t npairs;
    buf_t fields;
} spenc_t;

static void enc_begin(buf_t *img, void *arg)
{
    spenc_t *enc = arg;
    unsigned char hdr[ST_PGIMG_HDR];
    cmd_put_u32(hdr, ST_SPIMG_MAGIC);
    cmd_put_u32(hdr + 4, 0);
    cmd_put_i64(hdr + 8, 0);
    buf_append(img, hdr, sizeof(hdr));
    enc->have = 0;
}

/* Whether e's field names are the previous entry's. Items are walked in
 * order (u32 length + bytes each: st_sentry_t's data). */
static int same_fields(const spenc_t *enc, const st_sentry_t *e)
{
    if (!enc->have || enc->npairs != e->npairs) return 0;
    const unsigned char *f = (const unsigned char *)enc->fields.data, *q = e->data;
    for (uint32_t k = 0; k < e->npairs; k++) {
        uint32_t n = cmd_get_u32(q);
        if (cmd_get_u32(f) != n || memcmp(f + 4, q + 4, n) != 0) return 0;
        f += 4 + n;
        q += 4 + n;
        q += 4 + cmd_get_u32(q); /* its value */
    }
    return 1;
}

static void id_delta(const spenc_t *enc, st_sid_t id, uint64_t *dms, uint64_t *dseq)
{
    *dms = enc->have ? id.ms - enc->prev.ms : id.ms;
    *dseq = enc->have && !*dms ? id.seq - enc->prev.seq - 1 : id.seq;
}

/* Bytes e takes in the page being written. */
static uint32_t enc_size(const spenc_t *enc, const st_sentry_t *e)
{
    int same = same_fields(enc, e);
    uint64_t dms, dseq;
    id_delta(enc, e->id, &dms, &dseq);
    size_t n = varint_len(dms) + varint_len(dseq) + varint_len((uint64_t)e->npairs << 1 | 1);
    const unsigned char *q = e->data;
    for (uint32_t k = 0; k < 2 * e->npairs; k++) {
        uint32_t len = cmd_get_u32(q);
        if (!same || k % 2) n += varint_len(len) + len;
        q += 4 + len;
    }
    return (uint32_t)n;
}

static void enc_put(spenc_t *enc, buf_t *img, const st_sentry_t *e)
{
    int same = same_fields(enc, e);
    uint64_t dms, dseq;
    id_delta(enc, e->id, &dms, &dseq);
    put_varint(img, dms);
    put_varint(img, dseq);
    put_varint(img, (uint64_t)e->npairs << 1 | (uint64_t)same);
    if (!same) buf_reset(&enc->fields);
    const unsigned char *q = e->data;
    for (uint32_t k = 0; k < 2 * e->npairs; k++) {
        uint32_t len = cmd_get_u32(q);
        const unsigned char *p = q + 4;
        q += 4 + len;
        if (same && k % 2 == 0) continue;
        put_varint(img, len);
        buf_append(img, p, len);
        if (!same && k % 2 == 0) buf_append(&enc->fields, p - 4, 4 + (size_t)len);
    }
    enc->have = 1;
    enc->prev = e->id;
    enc->npairs = e->npairs;
}

/* ---- CMD_SPAGE's change ------------------------------------------------------ */

/* A cursor over the entries of chunks [j, ...): the entry at it in RAM
 * (NULL: in a page) and, at a chunk's start, its ID; then moved on. */
typedef struct cur {
    const st_stream_t *s;
    uint32_t j, k;
} cur_t;

static const st_sentry_t *cur_next(cur_t *c, const st_sid_t **fid)
{
    const st_schunk_t *ch = st_sch(c->s, c->j);
    const st_sentry_t *e = ch->lsn ? NULL : ch->v[c->k];
    *fid = c->k == 0 ? &ch->fid : e ? &e->id : NULL;
    if (++c->k == ch->n) {
        c->j++;
        c->k = 0;
    }
    return e;
}

/* Whether the layout fits the run from chunk j0 of total entries and the
 * pages in the record; the new chunks' first IDs into fids[]. */
static int layout_fits(const st_stream_t *s, const apply_args_t *a, uint32_t j0, uint64_t total,
                       st_sid_t *fids)
{
    const rec_arg_t *lay = &a->argv[2];
    uint32_t m = lay->len / 4, img = 3;
    uint64_t seen = 0;
    cur_t c = {s, j0, 0};
    for (uint32_t t = 0; t < m; t++) {
        uint32_t v = cmd_get_u32(lay->ptr + 4 * t), n = v & ~ST_CPAGE_PIN;
        int pin = (v & ST_CPAGE_PIN) != 0;
        st_sid_t first = {0, 0};
        if (!n || seen + n > total) return 0;
        if (!pin) {
            if (img >= a->argc) return 0;
            const rec_arg_t *im = &a->argv[img++];
            if (st_spimg_check(im->ptr, im->len, ST_STREAM_PAGE_ENTRY_MAX, &first) != (long)n)
                return 0;
        }
        for (uint32_t q = 0; q < n; q++) {
            const st_sid_t *id;
            const st_sentry_t *e = cur_next(&c, &id);
            int pageable = !e || st_sentry_pageable(e->size);
            if (pin == pageable) return 0;
            if (q == 0 && pin) first = e->id;
            if (q == 0 && id && st_sid_cmp(*id, first) != 0) return 0; /* not its entries */
        }
        fids[t] = first;
        seen += n;
    }
    return seen == total && img == a->argc;
}

/* Where the record's run should start: the chunk whose first ID is its
 * first page's first ID (a guess: st_chunked_run checks the stamps). */
static uint32_t run_hint(st_stream_t *s, const apply_args_t *a)
{
    st_sid_t first;
    if (a->argc < 4 || a->argv[2].len < 4 || cmd_get_u32(a->argv[2].ptr) & ST_CPAGE_PIN)
        return UINT32_MAX;
    if (st_spimg_first(a->argv[3].ptr, a->argv[3].len, &first)) return UINT32_MAX;
    uint32_t j = st_stream_chunk_of(s, first);
    return j < s->nc && st_sid_cmp(st_sch(s, j)->fid, first) == 0 ? j : UINT32_MAX;
}

int st_stream_page_apply(store_ctx_t *ctx, st_stream_t *s, const apply_args_t *a)
{
    const rec_arg_t *lay = &a->argv[2];
    st_chunks_t chunks = st_stream_chunks(s);
    uint32_t j0, k, m;
    uint64_t total;
    if (st_chunked_run(&chunks, &a->argv[1], lay, run_hint(s, a), &j0, &k, &total, &m)) return -1;
    st_sid_t *fids = st_xmalloc((size_t)m * sizeof(*fids));
    if (!layout_fits(s, a, j0, total, fids)) {
        free(fids);
        log_warn("store: stream page record at LSN %llu does not fit its chunks; ignored",
                 (unsigned long long)a->lsn);
        return -1;
    }
    s->ctx = ctx;
    /* The old run's entries: those the pages took go (their pages
     * uncounted), the pinned ones are kept aside in order. */
    st_sentry_t **pins = st_xmalloc(((size_t)s->cc.npin + 1) * sizeof(*pins));
    uint32_t npins = 0;
    for (uint32_t t = 0; t < k; t++) {
        st_schunk_t *ch = st_sch(s, j0 + t);
        st_sch_count(s, ch, -1);
        if (ch->lsn) {
            st_live_add(&ctx->live, ch->lsn, ch->len, -1);
            continue;
        }
        for (uint32_t q = 0; q < ch->n; q++) {
            st_sentry_t *e = ch->v[q];
            s->bytes -= st_sentry_bytes(e);
            if (!st_sentry_pageable(e->size))
                pins[npins++] = e;
            else
                free(e);
        }
        st_sch_free_ram(s, ch);
    }
    st_stream_chunks_close(s, j0, k);
    st_schunk_t *nc = st_stream_chunks_open(s, j0, m);
    uint32_t img = 3, at = 0;
    for (uint32_t t = 0; t < m; t++) {
        uint32_t v = cmd_get_u32(lay->ptr + 4 * t), n = v & ~ST_CPAGE_PIN;
        st_schunk_t *ch = &nc[t];
        if (v & ST_CPAGE_PIN) {
            for (uint32_t q = 0; q < n; q++)
                st_sch_append(s, ch, pins[at++]);
        } else {
            ch->lsn = st_arg_lsn(a, img);
            ch->len = a->argv[img].len;
            ch->n = n;
            ch->fid = fids[t];
            st_live_add(&ctx->live, ch->lsn, ch->len, 1);
            img++;
        }
        st_pgstamp_take(ctx, &ch->stamp);
        st_sch_count(s, ch, 1);
    }
    free(pins);
    free(fids);
    return 0;
}

/* ---- building records (store/pager.c) ------------------------------------------ */

int st_stream_page_wanted(st_stream_t *s, const st_pgpolicy_t *pol)
{
    st_chunks_t v = st_stream_chunks(s);
    return st_chunked_wanted(&v, &s->cc, s->n, pol);
}

int st_stream_page_behind(const st_stream_t *s)
{
    st_chunks_t v = st_stream_chunks(s);
    return st_chunked_behind(&v, &s->cc, ST_STREAM_BEHIND_CHUNKS);
}

/* Chunk j's entries into the packer. */
static void pack_chunk(st_stream_t *s, uint32_t j, st_cpack_t *pk, spenc_t *enc)
{
    st_stream_iter_t it;
    const st_sentry_t *e;
    st_stream_iter_init(&it, s, 0, 0, 0);
    it.j = j; /* the chunk's entries, from its first */
    it.left = st_sch(s, j)->n;
    while ((e = st_stream_next(&it))) {
        if (!st_sentry_pageable(e->size)) {
            st_cpack_pin(pk);
            continue;
        }
        enc_put(enc, st_cpack_room(pk, enc_size(enc, e)), e);
    }
    st_stream_iter_free(&it);
}

/* The largest a chunk's entries grow in a page: ST_SCHUNK_BYTES, and the
 * entry past them that filled the chunk. */
#define CHUNK_PAGE_MAX (ST_SCHUNK_BYTES + ST_STREAM_PAGE_ENTRY_MAX + 64)

int st_stream_page_build(store_ctx_t *ctx, st_stream_t *s, const st_pgpolicy_t *pol,
                         st_cpbuilt_t *out)
{
    s->ctx = ctx;
    st_chunks_t v = st_stream_chunks(s);
    uint32_t j;
    int rc = st_chunked_pick(&v, &s->cc, pol, &j);
    if (rc != ST_PAGE_BUILT) return rc;
    spenc_t enc = {0};
    buf_init(&enc.fields);
    st_cpack_t pk;
    st_cpack_start(&pk, out, pol->page_bytes, enc_begin, &enc);
    do {
        st_pgstamp_put(&out->stamps, st_sch(s, j)->stamp);
        pack_chunk(s, j, &pk, &enc);
        st_chunked_took(&v, &s->cc, j++);
    } while (st_chunked_more(&v, j, pol, st_cpack_bytes(&pk), out->nimg, CHUNK_PAGE_MAX,
                             ST_SCHUNK_ENTRIES));
    st_cpack_end(&pk);
    buf_free(&enc.fields);
    return ST_PAGE_BUILT;
}

void st_stream_page_unbusy(st_stream_t *s)
{
    st_chunks_t v = st_stream_chunks(s);
    st_chunked_unbusy(&v, &s->cc);
}

void st_stream_page_stats(const st_stream_t *s, long long out[7])
{
    st_chunks_t v = st_stream_chunks(s);
    st_chunked_stats(&v, &s->cc, s->n, out);
}

/* ---- a full check, for tests ------------------------------------------------------ */

const char *st_stream_check(st_stream_t *s)
{
    static char why[200];
    uint64_t n = 0, bytes = sizeof(*s) + (uint64_t)s->ccap * sizeof(*s->c);
    st_chunks_t chunks = st_stream_chunks(s);
    const char *bad = st_ccounts_check(&chunks, &s->cc);
    if (bad) return bad;
    st_sid_t last = {0, 0};
    for (uint32_t j = 0; j < s->nc; j++) {
        st_schunk_t *ch = st_sch(s, j);
        if ((j || n) && st_sid_cmp(last, ch->fid) >= 0) return "chunks out of ID order";
        if (ch->lsn) {
            st_spview_t *v = st_stream_view(s, ch);
            if ((uint64_t)ch->first + ch->n > v->count) {
                snprintf(why, sizeof(why), "chunk %u: a window [%u, +%u) of a page of %u", j,
                         ch->first, ch->n, v->count);
                return why;
            }
            if (st_sid_cmp(v->ids[ch->first], ch->fid) != 0) return "a page chunk's first ID";
            for (uint32_t k = 0; k < ch->n; k++) {
                st_sentry_t *e = st_xmalloc(st_spview_entry_size(v, ch->first + k));
                st_spview_entry(v, ch->first + k, e);
                if (st_sid_cmp(e->id, v->ids[ch->first + k]) || !st_sentry_pageable(e->size)) {
                    free(e);
                    return "a page entry";
                }
                free(e);
            }
            last = v->ids[ch->first + ch->n - 1];
        } else {
            uint32_t pin = 0, vb = 0;
            bytes += (uint64_t)ch->cap * sizeof(*ch->v);
            if (st_sid_cmp(ch->v[0]->id, ch->fid) != 0) return "a RAM chunk's first ID";
            for (uint32_t k = 0; k < ch->n; k++) {
                const st_sentry_t *e = ch->v[k];
                if (k && st_sid_cmp(ch->v[k - 1]->id, e->id) >= 0)
                    return "RAM entries out of order";
                pin += !st_sentry_pageable(e->size);
                uint64_t w = st_sentry_bytes(e);
                vb += w > ST_SCHUNK_BYTES ? ST_SCHUNK_BYTES : (uint32_t)w;
                bytes += st_sentry_bytes(e);
            }
            if (pin != ch->npin || vb != ch->vbytes) return "a RAM chunk's counts drifted";
            last = ch->v[ch->n - 1]->id;
        }
        n += ch->n;
    }
    if (n != s->n) return "the entry count is not the chunks' sum";
    if (s->n && st_sid_cmp(last, s->meta.last_id) > 0) return "an entry above the last ID";
    if (bytes != s->bytes) {
        snprintf(why, sizeof(why), "RAM bytes %llu, counted %llu", (unsigned long long)bytes,
                 (unsigned long long)s->bytes);
        return why;
    }
    /* Positions: what the lazy ones say against a count from the start. */
    uint64_t at = 0;
    for (uint32_t j = 0; j < s->nc; j++) {
        const st_schunk_t *ch = st_sch(s, j);
        uint32_t mid = ch->n / 2;
        st_sid_t want = ch->lsn ? st_stream_view(s, ch)->ids[ch->first + mid] : ch->v[mid]->id;
        if (st_sid_cmp(st_stream_id_at(s, at + mid), want) != 0) return "positions";
        if (st_stream_lower(s, st_sch(s, j)->fid) != at) {
            snprintf(why, sizeof(why), "chunk %u starts at %llu, lower says %llu", j,
                     (unsigned long long)at,
                     (unsigned long long)st_stream_lower(s, st_sch(s, j)->fid));
            return why;
        }
        if (st_sid_cmp(st_stream_id_at(s, at), st_sch(s, j)->fid) != 0)
            return "id_at a chunk start";
        at += st_sch(s, j)->n;
    }
    return NULL;
}
