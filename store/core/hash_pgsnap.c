/*
 * hash_pgsnap.c - a paged hash's or set's members as a reply in parts
 * (D60): HGETALL, HKEYS, HVALS and SMEMBERS of a paged collection go out
 * as their frontend asks for them (D48's parts), the store reading one page
 * at a time, so neither the store's RAM nor its time per turn grows with
 * the collection.
 *
 * Store process only; single-threaded. The reply must be the collection
 * as it was when the read was served, although writes go on between its
 * parts: the snapshot takes the directory's page positions (pages never
 * change in the log) and a copy of the overlay's entries (their values'
 * log extents shared, RAM values copied), sorted. The pages and extents it
 * reads are kept from compaction by its lowest LSN (the store's reply pin,
 * store.c). Its cost when taken: the ranges (24 bytes each) and the
 * overlay (bounded by the pager: D60), not the members.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hash-internal.h"
#include "log.h"
#include "page.h"
#include "pieces.h"
#include "resp.h"
#include "value.h"

typedef struct snap_range {
    uint64_t lo, lsn;
    uint32_t len;
} snap_range_t;

typedef struct snap_ovl {
    uint64_t h;
    idx_entry_t *f; /* a copy; a tombstone hides the image's member */
    int tomb;
} snap_ovl_t;

typedef struct pgsnap {
    int want; /* ST_MEMBERS_NAMES | ST_MEMBERS_VALUES */
    snap_range_t *r;
    uint32_t nr;
    snap_ovl_t *o;
    uint32_t no;
    uint64_t lowest;
    /* Where the next part starts: range ri, its image in img (off: the
     * next entry), overlay entry oi. */
    uint32_t ri, oi;
    int loaded;
    unsigned char *img;
    size_t cap, off;
} pgsnap_t;

static int by_ovl(const void *x, const void *y)
{
    const snap_ovl_t *a = x, *b = y;
    return st_pgimg_key_cmp(a->h, a->f->data, a->f->klen, b->h, b->f->data, b->f->klen);
}

static void snap_free(void *state)
{
    pgsnap_t *s = state;
    for (uint32_t i = 0; i < s->no; i++) {
        if (st_ent_kind(s->o[i].f) == VK_LIST) st_pieces_free(st_ent_pieces(s->o[i].f));
        free(s->o[i].f);
    }
    free(s->o);
    free(s->r);
    free(s->img);
    free(s);
}

static uint64_t snap_lowest(const void *state)
{
    return ((const pgsnap_t *)state)->lowest;
}

/* One element's reply bytes into b: the name, the value, or both. */
static int put_element(store_ctx_t *ctx, const pgsnap_t *s, const st_pgent_t *e, idx_entry_t *f,
                       buf_t *b)
{
    if (s->want & ST_MEMBERS_NAMES) {
        if (e)
            resp_bulk(b, e->name, e->nlen);
        else
            resp_bulk(b, f->data, f->klen);
    }
    if (s->want & ST_MEMBERS_VALUES) {
        if (e) {
            resp_bulk(b, e->val, e->vlen);
        } else {
            uint64_t vlen = st_ent_vlen(f);
            resp_bulk_header(b, (size_t)vlen);
            buf_reserve(b, (size_t)vlen + 2);
            if (st_read_value(ctx, f, (unsigned char *)b->data + b->len)) return -1;
            b->len += (size_t)vlen;
            buf_append(b, "\r\n", 2);
        }
    }
    return 0;
}

static int snap_next(store_ctx_t *ctx, void *state, buf_t *out, size_t max)
{
    pgsnap_t *s = state;
    size_t start = out->len;
    for (;;) {
        if (out->len - start >= max) return 0; /* the part is full (st_vsnap_gen_next) */
        if (s->ri == s->nr) return 1;
        const snap_range_t *rg = &s->r[s->ri];
        int has_end = s->ri + 1 < s->nr;
        uint64_t end = has_end ? s->r[s->ri + 1].lo : 0;
        if (!s->loaded) {
            if (rg->lsn) {
                if (s->cap < rg->len) {
                    s->img = st_xrealloc(s->img, rg->len);
                    s->cap = rg->len;
                }
                if (st_read_log(ctx, rg->lsn, rg->len, s->img)) return -1;
            }
            s->off = ST_PGIMG_HDR;
            s->loaded = 1;
        }
        /* The next image member of the range, and the next overlay entry. */
        st_pgent_t e;
        int have = 0;
        size_t at = s->off;
        while (rg->lsn && !have && st_pgimg_next(s->img, rg->len, &at, &e) == 1) {
            if (e.h >= rg->lo && (!has_end || e.h < end))
                have = 1;
            else
                s->off = at;
        }
        const snap_ovl_t *o =
            s->oi < s->no && (!has_end || s->o[s->oi].h < end) ? &s->o[s->oi] : NULL;
        if (!have && !o) {
            s->ri++;
            s->loaded = 0;
            continue;
        }
        int c = !have ? 1
                : !o  ? -1
                      : st_pgimg_key_cmp(e.h, e.name, e.nlen, o->h, o->f->data, o->f->klen);
        int rc = 0;
        if (c < 0) {
            s->off = at;
            rc = put_element(ctx, s, &e, NULL, out);
        } else {
            if (c == 0) s->off = at;
            s->oi++;
            if (o->tomb) continue;
            rc = put_element(ctx, s, NULL, o->f, out);
        }
        if (rc) return -1;
    }
}

static const st_vgen_ops_t snap_ops = {snap_next, snap_lowest, snap_free};

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

struct st_vsnap *st_hash_members_snapshot(st_hash_t *h, int want)
{
    st_paged_t *p = h->pg;
    if (!p) return NULL;
    pgsnap_t *s = st_xmalloc(sizeof(*s));
    memset(s, 0, sizeof(*s));
    s->want = want;
    s->lowest = UINT64_MAX;
    s->r = st_xmalloc((size_t)p->ndir * sizeof(*s->r));
    s->nr = p->ndir;
    for (uint32_t i = 0; i < p->ndir; i++) {
        s->r[i] = (snap_range_t){p->dir[i].lo, p->dir[i].lsn, p->dir[i].len};
        if (p->dir[i].lsn) s->lowest = min_u64(s->lowest, p->dir[i].lsn);
    }
    uint32_t n = (uint32_t)idx_count(&h->ix);
    s->o = st_xmalloc(((size_t)n + 1) * sizeof(*s->o));
    for (uint32_t i = 0; i < p->ndir; i++) {
        for (uint32_t j = 0; j < p->dir[i].nov; j++) {
            idx_entry_t *f = p->dir[i].ov[j];
            rec_arg_t name = {f->data, f->klen};
            idx_entry_t *c = st_ent_dup(f, &name);
            if (st_ent_kind(c) == VK_EXTENT) {
                uint64_t lsn;
                uint32_t len;
                st_ent_get_ext1(c, &lsn, &len);
                s->lowest = min_u64(s->lowest, lsn);
            }
            s->o[s->no++] =
                (snap_ovl_t){st_pg_hash(p, f->data, f->klen), c, (st_pg_flags(f) & PGF_TOMB) != 0};
        }
    }
    qsort(s->o, s->no, sizeof(*s->o), by_ovl);
    struct st_vsnap *v = st_vsnap_gen(&snap_ops, s);
    if (!v) snap_free(s);
    return v;
}
