/*
 * page.c - the page image (page.h): a sorted run of a paged collection's
 * members as a CMD_PAGE record carries it and the log keeps it (D60), and
 * a list's run of elements as a CMD_LPAGE record does (D63). Functions
 * over bytes, and the read of a page back from the log (through the
 * context's one-page cache). Used by core/hash_paged.c,
 * core/hash_pgrec.c, core/list.c, core/list_page.c and the stream's
 * (D64).
 *
 * Store process only.
 */
#include "page.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "command.h"
#include "entry.h"
#include "log.h"
#include "value.h"

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)cmd_get_i64(p);
}

int st_pgimg_key_cmp(uint64_t ha, const void *a, uint32_t na, uint64_t hb, const void *b,
                     uint32_t nb)
{
    if (ha != hb) return ha < hb ? -1 : 1;
    int c = memcmp(a, b, na < nb ? na : nb);
    return c ? c : (na > nb) - (na < nb);
}

/* The entry at *off of image p[0, len): 1 (and *off moved), 0 at the end,
 * -1 when malformed. */
int st_pgimg_next(const unsigned char *p, size_t len, size_t *off, st_pgent_t *e)
{
    if (*off == len) return 0;
    if (len - *off < ST_PGIMG_ENT_HDR) return -1;
    const unsigned char *q = p + *off;
    e->h = get_u64(q);
    e->nlen = (uint32_t)q[8] | (uint32_t)q[9] << 8;
    e->vlen = (uint32_t)q[10] | (uint32_t)q[11] << 8;
    if (len - *off - ST_PGIMG_ENT_HDR < (size_t)e->nlen + e->vlen) return -1;
    e->name = q + ST_PGIMG_ENT_HDR;
    e->val = e->name + e->nlen;
    *off += ST_PGIMG_ENT_HDR + e->nlen + e->vlen;
    return 1;
}

uint32_t st_pgimg_count(const unsigned char *p)
{
    return cmd_get_u32(p + 4);
}

/* A whole image checked: magic, entries that fill it exactly, sorted by
 * (h, name) without repeats, every h in [lo, end) (has_end 0: no end),
 * the count in its header. Returns 0 or -1. */
int st_pgimg_check(const unsigned char *p, size_t len, uint64_t lo, int has_end, uint64_t end)
{
    if (len < ST_PGIMG_HDR || cmd_get_u32(p) != ST_PGIMG_MAGIC || get_u64(p + 8) != lo) return -1;
    size_t off = ST_PGIMG_HDR;
    st_pgent_t e, prev = {0};
    uint32_t n = 0;
    int rc;
    while ((rc = st_pgimg_next(p, len, &off, &e)) == 1) {
        if (e.h < lo || (has_end && e.h >= end)) return -1;
        if (n && st_pgimg_key_cmp(prev.h, prev.name, prev.nlen, e.h, e.name, e.nlen) >= 0)
            return -1;
        prev = e;
        n++;
    }
    return rc == 0 && n == st_pgimg_count(p) ? 0 : -1;
}

/* Search image p for (h, name): 1 with *e set when there. */
int st_pgimg_find(const unsigned char *p, size_t len, uint64_t h, const void *name, uint32_t n,
                  st_pgent_t *e)
{
    size_t off = ST_PGIMG_HDR;
    while (st_pgimg_next(p, len, &off, e) == 1) {
        if (e->h < h) continue;
        if (e->h > h) return 0;
        if (e->nlen == n && memcmp(e->name, name, n) == 0) return 1;
    }
    return 0;
}

/* Append one entry to an image being built. */
void st_pgimg_put(buf_t *b, uint64_t h, const void *name, uint32_t nlen, const void *val,
                  uint32_t vlen)
{
    unsigned char hdr[ST_PGIMG_ENT_HDR];
    cmd_put_i64(hdr, (int64_t)h);
    hdr[8] = (unsigned char)nlen;
    hdr[9] = (unsigned char)(nlen >> 8);
    hdr[10] = (unsigned char)vlen;
    hdr[11] = (unsigned char)(vlen >> 8);
    buf_append(b, hdr, sizeof(hdr));
    buf_append(b, name, nlen);
    buf_append(b, val, vlen);
}

void st_pgimg_begin(buf_t *b, uint64_t lo)
{
    unsigned char hdr[ST_PGIMG_HDR];
    cmd_put_u32(hdr, ST_PGIMG_MAGIC);
    cmd_put_u32(hdr + 4, 0);
    cmd_put_i64(hdr + 8, (int64_t)lo);
    buf_append(b, hdr, sizeof(hdr));
}

