/*
 * t_hash.c - canonical encoding of the hash writes (encode.h), in a
 * frontend process: HSET, HMSET, HSETNX (one CMD_HSET form), HDEL,
 * HINCRBY, HINCRBYFLOAT. Pure functions of the arguments and the
 * connection's settings: a refused command changes nothing (contract 7).
 *
 * Each encoder makes Redis 7.0's argument checks in Redis' order, with its
 * texts; what needs the key's value (WRONGTYPE, a field value that is not a
 * number, overflow) is the store's (store/types/t_hash.c). The records
 * carry hash-max-listpack-entries and -value as this frontend has them
 * (common/command.h), so the store's choice of encoding does not depend
 * on its own configuration and replays the same.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>

#include "frontend/cmd/encode.h"
#include "frontend/core/core.h"
#include "strutil.h"

/* The u64 limits argument: entries in the low half, value bytes in the
 * high half, each clamped to u32 (a larger limit acts the same). */
static int64_t hash_limits(const fe_conn_t *c)
{
    int64_t n = c->fe->hash_max_entries, v = c->fe->hash_max_value;
    uint64_t lo = n < 0 ? 0 : n > UINT32_MAX ? UINT32_MAX : (uint64_t)n;
    uint64_t hi = v < 0 ? 0 : v > UINT32_MAX ? UINT32_MAX : (uint64_t)v;
    return (int64_t)(lo | hi << 32);
}

/* HSET key field value [field value ...], HMSET (the same, +OK), HSETNX
 * key field value. */
int fe_enc_hset(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    uint32_t flags = 0;
    if (d->id == CMD_HSETNX)
        flags = HSETF_NX;
    else if (a->argc % 2)
        return fe_enc_fail(e, "ERR wrong number of arguments for '%s' command", d->name);
    if (d->id == CMD_HMSET) flags = HSETF_REPLY_OK;
    fe_enc_begin(e, CMD_HSET, 1); /* WRONGTYPE is the store's to find */
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_i64(e, hash_limits(c));
    fe_enc_u32(e, flags);
    fe_enc_tail(e, a, 2);
    return 0;
}

/* HDEL key field [field ...]. */
int fe_enc_hdel(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    fe_enc_plain(e, CMD_HDEL, 1, a);
    return 0;
}

/* HINCRBY key field increment: Redis parses the increment first. */
int fe_enc_hincrby(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    long long delta;
    if (str_to_ll(a->argv[3], a->lens[3], &delta)) return fe_enc_fail(e, FE_ERR_NOT_INT);
    fe_enc_begin(e, CMD_HINCRBY, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_i64(e, hash_limits(c));
    fe_enc_arg(e, a->argv[2], a->lens[2]);
    fe_enc_i64(e, delta);
    return 0;
}

/* HINCRBYFLOAT key field increment. */
int fe_enc_hincrbyfloat(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    long double incr;
    if (str_to_ld(a->argv[3], a->lens[3], &incr))
        return fe_enc_fail(e, "ERR value is not a valid float");
    /* Redis' parse takes "inf"; HINCRBYFLOAT then refuses it so. */
    if (isinf(incr)) return fe_enc_fail(e, "ERR value is NaN or Infinity");
    fe_enc_begin(e, CMD_HINCRBYFLOAT, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_i64(e, hash_limits(c));
    fe_enc_arg(e, a->argv[2], a->lens[2]);
    fe_enc_arg(e, a->argv[3], a->lens[3]);
    return 0;
}
