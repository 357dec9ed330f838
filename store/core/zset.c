/*
 * zset.c - the sorted set's structure (zset.h): a skiplist ordered by
 * (score, member) whose forward links carry spans (how many nodes a link
 * skips), plus an open-addressing member table of node pointers (linear
 * probing, at most half full, backward-shift deletion: no tombstones).
 *
 * Levels: 1 + (trailing zero bits of the member's XXH3 hash) / 2, at most
 * ZMAXLEVEL: a quarter of the nodes reach each next level, as a p = 1/4
 * skiplist, and the same members give the same structure on every replay.
 * The type's operations table (st_zset_ops) is at the end.
 */
#include "zset.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "command.h"
#include "object.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define ZMAXLEVEL 32

typedef struct zlink {
    st_znode_t *next;
    uint32_t span;
} zlink_t;

struct st_znode {
    double score;
    st_znode_t *prev;
    char *member;
    uint32_t len;
    uint32_t level;
    zlink_t link[]; /* level of them */
};

struct st_zset {
    st_obj_t obj;     /* first: the entry's object (st_zset_ops) */
    int skiplist;     /* OBJECT ENCODING: 0 listpack, 1 skiplist */
    st_znode_t *head; /* ZMAXLEVEL links, no member */
    st_znode_t *tail;
    uint32_t len, level;
    st_znode_t **slots; /* member table: cap entries, NULL = empty */
    uint32_t cap;
    uint64_t seed;
    uint64_t bytes;
};

static uint64_t mhash(const st_zset_t *z, const void *m, uint32_t n)
{
    return XXH3_64bits_withSeed(m, n, z->seed);
}

static st_znode_t *node_new(uint32_t level, const void *m, uint32_t n, double s)
{
    st_znode_t *x = st_xmalloc(sizeof(*x) + level * sizeof(zlink_t));
    memset(x, 0, sizeof(*x) + level * sizeof(zlink_t));
    x->score = s;
    x->level = level;
    x->len = n;
    if (m) {
        x->member = st_xmalloc(n ? n : 1);
        memcpy(x->member, m, n);
    }
    return x;
}

static uint64_t node_bytes(const st_znode_t *x)
{
    return sizeof(*x) + x->level * sizeof(zlink_t) + x->len;
}

st_zset_t *st_zset_new(uint64_t seed)
{
    st_zset_t *z = st_xmalloc(sizeof(*z));
    memset(z, 0, sizeof(*z));
    z->obj.ops = &st_zset_ops;
    z->head = node_new(ZMAXLEVEL, NULL, 0, 0);
    z->level = 1;
    z->seed = seed ^ 0x5A5E7C0FFEE15EEDull;
    z->cap = 8;
    z->slots = calloc(z->cap, sizeof(*z->slots));
    if (!z->slots) abort();
    z->bytes = sizeof(*z) + node_bytes(z->head) + z->cap * sizeof(*z->slots);
    return z;
}

void st_zset_free(st_zset_t *z)
{
    if (!z) return;
    st_znode_t *x = z->head->link[0].next;
    while (x) {
        st_znode_t *nx = x->link[0].next;
        free(x->member);
        free(x);
        x = nx;
    }
    free(z->head);
    free(z->slots);
    free(z);
}

int st_zset_is_skiplist(const st_zset_t *z)
{
    return z->skiplist;
}

void st_zset_set_skiplist(st_zset_t *z, int on)
{
    z->skiplist = on;
}

uint64_t st_zset_seed(const st_zset_t *z)
{
    return z->seed ^ 0x5A5E7C0FFEE15EEDull;
}

uint32_t st_zset_len(const st_zset_t *z)
{
    return z->len;
}

uint64_t st_zset_bytes(const st_zset_t *z)
{
    return z->bytes;
}

double st_znode_score(const st_znode_t *x)
{
    return x->score;
}

const char *st_znode_member(const st_znode_t *x, uint32_t *n)
{
    *n = x->len;
    return x->member;
}

st_znode_t *st_znode_next(const st_znode_t *x)
{
    return x->link[0].next;
}

st_znode_t *st_znode_prev(const st_znode_t *x)
{
    return x->prev;
}

