/*
 * route.c - the top of the store's state machine (store-internal.h):
 * store_apply and store_read decode a record or a read request and route it
 * by command id to its handler in types/, through tables built from the
 * registry (common/commands.def: OP rows for the canonical writes, READ
 * rows for the reads). CMD_EXEC's apply is here too, because it routes the
 * commands nested in its record through the same tables. Replies are
 * byte-identical to Redis 7.0's (RESP2).
 *
 * Run by the store process only (and by tests and tools, which drive it
 * directly). Single-threaded. A crash loses nothing: the state is a function
 * of the durable log and is rebuilt by replaying it.
 *
 * Invariants:
 *   - The state after applying records r1..rn depends only on those records:
 *     "now" for expiry while applying is the max of the records' time_ms
 *     (the apply clock), never the wall clock (ARCHITECTURE.md, contract 4).
 *     Replay (reply == NULL) and live apply run the same code; only the
 *     reply is skipped.
 *   - Reads judge expiry by the wall clock but never remove anything: a
 *     record encoded just before a key's expiry must still find the key when
 *     applied, live and on replay alike.
 *
 * Transactions (CMD_EXEC).
 * A transaction is one record (command.h, CMD_EXEC): a header, the watched
 * keys, then one bare payload per queued command: a canonical write, a read
 * with the user's arguments, or a CMD_LITERAL reply the frontend computed.
 * One record is durable whole or not at all, so a transaction's writes
 * survive a crash together or not at all, and applying it in one go (no
 * other record, no read request in between) makes it atomic. The nested
 * payloads are decoded in place: their argument pointers stay inside the
 * record, so st_arg_lsn() gives the log position of a value that is kept as
 * an extent, exactly as for a plain record.
 *
 * A malformed record (a nested payload that does not decode, an unknown or
 * misshapen operation, a database out of range, a nested CMD_EXEC) is
 * refused as a whole before anything is applied: the record is durable, so
 * replay meets the same refusal, and applying "what is valid" would break the
 * transaction's all-or-nothing promise. Our frontends never write one.
 *
 * Whether a watched key aborts the transaction is core/watch.c's to say
 * (its banner has the rules).
 *
 * A value larger than one record (CMD_BIGFINAL, D31) is applied here too,
 * for the same reason: its record nests the write (SET or APPEND) whose
 * value argument stands for the parts the chunk records logged
 * (types/t_bigval.c); the handler takes them through ctx->big.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "log.h"
#include "record.h"
#include "resp.h"
#include "shm.h"
#include "store/core/alloc.h"
#include "store/core/entry.h"
#include "store/core/block.h"
#include "store/core/hash.h"
#include "store/core/notify.h"
#include "store/core/value.h"
#include "store/core/watch.h"
#include "store/route.h"

/* ---- routing ---------------------------------------------------------- */

/* The canonical write forms, by operation id: the registry's OP rows
 * (common/commands.def), with their argument count bounds and the exact
 * sizes of fixed-width integer arguments. */
typedef struct write_form {
    st_apply_fn apply;
    uint16_t min_args, max_args;
    uint8_t even;       /* key/value pairs */
    uint8_t int_len[4]; /* required length of argument i, 0 = any */
} write_form_t;

