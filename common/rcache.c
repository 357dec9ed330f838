/*
 * rcache.c - the read cache (rcache.h, D70): the shared mapping, the
 * frontends' lookup and the store's fills and invalidations.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "command.h"
#include "io_fault.h"
#include "rcache.h"

rcache_t *rcache_shared;

/* The store's own memory, not shared: one bit per bucket of each table
 * that a fill has used since this store began (rcache_store_begin), so
 * that a change to a key whose buckets were never filled touches none of
 * the mapping (a write-only load would otherwise fault in every page of
 * it, each change reading one bucket). NULL (every bucket may hold a slot)
 * in a process that never called rcache_store_begin. */
static uint64_t *filled[RCACHE_TABLES];

rcache_t *rcache_create(uint64_t bytes)
{
    if (bytes < RCACHE_MIN_BYTES) return NULL;
    uint64_t part[RCACHE_TABLES] = {bytes - bytes / 4, bytes / 4};
    uint64_t slot_bytes[RCACHE_TABLES] = {RCACHE_SLOT_BYTES, RCACHE_BIG_SLOT_BYTES};
    rcache_table_t tab[RCACHE_TABLES];
    uint64_t size = (sizeof(rcache_t) + 63) / 64 * 64;
    for (unsigned t = 0; t < RCACHE_TABLES; t++) {
        tab[t].slot_bytes = slot_bytes[t];
        tab[t].nbuckets = part[t] / (RCACHE_WAYS * slot_bytes[t] + sizeof(rcache_tags_t));
        if (!tab[t].nbuckets) tab[t].nbuckets = 1;
        tab[t].tag_offset = size;
        size += tab[t].nbuckets * sizeof(rcache_tags_t);
        tab[t].offset = size;
        size += tab[t].nbuckets * RCACHE_WAYS * slot_bytes[t];
    }
    /* Pages are touched only as slots are filled: an idle cache costs
     * address space, not RAM. */
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    rcache_t *rc = p;
    rc->size = size;
    memcpy(rc->tab, tab, sizeof(tab));
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    rc->seed = XXH3_64bits_withSeed(&ts, sizeof(ts), (uint64_t)getpid());
    return rc;
}

void rcache_destroy(rcache_t *rc)
{
    if (rc) munmap(rc, rc->size);
}

/* A query's first two bytes: the protocol and the command. */
#define QUERY_HEAD 2u
static void query_head(unsigned char *q, int proto, unsigned op)
{
    q[0] = proto >= 3 ? 3 : 2;
    q[1] = (unsigned char)op;
}

size_t rcache_query(unsigned char *q, size_t cap, int proto, unsigned op, int nwords,
                    const unsigned char *const *words, const uint32_t *lens)
{
    if (cap < QUERY_HEAD) return 0;
    query_head(q, proto, op);
    size_t n = QUERY_HEAD;
    for (int i = 0; i < nwords; i++) {
        if (lens[i] > cap || cap - n < 4 + (size_t)lens[i]) return 0;
        cmd_put_u32(q + n, lens[i]); /* as rec_encode_payload writes it */
        memcpy(q + n + 4, words[i], lens[i]);
        n += 4 + lens[i];
    }
    return n;
}

size_t rcache_query_tail(unsigned char *q, size_t cap, int proto, unsigned op,
                         const unsigned char *tail, size_t tail_len)
{
    if (cap < QUERY_HEAD || tail_len > cap - QUERY_HEAD) return 0;
    query_head(q, proto, op);
    memcpy(q + QUERY_HEAD, tail, tail_len);
    return QUERY_HEAD + tail_len;
}

static uint64_t key_hash(const rcache_t *rc, unsigned db, const void *key, size_t klen)
{
    uint64_t h = XXH3_64bits_withSeed(key, klen, rc->seed ^ (db * 0x9E3779B97F4A7C15ull));
    return h ? h : 1;
}

static uint64_t bucket_index(const rcache_t *rc, unsigned t, uint64_t h)
{
    return (uint64_t)(((unsigned __int128)h * rc->tab[t].nbuckets) >> 64);
}

/* Way w of bucket b in table t. */
static rcache_slot_t *way(const rcache_t *rc, unsigned t, uint64_t b, unsigned w)
{
    return rcache_slot(rc, t, b * RCACHE_WAYS + w);
}