/* Member byte order: memcmp of the common part, then the shorter first. */
static int lexcmp(const void *a, uint32_t an, const void *b, uint32_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

/* (score, member) order of x against (s, m). */
static int nodecmp(const st_znode_t *x, double s, const void *m, uint32_t n)
{
    if (x->score < s) return -1;
    if (x->score > s) return 1;
    return lexcmp(x->member, x->len, m, n);
}

/* ---- the member table ---- */

static uint32_t slot_of(const st_zset_t *z, const void *m, uint32_t n)
{
    uint32_t mask = z->cap - 1, k = (uint32_t)mhash(z, m, n) & mask;
    while (z->slots[k] && lexcmp(z->slots[k]->member, z->slots[k]->len, m, n) != 0)
        k = (k + 1) & mask;
    return k;
}

static void table_grow(st_zset_t *z)
{
    st_znode_t **old = z->slots;
    uint32_t ocap = z->cap;
    z->cap *= 2;
    z->slots = calloc(z->cap, sizeof(*z->slots));
    if (!z->slots) abort();
    for (uint32_t i = 0; i < ocap; i++)
        if (old[i]) z->slots[slot_of(z, old[i]->member, old[i]->len)] = old[i];
    free(old);
    z->bytes += (uint64_t)ocap * sizeof(*z->slots);
}

static void table_remove(st_zset_t *z, uint32_t k)
{
    uint32_t mask = z->cap - 1;
    z->slots[k] = NULL;
    for (uint32_t j = (k + 1) & mask; z->slots[j]; j = (j + 1) & mask) {
        st_znode_t *x = z->slots[j];
        uint32_t home = (uint32_t)mhash(z, x->member, x->len) & mask;
        /* x may move to k when k lies cyclically in [home, j) */
        if (((j - home) & mask) >= ((j - k) & mask)) {
            z->slots[k] = x;
            z->slots[j] = NULL;
            k = j;
        }
    }
}

st_znode_t *st_zset_find(const st_zset_t *z, const void *m, uint32_t n)
{
    return z->slots[slot_of(z, m, n)];
}

/* ---- the skiplist ---- */

static uint32_t level_of(const st_zset_t *z, const void *m, uint32_t n)
{
    uint64_t h = mhash(z, m, n) ^ 0x9E3779B97F4A7C15ull;
    h = XXH3_64bits_withSeed(&h, sizeof(h), z->seed);
    uint32_t lvl = 1 + (h ? (uint32_t)__builtin_ctzll(h) / 2 : ZMAXLEVEL);
    return lvl > ZMAXLEVEL ? ZMAXLEVEL : lvl;
}

static void list_insert(st_zset_t *z, st_znode_t *x)
{
    st_znode_t *update[ZMAXLEVEL];
    uint32_t rank[ZMAXLEVEL];
    st_znode_t *p = z->head;
    for (int i = (int)z->level - 1; i >= 0; i--) {
        rank[i] = i == (int)z->level - 1 ? 0 : rank[i + 1];
        while (p->link[i].next && nodecmp(p->link[i].next, x->score, x->member, x->len) < 0) {
            rank[i] += p->link[i].span;
            p = p->link[i].next;
        }
        update[i] = p;
    }
    if (x->level > z->level) {
        for (uint32_t i = z->level; i < x->level; i++) {
            rank[i] = 0;
            update[i] = z->head;
            update[i]->link[i].span = z->len;
        }
        z->level = x->level;
    }
    for (uint32_t i = 0; i < x->level; i++) {
        x->link[i].next = update[i]->link[i].next;
        update[i]->link[i].next = x;
        x->link[i].span = update[i]->link[i].span - (rank[0] - rank[i]);
        update[i]->link[i].span = rank[0] - rank[i] + 1;
    }
    for (uint32_t i = x->level; i < z->level; i++)
        update[i]->link[i].span++;
    x->prev = update[0] == z->head ? NULL : update[0];
    if (x->link[0].next)
        x->link[0].next->prev = x;
    else
        z->tail = x;
    z->len++;
}

static void list_remove(st_zset_t *z, st_znode_t *x)
{
    st_znode_t *update[ZMAXLEVEL];
    st_znode_t *p = z->head;
    for (int i = (int)z->level - 1; i >= 0; i--) {
        while (p->link[i].next && p->link[i].next != x &&
               nodecmp(p->link[i].next, x->score, x->member, x->len) < 0)
            p = p->link[i].next;
        update[i] = p;
    }
    for (uint32_t i = 0; i < z->level; i++) {
        if (update[i]->link[i].next == x) {
            update[i]->link[i].span += x->link[i].span - 1;
            update[i]->link[i].next = x->link[i].next;
        } else {
            update[i]->link[i].span--;
        }
    }
    if (x->link[0].next)
        x->link[0].next->prev = x->prev;
    else
        z->tail = x->prev;
    while (z->level > 1 && !z->head->link[z->level - 1].next)
        z->level--;
    z->len--;
}

int st_zset_set(st_zset_t *z, const void *m, uint32_t n, double s)
{
    uint32_t k = slot_of(z, m, n);
    st_znode_t *x = z->slots[k];
    if (x) {
        if (x->score == s) return 0;
        /* the node stays in place when its neighbours still bound it */
        st_znode_t *pv = x->prev, *nx = x->link[0].next;
        if ((!pv || nodecmp(pv, s, m, n) < 0) && (!nx || nodecmp(nx, s, m, n) > 0)) {
            x->score = s;
            return 0;
        }
        list_remove(z, x);
        x->score = s;
        list_insert(z, x);
        return 0;
    }
    x = node_new(level_of(z, m, n), m, n, s);
    z->slots[k] = x;
    z->bytes += node_bytes(x);
    list_insert(z, x);
    if ((uint64_t)z->len * 2 > z->cap) table_grow(z);
    return 1;
}

int st_zset_del(st_zset_t *z, const void *m, uint32_t n)
{
    uint32_t k = slot_of(z, m, n);
    st_znode_t *x = z->slots[k];
    if (!x) return 0;
    table_remove(z, k);
    list_remove(z, x);
    z->bytes -= node_bytes(x);
    free(x->member);
    free(x);
    return 1;
}

long st_zset_rank(const st_zset_t *z, const void *m, uint32_t n)
{
    const st_znode_t *x = st_zset_find(z, m, n);
    if (!x) return -1;
    const st_znode_t *p = z->head;
    uint64_t rank = 0;
    for (int i = (int)z->level - 1; i >= 0; i--) {
        while (p->link[i].next && nodecmp(p->link[i].next, x->score, x->member, x->len) <= 0) {
            rank += p->link[i].span;
            p = p->link[i].next;
        }
        if (p == x) return (long)rank - 1;
    }
    return -1;
}

st_znode_t *st_zset_at(const st_zset_t *z, uint32_t r)
{
    if (r >= z->len) return NULL;
    st_znode_t *p = z->head;
    uint64_t want = (uint64_t)r + 1, have = 0;
    for (int i = (int)z->level - 1; i >= 0; i--) {
        while (p->link[i].next && have + p->link[i].span <= want) {
            have += p->link[i].span;
            p = p->link[i].next;
        }
        if (have == want) return p;
    }
    return NULL;
}

uint32_t st_zset_rank_score(const st_zset_t *z, double s, int excl)
{
    const st_znode_t *p = z->head;
    uint32_t rank = 0;
    for (int i = (int)z->level - 1; i >= 0; i--)
        while (p->link[i].next &&
               (excl ? p->link[i].next->score <= s : p->link[i].next->score < s)) {
            rank += p->link[i].span;
            p = p->link[i].next;
        }
    return rank;
}

uint32_t st_zset_rank_lex(const st_zset_t *z, const void *m, uint32_t n, int excl)
{
    const st_znode_t *p = z->head;
    uint32_t rank = 0;
    for (int i = (int)z->level - 1; i >= 0; i--)
        while (p->link[i].next) {
            const st_znode_t *x = p->link[i].next;
            int c = lexcmp(x->member, x->len, m, n);
            if (excl ? c > 0 : c >= 0) break;
            rank += p->link[i].span;
            p = x;
        }
    return rank;
}

/* ---- the operations table (object.h) ----
 * Checkpoint stream: u8 version, u8 skiplist, u64 seed, u32 count, then
 * per member in order: u32 length, its bytes, u64 the score's IEEE bits.
 * Members live in RAM, so count_log has no log bytes to count. */

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
