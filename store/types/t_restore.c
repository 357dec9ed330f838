/*
 * t_restore.c - RESTORE's apply (issue 13, D34): decode a Redis 7.0 DUMP
 * payload (RDB version <= 10, CRC64 checked by the frontend's encoder and
 * again here) into a new entry. The record is CMD_RESTORE key payload
 * flags expire_at hash_limits intset_limit: the payload stays in the log
 * as the record's argument and is decoded on every apply, with the limits
 * the record carries, so replay builds the same value with the same
 * encoding (OBJECT ENCODING follows the thresholds, as Redis' load does).
 *
 * Forms read: RDB_TYPE_STRING (plain, integer, LZF), RDB_TYPE_SET,
 * RDB_TYPE_SET_INTSET, RDB_TYPE_HASH, RDB_TYPE_HASH_LISTPACK, the sorted
 * sets' 3, 5 and 17, and lists: 18 (quicklist of listpacks and plain
 * nodes), 14 (quicklist of ziplists), 10 (one ziplist), 1 (linked list).
 * Others (ziplist and zipmap hashes, streams, modules) are
 * "ERR Bad data format"; a type adds a reader to readers[] below, indexed
 * by RDB type byte.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "handlers.h"
#include "resp.h"
#include "store/core/access.h"
#include "store/core/entry.h"
#include "store/core/hash.h"
#include "store/core/index.h"
#include "store/core/list.h"
#include "store/core/object.h"
#include "store/core/value.h"
#include "store/core/watch.h"
#include "store/dump.h"
#include "zset_ops.h"
#include "strutil.h"

typedef struct {
    const unsigned char *p, *end;
} rd_t;

int st_dump_verify(const unsigned char *p, size_t n)
{
    if (n < 10) return -1;
    unsigned ver = p[n - 10] | (unsigned)p[n - 9] << 8;
    if (ver > ST_RDB_VERSION) return -1;
    uint64_t crc = 0;
    for (int i = 0; i < 8; i++)
        crc |= (uint64_t)p[n - 8 + i] << (8 * i);
    return crc == st_crc64(0, p, n - 8) ? 0 : -1;
}

/* An RDB length; *enc set (and the low 6 bits returned) for the 0xC0
 * special forms. -1 on truncation. */
static int rd_len(rd_t *r, uint64_t *len, int *enc)
{
    *enc = 0;
    if (r->p >= r->end) return -1;
    unsigned b = *r->p++;
    switch (b >> 6) {
    case 0:
        *len = b & 63;
        return 0;
    case 1:
        if (r->p >= r->end) return -1;
        *len = (uint64_t)(b & 63) << 8 | *r->p++;
        return 0;
    case 3:
        *enc = 1;
        *len = b & 63;
        return 0;
    default:
        break;
    }
    int w = b == 0x80 ? 4 : b == 0x81 ? 8 : 0;
    if (!w || r->end - r->p < w) return -1;
    uint64_t v = 0;
    for (int i = 0; i < w; i++)
        v = v << 8 | *r->p++;
    *len = v;
    return 0;
}

/* LZF: literal runs (ctrl < 32: ctrl+1 bytes) and back references (length
 * ctrl>>5, +2; 7 takes one more byte; offset 13 bits + 1). Redis' loader
 * takes what lzf_decompress returns when it is the whole length, and that
 * is 0 for any data into an empty output (it stops, full, at once): an
 * empty string takes any compressed bytes, as in redis-server 7.0.15.
 * Not liblzf's lzf_decompress itself (D57): its lengths are 32-bit, and
 * Redis 7 loads LZF strings of 4 GiB and more. */
static int lzf_unpack(const unsigned char *in, size_t in_len, unsigned char *out, size_t out_len)
{
    if (!out_len) return 0;
    size_t i = 0, o = 0;
    while (i < in_len) {
        unsigned ctrl = in[i++];
        if (ctrl < 32) {
            size_t n = ctrl + 1;
            if (i + n > in_len || o + n > out_len) return -1;
            memcpy(out + o, in + i, n);
            i += n;
            o += n;
        } else {
            size_t n = ctrl >> 5;
            if (n == 7) {
                if (i >= in_len) return -1;
                n += in[i++];
            }
            n += 2;
            if (i >= in_len) return -1;
            size_t back = ((size_t)(ctrl & 31) << 8 | in[i++]) + 1;
            if (back > o || o + n > out_len) return -1;
            for (size_t k = 0; k < n; k++, o++)
                out[o] = out[o - back];
        }
    }
    return o == out_len ? 0 : -1;
}

