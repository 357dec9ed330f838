/*
 * rcache.h - the read cache (D70, D71): replies of reads, which the store
 * leaves in shared memory for the frontends to answer from without a store
 * round trip: GET's, and those of the other reads of one key that the
 * registry marks RC (LRANGE, HGETALL, ZSCORE ...), kept under the key and
 * a query (the protocol, the command and the words after the key). One more MAP_SHARED mapping,
 * made by the master before it forks (rcache_create), so every process sees it at the same address
 * through the global rcache_shared; NULL when read-cache-size is 0 and in the processes of tests
 * and tools.
 *
 * Who writes what. Only the store writes slots: it fills one after it
 * answered a GET or an MGET (the value's reply, or the key's absence),
 * another RC read of a key that exists without a TTL (its reply), or
 * applied a SET or MSET of a small string without a TTL to a key the
 * cache held (its new value then), and it drops every slot of a key
 * whenever a record it applies changes that key (all of a key's slots are
 * in the bucket its hash picks in each table; core/watch.c reports every
 * change), before it publishes the applied LSN
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
 * slots are replaced in turn. Two tables: small slots (GET's replies and
 * short ones), and big ones for replies up to about 2 KB (LRANGE of a
 * hundred short elements).
 *
 * Each bucket has a tag line (D75): one 64-byte line of a 32-bit tag of
 * the hash of each of its slots' keys (0: empty), which the store writes
 * after the slot. Lookups, fills and invalidations read the line and then
 * only the slots whose tag matches, so a bucket can have 16 ways (a key
 * whose bucket is full is rarely the one evicted and read again) for the
 * cost of one line. A tag is a hint: what a slot holds is decided by the
 * slot alone, under its seqlock.
 */
#ifndef ATTIC_RCACHE_H
#define ATTIC_RCACHE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define RCACHE_SLOT_BYTES     512u  /* a slot of the small table */
#define RCACHE_BIG_SLOT_BYTES 2048u /* a slot of the big table (D71) */
#define RCACHE_WAYS           16u
#define RCACHE_DBS            256u /* databases past this are never cached */
#define RCACHE_MIN_BYTES      (1u << 20)
#define RCACHE_QUERY_MAX      256u /* the longest query a frontend looks up */

/*
 * A slot: the header, then the key, the query (D71: which read of the key
 * the reply answers; none for GET) and the reply. The small table's slots
 * are RCACHE_SLOT_BYTES, the big table's RCACHE_BIG_SLOT_BYTES; a fill goes
 * to the small one when it fits there.
 */
typedef struct rcache_slot {
    _Atomic uint32_t seq; /* odd while the store writes the slot */
    uint32_t gen;         /* its database's generation when filled */
    uint64_t hash;        /* of (database, key); 0 = empty */
    uint16_t db;
    uint16_t klen;
    uint16_t rlen; /* reply bytes after the key and query (0: the key is absent) */
    uint16_t qlen; /* query bytes after the key (0: GET's reply) */
    /* The last hit (wall clock ms, 0: none since the fill), written by
     * frontends without the seqlock: a hint for OBJECT IDLETIME, which
     * the store's own lookups no longer see for these reads. */
    _Atomic int64_t hit_ms;
    unsigned char data[]; /* the key, the query, then the reply */
} rcache_slot_t;

#define RCACHE_SLOT_HDR 32u
_Static_assert(sizeof(rcache_slot_t) == RCACHE_SLOT_HDR, "a slot's header is 32 bytes");

/* A bucket's tags: way w's key hash tag (rcache.c's tag_of), 0 = empty. */
typedef struct rcache_tags {
    _Atomic uint32_t tag[RCACHE_WAYS];
} rcache_tags_t;
_Static_assert(sizeof(rcache_tags_t) == 64, "a bucket's tags are one cache line");

/* One table of buckets, each of RCACHE_WAYS slots of slot_bytes. */
typedef struct rcache_table {
    uint64_t nbuckets; /* any count: a hash picks one by multiplication */
    uint64_t slot_bytes;
    uint64_t offset;     /* of the first slot, from the mapping's start */
    uint64_t tag_offset; /* of the first bucket's tags */
} rcache_table_t;

enum { RCACHE_SMALL = 0, RCACHE_BIG = 1, RCACHE_TABLES = 2 };

