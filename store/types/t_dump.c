/*
 * t_dump.c - DUMP (issue 13, D34): a key's value in Redis 7.0's DUMP
 * payload format, so a value taken from AtticDB RESTOREs into a real
 * redis-server: one RDB object (type byte, encoded value), the RDB version
 * (10) as 2 little-endian bytes, then the CRC64 (crc64-jones, reflected,
 * no final xor) of everything before it, 8 little-endian bytes.
 *
 * Forms written: strings as RDB_TYPE_STRING (a canonical integer that fits
 * 32 bits as Redis' integer encoding, anything else plain); hashes as
 * RDB_TYPE_HASH_LISTPACK while listpack-encoded, RDB_TYPE_HASH once a
 * table; sets as RDB_TYPE_SET_INTSET while intset-encoded, RDB_TYPE_SET
 * otherwise; sorted sets as RDB_TYPE_ZSET_LISTPACK or RDB_TYPE_ZSET_2;
 * lists as RDB_TYPE_LIST_QUICKLIST_2 (listpack nodes split as Redis'
 * quicklist splits them, D40).
 *
 * LZF (D57): every string the payload holds (a value, a member, a field,
 * and each listpack, intset or quicklist node written as one string) is
 * written as Redis 7.0's rdbSaveRawString writes it: the integer form,
 * else, under rdbcompression yes (ctx->rdb_compression) and when longer
 * than 20 bytes, LZF if liblzf fits it in 4 bytes less than the string,
 * else plain. liblzf is the compressor Redis bundles (3.6, same settings),
 * so the bytes are Redis'. A list's middle nodes under list-compress-depth
 * are LZF whatever rdbcompression says, as Redis holds them compressed.
 *
 * New types add one writer to dump_writers[] below, indexed by enum
 * st_type.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers.h"
#include "resp.h"
#include "store/core/entry.h"
#include "store/core/hash.h"
#include "store/core/list.h"
#include "store/core/object.h"
#include "store/core/value.h"
#include "store/core/zset.h"
#include "store/dump.h"
#include "strutil.h"

#ifdef HAVE_LIBLZF_LZF_H
#include <liblzf/lzf.h>
#else
#include <lzf.h>
#endif

/* ---- CRC64 (Jones polynomial, reflected) ---- */

static uint64_t crc_table[256];

static void crc_init(void)
{
    const uint64_t poly = UINT64_C(0x95ac9329ac4bc9b5);
    for (unsigned i = 0; i < 256; i++) {
        uint64_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ poly : c >> 1;
        crc_table[i] = c;
    }
}

uint64_t st_crc64(uint64_t crc, const unsigned char *p, size_t n)
{
    if (!crc_table[1]) crc_init();
    for (size_t i = 0; i < n; i++)
        crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return crc;
}

/* ---- RDB primitives ---- */

void st_rdb_len(buf_t *b, uint64_t len)
{
    unsigned char t[9];
    if (len < 64) {
        t[0] = (unsigned char)len;
        buf_append(b, t, 1);
    } else if (len < 16384) {
        t[0] = (unsigned char)(0x40 | (len >> 8));
        t[1] = (unsigned char)len;
        buf_append(b, t, 2);
    } else if (len <= UINT32_MAX) {
        t[0] = 0x80;
        for (int i = 0; i < 4; i++)
            t[1 + i] = (unsigned char)(len >> (24 - 8 * i));
        buf_append(b, t, 5);
    } else {
        t[0] = 0x81;
        for (int i = 0; i < 8; i++)
            t[1 + i] = (unsigned char)(len >> (56 - 8 * i));
        buf_append(b, t, 9);
    }
}

/* ---- LZF, where Redis 7.0 compresses ---- */

