/*
 * hash_paged.c - large hashes and sets on disk (D60, issue 13): the paged
 * form of a hashtable-encoded hash or set, whose members live in pages in
 * the log and whose RAM is a small directory plus the recent changes.
 *
 * Store process only (and tests and tools); single-threaded. A crash loses
 * nothing: the pages are log records, and the rest is rebuilt by replaying
 * the log or read from a checkpoint.
 *
 * Design. Members are ordered by (h, name), h = XXH3 of the name seeded
 * with the collection's paged seed. The hash space is cut into ranges;
 * the directory holds, per range, where its page is: an image of the
 * range's members, sorted, written into the log by the store itself as
 * part of a CMD_PAGE record (store/pager.c builds them, types/t_page.c
 * applies them), so a page is durable, replicated, counted live and
 * reclaimed like any record's bytes. A range may have no page (every
 * member in the overlay). The overlay is the hash's own table (h->ix):
 * every member written since its range's page was built, and a tombstone
 * for every member deleted since; each overlay entry carries the stamp of
 * the record that wrote it (ctx->applied then, in its aux word) and flags
 * in its entry's owner bits:
 *   PGF_TOMB  a deletion;
 *   PGF_MASK  the range's image has this name (the overlay entry hides it);
 *   PGF_PIN   a name or value too long for a page: it stays in the
 *             overlay, no page ever takes it.
 * A member is: its overlay entry when it has one (a tombstone: absent),
 * else its range's image entry. A lookup costs the overlay's table, then
 * at most one page read (one device read when cold).
 *
 * Determinism (ARCHITECTURE.md, contract 4). When and which pages are
 * written is the store's choice, but everything a record does is decided
 * by the state the log built and the record's own bytes:
 *   - CMD_PAGEIN (st_hash_page_in) makes a hashtable paged, with the seed
 *     the record carries: one range, no page, every member in the overlay.
 *   - CMD_PAGE (st_hash_page_apply) replaces a run of directory ranges,
 *     named by the first range's lo and each range's page LSN as the
 *     builder saw them (a mismatch makes it a no-op, as does another
 *     object: each paged object has an objid), by the pages it carries,
 *     built at as_of (the builder's ctx->applied). The overlay entries of
 *     the covered ranges stamped at or before as_of are in the pages and
 *     leave RAM; later ones stay, their PGF_MASK recomputed against the
 *     new images. A record may cover only the start of one pageless range
 *     (end_lo): the rest stays pageless.
 * Deleting always leaves a tombstone (unless the name is pinned and in no
 * image), whether or not a page record is in flight, since replay does not
 * know what was in flight.
 *
 * Positions. SPOP, SRANDMEMBER and HRANDFIELD pick by position in the
 * member order: ranges in order, within a range image and overlay members
 * merged by (h, name); dir[].live counts each range's members and a
 * Fenwick tree over it finds the range of a position in O(log ranges).
 *
 * Entries handed out. A member found in a page is copied into an entry
 * (materialised) that stays valid until the current record or request is
 * done (st_hash_mat_reset, called by route.c): callers keep pointers to
 * members as they do for a hashtable's entries.
 *
 * Page image (little-endian): u32 magic, u32 count, u64 lo, then count
 * entries sorted by (h, name), each u64 h, u16 name length, u16 value
 * length, name, value. A range's image holds only members of the range
 * (a range's lo can be above its image's lo: the rest of a split).
 *
 * An I/O error reading a page is fatal to the store (as reading a value
 * while applying is, core/value.c): the state could not follow the log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "command.h"
#include "hash-internal.h"
#include "page.h"
#include "log.h"
#include "pieces.h"
#include "value.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* ---- small helpers ---------------------------------------------------- */

uint64_t st_pg_hash(const st_paged_t *p, const void *f, uint32_t n)
{
    return XXH3_64bits_withSeed(f, n, p->seed);
}

int st_hash_pin_sizes(uint64_t nlen, uint64_t vlen)
{
    return nlen > ST_PAGE_NAME_MAX || vlen > ST_PAGE_VALUE_MAX;
}

