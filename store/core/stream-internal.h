/*
 * stream-internal.h - what core/stream.c (the stream's chunks, positions
 * and operations table), core/stream_view.c (a stream page read back),
 * core/stream_page.c (the page written, CMD_SPAGE's apply, the pager's
 * builder, the checks) and core/stream_snap.c (replies in parts) share:
 * the structure itself. Private to those files; everything else goes
 * through stream.h. Calls go one way: stream_page.c and stream_snap.c ->
 * stream.c -> stream_view.c.
 */
#ifndef ATTIC_STORE_STREAM_INTERNAL_H
#define ATTIC_STORE_STREAM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "chunked.h"
#include "sgroup.h"
#include "stream.h"

/* A RAM chunk takes appends while it has fewer than this many entries and
 * entry bytes (sizeof(st_sentry_t) + data each). Fixed, not configured:
 * chunk boundaries are state (page records name chunks), so live runs and
 * replays must cut them alike. */
#define ST_SCHUNK_ENTRIES 128u
#define ST_SCHUNK_BYTES   4096u

/* One chunk: consecutive entries, either in RAM (lsn 0: v[0, n)) or clean
 * (entries [first, first + n) of the stream page of len bytes at lsn, a
 * CMD_SPAGE argument): the fields every chunked collection's chunk has
 * (core/chunked.h; vbytes: entry bytes, ST_SCHUNK_BYTES), then fid, its
 * first entry's ID either way (a lookup by ID finds its chunk without
 * reading a page), and its position. */
typedef struct st_schunk {
    union {
        st_cchunk_t c;
        struct {
            ST_CCHUNK_FIELDS;
        };
    };
    st_sid_t fid;
    uint64_t before; /* entries before it, plus s->base (stream.c: positions) */
    st_sentry_t **v;
} st_schunk_t;

/* A stream page read back, and the index of its entries (stream_page.c):
 * entry t's ID, where its pairs start and which entry's field names it
 * uses (itself, or an earlier one whose names it repeats). */
typedef struct st_spview {
    uint64_t lsn; /* the page held (0: none) */
    uint32_t len;
    unsigned char *img;
    size_t cap;
    uint32_t count, icap;
    st_sid_t *ids;
    uint32_t *off, *fsrc;
} st_spview_t;

struct st_stream {
    st_obj_t obj;
    store_ctx_t *ctx; /* reads pages through it (bound: stream.c's banner) */
    st_schunk_t *c;   /* chunks c[c0, c0 + nc): slack before them */
    uint32_t c0, nc, ccap;
    uint32_t pos_ok; /* chunks [0, pos_ok) have their before right */
    uint64_t n;      /* entries */
    uint64_t base;   /* chunk j starts at position c[j].before - base */
    uint64_t bytes;  /* RAM held, without the groups (stream.c's banner) */
    st_ccounts_t cc; /* the pager's counts (core/chunked.h) */
    st_stream_meta_t meta;
    st_sgroups_t groups; /* consumer groups (sgroup.c, D42) */
};

static inline st_schunk_t *st_sch(const st_stream_t *s, uint32_t j)
{
    return &s->c[s->c0 + j];
}

/* Whether an entry of this data size goes into pages (else pinned). */
static inline int st_sentry_pageable(uint32_t size)
{
    return size <= ST_STREAM_PAGE_ENTRY_MAX;
}

/* s's chunks as core/chunked.c sees them. */
static inline st_chunks_t st_stream_chunks(const st_stream_t *s)
{
    return (st_chunks_t){(char *)(s->c + s->c0), sizeof(*s->c), s->nc, NULL, NULL};
}

/* Take chunk ch's contribution out of s's counts (sign -1) or put it back
 * (+1), around a change of it. */
static inline void st_sch_count(st_stream_t *s, const st_schunk_t *ch, int sign)
{
    st_ccounts_add(&s->cc, &ch->c, sign);
}

/* ---- stream.c, for stream_page.c and stream_snap.c ---- */

/* Make room for `add` chunks at j (shifting the rest), return the first,
 * zeroed; remove chunks [j, j + k). Positions from j on are recomputed
 * when next needed. */
st_schunk_t *st_stream_chunks_open(st_stream_t *s, uint32_t j, uint32_t add);
void st_stream_chunks_close(st_stream_t *s, uint32_t j, uint32_t k);
/* Put entry e at the end of RAM chunk ch (s's bytes counted), free a RAM
 * chunk's array. */
void st_sch_append(st_stream_t *s, st_schunk_t *ch, st_sentry_t *e);
void st_sch_free_ram(st_stream_t *s, st_schunk_t *ch);
/* An entry's RAM (requested bytes). */
static inline uint64_t st_sentry_bytes(const st_sentry_t *e)
{
    return sizeof(*e) + e->size;
}
/* The last chunk whose first ID is at or below id (nc: none). */
uint32_t st_stream_chunk_of(const st_stream_t *s, st_sid_t id);
/* The view of clean chunk ch's page: the context's (ctx->spview, read
 * when it holds another page; valid until the next call). */
st_spview_t *st_stream_view(st_stream_t *s, const st_schunk_t *ch);

/* ---- stream_view.c: a stream page read back (core/page.h) ---- */

/* Load the page of len bytes at lsn into v unless it holds it: read from
 * the log through ctx, then indexed. A page that cannot be read or does
 * not parse stops the store (the state could no longer follow the log). */
void st_spview_load(st_spview_t *v, store_ctx_t *ctx, uint64_t lsn, uint32_t len);
/* The same for a reader that survives it (a reply in parts): 0, or -1
 * when the page cannot be read or does not parse (logged). */
int st_spview_read(st_spview_t *v, store_ctx_t *ctx, uint64_t lsn, uint32_t len);
void st_spview_free(st_spview_t *v);
/* Entry t of the page: its size as an st_sentry_t (header and data), and
 * a copy of it into out (that many bytes). */
size_t st_spview_entry_size(const st_spview_t *v, uint32_t t);
void st_spview_entry(const st_spview_t *v, uint32_t t, st_sentry_t *out);
/* A whole image checked (stream_view.c): a stream page whose entries fill it exactly,
 * agree with its count, have IDs in strictly ascending order and data of
 * at most max bytes each: its count (with *first the first entry's ID),
 * or -1. */
long st_spimg_check(const unsigned char *img, size_t len, uint32_t max, st_sid_t *first);
/* The first entry's ID of what looks like a stream page (its header and
 * that ID only): 0, or -1. */
int st_spimg_first(const unsigned char *img, size_t len, st_sid_t *first);

#endif