#define RDB_ENC_LZF      0xC3 /* (RDB_ENCVAL << 6) | RDB_ENC_LZF */
#define RDB_LZF_MORE     20   /* rdbSaveRawString tries LZF on strings longer than this */
#define RDB_LZF_SAVING   4    /* rdbSaveLzfStringObject: out of at most len - 4 bytes */
#define LZF_HEADER_ROOM  19   /* the encoding byte and two 9-byte lengths */
#define QL_COMPRESS_MIN  48   /* quicklist.c holds a node compressed from 48 bytes */
#define QL_COMPRESS_GAIN 8    /* ... when LZF saves more than 8 of them */

/* Append p[0, n) LZF-compressed into at most cap bytes, as Redis'
 * rdbSaveLzfBlob frames it (0xC3, compressed length, original length,
 * bytes), when the compression fits (the rule is lzf_compress's own:
 * 0 = did not fit). Returns the compressed length, 0 with b unchanged
 * when it did not fit; liblzf takes unsigned int lengths, so a string of
 * 4 GiB or more is never compressed here (D57). */
static size_t lzf_blob(buf_t *b, const unsigned char *p, size_t n, size_t cap)
{
    if (n > UINT_MAX || cap == 0) return 0;
    if (cap > UINT_MAX) cap = UINT_MAX;
    /* Compressed straight into b past the largest header, then moved
     * down behind the real one: no second buffer. */
    size_t at = b->len;
    buf_reserve(b, LZF_HEADER_ROOM + cap);
    unsigned char *z = (unsigned char *)b->data + at + LZF_HEADER_ROOM;
    unsigned zn = lzf_compress(p, (unsigned)n, z, (unsigned)cap);
    if (!zn) return 0;
    unsigned char t = RDB_ENC_LZF;
    buf_append(b, &t, 1);
    st_rdb_len(b, zn);
    st_rdb_len(b, n);
    memmove(b->data + b->len, z, zn);
    b->len += zn;
    return zn;
}

/* A string as Redis' rdbSaveRawString writes it: a canonical integer of
 * at most 11 bytes that fits 32 bits in its integer encoding (0xC0 int8,
 * 0xC1 int16, 0xC2 int32, little-endian); else, when compress
 * (rdbcompression) and longer than 20 bytes, LZF if it fits in n - 4
 * bytes; else its length and bytes. */
void st_rdb_string(buf_t *b, const unsigned char *p, size_t n, int compress)
{
    long long v;
    if (n > 0 && n <= 11 && !str_to_ll((const char *)p, n, &v)) {
        char canon[24];
        size_t cn = str_from_ll(canon, v);
        if (cn == n && !memcmp(canon, p, n) && v >= INT32_MIN && v <= INT32_MAX) {
            unsigned char t[5];
            size_t w;
            if (v >= INT8_MIN && v <= INT8_MAX) {
                t[0] = 0xC0;
                w = 1;
            } else if (v >= INT16_MIN && v <= INT16_MAX) {
                t[0] = 0xC1;
                w = 2;
            } else {
                t[0] = 0xC2;
                w = 4;
            }
            uint32_t u = (uint32_t)(int32_t)v;
            for (size_t i = 0; i < w; i++)
                t[1 + i] = (unsigned char)(u >> (8 * i));
            buf_append(b, t, 1 + w);
            return;
        }
    }
    if (compress && n > RDB_LZF_MORE && lzf_blob(b, p, n, n - RDB_LZF_SAVING)) return;
    st_rdb_len(b, n);
    buf_append(b, p, n);
}

/* The value of string entry (or hash field) e, read back from the log,
 * written as an RDB string. Returns 0, -1 on an I/O error. */
static int rdb_value(store_ctx_t *ctx, idx_entry_t *e, buf_t *b)
{
    uint64_t n = st_ent_vlen(e);
    unsigned char *tmp = malloc(n ? n : 1);
    if (!tmp) return -1;
    int rc = st_read_value(ctx, e, tmp);
    if (!rc) st_rdb_string(b, tmp, n, ctx->rdb_compression);
    free(tmp);
    return rc;
}

/* ---- listpack (Redis 7.0's, for RDB_TYPE_HASH_LISTPACK) ---- */

