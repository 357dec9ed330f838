/*
 * zset_ops.h - what the sorted-set handlers share (zset_ops.c): Redis
 * 7.0's parsers for scores and ranges, the encoding rule, replies of
 * members with scores, the pop at either end (ZPOPMIN, ZPOPMAX, ZMPOP, and
 * the blocking pops to come) and the union/intersection/difference of
 * sorted sets and sets. Store process only; below t_zset.c (writes) and
 * t_zset_read.c (reads).
 */
#ifndef ATTIC_STORE_ZSET_OPS_H
#define ATTIC_STORE_ZSET_OPS_H

#include <stdint.h>

#include "buf.h"
#include "store/core/entry.h"
#include "store/core/zset.h"

#define ZS_ERR_NOT_FLOAT "ERR value is not a valid float"
#define ZS_ERR_MINMAX    "ERR min or max is not a float"
#define ZS_ERR_LEX       "ERR min or max not valid string range item"
#define ZS_ERR_NOT_INT   "ERR value is not an integer or out of range"

/* The record's limits word: zset-max-listpack-entries and -value. */
typedef struct zs_limits {
    uint32_t entries, value;
} zs_limits_t;
zs_limits_t zs_get_limits(const rec_arg_t *x);

/* A score as Redis' getDoubleFromObject reads it (strtod of the whole
 * text, no leading space, no NaN, no overflow): 0, or -1. */
int zs_parse_score(const rec_arg_t *x, double *out);
/* An integer as Redis' getLongFromObject: 0, or -1. */
int zs_parse_ll(const rec_arg_t *x, long long *out);

/* st_zset_set, but a listpack keeps -0 as 0 (as Redis' does). ctx as
 * st_zset_set's: NULL for a result not in an index yet. */
int zs_put(store_ctx_t *ctx, st_zset_t *z, const void *m, uint32_t n, double s);
/* Add or rescore member m with score s in z, switching z to skiplist as
 * Redis does when a new member passes the limits. 1 when m is new. */
int zs_add(store_ctx_t *ctx, st_zset_t *z, zs_limits_t l, const void *m, uint32_t n, double s);
/* A new zset for a result of count members, the longest maxlen bytes:
 * listpack when both are within the limits (Redis' store commands). */
st_zset_t *zs_new_result(const st_db_t *db, zs_limits_t l, uint64_t count, uint64_t maxlen);
st_zset_t *zs_new(const st_db_t *db);

/* A whole new zset's encoding (a STORE form's result, a RESTOREd one):
 * listpack when its size and longest member (maxlen bytes) are within
 * the limits. Its scores stay as they are (a -0 too: st_zset_set does
 * not rewrite an equal score). */
void zs_choose_encoding(st_zset_t *z, zs_limits_t l, uint64_t maxlen);

/* A range of ranks [start, end) picked by ZRANGE's words, or by
 * ZCOUNT/ZLEXCOUNT/ZREMRANGEBY*'s min and max. */
typedef enum { ZS_BY_RANK, ZS_BY_SCORE, ZS_BY_LEX } zs_by_t;

typedef struct zs_spec {
    zs_by_t by;
    int rev, withscores;
    long long offset, limit; /* LIMIT; limit -1: none */
    long long start, stop;   /* BY rank */
    double min, max;         /* BY score */
    int minex, maxex;
    const rec_arg_t *lmin, *lmax; /* BY lex: the text after [ or ( */
    int lmin_inf, lmax_inf;       /* -1 for "-", +1 for "+", 0 none */
} zs_spec_t;

/* Parse min and max as `by` reads them into s. 0, or -1 with the error
 * text in *err. */
int zs_parse_minmax(zs_by_t by, const rec_arg_t *min, const rec_arg_t *max, zs_spec_t *s,
                    const char **err);
/* ZRANGE's words: argv[0] min, argv[1] max, then options, for the command
 * `cmd` (CMD_ZRANGE ... CMD_ZREVRANGEBYLEX, CMD_ZRANGESTORE), with Redis
 * 7.0's checks in its order. 0, or -1 with the error replied. */
int zs_parse_range(int cmd, const rec_arg_t *argv, uint16_t argc, zs_spec_t *s, buf_t *r);
/* The ranks [*from, *to) of z that s selects, in order (before REV and
 * LIMIT). */
void zs_span(st_zset_t *z, const zs_spec_t *s, uint32_t *from, uint32_t *to);
/* The members s selects, in reply order (REV and LIMIT applied): always
 * a run of ranks, *count of them from rank *from (downwards when
 * s->rev). */
void zs_select(st_zset_t *z, const zs_spec_t *s, uint32_t *from, uint32_t *count);

/* Reply the run of count members from rank from (downwards when rev),
 * with scores, as Redis: flat in RESP2, [member, score] pairs in RESP3 or
 * when nested. */
void zs_reply_run(buf_t *r, int proto, st_zset_t *z, uint32_t from, uint32_t count, int rev,
                  int withscores, int nested);

/* How popped members are replied: ZS_POP_AUTO flat in RESP2 and pairs in
 * RESP3 (ZPOPMIN with a count), ZS_POP_NESTED pairs always (ZMPOP),
 * ZS_POP_FLAT member, score, ... always (ZPOPMIN without a count),
 * ZS_POP_BARE as FLAT without the array around them (BZPOPMIN's reply
 * puts the key before them in its own array). */
enum { ZS_POP_AUTO, ZS_POP_NESTED, ZS_POP_FLAT, ZS_POP_BARE };

/* Pop up to count members of the zset at *slot (key `key`) from its
 * lowest (max 0) or highest scores, replying them in `shape` (an array of
 * them, member and score each) into r when r is not NULL. Removes the key when it empties, signals
 * WATCH. Returns how many were popped. ZPOPMIN, ZPOPMAX, ZMPOP; the blocking pops are meant to call
 * it when a key they wait for is written. */
uint32_t st_zset_pop(store_ctx_t *ctx, const apply_args_t *a, const rec_arg_t *key,
                     idx_entry_t **slot, int max, uint32_t count, int proto, int shape, buf_t *r);

/* ZUNION/ZINTER/ZDIFF (and STORE, ZINTERCARD): argv from numkeys on. */
enum { ZS_UNION, ZS_INTER, ZS_DIFF };
typedef struct zs_setop {
    int op;
    int withscores;  /* WITHSCORES (reads only) */
    long long limit; /* ZINTERCARD's LIMIT, 0 none */
} zs_setop_t;
/* Redis 7.0's zunionInterDiffGenericCommand: numkeys, every key's type
 * (zset or set), then the options; `cmd` names the command in the numkeys
 * error. Returns the result (NULL when empty) or sets *failed with the
 * error replied. card: count only (ZINTERCARD), *count set. */
st_zset_t *zs_setop(st_db_t *db, int64_t now, int reap, const rec_arg_t *argv, uint16_t argc,
                    zs_setop_t *o, const char *cmd, int card, zs_limits_t l, uint64_t *count,
                    int *failed, buf_t *r);

#endif
