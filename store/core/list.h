/*
 * list.h - the list type's data structure (core/list.c, D63): a key's
 * elements in order, in chunks that are in RAM or in pages of the log, and
 * the type's operations table (st_list_ops). The commands are in
 * types/t_list.c; the pages' records in core/list_page.c.
 *
 * An element in RAM is an idx_entry_t laid out as a string entry
 * (entry.h) with an empty name: its bytes inline (up to STORE_INLINE_MAX),
 * or one log extent (a record's argument, never copied into RAM), or, when
 * no record holds them (copied out of a page a write changed, a sorted
 * set's element, RESTORE's), in RAM: inline in the entry up to 255 bytes,
 * longer as one RAM piece (st_ent_new_ram: a long element RESTORE decoded
 * from an LZF-compressed node, D40). An element in a page is handed out as
 * a copy (st_list_at, the iterator).
 *
 * A keyed list (D65) is a sorted set's order: its elements are kept
 * sorted by the sorted set (core/zset.c), which finds places with
 * st_list_seek; each clean chunk then keeps a copy of its first element,
 * so a seek reads at most the one page it ends in.
 */
#ifndef ATTIC_STORE_LIST_H
#define ATTIC_STORE_LIST_H

#include <stdint.h>

#include "buf.h"
#include "entry.h"
#include "object.h"

typedef struct st_list st_list_t;

extern const st_type_ops_t st_list_ops;

/* Elements longer than this never go into a page: they stay in RAM
 * (pinned), as a paged hash's long members do (D60). */
#define ST_LIST_PAGE_ELEM_MAX 1024u

st_list_t *st_list_new(void);

static inline st_list_t *st_ent_list(idx_entry_t *e)
{
    return (st_list_t *)st_ent_obj(e);
}

uint32_t st_list_len(const st_list_t *l);
/* RAM held, requested bytes (st_list_ops.mem_usage). */
uint64_t st_list_bytes(const st_list_t *l);

/* A new element holding p[0, len); lsn is the log position of p's bytes
 * (a record's argument: a long element stays there as an extent). */
idx_entry_t *st_list_elem_new(const void *p, uint32_t len, uint64_t lsn);
void st_list_elem_free(idx_entry_t *e);

/*
 * Element i (0 = head), i < st_list_len: a RAM element itself, or a copy
 * of one in a page, handed out until st_hash_mat_reset (the end of the
 * record or request). O(1) near either end, O(log chunks) elsewhere, plus
 * a page read when the element is in a page that is not cached.
 */
idx_entry_t *st_list_at(st_list_t *l, uint32_t i);

/*
 * Changes. ctx stamps the chunks changed (the pager's records name them by
 * stamp) and counts the pages dropped in ctx->live; NULL for a list that
 * is not in an index yet (no pages; st_list_seal stamps it once it is).
 * Element entries' own log extents are the caller's to count, as before:
 * an element taken out of a page is a RAM copy with none.
 */
/* Put e (the list takes it) at i, 0 <= i <= len: O(1) at either end. */
void st_list_insert(store_ctx_t *ctx, st_list_t *l, uint32_t i, idx_entry_t *e);
/* Take element i out (the caller owns the entry). O(1) at either end,
 * whether its chunk is in RAM or a page. */
idx_entry_t *st_list_take(store_ctx_t *ctx, st_list_t *l, uint32_t i);
/* Put e at i in place of the element there, which is returned. */
idx_entry_t *st_list_replace(store_ctx_t *ctx, st_list_t *l, uint32_t i, idx_entry_t *e);
/* Drop `head` elements from the head and `tail` from the tail (LTRIM):
 * O(chunks) plus the RAM elements dropped, no page read; each RAM
 * element's log extent uncounted in ctx->live. */
void st_list_trim(store_ctx_t *ctx, st_list_t *l, uint32_t head, uint32_t tail);
/* Stamp every unstamped chunk of l (a list built by RESTORE or SORT ...
 * STORE, now in the index). */
void st_list_seal(store_ctx_t *ctx, st_list_t *l);
/* The same where no record is being applied (a list read from a version
 * 1 checkpoint stream): stamped by contents and place (list-internal.h). */
void st_list_seal_contents(st_list_t *l);

/* ---- keyed lists (D65) ---- */

/* l (empty) becomes keyed: its clean chunks keep their first elements. */
void st_list_set_keyed(st_list_t *l);
int st_list_is_keyed(const st_list_t *l);
/* Whether element p[0, n) comes before what is sought (arg). */
typedef int (*st_list_before_fn)(const void *arg, const unsigned char *p, uint32_t n);
/* The position of the first element for which before() is 0, for a list
 * whose elements are all those it holds 1 for, then the others (a sorted
 * list): a binary search over the chunks' first elements, then one chunk
 * (a page read when it is clean). O(log chunks + chunk). */
uint32_t st_list_seek(st_list_t *l, st_list_before_fn before, const void *arg);
/* Put e where st_list_seek would place it, or take out the element there
 * (which must be), found the same way without its rank: no Fenwick tree,
 * which a write that splits or joins chunks would make stale for the next
 * rank anyway. As st_list_insert and st_list_take otherwise. */
