/*
 * hash.h - the hash type's data structure (core/hash.c): a key's fields
 * and their values, and the type's operations table (st_hash_ops, for
 * entry.c, COPY, the digest and checkpoints). The commands are in
 * types/t_hash.c.
 *
 * A field is an idx_entry_t laid out as a string entry (entry.h): the
 * field's name where a key's bytes are, then its value inline, as one log
 * extent, or as a piece list held in RAM, so core/value.c's readers and
 * replies serve a field's value as they serve a string's (st_ent_vlen,
 * st_read_value, st_reply_value on the field). It always has room for the aux word
 * (entry.h): a set's member's place in its order in the hashtable encoding
 * (hash.c), a paged overlay entry's stamp (hash_paged.c).
 */
#ifndef ATTIC_STORE_HASH_H
#define ATTIC_STORE_HASH_H

#include <stdint.h>

#include "entry.h"
#include "object.h"

typedef struct st_hash st_hash_t;

extern const st_type_ops_t st_hash_ops;
/* Sets are the same structure: members are fields with empty values, and
 * the small encoding is Redis' intset (members that are integers, kept in
 * integer order) instead of listpack. */
extern const st_type_ops_t st_set_ops;

/* A new, empty hash (listpack encoding); seed keys its field table once it
 * has one. */
st_hash_t *st_hash_new(uint64_t seed);
/* A new, empty set: intset-encoded when intset is set (its members must
 * then be integers as str_to_ll reads them until st_hash_convert). */
st_hash_t *st_set_new(uint64_t seed, int intset);
int st_hash_is_sorted(const st_hash_t *h);

static inline st_hash_t *st_ent_hash(idx_entry_t *e)
{
    return (st_hash_t *)st_ent_obj(e);
}

uint32_t st_hash_len(const st_hash_t *h);
/* 1 once the hash is in its hashtable encoding (it never goes back). */
int st_hash_is_table(const st_hash_t *h);
/* Move the fields into a hash table (OBJECT ENCODING says "hashtable"). */
void st_hash_convert(st_hash_t *h);
/* RAM held, requested bytes (st_hash_ops.mem_usage). */
uint64_t st_hash_bytes(const st_hash_t *h);

/* The field named f[0, n), or NULL. */
idx_entry_t *st_hash_find(st_hash_t *h, const void *f, uint32_t n);
/* Whether field f is there, its value copied into val[0, cap) with its
 * length in *vlen, handing out no entry (a paged hash's member is read
 * from its page for this call only: a walk that looks up millions of
 * members keeps none of them): 1, 0 when absent, or -1 when the value is
 * longer than cap or in the log (not copied). A sorted set's scores
 * (core/zset.c), a set's members. */
int st_hash_peek(st_hash_t *h, const void *f, uint32_t n, unsigned char *val, uint32_t cap,
                 uint32_t *vlen);
/* Set field f to v[0, vlen). vlsn is the log position of v's bytes when they
 * are a record's argument (values longer than STORE_INLINE_MAX then stay in
 * the log as an extent), 0 when they are not (a computed value: held in
 * RAM). Returns 1 when the field is new, 0 when it was replaced. A
 * listpack-encoded hash keeps insertion order; a replaced field keeps its
 * place (as Redis' listpack). */
int st_hash_set(st_hash_t *h, st_live_t *live, const void *f, uint32_t n, const unsigned char *v,
                uint64_t vlen, uint64_t vlsn);
/* Remove field f. Returns 1 when it was there, 0 when not. */
int st_hash_del(st_hash_t *h, st_live_t *live, const void *f, uint32_t n);

/* Visit every field once: insertion order (listpack), table order
 * (hashtable), and for a set its members' order (hash.c's banner: a
 * function of the log in every encoding). fn returns nonzero to stop; that
 * value is returned. */
int st_hash_foreach(st_hash_t *h, idx_visit_fn fn, void *arg);
/* st_hash_foreach for a fn that keeps no entry past its call: a paged
 * hash's members from pages then live for the call only, so a walk over
 * millions needs no RAM for them (HGETALL in MULTI, DUMP, the digest). */
int st_hash_foreach_once(st_hash_t *h, idx_visit_fn fn, void *arg);
/* HSCAN: the fields at cursor; returns the next cursor (0 = done). A
 * listpack-encoded hash is visited whole in one call, as Redis does. fn's
 * return value is ignored (nothing is removed). */
uint64_t st_hash_scan(st_hash_t *h, uint64_t cursor, idx_visit_fn fn, void *arg);
/* A random field (NULL when empty); *rng is the caller's generator. */
idx_entry_t *st_hash_random(st_hash_t *h, uint64_t *rng);
/* Field i in st_hash_foreach's order, for a listpack-encoded hash or any
 * set (else NULL); a paged one's: in its page order (hash_paged.c). */
idx_entry_t *st_hash_at(st_hash_t *h, uint32_t i);

/*
 * The paged form (core/hash_paged.c, D60): a large hashtable whose members
 * live in pages in the log. Every function above works on it as on a
 * table, with these differences: an entry found in a page is a copy that
 * lives until the record or request being served is done
 * (st_hash_mat_reset); st_hash_foreach's fn must not change the hash; a
 * page read that fails stops the store.
 */
#define ST_PAGE_NAME_MAX   1024u /* longer names and values stay in RAM (pinned) */
#define ST_PAGE_VALUE_MAX  1024u
#define ST_PAGE_MAX_IMAGES 64u   /* pages in one CMD_PAGE record */
#define ST_PAGE_SCAN       4096u /* ranges one st_hash_page_build call looks at */
#define ST_PAGE_RANGE_MIN  16u   /* overlay entries that make a range want a new page */

