/*
 * index.c - the store's key index (index.h): chained hashing with
 * incremental rehash, in the manner of Redis' dict.c.
 *
 * Runs in the store process only, single-threaded. Invariants:
 *   - every entry is in exactly one of table[0] / table[1];
 *   - while rehashing (rehash_idx >= 0), buckets of table[0] below rehash_idx
 *     are empty and new entries go to table[1];
 *   - the number of entries is used[0] + used[1].
 * A crash loses nothing: the index is rebuilt by replaying the log.
 *
 * Why incremental: doubling a table of 16M buckets in one go would move
 * every entry while no read or write reply is served. Instead each insert
 * moves two buckets and the store's idle loop moves more, so the pause per
 * operation stays at a few cache misses. Large bucket arrays are mapped
 * directly (idx_table_alloc): fresh zero pages, faulted in as the rehash
 * reaches them. Through the allocator, mimalloc's calloc zeroes eagerly:
 * measured 25 ms for 64 MiB and 113 ms for 128 MiB (the table at ~16M keys),
 * a pause in one insert; mmap takes microseconds.
 *
 * Growth at load factor 2 (Redis grows at 1): the bucket array is RAM per
 * key that holds nothing (8 bytes a bucket), and chains of one or two
 * entries cost a lookup one more cache miss at most. At 10M keys the array
 * is 2^23 buckets, not 2^24: 71 bytes of store RSS per key instead of 77
 * (D73). Shrink when under 1/8 full, so a workload oscillating around a
 * power of two does not resize back and forth.
 */
#include "index.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define IDX_MIN_SIZE   16u
#define IDX_MMAP_BYTES (1u << 20) /* bucket arrays at least this big are mapped */