static void lp_backlen(buf_t *b, size_t l)
{
    unsigned char t[5];
    size_t n = 0;
    if (l <= 127) {
        t[n++] = (unsigned char)l;
    } else if (l < 16383) {
        t[n++] = (unsigned char)(l >> 7);
        t[n++] = (unsigned char)((l & 127) | 128);
    } else if (l < 2097151) {
        t[n++] = (unsigned char)(l >> 14);
        t[n++] = (unsigned char)(((l >> 7) & 127) | 128);
        t[n++] = (unsigned char)((l & 127) | 128);
    } else if (l < 268435455) {
        t[n++] = (unsigned char)(l >> 21);
        t[n++] = (unsigned char)(((l >> 14) & 127) | 128);
        t[n++] = (unsigned char)(((l >> 7) & 127) | 128);
        t[n++] = (unsigned char)((l & 127) | 128);
    } else {
        t[n++] = (unsigned char)(l >> 28);
        t[n++] = (unsigned char)(((l >> 21) & 127) | 128);
        t[n++] = (unsigned char)(((l >> 14) & 127) | 128);
        t[n++] = (unsigned char)(((l >> 7) & 127) | 128);
        t[n++] = (unsigned char)((l & 127) | 128);
    }
    buf_append(b, t, n);
}

/* One listpack entry for p[0, n): an integer form when p is a canonical
 * 64-bit integer of at most 20 bytes (as lpAppend), else a string form. */
void st_lp_entry(buf_t *b, const unsigned char *p, size_t n)
{
    unsigned char t[9];
    size_t h = 0;
    long long v;
    char canon[24];
    if (n > 0 && n <= 20 && !str_to_ll((const char *)p, n, &v) && str_from_ll(canon, v) == n &&
        !memcmp(canon, p, n)) {
        uint64_t u = (uint64_t)v;
        size_t w;
        if (v >= 0 && v <= 127) {
            t[h++] = (unsigned char)v;
            w = 0;
        } else if (v >= -4096 && v <= 4095) {
            uint64_t x = u & 0x1fff;
            t[h++] = (unsigned char)(0xC0 | (x >> 8));
            t[h++] = (unsigned char)x;
            w = 0;
        } else if (v >= INT16_MIN && v <= INT16_MAX) {
            t[h++] = 0xF1;
            w = 2;
        } else if (v >= -8388608 && v <= 8388607) {
            t[h++] = 0xF2;
            w = 3;
        } else if (v >= INT32_MIN && v <= INT32_MAX) {
            t[h++] = 0xF3;
            w = 4;
        } else {
            t[h++] = 0xF4;
            w = 8;
        }
        for (size_t i = 0; i < w; i++)
            t[h++] = (unsigned char)(u >> (8 * i));
        buf_append(b, t, h);
        lp_backlen(b, h);
        return;
    }
    if (n < 64) {
        t[h++] = (unsigned char)(0x80 | n);
    } else if (n < 4096) {
        t[h++] = (unsigned char)(0xE0 | (n >> 8));
        t[h++] = (unsigned char)n;
    } else {
        t[h++] = 0xF0;
        for (int i = 0; i < 4; i++)
            t[h++] = (unsigned char)(n >> (8 * i));
    }
    buf_append(b, t, h);
    buf_append(b, p, n);
    lp_backlen(b, h + n);
}

/* ---- per-type writers ---- */

typedef struct {
    store_ctx_t *ctx;
    buf_t *out;
    int err;
    int with_value; /* hash: field then value */
    int listpack;   /* write listpack entries, not RDB strings */
} dump_walk_t;

