/*
 * evict.h - eviction under maxmemory, the store process's part (D32):
 * when used memory (store_index_bytes) is over maxmemory and the policy
 * evicts, choose victims (store/core/evict.c) and write one CMD_EVICT
 * record per key into the ring through the store's own claimer, as
 * compaction writes CMD_RELOCATE (store/compact.c). The keys go when the
 * records are durable and applied, live and on replay alike.
 */
#ifndef ATTIC_STORE_EVICT_RUN_H
#define ATTIC_STORE_EVICT_RUN_H

#include <stdint.h>

#include "compact.h"
#include "store-internal.h"

struct shm;

typedef struct store_evict {
    uint64_t mem_version; /* shm's when last read */
    uint64_t maxmemory;
    uint64_t inflight_end; /* the last CMD_EVICT written ends here */
    uint64_t last_applied; /* ctx applied LSN at the last round */
    int64_t last_round_ms;
    uint64_t written; /* records written by this process */
    int tenacity;     /* maxmemory-eviction-tenacity, 0..100 */
    uint64_t yields;  /* rounds cut short by the tenacity's time limit */
} store_evict_t;

/* How long one round may choose victims, in microseconds, for a
 * maxmemory-eviction-tenacity of 0..100 (Redis 7's progression, D43):
 * 50 us per step up to 10 (500 us), then 15% more per step (about two
 * minutes at 99); 100 is no limit (UINT64_MAX). */
uint64_t store_evict_time_limit_us(int tenacity);

/* Account the time used memory spends over maxmemory (INFO
 * total_eviction_exceeded_time, current_eviction_exceeded_time, D43) in
 * shm: a spell starts at now_ms (CLOCK_MONOTONIC) when over is first seen
 * and its length goes into the total when over is seen no more. */
void store_evict_exceeded(struct shm *shm, int over, int64_t now_ms);

/* Read the settings from shm when they changed (into ctx's access data
 * too, and DUMP's settings into ctx: D40, D57). Cheap: call every turn of
 * the loop. */
void store_evict_settings(store_evict_t *ev, store_ctx_t *ctx, struct shm *shm);

/*
 * One round: when over maxmemory under an evicting policy and no CMD_EVICT
 * of the last round is still unapplied, write records for victims whose
 * bytes cover the excess (at most STORE_EVICT_BATCH keys, and checking
 * every 16 keys the tenacity's time limit, past which the round yields
 * and the next one goes on). Publishes
 * shm->evict_stuck (over the bound with no victim to give). Never waits:
 * a full ring ends the round. Returns the records written.
 */
int store_evict_round(store_evict_t *ev, store_ctx_t *ctx, store_compact_t *claim, struct shm *shm);

#endif