uint32_t st_pg_dir_find(const st_pgdir_t *dir, uint32_t n, uint64_t h)
{
    uint32_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (dir[mid].lo <= h)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

uint32_t st_pg_locate(const st_paged_t *p, uint64_t h)
{
    return st_pg_dir_find(p->dir, p->ndir, h);
}

/* Range i covers [dir[i].lo, st_pg_range_end): has_end 0 for the last. */
int st_pg_range_end(const st_paged_t *p, uint32_t i, uint64_t *end)
{
    if (i + 1 >= p->ndir) return 0;
    *end = p->dir[i + 1].lo;
    return 1;
}

uint64_t st_pg_new_objid(store_ctx_t *ctx)
{
    return (ctx->applied << 16) | (st_page_seq(ctx) & 0xffffu);
}

/* ---- reading pages ---------------------------------------------------- */

/* Range i's image, read into dst, or through the context's one-page
 * cache (core/page.c). */
const unsigned char *st_pg_read_into(st_paged_t *p, const st_pgdir_t *d, unsigned char **dst,
                                     size_t *cap)
{
    return st_page_read_into(p->ctx, d->lsn, d->len, dst, cap);
}

const unsigned char *st_pg_read(st_paged_t *p, const st_pgdir_t *d)
{
    return st_page_read(p->ctx, d->lsn, d->len);
}

/* Whether range i's image has (h, name); *e set when it has. */
int st_pg_image_has(st_paged_t *p, uint32_t i, uint64_t h, const void *name, uint32_t n,
                    st_pgent_t *e)
{
    const st_pgdir_t *d = &p->dir[i];
    if (!d->lsn) return 0;
    return st_pgimg_find(st_pg_read(p, d), d->len, h, name, n, e);
}

/* ---- entries handed out ----------------------------------------------- */

idx_entry_t *st_hash_mat_new(store_ctx_t *ctx, const void *name, uint32_t nlen, const void *val,
                             uint32_t vlen)
{
    st_pgmat_t *m = &ctx->pgmat;
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 16;
        m->v = st_xrealloc(m->v, (size_t)m->cap * sizeof(*m->v));
    }
    idx_entry_t *f = st_hash_field_new_ram(name, nlen, val, vlen);
    m->v[m->n++] = f;
    return f;
}

static idx_entry_t *st_pg_materialise(st_paged_t *p, const st_pgent_t *e)
{
    return st_hash_mat_new(p->ctx, e->name, e->nlen, e->val, e->vlen);
}

void *st_hash_mat_alloc(store_ctx_t *ctx, size_t n)
{
    st_pgmat_t *m = &ctx->pgmat;
    if (m->nblk == m->blkcap) {
        m->blkcap = m->blkcap ? m->blkcap * 2 : 16;
        m->blk = st_xrealloc(m->blk, (size_t)m->blkcap * sizeof(*m->blk));
    }
    return m->blk[m->nblk++] = st_xmalloc(n ? n : 1);
}

void st_hash_mat_reset(store_ctx_t *ctx)
{
    st_pgmat_t *m = &ctx->pgmat;
    for (uint32_t i = 0; i < m->n; i++) {
        if (st_ent_kind(m->v[i]) == VK_LIST) st_pieces_free(st_ent_pieces(m->v[i]));
        free(m->v[i]);
    }
    m->n = 0;
    for (uint32_t i = 0; i < m->nblk; i++)
        free(m->blk[i]);
    m->nblk = 0;
}

void st_hash_pg_ctx_free(store_ctx_t *ctx)
{
    st_hash_mat_reset(ctx);
    free(ctx->pgmat.v);
    free(ctx->pgmat.blk);
    free(ctx->pgio.buf);
    free(ctx->pgio.eoff);
    memset(&ctx->pgmat, 0, sizeof(ctx->pgmat));
    memset(&ctx->pgio, 0, sizeof(ctx->pgio));
}

/* ---- each range's overlay entries, and the Fenwick tree ---------------- */

int st_pg_by_key(const void *x, const void *y)
{
    const st_pgref_t *a = x, *b = y;
    return st_pgimg_key_cmp(a->h, a->f->data, a->f->klen, b->h, b->f->data, b->f->klen);
}

/* Range i's overlay entries with a hash at or above `from`, sorted by
 * (hash, name), into a new array (*n entries; the caller frees it). */