static int walk_field(void *arg, idx_entry_t *e)
{
    dump_walk_t *w = arg;
    if (w->listpack)
        st_lp_entry(w->out, e->data, e->klen);
    else
        st_rdb_string(w->out, e->data, e->klen, w->ctx->rdb_compression);
    if (!w->with_value) return 0;
    if (w->listpack) {
        uint64_t n = st_ent_vlen(e);
        unsigned char *tmp = malloc(n ? n : 1);
        if (!tmp || st_read_value(w->ctx, e, tmp)) {
            free(tmp);
            w->err = 1;
            return 1;
        }
        st_lp_entry(w->out, tmp, n);
        free(tmp);
        return 0;
    }
    if (rdb_value(w->ctx, e, w->out)) {
        w->err = 1;
        return 1;
    }
    return 0;
}

static int dump_string(store_ctx_t *ctx, idx_entry_t *e, buf_t *out)
{
    unsigned char t = ST_RDB_STRING;
    buf_append(out, &t, 1);
    return rdb_value(ctx, e, out);
}

/* A listpack's frame: lp_begin, the entries, then lp_close with their
 * count, which writes the end byte and the header. */
static void lp_begin(buf_t *lp)
{
    unsigned char hdr[6] = {0};
    buf_init(lp);
    buf_append(lp, hdr, 6);
}

static void lp_close(buf_t *lp, uint64_t count)
{
    unsigned char end = 0xFF;
    buf_append(lp, &end, 1);
    uint32_t total = (uint32_t)lp->len;
    uint16_t n16 = count < 65535 ? (uint16_t)count : 65535;
    for (int i = 0; i < 4; i++)
        lp->data[i] = (unsigned char)(total >> (8 * i));
    lp->data[4] = (unsigned char)n16;
    lp->data[5] = (unsigned char)(n16 >> 8);
}

/* lp_close, then the listpack as one RDB string (rdbSaveRawString: LZF
 * when it pays, D57), and lp freed. */
static void lp_end(store_ctx_t *ctx, buf_t *lp, uint64_t count, buf_t *out)
{
    lp_close(lp, count);
    st_rdb_string(out, (const unsigned char *)lp->data, lp->len, ctx->rdb_compression);
    buf_free(lp);
}

/* A listpack of the hash's fields (and values), as one RDB string. */
static int dump_listpack(store_ctx_t *ctx, st_hash_t *h, int with_value, buf_t *out)
{
    buf_t lp;
    lp_begin(&lp);
    dump_walk_t w = {ctx, &lp, 0, with_value, 1};
    st_hash_foreach_once(h, walk_field, &w);
    if (w.err) {
        buf_free(&lp);
        return -1;
    }
    lp_end(ctx, &lp, (uint64_t)st_hash_len(h) * (with_value ? 2 : 1), out);
    return 0;
}

/* A sorted set: RDB_TYPE_ZSET_LISTPACK (member, score text, in order) while
 * listpack-encoded, RDB_TYPE_ZSET_2 (members from the highest score down,
 * as Redis saves them, each with its score's 8 bytes) once a skiplist. */
static int dump_zset(store_ctx_t *ctx, idx_entry_t *e, buf_t *out)
{
    st_zset_t *z = st_ent_zset(e);
    unsigned char t = st_zset_is_skiplist(z) ? ST_RDB_ZSET_2 : ST_RDB_ZSET_LISTPACK;
    uint32_t len = st_zset_len(z);
    st_zset_iter_t it;
    st_zel_t x;
    buf_append(out, &t, 1);
    if (t == ST_RDB_ZSET_LISTPACK) {
        buf_t lp;
        lp_begin(&lp);
        st_zset_iter_init(&it, z, 0, len, 0);
        while (st_zset_next(&it, &x)) {
            double s = x.score;
            char text[32];
            int tn = isinf(s) ? snprintf(text, sizeof(text), "%s", s > 0 ? "inf" : "-inf")
                              : snprintf(text, sizeof(text), "%.17g", s);
            st_lp_entry(&lp, (const unsigned char *)x.m, x.n);
            st_lp_entry(&lp, (const unsigned char *)text, (size_t)tn);
        }
        st_zset_iter_free(&it);
        lp_end(ctx, &lp, (uint64_t)len * 2, out);
        return 0;
    }
    st_rdb_len(out, len);
    /* From the highest score down, as Redis saves them. */
    st_zset_iter_init(&it, z, len ? len - 1 : 0, len, 1);
    while (st_zset_next(&it, &x)) {
        st_rdb_string(out, (const unsigned char *)x.m, x.n, ctx->rdb_compression);
        uint64_t u;
        memcpy(&u, &x.score, 8);
        unsigned char b[8];
        for (int i = 0; i < 8; i++)
            b[i] = (unsigned char)(u >> (8 * i));
        buf_append(out, b, 8);
    }
    st_zset_iter_free(&it);
    return 0;
}

