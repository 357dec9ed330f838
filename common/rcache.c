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

#include "io_fault.h"
#include "rcache.h"

rcache_t *rcache_shared;

/* The store's own memory, not shared: one bit per bucket that a fill has
 * used since this store began (rcache_store_begin), so that a change to a
 * key whose bucket was never filled touches none of the mapping (a
 * write-only load would otherwise fault in every page of it, each change
 * reading one bucket). NULL (every bucket may hold a slot) in a process
 * that never called rcache_store_begin. */
static uint64_t *filled;

rcache_t *rcache_create(uint64_t bytes)
{
    if (bytes < RCACHE_MIN_BYTES) return NULL;
    uint64_t nb = 1;
    while ((nb * 2) * RCACHE_WAYS * sizeof(rcache_slot_t) <= bytes)
        nb *= 2;
    uint64_t size = sizeof(rcache_t) + nb * RCACHE_WAYS * sizeof(rcache_slot_t);
    /* Pages are touched only as slots are filled: an idle cache costs
     * address space, not RAM. */
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    rcache_t *rc = p;
    rc->size = size;
    rc->nbuckets = nb;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    rc->seed = XXH3_64bits_withSeed(&ts, sizeof(ts), (uint64_t)getpid());
    return rc;
}

void rcache_destroy(rcache_t *rc)
{
    if (rc) munmap(rc, rc->size);
}

static uint64_t key_hash(const rcache_t *rc, unsigned db, const void *key, size_t klen)
{
    uint64_t h = XXH3_64bits_withSeed(key, klen, rc->seed ^ (db * 0x9E3779B97F4A7C15ull));
    return h ? h : 1;
}

static uint64_t bucket_index(const rcache_t *rc, uint64_t h)
{
    return h & (rc->nbuckets - 1);
}

static rcache_slot_t *bucket_of(const rcache_t *rc, uint64_t h)
{
    return (rcache_slot_t *)&rc->slots[bucket_index(rc, h) * RCACHE_WAYS];
}

/* The store's: the slot that holds (or held, when its generation is
 * stale) the key of hash h in db, or NULL. The store writes every slot,
 * so it reads them without the seqlock. A key has one slot at most:
 * rcache_fill reuses it. */
static rcache_slot_t *own_slot(const rcache_t *rc, uint64_t h, unsigned db)
{
    rcache_slot_t *b = bucket_of(rc, h);
    for (unsigned w = 0; w < RCACHE_WAYS; w++)
        if (b[w].hash == h && b[w].db == db) return &b[w];
    return NULL;
}

int rcache_get(rcache_t *rc, unsigned db, const void *key, size_t klen, unsigned char *out,
               int64_t now_ms)
{
    rcache_mark_t mark;
    return rcache_get_marked(rc, db, key, klen, out, now_ms, &mark);
}

int rcache_unchanged(const rcache_t *rc, const rcache_mark_t *m)
{
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&rc->slots[m->slot].seq, memory_order_relaxed) == m->seq &&
           atomic_load_explicit(&rc->gen[m->db], memory_order_relaxed) == m->gen;
}

int rcache_get_marked(rcache_t *rc, unsigned db, const void *key, size_t klen, unsigned char *out,
                      int64_t now_ms, rcache_mark_t *mark)
{
    if (db >= RCACHE_DBS || klen > rcache_room()) return -1;
    uint64_t h = key_hash(rc, db, key, klen);
    rcache_slot_t *b = bucket_of(rc, h);
    for (unsigned w = 0; w < RCACHE_WAYS; w++) {
        rcache_slot_t *s = &b[w];
        uint32_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (seq & 1) continue;
        /* Read as the store may be rewriting it: nothing read is trusted
         * before the sequence is found unchanged below. */
        uint64_t sh = __atomic_load_n(&s->hash, __ATOMIC_RELAXED);
        if (sh != h) continue;
        uint16_t sdb = __atomic_load_n(&s->db, __ATOMIC_RELAXED);
        uint16_t sk = __atomic_load_n(&s->klen, __ATOMIC_RELAXED);
        uint16_t rl = __atomic_load_n(&s->rlen, __ATOMIC_RELAXED);
        uint32_t gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED);
        if (sdb != db || sk != klen || (size_t)sk + rl > rcache_room()) continue;
        int same = memcmp(s->data, key, klen) == 0;
        memcpy(out, s->data + sk, rl);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->seq, memory_order_relaxed) != seq) return -1;
        if (!same) continue;
        if (gen != atomic_load_explicit(&rc->gen[db], memory_order_acquire)) return -1;
        *mark =
            (rcache_mark_t){.slot = (uint64_t)(s - rc->slots), .seq = seq, .gen = gen, .db = db};
        /* Once a second at most: the line stays shared between readers. */
        if (rl && now_ms - atomic_load_explicit(&s->hit_ms, memory_order_relaxed) >= 1000)
            atomic_store_explicit(&s->hit_ms, now_ms, memory_order_relaxed);
        return rl;
    }
    return -1;
}