/* A slot's tag in its bucket's line: 32 bits of its key's hash, never 0
 * (the bucket took the hash's high bits by multiplication; these are its
 * low ones). */
static uint32_t tag_of(uint64_t h)
{
    uint32_t t = (uint32_t)h;
    return t ? t : 1;
}

static uint32_t tag_at(const rcache_tags_t *g, unsigned w)
{
    return atomic_load_explicit(&g->tag[w], memory_order_relaxed);
}

static size_t room(const rcache_t *rc, unsigned t)
{
    return rc->tab[t].slot_bytes - RCACHE_SLOT_HDR;
}

/* The store's: does slot s hold (or hold, when its generation is stale)
 * a read of this key, and this read? The store writes every slot, so it
 * reads them without the seqlock. */
static int holds_key(const rcache_slot_t *s, uint64_t h, unsigned db, const void *key, size_t klen)
{
    return s->hash == h && s->db == db && s->klen == klen && memcmp(s->data, key, klen) == 0;
}

static int holds(const rcache_slot_t *s, uint64_t h, unsigned db, const void *key, size_t klen,
                 const void *query, size_t qlen)
{
    return holds_key(s, h, db, key, klen) && s->qlen == qlen &&
           (!qlen || memcmp(s->data + klen, query, qlen) == 0);
}

/*
 * The frontends' lookup of one read of key in table t: the reply's length
 * (copied into out), 0 for a known absence (GET only), -1 when unknown or
 * when a slot moved under the read (the store then answers). Fills mark
 * for a later rcache_unchanged.
 */
static int lookup(rcache_t *rc, unsigned t, uint64_t h, unsigned db, const void *key, size_t klen,
                  const void *query, size_t qlen, unsigned char *out, int64_t now_ms,
                  rcache_mark_t *mark)
{
    size_t cap = room(rc, t);
    uint64_t b = bucket_index(rc, t, h);
    const rcache_tags_t *g = rcache_tags(rc, t, b);
    uint32_t tag = tag_of(h);
    for (unsigned w = 0; w < RCACHE_WAYS; w++) {
        if (tag_at(g, w) != tag) continue;
        rcache_slot_t *s = way(rc, t, b, w);
        uint32_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (seq & 1) continue;
        /* Read as the store may be rewriting it: nothing read is trusted
         * before the sequence is found unchanged below. */
        uint64_t sh = __atomic_load_n(&s->hash, __ATOMIC_RELAXED);
        if (sh != h) continue;
        uint16_t sdb = __atomic_load_n(&s->db, __ATOMIC_RELAXED);
        uint16_t sk = __atomic_load_n(&s->klen, __ATOMIC_RELAXED);
        uint16_t sq = __atomic_load_n(&s->qlen, __ATOMIC_RELAXED);
        uint16_t rl = __atomic_load_n(&s->rlen, __ATOMIC_RELAXED);
        uint32_t gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED);
        if (sdb != db || sk != klen || sq != qlen || (size_t)sk + sq + rl > cap) continue;
        int same =
            memcmp(s->data, key, klen) == 0 && (!qlen || memcmp(s->data + klen, query, qlen) == 0);
        memcpy(out, s->data + sk + sq, rl);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->seq, memory_order_relaxed) != seq) return -1;
        if (!same) continue;
        if (gen != atomic_load_explicit(&rc->gen[db], memory_order_acquire)) return -1;
        *mark = (rcache_mark_t){
            .slot = (uint64_t)((char *)s - (char *)rc), .seq = seq, .gen = gen, .db = db};
        /* Once a second at most: the line stays shared between readers. */
        if (rl && now_ms - atomic_load_explicit(&s->hit_ms, memory_order_relaxed) >= 1000)
            atomic_store_explicit(&s->hit_ms, now_ms, memory_order_relaxed);
        return rl;
    }
    return -1;
}

int rcache_get(rcache_t *rc, unsigned db, const void *key, size_t klen, unsigned char *out,
               int64_t now_ms)
{
    rcache_mark_t mark;
    return rcache_get_marked(rc, db, key, klen, out, now_ms, &mark);
}

int rcache_unchanged(const rcache_t *rc, const rcache_mark_t *m)
{
    const rcache_slot_t *s = (const rcache_slot_t *)((const char *)rc + m->slot);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&s->seq, memory_order_relaxed) == m->seq &&
           atomic_load_explicit(&rc->gen[m->db], memory_order_relaxed) == m->gen;
}