int st_hash_is_paged(const st_hash_t *h);
/* 1 when a member of these sizes is never put in a page. */
int st_hash_pin_sizes(uint64_t nlen, uint64_t vlen);
/* CMD_PAGEIN's change: h (a hashtable, not paged) becomes paged with this
 * seed, its members in `ranges` pageless ranges of equal width (1 ..
 * ST_PAGE_IN_RANGES_MAX), its object id from ctx's apply clock. Returns 0,
 * or -1 (nothing done) when h is not such a hash. */
#define ST_PAGE_IN_RANGES_MAX (1u << 24)
int st_hash_page_in(store_ctx_t *ctx, st_hash_t *h, uint64_t seed, uint32_t ranges);
/* CMD_PAGE's change (types/t_page.c checked the argument count and sizes):
 * 0, or -1 when the record does not fit h's state (another object, ranges
 * changed since it was built, malformed): nothing changed. */
int st_hash_page_apply(store_ctx_t *ctx, st_hash_t *h, const apply_args_t *a);
/* The paged object's id (0 when not paged). */
uint64_t st_hash_objid(const st_hash_t *h);

/* When the pager (store/pager.c) writes what. */
typedef struct st_pgpolicy {
    uint64_t entries;      /* a hashtable with this many members is paged (0: never) */
    uint32_t overlay_max;  /* past this many overlay entries (or members/16), the densest do */
    uint64_t below;        /* pages below this LSN are rewritten (compaction), 0 none */
    uint32_t page_bytes;   /* a page's target size */
    uint32_t record_bytes; /* pages per record: at most this many bytes */
} st_pgpolicy_t;
enum { ST_PAGE_WANT_IN = 1, ST_PAGE_WANT_BUILD = 2 };
/* What h may want under pol: 0, ST_PAGE_WANT_IN (a CMD_PAGEIN) or
 * ST_PAGE_WANT_BUILD (CMD_PAGE records: enough overlay entries to be worth
 * a look, or pages below pol->below; st_hash_page_build finds which).
 * O(1), but O(ranges) when pol->below is set. */
int st_hash_page_wanted(const st_hash_t *h, const st_pgpolicy_t *pol);
/* 1 when h's overlay is past twice its bound: the pager is behind the
 * writes and must catch up whatever its rate (store/pager.c). */
int st_hash_page_behind(const st_hash_t *h, const st_pgpolicy_t *pol);
/* One CMD_PAGE's arguments (after the key). */
typedef struct st_pgbuilt {
    uint64_t objid, as_of, first_lo, version, end_lo;
    uint32_t rest, nimg;
    buf_t img[ST_PAGE_MAX_IMAGES];
} st_pgbuilt_t;
/* Build the next record h wants under pol into out, and mark its range as
 * in flight: ST_PAGE_BUILT. Else ST_PAGE_NONE when no range wants one,
 * ST_PAGE_INFLIGHT when only ranges with a record in flight do, and
 * ST_PAGE_MORE when the ST_PAGE_SCAN ranges looked at did not (the next
 * call goes on from there). */
enum { ST_PAGE_NONE, ST_PAGE_BUILT, ST_PAGE_MORE, ST_PAGE_INFLIGHT };
int st_hash_page_build(store_ctx_t *ctx, st_hash_t *h, const st_pgpolicy_t *pol, st_pgbuilt_t *out);
/* Forget the in-flight marks (the records were not written, or are all
 * applied and some did not match). */
void st_hash_page_unbusy(st_hash_t *h);

/* HGETALL, HKEYS, HVALS, SMEMBERS of a paged h as a reply in parts: a
 * snapshot of its members (D60, hash_pgsnap.c) that makes, part by part,
 * their bulks (names, values or both, in page order; the array's header
 * is the caller's). NULL when h is not paged (or out of memory). */
enum { ST_MEMBERS_NAMES = 1, ST_MEMBERS_VALUES = 2 };
struct st_vsnap *st_hash_members_snapshot(st_hash_t *h, int want);

/* DEBUG PAGED's figures. */
typedef struct st_pgstats {
    int paged;
    uint32_t ranges, pages, overlay, pinned, members;
    uint64_t page_bytes;
} st_pgstats_t;
void st_hash_page_stats(const st_hash_t *h, st_pgstats_t *s);
/* Tests: NULL when h's paged state agrees with itself and its pages (the
 * counts, the flags, the sorted overlay), else what does not. */
const char *st_hash_page_check(st_hash_t *h);

/* Free the entries handed out from pages (route.c, after each record and
 * request), and all of ctx's paging buffers (store_ctx_destroy). */
void st_hash_mat_reset(store_ctx_t *ctx);
void st_hash_pg_ctx_free(store_ctx_t *ctx);
/* An entry holding name[0, nlen) and val[0, vlen) copied into RAM, handed
 * out until st_hash_mat_reset (a member or a list element read from a
 * page: core/list.c uses it too, with an empty name). */
idx_entry_t *st_hash_mat_new(store_ctx_t *ctx, const void *name, uint32_t nlen, const void *val,
                             uint32_t vlen);
/* n bytes handed out until st_hash_mat_reset, as those entries are (a
 * stream entry read from a page: core/stream.c, D64). */
void *st_hash_mat_alloc(store_ctx_t *ctx, size_t n);
/* An entry holding name f[0, n) and value v[0, vlen) copied into RAM: up
 * to 255 bytes of value in the entry itself (one allocation), longer in a
 * piece list (a paged hash's fields; list elements copied out of pages,
 * core/list.c; hash_field.c). */
idx_entry_t *st_hash_field_new_ram(const void *f, uint32_t n, const unsigned char *v,
                                   uint64_t vlen);

#endif