st_pgref_t *st_pg_range_refs(const st_paged_t *p, uint32_t i, uint64_t from, uint32_t *n)
{
    const st_pgdir_t *d = &p->dir[i];
    st_pgref_t *v = st_xmalloc(((size_t)d->nov + 1) * sizeof(*v));
    uint32_t k = 0;
    for (uint32_t j = 0; j < d->nov; j++) {
        uint64_t hv = st_pg_hash(p, d->ov[j]->data, d->ov[j]->klen);
        if (hv >= from) v[k++] = (st_pgref_t){hv, d->ov[j]};
    }
    qsort(v, k, sizeof(*v), st_pg_by_key);
    *n = k;
    return v;
}

void st_pg_vec_add(st_hash_t *h, st_pgdir_t *d, idx_entry_t *f)
{
    if (d->nov == d->capov) {
        uint32_t cap = d->capov ? d->capov * 2 : 4;
        d->ov = st_xrealloc(d->ov, (size_t)cap * sizeof(*d->ov));
        h->bytes += (uint64_t)(cap - d->capov) * sizeof(*d->ov);
        d->capov = cap;
    }
    d->ov[d->nov++] = f;
}

/* Where f is in range d's overlay entries (d->nov when not there: cannot
 * happen). */
static uint32_t vec_at(const st_pgdir_t *d, const idx_entry_t *f)
{
    uint32_t j = 0;
    while (j < d->nov && d->ov[j] != f)
        j++;
    return j;
}

static void vec_replace(st_pgdir_t *d, const idx_entry_t *old, idx_entry_t *nf)
{
    uint32_t j = vec_at(d, old);
    if (j < d->nov) d->ov[j] = nf;
}

static void vec_remove(st_pgdir_t *d, const idx_entry_t *f)
{
    uint32_t j = vec_at(d, f);
    if (j < d->nov) d->ov[j] = d->ov[--d->nov];
}

void st_pg_vec_free(st_hash_t *h, st_pgdir_t *d)
{
    h->bytes -= (uint64_t)d->capov * sizeof(*d->ov);
    free(d->ov);
    d->ov = NULL;
    d->nov = d->capov = 0;
}

static void fen_bytes(st_hash_t *h, uint64_t before_cap, uint64_t after_cap)
{
    h->bytes += after_cap * sizeof(uint64_t);
    h->bytes -= before_cap * sizeof(uint64_t);
}

static void fen_need(st_hash_t *h)
{
    st_paged_t *p = h->pg;
    if (p->fen_ok) return;
    if (p->fen_cap < p->ndir + 1) {
        fen_bytes(h, p->fen_cap, (uint64_t)p->cap + 1);
        p->fen_cap = p->cap + 1;
        p->fen = st_xrealloc(p->fen, (size_t)p->fen_cap * sizeof(*p->fen));
    }
    memset(p->fen, 0, ((size_t)p->ndir + 1) * sizeof(*p->fen));
    for (uint32_t i = 1; i <= p->ndir; i++) {
        p->fen[i] += p->dir[i - 1].live;
        uint32_t j = i + (i & -i);
        if (j <= p->ndir) p->fen[j] += p->fen[i];
    }
    p->fen_ok = 1;
}

/* Range i's live count changed by delta (kept in step when the tree is). */
static void live_add(st_hash_t *h, uint32_t i, int delta)
{
    st_paged_t *p = h->pg;
    p->dir[i].live = (uint32_t)((int64_t)p->dir[i].live + delta);
    h->n = (uint32_t)((int64_t)h->n + delta);
    if (!p->fen_ok) return;
    for (uint32_t j = i + 1; j <= p->ndir; j += j & -j)
        p->fen[j] = (uint64_t)((int64_t)p->fen[j] + delta);
}

/* The range holding position k (0-based; k < h->n), *k made relative to it. */
static uint32_t fen_find(st_hash_t *h, uint64_t *k)
{
    st_paged_t *p = h->pg;
    fen_need(h);
    uint32_t pos = 0, step = 1;
    while (step * 2 <= p->ndir)
        step *= 2;
    for (; step; step /= 2) {
        if (pos + step <= p->ndir && p->fen[pos + step] <= *k) {
            pos += step;
            *k -= p->fen[pos];
        }
    }
    return pos; /* 0-based range index */
}

/* ---- the overlay -------------------------------------------------------- */

void st_pg_dir_bytes(st_hash_t *h, uint32_t old_cap, uint32_t new_cap)
{
    h->bytes += (uint64_t)new_cap * sizeof(st_pgdir_t);
    h->bytes -= (uint64_t)old_cap * sizeof(st_pgdir_t);
}

