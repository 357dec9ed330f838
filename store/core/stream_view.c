/*
 * stream_view.c - a stream's page read back (D64): the "PSv1" image that
 * core/page.h describes, parsed and checked, indexed (each entry's ID,
 * where its pairs start, whose field names it uses) so that entry t is
 * found without a scan, and copied out as an st_sentry_t. core/stream.c
 * reads its clean chunks through it (each stream keeps one view: its last
 * page), core/stream_snap.c a reply's pages, core/stream_page.c checks
 * the images a CMD_SPAGE carries with it.
 *
 * Store process only (and tests and tools); single-threaded. A page that
 * cannot be read or does not parse while the state needs it stops the
 * store (st_spview_load: the state could no longer follow the log); a
 * reply's reader only fails its reply (st_spview_read).
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "command.h"
#include "log.h"
#include "page.h"
#include "stream-internal.h"
#include "value.h"

/* The varint at img[*off, len): 0 with *v set and *off moved, -1 when
 * malformed. */
static int get_varint(const unsigned char *img, size_t len, size_t *off, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 64 && *off < len; shift += 7) {
        unsigned char c = img[(*off)++];
        if (shift == 63 && c > 1) return -1;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* Skip n items at img[*off, len): 0 with *data the sum of 4 + their
 * lengths, -1 when malformed. */
static int skip_items(const unsigned char *img, size_t len, size_t *off, uint64_t n, uint64_t *data)
{
    *data = 0;
    for (uint64_t k = 0; k < n; k++) {
        uint64_t l;
        if (get_varint(img, len, off, &l) || l > len - *off) return -1;
        *off += (size_t)l;
        *data += 4 + l;
    }
    return 0;
}

/* Parse image img[0, len): its count (with *first the first ID), or -1.
 * When v is not NULL, its index is filled. Data over max bytes, IDs not
 * ascending, a `same` entry with no previous one or another pair count,
 * or a count other than the header's are malformed. */
static long parse(const unsigned char *img, size_t len, uint32_t max, st_spview_t *v,
                  st_sid_t *first)
{
    if (len < ST_PGIMG_HDR || cmd_get_u32(img) != ST_SPIMG_MAGIC || cmd_get_i64(img + 8) != 0)
        return -1;
    uint32_t want = cmd_get_u32(img + 4), t = 0, src = 0;
    uint64_t npairs = 0, fields = 0; /* the field names in use: their entry, pairs, bytes */
    st_sid_t prev = {0, 0};
    size_t off = ST_PGIMG_HDR;
    if (v && v->icap < want) {
        v->icap = want;
        v->ids = st_xrealloc(v->ids, (size_t)want * sizeof(*v->ids));
        v->off = st_xrealloc(v->off, (size_t)want * sizeof(*v->off));
        v->fsrc = st_xrealloc(v->fsrc, (size_t)want * sizeof(*v->fsrc));
    }
    for (; off < len; t++) {
        uint64_t dms, dseq, head, data;
        if (t == want || get_varint(img, len, &off, &dms) || get_varint(img, len, &off, &dseq))
            return -1;
        st_sid_t id = {dms, dseq};
        if (t) {
            if (dms > UINT64_MAX - prev.ms) return -1;
            id.ms = prev.ms + dms;
            if (!dms && (prev.seq == UINT64_MAX || dseq > UINT64_MAX - prev.seq - 1)) return -1;
            if (!dms) id.seq = prev.seq + 1 + dseq;
        } else {
            *first = id;
        }
        size_t at = off;
        if (get_varint(img, len, &off, &head)) return -1;
        uint64_t n = head >> 1;
        int same = (int)(head & 1);
        if (!n || n > len || (same && (!t || n != npairs))) return -1;
        if (skip_items(img, len, &off, same ? n : 2 * n, &data)) return -1;
        if (!same) {
            src = t;
            npairs = n;
            fields = 0;
            size_t f = at; /* the field names' bytes, for the entries that repeat them */
            uint64_t h, l;
            get_varint(img, len, &f, &h);
            for (uint64_t k = 0; k < 2 * n; k++) {
                get_varint(img, len, &f, &l);
                f += (size_t)l;
                if (k % 2 == 0) fields += 4 + l;
            }
        } else {
            data += fields;
        }
        if (data > max) return -1;
        if (v) {
            v->ids[t] = id;
            v->off[t] = (uint32_t)at;
            v->fsrc[t] = src;
        }
        prev = id;
    }
    return t == want ? (long)t : -1;
}

long st_spimg_check(const unsigned char *img, size_t len, uint32_t max, st_sid_t *first)
{
    return parse(img, len, max, NULL, first);
}

int st_spimg_first(const unsigned char *img, size_t len, st_sid_t *first)
{
    size_t off = ST_PGIMG_HDR;
    if (len < ST_PGIMG_HDR || cmd_get_u32(img) != ST_SPIMG_MAGIC || !cmd_get_u32(img + 4))
        return -1;
    return get_varint(img, len, &off, &first->ms) || get_varint(img, len, &off, &first->seq) ? -1
                                                                                             : 0;
}

int st_spview_read(st_spview_t *v, store_ctx_t *ctx, uint64_t lsn, uint32_t len)
{
    if (v->lsn == lsn && v->len == len && lsn) return 0;
    v->lsn = 0;
    if (v->cap < len) {
        v->img = st_xrealloc(v->img, len);
        v->cap = len;
    }
    if (st_read_log(ctx, lsn, len, v->img)) return -1;
    st_sid_t first;
    long n = parse(v->img, len, UINT32_MAX, v, &first);
    if (n < 0) {
        log_warn("store: the stream page at LSN %llu does not parse", (unsigned long long)lsn);
        return -1;
    }
    v->count = (uint32_t)n;
    v->lsn = lsn;
    v->len = len;
    return 0;
}

void st_spview_load(st_spview_t *v, store_ctx_t *ctx, uint64_t lsn, uint32_t len)
{
    if (st_spview_read(v, ctx, lsn, len) == 0) return;
    log_warn("store: cannot read the stream page at LSN %llu (%u bytes): the state would no "
             "longer follow the log; stopping",
             (unsigned long long)lsn, len);
    exit(EXIT_FATAL);
}

void st_spview_free(st_spview_t *v)
{
    free(v->img);
    free(v->ids);
    free(v->off);
    free(v->fsrc);
    memset(v, 0, sizeof(*v));
}

/* Entry t's pair count and where its items start (after its head). */
static uint32_t entry_head(const st_spview_t *v, uint32_t t, size_t *items, int *same)
{
    size_t off = v->off[t];
    uint64_t head;
    get_varint(v->img, v->len, &off, &head); /* parsed when loaded */
    *items = off;
    *same = (int)(head & 1);
    return (uint32_t)(head >> 1);
}

/* The next item at *off: its bytes and length. */
static const unsigned char *next_item(const st_spview_t *v, size_t *off, uint32_t *n)
{
    uint64_t l;
    get_varint(v->img, v->len, off, &l);
    const unsigned char *p = v->img + *off;
    *off += (size_t)l;
    *n = (uint32_t)l;
    return p;
}

/* Entry t as an st_sentry_t into out (NULL: none): its size. Its items
 * alternate field and value, or, when it repeats its source's field
 * names, are the values, the names read from the source's items. */
static size_t entry_walk(const st_spview_t *v, uint32_t t, st_sentry_t *out)
{
    size_t vo, fo;
    int same, fsame;
    uint32_t npairs = entry_head(v, t, &vo, &same), n;
    entry_head(v, v->fsrc[t], &fo, &fsame);
    unsigned char *d = out ? out->data : NULL;
    size_t size = 0;
    for (uint32_t k = 0; k < 2 * npairs; k++) {
        const unsigned char *p;
        if (same && k % 2 == 0)
            p = next_item(v, &fo, &n); /* the source's field, then its value skipped */
        else
            p = next_item(v, &vo, &n);
        if (same && k % 2 == 0) {
            uint32_t skip;
            next_item(v, &fo, &skip);
        }
        size += 4 + (size_t)n;
        if (!d) continue;
        cmd_put_u32(d, n);
        memcpy(d + 4, p, n);
        d += 4 + n;
    }
    if (out) {
        out->id = v->ids[t];
        out->npairs = npairs;
        out->size = (uint32_t)size;
    }
    return sizeof(st_sentry_t) + size;
}

size_t st_spview_entry_size(const st_spview_t *v, uint32_t t)
{
    return entry_walk(v, t, NULL);
}

void st_spview_entry(const st_spview_t *v, uint32_t t, st_sentry_t *out)
{
    entry_walk(v, t, out);
}
