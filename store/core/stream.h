/*
 * stream.h - the stream type's data structure (core/stream.c, D39, D64):
 * entries ordered by ID, each a list of field-value pairs, in chunks that
 * are in RAM or in pages of the log, plus the stream's counters (last ID,
 * entries added, max deleted ID), its consumer groups (sgroup.h), and the
 * type's operations table (st_stream_ops). The commands are in
 * types/t_stream*.c; the pages' records in core/stream_page.c.
 *
 * Entries are appended at the end (an ID is always above the last one):
 * a lookup by ID or by position costs O(log chunks) and at most one page
 * read, trimming drops whole chunks from the head, XDEL inside a page
 * copies that page's entries into RAM until the pager writes them again.
 */
#ifndef ATTIC_STORE_STREAM_H
#define ATTIC_STORE_STREAM_H

#include <stdint.h>

#include "buf.h"
#include "entry.h"
#include "object.h"

/* A stream entry ID: milliseconds and sequence, compared in that order. */
typedef struct st_sid {
    uint64_t ms, seq;
} st_sid_t;

/* An entry: its ID and its pairs, laid out as u32 length + bytes each
 * (field, value, field, value ...). */
typedef struct st_sentry {
    st_sid_t id;
    uint32_t npairs;
    uint32_t size; /* bytes of data */
    unsigned char data[];
} st_sentry_t;

typedef struct st_stream st_stream_t;

extern const st_type_ops_t st_stream_ops;

/* Entries whose data is longer than this never go into a page: they stay
 * in RAM (pinned), as a paged hash's long members do (D60). */
#define ST_STREAM_PAGE_ENTRY_MAX 16384u

static inline int st_sid_cmp(st_sid_t a, st_sid_t b)
{
    if (a.ms != b.ms) return a.ms < b.ms ? -1 : 1;
    if (a.seq != b.seq) return a.seq < b.seq ? -1 : 1;
    return 0;
}

st_stream_t *st_stream_new(void);
void st_stream_free(st_stream_t *s);

static inline st_stream_t *st_ent_stream(idx_entry_t *e)
{
    return (st_stream_t *)st_ent_obj(e);
}

uint64_t st_stream_len(const st_stream_t *s);
/* RAM held, requested bytes (st_stream_ops.mem_usage). */
uint64_t st_stream_bytes(const st_stream_t *s);

/* The counters XINFO reports and XSETID sets. */
typedef struct st_stream_meta {
    st_sid_t last_id;     /* the last ID generated (not necessarily present) */
    st_sid_t max_deleted; /* the largest ID deleted by XDEL */
    uint64_t entries_added;
} st_stream_meta_t;

st_stream_meta_t *st_stream_meta(st_stream_t *s);
const st_stream_meta_t *st_stream_meta_c(const st_stream_t *s);

/* The stream's consumer groups (sgroup.h). */
struct st_sgroups *st_stream_groups(st_stream_t *s);

/*
 * Entry i (0 = the smallest ID), i < len: a RAM entry itself, or a copy of
 * one in a page, handed out until st_hash_mat_reset (the end of the record
 * or request being served, core/hash.h). O(1) at either end, O(log
 * chunks) elsewhere, plus a page read when its page is not the one read
 * last. A walk over many entries takes the iterator below instead.
 */
const st_sentry_t *st_stream_at(st_stream_t *s, uint64_t i);
/* The ID of entry i, without copying the entry. */
st_sid_t st_stream_id_at(st_stream_t *s, uint64_t i);
/* The index of the first entry whose ID is >= id (len when none). */
uint64_t st_stream_lower(st_stream_t *s, st_sid_t id);

/*
 * Changes. ctx stamps the chunks changed (the pager's records name them by
 * stamp, D64), counts the pages dropped in ctx->live and reads pages; NULL
 * for a stream not in an index yet (no pages).
 */
/* Append an entry with ID id (above every entry's: the caller checks) and
 * the n arguments pairs[0, n) (n even): counts entries_added and sets
 * last_id. */
void st_stream_append(store_ctx_t *ctx, st_stream_t *s, st_sid_t id, const rec_arg_t *pairs,
                      uint32_t n);
