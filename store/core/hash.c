/*
 * hash.c - the hash type's data structure (hash.h) and its operations
 * table: what entry.c, COPY, store_digest and checkpoints call for a hash.
 *
 * Store process only (and tests and tools); single-threaded. A crash loses
 * nothing: hashes are rebuilt by replaying the log (or read from a
 * checkpoint, ckpt_read).
 *
 * Design. Fields are idx_entry_t's laid out as string entries (hash.h), so
 * a field's value is kept as a string's is: up to STORE_INLINE_MAX bytes
 * inline, a longer value written by a record as one extent (lsn, length)
 * into the log (never copied into RAM), a computed one (HINCRBYFLOAT's
 * longest texts) as bytes held in RAM. Two encodings, as Redis' names:
 *   listpack   an array of field pointers in insertion order, searched
 *              linearly: small hashes (at most hash-max-listpack-entries
 *              fields, none longer than hash-max-listpack-value), which
 *              replies list in the order Redis' listpack does.
 *   hashtable  the fields in an index of their own (core/index.c: chained,
 *              incremental rehash, SCAN cursors that survive resizes).
 * Which one a hash has is state (a hash that became a table stays one, as
 * in Redis), decided by the type handlers from the limits the records
 * carry (types/t_hash.c), so replay makes the same choice.
 *
 * A set in the hashtable encoding keeps its members in `vec` as well (D62):
 * appended when added, the last one moved into a removed member's place,
 * each member's place in its entry's aux word (entry.h: members have the
 * room for it; they have no TTL).
 * That order is a function of the log (every path that adds members walks
 * its sources in their vec order, a checkpoint writes and reads it), so
 * SPOP can pick by position in O(1) and replay and a checkpoint read back
 * pick the same. st_hash_foreach walks it; SSCAN walks the table.
 *
 * RAM per field (hashtable): the field's entry, 26 + name + 12 bytes (a
 * value in the log) or 26 + name + value (inline), rounded to the
 * allocator's class, plus one 8-byte bucket per 1 to 2 fields.
 *
 * Invariant: h->bytes is the requested size of this struct, the array or
 * the table's buckets, and every field entry with what it holds; the type
 * handlers add its changes to ctx->entry_bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "command.h"
#include "hash-internal.h"
#include "index.h"
#include "log.h"
#include "pieces.h"
#include "strutil.h"
#include "value.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* ---- fields ---- */

/* The index's free callback (arg is the hash). */
static void field_free_cb(void *arg, idx_entry_t *f)
{
    st_hash_field_free(arg, f);
}

/* A copy of field f: its value's extent shared, RAM bytes copied. */
static idx_entry_t *field_dup(idx_entry_t *f)
{
    rec_arg_t name = {f->data, f->klen};
    return st_ent_dup(f, &name);
}

static int field_is(const idx_entry_t *f, const void *name, uint32_t n)
{
    return f->klen == n && memcmp(f->data, name, n) == 0;
}

/* A member's place in an ordered table's vec (banner). */
static uint32_t pos_of(const idx_entry_t *f)
{
    return (uint32_t)st_ent_aux(f);
}

static void put_at(st_hash_t *h, uint32_t i, idx_entry_t *f)
{
    h->vec[i] = f;
    st_ent_set_aux(f, i);
}

/* Room in vec for one more entry. */
static void vec_grow(st_hash_t *h)
{
    if (h->n < h->cap) return;
    uint32_t cap = h->cap ? h->cap * 2 : 4;
    h->vec = st_xrealloc(h->vec, (size_t)cap * sizeof(*h->vec));
    h->bytes += (uint64_t)(cap - h->cap) * sizeof(*h->vec);
    h->cap = cap;
}

/* ---- the hash ---- */

static st_hash_t *new_of(const st_type_ops_t *ops, uint64_t seed)
{
    st_hash_t *h = st_xmalloc(sizeof(*h));
    memset(h, 0, sizeof(*h));
    h->obj.ops = ops;
    h->seed = seed;
    h->bytes = sizeof(*h);
    return h;
}

st_hash_t *st_hash_new(uint64_t seed)
{
    return new_of(&st_hash_ops, seed);
}

st_hash_t *st_set_new(uint64_t seed, int intset)
{
    st_hash_t *h = new_of(&st_set_ops, seed);
    h->sorted = intset;
    return h;
}