/* An RDB string into a malloc'd buffer (*out, *n; integers as their
 * decimal text). -1 on bad data. */
static int rd_string(rd_t *r, unsigned char **out, size_t *n)
{
    uint64_t len;
    int enc;
    if (rd_len(r, &len, &enc)) return -1;
    if (enc) {
        if (len <= 2) {
            size_t w = (size_t)1 << len;
            if ((size_t)(r->end - r->p) < w) return -1;
            uint32_t u = 0;
            for (size_t i = 0; i < w; i++)
                u |= (uint32_t)r->p[i] << (8 * i);
            r->p += w;
            long long v = w == 1 ? (int8_t)u : w == 2 ? (int16_t)u : (int32_t)u;
            *out = malloc(24);
            if (!*out) return -1;
            *n = str_from_ll((char *)*out, v);
            return 0;
        }
        if (len != 3) return -1;
        uint64_t clen, ulen;
        int e1, e2;
        if (rd_len(r, &clen, &e1) || rd_len(r, &ulen, &e2) || e1 || e2) return -1;
        if (clen > (uint64_t)(r->end - r->p) || ulen > ST_VALUE_MAX) return -1;
        *out = malloc(ulen ? ulen : 1);
        if (!*out) return -1;
        if (lzf_unpack(r->p, clen, *out, ulen)) {
            free(*out);
            return -1;
        }
        r->p += clen;
        *n = ulen;
        return 0;
    }
    if (len > (uint64_t)(r->end - r->p)) return -1;
    *out = malloc(len ? len : 1);
    if (!*out) return -1;
    memcpy(*out, r->p, len);
    r->p += len;
    *n = len;
    return 0;
}

typedef struct {
    const rec_arg_t *key;
    int64_t expire_at;
    uint32_t hash_entries, hash_value;
    uint64_t intset_max;
    zs_limits_t zset; /* zset-max-listpack-* (Redis' defaults for older records) */
    uint64_t seed;
    const unsigned char *base; /* the payload argument, at log position base_lsn */
    uint64_t base_lsn;
} rst_t;

static idx_entry_t *read_string(rd_t *r, const rst_t *x)
{
    /* A plain string's bytes stay in the log, inside the record's payload
     * argument, as SET's value does (inline when short); a payload with no
     * log position (a large one read into RAM, D45) is copied. */
    rd_t peek = *r;
    uint64_t len;
    int enc;
    if (x->base_lsn && !rd_len(&peek, &len, &enc) && !enc && len <= (uint64_t)(peek.end - peek.p)) {
        rec_arg_t val = {0};
        val.ptr = peek.p;
        val.len = (uint32_t)len;
        if (val.len == len) {
            r->p = peek.p + len;
            return st_ent_new(x->key, &val, x->base_lsn + (uint64_t)(peek.p - x->base),
                              x->expire_at);
        }
    }
    unsigned char *v;
    size_t n;
    if (rd_string(r, &v, &n)) return NULL;
    idx_entry_t *e = st_ent_new_ram(x->key, v, n, x->expire_at);
    free(v);
    return e;
}

static int is_int(const unsigned char *m, size_t n)
{
    long long v;
    char canon[24];
    return n > 0 && n <= 20 && !str_to_ll((const char *)m, n, &v) && str_from_ll(canon, v) == n &&
           !memcmp(canon, m, n);
}

/* Add a member to a set being built, converting as set_add does. */
static int set_put(st_hash_t *s, const rst_t *x, const unsigned char *m, size_t n)
{
    if (st_hash_is_sorted(s) && !is_int(m, n)) st_hash_convert(s);
    if (st_hash_find(s, m, (uint32_t)n)) return -1; /* duplicate: bad data */
    st_hash_set(s, NULL, m, (uint32_t)n, NULL, 0, 0);
    if (st_hash_is_sorted(s) && st_hash_len(s) > x->intset_max) st_hash_convert(s);
    return 0;
}

