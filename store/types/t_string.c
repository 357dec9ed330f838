/*
 * t_string.c - the store's string commands: SET (and SETNX, SETEX, PSETEX,
 * GETSET, which share its record), MSET, MSETNX, INCRBY, INCRBYFLOAT,
 * APPEND, SETRANGE, GETDEL, GETEX, GET, MGET, STRLEN, GETRANGE and OBJECT
 * (handlers.h). Store process only; a type handler: it calls core/ and is
 * called by route.c, and its apply handlers follow the determinism rules
 * of route.c's banner. Bit commands are in t_bitmap.c, the value shapes
 * APPEND and SETRANGE leave in core/value.c.
 *
 * Errors that depend on the state (a key's value that is not a number)
 * are found here, in Redis' order; the frontend's encoder (frontend/cmd/t_string.c)
 * has already refused what the arguments alone make wrong.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "handlers.h"
#include "log.h"
#include "rcache.h"
#include "resp.h"
#include "store/core/entry.h"
#include "store/core/object.h"
#include "store/core/value.h"
#include "store/core/watch.h"
#include "strutil.h"

#define ERR_NOT_INT "ERR value is not an integer or out of range"

/* A string without a TTL just written from argument i to a key the read
 * cache held goes there as GET's new reply (D70), so that a key read and
 * written by turns stays there: the bytes are in the record being
 * applied. Keys not in the cache are not added (a write-only load would
 * fill, and fault in, the whole mapping). vlen is the value's length
 * taken before the entry was made (a large value's parts, D31, are never
 * small enough). The change was reported first: st_key_changed dropped
 * the old reply and said so (ctx->rcache_dropped). */
static void cache_written(store_ctx_t *ctx, const apply_args_t *a, const rec_arg_t *key, int i,
                          uint64_t vlen)
{
    if (!ctx->rcache_dropped || !store_cache_allowed(ctx) || vlen != a->argv[i].len) return;
    char reply[RCACHE_SLOT_BYTES];
    int h = snprintf(reply, sizeof(reply), "$%u\r\n", a->argv[i].len);
    size_t n = (size_t)h + vlen + 2;
    if (key->len + n > rcache_room()) return;
    memcpy(reply + h, a->argv[i].ptr, vlen);
    memcpy(reply + h + vlen, "\r\n", 2);
    rcache_fill(ctx->rcache, a->dbnum, key->ptr, key->len, reply, n);
}

void st_apply_set(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0];
    uint32_t flags = cmd_get_u32(a->argv[2].ptr);
    int64_t expire_at = cmd_get_i64(a->argv[3].ptr);
    /* SET GET (GETSET) reads the key first, as a read does (keymiss). */
    idx_entry_t **slot = flags & SETF_GET ? st_find_read(a->db, key, ctx->now, 1)
                                          : st_find_live(a->db, key, ctx->now, 1);
    /* SET overwrites a key of any type, but SET GET reads it first. */
    if ((flags & SETF_GET) && st_wrongtype(slot, ST_STRING, r)) return;
    /* Redis replies GET's old value first, whether or not NX/XX let the
     * SET happen. */
    if ((flags & SETF_GET) && r) {
        if (slot)
            st_reply_range_parts(ctx, *slot, 0, st_ent_vlen(*slot), r);
        else
            resp_null(r);
    }
    if (((flags & SETF_NX) && slot) || ((flags & SETF_XX) && !slot)) {
        if (!(flags & SETF_GET) && r) {
            if (flags & SETF_REPLY_INT)
                resp_integer(r, 0); /* SETNX */
            else
                resp_null(r);
        }
        return;
    }
    if (!expire_at && (flags & SETF_KEEPTTL) && slot) expire_at = st_ent_expire(*slot);
    uint64_t vlen = st_arg_vlen(ctx, a, 1);
    st_ent_store(a->db, slot, st_ent_new_arg(ctx, a, 1, key, expire_at));
    st_key_changed(ctx, a, a->dbnum, key);
    if (!expire_at) cache_written(ctx, a, key, 1, vlen);
    if (!(flags & SETF_GET) && r) {
        if (flags & SETF_REPLY_INT)
            resp_integer(r, 1);
        else
            resp_simple(r, "OK");
    }
}

