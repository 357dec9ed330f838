/*
 * list.c - the list type's data structure (list.h) and its operations
 * table: what entry.c, COPY, store_digest and checkpoints call for a list.
 *
 * Store process only (and tests and tools); single-threaded. A crash loses
 * nothing: lists are rebuilt by replaying the log (or read from a
 * checkpoint, ckpt_read).
 *
 * Design. A ring buffer of element pointers, its capacity a power of two:
 * a push or pop at either end is O(1) (amortised over doublings), element
 * i is one index away, an insertion or removal inside moves the shorter
 * side. Elements are string-shaped entries (list.h): short ones inline,
 * long ones one log extent. Redis 7.0 keeps every list as a quicklist
 * (OBJECT ENCODING answers "quicklist" for any list: its listpack
 * encoding of small lists came with 7.2), so there is one encoding here.
 *
 * Invariant: l->bytes is the requested size of this struct, the ring and
 * every element entry; the type handlers add its changes to
 * ctx->entry_bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "command.h"
#include "list.h"
#include "log.h"
#include "pieces.h"
#include "value.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

struct st_list {
    st_obj_t obj;
    uint32_t head;   /* ring index of element 0 */
    uint32_t n;      /* elements */
    uint32_t cap;    /* ring slots: 0 or a power of two */
    uint64_t bytes;  /* RAM held (banner) */
    idx_entry_t **v; /* the ring */
};

static uint64_t elem_bytes(const idx_entry_t *e)
{
    uint64_t n = st_entry_size(e->klen, e->ilen, e->vkind);
    return st_ent_kind(e) == VK_LIST ? n + st_ent_pieces((idx_entry_t *)e)->ram_bytes : n;
}

idx_entry_t *st_list_elem_new(const void *p, uint32_t len, uint64_t lsn)
{
    rec_arg_t name = {(const unsigned char *)"", 0}, val = {p, len};
    /* No log position: a large element read into RAM (D45). */
    if (!lsn && len > STORE_INLINE_MAX) return st_ent_new_ram(&name, p, len, 0);
    return st_ent_new(&name, &val, lsn, 0);
}

void st_list_elem_free(idx_entry_t *e)
{
    if (st_ent_kind(e) == VK_LIST) st_pieces_free(st_ent_pieces(e));
    free(e);
}

st_list_t *st_list_new(void)
{
    st_list_t *l = st_xmalloc(sizeof(*l));
    memset(l, 0, sizeof(*l));
    l->obj.ops = &st_list_ops;
    l->bytes = sizeof(*l);
    return l;
}

uint32_t st_list_len(const st_list_t *l)
{
    return l->n;
}

uint64_t st_list_bytes(const st_list_t *l)
{
    return l->bytes;
}

static uint32_t slot_of(const st_list_t *l, uint32_t i)
{
    return (l->head + i) & (l->cap - 1);
}

idx_entry_t *st_list_at(const st_list_t *l, uint32_t i)
{
    return l->v[slot_of(l, i)];
}

static void grow(st_list_t *l)
{
    uint32_t cap = l->cap ? l->cap * 2 : 4;
    idx_entry_t **v = st_xmalloc((size_t)cap * sizeof(*v));
    for (uint32_t i = 0; i < l->n; i++)
        v[i] = l->v[slot_of(l, i)];
    free(l->v);
    l->bytes += (uint64_t)(cap - l->cap) * sizeof(*v);
    l->v = v;
    l->cap = cap;
    l->head = 0;
}

/* Halve the ring when a quarter full, so a drained list gives RAM back. */
static void shrink(st_list_t *l)
{
    if (l->cap <= 4 || l->n > l->cap / 4) return;
    uint32_t cap = l->cap / 2;
    idx_entry_t **v = st_xmalloc((size_t)cap * sizeof(*v));
    for (uint32_t i = 0; i < l->n; i++)
        v[i] = l->v[slot_of(l, i)];
    free(l->v);
    l->bytes -= (uint64_t)(l->cap - cap) * sizeof(*v);
    l->v = v;
    l->cap = cap;
    l->head = 0;
}