/* Count an overlay entry's flags into range i (sign +1) or out (-1). */
void st_pg_ovl_count(st_hash_t *h, uint32_t i, unsigned fl, int sign)
{
    st_paged_t *p = h->pg;
    if (fl & PGF_PIN) {
        p->pinned = (uint32_t)((int64_t)p->pinned + sign);
    } else {
        int before = st_pg_range_wants(&p->dir[i]);
        p->dir[i].ovl = (uint32_t)((int64_t)p->dir[i].ovl + sign);
        p->ovl = (uint32_t)((int64_t)p->ovl + sign);
        p->nwant = (uint32_t)((int64_t)p->nwant + st_pg_range_wants(&p->dir[i]) - before);
    }
}

void st_pg_recount(st_paged_t *p)
{
    p->nwant = p->nbusy = 0;
    for (uint32_t i = 0; i < p->ndir; i++) {
        p->nwant += (uint32_t)st_pg_range_wants(&p->dir[i]);
        p->nbusy += p->dir[i].busy != 0;
    }
}

/* Insert nf (flags fl) into the overlay, as range i's. */
static void ovl_insert(st_hash_t *h, uint32_t i, idx_entry_t *nf, unsigned fl)
{
    uint64_t before = idx_table_bytes(&h->ix);
    idx_insert(&h->ix, nf);
    st_pg_set_flags(nf, fl); /* after idx_insert, which sets meta */
    st_hash_table_bytes(h, before);
    st_pg_vec_add(h, &h->pg->dir[i], nf);
}

/* Remove range i's overlay entry *slot (its log bytes uncounted from live
 * when set). */
static void ovl_remove(st_hash_t *h, st_live_t *live, uint32_t i, idx_entry_t **slot)
{
    idx_entry_t *f = *slot;
    vec_remove(&h->pg->dir[i], f);
    if (live) st_ent_live_add(live, f, -1);
    uint64_t before = idx_table_bytes(&h->ix);
    idx_remove(&h->ix, slot); /* hash.c's free callback */
    st_hash_table_bytes(h, before);
}

static idx_entry_t *stamped(st_hash_t *h, idx_entry_t *nf, unsigned fl)
{
    st_ent_set_aux(nf, (int64_t)h->pg->ctx->applied);
    st_pg_set_flags(nf, fl);
    return nf;
}

/* ---- the paged hash's operations (hash.c calls them when h->pg) ---------- */

/* Member f: its overlay entry (*ovl), or its image entry (*e, *ovl NULL):
 * 1, or 0 when absent. */
static int pg_lookup(st_hash_t *h, const void *f, uint32_t n, idx_entry_t **ovl, st_pgent_t *e)
{
    idx_entry_t **slot = idx_find(&h->ix, f, n);
    *ovl = slot ? *slot : NULL;
    if (slot) return !(st_pg_flags(*slot) & PGF_TOMB);
    st_paged_t *p = h->pg;
    uint64_t hv = st_pg_hash(p, f, n);
    return st_pg_image_has(p, st_pg_locate(p, hv), hv, f, n, e);
}

idx_entry_t *st_pg_find(st_hash_t *h, const void *f, uint32_t n)
{
    idx_entry_t *ovl;
    st_pgent_t e;
    if (!pg_lookup(h, f, n, &ovl, &e)) return NULL;
    return ovl ? ovl : st_pg_materialise(h->pg, &e);
}

int st_pg_peek(st_hash_t *h, const void *f, uint32_t n, unsigned char *val, uint32_t cap,
               uint32_t *vlen)
{
    idx_entry_t *ovl;
    st_pgent_t e;
    if (!pg_lookup(h, f, n, &ovl, &e)) return 0;
    if (ovl) return st_hash_field_copy(ovl, val, cap, vlen);
    *vlen = e.vlen;
    if (e.vlen > cap) return -1;
    if (e.vlen) memcpy(val, e.val, e.vlen);
    return 1;
}

