/*
 * encode-keys.c - canonical encoding of the keyspace writes (encode.h), in a
 * frontend process: RENAME, RENAMENX, COPY, MOVE, SWAPDB, FLUSHDB. (UNLINK
 * is DEL's encoder: both become CMD_DEL.)
 *
 * Each encoder checks what Redis 7.0 checks before touching data, in the
 * same order and with the same texts: database indexes (parsed as Redis'
 * getIntFromObjectOrReply does, then range-checked against `databases`),
 * option syntax, "source and destination objects are the same". Whatever
 * depends on the data (no such key, destination exists) is the store's to
 * answer. Pure functions of the arguments and the connection's db, like
 * encode.c: a refused command changes nothing.
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
