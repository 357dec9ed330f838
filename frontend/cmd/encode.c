/*
 * encode.c - canonical encoding of write commands (encode.h), in a frontend
 * process: the encoder table, the helpers encoders share, and the encoders of
 * the first release's writes (SET, MSET, DEL, INCRBY and friends, APPEND,
 * GETDEL, the EXPIRE family, PERSIST, FLUSHALL).
 *
 * Pure functions of the arguments and the wall clock: nothing here replies,
 * allocates or touches shared memory, so a refused command changes nothing
 * (contract 7) and the same encoder serves MULTI at EXEC time.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/cmd/encode.h"
#include "frontend/core/core.h"
#include "shm.h"
#include "strutil.h"

/* ---- helpers ---- */

void fe_enc_begin(fe_enc_t *e, cmd_id_t op, int needs_reply)
{
    e->op = op;
    e->needs_reply = needs_reply;
    e->argc = 0;
    e->argv = e->fixed_argv;
    e->lens = e->fixed_lens;
    e->scratch_used = 0;
}

void fe_enc_arg(fe_enc_t *e, const void *p, uint32_t len)
{
    /* Encoders are written for their form's size: overflowing is a bug. */
    if (e->argc >= FE_ENC_FIXED) abort();
    e->fixed_argv[e->argc] = p;
    e->fixed_lens[e->argc] = len;
    e->argc++;
}

static unsigned char *scratch(fe_enc_t *e, size_t n)
{
    if (e->scratch_used + n > FE_ENC_SCRATCH) abort();
    unsigned char *p = e->scratch + e->scratch_used;
    e->scratch_used += n;
    return p;
}

void fe_enc_u32(fe_enc_t *e, uint32_t v)
{
    unsigned char *p = scratch(e, 4);
    cmd_put_u32(p, v);
    fe_enc_arg(e, p, 4);
}

void fe_enc_i64(fe_enc_t *e, int64_t v)
{
    unsigned char *p = scratch(e, 8);
    cmd_put_i64(p, v);
    fe_enc_arg(e, p, 8);
}

void fe_enc_plain(fe_enc_t *e, cmd_id_t op, int needs_reply, const fe_args_t *a)
{
    fe_enc_begin(e, op, needs_reply);
    e->argc = a->argc - 1;
    e->argv = (const unsigned char *const *)(a->argv + 1);
    e->lens = a->lens + 1;
}

int fe_enc_fail(fe_enc_t *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(e->err_buf + 1, sizeof(e->err_buf) - 3, fmt, ap);
    va_end(ap);
    e->err = e->err_buf;
    if (n < 0) n = 0;
    if ((size_t)n + 3 >= sizeof(e->err_buf)) {
        /* An echoed argument (Redis quotes it whole): format again into a
         * buffer of the right size. */
        char *big = malloc((size_t)n + 4);
        if (!big) abort();
        va_start(ap, fmt);
        vsnprintf(big + 1, (size_t)n + 1, fmt, ap);
        va_end(ap);
        e->err = big;
    }
    e->err[0] = '-';
    n = (int)resp_error_clean(e->err + 1);
    memcpy(e->err + 1 + n, "\r\n", 3);
    return -1;
}

void fe_enc_release(fe_enc_t *e)
{
    if (e->err && e->err != e->err_buf) free(e->err);
    e->err = NULL;
}

static int fail_expire_time(fe_enc_t *e, const char *cmd)
{
    return fe_enc_fail(e, "ERR invalid expire time in '%s' command", cmd);
}

/* ---- the first release's writes ---- */

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
        if (fe_word_eq(o, n, "nx") && !(flags & SETF_XX)) flags |= SETF_NX;
        else if (fe_word_eq(o, n, "xx") && !(flags & SETF_NX)) flags |= SETF_XX;
        else if (fe_word_eq(o, n, "get")) flags |= SETF_GET;
        else if (fe_word_eq(o, n, "keepttl") && exp == EXP_NONE) flags |= SETF_KEEPTTL;
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
        if (v <= 0 || (seconds && v > LLONG_MAX / 1000)) return fail_expire_time(e, "set");
        if (seconds) v *= 1000;
        if (exp == EXP_EX || exp == EXP_PX) {
            long long now = shm_now_ms();
            if (v > LLONG_MAX - now) return fail_expire_time(e, "set");
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

int fe_enc_del(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    fe_enc_plain(e, CMD_DEL, 1, a);
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

/* EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT key time [NX|XX|GT|LT]. */
int fe_enc_expire(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    uint32_t flags = 0;
    for (int j = 3; j < a->argc; j++) {
        const char *o = a->argv[j];
        size_t n = a->lens[j];
        if (fe_word_eq(o, n, "nx")) flags |= EXPF_NX;
        else if (fe_word_eq(o, n, "xx")) flags |= EXPF_XX;
        else if (fe_word_eq(o, n, "gt")) flags |= EXPF_GT;
        else if (fe_word_eq(o, n, "lt")) flags |= EXPF_LT;
        else return fe_enc_fail(e, "ERR Unsupported option %.*s", (int)n, o);
    }
    if ((flags & EXPF_NX) && (flags & (EXPF_XX | EXPF_GT | EXPF_LT)))
        return fe_enc_fail(e, "ERR NX and XX, GT or LT options at the same time are not compatible");
    if ((flags & EXPF_GT) && (flags & EXPF_LT))
        return fe_enc_fail(e, "ERR GT and LT options at the same time are not compatible");
    long long when;
    if (str_to_ll(a->argv[2], a->lens[2], &when) != 0) return fe_enc_fail(e, FE_ERR_NOT_INT);
    int seconds = d->id == CMD_EXPIRE || d->id == CMD_EXPIREAT;
    long long base = (d->id == CMD_EXPIRE || d->id == CMD_PEXPIRE) ? shm_now_ms() : 0;
    if (seconds) {
        if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) return fail_expire_time(e, d->name);
        when *= 1000;
    }
    if (when > LLONG_MAX - base) return fail_expire_time(e, d->name);
    when += base;
    fe_enc_begin(e, CMD_PEXPIREAT, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_i64(e, when);
    fe_enc_u32(e, flags);
    return 0;
}

int fe_enc_persist(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    fe_enc_plain(e, CMD_PERSIST, 1, a);
    return 0;
}

/* FLUSHALL [ASYNC|SYNC]: both run synchronously. */
int fe_enc_flushall(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    if (a->argc > 2 || (a->argc == 2 && !fe_word_eq(a->argv[1], a->lens[1], "async") &&
                        !fe_word_eq(a->argv[1], a->lens[1], "sync")))
        return fe_enc_fail(e, FE_ERR_SYNTAX);
    fe_enc_begin(e, CMD_FLUSHALL, 0);
    return 0;
}

/* ---- the table: the registry's WRITE rows, by command id ---- */

#define ENC_ROW_LOCAL(ID, handler)
#define ENC_ROW_WRITE(ID, handler) [CMD_##ID] = handler,
#define ENC_ROW_READ(ID, handler)
#define ENC_ROW_MULTI(ID, handler)
static fe_encode_fn const encoders[CMD__COUNT] = {
#define CMD(ID, num, name, arity, flags, first, last, step, cats, route, handler, ...)             \
    ENC_ROW_##route(ID, handler)
#include "commands.def"
};

fe_encode_fn fe_encoder(cmd_id_t id)
{
    return (unsigned)id < (unsigned)CMD__COUNT ? encoders[id] : NULL;
}
