/*
 * t_zset.c - canonical encoding of the sorted-set writes (encode.h), in a
 * frontend process: ZADD and ZINCRBY (one CMD_ZADD form), ZREM,
 * ZREMRANGEBYRANK/SCORE/LEX (CMD_ZREMRANGEBYRANK), ZPOPMIN and ZPOPMAX
 * (CMD_ZPOPMIN), ZMPOP, ZRANGESTORE, ZUNIONSTORE/ZINTERSTORE/ZDIFFSTORE
 * (CMD_ZUNIONSTORE). Pure functions of the arguments and the connection's
 * settings: a refused command changes nothing (contract 7).
 *
 * What Redis 7.0 checks before anything else (ZPOP's count, all of ZMPOP's
 * syntax) is checked here in its order; the rest of each command's words
 * go into the record as the user wrote them and the store parses them
 * (store/types/zset_ops.c), because Redis checks some of them after the
 * keys' types (ZUNIONSTORE's WEIGHTS) and one parser serves the reads and
 * the writes alike. Records carry zset-max-listpack-entries and -value as
 * this frontend has them, so the encoding the store chooses replays the
 * same, and the protocol where the reply holds doubles or nulls.
 */
#include <limits.h>
#include <stdint.h>
#include <strings.h>

#include "frontend/cmd/encode.h"
#include "frontend/core/core.h"
#include "strutil.h"

/* The u64 limits argument: entries in the low half, value bytes in the
 * high half, each clamped to u32 (a larger limit acts the same). */
static int64_t zset_limits(const fe_conn_t *c)
{
    int64_t n = c->fe->zset_max_entries, v = c->fe->zset_max_value;
    uint64_t lo = n < 0 ? 0 : n > UINT32_MAX ? UINT32_MAX : (uint64_t)n;
    uint64_t hi = v < 0 ? 0 : v > UINT32_MAX ? UINT32_MAX : (uint64_t)v;
    return (int64_t)(lo | hi << 32);
}

static int word_is(const fe_args_t *a, int i, const char *w)
{
    size_t n = strlen(w);
    return a->lens[i] == n && strncasecmp(a->argv[i], w, n) == 0;
}

/* ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member ..., ZINCRBY key
 * increment member. */
int fe_enc_zadd(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    uint32_t mode = (uint32_t)c->proto | (d->id == CMD_ZINCRBY ? 0x100u : 0u);
    fe_enc_begin(e, CMD_ZADD, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_i64(e, zset_limits(c));
    fe_enc_u32(e, mode);
    fe_enc_tail(e, a, 2);
    return 0;
}

/* ZREM key member [member ...]. */
int fe_enc_zrem(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    fe_enc_plain(e, CMD_ZREM, 1, a);
    return 0;
}

/* ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX key min max. */
int fe_enc_zremrange(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    uint32_t kind = d->id == CMD_ZREMRANGEBYRANK ? 0 : d->id == CMD_ZREMRANGEBYSCORE ? 1 : 2;
    fe_enc_begin(e, CMD_ZREMRANGEBYRANK, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_u32(e, kind);
    fe_enc_arg(e, a->argv[2], a->lens[2]);
    fe_enc_arg(e, a->argv[3], a->lens[3]);
    return 0;
}

/* ZPOPMIN, ZPOPMAX key [count]: the count first, as Redis. */
int fe_enc_zpop(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    long long count = -1;
    if (a->argc > 3) return fe_enc_fail(e, FE_ERR_SYNTAX);
    if (a->argc == 3 && (str_to_ll(a->argv[2], a->lens[2], &count) || count < 0))
        return fe_enc_fail(e, "ERR value is out of range, must be positive");
    fe_enc_begin(e, CMD_ZPOPMIN, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_u32(e, d->id == CMD_ZPOPMAX);
    fe_enc_i64(e, count);
    fe_enc_u32(e, (uint32_t)c->proto);
    return 0;
}

/* ZMPOP's and BZMPOP's numkeys key [key ...] MIN|MAX [COUNT count] from
 * a->argv[at] on, Redis 7.0's checks in its order. Returns 0 with
 * *numkeys, *max and *count (1 when not given) set, or -1 with e->err. */
static int zmpop_args(const fe_args_t *a, int at, fe_enc_t *e, long long *numkeys, int *max,
                      long long *count)
{
    *count = -1;
    if (str_to_ll(a->argv[at], a->lens[at], numkeys) || *numkeys <= 0)
        return fe_enc_fail(e, "ERR numkeys should be greater than 0");
    if (*numkeys > a->argc - at - 2) return fe_enc_fail(e, FE_ERR_SYNTAX);
    int i = at + 1 + (int)*numkeys;
    *max = word_is(a, i, "MAX");
    if (!*max && !word_is(a, i, "MIN")) return fe_enc_fail(e, FE_ERR_SYNTAX);
    while (++i < a->argc) {
        if (*count >= 0 || i + 1 >= a->argc || !word_is(a, i, "COUNT"))
            return fe_enc_fail(e, FE_ERR_SYNTAX);
        i++;
        if (str_to_ll(a->argv[i], a->lens[i], count) || *count <= 0)
            return fe_enc_fail(e, "ERR count should be greater than 0");
    }
    if (*count < 0) *count = 1;
    return 0;
}

/* ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]. */
int fe_enc_zmpop(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    long long numkeys, count;
    int max;
    if (zmpop_args(a, 1, e, &numkeys, &max, &count)) return -1;
    fe_enc_begin(e, CMD_ZMPOP, 1);
    fe_enc_u32(e, (uint32_t)numkeys);
    fe_enc_u32(e, (uint32_t)max);
    fe_enc_i64(e, count);
    fe_enc_u32(e, (uint32_t)c->proto);
    fe_enc_tail(e, a, 2);
    return 0;
}

/* BZPOPMIN, BZPOPMAX key [key ...] timeout. */
int fe_enc_bzpop(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    if (fe_enc_block_timeout(a, a->argc - 1, e)) return -1;
    fe_enc_block_head(c, e, CMD_BZPOPMIN, d->id == CMD_BZPOPMAX, 4, 1);
    fe_enc_tail(e, a, 1);
    e->argc--; /* the timeout stays in the frontend */
    return 0;
}

/* BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]: the
 * arguments after the timeout first, as BLMPOP. */
int fe_enc_bzmpop(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    long long numkeys, count;
    int max;
    if (zmpop_args(a, 2, e, &numkeys, &max, &count) || fe_enc_block_timeout(a, 1, e)) return -1;
    fe_enc_block_head(c, e, CMD_BZPOPMIN, max, 5, count);
    fe_enc_tail(e, a, 3);
    e->argc = 5 + (int)numkeys; /* the keys only */
    return 0;
}

/* ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]. */
int fe_enc_zrangestore(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    fe_enc_begin(e, CMD_ZRANGESTORE, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_i64(e, zset_limits(c));
    fe_enc_tail(e, a, 2);
    return 0;
}

/* ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE destination numkeys key ...
 * [options]. */
int fe_enc_zstore(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    uint32_t op = d->id == CMD_ZUNIONSTORE ? 0 : d->id == CMD_ZINTERSTORE ? 1 : 2;
    fe_enc_begin(e, CMD_ZUNIONSTORE, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_i64(e, zset_limits(c));
    fe_enc_u32(e, op);
    fe_enc_tail(e, a, 2);
    return 0;
}