int st_hash_is_sorted(const st_hash_t *h)
{
    return h->sorted;
}

/* The integer a sorted (intset) member spells. */
static long long member_int(const idx_entry_t *f)
{
    long long v = 0;
    str_to_ll((const char *)f->data, f->klen, &v);
    return v;
}

uint32_t st_hash_len(const st_hash_t *h)
{
    return h->n;
}

int st_hash_is_table(const st_hash_t *h)
{
    return h->table;
}

uint64_t st_hash_bytes(const st_hash_t *h)
{
    return h->bytes;
}

void st_hash_convert(st_hash_t *h)
{
    if (h->table) return;
    if (idx_init(&h->ix, h->seed, field_free_cb, h)) abort(); /* as alloc.h */
    h->table = 1;
    h->sorted = 0;
    h->bytes += idx_table_bytes(&h->ix);
    for (uint32_t i = 0; i < h->n; i++) {
        uint64_t before = idx_table_bytes(&h->ix);
        idx_insert(&h->ix, h->vec[i]);
        st_hash_table_bytes(h, before);
    }
    if (h->obj.ops == &st_set_ops) { /* vec stays, in the order it had */
        h->ordered = 1;
        for (uint32_t i = 0; i < h->n; i++)
            put_at(h, i, h->vec[i]);
        return;
    }
    h->bytes -= (uint64_t)h->cap * sizeof(*h->vec);
    free(h->vec);
    h->vec = NULL;
    h->cap = 0;
}

static int64_t vec_find(const st_hash_t *h, const void *f, uint32_t n)
{
    for (uint32_t i = 0; i < h->n; i++)
        if (field_is(h->vec[i], f, n)) return i;
    return -1;
}

idx_entry_t *st_hash_find(st_hash_t *h, const void *f, uint32_t n)
{
    if (h->pg) return st_pg_find(h, f, n);
    if (h->table) {
        idx_entry_t **slot = idx_find(&h->ix, f, n);
        return slot ? *slot : NULL;
    }
    int64_t i = vec_find(h, f, n);
    return i < 0 ? NULL : h->vec[i];
}

int st_hash_peek(st_hash_t *h, const void *f, uint32_t n, unsigned char *val, uint32_t cap,
                 uint32_t *vlen)
{
    if (h->pg) return st_pg_peek(h, f, n, val, cap, vlen);
    idx_entry_t *e = st_hash_find(h, f, n);
    return e ? st_hash_field_copy(e, val, cap, vlen) : 0;
}

int st_hash_set(st_hash_t *h, st_live_t *live, const void *f, uint32_t n, const unsigned char *v,
                uint64_t vlen, uint64_t vlsn)
{
    if (h->pg) return st_pg_set(h, live, f, n, v, vlen, vlsn);
    idx_entry_t *nf = st_hash_field_new(f, n, v, vlen, vlsn);
    h->bytes += st_hash_field_bytes(nf);
    if (live) st_ent_live_add(live, nf, 1);
    if (h->table) {
        idx_entry_t **slot = idx_find(&h->ix, f, n);
        if (slot) {
            idx_entry_t *old = *slot;
            idx_relink(slot, old, nf);
            if (h->ordered) put_at(h, pos_of(old), nf);
            if (live) st_ent_live_add(live, old, -1);
            st_hash_field_free(h, old);
            return 0;
        }
        uint64_t before = idx_table_bytes(&h->ix);
        idx_insert(&h->ix, nf);
        st_hash_table_bytes(h, before);
        if (h->ordered) {
            vec_grow(h);
            put_at(h, h->n, nf);
        }
        h->n++;
        return 1;
    }
    int64_t i = vec_find(h, f, n);
    if (i >= 0) {
        if (live) st_ent_live_add(live, h->vec[i], -1);
        st_hash_field_free(h, h->vec[i]);
        h->vec[i] = nf;
        return 0;
    }
    vec_grow(h);
    uint32_t at = h->n;
    if (h->sorted) { /* intset: in integer order */
        long long iv = member_int(nf);
        at = 0;
        while (at < h->n && member_int(h->vec[at]) < iv)
            at++;
        memmove(&h->vec[at + 1], &h->vec[at], (size_t)(h->n - at) * sizeof(*h->vec));
    }
    h->vec[at] = nf;
    h->n++;
    return 1;
}