void st_pgimg_finish(buf_t *img, uint32_t count)
{
    cmd_put_u32((unsigned char *)img->data + 4, count);
}

/* ---- a list's page (D63) ------------------------------------------------- */

void st_lpimg_begin(buf_t *b)
{
    unsigned char hdr[ST_PGIMG_HDR];
    cmd_put_u32(hdr, ST_LPIMG_MAGIC);
    cmd_put_u32(hdr + 4, 0);
    cmd_put_i64(hdr + 8, 0);
    buf_append(b, hdr, sizeof(hdr));
}

void st_lpimg_put(buf_t *b, const void *p, uint32_t n)
{
    unsigned char hdr[ST_LPIMG_ENT_HDR] = {(unsigned char)n, (unsigned char)(n >> 8)};
    buf_append(b, hdr, sizeof(hdr));
    buf_append(b, p, n);
}

int st_lpimg_next(const unsigned char *img, size_t len, size_t *off, const unsigned char **p,
                  uint32_t *n)
{
    if (*off == len) return 0;
    if (len - *off < ST_LPIMG_ENT_HDR) return -1;
    const unsigned char *q = img + *off;
    *n = (uint32_t)q[0] | (uint32_t)q[1] << 8;
    if (len - *off - ST_LPIMG_ENT_HDR < *n) return -1;
    *p = q + ST_LPIMG_ENT_HDR;
    *off += ST_LPIMG_ENT_HDR + *n;
    return 1;
}

long st_lpimg_check(const unsigned char *img, size_t len, uint32_t max)
{
    if (len < ST_PGIMG_HDR || cmd_get_u32(img) != ST_LPIMG_MAGIC || get_u64(img + 8) != 0)
        return -1;
    size_t off = ST_PGIMG_HDR;
    const unsigned char *p;
    uint32_t n, count = 0;
    int rc;
    while ((rc = st_lpimg_next(img, len, &off, &p, &n)) == 1) {
        if (n > max) return -1;
        count++;
    }
    return rc == 0 && count == st_pgimg_count(img) ? (long)count : -1;
}

/* ---- reading a page back ----------------------------------------------- */

const unsigned char *st_page_read_into(store_ctx_t *ctx, uint64_t lsn, uint32_t len,
                                       unsigned char **dst, size_t *cap)
{
    if (*cap < len) {
        *dst = st_xrealloc(*dst, len);
        *cap = len;
    }
    if (st_read_log(ctx, lsn, len, *dst)) {
        log_warn("store: cannot read the page at LSN %llu (%u bytes) of a paged collection: the "
                 "state would no longer follow the log; stopping",
                 (unsigned long long)lsn, len);
        exit(EXIT_FATAL);
    }
    return *dst;
}

const unsigned char *st_page_read(store_ctx_t *ctx, uint64_t lsn, uint32_t len)
{
    st_pgio_t *io = &ctx->pgio;
    if (io->lsn == lsn && io->len == len && io->lsn) return io->buf;
    io->lsn = 0;
    io->eidx = 0;
    st_page_read_into(ctx, lsn, len, &io->buf, &io->cap);
    io->lsn = lsn;
    io->len = len;
    return io->buf;
}

int st_lpimg_at(store_ctx_t *ctx, uint64_t lsn, uint32_t len, uint32_t k, const unsigned char **p,
                uint32_t *n)
{
    const unsigned char *img = st_page_read(ctx, lsn, len);
    st_pgio_t *io = &ctx->pgio;
    if (!io->eidx) { /* one walk of the page, then any element at once */
        io->nel = 0;
        size_t off = ST_PGIMG_HDR;
        const unsigned char *q;
        uint32_t qn;
        for (;;) {
            size_t at = off;
            if (st_lpimg_next(img, len, &off, &q, &qn) != 1) break;
            if (io->nel == io->ecap) {
                io->ecap = io->ecap ? io->ecap * 2 : 256;
                io->eoff = st_xrealloc(io->eoff, (size_t)io->ecap * sizeof(*io->eoff));
            }
            io->eoff[io->nel++] = (uint32_t)at;
        }
        io->eidx = 1;
    }
    if (k >= io->nel) return -1;
    size_t off = io->eoff[k];
    return st_lpimg_next(img, len, &off, p, n) == 1 ? 0 : -1;
}

uint32_t st_page_seq(store_ctx_t *ctx)
{
    if (ctx->pg_stamp != ctx->applied) {
        ctx->pg_stamp = ctx->applied;
        ctx->pg_seq = 0;
    }
    return ctx->pg_seq++;
}
