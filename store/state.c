/*
 * state.c - the store's state machine (store-internal.h): applies canonical
 * write records to the key index and answers read requests, with replies
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
 *   - A value of at most STORE_INLINE_MAX bytes is entirely inline; a longer
 *     one is an optional inline prefix followed by extents in the log.
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
 *     VK_LIST    a pointer to an ext_list_t (APPEND chains)
 * RAM per key: 26 + klen + ilen + {0, 12, 8} bytes, rounded up by the
 * allocator to its size class, plus one 8-byte bucket pointer per 1 to 2
 * keys (load factor 0.5-1). E.g. a 16-byte key with a 100-byte value:
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
#include "index.h"
#include "io.h"
#include "log.h"
#include "record.h"
#include "resp.h"
#include "seg.h"
#include "shm.h"
#include "store-internal.h"
#include "strutil.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

enum { VK_INLINE = 0, VK_EXTENT = 1, VK_LIST = 2 };

#define EXT1_BYTES     12u
#define STORE_FD_CACHE 64u

typedef struct store_extent {
    uint64_t lsn;
    uint64_t len;
} store_extent_t;

typedef struct ext_list {
    uint64_t ext_bytes; /* sum of the extents' lengths */
    uint32_t n, cap;
    store_extent_t ext[];
} ext_list_t;

struct store_ctx {
    idx_t idx;
    char *dir;
    uint64_t segment_size;
    int64_t max_bulk;   /* proto-max-bulk-len: APPEND's limit; <= 0 none */
    uint64_t max_reply; /* 0 = none */
    int64_t now;        /* apply clock */
    uint64_t applied;
    uint64_t expires;     /* entries with a TTL */
    uint64_t entry_bytes; /* requested bytes of entries and extent lists */
    rec_arg_t *args;
    uint32_t args_cap;
    struct {
        uint64_t start;
        int fd;
    } fds[STORE_FD_CACHE];
    uint64_t expire_cursor;
    int64_t expire_pass_now; /* apply clock when the last full pass ended */
    int expire_pass_done;
};

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        log_warn("store: out of memory allocating %zu bytes", n);
        abort(); /* as Redis does: a half-applied record is worse */
    }
    return p;
}

static void *xrealloc(void *old, size_t n)
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
    return vkind == VK_EXTENT ? EXT1_BYTES : vkind == VK_LIST ? sizeof(ext_list_t *) : 0;
}

static size_t entry_size(uint32_t klen, uint8_t ilen, uint8_t vkind)
{
    return IDX_ENTRY_HDR + klen + ilen + tail_bytes(vkind);
}

static unsigned char *ent_inline(idx_entry_t *e)
{
    return e->data + e->klen;
}

static unsigned char *ent_tail(idx_entry_t *e)
{
    return e->data + e->klen + e->ilen;
}

static void ent_get_ext1(idx_entry_t *e, uint64_t *lsn, uint32_t *len)
{
    memcpy(lsn, ent_tail(e), 8);
    memcpy(len, ent_tail(e) + 8, 4);
}

static void ent_set_ext1(idx_entry_t *e, uint64_t lsn, uint32_t len)
{
    memcpy(ent_tail(e), &lsn, 8);
    memcpy(ent_tail(e) + 8, &len, 4);
}

static ext_list_t *ent_list(idx_entry_t *e)
{
    ext_list_t *l;
    memcpy(&l, ent_tail(e), sizeof(l));
    return l;
}

static void ent_set_list(idx_entry_t *e, ext_list_t *l)
{
    memcpy(ent_tail(e), &l, sizeof(l));
}

static uint64_t ent_vlen(idx_entry_t *e)
{
    uint64_t n = e->ilen;
    if (e->vkind == VK_EXTENT) {
        uint64_t lsn;
        uint32_t len;
        ent_get_ext1(e, &lsn, &len);
        n += len;
    } else if (e->vkind == VK_LIST) {
        n += ent_list(e)->ext_bytes;
    }
    return n;
}

static uint64_t ent_bytes(idx_entry_t *e)
{
    uint64_t n = entry_size(e->klen, e->ilen, e->vkind);
    if (e->vkind == VK_LIST) n += sizeof(ext_list_t) + ent_list(e)->cap * sizeof(store_extent_t);
    return n;
}

/* The index's free callback: every removal passes here, so the counters
 * stay right whichever path removed the entry. */