static idx_entry_t *finish(st_hash_t *h, const rst_t *x, int ok)
{
    st_obj_t *o = (st_obj_t *)h;
    if (!ok || !st_hash_len(h)) {
        o->ops->free(o);
        return NULL;
    }
    return st_ent_new_obj(x->key, o, x->expire_at);
}

static idx_entry_t *read_set(rd_t *r, const rst_t *x)
{
    uint64_t n;
    int enc;
    if (rd_len(r, &n, &enc) || enc || !n) return NULL;
    st_hash_t *s = st_set_new(x->seed ^ 0x7F4A7C159E3779B9ull, 1);
    int ok = 1;
    for (uint64_t i = 0; ok && i < n; i++) {
        unsigned char *m;
        size_t mn;
        if (rd_string(r, &m, &mn)) {
            ok = 0;
            break;
        }
        if (mn > UINT32_MAX || set_put(s, x, m, mn)) ok = 0;
        free(m);
    }
    /* Redis 7.0 loads a large set as a table whatever its members. */
    if (ok && n > x->intset_max && !st_hash_is_table(s)) st_hash_convert(s);
    return finish(s, x, ok);
}

static idx_entry_t *read_intset(rd_t *r, const rst_t *x)
{
    unsigned char *b;
    size_t n;
    if (rd_string(r, &b, &n)) return NULL;
    st_hash_t *s = st_set_new(x->seed ^ 0x7F4A7C159E3779B9ull, 1);
    int ok = n >= 8;
    uint32_t w = 0, cnt = 0;
    if (ok) {
        for (int i = 0; i < 4; i++)
            w |= (uint32_t)b[i] << (8 * i);
        for (int i = 0; i < 4; i++)
            cnt |= (uint32_t)b[4 + i] << (8 * i);
        ok = (w == 2 || w == 4 || w == 8) && cnt && (uint64_t)cnt * w == n - 8;
    }
    long long prev = 0;
    for (uint32_t i = 0; ok && i < cnt; i++) {
        uint64_t u = 0;
        for (uint32_t k = 0; k < w; k++)
            u |= (uint64_t)b[8 + i * w + k] << (8 * k);
        long long v = w == 2 ? (int16_t)u : w == 4 ? (int32_t)u : (long long)u;
        if (i && v <= prev) ok = 0; /* an intset is sorted, no duplicates */
        prev = v;
        char t[24];
        size_t tn = str_from_ll(t, v);
        if (ok && set_put(s, x, (const unsigned char *)t, tn)) ok = 0;
    }
    free(b);
    return finish(s, x, ok);
}

static idx_entry_t *read_hash(rd_t *r, const rst_t *x)
{
    uint64_t n;
    int enc;
    if (rd_len(r, &n, &enc) || enc || !n) return NULL;
    st_hash_t *h = st_hash_new(x->seed ^ 0x5851F42D4C957F2Dull);
    int ok = 1;
    for (uint64_t i = 0; ok && i < n; i++) {
        unsigned char *f = NULL, *v = NULL;
        size_t fn, vn;
        if (rd_string(r, &f, &fn) || rd_string(r, &v, &vn) || fn > UINT32_MAX ||
            st_hash_find(h, f, (uint32_t)fn)) {
            ok = 0;
        } else {
            if (!st_hash_is_table(h) && (fn > x->hash_value || vn > x->hash_value))
                st_hash_convert(h);
            st_hash_set(h, NULL, f, (uint32_t)fn, v, vn, 0);
            if (!st_hash_is_table(h) && st_hash_len(h) > x->hash_entries) st_hash_convert(h);
        }
        free(f);
        free(v);
    }
    return finish(h, x, ok);
}

/* One listpack entry at p (within end): its text into t (integers) or a
 * pointer to its bytes. Returns the next entry, NULL on bad data. */
