/*
 * stream_snap.c - XRANGE and XREVRANGE over a stream with pages as a
 * reply in parts (D64, as hash_pgsnap.c does for HGETALL of a paged hash,
 * D60): the entries go out as their frontend asks for them (D48's parts),
 * the store reading one page at a time, so neither the store's RAM nor its
 * time per turn grows with the range.
 *
 * Store process only; single-threaded. The reply must be the range as it
 * was when the read was served, although writes go on between its parts:
 * the snapshot takes, per chunk the range covers, its page window (pages
 * never change in the log) or a copy of its RAM entries (RAM chunks are
 * the last one and those the pager has not written yet: bounded by the
 * pager, D64). The pages it reads are kept from compaction by its lowest
 * LSN (the store's reply pin, store.c).
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "stream-internal.h"
#include "value.h"

/* One chunk's share of the range, in the order it goes out. */
typedef struct snap_part {
    uint64_t lsn; /* a page window [first, first + n), or 0: */
    uint32_t len, first, n;
    st_sentry_t **e; /* copies of n RAM entries */
} snap_part_t;

typedef struct ssnap {
    snap_part_t *p;
    uint32_t np;
    int rev;
    uint64_t lowest;
    uint32_t pi, k; /* the next entry: part pi, its k-th in the order given */
    st_spview_t view;
    buf_t one;
} ssnap_t;

static void snap_free(void *state)
{
    ssnap_t *s = state;
    for (uint32_t i = 0; i < s->np; i++) {
        for (uint32_t k = 0; !s->p[i].lsn && k < s->p[i].n; k++)
            free(s->p[i].e[k]);
        free(s->p[i].e);
    }
    free(s->p);
    st_spview_free(&s->view);
    buf_free(&s->one);
    free(s);
}

static uint64_t snap_lowest(const void *state)
{
    return ((const ssnap_t *)state)->lowest;
}

static int snap_next(store_ctx_t *ctx, void *state, buf_t *out, size_t max)
{
    ssnap_t *s = state;
    size_t start = out->len;
    while (out->len - start < max) { /* past max: st_vsnap_gen_next keeps the rest */
        if (s->pi == s->np) return 1;
        const snap_part_t *p = &s->p[s->pi];
        if (s->k == p->n) {
            s->pi++;
            s->k = 0;
            continue;
        }
        uint32_t at = s->rev ? p->n - 1 - s->k : s->k;
        s->k++;
        if (!p->lsn) {
            st_sentry_reply(out, p->e[at]);
            continue;
        }
        if (st_spview_read(&s->view, ctx, p->lsn, p->len)) return -1;
        size_t size = st_spview_entry_size(&s->view, p->first + at);
        buf_reset(&s->one);
        buf_reserve(&s->one, size);
        st_spview_entry(&s->view, p->first + at, (st_sentry_t *)s->one.data);
        st_sentry_reply(out, (const st_sentry_t *)s->one.data);
    }
    return 0;
}

static const st_vgen_ops_t snap_ops = {snap_next, snap_lowest, snap_free};

struct st_vsnap *st_stream_range_snapshot(st_stream_t *s, uint64_t from, uint64_t n, int rev)
{
    ssnap_t *sn = st_xmalloc(sizeof(*sn));
    memset(sn, 0, sizeof(*sn));
    sn->rev = rev;
    sn->lowest = UINT64_MAX;
    buf_init(&sn->one);
    /* The chunks the range covers, from the one holding `from` on (back
     * towards the first when rev). */
    st_stream_iter_t it;
    st_stream_iter_init(&it, s, from, n, rev);
    uint64_t left = it.left;
    uint32_t j = it.j, k = it.k;
    st_stream_iter_free(&it);
    sn->p = st_xmalloc(((size_t)s->nc + 1) * sizeof(*sn->p));
    while (left) {
        const st_schunk_t *ch = st_sch(s, j);
        uint32_t lo = rev ? 0 : k, hi = rev ? k + 1 : ch->n; /* [lo, hi) of the chunk */
        if (hi - lo > left) {
            if (rev)
                lo = hi - (uint32_t)left;
            else
                hi = lo + (uint32_t)left;
        }
        snap_part_t *p = &sn->p[sn->np++];
        memset(p, 0, sizeof(*p));
        p->n = hi - lo;
        if (ch->lsn) {
            p->lsn = ch->lsn;
            p->len = ch->len;
            p->first = ch->first + lo;
            if (ch->lsn < sn->lowest) sn->lowest = ch->lsn;
        } else {
            p->e = st_xmalloc((size_t)p->n * sizeof(*p->e));
            for (uint32_t t = 0; t < p->n; t++) {
                const st_sentry_t *e = ch->v[lo + t];
                p->e[t] = st_xmalloc(st_sentry_bytes(e));
                memcpy(p->e[t], e, st_sentry_bytes(e));
            }
        }
        left -= p->n;
        if (!left) break;
        if (rev) {
            j--;
            k = st_sch(s, j)->n - 1;
        } else {
            j++;
            k = 0;
        }
    }
    struct st_vsnap *v = st_vsnap_gen(&snap_ops, sn);
    if (!v) snap_free(sn);
    return v;
}