static idx_entry_t **idx_table_alloc(uint64_t buckets)
{
    size_t bytes = (size_t)buckets * sizeof(idx_entry_t *);
    if (bytes < IDX_MMAP_BYTES) return calloc(buckets, sizeof(idx_entry_t *));
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void idx_table_free(idx_entry_t **t, uint64_t buckets)
{
    size_t bytes = (size_t)buckets * sizeof(idx_entry_t *);
    if (!t) return;
    if (bytes < IDX_MMAP_BYTES)
        free(t);
    else
        munmap(t, bytes);
}

static uint32_t idx_hash(const idx_t *ix, const void *key, uint32_t klen)
{
    /* XXH3 is fast on short keys and keyed by the seed (HashDoS). */
    return (uint32_t)XXH3_64bits_withSeed(key, klen, ix->seed);
}

/* The hash's top bits: buckets use the low ones, so the tag still tells
 * apart keys that share a bucket. */
static uint32_t idx_tag(uint32_t h)
{
    return h >> 24;
}

int idx_init(idx_t *ix, uint64_t seed, idx_free_fn free_entry, void *free_arg)
{
    memset(ix, 0, sizeof(*ix));
    ix->seed = seed;
    ix->free_entry = free_entry;
    ix->free_arg = free_arg;
    ix->rehash_idx = -1;
    ix->table[0] = idx_table_alloc(IDX_MIN_SIZE);
    if (!ix->table[0]) return -1;
    ix->size[0] = IDX_MIN_SIZE;
    return 0;
}

static void idx_free_table(idx_t *ix, int t)
{
    for (uint64_t b = 0; b < ix->size[t]; b++) {
        idx_entry_t *e = ix->table[t][b];
        while (e) {
            idx_entry_t *next = e->next;
            ix->free_entry(ix->free_arg, e);
            e = next;
        }
    }
    idx_table_free(ix->table[t], ix->size[t]);
    ix->table[t] = NULL;
    ix->size[t] = 0;
    ix->used[t] = 0;
}

void idx_destroy(idx_t *ix)
{
    idx_free_table(ix, 0);
    idx_free_table(ix, 1);
    ix->rehash_idx = -1;
}

void idx_clear(idx_t *ix)
{
    idx_destroy(ix);
    ix->table[0] = idx_table_alloc(IDX_MIN_SIZE);
    /* Out of memory here leaves size 0; idx_insert retries the allocation. */
    ix->size[0] = ix->table[0] ? IDX_MIN_SIZE : 0;
}

/* Start moving everything to a table of `size` buckets. Out of memory is
 * not an error: the table keeps working, only with longer chains. */
static void idx_start_resize(idx_t *ix, uint64_t size)
{
    if (ix->rehash_idx >= 0 || size == ix->size[0]) return;
    idx_entry_t **t = idx_table_alloc(size);
    if (!t) return;
    ix->table[1] = t;
    ix->size[1] = size;
    ix->used[1] = 0;
    ix->rehash_idx = 0;
}

static void idx_finish_resize(idx_t *ix)
{
    idx_table_free(ix->table[0], ix->size[0]);
    ix->table[0] = ix->table[1];
    ix->size[0] = ix->size[1];
    ix->used[0] = ix->used[1];
    ix->table[1] = NULL;
    ix->size[1] = 0;
    ix->used[1] = 0;
    ix->rehash_idx = -1;
}

static uint64_t pow2_at_least(uint64_t n)
{
    uint64_t s = IDX_MIN_SIZE;
    while (s < n)
        s <<= 1;
    return s;
}

int idx_rehash_step(idx_t *ix, int n)
{
    if (ix->rehash_idx < 0) {
        uint64_t count = idx_count(ix);
        if (ix->size[0] > IDX_MIN_SIZE && count < ix->size[0] / 8)
            idx_start_resize(ix, pow2_at_least(count * 2));
        if (ix->rehash_idx < 0) return 0;
    }
    int empty_budget = n * 10;
    uint64_t mask1 = ix->size[1] - 1;
    while (n > 0 && (uint64_t)ix->rehash_idx < ix->size[0]) {
        idx_entry_t *e = ix->table[0][ix->rehash_idx];
        if (!e) {
            ix->rehash_idx++;
            if (--empty_budget == 0) break;
            continue;
        }
        while (e) {
            idx_entry_t *next = e->next;
            uint64_t b = idx_hash(ix, e->data, e->klen) & mask1;
            e->next = ix->table[1][b];
            ix->table[1][b] = e;
            ix->used[0]--;
            ix->used[1]++;
            e = next;
        }
        ix->table[0][ix->rehash_idx] = NULL;
        ix->rehash_idx++;
        n--;
    }
    if ((uint64_t)ix->rehash_idx >= ix->size[0]) {
        idx_finish_resize(ix);
        return 0;
    }
    return 1;
}

idx_entry_t **idx_find(idx_t *ix, const void *key, uint32_t klen)
{
    uint32_t h = idx_hash(ix, key, klen), tag = idx_tag(h);
    for (int t = 0; t < 2; t++) {
        if (ix->size[t] == 0) continue;
        idx_entry_t **slot = &ix->table[t][h & (ix->size[t] - 1)];
        for (; *slot; slot = &(*slot)->next) {
            idx_entry_t *e = *slot;
            if ((e->meta & IDX_TAG_MASK) == tag && e->klen == klen &&
                memcmp(e->data, key, klen) == 0)
                return slot;
        }
        if (ix->rehash_idx < 0) break;
    }
    return NULL;
}

void idx_insert(idx_t *ix, idx_entry_t *e)
{
    if (ix->size[0] == 0) { /* a failed allocation in idx_clear */
        ix->table[0] = idx_table_alloc(IDX_MIN_SIZE);
        if (!ix->table[0]) abort(); /* as buf.h: out of memory aborts */
        ix->size[0] = IDX_MIN_SIZE;
    }
    if (ix->rehash_idx >= 0)
        idx_rehash_step(ix, 2);
    else if (idx_count(ix) >= 2 * ix->size[0])
        idx_start_resize(ix, ix->size[0] * 2);
    uint32_t h = idx_hash(ix, e->data, e->klen);
    e->meta = idx_tag(h);
    int t = ix->rehash_idx >= 0 ? 1 : 0;
    idx_entry_t **head = &ix->table[t][h & (ix->size[t] - 1)];
    e->next = *head;
    *head = e;
    ix->used[t]++;
}

idx_entry_t *idx_unlink(idx_t *ix, idx_entry_t **slot)
{
    idx_entry_t *e = *slot;
    /* While rehashing, the entry is in table[0] iff it is on the chain of its
     * table[0] bucket (entries inserted meanwhile went to table[1] whatever
     * their bucket), so walk that chain: on average under one entry long. */
    int t = 0;
    if (ix->rehash_idx >= 0) {
        t = 1;
        uint32_t h = idx_hash(ix, e->data, e->klen);
        for (idx_entry_t *x = ix->table[0][h & (ix->size[0] - 1)]; x; x = x->next) {
            if (x == e) {
                t = 0;
                break;
            }
        }
    }
    *slot = e->next;
    ix->used[t]--;
    return e;
}

void idx_remove(idx_t *ix, idx_entry_t **slot)
{
    ix->free_entry(ix->free_arg, idx_unlink(ix, slot));
}

static uint64_t rev64(uint64_t v)
{
    v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
    v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
    v = ((v >> 4) & 0x0f0f0f0f0f0f0f0full) | ((v & 0x0f0f0f0f0f0f0f0full) << 4);
    return __builtin_bswap64(v);
}

/* Visit one bucket, removing entries the visitor asks to drop. */
static void idx_scan_bucket(idx_t *ix, int t, uint64_t b, idx_visit_fn visit, void *arg)
{
    idx_entry_t **slot = &ix->table[t][b];
    while (*slot) {
        idx_entry_t *e = *slot;
        if (visit(arg, e)) {
            *slot = e->next;
            ix->used[t]--;
            ix->free_entry(ix->free_arg, e);
        } else {
            slot = &e->next;
        }
    }
}

uint64_t idx_scan(idx_t *ix, uint64_t v, idx_visit_fn visit, void *arg)
{
    if (idx_count(ix) == 0 || ix->size[0] == 0) return 0;
    uint64_t m0;
    if (ix->rehash_idx < 0) {
        m0 = ix->size[0] - 1;
        idx_scan_bucket(ix, 0, v & m0, visit, arg);
    } else {
        int small = ix->size[0] <= ix->size[1] ? 0 : 1, large = 1 - small;
        m0 = ix->size[small] - 1;
        uint64_t m1 = ix->size[large] - 1;
        idx_scan_bucket(ix, small, v & m0, visit, arg);
        /* Every bucket of the larger table that the small bucket expands to. */
        do {
            idx_scan_bucket(ix, large, v & m1, visit, arg);
            v = (((v | m0) + 1) & ~m0) | (v & m0);
        } while (v & (m0 ^ m1));
    }
    /* Increment the reversed cursor: the order that survives resizes. */
    v |= ~m0;
    v = rev64(v);
    v++;
    return rev64(v);
}

int idx_foreach(const idx_t *ix, idx_visit_fn visit, void *arg)
{
    for (int t = 0; t < 2; t++) {
        for (uint64_t b = 0; b < ix->size[t]; b++) {
            for (idx_entry_t *e = ix->table[t][b]; e; e = e->next) {
                int rc = visit(arg, e);
                if (rc) return rc;
            }
        }
    }
    return 0;
}

uint64_t idx_table_bytes(const idx_t *ix)
{
    return (ix->size[0] + ix->size[1]) * sizeof(idx_entry_t *);
}

uint64_t idx_rand_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Bucket h of the logical range [table[0] | table[1]]. */
static idx_entry_t *idx_bucket_at(const idx_t *ix, uint64_t h)
{
    return h < ix->size[0] ? ix->table[0][h] : ix->table[1][h - ix->size[0]];
}

static idx_entry_t *idx_pick_in_chain(idx_entry_t *e, uint64_t *rng)
{
    uint64_t len = 0;
    for (idx_entry_t *x = e; x; x = x->next)
        len++;
    for (uint64_t k = idx_rand_next(rng) % len; k > 0; k--)
        e = e->next;
    return e;
}

idx_entry_t *idx_random(const idx_t *ix, uint64_t *rng)
{
    if (idx_count(ix) == 0 || ix->size[0] == 0) return NULL;
    /* While rehashing, table[0]'s buckets below rehash_idx are empty: pick
     * among the others and all of table[1]. */
    uint64_t first = ix->rehash_idx >= 0 ? (uint64_t)ix->rehash_idx : 0;
    uint64_t span = ix->size[0] + ix->size[1] - first;
    /* At load factor >= 1/8 (the shrink threshold) a few probes find a
     * non-empty bucket with near certainty. */
    for (int tries = 0; tries < 64; tries++) {
        idx_entry_t *e = idx_bucket_at(ix, first + idx_rand_next(rng) % span);
        if (e) return idx_pick_in_chain(e, rng);
    }
    uint64_t start = idx_rand_next(rng) % span;
    for (uint64_t i = 0; i < span; i++) {
        idx_entry_t *e = idx_bucket_at(ix, first + (start + i) % span);
        if (e) return idx_pick_in_chain(e, rng);
    }
    return NULL; /* not reached: count > 0 */
}

idx_entry_t *idx_random_fair(const idx_t *ix, uint64_t *rng)
{
    if (idx_count(ix) == 0 || ix->size[0] == 0) return NULL;
    uint64_t first = ix->rehash_idx >= 0 ? (uint64_t)ix->rehash_idx : 0;
    uint64_t span = ix->size[0] + ix->size[1] - first;
    /* Rejection: a random bucket, then a random place among bound; a
     * place past the chain's end draws again. Each entry of a chain no
     * longer than bound is drawn with the same probability, 1 / (span *
     * bound) per try; a longer chain raises the bound for the rest of
     * this draw. About bound / load tries: 4 at the growth load, 64 at
     * the shrink load (1/8); a sparser table's draw ends in idx_random. */
    uint64_t bound = IDX_FAIR_CHAIN;
    for (int tries = 0; tries < 1024; tries++) {
        idx_entry_t *e = idx_bucket_at(ix, first + idx_rand_next(rng) % span);
        uint64_t len = 0;
        for (idx_entry_t *x = e; x; x = x->next)
            len++;
        if (len > bound) {
            bound = len;
            continue;
        }
        uint64_t at = idx_rand_next(rng) % bound;
        if (at >= len) continue;
        while (at--)
            e = e->next;
        return e;
    }
    return idx_random(ix, rng);
}