int st_pg_set(st_hash_t *h, st_live_t *live, const void *f, uint32_t n, const unsigned char *v,
              uint64_t vlen, uint64_t vlsn)
{
    st_paged_t *p = h->pg;
    uint64_t hv = st_pg_hash(p, f, n);
    uint32_t i = st_pg_locate(p, hv);
    unsigned pin = st_hash_pin_sizes(n, vlen) ? PGF_PIN : 0;
    /* A value a page will take is copied into RAM now (vlsn 0): building
     * the page then reads no log, and the record's segment is not kept
     * for it. A pinned one stays where the record put it. */
    idx_entry_t *nf =
        pin ? st_hash_field_new(f, n, v, vlen, vlsn) : st_hash_field_new_ram(f, n, v, vlen);
    h->bytes += st_hash_field_bytes(nf);
    if (live) st_ent_live_add(live, nf, 1);
    idx_entry_t **slot = idx_find(&h->ix, f, n);
    if (slot) {
        idx_entry_t *old = *slot;
        unsigned ofl = st_pg_flags(old);
        idx_relink(slot, old, nf);
        stamped(h, nf, (ofl & PGF_MASK) | pin);
        vec_replace(&p->dir[i], old, nf);
        st_pg_ovl_count(h, i, ofl, -1);
        st_pg_ovl_count(h, i, st_pg_flags(nf), 1);
        if (live) st_ent_live_add(live, old, -1);
        st_hash_field_free(h, old);
        if (!(ofl & PGF_TOMB)) return 0;
        live_add(h, i, 1);
        return 1;
    }
    st_pgent_t e;
    int in_img = st_pg_image_has(p, i, hv, f, n, &e);
    stamped(h, nf, 0);
    ovl_insert(h, i, nf, (in_img ? PGF_MASK : 0) | pin);
    st_pg_ovl_count(h, i, st_pg_flags(nf), 1);
    if (in_img) return 0;
    live_add(h, i, 1);
    return 1;
}

int st_pg_del(st_hash_t *h, st_live_t *live, const void *f, uint32_t n)
{
    st_paged_t *p = h->pg;
    uint64_t hv = st_pg_hash(p, f, n);
    uint32_t i = st_pg_locate(p, hv);
    idx_entry_t **slot = idx_find(&h->ix, f, n);
    unsigned mask;
    if (slot) {
        idx_entry_t *old = *slot;
        unsigned ofl = st_pg_flags(old);
        if (ofl & PGF_TOMB) return 0;
        live_add(h, i, -1);
        st_pg_ovl_count(h, i, ofl, -1);
        if ((ofl & PGF_PIN) && !(ofl & PGF_MASK)) { /* in no image, none in flight: gone */
            ovl_remove(h, live, i, slot);
            return 1;
        }
        mask = ofl & PGF_MASK;
        /* A tombstone in its place (banner: always, whatever is in flight). */
        idx_entry_t *t = st_hash_field_new(f, n, NULL, 0, 0);
        h->bytes += st_hash_field_bytes(t);
        idx_relink(slot, old, t);
        stamped(h, t, PGF_TOMB | mask); /* after idx_relink, which copies meta */
        vec_replace(&p->dir[i], old, t);
        st_pg_ovl_count(h, i, st_pg_flags(t), 1);
        if (live) st_ent_live_add(live, old, -1);
        st_hash_field_free(h, old);
        return 1;
    }
    st_pgent_t e;
    if (!st_pg_image_has(p, i, hv, f, n, &e)) return 0;
    idx_entry_t *t = stamped(h, st_hash_field_new(f, n, NULL, 0, 0), 0);
    h->bytes += st_hash_field_bytes(t);
    ovl_insert(h, i, t, PGF_TOMB | PGF_MASK);
    st_pg_ovl_count(h, i, st_pg_flags(t), 1);
    live_add(h, i, -1);
    return 1;
}

/* Visit range i's members with h >= from in (h, name) order: image
 * entries without an overlay entry (materialised) merged with the
 * overlay's live ones. The first *skip members are passed over (counted
 * down), then fn is called for each; its nonzero return stops the walk and
 * is returned. fn must not change h. */
