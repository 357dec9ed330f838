/*
 * hash_pgrec.c - the records of paged hashes and sets (D60): CMD_PAGEIN's
 * and CMD_PAGE's changes as types/t_page.c applies them, and the pages the
 * store's pager (store/pager.c) builds into CMD_PAGE records. The design
 * is in core/hash_paged.c's banner.
 *
 * Store process only (and tests and tools); single-threaded. Everything
 * an apply does is decided by the state the log built and the record's
 * bytes (contract 4); what the builder chooses is free, since its choice
 * is in the record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "command.h"
#include "hash-internal.h"
#include "log.h"
#include "page.h"
#include "value.h"

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)cmd_get_i64(p);
}

/* ---- becoming paged, and page records ----------------------------------- */

static int pin_visit(void *arg, idx_entry_t *f)
{
    st_hash_t *h = arg;
    unsigned fl = st_hash_pin_sizes(f->klen, st_ent_vlen(f)) ? PGF_PIN : 0;
    st_pg_set_flags(f, fl);
    st_ent_set_aux(f, 0); /* older than any page's as_of; a set's order place goes */
    uint32_t i = st_pg_locate(h->pg, st_pg_hash(h->pg, f->data, f->klen));
    st_pg_ovl_count(h, i, fl, 1);
    h->pg->dir[i].live++;
    st_pg_vec_add(h, &h->pg->dir[i], f);
    return 0;
}

int st_hash_page_in(store_ctx_t *ctx, st_hash_t *h, uint64_t seed, uint32_t ranges)
{
    if (h->pg || !h->table || !ranges || ranges > ST_PAGE_IN_RANGES_MAX) return -1;
    if (h->ordered) { /* a set's order (D62) gives way to the page order */
        h->bytes -= (uint64_t)h->cap * sizeof(*h->vec);
        free(h->vec);
        h->vec = NULL;
        h->cap = 0;
        h->ordered = 0;
    }
    st_paged_t *p = st_xmalloc(sizeof(*p));
    memset(p, 0, sizeof(*p));
    p->ctx = ctx;
    p->seed = seed;
    p->objid = st_pg_new_objid(ctx);
    /* Ranges of equal width (the hash is uniform), each pageless: the
     * first pages are built range by range, never sorting everything. */
    p->cap = ranges;
    p->dir = st_xmalloc((size_t)p->cap * sizeof(*p->dir));
    memset(p->dir, 0, (size_t)p->cap * sizeof(*p->dir));
    p->ndir = ranges;
    for (uint32_t j = 0; j < ranges; j++)
        p->dir[j].lo = (uint64_t)(((unsigned __int128)j << 64) / ranges);
    h->pg = p;
    h->bytes += sizeof(*p);
    st_pg_dir_bytes(h, 0, p->cap);
    idx_foreach(&h->ix, pin_visit, h);
    st_pg_recount(p);
    return 0;
}

uint64_t st_hash_objid(const st_hash_t *h)
{
    return h->pg ? h->pg->objid : 0;
}

/* The record's arguments (types/t_page.c checked their count). */
enum { PA_KEY, PA_OBJID, PA_ASOF, PA_FIRST, PA_END, PA_REST, PA_VERSIONS, PA_IMG0 };

/* Range j of the new pages: [lo_j, next) within the covered part. */
typedef struct newdir {
    st_pgdir_t *d;
    uint32_t n;
    const unsigned char **img; /* the image bytes in the record, per new range (NULL: rest) */
} newdir_t;

/* The new range holding hv, and whether its image has (hv, name). */
static int new_image_has(const newdir_t *nd, uint64_t hv, const void *name, uint32_t n,
                         uint32_t *which)
{
    uint32_t lo = st_pg_dir_find(nd->d, nd->n, hv);
    *which = lo;
    st_pgent_t e;
    return nd->img[lo] ? st_pgimg_find(nd->img[lo], nd->d[lo].len, hv, name, n, &e) : -1;
}

