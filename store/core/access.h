/*
 * access.h - each key's access data (core/access.c): the 24 spare bits of
 * its entry (idx_access, index.h), kept as Redis keeps its `lru` field,
 * and the settings that say how to read them. What eviction's choice
 * (core/evict.c) and OBJECT FREQ / IDLETIME read; entry.c touches a key at
 * each lookup. Store process only; single-threaded.
 *
 * Access data is not state: no reply to a write and no digest depends on
 * it, replay rebuilds it only roughly (writes touch keys at their
 * records' times), and the victim it helps choose is written into the log
 * as a CMD_EVICT record (store/evict.c), which alone decides (contract 4).
 */
#ifndef ATTIC_STORE_ACCESS_H
#define ATTIC_STORE_ACCESS_H

#include <stdint.h>

#include "config.h"
#include "index.h"

static inline int st_policy_lfu(int policy)
{
    return policy == CONFIG_POLICY_VOLATILE_LFU || policy == CONFIG_POLICY_ALLKEYS_LFU;
}

#define ST_LFU_INIT    5u  /* a new key's counter (Redis' LFU_INIT_VAL) */
#define ST_EVPOOL_SIZE 16u /* candidates kept between rounds (Redis' EVPOOL_SIZE) */

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
/* RESTORE's FREQ and IDLETIME (negative: not given), as Redis'
 * objectSetLRUOrLFU: under an LFU policy freq (0-255) becomes the counter,
 * decremented last at now_ms; under any other policy the access time
 * becomes idle_s seconds before now_ms (wrapping as the LRU clock does);
 * the other option is ignored. Returns 1 when e's data was set, else 0. */
int st_access_restore(const st_access_t *a, idx_entry_t *e, int64_t freq, int64_t idle_s,
                      int64_t now_ms);

#endif