int st_pg_visit_range(st_hash_t *h, uint32_t i, uint64_t from, idx_visit_fn fn, void *arg,
                      uint64_t *skip, int once)
{
    st_paged_t *p = h->pg;
    st_pgdir_t d = p->dir[i];
    uint64_t end = 0;
    int has_end = st_pg_range_end(p, i, &end);
    if (from < d.lo) from = d.lo;
    unsigned char *buf = NULL;
    size_t cap = 0, off = ST_PGIMG_HDR;
    const unsigned char *img = d.lsn ? st_pg_read_into(p, &d, &buf, &cap) : NULL;
    uint32_t nref, at = 0;
    st_pgref_t *ref = st_pg_range_refs(p, i, from, &nref);
    st_pgent_t e;
    int have = 0, rc = 0;
    for (;;) {
        while (!have && img) {
            if (st_pgimg_next(img, d.len, &off, &e) != 1)
                img = NULL;
            else if (e.h >= from && (!has_end || e.h < end))
                have = 1;
        }
        const st_pgref_t *r = at < nref ? &ref[at] : NULL;
        if (!have && !r) break;
        int c = !have ? 1
                : !r  ? -1
                      : st_pgimg_key_cmp(e.h, e.name, e.nlen, r->h, r->f->data, r->f->klen);
        idx_entry_t *f;
        if (c < 0) { /* an image member with no overlay entry */
            have = 0;
            if (*skip) {
                (*skip)--;
                continue;
            }
            /* once: a copy for the call only, not kept to the request's end. */
            f = once ? st_hash_field_new_ram(e.name, e.nlen, e.val, e.vlen)
                     : st_pg_materialise(p, &e);
            rc = fn(arg, f);
            if (once) free(f); /* inline up to 255 bytes, a page's values at most 1024 */
            if (rc) break;
            continue;
        } else { /* an overlay entry, standing for the image's when equal */
            if (c == 0) have = 0;
            f = r->f;
            at++;
            if (st_pg_flags(f) & PGF_TOMB) continue;
            if (*skip) {
                (*skip)--;
                continue;
            }
        }
        rc = fn(arg, f);
        if (rc) break;
    }
    free(ref);
    free(buf);
    return rc;
}

int st_pg_foreach(st_hash_t *h, idx_visit_fn fn, void *arg, int once)
{
    for (uint32_t i = 0; i < h->pg->ndir; i++) {
        uint64_t skip = 0;
        int rc = st_pg_visit_range(h, i, h->pg->dir[i].lo, fn, arg, &skip, once);
        if (rc) return rc;
    }
    return 0;
}

uint64_t st_pg_scan(st_hash_t *h, uint64_t cursor, idx_visit_fn fn, void *arg)
{
    st_paged_t *p = h->pg;
    uint32_t i = st_pg_locate(p, cursor);
    uint64_t skip = 0, end;
    st_pg_visit_range(h, i, cursor, fn, arg, &skip, 0);
    return st_pg_range_end(p, i, &end) ? end : 0;
}

typedef struct nth {
    idx_entry_t *found;
} nth_t;

static int take_first(void *arg, idx_entry_t *f)
{
    ((nth_t *)arg)->found = f;
    return 1;
}

idx_entry_t *st_pg_at(st_hash_t *h, uint32_t k)
{
    if (k >= h->n) return NULL;
    uint64_t rel = k;
    uint32_t i = fen_find(h, &rel);
    if (i >= h->pg->ndir) return NULL;
    nth_t x = {NULL};
    st_pg_visit_range(h, i, h->pg->dir[i].lo, take_first, &x, &rel, 0);
    return x.found;
}

/* ---- the object's operations (hash.c's table calls them when h->pg) ----- */

void st_pg_free(st_hash_t *h)
{
    st_paged_t *p = h->pg;
    for (uint32_t i = 0; i < p->ndir; i++)
        free(p->dir[i].ov);
    free(p->dir);
    free(p->fen);
    free(p);
    h->pg = NULL;
}

void st_pg_bind(st_hash_t *h, store_ctx_t *ctx)
{
    if (h->pg) h->pg->ctx = ctx;
}

typedef struct dup_arg {
    st_hash_t *c;
} dup_arg_t;

static int dup_ovl(void *arg, idx_entry_t *f)
{
    st_hash_t *c = ((dup_arg_t *)arg)->c;
    rec_arg_t name = {f->data, f->klen};
    idx_entry_t *nf = st_ent_dup(f, &name); /* its stamp too (the aux word) */
    c->bytes += st_hash_field_bytes(nf);
    uint64_t before = idx_table_bytes(&c->ix);
    idx_insert(&c->ix, nf);
    st_hash_table_bytes(c, before);
    st_pg_set_flags(nf, st_pg_flags(f)); /* after idx_insert, which sets meta */
    st_pg_vec_add(c, &c->pg->dir[st_pg_locate(c->pg, st_pg_hash(c->pg, f->data, f->klen))], nf);
    return 0;
}

