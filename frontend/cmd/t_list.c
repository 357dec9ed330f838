/*
 * t_list.c - canonical encoding of the list writes (encode.h), in a
 * frontend process: LPUSH RPUSH LPUSHX RPUSHX (CMD_LPUSH), LPOP RPOP
 * (CMD_LPOP), LSET, LTRIM, LREM, LINSERT, LMOVE and RPOPLPUSH (CMD_LMOVE),
 * LMPOP, and the blocking BLPOP BRPOP BLMPOP (CMD_BLPOP), BLMOVE and
 * BRPOPLPUSH (CMD_BLMOVE), whose records name the client (D36). Pure functions of the arguments and
 * the connection's settings: a refused command changes nothing (contract 7).
 *
 * The checks Redis 7.0 makes before it looks a key up are made here, in
 * its order, with its texts; those it makes after (LSET's index) and
 * WRONGTYPE are the store's (store/types/t_list.c). Records that reply a
 * null carry the connection's protocol (RESP3's null differs).
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <strings.h>

#include "frontend/cmd/encode.h"
#include "frontend/core/core.h"
#include "strutil.h"

static int is_word(const fe_args_t *a, int i, const char *w)
{
    size_t n = strlen(w);
    return a->lens[i] == n && strncasecmp(a->argv[i], w, n) == 0;
}

/* LEFT (0) or RIGHT (1), or -1. */
static int where(const fe_args_t *a, int i)
{
    return is_word(a, i, "LEFT") ? 0 : is_word(a, i, "RIGHT") ? 1 : -1;
}