static const unsigned char *lp_next(const unsigned char *p, const unsigned char *end,
                                    const unsigned char **s, size_t *n, char *t)
{
    if (p >= end) return NULL;
    unsigned b = p[0];
    size_t h, len = 0;
    long long v = 0;
    int isint = 1;
    if (b < 0x80) {
        v = b, h = 1;
    } else if ((b & 0xC0) == 0x80) {
        isint = 0, h = 1, len = b & 63;
    } else if ((b & 0xE0) == 0xC0) {
        if (end - p < 2) return NULL;
        uint64_t u = (uint64_t)(b & 31) << 8 | p[1];
        v = u >= 4096 ? (long long)u - 8192 : (long long)u;
        h = 2;
    } else if ((b & 0xF0) == 0xE0) {
        if (end - p < 2) return NULL;
        isint = 0, h = 2, len = (size_t)(b & 15) << 8 | p[1];
    } else if (b == 0xF0) {
        if (end - p < 5) return NULL;
        isint = 0, h = 5;
        len = p[1] | (size_t)p[2] << 8 | (size_t)p[3] << 16 | (size_t)p[4] << 24;
    } else if (b >= 0xF1 && b <= 0xF4) {
        size_t w = b == 0xF1 ? 2 : b == 0xF2 ? 3 : b == 0xF3 ? 4 : 8;
        if ((size_t)(end - p) < 1 + w) return NULL;
        uint64_t u = 0;
        for (size_t i = 0; i < w; i++)
            u |= (uint64_t)p[1 + i] << (8 * i);
        if (w < 8 && (u >> (8 * w - 1)) & 1) u |= ~UINT64_C(0) << (8 * w);
        v = (long long)u, h = 1 + w;
    } else {
        return NULL;
    }
    size_t elen = h + len;
    if ((size_t)(end - p) < elen) return NULL;
    size_t bl = elen <= 127 ? 1 : elen < 16383 ? 2 : elen < 2097151 ? 3 : elen < 268435455 ? 4 : 5;
    if ((size_t)(end - p) < elen + bl) return NULL;
    if (isint) {
        *n = str_from_ll(t, v);
        *s = (const unsigned char *)t;
    } else {
        *s = p + h;
        *n = len;
    }
    return p + elen + bl;
}

/* A listpack's header says its length and its end byte is there. */
static int lp_frame_ok(const unsigned char *b, size_t n)
{
    return n >= 7 && b[n - 1] == 0xFF &&
           (b[0] | (size_t)b[1] << 8 | (size_t)b[2] << 16 | (size_t)b[3] << 24) == n;
}

static idx_entry_t *read_hash_listpack(rd_t *r, const rst_t *x)
{
    unsigned char *b;
    size_t n;
    if (rd_string(r, &b, &n)) return NULL;
    st_hash_t *h = st_hash_new(x->seed ^ 0x5851F42D4C957F2Dull);
    int ok = lp_frame_ok(b, n);
    const unsigned char *p = b + 6, *end = b + n - 1;
    while (ok && p < end) {
        const unsigned char *f, *v;
        size_t fn, vn;
        char ft[24], vt[24];
        p = lp_next(p, end, &f, &fn, ft);
        if (p) p = lp_next(p, end, &v, &vn, vt);
        if (!p || st_hash_find(h, f, (uint32_t)fn)) {
            ok = 0;
            break;
        }
        st_hash_set(h, NULL, f, (uint32_t)fn, v, vn, 0);
    }
    /* Redis 7.0 keeps a listpack it loads unless it has too many fields:
     * a long field or value does not convert it (a table hash's, read one
     * by one in read_hash, does), and neither does a later write's, which
     * looks only at what it writes. */
    if (ok && !st_hash_is_table(h) && st_hash_len(h) > x->hash_entries) st_hash_convert(h);
    free(b);
    return finish(h, x, ok);
}

static idx_entry_t *zset_finish(st_zset_t *z, const rst_t *x, int ok)
{
    if (!ok || !st_zset_len(z)) {
        st_zset_free(z);
        return NULL;
    }
    return st_ent_new_obj(x->key, (st_obj_t *)z, x->expire_at);
}

/* A score's text (a listpack entry): strtod's, NaN refused. */
static int score_of(const unsigned char *s, size_t n, double *out)
{
    rec_arg_t a = {0};
    a.ptr = s;
    a.len = (uint32_t)n;
    return n < 64 ? zs_parse_score(&a, out) : -1;
}

