/*
 * zobj.c - the sorted set's operations table (object.h): what entry.c,
 * COPY, store_digest and checkpoints call for a zset (core/zset.c holds
 * the structure, types/t_zset.c the commands). Members live in RAM, so
 * count_log has no log bytes to count.
 *
 * Checkpoint stream: u8 version, u8 skiplist, u64 seed, u32 count, then
 * per member in order: u32 length, its bytes, u64 the score's IEEE bits.
 */
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "zset.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define ZCKPT_VERSION 1

static uint64_t bits_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof(u));
    return u;
}

static double double_of(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof(d));
    return d;
}

static void zobj_free(st_obj_t *o)
{
    st_zset_free((st_zset_t *)o);
}

static st_obj_t *zobj_dup(const st_obj_t *o)
{
    const st_zset_t *z = (const st_zset_t *)o;
    st_zset_t *c = st_zset_new(st_zset_seed(z));
    st_zset_set_skiplist(c, st_zset_is_skiplist(z));
    for (st_znode_t *x = st_zset_at(z, 0); x; x = st_znode_next(x)) {
        uint32_t n;
        const char *m = st_znode_member(x, &n);
        st_zset_set(c, m, n, st_znode_score(x));
    }
    return (st_obj_t *)c;
}

/* A sum of each member's hash with its score: independent of order. */
static int zobj_digest(store_ctx_t *ctx, const st_obj_t *o, uint64_t *out)
{
    (void)ctx;
    const st_zset_t *z = (const st_zset_t *)o;
    uint64_t sum = 0;
    for (st_znode_t *x = st_zset_at(z, 0); x; x = st_znode_next(x)) {
        uint32_t n;
        const char *m = st_znode_member(x, &n);
        unsigned char sc[8];
        cmd_put_i64(sc, (int64_t)bits_of(st_znode_score(x)));
        XXH3_state_t st;
        XXH3_64bits_reset(&st);
        XXH3_64bits_update(&st, &n, sizeof(n));
        XXH3_64bits_update(&st, m, n);
        XXH3_64bits_update(&st, sc, sizeof(sc));
        sum += XXH3_64bits_digest(&st);
    }
    *out = sum ^ ((uint64_t)st_zset_len(z) * 0xC2B2AE3D27D4EB4Full);
    return 0;
}

static uint64_t zobj_mem(const st_obj_t *o)
{
    return st_zset_bytes((const st_zset_t *)o);
}

static void zobj_count_log(const st_obj_t *o, st_live_t *t, int sign)
{
    (void)o, (void)t, (void)sign; /* members are in RAM: no extents */
}

static const char *zobj_encoding(const st_obj_t *o)
{
    return st_zset_is_skiplist((const st_zset_t *)o) ? "skiplist" : "listpack";
}

static void zobj_ckpt_write(const st_obj_t *o, buf_t *out)
{
    const st_zset_t *z = (const st_zset_t *)o;
    unsigned char hdr[14];
    hdr[0] = ZCKPT_VERSION;
    hdr[1] = (unsigned char)st_zset_is_skiplist(z);
    cmd_put_i64(hdr + 2, (int64_t)st_zset_seed(z));
    cmd_put_u32(hdr + 10, st_zset_len(z));
    buf_append(out, hdr, sizeof(hdr));
    for (st_znode_t *x = st_zset_at(z, 0); x; x = st_znode_next(x)) {
        uint32_t n;
        const char *m = st_znode_member(x, &n);
        unsigned char b[8];
        cmd_put_u32(b, n);
        buf_append(out, b, 4);
        buf_append(out, m, n);
        cmd_put_i64(b, (int64_t)bits_of(st_znode_score(x)));
        buf_append(out, b, 8);
    }
}

static long zobj_ckpt_read(const unsigned char *p, size_t len, st_obj_t **out)
{
    if (len < 14 || p[0] != ZCKPT_VERSION || p[1] > 1) return -1;
    st_zset_t *z = st_zset_new((uint64_t)cmd_get_i64(p + 2));
    st_zset_set_skiplist(z, p[1]);
    uint32_t count = cmd_get_u32(p + 10);
    size_t at = 14;
    for (uint32_t i = 0; i < count; i++) {
        if (len - at < 4) goto bad;
        uint32_t n = cmd_get_u32(p + at);
        at += 4;
        if (len - at < (uint64_t)n + 8) goto bad;
        double s = double_of((uint64_t)cmd_get_i64(p + at + n));
        if (s != s || !st_zset_set(z, p + at, n, s)) goto bad; /* NaN or a repeat */
        at += (size_t)n + 8;
    }
    *out = (st_obj_t *)z;
    return (long)at;
bad:
    st_zset_free(z);
    return -1;
}

const st_type_ops_t st_zset_ops = {
    .type = ST_ZSET,
    .name = "zset",
    .free = zobj_free,
    .dup = zobj_dup,
    .digest = zobj_digest,
    .mem_usage = zobj_mem,
    .count_log = zobj_count_log,
    .encoding = zobj_encoding,
    .ckpt_write = zobj_ckpt_write,
    .ckpt_read = zobj_ckpt_read,
};