/* LPUSH, RPUSH, LPUSHX, RPUSHX key element [element ...]. */
int fe_enc_lpush(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    uint32_t mode = (d->id == CMD_RPUSH || d->id == CMD_RPUSHX) ? 1u : 0u;
    if (d->id == CMD_LPUSHX || d->id == CMD_RPUSHX) mode |= 2u;
    fe_enc_begin(e, CMD_LPUSH, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_u32(e, mode);
    fe_enc_tail(e, a, 2);
    return 0;
}

/* LPOP, RPOP key [count]: the count before the key, as Redis. */
int fe_enc_lpop(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    long long count = -1;
    if (a->argc > 3)
        return fe_enc_fail(e, "ERR wrong number of arguments for '%s' command", d->name);
    if (a->argc == 3) {
        if (str_to_ll(a->argv[2], a->lens[2], &count) || count < 0)
            return fe_enc_fail(e, "ERR value is out of range, must be positive");
    }
    fe_enc_begin(e, CMD_LPOP, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_u32(e, d->id == CMD_RPOP);
    fe_enc_u32(e, (uint32_t)c->proto);
    fe_enc_i64(e, count);
    return 0;
}

/* LSET key index element: the index is the store's to check (after the
 * key, as Redis). */
int fe_enc_lset(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    fe_enc_plain(e, CMD_LSET, 1, a);
    return 0;
}

/* LTRIM key start stop. */
int fe_enc_ltrim(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    long long start, stop;
    if (str_to_ll(a->argv[2], a->lens[2], &start) || str_to_ll(a->argv[3], a->lens[3], &stop))
        return fe_enc_fail(e, FE_ERR_NOT_INT);
    fe_enc_begin(e, CMD_LTRIM, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_i64(e, start);
    fe_enc_i64(e, stop);
    return 0;
}

/* LREM key count element. */
int fe_enc_lrem(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    long long count;
    if (str_to_ll(a->argv[2], a->lens[2], &count)) return fe_enc_fail(e, FE_ERR_NOT_INT);
    fe_enc_begin(e, CMD_LREM, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_i64(e, count);
    fe_enc_arg(e, a->argv[3], a->lens[3]);
    return 0;
}

/* LINSERT key BEFORE|AFTER pivot element. */
int fe_enc_linsert(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    uint32_t after;
    if (is_word(a, 2, "AFTER"))
        after = 1;
    else if (is_word(a, 2, "BEFORE"))
        after = 0;
    else
        return fe_enc_fail(e, FE_ERR_SYNTAX);
    fe_enc_begin(e, CMD_LINSERT, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_u32(e, after);
    fe_enc_arg(e, a->argv[3], a->lens[3]);
    fe_enc_arg(e, a->argv[4], a->lens[4]);
    return 0;
}

/* LMOVE source destination LEFT|RIGHT LEFT|RIGHT, and RPOPLPUSH source
 * destination (RIGHT LEFT). */
/* The sides of LMOVE and BLMOVE (arguments 3 and 4), or RPOPLPUSH's and
 * BRPOPLPUSH's RIGHT LEFT. Returns 0, or -1 with e->err. */
static int move_sides(const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e, int *from, int *to)
{
    *from = 1;
    *to = 0;
    if (d->id != CMD_LMOVE && d->id != CMD_BLMOVE) return 0;
    *from = where(a, 3);
    *to = where(a, 4);
    return *from < 0 || *to < 0 ? fe_enc_fail(e, FE_ERR_SYNTAX) : 0;
}

int fe_enc_lmove(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    int from, to;
    if (move_sides(d, a, e, &from, &to)) return -1;
    fe_enc_begin(e, CMD_LMOVE, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_arg(e, a->argv[2], a->lens[2]);
    fe_enc_u32(e, (uint32_t)from);
    fe_enc_u32(e, (uint32_t)to);
    fe_enc_u32(e, (uint32_t)c->proto);
    return 0;
}

/* LMPOP's and BLMPOP's numkeys key [key ...] LEFT|RIGHT [COUNT count]
 * from a->argv[at] on, Redis 7.0's checks in its order. Returns 0 with
 * *numkeys, *right, *count set, or -1 with e->err. */
static int mpop_args(const fe_args_t *a, int at, fe_enc_t *e, long long *numkeys, int *right,
                     long long *count)
{
    *count = 1;
    if (str_to_ll(a->argv[at], a->lens[at], numkeys) || *numkeys <= 0)
        return fe_enc_fail(e, "ERR numkeys should be greater than 0");
    if (*numkeys > a->argc - at - 2) return fe_enc_fail(e, FE_ERR_SYNTAX);
    int i = at + 1 + (int)*numkeys;
    *right = where(a, i);
    if (*right < 0) return fe_enc_fail(e, FE_ERR_SYNTAX);
    int counted = 0;
    for (i++; i < a->argc; i++) {
        if (!counted && i + 1 < a->argc && is_word(a, i, "COUNT")) {
            i++;
            if (str_to_ll(a->argv[i], a->lens[i], count) || *count <= 0)
                return fe_enc_fail(e, "ERR count should be greater than 0");
            counted = 1;
        } else {
            return fe_enc_fail(e, FE_ERR_SYNTAX);
        }
    }
    return 0;
}

/* LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]. */
int fe_enc_lmpop(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    long long numkeys, count;
    int right;
    if (mpop_args(a, 1, e, &numkeys, &right, &count)) return -1;
    fe_enc_begin(e, CMD_LMPOP, 1);
    fe_enc_u32(e, (uint32_t)numkeys);
    fe_enc_u32(e, (uint32_t)right);
    fe_enc_i64(e, count);
    fe_enc_u32(e, (uint32_t)c->proto);
    fe_enc_tail(e, a, 2);
    return 0;
}

/* ---- blocking pops ---- */

int fe_enc_block_timeout(const fe_args_t *a, int i, fe_enc_t *e)
{
    long double v;
    if (str_to_ld(a->argv[i], a->lens[i], &v))
        return fe_enc_fail(e, "ERR timeout is not a float or out of range");
    long double ms = ceill(v * 1000.0L);
    if (!(ms < 9.2e18L) || ms < 0) return fe_enc_fail(e, "ERR timeout is negative");
    e->blocks = 1;
    e->block_ms = (int64_t)ms;
    return 0;
}

void fe_enc_block_head(const fe_conn_t *c, fe_enc_t *e, cmd_id_t op, int side, uint32_t kind,
                       long long count)
{
    fe_enc_begin(e, op, 1);
    fe_enc_i64(e, (int64_t)c->id);
    fe_enc_u32(e, (uint32_t)c->proto);
    fe_enc_u32(e, (uint32_t)side);
    fe_enc_u32(e, kind);
    fe_enc_i64(e, count);
}

/* BLPOP, BRPOP key [key ...] timeout. */
int fe_enc_blpop(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    if (fe_enc_block_timeout(a, a->argc - 1, e)) return -1;
    fe_enc_block_head(c, e, CMD_BLPOP, d->id == CMD_BRPOP, 1, -1);
    fe_enc_tail(e, a, 1);
    e->argc--; /* the timeout stays in the frontend */
    return 0;
}

/* BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]: the
 * arguments after the timeout first, as Redis 7.0.15 checks them. */
int fe_enc_blmpop(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    long long numkeys, count;
    int right;
    if (mpop_args(a, 2, e, &numkeys, &right, &count) || fe_enc_block_timeout(a, 1, e)) return -1;
    fe_enc_block_head(c, e, CMD_BLPOP, right, 2, count);
    fe_enc_tail(e, a, 3);
    e->argc = 5 + (int)numkeys; /* the keys only */
    return 0;
}

/* BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout, BRPOPLPUSH
 * source destination timeout (RIGHT LEFT). */
int fe_enc_blmove(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    int from, to;
    if (move_sides(d, a, e, &from, &to) || fe_enc_block_timeout(a, a->argc - 1, e)) return -1;
    fe_enc_begin(e, CMD_BLMOVE, 1);
    fe_enc_i64(e, (int64_t)c->id);
    fe_enc_u32(e, (uint32_t)c->proto);
    fe_enc_u32(e, (uint32_t)from);
    fe_enc_u32(e, (uint32_t)to);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_arg(e, a->argv[2], a->lens[2]);
    return 0;
}
