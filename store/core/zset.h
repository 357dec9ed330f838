/*
 * zset.h - the sorted-set type's data structure (core/zset.c, D65):
 * members with a double score each, ordered by (score, member bytes). Two
 * parts, each the form another type already keeps large collections in:
 * the member -> score map is a hash (core/hash.c) whose values are the
 * scores' 8 bytes, paged like a large hash's (D60), and the order is a
 * keyed list (core/list.c) of elements "score bytes, member bytes" in
 * chunks that live in RAM or in pages of the log (D63). So a member's
 * score costs the hash's lookup (at most one page read), and a rank, the
 * member at a rank and the first member at a score or a member are found
 * in O(log n) with at most one page read of the order (ZADD, ZRANK,
 * ZRANGE by rank, score or lex).
 *
 * Members and elements handed out from pages are copies that live until
 * the record or request being served is done (st_hash_mat_reset), or, for
 * an iterator's, until it moves on.
 */
#ifndef ATTIC_STORE_ZSET_H
#define ATTIC_STORE_ZSET_H

#include <stdint.h>

#include "entry.h"
#include "hash.h"
#include "list.h"
#include "object.h"

typedef struct st_zset st_zset_t;

/* The type's operations (end of core/zset.c): the object of an ST_ZSET entry is
 * an st_zset_t. */
extern const st_type_ops_t st_zset_ops;

static inline st_zset_t *st_ent_zset(idx_entry_t *e)
{
    return (st_zset_t *)st_ent_obj(e);
}

/* A new, empty sorted set (listpack encoding); seed keys its member
 * table (st_zset_seed gives it back, for a copy). */
st_zset_t *st_zset_new(uint64_t seed);
uint64_t st_zset_seed(const st_zset_t *z);
/* OBJECT ENCODING: "skiplist" once set, else "listpack". The structure is
 * the same; the encoding only follows Redis' thresholds (the writer decides
 * from the limits its record carries). */
int st_zset_is_skiplist(const st_zset_t *z);
void st_zset_set_skiplist(st_zset_t *z, int on);
void st_zset_free(st_zset_t *z);
uint32_t st_zset_len(const st_zset_t *z);
/* RAM held, requested bytes. */
uint64_t st_zset_bytes(const st_zset_t *z);

/* One member with its score: m[0, n) is valid until the sorted set
 * changes, the iterator that gave it moves on, or the record or request
 * is done (a page's copy). */
typedef struct st_zel {
    double score;
    const char *m;
    uint32_t n;
} st_zel_t;

/* Member m's score: 1 with *s set, 0 when absent. */
int st_zset_score(st_zset_t *z, const void *m, uint32_t n, double *s);
/*
 * Changes. ctx stamps the order's chunks and counts the pages dropped in
 * ctx->live, as a list's changes do (list.h); NULL for a sorted set not in
 * an index yet (a result being built: st_zset_seal once it is stored).
 */
/* Give member m the score s (added when new): 1 when it is new, else 0.
 * A score equal to the one held (0 and -0 included) changes nothing. */
int st_zset_set(store_ctx_t *ctx, st_zset_t *z, const void *m, uint32_t n, double s);
/* Remove member m: 1 when it was there, else 0. */
int st_zset_del(store_ctx_t *ctx, st_zset_t *z, const void *m, uint32_t n);
/* Remove the member at rank r (< len), copying it into *x, its bytes into
 * *buf (grown to *cap): the pops. */
void st_zset_take(store_ctx_t *ctx, st_zset_t *z, uint32_t r, st_zel_t *x, unsigned char **buf,
                  size_t *cap);
/* Stamp a sorted set built outside the apply path, now in an index. */
void st_zset_seal(store_ctx_t *ctx, st_zset_t *z);

/* The 0-based rank of member m in ascending order, or -1 when absent. */
long st_zset_rank(st_zset_t *z, const void *m, uint32_t n);
/* The member at 0-based rank r (< len) into *x. */
void st_zset_at(st_zset_t *z, uint32_t r, st_zel_t *x);
/* The rank of the first member whose score is >= s (> s when excl): from 0
 * to len (len: none). */
uint32_t st_zset_rank_score(st_zset_t *z, double s, int excl);
/* The rank of the first member whose member is >= m (> m when excl), in
 * member byte order (lex ranges assume equal scores, as Redis does; with
 * mixed scores the answer is where a binary search over the order ends). */
uint32_t st_zset_rank_lex(st_zset_t *z, const void *m, uint32_t n, int excl);

/* Walking the members in order: count of them from rank from (towards the
 * lowest when rev: from, from - 1, ...). st_zset_next: 1 with *x set, 0
 * when done. The sorted set must not change while an iterator is open. */
typedef struct st_zset_iter {
    st_list_iter_t it;
} st_zset_iter_t;
void st_zset_iter_init(st_zset_iter_t *it, st_zset_t *z, uint32_t from, uint32_t count, int rev);
int st_zset_next(st_zset_iter_t *it, st_zel_t *x);
void st_zset_iter_free(st_zset_iter_t *it);

/* One member's reply: the member, then its score when withscores, as a
 * [member, score] array when pair (RESP3, or nested). */
void st_zset_reply_member(buf_t *r, int proto, const st_zel_t *x, int withscores, int pair);
/* The run of count members from rank from (downwards when rev) as a reply
 * in parts (D65: core/list_pgsnap.c), each as st_zset_reply_member makes
 * it; NULL when the order has no pages (a reply is then built whole) or
 * on a read error. The array's header is the caller's. */
struct st_vsnap *st_zset_run_snapshot(st_zset_t *z, uint32_t from, uint32_t count, int rev,
                                      int proto, int withscores, int pair);

/* The two parts, for the pager (store/pager.c), the page records' apply
 * (types/t_page.c) and DEBUG PAGED: the member -> score hash and the order. */
st_hash_t *st_zset_dict(st_zset_t *z);
st_list_t *st_zset_order(st_zset_t *z);
/* Tests: NULL when the two parts agree with each other and themselves
 * (lengths, the order sorted, every member's score in both), else what
 * does not. Reads every page. */
const char *st_zset_check(st_zset_t *z);

#endif
