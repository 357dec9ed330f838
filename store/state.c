/*
 * state.c - the store's state machine (store-internal.h): applies canonical
 * write records to the key index and answers read requests, with replies
 * byte-identical to Redis 7.0's (RESP2). This file holds the context, the
 * entries and values, and the routing of records and requests to their
 * handlers (strings.c, keyspace.c, exec.c; see state-internal.h).
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
 *   - A value of at most STORE_INLINE_MAX bytes is entirely inline; a longer
 *     one is an optional inline prefix followed by one extent in the log or
 *     a piece list (store/value.c).
 *
 * Value design (why values are not in RAM): the log already holds every
 * value byte, durably, at a known position. The index keeps {lsn, len} of
 * the bytes inside the record that carried them (SET's value argument,
 * each APPEND's argument) and GET preads them from the segment file, which
 * the page cache serves when hot. RAM then scales with the number of keys,
 * not with the data, which is the point of AtticDB. Values that fit in 24
 * bytes (every INCR result, flags, short strings) stay inline: an extent
 * costs 12 bytes anyway, and INCR must parse its operand without I/O.
 *
 * Entry layout (one allocation, index.h header of 26 bytes):
 *     header | key | inline prefix (ilen bytes) | tail
 * where the tail is, by vkind:
 *     VK_INLINE  nothing
 *     VK_EXTENT  one extent: u64 lsn, u32 len (an argument of one record,
 *                so under 4 GiB)
 *     VK_LIST    a pointer to an st_pieces_t: log extents, zero runs and
 *                bytes held in RAM (what APPEND, SETRANGE, SETBIT and
 *                INCRBYFLOAT make; store/value.c explains the design and
 *                its RAM bound)
 * (vkind's low bits; its upper bits hold the string encoding that OBJECT
 * ENCODING reports: state-internal.h.)
 * RAM per key: 26 + klen + ilen + {0, 12, 8} bytes (plus, for VK_LIST, the
 * piece list and any bytes it holds in RAM: bounded as value.c explains),
 * rounded up by the allocator to its size class, plus one 8-byte bucket
 * pointer per 1 to 2 keys (load factor 0.5-1). E.g. a 16-byte key with a 100-byte value:
 * 26 + 16 + 12 = 54 bytes (mimalloc's 56-byte class) + 8-16 bytes of
 * buckets. Measured with 16-byte keys, half 8-byte inline and half 100-byte
 * values: store_index_bytes 60 B/key at 1M keys, 72 at 5M (table just
 * doubled); process RSS 415 MB at 5M keys (83 B/key, all included). Applying
 * SETs runs at 1.4-2.6 M/s, worst single apply 0.4 ms at 5M keys.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "command.h"
#include "store/core/index.h"
#include "io.h"
#include "log.h"
#include "record.h"
#include "resp.h"
#include "seg.h"
#include "shm.h"
#include "state-internal.h"
#include "strutil.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

void *st_xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        log_warn("store: out of memory allocating %zu bytes", n);
        abort(); /* as Redis does: a half-applied record is worse */
    }
    return p;
}

void *st_xrealloc(void *old, size_t n)
{
    void *p = realloc(old, n);
    if (!p) {
        log_warn("store: out of memory allocating %zu bytes", n);
        abort();
    }
    return p;
}

/* ---- entries ---------------------------------------------------------- */

static size_t tail_bytes(uint8_t vkind)
{
    unsigned kind = vkind & VK_KIND_MASK; /* the encoding bits don't count */
    return kind == VK_EXTENT ? EXT1_BYTES : kind == VK_LIST ? sizeof(st_pieces_t *) : 0;
}

size_t st_entry_size(uint32_t klen, uint8_t ilen, uint8_t vkind)
{
    return IDX_ENTRY_HDR + klen + ilen + tail_bytes(vkind);
}

unsigned char *st_ent_inline(idx_entry_t *e)
{
    return e->data + e->klen;
}

unsigned char *st_ent_tail(idx_entry_t *e)
{
    return e->data + e->klen + e->ilen;
}

void st_ent_get_ext1(idx_entry_t *e, uint64_t *lsn, uint32_t *len)
{
    memcpy(lsn, st_ent_tail(e), 8);
    memcpy(len, st_ent_tail(e) + 8, 4);
}