/* Remove entry i (no counter changes). In a page, the page's entries are
 * copied into RAM first. */
void st_stream_remove(store_ctx_t *ctx, st_stream_t *s, uint64_t i);
/* Remove the first n entries: whole chunks in O(1) each, then at most one
 * page read to find the new first entry's ID. */
void st_stream_drop_head(store_ctx_t *ctx, st_stream_t *s, uint64_t n);

/* Free ctx's stream page view (store_ctx_destroy). */
void st_stream_ctx_free(store_ctx_t *ctx);

/* Pair k of an entry: *p and *len of its field (2k) or value (2k + 1). */
void st_sentry_item(const st_sentry_t *e, uint32_t k, const unsigned char **p, uint32_t *len);
/* An entry's reply: [id, [field, value, ...]]. */
void st_sentry_reply(buf_t *r, const st_sentry_t *e);

/* ---- walking the entries in order ---- */

typedef struct st_stream_iter {
    st_stream_t *s;
    uint32_t j, k; /* the next entry: chunk j, its k-th */
    uint64_t left; /* entries still to give */
    int rev;       /* from the last towards the first */
    buf_t one;     /* the entry given, when it came from a page */
} st_stream_iter_t;

/* count entries from position from (towards the first when rev: from,
 * from - 1, ...). st_stream_next returns the next entry, valid until the
 * next call (NULL when done). The stream must not change while an
 * iterator is open. Free with st_stream_iter_free. */
void st_stream_iter_init(st_stream_iter_t *it, st_stream_t *s, uint64_t from, uint64_t count,
                         int rev);
const st_sentry_t *st_stream_next(st_stream_iter_t *it);
void st_stream_iter_free(st_stream_iter_t *it);

/* XRANGE and XREVRANGE of a stream with pages as a reply in parts (D48's
 * parts, made as they go: core/stream_snap.c): the n entries from
 * position from (towards the first when rev), as of now, whatever the
 * writes between the parts; the array's header is the caller's. NULL
 * when out of memory. */
struct st_vsnap *st_stream_range_snapshot(st_stream_t *s, uint64_t from, uint64_t n, int rev);
/* Whether any of s's chunks is a page. */
int st_stream_has_pages(const st_stream_t *s);

/* ---- pages (core/stream_page.c, D64) ---- */

struct apply_args;
struct st_pgpolicy;
struct st_cpbuilt;

/* CMD_SPAGE's change (types/t_page.c checked the argument count): the
 * chunks the record names by stamp become its pages and pinned runs.
 * Returns 0, or -1 when the record does not fit s (a no-op). */
int st_stream_page_apply(store_ctx_t *ctx, st_stream_t *s, const struct apply_args *a);
/* What the pager (store/pager.c) does with s under pol: 0, or
 * ST_PAGE_WANT_BUILD (core/hash.h's values) when chunks want a record:
 * RAM chunks between the first and the last, or pages below pol->below.
 * O(1) unless pol->below passed the stream's lowest page since it was last
 * looked for (core/chunked.h). */
int st_stream_page_wanted(st_stream_t *s, const struct st_pgpolicy *pol);
/* RAM chunks past which the pager is behind the writes and catches up
 * past its rate. */
#define ST_STREAM_BEHIND_CHUNKS 64u
int st_stream_page_behind(const st_stream_t *s);
/* Build the next record (one CMD_SPAGE's arguments after the key) into
 * out (ST_PAGE_* results of core/hash.h); the chunks it covers are marked
 * busy until st_stream_page_unbusy. */
int st_stream_page_build(store_ctx_t *ctx, st_stream_t *s, const struct st_pgpolicy *pol,
                         struct st_cpbuilt *out);
void st_stream_page_unbusy(st_stream_t *s);
/* DEBUG PAGED's figures: [paged, chunks, pages, page bytes, entries in
 * RAM, pinned, entries]. */
void st_stream_page_stats(const st_stream_t *s, long long v[7]);
/* Tests: NULL when s's chunks, counts, positions and pages agree, else
 * what does not. */
const char *st_stream_check(st_stream_t *s);

#endif