/* RDB_TYPE_ZSET_LISTPACK: member and score entries in order; a skiplist
 * when longer than zset-max-listpack-entries, as Redis loads it. */
static idx_entry_t *read_zset_listpack(rd_t *r, const rst_t *x)
{
    unsigned char *b;
    size_t n;
    if (rd_string(r, &b, &n)) return NULL;
    st_zset_t *z = st_zset_new(x->seed ^ 0x2D358DCCAA6C78A5ull);
    int ok = lp_frame_ok(b, n);
    const unsigned char *p = b + 6, *end = b + n - 1;
    while (ok && p < end) {
        const unsigned char *m, *sc;
        size_t mn, sn;
        char mt[24], st[24];
        double s;
        p = lp_next(p, end, &m, &mn, mt);
        if (p) p = lp_next(p, end, &sc, &sn, st);
        if (!p || mn > UINT32_MAX || score_of(sc, sn, &s) || !zs_put(NULL, z, m, (uint32_t)mn, s))
            ok = 0; /* bad data, or a member twice */
    }
    if (ok && st_zset_len(z) > x->zset.entries) st_zset_set_skiplist(z, 1);
    free(b);
    return zset_finish(z, x, ok);
}

/* RDB_TYPE_ZSET_2 (binary scores) and RDB_TYPE_ZSET (scores as text):
 * members in any order; a listpack when small enough, as Redis loads it. */
static int read_zset_any(rd_t *r, const rst_t *x, int binary, st_zset_t *z)
{
    uint64_t n, maxlen = 0;
    int enc;
    if (rd_len(r, &n, &enc) || enc || !n) return -1;
    st_zset_set_skiplist(z, 1);
    for (uint64_t i = 0; i < n; i++) {
        unsigned char *m;
        size_t mn;
        double s;
        if (rd_string(r, &m, &mn)) return -1;
        int bad = mn > UINT32_MAX;
        if (binary) {
            if (r->end - r->p < 8) {
                bad = 1;
            } else {
                uint64_t u = 0;
                for (int k = 0; k < 8; k++)
                    u |= (uint64_t)r->p[k] << (8 * k);
                memcpy(&s, &u, 8);
                r->p += 8;
            }
        } else if (r->p >= r->end) {
            bad = 1;
        } else {
            unsigned l = *r->p++;
            if (l == 255 || l == 254) {
                s = l == 254 ? INFINITY : -INFINITY;
            } else if (l == 253 || (size_t)(r->end - r->p) < l) {
                bad = 1; /* NaN, or truncated */
            } else {
                bad = score_of(r->p, l, &s) != 0;
                r->p += l;
            }
        }
        if (!bad && (s != s || !st_zset_set(NULL, z, m, (uint32_t)mn, s))) bad = 1;
        if (mn > maxlen) maxlen = mn;
        free(m);
        if (bad) return -1;
    }
    zs_choose_encoding(z, x->zset, maxlen);
    return 0;
}

static idx_entry_t *read_zset2(rd_t *r, const rst_t *x)
{
    st_zset_t *z = st_zset_new(x->seed ^ 0x2D358DCCAA6C78A5ull);
    return zset_finish(z, x, read_zset_any(r, x, 1, z) == 0);
}

static idx_entry_t *read_zset(rd_t *r, const rst_t *x)
{
    st_zset_t *z = st_zset_new(x->seed ^ 0x2D358DCCAA6C78A5ull);
    return zset_finish(z, x, read_zset_any(r, x, 0, z) == 0);
}

/* ---- lists: 18 (quicklist of listpacks), 14 (of ziplists), 10, 1 ---- */

/* An RDB string as bytes: pointing into the payload when stored plain
 * (*owned NULL), else decoded into *owned (LZF, integers). -1 on bad data. */
static int rd_blob(rd_t *r, const unsigned char **s, size_t *n, unsigned char **owned)
{
    rd_t peek = *r;
    uint64_t len;
    int enc;
    *owned = NULL;
    if (rd_len(&peek, &len, &enc)) return -1;
    if (!enc) {
        if (len > (uint64_t)(peek.end - peek.p)) return -1;
        *s = peek.p;
        *n = (size_t)len;
        r->p = peek.p + len;
        return 0;
    }
    if (rd_string(r, owned, n)) return -1;
    *s = *owned;
    return 0;
}