void st_list_insert(st_list_t *l, uint32_t i, idx_entry_t *e)
{
    if (l->n == l->cap) grow(l);
    l->bytes += elem_bytes(e);
    if (i < l->n - i) { /* move the head side one slot left */
        l->head = (l->head + l->cap - 1) & (l->cap - 1);
        for (uint32_t k = 0; k < i; k++)
            l->v[slot_of(l, k)] = l->v[slot_of(l, k + 1)];
    } else {
        for (uint32_t k = l->n; k > i; k--)
            l->v[slot_of(l, k)] = l->v[slot_of(l, k - 1)];
    }
    l->v[slot_of(l, i)] = e;
    l->n++;
}

idx_entry_t *st_list_take(st_list_t *l, uint32_t i)
{
    idx_entry_t *e = l->v[slot_of(l, i)];
    if (i < l->n - 1 - i) {
        for (uint32_t k = i; k > 0; k--)
            l->v[slot_of(l, k)] = l->v[slot_of(l, k - 1)];
        l->head = (l->head + 1) & (l->cap - 1);
    } else {
        for (uint32_t k = i; k + 1 < l->n; k++)
            l->v[slot_of(l, k)] = l->v[slot_of(l, k + 1)];
    }
    l->n--;
    l->bytes -= elem_bytes(e);
    shrink(l);
    return e;
}

idx_entry_t *st_list_replace(st_list_t *l, uint32_t i, idx_entry_t *e)
{
    uint32_t s = slot_of(l, i);
    idx_entry_t *old = l->v[s];
    l->v[s] = e;
    l->bytes += elem_bytes(e);
    l->bytes -= elem_bytes(old);
    return old;
}

/* ---- the operations table ---- */

static void list_free(st_obj_t *o)
{
    st_list_t *l = (st_list_t *)o;
    for (uint32_t i = 0; i < l->n; i++)
        st_list_elem_free(st_list_at(l, i));
    free(l->v);
    free(l);
}

static st_obj_t *list_dup(const st_obj_t *o)
{
    const st_list_t *l = (const st_list_t *)o;
    st_list_t *c = st_list_new();
    for (uint32_t i = 0; i < l->n; i++) {
        idx_entry_t *e = st_list_at(l, i);
        rec_arg_t name = {(const unsigned char *)"", 0};
        st_list_insert(c, c->n, st_ent_dup(e, &name));
    }
    return &c->obj;
}

/* Order matters: a running XXH3 over each element's length and bytes. */
static int list_digest(store_ctx_t *ctx, const st_obj_t *o, uint64_t *out)
{
    const st_list_t *l = (const st_list_t *)o;
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    unsigned char *buf = NULL;
    size_t cap = 0;
    int rc = 0;
    for (uint32_t i = 0; i < l->n && !rc; i++) {
        idx_entry_t *e = st_list_at(l, i);
        uint64_t vlen = st_ent_vlen(e);
        if (vlen > cap) {
            buf = st_xrealloc(buf, (size_t)vlen);
            cap = (size_t)vlen;
        }
        rc = st_read_value(ctx, e, buf);
        XXH3_64bits_update(&st, &vlen, sizeof(vlen));
        XXH3_64bits_update(&st, buf, (size_t)vlen);
    }
    free(buf);
    *out = XXH3_64bits_digest(&st) ^ 0x6C697374ull; /* "list": unlike an equal hash */
    return rc ? -1 : 0;
}

static uint64_t list_mem(const st_obj_t *o)
{
    return ((const st_list_t *)o)->bytes;
}

static void list_count_log(const st_obj_t *o, st_live_t *t, int sign)
{
    const st_list_t *l = (const st_list_t *)o;
    for (uint32_t i = 0; i < l->n; i++)
        st_ent_live_add(t, st_list_at(l, i), sign);
}

static const char *list_encoding(const st_obj_t *o)
{
    (void)o;
    return "quicklist";
}