/* ---- lists: RDB_TYPE_LIST_QUICKLIST_2, nodes split as Redis' quicklist ---- */

/* Nodes are split under list-max-listpack-size as CONFIG SET left it
 * (ctx->list_fill; Redis' default -2 is 8 KB per listpack). */
#define LIST_SAFETY_LIMIT    8192u
#define LIST_SIZE_ESTIMATE   8u                  /* Redis' SIZE_ESTIMATE_OVERHEAD */
#define LIST_PLAIN_THRESHOLD (UINT64_C(1) << 30) /* Redis' packed_threshold */
#define QL_CONTAINER_PLAIN   1u
#define QL_CONTAINER_PACKED  2u

/* Redis 7.0.15's _quicklistNodeAllowInsert (with quicklistNodeExceedsLimit):
 * may an element of sz bytes join a node whose listpack is lp_bytes long
 * and holds count entries? It counts 8 bytes of overhead for any element
 * (SIZE_ESTIMATE_OVERHEAD), not what listpack would take: measured
 * against redis-server, test_cmds_dump short_elements_fill_nodes_as_redis. */
static int ql_node_allows(size_t lp_bytes, uint32_t count, uint64_t sz, int fill)
{
    static const size_t optimization_level[] = {4096, 8192, 16384, 32768, 65536};
    const size_t levels = sizeof(optimization_level) / sizeof(*optimization_level);
    uint64_t new_sz = lp_bytes + sz + LIST_SIZE_ESTIMATE;
    if (fill < 0) {
        size_t level = (size_t)(-fill) - 1;
        return new_sz <= optimization_level[level < levels ? level : levels - 1];
    }
    return new_sz <= LIST_SAFETY_LIMIT && (int64_t)count + 1 <= (fill ? fill : 1);
}

/* A list's nodes while DUMP makes them: their bytes one after the other
 * in raw, and each one's container and length in spans (ql_span_t[]):
 * which nodes Redis holds compressed depends on their count (ql_write). */
typedef struct {
    uint64_t len;
    unsigned container;
} ql_span_t;

typedef struct {
    buf_t raw, spans;
} ql_nodes_t;

static void ql_add(ql_nodes_t *q, unsigned container, const void *p, size_t n)
{
    ql_span_t s = {n, container};
    buf_append(&q->raw, p, n);
    buf_append(&q->spans, &s, sizeof(s));
}

/* Close the packed node being built (if any) into q. */
static void ql_flush(ql_nodes_t *q, buf_t *lp, uint32_t *count)
{
    if (!*count) return;
    lp_close(lp, *count);
    ql_add(q, QL_CONTAINER_PACKED, lp->data, lp->len);
    *count = 0;
    buf_free(lp);
    lp_begin(lp);
}

/* Under list-compress-depth d, Redis 7.0 holds every node of a list but
 * the d at each end LZF-compressed in RAM (quicklist.c's
 * __quicklistCompress, the depth clamped to 16 bits), when the node has
 * at least 48 bytes and LZF (out of at most the node's length) saves more
 * than 8 of them; rdbSaveObject writes such a node as its LZF blob,
 * whatever rdbcompression says, and any other one as rdbSaveRawString. */