int st_hash_page_apply(store_ctx_t *ctx, st_hash_t *h, const apply_args_t *a)
{
    st_paged_t *p = h->pg;
    if (!p || get_u64(a->argv[PA_OBJID].ptr) != p->objid) return -1;
    uint64_t as_of = get_u64(a->argv[PA_ASOF].ptr), first = get_u64(a->argv[PA_FIRST].ptr);
    uint64_t end_lo = get_u64(a->argv[PA_END].ptr);
    uint32_t rest = cmd_get_u32(a->argv[PA_REST].ptr);
    const rec_arg_t *ver = &a->argv[PA_VERSIONS];
    uint32_t k = ver->len / 8, nimg = (uint32_t)a->argc - PA_IMG0;
    if (!k || ver->len % 8 || !nimg) return -1;
    uint32_t i0 = st_pg_locate(p, first);
    if (p->dir[i0].lo != first || i0 + k > p->ndir) return -1;
    for (uint32_t j = 0; j < k; j++)
        if (p->dir[i0 + j].lsn != get_u64(ver->ptr + 8 * j)) return -1;
    uint64_t run_end = 0;
    int has_run_end = st_pg_range_end(p, i0 + k - 1, &run_end);
    /* The part the pages cover: [first, cover_end), the whole run unless
     * end_lo cuts one range in two (its rest keeps its image, if any). */
    int has_cover_end = has_run_end;
    uint64_t cover_end = run_end;
    if (end_lo) {
        if (k != 1 || end_lo <= first || (has_run_end && end_lo >= run_end)) return -1;
        if (!p->dir[i0].lsn && rest) return -1;
        has_cover_end = 1;
        cover_end = end_lo;
    }
    /* The images, checked whole before anything changes. */
    newdir_t nd = {st_xmalloc(((size_t)nimg + 1) * sizeof(st_pgdir_t)), 0,
                   st_xmalloc(((size_t)nimg + 1) * sizeof(unsigned char *))};
    int bad = 0;
    for (uint32_t j = 0; j < nimg && !bad; j++) {
        const rec_arg_t *im = &a->argv[PA_IMG0 + j];
        if (im->len < ST_PGIMG_HDR) {
            bad = 1;
            break;
        }
        uint64_t lo = get_u64(im->ptr + 8);
        if ((j == 0 && lo != first) || (j > 0 && lo <= nd.d[j - 1].lo) ||
            (has_cover_end && lo >= cover_end)) {
            bad = 1;
            break;
        }
        nd.d[j] = (st_pgdir_t){.lo = lo,
                               .lsn = st_arg_lsn(a, PA_IMG0 + (int)j),
                               .len = im->len,
                               .count = st_pgimg_count(im->ptr)};
        nd.img[j] = im->ptr;
        nd.n++;
    }
    for (uint32_t j = 0; j < nd.n && !bad; j++) {
        int he = j + 1 < nd.n ? 1 : has_cover_end;
        uint64_t e = j + 1 < nd.n ? nd.d[j + 1].lo : cover_end;
        if (st_pgimg_check(nd.img[j], nd.d[j].len, nd.d[j].lo, he, e) || !nd.d[j].lsn) bad = 1;
    }
    if (bad) {
        log_warn("store: page record at LSN %llu is malformed; ignored",
                 (unsigned long long)a->lsn);
        free(nd.d);
        free(nd.img);
        return -1;
    }
    if (end_lo) { /* the rest of the cut range */
        nd.d[nd.n] = (st_pgdir_t){.lo = end_lo,
                                  .lsn = p->dir[i0].lsn,
                                  .len = p->dir[i0].len,
                                  .count = p->dir[i0].lsn ? rest : 0};
        nd.img[nd.n] = NULL;
        nd.n++;
    }
    /* The overlay of the run: what the pages took leaves, the rest is
     * judged against the new images and goes to its new range. */
    uint64_t old_live = 0;
    int taken = 0;
    for (uint32_t j = 0; j < k; j++) {
        st_pgdir_t *od = &p->dir[i0 + j];
        old_live += od->live;
        p->nwant -= (uint32_t)st_pg_range_wants(od);
        p->nbusy -= od->busy != 0;
        if (od->lsn) st_live_add(&ctx->live, od->lsn, od->len, -1);
        p->ovl -= od->ovl;
    }
    for (uint32_t j = 0; j < nd.n; j++) {
        nd.d[j].live = nd.d[j].count;
        if (nd.d[j].lsn) st_live_add(&ctx->live, nd.d[j].lsn, nd.d[j].len, 1);
    }
    for (uint32_t j = 0; j < k; j++) {
        st_pgdir_t *od = &p->dir[i0 + j];
        for (uint32_t s = 0; s < od->nov; s++) {
            idx_entry_t *f = od->ov[s];
            uint64_t hv = st_pg_hash(p, f->data, f->klen);
            unsigned fl = st_pg_flags(f);
            int covered = !has_cover_end || hv < cover_end;
            uint32_t which;
            int has = new_image_has(&nd, hv, f->data, f->klen, &which);
            if (has >= 0) fl = (fl & ~PGF_MASK) | (has ? PGF_MASK : 0);
            /* Taken by the pages, or a deletion that hides nothing any more. */
            if ((covered && !(fl & PGF_PIN) && st_pg_stamp(f) <= as_of) ||
                ((fl & PGF_TOMB) && !(fl & PGF_MASK))) {
                idx_entry_t **slot = idx_find(&h->ix, f->data, f->klen);
                st_ent_live_add(&ctx->live, f, -1);
                uint64_t before = idx_table_bytes(&h->ix);
                idx_remove(&h->ix, slot);
                st_hash_table_bytes(h, before);
                taken++;
                continue;
            }
            st_pg_set_flags(f, fl);
            if (fl & PGF_MASK) nd.d[which].live--;
            if (!(fl & PGF_TOMB)) nd.d[which].live++;
            if (!(fl & PGF_PIN)) {
                nd.d[which].ovl++;
                p->ovl++;
            }
            st_pg_vec_add(h, &nd.d[which], f);
        }
        st_pg_vec_free(h, od);
    }
    /* The directory: k ranges become nd.n. */
    uint32_t ndir = p->ndir - k + nd.n;
    if (ndir > p->cap) {
        uint32_t cap = p->cap;
        while (cap < ndir)
            cap *= 2;
        p->dir = st_xrealloc(p->dir, (size_t)cap * sizeof(*p->dir));
        st_pg_dir_bytes(h, p->cap, cap);
        p->cap = cap;
        p->fen_ok = 0;
    }
    memmove(&p->dir[i0 + nd.n], &p->dir[i0 + k], (size_t)(p->ndir - i0 - k) * sizeof(*p->dir));
    uint64_t new_live = 0;
    for (uint32_t j = 0; j < nd.n; j++) {
        p->dir[i0 + j] = nd.d[j];
        new_live += nd.d[j].live;
        p->nwant += (uint32_t)st_pg_range_wants(&nd.d[j]);
    }
    p->ndir = ndir;
    p->fen_ok = 0;
    h->n = (uint32_t)(h->n - old_live + new_live);
    /* The overlay shrinks as pages take it: its table shrinks too, as many
     * buckets a record as it took entries (at least 64), so a table grown
     * to a whole collection's size before it was paged (a sorted set's
     * scores reach a million before their CMD_PAGEIN applies) is gone
     * after a few records, not thousands (a table's resize never depends
     * on anything but its contents and the record, so replay resizes
     * alike). */
    uint64_t tb = idx_table_bytes(&h->ix);
    idx_rehash_step(&h->ix, taken > 64 ? taken : 64);
    st_hash_table_bytes(h, tb);
    free(nd.d);
    free(nd.img);
    return 0;
}

