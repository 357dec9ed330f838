/*
 * chunked.c - what lists (D63) and streams (D64) share as chunked
 * collections (chunked.h): chunk stamps, the counts the pager reads, its
 * choice of the next record's run, the run a record names, and the
 * record being built with its packer. Functions over a collection's chunk
 * array seen through st_chunks_t; the elements are each type's own.
 *
 * Store process only (and tests and tools); single-threaded; holds no
 * state of its own. What it decides for an apply (st_chunked_run) depends
 * on the chunks' stamps and the record's bytes only (contract 4); what it
 * decides for the pager (which run, how many chunks) is free, since the
 * choice is in the record.
 */
#include "chunked.h"

#include <string.h>

#include "command.h"
#include "page.h"

/* ---- stamps ----------------------------------------------------------------- */
void st_pgstamp_take(store_ctx_t *ctx, st_pgstamp_t *s)
{
    if (!ctx) {
        *s = (st_pgstamp_t){0, 0};
        return;
    }
    if (s->lsn == ctx->applied) return; /* this record's stamp already */
    s->lsn = ctx->applied;
    s->seq = st_page_seq(ctx);
}

st_pgstamp_t st_pgstamp_get(const unsigned char *p)
{
    return (st_pgstamp_t){(uint64_t)cmd_get_i64(p), cmd_get_u32(p + 8)};
}

void st_pgstamp_put(buf_t *b, st_pgstamp_t s)
{
    unsigned char p[ST_PGSTAMP_BYTES];
    cmd_put_i64(p, (int64_t)s.lsn);
    cmd_put_u32(p + 8, s.seq);
    buf_append(b, p, sizeof(p));
}

/* ---- chunks and counts ---------------------------------------------------- */

void st_ccounts_add(st_ccounts_t *cc, const st_cchunk_t *ch, int sign)
{
    cc->nwram += (uint32_t)(sign * st_cch_wants(ch));
    if (st_cch_wants(ch)) cc->wbytes += (uint64_t)(int64_t)sign * ch->vbytes;
    cc->npages += (uint32_t)(sign * (ch->lsn != 0));
    if (sign > 0 && ch->lsn && cc->low > ch->lsn) cc->low = ch->lsn;
    cc->npin += (uint32_t)(sign * (int)ch->npin);
    cc->nbusy += (uint32_t)(sign * (ch->busy != 0));
}

const char *st_ccounts_check(const st_chunks_t *v, const st_ccounts_t *cc)
{
    st_ccounts_t sum = {0};
    for (uint32_t j = 0; j < v->nc; j++) {
        const st_cchunk_t *ch = st_chunks_at(v, j);
        if (!ch->n) return "an empty chunk";
        st_ccounts_add(&sum, ch, 1);
        for (uint32_t t = 0; t < j; t++)
            if (st_chunks_at(v, t)->stamp.lsn &&
                st_pgstamp_eq(st_chunks_at(v, t)->stamp, ch->stamp))
                return "two chunks share a stamp";
    }
    if (sum.nwram != cc->nwram || sum.npages != cc->npages || sum.npin != cc->npin ||
        sum.nbusy != cc->nbusy || sum.wbytes != cc->wbytes)
        return "the chunk counts drifted";
    return NULL;
}

/* ---- the pager's choice ------------------------------------------------------ */

/* Whether chunk j wants a record: a RAM chunk with pageable elements that
 * is neither the first nor the last (writes go there: pushes at a list's
 * ends, a stream's appends and trims), a page below pol->below, or a
 * mergeable page between them. */
static int chunk_wanted(const st_chunks_t *v, uint32_t j, const st_pgpolicy_t *pol)
{
    const st_cchunk_t *ch = st_chunks_at(v, j);
    int below = ch->lsn && pol->below && ch->lsn < pol->below;
    if (j == 0 || j + 1 == v->nc || !ch->stamp.lsn) return below;
    if (ch->lsn) return below || (v->mergeable && v->mergeable(v->owner, ch, pol));
    return st_cch_wants(ch);
}

/* Whether chunk j may start a record: wanted, and not a mergeable page
 * with no wanted neighbour (rewritten alone it would stay as it is). */
static int run_seed(const st_chunks_t *v, uint32_t j, const st_pgpolicy_t *pol)
{
    if (!chunk_wanted(v, j, pol)) return 0;
    const st_cchunk_t *ch = st_chunks_at(v, j);
    if (!ch->lsn || (pol->below && ch->lsn < pol->below)) return 1;
    return (j > 0 && chunk_wanted(v, j - 1, pol) && !st_chunks_at(v, j - 1)->busy) ||
           (j + 1 < v->nc && chunk_wanted(v, j + 1, pol) && !st_chunks_at(v, j + 1)->busy);
}

/* RAM chunks between the first and the last with pageable elements, and
 * their bytes. */
