/*
 * live.h - live bytes per log segment (core/live.c): how many bytes of each
 * segment the state still refers to (extents and LOG pieces). What decides
 * when a segment may be deleted (store/compact.c) and which segments are
 * worth relocating. A table of counters and nothing else: it knows nothing
 * of entries (core/entry.c and core/value.c count and uncount their
 * references here).
 */
#ifndef ATTIC_STORE_LIVE_H
#define ATTIC_STORE_LIVE_H

#include <stdint.h>

/* Counters for segments base .. base + n - 1 (segment numbers: LSN /
 * segment size), grown on demand; v[i] = live bytes of segment base + i. */
typedef struct st_live {
    uint64_t seg_size;
    uint64_t base, n;
    uint64_t *v;
    uint64_t total; /* sum of v */
    int broken;     /* a counter went below zero: delete nothing */
} st_live_t;

void st_live_init(st_live_t *t, uint64_t seg_size);
void st_live_free(st_live_t *t);
/* Count (sign > 0) or uncount (sign < 0) the log bytes [lsn, lsn + len),
 * split at segment ends (a record never crosses one, so neither does any
 * of its bytes' ranges; the split costs nothing and keeps this exact). */
void st_live_add(st_live_t *t, uint64_t lsn, uint64_t len, int sign);
/* Live bytes of the segment starting at seg_start. */
uint64_t st_live_get(const st_live_t *t, uint64_t seg_start);
/* Lowest segment start with live bytes, or UINT64_MAX when none. */
uint64_t st_live_lowest(const st_live_t *t);
/* Equal tables (segments outside either's range count 0). */
int st_live_equal(const st_live_t *a, const st_live_t *b);

#endif
