/*
 * evict.h - what eviction under maxmemory needs from the state machine
 * (core/evict.c): each key's access data in its entry's 24 spare bits
 * (idx_access, index.h), kept as Redis keeps its `lru` field, and the
 * choice of victims by sampling into a pool, as Redis approximates LRU,
 * LFU and TTL order. Store process only; single-threaded.
 *
 * Access data is not state: no reply to a write and no digest depends on
 * it, replay rebuilds it only roughly (writes touch keys at their
 * records' times), and the victim it helps choose is written into the log
 * as a CMD_EVICT record (store/evict.c), which alone decides (contract 4).
 */
#ifndef ATTIC_STORE_EVICT_H
#define ATTIC_STORE_EVICT_H

#include <stdint.h>

#include "config.h"
#include "index.h"

static inline int st_policy_lfu(int policy)
{
    return policy == CONFIG_POLICY_VOLATILE_LFU || policy == CONFIG_POLICY_ALLKEYS_LFU;
}

#define ST_LFU_INIT    5u  /* a new key's counter (Redis' LFU_INIT_VAL) */
#define ST_EVPOOL_SIZE 16u /* candidates kept between rounds (Redis' EVPOOL_SIZE) */

typedef struct store_ctx store_ctx_t;

/* One candidate of the pool: a copy of its key (the entry may go away). */
typedef struct st_evcand {
    uint64_t score; /* larger = evict first */
    int db;         /* -1 = empty slot */
    uint32_t klen;
    unsigned char *key;
} st_evcand_t;

/* How the store tracks access, and its choice state (in store_ctx). */
typedef struct st_access {
    int policy;                       /* maxmemory-policy (CONFIG_POLICY_*) */
    int samples;                      /* maxmemory-samples */
    int lfu_log_factor;               /* lfu-log-factor */
    int lfu_decay_time;               /* lfu-decay-time, minutes per counter step down */
    uint64_t rng;                     /* splitmix64 state: LFU increments, random picks */
    uint64_t *cursor;                 /* per database: where sampling goes on */
    st_evcand_t pool[ST_EVPOOL_SIZE]; /* ascending score */
} st_access_t;

void st_access_init(st_access_t *a, uint64_t seed);
void st_access_free(st_access_t *a);

/* A key was created (fresh access data) or used (touched) at now_ms. */
void st_access_new(st_access_t *a, idx_entry_t *e, int64_t now_ms);
void st_access_touch(st_access_t *a, idx_entry_t *e, int64_t now_ms);
/* OBJECT IDLETIME's milliseconds (LRU data) and OBJECT FREQ's counter
 * (LFU data, decayed to now), both read-only. */
uint64_t st_access_idle_ms(const idx_entry_t *e, int64_t now_ms);
unsigned st_access_freq(const st_access_t *a, const idx_entry_t *e, int64_t now_ms);

/* A victim the policy prefers, as its database and a key copy the caller
 * frees. Returns 1 when one was found, 0 when the policy has none to give
 * now (no key, or no key with a TTL for volatile-*; *none then says whether
 * there is no candidate at all, not just none this round). */
typedef struct st_victim {
    int db;
    uint32_t klen;
    unsigned char *key;
    uint64_t bytes; /* RAM its entry holds (requested bytes) */
} st_victim_t;
int st_evict_pick(store_ctx_t *ctx, int64_t now_ms, st_victim_t *v, int *none);

#endif
