/*
 * t_keys.c - canonical encoding of the writes on keys of any type
 * (encode.h), in a frontend process: DEL (and UNLINK, which becomes
 * CMD_DEL), the EXPIRE family, PERSIST, RENAME, RENAMENX, COPY, MOVE,
 * SWAPDB, FLUSHDB, FLUSHALL.
 *
 * Each encoder checks what Redis 7.0 checks before touching data, in the
 * same order and with the same texts: database indexes (parsed as Redis'
 * getIntFromObjectOrReply does, then range-checked against `databases`),
 * option syntax, "source and destination objects are the same". Whatever
 * depends on the data (no such key, destination exists) is the store's to
 * answer. Pure functions of the arguments, the wall clock and the
 * connection's db: a refused command changes nothing (contract 7).
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "frontend/cmd/encode.h"
#include "frontend/core/core.h"
#include "strutil.h"

#define ERR_DB_RANGE    "ERR DB index is out of range"
#define ERR_SAME_OBJECT "ERR source and destination objects are the same"

/*
 * An int argument, as Redis' getIntFromObjectOrReply: not an integer gives
 * msg (or the standard text), outside the int range msg (or "value is out of
 * range, value must between ..."). Returns 0, or -1 with e->err set.
 */
static int parse_int(fe_enc_t *e, const char *p, uint32_t n, const char *msg, int *out)
{
    long long v;
    if (str_to_ll(p, n, &v) != 0) return fe_enc_fail(e, "%s", msg ? msg : FE_ERR_NOT_INT);
    if (v < INT_MIN || v > INT_MAX) {
        if (msg) return fe_enc_fail(e, "%s", msg);
        return fe_enc_fail(e, "ERR value is out of range, value must between %d and %d", INT_MIN,
                           INT_MAX);
    }
    *out = (int)v;
    return 0;
}

/* A database index argument: an int, then within 0..databases-1. */
static int parse_db(const fe_conn_t *c, fe_enc_t *e, const char *p, uint32_t n, const char *msg,
                    int *out)
{
    if (parse_int(e, p, n, msg, out)) return -1;
    if (*out < 0 || *out >= c->fe->cfg->databases) return fe_enc_fail(e, ERR_DB_RANGE);
    return 0;
}

/* RENAME key newkey (+OK) and RENAMENX key newkey (:1 / :0). */
int fe_enc_rename(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    fe_enc_begin(e, CMD_RENAME, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_arg(e, a->argv[2], a->lens[2]);
    fe_enc_u32(e, d->id == CMD_RENAMENX);
    return 0;
}

/* COPY source destination [DB destination-db] [REPLACE]: options in any
 * order, each error as soon as Redis' left-to-right parse meets it. */
int fe_enc_copy(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    int db = c->db, replace = 0;
    for (int j = 3; j < a->argc; j++) {
        if (fe_word_eq(a->argv[j], a->lens[j], "replace")) {
            replace = 1;
        } else if (fe_word_eq(a->argv[j], a->lens[j], "db") && j + 1 < a->argc) {
            if (parse_db(c, e, a->argv[j + 1], a->lens[j + 1], NULL, &db)) return -1;
            j++;
        } else {
            return fe_enc_fail(e, FE_ERR_SYNTAX);
        }
    }
    if (c->fe->cluster && (c->db != 0 || db != 0))
        return fe_enc_fail(e, "ERR Copying to another database is not allowed in cluster mode");
    if (db == c->db && a->lens[1] == a->lens[2] && memcmp(a->argv[1], a->argv[2], a->lens[1]) == 0)
        return fe_enc_fail(e, ERR_SAME_OBJECT);
    fe_enc_begin(e, CMD_COPY, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_arg(e, a->argv[2], a->lens[2]);
    fe_enc_u32(e, (uint32_t)db);
    fe_enc_u32(e, (uint32_t)replace);
    return 0;
}

/* MOVE key db. */
int fe_enc_move(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    if (c->fe->cluster) return fe_enc_fail(e, "ERR MOVE is not allowed in cluster mode");
    int db;
    if (parse_db(c, e, a->argv[2], a->lens[2], NULL, &db)) return -1;
    if (db == c->db) return fe_enc_fail(e, ERR_SAME_OBJECT);
    fe_enc_begin(e, CMD_MOVE, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_u32(e, (uint32_t)db);
    return 0;
}

/* SWAPDB index1 index2: both parsed before either is range-checked. */
int fe_enc_swapdb(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    if (c->fe->cluster) return fe_enc_fail(e, "ERR SWAPDB is not allowed in cluster mode");
    int x, y;
    if (parse_int(e, a->argv[1], a->lens[1], "ERR invalid first DB index", &x)) return -1;
    if (parse_int(e, a->argv[2], a->lens[2], "ERR invalid second DB index", &y)) return -1;
    int ndb = c->fe->cfg->databases;
    if (x < 0 || x >= ndb || y < 0 || y >= ndb) return fe_enc_fail(e, ERR_DB_RANGE);
    fe_enc_begin(e, CMD_SWAPDB, 0);
    fe_enc_u32(e, (uint32_t)x);
    fe_enc_u32(e, (uint32_t)y);
    return 0;
}

/* FLUSHDB [ASYNC|SYNC]: the connection's database, synchronously either way. */
int fe_enc_flushdb(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    if (a->argc > 2 || (a->argc == 2 && !fe_word_eq(a->argv[1], a->lens[1], "async") &&
                        !fe_word_eq(a->argv[1], a->lens[1], "sync")))
        return fe_enc_fail(e, FE_ERR_SYNTAX);
    fe_enc_begin(e, CMD_FLUSHDB, 0);
    return 0;
}

/* ---- DEL, the EXPIRE family, PERSIST, FLUSHALL ---- */

int fe_enc_del(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    (void)d;
    fe_enc_plain(e, CMD_DEL, 1, a);
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
        if (fe_word_eq(o, n, "nx"))
            flags |= EXPF_NX;
        else if (fe_word_eq(o, n, "xx"))
            flags |= EXPF_XX;
        else if (fe_word_eq(o, n, "gt"))
            flags |= EXPF_GT;
        else if (fe_word_eq(o, n, "lt"))
            flags |= EXPF_LT;
        else
            return fe_enc_fail(e, "ERR Unsupported option %.*s", (int)n, o);
    }
    if ((flags & EXPF_NX) && (flags & (EXPF_XX | EXPF_GT | EXPF_LT)))
        return fe_enc_fail(e,
                           "ERR NX and XX, GT or LT options at the same time are not compatible");
    if ((flags & EXPF_GT) && (flags & EXPF_LT))
        return fe_enc_fail(e, "ERR GT and LT options at the same time are not compatible");
    long long when;
    if (str_to_ll(a->argv[2], a->lens[2], &when) != 0) return fe_enc_fail(e, FE_ERR_NOT_INT);
    int seconds = d->id == CMD_EXPIRE || d->id == CMD_EXPIREAT;
    long long base = (d->id == CMD_EXPIRE || d->id == CMD_PEXPIRE) ? shm_now_ms() : 0;
    if (seconds) {
        if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000)
            return fe_enc_fail_expire(e, d->name);
        when *= 1000;
    }
    if (when > LLONG_MAX - base) return fe_enc_fail_expire(e, d->name);
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