/* ---- building page records (store/pager.c) ------------------------------ */

/* The overlay size past which ranges with fewer than range_min entries
 * get pages too, densest first: pol->overlay_max, or a 32nd of the
 * members (RAM stays within about 10% of the members' bytes: D60). */
static uint64_t overlay_cap(const st_hash_t *h, const st_pgpolicy_t *pol)
{
    uint64_t cap = h->n / 32;
    return cap > pol->overlay_max ? cap : pol->overlay_max;
}

/* Whether range d wants a page record under pol, ignoring in-flight marks;
 * dense: the entries a range needs when the overlay is over its cap. */
static int range_wanted(const st_paged_t *p, const st_pgdir_t *d, const st_pgpolicy_t *pol,
                        uint64_t cap, uint32_t dense)
{
    /* Under compaction's line, the overlay goes into pages too: entries
     * written before the collection was paged keep their values in the
     * log, and would keep old segments. */
    return st_pg_range_wants(d) || (p->ovl > cap && d->ovl && d->ovl >= dense) ||
           (pol->below && (d->ovl || (d->lsn && d->lsn < pol->below)));
}

int st_hash_page_behind(const st_hash_t *h, const st_pgpolicy_t *pol)
{
    return h->pg && h->pg->ovl > 2 * overlay_cap(h, pol);
}

