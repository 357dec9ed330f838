/*
 * t_string.c - canonical encoding of the string writes (encode.h), in a
 * frontend process: SET, MSET, INCR, DECR, INCRBY, DECRBY, APPEND, GETDEL,
 * SETNX, SETEX, PSETEX, GETSET, GETEX, MSETNX, INCRBYFLOAT, SETRANGE,
 * SETBIT. Pure functions of the arguments, the wall clock and the
 * connection's limits: a refused command changes nothing (contract 7).
 *
 * Each encoder makes Redis 7.0's argument checks in Redis' order, with its
 * texts. Checks that Redis makes only after the key's type or value (a
 * value that is not a float, INCRBYFLOAT's increment, SETRANGE's size
 * limit, GETEX's time) are left to the store: store/types/t_string.c
 * and t_bitmap.c.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bitfield.h"
#include "frontend/cmd/encode.h"
#include "frontend/core/core.h"
#include "shm.h"
#include "strutil.h"

/* Redis' getExpireMillisecondsOrReply: the absolute time in ms of an
 * expire argument. Returns 0, 1 when it is not an integer, 2 when it is
 * not a valid expire time (not positive, or overflowing once in ms). */
static int expire_at_ms(const char *s, size_t n, int seconds, int relative, int64_t *at)
{
    long long v;
    if (str_to_ll(s, n, &v)) return 1;
    if (v <= 0 || (seconds && v > LLONG_MAX / 1000)) return 2;
    if (seconds) v *= 1000;
    if (relative) {
        long long now = shm_now_ms();
        if (v > LLONG_MAX - now) return 2;
        v += now;
    }
    *at = v;
    return 0;
}

/* proto-max-bulk-len, the largest string SETRANGE and SETBIT may make
 * (<= 0: no limit). */
static int64_t max_string(const fe_conn_t *c)
{
    return c->fe->limits.max_bulk_len;
}

