/*
 * evict.h - the choice of eviction victims under maxmemory (core/evict.c),
 * approximated as Redis approximates LRU, LFU and TTL order: sampling into
 * a pool, from the access data of core/access.h. Store process only;
 * single-threaded. The victims are written into the log by store/evict.c.
 */
#ifndef ATTIC_STORE_EVICT_H
#define ATTIC_STORE_EVICT_H

#include <stdint.h>

#include "entry.h"

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
