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
 * Values larger than one record (CMD_BIGFINAL, D31, D58) are applied here
 * too, for the same reason: its record nests the write whose value
 * arguments stand for the parts the chunk records of one group logged,
 * or a whole transaction whose commands' arguments do; its layout says
 * which bytes of the group each is (types/t_bigval.c cuts them apart).
 * A string's handler takes its parts through ctx->big; a collection's
 * element, a RESTORE payload and a read's argument are read into RAM
 * first. The group is taken before anything else, so its parts are used
 * or dropped exactly once, whatever the record turns out to be.
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
    apply_args_t a = {ctx->args, argc, rec, h.lsn, REC_DB(opdb), db};
    fn(ctx, &a, reply);
    /* Clients blocked on keys this record filled are served inside its
     * apply: one durable step, the same on replay (core/block.c, D36). */
    if (ctx->block) st_block_serve_ready(ctx, &a, st_block_serve_table);
    if (ctx->nnotes) st_notify_flush(ctx, REC_OP(opdb), &a);
    /* Members copied out of pages live until the record is done (D60). */
    if (ctx->pgmat.n || ctx->pgmat.nblk) st_hash_mat_reset(ctx);
    return 0;
}

int store_read_db(store_ctx_t *ctx, unsigned dbnum, const unsigned char *payload, size_t len,
                  int64_t now, buf_t *b)
{
    return store_read_proto(ctx, dbnum, 2, payload, len, now, b);
}

/* A read whose arguments are decoded already (argv, argc): routed, its
 * arity checked, answered into b. */
static void read_decoded(store_ctx_t *ctx, unsigned dbnum, int proto, cmd_id_t op,
                         const rec_arg_t *argv, uint16_t argc, int64_t now, buf_t *b)
{
    st_read_fn read = st_read_handler(op);
    st_db_t *db = st_db(ctx, dbnum);
    if (op == CMD_PROBE && db && argc == 1) {
        /* No user command: no statistics, no events, no access time. */
        st_read_probe(db, &argv[0], now, b);
        return;
    }
    if (!read) {
        resp_error(b, "ERR the store does not answer this command");
        return;
    }
    if (!db) {
        resp_error(b, "ERR DB index is out of range");
        return;
    }
    if (!cmd_arity_ok(cmd_by_id(op)->arity, argc + 1)) {
        st_reply_arity(b, op);
        return;
    }
    read_args_t a = {argv, argc, dbnum, db, now, proto >= 3 ? 3 : 2, op};
    /* Key lookups while reading count as keyspace hits and misses (INFO),
     * as Redis' read lookups do (a transaction's reads too, when it runs
     * live: replay runs no reads). */
    int outer = ctx->reading;
    ctx->reading = 1;
    read(ctx, &a, b);
    ctx->reading = outer;
    /* Members copied out of pages live until the request is done (D60);
     * inside a transaction, until its record is. */
    if (!outer && (ctx->pgmat.n || ctx->pgmat.nblk) && !ctx->in_exec) st_hash_mat_reset(ctx);
}

