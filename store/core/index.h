/*
 * index.h - the store's key index: a chained hash table from binary keys to
 * entries, resized by incremental rehashing so that no single operation pays
 * for moving millions of keys (the store is single-threaded: a long pause
 * there stalls every read and every write reply of the server).
 *
 * An entry is one allocation: a 19-byte header, then the key bytes, then
 * whatever the owner (store/core/entry.c) keeps after the key (an inline value
 * prefix and an extent). The index only reads `next`, `meta`'s tag, `klen`
 * and the key bytes; everything else in the header belongs to the owner.
 *
 * `meta` is two things in one word: its low 8 bits (IDX_TAG_MASK) are a tag
 * of the key's hash (its top 8 bits), so a chain walk skips other keys
 * without a memcmp; its upper 24 bits (idx_access) are the owner's, the
 * access time or LFU counter eviction reads (store/core/access.c). The full
 * hash is not kept: a rehash recomputes it from the key (XXH3 of a short
 * key costs a few ns, against the 8 bytes per key a second word would
 * cost; D32).
 *
 * Slots: idx_find() returns the link that points at an entry (a bucket head
 * or a predecessor's `next`), so the owner can replace the entry with a
 * reallocated copy (idx_relink) or remove it without a second lookup. A slot
 * stays valid until the next idx_insert(), idx_remove(), idx_rehash_step(),
 * idx_scan() or idx_clear() - only those move entries.
 */
#ifndef ATTIC_STORE_INDEX_H
#define ATTIC_STORE_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct idx_entry {
    struct idx_entry *next; /* bucket chain */
    uint32_t meta;          /* bits 0-7 a tag of the hash, 8-31 the owner's (above) */
    uint32_t klen;
    uint8_t ilen;         /* owner's: inline value prefix length */
    uint8_t vkind;        /* owner's: how the rest of the value is kept */
    uint8_t eflags;       /* owner's: what follows the value (entry.h) */
    unsigned char data[]; /* key bytes, then the owner's bytes */
} idx_entry_t;

#define IDX_TAG_MASK   0xffu
#define IDX_ACCESS_MAX 0xffffffu /* the owner's 24 bits */

static inline uint32_t idx_access(const idx_entry_t *e)
{
    return e->meta >> 8;
}
static inline void idx_set_access(idx_entry_t *e, uint32_t v)
{
    e->meta = (e->meta & IDX_TAG_MASK) | ((v & IDX_ACCESS_MAX) << 8);
}

/* Header bytes before the key (not sizeof, which pads to 24). */
#define IDX_ENTRY_HDR offsetof(idx_entry_t, data)

/* Frees an entry the index dropped (idx_remove, idx_clear, idx_scan); arg is
 * the free_arg given to idx_init. */
typedef void (*idx_free_fn)(void *arg, idx_entry_t *e);

typedef struct idx {
    idx_entry_t **table[2]; /* [1] is the rehash target while rehashing */
    uint64_t size[2];       /* buckets, a power of two (0 = no table) */
    uint64_t used[2];       /* entries in each table */
    int64_t rehash_idx;     /* next bucket of table[0] to move; -1 = not rehashing */
    uint64_t seed;
    idx_free_fn free_entry;
    void *free_arg;
} idx_t;

/* Initialise an empty index. seed keys the hash (pick it at random in the
 * server, so that clients cannot aim keys at one bucket). Returns 0 or -1
 * (out of memory). */
int idx_init(idx_t *ix, uint64_t seed, idx_free_fn free_entry, void *free_arg);

/* Free every entry (through free_entry) and the tables. */
void idx_destroy(idx_t *ix);

/* Drop every entry and shrink to the initial table (FLUSHALL). */
void idx_clear(idx_t *ix);

static inline uint64_t idx_count(const idx_t *ix)
{
    return ix->used[0] + ix->used[1];
}

static inline const unsigned char *idx_key(const idx_entry_t *e)
{
    return e->data;
}

/* The link that points at the entry with this key, or NULL when absent. */
idx_entry_t **idx_find(idx_t *ix, const void *key, uint32_t klen);

/*
 * Add e, whose key (e->klen bytes at e->data) must not be present. Sets
 * e->meta (its tag; the owner's bits to 0) and e->next. May start a resize and moves a few buckets
 * of one in progress.
 */
void idx_insert(idx_t *ix, idx_entry_t *e);

/* Unlink the entry *slot points at and free it. */
void idx_remove(idx_t *ix, idx_entry_t **slot);

/* Unlink the entry *slot points at and return it (the caller frees it). */
idx_entry_t *idx_unlink(idx_t *ix, idx_entry_t **slot);

/* Put new_e (same key, e.g. a realloc'd copy of the old entry) in place of
 * the entry *slot pointed at. The old entry is not freed here. */
static inline void idx_relink(idx_entry_t **slot, idx_entry_t *old_e, idx_entry_t *new_e)
{
    new_e->next = old_e->next;
    new_e->meta = old_e->meta;
    *slot = new_e;
}

/*
 * Move up to n buckets of a resize in progress (and skip at most 10 * n
 * empty ones). Starts a shrink when the table is mostly empty. Returns 1
 * while a resize is still in progress, 0 when none is.
 */
int idx_rehash_step(idx_t *ix, int n);

/*
 * Visit every entry of the buckets at `cursor` (Redis' SCAN algorithm: an
 * entry present for a whole scan, from cursor 0 until 0 comes back, is
 * visited at least once, even across resizes; some may be visited twice).
 * When visit returns nonzero the entry is removed and freed. Returns the next
 * cursor, 0 when the scan is complete.
 */
typedef int (*idx_visit_fn)(void *arg, idx_entry_t *e);
uint64_t idx_scan(idx_t *ix, uint64_t cursor, idx_visit_fn visit, void *arg);

/* Visit every entry exactly once, in no particular order, without changing
 * the index (visit must not insert or remove). Stops early and returns the
 * visitor's value when it returns nonzero; returns 0 otherwise. */
int idx_foreach(const idx_t *ix, idx_visit_fn visit, void *arg);

/*
 * A random entry, or NULL when the index is empty (RANDOMKEY). As Redis'
 * dictGetRandomKey: a random non-empty bucket, then a random entry of its
 * chain, so not exactly uniform when chains differ in length. *rng is the
 * caller's generator state (any value; advanced here). Never loops without
 * bound: after a few empty buckets (a table left sparse by mass deletion,
 * not yet shrunk) it walks forward from a random bucket instead. Read-only.
 */
idx_entry_t *idx_random(const idx_t *ix, uint64_t *rng);

/*
 * A random entry, every entry with the same chance (idx_random favours
 * the keys of short chains): HRANDFIELD and RANDOMKEY, whose draws Redis
 * makes fair too (dictGetFairRandomKey; unit/type/hash.tcl checks a
 * 10-field hash's with a chi-square test). NULL when empty. Read-only.
 */
#define IDX_FAIR_CHAIN 8
idx_entry_t *idx_random_fair(const idx_t *ix, uint64_t *rng);

/* splitmix64: a tiny generator, good enough to pick buckets (idx_random)
 * and eviction's samples (core/evict.c); *state is advanced. */
uint64_t idx_rand_next(uint64_t *state);

/* Bytes of bucket arrays (for RAM accounting; entries are counted by the
 * owner, which knows their sizes). */
uint64_t idx_table_bytes(const idx_t *ix);

#endif