void st_ent_set_ext1(idx_entry_t *e, uint64_t lsn, uint32_t len)
{
    memcpy(st_ent_tail(e), &lsn, 8);
    memcpy(st_ent_tail(e) + 8, &len, 4);
}

st_pieces_t *st_ent_pieces(idx_entry_t *e)
{
    st_pieces_t *l;
    memcpy(&l, st_ent_tail(e), sizeof(l));
    return l;
}

void st_ent_set_pieces(idx_entry_t *e, st_pieces_t *l)
{
    memcpy(st_ent_tail(e), &l, sizeof(l));
}

uint64_t st_ent_vlen(idx_entry_t *e)
{
    uint64_t n = e->ilen;
    if (st_ent_kind(e) == VK_EXTENT) {
        uint64_t lsn;
        uint32_t len;
        st_ent_get_ext1(e, &lsn, &len);
        n += len;
    } else if (st_ent_kind(e) == VK_LIST) {
        n += st_pieces_len(st_ent_pieces(e));
    }
    return n;
}

static uint64_t ent_bytes(idx_entry_t *e)
{
    uint64_t n = st_entry_size(e->klen, e->ilen, e->vkind);
    if (st_ent_kind(e) == VK_LIST) n += st_pieces_bytes(st_ent_pieces(e));
    return n;
}

/* Take e's bytes and TTL out of db's counters (st_ent_store puts them in). */
static void ent_uncount(st_db_t *db, idx_entry_t *e)
{
    db->ctx->entry_bytes -= ent_bytes(e);
    if (e->expire_at_ms) {
        db->ctx->expires--;
        db->expires--;
    }
}

/* The index's free callback: every removal passes here, so the counters
 * stay right whichever path removed the entry. */
static void ent_free(void *arg, idx_entry_t *e)
{
    ent_uncount(arg, e);
    if (st_ent_kind(e) == VK_LIST) st_pieces_free(st_ent_pieces(e));
    free(e);
}

idx_entry_t *st_ent_take(st_db_t *db, idx_entry_t **slot)
{
    idx_entry_t *e = idx_unlink(&db->ix, slot);
    ent_uncount(db, e);
    return e;
}

/* A new entry holding a SET-style value: inline when short, else one extent
 * pointing at the value's bytes in the log. */
idx_entry_t *st_ent_new(const rec_arg_t *key, const rec_arg_t *val, uint64_t val_lsn,
                        int64_t expire_at)
{
    int small = val->len <= STORE_INLINE_MAX;
    uint8_t ilen = small ? (uint8_t)val->len : 0;
    uint8_t vkind = small ? VK_INLINE : VK_EXTENT;
    idx_entry_t *e = st_xmalloc(st_entry_size(key->len, ilen, vkind));
    e->klen = key->len;
    e->expire_at_ms = expire_at;
    e->ilen = ilen;
    e->vkind = vkind;
    memcpy(e->data, key->ptr, key->len);
    if (small)
        memcpy(st_ent_inline(e), val->ptr, val->len);
    else
        st_ent_set_ext1(e, val_lsn, val->len);
    return e;
}

/* Put e into the index, in place of *slot's entry when slot is not NULL. */
static void note_expiry(st_db_t *db, int64_t at)
{
    if (!at) return;
    if (at < db->next_expiry) db->next_expiry = at;
    if (at < db->set_min) db->set_min = at;
}

void st_ent_store(st_db_t *db, idx_entry_t **slot, idx_entry_t *e)
{
    note_expiry(db, e->expire_at_ms);
    db->ctx->entry_bytes += ent_bytes(e);
    if (e->expire_at_ms) {
        db->ctx->expires++;
        db->expires++;
    }
    if (slot) {
        idx_entry_t *old = *slot;
        idx_relink(slot, old, e);
        ent_free(db, old);
    } else {
        idx_insert(&db->ix, e);
    }
}

/* Resize *slot's entry for a new value shape; the caller fills it in. The
 * bytes up to the old tail are kept (realloc), and so is the encoding. */