void st_apply_mset(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    for (uint16_t i = 0; i + 1 < a->argc; i += 2) {
        idx_entry_t **slot = st_find_live(a->db, &a->argv[i], ctx->now, 1);
        uint64_t vlen = st_arg_vlen(ctx, a, i + 1);
        st_ent_store(a->db, slot, st_ent_new_arg(ctx, a, i + 1, &a->argv[i], 0));
        st_key_changed(ctx, a, a->dbnum, &a->argv[i]);
        cache_written(ctx, a, &a->argv[i], i + 1, vlen);
    }
    if (r) resp_simple(r, "OK");
}

void st_apply_incrby(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0];
    long long delta = cmd_get_i64(a->argv[1].ptr), value = 0;
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    if (st_wrongtype(slot, ST_STRING, r)) return;
    if (slot) {
        idx_entry_t *e = *slot;
        /* A value longer than 24 bytes cannot be an integer (20 at most). */
        if (st_ent_kind(e) != VK_INLINE ||
            str_to_ll((const char *)st_ent_inline(e), e->ilen, &value)) {
            if (r) resp_error(r, ERR_NOT_INT);
            return;
        }
    }
    if (__builtin_add_overflow(value, delta, &value)) {
        if (r) resp_error(r, "ERR increment or decrement would overflow");
        return;
    }
    char num[32];
    rec_arg_t val = {(const unsigned char *)num, (uint32_t)str_from_ll(num, value)};
    /* INCR keeps the key's TTL, as Redis' dbOverwrite does. */
    st_ent_store(a->db, slot, st_ent_new(key, &val, 0, slot ? st_ent_expire(*slot) : 0));
    st_key_changed(ctx, a, a->dbnum, key);
    if (r) resp_integer(r, value);
}

/* Redis' checkStringLength against limit (<= 0: none). */
static int too_long_for(int64_t limit, uint64_t total, buf_t *r)
{
    if (limit > 0 && total > (uint64_t)limit) {
        if (r) resp_error(r, "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        return 1;
    }
    return 0;
}

void st_apply_append(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0];
    uint64_t len = st_arg_vlen(ctx, a, 1); /* a large value's parts (D31) */
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    if (st_wrongtype(slot, ST_STRING, r)) return;
    if (!slot) {
        st_ent_store(a->db, NULL, st_ent_new_arg(ctx, a, 1, key, 0));
        st_key_changed(ctx, a, a->dbnum, key);
        if (r) resp_integer(r, (long long)len);
        return;
    }
    uint64_t old_len = st_ent_vlen(*slot), total = old_len + len;
    /* The limit is part of the state machine. Records carry the one the
     * frontend had (so CONFIG SET applies at once, and replay refuses the
     * same APPENDs whatever the configuration then); records written before
     * they did use this store's proto-max-bulk-len. */
    int64_t limit = a->argc == 3 ? cmd_get_i64(a->argv[2].ptr) : ctx->max_bulk;
    if (too_long_for(limit, total, r)) return;
    /* Even an empty APPEND changes the key for WATCH and makes its
     * encoding raw, as Redis' dbUnshareStringValue does. */
    st_key_changed(ctx, a, a->dbnum, key);
    st_ent_set_enc(*slot, VENC_RAW);
    st_val_write_arg(ctx, a, 1, slot, old_len);
    if (r) resp_integer(r, (long long)total);
}

/* SETRANGE key offset value; the frontend refused a negative offset and
 * one past proto-max-bulk-len. */
void st_apply_setrange(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0];
    uint64_t off = (uint64_t)cmd_get_i64(a->argv[1].ptr);
    uint64_t len = st_arg_vlen(ctx, a, 2); /* a large value's parts (D31) */
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    if (st_wrongtype(slot, ST_STRING, r)) return;
    if (len == 0) { /* nothing to write: no key is made, none changes */
        if (r) resp_integer(r, slot ? (long long)st_ent_vlen(*slot) : 0);
        return;
    }
    /* After the type, as Redis' checkStringLength; the limit the record
     * carries (APPEND's rule, above). */
    int64_t limit = a->argc == 4 ? cmd_get_i64(a->argv[3].ptr) : ctx->max_bulk;
    uint64_t total = off + len; /* off < 2^63: no overflow */
    if (off > (uint64_t)LLONG_MAX || total > (uint64_t)LLONG_MAX) {
        too_long_for(1, UINT64_MAX, r);
        return;
    }
    if (too_long_for(limit, total, r)) return;
    if (off > ST_VALUE_MAX - len) { /* past what pieces describe */
        too_long_for(1, UINT64_MAX, r);
        return;
    }
    if (!slot) {
        rec_arg_t empty = {a->argv[2].ptr, 0};
        st_ent_store(a->db, NULL, st_ent_new(key, &empty, 0, 0));
        slot = st_find_live(a->db, key, ctx->now, 0);
    }
    st_ent_set_enc(*slot, VENC_RAW);
    idx_entry_t *e = st_val_write_arg(ctx, a, 2, slot, off);
    st_key_changed(ctx, a, a->dbnum, key);
    if (r) resp_integer(r, (long long)st_ent_vlen(e));
}

