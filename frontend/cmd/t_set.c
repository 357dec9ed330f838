/*
 * t_set.c - canonical encoding of the set writes (encode.h), in a frontend
 * process: SADD, SREM, SPOP, SMOVE, SINTERSTORE, SUNIONSTORE, SDIFFSTORE.
 * Pure functions of the arguments and the connection's settings: a refused
 * command changes nothing (contract 7).
 *
 * Redis 7.0's argument checks in its order, with its texts; WRONGTYPE is
 * the store's (store/types/t_set.c). Records that may create or grow a set
 * carry set-max-intset-entries as this frontend has it (common/command.h),
 * so the encoding the store chooses replays the same; SPOP's choice of
 * members comes from its record's LSN, not from this process.
 */
#include <limits.h>
#include <stdint.h>

#include "frontend/cmd/encode.h"
#include "frontend/core/core.h"
#include "strutil.h"

static int64_t intset_limit(const fe_conn_t *c)
{
    return c->fe->set_max_intset < 0 ? 0 : c->fe->set_max_intset;
}

/* SADD key member [member ...]. */
int fe_enc_sadd(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    fe_enc_begin(e, CMD_SADD, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_i64(e, intset_limit(c));
    fe_enc_tail(e, a, 2);
    return 0;
}

/* SREM key member [member ...]. */
int fe_enc_srem(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    fe_enc_plain(e, CMD_SREM, 1, a);
    return 0;
}

/* SPOP key [count]: the count is checked before the key, as Redis does. */
int fe_enc_spop(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    long long count = -1;
    if (a->argc > 3) return fe_enc_fail(e, FE_ERR_SYNTAX);
    if (a->argc == 3) {
        /* Redis' getPositiveLongFromObjectOrReply: one text for both */
        if (str_to_ll(a->argv[2], a->lens[2], &count) || count < 0)
            return fe_enc_fail(e, "ERR value is out of range, must be positive");
    }
    fe_enc_begin(e, CMD_SPOP_AT, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_i64(e, count);
    fe_enc_u32(e, c->proto >= 3);
    return 0;
}

/* SMOVE source destination member. */
int fe_enc_smove(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    fe_enc_begin(e, CMD_SMOVE, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_arg(e, a->argv[2], a->lens[2]);
    fe_enc_arg(e, a->argv[3], a->lens[3]);
    fe_enc_i64(e, intset_limit(c));
    return 0;
}

/* SINTERSTORE, SUNIONSTORE, SDIFFSTORE destination key [key ...]. */
int fe_enc_sstore(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    fe_enc_begin(e, d->id, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_i64(e, intset_limit(c));
    fe_enc_tail(e, a, 2);
    return 0;
}