int store_read_proto(store_ctx_t *ctx, unsigned dbnum, int proto, const unsigned char *payload,
                     size_t len, int64_t now, buf_t *b)
{
    uint16_t opdb, argc;
    if (decode(ctx, payload, len, &opdb, &argc)) {
        resp_error(b, "ERR malformed request to the store");
        return 0;
    }
    read_decoded(ctx, dbnum, proto, REC_OP(opdb), ctx->args, argc, now, b);
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

/* Check the whole record before anything is applied, and the values a
 * final gives its commands (v[0, nv), D58): each an empty argument of a
 * nested read, or of a nested write that takes large values there.
 * Returns 0 or -1. */
static int exec_validate(store_ctx_t *ctx, st_exec_bufs_t *x, const exec_hdr_t *h, uint16_t argc,
                         const st_bigval_t *v, uint32_t nv)
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
    for (uint32_t k = 0; k < nv; k++) {
        uint16_t opdb, n;
        if (v[k].at <= h->nwatch || v[k].at >= argc) return -1;
        decode_nested(x, &x->outer[v[k].at], &opdb, &n); /* decodes: checked above */
        int kind = nested_kind(ctx, x, opdb, n);
        if (v[k].arg >= n || x->nested[v[k].arg].len) return -1;
        if (kind == NESTED_WRITE ? !cmd_big_value_arg(REC_OP(opdb), v[k].arg, n)
                                 : kind != NESTED_READ)
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

/* One nested read of a transaction; v[0, nv) its large arguments (D58). */
static void exec_read(store_ctx_t *ctx, st_exec_bufs_t *x, const rec_arg_t *pl, uint16_t opdb,
                      uint16_t n, int proto, st_bigval_t *v, uint32_t nv, buf_t *r)
{
    /* Reads never change the state: on replay there is nothing to do. */
    if (!r) {
        st_big_free(v, nv);
        return;
    }
    if (!nv) {
        store_read_proto(ctx, REC_DB(opdb), proto, pl->ptr, pl->len, ctx->now, r);
        return;
    }
    unsigned char **bufs = st_big_to_ram(ctx, x->nested, v, nv);
    read_decoded(ctx, REC_DB(opdb), proto, REC_OP(opdb), x->nested, n, ctx->now, r);
    st_big_ram_free(bufs, nv);
}

/* A transaction record's apply, with the large values of its commands
 * when a final nests it (v[0, nv) sorted by place, their lists used or
 * freed here; none for a plain CMD_EXEC). */
static void exec_apply(store_ctx_t *ctx, const apply_args_t *a, buf_t *r, st_bigval_t *v,
                       uint32_t nv)
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
    if (exec_validate(ctx, x, &h, argc, v, nv)) {
        log_warn("store: transaction record at LSN %" PRIu64 " is malformed; nothing applied",
                 a->lsn);
        if (r) resp_error(r, "ERR the store cannot apply this transaction record");
        st_big_free(v, nv);
        return;
    }
    if (exec_watch_dirty(ctx, x, &h)) {
        if (r) resp_null_array(r);
        st_big_free(v, nv); /* the parts go with the transaction */
        return;
    }
    size_t mark = r ? r->len : 0;
    if (r) resp_array(r, (long long)(argc - 1 - h.nwatch));
    ctx->in_exec = 1; /* a blocking command acts as its non-blocking form */
    uint32_t k = 0;
    for (uint32_t i = 1 + h.nwatch; i < argc; i++) {
        const rec_arg_t *pl = &x->outer[i];
        uint16_t opdb, n;
        decode_nested(x, pl, &opdb, &n); /* validated above */
        unsigned dbnum = REC_DB(opdb);
        uint32_t k0 = k;
        while (k < nv && v[k].at == i)
            k++;
        switch (nested_kind(ctx, x, opdb, n)) {
        case NESTED_LITERAL:
            if (r) buf_append(r, x->nested[0].ptr, x->nested[0].len);
            break;
        case NESTED_WRITE: {
            apply_args_t na = {x->nested, n, a->rec, a->lsn, dbnum, st_db(ctx, dbnum)};
            st_apply_fn fn = st_write_handler(REC_OP(opdb), n, x->nested);
            if (k > k0)
                st_big_apply(ctx, fn, REC_OP(opdb), &na, x->nested, v + k0, k - k0, r);
            else
                fn(ctx, &na, r);
            if (ctx->nnotes) st_notify_flush(ctx, REC_OP(opdb), &na);
            break;
        }
        case NESTED_READ:
            exec_read(ctx, x, pl, opdb, n, h.flags & EXEC_RESP3 ? 3 : 2, v + k0, k - k0, r);
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

void st_apply_exec(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    exec_apply(ctx, a, r, NULL, 0);
}

/* ---- CMD_BIGFINAL (D31, D58) ---- */

/* The final's values, split out of their group and sorted by place, when
 * the record is well formed: its nested write (a transaction when
 * *is_exec) takes each value at an empty argument that may hold one.
 * Returns the nested write's handler, or NULL (*v freed) when malformed. */
static st_apply_fn final_check(store_ctx_t *ctx, const apply_args_t *a, st_pieces_t *l,
                               st_bigval_t **v, uint32_t *nv, uint16_t *opdb, uint16_t *n)
{
    st_exec_bufs_t *x = &ctx->exec;
    if (st_big_layout(&a->argv[1], st_pieces_len(l), v, nv)) {
        st_pieces_free(l);
        return NULL;
    }
    st_groups_split(l, *v, *nv);
    st_apply_fn fn = NULL;
    if (st_big_by_place(*v, *nv) == 0 && decode_nested(x, &a->argv[2], opdb, n) == 0 &&
        st_db(ctx, REC_DB(*opdb)))
        fn = st_write_handler(REC_OP(*opdb), *n, x->nested);
    /* A transaction's values are checked with it (exec_validate). */
    for (uint32_t k = 0; fn && REC_OP(*opdb) != CMD_EXEC && k < *nv; k++)
        if ((*v)[k].at || !cmd_big_value_arg(REC_OP(*opdb), (*v)[k].arg, *n) ||
            x->nested[(*v)[k].arg].len)
            fn = NULL;
    if (!fn) {
        st_big_free(*v, *nv);
        free(*v);
        *v = NULL;
    }
    return fn;
}

void st_apply_bigfinal(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    st_exec_bufs_t *x = &ctx->exec;
    uint64_t group = (uint64_t)cmd_get_i64(a->argv[0].ptr);
    /* Taken first, whatever follows: the parts are either the values now
     * or dropped now, so their live bytes go down exactly once. */
    st_pieces_t *l = st_groups_take(&ctx->groups, group);
    st_bigval_t *v = NULL;
    uint32_t nv = 0;
    uint16_t opdb = 0, n = 0;
    st_apply_fn fn = l ? final_check(ctx, a, l, &v, &nv, &opdb, &n) : NULL;
    if (!fn) {
        log_warn("store: final record of value group %" PRIu64 " at LSN %" PRIu64
                 " %s; nothing applied",
                 group, a->lsn, l ? "is malformed" : "names no pending group");
        if (r)
            resp_error(r, l ? "ERR the store cannot apply this record"
                            : "ERR the value's parts were dropped before it was complete "
                              "(nothing was written)");
        return;
    }
    apply_args_t na = {x->nested, n, a->rec, a->lsn, REC_DB(opdb), st_db(ctx, REC_DB(opdb))};
    if (REC_OP(opdb) == CMD_EXEC)
        exec_apply(ctx, &na, r, v, nv);
    else
        st_big_apply(ctx, fn, REC_OP(opdb), &na, x->nested, v, nv, r);
    free(v);
}