int64_t rcache_hit_ms(const rcache_t *rc, unsigned db, const void *key, size_t klen)
{
    if (db >= RCACHE_DBS || klen > rcache_room()) return 0;
    const rcache_slot_t *s = own_slot(rc, key_hash(rc, db, key, klen), db);
    if (!s || s->klen != klen || s->gen != rc->gen[db] || memcmp(s->data, key, klen) != 0) return 0;
    return atomic_load_explicit(&s->hit_ms, memory_order_relaxed);
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
    free(filled);
    filled = calloc((rc->nbuckets + 63) / 64, sizeof(*filled)); /* NULL: no filter */
}

static int bucket_filled(const rcache_t *rc, uint64_t h)
{
    uint64_t i = bucket_index(rc, h);
    return !filled || (filled[i / 64] >> (i % 64) & 1);
}

void rcache_db_changed(rcache_t *rc, unsigned db)
{
    if (db < RCACHE_DBS) atomic_fetch_add_explicit(&rc->gen[db], 1, memory_order_release);
}

int rcache_invalidate(rcache_t *rc, unsigned db, const void *key, size_t klen)
{
    if (db >= RCACHE_DBS || klen > rcache_room()) return 0;
    uint64_t h = key_hash(rc, db, key, klen);
    rcache_slot_t *s = bucket_filled(rc, h) ? own_slot(rc, h, db) : NULL;
    if (!s) return 0;
    uint32_t seq = write_begin(s);
    /* Test hook: the store dies with the slot half written. */
    if (io_fault_point(IO_FAULT_CACHE_SLOT) == IO_FAULT_KILL) raise(SIGKILL);
    s->hash = 0;
    write_end(s, seq);
    atomic_fetch_add_explicit(&rc->invalidations, 1, memory_order_relaxed);
    /* Test hook: the key is invalidated, the applied LSN that covers the
     * change not yet published. */
    if (io_fault_point(IO_FAULT_CACHE_INVAL) == IO_FAULT_KILL) raise(SIGKILL);
    return 1;
}

void rcache_fill(rcache_t *rc, unsigned db, const void *key, size_t klen, const void *reply,
                 size_t rlen)
{
    if (db >= RCACHE_DBS || klen + rlen > rcache_room()) return;
    uint64_t h = key_hash(rc, db, key, klen);
    uint32_t gen = atomic_load_explicit(&rc->gen[db], memory_order_relaxed);
    rcache_slot_t *b = bucket_of(rc, h);
    /* The key's own slot, else a free or stale one, else the next in turn. */
    rcache_slot_t *s = own_slot(rc, h, db);
    for (unsigned w = 0; w < RCACHE_WAYS && !s; w++) {
        unsigned d = b[w].db;
        if (!b[w].hash || (d < RCACHE_DBS && b[w].gen != rc->gen[d])) s = &b[w];
    }
    if (!s) s = &b[rc->turn++ % RCACHE_WAYS];
    if (filled) {
        uint64_t i = bucket_index(rc, h);
        filled[i / 64] |= 1ull << (i % 64);
    }
    uint32_t seq = write_begin(s);
    s->hash = h;
    /* Test hook: the store dies with the slot half written. */
    if (io_fault_point(IO_FAULT_CACHE_SLOT) == IO_FAULT_KILL) raise(SIGKILL);
    s->gen = gen;
    s->db = (uint16_t)db;
    s->klen = (uint16_t)klen;
    s->rlen = (uint16_t)rlen;
    atomic_store_explicit(&s->hit_ms, 0, memory_order_relaxed);
    memcpy(s->data, key, klen);
    if (rlen) memcpy(s->data + klen, reply, rlen);
    write_end(s, seq);
    atomic_fetch_add_explicit(&rc->fills, 1, memory_order_relaxed);
}