static void ent_free(void *arg, idx_entry_t *e)
{
    store_ctx_t *ctx = arg;
    ctx->entry_bytes -= ent_bytes(e);
    if (e->expire_at_ms) ctx->expires--;
    if (e->vkind == VK_LIST) free(ent_list(e));
    free(e);
}

/* A new entry holding a SET-style value: inline when short, else one extent
 * pointing at the value's bytes in the log. */
static idx_entry_t *ent_new(const rec_arg_t *key, const rec_arg_t *val, uint64_t val_lsn,
                            int64_t expire_at)
{
    int small = val->len <= STORE_INLINE_MAX;
    uint8_t ilen = small ? (uint8_t)val->len : 0;
    uint8_t vkind = small ? VK_INLINE : VK_EXTENT;
    idx_entry_t *e = xmalloc(entry_size(key->len, ilen, vkind));
    e->klen = key->len;
    e->expire_at_ms = expire_at;
    e->ilen = ilen;
    e->vkind = vkind;
    memcpy(e->data, key->ptr, key->len);
    if (small)
        memcpy(ent_inline(e), val->ptr, val->len);
    else
        ent_set_ext1(e, val_lsn, val->len);
    return e;
}

/* Put e into the index, in place of *slot's entry when slot is not NULL. */
static void ent_store(store_ctx_t *ctx, idx_entry_t **slot, idx_entry_t *e)
{
    ctx->entry_bytes += ent_bytes(e);
    if (e->expire_at_ms) ctx->expires++;
    if (slot) {
        idx_entry_t *old = *slot;
        idx_relink(slot, old, e);
        ent_free(ctx, old);
    } else {
        idx_insert(&ctx->idx, e);
    }
}

/* Resize *slot's entry for a new value shape; the caller fills it in. The
 * bytes up to the old tail are kept (realloc). */
static idx_entry_t *ent_resize(store_ctx_t *ctx, idx_entry_t **slot, uint8_t ilen, uint8_t vkind)
{
    idx_entry_t *e = *slot;
    ctx->entry_bytes -= entry_size(e->klen, e->ilen, e->vkind);
    e = xrealloc(e, entry_size(e->klen, ilen, vkind));
    *slot = e; /* next and hash moved with the bytes */
    e->ilen = ilen;
    e->vkind = vkind;
    ctx->entry_bytes += entry_size(e->klen, ilen, vkind);
    return e;
}

static void ent_set_expire(store_ctx_t *ctx, idx_entry_t *e, int64_t at)
{
    if (!e->expire_at_ms && at) ctx->expires++;
    if (e->expire_at_ms && !at) ctx->expires--;
    e->expire_at_ms = at;
}

/*
 * The slot of a key that is live at `now`, or NULL. With reap set, a key
 * found expired is removed (only on the apply path, where now is the apply
 * clock: Redis' lazy expiry, done where replay does it too).
 */