int st_hash_page_wanted(const st_hash_t *h, const st_pgpolicy_t *pol)
{
    const st_paged_t *p = h->pg;
    if (!p) return h->table && pol->entries && h->n >= pol->entries ? ST_PAGE_WANT_IN : 0;
    if (p->nwant > p->nbusy || p->ovl > overlay_cap(h, pol)) return ST_PAGE_WANT_BUILD;
    if (pol->below && p->ovl) return ST_PAGE_WANT_BUILD;
    if (pol->below)
        for (uint32_t i = 0; i < p->ndir; i++)
            if (p->dir[i].lsn && p->dir[i].lsn < pol->below) return ST_PAGE_WANT_BUILD;
    return 0;
}

typedef struct outent {
    uint64_t h;
    const unsigned char *name, *val;
    uint32_t nlen, vlen;
} outent_t;

int st_hash_page_build(store_ctx_t *ctx, st_hash_t *h, const st_pgpolicy_t *pol, st_pgbuilt_t *out)
{
    st_paged_t *p = h->pg;
    if (!p) return ST_PAGE_NONE;
    p->ctx = ctx;
    /* The next wanted range, from where the last look stopped, looking at
     * no more than ST_PAGE_SCAN ranges per call. */
    uint64_t cap = overlay_cap(h, pol);
    /* Nothing wanted: no need to look (the counts are kept as they change). */
    if (!p->nwant && p->ovl <= cap && !pol->below) return ST_PAGE_NONE;
    uint32_t dense = p->ovl / p->ndir ? p->ovl / p->ndir : 1;
    uint32_t i = p->ndir, looked = 0;
    int inflight = 0;
    if (p->scan_at >= p->ndir) p->scan_at = 0;
    for (uint32_t t = p->scan_at; looked < p->ndir && i == p->ndir; t = (t + 1) % p->ndir) {
        if (looked++ == ST_PAGE_SCAN) {
            p->scan_at = t;
            return ST_PAGE_MORE;
        }
        if (!range_wanted(p, &p->dir[t], pol, cap, dense)) continue;
        if (p->dir[t].busy)
            inflight = 1;
        else
            i = t;
    }
    if (i == p->ndir) return inflight ? ST_PAGE_INFLIGHT : ST_PAGE_NONE;
    p->scan_at = i + 1;
    st_pgdir_t d = p->dir[i];
    uint64_t end = 0;
    int has_end = st_pg_range_end(p, i, &end);
    /* The members: the image's merged with the overlay's, by (h, name). */
    unsigned char *ibuf = NULL;
    size_t icap = 0;
    const unsigned char *img = d.lsn ? st_pg_read_into(p, &d, &ibuf, &icap) : NULL;
    size_t off = ST_PGIMG_HDR;
    uint32_t nref, at = 0;
    st_pgref_t *ref = st_pg_range_refs(p, i, d.lo, &nref);
    outent_t *v = NULL;
    uint32_t nv = 0, cv = 0;
    unsigned char **vals = NULL; /* overlay values read into RAM, freed after */
    uint32_t nvals = 0;
    st_pgent_t e;
    int have = 0;
    for (;;) {
        if (!have && img) {
            while ((have = st_pgimg_next(img, d.len, &off, &e)) == 1)
                if (e.h >= d.lo && (!has_end || e.h < end)) break;
            if (have != 1) {
                have = 0;
                img = NULL;
            }
        }
        const st_pgref_t *r = at < nref ? &ref[at] : NULL;
        if (!have && !r) break;
        int c = !have ? 1
                : !r  ? -1
                      : st_pgimg_key_cmp(e.h, e.name, e.nlen, r->h, r->f->data, r->f->klen);
        if (nv == cv) {
            cv = cv ? cv * 2 : 64;
            v = st_xrealloc(v, (size_t)cv * sizeof(*v));
        }
        if (c < 0) {
            v[nv++] = (outent_t){e.h, e.name, e.val, e.nlen, e.vlen};
            have = 0;
            continue;
        }
        if (c == 0) have = 0;
        at++;
        unsigned fl = st_pg_flags(r->f);
        if (fl & (PGF_TOMB | PGF_PIN)) continue; /* deleted, or kept in the overlay */
        uint64_t vlen = st_ent_vlen(r->f);
        unsigned char *val = st_xmalloc(vlen ? (size_t)vlen : 1);
        if (st_read_value(ctx, r->f, val)) {
            log_warn("store: cannot read a member's value to build a page; stopping");
            exit(EXIT_FATAL);
        }
        vals = st_xrealloc(vals, ((size_t)nvals + 1) * sizeof(*vals));
        vals[nvals++] = val;
        v[nv++] = (outent_t){r->h, r->f->data, val, r->f->klen, (uint32_t)vlen};
    }
    /* Cut into pages of about pol->page_bytes, never between equal hashes,
     * in one record of at most pol->record_bytes (a pageless range may be
     * covered in parts: end_lo). */
    out->objid = p->objid;
    out->as_of = ctx->applied;
    out->first_lo = d.lo;
    out->version = d.lsn;
    out->end_lo = 0;
    out->rest = 0;
    out->nimg = 0;
    uint64_t total = 0;
    uint32_t s = 0;
    int too_big = 0;
    while (s < nv || out->nimg == 0) {
        buf_t *b = &out->img[out->nimg];
        buf_reset(b);
        st_pgimg_begin(b, out->nimg == 0 ? d.lo : v[s].h);
        uint32_t count = 0;
        while (s < nv) {
            uint64_t add = ST_PGIMG_ENT_HDR + v[s].nlen + v[s].vlen;
            if (count && b->len + add > pol->page_bytes && v[s].h != v[s - 1].h) break;
            st_pgimg_put(b, v[s].h, v[s].name, v[s].nlen, v[s].val, v[s].vlen);
            count++;
            s++;
        }
        st_pgimg_finish(b, count);
        if (out->nimg && total + b->len > pol->record_bytes) {
            /* This page does not fit: end the record before it. */
            s -= count;
            buf_reset(b);
            too_big = 1;
            break;
        }
        total += b->len + 16;
        out->nimg++;
        if (out->nimg == ST_PAGE_MAX_IMAGES) {
            too_big = s < nv;
            break;
        }
    }
    if (too_big) {
        if (d.lsn) { /* a paged range whose rebuild is too large: cut it at s */
            uint32_t r = 0;
            off = ST_PGIMG_HDR;
            const unsigned char *im = st_pg_read_into(p, &d, &ibuf, &icap);
            while (st_pgimg_next(im, d.len, &off, &e) == 1)
                if (e.h >= v[s].h && (!has_end || e.h < end)) r++;
            out->rest = r;
        }
        out->end_lo = v[s].h;
    }
    for (uint32_t j = 0; j < nvals; j++)
        free(vals[j]);
    free(vals);
    free(v);
    free(ref);
    free(ibuf);
    p->dir[i].busy = 1;
    p->nbusy++;
    return ST_PAGE_BUILT;
}

