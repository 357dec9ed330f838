/*
 * encode.h - turning a user's write command into its canonical record
 * (common/command.h), in a frontend process.
 *
 * One encoder per user write command, named by its row in the registry
 * (common/commands.def) and found by fe_encoder(id). An encoder
 * validates the arguments exactly as Redis 7.0 does (same checks, same order,
 * same error text) and fills an fe_enc_t: the canonical operation, its
 * arguments (pointers to the user's bytes, or to fixed-width integers kept in
 * the fe_enc_t itself), and whether the store must send the reply (else the
 * reply is +OK once the record is durable). Encoding happens when the command
 * runs: at once normally, at EXEC for a command queued in MULTI (so relative
 * expiry times count from EXEC, as in Redis, and an argument error becomes
 * that command's error inside EXEC's reply).
 *
 * Encoders never reply and never touch the ring: dispatch.c submits what they
 * produce, multi.c nests it in a CMD_EXEC record.
 */
#ifndef ATTIC_ENCODE_H
#define ATTIC_ENCODE_H

#include <stdint.h>

#include "command.h"

struct fe_conn;
struct fe_args;

#define FE_ENC_FIXED   8  /* room for arguments of fixed-shape forms */
#define FE_ENC_SCRATCH 64 /* bytes for fixed-width integer arguments */
#define FE_ENC_ERR     512

typedef struct fe_enc {
    cmd_id_t op;     /* canonical operation */
    int needs_reply; /* the store answers (else +OK when durable) */
    /* A blocking record (BLPOP ...): its client may wait for the store's
     * reply (block.c), at most block_ms ms (0 = forever). */
    int blocks;
    int64_t block_ms;
    int argc;
    const unsigned char *const *argv; /* argc arguments */
    const uint32_t *lens;
    /* Storage for forms whose arguments are not simply the user's. */
    const unsigned char *fixed_argv[FE_ENC_FIXED];
    uint32_t fixed_lens[FE_ENC_FIXED];
    unsigned char scratch[FE_ENC_SCRATCH];
    size_t scratch_used;
    /* When an encoder refuses the command: the whole RESP error reply
     * ("-ERR syntax error\r\n"), NUL-terminated. It points at err_buf, or
     * at a heap copy when an echoed argument makes it longer: release it
     * with fe_enc_release() once used. */
    char *err;
    char err_buf[FE_ENC_ERR];
    /* A form of fixed arguments then the user's (fe_enc_tail): the
     * argument arrays, allocated. */
    const unsigned char **tail_argv;
    uint32_t *tail_lens;
    /* An argument the encoder allocated (fe_enc_arg_owned): freed by
     * fe_enc_release. */
    unsigned char *owned;
} fe_enc_t;

/* Make e ready for an encoder (before it is called). */
void fe_enc_init(fe_enc_t *e);
/* Free what an encoding allocated (a long error text, fe_enc_tail's
 * arrays), once its record or error was used: after every encoder call. */
void fe_enc_release(fe_enc_t *e);

/* Encode a->argv (argv[0] is the name of command d) for connection c (its
 * db, for commands that name another one). Returns 0 with *e filled, or -1 with
 * e->err set. */
typedef int fe_encode_t(const struct fe_conn *c, const cmd_desc_t *d, const struct fe_args *a,
                        fe_enc_t *e);
typedef fe_encode_t *fe_encode_fn;

/* The encoder of user write command id, or NULL when it has none
 * (encoders.c). */
fe_encode_fn fe_encoder(cmd_id_t id);

/* ---- helpers for encoders (encode.c) ---- */

/* Start a fixed-shape form: e->argv/lens point at fixed_argv/fixed_lens. */
void fe_enc_begin(fe_enc_t *e, cmd_id_t op, int needs_reply);
/* Append an argument of the fixed-shape form. */
void fe_enc_arg(fe_enc_t *e, const void *p, uint32_t len);
void fe_enc_u32(fe_enc_t *e, uint32_t v);
void fe_enc_i64(fe_enc_t *e, int64_t v);
/* Append an argument in memory the encoder allocated (BITFIELD's
 * operations): e owns it from here, fe_enc_release frees it. At most one
 * per encoding. */
void fe_enc_arg_owned(fe_enc_t *e, unsigned char *p, uint32_t len);
/* After fe_enc_begin and the fixed arguments: the user's arguments from
 * a->argv[from] on, unchanged (HSET's field/value pairs). */
void fe_enc_tail(fe_enc_t *e, const struct fe_args *a, int from);
/* The user's arguments after the name, unchanged, as form op. */
void fe_enc_plain(fe_enc_t *e, cmd_id_t op, int needs_reply, const struct fe_args *a);
/* Refuse: e->err = "-" + printf text + CRLF (CR and LF in the text become
 * spaces, as Redis does for errors that echo arguments). Returns -1. */
int fe_enc_fail(fe_enc_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A blocking command's timeout, argument i, in seconds as Redis 7.0 reads
 * it: a long double (hex and exponents too), ceil'ed to milliseconds; a
 * value whose milliseconds overflow is "negative", as Redis' conversion
 * makes it. 0 = forever. Returns 0 with e->blocks and e->block_ms set, or
 * -1 with e->err (t_list.c). */
int fe_enc_block_timeout(const struct fe_args *a, int i, fe_enc_t *e);
/* A blocking form's fixed head (CMD_BLPOP, CMD_BZPOPMIN): the client,
 * its protocol, the side (tail / highest scores), the store's kind of
 * waiter (enum st_block_kind: 1 BLPOP/BRPOP, 2 BLMPOP, 4 BZPOPMIN/MAX,
 * 5 BZMPOP, 6 XREADGROUP) and the count (t_list.c). */
void fe_enc_block_head(const struct fe_conn *c, fe_enc_t *e, cmd_id_t op, int side, uint32_t kind,
                       long long count);
/* XREAD with a valid BLOCK: it is written as a CMD_XREADBLOCK record by
 * fe_enc_xreadblock instead of read (D46), since its waiter is log state
 * (t_stream.c). */
int fe_xread_blocks(const struct fe_args *a);
int fe_enc_xreadblock(const struct fe_conn *c, const cmd_desc_t *d, const struct fe_args *a,
                      fe_enc_t *e);
/* Refuse with "ERR invalid expire time in '<cmd>' command". Returns -1. */
int fe_enc_fail_expire(fe_enc_t *e, const char *cmd);

/* Whether argument `arg` of command d, in a request of `count` words, may
 * be moved into a large value's group (D31, D45, D48, D58): the value of
 * a write whose canonical form takes a large value there
 * (cmd_big_value_arg), and, inside MULTI (in_multi), any argument of a
 * read the store answers. dispatch.c streams such arguments as they
 * arrive, multi.c moves them while it queues. */
int fe_big_user_arg(const cmd_desc_t *d, int count, int arg, int in_multi);

/* Redis' standard texts. */
#define FE_ERR_SYNTAX  "ERR syntax error"
#define FE_ERR_NOT_INT "ERR value is not an integer or out of range"

/* ---- the encoders: one per WRITE row of the registry, declared from it
 * (one file per type defines them: t_string.c, t_keys.c; encoders.c
 * holds the table fe_encoder reads) ---- */
#define FE_ENC_DECL_LOCAL(handler)
#define FE_ENC_DECL_WRITE(handler) fe_encode_t handler;
#define FE_ENC_DECL_READ(handler)
#define FE_ENC_DECL_MULTI(handler)
#define CMD(ID, num, name, arity, flags, first, last, step, cats, route, handler, ...)             \
    FE_ENC_DECL_##route(handler)
#include "commands.def"

#endif