void st_list_insert_sorted(store_ctx_t *ctx, st_list_t *l, st_list_before_fn before,
                           const void *arg, idx_entry_t *e);
idx_entry_t *st_list_take_sorted(store_ctx_t *ctx, st_list_t *l, st_list_before_fn before,
                                 const void *arg);

/* ---- walking the elements in order ---- */

/* One element: a RAM entry (e), or bytes in a page (e NULL: p[0, n),
 * valid until the iterator moves on). */
typedef struct st_lelem {
    idx_entry_t *e;
    const unsigned char *p;
    uint32_t n;
} st_lelem_t;

typedef struct st_list_iter {
    st_list_t *l;
    uint32_t j, k;      /* the next element: chunk j, its k-th */
    uint32_t left;      /* elements still to give */
    int rev;            /* from the tail towards the head */
    uint32_t cj;        /* the clean chunk whose elements are in p[], n[] */
    unsigned char *buf; /* its image */
    size_t cap;
    const unsigned char **p;
    uint32_t *n, pcap;
} st_list_iter_t;

/* count elements from position from (towards the head when rev: from,
 * from - 1, ...). st_list_next: 1 with *x set, 0 when done. Free with
 * st_list_iter_free. The list must not change while an iterator is open. */
void st_list_iter_init(st_list_iter_t *it, st_list_t *l, uint32_t from, uint32_t count, int rev);
int st_list_next(st_list_iter_t *it, st_lelem_t *x);
void st_list_iter_free(st_list_iter_t *it);
/* x's length; its bytes (into *tmp, grown to *cap, when not at hand);
 * it replied as a bulk string; it as an entry (a page's copied: handed
 * out until st_hash_mat_reset). st_lelem_bytes returns 0, -1 on an I/O
 * error (logged). */
uint64_t st_lelem_len(const st_lelem_t *x);
int st_lelem_bytes(store_ctx_t *ctx, const st_lelem_t *x, const unsigned char **p,
                   unsigned char **tmp, size_t *cap);
void st_lelem_reply(store_ctx_t *ctx, const st_lelem_t *x, buf_t *r);
idx_entry_t *st_lelem_entry(store_ctx_t *ctx, const st_lelem_t *x);

/* A run of l's elements as a reply in parts (core/list_pgsnap.c, D65):
 * count elements from position from (downwards when rev), each made into
 * reply bytes by put(arg, its bytes, out) as the parts are asked for.
 * arg is the snapshot's, freed by arg_free (when not NULL) whatever the
 * result; NULL on a read error. Whether l has pages (else a reply is
 * simply built whole). */
typedef void (*st_lsnap_put_fn)(const void *arg, const unsigned char *p, uint32_t n, buf_t *out);
struct st_vsnap *st_list_run_snapshot(st_list_t *l, uint32_t from, uint32_t count, int rev,
                                      st_lsnap_put_fn put, const void *arg,
                                      void (*arg_free)(const void *arg));
int st_list_has_pages(const st_list_t *l);

/* ---- pages (core/list_page.c, D63) ---- */

struct apply_args;
struct st_pgpolicy;

/* CMD_LPAGE's change (types/t_page.c checked the argument count): the
 * chunks the record names by stamp become its pages and pinned runs.
 * Returns 0, or -1 when the record does not fit l (a no-op). */
int st_list_page_apply(store_ctx_t *ctx, st_list_t *l, const struct apply_args *a);
/* What the pager (store/pager.c) does with l under pol: 0, or
 * ST_PAGE_WANT_BUILD (core/hash.h's values) when chunks want a record:
 * RAM chunks between the two ends, or pages below pol->below. O(1) unless
 * pol->below passed the list's lowest page since it was last looked for
 * (core/chunked.h). */
int st_list_page_wanted(st_list_t *l, const struct st_pgpolicy *pol);
/* RAM chunks past which the pager is behind the writes and catches up
 * past its rate (st_list_page_behind). */
#define ST_LIST_BEHIND_CHUNKS 64u
int st_list_page_behind(const st_list_t *l);
/* Build the next record into out (one CMD_LPAGE's arguments after the
 * key: core/page.h's st_cpbuilt_t; ST_PAGE_* results of core/hash.h); the
 * chunks it covers are marked busy until st_list_page_unbusy. */
struct st_cpbuilt;
int st_list_page_build(store_ctx_t *ctx, st_list_t *l, const struct st_pgpolicy *pol,
                       struct st_cpbuilt *out);
void st_list_page_unbusy(st_list_t *l);
/* DEBUG PAGED's figures: [paged, chunks, pages, page bytes, elements in
 * RAM, pinned, elements]. */
void st_list_page_stats(const st_list_t *l, long long v[7]);
/* Tests: NULL when l's chunks, counts and pages agree, else what not. */
const char *st_list_check(st_list_t *l);

#endif