int st_hash_del(st_hash_t *h, st_live_t *live, const void *f, uint32_t n)
{
    if (h->pg) return st_pg_del(h, live, f, n);
    if (h->table) {
        idx_entry_t **slot = idx_find(&h->ix, f, n);
        if (!slot) return 0;
        if (live) st_ent_live_add(live, *slot, -1);
        if (h->ordered) { /* the last member takes its place */
            uint32_t i = pos_of(*slot);
            put_at(h, i, h->vec[h->n - 1]);
        }
        idx_remove(&h->ix, slot); /* field_free_cb */
        h->n--;
        return 1;
    }
    int64_t i = vec_find(h, f, n);
    if (i < 0) return 0;
    if (live) st_ent_live_add(live, h->vec[i], -1);
    st_hash_field_free(h, h->vec[i]);
    memmove(&h->vec[i], &h->vec[i + 1], (size_t)(h->n - (uint32_t)i - 1) * sizeof(*h->vec));
    h->n--;
    return 1;
}

int st_hash_foreach(st_hash_t *h, idx_visit_fn fn, void *arg)
{
    if (h->pg) return st_pg_foreach(h, fn, arg, 0);
    if (h->table && !h->ordered) return idx_foreach(&h->ix, fn, arg);
    for (uint32_t i = 0; i < h->n; i++) {
        int rc = fn(arg, h->vec[i]);
        if (rc) return rc;
    }
    return 0;
}

int st_hash_foreach_once(st_hash_t *h, idx_visit_fn fn, void *arg)
{
    return h->pg ? st_pg_foreach(h, fn, arg, 1) : st_hash_foreach(h, fn, arg);
}

typedef struct scan_wrap {
    idx_visit_fn fn;
    void *arg;
} scan_wrap_t;

static int scan_keep(void *arg, idx_entry_t *f)
{
    scan_wrap_t *w = arg;
    w->fn(w->arg, f);
    return 0; /* never remove */
}

uint64_t st_hash_scan(st_hash_t *h, uint64_t cursor, idx_visit_fn fn, void *arg)
{
    if (h->pg) return st_pg_scan(h, cursor, fn, arg);
    if (!h->table) {
        for (uint32_t i = 0; i < h->n; i++)
            fn(arg, h->vec[i]);
        return 0;
    }
    scan_wrap_t w = {fn, arg};
    uint64_t before = idx_table_bytes(&h->ix);
    uint64_t next = idx_scan(&h->ix, cursor, scan_keep, &w);
    st_hash_table_bytes(h, before);
    return next;
}

static uint64_t rand_next(uint64_t *s)
{
    uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

idx_entry_t *st_hash_random(st_hash_t *h, uint64_t *rng)
{
    if (!h->n) return NULL;
    if (h->pg) return st_pg_at(h, (uint32_t)(rand_next(rng) % h->n));
    if (h->table && !h->ordered) return idx_random_fair(&h->ix, rng);
    return h->vec[rand_next(rng) % h->n];
}

idx_entry_t *st_hash_at(st_hash_t *h, uint32_t i)
{
    if (h->pg) return st_pg_at(h, i);
    return (!h->table || h->ordered) && i < h->n ? h->vec[i] : NULL;
}

/* ---- the operations table ---- */

static void hash_free(st_obj_t *o)
{
    st_hash_t *h = (st_hash_t *)o;
    if (h->pg) st_pg_free(h);
    if (h->table) {
        idx_destroy(&h->ix);
        free(h->vec); /* an ordered table's: its entries went with the table */
    } else {
        for (uint32_t i = 0; i < h->n; i++)
            st_hash_field_free(h, h->vec[i]);
        free(h->vec);
    }
    free(h);
}

static void add_field(st_hash_t *h, idx_entry_t *f)
{
    h->bytes += st_hash_field_bytes(f);
    if (h->table) {
        uint64_t before = idx_table_bytes(&h->ix);
        idx_insert(&h->ix, f);
        st_hash_table_bytes(h, before);
    }
    if (!h->table || h->ordered) {
        vec_grow(h);
        if (h->ordered)
            put_at(h, h->n, f);
        else
            h->vec[h->n] = f;
    }
    h->n++;
}

static int dup_visit(void *arg, idx_entry_t *f)
{
    add_field(arg, field_dup(f));
    return 0;
}

static st_obj_t *hash_dup(const st_obj_t *o)
{
    st_hash_t *h = (st_hash_t *)o;
    st_hash_t *c = new_of(h->obj.ops, h->seed);
    c->sorted = h->sorted;
    if (h->table) st_hash_convert(c);
    if (h->pg) {
        c->ordered = 0; /* a copy of a paged set keeps its page order */
        c->bytes -= (uint64_t)c->cap * sizeof(*c->vec);
        free(c->vec);
        c->vec = NULL;
        c->cap = 0;
        st_pg_dup(h, c);
        return &c->obj;
    }
    st_hash_foreach(h, dup_visit, c);
    return &c->obj;
}

typedef struct digest_arg {
    store_ctx_t *ctx;
    uint64_t sum;
    unsigned char *buf;
    size_t cap;
} digest_arg_t;

static int digest_field(void *arg, idx_entry_t *f)
{
    digest_arg_t *d = arg;
    uint64_t vlen = st_ent_vlen(f);
    if (vlen > d->cap) {
        d->buf = st_xrealloc(d->buf, (size_t)vlen);
        d->cap = (size_t)vlen;
    }
    if (st_read_value(d->ctx, f, d->buf)) return -1;
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, &f->klen, sizeof(f->klen));
    XXH3_64bits_update(&st, f->data, f->klen);
    XXH3_64bits_update(&st, &vlen, sizeof(vlen));
    XXH3_64bits_update(&st, d->buf, (size_t)vlen);
    d->sum += XXH3_64bits_digest(&st); /* a sum: independent of order */
    return 0;
}