/*
 * Checkpoint stream (integers little-endian):
 *   u8 version (1), u32 element count, then per element, head first:
 *     u8 0, u32 length, bytes        (inline; read back at any length)
 *     u8 1, u64 lsn, u32 length      (a log extent)
 *     u8 2, u32 length, bytes        (held in RAM: a long element RESTORE
 *                                     decoded from an LZF node, D40, or
 *                                     read from a big value's parts, D45)
 */
#define CKPT_VERSION 1

static void put_u32(buf_t *b, uint32_t v)
{
    unsigned char p[4];
    cmd_put_u32(p, v);
    buf_append(b, p, 4);
}

static void list_ckpt_write(const st_obj_t *o, buf_t *out)
{
    const st_list_t *l = (const st_list_t *)o;
    buf_append(out, "\1", 1);
    put_u32(out, l->n);
    for (uint32_t i = 0; i < l->n; i++) {
        idx_entry_t *e = st_list_at(l, i);
        if (st_ent_kind(e) == VK_EXTENT) {
            uint64_t lsn;
            uint32_t len;
            unsigned char p[8];
            st_ent_get_ext1(e, &lsn, &len);
            buf_append(out, "\1", 1);
            cmd_put_i64(p, (int64_t)lsn);
            buf_append(out, p, 8);
            put_u32(out, len);
        } else if (st_ent_kind(e) == VK_LIST) { /* one PIECE_RAM (st_ent_new_ram) */
            const st_pieces_t *pl = st_ent_pieces(e);
            uint32_t len = (uint32_t)st_ent_vlen(e);
            buf_append(out, "\2", 1);
            put_u32(out, len);
            buf_append(out, st_piece_ram(&pl->p[0]), len);
        } else {
            /* Inline: read without I/O. */
            uint64_t vlen = st_ent_vlen(e);
            buf_append(out, "\0", 1);
            put_u32(out, (uint32_t)vlen);
            buf_reserve(out, (size_t)vlen);
            if (st_read_value(NULL, e, (unsigned char *)out->data + out->len)) abort();
            out->len += (size_t)vlen;
        }
    }
}

static long list_ckpt_read(const unsigned char *p, size_t len, st_obj_t **out)
{
    size_t at = 5;
    if (len < 5 || p[0] != CKPT_VERSION) return -1;
    uint32_t n = cmd_get_u32(p + 1);
    st_list_t *l = st_list_new();
    for (uint32_t i = 0; i < n; i++) {
        if (len - at < 5) goto bad;
        unsigned kind = p[at++];
        idx_entry_t *e;
        if (kind == 1) {
            if (len - at < 12) goto bad;
            uint64_t lsn = (uint64_t)cmd_get_i64(p + at);
            uint32_t vlen = cmd_get_u32(p + at + 8);
            at += 12;
            if (vlen <= STORE_INLINE_MAX || lsn == 0) goto bad; /* never written so */
            rec_arg_t name = {(const unsigned char *)"", 0}, val = {NULL, vlen};
            e = st_ent_new(&name, &val, lsn, 0);
        } else if (kind == 2) {
            uint32_t vlen = cmd_get_u32(p + at);
            at += 4;
            if (vlen <= STORE_INLINE_MAX || len - at < vlen) goto bad;
            rec_arg_t name = {(const unsigned char *)"", 0};
            e = st_ent_new_ram(&name, p + at, vlen, 0);
            at += vlen;
        } else if (kind == 0) {
            uint32_t vlen = cmd_get_u32(p + at);
            at += 4;
            if (len - at < vlen) goto bad;
            e = st_list_elem_new(p + at, vlen, 0);
            at += vlen;
        } else {
            goto bad;
        }
        st_list_insert(l, l->n, e);
    }
    *out = &l->obj;
    return (long)at;
bad:
    list_free(&l->obj);
    return -1;
}

const st_type_ops_t st_list_ops = {
    .type = ST_LIST,
    .name = "list",
    .free = list_free,
    .dup = list_dup,
    .digest = list_digest,
    .mem_usage = list_mem,
    .count_log = list_count_log,
    .encoding = list_encoding,
    .ckpt_write = list_ckpt_write,
    .ckpt_read = list_ckpt_read,
};