static uint32_t ram_wanted(const st_chunks_t *v, const st_ccounts_t *cc, uint64_t *bytes)
{
    uint32_t w = cc->nwram;
    *bytes = cc->wbytes;
    for (uint32_t e = 0; e < 2 && e < v->nc; e++) {
        const st_cchunk_t *ch = st_chunks_at(v, e ? v->nc - 1 : 0);
        if (!st_cch_wants(ch)) continue;
        w--;
        *bytes -= ch->vbytes;
    }
    return w;
}

int st_chunked_wanted(const st_chunks_t *v, st_ccounts_t *cc, uint64_t elements,
                      const st_pgpolicy_t *pol)
{
    uint64_t bytes;
    uint32_t w = ram_wanted(v, cc, &bytes);
    if (pol->entries && elements >= pol->entries && w &&
        (bytes >= pol->page_bytes || w >= ST_CHUNKED_WANT_CHUNKS))
        return ST_PAGE_WANT_BUILD;
    if (pol->below && cc->npages && (!cc->low || cc->low < pol->below)) {
        uint64_t low = UINT64_MAX;
        for (uint32_t j = 0; j < v->nc; j++) {
            uint64_t lsn = st_chunks_at(v, j)->lsn;
            if (lsn && lsn < pol->below) return ST_PAGE_WANT_BUILD;
            if (lsn && lsn < low) low = lsn;
        }
        cc->low = low; /* every page is at or above the line */
    }
    return 0;
}

int st_chunked_behind(const st_chunks_t *v, const st_ccounts_t *cc, uint32_t max)
{
    uint64_t bytes;
    return ram_wanted(v, cc, &bytes) > max;
}

int st_chunked_pick(const st_chunks_t *v, st_ccounts_t *cc, const st_pgpolicy_t *pol, uint32_t *j0)
{
    if (!v->nc) return ST_PAGE_NONE;
    uint32_t found = v->nc, looked = 0, seen = 0, want = UINT32_MAX;
    int inflight = 0;
    if (!pol->below && !v->mergeable) {
        /* Only RAM chunks can want a record: when as many have one in
         * flight, none is left (a busy chunk that became an end makes
         * this wait for the records to settle: the pager's choice only). */
        uint64_t bytes;
        want = ram_wanted(v, cc, &bytes);
        if (!want) return ST_PAGE_NONE;
        if (cc->nbusy >= want) return ST_PAGE_INFLIGHT;
    }
    /* Writes at an end leave their full chunks next to it (a list's
     * pushes, a stream's appends): looked at first, so that a collection
     * of many pages is not scanned for them every turn. */
    for (uint32_t e = 0; e < 2 && found == v->nc; e++) {
        uint32_t t = e ? 1 : v->nc - 2;
        if (v->nc > 2 && run_seed(v, t, pol) && !st_chunks_at(v, t)->busy) found = t;
    }
    if (cc->scan_at >= v->nc) cc->scan_at = 0;
    for (uint32_t t = cc->scan_at; found == v->nc && looked < v->nc && seen < want;
         t = (t + 1) % v->nc) {
        if (looked++ == ST_PAGE_SCAN) {
            cc->scan_at = t;
            return ST_PAGE_MORE;
        }
        if (!run_seed(v, t, pol)) continue;
        seen++;
        if (st_chunks_at(v, t)->busy)
            inflight = 1;
        else
            found = t;
    }
    if (found == v->nc) return inflight ? ST_PAGE_INFLIGHT : ST_PAGE_NONE;
    /* From the start of its run of wanted chunks: fuller pages. */
    while (found > 0 && chunk_wanted(v, found - 1, pol) && !st_chunks_at(v, found - 1)->busy)
        found--;
    *j0 = found;
    return ST_PAGE_BUILT;
}

void st_chunked_took(const st_chunks_t *v, st_ccounts_t *cc, uint32_t j)
{
    st_cchunk_t *ch = st_chunks_at(v, j);
    st_ccounts_add(cc, ch, -1);
    ch->busy = 1;
    st_ccounts_add(cc, ch, 1);
    cc->scan_at = j + 1;
}

void st_chunked_unbusy(const st_chunks_t *v, st_ccounts_t *cc)
{
    if (!cc->nbusy) return;
    for (uint32_t j = 0; j < v->nc; j++)
        st_chunks_at(v, j)->busy = 0;
    cc->nbusy = 0;
}

int st_chunked_more(const st_chunks_t *v, uint32_t j, const st_pgpolicy_t *pol, uint64_t bytes,
                    uint32_t nimg, uint32_t chunk_bytes, uint32_t chunk_pages)
{
    return j < v->nc && chunk_wanted(v, j, pol) && !st_chunks_at(v, j)->busy &&
           bytes + chunk_bytes < pol->record_bytes && nimg + 1 + chunk_pages < ST_CPAGE_MAX_IMAGES;
}