static const write_form_t write_forms[CMD__COUNT] = {
#define OP(ID, handler, min_args, max_args, pairs, len0, len1, len2, len3)                         \
    [CMD_##ID] = {handler, min_args, max_args, pairs, {len0, len1, len2, len3}},
#include "commands.def"
};

st_apply_fn st_write_handler(cmd_id_t op, uint16_t argc, const rec_arg_t *argv)
{
    if ((unsigned)op >= (unsigned)CMD__COUNT) return NULL;
    const write_form_t *f = &write_forms[op];
    if (!f->apply) return NULL;
    if (argc < f->min_args || argc > f->max_args || (f->even && argc % 2)) return NULL;
    for (int j = 0; j < 4 && j < argc; j++)
        if (f->int_len[j] && argv[j].len != f->int_len[j]) return NULL;
    return f->apply;
}

/* Reads, by command id: the registry's READ rows. The handler checks the
 * user's arguments itself; the arity check here only guards against a
 * request no frontend sends. */
#define READ_ROW_LOCAL(ID, handler)
#define READ_ROW_WRITE(ID, handler)
#define READ_ROW_READ(ID, handler) [CMD_##ID] = handler,
#define READ_ROW_MULTI(ID, handler)
static st_read_fn const read_handlers[CMD__COUNT] = {
#define CMD(ID, num, name, arity, flags, first, last, step, cats, route, handler, ...)             \
    READ_ROW_##route(ID, handler)
#include "commands.def"
};

st_read_fn st_read_handler(cmd_id_t op)
{
    return (unsigned)op < (unsigned)CMD__COUNT ? read_handlers[op] : NULL;
}

void st_reply_arity(buf_t *b, cmd_id_t id)
{
    const cmd_desc_t *d = cmd_by_id(id);
    char msg[96];
    snprintf(msg, sizeof(msg), "ERR wrong number of arguments for '%s' command", d ? d->name : "?");
    resp_error(b, msg);
}

/* ---- decoding --------------------------------------------------------- */

static int decode(store_ctx_t *ctx, const unsigned char *p, size_t len, uint16_t *opdb,
                  uint16_t *argc)
{
    if (rec_decode_payload(p, len, opdb, argc, ctx->args, (uint16_t)ctx->args_cap)) return -1;
    if (*argc > ctx->args_cap) {
        ctx->args = st_xrealloc(ctx->args, (size_t)*argc * sizeof(rec_arg_t));
        ctx->args_cap = *argc;
        if (rec_decode_payload(p, len, opdb, argc, ctx->args, (uint16_t)ctx->args_cap)) return -1;
    }
    return 0;
}

int store_apply(store_ctx_t *ctx, const void *rec, buf_t *reply)
{
    rec_hdr_t h;
    memcpy(&h, rec, sizeof(h));
    if (h.len < REC_HDR_SIZE || (h.type != REC_PAD && h.type != REC_CMD)) return -1;
    uint64_t end = h.lsn + rec_space(h.len - REC_HDR_SIZE);
    if (h.type == REC_PAD) {
        ctx->applied = end;
        return 0;
    }
    /* The apply clock never goes back, so a record encoded by a frontend
     * whose clock lags still sees what earlier records saw as expired. */
    if (h.time_ms > ctx->now) {
        ctx->now = h.time_ms;
        /* XREADGROUP waiters on keys the new clock expired (D46). */
        if (ctx->block) st_block_clock_moved(ctx);
    }
    ctx->applied = end;
    uint16_t opdb, argc;
    st_apply_fn fn = NULL;
    st_db_t *db = NULL;
    if (decode(ctx, (const unsigned char *)rec + REC_HDR_SIZE, h.len - REC_HDR_SIZE, &opdb,
               &argc) == 0) {
        fn = st_write_handler(REC_OP(opdb), argc, ctx->args);
        db = st_db(ctx, REC_DB(opdb));
    }
    if (!fn || !db) {
        /* Durable already, so refusing it would stop the server for good:
         * apply it as a no-op, the same on every replay. */
        log_warn("store: record at LSN %" PRIu64 " is not a canonical write; ignored", h.lsn);
        if (reply) resp_error(reply, "ERR the store cannot apply this record");
        return 1;
    }
    apply_args_t a = {ctx->args, argc, rec, h.lsn, REC_DB(opdb), db, NULL};
    fn(ctx, &a, reply);
    /* Clients blocked on keys this record filled are served inside its
     * apply: one durable step, the same on replay (core/block.c, D36). */
    if (ctx->block) st_block_serve_ready(ctx, &a, st_block_serve_table);
    if (ctx->nnotes) st_notify_flush(ctx, REC_OP(opdb), &a);
    /* Members copied out of pages live until the record is done (D60). */
    if (ctx->pgmat.n) st_hash_mat_reset(ctx);
    return 0;
}

int store_read_db(store_ctx_t *ctx, unsigned dbnum, const unsigned char *payload, size_t len,
                  int64_t now, buf_t *b)
{
    return store_read_proto(ctx, dbnum, 2, payload, len, now, b);
}

int store_read_proto(store_ctx_t *ctx, unsigned dbnum, int proto, const unsigned char *payload,
                     size_t len, int64_t now, buf_t *b)
{
    uint16_t opdb, argc;
    if (decode(ctx, payload, len, &opdb, &argc)) {
        resp_error(b, "ERR malformed request to the store");
        return 0;
    }
    st_read_fn read = st_read_handler(REC_OP(opdb));
    st_db_t *db = st_db(ctx, dbnum);
    if (!read) {
        resp_error(b, "ERR the store does not answer this command");
        return 0;
    }
    if (!db) {
        resp_error(b, "ERR DB index is out of range");
        return 0;
    }
    if (!cmd_arity_ok(cmd_by_id(REC_OP(opdb))->arity, argc + 1)) {
        st_reply_arity(b, REC_OP(opdb));
        return 0;
    }
    read_args_t a = {ctx->args, argc, dbnum, db, now, proto >= 3 ? 3 : 2, REC_OP(opdb)};
    /* Key lookups while reading count as keyspace hits and misses (INFO),
     * as Redis' read lookups do (a transaction's reads too, when it runs
     * live: replay runs no reads). */
    int outer = ctx->reading;
    ctx->reading = 1;
    read(ctx, &a, b);
    ctx->reading = outer;
    /* Members copied out of pages live until the request is done (D60);
     * inside a transaction, until its record is. */
    if (!outer && ctx->pgmat.n && !ctx->in_exec) st_hash_mat_reset(ctx);
    return 0;
}

int store_read_at(store_ctx_t *ctx, const unsigned char *payload, size_t len, int64_t now, buf_t *b)
{
    return store_read_db(ctx, 0, payload, len, now, b);
}

int store_read(store_ctx_t *ctx, const unsigned char *payload, size_t len, buf_t *reply)
{
    return store_read_db(ctx, 0, payload, len, shm_now_ms(), reply);
}

/* ---- CMD_EXEC ---- */

#define EXEC_HDR_LEN   24
#define EXEC_PER_KEY   1u /* header flag: each key carries its own watch point */
#define EXEC_RESP3     2u /* header flag: the client speaks RESP3 (replies only) */
#define EXEC_KEY_POINT 17 /* u8 db, u64 watch_lsn, i64 watch_time_ms */

static void grow_args(rec_arg_t **args, uint32_t *cap, uint32_t n)
{
    if (n <= *cap) return;
    *args = st_xrealloc(*args, (size_t)n * sizeof(**args));
    *cap = n;
}

/* Decode one nested payload into x->nested. Returns 0, or -1 when it does
 * not decode. */
static int decode_nested(st_exec_bufs_t *x, const rec_arg_t *p, uint16_t *opdb, uint16_t *argc)
{
    if (rec_decode_payload(p->ptr, p->len, opdb, argc, x->nested, (uint16_t)x->nested_cap))
        return -1;
    if (*argc > x->nested_cap) {
        grow_args(&x->nested, &x->nested_cap, *argc);
        if (rec_decode_payload(p->ptr, p->len, opdb, argc, x->nested, (uint16_t)x->nested_cap))
            return -1;
    }
    return 0;
}

enum { NESTED_BAD = 0, NESTED_LITERAL, NESTED_WRITE, NESTED_READ };

static int nested_kind(store_ctx_t *ctx, st_exec_bufs_t *x, uint16_t opdb, uint16_t argc)
{
    cmd_id_t op = REC_OP(opdb);
    if (!st_db(ctx, REC_DB(opdb))) return NESTED_BAD;
    if (op == CMD_LITERAL) return argc == 1 ? NESTED_LITERAL : NESTED_BAD;
    if (op == CMD_EXEC || op == CMD_BIGFINAL) return NESTED_BAD;
    if (st_write_handler(op, argc, x->nested)) return NESTED_WRITE;
    if (st_read_handler(op)) return NESTED_READ;
    return NESTED_BAD;
}

typedef struct exec_hdr {
    uint64_t watch_lsn;
    int64_t watch_time;
    uint32_t nwatch;
    uint32_t flags;
} exec_hdr_t;

/* Check the whole record before anything is applied. Returns 0 or -1. */
static int exec_validate(store_ctx_t *ctx, st_exec_bufs_t *x, const exec_hdr_t *h, uint16_t argc)
{
    if (h->nwatch > (uint32_t)argc - 1 || (h->flags & ~(EXEC_PER_KEY | EXEC_RESP3))) return -1;
    uint32_t min_key = h->flags & EXEC_PER_KEY ? EXEC_KEY_POINT : 1;
    for (uint32_t i = 1; i <= h->nwatch; i++)
        if (x->outer[i].len < min_key || !st_db(ctx, x->outer[i].ptr[0])) return -1;
    for (uint32_t i = 1 + h->nwatch; i < argc; i++) {
        uint16_t opdb, n;
        if (decode_nested(x, &x->outer[i], &opdb, &n) || nested_kind(ctx, x, opdb, n) == NESTED_BAD)
            return -1;
    }
    return 0;
}

static int exec_watch_dirty(store_ctx_t *ctx, st_exec_bufs_t *x, const exec_hdr_t *h)
{
    for (uint32_t i = 1; i <= h->nwatch; i++) {
        const rec_arg_t *k = &x->outer[i];
        uint64_t lsn = h->watch_lsn;
        int64_t time = h->watch_time;
        size_t skip = 1;
        if (h->flags & EXEC_PER_KEY) {
            lsn = (uint64_t)cmd_get_i64(k->ptr + 1);
            time = cmd_get_i64(k->ptr + 9);
            skip = EXEC_KEY_POINT;
        }
        if (st_watch_dirty(ctx, k->ptr[0], k->ptr + skip, k->len - skip, lsn, time)) return 1;
    }
    return 0;
}

void st_apply_exec(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    st_exec_bufs_t *x = &ctx->exec;
    st_watch_ensure(ctx); /* first thing, on every replay alike (watch.h) */
    /* ctx->args is reused by every decode (a read inside the transaction
     * included): work on a copy of the record's arguments. */
    grow_args(&x->outer, &x->outer_cap, a->argc);
    memcpy(x->outer, a->argv, (size_t)a->argc * sizeof(*a->argv));
    uint16_t argc = a->argc;
    const unsigned char *p = x->outer[0].ptr;
    exec_hdr_t h = {(uint64_t)cmd_get_i64(p), cmd_get_i64(p + 8), cmd_get_u32(p + 16),
                    cmd_get_u32(p + 20)};
    if (exec_validate(ctx, x, &h, argc)) {
        log_warn("store: transaction record at LSN %" PRIu64 " is malformed; nothing applied",
                 a->lsn);
        if (r) resp_error(r, "ERR the store cannot apply this transaction record");
        return;
    }
    if (exec_watch_dirty(ctx, x, &h)) {
        if (r) resp_null_array(r);
        return;
    }
    size_t mark = r ? r->len : 0;
    if (r) resp_array(r, (long long)(argc - 1 - h.nwatch));
    ctx->in_exec = 1; /* a blocking command acts as its non-blocking form */
    for (uint32_t i = 1 + h.nwatch; i < argc; i++) {
        const rec_arg_t *pl = &x->outer[i];
        uint16_t opdb, n;
        decode_nested(x, pl, &opdb, &n); /* validated above */
        unsigned dbnum = REC_DB(opdb);
        switch (nested_kind(ctx, x, opdb, n)) {
        case NESTED_LITERAL:
            if (r) buf_append(r, x->nested[0].ptr, x->nested[0].len);
            break;
        case NESTED_WRITE: {
            apply_args_t na = {x->nested, n, a->rec, a->lsn, dbnum, st_db(ctx, dbnum), NULL};
            st_write_handler(REC_OP(opdb), n, x->nested)(ctx, &na, r);
            if (ctx->nnotes) st_notify_flush(ctx, REC_OP(opdb), &na);
            break;
        }
        case NESTED_READ:
            /* Reads never change the state: on replay there is nothing to do. */
            if (r)
                store_read_proto(ctx, dbnum, h.flags & EXEC_RESP3 ? 3 : 2, pl->ptr, pl->len,
                                 ctx->now, r);
            break;
        }
    }
    ctx->in_exec = 0;
    if (r && ctx->max_reply && r->len - mark > ctx->max_reply) {
        r->len = mark;
        resp_error(r, "ERR the transaction was applied, but its reply is larger than the store "
                      "channel allows (channel-size)");
    }
}

/* ---- CMD_BIGFINAL (D31) ---- */

/* The writes a large value may be the argument of, and which argument
 * (frontend/cmd/dispatch.c's big_value_arg chooses the same). */
static int big_form_ok(cmd_id_t op, uint32_t which)
{
    if (op == CMD_SET || op == CMD_APPEND) return which == 1;
    if (op == CMD_SETRANGE) return which == 2;
    if (op == CMD_HSET) return which >= 4 && which % 2 == 0;
    if (op == CMD_LPUSH || op == CMD_SADD) return which >= 2;
    if (op == CMD_SREM) return which >= 1;
    if (op == CMD_LSET) return which == 2;
    if (op == CMD_LINSERT) return which == 3;
    if (op == CMD_RESTORE) return which == 1;
    return (op == CMD_MSET || op == CMD_MSETNX) && which % 2 == 1;
}

/* The writes whose large value becomes an element of a collection (a hash
 * field's value, a list element, a set member: D48) or is parsed (a RESTORE payload): those
 * keep their elements' bytes in RAM or as one log extent, never as a
 * piece list (D45), so the parts are read into RAM and handed over as an
 * ordinary argument. */
static int big_form_in_ram(cmd_id_t op)
{
    return op == CMD_HSET || op == CMD_LPUSH || op == CMD_LSET || op == CMD_LINSERT ||
           op == CMD_RESTORE || op == CMD_SADD || op == CMD_SREM;
}

void st_apply_bigfinal(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    st_exec_bufs_t *x = &ctx->exec;
    uint64_t group = (uint64_t)cmd_get_i64(a->argv[0].ptr);
    uint32_t which = cmd_get_u32(a->argv[1].ptr);
    /* Taken first, whatever follows: the parts are either the value now or
     * dropped now, so their live bytes go down exactly once. */
    st_pieces_t *l = st_groups_take(&ctx->groups, group);
    uint16_t opdb, n;
    st_apply_fn fn = NULL;
    if (decode_nested(x, &a->argv[2], &opdb, &n) == 0 && st_db(ctx, REC_DB(opdb)) &&
        big_form_ok(REC_OP(opdb), which) && which < n && x->nested[which].len == 0)
        fn = st_write_handler(REC_OP(opdb), n, x->nested);
    if (!fn || !l) {
        log_warn("store: final record of value group %" PRIu64 " at LSN %" PRIu64
                 " %s; nothing applied",
                 group, a->lsn, l ? "is malformed" : "names no pending group");
        if (l) st_pieces_free(l);
        if (r)
            resp_error(r, l ? "ERR the store cannot apply this record"
                            : "ERR the value's parts were dropped before it was complete "
                              "(nothing was written)");
        return;
    }
    apply_args_t na = {x->nested, n, a->rec, a->lsn, REC_DB(opdb), st_db(ctx, REC_DB(opdb)), NULL};
    if (big_form_in_ram(REC_OP(opdb))) {
        /* Read back while applying, as APPEND's splice does: a failure
         * stops the store (st_pieces_read), so replay meets the same. */
        uint64_t len = 0;
        unsigned char *value = st_pieces_read(ctx, l, &len);
        st_pieces_free(l);
        x->nested[which] = (rec_arg_t){value, (uint32_t)len};
        na.ram_arg = value;
        fn(ctx, &na, r);
        free(value);
        return;
    }
    ctx->big = l;
    ctx->big_arg = (int)which;
    fn(ctx, &na, r);
    /* Not taken: the write did not happen (NX/XX, WRONGTYPE, too long). */
    if (ctx->big) st_pieces_free(ctx->big);
    ctx->big = NULL;
}