static void ql_write(store_ctx_t *ctx, const ql_nodes_t *q, buf_t *out)
{
    uint64_t nnodes = q->spans.len / sizeof(ql_span_t);
    int64_t depth = ctx->list_compress_depth < 0       ? 0
                    : ctx->list_compress_depth > 65535 ? 65535
                                                       : ctx->list_compress_depth;
    const unsigned char *p = (const unsigned char *)q->raw.data;
    st_rdb_len(out, nnodes);
    for (uint64_t i = 0; i < nnodes; i++) {
        ql_span_t s;
        memcpy(&s, q->spans.data + i * sizeof(s), sizeof(s));
        st_rdb_len(out, s.container);
        size_t at = out->len, zn = 0;
        int held_compressed = depth > 0 && i >= (uint64_t)depth && i + (uint64_t)depth < nnodes &&
                              s.len >= QL_COMPRESS_MIN;
        if (held_compressed) {
            zn = lzf_blob(out, p, s.len, s.len);
            if (zn && zn + QL_COMPRESS_GAIN >= s.len) out->len = at, zn = 0;
        }
        if (!zn) st_rdb_string(out, p, s.len, ctx->rdb_compression);
        p += s.len;
    }
}

/* A list: its node count, then each node's container (2 PACKED: a
 * listpack; 1 PLAIN: one element of 1 GB or more) and bytes, the nodes
 * filled from the head as RPUSH fills Redis' (D40), compressed where
 * Redis' would be (D57). */
static int dump_list(store_ctx_t *ctx, idx_entry_t *e, buf_t *out)
{
    st_list_t *l = st_ent_list(e);
    unsigned char t = ST_RDB_LIST_QUICKLIST_2;
    buf_append(out, &t, 1);
    ql_nodes_t q;
    buf_t lp;
    buf_init(&q.raw);
    buf_init(&q.spans);
    lp_begin(&lp);
    uint32_t count = 0;
    int rc = 0;
    /* Redis clamps a list's fill to -5..32767 when it makes the list. */
    int fill = ctx->list_fill < -5 ? -5 : ctx->list_fill > 32767 ? 32767 : (int)ctx->list_fill;
    st_list_iter_t it;
    st_lelem_t x;
    unsigned char *tmp = NULL;
    size_t cap = 0;
    st_list_iter_init(&it, l, 0, st_list_len(l), 0);
    while (!rc && st_list_next(&it, &x)) {
        uint64_t n = st_lelem_len(&x);
        const unsigned char *v;
        if (st_lelem_bytes(ctx, &x, &v, &tmp, &cap)) {
            rc = -1;
        } else if (n >= LIST_PLAIN_THRESHOLD) {
            ql_flush(&q, &lp, &count);
            ql_add(&q, QL_CONTAINER_PLAIN, v, n);
        } else {
            if (count && !ql_node_allows(lp.len + 1, count, n, fill)) ql_flush(&q, &lp, &count);
            st_lp_entry(&lp, v, n);
            count++;
        }
    }
    st_list_iter_free(&it);
    free(tmp);
    ql_flush(&q, &lp, &count);
    buf_free(&lp);
    if (!rc) ql_write(ctx, &q, out);
    buf_free(&q.raw);
    buf_free(&q.spans);
    return rc;
}

static int dump_hash(store_ctx_t *ctx, idx_entry_t *e, buf_t *out)
{
    st_hash_t *h = st_ent_hash(e);
    unsigned char t;
    if (!st_hash_is_table(h)) {
        t = ST_RDB_HASH_LISTPACK;
        buf_append(out, &t, 1);
        return dump_listpack(ctx, h, 1, out);
    }
    t = ST_RDB_HASH;
    buf_append(out, &t, 1);
    st_rdb_len(out, st_hash_len(h));
    dump_walk_t w = {ctx, out, 0, 1, 0};
    st_hash_foreach_once(h, walk_field, &w);
    return w.err ? -1 : 0;
}

typedef struct {
    buf_t *out;
    unsigned width;
} intset_walk_t;