/* MSETNX: all the keys or none. */
void st_apply_msetnx(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    for (uint16_t i = 0; i + 1 < a->argc; i += 2) {
        if (st_find_live(a->db, &a->argv[i], ctx->now, 1)) {
            if (r) resp_integer(r, 0);
            return;
        }
    }
    st_apply_mset(ctx, a, NULL);
    if (r) resp_integer(r, 1);
}

/* INCRBYFLOAT key increment: Redis' long double arithmetic, and its
 * formatting of the result, which is what the key then holds (so replay,
 * which runs the same code on the same C library, stores the same text). */
void st_apply_incrbyfloat(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0], *incr_arg = &a->argv[1];
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    long double value = 0, incr;
    if (st_wrongtype(slot, ST_STRING, r)) return;
    if (slot) {
        uint64_t vlen = st_ent_vlen(*slot);
        char text[STR_LD_MAX];
        /* Longer texts are refused by the parse anyway: don't read them. */
        if (vlen < sizeof(text) && st_read_value(ctx, *slot, (unsigned char *)text)) {
            log_warn("store: cannot read a value back from the log while applying a "
                     "record: the state would no longer follow the log; stopping");
            exit(EXIT_FATAL);
        }
        if (vlen >= sizeof(text) || str_to_ld(text, (size_t)vlen, &value)) {
            if (r) resp_error(r, "ERR value is not a valid float");
            return;
        }
    }
    if (str_to_ld((const char *)incr_arg->ptr, incr_arg->len, &incr)) {
        if (r) resp_error(r, "ERR value is not a valid float");
        return;
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        if (r) resp_error(r, "ERR increment would produce NaN or Infinity");
        return;
    }
    char out[STR_LD_MAX];
    size_t n = str_from_ld(out, sizeof(out), value);
    /* The TTL stays (Redis overwrites the value only); the result is a new
     * string, never an int however it reads (createStringObject). */
    idx_entry_t *e =
        st_ent_new_ram(key, (const unsigned char *)out, n, slot ? st_ent_expire(*slot) : 0);
    st_ent_set_enc(e, VENC_STR);
    st_ent_store(a->db, slot, e);
    st_key_changed(ctx, a, a->dbnum, key);
    if (r) resp_bulk(r, out, n);
}

void st_apply_getdel(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    idx_entry_t **slot = st_find_read(a->db, &a->argv[0], ctx->now, 1);
    if (st_wrongtype(slot, ST_STRING, r)) return;
    if (!slot) {
        if (r) resp_null(r);
        return;
    }
    if (r) st_reply_range_parts(ctx, *slot, 0, st_ent_vlen(*slot), r);
    st_remove(a->db, slot);
    st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
}

/* GETEX key [EX|PX|EXAT|PXAT time|PERSIST]. Redis looks the key up before
 * it checks the time, so an invalid time the encoder found comes as a flag:
 * its error is the reply only when the key exists. */
void st_apply_getex(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0];
    uint32_t flags = cmd_get_u32(a->argv[1].ptr);
    int64_t at = cmd_get_i64(a->argv[2].ptr);
    idx_entry_t **slot = st_find_read(a->db, key, ctx->now, 1);
    if (st_wrongtype(slot, ST_STRING, r)) return;
    if (!slot) {
        if (r) resp_null(r);
        return;
    }
    if (flags & GETEXF_ERR_NOT_INT) {
        if (r) resp_error(r, ERR_NOT_INT);
        return;
    }
    if (flags & GETEXF_ERR_EXPIRE) {
        if (r) resp_error(r, "ERR invalid expire time in 'getex' command");
        return;
    }
    if (r) st_reply_range_parts(ctx, *slot, 0, st_ent_vlen(*slot), r);
    if (flags & GETEXF_AT) {
        if (at <= ctx->now)
            st_remove(a->db, slot); /* deleted after the reply */
        else
            st_ent_set_expire(a->db, slot, at);
        st_key_changed(ctx, a, a->dbnum, key);
    } else if ((flags & GETEXF_PERSIST) && st_ent_expire(*slot)) {
        st_ent_set_expire(a->db, slot, 0);
        st_key_changed(ctx, a, a->dbnum, key);
    }
}