/* SETNX key value: SET NX, replying :1 / :0. */
int fe_enc_setnx(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    fe_enc_begin(e, CMD_SET, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_arg(e, a->argv[2], a->lens[2]);
    fe_enc_u32(e, SETF_NX | SETF_REPLY_INT);
    fe_enc_i64(e, 0);
    return 0;
}

/* SETEX key seconds value, PSETEX key milliseconds value: a SET with an
 * absolute expiry; the reply is +OK once durable. */
int fe_enc_setex(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    int64_t at;
    int rc = expire_at_ms(a->argv[2], a->lens[2], d->id == CMD_SETEX, 1, &at);
    if (rc == 1) return fe_enc_fail(e, FE_ERR_NOT_INT);
    if (rc == 2) return fe_enc_fail(e, "ERR invalid expire time in '%s' command", d->name);
    fe_enc_begin(e, CMD_SET, 0);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_arg(e, a->argv[3], a->lens[3]);
    fe_enc_u32(e, 0);
    fe_enc_i64(e, at);
    return 0;
}

/* GETSET key value: SET GET (the TTL goes, as with SET). */
int fe_enc_getset(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    fe_enc_begin(e, CMD_SET, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_arg(e, a->argv[2], a->lens[2]);
    fe_enc_u32(e, SETF_GET);
    fe_enc_i64(e, 0);
    return 0;
}

/* GETEX key [EX s|PX ms|EXAT s|PXAT ms|PERSIST], options parsed with Redis
 * 7's rules (one kind of expiry, repeatable; PERSIST excludes them). Without
 * an option it is still a CMD_GETEX record (flags 0), which changes nothing:
 * the table routes GETEX as a write whatever its arguments. */
int fe_enc_getex(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    enum { OPT_NONE, OPT_EX, OPT_PX, OPT_EXAT, OPT_PXAT, OPT_PERSIST };
    static const char *const names[] = {"", "ex", "px", "exat", "pxat"};
    int kind = OPT_NONE, time_arg = -1;
    for (int j = 2; j < a->argc; j++) {
        const char *o = a->argv[j];
        size_t n = a->lens[j];
        int k = OPT_NONE;
        for (int i = OPT_EX; i <= OPT_PXAT; i++)
            if (fe_word_eq(o, n, names[i])) k = i;
        if (fe_word_eq(o, n, "persist") && (kind == OPT_NONE || kind == OPT_PERSIST)) {
            kind = OPT_PERSIST;
        } else if (k != OPT_NONE && (kind == OPT_NONE || kind == k) && j < a->argc - 1) {
            kind = k;
            time_arg = ++j;
        } else {
            return fe_enc_fail(e, FE_ERR_SYNTAX);
        }
    }
    uint32_t flags = 0;
    int64_t at = 0;
    if (kind == OPT_PERSIST) {
        flags = GETEXF_PERSIST;
    } else if (kind != OPT_NONE) {
        int rc =
            expire_at_ms(a->argv[time_arg], a->lens[time_arg], kind == OPT_EX || kind == OPT_EXAT,
                         kind == OPT_EX || kind == OPT_PX, &at);
        flags = rc == 1 ? GETEXF_ERR_NOT_INT : rc == 2 ? GETEXF_ERR_EXPIRE : GETEXF_AT;
        if (rc) at = 0;
    }
    fe_enc_begin(e, CMD_GETEX, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_u32(e, flags);
    fe_enc_i64(e, at);
    return 0;
}

/* MSETNX key value [key value ...]: all or nothing, :1 / :0. */
int fe_enc_msetnx(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    if (a->argc % 2 == 0)
        return fe_enc_fail(e, "ERR wrong number of arguments for '%s' command", d->name);
    fe_enc_plain(e, CMD_MSETNX, 1, a);
    return 0;
}

/* INCRBYFLOAT key increment. Redis checks the key's type before it
 * parses the increment (WRONGTYPE wins over a bad increment), so the store
 * parses it (a record with a bad increment changes nothing). */
int fe_enc_incrbyfloat(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    fe_enc_plain(e, CMD_INCRBYFLOAT, 1, a);
    return 0;
}

/* SETRANGE key offset value. Redis checks the size limit only for a
 * non-empty value (an empty one changes nothing), and after the key's type
 * (WRONGTYPE wins), so the record carries proto-max-bulk-len as it is now
 * and the store checks (common/command.h). */
int fe_enc_setrange(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    long long off;
    if (str_to_ll(a->argv[2], a->lens[2], &off)) return fe_enc_fail(e, FE_ERR_NOT_INT);
    if (off < 0) return fe_enc_fail(e, "ERR offset is out of range");
    fe_enc_begin(e, CMD_SETRANGE, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_i64(e, off);
    fe_enc_arg(e, a->argv[3], a->lens[3]);
    fe_enc_i64(e, max_string(c));
    return 0;
}

/* SETBIT key offset 0|1: the offset must address a byte below
 * proto-max-bulk-len. */
int fe_enc_setbit(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    long long off, bit;
    int64_t max = max_string(c);
    if (str_to_ll(a->argv[2], a->lens[2], &off) || off < 0 || (max > 0 && (off >> 3) >= max))
        return fe_enc_fail(e, "ERR bit offset is not an integer or out of range");
    if (str_to_ll(a->argv[3], a->lens[3], &bit) || (bit & ~1LL))
        return fe_enc_fail(e, "ERR bit is not an integer or out of range");
    fe_enc_begin(e, CMD_SETBIT, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_i64(e, off);
    fe_enc_u32(e, (uint32_t)bit);
    return 0;
}

/* BITOP AND|OR|XOR|NOT destkey key [key ...]: the operation checked here
 * (Redis' syntax error, NOT's single source), the sources' types by the
 * store. Record: destkey, the operation (ST_BITOP_*), the sources. */
int fe_enc_bitop(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    static const char *const ops[] = {"and", "or", "xor", "not"};
    uint32_t op = 0;
    while (op < 4 &&
           !(a->lens[1] == strlen(ops[op]) && strncasecmp(a->argv[1], ops[op], a->lens[1]) == 0))
        op++;
    if (op == 4) return fe_enc_fail(e, "ERR syntax error");
    if (op == 3 && a->argc != 4)
        return fe_enc_fail(e, "ERR BITOP NOT must be called with a single source key.");
    fe_enc_begin(e, CMD_BITOP, 1);
    fe_enc_arg(e, a->argv[2], a->lens[2]);
    fe_enc_u32(e, op);
    fe_enc_tail(e, a, 3);
    return 0;
}

/* BITFIELD key [GET type offset] [SET type offset value] [INCRBY type
 * offset increment] [OVERFLOW WRAP|SAT|FAIL] ...: every word checked here
 * (common/bitfield.c, Redis' errors in its order); a line with SET or
 * INCRBY is a record of the key and its operations, BF_OP_BYTES each (a
 * line of GETs only runs as BITFIELD_RO: cmd_runs_as). */
int fe_enc_bitfield(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    bf_op_t *ops;
    int writes;
    const char *err;
    int n = bf_parse(a->argc - 2, a->argv + 2, a->lens + 2, max_string(c), &ops, &writes, &err);
    if (n < 0) return fe_enc_fail(e, err);
    unsigned char *blob = malloc((size_t)n * BF_OP_BYTES + 1);
    if (!blob) {
        free(ops);
        return fe_enc_fail(e, "OOM command not allowed when used memory > 'maxmemory'.");
    }
    for (int i = 0; i < n; i++)
        bf_put(blob + (size_t)i * BF_OP_BYTES, &ops[i]);
    free(ops);
    fe_enc_begin(e, CMD_BITFIELD, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_arg_owned(e, blob, (uint32_t)n * BF_OP_BYTES);
    return 0;
}

/* PFADD key [element ...] and PFMERGE destkey [sourcekey ...]: the store
 * checks the values and counts (store/types/t_hll.c). Record: the first
 * key, hll-sparse-max-bytes as it is now (a HyperLogLog's encoding then
 * follows the record on replay, not the setting), the other words. */
static int enc_hll(const fe_conn_t *c, cmd_id_t op, const fe_args_t *a, fe_enc_t *e)
{
    fe_enc_begin(e, op, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_i64(e, c->fe->hll_sparse_max);
    fe_enc_tail(e, a, 2);
    return 0;
}

int fe_enc_pfadd(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    return enc_hll(c, CMD_PFADD, a, e);
}

int fe_enc_pfmerge(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    return enc_hll(c, CMD_PFMERGE, a, e);
}

/* PFDEBUG subcommand key: a write (GETREG and TODENSE may make the value
 * dense); the store checks the subcommand after the key, as Redis. */
int fe_enc_pfdebug(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    fe_enc_plain(e, CMD_PFDEBUG, 1, a);
    return 0;
}

/* ---- SET, MSET, INCRBY and friends, APPEND, GETDEL ---- */

/* SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL], parsed
 * with Redis 7's rules: options in any order, a repeated option allowed, a
 * conflicting one a syntax error. */
int fe_enc_set(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    enum { EXP_NONE, EXP_EX, EXP_PX, EXP_EXAT, EXP_PXAT };
    static const char *const exp_names[] = {"", "ex", "px", "exat", "pxat"};
    uint32_t flags = 0;
    int exp = EXP_NONE;
    int exp_arg = -1;
    for (int j = 3; j < a->argc; j++) {
        const char *o = a->argv[j];
        size_t n = a->lens[j];
        int has_next = j < a->argc - 1;
        int kind = EXP_NONE;
        for (int k = EXP_EX; k <= EXP_PXAT; k++)
            if (fe_word_eq(o, n, exp_names[k])) kind = k;
        if (fe_word_eq(o, n, "nx") && !(flags & SETF_XX))
            flags |= SETF_NX;
        else if (fe_word_eq(o, n, "xx") && !(flags & SETF_NX))
            flags |= SETF_XX;
        else if (fe_word_eq(o, n, "get"))
            flags |= SETF_GET;
        else if (fe_word_eq(o, n, "keepttl") && exp == EXP_NONE)
            flags |= SETF_KEEPTTL;
        else if (kind != EXP_NONE && !(flags & SETF_KEEPTTL) && has_next &&
                 (exp == EXP_NONE || exp == kind)) {
            exp = kind;
            exp_arg = ++j;
        } else {
            return fe_enc_fail(e, FE_ERR_SYNTAX);
        }
    }
    int64_t at = 0;
    if (exp != EXP_NONE) {
        long long v;
        if (str_to_ll(a->argv[exp_arg], a->lens[exp_arg], &v) != 0)
            return fe_enc_fail(e, FE_ERR_NOT_INT);
        int seconds = exp == EXP_EX || exp == EXP_EXAT;
        if (v <= 0 || (seconds && v > LLONG_MAX / 1000)) return fe_enc_fail_expire(e, "set");
        if (seconds) v *= 1000;
        if (exp == EXP_EX || exp == EXP_PX) {
            long long now = shm_now_ms();
            if (v > LLONG_MAX - now) return fe_enc_fail_expire(e, "set");
            v += now;
        }
        at = v;
    }
    fe_enc_begin(e, CMD_SET, (flags & (SETF_NX | SETF_XX | SETF_GET)) != 0);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_arg(e, a->argv[2], a->lens[2]);
    fe_enc_u32(e, flags);
    fe_enc_i64(e, at);
    return 0;
}

int fe_enc_mset(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    if (a->argc % 2 == 0)
        return fe_enc_fail(e, "ERR wrong number of arguments for '%s' command", d->name);
    fe_enc_plain(e, CMD_MSET, 0, a);
    return 0;
}

/* INCR, DECR, INCRBY, DECRBY. */
int fe_enc_incrby(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    long long delta = 1;
    if (d->id == CMD_INCRBY || d->id == CMD_DECRBY) {
        if (str_to_ll(a->argv[2], a->lens[2], &delta) != 0) return fe_enc_fail(e, FE_ERR_NOT_INT);
    }
    if (d->id == CMD_DECR || d->id == CMD_DECRBY) {
        if (delta == LLONG_MIN) return fe_enc_fail(e, "ERR decrement would overflow");
        delta = -delta;
    }
    fe_enc_begin(e, CMD_INCRBY, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_i64(e, delta);
    return 0;
}

/* APPEND key value: the record carries proto-max-bulk-len as it is now,
 * since whether the result is too long depends on the stored value, which
 * only the store knows (command.h). */
int fe_enc_append(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    fe_enc_begin(e, CMD_APPEND, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_arg(e, a->argv[2], a->lens[2]);
    fe_enc_i64(e, c->fe->limits.max_bulk_len);
    return 0;
}

int fe_enc_getdel(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    fe_enc_plain(e, CMD_GETDEL, 1, a);
    return 0;
}
