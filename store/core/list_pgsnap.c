/*
 * list_pgsnap.c - a run of a list's elements as a reply in parts (D65):
 * ZRANGE and its forms over a sorted set whose order is in pages go out
 * as their frontend asks for them (D48's parts), the store reading one
 * page at a time, so neither the store's RAM nor its time per turn grows
 * with the run, as a paged hash's HGETALL does (hash_pgsnap.c).
 *
 * Store process only; single-threaded. The reply must be the run as it
 * was when the read was served, although writes go on between its parts:
 * the snapshot takes each clean chunk's page position and window (pages
 * never change in the log) and copies the elements of the RAM chunks (a
 * paged list's few: its ends and the chunks writes copied out of pages,
 * which the pager writes back). The pages it reads are kept from
 * compaction by its lowest LSN (the store's reply pin, store.c). Each
 * element goes out through the caller's put function, which makes its
 * reply bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "list-internal.h"
#include "log.h"
#include "page.h"
#include "value.h"

/* One chunk of the run: a window of a page, or RAM elements copied (each
 * u32 length, then its bytes). */
typedef struct snap_chunk {
    uint64_t lsn;
    uint32_t len, first, n;
    unsigned char *ram;
} snap_chunk_t;

typedef struct lsnap {
    snap_chunk_t *c; /* in reply order */
    uint32_t nc;
    int rev;
    st_lsnap_put_fn put;
    const void *arg;
    void (*arg_free)(const void *arg);
    uint64_t lowest;
    /* Where the next part starts: chunk ci, its elements indexed in p[],
     * pn[] (loaded), the next k of them (counted in reply order). */
    uint32_t ci, k;
    int loaded;
    unsigned char *img;
    size_t cap;
    const unsigned char **p;
    uint32_t *pn, pcap;
} lsnap_t;

static void snap_free(void *state)
{
    lsnap_t *s = state;
    for (uint32_t i = 0; i < s->nc; i++)
        free(s->c[i].ram);
    free(s->c);
    free(s->img);
    free(s->p);
    free(s->pn);
    if (s->arg_free) s->arg_free(s->arg);
    free(s);
}

static uint64_t snap_lowest(const void *state)
{
    return ((const lsnap_t *)state)->lowest;
}

/* Index chunk ci's elements: its window of the page, or its copies. */
static int load(store_ctx_t *ctx, lsnap_t *s)
{
    const snap_chunk_t *c = &s->c[s->ci];
    if (s->pcap < c->n) {
        s->pcap = c->n;
        s->p = st_xrealloc(s->p, (size_t)c->n * sizeof(*s->p));
        s->pn = st_xrealloc(s->pn, (size_t)c->n * sizeof(*s->pn));
    }
    if (!c->lsn) {
        const unsigned char *q = c->ram;
        for (uint32_t t = 0; t < c->n; t++) {
            memcpy(&s->pn[t], q, 4);
            s->p[t] = q + 4;
            q += 4 + s->pn[t];
        }
        s->loaded = 1;
        return 0;
    }
    if (s->cap < c->len) {
        s->img = st_xrealloc(s->img, c->len);
        s->cap = c->len;
    }
    if (st_read_log(ctx, c->lsn, c->len, s->img)) return -1;
    size_t off = ST_PGIMG_HDR;
    const unsigned char *p;
    uint32_t n;
    for (uint32_t t = 0; t < c->first + c->n; t++) {
        if (st_lpimg_next(s->img, c->len, &off, &p, &n) != 1) {
            log_warn("store: a list page at LSN %llu lacks an element it counts",
                     (unsigned long long)c->lsn);
            return -1;
        }
        if (t >= c->first) {
            s->p[t - c->first] = p;
            s->pn[t - c->first] = n;
        }
    }
    s->loaded = 1;
    return 0;
}

static int snap_next(store_ctx_t *ctx, void *state, buf_t *out, size_t max)
{
    lsnap_t *s = state;
    size_t start = out->len;
    while (out->len - start < max) {
        if (s->ci == s->nc) return 1;
        if (!s->loaded && load(ctx, s)) return -1;
        const snap_chunk_t *c = &s->c[s->ci];
        if (s->k == c->n) {
            s->ci++;
            s->k = 0;
            s->loaded = 0;
            continue;
        }
        uint32_t t = s->rev ? c->n - 1 - s->k : s->k;
        s->put(s->arg, s->p[t], s->pn[t], out);
        s->k++;
    }
    return s->ci == s->nc ? 1 : 0;
}

static const st_vgen_ops_t snap_ops = {snap_next, snap_lowest, snap_free};

struct st_vsnap *st_list_run_snapshot(st_list_t *l, uint32_t from, uint32_t count, int rev,
                                      st_lsnap_put_fn put, const void *arg,
                                      void (*arg_free)(const void *arg))
{
    lsnap_t *s = st_xmalloc(sizeof(*s));
    memset(s, 0, sizeof(*s));
    s->rev = rev;
    s->put = put;
    s->arg = arg;
    s->arg_free = arg_free;
    s->lowest = UINT64_MAX;
    if (from >= l->n) count = 0;
    uint32_t j = 0, k = 0, cap = 0;
    if (count) st_list_locate(l, from, &j, &k);
    unsigned char *tmp = NULL;
    size_t tcap = 0;
    while (count) {
        const st_lchunk_t *ch = st_lch(l, j);
        /* The part of chunk j in the run, as a window [a, a + m). */
        uint32_t m = rev ? k + 1 : ch->n - k, a = rev ? k + 1 - (m < count ? m : count) : k;
        if (m > count) m = count;
        if (s->nc == cap) {
            cap = cap ? cap * 2 : 8;
            s->c = st_xrealloc(s->c, (size_t)cap * sizeof(*s->c));
        }
        snap_chunk_t *c = &s->c[s->nc++];
        *c = (snap_chunk_t){ch->lsn, ch->len, ch->first + a, m, NULL};
        if (ch->lsn) {
            if (ch->lsn < s->lowest) s->lowest = ch->lsn;
        } else { /* RAM: its elements copied */
            c->first = 0;
            buf_t b;
            buf_init(&b);
            for (uint32_t t = a; t < a + m; t++) {
                st_lelem_t x = {ch->v[ch->first + t], NULL, 0};
                const unsigned char *p;
                uint32_t n = (uint32_t)st_ent_vlen(x.e);
                if (st_lelem_bytes(l->ctx, &x, &p, &tmp, &tcap)) {
                    buf_free(&b);
                    free(tmp);
                    snap_free(s);
                    return NULL;
                }
                buf_append(&b, &n, 4);
                buf_append(&b, p, n);
            }
            c->ram = (unsigned char *)b.data;
        }
        count -= m;
        if (rev && j) { /* the chunk before, from its last */
            j--;
            k = st_lch(l, j)->n - 1;
        } else {
            j++;
            k = 0;
        }
    }
    free(tmp);
    struct st_vsnap *v = st_vsnap_gen(&snap_ops, s);
    if (!v) snap_free(s);
    return v;
}