static idx_entry_t **find_live(store_ctx_t *ctx, const rec_arg_t *key, int64_t now, int reap)
{
    idx_entry_t **slot = idx_find(&ctx->idx, key->ptr, key->len);
    if (!slot) return NULL;
    int64_t at = (*slot)->expire_at_ms;
    if (at && at <= now) {
        if (reap) idx_remove(&ctx->idx, slot);
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
static int read_log(store_ctx_t *ctx, uint64_t lsn, uint64_t len, unsigned char *dst)
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

/* Copy e's whole value (ent_vlen bytes) to dst. Returns 0 or -1. */
static int read_value(store_ctx_t *ctx, idx_entry_t *e, unsigned char *dst)
{
    memcpy(dst, ent_inline(e), e->ilen);
    dst += e->ilen;
    if (e->vkind == VK_EXTENT) {
        uint64_t lsn;
        uint32_t len;
        ent_get_ext1(e, &lsn, &len);
        return read_log(ctx, lsn, len, dst);
    }
    if (e->vkind == VK_LIST) {
        ext_list_t *l = ent_list(e);
        for (uint32_t i = 0; i < l->n; i++) {
            if (read_log(ctx, l->ext[i].lsn, l->ext[i].len, dst)) return -1;
            dst += l->ext[i].len;
        }
    }
    return 0;
}

/* Append e's value as a bulk string (or an error reply: too large, I/O). */
static void reply_value(store_ctx_t *ctx, idx_entry_t *e, buf_t *b)
{
    uint64_t vlen = ent_vlen(e);
    if (ctx->max_reply && vlen > ctx->max_reply) {
        resp_error(b, STORE_ERR_TOO_LARGE);
        return;
    }
    size_t mark = b->len;
    resp_bulk_header(b, (size_t)vlen);
    buf_reserve(b, (size_t)vlen + 2);
    if (read_value(ctx, e, (unsigned char *)b->data + b->len)) {
        b->len = mark;
        resp_error(b, STORE_ERR_IO);
        return;
    }
    b->len += (size_t)vlen;
    buf_append(b, "\r\n", 2);
}

/* ---- write commands --------------------------------------------------- */

typedef struct apply_args {
    const rec_arg_t *argv;
    uint16_t argc;
    const unsigned char *rec; /* for the log position of argument bytes */
    uint64_t lsn;
} apply_args_t;

static uint64_t arg_lsn(const apply_args_t *a, int i)
{
    return a->lsn + (uint64_t)(a->argv[i].ptr - a->rec);
}

static void apply_set(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0];
    uint32_t flags = cmd_get_u32(a->argv[2].ptr);
    int64_t expire_at = cmd_get_i64(a->argv[3].ptr);
    idx_entry_t **slot = find_live(ctx, key, ctx->now, 1);
    /* Redis replies GET's old value first, whether or not NX/XX let the
     * SET happen. */
    if ((flags & SETF_GET) && r) {
        if (slot)
            reply_value(ctx, *slot, r);
        else
            resp_null(r);
    }
    if (((flags & SETF_NX) && slot) || ((flags & SETF_XX) && !slot)) {
        if (!(flags & SETF_GET) && r) resp_null(r);
        return;
    }
    if (!expire_at && (flags & SETF_KEEPTTL) && slot) expire_at = (*slot)->expire_at_ms;
    ent_store(ctx, slot, ent_new(key, &a->argv[1], arg_lsn(a, 1), expire_at));
    if (!(flags & SETF_GET) && r) resp_simple(r, "OK");
}

static void apply_mset(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    for (uint16_t i = 0; i + 1 < a->argc; i += 2) {
        idx_entry_t **slot = find_live(ctx, &a->argv[i], ctx->now, 1);
        ent_store(ctx, slot, ent_new(&a->argv[i], &a->argv[i + 1], arg_lsn(a, i + 1), 0));
    }
    if (r) resp_simple(r, "OK");
}

static void apply_del(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    long long n = 0;
    for (uint16_t i = 0; i < a->argc; i++) {
        idx_entry_t **slot = find_live(ctx, &a->argv[i], ctx->now, 1);
        if (slot) {
            idx_remove(&ctx->idx, slot);
            n++;
        }
    }
    if (r) resp_integer(r, n);
}

static void apply_incrby(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0];
    long long delta = cmd_get_i64(a->argv[1].ptr), value = 0;
    idx_entry_t **slot = find_live(ctx, key, ctx->now, 1);
    if (slot) {
        idx_entry_t *e = *slot;
        /* A value longer than 24 bytes cannot be an integer (20 at most). */
        if (e->vkind != VK_INLINE || str_to_ll((const char *)ent_inline(e), e->ilen, &value)) {
            if (r) resp_error(r, "ERR value is not an integer or out of range");
            return;
        }
    }
    if ((delta < 0 && value < 0 && delta < LLONG_MIN - value) ||
        (delta > 0 && value > 0 && delta > LLONG_MAX - value)) {
        if (r) resp_error(r, "ERR increment or decrement would overflow");
        return;
    }
    value += delta;
    char num[32];
    rec_arg_t val = {(const unsigned char *)num, (uint32_t)str_from_ll(num, value)};
    /* INCR keeps the key's TTL, as Redis' dbOverwrite does. */
    ent_store(ctx, slot, ent_new(key, &val, 0, slot ? (*slot)->expire_at_ms : 0));
    if (r) resp_integer(r, value);
}