static int hash_digest(store_ctx_t *ctx, const st_obj_t *o, uint64_t *out)
{
    st_hash_t *h = (st_hash_t *)o;
    digest_arg_t d = {ctx, 0, NULL, 0};
    int rc = st_hash_foreach_once(h, digest_field, &d);
    free(d.buf);
    *out = d.sum ^ ((uint64_t)h->n * 0x9E3779B97F4A7C15ull);
    return rc ? -1 : 0;
}

static uint64_t hash_mem(const st_obj_t *o)
{
    return ((const st_hash_t *)o)->bytes;
}

typedef struct count_arg {
    st_live_t *t;
    int sign;
} count_arg_t;

static int count_field(void *arg, idx_entry_t *f)
{
    count_arg_t *a = arg;
    st_ent_live_add(a->t, f, a->sign);
    return 0;
}

/* Every field's extent (sets have none: members hold no values). */
static void hash_count_log(const st_obj_t *o, st_live_t *t, int sign)
{
    if (((const st_hash_t *)o)->pg) {
        st_pg_count_log((const st_hash_t *)o, t, sign);
        return;
    }
    count_arg_t a = {t, sign};
    st_hash_foreach((st_hash_t *)o, count_field, &a);
}

static const char *hash_encoding(const st_obj_t *o)
{
    return ((const st_hash_t *)o)->table ? "hashtable" : "listpack";
}

static const char *set_encoding(const st_obj_t *o)
{
    return ((const st_hash_t *)o)->table ? "hashtable" : "intset";
}

/*
 * Checkpoint stream (all integers little-endian):
 *   u8 version (1, or 2 when paged), u8 encoding (0 listpack or intset,
 *   1 hashtable, 2 paged), u64 seed, u32 field count, then per field:
 *     u32 name length, name bytes,
 *     u8 0, u32 value length, value bytes     (inline or held in RAM)
 *     u8 1, u64 lsn, u32 value length         (a log extent)
 * in insertion order for a listpack hash (its replies' order). A paged
 * hash (D60, version 2) has, after the header, its paged seed and object
 * id (u64 each), u32 ranges and per range u64 lo, u64 page LSN, u32 page
 * length, u32 image count, u32 live count; then u32 overlay entries, each
 * a field as above followed by u8 flags and u64 stamp. Version 1 streams
 * read as before.
 */
#define CKPT_VERSION       1
#define CKPT_VERSION_PAGED 2

static void put_u32(buf_t *b, uint32_t v)
{
    unsigned char p[4];
    cmd_put_u32(p, v);
    buf_append(b, p, 4);
}

static void put_u64(buf_t *b, uint64_t v)
{
    unsigned char p[8];
    cmd_put_i64(p, (int64_t)v);
    buf_append(b, p, 8);
}

typedef struct ckpt_arg {
    buf_t *out;
    int paged; /* each field followed by its overlay flags and stamp */
} ckpt_arg_t;