/* Append an element to l. Its bytes stay in the log when they are the
 * payload's own (a long element is an extent inside the record's payload
 * argument, as LPUSH's is); a long one decoded from an LZF-compressed node
 * is not in the log and is held in RAM (D40). Returns 0, -1. */
static int list_put(st_list_t *l, const rst_t *x, const unsigned char *s, size_t n, int in_payload)
{
    if (n > UINT32_MAX) return -1;
    idx_entry_t *e;
    if (in_payload || n <= STORE_INLINE_MAX) {
        uint64_t lsn = in_payload ? x->base_lsn + (uint64_t)(s - x->base) : 0;
        e = st_list_elem_new(s, (uint32_t)n, lsn);
    } else {
        rec_arg_t name = {(const unsigned char *)"", 0};
        e = st_ent_new_ram(&name, s, n, 0);
    }
    st_list_insert(NULL, l, st_list_len(l), e); /* stamped once stored (st_list_seal) */
    return 0;
}

static idx_entry_t *list_finish(st_list_t *l, const rst_t *x, int ok)
{
    st_obj_t *o = (st_obj_t *)l;
    if (!ok || !st_list_len(l)) { /* an empty list is bad data, as in Redis */
        o->ops->free(o);
        return NULL;
    }
    return st_ent_new_obj(x->key, o, x->expire_at);
}

/* lp_next or zl_next: one entry of a listpack or a ziplist. */
typedef const unsigned char *(*entry_next_fn)(const unsigned char *p, const unsigned char *end,
                                              const unsigned char **s, size_t *n, char *t);

/* The entries of p[0, end) appended to l; an integer entry's text is not
 * the payload's bytes. */
static int list_put_entries(st_list_t *l, const rst_t *x, const unsigned char *p,
                            const unsigned char *end, entry_next_fn next, int in_payload)
{
    while (p < end) {
        const unsigned char *v;
        size_t vn;
        char t[24];
        p = next(p, end, &v, &vn, t);
        if (!p || list_put(l, x, v, vn, in_payload && v != (const unsigned char *)t)) return -1;
    }
    return 0;
}

static int list_put_listpack(st_list_t *l, const rst_t *x, const unsigned char *b, size_t n,
                             int in_payload)
{
    if (!lp_frame_ok(b, n)) return -1;
    return list_put_entries(l, x, b + 6, b + n - 1, lp_next, in_payload);
}

/* One ziplist entry at p (before end): as lp_next. */
static const unsigned char *zl_next(const unsigned char *p, const unsigned char *end,
                                    const unsigned char **s, size_t *n, char *t)
{
    if (p >= end) return NULL;
    size_t at = p[0] == 0xFE ? 5 : 1; /* prevlen */
    if ((size_t)(end - p) < at + 1) return NULL;
    unsigned b = p[at];
    size_t len = 0, w = 0;
    long long v = 0;
    int isint = 1;
    switch (b >> 6) {
    case 0:
        isint = 0, len = b & 63, at += 1;
        break;
    case 1:
        if ((size_t)(end - p) < at + 2) return NULL;
        isint = 0, len = (size_t)(b & 63) << 8 | p[at + 1], at += 2;
        break;
    case 2:
        if (b != 0x80 || (size_t)(end - p) < at + 5) return NULL;
        isint = 0;
        len =
            (size_t)p[at + 1] << 24 | (size_t)p[at + 2] << 16 | (size_t)p[at + 3] << 8 | p[at + 4];
        at += 5;
        break;
    default:
        at += 1;
        if (b == 0xC0)
            w = 2;
        else if (b == 0xD0)
            w = 4;
        else if (b == 0xE0)
            w = 8;
        else if (b == 0xF0)
            w = 3;
        else if (b == 0xFE)
            w = 1;
        else if (b >= 0xF1 && b <= 0xFD)
            v = (long long)(b & 15) - 1;
        else
            return NULL;
        break;
    }
    if (isint) {
        if ((size_t)(end - p) < at + w) return NULL;
        uint64_t u = 0;
        for (size_t i = 0; i < w; i++)
            u |= (uint64_t)p[at + i] << (8 * i);
        if (w && w < 8 && (u >> (8 * w - 1)) & 1) u |= ~UINT64_C(0) << (8 * w);
        if (w) v = (long long)u;
        *n = str_from_ll(t, v);
        *s = (const unsigned char *)t;
        return p + at + w;
    }
    if ((size_t)(end - p) < at + len) return NULL;
    *s = p + at;
    *n = len;
    return p + at + len;
}

