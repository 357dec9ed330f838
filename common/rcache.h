/*
 * rcache.h - the read cache (D70): GET's replies, which the store leaves in
 * shared memory for the frontends to answer from without a store round
 * trip. One more MAP_SHARED mapping, made by the master before it forks
 * (rcache_create), so every process sees it at the same address through
 * the global rcache_shared; NULL when read-cache-size is 0 and in the
 * processes of tests and tools.
 *
 * Who writes what. Only the store writes slots: it fills one after it
 * answered a GET or an MGET (the value's reply, or the key's absence) or
 * applied a SET or MSET of a small string without a TTL to a key the
 * cache held (its new value then), and it
 * invalidates one whenever a record it applies changes that key
 * (core/watch.c reports every change), before it publishes the applied LSN
 * (shm_t.store_counts_lsn). A FLUSHDB, FLUSHALL or SWAPDB bumps the
 * database's generation instead of finding its keys, and a store that
 * starts bumps every database's (its predecessor may have died in the
 * middle of a slot). Frontends only read.
 *
 * Why a hit is a correct read (contract 3). A frontend answers from the
 * cache only when the store's published applied LSN covers both the
 * durable LSN and its connection's last write, read in that order: every
 * write whose reply was sent before is then applied, and its invalidation
 * was stored before that LSN was published. The store fills only from
 * state it has applied, which is durable. So a hit is the answer the
 * store itself would give at some moment after the read arrived.
 *
 * Slots are seqlocks: the store makes a slot's sequence odd, writes it,
 * makes it even again; a frontend copies what it needs and then checks
 * that the sequence did not move (and was even). A store killed in the
 * middle leaves it odd: frontends skip it, and the next store's write
 * makes it even first. Buckets hold RCACHE_WAYS slots; a full bucket's
 * slots are replaced in turn.
 */
#ifndef ATTIC_RCACHE_H
#define ATTIC_RCACHE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define RCACHE_SLOT_BYTES 512u
#define RCACHE_WAYS       4u
#define RCACHE_DBS        256u /* databases past this are never cached */
#define RCACHE_MIN_BYTES  (1u << 20)

typedef struct rcache_slot {
    _Atomic uint32_t seq; /* odd while the store writes the slot */
    uint32_t gen;         /* its database's generation when filled */
    uint64_t hash;        /* of (database, key); 0 = empty */
    uint16_t db;
    uint16_t klen;
    uint16_t rlen; /* reply bytes after the key (0: the key is absent) */
    uint16_t unused_;
    /* The last hit (wall clock ms, 0: none since the fill), written by
     * frontends without the seqlock: a hint for OBJECT IDLETIME, which
     * the store's own lookups no longer see for these reads. */
    _Atomic int64_t hit_ms;
    unsigned char data[RCACHE_SLOT_BYTES - 32]; /* the key, then the reply */
} rcache_slot_t;

_Static_assert(sizeof(rcache_slot_t) == RCACHE_SLOT_BYTES, "one slot is RCACHE_SLOT_BYTES");

typedef struct rcache {
    uint64_t size;     /* bytes of the whole mapping */
    uint64_t nbuckets; /* a power of two */
    uint64_t seed;
    uint64_t turn; /* the store's: which way of a full bucket goes next */
    _Alignas(64) _Atomic uint32_t gen[RCACHE_DBS];
    /* The store's counts (INFO atticdb_read_cache_*). */
    _Atomic uint64_t fills, invalidations;
    _Alignas(64) rcache_slot_t slots[];
} rcache_t;

/* The mapping every process of this server shares (NULL: none). */
extern rcache_t *rcache_shared;

/* Map a cache of at most `bytes` of slots (a power of two; master, before
 * forking), plus its header. Returns NULL
 * when bytes is below RCACHE_MIN_BYTES (no cache) or the mapping failed
 * (errno set). */
rcache_t *rcache_create(uint64_t bytes);
void rcache_destroy(rcache_t *rc);

/* The largest key plus reply a slot holds. */
static inline size_t rcache_room(void)
{
    return sizeof(((rcache_slot_t *)0)->data);
}

/* ---- frontends ---- */

/*
 * The cached answer of GET key in database db. Returns the reply's length
 * (copied into out, at least rcache_room() bytes), 0 when the cache knows
 * the key is absent, -1 when it knows nothing. The caller has checked that
 * the applied LSN covers what its read must see (above). A value's hit
 * notes now_ms in the slot (rcache_hit_ms).
 */
int rcache_get(rcache_t *rc, unsigned db, const void *key, size_t klen, unsigned char *out,
               int64_t now_ms);

/* A slot as one rcache_get_marked found it. Several keys read one after
 * another are one snapshot only when none of their slots moved since it
 * was read (rcache_unchanged) and, read after that, the applied LSN still
 * covers the durable LSN: then no change to those keys was applied between
 * the first read and the check, and none was half applied at the check. */
typedef struct rcache_mark {
    uint64_t slot;
    uint32_t seq, gen;
    unsigned db;
} rcache_mark_t;
int rcache_get_marked(rcache_t *rc, unsigned db, const void *key, size_t klen, unsigned char *out,
                      int64_t now_ms, rcache_mark_t *mark);
int rcache_unchanged(const rcache_t *rc, const rcache_mark_t *mark);

/* ---- the store ---- */

/* A store starts: every slot left by a predecessor is stale. (It also
 * starts the store's own record of which buckets it filled, which spares
 * the mapping a change to a key in a bucket never filled.) */
void rcache_store_begin(rcache_t *rc);
/* GET key in db answered reply (rlen 0: the key is absent), or a write
 * left key with the value that reply carries. */
void rcache_fill(rcache_t *rc, unsigned db, const void *key, size_t klen, const void *reply,
                 size_t rlen);
/* A record changed key in db: its slot is dropped. Returns 1 when it had
 * one, 0 when the key was not in the cache. */
int rcache_invalidate(rcache_t *rc, unsigned db, const void *key, size_t klen);
/* Every key of db changed (FLUSHDB, FLUSHALL, SWAPDB). */
void rcache_db_changed(rcache_t *rc, unsigned db);
/* When a frontend last answered GET key in db from the cache (wall clock
 * ms), 0 when none did since the store filled its slot. */
int64_t rcache_hit_ms(const rcache_t *rc, unsigned db, const void *key, size_t klen);

#endif