static int ckpt_field(void *arg, idx_entry_t *f)
{
    ckpt_arg_t *a = arg;
    buf_t *b = a->out;
    put_u32(b, f->klen);
    buf_append(b, f->data, f->klen);
    if (st_ent_kind(f) == VK_EXTENT) {
        uint64_t lsn;
        uint32_t len;
        st_ent_get_ext1(f, &lsn, &len);
        buf_append(b, "\1", 1);
        put_u64(b, lsn);
        put_u32(b, len);
    } else {
        /* Inline, or bytes held in RAM (a piece list of RAM blocks only:
         * fields are never APPENDed to), read without I/O. */
        uint64_t vlen = st_ent_vlen(f);
        unsigned char *tmp = st_xmalloc(vlen ? (size_t)vlen : 1);
        if (st_read_value(NULL, f, tmp)) abort(); /* RAM only: cannot fail */
        buf_append(b, "\0", 1);
        put_u32(b, (uint32_t)vlen);
        buf_append(b, tmp, (size_t)vlen);
        free(tmp);
    }
    if (a->paged) {
        unsigned char fl = (unsigned char)idx_access(f);
        buf_append(b, &fl, 1);
        put_u64(b, (uint64_t)st_ent_aux(f));
    }
    return 0;
}

static void hash_ckpt_write(const st_obj_t *o, buf_t *out)
{
    st_hash_t *h = (st_hash_t *)o;
    unsigned char hdr[2] = {h->pg ? CKPT_VERSION_PAGED : CKPT_VERSION,
                            (unsigned char)(h->pg ? 2 : h->table)};
    buf_append(out, hdr, 2);
    put_u64(out, h->seed);
    put_u32(out, h->n);
    ckpt_arg_t a = {out, h->pg != NULL};
    if (!h->pg) {
        st_hash_foreach(h, ckpt_field, &a);
        return;
    }
    const st_paged_t *p = h->pg;
    put_u64(out, p->seed);
    put_u64(out, p->objid);
    put_u32(out, p->ndir);
    for (uint32_t i = 0; i < p->ndir; i++) {
        put_u64(out, p->dir[i].lo);
        put_u64(out, p->dir[i].lsn);
        put_u32(out, p->dir[i].len);
        put_u32(out, p->dir[i].count);
        put_u32(out, p->dir[i].live);
    }
    put_u32(out, (uint32_t)idx_count(&h->ix));
    idx_foreach(&h->ix, ckpt_field, &a);
}

/* One field of a checkpoint stream at p[*at, len), as ckpt_field wrote
 * it: the new entry, or NULL when the bytes are not one. */
static idx_entry_t *ckpt_read_field(const unsigned char *p, size_t len, size_t *at)
{
#define NEED(k)                                                                                    \
    do {                                                                                           \
        if (len - *at < (size_t)(k)) return NULL;                                                  \
    } while (0)
    NEED(4);
    uint32_t flen = cmd_get_u32(p + *at);
    *at += 4;
    NEED((uint64_t)flen + 1);
    const unsigned char *name = p + *at;
    *at += flen;
    unsigned kind = p[(*at)++];
    if (kind == 1) {
        NEED(12);
        uint64_t lsn = (uint64_t)cmd_get_i64(p + *at);
        uint32_t vlen = cmd_get_u32(p + *at + 8);
        *at += 12;
        rec_arg_t nm = {name, flen}, val = {NULL, vlen};
        if (vlen <= STORE_INLINE_MAX || lsn == 0) return NULL; /* never written so */
        return st_ent_new(&nm, &val, lsn, ST_AUX_ROOM);
    }
    if (kind != 0) return NULL;
    NEED(4);
    uint32_t vlen = cmd_get_u32(p + *at);
    *at += 4;
    NEED(vlen);
    idx_entry_t *f = st_hash_field_new(name, flen, p + *at, vlen, 0);
    *at += vlen;
    return f;
#undef NEED
}

