/*
 * sgroup.c - a stream's consumer groups (sgroup.h, D42). Store process
 * only; holds no state of its own: the groups are part of the stream
 * object that stream.c frees, copies, digests and checkpoints.
 *
 * Sorted arrays: a stream has few groups and a group few consumers, so a
 * binary search and a move of pointers is simpler than a tree and as fast
 * at these sizes. The PEL is sorted by ID and grows at its end in the
 * common case (XREADGROUP ">" delivers IDs above every pending one).
 * A pending entry points at its consumer; a consumer's pending count is
 * a walk of the PEL (XINFO, DELCONSUMER: rare commands).
 */
#include "sgroup.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "command.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

static int name_cmp(const unsigned char *a, uint32_t alen, const void *b, uint32_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c) return c;
    return alen < blen ? -1 : alen > blen;
}

/* The index of the first of n named things whose name is >= name; the
 * things are pointers, each with a name and nlen at the offsets given
 * (groups and consumers share this search). */
static uint32_t name_lower(void *const *v, uint32_t n, size_t name_at, size_t nlen_at,
                           const void *name, uint32_t len)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const unsigned char *p = (const unsigned char *)v[mid];
        uint32_t l;
        memcpy(&l, p + nlen_at, sizeof(l));
        if (name_cmp(p + name_at, l, name, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static uint32_t group_lower(const st_sgroups_t *t, const void *name, uint32_t len)
{
    return name_lower((void *const *)t->g, t->n, offsetof(st_sgroup_t, name),
                      offsetof(st_sgroup_t, nlen), name, len);
}

st_sgroup_t *sg_find(const st_sgroups_t *t, const void *name, uint32_t len)
{
    uint32_t i = group_lower(t, name, len);
    return i < t->n && name_cmp(t->g[i]->name, t->g[i]->nlen, name, len) == 0 ? t->g[i] : NULL;
}

st_sgroup_t *sg_create(st_sgroups_t *t, const void *name, uint32_t len, st_sid_t last_id,
                       int64_t entries_read)
{
    st_sgroup_t *g = st_xmalloc(sizeof(*g) + len);
    memset(g, 0, sizeof(*g));
    g->last_id = last_id;
    g->entries_read = entries_read;
    g->nlen = len;
    memcpy(g->name, name, len);
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 2;
        t->g = st_xrealloc(t->g, t->cap * sizeof(t->g[0]));
    }
    uint32_t i = group_lower(t, name, len);
    memmove(t->g + i + 1, t->g + i, (t->n - i) * sizeof(t->g[0]));
    t->g[i] = g;
    t->n++;
    return g;
}

static void group_free(st_sgroup_t *g)
{
    for (uint32_t i = 0; i < g->nc; i++)
        free(g->c[i]);
    free(g->c);
    free(g->pel);
    free(g);
}

void sg_destroy(st_sgroups_t *t, st_sgroup_t *g)
{
    uint32_t i = group_lower(t, g->name, g->nlen);
    memmove(t->g + i, t->g + i + 1, (t->n - i - 1) * sizeof(t->g[0]));
    t->n--;
    group_free(g);
}

void sg_free_all(st_sgroups_t *t)
{
    for (uint32_t i = 0; i < t->n; i++)
        group_free(t->g[i]);
    free(t->g);
    memset(t, 0, sizeof(*t));
}

static uint32_t consumer_lower(const st_sgroup_t *g, const void *name, uint32_t len)
{
    return name_lower((void *const *)g->c, g->nc, offsetof(st_sconsumer_t, name),
                      offsetof(st_sconsumer_t, nlen), name, len);
}

st_sconsumer_t *sg_consumer(const st_sgroup_t *g, const void *name, uint32_t len)
{
    uint32_t i = consumer_lower(g, name, len);
    return i < g->nc && name_cmp(g->c[i]->name, g->c[i]->nlen, name, len) == 0 ? g->c[i] : NULL;
}

st_sconsumer_t *sg_consumer_add(st_sgroup_t *g, const void *name, uint32_t len, int64_t now)
{
    st_sconsumer_t *c = st_xmalloc(sizeof(*c) + len);
    c->seen = now;
    c->nlen = len;
    memcpy(c->name, name, len);
    if (g->nc == g->capc) {
        g->capc = g->capc ? g->capc * 2 : 2;
        g->c = st_xrealloc(g->c, g->capc * sizeof(g->c[0]));
    }
    uint32_t i = consumer_lower(g, name, len);
    memmove(g->c + i + 1, g->c + i, (g->nc - i) * sizeof(g->c[0]));
    g->c[i] = c;
    g->nc++;
    return c;
}

uint64_t sg_consumer_del(st_sgroup_t *g, st_sconsumer_t *c)
{
    uint64_t kept = 0, dropped = 0;
    for (uint64_t i = 0; i < g->npel; i++) {
        if (g->pel[i].owner == c)
            dropped++;
        else
            g->pel[kept++] = g->pel[i];
    }
    g->npel = kept;
    uint32_t i = consumer_lower(g, c->name, c->nlen);
    memmove(g->c + i, g->c + i + 1, (g->nc - i - 1) * sizeof(g->c[0]));
    g->nc--;
    free(c);
    return dropped;
}

uint64_t sg_consumer_pending(const st_sgroup_t *g, const st_sconsumer_t *c)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < g->npel; i++)
        n += g->pel[i].owner == c;
    return n;
}