void st_pg_dup(const st_hash_t *h, st_hash_t *c)
{
    const st_paged_t *p = h->pg;
    st_paged_t *q = st_xmalloc(sizeof(*q));
    *q = (st_paged_t){.ctx = p->ctx, .seed = p->seed, .objid = st_pg_new_objid(p->ctx)};
    q->cap = p->cap;
    q->ndir = p->ndir;
    q->dir = st_xmalloc((size_t)q->cap * sizeof(*q->dir));
    memcpy(q->dir, p->dir, (size_t)p->ndir * sizeof(*q->dir));
    for (uint32_t i = 0; i < q->ndir; i++) {
        q->dir[i].busy = 0;
        q->dir[i].ov = NULL; /* the copies' own, below */
        q->dir[i].nov = q->dir[i].capov = 0;
    }
    q->ovl = p->ovl;
    q->pinned = p->pinned;
    c->pg = q;
    c->n = h->n;
    c->bytes += sizeof(*q);
    st_pg_dir_bytes(c, 0, q->cap);
    dup_arg_t x = {c};
    idx_foreach(&h->ix, dup_ovl, &x);
    st_pg_recount(q);
}

static int count_ovl(void *arg, idx_entry_t *f)
{
    const struct {
        st_live_t *t;
        int sign;
    } *a = arg;
    st_ent_live_add(a->t, f, a->sign);
    return 0;
}

void st_pg_count_log(const st_hash_t *h, st_live_t *t, int sign)
{
    const st_paged_t *p = h->pg;
    for (uint32_t i = 0; i < p->ndir; i++)
        if (p->dir[i].lsn) st_live_add(t, p->dir[i].lsn, p->dir[i].len, sign);
    struct {
        st_live_t *t;
        int sign;
    } a = {t, sign};
    idx_foreach(&h->ix, count_ovl, &a);
}

int st_pg_adopt(st_hash_t *h, uint64_t seed, uint64_t objid, st_pgdir_t *dir, uint32_t ndir)
{
    int bad = !ndir || dir[0].lo != 0;
    for (uint32_t i = 0; i < ndir && !bad; i++) {
        if (i && dir[i].lo <= dir[i - 1].lo) bad = 1;
        if (dir[i].lsn ? dir[i].len < ST_PGIMG_HDR : dir[i].len || dir[i].count) bad = 1;
        dir[i].ovl = 0;
        dir[i].busy = 0;
        dir[i].ov = NULL;
        dir[i].nov = dir[i].capov = 0;
    }
    if (bad || h->pg || !h->table) {
        free(dir);
        return -1;
    }
    st_paged_t *p = st_xmalloc(sizeof(*p));
    *p = (st_paged_t){.seed = seed, .objid = objid, .dir = dir, .ndir = ndir, .cap = ndir};
    h->pg = p;
    h->bytes += sizeof(*p);
    st_pg_dir_bytes(h, 0, p->cap);
    return 0;
}

static int loaded_visit(void *arg, idx_entry_t *f)
{
    st_hash_t *h = arg;
    unsigned fl = st_pg_flags(f);
    if (fl & ~(PGF_TOMB | PGF_MASK | PGF_PIN)) return 1;
    if ((fl & PGF_TOMB) && (st_ent_vlen(f) || (fl & PGF_PIN))) return 1;
    if (!(fl & PGF_TOMB) && !(fl & PGF_PIN) != !st_hash_pin_sizes(f->klen, st_ent_vlen(f)))
        return 1;
    uint32_t i = st_pg_locate(h->pg, st_pg_hash(h->pg, f->data, f->klen));
    st_pg_ovl_count(h, i, fl, 1);
    st_pg_vec_add(h, &h->pg->dir[i], f);
    return 0;
}

int st_pg_loaded(st_hash_t *h)
{
    st_paged_t *p = h->pg;
    if (idx_foreach(&h->ix, loaded_visit, h)) return -1;
    uint64_t n = 0;
    for (uint32_t i = 0; i < p->ndir; i++)
        n += p->dir[i].live;
    if (n > UINT32_MAX) return -1;
    h->n = (uint32_t)n;
    st_pg_recount(p);
    return 0;
}

int st_hash_is_paged(const st_hash_t *h)
{
    return h->pg != NULL;
}