static void apply_append(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0], *val = &a->argv[1];
    uint64_t val_lsn = arg_lsn(a, 1);
    idx_entry_t **slot = find_live(ctx, key, ctx->now, 1);
    if (!slot) {
        ent_store(ctx, NULL, ent_new(key, val, val_lsn, 0));
        if (r) resp_integer(r, val->len);
        return;
    }
    idx_entry_t *e = *slot;
    uint64_t old_len = ent_vlen(e), total = old_len + val->len;
    /* Redis' checkStringLength. The limit is part of the state machine:
     * replay must run with the same proto-max-bulk-len to refuse the same
     * APPENDs. */
    if (ctx->max_bulk > 0 && total > (uint64_t)ctx->max_bulk) {
        if (r) resp_error(r, "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        return;
    }
    if (val->len == 0) {
        if (r) resp_integer(r, (long long)total);
        return;
    }
    if (e->vkind == VK_INLINE && total <= STORE_INLINE_MAX) {
        uint8_t old = e->ilen;
        e = ent_resize(ctx, slot, (uint8_t)total, VK_INLINE);
        memcpy(ent_inline(e) + old, val->ptr, val->len);
    } else if (e->vkind == VK_INLINE) {
        /* The inline bytes stay as the prefix; the new bytes stay in the log. */
        e = ent_resize(ctx, slot, e->ilen, VK_EXTENT);
        ent_set_ext1(e, val_lsn, val->len);
    } else if (e->vkind == VK_EXTENT) {
        uint64_t lsn;
        uint32_t len;
        ent_get_ext1(e, &lsn, &len);
        ext_list_t *l = xmalloc(sizeof(*l) + 4 * sizeof(store_extent_t));
        l->cap = 4;
        l->n = 2;
        l->ext[0] = (store_extent_t){lsn, len};
        l->ext[1] = (store_extent_t){val_lsn, val->len};
        l->ext_bytes = (uint64_t)len + val->len;
        e = ent_resize(ctx, slot, e->ilen, VK_LIST);
        ent_set_list(e, l);
        ctx->entry_bytes += sizeof(*l) + l->cap * sizeof(store_extent_t);
    } else {
        ext_list_t *l = ent_list(e);
        if (l->n == l->cap) {
            ctx->entry_bytes += l->cap * sizeof(store_extent_t);
            l = xrealloc(l, sizeof(*l) + 2 * (size_t)l->cap * sizeof(store_extent_t));
            l->cap *= 2;
            ent_set_list(e, l);
        }
        l->ext[l->n++] = (store_extent_t){val_lsn, val->len};
        l->ext_bytes += val->len;
    }
    if (r) resp_integer(r, (long long)total);
}

static void apply_getdel(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    idx_entry_t **slot = find_live(ctx, &a->argv[0], ctx->now, 1);
    if (!slot) {
        if (r) resp_null(r);
        return;
    }
    if (r) reply_value(ctx, *slot, r);
    idx_remove(&ctx->idx, slot);
}

static void apply_pexpireat(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    int64_t when = cmd_get_i64(a->argv[1].ptr);
    uint32_t flags = cmd_get_u32(a->argv[2].ptr);
    idx_entry_t **slot = find_live(ctx, &a->argv[0], ctx->now, 1);
    int ok = slot != NULL;
    if (ok) {
        /* Redis 7 expireGenericCommand: no TTL counts as an infinite one. */
        int64_t cur = (*slot)->expire_at_ms;
        if ((flags & EXPF_NX) && cur) ok = 0;
        if ((flags & EXPF_XX) && !cur) ok = 0;
        if ((flags & EXPF_GT) && (!cur || when <= cur)) ok = 0;
        if ((flags & EXPF_LT) && cur && when >= cur) ok = 0;
    }
    if (ok) {
        if (when <= ctx->now)
            idx_remove(&ctx->idx, slot);
        else
            ent_set_expire(ctx, *slot, when);
    }
    if (r) resp_integer(r, ok);
}

static void apply_persist(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    idx_entry_t **slot = find_live(ctx, &a->argv[0], ctx->now, 1);
    int ok = slot && (*slot)->expire_at_ms;
    if (ok) ent_set_expire(ctx, *slot, 0);
    if (r) resp_integer(r, ok);
}

static void apply_flushall(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)a;
    /* Synchronous, as Redis' default (lazyfree-lazy-user-flush no). */
    idx_clear(&ctx->idx);
    ctx->expire_cursor = 0;
    if (r) resp_simple(r, "OK");
}

/* The canonical write forms (command.h), as data: argument count bounds and
 * the exact sizes of fixed-width integer arguments. */