idx_entry_t *st_ent_resize(st_db_t *db, idx_entry_t **slot, uint8_t ilen, uint8_t vkind)
{
    idx_entry_t *e = *slot;
    store_ctx_t *ctx = db->ctx;
    ctx->entry_bytes -= st_entry_size(e->klen, e->ilen, e->vkind);
    e = st_xrealloc(e, st_entry_size(e->klen, ilen, vkind));
    *slot = e; /* next and hash moved with the bytes */
    e->ilen = ilen;
    e->vkind = (uint8_t)((e->vkind & ~VK_KIND_MASK) | (vkind & VK_KIND_MASK));
    ctx->entry_bytes += st_entry_size(e->klen, ilen, vkind);
    return e;
}

void st_ent_set_expire(st_db_t *db, idx_entry_t *e, int64_t at)
{
    note_expiry(db, at);
    if (!e->expire_at_ms && at) {
        db->ctx->expires++;
        db->expires++;
    }
    if (e->expire_at_ms && !at) {
        db->ctx->expires--;
        db->expires--;
    }
    e->expire_at_ms = at;
}

/*
 * The slot of a key that is live at `now`, or NULL. With reap set, a key
 * found expired is removed (only on the apply path, where now is the apply
 * clock: Redis' lazy expiry, done where replay does it too).
 */
idx_entry_t **st_find_live(st_db_t *db, const rec_arg_t *key, int64_t now, int reap)
{
    idx_entry_t **slot = idx_find(&db->ix, key->ptr, key->len);
    if (!slot) return NULL;
    int64_t at = (*slot)->expire_at_ms;
    if (at && at <= now) {
        if (reap) idx_remove(&db->ix, slot);
        return NULL;
    }
    return slot;
}

/* ---- reading values back from the log -------------------------------- */

static int seg_fd(store_ctx_t *ctx, uint64_t start)
{
    unsigned i = (unsigned)((start / ctx->segment_size) % STORE_FD_CACHE);
    if (ctx->fds[i].fd >= 0 && ctx->fds[i].start == start) return ctx->fds[i].fd;
    if (ctx->fds[i].fd >= 0) io->close(ctx->fds[i].fd);
    char path[4096];
    seg_path(path, sizeof(path), ctx->dir, start);
    int fd = io->open(path, O_RDONLY, 0);
    ctx->fds[i].fd = fd;
    ctx->fds[i].start = start;
    if (fd < 0) log_warn("store: cannot open %s: %s", path, strerror(errno));
    return fd;
}

/* Copy len bytes of the log at lsn to dst. Returns 0 or -1 (logged). */
int st_read_log(store_ctx_t *ctx, uint64_t lsn, uint64_t len, unsigned char *dst)
{
    while (len > 0) {
        uint64_t start = lsn & ~(ctx->segment_size - 1);
        uint64_t chunk = start + ctx->segment_size - lsn;
        if (chunk > len) chunk = len;
        int fd = seg_fd(ctx, start);
        if (fd < 0) return -1;
        if (io_pread_all(fd, dst, (size_t)chunk, (off_t)(lsn - start))) {
            log_warn("store: reading %" PRIu64 " bytes at LSN %" PRIu64 ": %s", chunk, lsn,
                     strerror(errno));
            return -1;
        }
        lsn += chunk;
        dst += chunk;
        len -= chunk;
    }
    return 0;
}

void st_remove(st_db_t *db, idx_entry_t **slot)
{
    idx_remove(&db->ix, slot);
}

/* Copy e's whole value (ent_vlen bytes) to dst. Returns 0 or -1. */
int st_read_value(store_ctx_t *ctx, idx_entry_t *e, unsigned char *dst)
{
    return st_read_range(ctx, e, 0, st_ent_vlen(e), dst);
}

/* Append bytes [off, off + len) of e's value as a bulk string (or an error
 * reply: too large, I/O). */
void st_reply_range(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len, buf_t *b)
{
    if (ctx->max_reply && len > ctx->max_reply) {
        resp_error(b, STORE_ERR_TOO_LARGE);
        return;
    }
    size_t mark = b->len;
    resp_bulk_header(b, (size_t)len);
    buf_reserve(b, (size_t)len + 2);
    if (st_read_range(ctx, e, off, len, (unsigned char *)b->data + b->len)) {
        b->len = mark;
        resp_error(b, STORE_ERR_IO);
        return;
    }
    b->len += (size_t)len;
    buf_append(b, "\r\n", 2);
}

