/*
 * zset.h - the sorted-set type's data structure (core/zset.c): members
 * with a double score each, ordered by (score, member bytes), with a
 * member table for O(1) lookup and a skiplist whose links carry spans, so
 * that a rank, the node at a rank and the first node at a score or a
 * member are found in O(log n) (ZADD, ZRANK, ZRANGE by rank, score or
 * lex). Members are held in RAM (no log extents: count_log has nothing to
 * count). Node levels come from a hash of the member, not from a random
 * generator: replay builds the same structure.
 */
#ifndef ATTIC_STORE_ZSET_H
#define ATTIC_STORE_ZSET_H

#include <stdint.h>

#include "entry.h"
#include "object.h"

typedef struct st_zset st_zset_t;
typedef struct st_znode st_znode_t;

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

double st_znode_score(const st_znode_t *x);
const char *st_znode_member(const st_znode_t *x, uint32_t *n);
/* The node after / before x in order, or NULL. */
st_znode_t *st_znode_next(const st_znode_t *x);
st_znode_t *st_znode_prev(const st_znode_t *x);

/* The node of member m[0, n), or NULL. */
st_znode_t *st_zset_find(const st_zset_t *z, const void *m, uint32_t n);
/* Give member m the score s (added when new): 1 when it is new, else 0. */
int st_zset_set(st_zset_t *z, const void *m, uint32_t n, double s);
/* Remove member m: 1 when it was there, else 0. */
int st_zset_del(st_zset_t *z, const void *m, uint32_t n);
/* The 0-based rank of member m in ascending order, or -1 when absent. */
long st_zset_rank(const st_zset_t *z, const void *m, uint32_t n);
/* The node at 0-based rank r, or NULL past the end. */
st_znode_t *st_zset_at(const st_zset_t *z, uint32_t r);
/* The rank of the first node whose score is >= s (> s when excl): from 0
 * to len (len: none). */
uint32_t st_zset_rank_score(const st_zset_t *z, double s, int excl);
/* The rank of the first node whose member is >= m (> m when excl), in
 * member byte order (lex ranges assume equal scores, as Redis does). */
uint32_t st_zset_rank_lex(const st_zset_t *z, const void *m, uint32_t n, int excl);

#endif