static int walk_int_width(void *arg, idx_entry_t *e)
{
    intset_walk_t *w = arg;
    long long v = 0;
    (void)str_to_ll((const char *)e->data, e->klen, &v);
    unsigned need = (v >= INT16_MIN && v <= INT16_MAX)   ? 2
                    : (v >= INT32_MIN && v <= INT32_MAX) ? 4
                                                         : 8;
    if (need > w->width) w->width = need;
    return 0;
}

static int walk_int_put(void *arg, idx_entry_t *e)
{
    intset_walk_t *w = arg;
    long long v = 0;
    (void)str_to_ll((const char *)e->data, e->klen, &v);
    unsigned char t[8];
    uint64_t u = (uint64_t)v;
    for (unsigned i = 0; i < w->width; i++)
        t[i] = (unsigned char)(u >> (8 * i));
    buf_append(w->out, t, w->width);
    return 0;
}

static int dump_set(store_ctx_t *ctx, idx_entry_t *e, buf_t *out)
{
    st_hash_t *h = st_ent_hash(e);
    unsigned char t;
    if (st_hash_is_sorted(h)) { /* intset: members in integer order */
        t = ST_RDB_SET_INTSET;
        buf_append(out, &t, 1);
        buf_t is;
        buf_init(&is);
        intset_walk_t w = {&is, 2};
        st_hash_foreach(h, walk_int_width, &w);
        uint32_t n = st_hash_len(h);
        unsigned char hdr[8];
        for (int i = 0; i < 4; i++)
            hdr[i] = (unsigned char)(w.width >> (8 * i));
        for (int i = 0; i < 4; i++)
            hdr[4 + i] = (unsigned char)(n >> (8 * i));
        buf_append(&is, hdr, 8);
        st_hash_foreach(h, walk_int_put, &w);
        st_rdb_string(out, (const unsigned char *)is.data, is.len, ctx->rdb_compression);
        buf_free(&is);
        return 0;
    }
    t = ST_RDB_SET;
    buf_append(out, &t, 1);
    st_rdb_len(out, st_hash_len(h));
    dump_walk_t w = {ctx, out, 0, 0, 0};
    st_hash_foreach_once(h, walk_field, &w);
    return w.err ? -1 : 0;
}

/* Indexed by enum st_type; NULL = not dumpable (streams). */
typedef int (*dump_fn)(store_ctx_t *ctx, idx_entry_t *e, buf_t *out);
static const dump_fn dump_writers[ST__NTYPES] = {
    [ST_STRING] = dump_string, [ST_HASH] = dump_hash, [ST_SET] = dump_set,
    [ST_ZSET] = dump_zset,     [ST_LIST] = dump_list,
};

int st_dump_payload(store_ctx_t *ctx, idx_entry_t *e, buf_t *out)
{
    unsigned type = st_ent_type(e);
    if (type >= ST__NTYPES || !dump_writers[type]) return -2;
    size_t start = out->len;
    if (dump_writers[type](ctx, e, out)) {
        out->len = start;
        return -1;
    }
    unsigned char tail[10];
    tail[0] = ST_RDB_VERSION & 0xff;
    tail[1] = ST_RDB_VERSION >> 8;
    buf_append(out, tail, 2);
    uint64_t crc = st_crc64(0, (const unsigned char *)out->data + start, out->len - start);
    for (int i = 0; i < 8; i++)
        tail[i] = (unsigned char)(crc >> (8 * i));
    buf_append(out, tail, 8);
    return 0;
}

/* DUMP key: the payload as a bulk string, nil when the key is missing. */
void st_read_dump(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    if (!slot) {
        resp_null(r);
        return;
    }
    buf_t p;
    buf_init(&p);
    int rc = st_dump_payload(ctx, *slot, &p);
    if (rc == -2)
        resp_error(r, "ERR DUMP of this type is not supported yet");
    else if (rc)
        resp_error(r, "ERR I/O error reading the value");
    else
        resp_bulk(r, p.data, p.len);
    buf_free(&p);
}