/* Append e's whole value the same way. */
void st_reply_value(store_ctx_t *ctx, idx_entry_t *e, buf_t *b)
{
    st_reply_range(ctx, e, 0, st_ent_vlen(e), b);
}

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

st_db_t *st_db(store_ctx_t *ctx, unsigned n)
{
    return n < (unsigned)ctx->ndb ? ctx->dbs[n] : NULL;
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
    if (h.time_ms > ctx->now) ctx->now = h.time_ms;
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
    return 0;
}

int store_read_db(store_ctx_t *ctx, unsigned dbnum, const unsigned char *payload, size_t len,
                  int64_t now, buf_t *b)
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
    read_args_t a = {ctx->args, argc, dbnum, db, now};
    read(ctx, &a, b);
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

/* ---- context ---------------------------------------------------------- */

store_ctx_t *store_ctx_create(const config_t *cfg, uint64_t seed)
{
    store_ctx_t *ctx = calloc(1, sizeof(*ctx));
    if (!ctx) return NULL;
    ctx->dir = strdup(cfg->dir ? cfg->dir : ".");
    ctx->segment_size = cfg->segment_size;
    ctx->max_bulk = cfg->proto_max_bulk_len;
    ctx->args_cap = 16;
    ctx->args = malloc(ctx->args_cap * sizeof(rec_arg_t));
    for (unsigned i = 0; i < STORE_FD_CACHE; i++)
        ctx->fds[i].fd = -1;
    ctx->ndb = cfg->databases > 0 ? cfg->databases : 16;
    ctx->dbs = calloc((size_t)ctx->ndb, sizeof(*ctx->dbs));
    if (!ctx->dir || !ctx->args || !ctx->dbs) {
        store_ctx_destroy(ctx);
        return NULL;
    }
    for (int i = 0; i < ctx->ndb; i++) {
        st_db_t *db = calloc(1, sizeof(*db));
        if (!db) {
            store_ctx_destroy(ctx);
            return NULL;
        }
        db->ctx = ctx;
        db->next_expiry = db->pass_min = db->set_min = INT64_MAX;
        /* Each database gets its own seed, from the one given. */
        if (idx_init(&db->ix, seed + 0x9E3779B97F4A7C15ull * (uint64_t)i, ent_free, db)) {
            free(db);
            store_ctx_destroy(ctx);
            return NULL;
        }
        ctx->dbs[i] = db;
    }
    return ctx;
}

void store_ctx_destroy(store_ctx_t *ctx)
{
    if (!ctx) return;
    for (int i = 0; ctx->dbs && i < ctx->ndb; i++) {
        if (!ctx->dbs[i]) continue;
        idx_destroy(&ctx->dbs[i]->ix);
        free(ctx->dbs[i]);
    }
    free(ctx->dbs);
    st_watch_free(ctx);
    free(ctx->exec.outer);
    free(ctx->exec.nested);
    for (unsigned i = 0; i < STORE_FD_CACHE; i++)
        if (ctx->fds[i].fd >= 0) io->close(ctx->fds[i].fd);
    free(ctx->args);
    free(ctx->dir);
    free(ctx);
}

void store_set_max_reply(store_ctx_t *ctx, uint64_t max_reply)
{
    ctx->max_reply = max_reply;
}

uint64_t store_applied(const store_ctx_t *ctx)
{
    return ctx->applied;
}

void store_set_applied(store_ctx_t *ctx, uint64_t lsn)
{
    ctx->applied = lsn;
}

int64_t store_now(const store_ctx_t *ctx)
{
    return ctx->now;
}

uint64_t store_key_count(const store_ctx_t *ctx)
{
    uint64_t n = 0;
    for (int i = 0; i < ctx->ndb; i++)
        n += idx_count(&ctx->dbs[i]->ix);
    return n;
}

uint64_t store_expire_count(const store_ctx_t *ctx)
{
    return ctx->expires;
}

int store_db_count(const store_ctx_t *ctx)
{
    return ctx->ndb;
}

void store_db_stats(const store_ctx_t *ctx, int dbnum, uint64_t *keys, uint64_t *expires)
{
    const st_db_t *db = ctx->dbs[dbnum];
    *keys = idx_count(&db->ix);
    *expires = db->expires;
}