/* A paged hash's part of a version 2 stream, into h (a table, empty). */
static int ckpt_read_paged(st_hash_t *h, const unsigned char *p, size_t len, size_t *at)
{
    if (len - *at < 20) return -1;
    uint64_t seed = (uint64_t)cmd_get_i64(p + *at), objid = (uint64_t)cmd_get_i64(p + *at + 8);
    uint32_t ndir = cmd_get_u32(p + *at + 16);
    *at += 20;
    if (!ndir || (len - *at) / 28 < ndir) return -1;
    st_pgdir_t *dir = st_xmalloc((size_t)ndir * sizeof(*dir));
    for (uint32_t i = 0; i < ndir; i++, *at += 28) {
        const unsigned char *q = p + *at;
        dir[i] = (st_pgdir_t){.lo = (uint64_t)cmd_get_i64(q),
                              .lsn = (uint64_t)cmd_get_i64(q + 8),
                              .len = cmd_get_u32(q + 16),
                              .count = cmd_get_u32(q + 20),
                              .live = cmd_get_u32(q + 24)};
    }
    if (st_pg_adopt(h, seed, objid, dir, ndir)) return -1; /* takes dir either way */
    if (len - *at < 4) return -1;
    uint32_t novl = cmd_get_u32(p + *at);
    *at += 4;
    for (uint32_t i = 0; i < novl; i++) {
        idx_entry_t *f = ckpt_read_field(p, len, at);
        if (!f) return -1;
        if (len - *at < 9 || idx_find(&h->ix, f->data, f->klen)) {
            free(f);
            return -1;
        }
        unsigned fl = p[*at];
        int64_t stamp = cmd_get_i64(p + *at + 1);
        *at += 9;
        h->bytes += st_hash_field_bytes(f);
        uint64_t before = idx_table_bytes(&h->ix);
        idx_insert(&h->ix, f);
        st_hash_table_bytes(h, before);
        idx_set_access(f, fl); /* after idx_insert, which sets meta */
        st_ent_set_aux(f, stamp);
    }
    return st_pg_loaded(h);
}

static long ckpt_read_of(const st_type_ops_t *ops, const unsigned char *p, size_t len,
                         st_obj_t **out)
{
    if (len < 14) return -1;
    int paged = p[0] == CKPT_VERSION_PAGED && p[1] == 2;
    if (!paged && (p[0] != CKPT_VERSION || p[1] > 1)) return -1;
    st_hash_t *h = new_of(ops, (uint64_t)cmd_get_i64(p + 2));
    h->sorted = ops == &st_set_ops && !p[1];
    if (p[1]) st_hash_convert(h);
    uint32_t n = cmd_get_u32(p + 10);
    size_t at = 14;
    if (paged) {
        if (h->ordered) { /* a paged set has its page order, not vec's */
            h->ordered = 0;
            h->bytes -= (uint64_t)h->cap * sizeof(*h->vec);
            free(h->vec);
            h->vec = NULL;
            h->cap = 0;
        }
        if (ckpt_read_paged(h, p, len, &at) || h->n != n) goto bad;
        *out = &h->obj;
        return (long)at;
    }
    for (uint32_t i = 0; i < n; i++) {
        idx_entry_t *f = ckpt_read_field(p, len, &at);
        if (!f) goto bad;
        if (st_hash_find(h, f->data, f->klen)) { /* a field twice: not ours */
            free(f);
            goto bad;
        }
        add_field(h, f);
    }
    *out = &h->obj;
    return (long)at;
bad:
    hash_free(&h->obj);
    return -1;
}

static long hash_ckpt_read(const unsigned char *p, size_t len, st_obj_t **out)
{
    return ckpt_read_of(&st_hash_ops, p, len, out);
}

static long set_ckpt_read(const unsigned char *p, size_t len, st_obj_t **out)
{
    return ckpt_read_of(&st_set_ops, p, len, out);
}

static void hash_bind(st_obj_t *o, store_ctx_t *ctx)
{
    st_pg_bind((st_hash_t *)o, ctx);
}

const st_type_ops_t st_set_ops = {
    .type = ST_SET,
    .name = "set",
    .free = hash_free,
    .dup = hash_dup,
    .digest = hash_digest,
    .mem_usage = hash_mem,
    .count_log = hash_count_log,
    .encoding = set_encoding,
    .ckpt_write = hash_ckpt_write,
    .ckpt_read = set_ckpt_read,
    .bind = hash_bind,
};

const st_type_ops_t st_hash_ops = {
    .type = ST_HASH,
    .name = "hash",
    .free = hash_free,
    .dup = hash_dup,
    .digest = hash_digest,
    .mem_usage = hash_mem,
    .count_log = hash_count_log,
    .encoding = hash_encoding,
    .ckpt_write = hash_ckpt_write,
    .ckpt_read = hash_ckpt_read,
    .bind = hash_bind,
};
