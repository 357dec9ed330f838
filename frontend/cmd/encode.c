/*
 * encode.c - the helpers every encoder shares (encode.h: building a
 * record's fixed-shape form, refusing with Redis' error text; which
 * arguments may be a large value's, D58), in a frontend process. The encoders themselves live one
 * file per type (t_string.c, t_keys.c) and are found through encoders.c's table.
 *
 * Pure functions of the arguments: nothing here replies, allocates (but a
 * long error text) or touches shared memory, so a refused command changes
 * nothing (contract 7) and the same encoder serves MULTI at EXEC time.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <assert.h>
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

void fe_enc_init(fe_enc_t *e)
{
    e->blocks = 0;
    e->block_ms = 0;
    e->err = NULL;
    e->tail_argv = NULL;
    e->tail_lens = NULL;
    e->owned = NULL;
}

void fe_enc_arg_owned(fe_enc_t *e, unsigned char *p, uint32_t len)
{
    assert(!e->owned); /* one per encoding */
    e->owned = p;
    fe_enc_arg(e, p, len);
}

void fe_enc_tail(fe_enc_t *e, const fe_args_t *a, int from)
{
    int n = e->argc + (a->argc - from);
    e->tail_argv = malloc((size_t)n * sizeof(*e->tail_argv));
    e->tail_lens = malloc((size_t)n * sizeof(*e->tail_lens));
    if (!e->tail_argv || !e->tail_lens) abort(); /* as buf.h: out of memory aborts */
    memcpy(e->tail_argv, e->argv, (size_t)e->argc * sizeof(*e->tail_argv));
    memcpy(e->tail_lens, e->lens, (size_t)e->argc * sizeof(*e->tail_lens));
    for (int i = from; i < a->argc; i++) {
        e->tail_argv[e->argc] = (const unsigned char *)a->argv[i];
        e->tail_lens[e->argc++] = a->lens[i];
    }
    e->argv = e->tail_argv;
    e->lens = e->tail_lens;
}

void fe_enc_release(fe_enc_t *e)
{
    if (e->err && e->err != e->err_buf) free(e->err);
    e->err = NULL;
    free(e->tail_argv);
    free(e->tail_lens);
    free(e->owned);
    e->tail_argv = NULL;
    e->tail_lens = NULL;
    e->owned = NULL;
}

int fe_enc_fail_expire(fe_enc_t *e, const char *cmd)
{
    return fe_enc_fail(e, "ERR invalid expire time in '%s' command", cmd);
}

/* ---- large values (D31, D45, D48, D58) ---- */

int fe_big_user_arg(const cmd_desc_t *d, int count, int arg, int in_multi)
{
    if (!cmd_arity_ok(d->arity, count) || arg < 1) return 0;
    /* Inside MULTI a read's arguments may be large too: the store reads
     * them back into RAM where the transaction is applied (D58). */
    if (in_multi && d->route == CMD_ROUTE_READ) return 1;
    switch (d->id) {
    case CMD_SET:
    case CMD_SETNX:
    case CMD_GETSET:
    case CMD_APPEND:
        return arg == 2;
    case CMD_SETEX:
    case CMD_PSETEX:
    case CMD_SETRANGE:
    case CMD_HSETNX:
    case CMD_LSET:
        return arg == 3;
    case CMD_LINSERT:
        return arg == 4;
    case CMD_MSET:
    case CMD_MSETNX:
        return arg % 2 == 0;
    case CMD_HSET:
    case CMD_HMSET:
        return arg >= 3 && arg % 2 == 1;
    case CMD_LPUSH:
    case CMD_RPUSH:
    case CMD_LPUSHX:
    case CMD_RPUSHX:
    case CMD_SADD:
    case CMD_SREM:
        return arg >= 2;
    default:
        return 0;
    }
}