/* A ziplist's entries appended to l (header: bytes, tail offset, count). */
static int list_put_ziplist(st_list_t *l, const rst_t *x, const unsigned char *b, size_t n,
                            int in_payload)
{
    if (n < 11 || b[n - 1] != 0xFF ||
        (b[0] | (size_t)b[1] << 8 | (size_t)b[2] << 16 | (size_t)b[3] << 24) != n)
        return -1;
    return list_put_entries(l, x, b + 10, b + n - 1, zl_next, in_payload);
}

typedef int (*list_blob_fn)(st_list_t *l, const rst_t *x, const unsigned char *b, size_t n,
                            int in_payload);

/* One RDB string holding a listpack or ziplist, appended to l. */
static int list_put_blob(rd_t *r, st_list_t *l, const rst_t *x, list_blob_fn put)
{
    const unsigned char *b;
    size_t n;
    unsigned char *owned;
    if (rd_blob(r, &b, &n, &owned)) return -1;
    int rc = put(l, x, b, n, owned == NULL);
    free(owned);
    return rc;
}

/* One RDB string appended to l as an element (a PLAIN node, or an
 * element of a linked list). */
static int list_put_string(rd_t *r, st_list_t *l, const rst_t *x)
{
    const unsigned char *b;
    size_t n;
    unsigned char *owned;
    int rc = rd_blob(r, &b, &n, &owned) ? -1 : list_put(l, x, b, n, owned == NULL);
    free(owned);
    return rc;
}

/* RDB_TYPE_LIST_QUICKLIST_2 (containers: 1 plain element, 2 a listpack)
 * and RDB_TYPE_LIST_QUICKLIST (every node a ziplist). */
static idx_entry_t *read_quicklist_any(rd_t *r, const rst_t *x, int version2)
{
    uint64_t nodes;
    int enc;
    if (rd_len(r, &nodes, &enc) || enc || !nodes) return NULL;
    st_list_t *l = st_list_new();
    int ok = 1;
    for (uint64_t i = 0; ok && i < nodes; i++) {
        uint64_t container = 2;
        if (version2 && (rd_len(r, &container, &enc) || enc)) {
            ok = 0;
        } else if (container == 1) {
            ok = !list_put_string(r, l, x);
        } else if (container == 2) {
            ok = !list_put_blob(r, l, x, version2 ? list_put_listpack : list_put_ziplist);
        } else {
            ok = 0;
        }
    }
    return list_finish(l, x, ok);
}

static idx_entry_t *read_list_quicklist2(rd_t *r, const rst_t *x)
{
    return read_quicklist_any(r, x, 1);
}

static idx_entry_t *read_list_quicklist(rd_t *r, const rst_t *x)
{
    return read_quicklist_any(r, x, 0);
}

static idx_entry_t *read_list_ziplist(rd_t *r, const rst_t *x)
{
    st_list_t *l = st_list_new();
    return list_finish(l, x, list_put_blob(r, l, x, list_put_ziplist) == 0);
}

/* RDB_TYPE_LIST: the element count, then each element as an RDB string. */
static idx_entry_t *read_list(rd_t *r, const rst_t *x)
{
    uint64_t n;
    int enc;
    if (rd_len(r, &n, &enc) || enc || !n) return NULL;
    st_list_t *l = st_list_new();
    int ok = 1;
    for (uint64_t i = 0; ok && i < n; i++) {
        ok = !list_put_string(r, l, x);
    }
    return list_finish(l, x, ok);
}