/* ---- reads ---------------------------------------------------------- */

void st_read_get(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    if (st_wrongtype(slot, ST_STRING, r)) return;
    if (slot)
        st_reply_range_parts(ctx, *slot, 0, st_ent_vlen(*slot), r);
    else
        resp_null(r);
}

void st_read_mget(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    size_t mark = r->len;
    resp_array(r, a->argc);
    for (uint16_t i = 0; i < a->argc; i++) {
        idx_entry_t **slot = st_find_live(a->db, &a->argv[i], a->now, 0);
        if (slot && st_ent_type(*slot) == ST_STRING) /* another type: null, as Redis */
            st_reply_range_deferred(ctx, *slot, 0, st_ent_vlen(*slot), r);
        else
            resp_null(r);
        if (ctx->max_reply && r->len - mark > ctx->max_reply) {
            st_defer_cut(ctx, r, mark);
            r->len = mark;
            resp_error(r, STORE_ERR_TOO_LARGE);
            break;
        }
    }
}

void st_read_strlen(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    if (st_wrongtype(slot, ST_STRING, r)) return;
    resp_integer(r, slot ? (long long)st_ent_vlen(*slot) : 0);
}

/* GETRANGE key start end (and SUBSTR): Redis 7's index rules. */
void st_read_getrange(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    long long start, end;
    if (str_to_ll((const char *)a->argv[1].ptr, a->argv[1].len, &start) ||
        str_to_ll((const char *)a->argv[2].ptr, a->argv[2].len, &end)) {
        resp_error(r, ERR_NOT_INT);
        return;
    }
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    if (st_wrongtype(slot, ST_STRING, r)) return;
    long long len = slot ? (long long)st_ent_vlen(*slot) : 0;
    if (!slot || (start < 0 && end < 0 && start > end)) {
        resp_bulk(r, "", 0);
        return;
    }
    if (start < 0) start += len;
    if (end < 0) end += len;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= len) end = len - 1;
    if (start > end || len == 0) {
        resp_bulk(r, "", 0);
        return;
    }
    st_reply_range_parts(ctx, *slot, (uint64_t)start, (uint64_t)(end - start + 1), r);
}

/* ---- OBJECT ------------------------------------------------------------ */

static const char *const object_help[] = {
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Prints this help.",
};

/* The encoding Redis would report for e after the same commands: SET and
 * friends try an integer (up to 20 characters that read as a long), then
 * embstr (up to 44 bytes), else raw; APPEND, SETRANGE and SETBIT leave raw;
 * INCRBYFLOAT leaves embstr or raw by length. *small_int is set when Redis
 * would share the object (an int from 0 to 9999: OBJECT REFCOUNT says
 * INT_MAX for those). */
static const char *encoding_of(idx_entry_t *e, int *small_int)
{
    *small_int = 0;
    if (st_ent_kind(e) == VK_OBJ) return st_ent_obj(e)->ops->encoding(st_ent_obj(e));
    uint64_t vlen = st_ent_vlen(e);
    long long v;
    switch (st_ent_enc(e)) {
    case VENC_RAW:
        return "raw";
    case VENC_AUTO:
        if (vlen <= 20 && st_ent_kind(e) == VK_INLINE &&
            str_to_ll((const char *)st_ent_inline(e), (size_t)vlen, &v) == 0) {
            *small_int = v >= 0 && v < 10000;
            return "int";
        }
        /* fall through */
    default:
        return vlen <= 44 ? "embstr" : "raw";
    }
}

/* OBJECT IDLETIME's idle time: since the key's last lookup here, or its
 * last GET a frontend answered from the read cache (D70), the later. */
static uint64_t idle_ms(store_ctx_t *ctx, const read_args_t *a, const idx_entry_t *e)
{
    uint64_t idle = st_access_idle_ms(e, a->now);
    if (!ctx->rcache) return idle;
    int64_t hit = rcache_hit_ms(ctx->rcache, a->dbnum, a->argv[1].ptr, a->argv[1].len);
    if (hit > 0 && a->now >= hit && (uint64_t)(a->now - hit) < idle)
        idle = (uint64_t)(a->now - hit);
    return idle;
}

