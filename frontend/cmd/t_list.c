/*
 * t_list.c - canonical encoding of the list writes (encode.h), in a
 * frontend process: LPUSH RPUSH LPUSHX RPUSHX (CMD_LPUSH), LPOP RPOP
 * (CMD_LPOP), LSET, LTRIM, LREM, LINSERT, LMOVE and RPOPLPUSH (CMD_LMOVE),
 * LMPOP. Pure functions of the arguments and the connection's settings: a
 * refused command changes nothing (contract 7).
 *
 * The checks Redis 7.0 makes before it looks a key up are made here, in
 * its order, with its texts; those it makes after (LSET's index) and
 * WRONGTYPE are the store's (store/types/t_list.c). Records that reply a
 * null carry the connection's protocol (RESP3's null differs).
 */
#include <limits.h>
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
int fe_enc_lmove(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    int from = 1, to = 0;
    if (d->id == CMD_LMOVE) {
        from = where(a, 3);
        to = where(a, 4);
        if (from < 0 || to < 0) return fe_enc_fail(e, FE_ERR_SYNTAX);
    }
    fe_enc_begin(e, CMD_LMOVE, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_arg(e, a->argv[2], a->lens[2]);
    fe_enc_u32(e, (uint32_t)from);
    fe_enc_u32(e, (uint32_t)to);
    fe_enc_u32(e, (uint32_t)c->proto);
    return 0;
}

/* LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]: Redis 7.0's checks
 * in its order. */
int fe_enc_lmpop(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    long long numkeys, count = 1;
    if (str_to_ll(a->argv[1], a->lens[1], &numkeys) || numkeys <= 0)
        return fe_enc_fail(e, "ERR numkeys should be greater than 0");
    if (numkeys > a->argc - 3) return fe_enc_fail(e, FE_ERR_SYNTAX);
    int at = 2 + (int)numkeys;
    int right = where(a, at);
    if (right < 0) return fe_enc_fail(e, FE_ERR_SYNTAX);
    int counted = 0;
    for (at++; at < a->argc; at++) {
        if (!counted && at + 1 < a->argc && is_word(a, at, "COUNT")) {
            at++;
            if (str_to_ll(a->argv[at], a->lens[at], &count) || count <= 0)
                return fe_enc_fail(e, "ERR count should be greater than 0");
            counted = 1;
        } else {
            return fe_enc_fail(e, FE_ERR_SYNTAX);
        }
    }
    fe_enc_begin(e, CMD_LMPOP, 1);
    fe_enc_u32(e, (uint32_t)numkeys);
    fe_enc_u32(e, (uint32_t)right);
    fe_enc_i64(e, count);
    fe_enc_u32(e, (uint32_t)c->proto);
    fe_enc_tail(e, a, 2);
    return 0;
}