void st_hash_page_unbusy(st_hash_t *h)
{
    if (!h->pg || !h->pg->nbusy) return;
    for (uint32_t i = 0; i < h->pg->ndir; i++)
        h->pg->dir[i].busy = 0;
    h->pg->nbusy = 0;
}

void st_hash_page_stats(const st_hash_t *h, st_pgstats_t *s)
{
    memset(s, 0, sizeof(*s));
    s->members = h->n;
    if (!h->pg) return;
    s->paged = 1;
    s->ranges = h->pg->ndir;
    for (uint32_t i = 0; i < h->pg->ndir; i++) {
        if (!h->pg->dir[i].lsn) continue;
        s->pages++;
        s->page_bytes += h->pg->dir[i].len;
    }
    s->overlay = (uint32_t)idx_count(&h->ix);
    s->pinned = h->pg->pinned;
}

/* ---- a full check, for tests ------------------------------------------- */

typedef struct check_arg {
    st_hash_t *h;
    const char *why;
    uint32_t n;
} check_arg_t;

static int check_entry(void *arg, idx_entry_t *f)
{
    check_arg_t *c = arg;
    st_paged_t *p = c->h->pg;
    uint64_t hv = st_pg_hash(p, f->data, f->klen);
    uint32_t i = st_pg_locate(p, hv);
    st_pgent_t e;
    int has = st_pg_image_has(p, i, hv, f->data, f->klen, &e);
    unsigned fl = st_pg_flags(f);
    if (!!(fl & PGF_MASK) != has) c->why = "an overlay entry's MASK is not what its image says";
    if ((fl & PGF_TOMB) && (fl & PGF_PIN)) c->why = "a pinned tombstone";
    if (!(fl & PGF_TOMB) && !(fl & PGF_PIN) != !st_hash_pin_sizes(f->klen, st_ent_vlen(f)))
        c->why = "PIN is not what the sizes say";
    uint32_t j = 0;
    while (j < p->dir[i].nov && p->dir[i].ov[j] != f)
        j++;
    if (j == p->dir[i].nov) c->why = "an overlay entry is not among its range's";
    c->n++;
    return 0;
}