typedef struct write_form {
    cmd_id_t id;
    void (*apply)(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
    uint16_t min_args, max_args;
    uint8_t even;       /* key/value pairs */
    uint8_t int_len[4]; /* required length of argument i, 0 = any */
} write_form_t;

static const write_form_t write_forms[] = {
    {CMD_SET, apply_set, 4, 4, 0, {0, 0, 4, 8}},
    {CMD_MSET, apply_mset, 2, UINT16_MAX, 1, {0}},
    {CMD_DEL, apply_del, 1, UINT16_MAX, 0, {0}},
    {CMD_INCRBY, apply_incrby, 2, 2, 0, {0, 8}},
    {CMD_APPEND, apply_append, 2, 2, 0, {0}},
    {CMD_GETDEL, apply_getdel, 1, 1, 0, {0}},
    {CMD_PEXPIREAT, apply_pexpireat, 3, 3, 0, {0, 8, 4}},
    {CMD_PERSIST, apply_persist, 1, 1, 0, {0}},
    {CMD_FLUSHALL, apply_flushall, 0, UINT16_MAX, 0, {0}},
};

static const write_form_t *write_form(uint16_t id, uint16_t argc, const rec_arg_t *argv)
{
    for (size_t i = 0; i < sizeof(write_forms) / sizeof(write_forms[0]); i++) {
        const write_form_t *f = &write_forms[i];
        if (f->id != id) continue;
        if (argc < f->min_args || argc > f->max_args || (f->even && argc % 2)) return NULL;
        for (int j = 0; j < 4 && j < argc; j++)
            if (f->int_len[j] && argv[j].len != f->int_len[j]) return NULL;
        return f;
    }
    return NULL;
}

/* ---- decoding --------------------------------------------------------- */

static int decode(store_ctx_t *ctx, const unsigned char *p, size_t len, uint16_t *id,
                  uint16_t *argc)
{
    if (rec_decode_payload(p, len, id, argc, ctx->args, (uint16_t)ctx->args_cap)) return -1;
    if (*argc > ctx->args_cap) {
        ctx->args = xrealloc(ctx->args, (size_t)*argc * sizeof(rec_arg_t));
        ctx->args_cap = *argc;
        if (rec_decode_payload(p, len, id, argc, ctx->args, (uint16_t)ctx->args_cap)) return -1;
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
    uint16_t id, argc;
    const write_form_t *f = NULL;
    if (decode(ctx, (const unsigned char *)rec + REC_HDR_SIZE, h.len - REC_HDR_SIZE, &id, &argc) ==
        0)
        f = write_form(id, argc, ctx->args);
    if (!f) {
        /* Durable already, so refusing it would stop the server for good:
         * apply it as a no-op, the same on every replay. */
        log_warn("store: record at LSN %" PRIu64 " is not a canonical write; ignored", h.lsn);
        if (reply) resp_error(reply, "ERR the store cannot apply this record");
        return 1;
    }
    apply_args_t a = {ctx->args, argc, rec, h.lsn};
    f->apply(ctx, &a, reply);
    return 0;
}

/* ---- reads ------------------------------------------------------------ */

static void reply_arity(buf_t *b, uint16_t id)
{
    const cmd_desc_t *d = cmd_by_id((cmd_id_t)id);
    char msg[96];
    snprintf(msg, sizeof(msg), "ERR wrong number of arguments for '%s' command", d ? d->name : "?");
    resp_error(b, msg);
}

typedef struct count_expired {
    int64_t now;
    uint64_t n;
} count_expired_t;

static int count_expired(void *arg, idx_entry_t *e)
{
    count_expired_t *ce = arg;
    if (e->expire_at_ms && e->expire_at_ms <= ce->now) ce->n++;
    return 0;
}

int store_read_at(store_ctx_t *ctx, const unsigned char *payload, size_t len, int64_t now, buf_t *b)
{
    uint16_t id, argc;
    if (decode(ctx, payload, len, &id, &argc)) {
        resp_error(b, "ERR malformed request to the store");
        return 0;
    }
    const rec_arg_t *argv = ctx->args;
    int one_key = id == CMD_GET || id == CMD_STRLEN || id == CMD_TTL || id == CMD_PTTL;
    if ((one_key && argc != 1) || ((id == CMD_MGET || id == CMD_EXISTS) && argc < 1) ||
        (id == CMD_DBSIZE && argc != 0)) {
        reply_arity(b, id);
        return 0;
    }
    switch (id) {
    case CMD_GET: {
        idx_entry_t **slot = find_live(ctx, &argv[0], now, 0);
        if (slot)
            reply_value(ctx, *slot, b);
        else
            resp_null(b);
        break;
    }
    case CMD_MGET: {
        size_t mark = b->len;
        resp_array(b, argc);
        for (uint16_t i = 0; i < argc; i++) {
            idx_entry_t **slot = find_live(ctx, &argv[i], now, 0);
            if (slot)
                reply_value(ctx, *slot, b);
            else
                resp_null(b);
            if (ctx->max_reply && b->len - mark > ctx->max_reply) {
                b->len = mark;
                resp_error(b, STORE_ERR_TOO_LARGE);
                break;
            }
        }
        break;
    }
    case CMD_EXISTS: {
        long long n = 0; /* duplicates count, as in Redis */
        for (uint16_t i = 0; i < argc; i++)
            n += find_live(ctx, &argv[i], now, 0) != NULL;
        resp_integer(b, n);
        break;
    }
    case CMD_STRLEN: {
        idx_entry_t **slot = find_live(ctx, &argv[0], now, 0);
        resp_integer(b, slot ? (long long)ent_vlen(*slot) : 0);
        break;
    }
    case CMD_TTL:
    case CMD_PTTL: {
        idx_entry_t **slot = find_live(ctx, &argv[0], now, 0);
        if (!slot) {
            resp_integer(b, -2);
        } else if (!(*slot)->expire_at_ms) {
            resp_integer(b, -1);
        } else {
            long long ttl = (*slot)->expire_at_ms - now;
            if (ttl < 0) ttl = 0;
            resp_integer(b, id == CMD_TTL ? (ttl + 500) / 1000 : ttl);
        }
        break;
    }
    case CMD_DBSIZE: {
        /* Redis removes an expired key as soon as a command touches it, so
         * its DBSIZE stops counting a key GET has already called missing.
         * Our reads must not remove anything (removal is a state change
         * and belongs in the log), so expired keys are left out of the
         * count instead. That walks the keys when some have a TTL: O(n)
         * until active expiry removes them through the log (issue 5). */
        uint64_t n = idx_count(&ctx->idx);
        if (ctx->expires > 0) {
            count_expired_t ce = {now, 0};
            idx_foreach(&ctx->idx, count_expired, &ce);
            n -= ce.n;
        }
        resp_integer(b, (long long)n);
        break;
    }
    default:
        resp_error(b, "ERR the store does not answer this command");
        break;
    }
    return 0;
}

int store_read(store_ctx_t *ctx, const unsigned char *payload, size_t len, buf_t *reply)
{
    return store_read_at(ctx, payload, len, shm_now_ms(), reply);
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
    if (!ctx->dir || !ctx->args || idx_init(&ctx->idx, seed, ent_free, ctx)) {
        free(ctx->dir);
        free(ctx->args);
        free(ctx);
        return NULL;
    }
    return ctx;
}

void store_ctx_destroy(store_ctx_t *ctx)
{
    if (!ctx) return;
    idx_destroy(&ctx->idx);
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
    return idx_count(&ctx->idx);
}

uint64_t store_expire_count(const store_ctx_t *ctx)
{
    return ctx->expires;
}

uint64_t store_index_bytes(const store_ctx_t *ctx)
{
    return ctx->entry_bytes + idx_table_bytes(&ctx->idx);
}

static int expired_by_apply_clock(void *arg, idx_entry_t *e)
{
    store_ctx_t *ctx = arg;
    return e->expire_at_ms && e->expire_at_ms <= ctx->now;
}

int store_maintain(store_ctx_t *ctx, int budget)
{
    int more = idx_rehash_step(&ctx->idx, budget);
    /* One full pass of active expiry per apply-clock value: when the clock
     * has not moved since the last pass, nothing new can have expired. */
    if (ctx->expire_pass_done && ctx->expire_pass_now != ctx->now) ctx->expire_pass_done = 0;
    if (ctx->expires > 0 && !ctx->expire_pass_done) {
        for (int i = 0; i < budget; i++) {
            ctx->expire_cursor =
                idx_scan(&ctx->idx, ctx->expire_cursor, expired_by_apply_clock, ctx);
            if (ctx->expire_cursor == 0) {
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
    int64_t now;
    uint64_t sum;
    unsigned char *buf;
    size_t cap;
} digest_arg_t;

static int digest_entry(void *arg, idx_entry_t *e)
{
    digest_arg_t *d = arg;
    if (e->expire_at_ms && e->expire_at_ms <= d->now) return 0;
    uint64_t vlen = ent_vlen(e);
    if (vlen > d->cap) {
        d->buf = xrealloc(d->buf, (size_t)vlen);
        d->cap = (size_t)vlen;
    }
    if (read_value(d->ctx, e, d->buf)) return -1;
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
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
    digest_arg_t d = {ctx, now_ms, 0, NULL, 0};
    int rc = idx_foreach(&ctx->idx, digest_entry, &d);
    free(d.buf);
    *out = d.sum;
    return rc ? -1 : 0;
}
