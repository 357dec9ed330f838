/*
 * live.c - live bytes per log segment (live.h): a growable array of
 * counters indexed by segment number, the lowest segment first.
 *
 * Store process only (and tests); single-threaded. Invariant: t->total is
 * the sum of t->v, and v[i] is the number of log bytes of segment
 * base + i that some entry refers to (core/entry.c's st_ent_count_log is
 * the one walk of an entry's references; core/value.c counts the pieces
 * it splices in and out). It is rebuilt, never stored: loading a
 * checkpoint stores every entry (st_ent_store counts it) and replay
 * applies records with the same code as live operation, so a restart
 * reaches the same table (tests/test_live checks it against a recount).
 * A counter going below zero would be a bookkeeping bug: it is logged,
 * clamped at zero and the table marked broken, and the store then deletes
 * no segment at all (a clamped counter could make a referenced segment
 * look dead). A crash loses nothing: the table is rebuilt at start.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "live.h"
#include "log.h"

void st_live_init(st_live_t *t, uint64_t seg_size)
{
    memset(t, 0, sizeof(*t));
    t->seg_size = seg_size;
}

void st_live_free(st_live_t *t)
{
    free(t->v);
    t->v = NULL;
    t->n = 0;
}

/* Make room for segment number s. */
static void cover(st_live_t *t, uint64_t s)
{
    if (!t->n) {
        t->base = s;
        t->n = 16;
        t->v = st_xmalloc(t->n * sizeof(uint64_t));
        memset(t->v, 0, t->n * sizeof(uint64_t));
        return;
    }
    if (s >= t->base && s < t->base + t->n) return;
    uint64_t lo = s < t->base ? s : t->base;
    uint64_t hi = s >= t->base + t->n ? s + 1 : t->base + t->n;
    uint64_t n = t->n;
    while (n < hi - lo)
        n *= 2;
    uint64_t *v = st_xmalloc(n * sizeof(uint64_t));
    memset(v, 0, n * sizeof(uint64_t));
    memcpy(v + (t->base - lo), t->v, t->n * sizeof(uint64_t));
    free(t->v);
    t->v = v;
    t->base = lo;
    t->n = n;
}

void st_live_add(st_live_t *t, uint64_t lsn, uint64_t len, int sign)
{
    if (!t->seg_size) return; /* a context made without a log (some unit tests) */
    while (len > 0) {
        uint64_t s = lsn / t->seg_size;
        uint64_t chunk = (s + 1) * t->seg_size - lsn;
        if (chunk > len) chunk = len;
        cover(t, s);
        uint64_t *c = &t->v[s - t->base];
        if (sign > 0) {
            *c += chunk;
            t->total += chunk;
        } else if (*c < chunk) {
            log_warn("store: live bytes of segment %" PRIu64 " would go below zero (%" PRIu64
                     " - %" PRIu64 "): a bookkeeping bug; no segment is deleted from now on",
                     s * t->seg_size, *c, chunk);
            t->total -= *c;
            *c = 0;
            t->broken = 1;
        } else {
            *c -= chunk;
            t->total -= chunk;
        }
        lsn += chunk;
        len -= chunk;
    }
}

uint64_t st_live_get(const st_live_t *t, uint64_t seg_start)
{
    if (!t->seg_size) return 0;
    uint64_t s = seg_start / t->seg_size;
    return t->n && s >= t->base && s < t->base + t->n ? t->v[s - t->base] : 0;
}

uint64_t st_live_lowest(const st_live_t *t)
{
    for (uint64_t i = 0; i < t->n; i++)
        if (t->v[i]) return (t->base + i) * t->seg_size;
    return UINT64_MAX;
}

int st_live_equal(const st_live_t *a, const st_live_t *b)
{
    if (a->total != b->total) return 0;
    for (uint64_t i = 0; i < a->n; i++) {
        uint64_t s = (a->base + i) * a->seg_size;
        if (a->v[i] != st_live_get(b, s)) return 0;
    }
    for (uint64_t i = 0; i < b->n; i++) {
        uint64_t s = (b->base + i) * b->seg_size;
        if (b->v[i] != st_live_get(a, s)) return 0;
    }
    return 1;
}
