/*
 * stream.c - the stream's structure (stream.h): an array of entry
 * pointers in ID order with the stream's counters. Store process only;
 * holds no state of its own.
 *
 * IDs only grow (XADD refuses an ID at or below the last one), so an
 * append is O(1) amortised, a lookup by ID O(log n), trimming from the
 * head O(removed) plus a move of the pointers. Fields and values are
 * copies in RAM (as a sorted set's members, D30), so count_log has no log
 * bytes to count. The operations table (st_stream_ops) is at the end.
 */
#include "stream.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "command.h"
#include "sgroup.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

struct st_stream {
    st_obj_t obj;
    st_sentry_t **v;
    uint64_t n, cap;
    uint64_t bytes; /* sum of the entries' allocations */
    st_stream_meta_t meta;
    st_sgroups_t groups; /* consumer groups (sgroup.c, D42) */
};

st_stream_t *st_stream_new(void)
{
    st_stream_t *s = st_xmalloc(sizeof(*s));
    memset(s, 0, sizeof(*s));
    s->obj.ops = &st_stream_ops;
    return s;
}

static uint64_t entry_alloc(const st_sentry_t *e)
{
    return sizeof(*e) + e->size;
}

void st_stream_free(st_stream_t *s)
{
    for (uint64_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    sg_free_all(&s->groups);
    free(s);
}

uint64_t st_stream_len(const st_stream_t *s)
{
    return s->n;
}

uint64_t st_stream_bytes(const st_stream_t *s)
{
    return sizeof(*s) + s->cap * sizeof(s->v[0]) + s->bytes + sg_bytes(&s->groups);
}

st_sgroups_t *st_stream_groups(st_stream_t *s)
{
    return &s->groups;
}

st_stream_meta_t *st_stream_meta(st_stream_t *s)
{
    return &s->meta;
}

const st_stream_meta_t *st_stream_meta_c(const st_stream_t *s)
{
    return &s->meta;
}

const st_sentry_t *st_stream_at(const st_stream_t *s, uint64_t i)
{
    return s->v[i];
}

uint64_t st_stream_lower(const st_stream_t *s, st_sid_t id)
{
    uint64_t lo = 0, hi = s->n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (st_sid_cmp(s->v[mid]->id, id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void push(st_stream_t *s, st_sentry_t *e)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4;
        s->v = st_xrealloc(s->v, s->cap * sizeof(s->v[0]));
    }
    s->v[s->n++] = e;
    s->bytes += entry_alloc(e);
}

static st_sentry_t *entry_new(st_sid_t id, uint32_t npairs, uint32_t size)
{
    st_sentry_t *e = st_xmalloc(sizeof(*e) + (size ? size : 1));
    e->id = id;
    e->npairs = npairs;
    e->size = size;
    return e;
}

void st_stream_append(st_stream_t *s, st_sid_t id, const rec_arg_t *pairs, uint32_t n)
{
    uint32_t size = 0;
    for (uint32_t i = 0; i < n; i++)
        size += 4 + pairs[i].len;
    st_sentry_t *e = entry_new(id, n / 2, size);
    unsigned char *p = e->data;
    for (uint32_t i = 0; i < n; i++) {
        cmd_put_u32(p, pairs[i].len);
        memcpy(p + 4, pairs[i].ptr, pairs[i].len);
        p += 4 + pairs[i].len;
    }
    push(s, e);
    s->meta.last_id = id;
    s->meta.entries_added++;
}

void st_stream_remove(st_stream_t *s, uint64_t i)
{
    s->bytes -= entry_alloc(s->v[i]);
    free(s->v[i]);
    memmove(s->v + i, s->v + i + 1, (s->n - i - 1) * sizeof(s->v[0]));
    s->n--;
}

void st_stream_drop_head(st_stream_t *s, uint64_t n)
{
    if (n > s->n) n = s->n;
    for (uint64_t i = 0; i < n; i++) {
        s->bytes -= entry_alloc(s->v[i]);
        free(s->v[i]);
    }
    memmove(s->v, s->v + n, (s->n - n) * sizeof(s->v[0]));
    s->n -= n;
}

void st_sentry_item(const st_sentry_t *e, uint32_t k, const unsigned char **p, uint32_t *len)
{
    const unsigned char *q = e->data;
    for (uint32_t i = 0; i < k; i++)
        q += 4 + cmd_get_u32(q);
    *len = cmd_get_u32(q);
    *p = q + 4;
}

/* ---- the operations table (object.h) ----
 * Checkpoint stream: u8 version, the meta (last ID, max deleted ID: 16
 * bytes each; entries added: 8), u64 count, then per entry: its ID (16),
 * u32 pairs, u32 size, its data. Version 2 adds the consumer groups
 * after the entries (sgroup.c); version 1 (no groups) is still read. */

#define SCKPT_VERSION 2
#define SCKPT_HEAD    (1 + 16 + 16 + 8 + 8)

static void put_sid(unsigned char *p, st_sid_t id)
{
    cmd_put_i64(p, (int64_t)id.ms);
    cmd_put_i64(p + 8, (int64_t)id.seq);
}

static st_sid_t get_sid(const unsigned char *p)
{
    return (st_sid_t){(uint64_t)cmd_get_i64(p), (uint64_t)cmd_get_i64(p + 8)};
}

static st_obj_t *sobj_dup(const st_obj_t *o)
{
    const st_stream_t *s = (const st_stream_t *)o;
    st_stream_t *c = st_stream_new();
    for (uint64_t i = 0; i < s->n; i++) {
        st_sentry_t *e = entry_new(s->v[i]->id, s->v[i]->npairs, s->v[i]->size);
        memcpy(e->data, s->v[i]->data, s->v[i]->size);
        push(c, e);
    }
    c->meta = s->meta;
    sg_dup(&c->groups, &s->groups);
    return (st_obj_t *)c;
}

static void sobj_free(st_obj_t *o)
{
    st_stream_free((st_stream_t *)o);
}

/* Entries are in ID order in every copy, so one running hash serves. */
static int sobj_digest(store_ctx_t *ctx, const st_obj_t *o, uint64_t *out)
{
    (void)ctx;
    const st_stream_t *s = (const st_stream_t *)o;
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    unsigned char m[SCKPT_HEAD];
    put_sid(m, s->meta.last_id);
    put_sid(m + 16, s->meta.max_deleted);
    cmd_put_i64(m + 32, (int64_t)s->meta.entries_added);
    cmd_put_i64(m + 40, (int64_t)s->n);
    XXH3_64bits_update(&st, m, 48);
    for (uint64_t i = 0; i < s->n; i++) {
        unsigned char id[16];
        put_sid(id, s->v[i]->id);
        XXH3_64bits_update(&st, id, sizeof(id));
        XXH3_64bits_update(&st, s->v[i]->data, s->v[i]->size);
    }
    if (s->groups.n) sg_digest(&s->groups, &st); /* a stream without groups keeps its digest */
    *out = XXH3_64bits_digest(&st);
    return 0;
}

static uint64_t sobj_mem(const st_obj_t *o)
{
    return st_stream_bytes((const st_stream_t *)o);
}

static void sobj_count_log(const st_obj_t *o, st_live_t *t, int sign)
{
    (void)o, (void)t, (void)sign; /* pairs are in RAM: no extents */
}

static const char *sobj_encoding(const st_obj_t *o)
{
    (void)o;
    return "stream";
}

static void sobj_ckpt_write(const st_obj_t *o, buf_t *out)
{
    const st_stream_t *s = (const st_stream_t *)o;
    unsigned char h[SCKPT_HEAD];
    h[0] = SCKPT_VERSION;
    put_sid(h + 1, s->meta.last_id);
    put_sid(h + 17, s->meta.max_deleted);
    cmd_put_i64(h + 33, (int64_t)s->meta.entries_added);
    cmd_put_i64(h + 41, (int64_t)s->n);
    buf_append(out, h, sizeof(h));
    for (uint64_t i = 0; i < s->n; i++) {
        unsigned char b[24];
        put_sid(b, s->v[i]->id);
        cmd_put_u32(b + 16, s->v[i]->npairs);
        cmd_put_u32(b + 20, s->v[i]->size);
        buf_append(out, b, sizeof(b));
        buf_append(out, s->v[i]->data, s->v[i]->size);
    }
    sg_ckpt_write(&s->groups, out);
}

/* 1 when data[0, size) is npairs * 2 length-prefixed items exactly. */
static int items_ok(const unsigned char *p, uint32_t size, uint32_t npairs)
{
    uint64_t at = 0;
    for (uint64_t k = 0; k < 2ull * npairs; k++) {
        if (size - at < 4) return 0;
        uint32_t n = cmd_get_u32(p + at);
        if (size - at - 4 < n) return 0;
        at += 4ull + n;
    }
    return at == size;
}

static long sobj_ckpt_read(const unsigned char *p, size_t len, st_obj_t **out)
{
    if (len < SCKPT_HEAD || (p[0] != 1 && p[0] != SCKPT_VERSION)) return -1;
    st_stream_t *s = st_stream_new();
    s->meta.last_id = get_sid(p + 1);
    s->meta.max_deleted = get_sid(p + 17);
    s->meta.entries_added = (uint64_t)cmd_get_i64(p + 33);
    uint64_t count = (uint64_t)cmd_get_i64(p + 41);
    size_t at = SCKPT_HEAD;
    for (uint64_t i = 0; i < count; i++) {
        if (len - at < 24) goto bad;
        st_sid_t id = get_sid(p + at);
        uint32_t npairs = cmd_get_u32(p + at + 16), size = cmd_get_u32(p + at + 20);
        at += 24;
        if (len - at < size || !items_ok(p + at, size, npairs)) goto bad;
        if (s->n && st_sid_cmp(s->v[s->n - 1]->id, id) >= 0) goto bad; /* out of order */
        st_sentry_t *e = entry_new(id, npairs, size);
        memcpy(e->data, p + at, size);
        push(s, e);
        at += size;
    }
    if (p[0] == SCKPT_VERSION) {
        long used = sg_ckpt_read(&s->groups, p + at, len - at);
        if (used < 0) goto bad;
        at += (size_t)used;
    }
    *out = (st_obj_t *)s;
    return (long)at;
bad:
    st_stream_free(s);
    return -1;
}

const st_type_ops_t st_stream_ops = {
    .type = ST_STREAM,
    .name = "stream",
    .free = sobj_free,
    .dup = sobj_dup,
    .digest = sobj_digest,
    .mem_usage = sobj_mem,
    .count_log = sobj_count_log,
    .encoding = sobj_encoding,
    .ckpt_write = sobj_ckpt_write,
    .ckpt_read = sobj_ckpt_read,
};