uint64_t sg_pel_lower(const st_sgroup_t *g, st_sid_t id)
{
    uint64_t lo = 0, hi = g->npel;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (st_sid_cmp(g->pel[mid].id, id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

st_spending_t *sg_pel_find(st_sgroup_t *g, st_sid_t id)
{
    uint64_t i = sg_pel_lower(g, id);
    return i < g->npel && st_sid_cmp(g->pel[i].id, id) == 0 ? &g->pel[i] : NULL;
}

st_spending_t *sg_pel_add(st_sgroup_t *g, st_sid_t id, st_sconsumer_t *c, int64_t now)
{
    if (g->npel == g->cappel) {
        g->cappel = g->cappel ? g->cappel * 2 : 4;
        g->pel = st_xrealloc(g->pel, g->cappel * sizeof(g->pel[0]));
    }
    uint64_t i = sg_pel_lower(g, id);
    memmove(g->pel + i + 1, g->pel + i, (g->npel - i) * sizeof(g->pel[0]));
    g->pel[i] = (st_spending_t){id, c, now, 1};
    g->npel++;
    return &g->pel[i];
}

void sg_pel_remove(st_sgroup_t *g, uint64_t i)
{
    memmove(g->pel + i, g->pel + i + 1, (g->npel - i - 1) * sizeof(g->pel[0]));
    g->npel--;
}

static uint32_t consumer_index(const st_sgroup_t *g, const st_sconsumer_t *c)
{
    return consumer_lower(g, c->name, c->nlen);
}

void sg_dup(st_sgroups_t *to, const st_sgroups_t *from)
{
    for (uint32_t i = 0; i < from->n; i++) {
        const st_sgroup_t *f = from->g[i];
        st_sgroup_t *g = sg_create(to, f->name, f->nlen, f->last_id, f->entries_read);
        for (uint32_t k = 0; k < f->nc; k++)
            sg_consumer_add(g, f->c[k]->name, f->c[k]->nlen, f->c[k]->seen);
        for (uint64_t k = 0; k < f->npel; k++) {
            st_spending_t *p =
                sg_pel_add(g, f->pel[k].id, g->c[consumer_index(f, f->pel[k].owner)], 0);
            p->delivered = f->pel[k].delivered;
            p->count = f->pel[k].count;
        }
    }
}

uint64_t sg_bytes(const st_sgroups_t *t)
{
    uint64_t n = t->cap * sizeof(t->g[0]);
    for (uint32_t i = 0; i < t->n; i++) {
        const st_sgroup_t *g = t->g[i];
        n += sizeof(*g) + g->nlen + g->capc * sizeof(g->c[0]) + g->cappel * sizeof(g->pel[0]);
        for (uint32_t k = 0; k < g->nc; k++)
            n += sizeof(*g->c[k]) + g->c[k]->nlen;
    }
    return n;
}

/* ---- the byte form, for digests and checkpoints ----
 * u32 groups; per group: u32 name length, name, last ID (16), i64
 * entries read, u32 consumers, per consumer: u32 length, name, i64 seen;
 * u64 pending, per pending entry: ID (16), u32 consumer index, i64
 * delivery time, i64 delivery count. */

static void put_sid(unsigned char *p, st_sid_t id)
{
    cmd_put_i64(p, (int64_t)id.ms);
    cmd_put_i64(p + 8, (int64_t)id.seq);
}

static st_sid_t get_sid(const unsigned char *p)
{
    return (st_sid_t){(uint64_t)cmd_get_i64(p), (uint64_t)cmd_get_i64(p + 8)};
}

static void put_named(buf_t *out, const unsigned char *name, uint32_t len)
{
    unsigned char b[4];
    cmd_put_u32(b, len);
    buf_append(out, b, 4);
    buf_append(out, name, len);
}

void sg_ckpt_write(const st_sgroups_t *t, buf_t *out)
{
    unsigned char b[40];
    cmd_put_u32(b, t->n);
    buf_append(out, b, 4);
    for (uint32_t i = 0; i < t->n; i++) {
        const st_sgroup_t *g = t->g[i];
        put_named(out, g->name, g->nlen);
        put_sid(b, g->last_id);
        cmd_put_i64(b + 16, g->entries_read);
        cmd_put_u32(b + 24, g->nc);
        buf_append(out, b, 28);
        for (uint32_t k = 0; k < g->nc; k++) {
            put_named(out, g->c[k]->name, g->c[k]->nlen);
            cmd_put_i64(b, g->c[k]->seen);
            buf_append(out, b, 8);
        }
        cmd_put_i64(b, (int64_t)g->npel);
        buf_append(out, b, 8);
        for (uint64_t k = 0; k < g->npel; k++) {
            put_sid(b, g->pel[k].id);
            cmd_put_u32(b + 16, consumer_index(g, g->pel[k].owner));
            cmd_put_i64(b + 20, g->pel[k].delivered);
            cmd_put_i64(b + 28, (int64_t)g->pel[k].count);
            buf_append(out, b, 36);
        }
    }
}

/* A length-prefixed name at p + *at: 0 with *name, *len set, or -1. */
static int get_named(const unsigned char *p, size_t len, size_t *at, const unsigned char **name,
                     uint32_t *nlen)
{
    if (len - *at < 4) return -1;
    *nlen = cmd_get_u32(p + *at);
    *at += 4;
    if (len - *at < *nlen) return -1;
    *name = p + *at;
    *at += *nlen;
    return 0;
}

long sg_ckpt_read(st_sgroups_t *t, const unsigned char *p, size_t len)
{
    size_t at = 4;
    if (len < 4) return -1;
    uint32_t n = cmd_get_u32(p);
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *name;
        uint32_t nlen;
        if (get_named(p, len, &at, &name, &nlen) || len - at < 28) goto bad;
        if (t->n && name_cmp(t->g[t->n - 1]->name, t->g[t->n - 1]->nlen, name, nlen) >= 0)
            goto bad; /* out of order or twice */
        st_sgroup_t *g = sg_create(t, name, nlen, get_sid(p + at), cmd_get_i64(p + at + 16));
        uint32_t nc = cmd_get_u32(p + at + 24);
        at += 28;
        for (uint32_t k = 0; k < nc; k++) {
            if (get_named(p, len, &at, &name, &nlen) || len - at < 8) goto bad;
            if (g->nc && name_cmp(g->c[g->nc - 1]->name, g->c[g->nc - 1]->nlen, name, nlen) >= 0)
                goto bad;
            sg_consumer_add(g, name, nlen, cmd_get_i64(p + at));
            at += 8;
        }
        if (len - at < 8) goto bad;
        uint64_t np = (uint64_t)cmd_get_i64(p + at);
        at += 8;
        for (uint64_t k = 0; k < np; k++) {
            if (len - at < 36) goto bad;
            st_sid_t id = get_sid(p + at);
            uint32_t ci = cmd_get_u32(p + at + 16);
            if (ci >= g->nc || (g->npel && st_sid_cmp(g->pel[g->npel - 1].id, id) >= 0)) goto bad;
            st_spending_t *e = sg_pel_add(g, id, g->c[ci], cmd_get_i64(p + at + 20));
            e->count = (uint64_t)cmd_get_i64(p + at + 28);
            at += 36;
        }
    }
    return (long)at;
bad:
    sg_free_all(t);
    return -1;
}

void sg_digest(const st_sgroups_t *t, void *xxh3_state)
{
    buf_t b;
    buf_init(&b);
    sg_ckpt_write(t, &b);
    XXH3_64bits_update((XXH3_state_t *)xxh3_state, b.data, b.len);
    buf_free(&b);
}