int rcache_get_marked(rcache_t *rc, unsigned db, const void *key, size_t klen, unsigned char *out,
                      int64_t now_ms, rcache_mark_t *mark)
{
    if (db >= RCACHE_DBS || klen > rcache_room()) return -1;
    return lookup(rc, RCACHE_SMALL, key_hash(rc, db, key, klen), db, key, klen, NULL, 0, out,
                  now_ms, mark);
}

int rcache_get_query(rcache_t *rc, unsigned db, const void *key, size_t klen, const void *query,
                     size_t qlen, unsigned char *out, int64_t now_ms)
{
    if (db >= RCACHE_DBS || !qlen) return -1;
    uint64_t h = key_hash(rc, db, key, klen);
    rcache_mark_t mark;
    for (unsigned t = 0; t < RCACHE_TABLES; t++) {
        if (klen + qlen >= room(rc, t)) continue;
        int n = lookup(rc, t, h, db, key, klen, query, qlen, out, now_ms, &mark);
        if (n > 0) return n;
    }
    return -1;
}

int64_t rcache_hit_ms(const rcache_t *rc, unsigned db, const void *key, size_t klen)
{
    if (db >= RCACHE_DBS || klen > rcache_big_room()) return 0;
    uint64_t h = key_hash(rc, db, key, klen);
    int64_t last = 0;
    for (unsigned t = 0; t < RCACHE_TABLES; t++) {
        uint64_t b = bucket_index(rc, t, h);
        const rcache_tags_t *g = rcache_tags(rc, t, b);
        for (unsigned w = 0; w < RCACHE_WAYS; w++) {
            if (tag_at(g, w) != tag_of(h)) continue;
            const rcache_slot_t *s = way(rc, t, b, w);
            if (!holds_key(s, h, db, key, klen) || s->gen != rc->gen[db]) continue;
            int64_t hit = atomic_load_explicit(&s->hit_ms, memory_order_relaxed);
            if (hit > last) last = hit;
        }
    }
    return last;
}

/* ---- the store (the only writer) ---- */

/* Begin writing s: its sequence made odd (a predecessor killed while
 * writing it left it odd: made even first). */