/* The chunk whose stamp is s (stamps are unique in a collection, so the
 * order looked in decides nothing), or nc: at hint first, then from both
 * ends inwards (records mostly name chunks near an end). */
static uint32_t find_stamp(const st_chunks_t *v, st_pgstamp_t s, uint32_t hint)
{
    if (hint < v->nc && st_pgstamp_eq(st_chunks_at(v, hint)->stamp, s)) return hint;
    for (uint32_t a = 0, b = v->nc; a < b; a++) {
        if (st_pgstamp_eq(st_chunks_at(v, a)->stamp, s)) return a;
        if (st_pgstamp_eq(st_chunks_at(v, --b)->stamp, s)) return b;
    }
    return v->nc;
}

int st_chunked_run(const st_chunks_t *v, const rec_arg_t *stamps, const rec_arg_t *layout,
                   uint32_t hint, uint32_t *j0, uint32_t *k, uint64_t *total, uint32_t *m)
{
    *k = stamps->len / ST_PGSTAMP_BYTES;
    *m = layout->len / 4;
    if (!*k || stamps->len % ST_PGSTAMP_BYTES || !*m || layout->len % 4) return -1;
    st_pgstamp_t s0 = st_pgstamp_get(stamps->ptr);
    if (!s0.lsn) return -1;
    *j0 = find_stamp(v, s0, hint);
    if (*j0 + *k > v->nc) return -1;
    *total = 0;
    for (uint32_t t = 0; t < *k; t++) {
        const st_cchunk_t *ch = st_chunks_at(v, *j0 + t);
        if (!st_pgstamp_eq(ch->stamp, st_pgstamp_get(stamps->ptr + ST_PGSTAMP_BYTES * t)))
            return -1;
        *total += ch->n;
    }
    return 0;
}

void st_chunked_stats(const st_chunks_t *v, const st_ccounts_t *cc, uint64_t elements,
                      long long out[7])
{
    long long bytes = 0, ram = 0;
    for (uint32_t j = 0; j < v->nc; j++) {
        const st_cchunk_t *ch = st_chunks_at(v, j);
        if (ch->lsn)
            bytes += ch->len;
        else
            ram += ch->n;
    }
    long long x[7] = {cc->npages > 0, v->nc, cc->npages, bytes, ram, cc->npin, (long long)elements};
    memcpy(out, x, sizeof(x));
}

/* ---- the record being built ------------------------------------------------- */

void st_cpbuilt_init(st_cpbuilt_t *b)
{
    memset(b, 0, sizeof(*b));
    buf_init(&b->stamps);
    buf_init(&b->layout);
    for (uint32_t i = 0; i < ST_CPAGE_MAX_IMAGES; i++)
        buf_init(&b->img[i]);
}

void st_cpbuilt_free(st_cpbuilt_t *b)
{
    buf_free(&b->stamps);
    buf_free(&b->layout);
    for (uint32_t i = 0; i < ST_CPAGE_MAX_IMAGES; i++)
        buf_free(&b->img[i]);
}

static void put_layout(st_cpack_t *pk, uint32_t v)
{
    unsigned char b[4];
    cmd_put_u32(b, v);
    buf_append(&pk->out->layout, b, 4);
}

static void end_page(st_cpack_t *pk)
{
    if (!pk->cur) return;
    st_pgimg_finish(pk->cur, pk->ncur);
    put_layout(pk, pk->ncur);
    pk->bytes += pk->cur->len + 16; /* with its argument's header in the record */
    pk->out->nimg++;
    pk->cur = NULL;
}

static void end_pin(st_cpack_t *pk)
{
    if (pk->pin) put_layout(pk, ST_CPAGE_PIN | pk->pin);
    pk->pin = 0;
}

void st_cpack_start(st_cpack_t *pk, st_cpbuilt_t *out, uint32_t page_bytes,
                    void (*begin)(buf_t *img, void *arg), void *arg)
{
    *pk = (st_cpack_t){.out = out, .page_bytes = page_bytes, .begin = begin, .arg = arg};
    buf_reset(&out->stamps);
    buf_reset(&out->layout);
    out->nimg = 0;
}

buf_t *st_cpack_room(st_cpack_t *pk, uint32_t n)
{
    end_pin(pk);
    if (pk->cur && pk->ncur && pk->cur->len + n > pk->page_bytes) end_page(pk);
    if (!pk->cur) {
        pk->cur = &pk->out->img[pk->out->nimg];
        buf_reset(pk->cur);
        pk->begin(pk->cur, pk->arg);
        pk->ncur = 0;
    }
    pk->ncur++;
    return pk->cur;
}

void st_cpack_pin(st_cpack_t *pk)
{
    end_page(pk);
    pk->pin++;
}

void st_cpack_end(st_cpack_t *pk)
{
    end_page(pk);
    end_pin(pk);
}

uint64_t st_cpack_bytes(const st_cpack_t *pk)
{
    return pk->bytes + (pk->cur ? pk->cur->len : 0);
}