uint64_t store_index_bytes(const store_ctx_t *ctx)
{
    uint64_t n = ctx->entry_bytes;
    for (int i = 0; i < ctx->ndb; i++)
        n += idx_table_bytes(&ctx->dbs[i]->ix);
    return n;
}

static int expired_by_apply_clock(void *arg, idx_entry_t *e)
{
    st_db_t *db = arg;
    if (!e->expire_at_ms) return 0;
    if (e->expire_at_ms <= db->ctx->now) return 1;
    if (e->expire_at_ms < db->pass_min) db->pass_min = e->expire_at_ms;
    return 0;
}

int store_maintain(store_ctx_t *ctx, int budget)
{
    int more = 0;
    for (int i = 0; i < ctx->ndb; i++)
        more |= idx_rehash_step(&ctx->dbs[i]->ix, budget);
    /* One full pass of active expiry (every database) per apply-clock
     * value: when the clock has not moved since the last pass, nothing new
     * can have expired. Removal by the apply clock is deterministic: replay
     * removes the same keys, perhaps at other moments, but a key expired by
     * the apply clock is invisible to every later record either way. */
    if (ctx->expire_pass_done && ctx->expire_pass_now != ctx->now) ctx->expire_pass_done = 0;
    if (ctx->expires > 0 && !ctx->expire_pass_done) {
        for (int i = 0; i < budget; i++) {
            st_db_t *db = ctx->dbs[ctx->expire_db];
            if (ctx->expire_cursor == 0) db->pass_min = db->set_min = INT64_MAX;
            if (db->expires > 0)
                ctx->expire_cursor =
                    idx_scan(&db->ix, ctx->expire_cursor, expired_by_apply_clock, db);
            else
                ctx->expire_cursor = 0;
            if (ctx->expire_cursor == 0) {
                /* A whole pass: every TTL left was seen, or set since. */
                db->next_expiry = db->pass_min < db->set_min ? db->pass_min : db->set_min;
            }
            if (ctx->expire_cursor == 0 && ++ctx->expire_db == ctx->ndb) {
                ctx->expire_db = 0;
                ctx->expire_pass_done = 1;
                ctx->expire_pass_now = ctx->now;
                break;
            }
        }
        if (!ctx->expire_pass_done) more = 1;
    }
    return more;
}

typedef struct digest_arg {
    store_ctx_t *ctx;
    uint32_t dbnum;
    int64_t now;
    uint64_t sum;
    unsigned char *buf;
    size_t cap;
} digest_arg_t;

static int digest_entry(void *arg, idx_entry_t *e)
{
    digest_arg_t *d = arg;
    if (e->expire_at_ms && e->expire_at_ms <= d->now) return 0;
    uint64_t vlen = st_ent_vlen(e);
    if (vlen > d->cap) {
        d->buf = st_xrealloc(d->buf, (size_t)vlen);
        d->cap = (size_t)vlen;
    }
    if (st_read_value(d->ctx, e, d->buf)) return -1;
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    if (d->dbnum) XXH3_64bits_update(&st, &d->dbnum, sizeof(d->dbnum));
    XXH3_64bits_update(&st, &e->klen, sizeof(e->klen));
    XXH3_64bits_update(&st, e->data, e->klen);
    XXH3_64bits_update(&st, &vlen, sizeof(vlen));
    XXH3_64bits_update(&st, d->buf, (size_t)vlen);
    XXH3_64bits_update(&st, &e->expire_at_ms, sizeof(e->expire_at_ms));
    d->sum += XXH3_64bits_digest(&st); /* a sum: independent of order */
    return 0;
}

int store_digest(store_ctx_t *ctx, int64_t now_ms, uint64_t *out)
{
    digest_arg_t d = {ctx, 0, now_ms, 0, NULL, 0};
    int rc = 0;
    for (int i = 0; i < ctx->ndb && !rc; i++) {
        d.dbnum = (uint32_t)i;
        rc = idx_foreach(&ctx->dbs[i]->ix, digest_entry, &d);
    }
    free(d.buf);
    *out = d.sum;
    return rc ? -1 : 0;
}