static uint32_t write_begin(rcache_slot_t *s)
{
    uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
    if (seq & 1) seq++;
    atomic_store_explicit(&s->seq, seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    return seq;
}

static void write_end(rcache_slot_t *s, uint32_t seq)
{
    atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
}

void rcache_store_begin(rcache_t *rc)
{
    for (unsigned i = 0; i < RCACHE_DBS; i++)
        atomic_fetch_add_explicit(&rc->gen[i], 1, memory_order_release);
    for (unsigned t = 0; t < RCACHE_TABLES; t++) {
        free(filled[t]);
        /* NULL: no filter */
        filled[t] = calloc((rc->tab[t].nbuckets + 63) / 64, sizeof(*filled[t]));
    }
}

static int bucket_filled(const rcache_t *rc, unsigned t, uint64_t h)
{
    uint64_t i = bucket_index(rc, t, h);
    return !filled[t] || (filled[t][i / 64] >> (i % 64) & 1);
}

void rcache_db_changed(rcache_t *rc, unsigned db)
{
    if (db < RCACHE_DBS) atomic_fetch_add_explicit(&rc->gen[db], 1, memory_order_release);
}

static void drop(rcache_t *rc, rcache_slot_t *s, rcache_tags_t *g, unsigned w)
{
    uint32_t seq = write_begin(s);
    /* Test hook: the store dies with the slot half written. */
    if (io_fault_point(IO_FAULT_CACHE_SLOT) == IO_FAULT_KILL) raise(SIGKILL);
    s->hash = 0;
    write_end(s, seq);
    /* Test hook: the store dies with the slot dropped, its tag still set. */
    if (io_fault_point(IO_FAULT_CACHE_TAG) == IO_FAULT_KILL) raise(SIGKILL);
    atomic_store_explicit(&g->tag[w], 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&rc->invalidations, 1, memory_order_relaxed);
}

int rcache_invalidate(rcache_t *rc, unsigned db, const void *key, size_t klen)
{
    if (db >= RCACHE_DBS || klen > rcache_big_room()) return 0;
    uint64_t h = key_hash(rc, db, key, klen);
    int dropped = 0;
    /* Every read of the key: all its slots share its buckets (the hash of
     * the key, not of the query, picks them). A slot of another key with
     * the same 64-bit hash goes too, which costs only its next read. */
    for (unsigned t = 0; t < RCACHE_TABLES; t++) {
        if (!bucket_filled(rc, t, h)) continue;
        uint64_t b = bucket_index(rc, t, h);
        rcache_tags_t *g = rcache_tags(rc, t, b);
        for (unsigned w = 0; w < RCACHE_WAYS; w++) {
            if (tag_at(g, w) != tag_of(h)) continue;
            rcache_slot_t *s = way(rc, t, b, w);
            if (s->hash != h || s->db != db) continue;
            drop(rc, s, g, w);
            dropped = 1;
        }
    }
    /* Test hook: the key is invalidated, the applied LSN that covers the
     * change not yet published. */
    if (dropped && io_fault_point(IO_FAULT_CACHE_INVAL) == IO_FAULT_KILL) raise(SIGKILL);
    return dropped;
}

static void fill(rcache_t *rc, unsigned t, unsigned db, const void *key, size_t klen,
                 const void *query, size_t qlen, const void *reply, size_t rlen)
{
    uint64_t h = key_hash(rc, db, key, klen);
    uint32_t gen = atomic_load_explicit(&rc->gen[db], memory_order_relaxed);
    uint64_t b = bucket_index(rc, t, h);
    rcache_tags_t *g = rcache_tags(rc, t, b);
    uint32_t tag = tag_of(h);
    /* The read's own slot, else an empty one, else the next in turn (a
     * slot of a flushed database's generation goes in its turn). */
    unsigned w = RCACHE_WAYS;
    for (unsigned i = 0; i < RCACHE_WAYS && w == RCACHE_WAYS; i++)
        if (tag_at(g, i) == tag && holds(way(rc, t, b, i), h, db, key, klen, query, qlen)) w = i;
    for (unsigned i = 0; i < RCACHE_WAYS && w == RCACHE_WAYS; i++)
        if (!tag_at(g, i)) w = i;
    if (w == RCACHE_WAYS) w = (unsigned)(rc->turn++ % RCACHE_WAYS);
    rcache_slot_t *s = way(rc, t, b, w);
    if (filled[t]) filled[t][b / 64] |= 1ull << (b % 64);
    uint32_t seq = write_begin(s);
    s->hash = h;
    /* Test hook: the store dies with the slot half written. */
    if (io_fault_point(IO_FAULT_CACHE_SLOT) == IO_FAULT_KILL) raise(SIGKILL);
    s->gen = gen;
    s->db = (uint16_t)db;
    s->klen = (uint16_t)klen;
    s->qlen = (uint16_t)qlen;
    s->rlen = (uint16_t)rlen;
    atomic_store_explicit(&s->hit_ms, 0, memory_order_relaxed);
    memcpy(s->data, key, klen);
    if (qlen) memcpy(s->data + klen, query, qlen);
    if (rlen) memcpy(s->data + klen + qlen, reply, rlen);
    write_end(s, seq);
    /* Test hook: the store dies with the slot written, its tag not yet. */
    if (io_fault_point(IO_FAULT_CACHE_TAG) == IO_FAULT_KILL) raise(SIGKILL);
    atomic_store_explicit(&g->tag[w], tag, memory_order_release);
    atomic_fetch_add_explicit(&rc->fills, 1, memory_order_relaxed);
}

void rcache_fill(rcache_t *rc, unsigned db, const void *key, size_t klen, const void *reply,
                 size_t rlen)
{
    if (db >= RCACHE_DBS || klen + rlen > rcache_room()) return;
    fill(rc, RCACHE_SMALL, db, key, klen, NULL, 0, reply, rlen);
}

void rcache_fill_query(rcache_t *rc, unsigned db, const void *key, size_t klen, const void *query,
                       size_t qlen, const void *reply, size_t rlen)
{
    if (db >= RCACHE_DBS || !qlen || !rlen) return;
    size_t n = klen + qlen + rlen;
    if (n <= room(rc, RCACHE_SMALL))
        fill(rc, RCACHE_SMALL, db, key, klen, query, qlen, reply, rlen);
    else if (n <= room(rc, RCACHE_BIG))
        fill(rc, RCACHE_BIG, db, key, klen, query, qlen, reply, rlen);
}