/* Indexed by RDB type byte. */
typedef idx_entry_t *(*restore_fn)(rd_t *r, const rst_t *x);
static const restore_fn readers[ST_RDB_LIST_QUICKLIST_2 + 1] = {
    [ST_RDB_STRING] = read_string,
    [ST_RDB_LIST] = read_list,
    [ST_RDB_LIST_ZIPLIST] = read_list_ziplist,
    [ST_RDB_LIST_QUICKLIST] = read_list_quicklist,
    [ST_RDB_LIST_QUICKLIST_2] = read_list_quicklist2,
    [ST_RDB_SET] = read_set,
    [ST_RDB_ZSET] = read_zset,
    [ST_RDB_HASH] = read_hash,
    [ST_RDB_ZSET_2] = read_zset2,
    [ST_RDB_SET_INTSET] = read_intset,
    [ST_RDB_HASH_LISTPACK] = read_hash_listpack,
    [ST_RDB_ZSET_LISTPACK] = read_zset_listpack,
};

/* A restored key's access data: fresh, as Redis' new object's (REPLACE
 * keeps nothing of the old key's), then IDLETIME or FREQ, read at the
 * apply clock (the record's time on replay, so a replayed key has been
 * idle since the RESTORE plus IDLETIME). */
static void restore_access(store_ctx_t *ctx, const apply_args_t *a, uint32_t flags, idx_entry_t *e)
{
    st_access_new(&ctx->access, e, ctx->now);
    if (a->argc < 8 || a->argv[7].len != 8) return;
    int64_t v = cmd_get_i64(a->argv[7].ptr);
    st_access_restore(&ctx->access, e, flags & ST_RESTORE_FREQ ? v : -1,
                      flags & ST_RESTORE_IDLETIME ? v : -1, ctx->now);
}

/* CMD_RESTORE key payload flags expire_at hash_limits intset_limit
 * [zset_limits: records written before zsets lack it; Redis' defaults]
 * [access: IDLETIME's or FREQ's value, as the flags say; records written
 * before D52 lack it, and their keys get fresh access data]. */
void st_apply_restore(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0];
    const unsigned char *p = a->argv[1].ptr;
    size_t n = a->argv[1].len;
    uint32_t flags = cmd_get_u32(a->argv[2].ptr);
    uint64_t lim = (uint64_t)cmd_get_i64(a->argv[4].ptr);
    rst_t x = {key,
               cmd_get_i64(a->argv[3].ptr),
               (uint32_t)lim,
               (uint32_t)(lim >> 32),
               (uint64_t)cmd_get_i64(a->argv[5].ptr),
               a->argc > 6 ? zs_get_limits(&a->argv[6]) : (zs_limits_t){128, 64},
               a->db->ix.seed,
               p,
               st_arg_lsn(a, 1)};
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    if (slot && !(flags & ST_RESTORE_REPLACE)) {
        if (r) resp_error(r, "BUSYKEY Target key name already exists.");
        return;
    }
    if (flags & 2u) { /* the encoder's verdict on the TTL (frontend/cmd/t_dump.c) */
        if (r) resp_error(r, "ERR value is not an integer or out of range");
        return;
    }
    if (flags & 4u) {
        if (r) resp_error(r, "ERR Invalid TTL value, must be >= 0");
        return;
    }
    if (st_dump_verify(p, n)) {
        if (r) resp_error(r, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    rd_t rd = {p + 1, p + n - 10};
    idx_entry_t *e = NULL;
    if (p[0] <= ST_RDB_LIST_QUICKLIST_2 && readers[p[0]]) e = readers[p[0]](&rd, &x);
    if (!e) { /* trailing bytes are ignored, as Redis does */
        if (r) resp_error(r, "ERR Bad data format");
        return;
    }
    /* A list's chunks get their stamps now that a record made them (D63). */
    if (st_ent_type(e) == ST_LIST) st_list_seal(ctx, st_ent_list(e));
    if (st_ent_type(e) == ST_ZSET) st_zset_seal(ctx, st_ent_zset(e));
    st_ent_store(a->db, slot, e);
    restore_access(ctx, a, flags, e);
    if (x.expire_at && x.expire_at <= ctx->now) { /* already expired: only the delete */
        idx_entry_t **s = idx_find(&a->db->ix, key->ptr, key->len);
        if (s) st_remove(a->db, s);
    }
    st_key_changed(ctx, a, a->dbnum, key);
    if (r) resp_simple(r, "OK");
}