/* OBJECT ENCODING|FREQ|IDLETIME|REFCOUNT key, OBJECT HELP. Arity and
 * unknown subcommands get the errors Redis 7 gives for its OBJECT|...
 * subcommands. FREQ and IDLETIME read the key's access data
 * (core/evict.c) without touching it, each only under the policies that
 * keep its kind (Redis' errors otherwise). */
void st_read_object(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    static const char *const subs[] = {"help", "encoding", "freq", "idletime", "refcount"};
    const char *sub = (const char *)a->argv[0].ptr;
    size_t sublen = a->argv[0].len;
    int which = -1;
    for (int i = 0; i < 5; i++)
        if (strlen(subs[i]) == sublen && strncasecmp(subs[i], sub, sublen) == 0) which = i;
    if (which < 0) {
        char name[129];
        size_t n = strnlen(sub, sublen < 128 ? sublen : 128); /* %.128s */
        memcpy(name, sub, n);
        name[n] = '\0';
        for (size_t i = 0; i < n; i++)
            if (name[i] == '\r' || name[i] == '\n') name[i] = ' ';
        char msg[256];
        snprintf(msg, sizeof(msg), "ERR unknown subcommand '%s'. Try OBJECT HELP.", name);
        resp_error(r, msg);
        return;
    }
    if (a->argc != (which == 0 ? 1 : 2)) {
        char msg[96];
        snprintf(msg, sizeof(msg), "ERR wrong number of arguments for 'object|%s' command",
                 subs[which]);
        resp_error(r, msg);
        return;
    }
    if (which == 0) {
        size_t n = sizeof(object_help) / sizeof(object_help[0]);
        resp_array(r, (long long)n);
        for (size_t i = 0; i < n; i++)
            resp_simple(r, object_help[i]);
        return;
    }
    idx_entry_t **slot = st_find_quiet(a->db, &a->argv[1], a->now);
    if (!slot) {
        resp_null(r);
        return;
    }
    int lfu = st_policy_lfu(ctx->access.policy);
    int small_int;
    const char *enc = encoding_of(*slot, &small_int);
    switch (which) {
    case 1:
        resp_bulk_cstr(r, enc);
        break;
    case 2:
        if (lfu)
            resp_integer(r, st_access_freq(&ctx->access, *slot, a->now));
        else
            resp_error(r, "ERR An LFU maxmemory policy is not selected, access frequency not "
                          "tracked. Please note that when switching between policies at runtime "
                          "LRU and LFU data will take some time to adjust.");
        break;
    case 3:
        if (lfu)
            resp_error(r, "ERR An LFU maxmemory policy is selected, idle time not tracked. "
                          "Please note that when switching between policies at runtime LRU and "
                          "LFU data will take some time to adjust.");
        else
            resp_integer(r, (long long)(idle_ms(ctx, a, *slot) / 1000));
        break;
    default:
        resp_integer(r, small_int ? INT_MAX : 1);
        break;
    }
}

/* ---- LCS ---- */

/* LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]: Redis 7.0's
 * lcsCommand, errors in its order (the keys' types, then the options, then
 * LEN with IDX, then the sizes). The table of LCS lengths is Redis' too,
 * (len1 + 1) * (len2 + 1) 32-bit cells, refused above proto-max-bulk-len
 * bytes as Redis refuses it; the walk back from its corner gives the same
 * bytes and the same ranges, longest-suffix first. */