typedef struct count_live {
    uint64_t n;
} count_live_t;

static int count_one(void *arg, idx_entry_t *f)
{
    (void)f;
    ((count_live_t *)arg)->n++;
    return 0;
}

const char *st_hash_page_check(st_hash_t *h)
{
    st_paged_t *p = h->pg;
    if (!p) return NULL;
    check_arg_t c = {h, NULL, 0};
    idx_foreach(&h->ix, check_entry, &c);
    if (c.why) return c.why;
    uint64_t total = 0, ovl = 0, nov = 0;
    for (uint32_t i = 0; i < p->ndir; i++) {
        count_live_t n = {0};
        uint64_t skip = 0;
        st_pg_visit_range(h, i, p->dir[i].lo, count_one, &n, &skip, 1);
        if (n.n != p->dir[i].live) {
            static char why[160];
            snprintf(why, sizeof(why), "range %u of %u: live %u, members %llu (image %u, lsn %llu)",
                     i, p->ndir, p->dir[i].live, (unsigned long long)n.n, p->dir[i].count,
                     (unsigned long long)p->dir[i].lsn);
            return why;
        }
        total += n.n;
        ovl += p->dir[i].ovl;
        nov += p->dir[i].nov;
        if (i && p->dir[i].lo <= p->dir[i - 1].lo) return "ranges out of order";
    }
    if (total != h->n) return "the member count is not the ranges' sum";
    if (ovl != p->ovl) return "the overlay count is not the ranges' sum";
    if (nov != c.n) return "the ranges hold more overlay entries than the overlay";
    uint32_t want = p->nwant, busy = p->nbusy;
    st_pg_recount(p);
    if (want != p->nwant || busy != p->nbusy) return "the wanting or busy ranges' counts drifted";
    st_hash_mat_reset(p->ctx);
    return NULL;
}
