/*
 * test_encode_keys.c - unit tests of the keyspace write encoders
 * (frontend/cmd/t_keys.c, and UNLINK's entry in encoders.c's table): the
 * canonical forms they produce, and Redis 7.0's checks, order and error
 * texts, for connections in any database (which the differential test
 * can reach only once SELECT works).
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <string.h>

#include "command.h"
#include "config.h"
#include "frontend/cmd/encode.h"
#include "frontend/core/core.h"

static fe_t enc_fe;
static config_t enc_cfg;
static fe_conn_t enc_conn;

/* Encode a user command for a connection in database db; returns the
 * error reply, or "" when it encoded (into *out). */
static const char *enc(int db, fe_enc_t *out, ...)
{
    static const char *argv[16];
    static uint32_t lens[16];
    va_list ap;
    va_start(ap, out);
    int argc = 0;
    const char *s;
    while ((s = va_arg(ap, const char *)) != NULL) {
        argv[argc] = s;
        lens[argc++] = (uint32_t)strlen(s);
    }
    va_end(ap);
    enc_cfg.databases = 16;
    enc_fe.cfg = &enc_cfg;
    enc_conn.fe = &enc_fe;
    enc_conn.db = db;
    const cmd_desc_t *d = cmd_lookup(argv[0], lens[0]);
    cr_assert(d, "%s", argv[0]);
    fe_encode_fn fn = fe_encoder(d->id);
    cr_assert(fn, "no encoder for %s", argv[0]);
    fe_args_t a = {argc, argv, lens};
    return fn(&enc_conn, d, &a, out) == 0 ? "" : out->err;
}

Test(encode_keys, copy_move_swapdb_rename_unlink_flushdb)
{
    fe_enc_t e;
    const char *same = "-ERR source and destination objects are the same\r\n";
    const char *range = "-ERR DB index is out of range\r\n";
    cr_assert_str_eq(enc(0, &e, "COPY", "k", "k", NULL), same);
    cr_assert_str_eq(enc(3, &e, "COPY", "k", "k", "DB", "3", NULL), same);
    cr_assert_str_eq(enc(3, &e, "COPY", "k", "k", "db", "0", NULL), "");
    cr_assert_eq(e.op, CMD_COPY);
    cr_assert_eq(e.argc, 4);
    cr_assert_eq(cmd_get_u32(e.argv[2]), 0);
    cr_assert_eq(cmd_get_u32(e.argv[3]), 0);
    cr_assert_str_eq(enc(3, &e, "copy", "a", "b", "replace", NULL), "");
    cr_assert_eq(cmd_get_u32(e.argv[2]), 3, "the connection's db by default");
    cr_assert_eq(cmd_get_u32(e.argv[3]), 1);
    cr_assert_str_eq(enc(0, &e, "COPY", "a", "b", "db", "16", NULL), range);
    cr_assert_str_eq(enc(0, &e, "COPY", "a", "b", "db", "-1", NULL), range);
    cr_assert_str_eq(enc(0, &e, "COPY", "a", "b", "db", NULL), "-ERR syntax error\r\n");
    cr_assert_str_eq(enc(0, &e, "COPY", "a", "b", "db", "x", NULL),
                     "-ERR value is not an integer or out of range\r\n");
    cr_assert_str_eq(
        enc(0, &e, "COPY", "a", "b", "db", "4294967296", NULL),
        "-ERR value is out of range, value must between -2147483648 and 2147483647\r\n");
    cr_assert_str_eq(enc(0, &e, "COPY", "a", "a", "db", "16", "foo", NULL), range, "left to right");
    cr_assert_str_eq(enc(0, &e, "COPY", "a", "a", "foo", "db", "16", NULL),
                     "-ERR syntax error\r\n");
    cr_assert_str_eq(enc(5, &e, "MOVE", "k", "5", NULL), same);
    cr_assert_str_eq(enc(5, &e, "MOVE", "k", "0", NULL), "");
    cr_assert_eq(e.op, CMD_MOVE);
    cr_assert_eq(cmd_get_u32(e.argv[1]), 0);
    cr_assert_str_eq(enc(0, &e, "MOVE", "k", "16", NULL), range);
    cr_assert_str_eq(
        enc(0, &e, "MOVE", "k", "99999999999", NULL),
        "-ERR value is out of range, value must between -2147483648 and 2147483647\r\n");
    cr_assert_str_eq(enc(0, &e, "SWAPDB", "x", "y", NULL), "-ERR invalid first DB index\r\n");
    cr_assert_str_eq(enc(0, &e, "SWAPDB", "16", "y", NULL), "-ERR invalid second DB index\r\n");
    cr_assert_str_eq(enc(0, &e, "SWAPDB", "99999999999", "0", NULL),
                     "-ERR invalid first DB index\r\n");
    cr_assert_str_eq(enc(0, &e, "SWAPDB", "0", "16", NULL), range);
    cr_assert_str_eq(enc(0, &e, "SWAPDB", "15", "2", NULL), "");
    cr_assert_eq(e.op, CMD_SWAPDB);
    cr_assert_eq(e.needs_reply, 0);
    cr_assert_str_eq(enc(0, &e, "RENAMENX", "a", "b", NULL), "");
    cr_assert_eq(e.op, CMD_RENAME);
    cr_assert_eq(cmd_get_u32(e.argv[2]), 1);
    cr_assert_str_eq(enc(0, &e, "RENAME", "a", "b", NULL), "");
    cr_assert_eq(cmd_get_u32(e.argv[2]), 0);
    cr_assert_str_eq(enc(0, &e, "UNLINK", "a", "b", NULL), "");
    cr_assert_eq(e.op, CMD_DEL);
    cr_assert_eq(e.argc, 2);
    cr_assert_str_eq(enc(0, &e, "FLUSHDB", "ASYNC", NULL), "");
    cr_assert_eq(e.op, CMD_FLUSHDB);
    cr_assert_eq(e.argc, 0);
    cr_assert_str_eq(enc(0, &e, "FLUSHDB", "sync", "x", NULL), "-ERR syntax error\r\n");
    cr_assert_str_eq(enc(0, &e, "FLUSHDB", "lazy", NULL), "-ERR syntax error\r\n");
}