void st_read_lcs(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    idx_entry_t **sa = st_find_live(a->db, &a->argv[0], a->now, 0);
    idx_entry_t **sb = st_find_live(a->db, &a->argv[1], a->now, 0);
    if ((sa && st_ent_type(*sa) != ST_STRING) || (sb && st_ent_type(*sb) != ST_STRING)) {
        resp_error(r, "ERR The specified keys must contain string values");
        return;
    }
    int getlen = 0, getidx = 0, withlen = 0;
    long long minlen = 0;
    for (uint16_t j = 2; j < a->argc; j++) {
        const rec_arg_t *o = &a->argv[j];
        if (o->len == 3 && !strncasecmp((const char *)o->ptr, "idx", 3)) {
            getidx = 1;
        } else if (o->len == 3 && !strncasecmp((const char *)o->ptr, "len", 3)) {
            getlen = 1;
        } else if (o->len == 12 && !strncasecmp((const char *)o->ptr, "withmatchlen", 12)) {
            withlen = 1;
        } else if (o->len == 11 && !strncasecmp((const char *)o->ptr, "minmatchlen", 11) &&
                   j + 1 < a->argc) {
            if (str_to_ll((const char *)a->argv[j + 1].ptr, a->argv[j + 1].len, &minlen)) {
                resp_error(r, "ERR value is not an integer or out of range");
                return;
            }
            if (minlen < 0) minlen = 0;
            j++;
        } else {
            resp_error(r, "ERR syntax error");
            return;
        }
    }
    if (getlen && getidx) {
        resp_error(r, "ERR If you want both the length and indexes, please just use IDX.");
        return;
    }
    uint64_t alen = sa ? st_ent_vlen(*sa) : 0, blen = sb ? st_ent_vlen(*sb) : 0;
    if (alen >= UINT32_MAX - 1 || blen >= UINT32_MAX - 1) {
        resp_error(r, "ERR String too long for LCS");
        return;
    }
    uint64_t cells = (alen + 1) * (blen + 1);
    if (ctx->max_bulk > 0 && cells * sizeof(uint32_t) > (uint64_t)ctx->max_bulk) {
        resp_error(r, "ERR Insufficient memory, transient memory for LCS exceeds "
                      "proto-max-bulk-len");
        return;
    }
    uint32_t *t = malloc(cells * sizeof(uint32_t));
    unsigned char *x = malloc(alen + 1), *y = malloc(blen + 1);
    if (!t || !x || !y) {
        free(t), free(x), free(y);
        resp_error(r, "ERR Insufficient memory, failed allocating transient memory for LCS");
        return;
    }
    if ((alen && st_read_value(ctx, *sa, x)) || (blen && st_read_value(ctx, *sb, y))) {
        free(t), free(x), free(y);
        resp_error(r, STORE_ERR_IO);
        return;
    }
#define LCS_AT(i, j) t[(uint64_t)(j) + (uint64_t)(i) * (blen + 1)]
    for (uint64_t i = 0; i <= alen; i++)
        for (uint64_t j = 0; j <= blen; j++) {
            if (i == 0 || j == 0)
                LCS_AT(i, j) = 0;
            else if (x[i - 1] == y[j - 1])
                LCS_AT(i, j) = LCS_AT(i - 1, j - 1) + 1;
            else
                LCS_AT(i, j) =
                    LCS_AT(i - 1, j) > LCS_AT(i, j - 1) ? LCS_AT(i - 1, j) : LCS_AT(i, j - 1);
        }
    uint32_t total = LCS_AT(alen, blen), k = total;
    unsigned char *res = malloc(total ? total : 1);
    /* The ranges, gathered before the reply (its array count comes first). */
    buf_t ranges;
    buf_init(&ranges);
    long long nranges = 0;
    uint64_t i = alen, j = blen, as = alen, ae = 0, bs = 0, be = 0;
    int compute = getidx || !getlen;
    while (compute && res && i > 0 && j > 0) {
        int emit = 0;
        if (x[i - 1] == y[j - 1]) {
            res[k - 1] = x[i - 1];
            if (as == alen) {
                as = ae = i - 1;
                bs = be = j - 1;
            } else if (as == i && bs == j) {
                as--;
                bs--;
            } else {
                emit = 1;
            }
            if (as == 0 || bs == 0) emit = 1;
            k--, i--, j--;
        } else {
            if (LCS_AT(i - 1, j) > LCS_AT(i, j - 1))
                i--;
            else
                j--;
            if (as != alen) emit = 1;
        }
        uint64_t mlen = ae - as + 1;
        if (emit) {
            if (getidx && (minlen == 0 || mlen >= (uint64_t)minlen)) {
                resp_array(&ranges, 2 + withlen);
                resp_array(&ranges, 2);
                resp_integer(&ranges, (long long)as);
                resp_integer(&ranges, (long long)ae);
                resp_array(&ranges, 2);
                resp_integer(&ranges, (long long)bs);
                resp_integer(&ranges, (long long)be);
                if (withlen) resp_integer(&ranges, (long long)mlen);
                nranges++;
            }
            as = alen;
        }
    }
#undef LCS_AT
    if (!res) {
        resp_error(r, "ERR Insufficient memory, failed allocating transient memory for LCS");
    } else if (getidx) {
        resp_map(r, a->proto, 2);
        resp_bulk(r, "matches", 7);
        resp_array(r, nranges);
        buf_append(r, ranges.data, ranges.len);
        resp_bulk(r, "len", 3);
        resp_integer(r, total);
    } else if (getlen) {
        resp_integer(r, total);
    } else {
        resp_bulk(r, res, total);
    }
    buf_free(&ranges);
    free(res), free(t), free(x), free(y);
}
