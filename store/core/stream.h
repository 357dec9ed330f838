/*
 * stream.h - the stream type's data structure (core/stream.c): entries
 * ordered by ID, each a list of field-value pairs, plus the stream's
 * counters (last ID, entries added, max deleted ID), and the type's
 * operations table (st_stream_ops). The commands are in types/t_stream.c.
 *
 * Entries are appended at the end (an ID is always above the last one),
 * so the entries are an array in ID order: ranges by binary search,
 * trimming from the head, XDEL moves the tail down.
 */
#ifndef ATTIC_STORE_STREAM_H
#define ATTIC_STORE_STREAM_H

#include <stdint.h>

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

/* Entry i (0 = the smallest ID), i < len. */
const st_sentry_t *st_stream_at(const st_stream_t *s, uint64_t i);
/* The index of the first entry whose ID is >= id (len when none). */
uint64_t st_stream_lower(const st_stream_t *s, st_sid_t id);

/* Append an entry with ID id (above every entry's: the caller checks) and
 * the n arguments pairs[0, n) (n even): counts entries_added and sets
 * last_id. */
void st_stream_append(st_stream_t *s, st_sid_t id, const rec_arg_t *pairs, uint32_t n);
/* Remove entry i (no counter changes). */
void st_stream_remove(st_stream_t *s, uint64_t i);
/* Remove the first n entries. */
void st_stream_drop_head(st_stream_t *s, uint64_t n);

/* Pair k of an entry: *p and *len of its field (2k) or value (2k + 1). */
void st_sentry_item(const st_sentry_t *e, uint32_t k, const unsigned char **p, uint32_t *len);

#endif