typedef struct rcache {
    uint64_t size; /* bytes of the whole mapping */
    uint64_t seed;
    uint64_t turn; /* the store's: which way of a full bucket goes next */
    rcache_table_t tab[RCACHE_TABLES];
    _Alignas(64) _Atomic uint32_t gen[RCACHE_DBS];
    /* The store's counts (INFO atticdb_read_cache_*). */
    _Atomic uint64_t fills, invalidations;
} rcache_t;

/* The mapping every process of this server shares (NULL: none). */
extern rcache_t *rcache_shared;

/* Map a cache of at most `bytes` of slots, three quarters in the small
 * table and a quarter in the big one (master, before forking), plus its
 * header. Returns NULL when bytes is below RCACHE_MIN_BYTES (no cache) or
 * the mapping failed (errno set). */
rcache_t *rcache_create(uint64_t bytes);
void rcache_destroy(rcache_t *rc);

/* Slot i (bucket * RCACHE_WAYS + way) of table t. */
static inline rcache_slot_t *rcache_slot(const rcache_t *rc, unsigned t, uint64_t i)
{
    return (rcache_slot_t *)((char *)rc + rc->tab[t].offset + i * rc->tab[t].slot_bytes);
}

/* Bucket b's tags in table t. */
static inline rcache_tags_t *rcache_tags(const rcache_t *rc, unsigned t, uint64_t b)
{
    return (rcache_tags_t *)((char *)rc + rc->tab[t].tag_offset) + b;
}

/* The largest key plus reply a small slot holds (GET's replies). */
static inline size_t rcache_room(void)
{
    return RCACHE_SLOT_BYTES - RCACHE_SLOT_HDR;
}

/* The largest key plus query plus reply any slot holds. */
static inline size_t rcache_big_room(void)
{
    return RCACHE_BIG_SLOT_BYTES - RCACHE_SLOT_HDR;
}

/*
 * The query of a read other than GET (D71): the protocol (2 or 3: some
 * replies differ), the command's id, then each word after the key as a
 * little-endian u32 length and its bytes, which is how the store's request
 * payload carries them after the key (rec_encode_payload), so the store
 * copies that part (rcache_query_tail). Returns the query's length, 0 when
 * it does not fit in cap.
 */
size_t rcache_query(unsigned char *q, size_t cap, int proto, unsigned op, int nwords,
                    const unsigned char *const *words, const uint32_t *lens);
size_t rcache_query_tail(unsigned char *q, size_t cap, int proto, unsigned op,
                         const unsigned char *tail, size_t tail_len);

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

/*
 * The cached reply of another read of key in db (D71): query is the read's
 * words after the key as rcache_query makes them. Returns the reply's
 * length (copied into out, at least rcache_big_room() bytes), or -1 when
 * the cache does not know it. Same conditions as rcache_get.
 */
int rcache_get_query(rcache_t *rc, unsigned db, const void *key, size_t klen, const void *query,
                     size_t qlen, unsigned char *out, int64_t now_ms);

/* ---- the store ---- */

/* A store starts: every slot left by a predecessor is stale. (It also
 * starts the store's own record of which buckets it filled, which spares
 * the mapping a change to a key in a bucket never filled.) */
void rcache_store_begin(rcache_t *rc);
/* GET key in db answered reply (rlen 0: the key is absent), or a write
 * left key with the value that reply carries. */
void rcache_fill(rcache_t *rc, unsigned db, const void *key, size_t klen, const void *reply,
                 size_t rlen);
/* A read of key in db other than GET (query: rcache_query's) answered
 * reply, from the key's state as it is now (rlen > 0). */
void rcache_fill_query(rcache_t *rc, unsigned db, const void *key, size_t klen, const void *query,
                       size_t qlen, const void *reply, size_t rlen);
/* A record changed key in db: its slots are dropped (every read of it).
 * Returns 1 when it had one, 0 when the key was not in the cache. */
int rcache_invalidate(rcache_t *rc, unsigned db, const void *key, size_t klen);
/* Every key of db changed (FLUSHDB, FLUSHALL, SWAPDB). */
void rcache_db_changed(rcache_t *rc, unsigned db);
/* When a frontend last answered a read of key in db from the cache (wall
 * clock ms), 0 when none did since the store filled its slots. */
int64_t rcache_hit_ms(const rcache_t *rc, unsigned db, const void *key, size_t klen);

#endif
